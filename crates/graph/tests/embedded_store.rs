//! Behaviour only the embedded store has: loading files of every format, atomic loads, typed
//! errors for malformed RDF and missing stores, query timeouts.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_graph::{EmbeddedStore, GraphError, GraphSettings, KnowledgeGraph, QueryResults, RdfFile};
use std::io::Write;
use std::path::Path;

fn write(dir: &Path, name: &str, content: &str) -> RdfFile {
    let path = dir.join(name);
    if name.ends_with(".gz") {
        let mut encoder =
            flate2::write::GzEncoder::new(std::fs::File::create(&path).unwrap(), flate2::Compression::fast());
        encoder.write_all(content.as_bytes()).unwrap();
        encoder.finish().unwrap();
    } else if name.ends_with(".bz2") {
        let mut encoder =
            bzip2::write::BzEncoder::new(std::fs::File::create(&path).unwrap(), bzip2::Compression::fast());
        encoder.write_all(content.as_bytes()).unwrap();
        encoder.finish().unwrap();
    } else if name.ends_with(".zst") {
        let compressed =
            ruzstd::encoding::compress_to_vec(content.as_bytes(), ruzstd::encoding::CompressionLevel::Fastest);
        std::fs::write(&path, compressed).unwrap();
    } else {
        std::fs::write(&path, content).unwrap();
    }
    RdfFile::new(path).unwrap()
}

const LABEL: &str = "<http://www.w3.org/2000/01/rdf-schema#label>";

/// A scratch directory with a store at `<tmp>/store` holding one labelled entity, "Alpha".
fn store_with_alpha() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let good = write(tmp.path(), "good.nt", &format!("<http://e/a> {LABEL} \"Alpha\" .\n"));
    EmbeddedStore::load(&store, &[good], &GraphSettings::default(), false).unwrap();
    (tmp, store)
}

#[tokio::test]
async fn loads_every_format_plain_and_compressed() {
    let tmp = tempfile::tempdir().unwrap();
    let files = vec![
        write(tmp.path(), "a.nt", &format!("<http://e/a> {LABEL} \"Alpha\" .\n")),
        write(tmp.path(), "b.nt.gz", &format!("<http://e/b> {LABEL} \"Beta\" .\n")),
        write(
            tmp.path(),
            "c.ttl",
            "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n<http://e/c> rdfs:label \"Gamma\" .\n",
        ),
        write(
            tmp.path(),
            "d.rdf",
            r#"<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#">
  <rdf:Description rdf:about="http://e/d"><rdfs:label>Delta</rdfs:label></rdf:Description>
</rdf:RDF>"#,
        ),
        write(
            tmp.path(),
            "e.nq",
            &format!("<http://e/e> {LABEL} \"Epsilon\" <http://e/g> .\n"),
        ),
        write(
            tmp.path(),
            "f.trig.gz",
            &format!("<http://e/g2> {{ <http://e/f> {LABEL} \"Zeta\" . }}\n"),
        ),
        // A relative IRI resolves against the file's own URL.
        write(
            tmp.path(),
            "g.ttl",
            "<rel> <http://www.w3.org/2000/01/rdf-schema#label> \"Eta\" .\n",
        ),
        write(tmp.path(), "h.nt.bz2", &format!("<http://e/h> {LABEL} \"Theta\" .\n")),
        write(
            tmp.path(),
            "i.ttl.zst",
            "<http://e/i> <http://www.w3.org/2000/01/rdf-schema#label> \"Iota\" .\n",
        ),
    ];
    // A .zst of two frames (as pzstd writes, or two files concatenated): both are read.
    let frames: Vec<u8> = [("k", "Kappa"), ("l", "Lambda")]
        .iter()
        .flat_map(|(id, name)| {
            let line = format!("<http://e/{id}> {LABEL} \"{name}\" .\n");
            ruzstd::encoding::compress_to_vec(line.as_bytes(), ruzstd::encoding::CompressionLevel::Fastest)
        })
        .collect();
    std::fs::write(tmp.path().join("j.nt.zst"), frames).unwrap();
    let mut files = files;
    files.push(RdfFile::new(tmp.path().join("j.nt.zst")).unwrap());
    let store = tmp.path().join("store");
    let report = EmbeddedStore::load(&store, &files, &GraphSettings::default(), false).unwrap();
    assert_eq!(report.parsed, 11);
    assert_eq!(report.store_size, 11);
    assert_eq!(report.labels, 11);
    assert!(
        report
            .files
            .iter()
            .all(|(path, n)| *n == 1 || path.ends_with("j.nt.zst") && *n == 2)
    );

    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    for (word, iri) in [
        ("alpha", "http://e/a"),
        ("beta", "http://e/b"),
        ("delta", "http://e/d"),
        ("zeta", "http://e/f"),
        ("theta", "http://e/h"),
        ("iota", "http://e/i"),
        ("lambda", "http://e/l"),
    ] {
        let found = kg.search_entities(word, 5).await.unwrap();
        assert_eq!(found.first().map(|c| c.iri.as_str()), Some(iri), "{word}");
    }
    let eta = kg.search_entities("eta", 1).await.unwrap();
    assert!(
        eta[0].iri.starts_with("file:///") && eta[0].iri.ends_with("/rel"),
        "{eta:?}"
    );
    // Named graphs are queryable.
    let r = kg
        .query_text("ASK { GRAPH <http://e/g2> { <http://e/f> ?p ?o } }")
        .await
        .unwrap();
    assert_eq!(r, QueryResults::Boolean(true));
}

/// A first load counts what the profile needs as it parses; the profile from those counts is the
/// one the whole-graph queries give, and a second load (which does not count) drops the counts.
#[tokio::test]
async fn the_profile_from_a_loads_counts_is_the_profile_from_queries() {
    let tmp = tempfile::tempdir().unwrap();
    let city = "<http://e/City>";
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!(
            "<http://e/c{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> {city} .\n"
        ));
        text.push_str(&format!("<http://e/c{i}> {LABEL} \"City {i}\"@en .\n"));
        if i % 3 == 0 {
            text.push_str(&format!("<http://e/c{i}> {LABEL} \"By {i}\"@nb .\n"));
        }
        text.push_str(&format!(
            "<http://e/c{i}> <http://e/population> \"{}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n",
            i * 1000
        ));
        text.push_str(&format!(
            "<http://e/c{i}> <http://e/twin> <http://e/c{}> .\n",
            (i + 1) % 40
        ));
    }
    text.push_str(&format!(
        "{city} {LABEL} \"city\" .\n<http://e/Town> <http://www.w3.org/2000/01/rdf-schema#subClassOf> {city} .\n"
    ));
    let file = write(tmp.path(), "cities.nt", &text);
    let store = tmp.path().join("store");
    EmbeddedStore::load(&store, std::slice::from_ref(&file), &GraphSettings::default(), false).unwrap();
    assert!(store.join("counts.json").is_file());
    let counted = EmbeddedStore::open(&store, GraphSettings::default())
        .unwrap()
        .profile()
        .await
        .unwrap();
    std::fs::remove_file(store.join("counts.json")).unwrap();
    std::fs::remove_file(store.join("profile.json")).unwrap();
    let queried = EmbeddedStore::open(&store, GraphSettings::default())
        .unwrap()
        .profile()
        .await
        .unwrap();
    assert_eq!(counted, queried);
    assert_eq!(
        counted.classes.first().map(|c| (c.iri.as_str(), c.instances)),
        Some(("http://e/City", 40))
    );
    let labels = counted.conventions.name_predicates.first().unwrap();
    assert_eq!(labels.languages.get("nb"), Some(&14));

    let more = write(tmp.path(), "more.nt", &format!("<http://e/x> {LABEL} \"X\" .\n"));
    EmbeddedStore::load(&store, &[file, more], &GraphSettings::default(), false).unwrap();
    assert!(!store.join("counts.json").exists());
}

#[tokio::test]
async fn syntax_error_names_file_and_line_and_keeps_nothing() {
    let (tmp, store) = store_with_alpha();

    let more = write(tmp.path(), "more.nt", &format!("<http://e/b> {LABEL} \"Beta\" .\n"));
    let bad = write(
        tmp.path(),
        "bad.nt.gz",
        &format!("<http://e/c> {LABEL} \"Gamma\" .\n<http://e/d> {LABEL} \"Delta .\n"),
    );
    let error = EmbeddedStore::load(&store, &[more, bad], &GraphSettings::default(), false).unwrap_err();
    match &error {
        GraphError::Syntax { path, line, .. } => {
            assert!(path.ends_with("bad.nt.gz"), "{error}");
            assert_eq!(*line, 2, "{error}");
        }
        other => panic!("expected a syntax error, got {other}"),
    }
    assert!(error.to_string().contains("bad.nt.gz:2:"), "{error}");

    // The store is exactly as before: the good file of the failed load was not kept either.
    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    assert_eq!(kg.len().unwrap(), 1);
    assert!(kg.search_entities("beta", 5).await.unwrap().is_empty());
    assert_eq!(kg.search_entities("alpha", 5).await.unwrap().len(), 1);
}

#[test]
fn failed_first_load_leaves_no_store() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let bad = write(tmp.path(), "bad.ttl", "@prefix : <http://e/> .\n:a :b .\n");
    assert!(matches!(
        EmbeddedStore::load(&store, &[bad], &GraphSettings::default(), false),
        Err(GraphError::Syntax { line: 2, .. })
    ));
    assert!(matches!(
        EmbeddedStore::open(&store, GraphSettings::default()),
        Err(GraphError::StoreNotFound { .. })
    ));
}

#[test]
fn missing_inputs_and_stores_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let error = EmbeddedStore::open(&tmp.path().join("nowhere"), GraphSettings::default())
        .err()
        .unwrap();
    assert!(matches!(error, GraphError::StoreNotFound { .. }));
    assert!(error.to_string().contains("chatty-kg load"), "{error}");

    let missing = RdfFile::new(tmp.path().join("missing.nt")).unwrap();
    let error = EmbeddedStore::load(&tmp.path().join("s"), &[missing], &GraphSettings::default(), false).unwrap_err();
    assert!(matches!(error, GraphError::Io { .. }), "{error}");
    assert!(
        !tmp.path().join("s").exists(),
        "nothing is created for an unreadable input"
    );

    assert!(matches!(
        RdfFile::new("data.csv"),
        Err(GraphError::UnsupportedFormat { .. })
    ));
}

#[test]
fn an_interrupted_load_is_reported_not_served() {
    let (_tmp, store) = store_with_alpha();
    // What a load killed half-way leaves behind.
    let manifest = std::fs::read_to_string(store.join("manifest.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    value["loading"] = serde_json::json!(["/data/huge.nt"]);
    std::fs::write(store.join("manifest.json"), value.to_string()).unwrap();
    let error = EmbeddedStore::open(&store, GraphSettings::default()).err().unwrap();
    assert!(matches!(error, GraphError::StoreIncomplete { .. }), "{error}");
    assert!(error.to_string().contains("huge.nt"));
}

/// 3000 triples over 7 objects, and a count over `?o` joined three times: 7 × 430³ rows, many
/// minutes of work. Joined on ?o, every row is an index lookup, where the evaluator checks for
/// cancellation. (A cross product of patterns sharing no variable is joined in memory, where
/// spareval 0.2 never checks: that one runs to its end, cancelled or not.)
const SLOW_QUERY: &str = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?p ?o . ?b ?p ?o . ?c ?p ?o }";

fn slow_store(tmp: &Path, query_timeout_secs: f64) -> EmbeddedStore {
    let mut data = String::new();
    for i in 0..3000 {
        data.push_str(&format!("<http://e/s{i}> <http://e/p> <http://e/o{}> .\n", i % 7));
    }
    let file = write(tmp, "big.nt", &data);
    let store = tmp.join("store");
    EmbeddedStore::load(&store, &[file], &GraphSettings::default(), false).unwrap();
    let settings = GraphSettings {
        query_timeout_secs,
        ..GraphSettings::default()
    };
    EmbeddedStore::open(&store, settings).unwrap()
}

/// 28 doublings of a 16-byte string: 4 GiB in one solution, from a 936-byte query.
fn doubling_query(doublings: usize) -> String {
    let mut query = String::from("SELECT (STRLEN(?a) AS ?n) WHERE { BIND(\"0123456789abcdef\" AS ?a0)");
    for i in 1..=doublings {
        query.push_str(&format!(" BIND(CONCAT(?a{p}, ?a{p}) AS ?a{i})", p = i - 1));
    }
    query.push_str(&format!(" BIND(?a{doublings} AS ?a) }}"));
    query
}

#[tokio::test]
async fn values_a_query_builds_are_bounded() {
    let (_tmp, dir) = store_with_alpha();
    let kg = EmbeddedStore::open(&dir, GraphSettings::default()).unwrap();
    // Within the bounds the functions answer as SPARQL says.
    let QueryResults::Solutions(s) = kg.query_text(&doubling_query(10)).await.unwrap() else {
        panic!("a SELECT")
    };
    assert_eq!(
        s.column("n").next().map(|t| t.to_string()),
        Some("\"16384\"^^<http://www.w3.org/2001/XMLSchema#integer>".to_owned())
    );
    // Past them: a typed error, and the store keeps serving.
    for query in [
        doubling_query(28),
        // A short text, a long replacement: REPLACE multiplies them.
        format!(
            "SELECT (STRLEN(?r) AS ?n) WHERE {{ BIND(\"{}\" AS ?t) BIND(CONCAT({}) AS ?long) BIND(REPLACE(?t, \"a\", ?long) AS ?r) }}",
            "a".repeat(4000),
            vec!["\"xxxxxxxxxxxxxxxx\""; 1000].join(", ")
        ),
        // GROUP_CONCAT of a 10 KB value over a million rows: no CONCAT at all.
        format!(
            "SELECT (STRLEN(GROUP_CONCAT(?v)) AS ?n) WHERE {{ VALUES ?i {{ {n} }} VALUES ?j {{ {n} }} VALUES ?k {{ {n} }} BIND(\"{}\" AS ?v) }}",
            "x".repeat(10_000),
            n = (0..100).map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
        ),
    ] {
        let result = kg.query_text(&query).await;
        assert!(matches!(result, Err(GraphError::ValueTooLarge { .. })), "{result:?}");
    }
    assert!(kg.query_text("ASK { ?s ?p ?o }").await.is_ok());
}

#[tokio::test]
async fn results_are_bounded_in_bytes() {
    let (_tmp, dir) = store_with_alpha();
    let settings = GraphSettings {
        max_result_bytes: 4096,
        ..GraphSettings::default()
    };
    let kg = EmbeddedStore::open(&dir, settings).unwrap();
    let rows = (0..200).map(|i| format!("\"{i:040}\"")).collect::<Vec<_>>().join(" ");
    let result = kg
        .query_text(&format!("SELECT ?v WHERE {{ VALUES ?v {{ {rows} }} }}"))
        .await;
    assert!(
        matches!(result, Err(GraphError::SolutionsTooLarge { max: 4096 })),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_queries_time_out() {
    let tmp = tempfile::tempdir().unwrap();
    let kg = slow_store(tmp.path(), 0.2);
    let result = kg.query_text(SLOW_QUERY).await;
    assert!(matches!(result, Err(GraphError::Timeout { .. })), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_whose_caller_gives_up_stops_running() {
    let tmp = tempfile::tempdir().unwrap();
    // The store's own timeout is far away: only the caller's giving up can stop the query.
    let kg = slow_store(tmp.path(), 3600.0);
    let query = kg.query_text(SLOW_QUERY);
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(300), query)
            .await
            .is_err()
    );
    // Without cancellation the blocking thread would count 7 × 430³ rows for many minutes.
    let mut waited = 0;
    while kg.running_queries() > 0 && waited < 100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        waited += 1;
    }
    assert_eq!(kg.running_queries(), 0, "the dropped query is still running after 10 s");
}

#[test]
fn a_load_that_cannot_lock_the_store_changes_nothing() {
    let (tmp, store) = store_with_alpha();
    // A writer that does not take chatty-kg's lock (another Oxigraph program) holds RocksDB's.
    let writer = oxigraph::store::Store::open(store.join("rdf")).unwrap();
    let more = write(tmp.path(), "more.nt", &format!("<http://e/b> {LABEL} \"Beta\" .\n"));
    let error = EmbeddedStore::load(&store, &[more], &GraphSettings::default(), false).unwrap_err();
    assert!(error.to_string().contains("only one process may write"), "{error}");
    drop(writer);
    // The failed attempt left no "loading" marker behind.
    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    assert_eq!(kg.len().unwrap(), 1);
}

/// What `lock.rs` promises: readers share a store, a writer has it alone, and nobody waits.
#[test]
fn a_load_or_index_while_the_store_is_open_fails_and_changes_nothing() {
    let (tmp, store) = store_with_alpha();
    let reader = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    // A second reader (another `serve`, an `ask`) is welcome.
    let second = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    drop(second);
    // A clone keeps the lock after the original is dropped.
    let clone = reader.clone();
    drop(reader);
    let before = std::fs::read(store.join("manifest.json")).unwrap();

    let more = write(tmp.path(), "more.nt", &format!("<http://e/b> {LABEL} \"Beta\" .\n"));
    let error = EmbeddedStore::load(&store, std::slice::from_ref(&more), &GraphSettings::default(), false).unwrap_err();
    assert!(matches!(error, GraphError::StoreInUse { .. }), "{error}");
    assert!(error.to_string().contains(&store.display().to_string()), "{error}");
    assert!(error.to_string().contains("stop `chatty-kg serve`"), "{error}");
    let error = EmbeddedStore::reindex(&store, &GraphSettings::default()).unwrap_err();
    assert!(matches!(error, GraphError::StoreInUse { .. }), "{error}");
    assert_eq!(std::fs::read(store.join("manifest.json")).unwrap(), before);
    assert_eq!(clone.len().unwrap(), 1);

    drop(clone);
    EmbeddedStore::load(&store, &[more], &GraphSettings::default(), false).unwrap();
    assert_eq!(EmbeddedStore::reindex(&store, &GraphSettings::default()).unwrap(), 2);
    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    assert_eq!(kg.len().unwrap(), 2);
}

#[test]
fn a_store_being_written_is_not_opened() {
    let (_tmp, store) = store_with_alpha();
    // What a running `load` or `index` holds.
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(store.join("lock"))
        .unwrap();
    writer.try_lock().unwrap();
    let error = EmbeddedStore::open(&store, GraphSettings::default()).err().unwrap();
    assert!(matches!(error, GraphError::StoreBeingWritten { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("`chatty-kg load` or `chatty-kg index` is in progress"),
        "{error}"
    );
    drop(writer);
    EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
}

#[tokio::test]
async fn an_interrupted_index_is_reported_not_served() {
    let (_tmp, store) = store_with_alpha();
    // What an `index` killed between its two renames leaves behind: the marker, the old index
    // set aside and none in place.
    let manifest = std::fs::read_to_string(store.join("manifest.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    value["indexing"] = serde_json::json!(true);
    std::fs::write(store.join("manifest.json"), value.to_string()).unwrap();
    std::fs::rename(store.join("labels"), store.join("labels.old")).unwrap();

    let error = EmbeddedStore::open(&store, GraphSettings::default()).err().unwrap();
    assert!(matches!(error, GraphError::IndexIncomplete { .. }), "{error}");
    assert!(error.to_string().contains("chatty-kg index"), "{error}");

    // Running `index` again repairs it, and leaves nothing aside.
    assert_eq!(EmbeddedStore::reindex(&store, &GraphSettings::default()).unwrap(), 1);
    let mut names: Vec<_> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["counts.json", "labels", "lock", "manifest.json", "rdf"]);
    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    assert_eq!(kg.search_entities("alpha", 5).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_index_that_fails_before_replacing_anything_keeps_the_store_serving() {
    let (_tmp, store) = store_with_alpha();
    let bad = GraphSettings {
        label_predicates: vec!["not an IRI".into()],
        ..GraphSettings::default()
    };
    let error = EmbeddedStore::reindex(&store, &bad).unwrap_err();
    assert!(matches!(error, GraphError::InvalidIri { .. }), "{error}");
    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    assert_eq!(kg.search_entities("alpha", 5).await.unwrap().len(), 1);
}

/// Without a single label triple (tests/fixtures/no-labels.ttl), every vertex is found and named
/// by its IRI; the class, only ever an object of rdf:type, is not a vertex to link. Turned off,
/// the index holds nothing and the names stay IRIs.
#[tokio::test]
async fn vertices_without_labels_are_named_and_found_by_their_iris() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/no-labels.ttl");
    let store = tmp.path().join("store");
    let report = EmbeddedStore::load(
        &store,
        &[RdfFile::new(&fixture).unwrap()],
        &GraphSettings::default(),
        false,
    )
    .unwrap();
    assert_eq!(report.labels, 9, "every subject and IRI object but the class");
    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    let found = |text: &str| {
        let kg = &kg;
        let text = text.to_owned();
        async move {
            kg.search_entities(&text, 5)
                .await
                .unwrap()
                .into_iter()
                .map(|c| (c.iri, c.label))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        found("Antony Cheng").await[0],
        ("http://example.org/resource/Antony_Cheng".into(), "Antony Cheng".into())
    );
    assert_eq!(found("Alan M. Turing").await[0].1, "Alan M Turing");
    assert_eq!(
        found("malmo ff").await[0],
        ("http://example.org/resource/Malm%C3%B6_FF".into(), "Malmö FF".into())
    );
    assert_eq!(found("245811625").await[0].1, "245811625");
    assert!(found("skater").await.is_empty(), "a class is not an entity to link");
    let labels = kg
        .labels(&[
            "http://example.org/resource/Vancouver",
            "http://example.org/resource/LiJiang",
        ])
        .await
        .unwrap();
    assert_eq!(labels["http://example.org/resource/Vancouver"], "Vancouver");
    assert_eq!(labels["http://example.org/resource/LiJiang"], "Li Jiang");
    drop(kg);

    let off = GraphSettings {
        iri_names: false,
        ..GraphSettings::default()
    };
    assert_eq!(EmbeddedStore::reindex(&store, &off).unwrap(), 0);
    let kg = EmbeddedStore::open(&store, off).unwrap();
    assert!(kg.search_entities("Antony Cheng", 5).await.unwrap().is_empty());
    assert!(
        kg.labels(&["http://example.org/resource/Vancouver"])
            .await
            .unwrap()
            .is_empty()
    );
}

/// Predicates are named by their own labels in the graph, else from their IRIs, and the names
/// are kept: asking again gives the same names without looking them up.
#[tokio::test]
async fn predicates_are_named_by_their_labels_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/labelled-predicates.ttl");
    let store = tmp.path().join("store");
    EmbeddedStore::load(
        &store,
        &[RdfFile::new(&fixture).unwrap()],
        &GraphSettings::default(),
        false,
    )
    .unwrap();
    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    let (p57, other) = (
        "http://www.wikidata.org/prop/direct/P57",
        "http://example.org/prop/birthPlace",
    );
    let names = kg.predicate_names(&[p57, other]).await.unwrap();
    assert_eq!(names[p57], "director");
    assert_eq!(names[other], "birth place");
    assert_eq!(kg.predicate_names(&[other, p57]).await.unwrap(), names);
    // A clone of the store shares what was looked up.
    assert_eq!(kg.clone().predicate_names(&[p57]).await.unwrap()[p57], "director");
}

/// A first load builds the label index from the quads as they are parsed, a later load from the
/// whole store: both index the same labels. Stated twice, a label is indexed once; a vertex
/// labelled after it was first used is not also named from its IRI; an object with no label is.
#[tokio::test]
async fn a_first_load_indexes_the_labels_it_parses_as_a_rescan_would() {
    let tmp = tempfile::tempdir().unwrap();
    let one = write(
        tmp.path(),
        "one.nt",
        &format!(
            "<http://e/a> <http://e/knows> <http://e/b> .\n\
             <http://e/a> {LABEL} \"Alpha\" .\n\
             <http://e/a> {LABEL} \"Alpha\"@en .\n\
             <http://e/a> {LABEL} \"Alfa\"@es .\n\
             <http://e/a> <http://e/knows> <http://e/Gamma_Ray> .\n\
             <http://e/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://e/Letter> .\n"
        ),
    );
    let two = write(
        tmp.path(),
        "two.nt",
        &format!("<http://e/b> {LABEL} \"Beta\" .\n<http://e/a> {LABEL} \"Alpha\" .\n"),
    );
    let store = tmp.path().join("store");
    let settings = GraphSettings::default();
    let first = EmbeddedStore::load(&store, &[one, two], &settings, false).unwrap();
    // Alpha (the plain and the @en literal are one text), Alfa, Beta, and "Gamma Ray" from its
    // IRI; not the class, not a second name for b or a.
    assert_eq!(first.labels, 4, "{first:?}");
    let search = |store: &Path| {
        let kg = EmbeddedStore::open(store, settings.clone()).unwrap();
        async move {
            let mut found = Vec::new();
            for text in ["alpha", "alfa", "beta", "gamma ray", "letter", "e"] {
                let mut hits: Vec<_> = kg
                    .search_entities(text, 10)
                    .await
                    .unwrap()
                    .into_iter()
                    .map(|c| (c.iri, c.label))
                    .collect();
                hits.sort();
                found.push(hits);
            }
            found
        }
    };
    let parsed = search(&store).await;
    assert_eq!(parsed[0], vec![("http://e/a".to_owned(), "Alpha".to_owned())]);
    assert_eq!(
        parsed[3],
        vec![("http://e/Gamma_Ray".to_owned(), "Gamma Ray".to_owned())]
    );
    assert!(parsed[4].is_empty(), "a class is not named");
    assert_eq!(EmbeddedStore::reindex(&store, &settings).unwrap(), first.labels);
    assert_eq!(search(&store).await, parsed, "the rescan finds the same");

    // A later load (into a store with data) rescans and keeps the earlier labels.
    let three = write(tmp.path(), "three.nt", &format!("<http://e/d> {LABEL} \"Delta\" .\n"));
    let later = EmbeddedStore::load(&store, &[three], &settings, false).unwrap();
    assert_eq!(later.labels, 5);
    let kg = EmbeddedStore::open(&store, settings.clone()).unwrap();
    assert_eq!(kg.search_entities("beta", 5).await.unwrap()[0].iri, "http://e/b");
    assert_eq!(kg.search_entities("delta", 5).await.unwrap()[0].iri, "http://e/d");
}

/// A first load that fails after some labels were parsed leaves no label index behind, and the
/// next load into the same directory builds a complete one.
#[tokio::test]
async fn a_first_load_that_fails_leaves_no_half_index() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text: String = (0..10_000)
        .map(|i| format!("<http://e/{i}> {LABEL} \"Name {i}\" .\n"))
        .collect();
    text.push_str("<http://e/broken> {LABEL} \"unterminated .\n");
    let bad = write(tmp.path(), "bad.nt", &text);
    let store = tmp.path().join("store");
    assert!(matches!(
        EmbeddedStore::load(&store, &[bad], &GraphSettings::default(), false),
        Err(GraphError::Syntax { .. })
    ));
    assert!(!store.join("labels").exists(), "no index was swapped in");
    let good = write(tmp.path(), "good.nt", &format!("<http://e/a> {LABEL} \"Alpha\" .\n"));
    let report = EmbeddedStore::load(&store, &[good], &GraphSettings::default(), false).unwrap();
    assert_eq!(report.labels, 1);
    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    assert!(kg.search_entities("name 5", 5).await.unwrap().is_empty());
    assert_eq!(kg.search_entities("alpha", 5).await.unwrap()[0].iri, "http://e/a");
}

/// A name predicate (a paper's title) makes its values find the vertex in entity search, while
/// the vertex keeps its label as its name; without it, the title finds nothing.
#[tokio::test]
async fn name_predicates_identify_vertices_without_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(
        tmp.path(),
        "papers.nt",
        &format!(
            "<http://e/paper1> <http://e/title> \"Deep Residual Learning for Image Recognition\" .\n\
             <http://e/paper1> {LABEL} \"He et al. 2016\" .\n\
             <http://e/paper1> <http://e/author> <http://e/Kaiming_He> .\n\
             <http://e/Kaiming_He> {LABEL} \"Kaiming He\" .\n"
        ),
    );
    let store = tmp.path().join("store");
    let titles = GraphSettings {
        name_predicates: vec!["http://e/title".into()],
        ..GraphSettings::default()
    };
    let report = EmbeddedStore::load(&store, &[file], &titles, false).unwrap();
    assert_eq!(report.labels, 3);
    let kg = EmbeddedStore::open(&store, titles.clone()).unwrap();
    let found = kg.search_entities("deep residual learning", 5).await.unwrap();
    assert_eq!(
        (found[0].iri.as_str(), found[0].label.as_str()),
        ("http://e/paper1", "Deep Residual Learning for Image Recognition")
    );
    let names = kg.labels(&["http://e/paper1"]).await.unwrap();
    assert_eq!(names["http://e/paper1"], "He et al. 2016", "the label stays its name");
    drop(kg);

    assert_eq!(EmbeddedStore::reindex(&store, &GraphSettings::default()).unwrap(), 2);
    let kg = EmbeddedStore::open(&store, GraphSettings::default()).unwrap();
    assert!(
        kg.search_entities("deep residual learning", 5)
            .await
            .unwrap()
            .is_empty()
    );
}

/// The deepest query of each shape the guard lets through ([`chatty_kg_graph::MAX_DEPTH`],
/// found by asking the guard itself), evaluated in process: the evaluating thread's stack holds
/// it. 75 chained BINDs and 100 joined groups or OPTIONALs overflowed a 2 MiB thread and ended the
/// process (issue 46); on the stack the store evaluates on, every shape at the guard's limit ends
/// with rows or a typed error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deepest_queries_the_guard_allows_are_evaluated() {
    let (_tmp, dir) = store_with_alpha();
    let kg = EmbeddedStore::open(
        &dir,
        GraphSettings {
            query_timeout_secs: 20.0,
            ..GraphSettings::default()
        },
    )
    .unwrap();
    let shapes: [(&str, fn(usize) -> String); 8] = [
        ("chained BINDs", |n| {
            let binds: String = (1..=n)
                .map(|i| format!(" BIND(?x{p} * ?x{p} AS ?x{i})", p = i - 1))
                .collect();
            format!("SELECT ?x{n} WHERE {{ BIND(2 AS ?x0){binds} }}")
        }),
        ("joined groups", |n| {
            format!("SELECT * WHERE {{ {} }} LIMIT 1", "{ ?s ?p ?o } ".repeat(n))
        }),
        ("OPTIONALs", |n| {
            format!(
                "SELECT * WHERE {{ ?s ?p ?o {} }} LIMIT 1",
                "OPTIONAL { ?s ?p ?o } ".repeat(n)
            )
        }),
        ("UNIONs", |n| {
            format!(
                "SELECT * WHERE {{ {} }} LIMIT 1",
                vec!["{ ?s ?p ?o }"; n.max(1)].join(" UNION ")
            )
        }),
        ("MINUSes", |n| {
            format!(
                "SELECT * WHERE {{ ?s ?p ?o {} }} LIMIT 1",
                "MINUS { ?s <http://e.org/none> ?o } ".repeat(n)
            )
        }),
        ("FILTERs", |n| {
            format!("SELECT * WHERE {{ ?s ?p ?o {} }} LIMIT 1", "FILTER(?o != 1) ".repeat(n))
        }),
        ("a sum", |n| {
            format!("SELECT ({} AS ?n) WHERE {{}}", vec!["1"; n.max(1)].join(" + "))
        }),
        ("a path", |n| {
            format!(
                "SELECT * WHERE {{ ?s {} ?o }} LIMIT 1",
                vec!["<http://e.org/p>"; n.max(1)].join("/")
            )
        }),
    ];
    for (name, shape) in shapes {
        // The longest the guard accepts (it refuses past MAX_DEPTH levels).
        let (mut accepted, mut refused) = (1usize, 4 * chatty_kg_graph::MAX_DEPTH);
        assert!(chatty_kg_graph::ReadQuery::parse(&shape(accepted)).is_ok(), "{name}");
        assert!(chatty_kg_graph::ReadQuery::parse(&shape(refused)).is_err(), "{name}");
        while refused - accepted > 1 {
            let mid = (accepted + refused) / 2;
            if chatty_kg_graph::ReadQuery::parse(&shape(mid)).is_ok() {
                accepted = mid;
            } else {
                refused = mid;
            }
        }
        let result = kg.query_text(&shape(accepted)).await;
        assert!(
            matches!(
                result,
                Ok(_) | Err(GraphError::Timeout { .. } | GraphError::Evaluation { .. })
            ),
            "{name} × {accepted}: {result:?}"
        );
    }
}

/// A first load of files larger than the batches the parsing thread sends (4,096 quads): every
/// quad and label arrives, each file's count is its own, and the label index is complete whether
/// it was committed beside the store's commit (every vertex labelled) or after it (some vertex
/// named from its IRI by a scan of the store), and whether the store is compacted at the end
/// (`compact_after_quads`) or not.
#[tokio::test]
async fn a_first_load_in_many_batches_keeps_every_quad_count_and_label() {
    for (unlabelled, compacted) in [(false, false), (true, false), (false, true), (true, true)] {
        let settings = GraphSettings {
            compact_after_quads: if compacted { 10_000 } else { 100_000 },
            ..GraphSettings::default()
        };
        let tmp = tempfile::tempdir().unwrap();
        let lines = |from: usize, to: usize| -> String {
            (from..to)
                .map(|i| {
                    format!(
                        "<http://e/v{i}> {LABEL} \"Vertex {i}\" .\n<http://e/v{i}> <http://e/next> <http://e/v{}> .\n",
                        i + 1
                    )
                })
                .collect()
        };
        // 5,000 and 4,100 vertices: 10,000 and 8,200 triples; the last `next` of the second
        // file points to a vertex with no label unless a third file labels it.
        let mut files = vec![
            write(tmp.path(), "a.nt", &lines(0, 5_000)),
            write(tmp.path(), "b.nt.gz", &lines(5_000, 9_100)),
        ];
        if !unlabelled {
            files.push(write(
                tmp.path(),
                "c.nt",
                &format!("<http://e/v9100> {LABEL} \"Vertex 9100\" .\n"),
            ));
        }
        let store = tmp.path().join("store");
        let report = EmbeddedStore::load(&store, &files, &settings, false).unwrap();
        let expected = 18_200 + u64::from(!unlabelled);
        assert_eq!((report.parsed, report.store_size), (expected, expected));
        assert_eq!(report.compact_seconds > 0.0, compacted, "{report:?}");
        let counts: Vec<u64> = report.files.iter().map(|(_, n)| *n).collect();
        assert_eq!(counts[..2], [10_000, 8_200]);
        // 9,101 vertices, the last named from its IRI ("v9100") when it has no label.
        assert_eq!(report.labels, 9_101, "unlabelled: {unlabelled}");

        let kg = EmbeddedStore::open(&store, settings).unwrap();
        let query = "SELECT ?v WHERE { <http://e/v9099> <http://e/next> ?v }";
        let QueryResults::Solutions(next) = kg.query_text(query).await.unwrap() else {
            panic!("a SELECT")
        };
        assert_eq!(
            next.column("v").next().map(|t| t.to_string()),
            Some("<http://e/v9100>".to_owned()),
            "compacted: {compacted}"
        );
        let last = kg
            .search_entities(if unlabelled { "v9100" } else { "vertex 9100" }, 1)
            .await
            .unwrap();
        assert_eq!(
            last.first().map(|c| c.iri.as_str()),
            Some("http://e/v9100"),
            "unlabelled: {unlabelled}"
        );
        let middle = kg.search_entities("vertex 4096", 1).await.unwrap();
        assert_eq!(middle.first().map(|c| c.iri.as_str()), Some("http://e/v4096"));
    }
}
