//! One path policy for commands and tool calls, over the sockets of a real daemon: a
//! word is judged by the file it opens (symlinks followed, hard links and aliases
//! compared by device and inode), not by its spelling, and a tool call's paths meet
//! the same judgement as a command's operands. The hostile agent makes its links on its
//! own uid, as it would on a real machine.

use execgate_testkit as common;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use common::TestDaemon;
use common::uid::{AGENT_GID, AGENT_UID, as_agent, can_switch_uid, let_agent_in};
use execgate::client::Client;
use execgate::model::{Record, Status};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

async fn submit(d: &TestDaemon, body: Value) -> Record {
    let (status, body) = d.submit(body).await;
    assert!(
        status == StatusCode::OK || status == StatusCode::ACCEPTED,
        "{status}: {body}"
    );
    serde_json::from_value(body).unwrap()
}

async fn command(d: &TestDaemon, line: &str, cwd: &Path) -> Record {
    submit(
        d,
        json!({"agent": "claude-code", "command": line, "cwd": cwd, "wait": false}),
    )
    .await
}

async fn tool(d: &TestDaemon, name: &str, input: Value, cwd: &Path) -> Record {
    submit(
        d,
        json!({"agent": "claude-code", "tool": {"name": name, "input": input},
               "cwd": cwd, "wait": false}),
    )
    .await
}

/// A home with a private key, and a project beside it that the agent's uid owns.
struct Place {
    _dir: tempfile::TempDir,
    key: PathBuf,
    ssh: PathBuf,
    project: PathBuf,
}

fn place() -> Place {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ssh = root.join("home/.ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = ssh.join("id_x");
    std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("README.md"), "hello\n").unwrap();
    std::fs::write(project.join("src/lib.rs"), "\n").unwrap();
    for p in [&project, &project.join("src")] {
        std::os::unix::fs::chown(p, Some(AGENT_UID), Some(AGENT_GID)).unwrap();
    }
    Place {
        _dir: dir,
        key,
        ssh,
        project,
    }
}

/// Runs `make` as the agent's uid: what it makes in the project is the agent's.
fn as_agent_do(make: impl FnOnce() + Send + 'static) {
    as_agent(move || async move { make() });
}

/// Finding 1: under `cat *`, a key reached through a symlink the agent made (to the
/// file, or to its directory) was approved and, in run mode, printed. Now the daemon
/// follows the link and judges the file it reaches, in either mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_behind_a_symlink_is_judged_as_the_secret() {
    if !can_switch_uid("a_secret_behind_a_symlink_is_judged_as_the_secret") {
        return;
    }
    let d = TestDaemon::start(&[]).await;
    let_agent_in(d.dir.path(), &d.config().socket);
    for rule in ["cat *", "head *"] {
        d.add_rule(json!({"agent": null, "pattern": rule, "kind": "glob"}))
            .await;
    }
    let p = place();
    let (project, key, ssh) = (p.project.clone(), p.key.clone(), p.ssh.clone());
    as_agent_do(move || {
        symlink(&key, project.join("keylink")).unwrap();
        symlink(&ssh, project.join("sshdir")).unwrap();
        symlink(&key, project.join("notes.txt")).unwrap();
        symlink("keylink", project.join("hop")).unwrap();
    });
    for line in [
        "cat keylink",
        "cat sshdir/id_x",
        "head -n 5 notes.txt",
        "cat hop",
        "cat ./src/../keylink",
    ] {
        let r = command(&d, line, &p.project).await;
        assert_eq!(r.status, Status::Pending, "{line}: {r:?}");
        assert!(
            r.risk_reasons.iter().any(|w| w.contains("id_x")),
            "{line}: the reason names the file it reaches: {:?}",
            r.risk_reasons
        );
        d.decide(&r.id, "deny").await;
        // Run mode, where the daemon's user would print the key: asked too.
        let client = d.agent();
        let body = json!({"agent": "claude-code", "command": line, "cwd": &p.project,
                          "run": true});
        let waiting = tokio::spawn(async move {
            client
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
        });
        let r = d.pending_for(line).await;
        assert!(r.risk_reasons.iter().any(|w| w.contains("id_x")), "{r:?}");
        d.decide(&r.id, "deny").await;
        let (_, body) = waiting.await.unwrap();
        assert_eq!(body["status"].as_str(), Some("denied"), "{line}: {body}");
        assert!(!body.to_string().contains("BEGIN OPENSSH"), "{body}");
    }
    let r = command(&d, "cat README.md", &p.project).await;
    assert_eq!(r.status, Status::Approved, "{r:?}");
}

/// A hard link shares the file, whatever its name: a second name for execgate's own
/// database is execgate's database, compared by device and inode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hard_link_to_execgates_own_file_is_its_own_file() {
    let d = TestDaemon::start(&[]).await;
    d.add_rule(json!({"agent": null, "pattern": "cat *", "kind": "glob"}))
        .await;
    let p = place();
    std::fs::hard_link(&d.config().database, p.project.join("notes")).unwrap();
    let r = command(&d, "cat notes", &p.project).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    let r = tool(&d, "Read", json!({"file_path": "notes"}), &p.project).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
}

/// Finding 2: one "Always" on a `Write` saves a rule for the tool; it must not approve
/// writing what an agent starts at launch (MCP servers, plugins, extensions), git's
/// per-submodule configuration and links, shell start-up files, ssh's authorized keys or
/// a program's rc file, whatever the case of the name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_rule_never_covers_what_an_agent_or_a_program_reads_at_start() {
    let d = TestDaemon::start(&[]).await;
    d.add_rule(json!({"agent": null, "pattern": "Write", "kind": "tool"}))
        .await;
    let p = place();
    let mut refused = 0;
    for path in [
        "~/.claude.json",
        ".mcp.json",
        "~/.claude/plugins/x/hooks/hooks.json",
        "~/.gemini/extensions/x/gemini-extension.json",
        ".git/modules/sub/config",
        ".git/modules/sub/hooks/post-checkout",
        ".git/commondir",
        ".git/worktrees/w/gitdir",
        "~/.bashrc",
        "~/.profile",
        "~/.ssh/authorized_keys",
        "~/.npmrc",
        ".npmrc",
        ".cargo/config.toml",
        "~/.Claude/settings.json",
        ".CLAUDE/settings.local.json",
        ".cursor/mcp.json",
        ".codex/config.toml",
        ".copilot/mcp-config.json",
        ".curlrc",
        ".wgetrc",
    ] {
        let r = tool(
            &d,
            "Write",
            json!({"file_path": path, "content": "{}"}),
            &p.project,
        )
        .await;
        assert_eq!(r.status, Status::Pending, "Write {path}: {r:?}");
        refused += 1;
    }
    assert_eq!(refused, 21);
    let r = tool(
        &d,
        "Write",
        json!({"file_path": "src/new.rs", "content": "fn f() {}\n"}),
        &p.project,
    )
    .await;
    assert_eq!(r.status, Status::Approved, "{r:?}");
}

/// Finding 2: the default read-only tools approved reading keys and `.env` files with no
/// rule at all, which `cat` never is. They now get what the command would get.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_tools_get_what_the_equivalent_command_gets() {
    let d = TestDaemon::start(&[]).await;
    let p = place();
    std::fs::write(p.project.join(".env"), "TOKEN=x\n").unwrap();
    symlink(&p.key, p.project.join("keylink")).unwrap();
    let key = p.key.to_string_lossy().into_owned();
    let ssh = p.ssh.to_string_lossy().into_owned();
    let home = p.ssh.parent().unwrap().to_string_lossy().into_owned();
    for (name, input) in [
        ("Read", json!({"file_path": key})),
        ("Read", json!({"file_path": ".env"})),
        ("Read", json!({"file_path": "keylink"})),
        ("Grep", json!({"pattern": "BEGIN", "path": ssh})),
        ("Grep", json!({"pattern": "TOKEN", "path": ".env"})),
        ("Grep", json!({"pattern": "BEGIN", "path": home})),
        ("Glob", json!({"pattern": "**/id_*", "path": ssh})),
        ("LS", json!({"path": ssh})),
    ] {
        let r = tool(&d, name, input.clone(), &p.project).await;
        assert_eq!(r.status, Status::Pending, "{name} {input}: {r:?}");
    }
    for (name, input) in [
        ("Read", json!({"file_path": "src/lib.rs"})),
        ("Grep", json!({"pattern": "fn", "path": "src"})),
        ("Glob", json!({"pattern": "**/*.rs"})),
        ("LS", json!({"path": "."})),
    ] {
        let r = tool(&d, name, input.clone(), &p.project).await;
        assert_eq!(r.status, Status::Approved, "{name} {input}: {r:?}");
    }
    // And `cat` of the same files is asked, as it always was.
    d.add_rule(json!({"agent": null, "pattern": "cat *", "kind": "glob"}))
        .await;
    for line in ["cat .env", "cat keylink"] {
        assert_eq!(command(&d, line, &p.project).await.status, Status::Pending);
    }
}

/// Bad input: a path that cannot be resolved is judged by its text, and a special file
/// is never opened to be judged (a FIFO nobody writes to would hang an open).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unresolvable_paths_are_judged_by_their_text_and_nothing_special_is_opened() {
    let d = TestDaemon::start(&[]).await;
    d.add_rule(json!({"agent": null, "pattern": "cat *", "kind": "glob"}))
        .await;
    d.add_rule(json!({"agent": null, "pattern": "tee *", "kind": "glob"}))
        .await;
    let p = place();
    let pr = &p.project;
    // Dangling: the link's target is judged, since writing through it creates it.
    symlink(p.ssh.join("id_new"), pr.join("dangling")).unwrap();
    symlink("loop", pr.join("loop")).unwrap();
    let fifo = pr.join("fifo");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let long = format!("{}/x", "a/".repeat(3000));
    for (line, status) in [
        ("cat dangling", Status::Pending),
        ("tee dangling", Status::Pending),
        ("cat loop", Status::Approved),
        ("cat fifo", Status::Approved),
        ("cat /dev/null", Status::Approved),
        (long.as_str(), Status::Approved),
    ] {
        let line = if line == long {
            format!("cat {long}")
        } else {
            line.to_string()
        };
        let r = command(&d, &line, pr).await;
        assert_eq!(r.status, status, "{}: {r:?}", &line[..line.len().min(40)]);
    }
    let r = tool(&d, "Read", json!({"file_path": "dangling"}), pr).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    let r = tool(&d, "Read", json!({"file_path": "fifo"}), pr).await;
    assert_eq!(r.status, Status::Approved, "{r:?}");
}

/// The agent, on its own uid, hides its link where the daemon's user cannot look: a
/// directory of its own, mode 0700. The daemon (root here) still follows it; and a link
/// nobody may follow is judged by its text, never called harmless for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_in_the_agents_private_directory_is_still_followed() {
    if !can_switch_uid("a_link_in_the_agents_private_directory_is_still_followed") {
        return;
    }
    let d = TestDaemon::start(&[]).await;
    let_agent_in(d.dir.path(), &d.config().socket);
    d.add_rule(json!({"agent": null, "pattern": "cat *", "kind": "glob"}))
        .await;
    let p = place();
    let (project, key) = (p.project.clone(), p.key.clone());
    as_agent_do(move || {
        let private = project.join("private");
        std::fs::create_dir(&private).unwrap();
        symlink(&key, private.join("k")).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    });
    let socket = d.config().socket.clone();
    let cwd = p.project.clone();
    let body = as_agent(move || async move {
        let body = json!({"agent": "claude-code", "command": "cat private/k", "cwd": cwd,
                          "wait": false});
        Client::new(socket)
            .call(Method::POST, "/v1/requests", Some(&body))
            .await
            .unwrap()
            .1
    });
    assert_eq!(body["status"].as_str(), Some("pending"), "{body}");
}

/// Run mode: `cat notes` is approved by `cat *` while `notes` links to the README, and
/// waits in the run queue; the agent re-points the link at a key before it runs. The
/// path policy is applied again just before the run, and the key is not printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_re_pointed_after_approval_is_judged_again_before_the_run() {
    let d = TestDaemon::start(&[("EXECGATE_EXEC__MAX_CONCURRENT", "1")]).await;
    for rule in ["cat *", "sleep *"] {
        d.add_rule(json!({"agent": null, "pattern": rule, "kind": "glob"}))
            .await;
    }
    let p = place();
    let notes = p.project.join("notes");
    symlink(p.project.join("README.md"), &notes).unwrap();
    let run = |line: &'static str| {
        let client = d.agent();
        let body = json!({"agent": "claude-code", "command": line, "cwd": &p.project,
                          "run": true});
        tokio::spawn(async move {
            client
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
                .1
        })
    };
    let sleeping = run("sleep 1");
    assert!(d.in_run_queue("sleep 1", true).await);
    let reading = run("cat notes");
    assert!(d.in_run_queue("cat notes", false).await);
    std::fs::remove_file(&notes).unwrap();
    symlink(&p.key, &notes).unwrap();
    let body = reading.await.unwrap();
    assert!(!body.to_string().contains("BEGIN OPENSSH"), "{body}");
    assert!(
        body.to_string().contains("judged again where it runs"),
        "{body}"
    );
    sleeping.await.unwrap();
    // Pointed back, the same command runs.
    std::fs::remove_file(&notes).unwrap();
    symlink(p.project.join("README.md"), &notes).unwrap();
    let body = run("cat notes").await.unwrap();
    assert!(body.to_string().contains("hello"), "{body}");
}
