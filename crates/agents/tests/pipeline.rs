//! Every route through the whole pipeline, with the scripted model (deterministic), the real
//! embedded store (tests/fixtures/movies.ttl) and the real embedding model. The scripted model
//! only plays the LLM's part (QIR, picks); the answers come from the store. Questions that name
//! their entities by label need no model at all: the graph grounds them.

use chatty_kg_agents::{
    AgentParameters, ChoiceReason, Dialogue, Explanation, LinkMethod, Mode, Outcome, Pipeline, QirSource, QueryReason,
    QuestionKind, ValueKind,
};
use chatty_kg_llm::scripted::ScriptedChatModel;

mod common;
use common::{context, fixture};

const E: &str = "http://example.org/entity/";
const R: &str = "http://example.org/relation/";

/// A QIR as the model writes it; `?answer`, when used, is the target, else the first variable.
fn qir_reply(entities: &[&str], triples: &[[&str; 3]], kind: &str) -> String {
    let mut unknowns: Vec<&str> = triples
        .iter()
        .flat_map(|t| [t[0], t[2]])
        .filter(|x| x.starts_with('?'))
        .collect();
    unknowns.sort_by_key(|u| *u != "?answer");
    unknowns.dedup();
    serde_json::json!({
        "entities": entities, "unknowns": unknowns,
        "relations": triples.iter().map(|t| t[1]).collect::<Vec<_>>(),
        "triples": triples, "type": kind, "order": null
    })
    .to_string()
}

fn pipeline(scripted: ScriptedChatModel) -> Option<Pipeline> {
    tuned(scripted, |_| {})
}

fn tuned(scripted: ScriptedChatModel, tune: impl FnOnce(&mut AgentParameters)) -> Option<Pipeline> {
    let (mut ctx, _) = context(fixture()?, scripted);
    tune(&mut ctx.params);
    Some(Pipeline::new(ctx))
}

fn calls(e: &Explanation, agent: &str) -> u32 {
    e.llm.by_agent.get(agent).map_or(0, |t| t.calls)
}

#[tokio::test]
async fn a_self_contained_question_is_answered_from_the_graph_with_its_explanation() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new()) else {
        return;
    };
    let e = pipeline
        .ask("Who directed Forrest Gump?", Mode::SingleTurn, &[])
        .await
        .unwrap();

    assert_eq!(e.outcome, Outcome::Answered);
    assert_eq!(e.text, "Robert Zemeckis");
    assert_eq!(e.answers.len(), 1);
    let answer = &e.answers[0];
    assert_eq!(
        (answer.kind, answer.value.as_str()),
        (ValueKind::Iri, &*format!("{E}Robert_Zemeckis"))
    );
    assert_eq!(
        answer.provenance,
        vec![[
            format!("{E}Forrest_Gump"),
            format!("{R}directedBy"),
            format!("{E}Robert_Zemeckis")
        ]]
    );
    // The explanation: the entity spotted in the question and linked by its exact label, the
    // ranked relation paths, the chosen one and why, the SPARQL that ran.
    let qir = e.qir.as_ref().unwrap();
    assert_eq!(
        (qir.source, qir.entities.as_slice()),
        (QirSource::EntitySpotting, &["Forrest Gump".to_owned()][..])
    );
    assert_eq!(e.entities[0].method, LinkMethod::ExactLabel);
    assert_eq!(e.entities[0].iri.as_deref(), Some(&*format!("{E}Forrest_Gump")));
    assert_eq!(
        e.chosen_path().unwrap().text,
        "Forrest Gump → directed by",
        "{:#?}",
        e.paths
    );
    assert_eq!(e.path_choice.unwrap().reason, ChoiceReason::Margin);
    assert!(e.paths[0].score > e.paths[1].score);
    assert!(
        !e.paths
            .iter()
            .any(|p| p.text.contains("label") || p.text.contains("type")),
        "blacklisted predicates are never on a path: {:#?}",
        e.paths
    );
    let used: Vec<_> = e.sparql.iter().filter(|q| q.used).collect();
    assert_eq!(used.len(), 1);
    assert_eq!(used[0].reason, QueryReason::ChosenPath);
    assert!(used[0].sparql.contains("directedBy"), "{}", used[0].sparql);
    assert_eq!(e.sparql.len(), 1, "the chosen path answered at once");
    assert!(e.path_search.as_ref().unwrap().queries >= 2);
    assert_eq!(
        e.sparql_queries(),
        e.sparql.len() + e.path_search.as_ref().unwrap().queries
    );
    // No model call: the entity is a label in the question and one path fits clearly.
    assert_eq!(e.llm.calls, 0);
    let agents: Vec<&str> = e.timings.agents.iter().map(|t| t.agent.as_str()).collect();
    assert_eq!(
        agents,
        [
            "chat",
            "classifier",
            "qir",
            "matching",
            "path_search",
            "query_planning",
            "clarify",
            "reply"
        ]
    );
    assert!(e.timings.total_ms >= e.timings.linking_ms + e.timings.execution_ms);

    // The JSON the CLI prints has the documented fields.
    let json = serde_json::to_value(&e).unwrap();
    for field in [
        "answers",
        "resolved_question",
        "qir",
        "entities",
        "relations",
        "form",
        "paths",
        "path_choice",
        "path_search",
        "sparql",
        "timings",
        "llm",
    ] {
        assert!(json.get(field).is_some(), "{field} missing from {json}");
    }
}

#[tokio::test]
async fn yes_no_questions_run_ask() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new()) else {
        return;
    };
    let yes = pipeline
        .ask("Did Robert Zemeckis direct Cast Away?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(
        (yes.text.as_str(), yes.answer_kind),
        ("Yes.", Some(QuestionKind::Boolean))
    );
    assert!(yes.sparql[0].sparql.starts_with("ASK"), "{}", yes.sparql[0].sparql);
    assert_eq!(
        yes.answers[0].provenance,
        vec![[
            format!("{E}Cast_Away"),
            format!("{R}directedBy"),
            format!("{E}Robert_Zemeckis")
        ]]
    );
    assert_eq!(yes.llm.calls, 0);
    // No edge between them: the path the words name is asked, and its ASK is the answer.
    let no = pipeline
        .ask("Did Tom Cruise star in Big?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!((no.text.as_str(), no.answers[0].value.as_str()), ("No.", "false"));
    assert_eq!(no.sparql.len(), 1, "a false ASK is an answer: nothing else is tried");
    assert!(no.sparql[0].sparql.contains("starredActors"), "{}", no.sparql[0].sparql);
}

#[tokio::test]
async fn how_many_questions_count() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new()) else {
        return;
    };
    let e = pipeline
        .ask("How many films did Tom Hanks star in?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(e.answers.len(), 1);
    assert_eq!((e.answers[0].kind, e.text.as_str()), (ValueKind::Count, "3"));
    // The actor, not the tag "tom hanks" (same label): homonyms are ordered by degree.
    assert_eq!(e.entities[0].iri.as_deref(), Some(&*format!("{E}Tom_Hanks")));
    assert!(e.sparql[0].sparql.contains("COUNT(DISTINCT"), "{}", e.sparql[0].sparql);
}

#[tokio::test]
async fn multi_hop_questions_follow_a_two_hop_path() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new()) else {
        return;
    };
    let mut e = pipeline
        .ask("Who directed the films Tom Hanks starred in?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(e.display_answers(), vec!["Robert Zemeckis"]);
    assert_eq!(
        e.chosen_path().unwrap().text,
        "Tom Hanks → starred actors (of) → directed by",
        "{:#?}",
        e.paths
    );
    e.answers[0].provenance.sort();
    assert_eq!(
        e.answers[0].provenance,
        vec![
            [
                format!("{E}Cast_Away"),
                format!("{R}directedBy"),
                format!("{E}Robert_Zemeckis")
            ],
            [
                format!("{E}Cast_Away"),
                format!("{R}starredActors"),
                format!("{E}Tom_Hanks")
            ],
            [
                format!("{E}Forrest_Gump"),
                format!("{R}directedBy"),
                format!("{E}Robert_Zemeckis")
            ],
            [
                format!("{E}Forrest_Gump"),
                format!("{R}starredActors"),
                format!("{E}Tom_Hanks")
            ],
        ]
    );
}

#[tokio::test]
async fn an_empty_question_is_refused_without_asking_the_model() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new()) else {
        return;
    };
    for question in ["", "   ", "?!"] {
        let error = pipeline.ask(question, Mode::SingleTurn, &[]).await.unwrap_err();
        assert_eq!(error.kind(), "empty_question");
    }
}

#[tokio::test]
async fn an_unknown_entity_is_reported_not_answered() {
    let scripted = ScriptedChatModel::new().reply_when(
        "qir",
        "who directed titanic",
        &qir_reply(&["Titanic"], &[["Titanic", "directed by", "?answer"]], "list"),
    );
    let Some(pipeline) = pipeline(scripted) else { return };
    let e = pipeline
        .ask("Who directed Titanic?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(
        e.outcome,
        Outcome::UnknownEntity {
            mentions: vec!["Titanic".into()]
        }
    );
    assert!(
        e.text.contains("\"Titanic\"") && e.text.contains("could not find"),
        "{}",
        e.text
    );
    assert!(e.answers.is_empty() && e.sparql.is_empty());
    assert_eq!(e.entities[0].method, LinkMethod::NotFound);
    // No span is a label, but the question writes the name: it is searched as written, and the
    // model is not asked.
    assert_eq!(e.qir.as_ref().unwrap().source, QirSource::WrittenNames);
    assert_eq!(e.llm.calls, 0);
}

#[tokio::test]
async fn an_empty_result_says_the_graph_has_no_answer() {
    let Some(pipeline) = pipeline(ScriptedChatModel::new()) else {
        return;
    };
    let e = pipeline
        .ask("Which films star both Tom Hanks and Tom Cruise?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(e.entities.len(), 2);
    assert_eq!(e.outcome, Outcome::NoAnswer, "{:#?}", e.sparql);
    assert!(e.answers.is_empty());
    assert!(e.text.starts_with("The knowledge graph has no answer"), "{}", e.text);
    // Only joins ran, every one empty: a path from one of them alone answers another question.
    assert!(!e.sparql.is_empty());
    assert!(
        e.sparql
            .iter()
            .all(|q| q.reason == QueryReason::Join && q.rows == 0 && !q.used)
    );
}

#[tokio::test]
async fn an_ambiguous_mention_is_picked_by_the_model_after_a_malformed_answer() {
    // A misspelt name: no label holds all its words, so the model picks among the candidates.
    let scripted = ScriptedChatModel::new()
        .reply_when(
            "qir",
            "which films did tom cruse star in",
            &qir_reply(&["Tom Cruse"], &[["?film", "starred in", "Tom Cruse"]], "list"),
        )
        .replies_in_turn(
            "matching",
            "mention: tom cruse",
            &["Tom Cruise, I think", r#"{"value": "Tom Cruise"}"#],
        );
    let Some(pipeline) = pipeline(scripted) else { return };
    let e = pipeline
        .ask("Which films did Tom Cruse star in?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(e.entities[0].method, LinkMethod::Model);
    assert_eq!(e.entities[0].iri.as_deref(), Some(&*format!("{E}Tom_Cruise")));
    assert!(e.entities[0].top_candidates.contains(&"Tom Hanks".to_owned()));
    assert_eq!(calls(&e, "matching"), 2, "one malformed answer, one valid");
    assert_eq!(e.display_answers(), vec!["Top Gun"]);
}

#[tokio::test]
async fn a_name_written_in_part_is_the_most_connected_vertex_that_holds_it() {
    // "Tom" is a whole word of Tom Hanks and Tom Cruise: the graph's degrees decide, no model.
    let scripted = ScriptedChatModel::new().reply_when(
        "qir",
        "which films did tom star in",
        &qir_reply(&["Tom"], &[["?film", "starred in", "Tom"]], "list"),
    );
    let Some(pipeline) = pipeline(scripted) else { return };
    let e = pipeline
        .ask("Which films did Tom star in?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    let tom = &e.entities[0];
    assert!(
        matches!(tom.method, LinkMethod::Dominant | LinkMethod::MostConnected),
        "{tom:?}"
    );
    assert_eq!(tom.iri.as_deref(), Some(&*format!("{E}Tom_Hanks")));
    assert_eq!(calls(&e, "matching"), 0);
}

/// "Tom Hardy" is not in the graph; "Tom Hanks" and "Tom Cruise" match one of its words. The
/// model is offered "none of these" (no candidate has both words) and takes it: the entity is
/// unknown, said so, and nothing is answered for another Tom.
#[tokio::test]
async fn none_of_the_candidates_is_an_unknown_entity() {
    let scripted = ScriptedChatModel::new()
        .reply_when(
            "qir",
            "which films did tom hardy star in",
            &qir_reply(&["Tom Hardy"], &[["?film", "starred in", "Tom Hardy"]], "list"),
        )
        .reply_when("matching", "mention: tom hardy", r#"{"value": "none of these"}"#);
    let Some(pipeline) = pipeline(scripted) else { return };
    let e = pipeline
        .ask("Which films did Tom Hardy star in?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(e.entities[0].method, LinkMethod::NoneFits, "{:#?}", e.entities);
    assert!(e.entities[0].top_candidates.contains(&"Tom Hanks".to_owned()));
    assert_eq!(
        e.outcome,
        Outcome::UnknownEntity {
            mentions: vec!["Tom Hardy".into()]
        }
    );
    assert!(e.answers.is_empty() && e.sparql.is_empty());
    assert_eq!(calls(&e, "matching"), 1);
}

#[tokio::test]
async fn a_relation_nothing_resembles_is_not_run_when_nobody_selects() {
    // Goldfinger has one predicate (starred actors); "release year" does not resemble it.
    let scripted = ScriptedChatModel::new().reply_when(
        "qir",
        "when was goldfinger released",
        &qir_reply(&["Goldfinger"], &[["Goldfinger", "release year", "?year"]], "list"),
    );
    let Some(pipeline) = pipeline(scripted) else { return };
    let e = pipeline
        .ask("When was Goldfinger released?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(e.outcome, Outcome::NoQuery);
    assert!(e.answers.is_empty() && e.sparql.is_empty());
    assert!(e.text.contains("Goldfinger"), "{}", e.text);
}

#[tokio::test]
async fn a_three_turn_dialogue_resolves_a_pronoun_to_the_first_answer() {
    let scripted = ScriptedChatModel::new()
        .reply_when(
            "qir",
            "who directed forrest gump",
            &qir_reply(&["Forrest Gump"], &[["Forrest Gump", "directed by", "?answer"]], "list"),
        )
        .reply_when(
            "qir",
            "when was big released",
            &qir_reply(&["Big"], &[["Big", "release year", "?year"]], "list"),
        )
        .reply_when(
            "qir",
            "which films did robert zemeckis direct",
            &qir_reply(
                &["Robert Zemeckis"],
                &[["?film", "directed by", "Robert Zemeckis"]],
                "list",
            ),
        );
    let Some(fixture) = fixture() else { return };
    let (ctx, _) = context(fixture, scripted);
    let params = ctx.params.clone();
    let pipeline = Pipeline::new(ctx);
    let mut dialogue = Dialogue::default();
    let mut answers = Vec::new();
    for question in [
        "Who directed Forrest Gump?",
        "When was Big released?",
        "Which films did he direct?",
    ] {
        let e = pipeline.ask(question, Mode::MultiTurn, &dialogue.turns).await.unwrap();
        dialogue.record(&e, params.context_answers);
        answers.push(e);
    }
    assert_eq!(answers[0].text, "Robert Zemeckis");
    // The entities are labels in the questions and one path fits clearly: no QIR call.
    assert_eq!(answers[0].sparql[0].reason, QueryReason::ChosenPath);
    assert_eq!(answers[0].llm.calls, 0);
    assert_eq!(answers[1].text, "1988");
    // No pronoun: self-contained without a classifier call.
    assert_eq!(answers[1].llm.calls, 0);
    // "he": Big (turn 2) shares no predicate with Robert Zemeckis, turn 1's "who" answer, so it
    // is not a person; he is. No model call either.
    assert_eq!(answers[2].llm.calls, 0, "{:?}", answers[2].resolution);
    let third = &answers[2];
    assert_eq!(third.resolved_question, "Which films did Robert Zemeckis direct?");
    let mut films = third.display_answers();
    films.sort();
    assert_eq!(films.len(), 3, "{films:?}");
    assert_eq!(&films[..2], ["Cast Away", "Forrest Gump"]);
    assert_eq!(dialogue.turns[2].question, "Which films did Robert Zemeckis direct?");
    assert_eq!(dialogue.turns[0].answers, vec!["Robert Zemeckis"]);
}

#[tokio::test]
async fn when_the_model_never_gives_a_valid_qir_the_entity_is_spotted_in_the_question() {
    // The model keeps copying a name from its few-shot examples, which the validator rejects.
    let copied = qir_reply(&["Stephen King"], &[["?answer", "written by", "Stephen King"]], "list");
    let scripted = ScriptedChatModel::new().reply_when("qir", "", &copied);
    // Grounding off: the model is asked first, and spotting is its fallback.
    let Some(pipeline) = tuned(scripted, |p| p.ground_entities = false) else {
        return;
    };
    let e = pipeline
        .ask("Which films did Tom Cruise star in?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(e.llm.by_agent["qir"].calls, 3, "θ attempts first");
    let qir = e.qir.as_ref().unwrap();
    assert_eq!(qir.source, QirSource::EntitySpotting);
    assert_eq!(qir.entities, vec!["Tom Cruise"]);
    assert_eq!(qir.relations, vec!["films star"]);
    assert_eq!(e.display_answers(), vec!["Top Gun"]);
    // Nothing in the question is an entity, and grounding is off: the typed error stands.
    let scripted = ScriptedChatModel::new().reply_when("qir", "", &copied);
    let Some(off) = tuned(scripted, |p| p.ground_entities = false) else {
        return;
    };
    let error = off
        .ask("Which films did Meryl Streep star in?", Mode::SingleTurn, &[])
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "retries_exhausted");
    // With grounding on, a question with no label in it that writes a name is searched for it,
    // without the model: the reply says what could not be found.
    let scripted = ScriptedChatModel::new().reply_when("qir", "", &copied);
    let Some(again) = self::pipeline(scripted) else { return };
    let e = again
        .ask("Which films did Meryl Streep star in?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(
        e.outcome,
        Outcome::UnknownEntity {
            mentions: vec!["Meryl Streep".to_owned()]
        }
    );
    assert_eq!(e.llm.calls, 0);
    // One that writes no name goes to the model, which fails the same way: the reply says what
    // could not be read, with the model's attempts counted.
    let e = again
        .ask("which films did meryl streep star in?", Mode::SingleTurn, &[])
        .await
        .unwrap();
    assert_eq!(
        e.outcome,
        Outcome::UnknownEntity {
            mentions: vec!["films meryl streep star".to_owned()]
        }
    );
    assert_eq!(e.llm.by_agent["qir"].calls, 3);
}
