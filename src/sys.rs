//! The few direct system calls execgate needs: who we are, and an exclusive lock that
//! keeps two daemons off one database.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// The real uid of this process.
pub fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// An exclusive advisory lock held for the life of the value (the kernel drops it when the
/// file closes, so a crashed daemon never leaves it behind).
#[derive(Debug)]
pub struct LockFile {
    _file: File,
}

impl LockFile {
    /// Takes the lock without waiting. `Ok(None)`: another process holds it.
    pub fn try_acquire(path: &Path) -> io::Result<Option<LockFile>> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        // SAFETY: the descriptor is valid for the life of `file`.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(Some(LockFile { _file: file }));
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            Err(err)
        }
    }
}
