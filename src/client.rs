//! A small HTTP/1.1 client over a Unix socket: how the CLI, the hooks, the MCP server
//! (and the tests) talk to the daemon, exactly as `curl --unix-socket` would; and
//! [`fit`], which makes a request fit the agent socket's body limit.

use std::path::{Path, PathBuf};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::UnixStream;

use crate::model::sha256_hex;
use crate::policy::paths::{MAX_PATH_LEN, lexically_normal};

/// The agent socket takes bodies up to 64 KiB; a tool call's input larger than this
/// (a `Write` of a big file) has its long strings summed up to fit.
const MAX_BODY: usize = 60 << 10;

/// A string of a tool's input longer than this is summed up when the input must shrink.
const LONG_STRING: usize = 1024;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to execgate at {path}: {source} (is `execgate serve` running?)")]
    Connect {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("talking to execgate at {path}: {message}")]
    Http { path: PathBuf, message: String },
    #[error("execgate answered {status} with a body that is not JSON: {body}")]
    NotJson { status: StatusCode, body: String },
}

#[derive(Clone, Debug)]
pub struct Client {
    socket: PathBuf,
}

impl Client {
    pub fn new(socket: impl Into<PathBuf>) -> Client {
        Client {
            socket: socket.into(),
        }
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Sends one request on a fresh connection. Returns the status and the JSON body
    /// (`Value::Null` for an empty body).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), ClientError> {
        let http = |message: String| ClientError::Http {
            path: self.socket.clone(),
            message,
        };
        let stream =
            UnixStream::connect(&self.socket)
                .await
                .map_err(|source| ClientError::Connect {
                    path: self.socket.clone(),
                    source,
                })?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| http(e.to_string()))?;
        // The connection is driven by its own task; the guard ends that task when this
        // call ends, or when the call is dropped half-way (an MCP call the client
        // cancelled): the socket closes then, and the daemon sees its waiter go.
        let _driver = AbortOnDrop(tokio::spawn(conn));
        let bytes = body
            .map(|b| serde_json::to_vec(b).expect("JSON values serialise"))
            .unwrap_or_default();
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "execgate");
        if body.is_some() {
            request = request.header("content-type", "application/json");
        }
        let request = request
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| http(e.to_string()))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| http(e.to_string()))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| http(e.to_string()))?
            .to_bytes();
        if body.is_empty() {
            return Ok((status, Value::Null));
        }
        serde_json::from_slice(&body)
            .map(|v| (status, v))
            .map_err(|_| ClientError::NotJson {
                status,
                body: String::from_utf8_lossy(&body).into_owned(),
            })
    }
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Makes the request fit the agent socket's body limit: a tool call's long strings (a
/// file's new content) are summed up (length, sha256, head) as the owner would see them
/// cut anyway. A string that could still name a file is never summed up: the daemon
/// must see every path to judge it. A command is never changed: one too long is refused.
pub fn fit(body: &mut Value) -> Result<(), String> {
    let size = |b: &Value| b.to_string().len();
    if size(body) <= MAX_BODY {
        return Ok(());
    }
    let cwd = body["cwd"].as_str().map(std::path::PathBuf::from);
    if let Some(input) = body.get_mut("tool").and_then(|t| t.get_mut("input")) {
        sum_up_long_strings(input, cwd.as_deref());
    }
    if size(body) <= MAX_BODY {
        return Ok(());
    }
    Err(format!(
        "the request is larger than execgate accepts ({} KiB); execgate does not judge what it cannot see whole",
        MAX_BODY >> 10
    ))
}

fn sum_up_long_strings(value: &mut Value, cwd: Option<&std::path::Path>) {
    match value {
        Value::String(s) if s.len() > LONG_STRING && !could_name_a_file(s, cwd) => {
            let head: String = s.chars().take(200).collect();
            *s = format!(
                "[execgate: {} bytes, sha256 {}; begins: {head}]",
                s.len(),
                sha256_hex(s.as_bytes())
            );
        }
        Value::Array(items) => items.iter_mut().for_each(|v| sum_up_long_strings(v, cwd)),
        Value::Object(map) => map.values_mut().for_each(|v| sum_up_long_strings(v, cwd)),
        _ => {}
    }
}

/// Whether `s`, read as a path from `cwd` as a tool's path handling reads it, is short
/// enough to open (`./././.claude/settings.json` is, however long as written).
fn could_name_a_file(s: &str, cwd: Option<&std::path::Path>) -> bool {
    let path = std::path::Path::new(s);
    let whole = match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    lexically_normal(&whole).as_os_str().len() <= MAX_PATH_LEN
}
