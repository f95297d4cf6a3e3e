//! What an owner does in Slack — a message (a command, with or without its slash), a
//! reply in a request's thread, a reaction, a button — read from the Socket Mode
//! envelopes and turned into calls of the chat driver.
//!
//! Every path checks the same things before anything else: the event is in the
//! configured channel, from a user listed in `slack.owner_ids`, not from a bot (this one
//! included), and not an edit or a deletion. Anything else changes nothing and is
//! logged; a stranger's button press is told only that owners answer.
//!
//! An answer can come before we know which message it answers (the owner saw the message
//! before `chat.postMessage` told us its ts): it is held until the posts in flight land,
//! then handled like any other.

use serde::Deserialize;
use serde_json::Value;
use slack_morphism::prelude::*;

use super::api::Token;
use super::{Context, Ts, message};
use crate::model::Via;
use crate::transport::chat;
use crate::transport::grammar;

/// The words of the chat grammar, which a message may also begin with without the slash
/// (Slack keeps a leading `/` for its slash commands).
const COMMANDS: [&str; 5] = ["approve", "deny", "pending", "allowlist", "help"];

/// Something an owner may have done, read from an envelope.
#[derive(Debug)]
pub enum Item {
    Message(MessageEvent),
    Reaction(ReactionEvent),
    Press(Press),
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum EventBody {
    #[serde(rename = "message")]
    Message(MessageEvent),
    #[serde(rename = "reaction_added")]
    ReactionAdded(ReactionEvent),
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
pub struct MessageEvent {
    channel: String,
    ts: String,
    user: Option<String>,
    text: Option<String>,
    thread_ts: Option<String>,
    /// Edits, deletions, joins, bots' messages: none of them is an answer.
    subtype: Option<String>,
    bot_id: Option<String>,
    /// In a thread: who wrote the message the thread hangs on.
    parent_user_id: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ReactionEvent {
    user: String,
    reaction: String,
    item: ReactionItem,
}

#[derive(Debug, Deserialize)]
struct ReactionItem {
    #[serde(rename = "type")]
    kind: String,
    channel: Option<String>,
    ts: Option<String>,
}

/// A `block_actions` interaction: someone pressed a button.
#[derive(Debug, Deserialize)]
pub struct Press {
    user: Named,
    channel: Option<Named>,
    container: Option<Container>,
    message: Option<PressedMessage>,
    #[serde(default)]
    actions: Vec<Action>,
}

#[derive(Debug, Deserialize)]
struct Named {
    id: String,
}

#[derive(Debug, Deserialize)]
struct Container {
    message_ts: Option<String>,
    channel_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct PressedMessage {
    ts: String,
}

#[derive(Debug, Deserialize)]
struct Action {
    value: Option<String>,
}

impl Press {
    fn channel(&self) -> Option<&str> {
        self.container
            .as_ref()
            .and_then(|c| c.channel_id.as_deref())
            .or(self.channel.as_ref().map(|c| c.id.as_str()))
    }

    fn message_ts(&self) -> Option<&str> {
        self.container
            .as_ref()
            .and_then(|c| c.message_ts.as_deref())
            .or(self.message.as_ref().map(|m| m.ts.as_str()))
    }
}

/// Reads an `events_api` envelope's payload: the event, if it is one we use. Err: the
/// payload cannot be read (it is skipped, and said so).
pub fn read_event(payload: &Value) -> Result<Option<Item>, String> {
    let event = payload.get("event").ok_or("no event in the payload")?;
    match EventBody::deserialize(event).map_err(|e| e.to_string())? {
        EventBody::Message(m) => Ok(Some(Item::Message(m))),
        EventBody::ReactionAdded(r) => Ok(Some(Item::Reaction(r))),
        EventBody::Other => Ok(None),
    }
}

/// Reads an `interactive` envelope's payload: a button press, if it is one.
pub fn read_interaction(payload: &Value) -> Result<Option<Item>, String> {
    match payload.get("type").and_then(Value::as_str) {
        Some("block_actions") => Press::deserialize(payload)
            .map(|p| Some(Item::Press(p)))
            .map_err(|e| e.to_string()),
        Some(_) => Ok(None),
        None => Err("an interaction without a type".into()),
    }
}

/// The message of ours in our channel that `item` answers, if any: the one reacted to,
/// replied to in its thread, or whose button was pressed.
pub fn answered_message(ctx: &Context, item: &Item) -> Option<Ts> {
    let channel = ctx.channel()?;
    match item {
        Item::Reaction(r) if r.item.channel.as_deref() == Some(&channel) => {
            r.item.ts.as_deref().map(Ts::top)
        }
        Item::Message(m) if m.channel == channel => replied(ctx, m),
        Item::Press(p) if p.channel() == Some(&channel) => p.message_ts().map(Ts::top),
        _ => None,
    }
}

/// The thread's first message, when `m` is a reply in a thread hanging on one of the
/// bot's messages.
fn replied(ctx: &Context, m: &MessageEvent) -> Option<Ts> {
    let root = m.thread_ts.as_deref().filter(|&t| t != m.ts)?;
    let ours = match &m.parent_user_id {
        Some(parent) => ctx.is_me(parent),
        // Not said: the store knows whether the message is one of ours.
        None => true,
    };
    ours.then(|| Ts::top(root))
}

pub async fn handle(ctx: &Context, item: Item) {
    match item {
        Item::Message(m) => on_message(ctx, m).await,
        Item::Reaction(r) => on_reaction(ctx, r).await,
        Item::Press(p) => on_press(ctx, p).await,
    }
}

/// `decided_by` for a Slack user: the id, which never changes.
fn who(user: &str) -> String {
    format!("slack:{user}")
}

/// The text as a command of the chat grammar: as typed when it has its slash, with one
/// put back when it begins with one of the grammar's words; None for anything else.
fn as_command(text: &str) -> Option<String> {
    let text = text.trim();
    if text.starts_with('/') {
        return Some(text.to_owned());
    }
    let first = text.split_whitespace().next()?.to_ascii_lowercase();
    COMMANDS
        .contains(&first.as_str())
        .then(|| format!("/{text}"))
}

async fn on_message(ctx: &Context, m: MessageEvent) {
    let Some(channel) = ctx.channel() else { return };
    // A thread reply also sent to the channel is the owner's message all the same.
    if let Some(subtype) = m.subtype.as_deref().filter(|&s| s != "thread_broadcast") {
        match subtype {
            "message_changed" | "message_deleted" => tracing::info!(
                subtype,
                "ignoring an edited or deleted message: only new messages can answer a request"
            ),
            _ => tracing::debug!(
                subtype,
                "ignoring a message of a kind that is not an answer"
            ),
        }
        return;
    }
    // Bots' messages, this bot's own replies among them.
    if m.bot_id.is_some() {
        return;
    }
    let Some(user) = m.user.as_deref() else {
        return;
    };
    if ctx.is_me(user) {
        return;
    }
    let text = message::unescape(m.text.as_deref().unwrap_or(""));
    let command = as_command(&text);
    if m.channel != channel {
        if command.is_some() {
            tracing::warn!(
                channel = %m.channel,
                "ignoring a command from a channel other than slack.channel"
            );
        }
        return;
    }
    if !ctx.is_owner(user) {
        if command.is_some() {
            tracing::warn!(
                user,
                "ignoring a command from someone not in slack.owner_ids"
            );
        }
        return;
    }
    let replied = replied(ctx, &m);
    let replying = m.thread_ts.as_deref().is_some_and(|t| t != m.ts);
    let direct = channel.starts_with('D');
    if let Some(command) = &command
        && !text.trim().starts_with('/')
        && !direct
        && replied.is_none()
        && matches!(grammar::parse(command), Some(Err(_)))
    {
        // "approve of the plan" said in the channel is talk, not a malformed command.
        tracing::debug!("a message in the channel begins like a command but is not one");
        return;
    }
    let by = who(user);
    let heard = chat::Heard {
        by: &by,
        via: Via::SlackCommand,
        replied: replied.as_ref(),
        replying,
    };
    let said = Ts {
        ts: m.ts.clone(),
        thread: m.thread_ts.clone(),
    };
    // In a channel, other talk is not for us; in direct messages it can only be.
    let talk = direct.then_some("Not a command. Send help.");
    let text = command.unwrap_or(text);
    chat::command(ctx, &said, heard, &text, talk).await;
}

async fn on_reaction(ctx: &Context, r: ReactionEvent) {
    let Some(channel) = ctx.channel() else { return };
    if r.item.kind != "message" || ctx.is_me(&r.user) {
        return;
    }
    let Some(ts) = r.item.ts.as_deref() else {
        return;
    };
    if r.item.channel.as_deref() != Some(&channel) {
        tracing::warn!(channel = ?r.item.channel, "ignoring a reaction in a channel other than slack.channel");
        return;
    }
    if !ctx.is_owner(&r.user) {
        tracing::warn!(user = %r.user, "ignoring a reaction from someone not in slack.owner_ids");
        return;
    }
    let Some(decision) = ctx.reactions.decision(&message::reaction_key(&r.reaction)) else {
        return;
    };
    chat::react(
        ctx,
        &Ts::top(ts),
        decision,
        &who(&r.user),
        Via::SlackReaction,
    )
    .await;
}

async fn on_press(ctx: &Context, p: Press) {
    let text = press(ctx, &p).await;
    let Some(channel) = p.channel() else { return };
    // Always answered, to whoever pressed, where only they see it.
    let content = SlackMessageContent::new()
        .with_text(message::summary(&text))
        .with_blocks(message::literal(&text));
    let request = SlackApiChatPostEphemeralRequest::new(
        channel.to_owned().into(),
        p.user.id.clone().into(),
        content,
    );
    if let Err(e) = ctx
        .api
        .call::<Value>("chat.postEphemeral", Token::Bot, &request)
        .await
    {
        tracing::warn!(error = %e, "could not answer a button press");
    }
}

/// What a button press does; the text is shown to whoever pressed it.
async fn press(ctx: &Context, p: &Press) -> String {
    let user = p.user.id.as_str();
    if p.channel() != ctx.channel().as_deref() {
        tracing::warn!(channel = ?p.channel(), "ignoring a button pressed in a channel other than slack.channel");
        return "Requests are answered in the configured channel only.".into();
    }
    if !ctx.is_owner(user) {
        tracing::warn!(
            user,
            "ignoring a button pressed by someone not in slack.owner_ids"
        );
        return "Only the owners listed in slack.owner_ids can answer requests; nothing was changed."
            .into();
    }
    let Some(ts) = p.message_ts() else {
        return "This button is not from an approval message.".into();
    };
    let Some((decision, id)) = p
        .actions
        .first()
        .and_then(|a| a.value.as_deref())
        .and_then(message::parse_button)
    else {
        return "This button is not one of execgate's.".into();
    };
    chat::press(
        ctx,
        &Ts::top(ts),
        id,
        decision,
        &who(user),
        Via::SlackButton,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn commands_come_with_or_without_their_slash() {
        assert_eq!(as_command("/approve a1b2"), Some("/approve a1b2".into()));
        assert_eq!(
            as_command(" approve a1b2 always"),
            Some("/approve a1b2 always".into())
        );
        assert_eq!(as_command("Deny a1b2"), Some("/Deny a1b2".into()));
        assert_eq!(as_command("pending"), Some("/pending".into()));
        assert_eq!(as_command("looks good"), None);
        assert_eq!(
            as_command("start the build"),
            None,
            "start is Telegram's, not ours"
        );
        assert_eq!(as_command(""), None);
    }

    #[test]
    fn events_we_use_are_read_and_the_rest_told_apart() {
        let message = json!({"event": {"type": "message", "channel": "C1", "ts": "1.2", "user": "U1", "text": "hi"}});
        assert!(matches!(read_event(&message), Ok(Some(Item::Message(_)))));
        let reaction = json!({"event": {"type": "reaction_added", "user": "U1", "reaction": "+1",
            "item": {"type": "message", "channel": "C1", "ts": "1.2"}, "event_ts": "1.3"}});
        assert!(matches!(read_event(&reaction), Ok(Some(Item::Reaction(_)))));
        let other = json!({"event": {"type": "app_mention", "whatever": 1}});
        assert!(matches!(read_event(&other), Ok(None)));
        let malformed = json!({"event": {"type": "message", "channel": 5}});
        assert!(read_event(&malformed).is_err());
        assert!(read_event(&json!({})).is_err());
        let press = json!({"type": "block_actions", "user": {"id": "U1"},
            "container": {"type": "message", "message_ts": "1.2", "channel_id": "C1"},
            "actions": [{"action_id": "deny", "value": "deny:x"}]});
        match read_interaction(&press) {
            Ok(Some(Item::Press(p))) => {
                assert_eq!((p.channel(), p.message_ts()), (Some("C1"), Some("1.2")))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            read_interaction(&json!({"type": "view_submission"})),
            Ok(None)
        ));
        assert!(read_interaction(&json!({"type": "block_actions"})).is_err());
    }
}
