//! A fake Discord: the REST API (`http://127.0.0.1:PORT/api/v10/…`) and the gateway
//! (`ws://127.0.0.1:PORT`), real servers in the test process that the bot's client talks
//! to as it would to Discord.
//!
//! It models what the bot uses, with Discord's rules and error bodies: `Authorization:
//! Bot TOKEN`; messages with content and buttons, replies, edits only of the bot's own
//! messages; DMs opened with `POST /users/@me/channels`; the per-channel posting limit
//! (5 per 5 s) answered with 429s as Discord writes them; interaction callbacks that
//! must come within three seconds; the gateway's opcodes (Hello, Identify with its
//! intents checked, READY, heartbeats, Resume with a replay of missed events,
//! Reconnect, Invalid Session, close codes 4004 and 4014). Tests act as users (a
//! message, a reply, a reaction, a button press; also the instant a post is created),
//! inject faults (any error on any route, slow answers, an outage), and inspect every
//! call, callback and identify.
//!
//! Where the fake deliberately differs from Discord, the comment says so. This module is
//! the handle tests hold ([`FakeDiscord`]); the rest of the fake, by job:
//!
//! - `types`: the public value types (users, sent messages, calls, callbacks, faults);
//! - `state`: what the fake knows (the server, channels, messages, the session);
//! - `server`: the listeners and their connections;
//! - `rest`: the REST routes;
//! - `gateway`: the gateway connection;
//! - `users`: what users do, as the dispatches Discord sends;
//! - `markdown`: message content as a client shows it.

mod gateway;
mod markdown;
mod rest;
mod server;
mod state;
mod types;
mod users;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use markdown::plain;
pub use rest::{CALLBACK, EDIT_MESSAGE, EDIT_ORIGINAL, GET_ME, OPEN_DM, POST_MESSAGE};
pub use state::{APPLICATION_ID, CHANNEL_ID, GUILD_ID, INTERACTION_ACK, OTHER_CHANNEL_ID};
pub use types::{Call, Callback, Fault, Identify, OnPost, SentMessage, User, intents};

use server::{Server, Shared, listen, serve_gateway, serve_rest};
use state::{FakeState, Out};

/// A token of the shape Discord gives (the bot's id in base64, two more parts).
pub const TOKEN: &str =
    "MTQwMDAwMDAwMDAwMDAwMDAwMQ.GfAkEx.fake-discord-token-for-execgate-tests-0123";
/// The bot's user id, as the token's first part says.
pub const BOT_ID: u64 = 1_400_000_000_000_000_001;

/// How long `wait_until` and friends wait before failing the test.
const WAIT_LIMIT: Duration = Duration::from_secs(10);
/// The heartbeat interval Hello gives unless a test sets one.
const HEARTBEAT_MS: u64 = 2000;

/// Handle to a running fake. Cheap to clone; the servers stop with the last clone.
#[derive(Clone)]
pub struct FakeDiscord {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    api: SocketAddr,
    gateway: SocketAddr,
    resume: SocketAddr,
    servers: Mutex<Vec<Server>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for server in self
            .servers
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            server.stop();
        }
    }
}

impl FakeDiscord {
    /// Starts a fake that accepts `token` (e.g. [`TOKEN`]) for the bot [`BOT_ID`], with
    /// a server holding [`CHANNEL_ID`] and [`OTHER_CHANNEL_ID`], and the owner, a
    /// stranger and another bot as its members.
    pub async fn start(token: &str) -> FakeDiscord {
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        let (api, gateway, resume) = (
            listen(any).expect("bind the fake REST API"),
            listen(any).expect("bind the fake gateway"),
            listen(any).expect("bind the fake gateway's resume URL"),
        );
        let addr = |l: &tokio::net::TcpListener| l.local_addr().expect("a bound listener");
        let (api_addr, gateway_addr, resume_addr) = (addr(&api), addr(&gateway), addr(&resume));
        let bot = User {
            bot: true,
            ..User::new(BOT_ID, "execgate")
        };
        let shared = Arc::new(Shared {
            token: token.to_string(),
            state: Mutex::new(FakeState::new(bot)),
            resume_url: format!("ws://{resume_addr}"),
            heartbeat_interval: Mutex::new(HEARTBEAT_MS),
        });
        let servers = vec![
            serve_rest(api, Arc::clone(&shared)),
            serve_gateway(gateway, Arc::clone(&shared), false),
            serve_gateway(resume, Arc::clone(&shared), true),
        ];
        FakeDiscord {
            inner: Arc::new(Inner {
                shared,
                api: api_addr,
                gateway: gateway_addr,
                resume: resume_addr,
                servers: Mutex::new(servers),
            }),
        }
    }

    /// `discord.api_url`: `http://127.0.0.1:PORT`.
    pub fn api_url(&self) -> String {
        format!("http://{}", self.inner.api)
    }

    /// `discord.gateway_url`: `ws://127.0.0.1:PORT`.
    pub fn gateway_url(&self) -> String {
        format!("ws://{}", self.inner.gateway)
    }

    pub fn token(&self) -> &str {
        &self.inner.shared.token
    }

    fn state(&self) -> MutexGuard<'_, FakeState> {
        self.inner.shared.lock()
    }

    // --- setup ---------------------------------------------------------------------------

    /// The heartbeat interval the next Hello gives.
    pub fn set_heartbeat_interval(&self, ms: u64) {
        *self
            .inner
            .shared
            .heartbeat_interval
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = ms;
    }

    /// Refuses privileged intents (close 4014), as Discord does for a bot whose
    /// developer portal has them off.
    pub fn refuse_privileged_intents(&self) {
        self.state().privileged_allowed = false;
    }

    /// Revokes the bot's token for the gateway: the next Identify is closed with 4004
    /// (a live session goes on until it must identify again).
    pub fn revoke_token(&self) {
        self.state().token_revoked = true;
    }

    /// The next call on `route` (e.g. [`POST_MESSAGE`]) answers `fault`.
    pub fn fail_next(&self, route: &str, fault: Fault) {
        self.fail(route, fault, 1);
    }

    /// The next `n` calls on `route` answer `fault`.
    pub fn fail(&self, route: &str, fault: Fault, n: usize) {
        let mut state = self.state();
        let queue = state.faults.entry(route.to_string()).or_default();
        queue.extend(std::iter::repeat_n(fault, n));
    }

    /// Calls on `route` answer `delay` after doing their work (None: at once again).
    pub fn slow(&self, route: &str, delay: Option<Duration>) {
        let mut state = self.state();
        match delay {
            Some(d) => state.slow.insert(route.to_string(), d),
            None => state.slow.remove(route),
        };
    }

    /// The first bot post whose shown text contains `containing` is answered by `user`
    /// doing `answer` in the same instant it is created, before the POST returns.
    pub fn answer_on_post(&self, containing: &str, user: &User, answer: OnPost) {
        self.state()
            .on_post
            .push((containing.to_string(), answer, user.clone()));
    }

    /// Discord goes away: the REST API and the gateway refuse connections, and the live
    /// gateway connection is cut. Events dispatched meanwhile wait for a resume.
    pub fn go_down(&self) {
        rest::cut_gateway(&mut self.state());
        for server in self
            .inner
            .servers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            server.stop();
        }
    }

    /// Discord is back, on the same addresses.
    pub fn come_back(&self) {
        let shared = &self.inner.shared;
        let bind = |addr| listen(addr).expect("rebind a fake Discord address");
        let servers = vec![
            serve_rest(bind(self.inner.api), Arc::clone(shared)),
            serve_gateway(bind(self.inner.gateway), Arc::clone(shared), false),
            serve_gateway(bind(self.inner.resume), Arc::clone(shared), true),
        ];
        *self.inner.servers.lock().unwrap_or_else(|e| e.into_inner()) = servers;
    }

    // --- the gateway ---------------------------------------------------------------------

    /// Whether a client holds a live, identified connection.
    pub fn connected(&self) -> bool {
        self.state().live.is_some()
    }

    /// Waits for a live, identified connection.
    pub async fn wait_connected(&self) {
        self.wait_until("the bot connected to the gateway", |f| {
            f.connected().then_some(())
        })
        .await;
    }

    /// Sends op 7 Reconnect.
    pub fn reconnect(&self) -> bool {
        let frame = serde_json::json!({"op": 7, "d": null, "s": null, "t": null});
        self.state().send_raw(Out::Text(frame.to_string()))
    }

    /// Sends op 9 Invalid Session; a session that cannot be resumed is gone.
    pub fn invalidate_session(&self, resumable: bool) -> bool {
        let mut state = self.state();
        if !resumable {
            state.session = None;
        }
        let frame = serde_json::json!({"op": 9, "d": resumable, "s": null, "t": null});
        state.send_raw(Out::Text(frame.to_string()))
    }

    /// Cuts the live connection without a close frame (the session stays resumable).
    pub fn drop_connection(&self) -> bool {
        let mut state = self.state();
        let dropped = state.send_raw(Out::Drop);
        state.live = None;
        dropped
    }

    /// Stops (or resumes) acknowledging heartbeats: from the bot's side, a zombie.
    pub fn stop_acking_heartbeats(&self, silent: bool) {
        self.state().silent = silent;
    }

    /// Every Identify received, oldest first.
    pub fn identifies(&self) -> Vec<Identify> {
        self.state().identifies.clone()
    }

    /// How many sessions were resumed.
    pub fn resumes(&self) -> usize {
        self.state().resumes
    }

    /// How many gateway connections were made, and how many of them to the resume URL.
    pub fn connections(&self) -> (usize, usize) {
        let state = self.state();
        (state.connections, state.resume_connections)
    }

    pub fn heartbeats(&self) -> usize {
        self.state().heartbeats
    }

    // --- users ---------------------------------------------------------------------------

    /// The DM channel between the bot and `user`, if the bot opened it.
    pub fn dm_channel(&self, user: &User) -> Option<u64> {
        self.state().dms.get(&user.id).copied()
    }

    /// `user` says `text` in `channel`; returns the message id.
    pub fn say(&self, channel: u64, user: &User, text: &str) -> u64 {
        users::say(&mut self.state(), channel, user, text, None)
    }

    /// `user` replies to `to` with `text`; returns the message id.
    pub fn reply(&self, channel: u64, user: &User, to: u64, text: &str) -> u64 {
        users::say(&mut self.state(), channel, user, text, Some(to))
    }

    /// `user` adds the Unicode reaction `emoji` to `message`.
    pub fn react(&self, channel: u64, user: &User, message: u64, emoji: &str) {
        users::react(&mut self.state(), channel, user, message, emoji, None);
    }

    /// `user` adds the server's custom emoji `name` (id `id`) to `message`.
    pub fn react_custom(&self, channel: u64, user: &User, message: u64, name: &str, id: u64) {
        users::react(&mut self.state(), channel, user, message, name, Some(id));
    }

    /// `user` presses the button carrying `custom_id` under `message`; returns the
    /// interaction's id.
    pub fn press(&self, channel: u64, user: &User, message: u64, custom_id: &str) -> u64 {
        users::press(&mut self.state(), channel, user, message, custom_id)
    }

    /// Dispatches `data` as event `t`, whatever it holds; false without a session.
    pub fn dispatch_raw(&self, t: &str, data: Value) -> bool {
        self.state().dispatch(t, data)
    }

    // --- observing -----------------------------------------------------------------------

    /// Messages the bot posted in `channel`, oldest first, as they are now.
    pub fn messages(&self, channel: u64) -> Vec<SentMessage> {
        let state = self.state();
        state
            .messages
            .keys()
            .filter_map(|&id| state.sent(id))
            .filter(|m| m.channel_id == channel)
            .collect()
    }

    /// A message the bot posted.
    pub fn message(&self, id: u64) -> Option<SentMessage> {
        self.state().sent(id)
    }

    pub fn calls(&self) -> Vec<Call> {
        self.state().calls.clone()
    }

    /// Calls whose `METHOD /path` starts with `prefix` (`POST /channels/`).
    pub fn calls_to(&self, prefix: &str) -> Vec<Call> {
        self.state()
            .calls
            .iter()
            .filter(|c| c.route.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// Every callback the bot sent for `interaction`, oldest first.
    pub fn callbacks(&self, interaction: u64) -> Vec<Callback> {
        self.state()
            .callbacks
            .iter()
            .filter(|c| c.interaction_id == interaction)
            .cloned()
            .collect()
    }

    /// What the presser of `interaction` sees (the callback's message or the deferred
    /// one's edit), as shown.
    pub fn seen_by_presser(&self, interaction: u64) -> Option<String> {
        let state = self.state();
        let original = state.interactions.get(&interaction)?.original.clone()?;
        Some(plain(&original))
    }

    /// How many posts the fake refused because the bot posted faster than Discord allows.
    pub fn rate_limited(&self) -> usize {
        self.state().rate_limited
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
                    "timed out after {WAIT_LIMIT:?} waiting for {what}\nlast calls to the fake Discord:\n{}",
                    self.dump_calls(30)
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for the answer to `interaction` the presser sees.
    pub async fn wait_for_press_answer(&self, interaction: u64) -> String {
        self.wait_until(&format!("the answer to interaction {interaction}"), |f| {
            f.seen_by_presser(interaction)
        })
        .await
    }

    /// The last `n` calls, one per line, for failure messages.
    pub fn dump_calls(&self, n: usize) -> String {
        let calls = self.calls();
        let skip = calls.len().saturating_sub(n);
        let mut out = String::new();
        for call in &calls[skip..] {
            let mut body = call.body.to_string();
            if body.len() > 300 {
                let mut cut = 300;
                while !body.is_char_boundary(cut) {
                    cut -= 1;
                }
                body.truncate(cut);
                body.push('…');
            }
            out.push_str(&format!("  {} → {} {}\n", call.route, call.status, body));
        }
        if out.is_empty() {
            out.push_str("  (none)\n");
        }
        out
    }
}
