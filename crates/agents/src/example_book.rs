//! The examples a knowledge graph keeps from feedback, as data: what an example is, whose it is,
//! and the book that holds them in memory for the questions ([`ExampleBook`]). Making an example
//! of a turn and trying one on a question is the candidates' stage
//! (`candidates/examples.rs`); the book sits here, below every stage, because the context every
//! agent shares holds it.

use crate::error::AgentError;
use crate::qir::QuestionKind;
use chatty_kg_graph::{GraphError, ReadQuery};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, RwLock};

/// What a masked mention becomes.
pub const MASK: &str = "X";

/// Anchors an example may have (each order of them may be tried).
pub const MAX_ANCHORS: usize = 3;

/// Examples kept per knowledge graph in memory at most (the oldest are not loaded past it).
pub const MAX_EXAMPLES: usize = 20_000;

/// An example as the agents make and read it (the store keeps it as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// The standalone question as asked.
    pub question: String,
    /// With the vertices it names replaced by [`MASK`].
    pub masked: String,
    /// The sentence embedding of `masked`.
    pub embedding: Vec<f32>,
    /// The query that answered it.
    pub sparql: String,
    /// The query's anchors, in the order the question names them.
    pub anchors: Vec<String>,
    /// The question's form.
    pub form: QuestionKind,
}

/// Why feedback made no example.
#[derive(Debug, thiserror::Error)]
pub enum NoExample {
    #[error("the query does not parse: {0}")]
    Unreadable(String),
    #[error("the query starts from no vertex: nothing of a later question could take its place")]
    NoAnchor,
    #[error("the query starts from {0} vertices; an example starts from at most {MAX_ANCHORS}")]
    TooManyAnchors(usize),
    #[error(transparent)]
    Agent(#[from] AgentError),
}

/// Whose an example is, as the book keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// The key whose hash this is (`None`: anonymous callers of a server without keys).
    Key(Option<String>),
    /// Imported by an operator: everyone's questions use it.
    Everyone,
}

pub(crate) struct Entry {
    pub(crate) id: String,
    pub(crate) holder: Holder,
    pub(crate) example: Arc<Example>,
    pub(crate) query: ReadQuery,
}

/// A knowledge graph's examples, in memory.
#[derive(Default)]
pub struct ExampleBook {
    pub(crate) entries: RwLock<Vec<Entry>>,
}

/// The example a question tried, as the explanation shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExampleUse {
    pub id: String,
    /// The example's question.
    pub question: String,
    /// Cosine of the two masked questions' embeddings.
    pub similarity: f32,
    /// The names of the example's predicates and classes, each with how much the words only the
    /// example's question has and the words only this one has say it (cosine of the name and
    /// those words; 0 for a question with no words of its own).
    pub words: Vec<SaidBy>,
    /// Whether this question says the example's relations as well as the example's question
    /// did (within [`WORDS_TOLERANCE`]); if not, its query was not tried.
    pub fits: bool,
    /// Each of the example's anchors and the vertex of this question that took its place.
    pub anchors: Vec<(String, String)>,
    /// Whether its query answered (else the ranking's candidates did, or nothing).
    pub answered: bool,
}

/// A predicate's or class's name, and how much two questions say it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaidBy {
    pub name: String,
    pub example: f32,
    pub question: f32,
}

/// How much less this question's own words may say one of the example's relations than the
/// example's own words did: "direct" does not say the "producer" that "produce" said, though
/// "Which films did X direct?" and "Which films did X produce?" are close (cosine 0.90).
pub const WORDS_TOLERANCE: f32 = 0.1;

/// The nearest example, tried on a question's vertices: its query in each order of them (none
/// when the question does not say what the example said).
pub struct Tried {
    pub used: ExampleUse,
    /// Each order's anchors (the example's, this question's) and query.
    pub queries: Vec<(Vec<(String, String)>, ReadQuery)>,
}

impl ExampleBook {
    /// Adds `example` as `id` (replacing one of that id).
    pub fn insert(&self, id: &str, holder: Holder, example: Example) -> Result<(), GraphError> {
        let query = ReadQuery::parse(&example.sparql)?;
        let mut entries = self.entries.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.retain(|e| e.id != id);
        if entries.len() >= MAX_EXAMPLES {
            tracing::warn!(
                id,
                max = MAX_EXAMPLES,
                "the graph has as many examples as are kept in memory: not used"
            );
            return Ok(());
        }
        entries.push(Entry {
            id: id.to_owned(),
            holder,
            example: Arc::new(example),
            query,
        });
        Ok(())
    }

    /// Removes the example `id`; whether there was one.
    pub fn remove(&self, id: &str) -> bool {
        let mut entries = self.entries.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = entries.len();
        entries.retain(|e| e.id != id);
        entries.len() != before
    }

    pub fn len(&self) -> usize {
        self.entries
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `asker` may use the entry for a question in `form` from `anchors` vertices.
    pub(crate) fn usable(entry: &Entry, asker: Option<&str>, form: QuestionKind, anchors: usize) -> bool {
        let theirs = match &entry.holder {
            Holder::Everyone => true,
            Holder::Key(owner) => owner.as_deref() == asker,
        };
        theirs && entry.example.form == form && entry.example.anchors.len() == anchors
    }

    /// Whether any example is usable (see [`Self::usable`]): else the question is not embedded.
    pub(crate) fn any_usable(&self, asker: Option<&str>, form: QuestionKind, anchors: usize) -> bool {
        let entries = self.entries.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.iter().any(|e| Self::usable(e, asker, form, anchors))
    }

    /// The example closest to `embedding` among those `asker` may use that ask in `form` from
    /// `anchors` vertices, with its similarity.
    pub(crate) fn nearest(
        &self,
        embedding: &[f32],
        asker: Option<&str>,
        form: QuestionKind,
        anchors: usize,
    ) -> Option<(String, Arc<Example>, ReadQuery, f32)> {
        let entries = self.entries.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        entries
            .iter()
            .filter(|e| Self::usable(e, asker, form, anchors))
            .map(|e| (e, chatty_kg_embed::cosine(embedding, &e.example.embedding)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(e, s)| (e.id.clone(), e.example.clone(), e.query.clone(), s))
    }
}
