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
    /// query_num: candidate relation paths kept after ranking (the planner's candidates).
    pub query_num: usize,
    /// Previous turns shown to the classifier and rephraser (the context Cq).
    pub context_turns: usize,
    /// Candidate labels shown to the model when no exact label match decides a link.
    pub vertex_choices: usize,
    /// Other paths still tried, in rank order, when the chosen path's query is empty.
    pub fallback_queries: usize,
    /// A path whose hops resemble the question's words less than this (mean similarity) is not
    /// run: the graph has no relation that fits. 0 disables.
    pub min_relation_score: f32,
    /// Build the QIR from spans of the question that are exactly vertex labels, without asking
    /// the model (it is asked only when no span is a label).
    pub ground_entities: bool,
    /// Longest relation path searched from a linked vertex.
    pub max_hops: usize,
    /// SPARQL queries the path search may run per question.
    pub path_queries: usize,
    /// Time the path search may take per question, in milliseconds.
    pub path_time_ms: u64,
    /// Paths expanded at each further hop (the best by hop support).
    pub path_beam: usize,
    /// Vertices or values kept per path to expand from.
    pub path_endpoints: usize,
    /// Vertices expanded per hop at most (one grouped query each way).
    pub path_frontier: usize,
    /// Edges fetched per hop and direction before a hub's neighbourhood is sampled instead.
    pub path_edge_limit: usize,
    /// When the best path's score beats the runner-up's by at least this, it is taken without
    /// asking the model; otherwise the model picks among the best `path_choices`. 0 never asks:
    /// measured on MetaQA dev questions (reports/margin-calibration.md), the default 0.5 B model's
    /// pick was worse than the ranking's first path at every margin, so it is not asked unless a
    /// stronger model is configured with a margin.
    pub path_margin: f32,
    /// Paths shown to the model when it picks (at most 5 is what a small model reads well).
    pub path_choices: usize,
    /// Time the QIR model may take (all its attempts) when no span of the question is a label,
    /// in milliseconds; past it the question is answered "I could not find …" instead. 8000: the
    /// default model's replies come in 3–8 s on a 2-core machine depending on its load, and
    /// budgets of 4 and 5 s cut right answers on the graphs named by IRIs (reports/README.md,
    /// "The QIR model's time"); lower it to bound latency where the model rarely helps.
    pub qir_time_ms: u64,
    /// Supporting triples kept per answer value.
    pub provenance_per_answer: usize,
    /// Translate non-English questions to English first (one extra model call per question).
    pub translate: bool,
    /// State the answer in a sentence (one extra model call; the values are always shown too).
    pub verbalize: bool,
    /// In a dialogue, ask which vertex is meant when the question fits several of one label
    /// equally (and none dominates the graph), instead of answering for the most connected.
    pub clarify: bool,
    /// How close (cosine of the masked questions' embeddings) a question must be to an example
    /// made from feedback for the example's query to be tried on its vertices. 0.8 was set
    /// before measuring, not tuned; reports/README.md ("Answers that learn from feedback") shows
    /// what it gains and loses on the QALD-9 and LC-QuAD slices.
    pub example_similarity: f32,
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
            fallback_queries: 3,
            min_relation_score: 0.3,
            ground_entities: true,
            max_hops: 3,
            path_queries: 24,
            path_time_ms: 5000,
            path_beam: 12,
            path_endpoints: 24,
            path_frontier: 400,
            path_edge_limit: 5000,
            path_margin: 0.0,
            path_choices: 5,
            qir_time_ms: 8000,
            provenance_per_answer: 3,
            translate: false,
            verbalize: false,
            clarify: true,
            example_similarity: 0.8,
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
    /// Examples made from feedback on this graph (empty unless the server or an evaluation
    /// gives some).
    pub examples: Arc<crate::example_book::ExampleBook>,
}

impl AgentContext {
    /// The predicates, classes and property entities of the graph (from its schema profile), which
    /// are never an entity a question is about: a graph that labels its predicates ("date of birth") would
    /// otherwise have the relation's words taken for a vertex, and a class word ("character",
    /// "number") the class. Empty when there is no profile.
    pub(crate) async fn schema_terms(&self) -> std::collections::HashSet<String> {
        match self.kg.profile().await {
            Ok(profile) => profile
                .predicates
                .iter()
                .map(|p| p.iri.clone())
                .chain(profile.classes.iter().map(|c| c.iri.clone()))
                .chain(profile.conventions.properties.iter().map(|p| p.entity.clone()))
                .collect(),
            Err(_) => std::collections::HashSet::new(),
        }
    }

    /// The words of the graph's relations' labels, singular ("isbn", "doi", "url"): a run of
    /// them written in capitals after a determiner is the relation asked about, not a name ("the
    /// *ISBN* of …").
    pub(crate) async fn relation_words(&self) -> std::collections::HashSet<String> {
        match self.kg.profile().await {
            Ok(profile) => profile
                .predicates
                .iter()
                .filter(|p| !profile.conventions.is_schema_predicate(&p.iri))
                .flat_map(|p| chatty_kg_graph::text::normalize_tokens(&p.label))
                .map(|w| crate::words::singular(&w))
                .collect(),
            Err(_) => std::collections::HashSet::new(),
        }
    }

    /// The predicates of the graph (see [`Self::schema_terms`]).
    pub(crate) async fn predicates(&self) -> std::collections::HashSet<String> {
        match self.kg.profile().await {
            Ok(profile) => profile.predicates.iter().map(|p| p.iri.clone()).collect(),
            Err(error) => {
                tracing::warn!(%error, "no schema profile: labelled predicates may be taken for entities");
                std::collections::HashSet::new()
            }
        }
    }
}
