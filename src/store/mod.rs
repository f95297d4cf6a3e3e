//! Every SQL statement execgate runs, behind one struct with two backends:
//!
//! - [`sqlite`]: the embedded default, one file for one daemon, through rusqlite, with
//!   one writer thread that commits concurrent writes together (group commit).
//! - [`postgres`]: `database = "postgres://…"`, through sqlx: one database shared by
//!   daemons on many hosts, each writing its `node` on every row, with what they need to
//!   act as one (`postgres::cluster`: notifications, heartbeats, the chat leader's lock).
//!
//! Both keep the same tables with the same meanings, decoded alike (`decode`). The one transition out of
//! `pending` is an `UPDATE … WHERE status = 'pending'` whose affected-row count says who
//! won, on either.
//!
//! The public face says nothing of connections or SQL: async methods that take and
//! return the model's types.

pub mod audit;
mod decode;
pub mod postgres;
mod sqlite;

pub use sqlite::WriteStats;

use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use tracing::instrument;

use crate::model::{
    Confine, Decision, ExecResult, GrantDraft, Record, RequestSpec, Risk, Rule, RuleEvent,
    RuleKind, Status, Via,
};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database error: {0}")]
    Postgres(#[from] sqlx_core::Error),
    #[error("PostgreSQL migration {version} ({description}) failed: {source}")]
    PostgresMigration {
        version: i64,
        description: &'static str,
        source: sqlx_core::Error,
    },
    #[error("database migration {version} ({description}) failed: {source}")]
    Migration {
        version: i64,
        description: &'static str,
        source: rusqlite::Error,
    },
    #[error("cannot use this database: {0}")]
    Schema(String),
    #[error("cannot prepare the database path {path}: {source}")]
    Dir {
        path: String,
        source: std::io::Error,
    },
    #[error("no free short id: too many requests were put to a human in the last 24 hours")]
    ShortIdsExhausted,
    #[error("corrupt row {id}: {what}")]
    Corrupt { id: String, what: String },
    #[error("cannot start the database writer: {0}")]
    Thread(std::io::Error),
    #[error("the database writer has stopped")]
    WriterStopped,
    /// A blocking database task (a read, the migrations) panicked or was cancelled.
    #[error("a database task did not finish: {0}")]
    Task(String),
    #[error("the database is closed")]
    Closed,
}

/// Formats a timestamp the one way the database stores it.
pub fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
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
    /// For a request put to a human: the rule a grant would save, or why none.
    pub grant: Option<GrantDraft>,
    /// How the kernel will hold the command if execgate runs it.
    pub confinement: Option<Confine>,
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
        node: &str,
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
            rule_expires_at: None,
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
            front: spec.front.clone(),
            node: node.to_string(),
            grant: self.grant.clone(),
            confinement: self.confinement,
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
    /// Only requests older than the one with this id (a page after the one that ended
    /// with it; listing is newest first). An id no request has lists nothing.
    pub before: Option<String>,
}

impl RequestFilter {
    /// Every request pending now, on every node (newest first, as every listing).
    pub fn all_pending() -> RequestFilter {
        RequestFilter {
            status: Some(Status::Pending),
            agent: None,
            limit: u32::MAX,
            before: None,
        }
    }
}

/// A rule about to be inserted.
#[derive(Clone, Debug)]
pub struct NewRule {
    pub agent: Option<String>,
    /// Only with `agent`: the rule applies to this session of it only.
    pub session: Option<String>,
    pub pattern: String,
    pub kind: RuleKind,
    pub created_by: String,
    /// The front it came from (a decision's `via`, or `cli`, `web`).
    pub via: Option<Via>,
    pub expires_at: Option<DateTime<Utc>>,
    /// The request whose decision saves it.
    pub source_request: Option<String>,
    /// It lasts until the daemon stops: its row is removed at the next start.
    pub memory: bool,
}

impl NewRule {
    /// Who its rule event names.
    fn actor(&self) -> Actor {
        Actor {
            by: self.created_by.clone(),
            via: self.via.map(|v| v.as_str().to_string()),
            request: self.source_request.clone(),
        }
    }
}

/// Who changed a rule, as its event records: the person, the front, the request
/// answered.
#[derive(Clone, Debug)]
pub struct Actor {
    pub by: String,
    pub via: Option<String>,
    pub request: Option<String>,
}

impl Actor {
    /// The owner through a front (`execgate allow rm` is `cli`).
    pub fn person(by: String, via: Via) -> Actor {
        Actor {
            by,
            via: Some(via.as_str().to_string()),
            request: None,
        }
    }

    /// execgate itself (a rule's expiry).
    fn execgate() -> Actor {
        Actor {
            by: "execgate".into(),
            via: None,
            request: None,
        }
    }

    /// execgate at start, forgetting the rules kept only until it stopped.
    fn restart() -> Actor {
        Actor {
            by: "execgate".into(),
            via: Some(Via::Restart.as_str().to_string()),
            request: None,
        }
    }
}

/// How long a short id a human was shown stays out of circulation.
pub(crate) const SHORT_ID_QUARANTINE: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// The store: SQLite or PostgreSQL behind the same methods.
#[derive(Clone, Debug)]
pub struct Store {
    backend: Backend,
}

#[derive(Clone, Debug)]
enum Backend {
    Sqlite(sqlite::SqliteStore),
    // Boxed: the pool's options make it ten times the SQLite side's size.
    Postgres(Box<postgres::PgStore>),
}

/// Runs the same call on whichever backend the store has.
macro_rules! on_backend {
    ($store:expr, $b:ident => $call:expr) => {
        match &$store.backend {
            Backend::Sqlite($b) => $call,
            Backend::Postgres($b) => $call,
        }
    };
}

impl Store {
    /// Opens (creating if missing) a SQLite database, with WAL, `synchronous=FULL`,
    /// foreign keys and a busy timeout, brings its schema up to date, and starts the
    /// writer. Rows are written as node `node`.
    pub async fn open_sqlite(
        path: &Path,
        busy_timeout: Duration,
        node: &str,
    ) -> Result<Store, StoreError> {
        let store = sqlite::SqliteStore::open(path, busy_timeout, node).await?;
        Ok(Store {
            backend: Backend::Sqlite(store),
        })
    }

    /// [`Store::open_sqlite`] as node `local`: for tools and tests that use one file.
    pub async fn open(path: &Path, busy_timeout: Duration) -> Result<Store, StoreError> {
        Store::open_sqlite(path, busy_timeout, "local").await
    }

    /// Connects to a PostgreSQL database shared with other nodes and brings its schema up
    /// to date (one node at a time). Rows are written as node `node`.
    pub async fn open_postgres(
        url: &crate::config::PostgresUrl,
        node: &str,
        options: postgres::Options,
    ) -> Result<Store, StoreError> {
        let store = postgres::PgStore::connect(url, node, options).await?;
        Ok(Store {
            backend: Backend::Postgres(Box::new(store)),
        })
    }

    /// The same store, its writes chained from now on or not (`audit.chain`).
    pub fn with_chain(self, on: bool) -> Store {
        let backend = match self.backend {
            Backend::Sqlite(s) => Backend::Sqlite(s.with_chain(on)),
            Backend::Postgres(p) => Backend::Postgres(Box::new(p.with_chain(on))),
        };
        Store { backend }
    }

    /// The PostgreSQL side of a shared database, for the cluster's coordination; None on
    /// SQLite.
    pub fn shared(&self) -> Option<&postgres::PgStore> {
        match &self.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(pg) => Some(pg),
        }
    }

    /// The node this store writes as.
    pub fn node(&self) -> &str {
        on_backend!(self, b => b.node())
    }

    /// How the SQLite writer has grouped writes since start (zeros on PostgreSQL, which
    /// commits each write on its own connection).
    pub fn write_stats(&self) -> WriteStats {
        match &self.backend {
            Backend::Sqlite(s) => s.write_stats(),
            Backend::Postgres(_) => WriteStats::default(),
        }
    }

    /// Times every SQLite group commit into `metrics` from now on. PostgreSQL's writes
    /// are not timed: each is its own transaction on a pooled connection.
    pub fn count_commits(&self, metrics: std::sync::Arc<crate::metrics::Metrics>) {
        if let Backend::Sqlite(s) = &self.backend {
            s.count_commits(metrics);
        }
    }

    /// Commits what is queued, then closes every connection (used at shutdown, after
    /// the last write).
    pub async fn close(&self) {
        on_backend!(self, b => b.close().await)
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
        on_backend!(self, b => b.insert_decided(new, resolution, error, rules_used).await)
    }

    /// Records a request that waits for a human, choosing a short id that no pending
    /// request holds (on any node) and no request shown to a human used in the last 24
    /// hours.
    #[instrument(level = "debug", skip_all)]
    pub async fn insert_pending(
        &self,
        new: NewRequest,
        expires_at: DateTime<Utc>,
    ) -> Result<Record, StoreError> {
        on_backend!(self, b => b.insert_pending(new, expires_at).await)
    }

    /// Moves a pending request to its terminal state. Returns false when it was not
    /// pending (someone else resolved it first, or it never existed): exactly one caller
    /// ever gets true, whichever node it runs on. With `always_rule`, the rule is stored
    /// in the same transaction.
    #[instrument(level = "debug", skip_all, fields(id = %id))]
    pub async fn resolve(
        &self,
        id: &str,
        resolution: Resolution,
        error: Option<String>,
        always_rule: Option<NewRule>,
    ) -> Result<bool, StoreError> {
        on_backend!(self, b => b.resolve(id, resolution, error, always_rule).await)
    }

    /// Resolves every request left pending by this node's last run (crash recovery at
    /// startup; on SQLite, every pending request). Returns their ids.
    #[instrument(skip_all)]
    pub async fn sweep_pending(
        &self,
        resolution: Resolution,
        error: &str,
    ) -> Result<Vec<String>, StoreError> {
        on_backend!(self, b => b.sweep_pending(resolution, error).await)
    }

    #[instrument(skip_all)]
    pub async fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        on_backend!(self, b => b.get(id).await)
    }

    /// Finds a request by full id or by short id (case-insensitive). A short id names the
    /// pending request holding it, else the newest asked request that had it: requests
    /// policy decided have short ids nobody was shown, and are found by full id.
    #[instrument(skip_all)]
    pub async fn find(&self, id_or_short: &str) -> Result<Option<Record>, StoreError> {
        on_backend!(self, b => b.find(id_or_short).await)
    }

    /// Newest first.
    #[instrument(skip_all)]
    pub async fn list(&self, filter: &RequestFilter) -> Result<Vec<Record>, StoreError> {
        on_backend!(self, b => b.list(filter).await)
    }

    /// Does the database answer, for reads and for writes?
    pub async fn ping(&self) -> Result<(), StoreError> {
        on_backend!(self, b => b.ping().await)
    }

    /// Records how an approved command's run ended (its numbers; output is never stored).
    #[instrument(level = "debug", skip_all)]
    pub async fn record_result(&self, id: &str, result: &ExecResult) -> Result<(), StoreError> {
        on_backend!(self, b => b.record_result(id, result).await)
    }

    #[instrument(level = "debug", skip_all)]
    pub async fn set_message_external_id(
        &self,
        id: &str,
        external: &str,
    ) -> Result<(), StoreError> {
        on_backend!(self, b => b.set_message_external_id(id, external).await)
    }

    /// Records that a human may have seen these requests' short ids, for requests that
    /// were shown after their transition was written (see [`Resolution::shown`]): each id
    /// stays out of circulation for a day. Ids never shown go back once their request ends.
    #[instrument(level = "debug", skip_all)]
    pub async fn mark_shown(&self, ids: Vec<String>) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        on_backend!(self, b => b.mark_shown(ids).await)
    }

    /// The messages that show request `id`, in every chat (see `set_message_external_id`).
    #[instrument(skip_all)]
    pub async fn message_external_ids(&self, id: &str) -> Result<Vec<String>, StoreError> {
        on_backend!(self, b => b.message_external_ids(id).await)
    }

    #[instrument(skip_all)]
    pub async fn find_by_message_external_id(
        &self,
        external: &str,
    ) -> Result<Option<Record>, StoreError> {
        on_backend!(self, b => b.find_by_message_external_id(external).await)
    }

    /// The requests shown by messages whose external ids begin with `prefix` (a digest's
    /// members, `CHAT:MESSAGE#`), oldest first.
    #[instrument(skip_all)]
    pub async fn find_by_message_prefix(&self, prefix: &str) -> Result<Vec<Record>, StoreError> {
        // Every id that begins with `prefix` lies in [prefix, the prefix with its last
        // character raised by one): a range the key's index answers, no LIKE escaping.
        let Some(last) = prefix.chars().last() else {
            return Ok(Vec::new());
        };
        let Some(next) = char::from_u32(last as u32 + 1) else {
            return Ok(Vec::new());
        };
        let to = format!("{}{next}", &prefix[..prefix.len() - last.len_utf8()]);
        on_backend!(self, b => b.find_by_message_range(prefix, &to).await)
    }

    #[instrument(skip_all)]
    pub async fn list_rules(&self) -> Result<Vec<Rule>, StoreError> {
        on_backend!(self, b => b.list_rules().await)
    }

    /// Adds a rule. A rule with the same agent, session, kind and pattern is returned
    /// instead of duplicated, living as long as the longer of the two asks (an expired
    /// or time-boxed rule granted again for longer is renewed; a kept rule is never made
    /// to expire, nor one kept across restarts made to end with this run).
    #[instrument(skip_all)]
    pub async fn add_rule(&self, rule: NewRule, now: DateTime<Utc>) -> Result<Rule, StoreError> {
        on_backend!(self, b => b.add_rule(rule, now).await)
    }

    /// Removes the rules that were to last only until the daemon stopped (`memory`), at
    /// start, each removal a rule event. Returns how many. (On a shared database, the
    /// rules this node's grants saved.)
    #[instrument(skip_all)]
    pub async fn forget_memory_rules(&self) -> Result<usize, StoreError> {
        on_backend!(self, b => b.forget_memory_rules(Utc::now()).await)
    }

    /// Removes a rule, recording who did (a rule event). Returns false when no rule had
    /// that id.
    #[instrument(skip_all)]
    pub async fn remove_rule(&self, id: i64, actor: Actor) -> Result<bool, StoreError> {
        on_backend!(self, b => b.remove_rule(id, actor, Utc::now()).await)
    }

    /// Records the expiry of every rule whose time has come by `now` and was not yet
    /// recorded as expired (a rule event, at the moment it expired). Returns how many.
    #[instrument(level = "debug", skip_all)]
    pub async fn expire_rules(&self, now: DateTime<Utc>) -> Result<usize, StoreError> {
        on_backend!(self, b => b.expire_rules(now).await)
    }

    /// Rule events, newest first; only those older than event `before` when given.
    #[instrument(skip_all)]
    pub async fn rule_events(
        &self,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<RuleEvent>, StoreError> {
        on_backend!(self, b => b.rule_events(limit, before).await)
    }

    /// The rule events after event `after`, oldest first (at most a thousand).
    #[instrument(level = "debug", skip_all)]
    pub async fn rule_events_after(&self, after: i64) -> Result<Vec<RuleEvent>, StoreError> {
        on_backend!(self, b => b.rule_events_after(after).await)
    }

    /// This node's last audit entry (its anchor is what the daemon logs).
    #[instrument(skip_all)]
    pub async fn audit_head(&self) -> Result<Option<audit::Entry>, StoreError> {
        on_backend!(self, b => b.audit_head().await)
    }

    /// At start, before any write: vouches for rows written before the chain existed
    /// (see docs/audit.md). Returns how many entries that took.
    #[instrument(skip_all)]
    pub async fn audit_adopt(&self) -> Result<u64, StoreError> {
        on_backend!(self, b => b.audit_adopt(Utc::now()).await)
    }

    /// Walks every chain and reports what is wrong; `head` (`NODE:SEQ:HASH`, as logged)
    /// is checked when given.
    #[instrument(skip_all)]
    pub async fn audit_verify(&self, head: Option<String>) -> Result<audit::Report, StoreError> {
        on_backend!(self, b => b.audit_verify(head).await)
    }

    /// Begins a new segment of this node's chain, saying why (after a break).
    #[instrument(skip_all)]
    pub async fn audit_segment(&self, why: &str) -> Result<(), StoreError> {
        on_backend!(self, b => b.audit_segment(why, Utc::now()).await)
    }

    /// Entries after `(node, seq)`, in chain order, each with its subject's chained
    /// columns as they read now: a page of `audit export`.
    #[instrument(skip_all)]
    pub async fn audit_entries(
        &self,
        after: Option<(String, i64)>,
        limit: u32,
    ) -> Result<Vec<audit::Exported>, StoreError> {
        on_backend!(self, b => b.audit_entries(after, limit).await)
    }

    /// A small value the daemon keeps across restarts (and, on a shared database, across
    /// nodes), such as where Telegram's updates resume.
    #[instrument(skip_all)]
    pub async fn state(&self, key: &str) -> Result<Option<String>, StoreError> {
        on_backend!(self, b => b.state(key).await)
    }

    #[instrument(skip_all)]
    pub async fn set_state(&self, key: &str, value: &str) -> Result<(), StoreError> {
        on_backend!(self, b => b.set_state(key, value).await)
    }
}

/// A random short id, never one that also reads as a duration (three digits and a `d`,
/// `120d`): the owner's `/approve 120d` then always means a grant of 120 days, never
/// request 120d.
fn random_short_id() -> String {
    loop {
        let id = format!("{:04x}", rand::Rng::random::<u16>(&mut rand::rng()));
        if !crate::model::looks_like_duration(&id) {
            return id;
        }
    }
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
pub(crate) fn create_private_file(path: &Path) -> std::io::Result<()> {
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
