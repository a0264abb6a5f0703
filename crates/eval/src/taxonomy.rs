//! Why a question was not answered fully right, one class per failed question (DESIGN.md's
//! taxonomy, with the relation path split out): no entity linked, wrong entity, no predicate,
//! wrong number of hops (the chosen path is shorter or longer than the gold one), wrong path (as
//! many hops, other relations), wrong predicate, empty result, answered but wrong, or an error. "Wrong" is judged against what the benchmark reveals: the
//! IRIs of its gold SPARQL, the topic entity (MetaQA's `[...]`, PathQuestion's path head) and the
//! relation path (PathQuestion). Without such evidence a failure falls through to the next class.

use crate::dataset::Item;
use crate::metrics::normalize;
use chatty_kg_agents::{Explanation, Outcome};
use serde::{Deserialize, Serialize};

/// Why a question ended in an error (a record's `error`): its kind and message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorInfo {
    pub kind: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// The pipeline failed (the record's `error` says how).
    Error,
    NoEntityLinked,
    WrongEntity,
    NoPredicate,
    WrongHops,
    WrongPath,
    WrongPredicate,
    EmptyResult,
    AnsweredButWrong,
}

impl Failure {
    pub const ALL: [Failure; 9] = [
        Failure::Error,
        Failure::NoEntityLinked,
        Failure::WrongEntity,
        Failure::NoPredicate,
        Failure::WrongHops,
        Failure::WrongPath,
        Failure::WrongPredicate,
        Failure::EmptyResult,
        Failure::AnsweredButWrong,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Failure::Error => "error",
            Failure::NoEntityLinked => "no entity linked",
            Failure::WrongEntity => "wrong entity",
            Failure::NoPredicate => "no predicate",
            Failure::WrongHops => "wrong number of hops",
            Failure::WrongPath => "wrong path",
            Failure::WrongPredicate => "wrong predicate",
            Failure::EmptyResult => "empty result",
            Failure::AnsweredButWrong => "answered but wrong",
        }
    }
}

/// The IRIs written in a SPARQL text (`<...>`).
fn iris_in(sparql: &str) -> Vec<&str> {
    sparql
        .split('<')
        .skip(1)
        .filter_map(|part| part.split_once('>').map(|(iri, _)| iri))
        .filter(|iri| iri.contains(':') && !iri.contains(char::is_whitespace))
        .collect()
}

fn local_name(iri: &str) -> &str {
    iri.rsplit(['/', '#']).next().unwrap_or(iri)
}

pub fn classify(
    item: &Item,
    explanation: Option<&Explanation>,
    error: Option<&ErrorInfo>,
    system: &[String],
) -> Failure {
    let Some(e) = explanation else {
        return Failure::Error;
    };
    if error.is_some() {
        return Failure::Error;
    }
    if matches!(e.outcome, Outcome::UnknownEntity { .. }) || e.entities.iter().all(|l| l.iri.is_none()) {
        return Failure::NoEntityLinked;
    }
    let gold_iris = item.gold_sparql.as_deref().map(iris_in).unwrap_or_default();
    let linked: Vec<&str> = e.entities.iter().filter_map(|l| l.iri.as_deref()).collect();
    let wrong_entity = if !gold_iris.is_empty() {
        !linked.iter().any(|iri| gold_iris.contains(iri))
    } else if let Some(topic) = item.tags.get("topic") {
        let topic = normalize(topic);
        !e.entities
            .iter()
            .any(|l| l.label.as_deref().is_some_and(|label| normalize(label) == topic))
    } else {
        false
    };
    if wrong_entity {
        return Failure::WrongEntity;
    }
    if matches!(e.outcome, Outcome::NoQuery) || e.sparql.is_empty() {
        return Failure::NoPredicate;
    }
    if let Some(chosen) = e.chosen_path() {
        let hops = chosen.path.hops.len();
        if let Some(gold) = item.tags.get("hops").and_then(|h| h.parse::<usize>().ok())
            && gold != hops
        {
            return Failure::WrongHops;
        }
        let local: Vec<&str> = chosen.path.hops.iter().map(|h| local_name(&h.predicate)).collect();
        if let Some(path) = item.tags.get("path") {
            if path.split('/').collect::<Vec<_>>() != local {
                return Failure::WrongPath;
            }
        } else if !gold_iris.is_empty()
            && !chosen
                .path
                .hops
                .iter()
                .all(|h| gold_iris.contains(&h.predicate.as_str()))
        {
            return Failure::WrongPath;
        }
    }
    let used: Vec<&str> = e
        .sparql
        .iter()
        .filter(|q| q.used)
        .flat_map(|q| q.predicates.iter().map(String::as_str))
        .collect();
    let wrong_predicate = if used.is_empty() {
        false
    } else if !gold_iris.is_empty() {
        !used.iter().any(|p| gold_iris.contains(p))
    } else if let Some(path) = item.tags.get("path") {
        let gold: Vec<&str> = path.split('/').collect();
        !used.iter().any(|p| gold.contains(&local_name(p)))
    } else {
        false
    };
    if wrong_predicate {
        return Failure::WrongPredicate;
    }
    if matches!(e.outcome, Outcome::NoAnswer) || system.is_empty() {
        return Failure::EmptyResult;
    }
    Failure::AnsweredButWrong
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iris_are_read_from_sparql() {
        let q = "SELECT ?x WHERE { <http://x.org/Big> <http://x.org/director> ?x . FILTER(?y < 3 && ?z > 2) }";
        assert_eq!(iris_in(q), ["http://x.org/Big", "http://x.org/director"]);
        assert_eq!(local_name("http://x.org/relation/directed_by"), "directed_by");
        assert_eq!(local_name("http://x.org/onto#genre"), "genre");
    }
}
