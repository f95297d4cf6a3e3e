//! What nodes sharing one PostgreSQL database coordinate through, and nothing else:
//!
//! - notifications (`LISTEN execgate`): a request now pending, a request resolved, the
//!   allowlist changed, each sent by the transaction that made the change;
//! - heartbeats (`exec_node`), and the cancelling of a silent node's pending requests;
//! - the chat leader's lock: a session-level advisory lock held on a connection of its
//!   own, released by PostgreSQL when that connection ends, however it ends.

use std::time::Duration;

use sqlx_core::connection::Connection as _;
use sqlx_core::query::query;
use sqlx_core::row::Row as _;
use sqlx_postgres::{PgConnection, PgListener};

use super::{CHANNEL, PgStore};
use crate::store::StoreError;
use crate::store::audit::EntryKind;

/// The advisory lock whose holder runs the chat transports (an arbitrary constant of
/// execgate's, distinct from the migrations' lock).
const LEADER_LOCK: i64 = 0x6578_6563_6761_7402;

/// The first key of every node name's advisory lock (the second is the name's hash):
/// apart from the single-key locks above, whose first half is 0x65786563.
const NODE_LOCKS: i32 = 0x6578_6564;

/// How long a check of the leader's connection may take before leadership is given up.
const LEASE_CHECK_TIMEOUT: Duration = Duration::from_secs(3);

/// A change a node made, as heard on the channel: `"<kind> <node> [<id>]"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heard {
    /// The node whose transaction sent it (None for [`Notice::Reconnected`]).
    pub from: Option<String>,
    pub notice: Notice,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A request now waits for a human.
    Pending(String),
    /// A request left `pending`.
    Resolved(String),
    /// The allowlist changed.
    Rules,
    /// The listening connection was lost and made again: whatever was sent meanwhile is
    /// gone, so the listener must read the database afresh.
    Reconnected,
}

impl Heard {
    fn parse(payload: &str) -> Option<Heard> {
        let words: Vec<&str> = payload.split(' ').collect();
        let (notice, from) = match words[..] {
            ["pending", from, id] => (Notice::Pending(id.to_string()), from),
            ["resolved", from, id] => (Notice::Resolved(id.to_string()), from),
            ["rules", from] => (Notice::Rules, from),
            _ => return None,
        };
        Some(Heard {
            from: Some(from.to_string()),
            notice,
        })
    }
}

/// The node's listening connection.
pub struct Notices {
    listener: PgListener,
}

impl Notices {
    /// The next notice. An error means the database cannot be reached now; the caller
    /// waits and calls again (the listener reconnects by itself).
    pub async fn next(&mut self) -> Result<Heard, StoreError> {
        loop {
            match self.listener.try_recv().await? {
                Some(n) => match Heard::parse(n.payload()) {
                    Some(heard) => return Ok(heard),
                    None => tracing::warn!(payload = n.payload(), "unknown notification ignored"),
                },
                None => {
                    return Ok(Heard {
                        from: None,
                        notice: Notice::Reconnected,
                    });
                }
            }
        }
    }
}

/// The chat leader's lock, held for as long as this value lives and its connection does.
pub struct Lease {
    conn: PgConnection,
}

impl Lease {
    /// Whether the lock is still ours: its connection answers. A connection that does
    /// not (the database restarted, the network is cut) may already have lost the lock
    /// to another node, so the holder must stop acting as leader.
    pub async fn holds(&mut self) -> bool {
        let check = query("SELECT 1").fetch_one(&mut self.conn);
        matches!(
            tokio::time::timeout(LEASE_CHECK_TIMEOUT, check).await,
            Ok(Ok(_))
        )
    }

    /// Gives the lock up (closing its connection releases it too).
    pub async fn release(mut self) {
        let _ = query("SELECT pg_advisory_unlock($1)")
            .bind(LEADER_LOCK)
            .execute(&mut self.conn)
            .await;
        let _ = self.conn.close().await;
    }
}

impl PgStore {
    /// Starts listening for other nodes' changes.
    pub async fn notices(&self) -> Result<Notices, StoreError> {
        let mut listener = PgListener::connect_with(&self.pool).await?;
        listener.listen(CHANNEL).await?;
        Ok(Notices { listener })
    }

    /// Says that this node is alive (and registers it the first time).
    pub async fn heartbeat(&self) -> Result<(), StoreError> {
        query(
            "INSERT INTO exec_node (node, started_at, heartbeat_at, version) VALUES ($1, now(), now(), $2) \
             ON CONFLICT (node) DO UPDATE SET heartbeat_at = now(), version = excluded.version",
        )
        .bind(&*self.node)
        .bind(env!("CARGO_PKG_VERSION"))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Cancels (`via: restart`) the pending requests of every other node that has not
    /// heartbeated for `timeout`, by the database's clock: their agents are gone, or
    /// cannot hear an answer. Returns their ids.
    pub async fn cancel_silent_nodes(
        &self,
        timeout: Duration,
        error: &str,
    ) -> Result<Vec<String>, StoreError> {
        let sql = format!(
            "WITH alive AS (SELECT node FROM exec_node \
                 WHERE heartbeat_at > now() - make_interval(secs => $1)), \
             s AS (UPDATE exec_approval SET status = 'cancelled', decision = NULL, via = 'restart', \
                 decided_by = NULL, resolved_at = date_trunc('milliseconds', now()), error = $2, shown = true \
                 WHERE status = 'pending' AND node <> $3 AND node NOT IN (SELECT node FROM alive) \
                 RETURNING id) \
             SELECT s.id FROM s CROSS JOIN LATERAL pg_notify('{CHANNEL}', 'resolved ' || $3 || ' ' || s.id) AS n"
        );
        // Each cancellation is chained by this node, which made it, in the same
        // transaction (docs/audit.md).
        let scope = self.scope();
        let mut tx = super::chain::begin(&self.pool, &scope).await?;
        let rows = query(&sql)
            .bind(timeout.as_secs_f64())
            .bind(error)
            .bind(&*self.node)
            .fetch_all(&mut *tx)
            .await?;
        let ids = super::first_column(&rows)?;
        let now = chrono::Utc::now();
        for id in &ids {
            super::chain::append(&mut tx, &scope, EntryKind::Resolution, id, now).await?;
        }
        tx.commit().await?;
        Ok(ids)
    }

    /// A contender for the chat leader's lock; `failover` is how soon a leader cut off
    /// by the network must lose it.
    pub fn candidate(&self, failover: Duration) -> Candidate {
        Candidate {
            connect: self.probed(failover),
            conn: None,
        }
    }

    /// Options for a connection that holds a session lock: PostgreSQL probes it (TCP
    /// keepalives, and a check of the client while a query runs), so that the lock of a
    /// daemon cut off by the network or gone with its host is released within about
    /// `within` rather than TCP's hours. (A daemon whose process dies releases it at
    /// once: its socket closes.)
    fn probed(&self, within: Duration) -> sqlx_postgres::PgConnectOptions {
        let secs = within.as_secs().max(2);
        let (idle, interval) = ((secs / 2).to_string(), (secs / 4).max(1).to_string());
        let check = (secs * 1000 / 4).to_string();
        self.connect.clone().options([
            ("tcp_keepalives_idle", idle.as_str()),
            ("tcp_keepalives_interval", interval.as_str()),
            ("tcp_keepalives_count", "2"),
            ("client_connection_check_interval", check.as_str()),
        ])
    }

    /// Takes this node's name for as long as the returned connection lives: a second
    /// daemon started with the same `node` would take the first one's requests for its
    /// own last run's, and cancel them. None: another running daemon has the name.
    /// Its connection is probed like the leader's (`within`), so that the name of a
    /// host gone without a word is free again by the time it could restart.
    pub async fn claim_node(&self, within: Duration) -> Result<Option<NodeClaim>, StoreError> {
        let mut conn = PgConnection::connect_with(&self.probed(within)).await?;
        let won: bool = query("SELECT pg_try_advisory_lock($1, hashtext($2))")
            .bind(NODE_LOCKS)
            .bind(&*self.node)
            .fetch_one(&mut conn)
            .await?
            .try_get(0)?;
        Ok(won.then_some(NodeClaim { _conn: conn }))
    }
}

/// This daemon's hold on its node name (see [`PgStore::claim_node`]).
pub struct NodeClaim {
    _conn: PgConnection,
}

/// A node that would lead: it keeps one connection between tries.
pub struct Candidate {
    connect: sqlx_postgres::PgConnectOptions,
    conn: Option<PgConnection>,
}

impl Candidate {
    /// Takes the chat leader's lock if nobody holds it; the lease then owns the
    /// connection, and the next try opens another.
    pub async fn try_lead(&mut self) -> Result<Option<Lease>, StoreError> {
        let mut conn = match self.conn.take() {
            Some(conn) => conn,
            None => PgConnection::connect_with(&self.connect).await?,
        };
        let won: bool = query("SELECT pg_try_advisory_lock($1)")
            .bind(LEADER_LOCK)
            .fetch_one(&mut conn)
            .await?
            .try_get(0)?;
        if won {
            return Ok(Some(Lease { conn }));
        }
        // Kept for the next try; a connection that failed is dropped by the `?` above.
        self.conn = Some(conn);
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_read_back_what_the_store_sends() {
        let heard = |notice, from: &str| {
            Some(Heard {
                from: Some(from.into()),
                notice,
            })
        };
        assert_eq!(
            Heard::parse("pending a abc"),
            heard(Notice::Pending("abc".into()), "a")
        );
        assert_eq!(
            Heard::parse("resolved b-1 abc"),
            heard(Notice::Resolved("abc".into()), "b-1")
        );
        assert_eq!(Heard::parse("rules c"), heard(Notice::Rules, "c"));
        for unknown in ["rules", "pending abc", "approved a abc", "rules a b c", ""] {
            assert_eq!(Heard::parse(unknown), None, "{unknown}");
        }
    }
}
