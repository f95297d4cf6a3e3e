//! The HTTP server: a listener on 127.0.0.1 whose connections an outage can cut, and the
//! one route every Bot API call takes, which records the call and answers it.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::Uri;
use axum::response::Response;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Notify;

use super::polling::get_updates;
use super::reply::{ApiFailure, bad, to_response};
use super::state::FakeState;
use super::types::Call;

/// The listener and its connections while the fake is up.
/// What the HTTP handlers share with the test-side handle.
pub(super) struct Shared {
    pub(super) token: String,
    pub(super) state: Mutex<FakeState>,
    /// Signalled whenever the update queue changes or a new poll supersedes an old one.
    pub(super) updates_changed: Notify,
    pub(super) started: Instant,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, FakeState> {
        // A panicking test thread must not turn every later assertion into a PoisonError.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(super) use crate::listener::{Server, listen};

pub(super) fn spawn_server(listener: TcpListener, shared: Arc<Shared>) -> Server {
    crate::listener::serve_http(listener, Router::new().fallback(handle).with_state(shared))
}

/// Every request lands here: `POST /bot<token>/<Method>` with a JSON body.
async fn handle(State(shared): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let path = percent_decode(uri.path());
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let route = match segments.as_slice() {
        [bot, method] => bot
            .strip_prefix("bot")
            .map(|token| (token, method.to_ascii_lowercase())),
        _ => None,
    };
    let method = route
        .as_ref()
        .map_or_else(|| path.clone(), |(_, method)| method.clone());
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };

    let index = {
        let mut state = shared.lock();
        state.calls.push(Call {
            method: method.clone(),
            body: body.clone(),
            at: Instant::now(),
            finished: false,
            ok: false,
            error_code: None,
            description: None,
            result: None,
        });
        state.calls.len() - 1
    };

    let reply = match route {
        None => Err(ApiFailure {
            code: 404,
            description: "Not Found".to_string(),
            retry_after: None,
        }),
        Some((token, _)) if token != shared.token => Err(ApiFailure {
            code: 401,
            description: "Unauthorized".to_string(),
            retry_after: None,
        }),
        Some(_) => {
            let fault = shared.lock().take_fault(&method);
            match fault {
                Some(fault) => Err(fault.into()),
                None if !body.is_object() => Err(bad("can't parse request JSON object")),
                None if method == "getupdates" => get_updates(&shared, &body).await,
                None => {
                    let (reply, late) = {
                        let mut state = shared.lock();
                        let late = state.take_late(&method);
                        (state.handle(&method, &body), late)
                    };
                    shared.updates_changed.notify_waiters();
                    if let Some(delay) = late {
                        tokio::time::sleep(delay).await;
                    }
                    reply
                }
            }
        }
    };

    {
        let mut state = shared.lock();
        if let Some(call) = state.calls.get_mut(index) {
            call.finished = true;
            match &reply {
                Ok(result) => {
                    call.ok = true;
                    call.result = Some(result.clone());
                }
                Err(failure) => {
                    call.error_code = Some(failure.code);
                    call.description = Some(failure.description.clone());
                }
            }
        }
    }
    to_response(&reply)
}

fn percent_decode(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
