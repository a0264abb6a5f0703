//! Sessions and their dialogues, kept durably in [sled].
//!
//! A session belongs to one knowledge graph and, when the server checks API keys, to the key
//! that created it: [`DialogueStore::get`] answers "no such session" both for an unknown id and
//! for somebody else's, so a client cannot even learn that another's session exists. Session
//! ids are 128 random bits, so they cannot be guessed either.
//!
//! Three trees: `sessions` (id → [`SessionInfo`]), `turns` (id ‖ turn number, big-endian → one
//! [`TurnRecord`]), so a turn is one small write and a session's turns are one prefix scan in
//! order, and `rated` (the same keys, no value) naming the turns a person rated
//! ([`DialogueStore::rate`]), so exporting the feedback reads only those. A turn and its session's counter change in one transaction, and
//! [`DialogueStore::append`] returns only once the turn is on disk: the server acknowledges a
//! turn only once it would survive a crash. The async methods need a tokio runtime (the flush runs
//! on a blocking thread).
//!
//! **What survives what.** sled 0.34's `flush` writes its log with `sync_file_range` on Linux,
//! which pushes the pages to the device but neither flushes the device's write cache nor
//! records the file's new size, and it writes values above ~128 KiB as separate blob files that
//! it never syncs. That is enough against a killed process (the pages are in the kernel) but not
//! against a power cut. So after sled's flush, [`DialogueStore`] itself `fsync`s the log file,
//! every blob file and the directories that name them: an acknowledged turn survives a power cut
//! as far as the device honours `fsync`.
//!
//! **Damaged records.** A record that no longer decodes (a bad disk block, a record written by a
//! future version) costs only itself: a session's turns and the dialogue history skip an
//! unreadable turn, and the expiry sweep skips an unreadable session record, each with a warning.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
}

impl From<TransactionError<DialogueError>> for DialogueError {
    fn from(error: TransactionError<DialogueError>) -> Self {
        match error {
            TransactionError::Abort(e) => e,
            TransactionError::Storage(e) => DialogueError::Storage(e),
        }
    }
}

const CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// 128 random bits as 32 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

impl SessionId {
    fn random() -> Result<Self, DialogueError> {
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

    fn turn_key(&self, index: u32) -> Vec<u8> {
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
fn readable(bytes: &[u8], session: &SessionId) -> Option<TurnRecord> {
    match decode(bytes) {
        Ok(turn) => Some(turn),
        Err(error) => {
            tracing::warn!(session = %session.as_str(), %error, "an unreadable turn was skipped");
            None
        }
    }
}

/// What sled's flush leaves out (see the module docs): `fsync` of its log file, of its blob
/// files, and of the directories naming them.
fn sync_files(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir.join("db"))?.sync_all()?;
    let blobs = dir.join("blobs");
    if blobs.is_dir() {
        // Blobs are values above ~128 KiB, rare with the server's cap on stored answers; all are
        // synced (a blob is written once, so an already synced one costs little). sled removes
        // replaced blobs as it goes: one gone between listing and opening needs no sync.
        for entry in std::fs::read_dir(&blobs)? {
            match std::fs::File::open(entry?.path()).and_then(|f| f.sync_all()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        std::fs::File::open(&blobs)?.sync_all()?;
    }
    std::fs::File::open(dir)?.sync_all()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, DialogueError> {
    serde_json::to_vec(value).map_err(|e| DialogueError::Corrupt(e.to_string()))
}

fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, DialogueError> {
    serde_json::from_slice(bytes).map_err(|e| DialogueError::Corrupt(e.to_string()))
}

/// The sessions database. Cheap to clone (sled handles are reference-counted).
#[derive(Clone)]
pub struct DialogueStore {
    dir: PathBuf,
    db: sled::Db,
    sessions: sled::Tree,
    turns: sled::Tree,
    rated: sled::Tree,
    retention: Option<Duration>,
}

impl DialogueStore {
    /// Opens (or creates) the database in `dir`. Sessions untouched for `retention` count as
    /// gone and are removed by [`expire`](Self::expire); `None` keeps them forever.
    pub fn open(dir: &Path, retention: Option<Duration>) -> Result<Self, DialogueError> {
        let open_error = |source| DialogueError::Open {
            path: dir.to_path_buf(),
            source,
        };
        // sled caches up to 1 GiB by default; a session database needs far less (the recent turns
        // of active sessions), and the server shares the machine with the models.
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(CACHE_BYTES)
            .open()
            .map_err(open_error)?;
        let sessions = db.open_tree("sessions").map_err(open_error)?;
        let turns = db.open_tree("turns").map_err(open_error)?;
        let rated = db.open_tree("rated").map_err(open_error)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            db,
            sessions,
            turns,
            rated,
            retention,
        })
    }

    /// A new, empty session on `kg`, durably written.
    pub async fn create(&self, kg: &str, owner: Option<Owner>) -> Result<SessionInfo, DialogueError> {
        let now = now_ms();
        let info = SessionInfo {
            id: SessionId::random()?,
            kg: kg.to_owned(),
            created_at: now,
            updated_at: now,
            turns: 0,
            owner,
        };
        self.sessions.insert(info.id.as_str(), encode(&info)?)?;
        self.sync().await?;
        Ok(info)
    }

    /// The session `id` if it exists, has not expired and belongs to `owner`; otherwise
    /// [`DialogueError::NotFound`], whichever the reason.
    pub fn get(&self, id: &str, owner: Option<&Owner>) -> Result<SessionInfo, DialogueError> {
        let id = SessionId::parse(id)?;
        let bytes = self.sessions.get(id.as_str())?.ok_or(DialogueError::NotFound)?;
        let info: SessionInfo = decode(&bytes)?;
        if info.owner.as_ref() != owner || self.is_expired(&info, SystemTime::now()) {
            return Err(DialogueError::NotFound);
        }
        Ok(info)
    }

    fn is_expired(&self, info: &SessionInfo, now: SystemTime) -> bool {
        self.retention.is_some_and(|retention| {
            let cutoff = now
                .checked_sub(retention)
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as u64);
            info.updated_at < cutoff
        })
    }

    /// Every readable turn of a session, in order (an unreadable one is skipped and logged).
    pub fn turns(&self, id: &SessionId) -> Result<Vec<TurnRecord>, DialogueError> {
        let mut turns = Vec::new();
        for value in self.turns.scan_prefix(id.as_str()).values() {
            if let Some(turn) = readable(&value?, id) {
                turns.push(turn);
            }
        }
        Ok(turns)
    }

    /// Up to `limit` readable turns of a session from turn `from` on, in order.
    pub fn turns_page(&self, id: &SessionId, from: u32, limit: usize) -> Result<Vec<TurnRecord>, DialogueError> {
        let mut turns = Vec::new();
        for value in self.turns.range(id.turn_key(from)..=id.turn_key(u32::MAX)).values() {
            if turns.len() == limit {
                break;
            }
            if let Some(turn) = readable(&value?, id) {
                turns.push(turn);
            }
        }
        Ok(turns)
    }

    /// What the agents see of the dialogue: the last `last` turns' standalone questions and
    /// answers, oldest first.
    pub fn history(&self, id: &SessionId, last: usize) -> Result<Vec<TurnContext>, DialogueError> {
        let mut turns = Vec::new();
        for value in self.turns.scan_prefix(id.as_str()).values().rev() {
            if turns.len() == last {
                break;
            }
            if let Some(turn) = readable(&value?, id) {
                turns.push(turn.context);
            }
        }
        turns.reverse();
        Ok(turns)
    }

    /// Appends a completed turn and returns once it is on disk. Callers must not append to one
    /// session concurrently if order matters (the server holds a lock per session); the
    /// transaction itself keeps the counter and the turns consistent either way.
    pub async fn append(
        &self,
        id: &SessionId,
        context: TurnContext,
        explanation: serde_json::Value,
    ) -> Result<TurnRecord, DialogueError> {
        let asked_at = now_ms();
        let record = (&self.sessions, &self.turns).transaction(|(sessions, turns)| {
            let abort = ConflictableTransactionError::Abort;
            let bytes = sessions.get(id.as_str())?.ok_or(abort(DialogueError::NotFound))?;
            let mut info: SessionInfo = decode(&bytes).map_err(abort)?;
            let record = TurnRecord {
                format: TURN_FORMAT,
                index: info.turns,
                asked_at,
                context: context.clone(),
                explanation: explanation.clone(),
                feedback: None,
            };
            info.turns += 1;
            info.updated_at = asked_at;
            sessions.insert(id.as_str(), encode(&info).map_err(abort)?)?;
            turns.insert(id.turn_key(record.index), encode(&record).map_err(abort)?)?;
            Ok(record)
        })?;
        self.sync().await?;
        Ok(record)
    }

    /// Rates turn `turn` of session `id` (after the same checks as [`get`](Self::get)), replacing
    /// an earlier rating; `None` withdraws it. Returns the turn once the change is on disk.
    pub async fn rate(
        &self,
        id: &str,
        owner: Option<&Owner>,
        turn: u32,
        feedback: Option<Feedback>,
    ) -> Result<TurnRecord, DialogueError> {
        let info = self.get(id, owner)?;
        let key = info.id.turn_key(turn);
        let record = (&self.sessions, &self.turns, &self.rated).transaction(|(sessions, turns, rated)| {
            let abort = ConflictableTransactionError::Abort;
            // The session may have been deleted since `get`.
            let bytes = sessions.get(info.id.as_str())?.ok_or(abort(DialogueError::NotFound))?;
            let mut session: SessionInfo = decode(&bytes).map_err(abort)?;
            let bytes = turns.get(&key)?.ok_or(abort(DialogueError::NoSuchTurn(turn)))?;
            let mut record: TurnRecord = decode(&bytes).map_err(abort)?;
            record.feedback = feedback.clone();
            turns.insert(key.as_slice(), encode(&record).map_err(abort)?)?;
            if record.feedback.is_some() {
                rated.insert(key.as_slice(), &[])?;
            } else {
                rated.remove(key.as_slice())?;
            }
            // Rating is using the session: it is kept as long as a new turn would keep it.
            session.updated_at = now_ms();
            sessions.insert(info.id.as_str(), encode(&session).map_err(abort)?)?;
            Ok(record)
        })?;
        self.sync().await?;
        Ok(record)
    }

    /// The rated turns of the sessions in `scope` that have not expired, with their sessions,
    /// in session id and turn order (an unreadable record is skipped and logged).
    pub fn rated_turns(&self, scope: Scope<'_>) -> Result<Vec<(SessionInfo, TurnRecord)>, DialogueError> {
        let now = SystemTime::now();
        let mut rated = Vec::new();
        let mut session: Option<(Vec<u8>, Option<SessionInfo>)> = None;
        for key in self.rated.iter().keys() {
            let key = key?;
            let id = &key[..key.len().saturating_sub(4)];
            if session.as_ref().is_none_or(|(last, _)| last.as_slice() != id) {
                let info = match self.sessions.get(id)? {
                    Some(bytes) => decode::<SessionInfo>(&bytes)
                        .inspect_err(|error| tracing::warn!(%error, "an unreadable session record was skipped"))
                        .ok(),
                    None => None,
                };
                let info = info.filter(|info| {
                    !self.is_expired(info, now)
                        && match scope {
                            Scope::All => true,
                            Scope::Owner(owner) => info.owner.as_ref() == owner,
                        }
                });
                session = Some((id.to_vec(), info));
            }
            let Some((_, Some(info))) = &session else { continue };
            if let Some(bytes) = self.turns.get(&key)?
                && let Some(turn) = readable(&bytes, &info.id)
                && turn.feedback.is_some()
            {
                rated.push((info.clone(), turn));
            }
        }
        Ok(rated)
    }

    /// Deletes a session and its turns (after the same checks as [`get`](Self::get)).
    pub async fn delete(&self, id: &str, owner: Option<&Owner>) -> Result<(), DialogueError> {
        let info = self.get(id, owner)?;
        self.remove(&info.id)?;
        self.sync().await?;
        Ok(())
    }

    fn remove(&self, id: &SessionId) -> Result<(), DialogueError> {
        // The session record goes first: from then on the id names nothing, and a crash between
        // the two steps leaves only unreachable turns, which the next expiry sweep removes.
        self.sessions.remove(id.as_str())?;
        for tree in [&self.turns, &self.rated] {
            let mut batch = sled::Batch::default();
            for key in tree.scan_prefix(id.as_str()).keys() {
                batch.remove(key?);
            }
            tree.apply_batch(batch)?;
        }
        Ok(())
    }

    /// Removes every session untouched for longer than the retention (and turns whose session
    /// is gone). Returns how many sessions were removed.
    pub async fn expire(&self) -> Result<usize, DialogueError> {
        self.expire_at(SystemTime::now()).await
    }

    async fn expire_at(&self, now: SystemTime) -> Result<usize, DialogueError> {
        let mut expired = Vec::new();
        for entry in self.sessions.iter() {
            let (key, bytes) = entry?;
            match decode::<SessionInfo>(&bytes) {
                Ok(info) if self.is_expired(&info, now) => expired.push(info.id),
                Ok(_) => {}
                Err(error) => tracing::warn!(
                    session = %String::from_utf8_lossy(&key), %error,
                    "an unreadable session record was skipped by the expiry sweep"
                ),
            }
        }
        for id in &expired {
            self.remove(id)?;
        }
        for tree in [&self.turns, &self.rated] {
            let mut orphans = sled::Batch::default();
            let mut last: Option<(Vec<u8>, bool)> = None;
            for key in tree.iter().keys() {
                let key = key?;
                let session = key[..key.len().saturating_sub(4)].to_vec();
                let live = match &last {
                    Some((prev, live)) if *prev == session => *live,
                    _ => self.sessions.contains_key(&session)?,
                };
                if !live {
                    orphans.remove(key.clone());
                }
                last = Some((session, live));
            }
            tree.apply_batch(orphans)?;
        }
        self.sync().await?;
        Ok(expired.len())
    }

    /// Sessions stored (expired ones included until the next sweep).
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Writes everything outstanding to disk.
    pub async fn flush(&self) -> Result<(), DialogueError> {
        self.sync().await
    }

    /// Whether the database still takes writes: writes and syncs a small probe record. Fails
    /// on a full disk, a read-only file system, or after sled gave up on an I/O error.
    pub async fn check(&self) -> Result<(), DialogueError> {
        let probe = self.db.open_tree("health")?;
        probe.insert("probe", now_ms().to_be_bytes().to_vec())?;
        self.sync().await
    }

    /// sled's own `flush_async` deadlocks when several are awaited at once (sled issue #1308,
    /// open for 0.34: 60 concurrent sessions hung here), so the blocking flush runs on a blocking
    /// thread instead; concurrent flushes then simply queue inside sled.
    async fn sync(&self) -> Result<(), DialogueError> {
        let (db, dir) = (self.db.clone(), self.dir.clone());
        tokio::task::spawn_blocking(move || -> Result<(), DialogueError> {
            db.flush()?;
            sync_files(&dir).map_err(|e| DialogueError::Flush(format!("fsync in {}: {e}", dir.display())))
        })
        .await
        .map_err(|e| DialogueError::Flush(e.to_string()))??;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explanation(question: &str) -> serde_json::Value {
        serde_json::json!({"question": question, "text": "Lynne Ramsay", "outcome": {"status": "answered"}})
    }

    fn turn(question: &str, answer: &str) -> TurnContext {
        TurnContext {
            question: question.into(),
            answers: vec![answer.into()],
            entities: Vec::new(),
            values: Vec::new(),
            total: 1,
            clarification: None,
        }
    }

    #[tokio::test]
    async fn turns_persist_in_order_across_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let id = {
            let store = DialogueStore::open(dir.path(), None).unwrap();
            let info = store.create("movies", None).await.unwrap();
            assert_eq!(info.id.as_str().len(), 32);
            for i in 0..3 {
                let q = format!("question {i}");
                let record = store.append(&info.id, turn(&q, "a"), explanation(&q)).await.unwrap();
                assert_eq!(record.index, i);
            }
            info.id
        };
        let store = DialogueStore::open(dir.path(), None).unwrap();
        let info = store.get(id.as_str(), None).unwrap();
        assert_eq!((info.kg.as_str(), info.turns), ("movies", 3));
        let turns = store.turns(&id).unwrap();
        let questions: Vec<_> = turns.iter().map(|t| t.context.question.as_str()).collect();
        assert_eq!(questions, ["question 0", "question 1", "question 2"]);
        let page: Vec<_> = store
            .turns_page(&id, 1, 1)
            .unwrap()
            .into_iter()
            .map(|t| t.index)
            .collect();
        assert_eq!(page, [1]);
        assert_eq!(store.turns_page(&id, 1, 10).unwrap().len(), 2);
        assert!(store.turns_page(&id, 3, 10).unwrap().is_empty());
        assert_eq!(turns[2].explanation["outcome"]["status"], "answered");
        assert_eq!(turns[2].format, TURN_FORMAT);
        let last_two = store.history(&id, 2).unwrap();
        assert_eq!(last_two, [turn("question 1", "a"), turn("question 2", "a")]);
    }

    #[tokio::test]
    async fn sessions_are_isolated_by_owner_and_unguessable() {
        let dir = tempfile::tempdir().unwrap();
        let store = DialogueStore::open(dir.path(), None).unwrap();
        let alice = Owner::of_api_key("alice-key");
        let bob = Owner::of_api_key("bob-key");
        assert_ne!(alice, bob);
        let a = store.create("movies", Some(alice.clone())).await.unwrap();
        let b = store.create("movies", Some(bob.clone())).await.unwrap();
        assert_ne!(a.id, b.id);
        assert!(store.get(a.id.as_str(), Some(&alice)).is_ok());
        for (id, owner) in [(&a.id, Some(&bob)), (&a.id, None), (&b.id, Some(&alice))] {
            assert!(matches!(store.get(id.as_str(), owner), Err(DialogueError::NotFound)));
            assert!(matches!(
                store.delete(id.as_str(), owner).await,
                Err(DialogueError::NotFound)
            ));
        }
        for bad in ["", "../../etc", &a.id.as_str().to_uppercase(), &format!("{}0", a.id)] {
            assert!(matches!(store.get(bad, Some(&alice)), Err(DialogueError::NotFound)));
        }
        // Bob's failed delete left Alice's session alone; Alice's own delete removes it and its turns.
        store.append(&a.id, turn("q", "a"), explanation("q")).await.unwrap();
        store.delete(a.id.as_str(), Some(&alice)).await.unwrap();
        assert!(matches!(
            store.get(a.id.as_str(), Some(&alice)),
            Err(DialogueError::NotFound)
        ));
        assert!(store.turns(&a.id).unwrap().is_empty());
        assert!(matches!(
            store.append(&a.id, turn("q", "a"), explanation("q")).await,
            Err(DialogueError::NotFound)
        ));
        assert!(store.get(b.id.as_str(), Some(&bob)).is_ok());
    }

    #[tokio::test]
    async fn an_unreadable_record_costs_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let store = DialogueStore::open(dir.path(), Some(Duration::from_secs(3600))).unwrap();
        let info = store.create("movies", None).await.unwrap();
        for q in ["q0", "q1", "q2"] {
            store.append(&info.id, turn(q, "a"), explanation(q)).await.unwrap();
        }
        // A damaged turn in the middle, and a damaged session record of another session.
        store.turns.insert(info.id.turn_key(1), b"{not json".to_vec()).unwrap();
        let other = store.create("movies", None).await.unwrap();
        store.sessions.insert(other.id.as_str(), b"\xff".to_vec()).unwrap();
        let old = store.create("movies", None).await.unwrap();
        let questions: Vec<_> = store
            .turns(&info.id)
            .unwrap()
            .into_iter()
            .map(|t| t.context.question)
            .collect();
        assert_eq!(questions, ["q0", "q2"]);
        assert_eq!(store.history(&info.id, 2).unwrap(), [turn("q0", "a"), turn("q2", "a")]);
        // The sweep goes past the damaged record and still removes what expired.
        let later = SystemTime::now() + Duration::from_secs(2 * 3600);
        assert_eq!(store.expire_at(later).await.unwrap(), 2);
        assert!(matches!(store.get(old.id.as_str(), None), Err(DialogueError::NotFound)));
        assert!(store.check().await.is_ok());
    }

    #[tokio::test]
    async fn ratings_are_kept_with_their_turns_and_exported_per_owner() {
        let dir = tempfile::tempdir().unwrap();
        let store = DialogueStore::open(dir.path(), None).unwrap();
        let alice = Owner::of_api_key("alice-key");
        let bob = Owner::of_api_key("bob-key");
        let a = store.create("movies", Some(alice.clone())).await.unwrap();
        let b = store.create("movies", Some(bob.clone())).await.unwrap();
        for q in ["q0", "q1", "q2"] {
            store.append(&a.id, turn(q, "a"), explanation(q)).await.unwrap();
        }
        store.append(&b.id, turn("b0", "a"), explanation("b0")).await.unwrap();
        let up = Feedback {
            rating: Rating::Up,
            correction: None,
            rated_at: 1,
        };
        let down = Feedback {
            rating: Rating::Down,
            correction: Some(Correction {
                text: Some("Tom Hanks".into()),
                answers: vec![ContextValue {
                    value: "http://example.org/hanks".into(),
                    label: "Tom Hanks".into(),
                    iri: true,
                    datatype: None,
                }],
                ..Correction::default()
            }),
            rated_at: 2,
        };
        let alice_ = Some(&alice);
        assert_eq!(
            store
                .rate(a.id.as_str(), alice_, 1, Some(up.clone()))
                .await
                .unwrap()
                .feedback,
            Some(up.clone())
        );
        store.rate(a.id.as_str(), alice_, 2, Some(up.clone())).await.unwrap();
        // A second rating replaces the first; withdrawing removes it from the export.
        store.rate(a.id.as_str(), alice_, 2, Some(down.clone())).await.unwrap();
        store.rate(a.id.as_str(), alice_, 1, None).await.unwrap();
        store
            .rate(b.id.as_str(), Some(&bob), 0, Some(up.clone()))
            .await
            .unwrap();
        // Nobody rates another's turn, nor a turn that does not exist.
        assert!(matches!(
            store.rate(a.id.as_str(), Some(&bob), 0, Some(up.clone())).await,
            Err(DialogueError::NotFound)
        ));
        assert!(matches!(
            store.rate(a.id.as_str(), alice_, 3, Some(up.clone())).await,
            Err(DialogueError::NoSuchTurn(3))
        ));
        let turns = store.turns(&a.id).unwrap();
        assert_eq!(turns[1].feedback, None);
        assert_eq!(turns[2].feedback, Some(down.clone()));
        assert_eq!(turns[0].feedback, None);

        let of = |scope| -> Vec<(String, u32)> {
            let rated = store.rated_turns(scope).unwrap();
            rated.into_iter().map(|(s, t)| (s.id.to_string(), t.index)).collect()
        };
        assert_eq!(of(Scope::Owner(Some(&alice))), [(a.id.to_string(), 2)]);
        assert_eq!(of(Scope::Owner(Some(&bob))), [(b.id.to_string(), 0)]);
        assert!(of(Scope::Owner(None)).is_empty());
        assert_eq!(of(Scope::All).len(), 2);
        // A deleted session takes its ratings along.
        store.delete(a.id.as_str(), alice_).await.unwrap();
        assert_eq!(of(Scope::All), [(b.id.to_string(), 0)]);
        assert_eq!(store.rated.len(), 1);
    }

    #[tokio::test]
    async fn untouched_sessions_expire() {
        let dir = tempfile::tempdir().unwrap();
        let store = DialogueStore::open(dir.path(), Some(Duration::from_secs(3600))).unwrap();
        let old = store.create("movies", None).await.unwrap();
        store.append(&old.id, turn("q", "a"), explanation("q")).await.unwrap();
        let later = SystemTime::now() + Duration::from_secs(2 * 3600);
        let fresh = store.create("movies", None).await.unwrap();
        // Two hours on, both are older than the retention: nothing was touched since.
        assert_eq!(store.expire_at(SystemTime::now()).await.unwrap(), 0);
        assert_eq!(store.expire_at(later).await.unwrap(), 2);
        assert_eq!(store.session_count(), 0);
        assert!(store.turns(&old.id).unwrap().is_empty());
        assert!(matches!(
            store.get(fresh.id.as_str(), None),
            Err(DialogueError::NotFound)
        ));

        let forever = DialogueStore::open(&dir.path().join("forever"), None).unwrap();
        let kept = forever.create("movies", None).await.unwrap();
        assert_eq!(forever.expire_at(later).await.unwrap(), 0);
        assert!(forever.get(kept.id.as_str(), None).is_ok());
    }
}
