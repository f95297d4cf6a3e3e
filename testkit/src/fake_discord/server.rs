//! The listeners: the REST API's, and the gateway's two (the URL the bot is configured
//! with, and the `resume_gateway_url` READY names, as Discord's differ), each a task whose
//! connections an outage can cut.

use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use tokio::net::TcpListener;

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

pub(super) use crate::listener::{Server, listen};

/// The REST API on `listener`.
pub(super) fn serve_rest(listener: TcpListener, shared: Arc<Shared>) -> Server {
    let app = Router::new()
        .fallback(super::rest::handle)
        .with_state(shared);
    crate::listener::serve_http(listener, app)
}

/// The gateway on `listener`; `resume`: whether this is the resume URL.
pub(super) fn serve_gateway(listener: TcpListener, shared: Arc<Shared>, resume: bool) -> Server {
    crate::listener::serve(listener, move |stream| {
        super::gateway::connection(Arc::clone(&shared), stream, resume)
    })
}
