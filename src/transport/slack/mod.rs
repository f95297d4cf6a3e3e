//! The Slack transport: posts each request that needs a human to the owner's channel (or
//! direct messages), takes answers from commands, thread replies, reactions and buttons,
//! and edits the message once the request is over, whoever ended it.
//!
//! `api` makes the Web API calls; `message` renders what the owner reads as Block Kit;
//! `deliver` is Slack as a chat of the driver (`transport::chat`); `socket` keeps the
//! Socket Mode websocket open and acknowledges every envelope; `events` turns what an
//! owner does into `Approvals::resolve` calls, after the owner checks.
//!
//! slack-morphism gives the Block Kit and request models. Its HTTP client and its Socket
//! Mode listener are not used: the listener retries a rejected token forever without
//! saying so, waits a fixed time between reconnections, and leaves neither the
//! acknowledgement nor a malformed envelope to us; the Web API calls are a few JSON
//! POSTs that reqwest, already in the tree, makes as well (see `api` for TLS).

mod api;
mod deliver;
mod events;
pub mod message;
mod socket;

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use crate::approvals::{Approvals, Event};
use crate::config::{ReactionMap, SlackConfig, SlackPlace};
use crate::shutdown::Shutdown;
use crate::transport::chat;
use crate::transport::health::{Backoff, Health};
use crate::transport::limiter::Limiter;
use crate::transport::posted::Posted;
use api::{Api, ApiError, Token};

/// How long `connect` waits for each of its calls before starting without it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// After shutdown has cancelled every request, how long their messages get to be edited.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// Messages a second Slack lets an app post to one channel, after a short burst.
const PACE: f64 = 1.0;
const BURST: u32 = 4;
/// Event ids remembered, so that an event Slack sends again is handled once.
const SEEN_MAX: usize = 1024;

/// A connected Slack transport, ready to `spawn`.
pub struct Slack {
    ctx: Arc<Context>,
}

/// A message, as Slack names it: its `ts` in our channel. Two are the same message when
/// their `ts` are.
#[derive(Clone, Debug)]
pub struct Ts {
    pub ts: String,
    /// The thread a reply to it goes in: its own, unless it is itself in a thread.
    pub thread: Option<String>,
}

impl Ts {
    fn top(ts: impl Into<String>) -> Ts {
        Ts {
            ts: ts.into(),
            thread: None,
        }
    }

    /// The `thread_ts` of a reply to this message.
    fn thread_root(&self) -> &str {
        self.thread.as_deref().unwrap_or(&self.ts)
    }
}

impl PartialEq for Ts {
    fn eq(&self, other: &Ts) -> bool {
        self.ts == other.ts
    }
}

impl Eq for Ts {}

impl std::hash::Hash for Ts {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.ts.hash(state);
    }
}

/// What every part of the transport shares.
struct Context {
    api: Api,
    /// `slack.channel` as configured: names our messages in the store, known before the
    /// channel of a direct message is.
    configured: String,
    place: SlackPlace,
    /// The channel requests go to; for direct messages, once `conversations.open` says.
    channel: watch::Sender<Option<String>>,
    owners: Vec<String>,
    reactions: ReactionMap,
    approvals: Arc<Approvals>,
    limiter: Limiter,
    /// The bot's own user, from `auth.test`: its messages and reactions are not answers.
    me: OnceLock<Me>,
    /// The first Socket Mode URL, from the `apps.connections.open` that checked the app
    /// token at connect; Slack limits that call to about one a minute.
    first_url: Mutex<Option<String>>,
    /// Outages, logged once, and the backoff's early wake when the API is back.
    health: Health,
    /// Our approval messages and posts in flight, for answers that come before the store
    /// knows the message.
    posted: Posted<Ts>,
    /// Events handled lately (Slack sends an envelope again when its acknowledgement is
    /// late).
    seen: Mutex<Seen>,
}

#[derive(Debug, Deserialize)]
struct Me {
    user_id: String,
}

#[derive(Deserialize)]
struct Opened {
    channel: OpenedChannel,
}

#[derive(Deserialize)]
struct OpenedChannel {
    id: String,
}

#[derive(Deserialize)]
struct SocketUrl {
    url: String,
}

#[derive(Default)]
struct Seen {
    order: VecDeque<String>,
    ids: HashSet<String>,
}

impl Slack {
    /// Builds the client, asks Slack who the bot is, and checks the app token. A token
    /// Slack rejects is an error; an API that cannot be reached is a warning, and the
    /// transport keeps trying.
    pub async fn connect(config: &SlackConfig, approvals: Arc<Approvals>) -> Result<Slack, String> {
        let (Some(app), Some(bot), Some(place), Some(configured)) = (
            config.app_token.clone(),
            config.bot_token.clone(),
            config.place(),
            config.channel.clone(),
        ) else {
            return Err(
                "slack.app_token, slack.bot_token, slack.channel and slack.owner_ids must all be set"
                    .into(),
            );
        };
        let reactions = config.reaction_map().map_err(|e| e.to_string())?;
        let channel = match &place {
            SlackPlace::Channel(id) => Some(id.clone()),
            SlackPlace::User(_) => None,
        };
        let counters = approvals.metrics().chat("slack");
        let ctx = Arc::new(Context {
            api: Api::new(config.api(), bot, app)?,
            configured,
            place,
            channel: watch::Sender::new(channel),
            owners: config.owner_ids.clone(),
            reactions,
            approvals,
            limiter: Limiter::new(PACE, BURST),
            me: OnceLock::new(),
            first_url: Mutex::new(None),
            health: Health::new("Slack", "the Slack Web API").counted(counters),
            posted: Posted::new(),
            seen: Mutex::new(Seen::default()),
        });
        ctx.check_tokens().await?;
        Ok(Slack { ctx })
    }

    /// Runs the transport until shutdown. By then the daemon has cancelled every pending
    /// request; the task edits their messages (within a grace period) and ends.
    ///
    /// `events` comes from `approvals.subscribe()`, taken before any request can arrive.
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

async fn run(
    ctx: Arc<Context>,
    events: broadcast::Receiver<Event>,
    left: Arc<[crate::transport::Left]>,
    shutdown: Shutdown,
) {
    if ctx.me.get().is_none() || ctx.channel.borrow().is_none() {
        tokio::spawn(identify(Arc::clone(&ctx), shutdown.clone()));
    }
    let listening = {
        let (ctx, shutdown) = (Arc::clone(&ctx), shutdown.clone());
        move || tokio::spawn(socket::listen(Arc::clone(&ctx), shutdown.clone()))
    };
    let listener = chat::run(ctx, events, left, shutdown, SHUTDOWN_GRACE, listening).await;
    if tokio::time::timeout(SHUTDOWN_GRACE, listener)
        .await
        .is_err()
    {
        tracing::warn!("the Slack Socket Mode listener did not stop in time");
    }
}

/// Until the bot knows who it is and where it posts: `auth.test` and, for direct
/// messages, `conversations.open`, retried with backoff (the API was down at connect).
async fn identify(ctx: Arc<Context>, mut shutdown: Shutdown) {
    let mut backoff = Backoff::new();
    loop {
        let result = tokio::select! {
            _ = shutdown.recv() => return,
            r = ctx.identify() => r,
        };
        let Err(e) = result else { return };
        ctx.failed_call(&e);
        tokio::select! {
            _ = shutdown.recv() => return,
            _ = backoff.wait(ctx.told(&e), &ctx.health) => {}
        }
    }
}

impl Context {
    /// `auth.test` with the bot token, and `apps.connections.open` with the app token: a
    /// token Slack rejects stops the start; one that cannot be checked now is checked
    /// by the calls to come.
    async fn check_tokens(&self) -> Result<(), String> {
        match tokio::time::timeout(CONNECT_TIMEOUT, self.identify()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) if e.rejects_token() && e.method == "auth.test" => {
                return Err(format!(
                    "Slack rejected slack.bot_token ({}): check the Bot User OAuth Token (xoxb-…) on the app's OAuth & Permissions page",
                    e.slack().unwrap_or_default()
                ));
            }
            Ok(Err(e)) if advice(&e).is_some() => self.failed_call(&e),
            Ok(Err(e)) => tracing::warn!(
                error = %e,
                "cannot reach the Slack Web API at start; retrying in the background. Requests that need a human wait and expire as usual"
            ),
            Err(_) => tracing::warn!(
                "the Slack Web API did not answer within {}s; retrying in the background",
                CONNECT_TIMEOUT.as_secs()
            ),
        }
        let opened = tokio::time::timeout(
            CONNECT_TIMEOUT,
            self.api
                .call::<SocketUrl>("apps.connections.open", Token::App, &json!({})),
        )
        .await;
        match opened {
            Ok(Ok(socket)) => *self.lock_first_url() = Some(socket.url),
            Ok(Err(e)) if e.rejects_token() => {
                return Err(format!(
                    "Slack rejected slack.app_token ({}): check the app-level token (xapp-…, scope connections:write) on the app's Basic Information page",
                    e.slack().unwrap_or_default()
                ));
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "cannot open Slack's Socket Mode at start; retrying in the background")
            }
            Err(_) => tracing::warn!(
                "Slack's apps.connections.open did not answer in time; retrying in the background"
            ),
        }
        Ok(())
    }

    /// Asks who the bot is, and opens the direct messages when those are the place.
    async fn identify(&self) -> Result<(), ApiError> {
        if self.me.get().is_none() {
            let me: Me = self.api.call("auth.test", Token::Bot, &json!({})).await?;
            self.health.succeeded();
            tracing::info!(bot = %me.user_id, channel = %self.configured, "connected to the Slack Web API");
            let _ = self.me.set(me);
        }
        if let SlackPlace::User(user) = &self.place
            && self.channel.borrow().is_none()
        {
            let opened: Opened = self
                .api
                .call("conversations.open", Token::Bot, &json!({"users": user}))
                .await?;
            self.health.succeeded();
            self.channel.send_replace(Some(opened.channel.id));
        }
        Ok(())
    }

    /// The channel requests go to, once known.
    fn channel(&self) -> Option<String> {
        self.channel.borrow().clone()
    }

    /// Until the channel is known.
    async fn channel_known(&self) -> String {
        let mut known = self.channel.subscribe();
        let found = known
            .wait_for(Option::is_some)
            .await
            .map(|channel| channel.clone());
        match found {
            Ok(Some(channel)) => channel,
            // The sender lives as long as this context.
            _ => std::future::pending().await,
        }
    }

    fn lock_first_url(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.first_url.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Logs a failed call: a refusal every time, with what to change; an outage once.
    fn failed_call(&self, e: &ApiError) {
        match advice(e) {
            Some(advice) => tracing::error!(error = %e, "Slack refused a call: {advice}"),
            None => self.health.failed(e.method, e),
        }
    }

    /// How long Slack said to wait after `e` (HTTP 429), which also pauses every other
    /// sender; None for any other failure.
    fn told(&self, e: &ApiError) -> Option<Duration> {
        let api::ErrorKind::RateLimited(wait) = e.kind else {
            return None;
        };
        self.limiter.pause(wait);
        Some(wait)
    }

    fn is_owner(&self, user: &str) -> bool {
        self.owners.iter().any(|o| o == user) && !self.is_me(user)
    }

    fn is_me(&self, user: &str) -> bool {
        self.me.get().is_some_and(|me| me.user_id == user)
    }

    /// True the first time an event id is seen.
    fn first_time(&self, id: &str) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if !seen.ids.insert(id.to_owned()) {
            return false;
        }
        seen.order.push_back(id.to_owned());
        if seen.order.len() > SEEN_MAX
            && let Some(old) = seen.order.pop_front()
        {
            seen.ids.remove(&old);
        }
        true
    }
}

/// What the owner must change when Slack refuses a call for a reason only they can fix;
/// None for an outage.
fn advice(e: &ApiError) -> Option<String> {
    let token = if e.method == "apps.connections.open" {
        Token::App
    } else {
        Token::Bot
    };
    if e.rejects_token() {
        return Some(format!(
            "Slack rejected {} ({}): it was revoked or is wrong; put a valid token there and restart",
            token.key(),
            e.slack().unwrap_or_default()
        ));
    }
    let api::ErrorKind::Slack { error, needed } = &e.kind else {
        return None;
    };
    Some(match error.as_str() {
        "missing_scope" => format!(
            "the Slack app lacks the {} scope: add it under OAuth & Permissions, reinstall the app, and put the new slack.bot_token in place",
            needed.as_deref().unwrap_or("needed")
        ),
        "channel_not_found" | "not_in_channel" => {
            "the bot cannot post in slack.channel: invite the app to the channel (/invite @app), or check the id".into()
        }
        "is_archived" => "slack.channel is archived: unarchive it or choose another".into(),
        "user_not_found" | "cannot_dm_bot" | "user_disabled" => {
            "slack.channel names no user the bot can write to: give your own user id (U…)".into()
        }
        "restricted_action" | "restricted_action_read_only_channel"
        | "restricted_action_thread_only_channel" | "ekm_access_denied" => {
            "the workspace does not let the bot post in slack.channel: ask an admin, or choose another channel".into()
        }
        "link_disabled" => {
            "Socket Mode is turned off for the app: turn it on (Settings › Socket Mode)".into()
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use api::ErrorKind;

    fn refused(method: &'static str, error: &str, needed: Option<&str>) -> ApiError {
        ApiError {
            method,
            kind: ErrorKind::Slack {
                error: error.into(),
                needed: needed.map(Into::into),
            },
        }
    }

    #[test]
    fn refusals_name_the_setting_outages_do_not() {
        let a = advice(&refused("apps.connections.open", "token_revoked", None)).unwrap();
        assert!(a.contains("slack.app_token"), "{a}");
        let a = advice(&refused("chat.postMessage", "invalid_auth", None)).unwrap();
        assert!(a.contains("slack.bot_token"), "{a}");
        let a = advice(&refused(
            "chat.postMessage",
            "missing_scope",
            Some("chat:write"),
        ))
        .unwrap();
        assert!(a.contains("chat:write"), "{a}");
        let a = advice(&refused("chat.postMessage", "not_in_channel", None)).unwrap();
        assert!(a.contains("slack.channel"), "{a}");
        assert!(advice(&refused("chat.postMessage", "internal_error", None)).is_none());
        let limited = ApiError {
            method: "chat.postMessage",
            kind: ErrorKind::RateLimited(Duration::from_secs(3)),
        };
        assert!(advice(&limited).is_none());
    }

    #[test]
    fn messages_are_their_ts() {
        let a = Ts::top("1700000000.000100");
        let b = Ts {
            ts: "1700000000.000100".into(),
            thread: Some("1699999999.000001".into()),
        };
        assert_eq!(a, b);
        assert_eq!(a.thread_root(), "1700000000.000100");
        assert_eq!(b.thread_root(), "1699999999.000001");
    }
}
