//! Server-sent events for the REST API: `POST /api/sessions/{id}/ask` with
//! `Accept: text/event-stream` streams the same messages the WebSocket sends, one event each:
//!
//! ```text
//! event: stage
//! data: {"type":"stage","stage":"entities_linked","agent":"matching","elapsed_ms":12.3,"data":{…}}
//!
//! event: answer
//! data: {"type":"answer","session":"…","turn":0,"explanation":{…}}
//! ```
//!
//! A question that fails ends with `event: error` (`{"type":"error","kind","message"}`, the REST
//! API's kinds). Errors known before the first event (no such session, an empty or too long
//! question) are plain JSON responses with their status, as without the header. A client that
//! disconnects abandons the question as a REST client does: dropped if it had not started, else
//! answered and recorded.

use crate::error::ServerError;
use crate::protocol::ServerMessage;
use crate::service::{Caller, ChatService};
use actix_web::HttpResponse;
use actix_web::web::Bytes;
use futures_util::stream::{self, Stream};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Whether the request asks for an event stream.
pub fn wants_events(request: &actix_web::HttpRequest) -> bool {
    request
        .headers()
        .get(actix_web::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.split(',').any(|t| t.trim().starts_with("text/event-stream")))
}

/// One event in the wire format.
fn event(message: &ServerMessage) -> Bytes {
    let name = match message {
        ServerMessage::Stage { .. } => "stage",
        ServerMessage::Answer { .. } => "answer",
        ServerMessage::Error { .. } => "error",
        ServerMessage::Session { .. } => "session",
    };
    let data = serde_json::to_string(message)
        .unwrap_or_else(|e| format!(r#"{{"type":"error","kind":"internal","message":"{e}"}}"#));
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// The answer to `question` in session `id` as an event stream.
pub async fn ask(
    caller: Caller,
    service: Arc<ChatService>,
    id: String,
    question: String,
) -> Result<HttpResponse, ServerError> {
    service.session(&caller, &id)?;
    service.check_question(&question)?;
    let (sender, receiver) = mpsc::unbounded_channel();
    let answer = Box::pin(async move {
        let result = service.ask(&caller, &id, &question, Some(sender)).await;
        match result {
            Ok(record) => ServerMessage::answer(&id, record),
            Err(error) => ServerMessage::error(&error),
        }
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(events(receiver, answer)))
}

/// Stage events as they come, then (once the answer future is done and every stage event
/// before it was sent) the answer or the error; then the end. Dropping the stream drops the
/// answer future, which abandons the question.
fn events(
    receiver: mpsc::UnboundedReceiver<ServerMessage>,
    answer: std::pin::Pin<Box<dyn std::future::Future<Output = ServerMessage> + Send>>,
) -> impl Stream<Item = Result<Bytes, actix_web::Error>> {
    struct State {
        receiver: mpsc::UnboundedReceiver<ServerMessage>,
        answer: Option<std::pin::Pin<Box<dyn std::future::Future<Output = ServerMessage> + Send>>>,
        last: Option<ServerMessage>,
        done: bool,
    }
    let state = State {
        receiver,
        answer: Some(answer),
        last: None,
        done: false,
    };
    stream::unfold(state, |mut state| async move {
        if state.done {
            return None;
        }
        loop {
            if let Some(answer) = state.answer.as_mut() {
                tokio::select! {
                    biased;
                    Some(message) = state.receiver.recv() => return Some((Ok(event(&message)), state)),
                    last = answer => {
                        state.last = Some(last);
                        state.answer = None;
                    }
                }
            } else {
                // The answer is in: the stage events sent before it go first.
                if let Ok(message) = state.receiver.try_recv() {
                    return Some((Ok(event(&message)), state));
                }
                state.done = true;
                let last = state.last.take()?;
                return Some((Ok(event(&last)), state));
            }
        }
    })
}
