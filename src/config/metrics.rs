//! `[metrics]`: whether the daemon counts, and where Prometheus may scrape it besides
//! the admin socket (docs/metrics.md).

use std::net::SocketAddr;

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Count, and serve `/metrics` on the admin socket. False: no endpoint anywhere, and
    /// nothing is recorded. Default: true. A change needs a restart.
    pub enabled: bool,
    /// A TCP address (`127.0.0.1:9187`) that serves `/metrics` and nothing else, to
    /// anyone who connects: counts only, never a command, an id or an agent's name.
    /// Unset: the admin socket only. Default: unset. A change needs a restart.
    pub listen: Option<SocketAddr>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            listen: None,
        }
    }
}
