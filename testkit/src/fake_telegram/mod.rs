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
//!
//! This module is the handle tests hold ([`FakeTelegram`]: starting the fake, setting it
//! up, observing it and waiting on it); the rest of the fake, by job:
//!
//! - `types`: the public value types (users, reactions, calls, sent messages);
//! - `users`: what users do, queued as the updates Telegram would send;
//! - `faults`: injected errors, late answers and outages;
//! - `state`: what the fake knows (chats, messages, the update queue);
//! - `server`: the HTTP server, and the one route every call takes;
//! - `reply`: what a call answers, a result or an error;
//! - `methods`: the Bot API methods;
//! - `polling`: getUpdates' long polling;
//! - `html`: formatted text and Telegram's HTML parser.

mod faults;
mod html;
mod methods;
mod polling;
mod reply;
mod server;
mod state;
mod types;
mod users;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Notify;

pub use faults::Fault;
pub use html::plain_text;
pub use types::{Actor, Call, OnPost, PostAnswered, Reaction, SentMessage, User};

use server::{Server, Shared, listen, spawn_server};
use state::FakeState;

/// A token for `FakeTelegram::start` (same shape as a real one: `<bot id>:<secret>`).
pub const TOKEN: &str = "7000000001:AAFakeTokenForExecgateIntegrationTst";
/// The bot's user id when the token does not start with one.
pub const BOT_ID: i64 = 7_000_000_001;
pub const BOT_USERNAME: &str = "execgate_test_bot";
pub const BOT_FIRST_NAME: &str = "Execgate Test Bot";

/// How long `wait_until` and friends wait before failing the test.
const WAIT_LIMIT: Duration = Duration::from_secs(10);

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
