//! The kernel holds what was approved (docs/decisions.md#confinement): a command run
//! under a confinement cannot write, execute, connect or read beyond it, whatever its
//! words made policy believe. Each confinement is built by the daemon's own plan
//! (`Policy::confinement_plan`) and run by run mode's own `exec::run`; the hostile
//! commands run as uid 65534, so that nothing but Landlock stands between them and
//! files the uid may otherwise write. The everyday commands run as the test's user and
//! must still work confined. Last, the daemon itself, on its own uid, with a verdict
//! forced by the owner's `security = full` and `exec.confine = read-only`.

use execgate_testkit as common;

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::uid::{AGENT_GID, AGENT_UID, as_agent, can_switch_uid};
use execgate::config::{Config, Overrides};
use execgate::exec::{self, RunSpec};
use execgate::model::{Command, CommandRef, Confine, ExecResult};
use execgate::policy::confinement::Place;
use execgate::policy::{Outcome, Policy, Subject};
use execgate::workdir::WorkDir;
use serde_json::json;

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A project (a git work tree) owned by uid 65534, a decoy secret outside it that the
/// uid could read, and execgate's own database beside them.
struct Machine {
    dir: tempfile::TempDir,
    project: PathBuf,
    decoy: PathBuf,
    database: PathBuf,
    policy: Policy,
}

/// The machine, its files owned by uid 65534 when `hostile` (the commands run as that
/// uid), else left to the test's user.
fn machine_for(hostile: bool) -> Machine {
    machine_in(hostile, tempfile::tempdir().unwrap())
}

/// The machine in `dir`.
fn machine_in(hostile: bool, dir: tempfile::TempDir) -> Machine {
    let root = dir.path().to_path_buf();
    let project = root.join("project");
    let elsewhere = root.join("elsewhere");
    let state = root.join("state");
    for d in [
        &project,
        &project.join("src"),
        &project.join(".github"),
        &elsewhere,
        &state,
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(project.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(project.join("src/lib.txt"), "lib\n").unwrap();
    std::fs::write(project.join(".env"), "PROJECT-SECRET=1\n").unwrap();
    std::fs::write(project.join("build.py"), "print('built')\n").unwrap();
    std::fs::write(
        project.join("build.sh"),
        "#!/bin/sh\necho built > src/out.txt\n",
    )
    .unwrap();
    std::fs::set_permissions(
        project.join("build.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let decoy = elsewhere.join("id_ed25519");
    std::fs::write(&decoy, "DECOY-SECRET").unwrap();
    let database = state.join("execgate.db");
    std::fs::write(&database, "DATABASE").unwrap();
    git(&["init", "-q"], &project);
    // Everything the uid may read and write, so only the kernel's hold refuses it.
    if hostile {
        chown_all(&root);
    }
    for p in [&root, &elsewhere, &state] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    for f in [&decoy, &database] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    let env = vec![
        ("HOME".to_string(), root.join("home").display().to_string()),
        (
            "EXECGATE_DATABASE".to_string(),
            database.display().to_string(),
        ),
        (
            "EXECGATE_SOCKET".to_string(),
            root.join("run/agent.sock").display().to_string(),
        ),
        (
            "EXECGATE_EXEC__ALLOWED_CWD_ROOTS".to_string(),
            root.display().to_string(),
        ),
    ];
    let config = Config::load_from(&Overrides::default(), &env).expect("valid config");
    let policy = Policy::new(Arc::new(config)).expect("policy compiles");
    Machine {
        dir,
        project,
        decoy,
        database,
        policy,
    }
}

impl Machine {
    /// `execgate serve` on uid 65534, beside the machine, with `extra` in its
    /// environment: the daemon on an unprivileged uid of its own.
    async fn daemon(&self, extra: &[(&str, &str)]) -> common::process::Process {
        let dir = self.dir.path().join("daemon");
        std::fs::create_dir_all(&dir).unwrap();
        chown_all(&dir);
        common::process::Process::start_with(
            &dir,
            extra,
            common::process::Options {
                as_user: Some((AGENT_UID, AGENT_GID)),
                ..Default::default()
            },
        )
        .await
    }
}

fn machine() -> Machine {
    machine_for(true)
}

fn git(args: &[&str], cwd: &Path) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(cwd)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

fn chown_all(path: &Path) {
    std::os::unix::fs::lchown(path, Some(AGENT_UID), Some(AGENT_GID)).unwrap();
    if path.is_dir() && !path.is_symlink() {
        for e in std::fs::read_dir(path).unwrap() {
            chown_all(&e.unwrap().path());
        }
    }
}

impl Machine {
    /// `line`, run in the project under `confine` as run mode runs it; as uid 65534
    /// when `hostile`.
    fn run(&self, line: &str, confine: Confine, hostile: bool) -> ExecResult {
        let subject = Subject {
            agent: "agent",
            session: None,
            command: CommandRef::Line(line),
            cwd: Some(&self.project),
            run: true,
            shell: None,
            uid: None,
        };
        let tmp = self.dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        chown_all(&tmp);
        let home = std::env::var("HOME").unwrap();
        let place = Place {
            path: PATH,
            tmp: Some(&tmp),
            home: Some(Path::new(&home)),
        };
        let plan = self
            .policy
            .confinement_plan(&self.policy.settings(), subject, confine, &place)
            .expect("a plan")
            .expect("confined");
        let prepared = plan.prepare().expect("the kernel takes the plan");
        let spec = RunSpec {
            command: Command::Line(line.into()),
            cwd: WorkDir::open(&self.project).unwrap(),
            input: None,
            timeout: Duration::from_secs(120),
            max_output_bytes: 1 << 20,
            env: vec![
                ("PATH".into(), format!("{home}/.cargo/bin:{PATH}")),
                ("HOME".into(), home.clone()),
                ("TMPDIR".into(), tmp.display().to_string()),
            ],
            confine: Some((confine, prepared)),
        };
        let run = move || async move { exec::run(spec).await };
        if hostile {
            as_agent(run)
        } else {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(run())
        }
    }

    /// `line` is refused something by the kernel, and says so; the caller checks that
    /// what was refused did not happen (a program may go on after a refusal, as sed
    /// does after its `e` command fails).
    fn refused(&self, line: &str, confine: Confine) -> ExecResult {
        let r = self.run(line, confine, true);
        assert!(
            !r.kernel_refused.is_empty(),
            "{line} under {confine}: no refusal recorded: {r:?}"
        );
        assert_eq!(r.confinement, Some(confine));
        r
    }

    fn works(&self, line: &str, confine: Confine) -> ExecResult {
        let r = self.run(line, confine, false);
        assert_eq!(r.exit_code, Some(0), "{line} under {confine}: {r:?}");
        assert!(r.kernel_refused.is_empty(), "{line}: {r:?}");
        r
    }
}

#[test]
fn a_harmless_command_that_was_misjudged_cannot_write_run_connect_or_read_outside() {
    if !can_switch_uid(
        "a_harmless_command_that_was_misjudged_cannot_write_run_connect_or_read_outside",
    ) {
        return;
    }
    let m = machine();
    let h = Confine::Harmless;
    // Running a program its words did not name: sed's `e`, awk's `system()`, find's
    // `-exec`, a git alias. The shell that runs the line may start; `id` may not.
    for line in [
        "sed -n '1e id' a.txt",
        "awk 'BEGIN { system(\"id\") }'",
        "find . -maxdepth 0 -exec id ';'",
        "git -c alias.x='!id' x",
    ] {
        let r = m.refused(line, h);
        assert!(!r.stdout.contains("uid="), "{line} ran id: {r:?}");
    }
    // Writing: in place, beside, or through the shell.
    for line in [
        "sed -i s/alpha/beta/ a.txt",
        "tee b.txt < a.txt",
        "cp a.txt src/b.txt",
    ] {
        m.refused(line, h);
    }
    assert_eq!(
        std::fs::read_to_string(m.project.join("a.txt")).unwrap(),
        "alpha\n"
    );
    assert!(!m.project.join("b.txt").exists() && !m.project.join("src/b.txt").exists());
    // Reading outside the project: a decoy key, execgate's own database.
    for target in [&m.decoy, &m.database] {
        let r = m.refused(&format!("cat {}", target.display()), h);
        assert!(!r.stdout.contains("DECOY") && !r.stdout.contains("DATABASE"));
    }
    // Connecting: to a listener the test holds open on loopback.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    m.refused(&format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'"), h);
    assert!(listener.accept().is_err(), "the confined command connected");
}

#[test]
fn read_only_refuses_every_write_and_workspace_keeps_to_the_project_and_off_its_guard() {
    if !can_switch_uid(
        "read_only_refuses_every_write_and_workspace_keeps_to_the_project_and_off_its_guard",
    ) {
        return;
    }
    let m = machine();
    for line in [
        "tee b.txt < a.txt",
        "sed -i s/alpha/beta/ a.txt",
        "cp a.txt src/b.txt",
    ] {
        m.refused(line, Confine::ReadOnly);
    }
    assert_eq!(
        std::fs::read_to_string(m.project.join("a.txt")).unwrap(),
        "alpha\n"
    );

    let w = Confine::Workspace;
    // Inside the project: written, as the owner approved.
    let r = m.run(
        "echo beta > a.txt && sed -i s/lib/LIB/ src/lib.txt && echo x > src/new.txt && mkdir src/d",
        w,
        true,
    );
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(m.project.join("a.txt")).unwrap(),
        "beta\n"
    );
    assert_eq!(
        std::fs::read_to_string(m.project.join("src/lib.txt")).unwrap(),
        "LIB\n"
    );
    // The cost of keeping the guard out of reach: nothing new at the project's top,
    // not even `sed -i`'s temporary file beside a top-level file.
    m.refused("sed -i s/beta/gamma/ a.txt", w);
    // Its guard, outside it, a new top-level entry: refused. (git's directory is git's
    // to write for a command a human approved: `git add`; the git gate reads it before
    // any git the agent runs, and project work may not write it.)
    for line in [
        "mkdir .github/hooks",
        "echo '{}' > .mcp.json",
        "mkdir .claude",
        "touch newtop",
    ] {
        m.refused(line, w);
    }
    m.refused(
        &format!("touch {}", m.dir.path().join("elsewhere/planted").display()),
        w,
    );
    assert!(!m.project.join(".github/hooks").exists() && !m.project.join(".mcp.json").exists());
    // execgate's own files are out of reach even where everything else may be read.
    m.refused(&format!("cat {}", m.database.display()), w);
    // And no network: it was not the profile's, nor the owner's, to give.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    m.refused(&format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'"), w);
    assert!(listener.accept().is_err());
}

#[test]
fn everyday_commands_still_work_confined() {
    let m = machine_for(false);
    m.works(
        "git status --short && git log -1 --oneline || true",
        Confine::Harmless,
    );
    m.works(
        "cat a.txt src/lib.txt && ls -la && grep -rn alpha .",
        Confine::Harmless,
    );
    m.works("true", Confine::Harmless);
    // A crate built and tested in the project, writing only its target directory.
    let krate = m.project.join("src/krate");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"k\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        krate.join("src/lib.rs"),
        "#[test]\nfn adds() { assert_eq!(1 + 1, 2); }\n",
    )
    .unwrap();
    let r = m.works(
        "cd src/krate && cargo test --offline -q 2>&1",
        Confine::Workspace,
    );
    assert!(r.stdout.contains("1 passed"), "{r:?}");
    // npm's own test script, in a package of the project.
    let pkg = m.project.join("src/pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name":"p","version":"1.0.0","scripts":{"test":"node -e \"console.log('ok ' + (1 + 1))\""}}"#,
    )
    .unwrap();
    let r = m.works("cd src/pkg && npm test 2>&1", Confine::Workspace);
    assert!(r.stdout.contains("ok 2"), "{r:?}");
}

/// The daemon as users meet it, on its own uid: the owner's `full` approves everything,
/// and `exec.confine = read-only` holds it. The record says how the command was held and
/// what the kernel refused; the command as harmless policy approves it runs confined as
/// harmless.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_runs_what_it_approved_confined_and_records_what_was_refused() {
    if !can_switch_uid("the_daemon_runs_what_it_approved_confined_and_records_what_was_refused") {
        return;
    }
    let m = machine();
    let daemon = m
        .daemon(&[
            ("EXECGATE_POLICY__SECURITY", "full"),
            ("EXECGATE_EXEC__CONFINE", "read-only"),
        ])
        .await;
    let (_, v) = daemon
        .submit(&json!({"agent": "runner", "command": "tee b.txt < a.txt", "run": true, "cwd": m.project}))
        .await;
    assert_eq!(v["status"], "approved", "{v}");
    assert_eq!(v["confinement"], "read-only", "{v}");
    assert_eq!(v["result"]["confinement"], "read-only", "{v}");
    assert!(
        v["result"]["kernel_refused"][0]
            .as_str()
            .is_some_and(|l| l.contains("Permission denied")),
        "{v}"
    );
    assert!(!m.project.join("b.txt").exists());
    // Stored: the record read back says the same.
    let id = v["id"].as_str().unwrap();
    let (_, stored) = execgate::client::Client::new(common::config_for(&daemon.env).socket)
        .call(hyper::Method::GET, &format!("/v1/requests/{id}"), None)
        .await
        .unwrap();
    assert_eq!(stored["confinement"], "read-only", "{stored}");
    assert_eq!(
        stored["result"]["kernel_refused"], v["result"]["kernel_refused"],
        "{stored}"
    );
    // And the daemon says what it confines with.
    let (_, health) = execgate::client::Client::new(common::config_for(&daemon.env).socket)
        .call(hyper::Method::GET, "/v1/health", None)
        .await
        .unwrap();
    assert_eq!(
        health["landlock_abi"].as_u64(),
        execgate::confine::abi().map(u64::from),
        "{health}"
    );
    assert!(
        health["landlock_abi"].is_u64(),
        "this kernel has Landlock: {health}"
    );
}

/// With the allowlist (the default), a command policy finds harmless runs held as
/// harmless: it reads the project and nothing it did not name may run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_harmless_verdict_runs_confined_as_harmless() {
    if !can_switch_uid("a_harmless_verdict_runs_confined_as_harmless") {
        return;
    }
    let m = machine();
    let roots = m.dir.path().display().to_string();
    let daemon = m
        .daemon(&[("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", roots.as_str())])
        .await;
    let (_, v) = daemon
        .submit(&json!({"agent": "runner", "command": "cat a.txt", "run": true, "cwd": m.project}))
        .await;
    assert_eq!(v["status"], "approved", "{v}");
    assert_eq!(v["confinement"], "harmless", "{v}");
    assert_eq!(v["result"]["stdout"], "alpha\n", "{v}");
}

/// `execgate confine`, as the agent's uid in its project: by default the command is held
/// as harmless (reads, writes nothing); `--workspace` writes inside the project, never
/// its guard settings; a confinement that cannot be had runs nothing (126).
#[test]
fn the_confine_verb_holds_a_command_as_the_daemon_would() {
    use std::os::unix::process::CommandExt;
    if !can_switch_uid("the_confine_verb_holds_a_command_as_the_daemon_would") {
        return;
    }
    let m = machine();
    let confine = |args: &[&str]| {
        std::process::Command::new(common::execgate_binary())
            .arg("confine")
            .args(args)
            .current_dir(&m.project)
            .env_clear()
            .env("PATH", PATH)
            .env("HOME", m.dir.path().join("home"))
            .env("EXECGATE_DATABASE", &m.database)
            .uid(AGENT_UID)
            .gid(AGENT_GID)
            .output()
            .unwrap()
    };
    let out = confine(&["--", "cat a.txt; echo x > src/lib.txt"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "alpha\n", "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Permission denied"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(m.project.join("src/lib.txt")).unwrap(),
        "lib\n"
    );
    let out = confine(&["--workspace", "--", "sh", "-c", "echo new > src/lib.txt"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(m.project.join("src/lib.txt")).unwrap(),
        "new\n"
    );
    let out = confine(&["--workspace", "--", "mkdir .github/hooks"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(!m.project.join(".github/hooks").exists());
    let out = confine(&["--network", "--", "true"]);
    assert_eq!(out.status.code(), Some(126), "{out:?}");
}

/// A run without `cwd` runs where the daemon runs, and that directory is held to
/// `exec.allowed_cwd_roots` like any other (it was not, once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_without_cwd_is_held_to_the_allowed_roots() {
    let m = machine_for(false);
    let daemon_dir = m.dir.path().join("daemon");
    std::fs::create_dir_all(&daemon_dir).unwrap();
    let roots = m.project.display().to_string();
    let daemon = common::process::Process::start(
        &daemon_dir,
        &[("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", roots.as_str())],
    )
    .await;
    let (status, v) = daemon
        .submit(&json!({"agent": "runner", "command": "true", "run": true}))
        .await;
    assert_eq!(status, hyper::StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["error"]["code"], "CWD_NOT_ALLOWED", "{v}");
}

/// Project work (docs/decisions.md#project-work): the project's own code and writes
/// inside it are approved without a human only where execgate runs them, confined to
/// the project with no network; a word that leaves the project, the network, a secret
/// or a guard setting is asked as before.
#[test]
fn project_work_is_approved_only_where_execgate_runs_it_confined() {
    // Where only the owner writes above the project (not /tmp), as the configuration
    // gate requires of cargo's and npm's files.
    let m = machine_in(
        false,
        tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap(),
    );
    std::fs::set_permissions(m.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(m.dir.path().join("elsewhere"), m.project.join("outlink")).unwrap();
    let verdict = |line: &str, run: bool| {
        m.policy.evaluate(
            Subject {
                agent: "agent",
                session: None,
                command: CommandRef::Line(line),
                cwd: Some(&m.project),
                run,
                shell: None,
                uid: None,
            },
            chrono::Utc::now(),
        )
    };
    let approved = Outcome::Approve {
        by_allowlist: false,
    };
    for line in [
        "python3 build.py",
        "./build.sh",
        "python3 build.py 2>&1 | tail -5",
        // An install is the project's code too: confined, it reaches no registry, and
        // installs only what the caches hold.
        "npm install left-pad",
        "cat > notes.md <<'EOF'\nhello\nEOF",
        "cargo test --offline 2>/dev/null",
        "npm test",
    ] {
        let v = verdict(line, true);
        assert_eq!(v.outcome, approved, "{line}: {:?}", v.risk_reasons);
        assert!(v.project_work, "{line}");
        assert_eq!(v.confine, Confine::ProjectWork, "{line}");
        // The agent running it itself: judgement alone, as before.
        let v = verdict(line, false);
        assert_eq!(v.outcome, Outcome::Ask, "{line} decide-only");
        assert!(!v.project_work, "{line}");
    }
    for line in [
        "python3 /tmp/x.py",
        "./build.sh ../elsewhere/x",
        "./build.sh --out=/tmp/x",
        "python3 build.py > ../out.txt",
        "python3 build.py $HOME",
        "LD_PRELOAD=x.so python3 build.py",
        "curl -o x https://example.com/",
        "cat .env > copy.txt",
        "echo x > .git/hooks/pre-commit",
        "echo x > .mcp.json",
        "rm -rf src",
        "unknown-tool build",
        "/usr/bin/python3 build.py",
        // A word judged by the file it names: a link in the project that leads out.
        "./build.sh outlink",
        "python3 build.py --data=outlink/x",
    ] {
        let v = verdict(line, true);
        assert!(
            !v.project_work && v.outcome != approved,
            "{line}: approved as project work: {v:?}"
        );
    }
}

/// What project work may do is what the kernel lets it: the project, the system and the
/// toolchains to read (the project's secrets not), the project to write (its guard
/// settings not), no network; as uid 65534, so only the kernel refuses.
#[test]
fn project_work_is_held_to_the_project_by_the_kernel() {
    if !can_switch_uid("project_work_is_held_to_the_project_by_the_kernel") {
        return;
    }
    let m = machine();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let pw = Confine::ProjectWork;
    let r = m.run("./build.sh && cat src/out.txt", pw, true);
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "built\n");
    m.refused(&format!("cat {}", m.decoy.display()), pw);
    m.refused(&format!("cat {}", m.database.display()), pw);
    m.refused("cat .env", pw);
    let r = m.refused("echo x > ../stolen.txt", pw);
    assert_ne!(r.exit_code, Some(0));
    assert!(!m.dir.path().join("stolen.txt").exists());
    m.refused("echo '[core] fsmonitor = x' >> .git/config", pw);
    m.refused("mkdir -p .claude && echo {} > .claude/settings.json", pw);
    let r = m.run(
        &format!("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"),
        pw,
        true,
    );
    assert_ne!(r.exit_code, Some(0), "connected: {r:?}");
    assert!(
        r.stderr.contains("Permission denied") || r.stderr.contains("PermissionError"),
        "{r:?}"
    );
}

/// The daemon, on its own uid: a project's script run through run mode is approved as
/// project work, recorded so, and runs confined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_runs_project_work_without_a_human_confined() {
    if !can_switch_uid("the_daemon_runs_project_work_without_a_human_confined") {
        return;
    }
    let m = machine();
    let roots = m.dir.path().display().to_string();
    let daemon = m
        .daemon(&[("EXECGATE_EXEC__ALLOWED_CWD_ROOTS", roots.as_str())])
        .await;
    let (_, v) = daemon
        .submit(&json!({"agent": "runner", "command": "./build.sh", "run": true, "cwd": m.project}))
        .await;
    assert_eq!(v["status"], "approved", "{v}");
    assert_eq!(v["via"], "policy", "{v}");
    assert_eq!(v["confinement"], "project-work", "{v}");
    assert_eq!(v["result"]["exit_code"], 0, "{v}");
    assert_eq!(
        std::fs::read_to_string(m.project.join("src/out.txt")).unwrap(),
        "built\n"
    );
    // Decide-only, the same command is the owner's to decide.
    let (_, v) = daemon
        .submit(
            &json!({"agent": "runner", "command": "./build.sh", "cwd": m.project, "wait": false}),
        )
        .await;
    assert_eq!(v["status"], "pending", "{v}");
    // Project work runs as the daemon's user, an admin: what it runs may not use the
    // admin socket (the kernel does not hold pathname sockets before Landlock ABI 9) to
    // approve the request waiting above, or any.
    let id = v["id"].as_str().unwrap().to_string();
    let admin = common::config_for(&daemon.env).admin_socket;
    let script = APPROVE_PY
        .replace("SOCKET", &admin.display().to_string())
        .replace("ID", &id);
    std::fs::write(m.project.join("approve.py"), script).unwrap();
    chown_all(&m.project.join("approve.py"));
    let (_, v) = daemon
        .submit(&json!({"agent": "runner", "command": "python3 approve.py", "run": true, "cwd": m.project}))
        .await;
    assert_eq!(v["confinement"], "project-work", "{v}");
    assert!(
        v["result"]["stdout"]
            .as_str()
            .unwrap_or_default()
            .contains(" 403 "),
        "{v}"
    );
    let (_, stored) = execgate::client::Client::new(common::config_for(&daemon.env).socket)
        .call(hyper::Method::GET, &format!("/v1/requests/{id}"), None)
        .await
        .unwrap();
    assert_eq!(stored["status"], "pending", "{stored}");
}

/// A script that asks the admin socket to approve request ID, and prints the answer's
/// status line.
const APPROVE_PY: &str = r#"import socket
s = socket.socket(socket.AF_UNIX)
s.connect("SOCKET")
body = b'{"decision": "allow-once"}'
head = "POST /v1/requests/ID/decision HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
s.sendall(head.encode() + body)
print(s.recv(4096).decode().split("\r\n")[0])
"#;

/// What a human or a rule approves keeps the network where the command runs code its
/// profile cannot read (a test suite's loopback server, an install's registry), or
/// reaches it by its words; a command whose every effect is known to stay on disk has
/// none.
#[test]
fn an_approved_command_keeps_the_network_only_where_it_may_need_it() {
    let m = machine_for(false);
    let confined = |line: &str| {
        m.policy
            .evaluate(
                Subject {
                    agent: "agent",
                    session: None,
                    command: CommandRef::Line(line),
                    cwd: Some(&m.project),
                    run: true,
                    shell: None,
                    uid: None,
                },
                chrono::Utc::now(),
            )
            .network
    };
    for line in [
        "cargo test",
        "npm install",
        "curl -o x https://example.com/",
        "unknown-tool",
    ] {
        assert!(confined(line), "{line}: no network");
    }
    for line in [
        "tee b.txt",
        "cp a.txt b.txt",
        "rm a.txt",
        "sed -i s/a/b/ a.txt",
    ] {
        assert!(!confined(line), "{line}: network");
    }
}
