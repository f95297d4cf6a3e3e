//! `GET /v1/events`: what happens to requests, as Server-Sent Events, for a UI that
//! follows the owner's queue live (the approvals page is one).
//!
//! A reader gets a `snapshot` of the pending requests first, then `pending` and
//! `resolved` events carrying the record, and `allowlist` when the rules change (with
//! the rule events that changed them). Each
//! reader drains its own cursor into the daemon's bounded event ring, so a slow or dead
//! reader costs only its own connection: sending never waits for it. One that falls so
//! far behind that the ring has moved on is told (`resync`, with how many events it
//! missed) and given a fresh snapshot, from which it can carry on as if just connected.
//!
//! The subscription is taken before the snapshot is read, so nothing that happens in
//! between is lost; a request may then appear in the snapshot and again in a `pending`
//! event, and a reader keys requests by `id`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event as Sse, KeepAlive};
use futures_util::Stream;
use serde::Serialize;
use tokio::sync::{broadcast, watch};

use super::AppState;
use crate::approvals::{Approvals, Event, Offer};
use crate::model::Record;
use crate::render::{Shown, WithShown};

/// How often an idle stream carries a comment, so that proxies and readers can tell a
/// quiet queue from a dead connection.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// A pending request as a reader needs it to offer answers: the record, and which grants
/// an answer could make (§ "Grants" in docs/api.md).
#[derive(Serialize)]
struct PendingItem<'a> {
    #[serde(flatten)]
    record: &'a Record,
    offer: Offer,
    /// Its text as every front shows it, the offer's included (`render::WithShown`).
    shown: Shown,
}

#[derive(Serialize)]
struct Snapshot<'a> {
    pending: Vec<PendingItem<'a>>,
}

pub async fn stream(
    State(state): State<AppState>,
) -> axum::response::Sse<impl Stream<Item = Result<Sse, Infallible>>> {
    let reader = Reader {
        events: state.approvals.subscribe(),
        stopped: state.approvals.stopped(),
        approvals: state.approvals,
        next: Next::Snapshot,
    };
    let stream = futures_util::stream::unfold(reader, |mut r| async move {
        let event = r.next_event().await?;
        Some((Ok(event), r))
    });
    axum::response::Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
}

enum Next {
    Snapshot,
    Events,
    Done,
}

struct Reader {
    approvals: Arc<Approvals>,
    events: broadcast::Receiver<Event>,
    stopped: watch::Receiver<bool>,
    next: Next,
}

impl Reader {
    /// The next event to send; None ends the stream (the daemon stops, or the store
    /// could not be read for a snapshot: the reader reconnects and tries again).
    async fn next_event(&mut self) -> Option<Sse> {
        match self.next {
            Next::Done => None,
            Next::Snapshot => {
                self.next = Next::Events;
                match self.approvals.pending().await {
                    Ok(list) => {
                        let pending = list.iter().map(|r| self.item(r)).collect();
                        Some(json("snapshot", &Snapshot { pending }))
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "cannot read the pending requests for an event stream");
                        self.next = Next::Done;
                        Some(json(
                            "error",
                            &serde_json::json!({"message": format!("cannot read the pending requests: {e}")}),
                        ))
                    }
                }
            }
            Next::Events => loop {
                let received = tokio::select! {
                    // Whatever was sent before shutdown finished (its cancellations
                    // included) is delivered first.
                    biased;
                    received = self.events.recv() => received,
                    _ = self.stopped.wait_for(|stopped| *stopped) => return None,
                };
                match received {
                    // The reader shows it to a human: its id stays out of circulation.
                    // One that already ended is left to its `resolved` event.
                    Ok(Event::Pending(record)) if self.approvals.show(&record.id) => {
                        return Some(json("pending", &self.item(&record)));
                    }
                    Ok(Event::Pending(_)) => continue,
                    Ok(Event::Resolved(record)) => {
                        let shown = WithShown::record(record);
                        return Some(json("resolved", &shown));
                    }
                    Ok(Event::Rules(events)) => {
                        return Some(json("allowlist", &serde_json::json!({"events": events})));
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(
                            missed,
                            "an event stream reader fell behind; it gets a fresh snapshot"
                        );
                        self.next = Next::Snapshot;
                        return Some(json("resync", &serde_json::json!({"missed": missed})));
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            },
        }
    }

    fn item<'a>(&self, record: &'a Record) -> PendingItem<'a> {
        let offer = self.approvals.offer(record);
        PendingItem {
            record,
            shown: Shown::offering(
                record,
                offer.always_refused.as_deref(),
                offer.rule.as_deref(),
            ),
            offer,
        }
    }
}

fn json(name: &str, data: &impl Serialize) -> Sse {
    // Serialising our own types cannot fail; were it to, the reader sees an empty event
    // rather than a broken stream.
    let data = serde_json::to_string(data).unwrap_or_default();
    Sse::default().event(name).data(data)
}
