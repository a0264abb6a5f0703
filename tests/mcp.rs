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
    assert_eq!(tools, ["ask", "describe", "entities", "list_kgs", "sparql"]);

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
