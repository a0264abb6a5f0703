//! all-MiniLM-L6-v2 (a 6-layer BERT) on candle, pooled the way sentence-transformers pools it
//! ([`crate::pooling`]: its packaged `tokenizer.json` pads every input to 128 tokens, which the
//! pooling must not average).

use crate::pooling::{batch_tokenizer, encode, mean_normalized, token_rows, vectors, weights};
use crate::{EmbedError, Embedder};
use candle_core::{Device, Tensor};
use candle_transformers::models::bert::{BertModel, Config};
use std::path::Path;
use tokenizers::Tokenizer;

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

        let tokenizer = batch_tokenizer(dir, MAX_TOKENS)?;

        let model = BertModel::load(weights(dir, &device)?, &config)
            .map_err(|e| load_err(format!("model.safetensors: {e}")))?;
        Ok(Self {
            model,
            tokenizer,
            dimension,
            device,
        })
    }

    fn forward(&self, texts: &[&str]) -> candle_core::Result<Tensor> {
        let encodings = encode(&self.tokenizer, texts)?;
        let ids = token_rows(&encodings, &self.device, &|e| e.get_ids().to_vec())?;
        let type_ids = token_rows(&encodings, &self.device, &|e| e.get_type_ids().to_vec())?;
        let mask = token_rows(&encodings, &self.device, &|e| e.get_attention_mask().to_vec())?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?; // (batch, tokens, dim)
        mean_normalized(&hidden, &mask)
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
        vectors(texts, |texts| self.forward(texts))
    }
}
