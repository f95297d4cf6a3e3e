//! Every SQL statement execgate runs, behind one struct.
//!
//! Reads go to a small pool of read-only connections (sqlx; WAL lets them run beside a
//! write). Every write is a [`Write`] handed to the one writer thread (`writer.rs`, with
//! its own synchronous connection), which commits concurrent writes together in
//! `BEGIN IMMEDIATE` transactions and answers each caller only after the commit that holds
//! its write. Migrations run through sqlx before the writer starts. The one transition out of
//! `pending` is an `UPDATE … WHERE status = 'pending'` whose affected-row count says who
//! won.

mod writer;

pub use writer::WriteStats;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use rand::Rng;
use rusqlite::params;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection, FromRow};
use tracing::instrument;

use crate::model::{
    Command, Decision, ExecResult, InputSummary, Record, RequestSpec, Risk, Rule, RuleKind, Status,
    Via,
};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("cannot prepare the database path {path}: {source}")]
    Dir {
        path: String,
        source: std::io::Error,
    },
    #[error("no free short id: too many requests were put to a human in the last 24 hours")]
    ShortIdsExhausted,
    #[error("corrupt row {id}: {what}")]
    Corrupt { id: String, what: String },
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot start the database writer: {0}")]
    Thread(std::io::Error),
    #[error("the database writer has stopped")]
    WriterStopped,
}

/// Formats a timestamp the one way the database stores it.
pub fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn parse_ts(id: &str, s: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::Corrupt {
            id: id.into(),
            what: format!("timestamp {s:?}: {e}"),
        })
}

fn parse_opt_ts(id: &str, s: Option<String>) -> Result<Option<DateTime<Utc>>, StoreError> {
    s.map(|s| parse_ts(id, &s)).transpose()
}

fn parse_word<T: FromStr<Err = String>>(id: &str, s: &str) -> Result<T, StoreError> {
    s.parse().map_err(|what| StoreError::Corrupt {
        id: id.into(),
        what,
    })
}

/// A request row about to be inserted: the request as the API checked it, and what
/// policy judged of it.
#[derive(Clone, Debug)]
pub struct NewRequest {
    pub id: String,
    pub spec: RequestSpec,
    pub risk: Risk,
    pub risk_reasons: Vec<String>,
    pub created_at: DateTime<Utc>,
}

impl NewRequest {
    /// The record exactly as its row reads once written: what an insert returns, so the
    /// caller need not read the row back.
    fn record(
        &self,
        short_id: &str,
        resolution: Option<&Resolution>,
        error: Option<&str>,
        expires_at: Option<DateTime<Utc>>,
    ) -> Record {
        let spec = &self.spec;
        Record {
            id: self.id.clone(),
            short_id: short_id.to_string(),
            agent: spec.agent.to_string(),
            session: spec.session.clone(),
            command: spec.command.clone(),
            cwd: spec.cwd.clone(),
            reason: spec.reason.clone(),
            status: resolution.map_or(Status::Pending, |r| r.status),
            decision: resolution.and_then(|r| r.decision),
            via: resolution.map(|r| r.via),
            decided_by: resolution.and_then(|r| r.decided_by.clone()),
            risk: self.risk,
            risk_reasons: self.risk_reasons.clone(),
            created_at: self.created_at,
            expires_at,
            resolved_at: resolution.map(|r| r.resolved_at),
            run: spec.run,
            result: None,
            error: error.map(String::from),
            peer_uid: spec.peer_uid,
            peer_pid: spec.peer_pid,
            input: spec.input.clone(),
        }
    }
}

/// The terminal state a request moves to.
#[derive(Clone, Debug)]
pub struct Resolution {
    pub status: Status,
    pub decision: Option<Decision>,
    pub via: Via,
    pub decided_by: Option<String>,
    pub resolved_at: DateTime<Utc>,
    /// Whether a human may have seen the request's short id while it was pending: it then
    /// stays out of circulation for a day. Recorded with the transition, so that showing
    /// an id costs no write of its own. (A request nobody was asked about has no id to
    /// keep; the field is not read for those.)
    pub shown: bool,
}

/// Filters for listing requests.
#[derive(Clone, Debug, Default)]
pub struct RequestFilter {
    pub status: Option<Status>,
    pub agent: Option<String>,
    pub limit: u32,
}

/// A rule about to be inserted.
#[derive(Clone, Debug)]
pub struct NewRule {
    pub agent: Option<String>,
    pub pattern: String,
    pub kind: RuleKind,
    pub created_by: String,
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(FromRow)]
struct RequestRow {
    id: String,
    short_id: String,
    agent_id: String,
    session_id: Option<String>,
    command: Option<String>,
    argv: Option<String>,
    cwd: Option<String>,
    reason: Option<String>,
    risk: String,
    risk_reasons: String,
    status: String,
    decision: Option<String>,
    via: Option<String>,
    decided_by: Option<String>,
    error: Option<String>,
    created_at: String,
    expires_at: Option<String>,
    resolved_at: Option<String>,
    run: bool,
    peer_uid: Option<i64>,
    peer_pid: Option<i64>,
    exit_code: Option<i64>,
    signal: Option<i64>,
    timed_out: Option<bool>,
    duration_ms: Option<i64>,
    stdout_bytes: Option<i64>,
    stderr_bytes: Option<i64>,
    input_bytes: Option<i64>,
    input_sha256: Option<String>,
    input_head: Option<String>,
}

impl RequestRow {
    fn into_record(self) -> Result<Record, StoreError> {
        let id = self.id.clone();
        let corrupt = |what: String| StoreError::Corrupt {
            id: id.clone(),
            what,
        };
        let command = match (self.command, self.argv) {
            (Some(line), None) => Command::Line(line),
            (None, Some(argv)) => Command::Argv(
                serde_json::from_str(&argv).map_err(|e| corrupt(format!("argv: {e}")))?,
            ),
            // The schema's CHECK keeps exactly one; a row without is not a request.
            _ => return Err(corrupt("not exactly one of command and argv".into())),
        };
        Ok(Record {
            command,
            risk_reasons: serde_json::from_str(&self.risk_reasons)
                .map_err(|e| corrupt(format!("risk_reasons: {e}")))?,
            risk: parse_word(&id, &self.risk)?,
            status: parse_word(&id, &self.status)?,
            decision: self.decision.map(|d| parse_word(&id, &d)).transpose()?,
            via: self.via.map(|v| parse_word(&id, &v)).transpose()?,
            created_at: parse_ts(&id, &self.created_at)?,
            expires_at: parse_opt_ts(&id, self.expires_at)?,
            resolved_at: parse_opt_ts(&id, self.resolved_at)?,
            id: self.id,
            short_id: self.short_id,
            agent: self.agent_id,
            session: self.session_id,
            cwd: self.cwd,
            reason: self.reason,
            decided_by: self.decided_by,
            run: self.run,
            // A run's numbers, without its output (which is never stored).
            result: self.duration_ms.map(|ms| ExecResult {
                exit_code: self.exit_code.and_then(|c| i32::try_from(c).ok()),
                signal: self.signal.and_then(|s| i32::try_from(s).ok()),
                timed_out: self.timed_out.unwrap_or(false),
                duration_ms: u64::try_from(ms).unwrap_or(0),
                stdout_bytes: self
                    .stdout_bytes
                    .and_then(|b| u64::try_from(b).ok())
                    .unwrap_or(0),
                stderr_bytes: self
                    .stderr_bytes
                    .and_then(|b| u64::try_from(b).ok())
                    .unwrap_or(0),
                ..ExecResult::default()
            }),
            error: self.error,
            peer_uid: self.peer_uid.and_then(|u| u32::try_from(u).ok()),
            peer_pid: self.peer_pid.and_then(|p| i32::try_from(p).ok()),
            input: match (self.input_bytes, self.input_sha256, self.input_head) {
                (Some(bytes), Some(sha256), Some(head)) => Some(InputSummary {
                    bytes: u64::try_from(bytes).unwrap_or(0),
                    sha256,
                    head,
                }),
                _ => None,
            },
        })
    }
}

#[derive(FromRow)]
struct RuleRow {
    id: i64,
    agent_id: Option<String>,
    pattern: String,
    kind: String,
    created_at: String,
    created_by: String,
    expires_at: Option<String>,
    last_used_at: Option<String>,
    last_command: Option<String>,
    use_count: i64,
}

impl RuleRow {
    fn into_rule(self) -> Result<Rule, StoreError> {
        let id = format!("rule {}", self.id);
        Ok(Rule {
            kind: parse_word(&id, &self.kind)?,
            created_at: parse_ts(&id, &self.created_at)?,
            expires_at: parse_opt_ts(&id, self.expires_at)?,
            last_used_at: parse_opt_ts(&id, self.last_used_at)?,
            id: self.id,
            agent: self.agent_id,
            pattern: self.pattern,
            created_by: self.created_by,
            last_command: self.last_command,
            use_count: self.use_count,
        })
    }
}

const REQUEST_COLUMNS: &str = "id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, \
     risk_reasons, status, decision, via, decided_by, error, created_at, expires_at, resolved_at, run, peer_uid, peer_pid, \
     exit_code, signal, timed_out, duration_ms, stdout_bytes, stderr_bytes, input_bytes, input_sha256, input_head";

/// How long a short id a human was shown stays out of circulation.
const SHORT_ID_QUARANTINE: chrono::TimeDelta = chrono::TimeDelta::hours(24);

#[derive(Clone, Debug)]
pub struct Store {
    /// Read-only connections: a write through them fails loudly instead of racing the writer.
    reads: SqlitePool,
    writer: writer::Writer,
}

impl Store {
    /// Opens (creating if missing) the database, with WAL, `synchronous=FULL`, foreign
    /// keys and a busy timeout, applies the embedded migrations, and starts the writer.
    pub async fn open(path: &Path, busy_timeout: Duration) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir(dir).map_err(|source| StoreError::Dir {
                path: dir.display().to_string(),
                source,
            })?;
        }
        create_private_file(path).map_err(|source| StoreError::Dir {
            path: path.display().to_string(),
            source,
        })?;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(busy_timeout);
        let mut conn = options.connect().await?;
        sqlx::migrate!("./migrations").run(&mut conn).await?;
        conn.close().await?;
        let writer = writer::Writer::start(path, busy_timeout)?;
        let read_options = options
            .read_only(true)
            .create_if_missing(false)
            .journal_mode(SqliteJournalMode::Wal);
        let reads = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(busy_timeout + Duration::from_secs(1))
            .connect_with(read_options)
            .await?;
        Ok(Store { reads, writer })
    }

    /// How the writer has grouped writes since start.
    pub fn write_stats(&self) -> WriteStats {
        self.writer.stats()
    }

    /// Commits what is queued, then closes every connection (used at shutdown, after
    /// the last write).
    pub async fn close(&self) {
        self.writer.close().await;
        self.reads.close().await;
    }

    /// Records a request that policy decided without a human. When an allowlist rule
    /// approved it, the rule's use is recorded in the same transaction.
    #[instrument(level = "debug", skip_all)]
    pub async fn insert_decided(
        &self,
        new: NewRequest,
        resolution: Resolution,
        error: Option<String>,
        rules_used: Vec<i64>,
    ) -> Result<Record, StoreError> {
        let write = Write::InsertDecided {
            new,
            resolution,
            error,
            rules_used,
        };
        match self.writer.write(write).await? {
            Written::Record(r) => Ok(*r),
            other => unreachable!("insert_decided answered {other:?}"),
        }
    }

    /// Records a request that waits for a human, choosing a short id that no pending
    /// request holds and no request shown to a human used in the last 24 hours.
    #[instrument(level = "debug", skip_all)]
    pub async fn insert_pending(
        &self,
        new: NewRequest,
        expires_at: DateTime<Utc>,
    ) -> Result<Record, StoreError> {
        match self
            .writer
            .write(Write::InsertPending { new, expires_at })
            .await?
        {
            Written::Record(r) => Ok(*r),
            other => unreachable!("insert_pending answered {other:?}"),
        }
    }

    /// Moves a pending request to its terminal state. Returns false when it was not
    /// pending (someone else resolved it first, or it never existed): exactly one caller
    /// ever gets true. With `always_rule`, the rule is stored in the same transaction.
    #[instrument(level = "debug", skip_all, fields(id = %id))]
    pub async fn resolve(
        &self,
        id: &str,
        resolution: Resolution,
        error: Option<String>,
        always_rule: Option<NewRule>,
    ) -> Result<bool, StoreError> {
        let write = Write::Resolve {
            id: id.to_string(),
            resolution,
            error,
            always_rule,
        };
        match self.writer.write(write).await? {
            Written::Changed(done) => Ok(done),
            other => unreachable!("resolve answered {other:?}"),
        }
    }

    /// Resolves every pending request at once (crash recovery at startup). Returns how many.
    #[instrument(skip_all)]
    pub async fn sweep_pending(
        &self,
        resolution: Resolution,
        error: &str,
    ) -> Result<u64, StoreError> {
        let write = Write::SweepPending {
            resolution,
            error: error.to_string(),
        };
        match self.writer.write(write).await? {
            Written::Count(n) => Ok(n),
            other => unreachable!("sweep_pending answered {other:?}"),
        }
    }

    #[instrument(skip_all)]
    pub async fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        let sql = select_requests("WHERE id = ?");
        let row: Option<RequestRow> = sqlx::query_as(sql)
            .bind(id)
            .fetch_optional(&self.reads)
            .await?;
        row.map(RequestRow::into_record).transpose()
    }

    /// Finds a request by full id or by short id (case-insensitive). A short id names the
    /// pending request holding it, else the newest asked request that had it: requests
    /// policy decided have short ids nobody was shown, and are found by full id.
    #[instrument(skip_all)]
    pub async fn find(&self, id_or_short: &str) -> Result<Option<Record>, StoreError> {
        if id_or_short.len() != 4 {
            return self.get(id_or_short).await;
        }
        let sql = select_requests(
            "WHERE asked = 1 AND short_id = lower(?) \
             ORDER BY (status = 'pending') DESC, created_at DESC, id DESC LIMIT 1",
        );
        let row: Option<RequestRow> = sqlx::query_as(sql)
            .bind(id_or_short)
            .fetch_optional(&self.reads)
            .await?;
        row.map(RequestRow::into_record).transpose()
    }

    /// Newest first.
    #[instrument(skip_all)]
    pub async fn list(&self, filter: &RequestFilter) -> Result<Vec<Record>, StoreError> {
        // One statement per combination of filters: `(? IS NULL OR col = ?)` would hide
        // the indexes from SQLite's planner, and listing what is pending would read the
        // whole history.
        // Parameters: ?1 the limit, then the agent if filtered by, then the status if
        // filtered by one other than pending.
        let sql = match (filter.status, filter.agent.is_some()) {
            (Some(Status::Pending), false) => select_requests(
                "WHERE status = 'pending' ORDER BY created_at DESC, id DESC LIMIT ?1",
            ),
            // Few rows are pending, while one agent may have a million.
            (Some(Status::Pending), true) => select_requests(
                "INDEXED BY exec_approval_pending WHERE status = 'pending' AND agent_id = ?2 \
                 ORDER BY created_at DESC, id DESC LIMIT ?1",
            ),
            // Newest first until the limit is met, rather than sorting the whole history.
            (Some(_), false) => select_requests(
                "INDEXED BY exec_approval_created WHERE status = ?2 \
                 ORDER BY created_at DESC, id DESC LIMIT ?1",
            ),
            (Some(_), true) => select_requests(
                "WHERE agent_id = ?2 AND status = ?3 ORDER BY created_at DESC, id DESC LIMIT ?1",
            ),
            (None, false) => select_requests("ORDER BY created_at DESC, id DESC LIMIT ?1"),
            (None, true) => {
                select_requests("WHERE agent_id = ?2 ORDER BY created_at DESC, id DESC LIMIT ?1")
            }
        };
        let mut query = sqlx::query_as::<_, RequestRow>(sql).bind(i64::from(filter.limit));
        if let Some(agent) = &filter.agent {
            query = query.bind(agent);
        }
        if let Some(status) = filter.status.filter(|s| *s != Status::Pending) {
            query = query.bind(status.as_str());
        }
        let rows = query.fetch_all(&self.reads).await?;
        rows.into_iter().map(RequestRow::into_record).collect()
    }

    /// Does the database answer? A read of the requests table (`SELECT 1` alone would not
    /// touch the file), and the writer working through its queue.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1 FROM exec_approval LIMIT 1")
            .execute(&self.reads)
            .await?;
        self.writer.ping().await
    }

    /// Records how an approved command's run ended (its numbers; output is never stored).
    #[instrument(level = "debug", skip_all)]
    pub async fn record_result(&self, id: &str, result: &ExecResult) -> Result<(), StoreError> {
        let write = Write::RecordResult {
            id: id.to_string(),
            result: RunNumbers::of(result),
        };
        self.writer.write(write).await.map(drop)
    }

    #[instrument(level = "debug", skip_all)]
    pub async fn set_message_external_id(
        &self,
        id: &str,
        external: &str,
    ) -> Result<(), StoreError> {
        let write = Write::SetMessageExternalId {
            id: id.to_string(),
            external: external.to_string(),
        };
        self.writer.write(write).await.map(drop)
    }

    /// Records that a human may have seen these requests' short ids, for requests that
    /// were shown after their transition was written (see [`Resolution::shown`]): each id
    /// stays out of circulation for a day. Ids never shown go back once their request ends.
    #[instrument(level = "debug", skip_all)]
    pub async fn mark_shown(&self, ids: Vec<String>) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        self.writer.write(Write::MarkShown { ids }).await.map(drop)
    }

    #[instrument(skip_all)]
    pub async fn find_by_message_external_id(
        &self,
        external: &str,
    ) -> Result<Option<Record>, StoreError> {
        let sql = select_requests("WHERE message_external_id = ? ORDER BY created_at DESC LIMIT 1");
        let row: Option<RequestRow> = sqlx::query_as(sql)
            .bind(external)
            .fetch_optional(&self.reads)
            .await?;
        row.map(RequestRow::into_record).transpose()
    }

    #[instrument(skip_all)]
    pub async fn list_rules(&self) -> Result<Vec<Rule>, StoreError> {
        let rows: Vec<RuleRow> = sqlx::query_as(
            "SELECT id, agent_id, pattern, kind, created_at, created_by, expires_at, last_used_at, last_command, \
             use_count FROM exec_allowlist ORDER BY id",
        )
        .fetch_all(&self.reads)
        .await?;
        rows.into_iter().map(RuleRow::into_rule).collect()
    }

    /// Adds a rule; an identical rule (same agent, kind and pattern) is returned instead
    /// of duplicated.
    #[instrument(skip_all)]
    pub async fn add_rule(&self, rule: NewRule, now: DateTime<Utc>) -> Result<Rule, StoreError> {
        match self.writer.write(Write::AddRule { rule, now }).await? {
            Written::Rule(r) => Ok(r),
            other => unreachable!("add_rule answered {other:?}"),
        }
    }

    /// Returns false when no rule had that id.
    #[instrument(skip_all)]
    pub async fn remove_rule(&self, id: i64) -> Result<bool, StoreError> {
        match self.writer.write(Write::RemoveRule { id }).await? {
            Written::Changed(done) => Ok(done),
            other => unreachable!("remove_rule answered {other:?}"),
        }
    }
}

/// A change to the database, as handed to the writer. Each owns its data: it crosses to
/// the writer task, and is applied a second time, alone, if the group it was committed
/// with fails.
#[derive(Debug)]
pub(crate) enum Write {
    InsertDecided {
        new: NewRequest,
        resolution: Resolution,
        error: Option<String>,
        rules_used: Vec<i64>,
    },
    InsertPending {
        new: NewRequest,
        expires_at: DateTime<Utc>,
    },
    Resolve {
        id: String,
        resolution: Resolution,
        error: Option<String>,
        always_rule: Option<NewRule>,
    },
    SweepPending {
        resolution: Resolution,
        error: String,
    },
    RecordResult {
        id: String,
        result: RunNumbers,
    },
    SetMessageExternalId {
        id: String,
        external: String,
    },
    MarkShown {
        ids: Vec<String>,
    },
    AddRule {
        rule: NewRule,
        now: DateTime<Utc>,
    },
    RemoveRule {
        id: i64,
    },
}

/// What a write produced, once committed.
#[derive(Debug)]
pub(crate) enum Written {
    Record(Box<Record>),
    /// Whether the row it aimed at changed.
    Changed(bool),
    Count(u64),
    Rule(Rule),
    Nothing,
}

/// A run's numbers as stored.
#[derive(Debug)]
pub(crate) struct RunNumbers {
    exit_code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    duration_ms: i64,
    stdout_bytes: i64,
    stderr_bytes: i64,
}

impl RunNumbers {
    fn of(r: &ExecResult) -> RunNumbers {
        RunNumbers {
            exit_code: r.exit_code,
            signal: r.signal,
            timed_out: r.timed_out,
            duration_ms: i64::try_from(r.duration_ms).unwrap_or(i64::MAX),
            stdout_bytes: i64::try_from(r.stdout_bytes).unwrap_or(i64::MAX),
            stderr_bytes: i64::try_from(r.stderr_bytes).unwrap_or(i64::MAX),
        }
    }
}

impl Write {
    /// True when the write is a single statement, which SQLite commits atomically on its
    /// own: alone, it needs no BEGIN and COMMIT around it.
    fn is_one_statement(&self) -> bool {
        match self {
            Write::InsertDecided { rules_used, .. } => rules_used.is_empty(),
            Write::Resolve { always_rule, .. } => always_rule.is_none(),
            Write::MarkShown { ids } => ids.len() <= 1,
            Write::SweepPending { .. }
            | Write::RecordResult { .. }
            | Write::SetMessageExternalId { .. }
            | Write::RemoveRule { .. } => true,
            Write::InsertPending { .. } | Write::AddRule { .. } => false,
        }
    }

    /// Runs the write's statements on `conn`, inside whatever transaction the writer
    /// opened. Statements are prepared once per connection and cached.
    fn apply(&self, conn: &rusqlite::Connection) -> Result<Written, StoreError> {
        match self {
            Write::InsertDecided {
                new,
                resolution,
                error,
                rules_used,
            } => {
                // No human sees this id, so it need not be unique; lookups prefer pending rows.
                let short_id = random_short_id();
                let error = error.as_deref();
                insert_request(
                    conn,
                    new,
                    &short_id,
                    resolution.status,
                    Some(resolution),
                    error,
                    None,
                    false,
                )?;
                if !rules_used.is_empty() {
                    let mut used = conn.prepare_cached(
                        "UPDATE exec_allowlist SET last_used_at = ?1, last_command = ?2, use_count = use_count + 1 WHERE id = ?3",
                    )?;
                    let command = new.spec.command.display();
                    for rule in rules_used {
                        used.execute(params![ts(resolution.resolved_at), &*command, rule])?;
                    }
                }
                Ok(Written::Record(Box::new(new.record(
                    &short_id,
                    Some(resolution),
                    error,
                    None,
                ))))
            }
            Write::InsertPending { new, expires_at } => {
                let cutoff = ts(new.created_at - SHORT_ID_QUARANTINE);
                // Taken: held by a pending request, or shown to a human in the last day.
                let mut taken = conn.prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM exec_approval WHERE asked = 1 AND short_id = ?1 \
                     AND (status = 'pending' OR (shown = 1 AND created_at > ?2)))",
                )?;
                let mut chosen = None;
                for _ in 0..64 {
                    let candidate = random_short_id();
                    if !taken.query_row(params![candidate, cutoff], |row| row.get::<_, bool>(0))? {
                        chosen = Some(candidate);
                        break;
                    }
                }
                let short_id = chosen.ok_or(StoreError::ShortIdsExhausted)?;
                insert_request(
                    conn,
                    new,
                    &short_id,
                    Status::Pending,
                    None,
                    None,
                    Some(*expires_at),
                    true,
                )?;
                Ok(Written::Record(Box::new(new.record(
                    &short_id,
                    None,
                    None,
                    Some(*expires_at),
                ))))
            }
            Write::Resolve {
                id,
                resolution,
                error,
                always_rule,
            } => {
                let done = conn
                    .prepare_cached(
                        "UPDATE exec_approval SET status = ?1, decision = ?2, via = ?3, decided_by = ?4, resolved_at = ?5, \
                         error = ?6, shown = max(shown, ?8) WHERE id = ?7 AND status = 'pending'",
                    )?
                    .execute(params![
                        resolution.status.as_str(),
                        resolution.decision.map(Decision::as_str),
                        resolution.via.as_str(),
                        resolution.decided_by,
                        ts(resolution.resolved_at),
                        error,
                        id,
                        resolution.shown,
                    ])?
                    == 1;
                // Only the winner of the transition stores the rule.
                if done && let Some(rule) = always_rule {
                    insert_rule(conn, rule, resolution.resolved_at)?;
                }
                Ok(Written::Changed(done))
            }
            Write::SweepPending { resolution, error } => {
                let swept = conn
                    .prepare_cached(
                        "UPDATE exec_approval SET status = ?1, decision = NULL, via = ?2, decided_by = NULL, \
                         resolved_at = ?3, error = ?4, shown = max(shown, ?5) WHERE status = 'pending'",
                    )?
                    .execute(params![
                        resolution.status.as_str(),
                        resolution.via.as_str(),
                        ts(resolution.resolved_at),
                        error,
                        resolution.shown,
                    ])?;
                Ok(Written::Count(swept as u64))
            }
            Write::RecordResult { id, result } => {
                conn.prepare_cached(
                    "UPDATE exec_approval SET exit_code = ?1, signal = ?2, timed_out = ?3, duration_ms = ?4, \
                     stdout_bytes = ?5, stderr_bytes = ?6 WHERE id = ?7",
                )?
                .execute(params![
                    result.exit_code,
                    result.signal,
                    result.timed_out,
                    result.duration_ms,
                    result.stdout_bytes,
                    result.stderr_bytes,
                    id,
                ])?;
                Ok(Written::Nothing)
            }
            Write::SetMessageExternalId { id, external } => {
                conn.prepare_cached(
                    "UPDATE exec_approval SET message_external_id = ?1 WHERE id = ?2",
                )?
                .execute(params![external, id])?;
                Ok(Written::Nothing)
            }
            Write::MarkShown { ids } => {
                let mut mark = conn.prepare_cached(
                    "UPDATE exec_approval SET shown = 1 WHERE id = ?1 AND asked = 1 AND shown = 0",
                )?;
                for id in ids {
                    mark.execute(params![id])?;
                }
                Ok(Written::Nothing)
            }
            Write::AddRule { rule, now } => {
                let id = insert_rule(conn, rule, *now)?;
                let row = conn
                    .prepare_cached(
                        "SELECT id, agent_id, pattern, kind, created_at, created_by, expires_at, last_used_at, \
                         last_command, use_count FROM exec_allowlist WHERE id = ?1",
                    )?
                    .query_row(params![id], |row| {
                        Ok(RuleRow {
                            id: row.get(0)?,
                            agent_id: row.get(1)?,
                            pattern: row.get(2)?,
                            kind: row.get(3)?,
                            created_at: row.get(4)?,
                            created_by: row.get(5)?,
                            expires_at: row.get(6)?,
                            last_used_at: row.get(7)?,
                            last_command: row.get(8)?,
                            use_count: row.get(9)?,
                        })
                    })?;
                Ok(Written::Rule(row.into_rule()?))
            }
            Write::RemoveRule { id } => Ok(Written::Changed(
                conn.prepare_cached("DELETE FROM exec_allowlist WHERE id = ?1")?
                    .execute(params![id])?
                    == 1,
            )),
        }
    }
}

/// `SELECT <every request column> FROM exec_approval <tail>`.
fn select_requests(tail: &'static str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(format!(
        "SELECT {REQUEST_COLUMNS} FROM exec_approval {tail}"
    ))
}

fn random_short_id() -> String {
    format!("{:04x}", rand::rng().random::<u16>())
}

#[allow(clippy::too_many_arguments)]
fn insert_request(
    conn: &rusqlite::Connection,
    new: &NewRequest,
    short_id: &str,
    status: Status,
    resolution: Option<&Resolution>,
    error: Option<&str>,
    expires_at: Option<DateTime<Utc>>,
    asked: bool,
) -> Result<(), StoreError> {
    let spec = &new.spec;
    let argv = spec
        .command
        .argv()
        .map(|a| serde_json::to_string(a).expect("strings serialise"));
    let reasons = serde_json::to_string(&new.risk_reasons).expect("strings serialise");
    conn.prepare_cached(
        "INSERT INTO exec_approval (id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, \
         risk_reasons, status, decision, via, decided_by, error, created_at, expires_at, resolved_at, asked, \
         peer_uid, peer_pid, run, input_bytes, input_sha256, input_head) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, \
         ?23, ?24, ?25)",
    )?
    .execute(params![
        new.id,
        short_id,
        spec.agent.as_str(),
        spec.session,
        spec.command.line(),
        argv,
        spec.cwd,
        spec.reason,
        new.risk.as_str(),
        reasons,
        status.as_str(),
        resolution.and_then(|r| r.decision).map(Decision::as_str),
        resolution.map(|r| r.via.as_str()),
        resolution.and_then(|r| r.decided_by.as_deref()),
        error,
        ts(new.created_at),
        expires_at.map(ts),
        resolution.map(|r| ts(r.resolved_at)),
        asked,
        spec.peer_uid,
        spec.peer_pid,
        spec.run,
        spec.input.as_ref().map(|i| i64::try_from(i.bytes).unwrap_or(i64::MAX)),
        spec.input.as_ref().map(|i| i.sha256.as_str()),
        spec.input.as_ref().map(|i| i.head.as_str()),
    ])?;
    Ok(())
}

/// Inserts a rule unless an identical one exists; returns the rule's id either way.
fn insert_rule(
    conn: &rusqlite::Connection,
    rule: &NewRule,
    now: DateTime<Utc>,
) -> Result<i64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO exec_allowlist (agent_id, pattern, kind, created_at, created_by, expires_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
    )?
    .execute(params![
        rule.agent,
        rule.pattern,
        rule.kind.as_str(),
        ts(now),
        rule.created_by,
        rule.expires_at.map(ts),
    ])?;
    Ok(conn
        .prepare_cached(
            "SELECT id FROM exec_allowlist \
             WHERE ifnull(agent_id, '') = ifnull(?1, '') AND kind = ?2 AND pattern = ?3",
        )?
        .query_row(
            params![rule.agent, rule.kind.as_str(), rule.pattern],
            |row| row.get(0),
        )?)
}

/// Creates `dir` (and parents) with mode 0700 when missing.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Creates the database file with mode 0600 when missing: it holds every command agents
/// asked for. SQLite gives its -wal and -shm files the same mode.
fn create_private_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}
