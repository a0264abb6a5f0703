//! Matching agent (paper §4.3, Algorithm 2): links each entity mention of the QIR to a vertex, then
//! each QIR triple to ranked predicates of the graph.
//!
//! Entity retriever: label search, at most vlimit candidates, ranked by match quality. Vertex
//! selection asks the model only when the outcome is open: one exact label match (up to case and
//! accents; homonyms ordered by degree) or a single candidate is taken as is. Otherwise the model
//! picks among the best `vertex_choices` labels, constrained to exactly those labels (an `enum`
//! schema), and the vertex validator checks the pick is one of them (retried ≤ θ with feedback).
//! A mention with no candidate at all stops the question: the graph does not know that entity.
//! A mention that is a referent the rephraser resolved from the dialogue is linked to that
//! referent's vertex without a search.
//!
//! Relations are not linked here one edge at a time: the path search after this agent finds the
//! relation paths that exist around the linked vertices. Outcomes: [`LINKED`], or
//! [`STOPPED`](crate::state::STOPPED) when an entity is unknown.

use crate::ask::{ask_validated, check_reply};
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::qir::QuestionKind;
use crate::state::{AgentState, EntityLink, LinkMethod, Outcome};
use crate::words::{holds_every_word, lost_letters_of, same_letters};
use chatty_kg_graph::EntityCandidate;
use chatty_kg_graph::text::{EXACT_MATCH_SCORE, normalize_tokens};
use serde::Deserialize;
use serde_json::json;

pub struct MatchingAgent;

pub const NAME: &str = "matching";
pub const LINKED: &str = "linked";

/// Homonyms of a linked vertex kept for the path search to try.
const MAX_HOMONYMS: usize = 4;

/// Candidate labels kept in the explanation of each link.
const SHOWN_IN_EXPLANATION: usize = 10;

#[derive(Deserialize)]
struct Pick {
    value: String,
}

#[async_trait::async_trait]
impl Agent for MatchingAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        let qir = state.require_qir(NAME)?;
        let question = state.working_question().to_owned();
        let pins = state.pinned_vertices();
        let clarified = state.clarified.clone();
        // The graph's predicates, never an entity a question is about (looked up once).
        let predicates = ctx.predicates().await;
        let mut links = Vec::with_capacity(qir.entities.len());
        for mention in &qir.entities {
            let pinned = pins
                .iter()
                .find(|(label, _)| normalize_tokens(label) == normalize_tokens(mention));
            // The vertex the user chose when asked: for the mention that named it (as written
            // then, or any mention its label can name).
            let chosen = clarified.as_ref().filter(|c| {
                links.iter().all(|l: &EntityLink| l.method != LinkMethod::Clarified)
                    && (c.mention == *mention || mention_fits(mention, &c.label))
            });
            let pinned = match chosen {
                Some(c) => Some((c.label.clone(), c.iri.clone())),
                None => pinned.cloned(),
            };
            // A word the QIR agent grounded itself, among the values of the class it modifies.
            if let Some(link) = state.modifier_links.iter().find(|l| l.mention == *mention) {
                links.push(link.clone());
                continue;
            }
            links.push(match pinned {
                // A referent of the dialogue: its vertex, not whichever homonym search ranks first.
                Some((label, iri)) => EntityLink {
                    mention: mention.clone(),
                    method: if chosen.is_some() {
                        LinkMethod::Clarified
                    } else {
                        LinkMethod::Referent
                    },
                    iri: Some(iri),
                    label: Some(label.clone()),
                    candidates: 1,
                    top_candidates: vec![label.clone()],
                    homonyms: Vec::new(),
                    homonym_retried: false,
                    read_as_words: false,
                },
                None => {
                    let link = link_entity(ctx, &question, mention, &predicates).await?;
                    // No label holds it, but a compound of a relation's name may say one of that
                    // relation's values ("architecture-independent": the architecture "all").
                    match link.iri {
                        None => crate::linking::compounds::relation_value(ctx, mention)
                            .await
                            .unwrap_or(link),
                        Some(_) => link,
                    }
                }
            });
        }
        let unknown: Vec<String> = links
            .iter()
            .filter(|l| l.iri.is_none())
            .map(|l| l.mention.clone())
            .collect();
        if !unknown.is_empty() {
            state.entities = links;
            return Ok(state.stop(Outcome::UnknownEntity { mentions: unknown }));
        }
        // "Which *currency sign* was introduced in Unicode 2.0?": the noun asked for names a set
        // the answers belong to, not the one thing of its exact label that nothing points to.
        // A graph error here leaves the links as they were.
        if let Err(error) =
            crate::linking::asked::relink_asked_sets(ctx, &question, &mut links, mention_fits, &predicates).await
        {
            tracing::info!(%error, "the asked noun not checked for a set");
        }
        // A value written beside a named thing is that thing's: among the vertices storing it,
        // one next to another mention's vertex (its statement, its record) over the most
        // connected one. A graph error here leaves the links as they were.
        if links.len() >= 2
            && let Err(error) = holders_beside_anchors(ctx, &mut links).await
        {
            tracing::info!(%error, "a written value's holder not checked beside the other anchors");
        }
        // A yes/no question asks whether its two things are related: the second is looked for
        // among the first one's neighbours where the search's vertex is not one. A graph error
        // here (a timeout) leaves the search's links: the step only ever improves on them.
        if qir.kind == QuestionKind::Boolean
            && links.len() >= 2
            && let Err(error) = crate::linking::coherence::relink_beside_anchors(ctx, &question, &mut links).await
        {
            tracing::info!(%error, "yes/no question's things not relinked among neighbours");
        }
        state.entities = links;
        Ok(LINKED)
    }
}

/// Makes, in place, each link by value ([`LinkMethod::Literal`]) whose vertex shares no edge with
/// any other link's vertex take the first of its homonyms (the other vertices storing the value)
/// that does; the vertex it replaces becomes a homonym.
async fn holders_beside_anchors(ctx: &AgentContext, links: &mut [EntityLink]) -> Result<(), AgentError> {
    for i in 0..links.len() {
        if links[i].method != LinkMethod::Literal || links[i].homonyms.is_empty() {
            continue;
        }
        let others: Vec<String> = links
            .iter()
            .enumerate()
            .filter(|(j, l)| *j != i && l.method != LinkMethod::Literal)
            .filter_map(|(_, l)| l.iri.clone())
            .collect();
        let Some(current) = links[i].iri.clone() else {
            continue;
        };
        let beside = async |vertex: &str| -> Result<bool, AgentError> {
            for other in &others {
                if !ctx.kg.predicates_between(vertex, other).await?.is_empty() {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        if others.is_empty() || beside(&current).await? {
            continue;
        }
        let mut found = None;
        for (k, homonym) in links[i].homonyms.iter().enumerate() {
            if beside(homonym).await? {
                found = Some(k);
                break;
            }
        }
        if let Some(k) = found {
            let link = &mut links[i];
            let holder = std::mem::replace(&mut link.homonyms[k], current);
            link.label = Some(
                ctx.kg
                    .labels(&[holder.as_str()])
                    .await?
                    .remove(&holder)
                    .unwrap_or_else(|| link.mention.trim().trim_matches(QUOTES).trim().to_owned()),
            );
            link.top_candidates = link.label.iter().cloned().collect();
            link.iri = Some(holder);
        }
    }
    Ok(())
}

/// Whether `label` can name what `mention` says: every number of the mention is in the label
/// ("Titanic 2" is not "Titanic"), and at least half of its other words are there, exactly, by
/// prefix or with one typo ("Cast Awy" is "Cast Away", "Spielberg" is "Steven Spielberg"), or
/// the whole label is in the mention (a model's mention with a relation word: "21's track list"
/// names "21").
pub fn mention_fits(mention: &str, label: &str) -> bool {
    use chatty_kg_graph::text::within_one_edit;
    let label = normalize_tokens(label);
    let words = normalize_tokens(mention);
    let found = |w: &String| {
        label
            .iter()
            .any(|l| l == w || (w.len() >= 3 && l.starts_with(w.as_str())) || (w.len() >= 4 && within_one_edit(l, w)))
    };
    let (numbers, others): (Vec<&String>, Vec<&String>) = words
        .iter()
        .partition(|w| crate::linking::spotting::is_sequel_number(w) || w.chars().all(|c| c.is_ascii_digit()));
    let content: Vec<&String> = others
        .into_iter()
        .filter(|w| w.len() > 1 && !crate::words::is_function_word(w))
        .collect();
    let label_in_mention = !label.is_empty() && label.iter().all(|l| words.contains(l));
    numbers.iter().all(|n| label.contains(n))
        && (content.is_empty() || label_in_mention || content.iter().filter(|w| found(w)).count() * 2 >= content.len())
}

/// Entity retriever, vertex selection and vertex validator for one mention.
async fn link_entity(
    ctx: &AgentContext,
    question: &str,
    mention: &str,
    predicates: &std::collections::HashSet<String>,
) -> Result<EntityLink, AgentError> {
    let mut candidates = ctx.kg.search_entities(mention, ctx.params.vlimit).await?;
    // Only candidates whose labels can name the mention: none left is an unknown entity, said
    // so, rather than the model's pick of something else. The graph's predicates are relations,
    // never the entity a question is about.
    candidates.retain(|c| mention_fits(mention, &c.label) && !predicates.contains(&c.iri));
    let labels = distinct_labels(&candidates, ctx.params.vertex_choices.max(1));
    let mut link = EntityLink {
        mention: mention.to_owned(),
        iri: None,
        label: None,
        method: LinkMethod::NotFound,
        candidates: candidates.len(),
        top_candidates: labels.iter().take(SHOWN_IN_EXPLANATION).cloned().collect(),
        homonyms: Vec::new(),
        homonym_retried: false,
        read_as_words: false,
    };
    // A value written as one (quoted, a code), or a mention no label can name, may be a stored
    // literal; a plain name some labels nearly match is not looked up by value ("United States"
    // is the value of too many triples in a large graph).
    if candidates.first().is_none_or(|c| c.score < EXACT_MATCH_SCORE)
        && (candidates.is_empty() || written_as_value(mention))
        && let Some(found) = by_value(ctx, mention).await?
    {
        return Ok(found);
    }
    // An acronym no label is ("US", "JFK"): the vertex whose name it abbreviates, when one such
    // vertex has the edges to dominate the others, before any label that holds it as a word
    // ("FWD.us").
    if candidates.first().is_none_or(|c| c.score < EXACT_MATCH_SCORE)
        && written_as_acronym(mention)
        && let Some((iri, label, others)) = by_initials(ctx, mention, &candidates, predicates).await?
    {
        link.iri = Some(iri);
        link.label = Some(label);
        link.method = LinkMethod::Initials;
        link.homonyms = others;
        return Ok(link);
    }
    // The label as a text that lost its accented letters writes it is the label written so.
    let lost_letters = candidates.first().is_none_or(|c| c.score < EXACT_MATCH_SCORE)
        && match candidates.iter().position(|c| lost_letters_of(mention, &c.label)) {
            Some(i) => {
                let written = candidates.remove(i);
                candidates.insert(0, written);
                true
            }
            None => false,
        };
    let Some(first) = candidates.first() else {
        return Ok(link);
    };
    let forced = if first.score >= EXACT_MATCH_SCORE || lost_letters {
        // Search ranks exact matches first and orders homonyms among them by degree.
        Some(LinkMethod::ExactLabel)
    } else if candidates.len() == 1 {
        Some(LinkMethod::OnlyCandidate)
    } else {
        None
    };
    // A partial name no vertex dominates: the others that hold its words, by degree.
    let mut rivals: Vec<String> = Vec::new();
    let forced = match forced {
        Some(method) => Some((method, first)),
        None => dominant(ctx, mention, &candidates)
            .await?
            .map(|(method, chosen, others)| {
                rivals = others;
                (method, chosen)
            }),
    };
    let chosen = match forced {
        Some((method, chosen)) => {
            link.method = method;
            chosen
        }
        None => {
            // "None of these" is offered when no candidate has every word of the mention
            // ("Tom Hardy" among "Tom Hanks", "Tom Holland"): the graph may not have it.
            let none = (!candidates.iter().any(|c| names_every_word(mention, &c.label))).then_some(NONE_OF_THESE);
            let Some(label) = pick_label(ctx, question, mention, &labels, none).await? else {
                link.method = LinkMethod::NoneFits;
                return Ok(link);
            };
            link.method = LinkMethod::Model;
            // Several vertices may share the label: the best ranked (highest degree) wins.
            candidates.iter().find(|c| c.label == label).unwrap_or(first)
        }
    };
    link.iri = Some(chosen.iri.clone());
    link.label = Some(chosen.label.clone());
    // The other vertices of the same label, for the path search to try when this one has no
    // path that fits ("Who was born in Arequipa?" of a ship named after the city).
    // A partial name no vertex dominates ("Ceres": a town, a dwarf planet) is as ambiguous:
    // the others that hold its words are tried the same way, by degree.
    let same = normalize_tokens(&chosen.label);
    link.homonyms = candidates
        .iter()
        .filter(|c| c.iri != chosen.iri && normalize_tokens(&c.label) == same)
        .map(|c| c.iri.clone())
        .chain(rivals.into_iter().filter(|r| *r != chosen.iri))
        .fold(Vec::new(), |mut kept, iri| {
            if !kept.contains(&iri) {
                kept.push(iri);
            }
            kept
        })
        .into_iter()
        .take(MAX_HOMONYMS)
        .collect();
    Ok(link)
}

/// How many times more edges the dominant vertex of a partial name has than the next one.
const DOMINANCE: u64 = 3;
/// Candidates whose degrees are compared for a partial name: a name more labels hold is not
/// said to be dominated by one of them (its degree was not compared with every other's).
const DOMINANCE_CANDIDATES: usize = 100;

/// A partial name ("Kerouac", "Napoleon") names a vertex whose label holds all its words: the
/// one that has [`DOMINANCE`] times the edges of every other such one (`Dominant`: the graph says
/// who is meant), else the one with the most edges (`MostConnected`: measured on the QALD-9
/// train slice, the 0.5 B model's pick among such labels was right for 6 of 32 questions and took
/// 2–28 s), with the others by degree (the path search tries them as homonyms). `None` when no
/// label holds every word (a typo): the model decides.
pub(crate) async fn dominant<'c>(
    ctx: &AgentContext,
    mention: &str,
    candidates: &'c [EntityCandidate],
) -> Result<Option<(LinkMethod, &'c EntityCandidate, Vec<String>)>, AgentError> {
    let all_holding: Vec<&EntityCandidate> = candidates
        .iter()
        .filter(|c| holds_every_word(mention, &c.label))
        .collect();
    // Compared with only some of the others, no vertex is known to dominate ("Debian" in 149
    // names, the first 20 of which a maintainer led by degree, two others having more).
    let measured_all = all_holding.len() <= DOMINANCE_CANDIDATES;
    let holding: Vec<&EntityCandidate> = all_holding.into_iter().take(DOMINANCE_CANDIDATES).collect();
    match holding.as_slice() {
        [] => Ok(None),
        [only] => Ok(Some((LinkMethod::Dominant, only, Vec::new()))),
        _ => {
            let iris: Vec<&str> = holding.iter().map(|c| c.iri.as_str()).collect();
            let degrees = ctx.kg.degrees(&iris).await?;
            let degree = |c: &EntityCandidate| degrees.get(&c.iri).copied().unwrap_or(0);
            let mut by_degree = holding.clone();
            // Stable: the search's order among equals.
            by_degree.sort_by_key(|c| std::cmp::Reverse(degree(c)));
            let (top, next) = (degree(by_degree[0]), degree(by_degree[1]));
            if measured_all && top >= DOMINANCE * next.max(1) {
                return Ok(Some((LinkMethod::Dominant, by_degree[0], Vec::new())));
            }
            let others = by_degree[1..].iter().map(|c| c.iri.clone()).collect();
            Ok(Some((LinkMethod::MostConnected, by_degree[0], others)))
        }
    }
}

/// Letters an acronym has at least and at most.
const ACRONYM_LETTERS: std::ops::RangeInclusive<usize> = 2..=5;

/// A mention written as an acronym: two to five capital letters, dots aside ("US", "U.S.",
/// "JFK").
fn written_as_acronym(mention: &str) -> bool {
    let trimmed = mention.trim();
    let letters = trimmed.chars().filter(char::is_ascii_uppercase).count();
    ACRONYM_LETTERS.contains(&letters) && trimmed.chars().all(|c| c.is_ascii_uppercase() || c == '.')
}

/// Vertices whose names an acronym may abbreviate, looked at.
const INITIALS_CANDIDATES: usize = 50;

/// The vertex whose name of several words `acronym` abbreviates, with its label and the others
/// so named by degree: the one with [`DOMINANCE`] times the edges of every other, and of every
/// vertex among the search's `candidates` whose name writes the acronym as a word, in capitals
/// as the question does (the graph says which is meant: "US" the United States, not "Upper
/// Silesia" or "US Steel Hour"; "GMT" neither Greenwich Mean Time nor GMT Games, whose degrees
/// are close). `None` when none is so named or none dominates: the label search decides, as for
/// any mention.
async fn by_initials(
    ctx: &AgentContext,
    acronym: &str,
    candidates: &[EntityCandidate],
    predicates: &std::collections::HashSet<String>,
) -> Result<Option<(String, String, Vec<String>)>, AgentError> {
    let mut named: Vec<(String, String)> = Vec::new();
    for (iri, label) in ctx.kg.initials_matches(acronym, INITIALS_CANDIDATES).await? {
        if !predicates.contains(&iri) && !named.iter().any(|(known, _)| *known == iri) {
            named.push((iri, label));
        }
    }
    if named.is_empty() {
        return Ok(None);
    }
    let letters: String = acronym.chars().filter(char::is_ascii_uppercase).collect();
    let writing: Vec<&str> = candidates
        .iter()
        .filter(|c| c.label.split(|ch: char| !ch.is_alphanumeric()).any(|w| w == letters))
        .filter(|c| !named.iter().any(|(iri, _)| *iri == c.iri))
        .take(INITIALS_CANDIDATES)
        .map(|c| c.iri.as_str())
        .collect();
    let iris: Vec<&str> = named
        .iter()
        .map(|(iri, _)| iri.as_str())
        .chain(writing.iter().copied())
        .collect();
    let degrees = ctx.kg.degrees(&iris).await?;
    let degree = |iri: &str| degrees.get(iri).copied().unwrap_or(0);
    // Stable: the index's order among equals.
    named.sort_by_key(|(iri, _)| std::cmp::Reverse(degree(iri)));
    let next = named
        .get(1)
        .map(|(iri, _)| iri.as_str())
        .into_iter()
        .chain(writing.iter().copied())
        .map(degree)
        .max()
        .unwrap_or(0);
    let (iri, label) = named[0].clone();
    if degree(&iri) < DOMINANCE * next.max(1) {
        return Ok(None);
    }
    let others = named[1..]
        .iter()
        .take(MAX_HOMONYMS)
        .map(|(iri, _)| iri.clone())
        .collect();
    Ok(Some((iri, label, others)))
}

/// Quotes around a written value ("the paper titled 'X'").
const QUOTES: &[char] = &['\'', '"', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}'];

/// A mention written as a value: quoted, or a code ([`crate::linking::spotting::literal_mentions`]).
fn written_as_value(mention: &str) -> bool {
    let trimmed = mention.trim();
    (trimmed.starts_with(QUOTES) && trimmed.ends_with(QUOTES))
        || crate::linking::spotting::literal_mentions(trimmed)
            .iter()
            .any(|m| m == trimmed)
}

/// The vertex that stores the mention as a literal, when no label names it exactly (a title
/// that is not a label, an ISBN): the most connected one when several do.
async fn by_value(ctx: &AgentContext, mention: &str) -> Result<Option<EntityLink>, AgentError> {
    const SUBJECTS: usize = 16;
    let value = mention.trim().trim_matches(QUOTES).trim();
    // A short word or number is no identifying value ("2", "red", a year).
    if !crate::linking::spotting::identifying(value) {
        return Ok(None);
    }
    let mut subjects: Vec<String> = Vec::new();
    for (s, _) in ctx.kg.value_subjects(value, SUBJECTS).await? {
        if !subjects.contains(&s) {
            subjects.push(s);
        }
    }
    if subjects.is_empty() {
        return Ok(None);
    }
    let refs: Vec<&str> = subjects.iter().map(String::as_str).collect();
    if refs.len() > 1 {
        let degrees = ctx.kg.degrees(&refs).await?;
        // Stable: the query's order among equals.
        subjects.sort_by_key(|s| std::cmp::Reverse(degrees.get(s).copied().unwrap_or(0)));
    }
    let iri = subjects[0].clone();
    let label = ctx
        .kg
        .labels(&[iri.as_str()])
        .await?
        .remove(&iri)
        .unwrap_or_else(|| value.to_owned());
    Ok(Some(EntityLink {
        mention: mention.to_owned(),
        iri: Some(iri),
        label: Some(label.clone()),
        method: LinkMethod::Literal,
        candidates: subjects.len(),
        homonyms: subjects[1..].iter().take(MAX_HOMONYMS).cloned().collect(),
        homonym_retried: false,
        read_as_words: false,
        top_candidates: vec![label],
    }))
}

/// The choice that says no candidate names the mention.
pub const NONE_OF_THESE: &str = "none of these";

/// Every content word of `mention` is a word of `label` (exactly or by prefix).
pub(crate) fn names_every_word(mention: &str, label: &str) -> bool {
    if same_letters(mention, label) {
        return true;
    }
    let label = normalize_tokens(label);
    normalize_tokens(mention)
        .iter()
        .filter(|w| !crate::words::is_function_word(w))
        .all(|w| {
            label
                .iter()
                .any(|l| l == w || (w.len() >= 3 && l.starts_with(w.as_str())))
        })
}

/// Vertex selection by the model, checked by the vertex validator; `None` when the model chose
/// `none` (offered as the last choice, when given).
async fn pick_label(
    ctx: &AgentContext,
    question: &str,
    mention: &str,
    labels: &[String],
    none: Option<&str>,
) -> Result<Option<String>, AgentError> {
    let mut shown = labels.to_vec();
    shown.extend(none.map(str::to_owned));
    let schema = json!({
        "type": "object",
        "properties": {"value": {"enum": shown}},
        "required": ["value"], "additionalProperties": false
    });
    let variables = json!({"question": question, "mention": mention, "candidates": labels, "none": none});
    let picked = ask_validated(ctx, NAME, NAME, variables, schema, |reply| {
        check_vertex_pick(reply, &shown)
    })
    .await?;
    Ok((Some(picked.as_str()) != none || labels.contains(&picked)).then_some(picked))
}

/// A model's reply to the vertex selection, parsed and checked by the vertex validator: the
/// chosen label, or the complaint the model gets back.
pub fn check_vertex_pick(reply: &str, labels: &[String]) -> Result<String, String> {
    check_reply(reply, |pick: Pick| vertex_validator(&pick.value, labels))
}

/// The pick must be one of the shown labels (compared without case and surrounding space).
fn vertex_validator(pick: &str, labels: &[String]) -> Result<String, String> {
    let wanted = pick.trim();
    labels
        .iter()
        .find(|l| l.as_str() == wanted)
        .or_else(|| labels.iter().find(|l| l.eq_ignore_ascii_case(wanted)))
        .cloned()
        .ok_or_else(|| format!("{wanted:?} is not one of the candidates; copy one label exactly"))
}

/// The first `limit` labels in rank order, each once.
fn distinct_labels(candidates: &[EntityCandidate], limit: usize) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for candidate in candidates {
        if labels.len() == limit {
            break;
        }
        if !labels.contains(&candidate.label) {
            labels.push(candidate.label.clone());
        }
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_written_without_their_accented_letters() {
        assert!(lost_letters_of("Sylvain Lvi", "Sylvain Lévi"));
        assert!(lost_letters_of("Jacques-Dsir Laval", "Jacques-Désiré Laval"));
        assert!(
            !lost_letters_of("Sylvain Levi", "Sylvain Lévi"),
            "folded, not lost: the label search's"
        );
        assert!(!lost_letters_of("Sylvain Lvi", "Sylvain Levi"));
        assert!(!lost_letters_of("", "É"));
        assert!(!lost_letters_of("Alibaba", "Alibaba 阿里巴巴"), "a word lost whole");
    }

    #[test]
    fn a_label_must_be_able_to_name_the_mention() {
        assert!(mention_fits("Titanic", "Titanic"));
        assert!(!mention_fits("Titanic 2", "Titanic"));
        assert!(!mention_fits("Rocky II", "Rocky"));
        assert!(mention_fits("Rocky II", "Rocky II"));
        assert!(mention_fits("Cast Awy", "Cast Away"));
        assert!(mention_fits("Spielberg", "Steven Spielberg"));
        assert!(mention_fits("tom han", "Tom Hanks"));
        assert!(mention_fits("the Matrix", "The Matrix Reloaded"));
        assert!(mention_fits("21's track list", "21"));
        assert!(!mention_fits("21's track list", "22"));
        assert!(!mention_fits("Zorblax Quintrell", "Quintet"));
    }

    #[test]
    fn the_vertex_validator_accepts_only_shown_labels() {
        let labels = vec!["Alien".to_owned(), "Aliens".to_owned()];
        assert_eq!(vertex_validator(" aliens ", &labels).unwrap(), "Aliens");
        assert_eq!(vertex_validator("Alien", &labels).unwrap(), "Alien");
        assert!(vertex_validator("Alien 3", &labels).unwrap_err().contains("not one of"));
    }

    #[test]
    fn a_partial_name_is_whole_words_of_a_label() {
        assert!(holds_every_word("Kerouac", "Jack Kerouac"));
        assert!(holds_every_word("Lake Placid", "Lake Placid, New York"));
        assert!(!holds_every_word("ISO", "Left-to-right isolate"));
        assert!(!holds_every_word("the", "The Matrix"));
        // A name from an IRI with its words run together.
        assert!(holds_every_word("Jiaxin Pan", "jiaxinpan"));
        assert!(names_every_word("Jiaxin Pan", "jiaxinpan"));
        assert!(!holds_every_word("Jiaxin", "jiaxinpan"));
        assert!(!names_every_word("Jiaxin Pang", "jiaxinpan"));
    }

    #[test]
    fn none_of_these_is_offered_only_when_no_label_has_every_word() {
        assert!(names_every_word("Spielberg", "Steven Spielberg"));
        assert!(names_every_word("the Matrix", "The Matrix Reloaded"));
        assert!(names_every_word("tom han", "Tom Hanks"));
        assert!(!names_every_word("Tom Hardy", "Tom Hanks"));
        assert!(!names_every_word("Cast Awy", "Cast Away"));
    }

    #[test]
    fn labels_are_distinct_and_bounded() {
        let c = |iri: &str, label: &str| EntityCandidate {
            iri: iri.into(),
            label: label.into(),
            score: 1.0,
        };
        let candidates = [c("a", "Big"), c("b", "Big"), c("c", "Bigger"), c("d", "Biggest")];
        assert_eq!(distinct_labels(&candidates, 2), vec!["Big", "Bigger"]);
    }
}
