//! The store on SQLite, through rusqlite: one file, one daemon.
//!
//! - `connection`: how a connection is opened (WAL, `synchronous=FULL`, busy timeout).
//! - `migrate`: the schema brought up to date at open, `migrations/` in order.
//! - `reads`: a few read-only connections, queried on tokio's blocking threads.
//! - `writes`: every change, one type per kind, each with its typed result.
//! - `writer`: the one writer thread, which commits concurrent writes together in
//!   `BEGIN IMMEDIATE` transactions and answers each caller only after the commit that
//!   holds its write (group commit).
//! - `rows`: rows decoded into records and rules.
//! - `chain`: the audit chain's entries, appended inside the writer's transactions, and
//!   rule events.

mod chain;
mod connection;
mod migrate;
mod reads;
mod rows;
mod writer;
mod writes;

pub use writer::WriteStats;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};

use super::{
    Actor, NewRequest, NewRule, RequestFilter, Resolution, SHORT_ID_QUARANTINE, StoreError,
    create_private_dir, create_private_file, random_short_id, ts,
};
use crate::model::{ExecResult, Record, Rule, RuleEvent, Status};
use crate::store::audit::Scope;
use crate::store::audit::{Entry, Exported, Report};
use connection::Target;
use reads::Readers;
use rows::{REQUEST_COLUMNS, RULE_COLUMNS};

#[derive(Clone, Debug)]
pub(super) struct SqliteStore {
    reads: Arc<Readers>,
    writer: writer::Writer,
    /// The name this daemon stores on every row it writes.
    node: Arc<str>,
    /// Whether writes are chained (`audit.chain`).
    chain: bool,
}

impl SqliteStore {
    /// Opens (creating if missing) the database, with WAL, `synchronous=FULL`, foreign
    /// keys and a busy timeout, brings its schema up to date, and starts the writer.
    pub(super) async fn open(
        path: &Path,
        busy_timeout: Duration,
        node: &str,
    ) -> Result<SqliteStore, StoreError> {
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
        let target = Target::new(path, busy_timeout);
        let migrating = target.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = migrating.open_for_writing()?;
            migrate::run(&mut conn)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))??;
        let writer = writer::Writer::start(target.clone())?;
        let reads = Arc::new(Readers::open(target)?);
        Ok(SqliteStore {
            reads,
            writer,
            node: node.into(),
            chain: true,
        })
    }

    /// The same store, its writes chained or not from now on.
    pub(super) fn with_chain(mut self, on: bool) -> SqliteStore {
        self.chain = on;
        self
    }

    fn scope(&self) -> Scope {
        Scope {
            node: self.node.clone(),
            chain: self.chain,
        }
    }

    /// How the writer has grouped writes since start.
    pub(super) fn node(&self) -> &str {
        &self.node
    }

    pub(super) fn count_commits(&self, metrics: Arc<crate::metrics::Metrics>) {
        self.writer.count_into(metrics);
    }

    pub(super) fn write_stats(&self) -> WriteStats {
        self.writer.stats()
    }

    /// Commits what is queued, then closes every connection (used at shutdown, after
    /// the last write).
    pub(super) async fn close(&self) {
        self.writer.close().await;
        self.reads.close();
    }

    /// Records a request that policy decided without a human. When an allowlist rule
    /// approved it, the rule's use is recorded in the same transaction.
    pub(super) async fn insert_decided(
        &self,
        new: NewRequest,
        resolution: Resolution,
        error: Option<String>,
        rules_used: Vec<i64>,
    ) -> Result<Record, StoreError> {
        let write = writes::InsertDecided {
            scope: self.scope(),
            new,
            resolution,
            error,
            rules_used,
        };
        self.writer.write(write).await
    }

    /// Records a request that waits for a human, choosing a short id that no pending
    /// request holds and no request shown to a human used in the last 24 hours.
    pub(super) async fn insert_pending(
        &self,
        new: NewRequest,
        expires_at: DateTime<Utc>,
    ) -> Result<Record, StoreError> {
        let write = writes::InsertPending {
            scope: self.scope(),
            new,
            expires_at,
        };
        self.writer.write(write).await
    }

    /// Moves a pending request to its terminal state. Returns false when it was not
    /// pending (someone else resolved it first, or it never existed): exactly one caller
    /// ever gets true. With `always_rule`, the rule is stored in the same transaction.
    pub(super) async fn resolve(
        &self,
        id: &str,
        resolution: Resolution,
        error: Option<String>,
        always_rule: Option<NewRule>,
    ) -> Result<bool, StoreError> {
        let write = writes::Resolve {
            scope: self.scope(),
            id: id.to_string(),
            resolution,
            error,
            always_rule,
        };
        self.writer.write(write).await
    }

    /// Resolves every pending request at once (crash recovery at startup). Returns how many.
    pub(super) async fn sweep_pending(
        &self,
        resolution: Resolution,
        error: &str,
    ) -> Result<Vec<String>, StoreError> {
        let write = writes::SweepPending {
            scope: self.scope(),
            resolution,
            error: error.to_string(),
        };
        self.writer.write(write).await
    }

    pub(super) async fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        let id = id.to_string();
        self.reads
            .read(move |conn| first_request(conn, "WHERE id = ?1", params![id]))
            .await
    }

    /// Finds a request by full id or by short id (case-insensitive). A short id names the
    /// pending request holding it, else the newest asked request that had it: requests
    /// policy decided have short ids nobody was shown, and are found by full id.
    pub(super) async fn find(&self, id_or_short: &str) -> Result<Option<Record>, StoreError> {
        if id_or_short.len() != 4 {
            return self.get(id_or_short).await;
        }
        let short = id_or_short.to_string();
        self.reads
            .read(move |conn| {
                first_request(
                    conn,
                    "WHERE asked = 1 AND short_id = lower(?1) \
                     ORDER BY (status = 'pending') DESC, created_at DESC, id DESC LIMIT 1",
                    params![short],
                )
            })
            .await
    }

    /// Newest first.
    pub(super) async fn list(&self, filter: &RequestFilter) -> Result<Vec<Record>, StoreError> {
        // One statement per combination of filters: `(? IS NULL OR col = ?)` would hide
        // the indexes from SQLite's planner, and listing what is pending would read the
        // whole history.
        // Parameters: ?1 the limit, then the agent if filtered by, then the status if
        // filtered by one other than pending, then the `before` id.
        let (index, mut conditions) = match (filter.status, filter.agent.is_some()) {
            (Some(Status::Pending), false) => ("", vec!["status = 'pending'".to_string()]),
            // Few rows are pending, while one agent may have a million.
            (Some(Status::Pending), true) => (
                "INDEXED BY exec_approval_pending ",
                vec!["status = 'pending'".into(), "agent_id = ?2".into()],
            ),
            // Newest first until the limit is met, rather than sorting the whole history.
            (Some(_), false) => (
                "INDEXED BY exec_approval_created ",
                vec!["status = ?2".into()],
            ),
            (Some(_), true) => ("", vec!["agent_id = ?2".into(), "status = ?3".into()]),
            (None, false) => ("", vec![]),
            (None, true) => ("", vec!["agent_id = ?2".into()]),
        };
        let mut values: Vec<rusqlite::types::Value> = vec![i64::from(filter.limit).into()];
        values.extend(filter.agent.clone().map(Into::into));
        if let Some(status) = filter.status.filter(|s| *s != Status::Pending) {
            values.push(status.as_str().to_string().into());
        }
        if let Some(before) = &filter.before {
            values.push(before.clone().into());
            let n = values.len();
            // Listing's order is (created_at, id); the first term lets the planner walk
            // the index on created_at from the page's end instead of from the newest.
            conditions.push(format!(
                "created_at <= (SELECT created_at FROM exec_approval WHERE id = ?{n}) \
                 AND (created_at, id) < (SELECT created_at, id FROM exec_approval WHERE id = ?{n})"
            ));
        }
        let filters = match conditions.is_empty() {
            true => String::new(),
            false => format!("WHERE {} ", conditions.join(" AND ")),
        };
        let tail = format!("{index}{filters}ORDER BY created_at DESC, id DESC LIMIT ?1");
        self.reads
            .read(move |conn| requests(conn, &tail, rusqlite::params_from_iter(values)))
            .await
    }

    /// Does the database answer? A read of the requests table (`SELECT 1` alone would not
    /// touch the file), and the writer working through its queue.
    pub(super) async fn ping(&self) -> Result<(), StoreError> {
        self.reads
            .read(|conn| {
                conn.prepare_cached("SELECT 1 FROM exec_approval LIMIT 1")?
                    .exists([])?;
                Ok(())
            })
            .await?;
        self.writer.ping().await
    }

    /// Records how an approved command's run ended (its numbers; output is never stored).
    pub(super) async fn record_result(
        &self,
        id: &str,
        result: &ExecResult,
    ) -> Result<(), StoreError> {
        self.writer
            .write(writes::RecordResult::of(id, result))
            .await
    }

    pub(super) async fn set_message_external_id(
        &self,
        id: &str,
        external: &str,
    ) -> Result<(), StoreError> {
        let write = writes::SetMessageExternalId {
            id: id.to_string(),
            external: external.to_string(),
        };
        self.writer.write(write).await
    }

    /// Records that a human may have seen these requests' short ids, for requests that
    /// were shown after their transition was written (see [`Resolution::shown`]): each id
    /// stays out of circulation for a day. Ids never shown go back once their request ends.
    pub(super) async fn mark_shown(&self, ids: Vec<String>) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        self.writer.write(writes::MarkShown { ids }).await
    }

    /// The messages that show request `id`, in every chat (see `set_message_external_id`).
    pub(super) async fn message_external_ids(&self, id: &str) -> Result<Vec<String>, StoreError> {
        let id = id.to_string();
        self.reads
            .read(move |conn| {
                let mut statement = conn.prepare_cached(
                    "SELECT external_id FROM exec_approval_message WHERE request_id = ?1 \
                     ORDER BY external_id",
                )?;
                let found = statement
                    .query_map(params![id], |row| row.get(0))?
                    .collect::<Result<Vec<String>, _>>()?;
                Ok(found)
            })
            .await
    }

    pub(super) async fn find_by_message_external_id(
        &self,
        external: &str,
    ) -> Result<Option<Record>, StoreError> {
        let external = external.to_string();
        self.reads
            .read(move |conn| {
                first_request(
                    conn,
                    "WHERE id = (SELECT request_id FROM exec_approval_message WHERE external_id = ?1)",
                    params![external],
                )
            })
            .await
    }

    pub(super) async fn find_by_message_range(
        &self,
        from: &str,
        to: &str,
    ) -> Result<Vec<Record>, StoreError> {
        let (from, to) = (from.to_string(), to.to_string());
        self.reads
            .read(move |conn| {
                requests(
                    conn,
                    "WHERE id IN (SELECT request_id FROM exec_approval_message \
                     WHERE external_id >= ?1 AND external_id < ?2) ORDER BY created_at, id",
                    params![from, to],
                )
            })
            .await
    }

    pub(super) async fn list_rules(&self) -> Result<Vec<Rule>, StoreError> {
        self.reads
            .read(|conn| {
                let sql = format!("SELECT {RULE_COLUMNS} FROM exec_allowlist ORDER BY id");
                let mut statement = conn.prepare_cached(&sql)?;
                let mut found = statement.query([])?;
                let mut rules = Vec::new();
                while let Some(row) = found.next()? {
                    rules.push(rows::rule(row)?);
                }
                Ok(rules)
            })
            .await
    }

    /// Adds a rule. A rule with the same agent, session, kind and pattern is returned
    /// instead of duplicated, living as long as the longer of the two asks (an expired
    /// or time-boxed rule granted again for longer is renewed; a kept rule is never made
    /// to expire, nor one kept across restarts made to end with this run).
    pub(super) async fn add_rule(
        &self,
        rule: NewRule,
        now: DateTime<Utc>,
    ) -> Result<Rule, StoreError> {
        self.writer
            .write(writes::AddRule {
                scope: self.scope(),
                rule,
                now,
            })
            .await
    }

    /// Removes the rules that were to last only until the daemon stopped (`memory`), at
    /// start. Returns how many.
    pub(super) async fn forget_memory_rules(
        &self,
        now: DateTime<Utc>,
    ) -> Result<usize, StoreError> {
        self.writer
            .write(writes::ForgetMemoryRules {
                scope: self.scope(),
                now,
            })
            .await
    }

    /// Returns false when no rule had that id.
    pub(super) async fn remove_rule(
        &self,
        id: i64,
        actor: Actor,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.writer
            .write(writes::RemoveRule {
                scope: self.scope(),
                id,
                actor,
                now,
            })
            .await
    }

    pub(super) async fn expire_rules(&self, now: DateTime<Utc>) -> Result<usize, StoreError> {
        self.writer
            .write(writes::ExpireRules {
                scope: self.scope(),
                now,
            })
            .await
    }

    pub(super) async fn rule_events(
        &self,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<RuleEvent>, StoreError> {
        self.reads
            .read(move |conn| chain::rule_events(conn, limit, before))
            .await
    }

    pub(super) async fn rule_events_after(&self, after: i64) -> Result<Vec<RuleEvent>, StoreError> {
        self.reads
            .read(move |conn| chain::rule_events_after(conn, after))
            .await
    }

    pub(super) async fn audit_head(&self) -> Result<Option<Entry>, StoreError> {
        let node = self.node.clone();
        self.reads.read(move |conn| chain::head(conn, &node)).await
    }

    pub(super) async fn audit_adopt(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        self.writer
            .write(writes::Adopt {
                scope: self.scope(),
                now,
            })
            .await
    }

    pub(super) async fn audit_verify(&self, head: Option<String>) -> Result<Report, StoreError> {
        self.reads
            .read(move |conn| chain::verify(conn, head.as_deref()))
            .await
    }

    pub(super) async fn audit_segment(
        &self,
        why: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.writer
            .write(writes::Segment {
                scope: self.scope(),
                why: why.to_string(),
                now,
            })
            .await
    }

    pub(super) async fn audit_entries(
        &self,
        after: Option<(String, i64)>,
        limit: u32,
    ) -> Result<Vec<Exported>, StoreError> {
        self.reads
            .read(move |conn| chain::entries(conn, after, limit))
            .await
    }

    pub(super) async fn state(&self, key: &str) -> Result<Option<String>, StoreError> {
        let key = key.to_string();
        self.reads
            .read(move |conn| {
                let mut statement =
                    conn.prepare_cached("SELECT value FROM exec_state WHERE key = ?1")?;
                let mut found = statement.query(params![key])?;
                Ok(match found.next()? {
                    Some(row) => Some(row.get(0)?),
                    None => None,
                })
            })
            .await
    }

    pub(super) async fn set_state(&self, key: &str, value: &str) -> Result<(), StoreError> {
        let write = writes::SetState {
            key: key.to_string(),
            value: value.to_string(),
        };
        self.writer.write(write).await
    }
}

/// `SELECT <every request column> FROM exec_approval <tail>`.
fn select_requests(tail: &str) -> String {
    format!("SELECT {REQUEST_COLUMNS} FROM exec_approval {tail}")
}

/// The requests `tail` selects, in its order.
fn requests(
    conn: &Connection,
    tail: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<Record>, StoreError> {
    let mut statement = conn.prepare_cached(&select_requests(tail))?;
    let mut found = statement.query(params)?;
    let mut records = Vec::new();
    while let Some(row) = found.next()? {
        records.push(rows::request(row)?);
    }
    Ok(records)
}

/// The one request `tail` selects (by a unique key, or with `LIMIT 1`).
fn first_request(
    conn: &Connection,
    tail: &str,
    params: impl rusqlite::Params,
) -> Result<Option<Record>, StoreError> {
    Ok(requests(conn, tail, params)?.into_iter().next())
}
