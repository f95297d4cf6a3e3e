//! Analyse + match over the bypass corpus with 10,000 allowlist rules (issue 12, Measure).
//! Target: median under 20 µs per command. Reported beside the floor measured in the
//! same run (tree-sitter's parse of the same commands, which any decision needs), as a
//! ratio, and with the corpus command that takes longest; beside the previous release,
//! built and measured in the same run when `EXECGATE_BENCH_PREVIOUS` names a checkout of
//! it (issue 29; for issue 30, the added cost of judging every operand by the file it
//! reaches); and for `git status` in a repository with 50 submodules, whose every
//! configuration execgate reads (issue 29: bounded, not unbounded).
//!
//! `cargo bench --bench policy`; the last lines printed are the figures to quote.

use execgate_testkit::policy_bench as common;

use std::hint::black_box;
use std::time::Duration;

use common::{
    RULES, corpus_len, evaluate_corpus, median_per_command, parse_corpus, per_command,
    repo_with_submodules, time_in,
};
use criterion::{Criterion, Throughput};
use execgate::policy::{Policy, parse};

fn bench(c: &mut Criterion, policy: &Policy, repo: &std::path::Path) {
    let mut group = c.benchmark_group("policy");
    group.throughput(Throughput::Elements(corpus_len() as u64));
    group.bench_function("evaluate corpus (10k rules)", |b| {
        b.iter(|| evaluate_corpus(policy, repo))
    });
    group.bench_function("parse corpus (baseline)", |b| b.iter(parse_corpus));
    group.finish();

    let mut group = c.benchmark_group("parse");
    let typical = "git status && cargo test --release -- --nocapture | head -n 20";
    group.throughput(Throughput::Elements(1));
    group.bench_function("analyse typical command", |b| {
        b.iter(|| black_box(parse::analyse(black_box(typical))))
    });
    group.finish();
}

/// The corpus cases the previous release's corpus had (it is a prefix of today's), so a
/// run of the previous code can be compared with this one case for case.
const PREVIOUS_CORPUS: usize = 658;

/// How many submodules the git case is measured with.
const SUBMODULES: usize = 50;

/// The previous release's own figures, from its bench run in its checkout (`dir`) just
/// before this one's: its median and worst per command over its corpus. `None` (said why)
/// when it cannot be built or run.
fn previous_release(dir: &str) -> Option<(f64, f64)> {
    eprintln!("policy: building and measuring the previous release in {dir}");
    let out = std::process::Command::new("cargo")
        .args(["bench", "--bench", "policy"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", format!("{dir}/target"))
        .env_remove("EXECGATE_BENCH_PREVIOUS")
        .output();
    let out = match out {
        Ok(out) if out.status.success() => out,
        Ok(out) => {
            eprintln!(
                "policy: the previous release's bench failed: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" / ")
            );
            return None;
        }
        Err(e) => {
            eprintln!("policy: cannot run cargo for the previous release: {e}");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stderr);
    let figure = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<f64>().ok())
    };
    match (figure("policy: median "), figure("policy: worst command ")) {
        (Some(median), Some(worst)) => Some((median, worst)),
        _ => {
            eprintln!("policy: the previous release printed no median and worst to compare");
            None
        }
    }
}

/// Our own figures, printed last so they are easy to quote: the median over commands
/// (each timed alone), the mean per command over whole passes, the worst command, and
/// the floor measured in the same run (tree-sitter's parse of the same commands).
fn report(
    policy: &Policy,
    repo: &std::path::Path,
    rounds: usize,
    previous: Option<(f64, f64)>,
    submodules: Option<(&std::path::Path, usize)>,
) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let floor = median_per_command(rounds, parse_corpus);
    let mean = median_per_command(rounds, || evaluate_corpus(policy, repo));
    let mut each = per_command(policy, repo, rounds.clamp(3, 31));
    let mut prefix: Vec<Duration> = each.iter().take(PREVIOUS_CORPUS).map(|(_, t)| *t).collect();
    let mean_of = |v: &[Duration]| v.iter().sum::<Duration>() / v.len().max(1) as u32;
    let previous_mean = mean_of(&prefix);
    prefix.sort();
    let prefix_median = prefix[prefix.len() / 2];
    let prefix_worst = *prefix.last().unwrap_or(&Duration::ZERO);
    each.sort_by_key(|(_, t)| *t);
    let median = each[each.len() / 2].1;
    let p99 = each[(each.len() * 99 / 100).min(each.len() - 1)].1;
    let (worst, worst_time) = *each.last().unwrap_or(&("", Duration::ZERO));
    eprintln!(
        "policy: median {:.2} µs per command, p99 {:.2} µs ({} corpus commands, {RULES} rules, each timed alone)",
        us(median),
        us(p99),
        corpus_len()
    );
    eprintln!(
        "policy: mean {:.2} µs per command over whole passes; parse alone {:.2} µs: ratio {:.2}",
        us(mean),
        us(floor),
        mean.as_secs_f64() / floor.as_secs_f64().max(1e-12),
    );
    eprintln!(
        "policy: mean {:.2} µs per command on the previous corpus's {PREVIOUS_CORPUS} cases",
        us(previous_mean)
    );
    if let Some((median, worst)) = previous {
        eprintln!(
            "policy: against the previous release on its {PREVIOUS_CORPUS} cases: median {:.2} µs / {median:.2} µs = {:.2}x, worst {:.2} µs / {worst:.2} µs = {:.2}x",
            us(prefix_median),
            us(prefix_median) / median.max(1e-9),
            us(prefix_worst),
            us(prefix_worst) / worst.max(1e-9),
        );
    }
    if let Some((with_subs, count)) = submodules {
        let (clean, _) = time_in(policy, "git status", repo, rounds);
        let (median, worst) = time_in(policy, "git status", with_subs, rounds);
        eprintln!(
            "policy: git status with {count} submodules: median {:.2} µs, worst {:.2} µs ({:.1}x the clean repository's {:.2} µs)",
            us(median),
            us(worst),
            median.as_secs_f64() / clean.as_secs_f64().max(1e-12),
            us(clean)
        );
    }
    eprintln!(
        "policy: worst command {:.2} µs: {:?}",
        us(worst_time),
        worst.chars().take(120).collect::<String>()
    );
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (policy, repo) = common::policy(dir.path());
    // `cargo test --benches` runs this as a smoke pass: tiny counts, nothing judged.
    let smoke = std::env::args().any(|a| a == "--test");
    let previous = match std::env::var("EXECGATE_BENCH_PREVIOUS") {
        Ok(dir) if !smoke => previous_release(&dir),
        _ => None,
    };
    let count = if smoke { 2 } else { SUBMODULES };
    let submodules = match repo_with_submodules(dir.path(), count) {
        Ok(repo) => Some(repo),
        Err(e) => {
            eprintln!("policy: no repository with submodules to measure: {e}");
            None
        }
    };
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut c, &policy, &repo);
    c.final_summary();
    report(
        &policy,
        &repo,
        if smoke { 3 } else { 50 },
        previous,
        submodules.as_deref().map(|r| (r, count)),
    );
}
