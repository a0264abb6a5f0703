//! Looking around the graph without asking a question: what the graph says of one vertex
//! ([`describe`], MCP's `describe` tool and REST `GET /api/kgs/{kg}/describe?iri=`), and first
//! questions a newcomer could ask of *this* graph ([`suggestions`], REST
//! `GET /api/kgs/{kg}/suggestions`), made from its schema profile: its most used predicates
//! between vertices, each with a subject that really has it and a label.

use chatty_kg_graph::{Direction, GraphError, KnowledgeGraph, QueryResults, Term, named_neighbourhood, subjects_query};
use serde::Serialize;
use serde_json::{Value, json};

/// Triples per direction [`describe`] returns unless asked for fewer.
pub const DEFAULT_TRIPLES: usize = 50;
/// Predicates of the profile looked at for suggestions.
const SUGGESTION_PREDICATES: usize = 12;
/// Subjects looked at per predicate.
const SUGGESTION_SUBJECTS: usize = 5;
/// Schema vocabularies (RDF, RDFS, OWL): their predicates describe the graph's classes, not its
/// things, and make no first question ("What is country sub class of?").
const SCHEMA_NAMESPACES: [&str; 3] = [
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "http://www.w3.org/2000/01/rdf-schema#",
    "http://www.w3.org/2002/07/owl#",
];

/// The triples around `iri`, outgoing then incoming (at most `limit` each), every IRI with its
/// label and every predicate with its name.
pub async fn describe(kg: &dyn KnowledgeGraph, iri: &str, limit: usize) -> Result<Value, GraphError> {
    chatty_kg_graph::named_node(iri)?;
    let limit = limit.clamp(1, 1000);
    let mut triples = Vec::new();
    for direction in [Direction::Outgoing, Direction::Incoming] {
        let edges = named_neighbourhood(kg, &[iri], direction, limit, &|_| true).await?;
        for named in edges.into_iter().take(limit) {
            let other = match &named.edge.neighbour {
                Term::NamedNode(n) => json!({"iri": n.as_str(), "label": named.neighbour_name}),
                Term::Literal(l) => {
                    json!({"value": l.value(), "datatype": l.datatype().as_str(), "language": l.language()})
                }
                Term::BlankNode(_) => json!({"value": null}),
            };
            triples.push(json!({
                "direction": named.edge.direction,
                "predicate": {"iri": named.edge.predicate, "label": named.predicate_name},
                "other": other,
            }));
        }
    }
    let label = kg.labels(&[iri]).await?.remove(iri);
    Ok(json!({"iri": iri, "label": label, "triples": triples}))
}

/// A first question, and the graph facts it was made from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suggestion {
    pub question: String,
    pub entity: String,
    pub entity_label: String,
    pub predicate: String,
    pub predicate_label: String,
}

/// Up to `count` questions about different predicates, the most used first: for each, a subject
/// that has the predicate and a short one-line label ("What is the release year of Big?",
/// "Who was Big directed by?").
pub async fn suggestions(kg: &dyn KnowledgeGraph, count: usize) -> Result<Vec<Suggestion>, GraphError> {
    let profile = kg.profile().await?;
    let settings = kg.settings();
    let mut candidates: Vec<_> = profile
        .predicates
        .iter()
        .filter(|p| {
            !SCHEMA_NAMESPACES.iter().any(|ns| p.iri.starts_with(ns))
                && !settings.label_predicates.contains(&p.iri)
                && !settings.name_predicates.contains(&p.iri)
                && !settings.is_blacklisted(&p.iri)
                && !profile.conventions.is_schema_predicate(&p.iri)
        })
        .collect();
    candidates.sort_by(|a, b| b.triples.cmp(&a.triples));
    let mut found = Vec::new();
    for predicate in candidates.into_iter().take(SUGGESTION_PREDICATES) {
        if found.len() == count {
            break;
        }
        let results = kg.query(&subjects_query(&predicate.iri, SUGGESTION_SUBJECTS)?).await?;
        let QueryResults::Solutions(solutions) = results else {
            continue;
        };
        let subjects: Vec<&str> = solutions.iris("s").collect();
        let labels = kg.graph_labels(&subjects).await?;
        let Some((subject, label)) = subjects
            .iter()
            .find_map(|s| labels.get(*s).filter(|l| readable(l)).map(|l| (*s, l)))
        else {
            continue;
        };
        let name = if predicate.label.is_empty() {
            chatty_kg_graph::text::predicate_label(&predicate.iri)
        } else {
            predicate.label.clone()
        };
        let temporal = predicate
            .datatypes
            .keys()
            .any(|d| TEMPORAL.iter().any(|t| d.ends_with(t)));
        found.push(Suggestion {
            question: phrase(&name, label, temporal),
            entity: subject.to_owned(),
            entity_label: label.clone(),
            predicate: predicate.iri.clone(),
            predicate_label: name,
        });
    }
    Ok(found)
}

/// The query a suggestion asks: `SELECT ?answer WHERE { <entity> <predicate> ?answer }`, built
/// with spargebra from the suggestion's (checked) IRIs.
pub fn gold_query(suggestion: &Suggestion) -> String {
    use chatty_kg_graph::{ReadQuery, named_node, triple, var};
    let pattern = (|| {
        let edge = triple(
            named_node(&suggestion.entity)?,
            named_node(&suggestion.predicate)?,
            var("answer"),
        );
        ReadQuery::select(spargebra::algebra::GraphPattern::Project {
            inner: Box::new(spargebra::algebra::GraphPattern::Bgp { patterns: vec![edge] }),
            variables: vec![var("answer")],
        })
    })();
    pattern.map(|q| q.as_query().to_string()).unwrap_or_default()
}

/// A label that makes a question a person would type: one short line.
fn readable(label: &str) -> bool {
    let label = label.trim();
    !label.is_empty() && label.chars().count() <= 60 && !label.chars().any(char::is_control)
}

/// XSD datatypes of dates and years (their local names).
const TEMPORAL: [&str; 4] = ["#date", "#dateTime", "#gYear", "#gYearMonth"];

/// A question asking for `predicate` of `subject`, from the predicate's name and whether its
/// values are dates: "directed by" and "member of" read as they are, a one-word participle with
/// dates ("founded") asks "when was", "has tags" and "in language" read "tags" and "language", a
/// plural name asks "what are".
fn phrase(predicate: &str, subject: &str, temporal: bool) -> String {
    let predicate = predicate.trim();
    if temporal && !predicate.contains(' ') && predicate.ends_with("ed") {
        return format!("When was {subject} {predicate}?");
    }
    if predicate.ends_with(" by") {
        return format!("Who was {subject} {predicate}?");
    }
    if predicate.ends_with(" of") || predicate.ends_with(" in") {
        return format!("What is {subject} {predicate}?");
    }
    let noun = ["has ", "in "]
        .iter()
        .find_map(|p| predicate.strip_prefix(p))
        .unwrap_or(predicate);
    let plural = noun.ends_with('s') && !noun.ends_with("ss");
    format!("What {} the {noun} of {subject}?", if plural { "are" } else { "is" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_phrased_from_the_predicate_name() {
        assert_eq!(phrase("release year", "Big", false), "What is the release year of Big?");
        assert_eq!(phrase("directed by", "Big", false), "Who was Big directed by?");
        assert_eq!(phrase("has tags", "Big", false), "What are the tags of Big?");
        assert_eq!(
            phrase("starred actors", "Big", false),
            "What are the starred actors of Big?"
        );
        assert_eq!(phrase("member of", "Mercury", false), "What is Mercury member of?");
        assert_eq!(phrase("address", "Mercury", false), "What is the address of Mercury?");
        assert_eq!(phrase("founded", "Lima", true), "When was Lima founded?");
        assert_eq!(phrase("in language", "Big", false), "What is the language of Big?");
        assert_eq!(phrase("founded", "Lima", false), "What is the founded of Lima?");
        assert!(readable("Big") && !readable("A\nSELECT") && !readable(" ") && !readable(&"x".repeat(61)));
    }
}
