//! Whether a read stays inside the project: the path, resolved as the kernel resolves it,
//! lies in the project both as written and where its links lead; what is at the end is
//! a regular file or a directory (or nothing yet), never a FIFO, a device or a socket;
//! and a tree read's whole tree is walked for what it would reach: secret files, links
//! out of the project, hard links to known secrets. Nothing is opened but directories.

use std::os::unix::fs::DirEntryExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{Access, FileId, Kind, Paths, lexically_normal, resolve};

/// At most this many entries of a tree are looked at; a bigger tree is not vouched for.
pub const MAX_TREE_ENTRIES: usize = 50_000;

/// How deep a tree is walked; a deeper one is not vouched for.
const MAX_TREE_DEPTH: usize = 64;

/// Where a read is judged: the project, and whether a tree read may pass secret files.
#[derive(Clone, Copy, Debug)]
pub struct Project<'a> {
    pub root: &'a Path,
    /// `policy.tree_reads_over_secrets`.
    pub over_secrets: bool,
}

impl Paths {
    /// Why reading `text` (relative to `cwd`) is not a read inside `project` execgate can
    /// vouch for, if it is not. `access`: a read, or a tree read.
    pub fn outside(
        &self,
        text: &str,
        access: Access,
        cwd: &Path,
        project: Project<'_>,
    ) -> Option<String> {
        let root = project.root;
        if text.is_empty() || text.contains('\0') || text.starts_with('~') {
            return Some(format!("`{text}` is not a path in the project"));
        }
        let absolute = cwd.join(text);
        let outside = || Some(format!("`{text}` lies outside the project"));
        if !lexically_normal(&absolute).starts_with(root) {
            return outside();
        }
        let real = match absolute.canonicalize() {
            Ok(real) => real,
            // Nothing there yet: where its links lead, as written and as the kernel
            // would take its `..`, must stay inside.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let lexical = lexically_normal(&absolute);
                let inside = [resolve::real(&absolute), resolve::real(&lexical)]
                    .iter()
                    .all(|r| r.as_ref().is_some_and(|r| r.starts_with(root)));
                return if inside { None } else { outside() };
            }
            Err(e) => return Some(format!("`{text}` cannot be resolved: {e}")),
        };
        if !real.starts_with(root) {
            return Some(format!(
                "`{text}` leads outside the project (`{}`)",
                real.display()
            ));
        }
        let meta = match std::fs::metadata(&real) {
            Ok(meta) => meta,
            Err(e) => return Some(format!("`{text}` cannot be looked at: {e}")),
        };
        let kind = meta.file_type();
        if !kind.is_file() && !kind.is_dir() {
            return Some(format!(
                "`{text}` is not a regular file or a directory (a FIFO, a device or a socket)"
            ));
        }
        if access == Access::ReadTree && kind.is_dir() {
            return self.tree_outside(&real, text, project, meta.dev());
        }
        None
    }

    /// What a tree read of `dir` (resolved, inside the project) would reach that it may
    /// not: a secret file, a link out of the project or to a secret, a hard link to a
    /// known secret; or a tree too big or deep to look at whole.
    fn tree_outside(
        &self,
        dir: &Path,
        text: &str,
        project: Project<'_>,
        dev: u64,
    ) -> Option<String> {
        let mut todo: Vec<(PathBuf, usize)> = vec![(dir.to_path_buf(), 0)];
        let mut seen = 0usize;
        while let Some((at, depth)) = todo.pop() {
            let entries = match std::fs::read_dir(&at) {
                Ok(entries) => entries,
                Err(e) => {
                    return Some(format!(
                        "`{text}`: `{}` cannot be read to see what is in it: {e}",
                        at.display()
                    ));
                }
            };
            for entry in entries {
                let Ok(entry) = entry else {
                    return Some(format!("`{text}`: `{}` could not be read", at.display()));
                };
                seen += 1;
                if seen > MAX_TREE_ENTRIES {
                    return Some(format!(
                        "`{text}` holds more than {MAX_TREE_ENTRIES} entries: too many to look at"
                    ));
                }
                let path = entry.path();
                let shown = path.to_string_lossy();
                let Ok(kind) = entry.file_type() else {
                    return Some(format!("`{shown}` could not be looked at"));
                };
                // By name: a secret (which the owner may let tree reads pass), guard
                // settings, execgate's own files.
                if let Some(r) = self.by_text(&shown, Access::Read, None)
                    && !(r.kind == Kind::Secret && project.over_secrets)
                    && !(r.kind == Kind::Guard && git_file_without_credentials(&path))
                {
                    let inside = path.strip_prefix(project.root).unwrap_or(&path);
                    return Some(match r.kind {
                        Kind::Secret => format!(
                            "`{text}` holds a secret, `{}`, which a recursive read would show (policy.tree_reads_over_secrets)",
                            inside.display()
                        ),
                        _ => format!("`{text}` holds {}", r.what),
                    });
                }
                if kind.is_symlink() {
                    // Where a link leads matters only to a program that follows it, but
                    // which do is theirs to say: a link out of the project, or to what
                    // the path policy refuses, is not vouched for.
                    let leads = resolve::real(&path);
                    if !leads.as_ref().is_some_and(|l| l.starts_with(project.root)) {
                        return Some(format!("`{shown}` links outside the project"));
                    }
                    if let Some(r) = self.refusal(&shown, Access::Read, None) {
                        return Some(format!("`{text}` reaches {}", r.what));
                    }
                    continue;
                }
                if kind.is_file()
                    && let Some((_, what)) = self.known.get(&FileId {
                        dev,
                        ino: entry.ino(),
                    })
                {
                    return Some(format!("`{text}` holds another name for {what}"));
                }
                if kind.is_dir() {
                    if depth + 1 >= MAX_TREE_DEPTH {
                        return Some(format!("`{text}` is too deep to look at"));
                    }
                    todo.push((path, depth + 1));
                }
            }
        }
        None
    }
}

/// Whether `path`, a guard setting by name, is a file of a git directory that holds no
/// credentials: a tree read shows it to the agent, which may read the repository's
/// configuration and hooks (writing them is what switches a guard off), but not a
/// password or token kept in a remote's URL (`https://user:TOKEN@host/…`).
fn git_file_without_credentials(path: &Path) -> bool {
    use std::io::Read;
    let in_git = path.components().any(|c| c.as_os_str() == ".git");
    if !in_git {
        return false;
    }
    if path.file_name().is_none_or(|n| n != "config") {
        return true;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut text = String::new();
    if file.take(1 << 20).read_to_string(&mut text).is_err() {
        return false;
    }
    !text.lines().any(|line| {
        line.split("://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .is_some_and(|authority| authority.contains('@'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_read_is_inside_when_it_leads_there_and_its_tree_holds_nothing_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("app");
        std::fs::create_dir_all(project.join("src/deep")).unwrap();
        std::fs::create_dir_all(project.join("conf")).unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::write(root.join("home/.ssh/id_x"), "key").unwrap();
        std::fs::write(project.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(project.join("conf/.env"), "TOKEN=x").unwrap();
        std::fs::create_dir_all(project.join("agent/.claude")).unwrap();
        std::fs::write(project.join("agent/.claude/settings.json"), "{}").unwrap();
        symlink(root.join("home/.ssh/id_x"), project.join("keylink")).unwrap();
        symlink("../src", project.join("conf/src")).unwrap();
        std::fs::create_dir_all(project.join("other")).unwrap();
        symlink(root.join("home"), project.join("other/out")).unwrap();
        let fifo = project.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let mut paths = Paths::default();
        let key = root.join("home/.ssh/id_x");
        let meta = std::fs::metadata(&key).unwrap();
        let id = FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        };
        paths
            .known
            .insert(id, (Kind::Secret, "a secret (`id_x`)".into()));
        let here = Project {
            root: &project,
            over_secrets: false,
        };
        let cwd = project.join("src");
        let judge = |text: &str, access| paths.outside(text, access, &cwd, here);
        assert_eq!(judge("main.rs", Access::Read), None);
        assert_eq!(judge("../README.md", Access::Read), None, "not there yet");
        assert_eq!(
            judge(".", Access::ReadTree),
            None,
            "a link that stays inside"
        );
        assert_eq!(judge("../conf/src", Access::Read), None);
        for (text, access, why) in [
            ("../../home/.ssh/id_x", Access::Read, "outside"),
            ("../keylink", Access::Read, "leads outside"),
            ("../pipe", Access::Read, "not a regular file"),
            ("../conf", Access::ReadTree, "holds a secret"),
            ("../other", Access::ReadTree, "links outside"),
            ("../agent", Access::ReadTree, "Claude Code's settings"),
            ("~/x", Access::Read, "not a path"),
            ("/etc/hostname", Access::Read, "outside"),
        ] {
            let got = judge(text, access).unwrap_or_default();
            assert!(got.contains(why), "{text}: {got}");
        }
        assert!(judge("..", Access::ReadTree).is_some());
        // A repository's own files are read like the project's, but for a remote URL
        // that carries credentials.
        std::fs::create_dir_all(project.join("lib/.git/hooks")).unwrap();
        std::fs::write(project.join("lib/.git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        let config = project.join("lib/.git/config");
        std::fs::write(&config, "[remote \"o\"]\n\turl = https://github.com/a/b\n").unwrap();
        assert_eq!(judge("../lib", Access::ReadTree), None);
        std::fs::write(
            &config,
            "[remote \"o\"]\n\turl = https://me:ghp_x@github.com/a/b\n",
        )
        .unwrap();
        assert!(judge("../lib", Access::ReadTree).is_some());
        // The owner may let tree reads pass over secret files by name.
        let over = Project {
            over_secrets: true,
            ..here
        };
        assert_eq!(paths.outside("../conf", Access::ReadTree, &cwd, over), None);
        // A hard link to a known secret inside the tree is that secret.
        let hard = project.join("conf/copy");
        if std::fs::hard_link(&key, &hard).is_ok() {
            let got = paths
                .outside("../conf", Access::ReadTree, &cwd, over)
                .unwrap_or_default();
            assert!(got.contains("another name"), "{got}");
        }
    }
}
