//! QIR agent (paper §4.2.3, chain of thought + two few-shot examples): turns the standalone
//! question into a QIR, checked by the Triples Validator and retried at most θ times with the
//! validator's complaint.
//!
//! Ground before asking (`ground_entities`, on by default): when spans of the question are
//! exactly labels of vertices ([`crate::linking::spotting`]), the QIR is built from them and the
//! question's own words without a model call; where nothing in the question is a label but it
//! writes names (quoted, or in capitals), those are its mentions and matching searches them;
//! the model is asked only of a question that writes no name (a name in lower case). A
//! follow-up whose reference the dialogue did not resolve, and that names nothing, stops
//! ([`Outcome::UnresolvedReference`]) rather than ask the model. With grounding off, entity
//! spotting is the fallback when the model's retries run out. Outcome: [`BUILT`].

use crate::ask::{ask_validated, check_reply};
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::linking::modifiers::ground_modifier;
use crate::linking::spotting::{qir_of, spot, written_names};
use crate::qir::{Qir, QirSource, QirTerm, QirTriple, QuestionKind, RawQir, TriplesValidator, entities_in_question};
use crate::state::{AgentState, AnswerSet, Outcome};
use crate::understanding::classes::{
    ClassMention, ClassRole, about_the_class_alone, class_by_meaning, ordered_by_words, spot_class,
};
use crate::understanding::form::{QuestionForm, ValueConstraint};
use serde_json::json;

pub struct QirAgent;

pub const NAME: &str = "qir";
pub const BUILT: &str = "built";

/// The shape the model must produce (a grammar on the embedded model; `response_format` remotely).
pub fn schema() -> serde_json::Value {
    let strings =
        json!({"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 120}, "maxItems": 6});
    json!({
        "type": "object",
        "properties": {
            "entities": strings,
            "unknowns": strings,
            "relations": strings,
            "triples": {
                "type": "array", "minItems": 1, "maxItems": 4,
                "items": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 120}, "minItems": 3, "maxItems": 3}
            },
            "type": {"enum": ["list", "boolean", "count"]},
            "order": {"enum": [null, "asc", "desc"]}
        },
        "required": ["entities", "unknowns", "relations", "triples", "type", "order"],
        "additionalProperties": false
    })
}

/// A model's QIR for `question`, parsed and checked by the Triples Validator (entities must
/// come from the question): the QIR, or the complaint the model gets back.
pub fn check_qir(reply: &str, question: &str) -> Result<Qir, String> {
    check_reply(reply, |raw: RawQir| {
        let qir = TriplesValidator::validate(&raw)?;
        entities_in_question(&qir, question)?;
        Ok(qir)
    })
}

#[async_trait::async_trait]
impl Agent for QirAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        let question = state.working_question().to_owned();
        let form = crate::understanding::form::form_of(ctx, &question, None).await;
        // A class of the graph the question names ("which cities", "is Lima a city") is no
        // entity, even where the class has a label like a vertex.
        state.class = named_class(ctx, &question, &form).await;
        let class = state.class.as_ref().map(|c| c.mention.clone());
        // Ground before asking: when the question names vertices by their labels, the graph
        // decides the entities and the model is not asked.
        if ctx.params.ground_entities
            && let Some(mut qir) = spot(ctx, &question, form.kind, class.as_deref()).await?
        {
            // Beside the names, a compound of a relation's name ("Which packages in the shells
            // section are *architecture-independent*?") that no name holds.
            for word in compounds_of(&question) {
                let covered = qir.entities.iter().any(|e| e.contains(word.as_str()));
                if !covered && let Some(link) = crate::linking::compounds::relation_value(ctx, &word).await {
                    qir.entities.push(link.mention.clone());
                    state.modifier_links.push(link);
                }
            }
            state.qir = Some(qir);
            return Ok(BUILT);
        }
        // No entity, but a word modifying the class that names one of its instances' values
        // ("Danish films": Denmark).
        if ctx.params.ground_entities
            && let Some(class) = state.class.as_ref().filter(|c| c.role == ClassRole::Answer)
            && let Some(link) = ground_modifier(ctx, &question, class).await?
        {
            state.qir = Some(qir_of(&question, vec![link.mention.clone()], form.kind));
            state.modifier_links = vec![link];
            return Ok(BUILT);
        }
        // Over an earlier answer ("which of them are marks?"), the words referring to it name
        // nothing to look up.
        let mut about = question.clone();
        if state.answer_set.as_ref().is_some_and(AnswerSet::restricts) {
            for reference in &state.references {
                about = about.replacen(&reference.text, " ", 1);
            }
        }
        // No entity, but a class and nothing else to look up: the question is about the class
        // ("how many countries are there"), or about its instances' attribute that the other
        // words name ("which character has the highest numeric value").
        if let Some(class) = &state.class
            && (about_the_class_alone(&about, class, &form) || ordered_by_words(&question, class, &form))
        {
            state.qir = Some(class_qir(class, form.kind));
            return Ok(BUILT);
        }
        // No entity, but an earlier answer the question restricts and orders ("which one of
        // those takes the most disk space"): its members, by their attribute.
        if form.order.is_some() && state.answer_set.as_ref().is_some_and(AnswerSet::restricts) {
            state.qir = Some(Qir {
                source: QirSource::AnswerSet,
                ..qir_of(&question, Vec::new(), form.kind)
            });
            return Ok(BUILT);
        }
        // No entity, but a value its answers have: the planner finds the attribute.
        if let Some(constraint) = form.constraint.as_ref().filter(|_| form.kind != QuestionKind::Boolean) {
            state.qir = Some(value_qir(constraint, form.kind));
            return Ok(BUILT);
        }
        // No span is a label, but the question writes names (quoted, or in capitals): they are
        // its mentions, linked by search as the model's would be, whose entities must be words
        // of the question too. The model is asked only of a question that writes none.
        if ctx.params.ground_entities {
            let names = written_names(ctx, &question, class.as_deref(), form.kind).await?;
            if !names.is_empty() {
                state.qir = Some(Qir {
                    source: QirSource::WrittenNames,
                    ..qir_of(&question, names, form.kind)
                });
                return Ok(BUILT);
            }
            // No name, but a compound of a relation's name ("are any of them
            // *architecture-independent*?"): one of that relation's values, which the graph
            // grounds before the model is asked.
            for word in compounds_of(&question) {
                if let Some(link) = crate::linking::compounds::relation_value(ctx, &word).await {
                    state.qir = Some(qir_of(&question, vec![link.mention.clone()], form.kind));
                    state.modifier_links = vec![link];
                    return Ok(BUILT);
                }
            }
            // A follow-up whose referring words the dialogue did not resolve ("it", "the
            // publication") and that names nothing: the model could only take those words for
            // the entity. The reply asks for the name instead.
            let unresolved: Vec<String> = state
                .resolution
                .iter()
                .flat_map(|r| r.references.iter())
                .filter(|r| r.chosen.is_none())
                .map(|r| r.reference.text.clone())
                .collect();
            if !unresolved.is_empty() {
                return Ok(state.stop(Outcome::UnresolvedReference {
                    expressions: unresolved,
                }));
            }
        }
        let variables = json!({"question": question});
        let budget = std::time::Duration::from_millis(ctx.params.qir_time_ms.max(1));
        let asked = tokio::time::timeout(
            budget,
            ask_validated(ctx, NAME, NAME, variables, schema(), |reply| {
                check_qir(reply, &question)
            }),
        )
        .await;
        let asked = match asked {
            Ok(asked) => asked,
            // The model is the last resort for a question whose words the graph could not
            // ground; past its time the reply says what could not be found.
            Err(_) if ctx.params.ground_entities => {
                tracing::info!(ms = ctx.params.qir_time_ms, "the QIR model ran out of time");
                return Ok(state.stop(Outcome::UnknownEntity {
                    mentions: unread_mentions(&question),
                }));
            }
            Err(_) => Err(AgentError::RetriesExhausted {
                agent: NAME,
                attempts: 0,
                feedback: format!("no reply within {} ms", ctx.params.qir_time_ms),
            }),
        };
        let qir = match asked {
            Ok(qir) => qir,
            Err(AgentError::RetriesExhausted { .. }) if ctx.params.ground_entities => {
                return Ok(state.stop(Outcome::UnknownEntity {
                    mentions: unread_mentions(&question),
                }));
            }
            Err(error @ AgentError::RetriesExhausted { .. }) if !ctx.params.ground_entities => {
                match spot(ctx, &question, form.kind, class.as_deref()).await? {
                    Some(qir) => {
                        tracing::info!(%error, "QIR from entity spotting");
                        qir
                    }
                    None => return Err(error),
                }
            }
            Err(error) => return Err(error),
        };
        state.qir = Some(qir);
        Ok(BUILT)
    }
}

/// The class the question names, from the graph's schema profile; none when the profile cannot
/// be had (the question is answered without it, as on a graph with no classes).
async fn named_class(ctx: &AgentContext, question: &str, form: &QuestionForm) -> Option<ClassMention> {
    let profile = match ctx.kg.profile().await {
        Ok(profile) => profile,
        Err(error) => {
            tracing::warn!(%error, "no schema profile: classes in the question are not recognised");
            return None;
        }
    };
    if let Some(class) = spot_class(question, form, &profile.classes) {
        return Some(class);
    }
    // No class's name is written where a kind is asked: one its meaning names ("movies": Film).
    match class_by_meaning(ctx, question, form, &profile.classes).await {
        Ok(class) => class,
        Err(error) => {
            tracing::warn!(%error, "classes not compared by meaning");
            None
        }
    }
}

/// The QIR of a question about a value alone: no entity, the value's words as the relation phrase.
fn value_qir(constraint: &ValueConstraint, kind: QuestionKind) -> Qir {
    Qir {
        entities: Vec::new(),
        unknowns: vec!["answer".to_owned()],
        relations: vec![constraint.attribute_words.join(" ")],
        triples: vec![QirTriple {
            subject: QirTerm::Variable("answer".to_owned()),
            relation: constraint.attribute_words.join(" "),
            object: QirTerm::Variable("value".to_owned()),
        }],
        kind,
        order: None,
        source: QirSource::Value,
    }
}

/// The question's words written with a hyphen, as written ("architecture-independent").
fn compounds_of(question: &str) -> Vec<String> {
    question
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.contains('-'))
        .map(str::to_owned)
        .collect()
}

/// What the reply says could not be found in a question the graph could not ground: its names
/// (runs of capitalised words after the first word), else its content words.
pub fn unread_mentions(question: &str) -> Vec<String> {
    let placed: Vec<(&str, bool)> = question
        .split_whitespace()
        .map(|raw| {
            let at = raw.as_ptr() as usize - question.as_ptr() as usize;
            let initial = crate::words::starts_a_sentence(question, at);
            (raw.trim_matches(|c: char| !c.is_alphanumeric()), initial)
        })
        .filter(|(w, _)| !w.is_empty())
        .collect();
    let words: Vec<&str> = placed.iter().map(|(w, _)| *w).collect();
    let mut names: Vec<String> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let capital = i > 0 && !placed[i].1 && word.chars().next().is_some_and(char::is_uppercase);
        if capital {
            run.push(word);
        } else if !run.is_empty() {
            names.push(run.join(" "));
            run.clear();
        }
    }
    if !run.is_empty() {
        names.push(run.join(" "));
    }
    if names.is_empty() {
        let content: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| {
                let w = w.to_lowercase();
                // "Are any of *them* architecture-independent?": a pronoun names nothing.
                !crate::words::is_function_word(&w) && !crate::words::NOT_RELATIONS.contains(&w.as_str())
            })
            .collect();
        if !content.is_empty() {
            names.push(content.join(" "));
        }
    }
    names
}

/// The QIR of a question about a class alone: no entity, the class as the relation phrase.
fn class_qir(class: &ClassMention, kind: QuestionKind) -> Qir {
    Qir {
        entities: Vec::new(),
        unknowns: vec!["answer".to_owned()],
        relations: vec![class.label.clone()],
        triples: vec![QirTriple {
            subject: QirTerm::Variable("answer".to_owned()),
            relation: "type".to_owned(),
            object: QirTerm::Variable("class".to_owned()),
        }],
        kind,
        order: None,
        source: QirSource::Class,
    }
}

#[cfg(test)]
mod tests {
    use super::unread_mentions;

    #[test]
    fn what_could_not_be_read_is_named_without_its_pronouns() {
        assert_eq!(
            unread_mentions("Are any of them architecture-independent?"),
            ["architecture-independent"]
        );
        assert_eq!(
            unread_mentions("Who founded Zorblax Industries?"),
            ["Zorblax Industries"]
        );
    }
}
