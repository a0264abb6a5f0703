//! Errors of the graph layer. Each variant carries what a user needs to fix the problem:
//! which file and line, which endpoint, what came back.

use std::path::PathBuf;
use std::time::Duration;

/// Everything that can go wrong while loading, searching or querying a knowledge graph.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("no chatty-kg store at {path}: load one first with `chatty-kg load --store {path} FILE...`")]
    StoreNotFound { path: PathBuf },

    #[error("the store at {path} is incomplete: its last load ({detail}) did not finish; run `chatty-kg load` again")]
    StoreIncomplete { path: PathBuf, detail: String },

    #[error(
        "the label index of the store at {path} is incomplete: the last `chatty-kg index` did not finish; \
         run `chatty-kg index --store {path}` again"
    )]
    IndexIncomplete { path: PathBuf },

    #[error(
        "the store at {path} is in use by another chatty-kg process (a `chatty-kg serve`, or a command reading \
         or loading it): stop `chatty-kg serve` (or wait for the other command) and try again"
    )]
    StoreInUse { path: PathBuf },

    #[error(
        "the store at {path} is being written: a `chatty-kg load` or `chatty-kg index` is in progress; \
         wait for it to finish and try again"
    )]
    StoreBeingWritten { path: PathBuf },

    #[error("storage error in {path}: {message}")]
    Storage { path: PathBuf, message: String },

    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: unknown RDF format (use .nt, .ttl, .rdf/.owl/.xml, .nq or .trig, optionally .gz, .bz2 or .zst)")]
    UnsupportedFormat { path: PathBuf },

    #[error("{path}:{line}:{column}: syntax error: {message} (nothing from this load was kept)")]
    Syntax {
        path: PathBuf,
        line: u64,
        column: u64,
        message: String,
    },

    #[error("label index at {path}: {message}")]
    LabelIndex { path: PathBuf, message: String },

    #[error("invalid SPARQL query: {message}")]
    QueryParse { message: String },

    #[error("refused: {kind} cannot run here (only SELECT and ASK over the configured graph, without SERVICE or FROM)")]
    NotReadOnly { kind: &'static str },

    #[error(
        "refused: the function <{iri}> is not allowed here (only SPARQL's built-ins, XSD casts such as \
         xsd:integer(…) and Virtuoso's bif:contains: other extension functions may reach the network)"
    )]
    FunctionNotAllowed { iri: String },

    #[error("invalid IRI <{iri}>: {message}")]
    InvalidIri { iri: String, message: String },

    #[error("query evaluation failed: {message}")]
    Evaluation { message: String },

    #[error("query timed out after {after:?}")]
    Timeout { after: Duration },

    /// A user-written query's worker process ended without an answer (see `worker.rs`): the
    /// query needed more memory, stack or CPU than a worker may use.
    #[error("the query could not be evaluated: its worker process {reason}")]
    QueryWorker { reason: String },

    #[error("the schema profile could not be computed ({message}); it is not asked for again for {retry_in:?}")]
    ProfileUnavailable { message: String, retry_in: Duration },

    #[error("SPARQL endpoint {endpoint} is unreachable: {message}")]
    Unreachable { endpoint: String, message: String },

    #[error("the Wikibase search API {api} failed: {message}")]
    SearchApi { api: String, message: String },

    #[error("SPARQL endpoint {endpoint} did not answer within {after:?}")]
    EndpointTimeout { endpoint: String, after: Duration },

    #[error("SPARQL endpoint {endpoint} answered HTTP {status}: {body}")]
    Http {
        endpoint: String,
        status: u16,
        body: String,
    },

    #[error("SPARQL endpoint {endpoint} sent results that cannot be parsed ({content_type}): {message}")]
    BadResults {
        endpoint: String,
        content_type: String,
        message: String,
    },

    #[error(
        "SPARQL endpoint {endpoint} {}: ask for fewer or shorter rows, or raise max_result_bytes",
        too_large(*.bytes, *.max)
    )]
    ResultTooLarge {
        endpoint: String,
        /// The announced size (Content-Length), when the endpoint sent one.
        bytes: Option<u64>,
        max: usize,
    },

    #[error("invalid endpoint configuration: {message}")]
    Config { message: String },

    #[error(
        "refused: the query builds a value longer than {value_limit} bytes, or more than {query_limit} bytes of values in all (CONCAT, REPLACE, GROUP_CONCAT, …); nothing was kept"
    )]
    ValueTooLarge { value_limit: usize, query_limit: usize },

    #[error(
        "the query's results are larger than {max} bytes: ask for fewer or shorter rows, or raise max_result_bytes"
    )]
    SolutionsTooLarge { max: usize },

    /// A regular expression a remote endpoint's backtracking engine could spend hours on: the
    /// query is refused before it is sent.
    #[error("the regular expression {pattern:?} is refused for a remote endpoint: {why}")]
    RiskyPattern { pattern: String, why: &'static str },
}

fn too_large(bytes: Option<u64>, max: usize) -> String {
    match bytes {
        Some(bytes) => format!("announced {bytes} bytes of results, more than the {max} allowed (not read)"),
        None => format!("sent more than the {max} bytes of results allowed, without one complete row in them"),
    }
}

impl GraphError {
    pub(crate) fn storage(path: &std::path::Path, error: impl std::fmt::Display) -> Self {
        Self::Storage {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }

    pub(crate) fn index(path: &std::path::Path, error: impl std::fmt::Display) -> Self {
        Self::LabelIndex {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}
