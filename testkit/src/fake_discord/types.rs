//! The fake's public value types: users, what the bot posted, the calls it made, the
//! interaction callbacks it sent, and the faults a test can inject.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A Discord user as the fake knows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub id: u64,
    pub username: String,
    pub bot: bool,
}

impl User {
    pub fn new(id: u64, username: &str) -> User {
        User {
            id,
            username: username.into(),
            bot: false,
        }
    }

    /// The owner every test configures.
    pub fn owner() -> User {
        User::new(111_111_111_111_111_111, "olivia")
    }

    /// Someone in the same server who is not an owner.
    pub fn stranger() -> User {
        User::new(222_222_222_222_222_222, "mallory")
    }

    /// Another bot in the server.
    pub fn other_bot() -> User {
        User {
            bot: true,
            ..User::new(333_333_333_333_333_333, "helper")
        }
    }

    /// The user object, as Discord sends it.
    pub fn json(&self) -> Value {
        let mut user = json!({
            "id": self.id.to_string(),
            "username": self.username,
            "discriminator": "0",
            "global_name": self.username,
            "avatar": null,
            "public_flags": 0,
        });
        if self.bot {
            user["bot"] = json!(true);
        }
        user
    }
}

/// A message the bot posted, as it is now.
#[derive(Clone, Debug)]
pub struct SentMessage {
    pub id: u64,
    pub channel_id: u64,
    /// The content as sent (markdown).
    pub content: String,
    /// The content as a Discord client shows it (markdown read, escapes gone).
    pub plain: String,
    /// Each button: (label, custom_id).
    pub buttons: Vec<(String, String)>,
    /// The message this one replies to.
    pub reply_to: Option<u64>,
    /// The contents it had before each edit, oldest first.
    pub edits: Vec<String>,
    /// `allowed_mentions` as last sent.
    pub allowed_mentions: Option<Value>,
    pub flags: u64,
}

/// One REST call the bot made.
#[derive(Clone, Debug)]
pub struct Call {
    /// `METHOD /path` with ids kept (`POST /channels/1/messages`).
    pub route: String,
    /// The `Authorization` header, as sent.
    pub authorization: Option<String>,
    pub body: Value,
    pub at: Instant,
    /// The status answered; 0 while unanswered.
    pub status: u16,
    pub answer: Value,
}

/// A callback the bot sent for an interaction.
#[derive(Clone, Debug)]
pub struct Callback {
    pub interaction_id: u64,
    /// The callback's `type` (4 a message, 5 deferred, 6 deferred update, 7 update).
    pub kind: u64,
    pub data: Value,
    /// How long after the interaction was dispatched it came.
    pub after: Duration,
    /// Whether Discord took it (in time, the first).
    pub accepted: bool,
}

/// What the owner does the moment a matching post is created (`answer_on_post`).
#[derive(Clone, Debug)]
pub enum OnPost {
    Command(String),
    Reply(String),
    React(String),
    /// Presses the button whose `custom_id` starts with this.
    Press(String),
}

/// An error a route answers instead of its result.
#[derive(Clone, Debug)]
pub struct Fault {
    pub status: u16,
    pub code: u64,
    pub message: String,
    /// For a 429: seconds, and whether the limit is global.
    pub retry_after: Option<f64>,
    pub global: bool,
}

impl Fault {
    /// A 429 on this route with Discord's body and headers.
    pub fn rate_limited(retry_after: f64) -> Fault {
        Fault {
            status: 429,
            code: 0,
            message: "You are being rate limited.".into(),
            retry_after: Some(retry_after),
            global: false,
        }
    }

    pub fn server_error() -> Fault {
        Fault {
            status: 500,
            code: 0,
            message: "500: Internal Server Error".into(),
            retry_after: None,
            global: false,
        }
    }

    pub fn unauthorized() -> Fault {
        Fault {
            status: 401,
            code: 0,
            message: "401: Unauthorized".into(),
            retry_after: None,
            global: false,
        }
    }

    pub fn missing_access() -> Fault {
        Fault {
            status: 403,
            code: 50001,
            message: "Missing Access".into(),
            retry_after: None,
            global: false,
        }
    }

    pub fn missing_permissions() -> Fault {
        Fault {
            status: 403,
            code: 50013,
            message: "Missing Permissions".into(),
            retry_after: None,
            global: false,
        }
    }

    pub fn unknown_message() -> Fault {
        Fault {
            status: 404,
            code: 10008,
            message: "Unknown Message".into(),
            retry_after: None,
            global: false,
        }
    }

    /// The JSON body Discord answers with.
    pub fn body(&self) -> Value {
        match self.retry_after {
            Some(after) => json!({
                "message": self.message,
                "retry_after": after,
                "global": self.global,
                "code": self.code,
            }),
            None => json!({"message": self.message, "code": self.code}),
        }
    }
}

/// An Identify the gateway received.
#[derive(Clone, Debug)]
pub struct Identify {
    pub token_ok: bool,
    pub intents: u64,
}

/// Gateway intents by name, for assertions (Discord's bit values).
pub mod intents {
    pub const GUILD_MESSAGES: u64 = 1 << 9;
    pub const GUILD_MESSAGE_REACTIONS: u64 = 1 << 10;
    pub const DIRECT_MESSAGES: u64 = 1 << 12;
    pub const DIRECT_MESSAGE_REACTIONS: u64 = 1 << 13;
    pub const MESSAGE_CONTENT: u64 = 1 << 15;
    /// The privileged ones: refused (close 4014) unless the fake allows them.
    pub const PRIVILEGED: u64 = (1 << 1) | (1 << 8) | MESSAGE_CONTENT;
}
