//! A **scripted** chat model, for deterministic tests only: it answers from a script of canned
//! replies chosen by agent name and by text the last user message contains. It is never a default;
//! a configuration must name it explicitly (`backend = "scripted"` with a script file).
//!
//! Rules are tried in the order they were added; the first whose agent and text match answers.
//! A rule with several replies gives them in turn and then keeps repeating the last one, which is
//! how tests script "malformed JSON, then a valid answer". Every request is recorded so tests can
//! check what the agents sent. Token counts are whitespace-separated words: an approximation,
//! enough for accounting tests.

use crate::{ChatModel, ChatRequest, ChatResponse, FinishReason, LlmError, ModelInfo, Usage};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

/// One rule of a script (also the format of a script file: a JSON array of these).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptRule {
    /// The agent that must be asking; `None` matches any agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Text the last user message must contain (case-insensitive); empty matches anything.
    #[serde(default)]
    pub contains: String,
    /// Replies given in turn; the last one repeats.
    pub replies: Vec<String>,
    /// Milliseconds to wait before replying (a slow model, for shutdown and load tests).
    #[serde(default)]
    pub delay_ms: u64,
}

/// Requests a [`ScriptedChatModel`] remembers for inspection.
pub const KEPT_REQUESTS: usize = 1000;

#[derive(Debug, Default)]
pub struct ScriptedChatModel {
    rules: Mutex<Vec<(ScriptRule, usize)>>,
    /// The last [`KEPT_REQUESTS`] requests (a server on this model for hours must not grow).
    requests: Mutex<std::collections::VecDeque<ChatRequest>>,
}

impl ScriptedChatModel {
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads a script file (a JSON array of [`ScriptRule`]).
    pub fn from_file(path: &Path) -> Result<Self, LlmError> {
        let load_error = |message: String| LlmError::ModelLoad {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| load_error(e.to_string()))?;
        let rules: Vec<ScriptRule> =
            serde_json::from_str(&text).map_err(|e| load_error(format!("not a script (JSON array of rules): {e}")))?;
        let model = Self::new();
        for rule in rules {
            model.push(rule);
        }
        Ok(model)
    }

    /// Adds a rule; chainable.
    pub fn rule(self, rule: ScriptRule) -> Self {
        self.push(rule);
        self
    }

    /// `agent` asking with a last user message containing `contains` gets `reply`, every time.
    pub fn reply_when(self, agent: &str, contains: &str, reply: &str) -> Self {
        self.replies_in_turn(agent, contains, &[reply])
    }

    /// Successive matching calls get `replies` in order, then the last one again and again.
    pub fn replies_in_turn(self, agent: &str, contains: &str, replies: &[&str]) -> Self {
        self.rule(ScriptRule {
            agent: Some(agent.into()),
            contains: contains.into(),
            replies: replies.iter().map(|r| (*r).to_owned()).collect(),
            delay_ms: 0,
        })
    }

    pub fn push(&self, rule: ScriptRule) {
        self.lock_rules().push((rule, 0));
    }

    /// The requests received so far, in order (the last [`KEPT_REQUESTS`]).
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    fn lock_rules(&self) -> std::sync::MutexGuard<'_, Vec<(ScriptRule, usize)>> {
        self.rules.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn words(text: &str) -> u32 {
    text.split_whitespace().count() as u32
}

#[async_trait::async_trait]
impl ChatModel for ScriptedChatModel {
    fn info(&self) -> ModelInfo {
        ModelInfo {
            backend: "scripted".into(),
            model: "scripted (tests only)".into(),
        }
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        {
            let mut requests = self.requests.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if requests.len() == KEPT_REQUESTS {
                requests.pop_front();
            }
            requests.push_back(request.clone());
        }
        let prompt = request.last_user_message().to_lowercase();
        let (text, delay_ms) = {
            let mut rules = self.lock_rules();
            let (rule, used) = rules
                .iter_mut()
                .find(|(rule, _)| {
                    rule.agent.as_deref().is_none_or(|a| a == request.agent)
                        && prompt.contains(&rule.contains.to_lowercase())
                        && !rule.replies.is_empty()
                })
                .ok_or_else(|| LlmError::NoScriptedReply {
                    agent: request.agent.clone(),
                    prompt: request.last_user_message().chars().take(200).collect(),
                })?;
            let text = rule.replies[(*used).min(rule.replies.len() - 1)].clone();
            *used += 1;
            (text, rule.delay_ms)
        };
        if delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        }
        Ok(ChatResponse {
            usage: Usage {
                input_tokens: request.messages.iter().map(|m| words(&m.content)).sum(),
                output_tokens: words(&text),
            },
            text,
            latency: Duration::ZERO,
            retries: 0,
            finish: FinishReason::Stop,
            timings: None,
        })
    }
}
