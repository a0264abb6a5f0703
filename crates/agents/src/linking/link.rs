//! What linking gives the later stages: each mention with the vertex it names and how it was
//! found.

use serde::{Deserialize, Serialize};

/// How an entity mention was linked to a vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkMethod {
    /// Exactly one vertex has the mention as its label (up to case); homonyms go by degree.
    ExactLabel,
    /// Search found a single candidate.
    OnlyCandidate,
    /// No label is the mention, but it is part of one vertex's label, and that vertex has far
    /// more edges than any other such one ("Kerouac": Jack Kerouac).
    Dominant,
    /// The mention is an acronym no label is ("US", "JFK"), and the vertex whose name of several
    /// words it abbreviates has far more edges than any other so named (the United States).
    Initials,
    /// No label is the mention and no vertex dominates, but it is part of some labels: the
    /// one of them with the most edges ("Lincoln": the president, not a county).
    MostConnected,
    /// The model chose among the candidate labels.
    Model,
    /// The dialogue decided: the mention is a referent of an earlier turn, with its vertex.
    Referent,
    /// No label matches it exactly, but the graph stores the mention as a literal of this
    /// vertex (a title, an ISBN, a code): "the book with ISBN 0-306-40615-2".
    Literal,
    /// The user chose it when asked which of several vertices of one label was meant.
    Clarified,
    /// No label holds the word, but it modifies the asked class ("*Danish* films") and names
    /// one of the values the class's instances have, by its embedding ("Denmark").
    Modifier,
    /// A yes/no question's other named thing has this vertex as a neighbour, and the question
    /// writes its name where the mention stands ("Pope John Paul II" beside Mother Teresa for
    /// "John Paul the second"), where the search's vertex shares no edge with it.
    Neighbour,
    /// The noun a "which" question asks for ("Which *currency sign* …") is exactly the label of
    /// a vertex nothing points to; this vertex, of a label holding its words and close to it in
    /// meaning, is one things share as a value or a type (the category "currency symbol"): the
    /// set the answers belong to.
    AskedSet,
    /// No label holds the mention, but it joins a relation's name to another word
    /// ("architecture-independent"): of the vertices that relation reaches, the one whose name
    /// read with the relation's ("architecture all") is closest to it in meaning.
    RelationValue,
    /// Nothing in the graph matches the mention.
    NotFound,
    /// Candidates matched some of its words, and the model said none of them is what the
    /// mention names.
    NoneFits,
}

/// Entity linking of one mention (paper: entity retriever + vertex selection + vertex validator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityLink {
    pub mention: String,
    pub iri: Option<String>,
    pub label: Option<String>,
    pub method: LinkMethod,
    /// Candidates the retriever found (at most vlimit).
    pub candidates: usize,
    /// The best few candidate labels, as shown (or as they would have been shown) to the model.
    pub top_candidates: Vec<String>,
    /// Other vertices with the same label, in rank order (degree): tried in turn when no
    /// relation path from the linked one fits the question.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub homonyms: Vec<String>,
    /// The linked vertex was not the first homonym: the ones before it had no path that fits,
    /// or (one anchor) a clearly worse best path than this one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub homonym_retried: bool,
    /// Read as words of the relation instead of a vertex: a common noun ("the *time zone* of
    /// Rome") whose vertex no path joined with the question's name.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_as_words: bool,
}
