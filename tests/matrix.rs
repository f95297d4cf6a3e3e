//! The Matrix transport end to end, against a real Synapse: the daemon's bot account in
//! a room the owner made (encrypted, as clients make private rooms by default, and
//! plain), and the owner on their own device of the same SDK, reading the bot's messages
//! and answering as a person would.
//!
//! Tests that leave the homeserver running share one Synapse (`Synapse::shared`); those
//! that stop it or change its limits start their own.

use execgate_testkit as common;

use std::time::Duration;

use common::matrix_owner::{Owner, Seen};
use common::synapse::{Account, Synapse, unique};
use common::*;
use execgate::model::{Decision, Record, Status, Via};
use hyper::StatusCode;
use matrix_sdk::ruma::{OwnedEventId, OwnedRoomId, UserId};
use serde_json::json;
use tempfile::TempDir;

/// How long a message may take to reach the owner's client (encryption included).
const SEE: Duration = Duration::from_secs(30);

/// The Matrix side of a test: the bot's account, and the owner's client in the room the
/// owner made and invited the bot to.
struct Side {
    homeserver: String,
    owner: Owner,
    room: OwnedRoomId,
    bot: Account,
    owner_account: Account,
    _stores: TempDir,
}

/// A daemon posting to a room its owner made, and the owner's client in that room.
struct Room {
    d: TestDaemon,
    side: Side,
}

impl std::ops::Deref for Room {
    type Target = Side;
    fn deref(&self) -> &Side {
        &self.side
    }
}

/// How the bot logs in.
#[derive(Clone, Copy)]
enum Login {
    Token,
    Password,
}

fn borrowed(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

impl Side {
    /// A bot and an owner on `homeserver`, in a new room.
    async fn make(homeserver: &str, encrypted: bool) -> Side {
        let bot = common::synapse::register(homeserver, &unique("bot")).await;
        let owner_account = common::synapse::register(homeserver, &unique("owner")).await;
        let stores = tempfile::tempdir().unwrap();
        let owner = Owner::login(homeserver, &owner_account, &stores.path().join("owner")).await;
        let bot_id = UserId::parse(&bot.user_id).unwrap();
        let room = owner.create_room(encrypted, &[&bot_id]).await;
        Side {
            homeserver: homeserver.to_string(),
            owner,
            room,
            bot,
            owner_account,
            _stores: stores,
        }
    }

    /// The environment that points a daemon at this room, with the owner as owner.
    fn env(&self, login: Login, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let secret = match login {
            Login::Token => (
                "EXECGATE_MATRIX__ACCESS_TOKEN",
                self.bot.access_token.clone(),
            ),
            Login::Password => ("EXECGATE_MATRIX__PASSWORD", self.bot.password.clone()),
        };
        let mut env: Vec<(String, String)> = [
            ("EXECGATE_MATRIX__HOMESERVER_URL", self.homeserver.clone()),
            ("EXECGATE_MATRIX__USER_ID", self.bot.user_id.clone()),
            secret,
            ("EXECGATE_MATRIX__ROOM_ID", self.room.to_string()),
            (
                "EXECGATE_MATRIX__OWNER_IDS",
                self.owner_account.user_id.clone(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        env
    }

    /// The approval message of request `short_id`, once the owner's client shows it.
    async fn message_for_id(&self, short_id: &str) -> Seen {
        let needle = format!("ID: {short_id}\n");
        let bot = self.bot.user_id.clone();
        self.owner
            .wait_for(&format!("the approval message of {short_id}"), SEE, |m| {
                m.sender == bot && m.replaces.is_none() && m.body.contains(&needle)
            })
            .await
    }

    async fn message_for(&self, r: &Record) -> Seen {
        self.message_for_id(&r.short_id).await
    }

    /// Waits until the bot has replaced message `m`, and returns the replacement.
    async fn closed(&self, m: &Seen) -> Seen {
        let bot = self.bot.user_id.clone();
        self.owner
            .wait_for(&format!("an edit of {}", m.event_id), SEE, |s| {
                s.sender == bot && s.replaces.as_ref() == Some(&m.event_id)
            })
            .await
    }

    /// Waits for the bot's answer to the owner's message `to`.
    async fn reply_to(&self, to: &OwnedEventId) -> String {
        let bot = self.bot.user_id.clone();
        self.owner
            .wait_for(&format!("a reply to {to}"), SEE, |s| {
                s.sender == bot && s.in_reply_to.as_ref() == Some(to)
            })
            .await
            .body
    }

    fn owner_by(&self) -> String {
        format!("matrix:{}", self.owner_account.user_id)
    }

    /// Waits until the bot is a member of the room, as the homeserver says.
    async fn bot_joined(&self) {
        let url = format!(
            "{}/_matrix/client/v3/rooms/{}/joined_members",
            self.homeserver,
            urlencode(self.room.as_str())
        );
        for _ in 0..600 {
            let members = reqwest::Client::new()
                .get(&url)
                .bearer_auth(&self.owner_account.access_token)
                .send()
                .await;
            if let Ok(m) = members
                && m.text()
                    .await
                    .unwrap_or_default()
                    .contains(&self.bot.user_id)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the bot never joined the room");
    }
}

impl Room {
    /// The bot and the owner on the shared homeserver, in a new room.
    async fn start(encrypted: bool, extra: &[(&str, &str)]) -> Room {
        let side = Side::make(&Synapse::shared().url, encrypted).await;
        let d = TestDaemon::start(&borrowed(&side.env(Login::Token, extra))).await;
        Room { d, side }
    }

    /// Submits `command` without waiting; returns it with its approval message as the
    /// owner's client shows it.
    async fn ask(&self, command: &str) -> (Record, Seen) {
        let r = self.d.ask_no_wait("claude", command).await;
        let m = self.message_for(&r).await;
        (r, m)
    }
}

/// The fields a decision leaves, checked together.
fn assert_decided(r: &Record, status: Status, decision: Decision, via: Via, by: &str) {
    assert_eq!(r.status, status, "{r:?}");
    assert_eq!(r.decision, Some(decision), "{r:?}");
    assert_eq!(r.via, Some(via), "{r:?}");
    assert_eq!(r.decided_by.as_deref(), Some(by), "{r:?}");
}

/// Every way the owner answers, in one room.
async fn every_answer_path(encrypted: bool) {
    let t = Room::start(encrypted, &[]).await;

    // The message: seed's shape, HTML with the agent's text escaped, plain body beside it.
    let (r, m) = t.ask("echo '<b>hi</b>' && make test").await;
    assert!(m.body.contains("🔒 Exec approval required"), "{}", m.body);
    assert!(
        m.body.contains("echo '<b>hi</b>' && make test"),
        "{}",
        m.body
    );
    assert!(m.body.contains(&format!("/approve {}", r.short_id)));
    assert!(
        m.body.contains("Or react: 👍 once | ✅ always | ❌ deny"),
        "{}",
        m.body
    );
    let html = m.html.as_deref().expect("an HTML body");
    assert!(html.contains("&lt;b&gt;hi&lt;/b&gt;"), "{html}");
    assert!(html.contains("<pre>"), "{html}");

    // A command with the id.
    let said = t
        .owner
        .say(&t.room, &format!("/approve {}", r.short_id))
        .await;
    let closed = t.closed(&m).await;
    let done = t.d.terminal(&r.id).await;
    assert_decided(
        &done,
        Status::Approved,
        Decision::AllowOnce,
        Via::MatrixCommand,
        &t.owner_by(),
    );
    assert!(
        closed.body.starts_with("✅ Approved once\nby matrix:@"),
        "{}",
        closed.body
    );
    assert!(
        closed.body.contains("via matrix-command"),
        "{}",
        closed.body
    );
    assert!(t.reply_to(&said).await.contains("approved"));

    // A reply to the message, without an id.
    let (r, m) = t.ask("make deploy").await;
    t.owner.reply(&t.room, &m.event_id, "/deny").await;
    assert!(t.closed(&m).await.body.starts_with("❌ Denied"));
    assert_decided(
        &t.d.terminal(&r.id).await,
        Status::Denied,
        Decision::Deny,
        Via::MatrixCommand,
        &t.owner_by(),
    );

    // Reactions: 👍 once, ✅ always (a rule is saved), ❌ deny.
    for (command, key, status, decision) in [
        ("make lint", "👍", Status::Approved, Decision::AllowOnce),
        ("make fmt", "✅", Status::Approved, Decision::AllowAlways),
        ("make clean", "❌", Status::Denied, Decision::Deny),
    ] {
        let (r, m) = t.ask(command).await;
        t.owner.react(&t.room, &m.event_id, key).await;
        t.closed(&m).await;
        assert_decided(
            &t.d.terminal(&r.id).await,
            status,
            decision,
            Via::MatrixReaction,
            &t.owner_by(),
        );
    }
    let rules = t.d.cli(&["allow", "list"]).await;
    assert!(stdout(&rules).contains("make fmt"), "{}", stdout(&rules));

    // `/approve ID always`, and the lists.
    let (r, m) = t.ask("make docs").await;
    t.owner
        .say(&t.room, &format!("/approve {} always", r.short_id))
        .await;
    assert!(t.closed(&m).await.body.starts_with("✅ Approved always"));
    // A time-boxed grant for this session only.
    let (status, body) = t
        .d
        .submit(json!({"agent": "claude", "session": "m-1", "command": "make lint", "wait": false}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let r: Record = serde_json::from_value(body).unwrap();
    let m = t.message_for(&r).await;
    assert!(
        m.body
            .contains("This session saves it for session m-1 only"),
        "{}",
        m.body
    );
    t.owner
        .say(&t.room, &format!("/approve {} session 2h", r.short_id))
        .await;
    assert!(
        t.closed(&m)
            .await
            .body
            .starts_with("✅ Approved for this session; rule saved until"),
    );
    assert_eq!(
        t.d.record(&r.id).await.decision,
        Some(Decision::AllowSession)
    );
    let (pending, _) = t.ask("make bench").await;
    let asked = t.owner.say(&t.room, "/pending").await;
    assert!(t.reply_to(&asked).await.contains(&pending.short_id));
    let asked = t.owner.say(&t.room, "/allowlist").await;
    assert!(t.reply_to(&asked).await.contains("make docs"));
    let asked = t.owner.say(&t.room, "/help").await;
    assert!(t.reply_to(&asked).await.contains("/approve"));
    // A mistake gets a reply and changes nothing.
    let asked = t.owner.say(&t.room, "/approve zzzz").await;
    assert!(t.reply_to(&asked).await.contains("not a request id"));
    assert_eq!(t.d.record(&pending.id).await.status, Status::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn in_an_encrypted_room_every_answer_path_resolves() {
    every_answer_path(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn in_a_plain_room_every_answer_path_resolves() {
    every_answer_path(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_strangers_command_reply_reaction_and_invite_change_nothing() {
    let t = Room::start(true, &[]).await;
    let hs = &Synapse::shared().url;
    let stranger_account = common::synapse::register(hs, &unique("stranger")).await;
    let stores = tempfile::tempdir().unwrap();
    let stranger = Owner::login(hs, &stranger_account, stores.path()).await;
    t.owner
        .invite(&t.room, &UserId::parse(&stranger_account.user_id).unwrap())
        .await;
    assert!(
        eventually(|| async { stranger.client.get_room(&t.room).is_some() }).await,
        "the stranger sees the invite"
    );
    stranger
        .client
        .join_room_by_id(&t.room)
        .await
        .expect("the stranger joins");

    let (r, m) = t.ask("rm -rf build").await;
    // The stranger reads the message (the bot shares its key with every device in the
    // room: being in the room is not being an owner).
    let seen = stranger
        .wait_for("the approval message", SEE, |s| s.event_id == m.event_id)
        .await;
    assert!(seen.body.contains(&r.short_id));
    stranger
        .say(&t.room, &format!("/approve {}", r.short_id))
        .await;
    stranger
        .reply(&t.room, &m.event_id, "/approve always")
        .await;
    stranger.react(&t.room, &m.event_id, "✅").await;
    // A stranger's invite to another room is not followed.
    let elsewhere = stranger
        .create_room(false, &[&UserId::parse(&t.bot.user_id).unwrap()])
        .await;
    // The owner's own message after them all: once the bot has answered it, it has
    // handled everything before it.
    let marker = t.owner.say(&t.room, "/pending").await;
    assert!(t.reply_to(&marker).await.contains(&r.short_id));
    let now = t.d.record(&r.id).await;
    assert_eq!(now.status, Status::Pending, "{now:?}");
    let bot = t.bot.user_id.clone();
    assert!(
        !t.owner
            .seen()
            .iter()
            .any(|s| s.sender == bot && s.replaces.as_ref() == Some(&m.event_id)),
        "the message was not edited"
    );
    let members = reqwest::Client::new()
        .get(format!(
            "{hs}/_matrix/client/v3/rooms/{}/joined_members",
            urlencode(elsewhere.as_str())
        ))
        .bearer_auth(&stranger_account.access_token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!members.contains(&t.bot.user_id), "{members}");

    // The owner still decides.
    t.owner.react(&t.room, &m.event_id, "❌").await;
    t.closed(&m).await;
    assert_eq!(t.d.terminal(&r.id).await.status, Status::Denied);
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reaction_taken_back_or_unknown_changes_nothing() {
    let t = Room::start(false, &[]).await;
    let (r, m) = t.ask("make lint").await;
    // An emoji outside the map is just a reaction.
    t.owner.react(&t.room, &m.event_id, "🎉").await;
    let marker = t.owner.say(&t.room, "/pending").await;
    assert!(t.reply_to(&marker).await.contains(&r.short_id));
    assert_eq!(t.d.record(&r.id).await.status, Status::Pending);

    let reaction = t.owner.react(&t.room, &m.event_id, "👍").await;
    t.closed(&m).await;
    assert_eq!(t.d.terminal(&r.id).await.status, Status::Approved);
    // Taking the 👍 back does not take the approval back, nor add anything.
    t.owner.redact(&t.room, &reaction).await;
    let marker = t.owner.say(&t.room, "/pending").await;
    t.reply_to(&marker).await;
    let after = t.d.record(&r.id).await;
    assert_eq!(after.status, Status::Approved);
    assert_eq!(after.decision, Some(Decision::AllowOnce));
    // And a second answer to a closed request is refused, not applied.
    t.owner.react(&t.room, &m.event_id, "❌").await;
    let bot = t.bot.user_id.clone();
    let refusal = t
        .owner
        .wait_for("a refusal", SEE, |s| {
            s.sender == bot && s.body.contains("not found or already resolved")
        })
        .await;
    assert!(refusal.notice);
    assert_eq!(t.d.record(&r.id).await.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_outcome_edits_the_message() {
    let mut t = Room::start(true, &[("EXECGATE_APPROVAL__TIMEOUT_SECS", "8")]).await;

    // Decided from the CLI (admin socket).
    let (r, m) = t.ask("make a").await;
    let (status, _) = t.d.decide(&r.id, "allow-once").await;
    assert!(status.is_success());
    let closed = t.closed(&m).await;
    assert!(closed.body.contains("via cli"), "{}", closed.body);

    // Answered on the daemon's console.
    let (r, m) = t.ask("make console").await;
    t.d.console_say(&format!("/approve {}", r.short_id)).await;
    let closed = t.closed(&m).await;
    assert!(closed.body.contains("via console"), "{}", closed.body);

    // Nobody answered in time.
    let (_, m) = t.ask("make b").await;
    let closed = t.closed(&m).await;
    assert!(
        closed
            .body
            .contains("Denied by the fallback policy on timeout")
            || closed.body.contains("Expired"),
        "{}",
        closed.body
    );

    // The agent stopped waiting.
    let body = json!({"agent": "claude", "command": "make c", "wait": true});
    let held = send_and_hold(&t.d.config().socket, &body).await;
    let r = t.d.pending_for("make c").await;
    let m = t.message_for(&r).await;
    drop(held);
    assert!(
        t.closed(&m)
            .await
            .body
            .contains("the agent stopped waiting")
    );

    // execgate shut down.
    let (_, m) = t.ask("make d").await;
    t.d.stop().await;
    assert!(t.closed(&m).await.body.contains("execgate shut down"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn both_chats_at_once_first_answer_wins_and_both_show_it() {
    use common::fake_telegram::{Actor, FakeTelegram, Reaction, User};
    const TOKEN: &str = "7000000001:AAtest-token-for-the-fake-bot-api";
    let fake = FakeTelegram::start(TOKEN).await;
    let owner = User::owner();
    let t = Room::start(
        false,
        &[
            ("EXECGATE_TELEGRAM__BOT_TOKEN", TOKEN),
            ("EXECGATE_TELEGRAM__OWNER_IDS", &owner.id.to_string()),
            ("EXECGATE_TELEGRAM__API_URL", &fake.url()),
        ],
    )
    .await;
    let chat = owner.id;
    let telegram_message = |short: String| {
        let fake = &fake;
        async move {
            fake.wait_until("the Telegram message", |f| {
                f.messages(chat)
                    .into_iter()
                    .find(|m| m.plain.contains(&format!("ID: {short}\n")))
            })
            .await
        }
    };

    // Answered in Matrix: Telegram's message shows it too.
    let (r, m) = t.ask("make one").await;
    let tm = telegram_message(r.short_id.clone()).await;
    t.owner.react(&t.room, &m.event_id, "👍").await;
    t.closed(&m).await;
    let edited = fake
        .wait_until("the Telegram edit", |f| {
            f.message(chat, tm.message_id)
                .filter(|m| !m.edits.is_empty())
        })
        .await;
    assert!(
        edited.plain.contains("via matrix-reaction"),
        "{}",
        edited.plain
    );

    // Answered in Telegram: Matrix's message shows it, and a late Matrix answer is refused.
    let (r, m) = t.ask("make two").await;
    let tm = telegram_message(r.short_id.clone()).await;
    fake.react(
        chat,
        Actor::User(owner.clone()),
        tm.message_id,
        vec![],
        vec![Reaction::Emoji("👎".into())],
    );
    let closed = t.closed(&m).await;
    assert!(
        closed.body.contains("via telegram-reaction"),
        "{}",
        closed.body
    );
    let late = t
        .owner
        .say(&t.room, &format!("/approve {}", r.short_id))
        .await;
    assert!(t.reply_to(&late).await.contains("already resolved"));
    assert_eq!(t.d.terminal(&r.id).await.status, Status::Denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_password_login_keeps_its_device_across_restarts_and_crashes() {
    let side = Side::make(&Synapse::shared().url, true).await;
    let env = side.env(Login::Password, &[]);
    let dir = tempfile::tempdir().unwrap();
    let store = db_path(dir.path()).parent().unwrap().join("matrix");
    let session = || -> serde_json::Value {
        let path = store.join("session.json");
        serde_json::from_slice(&std::fs::read(&path).expect("session.json")).unwrap()
    };

    let first = common::process::Process::start(dir.path(), &borrowed(&env)).await;
    let r = first.ask_no_wait("make one").await;
    let m = side.message_for_id(r["short_id"].as_str().unwrap()).await;
    let device = session()["device_id"].as_str().unwrap().to_string();
    // Kept private: the file holds the device's access token.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&store), 0o700);
    assert_eq!(mode(&store.join("session.json")), 0o600);
    // Wait for the daemon to have stored the message, then crash it.
    let db = db_path(dir.path());
    assert!(
        eventually(|| async {
            let db = db.clone();
            let id = r["id"].as_str().unwrap().to_string();
            tokio::task::spawn_blocking(move || {
                rusqlite::Connection::open(db)
                    .unwrap()
                    .query_row(
                        "SELECT count(*) FROM exec_approval_message WHERE request_id = ?1",
                        [id],
                        |row| row.get::<_, i64>(0),
                    )
                    .unwrap()
                    == 1
            })
            .await
            .unwrap()
        })
        .await
    );
    first.signal(libc::SIGKILL);
    first.wait().await;

    // The next run cancels what the crash left pending, and its message says so.
    let second = common::process::Process::start(dir.path(), &borrowed(&env)).await;
    let closed = side.closed(&m).await;
    assert!(
        closed.body.starts_with("🚫 Cancelled: execgate restarted"),
        "{}",
        closed.body
    );
    assert_eq!(session()["device_id"].as_str().unwrap(), device);
    // Same device, same keys: the owner still reads the encrypted room.
    let r = second.ask_no_wait("make two").await;
    let m = side.message_for_id(r["short_id"].as_str().unwrap()).await;
    side.owner.react(&side.room, &m.event_id, "👍").await;
    side.closed(&m).await;
    second.signal(libc::SIGTERM);
    let (status, stderr) = second.wait().await;
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains(&side.bot.password), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_homeserver_down_at_start_or_mid_run_delays_the_chat_and_approves_nothing() {
    let mut hs = Synapse::start().await;
    let side = Side::make(&hs.url, false).await;
    let env = side.env(Login::Token, &[("EXECGATE_APPROVAL__TIMEOUT_SECS", "6")]);
    hs.stop();

    // Down at start: the daemon starts, and a request nobody can see fails closed.
    let mut d = TestDaemon::start(&borrowed(&env)).await;
    let r = d.ask_no_wait("claude", "make down").await;
    let done = d.terminal(&r.id).await;
    assert_eq!(done.status, Status::Expired, "{done:?}");
    assert_eq!(done.via, Some(Via::Timeout));

    // Back: the bot connects by itself, joins, and the owner decides.
    hs.resume().await;
    side.bot_joined().await;
    let r = d.ask_no_wait("claude", "make up").await;
    let m = side.message_for(&r).await;
    side.owner.react(&side.room, &m.event_id, "👍").await;
    assert_eq!(d.terminal(&r.id).await.status, Status::Approved);
    side.closed(&m).await;

    // Down mid-run: the request still expires on time, and its message says so once
    // the homeserver is back.
    let r = d.ask_no_wait("claude", "make midway").await;
    let m = side.message_for(&r).await;
    hs.stop();
    let done = d.terminal(&r.id).await;
    assert_eq!(done.status, Status::Expired, "{done:?}");
    hs.resume().await;
    let closed = side.closed(&m).await;
    assert!(closed.body.starts_with("⌛ Expired"), "{}", closed.body);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rate_limited_bot_waits_as_asked_and_posts_everything_once() {
    let mut hs = Synapse::start().await;
    let side = Side::make(&hs.url, false).await;
    hs.stop();
    hs.limit_messages(1.0, 1);
    hs.resume().await;
    let d = TestDaemon::start(&borrowed(&side.env(Login::Token, &[]))).await;
    side.bot_joined().await;
    let asked: Vec<Record> = futures_join(&d, &["make r1", "make r2", "make r3", "make r4"]).await;
    for r in &asked {
        side.message_for(r).await;
    }
    // Every message once: the transaction id makes a retried send land once.
    let bot = side.bot.user_id.clone();
    for r in &asked {
        let needle = format!("ID: {}\n", r.short_id);
        let copies = side
            .owner
            .seen()
            .iter()
            .filter(|s| s.sender == bot && s.replaces.is_none() && s.body.contains(&needle))
            .count();
        assert_eq!(copies, 1, "{}", r.short_id);
    }
    let read = |name: &str| std::fs::read_to_string(hs.dir().join(name)).unwrap_or_default();
    let log = format!("{}{}", read("stderr.log"), read("homeserver.log"));
    assert!(
        log.contains(" 429 ") || log.contains("M_LIMIT_EXCEEDED") || log.contains("Ratelimit"),
        "the homeserver never limited the bot; the test proves nothing"
    );
}

/// Asks every command at once, without waiting for answers.
async fn futures_join(d: &TestDaemon, commands: &[&str]) -> Vec<Record> {
    let mut asked = Vec::new();
    for c in commands {
        asked.push(d.ask_no_wait("claude", c).await);
    }
    asked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_revoked_token_is_said_once_and_fails_closed() {
    let side = Side::make(&Synapse::shared().url, false).await;
    let env = side.env(Login::Token, &[("EXECGATE_APPROVAL__TIMEOUT_SECS", "3")]);
    let dir = tempfile::tempdir().unwrap();
    let p = common::process::Process::start(dir.path(), &borrowed(&env)).await;
    side.bot_joined().await;
    // The owner (or an admin) logs the bot's device out.
    let logout = reqwest::Client::new()
        .post(format!("{}/_matrix/client/v3/logout", side.homeserver))
        .bearer_auth(&side.bot.access_token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert!(logout.status().is_success());
    let r = p.ask_no_wait("make revoked").await;
    let client = execgate::client::Client::new(config_for(&p.env).socket);
    let path = format!("/v1/requests/{}", r["id"].as_str().unwrap());
    let mut last = json!(null);
    for _ in 0..100 {
        let (_, now) = client.call(hyper::Method::GET, &path, None).await.unwrap();
        last = now;
        if last["status"] != "pending" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last["status"], "expired", "{last}");
    // The daemon still serves; a few more seconds show there is no login loop.
    tokio::time::sleep(Duration::from_secs(3)).await;
    p.signal(libc::SIGTERM);
    let (status, stderr) = p.wait().await;
    assert!(status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("matrix.access_token was rejected").count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains(&side.bot.access_token), "{stderr}");
}

/// The agent, on its own uid, writes the command the owner reads: it must not be able
/// to answer through the bot's own message, ping the room, break out of the command's
/// block, or reach the bot's device and keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hostile_agent_can_neither_answer_nor_ping_nor_read_the_bots_keys() {
    if !uid::can_switch_uid("a_hostile_agent_can_neither_answer_nor_ping_nor_read_the_bots_keys") {
        return;
    }
    let t = Room::start(true, &[]).await;
    let socket = t.d.config().socket.clone();
    uid::let_agent_in(t.d.dir.path(), &socket);
    // The short id is not known before asking: the agent names every id it can guess
    // in one go, with a reply fallback and markup around them.
    let guesses: Vec<String> = (0..64)
        .map(|i| format!("/approve {i:04x} always"))
        .collect();
    let command = format!(
        "echo '</pre><b>@room</b> <a href=\"https://evil\">ok</a>'\n\n{}",
        guesses.join("\n")
    );
    let asked = command.clone();
    let (status, record) = tokio::task::spawn_blocking(move || {
        uid::as_agent(move || async move {
            let body = json!({"agent": "claude", "command": asked, "wait": false});
            execgate::client::Client::new(socket)
                .call(hyper::Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
        })
    })
    .await
    .unwrap();
    assert_eq!(status, hyper::StatusCode::ACCEPTED, "{record}");
    assert_eq!(record["peer_uid"], json!(uid::AGENT_UID));
    let short_id = record["short_id"].as_str().unwrap().to_string();
    let m = t.message_for_id(&short_id).await;
    let html = m.html.as_deref().unwrap_or_default();
    assert!(
        !html.contains("<b>@room</b>") && !html.contains("<a href"),
        "{html}"
    );
    assert!(html.contains("&lt;/pre&gt;&lt;b&gt;@room"), "{html}");

    // The bot's message says "/approve ID" with the very id; the bot does not answer
    // itself. The owner's marker proves everything before it was handled.
    let marker = t.owner.say(&t.room, "/pending").await;
    assert!(t.reply_to(&marker).await.contains(&short_id));
    let id = record["id"].as_str().unwrap();
    assert_eq!(t.d.record(id).await.status, Status::Pending);

    // The bot's device and keys are out of the agent's reach.
    let store = db_path(t.d.dir.path()).parent().unwrap().join("matrix");
    for path in [store.join("session.json"), store.join("sdk")] {
        let out = uid::agent_command(std::path::Path::new("/bin/ls"), &[])
            .arg("-l")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "the agent could read {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stdout)
        );
    }
    t.owner.react(&t.room, &m.event_id, "❌").await;
    assert_eq!(t.d.terminal(id).await.status, Status::Denied);
}

/// A long-lived encrypted room makes the bot start new group sessions (every 100
/// messages by default; every 3 here). Posts and edits go out at the same time, and the
/// SDK panics when one send uses up a session another is about to encrypt with: every
/// message must still be posted and edited.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn messages_sent_at_once_survive_group_session_rotation() {
    let hs = &Synapse::shared().url;
    let mut side = Side::make(hs, false).await;
    let bot_id = UserId::parse(&side.bot.user_id).unwrap();
    side.room = side.owner.create_rotating_room(3, &[&bot_id]).await;
    let d = TestDaemon::start(&borrowed(&side.env(Login::Token, &[]))).await;
    let mut asked = Vec::new();
    for i in 0..8 {
        asked.push(d.ask_no_wait("claude", &format!("make rotate-{i}")).await);
    }
    let mut messages = Vec::new();
    for (i, r) in asked.iter().enumerate() {
        messages.push(side.message_for(r).await);
        // Decided while the next posts go out, so edits and posts overlap.
        if i % 2 == 1 {
            for r in &asked[i - 1..=i] {
                d.decide(&r.id, "deny").await;
            }
        }
    }
    for m in &messages {
        assert!(side.closed(m).await.body.starts_with("❌ Denied"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_password_bot_whose_token_is_revoked_logs_in_again_as_a_new_device() {
    let side = Side::make(&Synapse::shared().url, false).await;
    let d = TestDaemon::start(&borrowed(&side.env(Login::Password, &[]))).await;
    side.bot_joined().await;
    let store = db_path(d.dir.path()).parent().unwrap().join("matrix");
    let session = || -> serde_json::Value {
        std::fs::read(store.join("session.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(json!(null))
    };
    let first = session();
    let device = first["device_id"].as_str().unwrap().to_string();
    // The device is logged out behind execgate's back.
    let logout = reqwest::Client::new()
        .post(format!("{}/_matrix/client/v3/logout", side.homeserver))
        .bearer_auth(first["access_token"].as_str().unwrap())
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert!(logout.status().is_success());
    let mut relogged = false;
    for _ in 0..300 {
        let now = session();
        if now["device_id"].as_str().is_some_and(|d| d != device) {
            relogged = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(relogged, "no new login within 30 s: {}", session());
    // The new device posts, and the owner decides as before.
    let r = d.ask_no_wait("claude", "make relogged").await;
    let m = side.message_for(&r).await;
    side.owner.react(&side.room, &m.event_id, "👍").await;
    assert_eq!(d.terminal(&r.id).await.status, Status::Approved);
}
