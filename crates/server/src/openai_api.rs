//! An OpenAI-compatible chat endpoint, so that any chat front-end or OpenAI SDK can talk to a
//! knowledge graph as if it were a model:
//!
//! | method and path              | what                                                      |
//! |------------------------------|-----------------------------------------------------------|
//! | `GET /v1/models`             | the configured knowledge graphs, one "model" each         |
//! | `POST /v1/chat/completions`  | `messages` → the answer as the assistant's message        |
//!
//! The `model` names the knowledge graph (`chatty-kg`, or none, is the default KG; a name that
//! is no configured KG is the error `unknown_kg`). The `messages` are the dialogue: each earlier user message with the assistant
//! message after it is a previous turn (what the rephraser resolves pronouns against), and the
//! last message, a user's, is the question; system messages are ignored. Nothing is stored: the
//! client keeps the history, as with any chat model. Unless the request carries the header
//! `X-Chatty-KG-Session`: with a session id (or `new`, which opens one on the model's KG, its id
//! in the response header), the question is asked in that stored session like a REST question
//! (its turns are the history, the answer is recorded, a clarifying question can be answered by
//! number next time), and `chatty_kg` carries `session` and `turn`. The reply's `content` is the answer text,
//! `usage` the tokens the agents' model spent, and `chatty_kg.explanation` the whole explanation.
//!
//! With `"stream": true` the answer comes as server-sent `chat.completion.chunk`s: the role
//! first, then one chunk per stage the agents finish (an empty `delta`, the stage under
//! `chatty_kg.stage`), then the content, then `finish_reason: "stop"` with `usage` and the
//! explanation, then `data: [DONE]`. Errors are the REST API's (`{"error": {"kind",
//! "message"}}`, same statuses); one after the stream started is a last chunk with `error`.

use crate::error::ServerError;
use crate::protocol::ServerMessage;
use crate::service::{Caller, ChatService};
use crate::sse::{Progress, progress};
use actix_web::HttpResponse;
use actix_web::web::{self, Bytes};
use chatty_kg_agents::Turn;
use futures_util::StreamExt;
use futures_util::stream::{self, Stream};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::mpsc;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/models", web::get().to(models))
        .route("/v1/chat/completions", web::post().to(chat_completions));
}

/// The model name that means "the default knowledge graph".
pub const DEFAULT_MODEL: &str = "chatty-kg";

async fn models(_: Caller, service: web::Data<ChatService>) -> HttpResponse {
    let mut data: Vec<Value> = vec![model(DEFAULT_MODEL)];
    data.extend(service.kgs().map(|kg| model(&kg.name)));
    HttpResponse::Ok().json(json!({"object": "list", "data": data}))
}

fn model(id: &str) -> Value {
    json!({"id": id, "object": "model", "created": 0, "owned_by": "chatty-kg"})
}

#[derive(Debug, Deserialize)]
struct ChatRequest {
    #[serde(default)]
    model: Option<String>,
    messages: Vec<Message>,
    #[serde(default)]
    stream: bool,
}

#[derive(Debug, Deserialize)]
struct Message {
    role: String,
    #[serde(default)]
    content: Option<Content>,
}

/// A message's content: text, or parts of which the text ones count.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

impl Message {
    fn text(&self) -> String {
        match &self.content {
            Some(Content::Text(text)) => text.clone(),
            Some(Content::Parts(parts)) => parts
                .iter()
                .filter(|p| p.kind == "text")
                .filter_map(|p| p.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n"),
            None => String::new(),
        }
    }
}

/// The question (the last message, a user's) and the turns before it.
fn dialogue(messages: &[Message]) -> Result<(String, Vec<Turn>), ServerError> {
    let spoken: Vec<&Message> = messages
        .iter()
        .filter(|m| m.role != "system" && m.role != "developer")
        .collect();
    let Some((last, earlier)) = spoken.split_last() else {
        return Err(ServerError::Malformed(
            "`messages` has no user message to answer".into(),
        ));
    };
    if last.role != "user" {
        return Err(ServerError::Malformed(format!(
            "the last message must be the user's question, not a {:?} message",
            last.role
        )));
    }
    let mut turns = Vec::new();
    let mut pending: Option<String> = None;
    for message in earlier {
        match message.role.as_str() {
            "user" => {
                if let Some(question) = pending.replace(message.text()) {
                    turns.push(Turn::text(question, Vec::new()));
                }
            }
            "assistant" => {
                if let Some(question) = pending.take() {
                    turns.push(Turn::text(question, answer_lines(&message.text())));
                }
            }
            _ => {}
        }
    }
    if let Some(question) = pending {
        turns.push(Turn::text(question, Vec::new()));
    }
    Ok((last.text(), turns))
}

/// An assistant message as the answers of its turn: one per line; a line in this server's own
/// list form ("A, B and 3 more (5 answers)") gives its named values.
fn answer_lines(text: &str) -> Vec<String> {
    let mut answers = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match listed(line) {
            Some(values) => answers.extend(values),
            None => answers.push(line.to_owned()),
        }
    }
    answers
}

/// The values of a line in the list form of `Answer::summary`, if it is one.
fn listed(line: &str) -> Option<Vec<String>> {
    let (list, count) = line.strip_suffix(" answers)")?.rsplit_once(" (")?;
    count.parse::<usize>().ok()?;
    let list = match list.rsplit_once(" and ") {
        Some((named, rest)) if rest.ends_with(" more") && rest.split(' ').next()?.parse::<usize>().is_ok() => named,
        _ => list,
    };
    Some(
        list.split(", ")
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

/// The knowledge graph the `model` names: `None` (the default) for no name or [`DEFAULT_MODEL`].
fn kg_of(model: Option<&str>) -> Option<&str> {
    model.filter(|m| !m.is_empty() && *m != DEFAULT_MODEL)
}

/// The header that ties a completion to a stored session (`new` opens one).
pub const SESSION_HEADER: &str = "X-Chatty-KG-Session";

/// An answered completion: the KG that answered, the explanation, and the stored turn when the
/// request was tied to a session.
struct Reply {
    model: String,
    explanation: Value,
    turn: Option<(String, u32)>,
}

impl Reply {
    fn text(&self) -> &str {
        self.explanation["text"].as_str().unwrap_or_default()
    }

    /// What rides beside the OpenAI fields: the session and turn, when there is one.
    fn session(&self) -> Value {
        match &self.turn {
            Some((session, turn)) => json!({"session": session, "turn": turn}),
            None => json!({}),
        }
    }
}

/// How a request is answered: statelessly with the messages as the history, or in a session
/// (the header), whose stored turns are the history and which records the answer.
enum Mode {
    Stateless { kg: Option<String>, history: Vec<Turn> },
    Session { info: chatty_kg_dialogue::SessionInfo },
}

async fn chat_completions(
    request: actix_web::HttpRequest,
    caller: Caller,
    service: web::Data<ChatService>,
    body: web::Json<ChatRequest>,
) -> Result<HttpResponse, ServerError> {
    let service: Arc<ChatService> = service.into_inner();
    let body = body.into_inner();
    let (question, mut history) = dialogue(&body.messages)?;
    service.check_question(&question)?;
    // A stream is counted under the connection caps while it is open (`connections.rs`).
    let slot = if body.stream {
        Some(service.open_connection(&caller)?)
    } else {
        None
    };
    let kg = kg_of(body.model.as_deref()).map(str::to_owned);
    let header = request
        .headers()
        .get(SESSION_HEADER)
        .map(|v| v.to_str().map(str::trim).unwrap_or_default().to_owned());
    let mode = match header {
        None => {
            let keep = service.context_turns();
            if history.len() > keep {
                history.drain(..history.len() - keep);
            }
            // Grounded once the question is admitted (its rate, a permit): see `ask_once`.
            Mode::Stateless {
                kg: kg.clone(),
                history,
            }
        }
        // The session keeps the dialogue itself: earlier messages are not needed (nor read).
        Some(value) if value.eq_ignore_ascii_case("new") => Mode::Session {
            info: service.create_session(&caller, kg.as_deref()).await?,
        },
        Some(id) => {
            let info = service.session(&caller, &id).await?;
            if let Some(kg) = &kg
                && *kg != info.kg
            {
                return Err(ServerError::Malformed(format!(
                    "session {id} is on knowledge graph {:?}, not {kg:?} (use its model, or {DEFAULT_MODEL:?})",
                    info.kg
                )));
            }
            Mode::Session { info }
        }
    };
    let session_id = match &mode {
        Mode::Session { info } => Some(info.id.to_string()),
        Mode::Stateless { .. } => None,
    };
    let id = completion_id();
    let (sender, receiver) = mpsc::unbounded_channel();
    let events = body.stream.then_some(sender);
    let answer: Answering = Box::pin(async move {
        match mode {
            Mode::Stateless { kg, history } => {
                let (model, explanation) = service
                    .ask_once(&caller, kg.as_deref(), &question, history, events, true)
                    .await?;
                let explanation = serde_json::to_value(&explanation)
                    .map_err(|e| ServerError::Internal(format!("explanation: {e}")))?;
                Ok(Reply {
                    model,
                    explanation,
                    turn: None,
                })
            }
            Mode::Session { info } => {
                let id = info.id.to_string();
                let record = service.ask(&caller, &id, &question, events).await?;
                Ok(Reply {
                    model: info.kg,
                    explanation: record.explanation,
                    turn: Some((id, record.index)),
                })
            }
        }
    });
    let mut response = HttpResponse::Ok();
    if let Some(session) = &session_id {
        response.insert_header((SESSION_HEADER, session.as_str()));
    }
    if !body.stream {
        let reply = answer.await?;
        return Ok(response.json(json!({
            "id": id,
            "object": "chat.completion",
            "created": now(),
            "model": reply.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": reply.text()},
                "finish_reason": "stop",
            }],
            "usage": usage(&reply.explanation),
            "chatty_kg": merged(reply.session(), "explanation", reply.explanation.clone()),
        })));
    }
    let model = kg.unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    Ok(response
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(crate::connections::holding(chunks(id, model, receiver, answer), slot)))
}

/// `object` with `key: value` added.
fn merged(mut object: Value, key: &str, value: Value) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.insert(key.to_owned(), value);
    }
    object
}

type Answering = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Reply, ServerError>> + Send>>;

/// The streamed completion: role, stages, content, stop (or error), `[DONE]`. Dropping the
/// stream drops the answer, as a client leaving a REST question does.
fn chunks(
    id: String,
    model: String,
    receiver: mpsc::UnboundedReceiver<ServerMessage>,
    answer: Answering,
) -> impl Stream<Item = Result<Bytes, actix_web::Error>> {
    let created = now();
    let chunk = move |delta: Value, finish: Option<&str>, extra: Option<(&str, Value)>| {
        let mut value = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if let (Some((key, extra)), Some(object)) = (extra, value.as_object_mut()) {
            object.insert(key.to_owned(), extra);
        }
        Bytes::from(format!("data: {value}\n\n"))
    };
    let role = chunk(json!({"role": "assistant", "content": ""}), None, None);
    let rest = progress(receiver, answer).flat_map(move |p| {
        let out: Vec<Bytes> = match p {
            Progress::Stage(ServerMessage::Stage {
                stage,
                agent,
                elapsed_ms,
                data,
            }) => {
                let stage = json!({"stage": stage, "agent": agent, "elapsed_ms": elapsed_ms, "data": data});
                vec![chunk(json!({}), None, Some(("chatty_kg", json!({"stage": stage}))))]
            }
            Progress::Stage(_) => Vec::new(),
            Progress::Done(Ok(reply)) => vec![
                chunk(json!({"content": reply.text()}), None, None),
                chunk(json!({}), Some("stop"), Some(("usage", usage(&reply.explanation)))),
                chunk(
                    json!({}),
                    None,
                    Some(("chatty_kg", merged(reply.session(), "explanation", reply.explanation))),
                ),
                Bytes::from_static(b"data: [DONE]\n\n"),
            ],
            Progress::Done(Err(error)) => vec![
                Bytes::from(format!(
                    "data: {}\n\n",
                    json!({"error": {"kind": error.kind(), "message": error.to_string()}})
                )),
                Bytes::from_static(b"data: [DONE]\n\n"),
            ],
        };
        stream::iter(out.into_iter().map(Ok))
    });
    stream::once(async move { Ok(role) }).chain(rest)
}

/// The agents' model tokens of an explanation (as JSON) in OpenAI's `usage` form.
fn usage(explanation: &Value) -> Value {
    let tokens = |key: &str| explanation["llm"][key].as_u64().unwrap_or(0);
    let (prompt, completion) = (tokens("input_tokens"), tokens("output_tokens"));
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn completion_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("chatcmpl-{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(role: &str, text: &str) -> Message {
        Message {
            role: role.into(),
            content: Some(Content::Text(text.into())),
        }
    }

    #[test]
    fn messages_become_the_question_and_earlier_turns() {
        let (question, turns) = dialogue(&[
            message("system", "You are helpful."),
            message("user", "Who directed Forrest Gump?"),
            message("assistant", "Robert Zemeckis"),
            message("user", "What else did he direct?"),
        ])
        .unwrap();
        assert_eq!(question, "What else did he direct?");
        assert_eq!(
            turns,
            [Turn::text("Who directed Forrest Gump?", vec!["Robert Zemeckis".into()])]
        );
        for bad in [
            vec![],
            vec![message("system", "hi")],
            vec![
                message("user", "Who directed Forrest Gump?"),
                message("assistant", "Robert Zemeckis"),
            ],
        ] {
            assert!(matches!(dialogue(&bad), Err(ServerError::Malformed(_))));
        }
        let parts = Message {
            role: "user".into(),
            content: Some(Content::Parts(vec![
                Part {
                    kind: "text".into(),
                    text: Some("Who directed".into()),
                },
                Part {
                    kind: "image_url".into(),
                    text: None,
                },
                Part {
                    kind: "text".into(),
                    text: Some("Big?".into()),
                },
            ])),
        };
        assert_eq!(parts.text(), "Who directed\nBig?");
    }

    #[test]
    fn an_assistant_message_gives_back_its_answer_values() {
        assert_eq!(answer_lines("Robert Zemeckis"), ["Robert Zemeckis"]);
        assert_eq!(answer_lines("Big\n1988\n"), ["Big", "1988"]);
        assert_eq!(
            answer_lines("Cast Away, Forrest Gump (2 answers)"),
            ["Cast Away", "Forrest Gump"]
        );
        assert_eq!(answer_lines("A, B and 3 more (5 answers)"), ["A", "B"]);
        // Not the list form: kept whole.
        assert_eq!(answer_lines("Crosby, Stills & Nash"), ["Crosby, Stills & Nash"]);
    }
}
