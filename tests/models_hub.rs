//! `chatty-kg models fetch --source hub` against a local stand-in for the model hub: a small HTTP
//! server that answers the hub's download route (`/{repo}/resolve/{revision}/{path}`) with the
//! same files (those the PyPI wheels unpacked, so the catalog's sha256 pins hold), honours `Range`,
//! and cuts the first download of the GGUF short. The first fetch fails and says to fetch again;
//! the second resumes where the first stopped (a `Range` request) and verifies the whole file. A
//! file served with other bytes is refused by its pin and never put in place.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_models::{catalog, model_for_tests};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// Bytes of the first GGUF download before the stand-in hangs up.
const CUT_AFTER: u64 = 10 << 20;

/// What the stand-in serves per URL path, and what it was asked.
struct Hub {
    files: HashMap<String, Vec<u8>>,
    /// `(path, Range header)` per request.
    requests: Mutex<Vec<(String, Option<String>)>>,
    cut_once: Mutex<Option<String>>,
}

fn serve(hub: Arc<Hub>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let hub = hub.clone();
            std::thread::spawn(move || answer(&hub, stream.unwrap()));
        }
    });
    url
}

fn answer(hub: &Hub, mut stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let path = first.split_whitespace().nth(1).unwrap_or("").to_owned();
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("range")
        {
            range = Some(value.trim().to_owned());
        }
    }
    hub.requests.lock().unwrap().push((path.clone(), range.clone()));
    let Some(body) = hub.files.get(&path) else {
        let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        return;
    };
    let from: usize = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let rest = &body[from.min(body.len())..];
    let head = if from > 0 {
        format!(
            "HTTP/1.1 206 Partial Content\r\ncontent-length: {}\r\ncontent-range: bytes {from}-{}/{}\r\nconnection: close\r\n\r\n",
            rest.len(),
            body.len() - 1,
            body.len()
        )
    } else {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            rest.len()
        )
    };
    stream.write_all(head.as_bytes()).unwrap();
    let cut = hub.cut_once.lock().unwrap().take_if(|p| *p == path).is_some();
    let sent = if cut { &rest[..CUT_AFTER as usize] } else { rest };
    let _ = stream.write_all(sent);
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn fetch(models: &std::path::Path, hub: &str, name: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chatty-kg"))
        .args(["models", "fetch", name, "--source", "hub", "--hub-url", hub])
        .env("CHATTY_KG_MODELS", models)
        .env("XDG_CONFIG_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("HF_TOKEN")
        .output()
        .unwrap()
}

fn read(path: PathBuf) -> Vec<u8> {
    let mut bytes = Vec::new();
    std::fs::File::open(path).unwrap().read_to_end(&mut bytes).unwrap();
    bytes
}

#[test]
fn a_hub_fetch_resumes_after_a_cut_and_refuses_bytes_that_miss_the_pin() {
    let Some(gguf) = model_for_tests(catalog::SMALL_CHAT_MODEL) else {
        return;
    };
    let Some(minilm) = model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL) else {
        return;
    };
    let small = catalog::find(catalog::SMALL_CHAT_MODEL).unwrap();
    let embedding = catalog::find(catalog::DEFAULT_EMBEDDING_MODEL).unwrap();
    let route = |spec: &catalog::ModelSpec, file: &catalog::ModelFile| {
        format!("/{}/resolve/main/{}", spec.hub_repo, file.hub_path)
    };
    let gguf_route = route(small, &small.files[0]);
    let mut files = HashMap::from([(gguf_route.clone(), read(gguf))]);
    for file in embedding.files {
        let mut bytes = read(minilm.join(file.name));
        if file.name == "config.json" {
            // Another upload of the same name and size: not the pinned bytes.
            let last = bytes.len() - 1;
            bytes[last] ^= 0x01;
        }
        files.insert(route(embedding, file), bytes);
    }
    let hub = Arc::new(Hub {
        files,
        requests: Mutex::new(Vec::new()),
        cut_once: Mutex::new(Some(gguf_route.clone())),
    });
    let url = serve(hub.clone());
    let models = tempfile::tempdir().unwrap();

    let cut = fetch(models.path(), &url, catalog::SMALL_CHAT_MODEL);
    let log = String::from_utf8_lossy(&cut.stderr);
    assert!(!cut.status.success(), "{log}");
    assert!(log.contains("fetch again to resume"), "{log}");
    let dir = models.path().join(small.name);
    let partial = dir.join(format!("{}.partial", small.files[0].name));
    assert_eq!(std::fs::metadata(&partial).unwrap().len(), CUT_AFTER, "{log}");
    assert!(
        !dir.join(small.files[0].name).exists(),
        "a cut file is never put in place"
    );

    let resumed = fetch(models.path(), &url, catalog::SMALL_CHAT_MODEL);
    let log = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{log}");
    assert!(log.contains("100%") && log.contains("resumed at 10 MB"), "{log}");
    let requests = hub.requests.lock().unwrap().clone();
    assert_eq!(
        requests,
        [
            (gguf_route.clone(), None),
            (gguf_route, Some(format!("bytes={CUT_AFTER}-")))
        ]
    );
    let verify = Command::new(env!("CARGO_BIN_EXE_chatty-kg"))
        .args(["models", "verify", catalog::SMALL_CHAT_MODEL])
        .env("CHATTY_KG_MODELS", models.path())
        .env("XDG_CONFIG_HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", String::from_utf8_lossy(&verify.stderr));
    assert!(!partial.exists());

    let refused = fetch(models.path(), &url, catalog::DEFAULT_EMBEDDING_MODEL);
    let log = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{log}");
    assert!(log.contains("checksum mismatch for config.json"), "{log}");
    let dir = models.path().join(embedding.name);
    assert!(!dir.join("config.json").exists() && !dir.join("config.json.partial").exists());
}
