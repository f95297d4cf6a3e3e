//! The git repository a command would run in, as far as it decides what git runs: its
//! configuration files (with includes) and its hooks.
//!
//! git runs programs named in a repository's configuration (`core.fsmonitor` on `git
//! status`, `diff.external` and textconv drivers on `git diff`, filters, aliases,
//! pagers, …) and hooks from `.git/hooks/`, and an agent can often write both. So an
//! approval without a human of a git command needs to know them (docs/decisions.md#the-git-gate):
//! in decide-only mode, the command is approved only when the repository sets no
//! program-valued key and has no hook the command could run; in run mode, execgate
//! neutralises what it found through the environment (`GIT_CONFIG_COUNT`,
//! `GIT_CONFIG_KEY_n`, `GIT_CONFIG_VALUE_n`), which git reads above every file,
//! without changing the approved argv. A repository execgate cannot read fully is
//! treated as unknown: a human decides.
//!
//! Only the repository's own files are read (`config`, `config.worktree`, and what they
//! include). The user's global and system configuration belong to the user, not the
//! agent; an agent on its own uid cannot write them.

use std::fs;
use std::path::{Path, PathBuf};

/// How deep includes may nest (git's own limit).
const MAX_INCLUDE_DEPTH: usize = 10;
/// Config files larger than this are not read: a human decides.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// How many directories up from the working directory a repository is looked for.
const MAX_ASCENT: usize = 64;

/// What execgate found in a repository.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repo {
    /// The repository's git directory (where `HEAD` and `config` are, for a worktree
    /// the shared one).
    pub git_dir: PathBuf,
    /// Keys whose value is a program git runs, or that change what git does in ways an
    /// agent could use, with why.
    pub program_keys: Vec<Key>,
    /// Hooks present (executable files in `hooks/` that are not samples).
    pub hooks: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    /// As git names it: `section.subsection.key`, section and key lowercased.
    pub name: String,
    pub why: &'static str,
    /// The value that neutralises it in run mode, if one does.
    pub neutral: Option<&'static str>,
}

/// Finds the repository that contains `cwd`, if any, and reads it. `Ok(None)`: no
/// repository (git would say "not a git repository"). `Err`: there is one, or might be,
/// and it cannot be read fully.
pub fn inspect(cwd: &Path) -> Result<Option<Repo>, String> {
    let Some(found) = discover(cwd)? else {
        return Ok(None);
    };
    let mut repo = Repo {
        git_dir: found.common_dir.clone(),
        ..Repo::default()
    };
    let mut files = vec![found.common_dir.join("config")];
    let worktree_config = found.git_dir.join("config.worktree");
    if worktree_config.exists() {
        files.push(worktree_config);
    }
    for file in files {
        read_config(&file, 0, &mut repo.program_keys, true)?;
    }
    repo.hooks = hooks(&found.common_dir.join("hooks"))?;
    Ok(Some(repo))
}

struct Found {
    git_dir: PathBuf,
    common_dir: PathBuf,
}

/// git's discovery, simplified towards finding more: walk up from `cwd` to a `.git`
/// directory or file (a worktree or submodule's `gitdir:` pointer), or a directory that
/// is itself a git directory.
fn discover(cwd: &Path) -> Result<Option<Found>, String> {
    let mut dir = Some(cwd);
    for _ in 0..MAX_ASCENT {
        let Some(d) = dir else {
            return Ok(None);
        };
        let dot_git = d.join(".git");
        match fs::symlink_metadata(&dot_git) {
            Ok(m) if m.is_dir() => return found(dot_git).map(Some),
            Ok(m) if m.is_file() => {
                let text = read_small(&dot_git)?;
                let target = text
                    .trim()
                    .strip_prefix("gitdir:")
                    .ok_or_else(|| format!("{} is not a `gitdir:` pointer", dot_git.display()))?
                    .trim();
                let target = d.join(target);
                return found(target).map(Some);
            }
            Ok(_) => {
                return Err(format!(
                    "{} is neither a directory nor a file",
                    dot_git.display()
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot read {}: {e}", dot_git.display())),
        }
        if d.join("HEAD").is_file() && d.join("objects").is_dir() && d.join("refs").is_dir() {
            return found(d.to_path_buf()).map(Some);
        }
        dir = d.parent();
    }
    Err("the working directory is too deep to look for a repository".into())
}

fn found(git_dir: PathBuf) -> Result<Found, String> {
    let commondir = git_dir.join("commondir");
    let common_dir = if commondir.exists() {
        let text = read_small(&commondir)?;
        git_dir.join(text.trim())
    } else {
        git_dir.clone()
    };
    Ok(Found {
        git_dir,
        common_dir,
    })
}

fn read_small(path: &Path) -> Result<String, String> {
    let meta = fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(format!("{} is too large to read", path.display()));
    }
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Hooks git would run: executable, non-sample files in the hooks directory.
fn hooks(dir: &Path) -> Result<Vec<String>, String> {
    use std::os::unix::fs::PermissionsExt;
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".sample") {
            continue;
        }
        // Follows symlinks, as git does when it runs a hook.
        let executable = fs::metadata(entry.path())
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false);
        if executable {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// Reads one config file, following includes; missing included files are skipped (as
/// git does), unreadable ones are an error.
fn read_config(
    path: &Path,
    depth: usize,
    keys: &mut Vec<Key>,
    must_exist: bool,
) -> Result<(), String> {
    if depth > MAX_INCLUDE_DEPTH {
        return Err(format!(
            "includes nest deeper than {MAX_INCLUDE_DEPTH} at {}",
            path.display()
        ));
    }
    let text = match fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => return Ok(()),
        _ => read_small(path)?,
    };
    let entries = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    for (name, value) in entries {
        if name == "include.path" || (name.starts_with("includeif.") && name.ends_with(".path")) {
            let Some(v) = value else {
                return Err(format!("{}: `{name}` without a value", path.display()));
            };
            if v.starts_with('~') || v.contains('$') {
                return Err(format!(
                    "{}: cannot resolve the include `{v}` (it depends on the agent's home)",
                    path.display()
                ));
            }
            let target = path
                .parent()
                .map_or_else(|| PathBuf::from(&v), |dir| dir.join(&v));
            read_config(&target, depth + 1, keys, false)?;
            continue;
        }
        if let Some((why, neutral)) = program_valued(&name, value.as_deref())
            && !keys.iter().any(|k| k.name == name)
        {
            keys.push(Key { name, why, neutral });
        }
    }
    Ok(())
}

/// Whether a key names a program git runs (or changes what git does in a way an agent
/// could use), why, and the value that neutralises it in run mode, if one does.
fn program_valued(name: &str, value: Option<&str>) -> Option<(&'static str, Option<&'static str>)> {
    let (section, rest) = name.split_once('.')?;
    let (sub, key) = match rest.rsplit_once('.') {
        Some((sub, key)) => (Some(sub), key),
        None => (None, rest),
    };
    let is_false = |v: Option<&str>| {
        matches!(
            v.map(str::to_ascii_lowercase).as_deref(),
            Some("false" | "no" | "off" | "0" | "")
        )
    };
    let is_bool = |v: Option<&str>| {
        v.is_none()
            || matches!(
                v.map(str::to_ascii_lowercase).as_deref(),
                Some("true" | "yes" | "on" | "1" | "false" | "no" | "off" | "0" | "")
            )
    };
    Some(match (section, sub, key) {
        ("core", None, "fsmonitor") if !is_bool(value) => {
            ("runs a file-system monitor program", Some("false"))
        }
        ("core", None, "hookspath") => ("chooses where hooks are run from", Some("/dev/null")),
        ("core", None, "pager") => ("runs a pager program", Some("cat")),
        ("core", None, "editor") => ("runs an editor program", Some(":")),
        ("core", None, "sshcommand") => ("runs an ssh program", Some("ssh")),
        ("core", None, "askpass") => ("runs a password program", Some("")),
        ("core", None, "gitproxy") => ("runs a proxy program", Some("")),
        ("core", None, "alternaterefscommand") => ("runs a program", Some("")),
        ("core", None, "worktree") => ("moves the working tree elsewhere", None),
        ("sequence", None, "editor") => ("runs an editor program", Some(":")),
        ("diff", None, "external") => ("runs an external diff program", Some("")),
        ("diff", Some(_), "command" | "textconv") => ("runs a diff driver program", Some("")),
        ("merge", Some(_), "driver") => ("runs a merge driver program", Some("")),
        ("filter", Some(_), "clean" | "smudge" | "process") => ("runs a filter program", Some("")),
        ("pager", Some(_), _) | ("pager", None, _) if !is_bool(value) => {
            ("runs a pager program", Some("false"))
        }
        ("alias", _, _) => (
            "defines an alias, which changes what a git command runs",
            Some(""),
        ),
        ("credential", _, "helper") => ("runs a credential helper program", Some("")),
        ("gpg", _, "program") => ("runs a signing program", Some("gpg")),
        ("gpg", Some("ssh"), "defaultkeycommand") => ("runs a program", Some("")),
        ("remote", Some(_), "uploadpack" | "receivepack" | "vcs") => {
            ("runs a program for a remote", None)
        }
        ("url", Some(_), "insteadof" | "pushinsteadof") => (
            "rewrites remote URLs (possibly to a transport that runs a program)",
            None,
        ),
        ("protocol", _, "allow") => ("allows transports that may run programs", None),
        ("uploadpack", None, "packobjectshook") => ("runs a program", Some("")),
        ("submodule", Some(_), "update") if value.is_some_and(|v| v.starts_with('!')) => {
            ("runs a program to update a submodule", None)
        }
        ("difftool" | "mergetool", Some(_), "cmd" | "path") => ("runs a tool program", Some("")),
        ("browser" | "man", Some(_), "cmd" | "path") => ("runs a program", Some("")),
        ("web", None, "browser") | ("man", None, "viewer") => ("runs a program", Some("")),
        ("imap", None, "tunnel") => ("runs a program", Some("")),
        ("sendemail", _, k) if k.ends_with("cmd") => ("runs a program", Some("")),
        ("trailer", Some(_), "command" | "cmd") => ("runs a program", Some("")),
        ("interactive", None, "difffilter") => ("runs a filter program", Some("")),
        ("clean", None, "requireforce") if is_false(value) => {
            ("lets `git clean` delete without `-f`", Some("true"))
        }
        _ => return None,
    })
}

/// git's config syntax, read into `(name, value)` pairs in order: `[section]`, `[section
/// "subsection"]`, the old `[section.subsection]`, `key = value` and a bare `key`
/// (true), comments after `#` or `;`, quoted values with escapes, and lines continued
/// by a trailing backslash. Names come back as git spells them: section and key
/// lowercased, subsection as written.
pub fn parse(text: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    let mut chars = text.chars().peekable();
    let mut line = 1;
    loop {
        // Skip blanks and empty lines.
        while let Some(&c) = chars.peek() {
            if c == '\n' {
                line += 1;
                chars.next();
            } else if c.is_whitespace() {
                chars.next();
            } else {
                break;
            }
        }
        let Some(&c) = chars.peek() else {
            return Ok(out);
        };
        match c {
            '#' | ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '[' => {
                chars.next();
                let mut name = String::new();
                let mut sub: Option<String> = None;
                loop {
                    match chars.next() {
                        Some(']') => break,
                        Some('"') => {
                            let mut s = String::new();
                            loop {
                                match chars.next() {
                                    Some('\\') => s.extend(chars.next()),
                                    Some('"') => break,
                                    Some('\n') | None => {
                                        return Err(format!("line {line}: unclosed subsection"));
                                    }
                                    Some(c) => s.push(c),
                                }
                            }
                            sub = Some(s);
                        }
                        Some(c) if c == ' ' || c == '\t' => {}
                        Some(c)
                            if sub.is_none()
                                && (c.is_ascii_alphanumeric() || c == '-' || c == '.') =>
                        {
                            name.push(c)
                        }
                        _ => return Err(format!("line {line}: malformed section header")),
                    }
                }
                if name.is_empty() {
                    return Err(format!("line {line}: empty section name"));
                }
                let name = match (name.split_once('.'), sub) {
                    (_, Some(s)) => format!("{}.{s}", name.to_ascii_lowercase()),
                    // `[section.sub]` (deprecated) lowercases the subsection.
                    (Some(_), None) => name.to_ascii_lowercase(),
                    (None, None) => name.to_ascii_lowercase(),
                };
                section = Some(name);
            }
            c if c.is_ascii_alphabetic() => {
                let Some(sec) = &section else {
                    return Err(format!("line {line}: a key outside any section"));
                };
                let mut key = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        key.push(c.to_ascii_lowercase());
                        chars.next();
                    } else {
                        break;
                    }
                }
                while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                    chars.next();
                }
                let value = match chars.peek() {
                    Some('=') => {
                        chars.next();
                        Some(value(&mut chars, &mut line)?)
                    }
                    Some('\n') | Some('#') | Some(';') | None => None,
                    Some(_) => return Err(format!("line {line}: expected `=` after `{key}`")),
                };
                if value.is_none() {
                    // The rest of the line is a comment or nothing.
                    for c in chars.by_ref() {
                        if c == '\n' {
                            line += 1;
                            break;
                        }
                    }
                }
                out.push((format!("{sec}.{key}"), value));
            }
            _ => return Err(format!("line {line}: unexpected `{c}`")),
        }
    }
}

/// A value to the end of its line: quotes group, `\"` `\\` `\n` `\t` `\b` escape, a
/// trailing backslash continues the line, `#` and `;` outside quotes start a comment.
fn value(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    line: &mut usize,
) -> Result<String, String> {
    let mut out = String::new();
    let mut quoted = false;
    let mut pending_space = String::new();
    let mut started = false;
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                *line += 1;
                if quoted {
                    return Err(format!("line {line}: unclosed quote"));
                }
                return Ok(out);
            }
            '"' => {
                quoted = !quoted;
                out.push_str(&pending_space);
                pending_space.clear();
                started = true;
            }
            '\\' => {
                let e = match chars.next() {
                    Some('\n') => {
                        *line += 1;
                        continue;
                    }
                    Some('"') => '"',
                    Some('\\') => '\\',
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('b') => '\u{8}',
                    _ => return Err(format!("line {line}: bad escape in a value")),
                };
                out.push_str(&pending_space);
                pending_space.clear();
                out.push(e);
                started = true;
            }
            '#' | ';' if !quoted => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        *line += 1;
                        break;
                    }
                }
                return Ok(out);
            }
            c if (c == ' ' || c == '\t') && !quoted => {
                if started {
                    pending_space.push(c);
                }
            }
            c => {
                out.push_str(&pending_space);
                pending_space.clear();
                out.push(c);
                started = true;
            }
        }
    }
    if quoted {
        return Err(format!("line {line}: unclosed quote"));
    }
    Ok(out)
}

/// `GIT_CONFIG_*` variables that neutralise what `repo` sets, plus what every run gets
/// (no file-system monitor, hooks from nowhere), numbered after any the environment
/// already has; and the keys that no value neutralises (a human must decide about them:
/// policy never approves git where one is set).
pub fn neutralising_env(
    repo: Option<&Repo>,
    env: &[(String, String)],
) -> (Vec<(String, String)>, Vec<String>) {
    let mut pairs: Vec<(String, String)> = vec![
        ("core.fsmonitor".into(), "false".into()),
        ("core.hooksPath".into(), "/dev/null".into()),
    ];
    let mut cannot = Vec::new();
    for key in repo.map(|r| r.program_keys.as_slice()).unwrap_or_default() {
        match key.neutral {
            Some(v) => {
                if !pairs.iter().any(|(k, _)| k.eq_ignore_ascii_case(&key.name)) {
                    pairs.push((key.name.clone(), v.to_string()));
                }
            }
            None => cannot.push(format!(
                "the repository's `{}` {}, which execgate cannot neutralise",
                key.name, key.why
            )),
        }
    }
    let start: usize = env
        .iter()
        .find(|(k, _)| k == "GIT_CONFIG_COUNT")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut out = Vec::new();
    for (n, (k, v)) in pairs.iter().enumerate() {
        out.push((format!("GIT_CONFIG_KEY_{}", start + n), k.clone()));
        out.push((format!("GIT_CONFIG_VALUE_{}", start + n), v.clone()));
    }
    out.push(("GIT_CONFIG_COUNT".into(), (start + pairs.len()).to_string()));
    (out, cannot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        parse(text).unwrap().into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn parses_git_config_syntax() {
        let text = "# c\n[core]\n\trepositoryformatversion = 0\n\tbare = false ; c\n\tfsmonitor\n[remote \"Origin\"]\n\turl = \"a b\" # x\n[Diff.Ev]\n\tTextConv = x\\\n y\n";
        let parsed = parse(text).unwrap();
        assert_eq!(
            parsed,
            [
                ("core.repositoryformatversion".into(), Some("0".into())),
                ("core.bare".into(), Some("false".into())),
                ("core.fsmonitor".into(), None),
                ("remote.Origin.url".into(), Some("a b".into())),
                ("diff.ev.textconv".into(), Some("x y".into())),
            ]
        );
        assert!(parse("[core\n").is_err());
        assert!(parse("key = 1\n").is_err());
        assert!(parse("[a]\nk = \"open\n").is_err());
        assert_eq!(names("[a \"b.c\"]\nk=1"), ["a.b.c.k"]);
    }

    #[test]
    fn program_valued_keys() {
        let p = |n: &str, v: &str| program_valued(n, Some(v)).is_some();
        assert!(p("core.fsmonitor", "/tmp/x"));
        assert!(!p("core.fsmonitor", "true"));
        assert!(!p("core.fsmonitor", "false"));
        assert!(p("core.hookspath", ".husky"));
        assert!(p("diff.external", "x"));
        assert!(p("diff.ev.textconv", "x"));
        assert!(p("filter.lfs.process", "git-lfs filter-process"));
        assert!(p("alias.st", "status"));
        assert!(p("pager.log", "less"));
        assert!(!p("pager.log", "false"));
        assert!(p("credential.helper", "store"));
        assert!(p("url.ext::sh.insteadof", "https://"));
        assert!(p("clean.requireforce", "false"));
        assert!(!p("clean.requireforce", "true"));
        assert!(!p("user.name", "x"));
        assert!(!p("remote.origin.url", "https://x"));
        assert!(!p("core.bare", "false"));
    }

    fn repo(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        fs::create_dir_all(git.join("hooks")).unwrap();
        fs::write(git.join("config"), config).unwrap();
        fs::write(git.join("hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
        dir
    }

    #[test]
    fn inspects_a_repository_from_a_subdirectory() {
        let dir = repo("[core]\n\tbare = false\n");
        let sub = dir.path().join("a/b");
        fs::create_dir_all(&sub).unwrap();
        let r = inspect(&sub).unwrap().unwrap();
        assert!(r.program_keys.is_empty() && r.hooks.is_empty(), "{r:?}");

        let dir = repo("[core]\n\tfsmonitor = /tmp/evil\n[include]\n\tpath = more\n");
        fs::write(dir.path().join(".git/more"), "[diff]\n\texternal = x\n").unwrap();
        let r = inspect(dir.path()).unwrap().unwrap();
        let keys: Vec<&str> = r.program_keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(keys, ["core.fsmonitor", "diff.external"]);

        let dir = repo("[include]\n\tpath = ~/x\n");
        assert!(inspect(dir.path()).is_err());
        let dir = repo("[include]\n\tpath = missing\n");
        assert!(inspect(dir.path()).is_ok());
        let dir = repo("[include]\n\tpath = config\n");
        assert!(inspect(dir.path()).unwrap_err().contains("deeper"));
    }

    #[test]
    fn finds_hooks_and_worktree_pointers() {
        use std::os::unix::fs::PermissionsExt;
        let dir = repo("");
        let hook = dir.path().join(".git/hooks/post-index-change");
        fs::write(&hook, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            inspect(dir.path()).unwrap().unwrap().hooks,
            ["post-index-change"]
        );

        let wt = tempfile::tempdir().unwrap();
        fs::write(
            wt.path().join(".git"),
            format!("gitdir: {}\n", dir.path().join(".git").display()),
        )
        .unwrap();
        assert_eq!(
            inspect(wt.path()).unwrap().unwrap().git_dir,
            dir.path().join(".git")
        );
    }

    #[test]
    fn the_environment_neutralises_what_was_found() {
        let dir = repo("[filter \"ev\"]\n\tclean = x\n");
        let r = inspect(dir.path()).unwrap().unwrap();
        let (env, cannot) = neutralising_env(Some(&r), &[("GIT_CONFIG_COUNT".into(), "1".into())]);
        assert!(cannot.is_empty());
        assert!(env.contains(&("GIT_CONFIG_KEY_1".into(), "core.fsmonitor".into())));
        assert!(env.contains(&("GIT_CONFIG_KEY_3".into(), "filter.ev.clean".into())));
        assert!(env.contains(&("GIT_CONFIG_VALUE_3".into(), "".into())));
        assert!(env.contains(&("GIT_CONFIG_COUNT".into(), "4".into())));
        let dir = repo("[url \"ext::sh -c x\"]\n\tinsteadOf = https://\n");
        let r = inspect(dir.path()).unwrap().unwrap();
        assert!(!neutralising_env(Some(&r), &[]).1.is_empty());
    }
}
