//! Statements with qualifiers (Wikibase): a relation the graph also keeps as statement nodes
//! (`p:P…` from the item to the statement, `ps:P…` to its value, `pq:P…` to a qualifier's value)
//! can carry a value the question writes on the statement rather than on the answer: "which
//! versions of bash were uploaded in 2021" (the point in time of each version's statement), "who
//! was the mayor of Lima in 2010" (the start and end time of each mayor's statement around the
//! year), "which clubs was X a member of after 2010".
//!
//! The graph says which relations have statements (the conventions' property entities) and which
//! qualifiers their statements carry (a sample of the anchor's own statements); the question's
//! words choose among the qualifiers as they choose among attributes ([`rank_attributes`]). Two
//! date qualifiers of which one is never later than the other on the same statements are a
//! period (a start and an end): a year the question writes falls in it. Where a statement has a
//! date of its own as well (an upload's date beside the period its version was current), the
//! words decide: a question that says what something *was* at a time ("which version was current
//! in 2020", "who was the mayor in 2010") asks for the period, one that says what *happened*
//! ("which versions were uploaded in 2021") for the date.

use crate::candidates::paths::{EndKind, Hop, RelationPath, literal_kind};
use crate::candidates::queries::{ANSWER_VARIABLE, CandidateQuery, ClassFilter, Shape, chain, join, of_class, shaped};
use crate::candidates::values::{Attribute, Kinds, constrain, day_of, rank_attributes, year_of};
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::understanding::form::{Comparison, ValueConstraint};
use chatty_kg_graph::{Conventions, GraphError, PropertyRole, QueryResults, ReadQuery, Term, named_node, triple, var};
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{Literal, Variable};
use std::collections::{BTreeMap, HashMap};

/// Rows of the anchor's statements read to see which qualifiers they carry.
const STATEMENT_SAMPLE: usize = 2000;
/// The variable a statement node binds in a qualified query.
pub const STATEMENT_VARIABLE: &str = "statement";

/// How a relation is kept as statements: from the item to its statement, from the statement to
/// the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statements {
    pub claim: String,
    pub statement: String,
}

/// The statements of a hop's relation, where the graph keeps them: a direct claim (`wdt:P…`)
/// whose property entity also names a claim and a statement predicate.
pub fn statements_of(conventions: &Conventions, hop: &Hop) -> Option<Statements> {
    let (property, role) = conventions.property_of(&hop.predicate)?;
    if role != PropertyRole::Direct {
        return None;
    }
    Some(Statements {
        claim: property.claim.clone()?,
        statement: property.statement.clone()?,
    })
}

/// A path from an item through its claim to a qualifier of the statement (`p:P…` then `pq:P…`,
/// both forward): the hop the statements are read by (the claim's direct claim, forward) and the
/// statements, or `None` where the path is not that.
pub fn through_qualifier(conventions: &Conventions, claim: &Hop, qualifier: &Hop) -> Option<(Hop, Statements)> {
    let (property, role) = conventions.property_of(&claim.predicate)?;
    let (_, qualifier_role) = conventions.property_of(&qualifier.predicate)?;
    if role != PropertyRole::Claim || qualifier_role != PropertyRole::Qualifier || !claim.forward || !qualifier.forward
    {
        return None;
    }
    let statements = Statements {
        claim: property.claim.clone()?,
        statement: property.statement.clone()?,
    };
    let hop = Hop {
        predicate: property.direct.clone().unwrap_or_else(|| claim.predicate.clone()),
        label: claim.label.clone(),
        forward: true,
        also: Vec::new(),
    };
    Some((hop, statements))
}

/// The qualifiers a relation's statements carry around one anchor.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Qualifiers {
    /// Qualifier predicate → (number values, date values) seen.
    pub kinds: Kinds,
    /// Two date qualifiers that make a period: (start, end), the start never after the end on
    /// any statement that has both.
    pub period: Option<(String, String)>,
}

/// `SELECT ?statement ?q ?v WHERE { <anchor> <claim> ?statement . ?statement ?q ?v } LIMIT n`
/// (`?statement <statement> <anchor>` when the hop runs towards the anchor).
fn qualifiers_query(anchor: &str, hop: &Hop, statements: &Statements) -> Result<ReadQuery, GraphError> {
    let (st, q, v) = (var(STATEMENT_VARIABLE), var("q"), var("v"));
    let reach = if hop.forward {
        triple(named_node(anchor)?, named_node(&statements.claim)?, st.clone())
    } else {
        triple(st.clone(), named_node(&statements.statement)?, named_node(anchor)?)
    };
    ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(GraphPattern::Bgp {
                patterns: vec![reach, triple(st.clone(), q.clone(), v.clone())],
            }),
            variables: vec![st, q, v],
        }),
        start: 0,
        length: Some(STATEMENT_SAMPLE),
    })
}

/// The qualifiers of the statements of `hop`'s relation at `anchor` (one bounded query).
pub async fn qualifiers(
    ctx: &AgentContext,
    conventions: &Conventions,
    anchor: &str,
    hop: &Hop,
    statements: &Statements,
) -> Result<Qualifiers, AgentError> {
    let QueryResults::Solutions(solutions) = ctx.kg.query(&qualifiers_query(anchor, hop, statements)?).await? else {
        return Ok(Qualifiers::default());
    };
    let qualifiers: std::collections::HashSet<&str> = conventions.qualifiers().collect();
    let mut found = Qualifiers::default();
    // Statement → qualifier → its dates (as text, which orders ISO dates).
    let mut dates: HashMap<String, BTreeMap<String, String>> = HashMap::new();
    for row in &solutions.rows {
        let (Some(Some(Term::NamedNode(st))), Some(Some(Term::NamedNode(q))), Some(Some(Term::Literal(v)))) =
            (row.first(), row.get(1), row.get(2))
        else {
            continue;
        };
        if !qualifiers.contains(q.as_str()) {
            continue;
        }
        let entry = found.kinds.entry(q.as_str().to_owned()).or_default();
        match literal_kind(v.datatype().as_str(), v.value()) {
            EndKind::Number => entry.0 += 1,
            EndKind::Temporal => {
                entry.1 += 1;
                dates
                    .entry(st.as_str().to_owned())
                    .or_default()
                    .insert(q.as_str().to_owned(), v.value().to_owned());
            }
            _ => {}
        }
    }
    found.period = period(&dates);
    Ok(found)
}

/// The pair of date qualifiers that most often occur together and of which the first is never
/// later than the second where they do: a start and an end.
fn period(dates: &HashMap<String, BTreeMap<String, String>>) -> Option<(String, String)> {
    // (first, second) → (statements with both, ordered so on all of them)
    let mut pairs: BTreeMap<(String, String), (usize, bool)> = BTreeMap::new();
    for qualified in dates.values() {
        for (a, va) in qualified {
            for (b, vb) in qualified {
                if a == b {
                    continue;
                }
                let entry = pairs.entry((a.clone(), b.clone())).or_insert((0, true));
                entry.0 += 1;
                // Equal dates say nothing of which comes first.
                entry.1 &= year_prefix(va) <= year_prefix(vb) && va <= vb;
            }
        }
    }
    // A pair ordered both ways holds equal dates everywhere: no period.
    pairs
        .iter()
        .filter(|((a, b), (_, ordered))| {
            *ordered && !pairs.get(&(b.clone(), a.clone())).is_some_and(|(_, reverse)| *reverse)
        })
        .max_by(|x, y| x.1.0.cmp(&y.1.0).then(y.0.cmp(x.0)))
        .map(|((a, b), _)| (a.clone(), b.clone()))
}

fn year_prefix(date: &str) -> &str {
    date.get(..4).unwrap_or(date)
}

/// How a value the question writes holds a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Qualified {
    /// A qualifier of the statement meets it ("uploaded in 2021": its point in time).
    At(Attribute),
    /// The year falls in the statement's period ("the mayor in 2010": started by 2010, ended in
    /// or after it, or not ended).
    During { start: Attribute, end: Attribute },
}

impl Qualified {
    /// The qualifier the explanation names (the period's start).
    pub fn attribute(&self) -> &Attribute {
        match self {
            Self::At(a) | Self::During { start: a, .. } => a,
        }
    }
}

/// How the value the question writes holds the statements, or `None` when their qualifiers
/// cannot hold it: the qualifier most like the words (or a period, for a year, where the
/// statements have one and the question says what something was rather than what happened).
pub async fn qualified_by(
    ctx: &AgentContext,
    constraint: &ValueConstraint,
    question: &str,
    left: &[String],
    qualifiers: &Qualifiers,
) -> Result<Option<Qualified>, AgentError> {
    let ranked = rank_attributes(ctx, constraint, left, &qualifiers.kinds, false).await?;
    let period = qualifiers.period.as_ref().filter(|_| constraint.year);
    // The names of the qualifiers a period or the statement's own date may take.
    let names = match period {
        Some(_) => {
            let iris: Vec<&str> = qualifiers.kinds.keys().map(String::as_str).collect();
            ctx.kg.predicate_names(&iris).await?
        }
        None => HashMap::new(),
    };
    let attribute = |p: &str| -> Attribute {
        ranked
            .iter()
            .find(|a| a.hop.predicate == p)
            .cloned()
            .unwrap_or_else(|| Attribute {
                hop: Hop {
                    predicate: p.to_owned(),
                    label: names
                        .get(p)
                        .cloned()
                        .unwrap_or_else(|| chatty_kg_graph::text::predicate_label(p)),
                    forward: true,
                    also: Vec::new(),
                },
                via: None,
                temporal: true,
                similarity: 0.0,
                // Taken as a period's end, not by its words.
                words: "(a period: start and end)".to_owned(),
            })
    };
    let best = ranked.first();
    // The statement's own date: a date qualifier outside the period (the most used), when the
    // words name none.
    let own_date = || -> Option<Attribute> {
        let (start, end) = qualifiers.period.as_ref()?;
        let own = qualifiers
            .kinds
            .iter()
            .filter(|(p, (numbers, dates))| dates > numbers && *p != start && *p != end)
            .max_by(|a, b| a.1.1.cmp(&b.1.1).then(b.0.cmp(a.0)))?
            .0;
        let mut found = attribute(own);
        found.words = "(the statement's own date)".to_owned();
        Some(found)
    };
    let state = crate::understanding::form::says_a_state(question);
    let in_period =
        |a: &Attribute| period.is_some_and(|(start, end)| a.hop.predicate == *start || a.hop.predicate == *end);
    Ok(match (period, best) {
        // What something was at a time: the period around the year.
        (Some((start, end)), _) if state => Some(Qualified::During {
            start: attribute(start),
            end: attribute(end),
        }),
        // What happened: a date like the words, else the statement's own date, else the period.
        (Some(_), Some(best)) if !in_period(best) => Some(Qualified::At(best.clone())),
        (Some((start, end)), _) => match own_date() {
            Some(own) => Some(Qualified::At(own)),
            None => Some(Qualified::During {
                start: attribute(start),
                end: attribute(end),
            }),
        },
        (None, Some(best)) => Some(Qualified::At(best.clone())),
        (None, None) => None,
    })
}

/// Whether a path ends at a statement node (its last hop is a claim, `p:P…`, from the item, or a
/// statement's value or qualifier read back, `ps:P…`/`pq:P…` towards their values), which
/// answers nothing a person reads,
/// or goes through a statement to its value (`p:P…` then `ps:P…` of one property, either way),
/// which says what the direct claim (`wdt:P…`) says. Both stay in the search, which goes through
/// statements to their qualifiers ("Cusco → award received → point in time").
pub fn ends_at_statement_or_restates(conventions: &Conventions, path: &RelationPath) -> bool {
    let role = |h: &Hop| {
        conventions
            .property_of(&h.predicate)
            .map(|(p, r)| (p.entity.as_str(), r))
    };
    let Some(last) = path.hops.last() else {
        return false;
    };
    let at_statement = match role(last) {
        Some((_, PropertyRole::Claim)) => last.forward,
        Some((_, PropertyRole::Statement | PropertyRole::Qualifier)) => !last.forward,
        _ => false,
    };
    at_statement
        || path.hops.windows(2).any(|w| match (role(&w[0]), role(&w[1])) {
            (Some((a, PropertyRole::Claim)), Some((b, PropertyRole::Statement))) => {
                a == b && w[0].forward && w[1].forward
            }
            (Some((a, PropertyRole::Statement)), Some((b, PropertyRole::Claim))) => {
                a == b && !w[0].forward && !w[1].forward
            }
            _ => false,
        })
}

/// How one anchor's path reaches a statement node: the item's claim (`A p:P ?statement`), the
/// item's direct claim standing for its statements (`A wdt:P ?answer`: `A p:P ?statement .
/// ?statement ps:P ?answer`), the statement's value or a qualifier's value read back
/// (`?statement ps:P B`, `?statement pq:Q B`), or the anchor is the statement itself (linked by a
/// value it holds); with the hop from the statement on to the answer, where the path has one.
enum Reach<'a> {
    Item { claim: String, property: String },
    Value { statement: &'a Hop, property: String },
    Qualifier { qualifier: &'a Hop },
    Is,
}

fn reach<'a>(conventions: &Conventions, path: &'a RelationPath) -> Option<(Reach<'a>, Option<Hop>)> {
    let role = |h: &Hop| conventions.property_of(&h.predicate);
    match path.hops.as_slice() {
        [first, tail] => match role(first)? {
            (p, PropertyRole::Claim) if first.forward => Some((
                Reach::Item {
                    claim: first.predicate.clone(),
                    property: p.entity.clone(),
                },
                Some(tail.clone()),
            )),
            (p, PropertyRole::Statement) if !first.forward => Some((
                Reach::Value {
                    statement: first,
                    property: p.entity.clone(),
                },
                Some(tail.clone()),
            )),
            (_, PropertyRole::Qualifier) if !first.forward => {
                Some((Reach::Qualifier { qualifier: first }, Some(tail.clone())))
            }
            _ => None,
        },
        [only] => match role(only)? {
            (p, PropertyRole::Direct) if only.forward => {
                let statement = p.statement.clone()?;
                Some((
                    Reach::Item {
                        claim: p.claim.clone()?,
                        property: p.entity.clone(),
                    },
                    Some(Hop {
                        predicate: statement,
                        label: only.label.clone(),
                        forward: true,
                        also: Vec::new(),
                    }),
                ))
            }
            // Only a statement has qualifiers and a statement value of its own.
            (_, PropertyRole::Qualifier | PropertyRole::Statement) if only.forward => {
                Some((Reach::Is, Some(only.clone())))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Two anchors whose paths meet at one statement, joined there rather than at the answer alone:
/// "When did Cusco receive the Heritage Award?" (`Cusco p:P166 ?statement . ?statement ps:P166
/// <Heritage Award> . ?statement pq:P585 ?answer`, where a join at the date would give the date
/// of every award Cusco received), "Which versions of less did X upload?" (`less p:P348
/// ?statement . ?statement pq:P14 <X> . ?statement ps:P348 ?answer`), "When was version 1.2 of
/// less uploaded?" (the anchor the version links to is the statement itself). One path starts at
/// the item, the other at the statement's value, a qualifier's value or the statement, and both
/// go on to the answer by the same hop. `None` when the paths are not so.
pub fn same_statement(
    conventions: &Conventions,
    paths: &[(&str, &RelationPath); 2],
    shape: &Shape,
    class: Option<ClassFilter<'_>>,
) -> Result<Option<CandidateQuery>, GraphError> {
    let [(a, pa), (b, pb)] = paths;
    let (Some((ra, ta)), Some((rb, tb))) = (reach(conventions, pa), reach(conventions, pb)) else {
        return Ok(None);
    };
    // The item's side first.
    let ((item, claim, property, item_tail), (other, other_reach, other_tail)) = match (ra, rb) {
        (Reach::Item { claim, property }, r) if !matches!(r, Reach::Item { .. }) => {
            ((*a, claim, property, ta), (*b, r, tb))
        }
        (r, Reach::Item { claim, property }) if !matches!(r, Reach::Item { .. }) => {
            ((*b, claim, property, tb), (*a, r, ta))
        }
        _ => return Ok(None),
    };
    let (Some(tail), Some(other_tail)) = (item_tail, other_tail) else {
        return Ok(None);
    };
    if tail.predicate != other_tail.predicate || tail.forward != other_tail.forward {
        return Ok(None);
    }
    let answer = var(ANSWER_VARIABLE);
    let other = named_node(other)?;
    let (st, mut patterns, mut predicates): (spargebra::term::TermPattern, Vec<_>, Vec<String>) = match other_reach {
        Reach::Value { statement, property: p } if p == property => {
            let st = var(STATEMENT_VARIABLE);
            (
                st.clone().into(),
                vec![triple(st, named_node(&statement.predicate)?, other)],
                vec![statement.predicate.clone()],
            )
        }
        Reach::Qualifier { qualifier } => {
            let st = var(STATEMENT_VARIABLE);
            (
                st.clone().into(),
                vec![triple(st, named_node(&qualifier.predicate)?, other)],
                vec![qualifier.predicate.clone()],
            )
        }
        Reach::Is => (other.into(), Vec::new(), Vec::new()),
        _ => return Ok(None),
    };
    patterns.insert(0, triple(named_node(item)?, named_node(&claim)?, st.clone()));
    predicates.insert(0, claim);
    patterns.push(if tail.forward {
        triple(st.clone(), named_node(&tail.predicate)?, answer.clone())
    } else {
        triple(answer.clone(), named_node(&tail.predicate)?, st.clone())
    });
    predicates.push(tail.predicate.clone());
    let mut core = GraphPattern::Bgp {
        patterns: patterns.clone(),
    };
    if let Some(class) = class {
        core = of_class(core, &answer, class)?;
    }
    let intermediates = match st {
        spargebra::term::TermPattern::Variable(v) => vec![v],
        _ => Vec::new(),
    };
    shaped(core, shape, intermediates, predicates, patterns).map(Some)
}

/// The path with its last relation through the statements, held by a qualifier: `anchor … ?prev
/// <claim> ?statement . ?statement <value> ?answer` (turned where the hop runs towards the
/// anchor), then the qualifier's filter on `?statement`. `value` is the statements' value
/// predicate (`ps:P…`), or a qualifier's (`pq:P…`) where that is what is asked.
#[allow(clippy::too_many_arguments)]
pub fn select_qualified(
    anchor: &str,
    path: &RelationPath,
    shape: &Shape,
    class: Option<ClassFilter<'_>>,
    statements: &Statements,
    value: &str,
    qualified: &Qualified,
    constraint: &ValueConstraint,
) -> Result<CandidateQuery, GraphError> {
    let value_predicate = value;
    let answer = var(ANSWER_VARIABLE);
    let st = var(STATEMENT_VARIABLE);
    let Some((last, before)) = path.hops.split_last() else {
        return Err(GraphError::QueryParse {
            message: "a qualified path needs a hop".into(),
        });
    };
    let (prev, mut patterns, mut intermediates) = if before.is_empty() {
        (named_node(anchor)?.into(), Vec::new(), Vec::new())
    } else {
        let end = var("x_statement_subject");
        let c = chain(anchor, before, "x", end.clone().into())?;
        let mut intermediates = c.intermediates;
        intermediates.push(end.clone());
        (spargebra::term::TermPattern::from(end), c.patterns, intermediates)
    };
    let (item, value): (spargebra::term::TermPattern, spargebra::term::TermPattern) = if last.forward {
        (prev, answer.clone().into())
    } else {
        (answer.clone().into(), prev)
    };
    patterns.push(triple(item, named_node(&statements.claim)?, st.clone()));
    patterns.push(triple(st.clone(), named_node(value_predicate)?, value));
    intermediates.push(st.clone());
    let mut predicates: Vec<String> = before.iter().flat_map(Hop::predicates).map(str::to_owned).collect();
    predicates.extend([statements.claim.clone(), value_predicate.to_owned()]);
    let mut core = GraphPattern::Bgp {
        patterns: patterns.clone(),
    };
    if let Some(class) = class {
        core = of_class(core, &answer, class)?;
    }
    let core = match qualified {
        Qualified::At(attribute) => {
            let (filtered, edges) = constrain(core, &st, attribute, constraint)?;
            patterns.extend(edges);
            predicates.extend(attribute.via.iter().map(|h| h.predicate.clone()));
            predicates.push(attribute.hop.predicate.clone());
            filtered
        }
        Qualified::During { start, end } => {
            let (s, e) = (var("period_start"), var("period_end"));
            // A year is compared with the dates' years; a day the question writes, with their
            // days (an end on that day has ended by then).
            let (year, measure): (Expression, fn(Variable) -> Expression) = match &constraint.date {
                Some(day) => (Expression::Literal(Literal::new_simple_literal(day.as_str())), day_of),
                None => (
                    Expression::Literal(Literal::from(constraint.value.trunc() as i64)),
                    year_of,
                ),
            };
            let started = triple(st.clone(), named_node(&start.hop.predicate)?, s.clone());
            let ended = triple(st.clone(), named_node(&end.hop.predicate)?, e.clone());
            let open = |e: &Variable| Expression::Not(Box::new(Expression::Bound(e.clone())));
            let start_year = || Box::new(measure(s.clone()));
            let end_year = || Box::new(measure(e.clone()));
            let y = || Box::new(year.clone());
            let ends_after = if constraint.date.is_some() {
                Expression::Greater(end_year(), y())
            } else {
                Expression::GreaterOrEqual(end_year(), y())
            };
            // When the year meets the period: in it, after its start, before its end.
            let (needs_start, expr) = match constraint.comparison {
                Comparison::Equal => (
                    true,
                    Expression::And(
                        Box::new(Expression::LessOrEqual(start_year(), y())),
                        Box::new(Expression::Or(Box::new(open(&e)), Box::new(ends_after))),
                    ),
                ),
                Comparison::Greater => (
                    false,
                    Expression::Or(Box::new(open(&e)), Box::new(Expression::Greater(end_year(), y()))),
                ),
                Comparison::GreaterOrEqual => (
                    false,
                    Expression::Or(
                        Box::new(open(&e)),
                        Box::new(Expression::GreaterOrEqual(end_year(), y())),
                    ),
                ),
                Comparison::Less => (true, Expression::Less(start_year(), y())),
                Comparison::LessOrEqual => (true, Expression::LessOrEqual(start_year(), y())),
            };
            let mut with = core;
            if needs_start {
                with = join(
                    with,
                    GraphPattern::Bgp {
                        patterns: vec![started.clone()],
                    },
                );
                patterns.push(started);
            }
            let with_end = GraphPattern::LeftJoin {
                left: Box::new(with),
                right: Box::new(GraphPattern::Bgp { patterns: vec![ended] }),
                expression: None,
            };
            predicates.extend([start.hop.predicate.clone(), end.hop.predicate.clone()]);
            GraphPattern::Filter {
                expr,
                inner: Box::new(with_end),
            }
        }
    };
    shaped(core, shape, intermediates, predicates, patterns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dates(rows: &[(&str, &str, &str)]) -> HashMap<String, BTreeMap<String, String>> {
        let mut out: HashMap<String, BTreeMap<String, String>> = HashMap::new();
        for (st, q, v) in rows {
            out.entry((*st).to_owned())
                .or_default()
                .insert((*q).to_owned(), (*v).to_owned());
        }
        out
    }

    #[test]
    fn a_start_never_after_its_end_is_a_period() {
        let found = period(&dates(&[
            ("s1", "start", "2003-01-01"),
            ("s1", "end", "2010-12-31"),
            ("s2", "start", "2011-01-01"),
            ("s2", "end", "2018-12-31"),
            ("s3", "start", "2019-01-01"),
        ]));
        assert_eq!(found, Some(("start".to_owned(), "end".to_owned())));
    }

    #[test]
    fn dates_in_either_order_or_always_equal_are_no_period() {
        assert_eq!(
            period(&dates(&[
                ("s1", "a", "2003-01-01"),
                ("s1", "b", "2001-12-31"),
                ("s2", "a", "2011-01-01"),
                ("s2", "b", "2018-12-31"),
            ])),
            None
        );
        assert_eq!(
            period(&dates(&[("s1", "a", "2003-01-01"), ("s1", "b", "2003-01-01")])),
            None
        );
    }

    #[test]
    fn a_period_query_holds_the_year_between_start_and_end() {
        let hop = Hop {
            predicate: "http://www.wikidata.org/prop/direct/P6".into(),
            label: "head of government".into(),
            forward: true,
            also: Vec::new(),
        };
        let path = RelationPath {
            anchor: 0,
            hops: vec![hop],
            end: EndKind::Entity,
            reached: 1,
            endpoints: Vec::new(),
        };
        let statements = Statements {
            claim: "http://www.wikidata.org/prop/P6".into(),
            statement: "http://www.wikidata.org/prop/statement/P6".into(),
        };
        let attribute = |p: &str| Attribute {
            hop: Hop {
                predicate: p.into(),
                label: String::new(),
                forward: true,
                also: Vec::new(),
            },
            via: None,
            temporal: true,
            similarity: 0.5,
            words: String::new(),
        };
        let qualified = Qualified::During {
            start: attribute("http://www.wikidata.org/prop/qualifier/P580"),
            end: attribute("http://www.wikidata.org/prop/qualifier/P582"),
        };
        let constraint = ValueConstraint {
            comparison: Comparison::Equal,
            value: 2010.0,
            year: true,
            attribute_words: Vec::new(),
            phrase: "in 2010".into(),
            date: None,
            and: None,
        };
        let q = select_qualified(
            "http://www.wikidata.org/entity/Q2868",
            &path,
            &Shape::List { distinct_only: false },
            None,
            &statements,
            &statements.statement,
            &qualified,
            &constraint,
        )
        .unwrap();
        let text = q.query.to_string();
        assert!(text.contains("<http://www.wikidata.org/prop/P6> ?statement"), "{text}");
        assert!(
            text.contains("?statement <http://www.wikidata.org/prop/statement/P6> ?answer"),
            "{text}"
        );
        assert!(text.contains("OPTIONAL"), "{text}");
        assert!(text.contains("2010"), "{text}");
        assert!(
            text.contains("!(BOUND(?period_end))") || text.contains("!BOUND(?period_end)"),
            "{text}"
        );

        // A day the question writes, and a qualifier asked for (when the term began): the
        // statement's start, its days compared, an end on that day already past.
        let on_a_day = ValueConstraint {
            date: Some("2010-06-01".into()),
            phrase: "on 1 june 2010".into(),
            ..constraint
        };
        let start = "http://www.wikidata.org/prop/qualifier/P580";
        let q = select_qualified(
            "http://www.wikidata.org/entity/Q2868",
            &path,
            &Shape::List { distinct_only: false },
            None,
            &statements,
            start,
            &qualified,
            &on_a_day,
        )
        .unwrap();
        let text = q.query.to_string();
        assert!(text.contains(&format!("?statement <{start}> ?answer")), "{text}");
        assert!(!text.contains("<http://www.wikidata.org/prop/statement/P6>"), "{text}");
        assert!(text.contains("<= \"2010-06-01\""), "{text}");
        assert!(text.contains("> \"2010-06-01\""), "{text}");
        assert!(q.predicates.iter().any(|p| p == start), "{:?}", q.predicates);
    }
}
