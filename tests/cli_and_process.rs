//! The daemon as users meet it: the `execgate` binary as a process, its CLI verbs,
//! signals, crashes and restarts.

mod common;

use std::time::Duration;

use common::process::Process;
use common::*;
use execgate::model::{Record, Status, Via};
use hyper::Method;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_walkthrough_request_approve_deny_history() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Process::start(dir.path(), &[]).await;
    let env = daemon.env.clone();

    // A safe command is approved by policy: exit 0.
    let out = run_cli(&env, &["request", "--agent", "builder", "--", "ls -la"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("status:   approved"));

    // A miss waits; `execgate approve` answers it; the waiting CLI exits 0.
    let waiting = tokio::spawn({
        let env = env.clone();
        async move {
            run_cli(
                &env,
                &[
                    "request",
                    "--agent",
                    "builder",
                    "--reason",
                    "read it",
                    "--",
                    "cat",
                    "README.md",
                ],
            )
            .await
        }
    });
    let pending = wait_pending_cli(&env, "cat README.md").await;
    let out = run_cli(&env, &["pending"]).await;
    assert!(
        stdout(&out).contains(&pending.short_id) && stdout(&out).contains("cat README.md"),
        "{}",
        stdout(&out)
    );
    let out = run_cli(&env, &["approve", &pending.short_id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("approved (allow-once) via cli"),
        "{}",
        stdout(&out)
    );
    let out = waiting.await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Answering twice: a clear error and exit 2.
    let out = run_cli(&env, &["deny", &pending.short_id]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("already resolved"),
        "{}",
        stderr(&out)
    );

    // Denied: the waiting request exits 1.
    let waiting = tokio::spawn({
        let env = env.clone();
        async move {
            run_cli(
                &env,
                &[
                    "request",
                    "--agent",
                    "builder",
                    "--json",
                    "--",
                    "make deploy",
                ],
            )
            .await
        }
    });
    let pending = wait_pending_cli(&env, "make deploy").await;
    assert_eq!(
        run_cli(&env, &["deny", &pending.short_id])
            .await
            .status
            .code(),
        Some(0)
    );
    let out = waiting.await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: Record = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!((r.status, r.via), (Status::Denied, Some(Via::Cli)));

    // --no-wait returns the pending record at once (exit 1: not approved yet).
    let out = run_cli(
        &env,
        &["request", "--no-wait", "--json", "--", "make release"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let r: Record = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(r.status, Status::Pending);

    let out = run_cli(&env, &["history", "--agent", "builder"]).await;
    let text = stdout(&out);
    assert!(
        text.contains("approved") && text.contains("denied") && text.contains("cat README.md"),
        "{text}"
    );
    let out = run_cli(&env, &["history", "--json", "--limit", "2"]).await;
    let list: Vec<Record> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(list.len(), 2);

    daemon.signal(libc::SIGTERM);
    let (status, _) = daemon.wait().await;
    assert!(status.success());
}

async fn wait_pending_cli(env: &[(String, String)], command: &str) -> Record {
    for _ in 0..300 {
        let out = run_cli(env, &["pending", "--json"]).await;
        let list: Vec<Record> = serde_json::from_str(&stdout(&out)).unwrap_or_default();
        if let Some(r) = list.into_iter().find(|r| r.display_command() == command) {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{command:?} never showed in `execgate pending`");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_manages_the_allowlist() {
    let d = TestDaemon::start(&[]).await;
    let out = d
        .cli(&["allow", "add", "--agent", "builder", "make", "lint"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = d.cli(&["allow", "add", "--glob", "*"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("force"), "{}", stderr(&out));
    let out = d.cli(&["allow", "add", "--glob", "cargo *"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let out = d.cli(&["allow", "list", "--json"]).await;
    let rules: Vec<execgate::model::Rule> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(rules.len(), 2);
    assert_eq!(
        d.ask("builder", "make lint").await.via,
        Some(Via::Allowlist)
    );

    // Flags beat the environment: with EXECGATE_SOCKET pointing nowhere, --admin-socket
    // still reaches the daemon.
    let mut elsewhere = d.env.clone();
    elsewhere.push(("EXECGATE_SOCKET".into(), "/nonexistent/agent.sock".into()));
    let admin = d.config().admin_socket.display().to_string();
    let out = run_cli(&elsewhere, &["--admin-socket", &admin, "allow", "list"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_cli(&elsewhere, &["allow", "list"]).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "without the flag the environment is used"
    );

    let out = d.cli(&["allow", "list"]).await;
    assert!(stdout(&out).contains("make lint") && stdout(&out).contains("cargo *"));
    let out = d.cli(&["allow", "rm", &rules[0].id.to_string()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(d.cli(&["allow", "rm", "999"]).await.status.code(), Some(2));
    assert_eq!(
        d.ask_no_wait("builder", "make lint").await.status,
        Status::Pending
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_without_a_daemon_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_cli(&env_for(dir.path(), &[]), &["pending"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is `execgate serve` running?"),
        "{}",
        stderr(&out)
    );
    let out = run_cli(
        &env_for(dir.path(), &[("EXECGATE_APPROVAL__ASK", "sometimes")]),
        &["pending"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("sometimes"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_leaves_nothing_pending_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Process::start(dir.path(), &[]).await;
    let body = daemon.ask_no_wait("make deploy").await;
    let id = body["id"].as_str().unwrap().to_string();
    daemon.signal(libc::SIGKILL);
    let _ = daemon.wait().await;
    assert!(
        dir.path().join("run/agent.sock").exists(),
        "a killed daemon leaves its socket file"
    );

    // The restarted daemon removes the stale socket and sweeps the row before serving.
    let d = TestDaemon::start_in(dir, &[]).await;
    let r = d.record(&id).await;
    assert_eq!((r.status, r.via), (Status::Cancelled, Some(Via::Restart)));
    assert!(r.error.unwrap().contains("not approved"));
    assert_eq!(d.ask("a", "ls").await.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_daemon_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let first = Process::start(dir.path(), &[]).await;
    let client = execgate::client::Client::new(config_for(&first.env).socket);
    let body = first.ask_no_wait("make x").await;

    // Same socket: refused, and the live daemon's pending request is untouched.
    let second = run_cli(&first.env, &["serve"]).await;
    assert_eq!(second.status.code(), Some(1));
    assert!(
        stderr(&second).contains("already listening"),
        "{}",
        stderr(&second)
    );

    // Other sockets, same database: refused by the database lock.
    let other = dir.path().join("other/agent.sock").display().to_string();
    let mut env = first.env.clone();
    env.push(("EXECGATE_SOCKET".into(), other));
    let third = run_cli(&env, &["serve"]).await;
    assert_eq!(third.status.code(), Some(1));
    assert!(
        stderr(&third).contains("using the database"),
        "{}",
        stderr(&third)
    );

    let (_, r) = client
        .call(
            Method::GET,
            &format!("/v1/requests/{}", body["id"].as_str().unwrap()),
            None,
        )
        .await
        .unwrap();
    assert_eq!(r["status"], "pending");
    first.signal(libc::SIGINT);
    let (status, _) = first.wait().await;
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_cancels_pending_and_the_waiting_agent_hears_it() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Process::start(dir.path(), &[]).await;
    let env = daemon.env.clone();
    let waiting = tokio::spawn({
        let env = env.clone();
        async move { run_cli(&env, &["request", "--json", "--", "make deploy"]).await }
    });
    let pending = wait_pending_cli(&env, "make deploy").await;
    daemon.signal(libc::SIGTERM);
    let out = waiting.await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: Record = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (r.id, r.status, r.via),
        (pending.id, Status::Cancelled, Some(Via::Shutdown))
    );
    let (status, _) = daemon.wait().await;
    assert!(status.success());
    assert!(!dir.path().join("run/agent.sock").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_socket_directories_and_bad_config_stop_startup() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("run")).unwrap();
    std::fs::set_permissions(
        dir.path().join("run"),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    let out = run_cli(&env_for(dir.path(), &[]), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("lets others replace the socket"),
        "{}",
        stderr(&out)
    );

    let dir = tempfile::tempdir().unwrap();
    let out = run_cli(
        &env_for(dir.path(), &[("EXECGATE_POLICY__DENY", "rm [")]),
        &["serve"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("policy.deny"), "{}", stderr(&out));

    let out = run_cli(
        &env_for(
            dir.path(),
            &[("EXECGATE_CONFIG", "/nonexistent/execgate.toml")],
        ),
        &["serve"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
}
