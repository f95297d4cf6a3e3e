//! Crash safety: `execgate serve` is killed with SIGKILL in the middle of traffic, over and
//! over, and restarted each time on the same database (issue 6, item 4). Afterwards:
//!
//! - `PRAGMA integrity_check` is `ok` (on the live database after some restarts, and on
//!   the file after the final clean stop);
//! - every request acknowledged over the socket (a 200 or 202 with a record) has its row,
//!   with the same id and, for a 200, the same terminal status;
//! - once a restarted daemon is ready, nothing is pending (the sweep ends it, `via: restart`),
//!   although the kill left both socket files and `<database>.lock` behind;
//! - nothing is resolved twice: every decision that got a 200 is the row's decision, at most
//!   one decision per id ever gets a 200, and a resolved row never changes afterwards.
//!
//! `EXECGATE_CRASH_CYCLES=N` runs N cycles (default 50); `EXECGATE_CRASH_SEED=S` replays a
//! run's random choices (the seed is printed on failure; timing is the kernel's, so a replay
//! is close, not identical).

use execgate_testkit as common;

use std::collections::{HashMap, HashSet};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::process::Process;
use common::{config_for, db_path};
use execgate::client::Client;
use execgate::model::{Decision, Record, Status, Via};
use hyper::{Method, StatusCode};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

const DEFAULT_CYCLES: u64 = 50;
const DEFAULT_SEED: u64 = 0x00c0_ffee_5eed;
const AGENT: &str = "crasher";
/// The exact allowlist rule added once, before the first kill.
const ALLOWLISTED: &str = "make ok";
const SAFE: &str = "ls -la";
/// Every this many cycles, `PRAGMA integrity_check` runs on a copy of the files as the kill
/// left them, and on the live database just after the restart that follows.
const INTEGRITY_EVERY: u64 = 10;
/// Tasks deciding the requests put to a human, concurrently.
const DECIDERS: usize = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_in_the_middle_of_traffic_loses_nothing_and_resolves_nothing_twice() {
    let cycles: u64 = env_number("EXECGATE_CRASH_CYCLES").unwrap_or(DEFAULT_CYCLES);
    let base_seed: u64 = env_number("EXECGATE_CRASH_SEED").unwrap_or(DEFAULT_SEED);
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let db = db_path(dir.path());
    let log_tail = Arc::new(Mutex::new(Tail::default()));
    let current_cycle = Arc::new(AtomicU64::new(0));
    let _guard = OnFailure {
        base_seed,
        cycle: Arc::clone(&current_cycle),
        log_tail: Arc::clone(&log_tail),
    };

    let mut ledger = Ledger::default();
    let mut snapshot: HashMap<String, Row> = HashMap::new();
    let mut integrity_checks = 0u64;

    for cycle in 0..cycles {
        current_cycle.store(cycle, Ordering::Relaxed);
        let seed = cycle_seed(base_seed, cycle);
        let mut rng = StdRng::seed_from_u64(seed);

        let daemon = start(dir.path(), &log_tail).await;
        let env = daemon.env.clone();
        let config = config_for(&env);
        let agent = Client::new(&config.socket);
        let admin = Client::new(&config.admin_socket);

        if cycle == 0 {
            let (status, body) = admin
                .call(
                    Method::POST,
                    "/v1/allowlist",
                    Some(&json!({"agent": null, "pattern": ALLOWLISTED, "kind": "exact"})),
                )
                .await
                .expect("admin socket answers");
            assert_eq!(status, StatusCode::CREATED, "{body}");
        } else {
            // The previous cycle's daemon was killed: this one is a restart.
            after_restart(&admin, &db, &ledger, &mut snapshot, cycle).await;
            if cycle % INTEGRITY_EVERY == 1 {
                integrity_check(&db).await;
                integrity_checks += 1;
            }
        }

        // Traffic, then SIGKILL at a random moment inside it.
        let kill_after = Duration::from_millis(rng.random_range(20..=150));
        let stop = Arc::new(AtomicBool::new(false));
        let (ids_tx, ids_rx) = mpsc::unbounded_channel();
        let mut agents = Vec::new();
        for (task, (command, wait)) in [
            (ALLOWLISTED, true),
            (SAFE, true),
            (ALLOWLISTED, true),
            ("", false),
            ("", false),
        ]
        .into_iter()
        .enumerate()
        {
            agents.push(tokio::spawn(agent_traffic(
                agent.clone(),
                AgentTask {
                    cycle,
                    task,
                    command: command.to_string(),
                    wait,
                },
                Arc::clone(&stop),
                (!wait).then(|| ids_tx.clone()),
            )));
        }
        drop(ids_tx);
        let old_ids: Arc<[String]> = ledger.pending_acks.clone().into();
        let ids_rx = Arc::new(tokio::sync::Mutex::new(ids_rx));
        let deciders: Vec<_> = (0..DECIDERS)
            .map(|_| {
                tokio::spawn(decide_traffic(
                    admin.clone(),
                    Arc::clone(&ids_rx),
                    Arc::clone(&old_ids),
                    StdRng::seed_from_u64(rng.random()),
                    Arc::clone(&stop),
                ))
            })
            .collect();

        tokio::time::sleep(kill_after).await;
        daemon.signal(libc::SIGKILL);
        let (status, _) = daemon.wait().await;
        assert_eq!(
            status.signal(),
            Some(libc::SIGKILL),
            "the daemon died of something else: {status:?}"
        );
        stop.store(true, Ordering::Relaxed);
        // What a crash leaves behind, and the next start must cope with: both socket files
        // (nobody behind them) and the lock file (its flock died with the process).
        let lock = format!("{}.lock", db.display());
        for leftover in [&config.socket, &config.admin_socket, Path::new(&lock)] {
            assert!(
                leftover.exists(),
                "{} should outlive SIGKILL",
                leftover.display()
            );
        }
        if cycle % INTEGRITY_EVERY == 0 {
            // The files exactly as the kill left them (a copy, so the next daemon still
            // recovers the original itself).
            integrity_check(&copy_crashed(&db, &dir.path().join("crashed"))).await;
            integrity_checks += 1;
        }

        for handle in agents {
            let outcome = tokio::time::timeout(Duration::from_secs(10), handle)
                .await
                .expect("agent traffic ends once the daemon is dead")
                .expect("agent traffic task");
            ledger.record_agent(cycle, outcome);
        }
        let mut decisions = Vec::new();
        for handle in deciders {
            decisions.extend(
                tokio::time::timeout(Duration::from_secs(10), handle)
                    .await
                    .expect("decisions end once the daemon is dead")
                    .expect("decision task"),
            );
        }
        ledger.record_decisions(cycle, decisions, &snapshot);
    }

    // One last restart, checked like the others, then a clean stop.
    let cycle = cycles;
    current_cycle.store(cycle, Ordering::Relaxed);
    let daemon = start(dir.path(), &log_tail).await;
    let admin = Client::new(config_for(&daemon.env).admin_socket);
    after_restart(&admin, &db, &ledger, &mut snapshot, cycle).await;
    daemon.signal(libc::SIGTERM);
    let (status, _) = daemon.wait().await;
    assert!(
        status.success(),
        "clean stop after the last restart: {status:?}"
    );

    // The file after the final stop.
    integrity_check(&db).await;
    integrity_checks += 1;
    let rows = read_rows(&db).await;
    compare_snapshots(&snapshot, &rows, cycle);
    ledger.check(&rows, cycle);
    let conn = open_db(&db).await;
    // Each allowlisted approval and its rule's use were one transaction.
    let use_count: i64 = conn
        .query_row(
            "SELECT use_count FROM exec_allowlist WHERE pattern = ?",
            [ALLOWLISTED],
            |row| row.get(0),
        )
        .unwrap();
    let allowlisted: i64 = conn
        .query_row(
            "SELECT count(*) FROM exec_approval WHERE via = 'allowlist' AND command = ?",
            [ALLOWLISTED],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(
        use_count, allowlisted,
        "the rule's use count and the rows it approved disagree"
    );
    // Every acknowledged "allow always" left its rule (same transaction as the decision).
    let rules: HashSet<(Option<String>, String)> = conn
        .prepare("SELECT agent_id, pattern FROM exec_allowlist")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (id, pattern) in &ledger.always {
        assert!(
            rules.contains(&(Some(AGENT.to_string()), pattern.clone())),
            "{id}: \"allow always\" got a 200 but its rule {pattern:?} is missing"
        );
    }
    conn.close().map_err(|(_, e)| e).unwrap();

    let swept = rows
        .values()
        .filter(|r| r.via.as_deref() == Some("restart"))
        .count();
    eprintln!(
        "crash: {cycles} SIGKILL cycles in {:.1}s (seed {base_seed:#x}): {} requests \
         acknowledged ({} × 200, {} × 202), {} cut off by the kills, {} refused (429/503); \
         {} decisions acknowledged ({} allow-always), {} refused as already resolved, {} \
         double-decision races; {} rows ({} cancelled via restart); {} integrity checks ok",
        started.elapsed().as_secs_f64(),
        ledger.acks.len(),
        ledger.acks.values().filter(|a| a.code == 200).count(),
        ledger.acks.values().filter(|a| a.code == 202).count(),
        ledger.failed,
        ledger.refused,
        ledger.decided.len(),
        ledger.always.len(),
        ledger.conflicts,
        ledger.races,
        rows.len(),
        swept,
        integrity_checks,
    );
}

// ---------------------------------------------------------------------------------------
// The daemon

/// Starts `execgate serve` (waiting for readiness) and drains its stderr into `tail`, so a
/// chatty log can never fill the pipe and stall the daemon.
async fn start(dir: &Path, tail: &Arc<Mutex<Tail>>) -> Process {
    let mut p = Process::start(dir, &[("EXECGATE_LOG", "info")]).await;
    let stderr = p.child.stderr.take().expect("stderr is piped");
    tail.lock().unwrap().clear();
    let tail = Arc::clone(tail);
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tail.lock().unwrap().push(line);
        }
    });
    p
}

/// What a restarted daemon must show before any new traffic: nothing pending, every row
/// resolved before the kill unchanged, every acknowledgement kept.
async fn after_restart(
    admin: &Client,
    db: &Path,
    ledger: &Ledger,
    snapshot: &mut HashMap<String, Row>,
    cycle: u64,
) {
    let (status, body) = admin
        .call(Method::GET, "/v1/requests?status=pending&limit=10000", None)
        .await
        .expect("admin socket answers");
    assert_eq!(status, StatusCode::OK, "{body}");
    let pending: Vec<Record> = serde_json::from_value(body).unwrap();
    assert!(
        pending.is_empty(),
        "cycle {cycle}: the restarted daemon is ready with {} request(s) still pending \
         (no new traffic yet): {:?}",
        pending.len(),
        pending.iter().map(|r| &r.id).collect::<Vec<_>>()
    );
    let rows = read_rows(db).await;
    compare_snapshots(snapshot, &rows, cycle);
    ledger.check(&rows, cycle);
    *snapshot = rows;
}

// ---------------------------------------------------------------------------------------
// Traffic

struct AgentTask {
    cycle: u64,
    task: usize,
    /// Empty: a fresh `make job-…` per request, put to a human with `wait: false`.
    command: String,
    wait: bool,
}

#[derive(Default)]
struct AgentOutcome {
    acks: Vec<(u16, Record)>,
    failed: u64,
    refused: u64,
}

async fn agent_traffic(
    client: Client,
    t: AgentTask,
    stop: Arc<AtomicBool>,
    ids: Option<mpsc::UnboundedSender<String>>,
) -> AgentOutcome {
    let mut out = AgentOutcome::default();
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let command = if t.command.is_empty() {
            format!("make job-{}-{}-{n}", t.cycle, t.task)
        } else {
            t.command.clone()
        };
        let body = json!({"agent": AGENT, "command": command, "wait": t.wait});
        match client.call(Method::POST, "/v1/requests", Some(&body)).await {
            Ok((status, body)) if status == StatusCode::OK || status == StatusCode::ACCEPTED => {
                let record: Record = serde_json::from_value(body.clone())
                    .unwrap_or_else(|e| panic!("{status} without a record ({e}): {body}"));
                assert_eq!(record.command.display(), command, "{body}");
                if let Some(ids) = &ids {
                    let _ = ids.send(record.id.clone());
                }
                out.acks.push((status.as_u16(), record));
            }
            // Refused without a record: 503 (cannot persist, or stopping) or 429 (too many
            // pending for this uid). Honest answers; nothing is promised for them.
            Ok((status, body)) => {
                assert!(
                    matches!(status.as_u16(), 429 | 503),
                    "{command}: {status} {body}"
                );
                out.refused += 1;
            }
            Err(_) => {
                // The daemon is gone (or going): the connection was refused or reset.
                out.failed += 1;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    }
    out
}

/// One decision sent on the admin socket and what came back.
struct DecisionOutcome {
    id: String,
    decision: Decision,
    status: Option<u16>,
    record: Option<Record>,
    /// The id came from an earlier cycle: a restart (or a decision) already ended it.
    old: bool,
    /// Sent concurrently with another decision on the same id.
    race: bool,
}

async fn decide(
    admin: &Client,
    id: &str,
    decision: Decision,
    old: bool,
    race: bool,
) -> DecisionOutcome {
    let path = format!("/v1/requests/{id}/decision");
    let body = json!({ "decision": decision.as_str() });
    let (status, record) = match admin.call(Method::POST, &path, Some(&body)).await {
        Ok((status, body)) if status == StatusCode::OK => {
            let record: Record = serde_json::from_value(body.clone())
                .unwrap_or_else(|e| panic!("200 without a record ({e}): {body}"));
            (Some(200), Some(record))
        }
        Ok((status, body)) => {
            let code = body["error"]["code"].as_str().unwrap_or_default();
            assert!(
                matches!(
                    (status.as_u16(), code),
                    (409, "ALREADY_RESOLVED") | (400, "ALWAYS_REFUSED") | (429 | 503, _)
                ),
                "decision {decision} on {id}: {status} {body}"
            );
            (Some(status.as_u16()), None)
        }
        Err(_) => (None, None),
    };
    DecisionOutcome {
        id: id.to_string(),
        decision,
        status,
        record,
        old,
        race,
    }
}

/// Decides some of the requests the agents put to a human as they arrive: one decision,
/// two racing ones, a repeat after a success, and now and then one on a request a
/// restart already ended.
async fn decide_traffic(
    admin: Client,
    ids: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>,
    old_ids: Arc<[String]>,
    mut rng: StdRng,
    stop: Arc<AtomicBool>,
) -> Vec<DecisionOutcome> {
    let mut out = Vec::new();
    let pick = |rng: &mut StdRng| match rng.random_range(0..100) {
        0..45 => Decision::AllowOnce,
        45..88 => Decision::Deny,
        _ => Decision::AllowAlways,
    };
    loop {
        let Some(id) = ids.lock().await.recv().await else {
            break;
        };
        if stop.load(Ordering::Relaxed) {
            // Drain quickly: the daemon is dead.
            continue;
        }
        if !old_ids.is_empty() && rng.random_bool(0.1) {
            let old = &old_ids[rng.random_range(0..old_ids.len())];
            out.push(decide(&admin, old, pick(&mut rng), true, false).await);
        }
        match rng.random_range(0..100) {
            // Left pending: the kill leaves it to the restart's sweep.
            0..35 => {}
            35..50 => {
                let (a, b) = (pick(&mut rng), pick(&mut rng));
                let (x, y) = tokio::join!(
                    decide(&admin, &id, a, false, true),
                    decide(&admin, &id, b, false, true)
                );
                out.push(x);
                out.push(y);
            }
            _ => {
                let first = decide(&admin, &id, pick(&mut rng), false, false).await;
                let again = first.status == Some(200) && rng.random_bool(0.2);
                out.push(first);
                if again {
                    out.push(decide(&admin, &id, pick(&mut rng), false, false).await);
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// What was acknowledged, and the checks against the database

struct Ack {
    cycle: u64,
    /// 200 (terminal record) or 202 (pending record).
    code: u16,
    record: Record,
}

#[derive(Default)]
struct Ledger {
    acks: HashMap<String, Ack>,
    /// Ids acknowledged with 202, oldest first (targets for decisions on ended requests).
    pending_acks: Vec<String>,
    /// The one decision per id that got a 200: (decision, record returned, cycle).
    decided: HashMap<String, (Decision, Record, u64)>,
    /// "allow always" decisions that got a 200: (id, the rule's pattern).
    always: Vec<(String, String)>,
    failed: u64,
    refused: u64,
    conflicts: u64,
    races: u64,
}

impl Ledger {
    fn record_agent(&mut self, cycle: u64, outcome: AgentOutcome) {
        self.failed += outcome.failed;
        self.refused += outcome.refused;
        for (code, record) in outcome.acks {
            let expected = if code == 200 {
                // `make ok` by its rule, `ls -la` by policy: decided at once.
                record.status == Status::Approved
                    && matches!(record.via, Some(Via::Allowlist | Via::Policy))
            } else {
                record.status == Status::Pending
            };
            assert!(
                expected,
                "cycle {cycle}: unexpected {code} record {record:?}"
            );
            if code == 202 {
                self.pending_acks.push(record.id.clone());
            }
            let id = record.id.clone();
            let previous = self.acks.insert(
                id.clone(),
                Ack {
                    cycle,
                    code,
                    record,
                },
            );
            assert!(
                previous.is_none(),
                "cycle {cycle}: id {id} acknowledged twice"
            );
        }
    }

    fn record_decisions(
        &mut self,
        cycle: u64,
        outcomes: Vec<DecisionOutcome>,
        before_cycle: &HashMap<String, Row>,
    ) {
        let mut raced: HashSet<&str> = HashSet::new();
        for o in &outcomes {
            if o.race && raced.insert(&o.id) {
                self.races += 1;
            }
            match o.status {
                Some(409) => self.conflicts += 1,
                Some(200) => {
                    let record = o.record.clone().unwrap();
                    assert!(
                        !o.old,
                        "cycle {cycle}: {} was ended before this cycle ({:?}), yet decision \
                         {} got a 200: {record:?}",
                        o.id,
                        before_cycle.get(&o.id),
                        o.decision
                    );
                    let status = if o.decision == Decision::Deny {
                        Status::Denied
                    } else {
                        Status::Approved
                    };
                    assert_eq!(
                        (
                            record.id.as_str(),
                            record.status,
                            record.decision,
                            record.via
                        ),
                        (o.id.as_str(), status, Some(o.decision), Some(Via::Cli)),
                        "cycle {cycle}: the 200 answer to a decision"
                    );
                    if let Some((first, _, when)) = self.decided.get(&o.id) {
                        panic!(
                            "cycle {cycle}: {} resolved twice: {first} got a 200 in cycle \
                             {when}, then {} got a 200",
                            o.id, o.decision
                        );
                    }
                    if o.decision == Decision::AllowAlways {
                        self.always
                            .push((o.id.clone(), record.command.display().into_owned()));
                    }
                    self.decided
                        .insert(o.id.clone(), (o.decision, record, cycle));
                }
                _ => {}
            }
        }
    }

    /// Every acknowledgement against the rows as they are now (no daemon traffic running).
    fn check(&self, rows: &HashMap<String, Row>, cycle: u64) {
        for (id, ack) in &self.acks {
            let Some(row) = rows.get(id) else {
                panic!(
                    "cycle {cycle}: {id} was acknowledged with {} in cycle {} but has no row: {:?}",
                    ack.code, ack.cycle, ack.record
                );
            };
            let context = || {
                format!(
                    "cycle {cycle}: {id} (acknowledged {} in cycle {})",
                    ack.code, ack.cycle
                )
            };
            assert_eq!(row.command, ack.record.command.display(), "{}", context());
            assert_ne!(row.status, "pending", "{}: still pending", context());
            if ack.code == 200 {
                assert_eq!(
                    (
                        row.status.as_str(),
                        row.decision.as_deref(),
                        row.via.as_deref()
                    ),
                    (
                        ack.record.status.as_str(),
                        ack.record.decision.map(Decision::as_str),
                        ack.record.via.map(Via::as_str)
                    ),
                    "{}: the row differs from the 200 answer",
                    context()
                );
                continue;
            }
            match self.decided.get(id) {
                Some((decision, record, when)) => assert_eq!(
                    (
                        row.status.as_str(),
                        row.decision.as_deref(),
                        row.via.as_deref(),
                        row.decided_by.as_deref()
                    ),
                    (
                        record.status.as_str(),
                        Some(decision.as_str()),
                        Some("cli"),
                        record.decided_by.as_deref()
                    ),
                    "{}: the row differs from the decision acknowledged in cycle {when}",
                    context()
                ),
                // Swept at a restart, or decided by a decision whose answer the kill cut off.
                None => assert!(
                    (row.status == "cancelled"
                        && row.via.as_deref() == Some("restart")
                        && row.decision.is_none())
                        || (matches!(row.status.as_str(), "approved" | "denied")
                            && row.via.as_deref() == Some("cli")
                            && row.decision.is_some()),
                    "{}: unexpected end {row:?}",
                    context()
                ),
            }
        }
    }
}

/// The columns a resolution sets, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Row {
    id: String,
    command: String,
    status: String,
    decision: Option<String>,
    via: Option<String>,
    decided_by: Option<String>,
    resolved_at: Option<String>,
}

/// A row resolved before must be exactly as it was; a row seen before must still exist.
fn compare_snapshots(before: &HashMap<String, Row>, now: &HashMap<String, Row>, cycle: u64) {
    for (id, old) in before {
        let Some(new) = now.get(id) else {
            panic!("cycle {cycle}: row {id} disappeared: was {old:?}");
        };
        if old.status != "pending" {
            assert_eq!(
                old, new,
                "cycle {cycle}: a resolved row changed after a restart"
            );
        }
    }
    if let Some(r) = now.values().find(|r| r.status == "pending") {
        panic!("cycle {cycle}: a row is still pending after the restart: {r:?}");
    }
}

async fn open_db(db: &Path) -> rusqlite::Connection {
    common::db::open(db)
}

async fn read_rows(db: &Path) -> HashMap<String, Row> {
    let conn = open_db(db).await;
    let rows: Vec<Row> = conn
        .prepare(
            "SELECT id, coalesce(command, argv) AS command, status, decision, via, decided_by, \
             resolved_at FROM exec_approval",
        )
        .unwrap()
        .query_map([], |row| {
            Ok(Row {
                id: row.get("id")?,
                command: row.get("command")?,
                status: row.get("status")?,
                decision: row.get("decision")?,
                via: row.get("via")?,
                decided_by: row.get("decided_by")?,
                resolved_at: row.get("resolved_at")?,
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    conn.close().map_err(|(_, e)| e).unwrap();
    rows.into_iter().map(|r| (r.id.clone(), r)).collect()
}

/// Copies the database and its write-ahead log into `to`; returns the copy's path.
fn copy_crashed(db: &Path, to: &Path) -> std::path::PathBuf {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    let copy = to.join(db.file_name().unwrap());
    std::fs::copy(db, &copy).unwrap();
    let wal = format!("{}-wal", db.display());
    if Path::new(&wal).exists() {
        std::fs::copy(&wal, format!("{}-wal", copy.display())).unwrap();
    }
    copy
}

async fn integrity_check(db: &Path) {
    let conn = open_db(db).await;
    let result: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    conn.close().map_err(|(_, e)| e).unwrap();
    assert_eq!(result, ["ok"], "PRAGMA integrity_check");
}

// ---------------------------------------------------------------------------------------
// Reproducibility and diagnostics

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={v:?}: {e}")))
}

/// A cycle's seed depends only on the base seed and the cycle number (splitmix64).
fn cycle_seed(base: u64, cycle: u64) -> u64 {
    let mut z = base.wrapping_add(cycle.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The last lines the current daemon wrote to stderr.
#[derive(Default)]
struct Tail {
    lines: std::collections::VecDeque<String>,
}

impl Tail {
    const KEEP: usize = 40;

    fn push(&mut self, line: String) {
        if self.lines.len() == Self::KEEP {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    fn clear(&mut self) {
        self.lines.clear();
    }
}

/// Prints how to replay the run when the test panics.
struct OnFailure {
    base_seed: u64,
    cycle: Arc<AtomicU64>,
    log_tail: Arc<Mutex<Tail>>,
}

impl Drop for OnFailure {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let cycle = self.cycle.load(Ordering::Relaxed);
        eprintln!(
            "crash test failed in cycle {cycle} (cycle seed {:#x}); replay with \
             EXECGATE_CRASH_SEED={:#x} EXECGATE_CRASH_CYCLES={}",
            cycle_seed(self.base_seed, cycle),
            self.base_seed,
            cycle + 1
        );
        if let Ok(tail) = self.log_tail.lock() {
            eprintln!("last daemon log lines:");
            for line in &tail.lines {
                eprintln!("  {line}");
            }
        }
    }
}
