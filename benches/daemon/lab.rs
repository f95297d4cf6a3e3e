//! The lab: a temp dir, and `execgate serve` processes started in it as systemd would.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use tokio::net::UnixDatagram;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::runtime_env;
use crate::stats::mib;

const READY_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(120);

pub struct Lab {
    dir: tempfile::TempDir,
    starts: usize,
}

impl Lab {
    pub fn new() -> Result<Lab> {
        let dir = tempfile::tempdir()?;
        // An explicit, empty configuration file: no /etc/execgate or ~/.config file
        // can change what is measured.
        std::fs::write(
            dir.path().join("execgate.toml"),
            "# built-in defaults; the bench sets the rest in the environment\n",
        )?;
        Ok(Lab { dir, starts: 0 })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn agent_socket(&self) -> PathBuf {
        self.path().join("run/agent.sock")
    }

    pub fn admin_socket(&self) -> PathBuf {
        self.path().join("run/admin.sock")
    }

    pub fn daemon_db(&self) -> PathBuf {
        self.path().join("state/execgate.db")
    }

    /// Starts `execgate serve` on `database` as systemd would (READY=1 on
    /// `NOTIFY_SOCKET`), at the default log level, and waits until it is ready.
    pub async fn start(&mut self, database: &Path) -> Result<Daemon> {
        self.start_with(database, &[]).await
    }

    /// [`Lab::start`], with `extra` on top of the bench's environment.
    pub async fn start_with(&mut self, database: &Path, extra: &[(&str, &str)]) -> Result<Daemon> {
        self.starts += 1;
        let log = self.path().join(format!("daemon-{}.log", self.starts));
        let notify_path = self.path().join(format!("notify-{}.sock", self.starts));
        let notify = UnixDatagram::bind(&notify_path)?;
        let (ready_tx, ready_rx) = oneshot::channel();
        let listener = tokio::spawn(listen_for_ready(notify, ready_tx));
        let log_file = std::fs::File::create(&log)?;
        let spawned = Instant::now();
        let child = tokio::process::Command::new(daemon_binary())
            .arg("serve")
            // The temp dir: nothing of a developer's working directory is near it.
            .current_dir(self.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path())
            .env("EXECGATE_CONFIG", self.path().join("execgate.toml"))
            .env("EXECGATE_SOCKET", self.agent_socket())
            .env("EXECGATE_ADMIN_SOCKET", self.admin_socket())
            .env("EXECGATE_DATABASE", database)
            .env("EXECGATE_LIMITS__MAX_PENDING_PER_UID", "20000")
            // Section C asks for 10,000 decisions at once, from one uid.
            .env("EXECGATE_LIMITS__ASKS_PER_MINUTE_PER_UID", "1000000")
            .env("EXECGATE_LIMITS__MAX_CONNECTIONS_PER_UID", "1024")
            .env("EXECGATE_APPROVAL__TIMEOUT_SECS", "3600")
            .env("NOTIFY_SOCKET", &notify_path)
            .envs(runtime_env())
            .envs(extra.iter().copied())
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .spawn()
            .context("starting execgate serve")?;
        let mut daemon = Daemon {
            pid: child.id().context("the daemon has a pid")? as i32,
            child,
            log,
            notify: listener,
            stopped: false,
            ready: Duration::ZERO,
        };
        daemon.ready = daemon.wait_ready(spawned, ready_rx).await?;
        Ok(daemon)
    }
}

/// Plays systemd's side of `NOTIFY_SOCKET`: tells when READY=1 arrives, and keeps
/// reading afterwards, since the daemon sends a status every few seconds and a full
/// queue (10 datagrams by default) would block its main loop.
async fn listen_for_ready(socket: UnixDatagram, ready: oneshot::Sender<Instant>) {
    let mut ready = Some(ready);
    let mut buf = [0_u8; 4096];
    while let Ok(n) = socket.recv(&mut buf).await {
        if buf[..n]
            .split(|&b| b == b'\n')
            .any(|line| line == b"READY=1")
            && let Some(tx) = ready.take()
        {
            let _ = tx.send(Instant::now());
        }
    }
}

/// A running `execgate serve`. Dropped without a clean [`Daemon::stop`] (an error or a
/// panic in the bench), it is killed and the tail of its log is printed.
pub struct Daemon {
    child: tokio::process::Child,
    pid: i32,
    log: PathBuf,
    notify: JoinHandle<()>,
    stopped: bool,
    /// Spawn to READY=1.
    pub ready: Duration,
}

impl Daemon {
    async fn wait_ready(
        &mut self,
        spawned: Instant,
        ready: oneshot::Receiver<Instant>,
    ) -> Result<Duration> {
        tokio::select! {
            at = ready => Ok(at.context("the notify socket closed")? - spawned),
            status = self.child.wait() => {
                bail!("execgate serve exited ({}) before READY=1", status?)
            }
            () = tokio::time::sleep(READY_TIMEOUT) => {
                bail!("execgate serve sent no READY=1 within {READY_TIMEOUT:?}")
            }
        }
    }

    /// SIGTERM, then waits for the exit, which must be clean; returns how long it took.
    pub async fn stop(&mut self) -> Result<Duration> {
        let start = Instant::now();
        // SAFETY: signalling our own child, which has not been reaped yet.
        ensure!(
            unsafe { libc::kill(self.pid, libc::SIGTERM) } == 0,
            "cannot signal the daemon: {}",
            std::io::Error::last_os_error()
        );
        let status = tokio::time::timeout(STOP_TIMEOUT, self.child.wait())
            .await
            .with_context(|| {
                format!("the daemon did not exit within {STOP_TIMEOUT:?} of SIGTERM")
            })??;
        let took = start.elapsed();
        ensure!(
            status.success(),
            "the daemon exited with {status} after SIGTERM"
        );
        self.stopped = true;
        Ok(took)
    }

    /// SIGKILL: the daemon dies without a word, as on a power cut.
    pub fn kill(&mut self) {
        let _ = self.child.start_kill();
        self.stopped = true;
    }

    pub fn memory(&self) -> Result<Memory> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid))?;
        let field = |name: &str| -> Result<u64> {
            let line = status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .with_context(|| format!("no {name} in /proc/{}/status", self.pid))?;
            let kib: u64 = line.trim().trim_end_matches("kB").trim().parse()?;
            Ok(kib * 1024)
        };
        Ok(Memory {
            rss: field("VmRSS:")?,
            hwm: field("VmHWM:")?,
        })
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.notify.abort();
        if !self.stopped {
            let _ = self.child.start_kill();
            eprintln!(
                "--- execgate serve killed by the bench; tail of {} ---\n{}",
                self.log.display(),
                tail(&self.log, 40)
            );
        }
    }
}

fn tail(path: &Path, lines: usize) -> String {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(e) => format!("(cannot read it: {e})"),
    }
}

#[derive(Clone, Copy)]
pub struct Memory {
    pub rss: u64,
    /// Peak RSS so far.
    hwm: u64,
}

impl Memory {
    pub fn show(&self) -> String {
        format!("RSS {} (peak {})", mib(self.rss), mib(self.hwm))
    }

    pub fn json(&self) -> Value {
        json!({"rss_bytes": self.rss, "hwm_bytes": self.hwm})
    }
}

/// The daemon measured: this build's, unless `EXECGATE_BENCH_DAEMON` names another
/// `execgate` binary (an older build, to compare two versions in one session with the
/// same load and the same baseline).
pub fn daemon_binary() -> std::ffi::OsString {
    std::env::var_os("EXECGATE_BENCH_DAEMON")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_execgate").into())
}
