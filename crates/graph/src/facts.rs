//! What a backend remembers about its whole graph, as it remembers its schema profile: the
//! answers to queries that ask about the graph and not about one question ("does this relation
//! anywhere hold of something outside this class?"), and the vertices with more edges than a
//! neighbourhood fetches (hubs). Each is asked of the graph once; later questions reuse it.
//!
//! Bounded: at most [`MAX_FACTS`] answers of at most [`MAX_FACT_ROWS`] rows each, and
//! [`MAX_HUBS`] hubs. Past the bound a fact is asked again each time, which is what a backend
//! without memory does. Errors (a timeout) are never kept.

use crate::{GraphError, KnowledgeGraph, QueryResults, ReadQuery};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Answers kept at most.
pub const MAX_FACTS: usize = 4096;
/// Rows an answer may have to be kept (the facts asked are one row or a few).
pub const MAX_FACT_ROWS: usize = 64;
/// Hub vertices kept at most (per graph, both directions).
pub const MAX_HUBS: usize = 100_000;

/// A backend's memory of facts about its graph.
#[derive(Debug, Default)]
pub struct GraphFacts {
    /// Query text → its answer.
    answers: Mutex<HashMap<String, QueryResults>>,
    /// (vertex, outgoing) → how many distinct edges it has that way, for vertices with more
    /// edges than some neighbourhood fetched.
    hubs: Mutex<HashMap<(String, bool), u64>>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl GraphFacts {
    /// The answer to `query`, from memory or from the graph (and then remembered).
    pub async fn answer(
        &self,
        kg: &(impl KnowledgeGraph + ?Sized),
        query: &ReadQuery,
    ) -> Result<QueryResults, GraphError> {
        let key = query.to_string();
        if let Some(known) = locked(&self.answers).get(&key) {
            return Ok(known.clone());
        }
        let results = kg.query(query).await?;
        let small = match &results {
            QueryResults::Solutions(s) => s.rows.len() <= MAX_FACT_ROWS && !s.truncated,
            QueryResults::Boolean(_) => true,
        };
        let mut answers = locked(&self.answers);
        if small && answers.len() < MAX_FACTS {
            answers.insert(key, results.clone());
        }
        Ok(results)
    }

    /// Whether the answer to `query` is remembered.
    pub fn knows(&self, query: &ReadQuery) -> bool {
        locked(&self.answers).contains_key(&query.to_string())
    }

    /// Remembers that `vertex` has `edges` distinct edges leaving it (`outgoing`) or entering it.
    pub fn note_hub(&self, vertex: &str, outgoing: bool, edges: u64) {
        let mut hubs = locked(&self.hubs);
        if hubs.len() < MAX_HUBS || hubs.contains_key(&(vertex.to_owned(), outgoing)) {
            hubs.insert((vertex.to_owned(), outgoing), edges);
        }
    }

    /// Whether some vertex of `frontier` is known to have more than `limit` edges that way: a
    /// query for all the frontier's edges would then return more than `limit`.
    pub fn has_hub_over(&self, frontier: &[&str], outgoing: bool, limit: usize) -> bool {
        let hubs = locked(&self.hubs);
        if hubs.is_empty() {
            return false;
        }
        frontier.iter().any(|v| {
            hubs.get(&((*v).to_owned(), outgoing))
                .is_some_and(|&edges| edges > limit as u64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hub_counts_only_over_its_own_limit_and_direction() {
        let facts = GraphFacts::default();
        assert!(!facts.has_hub_over(&["a"], true, 10));
        facts.note_hub("a", false, 50);
        assert!(facts.has_hub_over(&["b", "a"], false, 10));
        assert!(!facts.has_hub_over(&["a"], false, 50), "50 edges fit a limit of 50");
        assert!(
            !facts.has_hub_over(&["a"], true, 10),
            "its outgoing edges are not known"
        );
        assert!(!facts.has_hub_over(&["b"], false, 10));
    }
}
