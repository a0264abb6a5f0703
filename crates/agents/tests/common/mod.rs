//! What the agent test files share: the movies fixture in a real embedded store, the real
//! embedding model, and a context around a scripted model whose calls are counted.

// Not every test crate uses every helper; helpers unwrap: a failed setup is a failed test.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_agents::{AgentContext, AgentParameters};
use chatty_kg_embed::{Embedder, MiniLmEmbedder};
use chatty_kg_graph::{EmbeddedStore, GraphSettings, RdfFile};
use chatty_kg_llm::accounting::{AccountedModel, CallLedger};
use chatty_kg_llm::prompts::PromptLibrary;
use chatty_kg_llm::scripted::ScriptedChatModel;
use chatty_kg_models::{catalog, model_for_tests};
use std::path::Path;
use std::sync::{Arc, OnceLock};

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub store: Arc<EmbeddedStore>,
    pub embedder: Arc<dyn Embedder>,
}

pub fn fixture() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE
        .get_or_init(|| {
            let model_dir = model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL)?;
            let dir = tempfile::tempdir().unwrap();
            let movies = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/movies.ttl");
            let settings = GraphSettings::default();
            EmbeddedStore::load(dir.path(), &[RdfFile::new(movies).unwrap()], &settings, false).unwrap();
            let store = Arc::new(EmbeddedStore::open(dir.path(), settings).unwrap());
            let embedder: Arc<dyn Embedder> = Arc::new(MiniLmEmbedder::load(&model_dir).unwrap());
            Some(Fixture {
                _dir: dir,
                store,
                embedder,
            })
        })
        .as_ref()
}

/// A context whose model is `scripted`, with every call counted in the returned ledger.
pub fn context(fixture: &Fixture, scripted: ScriptedChatModel) -> (AgentContext, CallLedger) {
    let ledger = CallLedger::new();
    let ctx = AgentContext {
        kg: fixture.store.clone(),
        llm: Arc::new(AccountedModel::new(Arc::new(scripted), ledger.clone())),
        embedder: fixture.embedder.clone(),
        prompts: Arc::new(PromptLibrary::builtin().unwrap()),
        params: AgentParameters::default(),
    };
    (ctx, ledger)
}
