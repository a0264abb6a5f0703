//! Random spargebra algebra for the read-only guard's property tests (test builds only).
//!
//! [`query`] builds clean SELECT/ASK queries from every kind of pattern and expression the guard
//! walks, nested: joins, OPTIONAL with a filter, LATERAL, UNION, MINUS, FILTER, BIND, GRAPH, VALUES,
//! property paths, subqueries with ORDER BY/DISTINCT/REDUCED/LIMIT, GROUP BY with aggregates, and
//! expressions with EXISTS, IN, IF, COALESCE, built-in functions, XSD casts and `bif:contains`.
//! [`insert`] then puts one [`Forbidden`] thing at any pattern or expression position.
//!
//! The trees are shaped so that spargebra prints them as SPARQL it parses back, with the inserted
//! thing still in it: BIND targets, aggregate names and VALUES variables are fresh (SPARQL refuses
//! rebinding a variable), unary operators get a `COALESCE` operand (`--x` and `!!x` do not parse)
//! and solution modifiers come only in the order a subquery has them (the printer would merge two
//! ORDER BYs into one and lose the other).

use proptest::prelude::*;
use proptest::sample::Index;
use spargebra::Query;
use spargebra::algebra::{
    AggregateExpression, AggregateFunction, Expression, Function, GraphPattern, OrderExpression, PropertyPathExpression,
};
use spargebra::term::{GroundTerm, Literal, NamedNode, NamedNodePattern, TermPattern, TriplePattern, Variable};

/// Pattern variables; fresh ones are named `b0`, `b1`, …
const VARIABLES: [&str; 4] = ["s", "p", "o", "x"];
const IRIS: [&str; 3] = ["http://e/a", "http://e/b", "http://e/c"];

/// What [`insert`] puts into a clean query.
#[derive(Debug, Clone)]
pub(crate) enum Forbidden {
    /// `SERVICE <endpoint> { … }` at a pattern position, `COALESCE(e, EXISTS { SERVICE … })` at an
    /// expression position.
    Service { endpoint: String, silent: bool },
    /// A call to `<iri>(…)`: `FILTER(<iri>(?s))` at a pattern position, `<iri>(e)` at an expression one.
    Function { iri: String },
}

/// A clean query: SELECT or ASK over a random pattern.
pub(crate) fn query() -> impl Strategy<Value = Query> {
    (pattern(), any::<bool>()).prop_map(|(mut pattern, ask)| {
        freshen(&mut pattern);
        if ask {
            Query::Ask {
                dataset: None,
                pattern,
                base_iri: None,
            }
        } else {
            Query::Select {
                dataset: None,
                pattern,
                base_iri: None,
            }
        }
    })
}

/// The number of pattern and expression positions in `query`.
pub(crate) fn positions(query: &mut Query) -> usize {
    let mut count = 0;
    walk(root(query), &mut |site| {
        if !matches!(site, Site::Alias(_)) {
            count += 1;
        }
    });
    count
}

/// `query` with `forbidden` at the position `at` picks (pre-order over patterns and expressions).
pub(crate) fn insert(mut query: Query, at: Index, forbidden: &Forbidden) -> Query {
    let target = at.index(positions(&mut query));
    let mut seen = 0;
    walk(root(&mut query), &mut |site| {
        if matches!(site, Site::Alias(_)) {
            return;
        }
        seen += 1;
        if seen - 1 != target {
            return;
        }
        match site {
            Site::Pattern(p) => {
                let inner = Box::new(std::mem::take(p));
                *p = match forbidden {
                    Forbidden::Service { endpoint, silent } => GraphPattern::Service {
                        name: NamedNodePattern::NamedNode(NamedNode::new_unchecked(endpoint)),
                        inner,
                        silent: *silent,
                    },
                    Forbidden::Function { iri } => GraphPattern::Filter {
                        expr: Expression::FunctionCall(
                            Function::Custom(NamedNode::new_unchecked(iri)),
                            vec![Expression::Variable(Variable::new_unchecked("s"))],
                        ),
                        inner,
                    },
                };
            }
            Site::Expression(e) => {
                let old = std::mem::replace(e, Expression::Bound(Variable::new_unchecked("s")));
                *e = match forbidden {
                    Forbidden::Service { endpoint, silent } => Expression::Coalesce(vec![
                        old,
                        Expression::Exists(Box::new(GraphPattern::Service {
                            name: NamedNodePattern::NamedNode(NamedNode::new_unchecked(endpoint)),
                            inner: Box::new(GraphPattern::default()),
                            silent: *silent,
                        })),
                    ]),
                    Forbidden::Function { iri } => {
                        Expression::FunctionCall(Function::Custom(NamedNode::new_unchecked(iri)), vec![old])
                    }
                };
            }
            Site::Alias(_) => {}
        }
    });
    query
}

fn root(query: &mut Query) -> &mut GraphPattern {
    match query {
        Query::Select { pattern, .. }
        | Query::Ask { pattern, .. }
        | Query::Construct { pattern, .. }
        | Query::Describe { pattern, .. } => pattern,
    }
}

/// Renames every BIND target, aggregate name and VALUES variable to a fresh `?bN`.
fn freshen(pattern: &mut GraphPattern) {
    let mut next = 0;
    walk(pattern, &mut |site| {
        if let Site::Alias(variable) = site {
            *variable = Variable::new_unchecked(format!("b{next}"));
            next += 1;
        }
    });
}

enum Site<'a> {
    Pattern(&'a mut GraphPattern),
    Expression(&'a mut Expression),
    /// A variable a pattern binds: BIND target, aggregate name, VALUES variable.
    Alias(&'a mut Variable),
}

/// Visits every pattern, expression and bound variable, pre-order (a node before its children,
/// and the children of what the visitor left in its place).
fn walk(pattern: &mut GraphPattern, visit: &mut dyn FnMut(Site<'_>)) {
    visit(Site::Pattern(pattern));
    match pattern {
        GraphPattern::Bgp { patterns: _ }
        | GraphPattern::Path {
            subject: _,
            path: _,
            object: _,
        } => {}
        GraphPattern::Values { variables, bindings: _ } => variables.iter_mut().for_each(|v| visit(Site::Alias(v))),
        GraphPattern::Join { left, right }
        | GraphPattern::Lateral { left, right }
        | GraphPattern::Union { left, right }
        | GraphPattern::Minus { left, right } => {
            walk(left, visit);
            walk(right, visit);
        }
        GraphPattern::LeftJoin {
            left,
            right,
            expression,
        } => {
            walk(left, visit);
            walk(right, visit);
            if let Some(e) = expression {
                walk_expression(e, visit);
            }
        }
        GraphPattern::Filter { expr, inner } => {
            walk(inner, visit);
            walk_expression(expr, visit);
        }
        GraphPattern::Extend {
            inner,
            variable,
            expression,
        } => {
            walk(inner, visit);
            visit(Site::Alias(variable));
            walk_expression(expression, visit);
        }
        GraphPattern::OrderBy { inner, expression } => {
            walk(inner, visit);
            for order in expression {
                let (OrderExpression::Asc(e) | OrderExpression::Desc(e)) = order;
                walk_expression(e, visit);
            }
        }
        GraphPattern::Group {
            inner,
            variables: _,
            aggregates,
        } => {
            walk(inner, visit);
            for (variable, aggregate) in aggregates {
                visit(Site::Alias(variable));
                match aggregate {
                    AggregateExpression::CountSolutions { distinct: _ } => {}
                    AggregateExpression::FunctionCall {
                        name: _,
                        expr,
                        distinct: _,
                    } => walk_expression(expr, visit),
                }
            }
        }
        GraphPattern::Graph { name: _, inner }
        | GraphPattern::Project { inner, variables: _ }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice {
            inner,
            start: _,
            length: _,
        }
        | GraphPattern::Service {
            name: _,
            inner,
            silent: _,
        } => walk(inner, visit),
    }
}

fn walk_expression(expression: &mut Expression, visit: &mut dyn FnMut(Site<'_>)) {
    visit(Site::Expression(expression));
    match expression {
        Expression::NamedNode(_) | Expression::Literal(_) | Expression::Variable(_) | Expression::Bound(_) => {}
        Expression::Exists(p) => walk(p, visit),
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
            walk_expression(a, visit);
            walk_expression(b, visit);
        }
        Expression::In(a, list) => {
            walk_expression(a, visit);
            list.iter_mut().for_each(|e| walk_expression(e, visit));
        }
        Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => walk_expression(a, visit),
        Expression::If(a, b, c) => {
            walk_expression(a, visit);
            walk_expression(b, visit);
            walk_expression(c, visit);
        }
        Expression::Coalesce(list) | Expression::FunctionCall(_, list) => {
            list.iter_mut().for_each(|e| walk_expression(e, visit));
        }
    }
}

// ----- strategies -----

fn variable() -> impl Strategy<Value = Variable> + Clone {
    prop::sample::select(VARIABLES.to_vec()).prop_map(Variable::new_unchecked)
}

/// A placeholder for a variable [`freshen`] renames.
fn alias() -> Variable {
    Variable::new_unchecked("fresh")
}

fn iri() -> impl Strategy<Value = NamedNode> + Clone {
    prop::sample::select(IRIS.to_vec()).prop_map(NamedNode::new_unchecked)
}

fn literal() -> impl Strategy<Value = Literal> + Clone {
    prop_oneof![
        "[a-z]{0,5}".prop_map(Literal::new_simple_literal),
        (0_i64..100).prop_map(Literal::from),
    ]
}

fn term(with_literals: bool) -> BoxedStrategy<TermPattern> {
    let named = prop_oneof![
        variable().prop_map(TermPattern::from),
        iri().prop_map(TermPattern::from)
    ];
    if with_literals {
        prop_oneof![named, literal().prop_map(TermPattern::from)].boxed()
    } else {
        named.boxed()
    }
}

fn triple() -> impl Strategy<Value = TriplePattern> {
    (
        term(false),
        prop_oneof![
            variable().prop_map(NamedNodePattern::from),
            iri().prop_map(NamedNodePattern::from)
        ],
        term(true),
    )
        .prop_map(|(subject, predicate, object)| TriplePattern {
            subject,
            predicate,
            object,
        })
}

fn path() -> impl Strategy<Value = PropertyPathExpression> {
    iri()
        .prop_map(PropertyPathExpression::NamedNode)
        .prop_recursive(2, 6, 2, |inner| {
            prop_oneof![
                inner.clone().prop_map(|p| PropertyPathExpression::Reverse(Box::new(p))),
                inner
                    .clone()
                    .prop_map(|p| PropertyPathExpression::ZeroOrMore(Box::new(p))),
                inner
                    .clone()
                    .prop_map(|p| PropertyPathExpression::OneOrMore(Box::new(p))),
                inner
                    .clone()
                    .prop_map(|p| PropertyPathExpression::ZeroOrOne(Box::new(p))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| PropertyPathExpression::Sequence(Box::new(a), Box::new(b))),
                (inner.clone(), inner).prop_map(|(a, b)| PropertyPathExpression::Alternative(Box::new(a), Box::new(b))),
                prop::collection::vec(iri(), 1..3).prop_map(PropertyPathExpression::NegatedPropertySet),
            ]
        })
}

fn leaf_pattern() -> impl Strategy<Value = GraphPattern> + Clone {
    prop_oneof![
        prop::collection::vec(triple(), 0..3).prop_map(|patterns| GraphPattern::Bgp { patterns }),
        (term(false), path(), term(true)).prop_map(|(subject, path, object)| GraphPattern::Path {
            subject,
            path,
            object
        }),
        prop::collection::vec(
            prop_oneof![
                Just(None),
                iri().prop_map(|i| Some(GroundTerm::NamedNode(i))),
                literal().prop_map(|l| Some(GroundTerm::Literal(l))),
            ],
            1..3
        )
        .prop_map(|column| GraphPattern::Values {
            variables: vec![alias()],
            bindings: column.into_iter().map(|value| vec![value]).collect(),
        }),
    ]
}

fn boxed(p: GraphPattern) -> Box<GraphPattern> {
    Box::new(p)
}

/// Patterns of every kind, nested; the expressions in them may hold patterns again (EXISTS).
fn pattern() -> BoxedStrategy<GraphPattern> {
    leaf_pattern()
        .prop_recursive(5, 64, 3, |inner| {
            let expr = expression(inner.clone());
            let two = (inner.clone(), inner.clone());
            prop_oneof![
                two.clone().prop_map(|(l, r)| GraphPattern::Join {
                    left: boxed(l),
                    right: boxed(r)
                }),
                two.clone().prop_map(|(l, r)| GraphPattern::Union {
                    left: boxed(l),
                    right: boxed(r)
                }),
                two.clone().prop_map(|(l, r)| GraphPattern::Minus {
                    left: boxed(l),
                    right: boxed(r)
                }),
                two.clone().prop_map(|(l, r)| GraphPattern::Lateral {
                    left: boxed(l),
                    right: boxed(r)
                }),
                (inner.clone(), inner.clone(), prop::option::of(expr.clone())).prop_map(|(l, r, expression)| {
                    GraphPattern::LeftJoin {
                        left: boxed(l),
                        right: boxed(r),
                        expression,
                    }
                }),
                (expr.clone(), inner.clone()).prop_map(|(expr, p)| GraphPattern::Filter { expr, inner: boxed(p) }),
                (inner.clone(), expr.clone()).prop_map(|(p, expression)| GraphPattern::Extend {
                    inner: boxed(p),
                    variable: alias(),
                    expression,
                }),
                (
                    prop_oneof![
                        variable().prop_map(NamedNodePattern::from),
                        iri().prop_map(NamedNodePattern::from)
                    ],
                    inner.clone()
                )
                    .prop_map(|(name, p)| GraphPattern::Graph { name, inner: boxed(p) }),
                (
                    inner.clone(),
                    prop::sample::subsequence(VARIABLES.to_vec(), 0..=2),
                    prop::collection::vec(aggregate(expr.clone()), 1..3),
                )
                    .prop_map(|(p, variables, aggregates)| GraphPattern::Group {
                        inner: boxed(p),
                        variables: variables.into_iter().map(Variable::new_unchecked).collect(),
                        aggregates: aggregates.into_iter().map(|a| (alias(), a)).collect(),
                    }),
                subquery(inner, expr),
            ]
        })
        .boxed()
}

/// `{ SELECT [DISTINCT|REDUCED] ?v… WHERE { … } [ORDER BY …] [LIMIT/OFFSET] }`, in the algebra's
/// order: Slice(Distinct|Reduced(Project(OrderBy(inner)))).
fn subquery(
    inner: BoxedStrategy<GraphPattern>,
    expr: BoxedStrategy<Expression>,
) -> impl Strategy<Value = GraphPattern> {
    let order = prop::collection::vec(
        (any::<bool>(), expr).prop_map(|(asc, e)| {
            if asc {
                OrderExpression::Asc(e)
            } else {
                OrderExpression::Desc(e)
            }
        }),
        0..3,
    );
    (
        inner,
        order,
        prop::sample::subsequence(VARIABLES.to_vec(), 1..=3),
        0_u8..3,
        prop::option::of((0_usize..3, prop::option::of(1_usize..10))),
    )
        .prop_map(|(p, order, variables, modifier, slice)| {
            // Printed, a subquery's modifiers are read off its outermost nodes down to the first
            // other one: an inner subquery right below would give its own to this one.
            let p = if is_subquery(&p) {
                GraphPattern::Join {
                    left: boxed(GraphPattern::default()),
                    right: boxed(p),
                }
            } else {
                p
            };
            let ordered = if order.is_empty() {
                p
            } else {
                GraphPattern::OrderBy {
                    inner: boxed(p),
                    expression: order,
                }
            };
            let projected = GraphPattern::Project {
                inner: boxed(ordered),
                variables: variables.into_iter().map(Variable::new_unchecked).collect(),
            };
            let modified = match modifier {
                0 => projected,
                1 => GraphPattern::Distinct {
                    inner: boxed(projected),
                },
                _ => GraphPattern::Reduced {
                    inner: boxed(projected),
                },
            };
            match slice {
                Some((start, length)) => GraphPattern::Slice {
                    inner: boxed(modified),
                    start,
                    length,
                },
                None => modified,
            }
        })
}

fn is_subquery(p: &GraphPattern) -> bool {
    matches!(
        p,
        GraphPattern::Slice { .. }
            | GraphPattern::Distinct { .. }
            | GraphPattern::Reduced { .. }
            | GraphPattern::Project { .. }
            | GraphPattern::OrderBy { .. }
    )
}

fn aggregate(expr: BoxedStrategy<Expression>) -> impl Strategy<Value = AggregateExpression> {
    let name = prop_oneof![
        Just(AggregateFunction::Count),
        Just(AggregateFunction::Sum),
        Just(AggregateFunction::Avg),
        Just(AggregateFunction::Min),
        Just(AggregateFunction::Max),
        Just(AggregateFunction::Sample),
        prop::option::of(Just(", ".to_owned())).prop_map(|separator| AggregateFunction::GroupConcat { separator }),
    ];
    prop_oneof![
        any::<bool>().prop_map(|distinct| AggregateExpression::CountSolutions { distinct }),
        (name, expr, any::<bool>()).prop_map(|(name, expr, distinct)| AggregateExpression::FunctionCall {
            name,
            expr,
            distinct
        }),
    ]
}

fn call(function: Function, arguments: Vec<Expression>) -> Expression {
    Expression::FunctionCall(function, arguments)
}

fn custom(iri: &str) -> Function {
    Function::Custom(NamedNode::new_unchecked(iri))
}

/// Expressions of every kind, nested, with `pattern` under EXISTS.
fn expression(pattern: BoxedStrategy<GraphPattern>) -> BoxedStrategy<Expression> {
    let leaf = prop_oneof![
        variable().prop_map(Expression::Variable),
        literal().prop_map(Expression::Literal),
        iri().prop_map(Expression::NamedNode),
        variable().prop_map(Expression::Bound),
    ];
    leaf.prop_recursive(3, 16, 3, move |e| {
        let b = || e.clone().prop_map(Box::new);
        let binary = (0_u8..12, b(), b()).prop_map(|(op, a, b)| match op {
            0 => Expression::Or(a, b),
            1 => Expression::And(a, b),
            2 => Expression::Equal(a, b),
            3 => Expression::SameTerm(a, b),
            4 => Expression::Greater(a, b),
            5 => Expression::GreaterOrEqual(a, b),
            6 => Expression::Less(a, b),
            7 => Expression::LessOrEqual(a, b),
            8 => Expression::Add(a, b),
            9 => Expression::Subtract(a, b),
            10 => Expression::Multiply(a, b),
            _ => Expression::Divide(a, b),
        });
        // A COALESCE operand prints as a primary expression, which is what `-`, `+` and `!` take.
        let unary = (0_u8..3, e.clone()).prop_map(|(op, a)| {
            let a = Box::new(Expression::Coalesce(vec![a]));
            match op {
                0 => Expression::UnaryPlus(a),
                1 => Expression::UnaryMinus(a),
                _ => Expression::Not(a),
            }
        });
        let one = (0_u8..6, e.clone()).prop_map(|(f, a)| match f {
            0 => call(Function::Str, vec![a]),
            1 => call(Function::LCase, vec![a]),
            2 => call(Function::StrLen, vec![a]),
            3 => call(Function::IsIri, vec![a]),
            4 => call(custom("http://www.w3.org/2001/XMLSchema#integer"), vec![a]),
            _ => call(custom("http://www.w3.org/2001/XMLSchema#string"), vec![a]),
        });
        let two = (0_u8..4, e.clone(), e.clone()).prop_map(|(f, a, b)| match f {
            0 => call(Function::Contains, vec![a, b]),
            1 => call(Function::StrStarts, vec![a, b]),
            2 => call(Function::Regex, vec![a, b]),
            _ => call(custom("bif:contains"), vec![a, b]),
        });
        prop_oneof![
            binary,
            unary,
            one,
            two,
            prop::collection::vec(e.clone(), 0..3).prop_map(|list| call(Function::Concat, list)),
            (e.clone(), prop::collection::vec(e.clone(), 0..3)).prop_map(|(a, list)| Expression::In(Box::new(a), list)),
            (b(), b(), b()).prop_map(|(a, b, c)| Expression::If(a, b, c)),
            prop::collection::vec(e.clone(), 1..3).prop_map(Expression::Coalesce),
            pattern.clone().prop_map(|p| Expression::Exists(Box::new(p))),
            pattern
                .clone()
                .prop_map(|p| Expression::Not(Box::new(Expression::Exists(Box::new(p))))),
        ]
    })
    .boxed()
}
