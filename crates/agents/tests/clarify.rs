//! Clarifying questions end to end (tests/fixtures/homonyms.ttl in a real embedded store, the
//! real embedding model, a scripted model that must not be asked): "Who directed Crash?" fits
//! two films of that label equally, so a dialogue asks which one is meant, naming each by what
//! tells it apart, and the next turn's answer ("the second", "the 1996 one") runs the question
//! with that film. The question decides when only one homonym fits ("who is the artist of
//! Crash": the album), the graph decides when one vertex dominates ("Paris"), and single
//! questions are never held.

use chatty_kg_agents::{Explanation, LinkMethod, Mode, Outcome, Pipeline, QueryReason, Turn};
use chatty_kg_llm::scripted::ScriptedChatModel;

mod common;
use common::{Fixture, context};
use std::sync::OnceLock;

fn graph() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE.get_or_init(|| common::fixture_file("homonyms.ttl")).as_ref()
}

fn with_clarify(clarify: bool) -> Option<Pipeline> {
    let (mut ctx, _) = context(graph()?, ScriptedChatModel::new());
    ctx.params.clarify = clarify;
    Some(Pipeline::new(ctx))
}

async fn ask(pipeline: &Pipeline, question: &str, mode: Mode, history: &[Turn]) -> Explanation {
    let e = pipeline
        .ask(question, mode, history)
        .await
        .unwrap_or_else(|e| panic!("{question}: {e}"));
    assert_eq!(e.llm.calls, 0, "{question}: no model call is needed");
    e
}

fn director(film: &str) -> &'static str {
    match film {
        "http://example.org/media/Crash_2004" => "Paul Haggis",
        "http://example.org/media/Crash_1996" => "David Cronenberg",
        other => panic!("not a film option: {other}"),
    }
}

#[tokio::test]
async fn a_tie_is_asked_about_and_the_next_turn_resolves_it() {
    let Some(pipeline) = with_clarify(true) else { return };
    let first = ask(&pipeline, "Who directed Crash?", Mode::MultiTurn, &[]).await;
    let Outcome::Clarify { clarification } = &first.outcome else {
        panic!("expected a clarifying question: {:#?} {}", first.outcome, first.text);
    };
    assert!(first.answers.is_empty(), "no answer is given for one of them");
    // The check that found the tie is shown with the queries: the path from each other "Crash".
    let checks: Vec<_> = first
        .sparql
        .iter()
        .filter(|q| q.reason == QueryReason::Homonym)
        .collect();
    assert_eq!(checks.len(), 2, "{:#?}", first.sparql);
    assert!(checks.iter().all(|q| !q.used && q.sparql.contains("directedBy")));
    assert_eq!(
        checks.iter().filter(|q| q.rows > 0).count(),
        1,
        "the other film, not the album"
    );
    let mut iris: Vec<&str> = clarification.options.iter().map(|o| o.iri.as_str()).collect();
    iris.sort();
    // The album has no director: the question already rules it out.
    assert_eq!(
        iris,
        [
            "http://example.org/media/Crash_1996",
            "http://example.org/media/Crash_2004"
        ]
    );
    for option in &clarification.options {
        assert!(option.kinds.contains(&"film".to_owned()), "{option:?}");
        let year = if option.iri.ends_with("1996") { "1996" } else { "2004" };
        assert!(option.description.contains(year), "{option:?}");
        // The options do not give the answer away.
        assert!(!option.description.contains(director(&option.iri)), "{option:?}");
        // Nor what both share.
        assert!(!option.description.contains("English"), "{option:?}");
    }
    assert!(first.text.contains("Which one do you mean?"), "{}", first.text);
    assert!(first.text.contains("\n2. Crash ("), "{}", first.text);

    let history = vec![Turn::answered(&first, 100)];
    assert_eq!(history[0].clarification.as_ref(), Some(clarification));
    let second = &clarification.options[1];
    let e = ask(&pipeline, "the second", Mode::MultiTurn, &history).await;
    assert_eq!(e.outcome, Outcome::Answered, "{}", e.text);
    assert_eq!(e.display_answers(), [director(&second.iri)]);
    assert_eq!(e.resolved_question, "Who directed Crash?");
    let clarified = e.clarified.as_ref().expect("the choice is shown");
    assert_eq!((clarified.option, clarified.iri.as_str()), (1, second.iri.as_str()));
    let link = e
        .entities
        .iter()
        .find(|l| l.iri.as_deref() == Some(&second.iri))
        .unwrap();
    assert_eq!(link.method, LinkMethod::Clarified);

    // Words that only one option has choose it too.
    let e = ask(&pipeline, "the 1996 one", Mode::MultiTurn, &history).await;
    assert_eq!(e.display_answers(), ["David Cronenberg"]);
    let e = ask(&pipeline, "the one with Holly Hunter", Mode::MultiTurn, &history).await;
    assert_eq!(e.display_answers(), ["David Cronenberg"]);
    let e = ask(&pipeline, "2", Mode::MultiTurn, &history).await;
    assert_eq!(e.display_answers(), [director(&second.iri)]);

    // A new question is answered as one: the waiting question is dropped.
    let e = ask(&pipeline, "Where was Victor Hugo born?", Mode::MultiTurn, &history).await;
    assert!(e.clarified.is_none());
    assert_eq!(e.display_answers(), ["Paris"]);
}

/// "Who directed Heat?": no film is labelled "Heat"; the two whose labels hold it fit equally,
/// and each option is offered by its own label.
#[tokio::test]
async fn options_held_by_one_word_are_offered_by_their_own_labels() {
    let Some(pipeline) = with_clarify(true) else { return };
    let first = ask(&pipeline, "Who directed Heat?", Mode::MultiTurn, &[]).await;
    let Outcome::Clarify { clarification } = &first.outcome else {
        panic!("expected a clarifying question: {:#?} {}", first.outcome, first.text);
    };
    let mut labels: Vec<&str> = clarification.options.iter().map(|o| o.label.as_str()).collect();
    labels.sort();
    assert_eq!(labels, ["Heat Lightning", "Heat Wave"], "{}", first.text);
    assert!(
        first.text.contains("Heat Lightning (") && first.text.contains("Heat Wave ("),
        "{}",
        first.text
    );
}

#[tokio::test]
async fn the_question_the_graph_or_the_mode_decide_without_asking() {
    let Some(pipeline) = with_clarify(true) else { return };
    // Only the album has an artist.
    let e = ask(&pipeline, "Who is the artist of Crash?", Mode::MultiTurn, &[]).await;
    assert_eq!(
        (&e.outcome, e.display_answers()),
        (&Outcome::Answered, vec!["Dave Matthews Band".to_owned()])
    );
    // Both places have a population, but the city has far more edges than the town in Texas.
    let e = ask(&pipeline, "What is the population of Paris?", Mode::MultiTurn, &[]).await;
    assert_eq!(
        (&e.outcome, e.display_answers()),
        (&Outcome::Answered, vec!["2100000".to_owned()])
    );
    // A single question has no next turn to answer with: the best-connected film answers.
    let e = ask(&pipeline, "Who directed Crash?", Mode::SingleTurn, &[]).await;
    assert_eq!(e.outcome, Outcome::Answered);
    assert_eq!(e.answers.len(), 1);
    // And a dialogue can turn clarifications off.
    let Some(off) = with_clarify(false) else { return };
    let e = ask(&off, "Who directed Crash?", Mode::MultiTurn, &[]).await;
    assert_eq!(e.outcome, Outcome::Answered);
}
