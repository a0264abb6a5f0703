//! Understanding the question: its form read from its own words (list, yes/no, count,
//! superlative, a value it compares with: [`form`]), the classes of the graph it names
//! ([`classes`]) and the language it is written in ([`language`]). The question intermediate
//! representation the QIR agent builds is plain data one layer down ([`crate::qir`]), kept
//! reachable here under its old path.

pub mod classes;
pub mod form;
pub mod language;
pub use crate::qir;
