//! The embedded store the store targets query: a small graph in a temporary directory, loaded
//! and opened once per fuzzing process, with a runtime to run its queries on.
use chatty_kg_graph::{EmbeddedStore, GraphSettings, RdfFile};

pub struct Fixture {
    pub store: EmbeddedStore,
    pub runtime: tokio::runtime::Runtime,
}

impl Fixture {
    /// `triples` (N-Triples) in a fresh store under the temporary directory, named after `name`
    /// and the process, opened with `settings`.
    pub fn load(name: &str, triples: &str, settings: GraphSettings) -> Self {
        let dir = std::env::temp_dir().join(format!("chatty-kg-fuzz-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ttl = dir.join("graph.nt");
        std::fs::write(&ttl, triples).unwrap();
        let store_dir = dir.join("store");
        EmbeddedStore::load(&store_dir, &[RdfFile::new(ttl).unwrap()], &settings, false).unwrap();
        Fixture {
            store: EmbeddedStore::open(&store_dir, settings).unwrap(),
            runtime: tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap(),
        }
    }
}
