//! The remote backend against misbehaving HTTP servers on loopback: wrong status, garbage,
//! silence, a closed port. Plus what a well-behaved request looks like (method, auth, headers,
//! result formats). The happy path against a real endpoint is in `backend_suite.rs` (Virtuoso).

// Helpers outside #[test] functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_graph::{
    EndpointAuth, EndpointSettings, GraphError, GraphSettings, HttpMethod, KnowledgeGraph, QueryResults, ResultsFormat,
    SparqlEndpoint,
};
use wiremock::matchers::{body_string_contains, header, method, query_param_contains};
use wiremock::{Mock, MockServer, ResponseTemplate};

const JSON: &str = "application/sparql-results+json";

fn endpoint(url: String, tweak: impl FnOnce(&mut EndpointSettings)) -> SparqlEndpoint {
    let mut settings = EndpointSettings::new(url);
    tweak(&mut settings);
    SparqlEndpoint::new(settings, GraphSettings::default()).unwrap()
}

/// A server that answers every GET with `response`.
async fn serve_get(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET")).respond_with(response).mount(&server).await;
    server
}

fn one_row() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(
        r#"{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"uri","value":"http://e/a"}}]}}"#,
        JSON,
    )
}

#[tokio::test]
async fn get_with_auth_and_custom_headers() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(query_param_contains("query", "SELECT"))
        .and(header("authorization", "Bearer s3cret"))
        .and(header("x-api-client", "tests"))
        .and(header("accept", JSON))
        .respond_with(one_row())
        .expect(1)
        .mount(&server)
        .await;
    let kg = endpoint(format!("{}/sparql", server.uri()), |e| {
        e.auth = Some(EndpointAuth::Bearer { token: "s3cret".into() });
        e.headers.insert("X-Api-Client".into(), "tests".into());
    });
    let QueryResults::Solutions(s) = kg.query_text("SELECT ?x WHERE { ?x ?p ?o }").await.unwrap() else {
        panic!()
    };
    assert_eq!(s.rows.len(), 1);
}

#[tokio::test]
async fn post_for_long_queries_and_basic_auth() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("query=ASK"))
        .and(header("authorization", "Basic dXNlcjpwYXNz"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(r#"{"head":{},"boolean":true}"#, JSON))
        .expect(2)
        .mount(&server)
        .await;
    let basic = |e: &mut EndpointSettings| {
        e.auth = Some(EndpointAuth::Basic {
            username: "user".into(),
            password: "pass".into(),
        })
    };
    let long = format!("ASK {{ ?s ?p \"{}\" }}", "x".repeat(3000));
    let kg = endpoint(server.uri(), basic);
    assert_eq!(kg.query_text(&long).await.unwrap(), QueryResults::Boolean(true));
    let kg = endpoint(server.uri(), |e| {
        basic(e);
        e.method = HttpMethod::Post;
    });
    assert_eq!(
        kg.query_text("ASK { ?s ?p ?o }").await.unwrap(),
        QueryResults::Boolean(true)
    );
}

#[tokio::test]
async fn xml_results() {
    let server = MockServer::start().await;
    Mock::given(header("accept", "application/sparql-results+xml"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="l"/></head>
<results><result><binding name="l"><literal xml:lang="en">Tom Hanks</literal></binding></result></results></sparql>"#,
            "application/sparql-results+xml",
        ))
        .mount(&server)
        .await;
    let kg = endpoint(server.uri(), |e| e.results_format = ResultsFormat::Xml);
    let QueryResults::Solutions(s) = kg.query_text("SELECT ?l WHERE { ?s ?p ?l }").await.unwrap() else {
        panic!()
    };
    assert_eq!(s.column("l").next().unwrap().to_string(), "\"Tom Hanks\"@en");
}

#[tokio::test]
async fn http_errors_carry_status_and_body() {
    let server =
        serve_get(ResponseTemplate::new(500).set_body_string("Virtuoso 37000 Error SP030: SPARQL compiler, line 1"))
            .await;
    let error = endpoint(server.uri(), |_| {})
        .query_text("SELECT * WHERE { ?s ?p ?o }")
        .await
        .unwrap_err();
    match &error {
        GraphError::Http { status, body, .. } => {
            assert_eq!(*status, 500);
            assert!(body.contains("SP030"), "{body}");
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn unparsable_results_are_typed_errors() {
    for (body, content_type) in [
        ("{\"head\": {\"vars\": [\"x\"]}, \"results\": {\"bindings\": [", JSON),
        ("<html>Service unavailable</html>", "text/html"),
        ("", JSON),
    ] {
        let server = serve_get(ResponseTemplate::new(200).set_body_raw(body, content_type)).await;
        let error = endpoint(server.uri(), |_| {})
            .query_text("SELECT * WHERE { ?s ?p ?o }")
            .await
            .unwrap_err();
        assert!(matches!(error, GraphError::BadResults { .. }), "{body:?}: {error}");
    }
}

#[tokio::test]
async fn silent_endpoint_times_out() {
    // Accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let kg = endpoint(format!("http://{address}/sparql"), |e| e.timeout_secs = 0.3);
    let error = kg.query_text("ASK { ?s ?p ?o }").await.unwrap_err();
    assert!(matches!(error, GraphError::EndpointTimeout { .. }), "{error}");
    // Entity search goes through the same path.
    assert!(matches!(
        kg.search_entities("tom hanks", 5).await,
        Err(GraphError::EndpointTimeout { .. })
    ));
}

#[tokio::test]
async fn closed_port_is_unreachable() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let error = endpoint(format!("http://127.0.0.1:{port}/sparql"), |_| {})
        .query_text("ASK { ?s ?p ?o }")
        .await
        .unwrap_err();
    assert!(matches!(error, GraphError::Unreachable { .. }), "{error}");
    assert!(error.to_string().contains(&port.to_string()));
}

#[test]
fn bad_configuration_is_refused() {
    for url in ["not a url", "ftp://example.org/sparql"] {
        assert!(matches!(
            SparqlEndpoint::new(EndpointSettings::new(url), GraphSettings::default()),
            Err(GraphError::Config { .. })
        ));
    }
    let mut settings = EndpointSettings::new("http://127.0.0.1/sparql");
    settings.headers.insert("bad header".into(), "x".into());
    assert!(matches!(
        SparqlEndpoint::new(settings, GraphSettings::default()),
        Err(GraphError::Config { .. })
    ));
}

#[tokio::test]
async fn refused_queries_never_reach_the_network() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(one_row())
        .expect(0)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(one_row())
        .expect(0)
        .mount(&server)
        .await;
    let kg = endpoint(server.uri(), |_| {});
    assert!(matches!(
        kg.query_text("DELETE WHERE { ?s ?p ?o }").await,
        Err(GraphError::NotReadOnly { .. })
    ));
}

/// The query text as the endpoint received it (GET parameter or POST form field).
fn sent_query(request: &wiremock::Request) -> String {
    let from_url = request
        .url
        .query_pairs()
        .find(|(k, _)| k == "query")
        .map(|(_, v)| v.into_owned());
    from_url.unwrap_or_else(|| {
        url::form_urlencoded::parse(&request.body)
            .find(|(k, _)| k == "query")
            .map(|(_, v)| v.into_owned())
            .unwrap()
    })
}

/// A SELECT without LIMIT goes out with `LIMIT max_rows+1` (one more than kept, so truncation
/// shows); a smaller LIMIT and an OFFSET are kept; ASK is sent as written.
#[tokio::test]
async fn select_goes_out_with_a_limit() {
    let server = serve_get(one_row()).await;
    let settings = GraphSettings {
        max_rows: 100,
        ..GraphSettings::default()
    };
    let kg = SparqlEndpoint::new(EndpointSettings::new(server.uri()), settings).unwrap();
    for text in [
        "SELECT ?x WHERE { ?x ?p ?o }",
        "SELECT ?x WHERE { ?x ?p ?o } LIMIT 5",
        "SELECT ?x WHERE { ?x ?p ?o } LIMIT 100000 OFFSET 20",
    ] {
        kg.query_text(text).await.unwrap();
    }
    let sent: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(sent_query)
        .collect();
    assert!(sent[0].trim_end().ends_with("LIMIT 101"), "{}", sent[0]);
    assert!(sent[1].trim_end().ends_with("LIMIT 5"), "{}", sent[1]);
    assert!(!sent[1].contains("101"), "{}", sent[1]);
    assert!(sent[2].trim_end().ends_with("OFFSET 20 LIMIT 101"), "{}", sent[2]);
}
