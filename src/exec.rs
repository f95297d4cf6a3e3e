//! Running approved commands (run mode, docs/lifecycle.md#run-mode): one child in its own process group,
//! a cleared environment, bounded output capture, and a timeout that takes down the whole
//! group.
//!
//! [`run`] never panics and always returns within `timeout` + [`KILL_GRACE`] + a few small
//! margins, whatever the command does: it reads both pipes while waiting, so a chatty
//! command never blocks on a full pipe, and it kills the group at the end, so nothing the
//! command started in the background outlives the run.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::pin::{Pin, pin};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep_until};

use crate::confine;
use crate::model::{self, Confine, ExecResult};
use crate::workdir::WorkDir;

/// How long a timed-out group has between SIGTERM and SIGKILL to clean up after itself.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// After the main process exits, how long its background children may keep the output
/// pipes open before the group is killed. Long enough to flush what is already written,
/// short enough that `sleep 100 &` does not hold the run.
pub const DRAIN_GRACE: Duration = Duration::from_millis(100);

/// How long to wait, after SIGKILL, for the kernel to deliver it and the pipes to close.
/// Only a process that left the group (`setsid`) while holding a pipe can use it all up.
const KILL_MARGIN: Duration = Duration::from_secs(1);

/// `PATH` when the daemon itself has none: what a login shell would have.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Size of each stream's read buffer: the pipe's default capacity, so one read usually
/// empties it.
const READ_CHUNK: usize = 64 * 1024;

/// What runs for an approved request, fixed when the request was checked: the API builds
/// it with the request, by the configuration the request was judged by. The bytes that
/// were approved are the bytes that run.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// A `Line` runs as `/bin/sh -c LINE`. An `Argv` runs without a shell: a program
    /// without `/` is looked up in the absolute entries of the `PATH` of the run's
    /// environment; one with `/` is used as is (relative to `cwd`).
    pub command: model::Command,
    /// Opened when the request was validated; the child changes into it (`fchdir`).
    pub cwd: WorkDir,
    /// Written to stdin, which is then closed. `None`: stdin is `/dev/null`, so a command
    /// that reads it finishes at once instead of waiting for input nobody will send.
    pub input: Option<String>,
    pub timeout: Duration,
    /// The most kept in memory from each of stdout and stderr; the rest is counted and
    /// discarded.
    pub max_output_bytes: usize,
    /// The child's complete environment; nothing is inherited from the daemon. Filled by
    /// `runs` just before the run, when the repository the command will meet is read.
    pub env: Vec<(String, String)>,
    /// The kernel's hold on the child (docs/decisions.md#confinement), put on it before
    /// it execs: what the verdict says, and its ruleset. None: not confined. Filled by
    /// `runs` just before the run.
    pub confine: Option<(Confine, confine::Prepared)>,
}

/// The environment a command gets: `PATH`, `HOME`, `LANG` and `USER` from the daemon's own
/// environment (only those that are set, except that `PATH` falls back to
/// [`DEFAULT_PATH`]), then each name in `passthrough` that is set, each name once. Values
/// that are not valid Unicode are left out. `PATH` keeps only its absolute entries (see
/// [`absolute_path`]).
pub fn minimal_env(passthrough: &[String]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    let names = ["PATH", "HOME", "LANG", "USER"]
        .into_iter()
        .chain(passthrough.iter().map(String::as_str));
    for name in names {
        // `env::var` may panic on such names, and they cannot be set anyway.
        if name.is_empty() || name.contains(['=', '\0']) || env.iter().any(|(n, _)| n == name) {
            continue;
        }
        match std::env::var(name) {
            Ok(value) if name == "PATH" => env.push((name.to_owned(), absolute_path(&value))),
            Ok(value) => env.push((name.to_owned(), value)),
            Err(_) if name == "PATH" => env.push((name.to_owned(), DEFAULT_PATH.to_owned())),
            Err(_) => {}
        }
    }
    env
}

/// `path` without its empty and relative entries. An empty entry (`::`, or a `:` at
/// either end) and `.` mean the working directory, and `bin` is relative to it: a command
/// run in a directory an agent can write would find the agent's programs before the
/// system's under the names policy approved. Nothing left: [`DEFAULT_PATH`], since an
/// empty `PATH` is itself the working directory to a shell.
pub fn absolute_path(path: &str) -> String {
    let kept: Vec<&str> = path.split(':').filter(|dir| dir.starts_with('/')).collect();
    if kept.is_empty() {
        DEFAULT_PATH.to_owned()
    } else {
        kept.join(":")
    }
}

/// Runs the command and reports how it went. Failures (cannot start, timeout) are in
/// `error`, never a panic or an `Err`: the caller records whatever comes back.
pub async fn run(spec: RunSpec) -> ExecResult {
    let (program, args) = match resolve(&spec) {
        Ok(found) => found,
        Err(message) => return failed(message),
    };
    let mut command = Command::new(&program);
    let dir = spec.cwd.raw_fd();
    let ruleset = spec.confine.as_ref().map(|(_, r)| r.raw_fd());
    // SAFETY: fchdir and `confine::restrict` are async-signal-safe, and `dir` and the
    // ruleset stay open until `spawn` returns (`spec` owns them). Not `current_dir`:
    // that looks the path up again, in the child. The ruleset goes on after the change
    // of directory (the directory was opened before) and before exec, so the program
    // and everything it starts are held from their first instruction; a failure to put
    // it on fails the spawn: nothing runs unconfined that was to be confined.
    unsafe {
        command.pre_exec(move || {
            if libc::fchdir(dir) != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(fd) = ruleset {
                confine::restrict(fd)?;
            }
            Ok(())
        });
    }
    command
        .args(args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        // Its own group, so one signal reaches everything the command starts.
        .process_group(0)
        .stdin(if spec.input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // If this future is dropped (the request is cancelled), the child does not linger.
        .kill_on_drop(true);

    let started = Instant::now();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) if spec.confine.is_some() => {
            return failed(format!(
                "cannot start `{}` confined (its confinement could not be put on, or it could not start under it): {e}",
                program.display()
            ));
        }
        Err(e) => return failed(format!("cannot start `{}`: {e}", program.display())),
    };
    // The group id is the child's pid (`process_group(0)`); keep it, since `Child::id`
    // forgets it once the child is reaped and the rest of the group may still be alive.
    let pgid = child.id().and_then(|pid| i32::try_from(pid).ok());
    // `kill_on_drop` reaches only the main process; if this future is dropped mid-run,
    // the guard takes the rest of the group with it.
    let mut group = GroupGuard { pgid, armed: true };

    // Written from its own task so a command that reads slowly (or not at all) cannot
    // stop us reading its output; dropping the handle at the end closes stdin.
    let writer = match (spec.input, child.stdin.take()) {
        (Some(input), Some(mut stdin)) => Some(tokio::spawn(async move {
            // EPIPE just means the command did not want all of its input.
            let _ = stdin.write_all(input.as_bytes()).await;
        })),
        _ => None,
    };

    let mut out = Capture::new(spec.max_output_bytes);
    let mut err = Capture::new(spec.max_output_bytes);
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let mut seen = Seen::default();
    let mut timed_out = false;
    {
        // Both streams in one future, polled alongside `wait`; the captures live outside
        // it, so what was read survives if we have to stop reading early.
        let mut reading = pin!(async {
            tokio::join!(out.drain(stdout), err.drain(stderr));
        });
        // A timeout too large to add is as good as none (the API caps it long before).
        let deadline = started
            .checked_add(spec.timeout)
            .unwrap_or_else(|| started + Duration::from_secs(100 * 365 * 86_400));
        if !watch(
            &mut child,
            reading.as_mut(),
            &mut seen,
            deadline,
            Seen::exited,
        )
        .await
        {
            timed_out = true;
            signal_group(pgid, libc::SIGTERM);
        }
        // After a timeout, the group's time to clean up. After a normal exit, the time a
        // background child holding the pipes gets to flush before the kill below. Either
        // ends early once the main process is gone and the pipes are closed.
        let grace = if timed_out { KILL_GRACE } else { DRAIN_GRACE };
        watch(
            &mut child,
            reading.as_mut(),
            &mut seen,
            Instant::now() + grace,
            Seen::all,
        )
        .await;
        // Always, even after a clean exit: whatever is left of the group (a background
        // child, or a command that ignored SIGTERM) must not outlive the run.
        group.kill();
        let margin_end = Instant::now() + KILL_MARGIN;
        watch(
            &mut child,
            reading.as_mut(),
            &mut seen,
            margin_end,
            Seen::all,
        )
        .await;
    }
    let duration = started.elapsed();
    if let Some(writer) = writer {
        writer.abort();
    }

    let mut problems = Vec::new();
    if timed_out {
        problems.push(format!(
            "timed out after {} ms; the process group was terminated",
            spec.timeout.as_millis()
        ));
    }
    let (exit_code, signal) = match seen.status {
        Some(Ok(s)) => (s.code(), s.signal()),
        Some(Err(e)) => {
            problems.push(format!("cannot wait for the process: {e}"));
            (None, None)
        }
        None => {
            // SIGKILL could not be delivered in time (e.g. uninterruptible I/O); tokio
            // reaps the child in the background once it does die.
            tracing::warn!(?pgid, "process did not die after SIGKILL");
            problems.push("the process did not exit after SIGKILL".to_owned());
            (None, None)
        }
    };
    if !seen.read_done {
        tracing::warn!(?pgid, "output pipes still open after the group was killed");
        problems.push(
            "stopped reading output: a process outside the group still holds the pipes".to_owned(),
        );
    }

    let (out, err) = (out.finish(), err.finish());
    ExecResult {
        exit_code,
        signal,
        timed_out,
        duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
        stdout: out.text,
        stdout_truncated: out.truncated,
        stderr_truncated: err.truncated,
        stdout_bytes: out.total,
        stderr_bytes: err.total,
        stdout_lossy: out.lossy,
        stderr_lossy: err.lossy,
        kernel_refused: match spec.confine {
            Some(_) => confine::refusals(&err.text),
            None => Vec::new(),
        },
        stderr: err.text,
        error: (!problems.is_empty()).then(|| problems.join("; ")),
        confinement: Some(spec.confine.map_or(Confine::None, |(c, _)| c)),
    }
}

/// What [`watch`] has seen of the child so far.
#[derive(Default)]
struct Seen {
    /// The main process's wait status, once it has been reaped.
    status: Option<io::Result<ExitStatus>>,
    /// Both pipes reached end of file: nothing in the group can write any more.
    read_done: bool,
}

impl Seen {
    fn exited(&self) -> bool {
        self.status.is_some()
    }

    fn all(&self) -> bool {
        self.exited() && self.read_done
    }
}

/// Waits for the main process and reads its output, both at once, until `done` holds
/// (true) or `end` passes (false).
async fn watch<F: Future<Output = ()>>(
    child: &mut Child,
    mut reading: Pin<&mut F>,
    seen: &mut Seen,
    end: Instant,
    done: fn(&Seen) -> bool,
) -> bool {
    while !done(seen) {
        tokio::select! {
            s = child.wait(), if seen.status.is_none() => seen.status = Some(s),
            () = reading.as_mut(), if !seen.read_done => seen.read_done = true,
            () = sleep_until(end) => return false,
        }
    }
    true
}

/// SIGKILLs the child's process group once: when [`run`] says so, or when dropped.
struct GroupGuard {
    pgid: Option<i32>,
    armed: bool,
}

impl GroupGuard {
    fn kill(&mut self) {
        if std::mem::replace(&mut self.armed, false) {
            signal_group(self.pgid, libc::SIGKILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A result for a command that never started.
fn failed(message: String) -> ExecResult {
    ExecResult {
        error: Some(message),
        ..ExecResult::default()
    }
}

/// The executable and its arguments. The lookup is ours, in the `PATH` of the child's
/// environment: that is the `PATH` policy reasoned about, and a miss gets a clear message.
fn resolve(spec: &RunSpec) -> Result<(PathBuf, Vec<String>), String> {
    let argv = match &spec.command {
        model::Command::Line(line) => {
            return Ok(("/bin/sh".into(), vec!["-c".into(), line.clone()]));
        }
        model::Command::Argv(argv) => argv,
        // The API refuses `run` for a tool call: the agent makes it, not execgate.
        model::Command::Tool(tool) => {
            return Err(format!(
                "cannot start: `{}` is a tool call, which execgate does not run",
                tool.name
            ));
        }
    };
    let Some((name, args)) = argv.split_first() else {
        return Err("cannot start: argv is empty".to_owned());
    };
    if name.is_empty() {
        return Err("cannot start: the program name is empty".to_owned());
    }
    if name.contains('/') {
        // A relative one is found by the child, after it has changed into `cwd`: joined
        // to the path here, it could name another directory by then.
        return Ok((name.into(), args.to_vec()));
    }
    // The last entry wins, as it does for the child.
    let path = spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map_or(DEFAULT_PATH, |(_, v)| v.as_str());
    let mut not_executable = None;
    // Only absolute entries (see `absolute_path`), whatever PATH the spec was given.
    let path = absolute_path(path);
    for dir in path.split(':') {
        let candidate = Path::new(dir).join(name);
        match std::fs::metadata(&candidate) {
            Ok(meta) if meta.is_file() && is_executable(&meta) => {
                return Ok((candidate, args.to_vec()));
            }
            Ok(meta) if meta.is_file() => {
                not_executable.get_or_insert(candidate);
            }
            _ => {}
        }
    }
    Err(match not_executable {
        Some(p) => format!("cannot start `{name}`: {} is not executable", p.display()),
        None => format!("cannot start `{name}`: not found in PATH {path:?}"),
    })
}

fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

/// Sends `sig` to the whole group. ESRCH (nobody left) is the normal case after a clean
/// exit and is ignored.
fn signal_group(pgid: Option<i32>, sig: libc::c_int) {
    // A pgid of 0 or 1 would mean our own group or every process: never signal those.
    let Some(pgid) = pgid.filter(|&p| p > 1) else {
        return;
    };
    // SAFETY: killpg takes plain integers and touches no memory of ours.
    let rc = unsafe { libc::killpg(pgid, sig) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            tracing::warn!(pgid, sig, error = %e, "killpg failed");
        }
    }
}

/// One output stream: the first `cap` bytes, and a count of everything.
struct Capture {
    kept: Vec<u8>,
    cap: usize,
    /// Every byte the command wrote to the stream, kept or not.
    total: u64,
}

impl Capture {
    fn new(cap: usize) -> Self {
        Capture {
            kept: Vec::new(),
            cap,
            total: 0,
        }
    }

    /// Reads to end of file, keeping up to `cap` bytes. Past the cap it goes on reading
    /// and discarding, so the writer never blocks and memory stays at `cap`. A read error
    /// on a pipe can only mean it is gone, so it ends the stream like EOF.
    async fn drain<R: AsyncRead + Unpin>(&mut self, pipe: Option<R>) {
        let Some(mut pipe) = pipe else { return };
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            let n = match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            self.total = self.total.saturating_add(n as u64);
            let take = n.min(self.cap - self.kept.len());
            if take > 0 {
                // Grow by doubling but never past the cap, so a 1 MiB cap costs 1 MiB.
                let want = (self.kept.len() + take)
                    .max(self.kept.capacity() * 2)
                    .min(self.cap);
                self.kept.reserve_exact(want - self.kept.len());
                self.kept.extend_from_slice(&buf[..take]);
            }
        }
    }

    /// The kept bytes as text. When the cap cut a character in half, the half is dropped
    /// rather than shown as U+FFFD.
    fn finish(self) -> Captured {
        let truncated = self.total > self.kept.len() as u64;
        let mut bytes = self.kept;
        if truncated {
            bytes.truncate(bytes.len() - incomplete_tail(&bytes));
        }
        let (text, lossy) = match String::from_utf8(bytes) {
            Ok(s) => (s, false),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
        };
        Captured {
            text,
            lossy,
            truncated,
            total: self.total,
        }
    }
}

/// A stream as reported in [`ExecResult`].
struct Captured {
    text: String,
    lossy: bool,
    truncated: bool,
    total: u64,
}

/// The length of an incomplete UTF-8 sequence at the end of `bytes` (0 to 3).
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: the lead is further back
        }
        let needed = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return 0, // ASCII or a byte that starts nothing: not a cut character
        };
        return if needed > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1024 * 1024;

    fn spec(command: model::Command) -> RunSpec {
        RunSpec {
            command,
            cwd: WorkDir::open(&std::env::temp_dir()).unwrap(),
            input: None,
            timeout: Duration::from_secs(5),
            max_output_bytes: MIB,
            env: vec![("PATH".into(), DEFAULT_PATH.into())],
            confine: None,
        }
    }

    fn sh(line: &str) -> RunSpec {
        spec(model::Command::Line(line.into()))
    }

    fn argv(args: &[&str]) -> RunSpec {
        spec(model::Command::Argv(
            args.iter().map(|a| a.to_string()).collect(),
        ))
    }

    /// Dead, or a zombie nobody has reaped yet (in a container, pid 1 may never reap it).
    fn is_gone(pid: i32) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state follows the parenthesised command name.
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    }

    async fn wait_gone(pid: i32) -> bool {
        for _ in 0..40 {
            if is_gone(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    /// Writes an executable script from a child process: a write descriptor held here
    /// could leak into a child another test forks at that moment, and exec'ing the script
    /// would then fail with ETXTBSY.
    fn write_script(path: &std::path::Path, body: &str) {
        let status = std::process::Command::new("/bin/sh")
            .args([
                "-c",
                r#"printf '#!/bin/sh\n%s\n' "$2" > "$1" && chmod 755 "$1""#,
            ])
            .args(["sh", path.to_str().unwrap(), body])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn vm_hwm_kib() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    #[tokio::test]
    async fn shell_reports_stdout_stderr_and_exit_code() {
        let r = run(sh("echo out; echo err >&2; exit 3")).await;
        assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("out\n", "err\n"));
        assert_eq!((r.exit_code, r.signal, r.timed_out), (Some(3), None, false));
        assert_eq!((r.stdout_bytes, r.stderr_bytes), (4, 4));
        assert!(!r.stdout_truncated && !r.stdout_lossy && r.error.is_none());
    }

    #[tokio::test]
    async fn argv_arguments_are_literal() {
        let r = run(argv(&["printf", "%s|", "a b", "c;d", "$HOME", "*"])).await;
        assert_eq!(r.stdout, "a b|c;d|$HOME|*|");
        assert_eq!(r.exit_code, Some(0));
    }

    #[tokio::test]
    async fn argv_with_a_slash_is_relative_to_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("hello.sh");
        write_script(&script, "echo hello from script");
        let mut s = argv(&["./hello.sh"]);
        s.cwd = WorkDir::open(dir.path()).unwrap();
        let r = run(s).await;
        assert_eq!(r.stdout, "hello from script\n", "{r:?}");
    }

    #[tokio::test]
    async fn program_is_looked_up_in_the_given_path_only() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("only-here");
        write_script(&tool, "echo found");
        let mut s = argv(&["only-here"]);
        s.env = vec![(
            "PATH".into(),
            format!("/nonexistent:{}", dir.path().display()),
        )];
        assert_eq!(run(s).await.stdout, "found\n");

        // Standard tools are not found when the given PATH does not have them.
        let mut s = argv(&["ls"]);
        s.env = vec![("PATH".into(), dir.path().display().to_string())];
        let r = run(s).await;
        assert!(
            r.error.as_deref().unwrap().contains("not found in PATH"),
            "{r:?}"
        );
    }

    #[tokio::test]
    async fn empty_and_relative_path_entries_are_not_searched() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("bin")).unwrap();
        write_script(&dir.path().join("bin/planted"), "echo planted");
        write_script(&dir.path().join("planted2"), "echo planted");
        for (program, path) in [
            ("planted", "bin:/nonexistent"),
            ("planted2", ":/nonexistent:"),
        ] {
            let mut s = argv(&[program]);
            s.cwd = WorkDir::open(dir.path()).unwrap();
            s.env = vec![("PATH".into(), path.into())];
            let r = run(s).await;
            assert!(r.exit_code.is_none() && r.error.is_some(), "{path}: {r:?}");
        }
    }

    #[tokio::test]
    async fn input_reaches_stdin() {
        let mut s = argv(&["cat"]);
        s.input = Some("hello\nworld".into());
        let r = run(s).await;
        assert_eq!(r.stdout, "hello\nworld");

        // More than a pipe holds, in and out at once: neither side may block the other.
        let big = "x".repeat(3 * MIB);
        let mut s = argv(&["cat"]);
        s.input = Some(big.clone());
        s.max_output_bytes = 4 * MIB;
        let r = run(s).await;
        assert_eq!((r.stdout.len(), r.exit_code), (big.len(), Some(0)));
    }

    #[tokio::test]
    async fn input_the_command_ignores_does_not_hang() {
        let mut s = sh("exit 0");
        s.input = Some("y".repeat(MIB));
        let r = run(s).await;
        assert_eq!((r.exit_code, r.error), (Some(0), None));
        assert!(r.duration_ms < 2000, "{}", r.duration_ms);
    }

    #[tokio::test]
    async fn without_input_stdin_is_empty() {
        let r = run(argv(&["cat"])).await;
        assert_eq!((r.stdout.as_str(), r.exit_code), ("", Some(0)));
        assert!(r.duration_ms < 2000, "{}", r.duration_ms);
    }

    #[tokio::test]
    async fn environment_is_exactly_the_given_one() {
        let mut s = argv(&["env"]);
        s.env.push(("FOO".into(), "bar baz".into()));
        let r = run(s).await;
        let mut lines: Vec<&str> = r.stdout.lines().collect();
        lines.sort();
        assert_eq!(
            lines,
            ["FOO=bar baz".to_string(), format!("PATH={DEFAULT_PATH}")]
        );
    }

    #[tokio::test]
    async fn cwd_applies() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sh("pwd -P");
        s.cwd = WorkDir::open(dir.path()).unwrap();
        let r = run(s.clone()).await;
        assert_eq!(r.stdout.trim_end(), s.cwd.path().to_str().unwrap());
    }

    #[tokio::test]
    async fn timeout_terminates_and_keeps_output_so_far() {
        let mut s = sh("echo before; echo warn >&2; sleep 5");
        s.timeout = Duration::from_millis(300);
        let r = run(s).await;
        assert!(r.timed_out);
        assert_eq!((r.exit_code, r.signal), (None, Some(libc::SIGTERM)));
        assert_eq!(
            (r.stdout.as_str(), r.stderr.as_str()),
            ("before\n", "warn\n")
        );
        assert_eq!(
            r.error.as_deref(),
            Some("timed out after 300 ms; the process group was terminated")
        );
        assert!((300..4000).contains(&r.duration_ms), "{}", r.duration_ms);
    }

    #[tokio::test]
    async fn sigterm_ignored_means_sigkill_after_the_grace() {
        let mut s = sh("trap '' TERM; sleep 10");
        s.timeout = Duration::from_millis(200);
        let r = run(s).await;
        assert!(r.timed_out);
        assert_eq!(r.signal, Some(libc::SIGKILL));
        let grace = KILL_GRACE.as_millis() as u64;
        assert!(
            (grace..grace + 2000).contains(&r.duration_ms),
            "{}",
            r.duration_ms
        );
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_tree() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // A grandchild (the inner sh, which becomes sleep) records its pid and outlives
        // its parent's sleep unless the group is killed.
        let line = format!(
            "sh -c 'echo $$ > {}; exec sleep 30' & sleep 30",
            pidfile.display()
        );
        let mut s = sh(&line);
        s.timeout = Duration::from_millis(300);
        let r = run(s).await;
        assert!(r.timed_out);
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(wait_gone(pid).await, "grandchild {pid} survived");
    }

    #[tokio::test]
    async fn background_child_does_not_hold_the_run() {
        // Holding the pipes, and not: both are gone after the run.
        for line in ["sleep 30 & echo $!", "sleep 30 >/dev/null 2>&1 & echo $!"] {
            let r = run(sh(line)).await;
            assert_eq!(
                (r.exit_code, r.timed_out, &r.error),
                (Some(0), false, &None)
            );
            assert!(r.duration_ms < 1000, "{line}: {} ms", r.duration_ms);
            let pid: i32 = r.stdout.trim().parse().unwrap();
            assert!(wait_gone(pid).await, "{line}: background {pid} survived");
        }
    }

    #[tokio::test]
    async fn dropping_the_run_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let line = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let running = run(sh(&line));
        let dropped = tokio::time::timeout(Duration::from_millis(300), running).await;
        assert!(dropped.is_err(), "the run should still have been going");
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(wait_gone(pid).await, "background {pid} survived the drop");
    }

    #[tokio::test]
    async fn huge_output_is_counted_but_not_kept() {
        let before = vm_hwm_kib();
        let started = std::time::Instant::now();
        let r = run(sh("head -c 100000000 /dev/zero; echo done >&2")).await;
        let elapsed = started.elapsed();
        let after = vm_hwm_kib();
        assert!(r.stdout.len() <= MIB);
        assert!(r.stdout_truncated && !r.stderr_truncated);
        assert_eq!((r.stdout_bytes, r.stderr.as_str()), (100_000_000, "done\n"));
        assert_eq!(r.exit_code, Some(0));
        eprintln!("100 MB through a 1 MiB cap: {elapsed:?}; VmHWM {before:?} -> {after:?} KiB");
        if let (Some(before), Some(after)) = (before, after) {
            // Tests share the process, so only a generous bound.
            assert!(
                after - before < 50 * 1024,
                "VmHWM grew {} KiB",
                after - before
            );
        }
    }

    #[tokio::test]
    async fn truncation_does_not_split_a_character() {
        // 'é' is two bytes; a 2-byte cap would keep half of it.
        let mut s = sh("printf 'a\\303\\251b'");
        s.max_output_bytes = 2;
        let r = run(s).await;
        assert_eq!(r.stdout, "a");
        assert!(r.stdout_truncated && !r.stdout_lossy);
        assert_eq!(r.stdout_bytes, 4);
    }

    #[tokio::test]
    async fn invalid_utf8_is_converted_lossily() {
        let r = run(sh("printf '\\377\\376'; printf 'ok' >&2")).await;
        assert_eq!(r.stdout, "\u{FFFD}\u{FFFD}");
        assert!(r.stdout_lossy && !r.stderr_lossy && !r.stdout_truncated);
        assert_eq!(r.stdout_bytes, 2);
    }

    #[tokio::test]
    async fn missing_program_is_an_error() {
        let r = run(argv(&["nosuchprog-execgate"])).await;
        assert_eq!((r.exit_code, r.signal), (None, None));
        let error = r.error.unwrap();
        assert!(
            error.starts_with("cannot start `nosuchprog-execgate`"),
            "{error}"
        );

        let r = run(argv(&["/nonexistent/prog"])).await;
        let error = r.error.unwrap();
        assert!(error.contains("No such file or directory"), "{error}");

        let r = run(argv(&[])).await;
        assert_eq!(r.error.as_deref(), Some("cannot start: argv is empty"));
    }

    #[tokio::test]
    async fn death_by_signal_is_reported() {
        let r = run(sh("kill -9 $$")).await;
        assert_eq!((r.exit_code, r.signal), (None, Some(9)));
        assert!(!r.timed_out && r.error.is_none());
    }

    #[test]
    fn minimal_env_has_a_path_and_only_set_names() {
        let env = minimal_env(&["PATH".into(), "EXECGATE_SURELY_UNSET".into(), "".into()]);
        let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.iter().filter(|n| **n == "PATH").count(), 1);
        assert!(!names.contains(&"EXECGATE_SURELY_UNSET"));
        for (name, value) in &env {
            let expected = match std::env::var(name) {
                Ok(path) if name == "PATH" => absolute_path(&path),
                Ok(v) => v,
                Err(_) => DEFAULT_PATH.into(),
            };
            assert_eq!(value, &expected, "{name}");
        }
    }

    #[test]
    fn path_keeps_only_absolute_entries() {
        assert_eq!(absolute_path("/usr/bin:/bin"), "/usr/bin:/bin");
        assert_eq!(absolute_path(":/usr/bin::.:bin:/bin:"), "/usr/bin:/bin");
        assert_eq!(absolute_path("./x:../y:~/bin:/opt/b"), "/opt/b");
        assert_eq!(absolute_path(""), DEFAULT_PATH);
        assert_eq!(absolute_path(".:bin:"), DEFAULT_PATH);
    }

    #[test]
    fn incomplete_tail_finds_cut_characters() {
        assert_eq!(incomplete_tail(b"ab"), 0);
        assert_eq!(incomplete_tail("aé".as_bytes()), 0);
        assert_eq!(incomplete_tail(b"a\xc3"), 1);
        assert_eq!(incomplete_tail(b"a\xe2\x82"), 2);
        assert_eq!(incomplete_tail(b"a\xf0\x9f\x98"), 3);
        assert_eq!(incomplete_tail("a😀".as_bytes()), 0);
        assert_eq!(incomplete_tail(b"\xff"), 0);
    }
}
