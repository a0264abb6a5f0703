//! Rephraser agent (paper §4.2.2): makes a dependent question standalone.
//!
//! The paper has the model rewrite the question from the context Cq. A 0.5 B model rewrites
//! freely: it resolves "it" to the wrong turn, drops words, adds some. Here the dialogue state
//! decides ([`crate::dialogue::referents`]): the candidates are the entities earlier turns linked and the
//! answers they gave, with their vertices; those that fit each expression ("he": a person or an
//! entity of unknown kind; "that city": an entity whose classes or question say city; "they": a
//! list or a person) are kept, of the most recent turn that has any. One left: it is the
//! referent, without a model call. Several: the model chooses one, constrained to exactly their
//! labels (an enum), checked and retried like every pick (≤ θ). The expression is then replaced
//! by the label and nothing else changes ([`check_substitution`]); the chosen vertices are pinned
//! for the matching agent, so a homonym is never linked instead.
//!
//! A listed answer referred to as a whole ("which of them", "when were they released") becomes
//! an [`AnswerSet`] the planner works over with VALUES. "What about X?" is the previous question
//! with X in the place of its entity. Outcome: [`REPHRASED`].

use crate::ask::{ask_validated, check_reply};
use crate::context::AgentContext;
use crate::dialogue::referents::{
    Candidate, Member, Reference, ReferenceKind, Role, asked, check_substitution, complete_fragment, fit as fit_of,
    fits, fitting, kind_of_classes, narrow, substitute,
};
use crate::error::AgentError;
use crate::graph::Agent;
use crate::state::{
    AgentState, AnswerSet, ExecutedQuery, QueryReason, Resolution, ResolutionMethod, ResolvedReference, SetRole, Turn,
};
use crate::words::ELLIPSIS_PREPOSITIONS;
use crate::words::{GENERIC_NOUNS, PERSON_WORDS, PLACE_WORDS};
use chatty_kg_graph::text::normalize_tokens;
use serde::Deserialize;
use serde_json::json;

pub struct RephraserAgent;

pub const NAME: &str = "rephraser";
pub const REPHRASED: &str = "rephrased";

/// List values named in a list candidate's label.
const NAMED_MEMBERS: usize = 3;

#[derive(Deserialize)]
struct Choice {
    referent: String,
}

/// A model's choice of referent, parsed and checked: one of `labels` exactly (up to case and
/// surrounding space).
pub fn check_choice(reply: &str, labels: &[String]) -> Result<String, String> {
    check_reply(reply, |c: Choice| {
        let wanted = c.referent.trim();
        labels
            .iter()
            .find(|l| l.as_str() == wanted || l.eq_ignore_ascii_case(wanted))
            .cloned()
            .ok_or_else(|| format!("{wanted:?} is not one of the options; copy one option exactly"))
    })
}

#[async_trait::async_trait]
impl Agent for RephraserAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        let mut question = state.english_question().to_owned();
        let mut references = state.references.clone();
        // An ellipsis whose words name a relation of the graph, not a thing ("And the glyph?",
        // "And the block?"): that relation of what the dialogue was about, asked as a pronoun's
        // ("What is the glyph of it?"), whose referent is then found like any other's.
        if let Some(asked) = relation_ellipsis(ctx, &references).await? {
            question = asked;
            references = crate::dialogue::referents::detect(&question);
        }
        let mut candidates = candidates(&state.history);
        classify(ctx, &mut candidates).await;
        kinds_by_neighbourhood(ctx, &mut candidates).await;
        let mut resolved: Vec<ResolvedReference> = Vec::new();
        let mut text = question.clone();
        let mut answer_set: Option<AnswerSet> = None;
        // Right to left, so earlier byte spans stay valid.
        references.sort_by_key(|r| std::cmp::Reverse(r.start));
        let mut labels_used: Vec<String> = Vec::new();
        let mut substituted: Vec<Reference> = Vec::new();
        // The question became an earlier one ("What about X?", "How many are there?"): the other
        // expressions' spans no longer point into it, so they are not substituted.
        let mut replaced = false;
        // The question became an earlier restriction, whose own expressions ("them") the later
        // stages read.
        let mut restated = false;
        // The earlier question's query asked of another entity, for the explanation.
        let mut asked_again: Option<ExecutedQuery> = None;
        for reference in references {
            match reference.kind {
                ReferenceKind::WhatAbout => {
                    let (mut r, new, vertex) = resolve_what_about(ctx, state, &reference, &candidates).await?;
                    let previous = r.chosen.as_ref().and_then(|c| {
                        let turn = previous_turn(state, c)?;
                        Some((replace_mention(&turn.question, c.mention.as_deref()?, &new)?, turn, c))
                    });
                    match previous {
                        Some((previous, turn, c)) if !replaced => {
                            replaced = true;
                            // "Which of them are marks?" of what the turn before it answered,
                            // then "How about Unicode 13.0?": that restriction again, of what
                            // the earlier question answers of 13.0.
                            let restricted = match (c.iri(), vertex.as_deref()) {
                                (Some(old), Some(new_iri)) => {
                                    let (restricted, executed) =
                                        restriction_of_another(ctx, state, c, old, new_iri, &previous).await;
                                    asked_again = executed;
                                    restricted
                                }
                                _ => None,
                            };
                            if let Some((restriction, set)) = restricted {
                                text = restriction;
                                answer_set = Some(set);
                                restated = true;
                            } else {
                                text = previous;
                                // "Which of them arrived in 7.0?" then "and in 5.2?": the same
                                // earlier answer, another version.
                                if answer_set.is_none() {
                                    answer_set = turn.answer_set.clone();
                                }
                            }
                        }
                        // The mention is not written in the earlier question: left as asked.
                        _ => {
                            r.chosen = None;
                            r.method = ResolutionMethod::Unresolved;
                        }
                    }
                    resolved.push(r);
                    continue;
                }
                ReferenceKind::Ordinal => {
                    let r = resolve_ordinal(&reference, &candidates);
                    if let Some(c) = &r.chosen
                        && !replaced
                    {
                        text = substitute(&text, &reference, &c.label);
                        labels_used.push(c.label.clone());
                        substituted.push(reference.clone());
                    }
                    resolved.push(r);
                    continue;
                }
                _ => {}
            }
            // A pronoun does not stand for what its own question names ("Is it in X?" is not X).
            let rest = format!(
                " {} ",
                normalize_tokens(&format!(
                    "{} {}",
                    &question[..reference.start],
                    &question[reference.end..]
                ))
                .join(" ")
            );
            let named = |c: &Candidate| {
                let label = normalize_tokens(&c.label).join(" ");
                !label.is_empty() && rest.contains(&format!(" {label} "))
            };
            let mut fit: Vec<Candidate> = candidates
                .iter()
                .filter(|c| fits(&reference, c) && !named(c))
                .cloned()
                .collect();
            // People say "they" of a paper and "it" of a band: when nothing fits a pronoun by
            // kind, the entities it could stand for by shape (one vertex) are its candidates.
            let relaxed = fit.is_empty()
                && matches!(
                    reference.kind,
                    ReferenceKind::Person | ReferenceKind::Thing | ReferenceKind::Plural | ReferenceKind::Place
                );
            if relaxed {
                fit = candidates
                    .iter()
                    .filter(|c| c.role != Role::Answers && c.iri().is_some() && !named(c))
                    .cloned()
                    .collect();
            }
            if fit.len() > 1 {
                fit = best_fitting(ctx, &question, &reference, fit).await?;
            }
            let (chosen, method) = match fit.len() {
                0 => (None, ResolutionMethod::Unresolved),
                1 if relaxed => (Some(fit[0].clone()), ResolutionMethod::Relaxed),
                1 => (Some(fit[0].clone()), ResolutionMethod::Only),
                _ => (
                    Some(choose(ctx, state, &reference.text, false, &fit).await?),
                    ResolutionMethod::Model,
                ),
            };
            if let Some(c) = &chosen
                && !replaced
            {
                if c.role == Role::Answers {
                    if answer_set.is_some() {
                        // One list per question: a second list expression keeps its words.
                    } else if reference.kind == ReferenceKind::Set {
                        let bare = bare_set_question(&question, &reference);
                        if bare && let Some(previous) = previous_question(state, c) {
                            // "How many are there?": the previous question, counted.
                            text = previous;
                            replaced = true;
                        }
                        answer_set = Some(AnswerSet {
                            members: c.members.clone(),
                            role: SetRole::Filter,
                            count: bare && replaced,
                            partial: c.total > c.members.len(),
                            turn: turn_index(state, c).map(|t| t + 1),
                            of_question: None,
                        });
                    } else if let Some(first) = c.members.iter().find(|m| m.iri) {
                        // "When were they released?": the path search starts from one of them,
                        // the planner puts all of them in its place.
                        text = substitute(&text, &reference, &first.label);
                        labels_used.push(first.label.clone());
                        substituted.push(reference.clone());
                        answer_set = Some(AnswerSet {
                            members: c.members.iter().filter(|m| m.iri).cloned().collect(),
                            role: SetRole::Anchor {
                                representative: first.value.clone(),
                            },
                            count: false,
                            partial: c.total > c.members.len(),
                            turn: turn_index(state, c).map(|t| t + 1),
                            of_question: None,
                        });
                    }
                } else {
                    text = substitute(&text, &reference, &c.label);
                    labels_used.push(c.label.clone());
                    substituted.push(reference.clone());
                }
            }
            resolved.push(ResolvedReference {
                offered: candidates.len(),
                reference,
                fitting: fit,
                chosen,
                method,
            });
        }
        resolved.reverse();
        if !substituted.is_empty() && !replaced {
            text = complete_fragment(&text);
            let labels: Vec<&str> = labels_used.iter().map(String::as_str).collect();
            if let Err(problem) = check_substitution(&question, &text, &substituted, &labels) {
                // The substitution is ours, so this is a bug, not bad input: keep the question.
                tracing::warn!(%problem, %question, %text, "a substitution changed more than its expression");
                text = question.clone();
            }
        }
        if restated {
            state.references = crate::dialogue::referents::detect(&text);
        }
        state.queries.extend(asked_again);
        state.resolution = Some(Resolution { references: resolved });
        state.answer_set = answer_set;
        state.resolved_question = Some(text);
        Ok(REPHRASED)
    }
}

/// The referents the dialogue offers, most recent turn first: each turn's single answer or
/// its list, then the entities its question named.
pub fn candidates(history: &[Turn]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (i, turn) in history.iter().enumerate().rev() {
        let turns_ago = history.len() - i;
        let wanted = asked(&turn.question);
        match turn.values.as_slice() {
            [] => {}
            [value] => out.push(Candidate {
                turns_ago,
                role: Role::Answer,
                label: value.label.clone(),
                members: vec![value.clone()],
                total: turn.total.max(1),
                mention: None,
                kinds: wanted.noun.iter().cloned().collect(),
                person: wanted.person,
                place: wanted.place,
            }),
            values => out.push(Candidate {
                turns_ago,
                role: Role::Answers,
                label: list_label(values, turn.total),
                members: values.to_vec(),
                total: turn.total.max(values.len()),
                mention: None,
                kinds: wanted.noun.iter().cloned().collect(),
                person: wanted.person,
                place: wanted.place,
            }),
        }
        for entity in &turn.entities {
            let noun = noun_before(&turn.question, &entity.mention);
            let (person, place) = kind_of_classes(&noun.iter().cloned().collect::<Vec<_>>());
            out.push(Candidate {
                turns_ago,
                role: Role::Entity,
                label: entity.label.clone(),
                members: vec![Member {
                    value: entity.iri.clone(),
                    label: entity.label.clone(),
                    iri: true,
                    datatype: None,
                }],
                total: 1,
                mention: Some(entity.mention.clone()),
                kinds: noun.into_iter().collect(),
                person,
                place,
            });
        }
    }
    // A vertex named with no kind of its own ("What genre is Inception?") keeps the kind an
    // earlier turn gave it as an answer ("Which films did Nolan direct?": a film), so "he" in
    // the next question cannot mean it.
    let known: Vec<(String, Vec<String>, Option<bool>, Option<bool>)> = out
        .iter()
        .filter(|c| c.role != Role::Entity && (c.person.is_some() || !c.kinds.is_empty()))
        .flat_map(|c| {
            c.members
                .iter()
                .filter(|m| m.iri)
                .map(|m| (m.value.clone(), c.kinds.clone(), c.person, c.place))
        })
        .collect();
    for c in out
        .iter_mut()
        .filter(|c| c.role == Role::Entity && c.person.is_none() && c.kinds.is_empty())
    {
        if let Some((_, kinds, person, place)) = known.iter().find(|(iri, ..)| c.iri() == Some(iri.as_str())) {
            c.kinds = kinds.clone();
            c.person = *person;
            c.place = *place;
        }
    }
    out
}

/// "A, B, C and 4 more": a list answer as one option.
fn list_label(values: &[Member], total: usize) -> String {
    let named: Vec<&str> = values.iter().take(NAMED_MEMBERS).map(|m| m.label.as_str()).collect();
    let rest = total.max(values.len()).saturating_sub(named.len());
    if rest > 0 {
        format!("{} and {rest} more", named.join(", "))
    } else {
        format!("all of {}", named.join(", "))
    }
}

/// The noun just before a mention that says what it is ("the actor Tom Hanks" → "actor").
fn noun_before(question: &str, mention: &str) -> Option<String> {
    let words = normalize_tokens(question);
    let mention = normalize_tokens(mention);
    let at = (0..words.len()).find(|&i| words[i..].starts_with(&mention))?;
    let before = words.get(at.checked_sub(1)?)?;
    let noun = crate::words::singular(before);
    [GENERIC_NOUNS, PERSON_WORDS, PLACE_WORDS]
        .iter()
        .any(|list| list.contains(&noun.as_str()))
        .then_some(noun)
}

/// The classes of the candidates' vertices from the graph (one bounded query), as kind words;
/// they decide person and place where the dialogue did not. A graph that cannot say is no error.
async fn classify(ctx: &AgentContext, candidates: &mut [Candidate]) {
    let iris: Vec<String> = candidates
        .iter()
        .filter_map(|c| c.iri().map(str::to_owned))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let refs: Vec<&str> = iris.iter().map(String::as_str).collect();
    let classes = match ctx.kg.classes(&refs).await {
        Ok(classes) => classes,
        Err(error) => {
            tracing::warn!(%error, "classes of the referent candidates");
            return;
        }
    };
    for c in candidates.iter_mut() {
        let Some(names) = c.iri().and_then(|iri| classes.get(iri)) else {
            continue;
        };
        let words: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
        let (person, place) = kind_of_classes(&words);
        c.kinds.extend(words);
        // The graph's classes outrank the words of a question.
        c.person = person.or(c.person);
        c.place = place.or(c.place);
    }
}

/// Predicates (with their direction) kept per vertex when comparing neighbourhoods.
const SIGNATURE_PREDICATES: usize = 50;
/// Predicates both vertices need before disjoint neighbourhoods tell kinds apart.
const MIN_SIGNATURE: usize = 2;

/// A vertex of unknown kind takes the kind of a candidate whose neighbourhood it shares: with the
/// predicates (and directions) of a known person it is a person, with none of them it is not;
/// with those of a known non-person it is not one either. A graph without classes (MetaQA) still
/// tells the film "it" from its director "he" this way. One predicates query per vertex, for the
/// few candidates of unknown kind only; a graph that cannot say is no error.
async fn kinds_by_neighbourhood(ctx: &AgentContext, candidates: &mut [Candidate]) {
    let known_person = |c: &Candidate| c.person.is_some() && c.iri().is_some();
    if !candidates.iter().any(known_person) || !candidates.iter().any(|c| c.person.is_none() && c.iri().is_some()) {
        return;
    }
    let mut signatures: std::collections::HashMap<String, std::collections::HashSet<(String, bool)>> =
        std::collections::HashMap::new();
    for c in candidates.iter().filter(|c| c.iri().is_some()) {
        let iri = c.iri().unwrap_or_default().to_owned();
        if signatures.contains_key(&iri) {
            continue;
        }
        match ctx.kg.predicates_around(&iri, SIGNATURE_PREDICATES).await {
            Ok(links) => {
                let signature = links
                    .into_iter()
                    .map(|l| (l.iri, l.direction == chatty_kg_graph::Direction::Outgoing))
                    .collect();
                signatures.insert(iri, signature);
            }
            Err(error) => {
                tracing::warn!(%error, "neighbourhood of a referent candidate");
                return;
            }
        }
    }
    let jaccard = |a: &std::collections::HashSet<(String, bool)>, b: &std::collections::HashSet<(String, bool)>| {
        let union = a.union(b).count();
        if union == 0 {
            0.0
        } else {
            a.intersection(b).count() as f32 / union as f32
        }
    };
    let known: Vec<(bool, std::collections::HashSet<(String, bool)>)> = candidates
        .iter()
        .filter(|c| known_person(c))
        .filter_map(|c| Some((c.person?, signatures.get(c.iri()?)?.clone())))
        .collect();
    for c in candidates.iter_mut().filter(|c| c.person.is_none()) {
        let Some(own) = c.iri().and_then(|iri| signatures.get(iri)) else {
            continue;
        };
        let like = |person: bool| {
            known
                .iter()
                .filter(|(p, _)| *p == person)
                .map(|(_, s)| jaccard(own, s))
                .fold(None, |m: Option<f32>, x| Some(m.map_or(x, |m| m.max(x))))
        };
        // Disjoint neighbourhoods say "another kind" only when both have a few predicates: a
        // vertex the graph knows one edge of (an answer in a small subgraph) says nothing.
        let rich_person = known
            .iter()
            .any(|(p, s)| *p && s.len() >= MIN_SIGNATURE && jaccard(own, s) == 0.0);
        c.person = match (like(true), like(false)) {
            (Some(p), _) if p >= 0.5 => Some(true),
            (_, Some(n)) if n >= 0.5 => Some(false),
            _ if rich_person && own.len() >= MIN_SIGNATURE => Some(false),
            _ => None,
        };
    }
}

/// Candidates whose relation fit is this close to the best one's are a tie.
const RELATION_TIE: f32 = 0.05;

/// Of several candidates that fit an expression, those the graph and the dialogue prefer:
/// 1. **path fit** ([`path_fit`]): of the candidates whose best path is one hop that says the
///    question's words (the relation holds of them), else of all, the best relation path the
///    graph has for the question from each; the best and those within [`RELATION_TIE`] of it stay;
/// 2. **evidence**: of those, the ones something says fit (a person for "he");
/// 3. **recency**: of those, the most recent turn's.
///
/// What is left (one, or a tie the model breaks) is returned.
async fn best_fitting(
    ctx: &AgentContext,
    question: &str,
    reference: &Reference,
    fit: Vec<Candidate>,
) -> Result<Vec<Candidate>, AgentError> {
    let scores = path_fit(ctx, question, reference, &fit).await?;
    // The relation the question asks holds of the candidate itself when its best path is one hop
    // that says the question's words: those candidates are compared ("which architecture is it
    // built for" after naming wesnoth-1.16-core: its own architecture, not the source package's
    // longer path through its packages, which says more words). When it holds of none, all.
    // Only for "it"/"its", which ask something of one thing: "who starred movies for them" asks
    // of a director, through his films, what a film has in one hop.
    let direct = reference.kind == ReferenceKind::Thing && scores.iter().any(|s| s.1.is_some());
    let score = |s: &(f32, Option<f32>)| if direct { s.1 } else { Some(s.0) };
    let best = scores.iter().filter_map(score).fold(f32::MIN, f32::max);
    // (A relaxed candidate fits no kind: it has no evidence, and stays a candidate.)
    Ok(narrow(
        fit.into_iter()
            .zip(scores)
            .filter(|(_, s)| score(s).is_some_and(|s| s >= best - RELATION_TIE))
            .map(|(c, _)| {
                let evidence = fit_of(reference, &c) == Some(true);
                (c, evidence)
            })
            .collect(),
    ))
}

/// How well the question fits the graph around each candidate: the score of the best relation
/// path the path search finds from the candidate's vertex (a list from its first member) for
/// the question with the candidate in the expression's place, ranked as the path-search agent
/// ranks them, and that score again when the best path is one hop whose words' support reaches
/// `min_relation_score` (the relation holds of the candidate itself). "Which films did *he*
/// direct?" finds a "directed by" path from the director and none as good from the film he was
/// asked about.
async fn path_fit(
    ctx: &AgentContext,
    question: &str,
    reference: &Reference,
    fit: &[Candidate],
) -> Result<Vec<(f32, Option<f32>)>, AgentError> {
    use crate::candidates::paths::{Anchor, SearchBudget};
    use crate::candidates::ranking::PathRanker;
    use crate::candidates::search::search;
    use crate::understanding::form::QuestionForm;
    let p = &ctx.params;
    let budget = SearchBudget {
        max_hops: p.max_hops.max(1),
        max_queries: p.path_queries,
        max_time: std::time::Duration::from_millis(p.path_time_ms),
        beam: p.path_beam,
        endpoints_per_path: p.path_endpoints,
        frontier: p.path_frontier,
        edge_limit: p.path_edge_limit,
    };
    let mut scores = Vec::with_capacity(fit.len());
    for c in fit {
        let Some(vertex) = c.members.iter().find(|m| m.iri) else {
            scores.push((0.0, None));
            continue;
        };
        let substituted = substitute(question, reference, &vertex.label);
        let form = QuestionForm::detect(&substituted, None);
        let labels = [vertex.label.clone()];
        let anchor = Anchor {
            mention: vertex.label.clone(),
            iri: vertex.value.clone(),
            label: vertex.label.clone(),
            modifies_class: false,
        };
        let best = async {
            let mut ranker = PathRanker::new(ctx, &substituted, &labels, &labels, &[], &form, None).await?;
            let (paths, _) = search(ctx, &[anchor], &mut ranker, &budget).await?;
            let ranked = ranker.rank(paths, &labels);
            // The relation holds of the candidate itself: its best path is one hop that the
            // words support (a longer path holds of whatever it passes through).
            let direct = ranked
                .first()
                .filter(|s| s.path.hops.len() == 1 && s.support >= p.min_relation_score)
                .map(|s| s.score);
            Ok::<(f32, Option<f32>), AgentError>((ranked.first().map_or(0.0, |s| s.score), direct))
        }
        .await;
        // A graph that cannot say (a timeout) only leaves this tie to the next rule.
        scores.push(best.unwrap_or_else(|error| {
            tracing::warn!(%error, "path fit of a referent candidate");
            (0.0, None)
        }));
    }
    Ok(scores)
}

/// The model chooses among the fitting candidates' labels (one enum, checked, ≤ θ attempts):
/// what `expression` refers to, or with `replaces` ("What about X?"), which one X takes the
/// place of.
async fn choose(
    ctx: &AgentContext,
    state: &AgentState,
    expression: &str,
    replaces: bool,
    fit: &[Candidate],
) -> Result<Candidate, AgentError> {
    let labels = option_labels(fit);
    let schema = json!({
        "type": "object",
        "properties": {"referent": {"enum": labels}},
        "required": ["referent"], "additionalProperties": false
    });
    let variables = json!({
        "history": state.history,
        "question": state.english_question(),
        "expression": expression,
        "replaces": replaces,
        "candidates": labels,
    });
    let label = ask_validated(ctx, NAME, NAME, variables, schema, |reply| check_choice(reply, &labels)).await?;
    let at = labels.iter().position(|l| *l == label).unwrap_or(0);
    Ok(fit[at].clone())
}

/// Distinct option labels: a label two candidates share gets its role added.
fn option_labels(fit: &[Candidate]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for c in fit {
        let mut label = c.label.clone();
        if labels.contains(&label) || fit.iter().filter(|o| o.label == c.label).count() > 1 {
            let role = match c.role {
                Role::Entity => "named in an earlier question",
                _ => "an earlier answer",
            };
            label = format!("{label} ({role}, {} turns ago)", c.turns_ago);
        }
        labels.push(label);
    }
    labels
}

/// "What about X?": which entity of the most recent turn that named one X takes the place of,
/// and what takes its place: the label of the vertex X names when it is of that entity's kind
/// ("5.2" → "Unicode 5.2"), else X as written.
async fn resolve_what_about(
    ctx: &AgentContext,
    state: &AgentState,
    reference: &Reference,
    candidates: &[Candidate],
) -> Result<(ResolvedReference, String, Option<String>), AgentError> {
    // The most recent of the dialogue's entities of a kind a vertex X names has, with that
    // vertex ("And for the vim source?" after a question of the emacs source and a restriction
    // of its answers to the architecture "all": the source emacs, and the source "vim", not the
    // binary package; "And Ol Chiki's?" after a question of the Coptic script: the script Ol
    // Chiki, not the block). Where no entity is of any such kind, the most recent turn's.
    let entities: Vec<Candidate> = candidates.iter().filter(|c| fits(reference, c)).cloned().collect();
    let named_vertices = named_vertices(ctx, reference).await;
    let mut recent: Vec<usize> = entities.iter().map(|c| c.turns_ago).collect();
    recent.sort_unstable();
    recent.dedup();
    let paired = recent.iter().find_map(|&turns_ago| {
        named_vertices.iter().find_map(|vertex| {
            let same: Vec<Candidate> = entities
                .iter()
                .filter(|c| c.turns_ago == turns_ago && c.kinds.iter().any(|k| vertex.classes.contains(k)))
                .cloned()
                .collect();
            (!same.is_empty()).then_some((same, vertex))
        })
    });
    let (fit, named): (Vec<Candidate>, Option<&NamedVertex>) = match paired {
        Some((same, vertex)) => (fitting(reference, &same).into_iter().cloned().collect(), Some(vertex)),
        None => {
            let named = named_vertices.first();
            let mut fit: Vec<Candidate> = fitting(reference, candidates).into_iter().cloned().collect();
            if fit.len() > 1 {
                fit = of_the_same_kind(fit, named);
            }
            (fit, named)
        }
    };
    let (chosen, method) = match fit.len() {
        0 => (None, ResolutionMethod::Unresolved),
        1 => (Some(fit[0].clone()), ResolutionMethod::Only),
        _ => {
            let new = reference.noun.as_deref().unwrap_or(&reference.text);
            (
                Some(choose(ctx, state, new, true, &fit).await?),
                ResolutionMethod::Model,
            )
        }
    };
    let written = reference.noun.as_deref().map(named_in_ellipsis).unwrap_or_default();
    let (replacement, vertex) = match (&chosen, named) {
        (Some(c), Some(vertex)) if c.kinds.iter().any(|k| vertex.classes.contains(k)) => {
            (vertex.label.clone(), Some(vertex.iri.clone()))
        }
        _ => (written, None),
    };
    Ok((
        ResolvedReference {
            reference: reference.clone(),
            offered: candidates.len(),
            fitting: fit,
            chosen,
            method,
        },
        replacement,
        vertex,
    ))
}

/// Of the entities "What about X?" could take the place of, those of X's kind: the graph's
/// classes of the vertex X names best share a class with theirs ("and in 5.2?" after "which
/// characters of the Currency Symbols block arrived in Unicode 7.0?": a Unicode version, not the
/// block). All of them when X names no vertex, or none or all share one.
fn of_the_same_kind(fit: Vec<Candidate>, named: Option<&NamedVertex>) -> Vec<Candidate> {
    let Some(vertex) = named else {
        return fit;
    };
    let same: Vec<Candidate> = fit
        .iter()
        .filter(|c| c.kinds.iter().any(|k| vertex.classes.contains(k)))
        .cloned()
        .collect();
    if same.is_empty() { fit } else { same }
}

/// The vertex an ellipsis names best ("5.2": Unicode 5.2), with its classes (lower case).
struct NamedVertex {
    iri: String,
    label: String,
    classes: Vec<String>,
}

/// Vertices searched for what an ellipsis names, among which the dialogue's kinds choose.
const NAMED_SEARCHED: usize = 10;

/// The vertices an ellipsis may name, the likeliest first: those whose label it writes whole
/// ("vim" in "the vim source", not "vim-airline-themes"), then the other best matches, in the
/// search's order; the best match alone where none is written whole.
async fn named_vertices(ctx: &AgentContext, reference: &Reference) -> Vec<NamedVertex> {
    let Some(noun) = reference.noun.as_deref() else {
        return Vec::new();
    };
    let named_text = named_in_ellipsis(noun);
    // A lower-case article is no part of a name ("the vim source"; "The Hague" keeps its own).
    let searched = ["the ", "a ", "an "]
        .iter()
        .find_map(|article| named_text.strip_prefix(article))
        .unwrap_or(&named_text);
    let found = match ctx.kg.search_entities(searched, NAMED_SEARCHED).await {
        Ok(found) => found,
        Err(error) => {
            tracing::warn!(%error, "the entity an ellipsis names");
            return Vec::new();
        }
    };
    let Some(best) = found.first().map(|c| c.score) else {
        return Vec::new();
    };
    let words = normalize_tokens(searched);
    let written = |label: &str| {
        let label = normalize_tokens(label);
        !label.is_empty() && label.iter().all(|w| words.contains(w))
    };
    let mut order: Vec<usize> = (0..found.len()).filter(|&i| written(&found[i].label)).collect();
    order.extend((0..found.len()).filter(|&i| !written(&found[i].label) && found[i].score >= best));
    let iris: Vec<&str> = order.iter().map(|&i| found[i].iri.as_str()).collect();
    let classes = match ctx.kg.classes(&iris).await {
        Ok(classes) => classes,
        Err(error) => {
            tracing::warn!(%error, "classes of the entity an ellipsis names");
            Default::default()
        }
    };
    order
        .into_iter()
        .map(|i| NamedVertex {
            classes: classes
                .get(&found[i].iri)
                .map(|cs| cs.iter().map(|c| c.to_lowercase()).collect())
                .unwrap_or_default(),
            iri: found[i].iri.clone(),
            label: found[i].label.clone(),
        })
        .collect()
}

/// "The second one": that value of the most recent list answer.
fn resolve_ordinal(reference: &Reference, candidates: &[Candidate]) -> ResolvedReference {
    let list = candidates.iter().find(|c| c.role == Role::Answers);
    let chosen = list.and_then(|list| {
        let member = match reference.position {
            // The last stored value is not the last one when the list was cut.
            Some(0) if list.total > list.members.len() => None,
            Some(0) => list.members.last(),
            Some(n) => list.members.get(n - 1),
            None => None,
        }?;
        Some(Candidate {
            role: Role::Member,
            label: member.label.clone(),
            members: vec![member.clone()],
            total: 1,
            kinds: list.kinds.clone(),
            ..list.clone()
        })
    });
    ResolvedReference {
        reference: reference.clone(),
        offered: candidates.len(),
        fitting: list.cloned().into_iter().collect(),
        method: if chosen.is_some() {
            ResolutionMethod::Only
        } else {
            ResolutionMethod::Unresolved
        },
        chosen,
    }
}

/// "How about X?" where the entity X takes the place of was named by an earlier turn whose
/// answers the latest turn restricted ("what did Unicode 15.0 add?", then "Which of them are
/// marks?"): the earlier turn's query asked again with X's vertex in the entity's place (the
/// same shape, other IRIs: [`chatty_kg_graph::ReadQuery::with_iris_replaced`]), and the latest
/// turn's question restricted to its answers, with the query as it ran (for the explanation).
/// `None` when the latest turn restricted no such answer, the earlier turn kept no query, or the
/// query fails or answers nothing (the earlier question is then asked again as it was).
async fn restriction_of_another(
    ctx: &AgentContext,
    state: &AgentState,
    c: &Candidate,
    old: &str,
    new: &str,
    asked: &str,
) -> (Option<(String, AnswerSet)>, Option<ExecutedQuery>) {
    let limit = ctx.params.context_answers.max(1);
    let Some(query) = earlier_query_of_another(state, c, old, new, limit) else {
        return (None, None);
    };
    let started = std::time::Instant::now();
    let result = ctx.kg.query(&query).await;
    let mut executed = ExecutedQuery {
        sparql: query.to_string(),
        predicates: Vec::new(),
        reason: QueryReason::EarlierQuestion,
        rows: 0,
        used: false,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        error: None,
        attribute: None,
    };
    let results = match result {
        Ok(chatty_kg_graph::QueryResults::Solutions(s)) => s,
        Ok(_) => return (None, Some(executed)),
        Err(error) => {
            tracing::info!(%error, "an earlier turn's query of another entity");
            executed.error = Some(error.to_string());
            return (None, Some(executed));
        }
    };
    executed.rows = results.rows.len();
    let values: Vec<&chatty_kg_graph::Term> = results.column("answer").take(limit).collect();
    let iris: Vec<&str> = values
        .iter()
        .filter_map(|t| crate::candidates::paths::iri_of(t))
        .collect();
    let names = ctx.kg.labels(&iris).await.unwrap_or_default();
    // As a turn keeps its own answers (`Turn::answered`): an IRI by its label.
    let members: Vec<Member> = values
        .iter()
        .filter_map(|t| crate::answer::AnswerValue::from_term(t))
        .map(|mut value| {
            value.label = names.get(&value.value).cloned();
            Member::of(&value)
        })
        .collect();
    let Some(last) = state.history.last().filter(|_| !members.is_empty()) else {
        return (None, Some(executed));
    };
    executed.used = true;
    (
        Some((
            last.question.clone(),
            AnswerSet {
                partial: results.truncated || results.rows.len() > limit,
                members,
                role: SetRole::Filter,
                count: false,
                turn: None,
                of_question: Some(asked.to_owned()),
            },
        )),
        Some(executed),
    )
}

/// The query of the earlier turn `c` comes from, with `new` in the place of `old`, capped at
/// `limit` rows, when the latest turn restricted that turn's answers and it kept its query.
fn earlier_query_of_another(
    state: &AgentState,
    c: &Candidate,
    old: &str,
    new: &str,
    limit: usize,
) -> Option<chatty_kg_graph::ReadQuery> {
    let source = turn_index(state, c)?;
    let latest = state.history.len().checked_sub(1)?;
    let set = state.history.get(latest)?.answer_set.as_ref()?;
    if latest == source || !set.restricts() || set.turn != Some(source + 1) {
        return None;
    }
    let query = chatty_kg_graph::ReadQuery::parse(state.history.get(source)?.query.as_deref()?).ok()?;
    let replace = std::collections::HashMap::from([(old.to_owned(), new.to_owned())]);
    Some(query.with_iris_replaced(&replace).ok()?.capped(limit))
}

/// The standalone question of the turn a candidate comes from.
fn previous_question(state: &AgentState, c: &Candidate) -> Option<String> {
    previous_turn(state, c).map(|t| t.question.clone())
}

/// The index in the history of the turn a candidate comes from.
fn turn_index(state: &AgentState, c: &Candidate) -> Option<usize> {
    state.history.len().checked_sub(c.turns_ago)
}

/// The turn a candidate comes from.
fn previous_turn<'s>(state: &'s AgentState, c: &Candidate) -> Option<&'s Turn> {
    state.history.get(turn_index(state, c)?)
}

/// What an ellipsis names, as it takes an earlier mention's place: without an opening
/// preposition or a closing possessive ("in 5.2" → "5.2", "Ol Chiki's" → "Ol Chiki").
fn named_in_ellipsis(noun: &str) -> String {
    let mut text = noun.trim();
    if let Some((first, rest)) = text.split_once(char::is_whitespace)
        && ELLIPSIS_PREPOSITIONS.contains(&first.to_lowercase().as_str())
    {
        text = rest.trim_start();
    }
    let text = text
        .strip_suffix("'s")
        .or_else(|| text.strip_suffix("\u{2019}s"))
        .unwrap_or(text);
    text.trim().to_owned()
}

/// The question an ellipsis asks when its words name a relation rather than a thing ("And the
/// glyph?" → "What is the glyph of it?"): every content word is a word of the graph's relation
/// or class labels, nothing in it is written like a name (a capital, a digit), and no vertex
/// has it for its label. `None` for any other expression.
async fn relation_ellipsis(ctx: &AgentContext, references: &[Reference]) -> Result<Option<String>, AgentError> {
    let [reference] = references else {
        return Ok(None);
    };
    let Some(noun) = reference
        .noun
        .as_deref()
        .filter(|_| reference.kind == ReferenceKind::WhatAbout)
    else {
        return Ok(None);
    };
    let named = named_in_ellipsis(noun);
    if named.chars().any(|c| c.is_uppercase() || c.is_ascii_digit()) {
        return Ok(None);
    }
    let content: Vec<String> = normalize_tokens(&named)
        .into_iter()
        .filter(|w| !crate::words::is_function_word(w))
        .map(|w| crate::words::singular(&w))
        .collect();
    if content.is_empty() {
        return Ok(None);
    }
    let mut known = ctx.relation_words().await;
    // The schema's own vertices (a class "block", a predicate "glyph") have labels too.
    let mut schema: std::collections::HashSet<String> = ctx.predicates().await;
    if let Ok(profile) = ctx.kg.profile().await {
        known.extend(
            profile
                .classes
                .iter()
                .flat_map(|c| normalize_tokens(&c.label))
                .map(|w| crate::words::singular(&w)),
        );
        schema.extend(profile.classes.iter().map(|c| c.iri.clone()));
    }
    if !content.iter().all(|w| known.contains(w)) {
        return Ok(None);
    }
    let bare = content.join(" ");
    let labelled = ctx
        .kg
        .search_entities(&bare, 5)
        .await?
        .into_iter()
        .any(|c| c.score >= chatty_kg_graph::text::EXACT_MATCH_SCORE && !schema.contains(&c.iri));
    if labelled {
        return Ok(None);
    }
    let phrase = normalize_tokens(&named).join(" ");
    let phrase = phrase.strip_prefix("the ").unwrap_or(&phrase);
    Ok(Some(format!("What is the {phrase} of it?")))
}

/// `question` with the first whole-word occurrence of `mention` (up to case) replaced by `new`;
/// `None` when the question does not hold it.
fn replace_mention(question: &str, mention: &str, new: &str) -> Option<String> {
    let (lower, wanted) = (question.to_lowercase(), mention.to_lowercase());
    // Lower-casing can change byte lengths outside ASCII: only splice when it did not.
    if wanted.is_empty() || lower.len() != question.len() {
        return None;
    }
    let boundary = |at: usize| {
        question[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric())
            && question[at + wanted.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric())
    };
    let at = lower
        .match_indices(&wanted)
        .map(|(at, _)| at)
        .find(|&at| question.is_char_boundary(at) && question.is_char_boundary(at + wanted.len()) && boundary(at))?;
    let (before, after) = (&question[..at], &question[at + wanted.len()..]);
    // The words around the mention say again what the new one may say itself ("the emacs
    // source package" with "the vim source"): each once.
    let mut words: Vec<&str> = new.split_whitespace().collect();
    let last_before = before.split_whitespace().next_back();
    let first_after = after.split_whitespace().next();
    if words.len() > 1 && last_before.is_some_and(|w| w.eq_ignore_ascii_case(words[0])) {
        words.remove(0);
    }
    if words.len() > 1 && first_after.is_some_and(|w| w.eq_ignore_ascii_case(words[words.len() - 1])) {
        words.pop();
    }
    Some(format!("{before}{}{after}", words.join(" ")))
}

/// "How many are there?", "How many of them?": nothing but the reference and question words.
fn bare_set_question(question: &str, reference: &Reference) -> bool {
    let rest = format!("{}{}", &question[..reference.start], &question[reference.end..]);
    normalize_tokens(&rest).iter().all(|w| {
        matches!(
            w.as_str(),
            "how"
                | "many"
                | "are"
                | "were"
                | "is"
                | "there"
                | "they"
                | "in"
                | "all"
                | "total"
                | "of"
                | "them"
                | "and"
                | "so"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::TurnEntity;

    fn turn(question: &str, entities: &[(&str, &str)], values: &[(&str, &str)]) -> Turn {
        Turn {
            question: question.into(),
            answers: values.iter().map(|(_, l)| (*l).to_owned()).collect(),
            entities: entities
                .iter()
                .map(|(iri, label)| TurnEntity {
                    mention: (*label).into(),
                    iri: (*iri).into(),
                    label: (*label).into(),
                })
                .collect(),
            values: values
                .iter()
                .map(|(v, l)| Member {
                    value: (*v).into(),
                    label: (*l).into(),
                    iri: v.starts_with("http"),
                    datatype: None,
                })
                .collect(),
            total: values.len(),
            clarification: None,
            answer_set: None,
            query: None,
        }
    }

    #[test]
    fn a_vertex_answered_as_a_film_is_not_he_when_named_again() {
        let history = vec![
            turn(
                "Which films did Christopher Nolan direct?",
                &[("http://e/cn", "Christopher Nolan")],
                &[("http://e/in", "Inception"), ("http://e/is", "Interstellar")],
            ),
            turn(
                "What genre is Inception?",
                &[("http://e/in", "Inception")],
                &[("http://e/sf", "Science Fiction")],
            ),
        ];
        let question = "How many films did he direct?";
        let reference = crate::dialogue::referents::detect(question).remove(0);
        let c = candidates(&history);
        let fit: Vec<&str> = crate::dialogue::referents::fitting(&reference, &c)
            .iter()
            .map(|c| c.label.as_str())
            .collect();
        assert_eq!(fit, ["Christopher Nolan"]);
    }

    #[test]
    fn candidates_come_most_recent_first_with_their_kinds() {
        let history = vec![
            turn(
                "Which films did the actor Tom Hanks star in?",
                &[("http://e/th", "Tom Hanks")],
                &[("http://e/fg", "Forrest Gump"), ("http://e/bg", "Big")],
            ),
            turn(
                "Who directed Forrest Gump?",
                &[("http://e/fg", "Forrest Gump")],
                &[("http://e/rz", "Robert Zemeckis")],
            ),
        ];
        let c = candidates(&history);
        let summary: Vec<(usize, Role, &str, Option<bool>)> = c
            .iter()
            .map(|c| (c.turns_ago, c.role, c.label.as_str(), c.person))
            .collect();
        assert_eq!(
            summary,
            vec![
                (1, Role::Answer, "Robert Zemeckis", Some(true)),
                // An answer of the first turn's "which films": a film, though the second
                // turn names it with no kind.
                (1, Role::Entity, "Forrest Gump", Some(false)),
                (2, Role::Answers, "all of Forrest Gump, Big", Some(false)),
                (2, Role::Entity, "Tom Hanks", Some(true)),
            ]
        );
        assert_eq!(c[2].kinds, vec!["film"]);
    }

    #[test]
    fn a_bare_count_of_a_list_is_recognised() {
        let q = "How many are there?";
        let r = &crate::dialogue::referents::detect(q)[0];
        assert!(bare_set_question(q, r));
        let q = "How many of them were directed by Spielberg?";
        let r = &crate::dialogue::referents::detect(q)[0];
        assert!(!bare_set_question(q, r));
    }

    #[test]
    fn what_about_replaces_the_mention() {
        assert_eq!(
            replace_mention("What is the capital of Sweden?", "sweden", "Norway").as_deref(),
            Some("What is the capital of Norway?")
        );
        assert_eq!(replace_mention("Who is Swedenborg?", "sweden", "Norway"), None);
        assert_eq!(replace_mention("Who directed Alien?", "Aliens", "Big"), None);
        // The words around the mention are not said twice.
        assert_eq!(
            replace_mention(
                "Which packages come out of the emacs source package?",
                "emacs",
                "the vim source"
            )
            .as_deref(),
            Some("Which packages come out of the vim source package?")
        );
    }

    #[test]
    fn choices_must_be_an_option() {
        let labels = vec!["Forrest Gump".to_owned(), "Robert Zemeckis".to_owned()];
        assert_eq!(
            check_choice(r#"{"referent": "forrest gump"}"#, &labels).unwrap(),
            "Forrest Gump"
        );
        assert!(check_choice(r#"{"referent": "Tom Hanks"}"#, &labels).is_err());
        assert!(check_choice("Forrest Gump", &labels).is_err());
    }
}
