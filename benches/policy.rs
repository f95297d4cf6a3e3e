//! Analyse + match over the bypass corpus with 10,000 allowlist rules (issue 12, Measure).
//! Target: median under 20 µs per command. Reported beside the floor measured in the
//! same run (tree-sitter's parse of the same commands, which any decision needs), as a
//! ratio, and with the corpus command that takes longest.
//!
//! `cargo bench --bench policy`; the last lines printed are the figures to quote.

mod common;

use std::hint::black_box;
use std::time::Duration;

use common::{RULES, corpus_len, evaluate_corpus, median_per_command, parse_corpus, worst_command};
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

/// Our own per-command medians, printed last so they are easy to quote.
fn report(policy: &Policy, repo: &std::path::Path, rounds: usize) {
    let floor = median_per_command(rounds, parse_corpus);
    let median = median_per_command(rounds, || evaluate_corpus(policy, repo));
    let (worst, worst_time) = worst_command(policy, repo, rounds.min(21));
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    eprintln!(
        "policy: median {:.2} µs per command ({} corpus commands, {RULES} rules); parse alone {:.2} µs: ratio {:.2}",
        us(median),
        corpus_len(),
        us(floor),
        median.as_secs_f64() / floor.as_secs_f64().max(1e-12),
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
