//! `node` and `[cluster]`: what a daemon sharing a PostgreSQL database with others
//! calls itself, and how the nodes watch each other (docs/cluster.md). Read only with
//! `database = "postgres://…"`; harmless otherwise.

use serde::Deserialize;

use super::ConfigError;

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClusterConfig {
    /// How soon a leader cut off from the database loses the lead, so that another node
    /// runs the chats: PostgreSQL probes the lock's connection at this pace, and the
    /// leader checks it too. (A leader whose process dies loses it at once; the others
    /// try for it every quarter of this, at most every second.) Default: 10.
    pub failover_secs: u64,
    /// How long a node may go without a heartbeat before the leader cancels its pending
    /// requests. Default: 30.
    pub node_timeout_secs: u64,
    /// How often each node heartbeats. Default: 2.
    pub heartbeat_secs: u64,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self {
            failover_secs: 10,
            node_timeout_secs: 30,
            heartbeat_secs: 2,
        }
    }
}

impl ClusterConfig {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |m: String| Err(ConfigError::Invalid(m));
        if self.heartbeat_secs == 0 || self.failover_secs == 0 {
            return invalid(
                "`cluster.heartbeat_secs` and `cluster.failover_secs` must be at least 1".into(),
            );
        }
        // A node late by one beat must not be taken for dead.
        if self.node_timeout_secs < 3 * self.heartbeat_secs {
            return invalid(format!(
                "`cluster.node_timeout_secs` ({}) must be at least three heartbeats (3 × `cluster.heartbeat_secs` = {})",
                self.node_timeout_secs,
                3 * self.heartbeat_secs
            ));
        }
        Ok(())
    }
}

/// A node's name: 1 to 63 letters, digits, `.`, `_` or `-` (a host name fits), so that it
/// reads the same in every log, row and chat message.
pub(super) fn check_node(name: &str) -> Result<(), ConfigError> {
    let fits = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    match fits {
        true => Ok(()),
        false => Err(ConfigError::Invalid(format!(
            "`node` {name:?} must be 1 to 63 letters, digits, '.', '_' or '-'"
        ))),
    }
}

/// The host name, the default `node`: the kernel's, else `localhost`.
pub(super) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| check_node(h).is_ok())
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_are_plain_words() {
        for good in ["build-1", "ci.example.org", "a", "box_2"] {
            assert!(check_node(good).is_ok(), "{good}");
        }
        for bad in ["", "a b", "x/y", "naïve", &"n".repeat(64), "a\nb"] {
            assert!(check_node(bad).is_err(), "{bad:?}");
        }
        assert!(check_node(&host_name()).is_ok());
    }

    #[test]
    fn a_node_is_not_dead_for_missing_one_beat() {
        let c = ClusterConfig {
            node_timeout_secs: 5,
            heartbeat_secs: 2,
            ..ClusterConfig::default()
        };
        assert!(c.validate().is_err());
        assert!(ClusterConfig::default().validate().is_ok());
    }
}
