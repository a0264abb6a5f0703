//! `AgentState`: the one value every agent reads and writes while a question goes through the
//! graph, and the routing decision each agent leaves in it.

use crate::answer::Answer;
use crate::qir::Qir;
use crate::query_generator::PredicateChoice;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One previous turn of the dialogue, as the context Cq shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub question: String,
    /// Answers as text, already truncated to L items.
    pub answers: Vec<String>,
}

/// Whether the question may depend on earlier turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every question stands alone (benchmarks, `ask`).
    #[default]
    SingleTurn,
    /// A dialogue: questions may refer back (`chat`, sessions).
    MultiTurn,
}

/// The Classifier's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Classification {
    SelfContained,
    Dependent,
}

/// Where the graph goes after the current node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Route {
    To(&'static str),
    Finish,
}

/// How long one node took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeTiming {
    pub node: String,
    pub elapsed: Duration,
}

/// How an entity mention was linked to a vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkMethod {
    /// Exactly one vertex has the mention as its label (up to case); homonyms go by degree.
    ExactLabel,
    /// Search found a single candidate.
    OnlyCandidate,
    /// The model chose among the candidate labels.
    Model,
    /// Nothing in the graph matches the mention.
    NotFound,
}

/// Entity linking of one mention (paper: entity retriever + vertex selection + vertex validator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityLink {
    pub mention: String,
    pub iri: Option<String>,
    pub label: Option<String>,
    pub method: LinkMethod,
    /// Candidates the retriever found (at most vlimit).
    pub candidates: usize,
    /// The best few candidate labels, as shown (or as they would have been shown) to the model.
    pub top_candidates: Vec<String>,
}

/// Relation linking of one QIR triple: its phrase and the ranked predicates around its vertices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelationLink {
    /// Index of the QIR triple.
    pub triple: usize,
    pub phrase: String,
    pub predicates: Vec<PredicateChoice>,
}

/// One SPARQL query the planner ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutedQuery {
    pub sparql: String,
    /// Predicate IRIs the query uses.
    pub predicates: Vec<String>,
    /// Why it ran: its predicates were selected, it was the only candidate, or a fallback.
    pub reason: QueryReason,
    /// Result rows (1 for ASK and COUNT).
    pub rows: usize,
    /// Whether its result became (part of) the answer.
    pub used: bool,
    pub elapsed_ms: f64,
    /// The error, when the endpoint refused or timed out (the planner goes on with the others).
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryReason {
    /// No choice to make: a single candidate, or every candidate uses the same predicates.
    Forced,
    /// Its predicates are named as the question's relation phrases: it runs first, unasked.
    LabelMatch,
    /// It uses a predicate the model selected.
    Selected,
    /// Every selected query was empty; candidates are tried best first, within a budget.
    Fallback,
}

/// How a question ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The graph answered.
    Answered,
    /// Queries ran but the graph holds no answer.
    NoAnswer,
    /// Some entity named in the question is not in the graph.
    UnknownEntity { mentions: Vec<String> },
    /// The entities were found, but no predicate around them yields a query.
    NoQuery,
}

/// The shared state of one question.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentState {
    pub mode: Mode,
    /// The question as the user asked it.
    pub question: String,
    /// The context Cq: previous turns, answers truncated to L.
    pub history: Vec<Turn>,
    pub classification: Option<Classification>,
    /// The standalone question the later agents work on.
    pub resolved_question: Option<String>,
    /// The detected language of the question, when translation is on.
    pub language: Option<String>,
    /// The question in English, when it was translated.
    pub translated_question: Option<String>,
    pub qir: Option<Qir>,
    pub entities: Vec<EntityLink>,
    pub relations: Vec<RelationLink>,
    pub queries: Vec<ExecutedQuery>,
    /// Time spent waiting for the graph in the query-planning stage.
    pub execution_time: Duration,
    pub answer: Option<Answer>,
    pub outcome: Option<Outcome>,
    /// What the user is told (the chat agent writes it last).
    pub reply: Option<String>,
    #[serde(skip, default = "finish")]
    pub route: Route,
    pub timings: Vec<NodeTiming>,
}

fn finish() -> Route {
    Route::Finish
}

impl AgentState {
    pub fn new(question: impl Into<String>, mode: Mode, history: Vec<Turn>) -> Self {
        Self {
            mode,
            question: question.into(),
            history,
            classification: None,
            resolved_question: None,
            language: None,
            translated_question: None,
            qir: None,
            entities: Vec::new(),
            relations: Vec::new(),
            queries: Vec::new(),
            execution_time: Duration::ZERO,
            answer: None,
            outcome: None,
            reply: None,
            route: Route::Finish,
            timings: Vec::new(),
        }
    }

    /// The question later agents should read: the rephrased one, else the translated one, else
    /// the question as asked.
    pub fn working_question(&self) -> &str {
        self.resolved_question
            .as_deref()
            .or(self.translated_question.as_deref())
            .unwrap_or(&self.question)
    }

    /// The QIR, which `agent` needs (an error if the QIR agent has not run).
    pub fn require_qir(&self, agent: &'static str) -> Result<crate::qir::Qir, crate::error::AgentError> {
        self.qir
            .clone()
            .ok_or(crate::error::AgentError::MissingState { agent, what: "a QIR" })
    }

    /// Entity mentions with the vertex each was linked to.
    pub fn linked_vertices(&self) -> std::collections::HashMap<String, String> {
        self.entities
            .iter()
            .filter_map(|l| Some((l.mention.clone(), l.iri.clone()?)))
            .collect()
    }

    /// The user's question in English: translated if it was, else as asked.
    pub fn english_question(&self) -> &str {
        self.translated_question.as_deref().unwrap_or(&self.question)
    }

    /// Ends the question early: the chat agent tells the user why.
    pub fn stop(&mut self, outcome: Outcome) {
        self.outcome = Some(outcome);
        self.route = Route::To(crate::agents::chat::NAME);
    }
}
