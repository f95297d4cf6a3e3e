//! The fake's public value types: users, what a user does when a bot message appears,
//! the faults tests inject, and what tests observe (calls, messages, ephemerals).

use std::time::{Duration, Instant};

use serde_json::Value;

/// A Slack user of the fake workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub id: String,
    pub name: String,
}

impl User {
    pub fn new(id: &str, name: &str) -> User {
        User {
            id: id.to_string(),
            name: name.to_string(),
        }
    }

    /// The person the daemon is configured to obey.
    pub fn owner() -> User {
        User::new("U0OWNER01", "olivia")
    }

    /// A second owner, for `slack.owner_ids` with several.
    pub fn co_owner() -> User {
        User::new("U0OWNER02", "omar")
    }

    /// Someone else in the channel.
    pub fn stranger() -> User {
        User::new("U0STRANGR", "sam")
    }
}

/// What a user does the instant a bot message appears (see `FakeSlack::answer_on_post`).
#[derive(Clone, Debug)]
pub enum OnPost {
    /// Adds this reaction (a name: `+1`).
    React { user: User, reaction: String },
    /// Replies in the message's thread with this text.
    Reply { user: User, text: String },
    /// Presses the button with this label.
    Press { user: User, button: String },
}

/// An `answer_on_post` carried out.
#[derive(Clone, Debug)]
pub struct PostAnswered {
    pub channel: String,
    pub ts: String,
    /// The envelope that carries the answer.
    pub envelope_id: String,
}

/// An error to answer instead of handling a call (see `FakeSlack::fail_next`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 429 with `Retry-After: N`.
    RateLimited { retry_after: u64 },
    /// HTTP 200 `{"ok": false, "error": NAME}`.
    Error(String),
    /// HTTP 500 with a page that is not JSON, as from a proxy in front of Slack.
    ServerError,
}

/// One Web API call the fake received.
#[derive(Clone, Debug)]
pub struct Call {
    /// The method, as Slack names it: `chat.postMessage`.
    pub method: String,
    /// The arguments, JSON or form-encoded, as one JSON object.
    pub args: Value,
    /// Whether the call came with a bearer token (never recorded itself).
    pub authorized: bool,
    pub at: Instant,
    pub finished: bool,
    pub ok: bool,
    /// Slack's error name, or `ratelimited` for a 429.
    pub error: Option<String>,
}

/// A message in a channel of the fake, as Slack would show it now.
#[derive(Clone, Debug)]
pub struct SentMessage {
    pub channel: String,
    pub ts: String,
    /// The thread it is in (its parent's ts), if it is a reply.
    pub thread_ts: Option<String>,
    /// Who posted it: the bot's user id for the bot.
    pub user: String,
    /// The `text` field as sent (mrkdwn, the notification text when there are blocks).
    pub text: String,
    pub blocks: Value,
    /// What the reader sees: the blocks rendered as text (or the text, unescaped).
    pub plain: String,
    /// Earlier versions, oldest first (each `chat.update` pushes the one it replaced).
    pub edits: Vec<String>,
}

impl SentMessage {
    /// The buttons under the message: (label, value).
    pub fn buttons(&self) -> Vec<(String, String)> {
        super::render::buttons(&self.blocks)
    }
}

/// A `chat.postEphemeral`: a message only `user` sees.
#[derive(Clone, Debug)]
pub struct Ephemeral {
    pub channel: String,
    pub user: String,
    pub plain: String,
}

/// An envelope the fake sent on Socket Mode, and what became of it.
#[derive(Clone, Debug)]
pub struct Envelope {
    pub envelope_id: String,
    /// `events_api`, `interactive`, …
    pub kind: String,
    pub payload: Value,
    /// How many times it was sent.
    pub sent: u32,
    pub acked: bool,
    /// When it was last sent, for redelivery.
    pub(super) last_sent: Option<Instant>,
}

/// How long the fake waits for an acknowledgement before sending an envelope again
/// (Slack: a few seconds), and how many times it sends it at most.
pub const ACK_WAIT: Duration = Duration::from_secs(3);
pub const SENDS_MAX: u32 = 4;
