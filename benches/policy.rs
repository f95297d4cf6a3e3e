//! Analyse + match over the bypass corpus with 10,000 allowlist rules (issue 12, Measure).
//! Target: median under 20 µs per command. Reported beside the floor measured in the
//! same run (tree-sitter's parse of the same commands, which any decision needs), as a
//! ratio, and with the corpus command that takes longest.
//!
//! `cargo bench --bench policy`; the last lines printed are the figures to quote.

use execgate_testkit::policy_bench as common;

use std::hint::black_box;
use std::time::Duration;

use common::{RULES, corpus_len, evaluate_corpus, median_per_command, parse_corpus, per_command};
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
const PREVIOUS_CORPUS: usize = 340;

/// Our own figures, printed last so they are easy to quote: the median over commands
/// (each timed alone), the mean per command over whole passes, the worst command, and
/// the floor measured in the same run (tree-sitter's parse of the same commands).
fn report(policy: &Policy, repo: &std::path::Path, rounds: usize) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let floor = median_per_command(rounds, parse_corpus);
    let mean = median_per_command(rounds, || evaluate_corpus(policy, repo));
    let mut each = per_command(policy, repo, rounds.clamp(3, 31));
    let previous: Vec<Duration> = each.iter().take(PREVIOUS_CORPUS).map(|(_, t)| *t).collect();
    let mean_of = |v: &[Duration]| v.iter().sum::<Duration>() / v.len().max(1) as u32;
    let previous_mean = mean_of(&previous);
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
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut c, &policy, &repo);
    c.final_summary();
    report(&policy, &repo, if smoke { 3 } else { 50 });
}
