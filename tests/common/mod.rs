pub mod server;

/// A query of 28 doublings (with `doublings` = 28): `BIND(CONCAT(?a, ?a) AS ?b)` on and on grows
/// a 16-byte string to 4 GiB in one solution from under a kilobyte of text. The store must refuse
/// it while it runs (graph::query::bounded), from every door a query comes in by.
#[allow(dead_code)]
pub fn doubling_query(doublings: usize) -> String {
    let mut query = String::from("SELECT (STRLEN(?a) AS ?n) WHERE { BIND(\"0123456789abcdef\" AS ?a0)");
    for i in 1..=doublings {
        query.push_str(&format!(" BIND(CONCAT(?a{p}, ?a{p}) AS ?a{i})", p = i - 1));
    }
    query.push_str(&format!(" BIND(?a{doublings} AS ?a) }}"));
    query
}

/// The queries of `tests/fixtures/attacks/` (name, text): each passes the read-only guard and
/// asks the evaluator for more than a process has (copies of a 4 MiB value in every row of a
/// cross product, a sort of a 729-million-row product, nesting the evaluator recurses into).
/// Evaluated in process they ended the server; in a worker they end the worker.
#[allow(dead_code)]
pub fn attack_queries() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/attacks");
    let mut queries: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    queries.sort();
    assert!(queries.len() >= 6, "{queries:?}");
    queries
}

/// The processes whose parent is `pid` and whose command line holds `word`.
#[allow(dead_code)]
pub fn children_running(pid: u32, word: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid …": the command may hold spaces and parentheses.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
        if parent == Some(pid) && String::from_utf8_lossy(&cmdline).contains(word) {
            found.push(child);
        }
    }
    found
}
