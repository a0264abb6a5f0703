//! The noun a "which" question asks for names a set the answers belong to: "Which *currency
//! sign* was introduced in Unicode 2.0?" asks for characters of the category "currency symbol",
//! not for the one character whose name is "Currency sign". Where the words there are exactly the
//! label of a vertex that nothing else points to (a thing of its own, no kind of anything), the
//! set is looked for among the other vertices whose labels hold those words: one that things of
//! the graph share as a value or a type (at least two subjects point to it), its name close in
//! meaning to the noun. The graph says which vertices are sets; no list of words does.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::linking::find_span;
use crate::linking::link::{EntityLink, LinkMethod};
use crate::similarity::closest_in_meaning;
use chatty_kg_graph::text::normalize_tokens;
use chatty_kg_graph::{ReadQuery, named_node, triple, var};
use spargebra::algebra::GraphPattern;

/// Other vertices of the noun's words looked at, the best matched first.
const CANDIDATES: usize = 8;
/// The least similarity in meaning between the noun and a set's name ("currency sign" /
/// "currency symbol" is 0.87; MiniLM's unrelated pairs stay under 0.5).
const SIMILARITY: f32 = 0.6;
/// The best set's name must be this much closer to the noun than the next.
const MARGIN: f32 = 0.05;

/// Whether `mention` stands where a question names what it asks for: right after its opening
/// "which" or "what" (or "how many"), the question going on after it.
pub(crate) fn is_asked_noun(question: &str, mention: &str) -> bool {
    let words = normalize_tokens(question);
    let Some((start, end)) = find_span(&words, &normalize_tokens(mention)) else {
        return false;
    };
    let opener = usize::from(words.first().is_some_and(|w| w == "and"));
    let at = match words.get(opener).map(String::as_str) {
        Some("which" | "what") => opener + 1,
        Some("how") if words.get(opener + 1).is_some_and(|w| w == "many") => opener + 2,
        _ => return false,
    };
    start == at && end < words.len()
}

/// Written as a common noun: letters, no capital, no digit, nothing but spaces and hyphens.
pub(crate) fn written_as_common_noun(mention: &str) -> bool {
    mention.chars().any(char::is_alphabetic)
        && !mention
            .chars()
            .any(|c| c.is_uppercase() || c.is_ascii_digit() || !(c.is_alphanumeric() || c == ' ' || c == '-'))
}

/// A label written as a common noun, its first letter aside ("currency symbol", "Currency
/// symbol"; not "Currency Symbols", "Unicode 2.0").
fn names_a_kind(label: &str) -> bool {
    let mut chars = label.chars();
    chars
        .next()
        .is_some_and(|first| written_as_common_noun(&format!("{}{}", first.to_lowercase(), chars.as_str())))
}

/// Whether at least two things point to `vertex` (as a value or a type).
async fn pointed_to(ctx: &AgentContext, vertex: &str) -> Result<bool, AgentError> {
    let s = var("s");
    let pattern = GraphPattern::Bgp {
        patterns: vec![triple(s.clone(), var("p"), named_node(vertex)?)],
    };
    let query = ReadQuery::select(GraphPattern::Slice {
        inner: Box::new(GraphPattern::Distinct {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(pattern),
                variables: vec![s],
            }),
        }),
        start: 0,
        length: Some(2),
    })?;
    Ok(match ctx.kg.query(&query).await? {
        chatty_kg_graph::QueryResults::Solutions(s) => s.rows.len() >= 2,
        chatty_kg_graph::QueryResults::Boolean(b) => b,
    })
}

/// Relinks, in place, the asked noun of a "which" question ([`is_asked_noun`]) that was linked
/// by its exact label to a vertex nothing points to: to the vertex of a label holding its words
/// that things share ([`pointed_to`]), the closest in meaning, when one is close enough and
/// clearly closest ([`LinkMethod::AskedSet`]; the exact one becomes a homonym). Otherwise the link
/// stays. `fits` says whether a label can name a mention (the matching agent's test), and
/// `predicates` are the graph's relations, never a set.
pub(crate) async fn relink_asked_sets(
    ctx: &AgentContext,
    question: &str,
    links: &mut [EntityLink],
    fits: impl Fn(&str, &str) -> bool,
    predicates: &std::collections::HashSet<String>,
) -> Result<(), AgentError> {
    for link in links.iter_mut() {
        let Some(exact) = link.iri.clone() else {
            continue;
        };
        if link.method != LinkMethod::ExactLabel
            || !written_as_common_noun(&link.mention)
            || !is_asked_noun(question, &link.mention)
            || pointed_to(ctx, &exact).await?
        {
            continue;
        }
        // The labels holding the noun's words: the search's best for the whole noun are its
        // exact label and those holding every word, so each word is searched as well.
        let same = normalize_tokens(link.label.as_deref().unwrap_or(&link.mention));
        let mut others: Vec<chatty_kg_graph::EntityCandidate> = Vec::new();
        let words = normalize_tokens(&link.mention);
        let searched = std::iter::once(link.mention.clone()).chain(
            words
                .iter()
                .filter(|w| w.len() >= 3 && !crate::words::is_function_word(w))
                .cloned(),
        );
        for text in searched.collect::<Vec<_>>() {
            for candidate in ctx.kg.search_entities(&text, ctx.params.vlimit).await? {
                if others.iter().all(|o| o.iri != candidate.iri) {
                    others.push(candidate);
                }
            }
        }
        // A set named by a common noun, as the question writes it ("currency symbol", not the
        // block "Currency Symbols", a name).
        others.retain(|c| {
            c.iri != exact
                && normalize_tokens(&c.label) != same
                && names_a_kind(&c.label)
                && fits(&link.mention, &c.label)
                && !predicates.contains(&c.iri)
        });
        others.truncate(CANDIDATES);
        let mut sets = Vec::new();
        for candidate in others {
            if pointed_to(ctx, &candidate.iri).await? {
                sets.push(candidate);
            }
        }
        if sets.is_empty() {
            continue;
        }
        let labels: Vec<String> = sets.iter().map(|c| c.label.clone()).collect();
        let (scored, clear) = closest_in_meaning(ctx, &link.mention, &labels, SIMILARITY, MARGIN).await?;
        let (best, i) = scored[0];
        tracing::debug!(mention = %link.mention, best = %sets[i].label, similarity = best, clear, "the asked noun as a set");
        if !clear {
            continue;
        }
        link.homonyms.retain(|h| *h != sets[i].iri);
        link.homonyms.insert(0, exact);
        link.iri = Some(sets[i].iri.clone());
        link.label = Some(sets[i].label.clone());
        link.method = LinkMethod::AskedSet;
        link.top_candidates = scored
            .iter()
            .take(3)
            .map(|&(s, j)| format!("{} ({s:.2})", sets[j].label))
            .collect();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_asked_noun_follows_the_question_word() {
        let q = "Which currency sign was introduced in Unicode 2.0?";
        assert!(is_asked_noun(q, "currency sign"));
        assert!(!is_asked_noun(q, "Unicode 2.0"));
        assert!(is_asked_noun(
            "And how many currency signs are there?",
            "currency signs"
        ));
        // The whole question is no asked noun, nor a name after "is".
        assert!(!is_asked_noun("Which currency sign", "currency sign"));
        assert!(!is_asked_noun("What is the currency sign?", "currency sign"));
    }

    #[test]
    fn a_common_noun_has_no_capital_or_digit() {
        assert!(written_as_common_noun("currency sign"));
        assert!(written_as_common_noun("architecture-independent"));
        assert!(!written_as_common_noun("Currency sign"));
        assert!(!written_as_common_noun("Unicode 2.0"));
        assert!(!written_as_common_noun("2000"));
        assert!(names_a_kind("currency symbol"));
        assert!(names_a_kind("Currency symbol"));
        assert!(!names_a_kind("Currency Symbols"));
        assert!(!names_a_kind("Unicode 2.0"));
    }
}
