//! One request's message, from post to final edit. Posting is retried (with backoff,
//! honouring `retry_after`) for as long as the request is pending; once it ends, the
//! message is edited to say how, whoever ended it, and its buttons go away.

use std::time::Duration;

use chrono::Utc;
use teloxide::prelude::*;
use teloxide::types::{LinkPreviewOptions, MessageId, ParseMode};
use teloxide::{ApiError, RequestError};
use tokio::time::Instant;

use super::{Context, message};
use crate::model::Record;
use crate::transport::deliveries::{self, Done, outcome, over, remember};
use crate::transport::health::Backoff;
use crate::transport::posted::Target;
use crate::transport::{Left, card};

/// How long an edit keeps being retried through an outage before it is given up.
const EDIT_PATIENCE: Duration = Duration::from_secs(3600);

/// The `message_external_id` of a Telegram message: `chat:message`.
pub fn external_id(chat: ChatId, message: MessageId) -> String {
    format!("{}:{}", chat.0, message.0)
}

/// Posts `record`, remembers its message, and edits it once the request is over.
pub async fn deliver(ctx: &Context, record: Record, mut done: Done) {
    let posted = match posted_before(ctx, &record).await {
        // Posted by an earlier leader of the chats: edited, never posted twice.
        Some(posted) => posted,
        None => {
            let Some(posted) = post(ctx, &record, &mut done).await else {
                return;
            };
            remember(
                &ctx.approvals,
                &record,
                &external_id(ctx.chat, posted),
                "Telegram",
            )
            .await;
            posted
        }
    };
    if let Some(last) = outcome(&ctx.approvals, &record, &mut done).await {
        edit(ctx, posted, &last).await;
    }
    // The request is over: the store answers for its message from here on.
    ctx.posted.forget(&posted);
}

/// The message in this chat that the database says shows `record`, if any.
async fn posted_before(ctx: &Context, record: &Record) -> Option<MessageId> {
    let chat = format!("{}:", ctx.chat.0);
    let message = deliveries::posted_before(&ctx.approvals, record, &chat).await?;
    message.parse().ok().map(MessageId)
}

/// Sends the approval message until it lands or the request ends. None: never posted.
async fn post(ctx: &Context, record: &Record, done: &mut Done) -> Option<MessageId> {
    let mut backoff = Backoff::new();
    loop {
        tokio::select! {
            _ = over(done) => return None,
            _ = ctx.limiter.acquire() => {}
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
        // Not raced against the request's end: a send cut off halfway may still land,
        // and a message we do not know about could never be edited.
        let sending = ctx.posted.sending();
        let sent = ctx
            .bot
            .send_message(ctx.chat, card::approval(record, &offer, Utc::now()).html)
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview())
            .reply_markup(message::keyboard(&record.id, &grants))
            .await;
        match sent {
            Ok(m) => {
                // Known at once, before the store hears of it: the owner may answer now.
                sending.landed(m.id, Target::from(record));
                ctx.succeeded();
                return Some(m.id);
            }
            Err(e) => {
                drop(sending);
                match chat_problem(&e) {
                    // Not an outage: nothing reaches the owner until this is fixed, so
                    // it is said every time.
                    Some(hint) => tracing::error!(
                        short_id = %record.short_id,
                        error = %ctx.scrub(&e),
                        "cannot post to telegram.chat_id {}: {hint}",
                        ctx.chat.0
                    ),
                    None => ctx.failed("sendMessage", &e),
                }
                tokio::select! {
                    _ = over(done) => {
                        tracing::warn!(short_id = %record.short_id, "request ended before its Telegram message could be posted");
                        return None;
                    }
                    _ = backoff.wait(ctx.told(&e), &ctx.health) => {}
                }
            }
        }
    }
}

/// Edits the messages of requests the last run left pending, in this chat, to say how
/// they ended.
pub async fn close_left(ctx: &Context, left: &[Left]) {
    let ours = format!("{}:", ctx.chat.0);
    for (record, message) in Left::in_chat(left, &ours) {
        if let Ok(message) = message.parse::<i32>() {
            edit(ctx, MessageId(message), record).await;
        }
    }
}

/// Replaces the message with the outcome and removes the buttons.
async fn edit(ctx: &Context, posted: MessageId, last: &Record) {
    let give_up = Instant::now() + EDIT_PATIENCE;
    let mut backoff = Backoff::new();
    let text = card::closed(last).html;
    loop {
        ctx.limiter.acquire().await;
        // Without reply_markup, Telegram drops the inline keyboard.
        let result = ctx
            .bot
            .edit_message_text(ctx.chat, posted, &text)
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview())
            .await;
        let e = match result {
            Ok(_) | Err(RequestError::Api(ApiError::MessageNotModified)) => {
                ctx.succeeded();
                return;
            }
            Err(e) => e,
        };
        if let RequestError::Api(
            ApiError::MessageToEditNotFound
            | ApiError::MessageCantBeEdited
            | ApiError::ChatNotFound,
        ) = e
        {
            tracing::warn!(short_id = %last.short_id, error = %ctx.scrub(&e), "cannot update the request's Telegram message; leaving it");
            return;
        }
        ctx.failed("editMessageText", &e);
        backoff.wait(ctx.told(&e), &ctx.health).await;
        if Instant::now() > give_up {
            tracing::warn!(short_id = %last.short_id, "gave up updating the request's Telegram message after an hour of failures");
            return;
        }
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
