//! Bulk-load throughput of the embedded store: a synthetic N-Triples file (default 2 M triples,
//! `CHATTY_KG_BENCH_SIZES` sets the entity count) loaded into a fresh store per iteration, through
//! the same `EmbeddedStore::load` the CLI uses. Reported as triples/s for the RDF part (parse,
//! sort, write, commit) and for the whole load including the label index.

// A benchmark run by hand: a failed setup stops it with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use chatty_kg_graph::{EmbeddedStore, GraphSettings, RdfFile};
use common::{bench_dir, sizes, synthetic_ntriples};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("bulk_load");
    group.sample_size(10).measurement_time(Duration::from_secs(60));
    for n in sizes(&[800_000]) {
        let file = RdfFile::new(synthetic_ntriples(&bench_dir(), n)).unwrap();
        let scratch = tempfile::tempdir_in(bench_dir()).unwrap();
        let mut run = 0;
        let mut load = || {
            run += 1;
            let dir = scratch.path().join(format!("run-{run}"));
            let report =
                EmbeddedStore::load(&dir, std::slice::from_ref(&file), &GraphSettings::default(), false).unwrap();
            std::fs::remove_dir_all(&dir).unwrap();
            report
        };
        let report = load();
        println!(
            "entities={n}: {} triples; RDF {:.2} s = {:.0} triples/s; label index {:.2} s; whole load {:.0} triples/s",
            report.parsed,
            report.rdf_seconds,
            report.parsed as f64 / report.rdf_seconds,
            report.index_seconds,
            report.parsed as f64 / report.seconds
        );
        group.throughput(Throughput::Elements(report.parsed));
        group.bench_function(format!("load/{n}-entities"), |b| b.iter(&mut load));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
