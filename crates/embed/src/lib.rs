//! Sentence embeddings: the [`Embedder`] trait, the all-MiniLM-L6-v2 backend on candle
//! ([`MiniLmEmbedder`], the `candle` feature, on by default; [`MpNetEmbedder`] runs
//! all-mpnet-base-v2 for comparison, [`load_candle`] picks by the model's config), an OpenAI-compatible embedding
//! server ([`OpenAiEmbedder`]) and a cache ([`CachedEmbedder`]) for labels that recur across
//! questions.
//!
//! The matching agent ranks the predicates around a linked entity by the cosine between the
//! embedding of their label and of the relation phrase. Vectors are L2-normalised, so the cosine is
//! a dot product ([`cosine`]).
//!
//! ```no_run
//! # #[cfg(feature = "candle")] {
//! use chatty_kg_embed::{Embedder, MiniLmEmbedder, cosine};
//! let model = MiniLmEmbedder::load("models/all-minilm-l6-v2".as_ref())?;
//! let v = model.embed(&["directed by", "director"])?;
//! assert!(cosine(&v[0], &v[1]) > 0.5);
//! # }
//! # Ok::<(), chatty_kg_embed::EmbedError>(())
//! ```

mod cache;
#[cfg(feature = "candle")]
mod minilm;
#[cfg(feature = "candle")]
mod mpnet;
mod openai;
#[cfg(feature = "candle")]
mod pooling;

pub use cache::CachedEmbedder;
#[cfg(feature = "candle")]
pub use minilm::MiniLmEmbedder;
#[cfg(feature = "candle")]
pub use mpnet::MpNetEmbedder;
pub use openai::{OpenAiEmbedder, OpenAiEmbeddingSettings};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model {path}: {message}")]
    Load { path: PathBuf, message: String },
    #[error("tokenizing {text:?}: {message}")]
    Tokenize { text: String, message: String },
    #[error("embedding inference failed: {0}")]
    Inference(String),
    #[error("embedding server {0}")]
    Server(String),
}

/// Turns phrases into L2-normalised vectors of a fixed dimension.
///
/// Synchronous and CPU-bound: async callers run it on a blocking thread.
pub trait Embedder: Send + Sync {
    /// The model's name, as reports show it.
    fn name(&self) -> &str;
    fn dimension(&self) -> usize;
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

impl<E: Embedder + ?Sized> Embedder for Box<E> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn dimension(&self) -> usize {
        (**self).dimension()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts)
    }
}

/// The sentence-embedding model in `dir` on candle, by its `config.json`'s `model_type`: `bert`
/// ([`MiniLmEmbedder`], the default all-MiniLM-L6-v2) or `mpnet` ([`MpNetEmbedder`],
/// all-mpnet-base-v2).
#[cfg(feature = "candle")]
pub fn load_candle(dir: &std::path::Path) -> Result<Box<dyn Embedder>, EmbedError> {
    let config = std::fs::read_to_string(dir.join("config.json")).map_err(|e| EmbedError::Load {
        path: dir.into(),
        message: format!("config.json: {e}"),
    })?;
    let model_type = serde_json::from_str::<serde_json::Value>(&config).ok().and_then(|v| {
        v.get("model_type")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    });
    match model_type.as_deref() {
        Some("mpnet") => Ok(Box::new(MpNetEmbedder::load(dir)?)),
        Some("bert") | None => Ok(Box::new(MiniLmEmbedder::load(dir)?)),
        Some(other) => Err(EmbedError::Load {
            path: dir.into(),
            message: format!("config.json: model_type {other:?} is neither \"bert\" nor \"mpnet\""),
        }),
    }
}

/// Cosine similarity; for normalised vectors this is their dot product, but the norms are divided
/// out anyway so callers may pass any vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na * nb) }
}
