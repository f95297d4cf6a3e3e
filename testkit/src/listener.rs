//! What every fake chat service serves from: a TCP listener on a chosen port, each
//! connection a task, so that an outage can take the listener and every open connection
//! down at once (`axum::serve` would leave accepted connections running, and clients keep
//! them alive), and `come_back` can bind the same port again.

use std::future::Future;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::{AbortHandle, JoinHandle, JoinSet};

/// One listener and its connections while it is up.
pub(crate) struct Server {
    accept: JoinHandle<()>,
    /// The listening socket, owned by the accept task (see `Server::stop`).
    listener_fd: RawFd,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Server {
    /// Takes the listener and its connections down at once, from synchronous code.
    pub(crate) fn stop(self) {
        // Aborting the accept task only closes its listener the next time the runtime gets
        // to it; until then connections would still queue in the backlog. shutdown(2) takes
        // the socket out of LISTEN now: connects are refused and the port can be bound again.
        // The accept loop never returns on its own and owns the fd, so while it is not
        // finished the fd is open (and is not some reused number).
        if !self.accept.is_finished() {
            // SAFETY: shutdown takes no pointers; on an open fd it cannot corrupt memory.
            unsafe {
                libc::shutdown(self.listener_fd, libc::SHUT_RDWR);
            }
        }
        self.accept.abort();
        // An aborted task is never polled again, so no request gets an answer after this.
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

/// A listener on `addr` (port 0: any free one).
pub(crate) fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    // Lets `come_back` rebind while connections it closed sit in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// `app` over HTTP/1.1 on `listener`.
pub(crate) fn serve_http(listener: TcpListener, app: Router) -> Server {
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

/// Each connection accepted on `listener` handled by `connection`, as a task of its own.
pub(crate) fn serve<F, Fut>(listener: TcpListener, connection: F) -> Server
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
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
                    // E.g. out of file descriptors: back off instead of spinning.
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
