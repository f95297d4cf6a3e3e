//! A. Baseline: the bare round trip to a trivial server, a durable SQLite commit and
//! an `fdatasync`, which together are what one decision costs at least.

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::CONTENT_TYPE;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::UnixListener;

use crate::client::{Conn, close_db, open_db};
use crate::lab::Lab;
use crate::stats::{Stats, show, us};
use crate::{ALLOWED, Plan, REQUESTS};

pub struct Baseline {
    pub round_trip: Stats,
    insert: Stats,
    fsync: Stats,
    /// The trivial server's answer, to compare with the daemon's.
    pub trivial_bytes: usize,
}

impl Baseline {
    /// What one durable decision costs at least: a round trip plus a commit.
    pub fn total(&self) -> Duration {
        self.round_trip.p50 + self.insert.p50
    }

    pub fn print(&self) {
        println!("\nA. Baseline: the best this machine can do");
        println!("  {:<52}{}", "", Stats::HEADER);
        println!(
            "  {:<52}{}",
            "HTTP/1.1 round trip, Unix socket, trivial server",
            self.round_trip.row()
        );
        println!(
            "  {:<52}{}",
            "SQLite INSERT, WAL, synchronous=FULL (one commit)",
            self.insert.row()
        );
        println!(
            "  {:<52}{}",
            "4 KiB append + fdatasync (grows the file)",
            self.fsync.row()
        );
        println!(
            "  baseline = round trip p50 + commit p50 = {}",
            show(self.total())
        );
    }

    pub fn json(&self) -> Value {
        json!({
            "round_trip": self.round_trip.json(),
            "insert_full": self.insert.json(),
            "fsync_4k": self.fsync.json(),
            "baseline_us": us(self.total()),
            "trivial_answer_bytes": self.trivial_bytes,
        })
    }
}

pub async fn baseline(lab: &Lab, plan: &Plan, ask: &Bytes) -> Result<Baseline> {
    let (round_trip, trivial_bytes) = round_trips(lab, plan, ask).await?;
    let insert = commits(lab, plan)?;
    let fsync = fsyncs(&lab.path().join("fsync.bin"), plan.inserts)?;
    Ok(Baseline {
        round_trip,
        insert,
        fsync,
        trivial_bytes,
    })
}

/// Sequential keep-alive round trips to the trivial server; also returns its answer's size.
async fn round_trips(lab: &Lab, plan: &Plan, ask: &Bytes) -> Result<(Stats, usize)> {
    let socket = lab.path().join("trivial.sock");
    let mut server = tokio::process::Command::new(std::env::current_exe()?)
        .arg("--trivial-server")
        .arg(&socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting the trivial server")?;
    let mut conn = Conn::open_when_up(&socket).await?;
    let mut samples = Vec::with_capacity(plan.rtt);
    let mut size = 0;
    for i in 0..plan.rtt_warmup + plan.rtt {
        let start = Instant::now();
        let (status, answer) = conn.post(REQUESTS, ask.clone()).await?;
        let took = start.elapsed();
        ensure!(status == StatusCode::OK, "trivial server answered {status}");
        size = answer.len();
        if i >= plan.rtt_warmup {
            samples.push(took);
        }
    }
    server.start_kill()?;
    server.wait().await?;
    Ok((Stats::of(samples)?, size))
}

/// Single-row autocommit INSERTs, each one durable commit, on the daemon's filesystem.
fn commits(lab: &Lab, plan: &Plan) -> Result<Stats> {
    let db = open_db(&lab.path().join("baseline.db"))?;
    // About 300 bytes a row, shaped like a request's.
    db.execute(
        "CREATE TABLE request (
            id TEXT PRIMARY KEY NOT NULL, short_id TEXT, agent_id TEXT, command TEXT,
            cwd TEXT, reason TEXT, risk TEXT, risk_reasons TEXT, status TEXT, via TEXT,
            created_at TEXT, resolved_at TEXT)",
        [],
    )?;
    let mut samples = Vec::with_capacity(plan.inserts);
    for i in 0..plan.insert_warmup + plan.inserts {
        let now = chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let row = (
            format!("019aa6f0-3c2e-7b41-9d3e-{i:012x}"),
            format!("{:04x}", i % 65_536),
            "bench",
            format!("cargo test --workspace --release -p service-{i} -- --nocapture"),
            "/home/dev/projects/service/src",
            "run the test suite after the refactor of the store",
            "needs-review",
            r#"["not a known read-only command"]"#,
            "approved",
            "allowlist",
            now.clone(),
            now,
        );
        let start = Instant::now();
        // Prepared once, then found in the connection's statement cache.
        db.prepare_cached("INSERT INTO request VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")?
            .execute(row)?;
        let took = start.elapsed();
        if i >= plan.insert_warmup {
            samples.push(took);
        }
    }
    close_db(db)?;
    Stats::of(samples)
}

/// Appends 4 KiB and `fdatasync`s, `n` times: the price of durability on this disk.
fn fsyncs(path: &Path, n: usize) -> Result<Stats> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let block = [0x5a_u8; 4096];
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        file.write_all(&block)?;
        file.sync_data()?;
        samples.push(start.elapsed());
    }
    Stats::of(samples)
}

/// The `--trivial-server` process: hyper on the same runtime the daemon uses
/// (`execgate::daemon::runtime`), reading each request whole and answering a fixed
/// record-sized JSON body.
pub fn trivial_server(socket: &Path) -> Result<()> {
    execgate::daemon::runtime()?.block_on(serve_trivial(socket))
}

async fn serve_trivial(socket: &Path) -> Result<()> {
    let listener = UnixListener::bind(socket)?;
    let answer = Bytes::from(trivial_answer());
    loop {
        let (stream, _) = listener.accept().await?;
        let answer = answer.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let answer = answer.clone();
                async move {
                    request.into_body().collect().await?;
                    Ok::<_, hyper::Error>(
                        Response::builder()
                            .header(CONTENT_TYPE, "application/json")
                            .body(Full::new(answer))
                            .expect("a fixed response is valid"),
                    )
                }
            });
            // A client hanging up ends its connection; there is nothing to report.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A record like the daemon's answer to an allowlisted request, so that both servers
/// send about the same number of bytes (the report shows both sizes).
fn trivial_answer() -> String {
    json!({
        "id": "019aa6f0-3c2e-7b41-9d3e-5a0c7e6f1b2d", "short_id": "3f9a", "agent": "bench",
        "session": null, "command": ALLOWED, "argv": null, "cwd": null, "reason": null,
        "status": "approved", "decision": null, "via": "allowlist", "decided_by": null,
        "risk": "needs-review", "risk_reasons": ["not a known read-only command"],
        "created_at": "2026-11-21T22:47:43.630Z", "expires_at": null,
        "resolved_at": "2026-11-21T22:47:43.631Z", "run": false, "result": null,
        "error": null, "peer_uid": 1000, "peer_pid": 424242,
    })
    .to_string()
}
