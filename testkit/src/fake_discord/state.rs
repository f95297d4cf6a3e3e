//! What the fake knows: the server (guild) with its text channel and members, the DM
//! channels, every message, the interactions and their tokens, the gateway session and
//! its dispatches, the calls the bot made, and the faults waiting to be answered.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::markdown;
use super::types::{Call, Callback, Fault, Identify, OnPost, SentMessage, User};

/// The server every user shares with the bot, and its one text channel.
pub const GUILD_ID: u64 = 1_200_000_000_000_000_001;
pub const CHANNEL_ID: u64 = 1_200_000_000_000_000_002;
/// Another channel of the same server, where the bot may read but answers do not count.
pub const OTHER_CHANNEL_ID: u64 = 1_200_000_000_000_000_003;
/// The application the bot belongs to (interactions name it).
pub const APPLICATION_ID: u64 = 1_200_000_000_000_000_009;
/// Discord's limit on a message's content.
pub const MAX_CONTENT: usize = 2000;
/// How long an interaction token takes its first callback.
pub const INTERACTION_ACK: Duration = Duration::from_secs(3);
/// Discord's per-channel limit on posting messages: this many per window.
pub const CHANNEL_LIMIT: usize = 5;
pub const CHANNEL_WINDOW: Duration = Duration::from_secs(5);

/// A frame for the live gateway connection.
#[derive(Debug)]
pub enum Out {
    Text(String),
    Close(u16, String),
    /// Cut the TCP connection without a close frame.
    Drop,
}

/// A message in a channel.
pub struct Stored {
    pub json: Value,
    pub by_bot: bool,
    pub edits: Vec<String>,
}

/// An interaction dispatched to the bot.
pub struct Pending {
    pub token: String,
    pub at: Instant,
    /// The first callback's type, once one was taken.
    pub acked: Option<u64>,
    /// What the presser sees: the callback's message, or the deferred one's edit.
    pub original: Option<String>,
}

/// The gateway session (one bot, one shard).
pub struct Session {
    pub id: String,
    pub seq: u64,
    /// Every dispatch of the session, for resumes.
    pub log: Vec<(u64, String)>,
    pub resumable: bool,
}

pub struct FakeState {
    pub bot: User,
    pub users: HashMap<u64, User>,
    /// Channel id → its JSON; DM channels by recipient too.
    pub channels: BTreeMap<u64, Value>,
    pub dms: HashMap<u64, u64>,
    pub messages: BTreeMap<u64, Stored>,
    pub next_id: u64,
    pub calls: Vec<Call>,
    pub faults: HashMap<String, VecDeque<Fault>>,
    /// A route answers this long after doing its work.
    pub slow: HashMap<String, Duration>,
    pub interactions: HashMap<u64, Pending>,
    pub callbacks: Vec<Callback>,
    pub on_post: Vec<(String, OnPost, User)>,
    /// Posts per channel, for Discord's rate limit.
    pub posts: HashMap<u64, VecDeque<Instant>>,
    /// 429s the fake answered because the bot posted too fast (not injected ones).
    pub rate_limited: usize,
    // --- the gateway ---
    pub session: Option<Session>,
    pub live: Option<mpsc::UnboundedSender<Out>>,
    pub identifies: Vec<Identify>,
    pub resumes: usize,
    pub heartbeats: usize,
    pub connections: usize,
    /// Connections made to the resume URL READY named.
    pub resume_connections: usize,
    /// The bot's token was revoked: an Identify with it is closed with 4004.
    pub token_revoked: bool,
    pub privileged_allowed: bool,
    /// While set, heartbeats are not acknowledged (a zombie connection, from the bot's
    /// side).
    pub silent: bool,
}

impl FakeState {
    pub fn new(bot: User) -> FakeState {
        let mut channels = BTreeMap::new();
        for (id, name) in [(CHANNEL_ID, "approvals"), (OTHER_CHANNEL_ID, "random")] {
            channels.insert(
                id,
                json!({"id": id.to_string(), "type": 0, "guild_id": GUILD_ID.to_string(), "name": name, "position": 0, "permission_overwrites": [], "nsfw": false, "parent_id": null, "last_message_id": null, "rate_limit_per_user": 0, "topic": null}),
            );
        }
        let users = [
            User::owner(),
            User::stranger(),
            User::other_bot(),
            bot.clone(),
        ]
        .into_iter()
        .map(|u| (u.id, u))
        .collect();
        FakeState {
            bot,
            users,
            channels,
            dms: HashMap::new(),
            messages: BTreeMap::new(),
            next_id: 1_300_000_000_000_000_000,
            calls: Vec::new(),
            faults: HashMap::new(),
            slow: HashMap::new(),
            interactions: HashMap::new(),
            callbacks: Vec::new(),
            on_post: Vec::new(),
            posts: HashMap::new(),
            rate_limited: 0,
            session: None,
            live: None,
            identifies: Vec::new(),
            resumes: 0,
            heartbeats: 0,
            connections: 0,
            resume_connections: 0,
            privileged_allowed: true,
            token_revoked: false,
            silent: false,
        }
    }

    /// A new snowflake.
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn is_dm(&self, channel: u64) -> bool {
        self.channels
            .get(&channel)
            .is_some_and(|c| c["type"] == json!(1))
    }

    /// The DM channel between the bot and `user`, opened on first use.
    pub fn dm_with(&mut self, user: &User) -> u64 {
        if let Some(&id) = self.dms.get(&user.id) {
            return id;
        }
        let id = self.id();
        self.channels.insert(
            id,
            json!({"id": id.to_string(), "type": 1, "last_message_id": null, "flags": 0, "recipients": [user.json()]}),
        );
        self.dms.insert(user.id, id);
        id
    }

    /// A message object as Discord sends it (REST answers and MESSAGE_CREATE).
    pub fn message_json(
        &mut self,
        channel: u64,
        author: &User,
        content: &str,
        reply_to: Option<u64>,
    ) -> Value {
        let id = self.id();
        let mut m = json!({
            "id": id.to_string(),
            "channel_id": channel.to_string(),
            "author": author.json(),
            "content": content,
            "timestamp": now_iso(),
            "edited_timestamp": null,
            "tts": false,
            "mention_everyone": false,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": false,
            "type": if reply_to.is_some() { 19 } else { 0 },
            "flags": 0,
            "components": [],
        });
        if let Some(to) = reply_to {
            m["message_reference"] =
                json!({"type": 0, "message_id": to.to_string(), "channel_id": channel.to_string()});
            if let Some(original) = self.messages.get(&to) {
                m["referenced_message"] = original.json.clone();
            } else {
                m["referenced_message"] = Value::Null;
            }
        }
        if !self.is_dm(channel) {
            m["guild_id"] = json!(GUILD_ID.to_string());
        }
        m
    }

    /// A guild member object for `user`.
    pub fn member_json(user: &User, with_user: bool) -> Value {
        let mut m = json!({
            "nick": null,
            "avatar": null,
            "roles": [],
            "joined_at": "2026-01-01T00:00:00.000000+00:00",
            "deaf": false,
            "mute": false,
            "flags": 0,
            "pending": false,
        });
        if with_user {
            m["user"] = user.json();
        }
        m
    }

    /// Stores a message and returns its id.
    pub fn store(&mut self, json: Value, by_bot: bool) -> u64 {
        let id: u64 = json["id"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        self.messages.insert(
            id,
            Stored {
                json,
                by_bot,
                edits: Vec::new(),
            },
        );
        id
    }

    /// A bot message as tests read it.
    pub fn sent(&self, id: u64) -> Option<SentMessage> {
        let m = self.messages.get(&id).filter(|m| m.by_bot)?;
        let content = m.json["content"].as_str().unwrap_or_default().to_string();
        let buttons = m.json["components"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|row| row["components"].as_array().cloned().unwrap_or_default())
            .map(|b| {
                (
                    b["label"].as_str().unwrap_or_default().to_string(),
                    b["custom_id"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        Some(SentMessage {
            id,
            channel_id: snowflake(&m.json["channel_id"]),
            plain: markdown::plain(&content),
            content,
            buttons,
            reply_to: m.json["message_reference"]["message_id"]
                .as_str()
                .and_then(|s| s.parse().ok()),
            edits: m.edits.clone(),
            allowed_mentions: m.json.get("allowed_mentions").cloned(),
            flags: m.json["flags"].as_u64().unwrap_or(0),
        })
    }

    /// Queues `data` as a dispatch `t` of the session, sent now if connected, else kept
    /// for a resume. Without a session it is lost, as on Discord.
    pub fn dispatch(&mut self, t: &str, data: Value) -> bool {
        let Some(session) = self.session.as_mut() else {
            return false;
        };
        session.seq += 1;
        let frame = json!({"op": 0, "t": t, "s": session.seq, "d": data}).to_string();
        session.log.push((session.seq, frame.clone()));
        if let Some(live) = &self.live {
            let _ = live.send(Out::Text(frame));
        }
        true
    }

    /// Sends a raw frame on the live connection (not logged for resumes).
    pub fn send_raw(&mut self, frame: Out) -> bool {
        self.live.as_ref().is_some_and(|l| l.send(frame).is_ok())
    }

    pub fn take_fault(&mut self, route: &str) -> Option<Fault> {
        let queue = self.faults.get_mut(route)?;
        let fault = queue.pop_front();
        if queue.is_empty() {
            self.faults.remove(route);
        }
        fault
    }

    /// Whether a post to `channel` now is within Discord's limit; counts it if so.
    pub fn may_post(&mut self, channel: u64) -> Result<(), f64> {
        let now = Instant::now();
        let window = self.posts.entry(channel).or_default();
        while window
            .front()
            .is_some_and(|&t| now.duration_since(t) >= CHANNEL_WINDOW)
        {
            window.pop_front();
        }
        if window.len() >= CHANNEL_LIMIT {
            let oldest = *window.front().unwrap_or(&now);
            let wait = CHANNEL_WINDOW.saturating_sub(now.duration_since(oldest));
            return Err(wait.as_secs_f64());
        }
        window.push_back(now);
        Ok(())
    }
}

/// A snowflake given as a JSON string (or number).
pub fn snowflake(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        v => v.as_u64().unwrap_or(0),
    }
}

/// Now as Discord writes timestamps (ISO 8601 with microseconds).
pub fn now_iso() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6f+00:00")
        .to_string()
}
