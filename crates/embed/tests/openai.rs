//! [`OpenAiEmbedder`] against local HTTP servers: one that serves the real all-MiniLM-L6-v2 vectors
//! (computed in-process, so the HTTP path must give exactly the in-process similarities, called
//! from a `spawn_blocking` thread as the agents call it and from plain synchronous code as the CLI
//! does), and misbehaving ones (an error status, garbage, the wrong number of vectors, a closed
//! port), each a clear error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_embed::{EmbedError, Embedder, OpenAiEmbedder, OpenAiEmbeddingSettings, cosine};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn settings(server: &MockServer, api_key_env: &str) -> OpenAiEmbeddingSettings {
    OpenAiEmbeddingSettings {
        base_url: format!("{}/v1/", server.uri()),
        model: "all-minilm-l6-v2".into(),
        api_key_env: api_key_env.into(),
        timeout_secs: 5,
    }
}

/// Texts of the request's `input`.
fn inputs(request: &Request) -> Vec<String> {
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

#[cfg(feature = "candle")]
mod real_vectors {
    use super::*;
    use chatty_kg_embed::MiniLmEmbedder;
    use chatty_kg_models::{catalog, model_for_tests};
    use std::sync::Arc;

    /// An embedding server answering with MiniLM's own vectors, unnormalised (times 3, and in
    /// reverse order with their `index`), so the client's normalising and ordering are tested too.
    struct MiniLm(Arc<MiniLmEmbedder>);

    impl Respond for MiniLm {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let texts = inputs(request);
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = self.0.embed(&refs).unwrap();
            let mut data: Vec<Value> = vectors
                .into_iter()
                .enumerate()
                .map(|(index, v)| json!({"object": "embedding", "index": index, "embedding": v.iter().map(|x| x * 3.0).collect::<Vec<f32>>()}))
                .collect();
            data.reverse();
            ResponseTemplate::new(200)
                .set_body_json(json!({"object": "list", "data": data, "model": "all-minilm-l6-v2"}))
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn served_vectors_give_the_in_process_similarities() {
        let Some(dir) = model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL) else {
            return;
        };
        let local = Arc::new(MiniLmEmbedder::load(&dir).unwrap());
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/embeddings"))
            // The key comes from the named variable (one cargo sets for every test run).
            .and(header(
                "authorization",
                format!("Bearer {}", env!("CARGO_PKG_NAME")).as_str(),
            ))
            .respond_with(MiniLm(local.clone()))
            .mount(&server)
            .await;
        let remote = Arc::new(OpenAiEmbedder::new(settings(&server, "CARGO_PKG_NAME")).unwrap());
        assert_eq!(remote.dimension(), 0, "unknown before the first answer");
        let phrases = [
            "directed by",
            "director",
            "release year",
            "starred actors",
            "The weather is lovely today.",
        ];
        // As the agents call it: on a blocking thread of the runtime.
        let served = {
            let remote = remote.clone();
            tokio::task::spawn_blocking(move || remote.embed(&phrases))
                .await
                .unwrap()
                .unwrap()
        };
        let own = local.embed(&phrases).unwrap();
        assert_eq!(remote.dimension(), 384);
        for i in 0..phrases.len() {
            let norm: f32 = served[i].iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "normalised: {norm}");
            for j in 0..phrases.len() {
                let (a, b) = (cosine(&served[i], &served[j]), cosine(&own[i], &own[j]));
                assert!(
                    (a - b).abs() < 1e-5,
                    "{} / {}: {a} served, {b} in process",
                    phrases[i],
                    phrases[j]
                );
            }
        }
        // As the CLI calls it: from synchronous code with no runtime around.
        let remote2 = remote.clone();
        let again = std::thread::spawn(move || remote2.embed(&["director"]))
            .join()
            .unwrap()
            .unwrap();
        assert!((cosine(&again[0], &own[1]) - 1.0).abs() < 1e-5);
        // Long lists go in batches.
        let remote3 = remote.clone();
        let vectors = tokio::task::spawn_blocking(move || {
            let many: Vec<String> = (0..300).map(|i| format!("label {i}")).collect();
            let refs: Vec<&str> = many.iter().map(String::as_str).collect();
            remote3.embed(&refs)
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(vectors.len(), 300);
        assert!(server.received_requests().await.unwrap().len() >= 4);
    }
}

async fn failing(template: ResponseTemplate) -> EmbedError {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(template).mount(&server).await;
    let embedder = OpenAiEmbedder::new(settings(&server, "CHATTY_KG_TEST_NO_SUCH_VARIABLE")).unwrap();
    tokio::task::spawn_blocking(move || embedder.embed(&["a", "b"]))
        .await
        .unwrap()
        .unwrap_err()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_misbehaving_server_is_a_clear_error() {
    let error = failing(ResponseTemplate::new(500).set_body_string("model not loaded")).await;
    assert!(
        matches!(&error, EmbedError::Server(m) if m.contains("HTTP 500") && m.contains("model not loaded")),
        "{error}"
    );
    let error = failing(ResponseTemplate::new(200).set_body_string("<html>")).await;
    assert!(error.to_string().contains("not an embeddings response"), "{error}");
    let one = json!({"data": [{"index": 0, "embedding": [1.0, 0.0]}]});
    let error = failing(ResponseTemplate::new(200).set_body_json(one)).await;
    assert!(error.to_string().contains("1 vectors for 2 texts"), "{error}");
    let ragged = json!({"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}]});
    let error = failing(ResponseTemplate::new(200).set_body_json(ragged)).await;
    assert!(error.to_string().contains("dimensions"), "{error}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let embedder = OpenAiEmbedder::new(OpenAiEmbeddingSettings {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        ..OpenAiEmbeddingSettings::default()
    })
    .unwrap();
    let error = std::thread::spawn(move || embedder.embed(&["a"]))
        .join()
        .unwrap()
        .unwrap_err();
    assert!(
        error.to_string().contains(&format!("127.0.0.1:{port}/v1/embeddings")),
        "{error}"
    );
}
