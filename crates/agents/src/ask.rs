//! One validated LLM answer: render the agent's template, ask with a JSON schema, parse, validate,
//! and on failure ask again with the validator's complaint as `feedback` (sampling instead of
//! greedy decoding), at most θ times.
//! Every agent with a validator in the paper goes through here.

use crate::context::AgentContext;
use crate::error::AgentError;
use chatty_kg_llm::reply::parse_reply;
use chatty_kg_llm::{ChatRequest, LlmError};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Sampling temperature of retries.
const RETRY_TEMPERATURE: f32 = 0.6;

/// What `ask_validated` does with one reply: parse it as `T` ([`parse_reply`]), then validate
/// it. Each agent's `check_*` function is this with its own `T` and validator; they are public so
/// that the fuzz targets (`fuzz/`) run the very code a model's reply goes through.
pub fn check_reply<T: DeserializeOwned, U>(
    reply: &str,
    validate: impl FnOnce(T) -> Result<U, String>,
) -> Result<U, String> {
    match parse_reply::<T>(reply) {
        Ok(value) => validate(value),
        Err(e) => Err(e.to_string()),
    }
}

/// Asks until `check` accepts the reply's text (usually [`check_reply`] with the agent's
/// validator), at most θ times.
pub(crate) async fn ask_validated<U>(
    ctx: &AgentContext,
    agent: &'static str,
    template: &str,
    variables: Value,
    schema: Value,
    mut check: impl FnMut(&str) -> Result<U, String>,
) -> Result<U, AgentError> {
    let attempts = ctx.params.theta.max(1);
    let mut feedback: Option<String> = None;
    for attempt in 1..=attempts {
        let mut variables = variables.clone();
        if let Some(object) = variables.as_object_mut() {
            object.insert("feedback".into(), feedback.clone().map_or(Value::Null, Value::String));
        }
        let messages = ctx.prompts.render(template, &variables)?;
        let mut request = ChatRequest::new(agent, messages).with_schema(agent, schema.clone());
        if attempt > 1 {
            // Greedy decoding repeats a rejected answer word for word; a retry samples instead.
            request.temperature = Some(RETRY_TEMPERATURE);
        }
        let problem = match ctx.llm.complete(&request).await {
            Ok(response) => match check(&response.text) {
                Ok(valid) => return Ok(valid),
                Err(problem) => {
                    tracing::debug!(agent, attempt, reply = %response.text, "rejected reply");
                    problem
                }
            },
            Err(LlmError::Truncated { .. }) => "the answer was too long; answer shortly".into(),
            // The client already retried transport failures; a second layer would only multiply them.
            Err(source) => return Err(AgentError::Llm { agent, source }),
        };
        tracing::debug!(agent, attempt, %problem, "invalid LLM answer");
        feedback = Some(problem);
    }
    Err(AgentError::RetriesExhausted {
        agent,
        attempts,
        feedback: feedback.unwrap_or_default(),
    })
}
