//! The one typed configuration of chatty-kg.
//!
//! Sources, later ones winning: built-in defaults (the paper's parameters), the TOML file
//! (`--config FILE`, else `$XDG_CONFIG_HOME/chatty-kg/config.toml` when it exists), then
//! environment variables `CHATTY_KG_<SECTION>__<FIELD>` (e.g. `CHATTY_KG_AGENTS__VLIMIT=100`,
//! `CHATTY_KG_DEFAULT_KG=dbpedia`). `config.example.toml` at the repository root documents every
//! field.

use chatty_kg_graph::{EmbeddedStore, EndpointSettings, GraphError, GraphSettings, KnowledgeGraph, SparqlEndpoint};
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Top-level fields that an environment variable may set directly (`CHATTY_KG_DEFAULT_KG`).
/// Any other override names a section (`CHATTY_KG_AGENTS__THETA`), so variables such as
/// `CHATTY_KG_LOG` or `CHATTY_KG_STORE`, read elsewhere, never reach the configuration.
const TOP_LEVEL_ENV: [&str; 1] = ["default_kg"];

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
}

/// The paper's parameters (θ, L, vlimit, query_num).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AgentParameters {
    /// θ: retries of an agent whose LLM output fails validation.
    pub theta: u32,
    /// L: answers kept per previous turn in the dialogue context.
    pub context_answers: usize,
    /// vlimit: entity candidates fetched per mention.
    pub vlimit: usize,
    /// query_num: candidate queries kept before predicate selection.
    pub query_num: usize,
}

impl Default for AgentParameters {
    fn default() -> Self {
        Self {
            theta: 3,
            context_answers: 100,
            vlimit: 600,
            query_num: 40,
        }
    }
}

/// `$XDG_DATA_HOME/chatty-kg/store` (usually `~/.local/share/chatty-kg/store`).
pub fn default_store_dir() -> PathBuf {
    directories::ProjectDirs::from("", "", "chatty-kg")
        .map_or_else(|| PathBuf::from(".chatty-kg"), |d| d.data_dir().to_path_buf())
        .join("store")
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
        figment.extract().map_err(|e| ConfigError::Invalid(Box::new(e)))
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
