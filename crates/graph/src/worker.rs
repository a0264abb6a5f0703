//! User-written SPARQL evaluated in a worker process.
//!
//! A query a person writes (MCP `sparql`, a correction, an imported example, the CLI's `sparql`)
//! passes the read-only guard ([`ReadQuery`]) but can still ask the evaluator for more than the
//! machine has: copies of a large value in every row of a cross product, a sort of every row of
//! one, nesting the evaluator recurses into. Such a query must not take the server down with
//! it, so an embedded store evaluates it in a process of its own: the same binary started as
//! `chatty-kg sparql-worker` ([`WORKER_COMMAND`]), which limits its own address space, CPU time
//! and core dumps before it reads the query, opens the store read-only and writes one reply on
//! stdout. The parent kills it at the query's timeout and gets rows or a typed error; a worker
//! that dies (out of memory, a stack overflow, a signal) is [`GraphError::QueryWorker`], never
//! the server's end.
//!
//! At most `sparql_workers` (a graph setting) run at once. A worker's permit is held by a task that owns the
//! child process until it has exited, so a permit comes back only when the work has stopped,
//! even when the caller has given up waiting (its own timeout, a closed connection).
//!
//! The parent's side is [`Workers::run`]; the worker's is [`serve`]. The program is set once by
//! the binary ([`use_program`]); without it (a library user, a test of this crate) user-written
//! queries are evaluated in process like the agents' own.

use crate::error::GraphError;
use crate::query::ReadQuery;
use crate::{QueryResults, Solutions};
use oxigraph::model::Term;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

/// The binary's subcommand that runs one query as a worker.
pub const WORKER_COMMAND: &str = "sparql-worker";

/// Longest request a worker reads (the query and its limits).
const MAX_REQUEST_BYTES: u64 = crate::query::MAX_QUERY_BYTES as u64 + 4096;

/// After the query's timeout the worker is given this long to reply before it is killed (it
/// stops itself at the timeout; the grace covers its start and its reply).
const GRACE: Duration = Duration::from_secs(2);

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Makes every embedded store of this process evaluate user-written queries by starting
/// `program WORKER_COMMAND …` (the binary itself). Set once; later calls are ignored.
pub fn use_program(program: PathBuf) {
    let _ = PROGRAM.set(program);
}

/// The worker program, when [`use_program`] set one.
pub(crate) fn program() -> Option<&'static Path> {
    PROGRAM.get().map(PathBuf::as_path)
}

/// The worker processes of one store: how many may run at once and what each may use.
#[derive(Debug, Clone)]
pub(crate) struct Workers {
    permits: Arc<Semaphore>,
    memory_bytes: u64,
}

/// What the parent sends a worker on stdin.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    query: String,
    timeout_ms: u64,
    max_rows: usize,
    max_bytes: usize,
}

/// What a worker writes on stdout: rows (terms in N-Triples syntax), a boolean, or the error.
#[derive(Debug, Serialize, Deserialize)]
enum Reply {
    Solutions {
        variables: Vec<String>,
        rows: Vec<Vec<Option<String>>>,
        truncated: bool,
    },
    Boolean(bool),
    Failed(Failure),
}

/// The errors a worker reports, as the parent rebuilds them.
#[derive(Debug, Serialize, Deserialize)]
enum Failure {
    Timeout { ms: u64 },
    ValueTooLarge { value_limit: usize, query_limit: usize },
    SolutionsTooLarge { max: usize },
    Refused { message: String },
    Evaluation { message: String },
}

impl From<GraphError> for Failure {
    fn from(error: GraphError) -> Self {
        match error {
            GraphError::Timeout { after } => Self::Timeout {
                ms: after.as_millis() as u64,
            },
            GraphError::ValueTooLarge {
                value_limit,
                query_limit,
            } => Self::ValueTooLarge {
                value_limit,
                query_limit,
            },
            GraphError::SolutionsTooLarge { max } => Self::SolutionsTooLarge { max },
            e @ (GraphError::QueryParse { .. }
            | GraphError::NotReadOnly { .. }
            | GraphError::FunctionNotAllowed { .. }) => Self::Refused { message: e.to_string() },
            other => Self::Evaluation {
                message: other.to_string(),
            },
        }
    }
}

impl From<Failure> for GraphError {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Timeout { ms } => GraphError::Timeout {
                after: Duration::from_millis(ms),
            },
            Failure::ValueTooLarge {
                value_limit,
                query_limit,
            } => GraphError::ValueTooLarge {
                value_limit,
                query_limit,
            },
            Failure::SolutionsTooLarge { max } => GraphError::SolutionsTooLarge { max },
            Failure::Refused { message } => GraphError::QueryParse { message },
            Failure::Evaluation { message } => GraphError::Evaluation { message },
        }
    }
}

impl Workers {
    pub(crate) fn new(processes: usize, memory_bytes: u64) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(processes.max(1))),
            memory_bytes,
        }
    }

    /// Evaluates `query` over the store at `dir` in a worker started from `program`, killed
    /// when `timeout` and a grace period have passed. Waits for a permit first (the wait counts
    /// in the timeout).
    pub(crate) async fn run(
        &self,
        program: &Path,
        dir: &Path,
        query: &ReadQuery,
        timeout: Duration,
        max_rows: usize,
        max_bytes: usize,
    ) -> Result<QueryResults, GraphError> {
        let request = Request {
            query: query.to_string(),
            timeout_ms: timeout.as_millis() as u64,
            max_rows,
            max_bytes,
        };
        let request = serde_json::to_vec(&request).map_err(|e| worker_failed(format!("request not written: {e}")))?;
        let permits = Arc::clone(&self.permits);
        let permit = tokio::time::timeout(timeout, permits.acquire_owned())
            .await
            .map_err(|_| GraphError::Timeout { after: timeout })?
            .map_err(|_| worker_failed("the worker pool is closed".into()))?;
        let mut command = tokio::process::Command::new(program);
        command
            .arg(WORKER_COMMAND)
            .arg(dir)
            .arg(self.memory_bytes.to_string())
            .arg(cpu_seconds(timeout).to_string())
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| worker_failed(format!("cannot start {}: {e}", program.display())))?;
        let (mut stdin, mut stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => (stdin, stdout),
            _ => return Err(worker_failed("no pipe to the worker".into())),
        };
        // The reply holds at most the rows' bytes, in JSON: a little more than the rows.
        let reply_limit = (max_bytes as u64).saturating_mul(2).saturating_add(1 << 20);
        // The task owns the child and the permit: whatever happens to the caller, the permit is
        // given back once the worker has exited.
        let task = tokio::spawn(async move {
            let _permit = permit;
            let exchange = async {
                stdin.write_all(&request).await?;
                stdin.shutdown().await?;
                drop(stdin);
                let mut reply = Vec::new();
                (&mut stdout).take(reply_limit).read_to_end(&mut reply).await?;
                Ok::<_, std::io::Error>(reply)
            };
            let reply = tokio::time::timeout(timeout + GRACE, exchange).await;
            let (reply, timed_out) = match reply {
                Ok(Ok(reply)) => (Some(reply), false),
                Ok(Err(_)) => (None, false),
                Err(_) => (None, true),
            };
            if timed_out {
                let _ = child.start_kill();
            }
            // Reaped before the permit goes: the work has stopped.
            let status = match tokio::time::timeout(GRACE, child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => {
                    let _ = child.start_kill();
                    child.wait().await.ok()
                }
            };
            (reply, timed_out, status)
        });
        let (reply, timed_out, status) = task
            .await
            .map_err(|e| worker_failed(format!("the worker's task failed: {e}")))?;
        if timed_out {
            return Err(GraphError::Timeout { after: timeout });
        }
        let reply: Option<Reply> = reply.and_then(|r| serde_json::from_slice(&r).ok());
        match reply {
            Some(reply) => from_reply(reply),
            None => Err(worker_failed(describe_exit(status))),
        }
    }
}

fn worker_failed(reason: String) -> GraphError {
    GraphError::QueryWorker { reason }
}

/// CPU seconds a worker may use: the timeout, rounded up, and one more.
fn cpu_seconds(timeout: Duration) -> u64 {
    timeout.as_secs_f64().ceil() as u64 + 1
}

/// Why a worker ended without a reply, as far as its exit says.
fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => "it could not be waited for".into(),
        Some(status) => match (status.code(), status.signal()) {
            (_, Some(6)) => "it aborted (out of memory or stack: the query needs more than a worker may use)".into(),
            (_, Some(9)) => "it was killed".into(),
            (_, Some(11)) => "it overflowed its stack or memory".into(),
            (_, Some(24)) => "it used up its CPU time".into(),
            (_, Some(signal)) => format!("it ended on signal {signal}"),
            (Some(code), None) => format!("it exited with code {code} and no answer"),
            (None, None) => "it ended with no answer".into(),
        },
    }
}

fn from_reply(reply: Reply) -> Result<QueryResults, GraphError> {
    match reply {
        Reply::Boolean(b) => Ok(QueryResults::Boolean(b)),
        Reply::Failed(failure) => Err(failure.into()),
        Reply::Solutions {
            variables,
            rows,
            truncated,
        } => {
            let rows = rows
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .map(|term| {
                            term.map(|t| Term::from_str(&t))
                                .transpose()
                                .map_err(|e| worker_failed(format!("a term of its reply does not parse: {e}")))
                        })
                        .collect::<Result<Vec<_>, _>>()
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(QueryResults::Solutions(Solutions {
                variables,
                rows,
                truncated,
            }))
        }
    }
}

fn to_reply(result: Result<QueryResults, GraphError>) -> Reply {
    match result {
        Ok(QueryResults::Boolean(b)) => Reply::Boolean(b),
        Ok(QueryResults::Solutions(s)) => Reply::Solutions {
            variables: s.variables,
            rows: s
                .rows
                .into_iter()
                .map(|row| row.into_iter().map(|t| t.map(|t| t.to_string())).collect())
                .collect(),
            truncated: s.truncated,
        },
        Err(e) => Reply::Failed(e.into()),
    }
}

/// How a worker evaluates a query over the store at a directory (the embedded store's
/// `evaluate_read_only`): the query, its timeout, rows and bytes at most.
pub(crate) type Evaluate = fn(&Path, &ReadQuery, Duration, usize, usize) -> Result<QueryResults, GraphError>;

/// The worker's side (`chatty-kg sparql-worker DIR MEMORY_BYTES CPU_SECONDS`): limits itself,
/// reads one request from stdin, evaluates it over the store at `dir` by `evaluate` and writes
/// the reply on stdout. Returns the process's exit code: 0 when a reply was written (the
/// query's own error included), 2 when the request or the limits were wrong.
pub(crate) fn serve(args: &[String], evaluate: Evaluate) -> i32 {
    let [dir, memory, cpu] = args else {
        eprintln!("usage: chatty-kg {WORKER_COMMAND} STORE_DIR MEMORY_BYTES CPU_SECONDS (started by chatty-kg itself)");
        return 2;
    };
    let (Ok(memory), Ok(cpu)) = (memory.parse::<u64>(), cpu.parse::<u64>()) else {
        eprintln!("{WORKER_COMMAND}: the limits must be numbers");
        return 2;
    };
    // The limits first, before anything of the query is read.
    if let Err(e) = limit_self(memory, cpu) {
        eprintln!("{WORKER_COMMAND}: cannot limit itself: {e}");
        return 2;
    }
    let mut text = Vec::new();
    if std::io::stdin().take(MAX_REQUEST_BYTES).read_to_end(&mut text).is_err() {
        return 2;
    }
    let Ok(request) = serde_json::from_slice::<Request>(&text) else {
        eprintln!("{WORKER_COMMAND}: the request is not understood");
        return 2;
    };
    let reply = to_reply(ReadQuery::parse(&request.query).and_then(|query| {
        let timeout = Duration::from_millis(request.timeout_ms);
        evaluate(Path::new(dir), &query, timeout, request.max_rows, request.max_bytes)
    }));
    let mut out = std::io::stdout().lock();
    match serde_json::to_writer(&mut out, &reply).and_then(|()| out.flush().map_err(serde_json::Error::io)) {
        Ok(()) => 0,
        Err(_) => 2,
    }
}

fn limit_self(memory: u64, cpu: u64) -> std::io::Result<()> {
    use rlimit::Resource;
    rlimit::setrlimit(Resource::CORE, 0, 0)?;
    rlimit::setrlimit(Resource::AS, memory, memory)?;
    // SIGXCPU at the soft limit, SIGKILL at the hard one.
    rlimit::setrlimit(Resource::CPU, cpu, cpu + 1)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_keep_terms_and_errors() {
        let solutions = Solutions {
            variables: vec!["x".into(), "y".into()],
            rows: vec![
                vec![
                    Some(Term::NamedNode(oxigraph::model::NamedNode::new_unchecked(
                        "http://e.org/a",
                    ))),
                    None,
                ],
                vec![
                    Some(Term::Literal(
                        oxigraph::model::Literal::new_language_tagged_literal_unchecked("a \"b\"\nc", "en"),
                    )),
                    Some(Term::Literal(oxigraph::model::Literal::from(3_i64))),
                ],
            ],
            truncated: true,
        };
        let reply = to_reply(Ok(QueryResults::Solutions(solutions.clone())));
        let text = serde_json::to_vec(&reply).unwrap();
        let back = from_reply(serde_json::from_slice(&text).unwrap()).unwrap();
        assert_eq!(back, QueryResults::Solutions(solutions));

        let reply = to_reply(Err(GraphError::ValueTooLarge {
            value_limit: 1,
            query_limit: 2,
        }));
        let back = from_reply(serde_json::from_slice(&serde_json::to_vec(&reply).unwrap()).unwrap());
        assert!(matches!(
            back,
            Err(GraphError::ValueTooLarge {
                value_limit: 1,
                query_limit: 2
            })
        ));
        let reply = to_reply(Err(GraphError::Timeout {
            after: Duration::from_millis(1500),
        }));
        let back = from_reply(serde_json::from_slice(&serde_json::to_vec(&reply).unwrap()).unwrap());
        assert!(matches!(back, Err(GraphError::Timeout { after }) if after == Duration::from_millis(1500)));
    }

    #[test]
    fn an_exit_without_a_reply_says_why() {
        use std::os::unix::process::ExitStatusExt;
        let abort = std::process::ExitStatus::from_raw(6);
        assert!(describe_exit(Some(abort)).contains("out of memory or stack"));
        let code = std::process::ExitStatus::from_raw(3 << 8);
        assert!(describe_exit(Some(code)).contains("code 3"));
        assert_eq!(cpu_seconds(Duration::from_millis(4200)), 6);
    }
}
