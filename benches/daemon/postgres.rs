//! J. PostgreSQL beside SQLite: allowlisted decisions at concurrency 1 and 64 on each
//! store in this run (a real PostgreSQL on a local socket, `synchronous_commit=on`, the
//! test suite's server), and the chats' failover: the leader killed with SIGKILL, to the
//! next request's message posted by the node that takes over, over several trials.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use execgate_testkit::fake_telegram::{FakeTelegram, User};
use execgate_testkit::postgres::PgServer;
use hyper::StatusCode;
use hyper::body::Bytes;
use serde_json::{Value, json};

use crate::Plan;
use crate::allowlisted::{level, rule_and_first_answer};
use crate::client::Conn;
use crate::lab::{Daemon, Lab};
use crate::stats::{Stats, ms, ratio, show, times};

const TOKEN: &str = "7000000003:AAbench-token-for-the-fake-bot-api";
/// How long a trial waits for the next leader's message before it counts as failed.
const FAILOVER_LIMIT: Duration = Duration::from_secs(30);
/// The nodes run with the default `cluster.failover_secs`.
const DEFAULT_FAILOVER_SECS: u64 = 10;
/// The single-stream target: PostgreSQL's p50 at most this many times SQLite's.
pub const TARGET_P50_RATIO: f64 = 2.0;

pub struct Backends {
    pub sqlite: [Stats; 2],
    pub postgres: [Stats; 2],
    rps: [[f64; 2]; 2],
    pub failover: Stats,
    failover_config: u64,
}

impl Backends {
    pub fn p50_ratio(&self) -> f64 {
        ratio(self.postgres[0].p50, self.sqlite[0].p50)
    }

    pub fn print(&self) {
        println!("\nJ. PostgreSQL beside SQLite (allowlisted decisions), and the chats' failover");
        println!(
            "  {:>10}{:>6}{:>11}{:>11}{:>10}",
            "store", "conc", "p50", "p99", "req/s"
        );
        for (name, stats, rps) in [
            ("SQLite", &self.sqlite, self.rps[0]),
            ("PostgreSQL", &self.postgres, self.rps[1]),
        ] {
            for (i, conc) in [1, 64].into_iter().enumerate() {
                println!(
                    "  {:>10}{:>6}{:>11}{:>11}{:>10.0}",
                    name,
                    conc,
                    show(stats[i].p50),
                    show(stats[i].p99),
                    rps[i]
                );
            }
        }
        println!(
            "  PostgreSQL / SQLite: p50 c=1 {}, p50 c=64 {}, req/s c=64 {}",
            times(self.p50_ratio()),
            times(ratio(self.postgres[1].p50, self.sqlite[1].p50)),
            times(self.rps[1][1] / self.rps[0][1]),
        );
        println!(
            "  failover (leader SIGKILLed → next request posted by another node), {} trials, cluster.failover_secs = {}: {}",
            self.failover.n,
            self.failover_config,
            self.failover.row()
        );
    }

    pub fn json(&self) -> Value {
        json!({
            "sqlite": {"c1": self.sqlite[0].json(), "c64": self.sqlite[1].json(),
                       "rps_c1": self.rps[0][0], "rps_c64": self.rps[0][1]},
            "postgres": {"c1": self.postgres[0].json(), "c64": self.postgres[1].json(),
                         "rps_c1": self.rps[1][0], "rps_c64": self.rps[1][1]},
            "p50_c1_ratio": self.p50_ratio(),
            "failover_ms": self.failover.json(),
            "failover_p50_ms": ms(self.failover.p50),
            "failover_secs_configured": self.failover_config,
        })
    }
}

pub async fn backends(lab: &mut Lab, plan: &Plan, ask: &Bytes) -> Result<Backends> {
    let server = PgServer::start();
    let sqlite = decisions(lab, plan, ask, None).await?;
    let url = server.create_database();
    let postgres = decisions(lab, plan, ask, Some(&url)).await?;
    let (failover, failover_config) = failover(lab, &server, plan).await?;
    Ok(Backends {
        sqlite: sqlite.0,
        postgres: postgres.0,
        rps: [sqlite.1, postgres.1],
        failover,
        failover_config,
    })
}

/// Allowlisted decisions at c=1 and c=64 on one daemon: on SQLite (a fresh file), or on
/// the PostgreSQL database `url`.
async fn decisions(
    lab: &mut Lab,
    plan: &Plan,
    ask: &Bytes,
    url: Option<&str>,
) -> Result<([Stats; 2], [f64; 2])> {
    let name = if url.is_some() { "pg" } else { "sqlite" };
    let file = lab.path().join(format!("state/{name}.db"));
    let extra: Vec<(&str, &str)> = url.map(|u| ("EXECGATE_DATABASE", u)).into_iter().collect();
    let mut daemon = lab.start_with(&file, &extra).await?;
    rule_and_first_answer(lab, ask).await?;
    let mut stats = Vec::new();
    let mut rps = [0.0; 2];
    for (i, concurrency) in [1, 64].into_iter().enumerate() {
        let (samples, tally) = level(
            &lab.agent_socket(),
            concurrency,
            plan.level_warmup,
            plan.level,
            ask,
        )
        .await?;
        tally.check(&format!("allowlisted requests on {name}"))?;
        let s = Stats::of(samples)?;
        rps[i] = s.n as f64 / plan.level.as_secs_f64();
        stats.push(s);
    }
    daemon.stop().await?;
    let [a, b]: [Stats; 2] = stats.try_into().ok().context("two levels")?;
    Ok(([a, b], rps))
}

/// One node of the failover trials: its own sockets and home (the lock file, the page's
/// token), the shared database, the fake Telegram.
async fn node(
    lab: &mut Lab,
    i: usize,
    url: &str,
    telegram: &[(&str, &str)],
) -> Result<(Daemon, std::path::PathBuf)> {
    let home = lab.path().join(format!("node-{i}"));
    std::fs::create_dir_all(home.join("run"))?;
    let socket = home.join("run/agent.sock");
    let admin = home.join("run/admin.sock");
    let (socket_s, admin_s, home_s) = (
        socket.display().to_string(),
        admin.display().to_string(),
        home.display().to_string(),
    );
    let name = format!("node-{i}");
    let mut env: Vec<(&str, &str)> = vec![
        ("HOME", home_s.as_str()),
        ("EXECGATE_SOCKET", socket_s.as_str()),
        ("EXECGATE_ADMIN_SOCKET", admin_s.as_str()),
        ("EXECGATE_DATABASE", url),
        ("EXECGATE_NODE", name.as_str()),
    ];
    env.extend_from_slice(telegram);
    let daemon = lab.start_with(&home.join("unused.db"), &env).await?;
    Ok((daemon, socket))
}

/// Trials: a leader and a follower run; the leader is killed; a request is asked on the
/// follower, timed until its message is posted. The follower then leads, and a new node
/// joins as the next trial's follower.
async fn failover(lab: &mut Lab, server: &PgServer, plan: &Plan) -> Result<(Stats, u64)> {
    let fake = FakeTelegram::start(TOKEN).await;
    let owner = User::owner().id.to_string();
    let url_fake = fake.url();
    let telegram = [
        ("EXECGATE_TELEGRAM__BOT_TOKEN", TOKEN),
        ("EXECGATE_TELEGRAM__OWNER_IDS", owner.as_str()),
        ("EXECGATE_TELEGRAM__API_URL", url_fake.as_str()),
    ];
    let chat = User::owner().id;
    let url = server.create_database();
    let (mut leader, _) = node(lab, 0, &url, &telegram).await?;
    // It leads once it polls the Bot API.
    fake.wait_for_call("getUpdates", 1).await;
    let mut samples = Vec::new();
    for trial in 1..=plan.failover_trials {
        let (follower, socket) = node(lab, trial, &url, &telegram).await?;
        let command = format!("make failover-{trial}");
        leader.kill();
        let killed = Instant::now();
        let body =
            Bytes::from(json!({"agent": "bench", "command": command, "wait": false}).to_string());
        let (status, answer) = Conn::open(&socket)
            .await?
            .post(crate::REQUESTS, body)
            .await?;
        ensure!(
            status == StatusCode::ACCEPTED,
            "trial {trial}: {status} {answer:?}"
        );
        let posted = tokio::time::timeout(FAILOVER_LIMIT, async {
            loop {
                if fake
                    .messages(chat)
                    .iter()
                    .any(|m| m.plain.contains(&command))
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        ensure!(
            posted.is_ok(),
            "trial {trial}: no message within {FAILOVER_LIMIT:?} of the leader's death"
        );
        samples.push(killed.elapsed());
        leader = follower;
    }
    leader.stop().await?;
    Ok((Stats::of(samples)?, DEFAULT_FAILOVER_SECS))
}
