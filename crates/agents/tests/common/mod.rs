//! What the agent test files share: the movies fixture in a real embedded store, the real
//! embedding model, and a context around a scripted model whose calls are counted.

// Not every test crate uses every helper; helpers unwrap: a failed setup is a failed test.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use chatty_kg_agents::{AgentContext, AgentParameters, Explanation, Mode, Pipeline};
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

/// The movies graph (tests/fixtures/movies.ttl); `None` when the embedding model is missing.
pub fn fixture() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE.get_or_init(|| load("movies.ttl")).as_ref()
}

/// The places-people-books graph of the relation-path tests (tests/fixtures/world.ttl).
pub fn world() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE.get_or_init(|| load("world.ttl")).as_ref()
}

/// A graph whose predicates are named only by their own labels (tests/fixtures/labelled-predicates.ttl).
pub fn labelled_predicates() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE.get_or_init(|| load("labelled-predicates.ttl")).as_ref()
}

/// The people-places-classes graph of the dialogue tests (tests/fixtures/dialogue.ttl).
pub fn dialogue_graph() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE.get_or_init(|| load("dialogue.ttl")).as_ref()
}

/// Places with classes, a subclass and typed literals (tests/fixtures/classes.ttl).
pub fn classes_graph() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE.get_or_init(|| load("classes.ttl")).as_ref()
}

/// A graph of `tests/fixtures/<file>` in a fresh store.
pub fn fixture_file(file: &str) -> Option<Fixture> {
    load(file)
}

fn load(file: &str) -> Option<Fixture> {
    load_path(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(file),
    )
}

/// A graph written by the test itself (Turtle), in a fresh store.
pub fn from_turtle(turtle: &str) -> Option<Fixture> {
    let file = tempfile::Builder::new().suffix(".ttl").tempfile().unwrap();
    std::fs::write(file.path(), turtle).unwrap();
    load_path(file.path())
}

fn load_path(path: &Path) -> Option<Fixture> {
    let model_dir = model_for_tests(catalog::DEFAULT_EMBEDDING_MODEL)?;
    let dir = tempfile::tempdir().unwrap();
    let path = path.to_path_buf();
    let settings = GraphSettings::default();
    EmbeddedStore::load(dir.path(), &[RdfFile::new(path).unwrap()], &settings, false).unwrap();
    let store = Arc::new(EmbeddedStore::open(dir.path(), settings).unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(MiniLmEmbedder::load(&model_dir).unwrap());
    Some(Fixture {
        _dir: dir,
        store,
        embedder,
    })
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
        examples: Default::default(),
    };
    (ctx, ledger)
}

/// The Virtuoso endpoint `scripts/test.sh` started over movies.ttl (`CHATTY_KG_TEST_VIRTUOSO`);
/// `None` (the test skips) without it, a failure when `CHATTY_KG_REQUIRE_VIRTUOSO=1` (CI).
pub fn virtuoso() -> Option<Arc<dyn chatty_kg_graph::KnowledgeGraph>> {
    match std::env::var("CHATTY_KG_TEST_VIRTUOSO") {
        Ok(url) if !url.is_empty() => Some(Arc::new(
            chatty_kg_graph::SparqlEndpoint::new(chatty_kg_graph::EndpointSettings::new(url), GraphSettings::default())
                .unwrap(),
        )),
        _ if std::env::var("CHATTY_KG_REQUIRE_VIRTUOSO").as_deref() == Ok("1") => {
            panic!("CHATTY_KG_REQUIRE_VIRTUOSO=1 but CHATTY_KG_TEST_VIRTUOSO is not set: Virtuoso did not start")
        }
        _ => None,
    }
}

/// A pipeline over `fixture` whose scripted model has no rule: every question must be answered
/// without a model call.
pub fn silent_pipeline(fixture: &Fixture) -> Pipeline {
    let (ctx, _) = context(fixture, ScriptedChatModel::new());
    Pipeline::new(ctx)
}

/// Asks one question on its own, and checks that the model was not asked.
pub async fn ask_silently(pipeline: &Pipeline, question: &str) -> Explanation {
    let e = pipeline
        .ask(question, Mode::SingleTurn, &[])
        .await
        .unwrap_or_else(|e| panic!("{question}: {e}"));
    assert_eq!(e.llm.calls, 0, "{question}: no model call is needed");
    e
}

/// The answers as shown, sorted.
pub fn sorted(e: &Explanation) -> Vec<String> {
    let mut answers = e.display_answers();
    answers.sort();
    answers
}
