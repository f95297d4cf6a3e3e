//! A reader of `GET /v1/events` (Server-Sent Events) over a Unix socket, as a custom UI
//! would read it: one event at a time, by name and JSON data.

use std::path::Path;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

/// One open event stream.
pub struct EventStream {
    body: Incoming,
    buffer: String,
    /// Comments seen so far (keep-alives).
    pub comments: usize,
    _connection: tokio::task::JoinHandle<()>,
}

impl EventStream {
    /// Connects to `socket` and asks for the stream; panics unless it is a 200
    /// `text/event-stream`.
    pub async fn open(socket: &Path) -> EventStream {
        let stream = UnixStream::connect(socket)
            .await
            .expect("connect to the admin socket");
        let (mut send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("HTTP handshake");
        let connection = tokio::spawn(async move {
            let _ = connection.await;
        });
        let request = hyper::Request::get("/v1/events")
            .header("host", "localhost")
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
            .unwrap();
        let response = send.send_request(request).await.expect("events response");
        assert_eq!(response.status(), 200, "GET /v1/events");
        let kind = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(kind.starts_with("text/event-stream"), "content-type {kind}");
        EventStream {
            body: response.into_body(),
            buffer: String::new(),
            comments: 0,
            _connection: connection,
        }
    }

    /// The next event (name, data parsed as JSON), waiting at most `within`; None when
    /// the stream ended. Panics when nothing came in time.
    pub async fn next_within(&mut self, within: Duration) -> Option<(String, Value)> {
        tokio::time::timeout(within, self.next())
            .await
            .unwrap_or_else(|_| panic!("no event within {within:?}"))
    }

    /// The next event; None when the stream ended.
    pub async fn next(&mut self) -> Option<(String, Value)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if line.starts_with(':') {
                        self.comments += 1;
                    } else if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim_start().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let value = serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("event {name} data is not JSON ({e}): {data}"));
                return Some((name, value));
            }
            let frame = self.body.frame().await?.expect("event stream frame");
            if let Ok(bytes) = frame.into_data() {
                self.buffer
                    .push_str(std::str::from_utf8(&bytes).expect("UTF-8 events"));
            }
        }
    }

    /// The next event that is not `allowlist`, asserting its name.
    pub async fn expect(&mut self, name: &str) -> Value {
        loop {
            let (got, data) = self
                .next_within(Duration::from_secs(10))
                .await
                .unwrap_or_else(|| panic!("the stream ended before a {name} event"));
            if got == "allowlist" && name != "allowlist" {
                continue;
            }
            assert_eq!(got, name, "event data: {data}");
            return data;
        }
    }
}

/// A reader that asks for the stream and then never reads a byte: its socket buffers
/// fill and stay full.
pub async fn stalled(socket: &Path) -> UnixStream {
    let mut stream = UnixStream::connect(socket)
        .await
        .expect("connect to the admin socket");
    stream
        .write_all(b"GET /v1/events HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    stream
}
