//! The chat driver: one request's message in any chat, from its post to its final edit,
//! the same for every chat service. Posting is retried (backoff, the service's own
//! `retry_after` waited in full) for as long as the request is pending; the message is
//! known to `transport::posted` the moment the post lands, so an answer that outruns the
//! store finds it; it is stored, so a restart or another leader of the chats edits it
//! rather than posting again; once the request ends it is edited to say how, whoever
//! ended it, through an outage of up to an hour. A chat is a [`Service`]: how to post,
//! edit and name its messages, and how its failures read.
//!
//! `answers` takes the owner's commands, reactions and buttons the same in every chat;
//! `digest` gathers a burst that the chat's pacing would hold into one message.

use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::approvals::{Approvals, Event};
use crate::config::ReactionMap;
use crate::model::Record;
use crate::shutdown::Shutdown;
use crate::transport::Left;
use crate::transport::card::{Line, Offer};
use crate::transport::deliveries::{self, Deliveries, Done, outcome, over, remember};
use crate::transport::health::{Backoff, Health};
use crate::transport::posted::{Posted, Target};

mod answers;
mod digest;

pub use answers::{Heard, Shown, command, press, react, reply, request_at, when_known};
use digest::Turn;

/// How long an edit keeps being retried through an outage before it is given up.
const EDIT_PATIENCE: Duration = Duration::from_secs(3600);

/// What one chat service does with a request's message.
pub trait Service: Send + Sync {
    /// A posted message, as the service names it (Telegram's message id, Matrix's event
    /// id).
    type Message: Clone + Eq + Hash + Debug + Send + Sync + 'static;
    /// What every retry of one post or one edit shares (Matrix's transaction id, which
    /// makes the homeserver post it once).
    type Attempt: Send + Sync;
    /// The service, as log lines name it ("Telegram").
    const NAME: &'static str;
    /// The longest an answer waits for the posts in flight (`answers::when_known`): past
    /// this chat's own timeout of a send, by which any post has landed or failed.
    const HOLD_LIMIT: Duration;

    fn approvals(&self) -> &Approvals;
    fn reactions(&self) -> &ReactionMap;
    fn health(&self) -> &Health;
    fn posted(&self) -> &Posted<Self::Message>;

    /// How this chat's `message_external_id`s begin (`CHAT:`): the rest names a message.
    fn prefix(&self) -> String;
    /// The rest of a message's external id, after [`Service::prefix`].
    fn name_of(&self, message: &Self::Message) -> String;
    /// The message the rest of an external id names.
    fn message(&self, rest: &str) -> Option<Self::Message>;

    fn attempt(&self) -> Self::Attempt;
    /// Until a message may be sent: its pacing, and (Matrix) being in the room.
    fn ready(&self) -> impl Future<Output = ()> + Send;
    /// Posts the approval card of `record`.
    fn post(
        &self,
        record: &Record,
        offer: &Offer<'_>,
        attempt: &Self::Attempt,
    ) -> impl Future<Output = Result<Self::Message, Failure>> + Send;
    /// Sends `text` as a reply to `message` (clipped as the chat must).
    fn reply(
        &self,
        message: &Self::Message,
        text: &str,
        attempt: &Self::Attempt,
    ) -> impl Future<Output = Result<(), Failure>> + Send;
    /// Replaces the message with `last`'s outcome, its buttons gone.
    fn edit(
        &self,
        message: &Self::Message,
        last: &Record,
        attempt: &Self::Attempt,
    ) -> impl Future<Output = Result<(), Failure>> + Send;

    /// How many requests one digest message of this chat may show (at most
    /// `card::DIGEST_MOST`); below 2, none: each request waits for a message of its own.
    fn digest_size(&self) -> usize {
        0
    }
    /// Takes a slot of the chat's pacing if one is free now; false (nothing taken) if
    /// a message would have to wait.
    fn ready_now(&self) -> bool {
        true
    }
    /// Whether one digest message of this chat can show every request of `lines`, as
    /// posted and as each ends (a chat with a small limit on a message's length).
    fn digest_fits(&self, lines: &[Line]) -> bool {
        let _ = lines;
        true
    }
    /// Posts one message showing every request of `lines` (all pending), each with its
    /// own row of buttons. Only called where `digest_size` allows digests.
    fn post_digest(
        &self,
        lines: &[Line],
        attempt: &Self::Attempt,
    ) -> impl Future<Output = Result<Self::Message, Failure>> + Send {
        let _ = (lines, attempt);
        std::future::ready(Err(Failure::no_digests(Self::NAME)))
    }
    /// Redraws a digest message from `lines`: ended requests closed, their buttons gone.
    fn edit_digest(
        &self,
        message: &Self::Message,
        lines: &[Line],
        attempt: &Self::Attempt,
    ) -> impl Future<Output = Result<(), Failure>> + Send {
        let _ = (message, lines, attempt);
        std::future::ready(Err(Failure::no_digests(Self::NAME)))
    }
}

/// A call that failed, as the driver acts on it.
#[derive(Debug)]
pub struct Failure {
    /// The call, for the log ("sendMessage").
    pub what: &'static str,
    /// What the service said, secrets cut out.
    pub error: String,
    /// How long the service said to wait, if it did.
    pub told: Option<Duration>,
    pub kind: Trouble,
}

/// What a failure means for the message.
#[derive(Debug, PartialEq, Eq)]
pub enum Trouble {
    /// The service is down or slow: retried with backoff, the outage logged once.
    Outage,
    /// The chat itself refuses (the bot is not in it, blocked, …): retried too, but said
    /// every time, with what the owner must do.
    Refused(String),
    /// The message cannot be edited any more (deleted, too old): left as it is.
    Gone,
}

impl Failure {
    pub fn outage(what: &'static str, error: String, told: Option<Duration>) -> Failure {
        Failure {
            what,
            error,
            told,
            kind: Trouble::Outage,
        }
    }

    /// A digest asked of a chat that shows each request alone: the driver never does.
    fn no_digests(chat: &str) -> Failure {
        Failure {
            what: "digest",
            error: format!("{chat} shows each request in a message of its own"),
            told: None,
            kind: Trouble::Gone,
        }
    }
}

/// A chat transport's life: the messages the last run left are closed, every request
/// waiting now and every one that comes is delivered (`deliver`), and `listen` (the
/// task that reads the owner's answers) runs, started again a second later if it ends
/// before shutdown (a panic in a chat's SDK must not leave the owner unheard). At
/// shutdown, when every request has ended, the deliveries get `grace` to edit their
/// messages. Returns the last listener, for the chat to wait for or stop.
pub async fn run<S: Service + 'static>(
    svc: Arc<S>,
    mut events: broadcast::Receiver<Event>,
    left: Arc<[Left]>,
    mut shutdown: Shutdown,
    grace: Duration,
    listen: impl Fn() -> JoinHandle<()>,
) -> JoinHandle<()> {
    let mut listener = listen();
    let mut deliveries = Deliveries::new(S::NAME);
    let closing = Arc::clone(&svc);
    deliveries.also(async move { close_left(closing.as_ref(), &left).await });
    let delivery = |record, done| {
        let svc = Arc::clone(&svc);
        async move { deliver(svc.as_ref(), record, done).await }
    };
    // Requests already waiting (this transport took over the chats from another node):
    // each is posted unless it was, and followed to its end either way.
    deliveries.catch_up(svc.approvals(), delivery).await;
    loop {
        tokio::select! {
            _ = shutdown.recv() => break,
            Some(()) = deliveries.reap() => {}
            ended = &mut listener => {
                if shutdown.is_shutdown() {
                    break;
                }
                tracing::error!(?ended, "reading {} stopped unexpectedly; starting again in a second", S::NAME);
                tokio::time::sleep(Duration::from_secs(1)).await;
                listener = listen();
            }
            event = events.recv() => match event {
                Ok(Event::Pending(record)) => deliveries.start(svc.approvals(), record, delivery),
                // A request's own delivery task sees its end through its watch.
                Ok(Event::Resolved(_) | Event::Rules(_)) => {}
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "the {} transport fell behind; catching up from the database", S::NAME);
                    deliveries.catch_up(svc.approvals(), delivery).await;
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
        }
    }
    // Shutdown has already ended every request, so each delivery is now editing its
    // message or has nothing left to do.
    deliveries.finish(grace).await;
    listener
}

/// Posts `record` (unless a message of this chat shows it already), remembers its
/// message, and edits it once the request is over.
pub async fn deliver<S: Service>(svc: &S, record: Record, mut done: Done) {
    let (message, in_digest) = match posted_before(svc, &record).await {
        // Posted by an earlier leader of the chats: edited, never posted twice.
        Some(found) => found,
        None => match post(svc, &record, &mut done).await {
            None => return,
            // Stored by whoever posted the digest.
            Some((message, true)) => (message, true),
            Some((message, false)) => {
                let external = format!("{}{}", svc.prefix(), svc.name_of(&message));
                remember(svc.approvals(), &record, &external, S::NAME).await;
                (message, false)
            }
        },
    };
    if let Some(last) = outcome(svc.approvals(), &record, &mut done).await {
        match in_digest {
            true => digest::edit(svc, &message).await,
            false => edit(svc, &message, &last).await,
        }
    }
    // The request is over: the store answers for its message from here on.
    svc.posted().forget(&message, &record.id);
}

/// Edits the messages of requests the last run left pending, in this chat, to say how
/// they ended; a digest once, however many of its requests were left.
pub async fn close_left<S: Service>(svc: &S, left: &[Left]) {
    let prefix = svc.prefix();
    let mut digests = Vec::new();
    for (record, rest) in Left::in_chat(left, &prefix) {
        match rest.split_once('#') {
            Some((name, _)) if !digests.contains(&name) => digests.push(name),
            Some(_) => {}
            None => {
                if let Some(message) = svc.message(rest) {
                    edit(svc, &message, record).await;
                }
            }
        }
    }
    for name in digests {
        if let Some(message) = svc.message(name) {
            digest::edit(svc, &message).await;
        }
    }
}

/// The message in this chat that the database says shows `record`, if any, and
/// whether it is a digest.
async fn posted_before<S: Service>(svc: &S, record: &Record) -> Option<(S::Message, bool)> {
    let rest = deliveries::posted_before(svc.approvals(), record, &svc.prefix()).await?;
    match rest.split_once('#') {
        Some((name, _)) => Some((svc.message(name)?, true)),
        None => Some((svc.message(&rest)?, false)),
    }
}

/// Sends the approval message until it lands or the request ends, alone or in a
/// digest (true). None: never posted.
async fn post<S: Service>(svc: &S, record: &Record, done: &mut Done) -> Option<(S::Message, bool)> {
    let mut backoff = Backoff::new();
    let attempt = svc.attempt();
    loop {
        match digest::turn(svc, record, done).await {
            Turn::Over => return None,
            Turn::Shown(message) => {
                svc.health().delivered();
                return Some((message, true));
            }
            Turn::Alone => {}
        }
        // Noted as shown before it is, so its id stays out of circulation for a day.
        if !svc.approvals().show(&record.id) {
            return None;
        }
        let grants = svc.approvals().offer(record);
        let offer = Offer {
            grants: &grants,
            reactions: svc.reactions(),
        };
        // Not raced against the request's end: a send cut off halfway may still land,
        // and a message we do not know about could never be edited.
        let sending = svc.posted().sending();
        match svc.post(record, &offer, &attempt).await {
            Ok(message) => {
                // Known at once, before the store hears of it: the owner may answer now.
                sending.landed(message.clone(), Target::from(record));
                svc.health().succeeded();
                svc.health().delivered();
                return Some((message, false));
            }
            Err(failure) => {
                drop(sending);
                match &failure.kind {
                    // Not an outage: nothing reaches the owner until this is fixed, so
                    // it is said every time.
                    Trouble::Refused(hint) => tracing::error!(
                        short_id = %record.short_id,
                        error = %failure.error,
                        "cannot post to {}: {hint}",
                        S::NAME
                    ),
                    _ => svc.health().failed(failure.what, &failure.error),
                }
                tokio::select! {
                    _ = over(done) => {
                        tracing::warn!(short_id = %record.short_id, "request ended before its {} message could be posted", S::NAME);
                        return None;
                    }
                    _ = backoff.wait(failure.told, svc.health()) => {}
                }
            }
        }
    }
}

/// Replaces the message with the outcome, retried through an outage of up to an hour.
async fn edit<S: Service>(svc: &S, message: &S::Message, last: &Record) {
    let give_up = Instant::now() + EDIT_PATIENCE;
    let mut backoff = Backoff::new();
    let attempt = svc.attempt();
    loop {
        if tokio::time::timeout_at(give_up, svc.ready()).await.is_err() {
            tracing::warn!(short_id = %last.short_id, "gave up updating the request's {} message: the chat was not back within an hour", S::NAME);
            return;
        }
        let failure = match svc.edit(message, last, &attempt).await {
            Ok(()) => {
                svc.health().succeeded();
                return;
            }
            Err(failure) => failure,
        };
        if failure.kind == Trouble::Gone {
            tracing::warn!(short_id = %last.short_id, error = %failure.error, "cannot update the request's {} message; leaving it", S::NAME);
            return;
        }
        if Instant::now() > give_up {
            tracing::warn!(short_id = %last.short_id, "gave up updating the request's {} message after an hour of failures", S::NAME);
            return;
        }
        svc.health().failed(failure.what, &failure.error);
        backoff.wait(failure.told, svc.health()).await;
    }
}
