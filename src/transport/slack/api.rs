//! Slack's Web API: a POST of JSON with a bearer token, answered `{"ok": true, …}` or
//! HTTP 200 `{"ok": false, "error": "…"}`, or HTTP 429 with `Retry-After` in seconds.
//!
//! The calls go through reqwest, the HTTP client already in the tree, over a rustls
//! configuration of our own (the aws-lc-rs provider named, webpki's roots): the tree
//! links both of rustls' providers, and a TLS client left to pick the process default
//! would find two and panic. The Socket Mode websocket uses the same configuration.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::Secret;

/// How long one call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// The Web API, with the two tokens.
pub struct Api {
    http: reqwest::Client,
    base: String,
    bot: Secret,
    app: Secret,
}

/// Which token a call is made with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    /// `slack.bot_token`: every call but opening Socket Mode.
    Bot,
    /// `slack.app_token`: `apps.connections.open`.
    App,
}

impl Token {
    /// The setting, as error messages name it.
    pub fn key(self) -> &'static str {
        match self {
            Token::Bot => "slack.bot_token",
            Token::App => "slack.app_token",
        }
    }
}

/// A call that failed.
#[derive(Debug)]
pub struct ApiError {
    /// The method ("chat.postMessage").
    pub method: &'static str,
    pub kind: ErrorKind,
}

#[derive(Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Slack answered `ok: false`: its error name, and the scope it wants for
    /// `missing_scope`.
    Slack {
        error: String,
        needed: Option<String>,
    },
    /// HTTP 429: how long Slack said to wait.
    RateLimited(Duration),
    /// No answer, or not one of Slack's (a 5xx, a proxy's page).
    Unreachable(String),
}

impl ApiError {
    /// Slack's error name, if it gave one.
    pub fn slack(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Slack { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether Slack refused the token itself: wrong, revoked, of a deleted app or user.
    pub fn rejects_token(&self) -> bool {
        matches!(
            self.slack(),
            Some(
                "invalid_auth"
                    | "not_authed"
                    | "token_revoked"
                    | "token_expired"
                    | "account_inactive"
                    | "not_allowed_token_type"
                    | "org_login_required"
                    | "team_access_not_granted"
            )
        )
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let method = self.method;
        match &self.kind {
            ErrorKind::Slack {
                error,
                needed: Some(needed),
            } => write!(f, "{method}: {error} (needed: {needed})"),
            ErrorKind::Slack { error, .. } => write!(f, "{method}: {error}"),
            ErrorKind::RateLimited(wait) => {
                write!(f, "{method}: rate limited, retry after {}s", wait.as_secs())
            }
            ErrorKind::Unreachable(why) => write!(f, "{method}: {why}"),
        }
    }
}

/// The TLS client configuration every Slack connection uses.
pub fn tls() -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS for Slack: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

impl Api {
    pub fn new(base: &str, bot: Secret, app: Secret) -> Result<Api, String> {
        let url = reqwest::Url::parse(base).map_err(|e| format!("slack.api_url: {e}"))?;
        let mut client = reqwest::Client::builder()
            .use_preconfigured_tls(tls()?)
            .timeout(CALL_TIMEOUT)
            .connect_timeout(Duration::from_secs(10));
        // A proxy set for the outside world must not swallow a Web API on this machine.
        if matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")) {
            client = client.no_proxy();
        }
        let http = client
            .build()
            .map_err(|e| format!("cannot build the HTTP client for Slack: {e}"))?;
        Ok(Api {
            http,
            base: base.trim_end_matches('/').to_owned(),
            bot,
            app,
        })
    }

    /// Calls `method` with `body` as JSON, and reads the answer as `T`.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        token: Token,
        body: &impl Serialize,
    ) -> Result<T, ApiError> {
        let fail = |kind| ApiError { method, kind };
        let token = match token {
            Token::Bot => &self.bot,
            Token::App => &self.app,
        };
        let sent = self
            .http
            .post(format!("{}/{method}", self.base))
            .bearer_auth(token.expose())
            .json(body)
            .send()
            .await;
        // reqwest's errors name the URL, never the headers: no token in them.
        let response = sent.map_err(|e| fail(ErrorKind::Unreachable(plain(&e))))?;
        let status = response.status();
        if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            let wait = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(1);
            return Err(fail(ErrorKind::RateLimited(Duration::from_secs(wait))));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| fail(ErrorKind::Unreachable(plain(&e))))?;
        let value: Value = serde_json::from_slice(&bytes).map_err(|_| {
            fail(ErrorKind::Unreachable(format!(
                "HTTP {status}, and not an answer of Slack's"
            )))
        })?;
        if value.get("ok") != Some(&Value::Bool(true)) {
            let error = value
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("unknown_error");
            let needed = value.get("needed").and_then(Value::as_str);
            return Err(fail(ErrorKind::Slack {
                error: error.chars().take(100).collect(),
                needed: needed.map(|n| n.chars().take(200).collect()),
            }));
        }
        serde_json::from_value(value).map_err(|e| {
            fail(ErrorKind::Unreachable(format!(
                "an answer that cannot be read: {e}"
            )))
        })
    }
}

/// A reqwest error as one line, its causes included.
fn plain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree links both of rustls' providers; a client that asked rustls for the
    /// process default would panic at its first TLS handshake unless something (the
    /// Discord transport does) installed one. Ours names its own, whatever the process
    /// holds.
    #[test]
    fn tls_is_set_up_without_the_process_default() {
        let config = tls().unwrap();
        assert_eq!(
            config.crypto_provider().cipher_suites,
            rustls::crypto::aws_lc_rs::default_provider().cipher_suites
        );
        assert!(
            config.alpn_protocols.is_empty(),
            "a websocket speaks HTTP/1.1"
        );
        Api::new("https://slack.com/api", Secret::new("b"), Secret::new("a")).unwrap();
    }

    #[test]
    fn token_refusals_are_told_apart() {
        let err = |e: &str| ApiError {
            method: "auth.test",
            kind: ErrorKind::Slack {
                error: e.into(),
                needed: None,
            },
        };
        assert!(err("invalid_auth").rejects_token());
        assert!(err("token_revoked").rejects_token());
        assert!(!err("channel_not_found").rejects_token());
        assert!(!err("missing_scope").rejects_token());
        let scope = ApiError {
            method: "chat.postMessage",
            kind: ErrorKind::Slack {
                error: "missing_scope".into(),
                needed: Some("chat:write".into()),
            },
        };
        assert_eq!(
            scope.to_string(),
            "chat.postMessage: missing_scope (needed: chat:write)"
        );
    }
}
