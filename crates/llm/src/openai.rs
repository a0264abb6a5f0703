//! OpenAI-compatible chat completions (`POST {base_url}/chat/completions`).
//!
//! Written against the common subset every compatible server implements (OpenAI, vLLM, Ollama,
//! llama.cpp's server, LM Studio, …): non-streaming requests, `usage` when the server sends it.
//! Structured output uses `response_format`; servers differ in what they accept, so the default
//! [`JsonMode::Auto`] starts with `json_schema` (OpenAI, vLLM, Ollama, llama.cpp's server); when
//! an error answer complains about the response format it falls back to `json_object` with a
//! `schema` field (llama-cpp-python's server constrains its grammar with it, and answers
//! `json_schema` with a 500), then to plain `json_object`, then to none (the prompt still
//! describes the format and the agents validate what comes back). The fallback is remembered for
//! the client's lifetime.
//!
//! Transient failures (connection errors, timeouts, 408/429/5xx, a body cut mid-way) are retried
//! up to `max_retries` times with exponential back-off, honouring `Retry-After`. Anything else is
//! a typed [`LlmError`] at once.

use crate::{ChatModel, ChatRequest, ChatResponse, FinishReason, LlmError, ModelInfo, Usage};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// How to ask for JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum JsonMode {
    /// `json_schema`, falling back to `json_object`, then to none, as the server allows.
    #[default]
    Auto,
    /// Always `response_format: {type: json_schema}`.
    JsonSchema,
    /// Always `response_format: {type: json_object}`.
    JsonObject,
    /// Never send `response_format`.
    Off,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpenAiSettings {
    /// Base URL including the version path, e.g. `https://api.openai.com/v1`,
    /// `http://127.0.0.1:11434/v1` (Ollama) or `http://127.0.0.1:8080/v1` (llama.cpp, vLLM).
    pub base_url: String,
    pub model: String,
    /// Environment variable holding the API key; unset means no `Authorization` header (local
    /// servers), except for api.openai.com, which needs one.
    pub api_key_env: String,
    pub temperature: f32,
    pub max_tokens: u32,
    /// Per attempt.
    pub timeout_secs: u64,
    pub max_retries: u32,
    /// First back-off; doubles on each retry (capped at 30 s).
    pub backoff_ms: u64,
    pub json_mode: JsonMode,
}

impl Default for OpenAiSettings {
    fn default() -> Self {
        Self {
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4o-mini".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            temperature: 0.0,
            max_tokens: 512,
            timeout_secs: 60,
            max_retries: 3,
            backoff_ms: 500,
            json_mode: JsonMode::Auto,
        }
    }
}

const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How much of an error body goes into an error message.
const BODY_EXCERPT: usize = 300;

pub struct OpenAiChatModel {
    settings: OpenAiSettings,
    url: String,
    api_key: Option<String>,
    client: reqwest::Client,
    /// Index into [`FORMATS`] for `JsonMode::Auto`: how far the server made us fall back.
    auto_format: AtomicU8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    JsonSchema,
    /// `{"type": "json_object", "schema": …}` (llama-cpp-python's extension).
    JsonObjectWithSchema,
    JsonObject,
    Off,
}

const FORMATS: [Format; 4] = [
    Format::JsonSchema,
    Format::JsonObjectWithSchema,
    Format::JsonObject,
    Format::Off,
];

/// The outcome of one attempt that did not succeed.
enum Failure {
    /// Worth another attempt after `after` (or the back-off when `None`).
    Transient(LlmError, Option<Duration>),
    /// The server rejected `response_format`: fall back and try again at once.
    FormatRejected(LlmError),
    Fatal(LlmError),
}

impl OpenAiChatModel {
    pub fn new(settings: OpenAiSettings) -> Result<Self, LlmError> {
        let api_key = std::env::var(&settings.api_key_env).ok().filter(|k| !k.is_empty());
        if api_key.is_none() && settings.base_url.contains("api.openai.com") {
            return Err(LlmError::MissingApiKey {
                variable: settings.api_key_env.clone(),
            });
        }
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(settings.timeout_secs.clamp(1, 10)))
            .build()
            .map_err(|e| LlmError::Unreachable {
                url: settings.base_url.clone(),
                message: e.to_string(),
            })?;
        Ok(Self {
            url: format!("{}/chat/completions", settings.base_url.trim_end_matches('/')),
            api_key,
            client,
            auto_format: AtomicU8::new(0),
            settings,
        })
    }

    fn format(&self, request: &ChatRequest) -> Format {
        if request.schema.is_none() {
            return Format::Off;
        }
        match self.settings.json_mode {
            JsonMode::Auto => FORMATS[usize::from(self.auto_format.load(Ordering::Relaxed)).min(FORMATS.len() - 1)],
            JsonMode::JsonSchema => Format::JsonSchema,
            JsonMode::JsonObject => Format::JsonObject,
            JsonMode::Off => Format::Off,
        }
    }

    fn body(&self, request: &ChatRequest, format: Format) -> serde_json::Value {
        let messages: Vec<_> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect();
        let mut body = json!({
            "model": self.settings.model,
            "messages": messages,
            "temperature": request.temperature.unwrap_or(self.settings.temperature),
            "max_tokens": self.max_tokens(request),
            "stream": false,
        });
        let response_format = match (format, &request.schema) {
            (Format::JsonSchema, Some(schema)) => Some(json!({
                "type": "json_schema",
                "json_schema": {"name": schema.name, "schema": schema.schema, "strict": true},
            })),
            (Format::JsonObjectWithSchema, Some(schema)) => {
                Some(json!({"type": "json_object", "schema": schema.schema}))
            }
            (Format::JsonObject, Some(_)) => Some(json!({"type": "json_object"})),
            _ => None,
        };
        if let (Some(format), Some(object)) = (response_format, body.as_object_mut()) {
            object.insert("response_format".into(), format);
        }
        body
    }

    fn max_tokens(&self, request: &ChatRequest) -> u32 {
        request.max_tokens.unwrap_or(self.settings.max_tokens)
    }

    fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry);
        Duration::from_millis(self.settings.backoff_ms)
            .saturating_mul(factor)
            .min(MAX_BACKOFF)
    }

    async fn attempt(&self, request: &ChatRequest, format: Format) -> Result<ChatResponse, Failure> {
        let body = self.body(request, format);
        let mut post = self
            .client
            .post(&self.url)
            .timeout(Duration::from_secs(self.settings.timeout_secs))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            post = post.bearer_auth(key);
        }
        let response = post
            .send()
            .await
            .map_err(|e| Failure::Transient(self.transport_error(&e), None))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|s| Duration::from_secs(s).min(MAX_BACKOFF));
        // A body cut short (connection closed before Content-Length bytes) fails here.
        let bytes = response
            .bytes()
            .await
            .map_err(|e| Failure::Transient(self.transport_error(&e), None))?;
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            let error = LlmError::Http {
                url: self.url.clone(),
                status: status.as_u16(),
                body: excerpt(&text),
            };
            let code = status.as_u16();
            // Checked before the transient statuses: some servers reject an unknown
            // response_format with a 500 (llama-cpp-python), others with 400 or 422.
            return Err(
                if matches!(code, 400 | 422 | 500) && format != Format::Off && mentions_response_format(&text) {
                    Failure::FormatRejected(error)
                } else if matches!(code, 408 | 429 | 500 | 502 | 503 | 504) {
                    Failure::Transient(error, retry_after)
                } else {
                    Failure::Fatal(error)
                },
            );
        }
        self.parse(&text, request).map_err(Failure::Fatal)
    }

    fn parse(&self, text: &str, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let malformed = |detail: &str| LlmError::MalformedResponse {
            url: self.url.clone(),
            detail: detail.into(),
            body: excerpt(text),
        };
        let body: CompletionBody = serde_json::from_str(text).map_err(|e| malformed(&format!("not JSON: {e}")))?;
        let choice = body.choices.into_iter().next().ok_or_else(|| malformed("no choices"))?;
        let finish = match choice.finish_reason.as_deref() {
            Some("stop") | Some("eos") | None => FinishReason::Stop,
            Some("length") => FinishReason::Length,
            Some(_) => FinishReason::Other,
        };
        let content = choice
            .message
            .and_then(|m| m.content)
            .ok_or_else(|| malformed("the first choice has no message content"))?;
        if finish == FinishReason::Length && request.schema.is_some() {
            return Err(LlmError::Truncated {
                max_tokens: self.max_tokens(request),
            });
        }
        let usage = body.usage.unwrap_or_default();
        Ok(ChatResponse {
            text: content,
            usage: Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            },
            latency: Duration::ZERO,
            retries: 0,
            finish,
            timings: None,
        })
    }

    fn transport_error(&self, error: &reqwest::Error) -> LlmError {
        if error.is_timeout() {
            LlmError::Timeout {
                url: self.url.clone(),
                seconds: self.settings.timeout_secs,
            }
        } else {
            let mut message = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(inner) = source {
                message = format!("{message}: {inner}");
                source = inner.source();
            }
            LlmError::Unreachable {
                url: self.url.clone(),
                message,
            }
        }
    }
}

#[async_trait::async_trait]
impl ChatModel for OpenAiChatModel {
    fn info(&self) -> ModelInfo {
        ModelInfo {
            backend: "openai".into(),
            model: self.settings.model.clone(),
        }
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let started = Instant::now();
        let mut retries = 0;
        loop {
            let format = self.format(request);
            match self.attempt(request, format).await {
                Ok(mut response) => {
                    response.latency = started.elapsed();
                    response.retries = retries;
                    return Ok(response);
                }
                Err(Failure::FormatRejected(error)) => {
                    if self.settings.json_mode != JsonMode::Auto {
                        return Err(error);
                    }
                    tracing::warn!(url = %self.url, ?format, "server rejected response_format; falling back");
                    self.auto_format.fetch_add(1, Ordering::Relaxed);
                }
                Err(Failure::Transient(error, retry_after)) => {
                    if retries >= self.settings.max_retries {
                        return Err(if retries == 0 {
                            error
                        } else {
                            LlmError::RetriesExhausted {
                                attempts: retries + 1,
                                last: Box::new(error),
                            }
                        });
                    }
                    let wait = retry_after.unwrap_or_else(|| self.backoff(retries));
                    tracing::warn!(url = %self.url, %error, ?wait, "LLM call failed; retrying");
                    tokio::time::sleep(wait).await;
                    retries += 1;
                }
                Err(Failure::Fatal(error)) => return Err(error),
            }
        }
    }
}

fn mentions_response_format(body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    ["response_format", "json_schema", "json_object", "response format"]
        .iter()
        .any(|needle| body.contains(needle))
}

fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(BODY_EXCERPT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[derive(Deserialize)]
struct CompletionBody {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<UsageBody>,
}

#[derive(Deserialize)]
struct Choice {
    message: Option<ChoiceMessage>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    content: Option<String>,
}

#[derive(Deserialize, Default)]
struct UsageBody {
    #[serde(default)]
    prompt_tokens: u32,
    #[serde(default)]
    completion_tokens: u32,
}
