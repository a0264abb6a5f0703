//! The label index of the embedded store: a tantivy index of (entity IRI, label), built at load
//! time and persisted beside the RocksDB files, so entity search never scans labels.
//!
//! Each label is indexed as the tokens of [`normalize_tokens`] (so "Tom Hanks", "tom hanks" and
//! "TOM  HANKS!" are the same), plus its whole normalised form for exact matches. A search runs up
//! to three tiers: exact label; all words (whole, then the last one possibly unfinished, each only
//! while fewer than `limit` were found); and, only when neither found anything, any word by prefix
//! or with one typo.
//! The final order is decided by `KnowledgeGraph::search_entities`, the same for every backend.
//!
//! A label of several words is also indexed by its initials ("United States" as "us", "John F.
//! Kennedy" as "jfk", "Federal Bureau of Investigation" as "fboi" and, its small words left out,
//! "fbi"), which [`LabelIndex::search_initials`] looks up for a mention written as an acronym.
//! An index built before there were initials has no such field and finds none.

use crate::GraphError;
use crate::lock::sync_dir;
use crate::text::normalize_tokens;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, FuzzyTermQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value};
use tantivy::tokenizer::WhitespaceTokenizer;
use tantivy::{Index, IndexReader, IndexSettings, ReloadPolicy, TantivyDocument, Term};

const WORDS_TOKENIZER: &str = "chatty_words";
/// Each tier fetches at least this many entries, so that the final ranking (which also weighs
/// degree) chooses among equally good matches, not tantivy's arbitrary order of ties.
const MIN_FETCH: usize = 64;
/// At most this many matches per tier, whatever the caller asks (a `limit` of `usize::MAX` would
/// otherwise allocate a heap of that size).
pub const MAX_SEARCH_RESULTS: usize = 10_000;
/// Words of the searched text used; a longer text keeps its first ones (tier 3 builds up to
/// three clauses per word).
pub const MAX_SEARCH_WORDS: usize = 16;

/// Bytes per block of the stored (IRI, label) pairs, about 15 of them. A search reads up to
/// `limit` entries scattered over the index, and each read copies its whole block: with
/// tantivy's default 16 KiB, 600 reads copied ~10 MB.
const DOCSTORE_BLOCK_BYTES: usize = 1024;

/// One label of one entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelEntry {
    pub iri: String,
    pub label: String,
}

#[derive(Clone, Copy)]
struct Fields {
    iri: Field,
    label: Field,
    words: Field,
    exact: Field,
    /// `None` in an index built before labels had initials.
    initials: Option<Field>,
}

/// Small words an acronym may leave out ("Federal Bureau *of* Investigation": FBI).
const SMALL_WORDS: &[&str] = &["of", "the", "and", "for", "a", "an", "in", "on", "at", "to", "de"];

/// The initials a label of at least two words may be written as: of every word, and of its
/// words but the small ones, each of two letters or more ("United States of America": "usoa",
/// "usa"). A word that is a number has none ("Apollo 14").
pub fn initials(label: &str) -> Vec<String> {
    let tokens = normalize_tokens(label);
    if tokens.len() < 2 || tokens.iter().any(|t| t.chars().all(|c| c.is_ascii_digit())) {
        return Vec::new();
    }
    let first_letters = |small_too: bool| -> String {
        tokens
            .iter()
            .filter(|t| small_too || !SMALL_WORDS.contains(&String::as_str(t)))
            .filter_map(|t| t.chars().next())
            .collect()
    };
    let mut found = vec![first_letters(true)];
    let content = first_letters(false);
    if !found.contains(&content) {
        found.push(content);
    }
    found.retain(|i| i.len() >= 2);
    found
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
        initials: Some(builder.add_text_field("initials", STRING)),
    };
    (builder.build(), fields)
}

/// Syncs every file of the freshly built index directory `dir`, then the directory itself.
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::File::open(entry.path())?.sync_all()?;
        }
    }
    sync_dir(dir)
}

/// Replaces the index at `path` by the complete one at `staging`: the old one is renamed aside,
/// the new one renamed in, and the old one removed only then. A crash in between leaves the old
/// index at `<path>.old` and no index at `path`, which `EmbeddedStore::open` reports (its manifest
/// still says `indexing`), never a half-built index.
fn swap_into_place(staging: &Path, path: &Path) -> std::io::Result<()> {
    let old = path.with_extension("old");
    if old.exists() {
        std::fs::remove_dir_all(&old)?;
    }
    let had_old = path.exists();
    if had_old {
        std::fs::rename(path, &old)?;
    }
    std::fs::rename(staging, path)?;
    if let Some(parent) = path.parent() {
        sync_dir(parent)?;
    }
    if had_old {
        std::fs::remove_dir_all(&old)?;
    }
    Ok(())
}

/// A persisted, read-only label index.
pub struct LabelIndex {
    path: PathBuf,
    reader: IndexReader,
    fields: Fields,
}

impl LabelIndex {
    /// Builds a fresh index at `path` from `entries` in `<path>.building`, syncs it to disk, and
    /// only then swaps it in for any previous one. Returns the number of labels indexed.
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
        let settings = IndexSettings {
            docstore_blocksize: DOCSTORE_BLOCK_BYTES,
            ..IndexSettings::default()
        };
        let index = Index::builder()
            .schema(schema)
            .settings(settings)
            .create_in_dir(&staging)
            .map_err(|e| GraphError::index(&staging, e))?;
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
            if let Some(field) = fields.initials {
                for written in initials(&entry.label) {
                    doc.add_text(field, written);
                }
            }
            writer.add_document(doc).map_err(|e| GraphError::index(&staging, e))?;
            count += 1;
        }
        writer.commit().map_err(|e| GraphError::index(&staging, e))?;
        writer
            .wait_merging_threads()
            .map_err(|e| GraphError::index(&staging, e))?;
        drop(index);
        sync_tree(&staging).map_err(|e| GraphError::index(&staging, e))?;
        swap_into_place(&staging, path).map_err(|e| GraphError::index(path, e))?;
        Ok(count)
    }

    pub fn open(path: &Path) -> Result<Self, GraphError> {
        let index = Index::open_in_dir(path).map_err(|e| GraphError::index(path, e))?;
        register_tokenizer(&index);
        let (_, mut fields) = schema();
        // An index built before labels had initials.
        fields.initials = index.schema().get_field("initials").ok();
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

    /// Raw matches, unranked: up to `max(limit, 64)` per query of a tier (see the module doc),
    /// `limit` clamped to [`MAX_SEARCH_RESULTS`] and the text to its first [`MAX_SEARCH_WORDS`]
    /// words.
    pub fn search(&self, text: &str, limit: usize) -> Result<Vec<LabelEntry>, GraphError> {
        let Some((tokens, limit)) = searched(text, limit) else {
            return Ok(Vec::new());
        };
        let f = self.fields;
        let searcher = self.reader.searcher();
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        let fetch = limit.max(MIN_FETCH);
        let mut collect =
            |query: &dyn Query, found: &mut Vec<LabelEntry>| self.collect(&searcher, query, fetch, &mut seen, found);

        // Tier 1: the whole label.
        collect(&self.whole_label(&tokens), &mut found)?;

        // Tier 2: every word, whole first ("tea": "Tea dishes" before "Team Lotus"), then the
        // last possibly unfinished ("tom han"). A prefix scores every match alike, so which of
        // many (every "tea…") the fetch keeps would be the index's arbitrary order of ties.
        let word = |t: &str| Term::from_field_text(f.words, t);
        let last = tokens.len() - 1;
        for unfinished in [false, true] {
            if found.len() >= limit {
                break;
            }
            let clauses: Vec<(Occur, Box<dyn Query>)> = tokens
                .iter()
                .enumerate()
                .map(|(i, t)| -> (Occur, Box<dyn Query>) {
                    if unfinished && i == last {
                        (Occur::Must, Box::new(FuzzyTermQuery::new_prefix(word(t), 0, false)))
                    } else {
                        (
                            Occur::Must,
                            Box::new(TermQuery::new(word(t), IndexRecordOption::WithFreqs)),
                        )
                    }
                })
                .collect();
            collect(&BooleanQuery::new(clauses), &mut found)?;
        }

        // Tier 3: any word, by prefix or with one typo, when nothing better exists.
        if found.is_empty() {
            let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for t in &tokens {
                let term = Term::from_field_text(f.words, t);
                clauses.push((
                    Occur::Should,
                    Box::new(TermQuery::new(term.clone(), IndexRecordOption::WithFreqs)),
                ));
                if t.len() >= 3 {
                    clauses.push((
                        Occur::Should,
                        Box::new(FuzzyTermQuery::new_prefix(term.clone(), 0, false)),
                    ));
                }
                if t.len() >= 4 {
                    clauses.push((Occur::Should, Box::new(FuzzyTermQuery::new(term, 1, false))));
                }
            }
            collect(&BooleanQuery::new(clauses), &mut found)?;
        }
        Ok(found)
    }

    /// The labels that are `text` whole once normalised (the first tier of [`Self::search`]
    /// alone), up to `limit` (clamped to [`MAX_SEARCH_RESULTS`]).
    pub fn search_exact(&self, text: &str, limit: usize) -> Result<Vec<LabelEntry>, GraphError> {
        let Some((tokens, limit)) = searched(text, limit) else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        self.collect(
            &self.reader.searcher(),
            &self.whole_label(&tokens),
            limit.max(MIN_FETCH),
            &mut HashSet::new(),
            &mut found,
        )?;
        Ok(found)
    }

    /// The query of the labels that are `tokens` whole.
    fn whole_label(&self, tokens: &[String]) -> TermQuery {
        TermQuery::new(
            Term::from_field_text(self.fields.exact, &tokens.join(" ")),
            IndexRecordOption::Basic,
        )
    }

    /// The labels of several words whose initials ([`initials`]) are `acronym` ("US": "United
    /// States"), up to `limit` (clamped to [`MAX_SEARCH_RESULTS`]); none in an index built before
    /// there were initials.
    pub fn search_initials(&self, acronym: &str, limit: usize) -> Result<Vec<LabelEntry>, GraphError> {
        let written: String = acronym
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        let limit = limit.min(MAX_SEARCH_RESULTS);
        let Some(field) = self.fields.initials.filter(|_| written.len() >= 2 && limit > 0) else {
            return Ok(Vec::new());
        };
        let searcher = self.reader.searcher();
        let mut found = Vec::new();
        let query = TermQuery::new(Term::from_field_text(field, &written), IndexRecordOption::Basic);
        self.collect(&searcher, &query, limit, &mut HashSet::new(), &mut found)?;
        Ok(found)
    }

    /// Runs one tier's query and appends the entries not seen in an earlier tier.
    fn collect(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        fetch: usize,
        seen: &mut HashSet<tantivy::DocAddress>,
        found: &mut Vec<LabelEntry>,
    ) -> Result<(), GraphError> {
        let error = |e: tantivy::TantivyError| GraphError::index(&self.path, e);
        let top = searcher
            .search(query, &TopDocs::with_limit(fetch).order_by_score())
            .map_err(error)?;
        for (_, address) in top {
            if !seen.insert(address) {
                continue;
            }
            let doc: TantivyDocument = searcher.doc(address).map_err(error)?;
            let text_of = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            found.push(LabelEntry {
                iri: text_of(self.fields.iri),
                label: text_of(self.fields.label),
            });
        }
        Ok(())
    }
}

/// What a search looks for: the text's first [`MAX_SEARCH_WORDS`] words, normalised, and the limit
/// clamped to [`MAX_SEARCH_RESULTS`]; `None` when there is nothing to find.
fn searched(text: &str, limit: usize) -> Option<(Vec<String>, usize)> {
    let mut tokens = normalize_tokens(text);
    tokens.truncate(MAX_SEARCH_WORDS);
    let limit = limit.min(MAX_SEARCH_RESULTS);
    (!tokens.is_empty() && limit > 0).then_some((tokens, limit))
}

fn register_tokenizer(index: &Index) {
    index
        .tokenizers()
        .register(WORDS_TOKENIZER, WhitespaceTokenizer::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(iri: &str, label: &str) -> Result<LabelEntry, GraphError> {
        Ok(LabelEntry {
            iri: iri.into(),
            label: label.into(),
        })
    }

    fn build(dir: &Path) -> LabelIndex {
        let path = dir.join("labels");
        let n = LabelIndex::build(
            &path,
            [
                entry("e:tag", "tom hanks"),
                entry("e:actor", "Tom Hanks"),
                entry("e:cruise", "Tom Cruise"),
                entry("e:film", "Tom Hanks: a biography"),
                entry("e:empty", "!!!"),
            ],
        )
        .unwrap();
        assert_eq!(n, 4, "a label without words is skipped");
        LabelIndex::open(&path).unwrap()
    }

    fn iris(index: &LabelIndex, q: &str, limit: usize) -> Vec<String> {
        let mut iris: Vec<String> = index.search(q, limit).unwrap().into_iter().map(|e| e.iri).collect();
        iris.sort();
        iris
    }

    #[test]
    fn huge_limits_and_long_texts_are_clamped() {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path());
        assert!(!index.search("tom", usize::MAX).unwrap().is_empty());
        let long = "tom ".repeat(100_000);
        assert!(!index.search(&long, usize::MAX).unwrap().is_empty());
        let typos = (0..10_000).map(|i| format!("w{i}x")).collect::<Vec<_>>().join(" ");
        assert!(index.search(&typos, 10).unwrap().is_empty());
    }

    #[test]
    fn tiers_find_exact_words_prefix_and_typos() {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path());
        // Exact and all-word matches; the partial "Tom Cruise" is not needed then.
        assert_eq!(iris(&index, "tom hanks", 10), ["e:actor", "e:film", "e:tag"]);
        assert_eq!(iris(&index, "TOM   HANKS!", 10), ["e:actor", "e:film", "e:tag"]);
        assert_eq!(iris(&index, "hanks", 10), ["e:actor", "e:film", "e:tag"]);
        assert_eq!(iris(&index, "tom han", 10), ["e:actor", "e:film", "e:tag"]);
        assert_eq!(iris(&index, "tom", 10), ["e:actor", "e:cruise", "e:film", "e:tag"]);
        // Nothing has both words: any word, with one typo allowed.
        assert_eq!(iris(&index, "hamks", 10), ["e:actor", "e:film", "e:tag"]);
        assert_eq!(
            iris(&index, "tom cruse", 10),
            ["e:actor", "e:cruise", "e:film", "e:tag"]
        );
        assert!(iris(&index, "meryl streep", 10).is_empty());
        assert!(iris(&index, "", 10).is_empty());
        assert!(iris(&index, "hanks", 0).is_empty());
    }

    #[test]
    fn an_exact_search_reads_whole_labels_only() {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path());
        let exact = |q: &str| {
            let mut iris: Vec<String> = index.search_exact(q, 10).unwrap().into_iter().map(|e| e.iri).collect();
            iris.sort();
            iris
        };
        assert_eq!(exact("TOM   HANKS!"), ["e:actor", "e:tag"]);
        assert!(exact("tom").is_empty(), "a word of a label is no label");
        assert!(exact("hamks").is_empty(), "nor a typo of one");
        assert!(exact("").is_empty());
    }

    #[test]
    fn a_whole_word_is_found_before_the_words_it_begins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels");
        // A hundred labels begin with "tea" before the two that hold the word: a prefix scores
        // them all alike, and the fetch of 64 would keep the first indexed.
        let teams = (0..100).map(|i| entry(&format!("e:team{i}"), &format!("Team {i}")));
        let tea = [entry("e:dishes", "Tea dishes"), entry("e:lime", "Dried lime tea")];
        LabelIndex::build(&path, teams.chain(tea)).unwrap();
        let index = LabelIndex::open(&path).unwrap();
        let found = iris(&index, "tea", 2);
        assert_eq!(found, ["e:dishes", "e:lime"]);
        // Still every label beginning so, for a word not written whole.
        assert_eq!(index.search("tea", 200).unwrap().len(), 102);
    }

    #[test]
    fn labels_of_several_words_are_found_by_their_initials() {
        assert_eq!(initials("United States of America"), ["usoa", "usa"]);
        assert_eq!(initials("John F. Kennedy"), ["jfk"]);
        assert!(initials("Kennedy").is_empty(), "one word");
        assert!(initials("Apollo 14").is_empty(), "a number");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels");
        LabelIndex::build(
            &path,
            [
                entry("e:us", "United States"),
                entry("e:fwd", "FWD.us"),
                entry("e:fbi", "Federal Bureau of Investigation"),
                entry("e:usa", "USA"),
            ],
        )
        .unwrap();
        let index = LabelIndex::open(&path).unwrap();
        let found = |q: &str| -> Vec<String> {
            let mut iris: Vec<String> = index
                .search_initials(q, 10)
                .unwrap()
                .into_iter()
                .map(|e| e.iri)
                .collect();
            iris.sort();
            iris
        };
        assert_eq!(found("US"), ["e:us"]);
        assert_eq!(found("F.B.I."), ["e:fbi"]);
        assert!(
            found("USA").is_empty(),
            "a label that is the acronym is found by the search, not here"
        );
        assert!(found("U").is_empty());
        assert!(index.search_initials("US", 0).unwrap().is_empty());
    }

    #[test]
    fn rebuild_replaces_the_previous_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels");
        LabelIndex::build(&path, [entry("e:a", "Alpha")]).unwrap();
        LabelIndex::build(&path, [entry("e:b", "Beta")]).unwrap();
        let index = LabelIndex::open(&path).unwrap();
        assert_eq!(index.len(), 1);
        assert!(index.search("alpha", 5).unwrap().is_empty());
        assert_eq!(index.search("beta", 5).unwrap()[0].iri, "e:b");
    }
}
