//! The Query Generator (paper §5.2.1): candidate SPARQL queries from a QIR, its linked vertices and
//! the ranked predicates of each triple.
//!
//! Each QIR triple becomes one triple pattern per candidate predicate, turned around when the
//! predicate runs the other way in the graph; patterns of one candidate join on shared variables
//! and entities. Candidates are enumerated best-first (lowest sum of predicate ranks) and cut at
//! `query_num`. Beyond the reference code: ASK for yes/no questions, COUNT(DISTINCT) for "how
//! many", and ORDER BY … LIMIT 1 for superlatives. Queries are spargebra algebra, never text.

use crate::qir::{Order, Qir, QirTerm, QuestionKind};
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
                let (qir_triple, choice) = (&qir.triples[i], &predicates[i][rank]);
                let Some(subject) = term(&qir_triple.subject, vertices)? else {
                    return Ok(Vec::new());
                };
                let Some(object) = term(&qir_triple.object, vertices)? else {
                    return Ok(Vec::new());
                };
                let predicate = named_node(&choice.iri)?;
                patterns.push(if choice.forward {
                    triple(subject, predicate, object)
                } else {
                    triple(object, predicate, subject)
                });
                used.push(choice.iri.clone());
            }
            out.push(CandidateQuery {
                query: build(qir, patterns)?,
                predicates: used,
            });
        }
        Ok(out)
    }
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
            let mut pattern = GraphPattern::Distinct {
                inner: Box::new(GraphPattern::Project {
                    inner: Box::new(pattern),
                    variables: vec![target],
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
    use crate::qir::{RawQir, TriplesValidator};

    const E: &str = "http://example.org/";

    fn qir(triples: &[[&str; 3]], kind: QuestionKind, order: Option<Order>, unknowns: &[&str]) -> Qir {
        TriplesValidator::validate(&RawQir {
            entities: vec![],
            unknowns: unknowns.iter().map(|u| (*u).to_owned()).collect(),
            relations: vec![],
            triples: triples
                .iter()
                .map(|t| t.iter().map(|s| (*s).to_owned()).collect())
                .collect(),
            kind: Some(kind),
            order,
        })
        .unwrap()
    }

    fn choice(local: &str, forward: bool) -> PredicateChoice {
        PredicateChoice {
            iri: format!("{E}{local}"),
            label: local.into(),
            score: 0.0,
            forward,
        }
    }

    fn vertices(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(m, local)| ((*m).to_owned(), format!("{E}{local}")))
            .collect()
    }

    fn text(q: &CandidateQuery) -> String {
        q.query.to_string()
    }

    /// The generated algebra is what the parser makes of `expected`, and its printed form parses.
    fn assert_query(q: &CandidateQuery, expected: &str) {
        let parse = |t: &str| ReadQuery::parse(t).unwrap_or_else(|e| panic!("{e}: {t}"));
        assert_eq!(q.query, parse(expected), "{} vs {expected}", text(q));
        parse(&text(q));
    }

    #[test]
    fn one_hop_respects_direction_and_projects_the_answer() {
        let q = qir(&[["Alien", "directed by", "?answer"]], QuestionKind::List, None, &[]);
        let v = vertices(&[("Alien", "Alien")]);
        let out = QueryGenerator::generate(
            &q,
            &v,
            &[vec![choice("directed_by", true), choice("directed", false)]],
            40,
        )
        .unwrap();
        assert_eq!(out.len(), 2);
        assert_query(
            &out[0],
            &format!("SELECT DISTINCT ?answer WHERE {{ <{E}Alien> <{E}directed_by> ?answer . }}"),
        );
        assert_query(
            &out[1],
            &format!("SELECT DISTINCT ?answer WHERE {{ ?answer <{E}directed> <{E}Alien> . }}"),
        );
        assert_eq!(out[1].predicates, vec![format!("{E}directed")]);
    }

    #[test]
    fn multi_hop_joins_on_the_shared_variable_best_first_and_truncates() {
        let q = qir(
            &[
                ["?movie", "written by", "Stephen King"],
                ["?movie", "directed by", "?answer"],
            ],
            QuestionKind::List,
            None,
            &["?answer", "?movie"],
        );
        let v = vertices(&[("Stephen King", "Stephen_King")]);
        let first = vec![
            choice("written_by", true),
            choice("author", true),
            choice("wrote", false),
        ];
        let second = vec![choice("directed_by", true), choice("director", true)];
        let out = QueryGenerator::generate(&q, &v, &[first.clone(), second.clone()], 40).unwrap();
        assert_eq!(out.len(), 6);
        assert_query(
            &out[0],
            &format!(
                "SELECT DISTINCT ?answer WHERE {{ ?movie <{E}written_by> <{E}Stephen_King> . ?movie <{E}directed_by> ?answer . }}"
            ),
        );
        let ranks: Vec<usize> = out
            .iter()
            .map(|c| {
                first.iter().position(|p| p.iri == c.predicates[0]).unwrap()
                    + second.iter().position(|p| p.iri == c.predicates[1]).unwrap()
            })
            .collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "best first: {ranks:?}");
        assert_eq!(
            QueryGenerator::generate(&q, &v, &[first, second], 4).unwrap().len(),
            4,
            "query_num"
        );
    }

    #[test]
    fn ask_count_and_superlative_forms() {
        let v = vertices(&[
            ("Alien", "Alien"),
            ("Ridley Scott", "Ridley_Scott"),
            ("Tom Hanks", "Tom_Hanks"),
        ]);
        let ask = qir(
            &[["Alien", "directed by", "Ridley Scott"]],
            QuestionKind::Boolean,
            None,
            &[],
        );
        let out = QueryGenerator::generate(&ask, &v, &[vec![choice("directed_by", true)]], 40).unwrap();
        assert!(out[0].query.is_ask());
        assert_query(
            &out[0],
            &format!("ASK {{ <{E}Alien> <{E}directed_by> <{E}Ridley_Scott> . }}"),
        );

        let count = qir(
            &[["?answer", "starred actors", "Tom Hanks"]],
            QuestionKind::Count,
            None,
            &[],
        );
        let out = QueryGenerator::generate(&count, &v, &[vec![choice("starred_actors", true)]], 40).unwrap();
        // The parser names the aggregate's inner variable at random, so compare the printed form.
        assert_eq!(
            text(&out[0]),
            format!(
                "SELECT ?count WHERE {{ {{SELECT (COUNT(DISTINCT ?answer) AS ?count) WHERE {{ ?answer <{E}starred_actors> <{E}Tom_Hanks> . }}}} }}"
            )
        );

        let latest = qir(
            &[
                ["?answer", "starred actors", "Tom Hanks"],
                ["?answer", "release year", "?year"],
            ],
            QuestionKind::List,
            Some(Order::Desc),
            &["?answer", "?year"],
        );
        let out = QueryGenerator::generate(
            &latest,
            &v,
            &[vec![choice("starred_actors", true)], vec![choice("release_year", true)]],
            40,
        )
        .unwrap();
        let sparql = text(&out[0]);
        assert!(
            sparql.contains("ORDER BY DESC(?year)") && sparql.ends_with("LIMIT 1"),
            "{sparql}"
        );
        for q in &out {
            ReadQuery::parse(&q.query.to_string()).unwrap();
        }
    }

    #[test]
    fn unlinked_entities_or_missing_predicates_give_no_queries() {
        let q = qir(&[["Alien", "directed by", "?answer"]], QuestionKind::List, None, &[]);
        assert!(
            QueryGenerator::generate(&q, &HashMap::new(), &[vec![choice("d", true)]], 40)
                .unwrap()
                .is_empty()
        );
        assert!(
            QueryGenerator::generate(&q, &vertices(&[("Alien", "Alien")]), &[vec![]], 40)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn best_first_enumerates_each_combination_once() {
        let all = best_first(&[3, 2, 4], 100);
        assert_eq!(all.len(), 24);
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 24);
        assert_eq!(all[0], vec![0, 0, 0]);
        assert_eq!(best_first(&[1], 10), vec![vec![0]]);
    }
}
