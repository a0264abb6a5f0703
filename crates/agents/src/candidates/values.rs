//! Value constraints: the question writes a number or a year that the answers' attribute must
//! equal or pass ("which organizations were founded *in 1950*", "which caves have *more than 3*
//! entrances", "films directed by X released *after 2000*"). The words beside the value name the
//! attribute; the graph says which attributes exist: the numeric and date predicates of the
//! vertices in question (a sample of a class's instances, of a path's answers, or the schema
//! profile when the question names neither), ranked by how much their labels resemble those
//! words. No word list names an attribute.
//!
//! The constraint becomes `?answer <attribute> ?value FILTER(…)` on the query the question's form
//! asks for: the year of a date (its first four characters) for years, the value cast to
//! `xsd:double` for numbers.

use crate::candidates::paths::{EndKind, Hop, literal_kind};
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::understanding::form::{Comparison, ValueConstraint};
use chatty_kg_graph::{Direction, GraphError, NamedNode, Term};
use serde::{Deserialize, Serialize};
use spargebra::algebra::{Expression, Function, GraphPattern};
use spargebra::term::{Literal, Variable};
use std::collections::BTreeMap;

/// Attributes tried per question, the most similar first (each one bounded query).
pub const ATTRIBUTES_TRIED: usize = 3;
/// An attribute whose label resembles the constraint's words less than this is not tried.
const MIN_SIMILARITY: f32 = 0.3;
/// Similarity beyond this (a shared word stem is 0.9) tells attributes apart no further.
const STEM_EVIDENCE: f32 = 0.9;
/// The variable the constrained attribute's value binds.
pub const VALUE_VARIABLE: &str = "value";
/// The variable of the vertex an attribute is read through ([`Attribute::via`]).
pub const THROUGH_VARIABLE: &str = "value_of";

const XSD_DOUBLE: &str = "http://www.w3.org/2001/XMLSchema#double";
const XSD_INTEGER: &str = "http://www.w3.org/2001/XMLSchema#integer";

/// A numeric or date predicate the constraint may be about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribute {
    pub hop: Hop,
    /// The relation through which the answers reach the vertices that have it ("introduced
    /// in" for a character's version's release year); `None`: the answers have it themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Hop>,
    /// Its values are dates or years (else numbers).
    pub temporal: bool,
    /// How much its label resembles the constraint's words.
    pub similarity: f32,
    /// The words it resembles that much.
    pub words: String,
}

impl Attribute {
    /// How the attribute was read, for the explanation.
    pub fn reading(&self, of: AttributeOf, compared: usize) -> AttributeReading {
        AttributeReading {
            of,
            predicate: self.hop.predicate.clone(),
            label: match &self.via {
                Some(via) => format!("{} → {}", via.label, self.hop.label),
                None => self.hop.label.clone(),
            },
            words: self.words.clone(),
            similarity: self.similarity,
            compared,
        }
    }
}

/// What an attribute was read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttributeOf {
    /// The order of a superlative ("the highest numeric value").
    Superlative,
    /// The value written in the question ("exactly 5888 bytes", "founded in 1950").
    Value,
}

/// Which of the graph's number- or date-valued predicates a query orders or filters by, and
/// why: the words of the question its label resembles most, among how many compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttributeReading {
    pub of: AttributeOf,
    pub predicate: String,
    pub label: String,
    /// The question's words it was compared with.
    pub words: String,
    pub similarity: f32,
    /// The predicates compared.
    pub compared: usize,
}

/// How much each label resembles an attribute's own words ("biggest", "more than 5000 kB") or
/// those words with the ones the question has `left` over once its mentions and class are said
/// ("biggest *download*", "… once *installed*"), whichever is more; with the words that gave it.
pub(crate) async fn resemblance(
    ctx: &AgentContext,
    own: &[String],
    left: &[String],
    labels: &[String],
) -> Result<Vec<(f32, String)>, AgentError> {
    let own_words = own.join(" ");
    let mut out: Vec<(f32, String)> = crate::similarity::similarity(ctx, &own_words, labels)
        .await?
        .into_iter()
        .map(|s| (s, own_words.clone()))
        .collect();
    let left: Vec<&String> = left.iter().filter(|w| !own.contains(w)).collect();
    if !left.is_empty() {
        let words: Vec<&str> = own.iter().chain(left).map(String::as_str).collect();
        let words = words.join(" ");
        let with_left = crate::similarity::similarity(ctx, &words, labels).await?;
        for (o, w) in out.iter_mut().zip(with_left) {
            if w > o.0 {
                *o = (w, words.clone());
            }
        }
    }
    Ok(out)
}

/// How many of `label`'s words (in the singular) are among `words`: between labels the words
/// resemble alike ("installed size" and "download size" both share "size" with "largest by
/// installed size"), the one more of whose words the question says.
pub(crate) fn words_said(label: &str, words: &str) -> usize {
    let said: std::collections::HashSet<String> = chatty_kg_graph::text::normalize_tokens(words)
        .iter()
        .map(|w| crate::words::singular(w))
        .collect();
    chatty_kg_graph::text::normalize_tokens(label)
        .iter()
        .filter(|w| said.contains(&crate::words::singular(w)))
        .count()
}

/// Predicate → (number values, date values) seen.
pub(crate) type Kinds = BTreeMap<String, (u64, u64)>;

/// What the edges leaving a set of vertices hold, read in one grouped query: their number and
/// date values by predicate, the predicates with text values, and the vertices each relation
/// (types aside) reaches, at most [`THROUGH_SAMPLE`] each.
#[derive(Debug, Default)]
pub(crate) struct Outgoing {
    pub kinds: Kinds,
    pub texts: Vec<String>,
    pub reached: BTreeMap<String, Vec<String>>,
}

/// The [`Outgoing`] edges of `vertices`.
pub(crate) async fn outgoing(ctx: &AgentContext, vertices: &[&str]) -> Result<Outgoing, AgentError> {
    let mut out = Outgoing::default();
    if vertices.is_empty() {
        return Ok(out);
    }
    let edges = ctx
        .kg
        .neighbourhood(vertices, Direction::Outgoing, ctx.params.path_edge_limit)
        .await?;
    let profile = ctx.kg.profile_or_default().await;
    let typing = profile.conventions.types();
    for edge in &edges.edges {
        match &edge.neighbour {
            Term::Literal(l) => match literal_kind(l.datatype().as_str(), l.value()) {
                EndKind::Number => out.kinds.entry(edge.predicate.clone()).or_default().0 += 1,
                EndKind::Temporal => out.kinds.entry(edge.predicate.clone()).or_default().1 += 1,
                EndKind::Text if !out.texts.contains(&edge.predicate) => out.texts.push(edge.predicate.clone()),
                _ => {}
            },
            Term::NamedNode(n) if !typing.is_type_predicate(&edge.predicate) => {
                let reached = out.reached.entry(edge.predicate.clone()).or_default();
                if reached.len() < THROUGH_SAMPLE && !reached.iter().any(|r| r == n.as_str()) {
                    reached.push(n.as_str().to_owned());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The numeric and date predicates leaving `vertices` (one grouped query).
pub(crate) async fn attributes_of(ctx: &AgentContext, vertices: &[&str]) -> Result<Kinds, AgentError> {
    Ok(outgoing(ctx, vertices).await?.kinds)
}

/// Each predicate's label: its own in the graph, else one made from its IRI.
pub(crate) async fn predicate_labels(ctx: &AgentContext, iris: &[&str]) -> Result<Vec<String>, AgentError> {
    let names = ctx.kg.predicate_names(iris).await?;
    Ok(iris
        .iter()
        .map(|p| {
            names
                .get(*p)
                .cloned()
                .unwrap_or_else(|| chatty_kg_graph::text::predicate_label(p))
        })
        .collect())
}

/// The numeric and date predicates of the whole graph, from its schema profile's datatypes.
pub(crate) async fn attributes_of_graph(ctx: &AgentContext) -> Kinds {
    let mut kinds = Kinds::new();
    let Ok(profile) = ctx.kg.profile().await else {
        return kinds;
    };
    for predicate in &profile.predicates {
        for (datatype, n) in &predicate.datatypes {
            // A typed literal's kind is its datatype's ("1994"^^xsd:integer is a number).
            match literal_kind(datatype, "") {
                EndKind::Number => kinds.entry(predicate.iri.clone()).or_default().0 += n,
                EndKind::Temporal => kinds.entry(predicate.iri.clone()).or_default().1 += n,
                _ => {}
            }
        }
    }
    kinds
}

/// The attributes a constraint can be about, the most similar to its words first (its own
/// words, or those with the words the question has `left` over once its mentions and class are
/// said — "more than 5000 kB once *installed*" — whichever is more like the attribute): years
/// compare with dates and with numbers, other numbers with numbers only.
///
/// Those less like the words than [`MIN_SIMILARITY`] are left out, unless `after_named`: then,
/// when some attribute is like the words, the others of these vertices follow it, to be tried
/// only when it holds none of them ("use less than 1000 kB *of disk*" of a maintainer's
/// packages, whose two sizes are a download size in bytes, which none is under 1000, and an
/// installed size, which the words name in no way the embedder sees).
pub(crate) async fn rank_attributes(
    ctx: &AgentContext,
    constraint: &ValueConstraint,
    left: &[String],
    kinds: &Kinds,
    after_named: bool,
) -> Result<Vec<Attribute>, AgentError> {
    let predicates: Vec<(&String, bool)> = kinds
        .iter()
        .filter_map(|(p, (numbers, dates))| {
            let temporal = dates > numbers;
            (constraint.year || !temporal).then_some((p, temporal))
        })
        .collect();
    if predicates.is_empty() {
        return Ok(Vec::new());
    }
    let iris: Vec<&str> = predicates.iter().map(|(p, _)| p.as_str()).collect();
    let labels = predicate_labels(ctx, &iris).await?;
    let similarity = resemblance(ctx, &constraint.attribute_words, left, &labels).await?;
    let mut ranked: Vec<Attribute> = predicates
        .iter()
        .zip(labels)
        .zip(&similarity)
        .filter(|(_, (s, _))| after_named || *s >= MIN_SIMILARITY)
        // A shared stem is as good as the same word: "founding year" and "founded" say what
        // "founded" says.
        .map(|(((p, temporal), label), (s, words))| Attribute {
            hop: Hop {
                predicate: (*p).clone(),
                label,
                forward: true,
                also: Vec::new(),
            },
            via: None,
            temporal: *temporal,
            similarity: s.min(STEM_EVIDENCE),
            words: words.clone(),
        })
        .collect();
    // A year of a date before a year stored as a number, at equal similarity.
    ranked.sort_by(|a, b| {
        b.similarity
            .total_cmp(&a.similarity)
            .then(words_said(&b.hop.label, &b.words).cmp(&words_said(&a.hop.label, &a.words)))
            .then(b.temporal.cmp(&a.temporal))
            .then(a.hop.predicate.cmp(&b.hop.predicate))
    });
    if ranked.first().is_some_and(|a| a.similarity < MIN_SIMILARITY) {
        return Ok(Vec::new());
    }
    ranked.truncate(ATTRIBUTES_TRIED);
    Ok(ranked)
}

/// Relations from a set of vertices looked through for an attribute they lack themselves.
pub(crate) const THROUGH_RELATIONS: usize = 8;
/// Vertices of each such relation whose attributes are read.
pub(crate) const THROUGH_SAMPLE: usize = 50;

/// One relation from a set of vertices, and a number- or date-valued predicate of the vertices
/// it reaches, with the values of each kind seen.
pub(crate) struct Through {
    pub via: Hop,
    pub attribute: Hop,
    pub numbers: u64,
    pub dates: u64,
}

impl Through {
    /// Both names, as the words are compared with them: "introduced in release year".
    pub(crate) fn label(&self) -> String {
        format!("{} {}", self.via.label, self.attribute.label)
    }
}

/// The number- and date-valued predicates of what a set of vertices relates to, through each of
/// its relations to vertices ([`Outgoing::reached`]): at most [`THROUGH_RELATIONS`] relations,
/// one grouped query each.
pub(crate) async fn attributes_through(ctx: &AgentContext, out: &Outgoing) -> Result<Vec<Through>, AgentError> {
    let mut found: Vec<(&str, String, u64, u64)> = Vec::new();
    for (via, reached) in out.reached.iter().take(THROUGH_RELATIONS) {
        let reached: Vec<&str> = reached.iter().map(String::as_str).collect();
        for (attribute, (numbers, dates)) in attributes_of(ctx, &reached).await? {
            found.push((via, attribute, numbers, dates));
        }
    }
    let vias: Vec<&str> = found.iter().map(|f| f.0).collect();
    let attributes: Vec<&str> = found.iter().map(|f| f.1.as_str()).collect();
    let via_labels = predicate_labels(ctx, &vias).await?;
    let attribute_labels = predicate_labels(ctx, &attributes).await?;
    Ok(found
        .iter()
        .zip(via_labels.into_iter().zip(attribute_labels))
        .map(
            |((via, attribute, numbers, dates), (via_label, attribute_label))| Through {
                via: Hop::forward(via, via_label),
                attribute: Hop::forward(attribute, attribute_label),
                numbers: *numbers,
                dates: *dates,
            },
        )
        .collect())
}

/// For answers with no attribute of their own like a value's words ("characters … in versions
/// *released after 2018*"): those of what they relate to ([`attributes_through`]), the relation's
/// and the attribute's names together compared with the words, as [`rank_attributes`] does, at
/// least [`MIN_SIMILARITY`] like them.
pub(crate) async fn rank_attributes_through(
    ctx: &AgentContext,
    constraint: &ValueConstraint,
    left: &[String],
    out: &Outgoing,
) -> Result<Vec<Attribute>, AgentError> {
    let options: Vec<Through> = attributes_through(ctx, out)
        .await?
        .into_iter()
        .filter(|t| constraint.year || t.dates <= t.numbers)
        .collect();
    if options.is_empty() {
        return Ok(Vec::new());
    }
    let labels: Vec<String> = options.iter().map(Through::label).collect();
    let similarity = resemblance(ctx, &constraint.attribute_words, left, &labels).await?;
    let mut ranked: Vec<Attribute> = options
        .into_iter()
        .zip(similarity)
        .filter(|(_, (s, _))| *s >= MIN_SIMILARITY)
        .map(|(t, (s, words))| Attribute {
            temporal: t.dates > t.numbers,
            hop: t.attribute,
            via: Some(t.via),
            similarity: s.min(STEM_EVIDENCE),
            words,
        })
        .collect();
    ranked.sort_by(|a, b| {
        let label = |a: &Attribute| a.reading(AttributeOf::Value, 0).label;
        b.similarity
            .total_cmp(&a.similarity)
            .then(words_said(&label(b), &b.words).cmp(&words_said(&label(a), &a.words)))
            .then(b.temporal.cmp(&a.temporal))
            .then(a.hop.predicate.cmp(&b.hop.predicate))
    });
    ranked.truncate(ATTRIBUTES_TRIED);
    Ok(ranked)
}

/// The first `n` characters of a value's text.
fn text_prefix(value: Variable, n: i64) -> Expression {
    Expression::FunctionCall(
        Function::SubStr,
        vec![
            Expression::FunctionCall(Function::Str, vec![Expression::Variable(value)]),
            Expression::Literal(Literal::from(1_i64)),
            Expression::Literal(Literal::from(n)),
        ],
    )
}

/// The day of a date or date-time: its first ten characters (`YYYY-MM-DD`, which orders as text).
pub(crate) fn day_of(value: Variable) -> Expression {
    text_prefix(value, 10)
}

/// The year of a date, a date-time or a year, as an integer: its first four characters.
pub(crate) fn year_of(value: Variable) -> Expression {
    Expression::FunctionCall(
        Function::Custom(NamedNode::new_unchecked(XSD_INTEGER)),
        vec![text_prefix(value, 4)],
    )
}

/// `inner` joined with `subject <attribute> ?value` and filtered by the constraint.
pub fn constrain(
    inner: GraphPattern,
    subject: &Variable,
    attribute: &Attribute,
    constraint: &ValueConstraint,
) -> Result<(GraphPattern, Vec<spargebra::term::TriplePattern>), GraphError> {
    let value = chatty_kg_graph::var(VALUE_VARIABLE);
    let mut edges = Vec::new();
    let holder = match &attribute.via {
        Some(via) => {
            let through = chatty_kg_graph::var(THROUGH_VARIABLE);
            edges.push(chatty_kg_graph::triple(
                subject.clone(),
                chatty_kg_graph::named_node(&via.predicate)?,
                through.clone(),
            ));
            through
        }
        None => subject.clone(),
    };
    edges.push(chatty_kg_graph::triple(
        holder,
        chatty_kg_graph::named_node(&attribute.hop.predicate)?,
        value.clone(),
    ));
    let joined = GraphPattern::Join {
        left: Box::new(inner),
        right: Box::new(GraphPattern::Bgp {
            patterns: edges.clone(),
        }),
    };
    // A date is compared by its day where the question writes one, else by its year; any other
    // value as a number.
    let (measured, bound) = match (attribute.temporal, &constraint.date) {
        (true, Some(day)) => (
            day_of(value),
            Expression::Literal(Literal::new_simple_literal(day.as_str())),
        ),
        (true, None) => (
            year_of(value),
            Expression::Literal(Literal::from(constraint.value.trunc() as i64)),
        ),
        (false, _) => (
            Expression::FunctionCall(
                Function::Custom(NamedNode::new_unchecked(XSD_DOUBLE)),
                vec![Expression::Variable(value)],
            ),
            Expression::Literal(Literal::from(constraint.value)),
        ),
    };
    let compare = |comparison: Comparison, measured: Expression, bound: Expression| {
        let (a, b) = (Box::new(measured), Box::new(bound));
        match comparison {
            Comparison::Equal => Expression::Equal(a, b),
            Comparison::Greater => Expression::Greater(a, b),
            Comparison::GreaterOrEqual => Expression::GreaterOrEqual(a, b),
            Comparison::Less => Expression::Less(a, b),
            Comparison::LessOrEqual => Expression::LessOrEqual(a, b),
        }
    };
    let mut expr = compare(constraint.comparison, measured.clone(), bound);
    // "more than 0 but less than 0.15": the second bound on the same value (a year as a year).
    if let Some(and) = constraint.and {
        let bound = if attribute.temporal {
            Expression::Literal(Literal::from(and.value.trunc() as i64))
        } else {
            Expression::Literal(Literal::from(and.value))
        };
        expr = Expression::And(Box::new(expr), Box::new(compare(and.comparison, measured, bound)));
    }
    Ok((
        GraphPattern::Filter {
            expr,
            inner: Box::new(joined),
        },
        edges,
    ))
}

/// Whether the constraint's value is part of a linked mention ("Apollo 14", a year linked as a
/// vertex): then it names that vertex, not a value.
pub fn inside_mentions(constraint: &ValueConstraint, mentions: &[String]) -> bool {
    let value = constraint.phrase.split(' ').next_back().unwrap_or("");
    mentions
        .iter()
        .any(|m| chatty_kg_graph::text::normalize_tokens(m).iter().any(|w| w == value))
}

#[cfg(test)]
mod tests {
    use super::words_said;

    #[test]
    fn the_label_more_of_whose_words_the_question_says() {
        let words = "largest three section installed size first";
        assert_eq!(words_said("installed size", words), 2);
        assert_eq!(words_said("download size", words), 1);
        assert_eq!(words_said("code points", "highest code point"), 2);
        assert_eq!(words_said("release year", "oldest"), 0);
    }
}
