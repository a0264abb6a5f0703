//! Path-search agent (beyond the paper, after TARGA and KG-GPT): decides the question's form from
//! its words, finds the relation paths that exist around the linked vertices
//! ([`crate::candidates::paths`]), ranks them against the question ([`crate::candidates::ranking`]) and
//! chooses one.
//!
//! **One model call at most.** When the best path beats the runner-up by at least
//! `path_margin`, it is taken without asking; otherwise the model picks among the best
//! `path_choices` paths in one grammar-constrained call (an enum of their verbalizations), checked
//! like every pick (≤ θ attempts). The margin rule was measured on MetaQA dev questions
//! (reports/margin-calibration.md, 105 two- and three-hop questions of a sample the reports do
//! not use): the default 0.5 B model's pick was worse than the ranking's first path at every
//! margin (mean F1 0.734 never asking, 0.685 asking below 0.05, 0.442 always asking), so the
//! default margin is 0 and the model is not asked; a stronger model can be given a margin.
//!
//! Outcomes: [`CHOSEN`], [`BY_EXAMPLE`] when no path fits but examples made from feedback may,
//! or [`STOPPED`](crate::state::STOPPED) when no path fits the question.

use crate::ask::{ask_validated, check_reply};
use crate::candidates::paths::{Anchor, ClassQuery, EndKind, OnlyRelation, RelationPath, SearchBudget, SearchReport};
use crate::candidates::queries::PredicateChoice;
use crate::candidates::queries::{COUNT_VARIABLE, ClassCheck, PREDICATE_VARIABLE};
use crate::candidates::ranking::{PathRanker, ScoredPath, UNJUSTIFIED_HOP};
use crate::candidates::search::search;
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::qir::{QirSource, QuestionKind};
use crate::state::{AgentState, ChoiceReason, LinkMethod, Outcome, PathChoice, RelationLink};
use crate::understanding::classes::{ClassMention, ClassRole};
use crate::understanding::form::{Expectation, QuestionForm};
use crate::words::RELATION_PREPOSITIONS;
use chatty_kg_graph::Term;
use chatty_kg_graph::text::normalize_tokens;
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

pub struct PathSearchAgent;

pub const NAME: &str = "path_search";
pub const CHOSEN: &str = "chosen";
/// The question is about a class alone, whether an entity is of a class, or asks for the vertex
/// that holds a value it writes: no path to choose.
pub const OVER_CLASS: &str = "over_class";

/// No path fits the question's words, but there are examples made from feedback to try.
pub const BY_EXAMPLE: &str = "by_example";
/// One of two mentions, a common noun, is read as words of the relation: the search again.
pub const RELINKED: &str = "relinked";

/// Homonyms of the linked vertices tried at most per question when no path fits.
const MAX_HOMONYM_TRIES: usize = 3;

/// How much better a homonym's best path must score to take its vertex instead.
const BETTER_HOMONYM: f32 = 0.05;
/// How much better a rival holder of a partial name's words must fit than the most connected
/// one: the name says less of which vertex is meant, but the degree said it first.
const BETTER_RIVAL: f32 = 0.15;

/// A path reaching the question's other anchor is evidence the graph gives, for yes/no questions.
const REACHES_OTHER_ANCHOR: f32 = 0.2;

#[derive(Deserialize)]
struct Pick {
    path: String,
}

#[async_trait::async_trait]
impl Agent for PathSearchAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        let qir = state.require_qir(NAME)?;
        let question = state.working_question().to_owned();
        let model_kind = (qir.source == QirSource::Model).then_some(qir.kind);
        let mut form = crate::understanding::form::form_of(ctx, &question, model_kind).await;
        if state.answer_set.as_ref().is_some_and(|s| s.count) {
            // "How many are there?" after a list: the previous question, counted.
            form.kind = QuestionKind::Count;
            form.order = None;
        }
        let mut anchors: Vec<Anchor> = Vec::new();
        for link in state.entities.iter().filter(|l| !l.read_as_words) {
            if let (Some(iri), Some(label)) = (&link.iri, &link.label)
                && !anchors.iter().any(|a| &a.iri == iri)
            {
                anchors.push(Anchor {
                    mention: link.mention.clone(),
                    iri: iri.clone(),
                    label: label.clone(),
                    modifies_class: link.method == LinkMethod::Modifier,
                });
            }
        }
        // A value the question writes ("founded in 1950") constrains the answers, unless it is
        // part of a name the graph linked ("Apollo 14").
        let mentions: Vec<String> = state
            .entities
            .iter()
            .filter(|l| !l.read_as_words)
            .map(|l| l.mention.clone())
            .collect();
        if form
            .constraint
            .as_ref()
            .is_some_and(|c| crate::candidates::values::inside_mentions(c, &mentions))
        {
            form.constraint = None;
        }
        // A class the question names is what the answer must be, not a vertex to start from.
        // An anchor written as its owner ("Jordi Mallach's packages") relates to it as the graph
        // says, in one hop, as a word modifying it does.
        let class = state.class.clone();
        if let Some(c) = &class {
            anchors.retain(|a| a.iri != c.iri);
            for anchor in &mut anchors {
                anchor.modifies_class |= crate::understanding::classes::owns_class(&question, &anchor.mention, c);
            }
        }
        // "Is Lima a city?", "How many countries are there?": the class decides, no path.
        if let Some(c) = &class {
            let membership =
                c.role == ClassRole::Membership && form.kind == QuestionKind::Boolean && anchors.len() == 1;
            let alone = c.role == ClassRole::Answer && anchors.is_empty() && qir.source == QirSource::Class;
            if membership || alone {
                state.form = Some(form);
                state.anchors = anchors;
                if let Some(c) = &mut state.class {
                    c.applied = true;
                }
                return Ok(OVER_CLASS);
            }
        }
        // "Which block starts at U+0370?", "Which package has the homepage https://elv.sh?": the
        // vertex that holds the value the question writes is the answer when it is of the class
        // asked for; no path from it.
        if let (Some(c), [anchor]) = (&class, anchors.as_slice())
            && c.role == ClassRole::Answer
            && form.kind == QuestionKind::List
            && form.order.is_none()
            && state
                .entities
                .iter()
                .any(|l| l.method == LinkMethod::Literal && l.iri.as_deref() == Some(anchor.iri.as_str()))
            && crate::linking::typed::is_member(ctx, &anchor.iri, &c.iri).await?
        {
            state.form = Some(form);
            state.anchors = anchors;
            if let Some(c) = &mut state.class {
                c.applied = true;
            }
            return Ok(OVER_CLASS);
        }
        // "Which one of those takes the most disk space?": an earlier answer's members, ordered
        // by their attribute; no path.
        if anchors.is_empty() && qir.source == QirSource::AnswerSet {
            state.form = Some(form);
            return Ok(OVER_CLASS);
        }
        // "Which organizations were founded in 1950?", "Who was born in 1945?": no vertex to
        // start from, but a value the answers have (of the class, when one is named).
        if anchors.is_empty() && form.constraint.is_some() && form.kind != QuestionKind::Boolean {
            state.form = Some(form);
            if let Some(c) = &mut state.class {
                c.applied = c.role == ClassRole::Answer;
            }
            return Ok(OVER_CLASS);
        }
        // "The Runic *block*", "the Deseret *script*": a word after a mention that names a class
        // its vertex belongs to says what the vertex is, not a relation from it; of homonyms,
        // the one of that class is meant.
        let mut mentions: Vec<String> = Vec::with_capacity(anchors.len());
        // The vertices whose class the question names after their mention: names, whatever
        // their case.
        let mut typed: Vec<String> = Vec::new();
        for anchor in &mut anchors {
            let e = link_of(&state.entities, &anchor.iri);
            let homonyms = e.map(|e| state.entities[e].homonyms.clone()).unwrap_or_default();
            let (mention, member) = with_kind(ctx, &question, anchor, &homonyms).await?;
            if let (Some(e), Some(member)) = (e, member.as_ref().filter(|m| **m != anchor.iri)) {
                *anchor = as_homonym(ctx, anchor, member).await?;
                take_homonym(&mut state.entities[e], anchor);
            }
            if member.is_some() {
                typed.push(anchor.iri.clone());
            }
            mentions.push(mention);
        }
        let phrases = if qir.source == QirSource::Model {
            qir.relations.clone()
        } else {
            Vec::new()
        };
        let labels: Vec<String> = anchors.iter().map(|a| a.label.clone()).collect();
        let named = class
            .as_ref()
            .filter(|c| c.role == ClassRole::Answer)
            .map(|c| c.mention.as_str());
        let mut ranker = PathRanker::new(ctx, &question, &mentions, &labels, &phrases, &form, named).await?;
        // No word left but the mentions ("What is the official language of Suriname?"): a
        // common noun among them (not one its class typed as a name) says the relation, and the
        // name alone is searched with it (a yes/no question about two vertices asks how they
        // relate: "Was Henry Knox a major general?").
        if !ranker.has_units()
            && form.kind != QuestionKind::Boolean
            && let Some(e) = crate::linking::common_noun_link(&state.entities)
            && !state.entities[e].iri.as_ref().is_some_and(|iri| typed.contains(iri))
        {
            state.entities[e].read_as_words = true;
            return Ok(RELINKED);
        }
        let p = &ctx.params;
        let budget = SearchBudget {
            max_hops: p.max_hops.max(1),
            max_queries: p.path_queries,
            max_time: Duration::from_millis(p.path_time_ms),
            beam: p.path_beam,
            endpoints_per_path: p.path_endpoints,
            frontier: p.path_frontier,
            edge_limit: p.path_edge_limit,
        };
        let started = std::time::Instant::now();
        let mut found = find_paths(ctx, &anchors, &labels, &mut ranker, &budget, &form, class.as_ref()).await?;
        // No path from a linked vertex fits ("Who was born in Arequipa?" of a ship named after
        // the city): its homonyms (same label, lower degree) are tried in turn, the first from
        // which a path fits taken, all within the one budget of the question's search.
        // With two anchors of a list or count, a path fits only if it ends at vertices: the
        // anchors' paths must meet at the answer.
        let joined = anchors.len() >= 2 && form.kind != QuestionKind::Boolean;
        // A path no word says (kept only to join) is no fit.
        let fits_from = |ranked: &[ScoredPath], i: usize| {
            ranked
                .iter()
                .any(|s| s.path.anchor == i && !s.unsaid && (!joined || s.path.end == EndKind::Entity))
        };
        let mut spent = found.report.queries;
        // Every try's class queries, shown whichever try answers.
        let mut class_queries = found.report.class_queries.clone();
        let mut tries = 0;
        'anchors: for i in 0..anchors.len() {
            if fits_from(&found.ranked, i) {
                continue;
            }
            let Some(e) = link_of(&state.entities, &anchors[i].iri) else {
                continue;
            };
            for homonym in state.entities[e].homonyms.clone() {
                let Some(left) = budget_left(&budget, spent, started, tries) else {
                    break 'anchors;
                };
                let mut tried = anchors.clone();
                tried[i] = as_homonym(ctx, &anchors[i], &homonym).await?;
                // A vertex of another name (a partial name's rival) stands in only for a lone
                // anchor: beside another anchor, that one may answer alone.
                if anchors.len() > 1 && is_rival(&anchors[i], &tried[i]) {
                    continue;
                }
                tries += 1;
                let tried_labels: Vec<String> = tried.iter().map(|a| a.label.clone()).collect();
                let again = find_paths(ctx, &tried, &tried_labels, &mut ranker, &left, &form, class.as_ref()).await?;
                spent += again.report.queries;
                class_queries.extend(again.report.class_queries.iter().cloned());
                if fits_from(&again.ranked, i) && (!is_rival(&anchors[i], &tried[i]) || says_words(&again.ranked, i)) {
                    take_homonym(&mut state.entities[e], &tried[i]);
                    anchors = tried;
                    found = again;
                    continue 'anchors;
                }
            }
        }
        // One anchor whose vertex has homonyms: the question may fit one of them better ("who
        // is the artist of Crash": the album's "artist", not a film's "starring"). Each is
        // searched while tries and budget last, and the one with the clearly best path wins.
        // Unless the question says its class ("the *package* gnuplot"): that one is meant.
        if let [anchor] = anchors.as_slice()
            && !typed.contains(&anchor.iri)
            && let Some(e) = link_of(&state.entities, &anchor.iri)
            && !state.entities[e].homonym_retried
            && state.entities[e].method != crate::state::LinkMethod::Clarified
            && !found.ranked.is_empty()
        {
            let mut best = found.ranked[0].score;
            let mut switched: Option<(Anchor, Found)> = None;
            for homonym in state.entities[e].homonyms.clone() {
                let Some(left) = budget_left(&budget, spent, started, tries) else {
                    break;
                };
                tries += 1;
                let tried = [as_homonym(ctx, anchor, &homonym).await?];
                let tried_labels = [tried[0].label.clone()];
                let again = find_paths(ctx, &tried, &tried_labels, &mut ranker, &left, &form, class.as_ref()).await?;
                spent += again.report.queries;
                class_queries.extend(again.report.class_queries.iter().cloned());
                let rival = is_rival(anchor, &tried[0]);
                let margin = if rival { BETTER_RIVAL } else { BETTER_HOMONYM };
                // The class the question asks for is a kind of answer the graph shows: a
                // homonym none of whose paths reaches it ("what *sections* do the dependencies
                // of gnuplot belong to" of the gnuplot source, whose paths end at packages)
                // answers another question, however well its words fit.
                if found.class_applied && !again.class_applied {
                    continue;
                }
                if let Some(first) = again.ranked.first()
                    && first.score > best + margin
                    && (!rival || says_words(&again.ranked, 0))
                {
                    best = first.score;
                    let [tried] = tried;
                    switched = Some((tried, again));
                }
            }
            if let Some((homonym, again)) = switched {
                take_homonym(&mut state.entities[e], &homonym);
                anchors[0] = homonym;
                found = again;
            }
        }
        found.report.queries = found.report.queries.max(spent);
        found.report.class_queries = class_queries;
        let Found {
            mut ranked,
            pool,
            report,
            class_applied,
        } = found;
        // The paths the choice is among: all, or those that reach an earlier answer's members.
        let mut considered = ranked.len();
        // Over an earlier answer ("which of them also have characters in the Coptic block?"):
        // the paths whose values the search saw include some of its members go first; the
        // others answer none of them.
        if let Some(set) = state.answer_set.as_ref().filter(|s| s.restricts()) {
            let members: std::collections::HashSet<&str> =
                set.members.iter().filter(|m| m.iri).map(|m| m.value.as_str()).collect();
            let reaches = |s: &ScoredPath| reaches_one_of(&s.path, |iri| members.contains(iri));
            let reaching = ranked.iter().filter(|s| reaches(s)).count();
            if reaching > 0 {
                ranked.sort_by_key(|s| !reaches(s));
                considered = reaching;
            }
        }
        if class_applied && let Some(c) = &mut state.class {
            c.applied = true;
        }
        state.path_search = Some(report);
        if ranked.is_empty() {
            state.form = Some(form);
            state.paths = Vec::new();
            // No path says what the question says; an example made from feedback on a similar
            // question may still (its query is tried on these vertices).
            if !ctx.examples.is_empty() {
                state.anchors = anchors;
                return Ok(BY_EXAMPLE);
            }
            // The reply names what the graph holds of the anchor instead.
            state.anchors = anchors;
            state.path_pool = pool;
            return Ok(state.stop(Outcome::NoQuery));
        }
        // Two anchors of a list or count question: their paths' joins decide, tried best pair
        // first, so there is no single path to pick.
        let choice = if anchors.len() >= 2 && form.kind != QuestionKind::Boolean {
            PathChoice {
                index: 0,
                reason: ChoiceReason::Only,
                margin: None,
            }
        } else {
            choose(ctx, &question, &ranked[..considered]).await?
        };
        state.form = Some(form);
        state.path_pool = pool;
        state.anchors = anchors;
        state.path_choice = Some(choice);
        state.relations = relation_links(&ranked[choice.index]);
        state.paths = ranked;
        Ok(CHOSEN)
    }
}

/// Whether a vertex the search saw at the path's end is one of those `wanted` says.
fn reaches_one_of(path: &RelationPath, wanted: impl Fn(&str) -> bool) -> bool {
    path.endpoints
        .iter()
        .any(|t| matches!(t, chatty_kg_graph::Term::NamedNode(n) if wanted(n.as_str())))
}

/// The anchor's mention with the class word that follows it in the question, and the vertex of
/// that class (the anchor's, else the first homonym's) when one is ("Runic" → "Runic block");
/// else the mention alone. After a preposition the class word stays the relation's ("in the
/// Runic block": "in block"), and only the vertex is chosen by it, unless the preposition is the
/// "of" of a relation the vertex itself has ("the last code point of the Runic block").
async fn with_kind(
    ctx: &AgentContext,
    question: &str,
    anchor: &Anchor,
    homonyms: &[String],
) -> Result<(String, Option<String>), AgentError> {
    let alone = (anchor.mention.clone(), None);
    let words = normalize_tokens(question);
    let mention = normalize_tokens(&anchor.mention);
    let Some((start, end)) = crate::linking::find_span(&words, &mention) else {
        return Ok(alone);
    };
    // After a preposition ("characters *in the Runic block*", "part *of the Greek script*") the
    // class word goes with it to name the relation ("in block"): it still says which vertex is
    // meant, but stays a word of the relation.
    let before = (0..start)
        .rev()
        .find(|&i| !matches!(words[i].as_str(), "the" | "a" | "an"));
    let relation_word = before.is_some_and(|i| RELATION_PREPOSITIONS.contains(&words[i].as_str()));
    let vertices: Vec<&str> = std::iter::once(anchor.iri.as_str())
        .chain(homonyms.iter().map(String::as_str))
        .collect();
    if let Some((vertex, len)) = crate::linking::typed::typed_vertex(ctx, &words, end, &vertices).await? {
        // Unless the noun before "of" names a relation of the vertex itself ("the last code
        // *point* of the Runic block", "the *abbreviation* of the lowercase letter general
        // category"): the question asks for the vertex's own attribute, and the class word only
        // says what the vertex is ("characters of the Emoticons block" keeps "of block": no
        // relation of a block is named "character").
        let own_relation = match before.and_then(|i| crate::linking::typed::relation_noun_before(&words, i + 1)) {
            Some(noun) => crate::linking::typed::has_relation_named(ctx, &vertex, &noun).await?,
            None => false,
        };
        let mention = if relation_word && !own_relation {
            anchor.mention.clone()
        } else {
            format!("{} {}", anchor.mention, words[end..end + len].join(" "))
        };
        return Ok((mention, Some(vertex)));
    }
    // "the *package* gnuplot": the class word before it says which vertex it is, and is no
    // relation's word either way (the ranking reads it as the mention's).
    if let Some(vertex) = crate::linking::typed::typed_vertex_before(ctx, &words, start, &vertices).await? {
        return Ok((anchor.mention.clone(), Some(vertex)));
    }
    Ok(alone)
}

/// What is left of the question's one search budget for another homonym's search, or `None`
/// when the tries are used up or too little is left (a hop takes up to four queries).
fn budget_left(budget: &SearchBudget, spent: usize, started: std::time::Instant, tries: usize) -> Option<SearchBudget> {
    let left = SearchBudget {
        max_queries: budget.max_queries.saturating_sub(spent),
        max_time: budget.max_time.saturating_sub(started.elapsed()),
        ..budget.clone()
    };
    (tries < MAX_HOMONYM_TRIES && left.max_queries >= 4 && !left.max_time.is_zero()).then_some(left)
}

/// The entity link whose vertex is `iri` (an anchor's).
fn link_of(entities: &[crate::state::EntityLink], iri: &str) -> Option<usize> {
    entities.iter().position(|l| l.iri.as_deref() == Some(iri))
}

/// Links `link` to the vertex of `homonym` instead (and its label: a rival of a partial name
/// has its own); the vertex it had joins the homonyms.
fn take_homonym(link: &mut crate::state::EntityLink, homonym: &Anchor) {
    let first = link.iri.replace(homonym.iri.clone());
    link.label = Some(homonym.label.clone());
    link.homonyms.retain(|h| *h != homonym.iri);
    link.homonyms.extend(first);
    link.homonym_retried = true;
}

/// `homonym` is a vertex of another name than `anchor`'s: a rival holder of a partial name
/// ("Lake Placid (Texas)" for "Lake Placid"), not one of the same label.
fn is_rival(anchor: &Anchor, homonym: &Anchor) -> bool {
    normalize_tokens(&anchor.label) != normalize_tokens(&homonym.label)
}

/// The best path from anchor `i` says the question's words (full support), not merely exists:
/// what a rival of the linked vertex must show.
fn says_words(ranked: &[ScoredPath], i: usize) -> bool {
    ranked
        .iter()
        .find(|s| s.path.anchor == i)
        .is_some_and(|s| s.support >= crate::candidates::ranking::FULL_SUPPORT)
}

/// `anchor` moved to its homonym `iri`, with that vertex's label (the anchor's when it has
/// none).
async fn as_homonym(ctx: &AgentContext, anchor: &Anchor, iri: &str) -> Result<Anchor, AgentError> {
    let label = ctx
        .kg
        .labels(&[iri])
        .await?
        .remove(iri)
        .unwrap_or_else(|| anchor.label.clone());
    Ok(Anchor {
        iri: iri.to_owned(),
        label,
        ..anchor.clone()
    })
}

/// What one search from a set of anchors gives.
struct Found {
    /// The paths that fit the question, best first (held to the class first, when one applies).
    ranked: Vec<ScoredPath>,
    /// Every path found (the planner's superlative extensions).
    pool: Vec<RelationPath>,
    report: SearchReport,
    /// Some path reaches instances of the class the question names.
    class_applied: bool,
}

/// Searches the paths from `anchors`, ranks them and keeps the ones that fit the question.
async fn find_paths(
    ctx: &AgentContext,
    anchors: &[Anchor],
    labels: &[String],
    ranker: &mut PathRanker,
    budget: &SearchBudget,
    form: &QuestionForm,
    class: Option<&ClassMention>,
) -> Result<Found, AgentError> {
    let p = &ctx.params;
    let (paths, mut report) = search(ctx, anchors, ranker, budget).await?;
    // Every path found stays available to the planner (a superlative's attribute is a path
    // one hop longer than the chosen one, whatever its rank).
    let pool = paths.clone();
    ranker.forced_first_hops(&paths);
    let mut ranked = ranker.rank(paths, labels);
    let profile = ctx.kg.profile_or_default().await;
    ranked.retain(|s| !crate::candidates::statements::ends_at_statement_or_restates(&profile.conventions, &s.path));
    if form.kind == QuestionKind::Boolean && anchors.len() >= 2 {
        // Yes/no about two entities: the path between them; one that reached the other in
        // the search's sample is the graph's own evidence.
        for scored in &mut ranked {
            let other: Vec<&str> = anchors
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != scored.path.anchor)
                .map(|(_, a)| a.iri.as_str())
                .collect();
            if scored.path.end == EndKind::Entity && reaches_one_of(&scored.path, |iri| other.contains(&iri)) {
                // The hops it needs to get there are justified by the other anchor's mention.
                scored.score += REACHES_OTHER_ANCHOR + UNJUSTIFIED_HOP * scored.unjustified as f32;
                scored.unjustified = 0;
            }
        }
        ranked.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.like_asked.total_cmp(&a.like_asked))
                .then(a.text.cmp(&b.text))
        });
    }
    // A path that says nothing of the question, or ends in the wrong kind of value for a
    // "when" question, is no answer: better "no answer" than a made-up one.
    // With no content word left (every word is a mention or a question word: "Where is X?"),
    // support says nothing, and the kind and the anchors decide.
    // An anchor that modifies the asked-for noun ("which *Runic* characters were added in …")
    // relates to the answers as the graph says, in one hop: its one-hop paths stay for the join.
    let judged = ranker.has_units();
    if form.order.is_some() && form.kind == QuestionKind::List {
        said_by_the_attribute(&mut ranked);
    }

    // So does one found among the asked class's values for a word that modifies it.
    let attached = |s: &ScoredPath| {
        s.path.hops.len() == 1
            && (anchors.len() >= 2 && ranker.attached(s.path.anchor)
                || anchors.get(s.path.anchor).is_some_and(|a| a.modifies_class))
    };
    // Every thing a list or a count names holds its answers: each anchor's best one-hop path to
    // vertices stays for the join though no word says it ("characters *added in* Unicode 6.0":
    // the graph's "introduced in"). Where the two meet is the answer; alone it answers nothing.
    let mut own_relation = vec![false; ranked.len()];
    if anchors.len() >= 2 && matches!(form.kind, QuestionKind::List | QuestionKind::Count) {
        for a in 0..anchors.len() {
            if let Some(i) = ranked
                .iter()
                .position(|s| s.path.anchor == a && s.path.hops.len() == 1 && s.path.end == EndKind::Entity)
            {
                own_relation[i] = true;
            }
        }
    }
    for (s, own) in ranked.iter_mut().zip(own_relation) {
        s.unsaid = judged && s.support < p.min_relation_score && (attached(s) || own);
    }
    // The one-hop relations to vertices no word names, kept aside for a question that names
    // the kind of its answer ([`only_relation_to_class`]) or asks "when" ([`only_relation_to_a_time`]).
    let answer_class = class.filter(|c| c.role == ClassRole::Answer && form.kind != QuestionKind::Boolean);
    let asks_when = form.expects == Expectation::Temporal && form.order.is_none() && form.kind == QuestionKind::List;
    // "What did Unicode 15.0 add?": what one thing does, by a verb no relation is named after.
    let asks_what_it_does = anchors.len() == 1
        && form.kind == QuestionKind::List
        && form.order.is_none()
        && form.constraint.is_none()
        && matches!(form.expects, Expectation::Any | Expectation::Entity)
        && ranker.asks_by_a_verb();
    let unnamed: Vec<ScoredPath> = match answer_class {
        _ if !judged => Vec::new(),
        Some(_) => ranked
            .iter()
            .filter(|s| {
                s.support < p.min_relation_score && !s.unsaid && s.path.hops.len() == 1 && s.path.end == EndKind::Entity
            })
            .cloned()
            .collect(),
        None if asks_when || asks_what_it_does => ranked
            .iter()
            .filter(|s| !s.unsaid && s.path.hops.len() == 1 && s.path.end == EndKind::Entity)
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    ranked.retain(|s| {
        (!judged || s.support >= p.min_relation_score || s.unsaid)
            && !(form.expects == Expectation::Temporal && form.order.is_none() && s.path.end != EndKind::Temporal)
    });
    // Paths with the same text (two predicates with one label) are one choice: for a count, the
    // best alone (the two may name one thing two ways, an IRI and a string, and a count would
    // take it twice); otherwise any of them.
    if form.kind == QuestionKind::Count {
        let mut seen = std::collections::HashSet::new();
        ranked.retain(|s| seen.insert(s.text.clone()));
    } else {
        merge_twins(&mut ranked);
    }
    if form.kind == QuestionKind::Count {
        prefer_several(&mut ranked, CLASS_REACH_TIE);
    } else if form.kind == QuestionKind::List && form.order.is_none() && ranker.asks_for_several() {
        // "Which airports does X serve": a plural asks for several; between paths the words
        // cannot tell apart ("hub airport", "target airport"), the one that reaches several.
        prefer_several(&mut ranked, PLURAL_TIE);
    }
    // The class reach of the one path found by the class, already counted.
    let mut reached = None;
    if ranked.is_empty() {
        match answer_class {
            Some(c) => {
                if let Some((only, reach)) =
                    only_relation_to_class(ctx, unnamed, anchors, &c.iri, form.kind, &mut report).await?
                {
                    ranked = vec![only];
                    reached = Some(reach);
                    report.only_relation = Some(OnlyRelation::ToTheClass);
                }
            }
            None if asks_when => {
                ranked = only_relation_to_a_time(ctx, unnamed).await?;
                report.only_relation = (!ranked.is_empty()).then_some(OnlyRelation::ToATime);
            }
            None if asks_what_it_does => {
                // The anchor's one relation to other things: what it does is what the graph
                // relates it to. Several leave it unsaid.
                if unnamed.len() == 1 {
                    ranked = unnamed;
                    report.only_relation = Some(OnlyRelation::ToThings);
                }
            }
            None => {}
        }
    }
    let mut class_applied = false;
    ranker.confirm_class(false);
    let found = match (class.filter(|c| c.role == ClassRole::Answer), reached) {
        (Some(_), Some(reach)) => Some(reach),
        (Some(c), None) => class_reach(ctx, &ranked, anchors, &c.iri, form.kind, &mut report).await?,
        (None, _) => None,
    };
    if let Some(found) = found {
        // Paths that reach instances of the class go first (before the cut to `query_num`, so
        // that a relation the words do not rank still counts), and the words that name the
        // class are no relation any more; none reaching it, the class is left aside (the
        // question's word may name the kind loosely).
        if form.kind != QuestionKind::Boolean {
            ranker.confirm_class(true);
            ranker.rescore(&mut ranked);
        }
        let owned =
            |s: &ScoredPath| s.path.hops.len() == 1 && anchors.get(s.path.anchor).is_some_and(|a| a.modifies_class);
        let preposition = ranker.asked_preposition().map(str::to_owned);
        order_by_class(&mut ranked, &found, owned, preposition.as_deref());
        class_applied = true;
    }
    ranked.truncate(p.query_num.max(1));
    Ok(Found {
        ranked,
        pool,
        report,
        class_applied,
    })
}

/// A superlative ("Thorsten Glaser's three biggest packages by installed size"): a path that ends
/// at numbers or dates by a last hop the words name (maintained by (of) → installed size) says
/// what is ordered and by what; the path before that hop leads to the things ordered, and is as
/// well said as the whole (the planner orders it by that hop again).
fn said_by_the_attribute(ranked: &mut [ScoredPath]) {
    let mut raised: Vec<(usize, f32, f32, f32)> = Vec::new();
    for s in ranked.iter() {
        let [before @ .., _] = s.path.hops.as_slice() else {
            continue;
        };
        if before.is_empty() || !matches!(s.path.end, EndKind::Number | EndKind::Temporal) {
            continue;
        }
        if let Some(i) = ranked
            .iter()
            .position(|p| p.path.anchor == s.path.anchor && p.path.end == EndKind::Entity && p.path.hops == before)
            && ranked[i].score < s.score
        {
            raised.push((i, s.score, s.support, s.coverage));
        }
    }
    if raised.is_empty() {
        return;
    }
    for (i, score, support, coverage) in raised {
        let prefix = &mut ranked[i];
        prefix.score = prefix.score.max(score);
        prefix.support = prefix.support.max(support);
        prefix.coverage = prefix.coverage.max(coverage);
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// Paths that read the same (two predicates of one label at some hop: DBpedia's `dbo:location`
/// and `dbp:location`) are one choice: the question's words cannot tell them apart. Where they
/// run from the same anchor and reach the same kind of value, the best keeps the other's
/// predicates as its hops' [`Hop::also`](crate::candidates::paths::Hop::also) (the query takes any
/// of them) and its values; otherwise (a date and a string under one label) the best alone is
/// kept, or the one to vertices where the other reaches strings.
/// A label and its plural read the same (`dbo:child` "child", `dbp:children` "children"), and
/// so do a name and the same words run together ("debut team", "debutteam").
fn merge_twins(ranked: &mut Vec<ScoredPath>) {
    let mut kept: Vec<ScoredPath> = Vec::with_capacity(ranked.len());
    // Each reading once, to the index of the first path kept with it.
    let mut readings: HashMap<(usize, Vec<(String, bool)>), usize> = HashMap::new();
    for scored in ranked.drain(..) {
        let reading = reads_as(&scored.path);
        let Some(&at) = readings.get(&reading) else {
            readings.insert(reading, kept.len());
            kept.push(scored);
            continue;
        };
        let first = &mut kept[at];
        // One reading: the same anchor and as many hops, each the same way round.
        let (best, twin) = (&mut first.path, &scored.path);
        if best.end != twin.end {
            // Vertices and strings under one label (DBpedia's `dbo:purpose` "Chess" and
            // `dbp:purpose` dbr:Chess): the vertices, which the graph relates further and other
            // paths can meet at; the string only writes one of them out.
            if twin.end == EndKind::Entity && best.end == EndKind::Text {
                // In the best one's place and rank.
                let score = first.score.max(scored.score);
                *first = scored;
                first.score = score;
            }
            continue;
        }
        for (hop, other) in best.hops.iter_mut().zip(&twin.hops) {
            if hop.forward == other.forward && !hop.predicates().any(|p| p == other.predicate) {
                hop.also.push(other.predicate.clone());
            }
        }
        let before = best.endpoints.len();
        for value in &twin.endpoints {
            if !best.endpoints.contains(value) {
                best.endpoints.push(value.clone());
            }
        }
        let added = best.endpoints.len() - before;
        best.reached = (best.reached + added).max(twin.reached);
    }
    *ranked = kept;
}

/// What a path says, hop by hop, each hop's name in the singular and written as one word (a
/// graph's raw predicate is often its mapped one's name run together: `dbp:debutteam` and
/// `dbo:debutTeam`, "debut team"): from which anchor, through which named relation, which way
/// round.
fn reads_as(path: &RelationPath) -> (usize, Vec<(String, bool)>) {
    let hops = path
        .hops
        .iter()
        .map(|hop| {
            let words: String = chatty_kg_graph::text::normalize_tokens(&hop.label)
                .iter()
                .map(|w| crate::words::singular(w))
                .collect();
            (words, hop.forward)
        })
        .collect();
    (path.anchor, hops)
}

/// The margin rule, or the model's pick among the best few. A path that is the best one walked
/// from the other anchor (the same yes/no question) is no rival.
async fn choose(ctx: &AgentContext, question: &str, ranked: &[ScoredPath]) -> Result<PathChoice, AgentError> {
    let Some(first) = ranked.first() else {
        return Err(AgentError::MissingState {
            agent: NAME,
            what: "a ranked path",
        });
    };
    // The class the question names ordered the paths that reach it (the shortest, then the one
    // reaching most of it): the graph decided, no model call.
    if first.reaches_class {
        return Ok(PathChoice {
            index: 0,
            reason: ChoiceReason::Class,
            margin: None,
        });
    }
    if first.several {
        return Ok(PathChoice {
            index: 0,
            reason: ChoiceReason::Several,
            margin: None,
        });
    }
    let rival = ranked[1..].iter().find(|s| !mirrors(&first.path, &s.path));
    let margin = rival.map_or(f32::INFINITY, |r| first.score - r.score);
    if rival.is_none() {
        return Ok(PathChoice {
            index: 0,
            reason: ChoiceReason::Only,
            margin: None,
        });
    }
    if margin >= ctx.params.path_margin {
        return Ok(PathChoice {
            index: 0,
            reason: ChoiceReason::Margin,
            margin: Some(margin),
        });
    }
    let shown: Vec<String> = ranked
        .iter()
        .take(ctx.params.path_choices.max(2))
        .map(|s| s.text.clone())
        .collect();
    let schema = json!({
        "type": "object",
        "properties": {"path": {"enum": shown}},
        "required": ["path"], "additionalProperties": false
    });
    let variables = json!({"question": question, "paths": shown});
    let picked = ask_validated(ctx, NAME, NAME, variables, schema, |reply| {
        check_path_pick(reply, &shown)
    })
    .await?;
    Ok(PathChoice {
        index: picked,
        reason: ChoiceReason::Model,
        margin: Some(margin),
    })
}

/// A model's reply to the path choice, parsed and checked: the index of the chosen path in
/// `shown`, or the complaint the model gets back.
pub fn check_path_pick(reply: &str, shown: &[String]) -> Result<usize, String> {
    check_reply(reply, |pick: Pick| {
        let wanted = pick.path.trim();
        shown
            .iter()
            .position(|s| s == wanted)
            .ok_or_else(|| format!("{wanted:?} is not one of the listed paths; copy one exactly"))
    })
}

/// `b` walks `a` backwards from `a`'s other end (another anchor).
fn mirrors(a: &RelationPath, b: &RelationPath) -> bool {
    a.anchor != b.anchor
        && a.hops.len() == b.hops.len()
        && a.hops
            .iter()
            .rev()
            .zip(&b.hops)
            .all(|(x, y)| x.predicate == y.predicate && x.forward != y.forward)
}

/// What the explanation shows as relation links: each hop of the chosen path, with its score.
fn relation_links(best: &ScoredPath) -> Vec<RelationLink> {
    best.path
        .hops
        .iter()
        .enumerate()
        .map(|(i, hop)| RelationLink {
            triple: i,
            phrase: hop.label.clone(),
            predicates: vec![PredicateChoice {
                iri: hop.predicate.clone(),
                label: hop.label.clone(),
                score: best.support,
                forward: hop.forward,
            }],
        })
        .collect()
}

/// Paths of more than one hop whose reach in instances of the class is counted (one bounded
/// query each).
const CLASS_CHECKS: usize = 8;
/// Scores this close to the best path reaching the class say no more than it: the one reaching more
/// of the class goes first.
const CLASS_REACH_TIE: f32 = 0.1;
/// A path reaching the class that covers this much less of the question's words than another
/// close to the best says less than it, however few its hops.
const CLASS_COVER_TIE: f32 = 0.25;
/// Paths scored this close to the best are ones the words cannot tell apart: a plural asked-for
/// noun prefers the one among them that reaches several values.
const PLURAL_TIE: f32 = 0.01;
/// Instances counted per path at most.
const CLASS_REACH_CAP: usize = 1000;

/// How many instances of `class` each path ending at vertices reaches (every one-hop path, the
/// best few longer ones), or `None` when none reaches any. Not for a count whose best path is a
/// number the anchor stores.
async fn class_reach(
    ctx: &AgentContext,
    ranked: &[ScoredPath],
    anchors: &[Anchor],
    class: &str,
    kind: QuestionKind,
    report: &mut SearchReport,
) -> Result<Option<ClassReach>, AgentError> {
    // A count whose best path is a number the anchor itself stores ("how many people live in
    // X" is its population, though "people" names a class): the class does not apply. A value
    // further away (the length of a river in the continent) does not count the class's instances,
    // and a list of a class ("which rivers …") is of vertices.
    if kind == QuestionKind::Count
        && ranked
            .first()
            .is_some_and(|s| s.path.end != EndKind::Entity && s.path.hops.len() == 1)
    {
        return Ok(None);
    }
    let profile = ctx.kg.profile_or_default().await;
    let types = profile.conventions.types();
    let subclasses = listed_subclasses(ctx, class, report).await?;
    let check = ClassCheck {
        iri: class,
        subclasses: subclasses.as_deref(),
        types,
    };
    // One hop: every relation from each anchor that reaches the class, counted in one grouped
    // query per anchor and direction. Longer paths: the best few, one bounded query each.
    // Per one-hop relation: instances of the class reached, and values typed as something else.
    let mut one_hop: HashMap<(usize, String, bool), (u64, u64)> = HashMap::new();
    // Once one class query has run out of time, no more are asked: the words order the rest.
    'anchors: for (i, anchor) in anchors.iter().enumerate() {
        for forward in [true, false] {
            for others in [false, true] {
                if report.cut.is_some() {
                    break 'anchors;
                }
                let query = crate::candidates::queries::class_neighbours(&anchor.iri, check, forward, others)?;
                let Some(chatty_kg_graph::QueryResults::Solutions(s)) = unless_slow(ctx, &query, report).await? else {
                    continue;
                };
                let at = |name: &str| s.variables.iter().position(|v| v == name);
                let (Some(p), Some(n)) = (at(PREDICATE_VARIABLE), at(COUNT_VARIABLE)) else {
                    continue;
                };
                for row in &s.rows {
                    if let (Some(Term::NamedNode(predicate)), Some(Term::Literal(count))) = (&row[p], &row[n]) {
                        let count = count.value().parse().unwrap_or(0);
                        let entry = one_hop.entry((i, predicate.as_str().to_owned(), forward)).or_default();
                        if others {
                            entry.1 = count;
                        } else {
                            entry.0 = count;
                        }
                    }
                }
                // Values of another kind only matter where the class is reached at all.
                if !others && s.rows.is_empty() {
                    break;
                }
            }
        }
    }
    let mut reach = vec![0u64; ranked.len()];
    let mut mixed = vec![false; ranked.len()];
    for (i, scored) in ranked.iter().enumerate() {
        if let [hop] = scored.path.hops.as_slice() {
            // A hop of twins (`dbo:birthPlace` and `dbp:birthPlace` under one label) reaches
            // at least what the one reaching most reaches, whichever the merge put first.
            let (n, others) = hop
                .predicates()
                .filter_map(|p| one_hop.get(&(scored.path.anchor, p.to_owned(), hop.forward)))
                .fold((0, 0), |(n, o), (a, b)| (n.max(*a), o.max(*b)));
            reach[i] = n.min(CLASS_REACH_CAP as u64);
            mixed[i] = others > 0;
        }
    }
    let checked: Vec<usize> = (0..ranked.len())
        .filter(|&i| ranked[i].path.end == EndKind::Entity && ranked[i].path.hops.len() > 1)
        .take(CLASS_CHECKS)
        .collect();
    for i in checked {
        if report.cut.is_some() {
            break;
        }
        let path = &ranked[i].path;
        let Some(anchor) = anchors.get(path.anchor) else {
            continue;
        };
        let query = crate::candidates::queries::class_reach(&anchor.iri, path, Some(check), CLASS_REACH_CAP)?;
        reach[i] = count_unless_slow(ctx, &query, report).await?;
        // The path's values are values of its last hop's relations (its predicate and the twins
        // merged into it): where none of them anywhere holds of another kind of thing (a fact
        // about the graph, asked once), neither does the path, and walking the path again to
        // find none is spared. Where that is not known (a query cut), the path is walked.
        if reach[i] > 0
            && let Some(last) = path.hops.last()
        {
            let mut outside = false;
            for predicate in last.predicates() {
                if relation_holds_outside(ctx, predicate, last.forward, check, report).await? != Some(false) {
                    outside = true;
                    break;
                }
            }
            if outside {
                let query = crate::candidates::queries::class_outsiders(&anchor.iri, path, check)?;
                mixed[i] = any_row_unless_slow(ctx, &query, report).await?;
            }
        }
    }
    if reach.iter().all(|&n| n == 0) {
        return Ok(None);
    }
    // A path whose own values are all of the class, or of no class: where the graph types
    // fewer than half of them as the class and the relation holds of other kinds of things
    // elsewhere ("born in": actors, swimmers, horses), the few it types say nothing of the
    // rest, and a value of no class is no more an instance than any other. Where it types
    // most, a missing type is a gap ("which cities are in Chile": one of two typed). At most
    // `CLASS_CHECKS` relations asked and as many paths counted, the best first.
    let mut elsewhere = vec![false; ranked.len()];
    let mut seen: HashMap<(&str, bool), bool> = HashMap::new();
    let mut counted = 0;
    for i in 0..ranked.len() {
        if reach[i] == 0 || mixed[i] || report.cut.is_some() {
            continue;
        }
        let (Some(last), Some(anchor)) = (ranked[i].path.hops.last(), anchors.get(ranked[i].path.anchor)) else {
            continue;
        };
        let key = (last.predicate.as_str(), last.forward);
        let others = match seen.get(&key) {
            Some(&others) => others,
            None if seen.len() < CLASS_CHECKS => {
                let others = relation_holds_outside(ctx, &last.predicate, last.forward, check, report)
                    .await?
                    .unwrap_or(false);
                seen.insert(key, others);
                others
            }
            None => continue,
        };
        if others && reach[i] < CLASS_REACH_CAP as u64 && counted < CLASS_CHECKS {
            counted += 1;
            let query = crate::candidates::queries::class_reach(&anchor.iri, &ranked[i].path, None, CLASS_REACH_CAP)?;
            let values = count_unless_slow(ctx, &query, report).await?;
            elsewhere[i] = values > 2 * reach[i];
        }
    }
    Ok(Some(ClassReach {
        reach,
        mixed,
        elsewhere,
    }))
}

/// No relation the words name, but the question names the kind of its answer ("which Unicode
/// version added the euro sign?": no relation of the euro sign is labelled "added"): where one
/// relation alone leads from an anchor to instances of that class, and only to them, the graph
/// has said what the question asks. Several such relations (a film's director and writer, both
/// people) leave it unsaid: no path, rather than a guess. The path with its class reach.
async fn only_relation_to_class(
    ctx: &AgentContext,
    mut unnamed: Vec<ScoredPath>,
    anchors: &[Anchor],
    class: &str,
    kind: QuestionKind,
    report: &mut SearchReport,
) -> Result<Option<(ScoredPath, ClassReach)>, AgentError> {
    unnamed.truncate(ctx.params.query_num.max(1));
    let Some(found) = class_reach(ctx, &unnamed, anchors, class, kind, report).await? else {
        return Ok(None);
    };
    let reaching: Vec<usize> = (0..unnamed.len())
        .filter(|&i| found.reach[i] > 0 && !found.mixed[i])
        .collect();
    let [only] = reaching.as_slice() else {
        return Ok(None);
    };
    let reach = ClassReach {
        reach: vec![found.reach[*only]],
        mixed: vec![found.mixed[*only]],
        elsewhere: vec![found.elsewhere[*only]],
    };
    let mut scored = unnamed.swap_remove(*only);
    scored.reaches_class = true;
    Ok(Some((scored, reach)))
}

/// "When was it added?" where no relation's name fits the words and no path ends at a date: a
/// vertex that has a date of its own is a point in time (a version, an event), and where one
/// relation alone leads from the anchor to such vertices (a character's "introduced in" to its
/// Unicode version, which has a release year), the graph has said when. Several such relations
/// leave it unsaid. The best [`CLASS_CHECKS`] relations are looked at, one query each.
async fn only_relation_to_a_time(ctx: &AgentContext, unnamed: Vec<ScoredPath>) -> Result<Vec<ScoredPath>, AgentError> {
    let mut timed = Vec::new();
    for scored in unnamed.into_iter().take(CLASS_CHECKS) {
        let ends: Vec<&str> = scored
            .path
            .endpoints
            .iter()
            .filter_map(crate::candidates::paths::iri_of)
            .collect();
        let kinds = crate::candidates::values::attributes_of(ctx, &ends).await?;
        if kinds.values().any(|(_, dates)| *dates > 0) {
            timed.push(scored);
        }
    }
    Ok(if timed.len() == 1 { timed } else { Vec::new() })
}

/// What [`class_reach`] found, per ranked path: instances of the class reached, whether the
/// path's own values include things of another kind, and whether its last relation holds of
/// other kinds elsewhere in the graph.
struct ClassReach {
    reach: Vec<u64>,
    mixed: Vec<bool>,
    elsewhere: Vec<bool>,
}

/// The count a class query returns (0 when it ran out of time: [`unless_slow`]).
async fn count_unless_slow(
    ctx: &AgentContext,
    query: &chatty_kg_graph::ReadQuery,
    report: &mut SearchReport,
) -> Result<u64, AgentError> {
    Ok(unless_slow(ctx, query, report)
        .await?
        .and_then(|r| crate::candidates::queries::count_of(&r))
        .unwrap_or(0))
}

/// Whether a class query has any row (none when it ran out of time: [`unless_slow`]).
async fn any_row_unless_slow(
    ctx: &AgentContext,
    query: &chatty_kg_graph::ReadQuery,
    report: &mut SearchReport,
) -> Result<bool, AgentError> {
    Ok(matches!(
        unless_slow(ctx, query, report).await?,
        Some(chatty_kg_graph::QueryResults::Solutions(s)) if !s.rows.is_empty()
    ))
}

/// Whether `predicate` (towards its objects when `forward`), among its first values in the
/// graph ([`RELATION_SAMPLE`](crate::candidates::queries::RELATION_SAMPLE)), holds of something
/// the graph types outside `class` ([`relation_outsiders`](crate::candidates::queries::relation_outsiders)):
/// a fact about the graph, not the question, which the backend remembers (`query_fact`). `None`
/// when it ran out of time ([`unless_slow`]).
async fn relation_holds_outside(
    ctx: &AgentContext,
    predicate: &str,
    forward: bool,
    class: ClassCheck<'_>,
    report: &mut SearchReport,
) -> Result<Option<bool>, AgentError> {
    let query = crate::candidates::queries::relation_outsiders(predicate, forward, class)?;
    Ok(recorded(&query, ctx.kg.query_fact(&query), report)
        .await?
        .map(|results| matches!(results, chatty_kg_graph::QueryResults::Solutions(s) if !s.rows.is_empty())))
}

/// Every class under `class` (`rdfs:subClassOf+`, the graph's own subclass predicates; none
/// where it has no such predicate), or `None` when there are more than
/// [`LISTED_SUBCLASSES`](crate::candidates::queries::LISTED_SUBCLASSES) or the query was cut:
/// with them listed, a class check looks up each vertex's types instead of walking the subclass
/// path from each ([`ClassCheck`]). A fact about the graph, which the backend remembers (the
/// planner's class filter asks it again).
async fn listed_subclasses(
    ctx: &AgentContext,
    class: &str,
    report: &mut SearchReport,
) -> Result<Option<Vec<String>>, AgentError> {
    let profile = ctx.kg.profile_or_default().await;
    let Some(query) = crate::candidates::queries::listed_subclasses_query(class, profile.conventions.types())? else {
        return Ok(Some(Vec::new()));
    };
    Ok(recorded(&query, ctx.kg.query_fact(&query), report)
        .await?
        .as_ref()
        .and_then(crate::candidates::queries::listed_subclasses))
}

/// A class query's results, or `None` when it ran out of the store's query time: a slow count
/// leaves the order to the words (and says so in the search's `cut`), it does not fail the
/// question. Every class query is kept in the search's report with its time.
async fn unless_slow(
    ctx: &AgentContext,
    query: &chatty_kg_graph::ReadQuery,
    report: &mut SearchReport,
) -> Result<Option<chatty_kg_graph::QueryResults>, AgentError> {
    recorded(query, ctx.kg.query(query), report).await
}

/// [`unless_slow`] of `running` (`query` asked of the store, or of the facts it remembers),
/// timed and kept in `report` ([`SearchReport::class_queries`]); a timed-out query is logged at
/// debug level with its text.
async fn recorded(
    query: &chatty_kg_graph::ReadQuery,
    running: impl std::future::Future<Output = Result<chatty_kg_graph::QueryResults, chatty_kg_graph::GraphError>>,
    report: &mut SearchReport,
) -> Result<Option<chatty_kg_graph::QueryResults>, AgentError> {
    let started = std::time::Instant::now();
    let outcome = running.await;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
    let sparql = query.to_string();
    match outcome {
        Ok(results) => {
            let rows = match &results {
                chatty_kg_graph::QueryResults::Solutions(s) => s.rows.len(),
                chatty_kg_graph::QueryResults::Boolean(_) => 1,
            };
            report.class_queries.push(ClassQuery {
                sparql,
                elapsed_ms,
                rows,
                timed_out: false,
            });
            Ok(Some(results))
        }
        Err(
            e @ (chatty_kg_graph::GraphError::Timeout { .. } | chatty_kg_graph::GraphError::EndpointTimeout { .. }),
        ) => {
            tracing::warn!(error = %e, "a class query was too slow; the words order the paths");
            tracing::debug!(query = %sparql, elapsed_ms, "the class query that timed out");
            report
                .cut
                .get_or_insert_with(|| format!("a query counting the asked class's instances was cut ({e})"));
            report.class_queries.push(ClassQuery {
                sparql,
                elapsed_ms,
                rows: 0,
                timed_out: true,
            });
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// "How many" presupposes more than one: when the best path to vertices reaches a single value
/// and another path to vertices scored within `tie` of it reaches several, that one goes first
/// ("how many managers has the club had": the five of "manager club (of)", not the one current
/// "manager"; "which airports does X serve": "target airport", not the one "hub airport"). A
/// stored number (a population) is not moved.
fn prefer_several(ranked: &mut Vec<ScoredPath>, tie: f32) {
    let Some(best) = ranked.first() else { return };
    if best.path.end != EndKind::Entity || best.path.reached > 1 {
        return;
    }
    let floor = best.score - tie;
    if let Some(i) = ranked
        .iter()
        .position(|s| s.score >= floor && s.path.end == EndKind::Entity && s.path.reached > 1)
    {
        let mut several = ranked.remove(i);
        several.several = true;
        ranked.insert(0, several);
    }
}

/// Moves the paths that reach the class (`found.reach`, per path) first and marks them (and
/// whether the class selects among their values: `found.mixed`, or `found.elsewhere`): among
/// them the words decide (the score), except that scores within [`CLASS_REACH_TIE`] of the
/// best, and the one hop from an anchor that modifies or owns the class (`owned`: "*Danish* films", "*Jordi Mallach's* packages", which no
/// word need say), go by the fewest hops (a hop no word tells apart from the shorter path is not
/// asked for: "Jordi Mallach's packages" are the ones he maintains, not those of his packages'
/// priority), then by the number of instances reached ("which cities are in Peru": "located
/// in", not "capital").
///
/// Among the close ones of one length, a path whose last relation is named by the preposition the
/// question asks with ("*In* which country is the headquarters of X?": located *in*, not the
/// country whose capital it is) goes first, then the one reaching most.
fn order_by_class(
    ranked: &mut Vec<ScoredPath>,
    found: &ClassReach,
    owned: impl Fn(&ScoredPath) -> bool,
    preposition: Option<&str>,
) {
    for ((scored, mixed), elsewhere) in ranked.iter_mut().zip(&found.mixed).zip(&found.elsewhere) {
        scored.class_selects = *mixed || *elsewhere;
        scored.kinds_elsewhere = *elsewhere && !*mixed;
    }
    let mut paths: Vec<(ScoredPath, u64)> = ranked.drain(..).zip(found.reach.iter().copied()).collect();
    let best = paths
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, _)| s.score)
        .fold(f32::NEG_INFINITY, f32::max);
    // A longer path that says clearly more of the question's words ("built from the source
    // package of the package gnuplot depends on": three relations the words name, where one hop
    // says one of them) is no hop "no word tells apart": the shorter one is not close to it.
    let most_said = paths
        .iter()
        .filter(|(s, n)| *n > 0 && s.score >= best - CLASS_REACH_TIE)
        .map(|(s, _)| s.coverage)
        .fold(0.0_f32, f32::max);
    let key = |(s, n): &(ScoredPath, u64)| {
        // Nor is one whose first relation runs against the way the words put it.
        let close = *n > 0
            && ((s.score >= best - CLASS_REACH_TIE && s.coverage >= most_said - CLASS_COVER_TIE && !s.against_words)
                || owned(s));
        let hops = if close { s.path.hops.len() } else { 0 };
        let asked_with = close
            && s.path.hops.last().is_some_and(|h| {
                h.forward && preposition.is_some_and(|p| normalize_tokens(&h.label).last().is_some_and(|w| w == p))
            });
        (
            *n == 0,
            !close,
            hops,
            !asked_with,
            std::cmp::Reverse(if close { *n } else { 0 }),
        )
    };
    paths.sort_by(|a, b| {
        key(a)
            .cmp(&key(b))
            .then(b.0.score.total_cmp(&a.0.score))
            .then(a.0.path.hops.len().cmp(&b.0.path.hops.len()))
            .then(a.0.text.cmp(&b.0.text))
    });
    for (mut scored, n) in paths {
        scored.reaches_class = n > 0;
        ranked.push(scored);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(hops: &[(&str, bool)], end: &str, score: f32, support: f32) -> ScoredPath {
        let hops: Vec<serde_json::Value> = hops
            .iter()
            .map(|(p, forward)| json!({"predicate": p, "label": p, "forward": forward}))
            .collect();
        serde_json::from_value(json!({
            "path": {"anchor": 0, "hops": hops, "end": end, "reached": 3},
            "text": "", "score": score, "support": support, "coverage": support,
        }))
        .unwrap()
    }

    /// "In which country is the headquarters of X?": of two close paths to countries, the one
    /// whose last relation the question's "in" names, though the other reaches more.
    #[test]
    fn the_preposition_asked_with_names_the_last_relation() {
        let paths = || {
            vec![
                scored(&[("headquarters", true), ("capital", false)], "entity", 0.57, 0.57),
                scored(&[("headquarters", true), ("located in", true)], "entity", 0.57, 0.57),
            ]
        };
        let found = || ClassReach {
            reach: vec![2, 1],
            mixed: vec![false, false],
            elsewhere: vec![false, false],
        };
        let last = |ranked: &[ScoredPath]| ranked[0].path.hops.last().unwrap().label.clone();
        let mut ranked = paths();
        order_by_class(&mut ranked, &found(), |_| false, Some("in"));
        assert_eq!(last(&ranked), "located in");
        let mut ranked = paths();
        order_by_class(&mut ranked, &found(), |_| false, None);
        assert_eq!(last(&ranked), "capital");
    }

    #[test]
    fn a_superlatives_attribute_path_says_the_path_before_its_last_hop() {
        let mut ranked = vec![
            scored(&[("maintainer", false), ("dependsOn", true)], "entity", 0.03, 0.31),
            scored(&[("maintainer", false), ("installedSize", true)], "number", 0.82, 0.9),
            scored(&[("maintainer", false)], "entity", -0.1, 0.2),
            scored(&[("section", true), ("label", true)], "text", 0.5, 0.5),
        ];
        said_by_the_attribute(&mut ranked);
        // The packages the maintainer maintains, as well said as their installed size.
        assert_eq!(ranked[0].path.hops.len(), 2);
        assert_eq!(ranked[1].path.hops.len(), 1);
        assert_eq!((ranked[1].score, ranked[1].support), (0.82, 0.9));
        // A path to text orders nothing, and one already scored higher is left as it is.
        assert_eq!(ranked[2].score, 0.5);
        assert_eq!(ranked[3].score, 0.03);
    }
}
