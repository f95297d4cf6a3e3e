//! A hostile agent on its own uid. CI runs as root; these helpers run the agent's side
//! as `nobody` (65534), so that the daemon's peer-uid checks, its socket modes and file
//! permissions are the kernel's, not a test's pretence.
//!
//! Two ways in: [`as_agent`] runs async code on a thread of its own whose credentials
//! are dropped (Linux keeps credentials per thread, and a socket records its creator's
//! credentials at `connect`, so the daemon sees uid 65534 on every connection that
//! thread makes), and [`agent_command`] runs a program, usually the `execgate` CLI, as
//! that uid.

use std::future::Future;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;

/// The agent's uid and gid: `nobody` and `nogroup` on Debian.
pub const AGENT_UID: u32 = 65534;
pub const AGENT_GID: u32 = 65534;

/// True when this test can put its agent on another uid (it runs as root). Elsewhere
/// it says why it is skipped and returns false; under CI, which runs as root, not being
/// root is a failure rather than a silent pass.
pub fn can_switch_uid(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    let why = format!(
        "{test}: needs root to run the hostile agent as uid {AGENT_UID} (run the tests as root, as CI does)"
    );
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipped: {why}");
    false
}

/// Lets uid `AGENT_UID` reach the daemon's agent socket in `daemon_dir` and nothing
/// else: every directory from `daemon_dir` down to the socket becomes searchable (not
/// listable) by others, and the agent socket's group becomes the agent's. The admin
/// socket stays 0600 and the daemon's own.
pub fn let_agent_in(daemon_dir: &Path, agent_socket: &Path) {
    let mut dir = agent_socket.parent().expect("socket has a directory");
    loop {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o711)).unwrap();
        if dir == daemon_dir {
            break;
        }
        dir = dir
            .parent()
            .expect("the socket lies inside the daemon's directory");
    }
    std::os::unix::fs::chown(agent_socket, None, Some(AGENT_GID)).unwrap();
}

/// Runs `f` to completion on a fresh thread whose uid and gid are `AGENT_UID` and
/// `AGENT_GID` (real, effective and saved, with no supplementary groups), on a runtime
/// of its own. The rest of the test process keeps its credentials.
pub fn as_agent<F, Fut, T>(f: F) -> T
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    std::thread::spawn(move || {
        drop_thread_credentials();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f())
    })
    .join()
    .expect("the agent's thread panicked")
}

/// The raw system calls, not libc's wrappers: glibc's `setresuid` changes every thread
/// of the process, the kernel's changes only the calling one.
fn drop_thread_credentials() {
    let (g, u) = (AGENT_GID as libc::c_long, AGENT_UID as libc::c_long);
    // SAFETY: plain system calls on this thread's credentials; the results are checked.
    unsafe {
        assert_eq!(
            libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>()),
            0
        );
        assert_eq!(libc::syscall(libc::SYS_setresgid, g, g, g), 0);
        assert_eq!(libc::syscall(libc::SYS_setresuid, u, u, u), 0);
        assert_eq!(libc::syscall(libc::SYS_geteuid), u);
    }
}

/// `program` as the agent's uid and gid, with no supplementary groups (std drops them
/// when root sets a uid), a cleared environment but `PATH`, and `env` on top.
pub fn agent_command(program: &Path, env: &[(String, String)]) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.uid(AGENT_UID)
        .gid(AGENT_GID)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir("/");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}
