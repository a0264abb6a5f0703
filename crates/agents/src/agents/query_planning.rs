//! Query-planning agent (paper §5, Algorithm 3): generates candidate queries from the QIR and its
//! links, has the model select the relevant predicates, validates the selection, executes and
//! aggregates.
//!
//! - **Query generator**: [`QueryGenerator`], cut at query_num.
//! - **Predicate selection** (zero-shot CoT, `{"keywords": [...]}`) is skipped when it is forced:
//!   one candidate, or one predicate label among all candidates. The model's answer is constrained
//!   to the listed labels and checked by the **query validator** (non-empty, only listed
//!   predicates; retried ≤ θ).
//! - **Ground before asking**: when the best candidate's predicates are named as the relation
//!   phrases (similarity ≥ `relation_match_score`) and the phrases are words of the question, it
//!   runs first and the model is not asked.
//! - **Execution with feedback**: candidates using the best-ranked selected predicate run first; the
//!   first group that returns something is the answer (its results united and de-duplicated). Only
//!   when every selected query is empty are up to `fallback_queries` other candidates tried, best
//!   first. An empty graph result is reported as "no answer": nothing is ever made up.
//! - Each answer value carries its supporting triples (the query's patterns under its bindings).
//!
//! Route: chat agent.

use crate::answer::{Answer, AnswerValue, ValueKind};
use crate::ask::ask_validated;
use crate::context::AgentContext;
use crate::entity_spotting::phrase_in_question;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::qir::QuestionKind;
use crate::query_generator::{COUNT_VARIABLE, CandidateQuery, PredicateChoice, QueryGenerator};
use crate::state::{AgentState, ExecutedQuery, Outcome, QueryReason};
use chatty_kg_graph::{GraphError, QueryResults, Term, term_text};
use serde::Deserialize;
use serde_json::json;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::collections::HashMap;
use std::time::Instant;

pub struct QueryPlanningAgent;

pub const NAME: &str = "query_planning";

/// Predicates the model may select at once.
const MAX_SELECTED: usize = 5;

/// Answer IRIs whose labels are fetched for display.
const MAX_LABELLED: usize = 2000;

#[derive(Deserialize)]
struct Selection {
    keywords: Vec<String>,
}

#[async_trait::async_trait]
impl Agent for QueryPlanningAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<(), AgentError> {
        let qir = state.require_qir(NAME)?;
        let vertices = state.linked_vertices();
        let mut predicates: Vec<Vec<PredicateChoice>> = vec![Vec::new(); qir.triples.len()];
        for link in &state.relations {
            if let Some(slot) = predicates.get_mut(link.triple) {
                slot.clone_from(&link.predicates);
            }
        }
        let candidates = QueryGenerator::generate(&qir, &vertices, &predicates, ctx.params.query_num)?;
        if candidates.is_empty() {
            state.stop(Outcome::NoQuery);
            return Ok(());
        }
        let plan = plan(
            ctx,
            qir.kind,
            state.working_question(),
            &qir.relations,
            &candidates,
            &predicates,
        )
        .await?;
        if plan.is_empty() {
            state.stop(Outcome::NoQuery);
            return Ok(());
        }

        let mut last_error = None;
        // (index in state.queries, candidate, results) of the queries that answered.
        let mut found: Vec<(usize, usize, QueryResults)> = Vec::new();
        'groups: for (group, reason) in &plan {
            for &c in group {
                let candidate = &candidates[c];
                let started = Instant::now();
                let result = ctx.kg.query(&candidate.query).await;
                let elapsed = started.elapsed();
                state.execution_time += elapsed;
                let mut executed = ExecutedQuery {
                    sparql: candidate.query.to_string(),
                    predicates: candidate.predicates.clone(),
                    reason: *reason,
                    rows: 0,
                    used: false,
                    elapsed_ms: elapsed.as_secs_f64() * 1000.0,
                    error: None,
                };
                match result {
                    Ok(results) => {
                        executed.rows = row_count(&results);
                        if has_answer(&results, qir.kind) {
                            found.push((state.queries.len(), c, results));
                        }
                    }
                    Err(e) => {
                        executed.error = Some(e.to_string());
                        last_error = Some(e);
                    }
                }
                state.queries.push(executed);
                // A fallback is tried one query at a time: the first that answers is the answer.
                if *reason == QueryReason::Fallback && !found.is_empty() {
                    break 'groups;
                }
            }
            if !found.is_empty() {
                break;
            }
        }
        if state.queries.iter().all(|q| q.error.is_some())
            && let Some(error) = last_error
        {
            return Err(error.into());
        }

        let mut answer = if found.is_empty() {
            // Every query ran empty. For yes/no and how-many that is itself the answer.
            match qir.kind {
                QuestionKind::Boolean => Answer {
                    kind: qir.kind,
                    values: vec![AnswerValue::boolean(false)],
                    truncated: false,
                },
                QuestionKind::Count => Answer {
                    kind: qir.kind,
                    values: vec![AnswerValue::count(0)],
                    truncated: false,
                },
                QuestionKind::List => {
                    state.stop(Outcome::NoAnswer);
                    return Ok(());
                }
            }
        } else {
            let mut used = Vec::with_capacity(found.len());
            for (executed, candidate, results) in found {
                state.queries[executed].used = true;
                used.push((&candidates[candidate], results));
            }
            let target = qir.target().unwrap_or(COUNT_VARIABLE);
            aggregate(qir.kind, target, &used, ctx.params.provenance_per_answer)
        };
        label_values(ctx, &mut answer).await?;
        state.answer = Some(answer);
        state.stop(Outcome::Answered);
        Ok(())
    }
}

/// Groups of candidates in the order they run, with the reason each runs.
async fn plan(
    ctx: &AgentContext,
    kind: QuestionKind,
    question: &str,
    relations: &[String],
    candidates: &[CandidateQuery],
    predicates: &[Vec<PredicateChoice>],
) -> Result<Vec<(Vec<usize>, QueryReason)>, AgentError> {
    let label_of: HashMap<&str, &str> = predicates
        .iter()
        .flatten()
        .map(|p| (p.iri.as_str(), p.label.as_str()))
        .collect();
    let label = |iri: &'_ str| label_of.get(iri).copied().unwrap_or(iri).to_owned();
    let score_of: HashMap<&str, f32> = predicates.iter().flatten().map(|p| (p.iri.as_str(), p.score)).collect();
    // Every predicate of the candidate is at least this similar to its phrase.
    let scores_at_least = |c: &CandidateQuery, threshold: f32| {
        c.predicates
            .iter()
            .all(|iri| score_of.get(iri.as_str()).copied().unwrap_or(0.0) >= threshold)
    };
    let mut labels: Vec<String> = Vec::new();
    for candidate in candidates {
        for iri in &candidate.predicates {
            let label = label(iri);
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
    }
    if candidates.len() == 1 || labels.len() == 1 {
        // Nobody judges a forced candidate, so its predicates must at least resemble the phrases.
        let plausible = (0..candidates.len())
            .filter(|&c| {
                kind == QuestionKind::Boolean || scores_at_least(&candidates[c], ctx.params.min_relation_score)
            })
            .collect::<Vec<_>>();
        return Ok(if plausible.is_empty() {
            Vec::new()
        } else {
            vec![(plausible, QueryReason::Forced)]
        });
    }
    let mut groups = Vec::new();
    let mut assigned = vec![false; candidates.len()];
    // Ground before asking: the best candidate's predicates say what the question says, in the
    // question's own words (a phrase the model copied from its examples, "written by" for "what
    // words describe X", matches some label just as well).
    if scores_at_least(&candidates[0], ctx.params.relation_match_score)
        && relations.iter().all(|r| phrase_in_question(r, question))
    {
        assigned[0] = true;
        groups.push((vec![0], QueryReason::LabelMatch));
    } else {
        let mut selected = select_predicates(ctx, question, relations, &labels).await?;
        // The model filters; the embedding ranking orders (labels are listed best first).
        selected.sort_by_key(|selected| labels.iter().position(|l| l == selected));
        for selected in &selected {
            let group: Vec<usize> = (0..candidates.len())
                .filter(|&c| !assigned[c] && candidates[c].predicates.iter().any(|iri| label(iri) == *selected))
                .collect();
            for &c in &group {
                assigned[c] = true;
            }
            if !group.is_empty() {
                groups.push((group, QueryReason::Selected));
            }
        }
    }
    let fallback: Vec<usize> = (0..candidates.len())
        .filter(|&c| !assigned[c])
        .take(ctx.params.fallback_queries)
        .collect();
    if !fallback.is_empty() {
        groups.push((fallback, QueryReason::Fallback));
    }
    Ok(groups)
}

/// The model's predicate selection, checked by the query validator.
async fn select_predicates(
    ctx: &AgentContext,
    question: &str,
    relations: &[String],
    labels: &[String],
) -> Result<Vec<String>, AgentError> {
    let schema = json!({
        "type": "object",
        "properties": {"keywords": {
            "type": "array", "items": {"enum": labels},
            "minItems": 1, "maxItems": MAX_SELECTED.min(labels.len())
        }},
        "required": ["keywords"], "additionalProperties": false
    });
    let variables = json!({"question": question, "relations": relations, "predicates": labels});
    ask_validated(ctx, NAME, NAME, variables, schema, |s: Selection| {
        query_validator(&s.keywords, labels)
    })
    .await
}

/// Non-empty, and only listed predicates (matched without case); duplicates dropped.
fn query_validator(keywords: &[String], labels: &[String]) -> Result<Vec<String>, String> {
    let mut selected: Vec<String> = Vec::new();
    for keyword in keywords {
        let wanted = keyword.trim();
        let Some(label) = labels.iter().find(|l| l.eq_ignore_ascii_case(wanted)) else {
            return Err(format!("{wanted:?} is not one of the listed predicates"));
        };
        if !selected.contains(label) {
            selected.push(label.clone());
        }
    }
    if selected.is_empty() {
        return Err("no predicate was selected; choose at least one".into());
    }
    Ok(selected)
}

fn row_count(results: &QueryResults) -> usize {
    match results {
        QueryResults::Solutions(s) => s.rows.len(),
        QueryResults::Boolean(_) => 1,
    }
}

fn count_of(results: &QueryResults) -> Option<u64> {
    match results {
        QueryResults::Solutions(s) => s.column(COUNT_VARIABLE).find_map(|t| match t {
            Term::Literal(l) => l.value().parse().ok(),
            _ => None,
        }),
        QueryResults::Boolean(_) => None,
    }
}

/// Whether a result answers the question: a true ASK, a non-zero count, or at least one row.
fn has_answer(results: &QueryResults, kind: QuestionKind) -> bool {
    match (kind, results) {
        (_, QueryResults::Boolean(b)) => *b,
        (QuestionKind::Count, r) => count_of(r).is_some_and(|n| n > 0),
        (_, QueryResults::Solutions(s)) => !s.rows.is_empty(),
    }
}

/// Unites the results of the queries that answered, values de-duplicated in order, each with
/// its supporting triples.
fn aggregate(
    kind: QuestionKind,
    target: &str,
    used: &[(&CandidateQuery, QueryResults)],
    provenance_per_answer: usize,
) -> Answer {
    let mut answer = Answer {
        kind,
        values: Vec::new(),
        truncated: false,
    };
    match kind {
        QuestionKind::Boolean => {
            let mut value = AnswerValue::boolean(true);
            if let Some((candidate, _)) = used.first() {
                value.provenance = candidate
                    .patterns
                    .iter()
                    .filter_map(|p| instantiate(p, &HashMap::new()))
                    .collect();
            }
            answer.values.push(value);
        }
        QuestionKind::Count => {
            let count = used.iter().filter_map(|(_, r)| count_of(r)).max().unwrap_or(0);
            answer.values.push(AnswerValue::count(count));
        }
        QuestionKind::List => {
            let mut index: HashMap<String, usize> = HashMap::new();
            for (candidate, result) in used {
                let QueryResults::Solutions(solutions) = result else {
                    continue;
                };
                answer.truncated |= solutions.truncated;
                let Some(column) = solutions.variables.iter().position(|v| v == target) else {
                    continue;
                };
                for row in &solutions.rows {
                    let Some(value) = row
                        .get(column)
                        .and_then(Option::as_ref)
                        .and_then(AnswerValue::from_term)
                    else {
                        continue;
                    };
                    let at = *index.entry(value.value.clone()).or_insert_with(|| {
                        answer.values.push(value);
                        answer.values.len() - 1
                    });
                    let slot = &mut answer.values[at].provenance;
                    if slot.len() >= provenance_per_answer.saturating_mul(candidate.patterns.len()) {
                        continue;
                    }
                    let bindings: HashMap<&str, &Term> = solutions
                        .variables
                        .iter()
                        .zip(row)
                        .filter_map(|(v, t)| Some((v.as_str(), t.as_ref()?)))
                        .collect();
                    for pattern in &candidate.patterns {
                        if let Some(t) = instantiate(pattern, &bindings)
                            && !slot.contains(&t)
                        {
                            slot.push(t);
                        }
                    }
                }
            }
        }
    }
    answer
}

/// A pattern with its variables bound, as `[s, p, o]` text; `None` if a variable is unbound.
fn instantiate(pattern: &TriplePattern, bindings: &HashMap<&str, &Term>) -> Option<[String; 3]> {
    let term = |t: &TermPattern| -> Option<String> {
        match t {
            TermPattern::NamedNode(n) => Some(n.as_str().to_owned()),
            TermPattern::Literal(l) => Some(l.value().to_owned()),
            TermPattern::Variable(v) => term_text(bindings.get(v.as_str())?),
            _ => None,
        }
    };
    let predicate = match &pattern.predicate {
        NamedNodePattern::NamedNode(n) => n.as_str().to_owned(),
        NamedNodePattern::Variable(_) => return None,
    };
    Some([term(&pattern.subject)?, predicate, term(&pattern.object)?])
}

/// Fills in the labels of IRI values.
async fn label_values(ctx: &AgentContext, answer: &mut Answer) -> Result<(), GraphError> {
    let iris: Vec<&str> = answer
        .values
        .iter()
        .filter(|v| v.kind == ValueKind::Iri)
        .take(MAX_LABELLED)
        .map(|v| v.value.as_str())
        .collect();
    if iris.is_empty() {
        return Ok(());
    }
    let labels = ctx.kg.labels(&iris).await?;
    for value in &mut answer.values {
        if let Some(label) = labels.get(&value.value) {
            value.label = Some(label.clone());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_validator() {
        let labels = vec!["directed by".to_owned(), "starred actors".to_owned()];
        assert_eq!(
            query_validator(&["Starred Actors".into(), "starred actors".into()], &labels).unwrap(),
            vec!["starred actors"]
        );
        assert!(query_validator(&[], &labels).unwrap_err().contains("at least one"));
        assert!(
            query_validator(&["genre".into()], &labels)
                .unwrap_err()
                .contains("not one of")
        );
    }
}
