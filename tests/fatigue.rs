//! The fatigue corpus (`testkit/data/fatigue/`): real coding agents' shell commands, each
//! classed `read`/`code`/`write`/`net`/`outside`. These tests hold the corpus to its
//! shape and policy to the safety invariant: whatever the owner's rules (none, or the
//! typical ones), no `outside` command is approved. How few prompts there are is the
//! benchmark's business (`cargo bench --bench fatigue`); the figures are printed here too.

use std::collections::BTreeSet;

use execgate_testkit::fatigue::{self, Bench, Class, Decision, RuleSet};

#[test]
fn the_corpus_loads_with_three_agents_and_three_thousand_commands() {
    let entries = fatigue::load().unwrap_or_else(|e| panic!("the corpus does not load: {e}"));
    assert!(
        entries.len() >= 3_000,
        "the corpus has {} commands, fewer than 3,000",
        entries.len()
    );
    let agents: BTreeSet<&str> = entries.iter().map(|e| e.agent.as_str()).collect();
    assert!(
        agents.len() >= 3,
        "the corpus has commands of {} agents ({agents:?}), fewer than 3",
        agents.len()
    );
    let lines = fatigue::CORPUS.lines().filter(|l| !l.trim().is_empty());
    assert_eq!(
        lines.count(),
        entries.len(),
        "every line of commands.jsonl is a command"
    );
    // Every class is one of the five, and each is there.
    for class in Class::ALL {
        let n = entries.iter().filter(|e| e.class == class).count();
        assert!(n > 0, "no {} command in the corpus", class.as_str());
    }
    for e in &entries {
        assert!(
            Class::parse(e.class.as_str()) == Some(e.class),
            "commands.jsonl:{}: class {:?}",
            e.line,
            e.class
        );
        assert!(
            !e.command.trim().is_empty() && !e.source.is_empty() && !e.agent.is_empty(),
            "commands.jsonl:{}: an empty field",
            e.line
        );
    }
}

#[test]
fn no_outside_command_is_approved() {
    let bench = Bench::new().unwrap_or_else(|e| panic!("the fatigue fixture: {e}"));
    let mut failures = Vec::new();
    for set in RuleSet::ALL {
        let figures = bench.figures(set);
        println!(
            "{}: {:.1} prompts per 100 commands (read {:.1}, code {:.1}, write {:.1}, net {:.1}, \
             outside {:.1}); reads asked {:.1}%; rule-named code approved {:.1}% of {}; \
             {} denied; {} net approved",
            set.name(),
            figures.all.prompts_per_100(),
            figures.class(Class::Read).prompts_per_100(),
            figures.class(Class::Code).prompts_per_100(),
            figures.class(Class::Write).prompts_per_100(),
            figures.class(Class::Net).prompts_per_100(),
            figures.class(Class::Outside).prompts_per_100(),
            figures.class(Class::Read).asked_pct(),
            figures.code_named.approved_pct(),
            figures.code_named.commands,
            figures.all.denied,
            figures.net_approved.len(),
        );
        // The outside commands are judged: the test cannot pass by judging none.
        assert!(figures.class(Class::Outside).commands >= 100);
        for j in bench.verdicts(set, Class::Outside) {
            if j.decision == Decision::Approved {
                failures.push(format!(
                    "[{}] commands.jsonl:{} ({}, {}): {}",
                    set.name(),
                    j.entry.line,
                    j.entry.agent,
                    j.entry.source,
                    j.entry.command.replace('\n', "⏎")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} outside commands approved:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
