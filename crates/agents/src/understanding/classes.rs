//! Classes named in the question, read against the graph's own classes (the schema profile):
//! "which *cities* …", "how many *countries* …", "the most populous *country* …" say what the
//! answers must be; "is Lima a *city*?" asks whether an entity is one. The graph decides what a
//! class is (its `rdf:type` objects and their labels); the question's words only say where one is
//! named and in which role. No model is asked.
//!
//! A class word is matched in its singular ("cities" → "city", "people" → "person"), against the
//! class's label (its `rdfs:label`, else its IRI's local name split: `PopulatedPlace` → "populated
//! place"). It counts only where English asks for a kind: right after "which", "what", "how
//! many", "all", "list the", or after a superlative ("the most populous country"), or after "a"/"an"
//! in a yes/no question ("is Lima a city"). A class word elsewhere ("the capital of Peru", with a
//! class `Capital`) is a relation word, not a constraint.

use crate::understanding::form::QuestionForm;
use crate::words::{ABOUT_THE_CLASS, ASKING, LISTING, singular};
use chatty_kg_graph::profile::ClassProfile;
use chatty_kg_graph::text::normalize_tokens;
use serde::{Deserialize, Serialize};

/// A class of the graph named in the question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassMention {
    pub iri: String,
    /// The class's name in the graph.
    pub label: String,
    /// The words of the question that name it.
    pub mention: String,
    pub role: ClassRole,
    /// Whether the answer was constrained to the class (some path reached its instances, or the
    /// question is about the class alone).
    #[serde(default)]
    pub applied: bool,
    /// Where no class's name is written there, how close in meaning the question's words and the
    /// class's name are (cosine of their sentence embeddings, [`CLASS_BY_MEANING`] at least).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_meaning: Option<f32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassRole {
    /// What the answers must be: "which cities", "how many countries", "the most populous country".
    Answer,
    /// What an entity is asked to be: "is Lima a city?".
    Membership,
}

/// Words that may stand between an asking word and the class it names.
const MODIFIERS: usize = 3;
/// Classes matched at most (the most instances first; the profile keeps at most 1 000).
const MAX_CLASSES: usize = 1000;

/// The class the question names in one of the roles above, if the graph has one by that name:
/// the longest name wins, then the class with more instances.
pub fn spot_class(question: &str, form: &QuestionForm, classes: &[ClassProfile]) -> Option<ClassMention> {
    let words: Vec<String> = normalize_tokens(question);
    let singulars: Vec<String> = words.iter().map(|w| singular(w)).collect();
    let mut best: Option<(usize, u64, ClassMention)> = None;
    for class in classes.iter().take(MAX_CLASSES).filter(|c| !universal(&c.iri)) {
        let name: Vec<String> = normalize_tokens(&class.label).iter().map(|w| singular(w)).collect();
        if names_nothing(&name) {
            continue;
        }
        for start in 0..words.len().saturating_sub(name.len() - 1) {
            if !(0..name.len()).all(|k| names_word(&words[start + k], &singulars[start + k], &name[k])) {
                continue;
            }
            let Some(role) = role_at(&words, start, form).or_else(|| of_a_set(&words, start, name.len())) else {
                continue;
            };
            let rank = (name.len(), class.instances);
            if best.as_ref().is_none_or(|(len, n, _)| rank > (*len, *n)) {
                best = Some((
                    name.len(),
                    class.instances,
                    ClassMention {
                        iri: class.iri.clone(),
                        label: class.label.clone(),
                        mention: words[start..start + name.len()].join(" "),
                        role,
                        applied: false,
                        by_meaning: None,
                    },
                ));
            }
        }
    }
    best.map(|(_, _, mention)| mention)
}

/// Cosine (sentence embeddings) at which a phrase standing where a kind is asked names a class
/// whose name it does not spell. With MiniLM: "movies" and "film" 0.81 ("movie" 0.84), "tv
/// shows" and "television show" 0.89, "parties" and "political party" 0.81; below it
/// "musicians" and "musical artist" 0.71, "cosmonauts" and "astronaut" 0.67 (synonyms missed),
/// "player" and "person" 0.62, "state" and "country" 0.58 (not synonyms; measured against the
/// QALD-9 slice's classes and the Chatty-Gen and package graphs' class names).
pub const CLASS_BY_MEANING: f32 = 0.8;

/// The class a phrase standing where English asks for a kind means, where no class's name is
/// written there ([`spot_class`] found none): "Give me all *movies* with Tom Cruise" (`Film`),
/// "all the *TV shows* with Neil Patrick Harris" (`TelevisionShow`). The phrases and the classes'
/// names are compared by their sentence embeddings ([`CLASS_BY_MEANING`]); the closest pair wins,
/// then the class with more instances. The classes' vectors are the embedder's cache's after the
/// first question.
pub async fn class_by_meaning(
    ctx: &crate::context::AgentContext,
    question: &str,
    form: &QuestionForm,
    classes: &[ClassProfile],
) -> Result<Option<ClassMention>, crate::error::AgentError> {
    let phrases = kind_phrases(question, form);
    if phrases.is_empty() {
        return Ok(None);
    }
    let named: Vec<(&ClassProfile, String)> = classes
        .iter()
        .take(MAX_CLASSES)
        .filter(|c| !universal(&c.iri))
        .filter_map(|c| class_phrase(&c.label).map(|p| (c, p)))
        .collect();
    if named.is_empty() {
        return Ok(None);
    }
    let texts: Vec<String> = phrases
        .iter()
        .map(|p| p.phrase.clone())
        .chain(named.iter().map(|(_, name)| name.clone()))
        .collect();
    let vectors = crate::similarity::embed(ctx, texts).await?;
    let (said, names) = vectors.split_at(phrases.len());
    let mut best: Option<(f32, u64, ClassMention)> = None;
    for (phrase, v) in phrases.iter().zip(said) {
        for ((class, _), w) in named.iter().zip(names) {
            let similarity = chatty_kg_embed::cosine(v, w);
            if similarity < CLASS_BY_MEANING {
                continue;
            }
            let better = best
                .as_ref()
                .is_none_or(|(s, n, _)| similarity > *s || (similarity == *s && class.instances > *n));
            if better {
                best = Some((
                    similarity,
                    class.instances,
                    ClassMention {
                        iri: class.iri.clone(),
                        label: class.label.clone(),
                        mention: phrase.mention.clone(),
                        role: phrase.role,
                        applied: false,
                        by_meaning: Some(similarity),
                    },
                ));
            }
        }
    }
    Ok(best.map(|(_, _, mention)| mention))
}

/// A phrase standing where English asks for a kind.
#[derive(Debug, Clone, PartialEq)]
pub struct KindPhrase {
    /// What is compared: the words as written ("tv shows"), or with the last in the singular.
    pub phrase: String,
    /// The question's words it spans ("tv shows").
    pub mention: String,
    pub role: ClassRole,
}

/// The phrases standing where English asks for a kind ([`role_at`]): each word there, and it with
/// the next where neither is a function word or a number ("TV shows"), each as written and in the
/// singular.
pub fn kind_phrases(question: &str, form: &QuestionForm) -> Vec<KindPhrase> {
    use crate::words::is_function_word;
    let words = normalize_tokens(question);
    let mut out = Vec::new();
    for start in 0..words.len() {
        if ASKING.contains(&words[start].as_str()) {
            continue;
        }
        let Some(role) = role_at(&words, start, form) else {
            continue;
        };
        for len in 1..=2 {
            let Some(span) = words.get(start..start + len) else {
                break;
            };
            if span
                .iter()
                .any(|w| is_function_word(w) || w.len() < 2 || w.chars().any(|c| c.is_ascii_digit()))
            {
                break;
            }
            // As written and with its last word in the singular: the rules' singular is not
            // always a word ("movies" → "movy").
            let mut phrase = span.to_vec();
            if let Some(last) = phrase.last_mut() {
                *last = singular(last);
            }
            for text in [span.join(" "), phrase.join(" ")] {
                if out.last().is_none_or(|p: &KindPhrase| p.phrase != text) {
                    out.push(KindPhrase {
                        phrase: text,
                        mention: span.join(" "),
                        role,
                    });
                }
            }
        }
    }
    out
}

/// The classes every resource belongs to by their vocabulary's definition: "how many *things*
/// does X make" asks for anything, and a graph that types only some resources `owl:Thing` (180 of
/// the 2 037 typed subjects of the LC-QuAD slice) would hold the answers to those.
const UNIVERSAL_CLASSES: &[&str] = &[
    "http://www.w3.org/2002/07/owl#Thing",
    "http://www.w3.org/2000/01/rdf-schema#Resource",
    "http://schema.org/Thing",
    "https://schema.org/Thing",
];

/// Whether `iri` is a class of everything ([`UNIVERSAL_CLASSES`]): it says nothing of an answer.
fn universal(iri: &str) -> bool {
    UNIVERSAL_CLASSES.contains(&iri)
}

/// A class's name as a phrase ("television show" for `Television Show`); `None` for a name of
/// function words or of one short word, and for an identifier with a number in it
/// (`WrittenCommunication106349220`, a WordNet synset's class: no question says it).
fn class_phrase(label: &str) -> Option<String> {
    let words: Vec<String> = normalize_tokens(label);
    let unusable = names_nothing(&words) || words.iter().any(|w| w.chars().any(|c| c.is_ascii_digit()));
    (!unusable).then(|| words.join(" "))
}

/// A class name's words that no question's words can be said to name: none, one short word, or
/// only function words.
fn names_nothing(name: &[String]) -> bool {
    name.is_empty() || (name.len() == 1 && name[0].len() < 3) || name.iter().all(|w| crate::words::is_function_word(w))
}

/// Whether a question word (as written, and in the singular) is a class name's word: "cities"
/// is "city", and "movies" is "movie" though the rules make it "movy".
fn names_word(word: &str, singular: &str, name: &str) -> bool {
    singular == name
        || word == name
        || word.strip_suffix('s') == Some(name)
        // Spellings one letter apart in long words ("organization" / "Organisation").
        || (name.len() >= 8 && chatty_kg_graph::text::within_one_edit(singular, name))
}

/// "Which of them are *marks*?", "how many of those are *poems*": the class named after a
/// copula that follows the words referring to an earlier answer, and ending the clause (not
/// "them are *architecture*-independent"), is the class its members must be of.
fn of_a_set(words: &[String], start: usize, len: usize) -> Option<ClassRole> {
    let before = |back: usize| start.checked_sub(back).and_then(|i| words.get(i)).map(String::as_str);
    let copula = matches!(before(1), Some("is" | "are" | "was" | "were"));
    let set = matches!(before(2), Some("them" | "those" | "these"));
    let ends = words.get(start + len).is_none_or(|w| crate::words::is_function_word(w));
    (copula && set && ends).then_some(ClassRole::Answer)
}

/// The role of a class named at `start`, judged from the words before it.
fn role_at(words: &[String], start: usize, form: &QuestionForm) -> Option<ClassRole> {
    let before = |back: usize| start.checked_sub(back).and_then(|i| words.get(i)).map(String::as_str);
    // "Is Lima a city?": a copula opens the question and "a"/"an" + the class end it ("Did Tom
    // Hanks direct a film?" asks for a path, not for a type).
    if form.kind == crate::qir::QuestionKind::Boolean && matches!(before(1), Some("a" | "an")) {
        let copula = matches!(words.first().map(String::as_str), Some("is" | "was" | "are" | "were"));
        return copula.then_some(ClassRole::Membership);
    }
    // "the most populous country": the superlative's words stand right before the class.
    let superlative = &form.superlative_words;
    if !superlative.is_empty()
        && start >= superlative.len()
        && words[start - superlative.len()..start] == superlative[..]
    {
        return Some(ClassRole::Answer);
    }
    // "Which of Jordi Mallach's *packages*": the class a name's possessive stands before, in a
    // "which of" question, is what is asked for.
    if before(1) == Some("s") {
        let mut back = 2;
        while back <= MODIFIERS + 2 && before(back).is_some_and(|w| !crate::words::is_function_word(w)) {
            back += 1;
        }
        if back > 2 && before(back) == Some("of") && matches!(before(back + 1), Some("which" | "what")) {
            return Some(ClassRole::Answer);
        }
    }
    // The class follows the asking word, or its modifiers do ("which *Peruvian* cities", "all
    // *Swiss non-profit* organizations", "which U.S. states"): up to three words that are no
    // function words stand between.
    let mut back = 1;
    while back <= MODIFIERS && before(back).is_some_and(|w| !ASKING.contains(&w) && !crate::words::is_function_word(w))
    {
        back += 1;
    }
    // "the events *which* took place": "which" after a noun opens a relative clause; it asks
    // for nothing.
    let relative = |back: usize| {
        matches!(before(back), Some("which" | "what"))
            && before(back + 1).is_some_and(|w| !crate::words::is_function_word(w) && !ASKING.contains(&w))
    };
    for back in [1, back] {
        if let Some(word) = before(back) {
            if ASKING.contains(&word) && !relative(back) {
                return Some(ClassRole::Answer);
            }
            // "list the cities", "give me the three characters".
            let listing = |at: usize| before(at).is_some_and(|w| LISTING.contains(&w));
            if word == "the"
                && (listing(back + 1) || (matches!(before(back + 1), Some("me" | "us")) && listing(back + 2)))
            {
                return Some(ClassRole::Answer);
            }
            // "Give me *some* organizations", "what are *some* players": asks for some of them.
            if word == "some"
                && form.kind != crate::qir::QuestionKind::Boolean
                && before(back + 1).is_some_and(|w| matches!(w, "me" | "are") || LISTING.contains(&w))
            {
                return Some(ClassRole::Answer);
            }
        }
    }
    None
}

/// Whether `mention` is written as the owner of the asked class: its possessive stands right
/// before the class's words ("Which of *Jordi Mallach's* packages …"). The possessive names no
/// relation: the graph's one hop from the owner to the class is what it says.
pub fn owns_class(question: &str, mention: &str, class: &ClassMention) -> bool {
    let words = normalize_tokens(question);
    let mut owned = normalize_tokens(mention);
    if class.role != ClassRole::Answer || owned.is_empty() {
        return false;
    }
    owned.push("s".to_owned());
    owned.extend(class.mention.split(' ').map(str::to_owned));
    words.windows(owned.len()).any(|w| w == owned.as_slice())
}

/// A word that may stand beside a class in a question about the class alone.
pub fn is_form_word(word: &str) -> bool {
    ABOUT_THE_CLASS.contains(&word)
}

/// The words of a question about a class besides the class, its form's words and its
/// superlative: what else it says ("the highest *numeric value*").
pub fn words_beside(question: &str, class: &ClassMention, form: &QuestionForm) -> Vec<String> {
    let class_words: Vec<&str> = class.mention.split(' ').collect();
    normalize_tokens(question)
        .into_iter()
        .filter(|w| {
            !class_words.contains(&w.as_str())
                && !form.superlative_words.contains(w)
                && !ABOUT_THE_CLASS.contains(&w.as_str())
        })
        .collect()
}

/// Whether nothing but the class (and the question's form words) is left to look up: "how many
/// countries are there?", "which is the largest city?", "list all cities". A question with other
/// content words ("which films did Tom Hnaks star in", a misspelt name) is not about the class
/// alone: its entity must be found.
pub fn about_the_class_alone(question: &str, class: &ClassMention, form: &QuestionForm) -> bool {
    class.role == ClassRole::Answer && words_beside(question, class, form).is_empty()
}

/// Whether the question orders the class's instances by an attribute its other words name
/// ("which character has the highest *numeric value*", "which Unicode version was *released*
/// first"): a superlative over the class, and no name written in it (a capitalised word outside
/// the class's own is an entity to be found: "the largest city in Bavaria").
pub fn ordered_by_words(question: &str, class: &ClassMention, form: &QuestionForm) -> bool {
    let class_words: Vec<&str> = class.mention.split(' ').collect();
    let words = crate::words::words(question);
    // A word right before the class that is neither a form word nor the superlative modifies it
    // ("which *shell* package", "which *Indian* company"): a constraint not found in the graph.
    let modified = words
        .iter()
        .position(|w| class_words.first() == Some(&w.text.as_str()))
        .and_then(|i| i.checked_sub(1))
        .is_some_and(|i| {
            let w = words[i].text.as_str();
            !ABOUT_THE_CLASS.contains(&w) && !form.superlative_words.iter().any(|s| s == w)
        });
    class.role == ClassRole::Answer
        && form.order.is_some()
        && !modified
        && words
            .iter()
            .all(|w| !w.capitalized || class_words.contains(&w.text.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qir::QuestionKind;

    fn class(iri: &str, label: &str, instances: u64) -> ClassProfile {
        ClassProfile {
            iri: iri.into(),
            label: label.into(),
            instances,
        }
    }

    fn spot(question: &str) -> Option<(String, ClassRole)> {
        let classes = [
            class("http://e/City", "city", 40),
            class("http://e/Country", "Country", 10),
            class("http://e/Capital", "capital", 5),
            class("http://e/PopulatedPlace", "populated place", 60),
            class("http://e/Person", "person", 100),
        ];
        let form = QuestionForm::detect(question, Some(QuestionKind::List));
        spot_class(question, &form, &classes).map(|c| (c.iri, c.role))
    }

    #[test]
    fn the_class_an_earlier_answers_members_must_be_of() {
        let city = Some(("http://e/City".to_owned(), ClassRole::Answer));
        assert_eq!(spot("Which of them are cities?"), city);
        assert_eq!(spot("How many of those are cities in the north?"), city);
        // A class word inside a compound is no class: "them are city-owned".
        assert_eq!(spot("Are any of them city-owned?"), None);
        assert_eq!(spot("Which of them are city-owned?"), None);
    }

    #[test]
    fn the_phrases_where_a_kind_is_asked_are_compared_by_meaning() {
        let phrases = |q: &str| {
            let form = QuestionForm::detect(q, Some(QuestionKind::List));
            kind_phrases(q, &form).into_iter().map(|p| p.phrase).collect::<Vec<_>>()
        };
        assert_eq!(
            phrases("Give me all the TV shows with Neil Patrick Harris."),
            ["tv", "tv shows", "tv show", "shows", "show"]
        );
        assert_eq!(phrases("What movies does Jesse Eisenberg play in?"), ["movies", "movy"]);
        assert!(phrases("Who directed Festen?").is_empty());
        assert_eq!(class_phrase("Television Show").as_deref(), Some("television show"));
        assert_eq!(class_phrase("Written Communication106349220"), None);
        assert_eq!(class_phrase("Q5"), None);
    }

    #[test]
    fn classes_are_named_where_a_kind_is_asked_for() {
        let answer = |iri: &str| Some((iri.to_owned(), ClassRole::Answer));
        assert_eq!(spot("Which cities are in Peru?"), answer("http://e/City"));
        assert_eq!(
            spot("How many countries are in South America?"),
            answer("http://e/Country")
        );
        assert_eq!(
            spot("What is the most populous country in Africa?"),
            answer("http://e/Country")
        );
        assert_eq!(spot("Which is the largest city?"), answer("http://e/City"));
        assert_eq!(
            spot("List the populated places of Peru"),
            answer("http://e/PopulatedPlace")
        );
        assert_eq!(spot("How many people were born in Lima?"), answer("http://e/Person"));
        assert_eq!(
            spot("Is Lima a city?"),
            Some(("http://e/City".to_owned(), ClassRole::Membership))
        );
        // "movies" names a class "Movie" though its rule-made singular is "movy".
        let classes = [class("http://e/Movie", "Movie", 3)];
        let form = QuestionForm::detect("Which movies did Tom Hanks star in?", None);
        assert!(spot_class("Which movies did Tom Hanks star in?", &form, &classes).is_some());
        // Modifiers between the asking word and the class.
        assert_eq!(spot("Which Peruvian cities lie on the coast?"), answer("http://e/City"));
        assert_eq!(
            spot("Give me all big populated places"),
            answer("http://e/PopulatedPlace")
        );
        assert_eq!(spot("Which U.S. countries …"), answer("http://e/Country"));
        // "Some" after an asking verb asks for them as "all" does.
        assert_eq!(spot("Give me some cities of Peru"), answer("http://e/City"));
        assert_eq!(spot("What are some cities of Peru?"), answer("http://e/City"));
        assert_eq!(spot("Was Ada born in some city?"), None);
        assert_eq!(spot("Are some cities in Peru larger than Lima?"), None);
        // After a name's possessive in a "which of" question.
        assert_eq!(
            spot("Which of Ada Lovelace's cities is oldest?"),
            answer("http://e/City")
        );
        assert_eq!(spot("Who lived in Ada Lovelace's city?"), None);
        // A spelling one letter apart names a long class name, not a short one.
        let classes = [
            class("http://e/Organisation", "Organisation", 3),
            class("http://e/Cat", "Cat", 3),
        ];
        let form = QuestionForm::detect("Which organizations were founded in 1950?", None);
        assert!(spot_class("Which organizations were founded in 1950?", &form, &classes).is_some());
        let form = QuestionForm::detect("Which cap is red?", None);
        assert!(spot_class("Which cap is red?", &form, &classes).is_none());
        // "a film" in a question about a path is no type check.
        assert_eq!(spot("Did Tom Hanks direct a city?"), None);
        // A class word as a relation word is no constraint.
        assert_eq!(spot("What is the capital of Peru?"), None);
        assert_eq!(spot("Who was born in that city?"), None);
        // "which" after a noun opens a relative clause; after a preposition it still asks.
        let classes = [class("http://e/Place", "place", 30)];
        let form = QuestionForm::detect("Who led the battles which took place in Ohio?", None);
        assert!(spot_class("Who led the battles which took place in Ohio?", &form, &classes).is_none());
        let form = QuestionForm::detect("In which place was Ada born?", None);
        assert!(spot_class("In which place was Ada born?", &form, &classes).is_some());
    }

    #[test]
    fn owners_of_the_class() {
        let class = |mention: &str, role| ClassMention {
            iri: "http://e/Package".into(),
            label: "package".into(),
            mention: mention.into(),
            role,
            applied: false,
            by_meaning: None,
        };
        let packages = class("packages", ClassRole::Answer);
        let q = "Which of Jordi Mallach's packages are large?";
        assert!(owns_class(q, "Jordi Mallach", &packages));
        assert!(!owns_class(q, "Mallach", &class("packages", ClassRole::Membership)));
        assert!(!owns_class(
            "Which packages does Jordi Mallach maintain?",
            "Jordi Mallach",
            &packages
        ));
        assert!(!owns_class(
            "Which of Jordi Mallach's friends' packages?",
            "Jordi Mallach",
            &packages
        ));
    }

    #[test]
    fn a_class_of_everything_names_no_kind() {
        let form = QuestionForm::detect("How many things does Foxconn make?", None);
        let classes = [
            class("http://www.w3.org/2002/07/owl#Thing", "Thing", 180),
            class("http://e/Product", "Product", 20),
        ];
        assert_eq!(spot_class("How many things does Foxconn make?", &form, &classes), None);
        let form = QuestionForm::detect("How many products does Foxconn make?", None);
        assert_eq!(
            spot_class("How many products does Foxconn make?", &form, &classes).map(|c| c.iri),
            Some("http://e/Product".to_owned())
        );
    }

    #[test]
    fn singulars() {
        for (plural, one) in [
            ("cities", "city"),
            ("countries", "country"),
            ("churches", "church"),
            ("films", "film"),
            ("people", "person"),
            ("boxes", "box"),
            ("prizes", "prize"),
            ("buzzes", "buzz"),
            ("status", "status"),
            ("class", "class"),
            ("bus", "bus"),
        ] {
            assert_eq!(singular(plural), one, "{plural}");
        }
    }
}
