//! The question's form, read from its own words before any model is asked: a list, a yes/no
//! (ASK), a count, or a superlative (ORDER BY an attribute, LIMIT 1), and what kind of value the
//! answer should be (an entity, a date or year, a number). A 0.5 B model writes `type: list` for
//! almost everything; English marks these forms with a handful of words, so the words decide and
//! the model's QIR is only consulted when they say nothing.
//!
//! Also the question's words as the path ranking reads them: normalised tokens with their
//! position and whether a possessive `'s` follows ("X's spouse's nationality").

use crate::context::AgentContext;
use crate::qir::{Order, QuestionKind};
use crate::words::{
    CARDINALS, COPULAS, EXISTENTIAL, LINKING, MONTHS, SUPERLATIVE_ORDINALS, VALUE_OPENERS, WH_WORDS, Word,
    YES_NO_OPENERS, words,
};
use chatty_kg_graph::text::normalize_tokens;
use serde::{Deserialize, Serialize};

/// The question's content words that none of `said` holds (its mentions, the class it names),
/// numbers aside: what is left to name an attribute ("which hamradio package has the biggest
/// *download*").
pub fn words_left(question: &str, said: &[&str]) -> Vec<String> {
    let said: Vec<String> = said.iter().flat_map(|s| normalize_tokens(s)).collect();
    normalize_tokens(question)
        .into_iter()
        .filter(|w| !crate::words::is_function_word(w) && !said.contains(w) && number(w).is_none())
        .collect()
}

/// Whether the question says what something was (a state that lasts: "which version *was
/// current* in 2020", "who *was* the mayor in 2010", "which clubs *was* X a member of") rather
/// than what happened ("which versions *were uploaded* in 2021", "when did X *receive* …"): its
/// verb is a form of "to be" whose next word is no past participle ("-ed", "-en") and no
/// "there".
pub fn says_a_state(question: &str) -> bool {
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let participle = |w: &str| w.len() > 4 && (w.ends_with("ed") || w.ends_with("en"));
    let mut copula = false;
    for (i, w) in words.iter().enumerate() {
        if !COPULAS.contains(&w.as_str()) {
            continue;
        }
        copula = true;
        // The first word after it that is no adverb of time ("still", "already") decides.
        let next = words[i + 1..]
            .iter()
            .find(|n| !matches!(n.as_str(), "still" | "already" | "ever" | "once" | "then" | "not"));
        if next.is_some_and(|n| participle(n) || EXISTENTIAL.contains(&n.as_str())) {
            return false;
        }
    }
    copula
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
    /// "where": a place, a vertex or an address as written, never a date or a number.
    Place,
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
    /// A superlative's rank beyond the first ("the *second* highest": 1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: usize,
    /// How many of the ordered answers a superlative asks for: "the *three* largest" 3, "the
    /// largest" 1; 0 for all of them, in order ("from oldest to newest", "smallest first" with
    /// no number).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub take: usize,
    /// A value the answers' attribute is compared with ("founded *in 1950*", "*more than 3*
    /// entrances", "established *earlier than 1400*").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<ValueConstraint>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

/// How many answers a superlative at `text[i]` asks for: a cardinal number ("three", "3") just
/// before it ("the *three* largest", "Glaser's *three* biggest") or after "the" or "top" a few
/// words before it ("the *three* characters … with the highest values"); 0 (all, in order)
/// when the superlative is only a sort order ("from *oldest* to newest", "*smallest* first")
/// and no number is written; else 1.
fn superlative_take(text: &[&str], i: usize) -> usize {
    let cardinal = |w: &str| -> Option<usize> {
        CARDINALS
            .iter()
            .position(|c| *c == w)
            .map(|p| [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 20][p])
            .or_else(|| w.parse::<usize>().ok().filter(|n| (2..=100).contains(n)))
    };
    // "the most recent": the number is before "most".
    let from = i;
    // Not a value the question compares with ("less than 0.15? Smallest first" reads "0 15").
    let compared = |p: usize| {
        p > 0
            && (text[p - 1].chars().all(|c| c.is_ascii_digit())
                || matches!(
                    text[p - 1],
                    "than" | "over" | "under" | "above" | "below" | "after" | "before" | "since" | "in" | "from" | "to"
                ))
    };
    if let Some(p) = from.checked_sub(1)
        && let Some(n) = cardinal(text[p])
        && !compared(p)
    {
        return n;
    }
    for p in (from.saturating_sub(8)..from).rev() {
        if let Some(n) = cardinal(text[p])
            && p > 0
            && matches!(text[p - 1], "the" | "top" | "which" | "what")
        {
            return n;
        }
    }
    let word = text[i];
    let next = text.get(i + 1).copied();
    // "oldest to newest", "smallest first", "newest first please".
    let sort_only =
        (i > 0 && text[i - 1] == "from" && next == Some("to")) || (next == Some("first") && word != "first");
    if sort_only { 0 } else { 1 }
}

/// How an attribute compares with the question's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    Equal,
    Greater,
    GreaterOrEqual,
    Less,
    LessOrEqual,
}

/// A number or year written in the question that the answers' attribute must match or pass:
/// "which organizations were founded in 1950" (the year of a date equals 1950), "which caves
/// have more than 3 entrances", "libraries established earlier than 1400". The attribute is not
/// named by a word list: `attribute_words` are the question's words beside the value, compared
/// with the graph's own numeric and date predicates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueConstraint {
    pub comparison: Comparison,
    pub value: f64,
    /// A year: compared with the year of a date (or with a year or number as stored).
    pub year: bool,
    /// The words that name the attribute ("founded", "entrances", "higher").
    pub attribute_words: Vec<String>,
    /// The words of the comparison as written ("more than 3", "in 1950").
    pub phrase: String,
    /// A day the question writes ("on 1 January 2021", "at the start of 2024"), as
    /// `YYYY-MM-DD`: a date is compared with it by its first ten characters, where a year alone
    /// compares years (`value` is the day's year).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// A second bound on the same attribute, joined by "and" or "but" ("more than 0 *but less
    /// than 0.15*", "after 1990 *and before 2000*").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub and: Option<Bound>,
}

/// One more comparison of a [`ValueConstraint`]'s attribute with a number or year.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    pub comparison: Comparison,
    pub value: f64,
}

/// The day written at `tokens[at..]`, as `YYYY-MM-DD`, with the number of tokens it takes: an ISO
/// date ("2021-01-01"), a day and a month ("1 January 2021", "January 1 2021", "January 1st
/// 2021"), or a year's first or last day ("the start / beginning / end of 2024").
fn written_date(tokens: &[String], at: usize) -> Option<(String, usize)> {
    let t = |i: usize| tokens.get(i).map(String::as_str).unwrap_or("");
    let year = |w: &str| is_year_value(w).then(|| w.to_owned());
    let month = |w: &str| MONTHS.iter().position(|m| *m == w).map(|i| i + 1);
    let day = |w: &str| {
        let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let rest = &w[digits.len()..];
        let ordinal = rest.is_empty() || matches!(rest, "st" | "nd" | "rd" | "th");
        digits.parse::<u32>().ok().filter(|d| ordinal && (1..=31).contains(d))
    };
    let iso = |y: String, m: usize, d: u32| format!("{y}-{m:02}-{d:02}");
    let w = t(at);
    let parts: Vec<&str> = w.split('-').collect();
    if parts.len() == 3
        && is_year_value(parts[0])
        && parts[1].len() == 2
        && parts[2].len() == 2
        && let (Ok(m), Ok(d)) = (parts[1].parse::<usize>(), parts[2].parse::<u32>())
        && (1..=12).contains(&m)
        && (1..=31).contains(&d)
    {
        return Some((iso(parts[0].to_owned(), m, d), 1));
    }
    if let (Some(d), Some(m), Some(y)) = (day(w), month(t(at + 1)), year(t(at + 2))) {
        return Some((iso(y, m, d), 3));
    }
    if let (Some(m), Some(d), Some(y)) = (month(w), day(t(at + 1)), year(t(at + 2))) {
        return Some((iso(y, m, d), 3));
    }
    if w == "the"
        && t(at + 2) == "of"
        && let Some(y) = year(t(at + 3))
    {
        return match t(at + 1) {
            "start" | "beginning" => Some((format!("{y}-01-01"), 4)),
            "end" => Some((format!("{y}-12-31"), 4)),
            _ => None,
        };
    }
    None
}

/// Comparatives that name their attribute themselves ("higher than 2", "taller than …").
const NAMED_COMPARATIVES: &[(&str, Comparison)] = &[
    ("larger", Comparison::Greater),
    ("bigger", Comparison::Greater),
    ("higher", Comparison::Greater),
    ("taller", Comparison::Greater),
    ("longer", Comparison::Greater),
    ("heavier", Comparison::Greater),
    ("wider", Comparison::Greater),
    ("deeper", Comparison::Greater),
    ("older", Comparison::Greater),
    ("smaller", Comparison::Less),
    ("lower", Comparison::Less),
    ("shorter", Comparison::Less),
    ("lighter", Comparison::Less),
    ("narrower", Comparison::Less),
    ("shallower", Comparison::Less),
    ("younger", Comparison::Less),
];

/// Comparatives that leave the attribute to the words around them ("more than 3 *entrances*").
const PLAIN_COMPARATIVES: &[(&str, Comparison)] = &[
    ("more", Comparison::Greater),
    ("greater", Comparison::Greater),
    ("less", Comparison::Less),
    ("fewer", Comparison::Less),
];

/// A number as written ("1950", "2.5", "1,000"), not a part of a name ("Apollo 14" is read by
/// the caller's position rules).
fn number(token: &str) -> Option<f64> {
    let t = token.replace(',', "");
    if t.is_empty() || !t.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    t.parse::<f64>().ok()
}

fn is_year_value(token: &str) -> bool {
    token.len() == 4 && token.chars().all(|c| c.is_ascii_digit())
}

/// The comparison written at `tokens[i]`: (comparison, index of the value, year only, the
/// comparison's own attribute word).
fn comparison_at(tokens: &[String], i: usize) -> Option<(Comparison, usize, bool, Option<&'static str>)> {
    let t = |i: usize| tokens.get(i).map(String::as_str).unwrap_or("");
    match t(i) {
        w if t(i + 1) == "than" => NAMED_COMPARATIVES
            .iter()
            .find(|(c, _)| *c == w)
            .map(|(c, cmp)| (*cmp, i + 2, false, Some(*c)))
            .or_else(|| {
                PLAIN_COMPARATIVES
                    .iter()
                    .find(|(c, _)| *c == w)
                    .map(|(_, cmp)| (*cmp, i + 2, false, None))
            })
            .or_else(|| match w {
                "earlier" => Some((Comparison::Less, i + 2, true, None)),
                "later" => Some((Comparison::Greater, i + 2, true, None)),
                _ => None,
            }),
        "at" if t(i + 1) == "least" => Some((Comparison::GreaterOrEqual, i + 2, false, None)),
        "at" if t(i + 1) == "most" => Some((Comparison::LessOrEqual, i + 2, false, None)),
        "over" | "above" | "exceeding" => Some((Comparison::Greater, i + 1, false, None)),
        "under" | "below" => Some((Comparison::Less, i + 1, false, None)),
        "before" => Some((Comparison::Less, i + 1, true, None)),
        "prior" if t(i + 1) == "to" => Some((Comparison::Less, i + 2, true, None)),
        "after" => Some((Comparison::Greater, i + 1, true, None)),
        "since" => Some((Comparison::GreaterOrEqual, i + 1, true, None)),
        "in" | "during" => Some((Comparison::Equal, i + 1, true, None)),
        // A day: "on 1 January 2021", "at the start of 2024".
        "on" | "at" if written_date(tokens, i + 1).is_some() => Some((Comparison::Equal, i + 1, true, None)),
        "exactly" | "equals" => Some((Comparison::Equal, i + 1, false, None)),
        "equal" if t(i + 1) == "to" => Some((Comparison::Equal, i + 2, false, None)),
        _ => None,
    }
}

/// The question's value constraint, if it writes one (see [`ValueConstraint`]).
pub fn value_constraint(question: &str) -> Option<ValueConstraint> {
    let written: Vec<&str> = question
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    let tokens: Vec<String> = written.iter().map(|w| w.to_lowercase()).collect();
    let t = |i: usize| tokens.get(i).map(String::as_str).unwrap_or("");
    for i in 0..tokens.len() {
        let found = comparison_at(&tokens, i);
        let Some((comparison, at, year_only, own)) = found else {
            continue;
        };
        // A day written there, else a number.
        let date = year_only.then(|| written_date(&tokens, at)).flatten();
        let (value, last) = match &date {
            Some((day, len)) => (day[..4].parse::<f64>().ok(), at + len - 1),
            None => (number(t(at)), at),
        };
        let Some(value) = value else {
            continue;
        };
        // The noun after the value ("more than 3 *entrances*", "5888 *bytes*"): a number
        // followed by one is no year ("more than 5000 kB").
        let after = t(last + 1);
        let noun_after = !after.is_empty()
            && !LINKING.contains(&after)
            && !crate::words::is_function_word(after)
            && number(after).is_none();
        let year = date.is_some() || (is_year_value(t(at)) && (year_only || !noun_after));
        if year_only && !year {
            continue;
        }
        // "in 1950" only as a date: a bare number after "in" is rarely a value ("in 3 films").
        let mut attribute_words: Vec<String> = Vec::new();
        if let Some(word) = own {
            attribute_words.push(word.to_owned());
        }
        if noun_after && !year {
            attribute_words.push(after.to_owned());
        }
        // Else the content word before the comparison ("*founded* in 1950", "*established*
        // earlier than 1400"), auxiliaries skipped; an equality written as such ("download is
        // *exactly* 5888 bytes") names its attribute on both sides.
        let both_sides = comparison == Comparison::Equal && !year_only;
        let mut j = if attribute_words.is_empty() || both_sides { i } else { 0 };
        while j > 0 {
            j -= 1;
            let w = t(j);
            if LINKING.contains(&w) {
                continue;
            }
            if !crate::words::is_function_word(w) && number(w).is_none() {
                attribute_words.push(w.to_owned());
            }
            break;
        }
        if attribute_words.is_empty() {
            continue;
        }
        // "more than 0 but less than 0.15": a second bound on the same attribute.
        let mut end = last;
        let mut and = None;
        if date.is_none()
            && matches!(t(last + 1), "and" | "but")
            && let Some((second, at, _, _)) = comparison_at(&tokens, last + 2)
            && let Some(value) = number(t(at))
        {
            and = Some(Bound {
                comparison: second,
                value,
            });
            end = at;
        }
        let phrase = tokens[i..=end].join(" ");
        return Some(ValueConstraint {
            comparison,
            value,
            year,
            attribute_words,
            phrase,
            date: date.map(|(day, _)| day),
            and,
        });
    }
    named_value(&written, &tokens)
}

/// A number written right after the lower-case noun it is the value of ("characters with the
/// numeric *value 5*", "the *number 1000*"): an equality on the attribute those words name. A
/// number after a capitalised word is part of a name ("Apollo 14", "Unicode 6.0"), and one
/// followed by a capitalised word starts one.
fn named_value(written: &[&str], tokens: &[String]) -> Option<ValueConstraint> {
    let content =
        |w: &str| !w.is_empty() && !LINKING.contains(&w) && !crate::words::is_function_word(w) && number(w).is_none();
    let capitalised = |i: usize| {
        written
            .get(i)
            .is_some_and(|w| w.chars().next().is_some_and(char::is_uppercase))
    };
    for at in 1..tokens.len() {
        let Some(value) = number(&tokens[at]) else {
            continue;
        };
        let noun = &tokens[at - 1];
        if !content(noun) || capitalised(at - 1) || capitalised(at + 1) {
            continue;
        }
        let mut attribute_words = vec![noun.clone()];
        // One modifier before the noun ("the *numeric* value 5").
        if at >= 2 && content(&tokens[at - 2]) && !capitalised(at - 2) {
            attribute_words.insert(0, tokens[at - 2].clone());
        }
        return Some(ValueConstraint {
            comparison: Comparison::Equal,
            value,
            year: is_year_value(&tokens[at]),
            attribute_words,
            phrase: tokens[at - 1..=at].join(" "),
            date: None,
            and: None,
        });
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FormSource {
    /// The question's own words.
    Words,
    /// Nothing in the words decided; the QIR's type was kept.
    Qir,
}

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

/// Whether `word` is a superlative ("highest", "most").
pub fn is_superlative(word: &str) -> bool {
    SUPERLATIVES.iter().any(|(s, _)| *s == word)
}

/// Whether `words[i]` is one of the words that ask for a count ("*count* the …", "the *total
/// number* of …", "give me a *count* of …", "how many *times*"), which name no relation of the
/// graph.
pub fn counting_word(words: &[Word], i: usize) -> bool {
    let at = |k: usize| words.get(k).map(|w| w.text.as_str());
    match words[i].text.as_str() {
        "count" => i == 0 || at(i - 1) == Some("a"),
        "number" => at(i + 1) == Some("of") && (i == 0 || matches!(at(i - 1), Some("the" | "total"))),
        "total" => at(i + 1) == Some("number") && at(i + 2) == Some("of"),
        // "How many *times* has X been cast?": how often, no noun of the answers.
        "times" => i >= 2 && at(i - 1) == Some("many") && at(i - 2) == Some("how"),
        _ => false,
    }
}

impl QuestionForm {
    /// The form of `question`; `qir_kind` (the model's guess) only counts when the words are
    /// silent (no question word, no auxiliary, no "how many", no superlative).
    pub fn detect(question: &str, qir_kind: Option<QuestionKind>) -> Self {
        let words = words(question);
        let text: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let has_pair = |a: &str, b: &str| text.windows(2).any(|w| w[0] == a && w[1] == b);
        let opener = text.first().copied().unwrap_or("");
        // "the number of X" counts; "the phone number of X" does not. "Count the …", "give me
        // a count of …" ask for a count as a verb or a noun.
        let counting = has_pair("how", "many")
            || has_pair("how", "much")
            || has_pair("how", "often")
            || text
                .windows(3)
                .any(|w| matches!(w[0], "the" | "total") && w[1] == "number" && w[2] == "of")
            || text.starts_with(&["number", "of"])
            || opener == "count"
            || has_pair("a", "count");
        let yes_no = YES_NO_OPENERS.contains(&opener);
        let mut order = None;
        let mut superlative_words = Vec::new();
        let mut offset = 0;
        let mut take = 1;
        if let Some((i, o)) = superlative_at(&text) {
            let word = text[i];
            order = Some(o);
            take = superlative_take(&text, i);
            if let Some((_, skip)) = i
                .checked_sub(1)
                .and_then(|p| SUPERLATIVE_ORDINALS.iter().find(|(w, _)| *w == text[p]))
            {
                offset = *skip;
            }
            superlative_words.push(word.to_owned());
            if matches!(word, "most" | "least")
                && let Some(next) = text.get(i + 1)
            {
                superlative_words.push((*next).to_owned());
            }
        }
        // "When" asks for a time where it is the question's word; after another ("Who was
        // the president *when* X worked for Y?") it opens a clause and the other asks.
        // "What is the *date* when …" still asks for one.
        let asks_when = text.iter().position(|w| *w == "when").is_some_and(|i| {
            !text[..i].iter().any(|w| WH_WORDS.contains(w))
                || matches!(i.checked_sub(1).map(|p| text[p]), Some("date" | "year" | "day"))
        });
        let temporal = asks_when
            || ["year", "years", "date", "day"]
                .iter()
                .any(|n| has_pair("what", n) || has_pair("which", n));
        let expects = if counting {
            Expectation::Number
        } else if temporal {
            Expectation::Temporal
        } else if matches!(opener, "who" | "whom") || text.iter().take(3).any(|w| *w == "who" || *w == "whom") {
            Expectation::Entity
        } else if text.iter().take(3).any(|w| *w == "where") {
            Expectation::Place
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
            offset: if kind == QuestionKind::List && order.is_some() {
                offset
            } else {
                0
            },
            take: if kind == QuestionKind::List && order.is_some() {
                take
            } else {
                1
            },
            constraint: if yes_no { None } else { value_constraint(question) },
        }
    }

    /// A superlative that, with the noun after it, is the name of a relation of the graph
    /// ("the *largest city* of X", "the *first driver* of the race": a predicate so labelled) is
    /// that relation, not an order: the form is left without one, and its words are the
    /// relation's. `relation_labels` are the graph's predicate labels.
    pub fn without_named_superlative<'l>(
        mut self,
        question: &str,
        relation_labels: impl IntoIterator<Item = &'l str>,
    ) -> Self {
        // An ordinal before it asks for a rank ("the *second* largest city").
        let Some(first) = self.superlative_words.first().filter(|_| self.offset == 0) else {
            return self;
        };
        let words = words(question);
        let text: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        // Where `detect` read it.
        let Some(next) = superlative_at(&text).and_then(|(i, _)| text.get(i + 1)) else {
            return self;
        };
        let named = [
            vec![first.clone(), (*next).to_owned()],
            vec![first.clone(), crate::words::singular(next)],
        ];
        if relation_labels
            .into_iter()
            .any(|label| named.contains(&normalize_tokens(label)))
        {
            self.order = None;
            self.superlative_words.clear();
            self.offset = 0;
            self.take = 1;
        }
        self
    }
}

/// The first superlative of the question's words and its order; "at least", "at first", "at
/// last" and "first name" are no superlatives of an attribute.
fn superlative_at(text: &[&str]) -> Option<(usize, Order)> {
    text.iter().enumerate().find_map(|(i, word)| {
        let (_, order) = SUPERLATIVES.iter().find(|(s, _)| s == word)?;
        let not_one = (i > 0 && text[i - 1] == "at") || text.get(i + 1) == Some(&"name");
        (!not_one).then_some((i, *order))
    })
}

/// A question word or an imperative opens it: it asks for values, not for yes or no.
fn is_wh_question(text: &[&str]) -> bool {
    text.iter().take(4).any(|w| VALUE_OPENERS.contains(w))
}

/// The question's form ([`QuestionForm::detect`]), a superlative that names one of the
/// graph's relations read as that relation ([`QuestionForm::without_named_superlative`]).
pub(crate) async fn form_of(ctx: &AgentContext, question: &str, model_kind: Option<QuestionKind>) -> QuestionForm {
    let form = QuestionForm::detect(question, model_kind);
    if form.order.is_none() {
        return form;
    }
    match ctx.kg.profile().await {
        Ok(profile) => form.without_named_superlative(
            question,
            profile
                .predicates
                .iter()
                .filter(|p| !profile.conventions.is_schema_predicate(&p.iri))
                .map(|p| p.label.as_str()),
        ),
        Err(_) => form,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copula_before_no_participle_says_a_state() {
        for state in [
            "Which versions of dash were current at some point in 2020?",
            "Who was the mayor of Lima in 2010?",
            "Which clubs was Ana a member of after 2010?",
            "Who was Frida Kahlo's spouse in 1935?",
        ] {
            assert!(says_a_state(state), "{state}");
        }
        for event in [
            "Which bash versions were uploaded during 2021?",
            "Which tmux releases were packaged before 2020?",
            "How many vim uploads were there in 2022?",
            "When did Cusco receive the Heritage Award?",
            "Which films did Ridley Scott direct after 1980?",
        ] {
            assert!(!says_a_state(event), "{event}");
        }
    }

    #[test]
    fn a_written_day_is_read_as_a_date() {
        let tokens = |q: &str| -> Vec<String> { q.split(' ').map(str::to_owned).collect() };
        assert_eq!(written_date(&tokens("2021-03-05"), 0), Some(("2021-03-05".into(), 1)));
        assert_eq!(
            written_date(&tokens("on 1 january 2021"), 1),
            Some(("2021-01-01".into(), 3))
        );
        assert_eq!(
            written_date(&tokens("on march 3rd 2020"), 1),
            Some(("2020-03-03".into(), 3))
        );
        assert_eq!(
            written_date(&tokens("the start of 2024"), 0),
            Some(("2024-01-01".into(), 4))
        );
        assert_eq!(
            written_date(&tokens("the end of 2010"), 0),
            Some(("2010-12-31".into(), 4))
        );
        // No month, no year, a day out of range, another word.
        assert_eq!(written_date(&tokens("on 1 smarch 2021"), 1), None);
        assert_eq!(written_date(&tokens("on 1 january"), 1), None);
        assert_eq!(written_date(&tokens("on 32 january 2021"), 1), None);
        assert_eq!(written_date(&tokens("the middle of 2024"), 0), None);
        assert_eq!(written_date(&tokens("2021-13-01"), 0), None);

        let c = value_constraint("Who uploaded the git version that was current at the start of 2024?").unwrap();
        assert_eq!((c.comparison, c.value, c.year), (Comparison::Equal, 2024.0, true));
        assert_eq!(c.date.as_deref(), Some("2024-01-01"));
        assert_eq!(c.attribute_words, ["current"]);
        assert_eq!(c.phrase, "at the start of 2024");
        let c = value_constraint("Who was the mayor of Lima on 1 June 2010?").unwrap();
        assert_eq!(c.date.as_deref(), Some("2010-06-01"));
        let c = value_constraint("Which versions were uploaded after March 5, 2021?").unwrap();
        assert_eq!(
            (c.comparison, c.date.as_deref()),
            (Comparison::Greater, Some("2021-03-05"))
        );
        // A year alone stays a year; "at" or "on" before no day is no constraint.
        let c = value_constraint("Which bash versions were uploaded during 2021?").unwrap();
        assert_eq!((c.value, c.date), (2021.0, None));
        assert!(value_constraint("Which films are on Netflix?").is_none());
    }

    #[test]
    fn two_bounds_on_one_value() {
        let c = value_constraint("Which characters are worth more than 0 but less than 0.15?").unwrap();
        assert_eq!((c.comparison, c.value), (Comparison::Greater, 0.0));
        assert_eq!(
            c.and,
            Some(Bound {
                comparison: Comparison::Less,
                value: 0.15
            })
        );
        assert_eq!(c.attribute_words, ["worth"]);
        assert_eq!(c.phrase, "more than 0 but less than 0.15");
        let c = value_constraint("Which films were released after 1990 and before 2000?").unwrap();
        assert_eq!(
            (c.year, c.and.map(|b| (b.comparison, b.value))),
            (true, Some((Comparison::Less, 2000.0)))
        );
        // "and" before no comparison is no second bound.
        let c = value_constraint("Which caves have more than 3 entrances and a lake?").unwrap();
        assert_eq!((c.value, c.and), (3.0, None));
    }

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
    fn values_written_with_a_comparison_constrain_an_attribute() {
        let c = |q: &str| value_constraint(q).map(|c| (c.comparison, c.value, c.year, c.attribute_words));
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            c("Which organizations were founded in 1950?"),
            Some((Comparison::Equal, 1950.0, true, words(&["founded"])))
        );
        assert_eq!(
            c("Which caves have more than 3 entrances?"),
            Some((Comparison::Greater, 3.0, false, words(&["entrances"])))
        );
        assert_eq!(
            c("Give me all libraries established earlier than 1400."),
            Some((Comparison::Less, 1400.0, true, words(&["established"])))
        );
        assert_eq!(
            c("Show me all basketball players that are higher than 2 meters."),
            Some((Comparison::Greater, 2.0, false, words(&["higher", "meters"])))
        );
        assert_eq!(
            c("Which volcanos in Japan erupted since 2000?"),
            Some((Comparison::GreaterOrEqual, 2000.0, true, words(&["erupted"])))
        );
        assert_eq!(
            c("Which companies have at least 1,000 employees?"),
            Some((Comparison::GreaterOrEqual, 1000.0, false, words(&["employees"])))
        );
        // An equality written as such, or a number right after the noun it is the value of.
        assert_eq!(
            c("Which package's download is exactly 5888 bytes?"),
            Some((Comparison::Equal, 5888.0, false, words(&["bytes", "download"])))
        );
        assert_eq!(
            c("How many characters have the numeric value 5?"),
            Some((Comparison::Equal, 5.0, false, words(&["numeric", "value"])))
        );
        assert_eq!(
            c("Which characters stand for the number 1000?"),
            Some((Comparison::Equal, 1000.0, true, words(&["number"])))
        );
        assert_eq!(c("Which Runic characters were added in Unicode 7.0?"), None);
        assert_eq!(c("Who directed Ocean's 11 Remake?"), None);
        // A number in a name, or "in" before a number that is no year, is no constraint.
        assert_eq!(c("Give me the Apollo 14 astronauts."), None);
        assert_eq!(c("Who starred in 3 films with Tom Hanks?"), None);
        assert_eq!(c("Which films did Tom Hanks star in?"), None);
        assert_eq!(c("What happened after the war?"), None);
        // Yes/no questions keep their own reading.
        assert!(
            QuestionForm::detect("Was Lima founded in 1535?", None)
                .constraint
                .is_none()
        );
    }

    #[test]
    fn ordinals_before_a_superlative_skip_rows() {
        let f = QuestionForm::detect("What is the second highest mountain on Earth?", None);
        assert_eq!((f.order, f.offset), (Some(Order::Desc), 1));
        assert_eq!(QuestionForm::detect("What is the highest mountain?", None).offset, 0);
        assert_eq!(QuestionForm::detect("Which is the third largest city?", None).offset, 2);
    }

    #[test]
    fn a_number_before_a_superlative_keeps_that_many_and_a_sort_order_keeps_all() {
        let take = |q: &str| QuestionForm::detect(q, None).take;
        assert_eq!(take("What are the three most recent Unicode versions?"), 3);
        assert_eq!(take("What are Thorsten Glaser's 4 biggest packages?"), 4);
        assert_eq!(
            take("Give me the three characters in Number Forms with the highest values."),
            3
        );
        assert_eq!(take("Which is the largest city?"), 1);
        assert_eq!(
            take("List the versions that came out before 2000, from oldest to newest."),
            0
        );
        assert_eq!(take("Which characters are worth less than 0.15? Smallest first."), 0);
        // A number that is a compared value, not a count.
        assert_eq!(take("Which city founded after 1950 is the largest?"), 1);
        // No superlative: nothing to take.
        assert_eq!(take("Which three films did Nolan direct?"), 1);
    }

    #[test]
    fn a_sentences_first_word_is_not_a_capitalised_name() {
        let w = words("What are the three most recent versions? Newest first please. Thanks Tom.");
        let capitalized: Vec<&str> = w.iter().filter(|w| w.capitalized).map(|w| w.text.as_str()).collect();
        assert_eq!(capitalized, ["tom"]);
        // An initial's period is no sentence end.
        let w = words("Who is J. R. Tolkien?");
        assert!(w[2..].iter().all(|w| w.capitalized), "{w:?}");
    }

    #[test]
    fn superlatives_that_name_a_relation() {
        let labels = ["largest city", "first driver", "population"];
        let f = |q: &str| QuestionForm::detect(q, None).without_named_superlative(q, labels);
        let named = f("What are the largest cities of the destinations of TranStar Airlines?");
        assert_eq!((named.order, named.superlative_words.len()), (None, 0));
        assert_eq!(
            f("Who was the first driver of the 1993 European Grand Prix?").order,
            None
        );
        assert_eq!(f("Which is the largest country of Europe?").order, Some(Order::Desc));
        assert_eq!(f("Which city has the largest population?").order, Some(Order::Desc));
        assert_eq!(f("Which is the second largest city of Peru?").order, Some(Order::Desc));
    }

    #[test]
    fn words_that_ask_for_a_count() {
        let asking = |question: &str| {
            let w = words(question);
            (0..w.len())
                .filter(|&i| counting_word(&w, i))
                .map(|i| w[i].text.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(asking("How many times has Jeff Conaway been cast?"), ["times"]);
        assert_eq!(asking("Count the total number of films"), ["count", "total", "number"]);
        assert!(asking("How many movies did he make three times?").is_empty());
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
        assert_eq!(
            f("Who was the president when Ada Lovelace wrote the notes?").expects,
            Expectation::Entity
        );
        assert_eq!(f("Tell me when the notes were written").expects, Expectation::Temporal);
        assert_eq!(
            f("What is the date when the notes were written?").expects,
            Expectation::Temporal
        );
        assert_ne!(
            f("Give me the notes written when Ada was young").expects,
            Expectation::Temporal
        );
        assert_eq!(f("at least one river?").order, None);
        assert_eq!(f("what is the first name of Ada Lovelace").order, None);
        assert_eq!(f("What is the phone number of the embassy?").kind, QuestionKind::List);
        assert_eq!(f("What is the number of moons of Mars?").kind, QuestionKind::Count);
        assert_eq!(
            f("What is the total number of moons of Mars?").kind,
            QuestionKind::Count
        );
        assert_eq!(f("Count the moons of Mars.").kind, QuestionKind::Count);
        assert_eq!(f("Give me a count of the moons of Mars.").kind, QuestionKind::Count);
        assert_eq!(f("Which count ruled Flanders?").kind, QuestionKind::List);
        assert_eq!(f("How often did Ada Lovelace marry?").kind, QuestionKind::Count);
        assert_eq!(f("Where did Ada Lovelace die?").expects, Expectation::Place);
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
