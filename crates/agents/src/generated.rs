//! Generate-only: the query a question comes to, to be run elsewhere or read first (`chatty-kg
//! ask --query-only`, `POST /api/kgs/{kg}/query`, MCP `generate_sparql`, the TEXT2SPARQL route).
//!
//! The query is not written blind: the agents ground it in the graph as they do for an answer
//! (linking reads labels, the path search walks the graph, the planner runs its candidates to
//! see which one has an answer). What is returned is the query whose result became the answer,
//! reduced to the answer's own columns (the provenance variables the explanation uses are
//! dropped), or, when no candidate had an answer, the first candidate tried, marked as such.

use crate::explanation::Explanation;
use crate::state::{ExecutedQuery, QueryReason};
use serde::{Deserialize, Serialize};
use spargebra::algebra::GraphPattern;
use spargebra::{Query, SparqlParser};

/// The variable every candidate query binds its answers to.
const ANSWER: &str = "answer";

/// The query a question came to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedQuery {
    /// SPARQL selecting only the answers (or ASK, or the count).
    pub sparql: String,
    /// Why this candidate was built (the chosen path, a join, the class named, …).
    pub reason: QueryReason,
    /// Whether its result was the answer; false when no candidate had one (the query is the
    /// first that was tried, and it finds nothing on this graph).
    pub answered: bool,
    /// Rows it gave when it ran (1 for ASK and counts).
    pub rows: usize,
}

impl Explanation {
    /// The query this question came to, or `None` when none was built (no entity found, a
    /// clarifying question, a stop before planning).
    pub fn generated_query(&self) -> Option<GeneratedQuery> {
        let counts = |q: &&ExecutedQuery| {
            !matches!(
                q.reason,
                QueryReason::Homonym | QueryReason::Witness | QueryReason::EarlierQuestion
            ) && q.error.is_none()
        };
        let (query, answered) = match self.sparql.iter().filter(counts).find(|q| q.used) {
            Some(used) => (used, true),
            None => (self.sparql.iter().find(counts)?, false),
        };
        Some(GeneratedQuery {
            sparql: answers_only(&query.sparql).unwrap_or_else(|| query.sparql.clone()),
            reason: query.reason,
            answered,
            rows: query.rows,
        })
    }

    /// What generate-only gives: the query, once, and the explanation without the answer's
    /// values (it shows how the query was grounded, not what it returns).
    pub fn generate_only(mut self) -> GenerateOnly {
        let generated = self.generated_query();
        self.answers.clear();
        match &generated {
            Some(q) if q.answered => self.text = "Here is the query; it has an answer on this graph.".to_owned(),
            Some(_) => self.text = "Here is the best query found; it has no answer on this graph.".to_owned(),
            None => {}
        }
        GenerateOnly {
            query: generated.as_ref().map(|q| q.sparql.clone()),
            generated,
            explanation: self,
        }
    }
}

/// A generate-only answer, as the CLI, REST, MCP and TEXT2SPARQL give it.
#[derive(Debug, Clone, Serialize)]
pub struct GenerateOnly {
    /// The SPARQL, when the question came to one.
    pub query: Option<String>,
    pub generated: Option<GeneratedQuery>,
    /// How it was found, without the answer's values.
    pub explanation: Explanation,
}

/// `sparql` with only `?answer` projected, when it is a SELECT that projects it beside other
/// variables; `None` when there is nothing to drop or it does not parse.
pub fn answers_only(sparql: &str) -> Option<String> {
    let Ok(Query::Select {
        dataset,
        pattern,
        base_iri,
    }) = SparqlParser::new().parse_query(sparql)
    else {
        return None;
    };
    let pattern = reproject(pattern)?;
    Some(
        Query::Select {
            dataset,
            pattern,
            base_iri,
        }
        .to_string(),
    )
}

/// The pattern's outermost projection narrowed to `?answer` (under DISTINCT, REDUCED and a slice).
fn reproject(pattern: GraphPattern) -> Option<GraphPattern> {
    Some(match pattern {
        GraphPattern::Distinct { inner } => GraphPattern::Distinct {
            inner: Box::new(reproject(*inner)?),
        },
        GraphPattern::Reduced { inner } => GraphPattern::Reduced {
            inner: Box::new(reproject(*inner)?),
        },
        GraphPattern::Slice { inner, start, length } => GraphPattern::Slice {
            inner: Box::new(reproject(*inner)?),
            start,
            length,
        },
        GraphPattern::Project { inner, variables } => {
            let answer = variables.iter().find(|v| v.as_str() == ANSWER)?.clone();
            if variables.len() == 1 {
                return None;
            }
            GraphPattern::Project {
                inner,
                variables: vec![answer],
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_variables_are_dropped_and_order_and_limits_kept() {
        let narrowed = answers_only(
            "SELECT DISTINCT ?answer ?x1 WHERE { <http://e/a> <http://e/p> ?x1 . ?x1 <http://e/q> ?answer . }",
        )
        .unwrap();
        assert!(narrowed.starts_with("SELECT DISTINCT ?answer WHERE"), "{narrowed}");
        assert!(narrowed.contains("?x1 <http://e/q> ?answer"), "{narrowed}");
        let ordered = answers_only(
            "SELECT DISTINCT ?answer ?key WHERE { ?answer <http://e/size> ?key . } ORDER BY DESC(?key) OFFSET 1 LIMIT 1",
        )
        .unwrap();
        assert!(ordered.starts_with("SELECT DISTINCT ?answer WHERE"), "{ordered}");
        assert!(ordered.contains("ORDER BY DESC(?key)"), "{ordered}");
        assert!(ordered.contains("OFFSET 1") && ordered.contains("LIMIT 1"), "{ordered}");
        // Nothing to drop, no answer variable, not a SELECT, not SPARQL: left as it is.
        assert_eq!(
            answers_only("SELECT DISTINCT ?answer WHERE { ?answer <http://e/p> 1 }"),
            None
        );
        assert_eq!(answers_only("SELECT ?count WHERE { ?s <http://e/p> ?count }"), None);
        assert_eq!(answers_only("ASK { <http://e/a> <http://e/p> <http://e/b> }"), None);
        assert_eq!(answers_only("not sparql"), None);
    }
}
