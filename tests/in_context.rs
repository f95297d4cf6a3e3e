//! Judgement in context (issue 33): what an agent does inside its project, the way agents
//! write it, is approved without a human, and its hostile neighbours are still asked.
//!
//! The project is a real git work tree (made by `git`); the home beside it holds a key.
//! Each case is judged by the policy in process, as the daemon judges a request: a line,
//! the cwd it runs in, no shell named.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Utc;
use execgate::config::{Config, Overrides};
use execgate::model::{CommandRef, Rule, RuleKind};
use execgate::policy::{Outcome, Policy, Subject, Verdict};

/// A machine in a directory: a home with a key and a project (a git work tree) in it.
struct Machine {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    policy: Policy,
}

fn git(args: &[&str], cwd: &Path) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(cwd)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?} failed: git is needed for these tests");
}

fn machine_with(extra: &[(&str, &str)]) -> Machine {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(
        home.join(".ssh/id_rsa"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    let project = home.join("code/app");
    for d in ["src/api", "web", "docs", "tests"] {
        std::fs::create_dir_all(project.join(d)).unwrap();
    }
    for (f, text) in [
        ("README.md", "# app\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/api/main.py", "print('hi')\n"),
        ("web/package.json", "{}\n"),
        ("docs/AGENTS.md", "agents\n"),
        ("tests/test_api.py", "def test(): pass\n"),
    ] {
        std::fs::write(project.join(f), text).unwrap();
    }
    git(&["init", "-q"], &project);
    symlink(home.join(".ssh/id_rsa"), project.join("web/key-link")).unwrap();
    let mut env = vec![
        ("HOME".to_string(), home.display().to_string()),
        (
            "EXECGATE_SOCKET".to_string(),
            root.join("run/agent.sock").display().to_string(),
        ),
        (
            "EXECGATE_DATABASE".to_string(),
            root.join("state/execgate.db").display().to_string(),
        ),
    ];
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let config: Config = Config::load_from(&Overrides::default(), &env).expect("valid config");
    let policy = Policy::new(Arc::new(config)).expect("policy compiles");
    Machine {
        _dir: dir,
        home,
        project,
        policy,
    }
}

fn machine() -> Machine {
    machine_with(&[])
}

impl Machine {
    fn judge_in(&self, line: &str, cwd: &Path) -> Verdict {
        self.policy.evaluate(
            Subject {
                agent: "agent",
                session: None,
                command: CommandRef::Line(line),
                cwd: Some(cwd),
                run: false,
                shell: None,
                uid: None,
            },
            Utc::now(),
        )
    }

    fn judge(&self, line: &str) -> Verdict {
        self.judge_in(line, &self.project)
    }

    fn rules(&self, rules: &[(&str, RuleKind)]) {
        let rules: Vec<Rule> = rules
            .iter()
            .enumerate()
            .map(|(i, (pattern, kind))| Rule {
                id: i as i64 + 1,
                agent: None,
                session: None,
                pattern: pattern.to_string(),
                kind: *kind,
                created_at: Utc::now(),
                created_by: "test".into(),
                expires_at: None,
                source_request: None,
                use_count: 0,
                last_used_at: None,
                last_command: None,
                memory: false,
            })
            .collect();
        self.policy.set_rules(&rules);
    }
}

fn approved(v: &Verdict) -> bool {
    matches!(v.outcome, Outcome::Approve { .. })
}

#[track_caller]
fn assert_approved(m: &Machine, line: &str) {
    let v = m.judge(line);
    assert!(approved(&v), "{line}: expected approved, got {v:?}");
}

/// Asked, with a reason that contains `why`.
#[track_caller]
fn assert_asked(m: &Machine, line: &str, why: &str) {
    let v = m.judge(line);
    assert!(!approved(&v), "{line}: expected asked, got {v:?}");
    let reasons = v.risk_reasons.join(" | ");
    assert!(
        reasons.contains(why),
        "{line}: expected {why:?} in {reasons}"
    );
}

#[test]
fn reads_inside_the_project_are_approved() {
    let m = machine();
    for line in [
        "cat web/package.json",
        "cat README.md",
        "sed -n '1,220p' src/api/main.py",
        "ls src/api",
        "grep -n TODO src/main.rs",
        "head -50 src/main.rs",
        "wc -l src/main.rs tests/test_api.py",
        "grep -rn fn src",
        "ls -la",
        "cat src/../README.md",
    ] {
        assert_approved(&m, line);
    }
    // From a subdirectory, the project is still the work tree.
    let v = m.judge_in("cat ../README.md", &m.project.join("src"));
    assert!(approved(&v), "{v:?}");
}

#[test]
fn reads_outside_the_project_or_of_secrets_are_asked() {
    let m = machine();
    assert_asked(&m, "cat src/../../../.ssh/id_rsa", "secret");
    assert_asked(&m, "cat web/key-link", "secret");
    assert_asked(&m, "cat /etc/passwd", "outside the project");
    assert_asked(&m, "cat ../../.bashrc", "outside the project");
    std::fs::write(m.project.join(".env"), "TOKEN=x\n").unwrap();
    assert_asked(&m, "cat .env", "secret");
    assert_asked(&m, "grep -rn TOKEN .", "");
    // Outside any project, a read is judged as before: asked.
    let v = m.judge_in("cat .bashrc", &m.home);
    assert!(!approved(&v), "{v:?}");
}

#[test]
fn a_fifo_where_a_file_should_be_is_asked() {
    let m = machine();
    let fifo = m.project.join("src/pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    assert_asked(&m, "cat src/pipe", "FIFO");
}

#[test]
fn harmless_plumbing_around_a_read_adds_nothing_to_ask() {
    let m = machine();
    for line in [
        "cat README.md 2>&1",
        "ls src 2>/dev/null",
        "grep -n \"main\\|print\" src/api/main.py",
        "cat src/main.rs | head -20",
        "grep -rn fn src 2>/dev/null | wc -l",
    ] {
        assert_approved(&m, line);
    }
    assert_asked(&m, "ls 2>/tmp/x", "redirect");
}

#[test]
fn a_tree_read_of_a_project_with_secrets_passes_only_where_the_owner_says() {
    let m = machine_with(&[("EXECGATE_POLICY__TREE_READS_OVER_SECRETS", "true")]);
    std::fs::write(m.project.join(".env"), "TOKEN=x\n").unwrap();
    assert_approved(&m, "grep -rn TOKEN src");
    // Not over a link out of the project, which `grep -R` would follow.
    assert_asked(&m, "grep -rn TOKEN .", "links outside the project");
    std::fs::remove_file(m.project.join("web/key-link")).unwrap();
    assert_approved(&m, "grep -rn TOKEN .");
    // A secret named as an operand is still a secret.
    assert_asked(&m, "cat .env", "secret");
    let _ = &m.home;
}

#[test]
fn cd_into_the_project_moves_the_judgement_there() {
    let m = machine();
    for line in [
        "cd src && cat main.rs",
        "cd web && cat package.json 2>&1 | head -20",
        "cd src/api; grep -n print main.py",
        "cd src && cd api && ls",
        "cd src && git status",
        "bash -lc 'cat README.md'",
        "zsh -lc 'cd src && ls -la'",
    ] {
        assert_approved(&m, line);
    }
    for (line, why) in [
        ("cd /etc && cat shadow", "leaves the project"),
        ("cd /etc && cat hostname", "leaves the project"),
        ("cd web && cat key-link", "secret"),
        ("cd nowhere && ls", "no such directory"),
        ("cd src && cat ../../../.ssh/id_rsa", "secret"),
        ("cd .. && ls", "leaves the project"),
        ("cd src && ls > /tmp/x", "redirect"),
        ("bash -lc 'cat /etc/hostname'", "outside the project"),
    ] {
        assert_asked(&m, line, why);
    }
    // After `;` the rest runs where the line started if `cd` fails: judged there too.
    std::fs::create_dir_all(m.project.join("a/b")).unwrap();
    assert_asked(&m, "cd a/b; cat ../../README.md", "where the line started");
    assert_approved(&m, "cd a/b && cat ../../README.md");
}

#[test]
fn a_rule_covers_its_command_and_the_plumbing_agents_put_around_it() {
    let m = machine();
    m.rules(&[
        ("npm test *", RuleKind::Glob),
        ("cargo test *", RuleKind::Glob),
        ("make test", RuleKind::Exact),
        ("python -m pytest *", RuleKind::Glob),
    ]);
    for line in [
        "npm test",
        "cd web && npm test 2>&1 | tail -30",
        "cd web && npm test -- --watch=false 2>/dev/null",
        "make test 2>&1 | tail -5",
        "cargo test --lib 2>&1 | grep -n FAILED",
        "cd src && make test",
        "python -m pytest -x tests 2>&1 | tail -30",
        "cd tests && python -m pytest -q test_api.py",
    ] {
        assert_approved(&m, line);
    }
    for (line, why) in [
        ("cd web && npm test > /tmp/out", "redirect"),
        ("npm test 2>&1 | sh", ""),
        ("cd web && npm test && rm -rf node_modules", "rm"),
        ("cd /tmp && make test", "leaves the project"),
        ("make test 2>&1 | tee out.log", "tee"),
        ("python -m pip install -e . 2>&1 | tail", "pip"),
        (
            "python -m pytest --basetemp=/home/u",
            "removes the directory",
        ),
        (
            "python -m pytest --basete /home/u tests",
            "removes the directory",
        ),
        ("python -m pytest -c /tmp/evil.ini", "configuration"),
        ("python -m pytest --rootdir=/ tests", "configuration"),
        ("cd tests && python -m pytest > /tmp/log", "redirect"),
    ] {
        assert_asked(&m, line, why);
    }
}

/// What the corpus of real agents' commands showed slipping through (issue 33): a secret
/// named where git takes a word for a revision or a path, the user's configuration, a
/// working tree deleted under the owner's `git *`.
#[test]
fn git_words_that_reach_outside_the_project_are_asked() {
    let m = machine();
    std::fs::create_dir_all(m.project.join("apps/api")).unwrap();
    std::fs::write(m.project.join("apps/api/.env"), "TOKEN=x\n").unwrap();
    assert_asked(&m, "git diff apps/api/.env 2>&1", "secret");
    assert_asked(&m, "git log -p .env", "secret");
    assert_asked(&m, "git config --global core.excludesfile", ".gitconfig");
    assert_approved(&m, "git config core.excludesfile");
    assert_approved(&m, "git diff src/main.rs");
    m.rules(&[("git *", RuleKind::Glob)]);
    assert_asked(&m, "git worktree remove /tmp/elsewhere", "writes");
    // No wildcard covers a read outside the project.
    assert_asked(&m, "git add ../../../src/domain/workspace.ts", "");
    assert_approved(&m, "git add src/main.rs");
    assert_approved(&m, "git log --oneline -5 2>&1 | head");
}
