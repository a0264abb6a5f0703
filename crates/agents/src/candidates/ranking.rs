//! Path ranking: how well a relation path says what the question says.
//!
//! The question's content words (the linked mentions, function words and question words removed)
//! are its *units*; the QIR's relation phrases, when a model wrote them, join as weaker units
//! (evidence, not the plan). A path's hops are compared with the units by sentence-embedding
//! similarity, raised to a fixed floor when they share a stem ("director" / "directed by"):
//!
//! - **support** (precision): hops are matched to units one to one, best pairs first; a hop that
//!   finds no unit of its own supports nothing. Two hops may share a unit only when the question
//!   says so ("films that *share* directors with X", "whose directors *also* directed X").
//!   Similarity is evidence between a floor (0.25, unrelated words) and full support (0.55).
//! - **coverage** (recall): every unit that resembles some predicate of the graph should be said
//!   by some hop, as well as the best predicate the search found says it; units that resemble
//!   nothing ("films" in a graph without such a predicate) weigh nothing.
//! - **order**: the hop nearest the anchor should be said nearest the mention ("the director *of
//!   X*", "X's *spouse*'s nationality"), so hop order must agree with word distance.
//! - **answer kind**: "when" wants a date or year at the end of the path, "who" a vertex, "how
//!   many" a vertex to count or a number the graph stores.
//! - **hop prior**: each extra hop costs a little, so a longer path must say more to win.
//! - **sharing**: "films that *share* a director with X" goes out and back through one relation
//!   (X → director → ? ← director ← answer); such a path gains when the question says so (a
//!   sharing word, or the relation named twice: "directed by the director of X"), and loses
//!   otherwise (it mostly comes back to X). With two anchors to list or count, a sharing word
//!   ("given to *both* X and Y") says the anchors share the answer, which their join does.
//! - **the asked noun names the answers**: the noun the question asks for ("which *airports*
//!   does X serve"), where a hop is named after it, is said only by the last hop, which reaches
//!   the answers; "hub airport → city served" answers cities, and its first hop says nothing.
//! - **direction**: a relation named after a preposition ("depends on", "directed by") runs the
//!   way the mention stands: "packages that depend *on X*" towards X, "the package *X depends
//!   on*" away from it, "the films *X directed*" (a passive name) towards it.
//!
//! Score = (support + coverage) / 2 + order + kind + direction + sharing − hop prior −
//! unjustified hops. The weights are stated below; the margin that decides whether the
//! model is asked is `AgentParameters::path_margin`.

use crate::candidates::paths::{EndKind, Hop, RelationPath};
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::qir::QuestionKind;
use crate::similarity::{STEM_MATCH, embed};
use crate::understanding::form::{Expectation, QuestionForm, counting_word};
use crate::words::is_function_word;
use crate::words::words as words_of;
use crate::words::{NOT_RELATIONS, PREPOSITIONS, REQUESTS, SHARING_WORDS, shares_stem};
use crate::words::{Word, words};
use chatty_kg_embed::cosine;
use chatty_kg_graph::text::normalize_tokens;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Taken from [`STEM_MATCH`] when the label has words the question does not write: "who
/// *produced* X" says "producer" more than "executive producer". Once, however many: a long
/// name ("book book subject works") is no less the relation its last word says.
const STEM_UNSAID_WORDS: f32 = 0.02;
/// Similarity at or below this says nothing (unrelated words score 0.1–0.3 with MiniLM); units
/// resembling no predicate of the graph above it weigh nothing in coverage.
const RELEVANCE_FLOOR: f32 = 0.25;
/// Similarity at or above this is full evidence that a hop says a word ("born" / "birth place"
/// is 0.60): a hop is not worth less for being said in other words.
pub(crate) const FULL_SUPPORT: f32 = 0.55;
/// The QIR's phrases weigh this much against the question's own words.
const QIR_PHRASE_WEIGHT: f32 = 0.5;
/// Each hop beyond the first.
const HOP_PENALTY: f32 = 0.03;
/// Full agreement (or disagreement) of hop order and word distance.
const ORDER_WEIGHT: f32 = 0.04;
/// The end of the path is (not) what the question expects.
const KIND_MATCH: f32 = 0.12;
const KIND_MISMATCH: f32 = -0.15;

/// A path that goes out and back through one relation, when the question says the two share it.
const SHARED_RELATION: f32 = 0.08;
/// A path that goes out and straight back through one relation when the question does not say
/// so: it mostly returns to where it started.
const NEEDLESS_RETURN: f32 = -0.1;

/// A hop of a longer path justifies itself by a word of its own that it resembles at least this
/// much ("depends on" is no saying of "installed").
const JUSTIFIES: f32 = 0.35;
/// Each hop that does not.
pub(crate) const UNJUSTIFIED_HOP: f32 = 0.15;
/// A relation named after a preposition ("canonized by") read the way its object stands in the
/// question.
const AGENT_DIRECTION: f32 = 0.05;

/// A "where" question's path whose last hop is named after a place.
const PLACE_MATCH: f32 = 0.06;

/// A scored path, as the explanation shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredPath {
    pub path: RelationPath,
    /// "Tom Hanks → starred actors (of) → directed by".
    pub text: String,
    pub score: f32,
    pub support: f32,
    pub coverage: f32,
    /// The values it reached include instances of the class the question names ("which
    /// *cities*"): such paths go first, and their answers are held to the class.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reaches_class: bool,
    /// It also reaches things the graph types as another kind: the class selects among its
    /// values, and only the class's instances answer (else untyped values stay).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub class_selects: bool,
    /// The class selects though the path's own values are all of it or of no class: the graph
    /// types fewer than half of them as the class, and its last relation holds of other kinds
    /// of things elsewhere in the graph ("born in": actors, swimmers, horses), so a value of no
    /// class is not taken for an instance.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kinds_elsewhere: bool,
    /// Hops that say nothing of the question no other hop says (each costs the score
    /// [`UNJUSTIFIED_HOP`]), unless the graph needs them to reach the question's other anchor.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unjustified: usize,
    /// Its first relation runs against the way the question's words put it ("the package X
    /// *depends on*" read as the packages that depend on X): the words tell it apart from the
    /// path the other way, whatever else ties them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub against_words: bool,
    /// A count ("how many …") whose best path reached a single value: this path, scored within
    /// a tie of it, reaches several and was put first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub several: bool,
    /// Kept though no word of the question says it: its anchor modifies the asked-for noun
    /// ("which *Runic* characters …"), so the graph's one hop relates them. Evidence for a join,
    /// not a reason to give up when the join finds nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsaid: bool,
    /// How much its last relation resembles the noun the question asks for, where that noun is
    /// no relation word (no predicate is named after it: "the *actors* of X" beside "starring")
    /// and names no class of the graph (a class tells the answers apart itself): no part of the
    /// score, it orders paths the score ties ("author", "director", "starring" all at 0).
    #[serde(default, skip_serializing_if = "is_zero_f32")]
    pub like_asked: f32,
}

fn is_zero_f32(x: &f32) -> bool {
    *x == 0.0
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

struct Unit {
    text: String,
    /// Index among the question's words (`None` for QIR phrases).
    position: Option<usize>,
    weight: f32,
    /// The noun a question word asks for ("which *books*", "how many *films*"): the answer's
    /// type, a relation only when some predicate is named after it ("what *languages*" / "in
    /// language").
    asked_type: bool,
    /// The asked-for noun names a class of the graph ("which *languages* …" with a class
    /// Language): a kind of answer, never a relation, whatever predicate shares its name.
    class_word: bool,
    /// The noun right after the question word ("which *airports*", "give me the *capitals*"):
    /// it names the answers themselves, so only a path's last hop may say it.
    asked_noun: bool,
    /// What is embedded for it, when not `text`: "where … die" is a place of death, "when …
    /// die" its date, where "die" alone is as much its cause.
    phrase: Option<String>,
}

/// How much of its likeness a hop walked backwards says of the asked noun when its name is a
/// noun for its object ([`PathRanker::say`]).
const OBJECT_NOUN_BACKWARDS: f32 = 0.5;

/// An asked-for type noun counts as a relation word only when a predicate is this similar to it
/// (a shared stem is 0.9; "films" / "starred actors" is 0.54, "books" / "author" 0.50).
const TYPE_IS_RELATION: f32 = 0.7;

/// What [`PathRanker::score`] finds of one path.
pub(crate) struct Scores {
    pub score: f32,
    pub support: f32,
    pub coverage: f32,
    pub unjustified: usize,
    pub against_words: bool,
}

/// Ranks the paths of one question.
pub(crate) struct PathRanker {
    units: Vec<Unit>,
    unit_vectors: Vec<Vec<f32>>,
    /// label → similarity to each unit.
    similarities: HashMap<String, Vec<f32>>,
    /// Each unit's best similarity to any label seen so far.
    relevance: Vec<f32>,
    words: Vec<Word>,
    /// Per anchor: the word span of its mention.
    spans: Vec<Option<(usize, usize)>>,
    /// Two hops may go through one relation: a sharing word, or a relation named twice.
    sharing: bool,
    sharing_word: bool,
    /// Words whose relation the question names twice ("directed" … "director").
    repeated: Vec<String>,
    form: QuestionForm,
    /// The unit "place" of a "where" question.
    place: Option<usize>,
    /// Some path reaches instances of the class the question asks for: its words are a kind of
    /// answer, not a relation ([`PathRanker::confirm_class`]).
    class_confirmed: bool,
    /// Per anchor: the first hop every path found from it takes (the anchor has one relation),
    /// which the words cannot choose and need not justify ([`PathRanker::forced_first_hops`]).
    forced: HashMap<usize, (String, bool)>,
    /// Per anchor: its mention modifies the noun the question asks for ("which *Runic*
    /// characters", "characters *of the Emoticons block*", "*Jordi Mallach's* packages"), so its
    /// relation to the answers goes unsaid ([`PathRanker::attached`]).
    attached: Vec<bool>,
    /// The question names a class of the graph as its answers' kind: the class tells paths
    /// apart, not the asked noun's likeness to them ([`ScoredPath::like_asked`]).
    class_named: bool,
}

impl PathRanker {
    /// `mentions[i]` is anchor i's mention as written in the question and `labels[i]` its
    /// vertex's label (looked for when a model's mention is not written verbatim); `phrases` the
    /// QIR's relation phrases when a model wrote them; `class` the words that name the class the
    /// answers must be, when the question names one.
    pub(crate) async fn new(
        ctx: &AgentContext,
        question: &str,
        mentions: &[String],
        labels: &[String],
        phrases: &[String],
        form: &QuestionForm,
        class: Option<&str>,
    ) -> Result<Self, AgentError> {
        let words = words(question);
        let relation_words = ctx.relation_words().await;
        let relation_run = |i: usize| {
            let (mut start, mut end) = (i, i + 1);
            // A run of capitals ends at a possessive ("Hexx Bolt's | SKU").
            while start > 0 && words[start - 1].capitalized && !words[start - 1].possessive {
                start -= 1;
            }
            while end < words.len() && words[end].capitalized && !words[end - 1].possessive {
                end += 1;
            }
            crate::linking::spotting::names_a_relation(
                start
                    .checked_sub(1)
                    .map(|i| (words[i].text.as_str(), words[i].possessive)),
                words[start..end].iter().map(|w| w.text.as_str()),
                &relation_words,
            )
        };
        let class_span = class.and_then(|c| find_span(&words, c));
        let in_class = |i: usize| class_span.is_some_and(|(s, e)| i >= s && i < e);
        let spans: Vec<Option<(usize, usize)>> = mentions
            .iter()
            .enumerate()
            .map(|(i, m)| find_span(&words, m).or_else(|| find_span(&words, labels.get(i)?)))
            .collect();
        let in_mention = |i: usize| spans.iter().flatten().any(|(s, e)| i >= *s && i < *e);
        // "The architect of the *historic places* whose architect is X": the noun phrase a
        // "whose" clause describes, where another noun is "of" it, is the kind of a vertex on
        // the way to the answers; no hop need say it.
        let kinds = clause_kinds(&words, &in_mention);
        let in_kind = |i: usize| kinds.iter().any(|(s, e)| i >= *s && i < *e);
        // "the film X", "a city X": the noun between an article and a mention is the mention's
        // type, not a relation. A "that" after a noun starts a clause: "the packages that
        // *recommend* X" is a verb of the relation.
        let apposition = |i: usize| {
            spans.iter().flatten().any(|(s, _)| {
                i + 1 == *s
                    && i > 0
                    && match words[i - 1].text.as_str() {
                        "the" | "a" | "an" | "this" => true,
                        "that" => i < 2 || is_function_word(&words[i - 2].text),
                        _ => false,
                    }
            })
        };
        // The noun a mention is "of" ("the *director* of X"), or that follows its possessive.
        let governs = |i: usize| {
            spans.iter().flatten().any(|(s, e)| {
                (i + 2 == *s && words[i + 1].text == "of") || (i == *e && *e > 0 && words[e - 1].possessive)
            })
        };
        // The noun a clause's kind is "of" ("the *architect* of the historic places whose …"):
        // each kind stands after "of" and an article.
        let governs_kind = |i: usize| kinds.iter().any(|&(s, _)| i + 3 == s);
        // With two anchors to list or count ("awards given to *both* X and Y"), the sharing word
        // says the anchors share the answer, which their join does; no path goes out and back.
        let sharing = (mentions.len() < 2 || form.kind == QuestionKind::Boolean)
            && words.iter().any(|w| SHARING_WORDS.contains(&w.text.as_str()));
        let superlative = |i: usize| form.superlative_words.iter().any(|w| *w == words[i].text);
        // Another word of the order the question asks for ("the highest values, *highest
        // first*", "from oldest to *newest*"): it sorts the answers, it names no relation.
        let ordering = |i: usize| {
            let w = words[i].text.as_str();
            form.order.is_some()
                && crate::understanding::form::is_superlative(w)
                && (!matches!(w, "first" | "last")
                    || i.checked_sub(1)
                        .is_some_and(|p| crate::understanding::form::is_superlative(&words[p].text)))
        };
        let asked = asked_noun(&words, &in_mention, &superlative);
        let attached = attached_mentions(&words, &spans, asked, class_span);
        // A value constraint's words name an attribute of the answers, not a hop of the path
        // ("films directed by X *released after* 2000"): the planner applies them.
        let constrained: Vec<String> = form.constraint.as_ref().map_or_else(Vec::new, |c| {
            let mut w = c.attribute_words.clone();
            w.extend(words_of(&c.phrase).into_iter().map(|w| w.text));
            w
        });
        let mut units = Vec::new();
        for (i, word) in words.iter().enumerate() {
            let w = word.text.as_str();
            // A capitalised word inside the question is a name (one no mention covers: "Peru"
            // when only "Lima" was linked), not a relation, unless its run of capitals names one
            // (`names_a_relation`: "the *ISBN* of …", "X's *Homepage*").
            let name = word.capitalized && !relation_run(i);
            if in_mention(i)
                || (in_kind(i) && asked != Some(i))
                || (form.kind == QuestionKind::Count && counting_word(&words, i))
                || (i == 0 && REQUESTS.contains(&w))
                || apposition(i)
                || name
                || is_function_word(w)
                || NOT_RELATIONS.contains(&w)
                || SHARING_WORDS.contains(&w)
                || form.superlative_words.iter().any(|s| s == w)
                || ordering(i)
                || w.chars().all(|c| c.is_ascii_digit())
                || constrained.iter().any(|c| c == w)
            {
                continue;
            }
            units.push(Unit {
                text: w.to_owned(),
                position: Some(i),
                weight: 1.0,
                asked_type: asked == Some(i) || in_class(i),
                class_word: in_class(i) && !governs(i),
                asked_noun: asked == Some(i),
                phrase: None,
            });
        }
        // "Where" asks for a place: a last hop named after one ("birth place", "foundation
        // place") says more of the question than one that only shares its verb ("founded by" for
        // "where was X founded"). A unit of no weight: it is compared with the last hop only,
        // and never justifies a hop of its own.
        let place = words.iter().take(4).any(|w| w.text == "where").then(|| {
            units.push(Unit {
                text: "place".to_owned(),
                position: None,
                weight: 0.0,
                asked_type: false,
                class_word: false,
                asked_noun: false,
                phrase: None,
            });
            units.len() - 1
        });
        for phrase in phrases {
            // A superlative's words rank the answers; they are no relation of the path.
            let phrase = phrase
                .split_whitespace()
                .filter(|w| !form.superlative_words.iter().any(|s| s.eq_ignore_ascii_case(w)))
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            if !phrase.is_empty() && !units.iter().any(|u| u.text == phrase) {
                units.push(Unit {
                    text: phrase,
                    position: None,
                    weight: QIR_PHRASE_WEIGHT,
                    asked_type: false,
                    class_word: false,
                    asked_noun: false,
                    phrase: None,
                });
            }
        }
        // A relation named twice in other forms ("the movies *directed* by the *director* of X",
        // "*written* by the *writer* of X") goes out and back through it, as "share" says.
        let stem = |w: &str| w.chars().take(4).collect::<String>();
        // Only when one of the two is the relation the mention stands in ("the director *of* X"):
        // "the director that directed X" names one hop twice.
        // Or the relation of a clause's kind, named again in the clause ("the *architect* of the
        // places whose *architect* is X").
        let repeated: Vec<String> = units
            .iter()
            .filter(|a| a.position.is_some_and(|p| governs(p) || governs_kind(p)) && a.text.len() >= 4)
            .filter(|a| {
                units.iter().any(|b| {
                    b.position.is_some()
                        && b.position != a.position
                        && (b.text != a.text || a.position.is_some_and(governs_kind))
                        && stem(&b.text) == stem(&a.text)
                })
            })
            .map(|a| a.text.clone())
            .collect();
        // "Where did X die?", "When was X founded?": the question word says which side of the verb
        // is asked for, so the verb that ends the question is read with it.
        if let Some(wh) = words
            .iter()
            .take(3)
            .find(|w| matches!(w.text.as_str(), "where" | "when"))
            && let Some(last) = units
                .iter_mut()
                .filter(|u| u.position.is_some() && !u.asked_type)
                .max_by_key(|u| u.position)
            && last.position
                == (0..words.len())
                    .rev()
                    .find(|&i| !is_function_word(&words[i].text) && !in_mention(i))
        {
            last.phrase = Some(format!("{} {}", wh.text, last.text));
        }
        let texts: Vec<String> = units
            .iter()
            .map(|u| u.phrase.clone().unwrap_or_else(|| u.text.clone()))
            .collect();
        let unit_vectors = embed(ctx, texts).await?;
        Ok(Self {
            relevance: vec![0.0; units.len()],
            units,
            unit_vectors,
            similarities: HashMap::new(),
            words,
            spans,
            sharing: sharing || !repeated.is_empty(),
            sharing_word: sharing,
            repeated,
            form: form.clone(),
            place,
            class_confirmed: false,
            forced: HashMap::new(),
            attached,
            class_named: class.is_some(),
        })
    }

    /// Whether anchor `anchor`'s mention modifies the noun the question asks for: "which
    /// *Runic* characters were added in Unicode 7.0" says nothing of how the characters relate to
    /// Runic, the graph does (one hop, "in block"). Such an anchor's one-hop paths need no word
    /// of the question to be kept.
    pub(crate) fn attached(&self, anchor: usize) -> bool {
        self.attached.get(anchor).copied().unwrap_or(false)
    }

    /// The question asks for things of a kind: its asked-for noun is plural and no predicate of
    /// the graph is named after it (a list of "nicknames" is the values of "nickname").
    fn asks_for_things(&self) -> bool {
        self.form.kind == QuestionKind::List
            && self.form.expects == Expectation::Any
            && self.units.iter().enumerate().any(|(u, unit)| {
                unit.asked_type
                    && crate::words::singular(&unit.text) != unit.text
                    && ((unit.class_word && self.class_confirmed) || self.relevance[u] < TYPE_IS_RELATION)
            })
    }

    /// The noun right after the question word names a class of the graph ("which *country*").
    fn asks_for_an_instance(&self) -> bool {
        self.form.kind == QuestionKind::List
            && self.form.expects == Expectation::Any
            && self.units.iter().any(|unit| unit.asked_noun && unit.class_word)
    }

    /// The preposition the question asks for its answer with: the first word ("*In* which country
    /// …", "*From* which …") or a stranded last one ("Which country is it *in*?").
    pub(crate) fn asked_preposition(&self) -> Option<&str> {
        let opens = self.words.first().filter(|w| {
            self.words
                .get(1)
                .is_some_and(|n| matches!(n.text.as_str(), "which" | "what" | "whom"))
                && crate::words::RELATION_PREPOSITIONS.contains(&w.text.as_str())
        });
        let stranded = self
            .words
            .last()
            .filter(|w| crate::words::RELATION_PREPOSITIONS.contains(&w.text.as_str()) && w.text != "of");
        opens.or(stranded).map(|w| w.text.as_str())
    }

    /// The question asks what a thing does, with an auxiliary ("what *did* X add?", "who does X
    /// follow?"): its words are a verb of the anchor.
    pub(crate) fn asks_by_a_verb(&self) -> bool {
        self.words
            .iter()
            .take(3)
            .any(|w| matches!(w.text.as_str(), "do" | "does" | "did"))
    }

    /// The noun the question asks for is plural ("which *airports* …"): it wants several answers.
    pub(crate) fn asks_for_several(&self) -> bool {
        self.units
            .iter()
            .any(|unit| unit.asked_noun && crate::words::singular(&unit.text) != unit.text)
    }

    /// The graph shows answers of the class the question asks for: from now on the words that
    /// name it are a kind of answer, never a relation ("which *programming languages*
    /// influenced X" is no hop named "programming language").
    pub(crate) fn confirm_class(&mut self, confirmed: bool) {
        self.class_confirmed = confirmed;
    }

    /// Notes, per anchor, the first hop that every path of `found` from it takes: the anchor has
    /// that one relation (a homepage whose only edge is its owner's), so every answer is reached
    /// through it, and it is not held against a path that it says no word of its own.
    pub(crate) fn forced_first_hops(&mut self, found: &[RelationPath]) {
        let mut first: HashMap<usize, Option<(String, bool)>> = HashMap::new();
        for path in found {
            let Some(hop) = path.hops.first() else { continue };
            let this = (hop.predicate.clone(), hop.forward);
            first
                .entry(path.anchor)
                .and_modify(|seen| {
                    if seen.as_ref() != Some(&this) {
                        *seen = None;
                    }
                })
                .or_insert(Some(this));
        }
        self.forced = first.into_iter().filter_map(|(a, hop)| Some((a, hop?))).collect();
    }

    fn forced(&self, path: &RelationPath, h: usize) -> bool {
        h == 0
            && path.hops.first().is_some_and(|hop| {
                self.forced
                    .get(&path.anchor)
                    .is_some_and(|(predicate, forward)| *predicate == hop.predicate && *forward == hop.forward)
            })
    }

    /// `scored` ranked again (after [`Self::confirm_class`]), best first.
    pub(crate) fn rescore(&self, scored: &mut [ScoredPath]) {
        for s in scored.iter_mut() {
            let Scores {
                score,
                support,
                coverage,
                unjustified,
                against_words,
            } = self.score(&s.path);
            (s.score, s.support, s.coverage, s.unjustified, s.against_words) =
                (score, support, coverage, unjustified, against_words);
            s.like_asked = self.like_asked(&s.path);
        }
    }

    /// Whether any word of the question is left to compare paths with (the "place" a "where"
    /// asks for is compared with the last hop only: "Where is X?" has no relation word).
    pub(crate) fn has_units(&self) -> bool {
        (0..self.units.len()).any(|u| self.units[u].weight > 0.0 && self.counts(u, None))
    }

    /// Embeds the labels not seen before (one batch).
    pub(crate) async fn learn_labels(&mut self, ctx: &AgentContext, labels: &[String]) -> Result<(), AgentError> {
        let mut new: Vec<String> = Vec::new();
        for label in labels {
            if !self.similarities.contains_key(label) && !new.contains(label) {
                new.push(label.clone());
            }
        }
        if new.is_empty() {
            return Ok(());
        }
        let vectors = embed(ctx, new.clone()).await?;
        for (label, vector) in new.into_iter().zip(vectors) {
            let stem_match = if self.has_unsaid_words(&label) {
                STEM_MATCH - STEM_UNSAID_WORDS
            } else {
                STEM_MATCH
            };
            let sims: Vec<f32> = self
                .units
                .iter()
                .zip(&self.unit_vectors)
                .map(|(unit, u)| {
                    let s = cosine(&vector, u);
                    if shares_stem(&label, &unit.text) {
                        s.max(stem_match)
                    } else {
                        s
                    }
                })
                .collect();
            for (r, s) in self.relevance.iter_mut().zip(&sims) {
                *r = r.max(*s);
            }
            self.similarities.insert(label, sims);
        }
        Ok(())
    }

    /// Whether a relation's name has a content word that shares no stem with a word of the
    /// question ("executive" of "executive producer" for "who produced X").
    fn has_unsaid_words(&self, label: &str) -> bool {
        normalize_tokens(label)
            .iter()
            .any(|w| !is_function_word(w) && !self.words.iter().any(|q| shares_stem(w, &q.text)))
    }

    /// Similarity of each hop to each unit.
    fn matrix(&self, path: &RelationPath) -> Vec<&[f32]> {
        path.hops
            .iter()
            .map(|h| self.similarities.get(&h.label).map_or(&[][..], Vec::as_slice))
            .collect()
    }

    /// Whether unit `u` is a relation word for a path ending in `end`: an asked-for type only
    /// when a predicate is named after it, or when "how many" asks for a number the graph stores
    /// ("how many people live in X" / population).
    fn counts(&self, u: usize, end: Option<EndKind>) -> bool {
        let unit = &self.units[u];
        let a_type = unit.class_word && self.class_confirmed;
        !unit.asked_type
            || (!a_type && self.relevance[u] >= TYPE_IS_RELATION)
            || (self.form.kind == QuestionKind::Count && end == Some(EndKind::Number))
    }

    /// Whether hop `h` of `path` may say unit `u`. The noun the question asks for ("which
    /// *airports* does X serve") names the answers, so only the last hop, which reaches them, says
    /// it: "hub airport → city served" answers cities, and its first hop says nothing.
    fn may_say(&self, u: usize, h: usize, path: &RelationPath) -> bool {
        !self.units[u].asked_noun || h + 1 == path.hops.len()
    }

    /// How much of its likeness to unit `u` hop `h` says. A hop walked backwards whose name is
    /// a noun of its object ("company (of)": the things whose company the vertex is) reaches
    /// things that *have* one, which are seldom one themselves: it says the asked noun at
    /// [`OBJECT_NOUN_BACKWARDS`] ("which *companies* published X" is the publisher, not the
    /// things whose company it is); where it is the only relation so named, it still may
    /// ("the *relatives* of X": those whose relative X is). One named for its subject's role
    /// ("member of (of)", "ship namesake (of)") says it in full.
    fn say(&self, u: usize, h: usize, path: &RelationPath) -> f32 {
        let hop = &path.hops[h];
        if self.units[u].asked_noun && !hop.forward && object_noun(&hop.label, &self.units[u].text) {
            OBJECT_NOUN_BACKWARDS
        } else {
            1.0
        }
    }

    /// One-to-one matching of hops to units, best pairs first: (support per hop, unit per hop).
    fn align(&self, path: &RelationPath) -> (Vec<f32>, Vec<Option<usize>>) {
        let matrix = self.matrix(path);
        let mut pairs: Vec<(f32, usize, usize)> = Vec::new();
        for (h, sims) in matrix.iter().enumerate() {
            for (u, s) in sims.iter().enumerate() {
                if self.counts(u, Some(path.end)) && self.may_say(u, h, path) {
                    pairs.push((*s * self.say(u, h, path) * self.units[u].weight, h, u));
                }
            }
        }
        // Equally similar words go to hops in the order they stand from the mention (earlier hop,
        // nearer word): "directors of the films *written* by the *writer* of X".
        let near = |u: usize| {
            self.units[u]
                .position
                .and_then(|i| self.distance(path.anchor, i))
                .unwrap_or(f32::MAX)
        };
        // A hop whose name says more of the question's words goes first among equals: "birth
        // place" claims "birth place" before "death place" can take its "place".
        let said: Vec<usize> = path
            .hops
            .iter()
            .map(|hop| {
                self.units
                    .iter()
                    .filter(|u| u.position.is_some() && shares_stem(&hop.label, &u.text))
                    .count()
            })
            .collect();
        pairs.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(said[b.1].cmp(&said[a.1]))
                .then(a.1.cmp(&b.1))
                .then(near(a.2).total_cmp(&near(b.2)))
                .then(a.2.cmp(&b.2))
        });
        // A word is said as often as the question writes it ("X's award nominations's award
        // nominations"); one written twice where two hops share a relation ("the director of X
        // is also the director of …") may be said by both.
        let mut left: HashMap<&str, usize> = HashMap::new();
        for unit in &self.units {
            *left.entry(unit.text.as_str()).or_insert(0) += 1;
        }
        if self.sharing {
            for room in left.values_mut() {
                *room = (*room).max(2);
            }
        }
        let mut support = vec![0.0; path.hops.len()];
        let mut unit_of = vec![None; path.hops.len()];
        for (s, h, u) in pairs {
            if unit_of[h].is_some() || left.get(self.units[u].text.as_str()).is_none_or(|room| *room == 0) {
                continue;
            }
            unit_of[h] = Some(u);
            support[h] = s.max(0.0);
            // The hop says the whole phrase its name holds ("distributing label", "birth place"):
            // the phrase's other words are said with it.
            for (o, other) in self.units.iter().enumerate() {
                if (o == u || self.one_phrase(u, o))
                    && (o == u || shares_stem(&path.hops[h].label, &other.text))
                    && let Some(room) = left.get_mut(other.text.as_str())
                {
                    *room = room.saturating_sub(1);
                }
            }
        }
        (support, unit_of)
    }

    /// Units `a` and `b` are words of one phrase: nothing but function words stand between them
    /// ("state *of* origin", "distributing label").
    fn one_phrase(&self, a: usize, b: usize) -> bool {
        let (Some(x), Some(y)) = (self.units[a].position, self.units[b].position) else {
            return false;
        };
        let (from, to) = (x.min(y), x.max(y));
        from != to
            && (from + 1..to).all(|i| {
                is_function_word(&self.words[i].text) && !self.spans.iter().flatten().any(|(s, e)| i >= *s && i < *e)
            })
    }

    /// Support plus coverage, without order and kind: how the search picks the paths it expands
    /// further (a prefix of the right path already says part of the question).
    pub(crate) fn partial(&self, path: &RelationPath) -> f32 {
        let (support, _) = self.align(path);
        evidence_mean(&support) + self.coverage(path)
    }

    fn coverage(&self, path: &RelationPath) -> f32 {
        let matrix = self.matrix(path);
        let (mut total, mut weight) = (0.0, 0.0);
        for (u, unit) in self.units.iter().enumerate() {
            let attainable = self.relevance[u] - RELEVANCE_FLOOR;
            if attainable <= 0.05 || !self.counts(u, Some(path.end)) {
                continue;
            }
            let w = unit.weight * attainable;
            let best = matrix
                .iter()
                .enumerate()
                .filter(|(h, _)| self.may_say(u, *h, path))
                .filter_map(|(h, sims)| sims.get(u).map(|s| s * self.say(u, h, path)))
                .fold(0.0f32, f32::max);
            total += w * ((best - RELEVANCE_FLOOR) / attainable).clamp(0.0, 1.0);
            weight += w;
        }
        if weight == 0.0 { 0.0 } else { total / weight }
    }

    /// The relational distance of word `i` from anchor `anchor`'s mention: words before it count
    /// back from it; words after it come after all of those unless a possessive joins them
    /// ("X's spouse").
    fn distance(&self, anchor: usize, i: usize) -> Option<f32> {
        let (start, end) = (*self.spans.get(anchor)?)?;
        Some(if i < start {
            (start - i) as f32
        } else {
            // "X's spouse", or the verb right after a mention that is no preposition's object
            // ("the films X starred in"), is the first hop; other words after the mention ("the
            // author of X born", "… by X were released in which years") come last…
            let possessive = end > 0 && self.words.get(end - 1).is_some_and(|w| w.possessive);
            let governed = start > 0
                && self
                    .words
                    .get(start - 1)
                    .is_some_and(|w| PREPOSITIONS.contains(&w.text.as_str()));
            // …unless it modifies a noun after it ("the screenwriter of X directed films").
            let modifies = self.words[i + 1..].iter().any(|w| !is_function_word(&w.text));
            let offset = (i - end) as f32;
            if possessive || (i == end && (!governed || modifies)) {
                0.5 + offset
            } else {
                50.0 + offset
            }
        })
    }

    fn order(&self, path: &RelationPath, unit_of: &[Option<usize>]) -> f32 {
        let distances: Vec<Option<f32>> = unit_of
            .iter()
            .map(|u| {
                let position = self.units.get((*u)?)?.position?;
                self.distance(path.anchor, position)
            })
            .collect();
        let (mut agree, mut pairs) = (0.0, 0.0);
        for a in 0..distances.len() {
            for b in a + 1..distances.len() {
                let (Some(da), Some(db)) = (distances[a], distances[b]) else {
                    continue;
                };
                pairs += 1.0;
                agree += if da < db {
                    1.0
                } else if da == db {
                    0.5
                } else {
                    0.0
                };
            }
        }
        if pairs == 0.0 {
            0.0
        } else {
            ORDER_WEIGHT * (2.0 * agree / pairs - 1.0)
        }
    }

    fn kind(&self, path: &RelationPath) -> f32 {
        let superlative = self.form.order.is_some();
        // A number the graph stores answers "how many" only as the anchor's own attribute
        // ("how many people live in X": its population); a number further away is an attribute
        // of the things to count ("how many members does G have" is not their numbers).
        if self.form.kind == QuestionKind::Count && path.end == EndKind::Number && path.hops.len() > 1 {
            return KIND_MISMATCH;
        }
        // "Which *books* did X write", "name the *films* …": a plural noun the question asks
        // for, which names no relation of the graph, is a kind of thing: the answers are
        // vertices, not an attribute's values (the books' page counts).
        if self.asks_for_things() && !superlative && path.end != EndKind::Entity {
            return KIND_MISMATCH;
        }
        // "Which *country* is X part of" where the graph has a class Country: what is asked for
        // is an instance of it, a vertex, not a string stored under the same relation's name
        // ("ASIA"), even where the graph types too few vertices to show it.
        if self.asks_for_an_instance() && !superlative && path.end == EndKind::Text {
            return KIND_MISMATCH;
        }
        let place = match (self.place, path.hops.last()) {
            (Some(u), Some(hop))
                if self
                    .similarities
                    .get(&hop.label)
                    .and_then(|s| s.get(u))
                    .is_some_and(|s| *s >= FULL_SUPPORT) =>
            {
                PLACE_MATCH
            }
            _ => 0.0,
        };
        place
            + match (self.form.expects, path.end) {
                // A superlative ranks vertices by an attribute: the base path ends at the vertices.
                (_, EndKind::Entity) if superlative => KIND_MATCH / 2.0,
                // "Which is the least populous city": the cities, ordered by their population.
                (Expectation::Any | Expectation::Entity, _) if superlative => KIND_MISMATCH,
                (Expectation::Temporal, EndKind::Temporal) => KIND_MATCH,
                (Expectation::Temporal, _) => KIND_MISMATCH,
                (Expectation::Entity, EndKind::Entity) => 0.0,
                (Expectation::Entity, _) => KIND_MISMATCH,
                (Expectation::Number, EndKind::Number) => KIND_MATCH,
                (Expectation::Number, EndKind::Entity) => 0.0,
                (Expectation::Number, _) => KIND_MISMATCH,
                // "Where did X die": a place or an address, not the date.
                (Expectation::Place, EndKind::Temporal | EndKind::Number) => KIND_MISMATCH,
                (Expectation::Place, _) => 0.0,
                (Expectation::Any, _) => 0.0,
            }
    }

    /// The path's score, its mean raw support (what `min_relation_score` is compared with), its
    /// coverage and its unjustified hops.
    pub(crate) fn score(&self, path: &RelationPath) -> Scores {
        let (support, unit_of) = self.align(path);
        // A forced first hop is no evidence either way: the words judge the hops after it.
        let judged: Vec<f32> = if path.hops.len() > 1 && self.forced(path, 0) {
            support[1..].to_vec()
        } else {
            support.clone()
        };
        let evidence = evidence_mean(&judged);
        let coverage = self.coverage(path);
        let hops = path.hops.len().saturating_sub(1) as f32;
        // A return through one relation, or through its near-duplicate ("battle" out, "battles"
        // back: a graph's raw and mapped predicates).
        let returns: Vec<usize> = (1..path.hops.len())
            .filter(|&h| {
                same_relation(&path.hops[h - 1], &path.hops[h]) && path.hops[h - 1].forward != path.hops[h].forward
            })
            .collect();
        // Named twice, the return must go through the relation so named.
        // A sharing word ("also", "same") says that some relation is shared, not which: the
        // return must go through one the question names.
        let named = |label: &str| {
            self.similarities.get(label).is_some_and(|sims| {
                sims.iter()
                    .zip(&self.units)
                    .any(|(s, u)| u.position.is_some() && u.weight > 0.0 && *s >= JUSTIFIES)
            })
        };
        let said =
            |label: &str| (self.sharing_word && named(label)) || self.repeated.iter().any(|r| shares_stem(label, r));
        let shared = |h: usize| returns.contains(&h) && said(&path.hops[h].label);
        let shape = match returns.first() {
            None => 0.0,
            Some(&h) if shared(h) => SHARED_RELATION,
            Some(_) => NEEDLESS_RETURN,
        };
        // Each hop must say a word of the question of its own: the one-to-one matching above
        // gives it one it resembles well enough ("death place" has no word of its own once "birth
        // place" has said "birth place"), and its own name is not part of another hop's
        // ("distributor" after "distributing label"). A return the question asks for ("share",
        // the relation named twice) says it by going back.
        let unjustified = if path.hops.len() > 1 && self.has_units() {
            (0..path.hops.len())
                .filter(|&h| !shared(h) && !self.forced(path, h) && (support[h] < JUSTIFIES || subsumed(&path.hops, h)))
                .count()
        } else {
            0
        };
        let direction = self.direction(path);
        let score = (evidence + coverage) / 2.0 + self.order(path, &unit_of) + self.kind(path) + direction + shape
            - HOP_PENALTY * hops
            - UNJUSTIFIED_HOP * unjustified as f32;
        Scores {
            score,
            support: mean(&judged),
            coverage,
            unjustified,
            against_words: direction < 0.0,
        }
    }

    /// "Canonized *by X*", "packages that depend *on X*", "built *from* the X source": a
    /// relation named after a preposition ("canonized by", "depends on") whose object the mention
    /// is in the question runs towards the anchor (the answer depends on X), not away from it
    /// (what X depends on).
    fn direction(&self, path: &RelationPath) -> f32 {
        let Some(first) = path.hops.first() else { return 0.0 };
        if let Some(verb) = self.verb_beside(path.anchor, &first.label) {
            return if first.forward == (verb == Side::After) {
                AGENT_DIRECTION
            } else {
                -AGENT_DIRECTION
            };
        }
        let Some(last) = normalize_tokens(&first.label)
            .pop()
            .filter(|w| PREPOSITIONS.contains(&w.as_str()))
        else {
            return 0.0;
        };
        let Some((start, end)) = self.spans.get(path.anchor).copied().flatten() else {
            return 0.0;
        };
        // "The package that *X depends on*": the mention is the verb's subject. A relation
        // named in the active ("depends on", "built from") runs away from it; one named in the
        // passive ("directed by": the films X directed) towards it.
        let verb = normalize_tokens(&first.label);
        if verb.len() >= 2
            && self
                .words
                .get(end)
                .is_some_and(|w| !PREPOSITIONS.contains(&w.text.as_str()) && shares_stem(&verb[0], &w.text))
        {
            let away = if last == "by" {
                -AGENT_DIRECTION
            } else {
                AGENT_DIRECTION
            };
            return if first.forward { away } else { -away };
        }
        let mut before = start;
        if before > 0 && matches!(self.words[before - 1].text.as_str(), "the" | "a" | "an") {
            before -= 1;
        }
        if before == 0 || self.words[before - 1].text != last {
            return 0.0;
        }
        if first.forward {
            -AGENT_DIRECTION
        } else {
            AGENT_DIRECTION
        }
    }

    /// A relation named by one verb as the question writes it ("recommends", "recommend"), that
    /// stands right after the anchor's mention in a clause ("the packages that *zsh recommends*",
    /// "what does *zsh recommend*": the mention is its subject, the relation runs away from it)
    /// or right before it ("which packages *recommend zsh*": its object, the relation runs
    /// towards it; "the *author* X" is a noun before a name, no verb). A noun of
    /// the relation ("producer" for "the films X produced") says no such thing: only the verb's
    /// own form, with or without its "-s", counts.
    fn verb_beside(&self, anchor: usize, label: &str) -> Option<Side> {
        let [verb] = normalize_tokens(label).try_into().ok()?;
        let (start, end) = self.spans.get(anchor).copied().flatten()?;
        let same = |i: usize| {
            self.words.get(i).is_some_and(|w| {
                w.text == verb
                    || w.text.strip_suffix('s') == Some(verb.as_str())
                    || verb.strip_suffix('s') == Some(&w.text)
            })
        };
        // "that X recommends", "what does X recommend": a clause whose subject the mention is.
        let clause = |i: usize| {
            matches!(
                self.words[i].text.as_str(),
                "that" | "which" | "who" | "whom" | "does" | "do" | "did"
            )
        };
        if same(end) && start > 0 && clause(start - 1) {
            Some(Side::After)
        } else if start >= 1
            && same(start - 1)
            && (start < 2 || !matches!(self.words[start - 2].text.as_str(), "the" | "a" | "an"))
        {
            Some(Side::Before)
        } else {
            None
        }
    }

    /// Best first, each with its verbalization (`anchors[i]` names anchor i); ties go to the
    /// shorter path, then to the text, so the order never depends on the search's order.
    pub(crate) fn rank(&self, paths: Vec<RelationPath>, anchors: &[String]) -> Vec<ScoredPath> {
        let mut scored: Vec<ScoredPath> = paths
            .into_iter()
            .map(|path| {
                let Scores {
                    score,
                    support,
                    coverage,
                    unjustified,
                    against_words,
                } = self.score(&path);
                let like_asked = self.like_asked(&path);
                let anchor = anchors.get(path.anchor).map_or("?", String::as_str);
                ScoredPath {
                    text: path.verbalize(anchor),
                    path,
                    score,
                    support,
                    coverage,
                    reaches_class: false,
                    class_selects: false,
                    kinds_elsewhere: false,
                    unjustified,
                    against_words,
                    several: false,
                    unsaid: false,
                    like_asked,
                }
            })
            .collect();
        // Exact ties: the path whose words the question says more of ("uploaded" is more like
        // "point in time" than "end time"), then its text.
        scored.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.path.hops.len().cmp(&b.path.hops.len()))
                .then(b.like_asked.total_cmp(&a.like_asked))
                .then(b.support.total_cmp(&a.support))
                .then(a.text.cmp(&b.text))
        });
        scored
    }

    /// The likeness of `path`'s last relation to the asked-for noun when that noun is no
    /// relation word ([`ScoredPath::like_asked`]); 0 otherwise.
    fn like_asked(&self, path: &RelationPath) -> f32 {
        let Some(last) = path.hops.last().filter(|_| !self.class_named) else {
            return 0.0;
        };
        let end = Some(path.end);
        self.similarities.get(&last.label).map_or(0.0, |sims| {
            sims.iter()
                .enumerate()
                .filter(|&(u, _)| {
                    let unit = &self.units[u];
                    unit.asked_noun && unit.weight > 0.0 && !self.counts(u, end)
                })
                .map(|(_, s)| s.max(0.0))
                .fold(0.0, f32::max)
        })
    }
}

/// Where a relation's verb stands beside the mention ([`PathRanker::verb_beside`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// After it: the mention is the verb's subject.
    After,
    /// Before it: the mention is the verb's object.
    Before,
}

/// A relation's name ends in `word` as a noun for the value it holds ("company", "publisher",
/// "product"), not as a role of its subject ("member of", "located in", "directed by"); "ship
/// namesake" names its value a namesake, and its subject's "ship" is no noun of the value.
fn object_noun(label: &str, word: &str) -> bool {
    let tokens = chatty_kg_graph::text::normalize_tokens(label);
    tokens.last().is_some_and(|last| {
        !PREPOSITIONS.contains(&last.as_str())
            && !last.ends_with("ed")
            && !last.ends_with("ing")
            && shares_stem(last, word)
    })
}

/// The noun a question word asks for: the first content word after "which", "what" or "how
/// many/much", within four words ("which books", "what are the languages", "what is the latest
/// film"), superlatives skipped, not inside a mention.
fn asked_noun(
    words: &[Word],
    in_mention: &dyn Fn(usize) -> bool,
    superlative: &dyn Fn(usize) -> bool,
) -> Option<usize> {
    // A question word, or an imperative that asks for things ("name the books", "give me all
    // films", "list the rivers"), whichever comes first: a "which" after an imperative opens a
    // clause ("list the *team* for which X played").
    let wh = words
        .iter()
        .position(|w| matches!(w.text.as_str(), "which" | "what" | "how"));
    let imperative = words
        .iter()
        .take(4)
        .position(|w| matches!(w.text.as_str(), "name" | "list" | "give" | "show" | "all"));
    let opener = match (wh, imperative) {
        (Some(w), Some(i)) => w.min(i),
        (w, i) => w.or(i)?,
    };
    let mut start = opener + 1;
    // "What *did* X add?": the question asks what X does; the word after X is its verb.
    if words
        .get(start)
        .is_some_and(|w| matches!(w.text.as_str(), "do" | "does" | "did"))
    {
        return None;
    }
    if words[opener].text == "how" {
        if !words.get(start).is_some_and(|w| w.text == "many" || w.text == "much") {
            return None;
        }
        start += 1;
    }
    // Superlatives ("which is the *latest* film") are skipped, mentions end the search.
    (start..words.len().min(start + 4))
        .filter(|&i| {
            !is_function_word(&words[i].text)
                && !NOT_RELATIONS.contains(&words[i].text.as_str())
                && !words[i].capitalized
                && words[i].text != "me"
        })
        .find(|&i| !superlative(i))
        .filter(|&i| !in_mention(i))
}

/// Per mention span: whether it modifies the asked-for noun (`asked`, or the class's words
/// `class`): it stands right before it ("*Runic* characters", "*Jordi Mallach's* packages"), or
/// after it and a preposition ("characters *of the Emoticons block*", "packages *in the shells*
/// section").
fn attached_mentions(
    words: &[Word],
    spans: &[Option<(usize, usize)>],
    asked: Option<usize>,
    class: Option<(usize, usize)>,
) -> Vec<bool> {
    let noun = class.or(asked.map(|i| (i, i + 1)));
    spans
        .iter()
        .map(|span| {
            let (Some((start, end)), Some((from, to))) = (*span, noun) else {
                return false;
            };
            // "Asimov's Foundation series": a possessive before another mention modifies that one.
            let owns_next =
                end > 0 && words[end - 1].possessive && spans.iter().flatten().any(|(other, _)| *other == end);
            if owns_next {
                return false;
            }
            if end == from {
                return true;
            }
            let mut i = to;
            if !words
                .get(i)
                .is_some_and(|w| matches!(w.text.as_str(), "of" | "in" | "from" | "on"))
            {
                return false;
            }
            i += 1;
            if words
                .get(i)
                .is_some_and(|w| matches!(w.text.as_str(), "the" | "a" | "an"))
            {
                i += 1;
            }
            i == start
        })
        .collect()
}

/// Mean of the supports as evidence: 0 at the floor, 1 from full support up.
fn evidence_mean(support: &[f32]) -> f32 {
    let evidence: Vec<f32> = support
        .iter()
        .map(|s| ((s - RELEVANCE_FLOOR) / (FULL_SUPPORT - RELEVANCE_FLOOR)).clamp(0.0, 1.0))
        .collect();
    mean(&evidence)
}

fn mean(values: &[f32]) -> f32 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f32>() / values.len() as f32
    }
}

/// Hop `h`'s name is part of another hop's that names another relation: every word stem of
/// "distributor" is in "distributing label".
fn subsumed(hops: &[Hop], h: usize) -> bool {
    let stems = |label: &str| -> Vec<String> {
        normalize_tokens(label)
            .into_iter()
            .filter(|w| w.len() >= 3 && !is_function_word(w))
            .map(|w| w.chars().take(4).collect())
            .collect()
    };
    let own = stems(&hops[h].label);
    !own.is_empty()
        && hops.iter().enumerate().any(|(o, other)| {
            o != h && !same_relation(other, &hops[h]) && {
                let theirs = stems(&other.label);
                own.len() < theirs.len() && own.iter().all(|s| theirs.contains(s))
            }
        })
}

/// Two hops name one relation: the same predicate, or predicates whose labels differ only in
/// case, spacing or a plural ("battle" / "battles", "debut team" / "debutteam"): a graph's raw
/// and mapped versions of one property.
fn same_relation(a: &Hop, b: &Hop) -> bool {
    let key = |label: &str| {
        let mut k: String = label
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        if k.ends_with('s') {
            k.pop();
        }
        k
    };
    a.predicate == b.predicate || key(&a.label) == key(&b.label)
}

/// Words of a noun phrase before a relative clause, at most.
const KIND_WORDS: usize = 3;

/// The noun phrases a "whose" clause describes where another noun is "of" them ("the
/// architect of *the historic places* whose architect is X", "the tenants of *the stadium*
/// whose tenants was Y"): a vertex on the way to the answers, whose relation to the anchor the
/// clause names ("whose *architect*") and whose relation to the answers the noun before "of"
/// names. No mention, capitalised or function word among them; as word spans. A clause that
/// names no relation ("the script *that* the letter belongs to", "the writers *that* …") leaves
/// its noun a word of the relation, as is a "whose" clause's noun nothing is "of" ("the movies
/// whose directors …": the answers, which a hop reaches).
fn clause_kinds(words: &[Word], in_mention: &impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let mut kinds = Vec::new();
    for (r, w) in words.iter().enumerate() {
        if w.text != "whose" {
            continue;
        }
        let mut start = r;
        while start > 0
            && r - start < KIND_WORDS
            && !in_mention(start - 1)
            && !words[start - 1].capitalized
            && !is_function_word(&words[start - 1].text)
        {
            start -= 1;
        }
        let article = start >= 2 && matches!(words[start - 1].text.as_str(), "the" | "a" | "an");
        if start < r && article && words[start - 2].text == "of" {
            kinds.push((start, r));
        }
    }
    kinds
}

/// Where `mention`'s words stand in the question (first occurrence), as `[start, end)`.
pub(crate) fn find_span(words: &[Word], mention: &str) -> Option<(usize, usize)> {
    let tokens: Vec<String> = words_of(mention).into_iter().map(|w| w.text).collect();
    if tokens.is_empty() || tokens.len() > words.len() {
        return None;
    }
    (0..=words.len() - tokens.len())
        .find(|&s| tokens.iter().enumerate().all(|(i, t)| words[s + i].text == *t))
        .map(|s| (s, s + tokens.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_and_spans() {
        assert!(shares_stem("directed by", "director"));
        assert!(shares_stem("release year", "released"));
        assert!(!shares_stem("starred actors", "acted"));
        assert!(shares_stem("written by", "screenwriter"));
        assert!(shares_stem("birthplace", "place"));
        assert!(!shares_stem("has genre", "generous"));
        assert!(!shares_stem("in language", "inch"), "short words must be equal");
        assert!(shares_stem("writer", "written"));
        assert!(shares_stem("successor", "succeeded"));
        assert!(shares_stem("publication", "published"));
        assert!(
            !shares_stem("academic discipline", "discovered"),
            "only four letters shared"
        );
        assert!(!shares_stem("president", "presented"));
        assert!(object_noun("company", "companies"));
        assert!(!object_noun("member of", "members"), "a role of the subject");
        assert!(
            !object_noun("ship namesake", "ships"),
            "the subject's word, not the value's"
        );
        assert!(!object_noun("pope elected", "pope"));
        let hop = |predicate: &str, label: &str| Hop {
            predicate: predicate.to_owned(),
            label: label.to_owned(),
            forward: true,
            also: Vec::new(),
        };
        assert!(same_relation(
            &hop("dbo:battle", "battle"),
            &hop("dbp:battles", "battles")
        ));
        assert!(same_relation(
            &hop("dbo:debutTeam", "debut team"),
            &hop("dbp:debutteam", "debutteam")
        ));
        assert!(!same_relation(
            &hop("dbo:child", "child"),
            &hop("dbp:children", "children")
        ));
        assert!(!same_relation(
            &hop("p:lowercase", "lowercase"),
            &hop("p:uppercase", "uppercase")
        ));
        let w = words("who acted in the movies directed by the director of Some Mother's Son");
        assert_eq!(find_span(&w, "Some Mother's Son"), Some((10, 13)));
        assert_eq!(find_span(&w, "Nobody"), None);
    }

    #[test]
    fn the_asked_noun_follows_the_first_asking_word() {
        let asked = |question: &str, mention: &str| {
            let w = words(question);
            let span = find_span(&w, mention);
            let at = asked_noun(&w, &|i| span.is_some_and(|(s, e)| i >= s && i < e), &|_| false);
            at.map(|i| w[i].text.clone())
        };
        assert_eq!(
            asked("List the team for which Doug Acomb played?", "Doug Acomb").as_deref(),
            Some("team")
        );
        assert_eq!(
            asked("Which films did Doug Acomb write?", "Doug Acomb").as_deref(),
            Some("films")
        );
        assert_eq!(
            asked("Give me all films which Doug Acomb wrote", "Doug Acomb").as_deref(),
            Some("films")
        );
        // "What did X hold?" asks what X does: "hold" is its verb, no noun asked for.
        assert_eq!(asked("What did Edvard Munch hold?", "Edvard Munch"), None);
    }

    #[test]
    fn mentions_that_modify_the_asked_noun() {
        let attached = |question: &str, mentions: &[&str], class: Option<&str>| {
            let w = words(question);
            let spans: Vec<_> = mentions.iter().map(|m| find_span(&w, m)).collect();
            let asked = asked_noun(&w, &|i| spans.iter().flatten().any(|(s, e)| i >= *s && i < *e), &|_| {
                false
            });
            attached_mentions(&w, &spans, asked, class.and_then(|c| find_span(&w, c)))
        };
        assert_eq!(
            attached(
                "Which Runic characters were added in Unicode 7.0?",
                &["Runic", "Unicode 7.0"],
                None
            ),
            [true, false]
        );
        assert_eq!(
            attached(
                "Which characters of the Emoticons block came with Unicode 6.1?",
                &["Emoticons", "Unicode 6.1"],
                Some("characters")
            ),
            [true, false]
        );
        assert_eq!(
            attached(
                "Which of Jordi Mallach's packages use the most disk?",
                &["Jordi Mallach"],
                None
            ),
            [true]
        );
        // The anchor is the verb's subject or object, not a modifier of the noun.
        assert_eq!(
            attached(
                "Which movies starring Tom Hanks were directed by Robert Zemeckis?",
                &["Tom Hanks", "Robert Zemeckis"],
                None
            ),
            [false, false]
        );
        assert_eq!(
            attached("Which airports does Air China serve?", &["Air China"], None),
            [false]
        );
        // A possessive before another mention modifies that one, not the asked noun.
        assert_eq!(
            attached(
                "Show me all books in Asimov's Foundation series.",
                &["Foundation series", "Asimov"],
                None
            ),
            [false, false]
        );
        assert_eq!(
            attached("Show me all books in Asimov's series.", &["Asimov"], None),
            [true]
        );
    }
}
