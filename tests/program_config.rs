//! Configuration other programs than git read from where they run (issue 30, finding 3):
//! `npm ls` is harmless by its words, but npm reads the project's `.npmrc`, where
//! `userconfig=` makes it read another file, `logs-dir=` write where the agent chose, and
//! `viewer=browser` makes `npm help` start a browser. The same holds for cargo's
//! `.cargo/config.toml` and `rust-toolchain.toml`, docker compose's `.env` and compose
//! file, yarn's and pnpm's rc files, and the rc files curl, wget, jq and pip read from
//! the home directory. Over the agent socket, with the agent on its own uid owning the
//! project:
//!
//! - decide-only: such a program is approved without a human (step 8, or a rule) only
//!   when the configuration it would read cannot change what runs, what is read or where
//!   it writes, and the reason names the file and the key;
//! - run mode: what the environment can neutralise is neutralised for every run (npm's
//!   user and global configuration, `WGETRC`, `PIP_CONFIG_FILE`), checked with the real
//!   programs.

use execgate_testkit as common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::uid::{AGENT_GID, AGENT_UID, as_agent, can_switch_uid, let_agent_in};
use common::*;
use execgate::model::{Record, Status, Via};
use hyper::StatusCode;
use serde_json::json;

/// A project directory `dir/proj` the agent owns, as its own checkout would be, with
/// `files` (path, content) in it.
fn project(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let proj = dir.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    for (path, content) in files {
        let path = proj.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    give_to_agent(&proj);
    proj
}

fn give_to_agent(path: &Path) {
    let chown = Command::new("chown")
        .args(["-R", &format!("{AGENT_UID}:{AGENT_GID}")])
        .arg(path)
        .status()
        .unwrap();
    assert!(chown.success());
}

/// Writes `content` to `path` as the agent would (the file is the agent's).
fn agent_writes(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    give_to_agent(path);
}

/// A daemon whose agent socket the agent's uid can reach.
async fn daemon() -> TestDaemon {
    let d = TestDaemon::start(&[]).await;
    let_agent_in(d.dir.path(), &d.config().socket);
    d
}

/// Asks, decide-only, as the agent on its own uid.
async fn decide(d: &TestDaemon, command: &str, cwd: &Path) -> Record {
    let socket = d.config().socket.clone();
    let body = json!({"agent": "agent", "command": command, "cwd": cwd, "wait": false});
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
    assert!(
        status == StatusCode::OK || status == StatusCode::ACCEPTED,
        "{status}: {v}"
    );
    let r: Record = serde_json::from_value(v).unwrap();
    assert_eq!(r.peer_uid, Some(AGENT_UID));
    r
}

fn approved_without_human(r: &Record) -> bool {
    r.status == Status::Approved && matches!(r.via, Some(Via::Policy | Via::Allowlist))
}

fn reasons(r: &Record) -> String {
    r.risk_reasons.join(" | ")
}

/// `command` in `cwd` is put to a human, with a reason naming every one of `names`.
async fn asked(d: &TestDaemon, command: &str, cwd: &Path, names: &[&str]) {
    let r = decide(d, command, cwd).await;
    assert_eq!(r.status, Status::Pending, "{command}: {r:?}");
    for name in names {
        assert!(reasons(&r).contains(name), "{command}: {}", reasons(&r));
    }
}

async fn approved(d: &TestDaemon, command: &str, cwd: &Path) {
    let r = decide(d, command, cwd).await;
    assert!(approved_without_human(&r), "{command}: {r:?}");
}

const PACKAGE: (&str, &str) = ("package.json", "{\"name\":\"p\",\"version\":\"1.0.0\"}\n");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npmrc_keys_that_change_what_npm_reads_writes_or_runs_are_asked_about() {
    if !can_switch_uid("npmrc_keys_that_change_what_npm_reads_writes_or_runs_are_asked_about") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let proj = project(dir.path(), &[PACKAGE]);
    let d = daemon().await;
    for command in ["npm ls", "npm prefix", "npm help x"] {
        approved(&d, command, &proj).await;
    }
    let npmrc = proj.join(".npmrc");
    // What projects keep there: how dependencies are saved and resolved.
    agent_writes(
        &npmrc,
        "save-exact=true\n; a comment\nengine-strict = true\n",
    );
    approved(&d, "npm ls", &proj).await;

    agent_writes(&npmrc, "save-exact=true\nuserconfig=/root/secret\n");
    asked(&d, "npm ls", &proj, &[".npmrc", "userconfig"]).await;
    agent_writes(&npmrc, "logs-dir=/tmp/agent-chose\n");
    asked(&d, "npm prefix", &proj, &[".npmrc", "logs-dir"]).await;
    agent_writes(&npmrc, "viewer=browser\n");
    asked(&d, "npm help x", &proj, &[".npmrc", "viewer"]).await;
    // npm reads the project root's `.npmrc` from any directory below it.
    let sub = proj.join("src/deep");
    agent_writes(&sub.join("keep"), "");
    asked(&d, "npm help x", &sub, &["viewer"]).await;
    // Wrapped or after another command, npm is the same npm.
    asked(&d, "timeout 5 npm help x", &proj, &["viewer"]).await;
    asked(&d, "pwd && npm help x", &proj, &["viewer"]).await;
    // A line execgate cannot read as npm's ini is not vouched for.
    agent_writes(&npmrc, "[section]\nsave-exact=true\n");
    asked(&d, "npm ls", &proj, &[".npmrc"]).await;
    // A `.npmrc` the agent points at a file only root may read: asked about, and what
    // the daemon read there (as root) is not echoed to the agent in the reason.
    let secret = dir.path().join("root-only");
    std::fs::write(&secret, "hunter2-is-the-password=1\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(&npmrc).unwrap();
    std::os::unix::fs::symlink(&secret, &npmrc).unwrap();
    let r = decide(&d, "npm ls", &proj).await;
    assert_eq!(r.status, Status::Pending, "{r:?}");
    assert!(!reasons(&r).contains("hunter2"), "{}", reasons(&r));
    assert!(reasons(&r).contains("may not read"), "{}", reasons(&r));
    // A special file where npm reads its configuration is not waited on.
    std::fs::remove_file(&npmrc).unwrap();
    let c = std::ffi::CString::new(npmrc.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    asked(&d, "npm ls", &proj, &["not a regular file"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cargo_configuration_that_runs_programs_is_asked_about() {
    if !can_switch_uid("cargo_configuration_that_runs_programs_is_asked_about") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cargo_toml = "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let proj = project(
        dir.path(),
        &[("Cargo.toml", cargo_toml), ("src/main.rs", "")],
    );
    let d = daemon().await;
    // rustup's proxy makes step 8 ask about every cargo command: the owner's rules
    // approve these two.
    for pattern in ["cargo metadata --format-version 1", "cargo version"] {
        let (status, v) = d
            .add_rule(json!({"agent": null, "pattern": pattern, "kind": "exact"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
    }
    approved(&d, "cargo metadata --format-version 1", &proj).await;
    approved(&d, "cargo version", &proj).await;

    let config = proj.join(".cargo/config.toml");
    agent_writes(&config, "[term]\ncolor = \"always\"\n");
    approved(&d, "cargo metadata --format-version 1", &proj).await;
    // `cargo metadata` runs `rustc -vV` through the wrapper (tried with the real cargo).
    agent_writes(&config, "[build]\nrustc-wrapper = \"/tmp/evil\"\n");
    asked(
        &d,
        "cargo metadata --format-version 1",
        &proj,
        &[".cargo/config.toml", "build.rustc-wrapper"],
    )
    .await;
    std::fs::remove_file(&config).unwrap();
    // cargo reads every `.cargo/config.toml` from the working directory up.
    agent_writes(
        &dir.path().join(".cargo/config"),
        "[target.x86_64-unknown-linux-gnu]\nrunner = \"/tmp/evil\"\n",
    );
    asked(
        &d,
        "cargo metadata --format-version 1",
        &proj,
        &["target.x86_64-unknown-linux-gnu.runner"],
    )
    .await;
    std::fs::remove_file(dir.path().join(".cargo/config")).unwrap();
    // rustup's proxy runs the toolchain the project names: a `path` is any program.
    agent_writes(
        &proj.join("rust-toolchain.toml"),
        "[toolchain]\npath = \"/tmp/evil\"\n",
    );
    asked(
        &d,
        "cargo version",
        &proj,
        &["rust-toolchain.toml", "toolchain.path"],
    )
    .await;
    agent_writes(
        &proj.join("rust-toolchain.toml"),
        "[toolchain]\nchannel = \"stable\"\ncomponents = [\"clippy\"]\n",
    );
    approved(&d, "cargo version", &proj).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_compose_files_that_reach_elsewhere_are_asked_about() {
    if !can_switch_uid("docker_compose_files_that_reach_elsewhere_are_asked_about") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let compose = "services:\n  web:\n    image: nginx\n    ports:\n      - \"8080:80\"\n";
    let proj = project(dir.path(), &[("compose.yaml", compose)]);
    let d = daemon().await;
    // docker asks its daemon, outside the project: the owner's rule approves it, as long
    // as the project's files keep it on this machine's daemon and files.
    let (status, _) = d
        .add_rule(json!({"agent": null, "pattern": "docker compose ps", "kind": "exact"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    approved(&d, "docker compose ps", &proj).await;
    agent_writes(&proj.join(".env"), "TAG=latest\n");
    approved(&d, "docker compose ps", &proj).await;

    // `.env` moves compose to another daemon or another compose file.
    agent_writes(&proj.join(".env"), "DOCKER_HOST=tcp://203.0.113.9:2375\n");
    asked(&d, "docker compose ps", &proj, &[".env", "DOCKER_HOST"]).await;
    agent_writes(&proj.join(".env"), "COMPOSE_FILE=/root/other.yaml\n");
    asked(&d, "docker compose ps", &proj, &["COMPOSE_FILE"]).await;
    std::fs::remove_file(proj.join(".env")).unwrap();
    // The compose file reads other files (`docker compose config` prints them).
    agent_writes(
        &proj.join("compose.yaml"),
        "services:\n  web:\n    image: nginx\n    env_file: /root/secret\n",
    );
    asked(
        &d,
        "docker compose ps",
        &proj,
        &["compose.yaml", "env_file"],
    )
    .await;
    // compose finds its file from directories below the project too.
    agent_writes(&proj.join("sub/keep"), "");
    asked(&d, "docker compose ps", &proj.join("sub"), &["env_file"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yarn_and_pnpm_rc_files_are_judged_before_a_rule_approves() {
    if !can_switch_uid("yarn_and_pnpm_rc_files_are_judged_before_a_rule_approves") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let proj = project(dir.path(), &[PACKAGE]);
    let d = daemon().await;
    for pattern in ["yarn list", "pnpm list"] {
        let (status, v) = d
            .add_rule(json!({"agent": null, "pattern": pattern, "kind": "exact"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
    }
    approved(&d, "yarn list", &proj).await;
    approved(&d, "pnpm list", &proj).await;

    // Yarn runs the release its rc file names, for every command.
    agent_writes(&proj.join(".yarnrc.yml"), "yarnPath: .yarn/evil.cjs\n");
    asked(&d, "yarn list", &proj, &[".yarnrc.yml"]).await;
    std::fs::remove_file(proj.join(".yarnrc.yml")).unwrap();
    agent_writes(&proj.join(".yarnrc"), "yarn-path \"./evil.js\"\n");
    asked(&d, "yarn list", &proj, &[".yarnrc"]).await;
    std::fs::remove_file(proj.join(".yarnrc")).unwrap();
    approved(&d, "yarn list", &proj).await;

    // pnpm loads `.pnpmfile.cjs` (code) and reads `.npmrc` as npm does.
    agent_writes(&proj.join(".pnpmfile.cjs"), "module.exports = {}\n");
    asked(&d, "pnpm list", &proj, &[".pnpmfile.cjs"]).await;
    std::fs::remove_file(proj.join(".pnpmfile.cjs")).unwrap();
    agent_writes(&proj.join(".npmrc"), "global-dir=/tmp/agent-chose\n");
    asked(&d, "pnpm list", &proj, &[".npmrc", "global-dir"]).await;
    asked(&d, "yarn list", &proj, &[".npmrc", "global-dir"]).await;
    agent_writes(&proj.join(".npmrc"), "auto-install-peers=true\n");
    approved(&d, "pnpm list", &proj).await;
    agent_writes(
        &proj.join("pnpm-workspace.yaml"),
        "packages:\n  - 'packages/*'\n",
    );
    approved(&d, "pnpm list", &proj).await;
    agent_writes(
        &proj.join("pnpm-workspace.yaml"),
        "packages:\n  - 'packages/*'\nstoreDir: /tmp/agent-chose\n",
    );
    asked(&d, "pnpm list", &proj, &["pnpm-workspace.yaml", "storeDir"]).await;
}

/// What the run gets from execgate when it runs the command itself: the home directory
/// is the daemon's (`HOME` of `execgate serve`, a directory of the test's here), and the
/// rc files in it are judged, or neutralised through the environment where the real
/// program allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_mode_neutralises_or_judges_the_home_rc_files() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let home = tempfile::tempdir().unwrap();
    let d = common::process::Process::start(home.path(), &[]).await;
    let config = config_for(&d.env);
    let admin = execgate::client::Client::new(config.admin_socket.clone());
    let rules = [
        "curl -s http://127.0.0.1:9/",
        "wget -q -O - http://127.0.0.1:9/",
        "jq -n 1",
        "pip list",
    ];
    for pattern in rules {
        let rule = json!({"agent": null, "pattern": pattern, "kind": "exact"});
        let (status, v) = admin
            .call(hyper::Method::POST, "/v1/allowlist", Some(&rule))
            .await
            .unwrap();
        assert_eq!(status, StatusCode::CREATED, "{v}");
    }
    let run = |command: &str| {
        let body = json!({"agent": "agent", "command": command, "cwd": proj, "run": true});
        let agent = execgate::client::Client::new(config.socket.clone());
        async move {
            let (status, v) = agent
                .call(hyper::Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap();
            assert!(status.is_success(), "{status}: {v}");
            serde_json::from_value::<Record>(v).unwrap()
        }
    };
    for command in &rules[..3] {
        let r = run(command).await;
        assert!(approved_without_human(&r), "{command}: {r:?}");
    }

    // curl, wget and jq read their rc file whatever the environment says (`WGETRC` must
    // name a regular file: `/dev/null` stops wget): judged.
    let home = home.path();
    std::fs::write(home.join(".curlrc"), "output = /tmp/agent-chose\n").unwrap();
    std::fs::write(home.join(".wgetrc"), "logfile = /tmp/agent-chose\n").unwrap();
    std::fs::write(home.join(".jq"), "def f: 1;\n").unwrap();
    for (command, file) in [
        ("curl -s http://127.0.0.1:9/", ".curlrc"),
        ("wget -q -O - http://127.0.0.1:9/", ".wgetrc"),
        ("jq -n 1", ".jq"),
    ] {
        let waiting = tokio::spawn(run(command));
        let r = loop {
            let (_, v) = admin
                .call(hyper::Method::GET, "/v1/requests?status=pending", None)
                .await
                .unwrap();
            let pending: Vec<Record> = serde_json::from_value(v).unwrap();
            if let Some(r) = pending.into_iter().find(|r| r.command.display() == command) {
                break r;
            }
            assert!(!waiting.is_finished(), "{command} was not put to a human");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        };
        assert!(reasons(&r).contains(file), "{command}: {}", reasons(&r));
        let path = format!("/v1/requests/{}/decision", r.id);
        let (status, v) = admin
            .call(
                hyper::Method::POST,
                &path,
                Some(&json!({"decision": "deny"})),
            )
            .await
            .unwrap();
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(waiting.await.unwrap().status, Status::Denied);
    }

    // pip's is not read at all (`PIP_CONFIG_FILE=/dev/null`): what it says never happens.
    let log = dir.path().join("pip.log");
    let conf = home.join(".config/pip/pip.conf");
    std::fs::create_dir_all(conf.parent().unwrap()).unwrap();
    std::fs::write(&conf, format!("[global]\nlog = {}\n", log.display())).unwrap();
    let r = run("pip list").await;
    assert!(approved_without_human(&r), "{r:?}");
    assert_eq!(
        r.result.as_ref().and_then(|r| r.exit_code),
        Some(0),
        "{r:?}"
    );
    assert!(!log.exists(), "pip read the home's pip.conf");
}

/// The finding itself: a project `.npmrc` naming a root-only file as the user
/// configuration made the daemon's npm print that file line by line in its warnings. A
/// human who approves `npm ls` (told what the `.npmrc` sets) gets an npm that reads no
/// user or global configuration at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_npm_reads_no_user_configuration_the_project_names() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "secret-line-1\nTOKEN=abc\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join(PACKAGE.0), PACKAGE.1).unwrap();
    std::fs::write(
        proj.join(".npmrc"),
        format!("userconfig={}\n", secret.display()),
    )
    .unwrap();
    let d = TestDaemon::start(&[]).await;
    let waiting = tokio::spawn({
        let client = d.agent();
        let body = json!({"agent": "agent", "command": "npm ls", "cwd": proj, "run": true});
        async move {
            client
                .call(hyper::Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
        }
    });
    let pending = d.pending_for("npm ls").await;
    assert!(
        reasons(&pending).contains("userconfig"),
        "{}",
        reasons(&pending)
    );
    let (status, _) = d.decide(&pending.short_id, "allow-once").await;
    assert_eq!(status, StatusCode::OK);
    let (status, v) = waiting.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    let r: Record = serde_json::from_value(v).unwrap();
    let result = r.result.expect("it ran");
    assert_eq!(result.exit_code, Some(0), "{result:?}");
    assert!(result.stdout.contains("p@1.0.0"), "{result:?}");
    for out in [&result.stdout, &result.stderr] {
        assert!(
            !out.contains("secret-line-1") && !out.contains("TOKEN"),
            "npm read the file: {out}"
        );
    }
}

/// The values every run gets for npm and pip claim that the real programs then read no
/// user or global configuration and still work: checked against the programs.
#[test]
fn the_neutralising_environment_works_with_the_real_programs() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join(PACKAGE.0), PACKAGE.1).unwrap();
    std::fs::write(dir.path().join(".npmrc"), "viewer=browser\n").unwrap();
    let env = execgate::policy::progconfig::neutralising_env();
    let get = |with: bool| {
        let mut cmd = Command::new("npm");
        cmd.args(["config", "get", "viewer"])
            .current_dir(&proj)
            .env("HOME", dir.path());
        if with {
            cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        let out = cmd.output().expect("npm is installed");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(get(false), "browser", "npm reads ~/.npmrc");
    assert_ne!(get(true), "browser", "npm still reads ~/.npmrc");

    // pip: `PIP_CONFIG_FILE=/dev/null` loads no configuration file at all.
    let conf = dir.path().join(".config/pip/pip.conf");
    std::fs::create_dir_all(conf.parent().unwrap()).unwrap();
    std::fs::write(&conf, "[global]\ntimeout = 7\n").unwrap();
    let pip = |with: bool| {
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "pip", "config", "list"])
            .current_dir(&proj)
            .env("HOME", dir.path());
        if with {
            cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        let out = cmd.output().expect("python3 is installed");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert!(pip(false).contains("global.timeout"), "pip reads pip.conf");
    assert!(!pip(true).contains("global.timeout"), "pip still reads it");
}

/// What policy approved is judged again just before it runs (as git's repository is): a
/// `~/.jq` that appears while the run waits for its turn stops it, with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_mode_reads_the_configuration_again_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let d = common::process::Process::start(home.path(), &[("EXECGATE_EXEC__MAX_CONCURRENT", "1")])
        .await;
    let config = config_for(&d.env);
    let admin = execgate::client::Client::new(config.admin_socket.clone());
    for pattern in ["sleep 1", "jq -n 1"] {
        let rule = json!({"agent": null, "pattern": pattern, "kind": "exact"});
        let (status, v) = admin
            .call(hyper::Method::POST, "/v1/allowlist", Some(&rule))
            .await
            .unwrap();
        assert_eq!(status, StatusCode::CREATED, "{v}");
    }
    let run = |command: &str| {
        let body = json!({"agent": "agent", "command": command, "cwd": dir.path(), "run": true});
        let agent = execgate::client::Client::new(config.socket.clone());
        tokio::spawn(async move {
            let (status, v) = agent
                .call(hyper::Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap();
            assert_eq!(status, StatusCode::OK, "{v}");
            serde_json::from_value::<Record>(v).unwrap()
        })
    };
    let in_queue = |command: &'static str, started: bool| {
        let admin = execgate::client::Client::new(config.admin_socket.clone());
        async move {
            for _ in 0..1000 {
                let (_, runs) = admin
                    .call(hyper::Method::GET, "/v1/runs", None)
                    .await
                    .unwrap();
                if runs
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e["command"] == command && e["started_at"].is_null() != started)
                {
                    return true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            false
        }
    };
    // One slot: `sleep` holds it while `jq` waits, approved by the owner's rule.
    let sleeping = run("sleep 1");
    assert!(in_queue("sleep 1", true).await, "sleep runs");
    let waiting = run("jq -n 1");
    assert!(in_queue("jq -n 1", false).await, "jq waits behind sleep");
    std::fs::write(home.path().join(".jq"), "def f: 1;\n").unwrap();

    let r = waiting.await.unwrap();
    assert!(
        approved_without_human(&r),
        "approved before ~/.jq was there: {r:?}"
    );
    let result = r.result.unwrap();
    assert_eq!(result.exit_code, None, "jq must not run: {result:?}");
    let error = result.error.unwrap_or_default();
    assert!(error.contains(".jq"), "{error}");
    assert_eq!(sleeping.await.unwrap().result.unwrap().exit_code, Some(0));
}
