//! One test suite, run against every backend: the embedded store and a real Virtuoso 7.2.5 with
//! each remote search strategy. All load `tests/fixtures/movies.ttl`.
//!
//! Virtuoso is started by `scripts/test.sh` (which `.ci/run` calls) and found through
//! `CHATTY_KG_TEST_VIRTUOSO`. Without it the Virtuoso cases skip with a loud message, unless
//! `CHATTY_KG_REQUIRE_VIRTUOSO=1` (set in CI), where they fail instead.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_graph::{
    Direction, EmbeddedStore, EndpointSettings, GraphError, GraphSettings, KnowledgeGraph, QueryResults, RdfFile,
    ReadQuery, SearchStrategy, SparqlEndpoint, Term,
};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

const E: &str = "http://example.org/entity/";
const R: &str = "http://example.org/relation/";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/movies.ttl")
}

/// The fixture, loaded once per test binary into a store under cargo's scratch directory.
fn embedded_store_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("suite-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        EmbeddedStore::load(
            &dir,
            &[RdfFile::new(fixture()).unwrap()],
            &GraphSettings::default(),
            false,
        )
        .unwrap();
        dir
    })
}

fn embedded(settings: GraphSettings) -> Option<Arc<dyn KnowledgeGraph>> {
    Some(Arc::new(EmbeddedStore::open(embedded_store_dir(), settings).unwrap()))
}

fn virtuoso(strategy: SearchStrategy, settings: GraphSettings) -> Option<Arc<dyn KnowledgeGraph>> {
    match std::env::var("CHATTY_KG_TEST_VIRTUOSO") {
        Ok(url) if !url.is_empty() => {
            let mut endpoint = EndpointSettings::new(url);
            endpoint.search = strategy;
            Some(Arc::new(SparqlEndpoint::new(endpoint, settings).unwrap()))
        }
        _ if std::env::var("CHATTY_KG_REQUIRE_VIRTUOSO").as_deref() == Ok("1") => {
            panic!("CHATTY_KG_REQUIRE_VIRTUOSO=1 but CHATTY_KG_TEST_VIRTUOSO is not set: Virtuoso did not start")
        }
        _ => {
            // The test harness captures eprintln! of passing tests: write to the real stderr, once.
            static WARNED: OnceLock<()> = OnceLock::new();
            WARNED.get_or_init(|| {
                use std::io::Write;
                if let Ok(mut tty) = std::fs::OpenOptions::new().append(true).open("/dev/stderr") {
                    let _ = writeln!(
                        tty,
                        "\n!!!!! SKIPPED: the Virtuoso cases of the backend suite (CHATTY_KG_TEST_VIRTUOSO is unset). \
                         Run scripts/test.sh to test the remote backend. !!!!!\n"
                    );
                }
            });
            None
        }
    }
}

fn iris(candidates: &[chatty_kg_graph::EntityCandidate]) -> Vec<String> {
    candidates
        .iter()
        .map(|c| c.iri.trim_start_matches(E).to_owned())
        .collect()
}

// ----- the cases -----

async fn exact_label_first_then_degree(kg: Arc<dyn KnowledgeGraph>) {
    let found = kg.search_entities("tom hanks", 10).await.unwrap();
    // Both match exactly; the actor (4 triples) outranks the tag (2 triples).
    assert_eq!(iris(&found)[..2], ["Tom_Hanks", "tom_hanks"], "{found:?}");
    let shouted = kg.search_entities("  TOM   HANKS!! ", 1).await.unwrap();
    assert_eq!(iris(&shouted), ["Tom_Hanks"]);
}

async fn one_word_finds_full_names(kg: Arc<dyn KnowledgeGraph>) {
    let found = iris(&kg.search_entities("hanks", 10).await.unwrap());
    assert_eq!(found[..2], ["Tom_Hanks", "tom_hanks"], "{found:?}");
    let found = iris(&kg.search_entities("zemeckis", 10).await.unwrap());
    assert_eq!(found, ["Robert_Zemeckis"]);
}

async fn limit_is_respected(kg: Arc<dyn KnowledgeGraph>) {
    assert_eq!(kg.search_entities("tom", 1).await.unwrap().len(), 1);
    let all = kg.search_entities("tom", 10).await.unwrap();
    assert!(all.len() >= 3, "{all:?}");
}

async fn every_label_predicate_is_searched(kg: Arc<dyn KnowledgeGraph>) {
    assert_eq!(
        iris(&kg.search_entities("goldfinger", 5).await.unwrap()),
        ["Goldfinger"]
    );
    assert_eq!(
        iris(&kg.search_entities("Thomas Cruise Mapother", 5).await.unwrap())[0],
        "Tom_Cruise"
    );
    assert_eq!(
        iris(&kg.search_entities("Gert Fröbe", 5).await.unwrap())[0],
        "Gert_Frobe"
    );
}

async fn unknown_entity_is_empty(kg: Arc<dyn KnowledgeGraph>) {
    assert!(kg.search_entities("meryl streep", 10).await.unwrap().is_empty());
    assert!(kg.search_entities("", 10).await.unwrap().is_empty());
    assert!(kg.search_entities("?!", 10).await.unwrap().is_empty());
}

/// User text full of SPARQL syntax is searched for, never executed.
async fn hostile_search_text_is_data(kg: Arc<dyn KnowledgeGraph>) {
    for text in [
        "\"} ; DROP ALL ; SELECT * WHERE { ?s ?p ?o",
        "tom\" . } UNION { ?s ?p ?o",
        "x\\\" ) || true || (\"",
        "quoted\" } film\n",
    ] {
        let result = kg.search_entities(text, 10).await;
        let found = result.unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert!(found.len() <= 10);
    }
    let found = kg.search_entities("quoted film", 5).await.unwrap();
    assert_eq!(iris(&found), ["Quoted"]);
    assert_eq!(found[0].label, "The \"Quoted\" } Film\\ \nSELECT * WHERE { ?s ?p ?o }");
}

async fn select_and_ask(kg: Arc<dyn KnowledgeGraph>) {
    let results = kg
        .query_text(&format!(
            "SELECT ?m WHERE {{ ?m <{R}starredActors> <{E}Tom_Hanks> }} ORDER BY ?m"
        ))
        .await
        .unwrap();
    let QueryResults::Solutions(solutions) = results else {
        panic!("not solutions")
    };
    assert_eq!(solutions.variables, ["m"]);
    let movies: Vec<String> = solutions.column("m").map(|t| t.to_string()).collect();
    assert_eq!(
        movies,
        [
            format!("<{E}Big>"),
            format!("<{E}Cast_Away>"),
            format!("<{E}Forrest_Gump>")
        ]
    );
    let ask = |q: String| {
        let kg = Arc::clone(&kg);
        async move { kg.query_text(&q).await.unwrap() }
    };
    assert_eq!(
        ask(format!("ASK {{ <{E}Big> <{R}starredActors> <{E}Tom_Hanks> }}")).await,
        QueryResults::Boolean(true)
    );
    assert_eq!(
        ask(format!("ASK {{ <{E}Big> <{R}starredActors> <{E}Tom_Cruise> }}")).await,
        QueryResults::Boolean(false)
    );
}

async fn literals_round_trip(kg: Arc<dyn KnowledgeGraph>) {
    let results = kg
        .query_text(&format!(
            "SELECT ?l WHERE {{ <{E}Quoted> <http://www.w3.org/2000/01/rdf-schema#label> ?l }}"
        ))
        .await
        .unwrap();
    let QueryResults::Solutions(solutions) = results else {
        panic!("not solutions")
    };
    let labels: Vec<_> = solutions.column("l").collect();
    assert_eq!(labels.len(), 1);
    let Term::Literal(label) = labels[0] else {
        panic!("{:?}", labels[0])
    };
    assert_eq!(label.value(), "The \"Quoted\" } Film\\ \nSELECT * WHERE { ?s ?p ?o }");
}

async fn writes_are_refused(kg: Arc<dyn KnowledgeGraph>) {
    for text in [
        "INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }".to_owned(),
        format!("DELETE WHERE {{ <{E}Big> ?p ?o }}"),
        "CLEAR ALL".to_owned(),
        "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }".to_owned(),
    ] {
        assert!(
            matches!(kg.query_text(&text).await, Err(GraphError::NotReadOnly { .. })),
            "{text} was not refused"
        );
    }
    // And nothing changed.
    let results = kg.query_text(&format!("ASK {{ <{E}Big> ?p ?o }}")).await.unwrap();
    assert_eq!(results, QueryResults::Boolean(true));
}

async fn predicate_neighbourhood(kg: Arc<dyn KnowledgeGraph>) {
    let around = kg.predicates_around(&format!("{E}Forrest_Gump"), 50).await.unwrap();
    let mut outgoing: Vec<_> = around
        .iter()
        .filter(|p| p.direction == Direction::Outgoing)
        .map(|p| (p.iri.trim_start_matches(R), p.label.as_str()))
        .collect();
    outgoing.sort();
    assert_eq!(
        outgoing,
        [
            ("directedBy", "directed by"),
            ("has_tags", "has tags"),
            ("release_year", "release year"),
            ("starredActors", "starred actors"),
        ],
        "rdf:type and rdfs:label are blacklisted"
    );
    let around = kg.predicates_around(&format!("{E}Tom_Hanks"), 50).await.unwrap();
    assert!(
        around
            .iter()
            .any(|p| p.iri == format!("{R}starredActors") && p.direction == Direction::Incoming)
    );
    assert!(around.iter().all(|p| p.direction == Direction::Incoming), "{around:?}");
    let limited = kg.predicates_around(&format!("{E}Forrest_Gump"), 2).await.unwrap();
    assert_eq!(limited.len(), 2);
}

async fn predicates_between_vertices(kg: Arc<dyn KnowledgeGraph>) {
    let links = kg
        .predicates_between(&format!("{E}Forrest_Gump"), &format!("{E}Tom_Hanks"))
        .await
        .unwrap();
    assert_eq!(links.len(), 1);
    assert_eq!(
        (links[0].iri.as_str(), links[0].direction),
        (format!("{R}starredActors").as_str(), Direction::Outgoing)
    );
    let reversed = kg
        .predicates_between(&format!("{E}Tom_Hanks"), &format!("{E}Forrest_Gump"))
        .await
        .unwrap();
    assert_eq!(reversed[0].direction, Direction::Incoming);
    assert!(
        kg.predicates_between(&format!("{E}Big"), &format!("{E}Tom_Cruise"))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        kg.predicates_between("not an iri", &format!("{E}Big")).await,
        Err(GraphError::InvalidIri { .. })
    ));
}

/// One grouped query per hop and direction over a whole frontier (the relation-path search's
/// step); a frontier with more edges than the limit is sampled, one neighbour per pair.
async fn frontier_neighbourhood(kg: Arc<dyn KnowledgeGraph>) {
    let (hanks, cruise) = (format!("{E}Tom_Hanks"), format!("{E}Tom_Cruise"));
    let pairs = |n: &chatty_kg_graph::Neighbourhood| {
        let mut pairs: Vec<(String, String)> = n
            .edges
            .iter()
            .map(|e| (e.vertex.clone(), e.predicate.clone()))
            .collect();
        pairs.sort();
        pairs
    };
    // Over the limit: every (vertex, predicate) pair once, with one of its neighbours (the first
    // query fetched three edges for a limit of two, the second samples).
    let sampled = kg
        .neighbourhood(&[&hanks, &cruise], Direction::Incoming, 2)
        .await
        .unwrap();
    assert_eq!(
        (sampled.queries, sampled.sampled, sampled.edges.len()),
        (2, true, 2),
        "{sampled:?}"
    );
    // The sample counted Tom Hanks's three films and Tom Cruise's one: that frontier goes
    // straight to the sample at that limit (one query, the same pairs) ...
    let again = kg
        .neighbourhood(&[&cruise, &hanks], Direction::Incoming, 2)
        .await
        .unwrap();
    assert_eq!((again.queries, again.sampled), (1, true), "{again:?}");
    assert_eq!(pairs(&again), pairs(&sampled));
    // ... and is fetched whole at a limit its four edges fit.
    let incoming = kg
        .neighbourhood(&[&hanks, &cruise], Direction::Incoming, 4)
        .await
        .unwrap();
    let mut edges: Vec<(String, String)> = incoming
        .edges
        .iter()
        .map(|e| {
            assert_eq!(
                (e.direction, e.predicate.as_str()),
                (Direction::Incoming, &*format!("{R}starredActors"))
            );
            let Term::NamedNode(film) = &e.neighbour else {
                panic!("{e:?}")
            };
            (
                e.vertex.trim_start_matches(E).to_owned(),
                film.as_str().trim_start_matches(E).to_owned(),
            )
        })
        .collect();
    edges.sort();
    assert_eq!(
        edges,
        [
            ("Tom_Cruise".to_owned(), "Top_Gun".to_owned()),
            ("Tom_Hanks".to_owned(), "Big".to_owned()),
            ("Tom_Hanks".to_owned(), "Cast_Away".to_owned()),
            ("Tom_Hanks".to_owned(), "Forrest_Gump".to_owned()),
        ]
    );
    assert_eq!((incoming.queries, incoming.sampled), (1, false));
    // A vertex named twice in a frontier is counted once: Tom Cruise's one film does not make
    // him too big for a limit of one.
    let twice = kg
        .neighbourhood(&[&cruise, &cruise, &hanks], Direction::Incoming, 1)
        .await
        .unwrap();
    assert!(twice.sampled, "{twice:?}");
    let alone = kg.neighbourhood(&[&cruise], Direction::Incoming, 1).await.unwrap();
    assert_eq!(
        (alone.queries, alone.sampled, alone.edges.len()),
        (1, false, 1),
        "{alone:?}"
    );
    // Outgoing, literals included, blacklisted predicates out.
    let gump = format!("{E}Forrest_Gump");
    let outgoing = kg.neighbourhood(&[&gump], Direction::Outgoing, 100).await.unwrap();
    let mut predicates: Vec<&str> = outgoing
        .edges
        .iter()
        .map(|e| e.predicate.trim_start_matches(R))
        .collect();
    predicates.sort();
    assert_eq!(predicates, ["directedBy", "has_tags", "release_year", "starredActors"]);
    assert!(
        outgoing
            .edges
            .iter()
            .any(|e| matches!(&e.neighbour, Term::Literal(l) if l.value() == "1994"))
    );
    assert!(
        kg.neighbourhood(&[], Direction::Outgoing, 10)
            .await
            .unwrap()
            .edges
            .is_empty()
    );
    assert!(matches!(
        kg.neighbourhood(&["not an iri"], Direction::Outgoing, 10).await,
        Err(GraphError::InvalidIri { .. })
    ));
}

/// A vertex's labelled neighbours with every label, in one query per direction (how a yes/no
/// question's second thing is looked for beside the first): literals and unlabelled vertices are
/// not rows, the limit holds.
async fn labelled_neighbours(kg: Arc<dyn KnowledgeGraph>) {
    let rows = |results: QueryResults| -> Vec<(String, String)> {
        let QueryResults::Solutions(s) = results else {
            panic!("not solutions")
        };
        let mut rows: Vec<(String, String)> = s
            .rows
            .iter()
            .map(|r| match (r[0].as_ref(), r[1].as_ref()) {
                (Some(Term::NamedNode(n)), Some(Term::Literal(l))) => {
                    (n.as_str().trim_start_matches(E).to_owned(), l.value().to_owned())
                }
                other => panic!("{other:?}"),
            })
            .collect();
        rows.sort();
        rows
    };
    let labels = &kg.settings().label_predicates;
    let away = format!("{E}Cast_Away");
    let query = chatty_kg_graph::labelled_neighbours_query(&away, true, labels, 10).unwrap();
    assert_eq!(
        rows(kg.query(&query).await.unwrap()),
        [
            ("Robert_Zemeckis".to_owned(), "Robert Zemeckis".to_owned()),
            ("Tom_Hanks".to_owned(), "Tom Hanks".to_owned()),
        ]
    );
    let hanks = format!("{E}Tom_Hanks");
    let query = chatty_kg_graph::labelled_neighbours_query(&hanks, false, labels, 10).unwrap();
    let incoming = rows(kg.query(&query).await.unwrap());
    assert!(
        incoming.contains(&("Cast_Away".to_owned(), "Seul au monde".to_owned())),
        "{incoming:?}"
    );
    assert_eq!(incoming.len(), 4, "{incoming:?}");
    let query = chatty_kg_graph::labelled_neighbours_query(&hanks, false, labels, 2).unwrap();
    assert_eq!(rows(kg.query(&query).await.unwrap()).len(), 2);
}

/// A fact about the graph is asked once and remembered: its answer comes back the same, and the
/// backend knows it; a plain query is not remembered.
async fn facts_are_remembered(kg: Arc<dyn KnowledgeGraph>) {
    let asked = ReadQuery::parse(&format!("ASK {{ ?film <{R}starredActors> <{E}Tom_Hanks> }}")).unwrap();
    let plain = ReadQuery::parse(&format!("ASK {{ ?film <{R}starredActors> <{E}Tom_Cruise> }}")).unwrap();
    let facts = kg.facts().expect("both backends remember facts");
    assert!(!facts.knows(&asked));
    assert_eq!(kg.query_fact(&asked).await.unwrap(), QueryResults::Boolean(true));
    assert!(facts.knows(&asked));
    assert_eq!(kg.query_fact(&asked).await.unwrap(), QueryResults::Boolean(true));
    assert_eq!(kg.query(&plain).await.unwrap(), QueryResults::Boolean(true));
    assert!(!facts.knows(&plain));
}

async fn labels_of_answers(kg: Arc<dyn KnowledgeGraph>) {
    let (hanks, gold, nobody) = (format!("{E}Tom_Hanks"), format!("{E}Goldfinger"), format!("{E}Nobody"));
    let cruise = format!("{E}Tom_Cruise");
    let labels = kg.labels(&[&hanks, &gold, &nobody, &cruise]).await.unwrap();
    assert_eq!(labels.get(&hanks).map(String::as_str), Some("Tom Hanks"));
    assert_eq!(
        labels.get(&cruise).map(String::as_str),
        Some("Tom Cruise"),
        "rdfs:label comes before skos:altLabel in the configured label predicates"
    );
    assert_eq!(
        labels.get(&gold).map(String::as_str),
        Some("Goldfinger"),
        "schema:name is a label too"
    );
    // A vertex without a label is named from its IRI (iri_names, on by default).
    assert_eq!(labels.get(&nobody).map(String::as_str), Some("Nobody"));
    assert!(!kg.graph_labels(&[&nobody]).await.unwrap().contains_key(&nobody));
    // Of "Cast Away" and "Seul au monde"@fr, the preferred language (en) has none: untagged wins.
    let away = format!("{E}Cast_Away");
    assert_eq!(kg.labels(&[&away]).await.unwrap()[&away], "Cast Away");
    assert!(kg.labels(&[]).await.unwrap().is_empty());
}

async fn labels_follow_the_settings(make: impl Fn(GraphSettings) -> Option<Arc<dyn KnowledgeGraph>>) {
    let Some(kg) = make(GraphSettings {
        language: "fr".into(),
        iri_names: false,
        ..GraphSettings::default()
    }) else {
        return;
    };
    let (away, nobody) = (format!("{E}Cast_Away"), format!("{E}Nobody"));
    let labels = kg.labels(&[&away, &nobody]).await.unwrap();
    assert_eq!(labels.get(&away).map(String::as_str), Some("Seul au monde"));
    assert!(!labels.contains_key(&nobody), "no names from IRIs when turned off");
}

async fn the_schema_profile_counts_predicates_and_classes(kg: Arc<dyn KnowledgeGraph>) {
    let profile = kg.profile().await.unwrap();
    let predicate = |local: &str| {
        profile
            .predicates
            .iter()
            .find(|p| p.iri == format!("{R}{local}"))
            .unwrap_or_else(|| panic!("{local}: {profile:#?}"))
    };
    let starring = predicate("starredActors");
    assert_eq!((starring.triples, starring.iri_objects), (5, 5));
    assert_eq!(starring.label, "starred actors");
    assert!(starring.datatypes.is_empty());
    let year = predicate("release_year");
    assert_eq!((year.triples, year.iri_objects), (4, 0));
    assert_eq!(year.datatypes["http://www.w3.org/2001/XMLSchema#string"], 4);
    // The most used first.
    assert!(
        profile.predicates.windows(2).all(|w| w[0].triples >= w[1].triples),
        "{profile:#?}"
    );
    // (Virtuoso's default graph also holds its own system classes: only the fixture's are
    // compared.)
    let classes: Vec<(&str, &str, u64)> = profile
        .classes
        .iter()
        .filter_map(|c| Some((c.iri.strip_prefix(E)?, c.label.as_str(), c.instances)))
        .collect();
    assert_eq!(classes, [("Film", "Film", 2), ("Actor", "Actor", 1)]);
    assert!(!profile.truncated);
    // Kept: the second call is the same profile.
    assert!(Arc::ptr_eq(&profile, &kg.profile().await.unwrap()));
}

/// Which of `iris` are instances of `class`, by [`chatty_kg_graph::instance_of`] under `VALUES`.
async fn members(kg: &Arc<dyn KnowledgeGraph>, iris: &[&str], class: &str) -> Vec<String> {
    use spargebra::algebra::GraphPattern;
    use spargebra::term::GroundTerm;
    let s = chatty_kg_graph::var("s");
    let values = GraphPattern::Values {
        variables: vec![s.clone()],
        bindings: iris
            .iter()
            .map(|iri| vec![Some(GroundTerm::NamedNode(chatty_kg_graph::named_node(iri).unwrap()))])
            .collect(),
    };
    let pattern = GraphPattern::Distinct {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(GraphPattern::Join {
                left: Box::new(values),
                right: Box::new(chatty_kg_graph::instance_of(s.clone(), class, chatty_kg_graph::RDFS_TYPES).unwrap()),
            }),
            variables: vec![s],
        }),
    };
    let QueryResults::Solutions(found) = kg
        .query(&chatty_kg_graph::ReadQuery::select(pattern).unwrap())
        .await
        .unwrap()
    else {
        panic!("not solutions")
    };
    let mut found: Vec<String> = found.column("s").filter_map(chatty_kg_graph::term_text).collect();
    found.sort();
    found
}

async fn instances_of_a_class(kg: Arc<dyn KnowledgeGraph>) {
    let (gump, big, hanks) = (format!("{E}Forrest_Gump"), format!("{E}Big"), format!("{E}Tom_Hanks"));
    let films = members(&kg, &[&gump, &big, &hanks], &format!("{E}Film")).await;
    assert_eq!(films, [gump.clone()], "Big has no class, Tom Hanks another");
    let QueryResults::Solutions(all) = kg
        .query(&chatty_kg_graph::instances_query(&format!("{E}Film"), 10, chatty_kg_graph::RDFS_TYPES).unwrap())
        .await
        .unwrap()
    else {
        panic!("not solutions")
    };
    let mut all: Vec<String> = all.column("s").filter_map(chatty_kg_graph::term_text).collect();
    all.sort();
    assert_eq!(all, [format!("{E}Cast_Away"), gump]);
}

async fn vertices_by_a_stored_value(kg: Arc<dyn KnowledgeGraph>) {
    // schema:name is no label predicate: the value still finds its vertex, exactly.
    let found = kg.value_subjects("Goldfinger", 5).await.unwrap();
    assert_eq!(found, [(format!("{E}Goldfinger"), "http://schema.org/name".to_owned())]);
    // A language-tagged value in the configured language too; another language is not it.
    let found = kg.value_subjects("Seul au monde", 5).await.unwrap();
    assert!(found.is_empty(), "French, not the configured English: {found:?}");
    assert!(
        kg.value_subjects("goldfinger", 5).await.unwrap().is_empty(),
        "exact, as stored"
    );
    // Query syntax in the value stays a literal.
    assert!(kg.value_subjects("\" } DROP ALL {", 5).await.unwrap().is_empty());
}

async fn rows_are_capped(make: impl Fn(GraphSettings) -> Option<Arc<dyn KnowledgeGraph>>) {
    let Some(kg) = make(GraphSettings {
        max_rows: 2,
        ..GraphSettings::default()
    }) else {
        return;
    };
    let QueryResults::Solutions(solutions) = kg
        .query_text(&format!("SELECT ?m WHERE {{ ?m <{R}release_year> ?y }}"))
        .await
        .unwrap()
    else {
        panic!("not solutions")
    };
    assert_eq!(solutions.rows.len(), 2);
    assert!(solutions.truncated);
}

macro_rules! backend_suite {
    ($backend:ident, $make:expr, [$($case:ident),* $(,)?]) => {
        mod $backend {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    if let Some(kg) = ($make)(GraphSettings::default()) {
                        super::$case(kg).await;
                    }
                }
            )*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn rows_are_capped() {
                super::rows_are_capped($make).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn labels_follow_the_settings() {
                super::labels_follow_the_settings($make).await;
            }
        }
    };
}

macro_rules! all_cases {
    ($backend:ident, $make:expr) => {
        backend_suite!(
            $backend,
            $make,
            [
                exact_label_first_then_degree,
                one_word_finds_full_names,
                limit_is_respected,
                every_label_predicate_is_searched,
                unknown_entity_is_empty,
                hostile_search_text_is_data,
                select_and_ask,
                literals_round_trip,
                writes_are_refused,
                predicate_neighbourhood,
                predicates_between_vertices,
                frontier_neighbourhood,
                labelled_neighbours,
                labels_of_answers,
                facts_are_remembered,
                the_schema_profile_counts_predicates_and_classes,
                instances_of_a_class,
                vertices_by_a_stored_value,
            ]
        );
    };
}

/// Names are found with or without their accents: by the label index's folding on the embedded
/// store, by character classes in the pattern with `search = "regex"` on an endpoint (the
/// `bif:contains` and `contains` strategies compare as the endpoint stores).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accents_are_folded_embedded_and_by_regex() {
    let backends = [
        embedded(GraphSettings::default()),
        virtuoso(SearchStrategy::Regex, GraphSettings::default()),
    ];
    for kg in backends.into_iter().flatten() {
        for text in ["gert frobe", "Gert Fröbe", "GERT FRÖBE", "gërt fröbe"] {
            let found = kg.search_entities(text, 5).await.unwrap();
            assert_eq!(
                iris(&found).first().map(String::as_str),
                Some("Gert_Frobe"),
                "{text} on {}",
                kg.describe()
            );
        }
    }
}

all_cases!(embedded_store, embedded);
all_cases!(virtuoso_bif_contains, |s| virtuoso(SearchStrategy::BifContains, s));
all_cases!(virtuoso_contains, |s| virtuoso(SearchStrategy::Contains, s));
all_cases!(virtuoso_regex, |s| virtuoso(SearchStrategy::Regex, s));
