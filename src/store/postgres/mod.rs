//! The store on PostgreSQL, through sqlx: one database shared by the daemons of many
//! hosts, each writing as its own `node`.
//!
//! - `migrate`: the schema (`migrations/postgres/`) brought up to date at connect, one
//!   node at a time.
//! - `rows`: rows decoded into records and rules.
//! - `chain`: the audit chain, one per node, and rule events.
//! - `usage`: the allowlist's use, counted in memory and written in sums (a rule's row is
//!   not locked by every decision it makes).
//! - [`cluster`]: what the nodes coordinate through: notifications, heartbeats, the chat
//!   leader's lock.
//!
//! Every write is one statement where it can be (PostgreSQL then commits it on its own,
//! with one round trip), and a change other nodes must hear of sends its notification
//! (`pg_notify`) in the same transaction, so that it is delivered exactly when the change
//! commits. PostgreSQL is the only coordinator: no node trusts its own memory of another.

mod chain;
pub mod cluster;
mod migrate;
mod rows;
mod usage;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx_core::arguments::Arguments;
use sqlx_core::query::query;
use sqlx_core::row::Row as _;
use sqlx_postgres::{PgArguments, PgConnectOptions, PgPool, PgPoolOptions};

use super::{
    Actor, NewRequest, NewRule, RequestFilter, Resolution, SHORT_ID_QUARANTINE, StoreError,
    random_short_id,
};
use crate::config::PostgresUrl;
use crate::model::{Confine, Decision, ExecResult, Record, Rule, RuleChange, RuleEvent, Status};
use crate::store::audit::Scope;
use crate::store::audit::{Entry, EntryKind, Exported, Report};
use chain::Tx;
use rows::{REQUEST_COLUMNS, RULE_COLUMNS};

/// The channel every node listens on (see [`cluster::Notice`]).
pub(crate) const CHANNEL: &str = "execgate";

/// How the pool behaves.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long a request waits for a connection before it fails (closed, with 503).
    pub acquire_timeout: Duration,
    /// Connections this node keeps at most.
    pub max_connections: u32,
}

#[derive(Clone, Debug)]
pub struct PgStore {
    pool: PgPool,
    node: Arc<str>,
    usage: Arc<usage::Usage>,
    /// For the connections that are not the pool's: the leader's lock and the listener.
    connect: PgConnectOptions,
    /// Whether writes are chained (`audit.chain`).
    chain: bool,
}

impl PgStore {
    pub(super) async fn connect(
        url: &PostgresUrl,
        node: &str,
        options: Options,
    ) -> Result<PgStore, StoreError> {
        let connect =
            PgConnectOptions::from_str(url.expose())?.application_name(&format!("execgate {node}"));
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections)
            .acquire_timeout(options.acquire_timeout)
            // Not checked out: a connection the server dropped is found out by the
            // query that uses it, which fails (closed) and is retried by nobody.
            .test_before_acquire(false)
            .connect_with(connect.clone())
            .await?;
        migrate::run(&pool).await?;
        let usage = Arc::new(usage::Usage::default());
        tokio::spawn(usage::flush_until_closed(Arc::clone(&usage), pool.clone()));
        Ok(PgStore {
            pool,
            node: node.into(),
            usage,
            connect,
            chain: true,
        })
    }

    /// The same store, its writes chained or not from now on.
    pub(super) fn with_chain(mut self, on: bool) -> PgStore {
        self.chain = on;
        self
    }

    fn scope(&self) -> Scope {
        Scope {
            node: self.node.clone(),
            chain: self.chain,
        }
    }

    pub(super) fn node(&self) -> &str {
        &self.node
    }

    pub(super) async fn close(&self) {
        if let Err(e) = self.usage.flush(&self.pool).await {
            tracing::warn!(error = %e, "the allowlist's last uses could not be written");
        }
        self.pool.close().await;
    }

    pub(super) async fn insert_decided(
        &self,
        new: NewRequest,
        resolution: Resolution,
        error: Option<String>,
        rules_used: Vec<i64>,
    ) -> Result<Record, StoreError> {
        // No human sees this id, so it need not be unique; lookups prefer pending rows.
        let short_id = random_short_id();
        let row = RowValues {
            short_id: &short_id,
            status: resolution.status,
            resolution: Some(&resolution),
            error: error.as_deref(),
            expires_at: None,
            asked: false,
        };
        let insert =
            sqlx_core::query::query_with(INSERT_REQUEST, request_args(&new, &row, &self.node));
        if self.chain {
            let scope = self.scope();
            let mut tx = chain::begin(&self.pool, &scope).await?;
            insert.execute(&mut *tx).await?;
            chain::append(
                &mut tx,
                &scope,
                EntryKind::Decided,
                &new.id,
                resolution.resolved_at,
            )
            .await?;
            tx.commit().await?;
        } else {
            insert.execute(&self.pool).await?;
        }
        // Counted once the request is recorded (see `usage`).
        self.usage.note(
            &rules_used,
            resolution.resolved_at,
            &new.spec.command.display(),
        );
        Ok(new.record(
            &short_id,
            Some(&resolution),
            error.as_deref(),
            None,
            &self.node,
        ))
    }

    pub(super) async fn insert_pending(
        &self,
        new: NewRequest,
        expires_at: DateTime<Utc>,
    ) -> Result<Record, StoreError> {
        let cutoff = new.created_at - SHORT_ID_QUARANTINE;
        // Taken: held by a pending request on any node (the unique index says so, even
        // against a node inserting the same id at this moment), or shown to a human in
        // the last day.
        let sql = format!(
            "WITH ins AS ({INSERT_REQUEST_SELECT} WHERE NOT EXISTS (SELECT 1 FROM exec_approval \
             WHERE asked AND shown AND short_id = $2 AND created_at > $35) \
             ON CONFLICT (short_id) WHERE status = 'pending' DO NOTHING RETURNING id) \
             SELECT ins.id FROM ins CROSS JOIN LATERAL pg_notify('{CHANNEL}', 'pending ' || $30 || ' ' || ins.id) AS n"
        );
        for _ in 0..64 {
            let short_id = random_short_id();
            let row = RowValues {
                short_id: &short_id,
                status: Status::Pending,
                resolution: None,
                error: None,
                expires_at: Some(expires_at),
                asked: true,
            };
            let mut args = request_args(&new, &row, &self.node);
            add(&mut args, cutoff);
            let insert = sqlx_core::query::query_with(&sql, args);
            let inserted = match self.chain {
                true => {
                    let scope = self.scope();
                    let mut tx = chain::begin(&self.pool, &scope).await?;
                    let inserted = insert.fetch_optional(&mut *tx).await?.is_some();
                    if inserted {
                        chain::append(&mut tx, &scope, EntryKind::Request, &new.id, new.created_at)
                            .await?;
                        tx.commit().await?;
                    }
                    inserted
                }
                false => insert.fetch_optional(&self.pool).await?.is_some(),
            };
            if inserted {
                return Ok(new.record(&short_id, None, None, Some(expires_at), &self.node));
            }
        }
        Err(StoreError::ShortIdsExhausted)
    }

    pub(super) async fn resolve(
        &self,
        id: &str,
        r: Resolution,
        error: Option<String>,
        always_rule: Option<NewRule>,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "WITH done AS (UPDATE exec_approval SET status = $1, decision = $2, via = $3, decided_by = $4, \
             resolved_at = $5, error = $6, shown = shown OR $8, rule_expires_at = $9 \
             WHERE id = $7 AND status = 'pending' RETURNING id) \
             SELECT done.id FROM done CROSS JOIN LATERAL pg_notify('{CHANNEL}', 'resolved ' || $10 || ' ' || done.id) AS n"
        );
        let transition = query(&sql)
            .bind(r.status.as_str())
            .bind(r.decision.map(Decision::as_str))
            .bind(r.via.as_str())
            .bind(r.decided_by.as_deref())
            .bind(r.resolved_at)
            .bind(error.as_deref())
            .bind(id)
            .bind(r.shown)
            .bind(always_rule.as_ref().and_then(|rule| rule.expires_at))
            .bind(&*self.node);
        if always_rule.is_none() && !self.chain {
            // One statement, its own transaction.
            return Ok(transition.fetch_optional(&self.pool).await?.is_some());
        }
        // Only the winner of the transition stores the rule, in the same transaction.
        let scope = self.scope();
        let mut tx = chain::begin(&self.pool, &scope).await?;
        let done = transition.fetch_optional(&mut *tx).await?.is_some();
        if done {
            chain::append(&mut tx, &scope, EntryKind::Resolution, id, r.resolved_at).await?;
            if let Some(rule) = &always_rule {
                insert_rule(&mut tx, rule, r.resolved_at, &scope).await?;
                notify_rules(&mut tx, &self.node).await?;
            }
        }
        tx.commit().await?;
        Ok(done)
    }

    /// This node's requests only: the others' agents may still be waiting.
    pub(super) async fn sweep_pending(
        &self,
        r: Resolution,
        error: &str,
    ) -> Result<Vec<String>, StoreError> {
        let sql = format!(
            "WITH s AS (UPDATE exec_approval SET status = $1, decision = NULL, via = $2, decided_by = NULL, \
             resolved_at = $3, error = $4, shown = shown OR $5 WHERE status = 'pending' AND node = $6 \
             RETURNING id) \
             SELECT s.id FROM s CROSS JOIN LATERAL pg_notify('{CHANNEL}', 'resolved ' || $6 || ' ' || s.id) AS n"
        );
        let scope = self.scope();
        let mut tx = chain::begin(&self.pool, &scope).await?;
        let rows = query(&sql)
            .bind(r.status.as_str())
            .bind(r.via.as_str())
            .bind(r.resolved_at)
            .bind(error)
            .bind(r.shown)
            .bind(&*self.node)
            .fetch_all(&mut *tx)
            .await?;
        let ids = first_column(&rows)?;
        for id in &ids {
            chain::append(&mut tx, &scope, EntryKind::Resolution, id, r.resolved_at).await?;
        }
        tx.commit().await?;
        Ok(ids)
    }

    pub(super) async fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        let sql = format!("SELECT {REQUEST_COLUMNS} FROM exec_approval WHERE id = $1");
        let row = query(&sql).bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(rows::request).transpose()
    }

    pub(super) async fn find(&self, id_or_short: &str) -> Result<Option<Record>, StoreError> {
        if id_or_short.len() != 4 {
            return self.get(id_or_short).await;
        }
        let sql = format!(
            "SELECT {REQUEST_COLUMNS} FROM exec_approval WHERE asked AND short_id = lower($1) \
             ORDER BY (status = 'pending') DESC, created_at DESC, id DESC LIMIT 1"
        );
        let row = query(&sql)
            .bind(id_or_short)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(rows::request).transpose()
    }

    pub(super) async fn list(&self, filter: &RequestFilter) -> Result<Vec<Record>, StoreError> {
        let mut conditions = Vec::new();
        let mut args = PgArguments::default();
        add(&mut args, i64::from(filter.limit));
        if let Some(agent) = &filter.agent {
            add(&mut args, agent.clone());
            conditions.push(format!("agent_id = ${}", args.len()));
        }
        if let Some(status) = filter.status {
            add(&mut args, status.as_str());
            conditions.push(format!("status = ${}", args.len()));
        }
        if let Some(before) = &filter.before {
            add(&mut args, before.clone());
            let n = args.len();
            conditions.push(format!(
                "(created_at, id) < (SELECT created_at, id FROM exec_approval WHERE id = ${n})"
            ));
        }
        let filters = match conditions.is_empty() {
            true => String::new(),
            false => format!("WHERE {} ", conditions.join(" AND ")),
        };
        let sql = format!(
            "SELECT {REQUEST_COLUMNS} FROM exec_approval {filters}ORDER BY created_at DESC, id DESC LIMIT $1"
        );
        let found = sqlx_core::query::query_with(&sql, args)
            .fetch_all(&self.pool)
            .await?;
        found.iter().map(rows::request).collect()
    }

    pub(super) async fn ping(&self) -> Result<(), StoreError> {
        query("SELECT 1 FROM exec_approval LIMIT 1")
            .fetch_optional(&self.pool)
            .await?;
        Ok(())
    }

    pub(super) async fn record_result(
        &self,
        id: &str,
        result: &ExecResult,
    ) -> Result<(), StoreError> {
        let big = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        query(
            "UPDATE exec_approval SET exit_code = $1, signal = $2, timed_out = $3, duration_ms = $4, \
             stdout_bytes = $5, stderr_bytes = $6, kernel_refused = $7, \
             confinement = coalesce($8, confinement) WHERE id = $9",
        )
        .bind(result.exit_code.map(i64::from))
        .bind(result.signal.map(i64::from))
        .bind(result.timed_out)
        .bind(big(result.duration_ms))
        .bind(big(result.stdout_bytes))
        .bind(big(result.stderr_bytes))
        .bind(crate::store::decode::kernel_refused(result))
        .bind(result.confinement.map(Confine::as_str))
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(super) async fn set_message_external_id(
        &self,
        id: &str,
        external: &str,
    ) -> Result<(), StoreError> {
        // The request's own column keeps the first message, as listings show it.
        query(
            "WITH m AS (INSERT INTO exec_approval_message (external_id, request_id) VALUES ($1, $2) \
             ON CONFLICT (external_id) DO UPDATE SET request_id = excluded.request_id) \
             UPDATE exec_approval SET message_external_id = $1 \
             WHERE id = $2 AND message_external_id IS NULL",
        )
        .bind(external)
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(super) async fn mark_shown(&self, ids: Vec<String>) -> Result<(), StoreError> {
        query("UPDATE exec_approval SET shown = true WHERE id = ANY($1) AND asked AND NOT shown")
            .bind(ids)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub(super) async fn message_external_ids(&self, id: &str) -> Result<Vec<String>, StoreError> {
        let found = query(
            "SELECT external_id FROM exec_approval_message WHERE request_id = $1 ORDER BY external_id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        first_column(&found)
    }

    pub(super) async fn find_by_message_external_id(
        &self,
        external: &str,
    ) -> Result<Option<Record>, StoreError> {
        let sql = format!(
            "SELECT {REQUEST_COLUMNS} FROM exec_approval WHERE id = \
             (SELECT request_id FROM exec_approval_message WHERE external_id = $1)"
        );
        let row = query(&sql)
            .bind(external)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(rows::request).transpose()
    }

    pub(super) async fn find_by_message_range(
        &self,
        from: &str,
        to: &str,
    ) -> Result<Vec<Record>, StoreError> {
        // `COLLATE "C"`: byte order, as the range was drawn, whatever the database's locale.
        let sql = format!(
            "SELECT {REQUEST_COLUMNS} FROM exec_approval WHERE id IN \
             (SELECT request_id FROM exec_approval_message \
             WHERE external_id COLLATE \"C\" >= $1 AND external_id COLLATE \"C\" < $2) \
             ORDER BY created_at, id"
        );
        let found = query(&sql)
            .bind(from)
            .bind(to)
            .fetch_all(&self.pool)
            .await?;
        found.iter().map(rows::request).collect()
    }

    pub(super) async fn list_rules(&self) -> Result<Vec<Rule>, StoreError> {
        // This node's uses first, so that what it lists counts them.
        self.usage.flush(&self.pool).await?;
        let sql = format!("SELECT {RULE_COLUMNS} FROM exec_allowlist ORDER BY id");
        let found = query(&sql).fetch_all(&self.pool).await?;
        found.iter().map(rows::rule).collect()
    }

    pub(super) async fn add_rule(
        &self,
        rule: NewRule,
        now: DateTime<Utc>,
    ) -> Result<Rule, StoreError> {
        let scope = self.scope();
        let mut tx = chain::begin(&self.pool, &scope).await?;
        let id = insert_rule(&mut tx, &rule, now, &scope).await?;
        let sql = format!("SELECT {RULE_COLUMNS} FROM exec_allowlist WHERE id = $1");
        let stored = query(&sql).bind(id).fetch_one(&mut *tx).await?;
        let stored = rows::rule(&stored)?;
        notify_rules(&mut tx, &self.node).await?;
        tx.commit().await?;
        Ok(stored)
    }

    /// The memory rules this node's grants saved: they lasted as long as its last run.
    pub(super) async fn forget_memory_rules(
        &self,
        now: DateTime<Utc>,
    ) -> Result<usize, StoreError> {
        let scope = self.scope();
        let mut tx = chain::begin(&self.pool, &scope).await?;
        let ids: Vec<i64> = query(
            "SELECT id FROM exec_allowlist WHERE memory AND node = $1 ORDER BY id FOR UPDATE",
        )
        .bind(&*self.node)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()?;
        let gone = remove_rules(&mut tx, &scope, &ids, &Actor::restart(), now).await?;
        if gone > 0 {
            notify_rules(&mut tx, &self.node).await?;
        }
        tx.commit().await?;
        Ok(gone)
    }

    pub(super) async fn remove_rule(
        &self,
        id: i64,
        actor: Actor,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let scope = self.scope();
        let mut tx = chain::begin(&self.pool, &scope).await?;
        let gone = remove_rules(&mut tx, &scope, &[id], &actor, now).await?;
        if gone > 0 {
            notify_rules(&mut tx, &self.node).await?;
        }
        tx.commit().await?;
        Ok(gone == 1)
    }

    pub(super) async fn expire_rules(&self, now: DateTime<Utc>) -> Result<usize, StoreError> {
        chain::expire_rules(&self.pool, &self.scope(), now).await
    }

    pub(super) async fn rule_events(
        &self,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<RuleEvent>, StoreError> {
        chain::rule_events(&self.pool, limit, before).await
    }

    pub(super) async fn rule_events_after(&self, after: i64) -> Result<Vec<RuleEvent>, StoreError> {
        chain::rule_events_after(&self.pool, after).await
    }

    pub(super) async fn audit_head(&self) -> Result<Option<Entry>, StoreError> {
        chain::head(&self.pool, &self.node).await
    }

    pub(super) async fn audit_adopt(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        chain::adopt(&self.pool, &self.scope(), now).await
    }

    pub(super) async fn audit_verify(&self, head: Option<String>) -> Result<Report, StoreError> {
        chain::verify(&self.pool, head.as_deref()).await
    }

    pub(super) async fn audit_segment(
        &self,
        why: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let scope = self.scope();
        let mut tx = chain::begin(&self.pool, &scope).await?;
        chain::append(&mut tx, &scope, EntryKind::Segment, why, now).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn audit_entries(
        &self,
        after: Option<(String, i64)>,
        limit: u32,
    ) -> Result<Vec<Exported>, StoreError> {
        chain::entries(&self.pool, after, limit).await
    }

    pub(super) async fn state(&self, key: &str) -> Result<Option<String>, StoreError> {
        let row = query("SELECT value FROM exec_state WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.try_get::<String, _>(0)).transpose()?)
    }

    pub(super) async fn set_state(&self, key: &str, value: &str) -> Result<(), StoreError> {
        query(
            "INSERT INTO exec_state (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

/// Every column a request row is inserted with, `$1` to `$34` in this order (see
/// [`request_args`]).
macro_rules! request_insert_columns {
    () => {
        "id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, risk_reasons, status, \
         decision, via, decided_by, error, created_at, expires_at, resolved_at, asked, shown, peer_uid, \
         peer_pid, run, input_bytes, input_sha256, input_head, tool_name, tool_input, front, node, \
         grant_pattern, grant_kind, grant_refused, confinement"
    };
}

/// The 34 values, as a row and as a `SELECT` (for an insert with a condition).
macro_rules! request_values {
    () => {
        "$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
         $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34"
    };
}

const INSERT_REQUEST: &str = concat!(
    "INSERT INTO exec_approval (",
    request_insert_columns!(),
    ") VALUES (",
    request_values!(),
    ")"
);

const INSERT_REQUEST_SELECT: &str = concat!(
    "INSERT INTO exec_approval (",
    request_insert_columns!(),
    ") SELECT ",
    request_values!()
);

/// What a request's row holds beyond the request itself.
struct RowValues<'a> {
    short_id: &'a str,
    status: Status,
    resolution: Option<&'a Resolution>,
    error: Option<&'a str>,
    expires_at: Option<DateTime<Utc>>,
    asked: bool,
}

fn add<'q, T>(args: &mut PgArguments, value: T)
where
    T: sqlx_core::encode::Encode<'q, sqlx_postgres::Postgres>
        + sqlx_core::types::Type<sqlx_postgres::Postgres>
        + 'q,
{
    // Encoding our own values into a buffer cannot fail (no custom encoders here).
    args.add(value).expect("a value encodes");
}

/// The 34 values of `request_insert_columns!`, in order.
fn request_args(new: &NewRequest, row: &RowValues<'_>, node: &str) -> PgArguments {
    let spec = &new.spec;
    let argv = spec
        .command
        .argv()
        .map(|a| serde_json::to_string(a).expect("strings serialise"));
    let tool = spec.command.tool();
    let big = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let resolution = row.resolution;
    let grant = new.grant.as_ref();
    let mut args = PgArguments::default();
    add(&mut args, new.id.clone());
    add(&mut args, row.short_id.to_string());
    add(&mut args, spec.agent.as_str().to_string());
    add(&mut args, spec.session.clone());
    add(&mut args, spec.command.line().map(str::to_string));
    add(&mut args, argv);
    add(&mut args, spec.cwd.clone());
    add(&mut args, spec.reason.clone());
    add(&mut args, new.risk.as_str());
    add(
        &mut args,
        serde_json::to_string(&new.risk_reasons).expect("strings serialise"),
    );
    add(&mut args, row.status.as_str());
    add(
        &mut args,
        resolution.and_then(|r| r.decision).map(Decision::as_str),
    );
    add(&mut args, resolution.map(|r| r.via.as_str()));
    add(&mut args, resolution.and_then(|r| r.decided_by.clone()));
    add(&mut args, row.error.map(str::to_string));
    add(&mut args, new.created_at);
    add(&mut args, row.expires_at);
    add(&mut args, resolution.map(|r| r.resolved_at));
    add(&mut args, row.asked);
    // A request decided at once was never shown; one asked is shown when posted.
    add(&mut args, false);
    add(&mut args, spec.peer_uid.map(i64::from));
    add(&mut args, spec.peer_pid.map(i64::from));
    add(&mut args, spec.run);
    add(&mut args, spec.input.as_ref().map(|i| big(i.bytes)));
    add(&mut args, spec.input.as_ref().map(|i| i.sha256.clone()));
    add(&mut args, spec.input.as_ref().map(|i| i.head.clone()));
    add(&mut args, tool.map(|t| t.name.clone()));
    add(&mut args, tool.map(|t| t.input.to_string()));
    add(&mut args, spec.front.clone());
    add(&mut args, node.to_string());
    add(&mut args, grant.map(|g| g.pattern.clone()));
    add(&mut args, grant.map(|g| g.kind.as_str()));
    add(&mut args, grant.and_then(|g| g.refused.clone()));
    add(&mut args, new.confinement.map(Confine::as_str));
    args
}

/// Inserts a rule, or lengthens the identical one (same agent, session, kind and
/// pattern) to live as long as the longer of the two: no expiry beats any, a later
/// expiry beats an earlier, and a rule kept across restarts stays kept. Either is
/// recorded as a rule event (added, renewed). Returns the rule's id.
async fn insert_rule(
    tx: &mut Tx<'_>,
    rule: &NewRule,
    now: DateTime<Utc>,
    scope: &Scope,
) -> Result<i64, StoreError> {
    // `xmax = 0`: the row version this statement wrote is a new row, not an update.
    let row = query(
        "INSERT INTO exec_allowlist \
         (agent_id, session_id, pattern, kind, created_at, created_by, expires_at, source_request_id, memory, node) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (coalesce(agent_id, ''), coalesce(session_id, ''), kind, pattern) DO UPDATE SET \
             expires_at = CASE WHEN exec_allowlist.expires_at IS NULL OR excluded.expires_at IS NULL THEN NULL \
                               ELSE greatest(exec_allowlist.expires_at, excluded.expires_at) END, \
             memory = exec_allowlist.memory AND excluded.memory \
         RETURNING id, xmax = 0",
    )
    .bind(rule.agent.as_deref())
    .bind(rule.session.as_deref())
    .bind(&rule.pattern)
    .bind(rule.kind.as_str())
    .bind(now)
    .bind(&rule.created_by)
    .bind(rule.expires_at)
    .bind(rule.source_request.as_deref())
    .bind(rule.memory)
    .bind(&*scope.node)
    .fetch_one(&mut **tx)
    .await?;
    let (id, added): (i64, bool) = (row.try_get(0)?, row.try_get(1)?);
    let change = match added {
        true => RuleChange::Added,
        false => RuleChange::Renewed,
    };
    chain::rule_event(tx, scope, id, change, now, &rule.actor()).await?;
    Ok(id)
}

/// Deletes rules, recording each removal (as the rule was) first; answers how many
/// existed.
async fn remove_rules(
    tx: &mut Tx<'_>,
    scope: &Scope,
    ids: &[i64],
    actor: &Actor,
    now: DateTime<Utc>,
) -> Result<usize, StoreError> {
    let mut removed = 0;
    for id in ids {
        let exists = query("SELECT 1 FROM exec_allowlist WHERE id = $1 FOR UPDATE")
            .bind(id)
            .fetch_optional(&mut **tx)
            .await?
            .is_some();
        if !exists {
            continue;
        }
        chain::rule_event(tx, scope, *id, RuleChange::Removed, now, actor).await?;
        query("DELETE FROM exec_allowlist WHERE id = $1")
            .bind(id)
            .execute(&mut **tx)
            .await?;
        removed += 1;
    }
    Ok(removed)
}

/// The first column of every row, as text (ids, message ids).
pub(super) fn first_column(rows: &[sqlx_postgres::PgRow]) -> Result<Vec<String>, StoreError> {
    Ok(rows
        .iter()
        .map(|row| row.try_get::<String, _>(0))
        .collect::<Result<_, _>>()?)
}

/// Tells every node, once the transaction commits, that the allowlist changed.
async fn notify_rules(
    tx: &mut sqlx_core::transaction::Transaction<'_, sqlx_postgres::Postgres>,
    node: &str,
) -> Result<(), StoreError> {
    query("SELECT pg_notify($1, 'rules ' || $2)")
        .bind(CHANNEL)
        .bind(node)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
