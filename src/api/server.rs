//! Accepting connections on a socket: HTTP/1.1 via hyper, each request handed to the
//! router with the peer's credentials. This is where one client's flood stops: each uid
//! may hold a bounded number of open connections (more are answered `429` and closed),
//! and a client that is slow to send its headers is cut off. The same loop serves the
//! approvals page's TCP port: a loopback client is counted by the uid the kernel's socket
//! tables give its end (`tcp_uid`), so one local user's connections never take the
//! owner's share; clients from elsewhere have no uid and share one bound. Between the
//! socket and hyper sits [`wire::Guarded`], so that what hyper would refuse is refused with the JSON error
//! and an early answer is not lost to a reset; a path that is not UTF-8 is refused here,
//! before routing, for the same reason.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::IntoResponse;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::task::JoinHandle;
use tower::ServiceExt;

use super::Peer;
use super::error::ApiError;
use super::wire::{Counted, Guarded};
use crate::policy::Policy;
use crate::shutdown::Shutdown;

/// How long connections get to finish once the daemon stops.
const DRAIN: Duration = Duration::from_secs(5);

/// Open connections per uid, shared by the accept loop and the connections it spawns.
#[derive(Default)]
struct Counts(Mutex<HashMap<Option<u32>, usize>>);

/// One counted connection; dropping it gives the slot back.
struct Slot {
    counts: Arc<Counts>,
    uid: Option<u32>,
}

impl Counts {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Option<u32>, usize>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(self: &Arc<Self>, uid: Option<u32>, cap: usize) -> Option<Slot> {
        let mut counts = self.lock();
        let n = counts.entry(uid).or_default();
        if *n >= cap {
            return None;
        }
        *n += 1;
        Some(Slot {
            counts: Arc::clone(self),
            uid,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock();
        if let Some(n) = counts.get_mut(&self.uid) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.uid);
            }
        }
    }
}

/// Header lines every answer carries, beside its own (a front's security headers).
pub type Headers = &'static [(&'static str, &'static str)];

/// Where connections come from, who is on the other end of each, and whose share of
/// `limits.max_connections_per_uid` each takes (None: the one share of every client
/// execgate cannot tell apart).
pub trait Listener: Send + 'static {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    fn accept(&self) -> impl Future<Output = io::Result<(Self::Io, Peer, Option<u32>)>> + Send;
}

impl Listener for UnixListener {
    type Io = UnixStream;
    async fn accept(&self) -> io::Result<(UnixStream, Peer, Option<u32>)> {
        let (stream, _) = UnixListener::accept(self).await?;
        let peer = peer_of(&stream);
        Ok((stream, peer, peer.uid))
    }
}

/// A TCP client has no uid for the handlers: it matches no uid rule, and the approvals
/// page lets it in by its token alone. Its connections are counted by the uid that owns
/// its end when it is on this host (loopback), so that the agent's uid filling its share
/// leaves the owner's browser its own; a client from elsewhere, or one the kernel no
/// longer knows, takes the share kept for unknown peers.
impl Listener for TcpListener {
    type Io = TcpStream;
    async fn accept(&self) -> io::Result<(TcpStream, Peer, Option<u32>)> {
        let (stream, from) = TcpListener::accept(self).await?;
        // Events are small and must not wait for more to fill a segment.
        let _ = stream.set_nodelay(true);
        let share = stream
            .local_addr()
            .ok()
            .and_then(|local| super::tcp_uid::loopback_peer_uid(local, from));
        let peer = Peer {
            uid: None,
            pid: None,
        };
        Ok((stream, peer, share))
    }
}

/// Serves `router` on `listener` until `stopped`, then lets open connections finish
/// (at most `DRAIN`). Limits are read from the configuration in force at each accept.
/// Every answer carries `headers`, those made before routing included.
pub fn serve<L: Listener>(
    listener: L,
    router: Router,
    policy: Arc<Policy>,
    headers: Headers,
    mut shutdown: Shutdown,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let counts = Arc::new(Counts::default());
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        loop {
            let accepted = tokio::select! {
                _ = shutdown.recv() => break,
                a = listener.accept() => a,
            };
            let (stream, peer, share) = match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, most likely: back off instead of spinning.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let limits = policy.config().limits.clone();
            let Some(slot) = counts.take(share, limits.max_connections_per_uid) else {
                tracing::warn!(uid = ?share, cap = limits.max_connections_per_uid, "too many connections from one uid");
                tokio::spawn(refuse(
                    stream,
                    share,
                    limits.max_connections_per_uid,
                    headers,
                ));
                continue;
            };
            let router = router.clone();
            let read_timeout = Duration::from_millis(limits.request_read_timeout_ms);
            let stream = Guarded::new(stream, read_timeout).with_headers(headers);
            let answered = stream.answered();
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let mut request = request.map(Body::new);
                request.extensions_mut().insert(ConnectInfo(peer));
                let router = router.clone();
                let answered = Arc::clone(&answered);
                async move {
                    // axum would refuse such a path in its path extractor, in plain text.
                    let response = if super::path_is_utf8(request.uri().path()) {
                        router.oneshot(request).await?
                    } else {
                        ApiError::bad_request("the request path is not UTF-8 once percent-decoded")
                            .into_response()
                    };
                    let mut response = response.map(|body| Counted::new(body, answered));
                    for (name, value) in headers {
                        response.headers_mut().insert(
                            axum::http::HeaderName::from_static(name),
                            axum::http::HeaderValue::from_static(value),
                        );
                    }
                    Ok::<_, std::convert::Infallible>(response)
                }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(read_timeout)
                .serve_connection(TokioIo::new(stream), service);
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                drop(slot);
            });
        }
        if tokio::time::timeout(DRAIN, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!(
                "connections still open {} s after shutdown",
                DRAIN.as_secs()
            );
        }
    })
}

fn peer_of(stream: &UnixStream) -> Peer {
    match stream.peer_cred() {
        Ok(cred) => Peer {
            uid: Some(cred.uid()),
            pid: cred.pid(),
        },
        // Unknown peers match no uid rule and no admin uid: they are refused there.
        Err(_) => Peer {
            uid: None,
            pid: None,
        },
    }
}

/// Answers a connection over its uid's cap with a clear 429, without reading it.
async fn refuse<S: AsyncWrite + Unpin>(
    mut stream: S,
    share: Option<u32>,
    cap: usize,
    headers: Headers,
) {
    let who = match share {
        Some(_) => "this uid already has",
        None => "clients execgate cannot tell apart (no uid) already have",
    };
    let body = serde_json::json!({"error": {
        "code": "TOO_MANY_CONNECTIONS",
        "message": format!("{who} {cap} open connections to execgate (limits.max_connections_per_uid); close some and retry"),
    }})
    .to_string();
    let headers: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let response = format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}
