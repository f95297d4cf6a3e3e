//! Tool requests (`"tool": {"name", "input"}`) and protected paths, over the sockets of
//! a real daemon: the tool pipeline, tool rules, "always" storing one, and a tool call
//! or command that would write execgate's own files or an agent's guard settings being
//! dangerous and put to a human.

use execgate_testkit as common;

use std::path::Path;

use common::TestDaemon;
use common::uid::{as_agent, can_switch_uid, let_agent_in};
use execgate::client::Client;
use execgate::model::{Record, Risk, RuleKind, Status, Via};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

async fn tool(d: &TestDaemon, name: &str, input: Value, cwd: &Path) -> Record {
    let (status, body) = d
        .submit(
            json!({"agent": "claude-code", "tool": {"name": name, "input": input},
                        "cwd": cwd, "wait": false, "front": "hook:claude-code"}),
        )
        .await;
    assert!(
        status == StatusCode::OK || status == StatusCode::ACCEPTED,
        "{status}: {body}"
    );
    serde_json::from_value(body).unwrap()
}

async fn command(d: &TestDaemon, line: &str, cwd: &Path) -> Record {
    let (status, body) = d
        .submit(json!({"agent": "claude-code", "command": line, "cwd": cwd, "wait": false}))
        .await;
    assert!(
        status == StatusCode::OK || status == StatusCode::ACCEPTED,
        "{status}: {body}"
    );
    serde_json::from_value(body).unwrap()
}

/// A project directory outside the daemon's own, with a git repository's layout.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    std::fs::write(dir.path().join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_is_asked_and_always_stores_a_tool_rule_for_its_name() {
    let d = TestDaemon::start(&[]).await;
    let p = project();
    let input = json!({"file_path": "src/lib.rs", "content": "fn main() {}\n"});
    let r = tool(&d, "Write", input.clone(), p.path()).await;
    assert_eq!((r.status, r.risk), (Status::Pending, Risk::NeedsReview));
    let call = r.command.tool().expect("the record carries the tool call");
    assert_eq!((call.name.as_str(), &call.input), ("Write", &input));
    assert_eq!(r.front.as_deref(), Some("hook:claude-code"));

    // The record's JSON has the tool, and no command or argv.
    let (_, raw) = d
        .agent()
        .call(Method::GET, &format!("/v1/requests/{}", r.id), None)
        .await
        .unwrap();
    assert_eq!(raw["tool"], json!({"name": "Write", "input": input}));
    assert_eq!(
        (raw["command"].clone(), raw["argv"].clone()),
        (Value::Null, Value::Null)
    );

    let denied = tool(&d, "Write", json!({"file_path": "src/denied.rs"}), p.path()).await;
    let (status, body) = d.decide(&denied.short_id, "deny").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        d.record(&denied.id).await.error.as_deref(),
        Some("tool call was not approved (denied)")
    );

    let (status, decided) = d.decide(&r.short_id, "allow-always").await;
    assert_eq!(status, StatusCode::OK, "{decided}");
    let rules = d.cli(&["allow", "list", "--json"]).await;
    let rules: Vec<execgate::model::Rule> = serde_json::from_slice(&rules.stdout).unwrap();
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(
        (
            rules[0].kind,
            rules[0].pattern.as_str(),
            rules[0].agent.as_deref()
        ),
        (RuleKind::Tool, "Write", Some("claude-code"))
    );

    // The next Write anywhere unprotected is approved by that rule; Edit is not.
    let again = tool(&d, "Write", json!({"file_path": "src/other.rs"}), p.path()).await;
    assert_eq!(
        (again.status, again.via),
        (Status::Approved, Some(Via::Allowlist))
    );
    let edit = tool(&d, "Edit", json!({"file_path": "src/other.rs"}), p.path()).await;
    assert_eq!(edit.status, Status::Pending);
    // Nor does it approve a Write that names a guard file.
    let guard = tool(&d, "Write", json!({"file_path": ".git/config"}), p.path()).await;
    assert_eq!(
        (guard.status, guard.risk),
        (Status::Pending, Risk::Dangerous)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_tools_are_safe_unless_they_name_a_protected_path() {
    let d = TestDaemon::start(&[]).await;
    let p = project();
    let read = tool(&d, "Read", json!({"file_path": "src/lib.rs"}), p.path()).await;
    assert_eq!(
        (read.status, read.via, read.risk),
        (Status::Approved, Some(Via::Policy), Risk::Safe)
    );
    let grep = tool(&d, "Grep", json!({"pattern": "x", "path": "."}), p.path()).await;
    assert_eq!(grep.status, Status::Approved);
    // Reading execgate's database or an agent's settings is put to a human.
    let db = d.config().database.to_string_lossy().into_owned();
    for input in [
        json!({"file_path": db}),
        json!({"file_path": ".git/config"}),
        json!({"file_path": "~/.claude/settings.json"}),
    ] {
        let r = tool(&d, "Read", input.clone(), p.path()).await;
        assert_eq!(
            (r.status, r.risk),
            (Status::Pending, Risk::Dangerous),
            "{input}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_guard_settings_or_execgates_own_files_is_dangerous_and_never_always() {
    let d = TestDaemon::start(&[]).await;
    let p = project();
    // The owner trusts Write and Edit in general: protected paths still go to a human.
    for name in ["Write", "Edit", "MultiEdit", "NotebookEdit"] {
        let (status, body) = d
            .add_rule(json!({"agent": null, "pattern": name, "kind": "tool"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    std::os::unix::fs::symlink(p.path().join(".git/config"), p.path().join("notes.txt")).unwrap();
    let config_dir = d
        .config()
        .socket
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let cases = [
        (
            "Write",
            json!({"file_path": ".claude/settings.json", "content": "{}"}),
            "Claude Code",
        ),
        (
            "Write",
            json!({"file_path": "./.claude/settings.local.json"}),
            "Claude Code",
        ),
        (
            "Edit",
            json!({"file_path": ".git/config", "old_string": "a", "new_string": "b"}),
            "git configuration",
        ),
        (
            "Write",
            json!({"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}),
            "git hooks",
        ),
        (
            "Write",
            json!({"file_path": "src/../.cursor/hooks.json"}),
            "Cursor",
        ),
        (
            "Write",
            json!({"file_path": "~/.codex/config.toml"}),
            "Codex",
        ),
        (
            "Write",
            json!({"file_path": "~/.gemini/settings.json"}),
            "Gemini",
        ),
        // Through a symlink the agent made earlier.
        (
            "Write",
            json!({"file_path": "notes.txt", "content": "[core]\n"}),
            "git configuration",
        ),
        // In a list of edits, not the first field.
        (
            "MultiEdit",
            json!({"edits": [{"file_path": "src/a.rs"}, {"file_path": ".git/hooks/post-checkout"}]}),
            "git hooks",
        ),
        // Paths a tool's own path handling shortens to a guard file: longer than PATH_MAX
        // as written, or with a newline in a component that `..` then takes back.
        (
            "Write",
            json!({"file_path": format!("{}.git/config", "./".repeat(2100))}),
            "git configuration",
        ),
        (
            "Write",
            json!({"file_path": "src\n/../.git/hooks/pre-commit"}),
            "git hooks",
        ),
        // execgate's own socket directory and database.
        (
            "Write",
            json!({"file_path": format!("{config_dir}/agent.sock")}),
            "execgate's own files",
        ),
    ];
    for (name, input, what) in cases {
        let r = tool(&d, name, input.clone(), p.path()).await;
        assert_eq!(
            (r.status, r.risk),
            (Status::Pending, Risk::Dangerous),
            "{name} {input}"
        );
        assert!(
            r.risk_reasons.iter().any(|why| why.contains(what)),
            "{name} {input}: {:?}",
            r.risk_reasons
        );
        let (status, body) = d.decide(&r.short_id, "allow-always").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{name} {input}: {body}");
        assert_eq!(body["error"]["code"], "ALWAYS_REFUSED", "{body}");
        d.decide(&r.short_id, "deny").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_that_write_guard_settings_are_dangerous_even_under_a_glob() {
    let d = TestDaemon::start(&[]).await;
    let p = project();
    for pattern in ["tee *", "cp *", "mv *", "sed *", "touch *", "ln *"] {
        let (status, body) = d
            .add_rule(json!({"agent": null, "pattern": pattern, "kind": "glob"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    // Elsewhere the same commands only need review: the guard files make them dangerous.
    let elsewhere = command(&d, "tee src/notes.md", p.path()).await;
    assert_eq!(
        elsewhere.risk,
        Risk::NeedsReview,
        "{:?}",
        elsewhere.risk_reasons
    );
    for line in [
        "tee .git/config",
        "tee -a .claude/settings.json",
        "cp /tmp/x .claude/settings.local.json",
        "mv evil .git/hooks/pre-commit",
        "sed -i s/block/continue/ .claude/settings.json",
        "sed --in-place=.bak s/a/b/ .cursor/hooks.json",
        "cp x .codex/hooks.json",
        "touch .git/hooks/post-merge",
        "ln -sf /tmp/evil .git/hooks/pre-push",
    ] {
        let r = command(&d, line, p.path()).await;
        assert_eq!(
            (r.status, r.risk),
            (Status::Pending, Risk::Dangerous),
            "{line}: {:?}",
            r.risk_reasons
        );
    }
    // Relative to where it runs: `tee config` inside `.git`.
    let r = command(&d, "tee config", &p.path().join(".git")).await;
    assert_eq!(
        (r.status, r.risk),
        (Status::Pending, Risk::Dangerous),
        "{:?}",
        r.risk_reasons
    );
    // Through a symlink made earlier.
    std::os::unix::fs::symlink(p.path().join(".git/config"), p.path().join("harmless")).unwrap();
    let r = command(&d, "tee harmless", p.path()).await;
    assert_eq!(
        (r.status, r.risk),
        (Status::Pending, Risk::Dangerous),
        "{:?}",
        r.risk_reasons
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_deny_and_security_modes() {
    let d = TestDaemon::start(&[
        ("EXECGATE_POLICY__TOOLS__DENY", "mcp__shell__*, WebFetch"),
        ("EXECGATE_AGENTS__LOCKED__SECURITY", "deny"),
        ("EXECGATE_AGENTS__TRUSTED__SECURITY", "full"),
    ])
    .await;
    let p = project();
    let r = tool(&d, "mcp__shell__exec", json!({"cmd": "id"}), p.path()).await;
    assert_eq!((r.status, r.via), (Status::Denied, Some(Via::Policy)));
    let error = r.error.unwrap();
    assert!(error.contains("policy.tools.deny"), "{error}");
    // What the agent is told names what it asked for.
    assert!(
        error.starts_with("tool call was not approved (denied)"),
        "{error}"
    );
    assert_eq!(
        tool(&d, "webfetch", json!({}), p.path()).await.status,
        Status::Denied
    );
    let ask = |agent: &'static str| json!({"agent": agent, "tool": {"name": "Write", "input": {"file_path": "a"}}, "cwd": p.path()});
    let (_, locked) = d.submit(ask("locked")).await;
    assert_eq!(locked["status"], "denied");
    let (_, trusted) = d.submit(ask("trusted")).await;
    assert_eq!(trusted["status"], "approved");
    // `full` still does not get past policy.tools.deny.
    let (_, body) = d
        .submit(json!({"agent": "trusted", "tool": {"name": "mcp__shell__run", "input": {}}}))
        .await;
    assert_eq!(body["status"], "denied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_tool_requests_are_refused_with_the_field_named() {
    let d = TestDaemon::start(&[]).await;
    for (body, says) in [
        (
            json!({"agent": "a", "tool": {"name": "Write file", "input": {}}}),
            "tool.name",
        ),
        (
            json!({"agent": "a", "tool": {"name": "", "input": {}}}),
            "tool.name",
        ),
        (
            json!({"agent": "a", "tool": {"name": "W\u{202e}", "input": {}}}),
            "tool.name",
        ),
        (
            json!({"agent": "a", "tool": {"name": "x".repeat(129)}}),
            "tool.name",
        ),
        (
            json!({"agent": "a", "tool": {"name": "Write"}, "command": "ls"}),
            "exactly one",
        ),
        (
            json!({"agent": "a", "tool": {"name": "Write"}, "argv": ["ls"]}),
            "exactly one",
        ),
        (
            json!({"agent": "a", "tool": {"name": "Write"}, "run": true}),
            "`run`",
        ),
        (
            json!({"agent": "a", "tool": {"name": "Write"}, "input": "x"}),
            "`input`",
        ),
        (
            json!({"agent": "a", "tool": {"name": "Write"}, "shell": "bash"}),
            "`shell`",
        ),
        (
            json!({"agent": "a", "tool": {"name": "Write", "extra": 1}}),
            "extra",
        ),
        (
            json!({"agent": "a", "command": "ls", "front": "hook:evil"}),
            "`front`",
        ),
    ] {
        let (status, answer) = d.submit(body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{body}: {message}");
    }
    // A tool rule that would approve every tool needs force.
    let (status, body) = d
        .add_rule(json!({"agent": null, "pattern": "*", "kind": "tool"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = d
        .add_rule(json!({"agent": null, "pattern": "Write file", "kind": "tool"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = d
        .add_rule(json!({"agent": null, "pattern": "mcp__github__get_*", "kind": "tool"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let p = project();
    let r = tool(&d, "mcp__github__get_issue", json!({"n": 1}), p.path()).await;
    assert_eq!(r.status, Status::Approved);
    let r = tool(&d, "mcp__github__create_issue", json!({"n": 1}), p.path()).await;
    assert_eq!(r.status, Status::Pending);
}

/// The hostile agent, on its own uid, tries to rewrite its guard through a tool call
/// that the owner's blanket tool rule would otherwise approve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_on_its_own_uid_cannot_switch_its_hook_off_through_a_tool_rule() {
    if !can_switch_uid("an_agent_on_its_own_uid_cannot_switch_its_hook_off_through_a_tool_rule") {
        return;
    }
    let d = TestDaemon::start(&[]).await;
    let_agent_in(d.dir.path(), &d.config().socket);
    d.add_rule(json!({"agent": null, "pattern": "Write", "kind": "tool"}))
        .await;
    let socket = d.config().socket.clone();
    let answers = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            let mut answers = Vec::new();
            for path in [
                "/home/agent/.claude/settings.json",
                "/srv/repo/.claude/settings.local.json",
                "/srv/repo/.git/hooks/pre-commit",
                "/srv/repo/../repo/.git/config",
            ] {
                let body = json!({"agent": "claude-code", "cwd": "/",
                    "tool": {"name": "Write", "input": {"file_path": path, "content": "{}"}},
                    "wait": false});
                answers.push(
                    Client::new(socket.clone())
                        .call(Method::POST, "/v1/requests", Some(&body))
                        .await
                        .unwrap(),
                );
            }
            answers
        })
    })
    .await
    .unwrap();
    for (status, body) in answers {
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        assert_eq!(
            (body["status"].as_str(), body["risk"].as_str()),
            (Some("pending"), Some("dangerous")),
            "{body}"
        );
    }
}
