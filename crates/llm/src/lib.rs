//! Chat models for the agents: one trait, [`ChatModel`], and its backends, each in a module named
//! after what it talks to:
//! - [`openai`]: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama,
//!   llama.cpp's server, …), with bounded retries and JSON-schema response formats;
//! - [`llama`]: a GGUF model run in-process by llama.cpp, its output constrained by a grammar
//!   generated from the JSON schema, so even a 135 M-parameter model returns valid JSON;
//! - [`scripted`]: canned answers for deterministic tests. Never a default.
//!
//! Around them: [`prompts`] (the agents' prompt templates, data in `prompts/`), [`accounting`]
//! (every call recorded per agent, with tokens, latency and retries) and [`reply`] (reading the
//! JSON a model returned).
//!
//! ```
//! use chatty_kg_llm::{ChatModel, ChatRequest, Message, scripted::ScriptedChatModel};
//! # tokio_test_block(async {
//! let model = ScriptedChatModel::new().reply_when("classifier", "Who", r#"{"label":"self-contained"}"#);
//! let request = ChatRequest::new("classifier", vec![Message::user("Who directed Alien?")]);
//! let response = model.complete(&request).await.unwrap();
//! assert_eq!(response.text, r#"{"label":"self-contained"}"#);
//! # });
//! # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```

pub mod accounting;
#[cfg(feature = "llama")]
pub mod llama;
mod llama_settings;
pub mod openai;
pub mod prompts;
pub mod reply;
pub mod scripted;

pub use llama_settings::LlamaSettings;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Who speaks a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// A JSON schema the answer must follow, with a name (OpenAI requires one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchema {
    pub name: String,
    pub schema: serde_json::Value,
}

/// One chat completion request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The agent asking (for accounting and logs), e.g. `"qir"`.
    pub agent: String,
    pub messages: Vec<Message>,
    /// When set, the answer must be JSON following this schema.
    pub schema: Option<JsonSchema>,
    /// Overrides the backend's configured maximum of generated tokens.
    pub max_tokens: Option<u32>,
    /// Overrides the backend's configured temperature.
    pub temperature: Option<f32>,
}

impl ChatRequest {
    pub fn new(agent: impl Into<String>, messages: Vec<Message>) -> Self {
        Self {
            agent: agent.into(),
            messages,
            schema: None,
            max_tokens: None,
            temperature: None,
        }
    }

    pub fn with_schema(mut self, name: impl Into<String>, schema: serde_json::Value) -> Self {
        self.schema = Some(JsonSchema {
            name: name.into(),
            schema,
        });
        self
    }

    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The last user message (what scripted rules and logs look at).
    pub fn last_user_message(&self) -> &str {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map_or("", |m| m.content.as_str())
    }
}

/// Tokens of one call, as the backend counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u32,
    pub output_tokens: u32,
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model ended its answer.
    Stop,
    /// The token limit cut the answer.
    Length,
    /// Anything else the server said (content filter, tool call, …).
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub text: String,
    pub usage: Usage,
    /// Wall time of the whole call, retries and back-off included.
    pub latency: Duration,
    /// Attempts beyond the first.
    pub retries: u32,
    pub finish: FinishReason,
    /// Prompt and generation timings, from backends that measure them (the embedded model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<GenerationTimings>,
}

/// Where an embedded model's time went.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GenerationTimings {
    /// Prompt tokens evaluated (the rest were reused from the KV cache).
    pub prompt_evaluated: u32,
    pub prompt_seconds: f64,
    pub generation_seconds: f64,
}

/// Which backend and model a [`ChatModel`] is, for reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// `openai`, `llama` or `scripted`.
    pub backend: String,
    pub model: String,
}

/// A chat model. Every agent calls only this.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    fn info(&self) -> ModelInfo;
    /// Whether the model can still answer (an in-process model whose worker died cannot).
    /// Remote models say yes: an unreachable server is an error of each call, not of health.
    fn health(&self) -> Result<(), String> {
        Ok(())
    }
    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError>;
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot reach the LLM server at {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("the LLM server at {url} did not answer within {seconds} s")]
    Timeout { url: String, seconds: u64 },
    #[error("the LLM server at {url} answered HTTP {status}: {body}")]
    Http { url: String, status: u16, body: String },
    #[error("the LLM server at {url} sent a malformed response ({detail}): {body}")]
    MalformedResponse { url: String, detail: String, body: String },
    #[error("the answer was cut at the {max_tokens}-token limit before its JSON was complete")]
    Truncated { max_tokens: u32 },
    #[error("gave up after {attempts} attempts: {last}")]
    RetriesExhausted { attempts: u32, last: Box<LlmError> },
    #[error("cannot load model {path}: {message}")]
    ModelLoad { path: String, message: String },
    #[error("the prompt has {tokens} tokens; the model's context holds {context}")]
    PromptTooLong { tokens: usize, context: usize },
    #[error("inference failed: {0}")]
    Inference(String),
    #[error("invalid JSON schema for grammar: {0}")]
    Schema(String),
    #[error("the embedded model stopped running")]
    WorkerGone,
    #[error("scripted model has no reply for agent {agent:?} and prompt {prompt:?}")]
    NoScriptedReply { agent: String, prompt: String },
    #[error("API key variable {variable} is not set")]
    MissingApiKey { variable: String },
}

impl LlmError {
    /// A stable short name for metrics and reports.
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Unreachable { .. } => "unreachable",
            LlmError::Timeout { .. } => "timeout",
            LlmError::Http { .. } => "http",
            LlmError::MalformedResponse { .. } => "malformed_response",
            LlmError::Truncated { .. } => "truncated",
            LlmError::RetriesExhausted { .. } => "retries_exhausted",
            LlmError::ModelLoad { .. } => "model_load",
            LlmError::PromptTooLong { .. } => "prompt_too_long",
            LlmError::Inference(_) => "inference",
            LlmError::Schema(_) => "schema",
            LlmError::WorkerGone => "worker_gone",
            LlmError::NoScriptedReply { .. } => "no_scripted_reply",
            LlmError::MissingApiKey { .. } => "missing_api_key",
        }
    }
}
