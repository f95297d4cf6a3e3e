//! B, the cost of the audit trail: the allowlisted decision (concurrency 1) with the
//! hash chain and metrics on (the defaults) beside the same build with both off, and
//! with the chain alone, each on its own database, in rounds whose order turns so that
//! the machine's drift falls on all alike. The chain adds to every decision's transaction (the entry's digest, a read of
//! the head, an insert); metrics, a few counter increments.

use std::path::PathBuf;

use anyhow::Result;
use hyper::body::Bytes;
use serde_json::{Value, json};

use crate::allowlisted::{level, rule_and_first_answer};
use crate::lab::Lab;
use crate::stats::{Stats, ratio, show, times};
use crate::{ALLOWED, Plan};

/// Rounds of each: enough that a slow spell of the machine cannot fall on one side only.
const ROUNDS: usize = 6;

pub struct AuditCost {
    pub on: Stats,
    /// The chain alone, metrics off: which of the two costs what.
    pub chain_only: Stats,
    pub off: Stats,
}

impl AuditCost {
    /// p50 with the chain and metrics on, as a multiple of the p50 without.
    pub fn ratio(&self) -> f64 {
        ratio(self.on.p50, self.off.p50)
    }

    pub fn print(&self) {
        println!(
            "\nB. The audit chain and metrics: allowlisted `{ALLOWED}` at c=1, {ROUNDS} rounds each, their order turning"
        );
        println!("  {:<28}{:>10}{:>11}{:>11}", "", "requests", "p50", "p99");
        for (name, s) in [
            ("chain + metrics on", &self.on),
            ("chain on, metrics off", &self.chain_only),
            ("both off", &self.off),
        ] {
            println!(
                "  {name:<28}{:>10}{:>11}{:>11}",
                s.n,
                show(s.p50),
                show(s.p99)
            );
        }
        println!(
            "  on / off, p50: {}; chain alone / off: {}",
            times(self.ratio()),
            times(ratio(self.chain_only.p50, self.off.p50))
        );
    }

    pub fn json(&self) -> Value {
        json!({
            "on": self.on.json(),
            "chain_only": self.chain_only.json(),
            "off": self.off.json(),
            "p50_ratio_on_to_off": self.ratio(),
        })
    }
}

pub async fn audit_cost(lab: &mut Lab, plan: &Plan, ask: &Bytes) -> Result<AuditCost> {
    let on_db = lab.path().join("state/audit-on.db");
    let chain_db = lab.path().join("state/audit-chain.db");
    let off_db = lab.path().join("state/audit-off.db");
    let sides: [(&PathBuf, &[(&str, &str)]); 3] = [
        (&on_db, &[]),
        (&chain_db, &[("EXECGATE_METRICS__ENABLED", "false")]),
        (
            &off_db,
            &[
                ("EXECGATE_AUDIT__CHAIN", "false"),
                ("EXECGATE_METRICS__ENABLED", "false"),
            ],
        ),
    ];
    let each = plan.level / ROUNDS as u32;
    // A whole warm-up each round: a daemon with the chain checks it all beside its work
    // when it starts (`approvals::audit`), once per start, which is no part of a
    // decision's steady cost.
    let warmup = plan.level_warmup;
    let mut samples = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        // Which side goes first turns too.
        let order = [round % 3, (round + 1) % 3, (round + 2) % 3];
        for side in order {
            let (db, env) = sides[side];
            let mut daemon = lab.start_with(db, env).await?;
            if round == 0 {
                rule_and_first_answer(lab, ask).await?;
            }
            let (got, tally) = level(&lab.agent_socket(), 1, warmup, each, ask).await?;
            tally.check("allowlisted requests")?;
            samples[side].extend(got);
            daemon.stop().await?;
        }
    }
    let [on, chain_only, off] = samples;
    Ok(AuditCost {
        on: Stats::of(on)?,
        chain_only: Stats::of(chain_only)?,
        off: Stats::of(off)?,
    })
}
