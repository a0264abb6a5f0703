//! The `chatty-kg` binary as a user runs it: load the bundled MetaQA KB, search, query.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn chatty(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chatty-kg"))
        .args(args)
        .env_remove("CHATTY_KG_STORE")
        .env_remove("CHATTY_KG_ENDPOINT")
        .env_remove("CHATTY_KG_CONFIG")
        .env("XDG_CONFIG_HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The bundled KB, loaded once through the CLI.
fn metaqa_store() -> &'static Path {
    static STORE: OnceLock<PathBuf> = OnceLock::new();
    STORE.get_or_init(|| {
        let store = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-metaqa-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&store);
        let kb = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/metaqa-kb.nt.gz");
        let output = chatty(&["load", "--store", store.to_str().unwrap(), kb.to_str().unwrap()]);
        let report = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(output.status.success(), "{report}");
        assert!(report.contains("172533 triples"), "{report}");
        store
    })
}

#[test]
fn tom_hanks_is_found_first_in_the_bundled_kb() {
    let store = metaqa_store().to_str().unwrap();
    let out = stdout(&chatty(&["entities", "--store", store, "tom hanks"]));
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("http://metaqa.example.org/entity/Tom_Hanks\tTom Hanks")
    );
    assert_eq!(
        lines.next(),
        Some("http://metaqa.example.org/entity/tom_hanks\ttom hanks")
    );
    let out = stdout(&chatty(&["entities", "--store", store, "--limit", "3", "hanks"]));
    assert_eq!(out.lines().count(), 3);
    assert!(out.starts_with("http://metaqa.example.org/entity/Tom_Hanks\t"), "{out}");
}

#[test]
fn sparql_prints_tsv_and_json() {
    let store = metaqa_store().to_str().unwrap();
    let query = "SELECT ?d WHERE { <http://metaqa.example.org/entity/Forrest_Gump> <http://metaqa.example.org/relation/directed_by> ?d }";
    let out = stdout(&chatty(&["sparql", "--store", store, query]));
    assert_eq!(out, "?d\n<http://metaqa.example.org/entity/Robert_Zemeckis>\n");
    let out = stdout(&chatty(&["sparql", "--store", store, "--json", query]));
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        json["results"]["bindings"][0]["d"]["value"],
        "http://metaqa.example.org/entity/Robert_Zemeckis"
    );
    let out = stdout(&chatty(&["sparql", "--store", store, "ASK { ?s ?p ?o }"]));
    assert_eq!(out.trim(), "true");
}

#[test]
fn errors_are_one_clear_line() {
    let store = metaqa_store().to_str().unwrap();
    let output = chatty(&["sparql", "--store", store, "DELETE WHERE { ?s ?p ?o }"]);
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("only SELECT and ASK"), "{err}");

    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-store");
    let output = chatty(&["entities", "--store", missing.to_str().unwrap(), "tom"]);
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("chatty-kg load"), "{err}");

    let output = chatty(&["entities", "--endpoint", "http://127.0.0.1:9/sparql", "tom"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("unreachable"));
}
