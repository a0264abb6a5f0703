//! The embedded model's settings, in every build (a configuration names them whether or not this
//! build can run llama.cpp: see the `llama` feature).

use serde::{Deserialize, Serialize};

/// The embedded llama.cpp model (`[llm.embedded]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlamaSettings {
    /// A model name from the catalog (`chatty-kg models list`) or a path to a `.gguf` file.
    pub model: String,
    /// Context window in tokens (prompt + answer).
    pub context_size: u32,
    /// CPU threads; 0 means one per core.
    pub threads: u32,
    pub max_tokens: u32,
    /// 0 samples greedily (deterministic).
    pub temperature: f32,
    pub seed: u32,
}

impl Default for LlamaSettings {
    fn default() -> Self {
        Self {
            model: "qwen2.5-coder-0.5b".into(),
            context_size: 4096,
            threads: 0,
            max_tokens: 384,
            temperature: 0.0,
            seed: 42,
        }
    }
}
