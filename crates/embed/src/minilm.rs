//! all-MiniLM-L6-v2 (a 6-layer BERT) on candle, pooled the way sentence-transformers pools it.
//!
//! Two details decide whether the numbers match the model card:
//! - the packaged `tokenizer.json` pads every input to 128 tokens. We pad a batch only to its
//!   longest member and, above all, average only over real tokens (mean pooling weighted by the
//!   attention mask); averaging the padding too pulls every sentence towards the same vector and
//!   every cosine towards 0.9;
//! - the result is L2-normalised (the model's `2_Normalize` module).

use crate::{EmbedError, Embedder};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::Path;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// The model's `max_seq_length` (sentence_bert_config.json): longer inputs are truncated.
const MAX_TOKENS: usize = 256;

pub struct MiniLmEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    dimension: usize,
    device: Device,
}

impl MiniLmEmbedder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let load_err = |message: String| EmbedError::Load {
            path: dir.into(),
            message,
        };
        let device = Device::Cpu;
        let config_text =
            std::fs::read_to_string(dir.join("config.json")).map_err(|e| load_err(format!("config.json: {e}")))?;
        let config: Config = serde_json::from_str(&config_text).map_err(|e| load_err(format!("config.json: {e}")))?;
        let dimension = serde_json::from_str::<serde_json::Value>(&config_text)
            .ok()
            .and_then(|v| v.get("hidden_size").and_then(serde_json::Value::as_u64))
            .ok_or_else(|| load_err("config.json has no hidden_size".into()))? as usize;

        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| load_err(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| load_err(format!("tokenizer.json: {e}")))?;

        // Read, not mmap: mmap is `unsafe` in candle and the file is only 90 MB.
        let tensors = candle_core::safetensors::load(dir.join("model.safetensors"), &device)
            .map_err(|e| load_err(format!("model.safetensors: {e}")))?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let model = BertModel::load(vb, &config).map_err(|e| load_err(format!("model.safetensors: {e}")))?;
        Ok(Self {
            model,
            tokenizer,
            dimension,
            device,
        })
    }

    fn forward(&self, texts: &[&str]) -> candle_core::Result<Tensor> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| candle_core::Error::Msg(e.to_string()))?;
        let rows = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> candle_core::Result<Tensor> {
            let rows = encodings
                .iter()
                .map(|e| Tensor::new(f(e), &self.device))
                .collect::<candle_core::Result<Vec<_>>>()?;
            Tensor::stack(&rows, 0)
        };
        let ids = rows(&|e| e.get_ids())?;
        let type_ids = rows(&|e| e.get_type_ids())?;
        let mask = rows(&|e| e.get_attention_mask())?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?; // (batch, tokens, dim)
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (batch, tokens, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (batch, dim)
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?; // (batch, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norms)
    }
}

impl Embedder for MiniLmEmbedder {
    fn name(&self) -> &str {
        "all-MiniLM-L6-v2"
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let out = self.forward(texts).map_err(|e| EmbedError::Inference(e.to_string()))?;
        out.to_vec2::<f32>().map_err(|e| EmbedError::Inference(e.to_string()))
    }
}
