//! User-written queries in the worker process. The input is read as a program that composes the
//! shapes the bounds review found (issue 46): value functions that copy or grow a value (CONCAT
//! doubling by chained BINDs, SUBSTR, IRI, SHA512, STRUUID, REPLACE), cross products of `VALUES`
//! blocks, `ORDER BY` over them, subqueries, chained `BIND`s, joined groups and `OPTIONAL`s
//! nested in one another. The query goes through `query_untrusted` of a real embedded store
//! whose worker is the `chatty-kg` binary named by `CHATTY_KG_WORKER` (`scripts/fuzz.sh` builds
//! it), so each query is evaluated by a separate process under the worker's address-space limit
//! (`worker_memory_mb`, here 1024 MiB) and killed at its timeout.
//! Must hold: the fuzzing process never panics and its own memory stays under libFuzzer's
//! `-rss_limit_mb` (the work is the worker's); every query ends in rows or a typed error (a
//! worker that died is `QueryWorker`), within libFuzzer's `-timeout`.
#![no_main]
use chatty_kg_graph::{GraphError, GraphSettings, KnowledgeGraph};
use libfuzzer_sys::fuzz_target;
use std::fmt::Write;
use std::sync::OnceLock;

#[path = "store_fixture.rs"]
mod store_fixture;
use store_fixture::Fixture;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let worker = std::env::var_os("CHATTY_KG_WORKER")
            .expect("CHATTY_KG_WORKER names the chatty-kg binary the worker runs (scripts/fuzz.sh sets it)");
        chatty_kg_graph::use_worker_program(worker.into());
        let mut triples = String::new();
        for i in 0..40 {
            writeln!(
                triples,
                "<http://e/{i}> <http://www.w3.org/2000/01/rdf-schema#label> \"thing {i}\" .\n\
                 <http://e/{i}> <http://e/next> <http://e/{}> .",
                (i + 1) % 40
            )
            .unwrap();
        }
        let settings = GraphSettings {
            // Killed at 3 s plus the worker's grace: well under libFuzzer's -timeout=10.
            query_timeout_secs: 3.0,
            worker_memory_mb: 1024,
            ..GraphSettings::default()
        };
        Fixture::load("worker", &triples, settings)
    })
}

/// A `VALUES` block of `n` integers bound to `?v{k}`.
fn values(k: usize, n: usize) -> String {
    let numbers: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    format!("VALUES ?v{k} {{ {} }}", numbers.join(" "))
}

/// The query the input describes: a sequence of steps, each a byte choosing the shape and a byte
/// its size, over a pattern that starts from one graph triple.
fn query(data: &[u8]) -> String {
    let mut body = String::from("?s0 <http://e/next> ?o0 .");
    let mut strings = vec!["\"ab\"".to_owned()]; // expressions of string values so far
    let mut blocks = 0;
    let mut depth = 0;
    let mut order = Vec::new();
    for (step, pair) in data.chunks(2).take(64).enumerate() {
        let (op, size) = (pair[0], pair.get(1).copied().unwrap_or(1) as usize);
        let last = strings.last().cloned().unwrap();
        match op % 12 {
            // "ab" doubled by chained BINDs in a subquery (the big value later steps copy).
            0 => {
                let n = size % 24;
                let mut inner = format!("BIND(\"ab\" AS ?d{step}x0)");
                for k in 0..n {
                    let _ = write!(inner, " BIND(CONCAT(?d{step}x{k}, ?d{step}x{k}) AS ?d{step}x{})", k + 1);
                }
                let _ = write!(body, " {{ SELECT (?d{step}x{n} AS ?b{step}) WHERE {{ {inner} }} }}");
                strings.push(format!("?b{step}"));
            }
            // A block of up to 60 integers: the rows multiply.
            1 => {
                body.push(' ');
                body.push_str(&values(blocks, 1 + size % 60));
                order.push(format!("?v{blocks}"));
                blocks += 1;
            }
            // Per-row copies of the value.
            2 => {
                let at = if blocks > 0 { format!("?v{} * 100 + 1", size % blocks) } else { "1".into() };
                let _ = write!(body, " BIND(SUBSTR({last}, {at}) AS ?c{step})");
                strings.push(format!("?c{step}"));
            }
            3 => {
                let _ = write!(body, " BIND(IRI(CONCAT(\"http://e/\", SUBSTR({last}, 2))) AS ?i{step})");
                order.push(format!("?i{step}"));
            }
            4 => {
                let _ = write!(body, " BIND(SHA512(STR({last})) AS ?h{step})");
                strings.push(format!("?h{step}"));
            }
            5 => {
                let _ = write!(body, " BIND(STRUUID() AS ?u{step})");
                order.push(format!("?u{step}"));
            }
            6 => {
                let _ = write!(body, " BIND(REPLACE({last}, \".\", {last}) AS ?r{step})");
                strings.push(format!("?r{step}"));
            }
            // Chained arithmetic: one more level for the evaluator per BIND.
            7 => {
                let from = if step == 0 { "1".to_owned() } else { format!("COALESCE(?n{}, 2)", step - 1) };
                let _ = write!(body, " BIND({from} * {from} AS ?n{step})");
            }
            // Joined groups and optionals: nesting.
            8 => {
                for _ in 0..(size % 40) {
                    body.push_str(" { ?s0 ?p0 ?x0 }");
                }
            }
            9 => {
                for _ in 0..(size % 40) {
                    body.push_str(" OPTIONAL { ?s0 ?p1 ?x1 }");
                    depth += 1;
                }
            }
            // The pattern so far becomes a subquery.
            10 => {
                body = format!("{{ SELECT * WHERE {{ {body} }} }}");
                depth += 1;
            }
            _ => {
                let _ = write!(body, " FILTER(STRLEN(STR({last})) >= {})", size % 7);
            }
        }
        if depth > 200 {
            break;
        }
    }
    // (The first byte's shape is `% 12`; what is left of it chooses the sort.)
    let sort = if data.first().is_some_and(|b| (b / 12) % 2 == 0) && !order.is_empty() {
        format!(" ORDER BY {}", order.join(" "))
    } else {
        String::new()
    };
    match data.last().map(|b| b % 3) {
        Some(0) => format!("SELECT (COUNT(*) AS ?n) WHERE {{ {body} }}"),
        Some(1) => format!("SELECT * WHERE {{ {body} }}{sort} LIMIT 5"),
        _ => format!("ASK {{ {body} }}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    let text = query(data);
    match fixture.runtime.block_on(fixture.store.query_text(&text)) {
        Ok(_) => {}
        Err(
            GraphError::ValueTooLarge { .. }
            | GraphError::SolutionsTooLarge { .. }
            | GraphError::Timeout { .. }
            | GraphError::QueryWorker { .. },
        ) => {}
        // Any other refusal (the guard's depth, a parse error) must still be a clear error.
        Err(e) => assert!(!e.to_string().is_empty(), "{text}"),
    }
});
