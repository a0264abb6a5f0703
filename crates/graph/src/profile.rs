//! A knowledge graph's schema profile: its predicates (how often each is used, what its objects
//! are: vertices, or literals of which datatypes; its own label where the graph has one) and its
//! classes (how many instances, their labels). `chatty-kg profile` prints it; the embedded store
//! computes it when it loads and keeps it beside the store, a remote endpoint computes it on
//! first use, with bounded queries (grouped counts, `LIMIT`, the query timeout).
//!
//! The queries are spargebra algebra, like every query the graph layer builds.

pub use crate::conventions::class_counts_query;
use crate::conventions::{Conventions, TypeVocabulary};
use crate::counted::most_first;
pub use crate::counted::{ClassProfile, PredicateProfile};
use crate::load_counts::LoadCounts;
use crate::query::ranked;
use crate::query::{ReadQuery, triple, var};
use crate::{GraphError, KnowledgeGraph, QueryResults, Term};
use serde::{Deserialize, Serialize};
use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression, Function, GraphPattern};
use spargebra::term::Variable;
use std::collections::BTreeMap;

/// Predicates and classes kept, the most used first.
pub const PROFILE_LIMIT: usize = 1000;
/// Datatype rows kept (predicate × datatype).
const DATATYPE_ROWS: usize = 5000;

/// Subclass statements read for the classes that have no instances of their own.
const SUBCLASS_ROWS: usize = 5000;

/// Triples (over the predicates counted) up to which the literals' datatypes are counted by one
/// query over the whole graph. That query reads every literal: on Virtuoso it ran past 60 s at
/// 50 M triples. Beyond, each predicate's datatypes are estimated from a sample of its values.
const COUNTED_DATATYPES_UP_TO: u64 = 5_000_000;
/// Values read per predicate when its datatypes are estimated.
const DATATYPE_SAMPLE: usize = 1000;
/// Predicates (the most used that have literals) whose datatypes are estimated.
const SAMPLED_PREDICATES: usize = 200;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SchemaProfile {
    /// Triples counted over the predicates kept.
    pub triples: u64,
    /// The most used predicates first.
    pub predicates: Vec<PredicateProfile>,
    /// The classes with the most instances first.
    pub classes: Vec<ClassProfile>,
    /// More predicates or classes than [`PROFILE_LIMIT`]: the rarest are left out.
    pub truncated: bool,
    /// The literals' datatypes were estimated from a sample of each predicate's values (a graph
    /// of more than `COUNTED_DATATYPES_UP_TO` triples, read through queries), not counted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub datatypes_sampled: bool,
    /// How the graph types, names and describes things ([`crate::conventions`]); RDFS's in a
    /// profile saved before conventions were read.
    #[serde(default)]
    pub conventions: Conventions,
}

fn count(term: Option<&Option<Term>>) -> u64 {
    match term {
        Some(Some(Term::Literal(l))) => l.value().parse().unwrap_or(0),
        _ => 0,
    }
}

fn iri(term: Option<&Option<Term>>) -> Option<String> {
    match term {
        Some(Some(Term::NamedNode(n))) => Some(n.as_str().to_owned()),
        _ => None,
    }
}

/// `SELECT ?p (COUNT(*) AS ?n) (SUM(IF(isIRI(?o), 1, 0)) AS ?iris) WHERE { ?s ?p ?o } GROUP BY ?p
/// ORDER BY DESC(?n) LIMIT limit`.
pub fn predicates_query(limit: usize) -> Result<ReadQuery, GraphError> {
    let (s, p, o, n, iris) = (var("s"), var("p"), var("o"), var("n"), var("iris"));
    let is_iri = Expression::If(
        Box::new(Expression::FunctionCall(
            Function::IsIri,
            vec![Expression::Variable(o.clone())],
        )),
        Box::new(Expression::Literal(1.into())),
        Box::new(Expression::Literal(0.into())),
    );
    let grouped = GraphPattern::Group {
        inner: Box::new(GraphPattern::Bgp {
            patterns: vec![triple(s, p.clone(), o)],
        }),
        variables: vec![p.clone()],
        aggregates: vec![
            (n.clone(), AggregateExpression::CountSolutions { distinct: false }),
            (
                iris.clone(),
                AggregateExpression::FunctionCall {
                    name: AggregateFunction::Sum,
                    expr: is_iri,
                    distinct: false,
                },
            ),
        ],
    };
    ranked(grouped, vec![p, n.clone(), iris], n, limit)
}

/// `SELECT ?p ?dt (COUNT(*) AS ?n) WHERE { ?s ?p ?o FILTER(isLiteral(?o)) BIND(DATATYPE(?o) AS ?dt) }
/// GROUP BY ?p ?dt ORDER BY DESC(?n) LIMIT limit`.
pub fn datatypes_query(limit: usize) -> Result<ReadQuery, GraphError> {
    let (s, p, o, dt, n) = (var("s"), var("p"), var("o"), var("dt"), var("n"));
    let all = GraphPattern::Bgp {
        patterns: vec![triple(s, p.clone(), o.clone())],
    };
    let literals = literal_datatypes(all, o, dt.clone());
    let grouped = GraphPattern::Group {
        inner: Box::new(literals),
        variables: vec![p.clone(), dt.clone()],
        aggregates: vec![(n.clone(), AggregateExpression::CountSolutions { distinct: false })],
    };
    ranked(grouped, vec![p, dt, n.clone()], n, limit)
}

/// `inner FILTER(isLiteral(?o)) BIND(DATATYPE(?o) AS ?dt)`: the literals among `inner`'s values
/// `o`, each with its datatype.
fn literal_datatypes(inner: GraphPattern, o: Variable, dt: Variable) -> GraphPattern {
    GraphPattern::Extend {
        inner: Box::new(GraphPattern::Filter {
            expr: Expression::FunctionCall(Function::IsLiteral, vec![Expression::Variable(o.clone())]),
            inner: Box::new(inner),
        }),
        variable: dt,
        expression: Expression::FunctionCall(Function::Datatype, vec![Expression::Variable(o)]),
    }
}

/// `SELECT ?dt (COUNT(*) AS ?n) WHERE { { SELECT ?o WHERE { ?s <predicate> ?o } LIMIT sample }
/// FILTER(isLiteral(?o)) BIND(DATATYPE(?o) AS ?dt) } GROUP BY ?dt`: the datatypes of a sample of
/// one predicate's values.
pub fn datatype_sample_query(predicate: &str, sample: usize) -> Result<ReadQuery, GraphError> {
    let (s, o, dt, n) = (var("s"), var("o"), var("dt"), var("n"));
    let values = GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(GraphPattern::Bgp {
                patterns: vec![triple(s, crate::query::named_node(predicate)?, o.clone())],
            }),
            variables: vec![o.clone()],
        }),
        start: 0,
        length: Some(sample),
    };
    let literals = literal_datatypes(values, o, dt.clone());
    ReadQuery::select(GraphPattern::Project {
        inner: Box::new(GraphPattern::Group {
            inner: Box::new(literals),
            variables: vec![dt.clone()],
            aggregates: vec![(n.clone(), AggregateExpression::CountSolutions { distinct: false })],
        }),
        variables: vec![dt, n],
    })
}

/// The predicates of [`predicates_query`]'s rows, without labels or datatypes yet.
fn predicate_rows(solutions: &crate::Solutions) -> Vec<PredicateProfile> {
    solutions
        .rows
        .iter()
        .filter_map(|row| {
            Some(PredicateProfile {
                iri: iri(row.first())?,
                label: String::new(),
                triples: count(row.get(1)),
                iri_objects: count(row.get(2)),
                datatypes: BTreeMap::new(),
            })
        })
        .collect()
}

/// Each of the most used predicates with literals ([`SAMPLED_PREDICATES`]) gets the datatypes of
/// a sample of `sample` of its values ([`datatype_sample_query`]), scaled to its count of
/// literals.
async fn sample_datatypes(
    kg: &(impl KnowledgeGraph + ?Sized),
    predicates: &mut [PredicateProfile],
    sample: usize,
) -> Result<(), GraphError> {
    for predicate in predicates
        .iter_mut()
        .filter(|p| p.triples > p.iri_objects)
        .take(SAMPLED_PREDICATES)
    {
        let QueryResults::Solutions(solutions) = kg.query(&datatype_sample_query(&predicate.iri, sample)?).await?
        else {
            continue;
        };
        let sampled: Vec<(String, u64)> = solutions
            .rows
            .iter()
            .filter_map(|row| Some((iri(row.first())?, count(row.get(1)))))
            .collect();
        let seen: u64 = sampled.iter().map(|(_, n)| n).sum();
        let literals = predicate.triples - predicate.iri_objects;
        for (datatype, n) in sampled {
            let estimate = (n as f64 * literals as f64 / seen.max(1) as f64).round() as u64;
            predicate.datatypes.insert(datatype, estimate.max(1));
        }
    }
    Ok(())
}

/// `SELECT ?sub ?c WHERE { ?sub rdfs:subClassOf ?c } LIMIT limit` (`None` when the graph has no
/// subclass predicate).
pub fn subclasses_query(limit: usize, subclass_predicates: &[String]) -> Result<Option<ReadQuery>, GraphError> {
    let (sub, c) = (var("sub"), var("c"));
    let mut pattern: Option<GraphPattern> = None;
    for p in subclass_predicates {
        let next = GraphPattern::Bgp {
            patterns: vec![triple(sub.clone(), crate::query::named_node(p)?, c.clone())],
        };
        pattern = Some(match pattern {
            None => next,
            Some(before) => GraphPattern::Union {
                left: Box::new(before),
                right: Box::new(next),
            },
        });
    }
    let Some(pattern) = pattern else { return Ok(None) };
    ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(pattern),
            variables: vec![sub, c],
        }),
        start: 0,
        length: Some(limit),
    })
    .map(Some)
}

/// Adds the classes that only the schema names, as the superclass of classes with instances
/// ("character" above "letter" and "symbol"): a question may ask for them ("which characters
/// …"), and their instances are their subclasses' (counted once per subclass).
fn add_superclasses(classes: &mut Vec<ClassProfile>, pairs: &[(String, String)]) {
    // Up the hierarchy a few levels: each round adds the parents of the classes known so far.
    for _ in 0..4 {
        let mut added: Vec<ClassProfile> = Vec::new();
        for (sub, parent) in pairs {
            if sub == parent || classes.iter().any(|c| &c.iri == parent) {
                continue;
            }
            let Some(instances) = classes.iter().find(|c| &c.iri == sub).map(|c| c.instances) else {
                continue;
            };
            match added.iter_mut().find(|c| &c.iri == parent) {
                Some(c) => c.instances += instances,
                None => added.push(ClassProfile {
                    label: String::new(),
                    instances,
                    iri: parent.clone(),
                }),
            }
        }
        if added.is_empty() {
            break;
        }
        classes.extend(added);
    }
    most_first(classes, |c| (c.instances, &c.iri));
}

/// The predicates as [`predicates_query`] and [`datatypes_query`] would find them: the most used
/// first, one more than [`PROFILE_LIMIT`] kept (so that truncation shows).
fn counted_predicates(counts: &LoadCounts) -> Vec<PredicateProfile> {
    let mut predicates: Vec<PredicateProfile> = counts
        .predicates
        .iter()
        .map(|(iri, c)| PredicateProfile {
            iri: iri.clone(),
            label: String::new(),
            triples: c.triples,
            iri_objects: c.iri_objects,
            datatypes: c.datatypes.clone(),
        })
        .collect();
    most_first(&mut predicates, |p| (p.triples, &p.iri));
    predicates.truncate(PROFILE_LIMIT + 1);
    predicates
}

/// The classes as [`class_counts_query`] would find them, when `rdf:type` alone types (the only
/// typing predicate a load counts).
fn counted_classes(counts: &LoadCounts, types: TypeVocabulary<'_>) -> Option<Vec<ClassProfile>> {
    if types.type_iris() != [crate::conventions::RDF_TYPE] {
        return None;
    }
    let mut classes: Vec<ClassProfile> = counts
        .types
        .iter()
        .map(|(iri, n)| ClassProfile {
            iri: iri.clone(),
            label: String::new(),
            instances: *n,
        })
        .collect();
    most_first(&mut classes, |c| (c.instances, &c.iri));
    classes.truncate(PROFILE_LIMIT + 1);
    Some(classes)
}

/// Computes the profile of `kg` with the queries above and its labels. With the `counts` a load
/// took of the whole graph, the whole-graph queries (predicates, datatypes, classes by
/// `rdf:type`, label languages) are answered from them instead.
pub async fn compute(
    kg: &(impl KnowledgeGraph + ?Sized),
    counts: Option<&LoadCounts>,
) -> Result<SchemaProfile, GraphError> {
    let mut profile = SchemaProfile::default();
    if let Some(counts) = counts {
        profile.predicates = counted_predicates(counts);
    } else if let QueryResults::Solutions(solutions) = kg.query(&predicates_query(PROFILE_LIMIT + 1)?).await? {
        profile.predicates = predicate_rows(&solutions);
    }
    let triples: u64 = profile.predicates.iter().map(|p| p.triples).sum();
    if counts.is_some() {
        // Counted with the predicates.
    } else if triples > COUNTED_DATATYPES_UP_TO {
        sample_datatypes(kg, &mut profile.predicates, DATATYPE_SAMPLE).await?;
        profile.datatypes_sampled = true;
    } else if let QueryResults::Solutions(solutions) = kg.query(&datatypes_query(DATATYPE_ROWS)?).await? {
        for row in &solutions.rows {
            let (Some(p), Some(dt)) = (iri(row.first()), iri(row.get(1))) else {
                continue;
            };
            if let Some(predicate) = profile.predicates.iter_mut().find(|x| x.iri == p) {
                predicate.datatypes.insert(dt, count(row.get(2)));
            }
        }
    }
    most_first(&mut profile.predicates, |p| (p.triples, &p.iri));
    profile.conventions = crate::conventions::discover(kg, &profile.predicates, counts).await;
    let types = profile.conventions.types();
    if let Some(counted) = counts.and_then(|c| counted_classes(c, types)) {
        profile.classes = counted;
    } else if let QueryResults::Solutions(solutions) = kg.query(&class_counts_query(PROFILE_LIMIT + 1, types)?).await? {
        for row in &solutions.rows {
            let Some(c) = iri(row.first()) else { continue };
            profile.classes.push(ClassProfile {
                label: String::new(),
                instances: count(row.get(1)),
                iri: c,
            });
        }
    }
    most_first(&mut profile.classes, |c| (c.instances, &c.iri));
    let subclasses = subclasses_query(SUBCLASS_ROWS, &types.subclass_iris())?;
    if let Some(query) = subclasses
        && let QueryResults::Solutions(solutions) = kg.query(&query).await?
    {
        let pairs: Vec<(String, String)> = solutions
            .rows
            .iter()
            .filter_map(|row| Some((iri(row.first())?, iri(row.get(1))?)))
            .collect();
        add_superclasses(&mut profile.classes, &pairs);
    }
    profile.truncated = profile.predicates.len() > PROFILE_LIMIT || profile.classes.len() > PROFILE_LIMIT;
    profile.predicates.truncate(PROFILE_LIMIT);
    profile.classes.truncate(PROFILE_LIMIT);
    profile.triples = profile.predicates.iter().map(|p| p.triples).sum();
    let predicates: Vec<&str> = profile.predicates.iter().map(|p| p.iri.as_str()).collect();
    let names = kg.predicate_names(&predicates).await?;
    let classes: Vec<&str> = profile.classes.iter().map(|c| c.iri.as_str()).collect();
    let class_names = kg.labels(&classes).await?;
    for p in &mut profile.predicates {
        p.label = names
            .get(&p.iri)
            .cloned()
            .unwrap_or_else(|| crate::text::predicate_label(&p.iri));
    }
    for c in &mut profile.classes {
        c.label = class_names
            .get(&c.iri)
            .cloned()
            .unwrap_or_else(|| crate::text::predicate_label(&c.iri));
    }
    Ok(profile)
}

impl SchemaProfile {
    /// A plain-text table: predicates, then classes.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} predicates, {} triples, {} classes{}",
            self.predicates.len(),
            self.triples,
            self.classes.len(),
            if self.truncated { " (the rarest left out)" } else { "" }
        );
        let _ = writeln!(
            out,
            "\npredicate\tlabel\ttriples\tto vertices\tliterals by datatype{}",
            if self.datatypes_sampled {
                " (estimated from a sample of each predicate's values)"
            } else {
                ""
            }
        );
        for p in &self.predicates {
            let datatypes: Vec<String> = p
                .datatypes
                .iter()
                .map(|(dt, n)| format!("{} {n}", crate::text::predicate_label(dt)))
                .collect();
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}\t{}",
                p.iri,
                p.label,
                p.triples,
                p.iri_objects,
                datatypes.join(", ")
            );
        }
        let _ = writeln!(out, "\nconventions\n{}", self.conventions.render());
        if !self.classes.is_empty() {
            let _ = writeln!(out, "\nclass\tlabel\tinstances");
            for c in &self.classes {
                let _ = writeln!(out, "{}\t{}\t{}", c.iri, c.label, c.instances);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(iri: &str, instances: u64) -> ClassProfile {
        ClassProfile {
            iri: iri.to_owned(),
            label: String::new(),
            instances,
        }
    }

    /// On a graph too big to count every literal's datatype, each predicate's are estimated from
    /// a sample of its values: those the sample shows, scaled to the predicate's literals; none
    /// for a predicate whose values are all vertices.
    #[tokio::test]
    async fn datatypes_estimated_from_samples_scale_to_the_literals() {
        let tmp = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(&format!("<http://e/v{i}> <http://e/name> \"Vertex {i}\" .\n"));
            text.push_str(&format!("<http://e/v{i}> <http://e/next> <http://e/v{}> .\n", i + 1));
            let year = if i % 4 == 0 {
                format!("\"{}\"^^<http://www.w3.org/2001/XMLSchema#integer>", 1900 + i)
            } else {
                format!("\"{}\"^^<http://www.w3.org/2001/XMLSchema#gYear>", 1900 + i)
            };
            text.push_str(&format!("<http://e/v{i}> <http://e/year> {year} .\n"));
        }
        let file = tmp.path().join("g.nt");
        std::fs::write(&file, text).unwrap();
        let store = tmp.path().join("store");
        let settings = crate::GraphSettings::default();
        crate::EmbeddedStore::load(&store, &[crate::RdfFile::new(&file).unwrap()], &settings, false).unwrap();
        let kg = crate::EmbeddedStore::open(&store, settings).unwrap();
        let QueryResults::Solutions(rows) = kg.query(&predicates_query(10).unwrap()).await.unwrap() else {
            panic!("a SELECT")
        };
        let mut predicates = predicate_rows(&rows);
        sample_datatypes(&kg, &mut predicates, 10).await.unwrap();
        let of = |p: &str| predicates.iter().find(|x| x.iri == p).unwrap().datatypes.clone();
        assert_eq!(
            of("http://e/name"),
            BTreeMap::from([("http://www.w3.org/2001/XMLSchema#string".to_owned(), 40)])
        );
        assert!(of("http://e/next").is_empty());
        let years = of("http://e/year");
        let estimated: u64 = years.values().sum();
        assert!((39..=41).contains(&estimated), "{years:?}");
        assert!(
            years.keys().all(|d| d.ends_with("#gYear") || d.ends_with("#integer")),
            "{years:?}"
        );
    }

    #[test]
    fn superclasses_named_only_by_the_schema_are_classes() {
        let mut classes = vec![class("ex:Letter", 40), class("ex:Symbol", 20), class("ex:Block", 5)];
        let pairs: Vec<(String, String)> = [
            ("ex:Letter", "ex:Character"),
            ("ex:Symbol", "ex:Character"),
            ("ex:Character", "ex:Thing"),
            ("ex:Unused", "ex:Nothing"),
            ("ex:Block", "ex:Block"),
        ]
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
        add_superclasses(&mut classes, &pairs);
        let found: Vec<(&str, u64)> = classes.iter().map(|c| (c.iri.as_str(), c.instances)).collect();
        assert_eq!(
            found,
            [
                ("ex:Character", 60),
                ("ex:Thing", 60),
                ("ex:Letter", 40),
                ("ex:Symbol", 20),
                ("ex:Block", 5)
            ]
        );
    }
}
