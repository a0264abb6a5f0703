//! The Chatty-KG agents on a small state graph.
//!
//! Each agent lives in its own file under [`agents`] and is a node of a [`graph::StateGraph`]:
//! it reads and updates the one [`state::AgentState`] of the question and returns an outcome;
//! `pipeline.rs` maps outcomes to the next node. Agents with a validator in the paper ask their model through one helper that
//! validates and retries at most θ times ([`context::AgentParameters`]).
//!
//! [`Pipeline`] wires the six agents as the paper does and returns an [`Explanation`] per question.

pub mod agents;
pub mod answer;
pub mod ask;
pub mod clarification;
pub mod classes;
pub mod context;
mod entity_spotting;
pub mod error;
pub mod explanation;
pub mod graph;
pub mod path_query;
mod path_ranking;
pub mod path_search;
pub mod pipeline;
pub mod qir;
pub mod question_form;
pub mod referents;
pub mod state;

pub use answer::{Answer, AnswerValue, ValueKind};
pub use clarification::{Clarification, Clarified, ClarifyOption, Fact};
pub use classes::{ClassMention, ClassRole};
pub use context::{AgentContext, AgentParameters};
pub use error::AgentError;
pub use explanation::Explanation;
pub use graph::{Agent, END, StateGraph};
pub use path_query::{CandidateQuery, PredicateChoice};
pub use path_ranking::ScoredPath;
pub use path_search::{Anchor, EndKind, Hop, RelationPath, SearchReport};
pub use pipeline::{Dialogue, Pipeline, Unanswered};
pub use qir::{Qir, QirSource, QirTerm, QirTriple, QuestionKind, TriplesValidator};
pub use question_form::{Expectation, FormSource, QuestionForm};
pub use state::{
    AgentState, ChoiceReason, Classification, EntityLink, ExecutedQuery, LinkMethod, Mode, Outcome, PathChoice,
    QueryReason, RelationLink, Turn,
};
