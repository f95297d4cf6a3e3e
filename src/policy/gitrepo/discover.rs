//! Finding the repository git would find from a directory, as git 2.47 does: walk up
//! until a `.git` that is a valid git directory (or a `gitdir:` file pointing at one),
//! or a directory that is itself one (bare); skip a `.git` directory that is not one
//! (git walks on past it to the parent); stop at a file-system boundary.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::files::Reader;

/// How many directories up from the working directory a repository is looked for.
const MAX_ASCENT: usize = 64;
/// git reads a `.git` file of at most this many bytes.
const MAX_GITFILE: u64 = 1024 * 1024;

/// A git directory, with where its shared parts are.
#[derive(Clone, Debug)]
pub(super) struct GitDir {
    /// Where `HEAD` and the index are (for a linked worktree, its own directory).
    pub(super) dir: PathBuf,
    /// Where `config`, `hooks/`, `objects/` and `modules/` are (`commondir`, else `dir`).
    pub(super) common: PathBuf,
}

/// What discovery found: the git directory, and the working tree (none for a bare
/// repository).
#[derive(Clone, Debug)]
pub(super) struct Found {
    pub(super) git: GitDir,
    pub(super) work_tree: Option<PathBuf>,
}

/// The repository git finds from `cwd`, if any. `Err`: git would fail, or execgate cannot
/// tell what git would find.
pub(super) fn discover(r: &mut Reader, cwd: &Path) -> Result<Option<Found>, String> {
    let device = match r.dir(cwd)? {
        Some(m) => m.dev(),
        None => return Err(format!("{} does not exist", cwd.display())),
    };
    let mut dir = cwd.to_path_buf();
    for _ in 0..MAX_ASCENT {
        let dot_git = dir.join(".git");
        if let Some(found) = dot_git_of(r, &dir, &dot_git)? {
            return Ok(Some(found));
        }
        if let Some(git) = git_dir(r, &dir)? {
            return Ok(Some(Found {
                git,
                work_tree: None,
            }));
        }
        let Some(parent) = dir.parent() else {
            return Ok(None);
        };
        match r.dir(parent)? {
            // git does not cross into another file system looking for a repository.
            Some(m) if m.dev() == device => dir = parent.to_path_buf(),
            _ => return Ok(None),
        }
    }
    Err("the working directory is too deep to look for a repository".into())
}

/// What `DIR/.git` makes of `DIR`: a repository whose working tree it is, or nothing
/// (no `.git`, or a `.git` git walks past).
fn dot_git_of(r: &mut Reader, dir: &Path, dot_git: &Path) -> Result<Option<Found>, String> {
    let Some(meta) = r.stat(dot_git)? else {
        return Ok(None);
    };
    let found = |git| {
        Some(Found {
            git,
            work_tree: Some(dir.to_path_buf()),
        })
    };
    if meta.is_file() {
        // A `gitdir:` file must point at a git directory, or git stops with an error.
        let target = gitfile(r, dot_git)?;
        return match git_dir(r, &target)? {
            Some(git) => Ok(found(git)),
            None => Err(format!(
                "{} points at {}, which is not a git directory",
                dot_git.display(),
                target.display()
            )),
        };
    }
    // A directory that is not a git directory, or anything else, is walked past.
    if meta.is_dir() {
        r.note(dot_git, &meta);
        return Ok(git_dir(r, dot_git)?.and_then(found));
    }
    Ok(None)
}

/// Where a `.git` file (`gitdir: PATH`) points, relative to the file's directory.
pub(super) fn gitfile(r: &mut Reader, path: &Path) -> Result<PathBuf, String> {
    let text = r
        .text(path, MAX_GITFILE)?
        .ok_or_else(|| format!("{} vanished while execgate read it", path.display()))?;
    let Some(target) = text.strip_prefix("gitdir: ") else {
        return Err(format!("{} is not a `gitdir:` file", path.display()));
    };
    let target = target.trim_end_matches(['\n', '\r']);
    if target.is_empty() {
        return Err(format!("{} names no git directory", path.display()));
    }
    Ok(path.parent().unwrap_or(Path::new("/")).join(target))
}

/// `dir` as a git directory, if git accepts it as one: a valid `HEAD` (a symlink into
/// `refs/`, a `ref: refs/…` file or an object id), and `objects/` and `refs/` it can
/// search in the common directory (`commondir`, else `dir`). `Err`: git would fail or
/// block on it, or whether git accepts it depends on what execgate cannot see.
pub(super) fn git_dir(r: &mut Reader, dir: &Path) -> Result<Option<GitDir>, String> {
    if !valid_head(r, &dir.join("HEAD"))? {
        return Ok(None);
    }
    let common = match r.stat(&dir.join("commondir"))? {
        None => dir.to_path_buf(),
        Some(_) => {
            let path = dir.join("commondir");
            let text = r
                .text(&path, MAX_GITFILE)?
                .ok_or_else(|| format!("{} vanished while execgate read it", path.display()))?;
            let target = text.trim_end_matches(['\n', '\r']);
            if target.is_empty() {
                return Err(format!("{} is empty, and git stops there", path.display()));
            }
            dir.join(target)
        }
    };
    for sub in ["objects", "refs"] {
        let path = common.join(sub);
        let Some(meta) = r.stat(&path)? else {
            return Ok(None);
        };
        match r.searchable(&meta) {
            Some(true) => {}
            Some(false) => return Ok(None),
            None => {
                return Err(format!(
                    "whether git may search {} depends on who runs it (mode {:o})",
                    path.display(),
                    meta.mode() & 0o7777
                ));
            }
        }
    }
    let meta = r.stat(dir)?.ok_or("the git directory vanished")?;
    r.note(dir, &meta);
    if common != dir
        && let Some(m) = r.stat(&common)?
    {
        r.note(&common, &m);
    }
    Ok(Some(GitDir {
        dir: dir.to_path_buf(),
        common,
    }))
}

/// git's `HEAD` check: a symlink whose target starts with `refs/`, or a file that is
/// `ref:` (blanks) `refs/…` or starts with an object id in hex.
fn valid_head(r: &mut Reader, head: &Path) -> Result<bool, String> {
    let Some(meta) = r.lstat(head)? else {
        return Ok(false);
    };
    if meta.file_type().is_symlink() {
        let target =
            std::fs::read_link(head).map_err(|e| format!("cannot read {}: {e}", head.display()))?;
        return Ok(target.as_os_str().as_encoded_bytes().starts_with(b"refs/"));
    }
    if meta.is_dir() {
        return Ok(false);
    }
    if !meta.is_file() {
        return Err(format!(
            "{} is neither a file nor a symlink, and git would block reading it",
            head.display()
        ));
    }
    // git reads at most 255 bytes of it.
    let Some(mut text) = r.read(head, u64::MAX)? else {
        return Ok(false);
    };
    text.truncate(255);
    if let Some(rest) = text.strip_prefix(b"ref:") {
        let rest = rest.trim_ascii_start();
        if rest.starts_with(b"refs/") {
            return Ok(true);
        }
    }
    let hex = text.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    Ok(hex >= 40)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn make_git_dir(dir: &Path) {
        fs::create_dir_all(dir.join("objects")).unwrap();
        fs::create_dir_all(dir.join("refs/heads")).unwrap();
        fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    }

    fn find(cwd: &Path) -> Result<Option<Found>, String> {
        discover(&mut Reader::new(Some(0)), cwd)
    }

    #[test]
    fn a_dot_git_that_is_not_a_git_directory_is_walked_past() {
        let top = tempfile::tempdir().unwrap();
        make_git_dir(&top.path().join(".git"));
        let inner = top.path().join("inner");
        // Only a `commondir`, no HEAD: git walks on to the parent repository.
        fs::create_dir_all(inner.join(".git")).unwrap();
        fs::write(inner.join(".git/commondir"), "/nonexistent\n").unwrap();
        let found = find(&inner).unwrap().unwrap();
        assert_eq!(found.git.dir, top.path().join(".git"));
        assert_eq!(found.work_tree.as_deref(), Some(top.path()));
        // A HEAD that names no ref, or objects missing: the same.
        fs::write(inner.join(".git/HEAD"), "garbage\n").unwrap();
        assert_eq!(
            find(&inner).unwrap().unwrap().git.dir,
            top.path().join(".git")
        );
        fs::write(inner.join(".git/HEAD"), "ref: refs/heads/x\n").unwrap();
        fs::create_dir_all(inner.join(".git/refs")).unwrap();
        fs::remove_file(inner.join(".git/commondir")).unwrap();
        assert_eq!(
            find(&inner).unwrap().unwrap().git.dir,
            top.path().join(".git")
        );
        fs::create_dir_all(inner.join(".git/objects")).unwrap();
        assert_eq!(find(&inner).unwrap().unwrap().git.dir, inner.join(".git"));
    }

    #[test]
    fn heads_and_gitfiles() {
        let top = tempfile::tempdir().unwrap();
        let git = top.path().join("g");
        make_git_dir(&git);
        fs::write(git.join("HEAD"), format!("{}\n", "a".repeat(40))).unwrap();
        assert!(git_dir(&mut Reader::new(None), &git).unwrap().is_some());
        fs::write(git.join("HEAD"), "ref:\t refs/heads/x").unwrap();
        assert!(git_dir(&mut Reader::new(None), &git).unwrap().is_some());
        let wt = top.path().join("wt");
        fs::create_dir_all(&wt).unwrap();
        fs::write(wt.join(".git"), "gitdir: ../g\n").unwrap();
        assert_eq!(find(&wt).unwrap().unwrap().git.dir, wt.join("../g"));
        fs::write(wt.join(".git"), "gitdir: ../nowhere\n").unwrap();
        assert!(find(&wt).is_err(), "git stops at a gitfile to nowhere");
        fs::write(wt.join(".git"), "gitdir:../g\n").unwrap();
        assert!(find(&wt).is_err(), "git wants `gitdir: `");
    }

    #[test]
    fn a_fifo_commondir_is_an_error_not_a_hang() {
        let top = tempfile::tempdir().unwrap();
        let git = top.path().join(".git");
        make_git_dir(&git);
        let fifo = git.join("commondir");
        crate::sys::mkfifo(&fifo);
        let err = find(top.path()).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[test]
    fn searchable_depends_on_who_runs_git() {
        use std::os::unix::fs::PermissionsExt;
        let top = tempfile::tempdir().unwrap();
        let git = top.path().join("g");
        make_git_dir(&git);
        fs::set_permissions(git.join("objects"), fs::Permissions::from_mode(0o700)).unwrap();
        let owner = fs::metadata(git.join("objects")).unwrap().uid();
        let mut as_owner = Reader::new(Some(owner));
        assert!(git_dir(&mut as_owner, &git).unwrap().is_some());
        // Another uid: git walks past it (neither group nor others may search).
        let mut other = Reader::new(Some(owner + 1));
        assert!(git_dir(&mut other, &git).unwrap().is_none());
        // Unknown: execgate cannot tell.
        assert!(git_dir(&mut Reader::new(None), &git).is_err());
    }
}
