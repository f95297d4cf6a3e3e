//! A fake Slack: the Web API over HTTP on 127.0.0.1 and Socket Mode over a websocket on
//! another port, for the daemon's Slack transport (`slack.api_url`).
//!
//! It models what the transport uses, with Slack's wire formats and error names: bearer
//! and form tokens, the app-level token good only for `apps.connections.open` and the
//! bot token for the rest; `{"ok": false, "error": …}` on HTTP 200 (`invalid_auth`,
//! `token_revoked`, `missing_scope` with `needed`, `channel_not_found`,
//! `not_in_channel`, `is_archived`, `message_not_found`, `cant_update_message`,
//! `invalid_blocks`, …), HTTP 429 with `Retry-After` on demand and past a channel's rate;
//! Socket Mode tickets used once, `hello`, `events_api` and `interactive` envelopes that
//! must be acknowledged or come again with `retry_attempt`, `disconnect`, dropped
//! sockets. Every message in a channel, the bot's own, is sent as a `message` event, as
//! Slack does. Tests act as users (messages, thread replies, edits, reactions, button
//! presses; also the instant a bot message exists), inject faults, and inspect every
//! call and envelope.
//!
//! This module is the handle tests hold ([`FakeSlack`]); the rest of the fake, by job:
//!
//! - `types`: the public value types (users, faults, calls, messages, envelopes);
//! - `state`: what the fake knows (workspace, messages, envelopes);
//! - `server`: the Web API's HTTP server and its one route;
//! - `methods`: the Web API methods and their checks;
//! - `users`: what users do, as the envelopes Slack would send;
//! - `socket`: Socket Mode's websocket;
//! - `render`: Block Kit checked, and shown as text.

mod methods;
mod render;
mod server;
mod socket;
mod state;
mod types;
mod users;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, broadcast};

pub use methods::POSTS_PER_SECOND;
pub use render::{escape, unescape};
pub use state::SCOPES;
pub use types::{
    ACK_WAIT, Call, Envelope, Ephemeral, Fault, OnPost, PostAnswered, SentMessage, User,
};

use server::{Server, Shared, listen, spawn_server};
use socket::Order;
use state::{Channel, FakeState};

/// Tokens the fake accepts, shaped like Slack's.
pub const BOT_TOKEN: &str = "xoxb-1000000001-2000000000002-FakeBotTokenForExecgate1";
pub const APP_TOKEN: &str = "xapp-1-A0FAKE-3000000000003-fakeapptokenforexecgate0123456789";
/// The bot's user and bot ids, the app and the workspace.
pub const BOT_USER: &str = "U0EXECBOT";
pub const BOT_ID: &str = "B0EXECBOT";
pub const APP_ID: &str = "A0FAKE";
pub const TEAM: &str = "T0FAKE";
/// A public channel the bot is in.
pub const CHANNEL: &str = "C0OPS0001";

/// How long `wait_until` waits before failing the test.
const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// Handle to a running fake. Cheap to clone; the servers stop with the test's runtime.
#[derive(Clone)]
pub struct FakeSlack {
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

impl FakeSlack {
    /// Starts a fake that accepts [`BOT_TOKEN`] and [`APP_TOKEN`], with the owner, a second
    /// owner and a stranger, and [`CHANNEL`] with all of them and the bot in it.
    pub async fn start() -> FakeSlack {
        let listener = listen(SocketAddr::from(([127, 0, 0, 1], 0)))
            .expect("the fake Slack can bind 127.0.0.1:0");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let socket = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("the fake Slack's socket can bind 127.0.0.1:0");
        let socket_addr = socket.local_addr().expect("an address");
        let (orders, _) = broadcast::channel(16);
        let shared = Arc::new(Shared {
            state: Mutex::new(FakeState::new(BOT_TOKEN, APP_TOKEN)),
            changed: Notify::new(),
            orders,
            socket_addr,
            started: Instant::now(),
        });
        tokio::spawn(socket::accept(socket, Arc::clone(&shared)));
        let server = spawn_server(listener, Arc::clone(&shared));
        let fake = FakeSlack {
            inner: Arc::new(Inner {
                shared,
                addr,
                server: Mutex::new(Some(server)),
            }),
        };
        let everyone = [BOT_USER, "U0OWNER01", "U0OWNER02", "U0STRANGR"];
        fake.add_channel(CHANNEL, "channel", &everyone);
        fake
    }

    /// The Web API's base URL, for `slack.api_url`: `http://127.0.0.1:PORT/api`.
    pub fn url(&self) -> String {
        format!("http://{}/api", self.inner.addr)
    }

    fn state(&self) -> MutexGuard<'_, FakeState> {
        self.inner.shared.lock()
    }

    /// Runs `f` on the state, then wakes the sockets (envelopes may have been queued).
    fn mutate<T>(&self, f: impl FnOnce(&mut FakeState) -> T) -> T {
        let result = f(&mut self.state());
        self.inner.shared.changed.notify_waiters();
        result
    }

    // --- setup ---------------------------------------------------------------------------

    /// Makes a channel (`channel`, `group` for a private one) with these members.
    pub fn add_channel(&self, id: &str, kind: &'static str, members: &[&str]) {
        self.state().channels.insert(
            id.to_string(),
            Channel {
                kind,
                members: members.iter().map(|m| m.to_string()).collect(),
                archived: false,
            },
        );
    }

    /// The bot leaves `channel` (its posts then answer `not_in_channel`).
    pub fn remove_bot_from(&self, channel: &str) {
        if let Some(c) = self.state().channels.get_mut(channel) {
            c.members.remove(BOT_USER);
        }
    }

    pub fn archive(&self, channel: &str) {
        if let Some(c) = self.state().channels.get_mut(channel) {
            c.archived = true;
        }
    }

    /// The direct-message channel of `user` with the bot.
    pub fn im_of(&self, user: &User) -> String {
        self.state().im_of(&user.id)
    }

    /// The app loses `scope` (calls that need it answer `missing_scope`).
    pub fn remove_scope(&self, scope: &str) {
        self.state().scopes.remove(scope);
    }

    /// The app gets `scope` (back).
    pub fn add_scope(&self, scope: &str) {
        self.state().scopes.insert(scope.to_string());
    }

    /// Slack revokes `token` (calls with it answer `token_revoked`).
    pub fn revoke(&self, token: &str) {
        self.state().revoked.insert(token.to_string());
    }

    /// The first bot message in `channel` whose text contains `containing` is answered by
    /// `answer` the instant it is created, before `chat.postMessage` returns.
    pub fn answer_on_post(&self, channel: &str, containing: &str, answer: OnPost) {
        self.state()
            .on_post
            .push((channel.to_string(), containing.to_string(), answer));
    }

    /// Every `answer_on_post` carried out so far.
    pub fn answered_posts(&self) -> Vec<PostAnswered> {
        self.state().answered_posts.clone()
    }

    // --- what users do -------------------------------------------------------------------

    /// `user` says `text` at the top of `channel`; returns the message's ts.
    pub fn says(&self, user: &User, channel: &str, text: &str) -> String {
        self.mutate(|s| s.user_message(user, channel, text, None).0)
    }

    /// `user` replies to `parent` in its thread; returns the reply's ts.
    pub fn replies(&self, user: &User, channel: &str, parent: &str, text: &str) -> String {
        self.mutate(|s| s.user_message(user, channel, text, Some(parent)).0)
    }

    /// `user` edits their message `ts` into `text`.
    pub fn edits(&self, user: &User, channel: &str, ts: &str, text: &str) {
        self.mutate(|s| s.user_edit(user, channel, ts, text));
    }

    /// `user` reacts to `ts` with `name` (`+1`, `x`, `ok_hand::skin-tone-2`).
    pub fn reacts(&self, user: &User, channel: &str, ts: &str, name: &str) {
        self.mutate(|s| s.reaction(user, channel, ts, name));
    }

    /// `user` takes reaction `name` back.
    pub fn unreacts(&self, user: &User, channel: &str, ts: &str, name: &str) {
        self.mutate(|s| s.reaction_removed(user, channel, ts, name));
    }

    /// `user` presses the button labelled `label` under `ts`. Panics if there is none.
    pub fn presses(&self, user: &User, channel: &str, ts: &str, label: &str) {
        self.mutate(|s| s.press(user, channel, ts, label))
            .unwrap_or_else(|| panic!("no button {label:?} under message {ts}"));
    }

    /// A button press on `ts` whose action carries `value`, whatever the message shows.
    pub fn presses_value(&self, user: &User, channel: &str, ts: &str, value: &str) {
        self.mutate(|s| s.press_value(user, channel, ts, "forged", value));
    }

    /// Queues an envelope as it is: `{"envelope_id", "type": kind, "payload"}`.
    pub fn push_envelope(&self, kind: &str, payload: serde_json::Value) -> String {
        self.mutate(|s| s.envelope(kind, payload))
    }

    /// Queues an `events_api` envelope carrying `event` as it is.
    pub fn push_event(&self, event: serde_json::Value) -> String {
        self.mutate(|s| s.event(event))
    }

    /// Sends `text` as a frame on every open socket, as it is (not JSON, say).
    pub fn send_raw(&self, text: &str) {
        let _ = self.inner.shared.orders.send(Order::Raw(text.to_string()));
    }

    // --- faults ----------------------------------------------------------------------------

    /// The next `times` calls to `method` answer `fault` instead of being handled.
    pub fn fail_next(&self, method: &str, times: usize, fault: Fault) {
        let mut state = self.state();
        let queue = state.faults.entry(method.to_string()).or_default();
        queue.extend(std::iter::repeat_n(fault, times));
    }

    /// The next `times` calls to `method` are handled at once but answered `delay` later.
    pub fn answer_late(&self, method: &str, times: usize, delay: Duration) {
        let mut state = self.state();
        let queue = state.late.entry(method.to_string()).or_default();
        queue.extend(std::iter::repeat_n(delay, times));
    }

    /// Sends `{"type": "disconnect", "reason": reason}` on every open socket.
    pub fn disconnect(&self, reason: &str) {
        let _ = self
            .inner
            .shared
            .orders
            .send(Order::Disconnect(reason.to_string()));
    }

    /// Closes every open socket without a word.
    pub fn drop_sockets(&self) {
        let _ = self.inner.shared.orders.send(Order::Drop);
    }

    /// A real outage of the Web API, and the sockets cut: state survives.
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
        self.drop_sockets();
    }

    /// Ends an outage: the Web API listens on the same port again.
    pub fn come_back(&self) {
        let mut server = self.inner.server.lock().unwrap_or_else(|e| e.into_inner());
        if server.is_some() {
            return;
        }
        let mut attempts = 0;
        let listener = loop {
            match listen(self.inner.addr) {
                Ok(listener) => break listener,
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && attempts < 50 => {
                    attempts += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => panic!(
                    "the fake Slack cannot listen on {} again: {e}",
                    self.inner.addr
                ),
            }
        };
        *server = Some(spawn_server(listener, Arc::clone(&self.inner.shared)));
    }

    // --- observing -----------------------------------------------------------------------

    pub fn calls(&self) -> Vec<Call> {
        self.state().calls.clone()
    }

    pub fn calls_to(&self, method: &str) -> Vec<Call> {
        self.state()
            .calls
            .iter()
            .filter(|c| c.method == method)
            .cloned()
            .collect()
    }

    /// Messages the bot posted in `channel`, oldest first.
    pub fn messages(&self, channel: &str) -> Vec<SentMessage> {
        self.state()
            .messages
            .values()
            .filter(|m| m.channel == channel && m.user == BOT_USER)
            .map(|m| m.to_sent())
            .collect()
    }

    /// A message of `channel`, anyone's.
    pub fn message(&self, channel: &str, ts: &str) -> Option<SentMessage> {
        self.state().message(channel, ts).map(|m| m.to_sent())
    }

    /// The bot's replies in the thread of `parent`, oldest first.
    pub fn replies_to(&self, channel: &str, parent: &str) -> Vec<SentMessage> {
        self.messages(channel)
            .into_iter()
            .filter(|m| m.thread_ts.as_deref() == Some(parent))
            .collect()
    }

    /// Ephemeral messages shown to `user`, oldest first.
    pub fn ephemerals_for(&self, user: &User) -> Vec<Ephemeral> {
        self.state()
            .ephemerals
            .iter()
            .filter(|e| e.user == user.id)
            .cloned()
            .collect()
    }

    /// Every envelope queued so far, with what became of it.
    pub fn envelopes(&self) -> Vec<Envelope> {
        self.state().outbox.clone()
    }

    /// Every acknowledgement received, in order.
    pub fn acks(&self) -> Vec<String> {
        self.state().acks.clone()
    }

    /// Websocket connections accepted so far.
    pub fn connections(&self) -> u32 {
        self.state().connections
    }

    // --- waiting -------------------------------------------------------------------------

    /// Polls `f` every 20 ms until it returns Some, for at most 10 s; then fails the test
    /// with `what` and the most recent calls.
    pub async fn wait_until<T>(&self, what: &str, f: impl Fn(&Self) -> Option<T>) -> T {
        self.wait_until_within(WAIT_LIMIT, what, f).await
    }

    /// [`FakeSlack::wait_until`], for at most `limit`: for what queues behind the pace of
    /// a message a second.
    pub async fn wait_until_within<T>(
        &self,
        limit: Duration,
        what: &str,
        f: impl Fn(&Self) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(value) = f(self) {
                return value;
            }
            if Instant::now() >= deadline {
                panic!(
                    "timed out after {limit:?} waiting for {what}\nlast calls to the fake Slack:\n{}",
                    self.dump_calls(30)
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Until every envelope queued so far has been acknowledged.
    pub async fn all_acked(&self) {
        self.wait_until("every envelope acknowledged", |f| {
            f.state().outbox.iter().all(|e| e.acked).then_some(())
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
                (true, false) => call.error.clone().unwrap_or_default(),
            };
            let mut args = call.args.to_string();
            if args.len() > 300 {
                let mut cut = 300;
                while !args.is_char_boundary(cut) {
                    cut -= 1;
                }
                args.truncate(cut);
                args.push('…');
            }
            out.push_str(&format!(
                "  +{:>7.3}s {} {} {}\n",
                call.at.duration_since(started).as_secs_f64(),
                call.method,
                outcome,
                args
            ));
        }
        if out.is_empty() {
            out.push_str("  (none)\n");
        }
        out
    }
}
