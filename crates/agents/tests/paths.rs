//! Relation paths end to end on a graph of another domain than the movies
//! (tests/fixtures/world.ttl) in a real embedded store, with the real embedding model: multi-hop
//! chains, the reverse direction, two anchors, the topic excluded, counts, yes/no, superlatives,
//! stored numbers, the search budget and the margin rule. The scripted model plays a weak model:
//! where it is asked for a QIR it writes one triple and `type: list`, whatever the question.

use chatty_kg_agents::{
    AgentParameters, ChoiceReason, Explanation, Mode, Outcome, Pipeline, QirSource, QueryReason, QuestionKind,
    ValueKind,
};
use chatty_kg_llm::scripted::ScriptedChatModel;

mod common;
use common::{context, from_turtle, labelled_predicates, world};

/// The QIR a weak model writes: one triple from the first entity, `type: list`.
fn weak_qir(entity: &str, relation: &str) -> String {
    serde_json::json!({
        "entities": [entity], "unknowns": ["?answer"], "relations": [relation],
        "triples": [[entity, relation, "?answer"]], "type": "list", "order": null
    })
    .to_string()
}

fn pipeline(scripted: ScriptedChatModel, tune: impl FnOnce(&mut AgentParameters)) -> Option<Pipeline> {
    let (mut ctx, _) = context(world()?, scripted);
    tune(&mut ctx.params);
    Some(Pipeline::new(ctx))
}

async fn ask(pipeline: &Pipeline, question: &str) -> Explanation {
    pipeline
        .ask(question, Mode::SingleTurn, &[])
        .await
        .unwrap_or_else(|e| panic!("{question}: {e}"))
}

fn sorted(e: &Explanation) -> Vec<String> {
    let mut answers = e.display_answers();
    answers.sort();
    answers
}

fn chosen(e: &Explanation) -> String {
    e.chosen_path().map(|p| p.text.clone()).unwrap_or_default()
}

#[tokio::test]
async fn a_one_triple_qir_still_gets_the_second_hops_answer() {
    let scripted = ScriptedChatModel::new().reply_when("qir", "", &weak_qir("The Time of the Hero", "author born"));
    let Some(pipeline) = pipeline(scripted, |p| {
        p.ground_entities = false;
        p.path_margin = 0.0;
    }) else {
        return;
    };
    let e = ask(&pipeline, "Where was the author of The Time of the Hero born?").await;
    assert_eq!(e.qir.as_ref().unwrap().source, QirSource::Model);
    assert_eq!(e.qir.as_ref().unwrap().triples.len(), 1);
    assert_eq!(e.display_answers(), ["Arequipa"], "{}", chosen(&e));
    assert_eq!(chosen(&e), "The Time of the Hero → author → birth place");
    // The provenance walks the whole chain.
    let provenance = &e.answers[0].provenance;
    assert!(
        provenance.iter().any(|t| t[1].ends_with("prop/author")),
        "{provenance:?}"
    );
    assert!(
        provenance.iter().any(|t| t[1].ends_with("prop/birthPlace")),
        "{provenance:?}"
    );
    assert_eq!(e.llm.calls, 1, "the QIR only: the margin rule took the best path");
}

#[tokio::test]
async fn three_hops_without_any_model_call() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new(), |_| {}) else {
        return;
    };
    let e = ask(
        &pipeline,
        "In which country was the author of The House of the Spirits born?",
    )
    .await;
    assert_eq!(e.display_answers(), ["Peru"], "{:#?}", e.paths);
    assert_eq!(chosen(&e), "The House of the Spirits → author → birth place → country");
    assert_eq!(e.qir.as_ref().unwrap().source, QirSource::EntitySpotting);
    assert_eq!(
        e.llm.calls, 0,
        "the entity is a label in the question and the best path won clearly"
    );
    let search = e.path_search.as_ref().unwrap();
    assert_eq!((search.hops, search.cut.as_deref()), (3, None));
    assert!(
        search.queries <= 6,
        "one grouped query per hop and direction: {search:?}"
    );
    assert!(e.sparql_queries() <= 8);
}

#[tokio::test]
async fn an_edge_followed_backwards() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new(), |_| {}) else {
        return;
    };
    let e = ask(&pipeline, "Which books did Isabel Allende write?").await;
    assert_eq!(e.display_answers(), ["The House of the Spirits"]);
    let hop = &e.chosen_path().unwrap().path.hops[0];
    assert!(hop.predicate.ends_with("prop/author") && !hop.forward, "{hop:?}");
    assert!(
        e.sparql[0]
            .sparql
            .contains("?answer <http://example.org/world/prop/author>")
    );
}

#[tokio::test]
async fn two_anchors_join_at_the_answer() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new(), |_| {}) else {
        return;
    };
    let e = ask(&pipeline, "Which books by Mario Vargas Llosa are in English?").await;
    let anchors: Vec<&str> = e.entities.iter().filter_map(|l| l.label.as_deref()).collect();
    assert_eq!(anchors, ["Mario Vargas Llosa", "English"]);
    assert_eq!(e.display_answers(), ["Letters to a Young Novelist"]);
    let used = e.sparql.iter().find(|q| q.used).unwrap();
    assert_eq!(used.reason, QueryReason::Join, "{:#?}", e.sparql);
}

#[tokio::test]
async fn a_path_back_to_the_topics_kind_leaves_the_topic_out() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new(), |_| {}) else {
        return;
    };
    let e = ask(&pipeline, "Which books share a genre with The Time of the Hero?").await;
    assert_eq!(
        chosen(&e),
        "The Time of the Hero → genre → genre (of)",
        "{:#?}",
        e.paths
    );
    assert_eq!(
        sorted(&e),
        ["Conversation in the Cathedral", "The House of the Spirits"]
    );
}

#[tokio::test]
async fn the_form_comes_from_the_words_when_the_model_says_list() {
    // The weak model writes `type: list` and one triple for every question.
    let scripted = ScriptedChatModel::new()
        .reply_when(
            "qir",
            "how many books",
            &weak_qir("Arequipa", "books written people born"),
        )
        .reply_when("qir", "the capital of peru", &weak_qir("Lima", "capital"))
        .reply_when("qir", "least populous", &weak_qir("Peru", "populous city"))
        .reply_when("qir", "people live", &weak_qir("Lima", "people live"));
    let Some(pipeline) = pipeline(scripted, |p| p.ground_entities = false) else {
        return;
    };
    let count = ask(&pipeline, "How many books were written by people born in Arequipa?").await;
    assert_eq!(count.answer_kind, Some(QuestionKind::Count));
    assert_eq!(
        (count.answers[0].kind, count.text.as_str()),
        (ValueKind::Count, "3"),
        "{:#?}",
        count.paths
    );
    assert!(count.sparql[0].sparql.contains("COUNT(DISTINCT ?answer)"));

    let yes = ask(&pipeline, "Is Lima the capital of Peru?").await;
    assert_eq!(
        (yes.answer_kind, yes.text.as_str()),
        (Some(QuestionKind::Boolean), "Yes."),
        "{:#?} {:#?}",
        yes.paths,
        yes.sparql
    );
    // One anchor (the weak QIR named only Lima): the path's values are looked for in the question.
    assert!(
        yes.sparql[0].sparql.contains("prop/capital"),
        "{}",
        yes.sparql[0].sparql
    );
    assert_eq!(yes.answers[0].provenance.len(), 1, "Peru capital Lima");

    let least = ask(&pipeline, "Which is the least populous city of Peru?").await;
    assert_eq!(
        least.display_answers(),
        ["Cusco"],
        "{:#?} {:#?}",
        least.paths,
        least.sparql
    );
    assert!(
        least.sparql[0].sparql.contains("ORDER BY"),
        "{}",
        least.sparql[0].sparql
    );

    let people = ask(&pipeline, "How many people live in Lima?").await;
    assert_eq!(
        people.text, "9700000",
        "a number the graph stores, not a count: {:#?}",
        people.paths
    );
    assert_eq!(people.answers[0].kind, ValueKind::Literal);
}

#[tokio::test]
async fn yes_and_no_over_a_two_hop_path() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new(), |_| {}) else {
        return;
    };
    let yes = ask(&pipeline, "Was the author of The House of the Spirits born in Lima?").await;
    assert_eq!(yes.text, "Yes.", "{:#?}", yes.paths);
    assert!(yes.sparql[0].sparql.starts_with("ASK"));
    // One solution of the ASK's pattern shows the chain that makes it true: the book's author,
    // and that author's birth place, through the same vertex.
    let chain = &yes.answers[0].provenance;
    assert_eq!(chain.len(), 2, "{chain:?}");
    let author = chain
        .iter()
        .find(|t| t[1].contains("author"))
        .expect("the author triple");
    let born = chain
        .iter()
        .find(|t| t[1].contains("birthPlace"))
        .expect("the birth triple");
    assert_eq!(author[2], born[0], "one vertex between: {chain:?}");
    assert!(born[2].ends_with("Lima"), "{chain:?}");
    let no = ask(&pipeline, "Was the author of The Time of the Hero born in Lima?").await;
    assert_eq!(no.text, "No.", "{:#?}", no.paths);
    // The path between the two, walked from either end.
    let ask = &no.sparql[0].sparql;
    assert!(
        ask.starts_with("ASK") && ask.contains("prop/author") && ask.contains("prop/birthPlace"),
        "{ask}"
    );
    assert_eq!(
        no.llm.calls, 0,
        "walking it backwards is no rival: the margin rule decides"
    );
}

#[tokio::test]
async fn the_budget_cuts_the_search_with_a_note() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new(), |p| p.path_queries = 4) else {
        return;
    };
    let e = ask(
        &pipeline,
        "In which country was the author of The House of the Spirits born?",
    )
    .await;
    let search = e.path_search.as_ref().unwrap();
    assert_eq!((search.hops, search.queries), (1, 2));
    assert!(
        search
            .cut
            .as_deref()
            .is_some_and(|c| c.contains("query budget") && c.contains("hop 2")),
        "{search:?}"
    );
    assert!(e.paths.iter().all(|p| p.path.hops.len() == 1));
    assert_ne!(e.display_answers(), ["Peru"], "one hop cannot reach the country");
}

#[tokio::test]
async fn the_model_picks_only_when_the_margin_is_small() {
    let question = "Where was the author of The Time of the Hero born?";
    let Some(sure) = pipeline(ScriptedChatModel::new(), |p| p.path_margin = 0.0) else {
        return;
    };
    let e = ask(&sure, question).await;
    assert_eq!(e.path_choice.unwrap().reason, ChoiceReason::Margin);
    assert_eq!(e.llm.calls, 0);

    // Every margin is small: the model picks, here the runner-up.
    let runner_up = e.paths[1].text.clone();
    let scripted = ScriptedChatModel::new().replies_in_turn(
        "path_search",
        "question: where was the author",
        &["the second one", &format!(r#"{{"path": "{runner_up}"}}"#)],
    );
    let Some(unsure) = pipeline(scripted, |p| p.path_margin = 10.0) else {
        return;
    };
    let picked = ask(&unsure, question).await;
    let choice = picked.path_choice.unwrap();
    assert_eq!((choice.reason, choice.index), (ChoiceReason::Model, 1));
    assert_eq!(chosen(&picked), runner_up);
    assert_eq!(
        picked.llm.by_agent["path_search"].calls, 2,
        "one malformed pick, one valid"
    );
    let used = picked.sparql.iter().find(|q| q.used).unwrap();
    assert_eq!(used.reason, QueryReason::ChosenPath);
}

#[tokio::test]
async fn a_question_no_path_fits_has_no_answer() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new(), |_| {}) else {
        return;
    };
    // Lima has no date at all: "when" finds no temporal path, and nothing is made up.
    let e = ask(&pipeline, "When was Lima founded?").await;
    assert_eq!(e.outcome, Outcome::NoQuery, "{:#?}", e.paths);
    assert!(e.answers.is_empty());
}

#[tokio::test]
async fn the_same_search_on_a_remote_virtuoso_endpoint() {
    let (Some(fixture), Some(kg)) = (common::fixture(), common::virtuoso()) else {
        return;
    };
    let (mut ctx, _) = context(fixture, ScriptedChatModel::new());
    ctx.kg = kg;
    let pipeline = Pipeline::new(ctx);
    let e = ask(&pipeline, "Who directed the films Tom Hanks starred in?").await;
    assert_eq!(e.display_answers(), ["Robert Zemeckis"], "{:#?}", e.paths);
    assert_eq!(chosen(&e), "Tom Hanks → starred actors (of) → directed by");
    let search = e.path_search.as_ref().unwrap();
    assert!(search.queries >= 4 && search.cut.is_none(), "{search:?}");
    assert_eq!(e.llm.calls, 0);
}

/// Predicates named by their own labels in the graph (Wikidata's `P57` is "director"): the path
/// search reads "director", not "p 57", so the question finds its relation.
#[tokio::test]
async fn predicates_are_read_by_their_labels_in_the_graph() {
    let Some(fixture) = labelled_predicates() else { return };
    let (ctx, _) = context(fixture, ScriptedChatModel::new());
    let pipeline = Pipeline::new(ctx);
    let e = ask(&pipeline, "Who is the director of Jaws?").await;
    assert_eq!(e.display_answers(), ["Steven Spielberg"], "{:#?}", e.paths);
    assert_eq!(e.chosen_path().unwrap().text, "Jaws → director");
    let e = ask(&pipeline, "Which cast members does Jaws have?").await;
    assert_eq!(e.display_answers(), ["Roy Scheider"], "{:#?}", e.paths);
}

/// "The Time of the Hero 2" is not "The Time of the Hero": the label followed by a sequel's
/// number is not grounded, and no candidate can name the mention, so the graph says it does not
/// know the book instead of answering about another one (and no model picks a vertex).
#[tokio::test]
async fn a_sequel_is_not_the_book_it_continues() {
    let scripted = ScriptedChatModel::new().reply_when(
        "qir",
        "the time of the hero 2",
        &weak_qir("The Time of the Hero 2", "wrote"),
    );
    let Some(pipeline) = pipeline(scripted, |_| {}) else {
        return;
    };
    let e = ask(&pipeline, "Who wrote The Time of the Hero 2?").await;
    assert_eq!(
        e.outcome,
        Outcome::UnknownEntity {
            mentions: vec!["The Time of the Hero 2".into()]
        },
        "{:#?}",
        e.entities
    );
    assert!(e.answers.is_empty());
    assert!(!e.llm.by_agent.contains_key("matching"), "{:?}", e.llm.by_agent);
    // The book itself is still found.
    let e = ask(&pipeline, "Who wrote The Time of the Hero?").await;
    assert_eq!(e.display_answers(), ["Mario Vargas Llosa"]);
}

/// "Does X have a Y?" asks whether the path has a value at all, not whether the question names
/// one of them.
#[tokio::test]
async fn a_question_about_existence_is_yes_when_the_path_has_a_value() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new(), |_| {}) else {
        return;
    };
    let e = ask(&pipeline, "Does Peru have a capital?").await;
    assert_eq!(e.answer_kind, Some(QuestionKind::Boolean));
    assert_eq!(e.display_answers(), ["true"], "{:#?}", e.paths);
    // Naming a value still checks it.
    let e = ask(&pipeline, "Is Lima the capital of Peru?").await;
    assert_eq!(e.display_answers(), ["true"]);
    let e = ask(&pipeline, "Is Cusco the capital of Peru?").await;
    assert_eq!(e.display_answers(), ["false"]);
}

/// A hub with 300 predicates (and 3 000 edges) stays within the search's query and time
/// budgets, and the one predicate the question names is still found among them.
#[tokio::test]
async fn a_hub_with_three_hundred_predicates_stays_within_the_budgets() {
    let mut turtle = String::from(
        "@prefix h: <http://example.org/hub/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n",
    );
    turtle.push_str("h:Hub rdfs:label \"Grand Hub\" ; h:mayor h:Ada .\nh:Ada rdfs:label \"Ada Lovelace\" .\n");
    for p in 0..300 {
        for v in 0..10 {
            turtle.push_str(&format!("h:Hub h:property{p} h:v{p}_{v} .\n"));
        }
    }
    let Some(fixture) = from_turtle(&turtle) else { return };
    let (ctx, _) = context(&fixture, ScriptedChatModel::new());
    let params = ctx.params.clone();
    let pipeline = Pipeline::new(ctx);
    let e = ask(&pipeline, "Who is the mayor of Grand Hub?").await;
    assert_eq!(e.display_answers(), ["Ada Lovelace"], "{:#?}", e.paths);
    let search = e.path_search.as_ref().unwrap();
    assert!(search.queries <= params.path_queries, "{search:?}");
    assert!(search.elapsed_ms <= params.path_time_ms as f64 * 1.5, "{search:?}");
}
