//! Answers as the graph gave them: IRIs (with their labels), literals, a count or a boolean, each
//! value with the triples that support it.

use crate::qir::QuestionKind;
use chatty_kg_graph::Term;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    Iri,
    Literal,
    Count,
    Boolean,
}

/// One answer value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerValue {
    pub kind: ValueKind,
    /// The IRI, the literal's lexical form, the count or `true`/`false`.
    pub value: String,
    /// The IRI's label in the graph, if it has one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub label: Option<String>,
    /// A literal's datatype IRI (omitted for plain strings).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub datatype: Option<String>,
    /// A literal's language tag.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub language: Option<String>,
    /// Supporting triples `[subject, predicate, object]` (IRIs and literal values).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub provenance: Vec<[String; 3]>,
}

const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";
const RDF_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";

impl AnswerValue {
    /// An IRI or literal from a result row (blank nodes have no stable identity: `None`).
    pub fn from_term(term: &Term) -> Option<Self> {
        match term {
            Term::NamedNode(node) => Some(Self::plain(ValueKind::Iri, node.as_str())),
            Term::Literal(literal) => {
                let datatype = literal.datatype().as_str();
                Some(Self {
                    datatype: (datatype != XSD_STRING && datatype != RDF_LANG_STRING).then(|| datatype.to_owned()),
                    language: literal.language().map(str::to_owned),
                    ..Self::plain(ValueKind::Literal, literal.value())
                })
            }
            _ => None,
        }
    }

    pub fn count(count: u64) -> Self {
        Self::plain(ValueKind::Count, &count.to_string())
    }

    pub fn boolean(value: bool) -> Self {
        Self::plain(ValueKind::Boolean, if value { "true" } else { "false" })
    }

    fn plain(kind: ValueKind, value: &str) -> Self {
        Self {
            kind,
            value: value.to_owned(),
            label: None,
            datatype: None,
            language: None,
            provenance: Vec::new(),
        }
    }

    /// What a person reads: the label of an IRI (else its IRI), or the value.
    pub fn display(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.value)
    }
}

/// The answer to one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub kind: QuestionKind,
    pub values: Vec<AnswerValue>,
    /// The graph returned more rows than the configured maximum; values are cut.
    pub truncated: bool,
}

impl Answer {
    /// The values as a person reads them, at most `limit` (the dialogue context keeps L).
    pub fn display_values(&self, limit: usize) -> Vec<String> {
        self.values.iter().take(limit).map(|v| v.display().to_owned()).collect()
    }

    /// A plain, deterministic sentence-free rendering: "Yes", "3", or "A, B and 2 more (4 answers)".
    pub fn summary(&self, shown: usize) -> String {
        match (self.kind, self.values.as_slice()) {
            (QuestionKind::Boolean, [value]) => if value.value == "true" { "Yes." } else { "No." }.into(),
            (_, [value]) => value.display().to_owned(),
            (_, values) => {
                let names = self.display_values(shown);
                let rest = values.len().saturating_sub(names.len());
                let mut text = names.join(", ");
                if rest > 0 {
                    text.push_str(&format!(" and {rest} more"));
                }
                format!("{text} ({} answers)", values.len())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatty_kg_graph::{Literal, NamedNode};

    #[test]
    fn terms_become_values_with_their_datatypes() {
        let iri = AnswerValue::from_term(&NamedNode::new_unchecked("http://e/x").into()).unwrap();
        assert_eq!((iri.kind, iri.value.as_str()), (ValueKind::Iri, "http://e/x"));
        let plain = AnswerValue::from_term(&Literal::new_simple_literal("1994").into()).unwrap();
        assert_eq!((plain.kind, plain.datatype.as_deref()), (ValueKind::Literal, None));
        let typed = AnswerValue::from_term(&Literal::from(7i64).into()).unwrap();
        assert_eq!(
            typed.datatype.as_deref(),
            Some("http://www.w3.org/2001/XMLSchema#integer")
        );
        let tagged =
            AnswerValue::from_term(&Literal::new_language_tagged_literal_unchecked("Big", "en").into()).unwrap();
        assert_eq!(
            (tagged.language.as_deref(), tagged.datatype.as_deref()),
            (Some("en"), None)
        );
    }

    #[test]
    fn summaries() {
        let list = |n: usize| Answer {
            kind: QuestionKind::List,
            values: (0..n)
                .map(|i| AnswerValue {
                    label: Some(format!("Film {i}")),
                    ..AnswerValue::plain(ValueKind::Iri, &format!("http://e/{i}"))
                })
                .collect(),
            truncated: false,
        };
        assert_eq!(list(1).summary(3), "Film 0");
        assert_eq!(list(2).summary(3), "Film 0, Film 1 (2 answers)");
        assert_eq!(list(5).summary(3), "Film 0, Film 1, Film 2 and 2 more (5 answers)");
        let no = Answer {
            kind: QuestionKind::Boolean,
            values: vec![AnswerValue::boolean(false)],
            truncated: false,
        };
        assert_eq!(no.summary(3), "No.");
        assert_eq!(AnswerValue::count(4).display(), "4");
    }
}

/// One value of a candidate: an IRI or a literal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Member {
    /// The IRI, or the literal's lexical form.
    pub value: String,
    pub label: String,
    /// An IRI (else a literal).
    pub iri: bool,
    /// A literal's datatype IRI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datatype: Option<String>,
}

impl Member {
    /// An answer's value as a member of a set a later question works over.
    pub fn of(value: &AnswerValue) -> Self {
        Member {
            value: value.value.clone(),
            label: value.display().to_owned(),
            iri: value.kind == ValueKind::Iri,
            datatype: value.datatype.clone(),
        }
    }
}
