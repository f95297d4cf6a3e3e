//! Safe: the known read-only binaries and git subcommands, with the flags that take a
//! value, the flags that make them write or run something, and what their operands may
//! be; and the check that a command is one of them, used read-only.

use super::is_path;

/// What a read-only binary's operands (non-flag words) may be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operands {
    /// None: every operand is a file to read, or a value that changes something.
    No,
    /// Any text: the binary only prints or computes with it (`echo`, `basename`).
    Text,
    /// Names that are not paths (`which ls`, `printenv HOME`).
    Names,
    /// At most one non-path operand, the pattern or filter (`grep`, `rg`, `jq`);
    /// none when a pattern is given by a flag (`grep -e x`).
    Pattern,
    /// `date +FORMAT` only: any other operand sets the clock.
    DateFormat,
}

/// A read-only binary: flags that take a separate value, flags that make it write or
/// run something, and what its operands may be.
struct SafeBin {
    name: &'static str,
    values: &'static [&'static str],
    forbidden: &'static [&'static str],
    operands: Operands,
}

const fn bin(
    name: &'static str,
    values: &'static [&'static str],
    forbidden: &'static [&'static str],
    operands: Operands,
) -> SafeBin {
    SafeBin {
        name,
        values,
        forbidden,
        operands,
    }
}

use Operands::{DateFormat, Names, No, Pattern, Text};

const GREP_VALUES: &[&str] = &[
    "-e",
    "-m",
    "-A",
    "-B",
    "-C",
    "-d",
    "-D",
    "--regexp",
    "--max-count",
    "--after-context",
    "--before-context",
    "--context",
    "--directories",
    "--devices",
    "--include",
    "--exclude",
    "--exclude-dir",
    "--label",
    "--binary-files",
    "--color",
    "--colour",
];

/// Read-only programs that are safe with flags only (no path or other operands, except
/// as their `Operands` allow).
#[rustfmt::skip]
const SAFE_BINS: &[SafeBin] = &[
    bin("ls", &["-I", "-w", "-T", "--hide", "--ignore", "--width", "--tabsize", "--format", "--sort", "--time", "--time-style", "--block-size", "--quoting-style", "--indicator-style"], &[], No),
    bin("pwd", &[], &[], No),
    bin("whoami", &[], &[], No),
    bin("id", &[], &[], No),
    bin("date", &["-d", "--date", "-r", "--reference"], &["-s", "--set", "-f", "--file"], DateFormat),
    bin("uname", &[], &[], No),
    bin("hostname", &[], &["-F", "--file", "-b", "--boot"], No),
    bin("uptime", &[], &[], No),
    bin("true", &[], &[], Text),
    bin("false", &[], &[], Text),
    bin("groups", &[], &[], No),
    bin("nproc", &["--ignore"], &[], No),
    bin("free", &["-s", "-c", "--seconds", "--count"], &[], No),
    bin("df", &["-t", "-x", "-B", "--type", "--exclude-type", "--block-size", "--output"], &[], No),
    bin("du", &["-d", "-B", "-t", "--max-depth", "--block-size", "--threshold", "--exclude", "--time-style"], &["--files0-from", "-X", "--exclude-from"], No),
    bin("tty", &[], &[], No),
    bin("locale", &[], &[], Names),
    bin("arch", &[], &[], No),
    bin("echo", &[], &[], Text),
    bin("printf", &[], &["-v"], Text),
    bin("cat", &[], &[], No),
    bin("head", &["-n", "-c", "--lines", "--bytes"], &[], No),
    bin("tail", &["-n", "-c", "-s", "--lines", "--bytes", "--sleep-interval", "--pid", "--max-unchanged-stats"], &[], No),
    bin("wc", &[], &["--files0-from"], No),
    bin("sort", &["-k", "-t", "-S", "--key", "--field-separator", "--buffer-size", "--parallel", "--sort"], &["-o", "--output", "-T", "--temporary-directory", "--compress-program", "--files0-from", "--random-source"], No),
    bin("uniq", &["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars", "--group", "--all-repeated"], &[], No),
    bin("cut", &["-d", "-f", "-b", "-c", "--delimiter", "--fields", "--bytes", "--characters", "--output-delimiter"], &[], No),
    bin("tr", &[], &[], Text),
    bin("grep", GREP_VALUES, &["-f", "--file", "--exclude-from"], Pattern),
    bin("egrep", GREP_VALUES, &["-f", "--file", "--exclude-from"], Pattern),
    bin("fgrep", GREP_VALUES, &["-f", "--file", "--exclude-from"], Pattern),
    bin("rg", &["-e", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-M", "-j", "-d", "--regexp", "--glob", "--iglob", "--type", "--type-not", "--max-count", "--after-context", "--before-context", "--context", "--max-columns", "--threads", "--max-depth", "--max-filesize", "--color", "--colors", "--sort", "--sortr", "--encoding", "--engine", "--type-add", "--replace", "-r"], &["--pre", "--pre-glob", "-f", "--file", "--ignore-file", "--hostname-bin"], Pattern),
    bin("which", &[], &[], Names),
    bin("whereis", &["-B", "-M", "-S"], &[], Names),
    bin("type", &[], &[], Names),
    bin("file", &["-m", "-F", "--magic-file", "--separator"], &["-f", "--files-from", "-C", "--compile"], No),
    bin("stat", &["-c", "--format", "--printf"], &[], No),
    bin("realpath", &["--relative-to", "--relative-base"], &[], No),
    bin("readlink", &[], &[], No),
    bin("basename", &["-s", "--suffix"], &[], Text),
    bin("dirname", &[], &[], Text),
    bin("printenv", &[], &[], Names),
    bin("seq", &["-f", "-s", "--format", "--separator"], &[], Text),
    bin("expr", &[], &[], Text),
    bin("sleep", &[], &[], Text),
    bin("nl", &["-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"], &[], No),
    bin("tac", &["-s", "--separator"], &[], No),
    bin("rev", &[], &[], No),
    bin("column", &["-s", "-c", "-o", "-N", "-R", "-H", "-W", "--separator", "--output-separator", "--output-width", "--table-columns"], &[], No),
    bin("diff", &["-U", "-C", "--label", "-I"], &["--from-file", "--to-file"], No),
    bin("cmp", &["-i", "-n", "--ignore-initial", "--bytes"], &[], No),
    bin("md5sum", &[], &["-c", "--check"], No),
    bin("sha1sum", &[], &["-c", "--check"], No),
    bin("sha256sum", &[], &["-c", "--check"], No),
    bin("sha512sum", &[], &["-c", "--check"], No),
    bin("b2sum", &["-l", "--length"], &["-c", "--check"], No),
    bin("jq", &["--indent", "--arg", "--argjson"], &["--rawfile", "--slurpfile", "-f", "--from-file", "-L", "--args", "--jsonargs"], Pattern),
    bin("tree", &["-L", "-P", "-I", "--charset", "--filelimit", "--sort", "--timefmt"], &["-o", "-R", "--fromfile"], No),
    bin("lsb_release", &[], &[], No),
];

/// Read-only git subcommands, and what each accepts.
struct SafeGit {
    sub: &'static str,
    values: &'static [&'static str],
    /// Flags that make it write, run a program or read a named file.
    forbidden: &'static [&'static str],
    /// When set, the only flags allowed (besides values).
    only: Option<&'static [&'static str]>,
    /// Operands that look like revisions (no path characters) are allowed.
    revisions: bool,
}

const LOG_VALUES: &[&str] = &[
    "-n",
    "--max-count",
    "--skip",
    "--since",
    "--until",
    "--after",
    "--before",
    "--author",
    "--committer",
    "--grep",
    "--date",
    "--diff-filter",
    "-S",
    "-G",
    "--min-parents",
    "--max-parents",
];

const SAFE_GIT: &[SafeGit] = &[
    SafeGit {
        sub: "status",
        values: &[],
        forbidden: &[],
        only: None,
        revisions: false,
    },
    SafeGit {
        sub: "log",
        values: LOG_VALUES,
        forbidden: &["-L"],
        only: None,
        revisions: true,
    },
    SafeGit {
        sub: "show",
        values: LOG_VALUES,
        forbidden: &[],
        only: None,
        revisions: true,
    },
    SafeGit {
        sub: "diff",
        values: &["-U", "--diff-filter", "-S", "-G"],
        forbidden: &["--no-index"],
        only: None,
        revisions: true,
    },
    SafeGit {
        sub: "shortlog",
        values: LOG_VALUES,
        forbidden: &[],
        only: None,
        revisions: true,
    },
    SafeGit {
        sub: "describe",
        values: &["--match", "--exclude", "--abbrev", "--candidates"],
        forbidden: &[],
        only: None,
        revisions: true,
    },
    SafeGit {
        sub: "rev-parse",
        values: &["--abbrev-ref", "--short", "--since", "--until"],
        forbidden: &["--parseopt", "--sq-quote"],
        only: None,
        revisions: true,
    },
    SafeGit {
        sub: "ls-files",
        values: &["-x", "--exclude", "--format", "--abbrev"],
        forbidden: &["-X", "--exclude-from", "--exclude-per-directory"],
        only: None,
        revisions: false,
    },
    SafeGit {
        sub: "branch",
        values: &[
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--points-at",
            "--sort",
            "--format",
        ],
        forbidden: &[
            "-d",
            "-D",
            "-m",
            "-M",
            "-c",
            "-C",
            "-f",
            "-u",
            "-t",
            "--delete",
            "--move",
            "--copy",
            "--force",
            "--set-upstream-to",
            "--set-upstream",
            "--unset-upstream",
            "--edit-description",
            "--track",
            "--create-reflog",
            "--recurse-submodules",
        ],
        only: None,
        revisions: false,
    },
    SafeGit {
        sub: "remote",
        values: &[],
        forbidden: &[],
        only: Some(&["-v", "--verbose"]),
        revisions: false,
    },
    SafeGit {
        sub: "tag",
        values: &[
            "--contains",
            "--no-contains",
            "--points-at",
            "--merged",
            "--no-merged",
            "--sort",
            "--format",
        ],
        forbidden: &[],
        only: Some(&[
            "-l",
            "--list",
            "-n",
            "--column",
            "--no-column",
            "-i",
            "--ignore-case",
        ]),
        revisions: false,
    },
    SafeGit {
        sub: "version",
        values: &[],
        forbidden: &[],
        only: None,
        revisions: false,
    },
];

/// Flags no read-only git subcommand may have: they write a file or run a program.
const GIT_FORBIDDEN_FLAGS: &[&str] = &[
    "--output",
    "-o",
    "--ext-diff",
    "--textconv",
    "--exec",
    "--upload-pack",
    "--receive-pack",
    "--open-files-in-pager",
    "-O",
    "--output-directory",
];

/// Config reading forms: `git config --get x`, `git config --list`.
const GIT_CONFIG_READ: &[&str] = &["--get", "--get-all", "--get-regexp", "--list", "-l"];
const GIT_CONFIG_FLAGS: &[&str] = &[
    "--get",
    "--get-all",
    "--get-regexp",
    "--list",
    "-l",
    "--global",
    "--local",
    "--system",
    "--worktree",
    "--show-origin",
    "--show-scope",
    "--null",
    "-z",
    "--name-only",
    "--bool",
    "--int",
    "--path",
    "--includes",
    "--no-includes",
];

/// True when `flag` (a long option, maybe with `=value`) names one in `list`, exactly
/// or as an abbreviation getopt_long would accept.
fn long_matches(flag: &str, list: &[&str]) -> bool {
    let name = flag.split('=').next().unwrap_or(flag);
    name.len() > 2
        && list
            .iter()
            .any(|l| l.starts_with("--") && (*l == name || l.starts_with(name)))
}

/// Splits arguments into operands, checking each flag: `None` when a flag is forbidden
/// or (with `only`) not allowed. Values of flags in `values` are skipped.
fn operands_of<'a>(
    args: &'a [String],
    values: &[&str],
    forbidden: &[&str],
    only: Option<&[&str]>,
) -> Option<Vec<&'a str>> {
    let mut operands = Vec::new();
    let mut options = true;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if !options || a == "-" || !a.starts_with('-') {
            operands.push(a.as_str());
            continue;
        }
        if a == "--" {
            options = false;
            continue;
        }
        if a.starts_with("--") {
            let name = a.split('=').next().unwrap_or(a);
            if long_matches(a, forbidden) {
                return None;
            }
            let takes_value = values.contains(&name);
            if let Some(only) = only
                && !only.contains(&name)
                && !takes_value
            {
                return None;
            }
            if takes_value && !a.contains('=') {
                i += 1;
            }
            continue;
        }
        // `head -5`, `git log -3`.
        if a[1..].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let cluster = &a[1..];
        for (j, c) in cluster.char_indices() {
            let flag = format!("-{c}");
            if forbidden.contains(&flag.as_str()) {
                return None;
            }
            if values.contains(&flag.as_str()) {
                if j + c.len_utf8() == cluster.len() {
                    i += 1;
                }
                break;
            }
            if let Some(only) = only
                && !only.contains(&flag.as_str())
            {
                return None;
            }
        }
    }
    Some(operands)
}

pub(super) fn is_safe_command(words: &[String]) -> bool {
    let Some(program) = words.first() else {
        return false;
    };
    let args = &words[1..];
    match program.as_str() {
        "git" => return is_safe_git(args),
        "find" => return is_safe_find(args),
        _ => {}
    }
    let Some(spec) = SAFE_BINS.iter().find(|b| b.name == program) else {
        return false;
    };
    let Some(operands) = operands_of(args, spec.values, spec.forbidden, None) else {
        return false;
    };
    let operands: Vec<&str> = operands.into_iter().filter(|o| *o != "-").collect();
    match spec.operands {
        No => operands.is_empty(),
        Text => true,
        Names => operands.iter().all(|o| !is_path(o)),
        DateFormat => operands.iter().all(|o| o.starts_with('+')),
        Pattern => {
            let by_flag = args.iter().any(|a| {
                a == "-e"
                    || a.starts_with("--regexp")
                    || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('e'))
            }) && spec.name != "jq";
            let allowed = if by_flag { 0 } else { 1 };
            operands.len() <= allowed && operands.iter().all(|o| !is_path(o))
        }
    }
}

fn is_safe_git(args: &[String]) -> bool {
    // Any global option before the subcommand (`-c`, `-C`, `--git-dir`, …) is not safe.
    let Some(sub) = args.first() else {
        return false;
    };
    let rest = &args[1..];
    if sub == "config" {
        return is_safe_git_config(rest);
    }
    if sub == "stash" {
        return rest.first().is_some_and(|s| s == "list")
            && operands_of(&rest[1..], LOG_VALUES, GIT_FORBIDDEN_FLAGS, None)
                .is_some_and(|o| o.is_empty());
    }
    let Some(spec) = SAFE_GIT.iter().find(|g| g.sub == sub) else {
        return false;
    };
    let forbidden: Vec<&str> = GIT_FORBIDDEN_FLAGS
        .iter()
        .chain(spec.forbidden)
        .copied()
        .collect();
    let Some(operands) = operands_of(rest, spec.values, &forbidden, spec.only) else {
        return false;
    };
    if rest.iter().any(|a| a == "--") && !operands.is_empty() {
        return false; // pathspecs
    }
    if sub == "tag" && !operands.is_empty() {
        return rest.iter().any(|a| a == "-l" || a == "--list")
            && operands.iter().all(|o| !is_path(o));
    }
    operands.is_empty()
        || (spec.revisions && operands.iter().all(|o| !is_path(o) && !o.contains(':')))
}

fn is_safe_git_config(args: &[String]) -> bool {
    // `git config get NAME`, `git config list` (git 2.46).
    let (args, reading) = match args.first().map(String::as_str) {
        Some("get" | "list") => (&args[1..], true),
        _ => (
            args,
            args.iter().any(|a| GIT_CONFIG_READ.contains(&a.as_str())),
        ),
    };
    if !reading {
        return false;
    }
    let allowed: Vec<&str> = GIT_CONFIG_FLAGS
        .iter()
        .copied()
        .chain(["--all", "--regexp", "--show-names"])
        .collect();
    let Some(operands) = operands_of(args, &["--type", "--default"], &[], Some(&allowed)) else {
        return false;
    };
    operands.len() <= 2 && operands.iter().all(|o| !is_path(o))
}

/// `find` with expressions only: no starting paths, nothing that deletes, runs or
/// writes.
const FIND_FORBIDDEN: &[&str] = &[
    "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
];

fn is_safe_find(args: &[String]) -> bool {
    if args.first().is_some_and(|a| !a.starts_with('-')) {
        return false; // a starting path
    }
    !args.iter().any(|a| FIND_FORBIDDEN.contains(&a.as_str()))
}
