//! C. Many pending approvals: the daemon's memory, resolving some one at a time, and a
//! SIGTERM that cancels the rest.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use hyper::StatusCode;
use hyper::body::Bytes;
use serde_json::{Value, json};

use crate::baseline::Baseline;
use crate::client::{Conn, Tally, close_db, expect, open_db};
use crate::lab::{Daemon, Lab, Memory};
use crate::stats::{Stats, count, mib, ms, ratio, show, times};
use crate::{Plan, REQUESTS};

/// Connections submitting the pending requests of section C.
const SUBMITTERS: usize = 64;

pub struct Pending {
    pub count: usize,
    submit: Stats,
    submit_time: Duration,
    before: Memory,
    pub with_pending: Memory,
    resolve: Stats,
    after_resolve: Memory,
    left: usize,
    shutdown: Duration,
}

impl Pending {
    fn per_request(&self) -> f64 {
        self.with_pending.rss.saturating_sub(self.before.rss) as f64 / self.count as f64
    }

    pub fn print(&self, base: &Baseline) {
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

    pub fn json(&self) -> Value {
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

pub async fn pending(
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
    check_rows(&lab.daemon_db(), &want)?;
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
fn check_rows(database: &Path, want: &BTreeMap<(String, String), usize>) -> Result<()> {
    let db = open_db(database)?;
    let rows: Vec<(String, String, i64)> = db
        .prepare("SELECT status, ifnull(via, ''), count(*) FROM exec_approval GROUP BY 1, 2")?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<Result<_, _>>()?;
    close_db(db)?;
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
