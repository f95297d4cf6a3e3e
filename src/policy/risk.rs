//! Risk: which commands are known read-only (`safe`), which are known destructive
//! (`dangerous`), and which programs run other programs (wrappers, shells, interpreters),
//! so "always" can refuse them.

use std::path::PathBuf;

use super::shell;
use crate::model::Risk;

/// Programs that run another program or arbitrary code named in their arguments. An
/// "always" rule for one of them would approve anything.
const WRAPPERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "env", "xargs",
    "sudo", "doas", "su", "nice", "nohup", "timeout", "stdbuf", "command", "builtin", "exec",
    "eval", "time", "watch", "setsid", "chroot", "unshare", "nsenter", "ionice", "taskset",
    "script", "ssh", "parallel", "strace", "ltrace", "gdb",
];

/// Interpreters, with the flags that make them run code given inline.
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python2", &["-c"]),
    ("python3", &["-c"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("awk", &[]),
    ("gawk", &[]),
    ("tclsh", &[]),
    ("osascript", &["-e"]),
];

/// Read-only programs that are safe with flags only (no path or other operands).
const SAFE_BINS: &[&str] = &[
    "ls", "pwd", "whoami", "date", "id", "uname", "hostname", "uptime", "true", "false", "groups",
    "nproc", "free", "df", "tty", "locale", "arch",
];

/// Read-only git subcommands, and flags that would make them write or run programs.
const SAFE_GIT: &[&str] = &["status", "log", "diff", "show"];
const GIT_FORBIDDEN_FLAGS: &[&str] = &["--output", "--ext-diff", "--textconv", "-o"];

fn base(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// True for shells, wrappers, and interpreters given inline code (or any interpreter
/// whose first argument is code, like awk).
pub fn runs_other_code(words: &[String]) -> bool {
    let Some(program) = words.first().map(|p| base(p)) else {
        return false;
    };
    if WRAPPERS.contains(&program) {
        return true;
    }
    let family = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.iter().any(|(name, flags)| {
        (program == *name || family == *name)
            && (flags.is_empty()
                || words[1..].iter().any(|w| {
                    flags
                        .iter()
                        .any(|f| w == f || w.starts_with(&format!("{f}=")))
                }))
    })
}

/// True when the program (by name) is a wrapper, shell or interpreter, whatever its args.
pub fn is_wrapper_or_interpreter(program: &str) -> bool {
    let program = base(program);
    let family = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    WRAPPERS.contains(&program)
        || INTERPRETERS
            .iter()
            .any(|(name, _)| program == *name || family == *name)
}

/// Shells: their `-c` argument is a script of further commands.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox",
];

/// How deep wrappers are looked through (`sudo env nice sh -c '…'`).
const MAX_DEPTH: usize = 4;

/// Every command a segment could run: its own words first, then, looking through
/// wrappers and `sh -c` scripts, the commands inside. For a wrapper every later word is
/// tried as the start of the inner command, since options may take values (`sudo -u root
/// rm …`): over-reading here only makes the deny list and risk stricter.
pub fn looked_through(segment: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    unwrap(shell::command_words(segment), 0, &mut out);
    out
}

fn unwrap(words: Vec<String>, depth: usize, out: &mut Vec<Vec<String>>) {
    let Some(program) = words.first().map(|p| base(p).to_string()) else {
        return;
    };
    out.push(words.clone());
    if depth >= MAX_DEPTH {
        return;
    }
    if SHELLS.contains(&program.as_str()) {
        let script_flag = words[1..]
            .iter()
            .position(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'));
        if let Some(script) = script_flag.and_then(|i| words.get(i + 2)) {
            for segment in shell::segments(script) {
                unwrap(shell::command_words(&segment), depth + 1, out);
            }
        }
    } else if WRAPPERS.contains(&program.as_str()) {
        for start in 1..words.len() {
            let inner = &words[start..];
            if inner[0].starts_with('-') || shell::is_assignment(&inner[0]) {
                continue;
            }
            unwrap(inner.to_vec(), depth + 1, out);
        }
    }
}

/// Paths that belong to execgate itself: commands that touch them are dangerous.
#[derive(Clone, Debug, Default)]
pub struct OwnFiles {
    pub paths: Vec<PathBuf>,
}

/// Classifies a command from its segments. `plain` is the result of the plainness test.
pub fn assess(
    command: &str,
    segments: &[String],
    plain: bool,
    own: &OwnFiles,
) -> (Risk, Vec<String>) {
    let mut reasons = Vec::new();
    for seg in segments {
        for words in looked_through(seg) {
            dangerous_segment(&words, &mut reasons);
        }
    }
    // Download piped into a shell: a later segment runs a shell after a fetch.
    let programs: Vec<String> = segments
        .iter()
        .filter_map(|s| shell::program(s))
        .map(|p| base(&p).to_string())
        .collect();
    if let Some(fetch) = programs.iter().position(|p| p == "curl" || p == "wget")
        && programs[fetch + 1..]
            .iter()
            .any(|p| is_wrapper_or_interpreter(p))
    {
        reasons.push("downloads a script and runs it (`curl … | sh`)".into());
    }
    let lower = command.to_lowercase();
    if lower.contains(":(){") || lower.contains(":() {") {
        reasons.push("fork bomb".into());
    }
    if lower.contains(">/dev/sd")
        || lower.contains("> /dev/sd")
        || lower.contains(">/dev/nvme")
        || lower.contains("> /dev/nvme")
    {
        reasons.push("writes to a block device".into());
    }
    for path in &own.paths {
        let p = path.to_string_lossy();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !p.is_empty()
            && (command.contains(p.as_ref()) || (!name.is_empty() && command.contains(&name)))
        {
            reasons.push(format!("touches execgate's own file {p}"));
        }
    }
    if !reasons.is_empty() {
        reasons.dedup();
        return (Risk::Dangerous, reasons);
    }
    if plain
        && !segments.is_empty()
        && segments
            .iter()
            .all(|s| is_safe_segment(&shell::command_words(s)))
    {
        return (
            Risk::Safe,
            vec!["read-only command without path arguments".into()],
        );
    }
    let mut why = Vec::new();
    if !plain {
        why.push("not a plain command: a human must look at it".into());
    } else {
        why.push("not a known read-only command".into());
    }
    (Risk::NeedsReview, why)
}

fn is_safe_segment(words: &[String]) -> bool {
    let Some(program) = words.first() else {
        return false;
    };
    let flags_only = |args: &[String]| args.iter().all(|a| a.starts_with('-') && !a.contains('/'));
    if program == "git" {
        return words
            .get(1)
            .is_some_and(|sub| SAFE_GIT.contains(&sub.as_str()))
            && flags_only(&words[2..])
            && !words[2..].iter().any(|a| {
                GIT_FORBIDDEN_FLAGS
                    .iter()
                    .any(|f| a == f || a.starts_with(&format!("{f}=")))
            });
    }
    SAFE_BINS.contains(&program.as_str()) && flags_only(&words[1..])
}

fn dangerous_segment(words: &[String], reasons: &mut Vec<String>) {
    let Some(program) = words.first().map(|p| base(p)) else {
        return;
    };
    let args = &words[1..];
    let has = |f: &str| args.iter().any(|a| a == f);
    // Combined short flags: `-rf`, `-fr`, `-Rf`.
    let short_flag = |c: char| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
    };
    match program {
        "rm" if short_flag('r') || short_flag('R') || has("--recursive") => {
            reasons.push("recursive delete (`rm -r`)".into())
        }
        "rm" if short_flag('f') || has("--force") => reasons.push("forced delete (`rm -f`)".into()),
        "sudo" | "doas" | "su" | "pkexec" => {
            reasons.push(format!("runs as another user (`{program}`)"))
        }
        p if p.starts_with("mkfs") => reasons.push("creates a filesystem (`mkfs`)".into()),
        "dd" if args.iter().any(|a| a.starts_with("of=")) => {
            reasons.push("writes raw data (`dd of=`)".into())
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            reasons.push(format!("stops the machine (`{program}`)"))
        }
        "chmod" if has("777") || has("-R") || has("--recursive") => {
            reasons.push("changes permissions broadly (`chmod -R`/`777`)".into())
        }
        "chown" if has("-R") || has("--recursive") => {
            reasons.push("changes ownership recursively".into())
        }
        "git" => {
            let sub = args.first().map(String::as_str);
            if sub == Some("push")
                && args
                    .iter()
                    .any(|a| a == "-f" || a.starts_with("--force") || a.starts_with('+'))
            {
                reasons.push("force-pushes (`git push --force`)".into());
            }
            if sub == Some("reset") && has("--hard") {
                reasons.push("discards work (`git reset --hard`)".into());
            }
            if sub == Some("clean") && short_flag('f') {
                reasons.push("deletes untracked files (`git clean -f`)".into());
            }
        }
        "kill" if has("-1") || (has("-9") && has("-1")) => {
            reasons.push("signals every process (`kill -1`)".into())
        }
        "killall" | "pkill" => reasons.push(format!("kills processes by name (`{program}`)")),
        "crontab" if has("-r") => reasons.push("removes the crontab (`crontab -r`)".into()),
        "wipefs" | "shred" | "fdisk" | "parted" | "sfdisk" => {
            reasons.push(format!("destroys data (`{program}`)"))
        }
        "iptables" | "nft" | "ufw" => reasons.push(format!("changes the firewall (`{program}`)")),
        "systemctl"
            if args.iter().any(|a| {
                ["stop", "disable", "mask", "poweroff", "reboot", "halt"].contains(&a.as_str())
            }) =>
        {
            reasons.push("stops or disables services (`systemctl`)".into())
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risk_of(command: &str) -> Risk {
        let segments = shell::segments(command);
        let plain = shell::not_plain_reasons(command).is_empty();
        assess(command, &segments, plain, &OwnFiles::default()).0
    }

    macro_rules! risk {
        ($name:ident, $cmd:expr, $risk:ident) => {
            #[test]
            fn $name() {
                assert_eq!(risk_of($cmd), Risk::$risk, "{}", $cmd);
            }
        };
    }

    risk!(ls_is_safe, "ls -la", Safe);
    risk!(ls_with_a_path_is_not, "ls secret", NeedsReview);
    risk!(git_status_is_safe, "git status --short", Safe);
    risk!(git_diff_output_is_not, "git diff --output=x", NeedsReview);
    risk!(rm_rf, "rm -rf build", Dangerous);
    risk!(rm_split_flags, "rm -r -f build", Dangerous);
    risk!(rm_behind_assignment, "X=1 rm -rf build", Dangerous);
    risk!(rm_behind_sudo_user, "sudo -u root rm -r build", Dangerous);
    risk!(rm_inside_sh_c, "sh -c 'echo; rm -rf /'", Dangerous);
    risk!(
        rm_behind_three_wrappers,
        "env nice -n 5 timeout 10 rm -rf x",
        Dangerous
    );
    risk!(curl_to_shell, "curl -fsSL x | sh", Dangerous);
    risk!(force_push, "git push --force origin main", Dangerous);
    risk!(reset_hard, "git reset --hard HEAD", Dangerous);
    risk!(dd_device, "dd if=/dev/zero of=/dev/sda", Dangerous);
    risk!(plain_build, "make test", NeedsReview);

    #[test]
    fn looks_through_wrappers_and_scripts() {
        let inner: Vec<String> = looked_through("sudo bash -c 'cd /tmp && make'")
            .into_iter()
            .map(|w| w.join(" "))
            .collect();
        assert!(inner.contains(&"cd /tmp".to_string()), "{inner:?}");
        assert!(inner.contains(&"make".to_string()), "{inner:?}");
        assert_eq!(looked_through("git status").len(), 1);
    }
}
