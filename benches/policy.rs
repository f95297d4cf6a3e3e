//! Analyse + match over the bypass corpus with 10,000 allowlist rules (issue 4, item 8).
//! Target: median under 20 µs per command.
//!
//! `cargo bench --bench policy`; the last line printed is the per-command median.

#[path = "../tests/corpus/mod.rs"]
mod corpus;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use criterion::{Criterion, Throughput};
use execgate::model::{Rule, RuleKind};
use execgate::policy::{Policy, Subject, parse};

const RULES: usize = 10_000;

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

fn policy(dir: &std::path::Path) -> Policy {
    let config = corpus::config(dir);
    let policy = Policy::new(Arc::new(config)).expect("policy compiles");
    policy.set_rules(&rules());
    policy
}

fn evaluate_corpus(policy: &Policy) {
    let now = Utc::now();
    for case in corpus::CORPUS {
        black_box(policy.evaluate(
            Subject {
                agent: "agent",
                command: Some(black_box(case.command)),
                argv: None,
            },
            now,
        ));
    }
}

fn bench(c: &mut Criterion, policy: &Policy) {
    let mut group = c.benchmark_group("policy");
    group.throughput(Throughput::Elements(corpus::CORPUS.len() as u64));
    group.bench_function("evaluate corpus (10k rules)", |b| {
        b.iter(|| evaluate_corpus(policy))
    });
    group.finish();

    let mut group = c.benchmark_group("parse");
    let typical = "git status && cargo test --release -- --nocapture | head -n 20";
    group.throughput(Throughput::Elements(1));
    group.bench_function("analyse typical command", |b| {
        b.iter(|| black_box(parse::analyse(black_box(typical))))
    });
    group.finish();
}

/// Our own per-command median, printed last so it is easy to quote.
fn report_median(policy: &Policy) {
    let n = corpus::CORPUS.len();
    let mut rounds: Vec<Duration> = (0..50)
        .map(|_| {
            let start = Instant::now();
            evaluate_corpus(policy);
            start.elapsed()
        })
        .collect();
    rounds.sort();
    let median = rounds[rounds.len() / 2];
    eprintln!(
        "policy: median {:.2} µs per command ({n} corpus commands, {RULES} rules)",
        median.as_secs_f64() * 1e6 / n as f64
    );
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = policy(dir.path());
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut c, &policy);
    c.final_summary();
    report_median(&policy);
}
