//! Candidate queries and their ranking: the relation paths that exist around the linked vertices
//! ([`search`], [`paths`]), how well each says what the question says ([`ranking`]), the SPARQL each becomes
//! ([`queries`]), and the values written in the question that constrain the answers' attributes
//! ([`values`]) or the qualifiers of a Wikibase's statements ([`statements`]), and the answers people rated or corrected, as examples for similar questions
//! ([`examples`]).

pub mod examples;
pub mod paths;
pub mod queries;
pub(crate) mod ranking;
pub(crate) mod search;
pub mod statements;
pub mod values;
