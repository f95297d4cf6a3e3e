//! The two HTTP/1.1 + JSON APIs over Unix sockets: `agent` (ask) and `admin` (decide,
//! manage rules), and `/metrics` (`metrics`), on the admin socket and its own port. Shared here: peer credentials (for a loopback TCP client of the page,
//! from the kernel's socket tables: `tcp_uid`), bounded body reading, JSON errors.

pub mod admin;
pub mod agent;
pub mod error;
mod events;
pub mod metrics;
pub mod server;
mod tcp_uid;
pub mod wire;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;

use self::error::{ApiError, MAX_BODY_BYTES};
use crate::approvals::Approvals;
use crate::config::Config;

/// Shared by every handler.
#[derive(Clone)]
pub struct AppState {
    pub approvals: Arc<Approvals>,
    pub runs: Arc<crate::runs::Runs>,
}

impl AppState {
    /// The configuration in force (it changes on reload).
    pub fn config(&self) -> Arc<Config> {
        self.approvals.policy().config()
    }

    /// How long a client may take to send a request body.
    pub fn read_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.config().limits.request_read_timeout_ms)
    }
}

/// Who is on the other end of a connection, from `SO_PEERCRED`: the kernel's word, which
/// an agent cannot forge.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    pub uid: Option<u32>,
    pub pid: Option<i32>,
}

/// Reads a JSON body of at most `MAX_BODY_BYTES`. Oversize bodies are refused whole (413),
/// bad JSON gets serde's message, which names the field and position.
/// A body that has not fully arrived within `timeout` is refused (408): a client that
/// trickles bytes must not hold a connection and its memory forever.
pub async fn read_json<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: Body,
    timeout: std::time::Duration,
) -> Result<T, ApiError> {
    if let Some(len) = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        && len > MAX_BODY_BYTES as u64
    {
        return Err(ApiError::too_large());
    }
    let collected = tokio::time::timeout(
        timeout,
        http_body_util::Limited::new(body, MAX_BODY_BYTES).collect(),
    )
    .await
    .map_err(|_| {
        ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "REQUEST_TIMEOUT",
            format!(
                "the request body did not arrive within {} ms",
                timeout.as_millis()
            ),
        )
    })?;
    let bytes = collected
        .map_err(|e| {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                ApiError::too_large()
            } else {
                ApiError::bad_request(format!("could not read the request body: {e}"))
            }
        })?
        .to_bytes();
    if bytes.is_empty() {
        return Err(ApiError::bad_request(
            "the request body is empty; a JSON object is required",
        ));
    }
    // serde reads a struct from an array of its fields in order, too
    // (`["a", null, "ls", …]` as an ExecRequest): no client means that, and no reviewer
    // reading a log expects it. A JSON text's first byte past whitespace says what it
    // is, so anything but `{` is refused here (malformed text gets serde's message).
    let kind = match bytes.iter().find(|b| !b" \t\n\r".contains(b)) {
        Some(b'[') => Some("an array"),
        Some(b'"') => Some("a string"),
        Some(b'-' | b'0'..=b'9') => Some("a number"),
        Some(b't' | b'f') => Some("a boolean"),
        Some(b'n') => Some("null"),
        _ => None,
    };
    if let Some(kind) = kind {
        return Err(ApiError::bad_request(format!(
            "the request body is {kind}; a JSON object ({{…}}) is required"
        )));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
}

/// Parses `a=1&b=2`. Unknown keys are refused so a typo is never silently ignored.
pub fn parse_query(raw: Option<&str>, known: &[&str]) -> Result<Vec<(String, String)>, ApiError> {
    let mut out = Vec::new();
    for pair in raw.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = percent_decode(k)?;
        if !known.contains(&k.as_str()) {
            return Err(ApiError::bad_request(format!(
                "unknown query parameter {k:?} (known: {})",
                known.join(", ")
            )));
        }
        out.push((k, percent_decode(v)?));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> Result<String, ApiError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                let b = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                out.push(b.ok_or_else(|| {
                    ApiError::bad_request("malformed percent-encoding in the query string")
                })?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| ApiError::bad_request("the query string is not UTF-8"))
}

/// Whether `path` decodes to UTF-8: `%XX` escapes decoded (a `%` not followed by two hex
/// digits stays as it is, as axum's decoding leaves it).
pub fn path_is_utf8(path: &str) -> bool {
    let bytes = path.as_bytes();
    if !bytes.contains(&b'%') {
        return true;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match escaped {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    std::str::from_utf8(&out).is_ok()
}

/// A parsed number from the query, with the parameter named in the error.
pub fn query_number(value: &str, name: &str) -> Result<u64, ApiError> {
    value.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "query parameter `{name}` must be a non-negative integer"
        ))
    })
}

pub async fn not_found(uri: Uri) -> ApiError {
    ApiError::not_found(format!("no such endpoint: {}", uri.path()))
}

pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "METHOD_NOT_ALLOWED",
        "method not allowed on this endpoint",
    )
}

/// `GET /v1/health`: up, its version, and the Landlock ABI run mode confines commands
/// with (null: this kernel has none, and run mode runs only `exec.confine = "none"`).
pub async fn health() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "landlock_abi": crate::confine::abi(),
    }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_are_utf8_once_decoded() {
        assert!(super::path_is_utf8("/v1/requests/a1b2"));
        assert!(super::path_is_utf8("/v1/requests/%C3%A9"));
        assert!(super::path_is_utf8("/v1/requests/%zz%+f%"));
        assert!(!super::path_is_utf8("/v1/requests/%FF"));
        assert!(!super::path_is_utf8("/v1/requests/%C3%28/decision"));
    }
}
