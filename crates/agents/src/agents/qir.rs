//! QIR agent (paper §4.2.3, chain of thought + two few-shot examples): turns the standalone
//! question into a QIR, checked by the Triples Validator and retried at most θ times with the
//! validator's complaint.
//!
//! Ground before asking (`ground_entities`, on by default): when spans of the question are
//! exactly labels of vertices ([`crate::entity_spotting`]), the QIR is built from them and the
//! question's own words without a model call; the model is asked only when nothing in the
//! question is a label (a misspelt or partial name). With grounding off, entity spotting is the
//! fallback when the model's retries run out. Outcome: [`BUILT`].

use crate::ask::{ask_validated, check_reply};
use crate::context::AgentContext;
use crate::entity_spotting::spot;
use crate::error::AgentError;
use crate::graph::Agent;
use crate::qir::{Qir, RawQir, TriplesValidator, entities_in_question};
use crate::question_form::QuestionForm;
use crate::state::AgentState;
use serde_json::json;

pub struct QirAgent;

pub const NAME: &str = "qir";
pub const BUILT: &str = "built";

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

/// A model's QIR for `question`, parsed and checked by the Triples Validator (entities must
/// come from the question): the QIR, or the complaint the model gets back.
pub fn check_qir(reply: &str, question: &str) -> Result<Qir, String> {
    check_reply(reply, |raw: RawQir| {
        let qir = TriplesValidator::validate(&raw)?;
        entities_in_question(&qir, question)?;
        Ok(qir)
    })
}

#[async_trait::async_trait]
impl Agent for QirAgent {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError> {
        let question = state.working_question().to_owned();
        let form = QuestionForm::detect(&question, None);
        // Ground before asking: when the question names vertices by their labels, the graph
        // decides the entities and the model is not asked.
        if ctx.params.ground_entities
            && let Some(qir) = spot(ctx, &question, form.kind).await?
        {
            state.qir = Some(qir);
            return Ok(BUILT);
        }
        let variables = json!({"question": question});
        let asked = ask_validated(ctx, NAME, NAME, variables, schema(), |reply| {
            check_qir(reply, &question)
        })
        .await;
        let qir = match asked {
            Ok(qir) => qir,
            Err(error @ AgentError::RetriesExhausted { .. }) if !ctx.params.ground_entities => {
                match spot(ctx, &question, form.kind).await? {
                    Some(qir) => {
                        tracing::info!(%error, "QIR from entity spotting");
                        qir
                    }
                    None => return Err(error),
                }
            }
            Err(error) => return Err(error),
        };
        state.qir = Some(qir);
        Ok(BUILT)
    }
}
