//! What a schema profile counts of the graph's predicates and classes, and the order counted
//! things are shown in: plain data, below the conventions and the profile that both read it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredicateProfile {
    pub iri: String,
    /// Its label in the graph, else one made from its IRI.
    pub label: String,
    pub triples: u64,
    /// Triples whose object is an IRI (the rest are literals or blank nodes).
    pub iri_objects: u64,
    /// Literal objects by datatype IRI (language-tagged strings under rdf:langString).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub datatypes: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassProfile {
    pub iri: String,
    pub label: String,
    pub instances: u64,
}

/// The highest counts first, ties in the order of their IRIs: the same order whichever way the
/// counts came (queries, whose ties come in the engine's order, or a load's counts).
pub(crate) fn most_first<T>(items: &mut [T], key: impl Fn(&T) -> (u64, &str)) {
    items.sort_by(|a, b| {
        let (a, b) = (key(a), key(b));
        b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1))
    });
}
