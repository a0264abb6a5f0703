//! What a backend remembers about its whole graph, as it remembers its schema profile: the
//! answers to queries that ask about the graph and not about one question ("does this relation
//! anywhere hold of something outside this class?"), and how many edges the vertices that
//! neighbourhoods fetched or counted have each way (so a frontier whose known vertices already
//! have more edges than a hop fetches, a hub among them, is known to be too big). Each is asked
//! of the graph once; later questions reuse it.
//!
//! Bounded: at most [`MAX_FACTS`] answers of at most [`MAX_FACT_ROWS`] rows each, and
//! [`MAX_EDGE_COUNTS`] vertices' counts. Past the bound a fact is asked again each time, which is
//! what a backend without memory does. Errors (a timeout) are never kept.

use crate::{GraphError, KnowledgeGraph, QueryResults, ReadQuery};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Answers kept at most.
pub const MAX_FACTS: usize = 4096;
/// Rows an answer may have to be kept (the facts asked are one row or a few).
pub const MAX_FACT_ROWS: usize = 64;
/// (vertex, direction) edge counts kept at most.
pub const MAX_EDGE_COUNTS: usize = 100_000;

/// A backend's memory of facts about its graph.
#[derive(Debug, Default)]
pub struct GraphFacts {
    /// Query text → its answer.
    answers: Mutex<HashMap<String, QueryResults>>,
    /// Per direction (incoming, outgoing), vertex → how many edges it has that way, for
    /// vertices some neighbourhood fetched whole or counted (two maps, so a frontier is looked
    /// up by its `&str`s).
    edges: Mutex<[HashMap<String, u64>; 2]>,
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

    /// Remembers how many edges each vertex has leaving it (`outgoing`) or entering it.
    pub fn note_edges<'a>(&self, outgoing: bool, counts: impl IntoIterator<Item = (&'a str, u64)>) {
        let mut known = locked(&self.edges);
        let total = known[0].len() + known[1].len();
        let way = &mut known[usize::from(outgoing)];
        let mut added = 0;
        for (vertex, edges) in counts {
            if let Some(count) = way.get_mut(vertex) {
                *count = edges;
            } else if total + added < MAX_EDGE_COUNTS {
                way.insert(vertex.to_owned(), edges);
                added += 1;
            }
        }
    }

    /// Whether the vertices of `frontier` (each once) whose edges that way are known have more
    /// than `limit` of them together: a query for all the frontier's edges would then return
    /// more than `limit`.
    pub fn known_over(&self, frontier: &[&str], outgoing: bool, limit: usize) -> bool {
        let known = locked(&self.edges);
        let way = &known[usize::from(outgoing)];
        let edges: u64 = frontier.iter().filter_map(|v| way.get(*v)).sum();
        edges > limit as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_edges_add_up_over_a_limit_in_their_own_direction() {
        let facts = GraphFacts::default();
        assert!(!facts.known_over(&["a"], true, 10));
        facts.note_edges(false, [("a", 50)]);
        assert!(facts.known_over(&["b", "a"], false, 10), "a hub alone");
        assert!(!facts.known_over(&["a"], false, 50), "50 edges fit a limit of 50");
        assert!(!facts.known_over(&["a"], true, 10), "its outgoing edges are not known");
        facts.note_edges(false, [("c", 8)]);
        assert!(facts.known_over(&["a", "c", "b"], false, 57), "58 together");
        assert!(!facts.known_over(&["c", "b"], false, 10), "b is not known, c has 8");
    }
}
