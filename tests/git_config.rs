//! Configuration that runs code (issue 12): git runs programs that its repository's
//! configuration names (`core.fsmonitor` on `git status`, `diff.external` on `git
//! diff`) and hooks from `.git/hooks`, and an agent can often write both. Over the agent
//! socket, with a real repository and the real git:
//!
//! - decide-only: git is approved without a human only when execgate could read the
//!   repository and it names no program and holds no hook the command would run;
//! - run mode: whatever approved the command, git runs with those settings neutralised
//!   through `GIT_CONFIG_*`, and the approved argv is unchanged;
//! - run mode approves safe commands without a human only inside
//!   `exec.allowed_cwd_roots`.

use execgate_testkit as common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::uid::{AGENT_GID, AGENT_UID, as_agent, can_switch_uid, let_agent_in};
use common::*;
use execgate::model::{Record, Status, Via};
use hyper::StatusCode;
use serde_json::{Value, json};

/// A real repository with one commit and a modified file, in `dir/repo`.
fn repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.email=t@example.org", "-c", "user.name=t"])
            .args(args)
            .current_dir(&repo)
            .env("HOME", dir)
            .output()
            .expect("git is installed");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "one\n").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-qm", "first"]);
    std::fs::write(repo.join("a.txt"), "one\ntwo\n").unwrap();
    repo
}

/// A program that leaves a mark when it runs, so a test can tell.
fn marker_program(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let mark = dir.join(format!("{name}.ran"));
    let program = dir.join(format!("{name}.sh"));
    std::fs::write(
        &program,
        format!("#!/bin/sh\necho ran >> '{}'\nexit 0\n", mark.display()),
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    (program, mark)
}

/// Runs git as the agent would, with nothing from execgate: what git itself does there.
fn plain_git(cwd: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn set_config(repo: &Path, key: &str, value: &str) {
    let out = Command::new("git")
        .args(["config", key, value])
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

async fn decide(d: &TestDaemon, command: &str, cwd: Option<&Path>) -> Record {
    let mut body = json!({"agent": "agent", "command": command, "wait": false});
    if let Some(cwd) = cwd {
        body["cwd"] = json!(cwd);
    }
    let (status, v) = d.submit(body).await;
    assert!(
        status == StatusCode::OK || status == StatusCode::ACCEPTED,
        "{status}: {v}"
    );
    serde_json::from_value(v).unwrap()
}

fn approved_by_policy(r: &Record) -> bool {
    r.status == Status::Approved && r.via == Some(Via::Policy)
}

fn reasons(r: &Record) -> String {
    r.risk_reasons.join(" | ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decide_only_git_is_safe_only_where_its_repository_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let d = TestDaemon::start(&[]).await;

    // A clean repository: the everyday reads are approved at once.
    for command in ["git status", "git log --oneline -5", "git diff --stat"] {
        let r = decide(&d, command, Some(&repo)).await;
        assert!(approved_by_policy(&r), "{command}: {r:?}");
    }
    // Without a cwd execgate cannot see the repository: a human decides.
    let r = decide(&d, "git status", None).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(reasons(&r).contains("no cwd"), "{}", reasons(&r));

    // The agent names a program in the repository's configuration.
    let (program, _) = marker_program(dir.path(), "fsmonitor");
    set_config(&repo, "core.fsmonitor", program.to_str().unwrap());
    let r = decide(&d, "git status", Some(&repo)).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(reasons(&r).contains("core.fsmonitor"), "{}", reasons(&r));
    // An included file counts as the repository's own.
    set_config(&repo, "--unset", "core.fsmonitor");
    std::fs::write(repo.join(".git/extra"), "[diff]\n\texternal = /bin/true\n").unwrap();
    set_config(&repo, "include.path", "extra");
    let r = decide(&d, "git diff", Some(&repo)).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(reasons(&r).contains("diff.external"), "{}", reasons(&r));
    set_config(&repo, "--unset", "include.path");
    // What execgate cannot read fully, it does not approve: an include under the home
    // of whoever runs git (the agent's, in decide-only mode).
    set_config(&repo, "include.path", "~/agent.inc");
    let r = decide(&d, "git log -1", Some(&repo)).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(
        reasons(&r).contains("cannot read the repository fully"),
        "{}",
        reasons(&r)
    );
    set_config(&repo, "--unset", "include.path");

    // A hook: `git status` may write the index, which runs `post-index-change`; `git
    // log` runs no hook.
    let hook = repo.join(".git/hooks/post-index-change");
    std::fs::write(&hook, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = decide(&d, "git status", Some(&repo)).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(reasons(&r).contains("hooks"), "{}", reasons(&r));
    let r = decide(&d, "git log -1", Some(&repo)).await;
    assert!(approved_by_policy(&r), "{r:?}");
    std::fs::remove_file(&hook).unwrap();

    // The same holds for an owner's glob: `git *` does not approve a commit in a
    // repository with a pre-commit hook the agent may have written.
    let (status, _) = d
        .add_rule(json!({"pattern": "git *", "kind": "glob"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let r = decide(&d, "git commit -m wip", Some(&repo)).await;
    assert_eq!(
        (r.status, r.via),
        (Status::Approved, Some(Via::Allowlist)),
        "{r:?}"
    );
    let hook = repo.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = decide(&d, "git commit -m wip", Some(&repo)).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(reasons(&r).contains("pre-commit"), "{}", reasons(&r));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_mode_neutralises_what_the_repository_would_run() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let (monitor, monitor_ran) = marker_program(dir.path(), "fsmonitor");
    let (hook_program, hook_ran) = marker_program(dir.path(), "hook");
    set_config(&repo, "core.fsmonitor", monitor.to_str().unwrap());
    let hook = repo.join(".git/hooks/post-index-change");
    std::fs::copy(&hook_program, &hook).unwrap();
    let root = dir.path().display().to_string();
    let d = TestDaemon::start(&[("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", root.as_str())]).await;

    // Step 8 approves `git status` here: in run mode execgate neutralises the monitor.
    let (status, v) = d
        .submit(
            json!({"agent": "agent", "command": "git status --short", "cwd": repo, "run": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let r: Record = serde_json::from_value(v).unwrap();
    assert!(approved_by_policy(&r), "{r:?}");
    let result = r.result.unwrap();
    assert_eq!(result.exit_code, Some(0), "{result:?}");
    assert!(result.stdout.contains("a.txt"), "{result:?}");
    assert!(!monitor_ran.exists(), "core.fsmonitor ran");
    assert!(!hook_ran.exists(), "a hook ran");

    // A human's approval gets the same: what runs is what was shown, not what the
    // repository adds.
    let waiting = tokio::spawn({
        let client = d.agent();
        let body = json!({"agent": "agent", "command": "git status && git add a.txt", "cwd": repo, "run": true});
        async move {
            client
                .call(hyper::Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
        }
    });
    let pending = d.pending_for("git status && git add a.txt").await;
    let (status, _) = d.decide(&pending.short_id, "allow-once").await;
    assert_eq!(status, StatusCode::OK);
    let (status, v): (StatusCode, Value) = waiting.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["result"]["exit_code"], 0, "{v}");
    assert!(!monitor_ran.exists(), "core.fsmonitor ran");
    assert!(!hook_ran.exists(), "a hook ran");

    // The same command in git's own hands does run them: the test would see it.
    let out = Command::new("git")
        .args(["status", "--short"])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(monitor_ran.exists(), "the marker program works");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_mode_approves_safe_commands_only_inside_the_allowed_roots() {
    // No roots: step 8 never approves a run-mode request (the daemon's user may read
    // what the agent may not).
    let d = TestDaemon::start(&[]).await;
    let r = decide_run(&d, "ls -la", None).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(reasons(&r).contains("allowed_cwd_roots"), "{}", reasons(&r));
    // Decide-only, the same command is approved.
    let r = decide(&d, "ls -la", None).await;
    assert!(approved_by_policy(&r), "{r:?}");
}

async fn decide_run(d: &TestDaemon, command: &str, cwd: Option<&Path>) -> Record {
    let client = d.agent();
    let mut body = json!({"agent": "agent", "command": command, "run": true});
    if let Some(cwd) = cwd {
        body["cwd"] = json!(cwd);
    }
    let task = tokio::spawn(async move {
        client
            .call(hyper::Method::POST, "/v1/requests", Some(&body))
            .await
            .unwrap()
    });
    let r = d.pending_for(command).await;
    let (status, _) = d.decide(&r.short_id, "deny").await;
    assert_eq!(status, StatusCode::OK);
    let _ = task.await;
    r
}

/// Where git starts, an owner's exact rule may not say `git` first: `bash -lc 'git
/// status'` (how some coding tools run every command), git by its full path, git told
/// to work in another repository. Each still runs what the repository names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exact_rules_do_not_carry_git_past_its_repository() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let (program, _) = marker_program(dir.path(), "fsmonitor");
    set_config(&repo, "core.fsmonitor", program.to_str().unwrap());
    let git_path = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let git_path = String::from_utf8(git_path.stdout)
        .unwrap()
        .trim()
        .to_owned();
    assert!(git_path.starts_with('/'), "git is installed: {git_path:?}");
    let d = TestDaemon::start(&[]).await;

    for command in [
        "bash -lc 'git status'".to_owned(),
        "sh -c \"git status --short\"".to_owned(),
        format!("{git_path} status"),
    ] {
        let (status, _) = d
            .add_rule(json!({"pattern": command, "kind": "exact"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{command}");
        let r = decide(&d, &command, Some(&repo)).await;
        assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
        assert!(
            reasons(&r).contains("core.fsmonitor"),
            "{command}: {}",
            reasons(&r)
        );
    }

    // A clean repository as the cwd, git pointed at the one that names a program.
    let clean = self::repo(&dir.path().join("clean"));
    let elsewhere = "reads only the configuration of the cwd's repository";
    for command in [
        format!("git -C {} status", repo.display()),
        format!("git --git-dir={}/.git status", repo.display()),
        format!("git --work-tree {} status", repo.display()),
        format!("git -c include.path={}/.git/config status", repo.display()),
        format!("sh -c 'cd {} && git status'", repo.display()),
        format!("env -C {} git status", repo.display()),
    ] {
        let (status, _) = d
            .add_rule(json!({"pattern": command, "kind": "exact"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{command}");
        let r = decide(&d, &command, Some(&clean)).await;
        assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
        assert!(
            reasons(&r).contains(elsewhere),
            "{command}: {}",
            reasons(&r)
        );
    }
    // An owner's glob for `cd` does not carry the harmless `git status` after it into
    // another repository.
    let (status, _) = d.add_rule(json!({"pattern": "cd *", "kind": "glob"})).await;
    assert_eq!(status, StatusCode::CREATED);
    let r = decide(&d, "cd sub", Some(&clean)).await;
    assert_eq!(r.via, Some(Via::Allowlist), "the glob works: {r:?}");
    let command = format!("cd {} && git status", repo.display());
    let r = decide(&d, &command, Some(&clean)).await;
    assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
    assert!(
        reasons(&r).contains(elsewhere),
        "{command}: {}",
        reasons(&r)
    );
    // The rule itself works where git stays in the cwd's repository.
    let (status, _) = d
        .add_rule(json!({"pattern": "bash -lc 'git log -1'", "kind": "exact"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let r = decide(&d, "bash -lc 'git log -1'", Some(&clean)).await;
    assert_eq!(
        (r.status, r.via),
        (Status::Approved, Some(Via::Allowlist)),
        "{r:?}"
    );
}

/// Run mode reads the repository again just before git runs: what policy approved while
/// the repository was clean does not run once the agent, while the command waited its
/// turn, set something execgate cannot neutralise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_mode_reads_the_repository_again_before_git_runs() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let root = dir.path().display().to_string();
    let d = TestDaemon::start(&[
        ("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", root.as_str()),
        ("EXECGATE_EXEC__MAX_CONCURRENT", "1"),
    ])
    .await;
    let run = |command: &str| {
        let client = d.agent();
        let body = json!({"agent": "agent", "command": command, "cwd": repo, "run": true});
        tokio::spawn(async move {
            client
                .call(hyper::Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
        })
    };
    // One slot: `sleep` holds it while `git status` waits, approved by policy.
    let sleeping = run("sleep 1");
    assert!(d.in_run_queue("sleep 1", true).await, "sleep runs");
    let waiting_git = run("git status --short");
    let queued = d.in_run_queue("git status --short", false).await;
    assert!(queued, "git status waits behind sleep");
    // Meanwhile the agent points the working tree elsewhere, which no value undoes.
    set_config(&repo, "core.worktree", "/");

    let (status, v) = waiting_git.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    let r: Record = serde_json::from_value(v).unwrap();
    assert!(
        approved_by_policy(&r),
        "approved while the repository was clean: {r:?}"
    );
    let result = r.result.unwrap();
    assert_eq!(result.exit_code, None, "git must not run: {result:?}");
    let error = result.error.unwrap_or_default();
    assert!(error.contains("core.worktree"), "{error}");
    let (status, v) = sleeping.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["result"]["exit_code"], 0, "{v}");
}

/// `repo` with a submodule `lib` (a real `git submodule add` of a second repository),
/// committed, and a clean working tree.
fn repo_with_submodule(dir: &Path) -> PathBuf {
    let git = |cwd: &Path, args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.email=t@example.org", "-c", "user.name=t"])
            .args(["-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(cwd)
            .env("HOME", dir)
            .output()
            .expect("git is installed");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    let lib = dir.join("lib-origin");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q", "-b", "main"]);
    std::fs::write(lib.join("lib.txt"), "lib\n").unwrap();
    git(&lib, &["add", "lib.txt"]);
    git(&lib, &["commit", "-qm", "lib"]);
    let repo = repo(dir);
    git(&repo, &["checkout", "-q", "--", "a.txt"]);
    git(
        &repo,
        &["submodule", "add", "-q", lib.to_str().unwrap(), "lib"],
    );
    git(&repo, &["commit", "-qm", "with lib"]);
    repo
}

/// What git does in submodules counts (issue 29): `git status` and `git diff` run git
/// in every checked-out submodule, which reads the submodule's own configuration in
/// `.git/modules/NAME/`, and `git submodule update` runs its hooks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submodules_are_read_as_git_enters_them() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_with_submodule(dir.path());
    let d = TestDaemon::start(&[]).await;
    // Clean submodules: the everyday reads stay approved at once.
    for command in [
        "git status",
        "git log --oneline -5",
        "git diff",
        "git submodule status",
    ] {
        let r = decide(&d, command, Some(&repo)).await;
        assert!(approved_by_policy(&r), "{command}: {r:?}");
    }

    // The submodule's own configuration names a program: git runs it on `git status`.
    let (program, ran) = marker_program(dir.path(), "fsmonitor");
    let module = repo.join(".git/modules/lib");
    set_config(&module, "core.fsmonitor", program.to_str().unwrap());
    for command in ["git status", "git diff", "git submodule status"] {
        let r = decide(&d, command, Some(&repo)).await;
        assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
        assert!(
            reasons(&r).contains("submodule `lib`'s `core.fsmonitor`"),
            "{command}: {}",
            reasons(&r)
        );
    }
    // The same from an index in git's prefix-compressed version 4.
    plain_git(&repo, &["update-index", "--index-version", "4"]);
    let r = decide(&d, "git status", Some(&repo)).await;
    assert!(reasons(&r).contains("submodule `lib`"), "{}", reasons(&r));
    plain_git(&repo, &["status"]);
    assert!(ran.exists(), "git really runs the submodule's monitor");
    set_config(&module, "--unset", "core.fsmonitor");

    // A hook in the submodule's git directory: `git submodule update` under `git *`.
    let (status, _) = d
        .add_rule(json!({"pattern": "git *", "kind": "glob"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let r = decide(&d, "git submodule update", Some(&repo)).await;
    assert_eq!(r.via, Some(Via::Allowlist), "{r:?}");
    let hook = module.join("hooks/post-checkout");
    std::fs::write(&hook, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = decide(&d, "git submodule update", Some(&repo)).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(
        reasons(&r).contains("lib: post-checkout"),
        "{}",
        reasons(&r)
    );
}

/// In run mode `git diff --submodule=diff` runs `git diff` in the submodule, and `git
/// status` runs `git status` there: neither runs what the submodule's configuration
/// names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_mode_neutralises_what_submodules_would_run() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_with_submodule(dir.path());
    std::fs::write(repo.join("lib/lib.txt"), "changed\n").unwrap();
    let module = repo.join(".git/modules/lib");
    let (external, external_ran) = marker_program(dir.path(), "external");
    let (monitor, monitor_ran) = marker_program(dir.path(), "monitor");
    set_config(&module, "diff.external", external.to_str().unwrap());
    set_config(&module, "core.fsmonitor", monitor.to_str().unwrap());
    let root = dir.path().display().to_string();
    let d = TestDaemon::start(&[("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", root.as_str())]).await;

    let (status, v) = d
        .submit(
            json!({"agent": "agent", "command": "git status --short", "cwd": repo, "run": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let r: Record = serde_json::from_value(v).unwrap();
    assert!(approved_by_policy(&r), "{r:?}");
    assert!(r.result.unwrap().stdout.contains("lib"));
    assert!(!monitor_ran.exists(), "the submodule's core.fsmonitor ran");

    // Policy approves it too: the submodule's key is neutralised (an empty external
    // diff, which makes git stop rather than run it).
    let (status, v) = d
        .submit(json!({"agent": "agent", "command": "git diff --submodule=diff", "cwd": repo, "run": true}))
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let r: Record = serde_json::from_value(v).unwrap();
    assert!(approved_by_policy(&r), "{r:?}");
    assert!(
        !external_ran.exists(),
        "the submodule's diff.external ran: {r:?}"
    );
    assert!(!monitor_ran.exists(), "the submodule's core.fsmonitor ran");
    // Without execgate, git runs it: the marker works.
    plain_git(&repo, &["diff", "--submodule=diff"]);
    assert!(external_ran.exists(), "the marker program works");
}

/// git accepts a `.git` directory only when it is a valid git directory (a `HEAD` that
/// names a ref, `objects/`, `refs/`), and walks on to the parent otherwise (issue 29):
/// a decoy `.git` holding only `commondir` must not make execgate read a clean
/// configuration while git runs the parent's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_walks_past_what_git_walks_past() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let (program, ran) = marker_program(dir.path(), "fsmonitor");
    set_config(&repo, "core.fsmonitor", program.to_str().unwrap());
    let inner = repo.join("inner");
    let decoy = inner.join(".git");
    std::fs::create_dir_all(decoy.join("objects")).unwrap();
    std::fs::create_dir_all(decoy.join("refs")).unwrap();
    std::fs::write(decoy.join("config"), "[core]\n\tbare = false\n").unwrap();
    let clean = self::repo(&dir.path().join("clean"));
    std::fs::write(
        decoy.join("commondir"),
        format!("{}\n", clean.join(".git").display()),
    )
    .unwrap();
    let d = TestDaemon::start(&[]).await;
    let r = decide(&d, "git status", Some(&inner)).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(reasons(&r).contains("core.fsmonitor"), "{}", reasons(&r));
    // git itself walks on to the parent and runs its monitor.
    plain_git(&inner, &["status"]);
    assert!(ran.exists(), "git ran the parent repository's monitor");
}

/// A special file where git expects a small file (a FIFO named `commondir`) is no
/// reason to wait: the request is put to a human with the reason, and the next request
/// of the same agent is answered too (issue 29).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_in_the_repository_is_asked_about_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let fifo = repo.join(".git/commondir");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let d = TestDaemon::start(&[]).await;
    for _ in 0..2 {
        let r = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            decide(&d, "git status", Some(&repo)),
        )
        .await
        .expect("answered without waiting on the FIFO");
        assert_eq!(r.status, Status::Pending, "{r:?}");
        assert!(
            reasons(&r).contains("not a regular file"),
            "{}",
            reasons(&r)
        );
    }
}

/// In run mode what execgate read must be what git reads (issue 29): where another uid
/// can write the repository, it could swap the configuration between the two reads, so
/// policy never runs git there on its own word.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_mode_runs_git_on_policy_only_where_nobody_else_can_write_the_repository() {
    if !can_switch_uid(
        "run_mode_runs_git_on_policy_only_where_nobody_else_can_write_the_repository",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let root = dir.path().display().to_string();
    let d = TestDaemon::start(&[("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", root.as_str())]).await;
    let (status, v) = d
        .submit(
            json!({"agent": "agent", "command": "git status --short", "cwd": repo, "run": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let r: Record = serde_json::from_value(v).unwrap();
    assert!(approved_by_policy(&r), "the daemon's own repository: {r:?}");

    std::os::unix::fs::chown(repo.join(".git/config"), Some(AGENT_UID), None).unwrap();
    let r = decide_run(&d, "git status --short", Some(&repo)).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(
        reasons(&r).contains(&format!("belongs to uid {AGENT_UID}")),
        "{}",
        reasons(&r)
    );
}

/// The values every run gets for git's program-valued keys claim to behave as git's
/// defaults (`programs::git::keys`, `Off::Default`): checked against git itself, whose
/// everyday commands print the same with them as without, and succeed.
#[test]
fn the_values_every_run_gets_change_nothing_git_prints() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let (env, cannot) = execgate::policy::gitrepo::neutralising_env(None, &[]);
    assert!(cannot.is_empty());
    assert!(env.len() > 20, "every key without a subsection: {env:?}");
    for args in [
        &["status", "--short"][..],
        &["diff"],
        &["log", "-p", "-1"],
        &["show", "--stat", "HEAD"],
        &[
            "-c",
            "user.email=t@example.org",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
            "--dry-run",
        ],
    ] {
        let run = |with: bool| {
            let mut cmd = Command::new("git");
            cmd.args(args).current_dir(&repo).env("HOME", dir.path());
            if with {
                cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            }
            cmd.output().unwrap()
        };
        let (plain, neutral) = (run(false), run(true));
        assert_eq!(
            plain.status.code(),
            neutral.status.code(),
            "git {args:?}: {neutral:?}"
        );
        assert_eq!(plain.stdout, neutral.stdout, "git {args:?}");
    }
}

/// Which directories git may search depends on the uid it runs as (issue 29): an agent on
/// its own uid makes a decoy `.git` whose `objects/` it cannot search (mode 0), so its own
/// git walks past the decoy to the parent repository and runs that one's monitor. The
/// daemon, as root, could search it: it must judge as the agent's git will, and ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_is_judged_as_the_agents_own_git_sees_it() {
    use std::os::unix::process::CommandExt;
    if !can_switch_uid("discovery_is_judged_as_the_agents_own_git_sees_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let repo = repo(dir.path());
    let (program, ran) = marker_program(dir.path(), "fsmonitor");
    set_config(&repo, "core.fsmonitor", program.to_str().unwrap());
    let inner = repo.join("inner");
    let decoy = inner.join(".git");
    std::fs::create_dir_all(decoy.join("refs")).unwrap();
    std::fs::create_dir_all(decoy.join("objects")).unwrap();
    std::fs::write(decoy.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(decoy.join("config"), "[core]\n\tbare = false\n").unwrap();
    // The whole checkout is the agent's, as its own project would be.
    let chown = Command::new("chown")
        .args(["-R", &format!("{AGENT_UID}:{AGENT_GID}")])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(chown.success());
    std::fs::set_permissions(
        decoy.join("objects"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();

    // The agent's own git walks past the decoy and runs the parent's monitor.
    let out = Command::new("git")
        .arg("status")
        .current_dir(&inner)
        .env("HOME", dir.path())
        .uid(AGENT_UID)
        .gid(AGENT_GID)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        ran.exists(),
        "the agent's git ran the parent repository's monitor"
    );

    let d = TestDaemon::start(&[]).await;
    let_agent_in(d.dir.path(), &d.config().socket);
    let socket = d.config().socket.clone();
    let body = json!({"agent": "agent", "command": "git status", "cwd": inner, "wait": false});
    let (status, v) = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            execgate::client::Client::new(socket)
                .call(hyper::Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
        })
    })
    .await
    .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{v}");
    let r: Record = serde_json::from_value(v).unwrap();
    assert_eq!(r.peer_uid, Some(AGENT_UID));
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(reasons(&r).contains("core.fsmonitor"), "{}", reasons(&r));
}
