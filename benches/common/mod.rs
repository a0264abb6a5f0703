//! Synthetic knowledge graphs for the benchmarks: `n` entities, each with one rdfs:label of two or
//! three words (first name, surname, sometimes a generated word) and one or two edges, written as
//! N-Triples. Deterministic for a given `n`.

// A benchmark run by hand: a failed setup stops it with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};

pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SYLLABLES: [&str; 32] = [
    "ka", "lo", "mi", "ra", "tu", "ven", "dor", "sil", "an", "bel", "cor", "dan", "el", "fin", "gar", "hol", "is",
    "jor", "kel", "lin", "mar", "nor", "os", "per", "quin", "ros", "sta", "tor", "ul", "vin", "wen", "zed",
];

/// A pseudo-word of 2–4 syllables; about a million distinct ones.
fn word(rng: &mut SplitMix) -> String {
    let syllables = 2 + rng.below(3);
    (0..syllables).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect()
}

/// The label of entity `i` (same every run).
pub fn label(i: u64) -> String {
    let mut rng = SplitMix::new(i.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xC0FFEE);
    let mut words = vec![capitalize(&word(&mut rng)), capitalize(&word(&mut rng))];
    if rng.below(2) == 0 {
        words.push(word(&mut rng));
    }
    words.join(" ")
}

fn capitalize(w: &str) -> String {
    let mut c = w.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Writes the graph (2–3 triples per entity) and returns its path, reusing an existing file.
pub fn synthetic_ntriples(dir: &Path, n: u64) -> PathBuf {
    let path = dir.join(format!("synthetic-{n}.nt"));
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(dir).unwrap();
    let staging = path.with_extension("partial");
    let mut out = std::io::BufWriter::with_capacity(1 << 22, std::fs::File::create(&staging).unwrap());
    let mut rng = SplitMix::new(42);
    for i in 0..n {
        writeln!(
            out,
            "<http://bench.example.org/e/{i}> <http://www.w3.org/2000/01/rdf-schema#label> \"{}\" .",
            label(i)
        )
        .unwrap();
        writeln!(
            out,
            "<http://bench.example.org/e/{i}> <http://bench.example.org/p/knows> <http://bench.example.org/e/{}> .",
            rng.below(n as usize)
        )
        .unwrap();
        if rng.below(2) == 0 {
            writeln!(
                out,
                "<http://bench.example.org/e/{i}> <http://bench.example.org/p/year> \"{}\" .",
                1900 + rng.below(125)
            )
            .unwrap();
        }
    }
    out.flush().unwrap();
    drop(out);
    std::fs::rename(&staging, &path).unwrap();
    path
}

/// Where benchmark data is cached between runs.
pub fn bench_dir() -> PathBuf {
    std::env::var_os("CHATTY_KG_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data"))
}

/// Sizes from `CHATTY_KG_BENCH_SIZES` (comma-separated), else the given defaults.
pub fn sizes(default: &[u64]) -> Vec<u64> {
    std::env::var("CHATTY_KG_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}
