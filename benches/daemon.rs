//! Load tool for `execgate serve`: what the daemon does under load, next to what this
//! machine can do at best, measured in one run and reported as ratios to that best.
//!
//! Method, in the order it runs:
//!
//! - **A. Baseline.** The bare HTTP/1.1 round trip over a Unix socket to a trivial hyper
//!   server in a separate process (this binary again, with `--trivial-server`), sending
//!   the very bytes later sent to the daemon; and one durable SQLite commit (WAL,
//!   `synchronous=FULL`) on the daemon's filesystem, with a 4 KiB append + `fdatasync`
//!   for context (it can cost more than the commit: a WAL mostly rewrites file space it
//!   already has). The daemon answers only once the request's row is durable, so
//!   `baseline = round trip p50 + commit p50` is what one decision costs at least.
//! - **B.** Allowlisted requests (an exact rule) at concurrency 1, 16 and 64 against a
//!   real `execgate serve` process at its default log level, checking every answer.
//! - **C.** 10,000 requests pending at once: the daemon's memory, resolving some one at a
//!   time while the rest wait, and a SIGTERM that cancels the rest.
//! - **D.** Start to `READY=1` (sd_notify, as systemd sees it) with 1,000,000 rows of
//!   history and 100 requests left pending by a "crash", against an empty database.
//! - **E.** Policy analysis + match per command with 10,000 rules, in process.
//! - **F.** The owner under a hostile flood: p99 of `GET /v1/requests?status=pending` on
//!   `admin.sock` and of an allowlisted request from another uid, while 32 connections
//!   from one uid (`nobody`, when the bench runs as root) send commands as costly to
//!   analyse as execgate allows, as ratios to the same figures without the flood.
//!
//! The load generator is one tokio `current_thread` runtime in this process, so it uses
//! at most one core; the daemon and the trivial server run on execgate's runtime
//! (`execgate::daemon::runtime`; `TOKIO_WORKER_THREADS` set for the bench is passed on to
//! both, to compare runtime sizes). Latencies are reported as multiples of the baseline, throughput as multiples
//! of the single-stream rate, so runs on different machines compare.
//!
//! Reproduce with `cargo bench --bench daemon` (`cargo bench` runs this and the policy
//! bench); the numbers also go to `target/bench-daemon.json`. `-- --quick` uses medium
//! counts. Without `--bench` on the command line, as `cargo test --benches` runs it, this
//! is a smoke pass: the same sections with tiny counts, checking behaviour only.

use execgate_testkit::policy_bench as common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HOST};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, SqliteConnection};
use tokio::net::{UnixDatagram, UnixListener, UnixStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

// The tests' costliest commands and their hostile agent on uid 65534, for section F.
use execgate_testkit::heavy::heavy_command;
use execgate_testkit::uid;

const REQUESTS: &str = "/v1/requests";
const ALLOWED: &str = "cargo build --release";
const LEVELS: [usize; 3] = [1, 16, 64];
/// Connections submitting the pending requests of section C.
const SUBMITTERS: usize = 64;
/// History rows left pending, as after a crash, so every start in section D sweeps.
const SWEPT: u32 = 100;
const READY_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(120);
const JSON_OUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/bench-daemon.json");

// The targets the report judges (in full and quick mode).
const TARGET_P50_RATIO: f64 = 1.5;
const TARGET_SCALING: f64 = 10.0;
const TARGET_PENDING: usize = 10_000;
const TARGET_PENDING_RSS: u64 = 64 << 20;
const TARGET_HISTORY: u32 = 1_000_000;
const TARGET_READY: Duration = Duration::from_millis(300);
const TARGET_FLOOD_RATIO: f64 = 10.0;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--trivial-server") {
        let socket = args
            .get(i + 1)
            .expect("--trivial-server needs a socket path");
        if let Err(e) = trivial_server(Path::new(socket)) {
            eprintln!("trivial server: {e:#}");
            std::process::exit(1);
        }
        return;
    }
    let mode = Mode::from_args(&args);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // Every daemon guard is dropped (and its process killed) before this returns.
    let outcome = runtime.block_on(run(mode));
    drop(runtime);
    if let Err(e) = outcome {
        eprintln!("daemon bench FAILED: {e:#}");
        std::process::exit(1);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Smoke,
    Quick,
    Full,
}

impl Mode {
    /// `cargo bench` passes `--bench`; `cargo test --benches` does not.
    fn from_args(args: &[String]) -> Mode {
        if args.iter().any(|a| a == "--quick") {
            Mode::Quick
        } else if args.iter().any(|a| a == "--bench") {
            Mode::Full
        } else {
            Mode::Smoke
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Smoke => "smoke",
            Mode::Quick => "quick",
            Mode::Full => "full",
        }
    }

    /// Smoke counts are too small for the numbers to mean anything.
    fn judged(self) -> bool {
        self != Mode::Smoke
    }

    fn plan(self) -> Plan {
        match self {
            Mode::Full => Plan {
                rtt_warmup: 1_000,
                rtt: 20_000,
                insert_warmup: 100,
                inserts: 2_000,
                level_warmup: Duration::from_secs(1),
                level: Duration::from_secs(5),
                pending: 10_000,
                resolves: 1_000,
                history_rows: 1_000_000,
                ready_runs: 5,
                policy_rounds: 50,
                flood_samples: 400,
                flood_connections: 32,
            },
            Mode::Quick => Plan {
                rtt_warmup: 200,
                rtt: 5_000,
                insert_warmup: 20,
                inserts: 500,
                level_warmup: Duration::from_millis(500),
                level: Duration::from_secs(2),
                pending: 10_000,
                resolves: 300,
                history_rows: 200_000,
                ready_runs: 3,
                policy_rounds: 10,
                flood_samples: 100,
                flood_connections: 32,
            },
            Mode::Smoke => Plan {
                rtt_warmup: 0,
                rtt: 200,
                insert_warmup: 0,
                inserts: 50,
                level_warmup: Duration::ZERO,
                level: Duration::from_millis(200),
                pending: 200,
                resolves: 50,
                history_rows: 10_000,
                ready_runs: 1,
                policy_rounds: 2,
                flood_samples: 5,
                flood_connections: 4,
            },
        }
    }
}

/// How much of everything one mode does.
struct Plan {
    rtt_warmup: usize,
    rtt: usize,
    insert_warmup: usize,
    /// Also the number of raw `fdatasync`s.
    inserts: usize,
    level_warmup: Duration,
    level: Duration,
    pending: usize,
    resolves: usize,
    history_rows: u32,
    ready_runs: usize,
    policy_rounds: usize,
    /// Section F: samples of each of the owner's two requests, per phase; and the
    /// flood's connections.
    flood_samples: usize,
    flood_connections: usize,
}

async fn run(mode: Mode) -> Result<()> {
    let plan = mode.plan();
    let mut lab = Lab::new()?;
    let machine = machine(lab.path());
    print_header(mode, &machine, lab.path());

    let ask = Bytes::from(json!({"agent": "bench", "command": ALLOWED}).to_string());
    let base = baseline(&lab, &plan, &ask).await?;
    base.print();

    let mut daemon = lab.start(&lab.daemon_db()).await?;
    let allowlisted = allowlisted(&lab, &daemon, &plan, &ask).await?;
    allowlisted.print(&plan, &base);
    let pending = pending(&lab, &mut daemon, &plan, allowlisted.answered).await?;
    pending.print(&base);
    // Stopped at the end of C; dropping it ends its notify listener.
    drop(daemon);

    let history = history(&mut lab, &plan).await?;
    history.print();

    let policy = policy(&lab, &plan, base.round_trip.p50);
    policy.print();

    let flood = flood(&mut lab, &plan).await?;
    flood.print();

    let targets = targets(&base, &allowlisted, &pending, &history, &flood);
    print_targets(mode, &targets);

    if mode == Mode::Full {
        let report = json!({
            "mode": mode.name(),
            "profile": profile(),
            "date": chrono::Utc::now().to_rfc3339(),
            "machine": machine.json(),
            "baseline": base.json(),
            "allowlisted": allowlisted.json(),
            "pending": pending.json(),
            "history": history.json(),
            "policy": policy.json(),
            "flood": flood.json(),
            "targets": targets.iter().map(Target::json).collect::<Vec<_>>(),
        });
        std::fs::write(JSON_OUT, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("writing {JSON_OUT}"))?;
        println!("\nwritten to {JSON_OUT}");
    }
    Ok(())
}

/// `TOKIO_WORKER_THREADS`, when set for the bench, is handed to the daemon (and the
/// trivial server inherits it), to compare runtimes of other sizes on the same machine.
fn runtime_env() -> Vec<(String, String)> {
    std::env::var("TOKIO_WORKER_THREADS")
        .map(|n| vec![("TOKIO_WORKER_THREADS".to_string(), n)])
        .unwrap_or_default()
}

fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

// ---------------------------------------------------------------------------------------
// A. Baseline

struct Baseline {
    round_trip: Stats,
    insert: Stats,
    fsync: Stats,
    /// The trivial server's answer, to compare with the daemon's.
    trivial_bytes: usize,
}

impl Baseline {
    /// What one durable decision costs at least: a round trip plus a commit.
    fn total(&self) -> Duration {
        self.round_trip.p50 + self.insert.p50
    }

    fn print(&self) {
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

    fn json(&self) -> Value {
        json!({
            "round_trip": self.round_trip.json(),
            "insert_full": self.insert.json(),
            "fsync_4k": self.fsync.json(),
            "baseline_us": us(self.total()),
            "trivial_answer_bytes": self.trivial_bytes,
        })
    }
}

async fn baseline(lab: &Lab, plan: &Plan, ask: &Bytes) -> Result<Baseline> {
    let (round_trip, trivial_bytes) = round_trips(lab, plan, ask).await?;
    let insert = commits(lab, plan).await?;
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
async fn commits(lab: &Lab, plan: &Plan) -> Result<Stats> {
    let mut db = open_db(&lab.path().join("baseline.db")).await?;
    // About 300 bytes a row, shaped like a request's.
    sqlx::query(
        "CREATE TABLE request (
            id TEXT PRIMARY KEY NOT NULL, short_id TEXT, agent_id TEXT, command TEXT,
            cwd TEXT, reason TEXT, risk TEXT, risk_reasons TEXT, status TEXT, via TEXT,
            created_at TEXT, resolved_at TEXT)",
    )
    .execute(&mut db)
    .await?;
    let mut samples = Vec::with_capacity(plan.inserts);
    for i in 0..plan.insert_warmup + plan.inserts {
        let now = chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let insert = sqlx::query("INSERT INTO request VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .bind(format!("019aa6f0-3c2e-7b41-9d3e-{i:012x}"))
            .bind(format!("{:04x}", i % 65_536))
            .bind("bench")
            .bind(format!(
                "cargo test --workspace --release -p service-{i} -- --nocapture"
            ))
            .bind("/home/dev/projects/service/src")
            .bind("run the test suite after the refactor of the store")
            .bind("needs-review")
            .bind(r#"["not a known read-only command"]"#)
            .bind("approved")
            .bind("allowlist")
            .bind(now.clone())
            .bind(now);
        let start = Instant::now();
        insert.execute(&mut db).await?;
        let took = start.elapsed();
        if i >= plan.insert_warmup {
            samples.push(took);
        }
    }
    db.close().await?;
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
fn trivial_server(socket: &Path) -> Result<()> {
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

// ---------------------------------------------------------------------------------------
// B. Allowlisted decisions at concurrency 1, 16, 64

struct Allowlisted {
    ready: Duration,
    answer_bytes: usize,
    levels: Vec<Level>,
    /// Every request approved over the whole section, warm-up included: the rows the
    /// database must hold afterwards.
    answered: usize,
}

struct Level {
    concurrency: usize,
    stats: Stats,
    rps: f64,
}

impl Allowlisted {
    fn single_stream(&self) -> &Level {
        &self.levels[0]
    }

    fn print(&self, plan: &Plan, base: &Baseline) {
        let warmup = if plan.level_warmup.is_zero() {
            "no warm-up".to_string()
        } else {
            format!("after {} warm-up", show(plan.level_warmup))
        };
        println!(
            "\nB. Allowlisted decision (`{ALLOWED}`, exact rule); {} per level, {warmup}",
            show(plan.level),
        );
        println!(
            "  daemon start (fresh database) to READY=1: {}; answer {} bytes (trivial server: {})",
            show(self.ready),
            self.answer_bytes,
            base.trivial_bytes
        );
        println!(
            "  {:>5}{:>10}{:>10}{:>8}{:>11}{:>8}{:>11}{:>8}",
            "conc", "requests", "req/s", "×c=1", "p50", "×base", "p99", "×base"
        );
        let single = self.single_stream().rps;
        for l in &self.levels {
            println!(
                "  {:>5}{:>10}{:>10.0}{:>8}{:>11}{:>8}{:>11}{:>8}",
                l.concurrency,
                l.stats.n,
                l.rps,
                times(l.rps / single),
                show(l.stats.p50),
                times(ratio(l.stats.p50, base.total())),
                show(l.stats.p99),
                times(ratio(l.stats.p99, base.total())),
            );
        }
    }

    fn json(&self) -> Value {
        let single = self.single_stream().rps;
        json!({
            "daemon_ready_ms": ms(self.ready),
            "answer_bytes": self.answer_bytes,
            "answered": self.answered,
            "levels": self.levels.iter().map(|l| json!({
                "concurrency": l.concurrency,
                "latency": l.stats.json(),
                "rps": l.rps,
                "rps_ratio_to_c1": l.rps / single,
            })).collect::<Vec<_>>(),
        })
    }
}

async fn allowlisted(lab: &Lab, daemon: &Daemon, plan: &Plan, ask: &Bytes) -> Result<Allowlisted> {
    let rule = json!({"agent": null, "pattern": ALLOWED, "kind": "exact"});
    let (status, answer) = Conn::open(&lab.admin_socket())
        .await?
        .post("/v1/allowlist", Bytes::from(rule.to_string()))
        .await?;
    ensure!(
        status == StatusCode::CREATED || status == StatusCode::OK,
        "adding the allowlist rule: {status} {}",
        String::from_utf8_lossy(&answer)
    );
    // One request first: the rule works, and the answer's size is known.
    let (status, answer) = Conn::open(&lab.agent_socket())
        .await?
        .post(REQUESTS, ask.clone())
        .await?;
    expect(
        status,
        &answer,
        StatusCode::OK,
        "approved",
        Some("allowlist"),
    )
    .map_err(anyhow::Error::msg)?;
    let mut levels = Vec::new();
    let mut answered = 1;
    for concurrency in LEVELS {
        let (samples, tally) = level(
            &lab.agent_socket(),
            concurrency,
            plan.level_warmup,
            plan.level,
            ask,
        )
        .await?;
        tally.check("allowlisted requests")?;
        answered += tally.ok;
        let stats = Stats::of(samples)?;
        let rps = stats.n as f64 / plan.level.as_secs_f64();
        levels.push(Level {
            concurrency,
            stats,
            rps,
        });
    }
    Ok(Allowlisted {
        ready: daemon.ready,
        answer_bytes: answer.len(),
        levels,
        answered,
    })
}

/// `concurrency` keep-alive connections, each asking in a loop for `warmup + measure`;
/// returns the latencies of the requests made wholly inside the measured window.
async fn level(
    socket: &Path,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
    ask: &Bytes,
) -> Result<(Vec<Duration>, Tally)> {
    let mut conns = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        conns.push(Conn::open(socket).await?);
    }
    let from = Instant::now() + warmup;
    let until = from + measure;
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let ask = ask.clone();
            tokio::spawn(async move {
                let mut samples = Vec::new();
                let mut tally = Tally::default();
                loop {
                    let start = Instant::now();
                    if start >= until {
                        break;
                    }
                    let (status, answer) = conn.post(REQUESTS, ask.clone()).await?;
                    let end = Instant::now();
                    match expect(
                        status,
                        &answer,
                        StatusCode::OK,
                        "approved",
                        Some("allowlist"),
                    ) {
                        Ok(_) => {
                            tally.ok += 1;
                            if start >= from && end <= until {
                                samples.push(end - start);
                            }
                        }
                        Err(e) => tally.fail(e),
                    }
                }
                anyhow::Ok((samples, tally))
            })
        })
        .collect();
    let mut samples = Vec::new();
    let mut tally = Tally::default();
    for task in tasks {
        let (s, t) = task.await??;
        samples.extend(s);
        tally.add(t);
    }
    Ok((samples, tally))
}

// ---------------------------------------------------------------------------------------
// C. Many pending approvals

struct Pending {
    count: usize,
    submit: Stats,
    submit_time: Duration,
    before: Memory,
    with_pending: Memory,
    resolve: Stats,
    after_resolve: Memory,
    left: usize,
    shutdown: Duration,
}

impl Pending {
    fn per_request(&self) -> f64 {
        self.with_pending.rss.saturating_sub(self.before.rss) as f64 / self.count as f64
    }

    fn print(&self, base: &Baseline) {
        println!("\nC. {} requests pending at once", count(self.count));
        let line = |label: String, value: String| println!("  {label:<34}{value}");
        line(
            format!("submit ({SUBMITTERS} connections)"),
            format!(
                "{} in {} ({:.0}/s); {}",
                count(self.count),
                show(self.submit_time),
                self.count as f64 / self.submit_time.as_secs_f64(),
                self.submit.brief()
            ),
        );
        line("daemon memory after B".into(), self.before.show());
        line(
            format!("with {} pending", count(self.count)),
            format!(
                "{}: +{}, {:.0} bytes per pending request",
                self.with_pending.show(),
                mib(self.with_pending.rss.saturating_sub(self.before.rss)),
                self.per_request()
            ),
        );
        line(
            format!("resolve {} one at a time", count(self.resolve.n)),
            format!(
                "p50 {} ({} base), p99 {} ({} base); deny over admin.sock",
                show(self.resolve.p50),
                times(ratio(self.resolve.p50, base.total())),
                show(self.resolve.p99),
                times(ratio(self.resolve.p99, base.total())),
            ),
        );
        line(
            format!("after resolving {}", count(self.resolve.n)),
            self.after_resolve.show(),
        );
        line(
            format!("shutdown with {} pending", count(self.left)),
            format!(
                "{} (SIGTERM to exit 0; each cancelled in its row)",
                show(self.shutdown)
            ),
        );
    }

    fn json(&self) -> Value {
        json!({
            "count": self.count,
            "submit": self.submit.json(),
            "submit_ms": ms(self.submit_time),
            "memory_before": self.before.json(),
            "memory_with_pending": self.with_pending.json(),
            "bytes_per_pending": self.per_request(),
            "resolve": self.resolve.json(),
            "memory_after_resolve": self.after_resolve.json(),
            "left_at_shutdown": self.left,
            "shutdown_ms": ms(self.shutdown),
        })
    }
}

async fn pending(
    lab: &Lab,
    daemon: &mut Daemon,
    plan: &Plan,
    allowlisted: usize,
) -> Result<Pending> {
    let before = daemon.memory()?;
    let started = Instant::now();
    let (ids, submit) = submit_pending(&lab.agent_socket(), plan.pending).await?;
    let submit_time = started.elapsed();
    let with_pending = daemon.memory()?;

    let mut admin = Conn::open(&lab.admin_socket()).await?;
    let deny = Bytes::from(json!({"decision": "deny"}).to_string());
    let mut samples = Vec::with_capacity(plan.resolves);
    for i in rand::seq::index::sample(&mut rand::rng(), ids.len(), plan.resolves) {
        let path = format!("/v1/requests/{}/decision", ids[i]);
        let start = Instant::now();
        let (status, answer) = admin.post(&path, deny.clone()).await?;
        samples.push(start.elapsed());
        expect(status, &answer, StatusCode::OK, "denied", Some("cli"))
            .map_err(anyhow::Error::msg)?;
    }
    drop(admin);
    let after_resolve = daemon.memory()?;

    let left = ids.len() - plan.resolves;
    let shutdown = daemon.stop().await?;
    let mut want = BTreeMap::new();
    want.insert(
        ("approved".to_string(), "allowlist".to_string()),
        allowlisted,
    );
    want.insert(("denied".to_string(), "cli".to_string()), plan.resolves);
    want.insert(("cancelled".to_string(), "shutdown".to_string()), left);
    check_rows(&lab.daemon_db(), &want).await?;
    Ok(Pending {
        count: ids.len(),
        submit: Stats::of(submit)?,
        submit_time,
        before,
        with_pending,
        resolve: Stats::of(samples)?,
        after_resolve,
        left,
        shutdown,
    })
}

/// Submits `count` distinct commands that need review, with `wait: false`, over
/// [`SUBMITTERS`] connections; returns their ids and the submit latencies.
async fn submit_pending(socket: &Path, count: usize) -> Result<(Vec<String>, Vec<Duration>)> {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::with_capacity(SUBMITTERS);
    for _ in 0..SUBMITTERS {
        let mut conn = Conn::open(socket).await?;
        let next = Arc::clone(&next);
        tasks.push(tokio::spawn(async move {
            let (mut ids, mut samples, mut tally) = (Vec::new(), Vec::new(), Tally::default());
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= count {
                    break;
                }
                let command = format!("deploy --target host-{n}");
                let body = json!({"agent": "bench", "command": command, "wait": false});
                let start = Instant::now();
                let (status, answer) = conn.post(REQUESTS, Bytes::from(body.to_string())).await?;
                samples.push(start.elapsed());
                match expect(status, &answer, StatusCode::ACCEPTED, "pending", None) {
                    Ok(a) => {
                        tally.ok += 1;
                        ids.push(a.id);
                    }
                    Err(e) => tally.fail(e),
                }
            }
            anyhow::Ok((ids, samples, tally))
        }));
    }
    let (mut ids, mut samples, mut tally) = (Vec::new(), Vec::new(), Tally::default());
    for task in tasks {
        let (i, s, t) = task.await??;
        ids.extend(i);
        samples.extend(s);
        tally.add(t);
    }
    tally.check("pending submissions")?;
    Ok((ids, samples))
}

/// Checks that the database holds exactly the rows the bench's answers promised:
/// `(status, via) → count`, and nothing else.
async fn check_rows(database: &Path, want: &BTreeMap<(String, String), usize>) -> Result<()> {
    let mut db = open_db(database).await?;
    let rows: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT status, ifnull(via, ''), count(*) FROM exec_approval GROUP BY 1, 2")
            .fetch_all(&mut db)
            .await?;
    db.close().await?;
    let got: BTreeMap<(String, String), usize> = rows
        .into_iter()
        .map(|(status, via, n)| ((status, via), n as usize))
        .collect();
    let want: BTreeMap<_, _> = want.iter().filter(|(_, n)| **n > 0).collect();
    let got_view: BTreeMap<_, _> = got.iter().collect();
    ensure!(
        got_view == want,
        "rows by (status, via) in the database: {got:?}; expected {want:?}"
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// D. Start to READY with a long history

struct History {
    rows: u32,
    db_bytes: u64,
    build: Duration,
    ready: Vec<Duration>,
    empty_ready: Vec<Duration>,
}

impl History {
    fn print(&self) {
        println!("\nD. Start to READY=1 (sd_notify) with history");
        let line = |label: String, value: String| println!("  {label:<34}{value}");
        let runs = |v: &[Duration]| {
            format!(
                "median {}, max {} ({} run{})",
                show(median(v)),
                show(*v.iter().max().expect("at least one run")),
                v.len(),
                if v.len() == 1 { "" } else { "s" }
            )
        };
        line(
            "history".into(),
            format!(
                "{} rows, {}, built in {}",
                count(self.rows as usize),
                mib(self.db_bytes),
                show(self.build)
            ),
        );
        line(
            format!("{} rows + sweep of {SWEPT}", count(self.rows as usize)),
            runs(&self.ready),
        );
        line(
            "empty fresh database".into(),
            runs(&self.empty_ready) + "; it creates the schema",
        );
        line(
            "history / empty (medians)".into(),
            times(ratio(median(&self.ready), median(&self.empty_ready))),
        );
    }

    fn json(&self) -> Value {
        let list = |v: &[Duration]| v.iter().map(|d| ms(*d)).collect::<Vec<_>>();
        json!({
            "rows": self.rows,
            "swept": SWEPT,
            "db_bytes": self.db_bytes,
            "build_ms": ms(self.build),
            "ready_ms": list(&self.ready),
            "ready_median_ms": ms(median(&self.ready)),
            "empty_ready_ms": list(&self.empty_ready),
            "empty_ready_median_ms": ms(median(&self.empty_ready)),
        })
    }
}

async fn history(lab: &mut Lab, plan: &Plan) -> Result<History> {
    let mut empty_ready = Vec::new();
    for run in 0..plan.ready_runs {
        let db = lab.path().join(format!("empty-{run}/execgate.db"));
        let mut daemon = lab.start(&db).await?;
        empty_ready.push(daemon.ready);
        daemon.stop().await?;
    }

    // The daemon itself creates the schema, so the fixture is always the real one.
    let db = lab.path().join("history/execgate.db");
    lab.start(&db).await?.stop().await?;
    let started = Instant::now();
    fill_history(&db, plan.history_rows).await?;
    let build = started.elapsed();
    let db_bytes = std::fs::metadata(&db)?.len();

    let mut ready = Vec::new();
    for _ in 0..plan.ready_runs {
        leave_pending(&db, plan.history_rows).await?;
        let mut daemon = lab.start(&db).await?;
        ready.push(daemon.ready);
        daemon.stop().await?;
        check_swept(&db, plan.history_rows).await?;
    }
    Ok(History {
        rows: plan.history_rows,
        db_bytes,
        build,
        ready,
        empty_ready,
    })
}

/// Fixture: `rows` requests spread over the 90 days before now, in one INSERT … SELECT.
/// Half are decided by policy, a fifth by the allowlist, the rest put to a human and
/// approved, denied, expired or cancelled; the newest [`SWEPT`] are still pending (with
/// distinct short ids, as the schema demands). Rows go in oldest first, as they would
/// have, so `rowid` order is time order.
const FIXTURE: &str = r#"
WITH RECURSIVE
    n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1),
    r AS (
        SELECT i,
               i % 20 AS kind,
               i > ?1 - ?4 AS pending,
               i % 20 >= 14 OR i > ?1 - ?4 AS asked,
               ?2 + (i - 1) * ?3 AS day
        FROM n),
    s AS (
        SELECT *,
               CASE WHEN pending THEN 'pending' WHEN kind <= 16 THEN 'approved'
                    WHEN kind = 17 THEN 'denied' WHEN kind = 18 THEN 'expired'
                    ELSE 'cancelled' END AS status,
               kind BETWEEN 10 AND 13 AND i % 3 = 0 AND NOT pending AS ran,
               CAST((day - 2440587.5) * 86400000 AS INTEGER) AS ms
        FROM r)
INSERT INTO exec_approval (
    id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, risk_reasons,
    status, decision, via, decided_by, error, created_at, expires_at, resolved_at, asked,
    message_external_id, peer_uid, peer_pid, run, exit_code, timed_out, duration_ms,
    stdout_bytes, stderr_bytes)
SELECT
    printf('%08x-%04x-7%03x-%04x-%012x', ms / 65536, ms % 65536, i % 4096,
           32768 + (i * 7919) % 16384, i),
    printf('%04x', i % 65536),
    'agent-' || (i * 7 % 10),
    CASE WHEN i % 3 = 0 THEN NULL ELSE 'session-' || (i / 700) END,
    CASE WHEN i % 16 = 5 THEN NULL ELSE
        CASE i % 8
            WHEN 0 THEN 'git log --oneline --stat -n ' || (i % 50 + 1) || ' -- src/module_' || (i % 31) || '.rs'
            WHEN 1 THEN 'cargo test --workspace --release -p crate-' || (i % 97) || ' -- --nocapture'
            WHEN 2 THEN 'rg --line-number --glob "*.rs" "fn handle_' || (i % 211) || '" src/ tests/ benches/'
            WHEN 3 THEN 'npm run build -- --mode production --out-dir dist/bundle-' || (i % 13)
            WHEN 4 THEN 'kubectl get pods -n team-' || (i % 17) || ' -o wide --sort-by=.status.startTime'
            WHEN 5 THEN 'python3 scripts/migrate_' || (i % 41) || '.py --dry-run --batch-size ' || (100 + i % 900)
            WHEN 6 THEN 'docker compose -f deploy/compose.' || (i % 5) || '.yml up -d --build api worker'
            ELSE 'ls -la --time-style=long-iso /var/log/service-' || (i % 19) || '/archive/' || (i % 365)
        END
    END,
    CASE WHEN i % 16 = 5 THEN '["make","target-' || (i % 40) || '"]' END,
    CASE WHEN i % 4 = 0 THEN NULL ELSE '/home/dev/src/service-' || (i % 23) END,
    CASE WHEN asked THEN 'needed for the release checklist, step ' || (i % 12) END,
    CASE WHEN kind <= 9 AND NOT pending THEN 'safe' WHEN kind = 17 THEN 'dangerous'
         ELSE 'needs-review' END,
    CASE WHEN kind <= 9 AND NOT pending THEN '["read-only command without path arguments"]'
         WHEN kind = 17 THEN '["recursive delete (`rm -r`)","force flag (`-f`)"]'
         WHEN kind % 2 = 0 THEN '["not a known read-only command"]'
         ELSE '[]' END,
    status,
    CASE WHEN pending THEN NULL WHEN kind IN (14, 15) THEN 'allow-once'
         WHEN kind = 16 THEN 'allow-always' WHEN kind = 17 THEN 'deny' END,
    CASE WHEN pending THEN NULL WHEN kind <= 9 THEN 'policy' WHEN kind <= 13 THEN 'allowlist'
         WHEN kind <= 15 THEN 'telegram-command' WHEN kind = 16 THEN 'cli'
         WHEN kind = 17 THEN 'telegram-reaction' WHEN kind = 18 THEN 'timeout'
         ELSE 'disconnect' END,
    CASE WHEN pending THEN NULL WHEN kind IN (14, 15, 17) THEN 'telegram:123456789 (@owner)'
         WHEN kind = 16 THEN 'cli:1000' END,
    CASE WHEN status IN ('denied', 'expired', 'cancelled')
         THEN 'command was not approved (' || status || ')' END,
    strftime('%Y-%m-%dT%H:%M:%fZ', day),
    CASE WHEN asked THEN strftime('%Y-%m-%dT%H:%M:%fZ', day + 120.0 / 86400) END,
    CASE WHEN pending THEN NULL
         WHEN asked THEN strftime('%Y-%m-%dT%H:%M:%fZ', day + (3 + i % 110) / 86400.0)
         ELSE strftime('%Y-%m-%dT%H:%M:%fZ', day) END,
    asked,
    CASE WHEN asked THEN '-1001234567890:' || (100000 + i) END,
    1000,
    2000 + i % 30000,
    ran,
    CASE WHEN ran THEN i % 7 = 0 END,
    CASE WHEN ran THEN 0 END,
    CASE WHEN ran THEN i % 5000 END,
    CASE WHEN ran THEN i % 65536 END,
    CASE WHEN ran THEN i % 300 END
FROM s"#;

async fn fill_history(database: &Path, rows: u32) -> Result<()> {
    let now = chrono::Utc::now();
    let start = now - chrono::Duration::days(90);
    // Julian day numbers: what `strftime` takes directly, to the millisecond.
    let julian =
        |t: chrono::DateTime<chrono::Utc>| t.timestamp_millis() as f64 / 86_400_000.0 + 2_440_587.5;
    let step = (julian(now) - julian(start)) / f64::from(rows);
    // A fixture needs no durability of its own, and a big cache keeps the random
    // short-id index inserts in memory; the checkpoint below writes it all out.
    let options = db_options(database)
        .synchronous(SqliteSynchronous::Off)
        .pragma("cache_size", "-524288");
    let mut db = options.connect().await?;
    // One statement: one transaction.
    sqlx::query(FIXTURE)
        .bind(rows)
        .bind(julian(start))
        .bind(step)
        .bind(SWEPT)
        .execute(&mut db)
        .await
        .context("generating the history")?;
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .execute(&mut db)
        .await?;
    db.close().await?;
    Ok(())
}

/// Puts the newest [`SWEPT`] rows back to pending, as a crash would have left them.
async fn leave_pending(database: &Path, rows: u32) -> Result<()> {
    let mut db = open_db(database).await?;
    sqlx::query(
        "UPDATE exec_approval
         SET status = 'pending', decision = NULL, via = NULL, decided_by = NULL,
             error = NULL, resolved_at = NULL
         WHERE rowid > ?1 - ?2",
    )
    .bind(rows)
    .bind(SWEPT)
    .execute(&mut db)
    .await?;
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .execute(&mut db)
        .await?;
    db.close().await?;
    Ok(())
}

/// The start swept: every row left pending is now cancelled via `restart`.
async fn check_swept(database: &Path, rows: u32) -> Result<()> {
    let mut db = open_db(database).await?;
    let swept: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM exec_approval
         WHERE rowid > ?1 - ?2 AND status = 'cancelled' AND via = 'restart'",
    )
    .bind(rows)
    .bind(SWEPT)
    .fetch_one(&mut db)
    .await?;
    db.close().await?;
    ensure!(
        swept == i64::from(SWEPT),
        "the start swept {swept} of the {SWEPT} requests left pending"
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// E. Policy in process

struct PolicyCost {
    per_command: Duration,
    commands: usize,
    rounds: usize,
    round_trip: Duration,
}

impl PolicyCost {
    fn print(&self) {
        println!(
            "\nE. Policy: analyse + match, {} rules, in process",
            count(common::RULES)
        );
        println!(
            "  median {} per command ({} corpus commands, {} rounds) = {} the bare round trip p50",
            show(self.per_command),
            self.commands,
            self.rounds,
            times(ratio(self.per_command, self.round_trip))
        );
    }

    fn json(&self) -> Value {
        json!({
            "rules": common::RULES,
            "per_command_us": us(self.per_command),
            "commands": self.commands,
            "rounds": self.rounds,
            "ratio_to_round_trip": ratio(self.per_command, self.round_trip),
        })
    }
}

fn policy(lab: &Lab, plan: &Plan, round_trip: Duration) -> PolicyCost {
    let (policy, repo) = common::policy(&lab.path().join("policy"));
    // One pass first, so lazily built state is not billed to the first round.
    common::evaluate_corpus(&policy, &repo);
    PolicyCost {
        per_command: common::median_per_command(plan.policy_rounds, || {
            common::evaluate_corpus(&policy, &repo)
        }),
        commands: common::corpus_len(),
        rounds: plan.policy_rounds,
        round_trip,
    }
}

// ---------------------------------------------------------------------------------------
// F. The owner under a flood

/// The longest one of the owner's requests may take before it counts as a timeout.
const SAMPLE_TIMEOUT: Duration = Duration::from_secs(10);
/// The flood's uid's pending requests (`limits.max_pending_per_uid` in section F).
const FLOOD_PENDING: usize = 30;

/// Runs `body` on a thread of its own, as uid 65534 when `second_uid` (the bench runs
/// as root), else as the bench's uid; its result arrives when it ends.
fn on_flood_uid<F, Fut, T>(second_uid: bool, body: F) -> oneshot::Receiver<T>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T>,
    T: Send + 'static,
{
    let (tx, rx) = oneshot::channel();
    std::thread::spawn(move || {
        let out = if second_uid {
            uid::as_agent(body)
        } else {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the flood")
                .block_on(body())
        };
        let _ = tx.send(out);
    });
    rx
}

struct Flood {
    /// Whether the flood ran on its own uid (the bench ran as root).
    second_uid: bool,
    admin_quiet: Stats,
    admin_flooded: Stats,
    other_quiet: Stats,
    other_flooded: Stats,
    /// The owner's requests that took longer than `SAMPLE_TIMEOUT` (none may).
    timeouts: usize,
    /// Flood requests answered while the owner's were measured.
    flood_answered: usize,
    connections: usize,
}

impl Flood {
    fn admin_ratio(&self) -> f64 {
        ratio(self.admin_flooded.p99, self.admin_quiet.p99)
    }

    fn print(&self) {
        println!(
            "\nF. The owner under a flood ({} connections of heavy commands from {}; {} flood answers meanwhile)",
            self.connections,
            if self.second_uid {
                "uid 65534"
            } else {
                "the bench's own uid: run as root to put the flood on its own uid"
            },
            self.flood_answered
        );
        println!("   both phases list the flood's {FLOOD_PENDING} pending requests of ~55 KB each");
        println!("   {:<34}{}", "", Stats::HEADER);
        for (name, s) in [
            ("admin GET pending, quiet", &self.admin_quiet),
            ("admin GET pending, flooded", &self.admin_flooded),
            ("other uid, allowlisted, quiet", &self.other_quiet),
            ("other uid, allowlisted, flooded", &self.other_flooded),
        ] {
            println!("   {name:<34}{}", s.row());
        }
        println!(
            "   p99 flooded / quiet: admin {}, allowlisted {}; timeouts: {}",
            times(self.admin_ratio()),
            times(ratio(self.other_flooded.p99, self.other_quiet.p99)),
            self.timeouts
        );
    }

    fn json(&self) -> Value {
        json!({
            "second_uid": self.second_uid,
            "connections": self.connections,
            "admin_quiet": self.admin_quiet.json(),
            "admin_flooded": self.admin_flooded.json(),
            "other_quiet": self.other_quiet.json(),
            "other_flooded": self.other_flooded.json(),
            "admin_p99_ratio": self.admin_ratio(),
            "other_p99_ratio": ratio(self.other_flooded.p99, self.other_quiet.p99),
            "timeouts": self.timeouts,
            "flood_answered": self.flood_answered,
        })
    }
}

async fn flood(lab: &mut Lab, plan: &Plan) -> Result<Flood> {
    // The limits a flood meets in production, and at most `FLOOD_PENDING` of its asks
    // waiting: both phases list the same pending requests, so that the ratio measures
    // starvation, not the size of the list.
    let pending_cap = FLOOD_PENDING.to_string();
    let limits = [
        ("EXECGATE_LIMITS__ASKS_PER_MINUTE_PER_UID", "30"),
        ("EXECGATE_LIMITS__MAX_PENDING_PER_UID", pending_cap.as_str()),
    ];
    let mut daemon = lab
        .start_with(&lab.path().join("state/flood.db"), &limits)
        .await?;
    let mut admin = Conn::open(&lab.admin_socket()).await?;
    let rule = json!({"agent": "other", "pattern": "make other", "kind": "exact"});
    let (status, answer) = admin
        .post("/v1/allowlist", Bytes::from(rule.to_string()))
        .await?;
    ensure!(
        status == StatusCode::CREATED,
        "adding the rule: {status} {}",
        String::from_utf8_lossy(&answer)
    );
    // SAFETY: geteuid has no preconditions.
    let second_uid = unsafe { libc::geteuid() } == 0;
    if second_uid {
        uid::let_agent_in(lab.path(), &lab.agent_socket());
    }
    // The flood's uid fills its share of pending requests first, with commands as long
    // as the flood's but cheap to analyse.
    let socket = lab.agent_socket();
    let seeded = on_flood_uid(second_uid, move || async move {
        let mut seeded = 0;
        for i in 0..FLOOD_PENDING {
            let command = format!("make seed{i} '{}'", "y".repeat(54_000));
            let ask = json!({"agent": "flood", "command": command, "wait": false});
            let mut conn = Conn::open(&socket).await?;
            let (status, _) = conn.post(REQUESTS, Bytes::from(ask.to_string())).await?;
            seeded += usize::from(status == StatusCode::ACCEPTED);
        }
        anyhow::Ok(seeded)
    })
    .await??;
    ensure!(
        seeded == FLOOD_PENDING,
        "only {seeded} of {FLOOD_PENDING} seeded asks pend"
    );
    let (admin_quiet, other_quiet, quiet_timeouts) = owner_samples(lab, plan).await?;

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let flooding = {
        let (socket, stop, answered) =
            (lab.agent_socket(), Arc::clone(&stop), Arc::clone(&answered));
        let connections = plan.flood_connections;
        on_flood_uid(second_uid, move || async move {
            let tasks: Vec<_> = (0..connections)
                .map(|c| {
                    let (socket, stop, answered) =
                        (socket.clone(), Arc::clone(&stop), Arc::clone(&answered));
                    tokio::spawn(async move {
                        let mut seed = c;
                        while !stop.load(Ordering::Relaxed) {
                            let ask = json!({"agent": "flood", "command": heavy_command(seed), "wait": false});
                            seed += connections;
                            let Ok(mut conn) = Conn::open(&socket).await else {
                                tokio::time::sleep(Duration::from_millis(10)).await;
                                continue;
                            };
                            if conn.post(REQUESTS, Bytes::from(ask.to_string())).await.is_ok() {
                                answered.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    })
                })
                .collect();
            for task in tasks {
                let _ = task.await;
            }
        })
    };
    // The flood reaches its stride before the owner is measured.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = answered.load(Ordering::Relaxed);
    let flooded = owner_samples(lab, plan).await;
    let flood_answered = answered.load(Ordering::Relaxed) - before;
    stop.store(true, Ordering::Relaxed);
    let _ = flooding.await;
    let (admin_flooded, other_flooded, flooded_timeouts) = flooded?;
    daemon.stop().await?;
    Ok(Flood {
        second_uid,
        admin_quiet,
        admin_flooded,
        other_quiet,
        other_flooded,
        timeouts: quiet_timeouts + flooded_timeouts,
        flood_answered,
        connections: plan.flood_connections,
    })
}

/// The owner's side: `plan.flood_samples` of each of its two requests, one at a time,
/// alternating, each on a fresh connection (as the CLI makes them). A sample past
/// `SAMPLE_TIMEOUT` is counted as a timeout and as that long.
async fn owner_samples(lab: &Lab, plan: &Plan) -> Result<(Stats, Stats, usize)> {
    let ask = Bytes::from(json!({"agent": "other", "command": "make other"}).to_string());
    let (mut admin, mut other, mut timeouts) = (Vec::new(), Vec::new(), 0);
    for _ in 0..plan.flood_samples {
        let start = Instant::now();
        let listed = tokio::time::timeout(SAMPLE_TIMEOUT, async {
            let mut conn = Conn::open(&lab.admin_socket()).await?;
            conn.get("/v1/requests?status=pending").await
        })
        .await;
        match listed {
            Ok(answer) => {
                let (status, body) = answer?;
                ensure!(
                    status == StatusCode::OK,
                    "listing: {status} {}",
                    String::from_utf8_lossy(&body)
                );
            }
            Err(_) => timeouts += 1,
        }
        admin.push(start.elapsed());

        let start = Instant::now();
        let decided = tokio::time::timeout(SAMPLE_TIMEOUT, async {
            let mut conn = Conn::open(&lab.agent_socket()).await?;
            conn.post(REQUESTS, ask.clone()).await
        })
        .await;
        match decided {
            Ok(answer) => {
                let (status, body) = answer?;
                expect(status, &body, StatusCode::OK, "approved", Some("allowlist"))
                    .map_err(anyhow::Error::msg)?;
            }
            Err(_) => timeouts += 1,
        }
        other.push(start.elapsed());
    }
    Ok((Stats::of(admin)?, Stats::of(other)?, timeouts))
}

// ---------------------------------------------------------------------------------------
// Targets

struct Target {
    name: String,
    value: String,
    /// `None` when this run's counts differ from what the target is stated for.
    pass: Option<bool>,
}

impl Target {
    fn json(&self) -> Value {
        json!({"target": self.name, "value": self.value, "pass": self.pass})
    }
}

fn targets(
    base: &Baseline,
    allowlisted: &Allowlisted,
    pending: &Pending,
    history: &History,
    flood: &Flood,
) -> Vec<Target> {
    let single = allowlisted.single_stream();
    let widest = allowlisted.levels.last().expect("at least one level");
    let p50 = ratio(single.stats.p50, base.total());
    let scaling = widest.rps / single.rps;
    let ready = median(&history.ready);
    vec![
        Target {
            name: format!("single-stream allowlisted p50 ≤ {TARGET_P50_RATIO}× baseline"),
            value: times(p50),
            pass: Some(p50 <= TARGET_P50_RATIO),
        },
        Target {
            name: format!(
                "c={} req/s ≥ {TARGET_SCALING}× c=1 req/s",
                widest.concurrency
            ),
            value: times(scaling),
            pass: Some(scaling >= TARGET_SCALING),
        },
        Target {
            name: format!(
                "{} pending: daemon RSS < {} MiB",
                count(TARGET_PENDING),
                TARGET_PENDING_RSS >> 20
            ),
            value: mib(pending.with_pending.rss),
            pass: (pending.count == TARGET_PENDING)
                .then_some(pending.with_pending.rss < TARGET_PENDING_RSS),
        },
        Target {
            name: format!(
                "READY with {} rows < {} ms (median)",
                count(TARGET_HISTORY as usize),
                TARGET_READY.as_millis()
            ),
            value: show(ready),
            pass: (history.rows == TARGET_HISTORY).then_some(ready < TARGET_READY),
        },
        Target {
            name: format!("flooded admin p99 ≤ {TARGET_FLOOD_RATIO}× quiet, no timeout"),
            value: times(flood.admin_ratio()),
            // Judged only with the flood on its own uid, as the target is stated.
            pass: flood
                .second_uid
                .then_some(flood.admin_ratio() <= TARGET_FLOOD_RATIO && flood.timeouts == 0),
        },
    ]
}

fn print_targets(mode: Mode, targets: &[Target]) {
    println!("\nTargets");
    for t in targets {
        let verdict = match t.pass {
            _ if !mode.judged() => "— (smoke: not judged)",
            Some(true) => "PASS",
            Some(false) => "MISS",
            None => "— (other counts)",
        };
        println!("  {:<50}{:>14}   {verdict}", t.name, t.value);
    }
}

// ---------------------------------------------------------------------------------------
// The lab: a temp dir, and daemons started in it

struct Lab {
    dir: tempfile::TempDir,
    starts: usize,
}

impl Lab {
    fn new() -> Result<Lab> {
        let dir = tempfile::tempdir()?;
        // An explicit, empty configuration file: no /etc/execgate or ~/.config file
        // can change what is measured.
        std::fs::write(
            dir.path().join("execgate.toml"),
            "# built-in defaults; the bench sets the rest in the environment\n",
        )?;
        Ok(Lab { dir, starts: 0 })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn agent_socket(&self) -> PathBuf {
        self.path().join("run/agent.sock")
    }

    fn admin_socket(&self) -> PathBuf {
        self.path().join("run/admin.sock")
    }

    fn daemon_db(&self) -> PathBuf {
        self.path().join("state/execgate.db")
    }

    /// Starts `execgate serve` on `database` as systemd would (READY=1 on
    /// `NOTIFY_SOCKET`), at the default log level, and waits until it is ready.
    async fn start(&mut self, database: &Path) -> Result<Daemon> {
        self.start_with(database, &[]).await
    }

    /// [`Lab::start`], with `extra` on top of the bench's environment.
    async fn start_with(&mut self, database: &Path, extra: &[(&str, &str)]) -> Result<Daemon> {
        self.starts += 1;
        let log = self.path().join(format!("daemon-{}.log", self.starts));
        let notify_path = self.path().join(format!("notify-{}.sock", self.starts));
        let notify = UnixDatagram::bind(&notify_path)?;
        let (ready_tx, ready_rx) = oneshot::channel();
        let listener = tokio::spawn(listen_for_ready(notify, ready_tx));
        let log_file = std::fs::File::create(&log)?;
        let spawned = Instant::now();
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_execgate"))
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
struct Daemon {
    child: tokio::process::Child,
    pid: i32,
    log: PathBuf,
    notify: JoinHandle<()>,
    stopped: bool,
    /// Spawn to READY=1.
    ready: Duration,
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
    async fn stop(&mut self) -> Result<Duration> {
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

    fn memory(&self) -> Result<Memory> {
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
struct Memory {
    rss: u64,
    /// Peak RSS so far.
    hwm: u64,
}

impl Memory {
    fn show(&self) -> String {
        format!("RSS {} (peak {})", mib(self.rss), mib(self.hwm))
    }

    fn json(&self) -> Value {
        json!({"rss_bytes": self.rss, "hwm_bytes": self.hwm})
    }
}

// ---------------------------------------------------------------------------------------
// The client

/// One keep-alive HTTP/1.1 connection, driven by a task on the client's runtime.
struct Conn {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
}

impl Conn {
    async fn open(socket: &Path) -> Result<Conn> {
        let stream = UnixStream::connect(socket)
            .await
            .with_context(|| format!("connecting to {}", socket.display()))?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Conn { sender })
    }

    /// Connects once the server listens (it starts in the background).
    async fn open_when_up(socket: &Path) -> Result<Conn> {
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
    async fn get(&mut self, path: &str) -> Result<(StatusCode, Bytes)> {
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
    async fn post(&mut self, path: &str, body: Bytes) -> Result<(StatusCode, Bytes)> {
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
struct Answer {
    id: String,
    status: String,
    via: Option<String>,
}

/// Checks an answer's HTTP status, and its record's status and `via`.
fn expect(
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
        format!("expected {want} with status {status}{via}, got {got}: {text}")
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
struct Tally {
    ok: usize,
    failed: usize,
    first: Option<String>,
}

impl Tally {
    fn fail(&mut self, why: String) {
        self.failed += 1;
        self.first.get_or_insert(why);
    }

    fn add(&mut self, other: Tally) {
        self.ok += other.ok;
        self.failed += other.failed;
        if self.first.is_none() {
            self.first = other.first;
        }
    }

    fn check(&self, what: &str) -> Result<()> {
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

async fn open_db(path: &Path) -> Result<SqliteConnection> {
    Ok(db_options(path).connect().await?)
}

/// The daemon's own settings: WAL, every commit durable.
fn db_options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
}

// ---------------------------------------------------------------------------------------
// Statistics and formatting

#[derive(Clone, Copy)]
struct Stats {
    n: usize,
    p50: Duration,
    p99: Duration,
    mean: Duration,
    max: Duration,
}

impl Stats {
    const HEADER: &str = "         n        p50        p99       mean";

    fn of(mut samples: Vec<Duration>) -> Result<Stats> {
        ensure!(!samples.is_empty(), "no samples");
        samples.sort_unstable();
        let n = samples.len();
        // Nearest rank.
        let at = |q: f64| samples[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        Ok(Stats {
            n,
            p50: at(0.50),
            p99: at(0.99),
            mean: samples.iter().sum::<Duration>() / n as u32,
            max: samples[n - 1],
        })
    }

    fn row(&self) -> String {
        format!(
            "{:>10}{:>11}{:>11}{:>11}",
            self.n,
            show(self.p50),
            show(self.p99),
            show(self.mean)
        )
    }

    fn brief(&self) -> String {
        format!("p50 {}, p99 {}", show(self.p50), show(self.p99))
    }

    fn json(&self) -> Value {
        json!({
            "n": self.n,
            "p50_us": us(self.p50),
            "p99_us": us(self.p99),
            "mean_us": us(self.mean),
            "max_us": us(self.max),
        })
    }
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort_unstable();
    v[v.len() / 2]
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn times(x: f64) -> String {
    format!("{x:.2}×")
}

fn show(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

fn us(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e7).round() / 10.0
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e5).round() / 100.0
}

/// `1234567` as `1,234,567`.
fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

// ---------------------------------------------------------------------------------------
// The machine

struct Machine {
    cores: usize,
    cpu: String,
    kernel: String,
    memory: String,
    filesystem: String,
}

impl Machine {
    fn json(&self) -> Value {
        json!({
            "cores": self.cores,
            "cpu": self.cpu,
            "kernel": self.kernel,
            "memory": self.memory,
            "temp_filesystem": self.filesystem,
        })
    }
}

fn machine(temp: &Path) -> Machine {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let field = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map_or("unknown".to_string(), |(_, v)| v.trim().to_string())
    };
    Machine {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu: field(&cpuinfo, "model name"),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        memory: field(&read("/proc/meminfo"), "MemTotal")
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .map_or("unknown".to_string(), |kib| {
                format!("{:.1} GiB", kib as f64 / f64::from(1 << 20))
            }),
        filesystem: filesystem(temp),
    }
}

/// The filesystem holding `path`: the longest mount point that contains it.
fn filesystem(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (device, point, kind) = (f.next()?, f.next()?, f.next()?);
            path.starts_with(point)
                .then(|| (point.len(), format!("{kind} ({device} on {point})")))
        })
        .max_by_key(|(len, _)| *len)
        .map_or("unknown".to_string(), |(_, fs)| fs)
}

fn print_header(mode: Mode, m: &Machine, temp: &Path) {
    println!(
        "execgate daemon bench: {} mode, {} build, {}",
        mode.name(),
        profile(),
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC")
    );
    println!(
        "machine: {} cores ({}), {} RAM, Linux {}",
        m.cores, m.cpu, m.memory, m.kernel
    );
    println!("temp dir: {} on {}", temp.display(), m.filesystem);
    let workers = std::env::var("TOKIO_WORKER_THREADS")
        .map(|n| format!("{n} workers (TOKIO_WORKER_THREADS)"))
        .unwrap_or_else(|_| "execgate's default workers (half the cores, at least one)".into());
    println!(
        "load generator: one tokio current_thread runtime in this process (at most one core); \
         daemon and trivial server: tokio multi-thread, {workers}"
    );
    println!("daemon log level: its default (info: a line per request, to a file)");
    if !mode.judged() {
        println!("smoke mode: tiny counts, behaviour checked, numbers not meaningful");
    }
}
