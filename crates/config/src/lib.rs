//! The one typed configuration of chatty-kg.
//!
//! Sources, later ones winning: built-in defaults (the paper's parameters), the TOML file
//! (`--config FILE`, else `$XDG_CONFIG_HOME/chatty-kg/config.toml` when it exists), then
//! environment variables `CHATTY_KG_<SECTION>__<FIELD>` (e.g. `CHATTY_KG_AGENTS__VLIMIT=100`,
//! `CHATTY_KG_DEFAULT_KG=dbpedia`). `config.example.toml` at the repository root documents every
//! field.

use chatty_kg_agents::AgentContext;
pub use chatty_kg_agents::AgentParameters;
use chatty_kg_embed::{CachedEmbedder, EmbedError, Embedder, OpenAiEmbedder, OpenAiEmbeddingSettings};
use chatty_kg_graph::{EmbeddedStore, EndpointSettings, GraphError, GraphSettings, KnowledgeGraph, SparqlEndpoint};
use chatty_kg_llm::LlamaSettings;
#[cfg(feature = "llama")]
use chatty_kg_llm::llama::LlamaChatModel;
use chatty_kg_llm::openai::{OpenAiChatModel, OpenAiSettings};
use chatty_kg_llm::prompts::{PromptError, PromptLibrary};
use chatty_kg_llm::scripted::ScriptedChatModel;
use chatty_kg_llm::{ChatModel, LlmError};
use chatty_kg_models::{ModelError, ModelStore};
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Top-level fields that an environment variable may set directly (`CHATTY_KG_DEFAULT_KG`).
/// Any other override names a section (`CHATTY_KG_AGENTS__THETA`), so variables such as
/// `CHATTY_KG_LOG` or `CHATTY_KG_STORE`, read elsewhere, never reach the configuration.
const TOP_LEVEL_ENV: [&str; 3] = ["default_kg", "prompts_dir", "models_dir"];

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration file {path} does not exist")]
    Missing { path: PathBuf },
    #[error("invalid configuration: {0}")]
    Invalid(Box<figment::Error>),
    #[error("knowledge graph {name:?} is not configured (configured: {known})")]
    UnknownKg { name: String, known: String },
    #[error("knowledge graph {name:?} must set exactly one of `store` and `endpoint`")]
    Backend { name: String },
    #[error("invalid configuration: {field} {problem}")]
    Value { field: String, problem: String },
    #[error("llm.backend = \"scripted\" needs llm.script, a script file (the scripted model is for tests)")]
    NoScript,
    #[error(
        "llm.backend = \"embedded\" needs llama.cpp, and this build has none (built without the `llama` \
         feature): set llm.backend = \"openai\" and llm.openai.base_url to your model server"
    )]
    NoEmbeddedLlm,
    #[error(
        "embeddings.backend = \"minilm\" needs candle, and this build has none (built without the \
         `candle` feature): set embeddings.backend = \"openai\" and embeddings.openai.base_url to your \
         embedding server"
    )]
    NoLocalEmbeddings,
}

/// The whole configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The knowledge graph used when a command names none.
    pub default_kg: String,
    /// Knowledge graphs by name.
    pub kgs: BTreeMap<String, KgConfig>,
    /// Parameters of the agents (the paper's defaults).
    pub agents: AgentParameters,
    /// The chat model the agents use.
    pub llm: LlmConfig,
    /// The sentence-embedding model of relation linking.
    pub embeddings: EmbeddingConfig,
    /// A directory of prompt templates replacing the built-in ones file by file.
    pub prompts_dir: Option<PathBuf>,
    /// Where models are fetched to and looked up (default: `$CHATTY_KG_MODELS`, else
    /// `$XDG_DATA_HOME/chatty-kg/models`).
    pub models_dir: Option<PathBuf>,
    /// `chatty-kg serve`: address, sessions, limits, authentication.
    pub server: ServerConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            default_kg: "default".into(),
            kgs: BTreeMap::from([(
                "default".into(),
                KgConfig {
                    store: Some(default_store_dir()),
                    endpoint: None,
                    graph: GraphSettings::default(),
                },
            )]),
            agents: AgentParameters::default(),
            llm: LlmConfig::default(),
            embeddings: EmbeddingConfig::default(),
            prompts_dir: None,
            models_dir: None,
            server: ServerConfig::default(),
        }
    }
}

/// The HTTP/WebSocket server (`chatty-kg serve`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Address and port to listen on.
    pub bind: String,
    /// Where sessions and their dialogues are kept (a sled database; default:
    /// `$XDG_DATA_HOME/chatty-kg/sessions`), unless `sessions_url` is set.
    pub data_dir: Option<PathBuf>,
    /// A PostgreSQL URL (`postgres://user:password@host:5432/database`) to keep the sessions in
    /// instead, shared by every replica that names it.
    pub sessions_url: Option<String>,
    /// API keys accepted (`Authorization: Bearer KEY`, `X-API-Key: KEY` or `?api_key=KEY`). With
    /// none, the server answers anyone and only starts on a loopback address.
    pub api_keys: Vec<String>,
    /// Start without API keys on a non-loopback address anyway (behind your own proxy).
    pub allow_unauthenticated: bool,
    /// Host names (the `Host` header, without port) the server answers to besides IP addresses
    /// and `localhost`; other names get 421, which stops DNS-rebinding pages. Empty with API keys
    /// configured: any name. `"*"`: any name.
    pub allowed_hosts: Vec<String>,
    /// Web pages (`scheme://host[:port]`) allowed to call the server besides its own page; a
    /// request with another `Origin` gets 403. `"*"`: any page.
    pub allowed_origins: Vec<String>,
    /// Sessions untouched for this many hours are deleted; 0 keeps them forever.
    pub session_retention_hours: u64,
    /// Longest question accepted, in characters.
    pub max_question_chars: usize,
    /// Largest WebSocket message or JSON body parsed; a larger one gets an error frame (the
    /// connection stays).
    pub max_message_bytes: usize,
    /// Largest WebSocket frame read at all; a larger one closes the connection with code 1009
    /// (the session stays and can be resumed).
    pub max_frame_bytes: usize,
    /// Seconds between WebSocket pings.
    pub ws_ping_secs: u64,
    /// A WebSocket whose client asks nothing for this long (no question, no resume, no rating
    /// accepted, and no answer under way) is closed with a reason; the session stays. Pings,
    /// pongs and messages refused with an error do not count as asking.
    pub ws_idle_timeout_secs: u64,
    /// WebSocket connections and event streams (server-sent events) open at once, all callers
    /// together; more get 503 `server_busy`. Lowered at start when the process's file
    /// descriptors cannot hold them and a reserve (a warning says so).
    pub max_connections: usize,
    /// WebSocket connections and event streams one API key may hold open at once; more get 429
    /// `too_many_connections`. Without API keys only `max_connections` applies.
    pub max_connections_per_key: usize,
    /// Questions answered at the same time; more wait their turn.
    pub max_concurrent_answers: usize,
    /// Questions that may wait for their turn; more get 429 `overloaded` at once.
    pub max_queued_answers: usize,
    /// Answer values kept in a stored turn (and sent); more are cut and the answer is marked
    /// truncated.
    pub max_stored_answers: usize,
    /// Sessions one API key (or, without keys, everyone) may create per hour; 0 = unlimited.
    pub max_sessions_per_hour_per_key: u32,
    /// Questions one API key (or, without keys, everyone) may ask per minute; 0 = unlimited.
    pub max_questions_per_minute_per_key: u32,
    /// An answer taking longer than this (waiting included) is abandoned with an error.
    pub answer_timeout_secs: u64,
    /// On SIGTERM/SIGINT, answers under way get this long to finish.
    pub shutdown_grace_secs: u64,
    /// HTTP worker threads; 0 means one per core.
    pub workers: usize,
    /// The TEXT2SPARQL challenge's API (`GET /text2sparql?dataset=&question=`).
    pub text2sparql: Text2SparqlConfig,
}

/// The TEXT2SPARQL challenge's API: a dataset IRI and a question in, the SPARQL out.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Text2SparqlConfig {
    /// Answer requests that carry no API key (the challenge's evaluator sends none); they count
    /// in a rate of their own (`max_questions_per_minute_per_key`) and take answer permits like
    /// questions. Off, the route needs a key like every other.
    pub open: bool,
    /// Dataset IRIs and the configured knowledge graph each names
    /// (`"https://text2sparql.aksw.org/2026/dbpedia/" = "dbpedia"`); a knowledge graph's own name
    /// is a dataset too.
    pub datasets: BTreeMap<String, String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8765".into(),
            data_dir: None,
            sessions_url: None,
            api_keys: Vec::new(),
            allow_unauthenticated: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            session_retention_hours: 24 * 30,
            max_question_chars: 1000,
            max_message_bytes: 16 * 1024,
            max_frame_bytes: 1024 * 1024,
            ws_ping_secs: 20,
            ws_idle_timeout_secs: 600,
            max_connections: 512,
            max_connections_per_key: 16,
            max_concurrent_answers: 4,
            max_queued_answers: 64,
            max_stored_answers: 1000,
            max_sessions_per_hour_per_key: 1000,
            max_questions_per_minute_per_key: 120,
            answer_timeout_secs: 300,
            shutdown_grace_secs: 30,
            workers: 0,
            text2sparql: Text2SparqlConfig::default(),
        }
    }
}

impl ServerConfig {
    /// The sessions database directory in use.
    pub fn sessions_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(|| data_dir().join("sessions"))
    }
}

/// Which chat model backend runs, and the settings of each.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    pub backend: LlmBackend,
    /// The embedded llama.cpp model (`backend = "embedded"`).
    pub embedded: LlamaSettings,
    /// An OpenAI-compatible server (`backend = "openai"`).
    pub openai: OpenAiSettings,
    /// Script of canned replies (`backend = "scripted"`, tests only).
    pub script: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum LlmBackend {
    /// A GGUF model in-process (llama.cpp). Works offline.
    #[default]
    Embedded,
    /// Any OpenAI-compatible chat-completions server.
    Openai,
    /// Canned replies from `llm.script`; for deterministic tests only.
    Scripted,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingConfig {
    /// `minilm` (in-process on candle) or `openai` (an OpenAI-compatible embedding server).
    pub backend: EmbeddingBackend,
    /// For `minilm`: a model name from the catalog or a directory with config.json,
    /// tokenizer.json and model.safetensors (a BERT sentence-transformer, or an MPNet one such as
    /// all-mpnet-base-v2: its config's `model_type` decides).
    pub model: String,
    /// For `openai`: the server.
    pub openai: OpenAiEmbeddingSettings,
    /// Embeddings of labels kept in memory (384 floats each for MiniLM).
    pub cache_size: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum EmbeddingBackend {
    #[default]
    Minilm,
    Openai,
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        Self {
            backend: EmbeddingBackend::Minilm,
            model: chatty_kg_models::catalog::DEFAULT_EMBEDDING_MODEL.into(),
            openai: OpenAiEmbeddingSettings::default(),
            cache_size: 100_000,
        }
    }
}

/// One knowledge graph: an embedded store directory or a remote endpoint, and how to read it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct KgConfig {
    /// Directory of an embedded store (created by `chatty-kg load`).
    pub store: Option<PathBuf>,
    /// A remote SPARQL endpoint.
    pub endpoint: Option<EndpointSettings>,
    /// Label predicates, predicate blacklist, row and time limits.
    pub graph: GraphSettings,
}

impl KgConfig {
    /// Opens the configured backend.
    pub fn open(&self, name: &str) -> Result<Arc<dyn KnowledgeGraph>, OpenError> {
        match (&self.store, &self.endpoint) {
            (Some(store), None) => Ok(Arc::new(EmbeddedStore::open(store, self.graph.clone())?)),
            (None, Some(endpoint)) => Ok(Arc::new(SparqlEndpoint::new(endpoint.clone(), self.graph.clone())?)),
            _ => Err(OpenError::Config(ConfigError::Backend { name: name.into() })),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
}

/// `$XDG_DATA_HOME/chatty-kg` (usually `~/.local/share/chatty-kg`).
fn data_dir() -> PathBuf {
    directories::ProjectDirs::from("", "", "chatty-kg")
        .map_or_else(|| PathBuf::from(".chatty-kg"), |d| d.data_dir().to_path_buf())
}

/// `$XDG_DATA_HOME/chatty-kg/store` (usually `~/.local/share/chatty-kg/store`).
pub fn default_store_dir() -> PathBuf {
    data_dir().join("store")
}

/// `$XDG_CONFIG_HOME/chatty-kg/config.toml`.
pub fn default_config_file() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "chatty-kg").map(|d| d.config_dir().join("config.toml"))
}

impl Config {
    /// Defaults, then `file` (or the default file when it exists), then the environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        match file {
            Some(path) if !path.exists() => return Err(ConfigError::Missing { path: path.into() }),
            Some(path) => figment = figment.merge(Toml::file_exact(path)),
            None => {
                if let Some(path) = default_config_file().filter(|p| p.exists()) {
                    figment = figment.merge(Toml::file_exact(path));
                }
            }
        }
        let env = Env::prefixed("CHATTY_KG_")
            .filter(|key| {
                let key = key.as_str().to_ascii_lowercase();
                key.contains("__") || TOP_LEVEL_ENV.contains(&key.as_str())
            })
            .split("__");
        figment = figment.merge(env);
        let config: Config = figment.extract().map_err(|e| ConfigError::Invalid(Box::new(e)))?;
        config.validate()?;
        Ok(config)
    }

    /// Refuses values the program cannot work with (instead of panicking on them later): blank
    /// API keys, infinite or absurd timeouts, row caps below what a query needs.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const DAY: u64 = 24 * 3600;
        let bad = |field: &str, problem: String| {
            Err(ConfigError::Value {
                field: field.into(),
                problem,
            })
        };
        let range = |field: &str, value: u64, min: u64, max: u64| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                bad(field, format!("is {value}; it must be between {min} and {max}"))
            }
        };
        let seconds = |field: &str, value: f64| {
            if value.is_finite() && value > 0.0 && value <= DAY as f64 {
                Ok(())
            } else {
                bad(
                    field,
                    format!("is {value}; it must be a number of seconds above 0 and at most {DAY}"),
                )
            }
        };
        let server = &self.server;
        if server.api_keys.iter().any(|k| k.trim().is_empty()) {
            return bad(
                "server.api_keys",
                "contains an empty key (it would match a request with none)".into(),
            );
        }
        if let Some(host) = server
            .allowed_hosts
            .iter()
            .find(|h| h.trim() != "*" && (h.contains(':') || h.contains('/') || h.trim().is_empty()))
        {
            return bad(
                "server.allowed_hosts",
                format!("has {host:?}; a host name has no scheme and no port"),
            );
        }
        if let Some(origin) = server
            .allowed_origins
            .iter()
            .find(|o| o.trim() != "*" && !o.starts_with("http://") && !o.starts_with("https://"))
        {
            return bad(
                "server.allowed_origins",
                format!("has {origin:?}; an origin is scheme://host[:port]"),
            );
        }
        if let Some((dataset, kg)) = server
            .text2sparql
            .datasets
            .iter()
            .find(|(_, kg)| !self.kgs.contains_key(kg.as_str()))
        {
            return bad(
                "server.text2sparql.datasets",
                format!(
                    "maps {dataset:?} to {kg:?}, which is not a configured knowledge graph (configured: {})",
                    self.kgs.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            );
        }
        range(
            "server.session_retention_hours",
            server.session_retention_hours,
            0,
            100 * 365 * 24,
        )?;
        range("server.answer_timeout_secs", server.answer_timeout_secs, 1, DAY)?;
        range("server.shutdown_grace_secs", server.shutdown_grace_secs, 0, DAY)?;
        range("server.ws_ping_secs", server.ws_ping_secs, 1, 3600)?;
        range("server.ws_idle_timeout_secs", server.ws_idle_timeout_secs, 1, 30 * DAY)?;
        range("server.max_connections", server.max_connections as u64, 1, 1_000_000)?;
        range(
            "server.max_connections_per_key",
            server.max_connections_per_key as u64,
            1,
            server.max_connections as u64,
        )?;
        range(
            "server.max_concurrent_answers",
            server.max_concurrent_answers as u64,
            1,
            10_000,
        )?;
        range(
            "server.max_queued_answers",
            server.max_queued_answers as u64,
            0,
            100_000,
        )?;
        range(
            "server.max_stored_answers",
            server.max_stored_answers as u64,
            1,
            1_000_000,
        )?;
        range(
            "server.max_question_chars",
            server.max_question_chars as u64,
            1,
            1 << 20,
        )?;
        range(
            "server.max_message_bytes",
            server.max_message_bytes as u64,
            1024,
            1 << 30,
        )?;
        range(
            "server.max_frame_bytes",
            server.max_frame_bytes as u64,
            server.max_message_bytes as u64,
            1 << 30,
        )?;
        range("llm.openai.timeout_secs", self.llm.openai.timeout_secs, 1, DAY)?;
        for (name, kg) in &self.kgs {
            let field = |f: &str| format!("kgs.{name}.{f}");
            range(&field("graph.max_rows"), kg.graph.max_rows as u64, 100, 100_000_000)?;
            range(
                &field("graph.max_result_bytes"),
                kg.graph.max_result_bytes as u64,
                1024,
                1 << 40,
            )?;
            seconds(&field("graph.query_timeout_secs"), kg.graph.query_timeout_secs)?;
            if let Some(endpoint) = &kg.endpoint {
                seconds(&field("endpoint.timeout_secs"), endpoint.timeout_secs)?;
            }
        }
        Ok(())
    }

    /// The models directory in use.
    pub fn model_store(&self) -> ModelStore {
        ModelStore::new(
            self.models_dir
                .clone()
                .unwrap_or_else(chatty_kg_models::default_models_dir),
        )
    }

    /// Loads the configured chat model (for the embedded backend this loads the GGUF).
    pub fn chat_model(&self) -> Result<Arc<dyn ChatModel>, OpenError> {
        Ok(match self.llm.backend {
            #[cfg(feature = "llama")]
            LlmBackend::Embedded => {
                let path = self.model_store().resolve(&self.llm.embedded.model)?;
                Arc::new(LlamaChatModel::load(&path, &self.llm.embedded)?)
            }
            #[cfg(not(feature = "llama"))]
            LlmBackend::Embedded => return Err(ConfigError::NoEmbeddedLlm.into()),
            LlmBackend::Openai => Arc::new(OpenAiChatModel::new(self.llm.openai.clone())?),
            LlmBackend::Scripted => {
                let script = self.llm.script.as_ref().ok_or(ConfigError::NoScript)?;
                Arc::new(ScriptedChatModel::from_file(script)?)
            }
        })
    }

    /// Loads the configured sentence-embedding model behind its cache.
    pub fn embedder(&self) -> Result<Arc<dyn Embedder>, OpenError> {
        let size = self.embeddings.cache_size;
        Ok(match self.embeddings.backend {
            #[cfg(feature = "candle")]
            EmbeddingBackend::Minilm => {
                let dir = self.model_store().resolve(&self.embeddings.model)?;
                Arc::new(CachedEmbedder::new(chatty_kg_embed::load_candle(&dir)?, size))
            }
            #[cfg(not(feature = "candle"))]
            EmbeddingBackend::Minilm => return Err(ConfigError::NoLocalEmbeddings.into()),
            EmbeddingBackend::Openai => Arc::new(CachedEmbedder::new(
                OpenAiEmbedder::new(self.embeddings.openai.clone())?,
                size,
            )),
        })
    }

    /// Everything the agents need around `kg`: the chat model, the embedder, the prompts and the
    /// agent parameters (loads the models).
    pub fn agent_context(&self, kg: Arc<dyn KnowledgeGraph>) -> Result<AgentContext, OpenError> {
        Ok(AgentContext {
            kg,
            llm: self.chat_model()?,
            embedder: self.embedder()?,
            prompts: Arc::new(self.prompts()?),
            params: self.agents.clone(),
            examples: Default::default(),
        })
    }

    /// The prompt templates: built-in, overridden from `prompts_dir`.
    pub fn prompts(&self) -> Result<PromptLibrary, OpenError> {
        Ok(PromptLibrary::load(self.prompts_dir.as_deref())?)
    }

    /// The named knowledge graph, or the default one.
    pub fn kg(&self, name: Option<&str>) -> Result<(&str, &KgConfig), ConfigError> {
        let name = name.unwrap_or(&self.default_kg);
        self.kgs
            .get_key_value(name)
            .map(|(k, v)| (k.as_str(), v))
            .ok_or_else(|| ConfigError::UnknownKg {
                name: name.into(),
                known: self.kgs.keys().cloned().collect::<Vec<_>>().join(", "),
            })
    }
}

#[cfg(test)]
// figment::Jail's closures return figment::Error, which is large; it is figment's type.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_papers_parameters() {
        let config = Config::default();
        assert_eq!(
            (
                config.agents.theta,
                config.agents.context_answers,
                config.agents.vlimit,
                config.agents.query_num
            ),
            (3, 100, 600, 40)
        );
        let (name, kg) = config.kg(None).unwrap();
        assert_eq!(name, "default");
        assert!(kg.store.is_some() && kg.endpoint.is_none());
    }

    #[test]
    fn file_and_environment_override_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            r#"
default_kg = "remote"
[agents]
theta = 5
[kgs.remote.endpoint]
url = "http://127.0.0.1:8890/sparql"
search = "bif_contains"
auth = { type = "bearer", token = "secret" }
[kgs.remote.graph]
label_predicates = ["http://www.w3.org/2000/01/rdf-schema#label"]
"#,
        )
        .unwrap();
        figment::Jail::expect_with(|jail| {
            jail.set_env("CHATTY_KG_AGENTS__VLIMIT", "50");
            jail.set_env("CHATTY_KG_STORE", "/read/by/the/cli");
            jail.set_env("CHATTY_KG_LOG", "debug");
            jail.set_env("CHATTY_KG_DEFAULT_KG", "remote");
            let config = Config::load(Some(&path)).map_err(|e| e.to_string())?;
            assert_eq!(config.agents.theta, 5);
            assert_eq!(config.agents.vlimit, 50);
            let (_, kg) = config.kg(None).map_err(|e| e.to_string())?;
            let endpoint = kg.endpoint.as_ref().ok_or("no endpoint")?;
            assert_eq!(endpoint.search, chatty_kg_graph::SearchStrategy::BifContains);
            assert_eq!(kg.graph.label_predicates.len(), 1);
            assert_eq!(
                kg.graph.max_rows,
                GraphSettings::default().max_rows,
                "unset fields keep defaults"
            );
            Ok(())
        });
    }

    #[test]
    fn server_settings_come_from_file_and_environment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "[server]\nbind = \"0.0.0.0:9000\"\nsession_retention_hours = 0\n",
        )
        .unwrap();
        figment::Jail::expect_with(|jail| {
            jail.set_env("CHATTY_KG_SERVER__API_KEYS", r#"["key-one", "key-two"]"#);
            jail.set_env("CHATTY_KG_SERVER__MAX_CONCURRENT_ANSWERS", "16");
            let config = Config::load(Some(&path)).map_err(|e| e.to_string())?;
            assert_eq!(config.server.bind, "0.0.0.0:9000");
            assert_eq!(config.server.session_retention_hours, 0);
            assert_eq!(config.server.api_keys, ["key-one", "key-two"]);
            assert_eq!(config.server.max_concurrent_answers, 16);
            assert!(config.server.sessions_dir().ends_with("chatty-kg/sessions"));
            Ok(())
        });
    }

    /// The documented example must stay valid and describe the defaults.
    #[test]
    fn example_file_is_the_defaults() {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config.example.toml");
        figment::Jail::expect_with(|_| {
            let config = Config::load(Some(&example)).map_err(|e| e.to_string())?;
            assert_eq!(config, Config::default());
            Ok(())
        });
    }

    #[test]
    fn models_and_llm_backends_open_or_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config {
            models_dir: Some(dir.path().join("models")),
            ..Config::default()
        };
        let missing = config.embedder().err().unwrap().to_string();
        assert!(
            missing.contains("chatty-kg models fetch") && missing.contains("all-minilm-l6-v2"),
            "{missing}"
        );
        let missing = config.chat_model().err().unwrap().to_string();
        assert!(
            missing.contains("chatty-kg models fetch") && missing.contains("qwen2.5-coder-0.5b"),
            "{missing}"
        );

        config.llm.embedded.model = dir.path().join("nope.gguf").display().to_string();
        assert!(config.chat_model().err().unwrap().to_string().contains("nope.gguf"));
        config.llm.embedded.model = "gpt-17".into();
        let unknown = config.chat_model().err().unwrap().to_string();
        assert!(
            unknown.contains("unknown model") && unknown.contains("smollm2-135m"),
            "{unknown}"
        );

        config.llm.backend = LlmBackend::Scripted;
        assert!(matches!(
            config.chat_model(),
            Err(OpenError::Config(ConfigError::NoScript))
        ));
        let script = dir.path().join("script.json");
        std::fs::write(&script, r#"[{"agent": "qir", "contains": "alien", "replies": ["{}"]}]"#).unwrap();
        config.llm.script = Some(script.clone());
        assert_eq!(config.chat_model().unwrap().info().backend, "scripted");
        std::fs::write(&script, "not json").unwrap();
        assert!(config.chat_model().err().unwrap().to_string().contains("script.json"));

        config.llm.backend = LlmBackend::Openai;
        config.llm.openai.base_url = "http://127.0.0.1:9/v1".into();
        assert_eq!(config.chat_model().unwrap().info().backend, "openai");
        assert!(config.prompts().is_ok());
        config.prompts_dir = Some(dir.path().join("no-such-prompts"));
        assert!(matches!(config.prompts(), Err(OpenError::Prompt(_))));
    }

    #[test]
    fn llm_settings_come_from_file_and_environment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "[llm]\nbackend = \"openai\"\n[llm.openai]\nmodel = \"qwen2.5:7b\"\njson_mode = \"json_object\"\n",
        )
        .unwrap();
        figment::Jail::expect_with(|jail| {
            jail.set_env("CHATTY_KG_LLM__OPENAI__BASE_URL", "http://127.0.0.1:11434/v1");
            jail.set_env("CHATTY_KG_PROMPTS_DIR", "/etc/chatty-kg/prompts");
            let config = Config::load(Some(&path)).map_err(|e| e.to_string())?;
            assert_eq!(config.llm.backend, LlmBackend::Openai);
            assert_eq!(config.llm.openai.model, "qwen2.5:7b");
            assert_eq!(config.llm.openai.base_url, "http://127.0.0.1:11434/v1");
            assert_eq!(config.llm.openai.json_mode, chatty_kg_llm::openai::JsonMode::JsonObject);
            assert_eq!(config.llm.openai.max_retries, 3, "unset fields keep defaults");
            assert_eq!(config.prompts_dir.as_deref(), Some(Path::new("/etc/chatty-kg/prompts")));
            Ok(())
        });
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(matches!(
            Config::load(Some(Path::new("/nonexistent/chatty.toml"))),
            Err(ConfigError::Missing { .. })
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[agents]\ntheta = \"three\"\n").unwrap();
        let message = Config::load(Some(&path)).unwrap_err().to_string();
        assert!(message.contains("theta"), "{message}");
        std::fs::write(&path, "[agents]\ntheat = 3\n").unwrap();
        assert!(Config::load(Some(&path)).is_err(), "unknown fields are refused");
        // Values that would panic or disable a check later are refused when loaded, by name.
        for (toml, field) in [
            ("[server]\napi_keys = [\"\"]\n", "server.api_keys"),
            ("[server]\napi_keys = [\"k\", \"  \"]\n", "server.api_keys"),
            (
                "[server]\nallowed_origins = [\"evil.example\"]\n",
                "server.allowed_origins",
            ),
            (
                "[server]\nallowed_hosts = [\"chat.example.org:8765\"]\n",
                "server.allowed_hosts",
            ),
            (
                "[server.text2sparql.datasets]\n\"https://text2sparql.aksw.org/2026/dbpedia/\" = \"dbpedia\"\n",
                "server.text2sparql.datasets",
            ),
            (
                "[server]\nsession_retention_hours = 9223372036854775807\n",
                "server.session_retention_hours",
            ),
            ("[server]\nanswer_timeout_secs = 0\n", "server.answer_timeout_secs"),
            (
                "[server]\nmax_concurrent_answers = 0\n",
                "server.max_concurrent_answers",
            ),
            ("[server]\nmax_frame_bytes = 10\n", "server.max_frame_bytes"),
            ("[server]\nmax_connections = 0\n", "server.max_connections"),
            (
                "[server]\nmax_connections = 8\nmax_connections_per_key = 9\n",
                "server.max_connections_per_key",
            ),
            ("[kgs.default.graph]\nmax_rows = 99\n", "kgs.default.graph.max_rows"),
            (
                "[kgs.default.graph]\nmax_result_bytes = 10\n",
                "kgs.default.graph.max_result_bytes",
            ),
            (
                "[kgs.default.graph]\nquery_timeout_secs = inf\n",
                "kgs.default.graph.query_timeout_secs",
            ),
            (
                "[kgs.default.graph]\nquery_timeout_secs = nan\n",
                "kgs.default.graph.query_timeout_secs",
            ),
            (
                "[kgs.remote.endpoint]\nurl = \"http://x/sparql\"\ntimeout_secs = -1.0\n",
                "kgs.remote.endpoint.timeout_secs",
            ),
        ] {
            std::fs::write(&path, toml).unwrap();
            match Config::load(Some(&path)) {
                Err(ConfigError::Value { field: f, .. }) => assert_eq!(f, field, "{toml}"),
                other => panic!("{toml}: {other:?}"),
            }
        }
        assert!(matches!(
            Config::default().kg(Some("nope")),
            Err(ConfigError::UnknownKg { .. })
        ));
        let both = KgConfig {
            store: Some("x".into()),
            endpoint: Some(EndpointSettings::new("http://x/sparql")),
            graph: GraphSettings::default(),
        };
        assert!(matches!(
            both.open("both"),
            Err(OpenError::Config(ConfigError::Backend { .. }))
        ));
    }
}
