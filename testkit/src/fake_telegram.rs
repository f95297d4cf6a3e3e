//! A fake Telegram Bot API server: a real HTTP server on 127.0.0.1 that teloxide (or any
//! other client) talks to through `Bot::set_api_url`.
//!
//! It models the parts of the Bot API the daemon uses, with Telegram's rules and error
//! strings: long polling with offsets and `allowed_updates`, HTML parse mode checked the way
//! Telegram's parser (tdlib's `parse_html`) checks it, message ids per chat, edits that must
//! change something, callback queries that can be answered once. Tests inject what users do
//! (messages, replies, edits, reactions, button presses; also the instant a bot message
//! exists), inject faults (429s, API errors, slow answers, a real outage), and inspect every
//! call the bot made.
//!
//! Where the fake deliberately differs from Telegram, the comment says so.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::Notify;
use tokio::task::{AbortHandle, JoinHandle, JoinSet};

/// A token for `FakeTelegram::start` (same shape as a real one: `<bot id>:<secret>`).
pub const TOKEN: &str = "7000000001:AAFakeTokenForExecgateIntegrationTst";
/// The bot's user id when the token does not start with one.
pub const BOT_ID: i64 = 7_000_000_001;
pub const BOT_USERNAME: &str = "execgate_test_bot";
pub const BOT_FIRST_NAME: &str = "Execgate Test Bot";

/// Update ids are arbitrary in Telegram; starting high catches code that assumes they start at 0 or 1.
const FIRST_UPDATE_ID: i64 = 500_000;
/// Callback query ids are opaque numeric strings in Telegram.
const FIRST_QUERY_ID: u64 = 4_382_000_000_000_000_000;
/// Telegram's limit on message text, in UTF-16 code units after entity parsing.
const MAX_TEXT_UTF16: usize = 4096;
/// How long `wait_until` and friends wait before failing the test.
const WAIT_LIMIT: Duration = Duration::from_secs(10);
/// Update types Telegram withholds unless `allowed_updates` asks for them.
const NOT_DELIVERED_BY_DEFAULT: [&str; 3] =
    ["message_reaction", "message_reaction_count", "chat_member"];

const NOT_MODIFIED: &str = "message is not modified: specified new message content and reply \
                            markup are exactly the same as a current content and reply markup of the message";
const QUERY_INVALID: &str = "query is too old and response timeout expired or query ID is invalid";

// ---------------------------------------------------------------------------------------------
// Public value types
// ---------------------------------------------------------------------------------------------

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
    fn private_chat_json(&self) -> Value {
        let mut chat = json!({"id": self.id, "type": "private", "first_name": self.first_name});
        if let Some(username) = &self.username {
            chat["username"] = json!(username);
        }
        chat
    }
}

fn bot_user_json(bot_id: i64) -> Value {
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

/// An error to answer instead of handling a call (see `FakeTelegram::fail_next`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 429 "Too Many Requests: retry after N" with `parameters.retry_after`.
    TooManyRequests { retry_after: u32 },
    /// Any 4xx error with this exact description (e.g. 403 "Forbidden: bot was blocked by the user").
    Error { code: u16, description: String },
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

// ---------------------------------------------------------------------------------------------
// The server handle
// ---------------------------------------------------------------------------------------------

/// Handle to a running fake. Cheap to clone; the server stops when the last clone is dropped.
#[derive(Clone)]
pub struct FakeTelegram {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    addr: SocketAddr,
    server: Mutex<Option<Server>>,
}

/// The listener and its connections while the fake is up.
struct Server {
    accept: JoinHandle<()>,
    /// The listening socket, owned by the accept task (see `Server::stop`).
    listener_fd: RawFd,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Server {
    /// Takes the server down at once, from synchronous code.
    fn stop(self) {
        // Aborting the accept task only closes its listener the next time the runtime gets
        // to it; until then connections would still queue in the backlog. shutdown(2) takes
        // the socket out of LISTEN now: connects are refused and the port can be bound again.
        // The accept loop never returns on its own and owns the fd, so while it is not
        // finished the fd is open (and is not some reused number, e.g. after the runtime
        // that ran it has gone).
        if !self.accept.is_finished() {
            // SAFETY: shutdown takes no pointers; on an open fd it cannot corrupt memory.
            unsafe {
                libc::shutdown(self.listener_fd, libc::SHUT_RDWR);
            }
        }
        self.accept.abort();
        // An aborted task is never polled again, so no request gets an answer after this.
        for connection in self
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            connection.abort();
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let server = self
            .server
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(server) = server {
            server.stop();
        }
    }
}

/// What the HTTP handlers share with the test-side handle.
struct Shared {
    token: String,
    state: Mutex<FakeState>,
    /// Signalled whenever the update queue changes or a new poll supersedes an old one.
    updates_changed: Notify,
    started: Instant,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, FakeState> {
        // A panicking test thread must not turn every later assertion into a PoisonError.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl FakeTelegram {
    /// Starts a fake that accepts `token` (e.g. `TOKEN`) on a free port of 127.0.0.1, with
    /// the private chats of `User::owner()` and `User::stranger()` known. The bot's user id
    /// is the number before the token's ':', as in Telegram (`BOT_ID` if there is none).
    pub async fn start(token: &str) -> FakeTelegram {
        let listener = listen(SocketAddr::from(([127, 0, 0, 1], 0)))
            .expect("the fake Telegram server can bind 127.0.0.1:0");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let bot_id = token
            .split_once(':')
            .and_then(|(id, _)| id.parse().ok())
            .unwrap_or(BOT_ID);
        let shared = Arc::new(Shared {
            token: token.to_string(),
            state: Mutex::new(FakeState::new(bot_id)),
            updates_changed: Notify::new(),
            started: Instant::now(),
        });
        let server = spawn_server(listener, shared.clone());
        FakeTelegram {
            inner: Arc::new(Inner {
                shared,
                addr,
                server: Mutex::new(Some(server)),
            }),
        }
    }

    /// The API URL to give teloxide (`Bot::set_api_url`), e.g. `http://127.0.0.1:41234/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.inner.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    pub fn token(&self) -> &str {
        &self.inner.shared.token
    }

    /// The bot's user id (what getMe answers).
    pub fn bot_id(&self) -> i64 {
        self.state().bot_id
    }

    /// A teloxide bot pointed at this fake.
    pub fn bot(&self) -> teloxide::Bot {
        let url = reqwest::Url::parse(&self.url()).expect("the fake's URL parses");
        teloxide::Bot::new(self.token()).set_api_url(url)
    }

    fn state(&self) -> MutexGuard<'_, FakeState> {
        self.inner.shared.lock()
    }

    /// Runs `f` on the state, then wakes long polls (the update queue may have changed).
    fn mutate<T>(&self, f: impl FnOnce(&mut FakeState) -> T) -> T {
        let result = f(&mut self.state());
        self.inner.shared.updates_changed.notify_waiters();
        result
    }

    // --- setup ---------------------------------------------------------------------------

    /// Makes a group known (`chat_id` negative; ≤ -1_000_000_000_000 makes it a supergroup).
    pub fn add_group(&self, chat_id: i64, title: &str) {
        assert!(chat_id < 0, "group chat ids are negative, got {chat_id}");
        let kind = if chat_id <= -1_000_000_000_000 {
            "supergroup"
        } else {
            "group"
        };
        self.state().chats.insert(
            chat_id,
            json!({"id": chat_id, "type": kind, "title": title}),
        );
    }

    /// Makes `user`'s private chat with the bot known (as if they had pressed Start).
    pub fn add_user(&self, user: &User) {
        self.state().chats.insert(user.id, user.private_chat_json());
    }

    /// Makes `getCustomEmojiStickers` know the custom emoji `id`, which stands for `emoji`.
    pub fn register_custom_emoji(&self, id: &str, emoji: &str) {
        self.state()
            .custom_emoji
            .insert(id.to_string(), emoji.to_string());
    }

    /// The next `times` calls to `method` (any case) answer `fault` instead of being handled.
    /// Faults queue up per method and are used in order.
    pub fn fail_next(&self, method: &str, times: usize, fault: Fault) {
        if let Fault::Error { code, .. } = &fault {
            // teloxide sleeps 10 s on any 5xx before reading it: never produce one.
            assert!(
                (400..500).contains(code),
                "fail_next takes 4xx codes only, got {code}"
            );
        }
        let mut state = self.state();
        let queue = state.faults.entry(method.to_ascii_lowercase()).or_default();
        queue.extend(std::iter::repeat_n(fault, times));
    }

    /// The next `times` calls to `method` (any case; not getUpdates) are handled at once
    /// but answered `delay` later, as over a slow network: what the call did (a message the
    /// owner can already see, and answer) happens before the bot hears back.
    pub fn answer_late(&self, method: &str, times: usize, delay: Duration) {
        let mut state = self.state();
        let queue = state.late.entry(method.to_ascii_lowercase()).or_default();
        queue.extend(std::iter::repeat_n(delay, times));
    }

    /// The first message the bot sends to `chat_id` whose plain text contains `containing`
    /// is answered by `answer` in the same instant it is created, before sendMessage
    /// returns: a fast human, or one on a second device, racing the bot's own bookkeeping.
    pub fn answer_on_post(&self, chat_id: i64, containing: &str, answer: OnPost) {
        self.state()
            .on_post
            .push((chat_id, containing.to_string(), answer));
    }

    /// Every `answer_on_post` carried out so far, oldest first.
    pub fn answered_posts(&self) -> Vec<PostAnswered> {
        self.state().answered_posts.clone()
    }

    // --- outages -------------------------------------------------------------------------

    /// A real outage, effective at once: new connections are refused, open ones (in-flight
    /// long polls included) are cut and end with a network error on the client. State
    /// survives. Call from inside the tokio runtime. As with a real restart, a connection
    /// the client kept alive across `go_down(); come_back();` with no await in between can
    /// still fail one request with a reset.
    pub fn go_down(&self) {
        let server = self
            .inner
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(server) = server {
            server.stop();
        }
    }

    /// Ends an outage: listens on the same port again. Call from inside the tokio runtime.
    pub fn come_back(&self) {
        let mut server = self.inner.server.lock().unwrap_or_else(|e| e.into_inner());
        if server.is_some() {
            return;
        }
        // `go_down` freed the port already; retry briefly in case something else holds it.
        let mut attempts = 0;
        let listener = loop {
            match listen(self.inner.addr) {
                Ok(listener) => break listener,
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && attempts < 50 => {
                    attempts += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => panic!(
                    "the fake Telegram cannot listen on {} again: {e}",
                    self.inner.addr
                ),
            }
        };
        *server = Some(spawn_server(listener, self.inner.shared.clone()));
    }

    pub fn is_up(&self) -> bool {
        self.inner
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    // --- what users do -------------------------------------------------------------------

    /// `user` sends `text` to `chat_id` (their own id for a private chat, or a known group).
    /// Returns (update_id, message_id).
    pub fn send_text(&self, chat_id: i64, user: &User, text: &str) -> (i64, i64) {
        self.mutate(|state| {
            let message_id = state.store_user_message(chat_id, user, text, None);
            let message = state.message_json(chat_id, message_id);
            (state.enqueue("message", message), message_id)
        })
    }

    /// `user` replies to `reply_to_message_id` (the bot's message or anyone's) with `text`.
    /// Returns (update_id, message_id).
    pub fn reply_to(
        &self,
        chat_id: i64,
        user: &User,
        reply_to_message_id: i64,
        text: &str,
    ) -> (i64, i64) {
        self.mutate(|state| {
            assert!(
                state.messages.contains_key(&(chat_id, reply_to_message_id)),
                "reply_to: no message {reply_to_message_id} in chat {chat_id}"
            );
            state.reply_update(chat_id, user, reply_to_message_id, text)
        })
    }

    /// `user` edits their message `message_id` to `new_text`: an `edited_message` update.
    pub fn edit_text(&self, chat_id: i64, user: &User, message_id: i64, new_text: &str) -> i64 {
        self.mutate(|state| {
            let message = state
                .messages
                .get_mut(&(chat_id, message_id))
                .unwrap_or_else(|| panic!("edit_text: no message {message_id} in chat {chat_id}"));
            assert!(
                !message.by_bot && message.from["id"] == json!(user.id),
                "edit_text: message {message_id} in chat {chat_id} was not sent by user {}",
                user.id
            );
            let old = std::mem::replace(&mut message.raw, new_text.to_string());
            message.edits.push(old);
            message.text = Formatted::user_text(new_text);
            message.edit_date = Some(now());
            let message = state.message_json(chat_id, message_id);
            state.enqueue("edited_message", message)
        })
    }

    /// A reaction change on `message_id`: `new` is the actor's whole current set of
    /// reactions, `old` the previous one (as Telegram sends them).
    pub fn react(
        &self,
        chat_id: i64,
        actor: Actor,
        message_id: i64,
        old: Vec<Reaction>,
        new: Vec<Reaction>,
    ) -> i64 {
        self.mutate(|state| state.reaction_update(chat_id, actor, message_id, &old, &new))
    }

    /// `user` presses an inline button carrying `data` under `message_id`.
    /// Returns (update_id, callback_query_id). The fake does not check that the message
    /// has such a button, so tests can forge stale or bogus presses.
    pub fn press_button(
        &self,
        chat_id: i64,
        user: &User,
        message_id: i64,
        data: &str,
    ) -> (i64, String) {
        self.mutate(|state| {
            assert!(
                state.messages.contains_key(&(chat_id, message_id)),
                "press_button: no message {message_id} in chat {chat_id}"
            );
            state.press_update(chat_id, user, message_id, data)
        })
    }

    /// What `send_text` would queue, returned instead: the update (with a fresh update_id;
    /// the message is stored) to hand to `push_raw`, e.g. twice to simulate a redelivery.
    pub fn make_text_update(&self, chat_id: i64, user: &User, text: &str) -> Value {
        let mut state = self.state();
        let message_id = state.store_user_message(chat_id, user, text, None);
        let message = state.message_json(chat_id, message_id);
        let update_id = state.next_update_id;
        state.next_update_id += 1;
        json!({"update_id": update_id, "message": message})
    }

    /// Queues `update` exactly as given (it must carry its own `update_id`): for duplicates,
    /// out-of-order ids and shapes the helpers do not produce.
    pub fn push_raw(&self, update: Value) {
        self.mutate(|state| {
            if let Some(id) = update.get("update_id").and_then(Value::as_i64) {
                state.next_update_id = state.next_update_id.max(id + 1);
            }
            state.queue.push_back(update);
        });
    }

    // --- observing -----------------------------------------------------------------------

    pub fn calls(&self) -> Vec<Call> {
        self.state().calls.clone()
    }

    pub fn calls_to(&self, method: &str) -> Vec<Call> {
        let method = method.to_ascii_lowercase();
        self.state()
            .calls
            .iter()
            .filter(|c| c.method == method)
            .cloned()
            .collect()
    }

    /// Messages the bot sent to `chat_id` (and did not delete), oldest first.
    pub fn messages(&self, chat_id: i64) -> Vec<SentMessage> {
        self.state()
            .messages
            .range((chat_id, i64::MIN)..=(chat_id, i64::MAX))
            .filter(|(_, m)| m.by_bot)
            .map(|(_, m)| m.to_sent())
            .collect()
    }

    /// A message the bot sent.
    pub fn message(&self, chat_id: i64, message_id: i64) -> Option<SentMessage> {
        let state = self.state();
        let message = state.messages.get(&(chat_id, message_id))?;
        message.by_bot.then(|| message.to_sent())
    }

    /// None: not answered (or unknown id); Some(text): answered, with that text if any.
    pub fn callback_answer(&self, query_id: &str) -> Option<Option<String>> {
        self.state().queries.get(query_id).cloned().flatten()
    }

    /// The update_id of the newest update created so far (by any helper or `push_raw`).
    /// A poller that has confirmed everything up to here has `acked_offset() > last_update_id()`.
    pub fn last_update_id(&self) -> i64 {
        self.state().next_update_id - 1
    }

    /// The highest positive `offset` any getUpdates call has confirmed.
    pub fn acked_offset(&self) -> i64 {
        self.state().acked_offset
    }

    /// Whether some getUpdates call has answered with update `update_id`.
    pub fn delivered(&self, update_id: i64) -> bool {
        self.state().calls.iter().any(|call| {
            call.method == "getupdates"
                && call
                    .result
                    .as_ref()
                    .and_then(Value::as_array)
                    .is_some_and(|updates| {
                        updates
                            .iter()
                            .any(|u| u.get("update_id").and_then(Value::as_i64) == Some(update_id))
                    })
        })
    }

    /// Updates still queued (neither confirmed by an offset nor dropped).
    pub fn pending_updates(&self) -> Vec<Value> {
        self.state().queue.iter().cloned().collect()
    }

    /// How many getCustomEmojiStickers calls were handled (each counts once, whatever
    /// the number of ids it asked about).
    pub fn custom_emoji_lookups(&self) -> usize {
        self.state().custom_emoji_lookups
    }

    /// The command list most recently set with setMyCommands (any scope).
    pub fn commands(&self) -> Vec<(String, String)> {
        self.state().last_commands.clone()
    }

    /// The last `allowed_updates` a getUpdates call gave (None: Telegram's default).
    pub fn allowed_updates(&self) -> Option<Vec<String>> {
        self.state().allowed_updates.clone()
    }

    // --- waiting -------------------------------------------------------------------------

    /// Polls `f` every 20 ms until it returns Some, for at most 10 s; then fails the test
    /// with `what` and the most recent calls.
    pub async fn wait_until<T>(&self, what: &str, f: impl Fn(&Self) -> Option<T>) -> T {
        let deadline = Instant::now() + WAIT_LIMIT;
        loop {
            if let Some(value) = f(self) {
                return value;
            }
            if Instant::now() >= deadline {
                panic!(
                    "timed out after {WAIT_LIMIT:?} waiting for {what}\n\
                     last calls to the fake Telegram:\n{}",
                    self.dump_calls(30)
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for a bot message in `chat_id` whose current plain text satisfies `matches`.
    pub async fn wait_for_message(
        &self,
        chat_id: i64,
        matches: impl Fn(&str) -> bool,
    ) -> SentMessage {
        self.wait_until(&format!("a bot message in chat {chat_id}"), |fake| {
            fake.messages(chat_id)
                .into_iter()
                .find(|m| matches(&m.plain))
        })
        .await
    }

    /// Waits until at least `n` calls to `method` have arrived; returns all of them.
    pub async fn wait_for_call(&self, method: &str, n: usize) -> Vec<Call> {
        self.wait_until(&format!("{n} call(s) to {method}"), |fake| {
            let calls = fake.calls_to(method);
            (calls.len() >= n).then_some(calls)
        })
        .await
    }

    /// The last `n` calls, one per line, for failure messages.
    pub fn dump_calls(&self, n: usize) -> String {
        let started = self.inner.shared.started;
        let calls = self.calls();
        let skip = calls.len().saturating_sub(n);
        let mut out = String::new();
        for call in &calls[skip..] {
            let outcome = match (call.finished, call.ok) {
                (false, _) => "(no answer)".to_string(),
                (true, true) => "ok".to_string(),
                (true, false) => format!(
                    "{} {}",
                    call.error_code.unwrap_or_default(),
                    call.description.as_deref().unwrap_or_default()
                ),
            };
            let mut body = call.body.to_string();
            if body.len() > 300 {
                let mut cut = 300;
                while !body.is_char_boundary(cut) {
                    cut -= 1;
                }
                body.truncate(cut);
                body.push('…');
            }
            out.push_str(&format!(
                "  +{:>7.3}s {} {} {}\n",
                call.at.duration_since(started).as_secs_f64(),
                call.method,
                outcome,
                body
            ));
        }
        if out.is_empty() {
            out.push_str("  (none)\n");
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

struct StoredMessage {
    chat_id: i64,
    message_id: i64,
    by_bot: bool,
    from: Value,
    date: i64,
    edit_date: Option<i64>,
    /// The text as sent (HTML source for the bot's HTML messages).
    raw: String,
    parse_mode: Option<String>,
    text: Formatted,
    reply_markup: Option<Value>,
    reply_to: Option<i64>,
    edits: Vec<String>,
}

impl StoredMessage {
    fn to_sent(&self) -> SentMessage {
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

struct FakeState {
    bot_id: i64,
    calls: Vec<Call>,
    /// Known chats by id, as the Chat JSON Telegram sends.
    chats: HashMap<i64, Value>,
    /// Message ids are per chat in private chats and groups, shared by the bot and users.
    next_message_id: HashMap<i64, i64>,
    /// Every message, the bot's and injected users', by (chat, message id).
    messages: BTreeMap<(i64, i64), StoredMessage>,
    /// Updates not yet confirmed by an offset.
    queue: VecDeque<Value>,
    next_update_id: i64,
    /// The last `allowed_updates` given; None means Telegram's default.
    allowed_updates: Option<Vec<String>>,
    acked_offset: i64,
    /// Bumped by every getUpdates; a held poll that sees a newer one has been superseded.
    poll_generation: u64,
    faults: HashMap<String, VecDeque<Fault>>,
    /// Delays before answering handled calls, per method, used in order (`answer_late`).
    late: HashMap<String, VecDeque<Duration>>,
    /// Answers waiting for a bot message: (chat, text it contains, answer).
    on_post: Vec<(i64, String, OnPost)>,
    answered_posts: Vec<PostAnswered>,
    /// Callback queries issued: None until answered, then Some(answer text).
    queries: HashMap<String, Option<Option<String>>>,
    custom_emoji: HashMap<String, String>,
    custom_emoji_lookups: usize,
    /// Command lists by scope (and language), as setMyCommands stores them.
    commands: HashMap<String, Vec<(String, String)>>,
    last_commands: Vec<(String, String)>,
}

impl FakeState {
    fn new(bot_id: i64) -> FakeState {
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

    fn enqueue(&mut self, kind: &str, payload: Value) -> i64 {
        let update_id = self.next_update_id;
        self.next_update_id += 1;
        let mut update = Map::new();
        update.insert("update_id".to_string(), json!(update_id));
        update.insert(kind.to_string(), payload);
        self.queue.push_back(Value::Object(update));
        update_id
    }

    fn chat_json(&self, chat_id: i64) -> Value {
        self.chats.get(&chat_id).cloned().unwrap_or_else(|| {
            panic!("chat {chat_id} is not known to the fake (add_group / add_user)")
        })
    }

    fn take_message_id(&mut self, chat_id: i64) -> i64 {
        let next = self.next_message_id.entry(chat_id).or_insert(1);
        let id = *next;
        *next += 1;
        id
    }

    fn store_user_message(
        &mut self,
        chat_id: i64,
        user: &User,
        text: &str,
        reply_to: Option<i64>,
    ) -> i64 {
        if chat_id > 0 {
            assert_eq!(chat_id, user.id, "a private chat's id is the user's id");
            self.chats
                .entry(chat_id)
                .or_insert_with(|| user.private_chat_json());
        } else {
            assert!(
                self.chats.contains_key(&chat_id),
                "unknown group {chat_id}: add_group first"
            );
        }
        let message_id = self.take_message_id(chat_id);
        self.messages.insert(
            (chat_id, message_id),
            StoredMessage {
                chat_id,
                message_id,
                by_bot: false,
                from: user.to_json(),
                date: now(),
                edit_date: None,
                raw: text.to_string(),
                parse_mode: None,
                text: Formatted::user_text(text),
                reply_markup: None,
                reply_to,
                edits: Vec::new(),
            },
        );
        message_id
    }

    /// The full Message JSON, with `reply_to_message` one level deep (Telegram never
    /// nests it further).
    fn message_json(&self, chat_id: i64, message_id: i64) -> Value {
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

    fn take_fault(&mut self, method: &str) -> Option<Fault> {
        self.faults.get_mut(method)?.pop_front()
    }

    fn take_late(&mut self, method: &str) -> Option<Duration> {
        self.late.get_mut(method)?.pop_front()
    }

    /// Queues `user`'s reply to `reply_to` in `chat_id`: (update_id, message_id).
    fn reply_update(&mut self, chat_id: i64, user: &User, reply_to: i64, text: &str) -> (i64, i64) {
        let message_id = self.store_user_message(chat_id, user, text, Some(reply_to));
        let message = self.message_json(chat_id, message_id);
        (self.enqueue("message", message), message_id)
    }

    /// Queues a reaction change on `message_id`; returns the update_id.
    fn reaction_update(
        &mut self,
        chat_id: i64,
        actor: Actor,
        message_id: i64,
        old: &[Reaction],
        new: &[Reaction],
    ) -> i64 {
        let mut update = json!({
            "chat": self.chat_json(chat_id),
            "message_id": message_id,
            "date": now(),
            "old_reaction": old.iter().map(Reaction::to_json).collect::<Vec<_>>(),
            "new_reaction": new.iter().map(Reaction::to_json).collect::<Vec<_>>(),
        });
        match actor {
            Actor::User(user) => update["user"] = user.to_json(),
            Actor::Anonymous {
                chat_id: actor_id,
                title,
            } => {
                update["actor_chat"] = match self.chats.get(&actor_id) {
                    Some(chat) => chat.clone(),
                    None => json!({"id": actor_id, "type": "channel", "title": title}),
                };
            }
        }
        self.enqueue("message_reaction", update)
    }

    /// Queues `user`'s press of a button carrying `data`: (update_id, callback_query_id).
    fn press_update(
        &mut self,
        chat_id: i64,
        user: &User,
        message_id: i64,
        data: &str,
    ) -> (i64, String) {
        let query_id = (FIRST_QUERY_ID + self.queries.len() as u64).to_string();
        self.queries.insert(query_id.clone(), None);
        let query = json!({
            "id": query_id,
            "from": user.to_json(),
            "message": self.message_json(chat_id, message_id),
            // Telegram's chat_instance is an opaque per-chat number.
            "chat_instance": chat_id.wrapping_mul(2_654_435_761).to_string(),
            "data": data,
        });
        (self.enqueue("callback_query", query), query_id)
    }

    /// Carries out the first `answer_on_post` that the bot's new message matches.
    fn answer_post(&mut self, chat_id: i64, message_id: i64) {
        let Some(message) = self.messages.get(&(chat_id, message_id)) else {
            return;
        };
        let plain = message.text.plain.clone();
        let Some(at) = self
            .on_post
            .iter()
            .position(|(chat, needle, _)| *chat == chat_id && plain.contains(needle.as_str()))
        else {
            return;
        };
        let (_, _, answer) = self.on_post.remove(at);
        let mut answered = PostAnswered {
            message_id,
            update_id: 0,
            reply_id: None,
            query_id: None,
        };
        match answer {
            OnPost::React { actor, reactions } => {
                answered.update_id =
                    self.reaction_update(chat_id, actor, message_id, &[], &reactions);
            }
            OnPost::Reply { user, text } => {
                let (update_id, reply_id) = self.reply_update(chat_id, &user, message_id, &text);
                answered.update_id = update_id;
                answered.reply_id = Some(reply_id);
            }
            OnPost::Press { user, button } => {
                let sent = self
                    .messages
                    .get(&(chat_id, message_id))
                    .map(|m| m.to_sent());
                let Some(data) = sent.and_then(|m| {
                    m.buttons()
                        .into_iter()
                        .find(|(text, _)| *text == button)
                        .map(|(_, data)| data)
                }) else {
                    return;
                };
                let (update_id, query_id) = self.press_update(chat_id, &user, message_id, &data);
                answered.update_id = update_id;
                answered.query_id = Some(query_id);
            }
        }
        self.answered_posts.push(answered);
    }

    /// Applies a getUpdates `offset`: Telegram forgets confirmed updates for good.
    fn confirm(&mut self, offset: i64) {
        if offset > 0 {
            self.queue.retain(|u| {
                u.get("update_id")
                    .and_then(Value::as_i64)
                    .unwrap_or(i64::MAX)
                    >= offset
            });
            self.acked_offset = self.acked_offset.max(offset);
        } else if offset < 0 {
            // A negative offset keeps only the last -offset updates.
            let keep = offset.unsigned_abs() as usize;
            while self.queue.len() > keep {
                self.queue.pop_front();
            }
        }
    }

    fn deliverable(&self, limit: usize) -> Vec<Value> {
        self.queue
            .iter()
            .filter(|update| self.allowed(update_kind(update)))
            .take(limit)
            .cloned()
            .collect()
    }

    fn allowed(&self, kind: &str) -> bool {
        match &self.allowed_updates {
            Some(list) => list.iter().any(|k| k == kind),
            None => !NOT_DELIVERED_BY_DEFAULT.contains(&kind),
        }
    }
}

/// The update's type: its one key besides `update_id`.
fn update_kind(update: &Value) -> &str {
    update
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "update_id"))
        .map(String::as_str)
        .unwrap_or("")
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    // Lets `come_back` rebind while connections it closed sit in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

fn spawn_server(listener: TcpListener, shared: Arc<Shared>) -> Server {
    let app = Router::new().fallback(handle).with_state(shared);
    let listener_fd = listener.as_raw_fd();
    let connections = Arc::new(Mutex::new(Vec::new()));
    let accept = tokio::spawn(accept_loop(listener, app, connections.clone()));
    Server {
        accept,
        listener_fd,
        connections,
    }
}

/// `axum::serve` would leave accepted connections running after it is stopped, and reqwest
/// keeps connections alive: an outage must cut those too, so each connection is a task that
/// `Server::stop` can abort (and that dies with this loop's JoinSet).
async fn accept_loop(
    listener: TcpListener,
    app: Router,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
) {
    let mut tasks = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let service = hyper_util::service::TowerToHyperService::new(app.clone());
                    let connection = tasks.spawn(async move {
                        // An error here is the client hanging up: nothing to report.
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                            .await;
                    });
                    let mut connections = connections.lock().unwrap_or_else(|e| e.into_inner());
                    connections.retain(|c| !c.is_finished());
                    connections.push(connection);
                }
                // E.g. out of file descriptors: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
}

/// A Bot API error answer.
#[derive(Debug)]
struct ApiFailure {
    code: u16,
    description: String,
    retry_after: Option<u32>,
}

type Reply = Result<Value, ApiFailure>;

fn bad(description: impl std::fmt::Display) -> ApiFailure {
    ApiFailure {
        code: 400,
        description: format!("Bad Request: {description}"),
        retry_after: None,
    }
}

impl From<Fault> for ApiFailure {
    fn from(fault: Fault) -> ApiFailure {
        match fault {
            Fault::TooManyRequests { retry_after } => ApiFailure {
                code: 429,
                description: format!("Too Many Requests: retry after {retry_after}"),
                retry_after: Some(retry_after),
            },
            Fault::Error { code, description } => ApiFailure {
                code,
                description,
                retry_after: None,
            },
        }
    }
}

fn to_response(reply: &Reply) -> Response {
    match reply {
        Ok(result) => (
            StatusCode::OK,
            axum::Json(json!({"ok": true, "result": result})),
        )
            .into_response(),
        Err(failure) => {
            let mut body = json!({
                "ok": false,
                "error_code": failure.code,
                "description": failure.description,
            });
            if let Some(retry_after) = failure.retry_after {
                body["parameters"] = json!({"retry_after": retry_after});
            }
            // Never a 5xx: teloxide sleeps 10 s before reading one.
            let status = StatusCode::from_u16(failure.code)
                .ok()
                .filter(|s| !s.is_server_error())
                .unwrap_or(StatusCode::BAD_REQUEST);
            (status, axum::Json(body)).into_response()
        }
    }
}

/// Every request lands here: `POST /bot<token>/<Method>` with a JSON body.
async fn handle(State(shared): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let path = percent_decode(uri.path());
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let route = match segments.as_slice() {
        [bot, method] => bot
            .strip_prefix("bot")
            .map(|token| (token, method.to_ascii_lowercase())),
        _ => None,
    };
    let method = route
        .as_ref()
        .map_or_else(|| path.clone(), |(_, method)| method.clone());
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };

    let index = {
        let mut state = shared.lock();
        state.calls.push(Call {
            method: method.clone(),
            body: body.clone(),
            at: Instant::now(),
            finished: false,
            ok: false,
            error_code: None,
            description: None,
            result: None,
        });
        state.calls.len() - 1
    };

    let reply = match route {
        None => Err(ApiFailure {
            code: 404,
            description: "Not Found".to_string(),
            retry_after: None,
        }),
        Some((token, _)) if token != shared.token => Err(ApiFailure {
            code: 401,
            description: "Unauthorized".to_string(),
            retry_after: None,
        }),
        Some(_) => {
            let fault = shared.lock().take_fault(&method);
            match fault {
                Some(fault) => Err(fault.into()),
                None if !body.is_object() => Err(bad("can't parse request JSON object")),
                None if method == "getupdates" => get_updates(&shared, &body).await,
                None => {
                    let (reply, late) = {
                        let mut state = shared.lock();
                        let late = state.take_late(&method);
                        (state.handle(&method, &body), late)
                    };
                    shared.updates_changed.notify_waiters();
                    if let Some(delay) = late {
                        tokio::time::sleep(delay).await;
                    }
                    reply
                }
            }
        }
    };

    {
        let mut state = shared.lock();
        if let Some(call) = state.calls.get_mut(index) {
            call.finished = true;
            match &reply {
                Ok(result) => {
                    call.ok = true;
                    call.result = Some(result.clone());
                }
                Err(failure) => {
                    call.error_code = Some(failure.code);
                    call.description = Some(failure.description.clone());
                }
            }
        }
    }
    to_response(&reply)
}

fn percent_decode(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Long polling: answers at once if updates are waiting, else holds the request until one
/// is queued or `timeout` seconds pass.
async fn get_updates(shared: &Shared, body: &Value) -> Reply {
    let offset = int_field(body, "offset")?.unwrap_or(0);
    let limit = int_field(body, "limit")?.unwrap_or(100).clamp(1, 100) as usize;
    let timeout = int_field(body, "timeout")?.unwrap_or(0).clamp(0, 3600) as u64;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout);

    let generation = {
        let mut state = shared.lock();
        match body.get("allowed_updates") {
            None | Some(Value::Null) => {}
            Some(Value::Array(kinds)) => {
                let kinds: Vec<String> = kinds
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect();
                // An empty list means "the default" again; the setting sticks until changed.
                state.allowed_updates = (!kinds.is_empty()).then_some(kinds);
            }
            Some(_) => return Err(bad("can't parse allowed updates")),
        }
        state.confirm(offset);
        state.poll_generation += 1;
        state.poll_generation
    };
    // Wake any older held poll so it can see it has been superseded.
    shared.updates_changed.notify_waiters();

    loop {
        let changed = shared.updates_changed.notified();
        tokio::pin!(changed);
        // Register before looking at the queue, so an update queued in between still wakes us.
        changed.as_mut().enable();
        {
            let state = shared.lock();
            if state.poll_generation != generation {
                return Err(ApiFailure {
                    code: 409,
                    description: "Conflict: terminated by other getUpdates request; make sure \
                                  that only one bot instance is running"
                        .to_string(),
                    retry_after: None,
                });
            }
            let updates = state.deliverable(limit);
            if !updates.is_empty() || tokio::time::Instant::now() >= deadline {
                return Ok(Value::Array(updates));
            }
        }
        let _ = tokio::time::timeout_at(deadline, changed).await;
    }
}

/// An integer parameter; Telegram also accepts numbers written as strings.
fn int_field(body: &Value, key: &str) -> Result<Option<i64>, ApiFailure> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| bad(format!("field \"{key}\" must be of type Integer"))),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| bad(format!("field \"{key}\" must be of type Integer"))),
        Some(_) => Err(bad(format!("field \"{key}\" must be of type Integer"))),
    }
}

fn str_field<'a>(body: &'a Value, key: &str) -> Option<&'a str> {
    body.get(key).and_then(Value::as_str)
}

// ---------------------------------------------------------------------------------------------
// Methods
// ---------------------------------------------------------------------------------------------

impl FakeState {
    fn handle(&mut self, method: &str, body: &Value) -> Reply {
        match method {
            "getme" => Ok(get_me(self.bot_id)),
            "sendmessage" => self.send_message(body),
            "editmessagetext" => self.edit_message_text(body),
            "editmessagereplymarkup" => self.edit_message_reply_markup(body),
            "deletemessage" => self.delete_message(body),
            "answercallbackquery" => self.answer_callback_query(body),
            "setmycommands" => self.set_my_commands(body),
            "getmycommands" => Ok(self.get_my_commands(body)),
            "deletemycommands" => {
                self.commands.remove(&commands_key(body));
                Ok(json!(true))
            }
            "getcustomemojistickers" => self.get_custom_emoji_stickers(body),
            "deletewebhook" => {
                if body.get("drop_pending_updates") == Some(&json!(true)) {
                    self.queue.clear();
                }
                Ok(json!(true))
            }
            "getwebhookinfo" => Ok(json!({
                "url": "",
                "has_custom_certificate": false,
                "pending_update_count": self.queue.len(),
            })),
            _ => Err(ApiFailure {
                code: 404,
                description: "Not Found: method not found".to_string(),
                retry_after: None,
            }),
        }
    }

    /// `chat_id` of a known chat.
    fn target_chat(&self, body: &Value) -> Result<i64, ApiFailure> {
        let chat_id = match body.get("chat_id") {
            None | Some(Value::Null) => return Err(bad("chat_id is empty")),
            Some(Value::Number(n)) => n.as_i64(),
            // "@channelusername" or a number in a string.
            Some(Value::String(s)) => s.trim().parse().ok(),
            Some(_) => None,
        };
        chat_id
            .filter(|id| self.chats.contains_key(id))
            .ok_or_else(|| bad("chat not found"))
    }

    fn send_message(&mut self, body: &Value) -> Reply {
        let chat_id = self.target_chat(body)?;
        let (raw, parse_mode, text) = message_text(body, false)?;
        let reply_markup = inline_keyboard(body.get("reply_markup"))?;

        let reply_parameters = body.get("reply_parameters");
        let reply_to = match reply_parameters {
            Some(p) if p.is_object() => int_field(p, "message_id")?,
            // The pre-7.0 parameter, still accepted by Telegram.
            _ => int_field(body, "reply_to_message_id")?,
        };
        let reply_to = match reply_to {
            Some(id) if self.messages.contains_key(&(chat_id, id)) => Some(id),
            Some(_) => {
                let lenient = reply_parameters
                    .and_then(|p| p.get("allow_sending_without_reply"))
                    .or_else(|| body.get("allow_sending_without_reply"))
                    == Some(&json!(true));
                if !lenient {
                    return Err(bad("message to be replied not found"));
                }
                None
            }
            None => None,
        };

        let message_id = self.take_message_id(chat_id);
        self.messages.insert(
            (chat_id, message_id),
            StoredMessage {
                chat_id,
                message_id,
                by_bot: true,
                from: bot_user_json(self.bot_id),
                date: now(),
                edit_date: None,
                raw,
                parse_mode,
                text,
                reply_markup,
                reply_to,
                edits: Vec::new(),
            },
        );
        self.answer_post(chat_id, message_id);
        Ok(self.message_json(chat_id, message_id))
    }

    /// The bot's own message `message_id` in `chat_id`, for editing.
    fn editable(&mut self, body: &Value) -> Result<(i64, i64, &mut StoredMessage), ApiFailure> {
        if body.get("inline_message_id").is_some() {
            // Inline-mode messages are not modelled.
            return Err(bad("MESSAGE_ID_INVALID"));
        }
        let chat_id = self.target_chat(body)?;
        let message_id = int_field(body, "message_id")?
            .ok_or_else(|| bad("message identifier is not specified"))?;
        let message = self
            .messages
            .get_mut(&(chat_id, message_id))
            .ok_or_else(|| bad("message to edit not found"))?;
        if !message.by_bot {
            return Err(bad("message can't be edited"));
        }
        Ok((chat_id, message_id, message))
    }

    fn edit_message_text(&mut self, body: &Value) -> Reply {
        let (raw, parse_mode, text) = message_text(body, true)?;
        // Telegram removes the keyboard when an edit does not repeat it.
        let reply_markup = inline_keyboard(body.get("reply_markup"))?;
        let (chat_id, message_id, message) = self.editable(body)?;
        // Telegram compares what the user would see (text and entities), not the HTML source.
        if message.text == text && message.reply_markup == reply_markup {
            return Err(bad(NOT_MODIFIED));
        }
        let old = std::mem::replace(&mut message.raw, raw);
        message.edits.push(old);
        message.text = text;
        message.parse_mode = parse_mode;
        message.reply_markup = reply_markup;
        message.edit_date = Some(now());
        Ok(self.message_json(chat_id, message_id))
    }

    fn edit_message_reply_markup(&mut self, body: &Value) -> Reply {
        let reply_markup = inline_keyboard(body.get("reply_markup"))?;
        let (chat_id, message_id, message) = self.editable(body)?;
        if message.reply_markup == reply_markup {
            return Err(bad(NOT_MODIFIED));
        }
        message.reply_markup = reply_markup;
        message.edit_date = Some(now());
        Ok(self.message_json(chat_id, message_id))
    }

    fn delete_message(&mut self, body: &Value) -> Reply {
        let chat_id = self.target_chat(body)?;
        let message_id = int_field(body, "message_id")?
            .ok_or_else(|| bad("message identifier is not specified"))?;
        self.messages
            .remove(&(chat_id, message_id))
            .map(|_| json!(true))
            .ok_or_else(|| bad("message to delete not found"))
    }

    fn answer_callback_query(&mut self, body: &Value) -> Reply {
        let id = match body.get("callback_query_id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(bad(QUERY_INVALID)),
        };
        let text = str_field(body, "text");
        if text.is_some_and(|t| t.chars().count() > 200) {
            return Err(bad("MESSAGE_TOO_LONG"));
        }
        match self.queries.get_mut(&id) {
            Some(answer @ None) => {
                *answer = Some(text.map(str::to_string));
                Ok(json!(true))
            }
            // Unknown, or answered already: Telegram accepts one answer per query.
            _ => Err(bad(QUERY_INVALID)),
        }
    }

    fn set_my_commands(&mut self, body: &Value) -> Reply {
        let Some(list) = body.get("commands").and_then(Value::as_array) else {
            return Err(bad("parameter \"commands\" is required"));
        };
        if list.len() > 100 {
            return Err(bad("BOT_COMMANDS_TOO_MUCH"));
        }
        let mut commands = Vec::new();
        for entry in list {
            let command = str_field(entry, "command").unwrap_or_default();
            let description = str_field(entry, "description").unwrap_or_default();
            let valid_command = (1..=32).contains(&command.len())
                && command
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !valid_command {
                return Err(bad("BOT_COMMAND_INVALID"));
            }
            if !(1..=256).contains(&description.chars().count()) {
                return Err(bad("BOT_COMMAND_DESCRIPTION_INVALID"));
            }
            commands.push((command.to_string(), description.to_string()));
        }
        self.commands.insert(commands_key(body), commands.clone());
        self.last_commands = commands;
        Ok(json!(true))
    }

    fn get_my_commands(&self, body: &Value) -> Value {
        let commands = self
            .commands
            .get(&commands_key(body))
            .cloned()
            .unwrap_or_default();
        commands
            .into_iter()
            .map(|(command, description)| json!({"command": command, "description": description}))
            .collect()
    }

    fn get_custom_emoji_stickers(&mut self, body: &Value) -> Reply {
        let Some(ids) = body.get("custom_emoji_ids").and_then(Value::as_array) else {
            return Err(bad("parameter \"custom_emoji_ids\" is required"));
        };
        if ids.len() > 200 {
            return Err(bad("too many custom emoji identifiers specified"));
        }
        self.custom_emoji_lookups += 1;
        // Unknown ids are left out of the answer, as Telegram does.
        let stickers = ids
            .iter()
            .filter_map(|id| match id {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .filter_map(|id| {
                let emoji = self.custom_emoji.get(&id)?;
                Some(json!({
                    "file_id": format!("CAACAgIAAxUAAWf{id}"),
                    "file_unique_id": format!("AgAD{id}"),
                    "file_size": 2048,
                    "type": "custom_emoji",
                    "width": 100,
                    "height": 100,
                    "is_animated": false,
                    "is_video": false,
                    "emoji": emoji,
                    "set_name": "ExecgateTestEmoji",
                    "custom_emoji_id": id,
                    "needs_repainting": false,
                }))
            })
            .collect();
        Ok(Value::Array(stickers))
    }
}

fn get_me(bot_id: i64) -> Value {
    let mut me = bot_user_json(bot_id);
    // teloxide's `Me` fails to deserialize without these.
    me["can_join_groups"] = json!(true);
    me["can_read_all_group_messages"] = json!(false);
    me["supports_inline_queries"] = json!(false);
    me["can_connect_to_business"] = json!(false);
    me["has_main_web_app"] = json!(false);
    me
}

fn commands_key(body: &Value) -> String {
    let scope = match body.get("scope") {
        None | Some(Value::Null) => json!({"type": "default"}),
        Some(scope) => scope.clone(),
    };
    format!(
        "{scope}|{}",
        str_field(body, "language_code").unwrap_or_default()
    )
}

/// The `text` and `parse_mode` of sendMessage/editMessageText, checked like Telegram does.
fn message_text(
    body: &Value,
    editing: bool,
) -> Result<(String, Option<String>, Formatted), ApiFailure> {
    let raw = str_field(body, "text").unwrap_or_default().to_string();
    let parse_mode = str_field(body, "parse_mode")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let formatted = match parse_mode
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None => Formatted::plain(&raw),
        Some("html") => parse_html(&raw).map_err(|e| bad(format!("can't parse entities: {e}")))?,
        // Markdown is not modelled: the text is taken as is (the daemon uses HTML).
        Some("markdown" | "markdownv2") => Formatted::plain(&raw),
        Some(_) => return Err(bad("unsupported parse_mode")),
    };
    let formatted = formatted.trimmed();
    if formatted.plain.is_empty() {
        return Err(bad("message text is empty"));
    }
    if formatted.plain.encode_utf16().count() > MAX_TEXT_UTF16 {
        // Telegram words the same limit differently for edits.
        return Err(bad(if editing {
            "MESSAGE_TOO_LONG"
        } else {
            "message is too long"
        }));
    }
    Ok((raw, parse_mode, formatted))
}

/// Checks `reply_markup` and returns the inline keyboard to keep on the message (other kinds
/// of markup are accepted but never part of a message, and an empty keyboard is no keyboard).
fn inline_keyboard(markup: Option<&Value>) -> Result<Option<Value>, ApiFailure> {
    let markup = match markup {
        None | Some(Value::Null) => return Ok(None),
        // Telegram also takes the markup JSON-encoded in a string.
        Some(Value::String(s)) => serde_json::from_str(s)
            .map_err(|_| bad("can't parse reply keyboard markup JSON object"))?,
        Some(markup) => markup.clone(),
    };
    if !markup.is_object() {
        return Err(bad("can't parse reply keyboard markup JSON object"));
    }
    let Some(rows) = markup.get("inline_keyboard") else {
        return Ok(None);
    };
    let not_array = || {
        bad(
            "can't parse inline keyboard button: field \"inline_keyboard\" of the \
             InlineKeyboardMarkup should be an Array of Arrays",
        )
    };
    let rows = rows.as_array().ok_or_else(not_array)?;
    let mut any = false;
    for row in rows {
        for button in row.as_array().ok_or_else(not_array)? {
            any = true;
            if str_field(button, "text").is_none() {
                return Err(bad(
                    "can't parse inline keyboard button: Field \"text\" must be of type String",
                ));
            }
            if let Some(data) = button.get("callback_data") {
                let len = data.as_str().map_or(0, str::len);
                if !(1..=64).contains(&len) {
                    return Err(bad("BUTTON_DATA_INVALID"));
                }
            } else if let Some(url) = button.get("url") {
                if url
                    .as_str()
                    .and_then(|u| reqwest::Url::parse(u).ok())
                    .is_none()
                {
                    return Err(bad("BUTTON_URL_INVALID"));
                }
            } else if button.as_object().is_none_or(|b| b.len() < 2) {
                return Err(bad(
                    "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard",
                ));
            }
        }
    }
    Ok(any.then_some(markup))
}

// ---------------------------------------------------------------------------------------------
// Formatted text and Telegram's HTML
// ---------------------------------------------------------------------------------------------

/// Text as the user sees it, with its formatting entities (offsets in UTF-16 code units).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Formatted {
    plain: String,
    entities: Vec<Entity>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entity {
    kind: EntityKind,
    offset: usize,
    length: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum EntityKind {
    Bold,
    Italic,
    Underline,
    Strikethrough,
    Spoiler,
    /// `language` only matters while parsing (`<pre><code class="language-x">`).
    Code {
        language: Option<String>,
    },
    Pre {
        language: Option<String>,
    },
    TextLink {
        url: String,
    },
    CustomEmoji {
        id: String,
    },
    Blockquote {
        expandable: bool,
    },
    BotCommand,
}

impl Formatted {
    fn plain(text: &str) -> Formatted {
        Formatted {
            plain: text.to_string(),
            entities: Vec::new(),
        }
    }

    /// What a user's client sends: plain text, with a `bot_command` entity when it starts
    /// with a command.
    fn user_text(text: &str) -> Formatted {
        let mut formatted = Formatted::plain(text);
        if text.starts_with('/') {
            let word = text.split(char::is_whitespace).next().unwrap_or_default();
            formatted.entities.push(Entity {
                kind: EntityKind::BotCommand,
                offset: 0,
                length: word.encode_utf16().count(),
            });
        }
        formatted
    }

    /// Telegram strips leading and trailing whitespace from message text.
    fn trimmed(self) -> Formatted {
        let cut_front = utf16_len(&self.plain[..self.plain.len() - self.plain.trim_start().len()]);
        let plain = self.plain.trim().to_string();
        let len = utf16_len(&plain);
        let entities = self
            .entities
            .into_iter()
            .filter_map(|e| {
                let start = e.offset.saturating_sub(cut_front);
                let end = (e.offset + e.length).saturating_sub(cut_front).min(len);
                (end > start).then_some(Entity {
                    offset: start,
                    length: end - start,
                    ..e
                })
            })
            .collect();
        Formatted { plain, entities }
    }

    fn entities_json(&self) -> Value {
        self.entities
            .iter()
            .map(|e| {
                let mut json = match &e.kind {
                    EntityKind::Bold => json!({"type": "bold"}),
                    EntityKind::Italic => json!({"type": "italic"}),
                    EntityKind::Underline => json!({"type": "underline"}),
                    EntityKind::Strikethrough => json!({"type": "strikethrough"}),
                    EntityKind::Spoiler => json!({"type": "spoiler"}),
                    EntityKind::Code { .. } => json!({"type": "code"}),
                    EntityKind::Pre { language: None } => json!({"type": "pre"}),
                    EntityKind::Pre {
                        language: Some(language),
                    } => {
                        json!({"type": "pre", "language": language})
                    }
                    EntityKind::TextLink { url } => json!({"type": "text_link", "url": url}),
                    EntityKind::CustomEmoji { id } => {
                        json!({"type": "custom_emoji", "custom_emoji_id": id})
                    }
                    EntityKind::Blockquote { expandable: false } => json!({"type": "blockquote"}),
                    EntityKind::Blockquote { expandable: true } => {
                        json!({"type": "expandable_blockquote"})
                    }
                    EntityKind::BotCommand => json!({"type": "bot_command"}),
                };
                json["offset"] = json!(e.offset);
                json["length"] = json!(e.length);
                json
            })
            .collect()
    }
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Parses Telegram-flavoured HTML the way Telegram does and returns the plain text the user
/// would see, or Telegram's full error description ("Bad Request: can't parse entities: ...").
/// It does not apply the emptiness and length checks of sendMessage.
pub fn plain_text(html: &str) -> Result<String, String> {
    parse_html(html)
        .map(|formatted| formatted.plain)
        .map_err(|e| format!("Bad Request: can't parse entities: {e}"))
}

const SUPPORTED_TAGS: [&str; 16] = [
    "a",
    "b",
    "strong",
    "i",
    "em",
    "s",
    "strike",
    "del",
    "u",
    "ins",
    "tg-spoiler",
    "tg-emoji",
    "span",
    "pre",
    "code",
    "blockquote",
];

struct OpenTag {
    name: String,
    url: Option<String>,
    language: Option<String>,
    emoji_id: Option<String>,
    expandable: bool,
    /// Where the tag's content starts in the plain text: UTF-16 offset and byte offset.
    utf16_start: usize,
    byte_start: usize,
}

/// Telegram's (tdlib's `parse_html`) algorithm and error messages, byte offsets included.
/// One deliberate difference: Telegram shows an unknown `&name;` literally, the fake rejects
/// it, because in a bot's HTML it almost always means text that was not escaped.
fn parse_html(text: &str) -> Result<Formatted, String> {
    let bytes = text.as_bytes();
    // tdlib reads a NUL-terminated string: past the end reads as 0.
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let is_space = |c: u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0 | 0x0b);
    let slice = |from: usize, to: usize| text.get(from..to).unwrap_or_default();

    let mut plain = String::with_capacity(text.len());
    let mut utf16 = 0usize;
    let mut open: Vec<OpenTag> = Vec::new();
    let mut entities: Vec<Entity> = Vec::new();
    let mut i = 0;

    while i < bytes.len() {
        let c = bytes[i];
        if c == b'&'
            && let Some((ch, next)) = decode_html_entity(bytes, i)?
        {
            plain.push(ch);
            utf16 += ch.len_utf16();
            i = next;
            continue;
        }
        if c != b'<' {
            // Tags and entities start with ASCII bytes, so `i` is always on a char boundary.
            let ch = text
                .get(i..)
                .and_then(|rest| rest.chars().next())
                .unwrap_or('\u{fffd}');
            plain.push(ch);
            utf16 += ch.len_utf16();
            i += ch.len_utf8().max(1);
            continue;
        }

        let begin = i;
        i += 1;
        if at(i) != b'/' {
            // A start tag.
            while !is_space(at(i)) && at(i) != b'>' {
                i += 1;
            }
            if at(i) == 0 {
                return Err(format!("Unclosed start tag at byte offset {begin}"));
            }
            let name = slice(begin + 1, i).to_ascii_lowercase();
            if !SUPPORTED_TAGS.contains(&name.as_str()) {
                return Err(format!(
                    "Unsupported start tag \"{name}\" at byte offset {begin}"
                ));
            }

            let mut tag = OpenTag {
                name,
                url: None,
                language: None,
                emoji_id: None,
                expandable: false,
                utf16_start: utf16,
                byte_start: plain.len(),
            };
            let mut span_class = None;
            while at(i) != b'>' {
                while at(i) != 0 && is_space(at(i)) {
                    i += 1;
                }
                if at(i) == b'>' {
                    break;
                }
                let attribute_begin = i;
                while !is_space(at(i)) && at(i) != b'=' && at(i) != b'>' {
                    i += 1;
                }
                let attribute = slice(attribute_begin, i).to_string();
                if attribute.is_empty() {
                    return Err(format!(
                        "Empty attribute name in the tag \"{}\" at byte offset {begin}",
                        tag.name
                    ));
                }
                while at(i) != 0 && is_space(at(i)) {
                    i += 1;
                }
                if at(i) != b'=' {
                    if tag.name == "blockquote" && attribute == "expandable" {
                        tag.expandable = true;
                        continue;
                    }
                    return Err(format!(
                        "Expected equal sign in declaration of an attribute of the tag \"{}\" at byte offset {begin}",
                        tag.name
                    ));
                }
                i += 1;
                while at(i) != 0 && is_space(at(i)) {
                    i += 1;
                }
                if at(i) == 0 {
                    return Err(format!(
                        "Unclosed start tag \"{}\" at byte offset {begin}",
                        tag.name
                    ));
                }
                let value = if at(i) != b'\'' && at(i) != b'"' {
                    // An unquoted name token: letters, digits, '.', '-'; case-insensitive.
                    let token_begin = i;
                    while at(i).is_ascii_alphanumeric() || at(i) == b'.' || at(i) == b'-' {
                        i += 1;
                    }
                    if !is_space(at(i)) && at(i) != b'>' {
                        return Err(format!(
                            "Unexpected end of name token at byte offset {token_begin}"
                        ));
                    }
                    slice(token_begin, i).to_ascii_lowercase()
                } else {
                    let quote = at(i);
                    i += 1;
                    let mut value = String::new();
                    while at(i) != quote && at(i) != 0 {
                        if at(i) == b'&'
                            && let Some((ch, next)) = decode_html_entity(bytes, i)?
                        {
                            value.push(ch);
                            i = next;
                            continue;
                        }
                        let ch = text
                            .get(i..)
                            .and_then(|rest| rest.chars().next())
                            .unwrap_or('\u{fffd}');
                        value.push(ch);
                        i += ch.len_utf8().max(1);
                    }
                    if at(i) == quote {
                        i += 1;
                    }
                    value
                };
                if at(i) == 0 {
                    return Err(format!("Unclosed start tag at byte offset {begin}"));
                }
                match (tag.name.as_str(), attribute.as_str()) {
                    ("a", "href") => tag.url = Some(value),
                    ("code", "class") => {
                        tag.language = value.strip_prefix("language-").map(str::to_string)
                    }
                    ("span", "class") => span_class = Some(value),
                    ("tg-emoji", "emoji-id") => tag.emoji_id = Some(value),
                    _ => {}
                }
            }
            if tag.name == "span" && span_class.as_deref() != Some("tg-spoiler") {
                return Err(format!(
                    "Tag \"span\" must have class \"tg-spoiler\" at byte offset {begin}"
                ));
            }
            i += 1; // '>'
            open.push(tag);
        } else {
            // An end tag.
            if open.is_empty() {
                return Err(format!("Unexpected end tag at byte offset {begin}"));
            }
            while !is_space(at(i)) && at(i) != b'>' {
                i += 1;
            }
            let end_name = slice(begin + 2, i).to_string();
            while at(i) != 0 && is_space(at(i)) {
                i += 1;
            }
            if at(i) != b'>' {
                return Err(format!("Unclosed end tag at byte offset {begin}"));
            }
            i += 1;
            let Some(tag) = open.pop() else {
                return Err(format!("Unexpected end tag at byte offset {begin}"));
            };
            if !end_name.is_empty() && end_name != tag.name {
                return Err(format!(
                    "Unmatched end tag at byte offset {begin}, expected \"</{}>\", found \"</{end_name}>\"",
                    tag.name
                ));
            }
            if utf16 > tag.utf16_start {
                let inner = plain.get(tag.byte_start..).unwrap_or_default().to_string();
                close_entity(&mut entities, tag, utf16, &inner);
            }
        }
    }
    if let Some(tag) = open.last() {
        return Err(format!(
            "Can't find end tag corresponding to start tag \"{}\"",
            tag.name
        ));
    }

    for entity in &mut entities {
        if let EntityKind::Code { language } = &mut entity.kind {
            *language = None;
        }
    }
    entities.sort_by_key(|e| (e.offset, std::cmp::Reverse(e.length)));
    Ok(Formatted { plain, entities })
}

/// Adds the entity for a closed tag that covered [tag.utf16_start, end).
fn close_entity(entities: &mut Vec<Entity>, tag: OpenTag, end: usize, inner_text: &str) {
    let offset = tag.utf16_start;
    let length = end - offset;
    let kind = match tag.name.as_str() {
        "b" | "strong" => EntityKind::Bold,
        "i" | "em" => EntityKind::Italic,
        "u" | "ins" => EntityKind::Underline,
        "s" | "strike" | "del" => EntityKind::Strikethrough,
        "tg-spoiler" | "span" => EntityKind::Spoiler,
        "blockquote" => EntityKind::Blockquote {
            expandable: tag.expandable,
        },
        "code" => EntityKind::Code {
            language: tag.language,
        },
        "pre" => {
            // <pre><code class="language-x">…</code></pre> is one pre block in language x.
            if let Some(last) = entities.last_mut()
                && let EntityKind::Code {
                    language: Some(language),
                } = &last.kind
                && last.offset == offset
                && last.length == length
            {
                last.kind = EntityKind::Pre {
                    language: Some(language.clone()),
                };
                return;
            }
            EntityKind::Pre { language: None }
        }
        "a" => {
            // An empty or missing href links the text itself; a URL Telegram cannot parse
            // silently leaves the text unlinked.
            let url = tag
                .url
                .filter(|u| !u.is_empty())
                .unwrap_or_else(|| inner_text.to_string());
            let parsed = reqwest::Url::parse(&url)
                .or_else(|_| reqwest::Url::parse(&format!("http://{url}")));
            match parsed {
                Ok(url) => EntityKind::TextLink {
                    url: url.to_string(),
                },
                Err(_) => return,
            }
        }
        "tg-emoji" => match tag.emoji_id {
            Some(id) if !id.is_empty() => EntityKind::CustomEmoji { id },
            _ => return,
        },
        _ => return,
    };
    entities.push(Entity {
        kind,
        offset,
        length,
    });
}

/// Decodes the character reference at `pos` (which holds '&'): Ok(None) when Telegram
/// would show the '&' literally. The ';' is optional, as in Telegram.
fn decode_html_entity(bytes: &[u8], pos: usize) -> Result<Option<(char, usize)>, String> {
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let mut end = pos + 1;
    let ch = if at(pos + 1) == b'#' {
        end += 1;
        let mut code: u32 = 0;
        if at(pos + 2) == b'x' {
            end += 1;
            while let Some(digit) = (at(end) as char).to_digit(16) {
                code = code.saturating_mul(16).saturating_add(digit);
                end += 1;
            }
        } else {
            while let Some(digit) = (at(end) as char).to_digit(10) {
                code = code.saturating_mul(10).saturating_add(digit);
                end += 1;
            }
        }
        if code == 0 || code >= 0x10ffff || end - pos >= 10 {
            return Ok(None);
        }
        char::from_u32(code).ok_or_else(|| {
            "Text contains invalid Unicode characters after decoding HTML entities, check for \
             unmatched surrogate code units"
                .to_string()
        })?
    } else {
        while at(end).is_ascii_alphabetic() {
            end += 1;
        }
        match &bytes[pos + 1..end] {
            b"lt" => '<',
            b"gt" => '>',
            b"amp" => '&',
            b"quot" => '"',
            name if !name.is_empty() && at(end) == b';' => {
                // The fake's one strictness beyond Telegram (see `parse_html`).
                return Err(format!(
                    "Unsupported HTML entity \"&{};\" at byte offset {pos}",
                    String::from_utf8_lossy(name)
                ));
            }
            _ => return Ok(None),
        }
    };
    if at(end) == b';' {
        end += 1;
    }
    Ok(Some((ch, end)))
}
