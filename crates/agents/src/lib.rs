//! The Chatty-KG agents on a small state graph.
//!
//! Each agent lives in its own file under [`agents`] and is a node of a [`graph::StateGraph`]:
//! it reads and updates the one [`state::AgentState`] of the question and sets the route to the
//! next node. Agents with a validator in the paper ask their model through one helper that
//! validates and retries at most θ times ([`context::AgentParameters`]).
//!
//! [`Pipeline`] wires the six agents as the paper does and returns an [`Explanation`] per question.

pub mod agents;
pub mod answer;
mod ask;
pub mod context;
mod entity_spotting;
pub mod error;
pub mod explanation;
pub mod graph;
pub mod pipeline;
pub mod qir;
pub mod query_generator;
mod relation_linking;
pub mod state;

pub use answer::{Answer, AnswerValue, ValueKind};
pub use context::{AgentContext, AgentParameters};
pub use error::AgentError;
pub use explanation::Explanation;
pub use graph::{Agent, StateGraph};
pub use pipeline::{Dialogue, Pipeline, Unanswered};
pub use qir::{Qir, QirSource, QirTerm, QirTriple, QuestionKind, TriplesValidator};
pub use query_generator::{CandidateQuery, PredicateChoice, QueryGenerator};
pub use state::{
    AgentState, Classification, EntityLink, ExecutedQuery, LinkMethod, Mode, Outcome, QueryReason, RelationLink, Route,
    Turn,
};
