//! Slack's Socket Mode: a websocket whose URL `apps.connections.open` gives (app token),
//! on which Slack sends `hello`, then envelopes (`events_api`, `interactive`), each to be
//! acknowledged with its `envelope_id` within three seconds or sent again, and
//! `disconnect` when it wants a new connection.
//!
//! Every envelope is acknowledged the moment it is read, before it is handled: handling
//! may wait on Slack's Web API or on a post in flight for longer than Slack waits, and an
//! envelope sent again is recognised by its event id and handled once. An envelope that
//! cannot be read is acknowledged too (it would come back forever), logged and skipped.
//! Connections are opened again with backoff; a token Slack rejects is said every time,
//! naming `slack.app_token`, and retried at the backoff's slowest, so that putting a good
//! token in place and restarting is all it takes.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use super::api::{self, ApiError, Token};
use super::events::{self, Item};
use super::{Context, SocketUrl, advice};
use crate::shutdown::Shutdown;
use crate::transport::chat;
use crate::transport::health::Backoff;

/// How often we ping Slack; a connection silent for three of these is dead.
const PING_EVERY: Duration = Duration::from_secs(20);
/// How long opening the websocket may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Items read and not yet handled; past it, reading waits.
const QUEUE: usize = 256;

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// How a connection ended.
#[derive(Debug)]
enum End {
    Shutdown,
    /// Slack asked for a new connection (`refresh_requested`, `warning` and then
    /// closed): open one at once.
    Refresh,
    /// Dropped, closed or silent: open one after a backoff, or after the wait Slack
    /// asked for.
    Lost(String, Option<Duration>),
    /// Slack refuses (a token it rejects, Socket Mode turned off): said already, then
    /// tried again at the backoff's slowest.
    Refused,
}

/// How long to wait after a refusal before trying again.
const AFTER_REFUSAL: Duration = Duration::from_secs(30);

/// Reads Slack's envelopes until shutdown, opening the connection again whenever it
/// ends; the answers are handled in order by a task of their own, so that every
/// envelope is acknowledged at once.
pub async fn listen(ctx: Arc<Context>, mut shutdown: Shutdown) {
    let (queue, items) = mpsc::channel(QUEUE);
    let handler = tokio::spawn(handle_all(Arc::clone(&ctx), items, shutdown.clone()));
    let mut backoff = Backoff::new();
    loop {
        let end = connection(&ctx, &queue, &mut backoff, &mut shutdown).await;
        let told = match end {
            End::Shutdown => break,
            End::Refresh => {
                tracing::debug!("Slack asked for a new Socket Mode connection");
                continue;
            }
            End::Lost(why, told) => {
                ctx.health.failed("Socket Mode", &why);
                told
            }
            End::Refused => Some(AFTER_REFUSAL),
        };
        tokio::select! {
            _ = shutdown.recv() => break,
            _ = backoff.wait(told, &ctx.health) => {}
        }
    }
    drop(queue);
    let _ = tokio::time::timeout(Duration::from_secs(3), handler).await;
}

/// One connection, from `apps.connections.open` to its end.
async fn connection(
    ctx: &Arc<Context>,
    queue: &mpsc::Sender<Item>,
    backoff: &mut Backoff,
    shutdown: &mut Shutdown,
) -> End {
    let first = ctx.lock_first_url().take();
    let url = match first {
        Some(url) => url,
        None => {
            let nothing = json!({});
            let opening = ctx
                .api
                .call::<SocketUrl>("apps.connections.open", Token::App, &nothing);
            let opened = tokio::select! {
                _ = shutdown.recv() => return End::Shutdown,
                opened = opening => opened,
            };
            match opened {
                Ok(opened) => opened.url,
                Err(e) => return refused(ctx, &e),
            }
        }
    };
    let socket = tokio::select! {
        _ = shutdown.recv() => return End::Shutdown,
        socket = open(&url) => match socket {
            Ok(socket) => socket,
            Err(why) => return End::Lost(why, None),
        },
    };
    session(ctx, socket, queue, backoff, shutdown).await
}

/// A failed `apps.connections.open`: a refusal is said every time, an outage once.
fn refused(ctx: &Context, e: &ApiError) -> End {
    if let Some(advice) = advice(e) {
        tracing::error!(error = %e, "cannot open Slack's Socket Mode: {advice}. Answers from Slack cannot be read until then");
        return End::Refused;
    }
    End::Lost(e.to_string(), ctx.told(e))
}

/// Opens the websocket at `url` (its ticket is a secret of sorts: never logged).
async fn open(url: &str) -> Result<Socket, String> {
    let tls = api::tls()?;
    let connecting = tokio_tungstenite::connect_async_tls_with_config(
        url,
        None,
        false,
        Some(Connector::Rustls(Arc::new(tls))),
    );
    match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
        Ok(Ok((socket, _))) => Ok(socket),
        Ok(Err(e)) => Err(format!("cannot open the Socket Mode websocket: {e}")),
        Err(_) => Err("the Socket Mode websocket did not open in time".into()),
    }
}

/// Reads one connection's frames until it ends.
async fn session(
    ctx: &Arc<Context>,
    socket: Socket,
    queue: &mpsc::Sender<Item>,
    backoff: &mut Backoff,
    shutdown: &mut Shutdown,
) -> End {
    let (mut out, mut frames) = socket.split();
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    let mut heard = Instant::now();
    loop {
        let frame = tokio::select! {
            _ = shutdown.recv() => {
                let _ = out.send(Message::Close(None)).await;
                return End::Shutdown;
            }
            _ = ping.tick() => {
                if heard.elapsed() > PING_EVERY * 3 {
                    return End::Lost("the Socket Mode connection went silent".into(), None);
                }
                if let Err(e) = out.send(Message::Ping(Vec::new().into())).await {
                    return End::Lost(format!("Socket Mode: {e}"), None);
                }
                continue;
            }
            frame = frames.next() => frame,
        };
        heard = Instant::now();
        let text = match frame {
            None => return End::Lost("Slack closed the Socket Mode connection".into(), None),
            Some(Err(e)) => return End::Lost(format!("Socket Mode: {e}"), None),
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_))) => {
                return End::Lost("Slack closed the Socket Mode connection".into(), None);
            }
            Some(Ok(_)) => continue,
        };
        let (ack, read) = read_frame(ctx, text.as_str());
        if let Some(envelope_id) = ack {
            let ack = json!({ "envelope_id": envelope_id }).to_string();
            if let Err(e) = out.send(Message::Text(ack.into())).await {
                return End::Lost(format!("Socket Mode: {e}"), None);
            }
        }
        match read {
            Frame::Hello => {
                ctx.health.succeeded();
                *backoff = Backoff::new();
                tracing::debug!("Slack's Socket Mode said hello");
            }
            Frame::Items(items) => {
                for item in items {
                    if queue.send(item).await.is_err() {
                        return End::Shutdown;
                    }
                }
            }
            Frame::Disconnect(reason) => {
                tracing::debug!(reason, "Slack sent disconnect");
                if reason == "link_disabled" {
                    tracing::error!(
                        "Slack closed Socket Mode: it is turned off for the app; turn it on (Settings › Socket Mode). Answers from Slack cannot be read until then"
                    );
                    return End::Refused;
                }
                return End::Refresh;
            }
            Frame::Nothing => {}
        }
    }
}

/// What a frame says.
#[derive(Debug)]
enum Frame {
    Hello,
    Disconnect(String),
    /// An envelope's answers to handle (none, once seen before or of a kind not used).
    Items(Vec<Item>),
    Nothing,
}

/// Reads one text frame: the envelope id to acknowledge, if it has one, and what it
/// says. Never fails: what cannot be read is logged and skipped.
fn read_frame(ctx: &Context, text: &str) -> (Option<String>, Frame) {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        tracing::warn!(
            bytes = text.len(),
            "skipping a Socket Mode frame that is not JSON"
        );
        return (None, Frame::Nothing);
    };
    let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
    let envelope = value
        .get("envelope_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match kind {
        "hello" => return (None, Frame::Hello),
        "disconnect" => {
            let reason = value.get("reason").and_then(Value::as_str).unwrap_or("");
            return (None, Frame::Disconnect(reason.to_owned()));
        }
        _ => {}
    }
    let Some(envelope_id) = envelope else {
        tracing::warn!(
            kind,
            "skipping a Socket Mode frame with no envelope_id, of a kind not known"
        );
        return (None, Frame::Nothing);
    };
    let payload = value.get("payload").unwrap_or(&Value::Null);
    // Slack sends an envelope again with the same event id when an acknowledgement was
    // late; an interaction has no event id, its envelope id stands for it.
    let event_id = payload.get("event_id").and_then(Value::as_str);
    let key = event_id.unwrap_or(&envelope_id).to_owned();
    let read = match kind {
        "events_api" => events::read_event(payload),
        "interactive" => events::read_interaction(payload),
        "slash_commands" => {
            tracing::info!(
                "ignoring a slash command: execgate has none; answer in the request's thread without the slash"
            );
            Ok(None)
        }
        _ => Ok(None),
    };
    let item = match read {
        Ok(item) => item,
        Err(why) => {
            tracing::warn!(
                kind,
                envelope_id,
                why,
                "skipping a Slack envelope that cannot be read"
            );
            return (Some(envelope_id), Frame::Nothing);
        }
    };
    let items = match item {
        Some(item) if ctx.first_time(&key) => vec![item],
        Some(_) => {
            let retry = value.get("retry_attempt").and_then(Value::as_u64);
            tracing::debug!(key, retry, "skipping an envelope already handled");
            vec![]
        }
        None => vec![],
    };
    (Some(envelope_id), Frame::Items(items))
}

/// Handles what the connections read, in order, until they stop.
async fn handle_all(ctx: Arc<Context>, mut items: mpsc::Receiver<Item>, shutdown: Shutdown) {
    while let Some(item) = items.recv().await {
        // Held while it answers a message whose post is in flight.
        let to = events::answered_message(&ctx, &item);
        chat::when_known(&ctx, to, &shutdown, |ctx| async move {
            events::handle(&ctx, item).await
        })
        .await;
    }
}
