//! Faults injected into the fake: Bot API errors instead of answers, answers that come
//! late, and a real outage of the server.

use std::time::Duration;

use super::FakeTelegram;
use super::reply::ApiFailure;
use super::server::{listen, spawn_server};
use super::state::FakeState;

/// An error to answer instead of handling a call (see `FakeTelegram::fail_next`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 429 "Too Many Requests: retry after N" with `parameters.retry_after`.
    TooManyRequests { retry_after: u32 },
    /// Any 4xx error with this exact description (e.g. 403 "Forbidden: bot was blocked by the user").
    Error { code: u16, description: String },
}

impl From<Fault> for ApiFailure {
    fn from(fault: Fault) -> ApiFailure {
        match fault {
            Fault::TooManyRequests { retry_after } => ApiFailure {
                code: 429,
                description: format!("Too Many Requests: retry after {retry_after}"),
                retry_after: Some(retry_after),
            },
            Fault::Error { code, description } => ApiFailure {
                code,
                description,
                retry_after: None,
            },
        }
    }
}

impl FakeTelegram {
    /// The next `times` calls to `method` (any case) answer `fault` instead of being handled.
    /// Faults queue up per method and are used in order.
    pub fn fail_next(&self, method: &str, times: usize, fault: Fault) {
        if let Fault::Error { code, .. } = &fault {
            // teloxide sleeps 10 s on any 5xx before reading it: never produce one.
            assert!(
                (400..500).contains(code),
                "fail_next takes 4xx codes only, got {code}"
            );
        }
        let mut state = self.state();
        let queue = state.faults.entry(method.to_ascii_lowercase()).or_default();
        queue.extend(std::iter::repeat_n(fault, times));
    }

    /// The next `times` calls to `method` (any case; not getUpdates) are handled at once
    /// but answered `delay` later, as over a slow network: what the call did (a message the
    /// owner can already see, and answer) happens before the bot hears back.
    pub fn answer_late(&self, method: &str, times: usize, delay: Duration) {
        let mut state = self.state();
        let queue = state.late.entry(method.to_ascii_lowercase()).or_default();
        queue.extend(std::iter::repeat_n(delay, times));
    }

    // --- outages -------------------------------------------------------------------------

    /// A real outage, effective at once: new connections are refused, open ones (in-flight
    /// long polls included) are cut and end with a network error on the client. State
    /// survives. Call from inside the tokio runtime. As with a real restart, a connection
    /// the client kept alive across `go_down(); come_back();` with no await in between can
    /// still fail one request with a reset.
    pub fn go_down(&self) {
        let server = self
            .inner
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(server) = server {
            server.stop();
        }
    }

    /// Ends an outage: listens on the same port again. Call from inside the tokio runtime.
    pub fn come_back(&self) {
        let mut server = self.inner.server.lock().unwrap_or_else(|e| e.into_inner());
        if server.is_some() {
            return;
        }
        // `go_down` freed the port already; retry briefly in case something else holds it.
        let mut attempts = 0;
        let listener = loop {
            match listen(self.inner.addr) {
                Ok(listener) => break listener,
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && attempts < 50 => {
                    attempts += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => panic!(
                    "the fake Telegram cannot listen on {} again: {e}",
                    self.inner.addr
                ),
            }
        };
        *server = Some(spawn_server(listener, self.inner.shared.clone()));
    }

    pub fn is_up(&self) -> bool {
        self.inner
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }
}

impl FakeState {
    pub(super) fn take_fault(&mut self, method: &str) -> Option<Fault> {
        self.faults.get_mut(method)?.pop_front()
    }

    pub(super) fn take_late(&mut self, method: &str) -> Option<Duration> {
        self.late.get_mut(method)?.pop_front()
    }
}
