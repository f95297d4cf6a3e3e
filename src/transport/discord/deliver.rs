//! Discord as a chat of the driver (`transport::chat`): its messages are
//! `discord:PLACE:message`, posted as markdown with a row of buttons and no mention
//! allowed, edited in place with the buttons taken away; replies are message replies.
//! What each REST error means for the message: a 429's `retry_after` pauses every sender;
//! Missing Access / Missing Permissions / Unknown Channel are the channel refusing (said
//! every time, naming `discord.channel_id`); Unknown Message on an edit leaves it.

use std::time::Duration;

use chrono::Utc;
use reqwest::Method;
use serde_json::{Value, json};
use twilight_model::channel::Message;
use twilight_model::channel::message::{Component, MessageFlags};
use twilight_model::id::Id;
use twilight_model::id::marker::{ChannelMarker, MessageMarker};

use super::rest::RestError;
use super::{Context, Place, message};
use crate::approvals::Approvals;
use crate::config::ReactionMap;
use crate::model::Record;
use crate::transport::card::{self, Line, Offer};
use crate::transport::chat::{Failure, Service, Trouble};
use crate::transport::health::Health;
use crate::transport::posted::Posted;

/// Discord's JSON error codes the transport acts on.
const MISSING_ACCESS: u64 = 50001;
const MISSING_PERMISSIONS: u64 = 50013;
const UNKNOWN_CHANNEL: u64 = 10003;
const UNKNOWN_MESSAGE: u64 = 10008;
const CANNOT_SEND_TO_USER: u64 = 50007;

type MessageId = Id<MessageMarker>;

/// Rows of buttons Discord allows under one message.
const DIGEST_ROWS: usize = 5;
/// What a closed block of a digest may say beyond its pending one ("Approved once by
/// discord:… via discord-button" in place of the agent, risk and expiry).
const CLOSED_MORE: usize = 160;

impl Service for Context {
    type Message = MessageId;
    type Attempt = ();
    const NAME: &'static str = "Discord";
    /// Past the REST client's timeout, by which any post has landed or failed.
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

    /// A message's external id is `discord:CHANNEL:message`, or `discord:@OWNER:message`
    /// in a DM (known before Discord has told us the DM's channel).
    fn prefix(&self) -> String {
        match self.place {
            Place::Channel(channel) => format!("discord:{channel}:"),
            Place::Dm(owner) => format!("discord:@{owner}:"),
        }
    }

    fn name_of(&self, message: &MessageId) -> String {
        message.to_string()
    }

    fn message(&self, rest: &str) -> Option<MessageId> {
        rest.parse::<u64>().ok().and_then(Id::new_checked)
    }

    fn attempt(&self) {}

    async fn ready(&self) {
        let mut channel = self.channel.subscribe();
        let _ = channel.wait_for(Option::is_some).await;
        self.limiter.acquire().await;
    }

    async fn post(&self, record: &Record, offer: &Offer<'_>, _: &()) -> Result<MessageId, Failure> {
        let content = message::markdown(&card::approval(record, offer, Utc::now()).html);
        self.post_content(content, message::buttons(&record.id, offer.grants))
            .await
    }

    async fn reply(&self, to: &MessageId, text: &str, _: &()) -> Result<(), Failure> {
        let channel = self.known_channel("POST /channels/{id}/messages (reply)")?;
        self.limiter.acquire().await;
        let text = crate::text::clip_chars(&message::escape(text), message::MAX_CONTENT);
        let body = json!({
            "content": text,
            "message_reference": {"message_id": to.to_string(), "fail_if_not_exists": false},
            "allowed_mentions": no_mentions(),
            "flags": MessageFlags::SUPPRESS_EMBEDS.bits(),
        });
        let path = format!("/channels/{channel}/messages");
        self.http
            .call_unread(Method::POST, &path, Some(&body), true)
            .await
            .map_err(|e| self.failure("POST /channels/{id}/messages (reply)", &e, false))
    }

    async fn edit(&self, posted: &MessageId, last: &Record, _: &()) -> Result<(), Failure> {
        let content = message::markdown(&card::closed(last).html);
        self.update(posted, content, Vec::new()).await
    }

    /// Five rows of buttons at most under a message: five requests a digest.
    fn digest_size(&self) -> usize {
        DIGEST_ROWS
    }

    fn ready_now(&self) -> bool {
        self.channel().is_some() && self.limiter.try_acquire()
    }

    /// A message holds 2,000 characters: the digest must, as posted and once each of its
    /// requests has ended (a closed block says a little more than a pending one).
    fn digest_fits(&self, lines: &[Line]) -> bool {
        let posted = message::markdown(&card::digest(lines, Utc::now()).html);
        posted.chars().count() + lines.len() * CLOSED_MORE <= message::MAX_CONTENT
    }

    async fn post_digest(&self, lines: &[Line], _: &()) -> Result<MessageId, Failure> {
        let content = message::markdown(&card::digest(lines, Utc::now()).html);
        self.post_content(content, message::digest_buttons(lines))
            .await
    }

    async fn edit_digest(&self, posted: &MessageId, lines: &[Line], _: &()) -> Result<(), Failure> {
        let content = message::markdown(&card::digest(lines, Utc::now()).html);
        self.update(posted, content, message::digest_buttons(lines))
            .await
    }
}

impl Context {
    /// Posts `content` with `components` as a message of its own.
    async fn post_content(
        &self,
        content: String,
        components: Vec<Component>,
    ) -> Result<MessageId, Failure> {
        let channel = self.known_channel("POST /channels/{id}/messages")?;
        let body = json!({
            "content": content,
            "components": components,
            "allowed_mentions": no_mentions(),
            "flags": MessageFlags::SUPPRESS_EMBEDS.bits(),
        });
        let path = format!("/channels/{channel}/messages");
        let sent: Message = self
            .http
            .call(Method::POST, &path, Some(&body), true)
            .await
            .map_err(|e| self.failure("POST /channels/{id}/messages", &e, true))?;
        Ok(sent.id)
    }

    /// Replaces message `posted` with `content` and `components` (none: the buttons go);
    /// a message that no longer exists is gone.
    async fn update(
        &self,
        posted: &MessageId,
        content: String,
        components: Vec<Component>,
    ) -> Result<(), Failure> {
        let channel = self.known_channel("PATCH /channels/{id}/messages/{id}")?;
        let body = json!({
            "content": content,
            "components": components,
            "allowed_mentions": no_mentions(),
        });
        let path = format!("/channels/{channel}/messages/{posted}");
        let result = self
            .http
            .call_unread(Method::PATCH, &path, Some(&body), true)
            .await;
        result.map_err(|e| {
            let mut failure = self.failure("PATCH /channels/{id}/messages/{id}", &e, false);
            if matches!(e.code, Some(UNKNOWN_MESSAGE | UNKNOWN_CHANNEL)) {
                failure.kind = Trouble::Gone;
            }
            failure
        })
    }

    /// The channel, which `ready` has waited for; an outage if it is somehow not known.
    fn known_channel(&self, what: &'static str) -> Result<Id<ChannelMarker>, Failure> {
        self.channel().ok_or_else(|| {
            Failure::outage(what, "the Discord channel is not known yet".into(), None)
        })
    }

    /// A failed call as the driver reads it: the token cut out, a 429's wait (which also
    /// pauses every other sender), and for a post (`posting`) what the owner must fix.
    fn failure(&self, what: &'static str, e: &RestError, posting: bool) -> Failure {
        let told = e.retry_after;
        if let Some(wait) = told {
            self.limiter.pause(wait);
        }
        let mut failure = Failure::outage(what, self.scrub(e), told);
        if e.is_unauthorized() {
            failure.kind = Trouble::Refused(
                "Discord rejects discord.bot_token (401 Unauthorized): the token was reset or the bot deleted; set a new token and restart".into(),
            );
        } else if posting && let Some(hint) = self.channel_problem(e) {
            failure.kind = Trouble::Refused(hint);
        }
        failure
    }

    /// What the owner must do when Discord refuses the channel itself.
    fn channel_problem(&self, e: &RestError) -> Option<String> {
        let place = match self.place {
            Place::Channel(id) => format!("discord.channel_id {id}"),
            Place::Dm(owner) => {
                format!("the direct message with {owner} (discord.channel_id unset)")
            }
        };
        let hint = match e.code? {
            MISSING_ACCESS => {
                "the bot cannot see the channel: invite it to the server, and give it View Channel there"
            }
            MISSING_PERMISSIONS => {
                "the bot may not post there: give it Send Messages (and Read Message History) in the channel"
            }
            UNKNOWN_CHANNEL => {
                "no such channel: check discord.channel_id (Developer Mode, right-click the channel, Copy Channel ID)"
            }
            CANNOT_SEND_TO_USER => {
                "Discord will not let the bot message the owner: share a server with the bot and allow direct messages from its members, or set discord.channel_id"
            }
            _ => return None,
        };
        Some(format!("{place}: {hint}"))
    }
}

/// `allowed_mentions` that allows none: whatever a message holds, nobody is pinged.
fn no_mentions() -> Value {
    json!({"parse": []})
}
