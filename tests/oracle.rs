//! The oracle (issue 32): execgate's "harmless" checked against the real programs, run
//! under `strace` in a throwaway sandbox (testkit's `oracle`, docs/oracle.md).
//!
//! First the harness itself: each kind of effect a harmless verdict rules out is seen
//! when a real program has it. Then the sample: every command of the bypass corpus that
//! policy judges safe, run for real; none may disagree.

use execgate_testkit as common;

use std::time::Duration;

use common::oracle::{CI_INSTALLS, Checker, Claim, Disagreement, Sandbox, installed, judge, trace};

/// Whether the oracle can run here: root (to run programs as another uid and make a
/// network namespace), strace and git. Under CI, which installs them and runs as root,
/// a missing one fails the test; elsewhere it is skipped, saying why.
fn can_run(test: &str) -> bool {
    let mut missing = Vec::new();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        missing.push("root".to_string());
    }
    for program in ["strace", "git", "mkfifo", "unshare"] {
        let found = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            missing.push(program.to_string());
        }
    }
    if missing.is_empty() {
        return true;
    }
    let why = format!("{test}: the oracle needs {}", missing.join(", "));
    assert!(
        std::env::var_os("CI").is_none(),
        "{why} (CI installs them and runs as root)"
    );
    eprintln!("skipped: {why}");
    false
}

fn words(line: &str) -> Vec<String> {
    line.split(' ').map(String::from).collect()
}

/// Runs `argv` in `sandbox` (in a network namespace when `netns`) and judges it, with
/// no helpers: the harness's own cases start none.
async fn disagreements(
    sandbox: &Sandbox,
    argv: &[String],
    limit: Duration,
    netns: bool,
) -> Vec<Disagreement> {
    let t = trace::run(sandbox, argv, limit, netns).await;
    judge(&t, sandbox, &Claim::default())
}

/// What a case's disagreements must be.
type Expect = Box<dyn Fn(&[Disagreement]) -> bool>;

/// Each effect "harmless" rules out is seen in a real program that has it, and a
/// program that has none agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_sees_what_real_programs_do() {
    if !can_run("the_harness_sees_what_real_programs_do") {
        return;
    }
    let sandbox = Sandbox::new().expect("the sandbox");
    let netns = trace::can_unshare_net();
    let limit = Duration::from_secs(10);
    let agree = |d: &[Disagreement]| d.is_empty();
    let cases: Vec<(Vec<String>, Expect)> = vec![
        (words("cat notes.txt"), Box::new(agree)),
        (words("grep -r alpha src notes.txt"), Box::new(agree)),
        (words("git -C repo log --oneline -1"), Box::new(agree)),
        // GNU sed's `e` runs its line with /bin/sh.
        (
            vec![
                "sed".into(),
                "-n".into(),
                "1e true".into(),
                "notes.txt".into(),
            ],
            Box::new(|d| d.iter().any(|d| matches!(d, Disagreement::Ran(..)))),
        ),
        (
            vec!["awk".into(), "BEGIN { system(\"true\") }".into()],
            Box::new(|d| d.iter().any(|d| matches!(d, Disagreement::Ran(..)))),
        ),
        (
            words("sort -o sorted.txt notes.txt"),
            Box::new(|d| {
                d.iter()
                    .any(|d| matches!(d, Disagreement::Wrote(_, p) if p.ends_with("sorted.txt")))
            }),
        ),
        (
            words("cat link-to-secret"),
            Box::new(|d| {
                d.iter()
                    .any(|d| matches!(d, Disagreement::ReadSecret(p) if p.ends_with(".env")))
            }),
        ),
        (
            vec![
                "bash".into(),
                "-c".into(),
                "echo > /dev/tcp/192.0.2.1/80".into(),
            ],
            Box::new(|d| d.iter().any(|d| matches!(d, Disagreement::Sent(_)))),
        ),
    ];
    let mut wrong = Vec::new();
    for (argv, expected) in &cases {
        let d = disagreements(&sandbox, argv, limit, netns).await;
        if !expected(&d) {
            wrong.push(format!("{argv:?}: {d:?}"));
        }
    }
    // A reader of the FIFO waits for ever: killed at the limit, and counted.
    let d = disagreements(&sandbox, &words("cat fifo"), Duration::from_secs(1), netns).await;
    if d != [Disagreement::TimedOut] {
        wrong.push(format!("cat fifo: {d:?}"));
    }
    // What execgate said of a command is what the run is held to.
    let root = sandbox.root().canonicalize().unwrap();
    let held = |argv: &str, claim: Claim<'static>, limit: u64| {
        let sandbox = &sandbox;
        let argv = words(argv);
        async move {
            let t = trace::run(sandbox, &argv, Duration::from_secs(limit), netns).await;
            judge(&t, sandbox, &claim)
        }
    };
    let said = |paths: &[&str]| Some(paths.iter().map(|p| root.join(p)).collect());
    // A read it did not say: `data.csv`, where only `notes.txt` was said.
    let d = held(
        "cat notes.txt data.csv",
        Claim {
            reads: said(&["notes.txt"]),
            ..Claim::default()
        },
        10,
    )
    .await;
    if d != [Disagreement::ReadUnsaid(root.join("data.csv"))] {
        wrong.push(format!("a read not said: {d:?}"));
    }
    // A tree said is everything under it; the working directory's names may be listed.
    let d = held(
        "grep -r alpha src",
        Claim {
            reads: said(&["src"]),
            lists: vec![root.clone()],
            ..Claim::default()
        },
        10,
    )
    .await;
    let listed = held(
        "ls",
        Claim {
            reads: said(&[]),
            lists: vec![root.clone()],
            ..Claim::default()
        },
        10,
    )
    .await;
    if !d.is_empty() || !listed.is_empty() {
        wrong.push(format!("a tree said, a listing: {d:?} {listed:?}"));
    }
    // What a program follows until stopped reaches its limit by design: no hang, then.
    let d = held(
        "tail -f notes.txt",
        Claim {
            endless: true,
            ..Claim::default()
        },
        1,
    )
    .await;
    if !d.is_empty() {
        wrong.push(format!("tail -f, endless: {d:?}"));
    }
    // What a profile says a program keeps for itself is written there, and only there:
    // a directory made in one kept, and one beside it.
    let d = held(
        "mkdir .npm/_logs .npm/other",
        Claim {
            keeps: vec![root.join(".npm/_logs")],
            ..Claim::default()
        },
        10,
    )
    .await;
    let beside = Disagreement::Wrote("mkdir".into(), root.join(".npm/other"));
    if !d.contains(&beside)
        || d.iter().any(
            |d| matches!(d, Disagreement::Wrote(_, p) if p.starts_with(root.join(".npm/_logs"))),
        )
    {
        wrong.push(format!("kept, and beside it: {d:?}"));
    }
    // A connection to its service's own socket, named by its profile, is no sending;
    // to any other socket it is.
    let connect = |path: &str| words(&format!("curl -s --unix-socket {path} http://localhost/"));
    let own = trace::run(
        &sandbox,
        &connect("/run/docker.sock"),
        Duration::from_secs(10),
        netns,
    )
    .await;
    let own = judge(
        &own,
        &sandbox,
        &Claim {
            sockets: &["/run/docker.sock"],
            ..Claim::default()
        },
    );
    let other = trace::run(
        &sandbox,
        &connect("/run/other.sock"),
        Duration::from_secs(10),
        netns,
    )
    .await;
    let other = judge(
        &other,
        &sandbox,
        &Claim {
            sockets: &["/run/docker.sock"],
            ..Claim::default()
        },
    );
    if own.iter().any(|d| matches!(d, Disagreement::Sent(_)))
        || !other
            .iter()
            .any(|d| matches!(d, Disagreement::Sent(c) if c.contains("other.sock")))
    {
        wrong.push(format!("sockets: own {own:?}, other {other:?}"));
    }
    // What a profile says a program asks of the network by itself is a name lookup and
    // HTTPS; any other port is sending.
    let phones = Claim {
        phones_home: true,
        ..Claim::default()
    };
    let https = held("curl -s https://registry.example.invalid/", phones, 10).await;
    let phones = Claim {
        phones_home: true,
        ..Claim::default()
    };
    let other = held("curl -s http://192.0.2.1:8080/", phones, 10).await;
    if !https.is_empty()
        || !other
            .iter()
            .any(|d| matches!(d, Disagreement::Sent(c) if c.contains("8080")))
    {
        wrong.push(format!(
            "phoning home: https {https:?}, another port {other:?}"
        ));
    }
    assert!(
        wrong.is_empty(),
        "the harness misread:\n{}",
        wrong.join("\n")
    );
}

/// Whether `line` is one plain command (no shell syntax): its words are its argv.
fn plain_words(line: &str) -> Option<Vec<String>> {
    let shell = |c: char| "|&;<>()$`\\\"'*?[]{}~#=\n".contains(c);
    (!line.contains(shell)).then(|| line.split_whitespace().map(String::from).collect())
}

/// A number from the environment (`ORACLE_SEED`, the sample sizes), else `default`.
fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Fails naming every disagreement `checker` found, after saying what it checked.
fn verdict(checker: &Checker, what: &str) {
    eprint!("{}", checker.report(what));
    assert!(checker.checked() > 0, "{what}: no command was judged safe");
    assert!(
        checker.found.is_empty(),
        "{what}: {} of {} safe commands did more than safe allows:\n{}",
        checker.found.len(),
        checker.checked(),
        checker.found.join("\n")
    );
}

/// The sample: every plain command of the bypass corpus that policy, with no rules,
/// judges safe (so approves unasked) where it runs, run for real in the sandbox. None
/// may disagree: a disagreement is a command execgate approves without a human whose
/// real program runs something, writes, reaches the network, reads a secret or what
/// execgate did not say it reads, or hangs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_safe_command_of_the_corpus_does_only_what_safe_means() {
    if !can_run("every_safe_command_of_the_corpus_does_only_what_safe_means") {
        return;
    }
    let mut oracle = Checker::new().expect("the sandbox");
    let mut seen = std::collections::HashSet::new();
    let mut missing = std::collections::BTreeSet::new();
    for case in common::corpus::CORPUS {
        let Some(argv) = plain_words(case.command) else {
            continue;
        };
        if !installed(&argv[0]) {
            missing.insert(argv[0].clone());
        } else if seen.insert(case.command) {
            oracle.check(&argv, Duration::from_secs(5)).await;
        }
    }
    eprintln!("not installed: {missing:?}");
    verdict(&oracle, "the corpus");
    assert!(oracle.checked() >= 20, "too few safe commands to check");
}

/// The sample of generated commands: for each profiled program installed here, commands
/// drawn (seeded) from its option table (`ORACLE_PER_PROGRAM`, default 40), and from
/// each of its subcommands' (`ORACLE_PER_SUBCOMMAND`, default 3; git's run in the
/// repository), each table for at most `ORACLE_MS_PER_TABLE` (default 1500); the seed
/// is `ORACLE_SEED`, default 32. Programs not installed are named; under CI one that CI
/// installs fails the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_safe_commands_do_only_what_safe_means() {
    use common::oracle::generate::{Rng, tables};
    if !can_run("generated_safe_commands_do_only_what_safe_means") {
        return;
    }
    let seed = setting("ORACLE_SEED", 32);
    let per_program = setting("ORACLE_PER_PROGRAM", 40) as usize;
    let per_subcommand = setting("ORACLE_PER_SUBCOMMAND", 3) as usize;
    let per_table = Duration::from_millis(setting("ORACLE_MS_PER_TABLE", 1500));
    let mut oracle = Checker::new().expect("the sandbox");
    let mut rng = Rng::new(seed);
    let mut skipped = Vec::new();
    for table in tables() {
        if !installed(table.program()) {
            if !skipped.contains(&table.0.program) {
                skipped.push(table.0.program);
            }
            continue;
        }
        let n = if table.0.words.is_empty() {
            per_program
        } else {
            per_subcommand
        };
        // Each table gets a few seconds: a program slow under the tracer (`file` loads
        // its magic database, `systemctl` asks its manager, npm starts node) is checked
        // less, not skipped. The long run (examples/oracle.rs) has no such bound.
        let started = std::time::Instant::now();
        for argv in table.commands(&mut rng, n) {
            if started.elapsed() > per_table {
                break;
            }
            // Long enough for a slow program under the tracer (`locale -m` starts gzip
            // for each of its character maps: 8 s), short of a hang.
            let dir = std::path::Path::new(table.dir());
            oracle.check_in(&argv, dir, Duration::from_secs(30)).await;
        }
    }
    eprintln!("not installed: {}", skipped.join(", "));
    // What CI installs must be there under CI: a program the sample silently skipped
    // would pass unchecked.
    let required: Vec<&&str> = skipped.iter().filter(|p| CI_INSTALLS.contains(p)).collect();
    assert!(
        std::env::var_os("CI").is_none() || required.is_empty(),
        "not installed, though CI installs them: {required:?}"
    );
    verdict(&oracle, &format!("the option tables, seed {seed}"));
}

/// The sample of one language's scripts (`size`: the variable that sets how many, and
/// its default), drawn from its grammar with seed `ORACLE_SEED` (default 32), run with
/// the real program where policy judges them safe or reads-only. A program not
/// installed is named, and under CI one that CI installs fails the test.
async fn language_sample(
    test: &str,
    size: (&str, u64),
    draw: fn(&mut common::oracle::generate::Rng, usize) -> Vec<Vec<String>>,
    what: &str,
) {
    if !can_run(test) {
        return;
    }
    let seed = setting("ORACLE_SEED", 32);
    let count = setting(size.0, size.1) as usize;
    let mut oracle = Checker::new().expect("the sandbox");
    let mut missing = std::collections::BTreeSet::new();
    for argv in draw(&mut common::oracle::generate::Rng::new(seed), count) {
        if installed(&argv[0]) {
            oracle.check(&argv, Duration::from_secs(10)).await;
        } else {
            missing.insert(argv[0].clone());
        }
    }
    eprintln!("{what}: not installed: {missing:?}");
    let required: Vec<&String> = missing
        .iter()
        .filter(|p| CI_INSTALLS.contains(&p.as_str()))
        .collect();
    assert!(
        std::env::var_os("CI").is_none() || required.is_empty(),
        "not installed, though CI installs them: {required:?}"
    );
    verdict(&oracle, &format!("{what}, seed {seed}"));
}

/// sed scripts (`ORACLE_SED`, default 400), run with GNU sed: the sed reader (labels,
/// bracket expressions, `s` flags, `e` and `w`) against sed itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_sed_scripts_judged_safe_do_only_what_safe_means() {
    language_sample(
        "generated_sed_scripts_judged_safe_do_only_what_safe_means",
        ("ORACLE_SED", 400),
        common::oracle::generate::sed_commands,
        "sed scripts",
    )
    .await;
}

/// awk programs (`ORACLE_AWK`, default 300), run with awk, gawk or mawk: the awk reader
/// (regular expression literals, strings, comments, division) against the real awks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_awk_programs_judged_safe_do_only_what_safe_means() {
    language_sample(
        "generated_awk_programs_judged_safe_do_only_what_safe_means",
        ("ORACLE_AWK", 300),
        common::oracle::generate::awk_commands,
        "awk programs",
    )
    .await;
}

/// jq filters (`ORACLE_JQ`, default 300): the jq reader (its lexer, strings and
/// interpolation, comments, `import`, the builtins that read beyond the input) against
/// jq itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_jq_filters_judged_safe_do_only_what_safe_means() {
    language_sample(
        "generated_jq_filters_judged_safe_do_only_what_safe_means",
        ("ORACLE_JQ", 300),
        common::oracle::generate::jq_commands,
        "jq filters",
    )
    .await;
}

/// find commands (`ORACLE_FIND`, default 300), run with GNU find: the find reader
/// (starting points, values that look like operators, actions that run, write or
/// remove) against find itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_find_expressions_judged_safe_do_only_what_safe_means() {
    language_sample(
        "generated_find_expressions_judged_safe_do_only_what_safe_means",
        ("ORACLE_FIND", 300),
        common::oracle::generate::find_commands,
        "find expressions",
    )
    .await;
}
