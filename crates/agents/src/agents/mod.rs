//! The agents, one per file, named as in the paper.

pub mod chat;
pub mod clarify;
pub mod classifier;
pub mod matching;
pub mod path_search;
pub mod qir;
pub mod query_planning;
pub mod rephraser;

pub use chat::ChatAgent;
pub use clarify::ClarifyAgent;
pub use classifier::ClassifierAgent;
pub use matching::MatchingAgent;
pub use path_search::PathSearchAgent;
pub use qir::QirAgent;
pub use query_planning::QueryPlanningAgent;
pub use rephraser::RephraserAgent;
