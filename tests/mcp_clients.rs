//! `execgate mcp` driven by MCP clients no one here wrote: the official Python SDK (PyPI
//! `mcp`, through tests/fixtures/mcp_driver.py) and the MCP Inspector's CLI (npm), both
//! pinned and installed by `.ci/peers` (on first use, or by CI). Each run-mode scenario
//! (timeouts, YAML, cwd, ALLOWED_COMMANDS, ALLOWED_CWD_ROOTS, argv), a human approving
//! while the call waits, a denial, the daemon down, malformed arguments, a cancelled call
//! and a client that leaves mid-wait. A client that cannot be installed fails these
//! tests, saying why.

use execgate_testkit as common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::peers::{mcp_inspector, mcp_python};
use common::{TestDaemon, execgate_binary};
use execgate::model::{Record, Status, Via};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

const FULL: (&str, &str) = ("EXECGATE_POLICY__SECURITY", "full");

/// The environment `execgate mcp` gets: the daemon's paths, PATH, and `extra`.
fn server_env(d: &TestDaemon, extra: &[(&str, &str)]) -> serde_json::Map<String, Value> {
    let mut env: serde_json::Map<String, Value> =
        d.env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    env.insert(
        "PATH".into(),
        json!(std::env::var("PATH").unwrap_or_default()),
    );
    env.insert("EXECGATE_LOG".into(), json!("error"));
    for (k, v) in extra {
        env.insert(k.to_string(), json!(v));
    }
    env
}

fn session(d: &TestDaemon, env: &[(&str, &str)], cwd: &Path, mode: &str, steps: Value) -> Value {
    json!({
        "server": {
            "command": execgate_binary(),
            "args": ["mcp"],
            "env": server_env(d, env),
            "cwd": cwd,
        },
        "mode": mode,
        "steps": steps,
    })
}

/// The Python driver, running a plan; its lines arrive on the returned channel as it
/// prints them, so a test can act (approve, deny) while a call waits.
struct Python {
    lines: tokio::sync::mpsc::UnboundedReceiver<Value>,
    child: tokio::process::Child,
}

fn python(d: &TestDaemon, sessions: Vec<Value>) -> Python {
    let plan = d.dir.path().join(format!("plan-{}.json", rand_suffix()));
    std::fs::write(&plan, json!({"sessions": sessions}).to_string()).unwrap();
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_driver.py");
    let mut child = tokio::process::Command::new(mcp_python())
        .arg(driver)
        .arg(&plan)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the Python MCP client starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(stdout).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("the driver printed {line:?}: {e}"));
            if tx.send(value).is_err() {
                break;
            }
        }
    });
    Python { lines, child }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}

impl Python {
    /// The next line the driver prints (bounded).
    async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(60), self.lines.recv())
            .await
            .expect("the Python client answers in time")
            .expect("the Python client printed a line (see its stderr above)")
    }

    /// Every line until `done`, and the driver's exit.
    async fn rest(mut self) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let line = self.next().await;
            if line["done"] == true {
                break;
            }
            out.push(line);
        }
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("the driver exits")
            .unwrap();
        assert!(status.success(), "the driver failed: {status}");
        out
    }
}

/// The request a result names (its structured content's `id`), as the daemon recorded it.
async fn record(d: &TestDaemon, line: &Value) -> Record {
    let id = line["structured"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("structured names no request: {line}"));
    d.record(id).await
}

fn text(line: &Value) -> &str {
    line["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {line}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_runs_the_run_mode_scenarios() {
    let d = TestDaemon::start(&[FULL, ("EXECGATE_EXEC__DEFAULT_TIMEOUT_MS", "400")]).await;
    let root = d.dir.path().canonicalize().unwrap();
    let repo = root.join("repos/monorepo");
    std::fs::create_dir_all(repo.join("frontend")).unwrap();
    let roots = repo.display().to_string();
    let bad_roots = format!("{roots},/path/that/does/not/exist");
    let sessions = vec![
        // No narrowing, run from repos/monorepo.
        session(
            &d,
            &[],
            &repo,
            "auto",
            json!([
                {"list": true},
                // Only step 2 is held to the default timeout (400 ms here); the others
                // give their own, so that a loaded machine (Python starting slowly) does
                // not time them out.
                {"call": "execute_command", "args": {"command": "echo hello; echo oops >&2", "timeout_ms": 10000}},
                {"call": "execute_command", "args": {"command": "echo started; sleep 30"}},
                {"call": "execute_command", "args": {"command": "sleep 0.6; echo done", "timeout_ms": 5000}},
                {"call": "execute_command", "args": {"command": "pwd", "timeout_ms": 10000}},
                {"call": "execute_command", "args": {"command": "pwd", "cwd": "frontend", "timeout_ms": 10000}},
                {"call": "execute_command", "args": {"command": "pwd", "cwd": repo.join("frontend"), "timeout_ms": 10000}},
                {"call": "execute_command", "args": {"command": "pwd", "cwd": "does-not-exist"}},
                {"call": "execute_process", "args": {"file": "python3", "args": ["-c", "print(6*7)"], "timeout_ms": 10000}},
                {"call": "execute_process", "args": {"file": "cat", "input": "piped\n", "timeout_ms": 10000}},
            ]),
        ),
        // ALLOWED_COMMANDS=ls,cat
        session(
            &d,
            &[("ALLOWED_COMMANDS", "ls,cat")],
            &repo,
            "auto",
            json!([
                {"call": "execute_command", "args": {"command": "ls"}},
                {"call": "execute_command", "args": {"command": "pwd"}},
                {"call": "execute_process", "args": {"file": "python3", "args": ["-V"]}},
            ]),
        ),
        // ALLOWED_COMMANDS=*
        session(
            &d,
            &[("ALLOWED_COMMANDS", "*")],
            &repo,
            "legacy",
            json!([
                {"list": true},
                {"call": "execute_command", "args": {"command": "whoami"}},
            ]),
        ),
        // ALLOWED_CWD_ROOTS
        session(
            &d,
            &[("ALLOWED_CWD_ROOTS", &roots)],
            &repo,
            "auto",
            json!([
                {"call": "execute_command", "args": {"command": "pwd", "cwd": repo.join("frontend")}},
                {"call": "execute_command", "args": {"command": "pwd", "cwd": "/tmp"}},
            ]),
        ),
        session(
            &d,
            &[("ALLOWED_CWD_ROOTS", &bad_roots)],
            &repo,
            "auto",
            json!([
                {"call": "execute_command", "args": {"command": "pwd", "cwd": repo.join("frontend")}},
            ]),
        ),
    ];
    let out = python(&d, sessions).rest().await;
    let at = |s: u64, step: u64| {
        out.iter()
            .find(|l| l["session"] == s && l["step"] == step)
            .unwrap_or_else(|| panic!("no line for session {s} step {step}"))
    };
    let tools = &out[0];
    assert_eq!(tools["protocol"], "2026-07-28");
    assert_eq!(
        tools["tools"],
        json!([
            "execute_command",
            "execute_process",
            "request_approval",
            "get_request"
        ])
    );
    // YAML with exit_code, stdout, stderr; the short result beside it.
    let l = at(0, 1);
    assert_eq!(l["is_error"], false);
    assert_eq!(
        text(l),
        "exit_code: 0\nstdout: \"hello\\n\"\nstderr: \"oops\\n\"\n"
    );
    assert_eq!(record(&d, l).await.front.as_deref(), Some("mcp"));
    // The default timeout (400 ms here) killed it; the output so far is kept.
    let l = at(0, 2);
    assert_eq!(l["is_error"], true);
    assert!(
        text(l).contains("stdout: \"started\\n\"") && text(l).contains("timed out after 400 ms"),
        "{l}"
    );
    // The caller's timeout was used instead.
    let l = at(0, 3);
    assert_eq!(l["is_error"], false, "{l}");
    assert!(text(l).contains("done"));
    // cwd omitted, relative, absolute, missing.
    let frontend = format!("stdout: \"{}\\n\"", repo.join("frontend").display());
    assert!(text(at(0, 4)).contains(&format!("stdout: \"{}\\n\"", repo.display())));
    assert!(text(at(0, 5)).contains(&frontend));
    assert!(text(at(0, 6)).contains(&frontend));
    let l = at(0, 7);
    assert_eq!(l["is_error"], true);
    assert!(text(l).contains("does not exist"), "{l}");
    // execute_process: argv, and stdin.
    assert!(
        text(at(0, 8)).starts_with("exit_code: 0\nstdout: \"42\\n\""),
        "{}",
        at(0, 8)
    );
    assert!(text(at(0, 9)).contains("stdout: \"piped\\n\""));
    // ALLOWED_COMMANDS=ls,cat
    assert_eq!(at(1, 0)["is_error"], false);
    for step in [1, 2] {
        let l = at(1, step);
        assert_eq!(l["is_error"], true);
        assert!(text(l).contains("not in ALLOWED_COMMANDS (ls,cat)"), "{l}");
    }
    // ALLOWED_COMMANDS=*, on the 2025-11-25 handshake.
    assert_eq!(at(2, 0)["protocol"], "2025-11-25");
    assert_eq!(at(2, 1)["is_error"], false, "{}", at(2, 1));
    // ALLOWED_CWD_ROOTS: inside, outside, and a root that cannot be resolved.
    assert_eq!(at(3, 0)["is_error"], false);
    assert!(text(at(3, 1)).contains("is not inside ALLOWED_CWD_ROOTS"));
    assert!(text(at(4, 0)).starts_with("configuration error: ALLOWED_CWD_ROOTS"));
    // Nothing refused above reached the daemon: 8 runs, and one in each narrowed session
    // but the last.
    let (_, list) = d
        .admin()
        .call(hyper::Method::GET, "/v1/requests?limit=100", None)
        .await
        .unwrap();
    assert_eq!(list.as_array().unwrap().len(), 8 + 1 + 1 + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_waits_for_the_owner_and_cancels() {
    let mut d = TestDaemon::start(&[]).await;
    let here = d.dir.path().to_path_buf();
    let marker = here.join("ran");
    let touch = format!("touch {}", marker.display());
    let sessions = vec![session(
        &d,
        &[],
        &here,
        "auto",
        json!([
            {"call": "execute_command", "args": {"command": "ls /"}},
            {"call": "execute_command", "args": {"command": touch}},
            {"call": "execute_command", "args": {"command": "touch cancelled", "cwd": here}, "cancel_after": 2.5},
            {"call": "execute_command", "args": {"comand": "ls"}},
            {"call": "execute_process", "args": {"file": "ls", "args": [1]}},
            {"call": "execute_command", "args": {"command": "touch left", "cwd": here}, "leave_after": 2.5},
        ]),
    )];
    let mut py = python(&d, sessions);
    // 1. The owner approves while the call waits; progress meanwhile.
    let p = d.pending_for("ls /").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(d.cli(&["approve", &p.short_id]).await.status.success());
    let l = py.next().await;
    assert_eq!(l["is_error"], false, "{l}");
    assert!(l["progress"].as_u64().unwrap() >= 1, "{l}");
    assert_eq!(record(&d, &l).await.via, Some(Via::Cli));
    // 2. Denied: an error naming the short id and how to approve from chat.
    let p = d.pending_for(&touch).await;
    assert!(d.cli(&["deny", &p.short_id]).await.status.success());
    let l = py.next().await;
    assert_eq!(l["is_error"], true);
    assert!(
        text(&l).contains(&format!("/approve {}", p.short_id)),
        "{l}"
    );
    assert!(!marker.exists());
    // 3. Cancelled by the client: the request is withdrawn.
    let p = d.pending_for("touch cancelled").await;
    let l = py.next().await;
    assert_eq!(l["cancelled"], true, "{l}");
    let r = d.terminal(&p.id).await;
    assert_eq!((r.status, r.via), (Status::Cancelled, Some(Via::Withdrawn)));
    // 4, 5. Malformed arguments: JSON-RPC errors naming the field.
    let l = py.next().await;
    assert_eq!(l["rpc_error"]["code"], -32602, "{l}");
    assert!(
        l["rpc_error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `comand`")
    );
    let l = py.next().await;
    assert!(
        l["rpc_error"]["message"]
            .as_str()
            .unwrap()
            .contains("`args[0]`"),
        "{l}"
    );
    // 6. The client leaves mid-wait: the request is cancelled.
    let p = d.pending_for("touch left").await;
    let l = py.next().await;
    assert_eq!(l["left"], true);
    let r = d.terminal(&p.id).await;
    assert_eq!(
        (r.status, r.via),
        (Status::Cancelled, Some(Via::Disconnect))
    );
    py.rest().await;
    assert!(!here.join("cancelled").exists() && !here.join("left").exists());

    // The daemon down: a clear tool error, and the server goes on answering.
    d.stop().await;
    let sessions = vec![session(
        &d,
        &[],
        &here,
        "auto",
        json!([
            {"call": "execute_command", "args": {"command": "ls"}},
            {"call": "request_approval", "args": {"command": "ls"}},
            {"list": true},
        ]),
    )];
    let out = python(&d, sessions).rest().await;
    for l in &out[..2] {
        assert_eq!(l["is_error"], true);
        assert!(text(l).contains("cannot connect to execgate"), "{l}");
    }
    // Claude Code alone is offered approval_prompt.
    assert_eq!(out[2]["tools"].as_array().unwrap().len(), 4);
}

/// `mcp-inspector --cli` against a config naming `execgate mcp` (with `env`), running
/// `args`, in the daemon's directory.
fn inspector_command(
    d: &TestDaemon,
    env: &[(&str, &str)],
    args: &[&str],
) -> tokio::process::Command {
    let config = d
        .dir
        .path()
        .join(format!("inspector-{}.json", rand_suffix()));
    let servers = json!({"mcpServers": {"execgate": {
        "command": execgate_binary(), "args": ["mcp"], "env": server_env(d, env),
    }}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut command = tokio::process::Command::new(mcp_inspector());
    command
        .args(["--cli", "--config"])
        .arg(&config)
        .args(["--server", "execgate"])
        .args(args)
        .env("MCP_INSPECTOR_SECRET_STORE", "memory")
        .current_dir(d.dir.path())
        .kill_on_drop(true);
    command
}

/// The Inspector run to its end: its exit status, stdout and stderr.
async fn inspector(d: &TestDaemon, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    tokio::time::timeout(
        Duration::from_secs(90),
        inspector_command(d, env, args).output(),
    )
    .await
    .expect("the Inspector finishes")
    .expect("the Inspector runs")
}

fn call_args<'a>(tool: &'a str, args: &'a [&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--method", "tools/call", "--tool-name", tool];
    for a in args {
        v.push("--tool-arg");
        v.push(a);
    }
    v
}

fn result_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the Inspector printed no JSON result ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Asserts that the Inspector exited 0 (the tool result was not an error).
#[track_caller]
fn exited_ok(out: &std::process::Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn result_text(v: &Value) -> String {
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_runs_the_run_mode_scenarios() {
    let d = TestDaemon::start(&[FULL, ("EXECGATE_EXEC__DEFAULT_TIMEOUT_MS", "400")]).await;
    let out = inspector(&d, &[], &["--method", "tools/list"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools = result_of(&out);
    assert_eq!(tools["tools"].as_array().unwrap().len(), 4);
    // Either protocol era: the 2025-11-25 handshake, or 2026-07-28's discovery.
    for era in ["legacy", "modern"] {
        let mut args = vec!["--protocol-era", era];
        args.extend(call_args("execute_command", &["command=echo era"]));
        let out = inspector(&d, &[], &args).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{era}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            result_text(&result_of(&out)).contains("stdout: \"era\\n\""),
            "{era}"
        );
    }

    // Runs: YAML text, the short result as structuredContent, exit 0.
    let out = inspector(&d, &[], &call_args("execute_command", &["command=echo hi"])).await;
    exited_ok(&out);
    let v = result_of(&out);
    assert_eq!(
        result_text(&v),
        "exit_code: 0\nstdout: \"hi\\n\"\nstderr: \"\"\n"
    );
    assert_eq!(v["structuredContent"]["status"], "approved");
    // The default timeout, then the caller's: isError makes the Inspector exit 5.
    let out = inspector(
        &d,
        &[],
        &call_args("execute_command", &["command=echo started; sleep 30"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(5));
    let v = result_of(&out);
    assert!(result_text(&v).contains("timed out after 400 ms"), "{v}");
    assert!(result_text(&v).contains("started"));
    let out = inspector(
        &d,
        &[],
        &call_args(
            "execute_command",
            &["command=sleep 0.6; echo late", "timeout_ms=5000"],
        ),
    )
    .await;
    exited_ok(&out);
    // cwd missing: an error, nothing run.
    let out = inspector(
        &d,
        &[],
        &call_args("execute_command", &["command=pwd", "cwd=nowhere"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(5));
    assert!(result_text(&result_of(&out)).contains("does not exist"));
    // ALLOWED_COMMANDS and execute_process.
    let env = [("ALLOWED_COMMANDS", "echo")];
    let out = inspector(
        &d,
        &env,
        &call_args("execute_process", &["file=echo", r#"args=["a","b"]"#]),
    )
    .await;
    exited_ok(&out);
    assert!(result_text(&result_of(&out)).contains("stdout: \"a b\\n\""));
    let out = inspector(
        &d,
        &env,
        &call_args("execute_process", &["file=python3", r#"args=["-V"]"#]),
    )
    .await;
    assert_eq!(out.status.code(), Some(5));
    assert!(result_text(&result_of(&out)).contains("not in ALLOWED_COMMANDS (echo)"));
    // ALLOWED_CWD_ROOTS that cannot be resolved.
    let env = [("ALLOWED_CWD_ROOTS", "/path/that/does/not/exist")];
    let out = inspector(
        &d,
        &env,
        &call_args("execute_command", &["command=pwd", "cwd=/tmp"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(5));
    assert!(result_text(&result_of(&out)).starts_with("configuration error"));
    // Malformed arguments: an error naming the field.
    let out = inspector(
        &d,
        &[],
        &call_args("execute_command", &["command=ls", "nope=1"]),
    )
    .await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown field `nope`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_waits_for_the_owner() {
    let d = TestDaemon::start(&[]).await;
    // Approved while the Inspector waits.
    let approve = async {
        let p = d.pending_for("ls /").await;
        assert!(d.cli(&["approve", &p.short_id]).await.status.success());
    };
    let args = call_args("execute_command", &["command=ls /"]);
    let (out, ()) = tokio::join!(inspector(&d, &[], &args), approve);
    exited_ok(&out);
    assert_eq!(result_of(&out)["structuredContent"]["via"], "cli");
    // Denied: exit 5, the text names the short id.
    let marker = d.dir.path().join("ran");
    let touch = format!("touch {}", marker.display());
    let arg = format!("command={touch}");
    let deny = async {
        let p = d.pending_for(&touch).await;
        assert!(d.cli(&["deny", &p.short_id]).await.status.success());
        p.short_id
    };
    let arg = [arg.as_str()];
    let args = call_args("execute_command", &arg);
    let (out, short) = tokio::join!(inspector(&d, &[], &args), deny);
    assert_eq!(out.status.code(), Some(5));
    assert!(result_text(&result_of(&out)).contains(&format!("/approve {short}")));
    assert!(!marker.exists());
    // The client killed mid-wait: the server's stdin ends, the request is cancelled.
    let args = call_args("execute_command", &["command=touch left"]);
    let mut client = inspector_command(&d, &[], &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let p = d.pending_for("touch left").await;
    client.kill().await.unwrap();
    let r = d.terminal(&p.id).await;
    assert_eq!(
        (r.status, r.via),
        (Status::Cancelled, Some(Via::Disconnect))
    );
    assert!(!d.dir.path().join("left").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_with_the_daemon_down_gets_a_clear_tool_error() {
    let mut d = TestDaemon::start(&[]).await;
    d.stop().await;
    let out = inspector(&d, &[], &call_args("execute_command", &["command=ls"])).await;
    assert_eq!(out.status.code(), Some(5));
    let text = result_text(&result_of(&out));
    assert!(text.contains("cannot connect to execgate at"), "{text}");
    assert!(text.contains("nothing ran"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_cwd_and_narrowing() {
    let d = TestDaemon::start(&[FULL]).await;
    let root = d.dir.path().canonicalize().unwrap();
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join("frontend")).unwrap();
    std::fs::create_dir_all(root.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(root.join("elsewhere"), repo.join("escape")).unwrap();
    let frontend = repo.join("frontend").display().to_string();
    let shows = |out: &std::process::Output, dir: &str| {
        exited_ok(out);
        let text = result_text(&result_of(out));
        assert!(text.contains(&format!("stdout: \"{dir}\\n\"")), "{text}");
    };
    // The server runs in the daemon's directory: a relative cwd is taken from there.
    let out = inspector(
        &d,
        &[],
        &call_args("execute_command", &["command=pwd", "cwd=repo/frontend"]),
    )
    .await;
    shows(&out, &frontend);
    let abs = format!("cwd={frontend}");
    let out = inspector(
        &d,
        &[],
        &call_args("execute_command", &["command=pwd", &abs]),
    )
    .await;
    shows(&out, &frontend);
    // ALLOWED_CWD_ROOTS: inside runs; outside, and out through a symlink, does not.
    let roots = repo.display().to_string();
    let env = [("ALLOWED_CWD_ROOTS", roots.as_str())];
    let out = inspector(
        &d,
        &env,
        &call_args("execute_command", &["command=pwd", &abs]),
    )
    .await;
    shows(&out, &frontend);
    for outside in ["cwd=/tmp", "cwd=repo/escape"] {
        let out = inspector(
            &d,
            &env,
            &call_args("execute_command", &["command=pwd", outside]),
        )
        .await;
        assert_eq!(out.status.code(), Some(5), "{outside}");
        let text = result_text(&result_of(&out));
        assert!(text.contains("is not inside ALLOWED_CWD_ROOTS"), "{text}");
    }
    // ALLOWED_COMMANDS=ls,cat, then *.
    let env = [("ALLOWED_COMMANDS", "ls,cat")];
    let out = inspector(
        &d,
        &env,
        &call_args("execute_command", &["command=ls repo"]),
    )
    .await;
    shows(&out, "escape\\nfrontend");
    let out = inspector(&d, &env, &call_args("execute_command", &["command=pwd"])).await;
    assert_eq!(out.status.code(), Some(5));
    assert!(result_text(&result_of(&out)).contains("\"pwd\" is not in ALLOWED_COMMANDS (ls,cat)"));
    let env = [("ALLOWED_COMMANDS", "*")];
    let out = inspector(&d, &env, &call_args("execute_command", &["command=whoami"])).await;
    exited_ok(&out);
    // execute_process with stdin.
    let out = inspector(
        &d,
        &[],
        &call_args("execute_process", &["file=cat", "input=from stdin\n"]),
    )
    .await;
    shows(&out, "from stdin");
}
