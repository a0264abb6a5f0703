//! What a query may compute on the embedded store. Rows and time were bounded, but not the size of
//! the values a query builds: 28 `BIND(CONCAT(?a, ?a) AS ?b)` grow a 16-byte string to 4 GiB in
//! one solution, and the process aborts when the allocation fails. The functions that can make a
//! string longer than their arguments (`CONCAT`, `REPLACE`, `UCASE`, `LCASE`, `ENCODE_FOR_URI`)
//! and the `GROUP_CONCAT` aggregate are evaluated here instead of by Oxigraph, with the same
//! results, under a [`Budget`]: no value longer than [`MAX_VALUE_BYTES`], and no more than
//! [`MAX_COMPUTED_BYTES`] built by one query in all. Past either, the evaluation is cancelled and
//! the query ends with [`GraphError::ValueTooLarge`](crate::GraphError::ValueTooLarge).
//!
//! The query is rewritten just before evaluation (each such call becomes a call of a function
//! named under `urn:chatty-kg:bounded:`, which only this evaluation defines); what was checked, shown and
//! logged is the query as written.

use oxigraph::model::{Literal, NamedNode, Term};
use oxigraph::sparql::{AggregateFunctionAccumulator, CancellationToken, SparqlEvaluator};
use regex::{Regex, RegexBuilder};
use spargebra::Query;
use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression, Function, GraphPattern, OrderExpression};
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The longest string one function call may build.
pub const MAX_VALUE_BYTES: usize = 4 << 20;
/// The most bytes the functions may build in one query's evaluation, all calls together.
pub const MAX_COMPUTED_BYTES: usize = 256 << 20;
/// Compiled size allowed for a `REPLACE` pattern (Oxigraph's own limit for regexes).
const REGEX_SIZE_LIMIT: usize = 1_000_000;

// The bounded functions are named under `urn:chatty-kg:bounded:`. Nothing outside this evaluation
// can call them: the guard refuses every function outside its allow-list in the queries it admits.
const CONCAT: &str = "urn:chatty-kg:bounded:concat";
const REPLACE: &str = "urn:chatty-kg:bounded:replace";
const UCASE: &str = "urn:chatty-kg:bounded:ucase";
const LCASE: &str = "urn:chatty-kg:bounded:lcase";
const ENCODE_FOR_URI: &str = "urn:chatty-kg:bounded:encode-for-uri";
/// Followed by the separator, percent-encoded.
const GROUP_CONCAT: &str = "urn:chatty-kg:bounded:group-concat:";

const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";

/// What one query's evaluation has built so far, and whether it went past a bound.
pub struct Budget {
    built: AtomicUsize,
    exceeded: AtomicBool,
    token: CancellationToken,
}

impl Budget {
    pub fn new(token: CancellationToken) -> Arc<Self> {
        Arc::new(Self {
            built: AtomicUsize::new(0),
            exceeded: AtomicBool::new(false),
            token,
        })
    }

    /// Whether a value went past [`MAX_VALUE_BYTES`] or the query past [`MAX_COMPUTED_BYTES`].
    pub fn exceeded(&self) -> bool {
        self.exceeded.load(Ordering::SeqCst)
    }

    /// Takes `bytes` more from the budget before they are built, for a value that will then be
    /// `value` bytes long; false (and the evaluation cancelled) when that goes past a bound.
    fn take(&self, bytes: usize, value: usize) -> bool {
        let total = self.built.fetch_add(bytes, Ordering::SeqCst).saturating_add(bytes);
        if value > MAX_VALUE_BYTES || total > MAX_COMPUTED_BYTES {
            self.exceeded.store(true, Ordering::SeqCst);
            self.token.cancel();
            return false;
        }
        true
    }
}

/// `query` with its string-growing calls replaced by the bounded ones, and the separators of its
/// `GROUP_CONCAT`s (each one needs a function of its own: [`evaluator`]).
pub fn rewrite(query: &Query) -> (Query, Vec<String>) {
    let mut query = query.clone();
    let mut separators = Vec::new();
    walk(&mut query, &mut |call| match call {
        Call::Term(..) | Call::Iri(_) | Call::Pattern(_) => {}
        Call::Function(function, _) => {
            let bounded = match function {
                Function::Concat => Some(CONCAT),
                Function::Replace => Some(REPLACE),
                Function::UCase => Some(UCASE),
                Function::LCase => Some(LCASE),
                Function::EncodeForUri => Some(ENCODE_FOR_URI),
                _ => None,
            };
            if let Some(name) = bounded {
                *function = custom(name);
            }
        }
        Call::Aggregate(name) => {
            if let AggregateFunction::GroupConcat { separator } = name {
                let separator = separator.clone().unwrap_or_else(|| " ".to_owned());
                *name = AggregateFunction::Custom(group_concat_name(&separator));
                if !separators.contains(&separator) {
                    separators.push(separator);
                }
            }
        }
    });
    (query, separators)
}

/// What [`walk`] meets: a function with its arguments, an aggregate, a subject or object of a
/// pattern (with the triple's predicate; `None` for a property path's ends), or an IRI an
/// expression or a VALUES row names.
pub enum Call<'a> {
    Function(&'a mut Function, &'a mut Vec<Expression>),
    Aggregate(&'a mut AggregateFunction),
    Term(&'a mut TermPattern, Option<&'a NamedNodePattern>),
    Iri(&'a mut NamedNode),
    /// Every graph pattern, before its parts (a visitor may replace it).
    Pattern(&'a mut GraphPattern),
}

/// Calls `visit` on every function call, aggregate, pattern term and named IRI of `query`, inner
/// ones first.
pub fn walk(query: &mut Query, visit: &mut dyn FnMut(Call<'_>)) {
    match query {
        Query::Select { pattern, .. }
        | Query::Ask { pattern, .. }
        | Query::Construct { pattern, .. }
        | Query::Describe { pattern, .. } => walk_pattern(pattern, visit),
    }
}

/// An evaluator that knows the bounded functions, all charged to `budget`.
pub fn evaluator(mut evaluator: SparqlEvaluator, budget: &Arc<Budget>, separators: &[String]) -> SparqlEvaluator {
    let functions: [(&str, fn(&Budget, &[Term]) -> Option<Term>); 5] = [
        (CONCAT, concat),
        (REPLACE, replace),
        (UCASE, |b, a| recase(b, a, str::to_uppercase)),
        (LCASE, |b, a| recase(b, a, str::to_lowercase)),
        (ENCODE_FOR_URI, encode_for_uri),
    ];
    for (name, function) in functions {
        let budget = Arc::clone(budget);
        evaluator = evaluator.with_custom_function(NamedNode::new_unchecked(name), move |args| function(&budget, args));
    }
    for separator in separators {
        let (budget, separator) = (Arc::clone(budget), Arc::<str>::from(separator.as_str()));
        evaluator = evaluator.with_custom_aggregate_function(group_concat_name(&separator), move || {
            Box::new(GroupConcat {
                budget: Arc::clone(&budget),
                separator: Arc::clone(&separator),
                concat: Some(String::new()),
                language: None,
            })
        });
    }
    evaluator
}

fn group_concat_name(separator: &str) -> NamedNode {
    let encoded = percent_encoding::utf8_percent_encode(separator, percent_encoding::NON_ALPHANUMERIC);
    NamedNode::new_unchecked(format!("{GROUP_CONCAT}{encoded}"))
}

fn custom(name: &str) -> Function {
    Function::Custom(NamedNode::new_unchecked(name))
}

// The walk: every expression position of every pattern. No `_` arm: a variant spargebra adds
// later must be looked at here.

/// Longest regular expression sent to a remote endpoint.
pub const MAX_REMOTE_PATTERN: usize = 1024;

/// Most unbounded repetitions (`*`, `+`, `{n,}`) in one remote pattern: ".*.*.*.*.*x" takes
/// time to the power of their number on a backtracking engine.
const MAX_UNBOUNDED: usize = 4;
/// Most optional or variable repetitions of any kind in one remote pattern ("a?a?a?…aaa").
const MAX_VARIABLE: usize = 8;

/// The first `REGEX`/`REPLACE` pattern of `query` that a remote endpoint's backtracking regex
/// engine (PCRE, Virtuoso's) could take exponential time on, with why: one that is not written
/// as a literal (it cannot be checked), longer than [`MAX_REMOTE_PATTERN`], in extended mode,
/// outside the syntax the check reads (back-references, `\Q…\E`, comments, lookarounds), with a
/// repetition of something that itself matches in several ways ("(a+)+", "(a?){30}", "(a|a)*"),
/// or with more than [`MAX_UNBOUNDED`] unbounded or [`MAX_VARIABLE`] variable repetitions.
pub fn risky_pattern(query: &Query) -> Option<(String, &'static str)> {
    let mut query = query.clone();
    let mut found = None;
    walk(&mut query, &mut |call| {
        if found.is_some() {
            return;
        }
        let (pattern, flags) = match call {
            Call::Function(Function::Regex, arguments) => (arguments.get(1), arguments.get(2)),
            Call::Function(Function::Replace, arguments) => (arguments.get(1), arguments.get(3)),
            _ => return,
        };
        found = match (pattern, flags) {
            (None, _) => None,
            (Some(Expression::Literal(p)), None) => pattern_risk(p.value(), "").map(|why| (p.value().to_owned(), why)),
            (Some(Expression::Literal(p)), Some(Expression::Literal(f))) => {
                pattern_risk(p.value(), f.value()).map(|why| (p.value().to_owned(), why))
            }
            (Some(Expression::Literal(p)), Some(_)) => Some((
                p.value().to_owned(),
                "its flags are not written in the query, so it cannot be checked",
            )),
            (Some(other), _) => Some((
                other.to_string(),
                "it is not written in the query, so it cannot be checked",
            )),
        };
    });
    found
}

fn pattern_risk(pattern: &str, flags: &str) -> Option<&'static str> {
    use regex_syntax::ast::parse::Parser;
    if pattern.len() > MAX_REMOTE_PATTERN {
        return Some("it is too long");
    }
    if flags.contains('x') {
        return Some("extended mode ('x') reads '#' as a comment, which the check does not follow");
    }
    // PCRE constructs outside this syntax (back-references, \Q…\E, (?#…), \c[, lookarounds)
    // could hide a group from the walk below: refused rather than guessed at.
    let Ok(ast) = Parser::new().parse(pattern) else {
        return Some(
            "it is not in the syntax the check reads (back-references, \\Q…\\E, comments and lookarounds are refused)",
        );
    };
    let mut counts = (0, 0);
    if let Err(why) = repetitions(&ast, &mut counts) {
        return Some(why);
    }
    if counts.0 > MAX_UNBOUNDED {
        return Some("it has more than 4 unbounded repetitions");
    }
    if counts.1 > MAX_VARIABLE {
        return Some("it has more than 8 optional or variable repetitions");
    }
    None
}

/// Whether `ast` can match one text in more than one way by itself (a variable repetition, or
/// an alternation whose branches are not literals with distinct first characters), counting
/// (unbounded, variable) repetitions; an error when such a part is itself repeated.
fn repetitions(ast: &regex_syntax::ast::Ast, counts: &mut (usize, usize)) -> Result<bool, &'static str> {
    use regex_syntax::ast::{Ast, RepetitionKind, RepetitionRange};
    Ok(match ast {
        Ast::Repetition(r) => {
            let inner = repetitions(&r.ast, counts)?;
            let (unbounded, variable, many) = match &r.op.kind {
                RepetitionKind::ZeroOrOne => (false, true, false),
                RepetitionKind::ZeroOrMore | RepetitionKind::OneOrMore => (true, true, true),
                RepetitionKind::Range(RepetitionRange::Exactly(n)) => (false, false, *n > 1),
                RepetitionKind::Range(RepetitionRange::AtLeast(_)) => (true, true, true),
                RepetitionKind::Range(RepetitionRange::Bounded(a, b)) => (false, a != b, *b > 1),
            };
            if inner && many {
                return Err("a repeated part can itself match in several ways");
            }
            counts.0 += usize::from(unbounded);
            counts.1 += usize::from(variable);
            inner || variable
        }
        Ast::Group(g) => repetitions(&g.ast, counts)?,
        Ast::Concat(c) => {
            let mut any = false;
            for a in &c.asts {
                any |= repetitions(a, counts)?;
            }
            any
        }
        Ast::Alternation(a) => {
            let mut any = false;
            for branch in &a.asts {
                any |= repetitions(branch, counts)?;
            }
            // Literal branches with distinct first characters ("foo|bar") match one way;
            // others may overlap ("a|a", "\w|\d").
            let firsts: Vec<Option<char>> = a.asts.iter().map(literal_start).collect();
            let distinct =
                firsts.iter().all(Option::is_some) && firsts.iter().enumerate().all(|(i, f)| !firsts[..i].contains(f));
            any || !distinct
        }
        Ast::Empty(_)
        | Ast::Flags(_)
        | Ast::Literal(_)
        | Ast::Dot(_)
        | Ast::Assertion(_)
        | Ast::ClassUnicode(_)
        | Ast::ClassPerl(_)
        | Ast::ClassBracketed(_) => false,
    })
}

/// The first character of a branch made of literals only.
fn literal_start(ast: &regex_syntax::ast::Ast) -> Option<char> {
    use regex_syntax::ast::Ast;
    match ast {
        Ast::Literal(l) => Some(l.c),
        Ast::Concat(c) if c.asts.iter().all(|a| matches!(a, Ast::Literal(_))) => c.asts.first().and_then(literal_start),
        _ => None,
    }
}

fn walk_pattern(pattern: &mut GraphPattern, visit: &mut dyn FnMut(Call<'_>)) {
    visit(Call::Pattern(pattern));
    match pattern {
        GraphPattern::Bgp { patterns } => {
            for TriplePattern {
                subject,
                predicate,
                object,
            } in patterns
            {
                visit(Call::Term(subject, Some(predicate)));
                visit(Call::Term(object, Some(predicate)));
            }
        }
        GraphPattern::Path { subject, object, .. } => {
            visit(Call::Term(subject, None));
            visit(Call::Term(object, None));
        }
        GraphPattern::Values { bindings, .. } => {
            for term in bindings.iter_mut().flatten().flatten() {
                if let GroundTerm::NamedNode(iri) = term {
                    visit(Call::Iri(iri));
                }
            }
        }
        GraphPattern::Join { left, right }
        | GraphPattern::Lateral { left, right }
        | GraphPattern::Union { left, right }
        | GraphPattern::Minus { left, right } => {
            walk_pattern(left, visit);
            walk_pattern(right, visit);
        }
        GraphPattern::LeftJoin {
            left,
            right,
            expression,
        } => {
            walk_pattern(left, visit);
            walk_pattern(right, visit);
            if let Some(e) = expression {
                walk_expression(e, visit);
            }
        }
        GraphPattern::Filter { expr, inner } => {
            walk_pattern(inner, visit);
            walk_expression(expr, visit);
        }
        GraphPattern::Extend { inner, expression, .. } => {
            walk_pattern(inner, visit);
            walk_expression(expression, visit);
        }
        GraphPattern::OrderBy { inner, expression } => {
            walk_pattern(inner, visit);
            for order in expression {
                let (OrderExpression::Asc(e) | OrderExpression::Desc(e)) = order;
                walk_expression(e, visit);
            }
        }
        GraphPattern::Group { inner, aggregates, .. } => {
            walk_pattern(inner, visit);
            for (_, aggregate) in aggregates {
                if let AggregateExpression::FunctionCall { name, expr, .. } = aggregate {
                    walk_expression(expr, visit);
                    visit(Call::Aggregate(name));
                }
            }
        }
        GraphPattern::Graph { inner, .. }
        | GraphPattern::Project { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice { inner, .. }
        | GraphPattern::Service { inner, .. } => walk_pattern(inner, visit),
    }
}

fn walk_expression(expression: &mut Expression, visit: &mut dyn FnMut(Call<'_>)) {
    match expression {
        Expression::Exists(pattern) => walk_pattern(pattern, visit),
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
        Expression::Coalesce(list) => list.iter_mut().for_each(|e| walk_expression(e, visit)),
        Expression::FunctionCall(function, arguments) => {
            arguments.iter_mut().for_each(|e| walk_expression(e, visit));
            visit(Call::Function(function, arguments));
        }
        Expression::NamedNode(iri) => visit(Call::Iri(iri)),
        Expression::Literal(_) | Expression::Variable(_) | Expression::Bound(_) => {}
    }
}

// ----- the functions, with Oxigraph's semantics -----

/// A string literal's value and language tag (None: a plain or `xsd:string` literal); None for any
/// other term, which these functions refuse (an error, as in Oxigraph).
fn string_of(term: &Term) -> Option<(&str, Option<&str>)> {
    let Term::Literal(literal) = term else { return None };
    match literal.language() {
        Some(language) => Some((literal.value(), Some(language))),
        None if literal.datatype().as_str() == XSD_STRING => Some((literal.value(), None)),
        None => None,
    }
}

fn plain(value: String, language: Option<&str>) -> Option<Term> {
    Some(match language {
        Some(language) => Literal::new_language_tagged_literal_unchecked(value, language).into(),
        None => Literal::new_simple_literal(value).into(),
    })
}

/// The language tag shared by all, if they share one.
fn common_language<'a>(languages: impl Iterator<Item = Option<&'a str>>) -> Option<&'a str> {
    let mut common: Option<Option<&str>> = None;
    for language in languages {
        match common {
            None => common = Some(language),
            Some(c) if c != language => return None,
            Some(_) => {}
        }
    }
    common.flatten()
}

fn concat(budget: &Budget, args: &[Term]) -> Option<Term> {
    let parts: Vec<(&str, Option<&str>)> = args.iter().map(string_of).collect::<Option<_>>()?;
    let length = parts.iter().map(|(v, _)| v.len()).fold(0usize, usize::saturating_add);
    if !budget.take(length, length) {
        return None;
    }
    let mut result = String::with_capacity(length);
    for (value, _) in &parts {
        result.push_str(value);
    }
    plain(result, common_language(parts.iter().map(|(_, l)| *l)))
}

fn compile(pattern: &str, flags: Option<&str>) -> Option<Regex> {
    let flags = flags.unwrap_or_default();
    let pattern = if flags.contains('q') {
        regex::escape(pattern)
    } else {
        pattern.to_owned()
    };
    let mut builder = RegexBuilder::new(&pattern);
    builder.size_limit(REGEX_SIZE_LIMIT);
    for flag in flags.chars() {
        match flag {
            's' => builder.dot_matches_new_line(true),
            'm' => builder.multi_line(true),
            'i' => builder.case_insensitive(true),
            'x' => builder.ignore_whitespace(true),
            'q' => &mut builder,
            _ => return None,
        };
    }
    builder.build().ok()
}

/// `REPLACE(text, pattern, replacement[, flags])`, built match by match so that a short text and a
/// long replacement cannot multiply past the budget before it is checked.
fn replace(budget: &Budget, args: &[Term]) -> Option<Term> {
    let (text, language) = string_of(args.first()?)?;
    fn simple(t: Option<&Term>) -> Option<&str> {
        match t {
            Some(Term::Literal(l)) if l.language().is_none() && l.datatype().as_str() == XSD_STRING => Some(l.value()),
            _ => None,
        }
    }
    let pattern = simple(args.get(1))?;
    let replacement = simple(args.get(2))?;
    let flags = match args.get(3) {
        Some(_) => Some(simple(args.get(3))?),
        None => None,
    };
    let regex = compile(pattern, flags)?;
    let mut result = String::new();
    let mut last = 0;
    for captures in regex.captures_iter(text) {
        let whole = captures.get(0)?;
        let before = result.len();
        result.push_str(&text[last..whole.start()]);
        captures.expand(replacement, &mut result);
        last = whole.end();
        if !budget.take(result.len() - before, result.len()) {
            return None;
        }
    }
    if !budget.take(text.len() - last, result.len() + text.len() - last) {
        return None;
    }
    result.push_str(&text[last..]);
    plain(result, language)
}

fn recase(budget: &Budget, args: &[Term], case: fn(&str) -> String) -> Option<Term> {
    let [arg] = args else { return None };
    let (value, language) = string_of(arg)?;
    // A case mapping turns one character into at most three.
    let most = value.len().saturating_mul(3);
    if !budget.take(most, most) {
        return None;
    }
    plain(case(value), language)
}

fn encode_for_uri(budget: &Budget, args: &[Term]) -> Option<Term> {
    let [arg] = args else { return None };
    let (value, _) = string_of(arg)?;
    let most = value.len().saturating_mul(3);
    if !budget.take(most, most) {
        return None;
    }
    let mut result = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => result.push(char::from(byte)),
            _ => result.push_str(&format!("%{byte:02X}")),
        }
    }
    plain(result, None)
}

/// `GROUP_CONCAT(…; SEPARATOR = s)`, stopped (the group's value an error) past the budget.
struct GroupConcat {
    budget: Arc<Budget>,
    separator: Arc<str>,
    concat: Option<String>,
    /// None before the first value; then the language tag all values so far share, if any.
    language: Option<Option<String>>,
}

impl AggregateFunctionAccumulator for GroupConcat {
    fn accumulate(&mut self, element: Term) {
        let Some(concat) = self.concat.as_mut() else { return };
        let Some((value, language)) = string_of(&element) else {
            self.concat = None;
            return;
        };
        let separator = if self.language.is_some() {
            self.separator.len()
        } else {
            0
        };
        let more = separator.saturating_add(value.len());
        if !self.budget.take(more, concat.len().saturating_add(more)) {
            self.concat = None;
            return;
        }
        match &self.language {
            Some(common) => {
                if common.as_deref() != language {
                    self.language = Some(None);
                }
                concat.push_str(&self.separator);
            }
            None => self.language = Some(language.map(str::to_owned)),
        }
        concat.push_str(value);
    }

    fn finish(&mut self) -> Option<Term> {
        let language = self.language.take().flatten();
        plain(self.concat.take()?, language.as_deref())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn budget() -> Arc<Budget> {
        Budget::new(CancellationToken::new())
    }

    fn lit(s: &str) -> Term {
        Literal::new_simple_literal(s).into()
    }

    #[test]
    fn the_functions_give_oxigraphs_results() {
        let b = budget();
        let fr = Term::from(Literal::new_language_tagged_literal_unchecked("chat", "fr"));
        assert_eq!(concat(&b, &[lit("a"), lit("b")]), Some(lit("ab")));
        assert_eq!(
            concat(&b, &[fr.clone(), fr.clone()]),
            plain("chatchat".into(), Some("fr"))
        );
        assert_eq!(concat(&b, &[fr, lit("x")]), Some(lit("chatx")));
        assert_eq!(concat(&b, &[NamedNode::new_unchecked("http://e/x").into()]), None);
        assert_eq!(
            replace(&b, &[lit("abcb"), lit("b"), lit("[$0]")]),
            Some(lit("a[b]c[b]"))
        );
        assert_eq!(
            replace(&b, &[lit("AbC"), lit("b"), lit("x"), lit("i")]),
            Some(lit("AxC"))
        );
        assert_eq!(recase(&b, &[lit("straße")], str::to_uppercase), Some(lit("STRASSE")));
        assert_eq!(encode_for_uri(&b, &[lit("a b/é")]), Some(lit("a%20b%2F%C3%A9")));
        assert!(!b.exceeded());
    }

    #[test]
    fn growth_past_the_bounds_cancels() {
        let b = budget();
        let big = lit(&"x".repeat(MAX_VALUE_BYTES / 2 + 1));
        assert_eq!(concat(&b, &[big.clone(), big]), None);
        assert!(b.exceeded() && b.token.is_cancelled());
        // A short text and a long replacement: stopped as the result grows, not after.
        let b = budget();
        let long = lit(&"y".repeat(1 << 20));
        assert_eq!(replace(&b, &[lit(&"a".repeat(64)), lit("a"), long]), None);
        assert!(b.exceeded());
        // The whole query's budget: many values each below the value bound.
        let b = budget();
        let chunk = lit(&"z".repeat(MAX_VALUE_BYTES / 2));
        let mut answered = 0;
        while concat(&b, &[chunk.clone()]).is_some() {
            answered += 1;
        }
        assert_eq!(answered, MAX_COMPUTED_BYTES / (MAX_VALUE_BYTES / 2));
        assert!(b.exceeded());
    }

    #[test]
    fn patterns_a_backtracking_engine_could_blow_up_on_are_found() {
        let risky = |p: &str| pattern_risk(p, "").is_some();
        for safe in [
            "tom",
            "^m[aàáâ]lm[oö]$",
            "a+b*",
            "(abc)+",
            "(a|b)",
            "[(+)]*",
            "colou?r",
            "\\.txt$",
            "^\\d{1,3}(,\\d{3})*$",
            "(foo|bar)+",
            "(\\p{Lu})+",
            "^[[:alpha:]]+$",
        ] {
            assert!(!risky(safe), "{safe}");
        }
        let twelve_optional = "a?".repeat(12);
        let long = "a".repeat(2000);
        for bad in [
            "(a+)+",
            "(a|a)*",
            "((ab)*c)+",
            "(x+x+)+y",
            "(a)\\1",
            "(?#[)(a+)+$",
            "\\Q[\\E(a+)+$",
            "(?:\\c[|)(a+)+$",
            "(?P<n>a)(?P=n)",
            "\\k<n>",
            "\\g1",
            "(a?){30}a{30}",
            ".*.*.*.*.*.*.*.*x",
            twelve_optional.as_str(),
            "(?=a)b",
            long.as_str(),
        ] {
            assert!(risky(bad), "{bad}");
        }
        assert!(pattern_risk("#[\n(a+)+$", "x").is_some(), "extended mode");
        // The label search's own patterns pass, however long the word.
        let word = "taumatawhakatangihangakoauauotamateaturipukakapikimaungahoronukupokaiwhenuakitanatahu";
        assert!(!risky(&crate::query::accent_folded_regex(word)));
        let parse = |q: &str| spargebra::SparqlParser::new().parse_query(q).unwrap();
        assert!(risky_pattern(&parse("SELECT * WHERE { ?s ?p ?o FILTER(REGEX(?o, \"^tom\")) }")).is_none());
        assert!(risky_pattern(&parse("SELECT * WHERE { ?s ?p ?o FILTER(REGEX(?o, \"(a+)+$\")) }")).is_some());
        assert!(risky_pattern(&parse("SELECT * WHERE { ?s ?p ?o FILTER(REGEX(?o, ?s)) }")).is_some());
        assert!(risky_pattern(&parse("SELECT (REPLACE(?o, \"(.*)*\", \"\") AS ?r) WHERE { ?s ?p ?o }")).is_some());
    }

    #[test]
    fn every_growing_call_is_rewritten() {
        let query = spargebra::SparqlParser::new()
            .parse_query(
                "SELECT (GROUP_CONCAT(?u; SEPARATOR='|') AS ?g) WHERE { ?s ?p ?o \
                 BIND(UCASE(CONCAT(?o, ?o)) AS ?u) FILTER(EXISTS { BIND(REPLACE(?o, 'a', 'b') AS ?r) }) } \
                 GROUP BY ?s ORDER BY DESC(LCASE(ENCODE_FOR_URI(?s)))",
            )
            .unwrap();
        let (rewritten, separators) = rewrite(&query);
        let text = rewritten.to_string();
        for name in [CONCAT, REPLACE, UCASE, LCASE, ENCODE_FOR_URI] {
            assert!(text.contains(name), "{name} in {text}");
        }
        assert!(text.contains("group-concat:%7C"), "{text}");
        assert_eq!(separators, ["|"]);
        for builtin in [
            "CONCAT(",
            "REPLACE(",
            "UCASE(",
            "LCASE(",
            "ENCODE_FOR_URI(",
            "GROUP_CONCAT(",
        ] {
            assert!(!text.contains(builtin), "{builtin} left in {text}");
        }
    }
}
