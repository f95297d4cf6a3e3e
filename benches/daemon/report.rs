//! The report's header, and its verdicts on the targets.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::allowlisted::Allowlisted;
use crate::audit::AuditCost;
use crate::baseline::Baseline;
use crate::flood::Flood;
use crate::hook::{HookCost, TARGET_ABOVE_TRUE as TARGET_HOOK_ABOVE_TRUE};
use crate::machine::Machine;
use crate::pending::Pending;
use crate::startup::History;
use crate::stats::{count, median, mib, ratio, show, times};
use crate::{Mode, profile};

// The targets the report judges (in full and quick mode).
const TARGET_P50_RATIO: f64 = 1.5;
const TARGET_SCALING: f64 = 10.0;
const TARGET_PENDING: usize = 10_000;
const TARGET_PENDING_RSS: u64 = 64 << 20;
const TARGET_HISTORY: u32 = 1_000_000;
const TARGET_READY: Duration = Duration::from_millis(300);
const TARGET_FLOOD_RATIO: f64 = 10.0;
const TARGET_AUDIT_RATIO: f64 = 1.05;

pub fn print_header(mode: Mode, m: &Machine, temp: &Path) {
    println!(
        "execgate daemon bench: {} mode, {} build, {}",
        mode.name(),
        profile(),
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC")
    );
    println!(
        "machine: {} cores ({}), {} RAM, Linux {}",
        m.cores, m.cpu, m.memory, m.kernel
    );
    println!("temp dir: {} on {}", temp.display(), m.filesystem);
    let workers = std::env::var("TOKIO_WORKER_THREADS")
        .map(|n| format!("{n} workers (TOKIO_WORKER_THREADS)"))
        .unwrap_or_else(|_| "execgate's default workers (half the cores, at least one)".into());
    println!(
        "load generator: one tokio current_thread runtime in this process (at most one core); \
         daemon and trivial server: tokio multi-thread, {workers}"
    );
    println!("daemon log level: its default (info: a line per request, to a file)");
    if !mode.judged() {
        println!("smoke mode: tiny counts, behaviour checked, numbers not meaningful");
    }
}

pub struct Target {
    name: String,
    value: String,
    /// `None` when this run's counts differ from what the target is stated for.
    pass: Option<bool>,
}

impl Target {
    pub fn json(&self) -> Value {
        json!({"target": self.name, "value": self.value, "pass": self.pass})
    }
}

pub fn targets(
    base: &Baseline,
    allowlisted: &Allowlisted,
    pending: &Pending,
    history: &History,
    flood: &Flood,
    hook: &HookCost,
    backends: &crate::postgres::Backends,
) -> Vec<Target> {
    let single = allowlisted.single_stream();
    let widest = allowlisted.levels.last().expect("at least one level");
    let p50 = ratio(single.stats.p50, base.total());
    let scaling = widest.rps / single.rps;
    let ready = median(&history.ready);
    vec![
        Target {
            name: format!("single-stream allowlisted p50 ≤ {TARGET_P50_RATIO}× baseline"),
            value: times(p50),
            pass: Some(p50 <= TARGET_P50_RATIO),
        },
        Target {
            name: format!(
                "c={} req/s ≥ {TARGET_SCALING}× c=1 req/s",
                widest.concurrency
            ),
            value: times(scaling),
            pass: Some(scaling >= TARGET_SCALING),
        },
        Target {
            name: format!(
                "{} pending: daemon RSS < {} MiB",
                count(TARGET_PENDING),
                TARGET_PENDING_RSS >> 20
            ),
            value: mib(pending.with_pending.rss),
            pass: (pending.count == TARGET_PENDING)
                .then_some(pending.with_pending.rss < TARGET_PENDING_RSS),
        },
        Target {
            name: format!(
                "READY with {} rows < {} ms (median)",
                count(TARGET_HISTORY as usize),
                TARGET_READY.as_millis()
            ),
            value: show(ready),
            pass: (history.rows == TARGET_HISTORY).then_some(ready < TARGET_READY),
        },
        Target {
            name: format!("flooded admin p99 ≤ {TARGET_FLOOD_RATIO}× quiet, no timeout"),
            value: times(flood.admin_ratio()),
            // Judged only with the flood on its own uid, as the target is stated.
            pass: flood
                .second_uid
                .then_some(flood.admin_ratio() <= TARGET_FLOOD_RATIO && flood.timeouts == 0),
        },
        Target {
            name: format!(
                "hook p50 ≤ {} above /bin/true",
                show(TARGET_HOOK_ABOVE_TRUE)
            ),
            value: show(hook.above_true()),
            pass: Some(hook.above_true() <= TARGET_HOOK_ABOVE_TRUE),
        },
        Target {
            name: format!(
                "PostgreSQL single-stream allowlisted p50 ≤ {}× SQLite's",
                crate::postgres::TARGET_P50_RATIO
            ),
            value: times(backends.p50_ratio()),
            pass: Some(backends.p50_ratio() <= crate::postgres::TARGET_P50_RATIO),
        },
    ]
}

/// Section B's second target: the audit chain and metrics cost next to nothing.
pub fn audit_target(audit: &AuditCost) -> Target {
    Target {
        name: format!("chain + metrics p50 ≤ {TARGET_AUDIT_RATIO}× without"),
        value: times(audit.ratio()),
        pass: Some(audit.ratio() <= TARGET_AUDIT_RATIO),
    }
}

pub fn print_targets(mode: Mode, targets: &[Target]) {
    println!("\nTargets");
    for t in targets {
        let verdict = match t.pass {
            _ if !mode.judged() => "— (smoke: not judged)",
            Some(true) => "PASS",
            Some(false) => "MISS",
            None => "— (other counts)",
        };
        println!("  {:<50}{:>14}   {verdict}", t.name, t.value);
    }
}
