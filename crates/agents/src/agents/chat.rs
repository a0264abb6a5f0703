//! Chat agent (paper §3, Algorithm 1): the first and the last node of every question.
//!
//! On the way in it builds the context Cq (the last `context_turns` turns, each answer cut to L
//! values) and, when translation is on, translates a non-English question to English (paper
//! Table 6). On the way out it writes what the user is told: the answer values, optionally stated
//! in a sentence by the model, or why there is no answer. A verbalized sentence that mentions none
//! of the answer values is thrown away in favour of the plain values: the model may phrase the
//! answer, never replace it.
//!
//! In a dialogue whose previous turn asked which vertex a mention means, a question that chooses
//! one ("the second", "the 1996 one") resumes the waiting question with that vertex instead.
//!
//! It is two nodes of the graph: [`ChatAgent::Context`] (`chat`, outcome [`READY`], or
//! [`RESUMED`]) and [`ChatAgent::Reply`] (`reply`, outcome [`REPLIED`]).

use crate::ask::{ask_validated, check_reply};
use crate::context::AgentContext;
use crate::dialogue::clarification::Clarified;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::qir::QuestionKind;
use crate::state::{AgentState, Outcome};
use chatty_kg_graph::text::normalize_tokens;
use chatty_kg_llm::ChatRequest;
use serde::Deserialize;
use serde_json::json;

/// The chat agent's two nodes.
pub enum ChatAgent {
    /// The way in: context Cq and translation.
    Context,
    /// The way out: what the user is told.
    Reply,
}

pub const NAME: &str = "chat";
/// The node that writes the reply.
pub const REPLY: &str = "reply";
/// The question is ready for the classifier.
pub const READY: &str = "ready";
/// The reply is written.
pub const REPLIED: &str = "replied";
/// The question answers the previous turn's clarifying question: the waiting question goes on
/// with the chosen vertex (to the QIR agent; the dialogue was already resolved for it).
pub const RESUMED: &str = "resumed";

/// Answer values named in a reply before "and N more".
const SHOWN_VALUES: usize = 10;

/// The verbalized sentence is short.
const VERBALIZE_MAX_TOKENS: u32 = 96;

/// The model's reading of the question: its language and an English version.
#[derive(Debug, Deserialize)]
pub struct Translation {
    pub language: String,
    pub english: String,
}

/// A model's translation reply, parsed and checked (an English question with at least three
/// letters or digits).
pub fn check_translation(reply: &str) -> Result<Translation, String> {
    check_reply(reply, |t: Translation| {
        if t.english.trim().chars().filter(|c| c.is_alphanumeric()).count() < 3 {
            Err("the English question is empty".to_owned())
        } else {
            Ok(t)
        }
    })
}

#[async_trait::async_trait]
impl Agent for ChatAgent {
    fn name(&self) -> &'static str {
        match self {
            ChatAgent::Context => NAME,
            ChatAgent::Reply => REPLY,
        }
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        match self {
            ChatAgent::Context => {
                if resume(state) {
                    return Ok(RESUMED);
                }
                start(state, ctx).await?;
                Ok(READY)
            }
            ChatAgent::Reply => {
                state.reply = Some(reply(state, ctx).await);
                Ok(REPLIED)
            }
        }
    }
}

/// The question chooses an option of the previous turn's clarifying question: the waiting
/// question becomes the working question, with the chosen vertex pinned for its mention.
fn resume(state: &mut AgentState) -> bool {
    if state.mode != crate::state::Mode::MultiTurn {
        return false;
    }
    let Some(clarification) = state.history.last().and_then(|t| t.clarification.as_ref()) else {
        return false;
    };
    let Some(i) = clarification.choice(&state.question) else {
        return false;
    };
    let option = &clarification.options[i];
    state.clarified = Some(Clarified {
        mention: clarification.mention.clone(),
        iri: option.iri.clone(),
        label: option.label.clone(),
        option: i,
    });
    state.resolved_question = Some(clarification.question.clone());
    true
}

/// Cq and translation.
async fn start(state: &mut AgentState, ctx: &AgentContext) -> Result<(), AgentError> {
    let keep = ctx.params.context_turns;
    if state.history.len() > keep {
        state.history.drain(..state.history.len() - keep);
    }
    for turn in &mut state.history {
        turn.answers.truncate(ctx.params.context_answers);
    }
    if ctx.params.translate {
        let schema = json!({
            "type": "object",
            "properties": {
                "language": {"type": "string", "minLength": 2, "maxLength": 8},
                "english": {"type": "string", "minLength": 3, "maxLength": 400}
            },
            "required": ["language", "english"], "additionalProperties": false
        });
        let variables = json!({"question": state.question});
        let translation = ask_validated(ctx, NAME, "chat_translate", variables, schema, check_translation).await?;
        let language = translation.language.trim().to_lowercase();
        if language != "en" && translation.english.trim() != state.question.trim() {
            state.translated_question = Some(translation.english.trim().to_owned());
        }
        state.language = Some(language);
    } else {
        state.language = question_language(ctx, &state.question).await;
    }
    Ok(())
}

/// The language a question is written in, when it is not the configured one, the detector is
/// sure of it (whatlang) and the graph has labels in it (its schema profile's name predicates):
/// its answers are then named in it. No model call.
async fn question_language(ctx: &AgentContext, question: &str) -> Option<String> {
    let info = whatlang::detect(question).filter(whatlang::Info::is_reliable)?;
    let code = crate::understanding::language::iso_639_1(info.lang())?;
    if code.eq_ignore_ascii_case(&ctx.kg.settings().language) {
        return None;
    }
    let profile = ctx.kg.profile().await.ok()?;
    profile
        .conventions
        .name_predicates
        .iter()
        .any(|n| {
            n.languages
                .keys()
                .any(|tag| tag.split('-').next().is_some_and(|t| t.eq_ignore_ascii_case(code)))
        })
        .then(|| code.to_owned())
}

/// What the user is told.
async fn reply(state: &AgentState, ctx: &AgentContext) -> String {
    let linked = || {
        state
            .entities
            .iter()
            .filter_map(|l| l.label.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let reply = match &state.outcome {
        Some(Outcome::Answered) => {
            let Some(answer) = &state.answer else {
                return "The knowledge graph has no answer to that question.".into();
            };
            let plain = answer.summary(SHOWN_VALUES);
            if !ctx.params.verbalize {
                return plain;
            }
            match verbalize(state, ctx).await {
                Some(sentence) => sentence,
                None => plain,
            }
        }
        Some(Outcome::UnknownEntity { mentions }) if mentions.is_empty() => {
            "I could not find anything this question names in the knowledge graph, so I cannot answer from it.".into()
        }
        Some(Outcome::UnknownEntity { mentions }) => format!(
            "I could not find {} in the knowledge graph, so I cannot answer from it.",
            quoted_alternatives(mentions)
        ),
        Some(Outcome::UnresolvedReference { expressions }) => format!(
            "I could not tell what {} refers to: nothing earlier in our conversation that I found in the knowledge graph fits. Please ask again with its name.",
            quoted_alternatives(expressions)
        ),
        Some(Outcome::NoQuery) => format!(
            "I found {} in the knowledge graph, but none of its relations fits the question.{}",
            linked(),
            relations_to_ask(state)
        ),
        Some(Outcome::Clarify { clarification }) => clarification.text(),
        Some(Outcome::NoAnswer) | None => {
            let entities = linked();
            if entities.is_empty() {
                "The knowledge graph has no answer to that question.".into()
            } else {
                format!("The knowledge graph has no answer to that question (I looked at {entities}).")
            }
        }
    };
    match (&state.outcome, guessed_referent(state)) {
        (Some(Outcome::NoQuery | Outcome::NoAnswer), Some(guess)) => format!("{reply} {guess}"),
        _ => reply,
    }
}

/// Relations shown to someone whose words no relation fitted.
const SHOWN_RELATIONS: usize = 6;

/// What the graph does hold about the one vertex a question found but could not answer, as
/// questions could name it: " You could ask about its release year, or what is introduced in
/// Unicode 15.0." (its one-hop relations the search found, the most used first as it found them).
fn relations_to_ask(state: &AgentState) -> String {
    let [anchor] = state.anchors.as_slice() else {
        return String::new();
    };
    let mut said: Vec<String> = Vec::new();
    for path in state.path_pool.iter().filter(|p| p.anchor == 0) {
        let [hop] = path.hops.as_slice() else {
            continue;
        };
        // A name that starts or ends in a preposition: "what it is introduced in", "what it is in
        // block", backwards "what is introduced in X"; else "its glyph", "what has X as maintainer".
        let preposition = |w: &str| {
            crate::words::RELATION_PREPOSITIONS.contains(&w) || crate::words::ELLIPSIS_PREPOSITIONS.contains(&w)
        };
        let words: Vec<&str> = hop.label.split(' ').collect();
        let prepositional =
            words.first().is_some_and(|w| preposition(w)) || words.last().is_some_and(|w| preposition(w));
        let phrase = if hop.forward && prepositional {
            format!("what it is {}", hop.label)
        } else if hop.forward {
            format!("its {}", hop.label)
        } else if prepositional {
            format!("what is {} {}", hop.label, anchor.label)
        } else {
            format!("what has {} as {}", anchor.label, hop.label)
        };
        if !said.contains(&phrase) {
            said.push(phrase);
        }
        if said.len() == SHOWN_RELATIONS {
            break;
        }
    }
    match said.as_slice() {
        [] => String::new(),
        [one] => format!(" You could ask about {one}."),
        [rest @ .., last] => format!(" You could ask about {}, or {last}.", rest.join(", ")),
    }
}

/// A follow-up that found nothing, whose referring words nothing in the dialogue fitted by kind
/// (the referent was taken by shape alone) or that several fitted: what it was read as and what
/// else the dialogue offered, so the user can name the one meant.
fn guessed_referent(state: &AgentState) -> Option<String> {
    let resolution = state.resolution.as_ref()?;
    let r = resolution.references.iter().find(|r| {
        r.chosen.is_some()
            && (r.method == crate::state::ResolutionMethod::Relaxed
                || r.method == crate::state::ResolutionMethod::Model)
    })?;
    let chosen = r.chosen.as_ref()?;
    let others: Vec<String> = r
        .fitting
        .iter()
        .filter(|c| c.label != chosen.label)
        .map(|c| c.label.clone())
        .collect();
    let mut text = format!("I took \u{201c}{}\u{201d} for {}", r.reference.text, chosen.label);
    if others.is_empty() {
        text.push_str("; if you meant something else, please ask again with its name.");
    } else {
        text.push_str(&format!(
            "; if you meant {}, please ask again with its name.",
            quoted_alternatives(&others)
        ));
    }
    Some(text)
}

/// The answer in one sentence, or `None` if the model fails or the sentence loses the answer.
async fn verbalize(state: &AgentState, ctx: &AgentContext) -> Option<String> {
    let answer = state.answer.as_ref()?;
    let values = answer.display_values(SHOWN_VALUES * 2);
    let kind = match answer.kind {
        QuestionKind::List => "list",
        QuestionKind::Boolean => "boolean",
        QuestionKind::Count => "count",
    };
    let variables = json!({"question": state.english_question(), "answers": values, "kind": kind});
    let messages = ctx.prompts.render("chat_verbalize", &variables).ok()?;
    let request = ChatRequest::new(NAME, messages).with_max_tokens(VERBALIZE_MAX_TOKENS);
    let sentence = match ctx.llm.complete(&request).await {
        Ok(response) => response.text.trim().to_owned(),
        Err(error) => {
            tracing::warn!(%error, "verbalization failed; replying with the values");
            return None;
        }
    };
    keeps_the_answer(&sentence, &values, answer.kind).then_some(sentence)
}

/// The sentence names an answer value (a yes/no for booleans).
fn keeps_the_answer(sentence: &str, values: &[String], kind: QuestionKind) -> bool {
    let words = normalize_tokens(sentence);
    if kind == QuestionKind::Boolean {
        let has = |w: &str| words.iter().any(|x| x == w);
        return if values.first().is_some_and(|v| v == "true") {
            has("yes") && !has("no") && !has("not")
        } else {
            has("no") || has("not")
        };
    }
    let sentence = words.join(" ");
    !sentence.is_empty()
        && values.iter().any(|v| {
            let v = normalize_tokens(v).join(" ");
            !v.is_empty() && format!(" {sentence} ").contains(&format!(" {v} "))
        })
}

/// Texts quoted and joined by "or" (`"X" or "Y"`), as the replies name what they could not read.
fn quoted_alternatives(texts: &[String]) -> String {
    texts
        .iter()
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialogue::referents::{Candidate, Reference, ReferenceKind, Role};
    use crate::state::{Mode, Resolution, ResolutionMethod, ResolvedReference};

    fn candidate(label: &str) -> Candidate {
        Candidate {
            turns_ago: 1,
            role: Role::Entity,
            label: label.into(),
            members: Vec::new(),
            total: 1,
            mention: Some(label.into()),
            kinds: Vec::new(),
            person: None,
            place: None,
        }
    }

    fn resolved(method: ResolutionMethod, fitting: &[&str]) -> AgentState {
        let mut state = AgentState::new("Where was she born?", Mode::MultiTurn, Vec::new());
        let fitting: Vec<Candidate> = fitting.iter().map(|l| candidate(l)).collect();
        state.resolution = Some(Resolution {
            references: vec![ResolvedReference {
                reference: Reference {
                    kind: ReferenceKind::Person,
                    text: "she".into(),
                    start: 10,
                    end: 13,
                    possessive: false,
                    noun: None,
                    position: None,
                },
                chosen: fitting.first().cloned(),
                fitting,
                offered: 2,
                method,
            }],
        });
        state
    }

    #[test]
    fn a_referent_taken_by_shape_or_by_the_model_is_named_when_nothing_is_found() {
        let guess = guessed_referent(&resolved(ResolutionMethod::Relaxed, &["The Scream"])).unwrap();
        assert_eq!(
            guess,
            "I took \u{201c}she\u{201d} for The Scream; if you meant something else, please ask again with its name."
        );
        let guess = guessed_referent(&resolved(ResolutionMethod::Model, &["Oslo", "Norway"])).unwrap();
        assert!(guess.contains("for Oslo; if you meant \"Norway\""), "{guess}");
        // One referent that fitted by kind is no guess.
        assert_eq!(guessed_referent(&resolved(ResolutionMethod::Only, &["Oslo"])), None);
    }

    #[test]
    fn a_sentence_must_keep_an_answer_value() {
        let values = vec!["Robert Zemeckis".to_owned()];
        assert!(keeps_the_answer(
            "Forrest Gump was directed by Robert Zemeckis.",
            &values,
            QuestionKind::List
        ));
        assert!(!keeps_the_answer(
            "Forrest Gump was directed by Steven Spielberg.",
            &values,
            QuestionKind::List
        ));
        assert!(!keeps_the_answer("", &values, QuestionKind::List));
        assert!(!keeps_the_answer(
            "It has 12 films.",
            &["1".into()],
            QuestionKind::Count
        ));
        assert!(keeps_the_answer(
            "Yes, he did.",
            &["true".into()],
            QuestionKind::Boolean
        ));
        assert!(!keeps_the_answer(
            "No, he did not.",
            &["true".into()],
            QuestionKind::Boolean
        ));
        assert!(keeps_the_answer(
            "No, he did not.",
            &["false".into()],
            QuestionKind::Boolean
        ));
    }

    #[test]
    fn a_vertex_no_relation_fitted_is_told_with_what_it_holds() {
        use crate::candidates::paths::{Anchor, EndKind, Hop, RelationPath};
        let hop = |label: &str, forward: bool| Hop {
            predicate: format!("http://example.org/{label}"),
            label: label.into(),
            forward,
            also: Vec::new(),
        };
        let path = |hops: Vec<Hop>| RelationPath {
            anchor: 0,
            hops,
            end: EndKind::Entity,
            reached: 1,
            endpoints: Vec::new(),
        };
        let mut state = AgentState::new("what did Unicode 15.0 add?", Mode::SingleTurn, Vec::new());
        assert_eq!(relations_to_ask(&state), "", "no anchor: nothing to name");
        state.anchors = vec![Anchor {
            mention: "Unicode 15.0".into(),
            iri: "http://example.org/v15".into(),
            label: "Unicode 15.0".into(),
            modifies_class: false,
        }];
        state.path_pool = vec![
            path(vec![hop("introduced in", false)]),
            path(vec![hop("release year", true)]),
            path(vec![hop("introduced in", false), hop("in block", true)]),
            path(vec![hop("maintainer", false)]),
            path(vec![hop("in block", true)]),
        ];
        assert_eq!(
            relations_to_ask(&state),
            " You could ask about what is introduced in Unicode 15.0, its release year, what has Unicode 15.0 \
             as maintainer, or what it is in block."
        );
    }
}
