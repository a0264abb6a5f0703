//! The embedded backend: an Oxigraph store on RocksDB, plus the label index, in one directory:
//!
//! ```text
//! <dir>/rdf/            RocksDB files (Oxigraph)
//! <dir>/labels/         tantivy label index (built while a first load parses, rebuilt after a later one)
//! <dir>/manifest.json   what was loaded, and whether the last load or index rebuild finished
//! <dir>/lock            readers lock it shared, `load` and `index` exclusive (see `lock.rs`)
//! ```
//!
//! Loads are atomic: Oxigraph's bulk loader only writes at `commit`, so a syntax error in the third
//! file leaves the store as it was, and the manifest is the only place that calls a load complete.
//! The manifest is replaced atomically (temporary file, fsync, rename, fsync of the directory), and
//! so is the label index (built aside, synced, renamed into place).

use crate::label_index::LabelIndex;
use crate::label_source::{LabelFeed, index_store_labels};
use crate::load::{LoadReport, RdfFile};
use crate::load_counts::{Counter, LoadCounts};
use crate::lock::{StoreLock, write_atomically};
use crate::profile::SchemaProfile;
use crate::query::bounded;
use crate::{GraphError, GraphSettings, KnowledgeGraph, QueryResults, ReadQuery, Solutions, Term};
use async_trait::async_trait;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use oxigraph::io::{RdfParseError, RdfParser};
use oxigraph::model::Quad;
use oxigraph::sparql::{CancellationToken, QueryEvaluationError, SparqlEvaluator};
use oxigraph::store::{StorageError, Store};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const MANIFEST: &str = "manifest.json";

/// The stack a query is evaluated on. The evaluator recurses once or more per level of the
/// query's nesting: about 28 KB per chained `BIND` and 20 KB per joined group, measured on a
/// 2 MiB thread that 75 and 100 of them overflowed. At [`crate::query::MAX_DEPTH`] levels the
/// worst shape measured needs about a tenth of this (the deepest queries the guard lets through
/// are evaluated by `crates/graph/tests/worker.rs` and the backend suite). Virtual memory: only
/// the pages a deep query touches become resident.
pub(crate) const EVAL_STACK_BYTES: usize = 64 << 20;

/// After a timeout cancels an evaluation, how long its answer waits for the evaluating thread
/// to stop (it checks the cancellation between rows and in the metered functions).
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);
/// Where `write_atomically` stages the manifest.
#[cfg(test)]
const MANIFEST_STAGING: &str = "manifest.json.tmp";

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
struct Manifest {
    /// Files of a load that started and has not finished; empty when the store is complete.
    #[serde(default)]
    loading: Vec<PathBuf>,
    #[serde(default)]
    loads: Vec<LoadReport>,
    /// The label predicates the label index was built with.
    #[serde(default)]
    label_predicates: Vec<String>,
    /// The name predicates it was built with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    name_predicates: Vec<String>,
    /// Whether the label index names unlabelled vertices from their IRIs (absent: built before
    /// it could).
    #[serde(default)]
    iri_names: bool,
    /// Set while `index` rebuilds the label index; left set by an interrupted rebuild.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    indexing: bool,
}

impl Manifest {
    fn read(dir: &Path) -> Result<Option<Self>, GraphError> {
        let path = dir.join(MANIFEST);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| GraphError::storage(&path, format!("corrupt manifest: {e}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(GraphError::Io { path, source }),
        }
    }

    /// Written to a temporary file in the same directory, synced, renamed over the old one, and
    /// the directory synced: a crash (even a power cut) leaves the old or the new manifest whole.
    fn write(&self, dir: &Path) -> Result<(), GraphError> {
        let path = dir.join(MANIFEST);
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| GraphError::storage(&path, e))?;
        write_atomically(&path, &bytes)
    }
}

/// An Oxigraph store opened for queries.
#[derive(Clone)]
pub struct EmbeddedStore {
    dir: PathBuf,
    store: Store,
    labels: Arc<LabelIndex>,
    settings: GraphSettings,
    /// Evaluations running on blocking threads.
    running: Arc<AtomicUsize>,
    /// The shared lock that keeps `load` and `index` out while the store (or a query on it, which
    /// holds a clone) is in use.
    lock: Arc<StoreLock>,
    /// Loads finished so far (a saved profile of fewer loads is stale).
    loads: usize,
    /// The schema profile, read from `profile.json` or computed on first use.
    profile: tokio::sync::OnceCell<Arc<SchemaProfile>>,
    /// Predicate names looked up so far.
    predicate_names: Arc<crate::NameCache>,
    /// Facts about the graph asked so far.
    facts: Arc<crate::GraphFacts>,
    /// The worker processes that evaluate user-written queries (see `worker.rs`).
    workers: crate::worker::Workers,
}

/// The schema profile as saved beside the store, with the number of loads it describes.
#[derive(Serialize, Deserialize)]
struct SavedProfile {
    loads: usize,
    /// [`PROFILE_VERSION`] of the code that computed it (none before conventions were read).
    #[serde(default)]
    version: u32,
    /// The settings the conventions were found under ([`GraphSettings::conventions_key`]): a
    /// profile found under other overrides is computed again.
    #[serde(default)]
    settings: String,
    profile: SchemaProfile,
}

/// What a saved profile holds: 2 since it holds the graph's conventions.
const PROFILE_VERSION: u32 = 2;

const PROFILE: &str = "profile.json";

/// Cancels an evaluation when the future waiting for it is dropped.
struct CancelOnDrop(CancellationToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Counts a running evaluation while alive.
struct Running(Arc<AtomicUsize>);

impl Running {
    fn new(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        Self(counter.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl EmbeddedStore {
    /// Runs a search of the label index off the async runtime (tantivy reads block), as
    /// `(iri, label)` pairs.
    async fn search_labels(
        &self,
        search: impl FnOnce(&LabelIndex) -> Result<Vec<crate::label_index::LabelEntry>, GraphError> + Send + 'static,
    ) -> Result<Vec<(String, String)>, GraphError> {
        let labels = Arc::clone(&self.labels);
        let found = tokio::task::spawn_blocking(move || search(&labels))
            .await
            .map_err(|e| GraphError::index(&self.dir, e))??;
        Ok(found.into_iter().map(|e| (e.iri, e.label)).collect())
    }

    /// Query evaluations running now (a cancelled one stops at its next check).
    pub fn running_queries(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Opens a loaded store read-only. Several processes may read a store at once; while any of
    /// them has it open, `load` and `index` refuse to write it, and while one of those writes it,
    /// this fails with [`GraphError::StoreBeingWritten`].
    pub fn open(dir: &Path, settings: GraphSettings) -> Result<Self, GraphError> {
        let not_found = || GraphError::StoreNotFound {
            path: dir.to_path_buf(),
        };
        // Checked first so that opening a wrong directory creates no lock file in it.
        if !dir.join(MANIFEST).is_file() {
            return Err(not_found());
        }
        let lock = StoreLock::shared(dir)?;
        let manifest = Manifest::read(dir)?.ok_or_else(not_found)?;
        if !manifest.loading.is_empty() {
            return Err(GraphError::StoreIncomplete {
                path: dir.to_path_buf(),
                detail: format!("{:?}", manifest.loading),
            });
        }
        if manifest.indexing {
            return Err(GraphError::IndexIncomplete {
                path: dir.to_path_buf(),
            });
        }
        if manifest.label_predicates != settings.label_predicates
            || manifest.name_predicates != settings.name_predicates
        {
            tracing::warn!(
                store = %dir.display(),
                "the label index was built with other label or name predicates ({:?}, {:?}); run `chatty-kg index` to rebuild it",
                manifest.label_predicates,
                manifest.name_predicates
            );
        }
        if manifest.iri_names != settings.iri_names {
            tracing::warn!(
                store = %dir.display(),
                "the label index was built {} names from IRIs; run `chatty-kg index` to rebuild it",
                if manifest.iri_names { "with" } else { "without" }
            );
        }
        let store = Store::open_read_only(dir.join("rdf")).map_err(|e| GraphError::storage(dir, e))?;
        let labels = LabelIndex::open(&dir.join("labels"))?;
        tracing::debug!(store = %dir.display(), "store open: `load` and `index` refuse it until it is closed");
        Ok(Self {
            dir: dir.to_path_buf(),
            store,
            labels: Arc::new(labels),
            running: Arc::new(AtomicUsize::new(0)),
            lock: Arc::new(lock),
            loads: manifest.loads.len(),
            profile: tokio::sync::OnceCell::new(),
            predicate_names: Arc::default(),
            facts: Arc::default(),
            workers: crate::worker::Workers::new(settings.sparql_workers, settings.worker_memory_mb << 20),
            settings,
        })
    }

    /// Bulk-loads `files` into the store at `dir` (created if missing), then rebuilds the label
    /// index. Blocking; shows a progress bar on stderr when `show_progress` is set. Fails at once
    /// with [`GraphError::StoreInUse`] while another process (a server) has the store open.
    pub fn load(
        dir: &Path,
        files: &[RdfFile],
        settings: &GraphSettings,
        show_progress: bool,
    ) -> Result<LoadReport, GraphError> {
        let started = Instant::now();
        // Fail on an unreadable file before touching the store.
        for file in files {
            file.open()?;
        }
        std::fs::create_dir_all(dir).map_err(|source| GraphError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let _lock = StoreLock::exclusive(dir)?;
        let previous = Manifest::read(dir)?;
        let mut manifest = previous.clone().unwrap_or_default();
        manifest.loading = files.iter().map(|f| f.path.clone()).collect();
        manifest.write(dir)?;

        let bar = progress_bar(show_progress);
        let loaded = open_for_writing(dir).and_then(|store| {
            // Into an empty store, the label index is built from the quads as they are parsed;
            // into one with data, it is rebuilt from the whole store after the commit.
            // So are the profile's whole-graph counts (load_counts.rs).
            LoadCounts::remove(dir);
            let mut feed = if store.is_empty().map_err(|e| GraphError::storage(dir, e))? {
                Some((
                    LabelFeed::start(dir, &settings.search_predicates(), settings.iri_names)?,
                    Counter::default(),
                ))
            } else {
                None
            };
            // The label index is written beside the store's commit when no vertex is left to
            // name from the store.
            let per_file = bulk_load(&store, dir, files, &bar, feed.as_mut(), |feed| {
                if let Some((labels, _)) = feed {
                    labels.finish_unless_scanning();
                }
            })?;
            Ok((per_file, store, feed))
        });
        let (per_file, store, feed) = match loaded {
            Ok(loaded) => loaded,
            Err(error) => {
                bar.abandon_with_message("load failed; nothing from it was kept");
                // Nothing was committed: put the manifest back as it was. (A failure after the
                // commit below keeps the `loading` marker: data and label index may disagree.)
                match previous {
                    Some(previous) => previous.write(dir)?,
                    None => {
                        let _ = std::fs::remove_file(dir.join(MANIFEST));
                    }
                }
                return Err(error);
            }
        };
        let rdf_seconds = started.elapsed().as_secs_f64();
        bar.set_message("building the label index");
        let parsed: u64 = per_file.iter().map(|(_, n)| n).sum();
        let compacting = parsed > settings.compact_after_quads;
        let (labels, counted) = std::thread::scope(|scope| {
            // Counting the store's quads scans an index: beside the label index's commit,
            // unless the store is compacted first. Counted after, 10 M quads took about 2 s;
            // counted beside the compaction (one RocksDB thread), the two took 4.5 s longer.
            let counting = (!compacting).then(|| scope.spawn(|| store.len()));
            let labels = match feed {
                Some((feed, counter)) => counter
                    .finish(manifest.loads.len() + 1)
                    .map_or(Ok(()), |counts| counts.write(dir))
                    .and_then(|()| feed.finish(&store, dir)),
                None => build_label_index(&store, dir, settings),
            };
            (labels, counting.map(|thread| thread.join()))
        });
        let labels = labels?;
        let index_seconds = started.elapsed().as_secs_f64() - rdf_seconds;
        // The bulk loader's overlapping files, merged once here (`compact_after_quads` says when).
        let compact_seconds = if compacting {
            bar.set_message("compacting the store for queries");
            let compacting = Instant::now();
            store.optimize().map_err(|e| GraphError::storage(dir, e))?;
            compacting.elapsed().as_secs_f64()
        } else {
            0.0
        };
        let store_size = match counted {
            Some(Ok(counted)) => counted,
            Some(Err(_)) => return Err(GraphError::storage(dir, "counting the store's quads panicked")),
            None => store.len(),
        }
        .map_err(|e| GraphError::storage(dir, e))? as u64;
        bar.finish_and_clear();
        let report = LoadReport {
            parsed,
            files: per_file,
            store_size,
            labels,
            seconds: started.elapsed().as_secs_f64(),
            rdf_seconds,
            index_seconds,
            compact_seconds,
            peak_rss_mib: crate::load::peak_rss_mib(),
        };
        manifest.loading.clear();
        manifest.indexing = false; // the label index was rebuilt, whatever an old `index` left
        manifest.loads.push(report.clone());
        manifest.label_predicates = settings.label_predicates.clone();
        manifest.name_predicates = settings.name_predicates.clone();
        manifest.iri_names = settings.iri_names;
        manifest.write(dir)?;
        Ok(report)
    }

    /// Rebuilds the label index of an existing store (after changing the label predicates). Fails
    /// at once with [`GraphError::StoreInUse`] while another process has the store open. The
    /// manifest says `indexing` until the new index is in place, so that an interrupted rebuild
    /// makes the store refuse to open instead of serving a stale or missing index.
    pub fn reindex(dir: &Path, settings: &GraphSettings) -> Result<u64, GraphError> {
        let not_found = || GraphError::StoreNotFound {
            path: dir.to_path_buf(),
        };
        if !dir.join(MANIFEST).is_file() {
            return Err(not_found());
        }
        let _lock = StoreLock::exclusive(dir)?;
        let mut manifest = Manifest::read(dir)?.ok_or_else(not_found)?;
        let store = open_for_writing(dir)?;
        manifest.indexing = true;
        manifest.write(dir)?;
        let labels = match build_label_index(&store, dir, settings) {
            Ok(labels) => labels,
            Err(error) => {
                // Failed before the swap (a bad predicate, a full disk): the old index is intact.
                if dir.join("labels").is_dir() && !dir.join("labels.old").exists() {
                    manifest.indexing = false;
                    manifest.write(dir)?;
                }
                return Err(error);
            }
        };
        manifest.indexing = false;
        manifest.label_predicates = settings.label_predicates.clone();
        manifest.name_predicates = settings.name_predicates.clone();
        manifest.iri_names = settings.iri_names;
        manifest.write(dir)?;
        Ok(labels)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of quads in the store.
    pub fn len(&self) -> Result<u64, GraphError> {
        Ok(self.store.len().map_err(|e| GraphError::storage(&self.dir, e))? as u64)
    }

    pub fn is_empty(&self) -> Result<bool, GraphError> {
        Ok(self.len()? == 0)
    }
}

fn open_for_writing(dir: &Path) -> Result<Store, GraphError> {
    Store::open(dir.join("rdf")).map_err(|e| {
        GraphError::storage(
            dir,
            format!("{e} (only one process may write to a store; is a chatty-kg server or load using it?)"),
        )
    })
}

fn progress_bar(visible: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        None,
        if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {elapsed_precise} [{bar:24}] {bytes}/{total_bytes} read, about {eta} left; {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar
}

/// Why a bulk load stopped; both kinds abort it.
enum LoadFailure {
    /// A file could not be read or parsed (the error names it).
    Parse(GraphError),
    Storage(StorageError),
}

impl From<StorageError> for LoadFailure {
    fn from(e: StorageError) -> Self {
        Self::Storage(e)
    }
}

/// What the parsing thread of a load sends to the loading one.
enum Parsed {
    Quads(Vec<Quad>),
    /// A file was read to its end, with this many triples or quads.
    FileEnd(PathBuf, u64),
    Failed(GraphError),
}

/// Quads per message from the parsing thread, and messages in flight (about 60 K quads).
const PARSED_BATCH: usize = 4096;
const PARSED_IN_FLIGHT: usize = 16;

/// Loads `files` with Oxigraph's bulk loader, in two stages on two threads: one parses, the other
/// takes note of each quad for the label index and the counts (`feed`) and hands it to the bulk
/// loader (which writes each million on a thread of its own). The parser, the bulk loader's
/// slowest step, does nothing else, so that the bookkeeping of a first load is done beside it
/// rather than after it.
///
/// `while_committing` is given the feed once every quad was read, and runs on a thread of its own
/// while the bulk loader writes its last batches and commits (the label index commits there).
fn bulk_load(
    store: &Store,
    dir: &Path,
    files: &[RdfFile],
    bar: &ProgressBar,
    mut feed: Option<&mut (LabelFeed, Counter)>,
    while_committing: impl FnOnce(Option<&mut (LabelFeed, Counter)>) + Send,
) -> Result<Vec<(PathBuf, u64)>, GraphError> {
    let mut loader = store.bulk_loader();
    // Progress in bytes read from the disk (compressed ones for a compressed file), which gives
    // the estimate; the triples and their rate in the message.
    bar.set_length(files.iter().map(RdfFile::size).sum());
    let (sender, receiver) = std::sync::mpsc::sync_channel(PARSED_IN_FLIGHT);
    let mut per_file = Vec::with_capacity(files.len());
    let result = std::thread::scope(|scope| {
        let parser = std::thread::Builder::new()
            .name("rdf-parser".into())
            .spawn_scoped(scope, || parse_files(files, bar, sender))
            .map_err(|e| GraphError::storage(dir, e))?;
        let quads = std::iter::from_fn(|| {
            loop {
                match receiver.recv().ok()? {
                    Parsed::Quads(batch) => {
                        if let Some((labels, counter)) = feed.as_deref_mut() {
                            for quad in &batch {
                                labels.observe(quad);
                                counter.observe(quad);
                            }
                        }
                        return Some(Ok(batch));
                    }
                    Parsed::FileEnd(path, count) => per_file.push((path, count)),
                    Parsed::Failed(error) => return Some(Err(LoadFailure::Parse(error))),
                }
            }
        })
        .flat_map(|batch| {
            let (quads, failure) = match batch {
                Ok(quads) => (quads, None),
                Err(failure) => (Vec::new(), Some(Err(failure))),
            };
            quads.into_iter().map(Ok).chain(failure)
        });
        let loaded = loader.load_ok_quads::<LoadFailure, LoadFailure>(quads);
        // A failed load dropped the receiver: the parser stops at its next batch.
        drop(receiver);
        let parsed = parser.join();
        match loaded {
            Err(LoadFailure::Parse(error)) => Err(error),
            Err(LoadFailure::Storage(error)) => Err(GraphError::storage(dir, error)),
            Ok(()) if parsed.is_err() => Err(GraphError::storage(dir, "the parsing thread panicked")),
            Ok(()) => Ok(()),
        }
    });
    result?;
    let (committed, beside) = std::thread::scope(|scope| {
        let beside = scope.spawn(|| while_committing(feed));
        (loader.commit(), beside.join())
    });
    committed.map_err(|e| GraphError::storage(dir, e))?;
    beside.map_err(|_| GraphError::storage(dir, "the label index's commit panicked"))?;
    Ok(per_file)
}

/// The parsing stage of [`bulk_load`]: each file's quads in batches, then its count; a failure
/// ends it. Stops early when the loading stage has stopped listening.
fn parse_files(files: &[RdfFile], bar: &ProgressBar, sender: std::sync::mpsc::SyncSender<Parsed>) {
    let started = Instant::now();
    let mut total = 0u64;
    for file in files {
        let name = file.path.display().to_string();
        bar.set_message(name.clone());
        let parser = match RdfParser::from_format(file.format).with_base_iri(file.base_iri()) {
            Ok(parser) => parser.rename_blank_nodes(),
            Err(e) => {
                let _ = sender.send(Parsed::Failed(GraphError::storage(&file.path, e)));
                return;
            }
        };
        let read = bar.clone();
        let reader = match file.open_counting(move |bytes| read.inc(bytes)) {
            Ok(reader) => reader,
            Err(error) => {
                let _ = sender.send(Parsed::Failed(error));
                return;
            }
        };
        let mut count = 0u64;
        let mut batch = Vec::with_capacity(PARSED_BATCH);
        for quad in parser.for_reader(reader) {
            match quad {
                Ok(quad) => batch.push(quad),
                Err(e) => {
                    let _ = sender.send(Parsed::Failed(parse_error(&file.path, e)));
                    return;
                }
            }
            if batch.len() == PARSED_BATCH {
                count += PARSED_BATCH as u64;
                let full = std::mem::replace(&mut batch, Vec::with_capacity(PARSED_BATCH));
                if sender.send(Parsed::Quads(full)).is_err() {
                    return;
                }
                if count.is_multiple_of(65_536) {
                    let seconds = started.elapsed().as_secs_f64().max(1e-3);
                    bar.set_message(format!(
                        "{name}: {} triples ({:.0} K triples/s)",
                        total + count,
                        (total + count) as f64 / seconds / 1000.0
                    ));
                }
            }
        }
        count += batch.len() as u64;
        if (!batch.is_empty() && sender.send(Parsed::Quads(batch)).is_err())
            || sender.send(Parsed::FileEnd(file.path.clone(), count)).is_err()
        {
            return;
        }
        total += count;
    }
}

fn parse_error(path: &Path, error: RdfParseError) -> GraphError {
    match error {
        RdfParseError::Syntax(e) => {
            let (line, column) = e
                .location()
                .map_or((0, 0), |range| (range.start.line + 1, range.start.column + 1));
            GraphError::Syntax {
                path: path.to_path_buf(),
                line,
                column,
                message: e.to_string(),
            }
        }
        RdfParseError::Io(source) => GraphError::Io {
            path: path.to_path_buf(),
            source,
        },
    }
}

fn build_label_index(store: &Store, dir: &Path, settings: &GraphSettings) -> Result<u64, GraphError> {
    index_store_labels(store, dir, &settings.search_predicates(), settings.iri_names)
}

fn evaluate(
    store: &Store,
    query: &ReadQuery,
    token: CancellationToken,
    max_rows: usize,
    max_bytes: usize,
) -> Result<QueryResults, GraphError> {
    // Values the query builds are bounded while it runs (query/bounded.rs): past a bound the
    // evaluation is cancelled, and the cancellation is reported as what it is.
    let budget = bounded::Budget::new(token.clone());
    let evaluation_error = |e: QueryEvaluationError| {
        if budget.exceeded() {
            return GraphError::ValueTooLarge {
                value_limit: bounded::MAX_VALUE_BYTES,
                query_limit: bounded::MAX_COMPUTED_BYTES,
            };
        }
        match e {
            QueryEvaluationError::Cancelled => GraphError::Evaluation {
                message: "cancelled".into(),
            },
            other => GraphError::Evaluation {
                message: other.to_string(),
            },
        }
    };
    let (rewritten, separators) = bounded::rewrite(query.as_query());
    let results = bounded::evaluator(
        SparqlEvaluator::new().with_cancellation_token(token),
        &budget,
        &separators,
    )
    .for_query(rewritten)
    .on_store(store)
    .execute()
    .map_err(evaluation_error)?;
    let results = match results {
        oxigraph::sparql::QueryResults::Boolean(b) => QueryResults::Boolean(b),
        oxigraph::sparql::QueryResults::Solutions(solutions) => {
            let variables: Vec<_> = solutions.variables().to_vec();
            let mut out = Solutions {
                variables: variables.iter().map(|v| v.as_str().to_owned()).collect(),
                ..Solutions::default()
            };
            let mut bytes = 0usize;
            for solution in solutions {
                if out.rows.len() == max_rows {
                    out.truncated = true;
                    break;
                }
                let solution = solution.map_err(evaluation_error)?;
                let row: Vec<Option<Term>> = variables.iter().map(|v| solution.get(v).cloned()).collect();
                bytes = row.iter().flatten().map(term_bytes).fold(bytes, usize::saturating_add);
                if bytes > max_bytes {
                    return Err(GraphError::SolutionsTooLarge { max: max_bytes });
                }
                out.rows.push(row);
            }
            QueryResults::Solutions(out)
        }
        oxigraph::sparql::QueryResults::Graph(_) => return Err(GraphError::NotReadOnly { kind: "CONSTRUCT" }),
    };
    // A value that went past a bound became an unbound variable or an error of its expression;
    // the query still failed.
    if budget.exceeded() {
        return Err(GraphError::ValueTooLarge {
            value_limit: bounded::MAX_VALUE_BYTES,
            query_limit: bounded::MAX_COMPUTED_BYTES,
        });
    }
    Ok(results)
}

/// `query` evaluated over the store at `dir`, opened read-only beside whoever else has it open
/// (the worker's side of `worker.rs`), on a thread with [`EVAL_STACK_BYTES`] of stack,
/// cancelled at `timeout`.
pub(crate) fn evaluate_read_only(
    dir: &Path,
    query: &ReadQuery,
    timeout: std::time::Duration,
    max_rows: usize,
    max_bytes: usize,
) -> Result<QueryResults, GraphError> {
    if !dir.join(MANIFEST).is_file() {
        return Err(GraphError::StoreNotFound {
            path: dir.to_path_buf(),
        });
    }
    let _lock = StoreLock::shared(dir)?;
    let store = Store::open_read_only(dir.join("rdf")).map_err(|e| GraphError::storage(dir, e))?;
    let token = CancellationToken::new();
    let (sender, receiver) = std::sync::mpsc::channel();
    let evaluation_token = token.clone();
    let query = query.clone();
    let evaluation = std::thread::Builder::new()
        .name("sparql-eval".into())
        .stack_size(EVAL_STACK_BYTES)
        .spawn(move || {
            let _ = sender.send(evaluate(&store, &query, evaluation_token, max_rows, max_bytes));
        })
        .map_err(|e| GraphError::Evaluation {
            message: format!("cannot start the evaluating thread: {e}"),
        })?;
    let result = match receiver.recv_timeout(timeout) {
        Ok(result) => result,
        Err(_) => {
            token.cancel();
            Err(GraphError::Timeout { after: timeout })
        }
    };
    drop(evaluation);
    result
}

/// What a term weighs in a result: its text, and a literal's datatype or language.
fn term_bytes(term: &Term) -> usize {
    match term {
        Term::NamedNode(n) => n.as_str().len(),
        Term::BlankNode(b) => b.as_str().len(),
        Term::Literal(l) => l.value().len() + l.language().map_or(l.datatype().as_str().len(), str::len),
        #[allow(unreachable_patterns)]
        _ => 0,
    }
}

#[async_trait]
impl KnowledgeGraph for EmbeddedStore {
    fn facts(&self) -> Option<&crate::GraphFacts> {
        Some(&self.facts)
    }

    /// Looked up once per predicate while the store is open.
    async fn predicate_names(&self, iris: &[&str]) -> Result<std::collections::HashMap<String, String>, GraphError> {
        self.predicate_names.names(self, iris).await
    }

    /// Read from `profile.json` when it describes every load, else computed once and saved there
    /// (`chatty-kg load` does this right after loading; a store on a read-only disk just keeps
    /// it in memory).
    async fn profile(&self) -> Result<Arc<SchemaProfile>, GraphError> {
        let profile = self
            .profile
            .get_or_try_init(|| async {
                let path = self.dir.join(PROFILE);
                if let Ok(bytes) = std::fs::read(&path)
                    && let Ok(saved) = serde_json::from_slice::<SavedProfile>(&bytes)
                    && saved.loads == self.loads
                    && saved.version == PROFILE_VERSION
                    && saved.settings == self.settings.conventions_key()
                {
                    return Ok(Arc::new(saved.profile));
                }
                // After a load into an empty store, its counts answer the whole-graph queries.
                let counts = LoadCounts::read(&self.dir, self.loads);
                let profile = crate::profile::compute(self, counts.as_ref()).await?;
                let saved = SavedProfile {
                    loads: self.loads,
                    version: PROFILE_VERSION,
                    settings: self.settings.conventions_key(),
                    profile,
                };
                if let Err(error) = write_atomically(&path, &serde_json::to_vec_pretty(&saved).unwrap_or_default()) {
                    tracing::warn!(store = %self.dir.display(), %error, "the schema profile could not be saved");
                }
                Ok::<_, GraphError>(Arc::new(saved.profile))
            })
            .await?;
        Ok(Arc::clone(profile))
    }

    fn describe(&self) -> String {
        format!("embedded store {}", self.dir.display())
    }

    fn settings(&self) -> &GraphSettings {
        &self.settings
    }

    async fn query(&self, query: &ReadQuery) -> Result<QueryResults, GraphError> {
        let timeout = self.settings.query_timeout();
        let token = CancellationToken::new();
        let (max_rows, max_bytes) = (self.settings.max_rows, self.settings.max_result_bytes);
        // The LIMIT lets the evaluator stop early (a top-k ORDER BY instead of a full sort).
        let (store, query) = (self.store.clone(), query.capped(max_rows));
        // A cancelled evaluation may outlive this store handle: it keeps the lock until it ends.
        let lock = Arc::clone(&self.lock);
        let worker_token = token.clone();
        // Dropping this future (an answer timeout above us) stops the evaluation too.
        let _cancel_on_drop = CancelOnDrop(token.clone());
        let running = Running::new(&self.running);
        let started = Instant::now();
        let shown = tracing::enabled!(tracing::Level::DEBUG).then(|| query.to_string());
        let (sender, mut receiver) = tokio::sync::oneshot::channel();
        // A thread of its own, with the stack the guard's depth needs (a blocking-pool thread
        // has 2 MiB).
        std::thread::Builder::new()
            .name("sparql-eval".into())
            .stack_size(EVAL_STACK_BYTES)
            .spawn(move || {
                let result = evaluate(&store, &query, worker_token, max_rows, max_bytes);
                // Given back before the result is: whoever has the result may close the store
                // and load into it at once.
                drop((running, lock, store));
                let _ = sender.send(result);
            })
            .map_err(|e| GraphError::Evaluation {
                message: format!("cannot start the evaluating thread: {e}"),
            })?;
        let result = match tokio::time::timeout(timeout, &mut receiver).await {
            Ok(done) => done.map_err(|_| GraphError::Evaluation {
                message: "the evaluating thread ended without a result".into(),
            })?,
            Err(_) => {
                // Stops the evaluation at its next check; the answer waits until it has stopped
                // (or the grace has passed), so whatever the caller holds for it (a permit)
                // covers the work.
                token.cancel();
                if tokio::time::timeout(STOP_GRACE, receiver).await.is_err() {
                    tracing::warn!(grace = ?STOP_GRACE, "a cancelled evaluation has not stopped yet");
                }
                Err(GraphError::Timeout { after: timeout })
            }
        };
        // Every query with its time, for finding the slow ones (`CHATTY_KG_LOG=debug`).
        if let Some(sparql) = shown {
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            match &result {
                Ok(QueryResults::Solutions(s)) => tracing::debug!(ms, rows = s.rows.len(), %sparql, "SPARQL"),
                Ok(QueryResults::Boolean(b)) => tracing::debug!(ms, boolean = b, %sparql, "SPARQL"),
                Err(error) => tracing::debug!(ms, %error, %sparql, "SPARQL failed"),
            }
        }
        result
    }

    /// In a worker process when the binary set one ([`crate::worker::use_program`]), else as
    /// [`Self::query`].
    async fn query_untrusted(&self, query: &ReadQuery) -> Result<QueryResults, GraphError> {
        let Some(program) = crate::worker::program() else {
            return self.query(query).await;
        };
        let (max_rows, max_bytes) = (self.settings.max_rows, self.settings.max_result_bytes);
        self.workers
            .run(
                program,
                &self.dir,
                &query.capped(max_rows),
                self.settings.query_timeout(),
                max_rows,
                max_bytes,
            )
            .await
    }

    async fn label_matches(&self, text: &str, limit: usize) -> Result<Vec<(String, String)>, GraphError> {
        let text = text.to_owned();
        self.search_labels(move |labels| labels.search(&text, limit)).await
    }

    async fn exact_label_matches(&self, text: &str, limit: usize) -> Result<Option<Vec<(String, String)>>, GraphError> {
        let text = text.to_owned();
        Ok(Some(
            self.search_labels(move |labels| labels.search_exact(&text, limit))
                .await?,
        ))
    }

    async fn initials_matches(&self, acronym: &str, limit: usize) -> Result<Vec<(String, String)>, GraphError> {
        let acronym = acronym.to_owned();
        self.search_labels(move |labels| labels.search_initials(&acronym, limit))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(predicate: &str) -> Manifest {
        Manifest {
            label_predicates: vec![predicate.to_owned()],
            ..Manifest::default()
        }
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_manifest_write_replaces_the_old_one_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        manifest("old").write(dir.path()).unwrap();
        manifest("new").write(dir.path()).unwrap();
        assert_eq!(entries(dir.path()), [MANIFEST]);
        let read = Manifest::read(dir.path()).unwrap().unwrap();
        assert_eq!(read.label_predicates, ["new"]);
    }

    #[test]
    fn a_crash_before_the_rename_leaves_the_old_manifest() {
        let dir = tempfile::tempdir().unwrap();
        manifest("old").write(dir.path()).unwrap();
        // What a crash part-way through writing the next manifest leaves: a cut temporary file.
        std::fs::write(dir.path().join(MANIFEST_STAGING), br#"{"loading": ["/data/h"#).unwrap();
        let read = Manifest::read(dir.path()).unwrap().unwrap();
        assert_eq!(read.label_predicates, ["old"]);
        // The next write goes over the leftover.
        manifest("new").write(dir.path()).unwrap();
        assert_eq!(entries(dir.path()), [MANIFEST]);
        assert_eq!(Manifest::read(dir.path()).unwrap().unwrap().label_predicates, ["new"]);
    }

    #[test]
    fn the_indexing_marker_is_written_only_while_set() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = manifest("p");
        m.write(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
        assert!(!text.contains("indexing"), "{text}");
        m.indexing = true;
        m.write(dir.path()).unwrap();
        assert!(Manifest::read(dir.path()).unwrap().unwrap().indexing);
    }
}
