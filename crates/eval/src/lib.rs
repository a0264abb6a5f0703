//! Evaluation of chatty-kg on KGQA benchmarks: loaders for QALD-JSON, LC-QuAD 1.0, MetaQA,
//! PathQuestion and Chatty-Gen dialogues ([`loaders`]), and the metrics of the Chatty-KG paper
//! with both F1 definitions side by side ([`metrics`]).

pub mod dataset;
pub mod dialogues;
pub mod kb;
pub mod loaders;
pub mod metrics;
pub mod plots;
pub mod runner;
pub mod summary;
pub mod taxonomy;

pub use dataset::{DatasetError, DialogueTurn, Format, Item};
