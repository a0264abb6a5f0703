//! What can stop a question, typed so the chat agent can tell the user and eval can count it.

use chatty_kg_embed::EmbedError;
use chatty_kg_graph::GraphError;
use chatty_kg_llm::LlmError;
use chatty_kg_llm::prompts::PromptError;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the {agent} agent's model call failed: {source}")]
    Llm {
        agent: &'static str,
        #[source]
        source: LlmError,
    },
    #[error("the {agent} agent gave no valid answer in {attempts} attempts (last problem: {feedback})")]
    RetriesExhausted {
        agent: &'static str,
        attempts: u32,
        feedback: String,
    },
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("the question is empty")]
    EmptyQuestion,
    #[error("the {agent} agent ran without {what} (an agent before it did not run)")]
    MissingState { agent: &'static str, what: &'static str },
    #[error("a background task failed: {message}")]
    Worker { message: String },
    #[error("the agent graph has no node named {name:?}")]
    UnknownNode { name: &'static str },
    #[error("the agent graph has no edge for outcome {outcome:?} of node {node:?}")]
    NoEdge { node: &'static str, outcome: &'static str },
    #[error("the agent graph ran {max} steps without finishing (a routing loop)")]
    TooManySteps { max: usize },
}

impl AgentError {
    /// A stable short name for metrics and error taxonomies.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentError::Llm { .. } => "llm",
            AgentError::RetriesExhausted { .. } => "retries_exhausted",
            AgentError::Prompt(_) => "prompt",
            AgentError::Graph(_) => "graph",
            AgentError::Embed(_) => "embed",
            AgentError::EmptyQuestion => "empty_question",
            AgentError::MissingState { .. } => "missing_state",
            AgentError::Worker { .. } => "worker",
            AgentError::UnknownNode { .. } => "unknown_node",
            AgentError::NoEdge { .. } => "no_edge",
            AgentError::TooManySteps { .. } => "too_many_steps",
        }
    }
}
