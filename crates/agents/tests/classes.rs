//! Classes end to end (tests/fixtures/classes.ttl in a real embedded store, the real embedding
//! model, a scripted model that must not be asked): a class word holds the answers to the class
//! ("which cities" leaves the river and the mountain out), counts and superlatives work over a
//! class with and without an entity, "is X a Y" is answered from `rdf:type` through subclasses,
//! and the same against a real Virtuoso endpoint. Values written in the question (a title that
//! is no label, a code) anchor it like entities.

use chatty_kg_agents::{
    ChoiceReason, ClassRole, Explanation, LinkMethod, Mode, Outcome, Pipeline, QirSource, QueryReason, QuestionKind,
};
use chatty_kg_llm::scripted::ScriptedChatModel;

mod common;
use common::{classes_graph, context, sorted};

fn pipeline() -> Option<Pipeline> {
    Some(common::silent_pipeline(classes_graph()?))
}

async fn ask(pipeline: &Pipeline, question: &str) -> Explanation {
    common::ask_silently(pipeline, question).await
}

#[tokio::test]
async fn a_class_word_holds_the_answers_to_the_class() {
    let Some(pipeline) = pipeline() else { return };
    let e = ask(&pipeline, "Which cities are in Peru?").await;
    // The river and the mountain are "in Peru" by the same relation; Lima is a city as a capital.
    assert_eq!(sorted(&e), ["Arequipa", "Cusco", "Lima"], "{:#?}", e.sparql);
    let class = e.class.as_ref().expect("the class is shown");
    assert_eq!(
        (class.iri.as_str(), class.role, class.applied),
        ("http://example.org/geo/class/City", ClassRole::Answer, true)
    );
    assert!(e.chosen_path().is_some_and(|p| p.reaches_class));
    assert_eq!(e.path_choice.map(|c| c.reason), Some(ChoiceReason::Class));
    let used = e.sparql.iter().find(|q| q.used).unwrap();
    // The class's subclasses are listed (a capital is a city), not walked per answer.
    assert!(
        used.sparql.contains("class/Capital>") && !used.sparql.contains("subClassOf"),
        "{}",
        used.sparql
    );
    // A value of no class at all is not left out: the graph does not say it is no city.
    let e = ask(&pipeline, "Which cities are in Chile?").await;
    assert_eq!(sorted(&e), ["Santiago", "Valparaíso"], "{:#?}", e.sparql);

    // Without a class word the same relation answers with everything in Peru.
    let e = ask(&pipeline, "What is located in Peru?").await;
    assert_eq!(sorted(&e), ["Amazon", "Arequipa", "Cusco", "Huascarán", "Lima"]);
    assert!(e.class.is_none());
}

#[tokio::test]
async fn a_class_word_after_a_genitive_mention_says_what_the_vertex_is() {
    let Some(pipeline) = pipeline() else { return };
    // "population" is a relation of the region itself: "region" says what Loreto is, so the
    // region's own population answers, not its towns' (through "region", the towns' relation).
    let e = ask(&pipeline, "What is the population of the Loreto region?").await;
    assert_eq!(e.display_answers(), ["1030000"], "{:#?}", e.sparql);
    // "Towns" names no relation of a region: after its "of", as after "in", "region" stays the
    // relation's word and the towns answer.
    for question in [
        "What is the population of the towns of the Loreto region?",
        "What is the population of the towns in the Loreto region?",
    ] {
        let e = ask(&pipeline, question).await;
        assert_eq!(sorted(&e), ["480000", "63000"], "{question}: {:#?}", e.sparql);
    }
}

#[tokio::test]
async fn counts_over_a_class_with_and_without_an_entity() {
    let Some(pipeline) = pipeline() else { return };
    let e = ask(&pipeline, "How many countries are in South America?").await;
    assert_eq!(
        (e.answer_kind, e.display_answers()),
        (Some(QuestionKind::Count), vec!["3".to_owned()])
    );

    // "there" is no name, though a vertex is labelled "There".
    let e = ask(&pipeline, "How many countries are there in South America?").await;
    assert_eq!(e.display_answers(), ["3"], "{:#?}", e.entities);
    let e = ask(&pipeline, "How many countries are there?").await;
    assert_eq!(e.display_answers(), ["4"]);
    assert_eq!(e.qir.as_ref().unwrap().source, QirSource::Class);
    assert_eq!(e.sparql.len(), 1);
    assert_eq!(e.sparql[0].reason, QueryReason::Class);

    // Through the subclass: the capitals are cities too.
    let e = ask(&pipeline, "How many cities are there?").await;
    assert_eq!(e.display_answers(), ["5"]);

    let e = ask(&pipeline, "List all rivers").await;
    assert_eq!(e.display_answers(), ["Amazon"]);
}

#[tokio::test]
async fn superlatives_over_a_class() {
    let Some(pipeline) = pipeline() else { return };
    let e = ask(&pipeline, "What is the most populous country in South America?").await;
    assert_eq!(e.display_answers(), ["Peru"], "{:#?}", e.sparql);

    let e = ask(&pipeline, "Which is the most populous city?").await;
    assert_eq!(e.display_answers(), ["Lima"], "{:#?}", e.sparql);
    assert_eq!(e.qir.as_ref().unwrap().source, QirSource::Class);
    assert!(e.sparql[0].sparql.contains("population"), "{}", e.sparql[0].sparql);

    // A path that ends at the cities' numbers answers with the cities, ordered by them (a number
    // is no city), as many as the question counts, in order.
    let e = ask(
        &pipeline,
        "Give me the two cities in Peru with the largest population, largest first.",
    )
    .await;
    assert_eq!(e.display_answers(), ["Lima", "Arequipa"], "{:#?}", e.sparql);
}

#[tokio::test]
async fn is_x_a_y_is_answered_from_its_types() {
    let Some(pipeline) = pipeline() else { return };
    let e = ask(&pipeline, "Is Lima a city?").await;
    assert_eq!(e.display_answers(), ["true"]);
    assert_eq!(e.text, "Yes.");
    assert_eq!(
        e.answers[0].provenance,
        [[
            "http://example.org/geo/Lima".to_owned(),
            "http://www.w3.org/1999/02/22-rdf-syntax-ns#type".to_owned(),
            "http://example.org/geo/class/Capital".to_owned()
        ]]
    );
    assert_eq!(e.class.as_ref().map(|c| c.role), Some(ClassRole::Membership));

    let e = ask(&pipeline, "Is Peru a city?").await;
    assert_eq!(e.display_answers(), ["false"]);
    assert_eq!(e.outcome, Outcome::Answered);

    // Accents and case do not matter to the link.
    let e = ask(&pipeline, "Is huascaran a mountain?").await;
    assert_eq!(e.display_answers(), ["true"]);
    assert_eq!(e.entities[0].label.as_deref(), Some("Huascarán"));
}

#[tokio::test]
async fn a_written_value_anchors_the_question() {
    let Some(pipeline) = pipeline() else { return };
    for question in [
        "Who wrote 'The Time of the Hero'?",
        "Who is the author of the book with ISBN 978-0-0000-1001-4?",
    ] {
        let e = ask(&pipeline, question).await;
        assert_eq!(
            e.display_answers(),
            ["Mario Vargas Llosa"],
            "{question}: {:#?}",
            e.entities
        );
        assert_eq!(e.entities[0].method, LinkMethod::Literal);
        assert_eq!(e.entities[0].iri.as_deref(), Some("http://example.org/geo/work/W1001"));
    }
    // Two hops from a value.
    let e = ask(&pipeline, "Where was the author of 'The Time of the Hero' born?").await;
    assert_eq!(e.display_answers(), ["Arequipa"], "{:#?}", e.paths);
    // A value the graph does not store is an unknown entity, said so.
    let e = pipeline
        .ask(
            "Who is the author of the book with ISBN 978-0-0000-9999-9?",
            Mode::SingleTurn,
            &[],
        )
        .await;
    assert!(e.is_err() || e.as_ref().is_ok_and(|e| e.answers.is_empty()), "{e:?}");
}

#[tokio::test]
async fn a_homonym_is_tried_when_no_path_from_the_first_fits() {
    let Some(pipeline) = pipeline() else { return };
    let e = ask(&pipeline, "Who was born in Arequipa?").await;
    assert_eq!(
        e.display_answers(),
        ["Mario Vargas Llosa"],
        "{:#?} {:#?}",
        e.entities,
        e.paths
    );
    let link = &e.entities[0];
    assert_eq!(link.iri.as_deref(), Some("http://example.org/geo/Arequipa"));
    assert!(link.homonym_retried);
    assert_eq!(
        link.homonyms,
        ["http://example.org/geo/Arequipa_Ship"],
        "the one tried first"
    );
    // Two anchors, and no path from the first homonym could meet the other's at a vertex: the
    // next homonym is the anchor the answer's join starts from.
    let e = ask(&pipeline, "Who was born in Arequipa and is a citizen of Peru?").await;
    let link = e.entities.iter().find(|l| l.mention == "Arequipa").unwrap();
    assert_eq!(
        link.iri.as_deref(),
        Some("http://example.org/geo/Arequipa"),
        "{:#?}",
        e.entities
    );
    assert!(link.homonym_retried);
    let used = e.sparql.iter().find(|q| q.used).unwrap();
    assert!(
        used.sparql.contains("geo/Arequipa>") && used.sparql.contains("geo/Peru>") && !used.sparql.contains("Ship"),
        "{}",
        used.sparql
    );
    // Where the first fits, it stays.
    let e = ask(&pipeline, "Who operates Arequipa?").await;
    assert_eq!(e.display_answers(), ["Pacific Line"]);
    assert!(!e.entities[0].homonym_retried);
}

#[tokio::test]
async fn classes_on_a_remote_virtuoso_endpoint() {
    let (Some(fixture), Some(kg)) = (common::fixture(), common::virtuoso()) else {
        return;
    };
    let (mut ctx, _) = context(fixture, ScriptedChatModel::new());
    ctx.kg = kg;
    let pipeline = Pipeline::new(ctx);
    let e = ask(&pipeline, "Is Tom Hanks an actor?").await;
    assert_eq!(e.display_answers(), ["true"]);
    let e = ask(&pipeline, "Is Robert Zemeckis an actor?").await;
    assert_eq!(e.display_answers(), ["false"]);
    let e = ask(&pipeline, "How many films are there?").await;
    assert_eq!(e.display_answers(), ["2"]);
    let e = ask(&pipeline, "Which films did Tom Hanks star in?").await;
    // Held to films on the endpoint too; Big has no class at all, which is no evidence against it.
    assert_eq!(sorted(&e), ["Big", "Cast Away", "Forrest Gump"], "{:#?}", e.sparql);
    assert!(e.class.as_ref().is_some_and(|c| c.applied));
    assert!(
        e.sparql.iter().any(|q| q.used && q.sparql.contains("EXISTS")),
        "{:#?}",
        e.sparql
    );
}

/// A graph that labels its predicates ("date of birth"): the relation's words in a question are
/// not an entity the question is about, even though they are some vertex's exact label.
#[tokio::test]
async fn a_labelled_predicate_is_a_relation_not_an_entity() {
    let Some(fixture) = common::from_turtle(
        r#"@prefix g: <http://example.org/g/> . @prefix p: <http://example.org/p/> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
        p:birthDate rdfs:label "date of birth" . p:birthPlace rdfs:label "place of birth" .
        p:author rdfs:label "author" .
        g:Ibsen rdfs:label "Henrik Ibsen" ; p:birthDate "1828-03-20"^^xsd:date ; p:birthPlace g:Skien .
        g:Skien rdfs:label "Skien" .
        g:Doll rdfs:label "A Doll's House" ; p:author g:Ibsen .
        g:Gynt rdfs:label "Peer Gynt" ; p:author g:Ibsen ."#,
    ) else {
        return;
    };
    let (ctx, _) = context(&fixture, ScriptedChatModel::new());
    let pipeline = Pipeline::new(ctx);
    for (question, answer) in [
        ("What is the date of birth of Henrik Ibsen?", "1828-03-20"),
        ("What is the place of birth of Henrik Ibsen?", "Skien"),
    ] {
        let e = ask(&pipeline, question).await;
        assert_eq!(e.display_answers(), [answer], "{question}: {:?}", e.paths.first());
        let linked: Vec<_> = e.entities.iter().filter_map(|l| l.iri.as_deref()).collect();
        assert_eq!(linked, ["http://example.org/g/Ibsen"], "{question}");
    }
}
