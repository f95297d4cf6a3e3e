//! Programs that can start a shell or run commands, which execgate has no profile for
//! and no option table in `code` either: runners, named here so that a glob's wildcard
//! over one refuses what it could run (docs/decisions.md, "Globs over programs execgate
//! does not know").
//!
//! Derived from GTFOBins (<https://gtfobins.github.io>; repository
//! `GTFOBins/GTFOBins.github.io`, its `_gtfobins/` entries at commit 7382261e of
//! 2026-04-20, read on 2026-11-28): every program listed with a `shell` or `command`
//! function, and every entry that is an `alias` of one or `inherit`s one (`rview` is
//! `view`, `journalctl` opens `less`), less the programs execgate has a profile for
//! (`programs/`: their profiles read the words that run code, `find -exec`, `git -c`,
//! `tar --to-command`, …) and those `code` already knows as shells, interpreters and
//! wrappers. Only the names and a sorting are taken; the test below keeps the three
//! homes apart, so each program's being a runner is written in one place.

/// How a runner's words lead to code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runner {
    /// Its operands are code: a script, a source file, a class, a manifest, SQL (`java
    /// Main`, `guile x.scm`, `gcc x.c`, `sqlite3 db '.shell id'`). The wildcard covers
    /// none of them.
    Code,
    /// Its words name a program it starts (`tmux new sh`, `setarch x86_64 /bin/sh`,
    /// `run-parts DIR`): wrappers, terminal multiplexers, schedulers. The wildcard
    /// covers no path, since the file may be made after the request is approved.
    Starts,
    /// It reaches a shell another way: from a prompt or a pager (`less`, `vim`, `ftp`,
    /// `mysql`), through an option (`rsync -e`, `zip -TT`), a hook, a configuration
    /// file or a plugin.
    Escapes,
}

/// Interpreters, REPLs, compilers and tools whose input is a program.
#[rustfmt::skip]
const CODE: &[&str] = &[
    "ansible-playbook", "bee", "bpftrace", "byebug", "c89", "c99", "cc", "clisp", "cobc",
    "crontab", "dc", "dotnet", "elvish", "g++", "gcc", "ghc", "ghci", "ginsh", "gnuplot",
    "guile", "irb", "java", "jjs", "jrunscript", "jshell", "latex", "logrotate",
    "lualatex", "luatex", "m4", "msfconsole", "octave", "pdb", "pdflatex", "pdftex",
    "posh", "procmail", "pry", "puppet", "rc", "sash", "slsh", "sqlite3", "tasksh", "tex",
    "xelatex", "xetex",
];

/// Wrappers, multiplexers and launchers: what follows their options is often a command.
#[rustfmt::skip]
const STARTS: &[&str] = &[
    "aa-exec", "agetty", "aoss", "arch-nspawn", "check_by_ssh", "choom", "cpulimit",
    "distcc", "genie", "gtester", "ksu", "ld.so", "logsave", "mosh-server", "msgfilter",
    "multitime", "openvt", "pexec", "pidstat", "run-parts", "screen", "service", "setarch",
    "setlock", "ssh-agent", "sshpass", "tmate", "tmux", "torify",
];

/// Pagers, editors, clients, package and build tools, and the rest GTFOBins lists.
#[rustfmt::skip]
const ESCAPES: &[&str] = &[
    "acr", "ansible-test", "apport-cli", "apt", "apt-get", "aptitude", "aria2c",
    "asterisk", "autoconf", "autoheader", "autoreconf", "aws", "bashbug", "batcat",
    "bconsole", "borg", "bundle", "bundler", "busctl", "cabal", "cdist", "certbot",
    "check_ssl_cert", "cmake", "codex", "composer", "cowsay", "cowthink", "cpan", "cpio",
    "crash", "csvtool", "ctr", "debugfs", "dhclient", "dmesg", "dmsetup", "dnf", "dnsmasq",
    "dpkg", "dstat", "dvips", "easy_install", "easyrsa", "eb", "ed", "emacs", "enscript",
    "ex", "exiftool", "facter", "fail2ban-client", "fastfetch", "forge", "ftp", "fzf",
    "gcloud", "gem", "gimp", "go", "grc", "hg", "hping3", "iftop", "ip", "ispell", "joe",
    "journalctl", "jtag", "knife", "latexmk", "less", "lftp", "loginctl", "lxd", "mail",
    "man", "minicom", "more", "mysql", "nano", "ncdu", "ncftp", "needrestart", "neofetch",
    "nmap", "nroff", "nvim", "opencode", "openvpn", "opkg", "pandoc", "perlbug", "pg",
    "pic", "pico", "pipx", "pkg", "plymouth", "podman", "poetry", "psftp", "psql", "rake",
    "ranger", "red", "restic", "rpm", "rpmdb", "rpmquery", "rpmverify", "rsync",
    "rsyslogd", "rtorrent", "run-mailcap", "runscript", "rustc", "rustup", "rview", "rvim",
    "scanmem", "scp", "scrot", "sftp", "smbclient", "snap", "socat", "split", "sqlmap", "sshfs",
    "sshuttle", "sysctl", "systemd-resolve", "task", "tcpdump", "tdbtool", "telnet",
    "timedatectl", "top", "tshark", "uv", "vagrant", "vi", "view", "vigr", "vim",
    "vimdiff", "vipw", "virsh", "volatility", "wg-quick", "wireshark", "xdg-user-dir",
    "xdotool", "yt-dlp", "yum", "zathura", "zic", "zip", "zless", "zypper",
];

/// The programs GTFOBins lists with a `shell` or `command` function that are not in
/// this table because execgate has a profile of them, whose profile reads the words
/// that run code: a program whose profile goes away belongs in the table.
#[cfg(test)]
#[rustfmt::skip]
const PROFILED_INSTEAD: &[&str] = &[
    "awk", "cargo", "docker", "find", "gawk", "git", "kubectl", "make", "mawk", "nawk", "npm",
    "pip", "python", "sed", "systemctl", "tar", "wget", "yarn",
];

/// The same, for the shells, interpreters and wrappers `code` reads through.
#[cfg(test)]
#[rustfmt::skip]
const IN_CODE_INSTEAD: &[&str] = &[
    "R", "ash", "at", "bash", "busybox", "capsh", "chroot", "chrt", "csh", "dash", "doas",
    "env", "expect", "firejail", "fish", "flock", "gdb", "ionice", "julia", "ksh", "ltrace",
    "lua", "nice", "node", "nohup", "nsenter", "perf", "perl", "php", "pkexec", "pwsh",
    "rlwrap", "ruby", "script", "sg", "softlimit", "ssh", "start-stop-daemon",
    "stdbuf", "strace", "su", "sudo", "systemd-run", "taskset", "tclsh", "tcsh", "time",
    "timeout", "torsocks", "unshare", "valgrind", "watch", "wish", "xargs", "yash", "zsh",
];

/// What kind of runner a program is (by name, its directory stripped), if it is one of
/// this table's.
pub fn runner(program: &str) -> Option<Runner> {
    let name = super::base(program);
    [
        (CODE, Runner::Code),
        (STARTS, Runner::Starts),
        (ESCAPES, Runner::Escapes),
    ]
    .into_iter()
    .find_map(|(names, kind)| names.contains(&name).then_some(kind))
}

/// Every name in the table, for tests and docs.
#[cfg(test)]
fn all() -> impl Iterator<Item = &'static str> {
    CODE.iter().chain(STARTS).chain(ESCAPES).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_runner_is_written_in_one_place() {
        let mut seen = std::collections::HashSet::new();
        for name in all() {
            assert!(seen.insert(name), "{name} is in the table twice");
            // A profile reads the words that run code itself; `code` knows its options.
            assert!(
                !crate::policy::programs::is_profiled(name),
                "{name} has a profile: its profile decides, not this table"
            );
            assert!(
                !super::super::is_wrapper_or_interpreter(name),
                "{name} is already a shell, interpreter or wrapper in `code`"
            );
        }
        for list in [CODE, STARTS, ESCAPES] {
            assert!(list.is_sorted(), "keep each list sorted: {list:?}");
        }
    }

    /// Every program of the catalogue is in exactly one home: this table, a profile, or
    /// `code`.
    #[test]
    fn what_the_table_leaves_out_is_known_elsewhere() {
        for name in PROFILED_INSTEAD {
            assert!(
                crate::policy::programs::is_profiled(name),
                "{name} has no profile any more: it belongs in the table"
            );
        }
        for name in IN_CODE_INSTEAD {
            assert!(
                super::super::is_wrapper_or_interpreter(name),
                "{name} is not a shell, interpreter or wrapper in `code`: it belongs in the table"
            );
        }
        let everything: Vec<&str> = all()
            .chain(PROFILED_INSTEAD.iter().copied())
            .chain(IN_CODE_INSTEAD.iter().copied())
            .collect();
        assert_eq!(
            everything.len(),
            311,
            "the catalogue's 311 programs, each once"
        );
    }

    #[test]
    fn the_programs_of_finding_5_are_runners() {
        for (name, kind) in [
            ("screen", Runner::Starts),
            ("tmux", Runner::Starts),
            ("/usr/bin/tmux", Runner::Starts),
            ("java", Runner::Code),
            ("guile", Runner::Code),
            ("cpulimit", Runner::Starts),
            ("setarch", Runner::Starts),
            ("ssh-agent", Runner::Starts),
            ("sshpass", Runner::Starts),
            ("run-parts", Runner::Starts),
            ("elvish", Runner::Code),
            ("less", Runner::Escapes),
        ] {
            assert_eq!(runner(name), Some(kind), "{name}");
        }
        for name in ["ls", "git", "bash", "timeout", "frobnicate"] {
            assert_eq!(runner(name), None, "{name}");
        }
    }
}
