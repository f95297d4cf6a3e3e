//! Looking through: every command a command could run, found through wrappers (and the
//! runners that start what their words name, `runners`), `sh -c` scripts, heredocs fed
//! to a shell and programs that run their arguments, recursively and depth-limited.

use super::code::{
    CODE_FIRST, GENERIC, RUNS_INPUT, SHELLS, ShellInput, Wrapper, code_source, has_inline_flag,
    interpreter, interpreter_input, network_exec, shell_input, wrapper,
};
use super::runners::{Runner, runner};
use super::{MAX_DEPTH, MAX_FOUND, base};
use crate::policy::parse::{self, Analysis, SimpleCommand};
use crate::policy::programs::{self, Runs};
use crate::policy::shell::is_assignment;

/// Something a command runs: more words, or a script to parse.
pub(super) enum Inner {
    /// An inner command; `stdin`: it reads the outer command's standard input.
    Words(Vec<String>, bool),
    Script(String),
}

/// One command found while looking through, with what its standard input is.
#[derive(Clone, Debug)]
pub(super) struct Seen {
    pub(super) words: Vec<String>,
    pub(super) piped: bool,
    pub(super) heredoc: Option<String>,
    /// A downloader (`curl`, `wget`) runs in the same command line.
    pub(super) download: bool,
}

/// Every command a command could run: its own words first, then, looking through
/// wrappers and `sh -c` scripts, the commands inside, recursively. Where a wrapper's
/// options are not fully known every later word is tried as the start of the inner
/// command (`sudo --weird x rm …`): over-reading here only makes the deny list and risk
/// stricter.
pub fn looked_through(words: &[String]) -> Vec<Vec<String>> {
    collect(Seen {
        words: words.to_vec(),
        piped: false,
        heredoc: None,
        download: false,
    })
}

/// [`looked_through`] for one command of an analysis: a heredoc it feeds a shell is read
/// as that shell's script.
pub fn looked_through_command(command: &SimpleCommand) -> Vec<Vec<String>> {
    collect(Seen {
        words: command.words.clone(),
        piped: command.piped,
        heredoc: command.heredoc.clone(),
        download: false,
    })
}

fn collect(seen: Seen) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    walk(seen, 0, &mut out);
    let mut words: Vec<Vec<String>> = Vec::with_capacity(out.len());
    for seen in out {
        if !words.contains(&seen.words) {
            words.push(seen.words);
        }
    }
    words
}

fn is_downloader(words: &[String]) -> bool {
    words.iter().any(|w| {
        matches!(
            base(w),
            "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "xh" | "lwp-download"
        )
    })
}

/// The commands of an analysis as starting points for `walk`.
pub(super) fn seen_of(analysis: &Analysis) -> Vec<Seen> {
    let download = analysis.commands.iter().any(|c| is_downloader(&c.words));
    analysis
        .commands
        .iter()
        .map(|c| Seen {
            words: c.words.clone(),
            piped: c.piped,
            heredoc: c.heredoc.clone(),
            download,
        })
        .collect()
}

/// Collects `seen` and, looking through, every command it runs: up to `MAX_DEPTH`
/// deep and `MAX_FOUND` in all.
pub(super) fn walk(seen: Seen, depth: usize, out: &mut Vec<Seen>) {
    if seen.words.is_empty() || out.len() >= MAX_FOUND {
        return;
    }
    out.push(seen.clone());
    if depth >= MAX_DEPTH {
        return;
    }
    let mut inner = inner_commands(&seen.words);
    // A heredoc or here-string fed to a shell is its script.
    if let Some(body) = &seen.heredoc
        && matches!(code_source(&seen.words), Some(ShellInput::Stdin))
        && SHELLS.contains(&base(&seen.words[0]))
    {
        inner.push(Inner::Script(body.clone()));
    }
    for item in inner {
        match item {
            Inner::Words(words, stdin) => walk(
                Seen {
                    words,
                    piped: stdin && seen.piped,
                    heredoc: if stdin { seen.heredoc.clone() } else { None },
                    download: seen.download,
                },
                depth + 1,
                out,
            ),
            Inner::Script(script) => {
                if script.trim().is_empty() {
                    continue;
                }
                for s in seen_of(&parse::analyse(&script)) {
                    walk(s, depth + 1, out);
                }
            }
        }
    }
}

/// The commands a command runs directly: a wrapper's inner command, a shell's `-c`
/// script, `find -exec`, `git -c core.pager=…`, …
pub(super) fn inner_commands(words: &[String]) -> Vec<Inner> {
    let program = base(&words[0]);
    if SHELLS.contains(&program) {
        return match shell_input(words) {
            ShellInput::Script(s) => {
                // `sh -c 'SCRIPT' ARG0 ARG…`: a script that expands `$0`, `$1`, `$@` or
                // `$*` runs what the words after it say (`sh -c '$0 "$@"' rm -rf /`).
                let mut found = Vec::new();
                let after = words
                    .iter()
                    .skip(1)
                    .position(|w| *w == s)
                    .map(|i| &words[i + 2..])
                    .unwrap_or_default();
                let expands_args = ["$0", "$1", "$@", "$*", "${0", "${1", "${@", "${*"]
                    .iter()
                    .any(|v| s.contains(v));
                if expands_args && !after.is_empty() {
                    // From `$0`, or from `$1` when only `$@` is used: both are read
                    // (over-reading only makes risk stricter).
                    found.push(Inner::Words(after.to_vec(), true));
                    if after.len() > 1 {
                        found.push(Inner::Words(after[1..].to_vec(), true));
                    }
                }
                found.push(Inner::Script(s));
                found
            }
            _ => Vec::new(),
        };
    }
    if let Some(spec) = wrapper(program) {
        return inner_of_wrapper(words, &spec);
    }
    if runner(program) == Some(Runner::Starts) {
        return inner_of_runner(words);
    }
    inner_of_program(words)
}

/// A runner that starts what its words name (`screen -dm CMD`, `tmux new 'LINE'`,
/// `setarch ARCH CMD`): its options are not known, so, as for a wrapper whose options
/// are not, every later word may start the command, and a word with blanks may be a
/// command line it hands to a shell (tmux and screen do).
fn inner_of_runner(words: &[String]) -> Vec<Inner> {
    let mut found: Vec<Inner> = words[1..]
        .iter()
        .filter(|w| w.contains(char::is_whitespace))
        .map(|w| Inner::Script(w.clone()))
        .collect();
    found.extend(inner_of_wrapper(words, &GENERIC));
    found
}

/// Matches a long option against a list, allowing unambiguous abbreviations
/// (`--sig` for `--signal`), as getopt_long does.
fn long_in(name: &str, list: &[&str]) -> bool {
    let name = name.split('=').next().unwrap_or(name);
    name.len() > 2 && list.iter().any(|l| l.starts_with(name))
}

fn inner_of_wrapper(words: &[String], spec: &Wrapper) -> Vec<Inner> {
    let mut found = Vec::new();
    let mut unsure = spec.unsure;
    let mut operands = 0;
    let mut options = true;
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if options && w == "--" {
            options = false;
            i += 1;
            continue;
        }
        if spec.assignments && is_assignment(w) {
            i += 1;
            continue;
        }
        if options && w.starts_with("--") {
            let (name, value) = match w.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (w.as_str(), None),
            };
            let is_script = spec.script_flags.contains(&name);
            let takes_value = long_in(name, spec.value_long) || is_script;
            let value = match value {
                Some(v) => Some(v.to_string()),
                None if takes_value => {
                    i += 1;
                    words.get(i).cloned()
                }
                None => None,
            };
            if name == "--split-string" {
                found.push(Inner::Script(value.clone().unwrap_or_default()));
            }
            if is_script {
                found.push(Inner::Script(value.unwrap_or_default()));
            } else if !takes_value && !long_in(name, spec.known_long) {
                unsure = true;
            }
            i += 1;
            continue;
        }
        if options && w.starts_with('-') && w.len() > 1 {
            let cluster = &w[1..];
            for (j, c) in cluster.char_indices() {
                if c.is_ascii_digit() && spec.value_short.contains('n') {
                    break; // `nice -5`
                }
                if spec.value_short.contains(c) {
                    let rest = &cluster[j + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        i += 1;
                        words.get(i).cloned().unwrap_or_default()
                    } else {
                        rest.to_string()
                    };
                    let flag = format!("-{c}");
                    if spec.script_flags.contains(&flag.as_str())
                        || (c == 'S' && base(&words[0]) == "env")
                    {
                        found.push(Inner::Script(value));
                    } else if c == 'o' && base(&words[0]) == "ssh" {
                        found.extend(ssh_option_command(&value));
                    }
                    break;
                }
                if !spec.known_short.contains(c) {
                    unsure = true;
                }
            }
            i += 1;
            continue;
        }
        if operands < spec.operands {
            operands += 1;
            i += 1;
            continue;
        }
        break;
    }
    let start = i;
    let rest = &words[start.min(words.len())..];
    if !rest.is_empty() {
        if spec.joined {
            found.push(Inner::Script(rest.join(" ")));
        }
        let program = base(&words[0]);
        if program == "su" || program == "runuser" {
            // What follows the user is handed to the user's shell.
            let mut shell = vec!["sh".to_string()];
            shell.extend(rest.iter().cloned());
            found.push(Inner::Words(shell, spec.stdin));
        }
        found.push(Inner::Words(rest.to_vec(), spec.stdin));
    }
    if unsure {
        for j in 1..words.len() {
            let w = &words[j];
            if j == start || w.starts_with('-') || is_assignment(w) {
                continue;
            }
            found.push(Inner::Words(words[j..].to_vec(), spec.stdin));
        }
    }
    found
}

/// `ssh -o ProxyCommand=…` and `-o LocalCommand=…` run local shell commands.
fn ssh_option_command(option: &str) -> Option<Inner> {
    let (key, value) = option.split_once(['=', ' '])?;
    let key = key.to_ascii_lowercase();
    (key == "proxycommand" || key == "localcommand" || key == "knownhostscommand")
        .then(|| Inner::Script(value.trim().to_string()))
}

/// The value of an option given as `--opt=value`, `--opt value`, `-o value` or `-ovalue`.
pub(super) fn option_values(args: &[String], long: &[&str], short: &[&str]) -> Vec<String> {
    let mut values = Vec::new();
    for (i, a) in args.iter().enumerate() {
        for l in long {
            if a == l {
                values.extend(args.get(i + 1).cloned());
            } else if let Some(v) = a.strip_prefix(l).and_then(|r| r.strip_prefix('=')) {
                values.push(v.to_string());
            }
        }
        for s in short {
            if a == s {
                values.extend(args.get(i + 1).cloned());
            } else if let Some(v) = a.strip_prefix(s).filter(|v| !v.is_empty())
                && !a.starts_with("--")
            {
                values.push(v.to_string());
            }
        }
    }
    values
}

/// True for shells, wrappers, interpreters given inline code (or whose first argument
/// is code, like awk), and programs that start other programs as their words say
/// (`find -exec`, `git -c core.pager=…`, `tar --to-command`, `sed 's/x/y/e'`, …).
pub fn runs_other_code(words: &[String]) -> bool {
    let Some(program) = words.first().map(|p| base(p)) else {
        return false;
    };
    let args = &words[1..];
    if SHELLS.contains(&program)
        || wrapper(program).is_some()
        || CODE_FIRST.contains(&program)
        || RUNS_INPUT.contains(&program)
    {
        return true;
    }
    if let Some(flags) = interpreter(program) {
        return flags.is_empty()
            || has_inline_flag(args, flags)
            || matches!(interpreter_input(words), ShellInput::Stdin);
    }
    // What a profile finds it starts, named or not (an editor, awk's `system`).
    if programs::is_profiled(&words[0]) {
        return !programs::understand(words, false).runs.is_empty();
    }
    if !inner_of_program(words).is_empty() {
        return true;
    }
    match program {
        "vim" | "vi" | "nvim" | "view" | "ex" | "gvim" | "vimdiff" => args
            .iter()
            .any(|a| a == "-c" || a == "--cmd" || a == "-S" || (a.starts_with('+') && a.len() > 1)),
        "emacs" => args.iter().any(|a| a.starts_with("--eval") || a == "-l"),
        "zip" => args
            .iter()
            .any(|a| a == "-TT" || a.starts_with("--unzip-command")),
        "nc" | "ncat" | "netcat" | "socat" => network_exec(program, args),
        _ => false,
    }
}

/// Commands that programs which are not wrappers run from their arguments: for a program
/// execgate has a profile of, what the profile names (`find -exec`, `git -c
/// alias.x=!…`, `tar --to-command`, sed's `e`); for a few others, what their options
/// name.
pub(super) fn inner_of_program(words: &[String]) -> Vec<Inner> {
    let program = base(&words[0]);
    let args = &words[1..];
    let scripts = |values: Vec<String>| values.into_iter().map(Inner::Script).collect();
    if programs::is_profiled(&words[0]) {
        return programs::understand(words, false)
            .runs
            .into_iter()
            .filter_map(|r| match r {
                Runs::Words(w) => Some(Inner::Words(w, false)),
                Runs::Script(s) => Some(Inner::Script(s)),
                Runs::Unnamed => None,
            })
            .collect();
    }
    match program {
        "rsync" => scripts(option_values(args, &["--rsh", "--rsync-path"], &["-e"])),
        "scp" | "sftp" => scripts(option_values(args, &[], &["-S"]))
            .into_iter()
            .chain(
                option_values(args, &[], &["-o"])
                    .iter()
                    .filter_map(|o| ssh_option_command(o)),
            )
            .collect(),
        "sort" => scripts(option_values(args, &["--compress-program"], &[])),
        "rg" => scripts(option_values(args, &["--pre"], &[])),
        "man" => scripts(option_values(args, &["--pager", "--html"], &["-P", "-H"])),
        "less" | "more" => scripts(option_values(args, &[], &["+!"])),
        "nc" | "ncat" | "netcat" => scripts(option_values(
            args,
            &["--exec", "--sh-exec", "--lua-exec"],
            &["-e", "-c"],
        )),
        "socat" => args
            .iter()
            .filter_map(|a| {
                let upper = a.to_ascii_uppercase();
                ["EXEC:", "SYSTEM:"].iter().find_map(|p| {
                    upper.find(p).map(|at| {
                        Inner::Script(
                            a[at + p.len()..]
                                .split(',')
                                .next()
                                .unwrap_or("")
                                .to_string(),
                        )
                    })
                })
            })
            .collect(),
        _ => Vec::new(),
    }
}
