//! A real Matrix homeserver for the Matrix tests: Synapse from PyPI (installed by
//! `.ci/peers synapse`, see [`crate::peers`]), started on a free loopback port with a fresh
//! directory, its SQLite database and a configuration made for tests: open registration,
//! no federation, no presence, rate limits out of the way, and no `/sync` response cache
//! (an identical long-poll would otherwise be answered from a two-minute cache). It can be
//! stopped and started again on the same port and directory, as a homeserver that goes
//! down mid-test. Killed when dropped.
//!
//! [`Synapse::shared`] is one homeserver for every test of a test binary that does not
//! stop it: started once, by a thread that lives as long as the binary, and killed by
//! the kernel when the binary exits (`PR_SET_PDEATHSIG`), however it exits.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::peers::synapse_python;

pub struct Synapse {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// `localhost`: user ids are `@name:localhost`.
    pub server_name: &'static str,
    dir: TempDir,
    child: Option<Child>,
    /// Set for the shared homeserver: its process dies with the test binary.
    die_with_parent: bool,
}

/// The shared homeserver: its URL, for [`register`].
pub struct Shared {
    pub url: String,
}

impl Shared {
    pub async fn register(&self, name: &str) -> Account {
        register(&self.url, name).await
    }
}

/// A user name no other test of this binary uses.
pub fn unique(name: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{name}{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A registered account.
#[derive(Clone, Debug)]
pub struct Account {
    pub user_id: String,
    pub password: String,
    pub access_token: String,
    pub device_id: String,
}

impl Synapse {
    /// The homeserver every test of this binary shares (see the module's doc).
    pub fn shared() -> &'static Shared {
        static SHARED: OnceLock<Shared> = OnceLock::new();
        SHARED.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("shared-synapse".into())
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    let synapse = runtime.block_on(Synapse::start_as(true));
                    tx.send(synapse.url.clone()).unwrap();
                    // The child dies when this thread does: at the binary's exit.
                    loop {
                        std::thread::park();
                    }
                })
                .unwrap();
            Shared {
                url: rx.recv().expect("the shared Synapse starts"),
            }
        })
    }

    /// Starts a homeserver and waits until its client API answers.
    pub async fn start() -> Synapse {
        Self::start_as(false).await
    }

    async fn start_as(die_with_parent: bool) -> Synapse {
        let dir = tempfile::tempdir().expect("a temp dir for Synapse");
        let port = free_port();
        let config = dir.path().join("homeserver.yaml");
        std::fs::write(&config, homeserver_yaml(dir.path(), port)).unwrap();
        let made = Command::new(synapse_python())
            .args(["-m", "synapse.app.homeserver", "--config-path"])
            .arg(&config)
            .arg("--generate-keys")
            .current_dir(dir.path())
            .output()
            .expect("Synapse runs");
        assert!(
            made.status.success(),
            "Synapse could not make its signing key: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        let mut synapse = Synapse {
            url: format!("http://127.0.0.1:{port}"),
            server_name: "localhost",
            dir,
            child: None,
            die_with_parent,
        };
        synapse.resume().await;
        synapse
    }

    /// The homeserver's files (its log is `homeserver.log`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Stops the homeserver (SIGTERM, then SIGKILL after 10 s); its data stays.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: signalling our own child by its pid.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the homeserver again on its port and data (after [`Synapse::stop`]).
    pub async fn resume(&mut self) {
        assert!(self.child.is_none(), "Synapse is running already");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("stderr.log"))
            .unwrap();
        let mut command = Command::new(synapse_python());
        command
            .args(["-m", "synapse.app.homeserver", "--config-path"])
            .arg(self.dir.path().join("homeserver.yaml"))
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        if self.die_with_parent {
            // SAFETY: prctl is async-signal-safe; it only marks this child process.
            unsafe {
                command.pre_exec(|| {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let child = command.spawn().expect("Synapse starts");
        self.child = Some(child);
        let client = reqwest::Client::new();
        let versions = format!("{}/_matrix/client/versions", self.url);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = client.get(&versions).send().await
                && r.status().is_success()
            {
                return;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!("Synapse exited ({status}): {}", self.log_tail());
            }
            assert!(
                Instant::now() < deadline,
                "Synapse did not answer within 60 s: {}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Registers `name` (open registration, the dummy stage) and returns its account.
    pub async fn register(&self, name: &str) -> Account {
        register(&self.url, name).await
    }

    /// Makes the homeserver rate-limit messages hard (`rc_message`), from its next start.
    pub fn limit_messages(&self, per_second: f64, burst: u32) {
        let path = self.dir.path().join("homeserver.yaml");
        let yaml = std::fs::read_to_string(&path).unwrap();
        let yaml = yaml.replace(
            "rc_message: {per_second: 1000, burst_count: 1000}",
            &format!("rc_message: {{per_second: {per_second}, burst_count: {burst}}}"),
        );
        std::fs::write(path, yaml).unwrap();
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// Registers `name` on the homeserver at `url` (open registration, the dummy stage).
pub async fn register(url: &str, name: &str) -> Account {
    let password = format!("{name}-password");
    let body = json!({
        "username": name,
        "password": password,
        "auth": {"type": "m.login.dummy"},
        "initial_device_display_name": name,
    });
    let answer: Value = reqwest::Client::new()
        .post(format!("{url}/_matrix/client/v3/register"))
        .json(&body)
        .send()
        .await
        .expect("Synapse answers")
        .json()
        .await
        .expect("a JSON answer");
    let text = |k: &str| {
        answer[k]
            .as_str()
            .unwrap_or_else(|| panic!("registering {name}: no {k} in {answer}"))
            .to_string()
    };
    Account {
        user_id: text("user_id"),
        password,
        access_token: text("access_token"),
        device_id: text("device_id"),
    }
}

impl Drop for Synapse {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The configuration: everything local, nothing in the way of a test.
fn homeserver_yaml(dir: &Path, port: u16) -> String {
    let d = |name: &str| -> PathBuf { dir.join(name) };
    let limit = "{per_second: 1000, burst_count: 1000}";
    format!(
        r#"server_name: localhost
pid_file: {pid}
public_baseurl: http://127.0.0.1:{port}/
listeners:
  - port: {port}
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: {db}
media_store_path: {media}
signing_key_path: {key}
report_stats: false
enable_registration: true
enable_registration_without_verification: true
registration_shared_secret: execgate-tests
macaroon_secret_key: execgate-tests-macaroon
form_secret: execgate-tests-form
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
presence:
  enabled: false
caches:
  sync_response_cache_duration: 0
rc_message: {limit}
rc_registration: {limit}
rc_login:
  address: {limit}
  account: {limit}
  failed_attempts: {limit}
rc_joins:
  local: {limit}
  remote: {limit}
rc_invites:
  per_room: {limit}
  per_user: {limit}
  per_issuer: {limit}
rc_admin_redaction: {limit}
rc_key_requests: {limit}
rc_3pid_validation: {limit}
rc_room_creation: {limit}
rc_reports: {limit}
rc_delayed_event_mgmt: {limit}
"#,
        pid = d("homeserver.pid").display(),
        db = d("homeserver.db").display(),
        media = d("media").display(),
        key = d("signing.key").display(),
    )
}
