//! The embedded llama.cpp backend with a real model: SmolLM2-135M (small and fast).
//!
//! Needs the model (`chatty-kg models fetch smollm2-135m`); without it the tests skip with a
//! message, unless `CHATTY_KG_REQUIRE_MODELS=1` (set by CI) turns the skip into a failure.

#![cfg(feature = "llama")]
// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_llm::llama::{LlamaChatModel, LlamaSettings};
use chatty_kg_llm::prompts::PromptLibrary;
use chatty_kg_llm::reply::parse_reply;
use chatty_kg_llm::{ChatModel, ChatRequest, FinishReason, LlmError, Message};
use chatty_kg_models::{catalog, model_for_tests};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, OnceLock};

/// The tests share one model (one worker, one KV cache); they take turns so that one test's
/// prompts never land between another's (the prefix-reuse test depends on it).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn model() -> Option<Arc<LlamaChatModel>> {
    static MODEL: OnceLock<Option<Arc<LlamaChatModel>>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = model_for_tests(catalog::SMALL_CHAT_MODEL)?;
            let settings = LlamaSettings {
                context_size: 2048,
                max_tokens: 200,
                ..LlamaSettings::default()
            };
            Some(Arc::new(LlamaChatModel::load(&path, &settings).unwrap()))
        })
        .clone()
}

fn triple_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "triples": {
                "type": "array",
                "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
                "minItems": 1, "maxItems": 3
            }
        },
        "required": ["triples"],
        "additionalProperties": false
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Triples {
    triples: Vec<[String; 3]>,
}

#[tokio::test]
async fn grammar_constrained_triple_extraction_is_schema_valid_json() {
    let _turn = SERIAL.lock().await;
    let Some(model) = model() else { return };
    let request = ChatRequest::new(
        "qir",
        vec![
            Message::system("Extract knowledge-graph triples [subject, relation, object] from the question. Use ?answer for the unknown. Answer with JSON."),
            Message::user("Who directed the movie Forrest Gump?"),
        ],
    )
    .with_schema("triples", triple_schema());
    let response = model.complete(&request).await.unwrap();
    let triples: Triples = parse_reply(&response.text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !triples.triples.is_empty() && triples.triples.len() <= 3,
        "{}",
        response.text
    );
    assert_eq!(response.finish, FinishReason::Stop);
    assert!(
        response.usage.input_tokens > 20 && response.usage.output_tokens > 5,
        "{:?}",
        response.usage
    );
    // Bare JSON, nothing around it: the grammar allows nothing else.
    assert!(
        response.text.starts_with('{') && response.text.ends_with('}'),
        "{}",
        response.text
    );
}

#[tokio::test]
async fn the_agents_prompts_render_into_valid_json_answers() {
    let _turn = SERIAL.lock().await;
    let Some(model) = model() else { return };
    let prompts = PromptLibrary::builtin().unwrap();
    let messages = prompts
        .render("matching", json!({"question": "Who directed Alien?", "mention": "alien", "candidates": ["Aliens", "Alien", "Alien Nation"], "feedback": null}))
        .unwrap();
    let labels = ["Aliens", "Alien", "Alien Nation"];
    let schema = json!({"type": "object", "properties": {"value": {"enum": labels}}, "required": ["value"], "additionalProperties": false});
    let response = model
        .complete(&ChatRequest::new("matching", messages).with_schema("pick", schema))
        .await
        .unwrap();
    #[derive(Deserialize)]
    struct Pick {
        value: String,
    }
    let pick: Pick = parse_reply(&response.text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        labels.contains(&pick.value.as_str()),
        "the enum constrains the pick: {}",
        response.text
    );
}

#[tokio::test]
async fn a_shared_prefix_is_not_evaluated_twice() {
    let _turn = SERIAL.lock().await;
    let Some(model) = model() else { return };
    // Long enough that whole blocks of the prefix can be reused.
    let system = Message::system("You answer questions about films in one short sentence. ".repeat(20));
    let ask =
        |question: &str| ChatRequest::new("chat", vec![system.clone(), Message::user(question)]).with_max_tokens(8);
    let first = model.complete(&ask("Who directed Alien?")).await.unwrap();
    let second = model.complete(&ask("Who wrote Dune?")).await.unwrap();
    let timings = second.timings.unwrap();
    assert!(
        (timings.prompt_evaluated as usize) < second.usage.input_tokens as usize / 2,
        "{} of {} prompt tokens evaluated again (first call: {:?})",
        timings.prompt_evaluated,
        second.usage.input_tokens,
        first.timings
    );
}

/// The same question gets the same answer whatever was asked before it: asked after an unrelated
/// prompt (evaluated from scratch) and after one that shares part of its prefix (reused).
#[tokio::test]
async fn an_answer_does_not_depend_on_the_question_before_it() {
    let _turn = SERIAL.lock().await;
    let Some(model) = model() else { return };
    let system = Message::system("You describe rivers, lakes and mountains in plain words. ".repeat(10));
    let ask =
        |question: &str| ChatRequest::new("chat", vec![system.clone(), Message::user(question)]).with_max_tokens(48);
    let unrelated = ChatRequest::new("chat", vec![Message::user("Say hello.")]).with_max_tokens(4);
    let question = "Describe the longest river of Peru, where it starts and where it ends.";
    model.complete(&unrelated).await.unwrap();
    let alone = model.complete(&ask(question)).await.unwrap();
    model
        .complete(&ask("Describe the highest mountain of Peru."))
        .await
        .unwrap();
    let after = model.complete(&ask(question)).await.unwrap();
    assert!(
        after.timings.as_ref().unwrap().prompt_evaluated < after.usage.input_tokens as u32,
        "the shared prefix was reused"
    );
    assert_eq!(alone.text, after.text);
}

#[tokio::test]
async fn one_model_serves_concurrent_callers() {
    let _turn = SERIAL.lock().await;
    let Some(model) = model() else { return };
    let tasks: Vec<_> = (0..4)
        .map(|i| {
            let model = model.clone();
            tokio::spawn(async move {
                let request =
                    ChatRequest::new("chat", vec![Message::user(format!("Count to {i}."))]).with_max_tokens(6);
                model.complete(&request).await
            })
        })
        .collect();
    for task in tasks {
        let response = task.await.unwrap().unwrap();
        assert!(response.usage.output_tokens >= 1 && response.usage.output_tokens <= 6);
    }
}

#[tokio::test]
async fn too_long_prompts_and_bad_files_are_typed_errors() {
    let _turn = SERIAL.lock().await;
    let Some(model) = model() else { return };
    let huge = ChatRequest::new("chat", vec![Message::user("film ".repeat(5000))]);
    assert!(matches!(
        model.complete(&huge).await,
        Err(LlmError::PromptTooLong { context: 2048, .. })
    ));

    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.gguf");
    std::fs::write(&fake, b"this is not a gguf file").unwrap();
    for path in [fake, dir.path().join("missing.gguf")] {
        match LlamaChatModel::load(&path, &LlamaSettings::default()) {
            Err(LlmError::ModelLoad { path: p, .. }) => assert!(p.ends_with(".gguf")),
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("loaded {}", path.display()),
        }
    }
}
