//! [`SledStore`]: sessions in an embedded [sled] database, the default.
//!
//! Three trees: `sessions` (id → [`SessionInfo`]), `turns` (id ‖ turn number, big-endian → one
//! [`TurnRecord`]), so a turn is one small write and a session's turns are one prefix scan in
//! order, and `rated` (the same keys, no value) naming the turns a person rated, so exporting
//! the feedback reads only those. A turn and its session's counter change in one transaction.
//! The async methods need a tokio runtime (the flush runs on a blocking thread). One process at a
//! time: sled locks the directory.
//!
//! **What survives what.** sled 0.34's `flush` writes its log with `sync_file_range` on Linux,
//! which pushes the pages to the device but neither flushes the device's write cache nor
//! records the file's new size, and it writes values above ~128 KiB as separate blob files that
//! it never syncs. That is enough against a killed process (the pages are in the kernel) but not
//! against a power cut. So after sled's flush, [`SledStore`] itself `fsync`s the log file,
//! every blob file and the directories that name them: an acknowledged turn survives a power cut
//! as far as the device honours `fsync`.
//!
//! The expiry sweep skips an unreadable session record, with a warning.

use crate::{
    DialogueError, DialogueStore, ExampleRecord, Feedback, Owner, Scope, SessionId, SessionInfo, TurnContext,
    TurnRecord, decode, encode, is_expired, now_ms, readable,
};
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const CACHE_BYTES: u64 = 64 * 1024 * 1024;

impl From<TransactionError<DialogueError>> for DialogueError {
    fn from(error: TransactionError<DialogueError>) -> Self {
        match error {
            TransactionError::Abort(e) => e,
            TransactionError::Storage(e) => DialogueError::Storage(e),
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

/// The sessions database. Cheap to clone (sled handles are reference-counted).
#[derive(Clone)]
pub struct SledStore {
    dir: PathBuf,
    db: sled::Db,
    sessions: sled::Tree,
    turns: sled::Tree,
    rated: sled::Tree,
    /// Example id → [`ExampleRecord`]; ids of examples made from turns start with the session id.
    examples: sled::Tree,
    retention: Option<Duration>,
}

impl SledStore {
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
        let examples = db.open_tree("examples").map_err(open_error)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            db,
            sessions,
            turns,
            rated,
            examples,
            retention,
        })
    }

    /// The session `id` if it exists, has not expired and belongs to `owner`; otherwise
    /// [`DialogueError::NotFound`], whichever the reason.
    fn lookup(&self, id: &str, owner: Option<&Owner>) -> Result<SessionInfo, DialogueError> {
        let id = SessionId::parse(id)?;
        let bytes = self.sessions.get(id.as_str())?.ok_or(DialogueError::NotFound)?;
        let info: SessionInfo = decode(&bytes)?;
        if info.owner.as_ref() != owner || is_expired(self.retention, &info, SystemTime::now()) {
            return Err(DialogueError::NotFound);
        }
        Ok(info)
    }

    /// Sessions stored (expired ones included until the next sweep).
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    fn remove(&self, id: &SessionId) -> Result<(), DialogueError> {
        // The session record goes first: from then on the id names nothing, and a crash between
        // the two steps leaves only unreachable turns, which the next expiry sweep removes.
        self.sessions.remove(id.as_str())?;
        for tree in [&self.turns, &self.rated, &self.examples] {
            let mut batch = sled::Batch::default();
            for key in tree.scan_prefix(id.as_str()).keys() {
                batch.remove(key?);
            }
            tree.apply_batch(batch)?;
        }
        Ok(())
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

#[async_trait::async_trait]
impl DialogueStore for SledStore {
    async fn create(&self, kg: &str, owner: Option<Owner>) -> Result<SessionInfo, DialogueError> {
        let info = SessionInfo::fresh(kg, owner)?;
        self.sessions.insert(info.id.as_str(), encode(&info)?)?;
        self.sync().await?;
        Ok(info)
    }

    async fn get(&self, id: &str, owner: Option<&Owner>) -> Result<SessionInfo, DialogueError> {
        self.lookup(id, owner)
    }

    async fn turns_page(&self, id: &SessionId, from: u32, limit: usize) -> Result<Vec<TurnRecord>, DialogueError> {
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

    async fn history(&self, id: &SessionId, last: usize) -> Result<Vec<TurnContext>, DialogueError> {
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

    async fn append(
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
            let record = TurnRecord::fresh(info.turns, asked_at, context.clone(), explanation.clone());
            info.turns += 1;
            info.updated_at = asked_at;
            sessions.insert(id.as_str(), encode(&info).map_err(abort)?)?;
            turns.insert(id.turn_key(record.index), encode(&record).map_err(abort)?)?;
            Ok(record)
        })?;
        self.sync().await?;
        Ok(record)
    }

    async fn rate(
        &self,
        id: &str,
        owner: Option<&Owner>,
        turn: u32,
        feedback: Option<Feedback>,
    ) -> Result<TurnRecord, DialogueError> {
        let info = self.lookup(id, owner)?;
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

    async fn rated_turns(&self, scope: Scope<'_>) -> Result<Vec<(SessionInfo, TurnRecord)>, DialogueError> {
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
                    !is_expired(self.retention, info, now)
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

    async fn put_example(&self, example: ExampleRecord) -> Result<(), DialogueError> {
        (&self.sessions, &self.examples).transaction(|(sessions, examples)| {
            let abort = ConflictableTransactionError::Abort;
            if let Some(session) = &example.session
                && !(sessions.get(session.as_str())?.is_some() && example.id.starts_with(session.as_str()))
            {
                return Err(abort(DialogueError::NotFound));
            }
            examples.insert(example.id.as_bytes(), encode(&example).map_err(abort)?)?;
            Ok(())
        })?;
        self.sync().await
    }

    async fn examples(&self, scope: Scope<'_>, kg: Option<&str>) -> Result<Vec<ExampleRecord>, DialogueError> {
        let mut found = Vec::new();
        for entry in self.examples.iter() {
            let (key, bytes) = entry?;
            match decode::<ExampleRecord>(&bytes) {
                Ok(example) if example.in_scope(scope) && kg.is_none_or(|kg| kg == example.kg) => found.push(example),
                Ok(_) => {}
                Err(error) => tracing::warn!(
                    example = %String::from_utf8_lossy(&key), %error, "an unreadable example was skipped"
                ),
            }
        }
        Ok(found)
    }

    async fn remove_example(&self, id: &str, scope: Scope<'_>) -> Result<bool, DialogueError> {
        let Some(bytes) = self.examples.get(id.as_bytes())? else {
            return Ok(false);
        };
        if !decode::<ExampleRecord>(&bytes).is_ok_and(|e| e.in_scope(scope)) && !matches!(scope, Scope::All) {
            return Ok(false);
        }
        self.examples.remove(id.as_bytes())?;
        self.sync().await?;
        Ok(true)
    }

    async fn delete(&self, id: &str, owner: Option<&Owner>) -> Result<(), DialogueError> {
        let info = self.lookup(id, owner)?;
        self.remove(&info.id)?;
        self.sync().await?;
        Ok(())
    }

    async fn expire_at(&self, now: SystemTime) -> Result<usize, DialogueError> {
        let mut expired = Vec::new();
        for entry in self.sessions.iter() {
            let (key, bytes) = entry?;
            match decode::<SessionInfo>(&bytes) {
                Ok(info) if is_expired(self.retention, &info, now) => expired.push(info.id),
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

    async fn flush(&self) -> Result<(), DialogueError> {
        self.sync().await
    }

    async fn check(&self) -> Result<(), DialogueError> {
        let probe = self.db.open_tree("health")?;
        probe.insert("probe", now_ms().to_be_bytes().to_vec())?;
        self.sync().await
    }

    fn describe(&self) -> String {
        format!("sled at {}", self.dir.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TURN_FORMAT;

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
            answer_set: None,
            query: None,
        }
    }

    #[tokio::test]
    async fn turns_persist_in_order_across_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let id = {
            let store = SledStore::open(dir.path(), None).unwrap();
            let info = store.create("movies", None).await.unwrap();
            assert_eq!(info.id.as_str().len(), 32);
            for i in 0..3 {
                let q = format!("question {i}");
                let record = store.append(&info.id, turn(&q, "a"), explanation(&q)).await.unwrap();
                assert_eq!(record.index, i);
            }
            info.id
        };
        let store = SledStore::open(dir.path(), None).unwrap();
        let info = store.get(id.as_str(), None).await.unwrap();
        assert_eq!((info.kg.as_str(), info.turns), ("movies", 3));
        let turns = store.turns(&id).await.unwrap();
        let questions: Vec<_> = turns.iter().map(|t| t.context.question.as_str()).collect();
        assert_eq!(questions, ["question 0", "question 1", "question 2"]);
        let page: Vec<_> = store
            .turns_page(&id, 1, 1)
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.index)
            .collect();
        assert_eq!(page, [1]);
        assert_eq!(store.turns_page(&id, 1, 10).await.unwrap().len(), 2);
        assert!(store.turns_page(&id, 3, 10).await.unwrap().is_empty());
        assert_eq!(turns[2].explanation["outcome"]["status"], "answered");
        assert_eq!(turns[2].format, TURN_FORMAT);
        let last_two = store.history(&id, 2).await.unwrap();
        assert_eq!(last_two, [turn("question 1", "a"), turn("question 2", "a")]);
    }

    #[tokio::test]
    async fn an_unreadable_record_costs_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path(), Some(Duration::from_secs(3600))).unwrap();
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
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.context.question)
            .collect();
        assert_eq!(questions, ["q0", "q2"]);
        assert_eq!(
            store.history(&info.id, 2).await.unwrap(),
            [turn("q0", "a"), turn("q2", "a")]
        );
        // The sweep goes past the damaged record and still removes what expired.
        let later = SystemTime::now() + Duration::from_secs(2 * 3600);
        assert_eq!(store.expire_at(later).await.unwrap(), 2);
        assert!(matches!(
            store.get(old.id.as_str(), None).await,
            Err(DialogueError::NotFound)
        ));
        assert!(store.check().await.is_ok());
    }
}
