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
/// How long one table's commands may take in a round.
const PER_TABLE: Duration = Duration::from_secs(3);
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

/// Commands drawn together: one table's (a program's, or a subcommand's), or one
/// language's, with the sandbox directory they run in and how long they may take in a
/// round (a program slow under the tracer, `file` or `npm`, is checked less, not left
/// out).
struct Batch {
    dir: &'static str,
    commands: Vec<Vec<String>>,
    budget: Duration,
}

/// One family's batches for a round's seed.
fn draw(family: &str, seed: u64) -> Vec<Batch> {
    let rng = &mut Rng::new(seed);
    let language = |commands: Vec<Vec<String>>| {
        vec![Batch {
            dir: ".",
            commands,
            budget: Duration::MAX,
        }]
    };
    match family {
        "tables" => tables()
            .iter()
            .filter(|t| installed(t.program()))
            .map(|t| {
                let n = if t.0.words.is_empty() {
                    PER_PROGRAM
                } else {
                    PER_SUBCOMMAND
                };
                Batch {
                    dir: t.dir(),
                    commands: t.commands(rng, n),
                    budget: PER_TABLE,
                }
            })
            .collect(),
        "sed" => language(sed_commands(rng, PER_LANGUAGE)),
        "awk" => language(
            awk_commands(rng, PER_LANGUAGE)
                .into_iter()
                .filter(|argv| installed(&argv[0]))
                .collect(),
        ),
        "jq" => language(jq_commands(rng, PER_LANGUAGE)),
        "find" => language(find_commands(rng, PER_LANGUAGE)),
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
    let mut missing: Vec<&str> = tables()
        .iter()
        .filter(|t| !installed(t.program()))
        .map(|t| t.0.program)
        .collect();
    missing.dedup();
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
            for batch in draw(family, seed) {
                let batch_started = Instant::now();
                for argv in &batch.commands {
                    if started.elapsed() >= budget {
                        break 'rounds;
                    }
                    if batch_started.elapsed() >= batch.budget {
                        break;
                    }
                    let found = checker.found.len();
                    let dir = std::path::Path::new(batch.dir);
                    checker.check_in(argv, dir, Duration::from_secs(30)).await;
                    if checker.found.len() > found {
                        let line = &checker.found[found];
                        replays.push(format!("{line}\n  replay: family {family}, seed {seed}"));
                        eprintln!("DISAGREES: {line} (family {family}, seed {seed})");
                    }
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
