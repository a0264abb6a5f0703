//! A word modifying the asked class that no label holds ("*Danish* films", "*Swedish* holidays",
//! "*Methodist* politicians", "which *shell* package"): it names a vertex the class's instances
//! point to (Denmark, Sweden, Methodism, the section "shells"), only not by its label. The graph
//! gives the candidates — the vertices a sample of the class's instances have as values — and the
//! word's embedding against their names chooses among them, so no list of demonyms or adjectives
//! is needed, and a word no value of the class resembles links nothing.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::linking::link::{EntityLink, LinkMethod};
use crate::linking::typed::instances_of;
use crate::understanding::classes::ClassMention;
use chatty_kg_graph::{Direction, Term};
use std::collections::{BTreeMap, BTreeSet};

/// Instances of the class sampled for their values.
const INSTANCES: usize = 200;
/// Candidate values compared with the word: those most instances share.
const CANDIDATES: usize = 300;
/// The least similarity at which a value's name says what the word says ("Danish" → "Denmark").
pub const MODIFIER_SIMILARITY: f32 = 0.6;
/// The best value must be this much more like the word than the next (else the word is not read).
const MARGIN: f32 = 0.05;

/// The word right before the class's words, as written, when it is a content word of the
/// question (not its first word, not a form word): "Give me all *Danish* films".
pub(crate) fn modifier_of(question: &str, class: &str) -> Option<String> {
    let first = class.split(' ').next()?;
    let written: Vec<&str> = question
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    let at = written
        .iter()
        .position(|w| chatty_kg_graph::text::normalize_tokens(w).first().map(String::as_str) == Some(first))?;
    let before = *written.get(at.checked_sub(1)?)?;
    let lower = before.to_lowercase();
    let form_word = crate::words::is_function_word(&lower)
        || crate::understanding::classes::is_form_word(&lower)
        || crate::understanding::form::is_superlative(&lower);
    (at >= 2 && !form_word && before.chars().all(|c| c.is_alphanumeric() || c == '-')).then(|| before.to_owned())
}

/// The vertex that the word modifying the class names among the values of the class's
/// instances, linked as [`LinkMethod::Modifier`]; `None` when no value is like it enough.
pub(crate) async fn ground_modifier(
    ctx: &AgentContext,
    question: &str,
    class: &ClassMention,
) -> Result<Option<EntityLink>, AgentError> {
    let Some(word) = modifier_of(question, &class.mention) else {
        return Ok(None);
    };
    let sample = instances_of(ctx, &class.iri, INSTANCES).await?;
    if sample.is_empty() {
        return Ok(None);
    }
    let refs: Vec<&str> = sample.iter().map(String::as_str).collect();
    let edges = ctx
        .kg
        .neighbourhood(&refs, Direction::Outgoing, ctx.params.path_edge_limit)
        .await?;
    // Value → the instances that have it.
    let mut held: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let profile = ctx.kg.profile_or_default().await;
    let types = profile.conventions.types();
    for edge in &edges.edges {
        if types.is_type_predicate(&edge.predicate) {
            continue;
        }
        if let Term::NamedNode(n) = &edge.neighbour
            && n.as_str() != class.iri
        {
            held.entry(n.as_str().to_owned())
                .or_default()
                .insert(edge.vertex.clone());
        }
    }
    let mut values: Vec<(String, usize)> = held.into_iter().map(|(v, by)| (v, by.len())).collect();
    values.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    values.truncate(CANDIDATES);
    let iris: Vec<&str> = values.iter().map(|(v, _)| v.as_str()).collect();
    let names = ctx.kg.labels(&iris).await?;
    let named: Vec<(&str, String)> = iris
        .iter()
        .filter_map(|iri| names.get(*iri).map(|n| (*iri, n.clone())))
        .collect();
    if named.is_empty() {
        return Ok(None);
    }
    let labels: Vec<String> = named.iter().map(|(_, n)| n.clone()).collect();
    let similarity = crate::similarity::similarity(ctx, &word, &labels).await?;
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by(|&a, &b| similarity[b].total_cmp(&similarity[a]).then(a.cmp(&b)));
    let best = order[0];
    let next = order.get(1).map_or(0.0, |&i| similarity[i]);
    tracing::debug!(
        word,
        best = %labels[best],
        similarity = similarity[best],
        next,
        "a word modifying the class"
    );
    if similarity[best] < MODIFIER_SIMILARITY || similarity[best] - next < MARGIN {
        return Ok(None);
    }
    Ok(Some(EntityLink {
        mention: word,
        iri: Some(named[best].0.to_owned()),
        label: Some(labels[best].clone()),
        method: LinkMethod::Modifier,
        candidates: labels.len(),
        top_candidates: order
            .iter()
            .take(3)
            .map(|&i| format!("{} ({:.2})", labels[i], similarity[i]))
            .collect(),
        homonyms: Vec::new(),
        homonym_retried: false,
        read_as_words: false,
    }))
}
