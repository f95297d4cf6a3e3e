//! `execgate serve` as a child process: the daemon exactly as systemd or a terminal
//! starts it, for tests about signals, exit codes, logs and restarts.

use std::process::Stdio;
use std::time::Duration;

use hyper::{Method, StatusCode};
use serde_json::json;

use crate::{config_for, env_for};

/// `execgate serve` as a child process, with its paths in `dir`.
pub struct Process {
    pub child: tokio::process::Child,
    pub env: Vec<(String, String)>,
}

/// How to start `execgate serve` beyond its environment.
#[derive(Default)]
pub struct Options<'a> {
    /// Global flags given before `serve` (e.g. `--env-file F`).
    pub args: &'a [&'a str],
    /// Flags of `serve` itself (e.g. `--web`).
    pub serve_args: &'a [&'a str],
    /// Run the daemon as this uid and gid (the test must be root).
    pub as_user: Option<(u32, u32)>,
}

impl Process {
    pub async fn start(dir: &std::path::Path, extra: &[(&str, &str)]) -> Process {
        Self::start_with(dir, extra, Options::default()).await
    }

    pub async fn start_with(
        dir: &std::path::Path,
        extra: &[(&str, &str)],
        options: Options<'_>,
    ) -> Process {
        let env = env_for(dir, extra);
        let mut cmd = tokio::process::Command::new(crate::execgate_binary());
        cmd.current_dir(dir)
            .args(options.args)
            .arg("serve")
            .args(options.serve_args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some((uid, gid)) = options.as_user {
            cmd.uid(uid).gid(gid);
        }
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap();
        let p = Process { child, env };
        p.wait_ready().await;
        p
    }

    /// The daemon's process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the daemon is running")
    }

    /// POST /v1/requests on the agent socket, whatever the answer.
    pub async fn submit(&self, body: &serde_json::Value) -> (StatusCode, serde_json::Value) {
        execgate::client::Client::new(config_for(&self.env).socket)
            .call(Method::POST, "/v1/requests", Some(body))
            .await
            .unwrap()
    }

    pub async fn wait_ready(&self) {
        let client = execgate::client::Client::new(config_for(&self.env).socket);
        for _ in 0..500 {
            if let Ok((StatusCode::OK, _)) = client.call(Method::GET, "/v1/health", None).await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("execgate serve never became ready");
    }

    /// Submits `command` with `wait: false` over the agent socket; returns the record.
    pub async fn ask_no_wait(&self, command: &str) -> serde_json::Value {
        let client = execgate::client::Client::new(config_for(&self.env).socket);
        let body = json!({"agent": "a", "command": command, "wait": false});
        let (status, record) = client
            .call(Method::POST, "/v1/requests", Some(&body))
            .await
            .unwrap();
        assert_eq!(status, StatusCode::ACCEPTED, "{record}");
        record
    }

    pub fn signal(&self, sig: i32) {
        let pid = self.child.id().unwrap() as i32;
        // SAFETY: sending a signal to our own child.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
    }

    pub async fn wait(mut self) -> (std::process::ExitStatus, String) {
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("daemon exits")
            .unwrap();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            use tokio::io::AsyncReadExt;
            let _ = e.read_to_string(&mut err).await;
        }
        (status, err)
    }
}
