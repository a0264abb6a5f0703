//! How near a text is to others, by sentence embeddings (off the async workers) and shared word
//! stems: what the ranking, the class spotting, the modifiers and the example book compare with.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::words::shares_stem;
use chatty_kg_embed::cosine;

/// Similarity of each label to `phrase` (a superlative's words), stems counted.
pub(crate) async fn similarity(ctx: &AgentContext, phrase: &str, labels: &[String]) -> Result<Vec<f32>, AgentError> {
    let mut texts = vec![phrase.to_owned()];
    texts.extend(labels.iter().cloned());
    let vectors = embed(ctx, texts).await?;
    Ok(labels
        .iter()
        .zip(&vectors[1..])
        .map(|(label, v)| {
            let s = cosine(&vectors[0], v);
            if phrase.split_whitespace().any(|w| shares_stem(label, w)) {
                s.max(STEM_MATCH)
            } else {
                s
            }
        })
        .collect())
}

/// Similarity given to a unit and a label that share a word stem.
pub(crate) const STEM_MATCH: f32 = 0.9;

/// Sentence embeddings, off the async workers.
pub(crate) async fn embed(ctx: &AgentContext, texts: Vec<String>) -> Result<Vec<Vec<f32>>, AgentError> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let embedder = ctx.embedder.clone();
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        embedder.embed(&refs)
    })
    .await
    .map_err(|e| AgentError::Worker { message: e.to_string() })?
    .map_err(AgentError::from)
}
