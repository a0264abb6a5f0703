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

/// Credentials in the URL, a password, a bearer token, a header: none of them in an error, a
/// description, a log line or a debug print; the URL is still named without them.
#[tokio::test]
async fn secrets_never_come_back() {
    const SECRETS: [&str; 5] = ["s3cret-pw", "basic-pw", "bearer-tok", "hdr-value", "qkey-123"];
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let server = serve_get(ResponseTemplate::new(500).set_body_string("no")).await;
    let address = server.address();
    for url in [
        format!("http://alice:s3cret-pw@127.0.0.1:{port}/sparql?apikey=qkey-123"),
        format!("http://alice:s3cret-pw@{address}/sparql?apikey=qkey-123"),
    ] {
        let settings = |auth: EndpointAuth| {
            let mut e = EndpointSettings::new(url.clone());
            e.auth = Some(auth);
            e.headers.insert("X-Api-Key".into(), "hdr-value".into());
            e
        };
        for auth in [
            EndpointAuth::Basic {
                username: "bob".into(),
                password: "basic-pw".into(),
            },
            EndpointAuth::Bearer {
                token: "bearer-tok".into(),
            },
        ] {
            let settings = settings(auth);
            let kg = SparqlEndpoint::new(settings.clone(), GraphSettings::default()).unwrap();
            let error = kg.query_text("ASK { ?s ?p ?o }").await.unwrap_err();
            let shown = [
                error.to_string(),
                format!("{error:?}"),
                kg.describe(),
                kg.shown_url().to_owned(),
                format!("{settings:?}"),
            ];
            for text in &shown {
                for secret in SECRETS {
                    assert!(!text.contains(secret), "{secret} in {text}");
                }
            }
            assert!(kg.describe().contains("/sparql"), "{}", kg.describe());
        }
    }
    // A URL that cannot be parsed is not shown at all: it could be anything.
    let error = SparqlEndpoint::new(EndpointSettings::new("ht!tp://u:s3cret-pw@x"), GraphSettings::default())
        .err()
        .unwrap();
    assert!(!error.to_string().contains("s3cret-pw"), "{error}");
}

/// The configured headers and credentials go to the endpoint only: a redirect within its origin
/// is followed (and carries them), one to another origin (another port here) is refused before
/// anything is sent there, with an error saying why.
#[tokio::test]
async fn headers_never_follow_a_redirect_to_another_origin() {
    let elsewhere = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(one_row())
        .mount(&elsewhere)
        .await;
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/moved"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", format!("{}/sparql", elsewhere.uri())))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/old"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", "/sparql"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/sparql"))
        .and(header("x-api-key", "hdr-value"))
        .and(header("authorization", "Bearer bearer-tok"))
        .respond_with(one_row())
        .expect(1)
        .mount(&server)
        .await;
    let with_secrets = |e: &mut EndpointSettings| {
        e.headers.insert("X-Api-Key".into(), "hdr-value".into());
        e.auth = Some(EndpointAuth::Bearer {
            token: "bearer-tok".into(),
        });
    };
    // Within the origin: followed, headers and all.
    let kg = endpoint(format!("{}/old", server.uri()), with_secrets);
    let QueryResults::Solutions(s) = kg.query_text("SELECT ?x WHERE { ?x ?p ?o }").await.unwrap() else {
        panic!()
    };
    assert_eq!(s.rows.len(), 1);
    // To another origin: refused, and nothing reached it.
    let kg = endpoint(format!("{}/moved", server.uri()), with_secrets);
    let error = kg.query_text("SELECT ?x WHERE { ?x ?p ?o }").await.unwrap_err();
    assert!(matches!(error, GraphError::Unreachable { .. }), "{error:?}");
    assert!(error.to_string().contains("another origin"), "{error}");
    for secret in ["hdr-value", "bearer-tok"] {
        assert!(!error.to_string().contains(secret), "{error}");
    }
    assert!(
        elsewhere.received_requests().await.unwrap().is_empty(),
        "the other origin was asked"
    );
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

/// Entity search on an endpoint looks in the name predicates as well as the label predicates.
#[tokio::test]
async fn entity_search_looks_in_name_predicates_too() {
    let server = serve_get(one_row()).await;
    let settings = GraphSettings {
        name_predicates: vec!["http://e/title".into()],
        ..GraphSettings::default()
    };
    let kg = SparqlEndpoint::new(EndpointSettings::new(server.uri()), settings).unwrap();
    kg.search_entities("deep residual learning", 5).await.unwrap();
    let sent = sent_query(&server.received_requests().await.unwrap()[0]);
    assert!(sent.contains("<http://e/title>"), "{sent}");
    assert!(sent.contains("<http://www.w3.org/2000/01/rdf-schema#label>"), "{sent}");
}

/// A bare HTTP/1.1 server on loopback (a thread) that answers each connection with `headers` and
/// then `body`, written as it is produced: chunked when `chunked`, raw otherwise. It stops
/// writing when the client goes away. Returns the endpoint URL.
fn raw_server(headers: String, chunked: bool, body: impl Fn(&mut dyn FnMut(&[u8]) -> bool) + Send + 'static) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            // Read the request head (GET: no body).
            let mut request = Vec::new();
            let mut byte = [0u8; 1];
            while !request.ends_with(b"\r\n\r\n") && socket.read(&mut byte).is_ok_and(|n| n == 1) {
                request.push(byte[0]);
            }
            let encoding = if chunked { "Transfer-Encoding: chunked\r\n" } else { "" };
            if write!(socket, "HTTP/1.1 200 OK\r\n{headers}{encoding}\r\n").is_err() {
                continue;
            }
            body(&mut |piece: &[u8]| {
                if chunked {
                    write!(socket, "{:x}\r\n", piece.len()).is_ok()
                        && socket.write_all(piece).is_ok()
                        && socket.write_all(b"\r\n").is_ok()
                } else {
                    socket.write_all(piece).is_ok()
                }
            });
            if chunked {
                let _ = socket.write_all(b"0\r\n\r\n");
            }
        }
    });
    format!("http://{address}/sparql")
}

fn capped_endpoint(url: String, max_result_bytes: usize, tweak: impl FnOnce(&mut EndpointSettings)) -> SparqlEndpoint {
    let mut endpoint = EndpointSettings::new(url);
    endpoint.timeout_secs = 20.0;
    tweak(&mut endpoint);
    let settings = GraphSettings {
        max_rows: 10_000_000,
        max_result_bytes,
        ..GraphSettings::default()
    };
    SparqlEndpoint::new(endpoint, settings).unwrap()
}

const MIB: usize = 1 << 20;

/// An endpoint streaming ~200 MB of rows (no Content-Length): reading stops at 1 MiB and the
/// rows that arrived whole are kept, in order, marked truncated; the server keeps answering.
#[tokio::test]
async fn a_huge_streamed_select_is_cut_at_max_result_bytes() {
    fn row(i: usize) -> String {
        format!(r#"{{"x":{{"type":"uri","value":"http://e/r{i:09}"}}}},"#)
    }
    let row_len = row(0).len();
    let url = raw_server(format!("Content-Type: {JSON}\r\n"), true, move |write| {
        if !write(br#"{"head":{"vars":["x"]},"results":{"bindings":["#) {
            return;
        }
        let mut sent = 0;
        let mut i = 0;
        while sent < 200 * MIB {
            let piece: String = (i..i + 1000).map(row).collect();
            i += 1000;
            sent += piece.len();
            if !write(piece.as_bytes()) {
                return;
            }
        }
        write(br#"{"x":{"type":"uri","value":"http://e/last"}}]}}"#);
    });
    let kg = capped_endpoint(url, MIB, |_| {});
    for _ in 0..2 {
        let started = std::time::Instant::now();
        let QueryResults::Solutions(s) = kg.query_text("SELECT ?x WHERE { ?x ?p ?o }").await.unwrap() else {
            panic!("not solutions")
        };
        assert!(s.truncated);
        assert!(!s.rows.is_empty());
        assert!(
            s.rows.len() <= MIB / row_len,
            "{} rows cannot fit in 1 MiB",
            s.rows.len()
        );
        assert!(s.rows.len() + 2 >= MIB / row_len, "only {} rows kept", s.rows.len());
        for (i, value) in s.column("x").enumerate() {
            assert_eq!(value.to_string(), format!("<http://e/r{i:09}>"));
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
}

/// The same cut for XML and TSV results (a TSV line cut short is not kept), and for an ASK,
/// where a cut answer is the typed error.
#[tokio::test]
async fn other_formats_and_ask_are_cut_too() {
    let xml_row = |i: usize| format!(r#"<result><binding name="n"><literal>{i}</literal></binding></result>"#);
    let url = raw_server(
        "Content-Type: application/sparql-results+xml\r\n".into(),
        true,
        move |write| {
            write(br#"<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="n"/></head><results>"#);
            for i in 0..100_000 {
                if !write(xml_row(i).as_bytes()) {
                    return;
                }
            }
            write(b"</results></sparql>");
        },
    );
    let kg = capped_endpoint(url, 64 << 10, |e| e.results_format = ResultsFormat::Xml);
    let QueryResults::Solutions(s) = kg.query_text("SELECT ?n WHERE { ?s ?p ?n }").await.unwrap() else {
        panic!()
    };
    assert!(
        s.truncated && !s.rows.is_empty() && s.rows.len() < 100_000,
        "{}",
        s.rows.len()
    );
    for (i, value) in s.column("n").enumerate() {
        assert_eq!(value.to_string(), format!("\"{i}\""));
    }

    // Numbers cut short would still parse: 123456 read as 12.
    let url = raw_server("Content-Type: text/tab-separated-values\r\n".into(), false, |write| {
        write(b"?n\n");
        for i in 0..100_000u64 {
            if !write(format!("{}\n", 1_000_000 + i).as_bytes()) {
                return;
            }
        }
    });
    let kg = capped_endpoint(url, 10_000, |_| {});
    let QueryResults::Solutions(s) = kg.query_text("SELECT ?n WHERE { ?s ?p ?n }").await.unwrap() else {
        panic!()
    };
    assert!(s.truncated && !s.rows.is_empty(), "{}", s.rows.len());
    for (i, value) in s.column("n").enumerate() {
        let expected = format!("\"{}\"^^<http://www.w3.org/2001/XMLSchema#integer>", 1_000_000 + i);
        assert_eq!(value.to_string(), expected);
    }

    let url = raw_server(format!("Content-Type: {JSON}\r\n"), true, |write| {
        write(br#"{"head":{},"#);
        for _ in 0..100 {
            if !write(&[b' '; 10_000]) {
                return;
            }
        }
        write(br#""boolean":true}"#);
    });
    let kg = capped_endpoint(url, 64 << 10, |_| {});
    match kg.query_text("ASK { ?s ?p ?o }").await {
        Err(GraphError::ResultTooLarge { bytes: None, max, .. }) => assert_eq!(max, 64 << 10),
        other => panic!("{other:?}"),
    }
}

/// A Content-Length over the cap is refused before the body: this server announces 200 MB and
/// then sends nothing, so a client that started reading would wait for its timeout.
#[tokio::test]
async fn an_announced_huge_body_is_refused_unread() {
    let url = raw_server(
        format!("Content-Type: {JSON}\r\nContent-Length: {}\r\n", 200 * MIB),
        false,
        |_| std::thread::sleep(std::time::Duration::from_secs(30)),
    );
    let kg = capped_endpoint(url, MIB, |e| e.timeout_secs = 5.0);
    let started = std::time::Instant::now();
    let error = kg.query_text("SELECT ?x WHERE { ?x ?p ?o }").await.unwrap_err();
    match &error {
        GraphError::ResultTooLarge { bytes, max, .. } => {
            assert_eq!(*bytes, Some(200 * MIB as u64));
            assert_eq!(*max, MIB);
        }
        other => panic!("{other}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("209715200") && message.contains("max_result_bytes"),
        "{message}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

/// An endpoint that refuses the pushed-down LIMIT with a server error (Virtuoso's SR353 for
/// ORDER BY … LIMIT over MaxSortedTopRows) is asked once more with the query as written; a
/// query it refuses as written is not retried.
#[tokio::test]
async fn a_refused_pushed_down_limit_is_retried_as_written() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(query_param_contains("query", "LIMIT 10001"))
        .respond_with(
            ResponseTemplate::new(500).set_body_string(
                "Virtuoso 22023 Error SR353: Sorted TOP clause specifies more then 10001 rows to sort.",
            ),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET")).respond_with(one_row()).mount(&server).await;
    let kg = endpoint(server.uri(), |_| {});
    let QueryResults::Solutions(s) = kg.query_text("SELECT ?x WHERE { ?x ?p ?o } ORDER BY ?x").await.unwrap() else {
        panic!()
    };
    assert_eq!(s.rows.len(), 1);
    let sent: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(sent_query)
        .collect();
    assert_eq!(sent.len(), 2);
    assert!(
        sent[0].ends_with("LIMIT 10001") && !sent[1].contains("LIMIT"),
        "{sent:?}"
    );

    // Written with that LIMIT: the same error, asked once.
    let error = kg
        .query_text("SELECT ?x WHERE { ?x ?p ?o } LIMIT 10001")
        .await
        .unwrap_err();
    assert!(matches!(error, GraphError::Http { status: 500, .. }), "{error}");
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

/// An endpoint whose profile queries fail is not asked for the profile again at once: the next
/// call answers `ProfileUnavailable` without a request (the agents ask for it at every question).
#[tokio::test]
async fn a_failed_profile_is_not_computed_again_at_once() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(500).set_body_string("Virtuoso S1T00 Error SR171: Transaction timed out"))
        .mount(&server)
        .await;
    let kg = endpoint(server.uri(), |_| {});
    let first = kg.profile().await.unwrap_err();
    assert!(matches!(first, GraphError::Http { status: 500, .. }), "{first}");
    let asked = server.received_requests().await.unwrap().len();
    assert!(asked >= 1);
    let second = kg.profile().await.unwrap_err();
    match &second {
        GraphError::ProfileUnavailable { message, retry_in } => {
            assert!(message.contains("SR171"), "{message}");
            assert!(*retry_in > std::time::Duration::from_secs(200), "{retry_in:?}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(server.received_requests().await.unwrap().len(), asked, "no new request");
}

/// A regular expression a backtracking engine could spend hours on is refused before it leaves
/// (Virtuoso's REGEX is PCRE); a plain one is sent.
#[tokio::test]
async fn risky_regular_expressions_never_leave() {
    let server = serve_get(one_row()).await;
    let kg = endpoint(server.uri(), |_| {});
    for query in [
        r#"SELECT ?x WHERE { ?x ?p ?o FILTER(REGEX(STR(?o), "(a+)+$")) }"#,
        r#"SELECT ?x WHERE { ?x ?p ?o FILTER(REGEX(STR(?o), STR(?x))) }"#,
        r#"SELECT ?x WHERE { ?x ?p ?o FILTER(REGEX(STR(?o), "(x)\\1")) }"#,
        r#"SELECT (REPLACE(STR(?o), "(.*)*", "") AS ?r) WHERE { ?x ?p ?o }"#,
    ] {
        let error = kg.query_text(query).await.unwrap_err();
        assert!(matches!(error, GraphError::RiskyPattern { .. }), "{query}: {error}");
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 0, "nothing was sent");
    kg.query_text(r#"SELECT ?x WHERE { ?x ?p ?o FILTER(REGEX(STR(?o), "^tom h[aä]nks$", "i")) }"#)
        .await
        .unwrap();
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

/// A Wikibase's own search (`search = "wbsearchentities"`): one GET to its `api.php`, with none
/// of the endpoint's credentials or headers, and the hits' IRIs and labels as found.
#[tokio::test]
async fn wbsearchentities_asks_the_wikibase_api_without_the_endpoints_credentials() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/w/api.php"))
        .and(wiremock::matchers::header_exists("authorization"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/w/api.php"))
        .and(wiremock::matchers::query_param("action", "wbsearchentities"))
        .and(wiremock::matchers::query_param("search", "tom hanks"))
        .and(wiremock::matchers::query_param("language", "en"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"{"searchinfo":{"search":"tom hanks"},"search":[
                {"id":"Q2263","concepturi":"http://www.wikidata.org/entity/Q2263","label":"Tom Hanks","description":"American actor","match":{"type":"label","language":"en","text":"Tom Hanks"}},
                {"id":"Q7","concepturi":"http://www.wikidata.org/entity/Q7","match":{"type":"alias","language":"en","text":"Tom Hanks Jr."}}
            ],"success":1}"#,
            "application/json",
        ))
        .expect(1)
        .mount(&server)
        .await;
    let kg = endpoint(format!("{}/sparql", server.uri()), |e| {
        e.search = chatty_kg_graph::SearchStrategy::Wbsearchentities;
        e.search_api = Some(format!("{}/w/api.php", server.uri()));
        e.auth = Some(EndpointAuth::Bearer { token: "s3cret".into() });
    });
    let found = kg.label_matches("tom hanks", 5).await.unwrap();
    assert_eq!(
        found,
        [
            (
                "http://www.wikidata.org/entity/Q2263".to_owned(),
                "Tom Hanks".to_owned()
            ),
            (
                "http://www.wikidata.org/entity/Q7".to_owned(),
                "Tom Hanks Jr.".to_owned()
            )
        ]
    );
}

#[tokio::test]
async fn wbsearchentities_needs_its_api_and_says_when_it_fails() {
    let settings = EndpointSettings {
        search: chatty_kg_graph::SearchStrategy::Wbsearchentities,
        ..EndpointSettings::new("http://127.0.0.1:9/sparql")
    };
    let error = SparqlEndpoint::new(settings, GraphSettings::default()).err().unwrap();
    assert!(error.to_string().contains("search_api"), "{error}");

    let server = serve_get(ResponseTemplate::new(503)).await;
    let kg = endpoint(format!("{}/sparql", server.uri()), |e| {
        e.search = chatty_kg_graph::SearchStrategy::Wbsearchentities;
        e.search_api = Some(format!("{}/w/api.php?key=hidden", server.uri()));
    });
    let error = kg.label_matches("tom hanks", 5).await.unwrap_err();
    assert!(matches!(error, GraphError::SearchApi { .. }), "{error}");
    assert!(!error.to_string().contains("hidden"), "{error}");
}

/// The Wikidata Query Service's EntitySearch (`search = "mwapi"`): our own generated SERVICE
/// call, the search text a literal in it; a SERVICE a user writes is still refused.
#[tokio::test]
async fn mwapi_sends_our_entity_search_and_refuses_a_users_service() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(query_param_contains("query", "EntitySearch"))
        .and(query_param_contains("query", "<http://wikiba.se/ontology#mwapi>"))
        .and(query_param_contains("query", "\"tom \\\"hanks\\\"\""))
        .and(query_param_contains("query", "\"www.wikidata.org\""))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"{"head":{"vars":["item","label"]},"results":{"bindings":[
                {"item":{"type":"uri","value":"http://www.wikidata.org/entity/Q2263"},"label":{"type":"literal","value":"Tom Hanks","xml:lang":"en"}}]}}"#,
            JSON,
        ))
        .expect(1)
        .mount(&server)
        .await;
    let kg = endpoint(format!("{}/sparql", server.uri()), |e| {
        e.search = chatty_kg_graph::SearchStrategy::Mwapi;
    });
    let found = kg.label_matches("tom \"hanks\"", 5).await.unwrap();
    assert_eq!(
        found,
        [(
            "http://www.wikidata.org/entity/Q2263".to_owned(),
            "Tom Hanks".to_owned()
        )]
    );
    let refused = kg
        .query_text("SELECT ?item WHERE { SERVICE <http://wikiba.se/ontology#mwapi> { ?item ?p ?o } }")
        .await
        .unwrap_err();
    assert!(matches!(refused, GraphError::NotReadOnly { .. }), "{refused}");
}
