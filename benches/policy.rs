//! Analyse + match over the bypass corpus with 10,000 allowlist rules (issue 4, item 8).
//! Target: median under 20 µs per command.
//!
//! `cargo bench --bench policy`; the last line printed is the per-command median.

mod common;

use std::hint::black_box;
use std::time::Duration;

use common::{RULES, corpus_len, evaluate_corpus, median_per_command};
use criterion::{Criterion, Throughput};
use execgate::policy::{Policy, parse};

fn bench(c: &mut Criterion, policy: &Policy) {
    let mut group = c.benchmark_group("policy");
    group.throughput(Throughput::Elements(corpus_len() as u64));
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
    let median = median_per_command(policy, 50);
    eprintln!(
        "policy: median {:.2} µs per command ({} corpus commands, {RULES} rules)",
        median.as_secs_f64() * 1e6,
        corpus_len()
    );
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = common::policy(dir.path());
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut c, &policy);
    c.final_summary();
    report_median(&policy);
}
