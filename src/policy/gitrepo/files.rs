//! Reading a repository's files as a daemon must: regular files only, opened without
//! blocking (a FIFO named `.git/commondir` must not hang the request, nor every later
//! one), size-bounded, within one budget of files, bytes and time per inspection; and
//! noting whether anyone but the daemon's user could change what was read before git
//! reads it again. The configuration gates of other programs (`policy::progconfig`)
//! read their files with the same reader.

use std::fs::{self, File, Metadata};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long one inspection may take, all its files together. A repository is read in
/// well under a millisecond; this bounds a slow or hostile file system.
const TIME: Duration = Duration::from_millis(500);
/// How many files and directories one inspection may open, stat or list (a repository
/// with 50 submodules takes about 2,500).
const FILES: usize = 16384;
/// How many bytes one inspection may read, all files together.
const BYTES: u64 = 64 * 1024 * 1024;

/// What one inspection may still spend, and what it found about who can write.
pub(in crate::policy) struct Reader {
    deadline: Instant,
    files: usize,
    bytes: u64,
    /// The uid git will run as, if known: whose permissions decide what git can open.
    pub(in crate::policy) git_uid: Option<u32>,
    /// The uid execgate runs as: files only it (or root) can write cannot change under it.
    daemon_uid: u32,
    /// The first file or directory read that a uid other than the daemon's (or root's)
    /// could write, with why.
    pub(in crate::policy) writable: Option<String>,
}

impl Reader {
    pub(in crate::policy) fn new(git_uid: Option<u32>) -> Reader {
        Reader {
            deadline: Instant::now() + TIME,
            files: FILES,
            bytes: BYTES,
            git_uid,
            daemon_uid: crate::sys::effective_uid(),
            writable: None,
        }
    }

    /// Counts one more file operation against the budget.
    pub(in crate::policy) fn spend(&mut self, path: &Path) -> Result<(), String> {
        if self.files == 0 {
            return Err(format!(
                "there are more files than execgate reads in one judgement (at {})",
                path.display()
            ));
        }
        self.files -= 1;
        self.in_time(path)
    }

    /// Whether the inspection is still within its time.
    fn in_time(&self, path: &Path) -> Result<(), String> {
        if Instant::now() > self.deadline {
            return Err(format!(
                "reading the configuration took longer than execgate allows (at {})",
                path.display()
            ));
        }
        Ok(())
    }

    /// Notes `path` if a uid other than the daemon's or root's owns it, or its group or
    /// others may write it.
    pub(in crate::policy) fn note(&mut self, path: &Path, meta: &Metadata) {
        if self.writable.is_some() {
            return;
        }
        let owner = meta.uid();
        let why = if owner != self.daemon_uid && owner != 0 {
            format!("{} belongs to uid {owner}", path.display())
        } else if meta.mode() & 0o022 != 0 {
            format!("{} is writable by its group or others", path.display())
        } else {
            return;
        };
        self.writable = Some(why);
    }

    /// The metadata of `path`, following symlinks as git does; `None` if it does not
    /// exist (or a component of it is not a directory).
    pub(in crate::policy) fn stat(&mut self, path: &Path) -> Result<Option<Metadata>, String> {
        self.spend(path)?;
        match fs::metadata(path) {
            Ok(m) => Ok(Some(m)),
            Err(e) if absent(&e) => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// The metadata of `path` itself (a symlink is not followed).
    pub(in crate::policy) fn lstat(&mut self, path: &Path) -> Result<Option<Metadata>, String> {
        self.spend(path)?;
        match fs::symlink_metadata(path) {
            Ok(m) => Ok(Some(m)),
            Err(e) if absent(&e) => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// A directory git walks through or reads from, noted for who can write it.
    pub(in crate::policy) fn dir(&mut self, path: &Path) -> Result<Option<Metadata>, String> {
        let meta = self.stat(path)?;
        if let Some(m) = &meta
            && m.is_dir()
        {
            self.note(path, m);
        }
        Ok(meta)
    }

    /// The whole of a regular file of at most `max` bytes; `None` if it does not exist.
    /// Anything else (a FIFO, a device, a directory, a file too large) is an error: git
    /// itself would block on, or read, something execgate cannot vouch for.
    pub(in crate::policy) fn read(
        &mut self,
        path: &Path,
        max: u64,
    ) -> Result<Option<Vec<u8>>, String> {
        Ok(self.read_with_meta(path, max)?.map(|(data, _)| data))
    }

    /// [`Reader::read`], with the metadata of the file that was read (taken from the open
    /// file, so a symlink swapped in between cannot make it another file's).
    pub(in crate::policy) fn read_with_meta(
        &mut self,
        path: &Path,
        max: u64,
    ) -> Result<Option<(Vec<u8>, Metadata)>, String> {
        self.spend(path)?;
        let file = match File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if absent(&e) => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if !meta.is_file() {
            return Err(format!("{} is not a regular file", path.display()));
        }
        if meta.len() > max || meta.len() > self.bytes {
            return Err(format!(
                "{} is larger than execgate reads ({} bytes)",
                path.display(),
                meta.len()
            ));
        }
        self.note(path, &meta);
        let mut data = Vec::with_capacity(meta.len() as usize);
        file.take(max.min(self.bytes) + 1)
            .read_to_end(&mut data)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if data.len() as u64 > max.min(self.bytes) {
            return Err(format!("{} grew while execgate read it", path.display()));
        }
        self.bytes -= data.len() as u64;
        Ok(Some((data, meta)))
    }

    /// [`Reader::read`] as text (git's files are bytes; what is not UTF-8 is replaced,
    /// which changes no name execgate looks for).
    pub(in crate::policy) fn text(
        &mut self,
        path: &Path,
        max: u64,
    ) -> Result<Option<String>, String> {
        Ok(self
            .read(path, max)?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// The names in a directory, sorted; `None` if it does not exist.
    pub(in crate::policy) fn list(&mut self, path: &Path) -> Result<Option<Vec<String>>, String> {
        self.spend(path)?;
        let entries = match fs::read_dir(path) {
            Ok(e) => e,
            Err(e) if absent(&e) => return Ok(None),
            Err(e) => return Err(format!("cannot list {}: {e}", path.display())),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot list {}: {e}", path.display()))?;
            self.in_time(path)?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(Some(names))
    }

    /// Whether git, running as `git_uid`, may search `path` (`access(path, X_OK)`, which
    /// is how git checks a git directory's `objects` and `refs`). `None` when that
    /// depends on what execgate cannot see (the uid's groups, or which uid git runs as).
    pub(in crate::policy) fn searchable(&self, meta: &Metadata) -> Option<bool> {
        let mode = meta.mode();
        let any_x = mode & 0o111 != 0;
        match self.git_uid {
            // Root may search any directory, and execute a file with any x bit.
            Some(0) => Some(meta.is_dir() || any_x),
            Some(uid) if uid == meta.uid() => Some(mode & 0o100 != 0),
            // Group or others: the same answer either way, or unknown.
            Some(_) if (mode & 0o010 != 0) == (mode & 0o001 != 0) => Some(mode & 0o001 != 0),
            Some(_) => None,
            // Any uid: all of them may, or none but root.
            None if mode & 0o111 == 0o111 => Some(true),
            None => None,
        }
    }
}

/// A path that is not there, as git's own `stat` would find.
fn absent(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("commondir");
        crate::sys::mkfifo(&fifo);
        let mut r = Reader::new(None);
        let err = r.read(&fifo, 1024).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        assert!(r.read(dir.path(), 1024).is_err(), "a directory");
        assert_eq!(r.read(&dir.path().join("missing"), 1024).unwrap(), None);
        let big = dir.path().join("big");
        fs::write(&big, vec![b'x'; 100]).unwrap();
        assert!(r.read(&big, 99).unwrap_err().contains("larger"));
        assert_eq!(r.read(&big, 100).unwrap().unwrap().len(), 100);
    }

    #[test]
    fn the_budget_bounds_the_files_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = Reader::new(None);
        r.files = 2;
        assert!(r.stat(dir.path()).is_ok());
        assert!(r.stat(dir.path()).is_ok());
        assert!(r.stat(dir.path()).unwrap_err().contains("more files"));
    }
}
