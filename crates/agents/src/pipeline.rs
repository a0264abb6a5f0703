//! The whole question-answering graph, wired as in the paper's Listing 1:
//!
//! ```text
//! chat ─► classifier ─┬─ self-contained ─────────────► qir ─► matching ─► query_planning ─► chat ─► end
//!                     └─ dependent ─► rephraser ─────┘          │ unknown entity ──────────► chat
//! ```
//!
//! [`Pipeline::ask`] runs one question with a fresh call ledger (so its LLM calls and tokens are
//! its own) and returns its [`Explanation`]. A [`Dialogue`] keeps the turns that later questions
//! see as context.

use crate::agents::{ChatAgent, ClassifierAgent, MatchingAgent, QirAgent, QueryPlanningAgent, RephraserAgent};
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::explanation::Explanation;
use crate::graph::StateGraph;
use crate::state::{AgentState, Mode, Turn};
use chatty_kg_llm::accounting::{AccountedModel, CallLedger};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

pub struct Pipeline {
    ctx: AgentContext,
    graph: StateGraph,
}

impl Pipeline {
    /// The standard graph over `ctx`.
    pub fn new(ctx: AgentContext) -> Self {
        Self {
            ctx,
            graph: Self::standard_graph(),
        }
    }

    /// The six agents; replace one with `.with_node(...)` under the same name.
    pub fn standard_graph() -> StateGraph {
        StateGraph::new(crate::agents::chat::NAME)
            .with_node(ChatAgent)
            .with_node(ClassifierAgent)
            .with_node(RephraserAgent)
            .with_node(QirAgent)
            .with_node(MatchingAgent)
            .with_node(QueryPlanningAgent)
    }

    /// Uses another graph (a swapped or added agent).
    pub fn with_graph(mut self, graph: StateGraph) -> Self {
        self.graph = graph;
        self
    }

    pub fn context(&self) -> &AgentContext {
        &self.ctx
    }

    /// Answers one question given the dialogue so far.
    pub async fn ask(&self, question: &str, mode: Mode, history: &[Turn]) -> Result<Explanation, AgentError> {
        self.ask_observed(question, mode, history, &mut |_, _| {}).await
    }

    /// Like [`ask`](Self::ask), calling `observer` after each agent with its name and the state.
    pub async fn ask_observed(
        &self,
        question: &str,
        mode: Mode,
        history: &[Turn],
        observer: &mut (dyn FnMut(&str, &AgentState) + Send),
    ) -> Result<Explanation, AgentError> {
        self.ask_accounted(question, mode, history, observer)
            .await
            .map_err(|unanswered| unanswered.error)
    }

    /// Like [`ask_observed`](Self::ask_observed), but a question that fails still reports what
    /// it cost: the timings and LLM usage of the agents that ran (an evaluation must count the
    /// calls of a question whose retries ran out, not only of the answered ones).
    pub async fn ask_accounted(
        &self,
        question: &str,
        mode: Mode,
        history: &[Turn],
        observer: &mut (dyn FnMut(&str, &AgentState) + Send),
    ) -> Result<Explanation, Unanswered> {
        let started = Instant::now();
        let ledger = CallLedger::new();
        let mut state = AgentState::new(question.trim(), mode, history.to_vec());
        let result = if question.chars().any(char::is_alphanumeric) {
            let ctx = AgentContext {
                llm: Arc::new(AccountedModel::new(self.ctx.llm.clone(), ledger.clone())),
                ..self.ctx.clone()
            };
            let span = tracing::info_span!("question", question = %state.question);
            self.graph
                .run_observed(&mut state, &ctx, observer)
                .instrument(span)
                .await
        } else {
            Err(AgentError::EmptyQuestion)
        };
        let explanation = Explanation::from_state(&state, &ledger, started.elapsed());
        match result {
            Ok(()) => Ok(explanation),
            Err(error) => Err(Unanswered {
                error,
                partial: Box::new(explanation),
            }),
        }
    }
}

/// A question the pipeline gave up on, with the explanation of the state it reached: its
/// timings and LLM usage count as much as an answered question's.
#[derive(Debug)]
pub struct Unanswered {
    pub error: AgentError,
    pub partial: Box<Explanation>,
}

/// The turns of one conversation, as later questions see them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dialogue {
    pub turns: Vec<Turn>,
}

impl Dialogue {
    /// Appends an answered question ([`Turn::answered`]).
    pub fn record(&mut self, explanation: &Explanation, max_answers: usize) {
        self.turns.push(Turn::answered(explanation, max_answers));
    }
}

impl Turn {
    /// What later questions see of an answered one: its standalone form (pronouns already
    /// resolved) and up to `max_answers` answer values (L).
    pub fn answered(explanation: &Explanation, max_answers: usize) -> Self {
        Turn {
            question: explanation.resolved_question.clone(),
            answers: explanation.display_answers().into_iter().take(max_answers).collect(),
        }
    }
}
