//! The Discord transport: posts each request that needs a human to the configured channel
//! (or a direct message to the first owner), takes answers from commands, replies,
//! reactions and buttons, and edits the message once the request is over, whoever ended
//! it.
//!
//! `message` renders what the owner reads (markdown, buttons); `deliver` is Discord as a
//! chat of the driver (`transport::chat`: post, reply, edit, and what each REST error
//! means); `gateway` keeps the gateway connection (heartbeats, resumes, reconnects, close
//! codes) and hands each event on; `answers` turns what an owner does — a command, a
//! reply, a reaction, a button press (an interaction, acknowledged at once) — into
//! `Approvals::resolve`; `rest` makes the REST calls (reqwest, so that a 429 is waited
//! out as Discord says). The gateway goes through `twilight-gateway`; both read Discord's
//! types from `twilight-model`.
//!
//! Discord being down never blocks anything else: requests still expire on their timers,
//! and allowlisted requests never touch this module.

mod answers;
mod deliver;
mod gateway;
pub mod message;
mod rest;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;
use twilight_model::channel::Channel;
use twilight_model::id::Id;
use twilight_model::id::marker::{ChannelMarker, MessageMarker, UserMarker};

use crate::approvals::{Approvals, Event};
use crate::config::{DiscordConfig, ReactionMap, Secret};
use crate::shutdown::Shutdown;
use crate::transport::Left;
use crate::transport::chat;
use crate::transport::health::{Backoff, Health};
use crate::transport::limiter::Limiter;
use crate::transport::posted::Posted;
use rest::{Rest, RestError};

/// How long `connect` waits for `GET /users/@me` before starting without it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// After shutdown has cancelled every request, how long their messages get to be edited.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A connected Discord transport, ready to `spawn`.
pub struct Discord {
    ctx: Arc<Context>,
}

/// Where requests go: a channel named in the configuration, or a direct message with the
/// first owner, whose channel is asked of Discord.
#[derive(Clone, Copy, Debug)]
enum Place {
    Channel(Id<ChannelMarker>),
    Dm(Id<UserMarker>),
}

/// What every part of the transport shares.
struct Context {
    http: Rest,
    /// Kept for the gateway's identify, and to scrub it from error texts.
    token: Secret,
    gateway_url: String,
    place: Place,
    /// The channel requests go to and answers come from, once known (a DM's is opened).
    channel: watch::Sender<Option<Id<ChannelMarker>>>,
    owners: Vec<Id<UserMarker>>,
    reactions: ReactionMap,
    approvals: Arc<Approvals>,
    limiter: Limiter,
    /// The bot's own user, from `GET /users/@me`: its own messages are never answers.
    me: OnceLock<Id<UserMarker>>,
    health: Health,
    posted: Posted<Id<MessageMarker>>,
}

impl Discord {
    /// Builds the client and asks Discord who the bot is. A token Discord rejects is an
    /// error; an API that cannot be reached is a warning, and the transport keeps trying.
    pub async fn connect(
        config: &DiscordConfig,
        approvals: Arc<Approvals>,
    ) -> Result<Discord, String> {
        let (Some(token), Some(first)) = (config.bot_token.clone(), config.owner_ids.first())
        else {
            return Err("discord.bot_token and discord.owner_ids must both be set".into());
        };
        // Both TLS providers are compiled into this tree (other crates ask for each), so
        // rustls cannot pick one by itself: the one the rest of the daemon uses is named.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let http = Rest::new(config.api(), &token)?;
        let place = match config.channel_id {
            Some(id) => Place::Channel(Id::new(id)),
            None => Place::Dm(Id::new(*first)),
        };
        let counters = approvals.metrics().chat("discord");
        let ctx = Arc::new(Context {
            http,
            gateway_url: config.gateway().trim_end_matches('/').to_owned(),
            token,
            place,
            channel: watch::Sender::new(match place {
                Place::Channel(id) => Some(id),
                Place::Dm(_) => None,
            }),
            owners: config.owner_ids.iter().map(|&id| Id::new(id)).collect(),
            reactions: config.reaction_map().map_err(|e| e.to_string())?,
            approvals,
            limiter: pace(),
            me: OnceLock::new(),
            health: Health::new("Discord", "the Discord API").counted(counters),
            posted: Posted::new(),
        });
        match tokio::time::timeout(CONNECT_TIMEOUT, ctx.identify()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) if e.is_unauthorized() => {
                return Err("Discord rejected discord.bot_token (401 Unauthorized): copy the token again from the Bot page of the application in Discord's developer portal (Reset Token)".into());
            }
            Ok(Err(e)) => tracing::warn!(
                error = %ctx.scrub(&e),
                "cannot reach the Discord API at start; retrying in the background. Requests that need a human wait and expire as usual"
            ),
            Err(_) => tracing::warn!(
                "the Discord API did not answer within {}s at start; retrying in the background",
                CONNECT_TIMEOUT.as_secs()
            ),
        }
        Ok(Discord { ctx })
    }

    /// Runs the transport until shutdown. By then the daemon has cancelled every pending
    /// request; the task edits their messages (within a grace period) and ends.
    ///
    /// `events` comes from `approvals.subscribe()`, taken before any request can arrive;
    /// `left`: requests the last run left pending, whose messages are edited to say so.
    pub fn spawn(
        self,
        events: broadcast::Receiver<Event>,
        left: Arc<[Left]>,
        shutdown: Shutdown,
    ) -> JoinHandle<()> {
        tokio::spawn(run(self.ctx, events, left, shutdown))
    }
}

/// Discord allows five messages per five seconds in a channel; edits count here too,
/// which keeps well within their own limit.
fn pace() -> Limiter {
    Limiter::window(5, Duration::from_secs(5))
}

async fn run(
    ctx: Arc<Context>,
    events: broadcast::Receiver<Event>,
    left: Arc<[Left]>,
    shutdown: Shutdown,
) {
    let listening = {
        let (ctx, shutdown) = (Arc::clone(&ctx), shutdown.clone());
        move || tokio::spawn(gateway::listen(Arc::clone(&ctx), shutdown.clone()))
    };
    let listener = chat::run(ctx, events, left, shutdown, SHUTDOWN_GRACE, listening).await;
    if tokio::time::timeout(SHUTDOWN_GRACE, listener)
        .await
        .is_err()
    {
        tracing::warn!("the Discord gateway connection did not stop in time");
    }
}

impl Context {
    /// Learns who the bot is and, for a DM, which channel it is: `GET /users/@me`, then
    /// `POST /users/@me/channels`. Each is asked until it is known.
    async fn identify(&self) -> Result<(), RestError> {
        if self.me.get().is_none() {
            let me: twilight_model::user::CurrentUser = self
                .http
                .call(Method::GET, "/users/@me", None, true)
                .await?;
            tracing::info!(bot = %me.name, id = %me.id, "connected to the Discord API");
            let _ = self.me.set(me.id);
        }
        if let Place::Dm(owner) = self.place
            && self.channel.borrow().is_none()
        {
            let body = json!({"recipient_id": owner.to_string()});
            let dm: Channel = self
                .http
                .call(Method::POST, "/users/@me/channels", Some(&body), true)
                .await?;
            tracing::info!(channel = %dm.id, owner = %owner, "requests go to a direct message with the first of discord.owner_ids");
            self.channel.send_replace(Some(dm.id));
        }
        Ok(())
    }

    /// Waits until the bot and its channel are known, asking Discord with backoff.
    /// False: shutdown came first.
    async fn identified(&self, shutdown: &mut Shutdown) -> bool {
        let mut backoff = Backoff::new();
        while self.me.get().is_none() || self.channel.borrow().is_none() {
            let failure = tokio::select! {
                _ = shutdown.recv() => return false,
                r = self.identify() => match r {
                    Ok(()) => {
                        self.health.succeeded();
                        continue;
                    }
                    Err(e) => e,
                },
            };
            if failure.is_unauthorized() {
                tracing::error!(
                    "Discord rejected discord.bot_token (401 Unauthorized): nothing can be posted or heard until it is fixed"
                );
            } else if matches!(failure.code, Some(50007 | 50001 | 50013)) {
                tracing::error!(error = %self.scrub(&failure), "Discord refuses a direct message to the first of discord.owner_ids: the owner must share a server with the bot and allow direct messages from its members, or set discord.channel_id");
            }
            self.health.failed("GET /users/@me", &self.scrub(&failure));
            tokio::select! {
                _ = shutdown.recv() => return false,
                _ = backoff.wait(failure.retry_after, &self.health) => {}
            }
        }
        true
    }

    /// The channel, once known.
    fn channel(&self) -> Option<Id<ChannelMarker>> {
        *self.channel.borrow()
    }

    /// An error's text with the bot token cut out (none should hold it: it travels in a
    /// header only).
    fn scrub(&self, e: &RestError) -> String {
        e.to_string().replace(self.token.expose(), "<token>")
    }

    fn is_owner(&self, user: Id<UserMarker>) -> bool {
        self.me.get() != Some(&user) && self.owners.contains(&user)
    }
}

/// `decided_by` for a Discord user: the id, which never changes (names do).
fn who(user: Id<UserMarker>) -> String {
    format!("discord:{user}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn five_messages_take_at_least_four_seconds() {
        let limiter = pace();
        let start = tokio::time::Instant::now();
        for _ in 0..6 {
            limiter.acquire().await;
        }
        assert!(
            start.elapsed() >= Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}
