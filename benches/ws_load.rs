//! Load on `chatty-kg serve` over loopback WebSocket, with the scripted model answering at once
//! (so the figures are the server's, not a model's). Run by hand, bounded in time:
//!
//! ```sh
//! ulimit -n 20000   # each connection is a file descriptor on both sides
//! cargo bench --bench ws_load
//! ```
//!
//! 1. **Idle sessions held**: opens `CHATTY_KG_LOAD_IDLE` (default 5000) WebSocket connections,
//!    each with a session opened, and reports how many the server holds and its resident memory
//!    per idle session (VmRSS before and after, from /proc).
//! 2. **Questions per second**: `CHATTY_KG_LOAD_CLIENTS` (default 32) connections ask in a loop
//!    for `CHATTY_KG_LOAD_SECS` (default 20) seconds; reports answered questions per second and
//!    p50/p95/p99 latency. Every answer is checked against the expected one.

// A benchmark run by hand: a failed setup stops it with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/server.rs"]
mod server;

use futures_util::StreamExt;
use serde_json::json;
use server::{QUESTIONS, TestServer, answers, ask, next, send, until_answer};
use std::time::{Duration, Instant};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let idle = env_or("CHATTY_KG_LOAD_IDLE", 5000) as usize;
    let clients = env_or("CHATTY_KG_LOAD_CLIENTS", 32) as usize;
    let secs = env_or("CHATTY_KG_LOAD_SECS", 20);
    let dir = tempfile::tempdir().expect("temp dir");
    // No per-key rate limits: every client here is the one anonymous caller. Room for every
    // connection under the total cap (the server lowers it, and says so, if `ulimit -n` is short).
    let extra = format!(
        "max_concurrent_answers = {clients}\nws_idle_timeout_secs = 3600\n\
         max_sessions_per_hour_per_key = 0\nmax_questions_per_minute_per_key = 0\n\
         max_connections = {}",
        idle + clients + 16
    );
    let Some(server) = TestServer::start(dir.path(), &extra) else {
        eprintln!("the embedding model is missing: chatty-kg models fetch all-minilm-l6-v2");
        return;
    };
    let pid = server.child.id();
    let url = server.ws_url("");

    // Warm up: the embedder's first call and the store's caches.
    let mut ws = server.ws().await;
    ask(&mut ws, QUESTIONS[0].0).await;
    until_answer(&mut ws).await;
    drop(ws);
    tokio::time::sleep(Duration::from_millis(500)).await;

    // 1. Idle sessions.
    let before = rss_kib(pid);
    let started = Instant::now();
    let mut held = Vec::with_capacity(idle);
    let mut failure = None;
    for _ in 0..idle {
        if started.elapsed() > Duration::from_secs(120) {
            failure = Some("stopped after 120 s".to_owned());
            break;
        }
        match tokio_tungstenite::connect_async(&url).await {
            Ok((mut ws, _)) => {
                send(&mut ws, json!({"type": "open"})).await;
                let session = next(&mut ws).await;
                assert_eq!(session["type"], "session");
                held.push(ws);
            }
            Err(e) => {
                failure = Some(e.to_string());
                break;
            }
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss_kib(pid);
    // Every connection still open? A ping round trip on a sample.
    let alive = {
        let mut alive = 0;
        let step = (held.len() / 50).max(1);
        for ws in held.iter_mut().step_by(step) {
            send(ws, json!({"type": "ask", "question": ""})).await;
            if next(ws).await["kind"] == "empty_question" {
                alive += 1;
            }
        }
        alive
    };
    println!(
        "idle sessions: {} held (of {idle} asked{}) in {:.1} s; server RSS {:.1} MiB → {:.1} MiB, \
         {:.1} KiB per idle session; {alive} sampled connections answered",
        held.len(),
        failure.map(|f| format!("; stopped: {f}")).unwrap_or_default(),
        started.elapsed().as_secs_f64(),
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        after.saturating_sub(before) as f64 / held.len().max(1) as f64,
    );
    for ws in &mut held {
        let _ = ws.close(None).await;
    }
    drop(held);
    tokio::time::sleep(Duration::from_secs(2)).await;

    // 2. Throughput.
    let deadline = Instant::now() + Duration::from_secs(secs);
    let workers = (0..clients).map(|i| {
        let url = url.clone();
        tokio::spawn(async move {
            let (mut ws, _) = tokio_tungstenite::connect_async(&url).await.expect("connect");
            let mut latencies = Vec::new();
            let mut n = i;
            while Instant::now() < deadline {
                let (question, _, _, expected) = QUESTIONS[n % QUESTIONS.len()];
                n += 1;
                let asked = Instant::now();
                ask(&mut ws, question).await;
                let frames = until_answer(&mut ws).await;
                let answer = frames.last().expect("a frame");
                assert_eq!(answers(&answer["explanation"]), [expected], "{answer}");
                latencies.push(asked.elapsed().as_secs_f64() * 1000.0);
            }
            let _ = ws.close(None).await;
            while ws.next().await.is_some() {}
            latencies
        })
    });
    let started = Instant::now();
    let mut latencies: Vec<f64> = futures_util::future::join_all(workers)
        .await
        .into_iter()
        .flat_map(|r| r.expect("client task"))
        .collect();
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    println!(
        "throughput: {} questions by {clients} clients in {elapsed:.1} s = {:.1} questions/s; \
         latency p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms; server RSS {:.1} MiB",
        latencies.len(),
        latencies.len() as f64 / elapsed,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.95),
        percentile(&latencies, 0.99),
        rss_kib(pid) as f64 / 1024.0,
    );
}
