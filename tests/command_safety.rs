//! Command safety as users meet it (issue 12), over the agent socket and the CLI: the
//! `shell` field, globs that cover only what execgate understands, the warning for rules
//! that amount to "run anything", and the classes of danger no rule approves. The
//! word-by-word cases live in the corpus (`testkit/src/corpus.rs`); this file checks the
//! daemon carries them through.

use execgate_testkit as common;

use common::*;
use execgate::model::{Record, Risk, Status, Via};
use hyper::StatusCode;
use serde_json::{Value, json};

async fn decide(d: &TestDaemon, body: Value) -> (StatusCode, Value) {
    let mut body = body;
    body["agent"] = json!("agent");
    body["wait"] = json!(false);
    d.submit(body).await
}

async fn record(d: &TestDaemon, body: Value) -> Record {
    let (status, v) = decide(d, body).await;
    assert!(
        status == StatusCode::OK || status == StatusCode::ACCEPTED,
        "{status}: {v}"
    );
    serde_json::from_value(v).unwrap()
}

fn error_of(v: &Value) -> String {
    v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plainness_is_judged_for_the_shell_the_agent_names() {
    let d = TestDaemon::start(&[]).await;
    // zsh replaces `=sh` with the path of `sh`; bash expands `~` after `=`. With no
    // shell named, the command must be plain under all three.
    for command in ["echo =sh", "echo --prefix=~/x"] {
        let r = record(&d, json!({"command": command})).await;
        assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
        assert!(
            r.risk_reasons.iter().any(|x| x.starts_with("not plain")),
            "{command}: {:?}",
            r.risk_reasons
        );
    }
    let r = record(&d, json!({"command": "echo =sh", "shell": "bash"})).await;
    assert_eq!(
        (r.status, r.via),
        (Status::Approved, Some(Via::Policy)),
        "{r:?}"
    );
    let r = record(&d, json!({"command": "echo =sh", "shell": "zsh"})).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    let r = record(&d, json!({"command": "echo --prefix=~/x", "shell": "sh"})).await;
    assert_eq!(
        (r.status, r.via),
        (Status::Approved, Some(Via::Policy)),
        "{r:?}"
    );
    let r = record(&d, json!({"command": "echo --prefix=~/x", "shell": "bash"})).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_field_is_checked_before_anyone_is_asked() {
    let d = TestDaemon::start(&[("EXECGATE_POLICY__SECURITY", "full")]).await;
    let (status, v) = decide(&d, json!({"command": "ls", "shell": "fish"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(error_of(&v).contains("`shell` must be one of"), "{v}");
    let (status, v) = decide(&d, json!({"argv": ["ls"], "shell": "bash"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(error_of(&v).contains("`argv` runs no shell"), "{v}");
    let (status, v) = d
        .submit(json!({"agent": "agent", "command": "ls", "shell": "zsh", "run": true}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(error_of(&v).contains("/bin/sh"), "{v}");
    // `sh` with run mode is what runs anyway.
    let (status, v) = d
        .submit(json!({"agent": "agent", "command": "true", "shell": "sh", "run": true}))
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_glob_covers_only_words_execgate_understands() {
    let d = TestDaemon::start(&[]).await;
    for pattern in ["sort *", "cat *"] {
        let (status, v) = d
            .add_rule(json!({"pattern": pattern, "kind": "glob"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
    }
    // Covered: operands and harmless options.
    for command in [
        "sort -n data.txt",
        "cat README.md",
        "sort -k2 -t, a.csv | cat",
    ] {
        let r = record(&d, json!({"command": command})).await;
        assert_eq!(
            (r.status, r.via),
            (Status::Approved, Some(Via::Allowlist)),
            "{command}: {r:?}"
        );
    }
    // Not covered: what runs code, writes, is abbreviated, unknown, or reads a secret.
    for (command, why) in [
        ("sort --compress-program=sh data.txt", "runs PROG"),
        ("sort --compress-prog=sh data.txt", "abbreviates"),
        ("sort -o /tmp/out data.txt", "writes"),
        ("sort --totally-unknown=1 data.txt", "not an option"),
        ("cat /home/u/.ssh/id_rsa", "secret"),
    ] {
        let r = record(&d, json!({"command": command})).await;
        assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
        let reasons = r.risk_reasons.join(" | ");
        assert!(reasons.contains(why), "{command}: {reasons}");
    }
}

/// A character the owner cannot see makes a command not plain, so no glob covers it:
/// the owner once approved `head -n 5 notes.txt` whose path ended in U+E0041 (issue 30).
/// Each range is tried at both ends and in the middle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_glob_never_covers_a_character_the_owner_cannot_see() {
    let d = TestDaemon::start(&[]).await;
    let (status, v) = d
        .add_rule(json!({"pattern": "cat *", "kind": "glob"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let r = record(&d, json!({"command": "cat notes.txt"})).await;
    assert_eq!(r.status, Status::Approved, "{r:?}");
    for (first, last) in [
        (0xE0000, 0xE007F), // tags
        (0xFE00, 0xFE0F),   // variation selectors
        (0xE0100, 0xE01EF), // their supplement
        (0x206A, 0x206F),   // deprecated format characters
        (0x1D173, 0x1D17A), // musical beam controls
        (0x2800, 0x2800),   // braille blank
        (0x3164, 0x3164),   // Hangul filler
    ] {
        for u in [first, (first + last) / 2, last] {
            let c = char::from_u32(u).unwrap();
            let command = format!("cat notes.txt{c}");
            let r = record(&d, json!({ "command": command })).await;
            assert_eq!(r.status, Status::Pending, "U+{u:04X}: {r:?}");
            let reasons = r.risk_reasons.join(" | ");
            assert!(
                reasons.contains("not plain") && reasons.contains(&format!("U+{u:04X}")),
                "U+{u:04X}: {reasons}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dangers_no_rule_approves() {
    let d = TestDaemon::start(&[]).await;
    let (status, _) = d
        .add_rule(json!({"pattern": "git *", "kind": "glob"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    for pattern in ["curl *", "npm *", "cp *"] {
        d.add_rule(json!({"pattern": pattern, "kind": "glob", "force": true}))
            .await;
    }
    for command in [
        "git reset --har",
        "git push --dele origin main",
        "git clean --forc",
        "git branch -D topic",
        "git -C /repo branch --delete --force topic",
        "curl http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "curl http://metadata.google.internal/computeMetadata/v1/",
        "npm --prefix . uninstall left-pad",
        "cp evil .env",
        "psql -c 'DROP TABLE users'",
    ] {
        let r = record(&d, json!({"command": command})).await;
        assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
        assert_eq!(r.risk, Risk::Dangerous, "{command}: {:?}", r.risk_reasons);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_add_warns_about_rules_that_run_anything() {
    let d = TestDaemon::start(&[]).await;
    let out = d.cli(&["allow", "add", "--glob", "make *"]).await;
    assert!(out.status.success(), "{out:?}");
    assert!(
        stderr(&out).contains("amounts to \"run anything\""),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("added rule"), "{}", stdout(&out));
    let (status, v) = d
        .add_rule(json!({"pattern": "npm *", "kind": "glob"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .contains("package.json"),
        "{v}"
    );
    // Naming what runs is not "anything".
    for pattern in ["npm test *", "cargo test *", "make test"] {
        let (status, v) = d
            .add_rule(json!({"pattern": pattern, "kind": "glob"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
        assert!(v.get("warnings").is_none(), "{pattern}: {v}");
    }
}

/// The hard limits see what allowed programs run (issue 29): under `security = full`
/// with `policy.allowed_binaries`, a program an allowed one would start is refused unless
/// it is listed too, and one execgate cannot name is refused; the deny list sees inner
/// commands, with their options however spelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_limits_see_what_allowed_programs_run() {
    let d = TestDaemon::start(&[
        ("EXECGATE_POLICY__SECURITY", "full"),
        (
            "EXECGATE_POLICY__ALLOWED_BINARIES",
            "ls,cat,find,sed,awk,git,tar,sort",
        ),
        ("EXECGATE_POLICY__DENY", "*rm -rf*"),
    ])
    .await;
    for command in [
        "ls -la",
        "sed -n 1,5p f",
        "git status",
        "find . -name '*.rs'",
    ] {
        let r = record(&d, json!({"command": command})).await;
        assert_eq!(r.status, Status::Approved, "{command}: {r:?}");
    }
    for (command, why) in [
        ("find . -exec rm -r {} +", "allowed_binaries"),
        ("git -c alias.x='!rm -r d' x", "allowed_binaries"),
        ("tar --to-command='rm x' -xf a.tar", "allowed_binaries"),
        ("sort --compress-program=rm f", "allowed_binaries"),
        ("sed 'e rm x'", "allowed_binaries"),
        ("awk 'BEGIN{system(\"id\")}'", "cannot name"),
        ("sed ':x e rm -fr /tmp/d'", "deny list"),
        ("find . -exec rm -fr {} +", "deny list"),
    ] {
        let r = record(&d, json!({"command": command})).await;
        assert_eq!(r.status, Status::Denied, "{command}: {r:?}");
        let reason = r.error.clone().unwrap_or_default();
        assert!(reason.contains(why), "{command}: {reason}");
    }
}
