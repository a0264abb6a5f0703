//! The remote backend: any SPARQL 1.1 endpoint over HTTP (reqwest with rustls).
//!
//! Queries go out as GET (short) or form-encoded POST (long, or when configured), with basic or
//! bearer auth and custom headers; results come back as SPARQL JSON or XML (TSV is understood too
//! if the server insists). Every failure is typed: unreachable, timed out, HTTP status with the
//! start of the body, unparsable results.
//!
//! What an endpoint can make us hold is bounded: SELECTs go out with `LIMIT max_rows+1`, and the
//! body is read as a stream up to `max_result_bytes` (refused unread when its Content-Length is
//! larger). A SELECT cut there keeps the rows that arrived whole and says it was truncated.

use crate::settings::{EndpointAuth, EndpointSettings, HttpMethod, ResultsFormat, SearchStrategy};
use crate::text::search_words;
use crate::{GraphError, GraphSettings, KnowledgeGraph, QueryResults, ReadQuery, Solutions};
use async_trait::async_trait;
use oxigraph::model::NamedNode;
use sparesults::{QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput};
use spargebra::algebra::{GraphPattern, PropertyPathExpression};
use spargebra::term::{GroundTerm, TermPattern};
use std::time::Duration;

/// URLs longer than this are sent as POST under [`HttpMethod::Auto`].
const MAX_GET_URL: usize = 2000;

/// Of an error response, only the start is read: it is shown as an excerpt.
const MAX_ERROR_BODY: usize = 64 << 10;

/// The MediaWiki host the query service's EntitySearch calls when `search_api` is unset.
const DEFAULT_MWAPI_HOST: &str = "www.wikidata.org";
/// Results one Wikibase search asks for at most (what `wbsearchentities` gives at most).
const WIKIBASE_SEARCH_MAX: usize = 50;

/// A `wbsearchentities` answer: the hits, each with its IRI and label.
#[derive(serde::Deserialize)]
struct WbSearch {
    #[serde(default)]
    search: Vec<WbHit>,
}

#[derive(serde::Deserialize)]
struct WbHit {
    concepturi: Option<String>,
    label: Option<String>,
    r#match: Option<WbMatch>,
}

#[derive(serde::Deserialize)]
struct WbMatch {
    text: String,
}

/// The `(IRI, label)` rows of a search's results.
fn labelled(results: QueryResults) -> Vec<(String, String)> {
    match results {
        QueryResults::Solutions(solutions) => solutions
            .iri_literal_pairs()
            .map(|(iri, label)| (iri.to_owned(), label.value().to_owned()))
            .collect(),
        QueryResults::Boolean(_) => Vec::new(),
    }
}

/// Redirects an endpoint request may follow (within its own origin).
const MAX_REDIRECTS: usize = 5;

/// The endpoint client's redirects: followed within the endpoint's origin (scheme, host, port),
/// refused with an error to any other. The client sends the configured `headers` (and the auth)
/// with every request, redirected ones included: reqwest drops `Authorization` on a redirect to
/// another host, but not a custom header such as `X-Api-Key`, so another origin gets neither.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.stop();
        };
        if attempt.url().origin() != first.origin() {
            let to = attempt.url().origin().ascii_serialization();
            return attempt.error(format!(
                "the endpoint redirected to another origin ({to}); not followed, so its headers and \
                 credentials stay with the endpoint (configure the URL it redirects to instead)"
            ));
        }
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        attempt.follow()
    })
}

/// How long a failed schema profile is not asked for again.
const PROFILE_RETRY: Duration = Duration::from_secs(300);

pub struct SparqlEndpoint {
    endpoint: EndpointSettings,
    /// The URL as answers, errors and logs show it: no credentials (`redact_url`).
    shown: String,
    settings: GraphSettings,
    client: reqwest::Client,
    /// The vertices each transitive path reaches a class by (`?t <subclass>+ <class>`), read
    /// once per path and class ([`Self::with_closures_enumerated`]); `None`: too many to list.
    closures: std::sync::Mutex<std::collections::HashMap<String, Option<Vec<NamedNode>>>>,
    /// For a Wikibase's search API: no default headers, so nothing meant for the endpoint (its
    /// credentials, its headers) goes to another service.
    search_client: reqwest::Client,
    timeout: Duration,
    /// The schema profile, computed on first use (bounded queries) and kept.
    profile: tokio::sync::OnceCell<std::sync::Arc<crate::profile::SchemaProfile>>,
    /// When computing the profile last failed, and why: not retried for [`PROFILE_RETRY`], so
    /// an endpoint too big for its grouped counts does not pay for them at every question.
    profile_failure: std::sync::Mutex<Option<(std::time::Instant, String)>>,
    /// Predicate names looked up so far.
    predicate_names: crate::NameCache,
    /// Facts about the graph asked so far (kept, like the profile, while the endpoint is open).
    facts: crate::GraphFacts,
}

/// Vertices of a transitive path's closure listed in a query at most (a class's subclasses).
const MAX_CLOSURE: usize = 2000;

impl SparqlEndpoint {
    pub fn new(endpoint: EndpointSettings, settings: GraphSettings) -> Result<Self, GraphError> {
        let shown = endpoint.shown_url();
        let url = url::Url::parse(&endpoint.url).map_err(|e| GraphError::Config {
            message: format!("endpoint URL {shown:?}: {e}"),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(GraphError::Config {
                message: format!("endpoint URL {shown:?} must be http or https"),
            });
        }
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &endpoint.headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|e| GraphError::Config {
                message: format!("header name {name:?}: {e}"),
            })?;
            let value = reqwest::header::HeaderValue::from_str(value).map_err(|e| GraphError::Config {
                message: format!("header {name}: {e}"),
            })?;
            headers.insert(name, value);
        }
        let timeout = crate::settings::seconds(endpoint.timeout_secs).min(settings.query_timeout());
        let client = reqwest::Client::builder()
            .user_agent(concat!("chatty-kg/", env!("CARGO_PKG_VERSION")))
            .default_headers(headers)
            .redirect(same_origin_redirects())
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| GraphError::Config {
                message: format!("HTTP client: {e}"),
            })?;
        let search_client = reqwest::Client::builder()
            .user_agent(concat!("chatty-kg/", env!("CARGO_PKG_VERSION")))
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| GraphError::Config {
                message: format!("HTTP client: {e}"),
            })?;
        if endpoint.search == SearchStrategy::Wbsearchentities {
            let api = endpoint.search_api.as_deref().unwrap_or_default();
            match url::Url::parse(api) {
                Ok(url) if matches!(url.scheme(), "http" | "https") => {}
                _ => {
                    return Err(GraphError::Config {
                        message: format!(
                            "search = \"wbsearchentities\" needs `search_api`, the Wikibase's http(s) api.php URL (given: {})",
                            crate::settings::redact_url(api)
                        ),
                    });
                }
            }
        }
        Ok(Self {
            endpoint,
            shown,
            settings,
            client,
            search_client,
            timeout,
            profile: tokio::sync::OnceCell::new(),
            profile_failure: std::sync::Mutex::new(None),
            predicate_names: crate::NameCache::default(),
            facts: crate::GraphFacts::default(),
            closures: std::sync::Mutex::default(),
        })
    }

    /// Entity search through the endpoint's `SERVICE wikibase:mwapi` EntitySearch
    /// ([`crate::query::mwapi_search_query`]).
    async fn mwapi_matches(&self, text: &str, limit: usize) -> Result<Vec<(String, String)>, GraphError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let host = self.endpoint.search_api.as_deref().unwrap_or(DEFAULT_MWAPI_HOST);
        let query =
            crate::query::mwapi_search_query(text, &self.settings.language, host, limit.clamp(1, WIKIBASE_SEARCH_MAX))?;
        Ok(labelled(self.query(&query).await?))
    }

    /// Entity search through the Wikibase's `wbsearchentities` API at `search_api`: one GET,
    /// its answer bounded like a query's, nothing of the endpoint's credentials sent.
    async fn wbsearchentities_matches(&self, text: &str, limit: usize) -> Result<Vec<(String, String)>, GraphError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let api = self.endpoint.search_api.as_deref().ok_or_else(|| GraphError::Config {
            message: "search = \"wbsearchentities\" needs the Wikibase's api.php URL as `search_api`".into(),
        })?;
        let language = if self.settings.language.is_empty() {
            "en"
        } else {
            self.settings.language.as_str()
        };
        let limit = limit.clamp(1, WIKIBASE_SEARCH_MAX).to_string();
        let response = self
            .search_client
            .get(api)
            .query(&[
                ("action", "wbsearchentities"),
                ("search", text),
                ("language", language),
                ("uselang", language),
                ("type", "item"),
                ("limit", limit.as_str()),
                ("format", "json"),
            ])
            .send()
            .await
            .map_err(|e| self.search_error(&e.without_url().to_string()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(self.search_error(&format!("HTTP {status}")));
        }
        let (body, cut) = self.read_body(response, self.settings.max_result_bytes).await?;
        if cut {
            return Err(self.search_error("the answer was larger than max_result_bytes"));
        }
        let parsed: WbSearch = serde_json::from_slice(&body).map_err(|e| self.search_error(&e.to_string()))?;
        Ok(parsed
            .search
            .into_iter()
            .filter_map(|hit| {
                let label = hit.label.or_else(|| hit.r#match.map(|m| m.text))?;
                Some((hit.concepturi?, label))
            })
            .collect())
    }

    fn search_error(&self, message: &str) -> GraphError {
        GraphError::SearchApi {
            api: self
                .endpoint
                .search_api
                .as_deref()
                .map_or_else(|| "(no search_api)".to_owned(), crate::settings::redact_url),
            message: message.to_owned(),
        }
    }

    /// The URL as it may be shown: without credentials.
    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    fn request(&self, text: &str) -> reqwest::RequestBuilder {
        let accept = match self.endpoint.results_format {
            ResultsFormat::Json => "application/sparql-results+json",
            ResultsFormat::Xml => "application/sparql-results+xml",
        };
        let use_post = match self.endpoint.method {
            HttpMethod::Get => false,
            HttpMethod::Post => true,
            HttpMethod::Auto => {
                let encoded: usize = url::form_urlencoded::byte_serialize(text.as_bytes())
                    .map(str::len)
                    .sum();
                self.endpoint.url.len() + encoded > MAX_GET_URL
            }
        };
        let builder = if use_post {
            self.client.post(&self.endpoint.url).form(&[("query", text)])
        } else {
            self.client.get(&self.endpoint.url).query(&[("query", text)])
        };
        let builder = builder.header(reqwest::header::ACCEPT, accept);
        match &self.endpoint.auth {
            Some(EndpointAuth::Basic { username, password }) => builder.basic_auth(username, Some(password)),
            Some(EndpointAuth::Bearer { token }) => builder.bearer_auth(token),
            None => builder,
        }
    }

    /// `query` with each transitive path from a variable to a named vertex (`?t <subclass>+
    /// <class>`, the class filters' subclasses) replaced by the vertices it reaches, read by a
    /// query of its own (`VALUES ?t { … }`); `None` when it has none. Virtuoso 7.2.5 evaluates
    /// such a path wrongly once its variable is bound by a join (89 characters of a block whose
    /// classes are subclasses of "character" came back as one); the same path alone it reads
    /// right, and a list is cheaper for any endpoint than a closure per row. A closure of more
    /// than [`MAX_CLOSURE`] vertices, an empty one, or one that fails, stays a path.
    async fn with_closures_enumerated(&self, query: &ReadQuery) -> Option<ReadQuery> {
        let mut found: Vec<(String, PropertyPathExpression, NamedNode, bool)> = Vec::new();
        let mut copy = query.as_query().clone();
        crate::query::bounded::walk(&mut copy, &mut |call| {
            if let crate::query::bounded::Call::Pattern(GraphPattern::Path {
                subject: TermPattern::Variable(_),
                path,
                object: TermPattern::NamedNode(object),
            }) = call
                && let PropertyPathExpression::OneOrMore(_) | PropertyPathExpression::ZeroOrMore(_) = path
            {
                let key = format!("{path} {object}");
                if !found.iter().any(|(k, ..)| *k == key) {
                    let reflexive = matches!(path, PropertyPathExpression::ZeroOrMore(_));
                    found.push((key, path.clone(), object.clone(), reflexive));
                }
            }
        });
        if found.is_empty() {
            return None;
        }
        let mut closures: std::collections::HashMap<String, Vec<NamedNode>> = std::collections::HashMap::new();
        for (key, path, object, reflexive) in found {
            let known = self.closures.lock().ok().and_then(|c| c.get(&key).cloned());
            let closure = match known {
                Some(closure) => closure,
                None => {
                    let closure = match self.closure(&path, &object).await {
                        Ok(closure) => closure,
                        Err(error) => {
                            tracing::info!(%error, path = %key, "a transitive path's vertices not read; sent as a path");
                            continue;
                        }
                    };
                    if let Ok(mut cache) = self.closures.lock() {
                        cache.insert(key.clone(), closure.clone());
                    }
                    closure
                }
            };
            if let Some(mut vertices) = closure {
                if reflexive && !vertices.contains(&object) {
                    vertices.push(object);
                }
                // A path that reaches nothing loses nothing either; Virtuoso's planner refuses
                // an empty VALUES beside other patterns ("estimated execution time exceeds").
                if !vertices.is_empty() {
                    closures.insert(key, vertices);
                }
            }
        }
        if closures.is_empty() {
            return None;
        }
        let mut rewritten = query.as_query().clone();
        crate::query::bounded::walk(&mut rewritten, &mut |call| {
            let crate::query::bounded::Call::Pattern(pattern) = call else {
                return;
            };
            let GraphPattern::Path {
                subject: TermPattern::Variable(variable),
                path,
                object: TermPattern::NamedNode(object),
            } = pattern
            else {
                return;
            };
            if let Some(vertices) = closures.get(&format!("{path} {object}")) {
                *pattern = GraphPattern::Values {
                    variables: vec![variable.clone()],
                    bindings: vertices
                        .iter()
                        .map(|v| vec![Some(GroundTerm::NamedNode(v.clone()))])
                        .collect(),
                };
            }
        });
        ReadQuery::new(rewritten).ok()
    }

    /// `SELECT DISTINCT ?t WHERE { ?t <path> <object> }`: the vertices, or `None` past
    /// [`MAX_CLOSURE`].
    async fn closure(
        &self,
        path: &PropertyPathExpression,
        object: &NamedNode,
    ) -> Result<Option<Vec<NamedNode>>, GraphError> {
        let t = crate::var("t");
        let query = ReadQuery::select(crate::query::limited(
            GraphPattern::Distinct {
                inner: Box::new(GraphPattern::Project {
                    inner: Box::new(GraphPattern::Path {
                        subject: t.clone().into(),
                        path: path.clone(),
                        object: object.clone().into(),
                    }),
                    variables: vec![t],
                }),
            },
            Some(MAX_CLOSURE + 1),
        ))?;
        let QueryResults::Solutions(solutions) = self.run_capped(&query, &query.capped(self.settings.max_rows)).await?
        else {
            return Ok(None);
        };
        if solutions.rows.len() > MAX_CLOSURE || solutions.truncated {
            return Ok(None);
        }
        Ok(Some(
            solutions
                .column("t")
                .filter_map(|term| match term {
                    crate::Term::NamedNode(n) => Some(n.clone()),
                    _ => None,
                })
                .collect(),
        ))
    }

    async fn run_capped(&self, query: &ReadQuery, capped: &ReadQuery) -> Result<QueryResults, GraphError> {
        match self.run(&capped.to_string()).await {
            // Some endpoints refuse the LIMIT itself: Virtuoso sorts at most MaxSortedTopRows
            // (10000 by default) for ORDER BY … LIMIT, yet answers the same query without a
            // LIMIT (cut to its ResultSetMaxRows). Ask once more as written: the byte cap still
            // bounds what comes back. Only for that refusal (SR353): another 5xx (an overloaded or
            // timed-out endpoint) must not be answered with a heavier query.
            Err(GraphError::Http {
                status: 500..=599,
                body,
                ..
            }) if *capped != *query && body.contains("SR353") => {
                tracing::warn!(endpoint = %self.shown, %body, "endpoint refused the pushed-down LIMIT; retrying without it");
                self.run(&query.to_string()).await
            }
            other => other,
        }
    }

    fn transport_error(&self, error: reqwest::Error) -> GraphError {
        // reqwest names the URL in its errors, credentials and all.
        let error = error.without_url();
        if error.is_timeout() {
            GraphError::EndpointTimeout {
                endpoint: self.shown.clone(),
                after: self.timeout,
            }
        } else {
            GraphError::Unreachable {
                endpoint: self.shown.clone(),
                message: error_chain(&error),
            }
        }
    }

    /// Sends one query and reads its results, bounded (see the module docs).
    async fn run(&self, text: &str) -> Result<QueryResults, GraphError> {
        let response = self.request(text).send().await.map_err(|e| self.transport_error(e))?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if !status.is_success() {
            let (body, _) = self.read_body(response, MAX_ERROR_BODY).await?;
            let text = String::from_utf8_lossy(&body);
            let mut excerpt: String = text.trim().chars().take(500).collect();
            if text.trim().chars().count() > 500 {
                excerpt.push('…');
            }
            return Err(GraphError::Http {
                endpoint: self.shown.clone(),
                status: status.as_u16(),
                body: excerpt,
            });
        }
        let max = self.settings.max_result_bytes;
        if let Some(bytes) = response.content_length().filter(|n| *n > max as u64) {
            // Announced larger than allowed: refused before reading any of it.
            return Err(GraphError::ResultTooLarge {
                endpoint: self.shown.clone(),
                bytes: Some(bytes),
                max,
            });
        }
        let (body, cut) = self.read_body(response, max).await?;
        if cut {
            tracing::warn!(endpoint = %self.shown, max, "SPARQL results cut at max_result_bytes");
        }
        self.parse_results(&content_type, &body, cut)
    }

    /// Reads the body as it streams in, at most `max` bytes, and says whether there was more.
    /// The buffer never grows past `max`: the rest stays unread and the connection is dropped.
    async fn read_body(&self, mut response: reqwest::Response, max: usize) -> Result<(Vec<u8>, bool), GraphError> {
        let announced = response.content_length().and_then(|n| usize::try_from(n).ok());
        let mut body = Vec::with_capacity(announced.unwrap_or(0).min(max));
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport_error(e))? {
            let room = max - body.len();
            let take = chunk.len().min(room);
            if body.len() + take > body.capacity() {
                // Grow as a Vec would, but never past the cap.
                let want = (body.capacity() * 2).max(body.len() + take).min(max);
                body.reserve_exact(want - body.len());
            }
            body.extend_from_slice(&chunk[..take]);
            if take < chunk.len() {
                return Ok((body, true));
            }
        }
        Ok((body, false))
    }

    /// Parses a results document. `cut` says the body stops at `max_result_bytes`: then the rows
    /// that parsed whole are kept and marked truncated, and the error at the cut is expected.
    fn parse_results(&self, content_type: &str, body: &[u8], cut: bool) -> Result<QueryResults, GraphError> {
        let format = QueryResultsFormat::from_media_type(content_type)
            .filter(|f| *f != QueryResultsFormat::Csv)
            .unwrap_or(match self.endpoint.results_format {
                ResultsFormat::Json => QueryResultsFormat::Json,
                ResultsFormat::Xml => QueryResultsFormat::Xml,
            });
        let bad = |message: String| GraphError::BadResults {
            endpoint: self.shown.clone(),
            content_type: content_type.to_owned(),
            message,
        };
        let too_large = || GraphError::ResultTooLarge {
            endpoint: self.shown.clone(),
            bytes: None,
            max: self.settings.max_result_bytes,
        };
        let body = match (cut, format) {
            // A TSV row is a line, and a cut line may still parse (a number cut short).
            (true, QueryResultsFormat::Tsv) => body
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(&body[..0], |end| &body[..=end]),
            _ => body,
        };
        let parsed = match QueryResultsParser::from_format(format).for_slice(body) {
            Ok(parsed) => parsed,
            Err(_) if cut => return Err(too_large()),
            Err(e) => return Err(bad(e.to_string())),
        };
        match parsed {
            // An answer cut short is no answer.
            SliceQueryResultsParserOutput::Boolean(_) if cut => Err(too_large()),
            SliceQueryResultsParserOutput::Boolean(b) => Ok(QueryResults::Boolean(b)),
            SliceQueryResultsParserOutput::Solutions(solutions) => {
                let variables = solutions.variables().to_vec();
                let mut out = Solutions {
                    variables: variables.iter().map(|v| v.as_str().to_owned()).collect(),
                    ..Solutions::default()
                };
                for solution in solutions {
                    if out.rows.len() == self.settings.max_rows {
                        out.truncated = true;
                        break;
                    }
                    let solution = match solution {
                        Ok(solution) => solution,
                        // The cut: what came before it is all there is.
                        Err(_) if cut => break,
                        Err(e) => return Err(bad(e.to_string())),
                    };
                    out.rows
                        .push(variables.iter().map(|v| solution.get(v).cloned()).collect());
                }
                if cut {
                    if out.rows.is_empty() {
                        return Err(too_large());
                    }
                    out.truncated = true;
                }
                Ok(QueryResults::Solutions(out))
            }
        }
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

#[async_trait]
impl KnowledgeGraph for SparqlEndpoint {
    fn facts(&self) -> Option<&crate::GraphFacts> {
        Some(&self.facts)
    }

    fn describe(&self) -> String {
        format!("SPARQL endpoint {}", self.shown)
    }

    fn settings(&self) -> &GraphSettings {
        &self.settings
    }

    /// Looked up once per predicate for the endpoint's life.
    async fn predicate_names(&self, iris: &[&str]) -> Result<std::collections::HashMap<String, String>, GraphError> {
        self.predicate_names.names(self, iris).await
    }

    /// Computed on first use with bounded queries (grouped counts, LIMIT, the query timeout),
    /// then kept for the endpoint's life. A failure is remembered for [`PROFILE_RETRY`]: asked
    /// again meanwhile, it answers [`GraphError::ProfileUnavailable`] at once.
    async fn profile(&self) -> Result<std::sync::Arc<crate::profile::SchemaProfile>, GraphError> {
        if let Some(profile) = self.profile.get() {
            return Ok(std::sync::Arc::clone(profile));
        }
        let failed = self
            .profile_failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if let Some((at, message)) = failed
            && at.elapsed() < PROFILE_RETRY
        {
            return Err(GraphError::ProfileUnavailable {
                message,
                retry_in: PROFILE_RETRY.saturating_sub(at.elapsed()),
            });
        }
        let computed = self
            .profile
            .get_or_try_init(|| async {
                Ok::<_, GraphError>(std::sync::Arc::new(crate::profile::compute(self, None).await?))
            })
            .await;
        match computed {
            Ok(profile) => Ok(std::sync::Arc::clone(profile)),
            Err(error) => {
                *self
                    .profile_failure
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some((std::time::Instant::now(), error.to_string()));
                Err(error)
            }
        }
    }

    async fn query(&self, query: &ReadQuery) -> Result<QueryResults, GraphError> {
        // A pattern the endpoint's backtracking regex engine could spend hours on never leaves.
        if let Some((pattern, why)) = crate::query::bounded::risky_pattern(query.as_query()) {
            return Err(GraphError::RiskyPattern { pattern, why });
        }
        let enumerated = self.with_closures_enumerated(query).await;
        let query = enumerated.as_ref().unwrap_or(query);
        // One row more than kept tells that there were more.
        let capped = query.capped(self.settings.max_rows);
        let started = std::time::Instant::now();
        let result = self.run_capped(query, &capped).await;
        if tracing::enabled!(tracing::Level::DEBUG) {
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            match &result {
                Ok(_) => tracing::debug!(ms, endpoint = %self.shown, sparql = %capped, "SPARQL"),
                Err(error) => tracing::debug!(ms, endpoint = %self.shown, %error, sparql = %capped, "SPARQL failed"),
            }
        }
        result
    }

    async fn label_matches(&self, text: &str, limit: usize) -> Result<Vec<(String, String)>, GraphError> {
        match self.endpoint.search {
            SearchStrategy::Mwapi => return self.mwapi_matches(text, limit).await,
            SearchStrategy::Wbsearchentities => return self.wbsearchentities_matches(text, limit).await,
            _ => {}
        }
        let mut words = search_words(text);
        // As the embedded index does: a long text keeps its first words (each one is a filter).
        words.truncate(crate::label_index::MAX_SEARCH_WORDS);
        if self.endpoint.search == SearchStrategy::BifContains && words.iter().any(|w| w.chars().count() > 1) {
            // Single letters are noise words for Virtuoso's free-text index.
            words.retain(|w| w.chars().count() > 1);
        }
        if words.is_empty() {
            return Ok(Vec::new());
        }
        // Fetch more than asked: the endpoint returns matches unranked.
        let max_rows = self.settings.max_rows.max(1);
        let fetch = limit.saturating_mul(4).clamp(100.min(max_rows), max_rows);
        let query =
            crate::query::entity_search_query(&words, &self.settings.search_predicates(), self.endpoint.search, fetch)?;
        Ok(labelled(self.query(&query).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::arbitrary::{self, Forbidden};
    use crate::query::{DATASET, SERVICE};
    use proptest::prelude::*;
    use proptest::sample::Index;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn sample<T: std::fmt::Debug>(strategy: impl Strategy<Value = T>, runner: &mut TestRunner) -> T {
        strategy.new_tree(runner).unwrap().current()
    }

    /// A query naming another server (SERVICE, FROM, an extension function) is refused before
    /// anything goes out: neither the configured endpoint nor the named server hears a thing.
    /// The last, clean query shows the endpoint would have been asked.
    #[tokio::test]
    async fn refused_queries_send_no_request() {
        let ok = ResponseTemplate::new(200).set_body_raw(
            r#"{"head":{"vars":["s"]},"results":{"bindings":[]}}"#,
            "application/sparql-results+json",
        );
        let endpoint = MockServer::start().await;
        Mock::given(wiremock::matchers::any())
            .respond_with(ok.clone())
            .mount(&endpoint)
            .await;
        let remote = MockServer::start().await;
        Mock::given(wiremock::matchers::any())
            .respond_with(ok)
            .mount(&remote)
            .await;
        let kg = SparqlEndpoint::new(
            EndpointSettings::new(format!("{}/sparql", endpoint.uri())),
            GraphSettings::default(),
        )
        .unwrap();
        let remote_url = format!("{}/sparql", remote.uri());
        let service = format!("SERVICE <{remote_url}> {{ ?s ?p ?o }}");

        let mut refused: Vec<(String, String)> = [
            format!("SELECT * WHERE {{ {service} }}"),
            format!("SELECT * WHERE {{ ?s ?p ?o }} ORDER BY (EXISTS {{ {service} }})"),
            format!("SELECT (COUNT(EXISTS {{ {service} }}) AS ?c) WHERE {{ ?s ?p ?o }}"),
            format!("SELECT ?s WHERE {{ ?s ?p ?o }} GROUP BY ?s HAVING (SUM(IF(EXISTS {{ {service} }}, 1, 0)) > 0)"),
        ]
        .into_iter()
        .map(|text| (text, SERVICE.to_owned()))
        .collect();
        refused.push((
            format!("SELECT * FROM <{remote_url}> WHERE {{ ?s ?p ?o }}"),
            DATASET.to_owned(),
        ));
        refused.push((
            format!("SELECT * WHERE {{ ?s ?p ?o FILTER(<{remote_url}>(?o)) }}"),
            format!("function <{remote_url}>"),
        ));
        let mut runner = TestRunner::deterministic();
        for i in 0..64 {
            let query = sample(arbitrary::query(), &mut runner);
            let at = sample(any::<Index>(), &mut runner);
            let service = Forbidden::Service {
                endpoint: remote_url.clone(),
                silent: i % 2 == 0,
            };
            refused.push((arbitrary::insert(query, at, &service).to_string(), SERVICE.to_owned()));
        }

        for (text, expected) in &refused {
            let refusal = match kg.query_text(text).await {
                Err(GraphError::NotReadOnly { kind }) => kind.to_owned(),
                Err(GraphError::FunctionNotAllowed { iri }) => format!("function <{iri}>"),
                other => panic!("{text} was not refused: {other:?}"),
            };
            assert_eq!(&refusal, expected, "{text}");
        }
        assert_eq!(endpoint.received_requests().await.unwrap().len(), 0);
        assert_eq!(remote.received_requests().await.unwrap().len(), 0);

        kg.query_text("SELECT ?s WHERE { ?s ?p ?o }").await.unwrap();
        assert_eq!(endpoint.received_requests().await.unwrap().len(), 1);
        assert_eq!(remote.received_requests().await.unwrap().len(), 0);
    }
}
