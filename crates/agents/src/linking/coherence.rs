//! Linking a yes/no question's second thing among the first one's neighbours.
//!
//! "Was Mother Teresa beatified by John Paul the second?" asks whether two things are related;
//! the graph relates Mother Teresa to "Pope John Paul II", while the label search, reading "John
//! Paul" alone, finds the better connected "John Paul McQueen". Where two named things of a
//! yes/no question share no edge, the neighbours of the one linked with confidence are read
//! against the question's words: a neighbour whose name the question writes (every word of it,
//! a title or a parenthesis aside), where the other mention stands, and at least as fully as the
//! vertex it replaces is named, is the thing meant ("the City of Liverpool gymnast club" for
//! "City", "Series 30+" beside the Nokia 215 for "Series 30").
//!
//! A list question's two things need not be neighbours ("Which pole driver of A was the first
//! driver of B?" meets at the answer), so only yes/no questions are relinked. A neighbour that
//! takes the question's last words for the relation ("Is Esther Alder the *mayor* of Geneva?"
//! with "Mayors of Geneva") turns the question into another and is not taken.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::linking::link::{EntityLink, LinkMethod};
use crate::words::{ORDINAL_DIGITS, is_function_word, is_title};
use chatty_kg_graph::text::normalize_tokens;
use chatty_kg_graph::{QueryResults, Term};
use std::collections::BTreeSet;

/// Rows read around the anchor, each way (one per neighbour, label and relation); an anchor with
/// more is not read.
const NEIGHBOURS: usize = 2000;

/// Other neighbours named as fully, kept for the path search to try.
const MAX_HOMONYMS: usize = 4;

/// Relinks, in place, each mention of a yes/no question whose vertex shares no edge with another
/// mention's vertex linked with confidence ([`firm`]), to that vertex's neighbour the question names
/// there ([`LinkMethod::Neighbour`]). Returns how many were relinked; a graph error on one pair
/// leaves that pair as it was.
pub(crate) async fn relink_beside_anchors(
    ctx: &AgentContext,
    question: &str,
    links: &mut [EntityLink],
) -> Result<usize, AgentError> {
    let words = normalize_tokens(question);
    let mut relinked = 0;
    for b in 0..links.len() {
        if !relinkable(&links[b]) {
            continue;
        }
        for a in 0..links.len() {
            if a == b || !firm(&links[a]) {
                continue;
            }
            let (Some(anchor), Some(current)) = (links[a].iri.clone(), links[b].iri.clone()) else {
                continue;
            };
            if anchor == current {
                break;
            }
            // A graph error (a timeout) on one pair leaves that pair's link as the search made it.
            match ctx.kg.predicates_between(&anchor, &current).await {
                Ok(links) if !links.is_empty() => break,
                Ok(_) => {}
                Err(error) => {
                    tracing::info!(%error, "yes/no question's things not compared");
                    continue;
                }
            }
            let anchor_span = span(&words, &links[a].mention);
            let mention_span = span(&words, &links[b].mention);
            let current_label = links[b].label.clone().unwrap_or_default();
            let current_cover = cover(&current_label, &words, &anchor_span).map_or(0, |c| c.len());
            let mut found = match named_neighbours(ctx, &anchor, &current, &words, &anchor_span, &mention_span).await {
                Ok(found) => found,
                Err(error) => {
                    tracing::info!(%error, "neighbours not read");
                    continue;
                }
            };
            // A vertex labelled exactly as the question writes the mention, case and all ("Tom
            // Hanks"), is not replaced by a namesake that says no more of the question (the tag
            // "tom hanks" of a film).
            if current_label == links[b].mention.trim() {
                found.retain(|(_, _, positions)| !positions.is_subset(&mention_span));
            }
            let Some(((iri, label), others)) = found
                .split_first()
                .filter(|_| best_cover(&found) >= current_cover.max(1))
                .map(|((iri, label, _), others)| ((iri.clone(), label.clone()), others))
            else {
                continue;
            };
            let link = &mut links[b];
            link.iri = Some(iri);
            link.label = Some(label);
            link.method = LinkMethod::Neighbour;
            // Neighbours the question names as fully: the path search tries them in turn.
            link.homonyms = others
                .iter()
                .take(MAX_HOMONYMS)
                .map(|(iri, _, _)| iri.clone())
                .collect();
            relinked += 1;
            break;
        }
    }
    Ok(relinked)
}

/// A link the search made from the mention's words alone (not the dialogue's, the user's or a
/// stored value's).
fn relinkable(link: &EntityLink) -> bool {
    link.iri.is_some()
        && matches!(
            link.method,
            LinkMethod::ExactLabel
                | LinkMethod::OnlyCandidate
                | LinkMethod::Dominant
                | LinkMethod::Initials
                | LinkMethod::MostConnected
                | LinkMethod::Model
        )
}

/// A link made with confidence: an exact label, the only candidate, a partial name or an acronym
/// one vertex dominates, or the dialogue's or the user's vertex.
pub(crate) fn firm(link: &EntityLink) -> bool {
    link.iri.is_some()
        && matches!(
            link.method,
            LinkMethod::ExactLabel
                | LinkMethod::OnlyCandidate
                | LinkMethod::Dominant
                | LinkMethod::Initials
                | LinkMethod::Referent
                | LinkMethod::Clarified
        )
}

/// How many of the question's words the best of `found` writes.
fn best_cover(found: &[(String, String, BTreeSet<usize>)]) -> usize {
    found.first().map_or(0, |(_, _, positions)| positions.len())
}

/// The anchor's neighbours (not `current`) whose name the question writes where the mention
/// stands, covering the most of the question's words, each as `(iri, label, positions)`: those
/// that cover as many as the best, in the graph's order.
async fn named_neighbours(
    ctx: &AgentContext,
    anchor: &str,
    current: &str,
    words: &[String],
    anchor_span: &BTreeSet<usize>,
    mention_span: &BTreeSet<usize>,
) -> Result<Vec<(String, String, BTreeSet<usize>)>, AgentError> {
    let Some(neighbours) = neighbours_of(ctx, anchor, current).await? else {
        return Ok(Vec::new());
    };
    // Content words outside the two mentions: the relation's. A neighbour may not take them all.
    let relation_words: BTreeSet<usize> = (0..words.len())
        .filter(|i| !anchor_span.contains(i) && !mention_span.contains(i) && !is_function_word(&words[*i]))
        .collect();
    let mut best: Vec<(String, String, BTreeSet<usize>)> = Vec::new();
    for (iri, label) in &neighbours {
        let Some(positions) = cover(label, words, anchor_span) else {
            continue;
        };
        let beside = positions.iter().any(|&i| {
            mention_span.contains(&i) || (i > 0 && mention_span.contains(&(i - 1))) || mention_span.contains(&(i + 1))
        });
        let keeps_relation = relation_words.is_empty()
            || positions.is_subset(mention_span)
            || relation_words.iter().any(|i| !positions.contains(i));
        if !beside || !keeps_relation || positions.len() < best_cover(&best) {
            continue;
        }
        if positions.len() > best_cover(&best) {
            best.clear();
        }
        // A vertex once, under the first of its labels that names it this fully.
        if !best.iter().any(|(known, _, _)| known == iri) {
            best.push((iri.clone(), label.clone(), positions));
        }
    }
    Ok(best)
}

/// The anchor's labelled IRI neighbours but `current`, each way, as `(iri, label)` (every label
/// it has) through relations that are not blacklisted; `None` when more than [`NEIGHBOURS`] rows
/// come one way (too many to read: a country, a year).
async fn neighbours_of(
    ctx: &AgentContext,
    anchor: &str,
    current: &str,
) -> Result<Option<Vec<(String, String)>>, AgentError> {
    let predicates = &ctx.kg.settings().label_predicates;
    if predicates.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let mut neighbours: Vec<(String, String)> = Vec::new();
    let profile = ctx.kg.profile_or_default().await;
    for outgoing in [true, false] {
        let query = chatty_kg_graph::labelled_neighbours_query(anchor, outgoing, predicates, NEIGHBOURS + 1)?;
        let QueryResults::Solutions(solutions) = ctx.kg.query(&query).await? else {
            continue;
        };
        if solutions.rows.len() > NEIGHBOURS || solutions.truncated {
            return Ok(None);
        }
        for row in &solutions.rows {
            // Through a relation the path search reads (a blacklisted one, `rdf:type` or a wiki
            // link, joins nothing the question asks about).
            if let (Some(Some(Term::NamedNode(n))), Some(Some(Term::Literal(label))), Some(Some(Term::NamedNode(p)))) =
                (row.first(), row.get(1), row.get(2))
                && !ctx.kg.settings().is_blacklisted(p.as_str())
                && !profile.conventions.is_schema_predicate(p.as_str())
                && n.as_str() != current
                && n.as_str() != anchor
                && !neighbours
                    .iter()
                    .any(|(known, l)| known == n.as_str() && l == label.value())
            {
                neighbours.push((n.as_str().to_owned(), label.value().to_owned()));
            }
        }
    }
    Ok(Some(neighbours))
}

/// The positions of `mention`'s words in the question: where they run together, else wherever
/// each is.
fn span(words: &[String], mention: &str) -> BTreeSet<usize> {
    let m = normalize_tokens(mention);
    if let Some((start, end)) = crate::linking::find_span(words, &m) {
        return (start..end).collect();
    }
    (0..words.len()).filter(|i| m.contains(&words[*i])).collect()
}

/// The question's positions that write `label` outside `banned`: every content word of its name
/// (a title it may leave out: "Pope John Paul II" for "John Paul the second"), and of what its
/// parenthesis says, those the question has ("Grand Prix (Cannes Film Festival)" for "the Grand
/// Prix at Cannes"). `None` when the question leaves out a word of the name.
fn cover(label: &str, words: &[String], banned: &BTreeSet<usize>) -> Option<BTreeSet<usize>> {
    let (name, parenthesis) = match label.split_once('(') {
        Some((name, rest)) => (name, rest),
        None => (label, ""),
    };
    let content = |text: &str| -> Vec<String> {
        normalize_tokens(text)
            .into_iter()
            .filter(|w| !is_function_word(w) && w != "s")
            .collect()
    };
    let name = content(name);
    if name.is_empty() {
        return None;
    }
    let find = |w: &str| (0..words.len()).find(|i| !banned.contains(i) && same_word(w, &words[*i]));
    let mut positions = BTreeSet::new();
    for w in &name {
        match find(w) {
            Some(i) => {
                positions.insert(i);
            }
            None if is_title(w) => {}
            None => return None,
        }
    }
    if positions.is_empty() {
        return None;
    }
    positions.extend(content(parenthesis).iter().filter_map(|w| find(w)));
    Some(positions)
}

/// One word of a name and one of the question: equal, one a stem of the other ("gymnast",
/// "Gymnastics"; "Islamic", "Islam"), or the same ordinal ("second", "2nd", "II").
fn same_word(name: &str, written: &str) -> bool {
    let (name, written) = (ordinal(name), ordinal(written));
    name == written
        || (name.len() >= 4 && written.len() >= 4 && (name.starts_with(written) || written.starts_with(name)))
}

/// An ordinal's digits ("sixth", "6th", "vi" → "6"); other words as they are.
fn ordinal(word: &str) -> &str {
    ORDINAL_DIGITS
        .iter()
        .find(|(_, forms)| forms.contains(&word))
        .map_or(word, |(digits, _)| digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(q: &str) -> Vec<String> {
        normalize_tokens(q)
    }

    #[test]
    fn a_name_is_written_when_every_word_is_titles_and_ordinals_aside() {
        let q = words("Was mother teresa beatified by John Paul the second?");
        let anchor = span(&q, "mother teresa");
        assert!(cover("Pope John Paul II", &q, &anchor).is_some());
        assert!(cover("John Paul McQueen", &q, &anchor).is_none());
        // The anchor's own words name nothing else.
        assert!(cover("Teresa", &q, &anchor).is_none());
        let q = words("Does Beth Tweddle play for the City of Liverpool gymnast club?");
        let c = cover("City of Liverpool Gymnastics Club", &q, &span(&q, "Beth Tweddle")).unwrap();
        assert_eq!(c.len(), 4);
    }

    #[test]
    fn a_parenthesis_adds_the_words_the_question_has() {
        let q = words("Did Kaurismaki ever win the Grand Prix at Cannes?");
        let anchor = span(&q, "Kaurismaki");
        assert_eq!(
            cover("Grand Prix (Cannes Film Festival)", &q, &anchor).unwrap().len(),
            3
        );
        assert_eq!(cover("Raiffeisen Grand Prix", &q, &anchor), None);
        assert_eq!(cover("Grand Prix", &q, &anchor).unwrap().len(), 2);
    }

    #[test]
    fn ordinals_and_stems_are_the_same_word() {
        assert!(same_word("6th", "sixth"));
        assert!(same_word("ii", "second"));
        assert!(same_word("islam", "islamic"));
        assert!(!same_word("art", "artist"));
        assert!(!same_word("6th", "7th"));
    }

    #[test]
    fn a_mention_spans_its_words_where_they_run_together() {
        let q = words("Is the charat district a district in peru?");
        assert_eq!(span(&q, "charat district"), BTreeSet::from([2, 3]));
        assert_eq!(span(&q, "Peru"), BTreeSet::from([7]));
    }
}
