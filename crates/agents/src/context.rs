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
    /// Previous turns shown to the classifier and rephraser (the context Cq).
    pub context_turns: usize,
    /// Candidate labels shown to the model when no exact label match decides a link.
    pub vertex_choices: usize,
    /// Predicates kept per QIR triple after ranking by embedding similarity (reference: 21).
    pub relations_per_triple: usize,
    /// Candidates still run, in rank order, when every query with a selected predicate is empty.
    pub fallback_queries: usize,
    /// When no model selects predicates (one candidate), a predicate whose label is less similar
    /// than this to the relation phrase is not run: the graph has no relation that fits. 0 disables.
    pub min_relation_score: f32,
    /// When the best candidate's predicates are all at least this similar to their phrases (the
    /// label says what the question says), it runs first without asking the model. Above 1 disables.
    pub relation_match_score: f32,
    /// Supporting triples kept per answer value.
    pub provenance_per_answer: usize,
    /// Translate non-English questions to English first (one extra model call per question).
    pub translate: bool,
    /// State the answer in a sentence (one extra model call; the values are always shown too).
    pub verbalize: bool,
}

impl Default for AgentParameters {
    fn default() -> Self {
        Self {
            theta: 3,
            context_answers: 100,
            vlimit: 600,
            query_num: 40,
            context_turns: 3,
            vertex_choices: 40,
            relations_per_triple: 21,
            fallback_queries: 3,
            min_relation_score: 0.2,
            relation_match_score: 0.9,
            provenance_per_answer: 3,
            translate: false,
            verbalize: false,
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
