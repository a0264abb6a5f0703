//! Entity spotting: the spans of the question that are exactly the label of a vertex of the graph.
//! The graph decides what is an entity before any model is asked: when the question names
//! vertices by their labels, the QIR is built from those spans and the question's remaining
//! content words, without a model call (`AgentParameters::ground_entities`). Where no span is a
//! label, the names the question writes (quoted, or in capitals) are its mentions; the QIR
//! agent's model is asked only of a question that writes none. Relation paths, not the QIR's
//! triples, decide the query (see `path_search`), so the triples' shape does not matter.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::qir::{Qir, QirSource, QirTerm, QirTriple, QuestionKind};
use crate::words::{ARTICLES, QUESTION_WORDS, SHORT_WORDS, TITLE_JOINERS, is_function_word, is_title};
use chatty_kg_graph::text::{EXACT_MATCH_SCORE, normalize_tokens};

/// Longest span tried, in words.
const MAX_SPAN: usize = 8;
/// Label searches at most (each is a query on a remote endpoint).
const MAX_SEARCHES: usize = 60;
/// Candidates looked at per span: the exact matches come first, a predicate among them is skipped.
const SPOT_CANDIDATES: usize = 5;

/// Whether a one-word span is long enough to be a name on its own.
fn long_enough(word: &str) -> bool {
    let letters = word.chars().count();
    letters >= 3 || (letters == 2 && !SHORT_WORDS.contains(&word))
}

/// Whether the words of a span are the class mention `class` or a run of its words: the class
/// read over them is the longer reading ("all *basketball* players" with a class "basketball
/// player" asks for players, not for the sport).
fn names_part_of(span: &[String], class: &str) -> bool {
    let class: Vec<&str> = class.split(' ').collect();
    !span.is_empty()
        && class
            .windows(span.len())
            .any(|w| w.iter().zip(span).all(|(a, b)| *a == b.as_str()))
}

/// A span of the question that is exactly the label of a vertex.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spotted {
    /// As written (a possessive `'s` after its last word dropped).
    pub mention: String,
    pub start: usize,
    pub len: usize,
    /// How much it looks like a name: its length, and more for capitalised words.
    pub strength: f32,
    /// A name written in part: no label is it, but some hold all its words.
    pub partial: bool,
    /// A common word that is a name because the class of its vertex follows it ("*required*
    /// priority"); it does not take the place of the question's one common-word mention.
    pub typed: bool,
}

/// A one-word span this strong looks like a name (a capital, or the word modifying the class).
const NAME_STRENGTH: f32 = 2.5;

/// Spans of the question that are exactly a vertex's label (up to case and accents), best first,
/// none overlapping, at most `max`. Longer spans are searched first and the spans inside a found
/// one are skipped; a span may not start or end with a function word nor hold a question word,
/// unless it is written in title case inside the question. `skip` is the asked class's mention
/// (no span inside it is an entity); `modifier` the word right before it, which is a mention
/// even in lower case.
pub(crate) async fn spot_entities(
    ctx: &AgentContext,
    question: &str,
    max: usize,
    skip: Option<&str>,
    modifier: Option<&str>,
    kind: QuestionKind,
) -> Result<Vec<Spotted>, AgentError> {
    let words = question_words(question);
    let lower: Vec<String> = words.iter().map(|(w, _)| normalize_tokens(w).join(" ")).collect();
    // The word right before the asked class ("which *education* packages") says which of them,
    // as a name would: a vertex labelled so is a mention even in lower case.
    let modifier = modifier.map(|m| normalize_tokens(m).join(" "));
    // Predicates and classes are what questions say of entities, never the entities.
    let predicates = ctx.schema_terms().await;
    let profile = ctx.kg.profile().await.ok();
    let class_names = || {
        profile
            .iter()
            .flat_map(|p| p.classes.iter())
            .map(|c| normalize_tokens(&c.label))
    };
    let class_heads = class_heads(profile.as_deref());
    // The first words of the graph's class names ("source" of "source package"): a span
    // followed by one may be typed by the class (see `linking::typed`).
    let class_words: std::collections::HashSet<String> = class_names()
        .filter_map(|name| name.into_iter().next())
        .map(|w| crate::words::singular(&w))
        .collect();
    // The question's words as the graph's texts are compared (a label before a class name).
    let tokens = normalize_tokens(question);
    let mut typed_checks = 0;
    let mut found: Vec<Spotted> = Vec::new();
    let mut searches = 0;
    for len in (1..=words.len().min(MAX_SPAN)).rev() {
        for start in 0..=words.len() - len {
            let span = &lower[start..start + len];
            let content = span.iter().filter(|w| !is_function_word(w)).count();
            let last = &span[len - 1];
            // A span inside the question that starts and ends with a capital may hold any word
            // ("Some Mother's Son", "What Women Want", "You Don't Mess with the Zohan");
            // otherwise it may not start or end with a function word.
            let capital = |w: &str| w.chars().next().is_none_or(|c| c.is_uppercase() || !c.is_alphabetic());
            let titled = start > 0 && capital(&words[start].0) && capital(&words[start + len - 1].0);
            let loose = is_function_word(last)
                || (is_function_word(&span[0]) && !ARTICLES.contains(&span[0].as_str()))
                || span.iter().any(|w| QUESTION_WORDS.contains(&w.as_str()));
            // A pronoun or "there" written in lower case is no name, whatever vertex a big graph
            // labels "There" ("How many packages are *there* in the hamradio section?").
            let pronoun = len == 1
                && crate::words::NOT_RELATIONS.contains(&span[0].as_str())
                && (start == 0 || !capital(&words[start].0));
            if content == 0
                || pronoun
                || skip.is_some_and(|s| names_part_of(span, s))
                || (loose && !titled)
                || (len == 1 && !long_enough(&span[0]))
                || found.iter().any(|f| start >= f.start && start + len <= f.start + f.len)
            {
                continue;
            }
            if searches == MAX_SEARCHES {
                return Ok(choose(found, max));
            }
            searches += 1;
            // Inside the span a possessive is part of the name ("Some Mother's Son").
            let mention = words[start..start + len]
                .iter()
                .enumerate()
                .map(|(i, (w, possessive))| {
                    if *possessive && i + 1 < len {
                        format!("{w}'s")
                    } else {
                        w.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            // "Titanic 2" is not "Titanic": a label followed by a sequel's number names
            // something else (the longer span, had it been a label, was found first).
            if sequel_at(&lower, start + len, kind) {
                continue;
            }
            // An exact label of a vertex that is not one of the graph's predicates (whose labels
            // are the relation's words: "date of birth").
            let capitals = words[start..start + len]
                .iter()
                .enumerate()
                .filter(|(i, (w, _))| (start + i > 0) && w.chars().next().is_some_and(char::is_uppercase))
                .count();
            // The span's exact keys alone (a search of every word would read tens of partial
            // matches per span, a cost that grows with the graph); a name written in capitals
            // that is no label may be one whose letters outside ASCII were lost ("Sylvain Lvi"),
            // which only the search's near matches find.
            let mut hits = ctx.kg.search_exact_entities(&mention, SPOT_CANDIDATES).await?;
            if hits.is_empty() && capitals > 0 {
                hits = ctx.kg.search_entities(&mention, SPOT_CANDIDATES).await?;
            }
            let exact = |c: &chatty_kg_graph::EntityCandidate| {
                (c.score >= EXACT_MATCH_SCORE || crate::words::lost_letters_of(&mention, &c.label))
                    && !predicates.contains(&c.iri)
            };
            if !hits.iter().any(exact) {
                continue;
            }
            let mut strength = len as f32 + 1.5 * capitals as f32 + content as f32 * 0.5;
            if modifier.as_deref() == Some(span.join(" ").as_str()) {
                strength = strength.max(NAME_STRENGTH);
            }
            // A common word the question types with the name of its vertex's class right after
            // it ("*required* priority", "the *dash* source package") is a name.
            let mut typed = false;
            if strength < NAME_STRENGTH && typed_checks < MAX_TYPED_CHECKS {
                let named = normalize_tokens(&mention);
                let exact: Vec<&str> = hits.iter().filter(|c| exact(c)).map(|c| c.iri.as_str()).collect();
                // A graph error here (a timeout) leaves the word as common as it was.
                let confirmed = |checked: Result<bool, AgentError>, what: &str| match checked {
                    Ok(found) => found,
                    Err(error) => {
                        tracing::info!(%error, mention = %mention, "a mention's {what} not checked");
                        false
                    }
                };
                if let Some((_, end)) = crate::linking::find_span(&tokens, &named)
                    && tokens
                        .get(end)
                        .is_some_and(|w| class_words.contains(&crate::words::singular(w)))
                {
                    typed_checks += 1;
                    let checked = crate::linking::typed::typed_vertex(ctx, &tokens, end, &exact).await;
                    typed = confirmed(checked.map(|v| v.is_some()), "class");
                }
                // A common word after a noun and "of" that name one of its vertex's relations
                // ("the *versions of* less") is the name of what that relation holds of.
                if !typed
                    && typed_checks < MAX_TYPED_CHECKS
                    && let Some((at, _)) = crate::linking::find_span(&tokens, &named)
                    && crate::linking::typed::relation_noun_before(&tokens, at).is_some()
                {
                    typed_checks += 1;
                    let checked = crate::linking::typed::related_vertex(ctx, &tokens, at, &exact).await;
                    typed = confirmed(checked.map(|v| v.is_some()), "relation");
                }
                if typed {
                    strength = NAME_STRENGTH;
                }
            }
            found.push(Spotted {
                mention,
                start,
                len,
                strength,
                partial: false,
                typed,
            });
        }
    }
    // Names written in part ("books by Kerouac", "President Kennedy"): a run of capitalised
    // words that no label is, titles aside, but that is part of some vertex's label. Matching
    // links it when one such vertex dominates the graph.
    let mut partial = 0;
    for (start, len) in capitalised_runs(&words) {
        if partial == MAX_PARTIAL_NAMES || searches >= MAX_SEARCHES {
            break;
        }
        // A longer run holds a shorter label found inside it ("Lake Placid" around "Lake"): the
        // run is tried, and replaces it when some label holds all its words. A run that only
        // overlaps a found span is left.
        let inside = |f: &Spotted| f.start >= start && f.start + f.len <= start + len && f.len < len;
        if found
            .iter()
            .any(|f| start < f.start + f.len && f.start < start + len && !inside(f))
        {
            continue;
        }
        // A capitalised word before a noun that names a class of the graph modifies it ("Danish
        // films", "a German lake", "U.S. states"): an adjective, not part of a name ("Kerouac
        // born" is a name and a verb).
        if modifies_a_class(&words, start + len, &class_heads) {
            continue;
        }
        // A run that opens with an article is the start of a title written whole ("The Time of
        // the Hero"), not a name written in part; one followed by a sequel's number names
        // something else ("… the Hero 2"), as for whole labels.
        if ARTICLES.contains(&words[start].0.to_lowercase().as_str()) || sequel_at(&lower, start + len, kind) {
            continue;
        }
        let mention = words[start..start + len]
            .iter()
            .map(|(w, _)| w.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if skip.is_some_and(|s| names_part_of(&normalize_tokens(&mention), s)) {
            continue;
        }
        partial += 1;
        searches += 1;
        let hits = ctx.kg.search_entities(&mention, PARTIAL_CANDIDATES).await?;
        if hits
            .iter()
            .any(|c| !predicates.contains(&c.iri) && crate::words::holds_every_word(&mention, &c.label))
        {
            found.retain(|f| !inside(f));
            found.push(Spotted {
                mention,
                start,
                len,
                strength: 1.5 + 1.5 * len as f32,
                partial: true,
                typed: false,
            });
        }
    }
    Ok(choose(found, max))
}

/// Spans whose vertices are checked against the class named after them (a few membership
/// queries each, see [`crate::linking::typed::typed_vertex`]) at most.
const MAX_TYPED_CHECKS: usize = 4;
/// Partial names searched per question at most.
const MAX_PARTIAL_NAMES: usize = 3;
/// Candidates looked at for a partial name.
const PARTIAL_CANDIDATES: usize = 20;

/// The question's words as written, without surrounding punctuation, each with whether "'s"
/// followed it.
fn question_words(question: &str) -> Vec<(String, bool)> {
    placed_words(question).into_iter().map(|(word, _)| word).collect()
}

/// [`question_words`], each with its byte range in the question.
fn placed_words(question: &str) -> Vec<((String, bool), std::ops::Range<usize>)> {
    let mut words: Vec<((String, bool), std::ops::Range<usize>)> = Vec::new();
    for raw in question.split_whitespace() {
        // `raw` is a slice of `question`: its offset is where it starts.
        let at = raw.as_ptr() as usize - question.as_ptr() as usize;
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}');
        let w = w.trim_start_matches(['\'', '\u{2019}']);
        let start = at + (w.as_ptr() as usize - raw.as_ptr() as usize);
        match w.strip_suffix("'s").or_else(|| w.strip_suffix("\u{2019}s")) {
            Some("") => {
                if let Some(last) = words.last_mut() {
                    last.0.1 = true;
                }
            }
            Some(body) => words.push(((body.to_owned(), true), start..start + body.len())),
            None if !w.trim_end_matches(['\'', '\u{2019}']).is_empty() => {
                let body = w.trim_end_matches(['\'', '\u{2019}']);
                words.push(((body.to_owned(), false), start..start + body.len()));
            }
            None => {}
        }
    }
    words
}

/// Whether a run of capitalised words (normalised) names the relation asked about rather than
/// something: it follows a determiner or a possessive (`before`: the word before it, lower case,
/// and whether "'s" followed that word), and every word of it is a word of the graph's relations'
/// labels, `relation_words` ("the *ISBN* of …", "their *URL*", "X's *Homepage*"; not "the *Big
/// Glide Squad*", nor "Who wrote *Name* of the Rose?"). The one rule for the names a question
/// writes and for the words the ranking reads.
pub(crate) fn names_a_relation<'a>(
    before: Option<(&str, bool)>,
    mut run: impl Iterator<Item = &'a str>,
    relation_words: &std::collections::HashSet<String>,
) -> bool {
    before.is_some_and(|(word, possessive)| possessive || is_determiner(word))
        && run.all(|w| relation_words.contains(&crate::words::singular(w)))
}

/// A word that opens a noun phrase: an article, a possessive or a quantifier ("the ISBN", "their
/// URL", "how many URLs").
fn is_determiner(word: &str) -> bool {
    matches!(
        word,
        "the"
            | "a"
            | "an"
            | "his"
            | "her"
            | "its"
            | "their"
            | "our"
            | "your"
            | "my"
            | "whose"
            | "which"
            | "what"
            | "many"
            | "much"
            | "any"
            | "some"
            | "each"
            | "every"
            | "no"
    )
}

/// Whether the word at `at` continues the title before it as its sequel's number ("Titanic 2"):
/// a number that ends a yes/no question asking whether something's attribute is a value ("Is
/// the citation count of James Tuot 35?") is rather that value ("Did James Cameron direct
/// Titanic 2?" still asks about a sequel).
fn sequel_at(lower: &[String], at: usize, kind: QuestionKind) -> bool {
    let value_asked = kind == QuestionKind::Boolean
        && at + 1 == lower.len()
        && lower
            .first()
            .is_some_and(|w| matches!(w.as_str(), "is" | "was" | "are" | "were"))
        && lower.get(1).is_some_and(|w| w == "the");
    lower.get(at).is_some_and(|w| is_sequel_number(w)) && !value_asked
}

/// The head nouns of the graph's class names ("film", "lake", "state", "version"), singular.
fn class_heads(profile: Option<&chatty_kg_graph::profile::SchemaProfile>) -> std::collections::HashSet<String> {
    profile
        .iter()
        .flat_map(|p| p.classes.iter())
        .filter_map(|c| normalize_tokens(&c.label).pop())
        .map(|w| crate::words::singular(&w))
        .collect()
}

/// Whether the word at `next` is a noun in lower case that names a class of the graph: a
/// capitalised word before it modifies it ("Danish films", "a German lake", "U.S. states"), an
/// adjective, not part of a name ("Kerouac born" is a name and a verb).
fn modifies_a_class(words: &[(String, bool)], next: usize, class_heads: &std::collections::HashSet<String>) -> bool {
    let next = words.get(next).map(|(w, _)| w.as_str()).unwrap_or("");
    next.chars().next().is_some_and(char::is_lowercase)
        && class_heads.contains(&crate::words::singular(&next.to_lowercase()))
}

/// The names a question writes, for one none of whose spans is a label (a name misspelt,
/// written in part, or otherwise than the graph's label): its quoted texts, kept quoted so that
/// matching also looks them up as values, and its runs of capitalised words after the first
/// word, titles dropped, each at most once. A run inside a quoted text is left to it; a
/// capitalised word before a class's noun modifies it and is no name; the asked class's own
/// words are none, nor is a run of words of relations' labels ("the *ISBN* of", "a *URL*"), nor a
/// short code that many vertices store (it names a value, as in [`spot`]: "the finish *Zn*").
/// These are the mentions a model could give, whose entities must be words of the question:
/// where the question writes names, the graph links them without the model.
pub(crate) async fn written_names(
    ctx: &AgentContext,
    question: &str,
    class: Option<&str>,
    kind: QuestionKind,
) -> Result<Vec<String>, AgentError> {
    let profile = ctx.kg.profile().await.ok();
    let relation_words = ctx.relation_words().await;
    let codes = short_codes(question);
    let mut names = Vec::new();
    for name in names_in(question, class, kind, &class_heads(profile.as_deref()), &relation_words) {
        if codes.contains(&name) {
            let holders: std::collections::HashSet<String> = ctx
                .kg
                .value_subjects(&name, CODE_ROWS)
                .await?
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            if holders.len() > MAX_CODE_HOLDERS {
                continue;
            }
        }
        names.push(name);
    }
    names.truncate(MAX_ENTITIES);
    Ok(names)
}

/// [`written_names`] with the graph's class heads and relation words given. A name is as the
/// question writes it, its inner punctuation kept ("Allison C. Bonnell", "University of
/// Technology, Germany": a value may be stored so).
fn names_in(
    question: &str,
    class: Option<&str>,
    kind: QuestionKind,
    class_heads: &std::collections::HashSet<String>,
    relation_words: &std::collections::HashSet<String>,
) -> Vec<String> {
    let quoted = quoted_texts(question);
    let quoted_words: Vec<Vec<String>> = quoted.iter().map(|q| normalize_tokens(q)).collect();
    let mut names: Vec<String> = quoted.iter().map(|q| format!("\u{201C}{q}\u{201D}")).collect();
    let placed = placed_words(question);
    let words: Vec<(String, bool)> = placed.iter().map(|(word, _)| word.clone()).collect();
    // A run of capitals after a determiner or a possessive whose every word is a word of the
    // graph's relations' labels is the relation asked about ("the *ISBN* of …", "their *URL*",
    // "X's *Homepage*"), neither a name nor part of the title after it ("Who wrote *Name* of the
    // Rose?" has neither).
    let relation = |start: usize, len: usize| {
        let before = start.checked_sub(1).map(|i| (words[i].0.to_lowercase(), words[i].1));
        let run: Vec<String> = words[start..start + len]
            .iter()
            .flat_map(|(w, _)| normalize_tokens(w))
            .collect();
        names_a_relation(
            before.as_ref().map(|(w, possessive)| (w.as_str(), *possessive)),
            run.iter().map(String::as_str),
            relation_words,
        )
    };
    for (mut start, mut len) in title_runs(&words, kind, &relation) {
        // A sentence's first word has its capital whatever it is, like the question's own
        // first word ("What are the three most recent versions? *Newest* first please.").
        if crate::words::starts_a_sentence(question, placed[start].1.start) {
            (start, len) = (start + 1, len - 1);
            if len == 0 {
                continue;
            }
        }
        let mention = question[placed[start].1.start..placed[start + len - 1].1.end].to_owned();
        let tokens = normalize_tokens(&mention);
        if tokens.is_empty()
            || quoted_words.iter().any(|q| holds(q, &tokens))
            || modifies_a_class(&words, start + len, class_heads)
            || class.is_some_and(|c| names_part_of(&tokens, c))
            || (len == 1 && is_function_word(&tokens.join(" ")))
            || names.iter().any(|n| normalize_tokens(n) == tokens)
        {
            continue;
        }
        names.push(mention);
    }
    names
}

/// [`capitalised_runs`] as titles are written: a run goes on over joining words to the next
/// capitalised word, and takes a sequel's number after it ("The Time of the Hero 2"); a run
/// `relation` says is a relation's word is none.
fn title_runs(
    words: &[(String, bool)],
    kind: QuestionKind,
    relation: &dyn Fn(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (start, len) in capitalised_runs(words) {
        if relation(start, len) {
            continue;
        }
        if let Some(last) = runs.last_mut()
            && last.0 + last.1 < start
            && (last.0 + last.1..start).all(|i| TITLE_JOINERS.contains(&words[i].0.to_lowercase().as_str()))
            && !words[last.0 + last.1 - 1].1
        {
            last.1 = start + len - last.0;
            continue;
        }
        runs.push((start, len));
    }
    // A sequel's number ends the title it follows.
    let lower: Vec<String> = words.iter().map(|(w, _)| w.to_lowercase()).collect();
    for run in &mut runs {
        let end = run.0 + run.1;
        if lower[end..]
            .first()
            .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
            && sequel_at(&lower, end, kind)
        {
            run.1 += 1;
        }
    }
    runs
}

/// Runs of words written with a capital after the question's first word, titles dropped from
/// their start, each as `(start, len)`; a run ends at a possessive.
fn capitalised_runs(words: &[(String, bool)]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let capital = |w: &str| w.chars().next().is_some_and(char::is_uppercase);
        if !capital(&words[i].0) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < words.len() && capital(&words[end].0) {
            end += 1;
            if words[end - 1].1 {
                break;
            }
        }
        let mut start = i;
        while start + 1 < end && is_title(words[start].0.to_lowercase().trim_end_matches('.')) {
            start += 1;
        }
        runs.push((start, end - start));
        i = end;
    }
    runs
}

/// The strongest spans that do not overlap; a second one only when it looks like a name (capitals
/// or several words, or a common word its vertex's class follows), not a common word that happens
/// to be some vertex's label. A typed common word is not the first: the strongest other one may
/// stand beside it ("Which *shells* have *required* priority?").
fn choose(mut found: Vec<Spotted>, max: usize) -> Vec<Spotted> {
    found.sort_by(|a, b| b.strength.total_cmp(&a.strength).then(a.start.cmp(&b.start)));
    let mut chosen: Vec<Spotted> = Vec::new();
    for span in found {
        if chosen.len() >= max {
            break;
        }
        let overlaps = chosen
            .iter()
            .any(|c| span.start < c.start + c.len && c.start < span.start + span.len);
        let looks_like_a_name = span.len >= 2 || span.strength >= NAME_STRENGTH;
        if !overlaps && (chosen.iter().all(|c| c.typed) || looks_like_a_name) {
            chosen.push(span);
        }
    }
    chosen
}

/// A number that continues a title: digits, or a roman numeral from II to X.
pub(crate) fn is_sequel_number(word: &str) -> bool {
    (!word.is_empty() && word.len() <= 2 && word.chars().all(|c| c.is_ascii_digit()))
        || matches!(word, "ii" | "iii" | "iv" | "v" | "vi" | "vii" | "viii" | "ix" | "x")
}

/// A QIR from the question alone, or `None` when no span of it is an entity's exact label: the
/// spotted entities, each in a triple with the rest of the question's content words as its
/// relation phrase. Nothing is invented: the entities are in the graph and the phrase is the
/// question's own words. `kind` is the question's form, read from its words; `class` is a class
/// the question names (its normalised words), which is not an entity even where a vertex has its
/// label.
pub(crate) async fn spot(
    ctx: &AgentContext,
    question: &str,
    kind: QuestionKind,
    class: Option<&str>,
) -> Result<Option<Qir>, AgentError> {
    // The word modifying the asked class: a mention when a vertex is labelled so ("which
    // *education* packages"), else read against the class's values, never as a code ("Which
    // *Greek* parties": Greece, not a literal "Greek").
    let modifier = class.and_then(|c| crate::linking::modifiers::modifier_of(question, c));
    let mut spotted = spot_entities(ctx, question, MAX_ENTITIES, class, modifier.as_deref(), kind).await?;
    // A name written in part inside a quoted value ("the thesis 'New Data Based …'") is that
    // value's words, looked up as the value below.
    let values = literal_mentions(question);
    spotted.retain(|s| {
        !s.partial
            || !values
                .iter()
                .any(|v| holds(&normalize_tokens(v), &normalize_tokens(&s.mention)))
    });
    let mut entities: Vec<String> = spotted.iter().map(|s| s.mention.clone()).collect();
    // Values written in the question that the graph stores as literals ("ISBN 0-306-40615-2",
    // a quoted title that is no label, a short code no label holds): the matching agent links
    // them by value.
    // Short codes are the last resort before the model: beside a name the graph holds, a short
    // capitalised word is rather a name's abbreviation ("the *US* Senate") than an identifier.
    let codes: Vec<String> = short_codes(question)
        .into_iter()
        .filter(|c| {
            spotted.is_empty()
                && !values.iter().any(|v| v.contains(c.as_str()))
                && modifier.as_deref() != Some(c.as_str())
                && !class.is_some_and(|class| names_part_of(&normalize_tokens(c), class))
        })
        .collect();
    let written = values.len();
    for (i, value) in values.into_iter().chain(codes).enumerate() {
        let words = normalize_tokens(&value);
        if entities.len() >= MAX_ENTITIES
            || !identifying(&value)
            || entities.iter().any(|e| {
                let e = normalize_tokens(e);
                holds(&e, &words) || holds(&words, &e)
            })
        {
            continue;
        }
        // A short code identifies what stores it only when few vertices do ("Lt", one category);
        // one that many share ("US" as a country field) names a value, not a vertex.
        let short = i >= written;
        let holders: std::collections::HashSet<String> = ctx
            .kg
            .value_subjects(&value, if short { CODE_ROWS } else { 1 })
            .await?
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        if !holders.is_empty() && (!short || holders.len() <= MAX_CODE_HOLDERS) {
            // Kept quoted, so that matching looks it up as the value it is.
            entities.push(format!("\u{201C}{value}\u{201D}"));
        }
    }
    if entities.is_empty() {
        return Ok(None);
    }
    Ok(Some(qir_of(question, entities, kind)))
}

/// The QIR of a question whose entities are known: each in a triple with the rest of the
/// question's content words as its relation phrase (two entities of a yes/no question in one).
pub(crate) fn qir_of(question: &str, entities: Vec<String>, kind: QuestionKind) -> Qir {
    let words: Vec<&str> = question
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        // A mention's possessive ("Thorsten *Glaser's* packages") is the mention's word.
        .map(|w| {
            w.strip_suffix("'s")
                .or_else(|| w.strip_suffix("\u{2019}s"))
                .unwrap_or(w)
        })
        .filter(|w| !w.is_empty())
        .collect();
    let mentions: Vec<String> = entities.iter().map(|m| normalize_tokens(m).join(" ")).collect();
    let phrase: Vec<&str> = words
        .iter()
        .filter(|w| {
            let l = normalize_tokens(w).join(" ");
            !is_function_word(&l)
                && !QUESTION_WORDS.contains(&l.as_str())
                && !mentions.iter().any(|m| m.split(' ').any(|t| t == l))
        })
        .copied()
        .collect();
    let relation = if phrase.is_empty() {
        "related to".to_owned()
    } else {
        phrase.join(" ")
    };
    let triples = if kind == QuestionKind::Boolean && entities.len() == 2 {
        vec![QirTriple {
            subject: QirTerm::Entity(entities[0].clone()),
            relation: relation.clone(),
            object: QirTerm::Entity(entities[1].clone()),
        }]
    } else {
        entities
            .iter()
            .map(|e| QirTriple {
                subject: QirTerm::Entity(e.clone()),
                relation: relation.clone(),
                object: QirTerm::Variable("answer".into()),
            })
            .collect()
    };
    let unknowns = if triples.iter().any(|t| matches!(t.object, QirTerm::Variable(_))) {
        vec!["answer".to_owned()]
    } else {
        Vec::new()
    };
    Qir {
        entities,
        unknowns,
        relations: vec![relation],
        triples,
        kind,
        order: None,
        source: QirSource::EntitySpotting,
    }
}

/// Values written in the question that may be stored as literals: quoted text ("the paper
/// titled 'Deep Residual Learning'", “…”, ‘…’) and codes: words of digits with separators or
/// letters ("0-306-40615-2", "10.1112/plms/s2-45.1.161", "B0012"), or five digits or more. A year
/// or a lone number is not one; a quote inside a word ("Tom's") opens nothing.
pub(crate) fn literal_mentions(question: &str) -> Vec<String> {
    let mut out = quoted_texts(question);
    for raw in question.split_whitespace() {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        // A web address is a value too ("https://elv.sh", "www.example.org"), with the slash it
        // ends with ("https://xon.sh/?").
        let address = word.contains("://") || word.starts_with("www.");
        let word = if address {
            raw.trim_start_matches(['(', '<', '"', '\'', '\u{201C}', '\u{2018}'])
                .trim_end_matches([
                    '.', ',', ';', ':', '!', '?', ')', '>', '"', '\'', '\u{201D}', '\u{2019}',
                ])
        } else if word.is_empty() && raw.chars().any(is_symbol) {
            // A symbol written alone ("the character ☃", "the sign €").
            raw.trim_matches(|c: char| c.is_ascii_punctuation())
        } else {
            word
        };
        let digits = word.chars().filter(char::is_ascii_digit).count();
        let separated = word.chars().any(|c| matches!(c, '-' | '.' | '/' | ':'));
        let lettered = word.chars().any(char::is_alphabetic);
        let code = digits >= 1 && word.len() >= 5 && (separated || lettered)
            || (digits >= 5 && digits == word.chars().count())
            || address
            || word.chars().any(is_symbol);
        if code && !word.is_empty() && !out.iter().any(|o| o.contains(word)) {
            out.push(word.to_owned());
        }
    }
    out
}

/// Texts written between quotes ('…', "…", “…”, ‘…’) of four characters at least; a quote inside
/// a word ("Tom's") opens nothing.
fn quoted_texts(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let chars: Vec<char> = question.chars().collect();
    let closing = |open: char| match open {
        '\u{201C}' => '\u{201D}',
        '\u{2018}' => '\u{2019}',
        other => other,
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let opens = matches!(c, '"' | '\'' | '\u{201C}' | '\u{2018}') && (i == 0 || !chars[i - 1].is_alphanumeric());
        if opens {
            let close = closing(c);
            let end = (i + 1..chars.len())
                .find(|&j| chars[j] == close && chars.get(j + 1).is_none_or(|n| !n.is_alphanumeric()));
            if let Some(end) = end {
                let inner: String = chars[i + 1..end].iter().collect();
                let inner = inner.trim();
                // Four characters at least, as the matching agent's lookup by value asks.
                if inner.chars().count() >= 4
                    && inner.chars().any(char::is_alphanumeric)
                    && !out.iter().any(|o| o == inner)
                {
                    out.push(inner.to_owned());
                }
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Short words that may be codes stored as values: a capital and no more than five letters or
/// digits, not the question's first word ("the ISO code *Dsrt*", "abbreviated *Lt*", "*MN*").
/// They are also how names are written in part ("Obama", "GMT") or abbreviated ("US"), so they
/// are looked up as values only when no span of the question is a label, and never take a
/// name's place.
pub(crate) fn short_codes(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, raw) in question.split_whitespace().enumerate() {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let short = i > 0
            && !word.is_empty()
            && word.chars().count() <= 5
            && word.chars().any(char::is_uppercase)
            && word
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '+' | '-' | '.'))
            && !is_function_word(&word.to_lowercase());
        if short && !out.iter().any(|o| o == word) {
            out.push(word.to_owned());
        }
    }
    out
}

/// A character that is neither a letter, a digit, a space nor punctuation: a symbol ("☃", "€",
/// "§").
fn is_symbol(c: char) -> bool {
    !c.is_alphanumeric()
        && !c.is_whitespace()
        && !c.is_ascii()
        && !matches!(c, '¡' | '«' | '»' | '¿' | '·' | '\u{2000}'..='\u{206F}' | '\u{3000}'..='\u{303F}' | '\u{FE30}'..='\u{FE4F}')
}

/// Whether a value written in the question can identify the vertex that stores it: not a short
/// word or a lone number ("2", "red", a year), but a code ("Lt", "Dsrt", "0-306-40615-2", five
/// digits or more), a symbol, or four characters at least.
pub(crate) fn identifying(value: &str) -> bool {
    let digits_only = value.chars().all(|c| c.is_ascii_digit());
    if digits_only {
        return value.len() >= 5;
    }
    value.chars().any(is_symbol)
        || (value.chars().any(char::is_alphanumeric)
            && (value.chars().count() >= 4 || value.chars().any(char::is_uppercase)))
}

/// Whether the words `inner` stand together in `outer`.
fn holds(outer: &[String], inner: &[String]) -> bool {
    crate::linking::find_span(outer, inner).is_some()
}

/// Vertices that may store a short code for it to identify them.
const MAX_CODE_HOLDERS: usize = 4;
/// Rows (vertex, predicate) read to count a short code's holders.
const CODE_ROWS: usize = 16;

/// Entities taken from one question at most (two anchors join at the answer).
const MAX_ENTITIES: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;

    fn span(mention: &str, start: usize, len: usize, strength: f32) -> Spotted {
        Spotted {
            mention: mention.into(),
            start,
            len,
            strength,
            partial: false,
            typed: false,
        }
    }

    #[test]
    fn two_letter_words_may_be_names_unless_pronouns_or_particles() {
        assert!(long_enough("ed") && long_enough("uk") && long_enough("vim"));
        assert!(!long_enough("he") && !long_enough("up") && !long_enough("x"));
    }

    #[test]
    fn values_written_in_the_question() {
        assert_eq!(
            literal_mentions("Who wrote the book with ISBN 0-306-40615-2?"),
            ["0-306-40615-2"]
        );
        assert_eq!(
            literal_mentions("Who authored the paper titled 'Deep Residual Learning.'?"),
            ["Deep Residual Learning."]
        );
        assert_eq!(
            literal_mentions("Which venue published “A Note on Graphs”?"),
            ["A Note on Graphs"]
        );
        assert_eq!(literal_mentions("Who lives at postcode 75001?"), ["75001"]);
        assert_eq!(
            literal_mentions("Which package has the homepage https://elv.sh?"),
            ["https://elv.sh"]
        );
        assert_eq!(
            literal_mentions("What is the DOI 10.1112/plms/s2-45.1.161 about?"),
            ["10.1112/plms/s2-45.1.161"]
        );
        assert_eq!(
            literal_mentions("Which package's website is https://xon.sh/?"),
            ["https://xon.sh/"]
        );
        assert_eq!(literal_mentions("Which script has the ISO 15924 code Dsrt?"), ["15924"]);
        assert_eq!(
            short_codes("Which script has the ISO 15924 code Dsrt?"),
            ["ISO", "Dsrt"]
        );
        assert_eq!(
            short_codes("Is the wife of president Obama called Michelle?"),
            ["Obama"]
        );
        assert_eq!(literal_mentions("What is the name of the character ☃?"), ["☃"]);
        assert!(identifying("Lt") && identifying("☃") && identifying("75001"));
        assert!(!identifying("red") && !identifying("1994") && !identifying("2"));
        assert!(literal_mentions("Which of Tom's films came out in 1994?").is_empty());
        assert!(literal_mentions("How many films did the Coen brothers make after 2000?").is_empty());
    }

    #[test]
    fn a_number_after_a_title_is_its_sequel_unless_it_ends_a_yes_no_question() {
        let lower = |q: &str| -> Vec<String> { q.split(' ').map(str::to_owned).collect() };
        assert!(sequel_at(&lower("who directed titanic 2"), 3, QuestionKind::List));
        assert!(sequel_at(&lower("is titanic 2 a film"), 2, QuestionKind::Boolean));
        assert!(!sequel_at(
            &lower("is the citation count of james tuot 35"),
            8,
            QuestionKind::Boolean
        ));
        assert!(!sequel_at(&lower("who directed titanic"), 3, QuestionKind::List));
        assert!(sequel_at(
            &lower("did james cameron direct titanic 2"),
            5,
            QuestionKind::Boolean
        ));
    }

    #[test]
    fn names_the_question_writes() {
        let heads: std::collections::HashSet<String> = ["film".to_owned(), "player".to_owned()].into();
        let relations: std::collections::HashSet<String> = ["isbn".to_owned(), "url".to_owned()].into();
        let names = |q: &str, class: Option<&str>| {
            let kind = if q.starts_with("Is ") {
                QuestionKind::Boolean
            } else {
                QuestionKind::List
            };
            names_in(q, class, kind, &heads, &relations)
        };
        // As written, inner punctuation kept (a value may be stored so).
        assert_eq!(names("When did Allison C. Bonnell die?", None), ["Allison C. Bonnell"]);
        assert_eq!(
            names("Who studied at the University of Technology, Germany?", None),
            ["University of Technology, Germany"]
        );
        assert_eq!(names("Where was JFK assassinated?", None), ["JFK"]);
        // Titles dropped, a quoted text whole (and kept quoted), a run inside it left to it.
        assert_eq!(names("Whom did President Kenedy marry?", None), ["Kenedy"]);
        assert_eq!(
            names("Who authored 'Systems of Logic Based on Ordinals'?", None),
            ["\u{201C}Systems of Logic Based on Ordinals\u{201D}"]
        );
        // A capitalised word before a class's noun modifies it; the asked class is no name.
        assert!(names("Which Danish films were shot in 1990?", None).is_empty());
        assert!(names("Which Chess players died where they were born?", None).is_empty());
        assert!(names("How many Astronauts are there?", Some("astronauts")).is_empty());
        // A question that writes no name in capitals writes none: the model may read it.
        assert!(names("is stephanie a female?", None).is_empty());
        assert!(names("ITV employs how many people?", None).is_empty());
        assert_eq!(
            names("Is Serbian Titieca a doctoral student of Werner Heisenbreg?", None),
            ["Serbian Titieca", "Werner Heisenbreg"]
        );
        // A title goes on over the words that join its capitalised ones, and takes its sequel's
        // number; a relation's preposition ends it.
        assert_eq!(
            names("Who wrote The Time of the Hero 2?", None),
            ["The Time of the Hero 2"]
        );
        assert_eq!(names("Is Lma in Perú?", None), ["Lma", "Perú"]);
        // A number that ends a yes/no question is the value it asks about, not a sequel's.
        assert_eq!(names("Is the citation count of James Tuot 35?", None), ["James Tuot"]);
        // A run of words of relations' labels is none, nor the start of the title after it; a
        // run with another word is a name.
        assert_eq!(
            names("What is the ISBN of The Time of the Hero?", None),
            ["The Time of the Hero"]
        );
        assert!(names("How many URLs does it have?", None).is_empty());
        assert!(names("What is the Isbn Url of it?", None).is_empty());
        assert_eq!(names("Who is in the Isbn Squad?", None), ["Isbn Squad"]);
        assert_eq!(names("Who wrote Isbn of the Rose?", None), ["Isbn of the Rose"]);
        assert_eq!(names("What is Tom Hanx's Url?", None), ["Tom Hanx"]);
        // "and" joins two names.
        assert_eq!(
            names("Did Tom Hanx and Meryl Strep act together?", None),
            ["Tom Hanx", "Meryl Strep"]
        );
    }

    #[test]
    fn the_strongest_spans_that_do_not_overlap_and_a_second_only_if_it_looks_like_a_name() {
        let found = vec![
            span("star", 5, 1, 1.5),
            span("Tom Hanks", 3, 2, 6.0),
            span("Hanks", 4, 1, 3.0),
            span("English", 8, 1, 3.0),
        ];
        let chosen: Vec<String> = choose(found, 2).into_iter().map(|s| s.mention).collect();
        assert_eq!(chosen, ["Tom Hanks", "English"]);
        let common = vec![span("Tom Hanks", 3, 2, 6.0), span("star", 5, 1, 1.5)];
        let chosen: Vec<String> = choose(common, 2).into_iter().map(|s| s.mention).collect();
        assert_eq!(chosen, ["Tom Hanks"], "a lower-case common word is no second entity");
        let alone = vec![span("star", 5, 1, 1.5)];
        assert_eq!(choose(alone, 2).len(), 1, "but it may be the only one");
        // A common word its vertex's class follows is a name, and leaves the place of the one
        // common word to the other ("Which shells have required priority?").
        let typed = Spotted {
            typed: true,
            ..span("required", 3, 1, NAME_STRENGTH)
        };
        let chosen: Vec<String> = choose(vec![span("shells", 1, 1, 1.5), typed.clone()], 2)
            .into_iter()
            .map(|s| s.mention)
            .collect();
        assert_eq!(chosen, ["required", "shells"]);
        let typed = Spotted { start: 7, ..typed };
        let chosen: Vec<String> = choose(vec![span("Tom Hanks", 3, 2, 6.0), typed, span("star", 5, 1, 1.5)], 3)
            .into_iter()
            .map(|s| s.mention)
            .collect();
        assert_eq!(chosen, ["Tom Hanks", "required"], "beside a name, still no common word");
    }

    #[test]
    fn a_mentions_possessive_is_no_word_of_the_relation() {
        let qir = qir_of(
            "What are Thorsten Glaser's three biggest packages?",
            vec!["Thorsten Glaser".into()],
            QuestionKind::List,
        );
        assert_eq!(qir.triples[0].relation, "three biggest packages");
        let qir = qir_of(
            "Who is Rob\u{2019}s maintainer?",
            vec!["Rob".into()],
            QuestionKind::List,
        );
        assert_eq!(qir.triples[0].relation, "maintainer");
    }
}
