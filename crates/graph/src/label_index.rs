//! The label index of the embedded store: a tantivy index of (entity IRI, label, degree), built at
//! load time and persisted beside the RocksDB files, so entity search never scans labels.
//!
//! Each label is indexed as the tokens of [`normalize_tokens`] (so "Tom Hanks", "tom hanks" and
//! "TOM  HANKS!" are the same), plus its whole normalised form for exact matches. A search runs up
//! to three tiers, each only when the previous ones found fewer than `limit` entries: exact label,
//! all words (the last one as a prefix), then any word, by prefix or with one typo. Final ordering
//! is [`rank_candidates`](crate::rank_candidates), shared with the remote backend.

use crate::text::normalize_tokens;
use crate::GraphError;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, FuzzyTermQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, FAST, STORED, STRING,
};
use tantivy::tokenizer::WhitespaceTokenizer;
use tantivy::{Index, IndexReader, Order, ReloadPolicy, TantivyDocument, Term};

const WORDS_TOKENIZER: &str = "chatty_words";
/// Each tier fetches at least this many entries, so that the final ranking (which also weighs
/// degree) chooses among equally good matches instead of tantivy's arbitrary tie order.
const MIN_FETCH: usize = 64;

/// One label of one entity, with the entity's degree (its number of triples, capped), which breaks
/// ties between equally good labels: "Tom Hanks" the actor (63 triples) before "tom hanks" the tag (28).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelEntry {
    pub iri: String,
    pub label: String,
    pub degree: u64,
}

#[derive(Clone, Copy)]
struct Fields {
    iri: Field,
    label: Field,
    words: Field,
    exact: Field,
    degree: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let words_options = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(WORDS_TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        iri: builder.add_text_field("iri", STORED),
        label: builder.add_text_field("label", STORED),
        words: builder.add_text_field("words", words_options),
        exact: builder.add_text_field("exact", STRING),
        degree: builder.add_u64_field("degree", STORED | FAST),
    };
    (builder.build(), fields)
}

/// A persisted, read-only label index.
pub struct LabelIndex {
    path: PathBuf,
    reader: IndexReader,
    fields: Fields,
}

impl LabelIndex {
    /// Builds a fresh index at `path` from `entries`, replacing any previous one only once the new
    /// one is complete. Returns the number of labels indexed.
    pub fn build(
        path: &Path,
        entries: impl IntoIterator<Item = Result<LabelEntry, GraphError>>,
    ) -> Result<u64, GraphError> {
        let staging = path.with_extension("building");
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(|e| GraphError::index(&staging, e))?;
        }
        std::fs::create_dir_all(&staging).map_err(|e| GraphError::index(&staging, e))?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(&staging, schema).map_err(|e| GraphError::index(&staging, e))?;
        register_tokenizer(&index);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let mut writer = index
            .writer_with_num_threads::<TantivyDocument>(threads, 64_000_000 * threads)
            .map_err(|e| GraphError::index(&staging, e))?;
        let mut count = 0u64;
        for entry in entries {
            let entry = entry?;
            let tokens = normalize_tokens(&entry.label);
            if tokens.is_empty() {
                continue;
            }
            let mut doc = TantivyDocument::default();
            doc.add_text(fields.iri, &entry.iri);
            doc.add_text(fields.label, &entry.label);
            doc.add_text(fields.words, tokens.join(" "));
            doc.add_text(fields.exact, tokens.join(" "));
            doc.add_u64(fields.degree, entry.degree);
            writer.add_document(doc).map_err(|e| GraphError::index(&staging, e))?;
            count += 1;
        }
        writer.commit().map_err(|e| GraphError::index(&staging, e))?;
        writer
            .wait_merging_threads()
            .map_err(|e| GraphError::index(&staging, e))?;
        if path.exists() {
            std::fs::remove_dir_all(path).map_err(|e| GraphError::index(path, e))?;
        }
        std::fs::rename(&staging, path).map_err(|e| GraphError::index(path, e))?;
        Ok(count)
    }

    pub fn open(path: &Path) -> Result<Self, GraphError> {
        let index = Index::open_in_dir(path).map_err(|e| GraphError::index(path, e))?;
        register_tokenizer(&index);
        let (_, fields) = schema();
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| GraphError::index(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            reader,
            fields,
        })
    }

    /// Number of labels in the index.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Raw `(iri, label, degree)` matches, unranked: up to `max(limit, 64)` per tier (see the module doc).
    pub fn search(&self, text: &str, limit: usize) -> Result<Vec<LabelEntry>, GraphError> {
        let tokens = normalize_tokens(text);
        if tokens.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let searcher = self.reader.searcher();
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        let fetch = limit.max(MIN_FETCH);
        let mut collect = |query: &dyn Query, by_degree: bool, found: &mut Vec<LabelEntry>| {
            self.collect(&searcher, query, by_degree, fetch, &mut seen, found)
        };

        // Tier 1: the whole label, most connected entities first.
        let exact = TermQuery::new(
            Term::from_field_text(f.exact, &tokens.join(" ")),
            IndexRecordOption::Basic,
        );
        collect(&exact, true, &mut found)?;

        // Tier 2: every word, the last possibly unfinished ("tom han").
        if found.len() < limit {
            let word = |t: &str| Term::from_field_text(f.words, t);
            let last = tokens.len() - 1;
            let clauses: Vec<(Occur, Box<dyn Query>)> = tokens
                .iter()
                .enumerate()
                .map(|(i, t)| -> (Occur, Box<dyn Query>) {
                    if i == last {
                        (Occur::Must, Box::new(FuzzyTermQuery::new_prefix(word(t), 0, false)))
                    } else {
                        (Occur::Must, Box::new(TermQuery::new(word(t), IndexRecordOption::WithFreqs)))
                    }
                })
                .collect();
            collect(&BooleanQuery::new(clauses), false, &mut found)?;
        }

        // Tier 3: any word, by prefix or with one typo.
        if found.len() < limit {
            let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for t in &tokens {
                let term = Term::from_field_text(f.words, t);
                clauses.push((Occur::Should, Box::new(TermQuery::new(term.clone(), IndexRecordOption::WithFreqs))));
                if t.len() >= 3 {
                    clauses.push((Occur::Should, Box::new(FuzzyTermQuery::new_prefix(term.clone(), 0, false))));
                }
                if t.len() >= 4 {
                    clauses.push((Occur::Should, Box::new(FuzzyTermQuery::new(term, 1, false))));
                }
            }
            collect(&BooleanQuery::new(clauses), false, &mut found)?;
        }
        Ok(found)
    }

    /// Runs one tier's query and appends the entries not seen in an earlier tier.
    fn collect(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        by_degree: bool,
        limit: usize,
        seen: &mut HashSet<tantivy::DocAddress>,
        found: &mut Vec<LabelEntry>,
    ) -> Result<(), GraphError> {
        let f = self.fields;
        let error = |e: tantivy::TantivyError| GraphError::index(&self.path, e);
        let addresses: Vec<_> = if by_degree {
            let top = TopDocs::with_limit(limit).order_by_u64_field("degree", Order::Desc);
            searcher.search(query, &top).map_err(error)?.into_iter().map(|(_, a)| a).collect()
        } else {
            let top = TopDocs::with_limit(limit).order_by_score();
            searcher.search(query, &top).map_err(error)?.into_iter().map(|(_, a)| a).collect()
        };
        for address in addresses {
            if !seen.insert(address) {
                continue;
            }
            let doc: TantivyDocument = searcher.doc(address).map_err(error)?;
            let text_of = |field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            found.push(LabelEntry {
                iri: text_of(f.iri),
                label: text_of(f.label),
                degree: doc.get_first(f.degree).and_then(|v| v.as_u64()).unwrap_or(0),
            });
        }
        Ok(())
    }
}

fn register_tokenizer(index: &Index) {
    index
        .tokenizers()
        .register(WORDS_TOKENIZER, WhitespaceTokenizer::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(iri: &str, label: &str, degree: u64) -> LabelEntry {
        LabelEntry {
            iri: iri.into(),
            label: label.into(),
            degree,
        }
    }

    #[test]
    fn tiers_find_exact_words_prefix_and_typos() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels");
        let n = LabelIndex::build(
            &path,
            [
                entry("e:tag", "tom hanks", 28),
                entry("e:actor", "Tom Hanks", 63),
                entry("e:cruise", "Tom Cruise", 40),
                entry("e:film", "Tom Hanks: a biography", 2),
                entry("e:empty", "!!!", 1),
            ]
            .map(Ok),
        )
        .unwrap();
        assert_eq!(n, 4, "a label without words is skipped");
        let index = LabelIndex::open(&path).unwrap();
        let iris = |q: &str, limit| {
            crate::rank_candidates(
                q,
                index.search(q, limit).unwrap().into_iter().map(|e| (e.iri, e.label, e.degree)),
                limit,
            )
            .into_iter()
            .map(|c| c.iri)
            .collect::<Vec<_>>()
        };
        assert_eq!(iris("tom hanks", 10), vec!["e:actor", "e:tag", "e:film", "e:cruise"]);
        assert_eq!(iris("TOM   HANKS!", 1), vec!["e:actor"]);
        assert_eq!(iris("hanks", 10)[..2], ["e:actor", "e:tag"]);
        assert_eq!(iris("tom han", 2), vec!["e:actor", "e:tag"]);
        assert_eq!(iris("tom hamks", 1), vec!["e:actor"], "one typo still finds him");
        assert!(iris("meryl streep", 10).is_empty());
        assert!(iris("", 10).is_empty());
    }

    #[test]
    fn rebuild_replaces_the_previous_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels");
        LabelIndex::build(&path, [Ok(entry("e:a", "Alpha", 1))]).unwrap();
        LabelIndex::build(&path, [Ok(entry("e:b", "Beta", 1))]).unwrap();
        let index = LabelIndex::open(&path).unwrap();
        assert_eq!(index.len(), 1);
        assert!(index.search("alpha", 5).unwrap().is_empty());
        assert_eq!(index.search("beta", 5).unwrap()[0].iri, "e:b");
    }
}
