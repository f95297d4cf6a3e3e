//! The approvals page's port as a browser, or a forger, reaches it: HTTP/1.1 over TCP
//! with exactly the headers a test chooses (no `Host` is added for it), and the page's
//! address and token as the daemon keeps them.

use std::net::SocketAddr;

use execgate::config::WebConfig;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{HeaderMap, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::TestDaemon;

/// An answer from the page's port.
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
}

impl Reply {
    /// The body as JSON; panics when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("{} body is not JSON ({e}): {}", self.status, self.text))
    }

    /// A header's value as text ("" when absent).
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
}

/// A daemon's approvals page: where it listens and its token.
#[derive(Clone)]
pub struct Page {
    pub addr: SocketAddr,
    pub token: String,
}

impl Page {
    /// The page of a daemon started with `web.listen` set.
    pub fn of(d: &TestDaemon) -> Page {
        let addr = d
            .daemon
            .as_ref()
            .and_then(|d| d.web_addr())
            .expect("the daemon serves the approvals page (set EXECGATE_WEB__LISTEN)");
        let path = WebConfig::token_file(&d.config().database);
        let token = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .trim()
            .to_string();
        Page { addr, token }
    }

    /// The `Host` a browser sends for the page.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// The page's own origin, as a browser sends it.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The page's address, with the token in its fragment (as `execgate web url` prints).
    pub fn url(&self) -> String {
        format!("http://{}/#token={}", self.addr, self.token)
    }

    /// A request with exactly `headers`.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Reply {
        call(self.addr, method, path, headers, body).await
    }

    /// A GET as the page makes it: its Host and its token.
    pub async fn get(&self, path: &str) -> Reply {
        let (host, bearer) = (self.host(), format!("Bearer {}", self.token));
        self.call(
            "GET",
            path,
            &[("host", &host), ("authorization", &bearer)],
            None,
        )
        .await
    }

    /// A change as the page makes it: its Host, its token and its Origin.
    pub async fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Reply {
        let (host, origin) = (self.host(), self.origin());
        let bearer = format!("Bearer {}", self.token);
        let mut headers = vec![
            ("host", host.as_str()),
            ("authorization", bearer.as_str()),
            ("origin", origin.as_str()),
        ];
        if body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        self.call(method, path, &headers, body).await
    }
}

/// One request on a fresh connection to `addr`, with exactly `headers`; the answer read
/// whole (an event stream that is not refused is cut off after its head).
pub async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Reply {
    let stream = TcpStream::connect(addr)
        .await
        .expect("connect to the page's port");
    let (mut send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    let connection = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut request = hyper::Request::builder().method(method).uri(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = request.body(Full::new(Bytes::from(body))).unwrap();
    let response = send.send_request(request).await.expect("an answer");
    let status = response.status();
    let headers = response.headers().clone();
    let streaming = headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let text = if streaming {
        String::new()
    } else {
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("the body")
            .to_bytes();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    connection.abort();
    Reply {
        status,
        headers,
        text,
    }
}

/// `bytes` written as they are to `addr`, and everything that comes back until the
/// daemon closes the connection.
pub async fn raw(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr)
        .await
        .expect("connect to the page's port");
    stream.write_all(bytes).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut answer),
    )
    .await
    .expect("the daemon answers and closes")
    .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}
