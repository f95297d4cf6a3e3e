//! The audit chain on SQLite (`store::audit` says what it is): entries appended inside
//! the writer's transactions, rule events, and the reads `verify` and `export` walk.

use chrono::{DateTime, Utc};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::model::{RuleChange, RuleEvent};
use crate::store::audit::{self, Entry, EntryKind, Exported, Report, Scope, Value, Verifier};
use crate::store::{Actor, ts};

/// The subject's chained columns as they read now; `None` when the row is gone.
fn subject(
    conn: &Connection,
    kind: EntryKind,
    subject: &str,
) -> Result<Option<Vec<Value>>, StoreError> {
    let Some((table, columns)) = kind.subject() else {
        return Ok(None);
    };
    let names: Vec<&str> = columns.iter().map(|c| c.name()).collect();
    let sql = format!(
        "SELECT {} FROM {table} WHERE {} = ?1",
        names.join(", "),
        columns[0].name()
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let key: rusqlite::types::Value = match kind {
        // A rule event's id is an integer: compared as one, as its key.
        EntryKind::Rule => match subject.parse::<i64>() {
            Ok(n) => n.into(),
            Err(_) => return Ok(None),
        },
        _ => subject.to_string().into(),
    };
    Ok(statement
        .query_row([key], |row| {
            (0..columns.len())
                .map(|i| row.get_ref(i).map(value))
                .collect::<Result<Vec<Value>, _>>()
        })
        .optional()?)
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(t) => Value::Text(t.to_string()),
            Err(_) => Value::Other(t.to_vec()),
        },
        ValueRef::Real(r) => Value::Other(r.to_be_bytes().to_vec()),
        ValueRef::Blob(b) => Value::Other(b.to_vec()),
    }
}

const ENTRY_COLUMNS: &str = "node, seq, at, kind, subject, digest, prev, hash";

fn entry(row: &rusqlite::Row<'_>) -> Result<Entry, StoreError> {
    let kind: String = row.get(3)?;
    Ok(Entry {
        node: row.get(0)?,
        seq: row.get(1)?,
        at: row.get(2)?,
        kind: EntryKind::parse(&kind).ok_or_else(|| StoreError::Corrupt {
            id: "audit entry".into(),
            what: format!("unknown kind {kind:?}"),
        })?,
        subject: row.get(4)?,
        digest: row.get(5)?,
        prev: row.get(6)?,
        hash: row.get(7)?,
    })
}

/// `node`'s last entry.
pub(super) fn head(conn: &Connection, node: &str) -> Result<Option<Entry>, StoreError> {
    let sql =
        format!("SELECT {ENTRY_COLUMNS} FROM exec_audit WHERE node = ?1 ORDER BY seq DESC LIMIT 1");
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params![node])?;
    match rows.next()? {
        Some(row) => Ok(Some(entry(row)?)),
        None => Ok(None),
    }
}

/// Appends an entry vouching for `subject` as it reads now, inside the caller's
/// transaction. Nothing when the chain is off.
pub(super) fn append(
    conn: &Connection,
    scope: &Scope,
    kind: EntryKind,
    subject_id: &str,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    if !scope.chain {
        return Ok(());
    }
    let last = head(conn, &scope.node)?;
    append_after(conn, scope, last.as_ref(), kind, subject_id, at).map(drop)
}

/// [`append`] after `last`, the chain's head as the caller knows it; returns the new
/// head.
fn append_after(
    conn: &Connection,
    scope: &Scope,
    last: Option<&Entry>,
    kind: EntryKind,
    subject_id: &str,
    at: DateTime<Utc>,
) -> Result<Entry, StoreError> {
    let digest = audit::digest_for(kind, subject_id, subject(conn, kind, subject_id)?)?;
    let entry = Entry::next(&scope.node, last, ts(at), kind, subject_id, digest);
    conn.prepare_cached(
        "INSERT INTO exec_audit (node, seq, at, kind, subject, digest, prev, hash) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        entry.node,
        entry.seq,
        entry.at,
        entry.kind.as_str(),
        entry.subject,
        entry.digest,
        entry.prev,
        entry.hash,
    ])?;
    Ok(entry)
}

/// Records a change to rule `rule_id` (as its row reads now, or as it read before a
/// removal) and chains it.
pub(super) fn rule_event(
    conn: &Connection,
    scope: &Scope,
    rule_id: i64,
    change: RuleChange,
    at: DateTime<Utc>,
    actor: &Actor,
) -> Result<(), StoreError> {
    let changed = conn
        .prepare_cached(
            "INSERT INTO exec_rule_event (rule_id, event, at, actor, via, request_id, agent_id, \
             session_id, pattern, kind, expires_at, memory, node) \
             SELECT id, ?2, ?3, ?4, ?5, ?6, agent_id, session_id, pattern, kind, expires_at, memory, ?7 \
             FROM exec_allowlist WHERE id = ?1",
        )?
        .execute(params![
            rule_id,
            change.as_str(),
            ts(at),
            actor.by,
            actor.via,
            actor.request,
            &*scope.node,
        ])?;
    if changed != 1 {
        return Err(StoreError::Corrupt {
            id: format!("rule {rule_id}"),
            what: "not found to record its change".into(),
        });
    }
    let id = conn.last_insert_rowid();
    append(conn, scope, EntryKind::Rule, &id.to_string(), at)
}

/// Rule events, newest first, before `before` (an event id) when given.
pub(super) fn rule_events(
    conn: &Connection,
    limit: u32,
    before: Option<i64>,
) -> Result<Vec<RuleEvent>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT id, rule_id, event, at, actor, via, request_id, agent_id, session_id, pattern, kind, \
         expires_at, memory, node FROM exec_rule_event WHERE id < ?2 ORDER BY id DESC LIMIT ?1",
    )?;
    let mut rows = statement.query(params![limit, before.unwrap_or(i64::MAX)])?;
    let mut events = Vec::new();
    while let Some(row) = rows.next()? {
        events.push(super::rows::rule_event(row)?);
    }
    Ok(events)
}

/// Rule events after `after`, oldest first, at most a thousand.
pub(super) fn rule_events_after(
    conn: &Connection,
    after: i64,
) -> Result<Vec<RuleEvent>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT id, rule_id, event, at, actor, via, request_id, agent_id, session_id, pattern, kind, \
         expires_at, memory, node FROM exec_rule_event WHERE id > ?1 ORDER BY id LIMIT 1000",
    )?;
    let mut rows = statement.query(params![after])?;
    let mut events = Vec::new();
    while let Some(row) = rows.next()? {
        events.push(super::rows::rule_event(row)?);
    }
    Ok(events)
}

/// Walks every chain, then looks for rows no entry vouches for. `head`, as logged
/// (`NODE:SEQ:HASH`), is checked when given.
pub(super) fn verify(conn: &Connection, head: Option<&str>) -> Result<Report, StoreError> {
    // One snapshot for the whole walk: what commits meanwhile is neither half seen nor
    // taken for a row without its entry.
    let snapshot = conn.unchecked_transaction()?;
    let report = walk(&snapshot, head)?;
    snapshot.finish()?;
    Ok(report)
}

fn walk(conn: &Connection, head: Option<&str>) -> Result<Report, StoreError> {
    let mut verifier = Verifier::new();
    let sql = format!("SELECT {ENTRY_COLUMNS} FROM exec_audit ORDER BY node, seq");
    let mut statement = conn.prepare(&sql)?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let e = entry(row)?;
        let values = subject(conn, e.kind, &e.subject)?;
        verifier.entry(e, values);
    }
    for (what, sql) in audit::UNCHAINED {
        let mut statement = conn.prepare(sql)?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            let id: String = row.get(0)?;
            verifier.unchained(format!("{what} {id}"));
        }
    }
    let mut statement = conn.prepare(audit::DUPLICATED)?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        verifier.duplicated(row.get(0)?);
    }
    let head_entry = match head.and_then(audit::parse_anchor) {
        Some((node, seq)) => {
            let sql =
                format!("SELECT {ENTRY_COLUMNS} FROM exec_audit WHERE node = ?1 AND seq = ?2");
            let mut statement = conn.prepare(&sql)?;
            let mut rows = statement.query(params![node, seq])?;
            match rows.next()? {
                Some(row) => Some(entry(row)?),
                None => None,
            }
        }
        None => None,
    };
    Ok(verifier.finish(head, head_entry))
}

/// Entries after `(node, seq)` in chain order, each with its subject as it reads now, at
/// most `limit`: a page of `audit export`.
pub(super) fn entries(
    conn: &Connection,
    after: Option<(String, i64)>,
    limit: u32,
) -> Result<Vec<Exported>, StoreError> {
    let (node, seq) = after.unwrap_or_default();
    let sql = format!(
        "SELECT {ENTRY_COLUMNS} FROM exec_audit WHERE (node, seq) > (?1, ?2) ORDER BY node, seq LIMIT ?3"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params![node, seq, limit])?;
    let mut page = Vec::new();
    while let Some(row) = rows.next()? {
        let e = entry(row)?;
        let values = subject(conn, e.kind, &e.subject)?;
        page.push(Exported::new(e, values));
    }
    Ok(page)
}

/// At start, before any write: when no chain exists yet but rows do (written by an
/// execgate before the chain), vouches for them as they are now, after a segment entry
/// that says so. It proves nothing of what they were before; only that they are not
/// changed from here on.
pub(super) fn adopt(
    conn: &Connection,
    scope: &Scope,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    if !scope.chain
        || conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM exec_audit)")?
            .query_row([], |r| r.get::<_, bool>(0))?
    {
        return Ok(0);
    }
    let ids = |sql: &str| -> Result<Vec<String>, StoreError> {
        let mut statement = conn.prepare(sql)?;
        let found = statement
            .query_map([], |r| r.get::<_, rusqlite::types::Value>(0))?
            .map(|v| {
                v.map(|v| match v {
                    rusqlite::types::Value::Integer(i) => i.to_string(),
                    rusqlite::types::Value::Text(t) => t,
                    other => format!("{other:?}"),
                })
            })
            .collect::<Result<Vec<String>, _>>()?;
        Ok(found)
    };
    let requests = ids("SELECT id FROM exec_approval ORDER BY created_at, id")?;
    let resolved =
        ids("SELECT id FROM exec_approval WHERE status <> 'pending' ORDER BY resolved_at, id")?;
    let events = ids("SELECT id FROM exec_rule_event ORDER BY id")?;
    let Some((why, rows)) = audit::adoption(&requests, &resolved, &events) else {
        return Ok(0);
    };
    let mut last = append_after(conn, scope, None, EntryKind::Segment, &why, now)?;
    for (kind, id) in &rows {
        last = append_after(conn, scope, Some(&last), *kind, id, now)?;
    }
    Ok(rows.len() as u64 + 1)
}
