//! E. Policy in process: analysis + match per command with 10,000 rules.

use std::time::Duration;

use execgate_testkit::policy_bench as common;
use serde_json::{Value, json};

use crate::Plan;
use crate::lab::Lab;
use crate::stats::{count, ratio, show, times, us};

pub struct PolicyCost {
    per_command: Duration,
    commands: usize,
    rounds: usize,
    round_trip: Duration,
}

impl PolicyCost {
    pub fn print(&self) {
        println!(
            "\nE. Policy: analyse + match, {} rules, in process",
            count(common::RULES)
        );
        println!(
            "  median {} per command ({} corpus commands, {} rounds) = {} the bare round trip p50",
            show(self.per_command),
            self.commands,
            self.rounds,
            times(ratio(self.per_command, self.round_trip))
        );
    }

    pub fn json(&self) -> Value {
        json!({
            "rules": common::RULES,
            "per_command_us": us(self.per_command),
            "commands": self.commands,
            "rounds": self.rounds,
            "ratio_to_round_trip": ratio(self.per_command, self.round_trip),
        })
    }
}

pub fn policy(lab: &Lab, plan: &Plan, round_trip: Duration) -> PolicyCost {
    let (policy, repo) = common::policy(&lab.path().join("policy"));
    // One pass first, so lazily built state is not billed to the first round.
    common::evaluate_corpus(&policy, &repo);
    PolicyCost {
        per_command: common::median_per_command(plan.policy_rounds, || {
            common::evaluate_corpus(&policy, &repo)
        }),
        commands: common::corpus_len(),
        rounds: plan.policy_rounds,
        round_trip,
    }
}
