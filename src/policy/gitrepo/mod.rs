//! The git repositories a command would run in, as far as they decide what git runs:
//! the repository git finds from the working directory, every submodule it can enter,
//! their configuration files (with includes) and their hooks.
//!
//! git runs programs named in a repository's configuration (`core.fsmonitor` on `git
//! status`, `diff.external` and textconv drivers on `git diff`, filters, aliases,
//! pagers, …) and hooks from `hooks/`, and an agent can often write both. `git status`
//! and `git diff` also run git inside every checked-out submodule, which reads that
//! submodule's own configuration (`.git/modules/NAME/config`). So an approval without a
//! human of a git command needs to know them all (docs/decisions.md#the-git-gate): in
//! decide-only mode, the command is approved only when no repository it can enter sets
//! a program-valued key (`programs::git::keys`) or holds a hook the command could run;
//! in run mode, execgate neutralises them through the environment (`GIT_CONFIG_COUNT`,
//! `GIT_CONFIG_KEY_n`, `GIT_CONFIG_VALUE_n`), which git reads above every file and
//! passes to the git it runs in submodules, without changing the approved argv.
//!
//! The parts: `discover` finds the repository as git does (a `.git` that is not a valid
//! git directory is walked past), `config` reads configuration files, `index` lists the
//! submodules an index holds, and `files` reads every file without blocking, within a
//! budget, noting who else could write it. A repository execgate cannot read whole is
//! unknown: a human decides.
//!
//! Only the repositories' own files are read. The user's global and system configuration
//! belong to the user, not the agent; an agent on its own uid cannot write them.

mod config;
mod discover;
pub(super) mod files;
mod index;

use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use super::programs::git::keys;
use discover::Found;
use files::Reader;

pub use config::parse;

/// How deep submodules may nest, and how many repositories one command may reach.
const MAX_NESTING: usize = 8;
const MAX_REPOSITORIES: usize = 256;
/// How deep `modules/` is searched for submodules' git directories (names may hold `/`).
const MAX_MODULES_DEPTH: usize = 8;
/// The largest index execgate reads (a repository of a few hundred thousand files).
const MAX_INDEX_BYTES: u64 = 48 * 1024 * 1024;

/// What execgate found in a repository and the submodules git can enter from it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repo {
    /// The repository's git directory (where `HEAD` and `config` are, for a worktree
    /// the shared one).
    pub git_dir: PathBuf,
    /// Keys whose value is a program git runs, or that change what git does in ways an
    /// agent could use, with why: the repository's and every submodule's.
    pub program_keys: Vec<Key>,
    /// Hooks present (executable files in `hooks/` that are not samples); a submodule's
    /// are named with its path (`lib: post-checkout`).
    pub hooks: Vec<String>,
    /// A file or directory git reads here that a uid other than the daemon's (or root)
    /// could change before git reads it again, if there is one: in run mode policy then
    /// never approves git on its own, since what execgate read is not what git will.
    pub writable: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    /// As git names it: `section.subsection.key`, section and key lowercased.
    pub name: String,
    pub why: &'static str,
    /// The value that neutralises it in run mode, if one does.
    pub neutral: Option<&'static str>,
    /// The submodule whose configuration sets it (its path in the working tree), or
    /// `None` for the repository itself.
    pub submodule: Option<String>,
}

impl Key {
    /// Where it is set, for a human: "the repository's `core.fsmonitor`", "submodule
    /// `lib`'s `diff.external`".
    pub fn shown(&self) -> String {
        match &self.submodule {
            None => format!("the repository's `{}`", self.name),
            Some(path) => format!("submodule `{path}`'s `{}`", self.name),
        }
    }
}

/// Finds the repository git finds from `cwd`, if any, and reads it and every submodule
/// git can enter from it. `git_uid`: the uid git will run as, if known (it decides which
/// directories git may search). `Ok(None)`: no repository (git would say "not a git
/// repository"). `Err`: there is one, or might be, and it cannot be read fully within
/// execgate's budget.
pub fn inspect(cwd: &Path, git_uid: Option<u32>) -> Result<Option<Repo>, String> {
    let mut r = Reader::new(git_uid);
    let Some(found) = discover::discover(&mut r, cwd)? else {
        return Ok(None);
    };
    let mut walk = Walk {
        r,
        repo: Repo {
            git_dir: found.git.common.clone(),
            ..Repo::default()
        },
        seen: HashSet::new(),
        top: found.work_tree.clone(),
    };
    walk.repository(&found, None, 0)?;
    walk.repo.writable = walk.r.writable.take();
    Ok(Some(walk.repo))
}

/// The working tree of the repository git finds from `cwd`, if there is one and
/// execgate can tell which: where a request's project lies (`policy::project`).
/// `git_uid`: the uid git would run as, if known.
pub fn work_tree(cwd: &Path, git_uid: Option<u32>) -> Option<PathBuf> {
    let mut r = Reader::new(git_uid);
    discover::discover(&mut r, cwd).ok()??.work_tree
}

/// One inspection: what has been read, and what is found.
struct Walk {
    r: Reader,
    repo: Repo,
    /// Git directories already read (a submodule is reached from its checkout and from
    /// `modules/`).
    seen: HashSet<PathBuf>,
    /// The top repository's working tree: submodules' `core.worktree` must stay in it.
    top: Option<PathBuf>,
}

impl Walk {
    /// Reads one repository (`label`: a submodule's path, `None` for the top one), then
    /// every submodule git can enter from it.
    fn repository(
        &mut self,
        found: &Found,
        label: Option<&str>,
        depth: usize,
    ) -> Result<(), String> {
        if !self.seen.insert(lexical(&found.git.dir)) {
            return Ok(());
        }
        if self.seen.len() > MAX_REPOSITORIES {
            return Err(format!(
                "more than {MAX_REPOSITORIES} repositories and submodules to read"
            ));
        }
        if depth > MAX_NESTING {
            return Err(format!("submodules nest deeper than {MAX_NESTING}"));
        }
        let git = &found.git;
        let mut entries = Vec::new();
        config::read(&mut self.r, &git.common.join("config"), false, &mut entries)?;
        config::read(
            &mut self.r,
            &git.dir.join("config.worktree"),
            false,
            &mut entries,
        )?;
        let mut oid_len = 20;
        for entry in &entries {
            if entry.name == "extensions.objectformat" {
                oid_len = match entry
                    .value
                    .as_deref()
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                {
                    Some("sha1") => 20,
                    Some("sha256") => 32,
                    other => {
                        return Err(format!(
                            "{}: an object format execgate does not know ({other:?})",
                            entry.file.display()
                        ));
                    }
                };
            }
            self.judge(entry, label, found.work_tree.as_deref());
        }
        for hook in self.hooks(&git.common.join("hooks"))? {
            self.repo.hooks.push(match label {
                None => hook,
                Some(path) => format!("{path}: {hook}"),
            });
        }
        if let Some(work_tree) = &found.work_tree {
            let index = self.r.read(&git.dir.join("index"), MAX_INDEX_BYTES)?;
            let links = match index {
                Some(data) => index::gitlinks(&data, oid_len)
                    .map_err(|e| format!("{}: {e}", git.dir.join("index").display()))?,
                None => Vec::new(),
            };
            for link in links {
                let dir = work_tree.join(&link);
                let shown = match label {
                    None => link.clone(),
                    Some(parent) => format!("{parent}/{link}"),
                };
                if let Some(sub) = self.checked_out(&dir)? {
                    self.repository(&sub, Some(&shown), depth + 1)?;
                }
            }
        }
        self.modules(&git.common.join("modules"), label, depth, 0)
    }

    /// The submodule checked out at `dir`, as git finds it there: `dir/.git`, a git
    /// directory or a `gitdir:` file pointing at one. `None`: not checked out (git skips
    /// it). `Err`: git would stop with an error, or execgate cannot tell.
    fn checked_out(&mut self, dir: &Path) -> Result<Option<Found>, String> {
        if self.r.dir(dir)?.is_none() {
            return Ok(None);
        }
        let dot_git = dir.join(".git");
        let Some(meta) = self.r.stat(&dot_git)? else {
            return Ok(None);
        };
        let target = if meta.is_file() {
            discover::gitfile(&mut self.r, &dot_git)?
        } else if meta.is_dir() {
            dot_git.clone()
        } else {
            return Ok(None);
        };
        match discover::git_dir(&mut self.r, &target)? {
            Some(git) => Ok(Some(Found {
                git,
                work_tree: Some(dir.to_path_buf()),
            })),
            None if meta.is_dir() => Err(format!(
                "{} is not a git repository, and git stops there",
                dot_git.display()
            )),
            None => Err(format!(
                "{} points at {}, which is not a git directory",
                dot_git.display(),
                target.display()
            )),
        }
    }

    /// Every git directory under `modules/` (a submodule's, checked out or not: `git
    /// submodule update` checks it out and runs its hooks), and theirs in turn.
    fn modules(
        &mut self,
        dir: &Path,
        label: Option<&str>,
        depth: usize,
        level: usize,
    ) -> Result<(), String> {
        if level > MAX_MODULES_DEPTH {
            return Err(format!("{} nests too deep", dir.display()));
        }
        let Some(names) = self.r.list(dir)? else {
            return Ok(());
        };
        if let Some(m) = self.r.stat(dir)? {
            self.r.note(dir, &m);
        }
        for name in names {
            let path = dir.join(&name);
            if !self.r.stat(&path)?.is_some_and(|m| m.is_dir()) {
                continue;
            }
            match discover::git_dir(&mut self.r, &path)? {
                Some(git) => {
                    let shown = match label {
                        None => format!("modules/{name}"),
                        Some(parent) => format!("{parent}/modules/{name}"),
                    };
                    // Its working tree is wherever its checkout is, found from the index.
                    let found = Found {
                        git,
                        work_tree: None,
                    };
                    self.repository(&found, Some(&shown), depth + 1)?;
                }
                None => self.modules(&path, label, depth, level + 1)?,
            }
        }
        Ok(())
    }

    /// Records a setting that makes git run a program or reach elsewhere.
    fn judge(&mut self, entry: &config::Entry, label: Option<&str>, work_tree: Option<&Path>) {
        let value = Some(entry.value.as_deref());
        let Some(row) = keys::program_key(&entry.name, value) else {
            return;
        };
        // A submodule's git directory names the submodule's checkout as its working
        // tree: that is where git works anyway, so it is no move elsewhere.
        if label.is_some()
            && entry.name == "core.worktree"
            && let (Some(value), Some(top)) = (&entry.value, &self.top)
        {
            let tree = lexical(&entry.file.parent().unwrap_or(Path::new("/")).join(value));
            let inside = tree.starts_with(lexical(top));
            if inside && work_tree.is_none_or(|w| lexical(w) == tree) {
                return;
            }
        }
        let submodule = label.map(str::to_string);
        if !self
            .repo
            .program_keys
            .iter()
            .any(|k| k.name == entry.name && k.submodule == submodule)
        {
            self.repo.program_keys.push(Key {
                name: entry.name.clone(),
                why: row.why,
                neutral: row.off.value(),
                submodule,
            });
        }
    }

    /// Hooks git would run: executable, non-sample files in the hooks directory.
    fn hooks(&mut self, dir: &Path) -> Result<Vec<String>, String> {
        let Some(names) = self.r.list(dir)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for name in names {
            if name.ends_with(".sample") {
                continue;
            }
            // Follows symlinks, as git does when it runs a hook.
            let executable = self
                .r
                .stat(&dir.join(&name))?
                .is_some_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
            if executable {
                out.push(name);
            }
        }
        Ok(out)
    }
}

/// `path` with `.` and `..` resolved by their names (not by the file system): how two
/// spellings of one directory are told to be the same.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `GIT_CONFIG_*` variables for a run: every program-valued key with no subsection set
/// to a value that behaves as unset (`keys::always_neutralised`), whatever execgate read,
/// so a file changed after it was read cannot bring one back; and what `repo` (with its
/// submodules) sets beyond those, neutralised; numbered after any the environment
/// already has. Also the keys that no value neutralises (a human must decide about
/// them: policy never approves git where one is set).
pub fn neutralising_env(
    repo: Option<&Repo>,
    env: &[(String, String)],
) -> (Vec<(String, String)>, Vec<String>) {
    let mut pairs: Vec<(String, String)> = keys::always_neutralised()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
    let mut cannot = Vec::new();
    for key in repo.map(|r| r.program_keys.as_slice()).unwrap_or_default() {
        match key.neutral {
            Some(v) => {
                if !pairs.iter().any(|(k, _)| k.eq_ignore_ascii_case(&key.name)) {
                    pairs.push((key.name.clone(), v.to_string()));
                }
            }
            None => cannot.push(format!(
                "{} {}, which execgate cannot neutralise",
                key.shown(),
                key.why
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
    use std::fs;

    fn repo(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        for sub in ["hooks", "objects", "refs/heads"] {
            fs::create_dir_all(git.join(sub)).unwrap();
        }
        fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::write(git.join("config"), config).unwrap();
        fs::write(git.join("hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
        dir
    }

    #[test]
    fn inspects_a_repository_from_a_subdirectory() {
        let dir = repo("[core]\n\tbare = false\n");
        let sub = dir.path().join("a/b");
        fs::create_dir_all(&sub).unwrap();
        let r = inspect(&sub, None).unwrap().unwrap();
        assert!(r.program_keys.is_empty() && r.hooks.is_empty(), "{r:?}");

        let dir = repo("[core]\n\tfsmonitor = /tmp/evil\n[include]\n\tpath = more\n");
        fs::write(dir.path().join(".git/more"), "[diff]\n\texternal = x\n").unwrap();
        let r = inspect(dir.path(), None).unwrap().unwrap();
        let keys: Vec<&str> = r.program_keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(keys, ["core.fsmonitor", "diff.external"]);

        let dir = repo("[include]\n\tpath = ~/x\n");
        assert!(inspect(dir.path(), None).is_err());
        let dir = repo("[include]\n\tpath = missing\n");
        assert!(inspect(dir.path(), None).is_ok());
        let dir = repo("[include]\n\tpath = config\n");
        assert!(inspect(dir.path(), None).unwrap_err().contains("deeper"));
    }

    #[test]
    fn finds_hooks_and_worktree_pointers() {
        use std::os::unix::fs::PermissionsExt;
        let dir = repo("");
        let hook = dir.path().join(".git/hooks/post-index-change");
        fs::write(&hook, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            inspect(dir.path(), None).unwrap().unwrap().hooks,
            ["post-index-change"]
        );

        let wt = tempfile::tempdir().unwrap();
        fs::write(
            wt.path().join(".git"),
            format!("gitdir: {}\n", dir.path().join(".git").display()),
        )
        .unwrap();
        assert_eq!(
            inspect(wt.path(), None).unwrap().unwrap().git_dir,
            dir.path().join(".git")
        );
    }

    #[test]
    fn the_environment_neutralises_what_was_found() {
        let dir = repo("[filter \"ev\"]\n\tclean = x\n");
        let r = inspect(dir.path(), None).unwrap().unwrap();
        let (env, cannot) = neutralising_env(Some(&r), &[("GIT_CONFIG_COUNT".into(), "1".into())]);
        assert!(cannot.is_empty());
        let always = keys::always_neutralised().count();
        assert!(env.contains(&("GIT_CONFIG_KEY_1".into(), "core.fsmonitor".into())));
        let last = always + 1;
        assert!(env.contains(&(format!("GIT_CONFIG_KEY_{last}"), "filter.ev.clean".into())));
        assert!(env.contains(&(format!("GIT_CONFIG_VALUE_{last}"), "".into())));
        assert!(env.contains(&("GIT_CONFIG_COUNT".into(), (last + 1).to_string())));
        let dir = repo("[url \"ext::sh -c x\"]\n\tinsteadOf = https://\n");
        let r = inspect(dir.path(), None).unwrap().unwrap();
        assert!(!neutralising_env(Some(&r), &[]).1.is_empty());
    }
}
