//! The gateway connection: identify with only the intents this transport needs, then
//! every event of those kinds handed to `answers`. `twilight-gateway` keeps the
//! connection itself — heartbeats, a connection that stops acknowledging them dropped,
//! resumes at Discord's `resume_gateway_url`, reconnects when Discord asks (op 7) or
//! invalidates the session (op 9) — and this module acts on what only a person can fix:
//! the close codes that say the token or the intents are refused. Those are said once,
//! naming the setting, and the connection is not tried again until a restart (Discord
//! asks clients not to hammer it with a token it refused).

use std::sync::Arc;

use twilight_gateway::{
    CloseFrame, ConfigBuilder, Event, EventTypeFlags, Intents, Shard, ShardId, StreamExt as _,
};

use super::{Context, Place, answers};
use crate::shutdown::Shutdown;

/// Close codes Discord ends a connection with that a person must act on.
const AUTHENTICATION_FAILED: u16 = 4004;
const INVALID_INTENTS: u16 = 4013;
const DISALLOWED_INTENTS: u16 = 4014;

/// What the transport asks Discord to send. In a server channel: its messages (and,
/// privileged, their content: without it a command typed in the channel arrives empty)
/// and reactions. In a DM: DM messages (whose content comes without the privileged
/// intent) and reactions. Button presses (interactions) need no intent.
pub fn intents(place: Place) -> Intents {
    match place {
        Place::Channel(_) => {
            Intents::GUILD_MESSAGES | Intents::GUILD_MESSAGE_REACTIONS | Intents::MESSAGE_CONTENT
        }
        Place::Dm(_) => Intents::DIRECT_MESSAGES | Intents::DIRECT_MESSAGE_REACTIONS,
    }
}

/// The events read; the rest are skipped unread (a close is always read).
fn wanted() -> EventTypeFlags {
    EventTypeFlags::READY
        | EventTypeFlags::RESUMED
        | EventTypeFlags::GATEWAY_INVALIDATE_SESSION
        | EventTypeFlags::GATEWAY_RECONNECT
        | EventTypeFlags::MESSAGE_CREATE
        | EventTypeFlags::REACTION_ADD
        | EventTypeFlags::INTERACTION_CREATE
}

/// Keeps the gateway connection until shutdown, handing each event to `answers`.
pub async fn listen(ctx: Arc<Context>, mut shutdown: Shutdown) {
    // Owner checks need the bot's own id, and every answer the channel.
    if !ctx.identified(&mut shutdown).await {
        return;
    }
    let config = ConfigBuilder::new(ctx.token.expose().to_owned(), intents(ctx.place))
        .proxy_url(ctx.gateway_url.clone())
        .build();
    let mut shard = Shard::with_config(ShardId::ONE, config);
    let (queue, worker) = answers::worker(Arc::clone(&ctx), shutdown.clone());
    read(&ctx, &mut shard, &queue, &mut shutdown).await;
    shard.close(CloseFrame::NORMAL);
    worker.abort();
}

/// Reads the gateway until shutdown, or until it closes for good (then waits for
/// shutdown: see `parked`).
async fn read(
    ctx: &Context,
    shard: &mut Shard,
    queue: &tokio::sync::mpsc::Sender<answers::Answer>,
    shutdown: &mut Shutdown,
) {
    loop {
        let item = tokio::select! {
            _ = shutdown.recv() => break,
            item = shard.next_event(wanted()) => item,
        };
        let event = match item {
            Some(Ok(event)) => event,
            // One event that cannot be read (a shape twilight does not know, a broken
            // proxy): skipped, the rest still come.
            Some(Err(e)) => {
                tracing::warn!(error = %e, "skipping a Discord gateway event that cannot be read");
                continue;
            }
            None => {
                // Closed for good; `closed` has said why.
                return parked(shutdown).await;
            }
        };
        match event {
            Event::Ready(ready) => {
                ctx.health.succeeded();
                tracing::info!(session = %ready.session_id, "connected to the Discord gateway");
            }
            Event::Resumed => {
                ctx.health.succeeded();
                tracing::info!("resumed the Discord gateway session");
            }
            Event::GatewayClose(frame) => {
                if closed(frame.as_ref()) {
                    return parked(shutdown).await;
                }
            }
            Event::GatewayReconnect => tracing::info!("Discord asked for a reconnect"),
            Event::GatewayInvalidateSession(resumable) => {
                tracing::info!(resumable, "Discord invalidated the gateway session")
            }
            event => answers::receive(ctx, event, queue).await,
        }
    }
}

/// Says why the gateway closed the connection; true when only a person can fix it.
fn closed(frame: Option<&CloseFrame<'_>>) -> bool {
    let Some(frame) = frame else {
        tracing::info!("the Discord gateway connection dropped; reconnecting");
        return false;
    };
    match frame.code {
        AUTHENTICATION_FAILED => tracing::error!(
            "the Discord gateway rejected discord.bot_token (close code 4004, authentication failed): no answer can be heard until it is fixed. Copy the token again from the Bot page in Discord's developer portal, then restart"
        ),
        DISALLOWED_INTENTS => tracing::error!(
            "the Discord gateway refused the bot's intents (close code 4014): turn on Message Content Intent under Privileged Gateway Intents on the Bot page in Discord's developer portal (needed to read commands in a server channel), then restart"
        ),
        INVALID_INTENTS => tracing::error!(
            "the Discord gateway refused the bot's intents as invalid (close code 4013); restart after updating execgate"
        ),
        4010..=4012 => {
            tracing::error!(code = frame.code, reason = %frame.reason, "the Discord gateway refused the connection for good")
        }
        code => {
            tracing::info!(code, reason = %frame.reason, "the Discord gateway closed the connection; reconnecting");
            return false;
        }
    }
    true
}

/// The gateway will not take this bot until a person acts: nothing is heard, and the
/// listener stays here rather than ending (the driver would start it again, a reconnect
/// loop Discord punishes).
async fn parked(shutdown: &mut Shutdown) {
    shutdown.recv().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use twilight_model::id::Id;

    /// rustls has both providers compiled in here: the connector builds (no panic) once
    /// the daemon's provider is named as `Discord::connect` does, and a `wss://` URL gets
    /// a TLS handshake. (Without the first line this panics: rustls cannot choose.)
    #[tokio::test]
    async fn a_wss_gateway_gets_a_tls_handshake() {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut hello = [0u8; 5];
            stream.read_exact(&mut hello).await.unwrap();
            let _ = stream.write_all(b"not TLS\r\n").await;
            hello
        });
        let config = ConfigBuilder::new("x".into(), Intents::DIRECT_MESSAGES)
            .proxy_url(format!("wss://localhost:{}", addr.port()))
            .build();
        let mut shard = Shard::with_config(ShardId::ONE, config);
        let first = shard.next_event(wanted()).await;
        assert!(matches!(first, Some(Err(_))), "{first:?}");
        let hello = server.await.unwrap();
        assert_eq!(hello[0], 0x16, "a TLS handshake record began");
    }

    #[test]
    fn only_the_intents_needed_are_asked_for() {
        let channel = intents(Place::Channel(Id::new(1)));
        assert!(channel.contains(Intents::MESSAGE_CONTENT));
        assert!(!channel.intersects(Intents::DIRECT_MESSAGES | Intents::GUILD_MEMBERS));
        let dm = intents(Place::Dm(Id::new(1)));
        assert_eq!(
            dm,
            Intents::DIRECT_MESSAGES | Intents::DIRECT_MESSAGE_REACTIONS
        );
    }
}
