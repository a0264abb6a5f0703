//! SPARQL from relation paths, built as spargebra algebra (never text): a path from its anchor
//! becomes a chain of triple patterns through fresh variables (`?x1`, `?x2`, …) to `?answer`, each
//! edge turned the way the graph has it; two anchors' chains join at `?answer`.
//!
//! Forms: SELECT DISTINCT (the answer and the intermediate bindings, which are the answer's
//! provenance), ASK with the end fixed to the other anchor, COUNT(DISTINCT ?answer), and
//! ORDER BY an attribute with LIMIT 1 for superlatives.

use crate::answer::Member;
use crate::candidates::paths::{Hop, RelationPath};
use crate::candidates::values::{Attribute, constrain};
use crate::linking::typed::membership_query;
use crate::qir::Order;
use crate::understanding::form::ValueConstraint;
use chatty_kg_graph::{
    GraphError, NamedNode, ReadQuery, TypeVocabulary, instance_of, listed_instance_of, named_node, triple, var,
};
use serde::{Deserialize, Serialize};
use spargebra::Query;
use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression, Function, GraphPattern, OrderExpression};
use spargebra::term::{Literal, Variable};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

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
    /// The attribute it orders or filters by, and why.
    pub attribute: Option<crate::candidates::values::AttributeReading>,
}

/// The variable a COUNT query binds.
pub const COUNT_VARIABLE: &str = "count";

/// The number a COUNT query bound to [`COUNT_VARIABLE`], if any.
pub fn count_of(results: &chatty_kg_graph::QueryResults) -> Option<u64> {
    match results {
        chatty_kg_graph::QueryResults::Solutions(s) => s.column(COUNT_VARIABLE).find_map(|t| match t {
            chatty_kg_graph::Term::Literal(l) => l.value().parse().ok(),
            _ => None,
        }),
        chatty_kg_graph::QueryResults::Boolean(_) => None,
    }
}

/// The variable every answer query projects first.
pub const ANSWER_VARIABLE: &str = "answer";
/// The superlative's attribute value.
pub const KEY_VARIABLE: &str = "key";
/// The attribute cast to a number.
const SORT_VARIABLE: &str = "sort_key";

const XSD_DOUBLE: &str = "http://www.w3.org/2001/XMLSchema#double";

/// A chain of triple patterns along a path.
pub struct Chain {
    pub patterns: Vec<TriplePattern>,
    /// The intermediate variables, in order.
    pub intermediates: Vec<Variable>,
    /// Terms that must differ: where the path goes out and straight back through one relation
    /// ("films that share a director with X"), it may not come back to where it was (X).
    pub distinct: Vec<(TermPattern, TermPattern)>,
    /// A hop of several predicates ([`Hop::also`]): the variable in its place and the predicates
    /// it takes (`VALUES`).
    pub alternatives: Vec<(Variable, Vec<NamedNode>)>,
}

impl Chain {
    /// The chain's patterns as a graph pattern, each hop of several predicates bound by `VALUES`.
    pub fn pattern(&self) -> GraphPattern {
        with_alternatives(
            GraphPattern::Bgp {
                patterns: self.patterns.clone(),
            },
            &self.alternatives,
        )
    }
}

/// `inner` joined with `VALUES ?p { <a> <b> }` for each hop of several predicates, the values
/// first (the engine starts from the few predicates, not from every edge).
fn with_alternatives(inner: GraphPattern, alternatives: &[(Variable, Vec<NamedNode>)]) -> GraphPattern {
    alternatives.iter().rev().fold(inner, |inner, (variable, predicates)| {
        join(
            GraphPattern::Values {
                variables: vec![variable.clone()],
                bindings: predicates
                    .iter()
                    .map(|p| vec![Some(spargebra::term::GroundTerm::NamedNode(p.clone()))])
                    .collect(),
            },
            inner,
        )
    })
}

/// The chain's patterns from `anchor` along `hops`, intermediate variables named `{prefix}1…`,
/// ending at `end`; a hop of several predicates is a variable `{prefix}p1…` among the
/// intermediates, which its solutions bind to the predicate that holds (the provenance's).
pub fn chain(anchor: &str, hops: &[Hop], prefix: &str, end: TermPattern) -> Result<Chain, GraphError> {
    let mut patterns = Vec::with_capacity(hops.len());
    let mut intermediates = Vec::new();
    let mut alternatives = Vec::new();
    let mut previous: TermPattern = named_node(anchor)?.into();
    let mut nodes = vec![previous.clone()];
    for (i, hop) in hops.iter().enumerate() {
        let next: TermPattern = if i + 1 == hops.len() {
            end.clone()
        } else {
            let v = var(&format!("{prefix}{}", i + 1));
            intermediates.push(v.clone());
            v.into()
        };
        let predicate: NamedNodePattern = if hop.also.is_empty() {
            named_node(&hop.predicate)?.into()
        } else {
            let v = var(&format!("{prefix}p{}", i + 1));
            let predicates = hop.predicates().map(named_node).collect::<Result<Vec<_>, _>>()?;
            alternatives.push((v.clone(), predicates));
            intermediates.push(v.clone());
            v.into()
        };
        patterns.push(if hop.forward {
            triple(previous, predicate, next.clone())
        } else {
            triple(next.clone(), predicate, previous)
        });
        nodes.push(next.clone());
        previous = next;
    }
    let distinct = (1..hops.len())
        .filter(|&i| hops[i - 1].predicate == hops[i].predicate && hops[i - 1].forward != hops[i].forward)
        .map(|i| (nodes[i - 1].clone(), nodes[i + 1].clone()))
        .collect();
    Ok(Chain {
        patterns,
        intermediates,
        distinct,
        alternatives,
    })
}

/// `inner` filtered so that each pair of terms differs.
fn differing(inner: GraphPattern, pairs: &[(TermPattern, TermPattern)]) -> GraphPattern {
    let expression = |t: &TermPattern| match t {
        TermPattern::Variable(v) => Some(Expression::Variable(v.clone())),
        TermPattern::NamedNode(n) => Some(Expression::NamedNode(n.clone())),
        _ => None,
    };
    pairs
        .iter()
        .fold(inner, |inner, (a, b)| match (expression(a), expression(b)) {
            (Some(a), Some(b)) => GraphPattern::Filter {
                expr: Expression::Not(Box::new(Expression::SameTerm(Box::new(a), Box::new(b)))),
                inner: Box::new(inner),
            },
            _ => inner,
        })
}

/// What to ask of one or two chains.
#[derive(Debug, Clone)]
pub enum Shape {
    /// The answers and their intermediate bindings; `distinct_only` projects only the answers.
    List { distinct_only: bool },
    /// COUNT(DISTINCT ?answer), the anchors excluded.
    Count { exclude: Vec<String> },
    /// ORDER BY the attribute reached by `attribute` (or the answer itself), LIMIT `take`.
    Superlative {
        attribute: Option<Hop>,
        order: Order,
        numeric: bool,
        /// Rows skipped: "the *second* highest" is 1.
        offset: usize,
        /// Rows kept: "the *three* largest" 3; 0 keeps all, in order ("from oldest to newest").
        take: usize,
    },
}

/// A SELECT over `paths` (each `(anchor IRI, path)`), joined at `?answer`.
pub fn select(paths: &[(&str, &RelationPath)], shape: &Shape) -> Result<CandidateQuery, GraphError> {
    select_in(paths, shape, None)
}

/// [`select`] with the answers held to `class`, when given ("which *cities* …"): instances of it
/// or of its subclasses ([`of_class`]).
pub fn select_in(
    paths: &[(&str, &RelationPath)],
    shape: &Shape,
    class: Option<ClassFilter<'_>>,
) -> Result<CandidateQuery, GraphError> {
    select_with(paths, shape, class, None)
}

/// [`select_in`] with the answers' attribute held to a value the question writes, when given
/// ([`crate::candidates::values`]).
pub fn select_with(
    paths: &[(&str, &RelationPath)],
    shape: &Shape,
    class: Option<ClassFilter<'_>>,
    constraint: Option<(&Attribute, &ValueConstraint)>,
) -> Result<CandidateQuery, GraphError> {
    let answer = var(ANSWER_VARIABLE);
    let mut patterns = Vec::new();
    let mut intermediates = Vec::new();
    let mut predicates = Vec::new();
    let mut distinct = Vec::new();
    let mut sides = Vec::new();
    for (i, (anchor, path)) in paths.iter().enumerate() {
        let prefix = ["x", "y", "z"].get(i).copied().unwrap_or("w");
        let chain = chain(anchor, &path.hops, prefix, answer.clone().into())?;
        let mut bound = vec![answer.clone()];
        bound.extend(chain.intermediates.iter().cloned());
        sides.push((chain.patterns.clone(), chain.alternatives, bound));
        patterns.extend(chain.patterns);
        intermediates.extend(chain.intermediates);
        distinct.extend(chain.distinct);
        predicates.extend(path.hops.iter().flat_map(Hop::predicates).map(str::to_owned));
    }
    let key = var(KEY_VARIABLE);
    let mut ordered_by = Vec::new();
    if let Shape::Superlative {
        attribute: Some(hop), ..
    } = shape
    {
        ordered_by.push(triple(answer.clone(), named_node(&hop.predicate)?, key.clone()));
        predicates.push(hop.predicate.clone());
    }
    let mut core = if let [(side, alternatives, _)] = sides.as_slice() {
        let mut side = side.clone();
        side.extend(ordered_by.iter().cloned());
        with_alternatives(GraphPattern::Bgp { patterns: side }, alternatives)
    } else {
        // Two anchors' chains meet at the answer: each is evaluated on its own from its anchor
        // (a subquery) and the two joined on the answer, not one chain walked from every row of
        // the other ("scripts with characters in the Greek and Coptic block and in the Coptic
        // block": the second chain read every character of each script the first reached, 240
        // ms; apart, 135 and 123 rows and a join, 10 ms).
        let joined = sides
            .into_iter()
            .map(|(side, alternatives, variables)| GraphPattern::Project {
                inner: Box::new(with_alternatives(GraphPattern::Bgp { patterns: side }, &alternatives)),
                variables,
            })
            .reduce(join)
            .unwrap_or(GraphPattern::Bgp { patterns: Vec::new() });
        if ordered_by.is_empty() {
            joined
        } else {
            join(
                joined,
                GraphPattern::Bgp {
                    patterns: ordered_by.clone(),
                },
            )
        }
    };
    patterns.extend(ordered_by);
    if let Some(class) = class {
        core = of_class(core, &answer, class)?;
    }
    if let Some((attribute, constraint)) = constraint {
        let (filtered, edges) = constrain(core, &answer, attribute, constraint)?;
        core = filtered;
        patterns.extend(edges);
        predicates.extend(attribute.via.iter().map(|h| h.predicate.clone()));
        predicates.push(attribute.hop.predicate.clone());
    }
    let bgp = differing(core, &distinct);
    shaped(bgp, shape, intermediates, predicates, patterns)
}

/// The values whose attribute meets a constraint, held to `class` when the question names one
/// ("which organizations were founded in 1950", "who was born in 1945"): a list or a count.
pub fn over_values(
    class: Option<&str>,
    shape: &Shape,
    attribute: &Attribute,
    constraint: &ValueConstraint,
    types: TypeVocabulary<'_>,
) -> Result<CandidateQuery, GraphError> {
    let answer = var(ANSWER_VARIABLE);
    let core = match class {
        Some(class) => instance_of(answer.clone(), class, types)?,
        None => GraphPattern::Bgp { patterns: Vec::new() },
    };
    let (filtered, edges) = constrain(core, &answer, attribute, constraint)?;
    let mut predicates: Vec<String> = attribute.via.iter().map(|h| h.predicate.clone()).collect();
    predicates.push(attribute.hop.predicate.clone());
    shaped(filtered, shape, Vec::new(), predicates, edges)
}

/// A SELECT over the instances of `class` alone, as `?answer`: "how many countries are there",
/// "list the cities", "which is the largest city" (ORDER BY `shape`'s attribute).
pub fn over_class(class: &str, shape: &Shape, types: TypeVocabulary<'_>) -> Result<CandidateQuery, GraphError> {
    let answer = var(ANSWER_VARIABLE);
    let mut core = instance_of(answer.clone(), class, types)?;
    let mut patterns = Vec::new();
    let mut predicates = Vec::new();
    if let Shape::Superlative {
        attribute: Some(hop), ..
    } = shape
    {
        let attribute = triple(answer, named_node(&hop.predicate)?, var(KEY_VARIABLE));
        core = join(
            core,
            GraphPattern::Bgp {
                patterns: vec![attribute.clone()],
            },
        );
        patterns.push(attribute);
        predicates.push(hop.predicate.clone());
    }
    shaped(core, shape, Vec::new(), predicates, patterns)
}

/// A SELECT over whatever has `shape`'s attribute, as `?answer`, ordered by it: the vertices it
/// runs over are joined in by the caller (an earlier answer's members, [`over_set`]). Through
/// `via`, the attribute of what each relates to: `?answer <via> ?through . ?through <attribute>
/// ?key` ("which one of those was added most recently": the release year of the version that
/// introduced each).
pub fn by_attribute(via: Option<&Hop>, shape: &Shape) -> Result<CandidateQuery, GraphError> {
    let Shape::Superlative {
        attribute: Some(hop), ..
    } = shape
    else {
        return Err(GraphError::Evaluation {
            message: "an order by an attribute needs the attribute".into(),
        });
    };
    let (mut patterns, mut predicates, mut intermediates) = (Vec::new(), Vec::new(), Vec::new());
    let holder = match via {
        Some(via) => {
            let through = var("through");
            patterns.push(triple(
                var(ANSWER_VARIABLE),
                named_node(&via.predicate)?,
                through.clone(),
            ));
            predicates.push(via.predicate.clone());
            intermediates.push(through.clone());
            through
        }
        None => var(ANSWER_VARIABLE),
    };
    patterns.push(triple(holder, named_node(&hop.predicate)?, var(KEY_VARIABLE)));
    predicates.push(hop.predicate.clone());
    let core = GraphPattern::Bgp {
        patterns: patterns.clone(),
    };
    shaped(core, shape, intermediates, predicates, patterns)
}

/// The class a query's answers are held to ("which *cities* …"), and how strictly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassFilter<'a> {
    pub iri: &'a str,
    /// The graph types some of the path's values as something else: the class selects among
    /// them, and only its instances answer. Otherwise every typed value the path reaches is of
    /// the class, and a value of no class at all stays (the graph does not say it is not one).
    pub strict: bool,
    /// How the graph types things (`rdf:type`, a Wikibase's "instance of").
    pub types: TypeVocabulary<'a>,
    /// Every class under it, where they were listed ([`listed_subclasses`]): each answer's types
    /// are looked up among them instead of walking the subclass path from each (a two-anchor
    /// join's class filter walked it per row: 270–340 ms on the unicode dialogues).
    pub subclasses: Option<&'a [String]>,
}

/// Classes under a class listed for its checks at most: past it (or when their query is cut)
/// the store walks the subclass path per vertex.
pub const LISTED_SUBCLASSES: usize = 200;

/// The query listing every class under `class` (`rdfs:subClassOf+`, the graph's own subclass
/// predicates), one more than [`LISTED_SUBCLASSES`]; `None` where the graph has no subclass
/// predicate (the class has none).
pub fn listed_subclasses_query(class: &str, types: TypeVocabulary<'_>) -> Result<Option<ReadQuery>, GraphError> {
    chatty_kg_graph::subclasses_of_query(class, LISTED_SUBCLASSES + 1, types)
}

/// The classes [`listed_subclasses_query`] found, or `None` when there were more than
/// [`LISTED_SUBCLASSES`] (or a row was no IRI): the subclass path is walked then.
pub fn listed_subclasses(results: &chatty_kg_graph::QueryResults) -> Option<Vec<String>> {
    let chatty_kg_graph::QueryResults::Solutions(s) = results else {
        return None;
    };
    let listed: Vec<String> = s.iris("sub").map(str::to_owned).collect();
    (s.rows.len() <= LISTED_SUBCLASSES && listed.len() == s.rows.len()).then_some(listed)
}

/// `inner` with `?answer` held to the class: an instance of it (or of a subclass), or, unless
/// strict, a vertex of no class at all. A graph's types are seldom complete (a film without
/// `rdf:type`), so a missing type is no evidence against a value where the class is all the
/// path reaches; where the path also reaches other kinds of things ("all swimmers born in
/// Moscow" among the people born there), only the instances answer.
/// `FILTER(EXISTS { ?answer is an instance of <class> } [|| !EXISTS { ?answer rdf:type ?t }])`.
pub(crate) fn of_class(
    inner: GraphPattern,
    answer: &Variable,
    class: ClassFilter<'_>,
) -> Result<GraphPattern, GraphError> {
    let check = ClassCheck {
        iri: class.iri,
        subclasses: class.subclasses,
        types: class.types,
    };
    let member = Expression::Exists(Box::new(check.instance(answer)?));
    let expr = if class.strict {
        member
    } else {
        let typed = class.types.typed(answer.clone(), var("answer_type"))?;
        Expression::Or(
            Box::new(member),
            Box::new(Expression::Not(Box::new(Expression::Exists(Box::new(typed))))),
        )
    };
    Ok(GraphPattern::Filter {
        expr,
        inner: Box::new(inner),
    })
}

pub(crate) fn join(left: GraphPattern, right: GraphPattern) -> GraphPattern {
    GraphPattern::Join {
        left: Box::new(left),
        right: Box::new(right),
    }
}

/// The query of `shape` over `bgp`, whose solutions bind `?answer` (and `?key`, for a
/// superlative with an attribute).
pub(crate) fn shaped(
    bgp: GraphPattern,
    shape: &Shape,
    intermediates: Vec<Variable>,
    predicates: Vec<String>,
    patterns: Vec<TriplePattern>,
) -> Result<CandidateQuery, GraphError> {
    let answer = var(ANSWER_VARIABLE);
    let key = var(KEY_VARIABLE);
    let pattern = match shape {
        Shape::List { distinct_only } => {
            let mut variables = vec![answer];
            if !distinct_only {
                variables.extend(intermediates);
            }
            GraphPattern::Distinct {
                inner: Box::new(GraphPattern::Project {
                    inner: Box::new(bgp),
                    variables,
                }),
            }
        }
        Shape::Count { exclude } => {
            let mut inner = bgp;
            for iri in exclude {
                inner = GraphPattern::Filter {
                    expr: Expression::Not(Box::new(Expression::SameTerm(
                        Box::new(Expression::Variable(answer.clone())),
                        Box::new(Expression::NamedNode(named_node(iri)?)),
                    ))),
                    inner: Box::new(inner),
                };
            }
            // Prints as a sub-select: spargebra does not fold aggregates into the projection.
            GraphPattern::Project {
                inner: Box::new(GraphPattern::Group {
                    inner: Box::new(inner),
                    variables: vec![],
                    aggregates: vec![(
                        var(COUNT_VARIABLE),
                        AggregateExpression::FunctionCall {
                            name: AggregateFunction::Count,
                            expr: Expression::Variable(answer),
                            distinct: true,
                        },
                    )],
                }),
                variables: vec![var(COUNT_VARIABLE)],
            }
        }
        Shape::Superlative {
            attribute,
            order,
            numeric,
            offset,
            take,
        } => {
            let sort_by = if attribute.is_some() {
                key.clone()
            } else {
                answer.clone()
            };
            let mut expression = Expression::Variable(sort_by.clone());
            let mut bgp = bgp;
            if *numeric {
                // Plain-string numbers ("7.5") sort as numbers only once cast; a value that does
                // not cast would sort first (unbound), so it is left out.
                let cast = var(SORT_VARIABLE);
                bgp = GraphPattern::Filter {
                    expr: Expression::Bound(cast.clone()),
                    inner: Box::new(GraphPattern::Extend {
                        inner: Box::new(bgp),
                        variable: cast.clone(),
                        expression: Expression::FunctionCall(
                            Function::Custom(NamedNode::new_unchecked(XSD_DOUBLE)),
                            vec![Expression::Variable(sort_by)],
                        ),
                    }),
                };
                expression = Expression::Variable(cast);
            }
            let mut variables = vec![answer];
            if attribute.is_some() {
                variables.push(key);
            }
            // Several answers in order: each once (an answer reached through two intermediates
            // would take two of the rows).
            if *take == 1 {
                variables.extend(intermediates);
            }
            GraphPattern::Slice {
                inner: Box::new(GraphPattern::Distinct {
                    inner: Box::new(GraphPattern::Project {
                        inner: Box::new(GraphPattern::OrderBy {
                            inner: Box::new(bgp),
                            expression: vec![match order {
                                Order::Asc => OrderExpression::Asc(expression),
                                Order::Desc => OrderExpression::Desc(expression),
                            }],
                        }),
                        variables,
                    }),
                }),
                start: *offset,
                length: (*take > 0).then_some(*take),
            }
        }
    };
    Ok(CandidateQuery {
        attribute: None,
        query: ReadQuery::select(pattern)?,
        predicates,
        patterns,
    })
}

/// The variable that takes the members of an answer set in the place of its representative.
pub const MEMBER_VARIABLE: &str = "member";

/// `candidate` over a set of values instead of one (VALUES, never text):
/// - [`SetScope::Filter`]: every pattern group that binds `?answer` is joined with
///   `VALUES ?answer {members}` ("which of them …");
/// - [`SetScope::Anchor`]: the representative vertex becomes `?member`, joined with
///   `VALUES ?member {members}` and projected where answers are listed ("when were they
///   released"), so each answer's provenance names its member.
pub fn over_set(candidate: CandidateQuery, scope: SetScope<'_>) -> Result<CandidateQuery, GraphError> {
    use spargebra::term::GroundTerm;
    let (variable, members, representative) = match scope {
        SetScope::Filter { members } => (var(ANSWER_VARIABLE), members, None),
        SetScope::Anchor {
            representative,
            members,
        } => (var(MEMBER_VARIABLE), members, Some(named_node(representative)?)),
    };
    let term = |m: &Member| -> Result<Option<GroundTerm>, GraphError> {
        Ok(Some(if m.iri {
            GroundTerm::NamedNode(named_node(&m.value)?)
        } else if representative.is_some() {
            // A literal cannot stand where a vertex does.
            return Ok(None);
        } else {
            GroundTerm::Literal(match &m.datatype {
                Some(datatype) => Literal::new_typed_literal(&m.value, named_node(datatype)?),
                None => Literal::new_simple_literal(&m.value),
            })
        }))
    };
    let mut bindings = Vec::with_capacity(members.len());
    for m in members {
        if let Some(t) = term(m)? {
            bindings.push(vec![Some(t)]);
        }
    }
    let values = GraphPattern::Values {
        variables: vec![variable.clone()],
        bindings,
    };
    let rewrite = SetRewrite {
        variable: &variable,
        values: &values,
        representative: representative.as_ref(),
    };
    let query = match candidate.query.as_query().clone() {
        Query::Select {
            dataset,
            pattern,
            base_iri,
        } => Query::Select {
            dataset,
            pattern: rewrite.pattern(pattern),
            base_iri,
        },
        Query::Ask {
            dataset,
            pattern,
            base_iri,
        } => Query::Ask {
            dataset,
            pattern: rewrite.pattern(pattern),
            base_iri,
        },
        other => other,
    };
    Ok(CandidateQuery {
        attribute: candidate.attribute,
        query: ReadQuery::new(query)?,
        predicates: candidate.predicates,
        patterns: candidate.patterns.into_iter().map(|p| rewrite.triple(p)).collect(),
    })
}

/// What an answer set replaces (see [`over_set`]): its IRIs and literals (a literal only
/// filters answers; it cannot stand in a vertex's place).
#[derive(Debug, Clone, Copy)]
pub enum SetScope<'a> {
    Filter {
        members: &'a [Member],
    },
    Anchor {
        representative: &'a str,
        members: &'a [Member],
    },
}

struct SetRewrite<'a> {
    variable: &'a Variable,
    values: &'a GraphPattern,
    representative: Option<&'a NamedNode>,
}

impl SetRewrite<'_> {
    fn term(&self, t: TermPattern) -> TermPattern {
        match (&t, self.representative) {
            (TermPattern::NamedNode(n), Some(r)) if n == r => self.variable.clone().into(),
            _ => t,
        }
    }

    fn triple(&self, p: TriplePattern) -> TriplePattern {
        TriplePattern {
            subject: self.term(p.subject),
            predicate: p.predicate,
            object: self.term(p.object),
        }
    }

    fn expression(&self, e: Expression) -> Expression {
        let b = |e: Box<Expression>| Box::new(self.expression(*e));
        match e {
            Expression::NamedNode(n) if Some(&n) == self.representative => Expression::Variable(self.variable.clone()),
            Expression::SameTerm(a, c) => Expression::SameTerm(b(a), b(c)),
            Expression::Equal(a, c) => Expression::Equal(b(a), b(c)),
            Expression::Not(a) => Expression::Not(b(a)),
            Expression::And(a, c) => Expression::And(b(a), b(c)),
            Expression::Or(a, c) => Expression::Or(b(a), b(c)),
            other => other,
        }
    }

    fn binds(&self, patterns: &[TriplePattern]) -> bool {
        let v = TermPattern::Variable(self.variable.clone());
        patterns.iter().any(|p| p.subject == v || p.object == v)
    }

    fn pattern(&self, p: GraphPattern) -> GraphPattern {
        let b = |p: Box<GraphPattern>| Box::new(self.pattern(*p));
        match p {
            GraphPattern::Bgp { patterns } => {
                let patterns: Vec<TriplePattern> = patterns.into_iter().map(|p| self.triple(p)).collect();
                if self.binds(&patterns) {
                    GraphPattern::Join {
                        left: Box::new(self.values.clone()),
                        right: Box::new(GraphPattern::Bgp { patterns }),
                    }
                } else {
                    GraphPattern::Bgp { patterns }
                }
            }
            GraphPattern::Join { left, right } => GraphPattern::Join {
                left: b(left),
                right: b(right),
            },
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
            } => GraphPattern::LeftJoin {
                left: b(left),
                right: b(right),
                expression: expression.map(|e| self.expression(e)),
            },
            GraphPattern::Filter { expr, inner } => GraphPattern::Filter {
                expr: self.expression(expr),
                inner: b(inner),
            },
            GraphPattern::Union { left, right } => GraphPattern::Union {
                left: b(left),
                right: b(right),
            },
            GraphPattern::Extend {
                inner,
                variable,
                expression,
            } => GraphPattern::Extend {
                inner: b(inner),
                variable,
                expression: self.expression(expression),
            },
            GraphPattern::OrderBy { inner, expression } => GraphPattern::OrderBy {
                inner: b(inner),
                expression,
            },
            GraphPattern::Project { inner, mut variables } => {
                // Listed answers name their member; a count or a grouped projection does not.
                let grouped = matches!(*inner, GraphPattern::Group { .. });
                if self.representative.is_some() && !grouped && !variables.contains(self.variable) {
                    variables.push(self.variable.clone());
                }
                GraphPattern::Project {
                    inner: b(inner),
                    variables,
                }
            }
            GraphPattern::Distinct { inner } => GraphPattern::Distinct { inner: b(inner) },
            GraphPattern::Reduced { inner } => GraphPattern::Reduced { inner: b(inner) },
            GraphPattern::Slice { inner, start, length } => GraphPattern::Slice {
                inner: b(inner),
                start,
                length,
            },
            GraphPattern::Group {
                inner,
                variables,
                aggregates,
            } => GraphPattern::Group {
                inner: b(inner),
                variables,
                aggregates,
            },
            other => other,
        }
    }
}

/// Rows of a path's join whose ends [`class_reach`] and [`class_outsiders`] look at, at most: a
/// path out of a hub ("a company's 4,280 employees → their birth places → what has its
/// headquarters there") joins tens of thousands of rows on the way to a thousand ends; the
/// checks are of the ends the first rows reach, a sample whose cost does not grow with the hub.
pub const PATH_SAMPLE: usize = 10_000;

/// `SELECT (COUNT(*) AS ?count) WHERE { { SELECT ?answer WHERE { { SELECT DISTINCT ?answer
/// WHERE { { SELECT ?answer WHERE { anchor path ?answer } LIMIT sample } } } ?answer is an
/// instance of <class> } LIMIT cap } }`: how many instances of `class` the path reaches among
/// the ends of its first [`PATH_SAMPLE`] rows (with no class, how many values), counted up to
/// `cap`; the anchor itself not, at the end of a path of several hops. The class is asked of
/// each distinct end once, after the join: asked of every row of it, the count above took 1.4 s
/// on a 223 K-triple graph.
pub fn class_reach(
    anchor: &str,
    path: &RelationPath,
    class: Option<ClassCheck<'_>>,
    cap: usize,
) -> Result<ReadQuery, GraphError> {
    let answer = var(ANSWER_VARIABLE);
    // A longer path back at its anchor reaches the anchor, which is no instance the path finds
    // (a question about X asks for things other than X).
    let rows = sampled_rows(anchor, path, &answer, path.hops.len() > 1)?;
    let ends = |length: usize| GraphPattern::Slice {
        inner: Box::new(GraphPattern::Distinct {
            inner: Box::new(rows.clone()),
        }),
        start: 0,
        length: Some(length),
    };
    let capped = match class {
        Some(class) => GraphPattern::Slice {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(member_of(ends(PATH_SAMPLE), &answer, class)?),
                variables: vec![answer.clone()],
            }),
            start: 0,
            length: Some(cap),
        },
        None => ends(cap),
    };
    ReadQuery::select(GraphPattern::Project {
        inner: Box::new(GraphPattern::Group {
            inner: Box::new(capped),
            variables: vec![],
            aggregates: vec![(
                var(COUNT_VARIABLE),
                AggregateExpression::CountSolutions { distinct: false },
            )],
        }),
        variables: vec![var(COUNT_VARIABLE)],
    })
}

/// The variable [`class_neighbours`] binds to each predicate.
pub const PREDICATE_VARIABLE: &str = "predicate";

/// `SELECT ?predicate (COUNT(DISTINCT ?answer) AS ?count) WHERE { <anchor> ?predicate ?answer .
/// ?answer is an instance of <class> } GROUP BY ?predicate` (or `?answer ?predicate <anchor>`
/// when `forward` is false): every relation by which one hop from the anchor reaches instances of
/// the class, with how many, in one query ("the highest *mountain* in Italy": the relations from
/// Italy that reach mountains, however the path search's ranking ordered them).
///
/// With `others`, the values counted are those the graph types as something else than the class
/// instead (`?answer rdf:type ?t FILTER NOT EXISTS { ?answer is an instance of <class> }`): where
/// there are any, the class selects among the relation's values.
pub fn class_neighbours(
    anchor: &str,
    class: ClassCheck<'_>,
    forward: bool,
    others: bool,
) -> Result<ReadQuery, GraphError> {
    let (answer, predicate) = (var(ANSWER_VARIABLE), var(PREDICATE_VARIABLE));
    let anchor = named_node(anchor)?;
    let edge = if forward {
        triple(anchor, predicate.clone(), answer.clone())
    } else {
        triple(answer.clone(), predicate.clone(), anchor)
    };
    let reached = if others {
        outside_class(GraphPattern::Bgp { patterns: vec![edge] }, &answer, class)?
    } else {
        member_of(GraphPattern::Bgp { patterns: vec![edge] }, &answer, class)?
    };
    ReadQuery::select(GraphPattern::Project {
        inner: Box::new(GraphPattern::Group {
            inner: Box::new(reached),
            variables: vec![predicate.clone()],
            aggregates: vec![(
                var(COUNT_VARIABLE),
                AggregateExpression::FunctionCall {
                    name: AggregateFunction::Count,
                    expr: Expression::Variable(answer),
                    distinct: true,
                },
            )],
        }),
        variables: vec![predicate, var(COUNT_VARIABLE)],
    })
}

/// A class as the path search's queries check it: the vertices the graph types as it or, with
/// `subclasses` listed (every class under it, [`chatty_kg_graph::subclasses_of_query`]), as one of
/// those; unlisted (too many, or their query was cut), the store walks the subclass path from
/// each vertex's types ([`instance_of`]). The same instances either way.
#[derive(Debug, Clone, Copy)]
pub struct ClassCheck<'a> {
    pub iri: &'a str,
    pub subclasses: Option<&'a [String]>,
    /// How the graph types things (`rdf:type`, a Wikibase's "instance of").
    pub types: TypeVocabulary<'a>,
}

impl ClassCheck<'_> {
    /// `subject` is an instance of the class.
    fn instance(&self, subject: &Variable) -> Result<GraphPattern, GraphError> {
        match self.subclasses {
            Some(subclasses) => listed_instance_of(subject.clone(), self.iri, subclasses, self.types),
            None => instance_of(subject.clone(), self.iri, self.types),
        }
    }
}

/// `inner` where `?answer` is an instance of `class`, as a filter on what `inner` binds
/// (`FILTER EXISTS`), never a join with every instance of the class: a class of 34 000
/// members joined with a path's few answers is a cross product on an engine that evaluates the
/// two sides apart.
fn member_of(inner: GraphPattern, answer: &Variable, class: ClassCheck<'_>) -> Result<GraphPattern, GraphError> {
    Ok(GraphPattern::Filter {
        expr: Expression::Exists(Box::new(class.instance(answer)?)),
        inner: Box::new(inner),
    })
}

/// `inner` joined with `?answer rdf:type ?t`, where `?answer` is no instance of `class`.
fn outside_class(inner: GraphPattern, answer: &Variable, class: ClassCheck<'_>) -> Result<GraphPattern, GraphError> {
    let typed = class.types.typed(answer.clone(), var("other_type"))?;
    Ok(GraphPattern::Filter {
        expr: Expression::Not(Box::new(Expression::Exists(Box::new(class.instance(answer)?)))),
        inner: Box::new(join(inner, typed)),
    })
}

/// `SELECT ?answer WHERE { anchor path ?answer . ?answer rdf:type ?t . FILTER NOT EXISTS {
/// ?answer is an instance of <class> } } LIMIT 1`: whether the path reaches something the graph
/// types as another kind of thing ([`ClassFilter::strict`]).
pub fn class_outsiders(anchor: &str, path: &RelationPath, class: ClassCheck<'_>) -> Result<ReadQuery, GraphError> {
    let answer = var(ANSWER_VARIABLE);
    // The ends of the path's first rows, each once (as [`class_reach`] counts them): asked of
    // every row of an out-and-back join from a hub ("Limerick Lake → country → everything in
    // that country → its country"), one outsider took 14 s to find.
    let reached = GraphPattern::Distinct {
        inner: Box::new(sampled_rows(anchor, path, &answer, false)?),
    };
    ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(outside_class(reached, &answer, class)?),
            variables: vec![answer],
        }),
        start: 0,
        length: Some(1),
    })
}

/// `SELECT ?answer WHERE { anchor path ?answer } LIMIT` [`PATH_SAMPLE`]: the ends of a path's
/// first rows (with `not_anchor`, never the anchor itself), what its class checks look at.
fn sampled_rows(
    anchor: &str,
    path: &RelationPath,
    answer: &Variable,
    not_anchor: bool,
) -> Result<GraphPattern, GraphError> {
    let chain = chain(anchor, &path.hops, "x", answer.clone().into())?;
    let mut distinct = chain.distinct.clone();
    if not_anchor {
        distinct.push((TermPattern::NamedNode(named_node(anchor)?), answer.clone().into()));
    }
    Ok(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(differing(chain.pattern(), &distinct)),
            variables: vec![answer.clone()],
        }),
        start: 0,
        length: Some(PATH_SAMPLE),
    })
}

/// Values of a relation [`relation_outsiders`] looks at, at most: where every value is of the
/// class, the check would otherwise read the whole relation (150 ms for one relation of a
/// 10 M-triple store, asked cold by every process); 10,000 of them took 420 ms at 50 M.
pub const RELATION_SAMPLE: usize = 2_000;

/// `SELECT ?answer WHERE { { SELECT DISTINCT ?answer WHERE { ?s <predicate> ?answer } LIMIT
/// sample } ?answer rdf:type ?t . FILTER NOT EXISTS { ?answer is an instance of <class> } } LIMIT
/// 1` (`?answer <predicate> ?s` when the hop runs towards the anchor, `forward` false): whether
/// the relation, among its first [`RELATION_SAMPLE`] values in the graph, holds of something
/// the graph types as another kind than the class. Where it does ("born in": actors, swimmers,
/// horses), the class selects among the relation's values, and a value of no class at all is
/// not one the graph says is of it ([`ClassFilter::strict`]).
pub fn relation_outsiders(predicate: &str, forward: bool, class: ClassCheck<'_>) -> Result<ReadQuery, GraphError> {
    let answer = var(ANSWER_VARIABLE);
    let other = var("other_end");
    let edge = if forward {
        triple(other, named_node(predicate)?, answer.clone())
    } else {
        triple(answer.clone(), named_node(predicate)?, other)
    };
    let sample = GraphPattern::Slice {
        inner: Box::new(GraphPattern::Distinct {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(GraphPattern::Bgp { patterns: vec![edge] }),
                variables: vec![answer.clone()],
            }),
        }),
        start: 0,
        length: Some(RELATION_SAMPLE),
    };
    ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(outside_class(sample, &answer, class)?),
            variables: vec![answer],
        }),
        start: 0,
        length: Some(1),
    })
}

pub use crate::linking::typed::TYPE_VARIABLE;

/// [`membership_query`] as a candidate: whether `entity` is of `class`, with the type that makes
/// it one.
pub fn membership(entity: &str, class: &str, types: TypeVocabulary<'_>) -> Result<CandidateQuery, GraphError> {
    Ok(CandidateQuery {
        attribute: None,
        query: membership_query(entity, class, types)?,
        predicates: types.type_iris(),
        patterns: types
            .typed_triple(named_node(entity)?, var(TYPE_VARIABLE))?
            .into_iter()
            .collect(),
    })
}

/// `ASK { anchor path other }`: does the path lead from one anchor to the other?
pub fn ask(anchor: &str, path: &RelationPath, other: &str) -> Result<CandidateQuery, GraphError> {
    let chain = chain(anchor, &path.hops, "x", named_node(other)?.into())?;
    let query = ReadQuery::new(Query::Ask {
        dataset: None,
        // The parser's shape for ASK (a projection of nothing), which prints as `ASK { … }`.
        pattern: GraphPattern::Project {
            inner: Box::new(differing(chain.pattern(), &chain.distinct)),
            variables: vec![],
        },
        base_iri: None,
    })?;
    Ok(CandidateQuery {
        attribute: None,
        query,
        predicates: path.hops.iter().flat_map(Hop::predicates).map(str::to_owned).collect(),
        patterns: chain.patterns,
    })
}

/// `SELECT * WHERE { … } LIMIT 1` of an ASK's pattern: the bindings that made it true (the
/// predicate a hop of several took, a multi-hop path's vertices), for its provenance.
pub fn witness(candidate: &CandidateQuery) -> Result<Option<CandidateQuery>, GraphError> {
    let Query::Ask { pattern, .. } = candidate.query.as_query() else {
        return Ok(None);
    };
    let inner = match pattern {
        GraphPattern::Project { inner, .. } => inner.as_ref().clone(),
        other => other.clone(),
    };
    let mut variables: Vec<Variable> = Vec::new();
    for p in &candidate.patterns {
        let named = [&p.subject, &p.object].into_iter().filter_map(|t| match t {
            TermPattern::Variable(v) => Some(v.clone()),
            _ => None,
        });
        let predicate = match &p.predicate {
            NamedNodePattern::Variable(v) => Some(v.clone()),
            NamedNodePattern::NamedNode(_) => None,
        };
        for v in named.chain(predicate) {
            if !variables.contains(&v) {
                variables.push(v);
            }
        }
    }
    if variables.is_empty() {
        return Ok(None);
    }
    Ok(Some(CandidateQuery {
        query: ReadQuery::select(GraphPattern::Slice {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(inner),
                variables,
            }),
            start: 0,
            length: Some(1),
        })?,
        ..candidate.clone()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidates::paths::EndKind;

    fn path(hops: &[(&str, bool)]) -> RelationPath {
        RelationPath {
            anchor: 0,
            hops: hops
                .iter()
                .map(|(p, forward)| Hop {
                    predicate: format!("http://e/{p}"),
                    label: (*p).to_owned(),
                    forward: *forward,
                    also: Vec::new(),
                })
                .collect(),
            end: EndKind::Entity,
            reached: 1,
            endpoints: Vec::new(),
        }
    }

    fn member(value: &str, iri: bool, datatype: Option<&str>) -> Member {
        Member {
            value: value.into(),
            label: value.into(),
            iri,
            datatype: datatype.map(str::to_owned),
        }
    }

    #[test]
    fn an_answer_set_filters_with_values_or_takes_the_place_of_its_representative() {
        let p = path(&[("released", true)]);
        let list = select(&[("http://e/A", &p)], &Shape::List { distinct_only: false }).unwrap();
        let members = [
            member("http://e/A", true, None),
            member("1994", false, Some("http://www.w3.org/2001/XMLSchema#gYear")),
            member("x\" } DROP ALL", false, None),
        ];
        let filtered = over_set(list.clone(), SetScope::Filter { members: &members }).unwrap();
        let text = filtered.query.to_string();
        assert!(text.contains("VALUES ( ?answer ) { ( <http://e/A> )"), "{text}");
        assert!(
            text.contains(r#""1994"^^<http://www.w3.org/2001/XMLSchema#gYear>"#),
            "{text}"
        );
        // Literal text stays a literal: the query parses back to the same algebra.
        assert_eq!(ReadQuery::parse(&text).unwrap().as_query(), filtered.query.as_query());
        assert!(text.contains("<http://e/A> <http://e/released> ?answer"), "{text}");

        let anchored = over_set(
            list,
            SetScope::Anchor {
                representative: "http://e/A",
                members: &members,
            },
        )
        .unwrap();
        let text = anchored.query.to_string();
        assert!(text.contains("VALUES ( ?member ) { ( <http://e/A> )"), "{text}");
        assert!(
            !text.contains("1994") && !text.contains("DROP"),
            "literals cannot stand for a vertex: {text}"
        );
        assert!(text.contains("?member <http://e/released> ?answer"), "{text}");
        assert!(text.starts_with("SELECT DISTINCT ?answer ?member"), "{text}");
        assert_eq!(
            anchored.patterns[0].subject,
            TermPattern::Variable(var(MEMBER_VARIABLE))
        );

        // A count keeps its one projected variable.
        let count = select(&[("http://e/A", &p)], &Shape::Count { exclude: Vec::new() }).unwrap();
        let text = over_set(
            count,
            SetScope::Anchor {
                representative: "http://e/A",
                members: &members,
            },
        )
        .unwrap()
        .query
        .to_string();
        assert!(
            text.contains("COUNT(DISTINCT ?answer)") && !text.contains("?count ?member"),
            "{text}"
        );
    }

    #[test]
    fn chains_turn_backward_edges_and_join_at_the_answer() {
        let p = path(&[("directedBy", false), ("language", true)]);
        let q = select(&[("http://e/Zwick", &p)], &Shape::List { distinct_only: false }).unwrap();
        let text = q.query.to_string();
        assert!(text.contains("?x1 <http://e/directedBy> <http://e/Zwick>"), "{text}");
        assert!(text.contains("?x1 <http://e/language> ?answer"), "{text}");
        assert!(text.starts_with("SELECT DISTINCT ?answer ?x1"), "{text}");
        let other = path(&[("starring", false)]);
        let joined = select(
            &[("http://e/Zwick", &p), ("http://e/Ana", &other)],
            &Shape::List { distinct_only: true },
        )
        .unwrap();
        assert!(
            joined
                .query
                .to_string()
                .contains("?answer <http://e/starring> <http://e/Ana>")
        );
        assert_eq!(joined.patterns.len(), 3);
        let asked = ask("http://e/Zwick", &p, "http://e/Greek").unwrap();
        assert!(asked.query.is_ask());
        assert!(
            asked
                .query
                .to_string()
                .contains("?x1 <http://e/language> <http://e/Greek>")
        );
        let counted = select(
            &[("http://e/Zwick", &p)],
            &Shape::Count {
                exclude: vec!["http://e/Zwick".into()],
            },
        )
        .unwrap();
        let text = counted.query.to_string();
        assert!(
            text.contains("COUNT(DISTINCT ?answer)") && text.contains("sameTerm"),
            "{text}"
        );
        // Out and straight back: not back to the anchor.
        let shared = path(&[("genre", true), ("genre", false), ("author", true)]);
        let text = select(&[("http://e/Hero", &shared)], &Shape::List { distinct_only: true })
            .unwrap()
            .query
            .to_string();
        assert!(text.contains("FILTER(!sameTerm(<http://e/Hero>, ?x2))"), "{text}");
        // The class a longer path reaches is counted without its anchor; one hop's as it is.
        let around = path(&[("neighbour", false), ("neighbour", false)]);
        let text = class_reach(
            "http://e/Hero",
            &around,
            Some(ClassCheck {
                iri: "http://e/City",
                subclasses: None,
                types: chatty_kg_graph::RDFS_TYPES,
            }),
            10,
        )
        .unwrap()
        .to_string();
        assert!(text.contains("FILTER(!sameTerm(<http://e/Hero>, ?answer))"), "{text}");
        // The class is asked of the distinct ends of the first rows, not of every row.
        let (sample, class) = (
            text.find(&format!("LIMIT {PATH_SAMPLE}")).unwrap(),
            text.find("EXISTS").unwrap(),
        );
        assert!(sample < class, "{text}");
        let outsiders = class_outsiders(
            "http://e/Hero",
            &around,
            ClassCheck {
                iri: "http://e/City",
                subclasses: None,
                types: chatty_kg_graph::RDFS_TYPES,
            },
        )
        .unwrap()
        .to_string();
        let (sample, class) = (
            outsiders.find(&format!("LIMIT {PATH_SAMPLE}")).unwrap(),
            outsiders.find("NOT EXISTS").unwrap(),
        );
        assert!(sample < class, "{outsiders}");
        let text = class_reach(
            "http://e/Hero",
            &path(&[("neighbour", false)]),
            Some(ClassCheck {
                iri: "http://e/City",
                subclasses: None,
                types: chatty_kg_graph::RDFS_TYPES,
            }),
            10,
        )
        .unwrap()
        .to_string();
        assert!(!text.contains("sameTerm(<http://e/Hero>, ?answer)"), "{text}");
        // Hostile IRIs are typed errors, never query text.
        assert!(
            select(
                &[("http://e/x> } DROP ALL {", &p)],
                &Shape::List { distinct_only: true }
            )
            .is_err()
        );
    }
}
