//! The schema, brought up to date when the database opens: each file of `migrations/`
//! in its own transaction, in order, with the schema's version (`PRAGMA user_version`)
//! moved in the same transaction, so a crash leaves either the old schema or the new.
//!
//! Databases written before execgate counted versions itself (its first releases used
//! sqlx's migrator) carry a `_sqlx_migrations` table instead: the versions it lists as
//! applied are taken as the schema's version, and the table is left as it is.

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

struct Migration {
    version: i64,
    description: &'static str,
    sql: &'static str,
}

macro_rules! migrations {
    ($($version:literal $file:literal $description:literal),+ $(,)?) => {
        &[$(Migration {
            version: $version,
            description: $description,
            sql: include_str!(concat!("../../../migrations/", $file)),
        }),+]
    };
}

/// Every migration, in order. A migration, once released, never changes.
const MIGRATIONS: &[Migration] = migrations![
    1 "0001_initial.sql" "initial",
    2 "0002_message_external_id.sql" "message external id",
    3 "0003_run_results.sql" "run results",
    4 "0004_indexes_for_the_write_path.sql" "indexes for the write path",
    5 "0005_shown_short_ids.sql" "shown short ids",
    6 "0006_input_summary.sql" "input summary",
    7 "0007_tool_requests.sql" "tool requests and tool rules",
    8 "0008_request_messages.sql" "a message per chat",
    9 "0009_grants.sql" "session and time-boxed grants",
    10 "0010_nodes.sql" "nodes, grants kept with requests, kept state",
    11 "0011_confinement.sql" "confinement",
    12 "0012_audit.sql" "audit: rule events and the hash chain",
];

/// The schema version this execgate writes.
pub(super) fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Applies every migration the database lacks. A database from a newer execgate is
/// refused: this one would not know what its columns mean.
pub(super) fn run(conn: &mut Connection) -> Result<(), StoreError> {
    let applied = applied(conn)?;
    if applied > latest() {
        return Err(StoreError::Schema(format!(
            "the database has schema version {applied}, newer than this execgate knows ({}); run the execgate that wrote it",
            latest()
        )));
    }
    // Foreign keys are off while migrations run (they cannot be switched inside a
    // transaction): rebuilding a table means dropping the old one, and with them on,
    // the drop would cascade to every row that points at it. Each migration is checked
    // whole before it commits instead, and they are switched back on after.
    let pending: Vec<&Migration> = MIGRATIONS.iter().filter(|m| m.version > applied).collect();
    if pending.is_empty() {
        return Ok(());
    }
    conn.pragma_update(None, "foreign_keys", false)?;
    let result = apply(conn, &pending);
    conn.pragma_update(None, "foreign_keys", true)?;
    result
}

fn apply(conn: &mut Connection, pending: &[&Migration]) -> Result<(), StoreError> {
    for m in pending {
        let failed = |source: rusqlite::Error| StoreError::Migration {
            version: m.version,
            description: m.description,
            source,
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed)?;
        tx.execute_batch(m.sql).map_err(failed)?;
        let broken: i64 = tx
            .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |row| {
                row.get(0)
            })
            .map_err(failed)?;
        if broken > 0 {
            return Err(StoreError::Schema(format!(
                "migration {} ({}) would leave {broken} rows pointing at nothing; nothing was changed",
                m.version, m.description
            )));
        }
        tx.pragma_update(None, "user_version", m.version)
            .map_err(failed)?;
        tx.commit().map_err(failed)?;
        tracing::info!(
            version = m.version,
            description = m.description,
            "database migrated"
        );
    }
    Ok(())
}

/// The schema version the database is at.
fn applied(conn: &Connection) -> Result<i64, StoreError> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if version > 0 {
        return Ok(version);
    }
    let from_sqlx: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations')",
        [],
        |row| row.get(0),
    )?;
    if !from_sqlx {
        return Ok(0);
    }
    // sqlx recorded each migration it ran, and one that failed half way (`success = 0`).
    let (count, max, failed): (i64, i64, i64) = conn.query_row(
        "SELECT count(*), ifnull(max(version), 0), ifnull(sum(success = 0), 0) FROM _sqlx_migrations",
        [],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )?;
    if failed > 0 || count != max {
        return Err(StoreError::Schema(format!(
            "the database's migration history is incomplete ({count} recorded, up to version {max}, {failed} failed): restore it from a backup"
        )));
    }
    Ok(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_count_up_from_one_and_files_are_in_order() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1, "{}", m.description);
        }
        let mut files: Vec<_> =
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                // `migrations/postgres/` has the PostgreSQL store's own.
                .filter(|name| name.ends_with(".sql"))
                .collect();
        files.sort();
        assert_eq!(
            files.len(),
            MIGRATIONS.len(),
            "every file in migrations/ is listed: {files:?}"
        );
    }

    #[test]
    fn a_new_database_gets_every_migration_once() {
        let mut conn = Connection::open_in_memory().unwrap();
        run(&mut conn).unwrap();
        run(&mut conn).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, latest());
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", latest() + 1)
            .unwrap();
        let e = run(&mut conn).unwrap_err().to_string();
        assert!(e.contains("newer than this execgate knows"), "{e}");
    }

    /// Rebuilding `exec_approval` (0009) must not cascade to the chat messages that point
    /// at its rows, nor lose a row or a rule.
    #[test]
    fn the_grants_migration_keeps_every_row_and_every_message() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        let upto8: Vec<&Migration> = MIGRATIONS.iter().filter(|m| m.version <= 8).collect();
        apply(&mut conn, &upto8).unwrap();
        conn.execute_batch(
            "INSERT INTO exec_approval (id, short_id, agent_id, session_id, command, risk, status, decision, via, \
                 created_at, resolved_at, message_external_id) \
             VALUES ('r1', 'a1b2', 'claude', 's1', 'make deploy', 'needs-review', 'approved', 'allow-always', 'cli', \
                 '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:01.000Z', '42:7'); \
             INSERT INTO exec_approval_message (external_id, request_id) VALUES ('42:7', 'r1'), ('matrix:!r:$e', 'r1'); \
             INSERT INTO exec_allowlist (agent_id, pattern, kind, created_at, created_by) \
             VALUES ('claude', 'make deploy', 'exact', '2026-11-21T10:00:01.000Z', 'cli:0');",
        )
        .unwrap();
        run(&mut conn).unwrap();
        let count = |sql: &str| -> i64 { conn.query_row(sql, [], |row| row.get(0)).unwrap() };
        assert_eq!(count("SELECT count(*) FROM exec_approval_message"), 2);
        assert_eq!(
            count("SELECT count(*) FROM exec_approval WHERE id = 'r1' AND command = 'make deploy'"),
            1
        );
        assert_eq!(
            count(
                "SELECT count(*) FROM exec_allowlist WHERE session_id IS NULL AND memory = 0 AND source_request_id IS NULL"
            ),
            1
        );
        let fk: bool = conn
            .pragma_query_value(None, "foreign_keys", |row| row.get(0))
            .unwrap();
        assert!(fk, "foreign keys are on again after migrating");
        // The new decision is accepted; a word outside the contract still is not.
        conn.execute(
            "UPDATE exec_approval SET decision = 'allow-session' WHERE id = 'r1'",
            [],
        )
        .unwrap();
        assert!(
            conn.execute(
                "UPDATE exec_approval SET decision = 'allow-forever' WHERE id = 'r1'",
                []
            )
            .is_err()
        );
        // A session rule is distinct from the agent's rule for the same pattern.
        conn.execute(
            "INSERT INTO exec_allowlist (agent_id, session_id, pattern, kind, created_at, created_by) \
             VALUES ('claude', 's1', 'make deploy', 'exact', '2026-11-21T10:00:01.000Z', 'cli:0')",
            [],
        )
        .unwrap();
    }
}
