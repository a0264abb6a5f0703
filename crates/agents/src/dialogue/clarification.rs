//! Clarifying questions: when a mention names several vertices of one label, the question fits
//! more than one of them, and neither the question, the dialogue nor the graph's own weight
//! decides, the reply asks which one is meant, naming each with what tells it apart (its class,
//! a fact the others do not share). The next turn's answer ("the second", "the one from 1996",
//! "2") picks one, and the waiting question runs again with that vertex.
//!
//! The graph queries are the clarify agent's (`agents/clarify.rs`); this module holds the
//! values and the two decisions that need no graph: which facts tell the options apart, and
//! which option a reply chooses.

use crate::words::is_function_word;
use chatty_kg_graph::text::normalize_tokens;
use serde::{Deserialize, Serialize};

/// A question waiting for the user to say which vertex a mention means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clarification {
    /// The mention, as the question wrote it.
    pub mention: String,
    /// The label the options share.
    pub label: String,
    /// The standalone question that runs again once the user chooses.
    pub question: String,
    pub options: Vec<ClarifyOption>,
}

/// One vertex the mention may mean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClarifyOption {
    pub iri: String,
    pub label: String,
    /// Its classes that not every option has (or all of them when they are the same).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// Facts that tell it apart from the other options, the most telling first (the first
    /// [`SHOWN_FACTS`] are in the description; a reply may name any of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<Fact>,
    /// The option in one line: "Film; release year: 1996".
    pub description: String,
}

/// One (predicate, value) of a vertex, both named.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fact {
    pub predicate: String,
    pub value: String,
}

/// A vertex the user chose when asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clarified {
    pub mention: String,
    pub iri: String,
    pub label: String,
    /// Which option (from 0) of the clarifying question.
    pub option: usize,
}

/// What is known of one option before choosing what to show.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    pub iri: String,
    pub label: String,
    pub kinds: Vec<String>,
    pub facts: Vec<Fact>,
}

/// Facts shown per option at most.
pub const SHOWN_FACTS: usize = 2;
/// Facts kept per option for the reply to name.
const KEPT_FACTS: usize = 8;
/// A value longer than this says too much to be a distinguishing mark.
const MAX_VALUE_CHARS: usize = 60;

/// Chooses what tells the options apart and writes their descriptions. Classes are shown when
/// they differ (all of them when every option has the same ones). Facts: first the predicates
/// every option has with values that differ (a release year, a country), then facts only this
/// option has; short values first, at most [`SHOWN_FACTS`].
pub fn describe(profiles: &[Profile]) -> Vec<ClarifyOption> {
    let shared_by_all = |test: &dyn Fn(&Profile) -> bool| profiles.iter().all(test);
    let same_kinds = profiles.windows(2).all(|w| {
        let mut a = w[0].kinds.clone();
        let mut b = w[1].kinds.clone();
        a.sort();
        b.sort();
        a == b
    });
    // Predicates every option has, whose values are not the same for all.
    let mut telling: Vec<&str> = Vec::new();
    if let Some(first) = profiles.first() {
        for fact in &first.facts {
            let p = fact.predicate.as_str();
            if telling.contains(&p) || !shared_by_all(&|o: &Profile| o.facts.iter().any(|f| f.predicate == p)) {
                continue;
            }
            let first_values = values_of(first, p);
            if profiles.iter().any(|o| values_of(o, p) != first_values) {
                telling.push(p);
            }
        }
    }
    profiles
        .iter()
        .map(|o| {
            let kinds: Vec<String> = if same_kinds {
                o.kinds.clone()
            } else {
                o.kinds
                    .iter()
                    .filter(|k| !shared_by_all(&|other: &Profile| other.kinds.contains(k)))
                    .cloned()
                    .collect()
            };
            let usable = |f: &&Fact| f.value.chars().count() <= MAX_VALUE_CHARS && !f.value.trim().is_empty();
            let mut facts: Vec<Fact> = Vec::new();
            let mut by_predicate: Vec<&Fact> = o
                .facts
                .iter()
                .filter(usable)
                .filter(|f| telling.contains(&f.predicate.as_str()))
                .collect();
            by_predicate.sort_by_key(|f| (telling.iter().position(|p| *p == f.predicate), f.value.len()));
            let mut own: Vec<&Fact> = o
                .facts
                .iter()
                .filter(usable)
                .filter(|f| {
                    !profiles
                        .iter()
                        .any(|other| other.iri != o.iri && other.facts.contains(f))
                })
                .collect();
            own.sort_by_key(|f| f.value.len());
            // One value per predicate among the shown ones, then the rest.
            let mut rest: Vec<Fact> = Vec::new();
            for fact in by_predicate.into_iter().chain(own) {
                if facts.len() < SHOWN_FACTS && !facts.iter().any(|f| f.predicate == fact.predicate) {
                    facts.push(fact.clone());
                } else if !rest.contains(fact) && !facts.contains(fact) {
                    rest.push(fact.clone());
                }
            }
            let shown = facts.len();
            facts.extend(rest);
            facts.truncate(KEPT_FACTS);
            let mut parts: Vec<String> = Vec::new();
            if !kinds.is_empty() {
                parts.push(kinds.join(", "));
            }
            parts.extend(
                facts
                    .iter()
                    .take(shown)
                    .map(|f| format!("{}: {}", f.predicate, f.value)),
            );
            let description = if parts.is_empty() {
                o.iri.clone()
            } else {
                parts.join("; ")
            };
            ClarifyOption {
                iri: o.iri.clone(),
                label: o.label.clone(),
                kinds,
                facts,
                description,
            }
        })
        .collect()
}

/// The values of predicate `p` of an option, sorted.
fn values_of<'a>(o: &'a Profile, p: &str) -> Vec<&'a str> {
    let mut v: Vec<&str> = o
        .facts
        .iter()
        .filter(|f| f.predicate == p)
        .map(|f| f.value.as_str())
        .collect();
    v.sort_unstable();
    v
}

impl Clarification {
    /// The clarifying question the user reads.
    pub fn text(&self) -> String {
        let mut text = format!(
            "\u{201c}{}\u{201d} can mean {} things in the knowledge graph:",
            self.mention,
            self.options.len()
        );
        for (i, option) in self.options.iter().enumerate() {
            text.push_str(&format!("\n{}. {} ({})", i + 1, option.label, option.description));
        }
        text.push_str("\nWhich one do you mean?");
        text
    }

    /// The option `reply` chooses, if it clearly chooses one: a number or an ordinal ("2", "the
    /// second", "the last one"), or words that only one option's description has ("the 1996
    /// one", "the album"). A reply that reads as a new question, or that fits several options or
    /// none, chooses nothing (and is answered as a question of its own).
    pub fn choice(&self, reply: &str) -> Option<usize> {
        let words = normalize_tokens(reply);
        if words.is_empty() || words.len() > 12 {
            return None;
        }
        let n = self.options.len();
        let ordinal = |w: &str| -> Option<usize> {
            let i = match w {
                "1" | "first" | "1st" => 0,
                "2" | "second" | "2nd" | "two" => 1,
                "3" | "third" | "3rd" | "three" => 2,
                "4" | "fourth" | "4th" | "four" => 3,
                "5" | "fifth" | "5th" | "five" => 4,
                "last" | "latter" => n.checked_sub(1)?,
                "former" => 0,
                _ => return None,
            };
            (i < n).then_some(i)
        };
        // "2", "2. Crash (…)": a leading number is the option's.
        if let Some(i) = words.first().and_then(|w| w.parse::<usize>().ok())
            && (1..=n).contains(&i)
        {
            return Some(i - 1);
        }
        let question_like = reply.trim_end().ends_with('?')
            || words.first().is_some_and(|w| {
                [
                    "who", "what", "when", "where", "why", "how", "did", "does", "do", "is", "are", "was", "were",
                ]
                .contains(&w.as_str())
            });
        // Words of the shared label (and function words) say nothing about which one.
        let label = normalize_tokens(&self.label);
        let telling: Vec<&String> = words
            .iter()
            .filter(|w| !label.contains(w) && !is_function_word(w) && w.as_str() != "one" && w.as_str() != "mean")
            .collect();
        let ordinals: Vec<usize> = words.iter().filter_map(|w| ordinal(w)).collect();
        // "the first (one)", "the second": only ordinal and function words.
        if !question_like
            && ordinals.len() == 1
            && telling
                .iter()
                .all(|w| ordinal(w).is_some() || ["please", "ok", "yes"].contains(&w.as_str()))
        {
            return ordinals.first().copied();
        }
        if telling.is_empty() {
            return None;
        }
        let scores: Vec<usize> = self
            .options
            .iter()
            .map(|o| {
                let facts: Vec<&str> = o.facts.iter().map(|f| f.value.as_str()).collect();
                let described =
                    normalize_tokens(&format!("{} {} {}", o.description, o.kinds.join(" "), facts.join(" ")));
                telling.iter().filter(|w| described.contains(w)).count()
            })
            .collect();
        let best = *scores.iter().max()?;
        // A new question ("Who directed it?") may share a word by chance: it must be mostly
        // about the options to count as an answer.
        if best == 0 || scores.iter().filter(|&&s| s == best).count() > 1 || (question_like && best * 2 < telling.len())
        {
            return None;
        }
        scores.iter().position(|&s| s == best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(p: &str, v: &str) -> Fact {
        Fact {
            predicate: p.into(),
            value: v.into(),
        }
    }

    fn crash() -> Vec<Profile> {
        vec![
            Profile {
                iri: "http://e/Crash_2004".into(),
                label: "Crash".into(),
                kinds: vec!["Film".into()],
                facts: vec![
                    fact("release year", "2004"),
                    fact("language", "English"),
                    fact("starring", "Sandra Bullock"),
                    fact("country", "United States"),
                ],
            },
            Profile {
                iri: "http://e/Crash_1996".into(),
                label: "Crash".into(),
                kinds: vec!["Film".into()],
                facts: vec![
                    fact("release year", "1996"),
                    fact("language", "English"),
                    fact("starring", "James Spader"),
                ],
            },
            Profile {
                iri: "http://e/Crash_album".into(),
                label: "Crash".into(),
                kinds: vec!["Album".into()],
                facts: vec![fact("release year", "1996"), fact("artist", "Dave Matthews Band")],
            },
        ]
    }

    #[test]
    fn options_are_told_apart_by_what_differs() {
        let options = describe(&crash());
        assert_eq!(options[0].kinds, ["Film"]);
        assert_eq!(
            options[0].description,
            "Film; release year: 2004; country: United States"
        );
        // Telling facts beyond the shown ones are kept for the reply to name.
        assert!(options[0].facts.contains(&fact("starring", "Sandra Bullock")));
        assert_eq!(
            options[2].description,
            "Album; release year: 1996; artist: Dave Matthews Band"
        );
        // The language every option shares (or that two share) tells nothing.
        assert!(
            options
                .iter()
                .all(|o| o.facts.iter().all(|f| f.predicate != "language"))
        );

        // Same classes: they are still named, and the facts tell the options apart.
        let films = describe(&crash()[..2]);
        assert_eq!(films[1].description, "Film; release year: 1996; starring: James Spader");
    }

    fn clarification() -> Clarification {
        Clarification {
            mention: "Crash".into(),
            label: "Crash".into(),
            question: "Who directed Crash?".into(),
            options: describe(&crash()),
        }
    }

    #[test]
    fn a_reply_chooses_by_number_ordinal_or_telling_words() {
        let c = clarification();
        assert!(
            c.text().contains("\n2. Crash (Film; release year: 1996"),
            "{}",
            c.text()
        );
        for (reply, expected) in [
            ("2", Some(1)),
            ("the second", Some(1)),
            ("The first one, please", Some(0)),
            ("the last", Some(2)),
            (
                "3. Crash (Album; release year: 1996; artist: Dave Matthews Band)",
                Some(2),
            ),
            ("the album", Some(2)),
            ("the one from the United States", Some(0)),
            ("the one with Sandra Bullock", Some(0)), // a fact not shown
            ("the Spader film", Some(1)),
            ("the one with Don Cheadle", None), // not in the profile
            ("the one in English", None),       // all three
            ("the 1996 one", None),             // the 1996 film and the 1996 album
            ("the film", None),                 // two films
            ("Crash", None),
            ("7", None),
            ("Who directed Titanic?", None),
            ("When was it released?", None),
            (
                "What else did Sandra Bullock star in and who produced the movie with her?",
                None,
            ),
        ] {
            assert_eq!(c.choice(reply), expected, "{reply}");
        }
    }
}
