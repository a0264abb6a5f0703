//! Understanding the question: its form read from its own words (list, yes/no, count,
//! superlative, a value it compares with: [`form`]), the classes of the graph it names
//! ([`classes`]), the question intermediate representation the QIR agent builds ([`qir`]), and
//! the language it is written in ([`language`]).

pub mod classes;
pub mod form;
pub mod language;
pub mod qir;
