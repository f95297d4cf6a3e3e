//! The reader, case by case: each line a command and what execgate must make of it; and
//! what every profile keeps, whole-registry: names unique, and every `code`, `runs` and
//! `danger` option and every check exercised by some family's cases.

use super::*;

use std::collections::{BTreeMap, HashMap};

use super::compiled::Compiled;
use super::testing::{Table, coverage, read, said};

macro_rules! harmless {
    ($($cmd:expr),* $(,)?) => {$(
        let u = read($cmd);
        assert!(u.harmless(), "{:?} should be harmless: {:?}", $cmd, u.findings);
    )*};
}

macro_rules! finds {
    ($($cmd:expr => $what:expr),* $(,)?) => {$(
        let s = said($cmd);
        assert!(
            s.to_lowercase().contains(&$what.to_lowercase()),
            "{:?}: expected {:?} in {:?}", $cmd, $what, s
        );
        assert!(!read($cmd).harmless(), "{:?} must not be harmless", $cmd);
    )*};
}

#[test]
fn every_profile_compiles() {
    assert_eq!(profile_errors(), Vec::<String>::new());
}

#[test]
fn optional_values_are_only_ever_attached() {
    // `--group` takes its value only with `=`: `-` and FILE are uniq's INPUT and OUTPUT.
    finds!("uniq --group - --group FILE" => "writes `FILE`");
    harmless!("uniq --group=separate", "uniq -c");
    finds!("uniq in out" => "writes `out`");
    // `--color` likewise: FILE is grep's file operand, not the colour.
    finds!("grep '' --color FILE" => "reads `FILE`");
    harmless!("grep --color=always x");
    // `-F` takes no value even though `--classify` may.
    harmless!("ls -F", "ls --classify=auto");
    finds!("ls -F x" => "reads `x`");
    finds!("sort -cr x" => "reads `x`");
}

#[test]
fn attached_short_values() {
    // `-e.`: the pattern is `.`, FILE is an operand.
    finds!("grep -e. FILE" => "reads `FILE`");
    harmless!(
        "grep -e.",
        "head -n5",
        "head -5",
        "cut -d, -f1",
        "sort -k2 -t:"
    );
    finds!("sort -ofile" => "writes `file`");
    finds!("sort -o file" => "writes `file`");
    finds!("sort -rofile" => "writes `file`");
}

#[test]
fn abbreviations_are_recognised_and_never_harmless() {
    finds!("sort --compress-prog=sh" => "abbreviates `--compress-program`");
    finds!("sort --outp=x" => "abbreviates `--output`");
    finds!("rm --recur x" => "read as `--recursive`");
    finds!("ls --al" => "abbreviates");
    // Ambiguous: `--s` could be several; the program refuses it, execgate asks.
    finds!("sort --s" => "abbreviates");
    // Exact names win over prefixes.
    harmless!("ls --all", "sort --stable");
}

#[test]
fn unknown_options_and_operands() {
    finds!("sort --totally-unknown=1" => "not an option execgate knows");
    finds!("tr -S a b" => "`-S` is not an option");
    finds!("uname x" => "does not know what this operand is");
    finds!("ls -Q9" => "`-9` (in `-Q9`)");
    finds!("head -n" => "needs a value");
    finds!("ls --all=x" => "takes no value");
}

#[test]
fn programs_in_system_directories_only() {
    assert!(read("/usr/bin/ls").harmless());
    assert!(read("/bin/cat").harmless());
    assert!(!read("./ls").profiled);
    assert!(!read("/tmp/ls").profiled);
    assert!(!read("/usr/bin/x/ls").profiled);
    assert!(!read("frobnicate").profiled);
}

#[test]
fn glob_refusal_by_span() {
    // `sort -o *`: the file written is the wildcard's.
    let u = read("sort -o out");
    assert!(u.glob_refusal(1, &[]).is_some());
    assert!(
        u.glob_refusal(2, &[]).is_some(),
        "the value is past the literal words"
    );
    assert!(u.glob_refusal(3, &[]).is_none(), "the rule named `-o out`");
    // `cat *` covers a file read, but not a secret.
    assert!(read("cat README.md").glob_refusal(1, &[]).is_none());
    assert!(
        read("cat /root/.ssh/id_ed25519")
            .glob_refusal(1, &[])
            .is_some()
    );
    // Unknown words under a wildcard are refused; unprofiled programs are the rule's.
    assert!(read("ls --frob").glob_refusal(1, &[]).is_some());
    assert!(read("mytool --frob").glob_refusal(1, &[]).is_none());
}

#[test]
fn moving_a_span_keeps_unseen_unseen() {
    assert_eq!(Span::one(2).moved(|i| i + 3), Span { first: 5, last: 5 });
    assert_eq!(Span::UNSEEN.moved(|i| i + 1).last, usize::MAX);
    // Still refused by any rule, however many words it writes out.
    let u = Understanding {
        program: "x".into(),
        profiled: true,
        findings: vec![Finding {
            effect: Effect::Unknown("stdin".into()),
            at: Span::UNSEEN.moved(|i| i + 1),
        }],
        ..Understanding::default()
    };
    assert!(u.glob_refusal(usize::MAX - 1, &[]).is_some());
}

/// Every family's case tables: the commands its own tests check.
const FAMILIES: &[&[&dyn Table]] = &[
    archive::tests::TABLES,
    awk::tests::TABLES,
    build::tests::TABLES,
    coreutils::tests::TABLES,
    find::tests::TABLES,
    git::tests::TABLES,
    jq::tests::TABLES,
    js::tests::TABLES,
    net::tests::TABLES,
    ops::tests::TABLES,
    python::tests::TABLES,
    sed::tests::TABLES,
    text::tests::TABLES,
];

/// A program name in two profiles is read by whichever the registry took last; a
/// subcommand name twice under one profile, by whichever comes first.
#[test]
fn no_program_or_subcommand_name_is_listed_twice() {
    fn subcommands(p: &Profile, path: &str, twice: &mut Vec<String>) {
        let mut owner: HashMap<&str, &[&str]> = HashMap::new();
        for s in p.subcommands {
            for name in s.names {
                if let Some(other) = owner.insert(name, s.names) {
                    twice.push(format!(
                        "`{path} {name}` selects both {other:?} and {:?}",
                        s.names
                    ));
                }
            }
            subcommands(s, &format!("{path} {}", s.names[0]), twice);
        }
    }
    let mut twice = Vec::new();
    let mut owner: HashMap<&str, &[&str]> = HashMap::new();
    for p in all() {
        for name in p.names {
            if let Some(other) = owner.insert(name, p.names) {
                twice.push(format!(
                    "`{name}` is a name of both {other:?} and {:?}",
                    p.names
                ));
            }
        }
        subcommands(p, p.names[0], &mut twice);
    }
    assert!(
        twice.is_empty(),
        "names listed twice:\n{}",
        twice.join("\n")
    );
}

/// Every option whose line says it runs code, starts a command or destroys something is
/// given in some family's case, and every check is reached by one: what a profile says
/// is dangerous is shown to be read as such.
#[test]
fn every_code_runs_and_danger_option_and_every_check_has_a_case() {
    coverage::start();
    for tables in FAMILIES {
        for table in *tables {
            for command in table.commands() {
                read(command);
            }
        }
    }
    let seen = coverage::take();

    /// What must be reached, each with the first place it is found (a program and its
    /// subcommands) and whether a case reached it. An option table shared by several
    /// subcommands (`git config`'s by `get`, `set`, …; `docker run`'s by `docker
    /// container run`) is one table, and a profile compiled under each of its names
    /// (`pip`, `pip3`) one profile: a case through any of them reaches them all.
    type Words = &'static [&'static str];
    #[derive(Default)]
    struct Reached {
        /// Option lines, by their table and line.
        options: BTreeMap<(Words, &'static str), (String, bool)>,
        /// Checks, by the profile's names and table.
        checks: BTreeMap<(Words, Words), (String, bool)>,
    }
    fn walk(c: &Compiled, at: String, seen: &coverage::Seen, out: &mut Reached) {
        let options = c.profile.options;
        for opt in &c.opts {
            if matches!(opt.does, Does::Code(_) | Does::Runs(_) | Does::Danger(_)) {
                let entry = out
                    .options
                    .entry((options, opt.line))
                    .or_insert((at.clone(), false));
                entry.1 |= seen.options.contains(&std::ptr::from_ref(opt));
            }
        }
        if c.profile.check.is_some() {
            let entry = out
                .checks
                .entry((c.profile.names, options))
                .or_insert((at.clone(), false));
            entry.1 |= seen.checks.contains(&std::ptr::from_ref(c));
        }
        for s in &c.subs {
            walk(s, format!("{at} {}", s.profile.names[0]), seen, out);
        }
    }
    let mut reached = Reached::default();
    let mut registry: Vec<_> = REGISTRY.iter().collect();
    registry.sort_by_key(|(name, _)| **name);
    for (_, c) in registry {
        walk(c, c.profile.names[0].to_string(), &seen, &mut reached);
    }
    let mut missing: Vec<(&str, String)> = reached
        .options
        .iter()
        .filter(|(_, (_, reached))| !reached)
        .map(|((_, line), (at, _))| (at.as_str(), format!("{line:?}")))
        .chain(
            reached
                .checks
                .values()
                .filter(|(_, reached)| !reached)
                .map(|(at, _)| (at.as_str(), "its check".to_string())),
        )
        .collect();
    missing.sort();
    let missing: Vec<String> = missing
        .into_iter()
        .map(|(at, what)| format!("{at}: {what}"))
        .collect();
    assert!(
        missing.is_empty(),
        "{} options and checks no case reaches; add a case to the family's tables:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn a_danger_in_the_working_directory_is_lifted_only_by_an_absent_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "x").unwrap();
    let at = |path: &str| super::IfPresent {
        path: path.into(),
        danger: String::new(),
    };
    assert!(at("README.md").holds(Some(dir.path())));
    assert!(!at("main").holds(Some(dir.path())));
    assert!(
        !at("README.md/x").holds(Some(dir.path())),
        "not a directory: absent"
    );
    assert!(at("main").holds(None), "no working directory to look in");
    assert!(at(":/x").holds(Some(dir.path())), "a magic pathspec");
    assert!(at("*.md").holds(Some(dir.path())), "a pattern");
    // What cannot be looked at may be there.
    assert!(at("a\0b").holds(Some(dir.path())));
}

/// Whether `-` is standard input is the program's to say, and each profile's claim is
/// checked against the program itself: run with `-` in a directory holding a file named
/// `-`, it prints either what it was piped or the file.
#[test]
fn dash_is_standard_input_only_where_the_real_program_says_so() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("-"), "FFFF\n").unwrap();
    for command in [
        "cat -",
        "head -",
        "tail -",
        "sort -",
        "uniq -",
        "cut -c1-4 -",
        "nl -",
        "tac -",
        "rev -",
        "column -",
        "grep -h F -",
        "sed -n p -",
    ] {
        let words = crate::policy::shell::words(command);
        let Ok(mut child) = Command::new(&words[0])
            .args(&words[1..])
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        else {
            assert!(
                std::env::var_os("CI").is_none(),
                "{} is not installed, and CI checks it",
                words[0]
            );
            eprintln!("note: {} is not installed; not checked", words[0]);
            continue;
        };
        // `grep F` prints a piped `F` too: the file and the input differ in length. A
        // program that reads the file `-` may be gone before its input is written: the
        // broken pipe is then no failure (it raced under load in `cargo test --benches`).
        let _ = child.stdin.take().unwrap().write_all(b"FFF\n");
        let out = child.wait_with_output().unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        let read_the_file = printed.contains("FFFF");
        let profile_says_file = read(command)
            .findings
            .iter()
            .any(|f| f.effect == Effect::Reads("-".into()));
        assert_eq!(
            profile_says_file,
            read_the_file,
            "{command:?}: the program printed {printed:?}; its profile says it reads {}",
            if profile_says_file {
                "a file named `-`"
            } else {
                "standard input"
            }
        );
    }
}

/// An option that follows its input until stopped is harmless, and says the command is
/// endless: the oracle watches such a run for a while instead of calling it a hang.
#[test]
fn following_until_stopped_is_harmless_and_endless() {
    for cmd in [
        "tail -f",
        "tail -F -n 3",
        "tail --follow=name --retry",
        "docker logs -f web",
        "kubectl logs --follow web",
        "free -s 3",
    ] {
        let u = read(cmd);
        assert!(u.endless, "{cmd}: endless");
        assert!(
            u.findings
                .iter()
                .all(|f| !matches!(f.effect, Effect::Unknown(_))),
            "{cmd}: understood: {:?}",
            u.findings
        );
    }
    harmless!("tail -f", "tail -F -n 3");
    for cmd in ["tail -n 3", "tail", "docker logs web", "cat -f"] {
        assert!(!read(cmd).endless, "{cmd}: ends");
    }
}
