//! `[traces]`: where a span per request goes, if anywhere (docs/metrics.md#traces).

use serde::Deserialize;

use super::ConfigError;

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TracesConfig {
    /// An OTLP collector's base URL (`http://127.0.0.1:4318`): a span per request is
    /// sent to its `/v1/traces` as HTTP/protobuf. Unset: no spans. Default: unset. A
    /// change needs a restart.
    pub otlp_endpoint: Option<String>,
    /// How often the batch of spans is sent, in milliseconds. Default: 5000.
    pub export_delay_ms: u64,
}

impl Default for TracesConfig {
    fn default() -> Self {
        Self {
            otlp_endpoint: None,
            export_delay_ms: 5000,
        }
    }
}

impl TracesConfig {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |msg: String| Err(ConfigError::Invalid(msg));
        if self.export_delay_ms == 0 {
            return bad("`traces.export_delay_ms` must be at least 1".into());
        }
        let Some(url) = &self.otlp_endpoint else {
            return Ok(());
        };
        // The exporter is built without TLS: a collector is reached over plain HTTP, on
        // this host or a trusted network (docs/metrics.md#traces says why).
        match reqwest::Url::parse(url) {
            Ok(u) if u.scheme() == "http" && u.host().is_some() => Ok(()),
            Ok(_) => bad(format!(
                "`traces.otlp_endpoint` {url:?} must be an http:// URL (an OTLP collector's HTTP port, e.g. http://127.0.0.1:4318)"
            )),
            Err(e) => bad(format!("`traces.otlp_endpoint` {url:?}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_http_collector_is_accepted() {
        let with = |url: &str| TracesConfig {
            otlp_endpoint: Some(url.into()),
            ..TracesConfig::default()
        };
        with("http://127.0.0.1:4318").validate().unwrap();
        with("http://collector.internal:4318/").validate().unwrap();
        for url in [
            "https://collector:4318",
            "grpc://x:4317",
            "127.0.0.1:4318",
            "http://",
        ] {
            let e = with(url).validate().unwrap_err().to_string();
            assert!(e.contains("traces.otlp_endpoint"), "{url}: {e}");
        }
        TracesConfig::default().validate().unwrap();
    }
}
