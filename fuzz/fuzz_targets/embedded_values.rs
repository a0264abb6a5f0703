//! Value-building functions on the embedded store. The input is read as a program: each pair of
//! bytes BINDs a new string from earlier ones with CONCAT, REPLACE, UCASE, LCASE, ENCODE_FOR_URI
//! or SUBSTR (a few of them doubling or squaring its length), over a few VALUES rows, and the query
//! ends with STRLEN of the last string or a GROUP_CONCAT of it. The query runs on a real embedded
//! store (Oxigraph on RocksDB, in a temporary directory).
//! Must hold: no panic, and memory stays under libFuzzer's `-rss_limit_mb` (`scripts/fuzz.sh`:
//! 4096): a value past the budget ends the query with a typed error (`ValueTooLarge`,
//! `SolutionsTooLarge`), never an allocation failure that aborts the process.
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
        let settings = GraphSettings {
            // Under libFuzzer's -timeout=10: a slow query is a typed timeout, not a hang report.
            query_timeout_secs: 5.0,
            ..GraphSettings::default()
        };
        Fixture::load(
            "values",
            "<http://e/a> <http://www.w3.org/2000/01/rdf-schema#label> \"Tom Hanks\" .\n\
             <http://e/b> <http://www.w3.org/2000/01/rdf-schema#label> \"Málaga ✓\" .\n",
            settings,
        )
    })
}

/// The query the input describes.
fn query(data: &[u8]) -> String {
    let mut binds = String::new();
    let mut count = 1; // ?a0 comes from VALUES
    for pair in data.chunks(2).take(48) {
        let (op, pick) = (pair[0], pair.get(1).copied().unwrap_or(0) as usize);
        let x = format!("?a{}", pick % count);
        let y = format!("?a{}", (pick / 7) % count);
        let made = match op % 8 {
            0 => format!("CONCAT({x}, {y})"),
            1 => format!("CONCAT({x}, {x}, {x}, {x})"),
            2 => format!("REPLACE({x}, \"a\", {y})"),
            // Every character becomes the whole string: the length squares.
            3 => format!("REPLACE({x}, \".\", {x})"),
            4 => format!("UCASE({x})"),
            5 => format!("LCASE({y})"),
            6 => format!("ENCODE_FOR_URI({x})"),
            _ => format!("SUBSTR({x}, 2)"),
        };
        write!(binds, " BIND({made} AS ?a{count})").unwrap();
        count += 1;
    }
    let last = count - 1;
    let values = "VALUES ?a0 { \"0123456789abcdef\" \"é✓ a\" \"Tom Hanks\" }";
    if data.first().is_some_and(|b| b % 2 == 0) {
        format!("SELECT (STRLEN(?a{last}) AS ?n) WHERE {{ {values}{binds} }}")
    } else {
        format!("SELECT (GROUP_CONCAT(?a{last}; SEPARATOR=\"--\") AS ?g) WHERE {{ {values}{binds} }}")
    }
}

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    let text = query(data);
    match fixture.runtime.block_on(fixture.store.query_text(&text)) {
        Ok(_) => {}
        Err(GraphError::ValueTooLarge { .. } | GraphError::SolutionsTooLarge { .. } | GraphError::Timeout { .. }) => {}
        // Any other refusal must still be a clear error.
        Err(e) => assert!(!e.to_string().is_empty(), "{text}"),
    }
});
