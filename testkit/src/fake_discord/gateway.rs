//! The gateway, one WebSocket connection at a time, as Discord's documented opcodes say:
//! op 10 Hello with the heartbeat interval; op 2 Identify checked (the token: close 4004;
//! privileged intents not allowed: close 4014) and answered with READY (a session id and
//! the resume URL); op 1 heartbeats acknowledged with op 11, and a connection that stops
//! sending them closed (4009, its session over); op 6 Resume replaying every dispatch
//! after the client's sequence number, then RESUMED, or op 9 when the session cannot be
//! resumed. Tests send op 7 (reconnect) and op 9 through the handle.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_websockets::{CloseCode, Message, ServerBuilder};

use super::server::Shared;
use super::state::{APPLICATION_ID, GUILD_ID, Out, Session};
use super::types::{Identify, intents};

/// Serves one connection until either side ends it.
pub(super) async fn connection(shared: Arc<Shared>, stream: TcpStream, resume: bool) {
    let Ok((_, mut ws)) = ServerBuilder::new().accept(stream).await else {
        return;
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
    let interval = *shared
        .heartbeat_interval
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    {
        let mut state = shared.lock();
        state.connections += 1;
        if resume {
            state.resume_connections += 1;
        }
    }
    let hello = json!({"op": 10, "d": {"heartbeat_interval": interval}, "s": null, "t": null});
    if ws.send(Message::text(hello.to_string())).await.is_err() {
        return;
    }
    // The first heartbeat may come up to one interval late (jitter), then one per
    // interval; Discord allows some slack.
    let allowance = Duration::from_millis(interval * 3 / 2 + 250);
    let mut deadline = Instant::now() + Duration::from_millis(interval) + allowance;
    loop {
        tokio::select! {
            frame = ws.next() => {
                let Some(Ok(frame)) = frame else { break };
                if frame.is_close() {
                    break;
                }
                let Some(text) = frame.as_text() else { continue };
                let reply = received(&shared, &tx, text, &mut deadline, allowance);
                let mut end = false;
                for out in reply {
                    end |= send(&mut ws, out).await;
                }
                if end {
                    break;
                }
            }
            out = rx.recv() => {
                let Some(out) = out else { break };
                if send(&mut ws, out).await {
                    break;
                }
            }
            _ = tokio::time::sleep_until(deadline) => {
                // No heartbeat in time: the session is over.
                {
                    let mut state = shared.lock();
                    if let Some(s) = state.session.as_mut() {
                        s.resumable = false;
                    }
                }
                let _ = send(&mut ws, Out::Close(4009, "Session timed out.".into())).await;
                break;
            }
        }
    }
    let mut state = shared.lock();
    if state.live.as_ref().is_some_and(|l| l.same_channel(&tx)) {
        state.live = None;
    }
}

/// Sends `out`; true when the connection is to end.
async fn send(ws: &mut tokio_websockets::WebSocketStream<TcpStream>, out: Out) -> bool {
    match out {
        Out::Text(text) => ws.send(Message::text(text)).await.is_err(),
        Out::Close(code, reason) => {
            let code = CloseCode::try_from(code).ok();
            let _ = ws.send(Message::close(code, &reason)).await;
            let _ = ws.flush().await;
            true
        }
        Out::Drop => true,
    }
}

/// What the client sent, and what is answered.
fn received(
    shared: &Shared,
    tx: &mpsc::UnboundedSender<Out>,
    text: &str,
    deadline: &mut Instant,
    allowance: Duration,
) -> Vec<Out> {
    let Ok(payload) = serde_json::from_str::<Value>(text) else {
        return vec![Out::Close(4002, "Error while decoding payload.".into())];
    };
    let mut state = shared.lock();
    match payload["op"].as_u64() {
        Some(1) => {
            state.heartbeats += 1;
            *deadline = Instant::now() + allowance;
            if state.silent {
                vec![]
            } else {
                vec![Out::Text(
                    json!({"op": 11, "d": null, "s": null, "t": null}).to_string(),
                )]
            }
        }
        Some(2) => {
            let d = &payload["d"];
            let token_ok = token_is(&d["token"], &shared.token) && !state.token_revoked;
            let wanted = d["intents"].as_u64().unwrap_or(0);
            state.identifies.push(Identify {
                token_ok,
                intents: wanted,
            });
            if !token_ok {
                return vec![Out::Close(4004, "Authentication failed.".into())];
            }
            if wanted & intents::PRIVILEGED != 0 && !state.privileged_allowed {
                return vec![Out::Close(4014, "Disallowed intent(s).".into())];
            }
            let id = format!("fake-session-{}", state.id());
            state.session = Some(Session {
                id: id.clone(),
                seq: 0,
                log: Vec::new(),
                resumable: true,
            });
            state.live = Some(tx.clone());
            let mut user = state.bot.json();
            user["bot"] = json!(true);
            user["mfa_enabled"] = json!(false);
            user["verified"] = json!(true);
            user["flags"] = json!(0);
            let ready = json!({
                "v": 10,
                "user": user,
                "guilds": [{"id": GUILD_ID.to_string(), "unavailable": true}],
                "session_id": id,
                "resume_gateway_url": shared.resume_url,
                "shard": [0, 1],
                "application": {"id": APPLICATION_ID.to_string(), "flags": 0},
            });
            state.dispatch("READY", ready);
            vec![]
        }
        Some(6) => {
            let d = &payload["d"];
            let seq = d["seq"].as_u64().unwrap_or(0);
            let ok = token_is(&d["token"], &shared.token)
                && state.session.as_ref().is_some_and(|s| {
                    s.resumable && Some(s.id.as_str()) == d["session_id"].as_str()
                });
            if !ok {
                return vec![Out::Text(
                    json!({"op": 9, "d": false, "s": null, "t": null}).to_string(),
                )];
            }
            state.resumes += 1;
            let missed: Vec<Out> = state
                .session
                .as_ref()
                .map(|s| {
                    s.log
                        .iter()
                        .filter(|(n, _)| *n > seq)
                        .map(|(_, f)| Out::Text(f.clone()))
                        .collect()
                })
                .unwrap_or_default();
            for out in missed {
                let _ = tx.send(out);
            }
            state.live = Some(tx.clone());
            state.dispatch("RESUMED", json!({}));
            vec![]
        }
        _ => vec![Out::Close(4001, "Unknown opcode.".into())],
    }
}

/// Whether `sent` is the bot's token (Discord takes it with or without `Bot `).
fn token_is(sent: &Value, token: &str) -> bool {
    sent.as_str()
        .is_some_and(|t| t.strip_prefix("Bot ").unwrap_or(t) == token)
}
