//! Clarify agent (beyond the paper): after an answer in a dialogue, checks whether the linked
//! vertex was one of several with its label that the question fits equally, and if so asks the
//! user which one is meant instead of answering for the most connected one.
//!
//! Nothing is asked when the question already decides (no other homonym has the answer's path),
//! when the dialogue decided (a referent, an earlier choice), or when one vertex dominates the
//! others in the graph (at least [`DOMINANCE`] times the degree of the next: "Paris" the
//! capital, not the town in Texas). At most [`MAX_OPTIONS`] vertices are offered; each is
//! described by what tells it apart ([`crate::dialogue::clarification::describe`]). Single questions
//! (`ask`, benchmarks) are never held: there is no next turn to answer.
//!
//! Queries: one bounded SELECT per other homonym (the answer's path from it; listed with the
//! question's queries as `homonym`); when another fits, one degree count; when asking, one class
//! lookup, one neighbourhood query and the names of what it reaches. Outcome: [`CHECKED`].

use crate::candidates::queries::{Shape, select};
use crate::context::AgentContext;
use crate::dialogue::clarification::{Clarification, Fact, Profile, describe};
use crate::error::AgentError;
use crate::graph::Agent;
use crate::state::{AgentState, ExecutedQuery, LinkMethod, Mode, Outcome, QueryReason};
use chatty_kg_graph::{Direction, QueryResults, named_neighbourhood};
use std::collections::HashMap;

pub struct ClarifyAgent;

pub const NAME: &str = "clarify";
/// Checked: the answer stands, or the reply will ask which vertex is meant.
pub const CHECKED: &str = "checked";

/// Vertices offered at most.
pub const MAX_OPTIONS: usize = 4;
/// A vertex with this many times the degree of every other fitting one is the one meant.
pub const DOMINANCE: u64 = 5;
/// Outgoing edges read to describe the options.
const DESCRIBING_EDGES: usize = 400;

#[async_trait::async_trait]
impl Agent for ClarifyAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        if state.mode != Mode::MultiTurn || !ctx.params.clarify || state.outcome != Some(Outcome::Answered) {
            return Ok(CHECKED);
        }
        if let Some(clarification) = tie(state, ctx).await? {
            state.answer = None;
            state.outcome = Some(Outcome::Clarify { clarification });
        }
        Ok(CHECKED)
    }
}

/// The clarification to ask, when the one anchor's vertex ties with homonyms. The path checks it
/// runs are recorded with the question's queries.
async fn tie(state: &mut AgentState, ctx: &AgentContext) -> Result<Option<Clarification>, AgentError> {
    let [anchor] = state.anchors.as_slice() else {
        return Ok(None);
    };
    let anchor = anchor.clone();
    let Some(link) = state
        .entities
        .iter()
        .find(|l| l.iri.as_deref() == Some(anchor.iri.as_str()))
        .cloned()
    else {
        return Ok(None);
    };
    if link.homonyms.is_empty() || matches!(link.method, LinkMethod::Referent | LinkMethod::Clarified) {
        return Ok(None);
    }
    // The path the answer came from: the used query's, else the chosen one.
    let used = state.queries.iter().find(|q| q.used);
    let chosen = state.path_choice.and_then(|c| state.paths.get(c.index));
    let path = used
        .and_then(|q| {
            state
                .paths
                .iter()
                .find(|s| s.path.anchor == 0 && s.path.hops.iter().map(|h| &h.predicate).eq(q.predicates.iter()))
        })
        .or(chosen)
        .map(|s| s.path.clone());
    let Some(path) = path else {
        return Ok(None);
    };
    let mut fitting = vec![anchor.iri.clone()];
    for homonym in link.homonyms.iter().take(MAX_OPTIONS - 1) {
        let candidate = select(&[(homonym.as_str(), &path)], &Shape::List { distinct_only: true })?;
        let query = candidate.query.capped(1);
        let started = std::time::Instant::now();
        let result = ctx.kg.query(&query).await;
        let rows = match &result {
            Ok(QueryResults::Solutions(s)) => s.rows.len(),
            _ => 0,
        };
        state.queries.push(ExecutedQuery {
            sparql: query.to_string(),
            predicates: candidate.predicates,
            reason: QueryReason::Homonym,
            rows,
            used: false,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            error: result.as_ref().err().map(ToString::to_string),
            attribute: None,
        });
        result?;
        if rows > 0 {
            fitting.push(homonym.clone());
        }
    }
    if fitting.len() < 2 {
        return Ok(None);
    }
    let refs: Vec<&str> = fitting.iter().map(String::as_str).collect();
    let degrees = ctx.kg.degrees(&refs).await?;
    let degree = |iri: &str| degrees.get(iri).copied().unwrap_or(0);
    let top = degree(&fitting[0]);
    let next = fitting[1..].iter().map(|i| degree(i)).max().unwrap_or(0);
    if top >= DOMINANCE.saturating_mul(next.max(1)) {
        return Ok(None);
    }
    let label = link.label.clone().unwrap_or_else(|| anchor.label.clone());
    let profiles = profiles(ctx, &fitting, &label, &path).await?;
    Ok(Some(Clarification {
        mention: link.mention.clone(),
        label,
        question: state.working_question().to_owned(),
        options: describe(&profiles),
    }))
}

/// Names, classes and named outgoing facts of each option. The answer's own first predicate is left
/// out: it would answer the question in the options.
async fn profiles(
    ctx: &AgentContext,
    iris: &[String],
    label: &str,
    path: &crate::candidates::paths::RelationPath,
) -> Result<Vec<Profile>, AgentError> {
    let refs: Vec<&str> = iris.iter().map(String::as_str).collect();
    let classes = ctx.kg.classes(&refs).await?;
    // Each option by its own name: a mention held by several labels ("Debian": Debian Games
    // Team, Debian QA Group) offers vertices whose labels differ.
    let mut names = ctx.kg.labels(&refs).await?;
    let answer_predicate = path.hops.first().map(|h| h.predicate.as_str());
    let label_predicates = &ctx.kg.settings().label_predicates;
    // The neighbourhood leaves out the graph's typing and description predicates (the schema's):
    // the classes and descriptions are asked for themselves.
    let keep = |e: &chatty_kg_graph::NeighbourEdge| {
        Some(e.predicate.as_str()) != answer_predicate && !label_predicates.contains(&e.predicate)
    };
    let edges = named_neighbourhood(ctx.kg.as_ref(), &refs, Direction::Outgoing, DESCRIBING_EDGES, &keep).await?;
    let mut facts: HashMap<&str, Vec<Fact>> = HashMap::new();
    // A description the graph writes (Wikidata's "American actor"), when it has them, first.
    for (iri, description) in ctx.kg.descriptions(&refs).await? {
        if let Some(vertex) = refs.iter().find(|r| **r == iri) {
            facts.entry(vertex).or_default().push(Fact {
                predicate: DESCRIPTION.to_owned(),
                value: description,
            });
        }
    }
    for named in &edges {
        let Some(value) = named.neighbour_name.clone() else {
            continue;
        };
        let fact = Fact {
            predicate: named.predicate_name.clone(),
            value,
        };
        let list = facts.entry(named.edge.vertex.as_str()).or_default();
        if !list.contains(&fact) {
            list.push(fact);
        }
    }
    Ok(iris
        .iter()
        .map(|iri| Profile {
            iri: iri.clone(),
            label: names.remove(iri.as_str()).unwrap_or_else(|| label.to_owned()),
            kinds: classes.get(iri).cloned().unwrap_or_default(),
            facts: facts.remove(iri.as_str()).unwrap_or_default(),
        })
        .collect())
}

/// What a description is called among an option's facts.
const DESCRIPTION: &str = "description";
