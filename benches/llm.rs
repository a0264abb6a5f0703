//! Throughput of the embedded chat models and latency of sentence embeddings on this machine.
//!
//! Not criterion: one generation takes seconds, so this runs a few fixed workloads and prints
//! medians. Models must be fetched (`chatty-kg models fetch --all`).
//!
//! ```sh
//! cargo bench --bench llm                                  # every present model
//! CHATTY_KG_BENCH_MODELS=smollm2-135m cargo bench --bench llm   # one (peak RSS is per process)
//! ```
//!
//! Figures per chat model: load time; prompt evaluation (tokens/s, cold cache); generation
//! (tokens/s) free and grammar-constrained; a second prompt sharing the prefix (tokens evaluated
//! again). For the embedder: load time, latency of one phrase, per-phrase latency in a batch of 32.
//! Peak resident memory (VmHWM) is printed after each model.

use chatty_kg_embed::{Embedder, MiniLmEmbedder};
use chatty_kg_llm::llama::{LlamaChatModel, LlamaSettings};
use chatty_kg_llm::prompts::PromptLibrary;
use chatty_kg_llm::{ChatModel, ChatRequest, ChatResponse, Message};
use chatty_kg_models::{ModelKind, ModelStore, catalog, default_models_dir};
use serde_json::json;
use std::time::Instant;

const RUNS: usize = 3;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn qir_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "entities": {"type": "array", "items": {"type": "string"}},
            "unknowns": {"type": "array", "items": {"type": "string"}},
            "relations": {"type": "array", "items": {"type": "string"}},
            "triples": {"type": "array", "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3}},
            "type": {"enum": ["list", "boolean", "count"]},
            "order": {"enum": [null, "asc", "desc"]}
        },
        "required": ["entities", "unknowns", "relations", "triples", "type", "order"],
        "additionalProperties": false
    })
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    #[allow(clippy::expect_used)]
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

#[allow(clippy::unwrap_used)]
fn bench_chat(name: &str, path: &std::path::Path, prompts: &PromptLibrary) {
    let started = Instant::now();
    let model = LlamaChatModel::load(path, &LlamaSettings::default()).unwrap();
    let load = started.elapsed();
    let complete = |request: &ChatRequest| -> ChatResponse { block_on(model.complete(request)).unwrap() };

    let mut prompt_rates = Vec::new();
    let mut free_rates = Vec::new();
    let mut json_rates = Vec::new();
    let mut prompt_tokens = 0;
    let mut json_tokens = Vec::new();
    for run in 0..RUNS {
        // A different first line each run defeats prefix reuse: this is cold prompt evaluation.
        let mut messages = prompts
            .render("qir", json!({"question": "Which movies starring Tom Hanks were directed by Robert Zemeckis?", "feedback": null}))
            .unwrap();
        messages[0].content = format!("Run {run}.\n{}", messages[0].content);
        let response = complete(&ChatRequest::new("qir", messages).with_schema("qir", qir_schema()));
        let t = response.timings.unwrap();
        prompt_tokens = response.usage.input_tokens;
        prompt_rates.push(f64::from(t.prompt_evaluated) / t.prompt_seconds);
        json_rates.push(f64::from(response.usage.output_tokens) / t.generation_seconds);
        json_tokens.push(f64::from(response.usage.output_tokens));

        let free = ChatRequest::new(
            "chat",
            vec![Message::user(format!(
                "Run {run}. Tell me about the history of cinema in a few sentences."
            ))],
        )
        .with_max_tokens(64);
        let response = complete(&free);
        let t = response.timings.unwrap();
        free_rates.push(f64::from(response.usage.output_tokens) / t.generation_seconds);
    }
    // Same prompt, other question: only the tail is evaluated again.
    let ask = |question: &str| {
        let messages = prompts
            .render("qir", json!({"question": question, "feedback": null}))
            .unwrap();
        ChatRequest::new("qir", messages).with_schema("qir", qir_schema())
    };
    complete(&ask("Who directed Forrest Gump?"));
    let started = Instant::now();
    let second = complete(&ask("What genre is Cast Away?"));
    let reuse_wall = started.elapsed();
    let reuse = second.timings.unwrap();

    println!("## {name}");
    println!("load: {:.2} s", load.as_secs_f64());
    println!(
        "prompt evaluation (cold, {prompt_tokens} tokens): {:.0} tokens/s",
        median(prompt_rates)
    );
    println!("generation, free text (64 tokens): {:.1} tokens/s", median(free_rates));
    println!(
        "generation, grammar-constrained QIR JSON ({:.0} tokens): {:.1} tokens/s",
        median(json_tokens),
        median(json_rates)
    );
    println!(
        "shared prefix: {} of {} prompt tokens evaluated again; whole QIR call {:.2} s",
        reuse.prompt_evaluated,
        second.usage.input_tokens,
        reuse_wall.as_secs_f64()
    );
    println!("peak RSS so far: {:.0} MB\n", peak_rss_mb());
}

#[allow(clippy::unwrap_used)]
fn bench_embedder(name: &str, dir: &std::path::Path) {
    let started = Instant::now();
    let model = MiniLmEmbedder::load(dir).unwrap();
    let load = started.elapsed();
    let phrases: Vec<String> = [
        "directed by",
        "written by",
        "starred actors",
        "release year",
        "in language",
        "has genre",
        "has tags",
        "has imdb rating",
        "has imdb votes",
        "birth place",
        "spouse",
        "country of origin",
    ]
    .iter()
    .cycle()
    .take(96)
    .enumerate()
    .map(|(i, p)| format!("{p} {}", i / 12))
    .collect();
    let single: Vec<f64> = phrases
        .iter()
        .map(|p| {
            let t = Instant::now();
            model.embed(&[p.as_str()]).unwrap();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let batched: Vec<f64> = phrases
        .chunks(32)
        .map(|chunk| {
            let texts: Vec<&str> = chunk.iter().map(String::as_str).collect();
            let t = Instant::now();
            model.embed(&texts).unwrap();
            t.elapsed().as_secs_f64() * 1000.0 / texts.len() as f64
        })
        .collect();
    println!("## {name}");
    println!("load: {:.2} s", load.as_secs_f64());
    println!("one phrase: p50 {:.2} ms", median(single));
    println!("batch of 32: {:.2} ms per phrase", median(batched));
    println!("peak RSS so far: {:.0} MB\n", peak_rss_mb());
}

fn main() {
    let store = ModelStore::new(default_models_dir());
    let wanted: Option<Vec<String>> = std::env::var("CHATTY_KG_BENCH_MODELS")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    #[allow(clippy::unwrap_used)]
    let prompts = PromptLibrary::builtin().unwrap();
    for spec in &catalog::CATALOG {
        if wanted.as_ref().is_some_and(|w| !w.iter().any(|n| n == spec.name)) {
            continue;
        }
        let Ok(path) = store.path(spec) else {
            println!(
                "## {}: not fetched, skipped (chatty-kg models fetch {})\n",
                spec.name, spec.name
            );
            continue;
        };
        match spec.kind {
            ModelKind::Chat => bench_chat(spec.name, &path, &prompts),
            ModelKind::Embedding => bench_embedder(spec.name, &path),
        }
    }
}
