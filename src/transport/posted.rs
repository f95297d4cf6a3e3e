//! Which of our messages shows which request, known the moment the chat's send call
//! answers; shared by the chat transports, each with its own kind of message id.
//!
//! The store learns it a moment later, or much later when its writes are slow, and the
//! owner can answer sooner: a fast reaction, one from a second device, one that outruns a
//! slow network back from the chat before the send has answered at all. So the mapping
//! is kept here from the instant a post lands until its delivery ends, and an answer to a
//! message not known yet waits while any post is in flight, then is looked up again. A
//! real answer is never dropped for coming early.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;
use std::hash::Hash;
use std::time::Duration;

use tokio::sync::watch;

use crate::model::Record;

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

/// Our approval messages and our posts in flight. Every change wakes whoever waits.
pub struct Posted<M> {
    state: watch::Sender<State<M>>,
}

struct State<M> {
    /// The messages of running deliveries, by message id (one chat: ids are unique).
    shown: HashMap<M, Target>,
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
                in_flight: BTreeSet::new(),
                next: 0,
            }),
        }
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

    /// The request `message` shows, while its delivery runs.
    pub fn get(&self, message: &M) -> Option<Target> {
        self.state.borrow().shown.get(message).cloned()
    }

    /// The delivery of `message` is over; the store answers for it from now on.
    pub fn forget(&self, message: &M) {
        self.state
            .send_if_modified(|s| s.shown.remove(message).is_some());
    }

    /// What an answer to `message` must wait for before it is looked up: None when the
    /// message is known, or no post is in flight (then the lookup is final at once).
    pub fn unsettled(&self, message: &M) -> Option<InFlight> {
        let s = self.state.borrow();
        (!s.shown.contains_key(message) && !s.in_flight.is_empty())
            .then(|| InFlight(s.in_flight.clone()))
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
            s.shown.insert(message, target);
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
        posted.forget(&7);
        assert_eq!(posted.get(&7), None);
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
