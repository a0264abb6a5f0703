//! Rephraser agent (paper §4.2.2, zero-shot): rewrites a dependent question as a standalone one
//! from the context Cq. Its validator only accepts a non-empty question; the prompt forbids
//! adding content. Outcome: [`REPHRASED`].

use crate::ask::{ask_validated, check_reply};
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::state::AgentState;
use serde::Deserialize;
use serde_json::json;

pub struct RephraserAgent;

pub const NAME: &str = "rephraser";
pub const REPHRASED: &str = "rephrased";

#[derive(Deserialize)]
struct Rephrased {
    question: String,
}

/// A model's rewritten question, parsed and checked (trimmed, at least three letters or digits).
pub fn check_rephrased(reply: &str) -> Result<String, String> {
    check_reply(reply, |r: Rephrased| {
        let question = r.question.trim().to_owned();
        if question.chars().filter(|c| c.is_alphanumeric()).count() < 3 {
            Err("the rewritten question is empty".into())
        } else {
            Ok(question)
        }
    })
}

#[async_trait::async_trait]
impl Agent for RephraserAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        let schema = json!({
            "type": "object",
            "properties": {"question": {"type": "string", "minLength": 3, "maxLength": 400}},
            "required": ["question"], "additionalProperties": false
        });
        let variables = json!({"history": state.history, "question": state.english_question()});
        let question = ask_validated(ctx, NAME, NAME, variables, schema, check_rephrased).await?;
        state.resolved_question = Some(question);
        Ok(REPHRASED)
    }
}
