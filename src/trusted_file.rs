//! Reading the files execgate takes its configuration from (the config file, an env file)
//! only when nobody but execgate's own user or root could have written them: whoever can
//! write such a file decides what execgate approves.
//!
//! The checks are made on the file that was opened (`fstat` on its descriptor, so
//! swapping the path for another file after the check changes nothing), and on the
//! directory it sits in, as named and as resolved through symlinks: someone who can write
//! that directory can put another file in its place for the next start. A directory with
//! the sticky bit (`/tmp`) is fine that way: others cannot remove or rename a file they do
//! not own there. Directories further up are not checked.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Larger than this, a file is not configuration (and is not read into memory whole).
const MAX_BYTES: u64 = 1024 * 1024;

/// Why a configuration file was not read. Every message names the file and says how to
/// fix it.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{what} {}: cannot open: {source}", path.display())]
    Open {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{what} {}: cannot read: {source}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not a regular file, too large, or not UTF-8.
    #[error("{what} {}: {why}", path.display())]
    Unusable {
        what: &'static str,
        path: PathBuf,
        why: String,
    },
    /// Someone other than execgate's user or root could have written it.
    #[error("{what} {}: {why}; refusing to read it. Fix: {fix}", path.display())]
    Untrusted {
        what: &'static str,
        path: PathBuf,
        why: String,
        fix: String,
    },
}

/// The contents of `path`, a regular UTF-8 file of at most 1 MiB that only this process's
/// effective user or root can have written (see the module's comment). `what` names the
/// file in messages ("config file", "env file").
pub fn read(path: &Path, what: &'static str) -> Result<String, FileError> {
    // O_NONBLOCK: a FIFO put where the file should be must not hang the start; it is
    // refused below as not a regular file. It changes nothing for a regular file.
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|source| FileError::Open {
            what,
            path: path.into(),
            source,
        })?;
    let meta = file.metadata().map_err(|source| FileError::Read {
        what,
        path: path.into(),
        source,
    })?;
    let unusable = |why: String| FileError::Unusable {
        what,
        path: path.into(),
        why,
    };
    if !meta.is_file() {
        return Err(unusable("not a regular file".into()));
    }
    if meta.len() > MAX_BYTES {
        return Err(unusable(format!(
            "larger than {MAX_BYTES} bytes: not a configuration file"
        )));
    }
    let euid = crate::sys::effective_uid();
    check_file(&meta, euid).map_err(|(why, fix)| FileError::Untrusted {
        what,
        path: path.into(),
        why,
        fix: fix.replace("PATH", &path.display().to_string()),
    })?;
    for dir in directories(path, &file) {
        let dir_meta = std::fs::metadata(&dir).map_err(|source| FileError::Read {
            what,
            path: dir.clone(),
            source,
        })?;
        check_dir(&dir_meta, euid).map_err(|(why, fix)| FileError::Untrusted {
            what,
            path: path.into(),
            why: format!("it is in {}, which {why}", dir.display()),
            fix: fix.replace("PATH", &dir.display().to_string()),
        })?;
    }
    let mut text = String::new();
    file.by_ref()
        .take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|source| FileError::Read {
            what,
            path: path.into(),
            source,
        })?;
    Ok(text)
}

/// The directories whose writers could replace the file: the one `path` names it in, and
/// the one the opened file really is in (they differ when `path` is a symlink).
fn directories(path: &Path, file: &File) -> Vec<PathBuf> {
    let named = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // The kernel's name for the open descriptor is the file actually opened, whatever
    // happened to the path since; without /proc, the path resolved again.
    let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .ok()
        .filter(|p| p.is_absolute())
        .or_else(|| path.canonicalize().ok());
    let mut dirs = vec![named];
    if let Some(dir) = real.as_deref().and_then(Path::parent) {
        let dir = dir.to_path_buf();
        let same = std::fs::canonicalize(&dirs[0]).is_ok_and(|d| d == dir);
        if !same {
            dirs.push(dir);
        }
    }
    dirs
}

/// `Err((what is wrong, how to fix it))`; `PATH` in the fix stands for the file.
fn check_file(meta: &Metadata, euid: u32) -> Result<(), (String, String)> {
    if meta.uid() != euid && meta.uid() != 0 {
        return Err((
            format!(
                "it is owned by uid {} (mode {:04o}), neither execgate's user (uid {euid}) nor root, and its owner could change it",
                meta.uid(),
                meta.mode() & 0o7777
            ),
            format!("chown {} PATH (or use a file of your own)", owner(euid)),
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err((
            format!(
                "it can be written by its group or by others ({})",
                found(meta)
            ),
            "chmod go-w PATH".into(),
        ));
    }
    Ok(())
}

/// As [`check_file`], for the directory holding the file; `PATH` stands for it.
fn check_dir(meta: &Metadata, euid: u32) -> Result<(), (String, String)> {
    if meta.uid() != euid && meta.uid() != 0 {
        return Err((
            format!(
                "is owned by uid {} (mode {:04o}), neither execgate's user (uid {euid}) nor root: its owner could put another file in its place",
                meta.uid(),
                meta.mode() & 0o7777
            ),
            "keep the file in a directory owned by you or root".into(),
        ));
    }
    let sticky = meta.mode() & 0o1000 != 0;
    if meta.mode() & 0o022 != 0 && !sticky {
        return Err((
            format!(
                "its group or others can write ({}, no sticky bit): they could put another file in its place",
                found(meta)
            ),
            "chmod go-w PATH, or keep the file in another directory".into(),
        ));
    }
    Ok(())
}

fn found(meta: &Metadata) -> String {
    format!(
        "owner uid {}, mode {:04o}",
        meta.uid(),
        meta.mode() & 0o7777
    )
}

fn owner(euid: u32) -> String {
    if euid == 0 {
        "root".into()
    } else {
        euid.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_private_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "x = 1\n").unwrap();
        chmod(&path, 0o644);
        assert_eq!(read(&path, "config file").unwrap(), "x = 1\n");
    }

    #[test]
    fn writable_by_others_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "").unwrap();
        for mode in [0o666, 0o620, 0o602] {
            chmod(&path, mode);
            let e = read(&path, "config file").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("config file {}", path.display())),
                "{e}"
            );
            assert!(e.contains(&format!("mode {mode:04o}")), "{e}");
            assert!(
                e.contains(&format!("Fix: chmod go-w {}", path.display())),
                "{e}"
            );
        }
    }

    #[test]
    fn a_directory_others_can_write_is_refused_unless_sticky() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        let path = open.join("c.toml");
        std::fs::write(&path, "").unwrap();
        chmod(&open, 0o777);
        let e = read(&path, "env file").unwrap_err().to_string();
        assert!(e.contains(&format!("it is in {}", open.display())), "{e}");
        assert!(e.contains("mode 0777"), "{e}");
        chmod(&open, 0o1777);
        assert!(read(&path, "env file").is_ok());
        chmod(&open, 0o700);
    }

    #[test]
    fn not_a_regular_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        crate::sys::mkfifo(&fifo);
        let e = read(&fifo, "env file").unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read(dir.path(), "env file").unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read(&dir.path().join("none"), "env file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot open"), "{e}");
    }
}
