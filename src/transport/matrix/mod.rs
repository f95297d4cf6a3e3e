//! The Matrix transport: posts each request that needs a human to one room, takes
//! answers from commands, replies and reactions, and edits the message once the request
//! is over, whoever ended it. Encrypted rooms work: the official SDK keeps the bot's
//! device and keys in `matrix.store_path`.
//!
//! `session` logs in (or restores the device kept from last time) and keeps the client's
//! store in step with the account; `deliver` owns one request's message from post to
//! final edit; `answers` turns what an owner does in the room into `Approvals::resolve`
//! calls. The homeserver being down never blocks anything else: the transport retries
//! and says so, requests still expire on their timers, and allowlisted requests never
//! touch this module.

mod answers;
mod deliver;
mod session;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::api::error::{ErrorKind, RetryAfter};
use matrix_sdk::ruma::events::room::message::RoomMessageEventContent;
use matrix_sdk::ruma::{OwnedEventId, OwnedRoomId, OwnedUserId, RoomId, TransactionId, UserId};
use matrix_sdk::{Client, Room, RoomState};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::approvals::{Approvals, Event};
use crate::config::{MatrixConfig, ReactionMap, Secret};
use crate::shutdown::Shutdown;
use crate::transport::Left;
use crate::transport::chat;
use crate::transport::health::{Backoff, Health};
use crate::transport::posted::Posted;
use session::Ended;

/// How long one `/sync` long-poll waits for news.
const POLL: Duration = Duration::from_secs(10);
/// After shutdown has cancelled every request, how long their messages get to be edited.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// How long to wait before trying again when the homeserver refuses the account itself
/// (a revoked token, a wrong password): long enough not to hammer it, short enough to
/// come back by itself once the account is fixed on the server.
const REFUSED_WAIT: Duration = Duration::from_secs(600);

/// How long to wait before opening a replaced session (a new login), and the window in
/// which a second one counts as a refusal.
const REOPEN_WAIT: Duration = Duration::from_secs(2);
const REOPEN_WINDOW: Duration = Duration::from_secs(60);

/// A checked Matrix configuration, ready to `spawn`.
pub struct Matrix {
    ctx: Arc<Context>,
}

/// The account and room as configured, parsed.
struct Account {
    homeserver: String,
    user: OwnedUserId,
    access_token: Option<Secret>,
    password: Option<Secret>,
    room: OwnedRoomId,
    owners: Vec<OwnedUserId>,
    /// The client's state and keys.
    store: std::path::PathBuf,
}

/// What every part of the transport shares.
struct Context {
    account: Account,
    reactions: ReactionMap,
    approvals: Arc<Approvals>,
    /// The room, once the bot is in it and has synced: deliveries wait for it. Replaced
    /// when the session is opened again (a new login).
    room: watch::Sender<Option<Room>>,
    /// Our approval messages and posts in flight, for answers that come before the store
    /// knows the message.
    posted: Posted<OwnedEventId>,
    /// Outages, logged once, and the backoff's early wake when the homeserver is back.
    health: Health,
    /// No message is sent before this instant: the homeserver's last `retry_after`.
    paused_until: Mutex<Option<Instant>>,
    /// Set once the owner was told the bot cannot enter the room, so the advice is given
    /// once per outage, not on every sync.
    room_warned: AtomicBool,
    /// Held by every send into the room, so one goes out at a time. In an encrypted room
    /// the SDK checks the group session, then encrypts with it; a second send in between
    /// can use up the session (clients rotate it every 100 messages) and the SDK then
    /// panics ("Session expired"), losing the message.
    one_send: tokio::sync::Mutex<()>,
}

impl Matrix {
    /// Checks the configuration. Nothing is asked of the homeserver here: one that is
    /// down at start must not stop the daemon; the transport connects in the background.
    pub fn new(
        config: &MatrixConfig,
        database: &Path,
        approvals: Arc<Approvals>,
    ) -> Result<Matrix, String> {
        let parse_user = |s: &str| UserId::parse(s).map_err(|e| format!("{s:?}: {e}"));
        let (Some(homeserver), Some(user), Some(room)) = (
            config.homeserver_url.clone(),
            config.user_id.as_deref(),
            config.room_id.as_deref(),
        ) else {
            return Err(
                "matrix.homeserver_url, matrix.user_id and matrix.room_id must be set".into(),
            );
        };
        let owners = config
            .owner_ids
            .iter()
            .map(|o| parse_user(o))
            .collect::<Result<Vec<_>, _>>()?;
        let counters = approvals.metrics().chat("matrix");
        let ctx = Context {
            account: Account {
                homeserver,
                user: parse_user(user)?,
                access_token: config.access_token.clone(),
                password: config.password.clone(),
                room: RoomId::parse(room).map_err(|e| format!("{room:?}: {e}"))?,
                owners,
                store: config.store_dir(database),
            },
            reactions: config.reaction_map().map_err(|e| e.to_string())?,
            approvals,
            room: watch::Sender::new(None),
            posted: Posted::new(),
            health: Health::new("Matrix", "the Matrix homeserver").counted(counters),
            paused_until: Mutex::new(None),
            room_warned: AtomicBool::new(false),
            one_send: tokio::sync::Mutex::new(()),
        };
        Ok(Matrix { ctx: Arc::new(ctx) })
    }

    /// Runs the transport until shutdown. By then the daemon has cancelled every pending
    /// request; the task edits their messages (within a grace period) and ends.
    ///
    /// `events` comes from `approvals.subscribe()`, taken before any request can arrive.
    ///
    /// `left`: requests the last run left pending; their messages are edited to say so.
    pub fn spawn(
        self,
        events: broadcast::Receiver<Event>,
        left: Arc<[Left]>,
        shutdown: Shutdown,
    ) -> JoinHandle<()> {
        tokio::spawn(run(self.ctx, events, left, shutdown))
    }
}

async fn run(
    ctx: Arc<Context>,
    events: broadcast::Receiver<Event>,
    left: Arc<[Left]>,
    shutdown: Shutdown,
) {
    let (answers, incoming) = mpsc::channel(answers::QUEUE);
    let answering = tokio::spawn(answers::run(Arc::clone(&ctx), incoming, shutdown.clone()));
    let connecting = {
        let (ctx, shutdown) = (Arc::clone(&ctx), shutdown.clone());
        move || tokio::spawn(connect(Arc::clone(&ctx), answers.clone(), shutdown.clone()))
    };
    let connection = chat::run(ctx, events, left, shutdown, SHUTDOWN_GRACE, connecting).await;
    connection.abort();
    answering.abort();
}

/// Opens the session and syncs, for as long as the daemon runs: a homeserver that is
/// down is retried with backoff; one that refuses the account is said clearly and tried
/// again only after a long wait.
async fn connect(
    ctx: Arc<Context>,
    answers: mpsc::Sender<answers::Incoming>,
    mut shutdown: Shutdown,
) {
    let mut backoff = Backoff::new();
    let mut last_reopen: Option<Instant> = None;
    loop {
        let opened = tokio::select! {
            _ = shutdown.recv() => return,
            opened = session::open(&ctx) => opened,
        };
        let ended = match opened {
            Ok(client) => {
                backoff = Backoff::new();
                sync(&ctx, &client, &answers, &mut shutdown).await
            }
            Err(ended) => ended,
        };
        let wait = match ended {
            // The room stays: the deliveries still edit their messages through it.
            Ended::Shutdown => return,
            Ended::Unreachable(why) => {
                ctx.failed("connecting", &why);
                backoff.step()
            }
            Ended::Refused(why) => {
                tracing::error!(
                    "the Matrix homeserver refused the bot's account: {why}. Requests that need a human wait and expire as usual; trying again in {} minutes",
                    REFUSED_WAIT.as_secs() / 60
                );
                REFUSED_WAIT
            }
            // A homeserver that rejects every new login's token must not be asked for
            // one (a new device each time) in a loop: a second new login within a
            // minute waits as a refusal does.
            Ended::Reopen if last_reopen.is_some_and(|at| at.elapsed() < REOPEN_WINDOW) => {
                tracing::error!(
                    "the Matrix homeserver rejected the bot's new login at once too; trying again in {} minutes",
                    REFUSED_WAIT.as_secs() / 60
                );
                REFUSED_WAIT
            }
            Ended::Reopen => {
                last_reopen = Some(Instant::now());
                REOPEN_WAIT
            }
        };
        ctx.room.send_replace(None);
        tokio::select! {
            _ = shutdown.recv() => return,
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// Syncs `client` until shutdown, or until the session cannot go on.
async fn sync(
    ctx: &Arc<Context>,
    client: &Client,
    answers: &mpsc::Sender<answers::Incoming>,
    shutdown: &mut Shutdown,
) -> Ended {
    // Catch up before listening: whatever was said while execgate was away answered
    // requests that ended with the run that posted them.
    let first = tokio::select! {
        _ = shutdown.recv() => return Ended::Shutdown,
        r = client.sync_once(SyncSettings::default().timeout(Duration::ZERO)) => r,
    };
    if let Err(e) = first {
        return session::ended(ctx, &e);
    }
    ctx.succeeded();
    answers::listen(ctx, client, answers.clone());
    enter_room(ctx, client).await;
    let mut backoff = Backoff::new();
    loop {
        let result = tokio::select! {
            _ = shutdown.recv() => return Ended::Shutdown,
            r = client.sync_once(SyncSettings::default().timeout(POLL)) => r,
        };
        match result {
            Ok(_) => {
                ctx.succeeded();
                backoff = Backoff::new();
                if ctx.room.borrow().is_none() {
                    enter_room(ctx, client).await;
                }
            }
            Err(e) => {
                let ended = session::ended(ctx, &e);
                if !matches!(ended, Ended::Unreachable(_)) {
                    return ended;
                }
                ctx.failed("/sync", &e.to_string());
                let wait = ctx.wait_for(&e).unwrap_or_else(|| backoff.step());
                tokio::select! {
                    _ = shutdown.recv() => return Ended::Shutdown,
                    _ = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
}

/// Makes the room ready for deliveries once the bot is in it: joins it when an owner has
/// invited the bot (or the room lets it in), and says what to do otherwise.
async fn enter_room(ctx: &Context, client: &Client) {
    let room_id = &ctx.account.room;
    let room = client.get_room(room_id);
    match room.as_ref().map(|r| r.state()) {
        Some(RoomState::Joined) => {}
        Some(RoomState::Invited) => {
            let room = room.expect("matched Some");
            let inviter = match room.invite_details().await {
                Ok(invite) => invite.inviter_id,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read who invited the bot to matrix.room_id");
                    return;
                }
            };
            if !ctx.account.owners.contains(&inviter) {
                if !ctx.room_warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(%inviter, room = %room_id, "the bot was invited to matrix.room_id by someone not in matrix.owner_ids; not joining until an owner invites it");
                }
                return;
            }
            if let Err(e) = room.join().await {
                tracing::warn!(error = %e, room = %room_id, "cannot join matrix.room_id");
                return;
            }
        }
        _ => {
            // Not invited (yet): a room the bot may join by itself is joined; otherwise
            // the owner invites it.
            if let Err(e) = client.join_room_by_id(room_id).await {
                if !ctx.room_warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        room = %room_id,
                        error = %e,
                        "the bot is not in matrix.room_id and cannot join it: invite {} to the room from an account in matrix.owner_ids",
                        ctx.account.user
                    );
                }
                return;
            }
        }
    }
    let Some(room) = client.get_room(room_id) else {
        return;
    };
    if room.state() != RoomState::Joined {
        return;
    }
    let encrypted = room
        .latest_encryption_state()
        .await
        .map(|s| s.is_encrypted())
        .unwrap_or(false);
    tracing::info!(room = %room_id, encrypted, user = %ctx.account.user, "connected to Matrix; requests go to matrix.room_id");
    ctx.room_warned.store(false, Ordering::Relaxed);
    ctx.room.send_replace(Some(room));
}

impl Context {
    fn failed(&self, what: &str, error: &str) {
        self.health.failed(what, &error);
    }

    fn succeeded(&self) {
        self.health.succeeded();
    }

    fn is_owner(&self, user: &UserId) -> bool {
        user != self.account.user && self.account.owners.iter().any(|o| o == user)
    }

    /// The homeserver's `retry_after` for a rate-limited call, also pausing every other
    /// send until then. None for any other error.
    fn wait_for(&self, e: &matrix_sdk::Error) -> Option<Duration> {
        let Some(ErrorKind::LimitExceeded(data)) = e.client_api_error_kind() else {
            return None;
        };
        let wait = match data.retry_after {
            Some(RetryAfter::Delay(d)) => d,
            Some(RetryAfter::DateTime(at)) => at
                .duration_since(std::time::SystemTime::now())
                .unwrap_or_default(),
            None => Duration::from_secs(1),
        };
        let until = Instant::now() + wait;
        let mut paused = self.paused_until.lock().unwrap_or_else(|e| e.into_inner());
        *paused = Some(paused.map_or(until, |p| p.max(until)));
        tracing::info!(
            wait_ms = wait.as_millis() as u64,
            "the Matrix homeserver is rate-limiting the bot (M_LIMIT_EXCEEDED); waiting as it asks"
        );
        Some(wait)
    }

    /// Sends `content` into `room` under transaction id `txn` (a retry with the same id
    /// is posted once), one send at a time, after any pause the homeserver asked for.
    async fn send(
        &self,
        room: &Room,
        content: RoomMessageEventContent,
        txn: &TransactionId,
    ) -> matrix_sdk::Result<OwnedEventId> {
        self.paced().await;
        let _alone = self.one_send.lock().await;
        let sent = room
            .send(content)
            .with_transaction_id(txn.to_owned())
            .await?;
        Ok(sent.response.event_id)
    }

    /// Waits out a pause the homeserver asked for, if any.
    async fn paced(&self) {
        let until = *self.paused_until.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(until) = until {
            tokio::time::sleep_until(until).await;
        }
    }
}
