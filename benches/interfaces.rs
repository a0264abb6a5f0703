//! What each interface adds to answering a question: `chatty-kg serve` over loopback (the movies
//! fixture, the scripted model answering at once), the same questions asked one after another
//! through REST, REST with server-sent events, the WebSocket, the OpenAI-compatible endpoint
//! (plain and streamed), `chatty-kg mcp` over stdio, and MCP over streamable HTTP (`/mcp`). For each answer the overhead is the
//! client's wall time minus the agents' own time (`timings.total_ms` of the explanation), so
//! the figures are the interface's, not the pipeline's. Run by hand:
//!
//! ```sh
//! cargo bench --profile dev --bench interfaces    # CHATTY_KG_BENCH_QUESTIONS=1000 by default
//! ```

// A benchmark run by hand: a failed setup stops it with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/server.rs"]
mod server;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use server::{QUESTIONS, TestServer, answers, mcp_server, post_json, sse_events, until_answer};
use std::time::Instant;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Prints one interface's latency and overhead percentiles (ms).
fn report(name: &str, mut wall: Vec<f64>, mut overhead: Vec<f64>) {
    wall.sort_by(f64::total_cmp);
    overhead.sort_by(f64::total_cmp);
    println!(
        "{name:<22} n={:<5} wall p50 {:>7.2} p95 {:>7.2} | added p50 {:>6.2} p95 {:>6.2} p99 {:>6.2} ms",
        wall.len(),
        percentile(&wall, 0.5),
        percentile(&wall, 0.95),
        percentile(&overhead, 0.5),
        percentile(&overhead, 0.95),
        percentile(&overhead, 0.99),
    );
}

/// Asks `n` questions through `ask` (which returns the explanation's `total_ms`), checking each
/// answer's first value, and reports.
async fn measure<F, Fut>(name: &str, n: usize, mut ask: F)
where
    F: FnMut(&'static str) -> Fut,
    Fut: std::future::Future<Output = (Vec<String>, f64)>,
{
    let (mut wall, mut overhead) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let (question, _, _, expected) = QUESTIONS[i % QUESTIONS.len()];
        let started = Instant::now();
        let (values, agents_ms) = ask(question).await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(values.first().map(String::as_str), Some(expected), "{name}: {question}");
        wall.push(ms);
        overhead.push(ms - agents_ms);
    }
    report(name, wall, overhead);
}

fn total_ms(explanation: &Value) -> f64 {
    explanation["timings"]["total_ms"].as_f64().unwrap()
}

/// One HTTP client for every request, keeping its connections (as a real client would).
fn client() -> &'static reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(reqwest::Client::new)
}

async fn post(url: String, body: Value) -> Value {
    client()
        .post(url)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The events of a streamed reply to `body`.
async fn post_streamed(url: String, body: Value) -> Vec<(String, Value)> {
    let response = client()
        .post(url)
        .header("Accept", "text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    sse_events(&response.text().await.unwrap())
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("CHATTY_KG_BENCH_QUESTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let dir = tempfile::tempdir().unwrap();
    let extra = "max_sessions_per_hour_per_key = 0\nmax_questions_per_minute_per_key = 0";
    let Some(server) = TestServer::start(dir.path(), extra) else {
        eprintln!("the embedding model is missing: chatty-kg models fetch all-minilm-l6-v2");
        return;
    };
    let api = |path: &str| format!("{}{path}", server.url);
    let session = || async {
        let (_, s) = post_json(api("/api/sessions"), json!({})).await;
        s["session"].as_str().unwrap().to_owned()
    };
    // Warm-up: the embedder's first calls and the store's caches.
    let id = session().await;
    for (question, ..) in QUESTIONS {
        post_json(api(&format!("/api/sessions/{id}/ask")), json!({"question": question})).await;
    }

    let id = session().await;
    measure("REST", n, |q| {
        let url = api(&format!("/api/sessions/{id}/ask"));
        async move {
            let turn = post(url, json!({"question": q})).await;
            (answers(&turn["explanation"]), total_ms(&turn["explanation"]))
        }
    })
    .await;

    let id = session().await;
    measure("REST + SSE", n, |q| {
        let url = api(&format!("/api/sessions/{id}/ask"));
        async move {
            let events = post_streamed(url, json!({"question": q})).await;
            let (_, answer) = events.iter().find(|(name, _)| name == "answer").unwrap();
            (answers(&answer["explanation"]), total_ms(&answer["explanation"]))
        }
    })
    .await;

    let mut ws = server.ws().await;
    assert!(ws_open(&mut ws).await);
    let ws = std::sync::Arc::new(tokio::sync::Mutex::new(ws));
    measure("WebSocket", n, |q| {
        let ws = ws.clone();
        async move {
            let mut ws = ws.lock().await;
            server::ask(&mut ws, q).await;
            let messages = until_answer(&mut ws).await;
            let explanation = &messages.last().unwrap()["explanation"];
            (answers(explanation), total_ms(explanation))
        }
    })
    .await;

    measure("OpenAI", n, |q| {
        let url = api("/v1/chat/completions");
        async move {
            let reply = post(
                url,
                json!({"model": "chatty-kg", "messages": [{"role": "user", "content": q}]}),
            )
            .await;
            let explanation = &reply["chatty_kg"]["explanation"];
            (answers(explanation), total_ms(explanation))
        }
    })
    .await;

    measure("OpenAI, streamed", n, |q| {
        let url = api("/v1/chat/completions");
        async move {
            let body = json!({"model": "chatty-kg", "stream": true, "messages": [{"role": "user", "content": q}]});
            let explanation = post_streamed(url, body)
                .await
                .into_iter()
                .find_map(|(_, chunk)| chunk.get("chatty_kg").and_then(|c| c.get("explanation")).cloned())
                .unwrap();
            (answers(&explanation), total_ms(&explanation))
        }
    })
    .await;

    // MCP over stdio: its own process, on the same store.
    let mut child = mcp_server(&dir.path().join("config.toml"), None);
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = std::sync::Arc::new(().serve((stdout, stdin)).await.unwrap());
    measure_mcp("MCP (stdio)", n, client).await;

    // MCP over streamable HTTP on the server (`/mcp`), through the SDK's HTTP client.
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(format!("{}/mcp", server.url));
    measure_mcp("MCP (HTTP)", n, std::sync::Arc::new(().serve(transport).await.unwrap())).await;
    drop(server);
}

/// `n` questions through the MCP `ask` tool of `client` (after one to warm up).
async fn measure_mcp(
    name: &str,
    n: usize,
    client: std::sync::Arc<rmcp::service::RunningService<rmcp::RoleClient, ()>>,
) {
    let call =
        |q: &str| CallToolRequestParams::new("ask").with_arguments(json!({"question": q}).as_object().unwrap().clone());
    client.call_tool(call(QUESTIONS[0].0)).await.unwrap(); // warm-up
    measure(name, n, |q| {
        let client = client.clone();
        let request = call(q);
        async move {
            let result = client.call_tool(request).await.unwrap();
            let reply: Value = serde_json::from_str(&result.content[0].as_text().unwrap().text).unwrap();
            let values = reply["answers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["label"].as_str().unwrap().to_owned());
            (values.collect(), reply["total_ms"].as_f64().unwrap())
        }
    })
    .await;
}

/// Opens a session on a WebSocket; true when the server confirmed it.
async fn ws_open(ws: &mut server::Ws) -> bool {
    server::send(ws, json!({"type": "open"})).await;
    server::next(ws).await["type"] == "session"
}
