//! Telegram as a chat of the driver (`transport::chat`): its messages are
//! `chat:message`, posted as HTML with an inline keyboard, edited in place (without
//! `reply_markup`, Telegram drops the keyboard); flood control's `retry_after` pauses
//! every sender.

use std::time::Duration;

use chrono::Utc;
use teloxide::prelude::*;
use teloxide::types::{
    InlineKeyboardMarkup, LinkPreviewOptions, MessageId, ParseMode, ReplyParameters,
};
use teloxide::{ApiError, RequestError};

use super::{Context, message};
use crate::approvals::Approvals;
use crate::config::ReactionMap;
use crate::model::Record;
use crate::transport::card::{self, Line, Offer};
use crate::transport::chat::{Failure, Service, Trouble};
use crate::transport::health::Health;
use crate::transport::posted::Posted;

impl Service for Context {
    type Message = MessageId;
    type Attempt = ();
    const NAME: &'static str = "Telegram";
    /// Past teloxide's 17-second HTTP timeout, by which any send has landed or failed.
    const HOLD_LIMIT: Duration = Duration::from_secs(30);

    fn approvals(&self) -> &Approvals {
        &self.approvals
    }

    fn reactions(&self) -> &ReactionMap {
        &self.reactions
    }

    fn health(&self) -> &Health {
        &self.health
    }

    fn posted(&self) -> &Posted<MessageId> {
        &self.posted
    }

    /// A message's external id is `chat:message`.
    fn prefix(&self) -> String {
        format!("{}:", self.chat.0)
    }

    fn name_of(&self, message: &MessageId) -> String {
        message.0.to_string()
    }

    fn message(&self, rest: &str) -> Option<MessageId> {
        rest.parse().ok().map(MessageId)
    }

    fn attempt(&self) {}

    async fn ready(&self) {
        self.limiter.acquire().await;
    }

    async fn post(&self, record: &Record, offer: &Offer<'_>, _: &()) -> Result<MessageId, Failure> {
        let sent = self
            .bot
            .send_message(self.chat, card::approval(record, offer, Utc::now()).html)
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview())
            .reply_markup(message::keyboard(&record.id, offer.grants))
            .await;
        sent.map(|m| m.id).map_err(|e| self.post_failure(&e))
    }

    async fn reply(&self, to: &MessageId, text: &str, _: &()) -> Result<(), Failure> {
        self.limiter.acquire().await;
        let text = crate::text::clip_chars(text, card::MAX_TEXT / 2);
        self.bot
            .send_message(self.chat, text)
            .reply_parameters(ReplyParameters::new(*to).allow_sending_without_reply())
            .await
            .map(|_| ())
            .map_err(|e| self.failure("sendMessage (reply)", &e))
    }

    async fn edit(&self, posted: &MessageId, last: &Record, _: &()) -> Result<(), Failure> {
        self.edit_html(*posted, card::closed(last), None).await
    }

    /// Telegram allows a message a second in a private chat, twenty a minute in a group:
    /// a burst is better read as digests than waited through.
    fn digest_size(&self) -> usize {
        card::DIGEST_MOST
    }

    fn ready_now(&self) -> bool {
        self.limiter.try_acquire()
    }

    async fn post_digest(&self, lines: &[Line], _: &()) -> Result<MessageId, Failure> {
        let sent = self
            .bot
            .send_message(self.chat, card::digest(lines, Utc::now()).html)
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview())
            .reply_markup(message::digest_keyboard(lines))
            .await;
        sent.map(|m| m.id).map_err(|e| self.post_failure(&e))
    }

    async fn edit_digest(&self, posted: &MessageId, lines: &[Line], _: &()) -> Result<(), Failure> {
        let keyboard = message::digest_keyboard(lines);
        let keyboard = (!keyboard.inline_keyboard.is_empty()).then_some(keyboard);
        self.edit_html(*posted, card::digest(lines, Utc::now()), keyboard)
            .await
    }
}

impl Context {
    async fn edit_html(
        &self,
        posted: MessageId,
        card: card::Card,
        keyboard: Option<InlineKeyboardMarkup>,
    ) -> Result<(), Failure> {
        let mut edit = self
            .bot
            .edit_message_text(self.chat, posted, card.html)
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview());
        // Without `reply_markup` Telegram drops the keyboard.
        edit.reply_markup = keyboard;
        match edit.await {
            Ok(_) | Err(RequestError::Api(ApiError::MessageNotModified)) => Ok(()),
            Err(e) => {
                let mut failure = self.failure("editMessageText", &e);
                if let RequestError::Api(
                    ApiError::MessageToEditNotFound
                    | ApiError::MessageCantBeEdited
                    | ApiError::ChatNotFound,
                ) = e
                {
                    failure.kind = Trouble::Gone;
                }
                Err(failure)
            }
        }
    }

    /// A failed sendMessage: refused with advice where the chat itself refuses.
    fn post_failure(&self, e: &RequestError) -> Failure {
        let mut failure = self.failure("sendMessage", e);
        if let Some(hint) = chat_problem(e) {
            failure.kind = Trouble::Refused(format!("telegram.chat_id {}: {hint}", self.chat.0));
        }
        failure
    }

    /// A failed call as the driver reads it: the token cut out, flood control's wait.
    fn failure(&self, what: &'static str, e: &RequestError) -> Failure {
        Failure::outage(what, self.scrub(e), self.told(e))
    }
}

/// What the owner must do when Telegram refuses the chat itself.
fn chat_problem(e: &RequestError) -> Option<&'static str> {
    let RequestError::Api(api) = e else {
        return None;
    };
    // Matched on Telegram's words: teloxide knows some of these by older descriptions.
    let text = api.to_string();
    if text.contains("can't initiate conversation") {
        Some(
            "the owner has not started a chat with the bot yet: open it in Telegram and send /start",
        )
    } else if text.contains("bot was blocked") {
        Some("the owner has blocked the bot: unblock it in Telegram")
    } else if text.contains("chat not found") {
        Some("no such chat, or the bot is not in it: check telegram.chat_id and add the bot")
    } else if text.contains("bot was kicked") || text.contains("not a member") {
        Some("the bot is not a member of the chat: add it again")
    } else {
        None
    }
}

fn no_preview() -> LinkPreviewOptions {
    LinkPreviewOptions {
        is_disabled: true,
        url: None,
        prefer_small_media: false,
        prefer_large_media: false,
        show_above_text: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_chat_gets_advice_an_outage_does_not() {
        let api = |text: &str| RequestError::Api(ApiError::Unknown(text.into()));
        let hint = chat_problem(&api(
            "Forbidden: bot can't initiate conversation with a user",
        ));
        assert!(hint.unwrap().contains("send /start"));
        assert!(
            chat_problem(&RequestError::Api(ApiError::ChatNotFound))
                .unwrap()
                .contains("telegram.chat_id")
        );
        assert!(chat_problem(&api("Forbidden: bot was blocked by the user")).is_some());
        assert_eq!(chat_problem(&api("Bad Request: message is too long")), None);
        assert_eq!(
            chat_problem(&RequestError::RetryAfter(
                teloxide::types::Seconds::from_seconds(3)
            )),
            None
        );
    }
}
