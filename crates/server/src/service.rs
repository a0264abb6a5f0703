//! The one piece of shared state: a pipeline per configured knowledge graph, the session store,
//! the metrics and the limits. REST and WebSocket handlers both answer through
//! [`ChatService::ask`], so a question behaves the same whichever way it came in.
//!
//! Answers run as tasks on the main multi-threaded runtime (not on the HTTP worker that received
//! them) and are tracked, so a client that disconnects mid-answer does not cancel it (the turn is
//! still recorded and shows up on resume), and shutdown can wait for the answers under way. A
//! lock per session keeps a session's turns in order; a semaphore bounds answers at once.
//!
//! Waiting is bounded too: at most `max_queued` questions wait for a permit (more get 429
//! `overloaded` at once), the wait counts in `answer_timeout`, and a question whose client went
//! away before it got a permit is dropped instead of run.

use crate::error::ServerError;
use crate::feedback::RatingRequest;
use crate::metrics::Metrics;
use crate::protocol::{ServerMessage, stage_events};
use chatty_kg_agents::referents::Member;
use chatty_kg_agents::state::TurnEntity;
use chatty_kg_agents::{AgentState, Explanation, Mode, Pipeline, Turn};
use chatty_kg_dialogue::{
    ContextEntity, ContextValue, DialogueStore, ExampleRecord, Owner, Rating, Scope, SessionId, SessionInfo,
    TurnContext, TurnRecord,
};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Turns returned at once by the history of REST and of WebSocket `resume`.
pub const HISTORY_PAGE: usize = 100;

/// The longest correction accepted (words or a query).
const MAX_CORRECTION_CHARS: usize = 10_000;
/// The most a stored turn's explanation weighs (its JSON). Beyond it the answers lose their
/// provenance, then the last answers go (the turn says it was truncated).
pub(crate) const MAX_TURN_BYTES: usize = 1 << 20;
/// The most a page of history weighs: it ends early (at least one turn) past this, and the next
/// page starts where it ended.
const HISTORY_PAGE_BYTES: usize = 4 << 20;
/// A page of history counts as one request in its caller's rate, and one more for each whole
/// MiB it weighs: reading history is bounded like asking (a page may weigh 4 MiB).
const HISTORY_BYTES_PER_REQUEST: usize = 1 << 20;
/// The longest a correction may take to check (its query, its label searches).
const MAX_CORRECTION_TIME: Duration = Duration::from_secs(30);

/// A configured knowledge graph as `/api/kgs` lists it (no credentials).
#[derive(Debug, Clone, Serialize)]
pub struct KgInfo {
    pub name: String,
    /// `embedded` or `endpoint`.
    pub backend: &'static str,
    /// The store directory or the endpoint URL.
    pub location: String,
    pub default: bool,
}

pub struct KnowledgeGraphEntry {
    pub info: KgInfo,
    pub pipeline: Pipeline,
}

#[derive(Debug, Clone)]
pub struct Limits {
    pub max_question_chars: usize,
    /// From the question's arrival to its answer, waiting included.
    pub answer_timeout: Duration,
    /// Questions that may wait for an answer permit; more are refused.
    pub max_queued: usize,
    /// Answer values kept in a stored turn (and sent); more are cut and the turn says so.
    pub max_stored_answers: usize,
    /// Sessions and questions per caller and window.
    pub rate: crate::limits::RateLimits,
    /// Answers kept per turn for later questions' context (L).
    pub context_answers: usize,
    /// Turns of history given to the agents.
    pub context_turns: usize,
    /// WebSockets and event streams open at once (`connections.rs`).
    pub connections: crate::connections::ConnectionCaps,
}

pub struct ChatService {
    kgs: BTreeMap<String, KnowledgeGraphEntry>,
    default_kg: String,
    store: Arc<dyn DialogueStore>,
    pub metrics: Metrics,
    limits: Limits,
    permits: Semaphore,
    rate: crate::limits::RateLimiter,
    /// WebSockets and event streams open now.
    connections: Arc<crate::connections::Connections>,
    /// Questions waiting for a permit.
    queued: AtomicUsize,
    session_locks: Mutex<HashMap<SessionId, Weak<tokio::sync::Mutex<()>>>>,
    tasks: TaskTracker,
    runtime: tokio::runtime::Handle,
    /// The last probe of the session store: when, and what it said.
    store_probe: tokio::sync::Mutex<Option<(Instant, Result<(), String>)>>,
}

/// Who is asking: the owner recorded on the sessions they create (None without API keys).
#[derive(Debug, Clone, Default)]
pub struct Caller {
    pub owner: Option<Owner>,
}

impl ChatService {
    pub fn new(
        kgs: BTreeMap<String, KnowledgeGraphEntry>,
        default_kg: String,
        store: Arc<dyn DialogueStore>,
        metrics: Metrics,
        limits: Limits,
        max_concurrent_answers: usize,
    ) -> Result<Self, ServerError> {
        if !kgs.contains_key(&default_kg) {
            return Err(ServerError::Start(format!(
                "the default knowledge graph {default_kg:?} is not configured"
            )));
        }
        let rate = limits.rate;
        let connections = crate::connections::Connections::new(limits.connections);
        Ok(Self {
            kgs,
            default_kg,
            store,
            metrics,
            limits,
            permits: Semaphore::new(max_concurrent_answers.max(1)),
            rate: crate::limits::RateLimiter::new(rate),
            connections,
            queued: AtomicUsize::new(0),
            session_locks: Mutex::new(HashMap::new()),
            tasks: TaskTracker::new(),
            runtime: tokio::runtime::Handle::current(),
            store_probe: tokio::sync::Mutex::new(None),
        })
    }

    pub fn kgs(&self) -> impl Iterator<Item = &KgInfo> {
        self.kgs.values().map(|kg| &kg.info)
    }

    /// The graph of `kg` (default: the default KG), if configured.
    pub fn graph(&self, kg: Option<&str>) -> Option<Arc<dyn chatty_kg_graph::KnowledgeGraph>> {
        let entry = self.kgs.get(kg.unwrap_or(&self.default_kg))?;
        Some(entry.pipeline.context().kg.clone())
    }

    /// The knowledge graph used when a request names none.
    pub fn default_kg(&self) -> &str {
        &self.default_kg
    }

    /// The graph of the configured KG `name`, or `unknown_kg`.
    pub fn graph_named(&self, name: &str) -> Result<Arc<dyn chatty_kg_graph::KnowledgeGraph>, ServerError> {
        self.graph(Some(name)).ok_or_else(|| self.unknown_kg(name))
    }

    /// Turns per question given to the agents.
    pub fn context_turns(&self) -> usize {
        self.limits.context_turns
    }

    pub fn store(&self) -> &Arc<dyn DialogueStore> {
        &self.store
    }

    /// A new session on `kg` (default: the default KG).
    pub async fn create_session(&self, caller: &Caller, kg: Option<&str>) -> Result<SessionInfo, ServerError> {
        let kg = kg.unwrap_or(&self.default_kg);
        if !self.kgs.contains_key(kg) {
            return Err(self.unknown_kg(kg));
        }
        self.rate.create_session(caller.owner.as_ref())?;
        let info = self.store.create(kg, caller.owner.clone()).await?;
        self.metrics.sessions_created.inc();
        Ok(info)
    }

    pub async fn session(&self, caller: &Caller, id: &str) -> Result<SessionInfo, ServerError> {
        Ok(self.store.get(id, caller.owner.as_ref()).await?)
    }

    /// A page of a session's turns: from turn `from` (default: the last [`HISTORY_PAGE`]
    /// turns), at most `limit` (default and most: [`HISTORY_PAGE`]). Returns the first index.
    /// The page counts in `caller`'s rate (see [`HISTORY_BYTES_PER_REQUEST`]): refused before
    /// anything is read when the rate is used up.
    pub async fn turns(
        &self,
        caller: &Caller,
        session: &SessionInfo,
        from: Option<u32>,
        limit: Option<usize>,
    ) -> Result<(u32, Vec<TurnRecord>), ServerError> {
        self.charge(caller)?;
        let limit = limit.unwrap_or(HISTORY_PAGE).min(HISTORY_PAGE);
        let latest = from.is_none();
        let from = from.unwrap_or_else(|| session.turns.saturating_sub(limit as u32));
        let turns = self.store.turns_page(&session.id, from, limit).await?;
        let (first, page, bytes) = fit_page(turns, from, latest, HISTORY_PAGE_BYTES);
        let weight = u32::try_from(bytes / HISTORY_BYTES_PER_REQUEST).unwrap_or(u32::MAX);
        self.rate.spend(caller.owner.as_ref(), weight);
        Ok((first, page))
    }

    /// Counts a new WebSocket or event stream of `caller` until the returned slot is dropped,
    /// or refuses it (`connections.rs`).
    pub fn open_connection(&self, caller: &Caller) -> Result<crate::connections::ConnectionSlot, ServerError> {
        self.counted(self.connections.open(caller.owner.as_ref()))
    }

    /// Rates turn `turn` of session `id` (`None` withdraws the rating), after checking a
    /// correction against the graph (its query runs, so it counts as a question in the caller's
    /// rate). Returns the turn once the rating is on disk.
    pub async fn rate(
        &self,
        caller: &Caller,
        id: &str,
        turn: u32,
        request: Option<RatingRequest>,
    ) -> Result<TurnRecord, ServerError> {
        self.counted(self.rate_turn(caller, id, turn, request).await)
    }

    async fn rate_turn(
        &self,
        caller: &Caller,
        id: &str,
        turn: u32,
        request: Option<RatingRequest>,
    ) -> Result<TurnRecord, ServerError> {
        let info = self.session(caller, id).await?;
        let label = match &request {
            None => "withdrawn",
            Some(r) if r.correction.is_some() => "corrected",
            Some(r) if r.rating == Rating::Up => "up",
            Some(_) => "down",
        };
        let feedback = match request {
            None => None,
            Some(request) => {
                let record = self
                    .store
                    .turns_page(&info.id, turn, 1)
                    .await?
                    .into_iter()
                    .find(|t| t.index == turn)
                    .ok_or(ServerError::NoSuchTurn(turn))?;
                // A correction's query or words are looked up in the graph: admitted like a
                // question (rate, queue, permit).
                // Waiting for the permit counts in the correction's own time, so a WebSocket
                // connection is never held longer than that.
                let _permit = match &request.correction {
                    Some(_) => Some(self.admitted(caller, MAX_CORRECTION_TIME).await?),
                    None => {
                        self.rate.ask(caller.owner.as_ref())?;
                        None
                    }
                };
                let kg = self.graph_named(&info.kg)?;
                let now = now_ms();
                let checked = crate::feedback::checked(
                    request,
                    &record,
                    kg.as_ref(),
                    MAX_CORRECTION_CHARS,
                    self.limits.max_stored_answers,
                    now,
                );
                // Bounded well below the WebSocket's ping timeout: a rating is a short errand.
                let limit = self.limits.answer_timeout.min(MAX_CORRECTION_TIME);
                let checked = tokio::time::timeout(limit, checked)
                    .await
                    .map_err(|_| ServerError::AnswerTimeout { secs: limit.as_secs() })??;
                Some(checked)
            }
        };
        let record = self.store.rate(id, caller.owner.as_ref(), turn, feedback).await?;
        self.metrics
            .feedback
            .with_label_values(&[info.kg.as_str(), label])
            .inc();
        self.learn(&info, &record).await;
        Ok(record)
    }

    /// Makes the rated turn's example (or removes its earlier one): stored beside the session,
    /// and in the graph's book for the owner's next questions. The rating stands either way.
    async fn learn(&self, session: &SessionInfo, turn: &TurnRecord) {
        let Some(entry) = self.kgs.get(&session.kg) else { return };
        let ctx = entry.pipeline.context();
        let id = ExampleRecord::id_of_turn(&session.id, turn.index);
        let example = match crate::examples::of_turn(ctx, turn).await {
            Ok(example) => example,
            Err(reason) => {
                tracing::info!(session = %session.id, turn = turn.index, %reason, "the feedback made no example");
                None
            }
        };
        let Some(example) = example else {
            ctx.examples.remove(&id);
            if let Err(error) = self.store.remove_example(&id, Scope::All).await {
                tracing::warn!(session = %session.id, %error, "the turn's earlier example was not removed");
            }
            return;
        };
        let record = match crate::examples::record(session, turn.index, &example, now_ms()) {
            Ok(record) => record,
            Err(error) => return tracing::warn!(%error, "an example could not be encoded"),
        };
        let holder = crate::examples::holder(&record);
        if let Err(error) = self.store.put_example(record).await {
            return tracing::warn!(session = %session.id, %error, "the example was not stored");
        }
        if let Err(error) = ctx.examples.insert(&id, holder, example) {
            tracing::warn!(%error, "an example's query does not parse again");
        }
    }

    /// Loads every graph's stored examples into its book (at start).
    pub async fn load_examples(&self) -> Result<usize, ServerError> {
        let mut loaded = 0;
        for record in self.store.examples(Scope::All, None).await? {
            let Some(entry) = self.kgs.get(&record.kg) else {
                continue;
            };
            let Ok(example) = serde_json::from_value(record.body.clone()) else {
                tracing::warn!(example = %record.id, "an unreadable example was not loaded");
                continue;
            };
            if entry
                .pipeline
                .context()
                .examples
                .insert(&record.id, crate::examples::holder(&record), example)
                .is_ok()
            {
                loaded += 1;
            }
        }
        Ok(loaded)
    }

    /// The caller's examples (of `kg`, when given), as an example file.
    pub async fn examples_export(&self, caller: &Caller, kg: Option<&str>) -> Result<serde_json::Value, ServerError> {
        if let Some(kg) = kg
            && !self.kgs.contains_key(kg)
        {
            return Err(self.unknown_kg(kg));
        }
        let records = self.store.examples(Scope::Owner(caller.owner.as_ref()), kg).await?;
        Ok(crate::examples::export(&records))
    }

    /// Removes the caller's example `id` (an operator's shared ones are removed with the CLI).
    pub async fn remove_example(&self, caller: &Caller, id: &str) -> Result<(), ServerError> {
        if !self
            .store
            .remove_example(id, Scope::Owner(caller.owner.as_ref()))
            .await?
        {
            return Err(ServerError::NoSuchExample);
        }
        // Ids are unique across graphs: the one book holding it drops it.
        for entry in self.kgs.values() {
            entry.pipeline.context().examples.remove(id);
        }
        Ok(())
    }

    /// The caller's rated turns (of `kg`, when given) as QALD-JSON.
    pub async fn feedback_export(&self, caller: &Caller, kg: Option<&str>) -> Result<serde_json::Value, ServerError> {
        if let Some(kg) = kg
            && !self.kgs.contains_key(kg)
        {
            return Err(self.unknown_kg(kg));
        }
        let rated = self.store.rated_turns(Scope::Owner(caller.owner.as_ref())).await?;
        let (mut export, counts) = crate::feedback::qald_export(&rated, kg, caller.owner.is_some());
        export["chatty_kg"] = serde_json::json!(counts);
        Ok(export)
    }

    pub async fn delete_session(&self, caller: &Caller, id: &str) -> Result<(), ServerError> {
        Ok(self.store.delete(id, caller.owner.as_ref()).await?)
    }

    /// Answers `question` in session `id` and records the turn durably before returning it.
    /// With `events`, stage events are sent there as the agents finish.
    pub async fn ask(
        self: &Arc<Self>,
        caller: &Caller,
        id: &str,
        question: &str,
        events: Option<mpsc::UnboundedSender<ServerMessage>>,
    ) -> Result<TurnRecord, ServerError> {
        self.counted(self.start_answer(caller, id, question, events).await)
    }

    /// Counts one request of `caller` in their question rate (work that is theirs to ask for: a
    /// description, suggestions, a rating, an export).
    pub fn charge(&self, caller: &Caller) -> Result<(), ServerError> {
        self.counted(self.rate.ask(caller.owner.as_ref()))
    }

    /// Admits a graph lookup the caller chose (MCP's `entities`, `sparql` and `describe`): it
    /// counts in their question rate and waits for an answer permit in the queue's bounds, as a
    /// question does; the permit is held while the returned guard lives.
    pub async fn admit_lookup(&self, caller: &Caller) -> Result<tokio::sync::SemaphorePermit<'_>, ServerError> {
        self.counted(self.admitted(caller, self.limits.answer_timeout).await)
    }

    /// Counts `caller`'s request in their rate and waits at most `wait` for an answer permit.
    async fn admitted(&self, caller: &Caller, wait: Duration) -> Result<tokio::sync::SemaphorePermit<'_>, ServerError> {
        self.rate.ask(caller.owner.as_ref())?;
        if self.tasks.is_closed() {
            return Err(ServerError::ShuttingDown);
        }
        let deadline = tokio::time::Instant::now() + wait.min(self.limits.answer_timeout);
        // The caller's own future holds the permit: dropping it gives the permit back.
        let (_, permit) = self.wait_turn(None, deadline, &CancellationToken::new()).await?;
        Ok(permit)
    }

    /// The error for a knowledge graph `name` that is not configured, naming those that are.
    pub(crate) fn unknown_kg(&self, name: &str) -> ServerError {
        ServerError::UnknownKg {
            name: name.to_owned(),
            known: self.kgs.keys().cloned().collect::<Vec<_>>().join(", "),
        }
    }

    /// `result`, its error counted in the metrics.
    fn counted<T>(&self, result: Result<T, ServerError>) -> Result<T, ServerError> {
        if let Err(error) = &result {
            self.metrics.error(error.kind());
        }
        result
    }

    /// A question that can be asked: not empty, not too long.
    pub fn check_question(&self, question: &str) -> Result<(), ServerError> {
        let question = question.trim();
        if !question.chars().any(char::is_alphanumeric) {
            return Err(ServerError::EmptyQuestion);
        }
        let chars = question.chars().count();
        if chars > self.limits.max_question_chars {
            return Err(ServerError::QuestionTooLong {
                chars,
                max: self.limits.max_question_chars,
            });
        }
        Ok(())
    }

    async fn start_answer(
        self: &Arc<Self>,
        caller: &Caller,
        id: &str,
        question: &str,
        events: Option<mpsc::UnboundedSender<ServerMessage>>,
    ) -> Result<TurnRecord, ServerError> {
        self.check_question(question)?;
        let question = question.trim();
        let session = self.session(caller, id).await?;
        let question = question.to_owned();
        self.spawn_answer(caller, move |service, deadline, abandoned| async move {
            service.answer(session, question, events, deadline, abandoned).await
        })
        .await
    }

    /// What every question goes through once checked: the caller's rate, the shutdown, then
    /// `work` spawned on the service's tasks with the answer's deadline and a token cancelled
    /// when this future is dropped (the client went away: a question still waiting for a permit
    /// is then dropped; one being answered finishes, and a session's is recorded).
    async fn spawn_answer<T, F, Fut>(self: &Arc<Self>, caller: &Caller, work: F) -> Result<T, ServerError>
    where
        F: FnOnce(Arc<Self>, tokio::time::Instant, CancellationToken) -> Fut,
        Fut: std::future::Future<Output = Result<T, ServerError>> + Send + 'static,
        T: Send + 'static,
    {
        self.rate.ask(caller.owner.as_ref())?;
        if self.tasks.is_closed() {
            return Err(ServerError::ShuttingDown);
        }
        let deadline = tokio::time::Instant::now() + self.limits.answer_timeout;
        let abandoned = CancellationToken::new();
        let _abandon_on_drop = abandoned.clone().drop_guard();
        let task = self
            .tasks
            .spawn_on(work(self.clone(), deadline, abandoned), &self.runtime);
        task.await
            .map_err(|e| ServerError::Internal(format!("the answer task failed: {e}")))?
    }

    /// Answers `question` on `kg` (default: the default KG) with `history` as the dialogue so
    /// far, without a session: the OpenAI-compatible endpoint, whose messages carry the history.
    /// The same bounds as a session's question (rate, queue, permits, answer timeout); nothing is
    /// stored.
    pub async fn ask_once(
        self: &Arc<Self>,
        caller: &Caller,
        kg: Option<&str>,
        question: &str,
        history: Vec<Turn>,
        events: Option<mpsc::UnboundedSender<ServerMessage>>,
        ground: bool,
    ) -> Result<(String, Explanation), ServerError> {
        self.counted(self.start_once(caller, kg, question, history, events, ground).await)
    }

    async fn start_once(
        self: &Arc<Self>,
        caller: &Caller,
        kg: Option<&str>,
        question: &str,
        mut history: Vec<Turn>,
        events: Option<mpsc::UnboundedSender<ServerMessage>>,
        ground: bool,
    ) -> Result<(String, Explanation), ServerError> {
        self.check_question(question)?;
        let kg = kg.unwrap_or(&self.default_kg).to_owned();
        if !self.kgs.contains_key(&kg) {
            return Err(self.unknown_kg(&kg));
        }
        let question = question.trim().to_owned();
        let asker = caller.owner.clone();
        self.spawn_answer(caller, move |service, deadline, abandoned| async move {
            let (_, _permit) = service.wait_turn(None, deadline, &abandoned).await?;
            // Earlier turns known only by their text are looked up in the graph once the
            // question is admitted (its rate, a permit): a refused request searches nothing.
            if ground && let Some(graph) = service.graph(Some(&kg)) {
                for turn in &mut history {
                    ground_turn(graph.as_ref(), turn).await?;
                }
            }
            let explanation = service
                .run(&kg, &question, &history, asker.as_ref(), events, deadline)
                .await?;
            Ok((kg, explanation))
        })
        .await
    }

    /// Runs the agents on `question` over `kg` for `asker` (whose examples it may use), sending
    /// stage events to `events`, within `deadline`; the answers are capped at `max_stored_answers`.
    async fn run(
        &self,
        kg: &str,
        question: &str,
        history: &[Turn],
        asker: Option<&Owner>,
        events: Option<mpsc::UnboundedSender<ServerMessage>>,
        deadline: tokio::time::Instant,
    ) -> Result<Explanation, ServerError> {
        let entry = self.kgs.get(kg).ok_or_else(|| self.unknown_kg(kg))?;
        self.metrics.answers_in_flight.inc();
        let started = Instant::now();
        let mut observer = |agent: &str, state: &AgentState| {
            let Some(events) = &events else { return };
            for (stage, data) in stage_events(agent, state) {
                // A closed receiver only means the client left; the answer is still recorded.
                let _ = events.send(ServerMessage::Stage {
                    stage,
                    agent: agent.to_owned(),
                    elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
                    data,
                });
            }
        };
        let answered = tokio::time::timeout_at(
            deadline,
            entry.pipeline.ask_observed_by(
                question,
                Mode::MultiTurn,
                history,
                crate::examples::asker(asker),
                &mut observer,
            ),
        )
        .await;
        self.metrics.answers_in_flight.dec();
        let mut explanation = match answered {
            Err(_) => {
                return Err(ServerError::AnswerTimeout {
                    secs: self.limits.answer_timeout.as_secs(),
                });
            }
            Ok(result) => result?,
        };
        if explanation.answers.len() > self.limits.max_stored_answers {
            explanation.answers.truncate(self.limits.max_stored_answers);
            explanation.truncated = true;
        }
        fit_turn(&mut explanation, MAX_TURN_BYTES);
        self.metrics.answered(kg, &explanation);
        Ok(explanation)
    }

    /// Waits for the session's turn (when there is a session) and an answer permit, in the
    /// queue's bounds.
    async fn wait_turn(
        &self,
        session: Option<&SessionId>,
        deadline: tokio::time::Instant,
        abandoned: &CancellationToken,
    ) -> Result<
        (
            Option<tokio::sync::OwnedMutexGuard<()>>,
            tokio::sync::SemaphorePermit<'_>,
        ),
        ServerError,
    > {
        struct Queued<'a>(&'a AtomicUsize);
        impl Drop for Queued<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        if self.queued.fetch_add(1, Ordering::SeqCst) >= self.limits.max_queued + self.permits.available_permits() {
            self.queued.fetch_sub(1, Ordering::SeqCst);
            return Err(ServerError::Overloaded {
                queued: self.limits.max_queued,
            });
        }
        let _queued = Queued(&self.queued);
        let wait = async {
            let in_order = match session {
                Some(session) => Some(self.session_lock(session).lock_owned().await),
                None => None,
            };
            let permit = self.permits.acquire().await.map_err(|_| ServerError::ShuttingDown)?;
            Ok((in_order, permit))
        };
        tokio::select! {
            waited = tokio::time::timeout_at(deadline, wait) => waited.map_err(|_| ServerError::AnswerTimeout {
                secs: self.limits.answer_timeout.as_secs(),
            })?,
            () = abandoned.cancelled() => Err(ServerError::Abandoned),
        }
    }

    async fn answer(
        &self,
        session: SessionInfo,
        question: String,
        events: Option<mpsc::UnboundedSender<ServerMessage>>,
        deadline: tokio::time::Instant,
        abandoned: CancellationToken,
    ) -> Result<TurnRecord, ServerError> {
        if !self.kgs.contains_key(&session.kg) {
            return Err(self.unknown_kg(&session.kg));
        }
        tracing::debug!(session = %session.id, %question, "question received");
        let (_in_order, _permit) = self.wait_turn(Some(&session.id), deadline, &abandoned).await?;
        let history: Vec<Turn> = self
            .store
            .history(&session.id, self.limits.context_turns)
            .await?
            .into_iter()
            .map(turn_from_context)
            .collect();
        tracing::debug!(session = %session.id, "answering");
        let explanation = self
            .run(
                &session.kg,
                &question,
                &history,
                session.owner.as_ref(),
                events,
                deadline,
            )
            .await?;
        let context = context_from_turn(Turn::answered(&explanation, self.limits.context_answers));
        let explanation =
            serde_json::to_value(&explanation).map_err(|e| ServerError::Internal(format!("explanation: {e}")))?;
        let record = self.store.append(&session.id, context, explanation).await?;
        tracing::debug!(session = %session.id, turn = record.index, "answered and stored");
        Ok(record)
    }

    fn session_lock(&self, id: &SessionId) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self
            .session_locks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(lock) = locks.get(id).and_then(Weak::upgrade) {
            return lock;
        }
        // Forget the locks of sessions nobody is answering in.
        if locks.len() >= 1024 {
            locks.retain(|_, lock| lock.strong_count() > 0);
        }
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        locks.insert(id.clone(), Arc::downgrade(&lock));
        lock
    }

    /// Refuses new questions, then waits up to `grace` for the answers under way. Returns how
    /// many were still running when the grace ran out.
    pub async fn drain(&self, grace: Duration) -> usize {
        self.tasks.close();
        if tokio::time::timeout(grace, self.tasks.wait()).await.is_err() {
            return self.tasks.len();
        }
        0
    }

    /// Whether the session store takes writes: a probe write, at most one per 5 s (`/health`
    /// needs no key, so it must not cost a sync per request).
    pub async fn store_health(&self) -> Result<(), String> {
        const FRESH: Duration = Duration::from_secs(5);
        let mut last = self.store_probe.lock().await;
        if let Some((_, result)) = last.as_ref().filter(|(at, _)| at.elapsed() < FRESH) {
            return result.clone();
        }
        let result = match tokio::time::timeout(FRESH, self.store.check()).await {
            Ok(Ok(())) => Ok(()),
            // sled refuses every write after an I/O error until it is reopened; PostgreSQL may be
            // down or full.
            Ok(Err(error)) => Err(format!(
                "the session store ({}) refuses writes ({error}); free disk space or bring the database back, \
                 then restart the server if it uses sled",
                self.store.describe()
            )),
            Err(_) => Err("the session store did not complete a write within 5 s".to_owned()),
        };
        *last = Some((Instant::now(), result.clone()));
        result
    }

    pub fn is_shutting_down(&self) -> bool {
        self.tasks.is_closed()
    }
}

/// A stored turn as the agents read it (a format-1 record has no referents: empty).
/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn turn_from_context(turn: TurnContext) -> Turn {
    Turn {
        question: turn.question,
        answers: turn.answers,
        entities: turn
            .entities
            .into_iter()
            .map(|e| TurnEntity {
                mention: e.mention,
                iri: e.iri,
                label: e.label,
            })
            .collect(),
        values: turn
            .values
            .into_iter()
            .map(|v| Member {
                value: v.value,
                label: v.label,
                iri: v.iri,
                datatype: v.datatype,
            })
            .collect(),
        total: turn.total,
        // A clarification this version cannot read is no question waiting.
        clarification: turn.clarification.and_then(|c| serde_json::from_value(c).ok()),
        answer_set: turn.answer_set.and_then(|s| serde_json::from_value(s).ok()),
        query: turn.query,
    }
}

/// What the store keeps of an answered turn for later questions.
fn context_from_turn(turn: Turn) -> TurnContext {
    TurnContext {
        question: turn.question,
        answers: turn.answers,
        entities: turn
            .entities
            .into_iter()
            .map(|e| ContextEntity {
                mention: e.mention,
                iri: e.iri,
                label: e.label,
            })
            .collect(),
        values: turn
            .values
            .into_iter()
            .map(|v| ContextValue {
                value: v.value,
                label: v.label,
                iri: v.iri,
                datatype: v.datatype,
            })
            .collect(),
        total: turn.total,
        clarification: turn.clarification.and_then(|c| serde_json::to_value(c).ok()),
        answer_set: turn.answer_set.and_then(|s| serde_json::to_value(s).ok()),
        query: turn.query,
    }
}

/// Answers per earlier turn looked up in the graph.
const GROUNDED_ANSWERS: usize = 20;

/// An earlier turn known only by its text gets back what a follow-up can refer to: each answer
/// line that is exactly the label of a vertex becomes that vertex (the best connected of its
/// homonyms), any other a literal value. (A stored session keeps these from the answer itself.)
pub(crate) async fn ground_turn(
    graph: &dyn chatty_kg_graph::KnowledgeGraph,
    turn: &mut Turn,
) -> Result<(), ServerError> {
    use chatty_kg_agents::referents::Member;
    use chatty_kg_graph::text::EXACT_MATCH_SCORE;
    for answer in turn.answers.iter().take(GROUNDED_ANSWERS) {
        let found = graph
            .search_entities(answer, 5)
            .await
            .map_err(chatty_kg_agents::AgentError::from)?;
        turn.values
            .push(match found.into_iter().find(|c| c.score >= EXACT_MATCH_SCORE) {
                Some(vertex) => Member {
                    value: vertex.iri,
                    label: vertex.label,
                    iri: true,
                    datatype: None,
                },
                None => Member {
                    value: answer.clone(),
                    label: answer.clone(),
                    iri: false,
                    datatype: None,
                },
            });
    }
    Ok(())
}

/// Bounds what a turn stores (see [`MAX_TURN_BYTES`]).
pub(crate) fn fit_turn(explanation: &mut Explanation, max: usize) {
    let weight = |e: &Explanation| serde_json::to_vec(e).map_or(0, |v| v.len());
    if weight(explanation) <= max {
        return;
    }
    for answer in &mut explanation.answers {
        answer.provenance.clear();
    }
    // The reply's text names the answers: it is cut with them.
    const TEXT_CHARS: usize = 4096;
    if explanation.text.chars().count() > TEXT_CHARS {
        explanation.text = explanation.text.chars().take(TEXT_CHARS).chain(['…']).collect();
    }
    let mut total = weight(explanation);
    while total > max {
        let Some(last) = explanation.answers.pop() else { break };
        // The answer and the comma before it.
        total = total.saturating_sub(serde_json::to_vec(&last).map_or(0, |v| v.len()) + 1);
        explanation.truncated = true;
    }
}

/// A page of history within `max` bytes: a page of the latest turns keeps the newest that fit
/// and starts at the first of them; a page asked from a turn keeps the first that fit. Returns
/// the first index, the page and what it weighs (bytes of JSON).
fn fit_page(mut turns: Vec<TurnRecord>, from: u32, latest: bool, max: usize) -> (u32, Vec<TurnRecord>, usize) {
    if latest {
        turns.reverse();
        let (count, bytes) = fitting_turns(&turns, max);
        turns.truncate(count);
        turns.reverse();
        (turns.first().map_or(from, |t| t.index), turns, bytes)
    } else {
        let (count, bytes) = fitting_turns(&turns, max);
        turns.truncate(count);
        (from, turns, bytes)
    }
}

/// How many of `turns` (from the first) fit in `max` bytes of JSON (at least one), and what
/// they weigh.
fn fitting_turns(turns: &[TurnRecord], max: usize) -> (usize, usize) {
    let mut total = 0usize;
    for (i, turn) in turns.iter().enumerate() {
        let weight = serde_json::to_vec(turn).map_or(0, |v| v.len());
        if total.saturating_add(weight) > max && i > 0 {
            return (i, total);
        }
        total = total.saturating_add(weight);
        if total > max {
            return (1, total);
        }
    }
    (turns.len(), total)
}

#[cfg(test)]
mod size_tests {
    use super::*;

    fn explanation() -> Explanation {
        Explanation {
            question: "q".into(),
            text: String::new(),
            outcome: chatty_kg_agents::Outcome::Answered,
            answers: Vec::new(),
            excluded: Vec::new(),
            answer_kind: None,
            truncated: false,
            resolved_question: "q".into(),
            classification: None,
            resolution: None,
            clarified: None,
            answer_set: None,
            language: None,
            qir: None,
            entities: Vec::new(),
            relations: Vec::new(),
            form: None,
            class: None,
            paths: Vec::new(),
            path_choice: None,
            path_search: None,
            sparql: Vec::new(),
            example: None,
            timings: Default::default(),
            llm: Default::default(),
        }
    }

    #[test]
    fn a_stored_turn_and_a_history_page_are_bounded_in_bytes() {
        let mut e = explanation();
        for i in 0..200 {
            let mut value = chatty_kg_agents::AnswerValue::boolean(true);
            value.value = format!("{i}{}", "x".repeat(10_000));
            value.provenance = vec![[value.value.clone(), "p".into(), "o".into()]];
            e.answers.push(value);
        }
        e.text = "y".repeat(100_000);
        fit_turn(&mut e, 100_000);
        let weight = serde_json::to_vec(&e).unwrap().len();
        assert!(weight <= 100_000, "{weight}");
        assert!(e.truncated && !e.answers.is_empty() && e.answers.iter().all(|a| a.provenance.is_empty()));
        // Small enough: untouched.
        let mut small = explanation();
        small.answers.push(chatty_kg_agents::AnswerValue::boolean(true));
        let before = serde_json::to_vec(&small).unwrap();
        fit_turn(&mut small, 100_000);
        assert_eq!(serde_json::to_vec(&small).unwrap(), before);

        // A page of history ends early past its bytes, keeping at least one turn.
        let turn = |index: u32, bytes: usize| chatty_kg_dialogue::TurnRecord {
            format: 1,
            index,
            asked_at: 0,
            context: chatty_kg_dialogue::TurnContext {
                question: "q".into(),
                answers: Vec::new(),
                entities: Vec::new(),
                values: Vec::new(),
                total: 0,
                clarification: None,
                answer_set: None,
                query: None,
            },
            explanation: serde_json::json!({ "text": "z".repeat(bytes) }),
            feedback: None,
        };
        let turns: Vec<_> = (0..10).map(|i| turn(i, 1000)).collect();
        let one = serde_json::to_vec(&turns[0]).unwrap().len();
        assert_eq!(fitting_turns(&turns, 1_000_000), (10, 10 * one));
        assert_eq!(fitting_turns(&turns, 3_500), (3, 3 * one));
        let big = serde_json::to_vec(&turn(0, 10_000)).unwrap().len();
        assert_eq!(fitting_turns(&[turn(0, 10_000), turn(1, 1)], 100), (1, big));
        // The latest page keeps the newest turns; a page from a turn keeps the first.
        let (first, page, bytes) = fit_page(turns.clone(), 0, true, 3_500);
        assert_eq!(
            (first, page.iter().map(|t| t.index).collect::<Vec<_>>(), bytes),
            (7, vec![7, 8, 9], 3 * one)
        );
        let (first, page, _) = fit_page(turns, 0, false, 3_500);
        assert_eq!(
            (first, page.iter().map(|t| t.index).collect::<Vec<_>>()),
            (0, vec![0, 1, 2])
        );
    }
}
