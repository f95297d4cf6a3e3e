//! The allowlist's use on PostgreSQL: counted in memory, written in sums.
//!
//! On SQLite, an allowlisted decision updates its rule's counters in the transaction that
//! records it, and the writer commits many such transactions together. On PostgreSQL the
//! same update would make every decision by one rule, on every node, wait for the one
//! before it: each holds the rule's row locked until its commit has reached the disk. So
//! each node adds its decisions up here and writes the sums every [`FLUSH_EVERY`], before
//! it lists the rules, and when it closes. The request rows, which say `via: allowlist`,
//! are durable before any answer; only the rule's counters (`use_count`, `last_used_at`,
//! `last_command`) lag, by at most that long, and a node that dies loses that much of
//! them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx_postgres::PgPool;

use crate::store::StoreError;

/// How often a node writes its rules' use.
pub(super) const FLUSH_EVERY: Duration = Duration::from_millis(200);

#[derive(Debug, Default)]
pub(super) struct Usage {
    counted: Mutex<HashMap<i64, Used>>,
}

#[derive(Debug)]
struct Used {
    count: i64,
    last_at: DateTime<Utc>,
    last_command: String,
}

impl Usage {
    /// Counts one decision by each of `rules`.
    pub fn note(&self, rules: &[i64], at: DateTime<Utc>, command: &str) {
        let mut counted = self.lock();
        for &rule in rules {
            let used = counted.entry(rule).or_insert_with(|| Used {
                count: 0,
                last_at: at,
                last_command: command.to_string(),
            });
            used.count += 1;
            if at >= used.last_at {
                used.last_at = at;
                used.last_command = command.to_string();
            }
        }
    }

    /// Writes what was counted since the last write, in one statement. On failure the
    /// sums are kept for the next try.
    pub async fn flush(&self, pool: &PgPool) -> Result<(), StoreError> {
        let taken = std::mem::take(&mut *self.lock());
        if taken.is_empty() {
            return Ok(());
        }
        let (mut ids, mut counts, mut ats, mut commands) = (vec![], vec![], vec![], vec![]);
        for (id, used) in &taken {
            ids.push(*id);
            counts.push(used.count);
            ats.push(used.last_at);
            commands.push(used.last_command.clone());
        }
        // Each SET reads the row as it was: the newer of the two uses names the command.
        let written = sqlx_core::query::query(
            "UPDATE exec_allowlist AS a SET use_count = a.use_count + u.n, \
             last_command = CASE WHEN a.last_used_at IS NULL OR u.at >= a.last_used_at \
                                 THEN u.cmd ELSE a.last_command END, \
             last_used_at = greatest(a.last_used_at, u.at) \
             FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::text[]) AS u(id, n, at, cmd) \
             WHERE a.id = u.id",
        )
        .bind(ids)
        .bind(counts)
        .bind(ats)
        .bind(commands)
        .execute(pool)
        .await;
        if let Err(e) = written {
            let mut counted = self.lock();
            for (id, used) in taken {
                match counted.get_mut(&id) {
                    Some(newer) => {
                        newer.count += used.count;
                        if used.last_at > newer.last_at {
                            newer.last_at = used.last_at;
                            newer.last_command = used.last_command;
                        }
                    }
                    None => {
                        counted.insert(id, used);
                    }
                }
            }
            return Err(e.into());
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Used>> {
        self.counted.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Writes the counted use every [`FLUSH_EVERY`] until the pool closes.
pub(super) async fn flush_until_closed(usage: std::sync::Arc<Usage>, pool: PgPool) {
    while !pool.is_closed() {
        tokio::time::sleep(FLUSH_EVERY).await;
        if let Err(e) = usage.flush(&pool).await {
            tracing::debug!(error = %e, "cannot write the allowlist's use yet; kept for the next try");
        }
    }
}
