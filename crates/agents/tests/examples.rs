//! Examples made from feedback, on a graph whose relation names say nothing (`ex:p17`, `ex:p42`),
//! with the real embedding model and a scripted model that must not be asked: a corrected
//! question's query, on a similar question's own vertex, answers it; another key's example is not
//! used; an example whose query has no answer on the new vertex gives no answer of its own; a
//! question of another form does not use it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_agents::candidates::examples::{Example, Holder};
use chatty_kg_agents::{Explanation, Mode, Outcome, Pipeline, QueryReason, QuestionKind};
use chatty_kg_llm::scripted::ScriptedChatModel;

mod common;

const GRAPH: &str = r#"
@prefix ex: <http://ex.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:alice rdfs:label "Alice Moreau" ; ex:p17 ex:carol ; ex:p42 ex:dave .
ex:bob rdfs:label "Bob Stone" ; ex:p17 ex:erin ; ex:p42 ex:frank .
ex:gina rdfs:label "Gina Park" ; ex:p17 ex:carol .
ex:carol rdfs:label "Carol Vance" .
ex:dave rdfs:label "Dave Ortiz" .
ex:erin rdfs:label "Erin Holt" .
ex:frank rdfs:label "Frank Li" .
ex:p99 rdfs:label "producer" .
ex:alice ex:p99 ex:erin .
ex:bob ex:p99 ex:dave .
"#;

async fn ask(pipeline: &Pipeline, question: &str, asker: Option<&str>) -> Explanation {
    let e = pipeline
        .ask_observed_by(question, Mode::SingleTurn, &[], asker, &mut |_, _| {})
        .await
        .unwrap_or_else(|e| panic!("{question}: {e}"));
    assert_eq!(e.llm.calls, 0, "{question}: no model call is needed");
    e
}

#[tokio::test]
async fn a_corrected_query_answers_a_similar_question_of_the_same_key_on_its_own_vertex() {
    let Some(fixture) = common::from_turtle(GRAPH) else {
        return;
    };
    let (ctx, _) = common::context(&fixture, ScriptedChatModel::new());
    // "The mentor" is p42 here: a person corrected the answer about Bob with that query.
    let example = Example::make(
        &ctx,
        "Who is the mentor of Bob Stone?",
        &[("Bob Stone".into(), "http://ex.org/bob".into())],
        "SELECT ?x WHERE { <http://ex.org/bob> <http://ex.org/p42> ?x }",
        Some(QuestionKind::List),
    )
    .await
    .unwrap();
    assert_eq!(example.masked, "Who is the mentor of X?");
    assert_eq!(example.anchors, ["http://ex.org/bob"]);
    let book = ctx.examples.clone();
    book.insert("bob-0", Holder::Key(Some("key-a".into())), example)
        .unwrap();
    let pipeline = Pipeline::new(ctx);

    let e = ask(&pipeline, "Who is the mentor of Alice Moreau?", Some("key-a")).await;
    assert_eq!(common::sorted(&e), ["Dave Ortiz"], "{:#?}", e.sparql);
    let used = e.example.as_ref().expect("the example is named");
    assert!(used.answered && used.id == "bob-0", "{used:?}");
    assert_eq!(
        used.anchors,
        [("http://ex.org/bob".to_owned(), "http://ex.org/alice".to_owned())]
    );
    let query = e.sparql.iter().find(|q| q.used).unwrap();
    assert_eq!(query.reason, QueryReason::Example);
    assert!(
        query.sparql.contains("<http://ex.org/alice>") && query.sparql.contains("p42"),
        "{}",
        query.sparql
    );
    assert!(!query.sparql.contains("bob"), "{}", query.sparql);

    // Another key's questions never use it; anonymous ones neither.
    for asker in [Some("key-b"), None] {
        let e = ask(&pipeline, "Who is the mentor of Alice Moreau?", asker).await;
        assert!(e.example.is_none(), "{asker:?}: {:?}", e.example);
        assert!(e.sparql.iter().all(|q| q.reason != QueryReason::Example));
    }

    // Gina has no p42: the example is tried and has no answer; no relation's name says
    // "mentor", so there is no answer at all (nothing is made up from the example).
    let e = ask(&pipeline, "Who is the mentor of Gina Park?", Some("key-a")).await;
    let used = e.example.as_ref().expect("the example was tried");
    assert!(!used.answered, "{used:?}");
    assert!(e.answers.is_empty(), "{:#?}", e.answers);
    assert_eq!(e.outcome, Outcome::NoQuery);

    // A question unlike it ("how many ...") is not its form: not tried.
    let e = ask(&pipeline, "How many things does Alice Moreau have?", Some("key-a")).await;
    assert!(e.example.is_none(), "{:?}", e.example);

    // Shared by an operator, every key's questions use it.
    let example = Example::make(
        pipeline.context(),
        "Who is the mentor of Bob Stone?",
        &[],
        "SELECT ?x WHERE { <http://ex.org/bob> <http://ex.org/p42> ?x }",
        None,
    )
    .await
    .unwrap();
    assert_eq!(example.masked, "Who is the mentor of X?", "the label names the anchor");
    book.insert("import-1", Holder::Everyone, example).unwrap();
    let e = ask(&pipeline, "Who is the mentor of Alice Moreau?", Some("key-b")).await;
    assert_eq!(common::sorted(&e), ["Dave Ortiz"]);
    assert_eq!(e.example.unwrap().id, "import-1");
    assert!(book.remove("import-1"));
    let e = ask(&pipeline, "Who is the mentor of Alice Moreau?", Some("key-b")).await;
    assert!(e.example.is_none());

    // A close question that does not say the example's relation ("producer") does not try it.
    let example = Example::make(
        pipeline.context(),
        "Which films did Bob Stone produce?",
        &[],
        "SELECT ?x WHERE { <http://ex.org/bob> <http://ex.org/p99> ?x }",
        None,
    )
    .await
    .unwrap();
    book.insert("producer", Holder::Key(Some("key-c".into())), example)
        .unwrap();
    let e = ask(&pipeline, "Which films did Alice Moreau direct?", Some("key-c")).await;
    let used = e.example.as_ref().expect("the nearest example is shown");
    assert!(
        used.similarity >= pipeline.context().params.example_similarity,
        "{used:?}"
    );
    assert!(!used.fits && !used.answered, "{used:?}");
    assert_eq!(used.words[0].name, "producer", "{used:?}");
    assert!(
        e.sparql.iter().all(|q| q.reason != QueryReason::Example),
        "{:#?}",
        e.sparql
    );
    // The same question about another person says it: tried, and it answers.
    let e = ask(&pipeline, "Which films did Alice Moreau produce?", Some("key-c")).await;
    assert!(
        e.example.as_ref().is_some_and(|u| u.fits && u.answered),
        "{:?}",
        e.example
    );
    assert_eq!(common::sorted(&e), ["Erin Holt"]);
}

#[tokio::test]
async fn a_count_example_counts_on_the_new_vertex_and_a_count_of_zero_is_not_its_answer() {
    let Some(fixture) = common::from_turtle(GRAPH) else {
        return;
    };
    let (ctx, _) = common::context(&fixture, ScriptedChatModel::new());
    let example = Example::make(
        &ctx,
        "How many mentors does Bob Stone have?",
        &[("Bob Stone".into(), "http://ex.org/bob".into())],
        "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { <http://ex.org/bob> <http://ex.org/p42> ?x }",
        None,
    )
    .await
    .unwrap();
    assert_eq!(example.form, QuestionKind::Count);
    ctx.examples.insert("count", Holder::Key(None), example).unwrap();
    let pipeline = Pipeline::new(ctx);
    let e = ask(&pipeline, "How many mentors does Alice Moreau have?", None).await;
    assert!(e.example.as_ref().is_some_and(|u| u.answered), "{:?}", e.example);
    assert_eq!(e.display_answers(), ["1"], "{:#?}", e.sparql);
    // Gina has no p42: the example counts 0, which says its shape finds nothing here.
    let e = ask(&pipeline, "How many mentors does Gina Park have?", None).await;
    let used = e.example.as_ref().expect("the example was tried");
    assert!(!used.answered, "{used:?}");
    let tried = e.sparql.iter().find(|q| q.reason == QueryReason::Example).unwrap();
    assert!(!tried.used, "{tried:?}");
}
