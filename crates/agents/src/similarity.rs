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

/// Each of `texts` by its similarity in meaning to `phrase` (the cosine of their sentence
/// embeddings, no stems counted), with its index, the closest first (ties in the texts' order);
/// and whether the closest is at least `least` and `margin` ahead of the next.
pub(crate) async fn closest_in_meaning(
    ctx: &AgentContext,
    phrase: &str,
    texts: &[String],
    least: f32,
    margin: f32,
) -> Result<(Vec<(f32, usize)>, bool), AgentError> {
    if texts.is_empty() {
        return Ok((Vec::new(), false));
    }
    let mut all = vec![phrase.to_owned()];
    all.extend(texts.iter().cloned());
    let vectors = embed(ctx, all).await?;
    let mut scored: Vec<(f32, usize)> = (0..texts.len())
        .map(|i| (cosine(&vectors[0], &vectors[i + 1]), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let best = scored[0].0;
    let next = scored.get(1).map_or(0.0, |s| s.0);
    Ok((scored, best >= least && best - next >= margin))
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
