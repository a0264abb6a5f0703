//! One error type for the server, each variant with a stable machine-readable `kind`, an HTTP
//! status and a message (as meilisearch does), so REST bodies and WebSocket error frames say the
//! same thing: `{"error": {"kind": "...", "message": "..."}}` / `{"type": "error", "kind": ...}`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use chatty_kg_agents::AgentError;
use chatty_kg_config::OpenError;
use chatty_kg_dialogue::DialogueError;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("missing or wrong API key (send `Authorization: Bearer KEY`, `X-API-Key: KEY` or `?api_key=KEY`)")]
    Unauthorized,
    #[error("no such session")]
    NoSuchSession,
    #[error("the session has no turn {0}")]
    NoSuchTurn(u32),
    #[error("no such example")]
    NoSuchExample,
    #[error("the correction cannot be used: {0}")]
    InvalidCorrection(String),
    #[error("requests from the page at {origin} are not accepted (add it to server.allowed_origins to allow it)")]
    ForbiddenOrigin { origin: String },
    #[error(
        "this server does not answer to the host name {host:?} (add it to server.allowed_hosts, or use an API key)"
    )]
    UnknownHost { host: String },
    #[error("send the request body as JSON (`Content-Type: application/json`)")]
    NotJson,
    #[error("knowledge graph {name:?} is not configured (configured: {known})")]
    UnknownKg { name: String, known: String },
    #[error("dataset {dataset:?} is not served here (served: {known})")]
    UnknownDataset { dataset: String, known: String },
    #[error("the question is empty")]
    EmptyQuestion,
    #[error("the question has {chars} characters; at most {max} are accepted")]
    QuestionTooLong { chars: usize, max: usize },
    #[error("malformed message: {0}")]
    Malformed(String),
    #[error("the message has {bytes} bytes; at most {max} are accepted")]
    TooLarge { bytes: usize, max: usize },
    #[error("a question is already being answered on this connection; wait for its answer")]
    Busy,
    #[error("at most {limit} {what} per API key; try again in {retry_after_secs} s")]
    RateLimited {
        what: &'static str,
        limit: u32,
        retry_after_secs: u64,
    },
    #[error(
        "this API key already holds {limit} open WebSocket connections and event streams, the most one key may \
         (server.max_connections_per_key); close one first"
    )]
    TooManyConnections { limit: usize },
    #[error(
        "the server holds {limit} open WebSocket connections and event streams, the most it takes \
         (server.max_connections); try again shortly"
    )]
    ServerBusy { limit: usize },
    #[error(
        "a page on another site cannot ask this server without an API key ({why}); the TEXT2SPARQL client and \
         other programs send no Origin and are served"
    )]
    CrossSite { why: String },
    #[error("too many questions are waiting (at most {queued}); try again shortly")]
    Overloaded { queued: usize },
    #[error("the client went away before the question was answered")]
    Abandoned,
    #[error("no answer within {secs} s; the question was abandoned")]
    AnswerTimeout { secs: u64 },
    #[error("the server is shutting down; the question was not answered")]
    ShuttingDown,
    #[error("{0}")]
    Agent(#[from] AgentError),
    #[error("{0}")]
    Dialogue(DialogueError),
    #[error("cannot start: {0}")]
    Start(String),
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<DialogueError> for ServerError {
    fn from(error: DialogueError) -> Self {
        match error {
            DialogueError::NotFound => ServerError::NoSuchSession,
            DialogueError::NoSuchTurn(turn) => ServerError::NoSuchTurn(turn),
            other => ServerError::Dialogue(other),
        }
    }
}

impl ServerError {
    /// Stable code for clients and the `errors` metric.
    pub fn kind(&self) -> &'static str {
        match self {
            ServerError::Unauthorized => "unauthorized",
            ServerError::NoSuchSession => "no_such_session",
            ServerError::NoSuchTurn(_) => "no_such_turn",
            ServerError::NoSuchExample => "no_such_example",
            ServerError::InvalidCorrection(_) => "invalid_correction",
            ServerError::ForbiddenOrigin { .. } => "forbidden_origin",
            ServerError::UnknownHost { .. } => "unknown_host",
            ServerError::NotJson => "not_json",
            ServerError::UnknownKg { .. } => "unknown_kg",
            ServerError::UnknownDataset { .. } => "unknown_dataset",
            ServerError::EmptyQuestion => "empty_question",
            ServerError::QuestionTooLong { .. } => "question_too_long",
            ServerError::Malformed(_) => "malformed_message",
            ServerError::TooLarge { .. } => "too_large",
            ServerError::Busy => "busy",
            ServerError::AnswerTimeout { .. } => "answer_timeout",
            ServerError::Overloaded { .. } => "overloaded",
            ServerError::TooManyConnections { .. } => "too_many_connections",
            ServerError::ServerBusy { .. } => "server_busy",
            ServerError::CrossSite { .. } => "cross_site",
            ServerError::RateLimited { .. } => "rate_limited",
            ServerError::Abandoned => "abandoned",
            ServerError::ShuttingDown => "shutting_down",
            ServerError::Agent(AgentError::EmptyQuestion) => "empty_question",
            ServerError::Agent(e) => e.kind(),
            ServerError::Dialogue(_) => "storage",
            ServerError::Start(_) | ServerError::Open(_) => "start",
            ServerError::Internal(_) => "internal",
        }
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            kind: self.kind(),
            message: self.to_string(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct ErrorBody {
    pub kind: &'static str,
    pub message: String,
}

impl ResponseError for ServerError {
    fn status_code(&self) -> StatusCode {
        match self {
            ServerError::Unauthorized => StatusCode::UNAUTHORIZED,
            ServerError::NoSuchSession
            | ServerError::NoSuchTurn(_)
            | ServerError::NoSuchExample
            | ServerError::UnknownDataset { .. } => StatusCode::NOT_FOUND,
            ServerError::ForbiddenOrigin { .. } | ServerError::CrossSite { .. } => StatusCode::FORBIDDEN,
            ServerError::UnknownHost { .. } => StatusCode::MISDIRECTED_REQUEST,
            ServerError::NotJson => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ServerError::UnknownKg { .. }
            | ServerError::EmptyQuestion
            | ServerError::Agent(AgentError::EmptyQuestion)
            | ServerError::InvalidCorrection(_)
            | ServerError::Malformed(_) => StatusCode::BAD_REQUEST,
            ServerError::QuestionTooLong { .. } | ServerError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ServerError::Busy => StatusCode::CONFLICT,
            ServerError::Overloaded { .. }
            | ServerError::RateLimited { .. }
            | ServerError::TooManyConnections { .. } => StatusCode::TOO_MANY_REQUESTS,
            // Nobody reads it (nginx's "client closed request").
            ServerError::Abandoned => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
            // The session store refuses writes (a full disk): the turn was not recorded.
            ServerError::ShuttingDown | ServerError::Dialogue(_) | ServerError::ServerBusy { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ServerError::AnswerTimeout { .. } => StatusCode::GATEWAY_TIMEOUT,
            // The model or the graph failed: an upstream of ours.
            ServerError::Agent(AgentError::Llm { .. } | AgentError::RetriesExhausted { .. } | AgentError::Graph(_)) => {
                StatusCode::BAD_GATEWAY
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if matches!(self, ServerError::Unauthorized) {
            response.insert_header(("WWW-Authenticate", "Bearer"));
        }
        if let ServerError::RateLimited { retry_after_secs, .. } = self {
            response.insert_header(("Retry-After", retry_after_secs.to_string()));
        }
        response.json(serde_json::json!({ "error": self.body() }))
    }
}
