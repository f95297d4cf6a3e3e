//! What the fake knows: the workspace (users, channels, the bot and its scopes), the
//! messages, the calls, the envelopes of Socket Mode, and the faults waiting their turn.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::types::{Call, Envelope, Ephemeral, Fault, OnPost, PostAnswered, SentMessage, User};
use super::{APP_ID, BOT_ID, BOT_USER, TEAM};

/// The scopes the app has unless a test takes one away.
pub const SCOPES: [&str; 7] = [
    "chat:write",
    "channels:history",
    "groups:history",
    "im:history",
    "im:write",
    "reactions:read",
    "users:read",
];

#[derive(Clone, Debug)]
pub(super) struct Channel {
    /// `channel`, `group` (private) or `im`.
    pub kind: &'static str,
    pub members: BTreeSet<String>,
    pub archived: bool,
}

#[derive(Clone, Debug)]
pub(super) struct Msg {
    pub channel: String,
    pub ts: String,
    pub thread_ts: Option<String>,
    pub user: String,
    pub text: String,
    pub blocks: Value,
    pub edits: Vec<String>,
}

impl Msg {
    pub fn to_sent(&self) -> SentMessage {
        SentMessage {
            channel: self.channel.clone(),
            ts: self.ts.clone(),
            thread_ts: self.thread_ts.clone(),
            user: self.user.clone(),
            text: self.text.clone(),
            blocks: self.blocks.clone(),
            plain: super::render::plain(&self.blocks, &self.text),
            edits: self.edits.clone(),
        }
    }
}

pub(super) struct FakeState {
    pub bot_token: String,
    pub app_token: String,
    /// Tokens Slack no longer accepts (`token_revoked`).
    pub revoked: BTreeSet<String>,
    pub scopes: BTreeSet<String>,
    pub users: BTreeMap<String, User>,
    pub channels: BTreeMap<String, Channel>,
    pub messages: BTreeMap<(String, String), Msg>,
    /// The last ts handed out, in microseconds: every message gets a later one.
    pub clock: u64,
    pub calls: Vec<Call>,
    pub faults: HashMap<String, VecDeque<Fault>>,
    pub late: HashMap<String, VecDeque<Duration>>,
    pub ephemerals: Vec<Ephemeral>,
    /// Every envelope made, oldest first; the socket sends those not acknowledged.
    pub outbox: Vec<Envelope>,
    pub next_id: u64,
    pub on_post: Vec<(String, String, OnPost)>,
    pub answered_posts: Vec<PostAnswered>,
    /// When each channel was last posted to, for the rate limit.
    pub posts_at: HashMap<String, VecDeque<Instant>>,
    /// Tickets `apps.connections.open` handed out and not used yet.
    pub tickets: BTreeSet<String>,
    /// Websocket connections accepted so far.
    pub connections: u32,
    /// Every acknowledgement received, in order (an envelope's id may come twice).
    pub acks: Vec<String>,
}

impl FakeState {
    pub fn new(bot_token: &str, app_token: &str) -> FakeState {
        let mut state = FakeState {
            bot_token: bot_token.into(),
            app_token: app_token.into(),
            revoked: BTreeSet::new(),
            scopes: SCOPES.iter().map(|s| s.to_string()).collect(),
            users: BTreeMap::new(),
            channels: BTreeMap::new(),
            messages: BTreeMap::new(),
            clock: 1_760_000_000_000_000,
            calls: Vec::new(),
            faults: HashMap::new(),
            late: HashMap::new(),
            ephemerals: Vec::new(),
            outbox: Vec::new(),
            next_id: 1,
            on_post: Vec::new(),
            answered_posts: Vec::new(),
            posts_at: HashMap::new(),
            tickets: BTreeSet::new(),
            connections: 0,
            acks: Vec::new(),
        };
        for user in [User::owner(), User::co_owner(), User::stranger()] {
            state.users.insert(user.id.clone(), user);
        }
        state
    }

    /// A fresh id with this prefix.
    pub fn id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{:08X}", self.next_id)
    }

    /// The next message ts: seconds, a dot, six digits, always later than the last.
    pub fn next_ts(&mut self) -> String {
        self.clock += 100;
        format!("{}.{:06}", self.clock / 1_000_000, self.clock % 1_000_000)
    }

    /// The direct-message channel of `user` with the bot, made on first use.
    pub fn im_of(&mut self, user: &str) -> String {
        let id = format!("D{}", &user[1..]);
        self.channels.entry(id.clone()).or_insert_with(|| Channel {
            kind: "im",
            members: [user.to_string(), BOT_USER.to_string()].into(),
            archived: false,
        });
        id
    }

    /// Stores a message and sends its `message` event, as Slack does for every message in
    /// a channel the app reads, the bot's own included.
    pub fn add_message(&mut self, msg: Msg) {
        let mut event = json!({
            "type": "message",
            "channel": msg.channel,
            "user": msg.user,
            "text": msg.text,
            "ts": msg.ts,
            "event_ts": msg.ts,
            "channel_type": self.channels.get(&msg.channel).map_or("channel", |c| c.kind),
            "team": TEAM,
        });
        if msg.user == BOT_USER {
            event["bot_id"] = json!(BOT_ID);
            event["app_id"] = json!(APP_ID);
            event["blocks"] = msg.blocks.clone();
        } else {
            event["client_msg_id"] = json!(self.id("c0ffee00-"));
        }
        if let Some(thread) = &msg.thread_ts {
            event["thread_ts"] = json!(thread);
            if let Some(parent) = self.messages.get(&(msg.channel.clone(), thread.clone())) {
                event["parent_user_id"] = json!(parent.user);
            }
        }
        self.messages
            .insert((msg.channel.clone(), msg.ts.clone()), msg);
        self.event(event);
    }

    /// Queues an `events_api` envelope carrying `event`; returns its envelope id.
    pub fn event(&mut self, event: Value) -> String {
        let event_id = self.id("Ev");
        let payload = json!({
            "token": "fake-verification-token",
            "team_id": TEAM,
            "api_app_id": APP_ID,
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": self.clock / 1_000_000,
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": true}],
            "is_ext_shared_channel": false,
        });
        self.envelope("events_api", payload)
    }

    /// Queues an envelope; returns its id.
    pub fn envelope(&mut self, kind: &str, payload: Value) -> String {
        let envelope_id = format!("{}-{}", self.id("env"), "fake");
        self.outbox.push(Envelope {
            envelope_id: envelope_id.clone(),
            kind: kind.into(),
            payload,
            sent: 0,
            acked: false,
            last_sent: None,
        });
        envelope_id
    }

    pub fn take_fault(&mut self, method: &str) -> Option<Fault> {
        self.faults.get_mut(method)?.pop_front()
    }

    pub fn take_late(&mut self, method: &str) -> Option<Duration> {
        self.late.get_mut(method)?.pop_front()
    }

    pub fn message(&self, channel: &str, ts: &str) -> Option<&Msg> {
        self.messages.get(&(channel.to_string(), ts.to_string()))
    }
}
