//! Linking the question's words to the graph: the spans that are exactly vertex labels, values
//! written in the question, and names written in part ([`spotting`]). Choosing among the
//! candidates of one mention is the matching agent's (`agents/matching.rs`).

pub(crate) mod modifiers;
pub(crate) mod spotting;
