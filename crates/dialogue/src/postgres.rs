//! [`PostgresStore`]: sessions in PostgreSQL, shared by every server replica that names the same
//! database (`server.sessions_url`), so a dialogue started on one continues on any other.
//!
//! Two tables, created on first connection (under an advisory lock, so replicas starting together
//! do not race): `chatty_sessions` (one row per session: kg, owner hash, times, turn count) and
//! `chatty_turns` (session, index, the [`TurnRecord`] as JSON text, whether it is rated),
//! deleted with their session. Turn records keep the same JSON as in sled, so a damaged or
//! future-version record costs only itself here too.
//!
//! **Durability.** Every write is one transaction committed with `synchronous_commit = on` (set
//! for the transaction, whatever the server's default), so a commit has reached PostgreSQL's
//! write-ahead log on disk before [`DialogueStore::append`] returns: an acknowledged turn
//! survives a crash of either process. **Order across replicas.** Appending locks the session's
//! row (`SELECT … FOR UPDATE`) before numbering the turn, so two replicas appending to one
//! session number their turns without gaps or clashes.
//!
//! Connections come from a small pool (deadpool); TLS is not used (run it on a private network or
//! loopback, as the compose file does).

use crate::{
    DialogueError, DialogueStore, ExampleRecord, Feedback, Owner, Scope, SessionId, SessionInfo, TurnContext,
    TurnRecord, cutoff_ms, is_expired, now_ms,
};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use std::time::{Duration, SystemTime};
use tokio_postgres::{NoTls, Row};

/// Connections per server process.
const POOL_SIZE: usize = 16;
/// Waiting for a connection (new or from the pool) at most.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// One statement at most (`statement_timeout`, unless the URL sets its own).
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);
/// An arbitrary key for the advisory lock around creating the tables.
const SCHEMA_LOCK: i64 = 0x6368_6174_7479_6b67;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS chatty_sessions (
    id text PRIMARY KEY,
    kg text NOT NULL,
    owner text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    turns integer NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chatty_sessions_updated ON chatty_sessions (updated_at);
CREATE TABLE IF NOT EXISTS chatty_turns (
    session text NOT NULL REFERENCES chatty_sessions (id) ON DELETE CASCADE,
    idx integer NOT NULL,
    record text NOT NULL,
    rated boolean NOT NULL DEFAULT false,
    PRIMARY KEY (session, idx)
);
CREATE INDEX IF NOT EXISTS chatty_turns_rated ON chatty_turns (session, idx) WHERE rated;
CREATE TABLE IF NOT EXISTS chatty_examples (
    id text PRIMARY KEY,
    kg text NOT NULL,
    owner text,
    shared boolean NOT NULL DEFAULT false,
    session text REFERENCES chatty_sessions (id) ON DELETE CASCADE,
    record text NOT NULL
);
CREATE INDEX IF NOT EXISTS chatty_examples_kg ON chatty_examples (kg);
CREATE TABLE IF NOT EXISTS chatty_health (id integer PRIMARY KEY, at bigint NOT NULL);
";

const SESSION_COLUMNS: &str = "id, kg, owner, created_at, updated_at, turns";

fn pg(error: impl std::fmt::Display) -> DialogueError {
    DialogueError::Postgres(error.to_string())
}

/// The sessions in a PostgreSQL database. Cheap to clone (the pool is shared).
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    retention: Option<Duration>,
    /// The URL without its password, for messages.
    shown: String,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`, with the usual
    /// parameters) and creates the tables if they are missing. Sessions untouched for `retention`
    /// count as gone; `None` keeps them forever.
    pub async fn connect(url: &str, retention: Option<Duration>) -> Result<Self, DialogueError> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| pg(format!("the sessions URL is not a PostgreSQL URL: {e}")))?;
        // A database that stops answering must not hold the server's answers forever: bounded
        // connecting, dead connections noticed, and every statement bounded (unless the URL
        // says otherwise).
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.keepalives(true).keepalives_idle(Duration::from_secs(30));
        let options = config.get_options().unwrap_or_default().to_owned();
        if !options.contains("statement_timeout") {
            config.options(format!("{options} -c statement_timeout={}", STATEMENT_TIMEOUT.as_millis()).trim());
        }
        let shown = {
            let hosts: Vec<String> = config
                .get_hosts()
                .iter()
                .map(|h| match h {
                    tokio_postgres::config::Host::Tcp(name) => name.clone(),
                    tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
                })
                .collect();
            format!(
                "PostgreSQL database {:?} on {}",
                config.get_dbname().unwrap_or_default(),
                hosts.join(",")
            )
        };
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(pg)?;
        let store = Self { pool, retention, shown };
        let mut client = store.client().await?;
        let tx = client.transaction().await.map_err(pg)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await
            .map_err(pg)?;
        tx.batch_execute(SCHEMA).await.map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        Ok(store)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, DialogueError> {
        self.pool
            .get()
            .await
            .map_err(|e| pg(format!("no connection to the {}: {e}", self.shown)))
    }

    /// A write transaction whose commit waits for the write-ahead log to be on disk.
    async fn durable<'a>(
        client: &'a mut deadpool_postgres::Object,
    ) -> Result<deadpool_postgres::Transaction<'a>, DialogueError> {
        let tx = client.transaction().await.map_err(pg)?;
        tx.batch_execute("SET LOCAL synchronous_commit TO on")
            .await
            .map_err(pg)?;
        Ok(tx)
    }

    fn lookup(&self, row: Option<Row>, owner: Option<&Owner>) -> Result<SessionInfo, DialogueError> {
        let info = session_of(&row.ok_or(DialogueError::NotFound)?)?;
        if info.owner.as_ref() != owner || is_expired(self.retention, &info, SystemTime::now()) {
            return Err(DialogueError::NotFound);
        }
        Ok(info)
    }

    async fn session(&self, id: &str, owner: Option<&Owner>) -> Result<SessionInfo, DialogueError> {
        let id = SessionId::parse(id)?;
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {SESSION_COLUMNS} FROM chatty_sessions WHERE id = $1"),
                &[&id.as_str()],
            )
            .await
            .map_err(pg)?;
        self.lookup(row, owner)
    }
}

fn session_of(row: &Row) -> Result<SessionInfo, DialogueError> {
    let id: String = row.try_get("id").map_err(pg)?;
    let turns: i32 = row.try_get("turns").map_err(pg)?;
    Ok(SessionInfo {
        id: SessionId::parse(&id).map_err(|_| DialogueError::Corrupt(format!("session id {id:?}")))?,
        kg: row.try_get("kg").map_err(pg)?,
        created_at: millis(row.try_get("created_at").map_err(pg)?),
        updated_at: millis(row.try_get("updated_at").map_err(pg)?),
        turns: u32::try_from(turns).unwrap_or(0),
        owner: row
            .try_get::<_, Option<String>>("owner")
            .map_err(pg)?
            .map(Owner::from_stored),
    })
}

fn millis(stored: i64) -> u64 {
    u64::try_from(stored).unwrap_or(0)
}

fn stored_millis(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn stored_index(index: u32) -> i32 {
    i32::try_from(index).unwrap_or(i32::MAX)
}

fn record_text(record: &TurnRecord) -> Result<String, DialogueError> {
    serde_json::to_string(record).map_err(|e| DialogueError::Corrupt(e.to_string()))
}

/// The turn records in `rows` (column `record`), an unreadable one skipped and logged.
fn records(rows: &[Row], session: &SessionId) -> Result<Vec<TurnRecord>, DialogueError> {
    let mut turns = Vec::with_capacity(rows.len());
    for row in rows {
        let text: String = row.try_get("record").map_err(pg)?;
        if let Some(turn) = crate::readable(text.as_bytes(), session) {
            turns.push(turn);
        }
    }
    Ok(turns)
}

#[async_trait::async_trait]
impl DialogueStore for PostgresStore {
    async fn create(&self, kg: &str, owner: Option<Owner>) -> Result<SessionInfo, DialogueError> {
        let info = SessionInfo::fresh(kg, owner)?;
        let mut client = self.client().await?;
        let tx = Self::durable(&mut client).await?;
        tx.execute(
            "INSERT INTO chatty_sessions (id, kg, owner, created_at, updated_at, turns) VALUES ($1, $2, $3, $4, $4, 0)",
            &[
                &info.id.as_str(),
                &info.kg,
                &info.owner.as_ref().map(Owner::as_str),
                &stored_millis(info.created_at),
            ],
        )
        .await
        .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        Ok(info)
    }

    async fn get(&self, id: &str, owner: Option<&Owner>) -> Result<SessionInfo, DialogueError> {
        self.session(id, owner).await
    }

    async fn turns_page(&self, id: &SessionId, from: u32, limit: usize) -> Result<Vec<TurnRecord>, DialogueError> {
        let client = self.client().await?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = client
            .query(
                "SELECT record FROM chatty_turns WHERE session = $1 AND idx >= $2 ORDER BY idx LIMIT $3",
                &[&id.as_str(), &stored_index(from), &limit],
            )
            .await
            .map_err(pg)?;
        records(&rows, id)
    }

    async fn history(&self, id: &SessionId, last: usize) -> Result<Vec<TurnContext>, DialogueError> {
        let client = self.client().await?;
        let last = i64::try_from(last).unwrap_or(i64::MAX);
        let rows = client
            .query(
                "SELECT record FROM chatty_turns WHERE session = $1 ORDER BY idx DESC LIMIT $2",
                &[&id.as_str(), &last],
            )
            .await
            .map_err(pg)?;
        let mut turns: Vec<TurnContext> = records(&rows, id)?.into_iter().map(|t| t.context).collect();
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
        let mut client = self.client().await?;
        let tx = Self::durable(&mut client).await?;
        let row = tx
            .query_opt(
                "SELECT turns FROM chatty_sessions WHERE id = $1 FOR UPDATE",
                &[&id.as_str()],
            )
            .await
            .map_err(pg)?
            .ok_or(DialogueError::NotFound)?;
        let index: i32 = row.try_get("turns").map_err(pg)?;
        let record = TurnRecord::fresh(u32::try_from(index).unwrap_or(0), asked_at, context, explanation);
        tx.execute(
            "INSERT INTO chatty_turns (session, idx, record) VALUES ($1, $2, $3)",
            &[&id.as_str(), &index, &record_text(&record)?],
        )
        .await
        .map_err(pg)?;
        tx.execute(
            "UPDATE chatty_sessions SET turns = turns + 1, updated_at = $2 WHERE id = $1",
            &[&id.as_str(), &stored_millis(asked_at)],
        )
        .await
        .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        Ok(record)
    }

    async fn rate(
        &self,
        id: &str,
        owner: Option<&Owner>,
        turn: u32,
        feedback: Option<Feedback>,
    ) -> Result<TurnRecord, DialogueError> {
        let id = SessionId::parse(id)?;
        let mut client = self.client().await?;
        let tx = Self::durable(&mut client).await?;
        let row = tx
            .query_opt(
                &format!("SELECT {SESSION_COLUMNS} FROM chatty_sessions WHERE id = $1 FOR UPDATE"),
                &[&id.as_str()],
            )
            .await
            .map_err(pg)?;
        self.lookup(row, owner)?;
        let row = tx
            .query_opt(
                "SELECT record FROM chatty_turns WHERE session = $1 AND idx = $2 FOR UPDATE",
                &[&id.as_str(), &stored_index(turn)],
            )
            .await
            .map_err(pg)?
            .ok_or(DialogueError::NoSuchTurn(turn))?;
        let text: String = row.try_get("record").map_err(pg)?;
        let mut record: TurnRecord = crate::decode(text.as_bytes())?;
        record.feedback = feedback;
        tx.execute(
            "UPDATE chatty_turns SET record = $3, rated = $4 WHERE session = $1 AND idx = $2",
            &[
                &id.as_str(),
                &stored_index(turn),
                &record_text(&record)?,
                &record.feedback.is_some(),
            ],
        )
        .await
        .map_err(pg)?;
        tx.execute(
            "UPDATE chatty_sessions SET updated_at = $2 WHERE id = $1",
            &[&id.as_str(), &stored_millis(now_ms())],
        )
        .await
        .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        Ok(record)
    }

    async fn rated_turns(&self, scope: Scope<'_>) -> Result<Vec<(SessionInfo, TurnRecord)>, DialogueError> {
        let client = self.client().await?;
        let select = "SELECT s.id, s.kg, s.owner, s.created_at, s.updated_at, s.turns, t.record \
                      FROM chatty_turns t JOIN chatty_sessions s ON s.id = t.session WHERE t.rated";
        let rows = match scope {
            Scope::All => client.query(&format!("{select} ORDER BY s.id, t.idx"), &[]).await,
            Scope::Owner(owner) => {
                let owner = owner.map(Owner::as_str);
                client
                    .query(
                        &format!("{select} AND s.owner IS NOT DISTINCT FROM $1 ORDER BY s.id, t.idx"),
                        &[&owner],
                    )
                    .await
            }
        }
        .map_err(pg)?;
        let now = SystemTime::now();
        let mut rated = Vec::new();
        for row in &rows {
            let info = session_of(row)?;
            if is_expired(self.retention, &info, now) {
                continue;
            }
            for turn in records(std::slice::from_ref(row), &info.id)? {
                if turn.feedback.is_some() {
                    rated.push((info.clone(), turn));
                }
            }
        }
        Ok(rated)
    }

    async fn put_example(&self, example: ExampleRecord) -> Result<(), DialogueError> {
        if example
            .session
            .as_ref()
            .is_some_and(|s| !example.id.starts_with(s.as_str()))
        {
            return Err(DialogueError::NotFound);
        }
        let text = String::from_utf8(crate::encode(&example)?).map_err(|e| DialogueError::Corrupt(e.to_string()))?;
        let mut client = self.client().await?;
        let tx = Self::durable(&mut client).await?;
        // The session's row is the foreign key: a session deleted meanwhile fails the insert.
        tx.execute(
            "INSERT INTO chatty_examples (id, kg, owner, shared, session, record) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (id) DO UPDATE SET kg = $2, owner = $3, shared = $4, session = $5, record = $6",
            &[
                &example.id,
                &example.kg,
                &example.owner.as_ref().map(Owner::as_str),
                &example.shared,
                &example.session.as_ref().map(SessionId::as_str),
                &text,
            ],
        )
        .await
        .map_err(|e| {
            if e.code() == Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION) {
                DialogueError::NotFound
            } else {
                pg(e)
            }
        })?;
        tx.commit().await.map_err(pg)?;
        Ok(())
    }

    async fn examples(&self, scope: Scope<'_>, kg: Option<&str>) -> Result<Vec<ExampleRecord>, DialogueError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id, record FROM chatty_examples WHERE ($1::text IS NULL OR kg = $1) ORDER BY id",
                &[&kg],
            )
            .await
            .map_err(pg)?;
        let mut found = Vec::new();
        for row in &rows {
            let id: String = row.try_get("id").map_err(pg)?;
            let text: String = row.try_get("record").map_err(pg)?;
            match crate::decode::<ExampleRecord>(text.as_bytes()) {
                Ok(example) if example.in_scope(scope) => found.push(example),
                Ok(_) => {}
                Err(error) => tracing::warn!(example = %id, %error, "an unreadable example was skipped"),
            }
        }
        Ok(found)
    }

    async fn remove_example(&self, id: &str, scope: Scope<'_>) -> Result<bool, DialogueError> {
        let mut client = self.client().await?;
        let tx = Self::durable(&mut client).await?;
        let row = tx
            .query_opt("SELECT record FROM chatty_examples WHERE id = $1 FOR UPDATE", &[&id])
            .await
            .map_err(pg)?;
        let Some(row) = row else { return Ok(false) };
        let text: String = row.try_get("record").map_err(pg)?;
        if !matches!(scope, Scope::All)
            && !crate::decode::<ExampleRecord>(text.as_bytes()).is_ok_and(|e| e.in_scope(scope))
        {
            return Ok(false);
        }
        tx.execute("DELETE FROM chatty_examples WHERE id = $1", &[&id])
            .await
            .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        Ok(true)
    }

    async fn delete(&self, id: &str, owner: Option<&Owner>) -> Result<(), DialogueError> {
        let info = self.session(id, owner).await?;
        let mut client = self.client().await?;
        let tx = Self::durable(&mut client).await?;
        tx.execute("DELETE FROM chatty_sessions WHERE id = $1", &[&info.id.as_str()])
            .await
            .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        Ok(())
    }

    async fn expire_at(&self, now: SystemTime) -> Result<usize, DialogueError> {
        let Some(retention) = self.retention else { return Ok(0) };
        let cutoff = cutoff_ms(retention, now);
        let mut client = self.client().await?;
        let tx = Self::durable(&mut client).await?;
        let removed = tx
            .execute(
                "DELETE FROM chatty_sessions WHERE updated_at < $1",
                &[&stored_millis(cutoff)],
            )
            .await
            .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        Ok(usize::try_from(removed).unwrap_or(usize::MAX))
    }

    async fn flush(&self) -> Result<(), DialogueError> {
        // Every write was committed durably already.
        Ok(())
    }

    async fn check(&self) -> Result<(), DialogueError> {
        let mut client = self.client().await?;
        let tx = Self::durable(&mut client).await?;
        tx.execute(
            "INSERT INTO chatty_health (id, at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at = EXCLUDED.at",
            &[&stored_millis(now_ms())],
        )
        .await
        .map_err(pg)?;
        tx.commit().await.map_err(pg)
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }
}
