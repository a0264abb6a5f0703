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
//! answered and recorded. A stream is counted under the connection caps while it is open
//! (`connections.rs`): one beyond them is refused before it starts (429 `too_many_connections`,
//! 503 `server_busy`).

use crate::error::ServerError;
use crate::protocol::ServerMessage;
use crate::service::{Caller, ChatService};
use actix_web::HttpResponse;
use actix_web::web::Bytes;
use futures_util::StreamExt;
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
        ServerMessage::Feedback { .. } => "feedback",
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
    service.session(&caller, &id).await?;
    service.check_question(&question)?;
    let slot = service.open_connection(&caller)?;
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
        .streaming(crate::connections::holding(events(receiver, answer), slot)))
}

/// What an answer's stream carries: each message the agents sent while working, then the
/// answer itself.
pub enum Progress<T> {
    Stage(ServerMessage),
    Done(T),
}

/// The messages from `receiver` as they come, then (once `answer` is done and every message sent
/// before it went out) its output; then the end. Dropping the stream drops the answer future,
/// which abandons the question as a REST client leaving does.
pub fn progress<T: Send + 'static>(
    receiver: mpsc::UnboundedReceiver<ServerMessage>,
    answer: std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>,
) -> impl Stream<Item = Progress<T>> {
    struct State<T> {
        receiver: mpsc::UnboundedReceiver<ServerMessage>,
        answer: Option<std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>>,
        last: Option<T>,
    }
    let state = State {
        receiver,
        answer: Some(answer),
        last: None,
    };
    stream::unfold(state, |mut state| async move {
        if let Some(answer) = state.answer.as_mut() {
            tokio::select! {
                biased;
                Some(message) = state.receiver.recv() => return Some((Progress::Stage(message), state)),
                last = answer => {
                    state.last = Some(last);
                    state.answer = None;
                }
            }
        }
        // The answer is in: the messages sent before it go first.
        if let Ok(message) = state.receiver.try_recv() {
            return Some((Progress::Stage(message), state));
        }
        let last = state.last.take()?;
        Some((Progress::Done(last), state))
    })
}

/// Stage events, then the answer or the error, in the wire format.
fn events(
    receiver: mpsc::UnboundedReceiver<ServerMessage>,
    answer: std::pin::Pin<Box<dyn std::future::Future<Output = ServerMessage> + Send>>,
) -> impl Stream<Item = Result<Bytes, actix_web::Error>> {
    progress(receiver, answer).map(|p| match p {
        Progress::Stage(message) | Progress::Done(message) => Ok(event(&message)),
    })
}
