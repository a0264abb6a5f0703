//! Referents of a follow-up question, from the dialogue's own state.
//!
//! A follow-up refers to something a few turns said: an entity a question named or an answer the
//! graph gave. Those are a handful of known vertices and values, so the dialogue state, not the
//! model, decides what "he", "there", "that city", "the second one" or "What about Norway?" means:
//!
//! 1. **Detect** the referring expressions from the question's own words ([`detect`]): personal
//!    pronouns, "there" (not the existential one), demonstratives with a noun ("that city"),
//!    ordinals ("the second one"), the whole of a listed answer ("which of them", "how many are
//!    there") and ellipsis ("What about Norway?", "And X?").
//! 2. **Candidates** are the earlier turns' linked entities and answers, most recent turn first
//!    ([`candidates`]); each carries what the dialogue and the graph say of its kind: the classes
//!    of its vertex (`rdf:type`), the question word that asked for it ("who" → a person, "where" →
//!    a place, "which films" → films), whether it is a literal or a list.
//! 3. **Fit, then recency** ([`fitting`]): "he" takes a person or an entity of unknown kind, never
//!    a literal nor a list; "it" no person; "they" a list or a person; "there" a place; "that
//!    city" an entity whose classes or question say city. Of those that fit, only the most recent
//!    turn's are kept. One left: resolved without a model call. Several: the model chooses one, as
//!    an enum of their labels.
//! 4. **Substitute** ([`substitute`]): the expression is replaced by the referent's label (or
//!    `label's` for a possessive, `in label` for "there"), and nothing else changes; a rewritten
//!    question is checked to keep the question's words and add only the label's
//!    ([`check_substitution`]).

pub use crate::answer::Member;
use crate::words::{
    AFTER_OBJECT, BE, BEFORE_PRONOMINAL, GENERIC_NOUNS, LIST_POSITIONS, PERSON_WORDS, PLACE_WORDS, QUALIFIERS,
    QUANTIFIERS, QUESTION_WORDS,
};
use serde::{Deserialize, Serialize};

/// What a referring expression can point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceKind {
    /// "he", "she", "him", "his", "her": one person (or an entity of unknown kind).
    Person,
    /// "it", "its", "this", "that": one entity that is not a person.
    Thing,
    /// "they", "them", "their": a list answer, or one person.
    Plural,
    /// "there": a place.
    Place,
    /// "that city", "this film": one entity of the class the noun names.
    Demonstrative,
    /// "the event", "the publication" (with nothing after it that says which): the entity of
    /// that kind the dialogue is about. Left as written when nothing fits.
    Definite,
    /// "the second one", "the last one": a member of a listed answer.
    Ordinal,
    /// "which of them", "how many are there": the whole of a listed answer.
    Set,
    /// "What about Norway?", "And Norway?": the previous question, about another entity.
    WhatAbout,
}

/// One referring expression of the question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    pub kind: ReferenceKind,
    /// The words as written.
    pub text: String,
    /// Byte span of `text` in the question.
    pub start: usize,
    pub end: usize,
    /// "his", "its", "that city's": the label becomes `label's`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub possessive: bool,
    /// The noun of a demonstrative ("city"), or the new entity of "What about X?" as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noun: Option<String>,
    /// The position an ordinal asks for (1-based; 0 for "the last").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<usize>,
}

/// A word of the question with its byte span (a possessive `'s` inside the span).
#[derive(Debug, Clone, PartialEq)]
struct Token {
    lower: String,
    start: usize,
    end: usize,
    possessive: bool,
}

fn tokens(question: &str) -> Vec<Token> {
    let is_word = |c: char| c.is_alphanumeric() || c == '\'' || c == '\u{2019}' || c == '-';
    let edge = ['\'', '\u{2019}', '-'];
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let ends = question
        .char_indices()
        .map(|(i, c)| (i, is_word(c)))
        .chain(std::iter::once((question.len(), false)));
    for (i, word) in ends {
        match (start, word) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                start = None;
                let run = &question[s..i];
                let body = run.trim_start_matches(edge);
                let s = s + (run.len() - body.len());
                let body = body.trim_end_matches(edge);
                if body.is_empty() {
                    continue;
                }
                let lower = body.to_lowercase().replace('\u{2019}', "'");
                let (lower, possessive) = match lower.strip_suffix("'s") {
                    Some(stem) if !stem.is_empty() && stem != "it" => (stem.to_owned(), true),
                    _ => (lower, false),
                };
                out.push(Token {
                    lower,
                    start: s,
                    end: s + body.len(),
                    possessive,
                });
            }
            _ => {}
        }
    }
    out
}

/// The singular of an English noun (shared with class spotting).
pub use crate::words::singular;

/// The referring expressions of `question` (see [`detect_with`]) with the generic nouns only.
pub fn detect(question: &str) -> Vec<Reference> {
    detect_with(question, &[])
}

/// The referring expressions of `question`, in order, none overlapping. `nouns` are further
/// nouns a demonstrative may carry (the candidates' class words), singular and lower-case.
pub fn detect_with(question: &str, nouns: &[String]) -> Vec<Reference> {
    let t = tokens(question);
    let mut out: Vec<Reference> = Vec::new();
    let word = |i: usize| t.get(i).map(|x| x.lower.as_str());
    let is_noun = |w: &str| {
        let s = singular(w);
        GENERIC_NOUNS.contains(&s.as_str()) || nouns.iter().any(|n| *n == s)
    };
    let reference = |kind, from: &Token, to: &Token, possessive| Reference {
        kind,
        text: question[from.start..to.end].to_owned(),
        start: from.start,
        end: to.end,
        possessive,
        noun: None,
        position: None,
    };

    // Ellipsis: "What about X?", "How about X?", "And X?".
    if let Some(r) = what_about(question, &t) {
        return vec![r];
    }

    let mut i = 0;
    while i < t.len() {
        let w = t[i].lower.as_str();
        let prev = i.checked_sub(1).and_then(word);
        let next = word(i + 1);
        // "how many are there", "how many are they"
        if (w == "there" || w == "they")
            && prev.is_some_and(|p| p == "are" || p == "were")
            && i >= 3
            && word(i - 3) == Some("how")
            && word(i - 2) == Some("many")
            && next.is_none()
        {
            out.push(reference(ReferenceKind::Set, &t[i - 1], &t[i], false));
            i += 1;
            continue;
        }
        // "which of them", "how many of these", "all of those"
        if w == "of"
            && matches!(next, Some("them" | "these" | "those"))
            && prev.is_some_and(|p| QUANTIFIERS.contains(&p))
        {
            out.push(reference(ReferenceKind::Set, &t[i], &t[i + 1], false));
            i += 2;
            continue;
        }
        // "the second one", "the last", "the first of them" (the latter is a set with an ordinal)
        if w == "the"
            && let Some(&(_, position)) = next.and_then(|n| LIST_POSITIONS.iter().find(|(o, _)| *o == n))
        {
            let after = word(i + 2);
            let end = match after {
                Some("one") => Some(i + 2),
                None => Some(i + 1),
                Some("of") if matches!(word(i + 3), Some("them" | "these" | "those")) => Some(i + 3),
                Some(a) if BE.contains(&a) || AFTER_OBJECT.contains(&a) => Some(i + 1),
                _ => None,
            };
            if let Some(end) = end {
                let mut r = reference(ReferenceKind::Ordinal, &t[i], &t[end], t[end].possessive);
                r.position = Some(position);
                out.push(r);
                i = end + 1;
                continue;
            }
        }
        // "the event" at the end, or as the subject after an auxiliary with nothing that
        // says which ("When did the event start?", not "are the films directed by X").
        if w == "the"
            && let Some(n) = next
            && !t[i].possessive
            && is_noun(n)
            && n != "one"
        {
            let rest: Vec<&str> = t[i + 2..].iter().map(|x| x.lower.as_str()).collect();
            let qualified = rest.iter().any(|r| QUALIFIERS.contains(r));
            let after_aux =
                prev.is_some_and(|p| BE.contains(&p) || matches!(p, "did" | "does" | "do" | "has" | "have" | "had"));
            if rest.is_empty() || (after_aux && !qualified && rest.len() <= 2) {
                let mut r = reference(ReferenceKind::Definite, &t[i], &t[i + 1], t[i + 1].possessive);
                r.noun = Some(singular(n));
                out.push(r);
                i += 2;
                continue;
            }
        }
        let possessive = t[i].possessive;
        let kind = match w {
            "he" | "him" | "himself" | "she" | "hers" | "herself" => Some((ReferenceKind::Person, possessive)),
            "his" => Some((ReferenceKind::Person, true)),
            "her" => {
                let object = next.is_none_or(|n| AFTER_OBJECT.contains(&n) || QUESTION_WORDS.contains(&n));
                Some((ReferenceKind::Person, !object || possessive))
            }
            "it" | "itself" => Some((ReferenceKind::Thing, possessive)),
            "its" => Some((ReferenceKind::Thing, true)),
            "they" | "them" | "themselves" => Some((ReferenceKind::Plural, possessive)),
            "their" | "theirs" => Some((ReferenceKind::Plural, true)),
            "there" => {
                let existential = prev.is_some_and(|p| BE.contains(&p))
                    || next.is_some_and(|n| BE.contains(&n) || n == "'s")
                    || i == 0;
                (!existential).then_some((ReferenceKind::Place, false))
            }
            _ => None,
        };
        if let Some((kind, possessive)) = kind {
            out.push(reference(kind, &t[i], &t[i], possessive));
            i += 1;
            continue;
        }
        if matches!(w, "this" | "that" | "these" | "those") {
            if let Some(n) = next
                && is_noun(n)
            {
                let mut r = reference(ReferenceKind::Demonstrative, &t[i], &t[i + 1], t[i + 1].possessive);
                r.noun = Some(singular(n));
                out.push(r);
                i += 2;
                continue;
            }
            // "Who directed that?", "Is that a comedy?", "When was this released?", not
            // "the film that won" nor "directed this flick".
            let pronominal = next.is_none()
                || next
                    .is_some_and(|n| BE.contains(&n) || AFTER_OBJECT.contains(&n) || matches!(n, "a" | "an" | "the"))
                || prev.is_some_and(|p| BE.contains(&p) || matches!(p, "did" | "does" | "do" | "has" | "have" | "had"));
            let pronominal =
                pronominal && prev.is_none_or(|p| BEFORE_PRONOMINAL.contains(&p) || QUESTION_WORDS.contains(&p));
            if pronominal && !possessive_relative(prev) {
                let kind = if matches!(w, "these" | "those") {
                    ReferenceKind::Plural
                } else {
                    ReferenceKind::Thing
                };
                out.push(reference(kind, &t[i], &t[i], possessive));
            }
        }
        i += 1;
    }
    out
}

/// "the one that …" and similar: no "that" after these is a pronoun.
fn possessive_relative(prev: Option<&str>) -> bool {
    matches!(
        prev,
        Some("one" | "ones" | "those" | "thing" | "something" | "anything")
    )
}

/// "What about X?", "How about X?", "And X?" (a short fragment with no question word, verb or
/// pronoun of its own).
fn what_about(question: &str, t: &[Token]) -> Option<Reference> {
    let w = |i: usize| t.get(i).map(|x| x.lower.as_str());
    let mut i = 0;
    if w(0) == Some("and") {
        i = 1;
    }
    let about = matches!(w(i), Some("what" | "how")) && w(i + 1) == Some("about");
    let rest = if about { i + 2 } else { i };
    if rest >= t.len() || (!about && i == 0) {
        return None;
    }
    if !about {
        // "And X?": a few words, none a question word, an auxiliary or a pronoun.
        let words = &t[rest..];
        let blocked = |x: &Token| {
            QUESTION_WORDS.contains(&x.lower.as_str())
                || BE.contains(&x.lower.as_str())
                || matches!(
                    x.lower.as_str(),
                    "do" | "does"
                        | "did"
                        | "has"
                        | "have"
                        | "had"
                        | "he"
                        | "she"
                        | "it"
                        | "its"
                        | "his"
                        | "her"
                        | "they"
                        | "them"
                        | "their"
                        | "this"
                        | "that"
                        | "these"
                        | "those"
                        | "there"
                )
        };
        if words.len() > 6 || words.iter().any(blocked) {
            return None;
        }
    }
    let (first, last) = (&t[rest], &t[t.len() - 1]);
    let text = question[first.start..last.end].to_owned();
    Some(Reference {
        kind: ReferenceKind::WhatAbout,
        noun: Some(text.clone()),
        text,
        start: first.start,
        end: last.end,
        possessive: false,
        position: None,
    })
}

/// Where a candidate referent comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// An entity the turn's question named (linked to a vertex).
    Entity,
    /// The turn's one answer value.
    Answer,
    /// All of the turn's answer values (a list answer).
    Answers,
    /// One value of the turn's list answer (an ordinal).
    Member,
}

/// A possible referent of an expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Turns back: 1 is the previous turn.
    pub turns_ago: usize,
    pub role: Role,
    /// What the question will name ("Forrest Gump", or "them (3 answers)" for a list).
    pub label: String,
    /// The value(s): one for an entity, an answer or a member; every listed value for `answers`.
    pub members: Vec<Member>,
    /// How many values the answer had (more than `members` when the stored ones were cut).
    pub total: usize,
    /// The mention in the turn's question (entities).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mention: Option<String>,
    /// Words that say what it is: its classes' labels, the noun its question asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// A person (from its classes or a "who" question); `None` when nothing says.
    pub person: Option<bool>,
    /// A place (classes or a "where" question).
    pub place: Option<bool>,
}

impl Candidate {
    fn literal(&self) -> bool {
        self.members.iter().any(|m| !m.iri)
    }

    fn plural(&self) -> bool {
        self.role == Role::Answers
    }

    /// The one vertex it stands for.
    pub fn iri(&self) -> Option<&str> {
        match self.members.as_slice() {
            [m] if m.iri => Some(&m.value),
            _ => None,
        }
    }
}

/// What the turn's question asked for: a person ("who"), a place ("where"), a time or number
/// ("when", "how many": not a referent), or the noun after "which"/"what" ("which films").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Asked {
    pub person: Option<bool>,
    pub place: Option<bool>,
    pub noun: Option<String>,
}

/// [`Asked`] of a question, from its first words.
pub fn asked(question: &str) -> Asked {
    let t = tokens(question);
    let words: Vec<&str> = t.iter().map(|x| x.lower.as_str()).collect();
    let Some(at) = words.iter().position(|w| QUESTION_WORDS.contains(w)) else {
        return Asked::default();
    };
    let kind = |noun: &str| {
        let s = singular(noun);
        Asked {
            person: Some(PERSON_WORDS.contains(&s.as_str())),
            place: Some(PLACE_WORDS.contains(&s.as_str())),
            noun: Some(s),
        }
    };
    match words[at] {
        "who" | "whom" => Asked {
            person: Some(true),
            place: Some(false),
            noun: None,
        },
        "where" => Asked {
            person: Some(false),
            place: Some(true),
            noun: None,
        },
        "when" => Asked {
            person: Some(false),
            place: Some(false),
            noun: None,
        },
        "which" | "what" => {
            // "which films", "what city"; "what are the films", "which are the cities"
            // (not "What is Alien": a name after the verb is not what is asked for)
            let mut j = at + 1;
            if words.get(j).is_some_and(|w| BE.contains(w)) {
                if !words
                    .get(j + 1)
                    .is_some_and(|w| matches!(*w, "the" | "a" | "an" | "all"))
                {
                    return Asked::default();
                }
                j += 1;
            }
            if words.get(j).is_some_and(|w| matches!(*w, "the" | "a" | "an" | "all")) {
                j += 1;
            }
            match words.get(j) {
                Some(w) if !BE.contains(w) && !matches!(*w, "kind" | "type" | "sort") && w.len() > 2 => kind(w),
                _ => Asked::default(),
            }
        }
        _ => Asked::default(),
    }
}

/// Whether a candidate's kind words include `noun`.
fn names(kinds: &[String], noun: &str) -> bool {
    kinds.iter().any(|k| k.split_whitespace().any(|w| singular(w) == noun))
}

/// The person/place verdict of class words: `None` when there are none.
pub fn kind_of_classes(kinds: &[String]) -> (Option<bool>, Option<bool>) {
    if kinds.is_empty() {
        return (None, None);
    }
    let any = |list: &[&str]| {
        kinds
            .iter()
            .any(|k| k.split_whitespace().any(|w| list.contains(&singular(w).as_str())))
    };
    (Some(any(PERSON_WORDS)), Some(any(PLACE_WORDS)))
}

/// Whether `candidate` can be what `reference` refers to: `None` when it cannot, `Some(true)`
/// when something says it fits (a person for "he", a place for "there", the class "that city"
/// names), `Some(false)` when only nothing contradicts it (an entity of unknown kind).
pub fn fit(reference: &Reference, c: &Candidate) -> Option<bool> {
    use ReferenceKind::*;
    let single_entity = !c.plural() && !c.literal() && c.role != Role::Member;
    let unless = |ok: bool, evidence: bool| ok.then_some(evidence);
    match reference.kind {
        Person => unless(
            single_entity && c.person != Some(false) && c.place != Some(true),
            c.person == Some(true),
        ),
        Thing => unless(single_entity && c.person != Some(true), c.person == Some(false)),
        Plural => {
            if c.plural() && c.members.len() > 1 {
                Some(true)
            } else {
                unless(single_entity && c.person != Some(false), c.person == Some(true))
            }
        }
        Place => unless(
            single_entity && c.place != Some(false) && c.person != Some(true),
            c.place == Some(true),
        ),
        Demonstrative | Definite => {
            let noun = reference.noun.as_deref().unwrap_or("");
            let lower = reference.text.to_lowercase();
            let plural_det = lower.starts_with("these") || lower.starts_with("those");
            let shape = if plural_det { c.plural() } else { single_entity };
            if !shape {
                return None;
            }
            if noun == "one" {
                return Some(false);
            }
            if names(&c.kinds, noun) {
                return Some(true);
            }
            // A noun nothing names: the class words must not contradict it.
            let person_noun = PERSON_WORDS.contains(&noun);
            let place_noun = PLACE_WORDS.contains(&noun);
            unless(
                c.kinds.is_empty()
                    && (!person_noun || c.person != Some(false))
                    && (!place_noun || c.place != Some(false))
                    && (person_noun || c.person != Some(true)),
                false,
            )
        }
        Ordinal => unless(c.role == Role::Member, true),
        Set => unless(c.plural(), true),
        WhatAbout => unless(c.role == Role::Entity, true),
    }
}

/// Whether `candidate` can be what `reference` refers to ([`fit`]).
pub fn fits(reference: &Reference, c: &Candidate) -> bool {
    fit(reference, c).is_some()
}

/// The candidates that fit `reference`: those something says fit if there are any (else those
/// nothing contradicts), of the most recent turn that has one.
pub fn fitting<'a>(reference: &Reference, candidates: &'a [Candidate]) -> Vec<&'a Candidate> {
    narrow(
        candidates
            .iter()
            .filter_map(|c| Some((c, fit(reference, c)?)))
            .collect(),
    )
}

/// Of candidates, each with whether something says it fits: those with evidence if any have it,
/// then those of the most recent turn, each referent once.
pub fn narrow<C: std::borrow::Borrow<Candidate>>(scored: Vec<(C, bool)>) -> Vec<C> {
    let evidenced = scored.iter().any(|(_, e)| *e);
    let kept: Vec<C> = scored
        .into_iter()
        .filter(|(_, e)| *e || !evidenced)
        .map(|(c, _)| c)
        .collect();
    let Some(latest) = kept.iter().map(|c| c.borrow().turns_ago).min() else {
        return kept;
    };
    // The same vertex named twice in a turn (asked about and answered) is one referent.
    let mut seen = std::collections::HashSet::new();
    kept.into_iter()
        .filter(|c| c.borrow().turns_ago == latest)
        .filter(|c| seen.insert((c.borrow().role == Role::Answers, c.borrow().members.clone())))
        .collect()
}

/// `question` with `reference` replaced by `label` (`label's` for a possessive, `in label` for
/// "there"). A fragment left by "And …" becomes a question ("And its genre?" → "What is X's
/// genre?").
pub fn substitute(question: &str, reference: &Reference, label: &str) -> String {
    let replacement = match (reference.kind, reference.possessive) {
        (ReferenceKind::Place, _) => format!("in {label}"),
        // A title's final period does not come before the possessive ("…systems's", not
        // "…systems.'s").
        (_, true) => format!(
            "{}'s",
            label.trim_end_matches(|c: char| !c.is_alphanumeric() && c != ')')
        ),
        (_, false) => label.to_owned(),
    };
    // Spans come from this question; one that does not fit it leaves it unchanged (and the
    // substitution check then refuses the result).
    let (Some(before), Some(after)) = (question.get(..reference.start), question.get(reference.end..)) else {
        return question.to_owned();
    };
    format!("{before}{replacement}{after}")
}

/// A fragment question ("And X's genre?") as a question: the leading "and" dropped and, unless
/// it opens with a question word, an auxiliary or an imperative, "What is" put first.
pub fn complete_fragment(question: &str) -> String {
    let trimmed = question.trim();
    let t = tokens(trimmed);
    let Some(first) = t.first() else {
        return trimmed.to_owned();
    };
    if first.lower != "and" || first.start != 0 || t.len() < 2 {
        return trimmed.to_owned();
    }
    // Everything after "and" (a symbol before the next word included).
    let rest = trimmed[first.end..].trim_start().to_owned();
    let opener = t[1].lower.as_str();
    let opens = QUESTION_WORDS.contains(&opener)
        || BE.contains(&opener)
        || matches!(
            opener,
            "do" | "does"
                | "did"
                | "has"
                | "have"
                | "had"
                | "can"
                | "could"
                | "will"
                | "would"
                | "list"
                | "name"
                | "give"
                | "tell"
                | "show"
                | "count"
        );
    if opens {
        let mut chars = rest.chars();
        chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect())
            .unwrap_or(rest)
    } else {
        format!("What is {rest}")
    }
}

/// The rewritten question keeps the asked question's words, drops only the referring
/// expressions (and a leading "and") and adds only the referents' words and "what is", "in",
/// "'s": the check a rewriting must pass, whoever wrote it.
pub fn check_substitution(
    original: &str,
    rewritten: &str,
    references: &[Reference],
    labels: &[&str],
) -> Result<(), String> {
    // Words as the detection reads them (symbols split words; a possessive 's is not a word).
    let words = |text: &str| -> Vec<String> {
        tokens(text)
            .into_iter()
            .map(|t| t.lower.strip_suffix("'s").map(str::to_owned).unwrap_or(t.lower))
            .collect()
    };
    let mut allowed: Vec<String> = words(original);
    for label in labels {
        allowed.extend(words(label));
    }
    allowed.extend(["what", "is", "in"].map(str::to_owned));
    let kept = words(rewritten);
    let added: Vec<&String> = kept.iter().filter(|w| !allowed.contains(w)).collect();
    if !added.is_empty() {
        return Err(format!("the rewritten question adds {added:?}"));
    }
    let mut dropped_ok: Vec<String> = references.iter().flat_map(|r| words(&r.text)).collect();
    dropped_ok.push("and".into());
    let lost: Vec<String> = words(original)
        .into_iter()
        .filter(|w| !kept.contains(w) && !dropped_ok.contains(w))
        .collect();
    if !lost.is_empty() {
        return Err(format!("the rewritten question loses {lost:?}"));
    }
    for label in labels {
        let name = words(label).join(" ");
        if !format!(" {} ", kept.join(" ")).contains(&format!(" {name} ")) {
            return Err(format!("the rewritten question does not name {label:?}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(question: &str) -> Vec<(ReferenceKind, String, bool)> {
        detect(question)
            .into_iter()
            .map(|r| (r.kind, r.text, r.possessive))
            .collect()
    }

    #[test]
    fn pronouns_of_each_kind() {
        use ReferenceKind::*;
        assert_eq!(kinds("When was he born?"), vec![(Person, "he".into(), false)]);
        assert_eq!(kinds("What is his height?"), vec![(Person, "his".into(), true)]);
        assert_eq!(kinds("Who did she marry?"), vec![(Person, "she".into(), false)]);
        assert_eq!(kinds("Who married her?"), vec![(Person, "her".into(), false)]);
        assert_eq!(kinds("What is her nationality?"), vec![(Person, "her".into(), true)]);
        assert_eq!(kinds("When was it released?"), vec![(Thing, "it".into(), false)]);
        assert_eq!(kinds("What is its genre?"), vec![(Thing, "its".into(), true)]);
        assert_eq!(
            kinds("Who acted in the films written by them"),
            vec![(Plural, "them".into(), false)]
        );
        assert_eq!(kinds("What are their names?"), vec![(Plural, "their".into(), true)]);
        assert_eq!(kinds("Who was born there?"), vec![(Place, "there".into(), false)]);
        assert_eq!(kinds("Who directed that?"), vec![(Thing, "that".into(), false)]);
        assert_eq!(kinds("Is that a comedy?"), vec![(Thing, "that".into(), false)]);
    }

    #[test]
    fn what_is_not_a_reference() {
        assert!(detect("Who directed Forrest Gump?").is_empty());
        assert!(detect("Is there a film by Tom Hanks?").is_empty());
        assert!(detect("Are there films directed by Tom Hanks?").is_empty());
        assert!(detect("Which films did the director that made Alien write?").is_empty());
        assert!(detect("Which film that won an award was directed by Spielberg?").is_empty());
        assert!(detect("In which year was Systems of Logic released?").is_empty());
    }

    #[test]
    fn demonstratives_ordinals_sets_and_ellipsis() {
        use ReferenceKind::*;
        let r = detect("How many people live in that city?");
        assert_eq!(
            (r[0].kind, r[0].text.as_str(), r[0].noun.as_deref()),
            (Demonstrative, "that city", Some("city"))
        );
        let r = detect_with("Who directed this flick?", &["flick".into()]);
        assert_eq!(r[0].kind, Demonstrative);
        assert_eq!(detect("Who directed this flick?").len(), 0);
        let r = detect("Who directed the second one?");
        assert_eq!(
            (r[0].kind, r[0].text.as_str(), r[0].position),
            (Ordinal, "the second one", Some(2))
        );
        let r = detect("When was the last one released?");
        assert_eq!((r[0].kind, r[0].position), (Ordinal, Some(0)));
        assert_eq!(
            kinds("Which of them were directed by Spielberg?"),
            vec![(Set, "of them".into(), false)]
        );
        assert_eq!(kinds("How many are there?"), vec![(Set, "are there".into(), false)]);
        let r = detect("What about Norway?");
        assert_eq!((r[0].kind, r[0].noun.as_deref()), (WhatAbout, Some("Norway")));
        let r = detect("And Norway?");
        assert_eq!((r[0].kind, r[0].noun.as_deref()), (WhatAbout, Some("Norway")));
        assert_eq!(kinds("And its population?"), vec![(Thing, "its".into(), true)]);
        assert!(detect("And who directed Alien?").is_empty());
        assert_eq!(
            kinds("Who are the co-writers of them?"),
            vec![(Plural, "them".into(), false)]
        );
        let r = detect("When did the event start?");
        assert_eq!((r[0].kind, r[0].text.as_str()), (Definite, "the event"));
        assert_eq!(detect("Who authored the publication?")[0].kind, Definite);
        assert!(detect("What genres are the films directed by Tom Hanks?").is_empty());
        assert!(detect("What is the year of publication for the article titled?").is_empty());
    }

    #[test]
    fn substitution_names_the_referent_and_adds_nothing() {
        let q = "What is his height?";
        let r = &detect(q)[0];
        let out = substitute(q, r, "Antony Cheng");
        assert_eq!(out, "What is Antony Cheng's height?");
        assert!(check_substitution(q, &out, std::slice::from_ref(r), &["Antony Cheng"]).is_ok());
        let q = "Who was born there?";
        let out = substitute(q, &detect(q)[0], "Oslo");
        assert_eq!(out, "Who was born in Oslo?");
        let q = "What is its primary edition?";
        let r = &detect(q)[0];
        let out = substitute(q, r, "Cluster abstraction of graph transformation systems.");
        assert_eq!(
            out,
            "What is Cluster abstraction of graph transformation systems's primary edition?"
        );
        assert!(
            check_substitution(
                q,
                &out,
                std::slice::from_ref(r),
                &["Cluster abstraction of graph transformation systems."]
            )
            .is_ok()
        );
        let q = "And its population?";
        let out = complete_fragment(&substitute(q, &detect(q)[0], "Oslo"));
        assert_eq!(out, "What is Oslo's population?");
        let q = "And who directed it?";
        assert_eq!(
            complete_fragment(&substitute(q, &detect(q)[0], "Alien")),
            "Who directed Alien?"
        );
        // A rewriting that adds or loses words is refused.
        let q = "When was it released?";
        let r = detect(q);
        assert!(check_substitution(q, "When was Alien first released in theatres?", &r, &["Alien"]).is_err());
        assert!(check_substitution(q, "When was Alien?", &r, &["Alien"]).is_err());
        assert!(check_substitution(q, "When was it released?", &r, &["Alien"]).is_err());
        assert!(check_substitution(q, "When was Alien released?", &r, &["Alien"]).is_ok());
    }

    fn candidate(turns_ago: usize, role: Role, label: &str, person: Option<bool>, place: Option<bool>) -> Candidate {
        let members = match role {
            Role::Answers => vec![
                Member {
                    value: "http://e/a".into(),
                    label: "A".into(),
                    iri: true,
                    datatype: None,
                },
                Member {
                    value: "http://e/b".into(),
                    label: "B".into(),
                    iri: true,
                    datatype: None,
                },
            ],
            _ => vec![Member {
                value: format!("http://e/{label}"),
                label: label.into(),
                iri: true,
                datatype: None,
            }],
        };
        Candidate {
            turns_ago,
            role,
            label: label.into(),
            total: members.len(),
            members,
            mention: None,
            kinds: Vec::new(),
            person,
            place,
        }
    }

    #[test]
    fn fit_then_recency() {
        let he = &detect("When was he born?")[0];
        let it = &detect("When was it released?")[0];
        let they = &detect("What did they write?")[0];
        let there = &detect("Who lives there?")[0];
        let cands = vec![
            candidate(1, Role::Answer, "Robert Zemeckis", Some(true), Some(false)),
            candidate(1, Role::Entity, "Forrest Gump", None, None),
            candidate(2, Role::Entity, "Tom Hanks", None, None),
        ];
        let labels = |r: &Reference| fitting(r, &cands).iter().map(|c| c.label.clone()).collect::<Vec<_>>();
        // A person for "he" beats an entity nothing is known of.
        assert_eq!(labels(he), vec!["Robert Zemeckis"]);
        assert_eq!(labels(it), vec!["Forrest Gump"]);
        assert_eq!(labels(they), vec!["Robert Zemeckis"]);
        assert_eq!(labels(there), vec!["Forrest Gump"]);
        // Without evidence, every entity that nothing contradicts fits, of the latest turn.
        let unknown = vec![
            candidate(1, Role::Answer, "Robert Zemeckis", None, None),
            candidate(1, Role::Entity, "Forrest Gump", None, None),
            candidate(2, Role::Entity, "Tom Hanks", None, None),
        ];
        let labels = |r: &Reference| fitting(r, &unknown).iter().map(|c| c.label.clone()).collect::<Vec<_>>();
        assert_eq!(labels(he), vec!["Robert Zemeckis", "Forrest Gump"]);
        // A list answer is "they", never "he".
        let list = vec![
            candidate(1, Role::Answers, "them", Some(false), None),
            candidate(2, Role::Entity, "Tom Hanks", None, None),
        ];
        assert_eq!(fitting(they, &list)[0].role, Role::Answers);
        assert_eq!(fitting(he, &list)[0].label, "Tom Hanks");
    }

    #[test]
    fn what_a_question_asked_for() {
        assert_eq!(asked("Who directed Alien?").person, Some(true));
        assert_eq!(asked("Where was Tom Hanks born?").place, Some(true));
        assert_eq!(
            asked("Which films did Tom Hanks star in?").noun.as_deref(),
            Some("film")
        );
        assert_eq!(asked("What cities are in Norway?").place, Some(true));
        assert_eq!(asked("What is the capital of Norway?").noun.as_deref(), Some("capital"));
        assert_eq!(asked("What is Alien?"), Asked::default());
        assert_eq!(singular("cities"), "city");
        assert_eq!(singular("films"), "film");
        assert_eq!(singular("boss"), "boss");
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// Questions of words a follow-up is made of, with punctuation, apostrophes and text
        /// outside ASCII between them.
        fn question() -> impl Strategy<Value = String> {
            let word = prop_oneof![
                prop::sample::select(vec![
                    "he", "his", "her", "it", "its", "it's", "they", "them", "their", "there", "this", "that", "these",
                    "those", "the", "second", "last", "one", "of", "which", "how", "many", "are", "what", "about",
                    "and", "is", "was", "city", "film", "event", "born", "Oslo", "Malmö", "Ålesund",
                ])
                .prop_map(str::to_owned),
                "[a-zA-Zé'’\\-]{1,8}",
                "[ ?!,.'\"()]{1,2}",
                "\\PC{1,3}",
            ];
            prop::collection::vec(word, 0..12).prop_map(|w| w.join(" "))
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            /// Spans index the question at character boundaries and hold the expression's text;
            /// substituting any one of them names the label, keeps everything else, and passes
            /// the substitution check, fragment completion included.
            #[test]
            fn spans_and_substitutions_hold(q in question(), label in "[A-Z][a-zé]{1,6}( [A-Z][a-z]{1,6})?") {
                let references = detect(&q);
                for r in &references {
                    prop_assert!(q.is_char_boundary(r.start) && q.is_char_boundary(r.end) && r.start < r.end);
                    prop_assert_eq!(&q[r.start..r.end], r.text.as_str());
                    if r.kind == ReferenceKind::WhatAbout || r.kind == ReferenceKind::Set {
                        continue;
                    }
                    let out = complete_fragment(&substitute(&q, r, &label));
                    prop_assert!(out.contains(&label), "{out:?}");
                    let checked = check_substitution(&q, &out, std::slice::from_ref(r), &[label.as_str()]);
                    prop_assert!(checked.is_ok(), "{q:?} → {out:?}: {checked:?}");
                }
                for w in references.windows(2) {
                    prop_assert!(w[0].end <= w[1].start, "overlapping: {references:?}");
                }
            }
        }
    }
}
