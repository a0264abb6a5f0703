//! Each loader on a small hand-written file in its format (tests/fixtures), then, when the
//! benchmark files are beside the project (`../shared/datasets`, as in CI), on the real files with
//! the counts their provenance states.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_eval::loaders;
use chatty_kg_eval::{Format, Item};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn load(name: &str) -> Vec<Item> {
    let path = fixture(name);
    let format = Format::detect(&path).unwrap();
    loaders::load(format, &path, "en").unwrap()
}

#[test]
fn metaqa_strips_brackets_keeps_the_kb_consistent_subset_and_tags_hops() {
    let items = load("metaqa/2-hop/qa_dev.txt");
    let ids: Vec<_> = items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["0", "1", "3"], "line 2 is not in the consistent subset");
    assert_eq!(items[1].question, "what films did Tom Hanks star in");
    assert_eq!(
        items[1].gold.as_deref(),
        Some(&["Big".to_owned(), "Cast Away".to_owned()][..])
    );
    assert_eq!(items[1].tags["qtype"], "actor_to_movie");
    assert_eq!(items[1].tags["hops"], "1");
    assert!(items.iter().all(|i| i.gold_sparql.is_none() && i.dialogue.is_none()));
}

#[test]
fn pathquestion_parses_answer_lists_with_parentheses_in_names() {
    assert_eq!(
        loaders::pathquestion::parse_answers("united_kingdom(united_kingdom/)"),
        ["united_kingdom"]
    );
    assert_eq!(
        loaders::pathquestion::parse_answers("carl_(b._1900)(carl_(b._1900)/dora/)"),
        ["carl_(b._1900)", "dora"]
    );
    let items = load("pq.txt");
    assert_eq!(items[0].question, "which nationality is ada (queen)'s couple ?");
    assert_eq!(items[0].gold.as_deref(), Some(&["united kingdom".to_owned()][..]));
    assert_eq!(
        (items[0].tags["hops"].as_str(), items[0].tags["path"].as_str()),
        ("2", "spouse/nationality")
    );
    assert_eq!(items[1].gold.as_ref().map(Vec::len), Some(2));
    assert_eq!(items[1].tags["hops"], "1");
}

#[test]
fn qald_reads_ids_languages_sparql_and_every_answer_kind() {
    let items = load("qald.json");
    assert_eq!(items.len(), 3);
    assert_eq!(
        (items[0].id.as_str(), items[0].question.as_str()),
        ("1", "Who directed Big?")
    );
    assert_eq!(
        items[0].gold.as_deref(),
        Some(&["http://x.org/Penny_Marshall".to_owned()][..])
    );
    assert!(items[0].gold_sparql.as_deref().unwrap().starts_with("SELECT ?d"));
    assert_eq!(items[0].tags["answertype"], "resource");
    assert_eq!(items[0].tags["aggregation"], "false");
    assert_eq!(
        (items[1].id.as_str(), items[1].gold.as_deref()),
        ("2", Some(&["true".to_owned()][..]))
    );
    assert_eq!(items[2].gold.as_deref(), Some(&["2".to_owned()][..]));
    // The standard form of a gold query written in one engine's dialect is the one kept.
    assert!(!items[2].gold_sparql.as_deref().unwrap().contains("ORDER BY"));
    let german = loaders::qald::load(&fixture("qald.json"), "de");
    assert!(
        german.unwrap_err().to_string().contains("no \"de\" text"),
        "question 2 has no German"
    );
}

#[test]
fn lcquad_has_gold_sparql_only_and_falls_back_to_the_intermediary_question() {
    let items = load("lcquad.json");
    assert_eq!(items[0].question, "Who directed Big?");
    assert!(items[0].gold.is_none());
    assert!(
        items[0]
            .gold_sparql
            .as_deref()
            .unwrap()
            .starts_with("SELECT DISTINCT ?uri")
    );
    assert_eq!(items[0].tags["template"], "2");
    assert_eq!(items[1].question, "What is the <genre> of <Big>");
}

#[test]
fn chatty_gen_turns_keep_their_dialogue_and_standalone_version() {
    let items = load("dialogues.json");
    assert_eq!(items.len(), 2);
    let second = &items[1];
    assert_eq!(second.id, "0-1");
    assert_eq!(second.question, "When was it released?");
    let turn = second.dialogue.as_ref().unwrap();
    assert_eq!((turn.dialogue.as_str(), turn.turn), ("0", 1));
    assert_eq!(turn.standalone, "When was Big released?");
    assert!(second.gold.is_none() && second.gold_sparql.as_deref().unwrap().contains("year"));
}

/// Gold answers written per turn as SPARQL-JSON results (the QALD form) are read, booleans and
/// literals included; a gold in neither form is refused with the turn it belongs to.
#[test]
fn chatty_gen_gold_in_sparql_json_is_read_and_an_unreadable_gold_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sparql-json.json");
    let dialogue = |answers: serde_json::Value| {
        serde_json::json!({"data": [{
            "id": "d1",
            "dialogue": ["Who directed Big?", "When was it released?", "Is it a comedy?"],
            "original": ["Who directed Big?", "When was Big released?", "Is Big a comedy?"],
            "queries": ["SELECT ?x WHERE { e:Big r:directedBy ?x }", "SELECT ?y WHERE { e:Big r:year ?y }", "ASK { e:Big r:genre e:Comedy }"],
            "answers": answers,
        }]})
        .to_string()
    };
    std::fs::write(
        &file,
        dialogue(serde_json::json!([
            {"head": {"vars": ["x"]}, "results": {"bindings": [
                {"x": {"type": "uri", "value": "http://example.org/entity/Penny_Marshall"}}
            ]}},
            {"head": {"vars": ["y"]}, "results": {"bindings": [
                {"y": {"type": "literal", "value": "1988"}}
            ]}},
            {"head": {}, "boolean": true},
        ])),
    )
    .unwrap();
    let items = loaders::load(Format::ChattyGen, &file, "en").unwrap();
    let gold: Vec<Vec<String>> = items.iter().map(|i| i.gold.clone().unwrap()).collect();
    assert_eq!(
        gold,
        [
            vec!["http://example.org/entity/Penny_Marshall".to_owned()],
            vec!["1988".to_owned()],
            vec!["true".to_owned()]
        ]
    );
    // The builder's form, a list of values per turn, still reads.
    std::fs::write(&file, dialogue(serde_json::json!([["a", "b"], [1988], [true]]))).unwrap();
    let items = loaders::load(Format::ChattyGen, &file, "en").unwrap();
    assert_eq!(items[1].gold.as_deref(), Some(&["1988".to_owned()][..]));
    // Neither form: refused, naming the turn.
    std::fs::write(&file, dialogue(serde_json::json!([["a"], {"results": "?"}, [true]]))).unwrap();
    let error = loaders::load(Format::ChattyGen, &file, "en").unwrap_err().to_string();
    assert!(error.contains("dialogue d1, turn 1"), "{error}");
}

#[test]
fn unknown_and_malformed_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd.json");
    std::fs::write(&odd, r#"{"something": 1}"#).unwrap();
    let error = Format::detect(&odd).unwrap_err().to_string();
    assert!(error.contains("--format") && error.contains("chatty-gen"), "{error}");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"questions": 5}"#).unwrap();
    let error = loaders::load(Format::Qald, &bad, "en").unwrap_err().to_string();
    assert!(error.contains("QALD-JSON") && error.contains("bad.json"), "{error}");
    let pq = dir.path().join("pq.txt");
    std::fs::write(&pq, "a question\tanswer(answer/)\n").unwrap();
    assert!(loaders::load(Format::Pathquestion, &pq, "en").is_err());
}

/// The real benchmark files, when they are beside the project.
#[test]
fn the_shared_benchmark_files_load_with_their_stated_counts() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets");
    if !shared.exists() {
        eprintln!("skipped: {} is not there", shared.display());
        return;
    }
    let count = |rel: &str| {
        let path = shared.join(rel);
        let format = Format::detect(&path).unwrap_or_else(|e| panic!("{e}"));
        loaders::load(format, &path, "en")
            .unwrap_or_else(|e| panic!("{e}"))
            .len()
    };
    // PROVENANCE.md: KB-consistent dev subsets 9,484 / 12,470 / 9,729; PQ-2H 1,908; PQL-2H 1,594;
    // QALD-9 test 150; LC-QuAD 1.0 test 1,000; KGQAn 100 each; Chatty-Gen DBpedia 94 questions.
    assert_eq!(count("metaqa/1-hop/qa_dev.txt"), 9_484);
    assert_eq!(count("metaqa/2-hop/qa_dev.txt"), 12_470);
    assert_eq!(count("metaqa/3-hop/qa_dev.txt"), 9_729);
    assert_eq!(count("pathquestion/PQ-2H.txt"), 1_908);
    assert_eq!(count("pathquestion/PQL-2H.txt"), 1_594);
    assert_eq!(count("qald9/qald-9-test-multilingual.json"), 150);
    assert_eq!(count("lcquad1/test-data.json"), 1_000);
    assert_eq!(count("kgqan/qald9_yago100.json"), 100);
    assert_eq!(count("kgqan/qald9_dblp100.json"), 100);
    assert_eq!(count("chatty-gen/dbpedia_e11_20_5_original.json"), 94);
}

/// Dialogues built from the real MetaQA dev questions load back through the Chatty-Gen loader
/// with every turn's standalone version, gold answers and tags.
#[test]
fn built_metaqa_dialogues_round_trip_through_the_chatty_gen_loader() {
    use chatty_kg_eval::dialogues::{self, BuildOptions, DialogueFile};
    let metaqa = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/metaqa");
    if !metaqa.exists() {
        eprintln!("skipped: {} is not there", metaqa.display());
        return;
    }
    let dev = |h: &str| loaders::metaqa::load(&metaqa.join(format!("{h}-hop/qa_dev.txt"))).unwrap();
    let one_hop = dev("1");
    let mut multi_hop = dev("2");
    multi_hop.extend(dev("3"));
    let options = BuildOptions {
        dialogues: 40,
        max_turns: 3,
        seed: 1,
    };
    let data = dialogues::build(&one_hop, &multi_hop, &options);
    assert_eq!(data.len(), 40);
    let answer = data.iter().filter(|d| d.tags[0]["reference"] == "answer").count();
    assert_eq!(answer, 20, "the kinds alternate");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dialogues.json");
    let file = DialogueFile {
        description: dialogues::describe(&options, &[]),
        data: data.clone(),
    };
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    let items = loaders::load(Format::detect(&path).unwrap(), &path, "en").unwrap();
    assert_eq!(items.len(), data.iter().map(|d| d.dialogue.len()).sum::<usize>());
    for item in &items {
        let turn = item.dialogue.as_ref().unwrap();
        let d = data.iter().find(|d| d.id == turn.dialogue).unwrap();
        assert_eq!(item.question, d.dialogue[turn.turn]);
        assert_eq!(turn.standalone, d.original[turn.turn]);
        assert_eq!(item.gold.as_ref().unwrap(), &d.answers[turn.turn]);
        assert!(!d.answers[turn.turn].is_empty());
        assert_eq!(item.tags["reference"], d.tags[0]["reference"]);
        assert_eq!(item.tags["seed"], d.seed_label);
        if turn.turn == 0 {
            assert_eq!(item.question, turn.standalone, "turn 1 names its referent");
        } else {
            // Later turns: the name is gone from what is asked, a pronoun stands for it, and the
            // standalone version names the referent.
            assert!(!item.question.contains(&d.seed_label), "{}", item.question);
            assert!(turn.standalone.contains(&d.seed_label), "{}", turn.standalone);
            assert!(
                ["they", "them", "their", "it", "its"]
                    .iter()
                    .any(|p| format!(" {} ", item.question).contains(&format!(" {p} "))),
                "{}",
                item.question
            );
        }
    }
    // The answer kind's referent is the single gold answer of turn 1.
    for d in data.iter().filter(|d| d.tags[0]["reference"] == "answer") {
        assert_eq!(d.answers[0], vec![d.seed_label.clone()]);
    }
}
