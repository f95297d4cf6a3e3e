//! The Telegram transport: posts each request that needs a human to the owner's chat,
//! takes answers from commands, replies, reactions and buttons, and edits the message
//! once the request is over, whoever ended it.
//!
//! `message` renders what the owner reads; `transport::limiter` paces what we write; `deliver` owns
//! one request's message from post to final edit; `updates` long-polls the Bot API and
//! turns owner actions into `Approvals::resolve` calls; `fetch` reads each polled update
//! on its own, so one that cannot be read is skipped instead of stopping the rest;
//! `transport::posted` knows which message shows which request from the moment it is
//! posted, so an answer that outruns the store still finds its request. The Bot API being down never
//! blocks anything else: requests still expire on their timers, and allowlisted
//! requests never touch this module.

mod deliver;
mod fetch;
pub mod message;
mod updates;

use std::collections::HashMap;
use std::sync::atomic::AtomicI32;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use teloxide::prelude::*;
use teloxide::types::{BotCommand, Me};
use teloxide::{ApiError, RequestError};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::approvals::{Approvals, Event};
use crate::config::ReactionMap;
use crate::config::{Secret, TelegramConfig};
use crate::shutdown::Shutdown;
use crate::transport::chat;
use crate::transport::health::Health;
use crate::transport::limiter::Limiter;
use crate::transport::posted::Posted;
use teloxide::types::MessageId;

/// How long `connect` waits for `getMe` before starting without it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// After shutdown has cancelled every request, how long their messages get to be edited.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A connected Telegram transport, ready to `spawn`.
pub struct Telegram {
    ctx: Arc<Context>,
}

/// What every part of the transport shares.
struct Context {
    bot: Bot,
    /// The one chat requests go to and answers come from.
    chat: ChatId,
    owners: Vec<UserId>,
    reactions: ReactionMap,
    approvals: Arc<Approvals>,
    limiter: Limiter,
    /// Kept only to scrub it from error texts: reqwest errors carry the URL, and the URL
    /// carries the token.
    token: Secret,
    /// The bot's own account, from `getMe`; polling waits for it.
    me: OnceLock<Me>,
    /// Custom emoji id → the emoji it stands for, from `getCustomEmojiStickers`.
    custom_emoji: Mutex<HashMap<String, Option<String>>>,
    /// Outages, logged once, and the backoff's early wake when the API is back.
    health: Health,
    /// Where the next getUpdates starts: past every update handled or skipped so far.
    /// Kept here, not in the poller, so a poller restarted after a panic does not meet
    /// the update that panicked it again.
    offset: AtomicI32,
    /// Our approval messages and posts in flight, for answers that come before the store
    /// knows the message.
    posted: Posted<MessageId>,
}

impl Telegram {
    /// Builds the client and asks Telegram who the bot is. A token Telegram rejects is an
    /// error; an API that cannot be reached is a warning, and the transport keeps trying.
    pub async fn connect(
        config: &TelegramConfig,
        approvals: Arc<Approvals>,
    ) -> Result<Telegram, String> {
        let (Some(token), Some(chat)) = (config.bot_token.clone(), config.chat()) else {
            return Err("telegram.bot_token and telegram.owner_ids must both be set".into());
        };
        let url = config
            .api_url
            .as_deref()
            .unwrap_or(teloxide::net::TELEGRAM_API_URL);
        let url = reqwest::Url::parse(url).map_err(|e| format!("telegram.api_url: {e}"))?;
        let mut client = teloxide::net::default_reqwest_settings();
        // A proxy set for the outside world must not swallow a Bot API on this machine.
        if matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")) {
            client = client.no_proxy();
        }
        let client = client
            .build()
            .map_err(|e| format!("cannot build the HTTP client for Telegram: {e}"))?;
        let reactions = config.reaction_map().map_err(|e| e.to_string())?;
        let counters = approvals.metrics().chat("telegram");
        let ctx = Arc::new(Context {
            bot: Bot::with_client(token.expose(), client).set_api_url(url),
            chat: ChatId(chat),
            owners: config
                .owner_ids
                .iter()
                .map(|&id| UserId(id as u64))
                .collect(),
            reactions,
            approvals,
            limiter: pace(chat),
            token,
            me: OnceLock::new(),
            custom_emoji: Mutex::new(HashMap::new()),
            health: Health::new("Telegram", "the Telegram Bot API").counted(counters),
            offset: AtomicI32::new(0),
            posted: Posted::new(),
        });
        match tokio::time::timeout(CONNECT_TIMEOUT, ctx.bot.get_me()).await {
            Ok(Ok(me)) => ctx.identified(me).await,
            Ok(Err(RequestError::Api(ApiError::InvalidToken))) => {
                return Err("the Telegram Bot API rejected telegram.bot_token (Unauthorized): check the token @BotFather gave you".into());
            }
            Ok(Err(e)) => tracing::warn!(
                error = %ctx.scrub(&e),
                "cannot reach the Telegram Bot API at start; retrying in the background. Requests that need a human wait and expire as usual"
            ),
            Err(_) => tracing::warn!(
                "the Telegram Bot API did not answer getMe within {}s; retrying in the background",
                CONNECT_TIMEOUT.as_secs()
            ),
        }
        Ok(Telegram { ctx })
    }

    /// Runs the transport until `stopped` turns true. By then the daemon has cancelled
    /// every pending request; the task edits their messages (within a grace period),
    /// acknowledges the last update it handled, and ends.
    ///
    /// `events` comes from `approvals.subscribe()`, taken before any request can arrive.
    ///
    /// `left`: requests the last run left pending; their messages are edited to say so.
    pub fn spawn(
        self,
        events: broadcast::Receiver<Event>,
        left: Arc<[crate::transport::Left]>,
        shutdown: Shutdown,
    ) -> JoinHandle<()> {
        tokio::spawn(run(self.ctx, events, left, shutdown))
    }
}

/// The pace for `chat`: Telegram asks for about one message a second in a private chat
/// and twenty a minute in a group (group and channel ids are negative), and tolerates a
/// burst of a few.
fn pace(chat: i64) -> Limiter {
    let per_second = if chat < 0 { 20.0 / 60.0 } else { 1.0 };
    Limiter::new(per_second, 4)
}

async fn run(
    ctx: Arc<Context>,
    events: broadcast::Receiver<Event>,
    left: Arc<[crate::transport::Left]>,
    shutdown: Shutdown,
) {
    let polling = {
        let (ctx, shutdown) = (Arc::clone(&ctx), shutdown.clone());
        move || tokio::spawn(updates::poll(Arc::clone(&ctx), shutdown.clone()))
    };
    let poller = chat::run(ctx, events, left, shutdown, SHUTDOWN_GRACE, polling).await;
    if tokio::time::timeout(SHUTDOWN_GRACE, poller).await.is_err() {
        tracing::warn!("Telegram polling did not stop in time");
    }
}

impl Context {
    /// Records the bot's identity and registers its commands in Telegram's menu.
    async fn identified(&self, me: Me) {
        tracing::info!(
            bot = %me.username(),
            chat = self.chat.0,
            "connected to the Telegram Bot API"
        );
        let _ = self.me.set(me);
        let commands = [
            (
                "approve",
                "Approve a request: /approve ID [once|always|deny]",
            ),
            ("deny", "Deny a request: /deny ID"),
            ("pending", "List requests waiting for an answer"),
            ("allowlist", "Show the allowlist"),
            ("help", "How to answer requests"),
        ]
        .map(|(c, d)| BotCommand::new(c, d));
        if let Err(e) = self.bot.set_my_commands(commands).await {
            tracing::warn!(error = %self.scrub(&e), "could not register the bot's commands (setMyCommands)");
        }
    }

    /// An error's text with the bot token cut out.
    fn scrub(&self, e: &RequestError) -> String {
        e.to_string().replace(self.token.expose(), "<token>")
    }

    /// Logs a failed call (the token cut out).
    fn failed(&self, what: &str, e: &RequestError) {
        self.health.failed(what, &self.scrub(e));
    }

    fn succeeded(&self) {
        self.health.succeeded();
    }

    /// How long Telegram said to wait after `e` (flood control), which also pauses
    /// every other sender; None for any other failure.
    fn told(&self, e: &RequestError) -> Option<Duration> {
        let RequestError::RetryAfter(secs) = e else {
            return None;
        };
        let wait = secs.duration();
        self.limiter.pause(wait);
        Some(wait)
    }

    fn is_owner(&self, user: &teloxide::types::User) -> bool {
        !user.is_bot && self.owners.contains(&user.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn groups_get_twenty_a_minute() {
        let limiter = pace(-100123);
        let start = tokio::time::Instant::now();
        for _ in 0..5 {
            limiter.acquire().await;
        }
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(2990) && took < Duration::from_millis(3100),
            "{took:?}"
        );
    }
}
