//! The Query Generator (paper §5.2.1): candidate SPARQL queries from a QIR, its linked vertices and
//! the ranked predicates of each triple.
//!
//! Each QIR triple becomes one triple pattern per candidate predicate, turned around when the
//! predicate runs the other way in the graph; patterns of one candidate join on shared variables
//! and entities. Candidates are enumerated best-first (lowest sum of predicate ranks) and cut at
//! `query_num`. Beyond the reference code: ASK for yes/no questions, COUNT(DISTINCT) for "how
//! many", and ORDER BY … LIMIT 1 for superlatives. Queries are spargebra algebra, never text.

use crate::qir::{Order, Qir, QirTerm, QirTriple, QuestionKind};
use chatty_kg_graph::{GraphError, ReadQuery, named_node, triple, var};
use serde::{Deserialize, Serialize};
use spargebra::Query;
use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression, GraphPattern, OrderExpression};
use spargebra::term::{TermPattern, TriplePattern};
use std::collections::HashMap;

/// A predicate proposed for one QIR triple.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredicateChoice {
    pub iri: String,
    pub label: String,
    /// Embedding similarity to the relation phrase.
    pub score: f32,
    /// The graph's edge runs from the QIR triple's subject to its object (else the reverse).
    pub forward: bool,
}

/// One candidate query and the predicates it uses.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateQuery {
    pub query: ReadQuery,
    /// Predicate IRIs, one per QIR triple.
    pub predicates: Vec<String>,
    /// The triple patterns of its WHERE clause: solutions instantiate them into provenance.
    pub patterns: Vec<TriplePattern>,
}

/// The variable a COUNT query binds.
pub const COUNT_VARIABLE: &str = "count";

pub struct QueryGenerator;

impl QueryGenerator {
    /// `vertices` maps entity mentions to IRIs; `predicates[i]` ranks choices for `qir.triples[i]`.
    pub fn generate(
        qir: &Qir,
        vertices: &HashMap<String, String>,
        predicates: &[Vec<PredicateChoice>],
        query_num: usize,
    ) -> Result<Vec<CandidateQuery>, GraphError> {
        if predicates.len() != qir.triples.len() || predicates.iter().any(Vec::is_empty) {
            return Ok(Vec::new());
        }
        let sizes: Vec<usize> = predicates.iter().map(Vec::len).collect();
        let mut out = Vec::new();
        for combination in best_first(&sizes, query_num) {
            let mut patterns = Vec::with_capacity(qir.triples.len());
            let mut used = Vec::with_capacity(qir.triples.len());
            for (i, &rank) in combination.iter().enumerate() {
                let choice = &predicates[i][rank];
                let Some(pattern) = triple_pattern(&qir.triples[i], choice, vertices)? else {
                    return Ok(Vec::new());
                };
                patterns.push(pattern);
                used.push(choice.iri.clone());
            }
            out.push(CandidateQuery {
                query: build(qir, patterns.clone())?,
                predicates: used,
                patterns,
            });
        }
        Ok(out)
    }
}

/// The pattern of one QIR triple with one predicate, turned around when the edge runs backwards;
/// `None` when an entity of the triple is not linked.
pub(crate) fn triple_pattern(
    qir_triple: &QirTriple,
    choice: &PredicateChoice,
    vertices: &HashMap<String, String>,
) -> Result<Option<TriplePattern>, GraphError> {
    let (Some(subject), Some(object)) = (
        term(&qir_triple.subject, vertices)?,
        term(&qir_triple.object, vertices)?,
    ) else {
        return Ok(None);
    };
    let predicate = named_node(&choice.iri)?;
    Ok(Some(if choice.forward {
        triple(subject, predicate, object)
    } else {
        triple(object, predicate, subject)
    }))
}

fn term(t: &QirTerm, vertices: &HashMap<String, String>) -> Result<Option<TermPattern>, GraphError> {
    Ok(match t {
        QirTerm::Variable(name) => Some(var(name).into()),
        QirTerm::Entity(mention) => match vertices.get(mention) {
            Some(iri) => Some(named_node(iri)?.into()),
            None => None,
        },
    })
}

fn build(qir: &Qir, patterns: Vec<TriplePattern>) -> Result<ReadQuery, GraphError> {
    let bgp = GraphPattern::Bgp { patterns };
    let target = qir.target().map(var);
    match (qir.kind, target) {
        // The parser's shape for ASK (a projection of nothing), which prints as plain `ASK { … }`.
        (QuestionKind::Boolean, _) | (_, None) => ReadQuery::new(Query::Ask {
            dataset: None,
            pattern: GraphPattern::Project {
                inner: Box::new(bgp),
                variables: vec![],
            },
            base_iri: None,
        }),
        // Prints as a sub-select (`SELECT ?count WHERE { {SELECT (COUNT(DISTINCT ?x) AS ?count) …} }`):
        // spargebra's printer does not fold aggregates back into the projection.
        (QuestionKind::Count, Some(target)) => ReadQuery::select(GraphPattern::Project {
            inner: Box::new(GraphPattern::Group {
                inner: Box::new(bgp),
                variables: vec![],
                aggregates: vec![(
                    var(COUNT_VARIABLE),
                    AggregateExpression::FunctionCall {
                        name: AggregateFunction::Count,
                        expr: Expression::Variable(target),
                        distinct: true,
                    },
                )],
            }),
            variables: vec![var(COUNT_VARIABLE)],
        }),
        (QuestionKind::List, Some(target)) => {
            let mut pattern = bgp;
            if let Some(order) = qir.order {
                // Superlatives order by the last unknown that is not the answer ("?year" of
                // "the latest film"), or by the answer itself, and keep the first.
                let key = qir
                    .unknowns
                    .iter()
                    .skip(1)
                    .last()
                    .map_or_else(|| target.clone(), |u| var(u));
                let key = Expression::Variable(key);
                pattern = GraphPattern::OrderBy {
                    inner: Box::new(pattern),
                    expression: vec![match order {
                        Order::Asc => OrderExpression::Asc(key),
                        Order::Desc => OrderExpression::Desc(key),
                    }],
                };
            }
            // Every unknown is projected, the answer first: the intermediate bindings are the
            // provenance of each answer ("Big" because Tom Hanks starred in it, released 1988).
            let mut variables = vec![target];
            variables.extend(qir.unknowns.iter().skip(1).map(|u| var(u)));
            let mut pattern = GraphPattern::Distinct {
                inner: Box::new(GraphPattern::Project {
                    inner: Box::new(pattern),
                    variables,
                }),
            };
            if qir.order.is_some() {
                pattern = GraphPattern::Slice {
                    inner: Box::new(pattern),
                    start: 0,
                    length: Some(1),
                };
            }
            ReadQuery::select(pattern)
        }
    }
}

/// Rank combinations (one index per list) by increasing sum of ranks, at most `limit` of them.
fn best_first(sizes: &[usize], limit: usize) -> Vec<Vec<usize>> {
    let max_sum: usize = sizes.iter().map(|s| s - 1).sum();
    let mut out = Vec::new();
    for sum in 0..=max_sum {
        let mut current = Vec::with_capacity(sizes.len());
        with_sum(sizes, sum, &mut current, &mut out, limit);
        if out.len() >= limit {
            break;
        }
    }
    out.truncate(limit);
    out
}

fn with_sum(sizes: &[usize], remaining: usize, current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>, limit: usize) {
    if out.len() >= limit {
        return;
    }
    let i = current.len();
    if i == sizes.len() {
        if remaining == 0 {
            out.push(current.clone());
        }
        return;
    }
    let rest: usize = sizes[i + 1..].iter().map(|s| s - 1).sum();
    for rank in 0..sizes[i].min(remaining + 1) {
        if remaining - rank > rest {
            continue;
        }
        current.push(rank);
        with_sum(sizes, remaining - rank, current, out, limit);
        current.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_first_enumerates_each_combination_once() {
        let all = best_first(&[3, 2, 4], 100);
        assert_eq!(all.len(), 24);
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 24);
        assert_eq!(all[0], vec![0, 0, 0]);
        let sums: Vec<usize> = all.iter().map(|c| c.iter().sum()).collect();
        assert!(sums.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(best_first(&[1], 10), vec![vec![0]]);
        assert_eq!(best_first(&[5, 5], 3).len(), 3);
    }
}
