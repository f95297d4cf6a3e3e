//! The oracle's long run (docs/oracle.md): commands drawn from execgate's own tables and
//! from the languages it reads (sed, awk, jq, find), round after round with a new seed,
//! each judged by policy with no rules and, where it is judged safe or reads-only, run
//! for real under strace in a throwaway sandbox. Prints the count per program, and each
//! disagreement with the seed and family that replay it.
//!
//! ```text
//! cargo run --release --example oracle -- --minutes 45 --seed 1001
//! ```
//!
//! Needs what the oracle's tests need: root, strace, git, unshare, mkfifo.

use std::time::{Duration, Instant};

use execgate_testkit::oracle::generate::{
    Rng, awk_commands, find_commands, jq_commands, sed_commands, tables,
};
use execgate_testkit::oracle::{Checker, installed};

/// What one round draws from each family.
const PER_PROGRAM: usize = 40;
const PER_SUBCOMMAND: usize = 8;
const PER_LANGUAGE: usize = 300;

struct Args {
    minutes: f64,
    seed: u64,
    /// Families to draw from: `tables`, `sed`, `awk`, `jq`, `find` (all by default).
    only: Vec<String>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        minutes: 10.0,
        seed: 1,
        only: Vec::new(),
    };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let mut value = |name: &str| words.next().ok_or(format!("{name} needs a value"));
        match word.as_str() {
            "--minutes" => {
                out.minutes = value("--minutes")?
                    .parse()
                    .map_err(|e| format!("--minutes: {e}"))?
            }
            "--seed" => {
                out.seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--only" => out.only = value("--only")?.split(',').map(String::from).collect(),
            "-h" | "--help" => {
                return Err(
                    "usage: oracle [--minutes N] [--seed S] [--only tables,sed,awk,jq,find]".into(),
                );
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    Ok(out)
}

/// One family's commands for a round's seed, each with the sandbox directory it runs in.
fn draw(family: &str, seed: u64) -> Vec<(&'static str, Vec<String>)> {
    let at_top =
        |commands: Vec<Vec<String>>| commands.into_iter().map(|argv| (".", argv)).collect();
    let rng = &mut Rng::new(seed);
    match family {
        "tables" => tables()
            .iter()
            .filter(|t| installed(t.0.program))
            .flat_map(|t| {
                let n = if t.0.words.is_empty() {
                    PER_PROGRAM
                } else {
                    PER_SUBCOMMAND
                };
                t.commands(rng, n)
                    .into_iter()
                    .map(|argv| (t.dir(), argv))
                    .collect::<Vec<_>>()
            })
            .collect(),
        "sed" => at_top(sed_commands(rng, PER_LANGUAGE)),
        "awk" => at_top(
            awk_commands(rng, PER_LANGUAGE)
                .into_iter()
                .filter(|argv| installed(&argv[0]))
                .collect(),
        ),
        "jq" => at_top(jq_commands(rng, PER_LANGUAGE)),
        "find" => at_top(find_commands(rng, PER_LANGUAGE)),
        _ => Vec::new(),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = match args() {
        Ok(a) => a,
        Err(why) => {
            eprintln!("oracle: {why}");
            std::process::exit(2);
        }
    };
    let families: Vec<&str> = ["tables", "sed", "awk", "jq", "find"]
        .into_iter()
        .filter(|f| args.only.is_empty() || args.only.iter().any(|o| o == f))
        .collect();
    let missing: Vec<&str> = tables()
        .iter()
        .map(|t| t.0.program)
        .filter(|p| !installed(p))
        .collect();
    eprintln!("not installed, so not drawn: {}", missing.join(", "));
    let mut checker = match Checker::new() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("oracle: the sandbox cannot be made (root, git and mkfifo are needed): {e}");
            std::process::exit(2);
        }
    };
    let started = Instant::now();
    let budget = Duration::from_secs_f64(args.minutes * 60.0);
    let mut replays = Vec::new();
    let mut round = 0;
    'rounds: loop {
        let seed = args.seed + round;
        for family in &families {
            for (dir, argv) in draw(family, seed) {
                if started.elapsed() >= budget {
                    break 'rounds;
                }
                let found = checker.found.len();
                let dir = std::path::Path::new(dir);
                checker.check_in(&argv, dir, Duration::from_secs(30)).await;
                if checker.found.len() > found {
                    let line = &checker.found[found];
                    replays.push(format!("{line}\n  replay: family {family}, seed {seed}"));
                    eprintln!("DISAGREES: {line} (family {family}, seed {seed})");
                }
            }
        }
        round += 1;
        eprintln!(
            "round {round} done at {:.0} s: {} run, {} disagreed",
            started.elapsed().as_secs_f64(),
            checker.checked(),
            checker.found.len()
        );
    }
    let secs = started.elapsed().as_secs_f64();
    let generated: usize = checker.counts.values().map(|c| c.generated).sum();
    println!(
        "{}",
        checker.report(&format!("seeds {}..={}", args.seed, args.seed + round))
    );
    println!(
        "{generated} generated and {} run in {secs:.0} s: {:.1} commands run per second",
        checker.checked(),
        checker.checked() as f64 / secs
    );
    println!("per program (generated / run / reads-only / disagreed):");
    for (program, c) in &checker.counts {
        println!(
            "  {program}: {} / {} / {} / {}",
            c.generated, c.run, c.reads_only, c.disagreed
        );
    }
    for r in &replays {
        println!("{r}");
    }
    if !replays.is_empty() {
        std::process::exit(1);
    }
}
