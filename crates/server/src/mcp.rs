//! A Model Context Protocol server (the official Rust SDK, `rmcp`): assistants and IDE agents
//! ask the knowledge graph through tools. `chatty-kg mcp` serves it over stdio; `serve` over
//! streamable HTTP at `/mcp` (the default KG) and `/mcp/{kg}`, behind the API keys, its `ask`
//! going through the chat service's limits and its sessions kept per API key.
//!
//! Tools:
//! - `ask` `{question, session?}`: the answer (text, values with labels and provenance), the
//!   SPARQL that ran, the entity links. With `session`, the question continues that dialogue
//!   (kept in this process's memory) and may refer to earlier answers.
//! - `entities` `{text, limit?}`: label search, best first.
//! - `sparql` `{query, max_rows?}`: a read-only SELECT or ASK (the same guard as everywhere),
//!   at most `max_rows` rows (default 100, at most the graph's `max_rows`).
//! - `describe` `{iri, limit?}`: the triples around a vertex, both ways, named.
//! - `list_kgs`: the knowledge graph served.
//!
//! Resource: `chatty-kg://<kg>/profile`, the graph's schema profile as JSON.
//!
//! Errors are MCP errors whose `data.kind` is the REST API's stable kind (`empty_question`,
//! `graph`, `llm`, `retries_exhausted`, `malformed_message`, …).

use crate::error::ServerError;
use crate::service::{Caller, ChatService};
use chatty_kg_agents::{AgentError, Dialogue, Explanation, Mode, Pipeline};
use chatty_kg_dialogue::Owner;
use chatty_kg_graph::KnowledgeGraph;
use chatty_kg_graph::{GraphError, QueryResults, term_text};
use rmcp::RoleServer;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    AnnotateAble, ErrorData, Implementation, ListResourcesResult, PaginatedRequestParams, RawResource,
    ReadResourceRequestParams, ReadResourceResult, ResourceContents, ServerCapabilities, ServerInfo,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::Mutex;

/// Rows a `sparql` call returns unless it asks for fewer.
const DEFAULT_ROWS: usize = 100;
/// Dialogues kept by `ask` with a session, per API key (the key's oldest is dropped beyond): one
/// key's sessions never push out another's, and the keys are the configuration's, so the whole
/// is bounded too.
const MAX_SESSIONS_PER_KEY: usize = 1000;
/// Answers per turn kept for later questions (L).
const CONTEXT_ANSWERS: usize = 100;
/// Turns kept per named session (follow-ups refer to the last few).
const KEPT_TURNS: usize = 10;

/// The MCP server over one knowledge graph.
#[derive(Clone)]
pub struct McpServer {
    name: String,
    answers: Answers,
    /// Dialogues by owner (the API key's, over HTTP) and name, the most recent last.
    sessions: Arc<Mutex<Vec<(Option<Owner>, String, Dialogue)>>>,
    tool_router: ToolRouter<Self>,
}

/// Who answers `ask`: the pipeline itself (stdio, one user), or the server's chat service, so a
/// question over `/mcp` has the same API key, rate, queue, permits and timeout as any other.
#[derive(Clone)]
enum Answers {
    Pipeline(Arc<Pipeline>),
    Service {
        service: Arc<ChatService>,
        kg: Arc<dyn KnowledgeGraph>,
    },
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AskArgs {
    /// The question, in natural language.
    pub question: String,
    /// A dialogue to continue (any name you choose): the question may then refer to earlier
    /// answers ("What else did he direct?").
    #[serde(default)]
    pub session: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GenerateArgs {
    /// The question, in natural language.
    pub question: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EntitiesArgs {
    /// A name or part of one.
    pub text: String,
    /// How many candidates (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SparqlArgs {
    /// A SPARQL SELECT or ASK query (anything else is refused).
    pub query: String,
    /// At most this many rows (default 100).
    #[serde(default)]
    pub max_rows: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DescribeArgs {
    /// The IRI of a vertex (from `entities` or an answer).
    pub iri: String,
    /// Triples per direction (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Keeps a new named dialogue of `owner`, dropping that owner's oldest beyond `cap`.
fn remember(
    sessions: &mut Vec<(Option<Owner>, String, Dialogue)>,
    owner: &Option<Owner>,
    name: &str,
    dialogue: Dialogue,
    cap: usize,
) {
    sessions.push((owner.clone(), name.to_owned(), dialogue));
    let own = |(o, _, _): &(Option<Owner>, String, Dialogue)| o == owner;
    if sessions.iter().filter(|s| own(s)).count() > cap
        && let Some(oldest) = sessions.iter().position(own)
    {
        sessions.remove(oldest);
    }
}

/// An MCP error carrying the REST API's stable kind.
fn error(kind: &str, message: impl std::fmt::Display) -> ErrorData {
    let data = Some(json!({"kind": kind}));
    match kind {
        "empty_question" | "malformed_message" | "invalid_query" | "refused" => {
            ErrorData::invalid_params(message.to_string(), data)
        }
        _ => ErrorData::internal_error(message.to_string(), data),
    }
}

fn graph_error(e: GraphError) -> ErrorData {
    let kind = match &e {
        GraphError::QueryParse { .. } | GraphError::InvalidIri { .. } => "invalid_query",
        GraphError::NotReadOnly { .. }
        | GraphError::FunctionNotAllowed { .. }
        | GraphError::ValueTooLarge { .. }
        | GraphError::SolutionsTooLarge { .. }
        | GraphError::QueryWorker { .. }
        | GraphError::RiskyPattern { .. } => "refused",
        _ => "graph",
    };
    error(kind, e)
}

fn agent_error(e: AgentError) -> ErrorData {
    match e {
        AgentError::Graph(g) => graph_error(g),
        other => error(other.kind(), other),
    }
}

fn text(value: &Value) -> Result<String, ErrorData> {
    serde_json::to_string_pretty(value).map_err(|e| error("internal", e))
}

#[tool_router]
impl McpServer {
    pub fn new(name: impl Into<String>, pipeline: Arc<Pipeline>) -> Self {
        Self::with(name.into(), Answers::Pipeline(pipeline))
    }

    /// The server's knowledge graph `kg`, answered through `service` (for `/mcp` on `serve`).
    pub fn served(service: Arc<ChatService>, kg: &str) -> Result<Self, ServerError> {
        let graph = service.graph_named(kg)?;
        Ok(Self::with(kg.to_owned(), Answers::Service { service, kg: graph }))
    }

    fn with(name: String, answers: Answers) -> Self {
        Self {
            name,
            answers,
            sessions: Arc::default(),
            tool_router: Self::tool_router(),
        }
    }

    /// Over HTTP, a graph lookup is admitted like a question (the queries are the caller's to
    /// choose): their rate, the queue and an answer permit, held while the guard lives; over
    /// stdio there is one user, and no rate or permit.
    async fn admit(
        &self,
        extensions: &rmcp::model::Extensions,
    ) -> Result<Option<tokio::sync::SemaphorePermit<'_>>, ErrorData> {
        match &self.answers {
            Answers::Service { service, .. } => service
                .admit_lookup(&caller_of(extensions))
                .await
                .map(Some)
                .map_err(|e| error(e.kind(), e)),
            Answers::Pipeline(_) => Ok(None),
        }
    }

    /// `question` answered the way this server answers: by its own pipeline (stdio), or as a
    /// question of the service, in its bounds (HTTP: the caller's rate, the queue, the permits).
    async fn answer(
        &self,
        caller: &Caller,
        question: &str,
        mode: Mode,
        history: Vec<chatty_kg_agents::Turn>,
    ) -> Result<Explanation, ErrorData> {
        match &self.answers {
            Answers::Pipeline(pipeline) => pipeline.ask(question, mode, &history).await.map_err(agent_error),
            Answers::Service { service, .. } => service
                .ask_once(caller, Some(&self.name), question, history, None, false)
                .await
                .map(|(_, e)| e)
                .map_err(|e| error(e.kind(), e)),
        }
    }

    fn kg(&self) -> &dyn KnowledgeGraph {
        match &self.answers {
            Answers::Pipeline(pipeline) => pipeline.context().kg.as_ref(),
            Answers::Service { kg, .. } => kg.as_ref(),
        }
    }

    #[tool(
        description = "Answer a question from the knowledge graph. Returns the answer text, the \
        answer values (with labels and the triples behind each), the SPARQL that ran and how the \
        question's entities were linked. Give a session name to continue a dialogue."
    )]
    async fn ask(
        &self,
        Parameters(args): Parameters<AskArgs>,
        extensions: rmcp::model::Extensions,
    ) -> Result<String, ErrorData> {
        if !args.question.chars().any(char::is_alphanumeric) {
            return Err(error("empty_question", "the question is empty"));
        }
        let caller = caller_of(&extensions);
        // Over HTTP without API keys every caller is the same anonymous one: a session name
        // ("s1") would be shared by all, so named sessions need a key there.
        if args.session.is_some() && caller.owner.is_none() && matches!(self.answers, Answers::Service { .. }) {
            return Err(error(
                "malformed_message",
                "named sessions over HTTP need an API key (server.api_keys); without one, ask without `session`",
            ));
        }
        let key = |owner: &Option<Owner>, name: &String| *owner == caller.owner && Some(name) == args.session.as_ref();
        let history = match &args.session {
            Some(_) => {
                let sessions = self.sessions.lock().await;
                sessions
                    .iter()
                    .find(|(owner, name, _)| key(owner, name))
                    .map(|(_, _, d)| d.turns.clone())
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        let mode = if args.session.is_some() {
            Mode::MultiTurn
        } else {
            Mode::SingleTurn
        };
        let e = self.answer(&caller, &args.question, mode, history).await?;
        if let Some(id) = &args.session {
            let mut sessions = self.sessions.lock().await;
            match sessions.iter_mut().find(|(owner, name, _)| key(owner, name)) {
                Some((_, _, dialogue)) => {
                    dialogue.record(&e, CONTEXT_ANSWERS);
                    // Only the last few turns are ever referred to.
                    let excess = dialogue.turns.len().saturating_sub(KEPT_TURNS);
                    dialogue.turns.drain(..excess);
                }
                None => {
                    let mut dialogue = Dialogue::default();
                    dialogue.record(&e, CONTEXT_ANSWERS);
                    remember(&mut sessions, &caller.owner, id, dialogue, MAX_SESSIONS_PER_KEY);
                }
            }
        }
        text(&answer_json(&e, args.session.as_deref()))
    }

    #[tool(
        description = "Generate the SPARQL query a question comes to, without its answer values, to \
        run elsewhere or review first. The query is grounded in the knowledge graph (entities, \
        relation paths and candidate queries are read from it); `answered` says whether it has an \
        answer there. Returns the query and how it was found."
    )]
    async fn generate_sparql(
        &self,
        Parameters(args): Parameters<GenerateArgs>,
        extensions: rmcp::model::Extensions,
    ) -> Result<String, ErrorData> {
        if !args.question.chars().any(char::is_alphanumeric) {
            return Err(error("empty_question", "the question is empty"));
        }
        let e = self
            .answer(&caller_of(&extensions), &args.question, Mode::SingleTurn, Vec::new())
            .await?;
        text(&json!(e.generate_only()))
    }

    #[tool(description = "Search the knowledge graph's entities by name. Returns IRIs and labels, best first.")]
    async fn entities(
        &self,
        Parameters(args): Parameters<EntitiesArgs>,
        extensions: rmcp::model::Extensions,
    ) -> Result<String, ErrorData> {
        let _permit = self.admit(&extensions).await?;
        let limit = args.limit.unwrap_or(10).clamp(1, 1000);
        let found = self
            .kg()
            .search_entities(&args.text, limit)
            .await
            .map_err(graph_error)?;
        let found: Vec<Value> = found.iter().map(|c| json!({"iri": c.iri, "label": c.label})).collect();
        text(&json!(found))
    }

    #[tool(
        description = "Run a read-only SPARQL SELECT or ASK query on the knowledge graph (SERVICE, \
        FROM and updates are refused). Returns the variables and rows, at most max_rows."
    )]
    async fn sparql(
        &self,
        Parameters(args): Parameters<SparqlArgs>,
        extensions: rmcp::model::Extensions,
    ) -> Result<String, ErrorData> {
        let _permit = self.admit(&extensions).await?;
        let kg = self.kg();
        let results = kg.query_text(&args.query).await.map_err(graph_error)?;
        let max = args
            .max_rows
            .unwrap_or(DEFAULT_ROWS)
            .clamp(1, kg.settings().max_rows.max(1));
        let value = match results {
            QueryResults::Boolean(b) => json!({"boolean": b}),
            QueryResults::Solutions(s) => {
                let rows: Vec<Value> = s
                    .rows
                    .iter()
                    .take(max)
                    .map(|row| {
                        let cells: serde_json::Map<String, Value> = s
                            .variables
                            .iter()
                            .zip(row)
                            .filter_map(|(v, t)| Some((v.clone(), json!(term_text(t.as_ref()?)?))))
                            .collect();
                        Value::Object(cells)
                    })
                    .collect();
                json!({"variables": s.variables, "rows": rows, "truncated": s.truncated || s.rows.len() > max})
            }
        };
        text(&value)
    }

    #[tool(
        description = "The triples around a vertex of the knowledge graph, outgoing and incoming, \
        with labels."
    )]
    async fn describe(
        &self,
        Parameters(args): Parameters<DescribeArgs>,
        extensions: rmcp::model::Extensions,
    ) -> Result<String, ErrorData> {
        let _permit = self.admit(&extensions).await?;
        let kg = self.kg();
        let limit = args.limit.unwrap_or(crate::explore::DEFAULT_TRIPLES);
        text(
            &crate::explore::describe(kg, &args.iri, limit)
                .await
                .map_err(graph_error)?,
        )
    }

    #[tool(description = "The knowledge graph this server answers from.")]
    async fn list_kgs(&self) -> Result<String, ErrorData> {
        text(&json!([{"name": self.name, "description": self.kg().describe()}]))
    }
}

/// Over HTTP, the caller the API key made (see [`http_handler`]); over stdio, nobody.
fn caller_of(extensions: &rmcp::model::Extensions) -> Caller {
    extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned()
        .unwrap_or_default()
}

/// What `ask` returns.
fn answer_json(e: &Explanation, session: Option<&str>) -> Value {
    let answers: Vec<Value> = e
        .answers
        .iter()
        .map(|a| json!({"value": a.value, "label": a.display(), "kind": a.kind, "provenance": a.provenance}))
        .collect();
    let entities: Vec<Value> = e
        .entities
        .iter()
        .map(|l| json!({"mention": l.mention, "iri": l.iri, "label": l.label, "method": l.method}))
        .collect();
    let sparql: Vec<&str> = e.sparql.iter().filter(|q| q.used).map(|q| q.sparql.as_str()).collect();
    json!({
        "text": e.text,
        "outcome": e.outcome,
        "answers": answers,
        "truncated": e.truncated,
        "sparql": sparql,
        "entities": entities,
        "resolved_question": e.resolved_question,
        "session": session,
        "llm_calls": e.llm.calls,
        "total_ms": e.timings.total_ms,
    })
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("chatty-kg", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Answers questions from a knowledge graph (RDF) with the SPARQL it ran: use `ask` for \
             questions, `entities` to find a vertex by name, `describe` to see what the graph says \
             of it, `sparql` for a read-only query. The resource `chatty-kg://<kg>/profile` is \
             the graph's schema profile: its predicates and classes, the most used first.",
            )
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resource = RawResource::new(self.profile_uri(), format!("{} schema profile", self.name))
            .with_description(
                "The knowledge graph's predicates (triples, IRI objects, literal datatypes, names) and \
                 classes (instances), the most used first",
            )
            .with_mime_type("application/json")
            .no_annotation();
        Ok(ListResourcesResult::with_all_items(vec![resource]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, ErrorData> {
        if request.uri != self.profile_uri() {
            return Err(ErrorData::resource_not_found(
                format!(
                    "no resource {:?}; the one resource is {}",
                    request.uri,
                    self.profile_uri()
                ),
                Some(json!({"kind": "not_found"})),
            ));
        }
        let profile = self.kg().profile().await.map_err(graph_error)?;
        let text = serde_json::to_string(profile.as_ref()).map_err(|e| error("internal", e))?;
        Ok(ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
            uri: request.uri,
            mime_type: Some("application/json".into()),
            text,
            meta: None,
        }]))
    }
}

impl McpServer {
    fn profile_uri(&self) -> String {
        format!("chatty-kg://{}/profile", self.name)
    }
}

/// The streamable-HTTP transport of `server` (`/mcp` on `serve`): stateless, each POST answered
/// with JSON, so any replica can answer any request. Host and Origin are checked by the server's
/// own guard (`origin.rs`) before this runs, and the API key by [`http_handler`].
pub fn http_service(server: McpServer) -> StreamableHttpService<McpServer, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .with_stateful_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .disable_allowed_hosts();
    StreamableHttpService::new(move || Ok(server.clone()), Arc::default(), config)
}

/// The MCP services of the server's knowledge graphs, by name: `/mcp` answers from the default
/// one, `/mcp/{kg}` from `kg`.
pub type McpEndpoints = std::collections::BTreeMap<String, StreamableHttpService<McpServer, LocalSessionManager>>;

/// `/mcp` and `/mcp/{kg}`: the request (its API key checked by the [`Caller`] extractor, the
/// caller passed on to the tools) handed to rmcp's transport, its answer streamed back.
pub async fn http_handler(
    request: actix_web::HttpRequest,
    caller: Caller,
    body: actix_web::web::Bytes,
    endpoints: actix_web::web::Data<McpEndpoints>,
    chat: actix_web::web::Data<ChatService>,
) -> Result<actix_web::HttpResponse, ServerError> {
    use futures_util::StreamExt;
    use http_body_util::BodyExt;
    let name = request.match_info().get("kg").unwrap_or(chat.default_kg());
    let service = endpoints.get(name).ok_or_else(|| chat.unknown_kg(name))?;
    // actix speaks `http` 0.2, rmcp `http` 1: the request crosses as strings and bytes.
    let mut forwarded = http::Request::builder()
        .method(request.method().as_str())
        .uri(request.uri().to_string());
    for (name, value) in request.headers() {
        forwarded = forwarded.header(name.as_str(), value.as_bytes());
    }
    let mut forwarded = forwarded
        .body(http_body_util::Full::new(body))
        .map_err(|e| ServerError::Malformed(e.to_string()))?;
    forwarded.extensions_mut().insert(caller);
    let response = service.handle(forwarded).await;
    let (parts, body) = response.into_parts();
    let status = actix_web::http::StatusCode::from_u16(parts.status.as_u16())
        .map_err(|e| ServerError::Internal(e.to_string()))?;
    let mut reply = actix_web::HttpResponse::build(status);
    for (name, value) in &parts.headers {
        reply.append_header((name.as_str(), value.as_bytes()));
    }
    let chunks = body
        .into_data_stream()
        .map(|chunk| chunk.map_err(|never| match never {}));
    Ok(reply.streaming::<_, std::convert::Infallible>(chunks))
}

/// Serves `server` over stdin/stdout until the client closes it.
pub async fn serve_stdio(server: McpServer) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt;
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_keys_sessions_never_push_out_anothers() {
        let (alice, mallory) = (Some(Owner::of_api_key("alice")), Some(Owner::of_api_key("mallory")));
        let mut sessions = Vec::new();
        remember(&mut sessions, &alice, "a1", Dialogue::default(), 2);
        for i in 0..50 {
            remember(&mut sessions, &mallory, &format!("m{i}"), Dialogue::default(), 2);
        }
        let names: Vec<&str> = sessions.iter().map(|(_, n, _)| n.as_str()).collect();
        assert_eq!(names, ["a1", "m48", "m49"]);
        remember(&mut sessions, &alice, "a2", Dialogue::default(), 2);
        remember(&mut sessions, &alice, "a3", Dialogue::default(), 2);
        let alices: Vec<&str> = sessions
            .iter()
            .filter(|(o, _, _)| *o == alice)
            .map(|(_, n, _)| n.as_str())
            .collect();
        assert_eq!(alices, ["a2", "a3"]);
    }
}
