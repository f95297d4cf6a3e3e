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
//!   real `execgate serve` process at its default log level, checking every answer; and
//!   the same at concurrency 1 with the audit chain and metrics on (the defaults) beside
//!   both off, in alternating rounds (`audit`).
//! - **C.** 10,000 requests pending at once: the daemon's memory, resolving some one at a
//!   time while the rest wait, and a SIGTERM that cancels the rest.
//! - **D.** Start to `READY=1` (sd_notify, as systemd sees it) with 1,000,000 rows of
//!   history and 100 requests left pending by a "crash", against an empty database.
//! - **E.** Policy analysis + match per command with 10,000 rules, in process.
//! - **F.** The owner under a hostile flood: p99 of `GET /v1/requests?status=pending` on
//!   `admin.sock` and of an allowlisted request from another uid, while 32 connections
//!   from one uid (`nobody`, when the bench runs as root) send commands as costly to
//!   analyse as execgate allows, as ratios to the same figures without the flood.
//! - **G.** The hook per tool call: `execgate hook claude-code` spawned with Claude
//!   Code's JSON for an allowlisted command, spawn to exit, interleaved with `/bin/true`
//!   given the same stdin, `execgate --version` and the hook with no daemon, for the
//!   breakdown (process start, configuration and input, connect and decision).
//! - **H.** An MCP tool call: `request_approval` for the allowlisted command through one
//!   `execgate mcp` session (the Rust SDK's client), interleaved with the same request
//!   sent straight to the agent socket on a fresh connection, as the server sends it.
//! - **J.** PostgreSQL beside SQLite: allowlisted decisions at concurrency 1 and 64 on
//!   each store (a real PostgreSQL on a local socket, `synchronous_commit=on`), and the
//!   chats' failover among nodes sharing it: the leader killed with SIGKILL, to the next
//!   request's message posted by the node that takes over.
//! - **I.** The chats: one daemon posting to Matrix (a real Synapse, an encrypted room,
//!   the owner on the same SDK) and to Telegram (the test suite's fake Bot API) at once:
//!   submission to the message seen in each, and the owner's reaction to the agent's
//!   answer, beside the homeserver's own round trip (a message to the sender's `/sync`);
//!   and a burst of requests to a Telegram-paced chat, with digests and without.
//!
//! The load generator is one tokio `current_thread` runtime in this process, so it uses
//! at most one core; the daemon and the trivial server run on execgate's runtime
//! (`execgate::daemon::runtime`; `TOKIO_WORKER_THREADS` set for the bench is passed on to
//! both, to compare runtime sizes). Latencies are reported as multiples of the baseline, throughput as multiples
//! of the single-stream rate, so runs on different machines compare.
//!
//! Reproduce with `cargo bench --bench daemon` (`cargo bench` runs this and the policy
//! bench); the numbers also go to `target/bench-daemon.json`. `-- --only BF` runs
//! those sections alone, after A (with `EXECGATE_BENCH_DAEMON`, to compare builds). `-- --quick` uses medium
//! counts. Without `--bench` on the command line, as `cargo test --benches` runs it, this
//! is a smoke pass: the same sections with tiny counts, checking behaviour only.
//!
//! This file is the plan and the run; each section has a file of its own (`baseline`,
//! `allowlisted`, `pending`, `startup`, `policy`, `flood`, `hook`, `mcp`, `chats` and `burst` for A to I), beside what they
//! share: `lab` (the temp dir and the daemons started in it), `client` (connections to
//! the daemon and its database, and the checks of its answers), `stats` (percentiles and
//! formatting), `machine` and `report` (the header, and the verdicts on the targets).

mod allowlisted;
mod audit;
mod baseline;
mod burst;
mod chats;
mod client;
mod flood;
mod hook;
mod lab;
mod machine;
mod mcp;
mod pending;
mod policy;
mod postgres;
mod report;
mod startup;
mod stats;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use hyper::body::Bytes;
use serde_json::json;

use crate::allowlisted::allowlisted;
use crate::audit::audit_cost;
use crate::baseline::{Baseline, baseline, trivial_server};
use crate::burst::burst;
use crate::chats::chats;
use crate::flood::flood;
use crate::hook::hook_cost;
use crate::lab::Lab;
use crate::machine::machine;
use crate::mcp::mcp_cost;
use crate::pending::pending;
use crate::policy::policy;
use crate::postgres::backends;
use crate::report::{Target, audit_target, print_header, print_targets, targets};
use crate::startup::history;

const REQUESTS: &str = "/v1/requests";
const ALLOWED: &str = "cargo build --release";
const JSON_OUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/bench-daemon.json");

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
    // `--only BF`: these sections alone (and A, which the others are ratios to), for
    // comparing two builds.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.to_uppercase());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // Every daemon guard is dropped (and its process killed) before this returns.
    let outcome = runtime.block_on(run(mode, only));
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
                hook_warmup: 20,
                hook_runs: 300,
                mcp_warmup: 50,
                mcp_runs: 1000,
                chat_requests: 52,
                burst_requests: 50,
                failover_trials: 10,
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
                hook_warmup: 5,
                hook_runs: 100,
                mcp_warmup: 10,
                mcp_runs: 200,
                chat_requests: 20,
                burst_requests: 50,
                failover_trials: 5,
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
                hook_warmup: 0,
                hook_runs: 3,
                mcp_warmup: 0,
                mcp_runs: 3,
                chat_requests: 4,
                burst_requests: 8,
                failover_trials: 2,
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
    /// Section G: spawns of each of the four processes, after the warm-up ones.
    hook_warmup: usize,
    hook_runs: usize,
    /// H: MCP calls (and as many straight to the socket), after the warm-up.
    mcp_warmup: usize,
    mcp_runs: usize,
    /// I: requests through the four chats, answered in each in turn (so a multiple of
    /// four), and as many round trips of each service.
    chat_requests: usize,
    /// I: requests in one burst, with digests and without.
    burst_requests: usize,
    /// J: leaders killed, one per trial.
    failover_trials: usize,
}

async fn run(mode: Mode, only: Option<String>) -> Result<()> {
    let plan = mode.plan();
    let mut lab = Lab::new()?;
    let machine = machine(lab.path());
    print_header(mode, &machine, lab.path());

    // The cwd an agent gives: without one, execgate cannot read the configuration cargo
    // would find there, and no rule approves it.
    let cwd = lab.path().canonicalize()?;
    let ask = Bytes::from(json!({"agent": "bench", "command": ALLOWED, "cwd": cwd}).to_string());
    let base = baseline(&lab, &plan, &ask).await?;
    base.print();

    if let Some(only) = only {
        return run_only(&only, &mut lab, &plan, &base, &ask).await;
    }

    let mut daemon = lab.start(&lab.daemon_db()).await?;
    let allowlisted = allowlisted(&lab, &daemon, &plan, &ask).await?;
    allowlisted.print(&plan, &base);
    let pending = pending(&lab, &mut daemon, &plan, allowlisted.answered).await?;
    pending.print(&base);
    // Stopped at the end of C; dropping it ends its notify listener.
    drop(daemon);
    let audit = audit_cost(&mut lab, &plan, &ask).await?;
    audit.print();

    let history = history(&mut lab, &plan).await?;
    history.print();

    let policy = policy(&lab, &plan, base.round_trip.p50);
    policy.print();

    let flood = flood(&mut lab, &plan).await?;
    flood.print();

    let hook = hook_cost(&mut lab, &plan).await?;
    hook.print();

    let mcp = mcp_cost(&mut lab, &plan).await?;
    mcp.print();

    let chats = chats(&mut lab, &plan).await?;
    chats.print(mode.judged());
    let burst = burst(&mut lab, &plan).await?;
    burst.print();

    let backends = backends(&mut lab, &plan, &ask).await?;
    backends.print();

    let mut targets = targets(
        &base,
        &allowlisted,
        &pending,
        &history,
        &flood,
        &hook,
        &backends,
    );
    targets.insert(2, audit_target(&audit));
    print_targets(mode, &targets);

    if mode == Mode::Full {
        let report = json!({
            "mode": mode.name(),
            "profile": profile(),
            "date": chrono::Utc::now().to_rfc3339(),
            "machine": machine.json(),
            "baseline": base.json(),
            "allowlisted": allowlisted.json(),
            "audit": audit.json(),
            "pending": pending.json(),
            "history": history.json(),
            "policy": policy.json(),
            "flood": flood.json(),
            "hook": hook.json(),
            "mcp": mcp.json(),
            "chats": chats.json(),
            "burst": burst.json(),
            "postgres": backends.json(),
            "targets": targets.iter().map(Target::json).collect::<Vec<_>>(),
        });
        std::fs::write(JSON_OUT, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("writing {JSON_OUT}"))?;
        println!("\nwritten to {JSON_OUT}");
    }
    Ok(())
}

/// Some sections only, in their usual order; no targets, no JSON.
async fn run_only(
    only: &str,
    lab: &mut Lab,
    plan: &Plan,
    base: &Baseline,
    ask: &Bytes,
) -> Result<()> {
    if only.contains('B') || only.contains('C') {
        let mut daemon = lab.start(&lab.daemon_db()).await?;
        let allowlisted = allowlisted(lab, &daemon, plan, ask).await?;
        allowlisted.print(plan, base);
        // C ends with the daemon stopped; B alone stops it here.
        if only.contains('C') {
            pending(lab, &mut daemon, plan, allowlisted.answered)
                .await?
                .print(base);
        } else {
            daemon.stop().await?;
        }
        if only.contains('B') {
            audit_cost(lab, plan, ask).await?.print();
        }
    }
    if only.contains('D') {
        history(lab, plan).await?.print();
    }
    if only.contains('E') {
        policy(lab, plan, base.round_trip.p50).print();
    }
    if only.contains('F') {
        flood(lab, plan).await?.print();
    }
    if only.contains('G') {
        hook_cost(lab, plan).await?.print();
    }
    if only.contains('H') {
        mcp_cost(lab, plan).await?.print();
    }
    if only.contains('I') {
        chats(lab, plan).await?.print(true);
        burst(lab, plan).await?.print();
    }
    if only.contains('J') {
        backends(lab, plan, ask).await?.print();
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
