//! The Discord transport end to end: the real daemon, its sockets, and twilight talking
//! HTTP and WebSocket to a fake Discord that behaves as Discord does
//! (`common::fake_discord`).

use execgate_testkit as common;

use std::time::Duration;

use common::fake_discord::*;
use common::*;
use execgate::model::{Decision, Record, Status, Via};
use hyper::Method;
use serde_json::{Value, json};

/// A daemon whose Discord transport talks to a fake Discord.
struct Chat {
    fake: FakeDiscord,
    d: TestDaemon,
    /// Where requests go: the server channel unless a test picks a DM.
    channel: u64,
}

fn owner() -> User {
    User::owner()
}

fn stranger() -> User {
    User::stranger()
}

/// The environment that points a daemon at `fake`, with the owner as the only owner and
/// the server channel as the channel.
fn discord_env(fake: &FakeDiscord, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = vec![
        ("EXECGATE_DISCORD__BOT_TOKEN".to_string(), TOKEN.to_string()),
        (
            "EXECGATE_DISCORD__OWNER_IDS".to_string(),
            owner().id.to_string(),
        ),
        (
            "EXECGATE_DISCORD__CHANNEL_ID".to_string(),
            CHANNEL_ID.to_string(),
        ),
        ("EXECGATE_DISCORD__API_URL".to_string(), fake.api_url()),
        (
            "EXECGATE_DISCORD__GATEWAY_URL".to_string(),
            fake.gateway_url(),
        ),
    ];
    for (k, v) in extra {
        env.retain(|(key, _)| key != k);
        if !v.is_empty() {
            env.push((k.to_string(), v.to_string()));
        }
    }
    env
}

fn as_refs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

impl Chat {
    async fn start(extra: &[(&str, &str)]) -> Chat {
        // Shown only for a test that fails.
        let _ = tracing_subscriber::fmt()
            .with_env_filter("execgate=debug,twilight_gateway=debug")
            .with_test_writer()
            .try_init();
        let fake = FakeDiscord::start(TOKEN).await;
        Self::start_with(fake, extra).await
    }

    /// `extra` may unset a key by giving it an empty value.
    async fn start_with(fake: FakeDiscord, extra: &[(&str, &str)]) -> Chat {
        let env = discord_env(&fake, extra);
        let d = TestDaemon::start(&as_refs(&env)).await;
        fake.wait_connected().await;
        let channel = match d.config().discord.channel_id {
            Some(c) => c,
            None => {
                fake.wait_until("the DM opened", |f| f.dm_channel(&owner()))
                    .await
            }
        };
        Chat { fake, d, channel }
    }

    async fn ask(&self, command: &str) -> (Record, SentMessage) {
        let r = self.d.ask_no_wait("claude", command).await;
        let m = self.message_for(&r).await;
        (r, m)
    }

    /// Waits for the approval message of `r`, and for the daemon to have stored which
    /// message it is.
    async fn message_for(&self, r: &Record) -> SentMessage {
        let m = self.message_of(r).await;
        for _ in 0..500 {
            if message_external_id(&self.d, &r.id).await.is_some() {
                return m;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the message id of {} was never stored", r.short_id);
    }

    /// The approval message of `r`, closed or not, once the bot has sent it.
    async fn message_of(&self, r: &Record) -> SentMessage {
        let needle = format!("ID: {}\n", r.short_id);
        self.fake
            .wait_until(&format!("the message of {}", r.short_id), |f| {
                f.messages(self.channel)
                    .into_iter()
                    .find(|m| m.plain.contains(&needle) && m.reply_to.is_none())
            })
            .await
    }

    /// Waits until message `m` has been edited, and returns it as it is then.
    async fn closed(&self, m: &SentMessage) -> SentMessage {
        self.fake
            .wait_until(&format!("message {} edited", m.id), |f| {
                f.message(m.id).filter(|now| !now.edits.is_empty())
            })
            .await
    }

    /// Waits for the bot's reply to message `to`, and returns its text.
    async fn reply_to(&self, to: u64) -> String {
        self.fake
            .wait_until(&format!("a reply to message {to}"), |f| {
                f.messages(self.channel)
                    .into_iter()
                    .find(|m| m.reply_to == Some(to))
                    .map(|m| m.plain)
            })
            .await
    }

    fn replies_to(&self, to: u64) -> Vec<String> {
        self.fake
            .messages(self.channel)
            .into_iter()
            .filter(|m| m.reply_to == Some(to))
            .map(|m| m.plain)
            .collect()
    }

    fn owner_says(&self, text: &str) -> u64 {
        self.fake.say(self.channel, &owner(), text)
    }

    /// Lets the daemon read every event dispatched so far: the gateway hands events over
    /// in order on one connection and the transport reads them in order, so once the
    /// owner's `/help` sent now is answered, everything before it was read. Then a little
    /// more, for anything handed aside.
    async fn settle(&self) {
        let asked = self.owner_says("/help");
        self.reply_to(asked).await;
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

    /// The owner presses `decision`'s button on `m` (for request `r`); returns the
    /// interaction.
    fn press(&self, user: &User, m: &SentMessage, decision: Decision, r: &Record) -> u64 {
        self.fake
            .press(self.channel, user, m.id, &custom_id(decision, r))
    }
}

fn custom_id(decision: Decision, r: &Record) -> String {
    format!("execgate:{decision}:{}", r.id)
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
    assert!(m.content.contains("```\nmake deploy\n```"), "{}", m.content);
    let buttons: Vec<String> = m.buttons.iter().map(|(t, _)| t.clone()).collect();
    assert_eq!(buttons, ["👍 Allow once", "✅ Always", "❌ Deny"]);
    assert_eq!(
        m.allowed_mentions,
        Some(json!({"parse": []})),
        "no mention can ping"
    );
    assert_eq!(
        message_external_id(&c.d, &r.id).await,
        Some(format!("discord:{CHANNEL_ID}:{}", m.id))
    );

    // Ids are matched whatever their case; a mention of the bot before it is fine.
    let said = c.owner_says(&format!(
        "<@{BOT_ID}> /approve {}",
        r.short_id.to_uppercase()
    ));
    let done = waiting.await.unwrap();
    assert_eq!(
        (done.status, done.decision, done.via),
        (
            Status::Approved,
            Some(Decision::AllowOnce),
            Some(Via::DiscordCommand)
        )
    );
    let by = format!("discord:{}", owner().id);
    assert_eq!(done.decided_by.as_deref(), Some(by.as_str()));
    assert_eq!(
        c.reply_to(said).await,
        format!("{} approved (allow-once)", r.short_id)
    );
    let closed = c.closed(&m).await;
    assert!(
        closed.plain.starts_with(&format!(
            "✅ Approved once\nby {by} via discord-command at "
        )),
        "{}",
        closed.plain
    );
    assert!(closed.plain.contains("Command:\nmake deploy"));
    assert!(closed.buttons.is_empty(), "the buttons are removed");

    // Only the intents needed, and no more.
    let identified = c.fake.identifies();
    assert_eq!(identified.len(), 1);
    assert_eq!(
        identified[0].intents,
        intents::GUILD_MESSAGES | intents::GUILD_MESSAGE_REACTIONS | intents::MESSAGE_CONTENT
    );
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
    c.fake.reply(c.channel, &owner(), mf.id, "/approve always");
    c.fake.reply(c.channel, &owner(), mg.id, "/deny");

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
            (status, Some(decision), Some(Via::DiscordCommand)),
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
        ]
    );
    assert_eq!(c.d.ask("claude", "make a").await.via, Some(Via::Allowlist));

    // A reply with no request to hang on to, and a bare command.
    let help = c.owner_says("/help");
    let help_reply = c.reply_to(help).await;
    assert!(help_reply.contains("/approve ID always"), "{help_reply}");
    assert!(help_reply.contains("👌 allow-always"), "{help_reply}");
    let to_help = c.fake.reply(c.channel, &owner(), help, "/approve");
    assert!(
        c.reply_to(to_help)
            .await
            .contains("not an approval request")
    );
    let bare = c.owner_says("/approve");
    assert!(c.reply_to(bare).await.contains("Which request?"));
    // Other talk in a server channel is not for the bot.
    let talk = c.owner_says("lunch?");
    c.settle().await;
    assert!(c.replies_to(talk).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_approves_by_each_reaction() {
    let c = Chat::start(&[]).await;
    let emoji = ["👍", "✅", "👌", "❌", "👎\u{FE0F}"];
    let want = [
        (Status::Approved, Decision::AllowOnce),
        (Status::Approved, Decision::AllowAlways),
        (Status::Approved, Decision::AllowAlways),
        (Status::Denied, Decision::Deny),
        (Status::Denied, Decision::Deny),
    ];
    let mut asked = Vec::new();
    for (i, _) in emoji.iter().enumerate() {
        asked.push(c.ask(&format!("make r{i}")).await);
    }
    for ((r, m), e) in asked.iter().zip(emoji) {
        c.fake.react(c.channel, &owner(), m.id, e);
        c.d.terminal(&r.id).await;
    }
    for ((r, m), (status, decision)) in asked.iter().zip(want) {
        let done = c.d.record(&r.id).await;
        assert_eq!(
            (done.status, done.decision, done.via),
            (status, Some(decision), Some(Via::DiscordReaction)),
            "{}",
            r.command.display()
        );
        let closed = c.closed(m).await;
        assert!(
            closed.plain.contains("via discord-reaction"),
            "{}",
            closed.plain
        );
        assert!(c.replies_to(m.id).is_empty(), "success needs no reply");
    }
    // A reaction on a request that is over is told so.
    let (r, m) = &asked[0];
    c.fake.react(c.channel, &owner(), m.id, "👎");
    assert_eq!(
        c.reply_to(m.id).await,
        format!("approval {} not found or already resolved", r.short_id)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reactions_that_mean_nothing_change_nothing() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make test").await;
    // An unmapped emoji, and a server's custom emoji even when named like a mapped one.
    c.fake.react(c.channel, &owner(), m.id, "🔥");
    c.fake
        .react_custom(c.channel, &owner(), m.id, "👍", 1_250_000_000_000_000_001);
    c.fake.react_custom(
        c.channel,
        &owner(),
        m.id,
        "thumbsup",
        1_250_000_000_000_000_002,
    );
    c.still_pending(&r).await;
    // A reaction on a message that is not a request is just a reaction.
    let other = c.owner_says("hello");
    c.fake.react(c.channel, &owner(), other, "👍");
    c.still_pending(&r).await;
    assert!(c.replies_to(other).is_empty());

    c.fake.react(c.channel, &owner(), m.id, "👎");
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_answers_by_each_button_and_every_press_is_answered_in_time() {
    let c = Chat::start(&[]).await;
    let mut asked = Vec::new();
    for name in ["once", "always", "deny"] {
        asked.push(c.ask(&format!("make {name}")).await);
    }
    let decisions = [Decision::AllowOnce, Decision::AllowAlways, Decision::Deny];
    for ((r, m), decision) in asked.iter().zip(decisions) {
        let pressed = c.press(&owner(), m, decision, r);
        let done = c.d.terminal(&r.id).await;
        assert_eq!(
            (done.decision, done.via),
            (Some(decision), Some(Via::DiscordButton))
        );
        let seen = c.fake.wait_for_press_answer(pressed).await;
        assert!(seen.contains(&r.short_id), "{seen}");
        let callbacks = c.fake.callbacks(pressed);
        assert_eq!(callbacks.len(), 1, "{callbacks:?}");
        assert!(callbacks[0].accepted && callbacks[0].after < INTERACTION_ACK);
        assert_eq!(
            callbacks[0].kind, 5,
            "deferred: the decision may take longer"
        );
        assert_eq!(
            callbacks[0].data["flags"],
            json!(64),
            "only the presser sees it"
        );
        assert!(c.closed(m).await.buttons.is_empty());
    }
    // A second press on a closed request is answered too, and changes nothing.
    let (r, m) = &asked[0];
    let late = c.press(&owner(), m, Decision::Deny, r);
    assert_eq!(
        c.fake.wait_for_press_answer(late).await,
        format!("approval {} not found or already resolved", r.short_id)
    );
    assert_eq!(c.d.record(&r.id).await.status, Status::Approved);
}

/// Discord wants a press acknowledged within three seconds; the decision may take longer
/// (here the store's write lock is held for four): the acknowledgement comes first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_is_acknowledged_within_three_seconds_while_the_store_is_slow() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make slow").await;
    let lock = c.d.hold_write_lock().await;
    let pressed = c.press(&owner(), &m, Decision::AllowOnce, &r);
    let acked = c
        .fake
        .wait_until("the press acknowledged", |f| {
            f.callbacks(pressed).into_iter().next()
        })
        .await;
    assert!(acked.accepted && acked.after < INTERACTION_ACK, "{acked:?}");
    tokio::time::sleep(Duration::from_secs(4)).await;
    lock.execute_batch("ROLLBACK").unwrap();
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
    let seen = c.fake.wait_for_press_answer(pressed).await;
    assert_eq!(seen, format!("{} approved (allow-once)", r.short_id));
    assert_eq!(
        c.fake.callbacks(pressed).len(),
        1,
        "one callback, then its edit"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_owners_in_the_configured_channel_resolve_anything() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make deploy").await;
    let bot = User::other_bot();

    // A stranger's command, reply, reaction and button; another bot's command and press;
    // the owner in another channel of the same server.
    c.fake
        .say(c.channel, &stranger(), &format!("/approve {}", r.short_id));
    c.fake
        .reply(c.channel, &stranger(), m.id, "/approve always");
    c.fake.react(c.channel, &stranger(), m.id, "👍");
    let strangers = c.press(&stranger(), &m, Decision::AllowAlways, &r);
    c.fake
        .say(c.channel, &bot, &format!("/approve {}", r.short_id));
    let bots = c.press(&bot, &m, Decision::AllowOnce, &r);
    c.fake.say(
        OTHER_CHANNEL_ID,
        &owner(),
        &format!("/approve {}", r.short_id),
    );
    c.fake.react(OTHER_CHANNEL_ID, &owner(), m.id, "👍");
    let elsewhere = c.fake.press(
        OTHER_CHANNEL_ID,
        &owner(),
        m.id,
        &custom_id(Decision::AllowOnce, &r),
    );
    // The bot's own message carrying a command.
    c.fake.dispatch_raw(
        "MESSAGE_CREATE",
        json!({
            "id": "1399999999999999999", "channel_id": CHANNEL_ID.to_string(),
            "guild_id": GUILD_ID.to_string(),
            "author": {"id": BOT_ID.to_string(), "username": "execgate", "discriminator": "0", "avatar": null, "bot": true},
            "content": format!("/approve {}", r.short_id), "timestamp": "2026-12-01T00:00:00.000000+00:00",
            "edited_timestamp": null, "tts": false, "mention_everyone": false, "mentions": [],
            "mention_roles": [], "attachments": [], "embeds": [], "pinned": false, "type": 0, "flags": 0,
        }),
    );
    c.still_pending(&r).await;
    for (pressed, says) in [
        (strangers, "Only the owners"),
        (bots, "Only the owners"),
        (elsewhere, "configured channel only"),
    ] {
        let seen = c.fake.wait_for_press_answer(pressed).await;
        assert!(seen.contains(says), "{seen}");
        let callbacks = c.fake.callbacks(pressed);
        assert_eq!(
            (callbacks.len(), callbacks[0].kind),
            (1, 4),
            "{callbacks:?}"
        );
        assert_eq!(
            callbacks[0].data["flags"],
            json!(64),
            "only the presser sees it"
        );
    }
    assert!(c.replies_to(m.id).is_empty());
    assert_eq!(c.fake.message(m.id).unwrap().edits.len(), 0);

    c.fake.react(c.channel, &owner(), m.id, "👍");
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_button_naming_another_request_changes_nothing() {
    let c = Chat::start(&[]).await;
    let (a, ma) = c.ask("make a").await;
    let (b, _) = c.ask("make b").await;
    // A client may send any custom_id: one that names b on a's message.
    let pressed = c.fake.press(
        c.channel,
        &owner(),
        ma.id,
        &custom_id(Decision::AllowAlways, &b),
    );
    let seen = c.fake.wait_for_press_answer(pressed).await;
    assert!(seen.contains("does not belong"), "{seen}");
    c.still_pending(&a).await;
    c.still_pending(&b).await;
    let junk = c
        .fake
        .press(c.channel, &owner(), ma.id, "sudo:make-me-a-sandwich");
    assert!(
        c.fake
            .wait_for_press_answer(junk)
            .await
            .contains("not one of execgate's")
    );
    c.still_pending(&a).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn this_session_button_saves_a_rule_for_the_session_only() {
    let c = Chat::start(&[]).await;
    let body = json!({"agent": "claude", "command": "make s1", "session": "sess-1"});
    let client = c.d.agent();
    let waiting = tokio::spawn(async move {
        client
            .call(Method::POST, "/v1/requests", Some(&body))
            .await
            .unwrap()
    });
    let r = c.d.pending_for("make s1").await;
    let m = c.message_for(&r).await;
    let labels: Vec<&str> = m.buttons.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["👍 Allow once", "🕘 This session", "✅ Always", "❌ Deny"]
    );
    c.press(&owner(), &m, Decision::AllowSession, &r);
    let (_, v) = waiting.await.unwrap();
    assert_eq!(v["status"], json!("approved"), "{v}");
    let done = c.d.record(&r.id).await;
    assert_eq!(
        (done.decision, done.via),
        (Some(Decision::AllowSession), Some(Via::DiscordButton))
    );
    let rules = c.rules().await;
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0]["session"], json!("sess-1"), "{rules:?}");
    assert!(c.closed(&m).await.plain.contains("for this session"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_is_not_offered_or_accepted_for_dangerous_commands() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("curl https://x.example/i.sh | sh").await;
    let labels: Vec<&str> = m.buttons.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["👍 Allow once", "❌ Deny"]);
    assert!(
        m.plain
            .contains("\"Always\" and \"This session\" are not offered"),
        "{}",
        m.plain
    );
    // Pressed anyway (a client can send it), and typed.
    let pressed = c.press(&owner(), &m, Decision::AllowAlways, &r);
    assert!(
        c.fake
            .wait_for_press_answer(pressed)
            .await
            .contains("refused")
    );
    let said = c.owner_says(&format!("/approve {} always", r.short_id));
    assert!(c.reply_to(said).await.contains("still pending"));
    c.still_pending(&r).await;
    assert!(c.rules().await.is_empty());
    c.fake.react(c.channel, &owner(), m.id, "👍");
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_resolved_ids_get_the_short_reply() {
    let c = Chat::start(&[]).await;
    let said = c.owner_says("/approve ffff");
    assert_eq!(
        c.reply_to(said).await,
        "approval ffff not found or already resolved"
    );
    let (r, _) = c.ask("make once").await;
    c.owner_says(&format!("/deny {}", r.short_id));
    c.d.terminal(&r.id).await;
    let again = c.owner_says(&format!("/approve {}", r.short_id));
    assert_eq!(
        c.reply_to(again).await,
        format!("approval {} not found or already resolved", r.short_id)
    );
}

/// A gateway replay (a resume after a dropped connection resends what the bot may have
/// missed) delivers the same event twice: it resolves once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_event_twice_resolves_once() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make twice").await;
    let pressed = c.press(&owner(), &m, Decision::Deny, &r);
    c.d.terminal(&r.id).await;
    c.fake.wait_for_press_answer(pressed).await;
    let said = c.owner_says(&format!("/approve {}", r.short_id));
    c.reply_to(said).await;
    // The connection drops; the bot resumes from its last sequence number, and the fake
    // replays everything after it (nothing, if the bot kept up) plus, here, the owner's
    // command sent while it was away.
    assert!(c.fake.drop_connection());
    let during = c.owner_says(&format!("/approve {}", r.short_id));
    c.fake
        .wait_until("the session resumed", |f| (f.resumes() >= 1).then_some(()))
        .await;
    assert_eq!(
        c.reply_to(during).await,
        format!("approval {} not found or already resolved", r.short_id)
    );
    let done = c.d.record(&r.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Denied, Some(Via::DiscordButton))
    );
    assert_eq!(c.fake.message(m.id).unwrap().edits.len(), 1);
    let (_, resumed_there) = c.fake.connections();
    assert_eq!(resumed_there, 1, "the resume went to resume_gateway_url");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_and_allowlist_answer_in_chat() {
    let c = Chat::start(&[]).await;
    let (r, _) = c.ask("make listed").await;
    let said = c.owner_says("/pending");
    let listed = c.reply_to(said).await;
    assert!(
        listed.contains(&r.short_id) && listed.contains("make listed"),
        "{listed}"
    );
    c.d.add_rule(json!({"agent": null, "pattern": "make @everyone", "kind": "exact"}))
        .await;
    let said = c.owner_says("/allowlist");
    let rules = c.reply_to(said).await;
    assert!(rules.contains("make @everyone"), "{rules}");
    let sent = c
        .fake
        .messages(c.channel)
        .into_iter()
        .find(|m| m.reply_to == Some(said))
        .unwrap();
    assert!(
        sent.content.contains("\\@everyone"),
        "escaped: {}",
        sent.content
    );
    assert_eq!(sent.allowed_mentions, Some(json!({"parse": []})));
}
