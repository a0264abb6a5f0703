//! Sessions and their dialogues, kept durably: [`DialogueStore`] is what the server needs of a
//! session store, [`SledStore`] keeps them in an embedded sled database (the default: nothing to
//! run), [`PostgresStore`] in PostgreSQL, so several server replicas share them.
//!
//! Both promise the same:
//! - **Isolation.** A session belongs to one knowledge graph and, when the server checks API
//!   keys, to the key that created it: [`DialogueStore::get`] answers "no such session" both for
//!   an unknown id and for somebody else's, so a client cannot even learn that another's session
//!   exists. Session ids are 128 random bits, so they cannot be guessed either.
//! - **Durability.** [`DialogueStore::append`] and [`DialogueStore::rate`] return only once the
//!   change is on disk: the server acknowledges a turn only once it would survive a crash.
//! - **Order.** A turn and its session's counter change together: turns are numbered without gaps.
//! - **Retention.** Sessions untouched for the retention count as gone at once and are removed by
//!   [`DialogueStore::expire`].
//! - **Damaged records.** A record that no longer decodes (a bad disk block, a record written by
//!   a future version) costs only itself: a session's turns and the dialogue history skip an
//!   unreadable turn, each with a warning.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod postgres;
mod sled_store;

pub use postgres::PostgresStore;
pub use sled_store::SledStore;

#[derive(Debug, thiserror::Error)]
pub enum DialogueError {
    #[error("cannot open the session database at {path}: {source}")]
    Open { path: PathBuf, source: sled::Error },
    #[error("session database: {0}")]
    Storage(#[from] sled::Error),
    #[error("no such session")]
    NotFound,
    #[error("the session has no turn {0}")]
    NoSuchTurn(u32),
    #[error("a stored session record is unreadable ({0}); the database was written by another version?")]
    Corrupt(String),
    #[error("the flush to disk did not complete: {0}")]
    Flush(String),
    #[error("no random source for session ids: {0}")]
    Random(String),
    #[error("session database (PostgreSQL): {0}")]
    Postgres(String),
}

/// 128 random bits as 32 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

impl SessionId {
    pub(crate) fn random() -> Result<Self, DialogueError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| DialogueError::Random(e.to_string()))?;
        Ok(Self(hex(&bytes)))
    }

    /// Accepts only what [`SessionId::random`] makes (anything else cannot name a session).
    pub fn parse(text: &str) -> Result<Self, DialogueError> {
        if text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Ok(Self(text.to_owned()))
        } else {
            Err(DialogueError::NotFound)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn turn_key(&self, index: u32) -> Vec<u8> {
        let mut key = self.0.as_bytes().to_vec();
        key.extend_from_slice(&index.to_be_bytes());
        key
    }
}

impl TryFrom<String> for SessionId {
    type Error = DialogueError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> Self {
        id.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who may use a session: a hash of the API key that created it (the key itself is never
/// stored). Without API keys every session is anonymous and its id is the only capability.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Owner(String);

impl Owner {
    pub fn of_api_key(key: &str) -> Self {
        Self(hex(&Sha256::digest(key.as_bytes())[..16]))
    }

    /// The stored form (a hash, not the key).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// An owner as a store wrote it ([`as_str`](Self::as_str)).
    pub fn from_stored(text: String) -> Self {
        Self(text)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub id: SessionId,
    /// The knowledge graph the session talks to.
    pub kg: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
    /// Last turn (or creation), milliseconds since the Unix epoch.
    pub updated_at: u64,
    /// Completed turns.
    pub turns: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
}

/// The stored turn format this version writes. Records without a `format` field were written
/// before it existed and have the same shape as format 1. Format 2 adds what a follow-up can
/// refer to (`entities`, `values`, `total` in the context); a format-1 record reads with them
/// empty.
pub const TURN_FORMAT: u32 = 2;

fn first_format() -> u32 {
    1
}

/// What later questions see of a turn: its standalone question, up to L answers as text, and
/// what a follow-up can refer to: the entities it linked and its answer values with their IRIs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnContext {
    pub question: String,
    pub answers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<ContextEntity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ContextValue>,
    /// How many answer values there were (more than `values` when they were cut).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub total: usize,
    /// The turn asked which vertex a mention means (the agents' clarification, kept as JSON the
    /// store does not interpret, like the explanation): the next turn may answer it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarification: Option<serde_json::Value>,
    /// The earlier answer the turn worked over ("which of them …"), as the agents wrote it (JSON
    /// the store does not interpret): a follow-up in its place works over the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_set: Option<serde_json::Value>,
    /// The SPARQL whose answers the turn gave: a follow-up with another entity in the place of
    /// this turn's asks it again of that one ("How about Unicode 13.0?").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// An entity a turn's question named, and its vertex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextEntity {
    pub mention: String,
    pub iri: String,
    pub label: String,
}

/// One answer value of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextValue {
    /// The IRI, or a literal's lexical form.
    pub value: String,
    pub label: String,
    /// An IRI (else a literal).
    pub iri: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datatype: Option<String>,
}

/// A person's verdict on an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    Up,
    Down,
}

/// A rating of one turn, with what the answer should have been when the person said so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    pub rating: Rating,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correction: Option<Correction>,
    /// Milliseconds since the Unix epoch.
    pub rated_at: u64,
}

/// What the answer should have been: the person's words, and what the server made of them (a
/// query it checked and ran, or the values it found in the graph for the words).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Correction {
    /// As the person wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A read-only query whose results are the right answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparql: Option<String>,
    /// The right answer's values: IRIs found in the graph, or literals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<ContextValue>,
    /// For a yes/no question: the right answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boolean: Option<bool>,
}

/// An answered question kept as an example for later ones: made from a rating (the answer's
/// query) or a correction (its query), owned by the key that gave it unless an operator imported
/// it for everyone. The body (the embedded question and the query's shape) is the agents' and is
/// kept as JSON the store does not interpret, like a turn's explanation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExampleRecord {
    /// `{session}-{turn}` for one made from a rated turn (rating it again replaces it), any
    /// other name for an imported one.
    pub id: String,
    pub kg: String,
    /// The key that gave the feedback (`None`: the anonymous callers of a server without keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// Imported by an operator: every caller's questions may use it.
    #[serde(default)]
    pub shared: bool,
    /// The session of the rated turn: deleting or expiring the session removes the example.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
    pub body: serde_json::Value,
}

impl ExampleRecord {
    /// The id of the example made from turn `turn` of session `session`.
    pub fn id_of_turn(session: &SessionId, turn: u32) -> String {
        format!("{session}-{turn}")
    }

    /// Whether `scope` may see (and remove) it: its owner's, or an operator's scope. Shared
    /// examples are used for everyone's questions but belong to the operator.
    pub fn in_scope(&self, scope: Scope<'_>) -> bool {
        match scope {
            Scope::All => true,
            Scope::Owner(owner) => !self.shared && self.owner.as_ref() == owner,
        }
    }
}

/// Whose rated turns [`DialogueStore::rated_turns`] returns.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// Every session's (the operator's export).
    All,
    /// The sessions of this owner (`None`: the anonymous sessions of a server without keys).
    Owner(Option<&'a Owner>),
}

/// One answered question, as stored and as the history endpoint returns it.
///
/// The store owns this format (versioned by `format`); the explanation inside is the agents'
/// and is kept as JSON the store does not interpret, so its shape can change without making
/// stored sessions unreadable, and this crate does not depend on the agents (nor compile the
/// graph store and the models they need).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRecord {
    #[serde(default = "first_format")]
    pub format: u32,
    /// 0 for the first turn.
    pub index: u32,
    /// Milliseconds since the Unix epoch.
    pub asked_at: u64,
    /// What later questions see.
    pub context: TurnContext,
    /// Everything about how the answer was found (the agents' `Explanation`, as JSON).
    pub explanation: serde_json::Value,
    /// The person's rating, once given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<Feedback>,
}

/// A stored turn, or `None` (logged) when it no longer decodes.
pub(crate) fn readable(bytes: &[u8], session: &SessionId) -> Option<TurnRecord> {
    match decode(bytes) {
        Ok(turn) => Some(turn),
        Err(error) => {
            tracing::warn!(session = %session.as_str(), %error, "an unreadable turn was skipped");
            None
        }
    }
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, DialogueError> {
    serde_json::to_vec(value).map_err(|e| DialogueError::Corrupt(e.to_string()))
}

pub(crate) fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, DialogueError> {
    serde_json::from_slice(bytes).map_err(|e| DialogueError::Corrupt(e.to_string()))
}

/// Whether a session last touched at `info.updated_at` has outlived `retention` at `now`.
pub(crate) fn is_expired(retention: Option<Duration>, info: &SessionInfo, now: SystemTime) -> bool {
    retention.is_some_and(|retention| info.updated_at < cutoff_ms(retention, now))
}

/// Sessions last touched before this (milliseconds since the Unix epoch) have outlived
/// `retention` at `now`.
pub(crate) fn cutoff_ms(retention: Duration, now: SystemTime) -> u64 {
    now.checked_sub(retention)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}

impl SessionInfo {
    /// A new, empty session on `kg` with a fresh random id, created now.
    pub(crate) fn fresh(kg: &str, owner: Option<Owner>) -> Result<Self, DialogueError> {
        let now = now_ms();
        Ok(Self {
            id: SessionId::random()?,
            kg: kg.to_owned(),
            created_at: now,
            updated_at: now,
            turns: 0,
            owner,
        })
    }
}

impl TurnRecord {
    /// Turn `index` as this version writes it, not yet rated.
    pub(crate) fn fresh(index: u32, asked_at: u64, context: TurnContext, explanation: serde_json::Value) -> Self {
        Self {
            format: TURN_FORMAT,
            index,
            asked_at,
            context,
            explanation,
            feedback: None,
        }
    }
}

/// A session store (see the crate docs for what every one promises).
#[async_trait::async_trait]
pub trait DialogueStore: Send + Sync {
    /// A new, empty session on `kg`, durably written.
    async fn create(&self, kg: &str, owner: Option<Owner>) -> Result<SessionInfo, DialogueError>;

    /// The session `id` if it exists, has not expired and belongs to `owner`; otherwise
    /// [`DialogueError::NotFound`], whichever the reason.
    async fn get(&self, id: &str, owner: Option<&Owner>) -> Result<SessionInfo, DialogueError>;

    /// Every readable turn of a session, in order.
    async fn turns(&self, id: &SessionId) -> Result<Vec<TurnRecord>, DialogueError> {
        self.turns_page(id, 0, usize::MAX).await
    }

    /// Up to `limit` readable turns of a session from turn `from` on, in order.
    async fn turns_page(&self, id: &SessionId, from: u32, limit: usize) -> Result<Vec<TurnRecord>, DialogueError>;

    /// What the agents see of the dialogue: the last `last` turns' contexts, oldest first.
    async fn history(&self, id: &SessionId, last: usize) -> Result<Vec<TurnContext>, DialogueError>;

    /// Appends a completed turn and returns once it is on disk. Callers must not append to one
    /// session concurrently if order matters (the server holds a lock per session).
    async fn append(
        &self,
        id: &SessionId,
        context: TurnContext,
        explanation: serde_json::Value,
    ) -> Result<TurnRecord, DialogueError>;

    /// Rates turn `turn` of session `id` (after the same checks as [`get`](Self::get)),
    /// replacing an earlier rating; `None` withdraws it. Returns the turn once it is on disk.
    async fn rate(
        &self,
        id: &str,
        owner: Option<&Owner>,
        turn: u32,
        feedback: Option<Feedback>,
    ) -> Result<TurnRecord, DialogueError>;

    /// The rated turns of the sessions in `scope` that have not expired, with their sessions,
    /// in session id and turn order.
    async fn rated_turns(&self, scope: Scope<'_>) -> Result<Vec<(SessionInfo, TurnRecord)>, DialogueError>;

    /// Stores an example (replacing one of the same id) and returns once it is on disk. One made
    /// from a turn is refused with [`DialogueError::NotFound`] when its session is gone.
    async fn put_example(&self, example: ExampleRecord) -> Result<(), DialogueError>;

    /// The examples in `scope` (of the knowledge graph `kg`, when given), in id order.
    async fn examples(&self, scope: Scope<'_>, kg: Option<&str>) -> Result<Vec<ExampleRecord>, DialogueError>;

    /// Removes the example `id` if it is in `scope`; whether there was one.
    async fn remove_example(&self, id: &str, scope: Scope<'_>) -> Result<bool, DialogueError>;

    /// Deletes a session, its turns and the examples made from them (after the same checks as
    /// [`get`](Self::get)).
    async fn delete(&self, id: &str, owner: Option<&Owner>) -> Result<(), DialogueError>;

    /// Removes every session untouched for longer than the retention. Returns how many.
    async fn expire(&self) -> Result<usize, DialogueError> {
        self.expire_at(SystemTime::now()).await
    }

    /// [`expire`](Self::expire) as if it were `now`.
    async fn expire_at(&self, now: SystemTime) -> Result<usize, DialogueError>;

    /// Writes everything outstanding to disk.
    async fn flush(&self) -> Result<(), DialogueError>;

    /// Whether the store still takes writes (a small probe write).
    async fn check(&self) -> Result<(), DialogueError>;

    /// Where it keeps the sessions, for messages.
    fn describe(&self) -> String;
}
