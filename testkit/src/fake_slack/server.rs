//! The Web API's HTTP server: a listener on 127.0.0.1 whose connections an outage can cut,
//! and the one route every call takes (`POST /api/METHOD`), which reads the token (the
//! `Authorization: Bearer` header; for a form-encoded body also its `token` field, as
//! Slack accepts), reads the arguments (JSON or form-encoded), records the call and
//! answers as Slack does: HTTP 200 with `ok`, or 429 with `Retry-After`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Notify, broadcast};

use super::methods::Failure;
use super::socket::Order;
use super::state::FakeState;
use super::types::{Call, Fault};

/// The listener and its connections while the Web API is up.
/// What the handlers and the socket share with the test-side handle.
pub(super) struct Shared {
    pub(super) state: Mutex<FakeState>,
    /// Woken whenever envelopes are queued or acknowledged.
    pub(super) changed: Notify,
    pub(super) orders: broadcast::Sender<Order>,
    /// The Socket Mode listener's address, for the URLs `apps.connections.open` gives.
    pub(super) socket_addr: SocketAddr,
    pub(super) started: Instant,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, FakeState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(super) use crate::listener::{Server, listen};

pub(super) fn spawn_server(listener: TcpListener, shared: Arc<Shared>) -> Server {
    crate::listener::serve_http(listener, Router::new().fallback(handle).with_state(shared))
}

/// The arguments of a call: a JSON object, or a form's fields as strings; and the token
/// a form carried.
fn arguments(headers: &HeaderMap, body: &Bytes) -> Result<(Value, Option<String>), &'static str> {
    let kind = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok((json!({}), None));
    }
    if kind.starts_with("application/json") {
        let value: Value = serde_json::from_slice(body).map_err(|_| "invalid_json")?;
        return if value.is_object() {
            Ok((value, None))
        } else {
            Err("invalid_json")
        };
    }
    if kind.starts_with("application/x-www-form-urlencoded") {
        let mut args = Map::new();
        let mut token = None;
        for (key, value) in form_urlencoded(body) {
            if key == "token" {
                token = Some(value);
            } else {
                args.insert(key, Value::String(value));
            }
        }
        return Ok((Value::Object(args), token));
    }
    Err("invalid_form_data")
}

fn form_urlencoded(body: &[u8]) -> Vec<(String, String)> {
    let decode = |s: &str| {
        let s = s.replace('+', " ");
        let bytes = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
                (b'%', Some(b)) => {
                    out.push(b);
                    i += 3;
                }
                (b, _) => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    String::from_utf8_lossy(body)
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let method = uri.path().strip_prefix("/api/").unwrap_or("").to_string();
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let parsed = arguments(&headers, &body);
    let args = parsed
        .as_ref()
        .map(|(a, _)| a.clone())
        .unwrap_or(Value::Null);
    let index = {
        let mut state = shared.lock();
        state.calls.push(Call {
            method: method.clone(),
            args: args.clone(),
            authorized: bearer.is_some(),
            at: Instant::now(),
            finished: false,
            ok: false,
            error: None,
        });
        state.calls.len() - 1
    };

    let mut late = None;
    let result: Result<Value, Failure> = (|| {
        let (args, form_token) = parsed.map_err(|e| Failure::Slack {
            error: e.into(),
            needed: None,
        })?;
        let mut state = shared.lock();
        let caller = state.authenticate(bearer.as_deref().or(form_token.as_deref()))?;
        match state.take_fault(&method) {
            Some(Fault::RateLimited { retry_after }) => {
                return Err(Failure::RateLimited(retry_after));
            }
            Some(Fault::Error(name)) => {
                return Err(Failure::Slack {
                    error: name,
                    needed: None,
                });
            }
            Some(Fault::ServerError) => return Err(Failure::ServerError),
            None => {}
        }
        late = state.take_late(&method);
        state.handle(&method, caller, &args)
    })();
    shared.changed.notify_waiters();
    if let Some(delay) = late {
        tokio::time::sleep(delay).await;
    }

    let mut result = result;
    if let Ok(answer) = &mut result
        && method == "apps.connections.open"
        && let Some(path) = answer["url"].as_str()
    {
        answer["url"] = json!(format!("ws://{}{path}", shared.socket_addr));
    }
    {
        let mut state = shared.lock();
        if let Some(call) = state.calls.get_mut(index) {
            call.finished = true;
            match &result {
                Ok(_) => call.ok = true,
                Err(Failure::Slack { error, .. }) => call.error = Some(error.clone()),
                Err(Failure::RateLimited(_)) => call.error = Some("ratelimited".into()),
                Err(Failure::ServerError) => call.error = Some("HTTP 500".into()),
            }
        }
    }
    respond(result)
}

fn respond(result: Result<Value, Failure>) -> Response {
    let json_response = |status: StatusCode, body: Value| {
        Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "application/json; charset=utf-8")
            .body(Body::from(body.to_string()))
            .expect("a response builds")
    };
    match result {
        Ok(answer) => json_response(StatusCode::OK, answer),
        Err(Failure::RateLimited(wait)) => {
            let mut response = json_response(
                StatusCode::TOO_MANY_REQUESTS,
                json!({"ok": false, "error": "ratelimited"}),
            );
            response.headers_mut().insert(
                header::RETRY_AFTER,
                wait.to_string().parse().expect("a number"),
            );
            response
        }
        Err(Failure::ServerError) => Response::builder()
            .status(StatusCode::INTERNAL_SERVER_ERROR)
            .header(header::CONTENT_TYPE, "text/html")
            .body(Body::from(
                "<html><body>500 Internal Server Error</body></html>",
            ))
            .expect("a response builds"),
        Err(Failure::Slack { error, needed }) => {
            let mut body = json!({"ok": false, "error": error});
            if error == "missing_scope" {
                body["needed"] = json!(needed);
                body["provided"] = json!("(the app's other scopes)");
            } else if let Some(detail) = needed {
                body["response_metadata"] = json!({"messages": [detail]});
            }
            json_response(StatusCode::OK, body)
        }
    }
}
