//! The question's form, read from its own words before any model is asked: a list, a yes/no
//! (ASK), a count, or a superlative (ORDER BY an attribute, LIMIT 1), and what kind of value the
//! answer should be (an entity, a date or year, a number). A 0.5 B model writes `type: list` for
//! almost everything; English marks these forms with a handful of words, so the words decide and
//! the model's QIR is only consulted when they say nothing.
//!
//! Also the question's words as the path ranking reads them: normalised tokens with their
//! position and whether a possessive `'s` follows ("X's spouse's nationality").

use crate::qir::{Order, QuestionKind};
use chatty_kg_graph::text::normalize_tokens;
use serde::{Deserialize, Serialize};

/// One normalised word of the question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Lower-case ASCII (`normalize_tokens`).
    pub text: String,
    /// Written with a capital letter (and not the question's first word).
    pub capitalized: bool,
    /// A possessive `'s` follows it.
    pub possessive: bool,
}

/// The question as words.
pub fn words(question: &str) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    for raw in question.split_whitespace() {
        let raw = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}');
        let (body, possessive) = match raw
            .strip_suffix("'s")
            .or_else(|| raw.strip_suffix("\u{2019}s"))
            .or_else(|| raw.strip_suffix("s'"))
        {
            Some(body) if raw.ends_with("s'") => (format!("{body}s"), true),
            Some(body) => (body.to_owned(), true),
            None => (raw.to_owned(), false),
        };
        if body.is_empty() {
            // A detached "'s" ("X 's couple").
            if possessive && let Some(last) = out.last_mut() {
                last.possessive = true;
            }
            continue;
        }
        let capitalized = !out.is_empty() && body.chars().next().is_some_and(char::is_uppercase);
        let tokens = normalize_tokens(&body);
        let n = tokens.len();
        for (i, text) in tokens.into_iter().enumerate() {
            out.push(Word {
                text,
                capitalized,
                possessive: possessive && i + 1 == n,
            });
        }
    }
    out
}

/// What the answer should be, judged from the question's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Expectation {
    /// Nothing in the words says.
    #[default]
    Any,
    /// "who", "whom": a vertex, not a literal.
    Entity,
    /// "when", "what year", "which date": a date or year literal.
    Temporal,
    /// "how many", "how much": a count over a path, or a number stored in the graph.
    Number,
}

/// The form of a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionForm {
    pub kind: QuestionKind,
    /// Superlatives: the order of the attribute, and its words ("populous" of "most populous").
    pub order: Option<Order>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub superlative_words: Vec<String>,
    pub expects: Expectation,
    /// How the form was decided.
    pub decided_by: FormSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FormSource {
    /// The question's own words.
    Words,
    /// Nothing in the words decided; the QIR's type was kept.
    Qir,
}

/// Auxiliary verbs that open a yes/no question.
const YES_NO_OPENERS: &[&str] = &[
    "is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had", "can", "could", "will", "would",
    "should", "shall", "may", "might", "isn", "aren", "wasn", "weren", "doesn", "didn", "hasn", "haven",
];

/// Superlatives and the order they ask for. "most"/"least" take their attribute from the next word.
const SUPERLATIVES: &[(&str, Order)] = &[
    ("most", Order::Desc),
    ("least", Order::Asc),
    ("highest", Order::Desc),
    ("lowest", Order::Asc),
    ("largest", Order::Desc),
    ("smallest", Order::Asc),
    ("biggest", Order::Desc),
    ("greatest", Order::Desc),
    ("latest", Order::Desc),
    ("newest", Order::Desc),
    ("earliest", Order::Asc),
    ("oldest", Order::Asc),
    ("youngest", Order::Desc),
    ("longest", Order::Desc),
    ("shortest", Order::Asc),
    ("tallest", Order::Desc),
    ("fewest", Order::Asc),
    ("maximum", Order::Desc),
    ("minimum", Order::Asc),
    ("first", Order::Asc),
    ("last", Order::Desc),
];

impl QuestionForm {
    /// The form of `question`; `qir_kind` (the model's guess) only counts when the words are
    /// silent (no question word, no auxiliary, no "how many", no superlative).
    pub fn detect(question: &str, qir_kind: Option<QuestionKind>) -> Self {
        let words = words(question);
        let text: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let has_pair = |a: &str, b: &str| text.windows(2).any(|w| w[0] == a && w[1] == b);
        let opener = text.first().copied().unwrap_or("");
        // "the number of X" counts; "the phone number of X" does not.
        let counting = has_pair("how", "many")
            || has_pair("how", "much")
            || text.windows(3).any(|w| w == ["the", "number", "of"])
            || text.starts_with(&["number", "of"]);
        let yes_no = YES_NO_OPENERS.contains(&opener);
        let mut order = None;
        let mut superlative_words = Vec::new();
        for (i, word) in text.iter().enumerate() {
            if let Some((_, o)) = SUPERLATIVES.iter().find(|(s, _)| s == word) {
                // "at least", "at first", "at last", "first name" are not superlatives of an
                // attribute.
                if (i > 0 && text[i - 1] == "at") || text.get(i + 1) == Some(&"name") {
                    continue;
                }
                order = Some(*o);
                superlative_words.push((*word).to_owned());
                if matches!(*word, "most" | "least")
                    && let Some(next) = text.get(i + 1)
                {
                    superlative_words.push((*next).to_owned());
                }
                break;
            }
        }
        let temporal = text.contains(&"when")
            || ["year", "years", "date", "day"]
                .iter()
                .any(|n| has_pair("what", n) || has_pair("which", n));
        let expects = if counting {
            Expectation::Number
        } else if temporal {
            Expectation::Temporal
        } else if matches!(opener, "who" | "whom") || text.iter().take(3).any(|w| *w == "who" || *w == "whom") {
            Expectation::Entity
        } else {
            Expectation::Any
        };
        let (kind, decided_by) = if yes_no {
            (QuestionKind::Boolean, FormSource::Words)
        } else if counting {
            (QuestionKind::Count, FormSource::Words)
        } else if order.is_some() || expects != Expectation::Any || is_wh_question(&text) {
            (QuestionKind::List, FormSource::Words)
        } else {
            match qir_kind {
                Some(kind) => (kind, FormSource::Qir),
                None => (QuestionKind::List, FormSource::Words),
            }
        };
        Self {
            kind,
            order: if kind == QuestionKind::List { order } else { None },
            superlative_words: if kind == QuestionKind::List {
                superlative_words
            } else {
                Vec::new()
            },
            expects,
            decided_by,
        }
    }
}

/// A question word or an imperative opens it: it asks for values, not for yes or no.
fn is_wh_question(text: &[&str]) -> bool {
    const WH: &[&str] = &[
        "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "list", "name", "give", "tell", "show",
        "find",
    ];
    text.iter().take(4).any(|w| WH.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_possessives_and_capitals() {
        let w = words("which nationality is frederica of mecklenburg-strelitz 's couple ?");
        let texts: Vec<&str> = w.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "which",
                "nationality",
                "is",
                "frederica",
                "of",
                "mecklenburg",
                "strelitz",
                "couple"
            ]
        );
        assert!(w[6].possessive && !w[7].possessive);
        let w = words("Who directed Ana's films?");
        assert!(w[2].capitalized && w[2].possessive && !w[0].capitalized);
        assert_eq!(w[2].text, "ana");
    }

    #[test]
    fn forms_come_from_the_words() {
        let f = |q: &str| QuestionForm::detect(q, Some(QuestionKind::List));
        assert_eq!(f("Is Lake Tana in Ethiopia?").kind, QuestionKind::Boolean);
        assert_eq!(f("Did Ada Lovelace write the notes?").kind, QuestionKind::Boolean);
        let count = f("How many moons does Jupiter have?");
        assert_eq!((count.kind, count.expects), (QuestionKind::Count, Expectation::Number));
        let most = f("Which is the most populous city of Peru?");
        assert_eq!((most.kind, most.order), (QuestionKind::List, Some(Order::Desc)));
        assert_eq!(most.superlative_words, ["most", "populous"]);
        assert_eq!(f("What is the oldest bridge in Rome?").order, Some(Order::Asc));
        assert_eq!(f("when was the bridge built").expects, Expectation::Temporal);
        assert_eq!(
            f("the films were released in which years").expects,
            Expectation::Temporal
        );
        assert_eq!(f("who wrote the notes").expects, Expectation::Entity);
        assert_eq!(f("at least one river?").order, None);
        assert_eq!(f("what is the first name of Ada Lovelace").order, None);
        assert_eq!(f("What is the phone number of the embassy?").kind, QuestionKind::List);
        assert_eq!(f("What is the number of moons of Mars?").kind, QuestionKind::Count);
        // Silent words keep the model's yes/no or count.
        let silent = QuestionForm::detect("Ada Lovelace and Babbage", Some(QuestionKind::Boolean));
        assert_eq!(
            (silent.kind, silent.decided_by),
            (QuestionKind::Boolean, FormSource::Qir)
        );
        // A wh-question is a list whatever the model said.
        let listed = QuestionForm::detect("which rivers cross Peru", Some(QuestionKind::Boolean));
        assert_eq!(
            (listed.kind, listed.decided_by),
            (QuestionKind::List, FormSource::Words)
        );
    }
}
