//! Relation paths: what the path search finds around the linked vertices ([`RelationPath`], its
//! hops and what it reaches), the search's budget and report, and the kinds of value a path
//! ends at. The search itself is [`crate::candidates::search`].

use chatty_kg_graph::Term;
use serde::{Deserialize, Serialize};
use std::time::Duration;

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
    /// A hop along `predicate` the way it points, of no twins.
    pub fn forward(predicate: &str, label: String) -> Self {
        Self {
            predicate: predicate.to_owned(),
            label,
            forward: true,
            also: Vec::new(),
        }
    }

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
    /// The class queries that ordered the paths found (how many instances of the asked class
    /// each reaches, whether its values are of other kinds), in the order they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub class_queries: Vec<ClassQuery>,
    /// No relation's name fits the words, and the answer went by the anchor's only relation of
    /// the kind the question asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_relation: Option<OnlyRelation>,
}

/// Which only relation answered a question whose words name none ([`SearchReport::only_relation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnlyRelation {
    /// The one relation from the anchor to instances of the class the question names.
    ToTheClass,
    /// The one relation to a vertex with a date of its own, for "when".
    ToATime,
    /// The anchor's one relation to other vertices, for what it does ("what did X add?").
    ToThings,
}

impl OnlyRelation {
    /// How the explanation says it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::ToTheClass => "the only relation to the class asked for",
            Self::ToATime => "the only relation to something with a date",
            Self::ToThings => "the only relation to other things",
        }
    }
}

impl SearchReport {
    /// Of [`Self::class_queries`], how many ran out of the store's query time.
    pub fn timed_out(&self) -> usize {
        self.class_queries.iter().filter(|q| q.timed_out).count()
    }
}

/// One class query of the path search, as the explanation shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassQuery {
    pub sparql: String,
    pub elapsed_ms: f64,
    /// Result rows (0 when it timed out).
    pub rows: usize,
    /// It ran out of the store's query time: the words ordered the paths instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
}

pub(crate) fn iri_of(term: &Term) -> Option<&str> {
    match term {
        Term::NamedNode(n) => Some(n.as_str()),
        _ => None,
    }
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
pub(crate) fn end_kind(values: &[Term]) -> EndKind {
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
}
