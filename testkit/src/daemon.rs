//! A real daemon on temp sockets and a temp SQLite file, started in-process, plus helpers
//! to talk to it the way users do: HTTP over its sockets, the CLI binary, the console.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use execgate::client::Client;
use execgate::config::Config;
use execgate::daemon::{Daemon, StartOptions};
use execgate::model::{Record, Status};
use execgate::transport::console::ConsoleIo;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

use crate::cli::run_cli;
use crate::env::{config_for, db_path, env_for};

/// A daemon started in this process, with every path in a temp dir and the console
/// approver wired to the test.
pub struct TestDaemon {
    pub dir: TempDir,
    pub daemon: Option<Daemon>,
    /// Environment the daemon's configuration was built from (and the CLI gets).
    pub env: Vec<(String, String)>,
    console_in: Option<DuplexStream>,
    console_out: Option<Lines<BufReader<DuplexStream>>>,
}

impl TestDaemon {
    pub async fn start(extra: &[(&str, &str)]) -> TestDaemon {
        Self::start_in(tempfile::tempdir().unwrap(), extra).await
    }

    pub async fn start_in(dir: TempDir, extra: &[(&str, &str)]) -> TestDaemon {
        let env = env_for(dir.path(), extra);
        let (console_in, daemon_in) = tokio::io::duplex(64 * 1024);
        let (daemon_out, console_out) = tokio::io::duplex(1024 * 1024);
        let io = ConsoleIo {
            input: Box::pin(BufReader::new(daemon_in)),
            output: Box::pin(daemon_out),
        };
        let daemon = Daemon::start(
            config_for(&env),
            StartOptions {
                console: Some(io),
                ..Default::default()
            },
        )
        .await
        .expect("daemon starts");
        TestDaemon {
            dir,
            daemon: Some(daemon),
            env,
            console_in: Some(console_in),
            console_out: Some(BufReader::new(console_out).lines()),
        }
    }

    pub fn config(&self) -> &Config {
        &self.daemon.as_ref().unwrap().config
    }

    pub fn agent(&self) -> Client {
        Client::new(&self.config().socket)
    }

    pub fn admin(&self) -> Client {
        Client::new(&self.config().admin_socket)
    }

    pub async fn stop(&mut self) {
        if let Some(d) = self.daemon.take() {
            d.shutdown().await;
        }
    }

    /// POST /v1/requests on the agent socket.
    pub async fn submit(&self, body: Value) -> (StatusCode, Value) {
        self.agent()
            .call(Method::POST, "/v1/requests", Some(&body))
            .await
            .expect("agent socket answers")
    }

    /// Submits and expects a record back.
    pub async fn ask(&self, agent: &str, command: &str) -> Record {
        let (status, body) = self
            .submit(json!({"agent": agent, "command": command}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        serde_json::from_value(body).unwrap()
    }

    /// Submits with `wait: false`; expects 202 and a pending record.
    pub async fn ask_no_wait(&self, agent: &str, command: &str) -> Record {
        let (status, body) = self
            .submit(json!({"agent": agent, "command": command, "wait": false}))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let r: Record = serde_json::from_value(body).unwrap();
        assert_eq!(r.status, Status::Pending);
        r
    }

    /// Submits and waits in the background (as an agent would), returning the handle.
    pub fn ask_waiting(&self, agent: &str, command: &str) -> tokio::task::JoinHandle<Record> {
        let waiting = self.submit_waiting(json!({"agent": agent, "command": command}));
        tokio::spawn(async move {
            let (status, body) = waiting.await.unwrap();
            assert_eq!(status, StatusCode::OK, "{body}");
            serde_json::from_value(body).unwrap()
        })
    }

    /// POST /v1/requests with `body`, waiting in the background: the status and body
    /// it is answered with.
    pub fn submit_waiting(&self, body: Value) -> tokio::task::JoinHandle<(StatusCode, Value)> {
        let client = self.agent();
        tokio::spawn(async move {
            client
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
        })
    }

    /// POST /v1/requests/{id}/decision on the admin socket.
    pub async fn decide(&self, id: &str, decision: &str) -> (StatusCode, Value) {
        let path = format!("/v1/requests/{id}/decision");
        let body = json!({ "decision": decision });
        self.admin()
            .call(Method::POST, &path, Some(&body))
            .await
            .expect("admin socket answers")
    }

    /// POST /v1/allowlist on the admin socket.
    pub async fn add_rule(&self, rule: Value) -> (StatusCode, Value) {
        self.admin()
            .call(Method::POST, "/v1/allowlist", Some(&rule))
            .await
            .expect("admin socket answers")
    }

    /// Another connection takes SQLite's write lock and keeps it until `ROLLBACK` is run
    /// on it (or it is dropped): every write of the daemon's waits, then fails.
    /// Runs `sql` on the daemon's database behind its back, whichever backend it has.
    pub fn execute_sql(&self, sql: &str) {
        match crate::on_postgres() {
            true => {
                let url = &self
                    .env
                    .iter()
                    .find(|(k, _)| k == "EXECGATE_DATABASE")
                    .unwrap()
                    .1;
                crate::postgres::shared().psql(url, sql);
            }
            false => {
                crate::db::open(&db_path(self.dir.path()))
                    .execute_batch(sql)
                    .unwrap();
            }
        }
    }

    pub async fn hold_write_lock(&self) -> rusqlite::Connection {
        crate::db::hold_write_lock(&db_path(self.dir.path())).await
    }

    /// The admin view of a request.
    pub async fn record(&self, id: &str) -> Record {
        let (status, body) = self
            .admin()
            .call(Method::GET, &format!("/v1/requests/{id}"), None)
            .await
            .unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        serde_json::from_value(body).unwrap()
    }

    /// Waits (bounded) until some pending request's command is `command`.
    pub async fn pending_for(&self, command: &str) -> Record {
        for _ in 0..500 {
            let (_, body) = self
                .admin()
                .call(Method::GET, "/v1/requests?status=pending", None)
                .await
                .unwrap();
            let list: Vec<Record> = serde_json::from_value(body).unwrap();
            if let Some(r) = list.into_iter().find(|r| r.command.display() == command) {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no pending request for {command:?}");
    }

    /// Waits (bounded) until the run queue (`GET /v1/runs`) holds `command`, started or
    /// still waiting as `started` says.
    pub async fn in_run_queue(&self, command: &str, started: bool) -> bool {
        for _ in 0..1000 {
            let (_, runs) = self
                .admin()
                .call(Method::GET, "/v1/runs", None)
                .await
                .unwrap();
            if runs
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["command"] == command && e["started_at"].is_null() != started)
            {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        false
    }

    /// Waits (bounded) until request `id` is terminal.
    pub async fn terminal(&self, id: &str) -> Record {
        for _ in 0..500 {
            let r = self.record(id).await;
            if r.status != Status::Pending {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("request {id} never left pending");
    }

    /// Closes the console's input, as when stdin reaches end of file.
    pub fn close_console_input(&mut self) {
        self.console_in = None;
    }

    /// Types a line into the console approver.
    pub async fn console_say(&mut self, line: &str) {
        let input = self.console_in.as_mut().unwrap();
        input
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    /// Reads console output until a line contains `needle` (bounded), returning that line.
    pub async fn console_expect(&mut self, needle: &str) -> String {
        let out = self.console_out.as_mut().unwrap();
        let found = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(line) = out.next_line().await.unwrap() {
                if line.contains(needle) {
                    return line;
                }
            }
            panic!("console closed before {needle:?}");
        })
        .await;
        found.unwrap_or_else(|_| panic!("console never printed {needle:?}"))
    }

    /// Runs the real `execgate` binary against this daemon.
    pub async fn cli(&self, args: &[&str]) -> Output {
        run_cli(&self.env, args).await
    }
}

/// Writes a POST /v1/requests by hand and returns the open connection, so a test can
/// hang up while the daemon is still working on it.
pub async fn send_and_hold(socket: &Path, body: &Value) -> tokio::net::UnixStream {
    let body = body.to_string();
    let mut stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    let request = format!(
        "POST /v1/requests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}
