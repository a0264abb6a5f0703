//! The agents one by one and the graph runtime, with the scripted model (deterministic), the real
//! embedded store (tests/fixtures/movies.ttl) and the real embedding model.
//!
//! Needs all-MiniLM-L6-v2 (`chatty-kg models fetch`); without it these tests skip with a message,
//! unless `CHATTY_KG_REQUIRE_MODELS=1` (CI) turns the skip into a failure.

use chatty_kg_agents::agents::{ClassifierAgent, QirAgent, RephraserAgent};
use chatty_kg_agents::referents::Member;
use chatty_kg_agents::state::TurnEntity;
use chatty_kg_agents::{
    Agent, AgentContext, AgentError, AgentState, Classification, END, Mode, QirTerm, QuestionKind, StateGraph, Turn,
};
use chatty_kg_llm::accounting::{AccountedModel, CallLedger};
use chatty_kg_llm::scripted::ScriptedChatModel;
use std::sync::Arc;

mod common;
use common::{context, fixture};

fn dialogue() -> Vec<Turn> {
    vec![Turn::text("Who directed Alien?", vec!["Ridley Scott".into()])]
}

const QIR_DIRECTOR: &str = r#"{"entities": ["Alien"], "unknowns": ["?answer"], "relations": ["directed by"], "triples": [["Alien", "directed by", "?answer"]], "type": "list", "order": null}"#;

#[tokio::test]
async fn classifier_asks_nothing_without_history() {
    let Some(fixture) = fixture() else { return };
    let (ctx, ledger) = context(fixture, ScriptedChatModel::new());
    let mut state = AgentState::new("Who directed Alien?", Mode::MultiTurn, vec![]);
    let outcome = ClassifierAgent.run(&mut state, &ctx).await.unwrap();
    assert_eq!(state.classification, Some(Classification::SelfContained));
    assert_eq!(outcome, "self-contained");
    assert_eq!(ledger.totals().calls, 0, "the answer is forced");
}

#[tokio::test]
async fn classifier_decides_from_the_words_without_a_model() {
    let Some(fixture) = fixture() else { return };
    let (ctx, ledger) = context(fixture, ScriptedChatModel::new());
    let mut state = AgentState::new("When was he born?", Mode::MultiTurn, dialogue());
    let outcome = ClassifierAgent.run(&mut state, &ctx).await.unwrap();
    assert_eq!(state.classification, Some(Classification::Dependent));
    assert_eq!(outcome, "dependent");
    assert_eq!(state.references[0].text, "he");
    let mut state = AgentState::new("Who directed Forrest Gump?", Mode::MultiTurn, dialogue());
    assert_eq!(ClassifierAgent.run(&mut state, &ctx).await.unwrap(), "self-contained");
    assert_eq!(ledger.totals().calls, 0);
}

#[tokio::test]
async fn malformed_json_is_retried_with_feedback_then_accepted() {
    let Some(fixture) = fixture() else { return };
    let scripted = Arc::new(ScriptedChatModel::new().replies_in_turn(
        "rephraser",
        "",
        &[
            "I think it is Alien",
            r#"{"referent": "Tom Hanks"}"#,
            r#"{"referent": "Alien"}"#,
        ],
    ));
    let ledger = CallLedger::new();
    let (mut ctx, _) = context(fixture, ScriptedChatModel::new());
    ctx.llm = Arc::new(AccountedModel::new(scripted.clone(), ledger.clone()));
    // Ridley Scott (answer) and Alien (named) both fit "they": the model chooses.
    let history = vec![Turn {
        entities: vec![TurnEntity {
            mention: "Alien".into(),
            iri: "http://example.org/entity/Alien".into(),
            label: "Alien".into(),
        }],
        values: vec![Member {
            value: "http://example.org/entity/Ridley_Scott".into(),
            label: "Ridley Scott".into(),
            iri: true,
            datatype: None,
        }],
        ..Turn::text("What is Alien?", vec!["Ridley Scott".into()])
    }];
    let mut state = AgentState::new("When were they born?", Mode::MultiTurn, history);
    ClassifierAgent.run(&mut state, &ctx).await.unwrap();
    RephraserAgent.run(&mut state, &ctx).await.unwrap();
    assert_eq!(state.resolved_question.as_deref(), Some("When were Alien born?"));
    assert_eq!(ledger.totals().calls, 3);
    let requests = scripted.requests();
    assert!(
        requests.iter().all(|r| r.schema.is_some()),
        "every call carries the JSON schema"
    );
    assert!(requests[2].last_user_message().contains("is not one of the options"));
}

#[tokio::test]
async fn retries_run_out_after_theta_attempts() {
    let Some(fixture) = fixture() else { return };
    let scripted = ScriptedChatModel::new().reply_when(
        "qir",
        "",
        r#"{"entities": [], "unknowns": [], "relations": [], "triples": [], "type": "list", "order": null}"#,
    );
    let (mut ctx, ledger) = context(fixture, scripted);
    // Grounding off: the model's failure is the agent's error (with grounding on, the question
    // is answered "I could not find …" instead: tests/typed_candidates.rs).
    ctx.params.ground_entities = false;
    let mut state = AgentState::new("Who directed Alien?", Mode::SingleTurn, vec![]);
    let error = QirAgent.run(&mut state, &ctx).await.unwrap_err();
    match &error {
        AgentError::RetriesExhausted {
            agent,
            attempts,
            feedback,
        } => {
            assert_eq!((*agent, *attempts), ("qir", 3));
            assert!(feedback.contains("no triples"), "{feedback}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(ledger.totals().calls, 3);
    assert!(state.qir.is_none());
}

#[tokio::test]
async fn qir_agent_feeds_the_validators_complaint_back() {
    let Some(fixture) = fixture() else { return };
    let no_variable = r#"{"entities": ["Alien"], "unknowns": [], "relations": ["directed by"], "triples": [["Alien", "directed by", "Ridley Scott"]], "type": "list", "order": null}"#;
    let scripted = Arc::new(ScriptedChatModel::new().replies_in_turn("qir", "", &[no_variable, QIR_DIRECTOR]));
    let (mut ctx, _) = context(fixture, ScriptedChatModel::new());
    ctx.llm = scripted.clone();
    // In lower case: a name written in capitals that no label is would be searched as written,
    // without the model.
    let mut state = AgentState::new("who directed alien?", Mode::SingleTurn, vec![]);
    let outcome = QirAgent.run(&mut state, &ctx).await.unwrap();
    let qir = state.qir.as_ref().unwrap();
    assert_eq!(qir.target(), Some("answer"));
    assert_eq!(qir.triples[0].subject, QirTerm::Entity("Alien".into()));
    assert_eq!(qir.kind, QuestionKind::List);
    assert_eq!(outcome, "built");
    let requests = scripted.requests();
    assert_eq!(requests.len(), 2);
    assert!(!requests[0].last_user_message().contains("rejected"));
    assert!(
        requests[1]
            .last_user_message()
            .contains("rejected: the question asks for something"),
        "{}",
        requests[1].last_user_message()
    );
    assert_eq!(requests[0].temperature, None, "the first attempt decodes as configured");
    assert!(requests[1].temperature.is_some_and(|t| t > 0.0), "a retry samples");
}

/// Stands in for the matching agent, to end the run after the QIR.
struct End;

#[async_trait::async_trait]
impl Agent for End {
    fn name(&self) -> &'static str {
        "matching"
    }
    async fn run(&self, _: &mut AgentState, _: &AgentContext) -> Result<&'static str, AgentError> {
        Ok("done")
    }
}

#[tokio::test]
async fn a_dependent_question_is_rephrased_before_its_qir() {
    let Some(fixture) = fixture() else { return };
    let (ctx, ledger) = context(fixture, ScriptedChatModel::new());
    let graph = StateGraph::new("classifier")
        .with_node(ClassifierAgent)
        .with_node(RephraserAgent)
        .with_node(QirAgent)
        .with_node(End)
        .with_edge("classifier", "dependent", "rephraser")
        .with_edge("rephraser", "rephrased", "qir")
        .with_edge("qir", "built", "matching")
        .with_edge("matching", "done", END);
    let history = vec![Turn {
        values: vec![Member {
            value: "http://example.org/entity/Robert_Zemeckis".into(),
            label: "Robert Zemeckis".into(),
            iri: true,
            datatype: None,
        }],
        ..Turn::text("Who directed Forrest Gump?", vec!["Robert Zemeckis".into()])
    }];
    let mut state = AgentState::new("What else did he direct?", Mode::MultiTurn, history);
    graph.run(&mut state, &ctx).await.unwrap();
    assert_eq!(
        state.resolved_question.as_deref(),
        Some("What else did Robert Zemeckis direct?")
    );
    assert_eq!(state.qir.as_ref().unwrap().entities, vec!["Robert Zemeckis"]);
    let nodes: Vec<&str> = state.timings.iter().map(|t| t.node.as_str()).collect();
    assert_eq!(nodes, vec!["classifier", "rephraser", "qir", "matching"]);
    assert_eq!(ledger.totals().calls, 0, "one referent fits and the name is a label");
}

/// A node that routes back to itself.
struct Loop;

#[async_trait::async_trait]
impl Agent for Loop {
    fn name(&self) -> &'static str {
        "loop"
    }
    async fn run(&self, _: &mut AgentState, _: &AgentContext) -> Result<&'static str, AgentError> {
        Ok("again")
    }
}

#[tokio::test]
async fn the_runtime_stops_loops_unknown_nodes_and_missing_edges() {
    let Some(fixture) = fixture() else { return };
    let (ctx, _) = context(fixture, ScriptedChatModel::new());
    let mut state = AgentState::new("q", Mode::SingleTurn, vec![]);
    let looping = StateGraph::new("loop")
        .with_node(Loop)
        .with_edge("loop", "again", "loop")
        .with_max_steps(5);
    assert!(matches!(
        looping.run(&mut state, &ctx).await,
        Err(AgentError::TooManySteps { max: 5 })
    ));
    assert_eq!(state.timings.len(), 5);
    // An edge to "qir", which this graph lacks.
    let partial =
        StateGraph::new("classifier")
            .with_node(ClassifierAgent)
            .with_edge("classifier", "self-contained", "qir");
    let mut state = AgentState::new("Who directed Alien?", Mode::SingleTurn, vec![]);
    assert!(matches!(
        partial.run(&mut state, &ctx).await,
        Err(AgentError::UnknownNode { name: "qir" })
    ));
    // No edge at all for the classifier's outcome.
    let unwired = StateGraph::new("classifier").with_node(ClassifierAgent);
    let mut state = AgentState::new("Who directed Alien?", Mode::SingleTurn, vec![]);
    assert!(matches!(
        unwired.run(&mut state, &ctx).await,
        Err(AgentError::NoEdge {
            node: "classifier",
            outcome: "self-contained"
        })
    ));
}
