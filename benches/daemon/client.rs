//! The client: keep-alive HTTP/1.1 connections over the daemon's sockets, the checks of
//! its answers, and connections to its database.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HOST};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use rusqlite::{Connection, OpenFlags};
use serde::Deserialize;
use tokio::net::UnixStream;

/// One keep-alive HTTP/1.1 connection, driven by a task on the client's runtime.
pub struct Conn {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
}

impl Conn {
    pub async fn open(socket: &Path) -> Result<Conn> {
        let stream = UnixStream::connect(socket)
            .await
            .with_context(|| format!("connecting to {}", socket.display()))?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Conn { sender })
    }

    /// Connects once the server listens (it starts in the background).
    pub async fn open_when_up(socket: &Path) -> Result<Conn> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match Conn::open(socket).await {
                Ok(conn) => return Ok(conn),
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }

    /// GETs `path`; returns the status and the whole answer.
    pub async fn get(&mut self, path: &str) -> Result<(StatusCode, Bytes)> {
        self.sender.ready().await?;
        let request = Request::get(path)
            .header(HOST, "localhost")
            .body(Full::new(Bytes::new()))?;
        let response = self.sender.send_request(request).await?;
        let status = response.status();
        let answer = response.into_body().collect().await?.to_bytes();
        Ok((status, answer))
    }

    /// POSTs `body` as JSON; returns the status and the whole answer.
    pub async fn post(&mut self, path: &str, body: Bytes) -> Result<(StatusCode, Bytes)> {
        self.sender.ready().await?;
        let request = Request::post(path)
            .header(HOST, "localhost")
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(body))?;
        let response = self.sender.send_request(request).await?;
        let status = response.status();
        let answer = response.into_body().collect().await?.to_bytes();
        Ok((status, answer))
    }
}

/// The fields of a record the bench checks.
#[derive(Deserialize)]
pub struct Answer {
    pub id: String,
    status: String,
    via: Option<String>,
}

/// Checks an answer's HTTP status, and its record's status and `via`.
pub fn expect(
    got: StatusCode,
    answer: &[u8],
    want: StatusCode,
    status: &str,
    via: Option<&str>,
) -> Result<Answer, String> {
    let fail = || {
        let text = String::from_utf8_lossy(answer);
        let text: String = text.chars().take(300).collect();
        let via = via.map_or(String::new(), |v| format!(" via {v}"));
        // Why execgate judged it so, which the cut text may have lost.
        let why = serde_json::from_slice::<serde_json::Value>(answer)
            .ok()
            .and_then(|v| v.get("risk_reasons").cloned())
            .map_or(String::new(), |r| format!(" (risk reasons: {r})"));
        format!("expected {want} with status {status}{via}, got {got}: {text}{why}")
    };
    if got != want {
        return Err(fail());
    }
    let record: Answer = serde_json::from_slice(answer).map_err(|_| fail())?;
    if record.status != status || (via.is_some() && record.via.as_deref() != via) {
        return Err(fail());
    }
    Ok(record)
}

/// Answers that were right, and those that were not (the first one kept to show).
#[derive(Default)]
pub struct Tally {
    pub ok: usize,
    failed: usize,
    first: Option<String>,
}

impl Tally {
    pub fn fail(&mut self, why: String) {
        self.failed += 1;
        self.first.get_or_insert(why);
    }

    pub fn add(&mut self, other: Tally) {
        self.ok += other.ok;
        self.failed += other.failed;
        if self.first.is_none() {
            self.first = other.first;
        }
    }

    pub fn check(&self, what: &str) -> Result<()> {
        if self.failed > 0 {
            bail!(
                "{} of {} {what} got a wrong answer; the first: {}",
                self.failed,
                self.ok + self.failed,
                self.first.as_deref().unwrap_or("?")
            );
        }
        Ok(())
    }
}

/// Opens the database at `path`, creating it if missing, with the daemon's own settings:
/// WAL, every commit durable (`synchronous=FULL`), foreign keys; a lock is waited on for
/// up to 5 s. SQLite is synchronous: the bench only opens its database while no daemon
/// runs, when its single-threaded runtime has nothing else to do.
/// Adds an exact allowlist rule for every agent over `admin` (the sections that measure
/// an allowlisted request start with one).
pub async fn add_exact_rule(admin: &Path, pattern: &str) -> Result<()> {
    let rule = serde_json::json!({"agent": null, "pattern": pattern, "kind": "exact"});
    let (status, answer) = Conn::open(admin)
        .await?
        .post("/v1/allowlist", Bytes::from(rule.to_string()))
        .await?;
    anyhow::ensure!(
        status == StatusCode::CREATED || status == StatusCode::OK,
        "adding the allowlist rule: {status} {}",
        String::from_utf8_lossy(&answer)
    );
    Ok(())
}

pub fn open_db(path: &Path) -> Result<Connection> {
    let db = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_PRIVATE_CACHE,
    )
    .with_context(|| format!("opening {}", path.display()))?;
    db.busy_timeout(Duration::from_secs(5))?;
    db.pragma_update(None, "journal_mode", "WAL")?;
    db.pragma_update(None, "foreign_keys", "ON")?;
    db.pragma_update(None, "synchronous", "FULL")?;
    Ok(db)
}

/// Closes `db`, reporting what SQLite says if that fails (as dropping it would not).
pub fn close_db(db: Connection) -> Result<()> {
    db.close().map_err(|(_, e)| e)?;
    Ok(())
}
