//! B. Allowlisted decisions at concurrency 1, 16, 64, every answer checked.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use hyper::StatusCode;
use hyper::body::Bytes;
use serde_json::{Value, json};

use crate::baseline::Baseline;
use crate::client::{Conn, Tally, add_exact_rule, expect};
use crate::lab::{Daemon, Lab};
use crate::stats::{Stats, ms, ratio, show, times};
use crate::{ALLOWED, Plan, REQUESTS};

const LEVELS: [usize; 3] = [1, 16, 64];

pub struct Allowlisted {
    ready: Duration,
    answer_bytes: usize,
    pub levels: Vec<Level>,
    /// Every request approved over the whole section, warm-up included: the rows the
    /// database must hold afterwards.
    pub answered: usize,
}

pub struct Level {
    pub concurrency: usize,
    pub stats: Stats,
    pub rps: f64,
}

impl Allowlisted {
    pub fn single_stream(&self) -> &Level {
        &self.levels[0]
    }

    pub fn print(&self, plan: &Plan, base: &Baseline) {
        let warmup = if plan.level_warmup.is_zero() {
            "no warm-up".to_string()
        } else {
            format!("after {} warm-up", show(plan.level_warmup))
        };
        println!(
            "\nB. Allowlisted decision (`{ALLOWED}`, exact rule); {} per level, {warmup}",
            show(plan.level),
        );
        println!(
            "  daemon start (fresh database) to READY=1: {}; answer {} bytes (trivial server: {})",
            show(self.ready),
            self.answer_bytes,
            base.trivial_bytes
        );
        println!(
            "  {:>5}{:>10}{:>10}{:>8}{:>11}{:>8}{:>11}{:>8}",
            "conc", "requests", "req/s", "×c=1", "p50", "×base", "p99", "×base"
        );
        let single = self.single_stream().rps;
        for l in &self.levels {
            println!(
                "  {:>5}{:>10}{:>10.0}{:>8}{:>11}{:>8}{:>11}{:>8}",
                l.concurrency,
                l.stats.n,
                l.rps,
                times(l.rps / single),
                show(l.stats.p50),
                times(ratio(l.stats.p50, base.total())),
                show(l.stats.p99),
                times(ratio(l.stats.p99, base.total())),
            );
        }
    }

    pub fn json(&self) -> Value {
        let single = self.single_stream().rps;
        json!({
            "daemon_ready_ms": ms(self.ready),
            "answer_bytes": self.answer_bytes,
            "answered": self.answered,
            "levels": self.levels.iter().map(|l| json!({
                "concurrency": l.concurrency,
                "latency": l.stats.json(),
                "rps": l.rps,
                "rps_ratio_to_c1": l.rps / single,
            })).collect::<Vec<_>>(),
        })
    }
}

pub async fn allowlisted(
    lab: &Lab,
    daemon: &Daemon,
    plan: &Plan,
    ask: &Bytes,
) -> Result<Allowlisted> {
    let answer = rule_and_first_answer(lab, ask).await?;
    let mut levels = Vec::new();
    // The probe and the first answer of `rule_and_first_answer`.
    let mut answered = 2;
    for concurrency in LEVELS {
        let (samples, tally) = level(
            &lab.agent_socket(),
            concurrency,
            plan.level_warmup,
            plan.level,
            ask,
        )
        .await?;
        tally.check("allowlisted requests")?;
        answered += tally.ok;
        let stats = Stats::of(samples)?;
        let rps = stats.n as f64 / plan.level.as_secs_f64();
        levels.push(Level {
            concurrency,
            stats,
            rps,
        });
    }
    Ok(Allowlisted {
        ready: daemon.ready,
        answer_bytes: answer.len(),
        levels,
        answered,
    })
}

/// Adds the exact rule for `ask`'s command on the lab's daemon and asks once: the rule
/// works, and the answer (whose size the report gives) is returned.
pub async fn rule_and_first_answer(lab: &Lab, ask: &Bytes) -> Result<Bytes> {
    add_exact_rule(&lab.admin_socket(), ALLOWED).await?;
    let mut conn = Conn::open(&lab.agent_socket()).await?;
    // First without waiting: were the rule not to approve it, the request would wait
    // for a human until it expired (an hour), and the bench would hang that long.
    let mut probe: Value = serde_json::from_slice(ask)?;
    probe["wait"] = false.into();
    let mut answer = Bytes::new();
    for body in [Bytes::from(probe.to_string()), ask.clone()] {
        let (status, got) = conn.post(REQUESTS, body).await?;
        expect(status, &got, StatusCode::OK, "approved", Some("allowlist"))
            .map_err(anyhow::Error::msg)?;
        answer = got;
    }
    Ok(answer)
}

/// `concurrency` keep-alive connections, each asking in a loop for `warmup + measure`;
/// returns the latencies of the requests made wholly inside the measured window.
pub async fn level(
    socket: &Path,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
    ask: &Bytes,
) -> Result<(Vec<Duration>, Tally)> {
    let mut conns = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        conns.push(Conn::open(socket).await?);
    }
    let from = Instant::now() + warmup;
    let until = from + measure;
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let ask = ask.clone();
            tokio::spawn(async move {
                let mut samples = Vec::new();
                let mut tally = Tally::default();
                loop {
                    let start = Instant::now();
                    if start >= until {
                        break;
                    }
                    let (status, answer) = conn.post(REQUESTS, ask.clone()).await?;
                    let end = Instant::now();
                    match expect(
                        status,
                        &answer,
                        StatusCode::OK,
                        "approved",
                        Some("allowlist"),
                    ) {
                        Ok(_) => {
                            tally.ok += 1;
                            if start >= from && end <= until {
                                samples.push(end - start);
                            }
                        }
                        Err(e) => tally.fail(e),
                    }
                }
                anyhow::Ok((samples, tally))
            })
        })
        .collect();
    let mut samples = Vec::new();
    let mut tally = Tally::default();
    for task in tasks {
        let (s, t) = task.await??;
        samples.extend(s);
        tally.add(t);
    }
    Ok((samples, tally))
}
