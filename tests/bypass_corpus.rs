//! The bypass corpus (issue 4, item 6): every command of `testkit/src/corpus.rs` evaluated
//! under its rule set, with every mismatch reported at once.

use execgate_testkit::corpus;

use std::collections::HashMap;
use std::sync::Arc;

use chrono::Utc;
use corpus::{CORPUS, Case, RuleSet, config};
use execgate::model::{CommandRef, Risk, Rule};
use execgate::policy::{Outcome, Policy, Subject, Verdict};

const AGENT: &str = "agent";

fn rules_of(set: RuleSet) -> Vec<Rule> {
    set.rules()
        .into_iter()
        .enumerate()
        .map(|(i, (agent, pattern, kind))| Rule {
            id: i as i64 + 1,
            agent: agent.map(str::to_string),
            pattern: pattern.to_string(),
            kind,
            created_at: Utc::now(),
            created_by: "test".into(),
            expires_at: None,
            last_used_at: None,
            last_command: None,
            use_count: 0,
            session: None,
            source_request: None,
            memory: false,
        })
        .collect()
}

struct Policies {
    _dir: tempfile::TempDir,
    /// A clean git repository: the corpus's commands are judged as run there.
    repo: std::path::PathBuf,
    by_set: HashMap<RuleSet, Policy>,
}

impl Policies {
    fn new() -> Policies {
        let dir = tempfile::tempdir().unwrap();
        let config = Arc::new(config(dir.path()));
        assert!(
            config.policy.deny.is_empty(),
            "the corpus assumes an empty deny list"
        );
        let by_set = RuleSet::ALL
            .iter()
            .map(|&set| {
                let policy = Policy::new(config.clone()).expect("policy compiles");
                policy.set_rules(&rules_of(set));
                (set, policy)
            })
            .collect();
        let repo = corpus::repo(dir.path());
        Policies {
            _dir: dir,
            repo,
            by_set,
        }
    }

    fn evaluate(&self, set: RuleSet, command: &str) -> Verdict {
        self.by_set[&set].evaluate(self.subject(command), Utc::now())
    }

    fn subject<'a>(&'a self, command: &'a str) -> Subject<'a> {
        Subject {
            agent: AGENT,
            session: None,
            command: CommandRef::Line(command),
            cwd: Some(&self.repo),
            run: false,
            shell: None,
            uid: None,
        }
    }
}

fn approved(v: &Verdict) -> bool {
    matches!(v.outcome, Outcome::Approve { .. })
}

fn risk_str(r: Option<Risk>) -> &'static str {
    r.map_or("any", Risk::as_str)
}

/// What is wrong with the verdict for `case`, if anything.
fn mismatch(case: &Case, v: &Verdict) -> Option<String> {
    let mut wrong = Vec::new();
    if v.plain != case.plain {
        wrong.push("plain");
    }
    if case.risk.is_some_and(|r| r != v.risk) {
        wrong.push("risk");
    }
    if approved(v) != case.approved {
        wrong.push("approved");
    }
    if !case.why.is_empty() {
        let reasons = v.risk_reasons.join(" | ").to_lowercase();
        if !case
            .why
            .split('/')
            .any(|k| reasons.contains(&k.to_lowercase()))
        {
            wrong.push("why");
        }
    }
    if wrong.is_empty() {
        return None;
    }
    Some(format!(
        "line {:>3} | {:?} [{:?}] | wrong: {} | expected plain={} risk={} approved={} why={:?} \
         | got plain={} risk={} approved={} ({:?}) reasons={:?}",
        case.line,
        case.command,
        case.rules,
        wrong.join(","),
        case.plain,
        risk_str(case.risk),
        case.approved,
        case.why,
        v.plain,
        v.risk,
        approved(v),
        v.outcome,
        v.risk_reasons,
    ))
}

#[test]
fn corpus_is_large_and_consistent() {
    assert!(
        CORPUS.len() >= 150,
        "the corpus has {} cases, fewer than 150",
        CORPUS.len()
    );
    let inconsistent: Vec<String> = CORPUS
        .iter()
        .filter(|c| c.approved && !c.plain)
        .map(|c| format!("line {}: {:?}", c.line, c.command))
        .collect();
    assert!(
        inconsistent.is_empty(),
        "cases expected approved but not plain (nothing not plain is ever approved):\n{}",
        inconsistent.join("\n")
    );
    let dangerous_approved: Vec<String> = CORPUS
        .iter()
        .filter(|c| c.approved && c.risk == Some(Risk::Dangerous))
        .map(|c| format!("line {}: {:?}", c.line, c.command))
        .collect();
    assert!(
        dangerous_approved.is_empty(),
        "no corpus rule set approves a dangerous command:\n{}",
        dangerous_approved.join("\n")
    );
    // The table must prove the gate is not simply closed.
    assert!(CORPUS.iter().filter(|c| c.approved).count() >= 20);
}

#[test]
fn every_corpus_case_gets_its_expected_verdict() {
    let policies = Policies::new();
    let failures: Vec<String> = CORPUS
        .iter()
        .filter_map(|case| mismatch(case, &policies.evaluate(case.rules, case.command)))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases are wrong:\n{}",
        failures.len(),
        CORPUS.len(),
        failures.join("\n")
    );
}

#[test]
fn verdicts_are_deterministic() {
    let policies = Policies::new();
    let mut failures = Vec::new();
    for case in CORPUS {
        let a = policies.evaluate(case.rules, case.command);
        let b = policies.evaluate(case.rules, case.command);
        let same = a.outcome == b.outcome
            && a.risk == b.risk
            && a.risk_reasons == b.risk_reasons
            && a.plain == b.plain
            && a.normalized == b.normalized
            && a.rules_matched == b.rules_matched
            && a.fallback_approves == b.fallback_approves;
        if !same {
            failures.push(format!(
                "line {} {:?}: {a:?} then {b:?}",
                case.line, case.command
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// argv requests are plain by construction and matched on their shell-quoted join.
#[test]
fn argv_requests() {
    let policies = Policies::new();
    let check = |set: RuleSet, argv: &[&str], risk: Option<Risk>, want: bool| {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let v = policies.by_set[&set].evaluate(
            Subject {
                agent: AGENT,
                session: None,
                command: CommandRef::Argv(&argv),
                cwd: Some(&policies.repo),
                run: false,
                shell: None,
                uid: None,
            },
            Utc::now(),
        );
        let ok = v.plain && risk.is_none_or(|r| r == v.risk) && approved(&v) == want;
        (!ok).then(|| {
            format!(
                "argv {argv:?} [{set:?}]: expected plain, risk={}, approved={want}; got plain={} \
                 risk={} approved={} reasons={:?}",
                risk_str(risk),
                v.plain,
                v.risk,
                approved(&v),
                v.risk_reasons
            )
        })
    };
    let failures: Vec<String> = [
        check(
            RuleSet::GitStatus,
            &["git", "status"],
            Some(Risk::Safe),
            true,
        ),
        check(RuleSet::Dev, &["echo", "$(id)"], None, true),
        check(RuleSet::Dev, &["echo", "a;b", "c|d"], None, true),
        check(RuleSet::Dev, &["cat", "*"], None, true),
        check(
            RuleSet::RmAll,
            &["rm", "-rf", "/"],
            Some(Risk::Dangerous),
            false,
        ),
        check(
            RuleSet::RmAll,
            &["rm", "-rf", "*"],
            Some(Risk::Dangerous),
            false,
        ),
        check(
            RuleSet::NoRules,
            &["sh", "-c", "rm -rf /"],
            Some(Risk::Dangerous),
            false,
        ),
        check(
            RuleSet::GitGlob,
            &["git", "push", "--force"],
            Some(Risk::Dangerous),
            false,
        ),
        check(
            RuleSet::GitStatus,
            &["git", "status;", "rm", "-rf", "/"],
            None,
            false,
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn always_is_refused_for_dangerous_not_plain_wrappers_and_inline_code() {
    let policies = Policies::new();
    let policy = &policies.by_set[&RuleSet::NoRules];
    let refusal = |command: &str| {
        let v = policy.evaluate(policies.subject(command), Utc::now());
        policy.always_refusal(&v, policies.subject(command))
    };
    let mut failures = Vec::new();
    // Every corpus command that is dangerous or not plain (as policy judged it).
    for case in CORPUS {
        let v = policy.evaluate(policies.subject(case.command), Utc::now());
        if (v.risk == Risk::Dangerous || !v.plain)
            && policy
                .always_refusal(&v, policies.subject(case.command))
                .is_none()
        {
            failures.push(format!(
                "line {} {:?} (risk {}, plain {}): always not refused",
                case.line, case.command, v.risk, v.plain
            ));
        }
    }
    for command in [
        "python -c 'x'",
        "python3 -c 'import os'",
        "node -e x",
        "perl -e x",
        "ruby -e x",
        "bash -c 'ls'",
        "sh -c ls",
        "env ls",
        "sudo ls",
        "xargs ls",
        "timeout 5 make test",
        "rm -rf build",
        "echo $(id)",
        "git status; rm -rf /",
    ] {
        if refusal(command).is_none() {
            failures.push(format!("{command:?}: always not refused"));
        }
    }
    for command in ["make test", "cargo build", "git status"] {
        if let Some(why) = refusal(command) {
            failures.push(format!("{command:?}: always refused ({why})"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn too_broad_globs_are_refused() {
    use execgate::policy::rules::too_broad;
    let mut failures = Vec::new();
    for p in [
        "*", "* *", "**", "bash *", "sh -c *", "python *", "env *", "sudo *", "xargs *",
    ] {
        if too_broad(p).is_none() {
            failures.push(format!("{p:?} should be refused"));
        }
    }
    for p in ["cargo *", "git status*", "npm test", "make test", "ls *"] {
        if let Some(why) = too_broad(p) {
            failures.push(format!("{p:?} should be accepted, got: {why}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
