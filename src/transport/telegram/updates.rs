//! Long-polls the Bot API and turns what an owner does in the chat — a command, a reply
//! to a request, a reaction, a button — into a call to `Approvals::resolve`.
//!
//! Every path checks the same two things before anything else: the update comes from the
//! configured chat, and from a user (not a bot, not an anonymous admin) listed in
//! `telegram.owner_ids`. Anything else changes nothing and is logged.
//!
//! An answer can come before we know which message it answers (the owner saw the message
//! before sendMessage told us its id): it is held until the posts in flight land, then
//! handled like any other.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use teloxide::RequestError;
use teloxide::prelude::*;
use teloxide::types::{
    AllowedUpdate, CallbackQuery, CustomEmojiId, MessageId, MessageReactionUpdated, ReactionType,
    UpdateKind, User,
};

use super::fetch::{self, Read};
use super::{Context, message};
use crate::model::Via;
use crate::shutdown::Shutdown;
use crate::transport::chat;
use crate::transport::health::Backoff;

/// Seconds a `getUpdates` call waits for news. Below teloxide's 17-second HTTP timeout,
/// which does not stretch for long polls.
const POLL_SECS: u32 = 10;
/// How long to wait after a batch that moved the offset nowhere.
const NO_PROGRESS_WAIT: Duration = Duration::from_secs(5);
/// Telegram's limit on the text of an `answerCallbackQuery` notification.
const CALLBACK_TEXT_MAX: usize = 200;
/// Reactions are only delivered when asked for by name.
const ALLOWED: [AllowedUpdate; 4] = [
    AllowedUpdate::Message,
    AllowedUpdate::EditedMessage,
    AllowedUpdate::CallbackQuery,
    AllowedUpdate::MessageReaction,
];

/// Polls until `stopped`, then confirms the updates it handled so a restart does not see
/// them again. Errors back off and retry for as long as the daemon runs.
pub async fn poll(ctx: Arc<Context>, mut shutdown: Shutdown) {
    let mut backoff = Backoff::new();
    // Commands are checked against the bot's @name, so polling waits for getMe.
    while ctx.me.get().is_none() {
        let result = tokio::select! {
            _ = shutdown.recv() => return,
            r = ctx.bot.get_me().send() => r,
        };
        match result {
            Ok(me) => {
                ctx.succeeded();
                ctx.identified(me).await;
            }
            Err(e) => {
                ctx.failed("getMe", &e);
                tokio::select! {
                    _ = shutdown.recv() => return,
                    _ = backoff.wait(ctx.told(&e), &ctx.health) => {}
                }
            }
        }
    }

    // Telegram forgets updates below the offset of a getUpdates call: `offset` is where
    // the next call starts, `confirmed` what Telegram has been told so far. A poller
    // restarted after a panic goes on from where this one got to, past the update it was
    // handling, rather than meeting that update again.
    let mut offset: i32 = ctx.offset.load(Ordering::Relaxed);
    if offset == 0 {
        // Where the last poller, on this node or another, got to: an answer it took but
        // did not handle comes again, one it handled does not.
        offset = kept_offset(&ctx).await;
        ctx.offset.store(offset, Ordering::Relaxed);
    }
    let mut confirmed: i32 = 0;
    let mut backoff = Backoff::new();
    loop {
        let request = ctx
            .bot
            .get_updates()
            .offset(offset)
            .timeout(POLL_SECS)
            .allowed_updates(ALLOWED);
        let result = tokio::select! {
            _ = shutdown.recv() => break,
            r = fetch::get_updates(&ctx.bot, request) => r,
        };
        match result {
            Ok(batch) => {
                // Telegram heard this offset only if the call got through.
                confirmed = offset;
                ctx.succeeded();
                backoff = Backoff::new();
                let before = offset;
                let fetched = batch.len();
                for value in batch {
                    let update = match fetch::read(value) {
                        Read::Update(update) => *update,
                        Read::Unreadable { id, kind, why } => {
                            tracing::warn!(update_id = ?id.map(|id| id.0), kind, why, "skipping a Telegram update that cannot be read");
                            if let Some(id) = id {
                                offset = offset.max(id.as_offset());
                                ctx.offset.store(offset, Ordering::Relaxed);
                            }
                            continue;
                        }
                    };
                    let next = update.id.as_offset();
                    // The same update twice (a retried response, a confused proxy) is
                    // handled once.
                    if next <= offset {
                        tracing::debug!(
                            update_id = update.id.0,
                            "skipping an update already handled"
                        );
                        continue;
                    }
                    offset = next;
                    ctx.offset.store(offset, Ordering::Relaxed);
                    // Held while it answers a message whose post is in flight.
                    let to = answered_message(&ctx, &update);
                    chat::when_known(&ctx, to, &shutdown, |ctx| async move {
                        handle(&ctx, update).await
                    })
                    .await;
                }
                if offset != before {
                    keep_offset(&ctx, offset).await;
                }
                // Updates none of which has a usable id would come back at once: wait
                // instead of spinning (Telegram always sends ids; a broken proxy might not).
                if fetched > 0 && offset == before {
                    tracing::warn!(
                        fetched,
                        "no update of this batch could be skipped past; waiting before asking again"
                    );
                    tokio::select! {
                        _ = shutdown.recv() => break,
                        _ = tokio::time::sleep(NO_PROGRESS_WAIT) => {}
                    }
                }
            }
            Err(e) => {
                ctx.failed("getUpdates", &e);
                tokio::select! {
                    _ = shutdown.recv() => break,
                    _ = backoff.wait(ctx.told(&e), &ctx.health) => {}
                }
            }
        }
    }
    if offset > confirmed {
        // Read unread too: the update after the last one may be one teloxide cannot read.
        let ack = ctx.bot.get_updates().offset(offset).limit(1).timeout(0);
        let ack = fetch::get_updates(&ctx.bot, ack);
        match tokio::time::timeout(Duration::from_secs(3), ack).await {
            Ok(Ok(_)) => tracing::debug!(offset, "confirmed the last handled update"),
            Ok(Err(e)) => {
                tracing::warn!(error = %ctx.scrub(&e), "could not confirm the last handled update; Telegram will send it again after a restart, where it changes nothing")
            }
            Err(_) => tracing::warn!("timed out confirming the last handled update"),
        }
    }
}

/// The key under which the next update's offset is kept, per bot.
fn offset_key(ctx: &Context) -> String {
    let bot = ctx.token.expose().split(':').next().unwrap_or("");
    format!("telegram.offset.{bot}")
}

/// The offset the database keeps; 0 (Telegram's oldest unconfirmed update) when none.
async fn kept_offset(ctx: &Context) -> i32 {
    match ctx.approvals.kept(&offset_key(ctx)).await {
        Ok(Some(v)) => v.parse().unwrap_or(0),
        Ok(None) => 0,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read where Telegram's updates resume; starting from the oldest Telegram keeps");
            0
        }
    }
}

/// Records that every update below `offset` is handled. Should it fail, the updates since
/// the last record are handled again by the next poller: an answer twice is refused the
/// second time ("already resolved"), never applied twice.
async fn keep_offset(ctx: &Context, offset: i32) {
    if let Err(e) = ctx
        .approvals
        .keep(&offset_key(ctx), &offset.to_string())
        .await
    {
        tracing::warn!(error = %e, "cannot record where Telegram's updates resume");
    }
}

/// The message of ours in our chat that `update` answers, if any: the one reacted to,
/// replied to, or whose button was pressed.
fn answered_message(ctx: &Context, update: &Update) -> Option<MessageId> {
    match &update.kind {
        UpdateKind::MessageReaction(r) if r.chat.id == ctx.chat => Some(r.message_id),
        UpdateKind::Message(m) if m.chat.id == ctx.chat => m
            .reply_to_message()
            .filter(|original| from_us(ctx, original))
            .map(|original| original.id),
        UpdateKind::CallbackQuery(q) => q
            .message
            .as_ref()
            .filter(|m| m.chat().id == ctx.chat)
            .map(|m| m.id()),
        _ => None,
    }
}

async fn handle(ctx: &Context, update: Update) {
    match update.kind {
        UpdateKind::Message(m) => on_message(ctx, &m).await,
        UpdateKind::EditedMessage(m) => tracing::info!(
            chat = m.chat.id.0,
            user = ?m.from.as_ref().map(|u| u.id.0),
            "ignoring an edited message: only new messages can answer a request"
        ),
        UpdateKind::CallbackQuery(q) => on_button(ctx, &q).await,
        UpdateKind::MessageReaction(r) => on_reaction(ctx, &r).await,
        _ => tracing::debug!(
            update_id = update.id.0,
            "ignoring an update of a kind we do not use"
        ),
    }
}

/// `decided_by` for a Telegram user: the id, which never changes, and a name to read.
fn who(user: &User) -> String {
    match &user.username {
        Some(name) => format!("telegram:{} (@{name})", user.id.0),
        None => format!("telegram:{} ({})", user.id.0, user.first_name),
    }
}

async fn on_message(ctx: &Context, m: &Message) {
    let Some(text) = m.text() else { return };
    if m.chat.id != ctx.chat {
        tracing::warn!(
            chat = m.chat.id.0,
            "ignoring a message from a chat other than telegram.chat_id"
        );
        return;
    }
    let Some(user) = m.from.as_ref().filter(|u| ctx.is_owner(u)) else {
        if text.starts_with('/') {
            tracing::warn!(
                user = ?m.from.as_ref().map(|u| u.id.0),
                username = ?m.from.as_ref().and_then(|u| u.username.clone()),
                "ignoring a command from someone not in telegram.owner_ids"
            );
        }
        return;
    };
    if !addressed_to_us(ctx, text) {
        return;
    }
    let replied = m
        .reply_to_message()
        .filter(|original| from_us(ctx, original))
        .map(|original| original.id);
    let by = who(user);
    let heard = chat::Heard {
        by: &by,
        via: Via::TelegramCommand,
        replied: replied.as_ref(),
        replying: m.reply_to_message().is_some(),
    };
    // In a group, other talk is not for us; in a private chat it can only be.
    let talk = m.chat.is_private().then_some("Not a command. Send /help.");
    chat::command(ctx, &m.id, heard, text, talk).await;
}

/// A command may name its bot (`/approve@execgate_bot a1b2`) where several share a chat:
/// one naming another bot is not for us.
fn addressed_to_us(ctx: &Context, text: &str) -> bool {
    let head = text.split_whitespace().next().unwrap_or("");
    match head.split_once('@') {
        None => true,
        Some((_, name)) => ctx
            .me
            .get()
            .is_some_and(|me| me.username().eq_ignore_ascii_case(name)),
    }
}

fn from_us(ctx: &Context, m: &Message) -> bool {
    let me = ctx.me.get().map(|me| me.user.id);
    m.from.as_ref().is_some_and(|u| Some(u.id) == me)
}

async fn on_reaction(ctx: &Context, r: &MessageReactionUpdated) {
    if r.chat.id != ctx.chat {
        tracing::warn!(
            chat = r.chat.id.0,
            "ignoring a reaction in a chat other than telegram.chat_id"
        );
        return;
    }
    let Some(user) = r.user() else {
        tracing::info!("ignoring an anonymous reaction: nobody can tell who gave it");
        return;
    };
    if !ctx.is_owner(user) {
        tracing::warn!(user = user.id.0, username = ?user.username, "ignoring a reaction from someone not in telegram.owner_ids");
        return;
    }
    // `new_reaction` is the whole current set: only what was just added counts, and
    // taking a reaction back does nothing.
    let added: Vec<&ReactionType> = r
        .new_reaction
        .iter()
        .filter(|x| !r.old_reaction.contains(x))
        .collect();
    if added.is_empty() {
        tracing::debug!("a reaction was removed; nothing to do");
        return;
    }
    let mut decisions = Vec::new();
    for reaction in added {
        let emoji = match reaction {
            ReactionType::Emoji { emoji } => Some(emoji.clone()),
            ReactionType::CustomEmoji { custom_emoji_id } => {
                match ctx.custom_emoji(custom_emoji_id).await {
                    Ok(e) => e,
                    Err(e) => {
                        ctx.failed("getCustomEmojiStickers", &e);
                        return chat::reply(ctx, &r.message_id, "Could not look up that custom emoji; nothing was changed. Try again, or answer with /approve.").await;
                    }
                }
            }
            ReactionType::Paid => None,
        };
        if let Some(d) = emoji.and_then(|e| ctx.reactions.decision(&e))
            && !decisions.contains(&d)
        {
            decisions.push(d);
        }
    }
    let decision = match decisions[..] {
        [] => return,
        [d] => d,
        _ => {
            return chat::reply(
                ctx,
                &r.message_id,
                "Those reactions disagree; nothing was changed. Keep one.",
            )
            .await;
        }
    };
    chat::react(
        ctx,
        &r.message_id,
        decision,
        &who(user),
        Via::TelegramReaction,
    )
    .await;
}

async fn on_button(ctx: &Context, q: &CallbackQuery) {
    let text = button(ctx, q).await;
    // Always answered: until it is, the owner's client shows a spinner.
    let answered = ctx
        .bot
        .answer_callback_query(q.id.clone())
        .text(crate::text::clip_chars(&text, CALLBACK_TEXT_MAX))
        .await;
    if let Err(e) = answered {
        tracing::warn!(error = %ctx.scrub(&e), "could not answer a button press");
    }
}

/// What a button press does; the text is shown to whoever pressed it.
async fn button(ctx: &Context, q: &CallbackQuery) -> String {
    let Some(pressed_on) = &q.message else {
        return "This button is not from an approval message.".into();
    };
    if pressed_on.chat().id != ctx.chat {
        tracing::warn!(
            chat = pressed_on.chat().id.0,
            "ignoring a button pressed in a chat other than telegram.chat_id"
        );
        return "Requests are answered in the configured chat only.".into();
    }
    if !ctx.is_owner(&q.from) {
        tracing::warn!(user = q.from.id.0, username = ?q.from.username, "ignoring a button pressed by someone not in telegram.owner_ids");
        return "Only the owner can answer requests.".into();
    }
    let Some((decision, id)) = q.data.as_deref().and_then(message::parse_callback) else {
        return "This button is not one of execgate's.".into();
    };
    let by = who(&q.from);
    chat::press(
        ctx,
        &pressed_on.id(),
        id,
        decision,
        &by,
        Via::TelegramButton,
    )
    .await
}

impl Context {
    /// The emoji a custom emoji stands for, asked of Telegram once and then remembered.
    async fn custom_emoji(&self, id: &CustomEmojiId) -> Result<Option<String>, RequestError> {
        if let Some(known) = self.cache().get(&id.0) {
            return Ok(known.clone());
        }
        let stickers = self.bot.get_custom_emoji_stickers([id.clone()]).await?;
        let emoji = stickers.into_iter().find_map(|s| s.emoji);
        self.cache().insert(id.0.clone(), emoji.clone());
        Ok(emoji)
    }

    fn cache(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Option<String>>> {
        self.custom_emoji.lock().unwrap_or_else(|e| e.into_inner())
    }
}
