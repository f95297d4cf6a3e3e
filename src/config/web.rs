//! `[web]`: where the approvals page listens (docs/web.md). Unset: no page.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebConfig {
    /// The address the approvals page listens on, `127.0.0.1:8787`. Unset: no page
    /// (`execgate serve --web` sets [`WebConfig::DEFAULT_LISTEN`] then). A change needs
    /// a restart.
    pub listen: Option<SocketAddr>,
}

impl WebConfig {
    /// Where `serve --web` listens when `web.listen` is unset, and where `web url` says
    /// the page is then: loopback only.
    pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8787);

    /// The file that holds the page's token: `web.token` beside the database, in the
    /// daemon's private state directory.
    pub fn token_file(database: &Path) -> PathBuf {
        database
            .parent()
            .unwrap_or(Path::new("."))
            .join("web.token")
    }

    /// Checks what can be checked before binding.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        match self.listen {
            // Every request's Host must name the listen address (no DNS rebinding): an
            // address that stands for every interface is one no browser sends.
            Some(addr) if addr.ip().is_unspecified() => Err(ConfigError::Invalid(format!(
                "`web.listen` {addr} names no one address; give the address the page is opened at (e.g. 127.0.0.1:{port}, or this host's own address)",
                port = addr.port()
            ))),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_lives_beside_the_database() {
        assert_eq!(
            WebConfig::token_file(Path::new("/state/execgate/execgate.db")),
            PathBuf::from("/state/execgate/web.token")
        );
        assert_eq!(
            WebConfig::DEFAULT_LISTEN.to_string(),
            "127.0.0.1:8787",
            "the address the documentation promises"
        );
    }

    #[test]
    fn an_address_for_every_interface_is_refused() {
        for listen in ["0.0.0.0:8787", "[::]:8787"] {
            let c = WebConfig {
                listen: Some(listen.parse().unwrap()),
            };
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("`web.listen`") && e.contains(listen), "{e}");
        }
        for listen in ["127.0.0.1:8787", "[::1]:9000", "192.168.1.5:8787"] {
            WebConfig {
                listen: Some(listen.parse().unwrap()),
            }
            .validate()
            .unwrap();
        }
        WebConfig::default().validate().unwrap();
    }
}
