//! Discord's REST API, the few calls the transport makes, over reqwest: JSON in, Discord's
//! types (`twilight-model`) out, and every failure as Discord said it — the status, the
//! JSON error code, and for a 429 how long to wait (`retry_after`, else `Retry-After`)
//! and whether the limit is global.
//!
//! A 429 is never retried here: the transport waits what Discord said and holds every
//! other sender too (`Failure::told`, `Limiter::pause`), the same for every chat.

use std::fmt;
use std::time::Duration;

use reqwest::{Client, Method, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::Secret;

/// How long one call may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The REST API of one bot.
pub struct Rest {
    client: Client,
    /// `https://discord.com/api/v10`, or a fake's.
    base: String,
    token: Secret,
}

/// A call that failed.
#[derive(Debug)]
pub struct RestError {
    /// None: no answer (unreachable, timed out, unreadable).
    pub status: Option<u16>,
    /// Discord's JSON error code (50001, 10008, …), when it gave one.
    pub code: Option<u64>,
    pub message: String,
    /// A 429's wait.
    pub retry_after: Option<Duration>,
    pub global: bool,
}

impl fmt::Display for RestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.status, self.code) {
            (None, _) => f.write_str(&self.message),
            (Some(status), Some(code)) if code != 0 => {
                write!(f, "{status} {} (code {code})", self.message)
            }
            (Some(status), _) => write!(f, "{status} {}", self.message),
        }?;
        if let Some(wait) = self.retry_after {
            let scope = if self.global { "global" } else { "route" };
            write!(
                f,
                "; retry after {:.3}s ({scope} limit)",
                wait.as_secs_f64()
            )?;
        }
        Ok(())
    }
}

impl RestError {
    pub fn is_unauthorized(&self) -> bool {
        self.status == Some(401)
    }
}

impl Rest {
    /// `api`: Discord's base URL (`https://discord.com`), `/api/v10` added.
    pub fn new(api: &str, token: &Secret) -> Result<Rest, String> {
        let url = reqwest::Url::parse(api).map_err(|e| format!("discord.api_url: {e}"))?;
        let mut client = Client::builder().timeout(TIMEOUT);
        // A proxy set for the outside world must not swallow an API on this machine.
        if matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")) {
            client = client.no_proxy();
        }
        let client = client
            .build()
            .map_err(|e| format!("cannot build the HTTP client for Discord: {e}"))?;
        Ok(Rest {
            client,
            base: format!("{}/api/v10", api.trim_end_matches('/')),
            token: token.clone(),
        })
    }

    /// Calls `path` with `body`, as the bot (`authorized`) or not (interaction
    /// callbacks carry their own token in the path), and reads the answer as `T`.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        authorized: bool,
    ) -> Result<T, RestError> {
        let bytes = self.send(method, path, body, authorized).await?;
        serde_json::from_slice(&bytes).map_err(|e| RestError {
            status: None,
            code: None,
            message: format!("Discord's answer cannot be read: {e}"),
            retry_after: None,
            global: false,
        })
    }

    /// Like [`Rest::call`], for calls whose answer is not needed (204 No Content).
    pub async fn call_unread(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        authorized: bool,
    ) -> Result<(), RestError> {
        self.send(method, path, body, authorized).await.map(|_| ())
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        authorized: bool,
    ) -> Result<Vec<u8>, RestError> {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if authorized {
            request = request.header("Authorization", format!("Bot {}", self.token.expose()));
        }
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.map_err(|e| RestError {
            status: None,
            code: None,
            // Without the URL: it would name the interaction tokens of callbacks.
            message: format!("Discord cannot be reached: {}", e.without_url()),
            retry_after: None,
            global: false,
        })?;
        let status = response.status();
        let header_wait = response
            .headers()
            .get("Retry-After")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<f64>().ok());
        let global_header = response
            .headers()
            .get("X-RateLimit-Global")
            .is_some_and(|v| v.as_bytes() == b"true");
        let bytes = response.bytes().await.map_err(|e| RestError {
            status: Some(status.as_u16()),
            code: None,
            message: format!("the answer was cut off: {}", e.without_url()),
            retry_after: None,
            global: false,
        })?;
        if status.is_success() {
            return Ok(bytes.to_vec());
        }
        let json: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let retry_after = (status == StatusCode::TOO_MANY_REQUESTS).then(|| {
            let secs = json["retry_after"].as_f64().or(header_wait).unwrap_or(1.0);
            Duration::try_from_secs_f64(secs.clamp(0.0, 3600.0)).unwrap_or(Duration::from_secs(1))
        });
        Err(RestError {
            status: Some(status.as_u16()),
            code: json["code"].as_u64(),
            message: json["message"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned()),
            retry_after,
            global: json["global"].as_bool().unwrap_or(false) || global_header,
        })
    }
}
