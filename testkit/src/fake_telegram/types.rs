//! The fake's public value types: users and their reactions, what a user does when a bot
//! message appears, and what tests observe (calls, sent messages).

use std::time::Instant;

use serde_json::{Value, json};

use super::{BOT_FIRST_NAME, BOT_USERNAME};

/// A Telegram user as the fake sends it in updates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub first_name: String,
    pub username: Option<String>,
    pub is_bot: bool,
}

impl User {
    pub fn new(id: i64, first_name: &str, username: Option<&str>) -> User {
        User {
            id,
            first_name: first_name.to_string(),
            username: username.map(str::to_string),
            is_bot: false,
        }
    }

    /// The person the daemon is configured to obey.
    pub fn owner() -> User {
        User::new(111_111_111, "Olivia", Some("olivia"))
    }

    /// Someone else who found the bot.
    pub fn stranger() -> User {
        User::new(222_222_222, "Sam", Some("sam"))
    }

    pub fn to_json(&self) -> Value {
        let mut user = json!({
            "id": self.id,
            "is_bot": self.is_bot,
            "first_name": self.first_name,
        });
        if let Some(username) = &self.username {
            user["username"] = json!(username);
        }
        if !self.is_bot {
            user["language_code"] = json!("en");
        }
        user
    }

    /// The user's private chat with the bot (its id is the user's id).
    pub(super) fn private_chat_json(&self) -> Value {
        let mut chat = json!({"id": self.id, "type": "private", "first_name": self.first_name});
        if let Some(username) = &self.username {
            chat["username"] = json!(username);
        }
        chat
    }
}

pub(super) fn bot_user_json(bot_id: i64) -> Value {
    json!({
        "id": bot_id,
        "is_bot": true,
        "first_name": BOT_FIRST_NAME,
        "username": BOT_USERNAME,
    })
}

/// Who changed a reaction. Telegram always sends exactly one of `user` / `actor_chat`
/// (teloxide panics on neither), so the fake can only express one or the other.
#[derive(Clone, Debug)]
pub enum Actor {
    User(User),
    /// An anonymous group admin or a channel reacting on behalf of `chat_id`.
    Anonymous {
        chat_id: i64,
        title: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reaction {
    /// A standard reaction emoji such as "👍" (✅ and ❌ are not standard reactions).
    Emoji(String),
    /// A custom emoji reaction, by custom emoji id (see `register_custom_emoji`).
    Custom(String),
}

impl Reaction {
    pub fn to_json(&self) -> Value {
        match self {
            Reaction::Emoji(emoji) => json!({"type": "emoji", "emoji": emoji}),
            Reaction::Custom(id) => json!({"type": "custom_emoji", "custom_emoji_id": id}),
        }
    }
}

/// What a user does to a bot message the moment it exists (see `FakeTelegram::answer_on_post`).
#[derive(Clone, Debug)]
pub enum OnPost {
    /// `actor` sets `reactions` on the message (old set: none).
    React {
        actor: Actor,
        reactions: Vec<Reaction>,
    },
    /// `user` replies to the message with `text`.
    Reply { user: User, text: String },
    /// `user` presses the message's inline button labelled `button` (nothing is pressed if
    /// the message has no such button).
    Press { user: User, button: String },
}

/// An `OnPost` the fake carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostAnswered {
    /// The bot's message that was answered.
    pub message_id: i64,
    /// The update that carries the answer.
    pub update_id: i64,
    /// For a reply: the user's message.
    pub reply_id: Option<i64>,
    /// For a press: the callback query.
    pub query_id: Option<String>,
}

/// One request the fake received.
#[derive(Clone, Debug)]
pub struct Call {
    /// Method name, lowercased (`sendmessage`, `getupdates`, ...).
    pub method: String,
    /// The JSON body as sent (`{}` when empty, a string when it was not JSON).
    pub body: Value,
    /// When the request arrived.
    pub at: Instant,
    /// False while a long poll is still held, and forever for requests cut off by `go_down`.
    pub finished: bool,
    pub ok: bool,
    /// The error code answered, if the call failed.
    pub error_code: Option<u16>,
    /// The error description answered, if the call failed.
    pub description: Option<String>,
    /// The `result` answered, if the call succeeded.
    pub result: Option<Value>,
}

/// A message the bot sent, in its current state.
#[derive(Clone, Debug, PartialEq)]
pub struct SentMessage {
    pub message_id: i64,
    pub chat_id: i64,
    /// The text exactly as sent (HTML source when `parse_mode` was HTML).
    pub html: String,
    /// What the user sees: tags removed, entities decoded, trimmed like Telegram trims.
    pub plain: String,
    pub parse_mode: Option<String>,
    /// The inline keyboard (`{"inline_keyboard": [[...]]}`), if the message has one.
    pub reply_markup: Option<Value>,
    /// The message this one replies to.
    pub reply_to: Option<i64>,
    /// The `html` of each earlier version, oldest first.
    pub edits: Vec<String>,
}

impl SentMessage {
    /// The inline keyboard flattened to (button text, callback data); buttons without
    /// callback data (URL buttons, ...) give their URL or an empty string.
    pub fn buttons(&self) -> Vec<(String, String)> {
        let Some(rows) = self
            .reply_markup
            .as_ref()
            .and_then(|markup| markup.get("inline_keyboard"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        rows.iter()
            .filter_map(Value::as_array)
            .flatten()
            .map(|button| {
                let text = button
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let data = button
                    .get("callback_data")
                    .or_else(|| button.get("url"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                (text.to_string(), data.to_string())
            })
            .collect()
    }
}
