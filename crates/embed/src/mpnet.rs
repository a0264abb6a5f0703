//! all-mpnet-base-v2 on candle, for comparing a stronger sentence embedder with the default
//! MiniLM (`reports/README.md` has the comparison). MPNet is a 12-layer encoder like BERT with two
//! differences, both here because candle has no MPNet: positions count from the padding id + 1
//! (as in RoBERTa), and every layer's attention scores get a learned bias per head for the
//! bucketed distance between the two tokens (T5-style buckets, shared by all layers). Pooled as
//! sentence-transformers pools it: mean over real tokens, L2-normalised ([`crate::pooling`]).

use crate::pooling::{batch_tokenizer, encode, mean_normalized, token_rows, vectors, weights};
use crate::{EmbedError, Embedder};
use candle_core::{D, DType, Device, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, Module, VarBuilder};
use serde::Deserialize;
use std::path::Path;
use tokenizers::Tokenizer;

/// The model's `max_seq_length` (sentence_bert_config.json).
const MAX_TOKENS: usize = 384;
/// The distance past which every distance shares the last bucket (Hugging Face's default).
const MAX_DISTANCE: f32 = 128.0;

#[derive(Deserialize)]
struct Config {
    hidden_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    intermediate_size: usize,
    vocab_size: usize,
    max_position_embeddings: usize,
    layer_norm_eps: f64,
    relative_attention_num_buckets: usize,
    pad_token_id: u32,
}

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

pub struct MpNetEmbedder {
    words: Embedding,
    positions: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    /// (buckets, heads): the bias each head adds for a distance's bucket.
    relative_bias: Embedding,
    buckets: usize,
    heads: usize,
    pad: u32,
    tokenizer: Tokenizer,
    dimension: usize,
    device: Device,
}

/// The bucket of the distance `relative` (key position − query position): 16 buckets per sign,
/// the first 8 exact, the rest logarithmic up to [`MAX_DISTANCE`]. Computed in f32 as the
/// reference implementation computes it, so boundary distances fall in the same bucket.
fn bucket(relative: i64, buckets: usize) -> u32 {
    let half = (buckets / 2) as i64;
    let n = -relative;
    let mut bucket = if n < 0 { half } else { 0 };
    let n = n.abs();
    let exact = half / 2;
    bucket += if n < exact {
        n
    } else {
        let scale = (half - exact) as f32;
        let far = ((n as f32 / exact as f32).ln() / (MAX_DISTANCE / exact as f32).ln() * scale) as i64;
        (exact + far).min(half - 1)
    };
    bucket as u32
}

impl MpNetEmbedder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let load_err = |message: String| EmbedError::Load {
            path: dir.into(),
            message,
        };
        let device = Device::Cpu;
        let text =
            std::fs::read_to_string(dir.join("config.json")).map_err(|e| load_err(format!("config.json: {e}")))?;
        let config: Config = serde_json::from_str(&text).map_err(|e| load_err(format!("config.json: {e}")))?;
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return Err(load_err(
                "config.json: hidden_size is no multiple of num_attention_heads".into(),
            ));
        }
        let tokenizer = batch_tokenizer(dir, MAX_TOKENS)?;
        let vb = weights(dir, &device)?;
        Self::build(vb, &config, tokenizer, device).map_err(|e| load_err(format!("model.safetensors: {e}")))
    }

    fn build(vb: VarBuilder, config: &Config, tokenizer: Tokenizer, device: Device) -> candle_core::Result<Self> {
        let (h, eps) = (config.hidden_size, config.layer_norm_eps);
        let embeddings = vb.pp("embeddings");
        let encoder = vb.pp("encoder");
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let layer = encoder.pp(format!("layer.{i}"));
                let attention = layer.pp("attention");
                Ok(Layer {
                    q: candle_nn::linear(h, h, attention.pp("attn.q"))?,
                    k: candle_nn::linear(h, h, attention.pp("attn.k"))?,
                    v: candle_nn::linear(h, h, attention.pp("attn.v"))?,
                    o: candle_nn::linear(h, h, attention.pp("attn.o"))?,
                    attention_norm: candle_nn::layer_norm(h, eps, attention.pp("LayerNorm"))?,
                    intermediate: candle_nn::linear(h, config.intermediate_size, layer.pp("intermediate.dense"))?,
                    output: candle_nn::linear(config.intermediate_size, h, layer.pp("output.dense"))?,
                    output_norm: candle_nn::layer_norm(h, eps, layer.pp("output.LayerNorm"))?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Self {
            words: candle_nn::embedding(config.vocab_size, h, embeddings.pp("word_embeddings"))?,
            positions: candle_nn::embedding(config.max_position_embeddings, h, embeddings.pp("position_embeddings"))?,
            embedding_norm: candle_nn::layer_norm(h, eps, embeddings.pp("LayerNorm"))?,
            layers,
            relative_bias: candle_nn::embedding(
                config.relative_attention_num_buckets,
                config.num_attention_heads,
                encoder.pp("relative_attention_bias"),
            )?,
            buckets: config.relative_attention_num_buckets,
            heads: config.num_attention_heads,
            pad: config.pad_token_id,
            tokenizer,
            dimension: h,
            device,
        })
    }

    fn forward(&self, texts: &[&str]) -> candle_core::Result<Tensor> {
        let encodings = encode(&self.tokenizer, texts)?;
        let ids = token_rows(&encodings, &self.device, &|e| e.get_ids().to_vec())?;
        let mask = token_rows(&encodings, &self.device, &|e| e.get_attention_mask().to_vec())?;
        // Real tokens are numbered from the padding id + 1; padding keeps the padding id.
        let positions = token_rows(&encodings, &self.device, &|e| {
            let mut seen = 0;
            e.get_attention_mask()
                .iter()
                .map(|&real| {
                    seen += real;
                    if real == 1 { self.pad + seen } else { self.pad }
                })
                .collect()
        })?;
        let (batch, tokens) = ids.dims2()?;
        let mut x = self
            .embedding_norm
            .forward(&(self.words.forward(&ids)? + self.positions.forward(&positions)?)?)?;

        // (1, heads, tokens, tokens): each head's bias for the distance between two tokens.
        let distances: Vec<u32> = (0..tokens as i64)
            .flat_map(|query| (0..tokens as i64).map(move |key| bucket(key - query, self.buckets)))
            .collect();
        let distances = Tensor::from_vec(distances, (tokens, tokens), &self.device)?;
        let bias = self
            .relative_bias
            .forward(&distances)?
            .permute((2, 0, 1))?
            .unsqueeze(0)?;
        // (batch, 1, 1, tokens): padding is never attended to.
        let hidden_mask = ((mask.to_dtype(DType::F32)? - 1.0)? * 1e9)?.reshape((batch, 1, 1, tokens))?;
        let bias = bias.broadcast_add(&hidden_mask)?.contiguous()?;

        let head_size = self.dimension / self.heads;
        let scale = 1.0 / (head_size as f64).sqrt();
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((batch, tokens, self.heads, head_size))?
                .transpose(1, 2)?
                .contiguous()
        };
        for layer in &self.layers {
            let q = split(layer.q.forward(&x)?)?;
            let k = split(layer.k.forward(&x)?)?;
            let v = split(layer.v.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&bias)?;
            let weights = candle_nn::ops::softmax(&scores, D::Minus1)?;
            let context = weights
                .matmul(&v)?
                .transpose(1, 2)?
                .reshape((batch, tokens, self.dimension))?;
            let attended = layer.attention_norm.forward(&(layer.o.forward(&context)? + &x)?)?;
            let inner = layer.intermediate.forward(&attended)?.gelu_erf()?;
            x = layer
                .output_norm
                .forward(&(layer.output.forward(&inner)? + &attended)?)?;
        }
        mean_normalized(&x, &mask)
    }
}

impl Embedder for MpNetEmbedder {
    fn name(&self) -> &str {
        "all-mpnet-base-v2"
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        vectors(texts, |texts| self.forward(texts))
    }
}

#[cfg(test)]
mod tests {
    use super::{MpNetEmbedder, bucket};
    use crate::Embedder;
    use candle_core::{DType, Device, Tensor};
    use std::collections::HashMap;

    /// A two-layer MPNet of 8 dimensions with random weights, a word-level tokenizer that pads
    /// with `<pad>` (id 1), in a fresh directory.
    fn tiny_model(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("chatty-kg-mpnet-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = r#"{"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 2,
            "intermediate_size": 16, "vocab_size": 8, "max_position_embeddings": 20,
            "layer_norm_eps": 1e-5, "relative_attention_num_buckets": 32, "pad_token_id": 1,
            "model_type": "mpnet"}"#;
        std::fs::write(dir.join("config.json"), config).unwrap();
        let tokenizer = r#"{"version": "1.0", "truncation": null,
            "padding": {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": null,
                        "pad_id": 1, "pad_type_id": 0, "pad_token": "<pad>"},
            "added_tokens": [], "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null, "decoder": null,
            "model": {"type": "WordLevel", "unk_token": "[UNK]",
                      "vocab": {"<s>": 0, "<pad>": 1, "a": 2, "b": 3, "c": 4, "d": 5, "e": 6, "[UNK]": 7}}}"#;
        std::fs::write(dir.join("tokenizer.json"), tokenizer).unwrap();
        let device = Device::Cpu;
        let random = |shape: &[usize]| Tensor::randn(0f32, 0.5, shape, &device).unwrap();
        let ones = |n: usize| Tensor::ones(n, DType::F32, &device).unwrap();
        let mut tensors: HashMap<String, Tensor> = HashMap::new();
        tensors.insert("embeddings.word_embeddings.weight".into(), random(&[8, 8]));
        tensors.insert("embeddings.position_embeddings.weight".into(), random(&[20, 8]));
        tensors.insert("encoder.relative_attention_bias.weight".into(), random(&[32, 2]));
        let mut norm = |prefix: &str| {
            tensors.insert(format!("{prefix}.weight"), ones(8));
            tensors.insert(format!("{prefix}.bias"), random(&[8]));
        };
        norm("embeddings.LayerNorm");
        for i in 0..2 {
            norm(&format!("encoder.layer.{i}.attention.LayerNorm"));
            norm(&format!("encoder.layer.{i}.output.LayerNorm"));
        }
        for i in 0..2 {
            let layer = format!("encoder.layer.{i}");
            for (name, out, inp) in [
                ("attention.attn.q", 8, 8),
                ("attention.attn.k", 8, 8),
                ("attention.attn.v", 8, 8),
                ("attention.attn.o", 8, 8),
                ("intermediate.dense", 16, 8),
                ("output.dense", 8, 16),
            ] {
                tensors.insert(format!("{layer}.{name}.weight"), random(&[out, inp]));
                tensors.insert(format!("{layer}.{name}.bias"), random(&[out]));
            }
        }
        candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
        dir
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
    }

    #[test]
    fn padding_changes_nothing_and_word_order_matters() {
        let dir = tiny_model("padding");
        let model = MpNetEmbedder::load(&dir).unwrap();
        let alone = model.embed(&["a b"]).unwrap();
        // Beside a longer text, "a b" is padded: the padding must be neither attended to nor
        // averaged.
        let batch = model.embed(&["a b", "c d e a b"]).unwrap();
        assert!(close(&alone[0], &batch[0]), "{alone:?} vs {batch:?}");
        for v in &batch {
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "{norm}");
        }
        // The same words in another order: positions and distances tell them apart.
        let swapped = model.embed(&["b a"]).unwrap();
        assert!(!close(&alone[0], &swapped[0]));
        assert_eq!((model.dimension(), model.name()), (8, "all-mpnet-base-v2"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_model_of_another_kind_is_a_clear_error() {
        let dir = tiny_model("kind");
        std::fs::write(dir.join("config.json"), r#"{"model_type": "gpt2"}"#).unwrap();
        let Err(error) = crate::load_candle(&dir) else {
            panic!("a gpt2 config loaded as a sentence embedder")
        };
        assert!(error.to_string().contains("gpt2"), "{error}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn distances_fall_in_the_reference_buckets() {
        // Hugging Face's relative_position_bucket(key - query, 32, 128): a key before the query in
        // buckets 0-15 (8 exact, then logarithmic), after it in 16-31.
        let expected = [
            (0, 0),
            (-1, 1),
            (-7, 7),
            (-8, 8),
            (-12, 9),
            (-16, 10),
            (-32, 12),
            (-64, 14),
            (-127, 15),
            (-500, 15),
            (1, 17),
            (8, 24),
            (16, 26),
            (500, 31),
        ];
        for (relative, b) in expected {
            assert_eq!(bucket(relative, 32), b, "key - query = {relative}");
        }
    }
}
