//! The Discord transport end to end: the real daemon, its sockets, and twilight talking
//! HTTP and WebSocket to a fake Discord that behaves as Discord does
//! (`common::fake_discord`).

use execgate_testkit as common;

use std::time::Duration;

use common::fake_discord::*;
use common::process::Process;
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

    /// The message that first shows `r`, alone or in a digest, once the bot has sent it.
    async fn shown(&self, r: &Record) -> SentMessage {
        let alone = format!("ID: {}\n", r.short_id);
        let in_digest = format!("🔒 {} · ", r.short_id);
        self.fake
            .wait_until(&format!("a message showing {}", r.short_id), |f| {
                f.messages(self.channel).into_iter().find(|m| {
                    m.reply_to.is_none()
                        && (m.plain.contains(&alone) || m.plain.contains(&in_digest))
                })
            })
            .await
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_outcome_is_shown_whoever_ends_the_request() {
    let mut c = Chat::start(&[]).await;
    // The CLI (admin socket).
    let (r, m) = c.ask("make by-cli").await;
    let (status, _) = c.d.decide(&r.id, "deny").await;
    assert_eq!(status, hyper::StatusCode::OK);
    let closed = c.closed(&m).await;
    assert!(closed.plain.starts_with("❌ Denied\n"), "{}", closed.plain);
    assert!(closed.plain.contains("via cli"), "{}", closed.plain);
    assert!(closed.buttons.is_empty());
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
    let (_, m) = c.ask("make at-shutdown").await;
    c.d.stop().await;
    let closed = c.fake.message(m.id).expect("the message is still there");
    assert!(
        closed.plain.starts_with("🚫 Cancelled: execgate shut down"),
        "the edit lands before shutdown returns: {}",
        closed.plain
    );
    assert!(closed.buttons.is_empty());
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

/// Markdown, mentions and code fences in a command are shown as they are and do nothing;
/// a huge command is cut to Discord's 2000 characters, saying so, with the answer lines
/// kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_mentions_and_a_huge_command_render_safely() {
    let c = Chat::start(&[]).await;
    let tricky =
        "echo '**x** @everyone <@111111111111111111> <@&5> ``` # [a](http://e.vil)' > /tmp/_y_";
    let (r, m) = c.ask(tricky).await;
    assert!(m.plain.contains(tricky), "{}", m.plain);
    assert_eq!(m.content.matches("```").count(), 2, "{}", m.content);
    assert_eq!(m.allowed_mentions, Some(json!({"parse": []})));
    assert_eq!(m.flags & 4, 4, "no link previews");
    // The reason, outside code, is escaped.
    let body = json!({"agent": "claude", "command": "make why", "reason": "ping @here **now**"});
    let client = c.d.agent();
    tokio::spawn(async move { client.call(Method::POST, "/v1/requests", Some(&body)).await });
    let why = c.d.pending_for("make why").await;
    let mw = c.message_for(&why).await;
    assert!(
        mw.plain.contains("Reason: ping @here **now**"),
        "{}",
        mw.plain
    );
    assert!(
        mw.content.contains("ping \\@here \\*\\*now\\*\\*"),
        "{}",
        mw.content
    );
    c.owner_says(&format!("/deny {}", r.short_id));
    c.owner_says(&format!("/deny {}", why.short_id));

    let huge = format!("echo {}", "<&>é𝕏`".repeat(2000));
    let (r, m) = c.ask(&huge).await;
    assert!(
        m.content.chars().count() <= 2000,
        "{}",
        m.content.chars().count()
    );
    use sha2::Digest;
    let hex: String = sha2::Sha256::digest(huge.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(m.plain.contains(&hex), "{}", m.plain);
    assert!(m.plain.contains("cut here to fit Discord"), "{}", m.plain);
    assert!(m.plain.contains(&format!("ID: {}", r.short_id)));
    assert!(
        m.plain.contains("Reply: /approve"),
        "the answer lines survive the cut"
    );
    c.owner_says(&format!("/deny {}", r.short_id));
    let closed = c.closed(&m).await;
    assert!(closed.content.chars().count() <= 2000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_api_is_retried_and_answers_still_arrive() {
    let c = Chat::start(&[]).await;
    c.fake.fail(POST_MESSAGE, Fault::rate_limited(1.0), 2);
    c.fake.fail_next(POST_MESSAGE, Fault::server_error());
    let (r, m) = c.ask("make flaky").await;
    let posts: Vec<u16> = c
        .fake
        .calls_to("POST /channels/")
        .iter()
        .map(|c| c.status)
        .collect();
    assert_eq!(posts, [429, 429, 500, 200]);
    let calls = c.fake.calls_to("POST /channels/");
    // retry_after is honoured: a second at least between the two 429s' retries.
    assert!(calls[1].at - calls[0].at >= Duration::from_millis(950));
    assert!(
        calls
            .iter()
            .all(|c| c.authorization.as_deref() == Some(&format!("Bot {TOKEN}")[..]))
    );
    c.fake.fail_next(EDIT_MESSAGE, Fault::rate_limited(0.5));
    c.owner_says(&format!("/approve {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
    assert!(c.closed(&m).await.plain.starts_with("✅ Approved once"));
}

/// The channel refusing the bot is not an outage: the log says what to fix, naming
/// `discord.channel_id`, every time; nothing is approved; posting goes on once fixed.
/// A message deleted before its edit is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_the_bot_cannot_post_in_is_named_and_a_deleted_message_is_left() {
    let c = Chat::start(&[]).await;
    c.fake.fail_next(POST_MESSAGE, Fault::missing_permissions());
    c.fake.fail_next(POST_MESSAGE, Fault::missing_access());
    let (r, m) = c.ask("make refused").await;
    let statuses: Vec<u16> = c
        .fake
        .calls_to("POST /channels/")
        .iter()
        .map(|c| c.status)
        .collect();
    assert_eq!(statuses, [403, 403, 200]);
    assert_eq!(
        c.d.record(&r.id).await.status,
        Status::Pending,
        "nothing approved by a failure"
    );
    c.fake.fail_next(EDIT_MESSAGE, Fault::unknown_message());
    c.owner_says(&format!("/deny {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Denied);
    c.fake
        .wait_until("the edit tried", |f| {
            (!f.calls_to("PATCH /channels/").is_empty()).then_some(())
        })
        .await;
    c.settle().await;
    assert_eq!(
        c.fake.calls_to("PATCH /channels/").len(),
        1,
        "an unknown message is not retried"
    );
    assert!(c.fake.message(m.id).unwrap().edits.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_slows_nothing_allowlisted_and_the_gateway_comes_back() {
    let c = Chat::start(&[("EXECGATE_APPROVAL__TIMEOUT_SECS", "2")]).await;
    c.d.add_rule(json!({"agent": null, "pattern": "make ok", "kind": "exact"}))
        .await;
    c.fake.go_down();
    for _ in 0..20 {
        assert_eq!(c.d.ask("claude", "make ok").await.via, Some(Via::Allowlist));
    }
    let lost = c.d.ask("claude", "make unseen").await;
    assert_eq!(lost.status, Status::Expired);
    c.fake.come_back();
    c.fake.wait_connected().await;
    let (r, m) = c.ask("make after").await;
    c.owner_says(&format!("/approve {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
    c.closed(&m).await;
    assert!(
        c.fake
            .messages(c.channel)
            .iter()
            .all(|m| !m.plain.contains("make unseen")),
        "a request that ended unseen is not posted late"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_down_at_start_is_waited_for() {
    let fake = FakeDiscord::start(TOKEN).await;
    fake.go_down();
    let env = discord_env(&fake, &[]);
    let d = TestDaemon::start(&as_refs(&env)).await;
    let r = d.ask_no_wait("claude", "make early").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    fake.come_back();
    fake.wait_connected().await;
    let c = Chat {
        fake,
        d,
        channel: CHANNEL_ID,
    };
    let m = c.message_for(&r).await;
    c.press(&owner(), &m, Decision::AllowOnce, &r);
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
    let posts = c.fake.calls_to("POST /channels/");
    // Five at once; the rest, which the pace would hold five seconds, in a digest.
    assert!(posts.len() <= 6, "{}", c.fake.dump_calls(10));
    assert_eq!(c.fake.rate_limited(), 0, "never past Discord's limit");
    assert!(posts[4].at - posts[0].at < Duration::from_secs(1));
    if let Some(sixth) = posts.get(5) {
        assert!(sixth.at - posts[0].at >= Duration::from_millis(4950));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_beyond_the_pacing_is_posted_as_digests_each_answered_alone() {
    let c = Chat::start(&[]).await;
    let mut asked = Vec::new();
    for i in 0..12 {
        asked.push(c.d.ask_no_wait("claude", &format!("make job{i}")).await);
    }
    for r in &asked {
        c.shown(r).await;
    }
    let digest = c
        .fake
        .messages(c.channel)
        .into_iter()
        .find(|m| m.plain.contains(" requests need a decision"))
        .expect("a digest");
    assert!(digest.content.chars().count() <= 2000);
    let rows: Vec<(String, String)> = digest
        .buttons
        .iter()
        .filter(|(label, _)| label.starts_with("👍 "))
        .cloned()
        .collect();
    assert!((2..=5).contains(&rows.len()), "{}", digest.plain);
    let of = |custom_id: &str| {
        let id = custom_id.rsplit_once(':').unwrap().1;
        asked.iter().find(|r| r.id == id).unwrap().clone()
    };
    let (first, second) = (of(&rows[0].1), of(&rows[1].1));
    assert_eq!(rows[0].0, format!("👍 {}", first.short_id));

    // A reaction cannot say which request it means; a stranger's press changes nothing.
    c.fake.react(c.channel, &owner(), digest.id, "👍");
    assert!(c.reply_to(digest.id).await.contains("several requests"));
    c.fake.press(c.channel, &stranger(), digest.id, &rows[0].1);
    c.still_pending(&first).await;

    // The owner's press answers its own request only; the digest is redrawn.
    c.fake.press(c.channel, &owner(), digest.id, &rows[0].1);
    let done = c.d.terminal(&first.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Approved, Some(Via::DiscordButton))
    );
    assert_eq!(c.d.record(&second.id).await.status, Status::Pending);
    let redrawn = c.closed(&digest).await;
    assert!(
        redrawn
            .plain
            .contains(&format!("✅ {} Approved once by discord:", first.short_id)),
        "{}",
        redrawn.plain
    );
    assert!(
        !redrawn
            .buttons
            .iter()
            .any(|(_, id)| id.ends_with(&first.id))
    );
    assert!(
        redrawn
            .buttons
            .iter()
            .any(|(_, id)| id.ends_with(&second.id))
    );
    // A reply names one of them by id.
    c.fake.reply(
        c.channel,
        &owner(),
        digest.id,
        &format!("/deny {}", second.short_id),
    );
    let done = c.d.terminal(&second.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Denied, Some(Via::DiscordCommand))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_discord_rejects_stops_startup_and_bad_config_is_named() {
    let fake = FakeDiscord::start(TOKEN).await;
    let dir = tempfile::tempdir().unwrap();
    let wrong = "MTQwMDAwMDAwMDAwMDAwMDAwMQ.GfAkEx.someone-elses-token-entirely-0123456789";
    let env = discord_env(&fake, &[("EXECGATE_DISCORD__BOT_TOKEN", wrong)]);
    let out = run_cli(&env_for(dir.path(), &as_refs(&env)), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("rejected discord.bot_token"), "{err}");
    assert!(
        !err.contains("someone-elses"),
        "the token never reaches the logs: {err}"
    );
    assert!(!dir.path().join("run/agent.sock").exists());

    let no_owner = discord_env(&fake, &[("EXECGATE_DISCORD__OWNER_IDS", "")]);
    let out = run_cli(&env_for(dir.path(), &as_refs(&no_owner)), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("set discord.owner_ids"),
        "{}",
        stderr(&out)
    );

    let not_ids = discord_env(&fake, &[("EXECGATE_DISCORD__OWNER_IDS", "@olivia")]);
    let out = run_cli(&env_for(dir.path(), &as_refs(&not_ids)), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("\"@olivia\" is not a valid Discord id"),
        "{}",
        stderr(&out)
    );

    let pasted = discord_env(&fake, &[("EXECGATE_DISCORD__BOT_TOKEN", "Bot abc")]);
    let out = run_cli(&env_for(dir.path(), &as_refs(&pasted)), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("`discord.bot_token` does not look like a bot token"),
        "{}",
        stderr(&out)
    );
}

/// The gateway refusing the token (4004) or the Message Content intent (4014) is said
/// once, naming what to fix, and the bot does not hammer the gateway; posting and the
/// other fronts go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_intents_are_named_and_not_retried() {
    let fake = FakeDiscord::start(TOKEN).await;
    fake.refuse_privileged_intents();
    let env = discord_env(&fake, &[]);
    let d = TestDaemon::start(&as_refs(&env)).await;
    fake.wait_until("an identify", |f| f.identifies().first().cloned())
        .await;
    let r = d.ask_no_wait("claude", "make still-posted").await;
    let c = Chat {
        fake: fake.clone(),
        d,
        channel: CHANNEL_ID,
    };
    c.message_for(&r).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(fake.identifies().len(), 1, "one try, no reconnect loop");
    assert!(!fake.connected());
    c.d.decide(&r.id, "allow-once").await;
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_edits_pending_messages_and_logs_no_token() {
    let fake = FakeDiscord::start(TOKEN).await;
    let dir = tempfile::tempdir().unwrap();
    let env = discord_env(&fake, &[]);
    let daemon = Process::start(dir.path(), &as_refs(&env)).await;
    fake.wait_connected().await;
    let first = daemon.ask_no_wait("make one").await;
    let second = daemon.ask_no_wait("make two").await;
    let short = |r: &Value| r["short_id"].as_str().unwrap().to_string();
    let message = |r: &Value| {
        let needle = format!("ID: {}\n", short(r));
        let fake = &fake;
        async move {
            fake.wait_until("an approval message", |f| {
                f.messages(CHANNEL_ID)
                    .into_iter()
                    .find(|m| m.plain.contains(&needle))
            })
            .await
        }
    };
    message(&first).await;
    let pending = message(&second).await;
    let said = fake.say(CHANNEL_ID, &owner(), &format!("/approve {}", short(&first)));
    fake.wait_until("the reply", |f| {
        f.messages(CHANNEL_ID)
            .into_iter()
            .find(|m| m.reply_to == Some(said))
    })
    .await;

    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
    let closed = fake.message(pending.id).unwrap();
    assert!(
        closed.plain.starts_with("🚫 Cancelled: execgate shut down"),
        "{}",
        closed.plain
    );
    assert!(
        !log.contains(TOKEN.split('.').nth(2).unwrap()),
        "the token never reaches the logs"
    );
    assert!(log.contains("connected to the Discord API"), "{log}");
    assert!(log.contains("connected to the Discord gateway"), "{log}");
}

/// A token revoked while running, over REST: every post is refused with 401, logged
/// naming discord.bot_token, without the token; nothing is approved; the CLI goes on.
/// (The gateway's 4004 is the next test.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_while_running_is_named_and_changes_nothing() {
    let fake = FakeDiscord::start(TOKEN).await;
    let dir = tempfile::tempdir().unwrap();
    let env = discord_env(&fake, &[]);
    let daemon = Process::start(dir.path(), &as_refs(&env)).await;
    fake.wait_connected().await;
    fake.fail(POST_MESSAGE, Fault::unauthorized(), 1000);
    let r = daemon.ask_no_wait("make revoked").await;
    fake.wait_until("a refused post", |f| {
        f.calls_to("POST /channels/")
            .into_iter()
            .find(|c| c.status == 401)
    })
    .await;
    let (_, listed) = daemon
        .submit(&json!({"agent": "claude", "command": "ls"}))
        .await;
    assert_eq!(
        listed["status"],
        json!("approved"),
        "other requests go on: {listed}"
    );
    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
    assert!(
        log.contains("discord.bot_token (401 Unauthorized)"),
        "{log}"
    );
    assert!(!log.contains(TOKEN.split('.').nth(2).unwrap()), "{log}");
    let _ = r;
}

/// A token revoked while running closes the gateway with 4004 at the next Identify: said
/// naming discord.bot_token, without the token, and not retried in a loop; the CLI goes
/// on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_while_connected_closes_the_gateway_and_is_not_retried() {
    let fake = FakeDiscord::start(TOKEN).await;
    let dir = tempfile::tempdir().unwrap();
    let env = discord_env(&fake, &[]);
    let daemon = Process::start(dir.path(), &as_refs(&env)).await;
    fake.wait_connected().await;
    fake.revoke_token();
    // Discord ends the session: the next connection must identify, and is refused.
    assert!(fake.invalidate_session(false));
    fake.wait_until("an Identify refused", |f| {
        f.identifies().iter().find(|i| !i.token_ok).map(|_| ())
    })
    .await;
    let refused = fake.identifies().len();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        fake.identifies().len(),
        refused,
        "a rejected token is not tried again"
    );
    let (_, listed) = daemon
        .submit(&json!({"agent": "claude", "command": "ls"}))
        .await;
    assert_eq!(listed["status"], json!("approved"), "{listed}");
    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
    assert_eq!(
        log.matches("rejected discord.bot_token (close code 4004")
            .count(),
        1,
        "{log}"
    );
    assert!(!log.contains(TOKEN.split('.').nth(2).unwrap()), "{log}");
}

/// The owner's reaction can reach the daemon before it has stored which message carries
/// the request (another connection holds SQLite's write lock). It still resolves the
/// request, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_outruns_the_stored_message_id_still_counts() {
    let c = Chat::start(&[]).await;
    // The first post meets a 429: two seconds in which to take the store's lock.
    c.fake.fail_next(POST_MESSAGE, Fault::rate_limited(2.0));
    let r = c.d.ask_no_wait("claude", "make racing").await;
    c.fake
        .wait_until("the first post refused", |f| {
            f.calls_to("POST /channels/")
                .into_iter()
                .find(|c| c.status == 429)
        })
        .await;
    let lock = c.d.hold_write_lock().await;
    c.fake
        .answer_on_post("make racing", &owner(), OnPost::React("👍".into()));
    let m = c.message_of(&r).await;
    // Time to handle it, while the message id cannot be stored.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(message_external_id(&c.d, &r.id).await, None);
    lock.execute_batch("ROLLBACK").unwrap();
    let done = c.d.terminal(&r.id).await;
    assert_eq!(
        (done.status, done.decision, done.via),
        (
            Status::Approved,
            Some(Decision::AllowOnce),
            Some(Via::DiscordReaction)
        )
    );
    let closed = c.closed(&m).await;
    assert!(
        closed.plain.starts_with("✅ Approved once"),
        "{}",
        closed.plain
    );
    c.settle().await;
    assert_eq!(c.fake.message(m.id).unwrap().edits.len(), 1);
    assert!(c.replies_to(m.id).is_empty(), "{:?}", c.replies_to(m.id));
}

/// Answers given the instant the approval message exists, before Discord's answer to the
/// post reaches the daemon: a reaction, a reply and a button each resolve their request
/// exactly once; a stranger's, held the same way, changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_given_before_the_post_returns_are_held_not_lost() {
    let c = Chat::start(&[]).await;
    c.fake.slow(POST_MESSAGE, Some(Duration::from_millis(700)));
    c.fake
        .answer_on_post("make by-reaction", &owner(), OnPost::React("👎".into()));
    c.fake.answer_on_post(
        "make by-reply",
        &owner(),
        OnPost::Reply("/approve always".into()),
    );
    c.fake.answer_on_post(
        "make by-button",
        &owner(),
        OnPost::Press("execgate:allow-once:".into()),
    );
    c.fake
        .answer_on_post("make by-stranger", &stranger(), OnPost::React("👍".into()));
    let by_reaction = c.d.ask_no_wait("claude", "make by-reaction").await;
    let by_reply = c.d.ask_no_wait("claude", "make by-reply").await;
    let by_button = c.d.ask_no_wait("claude", "make by-button").await;
    let by_stranger = c.d.ask_no_wait("claude", "make by-stranger").await;
    let want = [
        (
            &by_reaction,
            Status::Denied,
            Decision::Deny,
            Via::DiscordReaction,
        ),
        (
            &by_reply,
            Status::Approved,
            Decision::AllowAlways,
            Via::DiscordCommand,
        ),
        (
            &by_button,
            Status::Approved,
            Decision::AllowOnce,
            Via::DiscordButton,
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
    c.fake.slow(POST_MESSAGE, None);
    c.still_pending(&by_stranger).await;
    for r in [&by_reaction, &by_reply, &by_button] {
        let m = c.message_of(r).await;
        assert_eq!(c.fake.message(m.id).unwrap().edits.len(), 1);
    }
    assert!(
        c.fake
            .messages(c.channel)
            .iter()
            .all(|m| !m.plain.contains("already resolved") && !m.plain.contains("not an approval")),
        "no answer was turned away"
    );
    assert_eq!(c.rules().await.len(), 1);
}

/// Events the client cannot read are logged and skipped; the gateway goes on, and the
/// owner's next answer works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_cannot_be_read_is_skipped_and_the_gateway_goes_on() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make after-junk").await;
    assert!(c.fake.dispatch_raw(
        "MESSAGE_CREATE",
        json!({"id": "not a snowflake", "content": 5})
    ));
    assert!(c.fake.dispatch_raw(
        "MESSAGE_REACTION_ADD",
        json!({"channel_id": CHANNEL_ID.to_string(), "message_id": m.id.to_string()})
    ));
    assert!(
        c.fake
            .dispatch_raw("INTERACTION_CREATE", json!({"type": 3}))
    );
    assert!(c.fake.dispatch_raw("SOMETHING_NEW", json!({"x": 1})));
    c.fake.react(c.channel, &owner(), m.id, "👎");
    let done = c.d.terminal(&r.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Denied, Some(Via::DiscordReaction))
    );
    let (r, _) = c.ask("make later").await;
    c.owner_says(&format!("/approve {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
    assert_eq!(c.fake.identifies().len(), 1, "no reconnect for a bad event");
}

/// docs/lifecycle.md#the-approval-message: the message shows the agent's uid, whether
/// execgate runs the command itself, and the stdin that comes with it.
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
        (hyper::StatusCode::OK, &json!("denied")),
        "{v}"
    );
}

/// A request left pending by a crash is cancelled at the next start, and its Discord
/// message says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_left_message_is_edited_at_the_next_start() {
    let fake = FakeDiscord::start(TOKEN).await;
    let env = discord_env(&fake, &[]);
    let dir = tempfile::tempdir().unwrap();
    let first = Process::start(dir.path(), &as_refs(&env)).await;
    let r = first.ask_no_wait("make crash").await;
    let id = r["id"].as_str().unwrap().to_string();
    let needle = format!("ID: {}\n", r["short_id"].as_str().unwrap());
    let m = fake
        .wait_until("the approval message", |f| {
            f.messages(CHANNEL_ID)
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

    let second = Process::start(dir.path(), &as_refs(&env)).await;
    let edited = fake
        .wait_until("the edit", |f| {
            f.message(m.id).filter(|m| !m.edits.is_empty())
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

/// `discord.channel_id` unset: a DM with the first owner, opened by the bot, with only
/// the DM intents; answers there work, other talk is told how to answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_channel_the_owner_is_asked_in_a_dm() {
    let c = Chat::start(&[("EXECGATE_DISCORD__CHANNEL_ID", "")]).await;
    assert_ne!(c.channel, CHANNEL_ID);
    let identified = c.fake.identifies();
    assert_eq!(
        identified[0].intents,
        intents::DIRECT_MESSAGES | intents::DIRECT_MESSAGE_REACTIONS,
        "no privileged intent for a DM"
    );
    let (a, ma) = c.ask("make dm-a").await;
    let (b, mb) = c.ask("make dm-b").await;
    let (e, me) = c.ask("make dm-c").await;
    assert_eq!(
        message_external_id(&c.d, &a.id).await,
        Some(format!("discord:@{}:{}", owner().id, ma.id))
    );
    c.owner_says(&format!("/approve {}", a.short_id));
    c.fake.react(c.channel, &owner(), mb.id, "❌");
    c.press(&owner(), &me, Decision::AllowOnce, &e);
    for (r, via) in [
        (&a, Via::DiscordCommand),
        (&b, Via::DiscordReaction),
        (&e, Via::DiscordButton),
    ] {
        assert_eq!(c.d.terminal(&r.id).await.via, Some(via));
    }
    let talk = c.owner_says("hi");
    assert_eq!(c.reply_to(talk).await, "Not a command. Send /help.");
    // The server channel is not where requests are answered now.
    let (r, _) = c.ask("make dm-d").await;
    c.fake
        .say(CHANNEL_ID, &owner(), &format!("/approve {}", r.short_id));
    c.still_pending(&r).await;
}

/// The gateway asks for a reconnect (op 7), invalidates the session (op 9, resumable or
/// not), drops the connection, and stops acknowledging heartbeats: the bot resumes or
/// identifies again as Discord says, and answers keep arriving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_connection_survives_what_discord_does_to_it() {
    let fake = FakeDiscord::start(TOKEN).await;
    fake.set_heartbeat_interval(400);
    let c = Chat::start_with(fake, &[]).await;
    let answer = |name: &'static str| {
        let c = &c;
        async move {
            let (r, _) = c.ask(&format!("make {name}")).await;
            c.owner_says(&format!("/approve {}", r.short_id));
            assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved, "{name}");
        }
    };
    answer("first").await;
    c.fake
        .wait_until("heartbeats", |f| (f.heartbeats() > 1).then_some(()))
        .await;

    assert!(c.fake.reconnect());
    c.fake
        .wait_until("a resume after op 7", |f| (f.resumes() >= 1).then_some(()))
        .await;
    answer("after-reconnect").await;

    assert!(c.fake.invalidate_session(true));
    c.fake
        .wait_until("a resume after op 9 (resumable)", |f| {
            (f.resumes() >= 2).then_some(())
        })
        .await;
    answer("after-resumable-invalid").await;

    assert!(c.fake.invalidate_session(false));
    c.fake
        .wait_until("a new identify after op 9", |f| {
            (f.identifies().len() >= 2).then_some(())
        })
        .await;
    c.fake.wait_connected().await;
    answer("after-invalid").await;

    // From the bot's side the connection goes quiet: it must notice, and come back.
    c.fake.stop_acking_heartbeats(true);
    let connections = c.fake.connections().0;
    c.fake
        .wait_until("a new connection after a zombie", |f| {
            (f.connections().0 > connections).then_some(())
        })
        .await;
    c.fake.stop_acking_heartbeats(false);
    c.fake.wait_connected().await;
    answer("after-zombie").await;
}

/// Discord and Telegram on one daemon: the request is posted to both; the first answer
/// wins, and both messages are edited with the outcome; the other chat's answer is told
/// it came too late.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_and_telegram_answer_the_same_request_first_wins() {
    use common::fake_telegram::{self as tg, FakeTelegram};
    const TG_TOKEN: &str = "7000000001:AAtest-token-for-the-fake-bot-api";
    let telegram = FakeTelegram::start(TG_TOKEN).await;
    let fake = FakeDiscord::start(TOKEN).await;
    let tg_owner = tg::User::owner();
    let tg_env = [
        ("EXECGATE_TELEGRAM__BOT_TOKEN", TG_TOKEN.to_string()),
        ("EXECGATE_TELEGRAM__OWNER_IDS", tg_owner.id.to_string()),
        ("EXECGATE_TELEGRAM__API_URL", telegram.url()),
    ];
    let tg_env: Vec<(&str, &str)> = tg_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let c = Chat::start_with(fake, &tg_env).await;
    let (r, m) = c.ask("make both").await;
    let needle = format!("ID: {}\n", r.short_id);
    let tm = telegram
        .wait_for_message(tg_owner.id, |plain| plain.contains(&needle))
        .await;

    c.press(&owner(), &m, Decision::Deny, &r);
    let done = c.d.terminal(&r.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Denied, Some(Via::DiscordButton))
    );
    let closed = c.closed(&m).await;
    assert!(closed.plain.starts_with("❌ Denied\n"), "{}", closed.plain);
    let tg_closed = telegram
        .wait_until("the Telegram message edited", |f| {
            f.message(tg_owner.id, tm.message_id)
                .filter(|m| !m.edits.is_empty())
        })
        .await;
    assert!(
        tg_closed.plain.starts_with("❌ Denied\n"),
        "{}",
        tg_closed.plain
    );
    assert!(
        tg_closed.plain.contains("via discord-button"),
        "{}",
        tg_closed.plain
    );

    // Too late on Telegram: told so, nothing changes.
    let (_, said) = telegram.send_text(tg_owner.id, &tg_owner, &format!("/approve {}", r.short_id));
    let late = telegram
        .wait_until("the Telegram reply", |f| {
            f.messages(tg_owner.id)
                .into_iter()
                .find(|m| m.reply_to == Some(said))
        })
        .await;
    assert_eq!(
        late.plain,
        format!("approval {} not found or already resolved", r.short_id)
    );
    assert_eq!(c.d.record(&r.id).await.status, Status::Denied);
}
