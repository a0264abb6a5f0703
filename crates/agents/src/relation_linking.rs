//! Relation linking, the second half of the matching agent (paper §4.3): for each QIR triple, the
//! predicates on the graph's edges next to its linked vertices, each labelled from its IRI and
//! ranked by sentence-embedding similarity to the triple's relation phrase.
//!
//! - entity–variable triples: the 1-hop predicates around the entity, both directions;
//! - entity–entity triples (yes/no questions): the predicates between the two, else around the
//!   subject;
//! - variable–variable triples (multi-hop): the predicates around the *bindings* of a variable that
//!   an already linked triple binds, found with one query per direction over those triples' best
//!   predicates (the reference code has no answer for these).
//!
//! A choice is `forward` when the graph's edge runs from the QIR triple's subject to its object.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::qir::{Qir, QirTerm, QirTriple};
use crate::query_generator::{PredicateChoice, triple_pattern};
use crate::state::RelationLink;
use chatty_kg_embed::cosine;
use chatty_kg_graph::{Direction, PredicateLink, ReadQuery, predicate_links, triple, var};
use spargebra::algebra::GraphPattern;
use std::collections::HashMap;

/// Predicates fetched around one vertex, per direction.
const NEIGHBOUR_PREDICATES: usize = 500;

/// Links every triple of `qir`; a triple left with no predicate has an empty list.
pub(crate) async fn link_relations(
    ctx: &AgentContext,
    qir: &Qir,
    vertices: &HashMap<String, String>,
) -> Result<Vec<RelationLink>, AgentError> {
    let mut ranked: Vec<Option<Vec<PredicateChoice>>> = vec![None; qir.triples.len()];
    for (i, t) in qir.triples.iter().enumerate() {
        let links = match (&t.subject, &t.object) {
            (QirTerm::Entity(s), QirTerm::Entity(o)) => {
                let (s, o) = (vertex(vertices, s)?, vertex(vertices, o)?);
                let between = ctx.kg.predicates_between(s, o).await?;
                if between.is_empty() {
                    ctx.kg.predicates_around(s, NEIGHBOUR_PREDICATES).await?
                } else {
                    between
                }
            }
            (QirTerm::Entity(s), QirTerm::Variable(_)) => {
                ctx.kg
                    .predicates_around(vertex(vertices, s)?, NEIGHBOUR_PREDICATES)
                    .await?
            }
            (QirTerm::Variable(_), QirTerm::Entity(o)) => {
                let around = ctx
                    .kg
                    .predicates_around(vertex(vertices, o)?, NEIGHBOUR_PREDICATES)
                    .await?;
                ranked[i] = Some(rank(ctx, &t.relation, orient(around, false)).await?);
                continue;
            }
            (QirTerm::Variable(_), QirTerm::Variable(_)) => continue,
        };
        ranked[i] = Some(rank(ctx, &t.relation, orient(links, true)).await?);
    }
    // Variable–variable triples, each once a triple linked before binds one of its variables.
    loop {
        let mut progress = false;
        for i in 0..qir.triples.len() {
            if ranked[i].is_some() {
                continue;
            }
            let t = &qir.triples[i];
            let linked: Vec<(&QirTriple, &PredicateChoice)> = qir
                .triples
                .iter()
                .zip(&ranked)
                .filter_map(|(t, r)| Some((t, r.as_ref()?.first()?)))
                .collect();
            let bound = |term: &QirTerm| linked.iter().any(|(l, _)| l.subject == *term || l.object == *term);
            let (known, known_is_subject) = if bound(&t.subject) {
                (&t.subject, true)
            } else if bound(&t.object) {
                (&t.object, false)
            } else {
                continue;
            };
            let QirTerm::Variable(name) = known else { continue };
            let links = predicates_around_bindings(ctx, &linked, vertices, name).await?;
            ranked[i] = Some(rank(ctx, &t.relation, orient(links, known_is_subject)).await?);
            progress = true;
        }
        if !progress {
            break;
        }
    }
    Ok(qir
        .triples
        .iter()
        .zip(ranked)
        .enumerate()
        .map(|(i, (t, predicates))| RelationLink {
            triple: i,
            phrase: t.relation.clone(),
            predicates: predicates.unwrap_or_default(),
        })
        .collect())
}

fn vertex<'a>(vertices: &'a HashMap<String, String>, mention: &str) -> Result<&'a str, AgentError> {
    vertices
        .get(mention)
        .map(String::as_str)
        .ok_or(AgentError::MissingState {
            agent: crate::agents::matching::NAME,
            what: "a vertex for every entity",
        })
}

/// `(iri, label, forward)`: an edge leaving the known end is forward when that end is the QIR
/// triple's subject.
fn orient(links: Vec<PredicateLink>, known_is_subject: bool) -> Vec<(String, String, bool)> {
    links
        .into_iter()
        .map(|l| {
            let forward = (l.direction == Direction::Outgoing) == known_is_subject;
            (l.iri, l.label, forward)
        })
        .collect()
}

/// `SELECT DISTINCT ?p WHERE { <linked triples> . ?x ?p ?o }` (and `?o ?p ?x`): the predicates
/// next to the values the linked triples bind to `?x`, using each linked triple's best predicate.
async fn predicates_around_bindings(
    ctx: &AgentContext,
    linked: &[(&QirTriple, &PredicateChoice)],
    vertices: &HashMap<String, String>,
    variable: &str,
) -> Result<Vec<PredicateLink>, AgentError> {
    let mut patterns = Vec::new();
    for (t, choice) in linked {
        if let Some(pattern) = triple_pattern(t, choice, vertices)? {
            patterns.push(pattern);
        }
    }
    let (p, other) = (var(PREDICATE_VARIABLE), var(OTHER_VARIABLE));
    let mut links = Vec::new();
    for direction in [Direction::Outgoing, Direction::Incoming] {
        let mut bgp = patterns.clone();
        bgp.push(match direction {
            Direction::Outgoing => triple(var(variable), p.clone(), other.clone()),
            Direction::Incoming => triple(other.clone(), p.clone(), var(variable)),
        });
        let query = ReadQuery::select(GraphPattern::Slice {
            inner: Box::new(GraphPattern::Distinct {
                inner: Box::new(GraphPattern::Project {
                    inner: Box::new(GraphPattern::Bgp { patterns: bgp }),
                    variables: vec![p.clone()],
                }),
            }),
            start: 0,
            length: Some(NEIGHBOUR_PREDICATES),
        })?;
        let results = ctx.kg.query(&query).await?;
        links.extend(predicate_links(
            ctx.kg.settings(),
            &results,
            PREDICATE_VARIABLE,
            direction,
        ));
    }
    Ok(links)
}

/// Names no QIR variable takes (the validator's names are the model's words).
const PREDICATE_VARIABLE: &str = "chattykg_p";
const OTHER_VARIABLE: &str = "chattykg_o";

/// Ranks predicates by cosine similarity of their label to `phrase`, best first, at most
/// `relations_per_triple`; each (predicate, direction) once.
async fn rank(
    ctx: &AgentContext,
    phrase: &str,
    links: Vec<(String, String, bool)>,
) -> Result<Vec<PredicateChoice>, AgentError> {
    let mut seen = std::collections::HashSet::new();
    let links: Vec<_> = links
        .into_iter()
        .filter(|(iri, _, f)| seen.insert((iri.clone(), *f)))
        .collect();
    if links.is_empty() {
        return Ok(Vec::new());
    }
    let mut texts: Vec<String> = vec![phrase.to_owned()];
    for (_, label, _) in &links {
        if !texts.contains(label) {
            texts.push(label.clone());
        }
    }
    let embedder = ctx.embedder.clone();
    let batch = texts.clone();
    // Embedding is CPU work: keep it off the async workers.
    let vectors = tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        embedder.embed(&refs)
    })
    .await
    .map_err(|e| AgentError::Worker { message: e.to_string() })??;
    let score_of: HashMap<&str, f32> = texts
        .iter()
        .zip(&vectors)
        .map(|(t, v)| (t.as_str(), cosine(&vectors[0], v)))
        .collect();
    let mut choices: Vec<PredicateChoice> = links
        .into_iter()
        .map(|(iri, label, forward)| PredicateChoice {
            score: score_of.get(label.as_str()).copied().unwrap_or(0.0),
            iri,
            label,
            forward,
        })
        .collect();
    choices.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.label.cmp(&b.label))
            .then_with(|| b.forward.cmp(&a.forward))
    });
    choices.truncate(ctx.params.relations_per_triple.max(1));
    Ok(choices)
}
