//! [`OpenAiEmbedder`]: embeddings from an OpenAI-compatible `/v1/embeddings` server (vLLM,
//! Ollama, llama.cpp's server, text-embeddings-inference, OpenAI), for builds and deployments that
//! keep no model in the process (a lean build has no candle: see the `candle` feature).
//!
//! [`Embedder::embed`] is synchronous and its callers run it on a blocking thread (the agents use
//! `spawn_blocking`): the request runs on the caller's tokio runtime through its handle there, or
//! on a small runtime of its own outside one (the CLI). Vectors are L2-normalised as the trait
//! promises; the dimension is the server's, known after the first answer.

use crate::{EmbedError, Embedder};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use std::time::Duration;

/// Texts per request.
const BATCH: usize = 128;

/// `[embeddings] backend = "openai"`: where the embedding server is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpenAiEmbeddingSettings {
    /// Base URL including the version path, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    /// Environment variable holding the API key; unset means no `Authorization` header.
    pub api_key_env: String,
    pub timeout_secs: u64,
}

impl Default for OpenAiEmbeddingSettings {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8080/v1".into(),
            model: "all-minilm-l6-v2".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            timeout_secs: 30,
        }
    }
}

pub struct OpenAiEmbedder {
    client: reqwest::Client,
    url: String,
    settings: OpenAiEmbeddingSettings,
    api_key: Option<String>,
    name: String,
    dimension: OnceLock<usize>,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl OpenAiEmbedder {
    pub fn new(settings: OpenAiEmbeddingSettings) -> Result<Self, EmbedError> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(settings.timeout_secs.max(1)))
            .build()
            .map_err(|e| EmbedError::Server(format!("HTTP client: {e}")))?;
        let api_key = std::env::var(&settings.api_key_env)
            .ok()
            .filter(|k| !k.trim().is_empty());
        Ok(Self {
            client,
            url: format!("{}/embeddings", settings.base_url.trim_end_matches('/')),
            name: format!("{} at {}", settings.model, settings.base_url),
            settings,
            api_key,
            dimension: OnceLock::new(),
        })
    }

    async fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let fail = |message: String| EmbedError::Server(format!("{}: {message}", self.url));
        let body = serde_json::json!({"model": self.settings.model, "input": texts});
        let mut request = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| fail(e.to_string()))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| fail(e.to_string()))?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body);
            return Err(fail(format!(
                "HTTP {status}: {}",
                text.chars().take(300).collect::<String>()
            )));
        }
        let mut parsed: Response =
            serde_json::from_slice(&body).map_err(|e| fail(format!("not an embeddings response: {e}")))?;
        if parsed.data.len() != texts.len() {
            return Err(fail(format!("{} vectors for {} texts", parsed.data.len(), texts.len())));
        }
        if parsed.data.iter().all(|d| d.index.is_some()) {
            parsed.data.sort_by_key(|d| d.index);
        }
        let mut vectors = Vec::with_capacity(texts.len());
        for datum in parsed.data {
            let dimension = *self.dimension.get_or_init(|| datum.embedding.len());
            if datum.embedding.len() != dimension || dimension == 0 {
                return Err(fail(format!(
                    "a vector of {} dimensions where {dimension} were given before",
                    datum.embedding.len()
                )));
            }
            vectors.push(normalised(datum.embedding));
        }
        Ok(vectors)
    }
}

fn normalised(mut vector: Vec<f32>) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector
}

/// Runs `future` to completion from synchronous code: on the current runtime's handle when
/// there is one (a `spawn_blocking` thread), else on a runtime made for it.
fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, EmbedError> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => Ok(handle.block_on(future)),
        Err(_) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| EmbedError::Server(format!("async runtime: {e}")))?;
            Ok(runtime.block_on(future))
        }
    }
}

impl Embedder for OpenAiEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    /// 0 until the server answered once.
    fn dimension(&self) -> usize {
        self.dimension.get().copied().unwrap_or(0)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            vectors.extend(block_on(self.request(batch))??);
        }
        Ok(vectors)
    }
}
