//! The one path policy, for a command's operands and a tool call's input alike: what
//! a machine may not approve about a path, judged on the file the path reaches where
//! it exists, and on its text where nothing exists yet.
//!
//! A path is judged three ways, and the strictest wins: by its text as written (`~`
//! expanded, made absolute against the request's cwd, `.` and `..` taken lexically, as
//! a tool's own path handling reads it); by where the filesystem takes it (symlinks
//! followed by the daemon, a dangling link to the file writing through it creates); and
//! by the file at the end, compared by device and inode with execgate's own files and
//! the secrets and guard settings of the daemon's home (a hard link, or the same
//! file named in another case on a case-insensitive file system). Nothing is opened to
//! be judged; a path that cannot be resolved (a loop, a directory nobody may search, too
//! long to open) is judged by its text, which is all a program could reach it by.
//!
//! What is refused, by access:
//! - reading: a secret (`names::is_secret`), a directory whose tree holds one (a home,
//!   `/etc`), an agent's guard settings, execgate's own files;
//! - writing: all of those, and sensitive files (`names::sensitive`: shell start-up
//!   files, authorized keys, the rc files programs read before they do anything).
//!
//! Beside what is refused, one thing is vouched for: a read inside the request's project
//! (`within`: it leads there, reaches a regular file or directory, and a tree read's
//! tree holds nothing refused).
//!
//! The parts: `names` judges text, `resolve` asks the filesystem where a path leads,
//! `within` whether a read stays inside the project.

mod names;
mod resolve;
mod within;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use names::{guard_settings, is_dotenv, is_path, is_secret, sensitive};
use resolve::{FileId, Found};
pub use resolve::{MAX_PATH_LEN, lexically_normal};
pub use within::{MAX_TREE_ENTRIES, Project};

use crate::config::Config;

/// How a path is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read: a file's content, or a directory's names.
    Read,
    /// Read with everything beneath it (`grep -r`, a search tool's path).
    ReadTree,
    /// Written, created, moved or deleted.
    Write,
}

/// What kind of path a refusal is about: callers weigh them (a secret read is put to a
/// human, a guard setting written is dangerous).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Keys, tokens, passwords, a dotenv file, a process's environment.
    Secret,
    /// A file whose change runs code or grants access.
    Sensitive,
    /// An agent's guard settings: its hooks, permissions, MCP servers, plugins; a
    /// repository's git configuration and hooks.
    Guard,
    /// execgate's own files.
    Own,
}

/// Why a machine may not approve an access to a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub kind: Kind,
    /// What the path is, with where it leads when that differs from its text:
    /// "a secret (`keylink` → `/home/u/.ssh/id_x`)".
    pub what: String,
}

/// At most this many files are identified by inode when the settings are made: a bound
/// on the work whatever the homes hold.
const MAX_KNOWN_FILES: usize = 4096;

/// The one path policy: execgate's own files and the machine's homes, as found when the
/// settings in force were made. One per [`super::Settings`].
#[derive(Debug, Default)]
pub struct Paths {
    /// execgate's own files, by their exact path (lowercased: see [`Paths::own`]).
    own_files: Vec<PathBuf>,
    /// Directories that are execgate's own with everything in them.
    own_dirs: Vec<PathBuf>,
    /// Both, as named (not lowercased): what a confined command may not reach.
    own_named: Vec<PathBuf>,
    /// What `~` means in an agent's path: the daemon's home.
    home: Option<PathBuf>,
    /// Every home on the machine: a tree read of one (or of what holds one) reaches its
    /// keys.
    homes: Vec<PathBuf>,
    /// Files known by device and inode, and what each is.
    known: HashMap<FileId, (Kind, String)>,
    /// The configuration files profiled programs read from where they run or from the
    /// home (`.cargo/config.toml`, `compose.yaml`): their lowercased components, and
    /// what each can make its program do. Writing one changes what a later command
    /// that execgate approved does.
    configs: Vec<(Vec<String>, &'static str)>,
}

impl Paths {
    /// execgate's own files for `config` (wherever its configuration may be read from,
    /// its database, sockets, `--env-file` and binary), the owner's
    /// `policy.tools.protected`, and the files of the machine's homes worth knowing by
    /// inode.
    ///
    /// `configs`: the configuration files the program profiles say their programs read
    /// (a name relative to where it is looked for, and what it can make the program do).
    pub fn new(config: &Config, configs: &[(&str, &'static str)]) -> Paths {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let mut p = Paths {
            home,
            ..Paths::default()
        };
        // Where a configuration could be read from at the next start, whether or not a
        // file is there now: writing one there is changing execgate's policy.
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|x| !x.is_empty())
            .map(PathBuf::from)
            .or_else(|| p.home.as_ref().map(|h| h.join(".config")));
        p.own_dirs.extend(config_home.map(|c| c.join("execgate")));
        p.own_dirs.push(PathBuf::from("/etc/execgate"));
        // The agents' own homes, where they are moved from the default: their settings
        // (hooks included) live there.
        for var in [
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "COPILOT_HOME",
            "GEMINI_DIR",
        ] {
            if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
                p.own_dirs.push(PathBuf::from(dir));
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
            p.own_files.push(PathBuf::from(name));
        }
        p.own_file(&config.database);
        p.own_file(&config.socket);
        p.own_file(&config.admin_socket);
        if let Ok(exe) = std::env::current_exe() {
            p.own_files.push(exe);
        }
        for extra in &config.policy.tools.protected {
            let path = match extra.strip_prefix("~/") {
                Some(rest) => match &p.home {
                    Some(home) => home.join(rest),
                    None => continue,
                },
                None => PathBuf::from(extra),
            };
            p.own_dirs.push(path);
        }
        p.own_named = p.own_files.iter().chain(&p.own_dirs).cloned().collect();
        for list in [&mut p.own_files, &mut p.own_dirs] {
            let real: Vec<PathBuf> = list.iter().filter_map(|f| resolve::real(f)).collect();
            list.extend(real);
            for path in list.iter_mut() {
                *path = lowercase(path);
            }
            list.sort();
            list.dedup();
        }
        p.configs = configs
            .iter()
            .map(|(name, why)| (names::components(name), *why))
            .collect();
        p.homes = homes(p.home.as_deref());
        p.know_files(config);
        p
    }

    /// One of execgate's files, and its directory when that directory is execgate's
    /// own (named for it): a database or socket placed in a shared directory protects
    /// itself, not its neighbours.
    fn own_file(&mut self, file: &Path) {
        self.own_files.push(file.to_path_buf());
        if let Some(dir) = file.parent()
            && dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().contains("execgate"))
        {
            self.own_dirs.push(dir.to_path_buf());
        }
    }

    /// The files worth knowing by inode: execgate's own that exist, and in every home
    /// the agents' guard settings and the files of its secret directories. A second
    /// name for one of them (a hard link, another case) is judged as the file.
    fn know_files(&mut self, config: &Config) {
        let mut own: Vec<PathBuf> = vec![
            config.database.clone(),
            config.socket.clone(),
            config.admin_socket.clone(),
        ];
        own.extend(config.source_file.clone());
        own.extend(config.env_file.clone());
        own.extend(std::env::current_exe().ok());
        for file in own {
            self.know(&file, Kind::Own, "execgate's own files");
        }
        const GUARD: &[&str] = &[
            ".claude.json",
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".codex/config.toml",
            ".codex/hooks.json",
            ".gemini/settings.json",
            ".cursor/hooks.json",
            ".cursor/mcp.json",
            ".copilot/config.json",
            ".copilot/mcp-config.json",
            ".gitconfig",
            ".config/git/config",
        ];
        const SECRET_DIRS: &[&str] = &[".ssh", ".gnupg", ".aws", ".kube", ".docker", ".azure"];
        for home in self.homes.clone() {
            for rel in GUARD {
                self.know(&home.join(rel), Kind::Guard, "an agent's guard settings");
            }
            for dir in SECRET_DIRS {
                let Ok(entries) = std::fs::read_dir(home.join(dir)) else {
                    continue;
                };
                for entry in entries.flatten().take(MAX_KNOWN_FILES) {
                    self.know(&entry.path(), Kind::Secret, "a secret");
                }
            }
        }
    }

    fn know(&mut self, path: &Path, kind: Kind, what: &str) {
        if self.known.len() >= MAX_KNOWN_FILES {
            return;
        }
        if let Some(found) = resolve::found(path).filter(|f| !f.dir) {
            self.known
                .insert(found.id, (kind, format!("{what} (`{}`)", path.display())));
        }
    }

    /// Every home on the machine, as found when these settings were made.
    pub fn homes(&self) -> &[PathBuf] {
        &self.homes
    }

    /// execgate's own files and directories as named (its database, configuration,
    /// sockets, the agents' homes): what no confined command may read or write.
    pub fn own_paths(&self) -> &[PathBuf] {
        &self.own_named
    }

    /// Whether `path` (absolute, lexically normal) is execgate's own, compared without
    /// case: on a case-insensitive file system another case names the same file.
    fn own(&self, path: &Path) -> bool {
        let path = lowercase(path);
        self.own_files.contains(&path) || self.own_dirs.iter().any(|d| path.starts_with(d))
    }

    /// Why `access` to `text` (a path as an agent wrote it, relative to `cwd`) may not
    /// be approved by a machine, if it may not.
    pub fn refusal(&self, text: &str, access: Access, cwd: Option<&Path>) -> Option<Refusal> {
        if text.is_empty() || text.contains('\0') {
            return None;
        }
        let text = text.strip_prefix("file://").unwrap_or(text);
        let absolute = if let Some(rest) = text.strip_prefix("~/").or((text == "~").then_some("")) {
            self.home.as_ref().map(|h| h.join(rest))
        } else {
            let path = Path::new(text);
            match cwd {
                _ if path.is_absolute() => Some(path.to_path_buf()),
                Some(cwd) => Some(cwd.join(path)),
                None => None,
            }
        };
        // Without a directory to resolve against, the text is all there is.
        let Some(absolute) = absolute else {
            return self.by_text(text, access, None);
        };
        let written = lexically_normal(&absolute);
        if let Some(r) = self.by_text(&written.to_string_lossy(), access, None) {
            return Some(r);
        }
        // The kernel takes `..` through the directory a link leads to; a tool's own path
        // handling takes it lexically first. Both are where the path may lead.
        let mut reals = vec![resolve::real(&absolute)];
        if written != absolute {
            reals.push(resolve::real(&written));
        }
        for real in reals.into_iter().flatten() {
            let shown = real.to_string_lossy();
            let via = (real != written).then_some(text);
            if let Some(r) = self.by_text(&shown, access, via) {
                return Some(r);
            }
            let found = resolve::found(&real);
            if let Some(r) = found.and_then(|f| self.by_file(f, access, text)) {
                return Some(r);
            }
            // A tree read of a directory reads everything beneath it (of a file, just
            // the file; of what does not exist yet, whatever comes to be there).
            let tree = access == Access::ReadTree && found.is_none_or(|f| f.dir);
            if tree && let Some(r) = self.tree_holds_secrets(&real, text) {
                return Some(r);
            }
        }
        None
    }

    /// The judgement of a path's text (`shown`, reached through `via` when a link led
    /// there).
    fn by_text(&self, shown: &str, access: Access, via: Option<&str>) -> Option<Refusal> {
        let what = |kind: Kind, what: &str| {
            let place = match via {
                Some(via) => format!("`{via}` → `{shown}`"),
                None => format!("`{shown}`"),
            };
            Some(Refusal {
                kind,
                what: format!("{what} ({place})"),
            })
        };
        if let Some(g) = guard_settings(shown) {
            return what(Kind::Guard, g);
        }
        if Path::new(shown).is_absolute() && self.own(Path::new(shown)) {
            return what(Kind::Own, "execgate's own files");
        }
        if is_secret(shown) {
            return what(Kind::Secret, "a secret");
        }
        if access == Access::Write {
            if let Some(s) = sensitive(shown) {
                return what(Kind::Sensitive, s);
            }
            let parts = names::components(shown);
            if let Some((_, why)) = self.configs.iter().find(|(c, _)| parts.ends_with(c)) {
                return what(
                    Kind::Sensitive,
                    &format!("configuration a program reads: {why}"),
                );
            }
        }
        None
    }

    /// The judgement of the file at the end, by device and inode.
    fn by_file(&self, found: Found, access: Access, text: &str) -> Option<Refusal> {
        let (kind, what) = self.known.get(&found.id)?;
        (access == Access::Write || *kind != Kind::Sensitive).then(|| Refusal {
            kind: *kind,
            what: format!("{what}, which `{text}` is another name for"),
        })
    }

    /// Whether a tree read of `dir` reaches secrets: it holds a home (or is one), or a
    /// secret directory is directly inside it.
    fn tree_holds_secrets(&self, dir: &Path, text: &str) -> Option<Refusal> {
        let holds = |what: &str| {
            Some(Refusal {
                kind: Kind::Secret,
                what: format!("secrets under `{text}` ({what})"),
            })
        };
        if let Some(home) = self.homes.iter().find(|h| h.starts_with(dir)) {
            return holds(&format!("`{}` is a home", home.display()));
        }
        // What holds the system's secrets, and where a project could never lie (a tree
        // read inside `/etc` reads its keys; one inside `/var/lib` may be a project's).
        const HOLDS: &[&str] = &["/etc", "/root", "/proc", "/var/lib", "/run", "/dev", "/sys"];
        const INSIDE: &[&str] = &["/etc", "/proc", "/dev", "/sys"];
        if let Some(system) = HOLDS.iter().find(|s| Path::new(s).starts_with(dir)) {
            return holds(&format!("`{system}` holds the system's secrets"));
        }
        if let Some(system) = INSIDE.iter().find(|s| dir.starts_with(s)) {
            return holds(&format!("`{system}` holds the system's secrets"));
        }
        let entries = std::fs::read_dir(dir).ok()?;
        for entry in entries.flatten().take(4096) {
            let name = entry.file_name().to_string_lossy().to_lowercase();
            if matches!(
                name.as_str(),
                ".ssh" | ".gnupg" | ".aws" | ".kube" | ".docker" | ".azure" | ".password-store"
            ) {
                return holds(&format!("`{name}` is inside it"));
            }
        }
        None
    }
}

fn lowercase(path: &Path) -> PathBuf {
    PathBuf::from(path.to_string_lossy().to_lowercase())
}

/// The homes of the machine's users (`/etc/passwd`), and the daemon's own: a tree
/// read of one reaches its keys.
fn homes(own: Option<&Path>) -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = own.into_iter().map(Path::to_path_buf).collect();
    if let Ok(passwd) = std::fs::read_to_string("/etc/passwd") {
        for line in passwd.lines() {
            let Some(home) = line.split(':').nth(5) else {
                continue;
            };
            // `/`, `/nonexistent`, `/usr/sbin`: system accounts without a home of their
            // own hold no keys there (and `/` would make every tree read a secret one).
            let path = Path::new(home);
            if home.len() > 1 && path.is_dir() && !matches!(home, "/bin" | "/usr/sbin" | "/sbin") {
                homes.push(path.to_path_buf());
            }
        }
    }
    let real: Vec<PathBuf> = homes.iter().filter_map(|h| resolve::real(h)).collect();
    homes.extend(real);
    homes.sort();
    homes.dedup();
    homes
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A machine in a directory: a home with a key and guard settings, execgate's own
    /// files, and a project.
    fn machine(root: &Path) -> Paths {
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::create_dir_all(root.join("home/.claude")).unwrap();
        std::fs::create_dir_all(root.join("state/execgate")).unwrap();
        std::fs::create_dir_all(root.join("project/src")).unwrap();
        std::fs::write(root.join("home/.ssh/id_x"), "key").unwrap();
        std::fs::write(root.join("home/.claude/settings.json"), "{}").unwrap();
        std::fs::write(root.join("state/execgate/execgate.db"), "").unwrap();
        let mut p = Paths {
            own_files: vec![lowercase(&root.join("state/execgate/execgate.db"))],
            own_dirs: vec![lowercase(&root.join("state/execgate"))],
            home: Some(root.join("home")),
            homes: vec![root.join("home")],
            known: HashMap::new(),
            configs: vec![(vec!["compose.yaml".into()], "names what runs")],
            own_named: Vec::new(),
        };
        p.know(&root.join("home/.ssh/id_x"), Kind::Secret, "a secret");
        p.know(
            &root.join("home/.claude/settings.json"),
            Kind::Guard,
            "guard",
        );
        p.know(&root.join("state/execgate/execgate.db"), Kind::Own, "own");
        p
    }

    #[test]
    fn a_path_is_judged_by_its_text_where_it_leads_and_the_file_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let p = machine(&root);
        let cwd = root.join("project");
        symlink(root.join("home/.ssh/id_x"), cwd.join("keylink")).unwrap();
        symlink(root.join("home/.ssh"), cwd.join("sshdir")).unwrap();
        symlink(root.join("home/.ssh/new"), cwd.join("dangling")).unwrap();
        std::fs::hard_link(root.join("home/.ssh/id_x"), cwd.join("hard")).unwrap();
        std::fs::hard_link(root.join("state/execgate/execgate.db"), cwd.join("db")).unwrap();
        let kind = |text: &str, access| p.refusal(text, access, Some(&cwd)).map(|r| r.kind);
        for (text, access, expected) in [
            ("keylink", Access::Read, Some(Kind::Secret)),
            ("sshdir/id_x", Access::Read, Some(Kind::Secret)),
            ("sshdir/../.ssh/id_x", Access::Read, Some(Kind::Secret)),
            ("dangling", Access::Write, Some(Kind::Secret)),
            ("hard", Access::Read, Some(Kind::Secret)),
            ("db", Access::Read, Some(Kind::Own)),
            ("~/.claude/settings.json", Access::Read, Some(Kind::Guard)),
            ("~/.CLAUDE/Settings.json", Access::Write, Some(Kind::Guard)),
            ("~/.bashrc", Access::Write, Some(Kind::Sensitive)),
            ("~/.bashrc", Access::Read, None),
            ("src/main.rs", Access::Write, None),
            ("compose.yaml", Access::Write, Some(Kind::Sensitive)),
            ("compose.yaml", Access::Read, None),
            ("src", Access::ReadTree, None),
            ("..", Access::ReadTree, Some(Kind::Secret)),
            ("../home", Access::ReadTree, Some(Kind::Secret)),
            ("/etc/ssl", Access::ReadTree, Some(Kind::Secret)),
            ("/etc/hosts", Access::ReadTree, None),
            ("/etc/hosts", Access::Read, None),
        ] {
            assert_eq!(kind(text, access), expected, "{text} ({access:?})");
        }
        let why = p.refusal("keylink", Access::Read, Some(&cwd)).unwrap().what;
        assert!(why.contains("keylink") && why.contains("id_x"), "{why}");
        // Without a cwd, the text alone.
        assert_eq!(p.refusal("keylink", Access::Read, None), None);
        assert!(p.refusal(".env", Access::Read, None).is_some());
    }
}
