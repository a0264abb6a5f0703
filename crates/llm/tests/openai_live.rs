//! The OpenAI-compatible client against a real server: llama-cpp-python's OpenAI-compatible
//! server (started by `scripts/openai-server.sh`, from `scripts/test.sh`) serving SmolLM2.
//!
//! Skips without `CHATTY_KG_TEST_OPENAI_URL`, unless `CHATTY_KG_REQUIRE_OPENAI_SERVER=1` (CI).

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_llm::openai::{OpenAiChatModel, OpenAiSettings};
use chatty_kg_llm::reply::parse_reply;
use chatty_kg_llm::{ChatModel, ChatRequest, Message};
use serde::Deserialize;
use serde_json::json;
use std::io::Write;

fn server() -> Option<String> {
    match std::env::var("CHATTY_KG_TEST_OPENAI_URL") {
        Ok(url) => Some(url),
        Err(_) => {
            assert!(
                std::env::var("CHATTY_KG_REQUIRE_OPENAI_SERVER").is_err(),
                "CHATTY_KG_TEST_OPENAI_URL is not set but the live server test is required"
            );
            let mut stderr = std::fs::OpenOptions::new().write(true).open("/dev/stderr").unwrap();
            let _ = writeln!(
                stderr,
                "skipped: no OpenAI-compatible server (CHATTY_KG_TEST_OPENAI_URL)"
            );
            None
        }
    }
}

fn client(url: String) -> OpenAiChatModel {
    OpenAiChatModel::new(OpenAiSettings {
        base_url: url,
        model: "smollm2".into(),
        api_key_env: "CHATTY_KG_TEST_NO_KEY".into(),
        max_tokens: 200,
        timeout_secs: 120,
        ..OpenAiSettings::default()
    })
    .unwrap()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Triples {
    triples: Vec<[String; 3]>,
}

#[tokio::test]
async fn structured_and_plain_answers_from_a_real_server() {
    let Some(url) = server() else { return };
    let model = client(url);
    let schema = json!({
        "type": "object",
        "properties": {"triples": {"type": "array", "minItems": 1, "maxItems": 3,
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3}}},
        "required": ["triples"], "additionalProperties": false
    });
    let request = ChatRequest::new(
        "qir",
        vec![
            Message::system("Extract knowledge-graph triples [subject, relation, object] from the question. Use ?answer for the unknown. Answer with JSON."),
            Message::user("Who directed the movie Forrest Gump?"),
        ],
    )
    .with_schema("triples", schema);
    let response = model.complete(&request).await.unwrap();
    let triples: Triples = parse_reply(&response.text).unwrap_or_else(|e| panic!("{e}"));
    assert!(!triples.triples.is_empty(), "{}", response.text);
    assert!(
        response.usage.input_tokens > 10 && response.usage.output_tokens > 0,
        "{:?}",
        response.usage
    );

    let plain = ChatRequest::new("chat", vec![Message::user("Say hello.")]).with_max_tokens(10);
    let response = model.complete(&plain).await.unwrap();
    assert!(!response.text.trim().is_empty());
    assert!(response.usage.output_tokens <= 10, "{:?}", response.usage);
}
