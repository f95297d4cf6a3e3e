//! What the daemon counts, for Prometheus (docs/metrics.md): one [`Metrics`] per daemon,
//! its families registered once, shared as an `Arc` by what records into it (approvals,
//! the chats, the run queue, the store's writer) and read by `/metrics`; and (`traces`),
//! when a collector is configured, a span per request.
//!
//! Every label value is a `&'static str`: one of a fixed set the code names, never text
//! from a request, an agent or a chat. So no series can grow without bound, and nothing
//! an agent wrote reaches a scrape. Off (`metrics.enabled = false`), nothing is
//! registered and each record is one branch.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

mod traces;

pub use traces::{RequestSpan, Traces};

/// The content type of [`Metrics::render`]'s text: OpenMetrics, which Prometheus asks for
/// first and reads natively.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type Labels<const N: usize> = [(&'static str, &'static str); N];
type Histograms<const N: usize> = Family<Labels<N>, Histogram, fn() -> Histogram>;

/// The daemon's series, inert when metrics are off; and its spans, when traces are on.
pub struct Metrics {
    on: Option<Box<Families>>,
    traces: Option<Traces>,
}

struct Families {
    registry: Registry,
    requests: Family<Labels<4>, Counter>,
    answer: Histograms<1>,
    pending: Gauge,
    chat_deliveries: Family<Labels<1>, Counter>,
    chat_failures: Family<Labels<1>, Counter>,
    chat_retries: Family<Labels<1>, Counter>,
    analysis: Histogram,
    runs: Family<Labels<1>, Counter>,
    kernel_refusals: Counter,
    store_commit: Histogram,
    cluster_leader: Gauge,
}

/// How long an owner takes to answer: seconds to an hour (`approval.timeout_secs` is
/// 120 by default, and may be set far longer).
fn answer_buckets() -> Histogram {
    Histogram::new([
        1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
    ])
}

/// Policy's analysis: tens of microseconds for a plain command, up to seconds for one
/// whose scripts and repository it reads.
const ANALYSIS_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5,
];

/// A commit: a fraction of a millisecond without a flush, tens with one, seconds when
/// the disk or the database server stalls.
const COMMIT_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5,
];

impl Metrics {
    /// Counting when `counting`, and sending spans to `traces` when given.
    pub fn new(counting: bool, traces: Option<Traces>) -> Arc<Metrics> {
        let on = match counting {
            true => Metrics::on().on,
            false => None,
        };
        Arc::new(Metrics { on, traces })
    }

    /// Every family registered, at zero.
    fn on() -> Metrics {
        let mut registry = Registry::with_prefix("execgate");
        registry.register(
            "build",
            "The execgate version running",
            Info::new([("version", env!("CARGO_PKG_VERSION"))]),
        );
        let mut f = Families {
            requests: Family::default(),
            answer: Family::new_with_constructor(answer_buckets as fn() -> Histogram),
            pending: Gauge::default(),
            chat_deliveries: Family::default(),
            chat_failures: Family::default(),
            chat_retries: Family::default(),
            analysis: Histogram::new(ANALYSIS_BUCKETS),
            runs: Family::default(),
            kernel_refusals: Counter::default(),
            store_commit: Histogram::new(COMMIT_BUCKETS),
            cluster_leader: Gauge::default(),
            registry,
        };
        let r = &mut f.registry;
        r.register(
            "requests",
            "Requests that reached their final status on this node, by that status, how it was decided, their risk and the front they came through",
            f.requests.clone(),
        );
        r.register_with_unit(
            "answer",
            "How long a human took to answer a request, from its creation to the answer",
            Unit::Seconds,
            f.answer.clone(),
        );
        r.register(
            "pending_requests",
            "Requests waiting for a human on this node now",
            f.pending.clone(),
        );
        r.register(
            "chat_deliveries",
            "Requests whose message reached a chat (alone or in a digest)",
            f.chat_deliveries.clone(),
        );
        r.register(
            "chat_failures",
            "Calls to a chat service that failed",
            f.chat_failures.clone(),
        );
        r.register(
            "chat_retries",
            "Calls to a chat service tried again after a failure, once the backoff was waited out",
            f.chat_retries.clone(),
        );
        r.register_with_unit(
            "analysis",
            "How long policy took to judge a request",
            Unit::Seconds,
            f.analysis.clone(),
        );
        r.register(
            "runs",
            "Approved commands run mode finished, by how they ended",
            f.runs.clone(),
        );
        r.register(
            "kernel_refusals",
            "Runs whose confined command reported that the kernel refused it something",
            f.kernel_refusals.clone(),
        );
        r.register_with_unit(
            "store_commit",
            "How long one commit to the database took (a SQLite group commit, a PostgreSQL write transaction)",
            Unit::Seconds,
            f.store_commit.clone(),
        );
        r.register(
            "cluster_leader",
            "1 while this node holds the chat leader's lock on a shared database, else 0",
            f.cluster_leader.clone(),
        );
        Metrics {
            on: Some(Box::new(f)),
            traces: None,
        }
    }

    /// Records nothing and serves nothing: `metrics.enabled = false`, and tests that do
    /// not look.
    pub fn off() -> Arc<Metrics> {
        Arc::new(Metrics {
            on: None,
            traces: None,
        })
    }

    /// A request reached its final status: its span, when traces are on.
    pub fn span<'a>(&self, span: impl FnOnce() -> RequestSpan<'a>) {
        if let Some(t) = &self.traces {
            t.request(span());
        }
    }

    /// Sends the spans still batched (blocks until the collector answers or the
    /// exporter's timeout passes): at shutdown.
    pub fn flush(&self) {
        if let Some(t) = &self.traces {
            t.shutdown();
        }
    }

    pub fn is_on(&self) -> bool {
        self.on.is_some()
    }

    /// The exposition, from memory: a scrape waits on nothing but these atomics. None
    /// when metrics are off.
    pub fn render(&self) -> Option<String> {
        let f = self.on.as_ref()?;
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut text, &f.registry);
        Some(text)
    }

    /// A request reached its final `status` (`approved`, `denied`, …), decided `via`.
    pub fn request(
        &self,
        status: &'static str,
        via: &'static str,
        risk: &'static str,
        front: &'static str,
    ) {
        if let Some(f) = &self.on {
            f.requests
                .get_or_create(&[
                    ("verdict", status),
                    ("via", via),
                    ("risk", risk),
                    ("front", front),
                ])
                .inc();
        }
    }

    /// A human answered, `waited` after the request was made.
    pub fn answered(&self, via: &'static str, waited: Duration) {
        if let Some(f) = &self.on {
            f.answer
                .get_or_create(&[("via", via)])
                .observe(waited.as_secs_f64());
        }
    }

    /// How many requests wait for a human here now.
    pub fn pending(&self, count: usize) {
        if let Some(f) = &self.on {
            f.pending.set(count as i64);
        }
    }

    pub fn analysed(&self, took: Duration) {
        if let Some(f) = &self.on {
            f.analysis.observe(took.as_secs_f64());
        }
    }

    /// A run finished: `outcome` is how (`exited`, `signalled`, `timed_out`, …), and
    /// `kernel_refused` whether the kernel refused it something.
    pub fn ran(&self, outcome: &'static str, kernel_refused: bool) {
        if let Some(f) = &self.on {
            f.runs.get_or_create(&[("outcome", outcome)]).inc();
            if kernel_refused {
                f.kernel_refusals.inc();
            }
        }
    }

    pub fn committed(&self, took: Duration) {
        if let Some(f) = &self.on {
            f.store_commit.observe(took.as_secs_f64());
        }
    }

    pub fn leading(&self, leads: bool) {
        if let Some(f) = &self.on {
            f.cluster_leader.set(i64::from(leads));
        }
    }

    /// The counters of one chat (`telegram`, `matrix`, …), looked up once: its
    /// transport records without touching the family's map again.
    pub fn chat(&self, chat: &'static str) -> ChatCounters {
        ChatCounters(self.on.as_ref().map(|f| {
            let labels = [("chat", chat)];
            [
                f.chat_deliveries.get_or_create(&labels).clone(),
                f.chat_failures.get_or_create(&labels).clone(),
                f.chat_retries.get_or_create(&labels).clone(),
            ]
        }))
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Metrics({})", if self.is_on() { "on" } else { "off" })
    }
}

/// One chat's deliveries, failures and retries; all inert when metrics are off.
#[derive(Clone, Debug, Default)]
pub struct ChatCounters(Option<[Counter; 3]>);

impl ChatCounters {
    pub fn delivered(&self) {
        if let Some(c) = &self.0 {
            c[0].inc();
        }
    }

    pub fn failed(&self) {
        if let Some(c) = &self.0 {
            c[1].inc();
        }
    }

    pub fn retried(&self) {
        if let Some(c) = &self.0 {
            c[2].inc();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_is_exposed_with_its_conventional_name() {
        let m = Metrics::on();
        m.request("approved", "allowlist", "safe", "cli");
        m.answered("cli", Duration::from_secs(3));
        m.pending(2);
        m.analysed(Duration::from_micros(300));
        m.ran("exited", true);
        m.committed(Duration::from_millis(2));
        m.leading(true);
        let chat = m.chat("telegram");
        chat.delivered();
        chat.failed();
        chat.retried();
        let text = m.render().unwrap();
        for line in [
            "execgate_requests_total{verdict=\"approved\",via=\"allowlist\",risk=\"safe\",front=\"cli\"} 1",
            "execgate_answer_seconds_count{via=\"cli\"} 1",
            "execgate_pending_requests 2",
            "execgate_chat_deliveries_total{chat=\"telegram\"} 1",
            "execgate_chat_failures_total{chat=\"telegram\"} 1",
            "execgate_chat_retries_total{chat=\"telegram\"} 1",
            "execgate_analysis_seconds_count 1",
            "execgate_runs_total{outcome=\"exited\"} 1",
            "execgate_kernel_refusals_total 1",
            "execgate_store_commit_seconds_count 1",
            "execgate_cluster_leader 1",
            &format!(
                "execgate_build_info{{version=\"{}\"}} 1",
                env!("CARGO_PKG_VERSION")
            ),
            "# EOF",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in:\n{text}"
            );
        }
    }

    #[test]
    fn off_records_and_renders_nothing() {
        let m = Metrics::off();
        m.request("approved", "policy", "safe", "api");
        m.chat("slack").delivered();
        assert!(m.render().is_none());
        assert!(!m.is_on());
    }
}
