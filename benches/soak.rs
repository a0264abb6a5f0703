//! Soak: `chatty-kg serve` answering for minutes on end, watched from outside. Run by hand:
//!
//! ```sh
//! cargo build --workspace --benches --profile dev
//! CHATTY_KG_SOAK_MINUTES=10 target/debug/deps/soak-<hash> --bench
//! ```
//!
//! `CHATTY_KG_SOAK_SESSIONS` (default 16) WebSocket clients ask the fixture's questions in a loop
//! with the scripted model (so the figures are the server's own), each opening a new session
//! every 20 questions, for `CHATTY_KG_SOAK_MINUTES` (default 5). Every
//! `CHATTY_KG_SOAK_SAMPLE_SECS` (default 30) it prints the server's resident memory, open file
//! descriptors and threads (from /proc) and the size of its session database, so a leak shows
//! as a column that keeps growing while the load stays the same. Every answer is checked.

// A benchmark run by hand: a failed setup stops it with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/server.rs"]
mod server;

use futures_util::StreamExt;
use serde_json::json;
use server::{QUESTIONS, TestServer, answers, ask, next, send, until_answer};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A field of /proc/PID/status, e.g. `VmRSS` (KiB) or `Threads`.
fn status_field(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(&format!("{field}:")))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    })
}

#[tokio::main]
async fn main() {
    let sessions = env_or("CHATTY_KG_SOAK_SESSIONS", 16) as usize;
    let minutes = env_or("CHATTY_KG_SOAK_MINUTES", 5);
    let sample = Duration::from_secs(env_or("CHATTY_KG_SOAK_SAMPLE_SECS", 30));
    let dir = tempfile::tempdir().expect("temp dir");
    let extra = format!(
        "max_concurrent_answers = {sessions}\nmax_sessions_per_hour_per_key = 0\n\
         max_questions_per_minute_per_key = 0"
    );
    let Some(server) = TestServer::start(dir.path(), &extra) else {
        eprintln!("the embedding model is missing: chatty-kg models fetch all-minilm-l6-v2");
        return;
    };
    let pid = server.child.id();
    let url = server.ws_url("");
    let answered = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(minutes * 60);
    let clients: Vec<_> = (0..sessions)
        .map(|i| {
            let (url, answered) = (url.clone(), answered.clone());
            tokio::spawn(async move {
                let (mut ws, _) = tokio_tungstenite::connect_async(&url).await.expect("connect");
                let mut n = i;
                while Instant::now() < deadline {
                    if n % 20 == i % 20 {
                        send(&mut ws, json!({"type": "open"})).await;
                        assert_eq!(next(&mut ws).await["type"], "session");
                    }
                    let (question, _, _, expected) = QUESTIONS[n % QUESTIONS.len()];
                    n += 1;
                    ask(&mut ws, question).await;
                    let frames = until_answer(&mut ws).await;
                    let answer = frames.last().expect("a frame");
                    assert_eq!(answers(&answer["explanation"]), [expected], "{answer}");
                    answered.fetch_add(1, Ordering::Relaxed);
                }
                let _ = ws.close(None).await;
                while ws.next().await.is_some() {}
            })
        })
        .collect();

    println!("| minute | answered | questions/s | RSS MiB | open fds | threads | sessions db MiB |");
    println!("|---|---|---|---|---|---|---|");
    let started = Instant::now();
    let mut last = (Instant::now(), 0);
    let sessions_dir = dir.path().join("sessions");
    let print = |at: Instant, total: u64, last: (Instant, u64)| {
        let rate = (total - last.1) as f64 / at.duration_since(last.0).as_secs_f64().max(1e-9);
        println!(
            "| {:.1} | {total} | {rate:.0} | {:.1} | {} | {} | {:.1} |",
            started.elapsed().as_secs_f64() / 60.0,
            status_field(pid, "VmRSS") as f64 / 1024.0,
            open_fds(pid),
            status_field(pid, "Threads"),
            dir_bytes(&sessions_dir) as f64 / (1024.0 * 1024.0),
        );
    };
    print(Instant::now(), 0, last);
    while Instant::now() < deadline {
        tokio::time::sleep(sample.min(deadline.saturating_duration_since(Instant::now()))).await;
        let (now, total) = (Instant::now(), answered.load(Ordering::Relaxed));
        print(now, total, last);
        last = (now, total);
    }
    for client in clients {
        client.await.expect("client task");
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!("after the clients left:");
    print(Instant::now(), answered.load(Ordering::Relaxed), last);
}
