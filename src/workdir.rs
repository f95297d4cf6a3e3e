//! A run's working directory, opened once (docs/lifecycle.md#the-working-directory).
//!
//! A path is only a name: between the moment a request's `cwd` is checked against
//! `exec.allowed_cwd_roots` and the moment its approved command starts (a human's
//! minutes, or a place in the run queue), whoever can write a parent directory can
//! rename it or swap it for a symlink, and a child told to `chdir(path)` would follow.
//! So the directory is opened when the request is validated, and the child changes into
//! that open directory (`fchdir`): what was checked is where the command runs, wherever
//! the directory has moved since. The record keeps the canonical path that was checked.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An open directory and the canonical path it was opened at.
#[derive(Clone, Debug)]
pub struct WorkDir {
    path: PathBuf,
    /// `O_PATH`: a handle on the directory itself, which needs no read permission and
    /// allows nothing but `fchdir`, `fstat` and lookups through `/proc/self/fd`.
    fd: Arc<OwnedFd>,
}

impl WorkDir {
    /// Opens the directory at `path` (absolute) and pairs it with its canonical path
    /// (`..` and symlinks resolved). Opening comes first and the canonical path is then
    /// checked to name the very directory that was opened, so a swap while this runs is
    /// an error, never a mismatch between the path checked and the directory kept.
    pub fn open(path: &Path) -> io::Result<WorkDir> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
            .open(path)?;
        let canonical = path.canonicalize()?;
        let wd = WorkDir {
            path: canonical,
            fd: Arc::new(OwnedFd::from(file)),
        };
        if !wd.is_at(&wd.path)? {
            return Err(io::Error::other(
                "it was moved or replaced while it was being opened",
            ));
        }
        Ok(wd)
    }

    /// The canonical path that was checked when the directory was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The descriptor a child `fchdir`s into. Valid for as long as `self` lives.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Where the opened directory is now, as the kernel names it, checked to be that
    /// directory: it may have been moved since it was opened, and whatever reads its
    /// surroundings by path (git's repository discovery walks up from it) must read
    /// them where the command will run, not where it was.
    pub fn now_at(&self) -> io::Result<PathBuf> {
        let here = std::fs::read_link(format!("/proc/self/fd/{}", self.raw_fd()))?;
        // A removed directory reads as "PATH (deleted)", which names nothing.
        if self.is_at(&here)? {
            Ok(here)
        } else {
            Err(io::Error::other(
                "it was removed, or moved while it was being looked up",
            ))
        }
    }

    /// Whether `path`, with no symlink in it, names the opened directory right now.
    pub fn is_at(&self, path: &Path) -> io::Result<bool> {
        let at = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        let canonical = path.canonicalize()?;
        Ok(canonical == path && same(&at, &self.metadata()?))
    }

    fn metadata(&self) -> io::Result<Metadata> {
        let fd = self.fd.try_clone()?;
        File::from(fd).metadata()
    }
}

fn same(a: &Metadata, b: &Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_a_directory_at_its_canonical_path() {
        let dir = tempfile::tempdir().unwrap();
        let canonical = dir.path().canonicalize().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        let wd = WorkDir::open(&dir.path().join("a/../a/.")).unwrap();
        assert_eq!(wd.path(), canonical.join("a"));
        assert_eq!(wd.now_at().unwrap(), canonical.join("a"));
    }

    #[test]
    fn follows_the_directory_not_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let canonical = dir.path().canonicalize().unwrap();
        let (a, b, other) = (
            canonical.join("a"),
            canonical.join("b"),
            canonical.join("o"),
        );
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&other).unwrap();
        let wd = WorkDir::open(&a).unwrap();
        std::fs::rename(&a, &b).unwrap();
        std::os::unix::fs::symlink(&other, &a).unwrap();
        assert_eq!(wd.path(), a, "the path checked is kept");
        assert!(
            !wd.is_at(&a).unwrap(),
            "a symlink to elsewhere is not the directory"
        );
        assert_eq!(wd.now_at().unwrap(), b, "the directory is where it moved");
    }

    #[test]
    fn a_removed_directory_is_nowhere() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::create_dir(&a).unwrap();
        let wd = WorkDir::open(&a).unwrap();
        std::fs::remove_dir(&a).unwrap();
        assert!(wd.now_at().is_err());
    }

    #[test]
    fn a_file_or_nothing_is_refused_with_its_kind() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let kind = |p: &Path| WorkDir::open(p).unwrap_err().kind();
        assert_eq!(kind(&file), io::ErrorKind::NotADirectory);
        assert_eq!(kind(&dir.path().join("none")), io::ErrorKind::NotFound);
    }
}
