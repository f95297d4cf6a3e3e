//! The fatigue benchmark: how many prompts an owner gets over the shell commands real
//! coding agents ran (`testkit/data/fatigue/`), under no rules and under a typical
//! owner's rules, judged by policy in process in a fixture git project.
//!
//! `cargo bench --bench fatigue` prints, per rule set: prompts per 100 commands, overall
//! and per class; the share of `read` commands asked; the share of the `code` commands a
//! typical rule names that are approved; the `outside` commands approved (must be none)
//! and the `net` ones; then the 15 most common first reasons for a prompt among the `read`
//! and the `code` commands.

use std::time::Instant;

use execgate_testkit::fatigue::{Bench, Class, Figures, RuleSet};

fn main() {
    let start = Instant::now();
    let bench = match Bench::new() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("fatigue: cannot set up: {e}");
            std::process::exit(1);
        }
    };
    let agents: std::collections::BTreeSet<&str> =
        bench.entries.iter().map(|e| e.agent.as_str()).collect();
    println!(
        "fatigue: {} commands from {} agents ({})",
        bench.entries.len(),
        agents.len(),
        agents.into_iter().collect::<Vec<_>>().join(", ")
    );
    let figures: Vec<Figures> = RuleSet::ALL.iter().map(|&s| bench.figures(s)).collect();
    println!("fatigue: judged in {:.1} s", start.elapsed().as_secs_f64());
    println!();
    table(&figures);
    for f in &figures {
        println!();
        list(
            &format!("outside approved ({})", f.rules.name()),
            &f.outside_approved,
        );
        list(
            &format!("net approved ({})", f.rules.name()),
            &f.net_approved,
        );
    }
    for set in RuleSet::ALL {
        for class in [Class::Read, Class::Code] {
            println!();
            println!(
                "fatigue: the 15 most common first reasons for a prompt, {} commands, {}:",
                class.as_str(),
                set.name()
            );
            for (reason, n) in bench.top_prompt_reasons(set, class, 15) {
                println!("  {n:>5}  {}", one_line(&reason, 150));
            }
        }
    }
}

fn table(figures: &[Figures]) {
    print!("{:<50}", "");
    for f in figures {
        print!("{:>16}", f.rules.name());
    }
    println!();
    let row = |label: String, cell: &dyn Fn(&Figures) -> String| {
        print!("{label:<50}");
        for f in figures {
            print!("{:>16}", cell(f));
        }
        println!();
    };
    row(
        format!("prompts per 100 commands (n={})", figures[0].all.commands),
        &|f| format!("{:.1}", f.all.prompts_per_100()),
    );
    for class in Class::ALL {
        row(
            format!(
                "  {} (n={})",
                class.as_str(),
                figures[0].class(class).commands
            ),
            &|f| format!("{:.1}", f.class(class).prompts_per_100()),
        );
    }
    row("denied (refused unasked), all".into(), &|f| {
        f.all.denied.to_string()
    });
    row("read: share asked %".into(), &|f| {
        format!("{:.1}", f.class(Class::Read).asked_pct())
    });
    row(
        format!(
            "code named by a typical rule: approved % (n={})",
            figures[0].code_named.commands
        ),
        &|f| format!("{:.1}", f.code_named.approved_pct()),
    );
    row("outside approved (must be 0)".into(), &|f| {
        f.outside_approved.len().to_string()
    });
    row("net approved".into(), &|f| f.net_approved.len().to_string());
}

fn list(title: &str, commands: &[String]) {
    println!("fatigue: {title}: {}", commands.len());
    for c in commands.iter().take(40) {
        println!("  {}", one_line(c, 160));
    }
    if commands.len() > 40 {
        println!("  … and {} more", commands.len() - 40);
    }
}

fn one_line(s: &str, max: usize) -> String {
    let flat = s.replace('\n', "⏎");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}
