//! Matrix as a chat of the driver (`transport::chat`): its messages are
//! `matrix:ROOM:EVENT`, posted in the room under one transaction id for every retry (so
//! a retry of a send that did land is not posted twice), and replaced (`m.replace`) by
//! one that says how the request ended.

use std::time::Duration;

use chrono::Utc;
use matrix_sdk::Room;
use matrix_sdk::ruma::events::Mentions;
use matrix_sdk::ruma::events::relation::{InReplyTo, Reply};
use matrix_sdk::ruma::events::room::message::{
    Relation, ReplacementMetadata, RoomMessageEventContent,
};
use matrix_sdk::ruma::{OwnedEventId, OwnedTransactionId, TransactionId};

use super::Context;
use crate::approvals::Approvals;
use crate::config::ReactionMap;
use crate::model::Record;
use crate::transport::card::{self, Card, Offer};
use crate::transport::chat::{Failure, Service, Trouble};
use crate::transport::health::Health;
use crate::transport::posted::Posted;

/// The most bytes of HTML and plain text one message carries. A Matrix event is at most
/// 64 KiB, and an edit carries its text twice (the new content and a fallback); a card
/// whose escaped HTML would not fit goes as plain text only.
const MAX_CONTENT_BYTES: usize = 24_000;

impl Service for Context {
    type Message = OwnedEventId;
    type Attempt = OwnedTransactionId;
    const NAME: &'static str = "Matrix";
    /// Past a send's own timeout, by which any post has landed or failed.
    const HOLD_LIMIT: Duration = Duration::from_secs(40);

    fn approvals(&self) -> &Approvals {
        &self.approvals
    }

    fn reactions(&self) -> &ReactionMap {
        &self.reactions
    }

    fn health(&self) -> &Health {
        &self.health
    }

    fn posted(&self) -> &Posted<OwnedEventId> {
        &self.posted
    }

    /// A message's external id is `matrix:ROOM:EVENT`.
    fn prefix(&self) -> String {
        format!("matrix:{}:", self.account.room)
    }

    fn name_of(&self, event: &OwnedEventId) -> String {
        event.to_string()
    }

    fn message(&self, rest: &str) -> Option<OwnedEventId> {
        matrix_sdk::ruma::EventId::parse(rest).ok()
    }

    fn attempt(&self) -> OwnedTransactionId {
        TransactionId::new()
    }

    /// Once the bot is in the room (a new login gives a new client and room), and past
    /// any pause the homeserver asked for.
    async fn ready(&self) {
        let mut rooms = self.room.subscribe();
        let _ = rooms.wait_for(Option::is_some).await;
        self.paced().await;
    }

    async fn post(
        &self,
        record: &Record,
        offer: &Offer<'_>,
        txn: &OwnedTransactionId,
    ) -> Result<OwnedEventId, Failure> {
        let room = self.in_room("sending a message")?;
        let message = content(card::approval(record, offer, Utc::now()));
        self.send(&room, message, txn)
            .await
            .map_err(|e| self.failure("sending a message", &e))
    }

    async fn reply(
        &self,
        to: &OwnedEventId,
        text: &str,
        txn: &OwnedTransactionId,
    ) -> Result<(), Failure> {
        let text = crate::text::clip_chars(text, card::MAX_TEXT);
        let mut content = RoomMessageEventContent::notice_plain(text);
        content.relates_to = Some(Relation::Reply(Reply::new(InReplyTo::new(to.clone()))));
        let Some(room) = self.room.borrow().clone() else {
            let mut gone = Failure::outage("sending a reply", "not in matrix.room_id".into(), None);
            gone.kind = Trouble::Gone;
            return Err(gone);
        };
        self.send(&room, content, txn)
            .await
            .map(|_| ())
            .map_err(|e| self.failure("sending a reply", &e))
    }

    async fn edit(
        &self,
        event: &OwnedEventId,
        last: &Record,
        txn: &OwnedTransactionId,
    ) -> Result<(), Failure> {
        let room = self.in_room("editing a message")?;
        let replacement = content(card::closed(last)).make_replacement(ReplacementMetadata::new(
            event.clone(),
            Some(Mentions::new()),
        ));
        self.send(&room, replacement, txn)
            .await
            .map(|_| ())
            .map_err(|e| self.failure("editing a message", &e))
    }
}

impl Context {
    /// The room of the session in use; an outage while the bot is not in it.
    fn in_room(&self, what: &'static str) -> Result<Room, Failure> {
        self.room
            .borrow()
            .clone()
            .ok_or_else(|| Failure::outage(what, "the bot is not in the room".into(), None))
    }

    /// A failed call as the driver reads it, with the homeserver's `retry_after`.
    fn failure(&self, what: &'static str, e: &matrix_sdk::Error) -> Failure {
        Failure::outage(what, e.to_string(), self.wait_for(e))
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
