//! Globs over programs execgate has no profile for (issue 30, finding 5): `allow add`
//! says the wildcard is the owner's and names what it still refuses, and under `PROG *`
//! the wildcard never covers a shell, an interpreter, an executable file, a secret or
//! guard settings, inline code or a redirection, while ordinary uses stay approved.

use execgate_testkit as common;

use common::uid::{AGENT_GID, AGENT_UID, as_agent, can_switch_uid, let_agent_in};
use common::*;
use execgate::model::{Record, Status, Via};
use hyper::StatusCode;
use serde_json::{Value, json};

async fn record(d: &TestDaemon, body: Value) -> Record {
    let mut body = body;
    body["agent"] = json!("agent");
    body["wait"] = json!(false);
    let (status, v) = d.submit(body).await;
    assert!(
        status == StatusCode::OK || status == StatusCode::ACCEPTED,
        "{status}: {v}"
    );
    serde_json::from_value(v).unwrap()
}

/// Each program of finding 5, the hostile commands its glob approved (a shell started,
/// inline code, a private key read, a file written, a redirection), and an ordinary use.
const CASES: &[(&str, &[&str], &str)] = &[
    (
        "screen",
        &[
            "screen -dm sh -c id",
            "screen -dmL -Logfile .git/hooks/post-checkout",
            "screen -ls > .git/hooks/pre-commit",
        ],
        "screen -ls",
    ),
    (
        "tmux",
        &[
            "tmux new 'sh'",
            "tmux new-window 'rm -rf /srv'",
            "tmux -f /home/u/.ssh/id_ed25519",
        ],
        "tmux ls",
    ),
    (
        "java",
        &["java -jar x.jar", "java -cp /tmp Evil"],
        "java -version",
    ),
    (
        "guile",
        &[
            "guile -c '(system \"id\")'",
            "guile --eval='(system \"id\")'",
        ],
        "guile --version",
    ),
    (
        "cpulimit",
        &["cpulimit -l 50 -- sh", "cpulimit -l 50 -- python3 -c 1"],
        "cpulimit --help",
    ),
    (
        "setarch",
        &["setarch x86_64 /bin/sh", "setarch x86_64 bash"],
        "setarch --list",
    ),
    (
        "ssh-agent",
        &["ssh-agent sh", "ssh-agent zsh -i"],
        "ssh-agent -k",
    ),
    (
        "sshpass",
        &[
            "sshpass -p x ssh host",
            "sshpass -p x cat /home/u/.ssh/id_rsa",
        ],
        "sshpass -V",
    ),
    (
        "run-parts",
        &["run-parts /tmp/x", "run-parts --regex=. ./hooks"],
        "run-parts --version",
    ),
    (
        "elvish",
        &["elvish -c 'cat /home/u/.ssh/id_rsa'", "elvish script.elv"],
        "elvish -version",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn globs_over_unknown_programs_do_not_cover_code_secrets_or_writes() {
    let d = TestDaemon::start(&[]).await;
    let cwd = d.dir.path().to_path_buf();
    for (program, hostile, ordinary) in CASES {
        let (status, v) = d
            .add_rule(json!({"pattern": format!("{program} *"), "kind": "glob"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{program}: {v}");
        for command in *hostile {
            let r = record(&d, json!({"command": command, "cwd": cwd})).await;
            assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
        }
        let r = record(&d, json!({"command": ordinary, "cwd": cwd})).await;
        assert_eq!(
            (r.status, r.via),
            (Status::Approved, Some(Via::Allowlist)),
            "{ordinary}: {r:?}"
        );
    }
}

/// A program no table names at all: the same words are still refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_glob_over_any_unknown_program_refuses_the_same_words() {
    let d = TestDaemon::start(&[]).await;
    let cwd = d.dir.path().to_path_buf();
    let (status, v) = d
        .add_rule(json!({"pattern": "frobnicate *", "kind": "glob"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    for command in [
        "frobnicate sh",
        "frobnicate --shell=/bin/bash",
        "frobnicate -e 'print 1'",
        "frobnicate -cid",
        "frobnicate --command=id",
        "frobnicate --eval x",
        "frobnicate /home/u/.ssh/id_rsa",
        "frobnicate --out=.claude/settings.json",
        "frobnicate .env",
        "frobnicate x > out",
        "frobnicate 'id; id'",
    ] {
        let r = record(&d, json!({"command": command, "cwd": cwd})).await;
        assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
    }
    for command in ["frobnicate --verbose status", "frobnicate list 'a title'"] {
        let r = record(&d, json!({"command": command, "cwd": cwd})).await;
        assert_eq!(
            (r.status, r.via),
            (Status::Approved, Some(Via::Allowlist)),
            "{command}: {r:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_add_says_the_wildcard_over_an_unknown_program_is_the_owners() {
    let d = TestDaemon::start(&[]).await;
    let out = d.cli(&["allow", "add", "--glob", "screen *"]).await;
    assert!(out.status.success(), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains(
            "execgate does not know what `screen` does with its words: the wildcard is yours"
        ),
        "{err}"
    );
    assert!(err.contains("a shell"), "{err}");
    assert!(err.contains("`-c`"), "{err}");
    assert!(stdout(&out).contains("added rule"), "{}", stdout(&out));
    let (status, v) = d
        .add_rule(json!({"pattern": "tmux *", "kind": "glob"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let warning = v["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.contains("`tmux`"), "{v}");
    assert!(warning.contains("GTFOBins"), "{v}");
    // A program with a profile, or a glob that writes every word out, says nothing.
    for pattern in ["cat *", "tmux ls"] {
        let (status, v) = d
            .add_rule(json!({"pattern": pattern, "kind": "glob"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
        assert!(v.get("warnings").is_none(), "{pattern}: {v}");
    }
}

/// The agent, on its own uid, makes `./x` executable in its working directory: `tmux new
/// ./x` is not covered by `tmux *`, nor `frobnicate ./x` by `frobnicate *`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_executable_the_agent_made_is_not_covered() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    if !can_switch_uid("an_executable_the_agent_made_is_not_covered") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    std::fs::set_permissions(work.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(work.path(), Some(AGENT_UID), Some(AGENT_GID)).unwrap();
    let made = std::process::Command::new("sh")
        .args(["-c", "printf 'id\\n' > x && chmod 755 x"])
        .current_dir(work.path())
        .uid(AGENT_UID)
        .gid(AGENT_GID)
        .status()
        .unwrap();
    assert!(made.success());

    let d = TestDaemon::start(&[]).await;
    for pattern in ["tmux *", "frobnicate *"] {
        let (status, v) = d
            .add_rule(json!({"pattern": pattern, "kind": "glob"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
    }
    let_agent_in(d.dir.path(), &d.config().socket);
    let socket = d.config().socket.clone();
    let cwd = work.path().to_path_buf();
    let records = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            let client = execgate::client::Client::new(socket);
            let mut out = Vec::new();
            for command in ["tmux new ./x", "frobnicate ./x", "tmux ls"] {
                let body = json!({"agent": "agent", "command": command, "cwd": cwd, "wait": false});
                let (_, v) = client
                    .call(hyper::Method::POST, "/v1/requests", Some(&body))
                    .await
                    .unwrap();
                out.push(serde_json::from_value::<Record>(v).unwrap());
            }
            out
        })
    })
    .await
    .unwrap();
    assert_eq!(records[0].peer_uid, Some(AGENT_UID));
    assert_eq!(records[0].status, Status::Pending, "{:?}", records[0]);
    assert_eq!(records[1].status, Status::Pending, "{:?}", records[1]);
    assert!(
        records[1].risk_reasons.join(" | ").contains("./x"),
        "{:?}",
        records[1].risk_reasons
    );
    assert_eq!(records[2].status, Status::Approved, "{:?}", records[2]);
}
