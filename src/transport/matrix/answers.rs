//! What an owner does in the room — a command, a reply to a request, a reaction — turned
//! into a call to `Approvals::resolve`.
//!
//! The SDK's event handlers only sort events (our room, not our own) and queue them; one
//! task answers them in order, so a slow store never holds up the sync. Every path checks
//! the sender against `matrix.owner_ids` before anything else: a stranger's command,
//! reply or reaction changes nothing and is logged. A reaction taken back is a redaction,
//! which nothing here listens to: it changes nothing. An answer to a message not known
//! yet (the owner saw it before the send answered) is held until the posts in flight land.

use std::sync::Arc;

use matrix_sdk::ruma::events::reaction::OriginalSyncReactionEvent;
use matrix_sdk::ruma::events::room::encrypted::OriginalSyncRoomEncryptedEvent;
use matrix_sdk::ruma::events::room::member::{MembershipState, StrippedRoomMemberEvent};
use matrix_sdk::ruma::events::room::message::{
    MessageType, OriginalSyncRoomMessageEvent, Relation,
};
use matrix_sdk::ruma::{OwnedEventId, OwnedUserId, UserId};
use matrix_sdk::{Client, Room};
use tokio::sync::mpsc;

use super::Context;
use crate::model::Via;
use crate::shutdown::Shutdown;
use crate::transport::chat;

/// Events queued for answering; past this, the sync waits for the answers to catch up.
pub const QUEUE: usize = 256;

/// An event from our room, sorted.
#[derive(Debug)]
pub enum Incoming {
    Message {
        sender: OwnedUserId,
        event: OwnedEventId,
        /// The text, without a reply's quoted fallback.
        body: String,
        /// The message it replies to (or the thread it is in).
        replied: Option<OwnedEventId>,
        /// An edit of an earlier message.
        edit: bool,
    },
    Reaction {
        sender: OwnedUserId,
        target: OwnedEventId,
        key: String,
    },
}

impl Incoming {
    /// The message of ours it answers, if any.
    fn answers(&self) -> Option<&OwnedEventId> {
        match self {
            Incoming::Message { replied, .. } => replied.as_ref(),
            Incoming::Reaction { target, .. } => Some(target),
        }
    }
}

/// Registers the handlers that feed `queue` on `client`.
pub fn listen(ctx: &Arc<Context>, client: &Client, queue: mpsc::Sender<Incoming>) {
    let (c, q) = (Arc::clone(ctx), queue.clone());
    client.add_event_handler(move |ev: OriginalSyncRoomMessageEvent, room: Room| {
        let (ctx, queue) = (Arc::clone(&c), q.clone());
        async move {
            if !ours(&ctx, &room, &ev.sender) {
                return;
            }
            let MessageType::Text(text) = &ev.content.msgtype else {
                return;
            };
            let (replied, edit) = match &ev.content.relates_to {
                Some(Relation::Reply(r)) => (Some(r.in_reply_to.event_id.clone()), false),
                Some(Relation::Thread(t)) => match &t.in_reply_to {
                    Some(r) if !t.is_falling_back => (Some(r.event_id.clone()), false),
                    _ => (Some(t.event_id.clone()), false),
                },
                Some(Relation::Replacement(_)) => (None, true),
                _ => (None, false),
            };
            let incoming = Incoming::Message {
                sender: ev.sender.clone(),
                event: ev.event_id.clone(),
                body: without_fallback(&text.body).to_string(),
                replied,
                edit,
            };
            let _ = queue.send(incoming).await;
        }
    });
    let (c, q) = (Arc::clone(ctx), queue);
    client.add_event_handler(move |ev: OriginalSyncReactionEvent, room: Room| {
        let (ctx, queue) = (Arc::clone(&c), q.clone());
        async move {
            if !ours(&ctx, &room, &ev.sender) {
                return;
            }
            let incoming = Incoming::Reaction {
                sender: ev.sender.clone(),
                target: ev.content.relates_to.event_id.clone(),
                key: ev.content.relates_to.key.clone(),
            };
            let _ = queue.send(incoming).await;
        }
    });
    let c = Arc::clone(ctx);
    client.add_event_handler(
        move |ev: OriginalSyncRoomEncryptedEvent, room: Room| {
            let ctx = Arc::clone(&c);
            async move {
                if ours(&ctx, &room, &ev.sender) {
                    tracing::warn!(sender = %ev.sender, event = %ev.event_id, "cannot decrypt a message in matrix.room_id: the sender's device did not share its key with the bot's device; if it was an answer, send it again");
                }
            }
        },
    );
    let c = Arc::clone(ctx);
    client.add_event_handler(
        move |ev: StrippedRoomMemberEvent, room: Room, client: Client| {
            let ctx = Arc::clone(&c);
            async move {
                if ev.state_key != ctx.account.user
                    || ev.content.membership != MembershipState::Invite
                {
                    return;
                }
                if room.room_id() != ctx.account.room {
                    tracing::info!(room = %room.room_id(), inviter = %ev.sender, "ignoring an invite to a room other than matrix.room_id");
                    return;
                }
                if !ctx.is_owner(&ev.sender) {
                    tracing::warn!(inviter = %ev.sender, "ignoring an invite to matrix.room_id from someone not in matrix.owner_ids");
                    return;
                }
                // Joining waits on the homeserver; the sync must not.
                tokio::spawn(async move { super::enter_room(&ctx, &client).await });
            }
        },
    );
}

/// True for an event in our room from someone else than the bot.
fn ours(ctx: &Context, room: &Room, sender: &UserId) -> bool {
    room.room_id() == ctx.account.room && sender != ctx.account.user
}

/// A reply's text without the quote older clients put before it (`> <@who> …` lines,
/// then a blank line).
fn without_fallback(body: &str) -> &str {
    if !body.starts_with("> ") {
        return body;
    }
    match body.split_once("\n\n") {
        Some((quote, rest)) if quote.lines().all(|l| l.starts_with('>')) => rest,
        _ => body,
    }
}

/// Answers queued events in order until shutdown.
pub async fn run(ctx: Arc<Context>, mut queue: mpsc::Receiver<Incoming>, mut shutdown: Shutdown) {
    loop {
        let incoming = tokio::select! {
            _ = shutdown.recv() => return,
            next = queue.recv() => match next {
                Some(incoming) => incoming,
                None => return,
            },
        };
        // Held while it answers a message whose post is in flight.
        let to = incoming.answers().cloned();
        chat::when_known(&ctx, to, &shutdown, |ctx| async move {
            handle(&ctx, incoming).await
        })
        .await;
    }
}

async fn handle(ctx: &Context, incoming: Incoming) {
    match incoming {
        Incoming::Message {
            sender,
            event,
            body,
            replied,
            edit,
        } => on_message(ctx, &sender, &event, &body, replied.as_ref(), edit).await,
        Incoming::Reaction {
            sender,
            target,
            key,
        } => on_reaction(ctx, &sender, &target, &key).await,
    }
}

/// `decided_by` for a Matrix user.
fn who(user: &UserId) -> String {
    format!("matrix:{user}")
}

async fn on_message(
    ctx: &Context,
    sender: &UserId,
    event: &OwnedEventId,
    body: &str,
    replied: Option<&OwnedEventId>,
    edit: bool,
) {
    if !ctx.is_owner(sender) {
        if body.trim_start().starts_with('/') {
            tracing::warn!(%sender, "ignoring a command from someone not in matrix.owner_ids");
        }
        return;
    }
    if edit {
        tracing::debug!(%sender, "ignoring an edited message: only new messages can answer a request");
        return;
    }
    let by = who(sender);
    let heard = chat::Heard {
        by: &by,
        via: Via::MatrixCommand,
        replied,
        replying: replied.is_some(),
    };
    // Talk in the room is not for us.
    chat::command(ctx, event, heard, body, None).await;
}

async fn on_reaction(ctx: &Context, sender: &UserId, target: &OwnedEventId, key: &str) {
    let Some(decision) = ctx.reactions.decision(key) else {
        // Any other emoji is just a reaction.
        return;
    };
    if !ctx.is_owner(sender) {
        tracing::warn!(%sender, key, "ignoring an answering reaction from someone not in matrix.owner_ids");
        return;
    }
    chat::react(ctx, target, decision, &who(sender), Via::MatrixReaction).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_fallback_is_not_part_of_the_answer() {
        assert_eq!(
            without_fallback("> <@bot:x> 🔒 Exec approval required\n> ID: a1b2\n\n/approve always"),
            "/approve always"
        );
        assert_eq!(without_fallback("/deny a1b2"), "/deny a1b2");
        // A quote the owner wrote themselves, with nothing after it, is left alone.
        assert_eq!(without_fallback("> just a quote"), "> just a quote");
    }
}
