//! Speaking to systemd: readiness, status, the watchdog and stopping (`sd_notify`), and
//! sockets handed over by socket activation (`LISTEN_FDS`). Outside systemd every
//! function here is a no-op, so the daemon runs the same from a terminal.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixListener;
use std::time::Duration;

use sd_notify::NotifyState;

/// Listening sockets systemd passed in, by the names the socket units give them
/// (`FileDescriptorName=agent` / `admin`); a single unnamed socket is the agent socket.
#[derive(Debug, Default)]
pub struct Activated {
    pub agent: Option<UnixListener>,
    pub admin: Option<UnixListener>,
}

/// Takes the sockets systemd passed, if any. Call it once, first thing in `main` while
/// the process has one thread: it clears `LISTEN_*` so nothing the daemon starts inherits
/// them.
pub fn take_activated_sockets() -> Result<Activated, String> {
    let fds: Vec<(RawFd, String)> = match sd_notify::listen_fds_with_names() {
        Ok(fds) => fds.collect(),
        Err(e) => return Err(format!("socket activation: {e}")),
    };
    // SAFETY: called from main before any other thread exists (see above).
    unsafe {
        std::env::remove_var("LISTEN_PID");
        std::env::remove_var("LISTEN_FDS");
        std::env::remove_var("LISTEN_FDNAMES");
    }
    let mut activated = Activated::default();
    let single = fds.len() == 1;
    for (fd, name) in fds {
        // SAFETY: systemd passed this descriptor to us and nothing else owns it.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let listener = UnixListener::from(owned);
        // A descriptor that is not a Unix socket is refused here, not at the first accept.
        listener.local_addr().map_err(|e| {
            format!("socket activation: descriptor {fd} ({name:?}) is not a Unix socket: {e}")
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("socket activation: descriptor {fd}: {e}"))?;
        match name.as_str() {
            "admin" => activated.admin = Some(listener),
            "agent" => activated.agent = Some(listener),
            _ if single => activated.agent = Some(listener),
            other => {
                return Err(format!(
                    "socket activation: unknown socket name {other:?} (use FileDescriptorName=agent or admin)"
                ));
            }
        }
    }
    Ok(activated)
}

fn send(states: &[NotifyState<'_>]) {
    if let Err(e) = sd_notify::notify(states) {
        tracing::warn!(error = %e, "cannot notify systemd");
    }
}

/// Ready: migrations ran, the crash sweep is done, the sockets accept.
pub fn ready(status: &str) {
    send(&[NotifyState::Ready, NotifyState::Status(status)]);
}

pub fn status(status: &str) {
    send(&[NotifyState::Status(status)]);
}

/// A configuration reload begins (READY=1 follows when it is done).
pub fn reloading() {
    match sd_notify::NotifyState::monotonic_usec_now() {
        Ok(now) => send(&[NotifyState::Reloading, now]),
        Err(_) => send(&[NotifyState::Reloading]),
    }
}

pub fn stopping() {
    send(&[NotifyState::Stopping, NotifyState::Status("stopping")]);
}

/// How often to say "still alive", when systemd watches: half its timeout.
pub fn watchdog_interval() -> Option<Duration> {
    sd_notify::watchdog_enabled().map(|d| d / 2)
}

pub fn watchdog() {
    send(&[NotifyState::Watchdog]);
}
