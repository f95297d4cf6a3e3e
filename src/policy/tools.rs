//! Tool calls: a request's `tool` (`Write`, `Edit`, `mcp__github__create_issue`), judged
//! by name and by the paths its input names (docs/decisions.md, "Tool requests").
//!
//! The pipeline: security mode → `policy.tools.deny` → protected paths → tool rules →
//! `policy.tools.safe` → ask. A tool's input is the tool's own business, so execgate
//! understands a tool call no better than its name: it is approved without a human only
//! by a rule the owner wrote for that name, or as one of the read-only tools the owner
//! listed, and never when any string in its input names a protected path.
//!
//! Protected paths are execgate's own files (its configuration, wherever it may be read
//! from, its database, its sockets, its `--env-file`, its binary) and the agents' guard
//! settings (`paths::guard_settings`): an agent that could write them without a human
//! could switch its guard off, or change what a later "safe" command runs.

use std::path::{Component, Path, PathBuf};

use globset::{GlobSet, GlobSetBuilder};
use serde_json::Value;

use super::paths;
use crate::config::{Config, compile_deny_glob};

/// At most this many strings of a tool's input are checked against the protected
/// paths; an input with more is not understood, and a human decides.
pub const MAX_STRINGS: usize = 4096;

/// How deep a tool's input is walked; deeper is not understood.
pub const MAX_DEPTH: usize = 32;

/// The longest path the kernel opens (PATH_MAX). A longer string can still name a
/// file once a tool's own path handling shortens it (`./././…`, `a/../…`), so it is
/// judged as written too; only the filesystem is not asked about it.
pub const MAX_PATH_LEN: usize = 4096;

/// `policy.tools.deny`, compiled.
#[derive(Debug)]
pub struct ToolDeny(GlobSet);

impl ToolDeny {
    pub fn new(patterns: &[String]) -> Result<ToolDeny, globset::Error> {
        let mut set = GlobSetBuilder::new();
        for p in patterns {
            set.add(compile_deny_glob(p)?);
        }
        Ok(ToolDeny(set.build()?))
    }

    pub fn matches(&self, name: &str) -> bool {
        self.0.is_match(name)
    }
}

/// The paths whose mention in a tool's input makes the call dangerous, beside the
/// agents' guard settings (which are recognised by name, wherever they are).
#[derive(Debug, Default)]
pub struct Protected {
    /// Files protected by their exact path.
    files: Vec<PathBuf>,
    /// Directories protected with everything in them.
    dirs: Vec<PathBuf>,
    /// What `~` means in an agent's path.
    home: Option<PathBuf>,
}

impl Protected {
    /// execgate's own files for `config`, and the owner's `policy.tools.protected`.
    pub fn new(config: &Config) -> Protected {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let mut p = Protected {
            home,
            ..Protected::default()
        };
        // Where a configuration could be read from at the next start, whether or not a
        // file is there now: writing one there is changing execgate's policy.
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|x| !x.is_empty())
            .map(PathBuf::from)
            .or_else(|| p.home.as_ref().map(|h| h.join(".config")));
        p.dirs.extend(config_home.map(|c| c.join("execgate")));
        p.dirs.push(PathBuf::from("/etc/execgate"));
        // The agents' own homes, where they are moved from the default: their settings
        // (hooks included) live there.
        for var in ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"] {
            if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
                p.dirs.push(PathBuf::from(dir));
            }
        }
        if let Some(file) = &config.source_file {
            p.own_file(file);
        }
        if let Some(file) = &config.env_file {
            p.own_file(file);
        }
        for suffix in ["", "-wal", "-shm", "-journal", ".lock"] {
            let mut name = config.database.clone().into_os_string();
            name.push(suffix);
            p.files.push(PathBuf::from(name));
        }
        p.own_file(&config.database);
        p.own_file(&config.socket);
        p.own_file(&config.admin_socket);
        if let Ok(exe) = std::env::current_exe() {
            p.files.push(exe);
        }
        for extra in &config.policy.tools.protected {
            let path = match extra.strip_prefix("~/") {
                Some(rest) => match &p.home {
                    Some(home) => home.join(rest),
                    None => continue,
                },
                None => PathBuf::from(extra),
            };
            p.dirs.push(path);
        }
        for list in [&mut p.files, &mut p.dirs] {
            let canonical: Vec<PathBuf> = list.iter().filter_map(|f| canonical(f)).collect();
            list.extend(canonical);
            list.sort();
            list.dedup();
        }
        p
    }

    /// One of execgate's files, and its directory when that directory is execgate's
    /// own (named for it): a database or socket placed in a shared directory protects
    /// itself, not its neighbours.
    fn own_file(&mut self, file: &Path) {
        self.files.push(file.to_path_buf());
        if let Some(dir) = file.parent()
            && dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().contains("execgate"))
        {
            self.dirs.push(dir.to_path_buf());
        }
    }

    /// Why `path` (lexically normal and absolute) is protected, if it is.
    fn judge(&self, path: &Path) -> Option<String> {
        let text = path.to_string_lossy();
        if let Some(what) = paths::guard_settings(&text) {
            return Some(format!("{what} (`{text}`)"));
        }
        if self.files.iter().any(|f| f == path) || self.dirs.iter().any(|d| path.starts_with(d)) {
            return Some(format!("execgate's own files (`{text}`)"));
        }
        None
    }

    /// Why a string from a tool's input names a protected path, if it does: as written
    /// (resolved against `cwd`, `~` expanded, `.` and `..` taken lexically), and as the
    /// filesystem resolves it (symlinks followed as far as the path exists).
    ///
    /// Every string is judged, however long and whatever it holds (a newline may sit in a
    /// component that `..` takes back): a string that is content, not a path, at worst
    /// puts the call to a human.
    pub fn names(&self, text: &str, cwd: Option<&Path>) -> Option<String> {
        if text.is_empty() || text.contains('\0') {
            return None;
        }
        let text = text.strip_prefix("file://").unwrap_or(text);
        let written = if let Some(rest) = text.strip_prefix("~/").or((text == "~").then_some("")) {
            self.home.as_ref()?.join(rest)
        } else {
            let path = Path::new(text);
            match cwd {
                _ if path.is_absolute() => path.to_path_buf(),
                Some(cwd) => cwd.join(path),
                // No directory to resolve against: judged by its components alone.
                None => {
                    let relative = lexically_normal(path);
                    let shown = relative.to_string_lossy();
                    return paths::guard_settings(&shown).map(|what| format!("{what} (`{shown}`)"));
                }
            }
        };
        let lexical = lexically_normal(&written);
        if let Some(why) = self.judge(&lexical) {
            return Some(why);
        }
        if lexical.as_os_str().len() > MAX_PATH_LEN {
            return None;
        }
        let resolved = resolve_existing(&lexical)?;
        (resolved != lexical)
            .then(|| self.judge(&resolved))
            .flatten()
    }

    /// What a tool's input names that is protected, and whether it could be checked
    /// whole (too many strings or too deep is not understood, and a human decides).
    pub fn in_input(&self, input: &Value, cwd: Option<&Path>) -> InputCheck {
        let mut strings = Vec::new();
        let mut unchecked = None;
        collect_strings(input, 0, &mut strings, &mut unchecked);
        let mut protected: Vec<String> = Vec::new();
        for s in strings {
            if let Some(why) = self.names(s, cwd) {
                let why = format!(
                    "names {why}, which an agent could use to switch its guard off or change what execgate allows"
                );
                if !protected.contains(&why) {
                    protected.push(why);
                }
            }
        }
        InputCheck {
            protected,
            unchecked,
        }
    }
}

/// What [`Protected::in_input`] found.
#[derive(Debug, Default)]
pub struct InputCheck {
    /// Why the input names protected paths (empty: it names none).
    pub protected: Vec<String>,
    /// Why not all of the input was checked, if it was not.
    pub unchecked: Option<String>,
}

/// The strings in `value` (values and keys), depth-first, up to the limits; `overflow`
/// says what was left unchecked.
fn collect_strings<'a>(
    value: &'a Value,
    depth: usize,
    out: &mut Vec<&'a str>,
    overflow: &mut Option<String>,
) {
    if overflow.is_some() {
        return;
    }
    if depth > MAX_DEPTH {
        *overflow = Some(format!(
            "the tool's input is nested deeper than {MAX_DEPTH} levels: execgate did not check it all"
        ));
        return;
    }
    match value {
        Value::String(s) => push_string(s, out, overflow),
        Value::Array(items) => {
            for item in items {
                collect_strings(item, depth + 1, out, overflow);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                push_string(key, out, overflow);
                collect_strings(item, depth + 1, out, overflow);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn push_string<'a>(s: &'a str, out: &mut Vec<&'a str>, overflow: &mut Option<String>) {
    if overflow.is_some() {
        return;
    }
    if out.len() >= MAX_STRINGS {
        *overflow = Some(format!(
            "the tool's input has more than {MAX_STRINGS} strings: execgate did not check them all"
        ));
    } else {
        out.push(s);
    }
}

/// `path` with `.` dropped and `..` taken back a component, without the filesystem: as
/// a tool's own path handling (Node's `path.resolve`, Python's `normpath`) reads it.
pub fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` as the filesystem resolves it: its longest existing ancestor made canonical
/// (symlinks followed), the rest appended. A dangling symlink is followed too: writing
/// through it creates its target. None when nothing of it resolves.
fn resolve_existing(path: &Path) -> Option<PathBuf> {
    resolve_within(path, 0)
}

/// How many dangling symlinks are followed in a row (the kernel's own limit).
const MAX_LINKS: usize = 40;

fn resolve_within(path: &Path, links: usize) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return Some(lexically_normal(&out));
        }
        if links < MAX_LINKS
            && let Ok(target) = std::fs::read_link(existing)
        {
            let mut next = existing.parent()?.join(target);
            for part in rest.iter().rev() {
                next.push(part);
            }
            return resolve_within(&lexically_normal(&next), links + 1);
        }
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?;
    }
}

fn canonical(path: &Path) -> Option<PathBuf> {
    resolve_existing(path).filter(|p| p != path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protected(dir: &Path) -> Protected {
        Protected {
            files: vec![dir.join("state/execgate.db"), dir.join("run/agent.sock")],
            dirs: vec![dir.join("conf/execgate")],
            home: Some(dir.join("home")),
        }
    }

    #[test]
    fn own_files_guard_settings_and_their_aliases_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let p = protected(&root);
        let cwd = root.join("repo");
        std::fs::create_dir_all(cwd.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("conf/execgate")).unwrap();
        std::os::unix::fs::symlink(cwd.join(".git/config"), cwd.join("innocent")).unwrap();
        std::os::unix::fs::symlink(root.join("conf"), cwd.join("c")).unwrap();
        let named = |s: &str| p.names(s, Some(&cwd)).is_some();
        for s in [
            ".git/config",
            "./.git/hooks/pre-push",
            "src/../.git/config",
            "innocent",
            "c/execgate/execgate.toml",
            "~/.claude/settings.json",
            "~/.codex/config.toml",
            "../state/execgate.db",
            "file:///x/.cursor/hooks.json",
        ] {
            assert!(named(s), "{s} is protected");
        }
        let abs = root.join("run/agent.sock");
        assert!(named(&abs.to_string_lossy()));
        for s in [
            "src/main.rs",
            "README.md",
            "state/execgate.db",
            "hello\n.git/config",
            "",
            "git config is at .git/config",
        ] {
            assert!(!named(s), "{s} is not protected");
        }
        // Without a cwd, a relative path is judged by its components alone.
        assert!(p.names(".claude/settings.local.json", None).is_some());
        assert!(p.names("notes.md", None).is_none());
    }

    #[test]
    fn every_string_of_the_input_is_checked_and_too_much_is_not_understood() {
        let dir = tempfile::tempdir().unwrap();
        let p = protected(dir.path());
        let cwd = dir.path().join("repo");
        let input = serde_json::json!({
            "edits": [{"file_path": "src/a.rs"}, {"file_path": ".git/hooks/pre-commit"}],
            "content": "x",
        });
        let check = p.in_input(&input, Some(&cwd));
        assert_eq!(check.protected.len(), 1, "{check:?}");
        assert!(check.protected[0].contains("git hooks"), "{check:?}");
        assert!(check.unchecked.is_none());
        let many: Vec<String> = (0..MAX_STRINGS + 1).map(|i| format!("f{i}")).collect();
        let check = p.in_input(&serde_json::json!({ "paths": many }), Some(&cwd));
        assert!(check.unchecked.unwrap().contains("did not check"));
        let mut deep = serde_json::json!("x");
        for _ in 0..MAX_DEPTH + 2 {
            deep = serde_json::json!([deep]);
        }
        let check = p.in_input(&deep, Some(&cwd));
        assert!(check.unchecked.unwrap().contains("deeper"));
        let plain = p.in_input(&serde_json::json!({"file_path": "a.txt"}), Some(&cwd));
        assert!(plain.protected.is_empty() && plain.unchecked.is_none());
    }

    #[test]
    fn tool_deny_globs_ignore_case() {
        let deny = ToolDeny::new(&["mcp__shell__*".into(), "Bash".into()]).unwrap();
        assert!(deny.matches("mcp__shell__exec"));
        assert!(deny.matches("bash"));
        assert!(!deny.matches("mcp__github__get_issue"));
    }
}
