//! The `chatty-kg` binary as a user runs it: load the bundled MetaQA KB, search, query, ask and
//! chat. Asking needs the models (`chatty-kg models fetch --all`); without them those tests skip
//! with a message, unless `CHATTY_KG_REQUIRE_MODELS=1` (CI) turns the skip into a failure.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use chatty_kg_models::{catalog, model_for_tests};
use std::io::Write;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_chatty-kg"));
    command
        .args(args)
        .env_remove("CHATTY_KG_STORE")
        .env_remove("CHATTY_KG_ENDPOINT")
        .env_remove("CHATTY_KG_CONFIG")
        .env("XDG_CONFIG_HOME", env!("CARGO_TARGET_TMPDIR"));
    command
}

fn chatty(args: &[&str]) -> Output {
    command(args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// A config file in `dir` whose LLM is the scripted model with these rules.
fn scripted_config(dir: &Path, script: &serde_json::Value) -> PathBuf {
    let script_file = dir.join("script.json");
    std::fs::write(&script_file, script.to_string()).unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nbackend = \"scripted\"\nscript = {:?}\n",
            script_file.to_str().unwrap()
        ),
    )
    .unwrap();
    config
}

/// `chatty-kg chat` with `args`, `input` typed into it: what it printed (it must succeed).
fn chat(args: &[&str], input: &str) -> String {
    let mut all = vec!["chat"];
    all.extend_from_slice(args);
    let mut child = command(&all)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    stdout(&child.wait_with_output().unwrap())
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

/// Queries that passed the guard and ended the process (issue 46: a 4 MiB value copied into
/// every row, a sort of a cross product, 75 chained BINDs, 100 joined groups or OPTIONALs), run
/// from the CLI under a 2 GB address-space limit: each is evaluated in a worker process and ends
/// with exit code 1 and one line saying why, never an abort; a plain query still answers.
#[test]
fn user_written_queries_that_exhaust_their_worker_end_with_an_error() {
    let store = metaqa_store();
    let config = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-attacks-{}.toml", std::process::id()));
    std::fs::write(
        &config,
        format!("[kgs.default]\nstore = {store:?}\n[kgs.default.graph]\nquery_timeout_secs = 5\n"),
    )
    .unwrap();
    let limited = |query: &str| {
        Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 2097152 && exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_chatty-kg"))
            .args(["--config", config.to_str().unwrap(), "sparql", "--kg", "default", query])
            .env_remove("CHATTY_KG_CONFIG")
            .output()
            .unwrap()
    };
    for (name, query) in common::attack_queries() {
        let output = limited(&query);
        let err = String::from_utf8_lossy(&output.stderr);
        match output.status.code() {
            // Answered within the limits (the chained BINDs' product overflows to unbound).
            Some(0) => assert!(!output.stdout.is_empty(), "{name}: {output:?}"),
            Some(1) => assert!(err.starts_with("error: "), "{name}: {err}"),
            other => panic!("{name}: exit {other:?} (an abort is 134): {err}"),
        }
    }
    let output = limited("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }");
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("172533"), "{output:?}");
}

#[test]
fn errors_are_one_clear_line() {
    let store = metaqa_store().to_str().unwrap();
    let output = chatty(&["sparql", "--store", store, "DELETE WHERE { ?s ?p ?o }"]);
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("only SELECT and ASK"), "{err}");

    // A 936-byte query that would grow one string to 4 GiB, under an 8 GB address-space limit:
    // refused while it runs, with exit code 1, not an abort.
    let bounded = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 8000000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_chatty-kg"))
        .args(["sparql", "--store", store, &common::doubling_query(28)])
        .output()
        .unwrap();
    assert_eq!(bounded.status.code(), Some(1), "{bounded:?}");
    let err = String::from_utf8_lossy(&bounded.stderr);
    assert!(err.contains("builds a value longer than"), "{err}");

    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-store");
    let output = chatty(&["entities", "--store", missing.to_str().unwrap(), "tom"]);
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("chatty-kg load"), "{err}");

    let output = chatty(&["entities", "--endpoint", "http://127.0.0.1:9/sparql", "tom"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("unreachable"));
}

/// A process reading a store (here `sparql` waiting for its query on stdin, as a server would
/// for questions) keeps `load` out, and `load` says what to do; once the reader is gone it works.
#[test]
fn load_refuses_a_store_another_command_has_open() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let store = store.to_str().unwrap();
    let movies = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/movies.ttl");
    let movies = movies.to_str().unwrap();
    stdout(&chatty(&["load", "--store", store, movies]));

    let mut reader = command(&["sparql", "--store", store, "-"])
        .env("CHATTY_KG_LOG", "chatty_kg_graph=debug")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = std::io::BufReader::new(reader.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("store open") {
        line.clear();
        let read = std::io::BufRead::read_line(&mut log, &mut line).unwrap();
        assert_ne!(read, 0, "the reader exited");
    }

    let output = chatty(&["load", "--store", store, movies]);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{err}");
    assert!(err.contains("in use by another chatty-kg process"), "{err}");
    assert!(err.contains("stop `chatty-kg serve`"), "{err}");
    let output = chatty(&["index", "--store", store]);
    assert!(!output.status.success());

    drop(reader.stdin.take());
    reader.wait().unwrap();
    stdout(&chatty(&["load", "--store", store, movies]));
}

/// `load` ends by computing the schema profile and saving it beside the store; `profile` prints
/// it (from the saved file), as a table or JSON.
#[test]
fn load_profiles_the_graph_and_profile_prints_it() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let movies = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/movies.ttl");
    let output = chatty(&["load", "--store", store.to_str().unwrap(), movies.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("schema profile: 8 predicates, 2 classes"), "{stderr}");
    assert!(store.join("profile.json").is_file());
    let table = stdout(&chatty(&["profile", "--store", store.to_str().unwrap()]));
    assert!(table.starts_with("8 predicates, 29 triples, 2 classes"), "{table}");
    assert!(
        table.contains("http://example.org/relation/starredActors\tstarred actors\t5\t5\t"),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&chatty(&[
        "profile",
        "--json",
        "--store",
        store.to_str().unwrap(),
    ])))
    .unwrap();
    assert_eq!(json["classes"][0]["label"], "Film", "{json:#}");
    assert_eq!(json["classes"][0]["instances"], 2, "{json:#}");
}

/// The real models (SmolLM2 for speed, MiniLM) answer from the bundled KB, and the JSON
/// explanation has every documented field. The entity is a label in the question and one path
/// fits clearly, so the chat model is loaded but not asked.
#[test]
fn ask_answers_from_the_bundled_kb_with_the_embedded_model() {
    if model_for_tests(catalog::SMALL_CHAT_MODEL).is_none()
        || model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none()
    {
        return;
    }
    let store = metaqa_store().to_str().unwrap();
    let args = [
        "ask",
        "--json",
        "--store",
        store,
        "--model",
        catalog::SMALL_CHAT_MODEL,
        "Who directed Ratcatcher?",
    ];
    let out = stdout(&chatty(&args));
    let e: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(e["answers"][0]["label"], "Lynne Ramsay", "{e:#}");
    assert_eq!(e["answers"].as_array().unwrap().len(), 1, "{e:#}");
    assert_eq!(e["entities"][0]["iri"], "http://metaqa.example.org/entity/Ratcatcher");
    for field in [
        "answers",
        "resolved_question",
        "qir",
        "entities",
        "relations",
        "form",
        "paths",
        "path_choice",
        "path_search",
        "sparql",
        "timings",
        "llm",
    ] {
        assert!(!e[field].is_null(), "{field} missing: {e:#}");
    }
    assert_eq!(e["llm"]["calls"].as_u64(), Some(0), "{e:#}");
    assert_eq!(e["paths"][0]["text"], "Ratcatcher → directed by", "{e:#}");
    assert!(
        e["sparql"][0]["sparql"].as_str().unwrap().contains("directed_by"),
        "{e:#}"
    );
}

/// `chat` keeps the dialogue: the second question's pronoun is resolved from the first answer,
/// and `/explain` shows how. The model is the scripted one with nothing scripted: the dialogue
/// decides the referent (Lynne Ramsay, a "who" answer, is a person; Ratcatcher is not known to
/// be one) and the graph the rest, so no model call is made.
#[test]
fn chat_resolves_a_pronoun_and_explains() {
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let store = metaqa_store().to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = scripted_config(dir.path(), &serde_json::json!([]));
    let out = chat(
        &["--config", config.to_str().unwrap(), "--store", store],
        "Who directed Ratcatcher?\nWhat else did she direct?\n/explain\n/quit\n",
    );
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("Lynne Ramsay"), "{out}");
    let films = lines.next().unwrap();
    for film in ["Morvern Callar", "We Need to Talk About Kevin"] {
        assert!(films.contains(film), "{films}");
    }
    // "Else": the film the first question named is not among them, and the explanation says so.
    assert!(!films.contains("Ratcatcher"), "{films}");
    assert!(
        out.contains("\"else\": left out what the previous turn named: Ratcatcher"),
        "{out}"
    );
    assert!(out.contains("question: What else did Lynne Ramsay direct?"), "{out}");
    assert!(out.contains("referent: \"she\" (Person) → Lynne Ramsay"), "{out}");
    assert!(out.contains("sparql ("), "{out}");
}

/// Two constraints on one answer (issue 47) on the bundled KB: "movies starring X directed by Y"
/// meets at the movies (each anchor with its own relation), not at a person two hops away; and
/// the same restriction in dialogue, over the first turn's answers. The graph decides both: the
/// scripted model has nothing scripted, so no call is made.
#[test]
fn two_constraints_on_one_answer_alone_and_as_a_restriction() {
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let store = metaqa_store().to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = scripted_config(dir.path(), &serde_json::json!([]));
    let config = config.to_str().unwrap();
    let sorted = |line: &str| {
        let line = line.split(" (").next().unwrap_or_default();
        let mut films: Vec<String> = line.split(", ").map(str::to_owned).collect();
        films.sort();
        films
    };
    let out = stdout(&chatty(&[
        "ask",
        "--config",
        config,
        "--store",
        store,
        "Which movies starring Tom Hanks were directed by Robert Zemeckis?",
    ]));
    assert_eq!(sorted(out.trim()), ["Forrest Gump", "The Polar Express"], "{out}");
    let out = chat(
        &["--config", config, "--store", store],
        "Which movies did Tom Hanks star in?\nWhich of them did Robert Zemeckis direct?\n/explain\n/quit\n",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with("(31 answers)"), "{out}");
    assert_eq!(sorted(lines[1]), ["Forrest Gump", "The Polar Express"], "{out}");
    assert!(out.contains("referent: \"of them\" (Set)"), "{out}");
}

/// `chat` asks which "Crash" is meant (two films of that label both have a director), lists
/// them numbered, and takes "2" as the answer; `/explain` shows the choice.
#[test]
fn chat_asks_which_of_two_homonyms_and_takes_a_number() {
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/homonyms.ttl");
    stdout(&chatty(&[
        "load",
        "--store",
        store.to_str().unwrap(),
        fixture.to_str().unwrap(),
    ]));
    let config = scripted_config(dir.path(), &serde_json::json!([]));
    let out = chat(
        &["--config", config.to_str().unwrap(), "--store", store.to_str().unwrap()],
        "Who directed Crash?\n2\n/explain\n/quit\n",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "\u{201c}Crash\u{201d} can mean 2 things in the knowledge graph:",
        "{out}"
    );
    assert!(
        lines[1].starts_with("1. Crash (film; ") && lines[2].starts_with("2. Crash (film; "),
        "{out}"
    );
    assert_eq!(lines[3], "Which one do you mean?", "{out}");
    let director = if lines[2].contains("1996") {
        "David Cronenberg"
    } else {
        "Paul Haggis"
    };
    assert_eq!(lines[4], director, "{out}");
    assert!(out.contains("question: Who directed Crash?"), "{out}");
    assert!(out.contains("your choice: \"Crash\" → option 2"), "{out}");
}

/// The default embedded model (Qwen2.5-Coder 0.5B) and MiniLM in a three-turn `chat` on the
/// bundled KB whose third turn refers to the first turn's answer, across a second turn about
/// something else.
#[test]
fn a_three_turn_chat_with_the_real_model_refers_back_to_the_first_answer() {
    if model_for_tests(catalog::DEFAULT_CHAT_MODEL).is_none()
        || model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none()
    {
        return;
    }
    let store = metaqa_store().to_str().unwrap();
    let out = chat(
        &["--store", store, "--model", catalog::DEFAULT_CHAT_MODEL],
        "Who directed Ratcatcher?\nWhen was Ratcatcher released?\nWhat else did she direct?\n/explain\n/quit\n",
    );
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("Lynne Ramsay"), "{out}");
    assert_eq!(lines.next(), Some("1999"), "{out}");
    let films = lines.next().unwrap();
    for film in ["Morvern Callar", "We Need to Talk About Kevin"] {
        assert!(films.contains(film), "{films}");
    }
    assert!(out.contains("question: What else did Lynne Ramsay direct?"), "{out}");
}

/// `eval --kg-from-dialogues`: the KG is the union of a Chatty-Gen Subgraph file's triples, the
/// seed named by its seed_label and the rest by their IRIs; both modes run on it and the report
/// gives retention and what a follow-up costs.
#[test]
fn eval_builds_the_kg_of_a_dialogue_file_and_measures_retention() {
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("subgraph.json");
    let seed = "http://example.org/resource/Antony_Cheng";
    let dialogue = serde_json::json!({"data": [{
        "seed_entity": seed, "seed_label": "Antony Cheng",
        "dialogue": ["What is the birth place of Antony Cheng?", "What is his height?"],
        "original": ["What is the birth place of Antony Cheng?", "What is the height of Antony Cheng?"],
        "queries": [
            format!("SELECT ?p WHERE {{ <{seed}> <http://example.org/ontology/birthPlace> ?p }}"),
            format!("SELECT ?h WHERE {{ <{seed}> <http://example.org/ontology/height> ?h }}")
        ],
        "triples": [
            [[seed, "http://example.org/ontology/birthPlace", "http://example.org/resource/Vancouver"]],
            [[seed, "http://example.org/ontology/height", "1.67"]]
        ]
    }]});
    std::fs::write(&file, dialogue.to_string()).unwrap();
    let config = scripted_config(dir.path(), &serde_json::json!([]));
    let out = dir.path().join("results");
    let output = chatty(&[
        "eval",
        "--config",
        config.to_str().unwrap(),
        file.to_str().unwrap(),
        "--kg-from-dialogues",
        "--mode",
        "both",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 dialogues, 2 triples, 2 vertices (1 named by seed_label, 1 by their IRI)"),
        "{stderr}"
    );
    for mode in ["dialogue", "standalone"] {
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(mode).join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["overall"]["mean_per_question_f1"], 1.0, "{mode}: {summary}");
        assert_eq!(summary["follow_ups"]["questions"], 1, "{mode}: {summary}");
        assert_eq!(summary["follow_ups"]["llm_calls"], 0.0, "{mode}: {summary}");
    }
    let records = std::fs::read_to_string(out.join("dialogue").join("answers.jsonl")).unwrap();
    assert!(records.contains("What is Antony Cheng's height?"), "{records}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("**Retention**") && report.contains("Per follow-up"),
        "{report}"
    );
}

/// `eval --kb`: a PathQuestion-style name-triple KB is loaded into a temporary store, the
/// questions are answered on it (scripted LLM, real MiniLM), and the results directory holds the
/// records, both F1s, QALD-JSON, the report and its SVG plots.
#[test]
fn eval_loads_a_name_triple_kb_on_the_fly_and_reports() {
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kb = dir.path().join("2H-kb.txt");
    std::fs::write(
        &kb,
        "frederica_of_mecklenburg-strelitz\tspouse\ternest_augustus_i_of_hanover\n\
         ernest_augustus_i_of_hanover\tnationality\tunited_kingdom\n\
         ernest_augustus_i_of_hanover\tplace_of_birth\tbuckingham_house\n",
    )
    .unwrap();
    let questions = dir.path().join("PQ-2H.txt");
    let path = "ernest_augustus_i_of_hanover";
    std::fs::write(
        &questions,
        format!(
            "which nationality is ernest_augustus_i_of_hanover ?\tunited_kingdom(united_kingdom/)\t{path}#nationality#united_kingdom\n\
             where was ernest_augustus_i_of_hanover born ?\tkensington_palace(kensington_palace/)\t{path}#place_of_birth#kensington_palace\n"
        ),
    )
    .unwrap();
    let qir = |relation: &str| {
        serde_json::json!({"entities": ["ernest augustus i of hanover"], "unknowns": ["?answer"],
            "relations": [relation], "triples": [["ernest augustus i of hanover", relation, "?answer"]],
            "type": "list", "order": null})
        .to_string()
    };
    let script = serde_json::json!([
        {"agent": "qir", "contains": "which nationality is", "replies": [qir("nationality")]},
        {"agent": "qir", "contains": "where was", "replies": [qir("place of birth")]}
    ]);
    let config = scripted_config(dir.path(), &script);
    let out = dir.path().join("results");
    let output = chatty(&[
        "eval",
        "--config",
        config.to_str().unwrap(),
        questions.to_str().unwrap(),
        "--kb",
        kb.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("3 triples, 4 entities, 3 relations"), "{stderr}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["questions"], 2);
    // One right (F1 1), one answered with the KB's buckingham house against a gold it lacks (F1 0).
    assert_eq!(summary["overall"]["mean_per_question_f1"], 0.5, "{summary}");
    assert_eq!(summary["failures"]["answered but wrong"], 1, "{summary}");
    let records = std::fs::read_to_string(out.join("answers.jsonl")).unwrap();
    assert!(
        records.contains("\"united kingdom\"") && records.contains("\"buckingham house\""),
        "{records}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("(latency_by_stage.svg)"), "{report}");
    let svg = std::fs::read_to_string(out.join("latency_by_stage.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("understanding"), "{svg}");
    assert!(out.join("failures.svg").exists() && out.join("answers.qald.json").exists());
    // The temporary store is gone with the run.
    let store = stderr
        .split("loaded into a temporary store ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(store.contains("chatty-kg-kb-") && !Path::new(store).exists(), "{store}");
}

#[test]
fn build_dialogues_needs_the_metaqa_dev_files() {
    let dir = tempfile::tempdir().unwrap();
    let output = chatty(&[
        "build-dialogues",
        "--metaqa",
        dir.path().to_str().unwrap(),
        "--out",
        dir.path().join("d.json").to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("1-hop/qa_dev.txt"), "{stderr}");
    assert!(!dir.path().join("d.json").exists());
}

/// `[embeddings] backend = "openai"`: relation linking with vectors from an embedding server (a
/// local one serving all-MiniLM-L6-v2's own vectors) answers as the in-process model does; the
/// lean build's way to rank relations.
#[tokio::test(flavor = "multi_thread")]
async fn ask_ranks_relations_with_embeddings_from_a_server() {
    use chatty_kg_embed::{Embedder, MiniLmEmbedder};
    use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate, matchers::path};
    let Some(dir) = model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL) else {
        return;
    };
    struct Served(MiniLmEmbedder);
    impl Respond for Served {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
            let texts: Vec<&str> = body["input"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            let data: Vec<serde_json::Value> = self
                .0
                .embed(&texts)
                .unwrap()
                .into_iter()
                .enumerate()
                .map(|(index, v)| serde_json::json!({"index": index, "embedding": v}))
                .collect();
            ResponseTemplate::new(200).set_body_json(serde_json::json!({"data": data}))
        }
    }
    let server = MockServer::start().await;
    Mock::given(path("/v1/embeddings"))
        .respond_with(Served(MiniLmEmbedder::load(&dir).unwrap()))
        .mount(&server)
        .await;
    let tmp = tempfile::tempdir().unwrap();
    let config = scripted_config(tmp.path(), &serde_json::json!([]));
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[embeddings]\nbackend = \"openai\"\n[embeddings.openai]\nbase_url = \"{}/v1\"\n",
        server.uri()
    ));
    std::fs::write(&config, text).unwrap();
    let store = metaqa_store().to_str().unwrap().to_owned();
    let config = config.to_str().unwrap().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        chatty(&[
            "ask",
            "--store",
            &store,
            "--config",
            &config,
            "--json",
            "Who directed Ratcatcher?",
        ])
    })
    .await
    .unwrap();
    let explanation: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(explanation["text"], "Lynne Ramsay", "{explanation}");
    assert!(
        !server.received_requests().await.unwrap().is_empty(),
        "the vectors came from the server"
    );
}

/// `suggest` makes first questions from the bundled KB's own predicates and entities, and its
/// QALD-JSON (each question's triple pattern as the gold query) replays through `eval`: every
/// suggested question is answered from the graph, with no model call.
#[test]
fn suggested_questions_are_answered_from_the_graph() {
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let store = metaqa_store().to_str().unwrap();
    let listed = stdout(&chatty(&["suggest", "--store", store, "--count", "6"]));
    let questions: Vec<&str> = listed.lines().collect();
    assert_eq!(questions.len(), 6, "{listed}");
    assert!(questions.iter().all(|q| q.ends_with('?')), "{listed}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("suggested.json");
    let qald = stdout(&chatty(&["suggest", "--store", store, "--count", "6", "--qald"]));
    std::fs::write(&file, &qald).unwrap();
    let config = scripted_config(dir.path(), &serde_json::json!([]));
    let out = dir.path().join("results");
    let output = chatty(&[
        "eval",
        "--config",
        config.to_str().unwrap(),
        "--store",
        store,
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["questions"], 6, "{summary}");
    assert_eq!(summary["overall"]["mean_per_question_f1"], 1.0, "{summary}");
}
