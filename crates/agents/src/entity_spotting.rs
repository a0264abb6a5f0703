//! The QIR agent's last resort when its model gives no valid QIR in θ attempts (small models copy
//! names from the few-shot examples): find the longest span of the question that is exactly the
//! label of an entity in the graph, and take the remaining content words as the relation phrase.
//! It yields a one-triple QIR `⟨entity, phrase, ?answer⟩`; relation linking orients the edge from
//! the graph, so the order does not matter. Nothing is invented: the entity is in the graph and
//! the phrase is the question's own words.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::qir::{Qir, QirSource, QirTerm, QirTriple, QuestionKind};
use chatty_kg_graph::text::{EXACT_MATCH_SCORE, normalize_tokens};

/// Longest span tried, in words.
const MAX_SPAN: usize = 8;
/// Label searches at most (each is a query on a remote endpoint).
const MAX_SEARCHES: usize = 60;

/// Words that are never a whole entity nor part of the relation phrase.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
    "were", "be", "been", "do", "does", "did", "can", "could", "you", "me", "i", "give", "tell", "list", "name", "of",
    "in", "on", "for", "to", "by", "with", "and", "or", "that", "this", "it", "its", "as", "at", "from", "some", "any",
    "few", "please", "many", "much", "has", "have", "had",
];

pub(crate) fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// Whether some content word of `phrase` is written in `question` (sharing its first four
/// letters with a word there: "released" for "release year", "starred" for "star").
pub(crate) fn phrase_in_question(phrase: &str, question: &str) -> bool {
    let question = normalize_tokens(question);
    normalize_tokens(phrase)
        .iter()
        .filter(|w| !is_function_word(w))
        .any(|w| {
            let stem: String = w.chars().take(4).collect();
            question.iter().any(|q| q.starts_with(&stem) || (q.len() < 4 && q == w))
        })
}

/// A QIR from the question alone, or `None` when no span of it is an entity's exact label.
pub(crate) async fn spot(ctx: &AgentContext, question: &str) -> Result<Option<Qir>, AgentError> {
    // Words as written (for the entity's mention) and normalised (for deciding).
    let words: Vec<&str> = question
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    let lower: Vec<String> = words.iter().map(|w| normalize_tokens(w).join(" ")).collect();
    let mut searches = 0;
    for len in (1..=words.len().min(MAX_SPAN)).rev() {
        for start in 0..=words.len() - len {
            let span = &lower[start..start + len];
            // A span made only of function words ("the", "who") is never an entity.
            if span.iter().all(|w| is_function_word(w)) || (len == 1 && span[0].len() < 3) {
                continue;
            }
            if searches == MAX_SEARCHES {
                return Ok(None);
            }
            searches += 1;
            let mention = words[start..start + len].join(" ");
            let found = ctx.kg.search_entities(&mention, 1).await?;
            if !found.first().is_some_and(|c| c.score >= EXACT_MATCH_SCORE) {
                continue;
            }
            let phrase: Vec<&str> = words
                .iter()
                .zip(&lower)
                .enumerate()
                .filter(|(i, (_, l))| (*i < start || *i >= start + len) && !is_function_word(l))
                .map(|(_, (w, _))| *w)
                .collect();
            let relation = if phrase.is_empty() {
                "related to".to_owned()
            } else {
                phrase.join(" ")
            };
            let kind = if lower
                .windows(2)
                .any(|w| w[0] == "how" && (w[1] == "many" || w[1] == "much"))
            {
                QuestionKind::Count
            } else {
                QuestionKind::List
            };
            return Ok(Some(Qir {
                entities: vec![mention.clone()],
                unknowns: vec!["answer".into()],
                relations: vec![relation.clone()],
                triples: vec![QirTriple {
                    subject: QirTerm::Entity(mention),
                    relation,
                    object: QirTerm::Variable("answer".into()),
                }],
                kind,
                order: None,
                source: QirSource::EntitySpotting,
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_written_in_the_question() {
        assert!(phrase_in_question("release year", "When was Big released?"));
        assert!(phrase_in_question("starred actors", "Did Tom Cruise star in Big?"));
        assert!(phrase_in_question("directed by", "who directed Alien"));
        assert!(!phrase_in_question("written by", "what words describe Up"));
        assert!(
            !phrase_in_question("written by", "who wrote Up"),
            "no stemmer: the model is asked"
        );
        assert!(
            !phrase_in_question("by", "directed by whom"),
            "function words do not count"
        );
    }
}
