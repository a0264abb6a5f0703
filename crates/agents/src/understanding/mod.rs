//! Understanding the question: its form read from its own words (list, yes/no, count,
//! superlative, a value it compares with: [`form`]), the classes of the graph it names
//! ([`classes`]), and the question intermediate representation the QIR agent builds ([`qir`]).

pub mod classes;
pub mod form;
pub mod qir;
