//! Daemons on many hosts sharing one PostgreSQL database, acting as one (docs/cluster.md).
//! PostgreSQL is the only coordinator; nothing here trusts a node's memory of another.
//!
//! Every node:
//! - heartbeats (`cluster.heartbeat_secs`);
//! - listens for the changes other nodes commit: a request put to a human, a request
//!   resolved (its waiting agent, or the leader's message, hears of it), the allowlist
//!   changed (the compiled rules follow); and, since a notification sent while the
//!   listener was away is lost, reads the database afresh after every reconnection and
//!   every few seconds besides.
//!
//! One node at a time, the holder of the leader's lock, runs the chat transports (the
//! daemon starts and stops them around [`Cluster::lead`] and [`Cluster::keep`]) and
//! cancels the pending requests of nodes silent for `cluster.node_timeout_secs`. Every
//! node contends for it, with chats configured or not, so that silent nodes are swept
//! either way.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::approvals::Approvals;
use crate::config::ClusterConfig;
use crate::shutdown::Shutdown;
use crate::store::postgres::PgStore;
use crate::store::postgres::cluster::{Heard, Lease, Notice};

/// How often a node reads the database afresh even when every notification arrived: the
/// bound on how long a lost one could go unnoticed.
const RESYNC_EVERY: Duration = Duration::from_secs(5);

/// How long a node waits before retrying the database after a failure.
const RETRY: Duration = Duration::from_secs(1);

/// What a silent node's pending requests end with.
pub const SILENT_NODE_ERROR: &str =
    "command was not approved (cancelled): the execgate node that took it stopped answering";

#[derive(Clone)]
pub struct Cluster {
    approvals: Arc<Approvals>,
    pg: PgStore,
    node: String,
    config: ClusterConfig,
}

impl Cluster {
    /// The cluster this daemon is a node of; None on SQLite (one daemon, nothing to share).
    pub fn of(
        approvals: &Arc<Approvals>,
        store: &crate::store::Store,
        config: &ClusterConfig,
    ) -> Option<Cluster> {
        let pg = store.shared()?.clone();
        Some(Cluster {
            approvals: Arc::clone(approvals),
            node: store.node().to_string(),
            pg,
            config: config.clone(),
        })
    }

    /// Says once that this node is alive: before it sweeps its last run's requests and
    /// serves, so that the leader does not take it for a dead node.
    pub async fn register(&self) -> Result<(), crate::store::StoreError> {
        self.pg.heartbeat().await
    }

    /// Starts the heartbeat and the listener; both end at shutdown.
    pub fn spawn(&self, shutdown: &Shutdown) -> Vec<JoinHandle<()>> {
        vec![
            tokio::spawn(self.clone().heartbeats(shutdown.clone())),
            tokio::spawn(self.clone().listen(shutdown.clone())),
        ]
    }

    async fn heartbeats(self, mut shutdown: Shutdown) {
        let mut every = tokio::time::interval(Duration::from_secs(self.config.heartbeat_secs));
        let mut failing = false;
        loop {
            tokio::select! {
                _ = shutdown.recv() => return,
                _ = every.tick() => {}
            }
            match self.pg.heartbeat().await {
                Ok(()) if failing => {
                    failing = false;
                    tracing::info!("the database answers again: heartbeats resumed");
                }
                Ok(()) => {}
                Err(e) if !failing => {
                    failing = true;
                    tracing::error!(error = %e, "cannot heartbeat: after cluster.node_timeout_secs the leader cancels this node's pending requests");
                }
                Err(_) => {}
            }
        }
    }

    async fn listen(self, mut shutdown: Shutdown) {
        loop {
            let mut notices = match self.pg.notices().await {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for other nodes' changes; retrying");
                    tokio::select! {
                        _ = shutdown.recv() => return,
                        _ = tokio::time::sleep(RETRY) => continue,
                    }
                }
            };
            // Whatever changed before the listening began.
            self.resync().await;
            let mut resync = tokio::time::interval(RESYNC_EVERY);
            resync.tick().await;
            loop {
                let heard = tokio::select! {
                    _ = shutdown.recv() => return,
                    _ = resync.tick() => {
                        self.resync().await;
                        continue;
                    }
                    heard = notices.next() => heard,
                };
                match heard {
                    Ok(heard) => self.heard(heard).await,
                    Err(e) => {
                        tracing::warn!(error = %e, "lost the connection that listens for other nodes' changes; reconnecting");
                        tokio::select! {
                            _ = shutdown.recv() => return,
                            _ = tokio::time::sleep(RETRY) => break,
                        }
                    }
                }
            }
        }
    }

    async fn heard(&self, heard: Heard) {
        // This node's own changes were acted on when it made them.
        if heard.from.as_deref() == Some(self.node.as_str()) {
            return;
        }
        let result = match &heard.notice {
            Notice::Pending(id) => self.approvals.heard_pending(id).await,
            Notice::Resolved(id) => self.approvals.heard_resolved(id).await,
            Notice::Rules => self.approvals.heard_rules().await,
            Notice::Reconnected => {
                self.resync().await;
                Ok(())
            }
        };
        if let Err(e) = result {
            // The next resync reads it again.
            tracing::warn!(error = %e, notice = ?heard.notice, "cannot act on another node's change yet");
        }
    }

    async fn resync(&self) {
        if let Err(e) = self.approvals.resync().await {
            tracing::debug!(error = %e, "cannot read the database afresh; trying again shortly");
        }
    }

    /// Waits until this node holds the chat leader's lock; None at shutdown.
    pub async fn lead(&self, shutdown: &mut Shutdown) -> Option<Lease> {
        let mut failing = false;
        let mut candidate = self
            .pg
            .candidate(Duration::from_secs(self.config.failover_secs));
        loop {
            match candidate.try_lead().await {
                Ok(Some(lease)) => {
                    tracing::info!(node = %self.node, "this node now runs the chats");
                    return Some(lease);
                }
                Ok(None) => failing = false,
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!(error = %e, "cannot try for the chat leader's lock; retrying");
                }
                Err(_) => {}
            }
            tokio::select! {
                _ = shutdown.recv() => return None,
                _ = tokio::time::sleep(self.poll()) => {}
            }
        }
    }

    /// While this node leads: checks that the lock is still held and cancels silent
    /// nodes' requests. Returns true when the lock may be lost (stop the chats at once:
    /// another node may run them already), false at shutdown.
    pub async fn keep(&self, lease: &mut Lease, shutdown: &mut Shutdown) -> bool {
        let mut check = tokio::time::interval(self.poll());
        // Not at once: a leader just elected may come out of a database outage with every
        // node, whose heartbeats failed meanwhile too; each beats again within one period.
        let beat = Duration::from_secs(self.config.heartbeat_secs);
        let mut sweep = tokio::time::interval_at(tokio::time::Instant::now() + 2 * beat, beat);
        loop {
            tokio::select! {
                _ = shutdown.recv() => return false,
                _ = check.tick() => {
                    if !lease.holds().await {
                        tracing::error!(node = %self.node, "lost the database connection that holds the chat leader's lock: stopping the chats");
                        return true;
                    }
                }
                _ = sweep.tick() => self.cancel_silent_nodes().await,
            }
        }
    }

    async fn cancel_silent_nodes(&self) {
        let timeout = Duration::from_secs(self.config.node_timeout_secs);
        match self
            .pg
            .cancel_silent_nodes(timeout, SILENT_NODE_ERROR)
            .await
        {
            Ok(ids) => {
                if !ids.is_empty() {
                    tracing::warn!(
                        count = ids.len(),
                        "cancelled the pending requests of nodes silent for cluster.node_timeout_secs"
                    );
                }
                for id in ids {
                    if let Err(e) = self.approvals.heard_resolved(&id).await {
                        tracing::warn!(%id, error = %e, "cannot close a silent node's request here yet");
                    }
                }
            }
            Err(e) => tracing::debug!(error = %e, "cannot check for silent nodes"),
        }
    }

    /// How often a follower tries for the lock and a leader checks it: well within
    /// `cluster.failover_secs`.
    fn poll(&self) -> Duration {
        Duration::from_millis((self.config.failover_secs * 1000 / 4).clamp(100, 1000))
    }
}
