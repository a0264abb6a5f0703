//! A dialogue benchmark for a KG that ships none, built from MetaQA dev questions, so that
//! retention (dialogue F1 / standalone F1) can be measured offline.
//!
//! Every dialogue is about one *referent*: a person (actor, director, writer) or a movie. Its
//! first turn names the referent; every later turn is a 2-hop or 3-hop dev question whose topic
//! entity is the referent, with the name replaced by a pronoun. Two kinds:
//!
//! - **entity**: turn 1 is a 2/3-hop question about the referent (it is the topic entity);
//! - **answer**: turn 1 is a 1-hop question whose *single* gold answer is the referent
//!   ("who directed Forrest Gump" → Robert Zemeckis; then "what genres are the movies written by
//!   them").
//!
//! The pronoun follows the referent's type and the name's place in the question: persons get the
//! singular "they" / "them" / "their" (MetaQA does not record gender), movies "it" / "its". The
//! name is a subject after "did/was/that…" or at the start (with the verb made to agree: "does
//! they" → "do they", "they appears" → "they appear"), possessive before "'s" or a noun ("[X]
//! movies", "[X] actors"), an object otherwise; "the actor [X]" becomes the pronoun alone. A
//! question where the name is not found exactly once is not used.
//!
//! A later turn is used only when the pronoun can point at one entity: no earlier turn may have
//! another topic of the referent's class, nor another answer of that class ("it" could mean
//! another single movie; "they" any persons answered before). Each turn keeps the original question
//! (brackets removed) as its standalone version and its dev gold answers. Output is the
//! Chatty-Gen format (`data[]` with `dialogue[]`, `original[]`, `answers[]`) plus per-turn tags
//! (`reference`, `hops`, `qtype`), which [`crate::loaders::chatty_gen`] reads.

use crate::dataset::Item;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a pronoun can refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Person,
    Movie,
}

impl Class {
    /// The class of a MetaQA type name (`actor`, `movie`, …); other types (year, genre, tag,
    /// language) are not referred to.
    pub fn of(kind: &str) -> Option<Class> {
        match kind {
            "actor" | "director" | "writer" => Some(Class::Person),
            "movie" => Some(Class::Movie),
            _ => None,
        }
    }

    fn forms(self) -> [&'static str; 3] {
        match self {
            Class::Person => ["they", "them", "their"],
            Class::Movie => ["it", "it", "its"],
        }
    }
}

/// `question` with its one mention of `name` replaced by a pronoun of `class`, or `None` when
/// the name is not there exactly once (as a whole phrase).
pub fn refer(question: &str, name: &str, class: Class) -> Option<String> {
    let at = whole_phrase(question, name)?;
    let (mut before, after) = (&question[..at], &question[at + name.len()..]);
    let [subject, object, possessive] = class.forms();
    let words_after: Vec<String> = after
        .split_whitespace()
        .take(2)
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase()
        })
        .collect();
    // "the actor [X] …": the appositive goes with the name.
    let mut previous = last_word(before);
    if APPOSITIVES.contains(&previous.as_str()) {
        let without = before.trim_end()[..before.trim_end().len() - previous.len()].trim_end();
        if last_word(without) == "the" {
            before = without.trim_end()[..without.trim_end().len() - 3].trim_end();
            previous = last_word(before);
        }
    }
    let mut after = after.to_owned();
    let form = if let Some(rest) = after.strip_prefix(" 's").or_else(|| after.strip_prefix("'s")) {
        after = rest.to_owned();
        possessive
    } else if words_after.first().is_some_and(|w| NOUNS.contains(&w.as_str()))
        || (words_after.first().is_some_and(|w| PARTICIPLES.contains(&w.as_str()))
            && words_after.get(1).is_some_and(|w| NOUNS.contains(&w.as_str())))
    {
        possessive
    } else if before.trim().is_empty() || SUBJECT_CUES.contains(&previous.as_str()) {
        subject
    } else {
        object
    };
    let mut before = before.trim_end().to_owned();
    if form == "they" {
        // Singular "they" takes the plural verb.
        if let Some(plural) = AGREEMENT.iter().find(|(s, _)| *s == previous).map(|(_, p)| *p) {
            before.truncate(before.len() - previous.len());
            before.push_str(plural);
        }
        let next = words_after.first().map_or("", String::as_str);
        if let Some(plural) = AGREEMENT.iter().find(|(s, _)| *s == next).map(|(_, p)| *p) {
            after = after.replacen(next, plural, 1);
        }
    }
    let space = if before.is_empty() { "" } else { " " };
    Some(format!("{before}{space}{form}{after}"))
}

/// Third-person singular verbs and what "they" takes instead.
const AGREEMENT: &[(&str, &str)] = &[
    ("is", "are"),
    ("was", "were"),
    ("has", "have"),
    ("does", "do"),
    ("appears", "appear"),
    ("stars", "star"),
    ("acts", "act"),
    ("writes", "write"),
    ("directs", "direct"),
];

const APPOSITIVES: &[&str] = &["actor", "director", "writer", "screenwriter", "movie", "film"];
const NOUNS: &[&str] = &[
    "movie",
    "movies",
    "film",
    "films",
    "actor",
    "actors",
    "director",
    "directors",
    "writer",
    "writers",
    "screenwriter",
    "screenwriters",
    "co-writers",
    "co-stars",
];
const PARTICIPLES: &[&str] = &["written", "directed", "starred", "acted"];
const SUBJECT_CUES: &[&str] = &[
    "did", "does", "do", "has", "have", "had", "was", "is", "that", "which", "who", "films", "movies", "where",
];

fn last_word(text: &str) -> String {
    text.split_whitespace().last().unwrap_or("").to_lowercase()
}

/// The byte offset of the one occurrence of `name` in `text` bounded by non-alphanumerics.
fn whole_phrase(text: &str, name: &str) -> Option<usize> {
    if name.is_empty() {
        return None;
    }
    let hits: Vec<usize> = text
        .match_indices(name)
        .map(|(i, _)| i)
        .filter(|&i| {
            let before = text[..i].chars().next_back();
            let after = text[i + name.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
        .collect();
    match hits[..] {
        [one] => Some(one),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy)]
pub struct BuildOptions {
    /// How many dialogues (half of each kind, as far as the questions allow).
    pub dialogues: usize,
    /// Turns per dialogue, at most (at least 2).
    pub max_turns: usize,
    pub seed: u64,
}

/// The file written: Chatty-Gen's shape plus answers and tags.
#[derive(Debug, Clone, Serialize)]
pub struct DialogueFile {
    pub description: String,
    pub data: Vec<Dialogue>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Dialogue {
    pub id: String,
    /// The referent's name.
    pub seed_label: String,
    pub dialogue: Vec<String>,
    pub original: Vec<String>,
    pub answers: Vec<Vec<String>>,
    pub tags: Vec<BTreeMap<String, String>>,
}

/// A MetaQA question with what the builder needs from its tags.
#[derive(Clone, Copy)]
struct Question<'a> {
    item: &'a Item,
    topic: &'a str,
    topic_class: Option<Class>,
    answer_class: Option<Class>,
}

impl<'a> Question<'a> {
    fn new(item: &'a Item) -> Option<Self> {
        let qtype = item.tags.get("qtype")?;
        let kinds: Vec<&str> = qtype.split("_to_").collect();
        Some(Question {
            item,
            topic: item.tags.get("topic")?,
            topic_class: Class::of(kinds.first()?),
            answer_class: Class::of(kinds.last()?),
        })
    }

    fn gold(&self) -> &[String] {
        self.item.gold.as_deref().unwrap_or_default()
    }

    /// The entities of `class` a pronoun after this turn could mean: its topic, and its answers
    /// of that class (for "it", only a single one; "they" also reads as several persons).
    fn salient(&self, class: Class) -> Vec<&str> {
        let mut out = Vec::new();
        if self.topic_class == Some(class) {
            out.push(self.topic);
        }
        if self.answer_class == Some(class) && (class == Class::Person || self.gold().len() == 1) {
            out.extend(self.gold().iter().map(String::as_str));
        }
        out
    }

    fn tags(&self, reference: &str) -> BTreeMap<String, String> {
        let mut tags = BTreeMap::new();
        tags.insert("reference".to_owned(), reference.to_owned());
        for key in ["hops", "qtype"] {
            if let Some(v) = self.item.tags.get(key) {
                tags.insert(key.to_owned(), v.clone());
            }
        }
        tags
    }
}

/// Builds dialogues from MetaQA dev items (as [`crate::loaders::metaqa::load`] returns them, with
/// `topic` and `qtype` tags): `one_hop` for the first turns of answer-reference dialogues,
/// `multi_hop` (2-hop and 3-hop) for everything else. Deterministic for a seed.
pub fn build(one_hop: &[Item], multi_hop: &[Item], options: &BuildOptions) -> Vec<Dialogue> {
    let max_turns = options.max_turns.max(2);
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    // Questions about each referent, in file order, then shuffled per referent.
    let mut about: BTreeMap<(&str, Class), Vec<Question>> = BTreeMap::new();
    for q in multi_hop.iter().filter_map(Question::new) {
        if let Some(class) = q.topic_class
            && refer(&q.item.question, q.topic, class).is_some()
        {
            about.entry((q.topic, class)).or_default().push(q);
        }
    }
    for questions in about.values_mut() {
        questions.shuffle(&mut rng);
    }
    let mut entity_seeds: Vec<(&str, Class)> = about.iter().filter(|(_, qs)| qs.len() >= 2).map(|(k, _)| *k).collect();
    entity_seeds.shuffle(&mut rng);
    // Each with its referent: its single gold answer, of a class a pronoun can refer to.
    let mut answer_seeds: Vec<(Question, &str, Class)> = one_hop
        .iter()
        .filter_map(Question::new)
        .filter_map(|q| match (q.answer_class, q.item.gold.as_deref()) {
            (Some(class), Some([one]))
                if q.topic_class != Some(class) && about.contains_key(&(one.as_str(), class)) =>
            {
                Some((q, one.as_str(), class))
            }
            _ => None,
        })
        .collect();
    answer_seeds.shuffle(&mut rng);

    let mut used = BTreeSet::new();
    let mut dialogues = Vec::new();
    let (mut entities, mut answers) = (entity_seeds.into_iter(), answer_seeds.into_iter());
    while dialogues.len() < options.dialogues {
        // Alternate the kinds, answer first (its referents are rarer); when one runs out, the
        // other goes on.
        let seed = if dialogues.len() % 2 == 0 {
            answers
                .next()
                .map(Seed::Answer)
                .or_else(|| entities.next().map(Seed::Entity))
        } else {
            entities
                .next()
                .map(Seed::Entity)
                .or_else(|| answers.next().map(Seed::Answer))
        };
        let built = match seed {
            None => break,
            Some(Seed::Answer((first, referent, class))) => {
                chain(first, referent, class, &about, &used, max_turns, "answer")
            }
            Some(Seed::Entity((referent, class))) => {
                let first = about[&(referent, class)][0];
                chain(first, referent, class, &about, &used, max_turns, "entity")
            }
        };
        if let Some((dialogue, keys)) = built {
            used.extend(keys);
            dialogues.push(dialogue);
        }
    }
    dialogues
}

enum Seed<'a> {
    Entity((&'a str, Class)),
    Answer((Question<'a>, &'a str, Class)),
}

fn key(q: &Question) -> String {
    format!("{}:{}", q.item.tags.get("hops").map_or("", String::as_str), q.item.id)
}

/// Turn 1 `first`, then questions about `referent` with a pronoun, as long as each stays
/// unambiguous; `None` when not even one later turn qualifies.
fn chain<'a>(
    first: Question<'a>,
    referent: &str,
    class: Class,
    about: &BTreeMap<(&str, Class), Vec<Question<'a>>>,
    used: &BTreeSet<String>,
    max_turns: usize,
    reference: &str,
) -> Option<(Dialogue, Vec<String>)> {
    if used.contains(&key(&first)) {
        return None;
    }
    let mut turns = vec![(first, None::<String>)];
    let candidates = about.get(&(referent, class))?;
    for q in candidates {
        if turns.len() == max_turns {
            break;
        }
        if used.contains(&key(q)) || turns.iter().any(|(t, _)| std::ptr::eq(t.item, q.item)) {
            continue;
        }
        let ambiguous = turns
            .iter()
            .flat_map(|(t, _)| t.salient(class))
            .any(|other| other != referent);
        if ambiguous {
            break;
        }
        let Some(asked) = refer(&q.item.question, referent, class) else {
            continue;
        };
        turns.push((*q, Some(asked)));
    }
    if turns.len() < 2 {
        return None;
    }
    let id = format!(
        "{reference}-{}",
        turns.iter().map(|(t, _)| key(t)).collect::<Vec<_>>().join("-")
    );
    let dialogue = Dialogue {
        id,
        seed_label: referent.to_owned(),
        dialogue: turns
            .iter()
            .map(|(t, asked)| asked.clone().unwrap_or_else(|| t.item.question.clone()))
            .collect(),
        original: turns.iter().map(|(t, _)| t.item.question.clone()).collect(),
        answers: turns.iter().map(|(t, _)| t.gold().to_vec()).collect(),
        tags: turns.iter().map(|(t, _)| t.tags(reference)).collect(),
    };
    Some((dialogue, turns.iter().map(|(t, _)| key(t)).collect()))
}

/// The `description` written at the top of a built file.
pub fn describe(options: &BuildOptions, sources: &[String]) -> String {
    format!(
        "Dialogues built by `chatty-kg build-dialogues` (seed {}, at most {} turns) from the MetaQA dev \
         questions in {}. Turn 1 names the referent (a person or a movie): either a 2/3-hop question \
         about it (reference=entity) or a 1-hop question whose single gold answer it is \
         (reference=answer). Later turns are 2/3-hop dev questions about the referent with its name \
         replaced by a pronoun; original[] keeps them standalone, answers[] holds the dev gold answers.",
        options.seed,
        options.max_turns.max(2),
        sources.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, question: &str, qtype: &str, gold: &[&str]) -> Item {
        let topic = question.split_once('[').unwrap().1.split_once(']').unwrap().0;
        let mut tags = BTreeMap::new();
        tags.insert("topic".to_owned(), topic.to_owned());
        tags.insert("qtype".to_owned(), qtype.to_owned());
        tags.insert("hops".to_owned(), qtype.matches("_to_").count().to_string());
        Item {
            id: id.to_owned(),
            question: question.replace(['[', ']'], ""),
            gold: Some(gold.iter().map(|g| (*g).to_owned()).collect()),
            gold_sparql: None,
            tags,
            dialogue: None,
        }
    }

    #[test]
    fn pronouns_follow_the_names_place() {
        let person = |q: &str, name: &str| refer(q, name, Class::Person).unwrap();
        let movie = |q: &str, name: &str| refer(q, name, Class::Movie).unwrap();
        assert_eq!(
            person("who directed the films written by Simon Brett", "Simon Brett"),
            "who directed the films written by them"
        );
        // Singular "they" with the verb made to agree.
        assert_eq!(person("what does Tom Hanks act in", "Tom Hanks"), "what do they act in");
        assert_eq!(
            person("which movies was Eileen Moore an actor in", "Eileen Moore"),
            "which movies were they an actor in"
        );
        assert_eq!(
            person("Tom Hanks appears in which movies", "Tom Hanks"),
            "they appear in which movies"
        );
        assert_eq!(
            person("what films did Tom Hanks act in", "Tom Hanks"),
            "what films did they act in"
        );
        assert_eq!(
            person("Tom Hanks starred in which movies", "Tom Hanks"),
            "they starred in which movies"
        );
        assert_eq!(
            person(
                "who is listed as director of Marc Connelly written movies",
                "Marc Connelly"
            ),
            "who is listed as director of their written movies"
        );
        assert_eq!(
            person(
                "the actor Taylor Kitsch appeared in the same movie with who",
                "Taylor Kitsch"
            ),
            "they appeared in the same movie with who"
        );
        assert_eq!(
            movie(
                "who wrote movies that share actors with the movie The Spirit of St. Louis",
                "The Spirit of St. Louis"
            ),
            "who wrote movies that share actors with it"
        );
        assert_eq!(
            movie("when did the films starred by The Champ actors release", "The Champ"),
            "when did the films starred by its actors release"
        );
        assert_eq!(movie("who is Up 's director", "Up"), "who is its director");
        // Not a whole word, or twice: no rewrite.
        assert_eq!(refer("who starred in Upside Down", "Up", Class::Movie), None);
        assert_eq!(refer("Heat and Heat", "Heat", Class::Movie), None);
    }

    #[test]
    fn dialogues_chain_questions_about_one_referent_unambiguously() {
        let one_hop = vec![
            item(
                "0",
                "who directed [Forrest Gump]",
                "movie_to_director",
                &["Robert Zemeckis"],
            ),
            // Two answers: cannot be the referent of a singular pronoun.
            item(
                "1",
                "who starred in [Heat]",
                "movie_to_actor",
                &["Al Pacino", "Robert De Niro"],
            ),
        ];
        let multi_hop = vec![
            item(
                "0",
                "what genres are the movies directed by [Robert Zemeckis]",
                "director_to_movie_to_genre",
                &["Drama", "Comedy"],
            ),
            item(
                "1",
                "when did the movies directed by [Robert Zemeckis] release",
                "director_to_movie_to_year",
                &["1994"],
            ),
            item(
                "2",
                "who acted in the movies directed by [Michael Mann]",
                "director_to_movie_to_actor",
                &["Al Pacino", "Tom Cruise"],
            ),
            // Person answers: after them, "them" would be ambiguous.
            item(
                "3",
                "who wrote the movies directed by [Michael Mann]",
                "director_to_movie_to_writer",
                &["Frank Pierson"],
            ),
            item(
                "4",
                "what languages are the movies directed by [Michael Mann] in",
                "director_to_movie_to_language",
                &["English"],
            ),
        ];
        let options = BuildOptions {
            dialogues: 10,
            max_turns: 3,
            seed: 7,
        };
        let built = build(&one_hop, &multi_hop, &options);
        assert_eq!(built, build(&one_hop, &multi_hop, &options), "deterministic for a seed");
        let answer = built
            .iter()
            .find(|d| d.tags[0]["reference"] == "answer")
            .expect("an answer dialogue");
        assert_eq!(answer.seed_label, "Robert Zemeckis");
        assert_eq!(answer.dialogue[0], "who directed Forrest Gump");
        assert_eq!(answer.dialogue.len(), 3);
        for (asked, original) in answer.dialogue[1..].iter().zip(&answer.original[1..]) {
            assert!(asked.ends_with("by them") || asked.contains("by them "), "{asked}");
            assert!(original.contains("Robert Zemeckis"), "{original}");
        }
        assert_eq!(answer.answers[0], vec!["Robert Zemeckis"]);
        // Zemeckis's 2-hop questions went to the answer dialogue, so no entity dialogue repeats them;
        // Michael Mann's dialogue stops after a turn whose answers are persons.
        let entity: Vec<_> = built.iter().filter(|d| d.tags[0]["reference"] == "entity").collect();
        assert!(entity.iter().all(|d| d.seed_label == "Michael Mann"), "{entity:?}");
        for d in &entity {
            assert!(d.dialogue[0].contains("Michael Mann"));
            assert!(
                d.dialogue[1..]
                    .iter()
                    .all(|q| q.contains("them") && !q.contains("Michael Mann"))
            );
            let persons_before_last = d.original[..d.original.len() - 1].iter().any(|q| q.starts_with("who"));
            assert!(!persons_before_last, "a turn after one answered with persons: {d:?}");
            assert_eq!(d.tags.len(), d.dialogue.len());
        }
        assert_eq!(built.len(), 1 + entity.len());
    }
}
