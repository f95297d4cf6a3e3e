//! The few direct system calls execgate needs: who we are, an exclusive lock that keeps
//! two daemons off one database, and keeping the daemon's memory to itself.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// The real uid of this process.
pub fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// The effective uid of this process: whose files these are, for the kernel.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Marks this process non-dumpable (`PR_SET_DUMPABLE` 0): processes of the same uid, such
/// as the commands the daemon runs, can no longer read its `/proc/PID/environ` or
/// `/proc/PID/mem` or attach a debugger, and it leaves no core dump. Only a process with
/// `CAP_SYS_PTRACE` (root, as a rule) still can. Not inherited across `exec`: the
/// commands the daemon runs are ordinary processes.
pub fn make_non_dumpable() -> io::Result<()> {
    // SAFETY: PR_SET_DUMPABLE takes one integer argument and touches no memory of ours.
    let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The home directory the user database gives `uid`, if it gives one.
pub fn home_of(uid: u32) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: an all-zero `passwd` is a valid value to be overwritten.
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is to live memory of the size given; on success the
        // strings of `entry` point into `buf`, which outlives their use below.
        let rc = unsafe {
            libc::getpwuid_r(
                uid,
                &mut entry,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut found,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 2, 0);
            continue;
        }
        if rc != 0 || found.is_null() || entry.pw_dir.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated string inside `buf`.
        let dir = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) };
        let dir = std::ffi::OsStr::from_bytes(dir.to_bytes());
        return (!dir.is_empty()).then(|| dir.into());
    }
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

/// Makes a FIFO at `path`, for the tests that put one where a file is expected.
#[cfg(test)]
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("no NUL");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {path:?}"
    );
}

/// Whether process `pid` runs with `no_new_privs` set (`NoNewPrivs: 1` in its
/// `/proc/PID/status`), as every command execgate runs does. An error when the process
/// cannot be looked at (gone, or /proc hidden).
pub fn no_new_privs(pid: i32) -> io::Result<bool> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("NoNewPrivs:"))
        .map(|v| v.trim() == "1")
        .ok_or_else(|| io::Error::other("no NoNewPrivs line in /proc/PID/status"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_user_database_gives_roots_home_and_nothing_for_a_stranger() {
        assert!(super::home_of(0).is_some_and(|h| h.is_absolute()));
        assert_eq!(super::home_of(u32::MAX - 7), None);
    }
}
