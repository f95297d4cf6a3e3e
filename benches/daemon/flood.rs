//! F. The owner under a flood: commands as costly to analyse as execgate allows (the
//! tests' `heavy_command`), from the tests' hostile agent on uid 65534 when run as root.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use execgate_testkit::heavy::heavy_command;
use execgate_testkit::uid;
use hyper::StatusCode;
use hyper::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::client::{Conn, expect};
use crate::lab::Lab;
use crate::stats::{Stats, ratio, times};
use crate::{Plan, REQUESTS};

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

pub struct Flood {
    /// Whether the flood ran on its own uid (the bench ran as root).
    pub second_uid: bool,
    admin_quiet: Stats,
    admin_flooded: Stats,
    other_quiet: Stats,
    other_flooded: Stats,
    /// The owner's requests that took longer than `SAMPLE_TIMEOUT` (none may).
    pub timeouts: usize,
    /// Flood requests answered while the owner's were measured.
    flood_answered: usize,
    connections: usize,
}

impl Flood {
    pub fn admin_ratio(&self) -> f64 {
        ratio(self.admin_flooded.p99, self.admin_quiet.p99)
    }

    pub fn print(&self) {
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

    pub fn json(&self) -> Value {
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

pub async fn flood(lab: &mut Lab, plan: &Plan) -> Result<Flood> {
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
