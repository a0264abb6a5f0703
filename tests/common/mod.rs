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
