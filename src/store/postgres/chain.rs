//! The audit chain on PostgreSQL (`store::audit` says what it is): one chain per node.
//!
//! Each node appends to its own chain under a transaction-level advisory lock of its
//! own, taken first in every chained transaction (so no transaction holds a row while it
//! waits for the lock, and none holds the lock while it waits for a row another holds
//! that wants it). One chain for all nodes would make every write of every host wait on
//! one lock; per node, hosts never wait on each other, and each node's log anchors the
//! chain it writes. A request resolved on another node is vouched for by that node's
//! chain: `verify` checks every chain, and that every row is vouched for once.

use chrono::{DateTime, Utc};
use sqlx_core::query::query;
use sqlx_core::row::Row as _;
use sqlx_postgres::{PgPool, PgRow, Postgres};

use crate::model::{RuleChange, RuleEvent};
use crate::store::audit::{
    self, Column, Entry, EntryKind, Exported, Report, Scope, Value, Verifier,
};
use crate::store::{Actor, StoreError, ts};

pub(super) type Tx<'c> = sqlx_core::transaction::Transaction<'c, Postgres>;

/// The advisory lock that serialises the expiry of rules, and the chain's beginning,
/// across nodes: execgate's constant after the migrations' (`…01`) and the chat leader's
/// (`…02`).
const EXPIRY_LOCK: i64 = 0x6578_6563_6761_7403;

/// A transaction for a chained write: this node's chain lock taken first (none when the
/// chain is off).
pub(super) async fn begin<'c>(pool: &'c PgPool, scope: &Scope) -> Result<Tx<'c>, StoreError> {
    let mut tx = pool.begin().await?;
    if scope.chain {
        query("SELECT pg_advisory_xact_lock(hashtextextended('execgate audit ' || $1, 0))")
            .bind(&*scope.node)
            .execute(&mut *tx)
            .await?;
    }
    Ok(tx)
}

/// The subject's chained columns as they read now; `None` when the row is gone.
async fn subject<'e, E>(
    executor: E,
    kind: EntryKind,
    subject: &str,
) -> Result<Option<Vec<Value>>, StoreError>
where
    E: sqlx_core::executor::Executor<'e, Database = Postgres>,
{
    let Some((table, columns)) = kind.subject() else {
        return Ok(None);
    };
    let names: Vec<&str> = columns.iter().map(|c| c.name()).collect();
    let sql = format!(
        "SELECT {} FROM {table} WHERE {} = $1",
        names.join(", "),
        columns[0].name()
    );
    let row = match kind {
        EntryKind::Rule => match subject.parse::<i64>() {
            Ok(id) => query(&sql).bind(id).fetch_optional(executor).await?,
            Err(_) => None,
        },
        _ => query(&sql).bind(subject).fetch_optional(executor).await?,
    };
    row.map(|row| values(&row, &columns)).transpose()
}

/// A row's chained columns, each in the one shape SQLite reads it in.
fn values(row: &PgRow, columns: &[Column]) -> Result<Vec<Value>, StoreError> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            Ok(match c {
                Column::Text(_) => row
                    .try_get::<Option<String>, _>(i)?
                    .map_or(Value::Null, Value::Text),
                Column::Int(_) => row
                    .try_get::<Option<i64>, _>(i)?
                    .map_or(Value::Null, Value::Int),
                Column::Bool(_) => row
                    .try_get::<Option<bool>, _>(i)?
                    .map_or(Value::Null, |b| Value::Int(i64::from(b))),
                Column::Time(_) => row
                    .try_get::<Option<DateTime<Utc>>, _>(i)?
                    .map_or(Value::Null, |t| Value::Text(ts(t))),
            })
        })
        .collect()
}

const ENTRY_COLUMNS: &str = "node, seq, at, kind, subject, digest, prev, hash";

fn entry(row: &PgRow) -> Result<Entry, StoreError> {
    let kind: String = row.try_get(3)?;
    Ok(Entry {
        node: row.try_get(0)?,
        seq: row.try_get(1)?,
        at: ts(row.try_get::<DateTime<Utc>, _>(2)?),
        kind: EntryKind::parse(&kind).ok_or_else(|| StoreError::Corrupt {
            id: "audit entry".into(),
            what: format!("unknown kind {kind:?}"),
        })?,
        subject: row.try_get(4)?,
        digest: row.try_get(5)?,
        prev: row.try_get(6)?,
        hash: row.try_get(7)?,
    })
}

/// `node`'s last entry.
pub(super) async fn head<'e, E>(executor: E, node: &str) -> Result<Option<Entry>, StoreError>
where
    E: sqlx_core::executor::Executor<'e, Database = Postgres>,
{
    let sql =
        format!("SELECT {ENTRY_COLUMNS} FROM exec_audit WHERE node = $1 ORDER BY seq DESC LIMIT 1");
    query(&sql)
        .bind(node)
        .fetch_optional(executor)
        .await?
        .map(|r| entry(&r))
        .transpose()
}

/// Appends an entry vouching for `subject_id` as it reads now, inside `tx` (begun with
/// [`begin`]). Nothing when the chain is off.
pub(super) async fn append(
    tx: &mut Tx<'_>,
    scope: &Scope,
    kind: EntryKind,
    subject_id: &str,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    if !scope.chain {
        return Ok(());
    }
    let last = head(&mut **tx, &scope.node).await?;
    append_after(tx, scope, last.as_ref(), kind, subject_id, at)
        .await
        .map(drop)
}

/// [`append`] after `last`, the chain's head as the caller knows it; returns the new
/// head.
async fn append_after(
    tx: &mut Tx<'_>,
    scope: &Scope,
    last: Option<&Entry>,
    kind: EntryKind,
    subject_id: &str,
    at: DateTime<Utc>,
) -> Result<Entry, StoreError> {
    let values = subject(&mut **tx, kind, subject_id).await?;
    let digest = audit::digest_for(kind, subject_id, values)?;
    let entry = Entry::next(&scope.node, last, ts(at), kind, subject_id, digest);
    query(
        "INSERT INTO exec_audit (node, seq, at, kind, subject, digest, prev, hash) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&entry.node)
    .bind(entry.seq)
    .bind(at)
    .bind(entry.kind.as_str())
    .bind(&entry.subject)
    .bind(&entry.digest)
    .bind(&entry.prev)
    .bind(&entry.hash)
    .execute(&mut **tx)
    .await?;
    Ok(entry)
}

/// Records a change to rule `rule_id` (as its row reads now, or before a removal) and
/// chains it.
pub(super) async fn rule_event(
    tx: &mut Tx<'_>,
    scope: &Scope,
    rule_id: i64,
    change: RuleChange,
    at: DateTime<Utc>,
    actor: &Actor,
) -> Result<(), StoreError> {
    let row = query(
        "INSERT INTO exec_rule_event (rule_id, event, at, actor, via, request_id, agent_id, \
         session_id, pattern, kind, expires_at, memory, node) \
         SELECT id, $2, $3, $4, $5, $6, agent_id, session_id, pattern, kind, expires_at, memory, $7 \
         FROM exec_allowlist WHERE id = $1 RETURNING id",
    )
    .bind(rule_id)
    .bind(change.as_str())
    .bind(at)
    .bind(&actor.by)
    .bind(actor.via.as_deref())
    .bind(actor.request.as_deref())
    .bind(&*scope.node)
    .fetch_optional(&mut **tx)
    .await?
    .ok_or_else(|| StoreError::Corrupt {
        id: format!("rule {rule_id}"),
        what: "not found to record its change".into(),
    })?;
    let id: i64 = row.try_get(0)?;
    append(tx, scope, EntryKind::Rule, &id.to_string(), at).await
}

/// Records the expiry of every rule due by `now` and not yet recorded as expired; one
/// node at a time, so that two never record the same expiry.
pub(super) async fn expire_rules(
    pool: &PgPool,
    scope: &Scope,
    now: DateTime<Utc>,
) -> Result<usize, StoreError> {
    let mut tx = begin(pool, scope).await?;
    query("SELECT pg_advisory_xact_lock($1)")
        .bind(EXPIRY_LOCK)
        .execute(&mut *tx)
        .await?;
    let due = query(
        "SELECT r.id, r.expires_at FROM exec_allowlist r WHERE r.expires_at <= $1 \
         AND coalesce((SELECT e.event FROM exec_rule_event e WHERE e.rule_id = r.id \
                       ORDER BY e.id DESC LIMIT 1), '') <> 'expired' ORDER BY r.expires_at, r.id",
    )
    .bind(now)
    .fetch_all(&mut *tx)
    .await?;
    for row in &due {
        let (id, at): (i64, DateTime<Utc>) = (row.try_get(0)?, row.try_get(1)?);
        rule_event(
            &mut tx,
            scope,
            id,
            RuleChange::Expired,
            at,
            &Actor::execgate(),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(due.len())
}

/// Rule events, newest first, before `before` (an event id) when given.
pub(super) async fn rule_events(
    pool: &PgPool,
    limit: u32,
    before: Option<i64>,
) -> Result<Vec<RuleEvent>, StoreError> {
    let rows = query(
        "SELECT id, rule_id, event, at, actor, via, request_id, agent_id, session_id, pattern, kind, \
         expires_at, memory, node FROM exec_rule_event WHERE id < $2 ORDER BY id DESC LIMIT $1",
    )
    .bind(i64::from(limit))
    .bind(before.unwrap_or(i64::MAX))
    .fetch_all(pool)
    .await?;
    rows.iter().map(super::rows::rule_event).collect()
}

/// Rule events after `after`, oldest first, at most a thousand.
pub(super) async fn rule_events_after(
    pool: &PgPool,
    after: i64,
) -> Result<Vec<RuleEvent>, StoreError> {
    let rows = query(
        "SELECT id, rule_id, event, at, actor, via, request_id, agent_id, session_id, pattern, kind, \
         expires_at, memory, node FROM exec_rule_event WHERE id > $1 ORDER BY id LIMIT 1000",
    )
    .bind(after)
    .fetch_all(pool)
    .await?;
    rows.iter().map(super::rows::rule_event).collect()
}

/// How many entries `verify` and `export` read at a time.
const PAGE: i64 = 1000;

/// Walks every chain, then looks for rows no entry vouches for; `head`, as logged, is
/// checked when given.
pub(super) async fn verify(pool: &PgPool, head: Option<&str>) -> Result<Report, StoreError> {
    // One snapshot for the whole walk: what commits meanwhile is neither half seen nor
    // taken for a row without its entry.
    let mut tx = pool.begin().await?;
    query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .execute(&mut *tx)
        .await?;
    let mut verifier = Verifier::new();
    let mut after = (String::new(), 0i64);
    loop {
        let page = page(&mut *tx, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = (last.node.clone(), last.seq);
        for e in page {
            let values = subject(&mut *tx, e.kind, &e.subject).await?;
            verifier.entry(e, values);
        }
    }
    for (what, sql) in audit::UNCHAINED {
        for row in query(sql).fetch_all(&mut *tx).await? {
            let id: String = row.try_get(0)?;
            verifier.unchained(format!("{what} {id}"));
        }
    }
    for row in query(audit::DUPLICATED).fetch_all(&mut *tx).await? {
        verifier.duplicated(row.try_get(0)?);
    }
    let head_entry = match head.and_then(audit::parse_anchor) {
        Some((node, seq)) => {
            let sql =
                format!("SELECT {ENTRY_COLUMNS} FROM exec_audit WHERE node = $1 AND seq = $2");
            query(&sql)
                .bind(node)
                .bind(seq)
                .fetch_optional(&mut *tx)
                .await?
                .map(|r| entry(&r))
                .transpose()?
        }
        None => None,
    };
    tx.commit().await?;
    Ok(verifier.finish(head, head_entry))
}

async fn page<'e, E>(
    executor: E,
    after: &(String, i64),
    limit: i64,
) -> Result<Vec<Entry>, StoreError>
where
    E: sqlx_core::executor::Executor<'e, Database = Postgres>,
{
    let sql = format!(
        "SELECT {ENTRY_COLUMNS} FROM exec_audit WHERE (node, seq) > ($1, $2) ORDER BY node, seq LIMIT $3"
    );
    query(&sql)
        .bind(&after.0)
        .bind(after.1)
        .bind(limit)
        .fetch_all(executor)
        .await?
        .iter()
        .map(entry)
        .collect()
}

/// A page of `audit export`.
pub(super) async fn entries(
    pool: &PgPool,
    after: Option<(String, i64)>,
    limit: u32,
) -> Result<Vec<Exported>, StoreError> {
    let after = after.unwrap_or_default();
    let mut out = Vec::new();
    for e in page(pool, &after, i64::from(limit)).await? {
        let values = subject(pool, e.kind, &e.subject).await?;
        out.push(Exported::new(e, values));
    }
    Ok(out)
}

/// At start: when no chain exists yet but rows do, vouches for them as found, after a
/// segment entry that says so (see the SQLite side). One node does it: the first to
/// take the lock finds the chain begun when the others get it.
pub(super) async fn adopt(
    pool: &PgPool,
    scope: &Scope,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    if !scope.chain {
        return Ok(0);
    }
    let mut tx = begin(pool, scope).await?;
    query("SELECT pg_advisory_xact_lock($1)")
        .bind(EXPIRY_LOCK)
        .execute(&mut *tx)
        .await?;
    let begun: bool = query("SELECT EXISTS (SELECT 1 FROM exec_audit)")
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
    if begun {
        return Ok(0);
    }
    let ids = |rows: Vec<PgRow>| -> Result<Vec<String>, StoreError> { super::first_column(&rows) };
    let requests = ids(
        query("SELECT id FROM exec_approval ORDER BY created_at, id")
            .fetch_all(&mut *tx)
            .await?,
    )?;
    let resolved = ids(query(
        "SELECT id FROM exec_approval WHERE status <> 'pending' ORDER BY resolved_at, id",
    )
    .fetch_all(&mut *tx)
    .await?)?;
    let events = ids(query("SELECT id::text FROM exec_rule_event ORDER BY id")
        .fetch_all(&mut *tx)
        .await?)?;
    let Some((why, rows)) = audit::adoption(&requests, &resolved, &events) else {
        return Ok(0);
    };
    let mut last = append_after(&mut tx, scope, None, EntryKind::Segment, &why, now).await?;
    for (kind, id) in &rows {
        last = append_after(&mut tx, scope, Some(&last), *kind, id, now).await?;
    }
    tx.commit().await?;
    Ok(rows.len() as u64 + 1)
}
