//! One request's message, from post to final edit. Posting is retried (with backoff,
//! honouring `retry_after`) for as long as the request is pending, under one transaction
//! id, so a retry of a send that did land is not posted twice; once the request ends,
//! the message is replaced (`m.replace`) by one that says how, whoever ended it.

use std::time::Duration;

use chrono::Utc;
use matrix_sdk::Room;
use matrix_sdk::ruma::events::Mentions;
use matrix_sdk::ruma::events::room::message::{ReplacementMetadata, RoomMessageEventContent};
use matrix_sdk::ruma::{OwnedEventId, TransactionId};
use tokio::time::Instant;

use super::Context;
use crate::model::Record;
use crate::transport::Left;
use crate::transport::card::{self, Card};
use crate::transport::deliveries::{self, Done, outcome, over, remember};
use crate::transport::health::Backoff;
use crate::transport::posted::Target;

/// How long an edit keeps being retried through an outage before it is given up.
const EDIT_PATIENCE: Duration = Duration::from_secs(3600);
/// The most bytes of HTML and plain text one message carries. A Matrix event is at most
/// 64 KiB, and an edit carries its text twice (the new content and a fallback); a card
/// whose escaped HTML would not fit goes as plain text only.
const MAX_CONTENT_BYTES: usize = 24_000;

/// The `message_external_id` of a Matrix message: `matrix:ROOM:EVENT`.
pub fn external_id(room: &matrix_sdk::ruma::RoomId, event: &matrix_sdk::ruma::EventId) -> String {
    format!("matrix:{room}:{event}")
}

/// Posts `record`, remembers its message, and edits it once the request is over.
pub async fn deliver(ctx: &Context, record: Record, mut done: Done) {
    let event = match posted_before(ctx, &record).await {
        // Posted by an earlier leader of the chats: edited, never posted twice.
        Some(event) => event,
        None => {
            let Some((room, event)) = post(ctx, &record, &mut done).await else {
                return;
            };
            remember(
                &ctx.approvals,
                &record,
                &external_id(room.room_id(), &event),
                "Matrix",
            )
            .await;
            event
        }
    };
    if let Some(last) = outcome(&ctx.approvals, &record, &mut done).await {
        edit(ctx, &event, &last).await;
    }
    ctx.posted.forget(&event);
}

/// The message in this room that the database says shows `record`, if any.
async fn posted_before(ctx: &Context, record: &Record) -> Option<OwnedEventId> {
    let room = format!("matrix:{}:", ctx.account.room);
    let event = deliveries::posted_before(&ctx.approvals, record, &room).await?;
    matrix_sdk::ruma::EventId::parse(event).ok()
}

/// The room, once the bot is in it; None if the request ends first.
async fn room(ctx: &Context, done: &mut Done) -> Option<Room> {
    let mut rooms = ctx.room.subscribe();
    tokio::select! {
        _ = over(done) => None,
        room = rooms.wait_for(Option::is_some) => room.ok().and_then(|r| r.clone()),
    }
}

/// A message in both forms, or plain only where the HTML would make the event too big.
///
/// It mentions nobody, said explicitly (an empty `m.mentions`): without it, clients fall
/// back to matching the body, and an agent's command containing `@room` would notify
/// everyone in the room.
pub fn content(card: Card) -> RoomMessageEventContent {
    let mut content = if card.html.len() + card.plain.len() <= MAX_CONTENT_BYTES {
        RoomMessageEventContent::text_html(card.plain, card.html)
    } else {
        RoomMessageEventContent::text_plain(card.plain)
    };
    content.mentions = Some(Mentions::new());
    content
}

/// Sends the approval message until it lands or the request ends. None: never posted.
async fn post(ctx: &Context, record: &Record, done: &mut Done) -> Option<(Room, OwnedEventId)> {
    let mut backoff = Backoff::new();
    // One transaction id for every attempt: the homeserver posts it once.
    let txn = TransactionId::new();
    loop {
        let room = room(ctx, done).await?;
        tokio::select! {
            _ = over(done) => return None,
            _ = ctx.paced() => {}
        }
        // Noted as shown before it is, so its id stays out of circulation for a day.
        if !ctx.approvals.show(&record.id) {
            return None;
        }
        let grants = ctx.approvals.offer(record);
        let offer = card::Offer {
            grants: &grants,
            reactions: &ctx.reactions,
        };
        let message = content(card::approval(record, &offer, Utc::now()));
        // Not raced against the request's end: a send cut off halfway may still land,
        // and a message we do not know about could never be edited.
        let sending = ctx.posted.sending();
        let sent = ctx.send(&room, message, &txn).await;
        match sent {
            Ok(event) => {
                sending.landed(event.clone(), Target::from(record));
                ctx.succeeded();
                return Some((room, event));
            }
            Err(e) => {
                drop(sending);
                ctx.failed("sending a message", &e.to_string());
                tokio::select! {
                    _ = over(done) => {
                        tracing::warn!(short_id = %record.short_id, "request ended before its Matrix message could be posted");
                        return None;
                    }
                    _ = backoff.wait(ctx.wait_for(&e), &ctx.health) => {}
                }
            }
        }
    }
}

/// Edits the messages of requests the last run left pending, in this room, to say how
/// they ended.
pub async fn close_left(ctx: &Context, left: &[Left]) {
    let ours = format!("matrix:{}:", ctx.account.room);
    for (record, event) in Left::in_chat(left, &ours) {
        if let Ok(event) = matrix_sdk::ruma::EventId::parse(event) {
            edit(ctx, &event, record).await;
        }
    }
}

/// Replaces the message with the outcome.
async fn edit(ctx: &Context, event: &OwnedEventId, last: &Record) {
    let give_up = Instant::now() + EDIT_PATIENCE;
    let mut backoff = Backoff::new();
    let replacement = content(card::closed(last)).make_replacement(ReplacementMetadata::new(
        event.clone(),
        Some(Mentions::new()),
    ));
    let txn = TransactionId::new();
    loop {
        // The room of the session in use: a new login gives a new client.
        let room = ctx.room.borrow().clone();
        let Some(room) = room else {
            // Not in the room right now: wait for it to come back.
            let mut rooms = ctx.room.subscribe();
            let back = tokio::time::timeout_at(give_up, rooms.wait_for(Option::is_some)).await;
            if back.is_err() {
                tracing::warn!(short_id = %last.short_id, "gave up updating the request's Matrix message: not back in the room within an hour");
                return;
            }
            continue;
        };
        let sent = ctx.send(&room, replacement.clone(), &txn).await;
        match sent {
            Ok(_) => {
                ctx.succeeded();
                return;
            }
            Err(_) if Instant::now() > give_up => {
                tracing::warn!(short_id = %last.short_id, "gave up updating the request's Matrix message after an hour of failures");
                return;
            }
            Err(e) => {
                ctx.failed("editing a message", &e.to_string());
                backoff.wait(ctx.wait_for(&e), &ctx.health).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use matrix_sdk::ruma::events::room::message::MessageType;

    #[test]
    fn a_card_too_big_for_an_edit_goes_as_plain_text() {
        let small = content(Card {
            html: "<b>hi</b>".into(),
            plain: "hi".into(),
        });
        let mentions = small.mentions.as_ref().expect("m.mentions is set");
        assert!(
            mentions.user_ids.is_empty() && !mentions.room,
            "nobody is pinged"
        );
        let MessageType::Text(text) = small.msgtype else {
            panic!("a text message")
        };
        assert!(text.formatted.is_some());
        // Escaping can make the HTML six times the text (`"` is `&quot;`).
        let quotes = "\"".repeat(4000);
        let big = content(Card {
            html: card::escape(&quotes),
            plain: quotes.clone(),
        });
        let MessageType::Text(text) = big.msgtype else {
            panic!("a text message")
        };
        assert!(text.formatted.is_none());
        assert_eq!(text.body, quotes);
    }
}
