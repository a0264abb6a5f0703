//! The Chatty-KG agents on a small state graph.
//!
//! Each agent lives in its own file under [`agents`] and is a node of a [`graph::StateGraph`]:
//! it reads and updates the one [`state::AgentState`] of the question and sets the route to the
//! next node. Agents with a validator in the paper ask their model through one helper that
//! validates and retries at most θ times ([`context::AgentParameters`]).
//!
//! Built so far: the runtime, the classifier, rephraser and QIR agent with the Triples Validator,
//! and the Query Generator. The matching, query-planning and chat agents come next.

pub mod agents;
mod ask;
pub mod context;
pub mod error;
pub mod graph;
pub mod qir;
pub mod query_generator;
pub mod state;

pub use context::{AgentContext, AgentParameters};
pub use error::AgentError;
pub use graph::{Agent, StateGraph};
pub use qir::{Qir, QirTerm, QirTriple, QuestionKind, TriplesValidator};
pub use query_generator::{CandidateQuery, PredicateChoice, QueryGenerator};
pub use state::{AgentState, Classification, Mode, Route, Turn};
