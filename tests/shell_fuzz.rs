//! Fuzzing the shell analyser (issue 4, item 7) as proptest properties:
//!
//! * on random shell-heavy strings it never panics and is deterministic;
//! * on random nesting (up to ~20,000 characters) and random text (up to 64 KiB) it
//!   never panics, returns within a bound, is deterministic, and is plain for a set of
//!   shells exactly when it is plain for each of them;
//! * every string it calls plain for bash is accepted by `bash -n`, and bash finds as
//!   many simple commands in it as the analyser does; every string it calls plain for sh
//!   or zsh is accepted by `dash -n` or `zsh -n` (where installed);
//! * generated plain commands are plain, split into the right commands, and their words
//!   come back unquoted.
//!
//! Nothing fuzzed is ever executed: `bash -n` (`dash -n`, `zsh -n`) only parses, and the
//! command count comes from `declare -f` of a function whose body is the command (a
//! definition, never called), run only after `bash -n` accepted the command, with an
//! empty environment, a `PATH` that finds nothing, and a temp dir as working directory.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use execgate::model::Shell;
use execgate::policy::parse::{Analysis, analyse, analyse_for};
use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ── Strategies ───────────────────────────────────────────────────────────────────────

const LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789      ";
const SYMBOLS: &str = ";&|$`'\"()<>{}[]*?~#\\!=-/.,:\n\t\r\u{FF1B}\u{00A0}\u{202E}é";

/// Random strings from a shell-heavy alphabet, letters and spaces a little more likely.
fn shellish() -> impl Strategy<Value = String> {
    let letters: Vec<char> = LETTERS.chars().collect();
    let symbols: Vec<char> = SYMBOLS.chars().collect();
    prop::collection::vec(
        prop_oneof![
            3 => prop::sample::select(letters),
            2 => prop::sample::select(symbols),
        ],
        0..48,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

/// Random strings from a milder alphabet (only what plain commands may contain, plus a
/// few troublemakers), so that many of them are plain and reach bash.
fn mild() -> impl Strategy<Value = String> {
    let chars: Vec<char> = "abcdefxyz01     ;;&&||''\"\"-=./:é#(~".chars().collect();
    prop::collection::vec(prop::sample::select(chars), 0..32)
        .prop_map(|cs| cs.into_iter().collect())
}

/// Words bash treats as syntax at the start of a command.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc",
];

/// One word as written and as the shell would see it after quote removal.
fn arg() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        // tree-sitter-bash reads a lone `==` or `=~` as a test operator (a parse error,
        // so "not plain": safe, but not what this property is about); zsh replaces a
        // word starting with `=` by a command's path.
        3 => "[a-zA-Z0-9./=:-]{1,10}"
            .prop_filter("test operator, zsh `=`", |w| !w.starts_with('='))
            .prop_map(|w| (w.clone(), w)),
        2 => "[a-z ;&|$()<>]{0,6}".prop_map(|s| (format!("'{s}'"), s)),
        1 => ("[a-z0-9]{1,3}", "[a-z ;&|$()<>]{0,4}")
            .prop_map(|(a, s)| (format!("{a}'{s}'"), format!("{a}{s}"))),
    ]
}

/// A simple command: a program that is no reserved word, then up to four arguments,
/// separated by one to three spaces.
fn simple_command() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        "[a-z][a-z0-9._-]{0,7}".prop_filter("reserved word", |w| !RESERVED.contains(&w.as_str())),
        prop::collection::vec((arg(), 1usize..4), 0..5),
    )
        .prop_map(|(program, args)| {
            let mut text = program.clone();
            let mut words = vec![program];
            for ((written, word), spaces) in args {
                text.push_str(&" ".repeat(spaces));
                text.push_str(&written);
                words.push(word);
            }
            (text, words)
        })
}

/// One to four simple commands joined by `&&`, `||`, `;` or `|` with random spacing.
fn plain_command() -> impl Strategy<Value = (String, Vec<Vec<String>>)> {
    let separator = (
        prop::sample::select(vec!["&&", "||", ";", "|"]),
        0usize..3,
        0usize..3,
    )
        .prop_map(|(op, before, after)| format!("{}{op}{}", " ".repeat(before), " ".repeat(after)));
    (
        0usize..3,
        simple_command(),
        prop::collection::vec((separator, simple_command()), 0..4),
        0usize..3,
    )
        .prop_map(|(lead, first, rest, trail)| {
            let mut text = " ".repeat(lead);
            text.push_str(&first.0);
            let mut commands = vec![first.1];
            for (sep, (cmd, words)) in rest {
                text.push_str(&sep);
                text.push_str(&cmd);
                commands.push(words);
            }
            text.push_str(&" ".repeat(trail));
            (text, commands)
        })
}

// ── bash as the oracle ───────────────────────────────────────────────────────────────

fn find(program: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        // Skipped (and said) on a developer's machine; in CI every shell must be there.
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        assert!(
            !ci,
            "{program} is not installed, and CI must check every shell: install it (`apt-get install -y {program}`; .ci/run does)"
        );
        eprintln!("note: {program} is not installed; skipping the {program} checks of the fuzz");
    }
    found
}

fn bash() -> Option<&'static PathBuf> {
    static BASH: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASH.get_or_init(|| find("bash")).as_ref()
}

fn dash() -> Option<&'static PathBuf> {
    static DASH: OnceLock<Option<PathBuf>> = OnceLock::new();
    DASH.get_or_init(|| find("dash")).as_ref()
}

fn zsh() -> Option<&'static PathBuf> {
    static ZSH: OnceLock<Option<PathBuf>> = OnceLock::new();
    ZSH.get_or_init(|| find("zsh")).as_ref()
}

fn scratch_dir() -> &'static std::path::Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

fn sandboxed(shell: &PathBuf) -> Command {
    let mut cmd = Command::new(shell);
    cmd.env_clear()
        .env("PATH", "/nonexistent-execgate-fuzz")
        .current_dir(scratch_dir());
    match shell.file_name().and_then(|n| n.to_str()) {
        Some("bash") => cmd.arg("--norc").arg("--noprofile"),
        Some("zsh") => cmd.arg("-f"),
        _ => &mut cmd,
    };
    cmd
}

/// `SHELL -n` with the command on stdin: parses, executes nothing.
fn bash_accepts(bash: &PathBuf, command: &str) -> Result<(), String> {
    let mut child = sandboxed(bash)
        .arg("-n")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run bash: {e}"))?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(command.as_bytes())
        .map_err(|e| format!("cannot write to bash: {e}"))?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} -n rejects it: {}",
            bash.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// How many simple commands bash finds in `command`: the body of a function that is
/// defined (never called) and printed back by `declare -f`, counted outside quotes.
fn bash_simple_commands(bash: &PathBuf, command: &str) -> Result<usize, String> {
    if command.trim().is_empty() {
        return Ok(0); // `f() { }` is a syntax error; an empty command has none.
    }
    let script = format!("f() {{\n{command}\n}}\ndeclare -f f");
    let out = sandboxed(bash)
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run bash: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "bash rejects the function: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let printed = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = printed.lines().collect();
    // `f () `, `{ `, body…, `}`.
    if lines.len() < 3 || lines[1].trim() != "{" || lines[lines.len() - 1].trim() != "}" {
        return Err(format!("unexpected declare -f output: {printed:?}"));
    }
    Ok(count_simple_commands(&lines[2..lines.len() - 1].join("\n")))
}

/// Counts the non-empty pieces between `;`, newlines, `&`, `&&`, `|` and `||` outside
/// quotes: the simple commands of a plain command list.
fn count_simple_commands(body: &str) -> usize {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut count = 0;
    let mut piece_has_text = false;
    for c in body.chars() {
        if escaped {
            escaped = false;
            piece_has_text = true;
            continue;
        }
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => escaped = true,
            ';' | '\n' | '&' | '|' if !single && !double => {
                if piece_has_text {
                    count += 1;
                }
                piece_has_text = false;
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() {
            piece_has_text = true;
        }
    }
    if piece_has_text {
        count += 1;
    }
    count
}

#[test]
fn the_counter_counts() {
    assert_eq!(count_simple_commands("a && b || c | d;\n    e"), 5);
    assert_eq!(count_simple_commands("echo 'a;b|c' \"x && y\""), 1);
    assert_eq!(count_simple_commands("ls;"), 1);
    assert_eq!(count_simple_commands(""), 0);
    if let Some(bash) = bash() {
        assert_eq!(
            bash_simple_commands(bash, "git status&&ls -la|wc -l ;echo 'a;b' \"c|d\""),
            Ok(4)
        );
    }
}

/// The analyser's view, reduced to what must not change between two calls.
fn summary(a: &Analysis) -> (bool, Vec<String>, Vec<Vec<String>>) {
    (
        a.plain(),
        a.not_plain.clone(),
        a.commands.iter().map(|c| c.words.clone()).collect(),
    )
}

/// For a command the analyser calls plain: bash must agree it parses, with as many
/// simple commands.
fn check_against_bash(command: &str, analysis: &Analysis) -> Result<(), TestCaseError> {
    let Some(bash) = bash() else {
        return Ok(());
    };
    bash_accepts(bash, command)
        .map_err(|e| TestCaseError::fail(format!("{command:?} is called plain, but {e}")))?;
    let n = bash_simple_commands(bash, command).map_err(TestCaseError::fail)?;
    prop_assert_eq!(
        n,
        analysis.commands.len(),
        "{:?}: bash finds {} simple commands, the analyser {}",
        command,
        n,
        analysis.commands.len()
    );
    Ok(())
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn random_strings_never_panic_and_are_deterministic(command in shellish()) {
        let a = analyse(&command);
        let b = analyse(&command);
        prop_assert_eq!(summary(&a), summary(&b), "{:?} analysed twice differs", command);
    }

    #[test]
    fn random_strings_called_plain_are_plain_to_bash(command in prop_oneof![shellish(), mild()]) {
        let analysis = analyse_for(&command, &[Shell::Bash]);
        if analysis.plain() {
            if std::env::var_os("SHELL_FUZZ_TRACE").is_some() {
                eprintln!("plain: {command:?}");
            }
            check_against_bash(&command, &analysis)?;
        }
    }
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn random_strings_called_plain_parse_in_sh_and_zsh(command in prop_oneof![shellish(), mild()]) {
        for (shell, path) in [(Shell::Sh, dash()), (Shell::Zsh, zsh())] {
            let Some(path) = path else { continue };
            if analyse_for(&command, &[shell]).plain() {
                bash_accepts(path, &command).map_err(|e| {
                    TestCaseError::fail(format!("{command:?} is called plain for {shell:?}, but {e}"))
                })?;
            }
        }
    }
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn generated_plain_commands_are_plain(generated in plain_command()) {
        let (command, expected) = generated;
        let analysis = analyse(&command);
        prop_assert!(
            analysis.plain(),
            "{:?} is plain but the analyser says: {:?}",
            command,
            analysis.not_plain
        );
        let words: Vec<Vec<String>> = analysis.commands.iter().map(|c| c.words.clone()).collect();
        prop_assert_eq!(&words, &expected, "{:?}: wrong commands or words", command);
        check_against_bash(&command, &analysis)?;
    }
}

// ── Bounded work ─────────────────────────────────────────────────────────────────────

/// What one analysis may take here. The parse's budget is 100 ms, but tree-sitter cannot
/// interrupt its error recovery when it accepts the end of input: at the token limit
/// that takes up to ~75 ms in a release build, and ~0.5–0.8 s in this debug build (C at
/// -O0) on a busy 2-core machine. The bound is there to catch what took seconds to
/// minutes before (88 s for 64 KiB of `a|`), without being flaky.
const RETURNS_WITHIN: Duration = Duration::from_secs(5);

/// Random nesting: substitutions, subshells, groups, quotes and words in any order,
/// mostly short enough to be parsed, some up to ~20,000 characters.
fn nesting() -> impl Strategy<Value = String> {
    let pieces: Vec<&str> = vec![
        "$(",
        "(",
        "{ ",
        "`",
        "\"",
        "'",
        ")",
        "}",
        ";",
        " ",
        "a",
        "ls -l",
        "x=1",
        "&&",
        "|",
        "$((",
        "${",
        "\"$(",
        "if true; then ",
        "fi",
        "=sh",
        "a=~",
    ];
    prop_oneof![
        3 => prop::collection::vec(prop::sample::select(pieces.clone()), 0..400),
        1 => prop::collection::vec(prop::sample::select(pieces), 0..8000),
    ]
    .prop_map(|p| {
        let mut s = p.concat();
        s.truncate(20_000); // every piece is ASCII
        s
    })
}

/// Random text up to 64 KiB: any bytes made UTF-8, or any characters.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64 * 1024)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        prop::collection::vec(any::<char>(), 0..16 * 1024).prop_map(String::from_iter),
    ]
}

fn shells() -> impl Strategy<Value = Vec<Shell>> {
    prop::sample::subsequence(Shell::ALL.to_vec(), 0..=3)
}

fn over_budget(a: &Analysis) -> bool {
    a.not_plain.iter().any(|r| r.contains("time budget"))
}

fn timed(command: &str, shells: &[Shell]) -> Result<Analysis, TestCaseError> {
    let start = Instant::now();
    let a = analyse_for(command, shells);
    let took = start.elapsed();
    prop_assert!(
        took < RETURNS_WITHIN,
        "{} bytes took {:?} (starts {:?})",
        command.len(),
        took,
        command.chars().take(40).collect::<String>()
    );
    Ok(a)
}

/// Returns in time, twice the same (unless the time budget cut one short: then both
/// are not plain), and plain for the set exactly when plain for each shell in it.
fn bounded_and_deterministic(command: &str, shells: &[Shell]) -> Result<(), TestCaseError> {
    let a = timed(command, shells)?;
    let b = timed(command, shells)?;
    if over_budget(&a) || over_budget(&b) {
        prop_assert!(!a.plain() && !b.plain());
        return Ok(());
    }
    prop_assert_eq!(
        summary(&a),
        summary(&b),
        "{:?} analysed twice differs",
        command
    );
    let all: &[Shell] = if shells.is_empty() {
        &Shell::ALL
    } else {
        shells
    };
    let mut each = true;
    for shell in all {
        let one = timed(command, &[*shell])?;
        if over_budget(&one) {
            return Ok(());
        }
        each &= one.plain();
    }
    prop_assert_eq!(
        a.plain(),
        each,
        "{:?}: plain for {:?} is not plain for each",
        command,
        shells
    );
    Ok(())
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn random_nesting_is_bounded_and_deterministic(command in nesting(), shells in shells()) {
        bounded_and_deterministic(&command, &shells)?;
    }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn random_text_is_bounded_and_deterministic(command in any_text(), shells in shells()) {
        bounded_and_deterministic(&command, &shells)?;
    }
}

/// The worst inputs found, timed (`cargo test --test shell_fuzz worst -- --nocapture`
/// prints the times).
#[test]
fn the_worst_inputs_found_return_in_time() {
    let n = 64 * 1024 - 16;
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = b";&|$`'\"()<>{}[]*?~#\\!=-/.,: \tabcxyz01\n";
    let random: String = (0..n)
        .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
        .collect();
    let inputs = [
        ("64 KiB of random shell-ish bytes", random),
        ("64 KiB of `(`", "(".repeat(n)),
        ("64 KiB of `$(`", "$(".repeat(n / 2)),
        ("64 KiB of `\"`", "\"".repeat(n)),
        ("64 KiB of `{`", "{".repeat(n)),
        ("64 KiB of `a|`", "a|".repeat(n / 2)),
        ("64 KiB of `${`", "${".repeat(n / 2)),
        // Under the token limit, so parsed: the slowest shapes found.
        ("999 tokens of \"`>}\"", "`>}".repeat(333)),
        ("1,000 tokens of `a|`", "a|".repeat(500)),
        (
            "330 nested `$(`",
            format!("echo {}{}", "$(".repeat(330), ")".repeat(330)),
        ),
        (
            "200 nested `\"$(`",
            format!("echo {}x{}", "\"$(".repeat(200), ")\"".repeat(200)),
        ),
    ];
    for (what, command) in inputs {
        let start = Instant::now();
        let a = analyse(&command);
        let took = start.elapsed();
        eprintln!("{what}: {took:?} ({})", a.not_plain.join("; "));
        assert!(!a.plain(), "{what}");
        assert!(took < RETURNS_WITHIN, "{what}: {took:?}");
    }
}
