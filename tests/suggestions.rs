//! Fewer repeated questions (issue 33): where the owner keeps approving commands of one
//! shape, the approval message offers the bounded rule that would have covered them,
//! and `execgate allow suggest` lists such rules from history with what each would
//! have saved. Never a rule whose wildcard would cover code it does not name, nor one
//! that would have approved what the owner denied.

use execgate_testkit as common;

use common::*;
use execgate::model::{Record, Status};
use hyper::StatusCode;
use serde_json::{Value, json};

/// A project the requests run in: a git work tree with tests.
fn project(d: &TestDaemon) -> std::path::PathBuf {
    let dir = std::path::Path::new(&d.config().database)
        .parent()
        .unwrap()
        .join("app");
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("tests/test_api.py"), "def test(): pass\n").unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .status();
    assert!(
        git.is_ok_and(|s| s.success()),
        "git is needed for this test"
    );
    dir.canonicalize().unwrap()
}

async fn ask(d: &TestDaemon, command: &str, cwd: &std::path::Path) -> Record {
    let (status, body) = d
        .submit(json!({"agent": "claude", "command": command, "cwd": cwd, "wait": false}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{command}: {body}");
    let r: Record = serde_json::from_value(body).unwrap();
    assert_eq!(r.status, Status::Pending, "{command}");
    r
}

async fn approve(d: &TestDaemon, r: &Record) {
    let (status, body) = d.decide(&r.id, "allow-once").await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_the_same_shape_three_times_offers_its_rule() {
    let mut d = TestDaemon::start(&[]).await;
    let cwd = project(&d);
    for command in [
        "python3 -m pytest",
        "python3 -m pytest -q tests",
        "python3 -m pytest -x 2>&1 | tail -30",
    ] {
        let r = ask(&d, command, &cwd).await;
        d.console_expect(&format!("ID: {}", r.short_id)).await;
        approve(&d, &r).await;
    }

    // The fourth is offered the rule, with what to run to add it.
    let r = ask(&d, "python3 -m pytest --lf", &cwd).await;
    d.console_expect(&format!("ID: {}", r.short_id)).await;
    let line = d.console_expect("You approved 3 like this today").await;
    assert!(
        line.contains("execgate allow add --agent claude --glob 'python3 -m pytest *'"),
        "{line}"
    );
    approve(&d, &r).await;

    let out = d.cli(&["allow", "suggest", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let found: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(found[0]["pattern"], "python3 -m pytest *", "{found}");
    assert_eq!(found[0]["agent"], "claude");
    assert_eq!(found[0]["saves"], 4, "{found}");
    let out = d.cli(&["allow", "suggest"]).await;
    let text = stdout(&out);
    assert!(
        text.contains("python3 -m pytest *") && text.contains("SAVES"),
        "{text}"
    );

    // Added as suggested, it approves the next one without a human.
    let (status, body) = d
        .add_rule(json!({"agent": "claude", "pattern": "python3 -m pytest *", "kind": "glob"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, body) = d
        .submit(json!({"agent": "claude", "command": "cd tests && python3 -m pytest -k api", "cwd": cwd}))
        .await;
    assert_eq!(body["status"], "approved", "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_rule_is_suggested_over_code_it_does_not_name_or_what_was_denied() {
    let d = TestDaemon::start(&[]).await;
    let cwd = project(&d);
    // Inline code, approved three times: its wildcard would cover any code.
    for code in ["print(1)", "print(2)", "import os"] {
        let r = ask(&d, &format!("python3 -c '{code}'"), &cwd).await;
        approve(&d, &r).await;
    }
    // A shape approved three times and denied once.
    for command in [
        "python3 -m unittest",
        "python3 -m unittest -v",
        "python3 -m unittest discover",
    ] {
        let r = ask(&d, command, &cwd).await;
        approve(&d, &r).await;
    }
    let patterns = |found: Value| -> Vec<String> {
        found
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["pattern"].as_str().unwrap().to_string())
            .collect()
    };
    let out = d.cli(&["allow", "suggest", "--json"]).await;
    let before: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(patterns(before), ["python3 -m unittest *"]);
    let r = ask(&d, "python3 -m unittest -f", &cwd).await;
    let (status, _) = d.decide(&r.id, "deny").await;
    assert_eq!(status, StatusCode::OK);
    let out = d.cli(&["allow", "suggest", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let found: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(found, json!([]), "{found}");
    let out = d.cli(&["allow", "suggest"]).await;
    assert!(stdout(&out).contains("(none"), "{}", stdout(&out));
}
