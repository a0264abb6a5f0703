//! The REST API (all JSON; errors are `{"error": {"kind", "message"}}`):
//!
//! | method and path                    | what                                            |
//! |------------------------------------|-------------------------------------------------|
//! | `GET /health`                      | status and version (no key needed); with a key, also the KGs, the model and what is wrong |
//! | `GET /api/kgs`                     | the configured knowledge graphs                 |
//! | `GET /api/kgs/{kg}/suggestions`    | first questions made from this graph's profile (`explore.rs`) |
//! | `GET /api/kgs/{kg}/describe?iri=`  | the triples around a vertex, named (`&limit=` per direction) |
//! | `POST /api/kgs/{kg}/query`         | `{"question"}` → the SPARQL it comes to and its explanation, no answer values (generate-only; `generated.rs`) |
//! | `POST /api/sessions`               | JSON `{"kg"?}` → 201 a new session              |
//! | `GET /api/sessions/{id}`           | the session and a page of its turns (`?from&limit`) |
//! | `POST /api/sessions/{id}/ask`      | `{"question"}` → the turn with its explanation; with `Accept: text/event-stream`, its stage events then the answer (`sse.rs`) |
//! | `DELETE /api/sessions/{id}`        | 204, the session and its turns are gone         |
//! | `POST /api/sessions/{id}/turns/{n}/feedback` | `{"rating": "up"\|"down", "correction"?: {"answer"?, "sparql"?}}` → the rated turn (`feedback.rs`) |
//! | `DELETE /api/sessions/{id}/turns/{n}/feedback` | the rating withdrawn → the turn            |
//! | `GET /api/feedback`                | the caller's rated turns as QALD-JSON (`?kg=`)  |
//! | `GET /api/examples`                | the examples the caller's feedback made (`?kg=`), `examples.rs` |
//! | `DELETE /api/examples/{id}`        | one of them removed; later questions no longer use it |
//! | `GET /metrics`                     | Prometheus text format                          |
//!
//! The OpenAI-compatible `/v1/models` and `/v1/chat/completions` are in `openai_api.rs`.

use crate::error::ServerError;
use crate::service::{Caller, ChatService};
use actix_web::{HttpResponse, web};
use chatty_kg_dialogue::{SessionInfo, TurnRecord};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/health", web::get().to(health))
        .route("/metrics", web::get().to(metrics))
        .route("/api/kgs", web::get().to(list_kgs))
        .route("/api/kgs/{kg}/suggestions", web::get().to(suggestions))
        .route("/api/kgs/{kg}/describe", web::get().to(describe))
        .route("/api/kgs/{kg}/query", web::post().to(generate))
        .route("/api/sessions", web::post().to(create_session))
        .route("/api/sessions/{id}", web::get().to(get_session))
        .route("/api/sessions/{id}", web::delete().to(delete_session))
        .route("/api/sessions/{id}/ask", web::post().to(ask))
        .route("/api/sessions/{id}/turns/{turn}/feedback", web::post().to(rate))
        .route(
            "/api/sessions/{id}/turns/{turn}/feedback",
            web::delete().to(withdraw_rating),
        )
        .route("/api/feedback", web::get().to(export_feedback))
        .route("/api/examples", web::get().to(export_examples))
        .route("/api/examples/{id}", web::delete().to(remove_example));
}

/// Server and model facts for `/health`.
#[derive(Clone)]
pub struct HealthInfo {
    pub version: &'static str,
    pub llm: String,
    pub api_keys_required: bool,
    /// The chat model, asked whether it can still answer.
    pub model: Arc<dyn chatty_kg_llm::ChatModel>,
}

/// 200 when the server can answer and record answers; 503 `degraded` (with `problems`) when the
/// model cannot answer or the session store refuses writes (a full disk); `shutting_down` too.
/// Without a valid key (on a server with keys) only the status and the version: the problems
/// name the session store (a PostgreSQL host and database), the rest names the model and the
/// graphs, none of it anyone's business but the key holders'.
async fn health(
    request: actix_web::HttpRequest,
    keys: web::Data<crate::auth::ApiKeys>,
    service: web::Data<ChatService>,
    info: web::Data<HealthInfo>,
) -> HttpResponse {
    let llm = info.model.health();
    let sessions = service.store_health().await;
    let mut problems = serde_json::Map::new();
    for (component, result) in [("llm", &llm), ("sessions", &sessions)] {
        service
            .metrics
            .up
            .with_label_values(&[component])
            .set(i64::from(result.is_ok()));
        if let Err(problem) = result {
            problems.insert(component.into(), problem.clone().into());
        }
    }
    let status = if service.is_shutting_down() {
        "shutting_down"
    } else if !problems.is_empty() {
        "degraded"
    } else {
        "ok"
    };
    let mut response = if status == "ok" {
        HttpResponse::Ok()
    } else {
        HttpResponse::ServiceUnavailable()
    };
    if keys.caller(&request).is_err() {
        return response.json(serde_json::json!({ "status": status, "version": info.version }));
    }
    response.json(serde_json::json!({
        "status": status,
        "problems": problems,
        "version": info.version,
        "llm": info.llm,
        "api_keys_required": info.api_keys_required,
        "kgs": service.kgs().map(|kg| kg.name.as_str()).collect::<Vec<_>>(),
    }))
}

async fn metrics(_: Caller, service: web::Data<ChatService>) -> Result<HttpResponse, ServerError> {
    let text = service
        .metrics
        .render()
        .map_err(|e| ServerError::Internal(e.to_string()))?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(text))
}

async fn list_kgs(_: Caller, service: web::Data<ChatService>) -> HttpResponse {
    HttpResponse::Ok().json(service.kgs().collect::<Vec<_>>())
}

/// Suggested first questions shown on the page.
const SUGGESTIONS: usize = 4;

async fn suggestions(
    caller: Caller,
    service: web::Data<ChatService>,
    kg: web::Path<String>,
) -> Result<HttpResponse, ServerError> {
    service.charge(&caller)?;
    let graph = service.graph_named(&kg)?;
    let found = crate::explore::suggestions(graph.as_ref(), SUGGESTIONS)
        .await
        .map_err(|e| ServerError::Agent(e.into()))?;
    Ok(HttpResponse::Ok().json(found))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Describe {
    iri: String,
    limit: Option<usize>,
}

async fn describe(
    caller: Caller,
    service: web::Data<ChatService>,
    kg: web::Path<String>,
    query: web::Query<Describe>,
) -> Result<HttpResponse, ServerError> {
    service.charge(&caller)?;
    let graph = service.graph_named(&kg)?;
    let limit = query.limit.unwrap_or(crate::explore::DEFAULT_TRIPLES);
    let described = crate::explore::describe(graph.as_ref(), &query.iri, limit)
        .await
        .map_err(|e| match e {
            chatty_kg_graph::GraphError::InvalidIri { .. } => ServerError::Malformed(e.to_string()),
            other => ServerError::Agent(other.into()),
        })?;
    Ok(HttpResponse::Ok().json(described))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateSession {
    kg: Option<String>,
}

/// A session as the API shows it.
#[derive(Debug, Serialize)]
struct SessionView {
    session: String,
    kg: String,
    created_at: u64,
    updated_at: u64,
    turn_count: u32,
    /// Index of the first turn in `turns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    turns: Option<Vec<TurnRecord>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Page {
    from: Option<u32>,
    limit: Option<usize>,
}

impl SessionView {
    fn new(info: SessionInfo, page: Option<(u32, Vec<TurnRecord>)>) -> Self {
        let (from, turns) = page.map_or((None, None), |(from, turns)| (Some(from), Some(turns)));
        Self {
            from,
            session: info.id.to_string(),
            kg: info.kg,
            created_at: info.created_at,
            updated_at: info.updated_at,
            turn_count: info.turns,
            turns,
        }
    }
}

/// The body of `POST /api/sessions` (its content type already checked): the KG asked for, or
/// `None` for the default. An empty body means the default KG; a body that is not the expected
/// JSON is an error, not a silent default (`{"kgg": "dbpedia"}` must not open a session on
/// another graph). Public for the fuzz targets (`fuzz/`).
pub fn parse_create_session(body: &[u8]) -> Result<Option<String>, ServerError> {
    let request: CreateSession = if body.iter().all(u8::is_ascii_whitespace) {
        CreateSession::default()
    } else {
        serde_json::from_slice(body).map_err(|e| ServerError::Malformed(e.to_string()))?
    };
    Ok(request.kg)
}

/// The query string of `GET /api/sessions/{id}` as its extractor reads it: `(from, limit)`.
/// Public for the fuzz targets.
pub fn parse_page(query: &str) -> Result<(Option<u32>, Option<usize>), ServerError> {
    let page = web::Query::<Page>::from_query(query).map_err(|e| ServerError::Malformed(e.to_string()))?;
    Ok((page.from, page.limit))
}

/// The body of `POST /api/sessions/{id}/ask`: the question. The handler's `web::Json<Ask>` reads
/// the body with this same `serde_json::from_slice` into the same type (after its content-type
/// and size checks); this is the function the fuzz targets call.
pub fn parse_ask(body: &[u8]) -> Result<String, ServerError> {
    let ask: Ask = serde_json::from_slice(body).map_err(|e| ServerError::Malformed(e.to_string()))?;
    Ok(ask.question)
}

async fn create_session(
    caller: Caller,
    service: web::Data<ChatService>,
    req: actix_web::HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ServerError> {
    // JSON only, even when empty: a page on another site can send a form or `text/plain` POST
    // without asking first, but not `application/json`.
    let json = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(ServerError::NotJson);
    }
    let kg = parse_create_session(&body)?;
    let info = service.create_session(&caller, kg.as_deref()).await?;
    Ok(HttpResponse::Created().json(SessionView::new(info, None)))
}

async fn get_session(
    caller: Caller,
    service: web::Data<ChatService>,
    id: web::Path<String>,
    page: web::Query<Page>,
) -> Result<HttpResponse, ServerError> {
    let info = service.session(&caller, &id).await?;
    let page = service.turns(&caller, &info, page.from, page.limit).await?;
    Ok(HttpResponse::Ok().json(SessionView::new(info, Some(page))))
}

async fn delete_session(
    caller: Caller,
    service: web::Data<ChatService>,
    id: web::Path<String>,
) -> Result<HttpResponse, ServerError> {
    service.delete_session(&caller, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Ask {
    question: String,
}

async fn ask(
    request: actix_web::HttpRequest,
    caller: Caller,
    service: web::Data<ChatService>,
    id: web::Path<String>,
    body: web::Json<Ask>,
) -> Result<HttpResponse, ServerError> {
    let service: Arc<ChatService> = service.into_inner();
    if crate::sse::wants_events(&request) {
        return crate::sse::ask(caller, service, id.into_inner(), body.into_inner().question).await;
    }
    let record = service.ask(&caller, &id, &body.question, None).await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({
        "session": id.as_str(),
        "turn": record.index,
        "explanation": record.explanation,
    })))
}

/// Generate-only: the question's query without running it for the user. It is grounded as an
/// answer is (the graph is read, the candidates run to see which has an answer), in the same
/// bounds as a question (rate, queue, permits, timeout); nothing is stored.
async fn generate(
    caller: Caller,
    service: web::Data<ChatService>,
    kg: web::Path<String>,
    body: web::Json<Ask>,
) -> Result<HttpResponse, ServerError> {
    let service: Arc<ChatService> = service.into_inner();
    let (kg, explanation) = service
        .ask_once(&caller, Some(&kg), &body.question, Vec::new(), None, false)
        .await?;
    let mut view = serde_json::json!(explanation.generate_only());
    view["kg"] = kg.into();
    view["question"] = body.question.trim().into();
    Ok(HttpResponse::Ok().json(view))
}

async fn rate(
    caller: Caller,
    service: web::Data<ChatService>,
    path: web::Path<(String, u32)>,
    body: web::Json<crate::feedback::RatingRequest>,
) -> Result<HttpResponse, ServerError> {
    let (id, turn) = path.into_inner();
    let record = service.rate(&caller, &id, turn, Some(body.into_inner())).await?;
    Ok(HttpResponse::Ok().json(rated_view(&id, &record)))
}

async fn withdraw_rating(
    caller: Caller,
    service: web::Data<ChatService>,
    path: web::Path<(String, u32)>,
) -> Result<HttpResponse, ServerError> {
    let (id, turn) = path.into_inner();
    let record = service.rate(&caller, &id, turn, None).await?;
    Ok(HttpResponse::Ok().json(rated_view(&id, &record)))
}

fn rated_view(session: &str, record: &TurnRecord) -> serde_json::Value {
    serde_json::json!({ "session": session, "turn": record.index, "feedback": record.feedback })
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportQuery {
    kg: Option<String>,
}

async fn export_feedback(
    caller: Caller,
    service: web::Data<ChatService>,
    query: web::Query<ExportQuery>,
) -> Result<HttpResponse, ServerError> {
    // Reads every rated turn of the caller's sessions: counted like a question.
    service.charge(&caller)?;
    Ok(HttpResponse::Ok().json(service.feedback_export(&caller, query.kg.as_deref()).await?))
}

async fn export_examples(
    caller: Caller,
    service: web::Data<ChatService>,
    query: web::Query<ExportQuery>,
) -> Result<HttpResponse, ServerError> {
    service.charge(&caller)?;
    Ok(HttpResponse::Ok().json(service.examples_export(&caller, query.kg.as_deref()).await?))
}

async fn remove_example(
    caller: Caller,
    service: web::Data<ChatService>,
    id: web::Path<String>,
) -> Result<HttpResponse, ServerError> {
    service.charge(&caller)?;
    service.remove_example(&caller, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Query strings (`?from=&limit=`): a bad one gets the API's error shape.
pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|error, _| ServerError::Malformed(error.to_string()).into())
}

/// JSON bodies: at most `limit` bytes, and a malformed or oversized one gets the API's error
/// shape rather than actix's plain text.
pub fn json_config(limit: usize) -> web::JsonConfig {
    web::JsonConfig::default().limit(limit).error_handler(move |error, _| {
        use actix_web::error::JsonPayloadError;
        let error = match &error {
            JsonPayloadError::OverflowKnownLength { length, limit } => ServerError::TooLarge {
                bytes: *length,
                max: *limit,
            },
            JsonPayloadError::Overflow { limit } => ServerError::TooLarge {
                bytes: limit + 1,
                max: *limit,
            },
            other => ServerError::Malformed(other.to_string()),
        };
        error.into()
    })
}
