//! Slack as a chat of the driver (`transport::chat`): its messages are `ts`s in the
//! channel, posted with `chat.postMessage` as Block Kit, replied to in their thread, and
//! edited with `chat.update` (the blocks replaced, so the buttons go). A 429's
//! `Retry-After` pauses every sender.

use std::time::Duration;

use chrono::Utc;
use serde::Deserialize;
use slack_morphism::prelude::*;

use super::api::{ApiError, Token};
use super::{Context, Ts, advice, message};
use crate::approvals::Approvals;
use crate::config::ReactionMap;
use crate::model::Record;
use crate::transport::card::{self, Line, Offer};
use crate::transport::chat::{Failure, Service, Trouble};
use crate::transport::health::Health;
use crate::transport::posted::Posted;

#[derive(Deserialize)]
struct PostedMessage {
    ts: String,
}

#[derive(Deserialize)]
struct Nothing {}

impl Service for Context {
    type Message = Ts;
    type Attempt = ();
    const NAME: &'static str = "Slack";
    /// Past a Web API call's 15-second timeout, by which any post has landed or failed.
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

    fn posted(&self) -> &Posted<Ts> {
        &self.posted
    }

    /// A message's external id is `slack:CHANNEL:TS`, the channel as configured.
    fn prefix(&self) -> String {
        format!("slack:{}:", self.configured)
    }

    fn name_of(&self, message: &Ts) -> String {
        message.ts.clone()
    }

    fn message(&self, rest: &str) -> Option<Ts> {
        let (secs, micros) = rest.split_once('.')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(secs) && digits(micros)).then(|| Ts::top(rest))
    }

    fn attempt(&self) {}

    async fn ready(&self) {
        self.channel_known().await;
        self.limiter.acquire().await;
    }

    async fn post(&self, record: &Record, offer: &Offer<'_>, _: &()) -> Result<Ts, Failure> {
        let card = card::approval(record, offer, Utc::now());
        let content = SlackMessageContent::new()
            .with_text(message::summary(&card.plain))
            .with_blocks(message::approval(&card, &record.id, offer.grants));
        self.post_content(content).await
    }

    async fn reply(&self, to: &Ts, text: &str, _: &()) -> Result<(), Failure> {
        let channel = self.channel_known().await;
        self.limiter.acquire().await;
        let text = crate::text::clip_chars(text, card::MAX_TEXT / 2);
        let content = SlackMessageContent::new()
            .with_text(message::summary(&text))
            .with_blocks(message::literal(&text));
        let request = SlackApiChatPostMessageRequest::new(channel.into(), content)
            .with_thread_ts(to.thread_root().into())
            .with_unfurl_links(false)
            .with_unfurl_media(false);
        self.api
            .call::<PostedMessage>("chat.postMessage", Token::Bot, &request)
            .await
            .map(|_| ())
            .map_err(|e| self.failure(&e))
    }

    async fn edit(&self, posted: &Ts, last: &Record, _: &()) -> Result<(), Failure> {
        let card = card::closed(last);
        let content = SlackMessageContent::new()
            .with_text(message::summary(&card.plain))
            .with_blocks(message::closed(&card));
        self.update(posted, content).await
    }

    /// Slack asks for about a message a second in a channel: a burst is better read as
    /// digests than waited through.
    fn digest_size(&self) -> usize {
        card::DIGEST_MOST
    }

    fn ready_now(&self) -> bool {
        self.channel.borrow().is_some() && self.limiter.try_acquire()
    }

    async fn post_digest(&self, lines: &[Line], _: &()) -> Result<Ts, Failure> {
        let card = card::digest(lines, Utc::now());
        let content = SlackMessageContent::new()
            .with_text(message::summary(&card.plain))
            .with_blocks(message::digest(&card, lines));
        self.post_content(content).await
    }

    async fn edit_digest(&self, posted: &Ts, lines: &[Line], _: &()) -> Result<(), Failure> {
        let card = card::digest(lines, Utc::now());
        let content = SlackMessageContent::new()
            .with_text(message::summary(&card.plain))
            .with_blocks(message::digest(&card, lines));
        self.update(posted, content).await
    }
}

impl Context {
    /// Replaces message `posted` with `content`; a message that can no longer be
    /// updated is gone.
    async fn update(&self, posted: &Ts, content: SlackMessageContent) -> Result<(), Failure> {
        let channel = self.channel_known().await;
        let request =
            SlackApiChatUpdateRequest::new(channel.into(), content, posted.ts.clone().into());
        match self
            .api
            .call::<Nothing>("chat.update", Token::Bot, &request)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => {
                let mut failure = self.failure(&e);
                if matches!(
                    e.slack(),
                    Some(
                        "message_not_found"
                            | "cant_update_message"
                            | "edit_window_closed"
                            | "channel_not_found"
                            | "is_archived"
                    )
                ) {
                    failure.kind = Trouble::Gone;
                }
                Err(failure)
            }
        }
    }

    /// Posts `content` to the channel, as a message of its own.
    async fn post_content(&self, content: SlackMessageContent) -> Result<Ts, Failure> {
        let channel = self.channel_known().await;
        let request = SlackApiChatPostMessageRequest::new(channel.into(), content)
            .with_unfurl_links(false)
            .with_unfurl_media(false);
        let posted: PostedMessage = self
            .api
            .call("chat.postMessage", Token::Bot, &request)
            .await
            .map_err(|e| self.failure(&e))?;
        Ok(Ts::top(posted.ts))
    }

    /// A failed call as the driver reads it: what the owner must change, or an outage
    /// with the wait Slack asked for.
    fn failure(&self, e: &ApiError) -> Failure {
        let mut failure = Failure::outage(e.method, e.to_string(), self.told(e));
        if let Some(advice) = advice(e) {
            failure.kind = Trouble::Refused(advice);
        }
        failure
    }
}
