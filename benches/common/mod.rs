//! What both benches share: the 10,000-rule policy over the bypass corpus, and the
//! per-command median the policy target is stated in.

#[path = "../../tests/corpus/mod.rs"]
mod corpus;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use execgate::model::{Rule, RuleKind};
use execgate::policy::{Policy, Subject};

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

/// The corpus configuration (paths in `dir`) with the 10,000 rules loaded.
pub fn policy(dir: &std::path::Path) -> Policy {
    let config = corpus::config(dir);
    let policy = Policy::new(Arc::new(config)).expect("policy compiles");
    policy.set_rules(&rules());
    policy
}

/// Analyses and matches every corpus command once.
pub fn evaluate_corpus(policy: &Policy) {
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

/// Median time per command over `rounds` passes of the corpus.
pub fn median_per_command(policy: &Policy, rounds: usize) -> Duration {
    let mut passes: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            evaluate_corpus(policy);
            start.elapsed()
        })
        .collect();
    passes.sort();
    passes[passes.len() / 2] / corpus_len() as u32
}
