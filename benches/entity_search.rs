//! Entity-search latency on the embedded label index, with 1 M and 10 M synthetic labels
//! (`CHATTY_KG_BENCH_SIZES=1000000,10000000` is the default). The store for each size is built once
//! through the real `EmbeddedStore::load` and cached under `target/bench-data/`.
//!
//! Besides criterion's statistics, a percentile pass (after one warm-up pass) prints p50/p95/p99
//! over 500 queries of each kind (exact label, two words, one word, one word with a typo) at
//! limit 10 and 600 (vlimit).

// A benchmark run by hand: a failed setup stops it with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use chatty_kg_graph::{EmbeddedStore, GraphSettings, KnowledgeGraph, RdfFile};
use common::{SplitMix, bench_dir, label, sizes, synthetic_ntriples};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::time::{Duration, Instant};

fn store_for(n: u64) -> EmbeddedStore {
    let dir = bench_dir().join(format!("store-{n}"));
    if EmbeddedStore::open(&dir, GraphSettings::default()).is_err() {
        let _ = std::fs::remove_dir_all(&dir);
        let file = synthetic_ntriples(&bench_dir(), n);
        let report =
            EmbeddedStore::load(&dir, &[RdfFile::new(file).unwrap()], &GraphSettings::default(), true).unwrap();
        eprintln!(
            "built store for {n} labels: {} triples in {:.1} s (RDF {:.1} s = {:.0} triples/s, label index {:.1} s)",
            report.parsed,
            report.seconds,
            report.rdf_seconds,
            report.parsed as f64 / report.rdf_seconds,
            report.index_seconds
        );
    }
    EmbeddedStore::open(&dir, GraphSettings::default()).unwrap()
}

/// Queries of four kinds built from labels that exist.
fn queries(n: u64, count: usize) -> Vec<(&'static str, String)> {
    let mut rng = SplitMix::new(7);
    let mut out = Vec::new();
    for _ in 0..count {
        let l = label(rng.next() % n);
        let words: Vec<&str> = l.split(' ').collect();
        out.push(("exact", l.to_lowercase()));
        out.push(("two words", format!("{} {}", words[0], words[1])));
        out.push(("one word", words[1].to_owned()));
        let mut typo: Vec<char> = words[1].chars().collect();
        let at = 1 + rng.below(typo.len() - 1);
        typo[at] = if typo[at] == 'x' { 'y' } else { 'x' };
        out.push(("typo", typo.into_iter().collect()));
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("entity_search");
    group.sample_size(50).measurement_time(Duration::from_secs(5));
    for n in sizes(&[1_000_000, 10_000_000]) {
        let store = store_for(n);
        let all = queries(n, 500);
        // Warm-up: one unmeasured pass, so the percentiles describe a store whose pages are cached
        // (the first queries after opening a 10 M store read from disk: tens of milliseconds).
        for (_, q) in &all {
            runtime.block_on(store.search_entities(q, 600)).unwrap();
        }
        // Percentile pass.
        for limit in [10usize, 600] {
            for kind in ["exact", "two words", "one word", "typo"] {
                let mut times = Vec::new();
                let mut found = 0usize;
                for (_, q) in all.iter().filter(|(k, _)| *k == kind) {
                    let start = Instant::now();
                    let r = runtime.block_on(store.search_entities(q, limit)).unwrap();
                    times.push(start.elapsed());
                    found += usize::from(!r.is_empty());
                }
                times.sort();
                println!(
                    "labels={n} limit={limit} {kind:>9}: p50 {:>8.3} ms  p95 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms  ({} queries, {found} with results)",
                    percentile(&times, 0.5).as_secs_f64() * 1e3,
                    percentile(&times, 0.95).as_secs_f64() * 1e3,
                    percentile(&times, 0.99).as_secs_f64() * 1e3,
                    times.last().unwrap().as_secs_f64() * 1e3,
                    times.len()
                );
            }
        }
        for kind in ["exact", "one word", "typo"] {
            let qs: Vec<&String> = all.iter().filter(|(k, _)| *k == kind).map(|(_, q)| q).collect();
            let mut i = 0;
            group.bench_with_input(BenchmarkId::new(format!("{kind}/limit10"), n), &n, |b, _| {
                b.iter(|| {
                    i = (i + 1) % qs.len();
                    runtime.block_on(store.search_entities(qs[i], 10)).unwrap()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
