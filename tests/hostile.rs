//! A hostile agent on its own uid, against a real daemon (issue: daemon hardening).
//! The agent's side runs as uid 65534 (see `common::uid`); the owner's side is the test.

use execgate_testkit as common;

use common::TestDaemon;
use common::heavy::heavy_command;
use common::uid::{AGENT_UID, as_agent, can_switch_uid, let_agent_in};
use execgate::client::Client;
use hyper::{Method, StatusCode};
use serde_json::json;

/// The harness itself: what the daemon sees is the agent's uid, and the admin socket
/// stays closed to it.
#[tokio::test]
async fn the_agent_side_is_another_uid() {
    if !can_switch_uid("the_agent_side_is_another_uid") {
        return;
    }
    let d = TestDaemon::start(&[]).await;
    let_agent_in(d.dir.path(), &d.config().socket);
    let (agent, admin) = (d.config().socket.clone(), d.config().admin_socket.clone());
    let (record, admin_answer) = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            let body = json!({"agent": "a", "command": "pwd"});
            let record = Client::new(agent)
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap();
            let admin = Client::new(admin)
                .call(Method::GET, "/v1/requests?status=pending", None)
                .await;
            (record, admin.map(|(s, _)| s))
        })
    })
    .await
    .unwrap();
    assert_eq!(record.0, StatusCode::OK, "{}", record.1);
    assert_eq!(record.1["peer_uid"], json!(AGENT_UID));
    assert!(
        admin_answer.is_err()
            || admin_answer
                .as_ref()
                .is_ok_and(|s| *s == StatusCode::FORBIDDEN),
        "the admin socket answered the agent: {admin_answer:?}"
    );
}

/// Run-mode requests from the agent's thread, each in a task of its own: (status, body).
fn run_in(
    socket: std::path::PathBuf,
    command: &str,
    cwd: &std::path::Path,
) -> tokio::task::JoinHandle<(StatusCode, serde_json::Value)> {
    let body = json!({"agent": "agent", "command": command, "cwd": cwd, "run": true});
    tokio::spawn(async move {
        Client::new(socket)
            .call(Method::POST, "/v1/requests", Some(&body))
            .await
            .unwrap()
    })
}

/// docs/lifecycle.md#the-working-directory: the directory is opened when the request is validated, and the child
/// changes into that open directory. An agent that owns its workspace fills the run
/// queue, lets an approved `pwd` wait, and swaps the workspace for a symlink to a
/// directory outside every root: the command still runs in the directory that was
/// checked.
#[tokio::test]
async fn a_cwd_swapped_for_a_symlink_after_approval_changes_nothing() {
    use std::os::unix::fs::{PermissionsExt, chown};
    if !can_switch_uid("a_cwd_swapped_for_a_symlink_after_approval_changes_nothing") {
        return;
    }
    let place = tempfile::tempdir().unwrap();
    std::fs::set_permissions(place.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let root = place.path().join("workspaces");
    let work = root.join("work");
    let outside = place.path().join("outside");
    for dir in [&root, &work, &outside] {
        std::fs::create_dir(dir).unwrap();
    }
    chown(&root, Some(AGENT_UID), Some(common::uid::AGENT_GID)).unwrap();
    chown(&work, Some(AGENT_UID), Some(common::uid::AGENT_GID)).unwrap();
    let root_s = root.display().to_string();
    let (checked, moved) = (
        work.canonicalize().unwrap(),
        root.canonicalize().unwrap().join("moved"),
    );
    let d = TestDaemon::start(&[
        ("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", root_s.as_str()),
        ("EXECGATE_EXEC__MAX_CONCURRENT", "1"),
    ])
    .await;
    let_agent_in(d.dir.path(), &d.config().socket);
    for pattern in ["sleep 2", "pwd"] {
        let (status, v) = d
            .add_rule(json!({"agent": "agent", "pattern": pattern, "kind": "exact"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
    }
    let socket = d.config().socket.clone();
    let (work_c, root_c, outside_c) = (work.clone(), root.clone(), outside.clone());
    // The owner's side watches the run queue and tells the agent when to go on.
    let (sleep_runs, on_sleep) = tokio::sync::oneshot::channel::<()>();
    let (pwd_waits, on_pwd) = tokio::sync::oneshot::channel::<()>();
    let agent = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            let sleeping = run_in(socket.clone(), "sleep 2", &work_c);
            on_sleep.await.unwrap();
            let waiting = run_in(socket, "pwd", &work_c);
            on_pwd.await.unwrap();
            std::fs::rename(&work_c, root_c.join("moved")).unwrap();
            std::os::unix::fs::symlink(&outside_c, &work_c).unwrap();
            (sleeping.await.unwrap(), waiting.await.unwrap())
        })
    });
    assert!(d.in_run_queue("sleep 2", true).await, "sleep runs");
    sleep_runs.send(()).unwrap();
    assert!(d.in_run_queue("pwd", false).await, "pwd waits behind sleep");
    // Running, in the queue's words, comes before the run is confined and started:
    // the directory is moved only once `sleep` is a process.
    assert!(
        common::eventually(|| async { sleep_started() }).await,
        "sleep 2 started"
    );
    pwd_waits.send(()).unwrap();
    let (sleeping, swapped) = agent.await.unwrap();
    assert_eq!(sleeping.1["result"]["exit_code"], 0, "{}", sleeping.1);
    let (status, v) = swapped;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["status"], "approved", "{v}");
    assert_eq!(
        v["cwd"],
        json!(checked),
        "the record keeps the path that was checked"
    );
    let ran_in = v["result"]["stdout"]
        .as_str()
        .unwrap_or_default()
        .trim_end();
    assert_eq!(
        ran_in,
        moved.display().to_string(),
        "the approved command ran somewhere else: {v}"
    );
}

/// `exec.max_concurrent_per_uid`: an agent that runs long commands many times takes its
/// share of the run slots, not all of them; another uid's approved command still runs.
#[tokio::test]
async fn one_uid_cannot_hold_every_run_slot() {
    if !can_switch_uid("one_uid_cannot_hold_every_run_slot") {
        return;
    }
    let place = tempfile::tempdir().unwrap();
    let d = TestDaemon::start(&[
        ("EXECGATE_EXEC__MAX_CONCURRENT", "2"),
        ("EXECGATE_EXEC__MAX_CONCURRENT_PER_UID", "1"),
    ])
    .await;
    let_agent_in(d.dir.path(), &d.config().socket);
    for pattern in ["sleep 10", "echo mine"] {
        let (status, v) = d
            .add_rule(json!({"pattern": pattern, "kind": "exact"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
    }
    // The agent's two long runs: one runs, one waits for the agent's own share.
    let socket = d.config().socket.clone();
    let cwd = std::path::PathBuf::from("/");
    let hog = std::thread::spawn(move || {
        as_agent(move || async move {
            let a = run_in(socket.clone(), "sleep 10", &cwd);
            let b = run_in(socket, "sleep 10", &cwd);
            let _ = tokio::join!(a, b);
        })
    });
    let runs = || async {
        let (_, v) = d.admin().call(Method::GET, "/v1/runs", None).await.unwrap();
        v.as_array().unwrap().clone()
    };
    let mut seen = Vec::new();
    for _ in 0..400 {
        seen = runs().await;
        if seen.len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(
        seen.len(),
        2,
        "both of the agent's runs are queued or running: {seen:?}"
    );

    // The owner's own uid runs at once, beside the agent's one running command.
    let (status, v) = run_in(d.config().socket.clone(), "echo mine", place.path())
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["result"]["stdout"], "mine\n", "{v}");
    let after = runs().await;
    let started = after.iter().filter(|e| !e["started_at"].is_null()).count();
    assert_eq!(started, 1, "the agent holds one slot, not both: {after:?}");
    drop(d);
    drop(hog);
}

/// docs/lifecycle.md#limits-on-asking: asks put to a human are rate-limited per uid, and asks the agent hangs up
/// on count. An agent that connects, asks and hangs up as fast as it can gets `429
/// TOO_MANY_ASKS` after its share, and another uid's request still reaches the owner.
#[tokio::test]
async fn a_flood_of_asks_is_limited_per_uid_and_others_still_reach_the_owner() {
    if !can_switch_uid("a_flood_of_asks_is_limited_per_uid_and_others_still_reach_the_owner") {
        return;
    }
    let mut d = TestDaemon::start(&[("EXECGATE_LIMITS__ASKS_PER_MINUTE_PER_UID", "5")]).await;
    let_agent_in(d.dir.path(), &d.config().socket);
    let socket = d.config().socket.clone();
    let (answers, last) = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            let client = Client::new(socket);
            // All at once; each hangs up after a while (the request is then cancelled).
            let asks: Vec<_> = (0..20)
                .map(|i| {
                    let client = client.clone();
                    tokio::spawn(async move {
                        let body = json!({"agent": "flood", "command": format!("make t{i}")});
                        let call = client.call(Method::POST, "/v1/requests", Some(&body));
                        tokio::time::timeout(std::time::Duration::from_secs(2), call)
                            .await
                            .ok()
                            .map(|answer| answer.unwrap())
                    })
                })
                .collect();
            let mut answers = Vec::new();
            let mut hung_up = 0;
            for ask in asks {
                match ask.await.unwrap() {
                    Some(answer) => answers.push(answer),
                    None => hung_up += 1,
                }
            }
            assert_eq!(hung_up, 5, "5 asks reach the owner: {answers:?}");
            let body = json!({"agent": "flood", "command": "make last", "wait": false});
            let last = client
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap();
            (answers, last)
        })
    })
    .await
    .unwrap();
    assert!(
        answers
            .iter()
            .all(|(s, v)| *s == StatusCode::TOO_MANY_REQUESTS
                && v["error"]["code"] == "TOO_MANY_ASKS"),
        "only refusals come back at once: {answers:?}"
    );
    assert_eq!(
        answers.len(),
        15,
        "5 asks were put to the owner, 15 refused: {answers:?}"
    );
    assert_eq!(last.0, StatusCode::TOO_MANY_REQUESTS, "{}", last.1);
    let message = last.1["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("asks_per_minute_per_uid"), "{message}");

    // The five the agent hung up on were cancelled, and counted all the same.
    let mut flood = Vec::new();
    for _ in 0..200 {
        let (_, v) = d
            .admin()
            .call(Method::GET, "/v1/requests?agent=flood", None)
            .await
            .unwrap();
        flood = v.as_array().unwrap().clone();
        if flood.iter().all(|r| r["status"] == "cancelled") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(flood.len(), 5, "{flood:?}");
    assert!(
        flood
            .iter()
            .all(|r| r["status"] == "cancelled" && r["via"] == "disconnect"),
        "{flood:?}"
    );

    // Another uid asks, and the owner is shown it.
    let mine = d.ask_no_wait("owner-side", "make mine").await;
    assert_eq!(mine.peer_uid, Some(0), "the test itself is root");
    d.console_expect(&mine.short_id).await;
}

/// One evaluation has one parsing budget, shared by the command and every script inside
/// it that execgate reads (`bash -c '…'`, a heredoc fed to a shell). A single-quoted
/// script is one token of its command, so without a shared budget a 64 KiB request of
/// many `bash -c '…'` costs dozens of full parses, several times over. Past the budget
/// the command is too big to analyse: a human decides, even where the owner's exact rule
/// names it.
#[tokio::test]
async fn the_scripts_inside_a_command_share_one_analysis_budget() {
    let d = TestDaemon::start(&[]).await;
    // Each script differs (the same script twice is read once).
    let script = |i: usize| format!("ls a b c{i}; ").repeat(150);
    let command = (0..20)
        .map(|i| format!("bash -c '{}'", script(i)))
        .collect::<Vec<_>>()
        .join("; ");
    assert!(command.len() < 64 * 1024);
    let (status, v) = d
        .add_rule(json!({"agent": "agent", "pattern": command, "kind": "exact"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let (status, v) = d
        .submit(json!({"agent": "agent", "command": command, "wait": false}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "a human decides: {v}");
    let reasons = v["risk_reasons"].to_string();
    assert!(reasons.contains("too much to analyse"), "{reasons}");

    // A few such scripts are read, and the rule approves them.
    let few = format!("bash -c '{}'; bash -c '{}'", script(0), script(1));
    let (status, v) = d
        .add_rule(json!({"agent": "agent", "pattern": few, "kind": "exact"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let (status, v) = d
        .submit(json!({"agent": "agent", "command": few, "wait": false}))
        .await;
    assert_eq!(
        (status, &v["status"]),
        (StatusCode::OK, &json!("approved")),
        "{v}"
    );
}

/// Past the budget no path approves without a human: with `approval.ask = off` the
/// command is denied, and a timeout with `ask_fallback = allowlist` does not approve it
/// on the strength of the exact rule that names it.
#[tokio::test]
async fn a_command_too_big_to_analyse_is_never_approved_by_a_rule_or_a_timeout() {
    let command = (0..20)
        .map(|i| format!("bash -c '{}'", format!("ls a b c{i}; ").repeat(150)))
        .collect::<Vec<_>>()
        .join("; ");
    let rule = json!({"agent": "agent", "pattern": command, "kind": "exact"});
    let ask = json!({"agent": "agent", "command": command, "wait": false});

    let d = TestDaemon::start(&[("EXECGATE_APPROVAL__ASK", "off")]).await;
    assert_eq!(d.add_rule(rule.clone()).await.0, StatusCode::CREATED);
    let (status, v) = d.submit(ask.clone()).await;
    assert_eq!(
        (status, &v["status"]),
        (StatusCode::OK, &json!("denied")),
        "{v}"
    );
    assert!(
        v["error"].to_string().contains("too much to analyse"),
        "{v}"
    );

    let d = TestDaemon::start(&[
        ("EXECGATE_APPROVAL__ASK_FALLBACK", "allowlist"),
        ("EXECGATE_APPROVAL__TIMEOUT_SECS", "1"),
    ])
    .await;
    assert_eq!(d.add_rule(rule).await.0, StatusCode::CREATED);
    let (status, v) = d.submit(ask).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{}", v["status"]);
    let r = d.terminal(v["id"].as_str().unwrap()).await;
    assert_eq!(
        (r.status, r.via),
        (
            execgate::model::Status::Expired,
            Some(execgate::model::Via::Timeout)
        )
    );
}

/// The owner can always decide: while one uid floods the daemon with commands that are
/// as costly to analyse as it allows, the admin socket answers and another uid's
/// allowlisted request is decided, long before the flood is through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_heavy_commands_does_not_starve_the_owner_or_other_uids() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    if !can_switch_uid("a_flood_of_heavy_commands_does_not_starve_the_owner_or_other_uids") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let daemon = common::process::Process::start(dir.path(), &[]).await;
    let config = common::config_for(&daemon.env);
    let_agent_in(dir.path(), &config.socket);
    let admin = Client::new(&config.admin_socket);
    let (status, v) = admin
        .call(
            Method::POST,
            "/v1/allowlist",
            Some(&json!({"agent": "other", "pattern": "make other", "kind": "exact"})),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::CREATED, "{v}");

    const FLOOD: usize = 16;
    let answered = Arc::new(AtomicUsize::new(0));
    let (socket, counter) = (config.socket.clone(), Arc::clone(&answered));
    let _flood = std::thread::spawn(move || {
        as_agent(move || async move {
            let calls: Vec<_> = (0..FLOOD)
                .map(|seed| {
                    let (client, counter) = (Client::new(&socket), Arc::clone(&counter));
                    tokio::spawn(async move {
                        let body = json!({"agent": "flood", "command": heavy_command(seed), "wait": false});
                        let _ = client.call(Method::POST, "/v1/requests", Some(&body)).await;
                        counter.fetch_add(1, Ordering::SeqCst);
                    })
                })
                .collect();
            for call in calls {
                let _ = call.await;
            }
        })
    });
    // Let the flood land first.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;

    let (status, v) = admin
        .call(Method::GET, "/v1/requests?status=pending", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    let body = json!({"agent": "other", "command": "make other"});
    let (status, v) = Client::new(&config.socket)
        .call(Method::POST, "/v1/requests", Some(&body))
        .await
        .unwrap();
    assert_eq!(
        (status, &v["status"]),
        (StatusCode::OK, &json!("approved")),
        "{v}"
    );
    let done = answered.load(Ordering::SeqCst);
    assert!(
        done <= FLOOD / 2,
        "the owner and the other uid waited until {done} of the flood's {FLOOD} requests were analysed"
    );
}

/// docs/lifecycle.md#the-approval-message: `input` is part of what is approved. The owner sees its size, its sha256
/// and an escaped head, and whether execgate runs the command itself and for which uid;
/// the record keeps the size and the sha256; `execgate pending` shows risk and says how
/// much of a long command it leaves out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_is_shown_to_the_owner_and_recorded() {
    let place = tempfile::tempdir().unwrap();
    let mut d = TestDaemon::start(&[]).await;
    let input = format!("line one\n\u{1b}[2Jhidden\n{}", "x".repeat(5000));
    let body = json!({"agent": "agent", "command": "tee notes.txt", "input": input,
                      "run": true, "cwd": place.path()});
    let client = d.agent();
    let waiting = tokio::spawn(async move {
        client
            .call(Method::POST, "/v1/requests", Some(&body))
            .await
            .unwrap()
    });
    let r = d.pending_for("tee notes.txt").await;
    let digest = execgate::model::sha256_hex(input.as_bytes());

    // The console.
    d.console_expect(&format!("ID: {}", r.short_id)).await;
    d.console_expect("Agent: agent (uid 0").await;
    let line = d.console_expect("Input: ").await;
    d.console_expect("Run: yes").await;
    let size = input.len();
    assert!(
        line.contains(&format!("{size} bytes")) && line.contains(&digest),
        "{line}"
    );
    assert!(
        line.contains("line one\\u{a}\\u{1b}[2Jhidden"),
        "escaped head: {line}"
    );
    assert!(line.len() < 600, "a head, not the whole input: {line}");

    // The API record, on both sockets.
    for v in [
        serde_json::to_value(d.record(&r.id).await).unwrap(),
        d.agent()
            .call(Method::GET, &format!("/v1/requests/{}", r.id), None)
            .await
            .unwrap()
            .1,
    ] {
        assert_eq!(v["input"]["bytes"], size, "{v}");
        assert_eq!(v["input"]["sha256"], json!(digest), "{v}");
        let head = v["input"]["head"].as_str().unwrap();
        assert!(input.starts_with(head) && head.len() < 600, "{head}");
    }

    // The CLI: risk, input, and a long command cut with its length said.
    let long = format!("make {}", "target ".repeat(40));
    let long_r = {
        let body = json!({"agent": "agent", "command": long, "wait": false});
        let (status, v) = d.submit(body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{v}");
        v
    };
    let out = d.cli(&["pending"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("RISK") && text.contains("needs-review"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.contains(long_r["short_id"].as_str().unwrap()))
        .unwrap();
    assert!(row.contains("more characters"), "the cut is said: {row}");
    let row = text.lines().find(|l| l.contains(&r.short_id)).unwrap();
    assert!(row.contains(&format!("{size} B stdin")), "{row}");

    d.decide(&r.id, "deny").await;
    let (status, v) = waiting.await.unwrap();
    assert_eq!(
        (status, &v["status"]),
        (StatusCode::OK, &json!("denied")),
        "{v}"
    );
}

/// A "this session" rule is the owner's grant to one agent in one session. A hostile
/// agent on its own uid that names that session, as that agent (which its uid may not
/// speak as) or as itself, is not approved by it; nor can it read the event stream that
/// shows the owner's queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_rule_is_not_borrowed_by_another_uid_or_agent() {
    if !can_switch_uid("a_session_rule_is_not_borrowed_by_another_uid_or_agent") {
        return;
    }
    let owner_uid = common::uid().to_string();
    let d = TestDaemon::start(&[
        ("EXECGATE_APPROVAL__TIMEOUT_SECS", "300"),
        ("EXECGATE_AGENTS__CLAUDE__UIDS", owner_uid.as_str()),
    ])
    .await;
    let (status, body) = d
        .submit(
            json!({"agent": "claude", "session": "s-1", "command": "make deploy", "wait": false}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let short = body["short_id"].as_str().unwrap().to_string();
    let (status, body) = d
        .admin()
        .call(
            Method::POST,
            &format!("/v1/requests/{short}/decision"),
            Some(&json!({"decision": "allow-session"})),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");

    let_agent_in(d.dir.path(), &d.config().socket);
    let (agent, admin) = (d.config().socket.clone(), d.config().admin_socket.clone());
    let answers = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            let mut answers = Vec::new();
            for name in ["claude", "codex"] {
                let body = json!({"agent": name, "session": "s-1", "command": "make deploy", "wait": false});
                answers.push(
                    Client::new(agent.clone())
                        .call(Method::POST, "/v1/requests", Some(&body))
                        .await
                        .unwrap(),
                );
            }
            let events = Client::new(admin)
                .call(Method::GET, "/v1/events", None)
                .await
                .map(|(s, _)| s);
            (answers, events)
        })
    })
    .await
    .unwrap();
    let (answers, events) = answers;
    // As claude: its uid may not speak as claude.
    assert_eq!(answers[0].0, StatusCode::FORBIDDEN, "{}", answers[0].1);
    // As itself in claude's session: asked, not approved.
    assert_eq!(answers[1].0, StatusCode::ACCEPTED, "{}", answers[1].1);
    assert_eq!(answers[1].1["status"], "pending");
    assert!(
        events.is_err() || events.as_ref().is_ok_and(|s| *s == StatusCode::FORBIDDEN),
        "the admin socket's event stream answered the agent: {events:?}"
    );
    // The owner's own agent in that session still passes.
    assert_eq!(
        d.submit(json!({"agent": "claude", "session": "s-1", "command": "make deploy"}))
            .await
            .1["via"],
        "allowlist"
    );
}

/// A call another uid named cannot be withdrawn from here, even by its exact
/// `call_id`: the agent's withdrawal is 404, the owner's request still waits, and the
/// owner's own withdrawal still works (issue 31, 8).
#[tokio::test]
async fn another_uids_call_cannot_be_withdrawn() {
    if !can_switch_uid("another_uids_call_cannot_be_withdrawn") {
        return;
    }
    let d = TestDaemon::start(&[]).await;
    let waiting = d.submit_waiting(
        json!({"agent": "owner", "command": "make release", "call_id": "the-call"}),
    );
    let pending = d.pending_for("make release").await;
    let_agent_in(d.dir.path(), &d.config().socket);
    let agent = d.config().socket.clone();
    let (status, body) = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            Client::new(agent)
                .call(
                    Method::POST,
                    "/v1/requests/withdraw",
                    Some(&json!({"call_id": "the-call"})),
                )
                .await
                .unwrap()
        })
    })
    .await
    .unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(
        d.record(&pending.id).await.status,
        execgate::model::Status::Pending
    );
    let (status, body) = d
        .agent()
        .call(
            Method::POST,
            "/v1/requests/withdraw",
            Some(&json!({"call_id": "the-call"})),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(waiting.await.unwrap().1["via"], "withdrawn");
}

/// A late answer is the asker's alone: the owner's approval of a call the owner's uid
/// asked without waiting is given to that uid's retry, never to another uid making the
/// very same call (same agent name, session, command and cwd), which is asked anew.
#[tokio::test]
async fn another_uid_does_not_get_a_late_answer_meant_for_this_one() {
    if !can_switch_uid("another_uid_does_not_get_a_late_answer_meant_for_this_one") {
        return;
    }
    let d = TestDaemon::start(&[]).await;
    let cwd = d.dir.path().to_string_lossy().into_owned();
    let body = json!({"agent": "builder", "session": "s-late", "command": "make release",
        "cwd": cwd, "wait": false});
    let (status, first) = d.submit(body.clone()).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{first}");
    let id = first["id"].as_str().unwrap().to_string();
    let (status, _) = d.decide(&id, "allow-once").await;
    assert_eq!(status, StatusCode::OK);
    let_agent_in(d.dir.path(), &d.config().socket);
    let agent = d.config().socket.clone();
    let theirs = body.clone();
    let (status, answer) = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            Client::new(agent)
                .call(Method::POST, "/v1/requests", Some(&theirs))
                .await
                .unwrap()
        })
    })
    .await
    .unwrap();
    // Asked anew for the other uid (a new pending request), not approved.
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    assert_eq!(answer["status"], "pending", "{answer}");
    assert_ne!(answer["id"], json!(id));
    // The owner's own retry gets the owner's answer.
    let (status, mine) = d.submit(body).await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    assert_eq!(
        (&mine["id"], &mine["status"]),
        (&json!(id), &json!("approved")),
        "{mine}"
    );
}

/// Whether some process runs `sleep 2` (as its own program, or as `sh -c 'sleep 2'`).
fn sleep_started() -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| c == b"sleep\x002\x00" || c.ends_with(b"-c\x00sleep 2\x00"))
        })
}
