//! Query-planning agent (paper §5, Algorithm 3, on relation paths): turns the chosen relation
//! path into SPARQL of the question's form, executes it, and aggregates the answer.
//!
//! - **Form**: a list (SELECT DISTINCT), yes/no (ASK from one anchor to the other; with one
//!   anchor, whether the path's values include something the question names, or, for "is there
//!   a DOI for X" / "does X have a homepage", whether the path has a value at all), count
//!   (COUNT(DISTINCT) over the path, or the number itself when the path ends at a number the
//!   graph stores: "how many people live in X"), superlative (ORDER BY the numeric or date
//!   attribute one hop beyond the path's answers, most similar to the superlative's words, LIMIT 1).
//! - **Two anchors** ("which films starring X were directed by Y"): the best paths of each join at
//!   the answer, best pair first. When none of the joins has an answer the graph links nothing to
//!   both, and that is the answer: a path from one anchor alone would answer another question
//!   — unless one of the two is a common noun beside a name ("the *video game* World of
//!   Warcraft"): its words are read as the relation's or the kind's, and the search runs again
//!   from the name ([`RELINKED`]).
//! - **Execution with feedback**: when the chosen path's query is empty, up to `fallback_queries`
//!   other paths are tried in rank order; an empty graph result is reported as "no answer".
//! - A multi-hop path that comes back to the anchor does not answer with it ("films that share
//!   actors with X" is not X) unless it is the only value.
//! - Each answer value carries its supporting triples (the query's patterns under its bindings).
//!
//! Outcome: [`STOPPED`](crate::state::STOPPED) (answered or not, the chat agent replies).

use crate::answer::{Answer, AnswerValue, ValueKind};
use crate::candidates::paths::{EndKind, Hop, RelationPath, iri_of};
use crate::candidates::queries::{
    ANSWER_VARIABLE, COUNT_VARIABLE, CandidateQuery, ClassFilter, SetScope, Shape, TYPE_VARIABLE, ask, count_of,
    membership, over_class, over_set, over_values, select, select_in, select_with, witness,
};
use crate::candidates::values::{
    Attribute, AttributeOf, AttributeReading, Kinds, Outgoing, attributes_of, attributes_of_graph, attributes_through,
    outgoing, predicate_labels, rank_attributes, rank_attributes_through, resemblance, words_said,
};
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::linking::typed::instances_of;
use crate::qir::QuestionKind;
use crate::state::{AgentState, ExecutedQuery, LinkMethod, Outcome, QueryReason, SetRole};
use crate::understanding::form::QuestionForm;
use crate::understanding::form::ValueConstraint;
use chatty_kg_graph::text::normalize_tokens;
use chatty_kg_graph::{GraphError, QueryResults, Term, term_text};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::collections::HashMap;
use std::time::Instant;

pub struct QueryPlanningAgent;

pub const NAME: &str = "query_planning";
/// Two anchors never met and one, a common noun, is read as words instead: the search again.
pub const RELINKED: &str = "relinked";

/// Answer IRIs whose labels are fetched for display.
const MAX_LABELLED: usize = 2000;

/// Paths of each anchor paired when two anchors join.
const JOIN_PATHS: usize = 3;

#[async_trait::async_trait]
impl Agent for QueryPlanningAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        let form = state.form.clone().ok_or(AgentError::MissingState {
            agent: NAME,
            what: "the question's form",
        })?;
        // A similar question someone rated or corrected: its query on this question's vertices.
        if let Some(stopped) = by_example(ctx, state, &form).await? {
            return Ok(stopped);
        }
        if state.path_choice.is_none() && state.path_search.is_some() {
            // The search found no path that fits, and no example answered.
            return Ok(state.stop(Outcome::NoQuery));
        }
        if state.path_choice.is_none() {
            if state
                .qir
                .as_ref()
                .is_some_and(|q| q.source == crate::qir::QirSource::AnswerSet)
            {
                return about_the_set(ctx, state, &form).await;
            }
            let class = state.class.clone().filter(|c| c.applied).map(|c| c.iri);
            if let Some(constraint) = form.constraint.clone().filter(|_| form.kind != QuestionKind::Boolean) {
                return by_value(ctx, state, &form, class.as_deref(), &constraint).await;
            }
            if let Some(class) = class {
                return about_the_class(ctx, state, &form, &class).await;
            }
        }
        // Paths that reach instances of the class the question names are held to it.
        let class = state.class.as_ref().filter(|c| c.applied).map(|c| c.iri.clone());
        let profile = ctx.kg.profile_or_default().await;
        let types = profile.conventions.types();
        // A class selects strictly where the path also reaches other kinds, and from a vertex
        // found among the class's own instances' values (a word modifying it: "Swedish holidays").
        let from_modifier = |anchor: usize| state.anchors.get(anchor).is_some_and(|a| a.modifies_class);
        let held: Vec<(bool, bool)> = state
            .paths
            .iter()
            .map(|s| (s.reaches_class, s.class_selects || from_modifier(s.path.anchor)))
            .collect();
        let subclasses = match class.as_deref() {
            Some(iri) => listed_subclasses(ctx, iri, types).await,
            None => None,
        };
        let class_of = |i: usize| {
            let (reaches, strict) = held.get(i).copied().unwrap_or((false, false));
            class.as_deref().filter(|_| reaches).map(|iri| ClassFilter {
                iri,
                strict,
                types,
                subclasses: subclasses.as_deref(),
            })
        };
        let choice = state.path_choice.ok_or(AgentError::MissingState {
            agent: NAME,
            what: "a chosen relation path",
        })?;
        let anchors: Vec<String> = state.anchors.iter().map(|a| a.iri.clone()).collect();
        let ranked: Vec<RelationPath> = state.paths.iter().map(|s| s.path.clone()).collect();
        let mut order: Vec<usize> = vec![choice.index];
        order.extend((0..ranked.len()).filter(|&i| i != choice.index));
        let kind = form.kind;

        // The queries to try, in order.
        let mut attempts: Vec<(CandidateQuery, QueryReason, Option<usize>)> = Vec::new();
        // Whether a join of two paths the question's words say was tried: only that one finding
        // nothing says the anchors' relations never meet.
        let mut said_join = false;
        // A partial name the search could only guess (its words in many names, none with the
        // edges to dominate) beside one linked with confidence: it holds the answers only where
        // its best paths meet the other's; where they never do, the other answers alone ("What
        // has Thorsten Glaser packaged for Debian?": "Debian" in 149 names; no join of another
        // relation of the guessed maintainer's, through the architecture, say).
        let guessed = guessed_anchor(state);
        let best_of_guess = guessed.map(|g| {
            state
                .paths
                .iter()
                .filter(|s| s.path.anchor == g)
                .map(|s| s.score)
                .fold(f32::NEG_INFINITY, f32::max)
        });
        let joins_with_guess = |i: usize| match (guessed, best_of_guess) {
            (Some(g), Some(best)) => ranked[i].anchor != g || state.paths[i].score >= best,
            _ => true,
        };
        // Two anchors whose paths meet at one statement's qualifier (whatever its kind of value:
        // "when did X receive Y" ends at a date): joined at the statement first.
        if anchors.len() == 2 && kind != QuestionKind::Boolean {
            let shape = match kind {
                QuestionKind::Count => Shape::Count {
                    exclude: anchors.clone(),
                },
                _ => Shape::List { distinct_only: false },
            };
            // An anchor linked by a value it holds may be a statement (its version, its award):
            // a path from the other anchor through its statements to a qualifier meets it there.
            let by_value: Vec<usize> = (0..anchors.len())
                .filter(|&a| {
                    state
                        .entities
                        .iter()
                        .any(|l| l.method == LinkMethod::Literal && l.iri.as_deref() == Some(anchors[a].as_str()))
                })
                .collect();
            let to_statement: Vec<RelationPath> = order
                .iter()
                .filter_map(|&i| {
                    let (path, [_, tail]) = (&ranked[i], ranked[i].hops.as_slice()) else {
                        return None;
                    };
                    let b = *by_value.iter().find(|&&b| b != path.anchor)?;
                    Some(RelationPath {
                        anchor: b,
                        hops: vec![tail.clone()],
                        end: path.end,
                        reached: 1,
                        endpoints: Vec::new(),
                    })
                })
                .collect();
            let candidates: Vec<(usize, &RelationPath)> = order
                .iter()
                .map(|&i| (i, &ranked[i]))
                .chain(to_statement.iter().map(|p| (usize::MAX, p)))
                .collect();
            'pairs: for &(i, pi) in &candidates {
                for &(j, pj) in candidates.iter().filter(|(_, pj)| pj.anchor != pi.anchor) {
                    let pair = [(anchors[pi.anchor].as_str(), pi), (anchors[pj.anchor].as_str(), pj)];
                    let class = class_of(i).or(class_of(j));
                    if let Some(query) =
                        crate::candidates::statements::same_statement(&profile.conventions, &pair, &shape, class)?
                    {
                        let unsaid = |k: usize| state.paths.get(k).is_some_and(|s| s.unsaid);
                        said_join |= !unsaid(i) && !unsaid(j);
                        attempts.push((query, QueryReason::Join, None));
                        break 'pairs;
                    }
                }
            }
        }
        if anchors.len() >= 2 && kind != QuestionKind::Boolean {
            let mentions: Vec<&str> = state.anchors.iter().map(|a| a.mention.as_str()).collect();
            let same = coordinated(state.working_question(), &mentions);
            for (a, b) in join_pairs(&ranked, &order, same)
                .into_iter()
                .filter(|&(a, b)| joins_with_guess(a) && joins_with_guess(b))
            {
                let pair = [
                    (anchors[ranked[a].anchor].as_str(), &ranked[a]),
                    (anchors[ranked[b].anchor].as_str(), &ranked[b]),
                ];
                let shape = match kind {
                    QuestionKind::Count => Shape::Count {
                        exclude: anchors.clone(),
                    },
                    _ => Shape::List { distinct_only: false },
                };
                let class = class_of(a).or(class_of(b));
                said_join |= !state.paths[a].unsaid && !state.paths[b].unsaid;
                attempts.push((select_in(&pair, &shape, class)?, QueryReason::Join, None));
            }
        }
        let tries = if kind == QuestionKind::Boolean {
            1
        } else {
            1 + ctx.params.fallback_queries
        };
        // A value the question writes holds the chosen path's answers ("films directed by X
        // released after 2000"): the attribute of its answers most like the value's words.
        let constrained = match (&form.constraint, ranked.get(choice.index)) {
            (Some(constraint), Some(path)) if path.end == EndKind::Entity && kind != QuestionKind::Boolean => {
                let sample: Vec<&str> = path.endpoints.iter().filter_map(iri_of).collect();
                let out = outgoing(ctx, &sample).await?;
                let compared = out.kinds.len();
                let left = words_left_over(state);
                let mut ranked = rank_attributes(ctx, constraint, &left, &out.kinds, true).await?;
                // Answers with no such value of their own ("characters … in versions released
                // after 2018"): that of what they relate to, rather than leave the value unheld.
                if ranked.is_empty() {
                    ranked = rank_attributes_through(ctx, constraint, &left, &out).await?;
                }
                ranked.into_iter().map(|a| (a, compared)).collect()
            }
            _ => Vec::new(),
        };
        // A value the question writes that holds the chosen relation's statements rather than its
        // answers (a Wikibase's qualifiers: "uploaded in 2021", "the mayor in 2010"): tried
        // before the path alone, which would answer every statement's value.
        let qualified = match (&form.constraint, ranked.get(choice.index)) {
            (Some(constraint), Some(path)) if kind != QuestionKind::Boolean && form.order.is_none() => {
                qualified_attempt(
                    ctx,
                    state,
                    &profile.conventions,
                    path,
                    constraint,
                    kind,
                    class_of(choice.index),
                )
                .await?
            }
            _ => None,
        };
        if let Some(attempt) = qualified {
            attempts.push((attempt, QueryReason::ChosenPath, Some(choice.index)));
        }
        // The `k`-th attribute most like the value's words, on a path whose answers have it.
        let constraint_at = |path: &RelationPath, k: usize| {
            constrained
                .get(k)
                .map(|(a, _)| a)
                .zip(form.constraint.as_ref())
                .filter(|_| path.end == EndKind::Entity)
        };
        // A path no word says (its anchor modifies the asked noun) joins; alone it answers
        // nothing, unless its anchor was found among the class's values for that word.
        let unsaid: Vec<bool> = state
            .paths
            .iter()
            .map(|s| s.unsaid && !state.anchors.get(s.path.anchor).is_some_and(|a| a.modifies_class))
            .collect();
        let said = |i: &&usize| !unsaid.get(**i).copied().unwrap_or(false);
        // A value the question writes holds the answers: a path whose answers cannot have it
        // (a version string for "less than 1000 kB") answers another question.
        let holds = |i: &&usize| constrained.is_empty() || ranked[**i].end == EndKind::Entity;
        // The chosen path is tried with each attribute like the value's words in turn (the first
        // may hold none of its answers: download sizes in bytes for "less than 1000 kB of disk");
        // the other paths with the first.
        // A guess beside a confident link answers nothing alone.
        let not_guessed = |i: &&usize| guessed.is_none_or(|g| ranked[**i].anchor != g);
        let tried: Vec<(usize, usize)> = order
            .iter()
            .filter(said)
            .filter(holds)
            .filter(not_guessed)
            .take(tries)
            .enumerate()
            .flat_map(|(n, &i)| {
                let attributes = if n == 0 { constrained.len().max(1) } else { 1 };
                (0..attributes).map(move |k| (i, k))
            })
            .collect();
        for (n, &(i, k)) in tried.iter().enumerate() {
            let path = &ranked[i];
            let constraint_of = |path: &RelationPath| constraint_at(path, k);
            let anchor = anchors[path.anchor].as_str();
            let class = class_of(i);
            let query = match kind {
                QuestionKind::Boolean => match anchors.iter().find(|a| a.as_str() != anchor) {
                    Some(other) if path.end == EndKind::Entity => ask(anchor, path, other)?,
                    _ => select(&[(anchor, path)], &Shape::List { distinct_only: true })?,
                },
                QuestionKind::Count if path.end == EndKind::Number => {
                    select(&[(anchor, path)], &Shape::List { distinct_only: true })?
                }
                // A path back through one relation leaves the anchor out by itself (`chain`);
                // otherwise the anchor counts like any value ("directors Tom Hanks worked with"
                // include Tom Hanks when he directed one of his films).
                QuestionKind::Count => select_with(
                    &[(anchor, path)],
                    &Shape::Count { exclude: Vec::new() },
                    class,
                    constraint_of(path),
                )?,
                QuestionKind::List => match form.order {
                    Some(o) => superlative(ctx, &form, state, path, anchor, o, class, constraint_of(path)).await?,
                    None => select_with(
                        &[(anchor, path)],
                        &Shape::List { distinct_only: false },
                        class,
                        constraint_of(path),
                    )?,
                },
            };
            // The attribute a value the question writes held the answers to.
            let query = match (constrained.get(k), constraint_of(path)) {
                (Some((attribute, compared)), Some(_))
                    if kind == QuestionKind::Count || (kind == QuestionKind::List && form.order.is_none()) =>
                {
                    CandidateQuery {
                        attribute: Some(attribute.reading(AttributeOf::Value, *compared)),
                        ..query
                    }
                }
                _ => query,
            };
            let reason = if n == 0 {
                QueryReason::ChosenPath
            } else {
                QueryReason::Fallback
            };
            attempts.push((query, reason, Some(i)));
        }

        // A listed answer referred to as a whole: every query works over its members.
        let attempts = attempts
            .into_iter()
            .map(|(q, reason, path)| Ok((over_answer_set(state, q)?, reason, path)))
            .collect::<Result<Vec<_>, GraphError>>()?;

        // Two anchors whose paths exist but never meet: the graph links nothing to both, and a
        // path from one alone would answer another question. Unless one anchor's paths are only
        // the unsaid ones of a modifier ("the television show Charmed" taken for two things), or
        // every join tried had an unsaid path (kept as evidence for a join, no more): then the
        // other anchor's path answers.
        let joins = attempts.iter().filter(|a| a.1 == QueryReason::Join).count();
        let both_said = (0..anchors.len()).all(|a| state.paths.iter().any(|s| s.path.anchor == a && !s.unsaid));
        let mut last_error = None;
        let mut found: Option<(usize, CandidateQuery, QueryResults, Option<usize>)> = None;
        for (n, (candidate, reason, path)) in attempts.into_iter().enumerate() {
            if joins > 0
                && n == joins
                && found.is_none()
                && both_said
                && said_join
                && guessed.is_none()
                && state.queries.iter().all(|q| q.error.is_none())
            {
                // One of them written as a common noun beside a name ("In which *time zone* is
                // Rome?", "the *video game* World of Warcraft"): its words say the relation or
                // the kind, and the name alone is searched again with them.
                if let Some(e) = crate::linking::common_noun_link(&state.entities) {
                    state.entities[e].read_as_words = true;
                    return Ok(RELINKED);
                }
                break;
            }
            let (executed, result) = execute(ctx, state, &candidate, reason).await;
            let index = state.queries.len();
            state.queries.push(executed);
            match result {
                Ok(mut results) => {
                    // A false ASK, or no value for a one-anchor yes/no, is itself the answer.
                    let answered = has_answer(&results) || kind == QuestionKind::Boolean;
                    if answered {
                        if let QueryResults::Solutions(s) = &results
                            && s.truncated
                            && kind == QuestionKind::List
                        {
                            // Too many rows with their provenance: the answers alone, complete.
                            let class = path.and_then(class_of);
                            let path = path.map(|i| &ranked[i]);
                            results = answers_only(ctx, state, &candidate, reason, path, &anchors, class)
                                .await?
                                .unwrap_or(results);
                        }
                        found = Some((index, candidate, results, path));
                        break;
                    }
                }
                Err(e) => last_error = Some(e),
            }
        }
        if found.is_none()
            && state.queries.iter().all(|q| q.error.is_some())
            && let Some(error) = last_error
        {
            return Err(error.into());
        }

        let used_path = found.as_ref().and_then(|f| f.3);
        let mut answer = match found {
            None => match kind {
                QuestionKind::Boolean => Answer {
                    kind,
                    values: vec![AnswerValue::boolean(false)],
                    truncated: false,
                },
                QuestionKind::Count => Answer {
                    kind,
                    values: vec![AnswerValue::count(0)],
                    truncated: false,
                },
                QuestionKind::List => return Ok(state.stop(Outcome::NoAnswer)),
            },
            Some((index, candidate, results, path)) => {
                state.queries[index].used = true;
                if let QueryResults::Boolean(yes) = results {
                    let mut value = AnswerValue::boolean(yes);
                    if yes {
                        value.provenance = candidate
                            .patterns
                            .iter()
                            .filter_map(|p| instantiate(p, &HashMap::new()))
                            .collect();
                        // A variable (a vertex between, the predicate a hop of several took):
                        // one solution of the same pattern says which.
                        if value.provenance.len() < candidate.patterns.len()
                            && let Some(witness) = witness(&candidate)?
                        {
                            let (executed, result) = execute(ctx, state, &witness, QueryReason::Witness).await;
                            state.queries.push(executed);
                            if let Ok(QueryResults::Solutions(solutions)) = result
                                && let Some(row) = solutions.rows.first()
                            {
                                let bindings = row_bindings(&solutions.variables, row);
                                value.provenance = witness
                                    .patterns
                                    .iter()
                                    .filter_map(|p| instantiate(p, &bindings))
                                    .collect();
                            }
                        }
                    }
                    Answer {
                        kind,
                        values: vec![value],
                        truncated: false,
                    }
                } else {
                    // A count query counts; any other SELECT lists values (a stored number, or
                    // the values a one-anchor yes/no looks for in the question).
                    let counted = count_of(&results).is_some();
                    let values_of = if counted {
                        QuestionKind::Count
                    } else {
                        QuestionKind::List
                    };
                    let mut answer = aggregate(
                        values_of,
                        ANSWER_VARIABLE,
                        &[(&candidate, results)],
                        ctx.params.provenance_per_answer,
                    );
                    answer.kind = kind;
                    if let Some(path) = path.map(|i| &ranked[i])
                        && path.hops.len() > 1
                        && answer.values.len() > 1
                    {
                        // Back at the anchor: "films that share actors with X" does not answer X.
                        let anchor = &anchors[path.anchor];
                        answer.values.retain(|v| &v.value != anchor);
                    }
                    answer
                }
            }
        };
        label_values(ctx, &mut answer, state.language.as_deref()).await?;
        if kind == QuestionKind::List
            && let Some(holder) = value_holder(state, &answer)
        {
            answer.values = vec![holder];
            answer.truncated = false;
            label_values(ctx, &mut answer, state.language.as_deref()).await?;
        }
        if kind == QuestionKind::Boolean && answer.values.iter().all(|v| v.kind != ValueKind::Boolean) {
            // One anchor: yes when a value the path reaches is named in the question, or, over
            // an earlier list ("were any of them …"), when the path reaches one of its members.
            let over_members = state
                .answer_set
                .as_ref()
                .is_some_and(|s| s.role == SetRole::Filter && !s.count);
            // "Is there a DOI for X?", "Does X have a homepage?": whether the path has a value
            // at all, when the question names none of them.
            let question = state.working_question();
            // A value with the anchor's own name is the question's only where the path says the
            // question's words ("Is Walter Brenner the primary creator …": his "primary creator
            // name"); a path the words hardly say returns the name of anything ("Was X a nominee
            // of the US Senate?" → X's "name").
            let own = used_path.map(|i| &state.paths[i]).and_then(|s| {
                let said = s.support >= crate::candidates::ranking::FULL_SUPPORT;
                state.anchors.get(s.path.anchor).map(|a| (a.label.as_str(), said))
            });
            let named_in = |v: &AnswerValue| {
                named_in(v.display(), question)
                    && own.is_none_or(|(label, said)| said || !same_name(v.display(), label))
            };
            let exists = asks_existence(question) && !answer.values.iter().any(named_in);
            let named = answer.values.iter().find(|v| over_members || exists || named_in(v));
            let mut value = AnswerValue::boolean(named.is_some());
            value.provenance = named.map(|v| v.provenance.clone()).unwrap_or_default();
            answer.values = vec![value];
            answer.truncated = false;
        }
        leave_out_named(state, &mut answer);
        state.answer = Some(answer);
        Ok(state.stop(Outcome::Answered))
    }
}

/// The nearest example made from feedback ([`crate::candidates::examples`]), its query run on
/// this question's vertices in each order: the first that answers is the answer (a yes/no
/// question: yes when one order holds; a "no" of the example's shape is not evidence that the
/// answer is no, so then the ranking decides). `None` when there is no example near enough or its
/// query has no answer here: the ranking's candidates answer.
async fn by_example(
    ctx: &AgentContext,
    state: &mut AgentState,
    form: &QuestionForm,
) -> Result<Option<&'static str>, AgentError> {
    if ctx.examples.is_empty() || state.anchors.is_empty() {
        return Ok(None);
    }
    let anchors: Vec<(String, String)> = state
        .anchors
        .iter()
        .map(|a| (a.mention.clone(), a.iri.clone()))
        .collect();
    let question = state.working_question().to_owned();
    let Some(tried) = ctx
        .examples
        .tried(ctx, &question, &anchors, form.kind, state.asker.as_deref())
        .await?
    else {
        return Ok(None);
    };
    let mut used = tried.used;
    state.example = Some(used.clone());
    for (pairs, query) in tried.queries {
        let candidate = CandidateQuery {
            patterns: crate::candidates::examples::triple_patterns(&query),
            query,
            predicates: Vec::new(),
            attribute: None,
        };
        let (executed, result) = execute(ctx, state, &candidate, QueryReason::Example).await;
        state.queries.push(executed);
        let answer = match result {
            Ok(QueryResults::Boolean(true)) => Some(Answer {
                kind: form.kind,
                values: vec![AnswerValue::boolean(true)],
                truncated: false,
            }),
            Ok(QueryResults::Boolean(false)) => None,
            Ok(results @ QueryResults::Solutions(_)) => example_answer(form.kind, &candidate, results, ctx),
            Err(_) => None,
        };
        if let Some(mut answer) = answer {
            if let Some(last) = state.queries.last_mut() {
                last.used = true;
            }
            used.answered = true;
            used.anchors = pairs;
            state.example = Some(used);
            label_values(ctx, &mut answer, state.language.as_deref()).await?;
            state.answer = Some(answer);
            return Ok(Some(state.stop(Outcome::Answered)));
        }
    }
    Ok(None)
}

/// An example's SELECT results as the answer to a question of `kind`: a count is the number the
/// query counted (or the one number it gives, else how many values); a list is the values of
/// its first variable. `None` when there is none, or the count is 0 (the example's shape finds
/// nothing here: the ranking decides).
fn example_answer(
    kind: QuestionKind,
    candidate: &CandidateQuery,
    results: QueryResults,
    ctx: &AgentContext,
) -> Option<Answer> {
    let QueryResults::Solutions(solutions) = &results else {
        return None;
    };
    let first = solutions.variables.first()?.clone();
    let values: Vec<&Term> = solutions.column(&first).collect();
    if values.is_empty() {
        return None;
    }
    match kind {
        QuestionKind::Count => {
            let number = match values.as_slice() {
                [Term::Literal(l)] => l.value().parse::<f64>().ok().filter(|n| *n >= 0.0 && n.fract() == 0.0),
                _ => None,
            };
            let mut distinct: Vec<&Term> = values.clone();
            distinct.sort_by_key(|t| t.to_string());
            distinct.dedup();
            let count = number.map_or(distinct.len() as u64, |n| n as u64);
            if count == 0 {
                // Nothing of the example's shape here, like an empty list.
                return None;
            }
            Some(Answer {
                kind,
                values: vec![AnswerValue::count(count)],
                truncated: false,
            })
        }
        _ => {
            let mut answer = aggregate(
                QuestionKind::List,
                first.as_str(),
                &[(candidate, results.clone())],
                ctx.params.provenance_per_answer,
            );
            answer.kind = kind;
            (!answer.values.is_empty()).then_some(answer)
        }
    }
}

/// "Which package is at version 4.6-1.1?": the vertex linked by the value the question writes,
/// when the chosen path only gives that value back (its holder is what is asked for), with the
/// value's triple as provenance.
fn value_holder(state: &AgentState, answer: &Answer) -> Option<AnswerValue> {
    let written = |m: &str| normalize_tokens(m.trim_matches(|c: char| !c.is_alphanumeric()));
    state
        .entities
        .iter()
        .filter(|l| l.method == crate::state::LinkMethod::Literal)
        .find_map(|link| {
            let value = written(&link.mention);
            let only_it = !answer.values.is_empty()
                && answer
                    .values
                    .iter()
                    .all(|v| v.kind == ValueKind::Literal && normalize_tokens(&v.value) == value);
            if !only_it {
                return None;
            }
            let iri = link.iri.as_ref()?;
            let mut holder =
                AnswerValue::from_term(&Term::NamedNode(chatty_kg_graph::NamedNode::new_unchecked(iri.clone())))?;
            holder.provenance = answer.values[0].provenance.clone();
            Some(holder)
        })
}

/// The chosen one-hop path through its relation's statements, held by the qualifier (or the
/// period) the value the question writes is about ([`crate::candidates::statements`]); `None`
/// where the relation has no statements at the anchor or their qualifiers cannot hold the value.
async fn qualified_attempt(
    ctx: &AgentContext,
    state: &AgentState,
    conventions: &chatty_kg_graph::Conventions,
    path: &RelationPath,
    constraint: &ValueConstraint,
    kind: QuestionKind,
    class: Option<ClassFilter<'_>>,
) -> Result<Option<CandidateQuery>, AgentError> {
    use crate::candidates::statements::{qualified_by, qualifiers, select_qualified, statements_of, through_qualifier};
    let Some(anchor) = state.anchors.get(path.anchor) else {
        return Ok(None);
    };
    // The relation's statements and what the answer is of them: the relation's value (a
    // direct claim), or one of their qualifiers ("who uploaded the version current in 2024":
    // the claim, then the qualifier).
    let (hop, statements, value) = match path.hops.as_slice() {
        [hop] => match statements_of(conventions, hop) {
            Some(statements) => {
                let value = statements.statement.clone();
                (hop.clone(), statements, value)
            }
            None => return Ok(None),
        },
        [claim, qualifier] => match through_qualifier(conventions, claim, qualifier) {
            Some((hop, statements)) => (hop, statements, qualifier.predicate.clone()),
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    let path = &RelationPath {
        hops: vec![hop.clone()],
        ..path.clone()
    };
    let hop = &hop;
    let found = qualifiers(ctx, conventions, &anchor.iri, hop, &statements).await?;
    if found.kinds.is_empty() {
        return Ok(None);
    }
    let compared = found.kinds.len();
    let Some(qualified) = qualified_by(
        ctx,
        constraint,
        state.working_question(),
        &words_left_over(state),
        &found,
    )
    .await?
    else {
        return Ok(None);
    };
    let shape = match kind {
        QuestionKind::Count => Shape::Count { exclude: Vec::new() },
        _ => Shape::List { distinct_only: false },
    };
    let query = select_qualified(
        &anchor.iri,
        path,
        &shape,
        class,
        &statements,
        &value,
        &qualified,
        constraint,
    )?;
    Ok(Some(CandidateQuery {
        attribute: Some(qualified.attribute().reading(AttributeOf::Value, compared)),
        ..query
    }))
}

/// Whether `entity` is of `class`, by one membership query kept in the explanation (used when
/// it is): the type triples that make it one, or `None` when it is not or the graph could not be
/// asked (the query shows why).
async fn membership_provenance(
    ctx: &AgentContext,
    state: &mut AgentState,
    entity: &str,
    class: &str,
) -> Result<Option<Vec<[String; 3]>>, AgentError> {
    let profile = ctx.kg.profile_or_default().await;
    let candidate = membership(entity, class, profile.conventions.types())?;
    let (mut executed, result) = execute(ctx, state, &candidate, QueryReason::Class).await;
    let Ok(results) = result else {
        state.queries.push(executed);
        return Ok(None);
    };
    let found = aggregate(QuestionKind::List, TYPE_VARIABLE, &[(&candidate, results)], 1);
    executed.used = !found.values.is_empty();
    state.queries.push(executed);
    Ok((!found.values.is_empty()).then(|| found.values.into_iter().flat_map(|v| v.provenance).collect()))
}

/// The other classes of the graph named as `class` is (its homonyms among classes), the most
/// instances first, at most [`MEMBERSHIP_HOMONYMS`].
async fn same_named_classes(ctx: &AgentContext, class: &str) -> Vec<String> {
    let Ok(profile) = ctx.kg.profile().await else {
        return Vec::new();
    };
    let Some(name) = profile
        .classes
        .iter()
        .find(|c| c.iri == class)
        .map(|c| normalize_tokens(&c.label))
    else {
        return Vec::new();
    };
    profile
        .classes
        .iter()
        .filter(|c| c.iri != class && normalize_tokens(&c.label) == name)
        .take(MEMBERSHIP_HOMONYMS)
        .map(|c| c.iri.clone())
        .collect()
}

/// Homonyms of the entity a yes/no question asks the class of that are tried at most.
const MEMBERSHIP_HOMONYMS: usize = 4;

/// A question about a class alone ("how many countries are there", "list the cities", "which is
/// the largest city": ORDER BY the attribute of its instances most like the superlative's words),
/// or whether the one entity is of it ("is Lima a city").
async fn about_the_class(
    ctx: &AgentContext,
    state: &mut AgentState,
    form: &QuestionForm,
    class: &str,
) -> Result<&'static str, AgentError> {
    let kind = form.kind;
    let profile = ctx.kg.profile_or_default().await;
    let types = profile.conventions.types();
    // One entity and a list: the vertex holding the value the question writes, which is of the
    // class (path search checked); its type is the provenance.
    let holder = (kind == QuestionKind::List)
        .then(|| state.anchors.first())
        .flatten()
        .cloned();
    let candidate = match kind {
        _ if holder.is_some() => membership(holder.as_ref().map_or("", |h| h.iri.as_str()), class, types)?,
        QuestionKind::Boolean => {
            let entity = state.anchors.first().ok_or(AgentError::MissingState {
                agent: NAME,
                what: "the entity asked about",
            })?;
            membership(&entity.iri, class, types)?
        }
        QuestionKind::Count => over_class(class, &Shape::Count { exclude: Vec::new() }, types)?,
        QuestionKind::List => match form.order {
            None => over_class(class, &Shape::List { distinct_only: false }, types)?,
            Some(order) => match class_attribute(ctx, form, class, &words_beside_class(state, form)).await? {
                Some((attribute, numeric, reading)) => CandidateQuery {
                    attribute: Some(reading),
                    ..over_class(
                        class,
                        &Shape::Superlative {
                            attribute: Some(attribute),
                            order,
                            numeric,
                            offset: form.offset,
                            take: form.take,
                        },
                        types,
                    )?
                },
                // Nothing of its instances to order them by.
                None => return Ok(state.stop(Outcome::NoQuery)),
            },
        },
    };
    // "Which of them are marks?": the class's instances among an earlier answer's members.
    let candidate = if holder.is_none() && kind != QuestionKind::Boolean {
        over_answer_set(state, candidate)?
    } else {
        candidate
    };
    let (mut executed, result) = execute(ctx, state, &candidate, QueryReason::Class).await;
    executed.used = result
        .as_ref()
        .is_ok_and(|r| kind != QuestionKind::List || has_answer(r));
    state.queries.push(executed);
    let results = result?;
    let answer = match kind {
        QuestionKind::List if let Some(holder) = &holder => {
            let found = aggregate(QuestionKind::List, TYPE_VARIABLE, &[(&candidate, results)], 1);
            if found.values.is_empty() {
                return Ok(state.stop(Outcome::NoAnswer));
            }
            let holder_value = |iri: &str| {
                AnswerValue::from_term(&Term::NamedNode(chatty_kg_graph::NamedNode::new_unchecked(iri))).ok_or(
                    AgentError::MissingState {
                        agent: NAME,
                        what: "the value's holder",
                    },
                )
            };
            let mut value = holder_value(&holder.iri)?;
            value.provenance = found.values.into_iter().flat_map(|v| v.provenance).collect();
            let mut values = vec![value];
            // Every other vertex that stores the value and is of the class answers too ("which
            // packages have X as their homepage").
            let others: Vec<String> = state
                .entities
                .iter()
                .find(|l| {
                    l.method == crate::state::LinkMethod::Literal && l.iri.as_deref() == Some(holder.iri.as_str())
                })
                .map(|l| l.homonyms.clone())
                .unwrap_or_default();
            for other in others {
                if let Some(provenance) = membership_provenance(ctx, state, &other, class).await? {
                    let mut value = holder_value(&other)?;
                    value.provenance = provenance;
                    values.push(value);
                }
            }
            Answer {
                kind,
                values,
                truncated: false,
            }
        }
        QuestionKind::Boolean => {
            let found = aggregate(QuestionKind::List, TYPE_VARIABLE, &[(&candidate, results)], 1);
            let mut is_one = !found.values.is_empty();
            let mut provenance: Vec<[String; 3]> = found.values.into_iter().flat_map(|v| v.provenance).collect();
            // Several vertices share the label: the thing so named is of the class when one of
            // them is ("is wesnoth-1.16 a source package": the source package of that name, not
            // the binary one the search ranked first).
            let first = state.queries.len() - 1;
            let homonyms: Vec<String> = state
                .anchors
                .first()
                .and_then(|a| state.entities.iter().find(|l| l.iri.as_deref() == Some(a.iri.as_str())))
                .filter(|l| l.method == crate::state::LinkMethod::ExactLabel)
                .map(|l| l.homonyms.clone())
                .unwrap_or_default();
            for other in homonyms.iter().take(MEMBERSHIP_HOMONYMS) {
                if is_one {
                    break;
                }
                if let Some(types) = membership_provenance(ctx, state, other, class).await? {
                    state.queries[first].used = false;
                    is_one = true;
                    provenance = types;
                }
            }
            // Several classes share the name ("sport": DBpedia's and UMBEL's): the thing is one
            // when it is of any of them.
            if !is_one {
                let entity = state.anchors.first().map(|a| a.iri.clone()).unwrap_or_default();
                let entities: Vec<String> = std::iter::once(entity)
                    .chain(homonyms.iter().take(MEMBERSHIP_HOMONYMS).cloned())
                    .collect();
                'classes: for other in same_named_classes(ctx, class).await {
                    for entity in &entities {
                        if let Some(types) = membership_provenance(ctx, state, entity, &other).await? {
                            state.queries[first].used = false;
                            is_one = true;
                            provenance = types;
                            break 'classes;
                        }
                    }
                }
            }
            let mut value = AnswerValue::boolean(is_one);
            value.provenance = provenance;
            Answer {
                kind,
                values: vec![value],
                truncated: false,
            }
        }
        QuestionKind::Count => aggregate(kind, ANSWER_VARIABLE, &[(&candidate, results)], 1),
        QuestionKind::List => match listed(ctx, &candidate, results) {
            Some(answer) => answer,
            None => return Ok(state.stop(Outcome::NoAnswer)),
        },
    };
    answered(ctx, state, answer).await
}

/// The answers of one list query, each with its provenance; `None` when it has none.
fn listed(ctx: &AgentContext, candidate: &CandidateQuery, results: QueryResults) -> Option<Answer> {
    has_answer(&results).then(|| {
        aggregate(
            QuestionKind::List,
            ANSWER_VARIABLE,
            &[(candidate, results)],
            ctx.params.provenance_per_answer,
        )
    })
}

/// The question ends with `answer`, its values labelled.
async fn answered(ctx: &AgentContext, state: &mut AgentState, mut answer: Answer) -> Result<&'static str, AgentError> {
    leave_out_named(state, &mut answer);
    label_values(ctx, &mut answer, state.language.as_deref()).await?;
    state.answer = Some(answer);
    Ok(state.stop(Outcome::Answered))
}

/// "What *else* does he maintain?", "what else is built from it?": a follow-up asking for
/// things besides those the previous turn named (the package the maintainer was found from)
/// leaves them out of its answers, where others remain.
fn leave_out_named(state: &mut AgentState, answer: &mut Answer) {
    if state.mode != crate::state::Mode::MultiTurn
        || answer.kind != QuestionKind::List
        || !normalize_tokens(&state.question).iter().any(|w| w == "else")
    {
        return;
    }
    let Some(previous) = state.history.last() else {
        return;
    };
    let named_here =
        |v: &crate::answer::AnswerValue| v.kind == ValueKind::Iri && previous.entities.iter().any(|e| e.iri == v.value);
    if answer.values.iter().all(named_here) {
        return;
    }
    state.excluded = previous
        .entities
        .iter()
        .filter(|e| {
            answer
                .values
                .iter()
                .any(|v| v.kind == ValueKind::Iri && v.value == e.iri)
        })
        .map(|e| crate::answer::Member {
            value: e.iri.clone(),
            label: e.label.clone(),
            iri: true,
            datatype: None,
        })
        .collect();
    answer.values.retain(|v| !named_here(v));
}

/// A question that names nothing but the earlier answer it restricts and an order ("which one
/// of those takes the most disk space?", "which of them was released first?"): the members
/// ordered by their number or date attribute most like the question's words, as many as it
/// asks for.
async fn about_the_set(
    ctx: &AgentContext,
    state: &mut AgentState,
    form: &QuestionForm,
) -> Result<&'static str, AgentError> {
    let (Some(set), Some(order)) = (state.answer_set.clone(), form.order) else {
        return Ok(state.stop(Outcome::NoQuery));
    };
    let members: Vec<&str> = set.members.iter().filter(|m| m.iri).map(|m| m.value.as_str()).collect();
    let left = words_left_over(state);
    // The members' own numbers and dates, else a text attribute the words name, else the
    // numbers and dates of what they relate to: their edges read once.
    let out = outgoing(ctx, &members).await?;
    let (via, attribute, numeric, reading) = match attribute_among(ctx, form, &left, &out.kinds).await? {
        Some((attribute, numeric, reading)) => (None, attribute, numeric, reading),
        None => match text_attribute_named(ctx, form, &left, &out).await? {
            Some((attribute, reading)) => (None, attribute, false, reading),
            None => match attribute_through(ctx, form, &left, &out).await? {
                Some((via, attribute, numeric, reading)) => (Some(via), attribute, numeric, reading),
                // Nothing of the members to order them by.
                None => return Ok(state.stop(Outcome::NoQuery)),
            },
        },
    };
    let shape = Shape::Superlative {
        attribute: Some(attribute),
        order,
        numeric,
        offset: form.offset,
        take: form.take,
    };
    let query = crate::candidates::queries::by_attribute(via.as_ref(), &shape)?;
    let candidate = over_answer_set(
        state,
        CandidateQuery {
            attribute: Some(reading),
            ..query
        },
    )?;
    let (mut executed, result) = execute(ctx, state, &candidate, QueryReason::AnswerSet).await;
    executed.used = result.as_ref().is_ok_and(has_answer);
    state.queries.push(executed);
    match listed(ctx, &candidate, result?) {
        Some(answer) => answered(ctx, state, answer).await,
        None => Ok(state.stop(Outcome::NoAnswer)),
    }
}

/// A question with no vertex to start from but a value its answers have: the instances of the
/// class it names (or any vertex, when it names none) whose attribute most like the value's words
/// meets the value. Up to [`crate::candidates::values::ATTRIBUTES_TRIED`] attributes are tried, the most
/// similar first; the first with answers is the answer.
async fn by_value(
    ctx: &AgentContext,
    state: &mut AgentState,
    form: &QuestionForm,
    class: Option<&str>,
    constraint: &ValueConstraint,
) -> Result<&'static str, AgentError> {
    let kinds = match class {
        Some(class) => {
            let sample = instances_of(ctx, class, CLASS_SAMPLE).await?;
            let instances: Vec<&str> = sample.iter().map(String::as_str).collect();
            attributes_of(ctx, &instances).await?
        }
        None => attributes_of_graph(ctx).await,
    };
    let attributes = rank_attributes(ctx, constraint, &words_left_over(state), &kinds, false).await?;
    if attributes.is_empty() {
        return Ok(state.stop(Outcome::NoQuery));
    }
    let kind = form.kind;
    let profile = ctx.kg.profile_or_default().await;
    let shape = match kind {
        QuestionKind::Count => Shape::Count { exclude: Vec::new() },
        _ => Shape::List { distinct_only: false },
    };
    // A list takes every attribute about as like the words as the first that answers (dbo and
    // dbp near-duplicates say one thing: a founding year and a founding date); a count the first.
    let mut answered: Vec<(CandidateQuery, QueryResults, usize)> = Vec::new();
    let mut zero: Option<(CandidateQuery, QueryResults, usize)> = None;
    let mut best_similarity: Option<f32> = None;
    let mut last_error = None;
    let mut ran = false;
    for attribute in &attributes {
        if best_similarity.is_some_and(|best| attribute.similarity < best - SAME_ATTRIBUTE) {
            break;
        }
        // "Which of them need more than 2000 kB": over the earlier answer's members.
        let candidate = over_answer_set(
            state,
            CandidateQuery {
                attribute: Some(attribute.reading(AttributeOf::Value, kinds.len())),
                ..over_values(class, &shape, attribute, constraint, profile.conventions.types())?
            },
        )?;
        let (executed, result) = execute(ctx, state, &candidate, QueryReason::Value).await;
        let index = state.queries.len();
        state.queries.push(executed);
        let results = match result {
            Ok(results) => results,
            // A failed attribute is no answer; the next may be.
            Err(e) => {
                last_error = Some(e);
                continue;
            }
        };
        ran = true;
        let has = match kind {
            QuestionKind::Count => count_of(&results).is_some_and(|n| n > 0),
            _ => has_answer(&results),
        };
        if has {
            best_similarity.get_or_insert(attribute.similarity);
            answered.push((candidate, results, index));
            if kind == QuestionKind::Count {
                break;
            }
        } else if zero.is_none() && kind == QuestionKind::Count {
            zero = Some((candidate, results, index));
        }
    }
    if answered.is_empty() {
        answered.extend(zero);
    }
    if answered.is_empty() {
        if !ran && let Some(error) = last_error {
            return Err(error.into());
        }
        return Ok(state.stop(Outcome::NoAnswer));
    }
    for (_, _, index) in &answered {
        state.queries[*index].used = true;
    }
    let parts: Vec<(&CandidateQuery, QueryResults)> = answered.iter().map(|(c, r, _)| (c, r.clone())).collect();
    let mut answer = aggregate(kind, ANSWER_VARIABLE, &parts, ctx.params.provenance_per_answer);
    answer.kind = kind;
    leave_out_named(state, &mut answer);
    label_values(ctx, &mut answer, state.language.as_deref()).await?;
    state.answer = Some(answer);
    Ok(state.stop(Outcome::Answered))
}

/// Attributes this much less like the value's words than the first that answers still count
/// as saying the same thing.
const SAME_ATTRIBUTE: f32 = 0.05;

/// Instances sampled to find what a class's instances can be ordered by.
const CLASS_SAMPLE: usize = 100;

/// The number- or date-valued predicate of a class's instances most like the superlative's
/// words ("largest" → population), from a sample of instances and their outgoing edges, and
/// whether its values are numbers; `None` when they have none.
async fn class_attribute(
    ctx: &AgentContext,
    form: &QuestionForm,
    class: &str,
    left: &[String],
) -> Result<Option<(Hop, bool, AttributeReading)>, AgentError> {
    let sample = instances_of(ctx, class, CLASS_SAMPLE).await?;
    let instances: Vec<&str> = sample.iter().map(String::as_str).collect();
    attribute_like(ctx, form, left, &instances).await
}

/// The words of a question about a class besides the class and its form words.
fn words_beside_class(state: &AgentState, form: &QuestionForm) -> Vec<String> {
    state
        .class
        .as_ref()
        .map(|c| crate::understanding::classes::words_beside(state.working_question(), c, form))
        .unwrap_or_default()
        .into_iter()
        .filter(|w| !crate::words::is_function_word(w))
        .collect()
}

/// The question's words that neither its linked mentions nor its class say.
fn words_left_over(state: &AgentState) -> Vec<String> {
    let mut said: Vec<&str> = state
        .entities
        .iter()
        .filter(|l| !l.read_as_words)
        .map(|l| l.mention.as_str())
        .collect();
    if let Some(c) = &state.class {
        said.push(c.mention.as_str());
    }
    crate::understanding::form::words_left(state.working_question(), &said)
}

/// The number- or date-valued predicate of `vertices` most like the superlative's words (and the
/// words `left` over; ties: the one with more values), and whether its values are numbers; `None`
/// when they have none.
async fn attribute_like(
    ctx: &AgentContext,
    form: &QuestionForm,
    left: &[String],
    vertices: &[&str],
) -> Result<Option<(Hop, bool, AttributeReading)>, AgentError> {
    attribute_among(ctx, form, left, &attributes_of(ctx, vertices).await?).await
}

/// [`attribute_like`] among the predicates of `kinds` (predicate → number values, date values).
async fn attribute_among(
    ctx: &AgentContext,
    form: &QuestionForm,
    left: &[String],
    kinds: &Kinds,
) -> Result<Option<(Hop, bool, AttributeReading)>, AgentError> {
    if kinds.is_empty() {
        return Ok(None);
    }
    let predicates: Vec<&str> = kinds.keys().map(String::as_str).collect();
    let labels = predicate_labels(ctx, &predicates).await?;
    let similarity = resemblance(ctx, &form.superlative_words, left, &labels).await?;
    let values = |i: usize| kinds[predicates[i]].0 + kinds[predicates[i]].1;
    let said = |i: usize| words_said(&labels[i], &similarity[i].1);
    let Some(best) = (0..predicates.len()).max_by(|&a, &b| {
        similarity[a]
            .0
            .total_cmp(&similarity[b].0)
            .then(said(a).cmp(&said(b)))
            .then(values(a).cmp(&values(b)))
            .then(b.cmp(&a))
    }) else {
        return Ok(None);
    };
    let (numbers, dates) = kinds[predicates[best]];
    let attribute = Attribute {
        hop: Hop::forward(predicates[best], labels[best].clone()),
        via: None,
        temporal: numbers < dates,
        similarity: similarity[best].0,
        words: similarity[best].1.clone(),
    };
    let reading = attribute.reading(AttributeOf::Superlative, predicates.len());
    Ok(Some((attribute.hop, numbers >= dates, reading)))
}

/// For members with no number or date of their own: their text-valued attribute whose name the
/// question writes in full ("the highest *code point*", stored as "U+20B8"), ordered as the graph
/// orders text (SPARQL's `ORDER BY` on strings); the one more of whose words it writes first.
async fn text_attribute_named(
    ctx: &AgentContext,
    form: &QuestionForm,
    left: &[String],
    out: &Outgoing,
) -> Result<Option<(Hop, AttributeReading)>, AgentError> {
    let predicates: Vec<&str> = out.texts.iter().map(String::as_str).collect();
    if predicates.is_empty() {
        return Ok(None);
    }
    let labels = predicate_labels(ctx, &predicates).await?;
    let words: Vec<String> = form.superlative_words.iter().chain(left).cloned().collect();
    let written = words.join(" ");
    let named = |i: usize| {
        let said = words_said(&labels[i], &written);
        (said > 0 && said == normalize_tokens(&labels[i]).len()).then_some(said)
    };
    let Some(best) = (0..predicates.len())
        .filter(|&i| named(i).is_some())
        .max_by(|&a, &b| named(a).cmp(&named(b)).then(b.cmp(&a)))
    else {
        return Ok(None);
    };
    let attribute = Attribute {
        hop: Hop::forward(predicates[best], labels[best].clone()),
        via: None,
        temporal: false,
        similarity: 1.0,
        words: written,
    };
    let reading = attribute.reading(AttributeOf::Superlative, predicates.len());
    Ok(Some((attribute.hop, reading)))
}

/// For members with no number or date of their own ("which one of those was added most
/// recently", of characters): the number- or date-valued predicate of the vertices they relate
/// to, through the relation whose name and the attribute's together are most like the words
/// ("introduced in" · "release year"), and whether its values are numbers
/// ([`crate::candidates::values::attributes_through`]).
async fn attribute_through(
    ctx: &AgentContext,
    form: &QuestionForm,
    left: &[String],
    out: &Outgoing,
) -> Result<Option<(Hop, Hop, bool, AttributeReading)>, AgentError> {
    let options = attributes_through(ctx, out).await?;
    if options.is_empty() {
        return Ok(None);
    }
    let labels: Vec<String> = options.iter().map(|t| t.label()).collect();
    let similarity = resemblance(ctx, &form.superlative_words, left, &labels).await?;
    let values = |i: usize| options[i].numbers + options[i].dates;
    let Some(best) = (0..options.len()).max_by(|&a, &b| {
        similarity[a]
            .0
            .total_cmp(&similarity[b].0)
            .then(words_said(&labels[a], &similarity[a].1).cmp(&words_said(&labels[b], &similarity[b].1)))
            .then(values(a).cmp(&values(b)))
            .then(b.cmp(&a))
    }) else {
        return Ok(None);
    };
    let best_option = &options[best];
    let attribute = Attribute {
        hop: best_option.attribute.clone(),
        via: Some(best_option.via.clone()),
        temporal: best_option.numbers < best_option.dates,
        similarity: similarity[best].0,
        words: similarity[best].1.clone(),
    };
    let reading = attribute.reading(AttributeOf::Superlative, options.len());
    Ok(Some((
        best_option.via.clone(),
        attribute.hop,
        best_option.numbers >= best_option.dates,
        reading,
    )))
}

/// The one anchor of two linked by a guess ([`LinkMethod::MostConnected`]) where the other was
/// linked with confidence (an exact label, the only candidate, a dominant vertex, the dialogue's
/// or the user's).
fn guessed_anchor(state: &AgentState) -> Option<usize> {
    let link = |iri: &str| state.entities.iter().find(|l| l.iri.as_deref() == Some(iri));
    let guessed = |l: Option<&crate::state::EntityLink>| l.is_some_and(|l| l.method == LinkMethod::MostConnected);
    let firm = |l: Option<&crate::state::EntityLink>| l.is_some_and(crate::linking::coherence::firm);
    let [a, b] = state.anchors.as_slice() else {
        return None;
    };
    let (a, b) = (link(&a.iri), link(&b.iri));
    if guessed(a) && firm(b) {
        Some(0)
    } else if guessed(b) && firm(a) {
        Some(1)
    } else {
        None
    }
}

/// The first two mentions stand side by side, joined by "and" or "or" ("given to both *X and
/// Y*", "*X and Y* played their first match for which team"): one relation is asked of both.
fn coordinated(question: &str, mentions: &[&str]) -> bool {
    let words = crate::words::words(question);
    let span = |i: usize| {
        mentions
            .get(i)
            .and_then(|m| crate::candidates::ranking::find_span(&words, m))
    };
    let (Some(a), Some(b)) = (span(0), span(1)) else {
        return false;
    };
    let (first, second) = if a.0 < b.0 { (a, b) } else { (b, a) };
    first.1 + 1 == second.0 && matches!(words[first.1].text.as_str(), "and" | "or")
}

/// Pairs of paths from two different anchors that both end at vertices, best pair first. When
/// the question asks one relation of both anchors (`same`), the pairs that walk the same hops
/// from each go first.
fn join_pairs(ranked: &[RelationPath], order: &[usize], same: bool) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    if same {
        let from = |anchor: usize| -> Vec<usize> {
            order
                .iter()
                .copied()
                .filter(|&i| ranked[i].end == EndKind::Entity && ranked[i].anchor == anchor)
                .collect()
        };
        let (a, b) = (from(0), from(1));
        let mut alike: Vec<(usize, usize, usize, usize)> = Vec::new();
        for (ra, &i) in a.iter().enumerate() {
            if let Some((rb, &j)) = b.iter().enumerate().find(|(_, j)| ranked[**j].hops == ranked[i].hops) {
                alike.push((ranked[i].hops.len(), ra + rb, i, j));
            }
        }
        alike.sort();
        pairs.extend(alike.into_iter().take(JOIN_PATHS).map(|(_, _, i, j)| (i, j)));
    }
    for pair in other_pairs(ranked, order, same) {
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    pairs
}

/// Pairs of each anchor's best paths (and its best one hops), fewer hops first.
fn other_pairs(ranked: &[RelationPath], order: &[usize], same: bool) -> Vec<(usize, usize)> {
    let firsts: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| ranked[i].end == EndKind::Entity)
        .collect();
    // Each anchor's paths are ranked against all the question's words, so its best paths may
    // walk on to say the other anchor's relation too ("the affiliation of X and alma mater of
    // Y": X → affiliation → alma mater (of)), and its best one hop may be the other anchor's
    // relation ("movies starring X directed by Y": X → directed by (of) ranks above X → starred
    // actors (of), since "directed" is written and "starring" is only like "starred actors").
    // Its own relations, which meet the other's at the answer, are paired as well: its best
    // [`JOIN_PATHS`] one hops.
    let of = |anchor: usize| -> Vec<usize> {
        let mut own: Vec<usize> = firsts
            .iter()
            .copied()
            .filter(|&i| ranked[i].anchor == anchor)
            .take(JOIN_PATHS)
            .collect();
        for one in firsts
            .iter()
            .copied()
            .filter(|&i| ranked[i].anchor == anchor && ranked[i].hops.len() == 1)
            .take(JOIN_PATHS)
        {
            if !own.contains(&one) {
                own.push(one);
            }
        }
        own
    };
    let (a, b) = (of(0), of(1));
    // Fewer hops first: each anchor's own relation meets the other's at the answer ("movies
    // starring X directed by Y" meet at the movies); longer paths that cover both anchors' words
    // meet somewhere else (a person). Of as many hops, unless one relation is asked of both
    // anchors ("films X and Y both directed"), a pair walking the same hops from each goes after
    // the others: two anchors written apart each come with their own relation words. Then the
    // better ranked pair.
    let mut pairs: Vec<(usize, bool, usize, usize, usize)> = Vec::new();
    for (ra, &i) in a.iter().enumerate() {
        for (rb, &j) in b.iter().enumerate() {
            let alike = !same && ranked[i].hops == ranked[j].hops;
            pairs.push((ranked[i].hops.len() + ranked[j].hops.len(), alike, ra + rb, i, j));
        }
    }
    pairs.sort();
    pairs.into_iter().map(|(_, _, _, i, j)| (i, j)).collect()
}

/// ORDER BY the path's own values when they are numbers or dates, else by the attribute one hop
/// further that is most like the superlative's words; a plain list when there is none.
async fn superlative(
    ctx: &AgentContext,
    form: &QuestionForm,
    state: &AgentState,
    path: &RelationPath,
    anchor: &str,
    order: crate::qir::Order,
    class: Option<ClassFilter<'_>>,
    // A value the question writes as well ("worth more than 0 but less than 0.15, smallest
    // first"): the answers ordered are those it holds.
    constraint: Option<(&Attribute, &ValueConstraint)>,
) -> Result<CandidateQuery, AgentError> {
    // "Which *character* in Number Forms has the highest numeric value?": the question asks for
    // things of a class, and the path ends at their numbers. A number is no instance of any
    // class: the answers are the vertices before the last hop, ordered by it.
    let asks_for_things = state
        .class
        .as_ref()
        .is_some_and(|c| c.role == crate::understanding::classes::ClassRole::Answer);
    if asks_for_things
        && matches!(path.end, EndKind::Number | EndKind::Temporal)
        && let [before @ .., last] = path.hops.as_slice()
        && !before.is_empty()
        && last.forward
    {
        let things = RelationPath {
            anchor: path.anchor,
            hops: before.to_vec(),
            end: EndKind::Entity,
            reached: path.reached,
            endpoints: Vec::new(),
        };
        let shape = Shape::Superlative {
            attribute: Some(last.clone()),
            order,
            numeric: path.end == EndKind::Number,
            offset: form.offset,
            take: form.take,
        };
        let reading = Attribute {
            hop: last.clone(),
            via: None,
            temporal: path.end == EndKind::Temporal,
            similarity: 1.0,
            words: form.superlative_words.join(" "),
        }
        .reading(AttributeOf::Superlative, 1);
        return Ok(CandidateQuery {
            attribute: Some(reading),
            ..select_in(&[(anchor, &things)], &shape, None)?
        });
    }
    if matches!(path.end, EndKind::Number | EndKind::Temporal) {
        let shape = Shape::Superlative {
            attribute: None,
            order,
            numeric: path.end == EndKind::Number,
            offset: form.offset,
            take: form.take,
        };
        return Ok(select(&[(anchor, path)], &shape)?);
    }
    let extensions: Vec<&RelationPath> = state
        .path_pool
        .iter()
        .filter(|p| {
            p.anchor == path.anchor
                && p.hops.len() == path.hops.len() + 1
                && p.hops[..path.hops.len()] == path.hops[..]
                && p.hops.last().is_some_and(|h| h.forward)
                && matches!(p.end, EndKind::Number | EndKind::Temporal)
        })
        .collect();
    if extensions.is_empty() {
        // The search went no further than the answers: their own numbers and dates, read from
        // the ones it reached ("the highest mountain in Italy": the mountains' elevation).
        let sample: Vec<&str> = path.endpoints.iter().filter_map(iri_of).collect();
        let (shape, reading) = match attribute_like(ctx, form, &words_left_over(state), &sample).await? {
            Some((attribute, numeric, reading)) => (
                Shape::Superlative {
                    attribute: Some(attribute),
                    order,
                    numeric,
                    offset: form.offset,
                    take: form.take,
                },
                Some(reading),
            ),
            None => (Shape::List { distinct_only: false }, None),
        };
        return Ok(CandidateQuery {
            attribute: reading,
            ..select_with(&[(anchor, path)], &shape, class, constraint)?
        });
    }
    let labels: Vec<String> = extensions
        .iter()
        .filter_map(|p| p.hops.last().map(|h| h.label.clone()))
        .collect();
    let similarity = resemblance(ctx, &form.superlative_words, &words_left_over(state), &labels).await?;
    let best = (0..extensions.len())
        .max_by(|&a, &b| {
            similarity[a]
                .0
                .total_cmp(&similarity[b].0)
                .then(words_said(&labels[a], &similarity[a].1).cmp(&words_said(&labels[b], &similarity[b].1)))
                .then(b.cmp(&a))
        })
        .unwrap_or(0);
    let attribute: Option<Hop> = extensions[best].hops.last().cloned();
    let reading = attribute.as_ref().map(|hop| {
        Attribute {
            hop: hop.clone(),
            via: None,
            temporal: extensions[best].end == EndKind::Temporal,
            similarity: similarity[best].0,
            words: similarity[best].1.clone(),
        }
        .reading(AttributeOf::Superlative, extensions.len())
    });
    let shape = Shape::Superlative {
        attribute,
        order,
        numeric: extensions[best].end == EndKind::Number,
        offset: form.offset,
        take: form.take,
    };
    Ok(CandidateQuery {
        attribute: reading,
        ..select_with(&[(anchor, path)], &shape, class, constraint)?
    })
}

/// Runs one query, recording it.
async fn execute(
    ctx: &AgentContext,
    state: &mut AgentState,
    candidate: &CandidateQuery,
    reason: QueryReason,
) -> (ExecutedQuery, Result<QueryResults, GraphError>) {
    let started = Instant::now();
    // An example's query was written by a person (a correction, an imported example): it runs
    // where it cannot hurt the process (`KnowledgeGraph::query_untrusted`).
    let result = if reason == QueryReason::Example {
        ctx.kg.query_untrusted(&candidate.query).await
    } else {
        ctx.kg.query(&candidate.query).await
    };
    let elapsed = started.elapsed();
    state.execution_time += elapsed;
    let mut executed = ExecutedQuery {
        sparql: candidate.query.to_string(),
        predicates: candidate.predicates.clone(),
        reason,
        rows: 0,
        used: false,
        elapsed_ms: elapsed.as_secs_f64() * 1000.0,
        error: None,
        attribute: candidate.attribute.clone(),
    };
    match &result {
        Ok(results) => executed.rows = row_count(results),
        Err(e) => executed.error = Some(e.to_string()),
    }
    (executed, result)
}

/// When a list's rows with provenance were cut, the answers alone (one more query).
async fn answers_only(
    ctx: &AgentContext,
    state: &mut AgentState,
    candidate: &CandidateQuery,
    reason: QueryReason,
    path: Option<&RelationPath>,
    anchors: &[String],
    class: Option<ClassFilter<'_>>,
) -> Result<Option<QueryResults>, AgentError> {
    let Some(path) = path else { return Ok(None) };
    let query = over_answer_set(
        state,
        select_in(
            &[(anchors[path.anchor].as_str(), path)],
            &Shape::List { distinct_only: true },
            class,
        )?,
    )?;
    if query.query == candidate.query {
        return Ok(None);
    }
    let (mut executed, result) = execute(ctx, state, &query, reason).await;
    // These rows become the answer.
    executed.used = result.is_ok();
    state.queries.push(executed);
    Ok(result.ok())
}

/// `query` over the question's answer set, if it has one ("which of them", "when were they …").
fn over_answer_set(state: &AgentState, query: CandidateQuery) -> Result<CandidateQuery, GraphError> {
    let Some(set) = &state.answer_set else {
        return Ok(query);
    };
    // "How many are there?" re-runs the previous question: it counts every answer, not only the
    // L values the dialogue kept.
    if set.count {
        return Ok(query);
    }
    let scope = match &set.role {
        SetRole::Filter => SetScope::Filter { members: &set.members },
        SetRole::Anchor { representative } => SetScope::Anchor {
            representative,
            members: &set.members,
        },
    };
    over_set(query, scope)
}

/// A yes/no question about whether something exists: "is there", "are there any", "does X
/// have", "has X got".
fn asks_existence(question: &str) -> bool {
    let words = normalize_tokens(question);
    let there = words
        .windows(2)
        .any(|w| matches!(w[0].as_str(), "is" | "are" | "was" | "were") && w[1] == "there");
    let have = matches!(words.first().map(String::as_str), Some("does" | "do" | "did"))
        && words.iter().any(|w| w == "have" || w == "has");
    let has = matches!(words.first().map(String::as_str), Some("has" | "have"))
        && !words.iter().any(|w| w.ends_with("ed") || w.ends_with("en"));
    there || have || has
}

/// Two names that are the same up to case, accents and punctuation.
fn same_name(a: &str, b: &str) -> bool {
    normalize_tokens(a) == normalize_tokens(b)
}

/// Whether `value` is written in `question` (as whole words, up to case and accents; a name of
/// several words also with the spaces left out: "JordanCronenweth"); a date also by its year
/// ("released in 1994" and 1994-07-06).
fn named_in(value: &str, question: &str) -> bool {
    let tokens = normalize_tokens(question);
    let question = format!(" {} ", tokens.join(" "));
    let written = |v: &str| {
        let words = normalize_tokens(v);
        let v = words.join(" ");
        !v.is_empty() && (question.contains(&format!(" {v} ")) || words.len() > 1 && tokens.contains(&words.concat()))
    };
    let year = value
        .get(..4)
        .filter(|y| y.chars().all(|c| c.is_ascii_digit()) && value.as_bytes().get(4) == Some(&b'-'));
    written(value) || year.is_some_and(written)
}

fn row_count(results: &QueryResults) -> usize {
    match results {
        QueryResults::Solutions(s) => s.rows.len(),
        QueryResults::Boolean(_) => 1,
    }
}

/// Whether a result answers the question: a true ASK, a non-zero count, or at least one row.
fn has_answer(results: &QueryResults) -> bool {
    match results {
        QueryResults::Boolean(b) => *b,
        QueryResults::Solutions(s) if s.variables.iter().any(|v| v == COUNT_VARIABLE) => {
            count_of(results).is_some_and(|n| n > 0)
        }
        QueryResults::Solutions(s) => !s.rows.is_empty(),
    }
}

/// The count, or the values of the answer variable de-duplicated in order, each with its
/// supporting triples.
fn aggregate(
    kind: QuestionKind,
    target: &str,
    used: &[(&CandidateQuery, QueryResults)],
    provenance_per_answer: usize,
) -> Answer {
    let mut answer = Answer {
        kind,
        values: Vec::new(),
        truncated: false,
    };
    match kind {
        QuestionKind::Count => {
            let count = used.iter().filter_map(|(_, r)| count_of(r)).max().unwrap_or(0);
            answer.values.push(AnswerValue::count(count));
        }
        QuestionKind::List | QuestionKind::Boolean => {
            let mut index: HashMap<String, usize> = HashMap::new();
            for (candidate, result) in used {
                let QueryResults::Solutions(solutions) = result else {
                    continue;
                };
                answer.truncated |= solutions.truncated;
                let Some(column) = solutions.variables.iter().position(|v| v == target) else {
                    continue;
                };
                for row in &solutions.rows {
                    let Some(value) = row
                        .get(column)
                        .and_then(Option::as_ref)
                        .and_then(AnswerValue::from_term)
                    else {
                        continue;
                    };
                    let at = *index.entry(value.value.clone()).or_insert_with(|| {
                        answer.values.push(value);
                        answer.values.len() - 1
                    });
                    let slot = &mut answer.values[at].provenance;
                    if slot.len() >= provenance_per_answer.saturating_mul(candidate.patterns.len()) {
                        continue;
                    }
                    let bindings = row_bindings(&solutions.variables, row);
                    for pattern in &candidate.patterns {
                        if let Some(t) = instantiate(pattern, &bindings)
                            && !slot.contains(&t)
                        {
                            slot.push(t);
                        }
                    }
                }
            }
        }
    }
    answer
}

/// One solution's bound variables by name.
fn row_bindings<'a>(variables: &'a [String], row: &'a [Option<Term>]) -> HashMap<&'a str, &'a Term> {
    variables
        .iter()
        .zip(row)
        .filter_map(|(v, t)| Some((v.as_str(), t.as_ref()?)))
        .collect()
}

/// A pattern with its variables bound, as `[s, p, o]` text; `None` if a variable is unbound.
fn instantiate(pattern: &TriplePattern, bindings: &HashMap<&str, &Term>) -> Option<[String; 3]> {
    let term = |t: &TermPattern| -> Option<String> {
        match t {
            TermPattern::NamedNode(n) => Some(n.as_str().to_owned()),
            TermPattern::Literal(l) => Some(l.value().to_owned()),
            TermPattern::Variable(v) => term_text(bindings.get(v.as_str())?),
            _ => None,
        }
    };
    // A hop of several predicates binds the one that holds.
    let predicate = match &pattern.predicate {
        NamedNodePattern::NamedNode(n) => n.as_str().to_owned(),
        NamedNodePattern::Variable(v) => match bindings.get(v.as_str())? {
            Term::NamedNode(n) => n.as_str().to_owned(),
            _ => return None,
        },
    };
    Some([term(&pattern.subject)?, predicate, term(&pattern.object)?])
}

/// Fills in the labels of IRI values.
/// Names the answer's vertices: in the question's language where the graph has labels in it
/// (`language`, detected by the chat agent), else as configured.
async fn label_values(ctx: &AgentContext, answer: &mut Answer, language: Option<&str>) -> Result<(), GraphError> {
    let iris: Vec<&str> = answer
        .values
        .iter()
        .filter(|v| v.kind == ValueKind::Iri)
        .take(MAX_LABELLED)
        .map(|v| v.value.as_str())
        .collect();
    if iris.is_empty() {
        return Ok(());
    }
    let labels = match language {
        Some(language) => ctx.kg.labels_in(&iris, language).await?,
        None => ctx.kg.labels(&iris).await?,
    };
    for value in &mut answer.values {
        if let Some(label) = labels.get(&value.value) {
            value.label = Some(label.clone());
        }
    }
    Ok(())
}

/// Every class under `class`, as the path search listed them (a fact the backend remembers), or
/// `None` when there were too many or the graph could not say in time: the answer query's class
/// filter then walks the subclass path per answer.
async fn listed_subclasses(
    ctx: &AgentContext,
    class: &str,
    types: chatty_kg_graph::TypeVocabulary<'_>,
) -> Option<Vec<String>> {
    let query = match crate::candidates::queries::listed_subclasses_query(class, types) {
        Ok(Some(query)) => query,
        Ok(None) => return Some(Vec::new()),
        Err(_) => return None,
    };
    match ctx.kg.query_fact(&query).await {
        Ok(results) => crate::candidates::queries::listed_subclasses(&results),
        Err(error) => {
            tracing::info!(%error, "the class's subclasses not listed; its filter walks the subclass path");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_joined_by_and() {
        assert!(coordinated(
            "Which awards have been given to both Ingmar Bergman and Charles LeMaire?",
            &["Charles LeMaire", "Ingmar Bergman"]
        ));
        assert!(coordinated(
            "Harry Huston and Dick Spalding played their first match for which team?",
            &["Harry Huston", "Dick Spalding"]
        ));
        assert!(!coordinated(
            "Which movies starring Tom Hanks were directed by Robert Zemeckis?",
            &["Tom Hanks", "Robert Zemeckis"]
        ));
        assert!(!coordinated(
            "What is the common affiliation of the Monroe Hospital and alma mater of Duncan Fletcher?",
            &["Monroe Hospital", "Duncan Fletcher"]
        ));
        assert!(!coordinated("Who directed Alien?", &["Alien"]));
    }

    #[test]
    fn questions_about_existence() {
        assert!(asks_existence("Is there any DOI associated with the publication X?"));
        assert!(asks_existence("Does Jiaxin Pan have a primary homepage?"));
        assert!(asks_existence("Has Tom Hanks got a homepage?"));
        assert!(!asks_existence("Is Tom Hanks an actor?"));
        assert!(!asks_existence("Did Tom Hanks star in Big?"));
        assert!(!asks_existence("Has Tom Hanks directed Big?"));
    }

    #[test]
    fn values_named_in_the_question() {
        assert!(named_in("1994", "Was Forrest Gump released in 1994?"));
        assert!(same_name("bash", "Bash") && !same_name("bash", "dash"));
        assert!(named_in("Gert Fröbe", "did gert frobe star in it"));
        assert!(!named_in("199", "Was it released in 1994?"));
        assert!(!named_in("", "anything"));
        assert!(named_in("1994-07-06", "Was it released in 1994?"));
        assert!(!named_in("1994-07-06", "Was it released in 1995?"));
        assert!(named_in("Jordan Cronenweth", "Was it shot by JordanCronenweth?"));
        assert!(!named_in("Jordan", "Was it shot by JordanCronenweth?"));
    }
}
