//! `AgentState`: the one value every agent reads and writes while a question goes through the
//! graph, and the routing decision each agent leaves in it.

use crate::qir::Qir;
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
    pub qir: Option<Qir>,
    #[serde(skip, default = "finish")]
    pub route: Route,
    pub timings: Vec<NodeTiming>,
    /// Why the pipeline stopped early, if it did (shown to the user).
    pub stopped: Option<String>,
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
            qir: None,
            route: Route::Finish,
            timings: Vec::new(),
            stopped: None,
        }
    }

    /// The question later agents should read: the rephrased one if any.
    pub fn working_question(&self) -> &str {
        self.resolved_question.as_deref().unwrap_or(&self.question)
    }
}
