//! The agents, one per file, named as in the paper.

pub mod classifier;
pub mod qir;
pub mod rephraser;

pub use classifier::ClassifierAgent;
pub use qir::QirAgent;
pub use rephraser::RephraserAgent;
