//! The PostgreSQL schema, brought up to date when a node connects: every file of
//! `migrations/postgres/` it lacks, in order, in one transaction that first takes a
//! transaction-level advisory lock, so that nodes starting together migrate one at a
//! time and the rest find the work done. PostgreSQL's DDL is transactional: a failure
//! leaves the schema as it was.

use sqlx_core::row::Row as _;
use sqlx_postgres::PgPool;

use crate::store::StoreError;

struct Migration {
    version: i64,
    description: &'static str,
    sql: &'static str,
}

/// Every migration, in order. A migration, once released, never changes.
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "initial",
        sql: include_str!("../../../migrations/postgres/0001_initial.sql"),
    },
    Migration {
        version: 2,
        description: "confinement",
        sql: include_str!("../../../migrations/postgres/0002_confinement.sql"),
    },
    Migration {
        version: 3,
        description: "audit: rule events and the hash chain",
        sql: include_str!("../../../migrations/postgres/0003_audit.sql"),
    },
];

/// The advisory lock that serialises migrations (an arbitrary constant of execgate's).
const MIGRATION_LOCK: i64 = 0x6578_6563_6761_7401;

pub(super) async fn run(pool: &PgPool) -> Result<(), StoreError> {
    let latest = MIGRATIONS.last().map_or(0, |m| m.version);
    let mut tx = pool.begin().await?;
    sqlx_core::query::query("SELECT pg_advisory_xact_lock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *tx)
        .await?;
    sqlx_core::query::query(
        "CREATE TABLE IF NOT EXISTS exec_schema (version BIGINT PRIMARY KEY NOT NULL, \
         description TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .execute(&mut *tx)
    .await?;
    let applied: i64 = sqlx_core::query::query("SELECT coalesce(max(version), 0) FROM exec_schema")
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
    if applied > latest {
        return Err(StoreError::Schema(format!(
            "the database has schema version {applied}, newer than this execgate knows ({latest}); run the execgate that wrote it"
        )));
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > applied) {
        let failed = |source| StoreError::PostgresMigration {
            version: m.version,
            description: m.description,
            source,
        };
        // Several statements in one file: the simple protocol runs them in turn.
        sqlx_core::executor::Executor::execute(&mut *tx, m.sql)
            .await
            .map_err(failed)?;
        sqlx_core::query::query("INSERT INTO exec_schema (version, description) VALUES ($1, $2)")
            .bind(m.version)
            .bind(m.description)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
    }
    tx.commit().await?;
    Ok(())
}
