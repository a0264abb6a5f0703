//! What the candle embedders share: a tokenizer that pads a batch only to its longest member,
//! token rows as tensors, and sentence-transformers' pooling.
//!
//! Two details decide whether the numbers match the model cards:
//! - packaged `tokenizer.json` files may pad every input to a fixed length. We pad a batch only
//!   to its longest member and, above all, average only over real tokens (mean pooling weighted
//!   by the attention mask); averaging the padding too pulls every sentence towards the same
//!   vector and every cosine towards 0.9;
//! - the result is L2-normalised (the models' `2_Normalize` module).

use crate::EmbedError;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use std::path::Path;
use tokenizers::{Encoding, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// `dir/tokenizer.json`, padding a batch to its longest input and truncating at `max_tokens`.
pub(crate) fn batch_tokenizer(dir: &Path, max_tokens: usize) -> Result<Tokenizer, EmbedError> {
    let load_err = |e: tokenizers::Error| EmbedError::Load {
        path: dir.into(),
        message: format!("tokenizer.json: {e}"),
    };
    let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(load_err)?;
    // Keep the tokenizer's own padding token and id; only the length changes.
    let padding = tokenizer.get_padding().cloned().unwrap_or_default();
    tokenizer.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..padding
    }));
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..TruncationParams::default()
        }))
        .map_err(load_err)?;
    Ok(tokenizer)
}

/// The weights in `dir/model.safetensors`, read, not mapped (mmap is `unsafe` in candle).
pub(crate) fn weights(dir: &Path, device: &Device) -> Result<VarBuilder<'static>, EmbedError> {
    let tensors =
        candle_core::safetensors::load(dir.join("model.safetensors"), device).map_err(|e| EmbedError::Load {
            path: dir.into(),
            message: format!("model.safetensors: {e}"),
        })?;
    Ok(VarBuilder::from_tensors(tensors, DType::F32, device))
}

/// `texts` tokenized as one batch.
pub(crate) fn encode(tokenizer: &Tokenizer, texts: &[&str]) -> candle_core::Result<Vec<Encoding>> {
    tokenizer
        .encode_batch(texts.to_vec(), true)
        .map_err(|e| candle_core::Error::Msg(e.to_string()))
}

/// One vector per text, from a forward pass giving (texts, dim); no pass for no text.
pub(crate) fn vectors(
    texts: &[&str],
    forward: impl FnOnce(&[&str]) -> candle_core::Result<Tensor>,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let inference = |e: candle_core::Error| EmbedError::Inference(e.to_string());
    forward(texts).map_err(inference)?.to_vec2::<f32>().map_err(inference)
}

/// One row per encoding of `row(encoding)`, stacked: (batch, tokens).
pub(crate) fn token_rows(
    encodings: &[Encoding],
    device: &Device,
    row: &dyn Fn(&Encoding) -> Vec<u32>,
) -> candle_core::Result<Tensor> {
    let rows = encodings
        .iter()
        .map(|e| Tensor::new(row(e), device))
        .collect::<candle_core::Result<Vec<_>>>()?;
    Tensor::stack(&rows, 0)
}

/// The mean of `hidden` (batch, tokens, dim) over the tokens `mask` (batch, tokens) marks real,
/// L2-normalised: (batch, dim).
pub(crate) fn mean_normalized(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (batch, tokens, 1)
    let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (batch, dim)
    let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?; // (batch, 1)
    let mean = summed.broadcast_div(&counts)?;
    let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
    mean.broadcast_div(&norms)
}
