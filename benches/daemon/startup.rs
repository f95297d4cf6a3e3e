//! D. Start to READY with a long history, against an empty database.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};

use crate::Plan;
use crate::client::{close_db, open_db};
use crate::lab::Lab;
use crate::stats::{count, median, mib, ms, ratio, show, times};

/// History rows left pending, as after a crash, so every start in section D sweeps.
const SWEPT: u32 = 100;

pub struct History {
    pub rows: u32,
    db_bytes: u64,
    build: Duration,
    pub ready: Vec<Duration>,
    empty_ready: Vec<Duration>,
}

impl History {
    pub fn print(&self) {
        println!("\nD. Start to READY=1 (sd_notify) with history");
        let line = |label: String, value: String| println!("  {label:<34}{value}");
        let runs = |v: &[Duration]| {
            format!(
                "median {}, max {} ({} run{})",
                show(median(v)),
                show(*v.iter().max().expect("at least one run")),
                v.len(),
                if v.len() == 1 { "" } else { "s" }
            )
        };
        line(
            "history".into(),
            format!(
                "{} rows, {}, built in {}",
                count(self.rows as usize),
                mib(self.db_bytes),
                show(self.build)
            ),
        );
        line(
            format!("{} rows + sweep of {SWEPT}", count(self.rows as usize)),
            runs(&self.ready),
        );
        line(
            "empty fresh database".into(),
            runs(&self.empty_ready) + "; it creates the schema",
        );
        line(
            "history / empty (medians)".into(),
            times(ratio(median(&self.ready), median(&self.empty_ready))),
        );
    }

    pub fn json(&self) -> Value {
        let list = |v: &[Duration]| v.iter().map(|d| ms(*d)).collect::<Vec<_>>();
        json!({
            "rows": self.rows,
            "swept": SWEPT,
            "db_bytes": self.db_bytes,
            "build_ms": ms(self.build),
            "ready_ms": list(&self.ready),
            "ready_median_ms": ms(median(&self.ready)),
            "empty_ready_ms": list(&self.empty_ready),
            "empty_ready_median_ms": ms(median(&self.empty_ready)),
        })
    }
}

pub async fn history(lab: &mut Lab, plan: &Plan) -> Result<History> {
    let mut empty_ready = Vec::new();
    for run in 0..plan.ready_runs {
        let db = lab.path().join(format!("empty-{run}/execgate.db"));
        let mut daemon = lab.start(&db).await?;
        empty_ready.push(daemon.ready);
        daemon.stop().await?;
    }

    // The daemon itself creates the schema, so the fixture is always the real one.
    let db = lab.path().join("history/execgate.db");
    lab.start(&db).await?.stop().await?;
    let started = Instant::now();
    fill_history(&db, plan.history_rows)?;
    let build = started.elapsed();
    let db_bytes = std::fs::metadata(&db)?.len();

    let mut ready = Vec::new();
    for _ in 0..plan.ready_runs {
        leave_pending(&db, plan.history_rows)?;
        let mut daemon = lab.start(&db).await?;
        ready.push(daemon.ready);
        daemon.stop().await?;
        check_swept(&db, plan.history_rows)?;
    }
    Ok(History {
        rows: plan.history_rows,
        db_bytes,
        build,
        ready,
        empty_ready,
    })
}

/// Fixture: `rows` requests spread over the 90 days before now, in one INSERT … SELECT.
/// Half are decided by policy, a fifth by the allowlist, the rest put to a human and
/// approved, denied, expired or cancelled; the newest [`SWEPT`] are still pending (with
/// distinct short ids, as the schema demands). Rows go in oldest first, as they would
/// have, so `rowid` order is time order.
const FIXTURE: &str = r#"
WITH RECURSIVE
    n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1),
    r AS (
        SELECT i,
               i % 20 AS kind,
               i > ?1 - ?4 AS pending,
               i % 20 >= 14 OR i > ?1 - ?4 AS asked,
               ?2 + (i - 1) * ?3 AS day
        FROM n),
    s AS (
        SELECT *,
               CASE WHEN pending THEN 'pending' WHEN kind <= 16 THEN 'approved'
                    WHEN kind = 17 THEN 'denied' WHEN kind = 18 THEN 'expired'
                    ELSE 'cancelled' END AS status,
               kind BETWEEN 10 AND 13 AND i % 3 = 0 AND NOT pending AS ran,
               CAST((day - 2440587.5) * 86400000 AS INTEGER) AS ms
        FROM r)
INSERT INTO exec_approval (
    id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, risk_reasons,
    status, decision, via, decided_by, error, created_at, expires_at, resolved_at, asked,
    message_external_id, peer_uid, peer_pid, run, exit_code, timed_out, duration_ms,
    stdout_bytes, stderr_bytes)
SELECT
    printf('%08x-%04x-7%03x-%04x-%012x', ms / 65536, ms % 65536, i % 4096,
           32768 + (i * 7919) % 16384, i),
    printf('%04x', i % 65536),
    'agent-' || (i * 7 % 10),
    CASE WHEN i % 3 = 0 THEN NULL ELSE 'session-' || (i / 700) END,
    CASE WHEN i % 16 = 5 THEN NULL ELSE
        CASE i % 8
            WHEN 0 THEN 'git log --oneline --stat -n ' || (i % 50 + 1) || ' -- src/module_' || (i % 31) || '.rs'
            WHEN 1 THEN 'cargo test --workspace --release -p crate-' || (i % 97) || ' -- --nocapture'
            WHEN 2 THEN 'rg --line-number --glob "*.rs" "fn handle_' || (i % 211) || '" src/ tests/ benches/'
            WHEN 3 THEN 'npm run build -- --mode production --out-dir dist/bundle-' || (i % 13)
            WHEN 4 THEN 'kubectl get pods -n team-' || (i % 17) || ' -o wide --sort-by=.status.startTime'
            WHEN 5 THEN 'python3 scripts/migrate_' || (i % 41) || '.py --dry-run --batch-size ' || (100 + i % 900)
            WHEN 6 THEN 'docker compose -f deploy/compose.' || (i % 5) || '.yml up -d --build api worker'
            ELSE 'ls -la --time-style=long-iso /var/log/service-' || (i % 19) || '/archive/' || (i % 365)
        END
    END,
    CASE WHEN i % 16 = 5 THEN '["make","target-' || (i % 40) || '"]' END,
    CASE WHEN i % 4 = 0 THEN NULL ELSE '/home/dev/src/service-' || (i % 23) END,
    CASE WHEN asked THEN 'needed for the release checklist, step ' || (i % 12) END,
    CASE WHEN kind <= 9 AND NOT pending THEN 'safe' WHEN kind = 17 THEN 'dangerous'
         ELSE 'needs-review' END,
    CASE WHEN kind <= 9 AND NOT pending THEN '["read-only command without path arguments"]'
         WHEN kind = 17 THEN '["recursive delete (`rm -r`)","force flag (`-f`)"]'
         WHEN kind % 2 = 0 THEN '["not a known read-only command"]'
         ELSE '[]' END,
    status,
    CASE WHEN pending THEN NULL WHEN kind IN (14, 15) THEN 'allow-once'
         WHEN kind = 16 THEN 'allow-always' WHEN kind = 17 THEN 'deny' END,
    CASE WHEN pending THEN NULL WHEN kind <= 9 THEN 'policy' WHEN kind <= 13 THEN 'allowlist'
         WHEN kind <= 15 THEN 'telegram-command' WHEN kind = 16 THEN 'cli'
         WHEN kind = 17 THEN 'telegram-reaction' WHEN kind = 18 THEN 'timeout'
         ELSE 'disconnect' END,
    CASE WHEN pending THEN NULL WHEN kind IN (14, 15, 17) THEN 'telegram:123456789 (@owner)'
         WHEN kind = 16 THEN 'cli:1000' END,
    CASE WHEN status IN ('denied', 'expired', 'cancelled')
         THEN 'command was not approved (' || status || ')' END,
    strftime('%Y-%m-%dT%H:%M:%fZ', day),
    CASE WHEN asked THEN strftime('%Y-%m-%dT%H:%M:%fZ', day + 120.0 / 86400) END,
    CASE WHEN pending THEN NULL
         WHEN asked THEN strftime('%Y-%m-%dT%H:%M:%fZ', day + (3 + i % 110) / 86400.0)
         ELSE strftime('%Y-%m-%dT%H:%M:%fZ', day) END,
    asked,
    CASE WHEN asked THEN '-1001234567890:' || (100000 + i) END,
    1000,
    2000 + i % 30000,
    ran,
    CASE WHEN ran THEN i % 7 = 0 END,
    CASE WHEN ran THEN 0 END,
    CASE WHEN ran THEN i % 5000 END,
    CASE WHEN ran THEN i % 65536 END,
    CASE WHEN ran THEN i % 300 END
FROM s"#;

fn fill_history(database: &Path, rows: u32) -> Result<()> {
    let now = chrono::Utc::now();
    let start = now - chrono::Duration::days(90);
    // Julian day numbers: what `strftime` takes directly, to the millisecond.
    let julian =
        |t: chrono::DateTime<chrono::Utc>| t.timestamp_millis() as f64 / 86_400_000.0 + 2_440_587.5;
    let step = (julian(now) - julian(start)) / f64::from(rows);
    // A fixture needs no durability of its own, and a big cache keeps the random
    // short-id index inserts in memory; the checkpoint below writes it all out.
    let db = open_db(database)?;
    db.pragma_update(None, "synchronous", "OFF")?;
    db.pragma_update(None, "cache_size", -524_288)?;
    // One statement: one transaction.
    db.execute(FIXTURE, (rows, julian(start), step, SWEPT))
        .context("generating the history")?;
    db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    close_db(db)
}

/// Puts the newest [`SWEPT`] rows back to pending, as a crash would have left them.
fn leave_pending(database: &Path, rows: u32) -> Result<()> {
    let db = open_db(database)?;
    db.execute(
        "UPDATE exec_approval
         SET status = 'pending', decision = NULL, via = NULL, decided_by = NULL,
             error = NULL, resolved_at = NULL
         WHERE rowid > ?1 - ?2",
        (rows, SWEPT),
    )?;
    db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    close_db(db)
}

/// The start swept: every row left pending is now cancelled via `restart`.
fn check_swept(database: &Path, rows: u32) -> Result<()> {
    let db = open_db(database)?;
    let swept: i64 = db.query_row(
        "SELECT count(*) FROM exec_approval
         WHERE rowid > ?1 - ?2 AND status = 'cancelled' AND via = 'restart'",
        (rows, SWEPT),
        |row| row.get(0),
    )?;
    close_db(db)?;
    ensure!(
        swept == i64::from(SWEPT),
        "the start swept {swept} of the {SWEPT} requests left pending"
    );
    Ok(())
}
