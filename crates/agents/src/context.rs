//! What agents share besides the state: the graph, the models, the prompts and the parameters.

use chatty_kg_embed::Embedder;
use chatty_kg_graph::KnowledgeGraph;
use chatty_kg_llm::ChatModel;
use chatty_kg_llm::prompts::PromptLibrary;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The paper's parameters (θ, L, vlimit, query_num).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AgentParameters {
    /// θ: attempts of an agent whose LLM output fails validation.
    pub theta: u32,
    /// L: answers kept per previous turn in the dialogue context.
    pub context_answers: usize,
    /// vlimit: entity candidates fetched per mention.
    pub vlimit: usize,
    /// query_num: candidate queries kept before predicate selection.
    pub query_num: usize,
}

impl Default for AgentParameters {
    fn default() -> Self {
        Self {
            theta: 3,
            context_answers: 100,
            vlimit: 600,
            query_num: 40,
        }
    }
}

#[derive(Clone)]
pub struct AgentContext {
    pub kg: Arc<dyn KnowledgeGraph>,
    /// Wrapped per question in an accounting model, so its calls are counted.
    pub llm: Arc<dyn ChatModel>,
    pub embedder: Arc<dyn Embedder>,
    pub prompts: Arc<PromptLibrary>,
    pub params: AgentParameters,
}
