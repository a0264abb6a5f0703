//! QIR agent (paper §4.2.3, chain of thought + two few-shot examples): turns the standalone
//! question into a QIR, checked by the Triples Validator and retried at most θ times with the
//! validator's complaint. When the retries run out, the QIR comes from entity spotting (the
//! longest span of the question that is an entity's exact label; see
//! [`crate::entity_spotting`]) if it can, else the question fails with the typed error.
//! Route: matching agent.

use crate::ask::ask_validated;
use crate::context::AgentContext;
use crate::entity_spotting::spot;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::qir::{RawQir, TriplesValidator, entities_in_question};
use crate::state::{AgentState, Route};
use serde_json::json;

pub struct QirAgent;

pub const NAME: &str = "qir";

/// The node the QIR agent hands over to.
pub const NEXT: &str = crate::agents::matching::NAME;

/// The shape the model must produce (a grammar on the embedded model; `response_format` remotely).
pub fn schema() -> serde_json::Value {
    let strings =
        json!({"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 120}, "maxItems": 6});
    json!({
        "type": "object",
        "properties": {
            "entities": strings,
            "unknowns": strings,
            "relations": strings,
            "triples": {
                "type": "array", "minItems": 1, "maxItems": 4,
                "items": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 120}, "minItems": 3, "maxItems": 3}
            },
            "type": {"enum": ["list", "boolean", "count"]},
            "order": {"enum": [null, "asc", "desc"]}
        },
        "required": ["entities", "unknowns", "relations", "triples", "type", "order"],
        "additionalProperties": false
    })
}

#[async_trait::async_trait]
impl Agent for QirAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<(), AgentError> {
        let question = state.working_question().to_owned();
        let variables = json!({"question": question});
        let asked = ask_validated(ctx, NAME, NAME, variables, schema(), |raw: RawQir| {
            let qir = TriplesValidator::validate(&raw)?;
            entities_in_question(&qir, &question)?;
            Ok(qir)
        })
        .await;
        let qir = match asked {
            Ok(qir) => qir,
            Err(error @ AgentError::RetriesExhausted { .. }) => match spot(ctx, &question).await? {
                Some(qir) => {
                    tracing::info!(%error, "QIR from entity spotting");
                    qir
                }
                None => return Err(error),
            },
            Err(error) => return Err(error),
        };
        state.qir = Some(qir);
        state.route = Route::To(NEXT);
        Ok(())
    }
}
