//! The Chatty-KG agents on a small state graph.
//!
//! Each agent lives in its own file under [`agents`] and is a node of a [`graph::StateGraph`]:
//! it reads and updates the one [`state::AgentState`] of the question and returns an outcome;
//! `pipeline.rs` maps outcomes to the next node. Agents with a validator in the paper ask their model through one helper that
//! validates and retries at most θ times ([`context::AgentParameters`]).
//!
//! [`Pipeline`] wires the six agents as the paper does and returns an [`Explanation`] per question.
//!
//! The files stand in layers, each importing only its own and those below (`README.md` draws
//! them; `tests/layers.rs` checks them): plain data and words ([`words`], [`qir`], [`answer`],
//! [`context`], …), then [`understanding`], [`linking`], [`candidates`], [`dialogue`], the state
//! graph ([`state`], [`graph`]), the [`agents`], and the pipeline.

pub mod agents;
pub mod answer;
pub mod ask;
pub mod candidates;
pub mod context;
pub mod dialogue;
pub mod error;
pub mod example_book;
pub mod explanation;
pub mod generated;
pub mod graph;
pub mod linking;
pub mod pipeline;
pub mod qir;
pub(crate) mod similarity;
pub mod state;
pub mod understanding;
pub mod words;

// The paths the other crates have always used.
pub use dialogue::{clarification, referents};
pub use understanding::classes;

pub use answer::{Answer, AnswerValue, ValueKind};
pub use candidates::paths::{Anchor, EndKind, Hop, RelationPath, SearchReport};
pub use candidates::queries::{CandidateQuery, PredicateChoice};
pub use candidates::ranking::ScoredPath;
pub use candidates::values::{AttributeOf, AttributeReading};
pub use clarification::{Clarification, Clarified, ClarifyOption, Fact};
pub use classes::{ClassMention, ClassRole};
pub use context::{AgentContext, AgentParameters};
pub use error::AgentError;
pub use explanation::Explanation;
pub use generated::{GenerateOnly, GeneratedQuery};
pub use graph::{Agent, END, StateGraph};
pub use pipeline::{Dialogue, Pipeline, Unanswered};
pub use qir::{Qir, QirSource, QirTerm, QirTriple, QuestionKind, TriplesValidator};
pub use state::{
    AgentState, ChoiceReason, Classification, EntityLink, ExecutedQuery, LinkMethod, Mode, Outcome, PathChoice,
    QueryReason, RelationLink, Turn,
};
pub use understanding::form::{Comparison, Expectation, FormSource, QuestionForm, ValueConstraint};
