//! Feedback made into examples for later questions ([`chatty_kg_agents::candidates::examples`]).
//!
//! A turn rated up makes an example of its question and the one query that answered it; a turn
//! corrected with a query makes one of its question and that query. A rating withdrawn, a "down"
//! without a query, or a query that starts from no vertex makes none (and removes the turn's
//! earlier one). Each example belongs to the key that rated (another key's questions never use
//! it) and lives in the session store beside the session; the server keeps each graph's examples
//! in memory too. `GET /api/examples` exports the caller's own, `DELETE /api/examples/{id}`
//! removes one; `chatty-kg examples import` shares a file of them with everyone (an operator's
//! step).

use chatty_kg_agents::AgentContext;
use chatty_kg_agents::candidates::examples::{Example, Holder, NoExample};
use chatty_kg_agents::understanding::qir::QuestionKind;
use chatty_kg_dialogue::{ExampleRecord, Owner, Rating, SessionInfo, TurnRecord};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The example `turn` (rated as it now is) makes, if any.
pub async fn of_turn(ctx: &AgentContext, turn: &TurnRecord) -> Result<Option<Example>, NoExample> {
    let Some(feedback) = &turn.feedback else {
        return Ok(None);
    };
    let explanation = &turn.explanation;
    let sparql = match (&feedback.rating, &feedback.correction) {
        // Several queries made the answer together: no one query has its shape.
        (Rating::Up, _) => match crate::feedback::used_query(explanation) {
            Some(sparql) => sparql,
            None => return Ok(None),
        },
        (Rating::Down, Some(correction)) => match &correction.sparql {
            Some(sparql) => sparql.clone(),
            None => return Ok(None),
        },
        (Rating::Down, None) => return Ok(None),
    };
    let question = explanation["resolved_question"]
        .as_str()
        .unwrap_or(&turn.context.question)
        .to_owned();
    let links: Vec<(String, String)> = explanation["entities"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| Some((e["mention"].as_str()?.to_owned(), e["iri"].as_str()?.to_owned())))
        .collect();
    let form: Option<QuestionKind> = serde_json::from_value(explanation["answer_kind"].clone()).ok();
    Example::make(ctx, &question, &links, &sparql, form).await.map(Some)
}

/// Whose the stored example is, as the book keeps it.
pub fn holder(record: &ExampleRecord) -> Holder {
    if record.shared {
        Holder::Everyone
    } else {
        Holder::Key(record.owner.as_ref().map(|o| o.as_str().to_owned()))
    }
}

/// The stored form of `example`, made from turn `turn` of `session`.
pub fn record(session: &SessionInfo, turn: u32, example: &Example, now_ms: u64) -> Result<ExampleRecord, String> {
    Ok(ExampleRecord {
        id: ExampleRecord::id_of_turn(&session.id, turn),
        kg: session.kg.clone(),
        owner: session.owner.clone(),
        shared: false,
        session: Some(session.id.clone()),
        created_at: now_ms,
        body: serde_json::to_value(example).map_err(|e| e.to_string())?,
    })
}

/// An example as exported and imported: what it says, without the embedding (a property of
/// the embedding model, made again on import).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exported {
    pub id: String,
    pub kg: String,
    pub question: String,
    pub masked: String,
    pub sparql: String,
    pub anchors: Vec<String>,
    pub form: QuestionKind,
    #[serde(default)]
    pub created_at: u64,
}

/// A file of exported examples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleFile {
    pub examples: Vec<Exported>,
}

/// The exported form of a stored example (`None` when its body does not read).
pub fn exported(record: &ExampleRecord) -> Option<Exported> {
    let example: Example = serde_json::from_value(record.body.clone()).ok()?;
    Some(Exported {
        id: record.id.clone(),
        kg: record.kg.clone(),
        question: example.question,
        masked: example.masked,
        sparql: example.sparql,
        anchors: example.anchors,
        form: example.form,
        created_at: record.created_at,
    })
}

/// An exported example made whole again with `embedder` (the one the questions use).
pub fn imported(embedder: &dyn chatty_kg_embed::Embedder, exported: &Exported) -> Result<Example, NoExample> {
    let embedding = embedder
        .embed(&[exported.masked.as_str()])
        .map_err(|e| NoExample::Agent(e.into()))?
        .pop()
        .unwrap_or_default();
    Ok(Example {
        question: exported.question.clone(),
        masked: exported.masked.clone(),
        embedding,
        sparql: exported.sparql.clone(),
        anchors: exported.anchors.clone(),
        form: exported.form,
    })
}

/// The stored record of an imported example, shared with everyone.
pub fn shared_record(exported: &Exported, example: &Example, kg: &str) -> Result<ExampleRecord, String> {
    Ok(ExampleRecord {
        id: format!("import-{}", exported.id),
        kg: kg.to_owned(),
        owner: None,
        shared: true,
        session: None,
        created_at: exported.created_at,
        body: serde_json::to_value(example).map_err(|e| e.to_string())?,
    })
}

/// Reads an example file (`chatty-kg examples import`, `chatty-kg eval --examples`).
pub fn read_file(path: &std::path::Path) -> Result<ExampleFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not an example file: {e}", path.display()))
}

/// The owner's examples as JSON for `GET /api/examples`.
pub fn export(records: &[ExampleRecord]) -> Value {
    let examples: Vec<Exported> = records.iter().filter_map(exported).collect();
    serde_json::json!(ExampleFile { examples })
}

/// Who asks, as the examples book names keys.
pub fn asker(owner: Option<&Owner>) -> Option<&str> {
    owner.map(Owner::as_str)
}
