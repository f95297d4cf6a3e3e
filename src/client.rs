//! A small HTTP/1.1 client over a Unix socket: how the CLI (and the tests) talk to the
//! daemon, exactly as `curl --unix-socket` would.

use std::path::{Path, PathBuf};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::UnixStream;

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
        let driver = tokio::spawn(conn);
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
        driver.abort();
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
