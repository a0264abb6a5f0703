//! The server under test (shared by tests/server.rs, tests/mcp.rs and the server benches): the real binary on
//! a loopback port over a fresh copy of tests/fixtures/movies.ttl, with the scripted model
//! configured as a user would, and small WebSocket/HTTP client helpers.

// Not every user calls every helper; helpers unwrap: a failed setup is a failed test or bench.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_models::{catalog, model_for_tests};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

pub type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub fn qir(entity: &str, triple: [&str; 3]) -> String {
    json!({"entities": [entity], "unknowns": [if triple[0].starts_with('?') { triple[0] } else { triple[2] }],
        "relations": [triple[1]], "triples": [triple], "type": "list", "order": null})
    .to_string()
}

/// The scripted model's part: the QIR of each question whose entity is not written as a label
/// (the others are grounded without a model, and a follow-up's "he" is resolved by the dialogue).
pub fn script() -> Value {
    let mut rules = vec![
        json!({"agent": "qir", "contains": "what else did robert zemeckis direct",
               "replies": [qir("Robert Zemeckis", ["?answer", "directed by", "Robert Zemeckis"])]}),
        json!({"agent": "qir", "contains": "who directed titanic 2",
               "replies": [qir("Titanic 2", ["Titanic 2", "directed by", "?answer"])]}),
        // A typo in lower case: no span is a label and no name is written in capitals, so the
        // model is asked (and takes 2.5 s).
        json!({"agent": "qir", "contains": "when was cast awy released", "delay_ms": 2500,
               "replies": [qir("Cast Away", ["Cast Away", "release year", "?answer"])]}),
        json!({"agent": "qir", "contains": "who starred in bigg",
               "replies": [qir("Big", ["Big", "starred actors", "?answer"])]}),
    ];
    for (question, entity, relation, _) in QUESTIONS {
        rules.push(
            json!({"agent": "qir", "contains": question.to_lowercase().trim_end_matches('?'),
            "replies": [qir(entity, [entity, relation, "?answer"])]}),
        );
    }
    Value::Array(rules)
}

/// Questions with distinct answers, so a mixed-up session shows.
pub const QUESTIONS: [(&str, &str, &str, &str); 5] = [
    (
        "Who directed Forrest Gump?",
        "Forrest Gump",
        "directed by",
        "Robert Zemeckis",
    ),
    ("Who starred in Big?", "Big", "starred actors", "Tom Hanks"),
    ("Who starred in Top Gun?", "Top Gun", "starred actors", "Tom Cruise"),
    ("When was Big released?", "Big", "release year", "1988"),
    ("When was Top Gun released?", "Top Gun", "release year", "1986"),
];

pub struct TestServer {
    pub child: Child,
    pub url: String,
    dir: PathBuf,
    extra: String,
    env: Vec<(String, String)>,
    /// Shell commands run before the server (in the same process, which `exec`s it).
    shell: Option<String>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn chatty() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_chatty-kg"));
    command
        .env_remove("CHATTY_KG_CONFIG")
        .env("XDG_CONFIG_HOME", env!("CARGO_TARGET_TMPDIR"));
    command
}

impl TestServer {
    /// A server over a fresh copy of the movies store, with `extra` appended to its config.
    pub fn start(dir: &Path, extra: &str) -> Option<Self> {
        Self::start_with_env(dir, extra, &[])
    }

    /// [`start`](Self::start), with environment variables for the server (e.g. configuration
    /// overrides such as `CHATTY_KG_LLM__BACKEND`).
    pub fn start_with_env(dir: &Path, extra: &str, env: &[(&str, &str)]) -> Option<Self> {
        Self::start_in_shell(dir, extra, env, None)
    }

    /// [`start_with_env`](Self::start_with_env), the server started by `sh` after `shell` (e.g.
    /// `ulimit -n 400`), its standard error in [`log`](Self::log) instead of the test's.
    pub fn start_in_shell(dir: &Path, extra: &str, env: &[(&str, &str)], shell: Option<&str>) -> Option<Self> {
        model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL)?;
        let store = dir.join("store");
        let movies = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/movies.ttl");
        let output = chatty()
            .args(["load", "--store", store.to_str()?, movies.to_str()?])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        std::fs::write(dir.join("script.json"), script().to_string()).unwrap();
        Some(Self::restart_with_env(dir, extra, env, shell))
    }

    pub fn restart(dir: &Path, extra: &str) -> Self {
        Self::restart_with_env(dir, extra, &[], None)
    }

    /// What the server wrote to its standard error, when started by [`start_in_shell`](Self::start_in_shell).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    fn restart_with_env(dir: &Path, extra: &str, env: &[(&str, &str)], shell: Option<&str>) -> Self {
        let config = dir.join("config.toml");
        std::fs::write(
            &config,
            format!(
                "[kgs.default]\nstore = {store:?}\n[llm]\nbackend = \"scripted\"\nscript = {script:?}\n\
                 [server]\nbind = \"127.0.0.1:0\"\ndata_dir = {sessions:?}\nmax_message_bytes = 4096\n\
                 max_frame_bytes = 65536\nshutdown_grace_secs = 20\n{extra}\n",
                store = dir.join("store"),
                script = dir.join("script.json"),
                sessions = dir.join("sessions"),
            ),
        )
        .unwrap();
        let mut command = match shell {
            None => chatty(),
            Some(shell) => {
                // `sh -c SCRIPT BINARY ARGS…`: the script's "$0" is the binary, "$@" its arguments.
                let mut sh = Command::new("sh");
                sh.arg("-c")
                    .arg(format!("{shell} && exec \"$0\" \"$@\" 2>\"$CHATTY_KG_TEST_LOG\""))
                    .arg(env!("CARGO_BIN_EXE_chatty-kg"))
                    .env("CHATTY_KG_TEST_LOG", dir.join("server.log"))
                    .env_remove("CHATTY_KG_CONFIG")
                    .env("XDG_CONFIG_HOME", env!("CARGO_TARGET_TMPDIR"));
                sh
            }
        };
        let mut child = command
            .args(["serve", "--config", config.to_str().unwrap()])
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("chatty-kg serving on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_owned();
        Self {
            child,
            url,
            dir: dir.to_path_buf(),
            extra: extra.to_owned(),
            env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            shell: shell.map(str::to_owned),
        }
    }

    /// SIGKILL: no shutdown code runs at all.
    pub fn kill_and_restart(mut self) -> Self {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        let env: Vec<(String, String)> = std::mem::take(&mut self.env);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let shell = self.shell.take();
        Self::restart_with_env(&self.dir.clone(), &self.extra.clone(), &env, shell.as_deref())
    }

    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn ws_url(&self, query: &str) -> String {
        format!("{}/ws{query}", self.url.replacen("http", "ws", 1))
    }

    pub async fn ws(&self) -> Ws {
        tokio_tungstenite::connect_async(self.ws_url("")).await.unwrap().0
    }
}

pub fn http() -> reqwest::Client {
    reqwest::Client::new()
}

pub async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

pub async fn get_json(url: String) -> (u16, Value) {
    json_of(http().get(url).send().await.unwrap()).await
}

pub async fn post_json(url: String, body: Value) -> (u16, Value) {
    json_of(http().post(url).json(&body).send().await.unwrap()).await
}

pub async fn send(ws: &mut Ws, message: Value) {
    ws.send(Message::text(message.to_string())).await.unwrap();
}

/// Sends an `ask` frame.
pub async fn ask(ws: &mut Ws, question: &str) {
    send(ws, json!({"type": "ask", "question": question})).await;
}

/// The next JSON frame (pings and pongs skipped); panics on close or after 60 s.
pub async fn next(ws: &mut Ws) -> Value {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(60), ws.next())
            .await
            .expect("no frame within 60 s")
            .expect("connection ended")
            .expect("connection failed");
        match frame {
            Message::Text(text) => return serde_json::from_str(&text).unwrap(),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected frame {other:?}"),
        }
    }
}

/// Frames up to and including the answer or error.
pub async fn until_answer(ws: &mut Ws) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let frame = next(ws).await;
        let done = matches!(frame["type"].as_str(), Some("answer" | "error"));
        frames.push(frame);
        if done {
            return frames;
        }
    }
}

pub async fn close_code(ws: &mut Ws) -> (CloseCode, String) {
    loop {
        match tokio::time::timeout(Duration::from_secs(30), ws.next()).await.unwrap() {
            Some(Ok(Message::Close(Some(frame)))) => return (frame.code, frame.reason.to_string()),
            Some(Ok(Message::Close(None))) | None => return (CloseCode::Status, String::new()),
            Some(Ok(_)) => {}
            Some(Err(e)) => panic!("connection failed instead of closing: {e}"),
        }
    }
}

pub fn answers(explanation: &Value) -> Vec<String> {
    explanation["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["label"].as_str().or(a["value"].as_str()).unwrap().to_owned())
        .collect()
}

pub fn metric(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .find(|line| line.starts_with(name) && line[name.len()..].starts_with(' '))
        .and_then(|line| line.rsplit(' ').next())
        .map_or(0.0, |v| v.parse().unwrap())
}

/// The events of a server-sent-events body: (event name, or "" for none; data as JSON).
pub fn sse_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .filter_map(|block| {
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap_or("")
                .to_owned();
            let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name, serde_json::from_str(data).unwrap_or(Value::Null)))
        })
        .collect()
}

/// `chatty-kg mcp` as a child process on `config` (and `store`, if given), its stdin and stdout
/// piped for a client, killed when dropped.
pub fn mcp_server(config: &Path, store: Option<&Path>) -> tokio::process::Child {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_chatty-kg"));
    command.args(["mcp", "--config", config.to_str().unwrap()]);
    if let Some(store) = store {
        command.args(["--store", store.to_str().unwrap()]);
    }
    command
        .env_remove("CHATTY_KG_CONFIG")
        .env_remove("CHATTY_KG_STORE")
        .env("XDG_CONFIG_HOME", env!("CARGO_TARGET_TMPDIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// A fresh schema of the test PostgreSQL (`CHATTY_KG_TEST_POSTGRES`, started by scripts/test.sh)
/// as a `sessions_url` whose `search_path` is that schema; `None` (skipping, loudly) without
/// one, a failure with `CHATTY_KG_REQUIRE_POSTGRES=1` (CI).
pub async fn postgres_sessions_url(test: &str) -> Option<String> {
    let Ok(base) = std::env::var("CHATTY_KG_TEST_POSTGRES") else {
        assert!(
            std::env::var_os("CHATTY_KG_REQUIRE_POSTGRES").is_none(),
            "CHATTY_KG_REQUIRE_POSTGRES=1 but CHATTY_KG_TEST_POSTGRES is not set (scripts/test.sh starts one)"
        );
        eprintln!("!!! {test} SKIPPED: set CHATTY_KG_TEST_POSTGRES (scripts/test.sh does)");
        return None;
    };
    let (client, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let schema = format!("s_{test}_{}", std::process::id());
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};"
        ))
        .await
        .unwrap();
    let separator = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{separator}options=-c%20search_path%3D{schema}"))
}
