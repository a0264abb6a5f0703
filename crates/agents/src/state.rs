//! `AgentState`: the one value every agent reads and writes while a question goes through the
//! graph, and the routing decision each agent leaves in it.

use crate::answer::Answer;
use crate::path_ranking::ScoredPath;
use crate::path_search::{Anchor, RelationPath, SearchReport};
use crate::qir::Qir;
use crate::question_form::QuestionForm;
use crate::path_query::PredicateChoice;
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

/// Which ranked path the planner starts from, and why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PathChoice {
    /// Index into the ranked paths.
    pub index: usize,
    pub reason: ChoiceReason,
    /// Score of the best path minus the runner-up's.
    pub margin: Option<f32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChoiceReason {
    /// The only path that fits.
    Only,
    /// The best path won by at least the configured margin: no model call.
    Margin,
    /// The margin was small: the model picked among the best few.
    Model,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryReason {
    /// The chosen relation path (or, when its rows were cut, its answers alone).
    ChosenPath,
    /// Two anchors' paths joined at the answer.
    Join,
    /// The chosen path's query was empty: the next paths in rank order, within a budget.
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

/// The outcome of an agent that ended the question (an answer, or why there is none).
pub const STOPPED: &str = "stopped";

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
    /// The question's form (list, yes/no, count, superlative), from its words.
    pub form: Option<QuestionForm>,
    /// The linked vertices the path search started from.
    pub anchors: Vec<Anchor>,
    /// The best relation paths, ranked.
    pub paths: Vec<ScoredPath>,
    pub path_choice: Option<PathChoice>,
    pub path_search: Option<SearchReport>,
    /// Every path the search found (the planner's extensions for superlatives).
    #[serde(skip)]
    pub path_pool: Vec<RelationPath>,
    pub queries: Vec<ExecutedQuery>,
    /// Time spent waiting for the graph in the query-planning stage.
    pub execution_time: Duration,
    pub answer: Option<Answer>,
    pub outcome: Option<Outcome>,
    /// What the user is told (the chat agent writes it last).
    pub reply: Option<String>,
    pub timings: Vec<NodeTiming>,
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
            form: None,
            anchors: Vec::new(),
            paths: Vec::new(),
            path_choice: None,
            path_search: None,
            path_pool: Vec::new(),
            queries: Vec::new(),
            execution_time: Duration::ZERO,
            answer: None,
            outcome: None,
            reply: None,
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

    /// Ends the question early (the chat agent tells the user why); returns [`STOPPED`], the
    /// outcome the graph routes to the reply.
    pub fn stop(&mut self, outcome: Outcome) -> &'static str {
        self.outcome = Some(outcome);
        STOPPED
    }
}
