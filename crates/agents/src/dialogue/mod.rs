//! The dialogue: what a follow-up's pronouns and ellipses refer to ([`referents`]), and the
//! clarifying question asked when one label fits several vertices ([`clarification`]).

pub mod clarification;
pub mod referents;
