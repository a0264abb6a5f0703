//! The OpenAI-compatible client against a local HTTP server that misbehaves on purpose: status
//! codes, slow answers, malformed and truncated bodies, servers that reject `response_format`.

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_llm::openai::{JsonMode, OpenAiChatModel, OpenAiSettings};
use chatty_kg_llm::{ChatModel, ChatRequest, FinishReason, LlmError, Message};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

fn settings(base_url: &str) -> OpenAiSettings {
    OpenAiSettings {
        base_url: base_url.into(),
        model: "test-model".into(),
        // Set by cargo (and nextest) for every test process: a key we can predict.
        api_key_env: "CARGO_MANIFEST_DIR".into(),
        timeout_secs: 1,
        max_retries: 2,
        backoff_ms: 1,
        ..OpenAiSettings::default()
    }
}

fn request() -> ChatRequest {
    ChatRequest::new(
        "qir",
        vec![
            Message::system("Extract triples."),
            Message::user("Who directed Alien?"),
        ],
    )
    .with_schema(
        "qir",
        json!({"type": "object", "properties": {"triples": {"type": "array"}}, "required": ["triples"]}),
    )
}

fn completion(content: &str, finish: &str) -> Value {
    json!({
        "id": "x", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
    })
}

/// Every request not matched by an earlier mock gets `{}`.
async fn answer_empty_object(server: &MockServer) {
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion("{}", "stop")))
        .mount(server)
        .await;
}

async fn requests_to(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r: &Request| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

#[tokio::test]
async fn sends_a_standard_request_and_reads_usage() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(r#"{"triples": []}"#, "stop")))
        .mount(&server)
        .await;
    let model = OpenAiChatModel::new(settings(&format!("{}/v1/", server.uri()))).unwrap();
    let response = model.complete(&request()).await.unwrap();
    assert_eq!(response.text, r#"{"triples": []}"#);
    assert_eq!((response.usage.input_tokens, response.usage.output_tokens), (42, 7));
    assert_eq!((response.retries, response.finish), (0, FinishReason::Stop));

    let received = server.received_requests().await.unwrap();
    let key = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    assert_eq!(
        received[0]
            .headers
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_owned()),
        Some(format!("Bearer {key}"))
    );
    let body: Value = serde_json::from_slice(&received[0].body).unwrap();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], false);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Extract triples."})
    );
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["required"],
        json!(["triples"])
    );
    assert_eq!(body["max_tokens"], 512);
}

#[tokio::test]
async fn rate_limit_is_retried_honouring_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_string("slow down"),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    answer_empty_object(&server).await;
    let model = OpenAiChatModel::new(settings(&server.uri())).unwrap();
    let response = model.complete(&request()).await.unwrap();
    assert_eq!(response.retries, 1);
    assert_eq!(requests_to(&server).await.len(), 2);
}

#[tokio::test]
async fn server_errors_exhaust_bounded_retries() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .mount(&server)
        .await;
    let model = OpenAiChatModel::new(settings(&server.uri())).unwrap();
    let error = model.complete(&request()).await.unwrap_err();
    match &error {
        LlmError::RetriesExhausted { attempts, last } => {
            assert_eq!(*attempts, 3);
            assert!(
                matches!(**last, LlmError::Http { status: 503, ref body, .. } if body == "overloaded"),
                "{last}"
            );
        }
        other => panic!("{other}"),
    }
    assert_eq!(requests_to(&server).await.len(), 3, "1 attempt + max_retries");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_string(r#"{"error": "invalid api key"}"#))
        .mount(&server)
        .await;
    let model = OpenAiChatModel::new(settings(&server.uri())).unwrap();
    let error = model.complete(&request()).await.unwrap_err();
    assert!(matches!(error, LlmError::Http { status: 401, .. }), "{error}");
    assert!(error.to_string().contains("invalid api key"), "{error}");
    assert_eq!(requests_to(&server).await.len(), 1);
}

#[tokio::test]
async fn slow_answers_time_out_and_are_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_delay(Duration::from_secs(3))
                .set_body_json(completion("{}", "stop")),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(r#"{"triples": [1]}"#, "stop")))
        .mount(&server)
        .await;
    let model = OpenAiChatModel::new(settings(&server.uri())).unwrap();
    let response = model.complete(&request()).await.unwrap();
    assert_eq!((response.text.as_str(), response.retries), (r#"{"triples": [1]}"#, 1));

    // Always slow: a typed timeout once retries run out.
    let slow = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
        .mount(&slow)
        .await;
    let model = OpenAiChatModel::new(OpenAiSettings {
        max_retries: 1,
        ..settings(&slow.uri())
    })
    .unwrap();
    let error = model.complete(&request()).await.unwrap_err();
    assert!(
        matches!(&error, LlmError::RetriesExhausted { attempts: 2, last } if matches!(**last, LlmError::Timeout { seconds: 1, .. })),
        "{error}"
    );
}

#[tokio::test]
async fn malformed_bodies_are_typed_errors() {
    let cases = [
        ("this is not json", "not JSON"),
        (r#"{"choices": []}"#, "no choices"),
        (
            r#"{"choices": [{"message": {"role": "assistant", "content": null}, "finish_reason": "stop"}]}"#,
            "no message content",
        ),
        (r#"{"choices": [{"finish_reason": "stop"}]}"#, "no message content"),
        (r#"{"choices": "nope"}"#, "not JSON"),
    ];
    for (body, expected) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_string(body))
            .mount(&server)
            .await;
        let model = OpenAiChatModel::new(settings(&server.uri())).unwrap();
        let error = model.complete(&request()).await.unwrap_err();
        assert!(matches!(error, LlmError::MalformedResponse { .. }), "{body}: {error}");
        assert!(error.to_string().contains(expected), "{body}: {error}");
        assert_eq!(requests_to(&server).await.len(), 1, "a malformed 200 is not retried");
    }
}

#[tokio::test]
async fn length_cut_json_is_truncated_but_plain_text_is_kept() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(r#"{"triples": [["a", "#, "length")))
        .mount(&server)
        .await;
    let model = OpenAiChatModel::new(settings(&server.uri())).unwrap();
    let error = model.complete(&request().with_max_tokens(5)).await.unwrap_err();
    assert!(matches!(error, LlmError::Truncated { max_tokens: 5 }), "{error}");
    let plain = ChatRequest::new("chat", vec![Message::user("Say something long")]);
    let response = model.complete(&plain).await.unwrap();
    assert_eq!(response.finish, FinishReason::Length);
    assert!(requests_to(&server).await[1].get("response_format").is_none());
}

#[tokio::test]
async fn falls_back_when_the_server_rejects_json_schema() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"response_format": {"type": "json_schema"}})))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_string(r#"{"error": "response_format.type json_schema is unsupported"}"#),
        )
        .mount(&server)
        .await;
    answer_empty_object(&server).await;
    let model = OpenAiChatModel::new(settings(&server.uri())).unwrap();
    model.complete(&request()).await.unwrap();
    model.complete(&request()).await.unwrap();
    let formats: Vec<Value> = requests_to(&server)
        .await
        .iter()
        .map(|b| b["response_format"]["type"].clone())
        .collect();
    assert_eq!(
        formats,
        vec![json!("json_schema"), json!("json_object"), json!("json_object")],
        "the fallback is remembered"
    );
    assert_eq!(
        requests_to(&server).await[1]["response_format"]["schema"]["required"],
        json!(["triples"])
    );

    // With an explicit mode there is no fallback: the 400 is the answer.
    let strict = OpenAiChatModel::new(OpenAiSettings {
        json_mode: JsonMode::JsonSchema,
        ..settings(&server.uri())
    })
    .unwrap();
    assert!(matches!(
        strict.complete(&request()).await,
        Err(LlmError::Http { status: 400, .. })
    ));
}

/// llama-cpp-python answers `json_schema` with a 500 naming the field, then a server may also
/// refuse the `schema` extension of `json_object`: each step falls back, down to no format.
#[tokio::test]
async fn falls_back_step_by_step_down_to_no_response_format() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"response_format": {"type": "json_schema"}})))
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_string("body.response_format.type: Input should be 'text' or 'json_object'"),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"response_format": {"type": "json_object"}})))
        .respond_with(ResponseTemplate::new(422).set_body_string(r#"{"detail": "response_format is not supported"}"#))
        .mount(&server)
        .await;
    answer_empty_object(&server).await;
    let model = OpenAiChatModel::new(settings(&server.uri())).unwrap();
    let response = model.complete(&request()).await.unwrap();
    assert_eq!(response.retries, 0, "format fallbacks are not retries");
    let bodies = requests_to(&server).await;
    assert_eq!(bodies.len(), 4);
    assert!(
        bodies[1]["response_format"].get("schema").is_some() && bodies[2]["response_format"].get("schema").is_none()
    );
    assert!(bodies[3].get("response_format").is_none());
    // A plain 500 is still a transient error, retried.
    let flaky = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("internal error"))
        .mount(&flaky)
        .await;
    let model = OpenAiChatModel::new(settings(&flaky.uri())).unwrap();
    assert!(matches!(
        model.complete(&request()).await,
        Err(LlmError::RetriesExhausted { attempts: 3, .. })
    ));
}

/// A server that sends headers promising 1000 bytes, sends 40, and hangs up.
fn truncating_server() -> (String, std::thread::JoinHandle<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut served = 0;
        listener.set_nonblocking(false).unwrap();
        for stream in listener.incoming().take(3) {
            let mut stream = stream.unwrap();
            stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
            let mut buf = [0u8; 65536];
            let _ = stream.read(&mut buf);
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n";
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(br#"{"choices": [{"message": {"content": "#).unwrap();
            served += 1;
        }
        served
    });
    (url, handle)
}

#[tokio::test]
async fn a_body_cut_mid_way_is_retried_then_reported() {
    let (url, server) = truncating_server();
    let model = OpenAiChatModel::new(settings(&url)).unwrap();
    let error = model.complete(&request()).await.unwrap_err();
    assert!(
        matches!(&error, LlmError::RetriesExhausted { attempts: 3, last } if matches!(**last, LlmError::Unreachable { .. })),
        "{error}"
    );
    assert_eq!(server.join().unwrap(), 3);
}

#[tokio::test]
async fn unreachable_servers_and_missing_keys() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let model = OpenAiChatModel::new(OpenAiSettings {
        max_retries: 1,
        ..settings(&format!("http://127.0.0.1:{port}/v1"))
    })
    .unwrap();
    let error = model.complete(&request()).await.unwrap_err();
    assert!(
        matches!(&error, LlmError::RetriesExhausted { last, .. } if matches!(**last, LlmError::Unreachable { .. })),
        "{error}"
    );
    assert!(error.to_string().contains(&format!("127.0.0.1:{port}")), "{error}");

    let missing = OpenAiChatModel::new(OpenAiSettings {
        api_key_env: "CHATTY_KG_TEST_SURELY_UNSET_KEY".into(),
        ..OpenAiSettings::default()
    });
    assert!(matches!(missing, Err(LlmError::MissingApiKey { .. })));
}
