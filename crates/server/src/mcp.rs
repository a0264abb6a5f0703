//! A Model Context Protocol server (the official Rust SDK, `rmcp`): assistants and IDE agents
//! ask the knowledge graph through tools. `chatty-kg mcp` serves it over stdio.
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
//! Errors are MCP errors whose `data.kind` is the REST API's stable kind (`empty_question`,
//! `graph`, `llm`, `retries_exhausted`, `malformed_message`, …).

use chatty_kg_agents::{AgentError, Dialogue, Explanation, Mode, Pipeline};
use chatty_kg_graph::{GraphError, QueryResults, term_text};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ErrorData, Implementation, ServerCapabilities, ServerInfo};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::Mutex;

/// Rows a `sparql` call returns unless it asks for fewer.
const DEFAULT_ROWS: usize = 100;
/// Dialogues kept by `ask` with a session (the oldest is dropped beyond).
const MAX_SESSIONS: usize = 1000;
/// Answers per turn kept for later questions (L).
const CONTEXT_ANSWERS: usize = 100;

/// The MCP server over one knowledge graph.
#[derive(Clone)]
pub struct McpServer {
    name: String,
    pipeline: Arc<Pipeline>,
    sessions: Arc<Mutex<Vec<(String, Dialogue)>>>,
    tool_router: ToolRouter<Self>,
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
        GraphError::NotReadOnly { .. } | GraphError::FunctionNotAllowed { .. } => "refused",
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
        Self {
            name: name.into(),
            pipeline,
            sessions: Arc::default(),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Answer a question from the knowledge graph. Returns the answer text, the \
        answer values (with labels and the triples behind each), the SPARQL that ran and how the \
        question's entities were linked. Give a session name to continue a dialogue."
    )]
    async fn ask(&self, Parameters(args): Parameters<AskArgs>) -> Result<String, ErrorData> {
        if !args.question.chars().any(char::is_alphanumeric) {
            return Err(error("empty_question", "the question is empty"));
        }
        let history = match &args.session {
            Some(id) => {
                let sessions = self.sessions.lock().await;
                sessions
                    .iter()
                    .find(|(name, _)| name == id)
                    .map(|(_, d)| d.turns.clone())
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        let mode = if args.session.is_some() {
            Mode::MultiTurn
        } else {
            Mode::SingleTurn
        };
        let e = self
            .pipeline
            .ask(&args.question, mode, &history)
            .await
            .map_err(agent_error)?;
        if let Some(id) = &args.session {
            let mut sessions = self.sessions.lock().await;
            match sessions.iter_mut().find(|(name, _)| name == id) {
                Some((_, dialogue)) => dialogue.record(&e, CONTEXT_ANSWERS),
                None => {
                    let mut dialogue = Dialogue::default();
                    dialogue.record(&e, CONTEXT_ANSWERS);
                    sessions.push((id.clone(), dialogue));
                    if sessions.len() > MAX_SESSIONS {
                        sessions.remove(0);
                    }
                }
            }
        }
        text(&answer_json(&e, args.session.as_deref()))
    }

    #[tool(description = "Search the knowledge graph's entities by name. Returns IRIs and labels, best first.")]
    async fn entities(&self, Parameters(args): Parameters<EntitiesArgs>) -> Result<String, ErrorData> {
        let limit = args.limit.unwrap_or(10).clamp(1, 1000);
        let found = self
            .pipeline
            .context()
            .kg
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
    async fn sparql(&self, Parameters(args): Parameters<SparqlArgs>) -> Result<String, ErrorData> {
        let kg = &self.pipeline.context().kg;
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
    async fn describe(&self, Parameters(args): Parameters<DescribeArgs>) -> Result<String, ErrorData> {
        let kg = self.pipeline.context().kg.as_ref();
        let limit = args.limit.unwrap_or(crate::explore::DEFAULT_TRIPLES);
        text(
            &crate::explore::describe(kg, &args.iri, limit)
                .await
                .map_err(graph_error)?,
        )
    }

    #[tool(description = "The knowledge graph this server answers from.")]
    async fn list_kgs(&self) -> Result<String, ErrorData> {
        text(&json!([{"name": self.name, "description": self.pipeline.context().kg.describe()}]))
    }
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
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("chatty-kg", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Answers questions from a knowledge graph (RDF) with the SPARQL it ran: use `ask` for \
             questions, `entities` to find a vertex by name, `describe` to see what the graph says \
             of it, `sparql` for a read-only query.",
            )
    }
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
