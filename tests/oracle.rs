//! The oracle (issue 32): execgate's "harmless" checked against the real programs, run
//! under `strace` in a throwaway sandbox (testkit's `oracle`, docs/oracle.md).
//!
//! First the harness itself: each kind of effect a harmless verdict rules out is seen
//! when a real program has it. Then the sample: every command of the bypass corpus that
//! policy judges safe, run for real; none may disagree.

use execgate_testkit as common;

use std::time::Duration;

use common::oracle::{Disagreement, Sandbox, judge, trace};

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

/// What each profiled program's profile says it starts itself, by program.
fn helper_table() -> std::collections::HashMap<&'static str, &'static [&'static str]> {
    common::oracle::generate::tables()
        .into_iter()
        .map(|t| (t.0.program, t.0.helpers))
        .collect()
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
    judge(&t, sandbox, &[])
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

/// The profiled programs `.ci/run` installs (Debian's packages): under CI the sample
/// checks each of them.
const CI_INSTALLS: &[&str] = &[
    "cat", "ls", "grep", "sed", "gawk", "mawk", "jq", "find", "git", "tar", "gzip", "xz", "curl",
    "wget",
];

/// Whether `program` is a program installed on the sandbox's `PATH` (a shell's builtin,
/// such as `type`, is not: the oracle runs programs).
fn installed(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    ["/usr/local/bin", "/usr/bin", "/bin"].iter().any(|dir| {
        std::fs::metadata(std::path::Path::new(dir).join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// A number from the environment (`ORACLE_SEED`, the sample sizes), else `default`.
fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Policy as it judges with no rules, and the sandbox its commands run in: what a
/// sample checks each command with.
struct Oracle {
    sandbox: Sandbox,
    _home: tempfile::TempDir,
    policy: execgate::policy::Policy,
    cwd: std::path::PathBuf,
    netns: bool,
    checked: usize,
    found: Vec<String>,
}

impl Oracle {
    fn new() -> Oracle {
        let sandbox = Sandbox::new().expect("the sandbox");
        let home = tempfile::tempdir().unwrap();
        let config = std::sync::Arc::new(common::corpus::config(home.path()));
        let policy = execgate::policy::Policy::new(config).expect("policy compiles");
        let cwd = sandbox.root().canonicalize().unwrap();
        Oracle {
            sandbox,
            _home: home,
            policy,
            cwd,
            netns: trace::can_unshare_net(),
            checked: 0,
            found: Vec::new(),
        }
    }

    /// Runs `argv` for real if policy, with no rules, judges it safe where it runs, and
    /// keeps every way it disagrees; `helpers` are what its profile says it starts.
    async fn check(&mut self, argv: &[String], helpers: &[&str], limit: Duration) -> bool {
        use execgate::model::{CommandRef, Risk};
        let line = execgate::model::shell_join(argv);
        let subject = execgate::policy::Subject {
            agent: "agent",
            session: None,
            command: CommandRef::Line(&line),
            cwd: Some(&self.cwd),
            run: false,
            shell: None,
            uid: None,
        };
        if self.policy.evaluate(subject, chrono::Utc::now()).risk != Risk::Safe {
            return false;
        }
        self.checked += 1;
        let t = trace::run(&self.sandbox, argv, limit, self.netns).await;
        let d = judge(&t, &self.sandbox, helpers);
        if !d.is_empty() {
            let said: Vec<String> = d.iter().map(ToString::to_string).collect();
            self.found.push(format!("{line:?}: {}", said.join("; ")));
        }
        true
    }

    /// Says what was checked, and fails naming every disagreement.
    fn verdict(&self, what: &str, generated: usize) {
        eprintln!(
            "the oracle ({what}): {generated} commands, {} judged safe and run, {} disagreed",
            self.checked,
            self.found.len()
        );
        assert!(self.checked > 0, "{what}: no command was judged safe");
        assert!(
            self.found.is_empty(),
            "{what}: {} of {} safe commands did more than safe allows:\n{}",
            self.found.len(),
            self.checked,
            self.found.join("\n")
        );
    }
}

/// The sample: every plain command of the bypass corpus that policy, with no rules,
/// judges safe (so approves unasked) where it runs, run for real in the sandbox. None
/// may disagree: a disagreement is a command execgate approves without a human whose
/// real program runs something, writes, reaches the network, reads a secret or hangs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_safe_command_of_the_corpus_does_only_what_safe_means() {
    if !can_run("every_safe_command_of_the_corpus_does_only_what_safe_means") {
        return;
    }
    let mut oracle = Oracle::new();
    let helpers = helper_table();
    let mut seen = std::collections::HashSet::new();
    for case in common::corpus::CORPUS {
        let Some(argv) = plain_words(case.command) else {
            continue;
        };
        if seen.insert(case.command) {
            oracle
                .check(
                    &argv,
                    helpers.get(argv[0].as_str()).copied().unwrap_or_default(),
                    Duration::from_secs(5),
                )
                .await;
        }
    }
    oracle.verdict("the corpus", seen.len());
    assert!(oracle.checked >= 20, "too few safe commands to check");
}

/// The sample of generated commands: for each profiled program installed here, commands
/// drawn (seeded) from its option table (`ORACLE_PER_PROGRAM`, default 60; the seed is
/// `ORACLE_SEED`, default 32). Programs not installed are named; under CI one that CI
/// installs fails the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_safe_commands_do_only_what_safe_means() {
    use common::oracle::generate::{Rng, tables};
    if !can_run("generated_safe_commands_do_only_what_safe_means") {
        return;
    }
    let seed = setting("ORACLE_SEED", 32);
    let per_program = setting("ORACLE_PER_PROGRAM", 60) as usize;
    // Commands without operands too (`ORACLE_BARE=1`): not yet in the sample, since the
    // disagreements they find are not yet fixed (docs/oracle.md, "Found, not yet fixed").
    let bare = setting("ORACLE_BARE", 0) == 1;
    let mut oracle = Oracle::new();
    let mut rng = Rng::new(seed);
    let mut generated = 0;
    let mut skipped = Vec::new();
    let mut per = Vec::new();
    for table in tables() {
        if !installed(table.0.program) {
            skipped.push(table.0.program);
            continue;
        }
        let mut run = 0;
        for argv in table.commands(&mut rng, per_program, bare) {
            generated += 1;
            // Long enough for a slow program under the tracer (`locale -m` starts gzip
            // for each of its character maps: 8 s), short of a hang.
            run += usize::from(
                oracle
                    .check(&argv, table.0.helpers, Duration::from_secs(30))
                    .await,
            );
        }
        per.push(format!("{} {run}", table.0.program));
    }
    eprintln!("judged safe and run, per program: {}", per.join(", "));
    eprintln!("not installed: {}", skipped.join(", "));
    // What CI installs must be there under CI: a program the sample silently skipped
    // would pass unchecked.
    let required: Vec<&&str> = skipped.iter().filter(|p| CI_INSTALLS.contains(p)).collect();
    assert!(
        std::env::var_os("CI").is_none() || required.is_empty(),
        "not installed, though CI installs them: {required:?}"
    );
    oracle.verdict(&format!("the option tables, seed {seed}"), generated);
}

/// The sample of sed scripts from sed's grammar (`ORACLE_SED`, default 400), run with GNU
/// sed where policy judges them safe: the sed reader (labels, bracket expressions, `s`
/// flags, `e` and `w`) against sed itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_sed_scripts_judged_safe_do_only_what_safe_means() {
    use common::oracle::generate::{Rng, sed_commands};
    if !can_run("generated_sed_scripts_judged_safe_do_only_what_safe_means") {
        return;
    }
    let seed = setting("ORACLE_SEED", 32);
    let count = setting("ORACLE_SED", 400) as usize;
    let mut oracle = Oracle::new();
    for argv in sed_commands(&mut Rng::new(seed), count) {
        oracle.check(&argv, &[], Duration::from_secs(10)).await;
    }
    oracle.verdict(&format!("sed scripts, seed {seed}"), count);
}

/// The sample of awk programs from awk's grammar (`ORACLE_AWK`, default 300), run with
/// awk, gawk or mawk where policy judges them safe: the awk reader (regular expression
/// literals, strings, comments, division) against the real awks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_awk_programs_judged_safe_do_only_what_safe_means() {
    use common::oracle::generate::{Rng, awk_commands};
    if !can_run("generated_awk_programs_judged_safe_do_only_what_safe_means") {
        return;
    }
    let seed = setting("ORACLE_SEED", 32);
    let count = setting("ORACLE_AWK", 300) as usize;
    let mut oracle = Oracle::new();
    for argv in awk_commands(&mut Rng::new(seed), count) {
        if installed(&argv[0]) {
            oracle.check(&argv, &[], Duration::from_secs(10)).await;
        }
    }
    oracle.verdict(&format!("awk programs, seed {seed}"), count);
}
