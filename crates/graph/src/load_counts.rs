//! The counts the schema profile needs, taken while a load parses its quads (into an empty store),
//! so that the profile does not scan the whole store again afterwards: per predicate its
//! triples, its IRI objects, its literals by datatype and by language, and the objects of
//! `rdf:type` (the classes, with their instances).
//!
//! On a graph of a million triples the profile's whole-graph queries took as long as the load
//! itself; answered from these counts, the profile's remaining queries are the small, bounded
//! ones. The counts are of the default graph's quads as parsed: a quad stated twice in the files
//! is counted twice (the load reports how many were duplicates). A graph with more distinct predicates or
//! classes than the bounds below stops counting them, and its profile is computed by the queries.

use crate::GraphError;
use oxigraph::model::{NamedNode, Quad, Term};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
/// More distinct predicates (or classes) than this, and the counts are given up: memory stays
/// bounded whatever the file holds, and such a graph is profiled by its queries.
const MAX_KEYS: usize = 50_000;
/// Distinct datatypes or languages kept per predicate.
const MAX_KINDS: usize = 256;
/// Keyed by a predicate or class once per quad: a fast hash.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// The file beside the store.
pub(crate) const COUNTS_FILE: &str = "counts.json";

/// One predicate's counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PredicateCounts {
    pub triples: u64,
    pub iri_objects: u64,
    /// Literal objects by datatype IRI (language-tagged strings under rdf:langString).
    pub datatypes: BTreeMap<String, u64>,
    /// Literal objects by language tag ("" for literals without one).
    pub languages: BTreeMap<String, u64>,
}

/// What a load counted; saved beside the store as `counts.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadCounts {
    /// The number of loads the store had when these were counted (they describe the store only
    /// while it has had no other load).
    pub loads: usize,
    pub predicates: BTreeMap<String, PredicateCounts>,
    /// Objects of `rdf:type`, with the number of triples typing something as each.
    pub types: BTreeMap<String, u64>,
}

/// Counts quads as they are parsed.
#[derive(Default)]
pub(crate) struct Counter {
    predicates: HashMap<NamedNode, PredicateCounts>,
    types: HashMap<NamedNode, u64>,
    /// Too many distinct predicates or classes: counting stopped.
    given_up: bool,
}

impl Counter {
    pub(crate) fn observe(&mut self, quad: &Quad) {
        // Queries read the default graph, and so does the profile (a quad of a named graph
        // from a .nq or .trig file is no answer's triple).
        if self.given_up || !quad.graph_name.is_default_graph() {
            return;
        }
        let new_predicate = !self.predicates.contains_key(&quad.predicate);
        let new_class = match &quad.object {
            Term::NamedNode(class) if quad.predicate.as_str() == RDF_TYPE => !self.types.contains_key(class),
            _ => false,
        };
        if (new_predicate && self.predicates.len() >= MAX_KEYS) || (new_class && self.types.len() >= MAX_KEYS) {
            self.give_up();
            return;
        }
        if new_predicate {
            self.predicates
                .insert(quad.predicate.clone(), PredicateCounts::default());
        }
        let Some(counts) = self.predicates.get_mut(&quad.predicate) else {
            return;
        };
        counts.triples += 1;
        match &quad.object {
            Term::NamedNode(object) => {
                counts.iri_objects += 1;
                if new_class {
                    self.types.insert(object.clone(), 1);
                } else if quad.predicate.as_str() == RDF_TYPE
                    && let Some(n) = self.types.get_mut(object)
                {
                    *n += 1;
                }
            }
            Term::Literal(literal) => {
                bump(&mut counts.datatypes, literal.datatype().as_str());
                bump(&mut counts.languages, literal.language().unwrap_or_default());
            }
            Term::BlankNode(_) => {}
        }
    }

    fn give_up(&mut self) {
        self.given_up = true;
        self.predicates = HashMap::default();
        self.types = HashMap::default();
    }

    /// The counts, or `None` when counting was given up.
    pub(crate) fn finish(self, loads: usize) -> Option<LoadCounts> {
        if self.given_up {
            return None;
        }
        Some(LoadCounts {
            loads,
            predicates: self
                .predicates
                .into_iter()
                .map(|(p, counts)| (p.into_string(), counts))
                .collect(),
            types: self.types.into_iter().map(|(c, n)| (c.into_string(), n)).collect(),
        })
    }
}

fn bump(map: &mut BTreeMap<String, u64>, key: &str) {
    if let Some(n) = map.get_mut(key) {
        *n += 1;
    } else if map.len() < MAX_KINDS {
        map.insert(key.to_owned(), 1);
    }
    // Past the bound, a rare datatype or language goes uncounted (its predicate's total still
    // counts it).
}

impl LoadCounts {
    /// The counts saved beside the store at `dir`, if they describe a store with `loads` loads.
    pub(crate) fn read(dir: &Path, loads: usize) -> Option<Self> {
        let bytes = std::fs::read(dir.join(COUNTS_FILE)).ok()?;
        let counts: Self = serde_json::from_slice(&bytes).ok()?;
        (counts.loads == loads).then_some(counts)
    }

    pub(crate) fn write(&self, dir: &Path) -> Result<(), GraphError> {
        let bytes = serde_json::to_vec(self).map_err(|e| GraphError::storage(dir, e))?;
        crate::lock::write_atomically(&dir.join(COUNTS_FILE), &bytes)
    }

    /// Removes the counts of an earlier load (a load into a store with data does not count).
    pub(crate) fn remove(dir: &Path) {
        let _ = std::fs::remove_file(dir.join(COUNTS_FILE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxigraph::model::{GraphName, Literal};

    fn quad(p: &str, o: Term) -> Quad {
        Quad::new(
            NamedNode::new_unchecked("http://e/s"),
            NamedNode::new_unchecked(p),
            o,
            GraphName::DefaultGraph,
        )
    }

    #[test]
    fn counts_predicates_datatypes_languages_and_classes() {
        let mut counter = Counter::default();
        let class = Term::NamedNode(NamedNode::new_unchecked("http://e/City"));
        counter.observe(&quad(RDF_TYPE, class.clone()));
        counter.observe(&quad(RDF_TYPE, class.clone()));
        counter.observe(&quad("http://www.w3.org/2000/01/rdf-schema#subClassOf", class));
        counter.observe(&quad(
            "http://e/label",
            Literal::new_language_tagged_literal_unchecked("Oslo", "en").into(),
        ));
        counter.observe(&quad("http://e/label", Literal::new_simple_literal("Oslo").into()));
        counter.observe(&quad("http://e/population", Literal::from(700_000).into()));
        let counts = counter.finish(1).unwrap();
        assert_eq!(counts.types.get("http://e/City"), Some(&2));
        assert_eq!(counts.predicates[RDF_TYPE].iri_objects, 2);
        assert_eq!(counts.predicates.len(), 4);
        let label = &counts.predicates["http://e/label"];
        assert_eq!((label.triples, label.iri_objects), (2, 0));
        assert_eq!(label.languages.get("en"), Some(&1));
        assert_eq!(label.languages.get(""), Some(&1));
        assert_eq!(
            label
                .datatypes
                .get("http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"),
            Some(&1)
        );
        let population = &counts.predicates["http://e/population"];
        assert_eq!(
            population.datatypes.get("http://www.w3.org/2001/XMLSchema#integer"),
            Some(&1)
        );
    }

    #[test]
    fn quads_of_named_graphs_are_not_counted() {
        let mut counter = Counter::default();
        let mut named = quad("http://e/label", Literal::new_simple_literal("x").into());
        named.graph_name = GraphName::NamedNode(NamedNode::new_unchecked("http://e/g"));
        counter.observe(&named);
        assert!(counter.finish(1).unwrap().predicates.is_empty());
    }

    #[test]
    fn too_many_predicates_give_up_counting() {
        let mut counter = Counter::default();
        for i in 0..=MAX_KEYS {
            counter.observe(&quad(
                &format!("http://e/p{i}"),
                Literal::new_simple_literal("x").into(),
            ));
        }
        assert!(counter.finish(1).is_none());
    }
}
