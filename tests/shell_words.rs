//! The analyser against the real shells: for a command it calls plain for a shell (sh is
//! dash; each skipped where not installed), that shell must hand the program exactly the
//! words the analyser found.
//!
//! Unlike shell_fuzz.rs, this runs the shells on what it checks, so every command is
//! built so that nothing but the `printf` builtin can run: one simple command,
//! `printf '<%s>\n' x ARGS`, where ARGS come from an alphabet without `;`, `&`, `|`, `$`,
//! backtick, parentheses, `<`, `>`, backslash or newline: no second command, no
//! substitution, no parameter, no redirection. What is left (`=`, `~`, `:`, globs,
//! braces, quotes, `#`, `!`, `^`, `%`) is what shells read differently, which is the
//! point. The environment is empty but for HOME (a temp dir, so that a tilde expansion
//! shows), PATH finds nothing, and the working directory is an empty temp dir.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use execgate::model::Shell;
use execgate::policy::parse::analyse_for;
use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;

fn installed(shell: Shell) -> Option<&'static PathBuf> {
    static FOUND: OnceLock<Vec<(Shell, Option<PathBuf>)>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        Shell::ALL
            .iter()
            .map(|&shell| {
                let program = match shell {
                    Shell::Sh => "dash",
                    other => other.as_str(),
                };
                let path = std::env::var_os("PATH").and_then(|path| {
                    std::env::split_paths(&path)
                        .map(|dir| dir.join(program))
                        .find(|p| p.is_file())
                });
                if path.is_none() {
                    // On a developer's machine a missing shell is skipped (and said);
                    // in CI it must be there: `.ci/run` installs it.
                    assert!(
                        !in_ci(),
                        "{program} is not installed, and CI must check every shell: install it (`apt-get install -y {program}`; .ci/run does)"
                    );
                    eprintln!("note: {program} is not installed; skipping it");
                }
                (shell, path)
            })
            .collect()
    });
    found
        .iter()
        .find(|(s, _)| *s == shell)
        .and_then(|(_, p)| p.as_ref())
}

fn dirs() -> &'static (tempfile::TempDir, tempfile::TempDir) {
    static DIRS: OnceLock<(tempfile::TempDir, tempfile::TempDir)> = OnceLock::new();
    DIRS.get_or_init(|| (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()))
}

/// The arguments `shell` hands `printf` for `command`, or why it failed.
fn run(shell: &Path, command: &str) -> Result<Vec<String>, String> {
    let (home, cwd) = dirs();
    let mut cmd = Command::new(shell);
    cmd.env_clear()
        .env("HOME", home.path())
        .env("PATH", "/nonexistent-execgate-words")
        .current_dir(cwd.path());
    if shell.ends_with("zsh") {
        cmd.arg("-f");
    }
    let out = cmd
        .arg("-c")
        .arg(command)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .map(|l| {
            l.strip_prefix('<')
                .and_then(|l| l.strip_suffix('>'))
                .unwrap_or(l)
                .to_string()
        })
        .collect())
}

/// For each installed shell the command is plain for: the shell's words are the
/// analyser's. Returns the shells it was plain for.
fn check(args: &str) -> Result<Vec<Shell>, String> {
    let command = format!("printf '<%s>\\n' x {args}");
    let mut plain_for = Vec::new();
    for shell in Shell::ALL {
        let Some(path) = installed(shell) else {
            continue;
        };
        let a = analyse_for(&command, &[shell]);
        if !a.plain() {
            continue;
        }
        plain_for.push(shell);
        let expected = &a.commands[0].words[2..];
        let got = run(path, &command)
            .map_err(|e| format!("{command:?} is plain for {shell:?}, but it fails: {e}"))?;
        if got != expected {
            return Err(format!(
                "{command:?} is plain for {shell:?}: the analyser says {expected:?}, {} says {got:?}",
                shell.as_str()
            ));
        }
    }
    Ok(plain_for)
}

#[test]
fn the_shells_pass_the_words_the_analyser_found() {
    use Shell::{Bash, Sh, Zsh};
    // Arguments, and the shells they are plain for.
    for (args, plain_for) in [
        ("a 'b c' \"d e\" f'g'\"h\"", &[Sh, Bash, Zsh][..]),
        ("=sh '=sh' \"=sh\"", &[Sh, Bash]),
        ("= a=b x==y", &[Sh, Bash, Zsh]),
        ("a=~/x", &[Sh, Zsh]),
        ("_=~ a+=~ PATH=/bin:~/bin", &[Sh, Zsh]),
        ("--prefix=~/x", &[Sh, Zsh]),
        ("host:~/x a='~' a=\"~\" a=b~ a~b", &[Sh, Bash, Zsh]),
        ("a^b ^a a#b %1 a!b x@y a,b a]b", &[Sh, Bash, Zsh]),
        ("~ ~/x", &[]),
        ("* a? [ab]", &[]),
        ("{a,b} {}", &[]),
        // A backslash inside double quotes (issue 33): `grep "a\|b"`.
        (
            "\"a\\|b\" \"\\w\\+\" \"x\\\\y\" \"q\\\"r\" \"\\'\" \"\\\\\"",
            &[Sh, Bash, Zsh],
        ),
        ("a\\|b", &[]),
    ] {
        let installed_plain: Vec<Shell> = plain_for
            .iter()
            .copied()
            .filter(|s| installed(*s).is_some())
            .collect();
        match check(args) {
            Ok(found) => assert_eq!(found, installed_plain, "{args:?}"),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn where_the_analyser_says_a_shell_differs_it_does() {
    // What makes a command not plain for one shell only is seen in that shell.
    let (home, _) = dirs();
    let home = home.path().display().to_string();
    for (shell, args, expanded) in [
        (Shell::Zsh, "=printf", None),
        (Shell::Bash, "a=~/x", Some(format!("a={home}/x"))),
        (
            Shell::Bash,
            "PATH=/bin:~/bin",
            Some(format!("PATH=/bin:{home}/bin")),
        ),
    ] {
        let Some(path) = installed(shell) else {
            continue;
        };
        let command = format!("printf '<%s>\\n' x {args}");
        assert!(!analyse_for(&command, &[shell]).plain(), "{command:?}");
        let got = run(path, &command);
        match expanded {
            // `=printf` names no program on an empty PATH: zsh fails the command.
            None => assert!(got.is_err(), "{command:?}: {got:?}"),
            Some(word) => assert_eq!(got, Ok(vec!["x".to_string(), word]), "{command:?}"),
        }
    }
}

/// Arguments from the alphabet the module docs allow: nothing in it can start another
/// command or substitute anything.
fn args() -> impl Strategy<Value = String> {
    let chars: Vec<char> = "abxyz019 =~:^#%!-/.,*?[]{}@+'\"   ".chars().collect();
    prop::collection::vec(prop::sample::select(chars), 0..24)
        .prop_map(|cs| cs.into_iter().collect())
}

/// One double-quoted argument with backslashes among ordinary characters (`\"` and `\\`
/// included), and nothing a shell could expand.
fn quoted_backslashes() -> impl Strategy<Value = String> {
    let parts: Vec<&str> = vec![
        "a", "b", "|", " ", "'", "\\|", "\\+", "\\.", "\\w", "\\'", "\\\\", "\\\"",
    ];
    prop::collection::vec(prop::sample::select(parts), 0..12)
        .prop_map(|ps| format!("\"{}\"", ps.concat()))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_arguments_called_plain_reach_printf_as_found(args in args()) {
        prop_assert!(
            !args.contains([';', '&', '|', '$', '`', '(', ')', '<', '>', '\\', '\n']),
            "the alphabet runs nothing but printf"
        );
        check(&args).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn backslashes_in_double_quotes_reach_printf_as_found(arg in quoted_backslashes()) {
        let plain_for = check(&arg).map_err(TestCaseError::fail)?;
        let installed = Shell::ALL.iter().filter(|s| installed(**s).is_some()).count();
        prop_assert_eq!(plain_for.len(), installed, "{} is plain in every shell", arg);
    }
}

/// Whether this is a CI run (`CI=true`, as `.ci/run` runs).
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}
