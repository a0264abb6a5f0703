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

use crate::candidates::ranking::PathRanker;
use crate::context::AgentContext;
use crate::error::AgentError;
use chatty_kg_graph::text::predicate_label;
use chatty_kg_graph::{Direction, Term};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

/// A vertex the question names, linked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    pub mention: String,
    pub iri: String,
    pub label: String,
    /// Found among the values of the asked class's instances, for a word modifying the class
    /// ("*Danish* films"), or written as the class's owner ("*Jordi Mallach's* packages"): the
    /// one hop from it to them is what the word says.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub modifies_class: bool,
}

/// One edge of a path, read from the anchor's side.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hop {
    pub predicate: String,
    pub label: String,
    /// The graph's edge runs away from the anchor (`?prev p ?next`); else towards it.
    pub forward: bool,
    /// Other predicates of the same label, the same way and the same kind of value (DBpedia's
    /// `dbo:location` and `dbp:location`): the question's words cannot tell them apart, so the
    /// hop is any of them ([`crate::candidates::queries::chain`]: `VALUES`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
}

impl Hop {
    /// The hop's predicate, then its [`Hop::also`] ones.
    pub fn predicates(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.predicate.as_str()).chain(self.also.iter().map(String::as_str))
    }
}

/// What the end of a path is, judged from the sample it reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndKind {
    Entity,
    /// Dates, date-times and years (typed, or a plain four-digit year).
    Temporal,
    Number,
    Text,
}

/// A path from an anchor through the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelationPath {
    /// Index into the question's anchors.
    pub anchor: usize,
    pub hops: Vec<Hop>,
    pub end: EndKind,
    /// How many distinct values the search saw at its end (a sample, not the answer's size).
    pub reached: usize,
    /// The values seen at its end (bounded).
    #[serde(skip)]
    pub endpoints: Vec<Term>,
}

impl RelationPath {
    /// "Tom Hanks → starred actors (of) → directed by → ?": the anchor, then each hop's label, an
    /// edge followed backwards marked with "(of)".
    pub fn verbalize(&self, anchor: &str) -> String {
        let mut text = anchor.to_owned();
        for hop in &self.hops {
            text.push_str(" → ");
            text.push_str(&hop.label);
            if !hop.forward {
                text.push_str(" (of)");
            }
        }
        text
    }
}

/// Limits of one question's search (configuration: `[agents]`).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchBudget {
    pub max_hops: usize,
    pub max_queries: usize,
    pub max_time: Duration,
    pub beam: usize,
    pub endpoints_per_path: usize,
    pub frontier: usize,
    pub edge_limit: usize,
}

/// What the search did, for the explanation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SearchReport {
    /// SPARQL queries run.
    pub queries: usize,
    /// Hops expanded (the deepest path found may be shorter).
    pub hops: usize,
    /// Paths found, before ranking cut them to the ones shown.
    pub paths_found: usize,
    /// Vertices expanded per hop.
    pub frontier_sizes: Vec<usize>,
    /// Some hop's neighbourhood was too large and was sampled.
    pub sampled: bool,
    pub elapsed_ms: f64,
    /// Why the search stopped before `max_hops`, when the budget cut it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cut: Option<String>,
}

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

pub(crate) fn iri_of(term: &Term) -> Option<&str> {
    match term {
        Term::NamedNode(n) => Some(n.as_str()),
        _ => None,
    }
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

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// The last segment of an IRI.
fn local_name(iri: &str) -> &str {
    iri.trim_end_matches(['/', '#'])
        .rsplit(['/', '#'])
        .next()
        .unwrap_or(iri)
}

/// A four-digit year ("1994"); vertices named like that are years too (`…/resource/1994`).
fn is_year(text: &str) -> bool {
    text.len() == 4 && text.chars().all(|c| c.is_ascii_digit()) && (text.starts_with('1') || text.starts_with('2'))
}

/// The kind most of the sample is.
fn end_kind(values: &[Term]) -> EndKind {
    let mut counts = [0usize; 4];
    for value in values {
        let kind = match value {
            Term::Literal(l) => literal_kind(l.datatype().as_str(), l.value()),
            Term::NamedNode(n) if is_year(local_name(n.as_str())) => EndKind::Temporal,
            _ => EndKind::Entity,
        };
        counts[kind as usize] += 1;
    }
    let best = (0..4).max_by_key(|&i| (counts[i], 4 - i)).unwrap_or(0);
    [EndKind::Entity, EndKind::Temporal, EndKind::Number, EndKind::Text][best]
}

/// A literal's kind from its datatype, or from its form when it is a plain string ("1994").
pub(crate) fn literal_kind(datatype: &str, value: &str) -> EndKind {
    if let Some(local) = datatype.strip_prefix(XSD) {
        match local {
            "date" | "dateTime" | "gYear" | "gYearMonth" | "dateTimeStamp" => return EndKind::Temporal,
            "integer" | "int" | "long" | "short" | "decimal" | "double" | "float" | "nonNegativeInteger"
            | "positiveInteger" | "unsignedInt" | "unsignedLong" => return EndKind::Number,
            _ => {}
        }
    }
    let v = value.trim();
    let digits = v.chars().filter(char::is_ascii_digit).count();
    if is_year(v) {
        EndKind::Temporal
    } else if v.len() == 10 && digits == 8 && v.as_bytes().get(4) == Some(&b'-') && v.as_bytes().get(7) == Some(&b'-') {
        EndKind::Temporal
    } else if !v.is_empty() && v.parse::<f64>().is_ok() {
        EndKind::Number
    } else {
        EndKind::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn year_vertices_are_temporal() {
        let node = |iri: &str| Term::NamedNode(chatty_kg_graph::NamedNode::new_unchecked(iri));
        assert_eq!(
            end_kind(&[node("http://e/entity/1971"), node("http://e/entity/2008")]),
            EndKind::Temporal
        );
        assert_eq!(end_kind(&[node("http://e/entity/Lima")]), EndKind::Entity);
        assert_eq!(end_kind(&[node("https://makg.org/entity/2101234567")]), EndKind::Entity);
    }

    #[test]
    fn literal_kinds() {
        assert_eq!(
            literal_kind("http://www.w3.org/2001/XMLSchema#string", "1994"),
            EndKind::Temporal
        );
        assert_eq!(
            literal_kind("http://www.w3.org/2001/XMLSchema#string", "1994-07-06"),
            EndKind::Temporal
        );
        assert_eq!(
            literal_kind("http://www.w3.org/2001/XMLSchema#gYear", "0800"),
            EndKind::Temporal
        );
        assert_eq!(
            literal_kind("http://www.w3.org/2001/XMLSchema#integer", "1994"),
            EndKind::Number
        );
        assert_eq!(
            literal_kind("http://www.w3.org/2001/XMLSchema#string", "7.5"),
            EndKind::Number
        );
        assert_eq!(
            literal_kind("http://www.w3.org/2001/XMLSchema#string", "English"),
            EndKind::Text
        );
    }

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
