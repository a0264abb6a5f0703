//! The runner on the movies fixture in a real embedded store, with the real embedding model and
//! the scripted LLM: records, scores, the gold of a gold-SPARQL benchmark computed on the KG,
//! dialogue vs standalone asking, failure classes, resuming, and the summary and QALD-JSON.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_agents::{AgentContext, AgentParameters, Pipeline};
use chatty_kg_embed::MiniLmEmbedder;
use chatty_kg_eval::runner::{self, RunMode, RunOptions};
use chatty_kg_eval::taxonomy::Failure;
use chatty_kg_eval::{Format, loaders, summary};
use chatty_kg_graph::{EmbeddedStore, GraphSettings, RdfFile};
use chatty_kg_llm::prompts::PromptLibrary;
use chatty_kg_llm::scripted::ScriptedChatModel;
use chatty_kg_models::{catalog, model_for_tests};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

fn qir(entity: &str, triple: [&str; 3]) -> String {
    let unknown = if triple[0].starts_with('?') {
        triple[0]
    } else {
        triple[2]
    };
    json!({"entities": [entity], "unknowns": [unknown], "relations": [triple[1]], "triples": [triple],
        "type": "list", "order": null})
    .to_string()
}

fn setup(dir: &Path) -> Option<(Pipeline, Arc<EmbeddedStore>)> {
    let model_dir = model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL)?;
    let movies = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/movies.ttl");
    let settings = GraphSettings::default();
    EmbeddedStore::load(dir, &[RdfFile::new(movies).unwrap()], &settings, false).unwrap();
    let store = Arc::new(EmbeddedStore::open(dir, settings).unwrap());
    let scripted = ScriptedChatModel::new()
        .reply_when(
            "qir",
            "who directed forrest gump",
            &qir("Forrest Gump", ["Forrest Gump", "directed by", "?answer"]),
        )
        .reply_when(
            "qir",
            "who starred in big",
            &qir("Big", ["Big", "starred actors", "?answer"]),
        )
        .reply_when(
            "qir",
            "when was big released",
            &qir("Big", ["Big", "release year", "?answer"]),
        )
        .reply_when(
            "qir",
            "who directed titanic 2",
            &qir("Titanic 2", ["Titanic 2", "directed by", "?answer"]),
        )
        // A misspelt name is no label, so the model is asked; it never gives a valid QIR (its
        // entity is not in the question): θ = 3 attempts, then the typed error.
        .reply_when(
            "qir",
            "who produced bigg",
            &qir("Forrest Gump", ["Forrest Gump", "produced by", "?answer"]),
        )
        .reply_when(
            "classifier",
            "new question: when was it released",
            r#"{"label": "dependent"}"#,
        )
        .reply_when("classifier", "", r#"{"label": "self-contained"}"#)
        .reply_when(
            "rephraser",
            "when was it released",
            r#"{"question": "When was Big released?"}"#,
        );
    let ctx = AgentContext {
        kg: store.clone(),
        llm: Arc::new(scripted),
        embedder: Arc::new(MiniLmEmbedder::load(&model_dir).unwrap()),
        prompts: Arc::new(PromptLibrary::builtin().unwrap()),
        params: AgentParameters::default(),
        examples: Default::default(),
    };
    Some((Pipeline::new(ctx), store))
}

fn options(mode: RunMode) -> RunOptions {
    RunOptions {
        mode,
        limit: None,
        sample: None,
        concurrency: 2,
        context_answers: 100,
        progress: false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_metaqa_style_run_is_scored_classified_and_resumable() {
    let dir = tempfile::tempdir().unwrap();
    let Some((pipeline, store)) = setup(&dir.path().join("store")) else {
        return;
    };
    let file = dir.path().join("qa_dev.txt");
    // The third gold answer is deliberately wrong: an "answered but wrong" question. The fifth
    // gets no valid QIR: "I could not find …", whose cost still counts (its name in lower case,
    // so that the model is asked).
    std::fs::write(
        &file,
        "who directed [Forrest Gump]\tRobert Zemeckis\nwho starred in [Big]\tTom Hanks\nwhen was [Big] released\t1999\nwho directed [Titanic 2]\tJames Cameron\nwho produced [bigg]\tSomeone\n",
    )
    .unwrap();
    let items = loaders::load(Format::Metaqa, &file, "en").unwrap();
    let out = dir.path().join("answers.jsonl");
    let units = runner::select(items.clone(), &options(RunMode::Standalone));
    let asked = runner::run(&pipeline, store.as_ref(), units, &options(RunMode::Standalone), &out)
        .await
        .unwrap();
    assert_eq!(asked, 5);
    let mut records = runner::read_records(&out).unwrap();
    records.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(records[0].system, ["Robert Zemeckis"]);
    assert_eq!(records[0].score.f1, 1.0);
    assert!(records[0].failure.is_none());
    assert_eq!(records[1].system, ["Tom Hanks"], "labels, as the gold uses labels");
    assert_eq!(records[2].system, ["1988"]);
    assert_eq!(
        (records[2].score.f1, records[2].failure),
        (0.0, Some(Failure::AnsweredButWrong))
    );
    assert_eq!(records[3].failure, Some(Failure::NoEntityLinked));
    assert!(
        records[0].llm.is_some() && records[0].sparql_queries >= 3,
        "path search and the answer"
    );
    // The model never gives a valid QIR: the question is answered "I could not find …" (no
    // entity linked), and its model calls count.
    let failed = &records[4];
    assert!(failed.error.is_none(), "{failed:?}");
    assert_eq!(failed.failure, Some(Failure::NoEntityLinked));
    assert!(failed.system.is_empty());
    let failed_llm = failed.llm.as_ref().expect("an unanswered question keeps its LLM usage");
    assert_eq!(failed_llm.by_agent["qir"].calls, 3, "every QIR attempt is counted");
    assert!(failed_llm.calls == 3 && failed_llm.input_tokens > 0, "{failed_llm:?}");
    assert!(failed.timings.as_ref().unwrap().total_ms > 0.0);

    // Resuming asks nothing again.
    let units = runner::select(items, &options(RunMode::Standalone));
    assert_eq!(
        runner::run(&pipeline, store.as_ref(), units, &options(RunMode::Standalone), &out)
            .await
            .unwrap(),
        0
    );
    assert_eq!(runner::read_records(&out).unwrap().len(), 5);

    let s = summary::summarize("fixture", &records);
    assert_eq!(s.questions, 5);
    // P: 1, 1, 0, 1, 1 (nothing said) → 4/5; R: 1, 1, 0, 0, 0 → 2/5; F1(macro) = 8/15;
    // mean F1 = 2/5.
    assert!((s.overall.macro_precision - 0.8).abs() < 1e-9, "{s:?}");
    assert!((s.overall.f1_of_macro_p_and_macro_r - 8.0 / 15.0).abs() < 1e-9, "{s:?}");
    assert!((s.overall.mean_per_question_f1 - 0.4).abs() < 1e-9, "{s:?}");
    assert_eq!(s.failures["no entity linked"], 2);
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    // The failed question's calls are in the mean, as its time is in the percentiles.
    let calls: u32 = records.iter().map(|r| r.llm.as_ref().unwrap().calls).sum();
    assert!((s.efficiency.llm_calls - f64::from(calls) / 5.0).abs() < 1e-9);
    // Titanic 2 is no label, but a name written in capitals: it is searched without the model;
    // only the name in lower case ("bigg") asks it. The others are grounded without a call.
    assert_eq!(calls, failed_llm.calls);
    let report = summary::markdown("fixture", &[s], None, &[]);
    assert!(report.contains("F1(macro P, macro R)") && report.contains("mean per-question F1"));
    let qald = summary::qald_json("fixture", &records);
    assert_eq!(
        qald["questions"][0]["answers"][0]["results"]["bindings"][0]["answer"]["value"],
        "http://example.org/entity/Robert_Zemeckis"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dialogue_benchmark_gets_its_gold_from_the_kg_and_measures_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let Some((pipeline, store)) = setup(&dir.path().join("store")) else {
        return;
    };
    let file = dir.path().join("dialogues.json");
    std::fs::write(
        &file,
        json!({"data": [{"seed_label": "Big",
            "dialogue": ["Who starred in Big?", "When was it released?"],
            "original": ["Who starred in Big?", "When was Big released?"],
            "queries": ["SELECT ?a WHERE { <http://example.org/entity/Big> <http://example.org/relation/starredActors> ?a }",
                        "SELECT ?y WHERE { <http://example.org/entity/Big> <http://example.org/relation/release_year> ?y }"]}]})
        .to_string(),
    )
    .unwrap();
    let items = loaders::load(Format::ChattyGen, &file, "en").unwrap();
    let mut f1 = Vec::new();
    for mode in [RunMode::Dialogue, RunMode::Standalone] {
        let out = dir.path().join(format!("{mode:?}.jsonl"));
        let units = runner::select(items.clone(), &options(mode));
        assert_eq!(units.len(), 1, "a dialogue is one unit");
        runner::run(&pipeline, store.as_ref(), units, &options(mode), &out)
            .await
            .unwrap();
        let records = runner::read_records(&out).unwrap();
        assert_eq!(
            records[0].gold,
            ["http://example.org/entity/Tom_Hanks"],
            "gold from the gold SPARQL"
        );
        assert_eq!(records[1].gold, ["1988"]);
        let expected = if mode == RunMode::Dialogue {
            "When was it released?"
        } else {
            "When was Big released?"
        };
        assert_eq!(records[1].question, expected);
        assert_eq!(records[1].system, ["1988"], "{:?}", records[1]);
        assert_eq!(records[1].ranking.unwrap().p_at_1, 1.0);
        f1.push(summary::summarize("x", &records));
    }
    let retention = summary::Retention::of(&f1[0], &f1[1]);
    assert_eq!(retention.f1_of_macro_p_and_macro_r, Some(100.0));
    assert_eq!(retention.mean_per_question_f1, Some(100.0));
    let report = summary::markdown("dialogues", &f1, Some(retention), &[]);
    assert!(
        report.contains("100.0 % with F1(macro P, macro R), 100.0 % with mean per-question F1"),
        "{report}"
    );
}
