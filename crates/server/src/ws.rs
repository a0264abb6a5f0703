//! The WebSocket chat at `/ws`: one task per connection, reading client messages, forwarding
//! stage events while a question is answered, and sending the answer once it is on disk.
//!
//! Limits, each with its own answer: a message above `max_message_bytes` or one that is not a
//! valid [`ClientMessage`] gets an error frame and the connection goes on; a frame above
//! `max_frame_bytes` cannot be skipped by the WebSocket codec, so it closes the connection with
//! code 1009 (the session itself is kept and can be resumed). The server pings every
//! `ws_ping_secs`; a peer silent for three pings is dropped. A client that asks nothing for
//! `ws_idle_timeout_secs` (with no answer under way) is closed with a reason: only a request the
//! server accepted (a question, an `open`, a `resume`, a rating) or an answer delivered restarts
//! that clock; pings, pongs and messages refused with an error do not, so a keep-alive cannot hold
//! a socket forever. On shutdown an idle connection is closed with 1001 at once; one with an
//! answer under way gets the answer first (or, after the grace period, an error saying it was
//! cancelled).
//!
//! A connection is counted from its upgrade to its close (`connections.rs`): one beyond the
//! key's or the server's cap is refused before the upgrade, with 429 or 503 and a JSON error.

use crate::connections::ConnectionSlot;
use crate::error::ServerError;
use crate::protocol::{ClientMessage, ServerMessage};
use crate::service::{Caller, ChatService};
use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, ProtocolError};
use chatty_kg_dialogue::{SessionInfo, TurnRecord};
use futures_util::StreamExt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone)]
pub struct WsSettings {
    pub max_message_bytes: usize,
    pub max_frame_bytes: usize,
    pub ping: Duration,
    pub idle_timeout: Duration,
    pub shutdown_grace: Duration,
}

/// Cancelled when the server starts shutting down.
#[derive(Clone, Default)]
pub struct Shutdown(pub CancellationToken);

pub async fn websocket(
    req: HttpRequest,
    body: web::Payload,
    caller: Caller,
    service: web::Data<ChatService>,
    settings: web::Data<WsSettings>,
    shutdown: web::Data<Shutdown>,
) -> Result<HttpResponse, actix_web::Error> {
    if service.is_shutting_down() {
        return Err(ServerError::ShuttingDown.into());
    }
    let slot = service.open_connection(&caller)?;
    let (response, session, stream) = actix_ws::handle(&req, body)?;
    let stream = stream
        .max_frame_size(settings.max_frame_bytes)
        .aggregate_continuations()
        .max_continuation_size(settings.max_frame_bytes);
    let connection = Connection {
        service: service.into_inner(),
        caller,
        settings: settings.get_ref().clone(),
        session,
        current: None,
        _slot: slot,
    };
    actix_web::rt::spawn(connection.run(stream, shutdown.0.clone()));
    Ok(response)
}

type Answering = Pin<Box<dyn Future<Output = Result<TurnRecord, ServerError>>>>;

struct Connection {
    service: Arc<ChatService>,
    caller: Caller,
    settings: WsSettings,
    session: actix_ws::Session,
    /// The dialogue session this connection works in.
    current: Option<SessionInfo>,
    /// This connection's place under the caps, given back when the connection ends.
    _slot: ConnectionSlot,
}

/// Awaits the answer under way, or never when there is none.
async fn answer_of(answering: &mut Option<Answering>) -> Result<TurnRecord, ServerError> {
    match answering {
        Some(future) => future.as_mut().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

fn reason(code: CloseCode, description: &str) -> Option<CloseReason> {
    Some(CloseReason {
        code,
        description: Some(description.to_owned()),
    })
}

impl Connection {
    async fn run(mut self, mut stream: actix_ws::AggregatedMessageStream, shutdown: CancellationToken) {
        self.service.metrics.ws_connections.inc();
        tracing::debug!("websocket connected");
        let (events, mut stage_events) = mpsc::unbounded_channel();
        let mut answering: Option<Answering> = None;
        let mut ping = tokio::time::interval(self.settings.ping);
        let mut last_heard = Instant::now();
        // When the connection is closed unless the client asks something first.
        let idle = self.settings.idle_timeout;
        let mut idle_at = tokio::time::Instant::now() + idle;
        // Set when shutdown begins with an answer under way: when it has to be given up.
        let mut give_up_at: Option<tokio::time::Instant> = None;
        let close = loop {
            tokio::select! {
                // Stage events first, so they all precede their answer.
                biased;
                Some(event) = stage_events.recv() => {
                    if self.send(&event).await.is_err() {
                        break None;
                    }
                }
                answered = answer_of(&mut answering) => {
                    answering = None;
                    idle_at = tokio::time::Instant::now() + idle;
                    let message = match answered {
                        Ok(record) => {
                            let session = self.current.as_ref().map(|s| s.id.to_string()).unwrap_or_default();
                            ServerMessage::answer(&session, record)
                        }
                        Err(error) => ServerMessage::error(&error),
                    };
                    if self.send(&message).await.is_err() || give_up_at.is_some() {
                        break reason(CloseCode::Away, "server shutting down");
                    }
                }
                frame = stream.next() => {
                    last_heard = Instant::now();
                    match frame {
                        None => break None,
                        Some(Err(ProtocolError::Overflow)) => {
                            self.service.metrics.error("frame_too_large");
                            break reason(CloseCode::Size, &format!(
                                "frame larger than {} bytes; the session is kept, resume it on a new connection",
                                self.settings.max_frame_bytes
                            ));
                        }
                        Some(Err(error)) => {
                            self.service.metrics.error("websocket_protocol");
                            break reason(CloseCode::Protocol, &error.to_string());
                        }
                        Some(Ok(AggregatedMessage::Text(text))) => {
                            let shutting_down = give_up_at.is_some();
                            let handled = self.handle(&text, &mut answering, &events, shutting_down).await;
                            // Time spent handling (a rating's correction runs a query) is ours,
                            // not the peer's silence.
                            last_heard = Instant::now();
                            // Only a request the server took on counts as asking.
                            if handled.is_ok() {
                                idle_at = tokio::time::Instant::now() + idle;
                            }
                            if let Err(error) = handled {
                                self.service.metrics.error(error.kind());
                                if self.send(&ServerMessage::error(&error)).await.is_err() {
                                    break None;
                                }
                            }
                        }
                        Some(Ok(AggregatedMessage::Binary(_))) => {
                            let error = ServerError::Malformed("binary frames are not understood; send JSON text".into());
                            self.service.metrics.error(error.kind());
                            if self.send(&ServerMessage::error(&error)).await.is_err() {
                                break None;
                            }
                        }
                        Some(Ok(AggregatedMessage::Ping(bytes))) => {
                            if self.session.pong(&bytes).await.is_err() {
                                break None;
                            }
                        }
                        Some(Ok(AggregatedMessage::Pong(_))) => {}
                        Some(Ok(AggregatedMessage::Close(reason))) => break reason,
                    }
                }
                _ = ping.tick() => {
                    if last_heard.elapsed() > self.settings.ping * 3 {
                        break reason(CloseCode::Away, "no pong: the connection looks dead");
                    }
                    if self.session.ping(b"").await.is_err() {
                        break None;
                    }
                }
                _ = tokio::time::sleep_until(idle_at), if answering.is_none() => {
                    self.service.metrics.error("idle_timeout");
                    break reason(CloseCode::Normal, &format!(
                        "idle timeout: nothing asked for {} s (pings do not count); the session is kept, resume it to go on",
                        idle.as_secs()
                    ));
                }
                _ = shutdown.cancelled(), if give_up_at.is_none() => {
                    if answering.is_none() {
                        break reason(CloseCode::Away, "server shutting down");
                    }
                    give_up_at = Some(tokio::time::Instant::now() + self.settings.shutdown_grace);
                }
                _ = sleep_until(give_up_at) => {
                    let _ = self.send(&ServerMessage::error(&ServerError::ShuttingDown)).await;
                    break reason(CloseCode::Away, "server shutting down");
                }
            }
        };
        self.service.metrics.ws_connections.dec();
        let _ = self.session.close(close).await;
    }

    async fn send(&mut self, message: &ServerMessage) -> Result<(), actix_ws::Closed> {
        let text = serde_json::to_string(message).unwrap_or_else(|e| {
            format!(r#"{{"type":"error","kind":"internal","message":"unserializable message: {e}"}}"#)
        });
        self.session.text(text).await
    }

    /// One client message. An error here is reported in an error frame; the connection stays.
    async fn handle(
        &mut self,
        text: &str,
        answering: &mut Option<Answering>,
        events: &mpsc::UnboundedSender<ServerMessage>,
        shutting_down: bool,
    ) -> Result<(), ServerError> {
        if text.len() > self.settings.max_message_bytes {
            return Err(ServerError::TooLarge {
                bytes: text.len(),
                max: self.settings.max_message_bytes,
            });
        }
        let message: ClientMessage = serde_json::from_str(text).map_err(|e| ServerError::Malformed(e.to_string()))?;
        // Rating an earlier answer waits neither for the one under way nor for shutdown.
        if !matches!(message, ClientMessage::Feedback { .. }) {
            if answering.is_some() {
                return Err(ServerError::Busy);
            }
            if shutting_down {
                return Err(ServerError::ShuttingDown);
            }
        }
        match message {
            ClientMessage::Feedback {
                turn,
                rating,
                correction,
            } => self.rate(turn, rating, correction).await?,
            ClientMessage::Open { kg } => {
                let info = self.service.create_session(&self.caller, kg.as_deref()).await?;
                self.enter(info, true, 0, Vec::new()).await;
            }
            ClientMessage::Resume { session, from, limit } => {
                let info = self.service.session(&self.caller, &session).await?;
                let (from, turns) = self.service.turns(&self.caller, &info, from, limit).await?;
                self.enter(info, false, from, turns).await;
            }
            ClientMessage::Ask { question } => {
                let session = match &self.current {
                    Some(info) => info.id.to_string(),
                    None => {
                        let info = self.service.create_session(&self.caller, None).await?;
                        let id = info.id.to_string();
                        self.enter(info, true, 0, Vec::new()).await;
                        id
                    }
                };
                let (service, caller, events) = (self.service.clone(), self.caller.clone(), events.clone());
                *answering = Some(Box::pin(async move {
                    service.ask(&caller, &session, &question, Some(events)).await
                }));
            }
        }
        Ok(())
    }

    /// Rates a turn of the connection's session and confirms it.
    async fn rate(
        &mut self,
        turn: u32,
        rating: Option<chatty_kg_dialogue::Rating>,
        correction: Option<crate::feedback::CorrectionRequest>,
    ) -> Result<(), ServerError> {
        let session = self.current.as_ref().ok_or(ServerError::NoSuchSession)?.id.to_string();
        let request = rating.map(|rating| crate::feedback::RatingRequest { rating, correction });
        let record = self.service.rate(&self.caller, &session, turn, request).await?;
        let message = ServerMessage::Feedback {
            session,
            turn: record.index,
            feedback: record.feedback,
        };
        // A closed connection shows up at the next read.
        let _ = self.send(&message).await;
        Ok(())
    }

    async fn enter(&mut self, info: SessionInfo, created: bool, from: u32, turns: Vec<TurnRecord>) {
        let message = ServerMessage::session(&info, created, from, turns);
        self.current = Some(info);
        // A closed connection shows up at the next read.
        let _ = self.send(&message).await;
    }
}
