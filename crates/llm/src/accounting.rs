//! Every LLM call, recorded: which agent asked, which backend answered, tokens in and out, latency,
//! retries and the error if it failed. Answers show these per question; eval reports sum them.
//!
//! Wrap the shared model in an [`AccountedModel`] with a fresh [`CallLedger`] per question; the
//! agents see an ordinary [`ChatModel`].

use crate::{ChatModel, ChatRequest, ChatResponse, LlmError, ModelInfo};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub agent: String,
    pub backend: String,
    pub model: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub latency_ms: f64,
    pub retries: u32,
    /// The error kind ([`LlmError::kind`]) when the call failed.
    pub error: Option<String>,
}

/// Sums over a set of calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CallTotals {
    pub calls: u32,
    pub failed: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub latency_ms: f64,
    pub retries: u32,
}

impl CallTotals {
    fn add(&mut self, record: &CallRecord) {
        self.calls += 1;
        self.failed += u32::from(record.error.is_some());
        self.input_tokens += u64::from(record.input_tokens);
        self.output_tokens += u64::from(record.output_tokens);
        self.latency_ms += record.latency_ms;
        self.retries += record.retries;
    }
}

/// The calls of one question (or any other unit of work). Clones share the same records.
#[derive(Debug, Clone, Default)]
pub struct CallLedger(Arc<Mutex<Vec<CallRecord>>>);

impl CallLedger {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn record(&self, record: CallRecord) {
        self.lock().push(record);
    }

    pub fn records(&self) -> Vec<CallRecord> {
        self.lock().clone()
    }

    pub fn totals(&self) -> CallTotals {
        let mut totals = CallTotals::default();
        for record in self.lock().iter() {
            totals.add(record);
        }
        totals
    }

    pub fn by_agent(&self) -> BTreeMap<String, CallTotals> {
        let mut map = BTreeMap::<String, CallTotals>::new();
        for record in self.lock().iter() {
            map.entry(record.agent.clone()).or_default().add(record);
        }
        map
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<CallRecord>> {
        // Records are pushed whole, so a poisoned lock still guards a consistent list.
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A model whose every call lands in a ledger.
pub struct AccountedModel {
    inner: Arc<dyn ChatModel>,
    ledger: CallLedger,
}

impl AccountedModel {
    pub fn new(inner: Arc<dyn ChatModel>, ledger: CallLedger) -> Self {
        Self { inner, ledger }
    }

    pub fn ledger(&self) -> &CallLedger {
        &self.ledger
    }
}

#[async_trait::async_trait]
impl ChatModel for AccountedModel {
    fn info(&self) -> ModelInfo {
        self.inner.info()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let started = Instant::now();
        let result = self.inner.complete(request).await;
        let info = self.inner.info();
        let (usage, retries, error) = match &result {
            Ok(response) => (response.usage, response.retries, None),
            Err(error) => {
                let retries = match error {
                    LlmError::RetriesExhausted { attempts, .. } => attempts.saturating_sub(1),
                    _ => 0,
                };
                (Default::default(), retries, Some(error.kind().to_owned()))
            }
        };
        self.ledger.record(CallRecord {
            agent: request.agent.clone(),
            backend: info.backend,
            model: info.model,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            latency_ms: started.elapsed().as_secs_f64() * 1000.0,
            retries,
            error,
        });
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripted::ScriptedChatModel;
    use crate::{ChatRequest, Message};

    #[tokio::test]
    async fn every_call_is_recorded_per_agent_failures_included() {
        let scripted = ScriptedChatModel::new()
            .reply_when("qir", "alien", "{\"triples\": []}")
            .reply_when("matching", "", "{\"value\": \"Alien\"}");
        let ledger = CallLedger::new();
        let model = AccountedModel::new(Arc::new(scripted), ledger.clone());
        let ask =
            |agent: &str, text: &str| ChatRequest::new(agent, vec![Message::system("be brief"), Message::user(text)]);
        model.complete(&ask("qir", "Who directed Alien?")).await.unwrap();
        model.complete(&ask("matching", "Alien?")).await.unwrap();
        model.complete(&ask("matching", "Aliens?")).await.unwrap();
        assert!(model.complete(&ask("rephraser", "x")).await.is_err());

        let records = ledger.records();
        assert_eq!(records.len(), 4);
        assert_eq!(records[0].agent, "qir");
        assert_eq!((records[0].input_tokens, records[0].output_tokens), (5, 2));
        assert_eq!(records[0].backend, "scripted");
        assert_eq!(records[3].error.as_deref(), Some("no_scripted_reply"));
        let by_agent = ledger.by_agent();
        assert_eq!(by_agent["matching"].calls, 2);
        assert_eq!(by_agent["rephraser"].failed, 1);
        let totals = ledger.totals();
        assert_eq!((totals.calls, totals.failed, totals.input_tokens), (4, 1, 5 + 3 + 3));
    }
}
