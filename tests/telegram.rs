//! The Telegram transport end to end: the real daemon, its sockets, and teloxide talking
//! HTTP to a fake Bot API that behaves as Telegram does (`common::fake_telegram`).

use execgate_testkit as common;

use std::time::Duration;

use common::fake_telegram::*;
use common::process::Process;
use common::*;
use execgate::model::{Decision, Record, Status, Via};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

const TOKEN: &str = "7000000001:AAtest-token-for-the-fake-bot-api";
const BOT: &str = "execgate_test_bot";

/// A daemon whose Telegram transport talks to a fake Bot API.
struct Chat {
    fake: FakeTelegram,
    d: TestDaemon,
    /// The configured chat: the owner's private chat unless a test picks a group.
    chat: i64,
}

fn owner() -> User {
    User::owner()
}

fn stranger() -> User {
    User::stranger()
}

/// The environment that points a daemon at `fake`, with the owner as the only owner.
fn telegram_env(fake: &FakeTelegram, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = vec![
        (
            "EXECGATE_TELEGRAM__BOT_TOKEN".to_string(),
            TOKEN.to_string(),
        ),
        (
            "EXECGATE_TELEGRAM__OWNER_IDS".to_string(),
            owner().id.to_string(),
        ),
        ("EXECGATE_TELEGRAM__API_URL".to_string(), fake.url()),
    ];
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    env
}

impl Chat {
    async fn start(extra: &[(&str, &str)]) -> Chat {
        let fake = FakeTelegram::start(TOKEN).await;
        Self::start_with(fake, extra).await
    }

    async fn start_with(fake: FakeTelegram, extra: &[(&str, &str)]) -> Chat {
        let env = telegram_env(&fake, extra);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let d = TestDaemon::start(&env).await;
        let chat = d.config().telegram.chat().unwrap();
        Chat { fake, d, chat }
    }

    /// Submits `command` without waiting and returns it with its approval message.
    async fn ask(&self, command: &str) -> (Record, SentMessage) {
        let r = self.d.ask_no_wait("claude", command).await;
        let m = self.message_for(&r).await;
        (r, m)
    }

    /// Waits for the approval message of `r`, and for the daemon to have stored which
    /// message it is (the fake sees the message a moment before the daemon hears back;
    /// no human is that fast, a test is).
    async fn message_for(&self, r: &Record) -> SentMessage {
        let needle = format!("ID: {}\n", r.short_id);
        let m = self
            .fake
            .wait_until(&format!("the approval message of {}", r.short_id), |f| {
                f.messages(self.chat)
                    .into_iter()
                    .find(|m| m.plain.contains(&needle) && m.edits.is_empty())
            })
            .await;
        for _ in 0..500 {
            if message_external_id(&self.d, &r.id).await.is_some() {
                return m;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the message id of {} was never stored", r.short_id);
    }

    /// The message that first shows `r`, alone or in a digest, once the bot has sent it.
    async fn shown(&self, r: &Record) -> SentMessage {
        let alone = format!("ID: {}\n", r.short_id);
        let in_digest = format!("🔒 {} · ", r.short_id);
        self.fake
            .wait_until(&format!("a message showing {}", r.short_id), |f| {
                f.messages(self.chat)
                    .into_iter()
                    .find(|m| m.plain.contains(&alone) || m.plain.contains(&in_digest))
            })
            .await
    }

    /// The approval message of `r`, closed or not, once the bot has sent it.
    async fn message_of(&self, r: &Record) -> SentMessage {
        let needle = format!("ID: {}\n", r.short_id);
        self.fake
            .wait_until(&format!("the message of {}", r.short_id), |f| {
                f.messages(self.chat)
                    .into_iter()
                    .find(|m| m.plain.contains(&needle))
            })
            .await
    }

    /// Waits until message `m` has been edited, and returns it as it is then.
    async fn closed(&self, m: &SentMessage) -> SentMessage {
        self.fake
            .wait_until(&format!("message {} edited", m.message_id), |f| {
                f.message(self.chat, m.message_id)
                    .filter(|now| !now.edits.is_empty())
            })
            .await
    }

    /// Waits for the bot's reply to message `to`, and returns its text.
    async fn reply_to(&self, to: i64) -> String {
        self.fake
            .wait_until(&format!("a reply to message {to}"), |f| {
                f.messages(self.chat)
                    .into_iter()
                    .find(|m| m.reply_to == Some(to))
                    .map(|m| m.plain)
            })
            .await
    }

    /// Every reply the bot sent to message `to` so far.
    fn replies_to(&self, to: i64) -> Vec<String> {
        self.fake
            .messages(self.chat)
            .into_iter()
            .filter(|m| m.reply_to == Some(to))
            .map(|m| m.plain)
            .collect()
    }

    /// The owner says `text` in the configured chat; returns the message id.
    fn owner_says(&self, text: &str) -> i64 {
        self.fake.send_text(self.chat, &owner(), text).1
    }

    /// Lets the daemon read every update queued so far, then a little more: the way to
    /// show that something did *not* happen.
    async fn settle(&self) {
        let queued = self.fake.last_update_id();
        self.fake
            .wait_until("the daemon to read every update", |f| {
                (f.acked_offset() > queued).then_some(())
            })
            .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    async fn still_pending(&self, r: &Record) {
        self.settle().await;
        assert_eq!(self.d.record(&r.id).await.status, Status::Pending);
    }

    async fn rules(&self) -> Vec<Value> {
        let (_, rules) = self
            .d
            .admin()
            .call(Method::GET, "/v1/allowlist", None)
            .await
            .unwrap();
        rules.as_array().unwrap().clone()
    }
}

fn data(decision: Decision, r: &Record) -> String {
    format!("{decision}:{}", r.id)
}

async fn message_external_id(d: &TestDaemon, id: &str) -> Option<String> {
    let conn = db::open(&db_path(d.dir.path()));
    conn.query_row(
        "SELECT message_external_id FROM exec_approval WHERE id = ?",
        [id],
        |row| row.get(0),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_approves_by_command_and_the_message_says_so() {
    let c = Chat::start(&[]).await;
    let waiting = c.d.ask_waiting("claude", "make deploy");
    let r = c.d.pending_for("make deploy").await;
    let m = c.message_for(&r).await;

    for line in [
        "🔒 Exec approval required".to_string(),
        format!("ID: {}", r.short_id),
        "Agent: claude".into(),
        "Command:\nmake deploy".into(),
        "Risk: needs-review".into(),
        format!(
            "Reply: /approve {0} · /approve {0} always · /deny {0}",
            r.short_id
        ),
        "Or react: 👍 once | ✅ 👌 always | ❌ 👎 deny".into(),
    ] {
        assert!(m.plain.contains(&line), "{line:?} not in\n{}", m.plain);
    }
    assert!(m.plain.contains("Expires in: 1"), "{}", m.plain);
    assert!(m.html.contains("<pre>make deploy</pre>"), "{}", m.html);
    let buttons: Vec<String> = m.buttons().into_iter().map(|(t, _)| t).collect();
    assert_eq!(buttons, ["👍 Allow once", "✅ Always", "❌ Deny"]);
    assert_eq!(
        message_external_id(&c.d, &r.id).await,
        Some(format!("{}:{}", c.chat, m.message_id))
    );

    // Ids are matched whatever their case.
    let said = c.owner_says(&format!("/approve {}", r.short_id.to_uppercase()));
    let done = waiting.await.unwrap();
    assert_eq!(
        (done.status, done.decision, done.via),
        (
            Status::Approved,
            Some(Decision::AllowOnce),
            Some(Via::TelegramCommand)
        )
    );
    assert_eq!(
        done.decided_by.as_deref(),
        Some("telegram:111111111 (@olivia)")
    );
    assert_eq!(
        c.reply_to(said).await,
        format!("{} approved (allow-once)", r.short_id)
    );
    let closed = c.closed(&m).await;
    assert!(
        closed.plain.starts_with(
            "✅ Approved once\nby telegram:111111111 (@olivia) via telegram-command at "
        ),
        "{}",
        closed.plain
    );
    assert!(closed.plain.contains("Command:\nmake deploy"));
    assert!(closed.buttons().is_empty(), "the keyboard is removed");

    let names: Vec<String> = c.fake.commands().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["approve", "deny", "pending", "allowlist", "help"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_forms_once_always_deny_and_reply() {
    let c = Chat::start(&[]).await;
    let (a, ma) = c.ask("make a").await;
    let (b, mb) = c.ask("make b").await;
    let (e, me) = c.ask("make e").await;
    let (f, mf) = c.ask("make f").await;
    let (g, mg) = c.ask("make g").await;

    c.owner_says(&format!("/approve {} always", a.short_id));
    c.owner_says(&format!("/deny {}", b.short_id));
    c.owner_says(&format!("/approve {} deny", e.short_id));
    c.fake
        .reply_to(c.chat, &owner(), mf.message_id, "/approve always");
    c.fake.reply_to(c.chat, &owner(), mg.message_id, "/deny");

    let want = [
        (&a, &ma, Status::Approved, Decision::AllowAlways),
        (&b, &mb, Status::Denied, Decision::Deny),
        (&e, &me, Status::Denied, Decision::Deny),
        (&f, &mf, Status::Approved, Decision::AllowAlways),
        (&g, &mg, Status::Denied, Decision::Deny),
    ];
    for (r, m, status, decision) in want {
        let done = c.d.terminal(&r.id).await;
        assert_eq!(
            (done.status, done.decision, done.via),
            (status, Some(decision), Some(Via::TelegramCommand)),
            "{}",
            r.command.display()
        );
        c.closed(m).await;
    }
    let patterns: Vec<(Value, Value, Value)> = c
        .rules()
        .await
        .into_iter()
        .map(|r| (r["agent"].clone(), r["kind"].clone(), r["pattern"].clone()))
        .collect();
    assert_eq!(
        patterns,
        [
            (json!("claude"), json!("exact"), json!("make a")),
            (json!("claude"), json!("exact"), json!("make f")),
        ],
        "always stores the exact command for this agent"
    );
    // And the rule works: the same command is now approved at once.
    assert_eq!(c.d.ask("claude", "make a").await.via, Some(Via::Allowlist));

    // A reply with no request to hang on to, and a bare command.
    let help = c.fake.send_text(c.chat, &owner(), "/help").1;
    let help_reply = c.reply_to(help).await;
    assert!(help_reply.contains("/approve ID always"), "{help_reply}");
    assert!(help_reply.contains("👌 allow-always"), "{help_reply}");
    let (_, to_help) = c.fake.reply_to(c.chat, &owner(), help, "/approve");
    assert!(
        c.reply_to(to_help)
            .await
            .contains("not an approval request")
    );
    let bare = c.owner_says("/approve");
    assert!(c.reply_to(bare).await.contains("Which request?"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_approves_by_each_reaction_including_custom_emoji() {
    const CHECK: &str = "5368324170671202286";
    const CROSS: &str = "5210952531676504517";
    let c = Chat::start(&[]).await;
    c.fake.register_custom_emoji(CHECK, "✅");
    c.fake.register_custom_emoji(CROSS, "❌");
    let mut asked = Vec::new();
    for name in ["thumb", "ok", "down", "check", "cross"] {
        asked.push(c.ask(&format!("make {name}")).await);
    }
    let reactions = [
        Reaction::Emoji("👍".into()),
        Reaction::Emoji("👌".into()),
        Reaction::Emoji("👎".into()),
        Reaction::Custom(CHECK.into()),
        Reaction::Custom(CROSS.into()),
    ];
    let want = [
        (Status::Approved, Decision::AllowOnce),
        (Status::Approved, Decision::AllowAlways),
        (Status::Denied, Decision::Deny),
        (Status::Approved, Decision::AllowAlways),
        (Status::Denied, Decision::Deny),
    ];
    for ((r, m), reaction) in asked.iter().zip(reactions) {
        c.fake.react(
            c.chat,
            Actor::User(owner()),
            m.message_id,
            vec![],
            vec![reaction],
        );
        c.d.terminal(&r.id).await;
    }
    for ((r, m), (status, decision)) in asked.iter().zip(want) {
        let done = c.d.record(&r.id).await;
        assert_eq!(
            (done.status, done.decision, done.via),
            (status, Some(decision), Some(Via::TelegramReaction)),
            "{}",
            r.command.display()
        );
        let closed = c.closed(m).await;
        assert!(
            closed.plain.contains("via telegram-reaction"),
            "{}",
            closed.plain
        );
        assert!(
            c.replies_to(m.message_id).is_empty(),
            "success needs no reply"
        );
    }
    assert_eq!(c.rules().await.len(), 2);

    // The custom emoji is looked up once: reacting with it again (on a request that is
    // over) uses the cache, and is told the request is resolved.
    let (r, m) = &asked[3];
    c.fake.react(
        c.chat,
        Actor::User(owner()),
        m.message_id,
        vec![],
        vec![Reaction::Emoji("🔥".into()), Reaction::Custom(CHECK.into())],
    );
    assert_eq!(
        c.reply_to(m.message_id).await,
        format!("approval {} not found or already resolved", r.short_id)
    );
    assert_eq!(
        c.fake.custom_emoji_lookups(),
        2,
        "one lookup per custom emoji"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reactions_that_mean_nothing_change_nothing() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make test").await;
    let thumb = || Reaction::Emoji("👍".into());
    // An unmapped emoji; then 👍 taken back (old has it, new does not); then 👍 kept
    // while 🔥 is added: only what is added counts.
    c.fake.react(
        c.chat,
        Actor::User(owner()),
        m.message_id,
        vec![],
        vec![Reaction::Emoji("🔥".into())],
    );
    c.fake.react(
        c.chat,
        Actor::User(owner()),
        m.message_id,
        vec![thumb()],
        vec![],
    );
    c.fake.react(
        c.chat,
        Actor::User(owner()),
        m.message_id,
        vec![thumb()],
        vec![thumb(), Reaction::Emoji("🔥".into())],
    );
    c.still_pending(&r).await;
    // Two reactions at once that disagree: nothing, and the owner is told.
    c.fake.react(
        c.chat,
        Actor::User(owner()),
        m.message_id,
        vec![],
        vec![thumb(), Reaction::Emoji("👎".into())],
    );
    assert!(c.reply_to(m.message_id).await.contains("disagree"));
    c.still_pending(&r).await;
    // A reaction on a message that is not a request is just a reaction.
    let other = c.owner_says("hello");
    c.fake
        .react(c.chat, Actor::User(owner()), other, vec![], vec![thumb()]);
    c.still_pending(&r).await;
    assert!(c.replies_to(other).iter().all(|t| !t.contains("approv")));

    c.fake.react(
        c.chat,
        Actor::User(owner()),
        m.message_id,
        vec![],
        vec![Reaction::Emoji("👎".into())],
    );
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_answers_by_each_button_and_every_press_is_answered() {
    let c = Chat::start(&[]).await;
    let mut asked = Vec::new();
    for name in ["once", "always", "deny"] {
        asked.push(c.ask(&format!("make {name}")).await);
    }
    let decisions = [Decision::AllowOnce, Decision::AllowAlways, Decision::Deny];
    for ((r, m), decision) in asked.iter().zip(decisions) {
        let (_, query) = c
            .fake
            .press_button(c.chat, &owner(), m.message_id, &data(decision, r));
        let done = c.d.terminal(&r.id).await;
        assert_eq!(
            (done.decision, done.via),
            (Some(decision), Some(Via::TelegramButton))
        );
        let answer = c
            .fake
            .wait_until("the button press answered", |f| f.callback_answer(&query))
            .await;
        assert!(
            answer.as_deref().unwrap_or("").contains(&r.short_id),
            "{answer:?}"
        );
        assert!(c.closed(m).await.buttons().is_empty());
    }
    // A second press on a closed request is answered too, and changes nothing.
    let (r, m) = &asked[0];
    let (_, query) = c
        .fake
        .press_button(c.chat, &owner(), m.message_id, &data(Decision::Deny, r));
    let answer = c
        .fake
        .wait_until("the late press answered", |f| f.callback_answer(&query))
        .await;
    assert_eq!(
        answer.as_deref(),
        Some(format!("approval {} not found or already resolved", r.short_id).as_str())
    );
    assert_eq!(c.d.record(&r.id).await.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_owners_in_the_configured_chat_resolve_anything() {
    const GROUP: i64 = -100555;
    let fake = FakeTelegram::start(TOKEN).await;
    fake.add_group(GROUP, "ops");
    let c = Chat::start_with(fake, &[("EXECGATE_TELEGRAM__CHAT_ID", "-100555")]).await;
    assert_eq!(c.chat, GROUP);
    let (r, m) = c.ask("make deploy").await;
    let bot = User {
        is_bot: true,
        ..User::new(333333333, "Helper", Some("helper_bot"))
    };

    // A stranger's command, reply, reaction and button; a bot's command; an anonymous
    // admin's reaction; the owner in another chat; the owner editing a message into a
    // command.
    c.fake
        .send_text(GROUP, &stranger(), &format!("/approve {}", r.short_id));
    c.fake
        .reply_to(GROUP, &stranger(), m.message_id, "/approve always");
    c.fake.react(
        GROUP,
        Actor::User(stranger()),
        m.message_id,
        vec![],
        vec![Reaction::Emoji("👍".into())],
    );
    let (_, query) = c.fake.press_button(
        GROUP,
        &stranger(),
        m.message_id,
        &data(Decision::AllowOnce, &r),
    );
    c.fake
        .send_text(GROUP, &bot, &format!("/approve {}", r.short_id));
    c.fake.react(
        GROUP,
        Actor::Anonymous {
            chat_id: GROUP,
            title: "ops".into(),
        },
        m.message_id,
        vec![],
        vec![Reaction::Emoji("👍".into())],
    );
    c.fake
        .send_text(owner().id, &owner(), &format!("/approve {}", r.short_id));
    let (_, said) = c.fake.send_text(GROUP, &owner(), "hello");
    c.fake
        .edit_text(GROUP, &owner(), said, &format!("/approve {}", r.short_id));
    // A command for another bot in the same group.
    c.fake.send_text(
        GROUP,
        &owner(),
        &format!("/approve@some_other_bot {}", r.short_id),
    );

    c.still_pending(&r).await;
    let answer = c
        .fake
        .wait_until("the stranger's press answered", |f| {
            f.callback_answer(&query)
        })
        .await;
    assert_eq!(
        answer.as_deref(),
        Some("Only the owner can answer requests.")
    );
    assert!(
        c.fake.messages(owner().id).is_empty(),
        "nothing is said in a chat that is not configured"
    );
    assert!(
        c.fake.messages(GROUP).iter().all(|m| m.reply_to.is_none()),
        "strangers get no replies"
    );

    // The owner, in the group, naming this bot: that one counts.
    c.fake
        .send_text(GROUP, &owner(), &format!("/approve@{BOT} {}", r.short_id));
    let done = c.d.terminal(&r.id).await;
    assert_eq!(done.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_button_naming_another_request_changes_nothing() {
    let c = Chat::start(&[]).await;
    let (a, ma) = c.ask("make a").await;
    let (b, _) = c.ask("make b").await;
    // Clients choose the data they send: the data names b, the message is a's.
    let (_, query) = c.fake.press_button(
        c.chat,
        &owner(),
        ma.message_id,
        &data(Decision::AllowOnce, &b),
    );
    let answer = c
        .fake
        .wait_until("the forged press answered", |f| f.callback_answer(&query))
        .await;
    assert!(answer.unwrap_or_default().contains("does not belong"));
    let (_, query) = c
        .fake
        .press_button(c.chat, &owner(), ma.message_id, "sudo:rm -rf /");
    c.fake
        .wait_until("the junk press answered", |f| f.callback_answer(&query))
        .await;
    c.still_pending(&a).await;
    c.still_pending(&b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn this_session_button_saves_a_rule_for_the_session_only() {
    let c = Chat::start(&[("EXECGATE_APPROVAL__TIMEOUT_SECS", "300")]).await;
    let d = &c.d;
    let ask = |session: &'static str| async move {
        let (status, body) = d
            .submit(json!({"agent": "claude", "session": session, "command": "make deploy", "wait": false}))
            .await;
        assert!(status.is_success(), "{body}");
        serde_json::from_value::<Record>(body).unwrap()
    };
    let r = ask("sess-7").await;
    let m = c.message_for(&r).await;
    let buttons: Vec<String> = m.buttons().into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        buttons,
        ["👍 Allow once", "🕘 This session", "✅ Always", "❌ Deny"]
    );
    assert!(
        m.plain.contains(&format!(
            "Always saves an exact rule for agent claude: make deploy; This session saves it for session sess-7 only. Add a duration for a rule that expires: /approve {0} 30m, /approve {0} always 7d, /approve {0} session 2h.",
            r.short_id
        )),
        "{}",
        m.plain
    );
    c.fake.press_button(
        c.chat,
        &owner(),
        m.message_id,
        &data(Decision::AllowSession, &r),
    );
    let done = c.d.terminal(&r.id).await;
    assert_eq!(
        (done.decision, done.via),
        (Some(Decision::AllowSession), Some(Via::TelegramButton))
    );
    let closed = c.closed(&m).await;
    assert!(
        closed
            .plain
            .starts_with("✅ Approved for this session (rule saved for it)"),
        "{}",
        closed.plain
    );
    // The same command in that session passes; in another it is asked again, and
    // a time-boxed grant typed in the chat says until when.
    assert_eq!(ask("sess-7").await.via, Some(Via::Allowlist));
    let other = ask("sess-8").await;
    assert_eq!(other.status, Status::Pending);
    c.message_for(&other).await;
    let said = c.owner_says(&format!("/approve {} session 2h", other.short_id));
    let reply = c.reply_to(said).await;
    assert!(
        reply.contains("approved (allow-session, rule until"),
        "{reply}"
    );
    let rules = c.rules().await;
    assert_eq!(rules.len(), 2, "{rules:?}");
    assert!(rules[1]["expires_at"].is_string(), "{rules:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_is_not_offered_or_accepted_for_dangerous_commands() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("rm -rf build").await;
    assert_eq!(r.risk, execgate::model::Risk::Dangerous);
    let buttons: Vec<String> = m.buttons().into_iter().map(|(t, _)| t).collect();
    assert_eq!(buttons, ["👍 Allow once", "❌ Deny"]);
    assert!(
        m.plain
            .contains("\"Always\" and \"This session\" are not offered: the command is dangerous"),
        "{}",
        m.plain
    );

    let said = c.owner_says(&format!("/approve {} always", r.short_id));
    let reply = c.reply_to(said).await;
    assert!(reply.contains("\"always\" refused"), "{reply}");
    assert!(reply.contains("still pending"), "{reply}");
    // A hand-made Always button and an ✅-meaning reaction fare no better.
    let (_, query) = c.fake.press_button(
        c.chat,
        &owner(),
        m.message_id,
        &data(Decision::AllowAlways, &r),
    );
    let answer = c
        .fake
        .wait_until("the press answered", |f| f.callback_answer(&query))
        .await;
    assert!(answer.unwrap_or_default().contains("refused"));
    c.fake.react(
        c.chat,
        Actor::User(owner()),
        m.message_id,
        vec![],
        vec![Reaction::Emoji("👌".into())],
    );
    assert!(c.reply_to(m.message_id).await.contains("refused"));
    c.still_pending(&r).await;
    assert!(c.rules().await.is_empty());

    c.owner_says(&format!("/deny {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_resolved_ids_get_the_short_reply() {
    let c = Chat::start(&[]).await;
    let (r, _) = c.ask("make test").await;
    let unknown = if r.short_id == "ffff" { "fffe" } else { "ffff" };
    let said = c.owner_says(&format!("/approve {unknown}"));
    assert_eq!(
        c.reply_to(said).await,
        format!("approval {unknown} not found or already resolved")
    );
    let said = c.owner_says("/approve zz");
    assert!(c.reply_to(said).await.contains("is not a request id"));

    let said = c.owner_says(&format!("/deny {}", r.short_id));
    c.reply_to(said).await;
    let said = c.owner_says(&format!("/approve {}", r.short_id));
    assert_eq!(
        c.reply_to(said).await,
        format!("approval {} not found or already resolved", r.short_id)
    );
    assert_eq!(c.d.record(&r.id).await.status, Status::Denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_update_twice_resolves_once() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make test").await;
    // One update delivered twice, with the same update_id.
    let update =
        c.fake
            .make_text_update(c.chat, &owner(), &format!("/approve {} always", r.short_id));
    c.fake.push_raw(update.clone());
    c.fake.push_raw(update);
    c.d.terminal(&r.id).await;
    c.settle().await;
    let approved: Vec<String> = c
        .fake
        .messages(c.chat)
        .into_iter()
        .filter(|m| m.reply_to.is_some())
        .map(|m| m.plain)
        .collect();
    assert_eq!(
        approved,
        [format!("{} approved (allow-always)", r.short_id)]
    );
    assert_eq!(c.rules().await.len(), 1);
    c.closed(&m).await;

    // The same command sent again is a new update: it finds the request resolved.
    let said = c.owner_says(&format!("/approve {}", r.short_id));
    assert!(c.reply_to(said).await.contains("already resolved"));
    let done = c.d.record(&r.id).await;
    assert_eq!(done.decision, Some(Decision::AllowAlways));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_and_allowlist_answer_in_chat() {
    let c = Chat::start(&[]).await;
    let (r, _) = c.ask("make check").await;
    let said = c.owner_says("/pending");
    let listed = c.reply_to(said).await;
    assert!(
        listed.contains(&r.short_id) && listed.contains("make check"),
        "{listed}"
    );
    let said = c.owner_says("/allowlist");
    assert_eq!(c.reply_to(said).await, "The allowlist is empty.");
    c.owner_says(&format!("/approve {} always", r.short_id));
    c.d.terminal(&r.id).await;
    let said = c.owner_says("/allowlist");
    assert!(c.reply_to(said).await.contains("make check"));
    let said = c.owner_says("/pending");
    assert_eq!(c.reply_to(said).await, "No requests are pending.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_outcome_is_shown_whoever_ends_the_request() {
    let mut c = Chat::start(&[]).await;
    // The CLI (admin socket).
    let (r, m) = c.ask("make by-cli").await;
    let (status, _) = c.d.decide(&r.id, "deny").await;
    assert_eq!(status, StatusCode::OK);
    let closed = c.closed(&m).await;
    assert!(closed.plain.starts_with("❌ Denied\n"), "{}", closed.plain);
    assert!(closed.plain.contains("via cli"), "{}", closed.plain);
    // The console.
    let (r, m) = c.ask("make by-console").await;
    c.d.console_say(&format!("/approve {}", r.short_id)).await;
    c.d.terminal(&r.id).await;
    assert!(c.closed(&m).await.plain.contains("via console"));
    // The agent hanging up.
    let socket = c.d.config().socket.clone();
    let held = send_and_hold(
        &socket,
        &json!({"agent": "claude", "command": "make hang-up"}),
    )
    .await;
    let r = c.d.pending_for("make hang-up").await;
    let m = c.message_for(&r).await;
    drop(held);
    let closed = c.closed(&m).await;
    assert!(
        closed
            .plain
            .starts_with("🚫 Cancelled: the agent stopped waiting"),
        "{}",
        closed.plain
    );
    // Shutdown.
    let (r, m) = c.ask("make at-shutdown").await;
    c.d.stop().await;
    let closed = c
        .fake
        .message(c.chat, m.message_id)
        .expect("the message is still there");
    assert!(
        closed.plain.starts_with("🚫 Cancelled: execgate shut down"),
        "the edit lands before shutdown returns: {}",
        closed.plain
    );
    assert!(closed.buttons().is_empty());
    let _ = r;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_is_shown_too() {
    let c = Chat::start(&[("EXECGATE_APPROVAL__TIMEOUT_SECS", "1")]).await;
    let (r, m) = c.ask("make slow").await;
    let closed = c.closed(&m).await;
    assert!(
        closed
            .plain
            .starts_with("⌛ Expired: nobody answered in time\nvia timeout"),
        "{}",
        closed.plain
    );
    assert_eq!(c.d.record(&r.id).await.status, Status::Expired);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_and_a_huge_command_render_safely() {
    let c = Chat::start(&[]).await;
    let tricky = "echo '<b>x</b> &amp; <a href=\"http://e.vil\">click</a>' > /tmp/<y>";
    let (_, m) = c.ask(tricky).await;
    assert!(m.plain.contains(tricky), "{}", m.plain);
    assert!(!m.html.contains("<b>x</b>"));

    let huge = format!("echo {}", "<&>é𝕏".repeat(2000));
    let (r, m) = c.ask(&huge).await;
    assert!(m.plain.encode_utf16().count() <= 4096);
    use sha2::Digest;
    let hex: String = sha2::Sha256::digest(huge.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(m.plain.contains(&hex), "{}", m.plain);
    assert!(m.plain.contains(&format!("ID: {}", r.short_id)));
    assert!(
        m.plain.contains("Reply: /approve"),
        "the answer lines survive the cut"
    );
    c.owner_says(&format!("/deny {}", r.short_id));
    let closed = c.closed(&m).await;
    assert!(closed.plain.encode_utf16().count() <= 4096);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_api_is_retried_and_answers_still_arrive() {
    let c = Chat::start(&[]).await;
    c.fake
        .fail_next("sendMessage", 2, Fault::TooManyRequests { retry_after: 1 });
    c.fake.fail_next(
        "sendMessage",
        1,
        Fault::Error {
            code: 400,
            description: "Bad Request: chat not found".into(),
        },
    );
    c.fake.fail_next(
        "getUpdates",
        2,
        Fault::Error {
            code: 409,
            description: "Conflict: terminated by other getUpdates request".into(),
        },
    );
    let (r, m) = c.ask("make flaky").await;
    let sends = c.fake.calls_to("sendMessage");
    assert_eq!(
        sends.iter().map(|s| s.ok).collect::<Vec<_>>(),
        [false, false, false, true]
    );
    // retry_after is honoured: the third attempt came at least a second after the first 429.
    assert!(sends[1].at - sends[0].at >= Duration::from_millis(950));
    c.fake.fail_next(
        "editMessageText",
        1,
        Fault::TooManyRequests { retry_after: 1 },
    );
    c.owner_says(&format!("/approve {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
    assert!(c.closed(&m).await.plain.starts_with("✅ Approved once"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_slows_nothing_allowlisted_and_polling_comes_back() {
    let c = Chat::start(&[("EXECGATE_APPROVAL__TIMEOUT_SECS", "2")]).await;
    c.d.add_rule(json!({"agent": null, "pattern": "make ok", "kind": "exact"}))
        .await;
    c.fake.go_down();
    // Allowlisted requests do not touch Telegram.
    for _ in 0..20 {
        assert_eq!(c.d.ask("claude", "make ok").await.via, Some(Via::Allowlist));
    }
    // A request that needs a human, while nobody can be asked: it expires as usual.
    let lost = c.d.ask("claude", "make unseen").await;
    assert_eq!(lost.status, Status::Expired);
    c.fake.come_back();
    // Posting and polling resume on their own.
    let (r, m) = c.ask("make after").await;
    c.owner_says(&format!("/approve {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
    c.closed(&m).await;
    assert!(
        c.fake
            .messages(c.chat)
            .iter()
            .all(|m| !m.plain.contains("make unseen")),
        "a request that ended unseen is not posted late"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_down_at_start_is_waited_for() {
    let fake = FakeTelegram::start(TOKEN).await;
    fake.go_down();
    let c = Chat::start_with(fake, &[]).await;
    let r = c.d.ask_no_wait("claude", "make early").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.fake.come_back();
    let m = c.message_for(&r).await;
    c.fake.press_button(
        c.chat,
        &owner(),
        m.message_id,
        &data(Decision::AllowOnce, &r),
    );
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_requests_respects_the_rate_limit() {
    let c = Chat::start(&[]).await;
    let mut asked = Vec::new();
    for i in 0..8 {
        asked.push(c.d.ask_no_wait("claude", &format!("make job{i}")).await);
    }
    for r in &asked {
        c.shown(r).await;
    }
    let sends = c.fake.calls_to("sendMessage");
    // A burst of a few alone; those the pacing would hold wait in a digest, not a queue.
    assert!(sends.len() < 8, "{}", c.fake.dump_calls(10));
    for w in sends.windows(6) {
        assert!(
            w[5].at - w[0].at >= Duration::from_millis(900),
            "six messages within {:?}",
            w[5].at - w[0].at
        );
    }
}

/// The digests in the chat so far: (message, the requests it shows by short id).
fn digests(c: &Chat) -> Vec<(SentMessage, Vec<String>)> {
    c.fake
        .messages(c.chat)
        .into_iter()
        .filter(|m| m.plain.contains(" requests need a decision") || m.plain.starts_with("All "))
        .map(|m| {
            let ids = m
                .plain
                .lines()
                .filter_map(|l| {
                    Some(l.split(' ').nth(1)?.to_string())
                        .filter(|_| l.contains(" · Agent: ") || l.contains(" by "))
                })
                .collect();
            (m, ids)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_beyond_the_pacing_is_posted_as_digests_each_answered_alone() {
    let c = Chat::start(&[]).await;
    let started = std::time::Instant::now();
    let mut asked = Vec::new();
    for i in 0..20 {
        asked.push(c.d.ask_no_wait("claude", &format!("make job{i}")).await);
    }
    for r in &asked {
        c.shown(r).await;
    }
    // One by one, the pacing would take some sixteen seconds; digests of eight, a few.
    let seen = started.elapsed();
    let sends = c.fake.calls_to("sendMessage").len();
    assert!(sends <= 8, "{sends} messages: {}", c.fake.dump_calls(12));
    assert!(seen < Duration::from_secs(8), "all shown after {seen:?}");

    let (digest, ids) = digests(&c).into_iter().next().expect("a digest");
    assert!(ids.len() >= 2, "{}", digest.plain);
    let of = |short: &str| asked.iter().find(|r| r.short_id == short).unwrap().clone();
    let (first, second) = (of(&ids[0]), of(&ids[1]));
    // Every request has its own row, its short id on the first button.
    let buttons = digest.buttons();
    assert!(buttons.contains(&(
        format!("👍 {}", first.short_id),
        data(Decision::AllowOnce, &first)
    )));
    assert!(buttons.contains(&("❌ deny".to_string(), data(Decision::Deny, &second))));

    // A reaction cannot say which request it means: nothing changes, the owner is told.
    c.fake.react(
        c.chat,
        Actor::User(owner()),
        digest.message_id,
        vec![],
        vec![Reaction::Emoji("👍".into())],
    );
    let said = c.reply_to(digest.message_id).await;
    assert!(said.contains("several requests"), "{said}");
    // A stranger's button changes nothing.
    c.fake.press_button(
        c.chat,
        &stranger(),
        digest.message_id,
        &data(Decision::AllowOnce, &first),
    );
    c.still_pending(&first).await;

    // The owner's button answers its own request only, and the digest is redrawn.
    let (_, query) = c.fake.press_button(
        c.chat,
        &owner(),
        digest.message_id,
        &data(Decision::AllowOnce, &first),
    );
    let done = c.d.terminal(&first.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Approved, Some(Via::TelegramButton))
    );
    let answer = c
        .fake
        .wait_until("the press answered", |f| f.callback_answer(&query))
        .await;
    assert!(answer.unwrap_or_default().contains(&first.short_id));
    assert_eq!(c.d.record(&second.id).await.status, Status::Pending);
    let redrawn = c.closed(&digest).await;
    assert!(
        redrawn
            .plain
            .contains(&format!("✅ {} Approved once by telegram:", first.short_id)),
        "{}",
        redrawn.plain
    );
    assert!(
        !redrawn
            .buttons()
            .iter()
            .any(|(_, d)| d.ends_with(&first.id))
    );
    assert!(
        redrawn
            .buttons()
            .iter()
            .any(|(_, d)| d.ends_with(&second.id))
    );

    // A reply names one of them by id.
    let (_, reply) = c.fake.reply_to(
        c.chat,
        &owner(),
        digest.message_id,
        &format!("/deny {}", second.short_id),
    );
    assert_eq!(c.d.terminal(&second.id).await.status, Status::Denied);
    assert!(c.reply_to(reply).await.contains(&second.short_id));
    // Once all have ended, the last redraw has no buttons left.
    for short in &ids[2..] {
        c.owner_says(&format!("/deny {short}"));
    }
    for short in &ids {
        c.d.terminal(&of(short).id).await;
    }
    let last = c
        .fake
        .wait_until("the digest closed", |f| {
            f.message(c.chat, digest.message_id)
                .filter(|m| m.plain.starts_with("All "))
        })
        .await;
    assert!(last.buttons().is_empty(), "{}", last.plain);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_telegram_rejects_stops_startup_and_bad_config_is_named() {
    let fake = FakeTelegram::start(TOKEN).await;
    let dir = tempfile::tempdir().unwrap();
    let wrong = [
        (
            "EXECGATE_TELEGRAM__BOT_TOKEN",
            "7000000001:AAsomeone-elses-token-entirely",
        ),
        ("EXECGATE_TELEGRAM__OWNER_IDS", "111111111"),
        ("EXECGATE_TELEGRAM__API_URL", &fake.url()),
    ];
    let out = run_cli(&env_for(dir.path(), &wrong), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("rejected telegram.bot_token"), "{err}");
    assert!(
        !err.contains("someone-elses"),
        "the token never reaches the logs: {err}"
    );
    assert!(!dir.path().join("run/agent.sock").exists());

    let no_owner = [("EXECGATE_TELEGRAM__BOT_TOKEN", TOKEN)];
    let out = run_cli(&env_for(dir.path(), &no_owner), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("owner_ids` is empty"),
        "{}",
        stderr(&out)
    );

    let not_numbers = [
        ("EXECGATE_TELEGRAM__BOT_TOKEN", TOKEN),
        ("EXECGATE_TELEGRAM__OWNER_IDS", "@olivia"),
    ];
    let out = run_cli(&env_for(dir.path(), &not_numbers), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("\"@olivia\" is not a valid Telegram user id"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_edits_pending_messages_and_confirms_the_last_update() {
    let fake = FakeTelegram::start(TOKEN).await;
    let dir = tempfile::tempdir().unwrap();
    let env = telegram_env(&fake, &[]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let daemon = Process::start(dir.path(), &env).await;
    let chat = owner().id;
    let first = daemon.ask_no_wait("make one").await;
    let second = daemon.ask_no_wait("make two").await;
    let short = |r: &Value| r["short_id"].as_str().unwrap().to_string();
    let message = |r: &Value| {
        let needle = format!("ID: {}\n", short(r));
        let fake = &fake;
        async move {
            fake.wait_until("an approval message", |f| {
                f.messages(chat)
                    .into_iter()
                    .find(|m| m.plain.contains(&needle))
            })
            .await
        }
    };
    message(&first).await;
    let pending = message(&second).await;
    let (update, said) = fake.send_text(chat, &owner(), &format!("/approve {}", short(&first)));
    fake.wait_until("the reply", |f| {
        f.messages(chat)
            .into_iter()
            .find(|m| m.reply_to == Some(said))
    })
    .await;

    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
    assert!(
        fake.acked_offset() > update,
        "the handled update is confirmed: {} <= {update}",
        fake.acked_offset()
    );
    let closed = fake.message(chat, pending.message_id).unwrap();
    assert!(
        closed.plain.starts_with("🚫 Cancelled: execgate shut down"),
        "{}",
        closed.plain
    );
    let secret = fake.token().split_once(':').unwrap().1;
    assert!(!log.contains(secret), "the token never reaches the logs");
    assert!(log.contains("connected to the Telegram Bot API"), "{log}");
}

/// The owner's reaction can reach the daemon before it has stored which message carries
/// the request (the store's write is slow: here another connection holds SQLite's write
/// lock). The answer still resolves the request, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_outruns_the_stored_message_id_still_counts() {
    let c = Chat::start(&[]).await;
    // The first post meets flood control: two seconds in which to take the store's lock.
    c.fake
        .fail_next("sendMessage", 1, Fault::TooManyRequests { retry_after: 2 });
    let r = c.d.ask_no_wait("claude", "make racing").await;
    c.fake
        .wait_until("the first post refused", |f| {
            f.calls_to("sendMessage")
                .into_iter()
                .find(|call| call.finished)
        })
        .await;
    let lock = c.d.hold_write_lock().await;
    c.fake.answer_on_post(
        c.chat,
        "make racing",
        OnPost::React {
            actor: Actor::User(owner()),
            reactions: vec![Reaction::Emoji("👍".into())],
        },
    );
    let answered = c
        .fake
        .wait_until("the owner's reaction", |f| {
            f.answered_posts().into_iter().next()
        })
        .await;
    c.fake
        .wait_until("the reaction handed to the daemon", |f| {
            f.delivered(answered.update_id).then_some(())
        })
        .await;
    // Time to handle it, while the message id cannot be stored.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        message_external_id(&c.d, &r.id).await,
        None,
        "the reaction came before the message id was stored"
    );
    lock.execute_batch("ROLLBACK").unwrap();

    let done = c.d.terminal(&r.id).await;
    assert_eq!(
        (done.status, done.decision, done.via),
        (
            Status::Approved,
            Some(Decision::AllowOnce),
            Some(Via::TelegramReaction)
        )
    );
    assert_eq!(
        done.decided_by.as_deref(),
        Some("telegram:111111111 (@olivia)")
    );
    let m = c.message_of(&r).await;
    let closed = c.closed(&m).await;
    let stored = Some(format!("{}:{}", c.chat, m.message_id));
    assert!(eventually(|| async { message_external_id(&c.d, &r.id).await == stored }).await);
    c.settle().await;
    assert_eq!(c.fake.message(c.chat, m.message_id).unwrap().edits.len(), 1);
    assert!(
        closed.plain.starts_with("✅ Approved once"),
        "{}",
        closed.plain
    );
    assert!(
        c.replies_to(m.message_id).is_empty(),
        "{:?}",
        c.replies_to(m.message_id)
    );
}

/// Answers given the instant the approval message exists, before sendMessage has even
/// returned to the daemon (a slow network back from Telegram): a reaction, a reply and a
/// button each resolve their request exactly once; a stranger's answer, and the owner's
/// reaction to a message not ours, held the same way, change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_given_before_send_message_returns_are_held_not_lost() {
    let c = Chat::start(&[]).await;
    c.fake
        .answer_late("sendMessage", 4, Duration::from_millis(700));
    let on_post = |command: &str, answer: OnPost| c.fake.answer_on_post(c.chat, command, answer);
    on_post(
        "make by-reaction",
        OnPost::React {
            actor: Actor::User(owner()),
            reactions: vec![Reaction::Emoji("👎".into())],
        },
    );
    on_post(
        "make by-reply",
        OnPost::Reply {
            user: owner(),
            text: "/approve always".into(),
        },
    );
    on_post(
        "make by-button",
        OnPost::Press {
            user: owner(),
            button: "👍 Allow once".into(),
        },
    );
    on_post(
        "make by-stranger",
        OnPost::React {
            actor: Actor::User(stranger()),
            reactions: vec![Reaction::Emoji("👍".into())],
        },
    );
    let by_reaction = c.d.ask_no_wait("claude", "make by-reaction").await;
    let by_reply = c.d.ask_no_wait("claude", "make by-reply").await;
    let by_button = c.d.ask_no_wait("claude", "make by-button").await;
    let by_stranger = c.d.ask_no_wait("claude", "make by-stranger").await;
    // Meanwhile the owner reacts to a message that is not ours: held too, and then just a
    // reaction.
    let hello = c.owner_says("hello");
    c.fake.react(
        c.chat,
        Actor::User(owner()),
        hello,
        vec![],
        vec![Reaction::Emoji("👍".into())],
    );

    let want = [
        (
            &by_reaction,
            Status::Denied,
            Decision::Deny,
            Via::TelegramReaction,
        ),
        (
            &by_reply,
            Status::Approved,
            Decision::AllowAlways,
            Via::TelegramCommand,
        ),
        (
            &by_button,
            Status::Approved,
            Decision::AllowOnce,
            Via::TelegramButton,
        ),
    ];
    for (r, status, decision, via) in want {
        let done = c.d.terminal(&r.id).await;
        assert_eq!(
            (done.status, done.decision, done.via),
            (status, Some(decision), Some(via)),
            "{}",
            r.command.display()
        );
        let m = c.message_of(r).await;
        c.closed(&m).await;
    }
    assert_eq!(c.fake.answered_posts().len(), 4);
    c.still_pending(&by_stranger).await;
    // (Its text gets the private chat's "Not a command", the reaction nothing.)
    assert!(c.replies_to(hello).iter().all(|t| !t.contains("approv")));

    // Exactly once: one edit per message, and every answer told it worked.
    for r in [&by_reaction, &by_reply, &by_button] {
        let m = c.message_of(r).await;
        assert_eq!(
            c.fake.message(c.chat, m.message_id).unwrap().edits.len(),
            1,
            "{}",
            r.command.display()
        );
    }
    let answered = c.fake.answered_posts();
    let reply = answered.iter().find_map(|a| a.reply_id).unwrap();
    assert_eq!(
        c.reply_to(reply).await,
        format!("{} approved (allow-always)", by_reply.short_id)
    );
    let query = answered.iter().find_map(|a| a.query_id.clone()).unwrap();
    let pressed = c
        .fake
        .wait_until("the press answered", |f| f.callback_answer(&query))
        .await;
    assert_eq!(
        pressed.as_deref(),
        Some(format!("{} approved (allow-once)", by_button.short_id).as_str())
    );
    assert!(
        c.fake
            .messages(c.chat)
            .iter()
            .all(|m| !m.plain.contains("already resolved") && !m.plain.contains("not an approval")),
        "no answer was turned away"
    );
    assert_eq!(c.rules().await.len(), 1);
}

/// An update teloxide cannot read (a reaction with neither `user` nor `actor_chat`, which
/// makes it panic) is logged and skipped by its update_id; polling goes on, and the
/// owner's next answer works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_that_cannot_be_read_is_skipped_and_polling_goes_on() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make after-junk").await;
    let bad = c.fake.last_update_id() + 1;
    c.fake.push_raw(json!({
        "update_id": bad,
        "message_reaction": {
            "chat": {"id": c.chat, "type": "private", "first_name": "Olivia"},
            "message_id": m.message_id,
            "date": chrono::Utc::now().timestamp(),
            "old_reaction": [],
            "new_reaction": [{"type": "emoji", "emoji": "👍"}],
        },
    }));
    // And one whose content teloxide cannot read (it makes those of an unknown kind).
    c.fake.push_raw(json!({
        "update_id": bad + 1,
        "message": {"message_id": "not a number"},
    }));
    c.fake.react(
        c.chat,
        Actor::User(owner()),
        m.message_id,
        vec![],
        vec![Reaction::Emoji("👎".into())],
    );
    let done = c.d.terminal(&r.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Denied, Some(Via::TelegramReaction))
    );
    c.settle().await;
    assert!(c.fake.acked_offset() > bad + 1, "{}", c.fake.acked_offset());
    assert!(c.fake.pending_updates().is_empty());

    // And later answers still arrive.
    let (r, _) = c.ask("make later").await;
    c.owner_says(&format!("/approve {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
}

/// docs/lifecycle.md#the-approval-message: the message shows the agent's uid, whether execgate runs the command
/// itself, and the stdin that comes with it (size, sha256, escaped head).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_message_shows_stdin_run_and_the_peer_uid() {
    let c = Chat::start(&[]).await;
    let place = tempfile::tempdir().unwrap();
    let input = format!("\u{1b}[31mred\n{}", "y".repeat(3000));
    let body = json!({"agent": "claude", "command": "tee out.txt", "input": input,
                      "run": true, "cwd": place.path()});
    let client = c.d.agent();
    let waiting = tokio::spawn(async move {
        client
            .call(Method::POST, "/v1/requests", Some(&body))
            .await
            .unwrap()
    });
    let r = c.d.pending_for("tee out.txt").await;
    let m = c.message_for(&r).await;
    let digest = execgate::model::sha256_hex(input.as_bytes());
    for line in [
        format!("Agent: claude (uid 0, pid {})", r.peer_pid.unwrap()),
        format!(
            "Input: {} bytes, sha256 {digest}, begins: \\u{{1b}}[31mred\\u{{a}}yyy",
            input.len()
        ),
        "Run: yes: execgate runs it itself, as its own user, once approved".into(),
    ] {
        assert!(m.plain.contains(&line), "{line:?} not in\n{}", m.plain);
    }
    c.owner_says(&format!("/deny {}", r.short_id));
    let (status, v) = waiting.await.unwrap();
    assert_eq!(
        (status, &v["status"]),
        (StatusCode::OK, &json!("denied")),
        "{v}"
    );
}

/// A request left pending by a crash is cancelled at the next start, and its Telegram
/// message says so instead of asking on for an answer nobody can give.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_left_message_is_edited_at_the_next_start() {
    let fake = FakeTelegram::start(TOKEN).await;
    let env = telegram_env(&fake, &[]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let dir = tempfile::tempdir().unwrap();
    let first = Process::start(dir.path(), &env).await;
    let r = first.ask_no_wait("make crash").await;
    let id = r["id"].as_str().unwrap().to_string();
    let needle = format!("ID: {}\n", r["short_id"].as_str().unwrap());
    let chat = owner().id;
    let m = fake
        .wait_until("the approval message", |f| {
            f.messages(chat)
                .into_iter()
                .find(|m| m.plain.contains(&needle))
        })
        .await;
    let db = db_path(dir.path());
    let stored = || {
        db::open(&db)
            .query_row(
                "SELECT count(*) FROM exec_approval_message WHERE request_id = ?",
                [&id],
                |row| row.get::<_, i64>(0),
            )
            .unwrap()
            == 1
    };
    assert!(
        eventually(|| async { stored() }).await,
        "the message id is stored"
    );
    first.signal(libc::SIGKILL);
    first.wait().await;

    let second = Process::start(dir.path(), &env).await;
    let edited = fake
        .wait_until("the edit", |f| {
            f.message(chat, m.message_id)
                .filter(|m| !m.edits.is_empty())
        })
        .await;
    assert!(
        edited.plain.starts_with("🚫 Cancelled: execgate restarted"),
        "{}",
        edited.plain
    );
    second.signal(libc::SIGTERM);
    assert!(second.wait().await.0.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_left_digest_is_redrawn_once_at_the_next_start() {
    let fake = FakeTelegram::start(TOKEN).await;
    let env = telegram_env(&fake, &[]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let dir = tempfile::tempdir().unwrap();
    let first = Process::start(dir.path(), &env).await;
    let mut ids = Vec::new();
    for i in 0..10 {
        let r = first.ask_no_wait(&format!("make crash{i}")).await;
        ids.push(r["id"].as_str().unwrap().to_string());
    }
    let chat = owner().id;
    let digest = fake
        .wait_until("a digest", |f| {
            f.messages(chat)
                .into_iter()
                .find(|m| m.plain.contains(" requests need a decision"))
        })
        .await;
    // Every request of it stored as the digest's, for the next start.
    let db = db_path(dir.path());
    let in_digest = || {
        db::open(&db)
            .query_row(
                "SELECT count(*) FROM exec_approval_message WHERE external_id LIKE ?",
                [format!("{chat}:{}#%", digest.message_id)],
                |row| row.get::<_, i64>(0),
            )
            .unwrap()
    };
    // A row a request, its first button "👍 ID".
    let shown = digest
        .buttons()
        .iter()
        .filter(|(text, _)| text.starts_with("👍 "))
        .count() as i64;
    assert!(shown >= 2, "{}", digest.plain);
    assert!(eventually(|| async { in_digest() == shown }).await);
    first.signal(libc::SIGKILL);
    first.wait().await;

    let second = Process::start(dir.path(), &env).await;
    let edited = fake
        .wait_until("the digest redrawn", |f| {
            f.message(chat, digest.message_id)
                .filter(|m| !m.edits.is_empty())
        })
        .await;
    assert!(edited.plain.starts_with("All "), "{}", edited.plain);
    assert_eq!(
        edited
            .plain
            .matches("Cancelled: execgate restarted")
            .count() as i64,
        shown,
        "{}",
        edited.plain
    );
    assert!(edited.buttons().is_empty());
    second.signal(libc::SIGTERM);
    assert!(second.wait().await.0.success());
    assert_eq!(
        fake.message(chat, digest.message_id).unwrap().edits.len(),
        1,
        "redrawn once, not once per request"
    );
}
