//! The Query Generator through its public API: the SPARQL it writes for each QIR shape, and what
//! that SPARQL returns on the real store (tests/fixtures/movies.ttl).

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_agents::qir::{Order, RawQir};
use chatty_kg_agents::{CandidateQuery, PredicateChoice, Qir, QueryGenerator, QuestionKind, TriplesValidator};
use chatty_kg_graph::{EmbeddedStore, GraphSettings, KnowledgeGraph, QueryResults, RdfFile, ReadQuery};
use std::collections::HashMap;
use std::path::Path;

const E: &str = "http://example.org/entity/";
const R: &str = "http://example.org/relation/";

fn qir(triples: &[[&str; 3]], kind: QuestionKind, order: Option<Order>, unknowns: &[&str]) -> Qir {
    TriplesValidator::validate(&RawQir {
        entities: vec![],
        unknowns: unknowns.iter().map(|u| (*u).to_owned()).collect(),
        relations: vec![],
        triples: triples
            .iter()
            .map(|t| t.iter().map(|s| (*s).to_owned()).collect())
            .collect(),
        kind: Some(kind),
        order,
    })
    .unwrap()
}

fn choice(local: &str, forward: bool) -> PredicateChoice {
    PredicateChoice {
        iri: format!("{R}{local}"),
        label: local.into(),
        score: 0.0,
        forward,
    }
}

fn vertices() -> HashMap<String, String> {
    [
        ("Alien", "Alien"),
        ("Ridley Scott", "Ridley_Scott"),
        ("Tom Hanks", "Tom_Hanks"),
        ("Stephen King", "Stephen_King"),
        ("Robert Zemeckis", "Robert_Zemeckis"),
    ]
    .iter()
    .map(|(m, local)| ((*m).to_owned(), format!("{E}{local}")))
    .collect()
}

/// "Which is the latest film with Tom Hanks?"
fn latest_film_of_tom_hanks() -> Qir {
    qir(
        &[
            ["?answer", "starred actors", "Tom Hanks"],
            ["?answer", "release year", "?year"],
        ],
        QuestionKind::List,
        Some(Order::Desc),
        &["?answer", "?year"],
    )
}

/// "How many films did Tom Hanks star in?"
fn films_of_tom_hanks_count() -> Qir {
    qir(
        &[["?answer", "starred actors", "Tom Hanks"]],
        QuestionKind::Count,
        None,
        &[],
    )
}

fn text(q: &CandidateQuery) -> String {
    q.query.to_string()
}

/// The generated algebra is what the parser makes of `expected`, and its printed form parses.
fn assert_query(q: &CandidateQuery, expected: &str) {
    let parse = |t: &str| ReadQuery::parse(t).unwrap_or_else(|e| panic!("{e}: {t}"));
    assert_eq!(q.query, parse(expected), "{} vs {expected}", text(q));
    parse(&text(q));
}

#[test]
fn one_hop_respects_direction_and_projects_the_answer() {
    let q = qir(&[["Alien", "directed by", "?answer"]], QuestionKind::List, None, &[]);
    let out = QueryGenerator::generate(
        &q,
        &vertices(),
        &[vec![choice("directed_by", true), choice("directed", false)]],
        40,
    )
    .unwrap();
    assert_eq!(out.len(), 2);
    assert_query(
        &out[0],
        &format!("SELECT DISTINCT ?answer WHERE {{ <{E}Alien> <{R}directed_by> ?answer . }}"),
    );
    assert_query(
        &out[1],
        &format!("SELECT DISTINCT ?answer WHERE {{ ?answer <{R}directed> <{E}Alien> . }}"),
    );
    assert_eq!(out[1].predicates, vec![format!("{R}directed")]);
}

#[test]
fn multi_hop_joins_on_the_shared_variable_best_first_and_truncates() {
    let q = qir(
        &[
            ["?movie", "written by", "Stephen King"],
            ["?movie", "directed by", "?answer"],
        ],
        QuestionKind::List,
        None,
        &["?answer", "?movie"],
    );
    let first = vec![
        choice("written_by", true),
        choice("author", true),
        choice("wrote", false),
    ];
    let second = vec![choice("directed_by", true), choice("director", true)];
    let out = QueryGenerator::generate(&q, &vertices(), &[first.clone(), second.clone()], 40).unwrap();
    assert_eq!(out.len(), 6);
    assert_query(
        &out[0],
        &format!(
            "SELECT DISTINCT ?answer ?movie WHERE {{ ?movie <{R}written_by> <{E}Stephen_King> . ?movie <{R}directed_by> ?answer . }}"
        ),
    );
    let ranks: Vec<usize> = out
        .iter()
        .map(|c| {
            first.iter().position(|p| p.iri == c.predicates[0]).unwrap()
                + second.iter().position(|p| p.iri == c.predicates[1]).unwrap()
        })
        .collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "best first: {ranks:?}");
    assert_eq!(
        QueryGenerator::generate(&q, &vertices(), &[first, second], 4)
            .unwrap()
            .len(),
        4,
        "query_num"
    );
}

#[test]
fn ask_count_and_superlative_forms() {
    let ask = qir(
        &[["Alien", "directed by", "Ridley Scott"]],
        QuestionKind::Boolean,
        None,
        &[],
    );
    let out = QueryGenerator::generate(&ask, &vertices(), &[vec![choice("directed_by", true)]], 40).unwrap();
    assert!(out[0].query.is_ask());
    assert_query(
        &out[0],
        &format!("ASK {{ <{E}Alien> <{R}directed_by> <{E}Ridley_Scott> . }}"),
    );

    let count = films_of_tom_hanks_count();
    let out = QueryGenerator::generate(&count, &vertices(), &[vec![choice("starred_actors", true)]], 40).unwrap();
    // The parser names an aggregate's inner variable at random, so compare the printed form.
    assert_eq!(
        text(&out[0]),
        format!(
            "SELECT ?count WHERE {{ {{SELECT (COUNT(DISTINCT ?answer) AS ?count) WHERE {{ ?answer <{R}starred_actors> <{E}Tom_Hanks> . }}}} }}"
        )
    );

    let latest = latest_film_of_tom_hanks();
    let out = QueryGenerator::generate(
        &latest,
        &vertices(),
        &[vec![choice("starred_actors", true)], vec![choice("release_year", true)]],
        40,
    )
    .unwrap();
    let sparql = text(&out[0]);
    assert!(
        sparql.contains("ORDER BY DESC(?year)") && sparql.ends_with("LIMIT 1"),
        "{sparql}"
    );
}

#[test]
fn unlinked_entities_or_missing_predicates_give_no_queries() {
    let q = qir(&[["Alien", "directed by", "?answer"]], QuestionKind::List, None, &[]);
    assert!(
        QueryGenerator::generate(&q, &HashMap::new(), &[vec![choice("d", true)]], 40)
            .unwrap()
            .is_empty()
    );
    assert!(
        QueryGenerator::generate(&q, &vertices(), &[vec![]], 40)
            .unwrap()
            .is_empty()
    );
}

/// Each form runs on the real store and gives the graph's answer.
#[tokio::test]
async fn generated_queries_answer_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let movies = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/movies.ttl");
    EmbeddedStore::load(
        dir.path(),
        &[RdfFile::new(movies).unwrap()],
        &GraphSettings::default(),
        false,
    )
    .unwrap();
    let store = EmbeddedStore::open(dir.path(), GraphSettings::default()).unwrap();
    let column = |r: QueryResults, v: &str| match r {
        QueryResults::Solutions(s) => s.column(v).map(ToString::to_string).collect::<Vec<_>>(),
        QueryResults::Boolean(b) => panic!("boolean {b}"),
    };

    // Who directed the films Tom Hanks starred in? (the edge runs film → actor: not forward)
    let two_hop = qir(
        &[
            ["Tom Hanks", "starred in", "?film"],
            ["?film", "directed by", "?answer"],
        ],
        QuestionKind::List,
        None,
        &["?answer", "?film"],
    );
    let out = QueryGenerator::generate(
        &two_hop,
        &vertices(),
        &[vec![choice("starredActors", false)], vec![choice("directedBy", true)]],
        40,
    )
    .unwrap();
    // One row per film (the intermediate variable is projected as provenance), one director.
    let mut directors = column(store.query(&out[0].query).await.unwrap(), "answer");
    assert_eq!(directors.len(), 2, "Forrest Gump and Cast Away: {directors:?}");
    directors.dedup();
    assert_eq!(directors, vec![format!("<{E}Robert_Zemeckis>")]);

    let count = films_of_tom_hanks_count();
    let out = QueryGenerator::generate(&count, &vertices(), &[vec![choice("starredActors", true)]], 40).unwrap();
    assert_eq!(
        column(store.query(&out[0].query).await.unwrap(), "count"),
        vec!["\"3\"^^<http://www.w3.org/2001/XMLSchema#integer>"]
    );

    let ask = qir(
        &[["Tom Hanks", "directed by", "Robert Zemeckis"]],
        QuestionKind::Boolean,
        None,
        &[],
    );
    let out = QueryGenerator::generate(&ask, &vertices(), &[vec![choice("directedBy", true)]], 40).unwrap();
    assert_eq!(store.query(&out[0].query).await.unwrap(), QueryResults::Boolean(false));

    let latest = latest_film_of_tom_hanks();
    let out = QueryGenerator::generate(
        &latest,
        &vertices(),
        &[vec![choice("starredActors", true)], vec![choice("release_year", true)]],
        40,
    )
    .unwrap();
    assert_eq!(
        column(store.query(&out[0].query).await.unwrap(), "answer"),
        vec![format!("<{E}Cast_Away>")]
    );
}
