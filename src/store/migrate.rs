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
            sql: include_str!(concat!("../../migrations/", $file)),
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
    for m in MIGRATIONS.iter().filter(|m| m.version > applied) {
        let failed = |source: rusqlite::Error| StoreError::Migration {
            version: m.version,
            description: m.description,
            source,
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed)?;
        tx.execute_batch(m.sql).map_err(failed)?;
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
}
