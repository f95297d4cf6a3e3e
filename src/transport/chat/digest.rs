//! Digests: when more requests wait for a chat's pacing than it lets through, whoever
//! gets the next slot posts all that wait (up to the chat's `digest_size`) as one
//! message, a block and a row of buttons each (`card::digest`). Each request stays its
//! own: stored as `CHAT:MESSAGE#ID`, answered alone by its buttons or its id, and the
//! message edited as each ends, from the store, so the last edit shows them all as they
//! are. A request whose block could not show it whole is never gathered: it waits for a
//! slot of its own.

use chrono::Utc;
use tokio::time::Instant;

use super::{EDIT_PATIENCE, Service, Trouble};
use crate::model::{Record, Status};
use crate::transport::card::{self, Line};
use crate::transport::deliveries::{Done, over, remember};
use crate::transport::health::Backoff;
use crate::transport::posted::{Target, Waiter};

/// When a request may be posted.
pub(super) enum Turn<M> {
    /// It holds a slot of the pacing: post it alone now.
    Alone,
    /// A digest shows it, as this message.
    Shown(M),
    /// It ended before either.
    Over,
}

/// Waits until `record` may be posted: a slot of its own, or a place in a digest that
/// whoever gets the next slot posts (perhaps this very wait).
pub(super) async fn turn<S: Service>(
    svc: &S,
    record: &Record,
    done: &mut Done,
) -> Turn<S::Message> {
    let most = match svc.approvals().policy().config().approval.digests {
        true => svc.digest_size().min(card::DIGEST_MOST),
        false => 0,
    };
    if most < 2 || !card::fits_digest(record, Utc::now()) {
        return tokio::select! {
            _ = over(done) => Turn::Over,
            _ = svc.ready() => Turn::Alone,
        };
    }
    let posted = svc.posted();
    loop {
        // Nobody ahead and a slot free: no reason to wait for company.
        if !posted.anyone_waiting() && svc.ready_now() {
            return Turn::Alone;
        }
        let mut ticket = posted.wait_turn(record, done);
        // Taken into a digest by another: its answer comes, whatever else happens.
        let mut taken = false;
        let told = loop {
            let uncollected = posted.uncollected();
            tokio::pin!(uncollected);
            uncollected.as_mut().enable();
            // One waiter waits for the slot, for all: it collects.
            let collects = !taken && posted.collect(&ticket);
            tokio::select! {
                biased;
                told = &mut ticket.told => break told.ok().flatten(),
                _ = over(done), if !taken => {
                    if posted.leave(&ticket) {
                        return Turn::Over;
                    }
                    taken = true;
                }
                _ = svc.ready(), if collects => {
                    let mut batch = posted.gather(&ticket, most);
                    match batch.len() {
                        // Someone took it meanwhile: the slot goes unused.
                        0 => taken = true,
                        1 => return Turn::Alone,
                        _ => {
                            // This wait's own place is told like every other, unless it
                            // is left alone: then the slot it holds is its own.
                            batch.sort_by_key(|w| w.record.created_at);
                            for w in post(svc, batch).await {
                                if !w.holds(&ticket) {
                                    w.tell(None);
                                } else if done.borrow().is_none() {
                                    return Turn::Alone;
                                } else {
                                    return Turn::Over;
                                }
                            }
                            taken = true;
                        }
                    }
                }
                // The collector stepped down: perhaps this one collects now.
                _ = &mut uncollected, if !collects && !taken => {}
            }
        };
        match told {
            Some(message) => return Turn::Shown(message),
            // The digest did not show it: it ended, or it is to be posted alone.
            None if done.borrow().is_some() => return Turn::Over,
            None => continue,
        }
    }
}

/// Posts `batch` as one digest until it lands, and tells each request the message; a
/// request that ends before is told None. When fewer than two are left, they are handed
/// back untold, each to be posted alone (the caller holds a slot of the pacing).
async fn post<S: Service>(svc: &S, mut batch: Vec<Waiter<S::Message>>) -> Vec<Waiter<S::Message>> {
    let mut backoff = Backoff::new();
    let attempt = svc.attempt();
    loop {
        // Noted as shown before they are, so their ids stay out of circulation for a day;
        // those that are no longer pending leave.
        let (stay, gone): (Vec<_>, Vec<_>) = batch
            .into_iter()
            .partition(|w| w.done.borrow().is_none() && svc.approvals().show(&w.record.id));
        gone.into_iter().for_each(|w| w.tell(None));
        batch = stay;
        let mut lines: Vec<Line> = batch
            .iter()
            .map(|w| Line {
                grants: Some(svc.approvals().offer(&w.record)),
                record: w.record.clone(),
            })
            .collect();
        // The newest wait for the next slot if the message cannot show them all.
        while lines.len() >= 2 && !svc.digest_fits(&lines) {
            lines.pop();
            if let Some(w) = batch.pop() {
                w.tell(None);
            }
        }
        if batch.len() < 2 {
            return batch;
        }
        let sending = svc.posted().sending();
        match svc.post_digest(&lines, &attempt).await {
            Ok(message) => {
                let targets = batch.iter().map(|w| Target::from(&w.record)).collect();
                sending.landed_digest(message.clone(), targets);
                svc.health().succeeded();
                let base = format!("{}{}#", svc.prefix(), svc.name_of(&message));
                for w in &batch {
                    let external = format!("{base}{}", w.record.id);
                    remember(svc.approvals(), &w.record, &external, S::NAME).await;
                }
                tracing::info!(requests = batch.len(), "posted a {} digest", S::NAME);
                batch
                    .into_iter()
                    .for_each(|w| w.tell(Some(message.clone())));
                return Vec::new();
            }
            Err(failure) => {
                drop(sending);
                match &failure.kind {
                    Trouble::Refused(hint) => tracing::error!(
                        error = %failure.error,
                        "cannot post to {}: {hint}",
                        S::NAME
                    ),
                    _ => svc.health().failed(failure.what, &failure.error),
                }
                backoff.wait(failure.told, svc.health()).await;
                svc.ready().await;
            }
        }
    }
}

/// Redraws the digest `message` from what its requests are now: ended ones closed,
/// pending ones with their buttons. Retried through an outage of up to an hour; one
/// redraw at a time, each reading its requests afresh.
pub(super) async fn edit<S: Service>(svc: &S, message: &S::Message) {
    let _one_at_a_time = svc.posted().editing().await;
    let give_up = Instant::now() + EDIT_PATIENCE;
    let mut backoff = Backoff::new();
    let attempt = svc.attempt();
    loop {
        if tokio::time::timeout_at(give_up, svc.ready()).await.is_err() {
            tracing::warn!(
                "gave up updating a {} digest: the chat was not back within an hour",
                S::NAME
            );
            return;
        }
        let lines = lines(svc, message).await;
        if lines.is_empty() {
            return;
        }
        let failure = match svc.edit_digest(message, &lines, &attempt).await {
            Ok(()) => {
                svc.health().succeeded();
                return;
            }
            Err(failure) => failure,
        };
        if failure.kind == Trouble::Gone {
            tracing::warn!(error = %failure.error, "cannot update a {} digest; leaving it", S::NAME);
            return;
        }
        if Instant::now() > give_up {
            tracing::warn!(
                "gave up updating a {} digest after an hour of failures",
                S::NAME
            );
            return;
        }
        svc.health().failed(failure.what, &failure.error);
        backoff.wait(failure.told, svc.health()).await;
    }
}

/// The requests `message` shows, as they are now, oldest first: from the store, and
/// from the running deliveries for any whose message the store has not taken yet.
async fn lines<S: Service>(svc: &S, message: &S::Message) -> Vec<Line> {
    let prefix = format!("{}{}#", svc.prefix(), svc.name_of(message));
    let mut records = match svc.approvals().find_by_message_prefix(&prefix).await {
        Ok(records) => records,
        Err(e) => {
            tracing::error!(error = %e, "cannot read the requests of a {} digest", S::NAME);
            Vec::new()
        }
    };
    for target in svc.posted().all(message) {
        if records.iter().any(|r| r.id == target.id) {
            continue;
        }
        if let Ok(Some(record)) = svc.approvals().record(&target.id).await {
            records.push(record);
        }
    }
    records.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    records
        .into_iter()
        .map(|record| Line {
            grants: (record.status == Status::Pending).then(|| svc.approvals().offer(&record)),
            record,
        })
        .collect()
}
