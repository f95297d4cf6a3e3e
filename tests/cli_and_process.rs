//! The daemon as users meet it: the `execgate` binary as a process, its CLI verbs,
//! signals, crashes and restarts.

use execgate_testkit as common;

use std::time::Duration;

use common::process::{self, Process};
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

/// `execgate show ID` prints one request whole, as the chats do: the command escaped,
/// cwd, input (size, sha256, escaped head), run mode, agent and uid, risk and reasons,
/// the note on a non-ASCII path. `pending` names an input by the start of its sha256.
/// An unknown id is a clear error (issue 30).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_prints_one_request_whole_and_pending_names_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Process::start(dir.path(), &[("EXECGATE_APPROVAL__TIMEOUT_SECS", "300")]).await;
    let env = daemon.env.clone();
    let command = "head -n 5 notes.txt\u{E0041}";
    let input = "line one\n\u{1b}[2J";
    let sha = execgate::model::sha256_hex(input.as_bytes());
    let client = execgate::client::Client::new(config_for(&env).socket);
    let body = serde_json::json!({"agent": "builder", "command": command, "cwd": "/tmp",
        "input": input, "run": true, "reason": "peek at the notes"});
    let waiting =
        tokio::spawn(async move { client.call(Method::POST, "/v1/requests", Some(&body)).await });
    let pending = wait_pending_cli(&env, command).await;

    let out = run_cli(&env, &["pending"]).await;
    let text = stdout(&out);
    assert!(
        text.contains(&format!("[{} B stdin sha256 {}]", input.len(), &sha[..8])),
        "{text}"
    );
    assert!(
        text.contains("notes.txt\\u{e0041}") && !text.contains('\u{E0041}'),
        "{text}"
    );

    let out = run_cli(&env, &["show", &pending.short_id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        format!("ID: {}", pending.short_id),
        format!("Agent: builder (uid {}", uid()),
        "Command: head -n 5 notes.txt\\u{e0041}".to_string(),
        format!("Input: {} bytes, sha256 {sha}, all of it: line one\\u{{a}}\\u{{1b}}[2J", input.len()),
        "Cwd: /tmp".to_string(),
        "Run: yes: execgate runs it itself".to_string(),
        "Reason: peek at the notes".to_string(),
        format!("Risk: {}", pending.risk),
        "Note: a path or word in this request holds non-ASCII characters: notes.txt\\u{e0041} (U+E0041)".to_string(),
        "Status: pending, expires in ".to_string(),
    ] {
        assert!(text.contains(&line), "{line:?} missing from\n{text}");
    }
    for why in &pending.risk_reasons {
        assert!(
            text.contains(&format!("  - {}", execgate::text::visible(why))),
            "{why}\n{text}"
        );
    }
    assert!(
        !text.contains('\u{E0041}') && !text.contains('\u{1b}'),
        "{text}"
    );
    // The same by its full id, and as JSON.
    let out = run_cli(&env, &["show", "--json", &pending.id]).await;
    let r: Record = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(r.id, pending.id);

    let out = run_cli(&env, &["show", "zzzz"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("request zzzz not found"),
        "{}",
        stderr(&out)
    );

    run_cli(&env, &["deny", &pending.short_id]).await;
    let _ = waiting.await;
    let out = run_cli(&env, &["show", &pending.short_id]).await;
    assert!(
        stdout(&out).contains("Status: denied (deny) via cli"),
        "{}",
        stdout(&out)
    );
    daemon.signal(libc::SIGTERM);
    let _ = daemon.wait().await;
}

async fn wait_pending_cli(env: &[(String, String)], command: &str) -> Record {
    for _ in 0..300 {
        let out = run_cli(env, &["pending", "--json"]).await;
        let list: Vec<Record> = serde_json::from_str(&stdout(&out)).unwrap_or_default();
        if let Some(r) = list.into_iter().find(|r| r.command.display() == command) {
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

/// A `.env` where the daemon or the CLI happens to run is not configuration: an agent
/// that can write there must not be able to turn on `security = full` for the next start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dot_env_in_the_working_directory_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".env"),
        "EXECGATE_POLICY__SECURITY=full\nEXECGATE_AGENT=from-dotenv\n",
    )
    .unwrap();
    // The daemon's working directory is `dir`.
    let daemon = Process::start(dir.path(), &[]).await;
    let (status, record) = daemon
        .submit(&serde_json::json!({"agent": "a", "command": "make deploy", "wait": false}))
        .await;
    assert_eq!(
        (status.as_u16(), record["status"].as_str()),
        (202, Some("pending")),
        "approved by a .env nobody named: {record}"
    );
    // The CLI runs in `dir` too (it is HOME).
    let out = run_cli(
        &daemon.env,
        &["request", "--no-wait", "--json", "--", "make x"],
    )
    .await;
    let r: Record =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(r.agent, "cli", "the CLI read the .env");
    daemon.signal(libc::SIGTERM);
    daemon.wait().await;
}

/// `--env-file PATH` (a global flag, so every verb takes it) loads one file, explicitly;
/// variables already in the environment win over it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_env_file_is_loaded_when_named() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gate-settings");
    std::fs::write(
        &file,
        "# secrets and settings\nEXECGATE_POLICY__SECURITY=full\nEXECGATE_AGENT=named\n",
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let file_s = file.display().to_string();
    let daemon = Process::start_with(
        dir.path(),
        &[],
        process::Options {
            args: &["--env-file", &file_s],
            ..Default::default()
        },
    )
    .await;
    let (status, record) = daemon
        .submit(&serde_json::json!({"agent": "a", "command": "make deploy", "wait": false}))
        .await;
    assert_eq!(
        (status.as_u16(), record["status"].as_str()),
        (200, Some("approved")),
        "{record}"
    );
    // The env file is one of execgate's own files: a command touching it is dangerous.
    let (_, record) = daemon
        .submit(
            &serde_json::json!({"agent": "a", "command": format!("cat {file_s}"), "wait": false}),
        )
        .await;
    assert_eq!(record["risk"], "dangerous", "{record}");
    assert!(
        record["risk_reasons"]
            .to_string()
            .contains("execgate's own files"),
        "{record}"
    );
    let out = run_cli(
        &daemon.env,
        &[
            "--env-file",
            &file_s,
            "request",
            "--no-wait",
            "--json",
            "--",
            "make x",
        ],
    )
    .await;
    let r: Record =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(r.agent, "named");
    // What the environment already says wins over the file.
    let mut env = daemon.env.clone();
    env.push(("EXECGATE_AGENT".into(), "from-env".into()));
    let out = run_cli(
        &env,
        &[
            "--env-file",
            &file_s,
            "request",
            "--no-wait",
            "--json",
            "--",
            "make x",
        ],
    )
    .await;
    let r: Record =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(r.agent, "from-env");
    daemon.signal(libc::SIGTERM);
    daemon.wait().await;

    // A missing file is an error that names it, for the daemon and for a client verb.
    let missing = dir.path().join("nope.env").display().to_string();
    for (verb, code) in [("serve", 1), ("pending", 2)] {
        let out = run_cli(&env_for(dir.path(), &[]), &["--env-file", &missing, verb]).await;
        assert_eq!(out.status.code(), Some(code), "{verb}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&missing) && stderr(&out).contains("No such file"),
            "{verb}: {}",
            stderr(&out)
        );
    }
}

/// A configuration file or env file someone else could have written is refused, with
/// what was found and how to fix it; so is one in a directory others can write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_and_env_files_others_can_write_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("execgate.toml");
    std::fs::write(&config, "[policy]\nsecurity = \"full\"\n").unwrap();
    let config_s = config.display().to_string();
    let env = dir.path().join("execgate.env");
    std::fs::write(&env, "EXECGATE_POLICY__SECURITY=full\n").unwrap();
    let env_s = env.display().to_string();

    let refused = |out: &std::process::Output, needles: &[&str]| {
        let err = stderr(out);
        for needle in needles {
            assert!(err.contains(needle), "{needle:?} not in {err:?}");
        }
    };
    // World-writable config file, through --config and through EXECGATE_CONFIG.
    mode(&config, 0o666);
    let out = run_cli(
        &env_for(dir.path(), &[]),
        &["--config", &config_s, "pending"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    refused(&out, &[&config_s, "0666", "chmod go-w"]);
    let out = run_cli(
        &env_for(dir.path(), &[("EXECGATE_CONFIG", &config_s)]),
        &["pending"],
    )
    .await;
    refused(&out, &[&config_s, "0666", "chmod go-w"]);
    // The implicit one ($XDG_CONFIG_HOME/execgate/execgate.toml) too.
    let xdg = dir.path().join("xdg");
    std::fs::create_dir_all(xdg.join("execgate")).unwrap();
    let implicit = xdg.join("execgate/execgate.toml");
    std::fs::write(&implicit, "").unwrap();
    mode(&implicit, 0o664);
    let xdg_s = xdg.display().to_string();
    let out = run_cli(
        &env_for(dir.path(), &[("XDG_CONFIG_HOME", &xdg_s)]),
        &["pending"],
    )
    .await;
    refused(
        &out,
        &[&implicit.display().to_string(), "0664", "chmod go-w"],
    );
    mode(&config, 0o644);

    // Group-writable env file.
    mode(&env, 0o620);
    let out = run_cli(
        &env_for(dir.path(), &[]),
        &["--env-file", &env_s, "pending"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    refused(&out, &[&env_s, "0620", "chmod go-w"]);
    mode(&env, 0o600);

    // A file in a directory others may write (no sticky bit): it could be swapped.
    let open_dir = dir.path().join("open");
    std::fs::create_dir(&open_dir).unwrap();
    let swappable = open_dir.join("execgate.toml");
    std::fs::write(&swappable, "").unwrap();
    mode(&open_dir, 0o777);
    let out = run_cli(
        &env_for(dir.path(), &[]),
        &["--config", &swappable.display().to_string(), "pending"],
    )
    .await;
    refused(
        &out,
        &[&open_dir.display().to_string(), "0777", "chmod go-w"],
    );

    // Through a symlink, the file actually opened is what is checked.
    let link = dir.path().join("link.toml");
    std::os::unix::fs::symlink(&swappable, &link).unwrap();
    let out = run_cli(
        &env_for(dir.path(), &[]),
        &["--config", &link.display().to_string(), "pending"],
    )
    .await;
    refused(&out, &[&open_dir.display().to_string(), "0777"]);

    if common::uid::can_switch_uid("config_and_env_files_others_can_write_are_refused") {
        // Owned by another user: refused, whatever its mode.
        for (flag, path) in [("--config", &config_s), ("--env-file", &env_s)] {
            std::os::unix::fs::chown(path, Some(common::uid::AGENT_UID), None).unwrap();
            let out = run_cli(&env_for(dir.path(), &[]), &[flag, path, "pending"]).await;
            assert_eq!(out.status.code(), Some(2));
            refused(&out, &[path, "uid 65534", "chown"]);
            std::os::unix::fs::chown(path, Some(0), None).unwrap();
        }
    }

    // The daemon refuses to start on it, before binding anything.
    mode(&config, 0o646);
    let out = run_cli(&env_for(dir.path(), &[]), &["--config", &config_s, "serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    refused(&out, &[&config_s, "0646", "chmod go-w"]);
    assert!(!dir.path().join("run/agent.sock").exists());
}

/// `serve` says which of this user's agents' execgate hooks will not wait the whole
/// approval timeout: their agent is told a request still waits before the owner may
/// answer. A hook installed with the default timeout is not named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_warns_of_a_hook_whose_timeout_the_approval_outlasts() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_for(dir.path(), &[]);
    for args in [
        &["hook", "install", "gemini", "--timeout", "5"][..],
        &["hook", "install", "claude-code"],
    ] {
        let out = run_cli(&env, args).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let daemon = Process::start(dir.path(), &[]).await;
    daemon.wait_ready().await;
    daemon.signal(libc::SIGTERM);
    let (_, log) = daemon.wait().await;
    assert!(
        log.contains("gemini's hook in") && log.contains("has a timeout of 5 s"),
        "{log}"
    );
    assert!(!log.contains("claude-code's hook"), "{log}");
}
