//! Relation-path search: the relation paths that exist in the graph around the linked vertices.
//!
//! Multi-hop questions are answered by *choosing* among paths that exist, not by trusting the
//! shape of the model's QIR (a 0.5 B model writes one triple for a three-hop question). From each
//! anchor (a linked vertex) the search expands hop by hop, both directions, up to `max_hops`:
//!
//! - one grouped query per hop and direction over the whole frontier (`VALUES ?v {…}`), never
//!   one per vertex (`KnowledgeGraph::neighbourhood`); a frontier with more edges than
//!   `path_edge_limit` (hubs) is sampled instead, one neighbour per vertex and predicate;
//! - each path keeps a bounded sample of the vertices and literals it reaches, so every path
//!   found reaches something, and the next hop expands from that sample;
//! - between hops only the `beam` best paths of each anchor that end at vertices (scored by the
//!   ranking's support and coverage) are expanded;
//! - a per-question budget of queries and time: when it cuts the search, [`SearchReport::cut`]
//!   says where, and the paths found so far are ranked as usual.
//!
//! Blacklisted predicates (type, label, sameAs, …) never appear: the graph layer drops them.

use crate::candidates::paths::{Anchor, EndKind, Hop, RelationPath, SearchBudget, SearchReport, end_kind, iri_of};
use crate::candidates::ranking::PathRanker;
use crate::context::AgentContext;
use crate::error::AgentError;
use chatty_kg_graph::text::predicate_label;
use chatty_kg_graph::{Direction, Term};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

/// Every path of up to `budget.max_hops` hops from the anchors that reaches at least one value.
pub(crate) async fn search(
    ctx: &AgentContext,
    anchors: &[Anchor],
    ranker: &mut PathRanker,
    budget: &SearchBudget,
) -> Result<(Vec<RelationPath>, SearchReport), AgentError> {
    let started = Instant::now();
    let mut report = SearchReport::default();
    let mut found: Vec<RelationPath> = Vec::new();
    // Paths to expand at the next hop; the empty path of each anchor first.
    let mut current: Vec<RelationPath> = anchors
        .iter()
        .enumerate()
        .map(|(i, a)| RelationPath {
            anchor: i,
            hops: Vec::new(),
            end: EndKind::Entity,
            reached: 1,
            endpoints: vec![Term::NamedNode(chatty_kg_graph::NamedNode::new_unchecked(
                a.iri.clone(),
            ))],
        })
        .collect();
    for hop in 1..=budget.max_hops {
        let expandable: Vec<&RelationPath> = current.iter().filter(|p| p.end == EndKind::Entity).collect();
        if expandable.is_empty() {
            break;
        }
        // A hop takes two queries, or four when both directions' neighbourhoods are sampled.
        if report.queries + 4 > budget.max_queries {
            report.cut = Some(format!(
                "the query budget ({} SPARQL queries) stopped the search before hop {hop}",
                budget.max_queries
            ));
            break;
        }
        if started.elapsed() >= budget.max_time {
            report.cut = Some(format!(
                "the time budget ({:.1} s) stopped the search before hop {hop}",
                budget.max_time.as_secs_f64()
            ));
            break;
        }
        let frontier = frontier(&expandable, budget);
        report.frontier_sizes.push(frontier.len());
        let refs: Vec<&str> = frontier.iter().map(String::as_str).collect();
        let mut fetched = Vec::new();
        for direction in [Direction::Outgoing, Direction::Incoming] {
            let remaining = budget.max_time.saturating_sub(started.elapsed());
            let neighbourhood = match tokio::time::timeout(
                remaining,
                ctx.kg.neighbourhood(&refs, direction, budget.edge_limit),
            )
            .await
            {
                Ok(result) => result?,
                Err(_) => {
                    report.cut = Some(format!(
                        "the time budget ({:.1} s) ran out during hop {hop}",
                        budget.max_time.as_secs_f64()
                    ));
                    break;
                }
            };
            report.queries += neighbourhood.queries;
            report.sampled |= neighbourhood.sampled;
            fetched.push(neighbourhood);
        }
        if report.cut.is_some() {
            break;
        }
        report.hops = hop;
        // Predicates are read by their own labels where the graph has them (one query a hop).
        let predicates: Vec<&str> = fetched
            .iter()
            .flat_map(|n| n.edges.iter().map(|e| e.predicate.as_str()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        // (A label lookup, like the answers' labels, is not counted among the search's queries.)
        let names = ctx.kg.predicate_names(&predicates).await?;
        // edges[vertex] = (hop, neighbour)
        let mut edges: HashMap<&str, Vec<(Hop, Term)>> = HashMap::new();
        for neighbourhood in &fetched {
            for edge in &neighbourhood.edges {
                let hop = Hop {
                    label: names
                        .get(&edge.predicate)
                        .cloned()
                        .unwrap_or_else(|| predicate_label(&edge.predicate)),
                    predicate: edge.predicate.clone(),
                    forward: edge.direction == Direction::Outgoing,
                    also: Vec::new(),
                };
                edges
                    .entry(edge.vertex.as_str())
                    .or_default()
                    .push((hop, edge.neighbour.clone()));
            }
        }
        let mut next: Vec<RelationPath> = Vec::new();
        for path in &expandable {
            // (hop) → values reached from this path's sample, in order, each once.
            let mut by_hop: BTreeMap<(String, bool), (Hop, Vec<Term>, HashSet<Term>)> = BTreeMap::new();
            for vertex in path.endpoints.iter().filter_map(iri_of) {
                for (hop, neighbour) in edges.get(vertex).into_iter().flatten() {
                    let entry = by_hop
                        .entry((hop.predicate.clone(), hop.forward))
                        .or_insert_with(|| (hop.clone(), Vec::new(), HashSet::new()));
                    if entry.2.insert(neighbour.clone()) {
                        entry.1.push(neighbour.clone());
                    }
                }
            }
            for (_, (hop, reached, _)) in by_hop {
                let mut hops = path.hops.clone();
                hops.push(hop);
                let count = reached.len();
                let mut endpoints = reached;
                endpoints.truncate(budget.endpoints_per_path.max(1));
                next.push(RelationPath {
                    anchor: path.anchor,
                    hops,
                    end: end_kind(&endpoints),
                    reached: count,
                    endpoints,
                });
            }
        }
        let labels: Vec<String> = next
            .iter()
            .filter_map(|p| p.hops.last())
            .map(|h| h.label.clone())
            .collect();
        ranker.learn_labels(ctx, &labels).await?;
        found.extend(next.iter().cloned());
        // Only the best paths of each anchor that end at vertices go on to the next hop.
        // Each path scored once, not at every comparison of the sort.
        let mut scored: Vec<(f32, RelationPath)> = next
            .into_iter()
            .filter(|p| p.end == EndKind::Entity)
            .map(|p| (ranker.partial(&p), p))
            .collect();
        // Ties go by the relations' names, as the ranking reads them, not by their IRIs: a graph
        // whose predicates are numbered (a Wikibase's P-ids) expands what one named by words does.
        let name = |p: &RelationPath| p.hops.iter().map(|h| (h.label.clone(), h.forward)).collect::<Vec<_>>();
        scored.sort_by(|(sa, a), (sb, b)| {
            a.anchor
                .cmp(&b.anchor)
                .then(sb.total_cmp(sa))
                .then_with(|| name(a).cmp(&name(b)))
        });
        let mut kept = vec![0usize; anchors.len()];
        current = scored
            .into_iter()
            .map(|(_, p)| p)
            .filter(|p| {
                kept[p.anchor] += 1;
                kept[p.anchor] <= budget.beam.max(1)
            })
            .collect();
    }
    report.paths_found = found.len();
    report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok((found, report))
}

/// The vertices to expand: each path's sample in turn (round robin), so every path gets its
/// share of a frontier bounded by `budget.frontier`.
fn frontier(paths: &[&RelationPath], budget: &SearchBudget) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let samples: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| p.endpoints.iter().filter_map(iri_of).collect())
        .collect();
    let longest = samples.iter().map(Vec::len).max().unwrap_or(0);
    'fill: for i in 0..longest {
        for sample in &samples {
            if let Some(iri) = sample.get(i)
                && seen.insert(*iri)
            {
                out.push((*iri).to_owned());
                if out.len() >= budget.frontier.max(1) {
                    break 'fill;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_frontier_shares_its_room_between_paths() {
        let term = |s: &str| Term::NamedNode(chatty_kg_graph::NamedNode::new_unchecked(format!("http://e/{s}")));
        let path = |names: &[&str]| RelationPath {
            anchor: 0,
            hops: Vec::new(),
            end: EndKind::Entity,
            reached: names.len(),
            endpoints: names.iter().map(|n| term(n)).collect(),
        };
        let (a, b) = (path(&["a1", "a2", "a3", "a4"]), path(&["b1", "a1"]));
        let budget = SearchBudget {
            max_hops: 3,
            max_queries: 10,
            max_time: Duration::from_secs(1),
            beam: 5,
            endpoints_per_path: 10,
            frontier: 4,
            edge_limit: 100,
        };
        assert_eq!(
            frontier(&[&a, &b], &budget),
            ["http://e/a1", "http://e/b1", "http://e/a2", "http://e/a3"]
        );
    }
}
