//! `chatty-kg serve`: the WebSocket chat (`/ws`, [`ws`]), the REST API ([`rest`]), Prometheus
//! metrics, the web chat page (`/`, [`web`]), the OpenAI-compatible chat ([`openai_api`]) and
//! MCP over streamable HTTP (`/mcp`, [`mcp`]), over one [`ChatService`].
//!
//! [`Server::start`] sizes the connection caps to the process's open files ([`connections`]),
//! opens everything the configuration names (each knowledge graph, the models once for all of
//! them, the session database) and binds; [`Server::run`] serves until SIGTERM or
//! SIGINT and then shuts down once, in order: new questions are refused, WebSocket connections
//! without an answer under way close with 1001, answers under way get `shutdown_grace_secs` to
//! finish (and are written to disk before they are sent), then HTTP stops and the session
//! database is flushed. A turn is acknowledged only after it is on disk, so nothing
//! acknowledged is lost, even to SIGKILL.

pub mod auth;
pub mod connections;
pub mod error;
pub mod examples;
pub mod explore;
pub mod feedback;
pub mod limits;
pub mod mcp;
pub mod metrics;
pub mod openai_api;
pub mod origin;
pub mod protocol;
pub mod rest;
pub mod service;
pub mod sse;
pub mod text2sparql;
pub mod web;
pub mod ws;

pub use error::ServerError;
pub use service::{Caller, ChatService};

use actix_web::{App, HttpServer, web as actix};
use auth::ApiKeys;
use chatty_kg_agents::{AgentContext, Pipeline};
use chatty_kg_config::Config;
use chatty_kg_dialogue::{DialogueStore, PostgresStore, SledStore};
use metrics::Metrics;
use rest::HealthInfo;
use service::{KgInfo, KnowledgeGraphEntry, Limits};
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;
use ws::{Shutdown, WsSettings};

pub struct Server {
    addrs: Vec<SocketAddr>,
    server: actix_web::dev::Server,
    service: Arc<ChatService>,
    shutdown: Shutdown,
    grace: Duration,
    sweep_every: Option<Duration>,
}

/// Refuses to serve without API keys on an address others can reach.
fn check_exposure(config: &Config, addrs: &[SocketAddr], keys: &ApiKeys) -> Result<(), ServerError> {
    let server = &config.server;
    if !keys.required() && !server.allow_unauthenticated && addrs.iter().any(|a| !a.ip().is_loopback()) {
        return Err(ServerError::Start(format!(
            "{} is reachable from other machines and no API key is configured: set server.api_keys \
             (or CHATTY_KG_SERVER__API_KEYS='[\"...\"]'), bind 127.0.0.1, or set \
             server.allow_unauthenticated = true behind your own authenticating proxy",
            server.bind
        )));
    }
    Ok(())
}

impl Server {
    /// Opens the knowledge graphs, models and sessions, and binds the listening socket.
    pub async fn start(config: &Config) -> Result<Self, ServerError> {
        let settings = &config.server;
        let addrs: Vec<SocketAddr> = settings
            .bind
            .to_socket_addrs()
            .map_err(|e| ServerError::Start(format!("cannot resolve bind address {:?}: {e}", settings.bind)))?
            .collect();
        let keys = ApiKeys::new(&settings.api_keys)?;
        check_exposure(config, &addrs, &keys)?;
        // Before the stores open their files: the soft limit on open files is raised here.
        let connections = connections::fit_to_descriptors(connections::ConnectionCaps {
            total: settings.max_connections,
            per_key: settings.max_connections_per_key,
        });

        let llm = config.chat_model()?;
        let embedder = config.embedder()?;
        let prompts = Arc::new(config.prompts()?);
        let mut kgs = BTreeMap::new();
        for (name, kg) in &config.kgs {
            let graph = kg.open(name)?;
            let info = KgInfo {
                name: name.clone(),
                backend: if kg.store.is_some() { "embedded" } else { "endpoint" },
                location: graph.describe(),
                default: *name == config.default_kg,
            };
            let ctx = AgentContext {
                kg: graph,
                llm: llm.clone(),
                embedder: embedder.clone(),
                prompts: prompts.clone(),
                params: config.agents.clone(),
                examples: Default::default(),
            };
            kgs.insert(
                name.clone(),
                KnowledgeGraphEntry {
                    info,
                    pipeline: Pipeline::new(ctx),
                },
            );
        }
        let retention = (settings.session_retention_hours > 0)
            .then(|| Duration::from_secs(settings.session_retention_hours * 3600));
        let store: Arc<dyn DialogueStore> = match &settings.sessions_url {
            Some(url) => Arc::new(PostgresStore::connect(url, retention).await?),
            None => Arc::new(SledStore::open(&settings.sessions_dir(), retention)?),
        };
        let metrics = Metrics::new().map_err(|e| ServerError::Start(format!("metrics: {e}")))?;
        let limits = Limits {
            max_question_chars: settings.max_question_chars,
            answer_timeout: Duration::from_secs(settings.answer_timeout_secs),
            max_queued: settings.max_queued_answers,
            max_stored_answers: settings.max_stored_answers,
            rate: limits::RateLimits {
                sessions_per_hour: settings.max_sessions_per_hour_per_key,
                questions_per_minute: settings.max_questions_per_minute_per_key,
            },
            context_answers: config.agents.context_answers,
            context_turns: config.agents.context_turns,
            connections,
        };
        let service = Arc::new(ChatService::new(
            kgs,
            config.default_kg.clone(),
            store,
            metrics,
            limits,
            settings.max_concurrent_answers,
        )?);
        let examples = service.load_examples().await?;
        if examples > 0 {
            tracing::info!(examples, "examples from feedback loaded");
        }

        let grace = Duration::from_secs(settings.shutdown_grace_secs);
        let shutdown = Shutdown::default();
        let ws_settings = WsSettings {
            max_message_bytes: settings.max_message_bytes,
            max_frame_bytes: settings.max_frame_bytes,
            ping: Duration::from_secs(settings.ws_ping_secs.max(1)),
            idle_timeout: Duration::from_secs(settings.ws_idle_timeout_secs),
            shutdown_grace: grace,
        };
        let info = llm.info();
        let health = HealthInfo {
            version: env!("CARGO_PKG_VERSION"),
            llm: format!("{} ({})", info.model, info.backend),
            api_keys_required: keys.required(),
            model: llm.clone(),
        };
        let origins = actix::Data::new(origin::Origins::new(
            &settings.allowed_hosts,
            &settings.allowed_origins,
            keys.required(),
        ));
        let keys = actix::Data::new(keys);
        let mut mcp_services = BTreeMap::new();
        for name in config.kgs.keys() {
            let server = mcp::McpServer::served(service.clone(), name)?;
            mcp_services.insert(name.clone(), mcp::http_service(server));
        }
        let mcp_endpoints = actix::Data::new(mcp_services);
        let data = actix::Data::from(service.clone());
        let (ws_data, shutdown_data, health) = (
            actix::Data::new(ws_settings),
            actix::Data::new(shutdown.clone()),
            actix::Data::new(health),
        );
        let text2sparql = actix::Data::new(text2sparql::Text2Sparql {
            open: settings.text2sparql.open,
            datasets: settings.text2sparql.datasets.clone(),
        });
        let json_limit = settings.max_message_bytes;
        let mut http = HttpServer::new(move || {
            App::new()
                .wrap(actix_web::middleware::from_fn(origin::guard))
                .app_data(origins.clone())
                .app_data(data.clone())
                .app_data(keys.clone())
                .app_data(ws_data.clone())
                .app_data(shutdown_data.clone())
                .app_data(health.clone())
                .app_data(mcp_endpoints.clone())
                .app_data(text2sparql.clone())
                .app_data(rest::json_config(json_limit))
                .app_data(rest::query_config())
                .app_data(actix::PayloadConfig::new(json_limit))
                .configure(rest::routes)
                .configure(openai_api::routes)
                .configure(text2sparql::routes)
                .configure(web::routes)
                .route("/ws", actix::get().to(ws::websocket))
                .route("/mcp", actix::route().to(mcp::http_handler))
                .route("/mcp/{kg}", actix::route().to(mcp::http_handler))
        })
        .disable_signals()
        // Stage events are small writes in a row: without TCP_NODELAY each waited for the
        // client's delayed ACK, adding ~40 ms to every WebSocket answer (benches/interfaces.rs).
        .tcp_nodelay(true)
        // A client that closes its socket has left: drop its request's handler (a question still
        // waiting for its turn is then dropped too) instead of keeping the half-closed connection.
        .h1_allow_half_closed(false)
        // The answers under way were drained before HTTP stops; this only bounds the rest.
        .shutdown_timeout(5)
        .max_connections(50_000);
        if settings.workers > 0 {
            http = http.workers(settings.workers);
        }
        let http = http
            .bind(addrs.as_slice())
            .map_err(|e| ServerError::Start(format!("cannot listen on {}: {e}", settings.bind)))?;
        let addrs = http.addrs();
        Ok(Self {
            addrs,
            server: http.run(),
            service,
            shutdown,
            grace,
            sweep_every: retention.map(|r| (r / 24).clamp(Duration::from_secs(60), Duration::from_secs(3600))),
        })
    }

    /// Where the server listens (the real port when the configuration said 0).
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully (see the module docs).
    pub async fn run(self) -> Result<(), ServerError> {
        let handle = self.server.handle();
        let server = tokio::spawn(self.server);
        let sweeper = self.sweep_every.map(|every| {
            let store = self.service.store().clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(every);
                loop {
                    tick.tick().await;
                    match store.expire().await {
                        Ok(0) => {}
                        Ok(n) => tracing::info!(sessions = n, "expired sessions removed"),
                        Err(e) => tracing::warn!(error = %e, "expiring sessions failed"),
                    }
                }
            })
        });
        wait_for_signal().await?;
        eprintln!(
            "shutting down: finishing the answers under way (at most {:?})",
            self.grace
        );
        self.shutdown.0.cancel();
        let abandoned = self.service.drain(self.grace).await;
        if abandoned > 0 {
            eprintln!("{abandoned} answers did not finish within the grace period and were cancelled");
        }
        handle.stop(true).await;
        if let Some(sweeper) = sweeper {
            sweeper.abort();
        }
        server
            .await
            .map_err(|e| ServerError::Internal(e.to_string()))?
            .map_err(|e| ServerError::Internal(e.to_string()))?;
        self.service.store().flush().await?;
        eprintln!("stopped");
        Ok(())
    }
}

async fn wait_for_signal() -> Result<(), ServerError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate =
        signal(SignalKind::terminate()).map_err(|e| ServerError::Start(format!("cannot watch SIGTERM: {e}")))?;
    tokio::select! {
        _ = terminate.recv() => {}
        result = tokio::signal::ctrl_c() => {
            result.map_err(|e| ServerError::Start(format!("cannot watch SIGINT: {e}")))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_keys_only_on_loopback() {
        let mut config = Config::default();
        let loopback: Vec<SocketAddr> = vec!["127.0.0.1:1".parse().unwrap(), "[::1]:1".parse().unwrap()];
        let exposed: Vec<SocketAddr> = vec!["0.0.0.0:1".parse().unwrap()];
        let none = ApiKeys::new(&[]).unwrap();
        assert!(check_exposure(&config, &loopback, &none).is_ok());
        let refused = check_exposure(&config, &exposed, &none).unwrap_err().to_string();
        assert!(refused.contains("api_keys"), "{refused}");
        let keys = ApiKeys::new(&["k".into()]).unwrap();
        assert!(check_exposure(&config, &exposed, &keys).is_ok());
        config.server.allow_unauthenticated = true;
        assert!(check_exposure(&config, &exposed, &none).is_ok());
    }
}
