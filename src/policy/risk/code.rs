//! Which programs run other code: shells, interpreters, wrappers (with their option
//! tables, so the program they run can be found), and programs that execute what their
//! arguments name (`sed`'s `e`, `nc -e`, …).

use super::{base, family};

/// Shells: their `-c` argument is a script of further commands, and without one they
/// read a script from standard input.
pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "pdksh", "yash", "fish", "csh", "tcsh", "ash",
    "rbash",
];

/// Interpreters, with the flags that make them run code given inline.
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("pypy", &["-c"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("bun", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("luajit", &["-e"]),
    ("osascript", &["-e"]),
    ("Rscript", &["-e"]),
    ("R", &["-e"]),
    ("julia", &["-e", "--eval", "-E", "--print"]),
    ("pwsh", &["-c", "-Command", "-command", "-EncodedCommand"]),
    (
        "powershell",
        &["-c", "-Command", "-command", "-EncodedCommand"],
    ),
    ("tclsh", &[]),
    ("wish", &[]),
    ("expect", &["-c"]),
];

/// Interpreters whose first operand is the program text itself, and which execgate has no
/// reader for (`awk` and its kin have one: their profile reads the program).
pub(super) const CODE_FIRST: &[&str] = &["busybox-awk"];

/// Programs that schedule or run commands read from their input or arguments.
pub(super) const RUNS_INPUT: &[&str] = &["at", "batch", "source", "."];

/// How a wrapper's own options look, so the program it runs can be found.
#[derive(Clone, Copy)]
pub(super) struct Wrapper {
    /// Short options that take a value (`-u root`, `-uroot`).
    pub(super) value_short: &'static str,
    /// Long options that take a value when not given with `=`.
    pub(super) value_long: &'static [&'static str],
    /// Short options known to take no value.
    pub(super) known_short: &'static str,
    /// Long options known to take no value.
    pub(super) known_long: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`, `ssh HOST`).
    pub(super) operands: usize,
    /// Options whose value is a shell script (`su -c`, `flock -c`, `script -c`).
    pub(super) script_flags: &'static [&'static str],
    /// `NAME=value` words before the command are skipped (`env`).
    pub(super) assignments: bool,
    /// The options are not fully known: every later word may start the command.
    pub(super) unsure: bool,
    /// What follows is a script joined by spaces (`ssh host cmd`, `watch cmd`, `eval`).
    pub(super) joined: bool,
    /// The inner command reads the wrapper's standard input (not `xargs`).
    pub(super) stdin: bool,
}

/// A wrapper whose options are not known: every later word may start the command.
pub(super) const GENERIC: Wrapper = Wrapper {
    value_short: "",
    value_long: &[],
    known_short: "",
    known_long: &[],
    operands: 0,
    script_flags: &[],
    assignments: false,
    unsure: true,
    joined: false,
    stdin: true,
};

/// Exactly known: options as listed, nothing to guess.
const KNOWN: Wrapper = Wrapper {
    unsure: false,
    ..GENERIC
};

pub(super) fn wrapper(program: &str) -> Option<Wrapper> {
    Some(match program {
        "env" => Wrapper {
            value_short: "uCS",
            value_long: &["--unset", "--chdir", "--split-string"],
            known_short: "i0v",
            known_long: &[
                "--ignore-environment",
                "--null",
                "--debug",
                "--default-signal",
                "--ignore-signal",
                "--block-signal",
                "--list-signal-handling",
            ],
            assignments: true,
            ..KNOWN
        },
        "nice" => Wrapper {
            value_short: "n",
            value_long: &["--adjustment"],
            ..KNOWN
        },
        "nohup" | "builtin" | "busybox" | "toybox" | "unbuffer" => Wrapper {
            known_short: "p",
            ..KNOWN
        },
        "timeout" => Wrapper {
            value_short: "sk",
            value_long: &["--signal", "--kill-after"],
            known_short: "v",
            known_long: &["--preserve-status", "--foreground", "--verbose"],
            operands: 1,
            ..KNOWN
        },
        "stdbuf" => Wrapper {
            value_short: "ioe",
            value_long: &["--input", "--output", "--error"],
            ..KNOWN
        },
        "xargs" => Wrapper {
            value_short: "adEILnPs",
            value_long: &[
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ],
            known_short: "0prtxoeil",
            known_long: &[
                "--null",
                "--interactive",
                "--no-run-if-empty",
                "--verbose",
                "--exit",
                "--open-tty",
                "--show-limits",
                "--replace",
                "--eof",
                "--max-lines",
            ],
            stdin: false,
            ..KNOWN
        },
        "sudo" => Wrapper {
            value_short: "ugCDhpRrtTU",
            value_long: &[
                "--user",
                "--group",
                "--close-from",
                "--chdir",
                "--host",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
            ],
            known_short: "AbEeHiKklnPSsVv",
            known_long: &[
                "--askpass",
                "--background",
                "--bell",
                "--preserve-env",
                "--edit",
                "--set-home",
                "--login",
                "--remove-timestamp",
                "--reset-timestamp",
                "--non-interactive",
                "--preserve-groups",
                "--stdin",
                "--shell",
                "--validate",
                "--list",
            ],
            ..KNOWN
        },
        "doas" => Wrapper {
            value_short: "uC",
            known_short: "nsL",
            ..KNOWN
        },
        "su" | "runuser" => Wrapper {
            value_short: "cgGswu",
            value_long: &[
                "--command",
                "--session-command",
                "--shell",
                "--group",
                "--supp-group",
                "--whitelist-environment",
                "--user",
            ],
            known_short: "lmpfP",
            script_flags: &["-c", "--command", "--session-command"],
            ..GENERIC
        },
        "command" => Wrapper {
            known_short: "pvV",
            ..KNOWN
        },
        "exec" => Wrapper {
            value_short: "a",
            known_short: "cl",
            ..KNOWN
        },
        "time" => Wrapper {
            value_short: "fo",
            value_long: &["--format", "--output"],
            known_short: "apvq",
            known_long: &["--append", "--portability", "--verbose", "--quiet"],
            ..KNOWN
        },
        "setsid" => Wrapper {
            known_short: "cfw",
            known_long: &["--ctty", "--fork", "--wait"],
            ..KNOWN
        },
        "ionice" => Wrapper {
            value_short: "cnpPu",
            value_long: &["--class", "--classdata", "--pid", "--pgid", "--uid"],
            known_short: "t",
            known_long: &["--ignore"],
            ..KNOWN
        },
        "taskset" => Wrapper {
            known_short: "acpV",
            known_long: &["--all-tasks", "--cpu-list", "--pid"],
            operands: 1,
            ..KNOWN
        },
        "chroot" => Wrapper {
            value_long: &["--userspec", "--groups"],
            known_long: &["--skip-chdir"],
            operands: 1,
            ..KNOWN
        },
        "watch" => Wrapper {
            value_short: "nq",
            value_long: &["--interval"],
            known_short: "bcdegtxwpr",
            known_long: &[
                "--beep",
                "--color",
                "--differences",
                "--errexit",
                "--chgexit",
                "--no-title",
                "--exec",
                "--no-wrap",
                "--precise",
            ],
            joined: true,
            ..KNOWN
        },
        "flock" => Wrapper {
            value_short: "Ewc",
            value_long: &["--conflict-exit-code", "--timeout", "--wait", "--command"],
            known_short: "sxunoFv",
            known_long: &[
                "--shared",
                "--exclusive",
                "--unlock",
                "--nonblock",
                "--close",
                "--no-fork",
                "--verbose",
            ],
            operands: 1,
            script_flags: &["-c", "--command"],
            ..KNOWN
        },
        "chrt" => Wrapper {
            value_short: "TPD",
            known_short: "abdefiomprRv",
            operands: 1,
            ..KNOWN
        },
        "ssh" => Wrapper {
            value_short: "BbcDEeFIiJLlmOoPpQRSWw",
            known_short: "46AaCfGgKkMNnqsTtVvXxYy",
            operands: 1,
            joined: true,
            ..KNOWN
        },
        "eval" => Wrapper {
            joined: true,
            ..KNOWN
        },
        "script" => Wrapper {
            value_short: "cEIOTBm",
            script_flags: &["-c", "--command"],
            ..GENERIC
        },
        "flatpak-spawn" | "systemd-run" | "run0" | "pkexec" | "unshare" | "nsenter"
        | "firejail" | "bwrap" | "fakeroot" | "sg" | "newgrp" | "strace" | "ltrace" | "gdb"
        | "valgrind" | "parallel" | "sem" | "prlimit" | "numactl" | "cgexec" | "proxychains"
        | "proxychains4" | "torsocks" | "tsocks" | "faketime" | "rlwrap" | "catchsegv"
        | "xvfb-run" | "dbus-launch" | "dbus-run-session" | "caffeinate" | "entr" | "hyperfine"
        | "doas-keepenv" | "setpriv" | "capsh" | "chpst" | "softlimit" | "daemonize"
        | "start-stop-daemon" | "tini" | "dumb-init" | "perf" | "ltrace64" | "aws-vault" | "op"
        | "with-contenv" => GENERIC,
        _ => return None,
    })
}

/// What a shell is given to run.
pub(super) enum ShellInput {
    /// `-c SCRIPT`.
    Script(String),
    /// A script on standard input (no operand, `-s`, `-`, `/dev/stdin`).
    Stdin,
    /// A script read from a process substitution (`bash <(curl …)`).
    Substitution,
    /// A script file.
    File,
}

fn reads_stdin_path(word: &str) -> bool {
    matches!(
        word,
        "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/dev/tty"
    )
}

pub(super) fn shell_input(words: &[String]) -> ShellInput {
    let mut script_flag = false;
    let mut stdin_flag = false;
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if w == "--" || w == "-" {
            if w == "-" {
                stdin_flag = true;
            }
            i += 1;
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            match long.split_once('=') {
                Some(("command", script)) => return ShellInput::Script(script.to_string()),
                _ if long == "command" => script_flag = true,
                _ if long == "rcfile" || long == "init-file" => i += 1,
                _ => {}
            }
            i += 1;
            continue;
        }
        if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 {
            let flags = &w[1..];
            if w.starts_with('-') && flags.contains('c') {
                script_flag = true;
            }
            if flags.contains('s') {
                stdin_flag = true;
            }
            if flags.contains(['o', 'O']) {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    if script_flag {
        return ShellInput::Script(words.get(i).cloned().unwrap_or_default());
    }
    match words.get(i) {
        _ if stdin_flag => ShellInput::Stdin,
        None => ShellInput::Stdin,
        Some(w) if reads_stdin_path(w) => ShellInput::Stdin,
        Some(w) if w.starts_with("<(") => ShellInput::Substitution,
        Some(_) => ShellInput::File,
    }
}

pub(super) fn interpreter(program: &str) -> Option<&'static [&'static str]> {
    let family = family(program);
    INTERPRETERS
        .iter()
        .find(|(name, _)| program == *name || family == *name)
        .map(|(_, flags)| *flags)
}

/// True when one of `flags` is given: exactly, as `--flag=value`, or attached or in a
/// cluster of short flags (`perl -ne`, `python -Sc`).
pub(super) fn has_inline_flag(args: &[String], flags: &[&str]) -> bool {
    args.iter().any(|a| {
        flags.iter().any(|f| {
            if a == f || a.starts_with(&format!("{f}=")) {
                return true;
            }
            match f.strip_prefix('-') {
                Some(letter) if letter.len() == 1 && !f.starts_with("--") => {
                    a.starts_with('-') && !a.starts_with("--") && a[1..].contains(letter)
                }
                _ => false,
            }
        })
    })
}

/// Where an interpreter reads its program from, when it is not given inline.
pub(super) fn interpreter_input(words: &[String]) -> ShellInput {
    let Some(flags) = interpreter(base(&words[0])) else {
        return ShellInput::File;
    };
    if flags.is_empty() && words.len() > 1 && !words[1].starts_with('-') {
        return ShellInput::File;
    }
    if has_inline_flag(&words[1..], flags) {
        return ShellInput::Script(String::new());
    }
    let mut i = 1;
    while let Some(w) = words.get(i) {
        match w.as_str() {
            "-" => return ShellInput::Stdin,
            // A module or a file named by an option: not standard input.
            "-m" | "-f" | "--require" | "-r" => return ShellInput::File,
            "-W" | "-X" | "-Q" | "-I" | "-d" => i += 2,
            w if w.starts_with('-') && w.len() > 1 => i += 1,
            _ => break,
        }
    }
    match words.get(i) {
        None => ShellInput::Stdin,
        Some(w) if reads_stdin_path(w) => ShellInput::Stdin,
        Some(w) if w.starts_with("<(") => ShellInput::Substitution,
        Some(_) => ShellInput::File,
    }
}

/// What a program (shell or interpreter) would run from its standard input or from a
/// process substitution, if it runs code from there at all.
pub(super) fn code_source(words: &[String]) -> Option<ShellInput> {
    let program = base(&words[0]);
    let input = if SHELLS.contains(&program) {
        shell_input(words)
    } else if interpreter(program).is_some() {
        interpreter_input(words)
    } else if program == "source" || program == "." {
        match words.get(1) {
            Some(w) if reads_stdin_path(w) => ShellInput::Stdin,
            Some(w) if w.starts_with("<(") => ShellInput::Substitution,
            _ => ShellInput::File,
        }
    } else {
        return None;
    };
    match input {
        ShellInput::Stdin | ShellInput::Substitution => Some(input),
        _ => None,
    }
}

/// True when the program (by name) is a wrapper, shell or interpreter, whatever its args.
pub fn is_wrapper_or_interpreter(program: &str) -> bool {
    let program = base(program);
    SHELLS.contains(&program)
        || wrapper(program).is_some()
        || interpreter(program).is_some()
        || CODE_FIRST.contains(&program)
        || RUNS_INPUT.contains(&program)
}

/// Whether a command that runs another leaves it where it stands, with the environment
/// it was given: a shell reading a script execgate reads in turn (`-c`, a heredoc), or a
/// wrapper none of whose options changes either (`timeout`, `nice`, `nohup`, `stdbuf`).
/// `env`, `sudo`, `xargs` and the rest can move the inner command or change what it is
/// given (`env -C`, `env GIT_DIR=…`, arguments from standard input).
pub fn keeps_place(words: &[String]) -> bool {
    let Some(program) = words.first().map(|p| base(p)) else {
        return false;
    };
    (SHELLS.contains(&program)
        && matches!(
            shell_input(words),
            ShellInput::Script(_) | ShellInput::Stdin
        ))
        || matches!(program, "timeout" | "nice" | "nohup" | "stdbuf")
}

pub(super) fn network_exec(program: &str, args: &[String]) -> bool {
    if program == "socat" {
        return args.iter().any(|a| {
            let upper = a.to_ascii_uppercase();
            upper.contains("EXEC:") || upper.contains("SYSTEM:")
        });
    }
    args.iter().any(|a| {
        a == "--exec"
            || a == "--sh-exec"
            || a == "--lua-exec"
            || a.starts_with("--exec=")
            || a.starts_with("--sh-exec=")
            || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains(['e', 'c']))
    })
}
