//! A real PostgreSQL server for the PostgreSQL store's tests: the system's own server
//! programs (found, or installed on first use, by [`crate::peers::postgresql_bin`]) on a
//! fresh cluster in a temp directory, reached only through a Unix socket in that
//! directory (no TCP), as `postgres`, trusted without a password. [`PgServer::start`]
//! gives a test a server of its own, which it may stop and start again on the same
//! socket, as a database that goes away mid-run; [`shared`] is one server for every test
//! of a test binary, so that most tests pay only for a `CREATE DATABASE`
//! ([`PgServer::create_database`]).
//!
//! PostgreSQL refuses to run as root, and CI runs the tests as root: the server then runs
//! as the `postgres` user, which owns its directory; otherwise as the test's own user.
//!
//! No server outlives its test process, however that process ends. Each has a watcher: a
//! `sh`, started beside it as the server's user, blocked reading a pipe whose only
//! writer is the test process. The kernel closes that end when the process exits, even
//! on SIGKILL, and the watcher then stops the server (immediate mode) and removes its
//! directory. (`PR_SET_PDEATHSIG` would not do: it fires when the spawning thread ends,
//! and the test harness ends its threads while the process lives on; nor would it remove
//! the directory.) Statics are never dropped, so the shared server relies on this alone;
//! a dropped [`PgServer`] closes its pipe itself. Should a watcher die as well, the next
//! start sweeps what is left: every server directory holds a lock its test process
//! keeps, and a directory whose lock is free has no owner.

use std::fs::File;
use std::io::PipeWriter;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, Once, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::peers::postgresql_bin;

/// How every server directory's name starts, in the temp directory: what the sweep of
/// leftovers looks for.
const DIR_PREFIX: &str = "execgate-pg-";
/// The file in a server directory that its test process keeps locked.
const LOCK: &str = "owner.lock";
/// How old an ownerless server directory must be before a sweep removes it.
const LEFTOVER_AGE: Duration = Duration::from_secs(60);
/// Ports are taken from here up; see [`pick_port`].
const PORTS: std::ops::Range<u32> = 20000..30000;
/// How long a start or a fast stop may take before the test fails or the server is killed.
const PATIENCE: Duration = Duration::from_secs(30);

/// The server every test of this test binary shares (see the module's doc). Tests that
/// stop their server start one of their own.
pub fn shared() -> &'static PgServer {
    static SHARED: OnceLock<PgServer> = OnceLock::new();
    SHARED.get_or_init(PgServer::start)
}

/// One PostgreSQL server on a cluster of its own, stopped and its directory removed when
/// dropped.
pub struct PgServer {
    /// The server's directory, owned by its user: the cluster in `data/`, the socket,
    /// `server.log`, and the [`LOCK`].
    dir: PathBuf,
    /// Names the socket file (`.s.PGSQL.PORT`); kept across a restart, so that URLs stay
    /// good.
    port: u16,
    /// The uid and gid the server runs as; `None`: the test's own.
    user: Option<(u32, u32)>,
    /// The postmaster while it runs. Behind a mutex so that a server reached by `&`, such
    /// as the shared one, can still be stopped and started again.
    postmaster: Mutex<Option<Child>>,
    /// The watcher and the write end of its pipe: closing that stops the server and
    /// removes `dir`.
    watcher: Option<(PipeWriter, Child)>,
    /// Held while this server lives, so that a sweep from another process passes it by.
    _lock: File,
}

impl PgServer {
    /// Makes a cluster (`initdb`) in a fresh temp directory and starts a server on it,
    /// returning once it accepts connections (1–2 s, most of it `initdb`). Panics, saying
    /// why, when there is no PostgreSQL or it does not start.
    pub fn start() -> PgServer {
        static SWEEP: Once = Once::new();
        SWEEP.call_once(sweep_leftovers);
        // Found (or installed) first: without it there is nothing to make a directory for.
        postgresql_bin();
        let user = server_user();
        let dir = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .tempdir()
            .expect("a temp dir for PostgreSQL")
            .keep();
        let lock = hold_lock(&dir);
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                .expect("the server's directory is given to its user");
        }
        // From here on a panic drops the server, and its watcher cleans up.
        let mut server = PgServer {
            dir,
            port: 0,
            user,
            postmaster: Mutex::new(None),
            watcher: None,
            _lock: lock,
        };
        server.watcher = Some(server.spawn_watcher());
        let made = server
            .command("initdb")
            .arg("-D")
            .arg(server.data())
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"])
            // The cluster is thrown away with the test: no need to wait for the disk.
            .arg("--no-sync")
            .output()
            .expect("initdb runs");
        assert!(
            made.status.success(),
            "initdb failed ({}): {}{}",
            made.status,
            String::from_utf8_lossy(&made.stdout),
            String::from_utf8_lossy(&made.stderr)
        );
        let mut failures = Vec::new();
        while failures.len() < 3 {
            server.port = pick_port();
            match server.launch() {
                Ok(child) => {
                    *server.postmaster() = Some(child);
                    return server;
                }
                Err(why) => failures.push(why),
            }
        }
        panic!(
            "PostgreSQL did not start, three times:\n{}",
            failures.join("\n")
        );
    }

    /// A URL for `database` that sqlx (and libpq) take: the socket's directory and port
    /// as the `host` and `port` parameters.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@localhost/{database}?host={}&port={}",
            percent_encode(&self.dir.to_string_lossy()),
            self.port
        )
    }

    /// Creates a database no other test of this process uses and returns its URL.
    pub fn create_database(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!("test_{}", NEXT.fetch_add(1, Ordering::Relaxed));
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs `sql` with `psql` on `database` (a name, or a URL from [`PgServer::url`]) and
    /// returns what it prints: rows one a line, columns between `|`, no headers. Panics
    /// with psql's message when a statement fails.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(postgresql_bin().join("psql"))
            .args(["--no-psqlrc", "--quiet", "--no-password", "--no-align"])
            .args(["--tuples-only", "--set", "ON_ERROR_STOP=1", "--host"])
            .arg(&self.dir)
            .args(["--port", &self.port.to_string(), "--username", "postgres"])
            .args(["--dbname", database, "--command", sql])
            .stdin(Stdio::null())
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql on {database} failed ({}) at {sql:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let mut printed = String::from_utf8_lossy(&out.stdout).into_owned();
        if printed.ends_with('\n') {
            printed.pop();
        }
        printed
    }

    /// Stops the server the fast way (its sessions are ended, SIGINT), SIGKILL after
    /// 30 s; returns once it has exited and its socket is gone. Its data stays, for
    /// [`PgServer::start_again`]. Does nothing when it is stopped already.
    pub fn stop(&self) {
        let Some(mut child) = self.postmaster().take() else {
            return;
        };
        // SAFETY: signalling our own child, not yet reaped, by its pid.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let deadline = Instant::now() + PATIENCE;
        while matches!(child.try_wait(), Ok(None)) {
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                // A killed postmaster leaves its socket behind.
                let _ = std::fs::remove_file(self.socket());
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Starts the stopped server again on its data, port and socket: URLs given before
    /// still work.
    pub fn start_again(&self) {
        let mut postmaster = self.postmaster();
        assert!(postmaster.is_none(), "PostgreSQL is running already");
        *postmaster = Some(self.launch().unwrap_or_else(|why| panic!("{why}")));
    }

    /// [`PgServer::stop`], then [`PgServer::start_again`].
    pub fn restart(&self) {
        self.stop();
        self.start_again();
    }

    /// The server's directory: its socket's, and its log `server.log`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn socket(&self) -> PathBuf {
        self.dir.join(format!(".s.PGSQL.{}", self.port))
    }

    fn postmaster(&self) -> MutexGuard<'_, Option<Child>> {
        // A test that panicked while starting the server leaves nothing half-done here.
        self.postmaster
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// One of PostgreSQL's programs, run as the server's user in its directory.
    fn command(&self, program: &str) -> Command {
        server_command(program, self.user, &self.dir)
    }

    /// Starts the postmaster and waits until it accepts connections; on failure, why, with
    /// the end of its log.
    fn launch(&self) -> Result<Child, String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("server.log"))
            .expect("the server's log opens");
        let mut child = self
            .command("postgres")
            .arg("-D")
            .arg(self.data())
            .args(["-p", &self.port.to_string(), "-k"])
            .arg(&self.dir)
            .args(["-c", "listen_addresses="])
            .args(["-c", "fsync=on", "-c", "synchronous_commit=on"])
            // Three daemons' pools and the benches' connect at once.
            .args(["-c", "max_connections=200"])
            .stdout(log.try_clone().expect("the log's descriptor is copied"))
            .stderr(log)
            // Apart from the terminal's Ctrl-C: stopping it is the watcher's job.
            .process_group(0)
            .spawn()
            .expect("postgres runs");
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!(
                    "postgres on port {} exited ({status}):\n{}",
                    self.port,
                    self.log_tail()
                ));
            }
            if self.ready(child.id()) {
                return Ok(child);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "postgres on port {} was not ready within {PATIENCE:?}:\n{}",
                    self.port,
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The postmaster `pid` says, in its `postmaster.pid`, that it accepts connections
    /// (as `pg_ctl start -w` reads it). The pid is checked because a killed server leaves
    /// its file, saying `ready`, until the next one replaces it.
    fn ready(&self, pid: u32) -> bool {
        let file = std::fs::read_to_string(self.data().join("postmaster.pid")).unwrap_or_default();
        let lines: Vec<&str> = file.lines().map(str::trim).collect();
        lines.first() == Some(&pid.to_string().as_str()) && lines.get(7) == Some(&"ready")
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Starts the watcher (see the module's doc), in a process group of its own and
    /// deaf to the terminal's signals, so that a Ctrl-C killing the tests reaches it only
    /// as the end of its pipe.
    fn spawn_watcher(&self) -> (PipeWriter, Child) {
        let (reader, writer) = std::io::pipe().expect("a pipe for the watcher");
        let script = r#"trap '' HUP INT
cat >/dev/null
"$0" stop -D "$1/data" -m immediate -w >/dev/null 2>&1
rm -rf "$1""#;
        let child = as_server(Command::new("sh"), self.user, &self.dir)
            .args(["-c", script])
            .arg(postgresql_bin().join("pg_ctl"))
            .arg(&self.dir)
            .stdin(reader)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("sh runs");
        (writer, child)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Some((pipe, mut watcher)) = self.watcher.take() {
            drop(pipe);
            let _ = watcher.wait();
        }
        if let Some(mut child) = self.postmaster().take() {
            // Stopped by the watcher, unless it failed: then killed. Reaped either way.
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `program` from PostgreSQL's directory, run as [`as_server`] says.
fn server_command(program: &str, user: Option<(u32, u32)>, dir: &Path) -> Command {
    as_server(Command::new(postgresql_bin().join(program)), user, dir)
}

/// `command` as the server's user (no supplementary groups: std drops them when root sets
/// a uid), run in `dir`, which that user can enter.
fn as_server(mut command: Command, user: Option<(u32, u32)>, dir: &Path) -> Command {
    if let Some((uid, gid)) = user {
        command.uid(uid).gid(gid);
    }
    command.current_dir(dir).stdin(Stdio::null());
    command
}

/// The uid and gid to run the server as: `postgres`'s when the tests run as root, which
/// PostgreSQL refuses to run as; `None` (the test's own) otherwise.
fn server_user() -> Option<(u32, u32)> {
    static USER: OnceLock<Option<(u32, u32)>> = OnceLock::new();
    *USER.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let user = lookup_user("postgres");
        assert!(
            user.is_some(),
            "the tests run as root, which PostgreSQL refuses to run as, and there is no \
             `postgres` user to run it as (apt-get install postgresql makes one)"
        );
        user
    })
}

fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let name = std::ffi::CString::new(name).ok()?;
    // SAFETY: passwd is plain data, for getpwnam_r to fill in.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut found = std::ptr::null_mut();
    // SAFETY: every pointer is to live memory of the size given; getpwnam_r, unlike
    // getpwnam, keeps no static state another thread could overwrite.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut entry,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    (rc == 0 && !found.is_null()).then_some((entry.pw_uid, entry.pw_gid))
}

/// Locks `dir`'s [`LOCK`] for as long as the returned file is open. The lock is taken
/// under another name and then renamed, so that a sweep never finds the file unlocked
/// while its owner lives.
fn hold_lock(dir: &Path) -> File {
    let new = dir.join(format!("{LOCK}.new"));
    let file = File::create(&new).expect("the server's lock file is made");
    // SAFETY: flock on a descriptor this function owns.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(locked, 0, "the server's lock file is locked");
    std::fs::rename(&new, dir.join(LOCK)).expect("the server's lock file is named");
    file
}

/// Removes the server directories of test processes that are gone and whose watchers did
/// not finish (the module's doc), stopping any server still running in one. A directory
/// whose lock is less than [`LEFTOVER_AGE`] old is left alone: its watcher may be at work
/// on it right now.
fn sweep_leftovers() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        if !entry.file_name().to_string_lossy().starts_with(DIR_PREFIX) {
            continue;
        }
        // None: being made or being removed, or another user's.
        let Ok(lock) = File::open(dir.join(LOCK)) else {
            continue;
        };
        let young = lock
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|made| made.elapsed().unwrap_or_default() < LEFTOVER_AGE);
        // SAFETY: flock on a descriptor this function owns; closed with `lock`.
        if young || unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            continue;
        }
        if dir.join("data/postmaster.pid").exists() {
            let _ = server_command("pg_ctl", server_user(), &dir)
                .arg("stop")
                .arg("-D")
                .arg(dir.join("data"))
                .args(["-m", "immediate", "-w"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A port number for a new server. With no TCP, the port only names the socket file in
/// the server's own directory and seeds its shared memory's key (PostgreSQL steps past
/// keys in use), so two servers on one port do not clash; spreading servers by process
/// and by start is still the cheap way to keep every name apart, and a start that fails
/// anyway is tried again on the next port.
fn pick_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let spread = std::process::id()
        .wrapping_mul(97)
        .wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed));
    let port = PORTS.start + spread % (PORTS.end - PORTS.start);
    u16::try_from(port).expect("the port range is within u16")
}

/// `text` fit for a URL's query, `/` kept: the parsers decode `%XX`, and would read a
/// raw `+`, `&` or `#` in a path otherwise.
fn percent_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    use sqlx_core::connection::Connection;
    use sqlx_core::query_scalar::query_scalar;
    use sqlx_postgres::{PgConnection, Postgres};

    async fn current_database(url: &str) -> String {
        let mut connection = PgConnection::connect(url)
            .await
            .unwrap_or_else(|e| panic!("sqlx connects to {url}: {e}"));
        query_scalar::<Postgres, String>("SELECT current_database()")
            .fetch_one(&mut connection)
            .await
            .unwrap()
    }

    #[test]
    fn databases_are_apart() {
        let server = shared();
        let (a, b) = (server.create_database(), server.create_database());
        assert_ne!(a, b);
        server.psql(&a, "CREATE TABLE t (n int); INSERT INTO t VALUES (1), (2)");
        assert_eq!(server.psql(&a, "SELECT count(*) FROM t"), "2");
        assert_eq!(server.psql(&b, "SELECT to_regclass('t') IS NULL"), "t");
    }

    #[tokio::test]
    async fn sqlx_connects_with_the_url() {
        let url = shared().create_database();
        let name = url.split(['/', '?']).nth(3).unwrap();
        assert_eq!(current_database(&url).await, name);
    }

    #[tokio::test]
    async fn a_restarted_server_keeps_its_data_and_its_url() {
        let server = PgServer::start();
        let url = server.create_database();
        server.psql(&url, "CREATE TABLE t (n int); INSERT INTO t VALUES (7)");
        let mut connection = PgConnection::connect(&url).await.unwrap();
        server.stop();
        assert!(!server.socket().exists(), "the socket is gone");
        assert!(PgConnection::connect(&url).await.is_err());
        let fetched = query_scalar::<Postgres, i32>("SELECT n FROM t")
            .fetch_one(&mut connection)
            .await;
        assert!(fetched.is_err(), "a session does not outlive its server");
        server.start_again();
        let mut connection = PgConnection::connect(&url).await.unwrap();
        let n = query_scalar::<Postgres, i32>("SELECT n FROM t")
            .fetch_one(&mut connection)
            .await
            .unwrap();
        assert_eq!(n, 7);
        server.restart();
        assert_eq!(server.psql(&url, "SELECT n FROM t"), "7");
    }

    #[test]
    fn a_dropped_server_leaves_nothing() {
        let server = PgServer::start();
        let (dir, pid) = (server.dir().to_owned(), postmaster_pid(&server));
        drop(server);
        assert!(!dir.exists());
        assert!(!alive(pid));
    }

    #[test]
    fn no_server_outlives_its_test_process() {
        let (mut child, dir, postmaster, _) = child_with_shared_server();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            eventually(|| !dir.exists() && !alive(postmaster)),
            "the server of a killed test process is gone within 10 s"
        );
    }

    #[test]
    fn a_leftover_server_is_swept() {
        let (mut child, dir, postmaster, watcher) = child_with_shared_server();
        // The machine kills the watcher too: the server is left running.
        // SAFETY: signalling a process of this test's, by its pid.
        unsafe { libc::kill(watcher as libc::pid_t, libc::SIGKILL) };
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(eventually(|| !alive(watcher)));
        assert!(alive(postmaster) && dir.exists());
        // A leftover of an earlier run, not one a watcher may still be removing.
        let lock = File::options().write(true).open(dir.join(LOCK)).unwrap();
        let earlier = std::time::SystemTime::now() - 2 * LEFTOVER_AGE;
        lock.set_modified(earlier).unwrap();
        sweep_leftovers();
        assert!(!dir.exists());
        assert!(eventually(|| !alive(postmaster)));
    }

    /// What [`no_server_outlives_its_test_process`] and [`a_leftover_server_is_swept`]
    /// run as a child process: it starts the shared server, says where it is, and waits
    /// to be killed.
    #[test]
    #[ignore = "a child process of other tests"]
    fn child_holding_the_shared_server() {
        if std::env::var_os("EXECGATE_PG_CHILD").is_none() {
            return;
        }
        let server = shared();
        let watcher = server.watcher.as_ref().unwrap().1.id();
        println!(
            "pg-child {} {watcher} {}",
            postmaster_pid(server),
            server.dir().display()
        );
        loop {
            std::thread::park();
        }
    }

    /// Runs [`child_holding_the_shared_server`]; returns it, the server's directory, its
    /// postmaster's pid and its watcher's.
    fn child_with_shared_server() -> (Child, PathBuf, u32, u32) {
        use std::io::BufRead;
        let name = module_path!().split_once("::").unwrap().1;
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "--ignored", "--nocapture"])
            .arg(format!("{name}::child_holding_the_shared_server"))
            .env("EXECGATE_PG_CHILD", "1")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        for line in stdout.lines() {
            let line = line.unwrap();
            if let Some(said) = line.strip_prefix("pg-child ") {
                let mut words = said.splitn(3, ' ');
                let postmaster = words.next().unwrap().parse().unwrap();
                let watcher = words.next().unwrap().parse().unwrap();
                let dir = PathBuf::from(words.next().unwrap());
                return (child, dir, postmaster, watcher);
            }
        }
        panic!("the child process said nothing: {:?}", child.wait());
    }

    fn postmaster_pid(server: &PgServer) -> u32 {
        server.postmaster().as_ref().unwrap().id()
    }

    /// True while `pid` runs: a zombie, exited but not yet reaped, does not.
    fn alive(pid: u32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state follows the command's name, which is in parentheses.
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
    }

    fn eventually(check: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if check() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}
