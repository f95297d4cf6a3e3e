//! What the fake knows, as Telegram would: chats, every message and its edits, the update
//! queue, and what tests set up or observe (calls, faults, answers waiting for a post).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::faults::Fault;
use super::html::Formatted;
use super::types::{Call, OnPost, PostAnswered, SentMessage, User};

/// Update ids are arbitrary in Telegram; starting high catches code that assumes they start at 0 or 1.
const FIRST_UPDATE_ID: i64 = 500_000;

/// A message in a chat, the bot's or a user's, as the fake keeps it.
pub(super) struct StoredMessage {
    pub(super) chat_id: i64,
    pub(super) message_id: i64,
    pub(super) by_bot: bool,
    pub(super) from: Value,
    pub(super) date: i64,
    pub(super) edit_date: Option<i64>,
    /// The text as sent (HTML source for the bot's HTML messages).
    pub(super) raw: String,
    pub(super) parse_mode: Option<String>,
    pub(super) text: Formatted,
    pub(super) reply_markup: Option<Value>,
    pub(super) reply_to: Option<i64>,
    pub(super) edits: Vec<String>,
}

impl StoredMessage {
    pub(super) fn to_sent(&self) -> SentMessage {
        SentMessage {
            message_id: self.message_id,
            chat_id: self.chat_id,
            html: self.raw.clone(),
            plain: self.text.plain.clone(),
            parse_mode: self.parse_mode.clone(),
            reply_markup: self.reply_markup.clone(),
            reply_to: self.reply_to,
            edits: self.edits.clone(),
        }
    }
}

/// Everything the fake knows, behind `Shared`'s lock.
pub(super) struct FakeState {
    pub(super) bot_id: i64,
    pub(super) calls: Vec<Call>,
    /// Known chats by id, as the Chat JSON Telegram sends.
    pub(super) chats: HashMap<i64, Value>,
    /// Message ids are per chat in private chats and groups, shared by the bot and users.
    pub(super) next_message_id: HashMap<i64, i64>,
    /// Every message, the bot's and injected users', by (chat, message id).
    pub(super) messages: BTreeMap<(i64, i64), StoredMessage>,
    /// Updates not yet confirmed by an offset.
    pub(super) queue: VecDeque<Value>,
    pub(super) next_update_id: i64,
    /// The last `allowed_updates` given; None means Telegram's default.
    pub(super) allowed_updates: Option<Vec<String>>,
    pub(super) acked_offset: i64,
    /// Bumped by every getUpdates; a held poll that sees a newer one has been superseded.
    pub(super) poll_generation: u64,
    pub(super) faults: HashMap<String, VecDeque<Fault>>,
    /// Delays before answering handled calls, per method, used in order (`answer_late`).
    pub(super) late: HashMap<String, VecDeque<Duration>>,
    /// Answers waiting for a bot message: (chat, text it contains, answer).
    pub(super) on_post: Vec<(i64, String, OnPost)>,
    pub(super) answered_posts: Vec<PostAnswered>,
    /// Callback queries issued: None until answered, then Some(answer text).
    pub(super) queries: HashMap<String, Option<Option<String>>>,
    pub(super) custom_emoji: HashMap<String, String>,
    pub(super) custom_emoji_lookups: usize,
    /// Command lists by scope (and language), as setMyCommands stores them.
    pub(super) commands: HashMap<String, Vec<(String, String)>>,
    pub(super) last_commands: Vec<(String, String)>,
}

impl FakeState {
    pub(super) fn new(bot_id: i64) -> FakeState {
        let mut state = FakeState {
            bot_id,
            calls: Vec::new(),
            chats: HashMap::new(),
            next_message_id: HashMap::new(),
            messages: BTreeMap::new(),
            queue: VecDeque::new(),
            next_update_id: FIRST_UPDATE_ID,
            allowed_updates: None,
            acked_offset: 0,
            poll_generation: 0,
            faults: HashMap::new(),
            late: HashMap::new(),
            on_post: Vec::new(),
            answered_posts: Vec::new(),
            queries: HashMap::new(),
            custom_emoji: HashMap::new(),
            custom_emoji_lookups: 0,
            commands: HashMap::new(),
            last_commands: Vec::new(),
        };
        for user in [User::owner(), User::stranger()] {
            state.chats.insert(user.id, user.private_chat_json());
        }
        state
    }

    pub(super) fn enqueue(&mut self, kind: &str, payload: Value) -> i64 {
        let update_id = self.next_update_id;
        self.next_update_id += 1;
        let mut update = Map::new();
        update.insert("update_id".to_string(), json!(update_id));
        update.insert(kind.to_string(), payload);
        self.queue.push_back(Value::Object(update));
        update_id
    }

    pub(super) fn chat_json(&self, chat_id: i64) -> Value {
        self.chats.get(&chat_id).cloned().unwrap_or_else(|| {
            panic!("chat {chat_id} is not known to the fake (add_group / add_user)")
        })
    }

    pub(super) fn take_message_id(&mut self, chat_id: i64) -> i64 {
        let next = self.next_message_id.entry(chat_id).or_insert(1);
        let id = *next;
        *next += 1;
        id
    }

    /// The full Message JSON, with `reply_to_message` one level deep (Telegram never
    /// nests it further).
    pub(super) fn message_json(&self, chat_id: i64, message_id: i64) -> Value {
        let Some(message) = self.messages.get(&(chat_id, message_id)) else {
            return Value::Null;
        };
        let mut json = self.message_json_flat(message);
        if let Some(target) = message
            .reply_to
            .and_then(|id| self.messages.get(&(chat_id, id)))
        {
            json["reply_to_message"] = self.message_json_flat(target);
        }
        json
    }

    fn message_json_flat(&self, message: &StoredMessage) -> Value {
        let mut json = json!({
            "message_id": message.message_id,
            "from": message.from,
            "chat": self.chats.get(&message.chat_id).cloned().unwrap_or(Value::Null),
            // Never 0: teloxide reads date 0 as "inaccessible message".
            "date": message.date,
            "text": message.text.plain,
        });
        if !message.text.entities.is_empty() {
            json["entities"] = message.text.entities_json();
        }
        if let Some(edit_date) = message.edit_date {
            json["edit_date"] = json!(edit_date);
        }
        if let Some(markup) = &message.reply_markup {
            json["reply_markup"] = markup.clone();
        }
        json
    }
}

pub(super) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}
