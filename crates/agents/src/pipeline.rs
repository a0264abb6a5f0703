//! The whole question-answering graph, wired as in the paper's Listing 1, with the path search
//! between matching and query planning:
//!
//! ```text
//! chat ─► classifier ─┬─ self-contained ──────────► qir ─► matching ─► path_search ─► query_planning ─► clarify ─► reply ─► end
//!  │                  └─ dependent ─► rephraser ──┘ ▲  │      │ stopped      │ stopped                        ▲
//!  └─ resumed (the answer to a clarifying question) ┘  └──────┴──────────────┴────────────────────────────────┘
//!                                            (qir stops: nothing in the question could be read)
//! ```
//!
//! Agents return outcomes; [`Pipeline::standard_graph`] is the one place that says where each
//! outcome leads.
//!
//! [`Pipeline::ask`] runs one question with a fresh call ledger (so its LLM calls and tokens are
//! its own) and returns its [`Explanation`]. A [`Dialogue`] keeps the turns that later questions
//! see as context.

use crate::agents::{
    ChatAgent, ClarifyAgent, ClassifierAgent, MatchingAgent, PathSearchAgent, QirAgent, QueryPlanningAgent,
    RephraserAgent, chat, clarify, classifier, matching, path_search, qir, query_planning, rephraser,
};
use crate::answer::ValueKind;
use crate::context::AgentContext;
use crate::dialogue::referents::Member;
use crate::error::AgentError;
use crate::explanation::Explanation;
use crate::graph::{END, StateGraph};
use crate::qir::QuestionKind;
use crate::state::{AgentState, AnswerSet, Mode, STOPPED, SetRole, Turn, TurnEntity};
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

    /// The agents and where each outcome leads; replace an agent with `.with_node(...)` under
    /// the same name.
    pub fn standard_graph() -> StateGraph {
        StateGraph::new(chat::NAME)
            .with_node(ChatAgent::Context)
            .with_node(ClassifierAgent)
            .with_node(RephraserAgent)
            .with_node(QirAgent)
            .with_node(MatchingAgent)
            .with_node(PathSearchAgent)
            .with_node(QueryPlanningAgent)
            .with_node(ClarifyAgent)
            .with_node(ChatAgent::Reply)
            .with_edge(chat::NAME, chat::READY, classifier::NAME)
            .with_edge(chat::NAME, chat::RESUMED, qir::NAME)
            .with_edge(classifier::NAME, classifier::SELF_CONTAINED, qir::NAME)
            .with_edge(classifier::NAME, classifier::DEPENDENT, rephraser::NAME)
            .with_edge(rephraser::NAME, rephraser::REPHRASED, qir::NAME)
            .with_edge(qir::NAME, qir::BUILT, matching::NAME)
            .with_edge(qir::NAME, STOPPED, chat::REPLY)
            .with_edge(matching::NAME, matching::LINKED, path_search::NAME)
            .with_edge(matching::NAME, STOPPED, chat::REPLY)
            .with_edge(path_search::NAME, path_search::CHOSEN, query_planning::NAME)
            .with_edge(path_search::NAME, path_search::OVER_CLASS, query_planning::NAME)
            .with_edge(path_search::NAME, path_search::BY_EXAMPLE, query_planning::NAME)
            .with_edge(path_search::NAME, STOPPED, chat::REPLY)
            .with_edge(path_search::NAME, path_search::RELINKED, path_search::NAME)
            .with_edge(query_planning::NAME, STOPPED, clarify::NAME)
            .with_edge(query_planning::NAME, query_planning::RELINKED, path_search::NAME)
            .with_edge(clarify::NAME, clarify::CHECKED, chat::REPLY)
            .with_edge(chat::REPLY, chat::REPLIED, END)
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
        self.ask_observed_by(question, mode, history, None, observer).await
    }

    /// Like [`ask_observed`](Self::ask_observed) for the API key whose hash is `asker` (`None`:
    /// anonymous): the examples its feedback made are used, besides the shared ones.
    pub async fn ask_observed_by(
        &self,
        question: &str,
        mode: Mode,
        history: &[Turn],
        asker: Option<&str>,
        observer: &mut (dyn FnMut(&str, &AgentState) + Send),
    ) -> Result<Explanation, AgentError> {
        self.ask_accounted(question, mode, history, asker, observer)
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
        asker: Option<&str>,
        observer: &mut (dyn FnMut(&str, &AgentState) + Send),
    ) -> Result<Explanation, Unanswered> {
        let started = Instant::now();
        let ledger = CallLedger::new();
        let mut state = AgentState::new(question.trim(), mode, history.to_vec());
        state.asker = asker.map(str::to_owned);
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
    /// resolved), up to `max_answers` answer values (L) as text and with their IRIs, and the
    /// entities it linked (what a follow-up can refer to).
    pub fn answered(explanation: &Explanation, max_answers: usize) -> Self {
        let listed = matches!(explanation.answer_kind, Some(QuestionKind::List) | None);
        let values: Vec<Member> = if listed {
            explanation
                .answers
                .iter()
                .filter(|a| matches!(a.kind, ValueKind::Iri | ValueKind::Literal))
                .take(max_answers)
                .map(Member::of)
                .collect()
        } else {
            Vec::new()
        };
        // A list put in one member's place ("when were they released") was not about that member.
        let representative = match &explanation.answer_set {
            Some(AnswerSet {
                role: SetRole::Anchor { representative },
                ..
            }) => Some(representative.as_str()),
            _ => None,
        };
        let mut entities: Vec<TurnEntity> = Vec::new();
        for link in &explanation.entities {
            if let (Some(iri), Some(label)) = (&link.iri, &link.label)
                && !entities.iter().any(|e| &e.iri == iri)
                && representative != Some(iri.as_str())
            {
                entities.push(TurnEntity {
                    mention: link.mention.clone(),
                    iri: iri.clone(),
                    label: label.clone(),
                });
            }
        }
        Turn {
            question: explanation.resolved_question.clone(),
            answers: explanation.display_answers().into_iter().take(max_answers).collect(),
            entities,
            total: if listed { explanation.answers.len() } else { 0 },
            values,
            clarification: match &explanation.outcome {
                crate::state::Outcome::Clarify { clarification } => Some(clarification.clone()),
                _ => None,
            },
            // A filter over an earlier answer: what "them" meant in this turn (a list put in one
            // member's place was about that list, and its members are this turn's referents).
            answer_set: explanation.answer_set.clone().filter(AnswerSet::restricts),
            query: explanation
                .sparql
                .iter()
                .find(|q| q.used && q.error.is_none())
                .map(|q| q.sparql.clone()),
        }
    }
}
