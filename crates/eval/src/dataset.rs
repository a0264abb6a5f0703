//! What every loader produces: a benchmark as a list of items, each a question with its gold
//! answers, or with a gold SPARQL query whose answers come from the KG in use (LC-QuAD and
//! Chatty-Gen ship no answers), plus tags (question type, hops) and, for dialogues, the turn and
//! its standalone version.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: not {format} ({message})")]
    Format {
        path: PathBuf,
        format: &'static str,
        message: String,
    },
    #[error("{path}: cannot tell the benchmark format; name it with --format ({known})")]
    UnknownFormat { path: PathBuf, known: String },
}

impl DatasetError {
    pub(crate) fn format(path: &Path, format: &'static str, message: impl ToString) -> Self {
        DatasetError::Format {
            path: path.to_path_buf(),
            format,
            message: message.to_string(),
        }
    }
}

pub(crate) fn read(path: &Path) -> Result<String, DatasetError> {
    std::fs::read_to_string(path).map_err(|source| DatasetError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// One question of a benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Unique within the benchmark; resumable runs key on it.
    pub id: String,
    /// What the system is asked.
    pub question: String,
    /// Gold answers (IRIs, literals, numbers, `true`/`false`), when the benchmark ships them.
    pub gold: Option<Vec<String>>,
    /// A gold query; when `gold` is `None`, its results on the KG in use are the gold answers.
    pub gold_sparql: Option<String>,
    /// Question type, hops, answer type, template…: what reports break F1 down by.
    pub tags: BTreeMap<String, String>,
    /// Set for dialogue benchmarks.
    pub dialogue: Option<DialogueTurn>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogueTurn {
    pub dialogue: String,
    /// 0 for the first turn.
    pub turn: usize,
    /// The same question made self-contained (Chatty-Gen's `original[]`).
    pub standalone: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// QALD-JSON: QALD-9, QALD-9-plus, the KGQAn YAGO/DBLP sets.
    Qald,
    /// LC-QuAD 1.0 JSON (gold SPARQL only).
    Lcquad,
    /// MetaQA `question<TAB>ans1|ans2`.
    Metaqa,
    /// PathQuestion `question<TAB>answer(a/b/)<TAB>path`.
    Pathquestion,
    /// Chatty-Gen dialogues (`data[].dialogue[]`, `original[]`, `queries[]`).
    ChattyGen,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::Qald,
        Format::Lcquad,
        Format::Metaqa,
        Format::Pathquestion,
        Format::ChattyGen,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Qald => "qald",
            Format::Lcquad => "lcquad",
            Format::Metaqa => "metaqa",
            Format::Pathquestion => "pathquestion",
            Format::ChattyGen => "chatty-gen",
        }
    }

    /// Guesses the format from the file's name and first bytes.
    pub fn detect(path: &Path) -> Result<Format, DatasetError> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let head: String = read(path)?.chars().take(4096).collect();
        let format = if name.ends_with(".json") {
            if head.contains("\"questions\"") {
                Some(Format::Qald)
            } else if head.contains("\"corrected_question\"") || head.contains("\"sparql_query\"") {
                Some(Format::Lcquad)
            } else if head.contains("\"dialogue\"") || head.contains("\"seeds_used\"") || head.contains("\"data\"") {
                Some(Format::ChattyGen)
            } else {
                None
            }
        } else if head.lines().next().is_some_and(|l| l.split('\t').count() == 3) {
            Some(Format::Pathquestion)
        } else if head.lines().next().is_some_and(|l| l.split('\t').count() == 2) {
            Some(Format::Metaqa)
        } else {
            None
        };
        format.ok_or_else(|| DatasetError::UnknownFormat {
            path: path.to_path_buf(),
            known: Format::ALL.map(Format::name).join(", "),
        })
    }
}
