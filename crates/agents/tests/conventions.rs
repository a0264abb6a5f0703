//! The same questions on the places of classes.ttl stored the way Wikidata stores them
//! (tests/fixtures/wikidata.ttl) and the way a private Wikibase numbers its properties
//! (tests/fixtures/wikibase-private.ttl), in a real embedded store with the real embedding model
//! and a scripted model that must not be asked: relations are read by their property entities'
//! labels, classes by "instance of" and "subclass of" whatever their numbers, property entities
//! are never the thing asked about, a year held by a statement's qualifiers selects among its
//! values, a qualifier is an answer, and homonyms are told apart by their descriptions.

use chatty_kg_agents::{ClassRole, Explanation, Mode, Outcome, Pipeline, QuestionKind};
use chatty_kg_llm::scripted::ScriptedChatModel;

mod common;
use common::{Fixture, fixture_file, sorted};

fn wikidata() -> Option<&'static Fixture> {
    static FIXTURE: std::sync::OnceLock<Option<Fixture>> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| fixture_file("wikidata.ttl")).as_ref()
}

fn private() -> Option<&'static Fixture> {
    static FIXTURE: std::sync::OnceLock<Option<Fixture>> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| fixture_file("wikibase-private.ttl")).as_ref()
}

async fn ask(fixture: &Fixture, question: &str) -> Explanation {
    common::ask_silently(&common::silent_pipeline(fixture), question).await
}

/// Every question here, on both numberings.
fn graphs() -> Vec<(&'static str, &'static Fixture)> {
    [("wikidata", wikidata()), ("private", private())]
        .into_iter()
        .filter_map(|(name, f)| Some((name, f?)))
        .collect()
}

#[tokio::test]
async fn relations_are_read_by_their_property_entities() {
    for (name, graph) in graphs() {
        let e = ask(graph, "What is the population of Peru?").await;
        assert_eq!(e.display_answers(), ["34000000"], "{name}: {:#?}", e.paths);
        let path = e.chosen_path().expect("a path");
        assert!(
            path.text.contains("population"),
            "{name}: read by its label: {}",
            path.text
        );
        // "population" is where the relation is named, not a vertex to start from.
        assert!(
            e.entities
                .iter()
                .all(|l| !l.iri.as_deref().unwrap_or("").ends_with("/P1082")
                    && !l.iri.as_deref().unwrap_or("").ends_with("entity/P2")),
            "{name}: {:#?}",
            e.entities
        );
        let e = ask(graph, "Who is the head of government of Lima?").await;
        assert_eq!(e.display_answers(), ["Jorge Muñoz"], "{name}: the truthy value");
    }
}

#[tokio::test]
async fn classes_by_instance_of_and_subclass_of_whatever_their_numbers() {
    for (name, graph) in graphs() {
        let e = ask(graph, "Which cities are in Peru?").await;
        // The river and the mountain are in Peru too; Lima is a city as a capital.
        assert_eq!(
            sorted(&e),
            ["Arequipa", "Cusco", "Lima", "Santa Rosa"],
            "{name}: {:#?}",
            e.sparql
        );
        let class = e.class.as_ref().expect("the class is shown");
        assert_eq!((class.role, class.applied), (ClassRole::Answer, true), "{name}");

        let e = ask(graph, "How many countries are there?").await;
        assert_eq!(e.display_answers(), ["4"], "{name}");

        let e = ask(graph, "Is Lima a city?").await;
        assert_eq!(
            (e.answer_kind, e.display_answers()),
            (Some(QuestionKind::Boolean), vec!["true".to_owned()]),
            "{name}"
        );
        let e = ask(graph, "Is the Amazon a city?").await;
        assert_eq!(e.display_answers(), ["false"], "{name}");

        let e = ask(graph, "Which is the most populous city?").await;
        assert_eq!(e.display_answers(), ["Lima"], "{name}: {:#?}", e.sparql);
    }
}

#[tokio::test]
async fn a_year_held_by_a_statements_period_selects_among_its_values() {
    for (name, graph) in graphs() {
        let e = ask(graph, "Who was the head of government of Lima in 2010?").await;
        assert_eq!(e.display_answers(), ["Ana Torres"], "{name}: {:#?}", e.sparql);
        let used = e.sparql.iter().find(|q| q.used).expect("a query answered");
        assert!(used.attribute.is_some(), "{name}: the qualifier is shown");

        let e = ask(graph, "Who was the head of government of Lima after 2015?").await;
        assert_eq!(sorted(&e), ["Jorge Muñoz", "Luis Castañeda"], "{name}: {:#?}", e.sparql);

        // A day: the statement whose period holds it.
        let e = ask(graph, "Who was the head of government of Lima on 1 June 2010?").await;
        assert_eq!(e.display_answers(), ["Ana Torres"], "{name}: {:#?}", e.sparql);
        // A qualifier asked of the statement the year holds: through the claim to it.
        let e = ask(graph, "When did the term of Lima's head of government in 2015 start?").await;
        let answers = e.display_answers();
        assert_eq!(answers.len(), 1, "{name}: {answers:?} {:#?} {:#?}", e.paths, e.sparql);
        assert!(answers[0].starts_with("2011-01-01"), "{name}: {answers:?}");
    }
}

#[tokio::test]
async fn a_qualifier_is_an_answer() {
    for (name, graph) in graphs() {
        let e = ask(graph, "When did Cusco receive the Heritage Award?").await;
        let answers = e.display_answers();
        assert_eq!(answers.len(), 1, "{name}: {answers:?} {:#?}", e.paths);
        assert!(answers[0].starts_with("1983-12-09"), "{name}: {answers:?}");
    }
}

#[tokio::test]
async fn homonyms_are_told_apart_by_their_descriptions() {
    let Some(graph) = wikidata() else { return };
    let (ctx, _) = common::context(graph, ScriptedChatModel::new());
    let pipeline = Pipeline::new(ctx);
    let e = pipeline
        .ask("Which country is Santa Rosa in?", Mode::MultiTurn, &[])
        .await
        .unwrap();
    let Outcome::Clarify { clarification } = &e.outcome else {
        panic!("expected a clarifying question: {:#?} {}", e.outcome, e.text)
    };
    let mut descriptions: Vec<&str> = clarification.options.iter().map(|o| o.description.as_str()).collect();
    descriptions.sort();
    assert!(
        descriptions[0].contains("city in Chile") && descriptions[1].contains("city in Peru"),
        "{descriptions:?}"
    );
}
