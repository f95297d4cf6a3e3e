//! Whether what a program did agrees with execgate calling it harmless: it ran nothing
//! but itself (and the helpers its profile names), wrote nothing (`/dev/null` and the
//! terminal aside), reached no network, read none of the sandbox's secrets and nothing
//! else of the user's files but what execgate said it reads, and ended within its time
//! limit.

use std::path::{Path, PathBuf};

use super::sandbox::Sandbox;
use super::trace::Trace;

/// One way a run disagrees with "harmless".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disagreement {
    /// Another program was executed: its path and words.
    Ran(PathBuf, Vec<String>),
    /// A file was (or would have been) written, created, removed, renamed or changed.
    Wrote(String, PathBuf),
    /// A socket was used.
    Sent(String),
    /// A decoy secret was read.
    ReadSecret(PathBuf),
    /// A file was read that execgate did not say the command reads.
    ReadUnsaid(PathBuf),
    /// It did not end within its time limit (a hang or a flood): to look at.
    TimedOut,
    /// The tracer could not run it.
    NotRun(String),
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Disagreement::Ran(path, words) => write!(f, "ran {} {words:?}", path.display()),
            Disagreement::Wrote(call, path) => write!(f, "{call} {}", path.display()),
            Disagreement::Sent(call) => write!(f, "used a socket: {call}"),
            Disagreement::ReadSecret(path) => write!(f, "read the secret {}", path.display()),
            Disagreement::ReadUnsaid(path) => {
                write!(f, "read {}, which execgate did not say", path.display())
            }
            Disagreement::TimedOut => write!(f, "did not end within its time limit"),
            Disagreement::NotRun(why) => write!(f, "could not be run: {why}"),
        }
    }
}

/// Where a write is no write: the bit bucket and the terminal.
const NOT_WRITES: &[&str] = &["/dev/null", "/dev/tty", "/dev/pts/"];

/// git's optional lock: `git status` refreshes the index's cached file times when it
/// can, through `index.lock` (`GIT_OPTIONAL_LOCKS`, `--no-optional-locks`). A cache of
/// git's own, not a change to the repository's content.
fn gits_optional_lock(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "index.lock")
        && path.components().any(|c| c.as_os_str() == ".git")
}

/// What execgate said of a command beyond "harmless", which the run is held to.
#[derive(Debug, Default)]
pub struct Claim<'a> {
    /// A human is asked, shown what it reads: a secret among its reads (under a
    /// directory it reads whole) is then said. Approved without a human, no secret is.
    pub asked: bool,
    /// The programs its profile says it starts itself (`gzip` for `gunzip`): one of them,
    /// installed on the system, is no disagreement.
    pub helpers: &'a [&'a str],
    /// What it reads of the user's files, as real paths: a file, or a directory and
    /// everything under it. `None`: reads are not judged (only the secrets).
    pub reads: Option<Vec<PathBuf>>,
    /// Directories whose names (not their files) it may list: the working directory,
    /// where a program given no operand looks (`ls`).
    pub lists: Vec<PathBuf>,
    /// What its profile says it keeps for itself (`Profile::keeps`), as real paths: it
    /// may write under them, and make the directories on the way.
    pub keeps: Vec<PathBuf>,
    /// Its service's local sockets (`Profile::sockets`): it may connect to them.
    pub sockets: &'a [&'a str],
    /// It runs until stopped (`tail -f`): reaching the time limit is what it does.
    pub endless: bool,
    /// Its profile says it asks the network by itself (`Profile::phones_home`): a name
    /// lookup and an HTTPS connection are what it does.
    pub phones_home: bool,
}

/// Where a read is the user's, held to what execgate said: the sandbox, and the places
/// other files of users live. Elsewhere (`/usr`, `/etc`, `/proc`, …) a program reads
/// its own system files.
const USERS_FILES: &[&str] = &["/tmp/", "/var/tmp/", "/home/", "/root/"];

/// Everything in `trace` that disagrees with "harmless" and with `claim`, in the order
/// found.
pub fn judge(trace: &Trace, sandbox: &Sandbox, claim: &Claim<'_>) -> Vec<Disagreement> {
    let helpers = claim.helpers;
    let mut out = Vec::new();
    if let Some(why) = &trace.trouble {
        out.push(Disagreement::NotRun(why.clone()));
    }
    // The first execve is the program itself.
    let program = trace.execs.first().map(|(path, _)| path.clone());
    let is_git = program
        .as_ref()
        .is_some_and(|p| p.file_name().is_some_and(|n| n == "git"));
    for (path, words) in trace.execs.iter().skip(1) {
        // The system's programs (`/lib` and `/sbin` are `/usr`'s, merged, on Debian).
        let system = ["/usr/", "/bin/", "/sbin/", "/lib/"]
            .iter()
            .any(|d| path.starts_with(d));
        // A helper is named whole, or by a prefix and `*` (`git-*`: git's own commands).
        let named = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            helpers.iter().any(|h| match h.strip_suffix('*') {
                Some(prefix) => n.starts_with(prefix),
                None => n == *h,
            })
        });
        let ran = Disagreement::Ran(path.clone(), words.clone());
        let allowed = system && named;
        if !allowed && !out.contains(&ran) {
            out.push(ran);
        }
    }
    // Scratch files: made in the system's temporary directory and removed again by the
    // same run (`sort` merges through `/tmp/sortXXXXXX`). Nothing of them is left.
    let removed: Vec<&PathBuf> = trace
        .writes
        .iter()
        .filter(|(call, _)| call.starts_with("unlink"))
        .map(|(_, path)| path)
        .collect();
    let scratch = |path: &PathBuf| path.starts_with("/tmp/") && removed.contains(&path);
    for (call, path) in &trace.writes {
        if scratch(path) {
            continue;
        }
        let text = path.to_string_lossy();
        let kept = claim
            .keeps
            .iter()
            .any(|k| path.starts_with(k) || (k.starts_with(path) && call.starts_with("mkdir")));
        let allowed = NOT_WRITES
            .iter()
            .any(|w| text == *w || (w.ends_with('/') && text.starts_with(w)))
            || (is_git && gits_optional_lock(path))
            || kept;
        if !allowed {
            out.push(Disagreement::Wrote(call.clone(), path.clone()));
        }
    }
    for call in &trace.net {
        let own = claim
            .sockets
            .iter()
            .any(|s| call.starts_with("connect(") && call.contains(&format!("sun_path=\"{s}\"")));
        let allowed = local(call) || own || (claim.phones_home && lookup_or_https(call));
        if !allowed {
            out.push(Disagreement::Sent(call.clone()));
        }
    }
    // A read is recorded by the file it opened (strace's `-yy`: links followed), so it
    // is compared with the secrets' own real paths.
    let secrets: Vec<PathBuf> = sandbox
        .secrets()
        .into_iter()
        .map(|s| s.canonicalize().unwrap_or(s))
        .collect();
    let root = sandbox
        .root()
        .canonicalize()
        .unwrap_or(sandbox.root().into());
    for read in &trace.reads {
        let users = read.starts_with(&root) || USERS_FILES.iter().any(|d| read.starts_with(d));
        // A directory on the way to what it said it reads is opened to reach it (`find
        // src` opens `.`); its names are not the files' contents.
        let claimed = claim.reads.as_ref().is_some_and(|said| {
            said.iter()
                .any(|s| read.starts_with(s) || (s.starts_with(read) && read.is_dir()))
                || claim.lists.contains(read)
        });
        // A scratch file of its own (`sort -m` reads back what it wrote to /tmp).
        if scratch(read) {
            continue;
        }
        let seen = if secrets.contains(read) {
            (!(claim.asked && claimed)).then(|| Disagreement::ReadSecret(read.clone()))
        } else {
            (claim.reads.is_some() && users && !claimed)
                .then(|| Disagreement::ReadUnsaid(read.clone()))
        };
        if let Some(seen) = seen
            && !out.contains(&seen)
        {
            out.push(seen);
        }
    }
    if trace.timed_out && !claim.endless {
        out.push(Disagreement::TimedOut);
    }
    out
}

/// A connection (or datagram) to a name server or an HTTPS port.
fn lookup_or_https(call: &str) -> bool {
    ["connect(", "sendto(", "sendmsg("]
        .iter()
        .any(|c| call.starts_with(c))
        && (call.contains("sin6_port=htons(53)")
            || call.contains("sin_port=htons(53)")
            || call.contains("sin6_port=htons(443)")
            || call.contains("sin_port=htons(443)"))
}

/// A socket call that reaches nothing outside the machine: the C library asking the
/// name service cache for a user's name (`ls -l`); a netlink query of the kernel's own
/// tables (`hostname -I` lists the addresses); binding the loopback address to port 0,
/// which Python's libraries do to learn whether IPv6 is there; a message on a Unix
/// socket with no address (a pair the program made itself: curl's resolver thread
/// signals through one), where strace's `-yy` names the socket's kind.
fn local(call: &str) -> bool {
    let unaddressed_unix = (call.starts_with("sendto(") || call.starts_with("sendmsg("))
        && call.contains("<UNIX")
        && !call.contains("sun_path");
    unaddressed_unix
        || (call.contains("AF_UNIX") && call.contains("nscd"))
        || call.contains("AF_NETLINK")
        || (call.starts_with("bind(")
            && call.contains("port=htons(0)")
            && (call.contains("\"::1\"") || call.contains("inet_addr(\"127.0.0.1\")")))
}
