//! A chat transport's deliveries: one task per request that needs a human, from its post
//! to its final edit, at most one per request, shared by every chat transport. A
//! delivery that panics (in a chat's SDK) is logged and ends alone; the transport goes on.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::approvals::Approvals;
use crate::model::Record;

/// How a delivery learns that its request has ended: the terminal record, once there is
/// one.
pub type Done = watch::Receiver<Option<Record>>;

pub struct Deliveries {
    /// Each task answers the id of its request ("" for other work).
    set: JoinSet<String>,
    running: HashSet<String>,
    /// The chat's name, for the log.
    chat: &'static str,
}

impl Deliveries {
    pub fn new(chat: &'static str) -> Deliveries {
        Deliveries {
            set: JoinSet::new(),
            running: HashSet::new(),
            chat,
        }
    }

    /// Starts `deliver(record, done)`, unless a delivery of `record` runs, or the request
    /// has already ended (then there is nothing to post).
    pub fn start<F, Fut>(&mut self, approvals: &Approvals, record: Record, deliver: F)
    where
        F: FnOnce(Record, Done) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        if self.running.contains(&record.id) {
            return;
        }
        let Some(done) = approvals.watch(&record.id) else {
            return;
        };
        self.running.insert(record.id.clone());
        let (id, short_id, chat) = (record.id.clone(), record.short_id.clone(), self.chat);
        let delivery = Guarded(tokio::spawn(deliver(record, done)));
        self.set.spawn(async move {
            if let Err(e) = delivery.finished().await
                && e.is_panic()
            {
                tracing::error!(%short_id, "the {chat} delivery of a request failed unexpectedly; its message may be missing or not updated");
            }
            id
        });
    }

    /// Starts a delivery for every pending request without one: the way back after
    /// missed events.
    pub async fn catch_up<F, Fut>(&mut self, approvals: &Approvals, deliver: F)
    where
        F: Fn(Record, Done) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        match approvals.pending().await {
            Ok(list) => {
                for record in list {
                    self.start(approvals, record, &deliver);
                }
            }
            Err(e) => tracing::error!(error = %e, "cannot list pending requests to post them"),
        }
    }

    /// Runs `work` beside the deliveries, and waits for it at shutdown like them.
    pub fn also(&mut self, work: impl Future<Output = ()> + Send + 'static) {
        self.set.spawn(async move {
            work.await;
            String::new()
        });
    }

    /// Waits for a delivery to end and forgets it; None when none runs (so that a
    /// `select!` branch on it is off).
    pub async fn reap(&mut self) -> Option<()> {
        let ended = self.set.join_next().await?;
        if let Ok(id) = ended {
            self.running.remove(&id);
        }
        Some(())
    }

    /// At shutdown, when every request has ended: gives the deliveries `grace` to edit
    /// their messages, then stops the rest.
    pub async fn finish(mut self, grace: Duration) {
        let finished = tokio::time::timeout(grace, async {
            while self.set.join_next().await.is_some() {}
        })
        .await;
        if finished.is_err() {
            tracing::warn!(
                left = self.set.len(),
                "{} messages not updated within {}s of shutdown",
                self.chat,
                grace.as_secs()
            );
            self.set.abort_all();
        }
    }
}

/// A delivery's own task, aborted with the task that waits for it.
struct Guarded(JoinHandle<()>);

impl Guarded {
    async fn finished(mut self) -> Result<(), tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Stores that chat message `external` shows `record`, so replies and reactions find it
/// once the delivery is over (until then `transport::posted` knows it too). A few tries,
/// then an error in the log: answers work while the request is pending, not after a
/// restart.
pub async fn remember(approvals: &Approvals, record: &Record, external: &str, chat: &str) {
    for attempt in 1..=5 {
        match approvals.note_message(&record.id, external).await {
            Ok(()) => return,
            Err(e) => {
                tracing::error!(short_id = %record.short_id, attempt, error = %e, "cannot store the request's {chat} message id; answers to it work while it is pending, not after a restart");
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
            }
        }
    }
}

/// The message that the database says shows `record` in the chat whose message ids begin
/// with `chat` (see [`remember`]), as the rest of its id: a request posted by an earlier
/// leader of the chats is followed from that message, never posted twice.
pub async fn posted_before(approvals: &Approvals, record: &Record, chat: &str) -> Option<String> {
    match approvals.messages(&record.id).await {
        Ok(messages) => messages
            .into_iter()
            .find_map(|m| m.strip_prefix(chat).map(str::to_string)),
        Err(e) => {
            // Unknown: posting again is better than leaving the owner without a message.
            tracing::warn!(short_id = %record.short_id, error = %e, "cannot read whether the request was posted already");
            None
        }
    }
}

/// The request once it has ended; None if nobody can tell.
pub async fn outcome(approvals: &Approvals, record: &Record, done: &mut Done) -> Option<Record> {
    let last = match done.wait_for(Option::is_some).await {
        Ok(r) => r.clone(),
        Err(_) => None,
    };
    // The watch always carries the terminal record; the store is a fallback only.
    match last {
        Some(r) => Some(r),
        None => match approvals.record(&record.id).await {
            Ok(Some(r)) if r.status.is_terminal() => Some(r),
            _ => None,
        },
    }
}

/// Resolves once the request is no longer pending (or nobody can tell any more).
pub async fn over(done: &mut Done) {
    let _ = done.wait_for(Option::is_some).await;
}
