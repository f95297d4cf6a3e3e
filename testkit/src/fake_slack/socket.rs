//! Socket Mode, server side: a websocket listener on 127.0.0.1 that takes the tickets
//! `apps.connections.open` handed out (each once), says `hello`, sends every envelope not
//! yet acknowledged to the newest connection, sends one again with `retry_attempt` once
//! its acknowledgement is late (as Slack does, a few times at most), and records the
//! acknowledgements. Tests can send `disconnect`, or drop every connection.

use std::sync::Arc;
use std::time::Instant;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

use super::APP_ID;
use super::server::Shared;
use super::types::{ACK_WAIT, SENDS_MAX};

/// What the test side tells the open connections.
#[derive(Clone, Debug)]
pub(super) enum Order {
    /// Send `{"type": "disconnect", "reason": …}`.
    Disconnect(String),
    /// Close the TCP connection without a word.
    Drop,
    /// Send this text frame as it is.
    Raw(String),
}

/// Accepts websocket connections until the fake is dropped.
pub(super) async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(connection(stream, Arc::clone(&shared)));
    }
}

async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    // The handshake's callback type is tungstenite's, large error and all.
    #[allow(clippy::result_large_err)]
    let check = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let ticket = request
            .uri()
            .query()
            .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("ticket=")))
            .unwrap_or("");
        if shared.lock().tickets.remove(ticket) {
            Ok(response)
        } else {
            let mut refused = ErrorResponse::new(Some("invalid ticket".into()));
            *refused.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::UNAUTHORIZED;
            Err(refused)
        }
    };
    let Ok(socket) = tokio_tungstenite::accept_hdr_async(stream, check).await else {
        return;
    };
    let (mut out, mut frames) = socket.split();
    let mut orders = shared.orders.subscribe();
    let number = {
        let mut state = shared.lock();
        state.connections += 1;
        state.connections
    };
    let hello = json!({
        "type": "hello",
        "num_connections": 1,
        "debug_info": {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
        "connection_info": {"app_id": APP_ID},
    });
    if out
        .send(Message::Text(hello.to_string().into()))
        .await
        .is_err()
    {
        return;
    }
    shared.changed.notify_waiters();
    loop {
        // Envelopes go to the newest connection, as Slack picks one of them.
        if shared.lock().connections == number {
            for frame in due(&shared) {
                if out.send(Message::Text(frame.into())).await.is_err() {
                    return;
                }
            }
        }
        tokio::select! {
            _ = shared.changed.notified() => {}
            _ = tokio::time::sleep(ACK_WAIT / 4) => {}
            order = orders.recv() => match order {
                Ok(Order::Disconnect(reason)) => {
                    let frame = json!({"type": "disconnect", "reason": reason,
                                       "debug_info": {"host": "applink-fake"}});
                    let _ = out.send(Message::Text(frame.to_string().into())).await;
                }
                Ok(Order::Raw(text)) => {
                    let _ = out.send(Message::Text(text.into())).await;
                }
                Ok(Order::Drop) | Err(broadcast::error::RecvError::Closed) => return,
                Err(broadcast::error::RecvError::Lagged(_)) => {}
            },
            frame = frames.next() => match frame {
                Some(Ok(Message::Text(text))) => ack(&shared, text.as_str()),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// Frames to send now: envelopes never sent, and those whose acknowledgement is late
/// (sent again with the attempt counted, up to `SENDS_MAX` sends).
fn due(shared: &Shared) -> Vec<String> {
    let mut state = shared.lock();
    let now = Instant::now();
    let mut frames = Vec::new();
    for envelope in state.outbox.iter_mut() {
        let late = envelope
            .last_sent
            .is_some_and(|at| now.duration_since(at) >= ACK_WAIT);
        if envelope.acked || envelope.sent >= SENDS_MAX || (envelope.sent > 0 && !late) {
            continue;
        }
        let retry = envelope.sent;
        envelope.sent += 1;
        envelope.last_sent = Some(now);
        let mut frame = json!({
            "envelope_id": envelope.envelope_id,
            "type": envelope.kind,
            "payload": envelope.payload,
            "accepts_response_payload": false,
        });
        if envelope.kind == "events_api" {
            frame["retry_attempt"] = json!(retry);
            frame["retry_reason"] = json!(if retry > 0 { "timeout" } else { "" });
        }
        frames.push(frame.to_string());
    }
    frames
}

/// A frame from the client: an acknowledgement `{"envelope_id": …}` marks its envelope.
fn ack(shared: &Shared, text: &str) {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let Some(id) = value.get("envelope_id").and_then(Value::as_str) else {
        return;
    };
    let mut state = shared.lock();
    if let Some(envelope) = state.outbox.iter_mut().find(|e| e.envelope_id == id) {
        envelope.acked = true;
    }
    state.acks.push(id.to_string());
}
