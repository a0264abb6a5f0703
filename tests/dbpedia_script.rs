//! `scripts/dbpedia.sh all`, end to end on a stand-in for a DBpedia release: a local HTTP server
//! (Python's http.server) serves two small `.ttl.bz2` files at the release archive's paths
//! (`2016-10/core-i18n/en/…`); the script downloads them, bulk-loads them into a private Virtuoso
//! and runs `chatty-kg eval --endpoint` on a QALD-JSON file whose answers are in them. A second
//! fetch finds the files there and downloads nothing. What this cannot run here is the real
//! release (no internet): its size and times are estimates in docs/evaluation.md.
//!
//! Needs virtuoso-t, bzip2 and the models; skips without them unless `CHATTY_KG_REQUIRE_VIRTUOSO=1`.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_models::{catalog, model_for_tests};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const LABELS: &str = "<http://dbpedia.org/resource/Alpha_Film> <http://www.w3.org/2000/01/rdf-schema#label> \"Alpha Film\"@en .\n\
<http://dbpedia.org/resource/Beta_Film> <http://www.w3.org/2000/01/rdf-schema#label> \"Beta Film\"@en .\n\
<http://dbpedia.org/resource/Dana_Reyes> <http://www.w3.org/2000/01/rdf-schema#label> \"Dana Reyes\"@en .\n\
<http://dbpedia.org/resource/Eli_Stone> <http://www.w3.org/2000/01/rdf-schema#label> \"Eli Stone\"@en .\n";
const OBJECTS: &str = "<http://dbpedia.org/resource/Alpha_Film> <http://dbpedia.org/ontology/director> <http://dbpedia.org/resource/Dana_Reyes> .\n\
<http://dbpedia.org/resource/Beta_Film> <http://dbpedia.org/ontology/director> <http://dbpedia.org/resource/Eli_Stone> .\n\
<http://dbpedia.org/resource/Beta_Film> <http://dbpedia.org/ontology/starring> <http://dbpedia.org/resource/Dana_Reyes> .\n";

struct Stop(Child);

impl Drop for Stop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_dbpedia_script_fetches_loads_and_evaluates_a_release() {
    let has = |program: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("virtuoso-t") || !has("bzip2") {
        assert!(
            std::env::var("CHATTY_KG_REQUIRE_VIRTUOSO").as_deref() != Ok("1"),
            "CHATTY_KG_REQUIRE_VIRTUOSO=1 but virtuoso-t or bzip2 is missing"
        );
        eprintln!("skipped: needs virtuoso-t and bzip2");
        return;
    }
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("mirror/2016-10/core-i18n/en");
    std::fs::create_dir_all(&release).unwrap();
    for (name, text) in [("labels_en.ttl", LABELS), ("mappingbased_objects_en.ttl", OBJECTS)] {
        std::fs::write(release.join(name), text).unwrap();
        assert!(
            Command::new("bzip2")
                .arg(release.join(name))
                .status()
                .unwrap()
                .success()
        );
    }
    // The release archive's stand-in; it prints its port on its first line.
    let mut server = Command::new("python3")
        .args([
            "-u",
            "-c",
            "import http.server, socketserver, sys\n\
             h = http.server.SimpleHTTPRequestHandler\n\
             with socketserver.TCPServer(('127.0.0.1', 0), h) as s:\n\
             \x20   print(s.server_address[1], flush=True)\n\
             \x20   s.serve_forever()\n",
        ])
        .current_dir(dir.path().join("mirror"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut port = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let _server = Stop(server);
    let downloads = format!("http://127.0.0.1:{}", port.trim());

    let questions = dir.path().join("qald-mini.json");
    let question = |id: &str, text: &str, answer: &str| {
        serde_json::json!({
            "id": id,
            "answertype": "resource",
            "question": [{"language": "en", "string": text}],
            "query": {"sparql": ""},
            "answers": [{"head": {"vars": ["uri"]}, "results": {"bindings": [{"uri": {"type": "uri", "value": answer}}]}}],
        })
    };
    let qald = serde_json::json!({"questions": [
        question("1", "Who directed Alpha Film?", "http://dbpedia.org/resource/Dana_Reyes"),
        question("2", "Who directed Beta Film?", "http://dbpedia.org/resource/Eli_Stone"),
    ]});
    std::fs::write(&questions, qald.to_string()).unwrap();
    // No model call is needed: the scripted model, with no rules, would fail any that is made.
    let script = dir.path().join("script.json");
    std::fs::write(&script, "[]").unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, format!("[llm]\nbackend = \"scripted\"\nscript = {script:?}\n")).unwrap();

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dbpedia.sh");
    let work = dir.path().join("work");
    let run = |args: &[&str]| {
        Command::new("bash")
            .arg(&script)
            .args(args)
            .env("DBPEDIA_DOWNLOADS", &downloads)
            .env("DBPEDIA_FILES", "labels_en.ttl.bz2 mappingbased_objects_en.ttl.bz2")
            .env("CHATTY_KG_BIN", env!("CARGO_BIN_EXE_chatty-kg"))
            .env("CHATTY_KG_CONFIG", &config)
            .env("XDG_CONFIG_HOME", env!("CARGO_TARGET_TMPDIR"))
            .output()
            .unwrap()
    };
    let all = run(&["all", "2016-10", work.to_str().unwrap(), questions.to_str().unwrap()]);
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&all.stdout),
        String::from_utf8_lossy(&all.stderr)
    );
    assert!(all.status.success(), "{log}");
    let summary: serde_json::Value = serde_json::from_slice(
        &std::fs::read(work.join("reports/qald-mini/summary.json")).unwrap_or_else(|e| panic!("{e}\n{log}")),
    )
    .unwrap();
    let text = summary.to_string();
    assert!(text.contains("\"questions\":2"), "{text}");
    let report = std::fs::read_to_string(work.join("reports/qald-mini/report.md")).unwrap();
    assert!(
        report.contains("| qald-mini | 2 | 1.000 | 1.000 | 1.000 | 1.000 |"),
        "{report}\n{log}"
    );

    // Fetched once: a second fetch downloads nothing.
    let again = run(&["fetch", "2016-10", work.join("files").to_str().unwrap()]);
    let log = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{log}");
    assert_eq!(log.matches("already here").count(), 2, "{log}");
}
