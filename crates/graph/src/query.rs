//! Read-only SPARQL: every query that leaves this crate is a parsed [`ReadQuery`], and the queries
//! we write ourselves are built from spargebra's algebra types, so user text only ever becomes an
//! escaped literal, never query syntax.
//!
//! A [`ReadQuery`] is a SELECT or ASK that reads the graph's own data and reaches nothing else:
//! - **no SERVICE**, anywhere: not in the WHERE clause, nor in an `EXISTS` inside a FILTER, BIND,
//!   ORDER BY, GROUP BY, HAVING, aggregate argument or function argument, nor in a subquery. The
//!   check is one walk over every pattern and every expression position; its matches are exhaustive
//!   and name every field, so a variant or field spargebra adds later is a compile error here
//!   rather than a hole in the guard.
//! - **no `FROM` / `FROM NAMED`**: a dataset clause names graphs by IRI, and some endpoints
//!   (Virtuoso with its sponger) fetch an IRI they do not hold from the web. Nothing in chatty-kg
//!   needs one: the queries it builds never set a dataset, and neither do the benchmarks' gold
//!   queries. `GRAPH <iri> { … }` stays allowed: it only selects among the graphs already stored.
//! - **no extension functions but an allow-list**: SPARQL's built-in functions are pure, but an
//!   endpoint's own functions (`<iri>(…)`) can read files, fetch URLs or write. Allowed are the XSD
//!   casts (`xsd:integer(?x)`, any name in the XSD namespace: they are all datatypes) and Virtuoso's
//!   full-text `bif:contains`; the benchmarks' gold queries use `xsd:integer(…)` and `xsd:date(…)`.
//!   Custom aggregates are refused for the same reason. (chatty-kg's own entity search uses
//!   `bif:contains` as Virtuoso's magic predicate in a triple pattern, which is no call at all.)
//!
//! The tests check the guard on random queries too: `query/arbitrary.rs` builds spargebra algebra
//! of every kind and puts a forbidden thing at a random position.

use crate::GraphError;
use oxigraph::model::{Literal, NamedNode, Variable};
use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression, Function, GraphPattern, OrderExpression};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use spargebra::{Query, SparqlParser};
use std::fmt;

/// `grouped` projected on `variables`, the highest `by` first, `limit` rows at most.
pub(crate) fn ranked(
    grouped: GraphPattern,
    variables: Vec<spargebra::term::Variable>,
    by: spargebra::term::Variable,
    limit: usize,
) -> Result<ReadQuery, GraphError> {
    ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(GraphPattern::OrderBy {
                inner: Box::new(grouped),
                expression: vec![OrderExpression::Desc(Expression::Variable(by))],
            }),
            variables,
        }),
        start: 0,
        length: Some(limit),
    })
}

#[cfg(test)]
pub(crate) mod arbitrary;
pub(crate) mod bounded;

/// A query that is known to be read-only: SELECT or ASK, without SERVICE, dataset clause or
/// extension functions outside the allow-list (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadQuery(Query);

pub(crate) const SERVICE: &str = "a federated query (SERVICE)";

/// Deepest nesting of brackets (`(`, `{`, `[`, counted anywhere in the text) that
/// [`ReadQuery::parse`] accepts. spargebra's parser recurses several frames per level with no
/// bound of its own: about 1000 nested parentheses (2 KB of text) overflow a 2 MB thread stack (a
/// tokio worker's), which aborts the process rather than returning an error (found while
/// writing the `read_only_guard` fuzz target). Real queries nest a few levels.
pub const MAX_NESTING: usize = 64;

/// Deepest nesting of patterns and expressions in a query that [`ReadQuery::new`] accepts. A
/// flat chain such as `1+1+…+1` nests no bracket but parses into an expression as deep as it is
/// long; printing, checking, evaluating and dropping such a tree all recurse. Real queries nest a
/// few dozen levels at most.
pub const MAX_DEPTH: usize = 256;

/// Longest SPARQL text [`ReadQuery::parse`] accepts (gold queries of the benchmarks are under
/// 2 KB).
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// The stack [`ReadQuery::parse`] parses and checks on: spargebra's parser recurses a few frames
/// per operator, so a text of [`MAX_QUERY_BYTES`] needs far more than a worker thread's 2 MB.
/// Virtual memory: only the pages a deep text touches become resident.
const PARSE_STACK_BYTES: usize = 512 << 20;

thread_local! {
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One level of the guard's walk; refuses the walk past [`MAX_DEPTH`].
struct Level;

impl Level {
    fn enter() -> Result<Self, GraphError> {
        let depth = DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let level = Level;
        if depth > MAX_DEPTH {
            return Err(GraphError::QueryParse {
                message: format!("the query is nested deeper than {MAX_DEPTH} levels"),
            });
        }
        Ok(level)
    }
}

impl Drop for Level {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Refuses `levels` more levels below the current one past [`MAX_DEPTH`].
fn deeper_by(levels: usize) -> Result<(), GraphError> {
    let depth = DEPTH.with(std::cell::Cell::get).saturating_add(levels);
    if depth > MAX_DEPTH {
        return Err(GraphError::QueryParse {
            message: format!("the query is nested deeper than {MAX_DEPTH} levels (its joins and paths counted)"),
        });
    }
    Ok(())
}

/// How deep a property path nests (a sequence of n steps: n).
fn path_depth(path: &spargebra::algebra::PropertyPathExpression) -> usize {
    use spargebra::algebra::PropertyPathExpression as P;
    match path {
        P::NamedNode(_) | P::NegatedPropertySet(_) => 1,
        P::Reverse(p) | P::ZeroOrMore(p) | P::OneOrMore(p) | P::ZeroOrOne(p) => 1 + path_depth(p),
        P::Sequence(a, b) | P::Alternative(a, b) => 1 + path_depth(a).max(path_depth(b)),
    }
}

/// The deepest bracket nesting in `text` (closing brackets never take it below zero).
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'(' | b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}
pub(crate) const DATASET: &str = "a FROM/FROM NAMED dataset clause";

/// The namespace of the XSD datatypes; `xsd:T(x)` is the cast of `x` to `T`.
const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// Virtuoso's full-text search, the one endpoint-specific function allowed.
const BIF_CONTAINS: &str = "bif:contains";

impl ReadQuery {
    /// Parses SPARQL text and refuses anything but a read-only SELECT/ASK (CONSTRUCT, DESCRIBE,
    /// updates, SERVICE, FROM, extension functions; see the module docs).
    pub fn parse(text: &str) -> Result<Self, GraphError> {
        if text.len() > MAX_QUERY_BYTES {
            return Err(GraphError::QueryParse {
                message: format!("the query has {} bytes (at most {MAX_QUERY_BYTES})", text.len()),
            });
        }
        // Parsed, checked and (when refused) dropped on a stack of its own: see PARSE_STACK_BYTES.
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("sparql-parse".into())
                .stack_size(PARSE_STACK_BYTES)
                .spawn_scoped(scope, || Self::parse_here(text))
                .map_err(|e| GraphError::QueryParse {
                    message: format!("cannot start the parser thread: {e}"),
                })?
                .join()
                .map_err(|_| GraphError::QueryParse {
                    message: "the parser failed".into(),
                })?
        })
    }

    fn parse_here(text: &str) -> Result<Self, GraphError> {
        let depth = nesting(text);
        if depth > MAX_NESTING {
            return Err(GraphError::QueryParse {
                message: format!("brackets nested {depth} deep (at most {MAX_NESTING})"),
            });
        }
        match SparqlParser::new().parse_query(text) {
            Ok(query) => Self::new(query),
            Err(query_error) => {
                // Say "update" rather than a parse error when that is what it is.
                if SparqlParser::new().parse_update(text).is_ok() {
                    Err(GraphError::NotReadOnly { kind: "an update" })
                } else {
                    Err(GraphError::QueryParse {
                        message: query_error.to_string(),
                    })
                }
            }
        }
    }

    /// Checks an already built query.
    pub fn new(query: Query) -> Result<Self, GraphError> {
        let (dataset, pattern) = match &query {
            Query::Select {
                dataset,
                pattern,
                base_iri: _,
            }
            | Query::Ask {
                dataset,
                pattern,
                base_iri: _,
            } => (dataset, pattern),
            Query::Construct { .. } => return Err(GraphError::NotReadOnly { kind: "CONSTRUCT" }),
            Query::Describe { .. } => return Err(GraphError::NotReadOnly { kind: "DESCRIBE" }),
        };
        if dataset.is_some() {
            return Err(GraphError::NotReadOnly { kind: DATASET });
        }
        check_pattern(pattern)?;
        Ok(Self(query))
    }

    pub fn is_ask(&self) -> bool {
        matches!(self.0, Query::Ask { .. })
    }

    /// The IRIs this query starts from: subjects and objects of its triple and path patterns
    /// that are IRIs, and IRIs its filters and VALUES name, in order of first appearance, leaving out the classes (objects of
    /// `rdf:type` or of one of the graph's `type_predicates`) and the IRIs that are also
    /// predicates. These are what a question names; the rest (predicates, classes) is the
    /// query's shape.
    pub fn anchor_iris(&self, type_predicates: &[String]) -> Vec<String> {
        let mut query = self.0.clone();
        let mut found: Vec<String> = Vec::new();
        bounded::walk(&mut query, &mut |call| {
            if let bounded::Call::Term(TermPattern::NamedNode(iri), _) | bounded::Call::Iri(iri) = call
                && !found.iter().any(|f| f == iri.as_str())
            {
                found.push(iri.as_str().to_owned());
            }
        });
        // An object of rdf:type elsewhere is a class wherever it appears.
        let mut classes: Vec<String> = Vec::new();
        bounded::walk(&mut query, &mut |call| {
            if let bounded::Call::Term(TermPattern::NamedNode(iri), Some(NamedNodePattern::NamedNode(p))) = call
                && (p.as_str() == RDF_TYPE || type_predicates.iter().any(|t| t == p.as_str()))
            {
                classes.push(iri.as_str().to_owned());
            }
        });
        found.retain(|iri| !classes.contains(iri));
        found
    }

    /// The query with IRIs in subject, object, expression and VALUES positions replaced as
    /// `replace` says (predicates stay): the same shape about other vertices.
    pub fn with_iris_replaced(&self, replace: &std::collections::HashMap<String, String>) -> Result<Self, GraphError> {
        let mut query = self.0.clone();
        let mut invalid = None;
        let mut swap = |iri: &mut NamedNode| {
            if let Some(new) = replace.get(iri.as_str()) {
                match NamedNode::new(new.as_str()) {
                    Ok(n) => *iri = n,
                    Err(e) => {
                        invalid = Some(GraphError::InvalidIri {
                            iri: new.clone(),
                            message: e.to_string(),
                        })
                    }
                }
            }
        };
        bounded::walk(&mut query, &mut |call| match call {
            bounded::Call::Term(TermPattern::NamedNode(iri), _) | bounded::Call::Iri(iri) => swap(iri),
            _ => {}
        });
        if let Some(error) = invalid {
            return Err(error);
        }
        Self::new(query)
    }

    pub fn as_query(&self) -> &Query {
        &self.0
    }

    /// The same query returning at most `max_rows + 1` rows, so a backend can keep `max_rows` and
    /// still tell that there were more (one row over is what sets `truncated`).
    ///
    /// The query's own `LIMIT`/`OFFSET` (the slice among the solution modifiers at the top) keeps
    /// its offset and gets the cap as its length if it has none or a larger one; a smaller limit
    /// is left alone. Without one the pattern is wrapped in a slice, which prints as a plain
    /// trailing `LIMIT max_rows+1`. ASK is returned unchanged.
    pub fn capped(&self, max_rows: usize) -> Self {
        let cap = max_rows.saturating_add(1);
        let mut query = self.0.clone();
        if let Query::Select { pattern, .. } = &mut query {
            match top_slice_length(pattern) {
                Some(length) => *length = Some(length.map_or(cap, |l| l.min(cap))),
                None => {
                    let inner = std::mem::replace(pattern, GraphPattern::Bgp { patterns: Vec::new() });
                    *pattern = GraphPattern::Slice {
                        inner: Box::new(inner),
                        start: 0,
                        length: Some(cap),
                    };
                }
            }
        }
        // Only solution modifiers changed: the guard's verdict on the original still holds.
        Self(query)
    }

    /// Builds a SELECT from a graph pattern (which must already project the variables it returns).
    pub fn select(pattern: GraphPattern) -> Result<Self, GraphError> {
        Self::new(Query::Select {
            dataset: None,
            pattern,
            base_iri: None,
        })
    }
}

impl fmt::Display for ReadQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The length of the query's own `LIMIT`/`OFFSET`. spargebra puts a query's own slice outermost
/// (SPARQL's algebra applies ORDER BY, the projection and DISTINCT before it), so only a slice at
/// the top is the query's own; one further down belongs to a subquery, and shortening it would
/// change which rows an outer DISTINCT or ORDER BY sees. Such a query is wrapped instead.
fn top_slice_length(pattern: &mut GraphPattern) -> Option<&mut Option<usize>> {
    match pattern {
        GraphPattern::Slice { length, .. } => Some(length),
        _ => None,
    }
}

// ----- the guard: one walk over every pattern and expression, refusing the first forbidden thing -----
// No `_` arm and no `..` in these matches: a new spargebra variant or field must be looked at here.

fn check_pattern(pattern: &GraphPattern) -> Result<(), GraphError> {
    let _level = Level::enter()?;
    match pattern {
        GraphPattern::Service {
            name: _,
            inner: _,
            silent: _,
        } => Err(GraphError::NotReadOnly { kind: SERVICE }),
        // The evaluator joins a basic graph pattern's triples one by one, a level each, and
        // recurses into a property path's parts: both count in the depth.
        GraphPattern::Bgp { patterns } => deeper_by(patterns.len()),
        GraphPattern::Path {
            subject: _,
            path,
            object: _,
        } => deeper_by(path_depth(path)),
        // Inline values hold no pattern and no expression.
        GraphPattern::Values {
            variables: _,
            bindings: _,
        } => Ok(()),
        GraphPattern::Join { left, right }
        | GraphPattern::Lateral { left, right }
        | GraphPattern::Union { left, right }
        | GraphPattern::Minus { left, right } => {
            check_pattern(left)?;
            check_pattern(right)
        }
        GraphPattern::LeftJoin {
            left,
            right,
            expression,
        } => {
            check_pattern(left)?;
            check_pattern(right)?;
            expression.iter().try_for_each(check_expression)
        }
        GraphPattern::Filter { expr, inner } => {
            check_pattern(inner)?;
            check_expression(expr)
        }
        GraphPattern::Extend {
            inner,
            variable: _,
            expression,
        } => {
            check_pattern(inner)?;
            check_expression(expression)
        }
        GraphPattern::OrderBy { inner, expression } => {
            check_pattern(inner)?;
            expression.iter().try_for_each(|order| {
                let (OrderExpression::Asc(e) | OrderExpression::Desc(e)) = order;
                check_expression(e)
            })
        }
        GraphPattern::Group {
            inner,
            variables: _,
            aggregates,
        } => {
            check_pattern(inner)?;
            aggregates
                .iter()
                .try_for_each(|(_, aggregate)| check_aggregate(aggregate))
        }
        GraphPattern::Graph { name: _, inner }
        | GraphPattern::Project { inner, variables: _ }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice {
            inner,
            start: _,
            length: _,
        } => check_pattern(inner),
    }
}

fn check_aggregate(aggregate: &AggregateExpression) -> Result<(), GraphError> {
    match aggregate {
        AggregateExpression::CountSolutions { distinct: _ } => Ok(()),
        AggregateExpression::FunctionCall {
            name,
            expr,
            distinct: _,
        } => {
            match name {
                AggregateFunction::Count
                | AggregateFunction::Sum
                | AggregateFunction::Avg
                | AggregateFunction::Min
                | AggregateFunction::Max
                | AggregateFunction::GroupConcat { separator: _ }
                | AggregateFunction::Sample => {}
                AggregateFunction::Custom(iri) => {
                    return Err(GraphError::FunctionNotAllowed {
                        iri: iri.as_str().to_owned(),
                    });
                }
            }
            check_expression(expr)
        }
    }
}

fn check_expression(expression: &Expression) -> Result<(), GraphError> {
    let _level = Level::enter()?;
    match expression {
        Expression::Exists(pattern) => check_pattern(pattern),
        Expression::Or(a, b)
        | Expression::And(a, b)
        | Expression::Equal(a, b)
        | Expression::SameTerm(a, b)
        | Expression::Greater(a, b)
        | Expression::GreaterOrEqual(a, b)
        | Expression::Less(a, b)
        | Expression::LessOrEqual(a, b)
        | Expression::Add(a, b)
        | Expression::Subtract(a, b)
        | Expression::Multiply(a, b)
        | Expression::Divide(a, b) => {
            check_expression(a)?;
            check_expression(b)
        }
        Expression::In(a, list) => {
            check_expression(a)?;
            list.iter().try_for_each(check_expression)
        }
        Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => check_expression(a),
        Expression::If(a, b, c) => {
            check_expression(a)?;
            check_expression(b)?;
            check_expression(c)
        }
        Expression::Coalesce(list) => list.iter().try_for_each(check_expression),
        Expression::FunctionCall(function, arguments) => {
            check_function(function)?;
            arguments.iter().try_for_each(check_expression)
        }
        Expression::NamedNode(_) | Expression::Literal(_) | Expression::Variable(_) | Expression::Bound(_) => Ok(()),
    }
}

fn check_function(function: &Function) -> Result<(), GraphError> {
    match function {
        Function::Custom(iri) => {
            let iri = iri.as_str();
            let xsd_cast = iri.strip_prefix(XSD).is_some_and(|name| !name.is_empty());
            if xsd_cast || iri == BIF_CONTAINS {
                Ok(())
            } else {
                Err(GraphError::FunctionNotAllowed { iri: iri.to_owned() })
            }
        }
        // SPARQL's built-ins: functions of their arguments (and of the clock or a random source),
        // evaluated by the endpoint without reaching anything else.
        Function::Str
        | Function::Lang
        | Function::LangMatches
        | Function::Datatype
        | Function::Iri
        | Function::BNode
        | Function::Rand
        | Function::Abs
        | Function::Ceil
        | Function::Floor
        | Function::Round
        | Function::Concat
        | Function::SubStr
        | Function::StrLen
        | Function::Replace
        | Function::UCase
        | Function::LCase
        | Function::EncodeForUri
        | Function::Contains
        | Function::StrStarts
        | Function::StrEnds
        | Function::StrBefore
        | Function::StrAfter
        | Function::Year
        | Function::Month
        | Function::Day
        | Function::Hours
        | Function::Minutes
        | Function::Seconds
        | Function::Timezone
        | Function::Tz
        | Function::Now
        | Function::Uuid
        | Function::StrUuid
        | Function::Md5
        | Function::Sha1
        | Function::Sha256
        | Function::Sha384
        | Function::Sha512
        | Function::StrLang
        | Function::StrDt
        | Function::IsIri
        | Function::IsBlank
        | Function::IsLiteral
        | Function::IsNumeric
        | Function::Regex
        | Function::Adjust => Ok(()),
    }
}

// ----- builders for the queries the graph layer itself needs -----

/// An IRI as a term, checked (a bad IRI is a typed error, not a broken query).
pub fn named_node(iri: &str) -> Result<NamedNode, GraphError> {
    NamedNode::new(iri).map_err(|e| GraphError::InvalidIri {
        iri: iri.to_owned(),
        message: e.to_string(),
    })
}

/// A variable; `name` must be a valid SPARQL variable name (letters, digits, `_`).
pub fn var(name: &str) -> Variable {
    Variable::new_unchecked(name)
}

/// A triple pattern.
pub fn triple(
    subject: impl Into<TermPattern>,
    predicate: impl Into<NamedNodePattern>,
    object: impl Into<TermPattern>,
) -> TriplePattern {
    TriplePattern {
        subject: subject.into(),
        predicate: predicate.into(),
        object: object.into(),
    }
}

fn bgp(patterns: Vec<TriplePattern>) -> GraphPattern {
    GraphPattern::Bgp { patterns }
}

fn distinct_project(inner: GraphPattern, variables: Vec<Variable>, limit: Option<usize>) -> GraphPattern {
    let projected = GraphPattern::Distinct {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(inner),
            variables,
        }),
    };
    limited(projected, limit)
}

/// `pattern LIMIT n`, or the pattern itself without a limit.
pub(crate) fn limited(pattern: GraphPattern, limit: Option<usize>) -> GraphPattern {
    match limit {
        Some(length) => GraphPattern::Slice {
            inner: Box::new(pattern),
            start: 0,
            length: Some(length),
        },
        None => pattern,
    }
}

/// `SELECT DISTINCT ?p WHERE { <v> ?p ?o }` (or `?s ?p <v>` for incoming) `LIMIT n`.
pub fn predicates_around_query(vertex: &str, outgoing: bool, limit: usize) -> Result<ReadQuery, GraphError> {
    let v = named_node(vertex)?;
    let (p, other) = (var("p"), var("x"));
    let pattern = if outgoing {
        triple(v, p.clone(), other)
    } else {
        triple(other, p.clone(), v)
    };
    ReadQuery::select(distinct_project(bgp(vec![pattern]), vec![p], Some(limit)))
}

/// `VALUES ?v {…} ?v ?p ?other` (or `?other ?p ?v` for incoming): every edge of a frontier.
fn frontier_edges(vertices: &[&str], outgoing: bool, other: &Variable) -> Result<GraphPattern, GraphError> {
    let (v, p) = (var("v"), var("p"));
    let edge = if outgoing {
        triple(v.clone(), p, other.clone())
    } else {
        triple(other.clone(), p, v.clone())
    };
    Ok(GraphPattern::Join {
        left: Box::new(values(&v, vertices.iter().copied())?),
        right: Box::new(bgp(vec![edge])),
    })
}

/// `SELECT DISTINCT ?v ?p ?o WHERE { VALUES ?v {…} ?v ?p ?o }` (or `?o ?p ?v` for incoming)
/// `LIMIT n`: every edge of a frontier of vertices, in one query.
pub fn neighbourhood_query(vertices: &[&str], outgoing: bool, limit: usize) -> Result<ReadQuery, GraphError> {
    let o = var("o");
    let edges = frontier_edges(vertices, outgoing, &o)?;
    ReadQuery::select(distinct_project(edges, vec![var("v"), var("p"), o], Some(limit)))
}

/// `SELECT DISTINCT ?o ?l ?p WHERE { VALUES ?v {<vertex>} ?v ?p ?o . VALUES ?lp {…} ?o ?lp ?l }`
/// (or `?o ?p ?v` for incoming) `LIMIT n`: a vertex's neighbours with their labels and the
/// predicate that joins them, in one query (a label lookup per neighbour is far slower on a large
/// neighbourhood).
pub fn labelled_neighbours_query(
    vertex: &str,
    outgoing: bool,
    label_predicates: &[String],
    limit: usize,
) -> Result<ReadQuery, GraphError> {
    let (o, lp, l) = (var("o"), var("lp"), var("l"));
    let labelled = GraphPattern::Join {
        left: Box::new(values(&lp, label_predicates.iter().map(String::as_str))?),
        right: Box::new(bgp(vec![triple(o.clone(), lp.clone(), l.clone())])),
    };
    let joined = GraphPattern::Join {
        left: Box::new(frontier_edges(&[vertex], outgoing, &o)?),
        right: Box::new(labelled),
    };
    ReadQuery::select(distinct_project(joined, vec![o, l, var("p")], Some(limit)))
}

/// `SELECT ?v ?p (SAMPLE(?x) AS ?o) (COUNT(?x) AS ?n) WHERE { VALUES ?v {…} ?v ?p ?x } GROUP BY
/// ?v ?p`: every predicate of every frontier vertex with one neighbour each and how many it has,
/// when the whole neighbourhood is too big to fetch (hub vertices). A graph holds each triple once,
/// so the count is of distinct neighbours without the cost of `COUNT(DISTINCT)` (a third more on a
/// frontier of 130 pairs); an endpoint whose default graph merges named graphs counts a triple
/// stored in two of them twice, and may then sample a frontier it could have fetched whole.
pub fn neighbourhood_sample_query(vertices: &[&str], outgoing: bool) -> Result<ReadQuery, GraphError> {
    let (v, p, x, o, n) = (var("v"), var("p"), var("x"), var("o"), var("n"));
    ReadQuery::select(GraphPattern::Project {
        inner: Box::new(GraphPattern::Group {
            inner: Box::new(frontier_edges(vertices, outgoing, &x)?),
            variables: vec![v.clone(), p.clone()],
            aggregates: vec![
                (
                    o.clone(),
                    AggregateExpression::FunctionCall {
                        name: AggregateFunction::Sample,
                        expr: Expression::Variable(x.clone()),
                        distinct: false,
                    },
                ),
                (
                    n.clone(),
                    AggregateExpression::FunctionCall {
                        name: AggregateFunction::Count,
                        expr: Expression::Variable(x),
                        distinct: false,
                    },
                ),
            ],
        }),
        variables: vec![v, p, o, n],
    })
}

/// `SELECT DISTINCT ?p WHERE { <a> ?p <b> }`.
pub fn predicates_between_query(from: &str, to: &str) -> Result<ReadQuery, GraphError> {
    let p = var("p");
    let pattern = triple(named_node(from)?, p.clone(), named_node(to)?);
    ReadQuery::select(distinct_project(bgp(vec![pattern]), vec![p], None))
}

/// `SELECT DISTINCT ?s ?p WHERE { VALUES ?o { "value" "value"@lang } ?s ?p ?o FILTER(isIRI(?s)) }
/// LIMIT n`: the vertices that store `value` as a literal (a title, an ISBN), the text always a
/// literal term, never query text.
pub fn value_subjects_query(value: &str, language: &str, limit: usize) -> Result<ReadQuery, GraphError> {
    use spargebra::term::GroundTerm;
    let (s, p, o) = (var("s"), var("p"), var("o"));
    let mut bindings = vec![vec![Some(GroundTerm::Literal(Literal::new_simple_literal(value)))]];
    if let Ok(tagged) = Literal::new_language_tagged_literal(value, language) {
        bindings.push(vec![Some(GroundTerm::Literal(tagged))]);
    }
    let stored = GraphPattern::Filter {
        expr: Expression::FunctionCall(Function::IsIri, vec![Expression::Variable(s.clone())]),
        inner: Box::new(GraphPattern::Join {
            left: Box::new(GraphPattern::Values {
                variables: vec![o.clone()],
                bindings,
            }),
            right: Box::new(bgp(vec![triple(s.clone(), p.clone(), o)])),
        }),
    };
    ReadQuery::select(distinct_project(stored, vec![s, p], Some(limit)))
}

/// Entity search on a remote endpoint: `SELECT DISTINCT ?s ?l WHERE { ?s ?lp ?l . VALUES ?lp {…}
/// <filter> } LIMIT n`, where the filter is chosen by the [`SearchStrategy`](crate::SearchStrategy).
pub fn entity_search_query(
    words: &[String],
    label_predicates: &[String],
    strategy: crate::SearchStrategy,
    limit: usize,
) -> Result<ReadQuery, GraphError> {
    let (s, lp, l) = (var("s"), var("lp"), var("l"));
    let mut patterns = vec![triple(s.clone(), lp.clone(), l.clone())];
    if strategy == crate::SearchStrategy::BifContains {
        // Virtuoso's magic predicate: `?l bif:contains "'tom' AND 'hanks'"`.
        patterns.push(triple(
            l.clone(),
            NamedNode::new_unchecked("bif:contains"),
            Literal::new_simple_literal(bif_contains_expression(words)),
        ));
    }
    let values = GraphPattern::Values {
        variables: vec![lp],
        bindings: label_predicates
            .iter()
            .map(|p| Ok(vec![Some(named_node(p)?.into())]))
            .collect::<Result<_, GraphError>>()?,
    };
    let joined = GraphPattern::Join {
        left: Box::new(values),
        right: Box::new(bgp(patterns)),
    };
    let lowered_label = || {
        Expression::FunctionCall(
            Function::LCase,
            vec![Expression::FunctionCall(
                Function::Str,
                vec![Expression::Variable(l.clone())],
            )],
        )
    };
    let filtered = match strategy {
        crate::SearchStrategy::BifContains => joined,
        // A Wikibase's own search is no query of this kind (the endpoint asks it first): plain
        // CONTAINS where one is asked for all the same.
        crate::SearchStrategy::Contains | crate::SearchStrategy::Mwapi | crate::SearchStrategy::Wbsearchentities => {
            GraphPattern::Filter {
                expr: all_of(words.iter().map(|w| {
                    Expression::FunctionCall(
                        Function::Contains,
                        vec![lowered_label(), Expression::Literal(Literal::new_simple_literal(w))],
                    )
                })),
                inner: Box::new(joined),
            }
        }
        crate::SearchStrategy::Regex => GraphPattern::Filter {
            expr: all_of(words.iter().map(|w| {
                Expression::FunctionCall(
                    Function::Regex,
                    // Words are lower-case already. `LCASE` rather than the "i" flag: Virtuoso
                    // matches non-ASCII letters case-insensitively only this way.
                    vec![
                        lowered_label(),
                        Expression::Literal(Literal::new_simple_literal(accent_folded_regex(w))),
                    ],
                )
            })),
            inner: Box::new(joined),
        },
    };
    ReadQuery::select(distinct_project(filtered, vec![s, l], Some(limit)))
}

/// The Wikidata Query Service's entity search, as the endpoint calls it:
/// `SELECT ?item ?label WHERE { SERVICE wikibase:mwapi { bd:serviceParam wikibase:api
/// "EntitySearch" ; wikibase:endpoint "<host>" ; mwapi:search "<text>" ; mwapi:language "<lang>" .
/// ?item wikibase:apiOutputItem mwapi:item . ?label wikibase:apiOutput mwapi:label . ?num
/// wikibase:apiOrdinal true } } ORDER BY ?num LIMIT n`. The one SERVICE a query of ours may call:
/// built here, from literals, never from a user's text; [`ReadQuery::parse`] still refuses every
/// SERVICE.
pub fn mwapi_search_query(text: &str, language: &str, host: &str, limit: usize) -> Result<ReadQuery, GraphError> {
    const BD: &str = "http://www.bigdata.com/rdf#serviceParam";
    const WIKIBASE: &str = "http://wikiba.se/ontology#";
    const MWAPI: &str = "https://www.mediawiki.org/ontology#API/";
    let (item, label, num) = (var("item"), var("label"), var("num"));
    let wikibase = |local: &str| named_node(&format!("{WIKIBASE}{local}"));
    let mwapi = |local: &str| named_node(&format!("{MWAPI}{local}"));
    let param = named_node(BD)?;
    let literal = |v: &str| TermPattern::Literal(Literal::new_simple_literal(v));
    let patterns = vec![
        triple(param.clone(), wikibase("api")?, literal("EntitySearch")),
        triple(param.clone(), wikibase("endpoint")?, literal(host)),
        triple(param.clone(), mwapi("search")?, literal(text)),
        triple(
            param,
            mwapi("language")?,
            literal(if language.is_empty() { "en" } else { language }),
        ),
        triple(item.clone(), wikibase("apiOutputItem")?, mwapi("item")?),
        triple(label.clone(), wikibase("apiOutput")?, mwapi("label")?),
        triple(
            num.clone(),
            wikibase("apiOrdinal")?,
            TermPattern::Literal(Literal::from(true)),
        ),
    ];
    let service = GraphPattern::Service {
        name: wikibase("mwapi")?.into(),
        inner: Box::new(bgp(patterns)),
        silent: false,
    };
    // Not through `ReadQuery::new`, which refuses every SERVICE: this one is built above from
    // literals and fixed IRIs only.
    Ok(ReadQuery(Query::Select {
        dataset: None,
        pattern: GraphPattern::Slice {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(GraphPattern::OrderBy {
                    inner: Box::new(service),
                    expression: vec![OrderExpression::Asc(Expression::Variable(num))],
                }),
                variables: vec![item, label],
            }),
            start: 0,
            length: Some(limit),
        },
        base_iri: None,
    }))
}

/// `VALUES ?variable { <iri> … }`.
fn values<'a>(variable: &Variable, iris: impl Iterator<Item = &'a str>) -> Result<GraphPattern, GraphError> {
    Ok(GraphPattern::Values {
        variables: vec![variable.clone()],
        bindings: iris
            .map(|iri| Ok(vec![Some(named_node(iri)?.into())]))
            .collect::<Result<_, GraphError>>()?,
    })
}

/// `SELECT ?s ?l ?lp WHERE { VALUES ?s {…} ?s ?lp ?l FILTER(?lp IN (…)) }`: the labels of some
/// IRIs, with the predicate of each (so the caller can prefer the first configured one). The label
/// predicates are a filter, not a second `VALUES`: Oxigraph joins two `VALUES` blocks with the
/// triple by scanning every label of the graph (1.2 s for 500 IRIs on a 117 K-triple graph, 22 ms
/// with the filter, which reads only the IRIs' own triples).
pub fn labels_query(iris: &[&str], label_predicates: &[String]) -> Result<ReadQuery, GraphError> {
    let (s, lp, l) = (var("s"), var("lp"), var("l"));
    let joined = GraphPattern::Join {
        left: Box::new(values(&s, iris.iter().copied())?),
        right: Box::new(bgp(vec![triple(s.clone(), lp.clone(), l.clone())])),
    };
    let predicates = label_predicates
        .iter()
        .map(|p| Ok(Expression::NamedNode(named_node(p)?)))
        .collect::<Result<Vec<_>, GraphError>>()?;
    ReadQuery::select(GraphPattern::Project {
        inner: Box::new(GraphPattern::Filter {
            expr: Expression::In(Box::new(Expression::Variable(lp.clone())), predicates),
            inner: Box::new(joined),
        }),
        variables: vec![s, l, lp],
    })
}

/// `SELECT ?p ?l ?lp WHERE { VALUES ?p {…} { ?e ?link ?p FILTER(?link IN (links)) } UNION {
/// ?p owl:equivalentProperty ?e } ?e ?lp ?l FILTER(?lp IN (labels)) }`: the labels of the
/// entities that name some predicates (a Wikibase's property entity `wd:P57` names `wdt:P57`,
/// `p:P57`, `ps:P57` and `pq:P57`).
pub fn property_names_query(
    predicates: &[&str],
    links: &[String],
    label_predicates: &[String],
) -> Result<ReadQuery, GraphError> {
    let (p, e, link, lp, l) = (var("p"), var("e"), var("link"), var("lp"), var("l"));
    let named = |list: &[String]| {
        list.iter()
            .map(|x| Ok(Expression::NamedNode(named_node(x)?)))
            .collect::<Result<Vec<_>, GraphError>>()
    };
    let mut linked = GraphPattern::Filter {
        expr: Expression::In(Box::new(Expression::Variable(link.clone())), named(links)?),
        inner: Box::new(bgp(vec![triple(e.clone(), link, p.clone())])),
    };
    if links.iter().any(|x| x == crate::vocabulary::OWL_EQUIVALENT_PROPERTY) {
        linked = GraphPattern::Union {
            left: Box::new(linked),
            right: Box::new(bgp(vec![triple(
                p.clone(),
                named_node(crate::vocabulary::OWL_EQUIVALENT_PROPERTY)?,
                e.clone(),
            )])),
        };
    }
    let joined = GraphPattern::Join {
        left: Box::new(GraphPattern::Join {
            left: Box::new(values(&p, predicates.iter().copied())?),
            right: Box::new(linked),
        }),
        right: Box::new(bgp(vec![triple(e, lp.clone(), l.clone())])),
    };
    ReadQuery::select(GraphPattern::Project {
        inner: Box::new(GraphPattern::Filter {
            expr: Expression::And(
                Box::new(Expression::In(
                    Box::new(Expression::Variable(lp.clone())),
                    named(label_predicates)?,
                )),
                Box::new(Expression::FunctionCall(
                    Function::IsLiteral,
                    vec![Expression::Variable(l.clone())],
                )),
            ),
            inner: Box::new(joined),
        }),
        variables: vec![p, l, lp],
    })
}

/// `SELECT ?s ?c ?l WHERE { VALUES ?s {…} ?s rdf:type ?c OPTIONAL { ?c rdfs:label ?l } } LIMIT n`:
/// the classes of some vertices (by the graph's typing predicates), with the classes' labels
/// where the graph has them (its first label predicate, `rdfs:label` by default).
pub fn classes_query(
    iris: &[&str],
    limit: usize,
    types: crate::TypeVocabulary<'_>,
    label_predicates: &[String],
) -> Result<ReadQuery, GraphError> {
    let (s, c, l) = (var("s"), var("c"), var("l"));
    let typed = GraphPattern::Join {
        left: Box::new(values(&s, iris.iter().copied())?),
        right: Box::new(types.typed(s.clone(), c.clone())?),
    };
    let label = label_predicates
        .first()
        .map_or(crate::settings::RDFS_LABEL, String::as_str);
    let labelled = GraphPattern::LeftJoin {
        left: Box::new(typed),
        right: Box::new(bgp(vec![triple(c.clone(), named_node(label)?, l.clone())])),
        expression: None,
    };
    ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(labelled),
            variables: vec![s, c, l],
        }),
        start: 0,
        length: Some(limit),
    })
}

const RDF_TYPE: &str = crate::vocabulary::RDF_TYPE;

/// `{ subject rdf:type <class> } UNION { subject rdf:type ?instance_type . ?instance_type
/// rdfs:subClassOf+ <class> }`: `subject` is an instance of the class or of one of its subclasses
/// (a `Capital` is a `City` when the graph says `Capital rdfs:subClassOf City`), by the graph's
/// own typing and subclass predicates (`types`: `wdt:P31` and `wdt:P279` on Wikidata). Not the
/// shorter `rdf:type/rdfs:subClassOf*`: Virtuoso 7.2 drops some bound subjects from that path (a
/// film typed `Film` was not found to be one), which the backend tests showed.
pub fn instance_of(
    subject: impl Into<TermPattern>,
    class: &str,
    types: crate::TypeVocabulary<'_>,
) -> Result<GraphPattern, GraphError> {
    let subject = subject.into();
    let class = named_node(class)?;
    let via = var("instance_type");
    let direct = types.typed(subject.clone(), class.clone())?;
    let Some(up) = types.subclass_path(via.clone(), class)? else {
        return Ok(direct);
    };
    Ok(GraphPattern::Union {
        left: Box::new(direct),
        right: Box::new(GraphPattern::Join {
            left: Box::new(types.typed(subject, via)?),
            right: Box::new(up),
        }),
    })
}

/// [`instance_of`] where the class's subclasses are known (`subclasses`: every class under it,
/// as [`subclasses_of_query`] lists them): `{ subject rdf:type ?instance_type FILTER(?instance_type
/// IN (<class>, <sub1>, …)) }`, or the one triple `subject rdf:type <class>` where it has none.
/// The same instances, without a subclass path walked per subject: an existence check of a few
/// thousand vertices walked it for each (300 µs a vertex on a 10 M-triple store).
pub fn listed_instance_of(
    subject: impl Into<TermPattern>,
    class: &str,
    subclasses: &[String],
    types: crate::TypeVocabulary<'_>,
) -> Result<GraphPattern, GraphError> {
    let subject = subject.into();
    if subclasses.is_empty() {
        return types.typed(subject, named_node(class)?);
    }
    let via = var("instance_type");
    let kinds = std::iter::once(class)
        .chain(subclasses.iter().map(String::as_str))
        .map(|iri| named_node(iri).map(Expression::NamedNode))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(GraphPattern::Filter {
        expr: Expression::In(Box::new(Expression::Variable(via.clone())), kinds),
        inner: Box::new(types.typed(subject, via)?),
    })
}

/// `SELECT DISTINCT ?s WHERE { ?s is an instance of <class> } LIMIT n` ([`instance_of`]): some instances
/// of a class.
pub fn instances_query(class: &str, limit: usize, types: crate::TypeVocabulary<'_>) -> Result<ReadQuery, GraphError> {
    let s = var("s");
    ReadQuery::select(distinct_project(
        instance_of(s.clone(), class, types)?,
        vec![s],
        Some(limit),
    ))
}

/// `SELECT DISTINCT ?s WHERE { ?s rdf:type <class> } LIMIT n`: some instances of the class itself,
/// not of its subclasses.
pub fn direct_instances_query(
    class: &str,
    limit: usize,
    types: crate::TypeVocabulary<'_>,
) -> Result<ReadQuery, GraphError> {
    let s = var("s");
    ReadQuery::select(distinct_project(
        types.typed(s.clone(), named_node(class)?)?,
        vec![s],
        Some(limit),
    ))
}

/// `SELECT DISTINCT ?sub WHERE { ?sub rdfs:subClassOf+ <class> } LIMIT n` (the graph's subclass
/// predicates), or `None` where it has none.
pub fn subclasses_of_query(
    class: &str,
    limit: usize,
    types: crate::TypeVocabulary<'_>,
) -> Result<Option<ReadQuery>, GraphError> {
    let sub = var("sub");
    let Some(path) = types.subclass_path(sub.clone(), named_node(class)?)? else {
        return Ok(None);
    };
    ReadQuery::select(distinct_project(path, vec![sub], Some(limit))).map(Some)
}

/// `SELECT DISTINCT ?s WHERE { ?s <predicate> ?o } LIMIT n`: some subjects of a predicate.
pub fn subjects_query(predicate: &str, limit: usize) -> Result<ReadQuery, GraphError> {
    let s = var("s");
    let edge = triple(s.clone(), named_node(predicate)?, var("o"));
    ReadQuery::select(distinct_project(bgp(vec![edge]), vec![s], Some(limit)))
}

/// Edges counted per vertex by [`degrees_query`]: past it a vertex's degree reads "at least this
/// many". A class of 740 000 instances took a second to count, twice per question, on a graph
/// of 10 M triples; what a degree decides (which of two homonyms is the better known) does not
/// need more.
pub const DEGREE_CAP: usize = 100_000;

/// `SELECT ?s (COUNT(*) AS ?n) WHERE { { SELECT ?s WHERE { VALUES ?s {<a>} { ?s ?p ?o } UNION
/// { ?o ?p ?s } } LIMIT cap } UNION … } GROUP BY ?s`: each IRI's edges, counted up to
/// [`DEGREE_CAP`].
pub fn degrees_query(iris: &[&str]) -> Result<ReadQuery, GraphError> {
    let (s, p, o, n) = (var("s"), var("p"), var("o"), var("n"));
    let mut branches = Vec::with_capacity(iris.len());
    for iri in iris {
        let around = GraphPattern::Union {
            left: Box::new(GraphPattern::Bgp {
                patterns: vec![triple(s.clone(), p.clone(), o.clone())],
            }),
            right: Box::new(GraphPattern::Bgp {
                patterns: vec![triple(o.clone(), p.clone(), s.clone())],
            }),
        };
        let capped = GraphPattern::Slice {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(GraphPattern::Join {
                    left: Box::new(values(&s, std::iter::once(*iri))?),
                    right: Box::new(around),
                }),
                variables: vec![s.clone()],
            }),
            start: 0,
            length: Some(DEGREE_CAP),
        };
        branches.push(capped);
    }
    let edges = balanced_union(branches).unwrap_or(GraphPattern::Values {
        variables: vec![s.clone()],
        bindings: Vec::new(),
    });
    let pattern = GraphPattern::Project {
        inner: Box::new(GraphPattern::Group {
            inner: Box::new(edges),
            variables: vec![s.clone()],
            aggregates: vec![(n.clone(), AggregateExpression::CountSolutions { distinct: false })],
        }),
        variables: vec![s, n],
    };
    ReadQuery::select(pattern)
}

/// The union of `patterns` as a balanced tree: hundreds of branches nest only as deep as the
/// logarithm of their number (the query guard bounds nesting).
fn balanced_union(mut patterns: Vec<GraphPattern>) -> Option<GraphPattern> {
    while patterns.len() > 1 {
        let mut paired = Vec::with_capacity(patterns.len().div_ceil(2));
        let mut items = patterns.into_iter();
        while let Some(left) = items.next() {
            paired.push(match items.next() {
                Some(right) => GraphPattern::Union {
                    left: Box::new(left),
                    right: Box::new(right),
                },
                None => left,
            });
        }
        patterns = paired;
    }
    patterns.pop()
}

fn all_of(expressions: impl Iterator<Item = Expression>) -> Expression {
    expressions
        .reduce(|a, b| Expression::And(Box::new(a), Box::new(b)))
        .unwrap_or(Expression::Literal(Literal::from(true)))
}

/// Virtuoso free-text syntax: each word double-quoted, joined with AND; the last word of four or
/// more characters also matches as a prefix. Words contain only letters and digits (see
/// [`search_words`](crate::text::search_words)), so nothing in them is free-text syntax.
fn bif_contains_expression(words: &[String]) -> String {
    let last = words.len().saturating_sub(1);
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == last && w.chars().count() >= 4 {
                format!("\"{w}*\"")
            } else {
                format!("\"{w}\"")
            }
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// Letters and the accented forms a label may write them with.
const ACCENTED: &[(char, &str)] = &[
    ('a', "aàáâãäåāăą"),
    ('c', "cçćĉċč"),
    ('d', "dďđ"),
    ('e', "eèéêëēĕėęě"),
    ('g', "gĝğġģ"),
    ('i', "iìíîïĩīĭįı"),
    ('l', "lĺļľŀł"),
    ('n', "nñńņňŉ"),
    ('o', "oòóôõöøōŏő"),
    ('r', "rŕŗř"),
    ('s', "sśŝşšș"),
    ('t', "tţťŧț"),
    ('u', "uùúûüũūŭůűų"),
    ('y', "yýÿŷ"),
    ('z', "zźżž"),
];

/// Letters of a search word that its REGEX pattern spells out.
const FOLDED_PREFIX: usize = 40;

/// A REGEX pattern for one lower-case search word that matches it with or without accents: each
/// letter (accented or not) becomes the class of its forms ("malmo" and "malmö" both match
/// "malmö"), everything else is escaped. A word longer than [`FOLDED_PREFIX`] letters is
/// matched by its start (each letter's class takes up to 21 bytes; a remote endpoint takes at
/// most `MAX_REMOTE_PATTERN` of them).
pub(crate) fn accent_folded_regex(word: &str) -> String {
    let mut out = String::with_capacity(word.len() * 4);
    for c in word.chars().take(FOLDED_PREFIX) {
        let base = deunicode::deunicode_char(c)
            .and_then(|s| s.chars().next().filter(|b| s.len() == 1 && b.is_ascii_alphabetic()))
            .map(|b| b.to_ascii_lowercase());
        match base.and_then(|b| ACCENTED.iter().find(|(letter, _)| *letter == b)) {
            Some((_, forms)) => {
                out.push('[');
                out.push_str(forms);
                out.push(']');
            }
            None => out.push_str(&regex_escape(&c.to_string())),
        }
    }
    out
}

fn regex_escape(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if "\\.^$|?*+()[]{}-".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::arbitrary::{self, Forbidden};
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::Index;

    const EVIL: &str = "http://e/evil";

    /// The rows `query` gives on `store`.
    fn solutions(store: &oxigraph::store::Store, query: &ReadQuery) -> Vec<oxigraph::sparql::QuerySolution> {
        let oxigraph::sparql::QueryResults::Solutions(rows) = oxigraph::sparql::SparqlEvaluator::new()
            .parse_query(&query.to_string())
            .unwrap()
            .on_store(store)
            .execute()
            .unwrap()
        else {
            panic!("not solutions")
        };
        rows.map(Result::unwrap).collect()
    }

    #[test]
    fn listed_subclasses_find_the_instances_the_subclass_path_finds() {
        use oxigraph::model::{GraphName, NamedNode as Node, Quad};
        let store = oxigraph::store::Store::new().unwrap();
        let node = |n: &str| Node::new_unchecked(format!("http://e/{n}"));
        let rdf_type = Node::new_unchecked(crate::vocabulary::RDF_TYPE);
        let sub = Node::new_unchecked("http://www.w3.org/2000/01/rdf-schema#subClassOf");
        // City > Capital > Old capital; River is no city.
        for (s, p, o) in [
            ("Capital", &sub, "City"),
            ("OldCapital", &sub, "Capital"),
            ("lima", &rdf_type, "Capital"),
            ("kyoto", &rdf_type, "OldCapital"),
            ("cusco", &rdf_type, "City"),
            ("amazon", &rdf_type, "River"),
        ] {
            store
                .insert(&Quad::new(node(s), p.clone(), node(o), GraphName::DefaultGraph))
                .unwrap();
        }
        let rows = |query: &ReadQuery| -> Vec<String> {
            let mut found: Vec<String> = solutions(&store, query)
                .iter()
                .map(|r| r.get("s").unwrap().to_string())
                .collect();
            found.sort();
            found
        };
        let s = var("s");
        let instances = |pattern: GraphPattern| {
            ReadQuery::select(GraphPattern::Project {
                inner: Box::new(pattern),
                variables: vec![s.clone()],
            })
            .unwrap()
        };
        let walked = rows(&instances(
            instance_of(s.clone(), "http://e/City", crate::RDFS_TYPES).unwrap(),
        ));
        assert_eq!(walked, ["<http://e/cusco>", "<http://e/kyoto>", "<http://e/lima>"]);
        let subclasses = ["http://e/Capital".to_owned(), "http://e/OldCapital".to_owned()];
        let listed = instances(listed_instance_of(s.clone(), "http://e/City", &subclasses, crate::RDFS_TYPES).unwrap());
        assert!(listed.to_string().contains(" IN "), "{listed}");
        assert_eq!(rows(&listed), walked);
        // A class with no subclass: the one typing triple.
        let river = instances(listed_instance_of(s.clone(), "http://e/River", &[], crate::RDFS_TYPES).unwrap());
        assert_eq!(rows(&river), ["<http://e/amazon>"]);
    }

    #[test]
    fn degrees_count_both_directions_and_nest_shallowly() {
        use oxigraph::model::{GraphName, NamedNode as Node, Quad};
        let store = oxigraph::store::Store::new().unwrap();
        let node = |n: &str| Node::new_unchecked(format!("http://e/{n}"));
        for (s, o) in [("a", "x"), ("a", "y"), ("a", "z"), ("x", "a"), ("y", "a"), ("b", "x")] {
            store
                .insert(&Quad::new(node(s), node("p"), node(o), GraphName::DefaultGraph))
                .unwrap();
        }
        let query = degrees_query(&["http://e/a", "http://e/b", "http://e/c"]).unwrap();
        let mut found: Vec<(String, String)> = solutions(&store, &query)
            .iter()
            .map(|row| (row.get("s").unwrap().to_string(), row.get("n").unwrap().to_string()))
            .collect();
        found.sort();
        let count = |n: u32| format!("\"{n}\"^^<http://www.w3.org/2001/XMLSchema#integer>");
        assert_eq!(
            found,
            [
                ("<http://e/a>".to_owned(), count(5)),
                ("<http://e/b>".to_owned(), count(1))
            ]
        );
        // Many IRIs: a balanced union, which the query guard's depth bound accepts (read back
        // as text, within the parser's size bound too).
        let iris: Vec<String> = (0..200).map(|i| format!("http://e/v{i}")).collect();
        let refs: Vec<&str> = iris.iter().map(String::as_str).collect();
        let text = degrees_query(&refs).unwrap().to_string();
        ReadQuery::parse(&text).map(|_| ()).unwrap();
        assert_eq!(text.matches("LIMIT 100000").count(), 200);
    }

    #[test]
    fn a_query_names_its_anchors_and_takes_others_in_their_place() {
        let query = ReadQuery::parse(
            "PREFIX e: <http://e/> SELECT (COUNT(?x) AS ?n) WHERE { ?x e:director e:nolan . ?x a e:Film . \
             ?x e:starring ?a FILTER(?a != e:caine) } ",
        )
        .unwrap();
        assert_eq!(query.anchor_iris(&[]), ["http://e/nolan", "http://e/caine"]);
        let replace = std::collections::HashMap::from([
            ("http://e/nolan".to_owned(), "http://e/zemeckis".to_owned()),
            ("http://e/caine".to_owned(), "http://e/hanks".to_owned()),
        ]);
        let other = query.with_iris_replaced(&replace).unwrap();
        assert_eq!(other.anchor_iris(&[]), ["http://e/zemeckis", "http://e/hanks"]);
        let text = other.to_string();
        assert!(
            text.contains("<http://e/director>") && text.contains("<http://e/Film>"),
            "{text}"
        );
        assert!(!text.contains("nolan") && !text.contains("caine"), "{text}");
        let bad = std::collections::HashMap::from([("http://e/nolan".to_owned(), "not an iri".to_owned())]);
        assert!(matches!(
            query.with_iris_replaced(&bad),
            Err(GraphError::InvalidIri { .. })
        ));
    }

    fn refusal(result: Result<ReadQuery, GraphError>) -> String {
        match result {
            Err(GraphError::NotReadOnly { kind }) => kind.to_owned(),
            Err(GraphError::FunctionNotAllowed { iri }) => format!("function <{iri}>"),
            other => panic!("not refused as a read-only violation: {other:?}"),
        }
    }

    /// SERVICE in every place a pattern can hide: the WHERE clause, EXISTS in any expression,
    /// aggregates, subqueries. The ones marked "missed before" passed the guard before it walked
    /// ORDER BY and aggregate arguments.
    #[test]
    fn service_is_refused_wherever_it_hides() {
        const S: &str = "SERVICE <http://e/s> { ?s ?p ?o }";
        for text in [
            // missed before: ORDER BY, aggregate arguments (also in HAVING/ORDER BY), subquery ORDER BY
            format!("SELECT * WHERE {{ ?s ?p ?o }} ORDER BY (EXISTS {{ {S} }})"),
            format!("SELECT * WHERE {{ ?s ?p ?o }} ORDER BY DESC(NOT EXISTS {{ {S} }}) LIMIT 3"),
            format!("SELECT (COUNT(EXISTS {{ {S} }}) AS ?c) WHERE {{ ?s ?p ?o }}"),
            format!("SELECT (MAX(COALESCE(?o, EXISTS {{ {S} }})) AS ?m) WHERE {{ ?s ?p ?o }}"),
            format!(
                "SELECT ?s (GROUP_CONCAT(DISTINCT STR(EXISTS {{ {S} }}); SEPARATOR=',') AS ?g) WHERE {{ ?s ?p ?o }} GROUP BY ?s"
            ),
            format!("SELECT ?s WHERE {{ ?s ?p ?o }} GROUP BY ?s HAVING (COUNT(EXISTS {{ {S} }}) > 0)"),
            format!("SELECT ?s WHERE {{ ?s ?p ?o }} GROUP BY ?s ORDER BY (SUM(IF(EXISTS {{ {S} }}, 1, 0)))"),
            format!("SELECT * WHERE {{ {{ SELECT ?s WHERE {{ ?s ?p ?o }} ORDER BY (EXISTS {{ {S} }}) LIMIT 1 }} }}"),
            format!("ASK {{ {{ SELECT (SAMPLE(EXISTS {{ {S} }}) AS ?x) WHERE {{ ?s ?p ?o }} }} }}"),
            // caught before too; kept so they stay caught
            format!("SELECT * WHERE {{ {S} }}"),
            "SELECT * WHERE { SERVICE SILENT ?endpoint { ?s ?p ?o } }".to_owned(),
            format!("SELECT * WHERE {{ ?s ?p ?o FILTER EXISTS {{ {S} }} }}"),
            format!("SELECT ?s WHERE {{ ?s ?p ?o }} GROUP BY ?s HAVING (EXISTS {{ {S} }})"),
            format!("SELECT ?g WHERE {{ ?s ?p ?o }} GROUP BY (EXISTS {{ {S} }} AS ?g)"),
            format!("SELECT * WHERE {{ ?s ?p ?o BIND(EXISTS {{ {S} }} AS ?b) }}"),
            format!("SELECT * WHERE {{ {{ SELECT ?s WHERE {{ {S} }} }} }}"),
            format!("SELECT * WHERE {{ VALUES ?s {{ <http://e/a> }} {S} }}"),
            format!("SELECT * WHERE {{ ?s ?p ?o OPTIONAL {{ ?o ?q ?r FILTER(EXISTS {{ {S} }}) }} }}"),
            format!("SELECT * WHERE {{ ?s ?p ?o LATERAL {{ {S} }} }}"),
            format!("SELECT * WHERE {{ ?s ?p ?o MINUS {{ {S} }} }}"),
            format!("SELECT * WHERE {{ {{ ?s ?p ?o }} UNION {{ GRAPH ?g {{ {S} }} }} }}"),
            format!("SELECT * WHERE {{ ?s ?p ?o FILTER(STRLEN(STR(EXISTS {{ {S} }})) > 0) }}"),
            format!("SELECT * WHERE {{ ?s ?p ?o FILTER(?o IN (1, EXISTS {{ {S} }})) }}"),
            format!("ASK {{ ?s ?p ?o FILTER(-COALESCE(EXISTS {{ {S} }}) < 0) }}"),
        ] {
            assert_eq!(refusal(ReadQuery::parse(&text)), SERVICE, "{text}");
        }
    }

    /// Deep nesting is a parse error, not a stack overflow in the parser (which aborts the
    /// process). Runs on a 2 MB stack like a tokio worker; before the bound, 1000 levels aborted.
    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let run = || {
            for depth in [1000, 5000] {
                let open = |b: &str| b.repeat(depth);
                for text in [
                    format!("SELECT * WHERE {{ FILTER({}1{}) }}", open("("), open(")")),
                    format!("SELECT * WHERE {}{}", open("{"), open("}")),
                    format!("ASK {{ ?s ?p {}1{} }}", open("("), open(")")),
                ] {
                    let error = ReadQuery::parse(&text).unwrap_err().to_string();
                    assert!(error.contains(&format!("(at most {MAX_NESTING})")), "{error}");
                }
            }
            // Within the bound, nesting still parses.
            let ok = format!("SELECT * WHERE {{ FILTER({}1{}) }}", "(".repeat(60), ")".repeat(60));
            assert!(ReadQuery::parse(&ok).is_ok());
        };
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }

    /// A long flat chain (`1+1+…+1`) nests no bracket, yet parses into an expression as deep as
    /// it is long: 2 000 terms (4 KB) overflowed a 2 MB stack in the parser, the guard's walk,
    /// printing or dropping. Parsed on a large stack of its own, it is now refused for depth.
    #[test]
    fn deep_expressions_are_refused_not_a_stack_overflow() {
        let run = || {
            for n in [2_000usize, 20_000] {
                let text = format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}1) }}", "1+".repeat(n));
                let error = ReadQuery::parse(&text).unwrap_err().to_string();
                assert!(error.contains("nested deeper than"), "{error}");
            }
            let long = format!(
                "SELECT * WHERE {{ ?s ?p ?o FILTER(\"{}\") }}",
                "x".repeat(MAX_QUERY_BYTES)
            );
            assert!(ReadQuery::parse(&long).unwrap_err().to_string().contains("bytes"));
            let fine = format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}1) }}", "1+".repeat(100));
            let query = ReadQuery::parse(&fine).unwrap();
            assert_eq!(query.to_string().matches('+').count(), 100, "{query}");
        };
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }

    /// The same holes in algebra built by code, as `ReadQuery::new` gets it.
    #[test]
    fn service_in_built_algebra_is_refused() {
        let service = GraphPattern::Service {
            name: named_node("http://e/s").unwrap().into(),
            inner: Box::new(bgp(vec![triple(var("s"), var("p"), var("o"))])),
            silent: false,
        };
        let exists = Expression::Exists(Box::new(service.clone()));
        let order = GraphPattern::OrderBy {
            inner: Box::new(bgp(vec![])),
            expression: vec![OrderExpression::Asc(exists.clone())],
        };
        let aggregate = GraphPattern::Group {
            inner: Box::new(bgp(vec![])),
            variables: vec![],
            aggregates: vec![(
                var("c"),
                AggregateExpression::FunctionCall {
                    name: AggregateFunction::Count,
                    expr: exists,
                    distinct: true,
                },
            )],
        };
        for pattern in [service, order, aggregate] {
            assert_eq!(refusal(ReadQuery::select(pattern.clone())), SERVICE, "{pattern:?}");
        }
    }

    /// FROM / FROM NAMED would let some endpoints fetch a remote graph (see the module docs).
    #[test]
    fn dataset_clauses_are_refused() {
        for text in [
            "SELECT * FROM <http://e/remote> WHERE { ?s ?p ?o }",
            "SELECT * FROM NAMED <http://e/remote> WHERE { GRAPH ?g { ?s ?p ?o } }",
            "ASK FROM <http://e/remote> { ?s ?p ?o }",
        ] {
            assert_eq!(refusal(ReadQuery::parse(text)), DATASET, "{text}");
        }
        // GRAPH only picks among the graphs the endpoint holds.
        assert!(ReadQuery::parse("SELECT * WHERE { GRAPH <http://e/g> { ?s ?p ?o } }").is_ok());
    }

    #[test]
    fn only_allowed_extension_functions_pass() {
        for text in [
            "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { ?s ?p ?o FILTER(xsd:integer(?o) > 3) }",
            "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT (xsd:date(?o) AS ?d) WHERE { ?s ?p ?o }",
            "PREFIX bif: <bif:> SELECT * WHERE { ?s ?p ?l FILTER(bif:contains(?l, '\"tom\"')) }",
            "SELECT * WHERE { ?s ?p ?l . ?l <bif:contains> '\"tom\" AND \"hanks*\"' }",
            "SELECT * WHERE { ?s ?p ?o FILTER(REGEX(LCASE(STR(?o)), 'x') && YEAR(NOW()) > 2000) }",
        ] {
            assert!(ReadQuery::parse(text).is_ok(), "{text}");
        }
        for (text, iri) in [
            ("SELECT * WHERE { ?s ?p ?o FILTER(<http://e/evil>(?o)) }", EVIL),
            ("SELECT * WHERE { ?s ?p ?o } ORDER BY (<http://e/evil>(?o))", EVIL),
            ("SELECT * WHERE { ?s ?p ?o BIND(<http://e/evil>() AS ?x) }", EVIL),
            ("SELECT (COUNT(<http://e/evil>(?o)) AS ?c) WHERE { ?s ?p ?o }", EVIL),
            (
                "PREFIX bif: <bif:> SELECT * WHERE { ?s ?p ?o FILTER(bif:sleep(1000)) }",
                "bif:sleep",
            ),
            (
                "PREFIX fn: <http://www.w3.org/2005/xpath-functions#> SELECT (fn:doc('http://e/x') AS ?d) WHERE {}",
                "http://www.w3.org/2005/xpath-functions#doc",
            ),
            ("SELECT * WHERE { FILTER(<http://www.w3.org/2001/XMLSchema#>(1)) }", XSD),
        ] {
            assert_eq!(refusal(ReadQuery::parse(text)), format!("function <{iri}>"), "{text}");
        }
        // A custom aggregate (the parser only knows those it is told about, so built).
        let custom_aggregate = GraphPattern::Group {
            inner: Box::new(bgp(vec![])),
            variables: vec![],
            aggregates: vec![(
                var("c"),
                AggregateExpression::FunctionCall {
                    name: AggregateFunction::Custom(named_node(EVIL).unwrap()),
                    expr: Expression::Variable(var("o")),
                    distinct: false,
                },
            )],
        };
        assert_eq!(
            refusal(ReadQuery::select(custom_aggregate)),
            format!("function <{EVIL}>")
        );
    }

    /// The Virtuoso entity search keeps working: `bif:contains` there is a predicate, not a call.
    #[test]
    fn bif_contains_entity_search_is_read_only() {
        let words = vec!["tom".to_owned(), "hanks".to_owned()];
        let built = entity_search_query(
            &words,
            &[crate::settings::RDFS_LABEL.into()],
            crate::SearchStrategy::BifContains,
            10,
        )
        .unwrap();
        assert!(built.to_string().contains("<bif:contains>"), "{built}");
        assert_eq!(ReadQuery::parse(&built.to_string()).unwrap(), built);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The generator's clean queries pass, and so does their text: so a refusal below is the
        /// inserted thing's doing, and the text path sees the same query.
        #[test]
        fn clean_random_queries_pass(query in arbitrary::query()) {
            let text = query.to_string();
            prop_assert!(ReadQuery::new(query).is_ok());
            let parsed = ReadQuery::parse(&text);
            prop_assert!(parsed.is_ok(), "{text}\n{parsed:?}");
        }

        /// SERVICE at any pattern position, or under EXISTS at any expression position, of a random
        /// query is refused, as algebra and as text.
        #[test]
        fn service_anywhere_is_refused(query in arbitrary::query(), at in any::<Index>(), silent in any::<bool>()) {
            let forbidden = Forbidden::Service { endpoint: "http://e/s".into(), silent };
            let query = arbitrary::insert(query, at, &forbidden);
            let text = query.to_string();
            prop_assert_eq!(refusal(ReadQuery::new(query)), SERVICE, "{}", text);
            prop_assert_eq!(refusal(ReadQuery::parse(&text)), SERVICE, "{}", text);
        }

        /// A call to an extension function outside the allow-list anywhere is refused.
        #[test]
        fn custom_function_anywhere_is_refused(query in arbitrary::query(), at in any::<Index>()) {
            let forbidden = Forbidden::Function { iri: EVIL.into() };
            let query = arbitrary::insert(query, at, &forbidden);
            let text = query.to_string();
            let expected = format!("function <{EVIL}>");
            prop_assert_eq!(refusal(ReadQuery::new(query)), expected.clone(), "{}", text);
            prop_assert_eq!(refusal(ReadQuery::parse(&text)), expected, "{}", text);
        }

        /// Any query with a dataset clause is refused.
        #[test]
        fn dataset_on_any_query_is_refused(query in arbitrary::query(), named in any::<bool>()) {
            let graphs = vec![named_node("http://e/remote").unwrap()];
            let dataset = Some(if named {
                spargebra::algebra::QueryDataset { default: vec![], named: Some(graphs) }
            } else {
                spargebra::algebra::QueryDataset { default: graphs, named: None }
            });
            let query = match query {
                Query::Select { pattern, base_iri, .. } => Query::Select { dataset, pattern, base_iri },
                Query::Ask { pattern, base_iri, .. } => Query::Ask { dataset, pattern, base_iri },
                other => other,
            };
            let text = query.to_string();
            prop_assert_eq!(refusal(ReadQuery::new(query)), DATASET, "{}", text);
            prop_assert_eq!(refusal(ReadQuery::parse(&text)), DATASET, "{}", text);
        }
    }

    /// The smallest LIMIT that bounds a SELECT as it parses back from its text: any slice below
    /// nothing but modifiers that keep or drop rows (ORDER BY, projection, BIND, DISTINCT, REDUCED).
    fn sent_limit(query: &ReadQuery) -> Option<usize> {
        fn limits(pattern: &GraphPattern, found: &mut Vec<usize>) {
            match pattern {
                GraphPattern::Slice { inner, length, .. } => {
                    found.extend(*length);
                    limits(inner, found);
                }
                GraphPattern::OrderBy { inner, .. }
                | GraphPattern::Project { inner, .. }
                | GraphPattern::Distinct { inner }
                | GraphPattern::Reduced { inner }
                | GraphPattern::Extend { inner, .. } => limits(inner, found),
                _ => {}
            }
        }
        let text = query.to_string();
        let Query::Select { pattern, .. } = ReadQuery::parse(&text).unwrap().0 else {
            return None;
        };
        let mut found = Vec::new();
        limits(&pattern, &mut found);
        found.into_iter().min()
    }

    #[test]
    fn capped_pushes_a_limit_and_keeps_smaller_ones() {
        for (text, expected) in [
            ("SELECT ?s WHERE { ?s ?p ?o }", "SELECT ?s WHERE { ?s ?p ?o } LIMIT 11"),
            (
                "SELECT ?s WHERE { ?s ?p ?o } LIMIT 5",
                "SELECT ?s WHERE { ?s ?p ?o } LIMIT 5",
            ),
            (
                "SELECT ?s WHERE { ?s ?p ?o } LIMIT 11",
                "SELECT ?s WHERE { ?s ?p ?o } LIMIT 11",
            ),
            (
                "SELECT ?s WHERE { ?s ?p ?o } LIMIT 500",
                "SELECT ?s WHERE { ?s ?p ?o } LIMIT 11",
            ),
            (
                "SELECT ?s WHERE { ?s ?p ?o } OFFSET 7",
                "SELECT ?s WHERE { ?s ?p ?o } OFFSET 7 LIMIT 11",
            ),
            (
                "SELECT ?s WHERE { ?s ?p ?o } LIMIT 3 OFFSET 7",
                "SELECT ?s WHERE { ?s ?p ?o } OFFSET 7 LIMIT 3",
            ),
            (
                "SELECT DISTINCT ?s WHERE { ?s ?p ?o } ORDER BY DESC(?o)",
                "SELECT DISTINCT ?s WHERE { ?s ?p ?o } ORDER BY DESC(?o) LIMIT 11",
            ),
            (
                "SELECT ?s (STR(?o) AS ?l) WHERE { ?s ?p ?o } LIMIT 99",
                "SELECT ?s (STR(?o) AS ?l) WHERE { ?s ?p ?o } LIMIT 11",
            ),
        ] {
            let query = ReadQuery::parse(text).unwrap();
            let capped = query.capped(10);
            let normalize = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
            let expected_query = ReadQuery::parse(expected).unwrap();
            assert_eq!(
                normalize(&capped.to_string()),
                normalize(&expected_query.to_string()),
                "{text}"
            );
            assert_eq!(capped, expected_query, "{text}");
        }
        // Readable: the same text with a trailing LIMIT (aggregates get random variable names,
        // so this one is compared with its own printing).
        let count = ReadQuery::parse("SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?o }").unwrap();
        assert_eq!(count.capped(10).to_string(), format!("{count} LIMIT 11"));
        let ask = ReadQuery::parse("ASK { ?s ?p ?o }").unwrap();
        assert_eq!(ask.capped(10), ask);
        // A subquery's larger LIMIT is bounded from outside; the inner one is kept.
        let sub = ReadQuery::parse("SELECT ?s WHERE { { SELECT ?s WHERE { ?s ?p ?o } LIMIT 50 } ?s ?q ?r }").unwrap();
        let capped = sub.capped(10);
        assert_eq!(sent_limit(&capped), Some(11), "{capped}");
        assert!(capped.to_string().contains("LIMIT 50"), "{capped}");
        // Under an outer DISTINCT or ORDER BY a subquery's LIMIT is not the query's: it stays, and
        // the whole query is bounded instead (lowering it would change which rows come out).
        for text in [
            "SELECT DISTINCT ?s WHERE { { SELECT ?s ?o WHERE { ?s ?p ?o } LIMIT 100000 } }",
            "SELECT ?s WHERE { { SELECT ?s ?o WHERE { ?s ?p ?o } LIMIT 100000 } } ORDER BY ?o",
        ] {
            let query = ReadQuery::parse(text).unwrap();
            let Query::Select { pattern: original, .. } = query.as_query() else {
                panic!()
            };
            match query.capped(10).as_query() {
                Query::Select {
                    pattern:
                        GraphPattern::Slice {
                            inner,
                            start: 0,
                            length: Some(11),
                        },
                    ..
                } => {
                    assert_eq!(**inner, *original, "{text}");
                }
                other => panic!("{text}: {other}"),
            }
        }
    }

    proptest! {
        /// Whatever the shape of a SELECT, the text sent is bounded by a LIMIT of at most
        /// `max_rows + 1` (usually its own; a subquery's under a BIND is as good); capping twice
        /// changes nothing more.
        #[test]
        fn capped_text_is_always_limited(query in arbitrary::query(), max_rows in 0usize..50) {
            let query = ReadQuery::new(query).unwrap();
            let capped = query.capped(max_rows);
            if query.is_ask() {
                prop_assert_eq!(&capped, &query);
            } else {
                let limit = sent_limit(&capped);
                prop_assert!(limit.is_some_and(|l| l <= max_rows + 1), "{} -> {:?}", capped, limit);
            }
            prop_assert_eq!(capped.capped(max_rows), capped);
        }
    }

    #[test]
    fn only_select_and_ask_pass() {
        assert!(ReadQuery::parse("SELECT * WHERE { ?s ?p ?o }").is_ok());
        assert!(ReadQuery::parse("ASK { ?s ?p ?o }").unwrap().is_ask());
        for (text, kind) in [
            ("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "CONSTRUCT"),
            ("DESCRIBE <http://e/x>", "DESCRIBE"),
            ("DELETE WHERE { ?s ?p ?o }", "an update"),
            ("INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }", "an update"),
            ("DROP ALL", "an update"),
            (
                "SELECT * WHERE { SERVICE <http://evil/sparql> { ?s ?p ?o } }",
                "a federated query (SERVICE)",
            ),
            (
                "SELECT * WHERE { ?s ?p ?o FILTER EXISTS { SERVICE <http://e/s> { ?s ?p ?o } } }",
                "a federated query (SERVICE)",
            ),
        ] {
            match ReadQuery::parse(text) {
                Err(GraphError::NotReadOnly { kind: k }) => assert_eq!(k, kind, "{text}"),
                other => panic!("{text} gave {other:?}"),
            }
        }
        assert!(matches!(
            ReadQuery::parse("SELECT WHERE"),
            Err(GraphError::QueryParse { .. })
        ));
    }

    /// A label full of SPARQL syntax must stay one literal: the query keeps its shape.
    #[test]
    fn hostile_words_cannot_change_the_query_shape() {
        let hostile = "x\" } ; DROP ALL ; SELECT * WHERE { ?a ?b \"\\\n }";
        let words = vec![hostile.to_owned()];
        for strategy in [
            crate::SearchStrategy::Contains,
            crate::SearchStrategy::Regex,
            crate::SearchStrategy::BifContains,
        ] {
            let built = entity_search_query(&words, &[crate::settings::RDFS_LABEL.into()], strategy, 100).unwrap();
            let reparsed = ReadQuery::parse(&built.to_string()).unwrap();
            assert_eq!(
                reparsed, built,
                "round trip changed the query for {strategy:?}: {built}"
            );
            let text = built.to_string();
            assert!(text.trim_end().ends_with("LIMIT 100"), "the LIMIT survived: {text}");
        }
    }

    #[test]
    fn regex_words_are_escaped() {
        assert_eq!(regex_escape("a.b*(c)"), "a\\.b\\*\\(c\\)");
        assert_eq!(accent_folded_regex("x.1"), "x\\.1");
    }

    #[test]
    fn regex_words_match_with_or_without_accents() {
        assert_eq!(accent_folded_regex("malmö"), accent_folded_regex("malmo"));
        assert_eq!(accent_folded_regex("fr"), "f[rŕŗř]");
        let pattern = accent_folded_regex("bogota");
        assert!(pattern.starts_with("b[oòóôõöøōŏő][gĝğġģ]"), "{pattern}");
    }

    #[test]
    fn bif_contains_quotes_words_and_prefixes_the_last() {
        let words = vec!["tom".to_owned(), "hanks".to_owned()];
        assert_eq!(bif_contains_expression(&words), "\"tom\" AND \"hanks*\"");
    }

    #[test]
    fn invalid_iri_is_a_typed_error() {
        assert!(matches!(
            predicates_around_query("not an iri", true, 5),
            Err(GraphError::InvalidIri { .. })
        ));
        assert!(matches!(
            predicates_around_query("http://e/x> } DROP ALL {", true, 5),
            Err(GraphError::InvalidIri { .. })
        ));
    }
}
