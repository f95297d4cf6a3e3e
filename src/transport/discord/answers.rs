//! Turns what an owner does in the channel — a command, a reply to a request, a reaction,
//! a button press — into a call to `Approvals::resolve`.
//!
//! Every path checks the same two things before anything else: the event comes from the
//! configured channel, and from a user listed in `discord.owner_ids` (never a bot, never
//! the bot itself, never a webhook). Anything else changes nothing and is logged; a
//! stranger's button press is told so, only them.
//!
//! The gateway's reader hands every event to one worker, in order, and goes back to
//! reading at once: the connection's heartbeats never wait for an answer's reply to be
//! paced out. A button press is an interaction, which Discord wants acknowledged within
//! three seconds: the reader does that itself, first thing (a deferred, ephemeral
//! answer), before the decision, which can take longer on a busy store, behind other
//! answers, or when it waits for a post in flight; the result then replaces that answer.
//!
//! An answer can come before we know which message it answers (the owner saw the message
//! before Discord's answer to our post came back): it is held until the posts in flight
//! land, then handled like any other.

use std::sync::Arc;

use reqwest::Method;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use twilight_gateway::Event;
use twilight_model::application::interaction::{Interaction, InteractionData, InteractionType};
use twilight_model::channel::Message;
use twilight_model::channel::message::{EmojiReactionType, MessageFlags};
use twilight_model::gateway::GatewayReaction;
use twilight_model::http::interaction::InteractionResponseType;
use twilight_model::id::Id;
use twilight_model::id::marker::{ChannelMarker, MessageMarker};

use super::{Context, Place, message, who};
use crate::model::Via;
use crate::shutdown::Shutdown;
use crate::transport::chat;

/// Events waiting for the worker at most; past that the reader waits too.
const QUEUED_MAX: usize = 256;

/// Starts the worker that handles answers in the order they came; events go to it
/// through [`receive`].
pub fn worker(ctx: Arc<Context>, shutdown: Shutdown) -> (mpsc::Sender<Answer>, JoinHandle<()>) {
    let (queue, mut answers) = mpsc::channel::<Answer>(QUEUED_MAX);
    let task = tokio::spawn(async move {
        while let Some(answer) = answers.recv().await {
            // Held while it answers a message whose post is in flight.
            let to = answer.answered(&ctx);
            chat::when_known(&ctx, to, &shutdown, |ctx| async move {
                answer.handle(&ctx).await
            })
            .await;
        }
    });
    (queue, task)
}

/// Takes an event from the reader: a button press is acknowledged now, within Discord's
/// three seconds; whatever may answer a request goes to the worker.
pub async fn receive(ctx: &Context, event: Event, queue: &mpsc::Sender<Answer>) {
    let answer = match event {
        Event::InteractionCreate(i) => match acknowledge(ctx, (*i).0).await {
            Some(press) => Answer::Press(Box::new(press)),
            None => return,
        },
        Event::MessageCreate(m) => Answer::Message(Box::new(m.message)),
        Event::ReactionAdd(r) => Answer::Reaction(Box::new((*r).0)),
        _ => return,
    };
    if queue.send(answer).await.is_err() {
        tracing::warn!("the Discord answers worker is gone; an event was dropped");
    }
}

/// An event that may answer a request.
pub enum Answer {
    Message(Box<Message>),
    Reaction(Box<GatewayReaction>),
    /// An owner's press in our channel, acknowledged already.
    Press(Box<Press>),
}

impl Answer {
    /// The message of ours in our channel this answers, if any: the one reacted to,
    /// replied to, or whose button was pressed.
    fn answered(&self, ctx: &Context) -> Option<Id<MessageMarker>> {
        let channel = ctx.channel()?;
        match self {
            Answer::Message(m) if m.channel_id == channel => {
                m.reference.as_ref().and_then(|r| r.message_id)
            }
            Answer::Reaction(r) if r.channel_id == channel => Some(r.message_id),
            Answer::Press(p) => Some(p.message),
            _ => None,
        }
    }

    async fn handle(self, ctx: &Context) {
        match self {
            Answer::Message(m) => on_message(ctx, &m).await,
            Answer::Reaction(r) => on_reaction(ctx, &r).await,
            Answer::Press(p) => p.decide(ctx).await,
        }
    }
}

/// Whether `channel` is ours; says so when it is not.
fn in_our_channel(ctx: &Context, channel: Option<Id<ChannelMarker>>, what: &str) -> bool {
    let ours = ctx.channel();
    if channel.is_some() && channel == ours {
        return true;
    }
    tracing::debug!(
        ?channel,
        "ignoring {what} outside the configured Discord channel"
    );
    false
}

async fn on_message(ctx: &Context, m: &Message) {
    if !in_our_channel(ctx, Some(m.channel_id), "a message") {
        return;
    }
    // Our own messages, other bots', webhooks': never answers.
    if m.author.bot || m.webhook_id.is_some() || Some(&m.author.id) == ctx.me.get() {
        return;
    }
    let text = without_our_mention(ctx, &m.content);
    if !ctx.is_owner(m.author.id) {
        if text.starts_with('/') {
            tracing::warn!(user = %m.author.id, name = %m.author.name, "ignoring a command from someone not in discord.owner_ids");
        }
        return;
    }
    let reference = m.reference.as_ref().and_then(|r| r.message_id);
    let by = who(m.author.id);
    let heard = chat::Heard {
        by: &by,
        via: Via::DiscordCommand,
        // Only our approval messages are known to the store: a reply to anything else
        // names no request.
        replied: reference.as_ref(),
        replying: reference.is_some(),
    };
    // In a server channel, other talk is not for us; in a DM it can only be.
    let talk = matches!(ctx.place, Place::Dm(_)).then_some("Not a command. Send /help.");
    chat::command(ctx, &m.id, heard, text, talk).await;
}

/// `text` without a leading mention of the bot (`@execgate /approve a1b2`).
fn without_our_mention<'a>(ctx: &Context, text: &'a str) -> &'a str {
    let text = text.trim();
    let Some(me) = ctx.me.get() else { return text };
    for mention in [format!("<@{me}>"), format!("<@!{me}>")] {
        if let Some(rest) = text.strip_prefix(&mention) {
            return rest.trim_start();
        }
    }
    text
}

async fn on_reaction(ctx: &Context, r: &GatewayReaction) {
    if !in_our_channel(ctx, Some(r.channel_id), "a reaction") {
        return;
    }
    let bot = r.member.as_ref().is_some_and(|m| m.user.bot);
    if bot || !ctx.is_owner(r.user_id) {
        if Some(&r.user_id) != ctx.me.get() {
            tracing::warn!(user = %r.user_id, "ignoring a reaction from someone not in discord.owner_ids");
        }
        return;
    }
    // Custom emoji are the server's own pictures, standing for no emoji: only Unicode
    // emoji can be in the map.
    let EmojiReactionType::Unicode { name } = &r.emoji else {
        tracing::debug!("a custom emoji reaction; it means nothing here");
        return;
    };
    let Some(decision) = ctx.reactions.decision(name) else {
        return;
    };
    chat::react(
        ctx,
        &r.message_id,
        decision,
        &who(r.user_id),
        Via::DiscordReaction,
    )
    .await;
}

/// An owner's button press, acknowledged, waiting to be decided.
pub struct Press {
    interaction: Interaction,
    message: Id<MessageMarker>,
}

/// Answers an interaction within Discord's three seconds: a press that can change
/// nothing is told why at once; an owner's press in our channel is deferred (an
/// ephemeral "thinking") and returned to be decided.
async fn acknowledge(ctx: &Context, interaction: Interaction) -> Option<Press> {
    if interaction.kind != InteractionType::MessageComponent {
        tracing::debug!(kind = ?interaction.kind, "ignoring an interaction that is not a button press");
        return None;
    }
    #[allow(deprecated)] // Discord still sends `channel_id`; `channel` is the new place.
    let channel = interaction
        .channel
        .as_ref()
        .map(|c| c.id)
        .or(interaction.channel_id);
    let user = interaction.author_id();
    let refusal = if !in_our_channel(ctx, channel, "a button press") {
        Some("Requests are answered in the configured channel only.")
    } else if interaction.author().is_some_and(|u| u.bot) || !user.is_some_and(|u| ctx.is_owner(u))
    {
        tracing::warn!(user = ?user, "ignoring a button pressed by someone not in discord.owner_ids");
        Some(
            "Only the owners named in execgate's configuration can answer requests; nothing was changed.",
        )
    } else if interaction.message.is_none() {
        Some("This button is not from an approval message.")
    } else {
        None
    };
    if let Some(text) = refusal {
        respond(
            ctx,
            &interaction,
            InteractionResponseType::ChannelMessageWithSource,
            Some(text),
        )
        .await;
        return None;
    }
    respond(
        ctx,
        &interaction,
        InteractionResponseType::DeferredChannelMessageWithSource,
        None,
    )
    .await;
    let message = interaction.message.as_ref()?.id;
    Some(Press {
        interaction,
        message,
    })
}

/// The interaction's callback, ephemeral: seen by the presser only.
async fn respond(
    ctx: &Context,
    interaction: &Interaction,
    kind: InteractionResponseType,
    text: Option<&str>,
) {
    let mut data = json!({
        "flags": MessageFlags::EPHEMERAL.bits(),
        "allowed_mentions": {"parse": []},
    });
    if let Some(text) = text {
        data["content"] = json!(message::escape(text));
    }
    let body = json!({"type": kind as u8, "data": data});
    let path = format!(
        "/interactions/{}/{}/callback",
        interaction.id, interaction.token
    );
    // The interaction's token is its own authority: no bot token goes with it.
    let sent = ctx
        .http
        .call_unread(Method::POST, &path, Some(&body), false)
        .await;
    if let Err(e) = sent {
        tracing::warn!(error = %ctx.scrub(&e), "could not answer a button press (interaction callback)");
    }
}

impl Press {
    /// Carries out the press and puts the result where the "thinking" was.
    async fn decide(self, ctx: &Context) {
        let text = self.outcome(ctx).await;
        let text = crate::text::clip_chars(&message::escape(&text), message::MAX_CONTENT);
        let path = format!(
            "/webhooks/{}/{}/messages/@original",
            self.interaction.application_id, self.interaction.token
        );
        let body = json!({"content": text, "allowed_mentions": {"parse": []}});
        let edited = ctx
            .http
            .call_unread(Method::PATCH, &path, Some(&body), false)
            .await;
        if let Err(e) = edited {
            tracing::warn!(error = %ctx.scrub(&e), "could not tell the owner what their button did");
        }
    }

    async fn outcome(&self, ctx: &Context) -> String {
        let data = match &self.interaction.data {
            Some(InteractionData::MessageComponent(data)) => Some(data.custom_id.as_str()),
            _ => None,
        };
        let Some((decision, id)) = data.and_then(message::parse_custom_id) else {
            return "This button is not one of execgate's.".into();
        };
        let Some(user) = self.interaction.author_id() else {
            return "Nobody pressed this button.".into();
        };
        chat::press(
            ctx,
            &self.message,
            id,
            decision,
            &who(user),
            Via::DiscordButton,
        )
        .await
    }
}
