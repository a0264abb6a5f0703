//! Classifier agent (paper §4.2.1, zero-shot): is the question self-contained, or does it depend
//! on the dialogue? Without history the answer is forced, so no model is asked.
//! Outcomes: [`SELF_CONTAINED`], [`DEPENDENT`].

use crate::ask::{ask_validated, check_reply};
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::state::{AgentState, Classification, Mode};
use serde::Deserialize;
use serde_json::json;

pub struct ClassifierAgent;

pub const NAME: &str = "classifier";
pub const SELF_CONTAINED: &str = "self-contained";
pub const DEPENDENT: &str = "dependent";

#[derive(Deserialize)]
struct Verdict {
    label: String,
}

/// A model's classification reply, parsed and checked.
pub fn check_verdict(reply: &str) -> Result<Classification, String> {
    check_reply(reply, |v: Verdict| match v.label.trim().to_lowercase().as_str() {
        "self-contained" | "self contained" | "selfcontained" => Ok(Classification::SelfContained),
        "dependent" => Ok(Classification::Dependent),
        other => Err(format!(
            "label {other:?} is neither \"self-contained\" nor \"dependent\""
        )),
    })
}

#[async_trait::async_trait]
impl Agent for ClassifierAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        let classification = if state.mode == Mode::SingleTurn || state.history.is_empty() {
            Classification::SelfContained
        } else {
            let schema = json!({
                "type": "object",
                "properties": {"label": {"enum": ["self-contained", "dependent"]}},
                "required": ["label"], "additionalProperties": false
            });
            let variables = json!({"history": state.history, "question": state.english_question()});
            ask_validated(ctx, NAME, NAME, variables, schema, check_verdict).await?
        };
        state.classification = Some(classification);
        Ok(match classification {
            Classification::SelfContained => SELF_CONTAINED,
            Classification::Dependent => DEPENDENT,
        })
    }
}
