//! The embedded backend: an Oxigraph store on RocksDB, plus the label index, in one directory:
//!
//! ```text
//! <dir>/rdf/            RocksDB files (Oxigraph)
//! <dir>/labels/         tantivy label index (rebuilt after every load)
//! <dir>/manifest.json   what was loaded, and whether the last load finished
//! ```
//!
//! Loads are atomic: Oxigraph's bulk loader only writes at `commit`, so a syntax error in the third
//! file leaves the store as it was, and the manifest is the only place that calls a load complete.

use crate::label_index::{LabelEntry, LabelIndex};
use crate::load::{LoadReport, RdfFile};
use crate::query::named_node;
use crate::{GraphError, GraphSettings, KnowledgeGraph, QueryResults, ReadQuery, Solutions};
use async_trait::async_trait;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use oxigraph::io::{RdfParseError, RdfParser};
use oxigraph::model::{NamedOrBlankNode, Quad, Term};
use oxigraph::sparql::{CancellationToken, QueryEvaluationError, SparqlEvaluator};
use oxigraph::store::{StorageError, Store};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const MANIFEST: &str = "manifest.json";

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

    /// Written to a temporary file, then renamed: a crash leaves the old or the new manifest.
    fn write(&self, dir: &Path) -> Result<(), GraphError> {
        let path = dir.join(MANIFEST);
        let staging = dir.join("manifest.json.tmp");
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| GraphError::storage(&path, e))?;
        std::fs::write(&staging, bytes)
            .and_then(|()| std::fs::rename(&staging, &path))
            .map_err(|source| GraphError::Io { path, source })
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
}

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
    /// Query evaluations running now (a cancelled one stops at its next check).
    pub fn running_queries(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Opens a loaded store read-only (several processes may read while one loads).
    pub fn open(dir: &Path, settings: GraphSettings) -> Result<Self, GraphError> {
        let manifest = Manifest::read(dir)?.ok_or_else(|| GraphError::StoreNotFound {
            path: dir.to_path_buf(),
        })?;
        if !manifest.loading.is_empty() {
            return Err(GraphError::StoreIncomplete {
                path: dir.to_path_buf(),
                detail: format!("{:?}", manifest.loading),
            });
        }
        if manifest.label_predicates != settings.label_predicates {
            tracing::warn!(
                store = %dir.display(),
                "the label index was built with other label predicates ({:?}); run `chatty-kg index` to rebuild it",
                manifest.label_predicates
            );
        }
        let store = Store::open_read_only(dir.join("rdf")).map_err(|e| GraphError::storage(dir, e))?;
        let labels = LabelIndex::open(&dir.join("labels"))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            store,
            labels: Arc::new(labels),
            settings,
            running: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Bulk-loads `files` into the store at `dir` (created if missing), then rebuilds the label
    /// index. Blocking; shows a progress bar on stderr when `show_progress` is set.
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
        let previous = Manifest::read(dir)?;
        let mut manifest = previous.clone().unwrap_or_default();
        manifest.loading = files.iter().map(|f| f.path.clone()).collect();
        manifest.write(dir)?;

        let bar = progress_bar(show_progress);
        let loaded = open_for_writing(dir).and_then(|store| Ok((bulk_load(&store, dir, files, &bar)?, store)));
        let (per_file, store) = match loaded {
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
        let labels = build_label_index(&store, dir, settings)?;
        let index_seconds = started.elapsed().as_secs_f64() - rdf_seconds;
        let store_size = store.len().map_err(|e| GraphError::storage(dir, e))? as u64;
        bar.finish_and_clear();
        let report = LoadReport {
            parsed: per_file.iter().map(|(_, n)| n).sum(),
            files: per_file,
            store_size,
            labels,
            seconds: started.elapsed().as_secs_f64(),
            rdf_seconds,
            index_seconds,
        };
        manifest.loading.clear();
        manifest.loads.push(report.clone());
        manifest.label_predicates = settings.label_predicates.clone();
        manifest.write(dir)?;
        Ok(report)
    }

    /// Rebuilds the label index of an existing store (after changing the label predicates).
    pub fn reindex(dir: &Path, settings: &GraphSettings) -> Result<u64, GraphError> {
        let mut manifest = Manifest::read(dir)?.ok_or_else(|| GraphError::StoreNotFound {
            path: dir.to_path_buf(),
        })?;
        let store = open_for_writing(dir)?;
        let labels = build_label_index(&store, dir, settings)?;
        manifest.label_predicates = settings.label_predicates.clone();
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
        ProgressStyle::with_template("{spinner} {elapsed_precise} {human_pos} triples ({per_sec}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar
}

/// Why a bulk load stopped; both kinds abort it.
enum LoadFailure {
    Parse(RdfParseError),
    Storage(StorageError),
}

impl From<StorageError> for LoadFailure {
    fn from(e: StorageError) -> Self {
        Self::Storage(e)
    }
}

fn bulk_load(
    store: &Store,
    dir: &Path,
    files: &[RdfFile],
    bar: &ProgressBar,
) -> Result<Vec<(PathBuf, u64)>, GraphError> {
    let mut loader = store.bulk_loader();
    let mut per_file = Vec::with_capacity(files.len());
    for file in files {
        bar.set_message(file.path.display().to_string());
        let parser = RdfParser::from_format(file.format)
            .with_base_iri(file.base_iri())
            .map_err(|e| GraphError::storage(&file.path, e))?
            .rename_blank_nodes();
        let mut count = 0u64;
        let quads = parser.for_reader(file.open()?).map(|quad| {
            count += 1;
            if count.is_multiple_of(65_536) {
                bar.inc(65_536);
            }
            quad.map_err(LoadFailure::Parse)
        });
        let result = loader.load_ok_quads::<LoadFailure, LoadFailure>(quads);
        if let Err(failure) = result {
            return Err(match failure {
                LoadFailure::Parse(e) => parse_error(&file.path, e),
                LoadFailure::Storage(e) => GraphError::storage(&file.path, e),
            });
        }
        bar.inc(count % 65_536);
        per_file.push((file.path.clone(), count));
    }
    loader.commit().map_err(|e| GraphError::storage(dir, e))?;
    Ok(per_file)
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

/// Collects every (IRI, literal label) of the configured label predicates and builds the label
/// index from them.
fn build_label_index(store: &Store, dir: &Path, settings: &GraphSettings) -> Result<u64, GraphError> {
    let predicates = settings
        .label_predicates
        .iter()
        .map(|p| named_node(p))
        .collect::<Result<Vec<_>, _>>()?;
    let entries = predicates.into_iter().flat_map(move |predicate| {
        store
            .quads_for_pattern(None, Some(predicate.as_ref()), None, None)
            .filter_map(move |quad| match quad {
                Ok(Quad {
                    subject: NamedOrBlankNode::NamedNode(subject),
                    object: Term::Literal(label),
                    ..
                }) => Some(Ok(LabelEntry {
                    iri: subject.into_string(),
                    label: label.value().to_owned(),
                })),
                Ok(_) => None, // blank-node subjects and non-literal labels cannot be linked
                Err(e) => Some(Err(GraphError::storage(dir, e))),
            })
    });
    LabelIndex::build(&dir.join("labels"), entries)
}

fn evaluate(
    store: &Store,
    query: &ReadQuery,
    token: CancellationToken,
    max_rows: usize,
) -> Result<QueryResults, GraphError> {
    let evaluation_error = |e: QueryEvaluationError| match e {
        QueryEvaluationError::Cancelled => GraphError::Evaluation {
            message: "cancelled".into(),
        },
        other => GraphError::Evaluation {
            message: other.to_string(),
        },
    };
    let results = SparqlEvaluator::new()
        .with_cancellation_token(token)
        .for_query(query.as_query().clone())
        .on_store(store)
        .execute()
        .map_err(evaluation_error)?;
    match results {
        oxigraph::sparql::QueryResults::Boolean(b) => Ok(QueryResults::Boolean(b)),
        oxigraph::sparql::QueryResults::Solutions(solutions) => {
            let variables: Vec<_> = solutions.variables().to_vec();
            let mut out = Solutions {
                variables: variables.iter().map(|v| v.as_str().to_owned()).collect(),
                ..Solutions::default()
            };
            for solution in solutions {
                if out.rows.len() == max_rows {
                    out.truncated = true;
                    break;
                }
                let solution = solution.map_err(evaluation_error)?;
                out.rows
                    .push(variables.iter().map(|v| solution.get(v).cloned()).collect());
            }
            Ok(QueryResults::Solutions(out))
        }
        oxigraph::sparql::QueryResults::Graph(_) => Err(GraphError::NotReadOnly { kind: "CONSTRUCT" }),
    }
}

#[async_trait]
impl KnowledgeGraph for EmbeddedStore {
    fn describe(&self) -> String {
        format!("embedded store {}", self.dir.display())
    }

    fn settings(&self) -> &GraphSettings {
        &self.settings
    }

    async fn query(&self, query: &ReadQuery) -> Result<QueryResults, GraphError> {
        let timeout = self.settings.query_timeout();
        let token = CancellationToken::new();
        let max_rows = self.settings.max_rows;
        // The LIMIT lets the evaluator stop early (a top-k ORDER BY instead of a full sort).
        let (store, query) = (self.store.clone(), query.capped(max_rows));
        let worker_token = token.clone();
        // Dropping this future (an answer timeout above us) stops the evaluation too.
        let _cancel_on_drop = CancelOnDrop(token.clone());
        let running = Running::new(&self.running);
        let task = tokio::task::spawn_blocking(move || {
            let _running = running;
            evaluate(&store, &query, worker_token, max_rows)
        });
        match tokio::time::timeout(timeout, task).await {
            Ok(joined) => joined.map_err(|e| GraphError::Evaluation {
                message: format!("query task failed: {e}"),
            })?,
            Err(_) => {
                // Stops the evaluation at its next check; the blocking thread then returns.
                token.cancel();
                Err(GraphError::Timeout { after: timeout })
            }
        }
    }

    async fn label_matches(&self, text: &str, limit: usize) -> Result<Vec<(String, String)>, GraphError> {
        let labels = Arc::clone(&self.labels);
        let text = text.to_owned();
        let found = tokio::task::spawn_blocking(move || labels.search(&text, limit))
            .await
            .map_err(|e| GraphError::index(&self.dir, e))??;
        Ok(found.into_iter().map(|e| (e.iri, e.label)).collect())
    }
}
