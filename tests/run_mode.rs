//! Run mode end to end: `run: true` over the agent socket and `execgate run`, with seed
//! 002's scenarios (timeouts, allowed commands, YAML output, cwd rules, argv) and the
//! limits around them (process trees, output caps, stdin, concurrency).

use execgate_testkit as common;

use std::time::Duration;

use common::*;
use execgate::model::{Record, Status, Via};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

/// Every command is approved by policy (after the hard limits): these tests are about
/// running, not asking.
const FULL: (&str, &str) = ("EXECGATE_POLICY__SECURITY", "full");

async fn run(d: &TestDaemon, body: Value) -> (StatusCode, Value) {
    let mut body = body;
    body["run"] = json!(true);
    if body.get("agent").is_none() {
        body["agent"] = json!("runner");
    }
    d.submit(body).await
}

async fn ran(d: &TestDaemon, body: Value) -> Record {
    let (status, v) = run(d, body).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    serde_json::from_value(v).unwrap()
}

/// Submits `command` with `run: true` from a waiting agent, in the background.
/// `command` in run mode, in the daemon's directory's `work/` (made here): where the
/// commands of these tests may write (run mode holds a command to its working tree,
/// docs/decisions.md#confinement, and no new entry at its top).
fn run_waiting(d: &TestDaemon, command: &str) -> tokio::task::JoinHandle<(StatusCode, Value)> {
    let client = d.agent();
    let body = json!({"agent": "runner", "command": command, "run": true, "cwd": work(d)});
    tokio::spawn(async move {
        client
            .call(Method::POST, "/v1/requests", Some(&body))
            .await
            .unwrap()
    })
}

/// The daemon's directory's `work/`, with `work/out/` in it, made if need be.
fn work(d: &TestDaemon) -> std::path::PathBuf {
    let work = d.dir.path().join("work");
    std::fs::create_dir_all(work.join("out")).unwrap();
    work
}

fn error_of(v: &Value) -> String {
    v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_runs_and_its_result_is_returned_and_recorded() {
    let d = TestDaemon::start(&[FULL]).await;
    let r = ran(&d, json!({"command": "echo out; echo err >&2; exit 3"})).await;
    assert_eq!((r.status, r.via), (Status::Approved, Some(Via::Policy)));
    let result = r.result.unwrap();
    assert_eq!(result.exit_code, Some(3));
    assert_eq!(result.stdout, "out\n");
    assert_eq!(result.stderr, "err\n");
    assert!(!result.timed_out && !result.stdout_truncated);
    // The row keeps the numbers, never the output.
    let stored = d.record(&r.id).await.result.unwrap();
    assert_eq!(stored.exit_code, Some(3));
    assert_eq!((stored.stdout_bytes, stored.stderr_bytes), (4, 4));
    assert_eq!(stored.stdout, "");
    let out = d.cli(&["history"]).await;
    assert!(stdout(&out).contains("exit 3"), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_timeout_prevents_hangs_and_a_caller_timeout_overrides_it() {
    let d = TestDaemon::start(&[FULL, ("EXECGATE_EXEC__DEFAULT_TIMEOUT_MS", "400")]).await;
    let r = ran(&d, json!({"command": "echo started; sleep 30"})).await;
    let result = r.result.unwrap();
    assert!(result.timed_out);
    assert_eq!(
        result.stdout, "started\n",
        "output up to the timeout is kept"
    );
    assert!(result.error.unwrap().contains("timed out"));
    assert!(d.record(&r.id).await.result.unwrap().timed_out);

    // A longer caller timeout lets a command the default would kill finish.
    let r = ran(
        &d,
        json!({"command": "sleep 0.6; echo done", "timeout_ms": 5000}),
    )
    .await;
    let result = r.result.unwrap();
    assert!(!result.timed_out);
    assert_eq!(result.stdout, "done\n");
    // And a shorter one cuts sooner than the default.
    let r = ran(&d, json!({"command": "sleep 30", "timeout_ms": 100})).await;
    assert!(r.result.unwrap().duration_ms < 400 + 2500);

    let (status, v) = run(&d, json!({"command": "true", "timeout_ms": 300001})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&v).contains("300000"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_process_tree_dies_on_timeout() {
    let d = TestDaemon::start(&[FULL]).await;
    let pidfile = work(&d).join("out/grandchild.pid");
    let command = format!(
        "sh -c 'sleep 60 & echo $! > {}; wait' & wait",
        pidfile.display()
    );
    let r = ran(
        &d,
        json!({"command": command, "timeout_ms": 500, "cwd": work(&d)}),
    )
    .await;
    assert!(r.result.unwrap().timed_out);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signal 0 only asks whether the process exists.
    let gone = eventually(|| async { (unsafe { libc::kill(pid, 0) }) != 0 }).await;
    assert!(gone, "the backgrounded grandchild {pid} outlived the run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_binaries_decide_what_may_run() {
    let d = TestDaemon::start(&[FULL, ("EXECGATE_POLICY__ALLOWED_BINARIES", "ls,cat")]).await;
    let r = ran(&d, json!({"command": "ls", "cwd": d.dir.path()})).await;
    assert_eq!(r.result.unwrap().exit_code, Some(0));
    let r = ran(&d, json!({"command": "pwd"})).await;
    assert_eq!(r.status, Status::Denied);
    assert!(r.result.is_none(), "a denied command never runs");
    assert!(r.error.unwrap().contains("not approved"));
    // argv with a program that is not allowed.
    let r = ran(&d, json!({"argv": ["python3", "-c", "print(1)"]})).await;
    assert_eq!(r.status, Status::Denied);
    assert!(r.result.is_none());

    let d = TestDaemon::start(&[FULL, ("EXECGATE_POLICY__ALLOWED_BINARIES", "*")]).await;
    let r = ran(&d, json!({"command": "whoami"})).await;
    assert_eq!(r.result.unwrap().exit_code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argv_runs_the_program_with_its_arguments_and_input() {
    let d = TestDaemon::start(&[FULL]).await;
    let r = ran(
        &d,
        json!({"argv": ["printf", "%s|", "a b", "c;d", "$(id)"]}),
    )
    .await;
    assert_eq!(r.result.unwrap().stdout, "a b|c;d|$(id)|");
    let r = ran(&d, json!({"argv": ["cat"], "input": "to stdin\n"})).await;
    assert_eq!(r.result.unwrap().stdout, "to stdin\n");
    // Without input, stdin is empty: cat ends at once.
    let r = ran(&d, json!({"argv": ["cat"], "timeout_ms": 5000})).await;
    let result = r.result.unwrap();
    assert_eq!((result.stdout.as_str(), result.timed_out), ("", false));
    // The environment is the minimal one, plus what neutralises git's program-valued
    // settings (core.fsmonitor, core.hooksPath, core.pager, …) for any git the command
    // runs, and the configuration other programs read from the home directory (npm's,
    // pip's: `programs::Config::run_env`).
    let r = ran(&d, json!({"argv": ["env"]})).await;
    let stdout = r.result.unwrap().stdout;
    let names: Vec<String> = stdout
        .lines()
        .map(|l| l.split('=').next().unwrap().to_string())
        .collect();
    assert!(
        names.iter().all(
            |n| ["PATH", "HOME", "LANG", "USER", "TMPDIR"].contains(&n.as_str())
                || n.starts_with("GIT_CONFIG_")
                || execgate::policy::progconfig::neutralising_env()
                    .iter()
                    .any(|(k, _)| k == n)
        ),
        "{names:?}"
    );
    assert!(
        stdout.contains("GIT_CONFIG_KEY_0=core.fsmonitor\n")
            && stdout.contains("GIT_CONFIG_VALUE_0=false\n")
            && stdout.contains("GIT_CONFIG_KEY_1=core.hookspath\n")
            && stdout.contains("=core.pager\n"),
        "{stdout}"
    );
    let r = ran(&d, json!({"argv": ["no-such-program-xyz"]})).await;
    let result = r.result.unwrap();
    assert_eq!(result.exit_code, None);
    assert!(result.error.unwrap().contains("no-such-program-xyz"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_is_capped_and_memory_stays_bounded() {
    let d = TestDaemon::start(&[FULL, ("EXECGATE_EXEC__MAX_OUTPUT_BYTES", "65536")]).await;
    let r = ran(
        &d,
        json!({"command": "yes execgate | head -c 100000000; printf '\\377\\376' >&2"}),
    )
    .await;
    let result = r.result.unwrap();
    assert_eq!(result.exit_code, Some(0));
    assert!(result.stdout.len() <= 65536);
    assert!(result.stdout_truncated);
    assert_eq!(result.stdout_bytes, 100_000_000);
    assert!(
        result.stderr_lossy,
        "non-UTF-8 bytes are returned lossily, flagged"
    );
    assert!(result.stderr.contains('\u{FFFD}'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cwd_relative_absolute_and_missing() {
    let d = TestDaemon::start(&[FULL]).await;
    // Relative: against the daemon's working directory (here, the test's: the crate).
    let here = std::env::current_dir().unwrap().canonicalize().unwrap();
    let r = ran(&d, json!({"command": "pwd", "cwd": "src"})).await;
    assert_eq!(
        r.result.unwrap().stdout.trim(),
        here.join("src").display().to_string()
    );
    // Omitted: the daemon's working directory.
    let r = ran(&d, json!({"command": "pwd"})).await;
    assert_eq!(r.result.unwrap().stdout.trim(), here.display().to_string());
    // Absolute.
    let abs = d.dir.path().canonicalize().unwrap();
    let r = ran(&d, json!({"command": "pwd", "cwd": abs})).await;
    assert_eq!(r.result.unwrap().stdout.trim(), abs.display().to_string());
    // Missing: a clear error, and nothing is recorded or run.
    let marker = d.dir.path().join("ran");
    let (status, v) = run(
        &d,
        json!({"command": format!("touch {}", marker.display()), "cwd": "does-not-exist"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&v).contains("does not exist"), "{v}");
    assert!(!marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_cwd_roots_inside_outside_unset_and_unresolvable() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("monorepo");
    std::fs::create_dir_all(root.join("frontend")).unwrap();
    let outside = base.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
    let root_s = root.display().to_string();

    let d = TestDaemon::start(&[FULL, ("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", &root_s)]).await;
    let r = ran(&d, json!({"command": "pwd", "cwd": root.join("frontend")})).await;
    assert_eq!(r.result.unwrap().exit_code, Some(0));
    // `..` is resolved before the check.
    let (status, v) = run(
        &d,
        json!({"command": "pwd", "cwd": root.join("frontend/../../elsewhere")}),
    )
    .await;
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("CWD_NOT_ALLOWED")),
        "{v}"
    );
    let (status, v) = run(&d, json!({"command": "pwd", "cwd": "/tmp"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&v).contains("allowed_cwd_roots"), "{v}");
    // A symlink inside the root that points outside it is outside.
    let (status, _) = run(&d, json!({"command": "pwd", "cwd": root.join("escape")})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // Checked before anyone is asked: nothing was recorded for the refused ones.
    let (_, list) = d
        .admin()
        .call(Method::GET, "/v1/requests", None)
        .await
        .unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);

    // Unset: anything existing is fine.
    let d = TestDaemon::start(&[FULL]).await;
    assert_eq!(
        ran(&d, json!({"command": "pwd", "cwd": "/tmp"}))
            .await
            .result
            .unwrap()
            .exit_code,
        Some(0)
    );

    // A root that cannot be resolved: every request with a cwd is refused.
    let roots = format!("{root_s},/path/that/does/not/exist");
    let d = TestDaemon::start(&[FULL, ("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", &roots)]).await;
    let (status, v) = run(&d, json!({"command": "pwd", "cwd": root.join("frontend")})).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(v["error"]["code"], "CONFIG_ERROR");
    assert!(error_of(&v).contains("/path/that/does/not/exist"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_beyond_the_limit_queue_and_all_finish() {
    let d = TestDaemon::start(&[FULL, ("EXECGATE_EXEC__MAX_CONCURRENT", "2")]).await;
    let mut tasks = Vec::new();
    for i in 0..5 {
        tasks.push(run_waiting(&d, &format!("sleep 0.4; echo {i}")));
    }
    // While they run, some wait: the queue is visible on the admin socket and in the CLI.
    let mut saw_queue = false;
    for _ in 0..100 {
        let (_, runs) = d.admin().call(Method::GET, "/v1/runs", None).await.unwrap();
        let runs = runs.as_array().unwrap().clone();
        let running = runs.iter().filter(|e| !e["started_at"].is_null()).count();
        assert!(running <= 2, "{runs:?}");
        if runs.iter().any(|e| e["started_at"].is_null()) {
            saw_queue = true;
            let out = d.cli(&["pending"]).await;
            assert!(stdout(&out).contains("queued"), "{}", stdout(&out));
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(saw_queue, "five runs with two slots must queue");
    for (i, t) in tasks.into_iter().enumerate() {
        let (status, v) = t.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(v["result"]["stdout"], format!("{i}\n"));
    }
    let (_, runs) = d.admin().call(Method::GET, "/v1/runs", None).await.unwrap();
    assert_eq!(runs, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execgate_run_prints_output_and_exits_with_the_code() {
    let d = TestDaemon::start(&[FULL, ("EXECGATE_POLICY__DENY", "reboot*")]).await;
    let out = d
        .cli(&["run", "--", "echo hello; echo oops >&2; exit 7"])
        .await;
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(stdout(&out), "hello\n");
    assert_eq!(stderr(&out), "oops\n");

    let out = d.cli(&["run", "--format", "yaml", "--", "echo hi"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "exit_code: 0\nstdout: \"hi\\n\"\nstderr: \"\"\n"
    );

    let out = d
        .cli(&["run", "--timeout-ms", "200", "--", "sleep 20"])
        .await;
    assert_eq!(out.status.code(), Some(124));
    let out = d
        .cli(&[
            "run",
            "--format",
            "yaml",
            "--timeout-ms",
            "200",
            "--",
            "sleep 20",
        ])
        .await;
    assert!(stdout(&out).contains("timed_out: true"), "{}", stdout(&out));

    let out = d.cli(&["run", "--", "reboot now"]).await;
    assert_eq!(out.status.code(), Some(126));
    assert!(stderr(&out).contains("not approved"), "{}", stderr(&out));

    let out = d
        .cli(&["run", "--", "printf", "%s", "argv; not a shell"])
        .await;
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(0), "argv; not a shell")
    );

    let out = d
        .cli(&["run", "--cwd", "/does/not/exist", "--", "true"])
        .await;
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr(&out).contains("does not exist"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_waits_for_a_human_and_runs_only_once_approved() {
    let d = TestDaemon::start(&[]).await;
    let marker = work(&d).join("out/ran");
    let command = format!("touch {}", marker.display());
    let waiting = run_waiting(&d, &command);
    let pending = d.pending_for(&command).await;
    assert!(!marker.exists(), "nothing runs before a human decides");
    d.decide(&pending.id, "deny").await;
    let (_, v) = waiting.await.unwrap();
    assert_eq!(v["status"], "denied");
    assert!(v["result"].is_null());
    assert!(!marker.exists());

    let waiting = run_waiting(&d, &command);
    let pending = d.pending_for(&command).await;
    d.decide(&pending.id, "allow-once").await;
    let (_, v) = waiting.await.unwrap();
    assert_eq!(v["result"]["exit_code"], 0);
    assert!(marker.exists());

    // Run mode can be turned off: then only deciding is offered.
    let off = TestDaemon::start(&[("EXECGATE_EXEC__ENABLED", "false")]).await;
    let (status, v) = off
        .submit(json!({"agent": "runner", "command": "true", "run": true}))
        .await;
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("RUN_DISABLED"))
    );

    // run needs a waiting agent: its output has nowhere else to go.
    let (status, v) = d
        .submit(json!({"agent": "runner", "command": "true", "run": true, "wait": false}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&v).contains("wait"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_never_carry_a_commands_output() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = common::process::Process::start(
        dir.path(),
        &[
            FULL,
            ("EXECGATE_LOG_FORMAT", "json"),
            ("EXECGATE_LOG", "debug"),
        ],
    )
    .await;
    let out = run_cli(&daemon.env, &["run", "--", "echo SECRET-OUTPUT-42"]).await;
    assert_eq!(stdout(&out), "SECRET-OUTPUT-42\n");
    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines.len() > 3, "{log}");
    for line in &lines {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v["fields"].is_object(), "{line}");
    }
    assert!(log.contains("approved command finished"), "{log}");
    assert!(!log.contains("SECRET-OUTPUT-42"), "{log}");
}

/// A command the daemon runs shares the daemon's uid, and so could read
/// `/proc/<daemon>/environ`, where secrets such as a bot token live: the daemon marks
/// itself non-dumpable, and the kernel refuses. Only meaningful with a daemon that is not
/// root (root may read any process's environment), so the daemon runs as uid 65534.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_the_daemon_runs_cannot_read_its_environment() {
    use common::uid::{AGENT_GID, AGENT_UID, can_switch_uid};
    if !can_switch_uid("commands_the_daemon_runs_cannot_read_its_environment") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(dir.path(), Some(AGENT_UID), Some(AGENT_GID)).unwrap();
    const SECRET: &str = "s3cret-that-must-not-leak";
    let daemon = common::process::Process::start_with(
        dir.path(),
        &[FULL, ("SOME_TOKEN", SECRET)],
        common::process::Options {
            as_user: Some((AGENT_UID, AGENT_GID)),
            ..Default::default()
        },
    )
    .await;
    let environ = format!("/proc/{}/environ", daemon.pid());
    let (status, v) = daemon
        .submit(&json!({"agent": "runner", "argv": ["cat", environ], "run": true}))
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let result = &v["result"];
    assert!(
        !result.to_string().contains(SECRET),
        "the daemon's environment leaked: {result}"
    );
    assert_ne!(result["exit_code"], json!(0), "{result}");
    assert!(
        result["stderr"]
            .as_str()
            .unwrap_or_default()
            .contains("Permission denied"),
        "{result}"
    );
    // The same read of its own environment works for a command (the flag is the
    // daemon's, not inherited across exec).
    let (_, v) = daemon
        .submit(
            &json!({"agent": "runner", "argv": ["sh", "-c", "cat /proc/$$/environ"], "run": true}),
        )
        .await;
    assert_eq!(v["result"]["exit_code"], json!(0), "{v}");
    daemon.signal(libc::SIGTERM);
    daemon.wait().await;
}

/// An empty entry of `PATH` (`::`, a leading or trailing `:`) means the working directory,
/// as does `.`, and `bin` is relative to it: a command run in a directory an agent can
/// write would find the agent's programs first. Run mode drops such entries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_mode_keeps_only_absolute_path_entries() {
    let dir = tempfile::tempdir().unwrap();
    let daemon =
        common::process::Process::start(dir.path(), &[FULL, ("PATH", ":/usr/bin::.:bin:/bin:")])
            .await;
    let (status, v) = daemon
        .submit(&json!({"agent": "runner", "argv": ["printenv", "PATH"], "run": true}))
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["result"]["stdout"], json!("/usr/bin:/bin\n"), "{v}");
    daemon.signal(libc::SIGTERM);
    daemon.wait().await;
}
