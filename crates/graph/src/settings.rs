//! Serializable settings of the graph layer. The configuration crate embeds these in its TOML file,
//! so every field here is documented as a user would read it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// Settings shared by every backend.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct GraphSettings {
    /// Predicates whose literal objects are entity labels (searched by entity search, and shown
    /// as the vertex's name).
    pub label_predicates: Vec<String>,
    /// Predicates whose literal objects also identify a vertex for entity search without being
    /// its name (a publication's title, a product code): "Who wrote Deep Residual Learning for
    /// Image Recognition?" finds the paper by its title while answers still show its label.
    pub name_predicates: Vec<String>,
    /// Predicates never offered to relation linking (types, labels, sameAs and the like).
    pub predicate_blacklist: Vec<String>,
    /// Predicates whose IRI contains one of these substrings are blacklisted too (e.g. `wikiPage`),
    /// and so are those whose name does, without case and spaces, where the name is a property
    /// entity's label (a Wikibase's "wiki page wiki link" under `wdt:P139`).
    pub predicate_blacklist_patterns: Vec<String>,
    /// At most this many rows are kept from one SELECT; the result says when it was truncated.
    /// SELECTs are sent with `LIMIT max_rows+1` unless they already have a smaller LIMIT.
    pub max_rows: usize,
    /// At most this many bytes of one result are read from a remote endpoint (default 64 MiB).
    /// A larger SELECT result keeps the rows that arrived whole and is marked truncated; an ASK
    /// or a result without one whole row in that many bytes is an error.
    pub max_result_bytes: usize,
    /// Wall-clock limit for one query, in seconds.
    pub query_timeout_secs: f64,
    /// User-written queries (MCP `sparql`, corrections, imported examples, the CLI's `sparql`)
    /// on an embedded store run in worker processes: at most this many at once.
    pub sparql_workers: usize,
    /// The address space one worker process may map, in MiB (its binary, the store's caches,
    /// the query's values); a query that needs more ends its worker, not the server.
    pub worker_memory_mb: u64,
    /// A vertex with no label (none of `label_predicates`) is named from its IRI's last segment
    /// ("…/Antony_Cheng" → "Antony Cheng"): in answers and explanations on every backend, and in
    /// the embedded store's label index, so entity search finds it.
    pub iri_names: bool,
    /// The language whose labels are preferred when a vertex has several (`"en"`): a label in
    /// it first, then one without a language tag, then any other. Empty: no preference.
    pub language: String,
    /// Predicates that type a vertex (`rdf:type`; Wikidata's `wdt:P31`). Empty: found from the
    /// graph by its schema profile (`chatty-kg profile` says what and why).
    pub type_predicates: Vec<String>,
    /// Predicates from a class to a broader one (`rdfs:subClassOf`; Wikidata's `wdt:P279`).
    /// Empty: found from the graph.
    pub subclass_predicates: Vec<String>,
    /// Predicates from an entity that names a predicate to that predicate (a Wikibase's
    /// `wikibase:directClaim`, `wikibase:claim`, `wikibase:statementProperty`,
    /// `wikibase:qualifier`; `owl:equivalentProperty`): a predicate without a label of its own
    /// is read by that entity's label. Empty: those of them the graph uses.
    pub property_links: Vec<String>,
    /// Predicates whose literals describe a vertex (`schema:description`), shown to tell
    /// homonyms apart and never offered as a relation. Empty: found from the graph.
    pub description_predicates: Vec<String>,
    /// An embedded store's `load` of more quads than this compacts the store at its end: the
    /// bulk loader writes each million quads as files of their own, which every lookup reads in
    /// turn until they are merged: at 10 M triples, 45 files, compacting took 10–19 s of the
    /// load and made a question's type checks 9× faster. At or below 4 M (the default) a load is
    /// left as written, at the bulk loader's own speed.
    pub compact_after_quads: u64,
}

pub const RDFS_LABEL: &str = "http://www.w3.org/2000/01/rdf-schema#label";

impl Default for GraphSettings {
    fn default() -> Self {
        Self {
            label_predicates: vec![
                RDFS_LABEL.into(),
                "http://www.w3.org/2004/02/skos/core#prefLabel".into(),
                "http://www.w3.org/2004/02/skos/core#altLabel".into(),
                "http://schema.org/name".into(),
                "http://xmlns.com/foaf/0.1/name".into(),
            ],
            predicate_blacklist: vec![
                "http://www.w3.org/1999/02/22-rdf-syntax-ns#type".into(),
                RDFS_LABEL.into(),
                "http://www.w3.org/2000/01/rdf-schema#comment".into(),
                "http://www.w3.org/2000/01/rdf-schema#seeAlso".into(),
                "http://www.w3.org/2002/07/owl#sameAs".into(),
                "http://www.w3.org/2004/02/skos/core#prefLabel".into(),
                "http://www.w3.org/2004/02/skos/core#altLabel".into(),
                "http://schema.org/name".into(),
                "http://xmlns.com/foaf/0.1/name".into(),
                "http://www.w3.org/ns/prov#wasDerivedFrom".into(),
            ],
            predicate_blacklist_patterns: vec![
                "wikiPage".into(),
                "abstract".into(),
                "thumbnail".into(),
                "depiction".into(),
            ],
            max_rows: 10_000,
            max_result_bytes: 64 << 20,
            query_timeout_secs: 30.0,
            sparql_workers: 2,
            worker_memory_mb: 2048,
            iri_names: true,
            language: "en".into(),
            name_predicates: Vec::new(),
            type_predicates: Vec::new(),
            subclass_predicates: Vec::new(),
            property_links: Vec::new(),
            description_predicates: Vec::new(),
            compact_after_quads: 4_000_000,
        }
    }
}

impl GraphSettings {
    /// The predicates entity search looks in: the label predicates, then the name predicates
    /// (each once).
    pub fn search_predicates(&self) -> Vec<String> {
        let mut all = self.label_predicates.clone();
        for p in &self.name_predicates {
            if !all.contains(p) {
                all.push(p.clone());
            }
        }
        all
    }

    /// The settings a graph's conventions depend on, as one string: a schema profile found under
    /// other ones is found again.
    pub fn conventions_key(&self) -> String {
        serde_json::json!([
            self.type_predicates,
            self.subclass_predicates,
            self.property_links,
            self.description_predicates,
            self.label_predicates,
            self.predicate_blacklist_patterns,
        ])
        .to_string()
    }

    pub fn query_timeout(&self) -> Duration {
        seconds(self.query_timeout_secs)
    }

    /// Whether relation linking must skip this predicate.
    pub fn is_blacklisted(&self, predicate: &str) -> bool {
        self.predicate_blacklist.iter().any(|p| p == predicate)
            || self
                .predicate_blacklist_patterns
                .iter()
                .any(|p| predicate.contains(p.as_str()))
    }
}

/// A timeout in seconds as a duration: at least 1 ms, and a day for values that are not finite
/// or too large (the configuration refuses those; this keeps code-built settings from panicking).
pub(crate) fn seconds(secs: f64) -> Duration {
    const DAY: f64 = 24.0 * 3600.0;
    Duration::from_secs_f64(if secs.is_finite() { secs.clamp(0.001, DAY) } else { DAY })
}

/// How entity search runs on a remote endpoint (the embedded store always uses its label index).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SearchStrategy {
    /// Virtuoso's full-text `bif:contains` (needs its full-text index; fast on big graphs).
    BifContains,
    /// Standard SPARQL 1.1: every word must occur in `LCASE(STR(?label))` (scans labels; small graphs).
    #[default]
    Contains,
    /// Standard SPARQL 1.1 `REGEX(LCASE(STR(?label)), word)` per word (regex-escaped).
    Regex,
    /// The Wikidata Query Service's `SERVICE wikibase:mwapi` with `wikibase:api "EntitySearch"`
    /// (the Wikibase's own search, called by the endpoint; `search_api` is the MediaWiki host it
    /// calls, `www.wikidata.org` when unset). Only this generated call: a user's SERVICE is still
    /// refused.
    Mwapi,
    /// The Wikibase's `wbsearchentities` HTTP API at `search_api` (its `api.php` URL): one GET per
    /// search, no SPARQL.
    Wbsearchentities,
}

/// HTTP method used to send queries.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum HttpMethod {
    /// GET for short queries, POST (form-encoded) when the URL would be long.
    #[default]
    Auto,
    Get,
    Post,
}

/// Result format asked from the endpoint.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ResultsFormat {
    #[default]
    Json,
    Xml,
}

/// Authentication sent with every request. Its `Debug` shows no secret.
#[derive(Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum EndpointAuth {
    Basic { username: String, password: String },
    Bearer { token: String },
}

impl std::fmt::Debug for EndpointAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Basic { username, .. } => write!(f, "Basic {{ username: {username:?}, password: \"{REDACTED}\" }}"),
            Self::Bearer { .. } => write!(f, "Bearer {{ token: \"{REDACTED}\" }}"),
        }
    }
}

/// What stands where a secret was.
pub const REDACTED: &str = "***";

/// `url` as it may be shown (answers, explanations, errors, logs, `/api/kgs`, MCP's `list_kgs`):
/// its scheme, host, port and path only. A user name and password, the query (`?pass=`,
/// `?jwt=`, `?apikey=` …) and the fragment are dropped whatever their names, since any of them
/// may carry a secret. Text that is no URL is shown as "a URL that cannot be parsed", since it
/// may hold anything.
pub fn redact_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return "(a URL that cannot be parsed)".to_owned();
    };
    // Neither can fail on a URL with a host, which one with userinfo has; a URL without a host
    // (`mailto:`) has no userinfo to drop.
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_query(None);
    parsed.set_fragment(None);
    parsed.to_string()
}

/// A remote SPARQL 1.1 endpoint. Its `Debug` shows no secret (see [`redact_url`]; header values
/// are not shown).
#[derive(Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EndpointSettings {
    /// The query URL, e.g. `http://localhost:8890/sparql`.
    pub url: String,
    #[serde(default)]
    pub method: HttpMethod,
    #[serde(default)]
    pub results_format: ResultsFormat,
    #[serde(default)]
    pub search: SearchStrategy,
    /// Per-request timeout in seconds (the query timeout of [`GraphSettings`] applies too).
    #[serde(default = "default_request_timeout")]
    pub timeout_secs: f64,
    #[serde(default)]
    pub auth: Option<EndpointAuth>,
    /// Extra HTTP headers sent with every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Where a Wikibase's own search is: the `api.php` URL for `search = "wbsearchentities"`
    /// (`https://www.wikidata.org/w/api.php`), the MediaWiki host for `search = "mwapi"`
    /// (`www.wikidata.org`, the default). Nothing of the endpoint's `auth` or `headers` is sent there.
    #[serde(default)]
    pub search_api: Option<String>,
}

fn default_request_timeout() -> f64 {
    30.0
}

impl std::fmt::Debug for EndpointSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&String> = self.headers.keys().collect();
        f.debug_struct("EndpointSettings")
            .field("url", &redact_url(&self.url))
            .field("method", &self.method)
            .field("results_format", &self.results_format)
            .field("search", &self.search)
            .field("timeout_secs", &self.timeout_secs)
            .field("auth", &self.auth)
            .field("headers (values not shown)", &headers)
            .field("search_api", &self.search_api.as_deref().map(redact_url))
            .finish()
    }
}

impl EndpointSettings {
    /// The URL as it may be shown ([`redact_url`]).
    pub fn shown_url(&self) -> String {
        redact_url(&self.url)
    }

    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            method: HttpMethod::default(),
            results_format: ResultsFormat::default(),
            search: SearchStrategy::default(),
            timeout_secs: default_request_timeout(),
            auth: None,
            headers: BTreeMap::new(),
            search_api: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_url_keeps_only_scheme_host_port_and_path() {
        for (url, shown) in [
            (
                "http://alice:pw@127.0.0.1:9/sparql?pass=pw2&jwt=eyJ.x.y#tok",
                "http://127.0.0.1:9/sparql",
            ),
            ("https://u@example.org/a/b?format=json", "https://example.org/a/b"),
            (
                "https://example.org:8443/sparql#frag",
                "https://example.org:8443/sparql",
            ),
            ("http://example.org/sparql", "http://example.org/sparql"),
            ("not a url ?pass=pw", "(a URL that cannot be parsed)"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }
}
