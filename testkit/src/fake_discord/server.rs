//! The listeners: the REST API's, and the gateway's two (the URL the bot is configured
//! with, and the `resume_gateway_url` READY names, as Discord's differ), each a task whose
//! connections an outage can cut.

use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::{AbortHandle, JoinHandle, JoinSet};

use super::state::FakeState;

/// What the handlers share with the test-side handle.
pub(super) struct Shared {
    pub(super) token: String,
    pub(super) state: Mutex<FakeState>,
    /// The gateway's resume URL (`ws://127.0.0.1:PORT`).
    pub(super) resume_url: String,
    /// Milliseconds, as Hello says.
    pub(super) heartbeat_interval: Mutex<u64>,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, FakeState> {
        // A panicking test thread must not turn every later assertion into a PoisonError.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One listener and its connections while it is up.
pub(super) struct Server {
    accept: JoinHandle<()>,
    listener_fd: RawFd,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Server {
    /// Takes the listener and its connections down at once.
    pub(super) fn stop(self) {
        if !self.accept.is_finished() {
            // SAFETY: shutdown takes no pointers; the accept task owns the open fd.
            unsafe {
                libc::shutdown(self.listener_fd, libc::SHUT_RDWR);
            }
        }
        self.accept.abort();
        for connection in self
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            connection.abort();
        }
    }
}

pub(super) fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    // Lets `come_back` rebind while connections it closed sit in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// The REST API on `listener`.
pub(super) fn serve_rest(listener: TcpListener, shared: Arc<Shared>) -> Server {
    let app = Router::new()
        .fallback(super::rest::handle)
        .with_state(shared);
    serve(listener, move |stream| {
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        async move {
            // An error here is the client hanging up: nothing to report.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        }
    })
}

/// The gateway on `listener`; `resume`: whether this is the resume URL.
pub(super) fn serve_gateway(listener: TcpListener, shared: Arc<Shared>, resume: bool) -> Server {
    serve(listener, move |stream| {
        super::gateway::connection(Arc::clone(&shared), stream, resume)
    })
}

fn serve<F, Fut>(listener: TcpListener, connection: F) -> Server
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener_fd = listener.as_raw_fd();
    let connections = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&connections);
    let accept = tokio::spawn(async move {
        let mut tasks = JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let handle = tasks.spawn(connection(stream));
                        let mut all = kept.lock().unwrap_or_else(|e| e.into_inner());
                        all.retain(|c: &AbortHandle| !c.is_finished());
                        all.push(handle);
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                },
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        }
    });
    Server {
        accept,
        listener_fd,
        connections,
    }
}
