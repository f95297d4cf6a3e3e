//! Dangerous: the patterns of destructive or escalating commands, each with its own
//! reason; sensitive paths and devices; and execgate's own files.

use super::code::{SHELLS, ShellInput, code_source, network_exec};
use super::through::{Inner, Seen, inner_commands, option_values, seen_of, walk};
use super::{Context, OwnFiles, base};
use crate::policy::parse::{self, Analysis};
use crate::policy::paths;
use crate::policy::programs::{self, Effect};

/// File names of execgate's own files: a command naming one touches execgate.
const OWN_NAMES: &[&str] = &[
    "execgate.db",
    "execgate.db-wal",
    "execgate.db-shm",
    "execgate.db-journal",
    "execgate.db.lock",
    "agent.sock",
    "admin.sock",
    "execgate.toml",
];

/// Programs that control processes or services by name.
const PROCESS_CONTROL: &[&str] = &[
    "pkill",
    "killall",
    "kill",
    "systemctl",
    "service",
    "launchctl",
    "supervisorctl",
    "sv",
    "rc-service",
];

/// Device files that are fine to write to.
fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
    ) || path.starts_with("/dev/fd/")
        || path.starts_with("/dev/pts/")
}

fn is_device(path: &str) -> bool {
    path.starts_with("/dev/") && !is_harmless_device(path)
}

/// Files whose change gives code execution or lasting access (the path policy's text
/// judgement: a word here may be a path inside a script execgate looked through).
fn is_sensitive(path: &str) -> bool {
    paths::sensitive(path).is_some()
}

/// System paths that must not be recursively re-permissioned or re-owned.
fn is_system_path(path: &str) -> bool {
    let trimmed = path.trim_end_matches('/');
    matches!(
        trimmed,
        "" | "~"
            | "/etc"
            | "/usr"
            | "/bin"
            | "/sbin"
            | "/lib"
            | "/lib64"
            | "/lib32"
            | "/boot"
            | "/var"
            | "/home"
            | "/root"
            | "/opt"
            | "/srv"
            | "/sys"
            | "/proc"
            | "/dev"
            | "$HOME"
            | "${HOME}"
            | "/usr/local"
    ) || [
        "/etc/", "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/lib32/", "/boot/", "/sys/",
        "/proc/", "/dev/",
    ]
    .iter()
    .any(|p| path.starts_with(p))
}

/// Whether a word names one of execgate's own files or directories.
fn touches_own(word: &str, own: &OwnFiles) -> bool {
    if own.needles.iter().any(|n| word.contains(n.as_str())) {
        return true;
    }
    if OWN_NAMES.iter().any(|n| word.contains(n)) {
        return true;
    }
    word.contains('/') && word.split('/').any(|part| part == "execgate")
}

/// What agent guard settings a word names, if any: the word itself as a path, or the
/// value of an `--option=PATH`.
fn touches_guard(word: &str) -> Option<&'static str> {
    paths::guard_settings(word).or_else(|| {
        let (_, value) = word.split_once('=')?;
        paths::guard_settings(value)
    })
}

/// Short flags given anywhere, alone or in a cluster (`-rf`, `-r -f`).
fn short_flag(args: &[String], c: char) -> bool {
    args.iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
}

/// Reasons pushed once each, in first-found order.
pub(super) struct Reasons(pub(super) Vec<String>);

impl Reasons {
    fn add(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.0.contains(&reason) {
            self.0.push(reason);
        }
    }
}

/// Checks one command (found anywhere, looked through) against the dangerous patterns,
/// and where they find nothing, asks the program's profile (which reads abbreviations
/// and clusters as the program does: `git reset --har`, `git branch -df`).
fn dangerous_command(seen: &Seen, cx: &Context<'_>, r: &mut Reasons) {
    let mut mine = Reasons(Vec::new());
    let understood = programs::understand(&seen.words, seen.piped);
    dangerous_patterns(seen, &understood, cx.own, &mut mine);
    if mine.0.is_empty() {
        for danger in understood.dangers() {
            mine.add(danger.to_string());
        }
        // Dangers that depend on what is in the working directory, judged there.
        for danger in understood.if_present.iter().filter(|d| d.holds(cx.cwd)) {
            mine.add(danger.danger.clone());
        }
    }
    for reason in mine.0 {
        r.add(reason);
    }
}

fn dangerous_patterns(
    seen: &Seen,
    understood: &programs::Understanding,
    own: &OwnFiles,
    r: &mut Reasons,
) {
    let words = &seen.words;
    let program = base(&words[0]);
    let args = &words[1..];
    let has = |f: &str| args.iter().any(|a| a == f);
    let has_prefix = |f: &str| args.iter().any(|a| a.starts_with(f));
    let operands: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();

    // What the program's profile says it would write that grants access or holds secrets.
    for f in &understood.findings {
        if let Effect::Writes(p) = &f.effect
            && (is_sensitive(p) || paths::is_secret(p))
        {
            r.add(format!("writes or copies a sensitive file (`{p}`)"));
        }
    }
    // A secret read by a command that reaches the network may leave with it:
    // `curl -F f=@.env https://…`, `curl -d @~/.aws/credentials`.
    let reaches_network = understood
        .findings
        .iter()
        .any(|f| matches!(f.effect, Effect::Net(_)));
    if reaches_network {
        for f in &understood.findings {
            if let Effect::Reads(p) | Effect::ReadsTree(p) = &f.effect
                && paths::is_secret(p)
            {
                r.add(format!("sends a secret over the network (`{p}`)"));
            }
        }
    }
    if let Some(endpoint) = words.iter().find_map(|w| metadata_endpoint(w)) {
        r.add(format!(
            "reaches a cloud metadata endpoint, which hands out the machine's credentials (`{endpoint}`)"
        ));
    }
    if let Some(verb) = removes_packages(words) {
        r.add(format!("removes installed packages (`{program} {verb}`)"));
    }
    for why in destructive_sql(words, seen.heredoc.as_deref()) {
        r.add(why);
    }

    // Code from a pipe, a download or a process substitution.
    if let Some(source) = code_source(words) {
        let fed = match source {
            ShellInput::Substitution => true,
            _ => seen.piped,
        };
        if fed && seen.download {
            r.add("downloads a script and runs it (`curl … | sh`)");
        } else if fed {
            r.add("pipes into a shell or interpreter, which runs its input as code (`… | sh`)");
        }
    }
    if (words[0].starts_with("$(") || words[0].starts_with('`')) && seen.download {
        r.add("downloads a script and runs it (`curl … | sh`)");
    }

    for w in words {
        if w.contains("/dev/tcp/") || w.contains("/dev/udp/") {
            r.add("opens a raw network connection (`/dev/tcp`, a reverse shell)");
        }
        if touches_own(w, own) {
            r.add(format!("touches execgate's own files (`{w}`)"));
        }
        if let Some(what) = touches_guard(w) {
            r.add(format!(
                "touches {what} (`{w}`), which an agent could use to switch its guard off"
            ));
        }
    }
    if program == "execgate" {
        r.add("runs execgate itself");
    }
    if PROCESS_CONTROL.contains(&program)
        && args.iter().any(|a| {
            a == "execgate"
                || a.starts_with("execgate.")
                || a.starts_with("execgate@")
                || a.starts_with("execgate-")
        })
    {
        r.add(format!("touches execgate itself (`{program} execgate`)"));
    }

    match program {
        "rm" => {
            if short_flag(args, 'r') || short_flag(args, 'R') || has("--recursive") {
                r.add("recursive delete (`rm -r`)");
            }
            if short_flag(args, 'f') || has("--force") {
                r.add("forced delete (`rm -f`)");
            }
            if has("--no-preserve-root") {
                r.add("deletes without protecting `/` (`rm --no-preserve-root`)");
            }
            if operands
                .iter()
                .any(|o| is_sensitive(o) || is_system_path(o))
            {
                r.add("deletes a system or sensitive file");
            }
        }
        "sudo" | "doas" | "su" | "pkexec" | "run0" | "runuser" | "sudoedit" => {
            r.add(format!("runs as another user (`{program}`)"))
        }
        p if p.starts_with("mkfs") || p == "mke2fs" || p == "mkswap" => {
            r.add("creates a filesystem (`mkfs`)")
        }
        "dd" => {
            if has_prefix("of=") {
                r.add("writes raw data (`dd of=`)");
            }
            for a in args {
                if let Some(target) = a.strip_prefix("of=")
                    && is_device(target)
                {
                    r.add(format!("writes to a device (`{target}`)"));
                }
            }
        }
        "chmod" | "chown" | "chgrp" => {
            if short_flag(args, 'R') || has("--recursive") {
                r.add(format!(
                    "changes permissions or ownership recursively (`{program} -R`)"
                ));
            }
            if operands.iter().skip(1).any(|o| is_system_path(o)) {
                r.add(format!(
                    "changes permissions or ownership of a system path (`{program}`)"
                ));
            }
            if program == "chmod" && operands.first().is_some_and(|m| broad_mode(m)) {
                r.add("makes files world-writable or setuid (`chmod 777`, `u+s`)");
            }
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            r.add(format!("stops the machine (`{program}`)"))
        }
        "init" | "telinit" if operands.iter().any(|o| matches!(*o, "0" | "6")) => {
            r.add(format!("stops the machine (`{program} 0/6`)"))
        }
        "systemctl" => {
            if operands.iter().any(|a| {
                matches!(
                    *a,
                    "poweroff" | "reboot" | "halt" | "kexec" | "emergency" | "rescue"
                )
            }) {
                r.add("stops the machine (`systemctl poweroff`)");
            } else if operands
                .iter()
                .any(|a| matches!(*a, "stop" | "disable" | "mask" | "kill" | "isolate"))
            {
                r.add("stops or disables services (`systemctl stop`)");
            }
        }
        "kill" => {
            let mut i = 0;
            if args.first().is_some_and(|a| a == "-s" || a == "-n") {
                i = 2;
            } else if args.len() > 1 && args[0].starts_with('-') && args[0] != "--" {
                i = 1;
            }
            if args.get(i).is_some_and(|a| a == "--") {
                i += 1;
            }
            let pids = args.get(i..).unwrap_or_default();
            if (args.len() == 1 && args[0] == "-1") || pids.iter().any(|p| p == "-1") {
                r.add("signals every process (`kill -1`)");
            }
            if pids.iter().any(|p| p == "1") {
                r.add("signals init (`kill 1`)");
            }
        }
        // `killall -l` lists signals, `-V` prints the version: nothing is killed.
        "killall" | "pkill" | "killall5"
            if args.is_empty()
                || !args.iter().all(|a| {
                    matches!(
                        a.as_str(),
                        "-l" | "--list" | "-V" | "--version" | "-h" | "--help"
                    )
                }) =>
        {
            r.add(format!("kills processes by name (`{program}`)"))
        }
        "crontab" if short_flag(args, 'r') => r.add("removes the crontab (`crontab -r`)"),
        "wipefs" | "shred" | "fdisk" | "sfdisk" | "cfdisk" | "parted" | "gdisk" | "sgdisk"
        | "blkdiscard" | "badblocks" | "srm" => {
            r.add(format!("destroys data or partitions (`{program}`)"))
        }
        "iptables" | "ip6tables" | "nft" | "ufw" | "firewall-cmd" | "iptables-restore"
        | "ip6tables-restore" => r.add(format!("changes the firewall (`{program}`)")),
        "find" => {
            if has("-delete") {
                r.add("deletes files (`find -delete`)");
            }
            for (i, a) in args.iter().enumerate() {
                if matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                    && args
                        .get(i + 1)
                        .is_some_and(|p| matches!(base(p), "rm" | "shred" | "unlink" | "rmdir"))
                {
                    r.add("deletes files (`find -exec rm`)");
                }
            }
        }
        "truncate" => r.add("truncates files (`truncate`)"),
        "mount" | "umount" | "swapoff" | "losetup" => {
            r.add(format!("mounts or unmounts filesystems (`{program}`)"))
        }
        "insmod" | "rmmod" | "modprobe" | "kexec" => {
            r.add(format!("loads or unloads kernel modules (`{program}`)"))
        }
        "useradd" | "userdel" | "usermod" | "passwd" | "chpasswd" | "groupadd" | "groupdel"
        | "groupmod" | "adduser" | "deluser" | "gpasswd" | "visudo" | "chsh" => {
            r.add(format!("changes user accounts (`{program}`)"))
        }
        "nc" | "ncat" | "netcat" | "socat" if network_exec(program, args) => {
            r.add("runs a program for a network connection (`nc -e`)")
        }
        "history" if short_flag(args, 'c') || short_flag(args, 'd') => {
            r.add("erases shell history (`history -c`)")
        }
        "chattr" => r.add("changes file attributes (`chattr`)"),
        "setenforce"
            if operands
                .iter()
                .any(|o| *o == "0" || o.eq_ignore_ascii_case("permissive")) =>
        {
            r.add("disables SELinux (`setenforce 0`)")
        }
        "sysctl" if short_flag(args, 'w') || operands.iter().any(|o| o.contains('=')) => {
            r.add("changes kernel parameters (`sysctl -w`)")
        }
        "docker" | "podman" | "nerdctl" => dangerous_container(args, r),
        "eval" => r.add("runs a string as code (`eval`)"),
        _ => {}
    }

    // Writing or copying onto devices and sensitive files.
    let writes = match program {
        "tee" | "cp" | "mv" | "ln" | "install" | "rsync" | "scp" | "truncate" | "touch" => true,
        "sed" | "gsed" | "perl" => short_flag(args, 'i') || has_prefix("--in-place"),
        _ => false,
    };
    if writes {
        for o in &operands {
            if is_device(o) {
                r.add(format!("writes to a device (`{o}`)"));
            } else if is_sensitive(o) || paths::is_secret(o) {
                r.add(format!("writes or copies a sensitive file (`{o}`)"));
            }
        }
    }
    if matches!(program, "curl" | "wget") {
        for v in option_values(args, &["--output", "--output-document"], &["-o", "-O"]) {
            if is_sensitive(&v) || is_device(&v) {
                r.add(format!("writes or copies a sensitive file (`{v}`)"));
            }
        }
    }
}

/// The cloud metadata endpoint a word names, if it names one: the instance metadata
/// services of AWS, GCP, Azure, Alibaba and others hand out the machine's credentials to
/// anything that asks from inside it. Written forms include the decimal and hex
/// spellings of 169.254.169.254 and its IPv6 and IPv4-mapped addresses.
fn metadata_endpoint(word: &str) -> Option<&'static str> {
    let w = word.to_ascii_lowercase();
    const MARKERS: &[(&str, &str)] = &[
        ("169.254.169.254", "169.254.169.254"),
        ("169.254.170.2", "169.254.170.2"),
        ("169.254.", "169.254.0.0/16"),
        ("metadata.google.internal", "metadata.google.internal"),
        ("metadata.goog", "metadata.goog"),
        ("metadata.azure.com", "metadata.azure.com"),
        ("100.100.100.200", "100.100.100.200"),
        ("fd00:ec2::254", "fd00:ec2::254"),
        ("a9fe:a9fe", "169.254.169.254"),
        ("2852039166", "169.254.169.254"),
        ("0xa9fea9fe", "169.254.169.254"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("0251.0376.0251.0376", "169.254.169.254"),
        ("instance-data", "instance-data"),
    ];
    MARKERS
        .iter()
        .find(|(m, _)| w.contains(m))
        .map(|&(_, name)| name)
}

/// The verb by which a package manager removes installed packages, if these words use
/// one (also with options before the verb: `npm --prefix x rm y`, `pip -q uninstall`).
fn removes_packages(words: &[String]) -> Option<String> {
    let program = base(&words[0]);
    let verbs: &[&str] = match program {
        "npm" => &["uninstall", "un", "unlink", "remove", "rm", "r"],
        "pnpm" => &["remove", "rm", "un", "uninstall"],
        "yarn" | "bun" | "poetry" | "uv" | "composer" | "snap" | "flatpak" => {
            &["remove", "rm", "uninstall"]
        }
        "pip" | "pip3" | "pipx" | "gem" | "cargo" | "go" | "dotnet" | "helm" => &["uninstall"],
        "brew" => &["uninstall", "remove", "rm", "autoremove"],
        "apt" | "apt-get" | "aptitude" => &["remove", "purge", "autoremove"],
        "dnf" | "yum" | "zypper" => &["remove", "erase", "autoremove", "rm"],
        "conda" | "mamba" | "micromamba" => &["remove", "uninstall"],
        "apk" => &["del"],
        "port" => &["uninstall"],
        "pacman" => {
            return words[1..]
                .iter()
                .find(|w| w.starts_with("-R") || w.starts_with("--remove"))
                .cloned();
        }
        p if programs::is_python(p) => {
            // `python -m pip uninstall …`
            let pip = words.iter().position(|w| w == "pip" || w == "pip3")?;
            return words[pip..].iter().find(|w| *w == "uninstall").cloned();
        }
        _ => return None,
    };
    words[1..]
        .iter()
        .find(|w| verbs.contains(&w.as_str()))
        .cloned()
}

/// SQL clients, and the options that give them SQL to run.
fn sql_client(program: &str) -> Option<&'static [&'static str]> {
    Some(match program {
        "psql" => &["-c", "--command"],
        "mysql" | "mariadb" => &["-e", "--execute"],
        "sqlite3" | "sqlite" | "duckdb" => &["-cmd", "-c"],
        "sqlcmd" => &["-Q", "-q"],
        "clickhouse-client" | "clickhouse" => &["-q", "--query"],
        "cockroach" | "cqlsh" => &["-e", "--execute"],
        "mongosh" | "mongo" => &["--eval"],
        _ => return None,
    })
}

/// Why the SQL these words (or what is fed to them) run destroys or changes data, or
/// runs commands: `DROP`, `TRUNCATE`, `DELETE`, `UPDATE`, `ALTER`, a psql `\!` or `COPY
/// … PROGRAM`, an sqlite `.shell`. Statements in a file (`-f`) are not seen: the
/// command is at worst asked, never approved, since a SQL client is no safe program.
fn destructive_sql(words: &[String], fed: Option<&str>) -> Vec<String> {
    let program = base(&words[0]);
    let Some(flags) = sql_client(program) else {
        if program == "dropdb" || (program == "mysqladmin" && words.iter().any(|w| w == "drop")) {
            return vec![format!("drops a database (`{program}`)")];
        }
        return Vec::new();
    };
    let mut sql: Vec<&str> = Vec::new();
    let args = &words[1..];
    let mut i = 0;
    let mut operands = 0;
    while let Some(a) = args.get(i) {
        if flags.contains(&a.as_str()) {
            sql.extend(args.get(i + 1).map(String::as_str));
            i += 2;
            continue;
        }
        if let Some(v) = flags
            .iter()
            .filter(|f| f.starts_with("--"))
            .find_map(|f| a.strip_prefix(&format!("{f}=")))
        {
            sql.push(v);
        } else if let Some(v) = flags.iter().filter(|f| f.len() == 2).find_map(|f| {
            a.strip_prefix(*f)
                .filter(|v| !v.is_empty() && !a.starts_with("--"))
        }) {
            sql.push(v);
        } else if !a.starts_with('-') {
            operands += 1;
            // sqlite3 DB SQL…, duckdb DB SQL…
            if matches!(program, "sqlite3" | "sqlite" | "duckdb") && operands > 1 {
                sql.push(a);
            }
        }
        i += 1;
    }
    sql.extend(fed);
    let mut out = Vec::new();
    for text in sql {
        let upper = text.to_ascii_uppercase();
        let words: Vec<&str> = upper
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        for kw in [
            "DROP", "TRUNCATE", "DELETE", "UPDATE", "ALTER", "GRANT", "REVOKE",
        ] {
            if words.contains(&kw) {
                out.push(format!("runs destructive SQL (`{kw}`) with `{program}`"));
            }
        }
        let runs_commands = upper.contains("\\!")
            || (words.contains(&"PROGRAM") && words.contains(&"COPY"))
            || upper.contains(".SHELL")
            || upper.contains(".SYSTEM")
            || upper.contains("SYSTEM ") && matches!(program, "mysql" | "mariadb");
        if runs_commands {
            out.push(format!("runs shell commands from SQL with `{program}`"));
        }
    }
    out
}

/// `chmod` modes that open files to everyone or set the setuid/setgid bit.
fn broad_mode(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|c| c.is_ascii_digit()) {
        let digits: Vec<u32> = mode.chars().filter_map(|c| c.to_digit(8)).collect();
        let others = digits.last().copied().unwrap_or(0);
        let special = if digits.len() == 4 { digits[0] } else { 0 };
        return others & 2 != 0 || special & 6 != 0;
    }
    mode.split(',').any(|clause| {
        let who: String = clause.chars().take_while(|c| "ugoa".contains(*c)).collect();
        let Some((_, perms)) = clause.split_once(['+', '=']) else {
            return false;
        };
        perms.contains('s') || ((who.contains('o') || who.contains('a')) && perms.contains('w'))
    })
}

fn dangerous_container(args: &[String], r: &mut Reasons) {
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str);
    if !matches!(sub, Some("run" | "create" | "exec")) {
        return;
    }
    let host_root = |v: &str| {
        v.starts_with("/:")
            || v == "/"
            || v.contains("source=/,")
            || v.contains("src=/,")
            || v.ends_with("source=/")
            || v.ends_with("src=/")
    };
    let volumes = option_values(args, &["--volume", "--mount"], &["-v"]);
    if args.iter().any(|a| {
        a == "--privileged"
            || a == "--pid=host"
            || a.starts_with("--cap-add=ALL")
            || a.starts_with("--cap-add=SYS_ADMIN")
            || a == "--userns=host"
    }) || volumes.iter().any(|v| host_root(v))
        || volumes.iter().any(|v| v.contains("docker.sock"))
    {
        r.add("runs a container with access to the host (`docker run --privileged`, `-v /:/…`)");
    }
}

/// A fork bomb: a function that pipes into itself (`:(){ :|:& };:`), seen as a command
/// piped into the same command where a function is defined, or `:` piped into `:`.
fn fork_bomb(analysis: &Analysis) -> bool {
    let defines_function = analysis
        .not_plain
        .iter()
        .any(|r| r.contains("function definition"));
    analysis.commands.windows(2).any(|pair| {
        let (a, b) = (&pair[0], &pair[1]);
        b.piped
            && !a.words.is_empty()
            && a.words.first() == b.words.first()
            && (defines_function || a.words[0] == ":")
    })
}

pub(super) fn dangerous_analysis(
    analysis: &Analysis,
    cx: &Context<'_>,
    r: &mut Reasons,
    depth: usize,
) {
    let own = cx.own;
    if fork_bomb(analysis) {
        r.add("fork bomb");
    }
    for redirect in &analysis.redirects {
        let t = redirect.target.as_str();
        if t.contains("/dev/tcp/") || t.contains("/dev/udp/") {
            r.add("opens a raw network connection (`/dev/tcp`, a reverse shell)");
        }
        if touches_own(t, own) {
            r.add(format!("touches execgate's own files (`{t}`)"));
        }
        if let Some(what) = touches_guard(t) {
            r.add(format!(
                "touches {what} (`{t}`), which an agent could use to switch its guard off"
            ));
        }
        if redirect.writes() {
            if is_device(t) && !t.starts_with("/dev/tcp/") && !t.starts_with("/dev/udp/") {
                r.add(format!("writes to a device (`{t}`)"));
            } else if is_sensitive(t) || paths::is_secret(t) {
                r.add(format!("writes to a sensitive file (`{t}`)"));
            }
        }
    }
    // SQL echoed into a client: `echo 'DROP TABLE t' | psql`.
    for pair in analysis.commands.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.piped
            && !b.words.is_empty()
            && a.words
                .first()
                .is_some_and(|p| matches!(base(p), "echo" | "printf"))
        {
            let text = a.words[1..].join(" ");
            for why in destructive_sql(&b.words, Some(&text)) {
                r.add(why);
            }
        }
    }
    let mut found = Vec::new();
    for seen in seen_of(analysis) {
        walk(seen, 0, &mut found);
    }
    for seen in &found {
        dangerous_command(seen, cx, r);
    }
    // Scripts looked into have their own redirects and fork bombs: `sh -c 'x > /etc/y'`.
    if depth < 2 {
        for seen in &found {
            for item in inner_commands(&seen.words) {
                if let Inner::Script(script) = item
                    && !script.trim().is_empty()
                {
                    dangerous_analysis(&parse::analyse(&script), cx, r, depth + 1);
                }
            }
            if let Some(body) = &seen.heredoc
                && SHELLS.contains(&base(&seen.words[0]))
            {
                dangerous_analysis(&parse::analyse(body), cx, r, depth + 1);
            }
        }
    }
}
