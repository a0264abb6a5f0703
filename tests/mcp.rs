//! `chatty-kg mcp` as an MCP client meets it: the real binary on stdio, spawned and spoken to by
//! the official Rust SDK's client (rmcp), over the bundled MetaQA KB with the real embedding model
//! and a scripted chat model that has nothing scripted (these questions need no model call).
//! Initialize, list the tools, call each; bad calls are MCP errors with the REST API's kinds,
//! and the server goes on answering.

mod common;

use chatty_kg_models::{catalog, model_for_tests};
use common::server::mcp_server;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService, ServiceError};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The bundled KB in a store of this test binary's own, and a config with the scripted model.
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let store = dir.join("store");
    let kb = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/metaqa-kb.nt.gz");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_chatty-kg"))
        .args(["load", "--store", store.to_str().unwrap(), kb.to_str().unwrap()])
        .env_remove("CHATTY_KG_CONFIG")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let script = dir.join("script.json");
    std::fs::write(&script, "[]").unwrap();
    let config = dir.join("config.toml");
    std::fs::write(&config, format!("[llm]\nbackend = \"scripted\"\nscript = {script:?}\n")).unwrap();
    (store, config)
}

/// The server as a child process, and the SDK's client on its stdin/stdout.
async fn client(store: &Path, config: &Path) -> (RunningService<RoleClient, ()>, tokio::process::Child) {
    let mut child = mcp_server(config, Some(store));
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    (().serve((stdout, stdin)).await.unwrap(), child)
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name).with_arguments(arguments.as_object().unwrap().clone())
}

/// The tool's JSON reply.
async fn json_of(client: &RunningService<RoleClient, ()>, name: &'static str, arguments: Value) -> Value {
    let result = client
        .call_tool(call(name, arguments))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_ne!(result.is_error, Some(true), "{name}: {result:?}");
    let text = &result.content[0].as_text().unwrap().text;
    serde_json::from_str(text).unwrap()
}

/// The `data.kind` of the MCP error a call gets.
async fn error_kind(client: &RunningService<RoleClient, ()>, name: &'static str, arguments: Value) -> String {
    match client.call_tool(call(name, arguments)).await {
        Err(ServiceError::McpError(error)) => error
            .data
            .and_then(|d| d["kind"].as_str().map(str::to_owned))
            .unwrap_or_default(),
        other => panic!("{name}: expected an MCP error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_client_lists_the_tools_and_asks_the_bundled_kb() {
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (store, config) = setup(dir.path());
    let (client, _child) = client(&store, &config).await;
    let info = client.peer_info().expect("initialized");
    assert!(info.capabilities.tools.is_some(), "{info:?}");
    assert_eq!(info.server_info.name, "chatty-kg");
    let mut tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        ["ask", "describe", "entities", "generate_sparql", "list_kgs", "sparql"]
    );
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources[0].uri, "chatty-kg://default/profile", "{resources:?}");

    // Generate-only: the query, reduced to its answers, and no answer values.
    let generated = json_of(
        &client,
        "generate_sparql",
        json!({"question": "Who directed Ratcatcher?"}),
    )
    .await;
    let query = generated["query"].as_str().unwrap();
    assert!(
        query.contains("directed_by") && query.contains("?answer"),
        "{generated}"
    );
    assert_eq!(generated["generated"]["answered"], true, "{generated}");
    assert!(
        generated["explanation"]["answers"].as_array().unwrap().is_empty(),
        "{generated}"
    );

    let answer = json_of(&client, "ask", json!({"question": "Who directed Ratcatcher?"})).await;
    assert_eq!(answer["text"], "Lynne Ramsay", "{answer}");
    assert_eq!(answer["answers"][0]["label"], "Lynne Ramsay");
    assert!(
        answer["sparql"][0].as_str().unwrap().contains("directed_by"),
        "{answer}"
    );
    assert!(
        !answer["answers"][0]["provenance"].as_array().unwrap().is_empty(),
        "{answer}"
    );

    // A session is a dialogue: "she" is the earlier answer.
    json_of(
        &client,
        "ask",
        json!({"question": "Who directed Ratcatcher?", "session": "s1"}),
    )
    .await;
    let follow = json_of(
        &client,
        "ask",
        json!({"question": "What else did she direct?", "session": "s1"}),
    )
    .await;
    assert_eq!(
        follow["resolved_question"], "What else did Lynne Ramsay direct?",
        "{follow}"
    );
    assert!(follow["text"].as_str().unwrap().contains("Morvern Callar"), "{follow}");

    let found = json_of(&client, "entities", json!({"text": "tom hanks", "limit": 2})).await;
    assert_eq!(found[0]["iri"], "http://metaqa.example.org/entity/Tom_Hanks", "{found}");
    let rows = json_of(
        &client,
        "sparql",
        json!({"query": "SELECT ?o WHERE { <http://metaqa.example.org/entity/Ratcatcher> ?p ?o }", "max_rows": 2}),
    )
    .await;
    assert_eq!(rows["rows"].as_array().unwrap().len(), 2, "{rows}");
    assert_eq!(rows["truncated"], true);
    let described = json_of(
        &client,
        "describe",
        json!({"iri": "http://metaqa.example.org/entity/Ratcatcher"}),
    )
    .await;
    assert!(
        described["triples"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["other"]["label"] == "Lynne Ramsay"),
        "{described}"
    );
    let kgs = json_of(&client, "list_kgs", json!({})).await;
    assert_eq!(kgs[0]["name"], "default", "{kgs}");

    // Bad calls: clear MCP errors with stable kinds, and the server goes on.
    assert_eq!(
        error_kind(&client, "ask", json!({"question": "  "})).await,
        "empty_question"
    );
    assert_eq!(
        error_kind(&client, "sparql", json!({"query": "DELETE WHERE { ?s ?p ?o }"})).await,
        "refused"
    );
    assert_eq!(
        error_kind(&client, "sparql", json!({"query": "SELECT nonsense"})).await,
        "invalid_query"
    );
    assert_eq!(
        error_kind(
            &client,
            "sparql",
            json!({"query": "SELECT * WHERE { SERVICE <http://x/> { ?s ?p ?o } }"})
        )
        .await,
        "refused"
    );
    // A query that grows one string to 4 GiB is refused while it runs; the server goes on.
    assert_eq!(
        error_kind(&client, "sparql", json!({"query": common::doubling_query(28)})).await,
        "refused"
    );
    assert!(client.call_tool(call("no_such_tool", json!({}))).await.is_err());
    // Arguments that do not fit the tool's schema: an error, whichever way the SDK reports it.
    match client.call_tool(call("ask", json!({"no_question": 1}))).await {
        Err(_) => {}
        Ok(result) => assert_eq!(result.is_error, Some(true), "{result:?}"),
    }
    let answer = json_of(&client, "ask", json!({"question": "When was Big released?"})).await;
    assert_eq!(answer["text"], "1988", "{answer}");
    client.cancel().await.unwrap();
}

/// The queries that ended the process (tests/fixtures/attacks) through the `sparql` tool: each
/// is evaluated in a worker process and answers or gets an MCP error; the server lives, answers
/// the next call, and none of their workers is left running.
#[tokio::test(flavor = "multi_thread")]
async fn user_written_queries_run_in_workers_and_the_server_lives() {
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = setup(dir.path());
    let config = dir.path().join("attacks.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nbackend = \"scripted\"\nscript = {script:?}\n[kgs.default]\nstore = {store:?}\n\
             [kgs.default.graph]\nquery_timeout_secs = 4\n",
            script = dir.path().join("script.json"),
        ),
    )
    .unwrap();
    let mut child = mcp_server(&config, None);
    let pid = child.id().unwrap();
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve((stdout, stdin)).await.unwrap();
    for (name, query) in common::attack_queries() {
        match client.call_tool(call("sparql", json!({ "query": query }))).await {
            Ok(result) => assert_ne!(result.is_error, Some(true), "{name}: {result:?}"),
            Err(ServiceError::McpError(error)) => {
                let kind = error.data.as_ref().and_then(|d| d["kind"].as_str()).unwrap_or_default();
                assert!(["refused", "graph"].contains(&kind), "{name}: {error:?}");
            }
            Err(other) => panic!("{name}: the server is gone: {other:?}"),
        }
        assert!(
            common::children_running(pid, "sparql-worker").is_empty(),
            "{name}: its worker outlived the reply"
        );
    }
    let count = json_of(
        &client,
        "sparql",
        json!({"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"}),
    )
    .await;
    assert!(count.to_string().contains("172533"), "{count}");
    client.cancel().await.unwrap();
}

/// Raw stdio, as a broken client might write it: a line that is no JSON gets a JSON-RPC parse
/// error, and the server then initializes and answers as usual.
#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_rpc_gets_a_parse_error_and_the_server_goes_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    if model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (store, config) = setup(dir.path());
    let mut child = mcp_server(&config, Some(&store));
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    stdin
        .write_all(format!("this is not json\n{initialize}\n").as_bytes())
        .await
        .unwrap();
    let first: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(first["error"]["code"], -32700, "{first}");
    let second: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(second["id"], 1, "{second}");
    assert_eq!(second["result"]["serverInfo"]["name"], "chatty-kg", "{second}");
}

/// MCP over streamable HTTP on `serve` (`/mcp`), through the SDK's HTTP client: the API key is
/// required, each key's named sessions are its own, questions count in the key's rate like any
/// other, the schema profile is a resource, and bad requests get clear errors.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_on_serve_keeps_keys_apart_and_their_limits() {
    use common::server::{TestServer, http};
    use rmcp::model::ReadResourceRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let dir = tempfile::tempdir().unwrap();
    let extra = "api_keys = [\"alice-key\", \"bob-key\"]\nmax_questions_per_minute_per_key = 4";
    let Some(server) = TestServer::start(dir.path(), extra) else {
        return;
    };
    let connect = |key: Option<&'static str>| {
        let mut config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.url));
        if let Some(key) = key {
            config = config.auth_header(key);
        }
        ().serve(StreamableHttpClientTransport::from_config(config))
    };
    assert!(connect(None).await.is_err(), "no key, no MCP");
    let alice = connect(Some("alice-key")).await.unwrap();
    assert_eq!(alice.peer_info().unwrap().server_info.name, "chatty-kg");
    let tools = alice.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 6);
    let resources = alice.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 1, "{resources:?}");
    assert_eq!(resources[0].uri, "chatty-kg://default/profile");
    let read = alice
        .read_resource(ReadResourceRequestParams::new("chatty-kg://default/profile"))
        .await
        .unwrap();
    let profile: Value = match &read.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, mime_type, .. } => {
            assert_eq!(mime_type.as_deref(), Some("application/json"));
            serde_json::from_str(text).unwrap()
        }
        other => panic!("{other:?}"),
    };
    assert!(
        profile["predicates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["iri"] == "http://example.org/relation/directedBy"),
        "{profile}"
    );
    assert!(
        alice
            .read_resource(ReadResourceRequestParams::new("chatty-kg://other/profile"))
            .await
            .is_err()
    );

    let answer = json_of(&alice, "ask", json!({"question": "Who directed Forrest Gump?"})).await;
    assert_eq!(answer["text"], "Robert Zemeckis", "{answer}");
    json_of(
        &alice,
        "ask",
        json!({"question": "Who directed Forrest Gump?", "session": "s1"}),
    )
    .await;
    let follow = json_of(
        &alice,
        "ask",
        json!({"question": "What else did he direct?", "session": "s1"}),
    )
    .await;
    assert_eq!(
        follow["resolved_question"], "What else did Robert Zemeckis direct?",
        "{follow}"
    );
    assert!(follow["text"].as_str().unwrap().contains("Cast Away"), "{follow}");

    // Bob's "s1" is not Alice's: nothing for his "he" to refer to.
    let bob = connect(Some("bob-key")).await.unwrap();
    let theirs = bob
        .call_tool(call(
            "ask",
            json!({"question": "What else did he direct?", "session": "s1"}),
        ))
        .await;
    if let Ok(result) = &theirs {
        let text = &result.content[0].as_text().unwrap().text;
        assert!(
            !text.contains("Cast Away") && !text.contains("Robert Zemeckis"),
            "{text}"
        );
    }

    // The fourth question of the minute is Alice's last; Bob's own rate is untouched.
    let answer = json_of(&alice, "ask", json!({"question": "When was Big released?"})).await;
    assert_eq!(answer["text"], "1988", "{answer}");
    assert_eq!(
        error_kind(&alice, "ask", json!({"question": "When was Top Gun released?"})).await,
        "rate_limited"
    );
    // Her graph lookups count in the same rate (she chooses their queries).
    assert_eq!(
        error_kind(&alice, "sparql", json!({"query": "ASK { ?s ?p ?o }"})).await,
        "rate_limited"
    );
    let answer = json_of(&bob, "ask", json!({"question": "When was Top Gun released?"})).await;
    assert_eq!(answer["text"], "1986", "{answer}");

    // Raw requests: an unknown KG, and a body that is no JSON-RPC; then the clients go on.
    let post = |path: &str, body: &'static str| {
        http()
            .post(format!("{}{path}", server.url))
            .bearer_auth("alice-key")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body)
            .send()
    };
    let response = post("/mcp/nope", "{}").await.unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["kind"], "unknown_kg", "{body}");
    let response = post("/mcp", "{not json").await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_client_error(), "{status} {text}");
    let found = json_of(&bob, "entities", json!({"text": "forrest gump", "limit": 1})).await;
    assert_eq!(found[0]["iri"], "http://example.org/entity/Forrest_Gump", "{found}");
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
}

/// The official MCP inspector's CLI (npm `@modelcontextprotocol/inspector`, installed by
/// `npm ci --prefix tests/web`) against `/mcp` on `serve`, with an API key: it lists the tools
/// and the profile resource and asks the movies graph. Skips without it unless
/// `CHATTY_KG_REQUIRE_BROWSER=1` (CI installs both).
#[test]
fn the_official_mcp_inspector_cli_talks_to_mcp_on_serve() {
    use common::server::TestServer;
    let inspector = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/node_modules/.bin/mcp-inspector");
    if !inspector.exists() {
        assert!(
            std::env::var_os("CHATTY_KG_REQUIRE_BROWSER").is_none(),
            "CHATTY_KG_REQUIRE_BROWSER=1 but tests/web/node_modules has no MCP inspector"
        );
        eprintln!("skipped: run `npm ci --prefix tests/web`");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = TestServer::start(dir.path(), "api_keys = [\"alice-key\"]") else {
        return;
    };
    let inspect = |key: &str, args: &[&str]| -> (bool, Value, String) {
        let output = std::process::Command::new(&inspector)
            .args(["--cli", &format!("{}/mcp", server.url), "--transport", "http"])
            .args(["--header", &format!("Authorization: Bearer {key}")])
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        (
            output.status.success(),
            json,
            format!("{stdout}{}", String::from_utf8_lossy(&output.stderr)),
        )
    };
    let (ok, tools, log) = inspect("alice-key", &["--method", "tools/list"]);
    assert!(ok, "{log}");
    let mut names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["ask", "describe", "entities", "generate_sparql", "list_kgs", "sparql"]
    );
    let (ok, resources, log) = inspect("alice-key", &["--method", "resources/list"]);
    assert!(ok, "{log}");
    assert_eq!(resources["resources"][0]["uri"], "chatty-kg://default/profile", "{log}");
    let (ok, answer, log) = inspect(
        "alice-key",
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "ask",
            "--tool-arg",
            "question=Who directed Forrest Gump?",
        ],
    );
    assert!(ok, "{log}");
    let text: Value = serde_json::from_str(answer["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["text"], "Robert Zemeckis", "{log}");
    let (ok, _, log) = inspect("mallory-key", &["--method", "tools/list"]);
    assert!(!ok, "a wrong key must not list the tools: {log}");
}

/// Without API keys every HTTP caller is the same anonymous one, so `/mcp` refuses named sessions
/// (one user's "s1" would be everyone's) and answers single questions.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_without_keys_has_no_shared_named_sessions() {
    use common::server::TestServer;
    use rmcp::transport::StreamableHttpClientTransport;
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = TestServer::start(dir.path(), "") else {
        return;
    };
    let client = ().serve(StreamableHttpClientTransport::from_uri(format!("{}/mcp", server.url))).await.unwrap();
    let answer = json_of(&client, "ask", json!({"question": "Who directed Forrest Gump?"})).await;
    assert_eq!(answer["text"], "Robert Zemeckis", "{answer}");
    assert_eq!(
        error_kind(
            &client,
            "ask",
            json!({"question": "Who directed Forrest Gump?", "session": "s1"})
        )
        .await,
        "malformed_message"
    );
    client.cancel().await.unwrap();
}

/// Issue 46 (B1): MCP's `list_kgs` names an endpoint by its scheme, host, port and path only: no
/// user name or password, no query (`?pass=`, `?jwt=`), no fragment.
#[tokio::test(flavor = "multi_thread")]
async fn list_kgs_shows_an_endpoint_without_credentials_query_or_fragment() {
    use common::server::TestServer;
    use rmcp::transport::StreamableHttpClientTransport;
    let dir = tempfile::tempdir().unwrap();
    let extra = "[kgs.remote.endpoint]\n\
                 url = \"http://alice:pw-user@127.0.0.1:9/sparql?pass=pw-query&jwt=eyJ.jwt-body.sig#frag-secret\"\n\
                 timeout_secs = 2.0\n";
    let Some(server) = TestServer::start(dir.path(), extra) else {
        return;
    };
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{}/mcp/remote",
            server.url
        )))
        .await
        .unwrap();
    let listed = json_of(&client, "list_kgs", json!({})).await;
    assert_eq!(
        listed,
        json!([{"name": "remote", "description": "SPARQL endpoint http://127.0.0.1:9/sparql"}])
    );
    client.cancel().await.unwrap();
}
