//! What both benches share: the 10,000-rule policy over the bypass corpus, and the
//! per-command median the policy target is stated in. The benches name it `common`
//! (`use execgate_testkit::policy_bench as common;`), as when it was `benches/common/`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use execgate::model::{CommandRef, Rule, RuleKind};
use execgate::policy::{Policy, Subject};

use crate::corpus;

pub const RULES: usize = 10_000;

/// How many commands one pass of [`evaluate_corpus`] evaluates.
pub fn corpus_len() -> usize {
    corpus::CORPUS.len()
}

fn rule(id: usize, agent: Option<&str>, pattern: String, kind: RuleKind) -> Rule {
    Rule {
        id: id as i64,
        agent: agent.map(str::to_string),
        pattern,
        kind,
        created_at: Utc::now(),
        created_by: "bench".into(),
        expires_at: None,
        last_used_at: None,
        last_command: None,
        use_count: 0,
        session: None,
        source_request: None,
        memory: false,
    }
}

/// 10,000 rules: the corpus rule sets merged, then mostly exact `make target-N` rules,
/// every tenth a glob `tool-N *`, every seventh scoped to an agent.
fn rules() -> Vec<Rule> {
    let mut out = Vec::with_capacity(RULES);
    for set in corpus::RuleSet::ALL {
        for (agent, pattern, kind) in set.rules() {
            out.push(rule(out.len() + 1, agent, pattern.to_string(), kind));
        }
    }
    let mut n = 0;
    while out.len() < RULES {
        let agent = (n % 7 == 0).then_some("other-agent");
        let r = if n % 10 == 0 {
            rule(out.len() + 1, agent, format!("tool-{n} *"), RuleKind::Glob)
        } else {
            rule(
                out.len() + 1,
                agent,
                format!("make target-{n}"),
                RuleKind::Exact,
            )
        };
        out.push(r);
        n += 1;
    }
    out
}

/// The corpus configuration (paths in `dir`) with the 10,000 rules loaded, and the clean
/// git repository the corpus's commands are judged in.
pub fn policy(dir: &std::path::Path) -> (Policy, PathBuf) {
    let config = corpus::config(dir);
    let policy = Policy::new(Arc::new(config)).expect("policy compiles");
    policy.set_rules(&rules());
    (policy, corpus::repo(dir))
}

fn subject<'a>(command: &'a str, repo: &'a Path) -> Subject<'a> {
    Subject {
        agent: "agent",
        session: None,
        command: CommandRef::Line(command),
        cwd: Some(repo),
        run: false,
        shell: None,
        uid: None,
    }
}

/// Analyses and matches every corpus command once.
pub fn evaluate_corpus(policy: &Policy, repo: &Path) {
    let now = Utc::now();
    for case in corpus::CORPUS {
        black_box(policy.evaluate(subject(black_box(case.command), repo), now));
    }
}

/// The floor under any decision: parsing every corpus command with tree-sitter, once.
pub fn parse_corpus() {
    for case in corpus::CORPUS {
        black_box(execgate::policy::parse::analyse(black_box(case.command)));
    }
}

/// Median time per command over `rounds` passes of `pass` over the corpus.
pub fn median_per_command(rounds: usize, mut pass: impl FnMut()) -> Duration {
    let mut passes: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            pass();
            start.elapsed()
        })
        .collect();
    passes.sort();
    passes[passes.len() / 2] / corpus_len() as u32
}

/// A repository like the corpus's (made by real git) with `n` submodules checked out,
/// under `dir`: what a git command costs when execgate reads every submodule's
/// configuration and hooks. `None` (with why) when git cannot make it.
pub fn repo_with_submodules(dir: &Path, n: usize) -> Result<PathBuf, String> {
    let git = |cwd: &Path, args: &[&str]| -> Result<(), String> {
        let out = std::process::Command::new("git")
            .args(["-c", "user.email=b@example.org", "-c", "user.name=b"])
            .args(["-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(cwd)
            .env("HOME", dir)
            .output()
            .map_err(|e| format!("git: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).map_err(|e| e.to_string())?;
    git(&lib, &["init", "-q", "-b", "main"])?;
    std::fs::write(lib.join("lib.txt"), "lib\n").map_err(|e| e.to_string())?;
    git(&lib, &["add", "lib.txt"])?;
    git(&lib, &["commit", "-qm", "lib"])?;
    let repo = dir.join("with-submodules");
    std::fs::create_dir_all(&repo).map_err(|e| e.to_string())?;
    git(&repo, &["init", "-q", "-b", "main"])?;
    for i in 0..n {
        git(
            &repo,
            &[
                "submodule",
                "add",
                "-q",
                lib.to_str().unwrap_or("lib"),
                &format!("sub{i}"),
            ],
        )?;
    }
    git(&repo, &["commit", "-qm", "submodules"])?;
    Ok(repo)
}

/// One command evaluated `rounds` times in `cwd`: the median and the worst.
pub fn time_in(policy: &Policy, command: &str, cwd: &Path, rounds: usize) -> (Duration, Duration) {
    let now = Utc::now();
    let mut times: Vec<Duration> = (0..rounds.max(1))
        .map(|_| {
            let start = Instant::now();
            black_box(policy.evaluate(subject(black_box(command), cwd), now));
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[times.len() / 2], times[times.len() - 1])
}

/// Each corpus command timed alone (the median of `rounds` evaluations), in corpus order.
pub fn per_command(policy: &Policy, repo: &Path, rounds: usize) -> Vec<(&'static str, Duration)> {
    let now = Utc::now();
    corpus::CORPUS
        .iter()
        .map(|case| {
            let mut times: Vec<Duration> = (0..rounds)
                .map(|_| {
                    let start = Instant::now();
                    black_box(policy.evaluate(subject(black_box(case.command), repo), now));
                    start.elapsed()
                })
                .collect();
            times.sort();
            (case.command, times[times.len() / 2])
        })
        .collect()
}
