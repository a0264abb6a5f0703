//! Knowledge-graph access for chatty-kg.
//!
//! One async trait, [`KnowledgeGraph`], with two backends: [`EmbeddedStore`] (Oxigraph on RocksDB,
//! with a persisted label index for entity search) and [`SparqlEndpoint`] (any SPARQL 1.1 endpoint
//! over HTTP). Both run only read-only queries ([`ReadQuery`]), search entities by label and list
//! the predicates around a vertex.
//!
//! ```no_run
//! # async fn demo() -> Result<(), chatty_kg_graph::GraphError> {
//! use chatty_kg_graph::{EmbeddedStore, GraphSettings, KnowledgeGraph};
//! let kg = EmbeddedStore::open("store".as_ref(), GraphSettings::default())?;
//! for candidate in kg.search_entities("tom hanks", 5).await? {
//!     println!("{}\t{}", candidate.iri, candidate.label);
//! }
//! # Ok(()) }
//! ```

mod error;
mod label_index;
mod load;
mod oxigraph;
mod query;
mod settings;
mod sparql_endpoint;
pub mod text;

pub use crate::error::GraphError;
pub use crate::label_index::{LabelEntry, LabelIndex};
pub use crate::load::{LoadReport, RdfFile};
pub use crate::oxigraph::EmbeddedStore;
pub use crate::query::{entity_search_query, predicates_around_query, predicates_between_query, ReadQuery};
pub use crate::settings::{
    EndpointAuth, EndpointSettings, GraphSettings, HttpMethod, ResultsFormat, SearchStrategy,
    RDFS_LABEL,
};
pub use crate::sparql_endpoint::SparqlEndpoint;
pub use ::oxigraph::model::{Literal, NamedNode, Term};

use async_trait::async_trait;
use serde::Serialize;

/// The rows of a SELECT, or the answer of an ASK.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryResults {
    Solutions(Solutions),
    Boolean(bool),
}

/// SELECT results: variable names (without `?`) and one row per solution, `None` for unbound.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Solutions {
    pub variables: Vec<String>,
    pub rows: Vec<Vec<Option<Term>>>,
    /// True when rows were dropped to respect [`GraphSettings::max_rows`].
    pub truncated: bool,
}

impl Solutions {
    /// The values of one variable, in row order, unbound ones skipped.
    pub fn column(&self, variable: &str) -> impl Iterator<Item = &Term> {
        let index = self.variables.iter().position(|v| v == variable);
        self.rows
            .iter()
            .filter_map(move |row| index.and_then(|i| row.get(i)).and_then(Option::as_ref))
    }
}

/// An entity found by label search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityCandidate {
    pub iri: String,
    pub label: String,
    /// Match quality from [`text::match_score`]; higher is better.
    pub score: f32,
}

/// Whether a predicate leaves the vertex (`<v> p ?o`) or arrives at it (`?s p <v>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Outgoing,
    Incoming,
}

/// A predicate next to a vertex, with the human label relation linking compares to phrases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PredicateLink {
    pub iri: String,
    pub label: String,
    pub direction: Direction,
}

/// Access to one knowledge graph. Every backend answers the same calls the same way; the backend
/// test suite (`crates/graph/tests/backend_suite.rs`) runs against each.
#[async_trait]
pub trait KnowledgeGraph: Send + Sync {
    /// A short description for logs and explanations (store path or endpoint URL).
    fn describe(&self) -> String;

    /// The settings this graph was opened with (label predicates, blacklist, limits).
    fn settings(&self) -> &GraphSettings;

    /// Runs a read-only query, bounded by the configured timeout and row limit.
    async fn query(&self, query: &ReadQuery) -> Result<QueryResults, GraphError>;

    /// Up to `limit` entities whose label matches `text`, best first.
    async fn search_entities(&self, text: &str, limit: usize) -> Result<Vec<EntityCandidate>, GraphError>;

    /// Parses and runs SPARQL text (refusing anything but SELECT/ASK).
    async fn query_text(&self, text: &str) -> Result<QueryResults, GraphError> {
        self.query(&ReadQuery::parse(text)?).await
    }

    /// Predicates leaving and entering `vertex` (at most `limit` each way), blacklist removed.
    async fn predicates_around(&self, vertex: &str, limit: usize) -> Result<Vec<PredicateLink>, GraphError> {
        let mut links = Vec::new();
        for (outgoing, direction) in [(true, Direction::Outgoing), (false, Direction::Incoming)] {
            // Ask for extra rows so blacklisted predicates do not eat the limit.
            let asked = limit.saturating_add(self.settings().predicate_blacklist.len());
            let results = self.query(&predicates_around_query(vertex, outgoing, asked)?).await?;
            links.extend(
                self.predicate_links(&results, direction)
                    .into_iter()
                    .take(limit),
            );
        }
        Ok(links)
    }

    /// Predicates on edges between two vertices, in either direction (blacklist removed).
    async fn predicates_between(&self, a: &str, b: &str) -> Result<Vec<PredicateLink>, GraphError> {
        let mut links = Vec::new();
        for (from, to, direction) in [(a, b, Direction::Outgoing), (b, a, Direction::Incoming)] {
            let results = self.query(&predicates_between_query(from, to)?).await?;
            links.extend(self.predicate_links(&results, direction));
        }
        Ok(links)
    }

    #[doc(hidden)]
    fn predicate_links(&self, results: &QueryResults, direction: Direction) -> Vec<PredicateLink> {
        let QueryResults::Solutions(solutions) = results else {
            return Vec::new();
        };
        solutions
            .column("p")
            .filter_map(|term| match term {
                Term::NamedNode(n) if !self.settings().is_blacklisted(n.as_str()) => Some(PredicateLink {
                    iri: n.as_str().to_owned(),
                    label: text::predicate_label(n.as_str()),
                    direction,
                }),
                _ => None,
            })
            .collect()
    }
}

/// Orders candidates best first: match tier, then popularity (degree, when known), then shorter
/// label, then IRI for determinism; keeps `limit`. Shared by every backend.
pub(crate) fn rank_candidates(
    query: &str,
    found: impl IntoIterator<Item = (String, String, u64)>,
    limit: usize,
) -> Vec<EntityCandidate> {
    let tokens = text::normalize_tokens(query);
    let mut scored: Vec<(f32, u64, EntityCandidate)> = found
        .into_iter()
        .filter_map(|(iri, label, degree)| {
            let score = text::match_score(&tokens, &label)?;
            Some((score, degree, EntityCandidate { iri, label, score }))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.label.len().cmp(&b.2.label.len()))
            .then(a.2.iri.cmp(&b.2.iri))
    });
    // One entry per IRI (an entity may have several matching labels; keep its best).
    let mut seen = std::collections::HashSet::new();
    scored
        .into_iter()
        .map(|(_, _, c)| c)
        .filter(|c| seen.insert(c.iri.clone()))
        .take(limit)
        .collect()
}
