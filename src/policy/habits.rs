//! How agents write commands, taken off so that what runs is judged where it runs: a
//! `cd DIR &&` in front (the rest runs in DIR), and a shell started to run one script
//! (`bash -lc 'SCRIPT'`: the script is what runs). Each is taken off only when it is
//! understood whole, and then the rest is judged as a command of its own, in the
//! directory it will run in (docs/decisions.md, "Agents' habits").
//!
//! `cd DIR` is understood when DIR is a plain word that leads, as the shell's logical
//! `cd` takes it and as the kernel resolves it alike, to a directory inside the request's
//! project. If `cd` could fail and the rest still run (after `;`, or a later `||`),
//! the rest must also pass where it would then run: in the directory it started in.

use std::path::{Path, PathBuf};

use super::parse;
use super::paths::lexically_normal;
use crate::model::Shell;

/// The command inside the habit, and where it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inner {
    /// The rest of the line, or the script.
    pub line: String,
    /// Where the rest runs, when a `cd` moved it.
    pub cwd: Option<PathBuf>,
    /// The rest may also run where the line started (`cd` failed before `;` or `||`).
    pub also_where_it_started: bool,
    /// What was taken off, for the human: "`cd web`: into `web`, inside the project".
    pub taken: String,
}

/// The command inside `line`'s habit, if it has one execgate understands. `Err`: it has
/// one that is not understood (a `cd` out of the project, or to nowhere), with why.
/// `shells`: what `line` runs under; `cwd` and `project` where it starts.
pub fn inner(
    line: &str,
    shells: &[Shell],
    cwd: Option<&Path>,
    project: Option<&Path>,
) -> Result<Option<Inner>, String> {
    let analysis = parse::analyse_for(line, shells);
    if !analysis.plain() {
        return Ok(None);
    }
    let Some(first) = analysis.commands.first() else {
        return Ok(None);
    };
    match first.words.first().map(String::as_str) {
        Some("cd") => cd(line, &first.words, cwd, project),
        Some(program) => Ok(script(program, &first.words, analysis.commands.len())),
        None => Ok(None),
    }
}

/// `cd DIR && REST` (or `; REST`).
fn cd(
    line: &str,
    words: &[String],
    cwd: Option<&Path>,
    project: Option<&Path>,
) -> Result<Option<Inner>, String> {
    let Some((_, op, rest)) = first_operator(line) else {
        return Ok(None);
    };
    if !matches!(op, "&&" | ";") || rest.trim().is_empty() {
        return Ok(None);
    }
    let dir = match words {
        [_, dir] if !dir.starts_with('-') && !dir.is_empty() => dir,
        _ => {
            return Err(
                "`cd` with options or without one directory: execgate does not follow it".into(),
            );
        }
    };
    let (Some(cwd), Some(project)) = (cwd, project) else {
        return Err(format!(
            "`cd {dir}`: execgate follows `cd` only inside a project, and this request has none"
        ));
    };
    // The shells' `cd` is logical: `..` is taken off the written path first. The
    // kernel then follows links: both must reach the same directory, in the project.
    let logical = lexically_normal(&cwd.join(dir));
    let physical = cwd.join(dir).canonicalize();
    let reached = match (logical.canonicalize(), physical) {
        (Ok(l), Ok(p)) if l == p && l.is_dir() => l,
        (Ok(_), Ok(_)) => {
            return Err(format!(
                "`cd {dir}` leads to different directories as the shell and the kernel read it"
            ));
        }
        _ => return Err(format!("`cd {dir}`: no such directory")),
    };
    if !reached.starts_with(project) {
        return Err(format!(
            "`cd {dir}` leaves the project (to `{}`)",
            reached.display()
        ));
    }
    let rest = rest.trim().to_string();
    let falls_through = op == ";" || operators(&rest).any(|(_, op)| op == "||");
    Ok(Some(Inner {
        line: rest,
        taken: format!(
            "`cd {dir}`: into `{}`, inside the project",
            reached.strip_prefix(project).unwrap_or(&reached).display()
        ),
        cwd: Some(reached),
        also_where_it_started: falls_through,
    }))
}

/// `bash -lc 'SCRIPT'` (`sh -c`, `zsh -c`, `-l -c`), alone on the line.
fn script(program: &str, words: &[String], commands: usize) -> Option<Inner> {
    let shell = match program {
        "bash" | "/bin/bash" | "/usr/bin/bash" => Shell::Bash,
        "zsh" | "/bin/zsh" | "/usr/bin/zsh" => Shell::Zsh,
        "sh" | "/bin/sh" | "/usr/bin/sh" | "dash" | "/bin/dash" | "/usr/bin/dash" => Shell::Sh,
        _ => return None,
    };
    if commands != 1 {
        return None;
    }
    let script = match words {
        [_, c, script] if matches!(c.as_str(), "-c" | "-lc" | "-cl") => script,
        [_, l, c, script] if l == "-l" && c == "-c" => script,
        _ => return None,
    };
    // The script must be read alike by the shell that runs it.
    if script.trim().is_empty() || !parse::analyse_for(script, &[shell]).plain() {
        return None;
    }
    Some(Inner {
        line: script.clone(),
        cwd: None,
        also_where_it_started: false,
        taken: format!("`{program}` runs the script `{script}`"),
    })
}

/// The first `&&`, `||`, `;` or `|` of a plain line outside quotes: the text before it,
/// the operator and the text after.
fn first_operator(line: &str) -> Option<(&str, &'static str, &str)> {
    let (at, op) = operators(line).next()?;
    Some((&line[..at], op, &line[at + op.len()..]))
}

/// The `&&`, `||`, `;` and `|` of a plain line outside quotes, with where each starts.
fn operators(line: &str) -> impl Iterator<Item = (usize, &'static str)> + '_ {
    let bytes = line.as_bytes();
    let (mut single, mut double, mut escaped, mut skip) = (false, false, false, false);
    bytes.iter().enumerate().filter_map(move |(i, &b)| {
        if std::mem::take(&mut escaped) || std::mem::take(&mut skip) {
            return None;
        }
        match b {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'\\' if double => escaped = true,
            _ if single || double => {}
            b'&' if bytes.get(i + 1) == Some(&b'&') => {
                skip = true;
                return Some((i, "&&"));
            }
            b'|' if bytes.get(i + 1) == Some(&b'|') => {
                skip = true;
                return Some((i, "||"));
            }
            b'|' => return Some((i, "|")),
            b';' => return Some((i, ";")),
            _ => {}
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cd_into_the_project_is_taken_off_and_out_of_it_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("app");
        std::fs::create_dir_all(project.join("web/src")).unwrap();
        std::os::unix::fs::symlink(&root, project.join("up")).unwrap();
        std::os::unix::fs::symlink(project.join("web/src"), project.join("deep")).unwrap();
        let all = &Shell::ALL[..];
        let inner = |line: &str| inner(line, all, Some(&project), Some(&project));
        let got = inner("cd web && npm test 2>&1 | tail -30")
            .unwrap()
            .unwrap();
        assert_eq!(got.line, "npm test 2>&1 | tail -30");
        assert_eq!(got.cwd, Some(project.join("web")));
        assert!(!got.also_where_it_started);
        let got = inner("cd web/src; cat x").unwrap().unwrap();
        assert_eq!(got.cwd, Some(project.join("web/src")));
        assert!(got.also_where_it_started, "`;` runs the rest if cd fails");
        assert!(
            inner("cd web && a || b")
                .unwrap()
                .unwrap()
                .also_where_it_started
        );
        for (line, why) in [
            ("cd /etc && cat shadow", "leaves the project"),
            ("cd .. && ls", "leaves the project"),
            ("cd up && ls", "leaves the project"),
            ("cd nowhere && ls", "no such directory"),
            ("cd deep/.. && ls", "different directories"),
            ("cd -P web && ls", "options"),
        ] {
            let got = inner(line).map(|_| ()).unwrap_err();
            assert!(got.contains(why), "{line}: {got}");
        }
        for line in [
            "cd web | ls",
            "cd web || ls",
            "cd web",
            "cd $X && ls",
            "ls && cd web",
        ] {
            assert_eq!(inner(line), Ok(None), "{line}");
        }
        assert!(inner("cd web/../web && ls").unwrap().is_some());
        // No project: a `cd` is not followed.
        assert!(super::inner("cd web && ls", all, Some(&project), None).is_err());
    }

    #[test]
    fn a_shell_running_one_plain_script_is_the_script() {
        let all = &Shell::ALL[..];
        for (line, script) in [
            ("bash -lc 'git status'", "git status"),
            ("zsh -lc 'cat README.md | head'", "cat README.md | head"),
            ("sh -c 'ls -la'", "ls -la"),
            ("bash -l -c \"grep -n x f\"", "grep -n x f"),
        ] {
            let got = inner(line, all, None, None).unwrap().unwrap();
            assert_eq!(got.line, script, "{line}");
        }
        for line in [
            "bash -lc 'echo $HOME'",
            "bash -lc 'ls' x",
            "bash -i -c 'ls'",
            "bash script.sh",
            "bash -lc 'ls' && ls",
            "python -c 'print(1)'",
        ] {
            assert_eq!(inner(line, all, None, None), Ok(None), "{line}");
        }
    }
}
