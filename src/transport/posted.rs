//! Which of our messages shows which request, known the moment the chat's send call
//! answers; shared by the chat transports, each with its own kind of message id.
//!
//! The store learns it a moment later, or much later when its writes are slow, and the
//! owner can answer sooner: a fast reaction, one from a second device, one that outruns a
//! slow network back from the chat before the send has answered at all. So the mapping
//! is kept here from the instant a post lands until its delivery ends, and an answer to a
//! message not known yet waits while any post is in flight, then is looked up again. A
//! real answer is never dropped for coming early.
//!
//! Before a post is in flight it may wait for the chat's pacing: the requests waiting
//! form a line here, and the one that collects for all takes the next slot and may post
//! them as one digest (`transport::chat::digest`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{oneshot, watch};

use crate::model::Record;
use crate::transport::deliveries::Done;

/// A request as an answer names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub id: String,
    pub short_id: String,
}

impl From<&Record> for Target {
    fn from(r: &Record) -> Target {
        Target {
            id: r.id.clone(),
            short_id: r.short_id.clone(),
        }
    }
}

/// Answers held aside at once, waiting for posts in flight.
const HELD_MOST: usize = 64;

/// Our approval messages, our posts in flight, and the posts waiting for the chat's
/// pacing. Every change of the first two wakes whoever waits.
pub struct Posted<M> {
    state: watch::Sender<State<M>>,
    waiting: Mutex<Waiting<M>>,
    /// Wakes the waiters when nobody collects any more.
    uncollected: tokio::sync::Notify,
    /// Answers held aside at once, waiting for posts in flight: past it, the next one
    /// holds up reading until they land (slower, never lost).
    held: Arc<tokio::sync::Semaphore>,
    /// Held while a digest message is edited: every edit reads its requests afresh, so the
    /// last one to take it shows them all as they are.
    editing: tokio::sync::Mutex<()>,
}

/// Requests waiting for a slot in the chat's pacing, oldest first: whoever gets the next
/// slot may take them all into one digest message (`transport::chat`).
struct Waiting<M> {
    queue: Vec<Waiter<M>>,
    next: u64,
    /// The one waiter that waits for the pacing's slot for all of them: others taking
    /// slots too would spend them on nothing.
    collector: Option<u64>,
}

/// A request waiting its turn, and how it hears which message shows it.
pub struct Waiter<M> {
    pub record: Record,
    /// Its end, for whoever posts it to check.
    pub done: Done,
    ticket: u64,
    told: oneshot::Sender<Option<M>>,
}

impl<M> Waiter<M> {
    /// Whether this is the request waiting with `ticket`.
    pub fn holds(&self, ticket: &Ticket<M>) -> bool {
        self.ticket == ticket.ticket
    }

    /// Tells the waiter its digest landed as `message` (Some), or that it must post
    /// itself (None). A waiter that stopped listening has nothing left to hear.
    pub fn tell(self, message: Option<M>) {
        let _ = self.told.send(message);
    }
}

/// A place in the waiting line (see [`Posted::wait_turn`]).
pub struct Ticket<M> {
    ticket: u64,
    /// Which message shows the request, once another took it into a digest.
    pub told: oneshot::Receiver<Option<M>>,
}

struct State<M> {
    /// The messages of running deliveries, by message id (one chat: ids are unique), each
    /// with the requests it shows: one, or a digest's several.
    shown: HashMap<M, Vec<Target>>,
    /// Which of them are digests (however many of their requests are still running).
    digests: HashSet<M>,
    /// Posts sent whose answer has not come back yet: Telegram may already show them,
    /// and the owner may already have answered them.
    in_flight: BTreeSet<u64>,
    next: u64,
}

/// The posts an early answer waits for: those in flight when it arrived. Posts sent later
/// cannot be what it answers.
pub struct InFlight(BTreeSet<u64>);

impl<M: Clone + Eq + Hash + Debug> Default for Posted<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: Clone + Eq + Hash + Debug> Posted<M> {
    pub fn new() -> Posted<M> {
        Posted {
            state: watch::Sender::new(State {
                shown: HashMap::new(),
                digests: HashSet::new(),
                in_flight: BTreeSet::new(),
                next: 0,
            }),
            waiting: Mutex::new(Waiting {
                queue: Vec::new(),
                next: 0,
                collector: None,
            }),
            uncollected: tokio::sync::Notify::new(),
            held: Arc::new(tokio::sync::Semaphore::new(HELD_MOST)),
            editing: tokio::sync::Mutex::new(()),
        }
    }

    /// Whether any request waits for a slot.
    pub fn anyone_waiting(&self) -> bool {
        self.waiting() > 0
    }

    /// How many requests wait for a slot.
    pub fn waiting(&self) -> usize {
        self.line().queue.len()
    }

    /// Puts `record` in the waiting line.
    pub fn wait_turn(&self, record: &Record, done: &Done) -> Ticket<M> {
        let (told, hear) = oneshot::channel();
        let mut line = self.line();
        let ticket = line.next;
        line.next += 1;
        line.queue.push(Waiter {
            record: record.clone(),
            done: done.clone(),
            ticket,
            told,
        });
        Ticket { ticket, told: hear }
    }

    /// Takes `ticket` out of the line: false when someone already took it (into a
    /// digest being posted; its answer comes through `Ticket::told`).
    pub fn leave(&self, ticket: &Ticket<M>) -> bool {
        let mut line = self.line();
        let before = line.queue.len();
        line.queue.retain(|w| w.ticket != ticket.ticket);
        self.uncollect(&mut line, ticket);
        line.queue.len() != before
    }

    /// Makes `ticket` the line's collector if there is none and it is still in the line;
    /// whether it is the collector now.
    pub fn collect(&self, ticket: &Ticket<M>) -> bool {
        let mut line = self.line();
        if line.collector.is_none() && line.queue.iter().any(|w| w.ticket == ticket.ticket) {
            line.collector = Some(ticket.ticket);
        }
        line.collector == Some(ticket.ticket)
    }

    /// Resolves once the collector has stepped down (taken its digest, or left); made
    /// before [`Posted::collect`] is asked, it misses no step-down after.
    pub fn uncollected(&self) -> tokio::sync::futures::Notified<'_> {
        self.uncollected.notified()
    }

    /// The collector takes its own request and up to `most - 1` of the others waiting
    /// longest out of the line, its own first, and steps down; nothing if someone took
    /// it already.
    pub fn gather(&self, ticket: &Ticket<M>, most: usize) -> Vec<Waiter<M>> {
        let mut line = self.line();
        self.uncollect(&mut line, ticket);
        let Some(at) = line.queue.iter().position(|w| w.ticket == ticket.ticket) else {
            return Vec::new();
        };
        let mut taken = vec![line.queue.remove(at)];
        let others = line.queue.len().min(most.saturating_sub(1));
        taken.extend(line.queue.drain(..others));
        taken
    }

    /// `ticket` steps down if it collects, and the others hear of it.
    fn uncollect(&self, line: &mut Waiting<M>, ticket: &Ticket<M>) {
        if line.collector == Some(ticket.ticket) {
            line.collector = None;
            self.uncollected.notify_waiters();
        }
    }

    /// Held while a digest message is edited (see the field).
    pub async fn editing(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.editing.lock().await
    }

    fn line(&self) -> std::sync::MutexGuard<'_, Waiting<M>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks a post as in flight until the guard lands or is dropped (a send that failed,
    /// or a delivery aborted at shutdown).
    pub fn sending(&self) -> Sending<'_, M> {
        let mut token = 0;
        self.state.send_modify(|s| {
            token = s.next;
            s.next += 1;
            s.in_flight.insert(token);
        });
        Sending {
            posted: self,
            token,
        }
    }

    /// The request `message` shows, while its delivery runs; None for a digest.
    pub fn get(&self, message: &M) -> Option<Target> {
        let s = self.state.borrow();
        match s.shown.get(message).map(Vec::as_slice) {
            Some([one]) if !s.digests.contains(message) => Some(one.clone()),
            _ => None,
        }
    }

    /// Whether `message` is a digest whose deliveries run.
    pub fn is_digest(&self, message: &M) -> bool {
        self.state.borrow().digests.contains(message)
    }

    /// Every request `message` shows whose delivery runs (several for a digest).
    pub fn all(&self, message: &M) -> Vec<Target> {
        self.state
            .borrow()
            .shown
            .get(message)
            .cloned()
            .unwrap_or_default()
    }

    /// The delivery of request `id` on `message` is over; the store answers for it from
    /// now on.
    pub fn forget(&self, message: &M, id: &str) {
        self.state.send_if_modified(|s| {
            let Some(targets) = s.shown.get_mut(message) else {
                return false;
            };
            targets.retain(|t| t.id != id);
            if targets.is_empty() {
                s.shown.remove(message);
                s.digests.remove(message);
            }
            true
        });
    }

    /// What an answer to `message` must wait for before it is looked up: None when the
    /// message is known, or no post is in flight (then the lookup is final at once).
    pub fn unsettled(&self, message: &M) -> Option<InFlight> {
        let s = self.state.borrow();
        (!s.shown.contains_key(message) && !s.in_flight.is_empty())
            .then(|| InFlight(s.in_flight.clone()))
    }

    /// A place to hold an answer aside while it waits (see [`Posted::settle`]); None
    /// when too many are held already.
    pub fn hold(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        Arc::clone(&self.held).try_acquire_owned().ok()
    }

    /// Waits until `message` is known, or every post of `pending` has landed or failed;
    /// at most `limit`, for a send that never returns.
    pub async fn settle(&self, message: &M, pending: InFlight, limit: Duration) {
        let mut state = self.state.subscribe();
        let settled = state.wait_for(|s| {
            s.shown.contains_key(message) || pending.0.iter().all(|t| !s.in_flight.contains(t))
        });
        if tokio::time::timeout(limit, settled).await.is_err() {
            tracing::warn!(
                ?message,
                "a post stayed in flight for {}s; looking up an answer without it",
                limit.as_secs()
            );
        }
    }
}

/// A post in flight (see `Posted::sending`).
pub struct Sending<'a, M: Clone + Eq + Hash + Debug> {
    posted: &'a Posted<M>,
    token: u64,
}

impl<M: Clone + Eq + Hash + Debug> Sending<'_, M> {
    /// The post landed as `message`: known from now on, in the same step that ends its
    /// flight, so a waiting answer never sees one without the other.
    pub fn landed(self, message: M, target: Target) {
        self.posted.state.send_modify(|s| {
            s.shown.insert(message, vec![target]);
            s.in_flight.remove(&self.token);
        });
    }

    /// The post landed as `message`, a digest showing every request of `targets`.
    pub fn landed_digest(self, message: M, targets: Vec<Target>) {
        self.posted.state.send_modify(|s| {
            s.digests.insert(message.clone());
            s.shown.insert(message, targets);
            s.in_flight.remove(&self.token);
        });
    }
}

impl<M: Clone + Eq + Hash + Debug> Drop for Sending<'_, M> {
    fn drop(&mut self) {
        let token = self.token;
        self.posted
            .state
            .send_if_modified(|s| s.in_flight.remove(&token));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type MessageId = u64;

    fn target(id: &str) -> Target {
        Target {
            id: id.into(),
            short_id: id.into(),
        }
    }

    const LIMIT: Duration = Duration::from_secs(5);

    #[tokio::test(start_paused = true)]
    async fn an_early_answer_waits_for_the_posts_in_flight() {
        let posted: Posted<MessageId> = Posted::new();
        assert!(posted.unsettled(&1).is_none(), "nothing in flight");
        let first = posted.sending();
        let second = posted.sending();
        let pending = posted.unsettled(&7).expect("posts in flight");
        // A post sent after the answer arrived is not waited for.
        let later = posted.sending();
        let waiter = async {
            posted.settle(&7, pending, LIMIT).await;
            posted.get(&7)
        };
        let landing = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            drop(first);
            tokio::time::sleep(Duration::from_millis(10)).await;
            second.landed(7, target("a"));
        };
        let (found, ()) = tokio::join!(waiter, landing);
        assert_eq!(found, Some(target("a")));
        assert!(posted.unsettled(&7).is_none(), "known now");
        assert!(posted.unsettled(&8).is_some(), "`later` still flies");
        drop(later);
        assert!(posted.unsettled(&8).is_none());
        posted.forget(&7, "a");
        assert_eq!(posted.get(&7), None);

        // A digest shows several; each delivery forgets its own.
        posted
            .sending()
            .landed_digest(9, vec![target("b"), target("c")]);
        assert_eq!(posted.get(&9), None, "not one request");
        assert_eq!(posted.all(&9), [target("b"), target("c")]);
        posted.forget(&9, "b");
        assert_eq!(posted.get(&9), None, "a digest, even down to one");
        assert!(posted.is_digest(&9), "still a digest with one request left");
        posted.forget(&9, "c");
        assert!(posted.all(&9).is_empty());
        assert!(!posted.is_digest(&9));
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_to_another_message_waits_only_until_the_posts_end() {
        let posted: Posted<MessageId> = Posted::new();
        let sending = posted.sending();
        let pending = posted.unsettled(&3).unwrap();
        let start = tokio::time::Instant::now();
        tokio::join!(posted.settle(&3, pending, LIMIT), async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            sending.landed(4, target("b"));
        });
        assert_eq!(start.elapsed(), Duration::from_millis(50));
        assert_eq!(posted.get(&3), None);

        // A send that never returns holds an answer for `limit` only.
        let _stuck = posted.sending();
        let pending = posted.unsettled(&3).unwrap();
        let start = tokio::time::Instant::now();
        posted.settle(&3, pending, LIMIT).await;
        assert_eq!(start.elapsed(), LIMIT);
    }
}
