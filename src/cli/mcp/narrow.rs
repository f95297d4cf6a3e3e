//! `ALLOWED_COMMANDS` and `ALLOWED_CWD_ROOTS`: what the MCP server's own environment
//! lets it ask for (docs/mcp.md#narrowing-what-the-server-asks-for).
//!
//! Both only narrow. They are checked before the daemon is asked, and a call they refuse
//! is never sent; a call they let through is judged by the daemon's whole pipeline as
//! any other request, so they can never approve anything nor widen the daemon's policy.

use std::path::{Path, PathBuf};

use crate::model::Command;
use crate::policy::parse;

/// What the server may ask for, read once from its environment at start.
#[derive(Debug)]
pub struct Narrowing {
    /// `None`: every program (`ALLOWED_COMMANDS` unset, empty or `*`).
    commands: Option<Vec<String>>,
    /// Empty: any existing directory. Each entry as written; resolved on every check,
    /// so a root created or fixed after the server started counts.
    roots: Vec<PathBuf>,
}

impl Narrowing {
    pub fn from_env() -> Narrowing {
        Narrowing::new(
            std::env::var("ALLOWED_COMMANDS").ok().as_deref(),
            std::env::var_os("ALLOWED_CWD_ROOTS")
                .map(|r| r.to_string_lossy().into_owned())
                .as_deref(),
        )
    }

    /// From the two variables' values: comma-separated lists, blanks around entries
    /// and empty entries ignored.
    pub fn new(commands: Option<&str>, roots: Option<&str>) -> Narrowing {
        let list = |s: &str| -> Vec<String> {
            s.split(',')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(String::from)
                .collect()
        };
        let commands = commands
            .map(list)
            .filter(|l| !l.is_empty() && !l.iter().any(|e| e == "*"));
        Narrowing {
            commands,
            roots: roots
                .map(list)
                .unwrap_or_default()
                .into_iter()
                .map(PathBuf::from)
                .collect(),
        }
    }

    /// Refuses a command whose programs are not all in `ALLOWED_COMMANDS`.
    ///
    /// A shell line names every program it may run: each simple command's first word,
    /// those inside substitutions, subshells and compound commands included, compared
    /// exactly (`/bin/ls` is not `ls`). A line whose programs cannot all be known (a
    /// parse error, or one of the analyser's bounds) is refused, as is a program that
    /// is an expansion (`$X`), which no entry names.
    pub fn command(&self, command: &Command) -> Result<(), String> {
        let Some(allowed) = &self.commands else {
            return Ok(());
        };
        let listed = || allowed.join(",");
        let programs: Vec<String> = match command {
            Command::Argv(argv) => argv.iter().take(1).cloned().collect(),
            Command::Line(line) => {
                let analysis = parse::analyse(line);
                if analysis.partial {
                    return Err(format!(
                        "the command cannot be read whole ({}), so this server cannot tell that it runs only programs in ALLOWED_COMMANDS ({}); nothing was asked and nothing ran",
                        analysis.not_plain.join("; "),
                        listed()
                    ));
                }
                analysis
                    .commands
                    .into_iter()
                    .filter_map(|c| c.words.into_iter().next())
                    .collect()
            }
            // Tool calls name no program; the daemon's tool pipeline judges them.
            Command::Tool(_) => return Ok(()),
        };
        if programs.is_empty() {
            return Err(format!(
                "the command runs no program this server can name, and ALLOWED_COMMANDS ({}) allows only named ones; nothing was asked and nothing ran",
                listed()
            ));
        }
        match programs.iter().find(|p| !allowed.contains(p)) {
            None => Ok(()),
            Some(p) => Err(format!(
                "command not allowed: {:?} is not in ALLOWED_COMMANDS ({}), the list this MCP server may ask for; nothing was asked and nothing ran",
                crate::text::clip_chars(p, 80),
                listed()
            )),
        }
    }

    /// The working directory to ask for: `cwd` resolved against `here` (the server's own
    /// working directory) when relative, canonical (`..` and symlinks resolved), an
    /// existing directory, and inside an `ALLOWED_CWD_ROOTS` entry when any are set. A
    /// root that cannot be resolved refuses every call that gives a `cwd`.
    pub fn cwd(&self, cwd: &str, here: &Path) -> Result<PathBuf, String> {
        let given = Path::new(cwd);
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            here.join(given)
        };
        let shown = crate::text::clip_chars(cwd, 200);
        let canonical = joined.canonicalize().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "`cwd` {shown:?} does not exist (relative paths are taken from the server's working directory, {}); nothing was asked and nothing ran",
                here.display()
            ),
            _ => format!("`cwd` {shown:?} cannot be resolved: {e}; nothing was asked and nothing ran"),
        })?;
        if !canonical.is_dir() {
            return Err(format!(
                "`cwd` {shown:?} is not a directory; nothing was asked and nothing ran"
            ));
        }
        if self.roots.is_empty() {
            return Ok(canonical);
        }
        let mut inside = false;
        for root in &self.roots {
            match root.canonicalize() {
                Ok(r) => inside |= canonical.starts_with(&r),
                Err(e) => {
                    return Err(format!(
                        "configuration error: ALLOWED_CWD_ROOTS entry {} cannot be resolved ({e}); calls that give a `cwd` are refused until it is fixed; nothing was asked and nothing ran",
                        root.display()
                    ));
                }
            }
        }
        if inside {
            Ok(canonical)
        } else {
            Err(format!(
                "`cwd` not allowed: {} is not inside ALLOWED_CWD_ROOTS ({}); nothing was asked and nothing ran",
                canonical.display(),
                self.roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: &str) -> Command {
        Command::Line(s.into())
    }

    #[test]
    fn unset_empty_and_star_narrow_nothing() {
        for commands in [None, Some(""), Some(" , "), Some("*"), Some("ls,*")] {
            let n = Narrowing::new(commands, None);
            assert_eq!(n.command(&line("rm -rf /; pwd")), Ok(()), "{commands:?}");
        }
    }

    #[test]
    fn every_program_of_a_line_must_be_listed() {
        let n = Narrowing::new(Some("ls, cat"), None);
        for ok in [
            "ls",
            "ls -la /tmp",
            "cat a | ls",
            "ls && cat x",
            "ls $(cat f)",
            "'l's",
        ] {
            assert_eq!(n.command(&line(ok)), Ok(()), "{ok}");
        }
        for refused in [
            "pwd",
            "ls; pwd",
            "ls | sh",
            "ls $(rm -rf ~)",
            "ls `id`",
            "(ls; id)",
            "/bin/ls",
            "$X",
            "ls && { cat; rm x; }",
            "ls '",
            "FOO=1 env ls",
            "ls\nrm x",
            "ls # \nrm x",
            "ls & rm x",
            "cat <<EOF\n$(rm -rf x)\nEOF",
            "cat <<< \"$(rm x)\"",
            "f() { rm x; }; f",
            "ls >(rm x)",
            "exec ls",
        ] {
            assert!(n.command(&line(refused)).is_err(), "{refused}");
        }
        let why = n.command(&line("pwd")).unwrap_err();
        assert!(
            why.contains("\"pwd\" is not in ALLOWED_COMMANDS (ls,cat)"),
            "{why}"
        );
    }

    #[test]
    fn argv_is_judged_by_its_program() {
        let n = Narrowing::new(Some("echo"), None);
        let argv = |a: &[&str]| Command::Argv(a.iter().map(|s| s.to_string()).collect());
        assert_eq!(n.command(&argv(&["echo", "$(rm -rf /)"])), Ok(()));
        assert!(n.command(&argv(&["python3", "-c", "print(1)"])).is_err());
    }

    #[test]
    fn cwd_is_resolved_and_kept_inside_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("repo/frontend")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), root.join("repo/link")).unwrap();
        let roots = root.join("repo").display().to_string();
        let n = Narrowing::new(None, Some(&roots));
        assert_eq!(
            n.cwd("frontend", &root.join("repo")),
            Ok(root.join("repo/frontend"))
        );
        assert_eq!(
            n.cwd(
                &root.join("repo/frontend").display().to_string(),
                Path::new("/")
            ),
            Ok(root.join("repo/frontend"))
        );
        // Out through a symlink, or `..`, is outside.
        assert!(
            n.cwd("link", &root.join("repo"))
                .unwrap_err()
                .contains("not inside")
        );
        assert!(
            n.cwd("frontend/../..", &root.join("repo"))
                .unwrap_err()
                .contains("not inside")
        );
        assert!(n.cwd("nope", &root).unwrap_err().contains("does not exist"));
        // No roots: any existing directory.
        let open = Narrowing::new(None, Some(""));
        assert_eq!(open.cwd("outside", &root), Ok(root.join("outside")));
        // A root that cannot be resolved refuses every cwd, even one inside another root.
        let broken = Narrowing::new(None, Some(&format!("{roots},/does/not/exist")));
        let why = broken.cwd("frontend", &root.join("repo")).unwrap_err();
        assert!(
            why.starts_with("configuration error: ALLOWED_CWD_ROOTS"),
            "{why}"
        );
    }
}
