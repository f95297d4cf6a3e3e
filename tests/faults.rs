//! Faults around the database (issue 6, item 5), against `execgate serve` as a child
//! process:
//!
//! - the disk fills (the daemon's `RLIMIT_FSIZE` is lowered to just above its database
//!   files, so the WAL's next frames are torn off with `EFBIG`), then space returns:
//!   requests fail closed with `503 UNAVAILABLE`, the daemon keeps answering, and it serves
//!   again without a restart;
//! - another process holds SQLite's write lock: the same, on the real binary, for every
//!   kind of write (a policy verdict, an allowlist hit with its rule's use count, a request
//!   put to a human, an owner's decision, a new rule);
//! - a request put to a human is pending when the disk fills (this time no file may grow
//!   at all, so it stays full until the limit is raised): the owner's decision cannot
//!   be recorded, so it is not made (503, still pending, the waiting agent hears nothing);
//!   once space returns the decision goes through.
//!
//! Every answer is checked against the database afterwards: each 200/202 has its row (as
//! answered), each 503 has none, and an allowlist rule's `use_count` is exactly the number
//! of requests it approved.

use execgate_testkit as common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::process::Process;
use common::{config_for, db_path, run_cli, stderr};
use execgate::client::Client;
use hyper::{Method, StatusCode};
use rusqlite::OptionalExtension;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

const AGENT: &str = "a";
/// The exact rule every test adds: requests for it are approved by the allowlist.
const ALLOWLISTED: &str = "make ok";
/// Requests sent while filling the disk, at most, before the test gives up.
const MAX_FILL: usize = 400;
/// Requests put to a human while filling, at most (the daemon caps pending per uid).
const MAX_ASKED: usize = 20;
/// Attempts (100 ms apart) a write gets to succeed once the fault is gone.
const RECOVERY_ATTEMPTS: usize = 50;

// ---------------------------------------------------------------------------------------
// 1. Disk full, then space returns, without a restart.
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_closed_and_the_daemon_recovers_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Daemon::start(dir.path(), &[]).await;
    let rule_id = d.add_rule(ALLOWLISTED).await;
    let pid = d.pid();
    let mut ledger = Ledger::default();

    // Before the fault: both kinds of request are recorded.
    d.expect(&mut ledger, Kind::Allowlisted, Outcome::Approved)
        .await;
    d.expect(&mut ledger, Kind::Asked, Outcome::Pending).await;

    // The disk fills: no file of the daemon's may grow more than a little.
    let before = db_file_sizes(dir.path());
    let limit = before.values().copied().max().unwrap() + 8 * 1024;
    set_fsize_limit(pid, Some(limit));

    let mut first_failure = None;
    for i in 0..MAX_FILL {
        let kind = if i % 2 == 1 && ledger.asked_acked() < MAX_ASKED {
            Kind::Asked
        } else {
            Kind::Allowlisted
        };
        if ledger.send(&d, kind).await == Outcome::Unavailable {
            first_failure = Some((i + 1, kind, db_file_sizes(dir.path())));
            break;
        }
    }
    let Some((sent_until_failure, failed_kind, sizes_at_failure)) = first_failure else {
        panic!(
            "the disk never filled: {MAX_FILL} requests succeeded under RLIMIT_FSIZE={limit} \
             (files before: {before:?}, now: {:?})\n{}",
            db_file_sizes(dir.path()),
            d.log()
        );
    };
    // A few more while the limit stays: each is a 503 or a recorded answer. (Some may be
    // recorded: SQLite can find room again, e.g. by checkpointing the WAL into the main
    // file, which is still below the limit, and starting the WAL over.)
    for kind in [
        Kind::Allowlisted,
        Kind::Asked,
        Kind::Allowlisted,
        Kind::Asked,
    ] {
        ledger.send(&d, kind).await;
    }
    let failed_while_full = ledger.unavailable();

    // The daemon is alive and answering on both sockets, and what it acknowledged is there.
    d.assert_alive(pid);
    d.assert_healthy().await;
    for sent in ledger.acked() {
        let (status, body) = call(
            &d.admin,
            Method::GET,
            &format!("/v1/requests/{}", sent.id()),
            None,
        )
        .await;
        assert_eq!(
            status,
            StatusCode::OK,
            "acknowledged request has no row while the disk is full: {body}"
        );
        assert_eq!(body["status"], sent.expected_status(), "{body}");
    }

    // Space returns: the same daemon serves again.
    set_fsize_limit(pid, None);
    let mut attempts = 0;
    loop {
        attempts += 1;
        match ledger.send(&d, Kind::Allowlisted).await {
            Outcome::Approved => break,
            _ if attempts < RECOVERY_ATTEMPTS => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            other => panic!(
                "still {other:?} after {attempts} attempts once space returned\n{}",
                d.log_tail()
            ),
        }
    }
    d.expect(&mut ledger, Kind::Asked, Outcome::Pending).await;
    d.expect(&mut ledger, Kind::Allowlisted, Outcome::Approved)
        .await;
    d.assert_alive(pid);

    eprintln!(
        "disk full: RLIMIT_FSIZE={limit} (files before: {before:?}); first 503 at fill request \
         {sent_until_failure} ({failed_kind:?}; files then: {sizes_at_failure:?}); {} requests \
         in all, {} acknowledged, {failed_while_full} answered 503; serving again at attempt \
         {attempts} after space returned, same pid {pid}",
        ledger.sent.len(),
        ledger.acked().count(),
    );

    let log = d.stop().await;
    let db = db_path(dir.path());
    integrity_check(&db).await;
    ledger.check_against(&db, rule_id, &log).await;
}

// ---------------------------------------------------------------------------------------
// 2. The database is locked by someone else.
// ---------------------------------------------------------------------------------------

/// `tests/bad_input.rs` covers the in-process daemon answering 503 to an asked request and
/// a decision under a held lock. This is the real binary, and every kind of write at once:
/// an allowlist hit (which also counts the rule's use), a policy verdict, a request put to
/// a human, an owner's decision and a new rule, sent concurrently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_database_fails_every_write_closed_and_serves_again_once_released() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Daemon::start(
        dir.path(),
        &[
            ("EXECGATE_DATABASE_BUSY_TIMEOUT_MS", "200"),
            ("EXECGATE_POLICY__DENY", "reboot*"),
        ],
    )
    .await;
    let rule_id = d.add_rule(ALLOWLISTED).await;
    let pid = d.pid();
    let mut ledger = Ledger::default();
    d.expect(&mut ledger, Kind::Allowlisted, Outcome::Approved)
        .await;
    d.expect(&mut ledger, Kind::Denied, Outcome::Denied).await;
    let pending = ledger.send_acked(&d, Kind::Asked).await;

    let blocker = hold_write_lock(dir.path()).await;

    // Every kind of write, concurrently: each fails closed.
    let mut tasks = tokio::task::JoinSet::new();
    for kind in [
        Kind::Allowlisted,
        Kind::Asked,
        Kind::Denied,
        Kind::Allowlisted,
        Kind::Asked,
        Kind::Denied,
    ] {
        let agent = d.agent.clone();
        let session = ledger.next_session();
        tasks.spawn(async move { (kind, session.clone(), submit(&agent, kind, &session).await) });
    }
    while let Some(joined) = tasks.join_next().await {
        let (kind, session, (status, body)) = joined.unwrap();
        let outcome = ledger.record(kind, session, status, &body);
        assert_eq!(
            outcome,
            Outcome::Unavailable,
            "{kind:?} answered while the write lock was held: {body}"
        );
    }
    let (status, body) = d.decide(&pending, "allow-once").await;
    assert_unavailable(status, &body);
    let (status, body) = call(
        &d.admin,
        Method::POST,
        "/v1/allowlist",
        Some(&json!({"pattern": "make locked"})),
    )
    .await;
    assert_unavailable(status, &body);
    let out = run_cli(&d.env, &["approve", &pending]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // Reads still work, nothing moved, and the daemon answers.
    d.assert_alive(pid);
    d.assert_healthy().await;
    assert_eq!(d.status_of(&pending).await, "pending");
    assert_eq!(d.use_count(rule_id).await, 1);

    blocker.execute_batch("ROLLBACK").unwrap();
    drop(blocker);

    // Released: every kind of write goes through again, on the same daemon.
    let (status, body) = retry(|| d.decide(&pending, "allow-once")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["status"].as_str(), body["decision"].as_str()),
        (Some("approved"), Some("allow-once"))
    );
    ledger.decided(&pending, "approved");
    d.expect(&mut ledger, Kind::Allowlisted, Outcome::Approved)
        .await;
    d.expect(&mut ledger, Kind::Asked, Outcome::Pending).await;
    d.expect(&mut ledger, Kind::Denied, Outcome::Denied).await;
    let (status, body) = call(
        &d.admin,
        Method::POST,
        "/v1/allowlist",
        Some(&json!({"pattern": "make locked"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        d.use_count(rule_id).await,
        2,
        "the rule counts exactly the approvals recorded"
    );
    d.assert_alive(pid);

    eprintln!(
        "write lock: {} requests, {} answered 503 while locked, all kinds served again after \
         release, same pid {pid}",
        ledger.sent.len(),
        ledger.unavailable()
    );

    let log = d.stop().await;
    let db = db_path(dir.path());
    integrity_check(&db).await;
    ledger.check_against(&db, rule_id, &log).await;
}

// ---------------------------------------------------------------------------------------
// 3. A pending request when the disk fills.
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_the_full_disk_cannot_record_is_not_made() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Daemon::start(dir.path(), &[]).await;
    let rule_id = d.add_rule(ALLOWLISTED).await;
    let pid = d.pid();
    let mut ledger = Ledger::default();

    // Put to a human before the disk fills: one with `wait: false`, one whose agent waits.
    let pending = ledger.send_acked(&d, Kind::Asked).await;
    let waiting_session = ledger.next_session();
    let waiter = {
        let agent = d.agent.clone();
        let body = json!({"agent": AGENT, "command": "make waited", "session": waiting_session});
        tokio::spawn(async move {
            agent
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .expect("agent socket answers")
        })
    };
    let waited = d.pending_in_session(&waiting_session).await;

    // The disk fills, and stays full: no write may reach past the end of the smaller of the
    // database and its WAL. (With room left below the limit, SQLite could checkpoint the WAL
    // into the main file and start the WAL over: a disk with space, which is not this test.)
    let sizes = db_file_sizes(dir.path());
    let limit = sizes["execgate.db"].min(sizes["execgate.db-wal"]);
    set_fsize_limit(pid, Some(limit));
    let mut filled_after = None;
    for i in 0..MAX_FILL {
        if ledger.send(&d, Kind::Allowlisted).await == Outcome::Unavailable {
            filled_after = Some(i + 1);
            break;
        }
    }
    let filled_after = filled_after.unwrap_or_else(|| {
        panic!(
            "the disk never filled: {MAX_FILL} requests succeeded under RLIMIT_FSIZE={limit} ({:?})\n{}",
            db_file_sizes(dir.path()),
            d.log()
        )
    });

    // Decisions cannot be recorded, so none is made.
    let (status, body) = d.decide(&pending, "allow-once").await;
    assert_unavailable(status, &body);
    let (status, body) = d.decide(&waited, "deny").await;
    assert_unavailable(status, &body);
    let out = run_cli(&d.env, &["approve", &pending]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    d.assert_alive(pid);
    d.assert_healthy().await;
    assert_eq!(d.status_of(&pending).await, "pending");
    assert_eq!(d.status_of(&waited).await, "pending");
    assert!(
        !waiter.is_finished(),
        "the waiting agent was answered though no decision was recorded: {:?}",
        waiter.await
    );

    // Space returns: the owner's decisions go through, and the waiting agent hears its own.
    set_fsize_limit(pid, None);
    let (status, body) = retry(|| d.decide(&pending, "allow-once")).await;
    assert_eq!(status, StatusCode::OK, "{body}\n{}", d.log_tail());
    assert_eq!(
        (body["status"].as_str(), body["decision"].as_str()),
        (Some("approved"), Some("allow-once"))
    );
    ledger.decided(&pending, "approved");
    let (status, body) = retry(|| d.decide(&waited, "deny")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, heard) = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiting agent hears the decision")
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{heard}");
    assert_eq!(
        (heard["id"].as_str(), heard["status"].as_str()),
        (Some(waited.as_str()), Some("denied"))
    );
    d.expect(&mut ledger, Kind::Allowlisted, Outcome::Approved)
        .await;
    d.assert_alive(pid);

    eprintln!(
        "pending at disk full: RLIMIT_FSIZE={limit}, full after {filled_after} allowlisted \
         requests; decisions answered 503 and changed nothing; recorded once space returned, \
         same pid {pid}"
    );

    let log = d.stop().await;
    let db = db_path(dir.path());
    integrity_check(&db).await;
    ledger.check_against(&db, rule_id, &log).await;
    let row = row_of(&db, &waited)
        .await
        .expect("the waited request has its row");
    assert_eq!(
        (row.status.as_str(), row.decision.as_deref()),
        ("denied", Some("deny"))
    );
    let row = row_of(&db, &pending).await.unwrap();
    assert_eq!(
        (row.status.as_str(), row.decision.as_deref()),
        ("approved", Some("allow-once"))
    );
}

// ---------------------------------------------------------------------------------------
// The daemon, the requests sent to it, and what the database must say about them.
// ---------------------------------------------------------------------------------------

struct Daemon {
    process: Option<Process>,
    env: Vec<(String, String)>,
    agent: Client,
    admin: Client,
    log: Arc<Mutex<String>>,
}

impl Daemon {
    /// Starts `execgate serve` and drains its stderr (a full pipe would stall the daemon).
    async fn start(dir: &Path, extra: &[(&str, &str)]) -> Daemon {
        let mut p = Process::start(dir, extra).await;
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = p.child.stderr.take().expect("stderr is piped");
        let sink = Arc::clone(&log);
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let config = config_for(&p.env);
        Daemon {
            env: p.env.clone(),
            agent: Client::new(&config.socket),
            admin: Client::new(&config.admin_socket),
            process: Some(p),
            log,
        }
    }

    fn pid(&self) -> i32 {
        self.process
            .as_ref()
            .unwrap()
            .child
            .id()
            .expect("the daemon runs") as i32
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// The daemon's last log lines, for failure messages.
    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// Sends a request of `kind` and expects `want`.
    async fn expect(&self, ledger: &mut Ledger, kind: Kind, want: Outcome) {
        let got = ledger.send(self, kind).await;
        assert_eq!(got, want, "{kind:?}\n{}", self.log_tail());
    }

    /// Adds the exact rule `pattern` for every agent; returns its id.
    async fn add_rule(&self, pattern: &str) -> i64 {
        let (status, body) = call(
            &self.admin,
            Method::POST,
            "/v1/allowlist",
            Some(&json!({"pattern": pattern})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_i64().unwrap()
    }

    async fn use_count(&self, rule_id: i64) -> i64 {
        let (status, body) = call(&self.admin, Method::GET, "/v1/allowlist", None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == rule_id)
            .expect("the rule is listed")["use_count"]
            .as_i64()
            .unwrap()
    }

    async fn decide(&self, id: &str, decision: &str) -> (StatusCode, Value) {
        call(
            &self.admin,
            Method::POST,
            &format!("/v1/requests/{id}/decision"),
            Some(&json!({ "decision": decision })),
        )
        .await
    }

    async fn status_of(&self, id: &str) -> String {
        let (status, body) = call(
            &self.admin,
            Method::GET,
            &format!("/v1/requests/{id}"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["status"].as_str().unwrap().to_string()
    }

    /// Waits (bounded) for the pending request sent in `session`; returns its id.
    async fn pending_in_session(&self, session: &str) -> String {
        for _ in 0..500 {
            let (status, body) = call(
                &self.admin,
                Method::GET,
                "/v1/requests?status=pending",
                None,
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            if let Some(r) = body
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["session"] == session)
            {
                return r["id"].as_str().unwrap().to_string();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no pending request in session {session}");
    }

    /// The process has not exited, and is the one started (no restart happened).
    fn assert_alive(&mut self, pid: i32) {
        let p = self.process.as_mut().unwrap();
        if let Some(status) = p.child.try_wait().unwrap() {
            panic!("the daemon exited ({status})\n{}", self.log());
        }
        assert_eq!(p.child.id(), Some(pid as u32));
    }

    async fn assert_healthy(&self) {
        for client in [&self.agent, &self.admin] {
            let (status, body) = call(client, Method::GET, "/v1/health", None).await;
            assert_eq!(
                (status, body["status"].as_str()),
                (StatusCode::OK, Some("ok")),
                "{body}"
            );
        }
    }

    /// SIGTERM; expects a clean exit. Returns the daemon's log.
    async fn stop(&mut self) -> String {
        let p = self.process.take().unwrap();
        p.signal(libc::SIGTERM);
        let (status, _) = p.wait().await;
        // Let the drain task read the last lines.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let log = self.log();
        assert!(
            status.success(),
            "the daemon did not stop cleanly ({status})\n{log}"
        );
        log
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Approved by the exact rule `make ok`.
    Allowlisted,
    /// Put to a human, with `wait: false`.
    Asked,
    /// Denied by the deny glob `reboot*` (only where that glob is configured).
    Denied,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Approved,
    Pending,
    Denied,
    Unavailable,
}

#[derive(Debug)]
struct Sent {
    /// Every request has its own session: a row for a 503 would be found by it.
    session: String,
    kind: Kind,
    outcome: Outcome,
    /// The id answered, for a 200 or 202.
    id: Option<String>,
    /// The status the row must have at the end.
    final_status: &'static str,
}

impl Sent {
    fn id(&self) -> &str {
        self.id.as_deref().unwrap()
    }

    /// The status the row has while the daemon runs and nobody decided.
    fn expected_status(&self) -> &'static str {
        match self.outcome {
            Outcome::Approved => "approved",
            Outcome::Pending => "pending",
            Outcome::Denied => "denied",
            Outcome::Unavailable => unreachable!(),
        }
    }
}

#[derive(Default)]
struct Ledger {
    sent: Vec<Sent>,
    sessions: usize,
}

impl Ledger {
    fn next_session(&mut self) -> String {
        self.sessions += 1;
        format!("fault-{}", self.sessions)
    }

    async fn send(&mut self, d: &Daemon, kind: Kind) -> Outcome {
        let session = self.next_session();
        let (status, body) = submit(&d.agent, kind, &session).await;
        self.record(kind, session, status, &body)
    }

    /// Sends and expects the request to be recorded; returns its id.
    async fn send_acked(&mut self, d: &Daemon, kind: Kind) -> String {
        let outcome = self.send(d, kind).await;
        assert_ne!(outcome, Outcome::Unavailable);
        self.sent.last().unwrap().id().to_string()
    }

    /// Checks an answer: a record of the right kind, or a fail-closed 503. Nothing else.
    fn record(&mut self, kind: Kind, session: String, status: StatusCode, body: &Value) -> Outcome {
        let outcome = match status {
            StatusCode::SERVICE_UNAVAILABLE => {
                assert_unavailable(status, body);
                Outcome::Unavailable
            }
            StatusCode::OK | StatusCode::ACCEPTED => {
                let (want_status, want_via, outcome) = match kind {
                    Kind::Allowlisted => (StatusCode::OK, Some("allowlist"), Outcome::Approved),
                    Kind::Asked => (StatusCode::ACCEPTED, None, Outcome::Pending),
                    Kind::Denied => (StatusCode::OK, Some("policy"), Outcome::Denied),
                };
                assert_eq!(status, want_status, "{kind:?}: {body}");
                assert_eq!(body["session"], session, "{body}");
                assert_eq!(body["via"].as_str(), want_via, "{kind:?}: {body}");
                outcome
            }
            other => panic!("{kind:?} answered {other}: {body}"),
        };
        let mut sent = Sent {
            session,
            kind,
            outcome,
            id: body["id"].as_str().map(String::from),
            final_status: "",
        };
        if outcome != Outcome::Unavailable {
            assert_eq!(body["status"], sent.expected_status(), "{body}");
            // A pending request still pending at SIGTERM is cancelled then.
            sent.final_status = match outcome {
                Outcome::Pending => "cancelled",
                _ => sent.expected_status(),
            };
        }
        self.sent.push(sent);
        outcome
    }

    fn decided(&mut self, id: &str, status: &'static str) {
        let sent = self
            .sent
            .iter_mut()
            .find(|s| s.id.as_deref() == Some(id))
            .unwrap();
        sent.final_status = status;
    }

    fn acked(&self) -> impl Iterator<Item = &Sent> {
        self.sent
            .iter()
            .filter(|s| s.outcome != Outcome::Unavailable)
    }

    fn asked_acked(&self) -> usize {
        self.acked().filter(|s| s.kind == Kind::Asked).count()
    }

    fn unavailable(&self) -> usize {
        self.sent.len() - self.acked().count()
    }

    /// After the daemon stopped: every acknowledged request has its row, as answered (and
    /// as decided since); no request answered 503 has one; the rule counts exactly the
    /// requests it approved.
    async fn check_against(&self, db: &Path, rule_id: i64, log: &str) {
        let conn = open(db).await;
        let rows: Vec<(String, Option<String>, String, Option<String>)> = conn
            .prepare("SELECT id, session_id, status, via FROM exec_approval")
            .unwrap()
            .query_map([], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let by_session: HashMap<&str, (&str, &str, Option<&str>)> = rows
            .iter()
            .filter_map(|(id, session, status, via)| {
                Some((
                    session.as_deref()?,
                    (id.as_str(), status.as_str(), via.as_deref()),
                ))
            })
            .collect();
        for sent in &self.sent {
            let row = by_session.get(sent.session.as_str());
            match sent.outcome {
                Outcome::Unavailable => assert!(
                    row.is_none(),
                    "{:?} answered 503 but has a row {row:?}\n{log}",
                    sent.kind
                ),
                _ => {
                    let (id, status, _) =
                        row.unwrap_or_else(|| panic!("acknowledged {sent:?} has no row\n{log}"));
                    assert_eq!(*id, sent.id(), "{sent:?}");
                    assert_eq!(*status, sent.final_status, "{sent:?}");
                }
            }
        }
        let approved_by_rule = rows
            .iter()
            .filter(|(_, _, _, via)| via.as_deref() == Some("allowlist"))
            .count() as i64;
        let use_count: i64 = conn
            .query_row(
                "SELECT use_count FROM exec_allowlist WHERE id = ?",
                [rule_id],
                |row| row.get(0),
            )
            .unwrap();
        let answered_by_rule = self
            .sent
            .iter()
            .filter(|s| s.outcome == Outcome::Approved)
            .count() as i64;
        assert_eq!(
            (use_count, approved_by_rule),
            (answered_by_rule, answered_by_rule),
            "the rule's use_count, the rows it approved and the 200s it gave must agree"
        );
    }
}

/// POST /v1/requests for `kind`, in its own session.
async fn submit(agent: &Client, kind: Kind, session: &str) -> (StatusCode, Value) {
    let body = match kind {
        Kind::Allowlisted => json!({"agent": AGENT, "command": ALLOWLISTED, "session": session}),
        Kind::Asked => {
            json!({"agent": AGENT, "command": format!("make {session}"), "session": session, "wait": false})
        }
        Kind::Denied => json!({"agent": AGENT, "command": "reboot now", "session": session}),
    };
    call(agent, Method::POST, "/v1/requests", Some(&body)).await
}

/// One call, bounded: a daemon that stops answering fails the test rather than hangs it.
async fn call(
    client: &Client,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> (StatusCode, Value) {
    tokio::time::timeout(Duration::from_secs(10), client.call(method, path, body))
        .await
        .unwrap_or_else(|_| panic!("no answer to {path} within 10 s"))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Repeats `f` (bounded) while it answers 503: a fault just cleared may need a moment.
async fn retry<F, Fut>(mut f: F) -> (StatusCode, Value)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = (StatusCode, Value)>,
{
    for _ in 1..RECOVERY_ATTEMPTS {
        let (status, body) = f().await;
        if status != StatusCode::SERVICE_UNAVAILABLE {
            return (status, body);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    f().await
}

fn assert_unavailable(status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "UNAVAILABLE", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not approved"),
        "{body}"
    );
}

/// Sizes of the database, its WAL and its shared-memory file (those that exist).
fn db_file_sizes(dir: &Path) -> HashMap<String, u64> {
    let db = db_path(dir);
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let path = format!("{}{suffix}", db.display());
            let len = std::fs::metadata(&path).ok()?.len();
            Some((format!("execgate.db{suffix}"), len))
        })
        .collect()
}

/// Sets the soft `RLIMIT_FSIZE` of process `pid` (None: unlimited), keeping its hard limit,
/// so raising it again needs no privilege.
fn set_fsize_limit(pid: i32, bytes: Option<u64>) {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: reading a limit of our own child into a local.
    let rc = unsafe { libc::prlimit(pid, libc::RLIMIT_FSIZE, std::ptr::null(), &mut old) };
    assert_eq!(rc, 0, "prlimit: {}", std::io::Error::last_os_error());
    let new = libc::rlimit {
        rlim_cur: bytes.map_or(old.rlim_max, |b| b.min(old.rlim_max)),
        rlim_max: old.rlim_max,
    };
    // SAFETY: setting a limit of our own child from a local.
    let rc = unsafe { libc::prlimit(pid, libc::RLIMIT_FSIZE, &new, std::ptr::null_mut()) };
    assert_eq!(rc, 0, "prlimit: {}", std::io::Error::last_os_error());
}

/// Another connection takes SQLite's write lock and keeps it until `ROLLBACK`.
async fn hold_write_lock(dir: &Path) -> rusqlite::Connection {
    common::db::hold_write_lock(&db_path(dir)).await
}

async fn open(db: &Path) -> rusqlite::Connection {
    common::db::open(db)
}

async fn integrity_check(db: &Path) {
    let conn = open(db).await;
    let result: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(result, ["ok"], "PRAGMA integrity_check");
}

struct Row {
    status: String,
    decision: Option<String>,
}

async fn row_of(db: &Path, id: &str) -> Option<Row> {
    let conn = open(db).await;
    let row: Option<(String, Option<String>)> = conn
        .query_row(
            "SELECT status, decision FROM exec_approval WHERE id = ?",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()
        .unwrap();
    row.map(|(status, decision)| Row { status, decision })
}
