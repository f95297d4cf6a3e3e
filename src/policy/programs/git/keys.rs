//! git's configuration keys that make git run a program, or that change which program,
//! configuration, repository or transport git uses: the one table execgate keeps of
//! them. The git profile reads `-c NAME=VALUE` and `git config set` against it, the
//! danger rules name what it finds, and the repository reader (`policy::gitrepo`) judges
//! every file git would read by it and, in run mode, neutralises through `GIT_CONFIG_*`
//! what it can.

/// Which subsections a row covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sub {
    /// `section.key`, with no subsection.
    None,
    /// `section.<any>.key`.
    Any,
    /// Either.
    Either,
}

/// When a value makes the key matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Whatever its value.
    Always,
    /// When it is not a boolean (`core.fsmonitor = true` uses git's own daemon;
    /// `pager.log = false` turns the pager off).
    NotBoolean,
    /// When it starts with `!` (a shell command: `submodule.x.update = !cmd`).
    Bang,
    /// When it is false (`clean.requireForce = false` lets `git clean` delete unasked).
    False,
}

/// One key (or family of keys).
#[derive(Debug)]
pub struct ProgramKey {
    /// Lowercase, as git compares it.
    pub section: &'static str,
    pub sub: Sub,
    /// Lowercase; `*` for every key of the section.
    pub key: &'static str,
    pub when: When,
    /// What it makes git do, for a human: "runs a pager program".
    pub why: &'static str,
    /// How run mode takes its effect away.
    pub off: Off,
}

impl ProgramKey {
    /// Whether the key names a program git runs (rather than moving git to other files,
    /// URLs or transports, or loosening a check).
    pub fn runs_program(&self) -> bool {
        !matches!(
            (self.section, self.key),
            ("core", "worktree" | "attributesfile")
                | (
                    "url" | "protocol" | "include" | "includeif" | "init" | "clean",
                    _
                )
        )
    }
}

/// The value that takes a key's effect away in run mode, set through `GIT_CONFIG_*`
/// (which git reads above every file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Off {
    /// A value that behaves as git does when the key is not set: every run-mode git gets
    /// it, whatever execgate read (for keys without a subsection).
    Default(&'static str),
    /// A value that makes git fail where it would have run the program (an empty
    /// external diff: "cannot run"): given only where the key was found, since it breaks
    /// the command.
    Fails(&'static str),
    /// No value does: a repository that sets it is never run on policy's word.
    Never,
}

impl Off {
    /// The value to set where the key was found, if any.
    pub fn value(self) -> Option<&'static str> {
        match self {
            Off::Default(v) | Off::Fails(v) => Some(v),
            Off::Never => None,
        }
    }
}

const fn row(
    section: &'static str,
    sub: Sub,
    key: &'static str,
    when: When,
    why: &'static str,
    off: Off,
) -> ProgramKey {
    ProgramKey {
        section,
        sub,
        key,
        when,
        why,
        off,
    }
}

use Off::{Default, Fails, Never};
use Sub::{Any, Either};
use When::{Always, Bang, False, NotBoolean};

/// Every key execgate knows to make git run a program or reach elsewhere. Each `Default`
/// value was checked against git 2.47: `status`, `diff`, `log -p`, `commit`, `fetch`
/// and `show` run as usual and start no other program.
#[rustfmt::skip]
pub const PROGRAM_KEYS: &[ProgramKey] = &[
    row("core", Sub::None, "fsmonitor", NotBoolean, "runs a file-system monitor program", Default("false")),
    row("core", Sub::None, "hookspath", Always, "chooses where hooks are run from", Default("/dev/null")),
    row("core", Sub::None, "pager", Always, "runs a pager program", Default("cat")),
    row("core", Sub::None, "editor", Always, "runs an editor program", Default(":")),
    row("core", Sub::None, "sshcommand", Always, "runs an ssh program", Default("ssh")),
    row("core", Sub::None, "askpass", Always, "runs a password program", Default("")),
    row("core", Sub::None, "gitproxy", Always, "runs a proxy program", Default("")),
    row("core", Sub::None, "alternaterefscommand", Always, "runs a program to list alternate refs", Default("")),
    row("core", Sub::None, "worktree", Always, "moves the working tree elsewhere", Never),
    row("core", Sub::None, "attributesfile", Always, "reads attributes, which choose diff and filter drivers, from another file", Never),
    row("sequence", Sub::None, "editor", Always, "runs an editor program", Default(":")),
    row("diff", Sub::None, "external", Always, "runs an external diff program", Fails("")),
    row("diff", Sub::None, "tool", Always, "chooses a diff tool program", Never),
    row("diff", Any, "command", Always, "runs a diff driver program", Default("")),
    row("diff", Any, "textconv", Always, "runs a text conversion program", Fails("")),
    row("merge", Sub::None, "tool", Always, "chooses a merge tool program", Never),
    row("merge", Any, "driver", Always, "runs a merge driver program", Fails("")),
    row("filter", Any, "clean", Always, "runs a filter program", Default("")),
    row("filter", Any, "smudge", Always, "runs a filter program", Default("")),
    row("filter", Any, "process", Always, "runs a filter program", Default("")),
    row("pager", Either, "*", NotBoolean, "runs a pager program", Default("false")),
    row("alias", Either, "*", Always, "defines an alias, which changes what a git command runs", Fails("")),
    row("credential", Either, "helper", Always, "runs a credential helper program", Default("")),
    row("gpg", Sub::None, "program", Always, "runs a signing program", Default("gpg")),
    row("gpg", Any, "program", Always, "runs a signing program", Fails("")),
    row("gpg", Any, "defaultkeycommand", Always, "runs a program to choose a signing key", Fails("")),
    row("remote", Any, "uploadpack", Always, "runs a program for a remote", Never),
    row("remote", Any, "receivepack", Always, "runs a program for a remote", Never),
    row("remote", Any, "vcs", Always, "runs a remote helper program", Never),
    row("url", Any, "insteadof", Always, "rewrites remote URLs (possibly to a transport that runs a program)", Never),
    row("url", Any, "pushinsteadof", Always, "rewrites remote URLs (possibly to a transport that runs a program)", Never),
    row("protocol", Either, "allow", Always, "allows transports that may run programs", Never),
    row("uploadpack", Sub::None, "packobjectshook", Always, "runs a program", Default("")),
    row("submodule", Any, "update", Bang, "runs a program to update a submodule", Never),
    row("difftool", Any, "cmd", Always, "runs a diff tool program", Fails("")),
    row("difftool", Any, "path", Always, "runs a diff tool program", Fails("")),
    row("mergetool", Any, "cmd", Always, "runs a merge tool program", Fails("")),
    row("mergetool", Any, "path", Always, "runs a merge tool program", Fails("")),
    row("browser", Any, "cmd", Always, "runs a browser program", Fails("")),
    row("browser", Any, "path", Always, "runs a browser program", Fails("")),
    row("man", Any, "cmd", Always, "runs a manual viewer program", Fails("")),
    row("man", Any, "path", Always, "runs a manual viewer program", Fails("")),
    row("web", Sub::None, "browser", Always, "runs a browser program", Default("")),
    row("man", Sub::None, "viewer", Always, "runs a manual viewer program", Default("")),
    row("imap", Sub::None, "tunnel", Always, "runs a tunnel program", Default("")),
    row("sendemail", Either, "smtpserver", Always, "may name a mail program to run", Never),
    row("sendemail", Either, "sendmailcmd", Always, "runs a mail program", Fails("")),
    row("sendemail", Either, "tocmd", Always, "runs a program to choose recipients", Fails("")),
    row("sendemail", Either, "cccmd", Always, "runs a program to choose recipients", Fails("")),
    row("sendemail", Either, "headercmd", Always, "runs a program to add headers", Fails("")),
    row("trailer", Any, "command", Always, "runs a program to make a trailer", Fails("")),
    row("trailer", Any, "cmd", Always, "runs a program to make a trailer", Fails("")),
    row("interactive", Sub::None, "difffilter", Always, "runs a filter program", Default("")),
    row("lfs", Any, "path", Always, "runs a transfer program", Fails("")),
    row("clean", Sub::None, "requireforce", False, "lets `git clean` delete without `-f`", Default("true")),
    row("include", Sub::None, "path", Always, "reads another configuration file", Never),
    row("includeif", Any, "path", Always, "reads another configuration file", Never),
    row("init", Sub::None, "templatedir", Always, "copies hooks from another directory into new repositories", Never),
];

/// A name split as git splits it: section and key (lowercased), and the subsection
/// between them as written (`diff.Ev.textconv`: `diff`, `Ev`, `textconv`).
fn split(name: &str) -> Option<(String, Option<&str>, String)> {
    let (section, rest) = name.split_once('.')?;
    let (sub, key) = match rest.rsplit_once('.') {
        Some((sub, key)) => (Some(sub), key),
        None => (None, rest),
    };
    Some((section.to_ascii_lowercase(), sub, key.to_ascii_lowercase()))
}

fn boolean(value: Option<&str>) -> Option<bool> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        // A bare key (no `=`) is true.
        None | Some("true" | "yes" | "on" | "1") => Some(true),
        Some("false" | "no" | "off" | "0" | "") => Some(false),
        _ => None,
    }
}

impl ProgramKey {
    /// Whether the row covers `name` (as git names it), whatever its value.
    fn covers(&self, section: &str, sub: Option<&str>, key: &str) -> bool {
        section == self.section
            && (self.key == "*" || key == self.key)
            && match self.sub {
                Sub::None => sub.is_none(),
                Any => sub.is_some(),
                Either => true,
            }
    }

    /// Whether `value` makes the key matter; an unknown value (`None` from a caller that
    /// cannot see it) always does.
    fn matters(&self, value: Option<Option<&str>>) -> bool {
        let Some(value) = value else {
            return true;
        };
        match self.when {
            Always => true,
            NotBoolean => boolean(value).is_none(),
            Bang => value.is_some_and(|v| v.trim_start().starts_with('!')),
            False => boolean(value) == Some(false),
        }
    }
}

/// The row a key with this value falls under, if any. `value`: `Some(None)` for a bare
/// key (true), `Some(Some(v))` for a value, `None` when the value is not known (a
/// command that names a key only): then every row covering the name counts.
pub fn program_key(name: &str, value: Option<Option<&str>>) -> Option<&'static ProgramKey> {
    let (section, sub, key) = split(name)?;
    PROGRAM_KEYS
        .iter()
        .find(|row| row.covers(&section, sub, &key) && row.matters(value))
}

/// The keys that can be neutralised without knowing which subsections a repository
/// uses: every run-mode git gets these whatever execgate read, so a file that changes
/// after it was read cannot bring them back (`GIT_CONFIG_*`, docs/decisions.md).
pub fn always_neutralised() -> impl Iterator<Item = (String, &'static str)> {
    PROGRAM_KEYS
        .iter()
        .filter_map(|row| match (row.sub, row.key, row.off) {
            (Sub::None, key, Default(value)) if key != "*" => {
                Some((format!("{}.{}", row.section, key), value))
            }
            _ => None,
        })
}

/// Keys whose value commonly carries credentials: printing them prints a secret.
pub fn may_hold_token(name: &str) -> bool {
    let k = name.to_ascii_lowercase();
    k.contains("extraheader")
        || k.contains("token")
        || k.contains("password")
        || k.contains("secret")
        || k.starts_with("credential")
        || k.starts_with("url.")
        || (k.starts_with("remote.") && (k.ends_with(".url") || k.ends_with(".pushurl")))
        || k.starts_with("http.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values() {
        let p = |n: &str, v: &str| program_key(n, Some(Some(v))).is_some();
        assert!(p("core.fsmonitor", "/tmp/x"));
        assert!(!p("core.fsmonitor", "true"));
        assert!(!p("core.fsmonitor", "false"));
        assert!(
            program_key("core.fsmonitor", Some(None)).is_none(),
            "bare: true"
        );
        assert!(p("core.hooksPath", ".husky"));
        assert!(p("diff.external", "x"));
        assert!(p("diff.ev.textconv", "x"));
        assert!(p("Diff.Ev.TextConv", "x"));
        assert!(!p("diff.textconv", "x"), "textconv needs a driver");
        assert!(p("merge.x.driver", "x"));
        assert!(p("filter.lfs.process", "git-lfs filter-process"));
        assert!(p("alias.st", "status"));
        assert!(p("pager.log", "less"));
        assert!(!p("pager.log", "false"));
        assert!(p("credential.helper", "store"));
        assert!(p("credential.https://x.helper", "store"));
        assert!(p("url.ext::sh.insteadof", "https://"));
        assert!(p("clean.requireforce", "false"));
        assert!(!p("clean.requireforce", "true"));
        assert!(p("submodule.x.update", "!sh"));
        assert!(!p("submodule.x.update", "checkout"));
        assert!(!p("user.name", "x"));
        assert!(!p("remote.origin.url", "https://x"));
        assert!(!p("core.bare", "false"));
        // A value not known: every row covering the name.
        let any = |n: &str| program_key(n, None);
        assert!(any("core.fsmonitor").is_some_and(|k| k.runs_program()));
        assert!(any("submodule.x.update").is_some());
        assert!(any("include.path").is_some_and(|k| !k.runs_program()));
        assert!(any("user.email").is_none());
    }

    #[test]
    fn the_table_is_well_formed() {
        for row in PROGRAM_KEYS {
            assert_eq!(row.section, row.section.to_ascii_lowercase(), "{row:?}");
            assert_eq!(row.key, row.key.to_ascii_lowercase(), "{row:?}");
            assert!(!row.why.is_empty(), "{row:?}");
        }
        let always: Vec<String> = always_neutralised().map(|(k, _)| k).collect();
        for key in [
            "core.fsmonitor",
            "core.hookspath",
            "core.pager",
            "core.editor",
        ] {
            assert!(always.iter().any(|k| k == key), "{key}");
        }
        assert!(!always.iter().any(|k| k.starts_with("alias")));
        // An empty external diff makes `git diff` fail: given only where it was found.
        assert!(!always.iter().any(|k| k == "diff.external"));
    }
}
