//! The Slack transport end to end: the real daemon, its sockets, and its Slack client
//! talking HTTP and Socket Mode to a fake Slack that behaves as Slack does
//! (`common::fake_slack`).

use execgate_testkit as common;

use std::time::Duration;

use common::fake_slack::*;
use common::process::Process;
use common::*;
use execgate::model::{Decision, Record, Status, Via};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

/// A daemon whose Slack transport talks to a fake Slack.
/// How long a test waits for an edit that queues behind others at Slack's pace.
const EDIT_WAIT: Duration = Duration::from_secs(30);

struct Chat {
    fake: FakeSlack,
    d: TestDaemon,
    /// The channel requests go to.
    channel: String,
}

fn owner() -> User {
    User::owner()
}

fn stranger() -> User {
    User::stranger()
}

/// The environment that points a daemon at `fake`, the owner its only owner, in
/// [`CHANNEL`].
fn slack_env(fake: &FakeSlack, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = vec![
        ("EXECGATE_SLACK__APP_TOKEN", APP_TOKEN.to_string()),
        ("EXECGATE_SLACK__BOT_TOKEN", BOT_TOKEN.to_string()),
        ("EXECGATE_SLACK__CHANNEL", CHANNEL.to_string()),
        ("EXECGATE_SLACK__OWNER_IDS", owner().id),
        ("EXECGATE_SLACK__API_URL", fake.url()),
    ];
    let mut env: Vec<(String, String)> = env.drain(..).map(|(k, v)| (k.to_string(), v)).collect();
    for (k, v) in extra {
        env.retain(|(key, _)| key != k);
        env.push((k.to_string(), v.to_string()));
    }
    env
}

impl Chat {
    async fn start(extra: &[(&str, &str)]) -> Chat {
        Self::start_with(FakeSlack::start().await, extra).await
    }

    async fn start_with(fake: FakeSlack, extra: &[(&str, &str)]) -> Chat {
        let env = slack_env(&fake, extra);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let d = TestDaemon::start(&env).await;
        let channel = match d.config().slack.channel.clone().unwrap() {
            c if c.starts_with('U') => fake.im_of(&User::new(&c, "")),
            c => c,
        };
        Chat { fake, d, channel }
    }

    /// Submits `command` without waiting and returns it with its approval message.
    async fn ask(&self, command: &str) -> (Record, SentMessage) {
        let r = self.d.ask_no_wait("claude", command).await;
        let m = self.message_for(&r).await;
        (r, m)
    }

    /// Waits for the approval message of `r`, and for the daemon to have stored which
    /// message it is.
    async fn message_for(&self, r: &Record) -> SentMessage {
        let m = self.message_of(r).await;
        let stored = Some(format!("slack:{}:{}", self.configured(), m.ts));
        assert!(
            eventually(|| async { message_external_id(&self.d, &r.id).await == stored }).await,
            "the message id of {} was never stored",
            r.short_id
        );
        m
    }

    fn configured(&self) -> String {
        self.d.config().slack.channel.clone().unwrap()
    }

    /// The message that first shows `r`, alone or in a digest, once the bot has posted it.
    async fn shown(&self, r: &Record) -> SentMessage {
        let alone = format!("ID: {}\n", r.short_id);
        let in_digest = format!("🔒 {} · ", r.short_id);
        self.fake
            .wait_until(&format!("a message showing {}", r.short_id), |f| {
                f.messages(&self.channel).into_iter().find(|m| {
                    m.thread_ts.is_none()
                        && (m.plain.contains(&alone) || m.plain.contains(&in_digest))
                })
            })
            .await
    }

    /// The approval message of `r`, closed or not, once the bot has posted it.
    async fn message_of(&self, r: &Record) -> SentMessage {
        let needle = format!("ID: {}\n", r.short_id);
        self.fake
            .wait_until(&format!("the message of {}", r.short_id), |f| {
                f.messages(&self.channel)
                    .into_iter()
                    .find(|m| m.thread_ts.is_none() && m.plain.contains(&needle))
            })
            .await
    }

    /// Waits until message `m` has been edited, and returns it as it is then. An edit
    /// may queue behind a dozen replies and edits at Slack's pace of one a second.
    async fn closed(&self, m: &SentMessage) -> SentMessage {
        self.fake
            .wait_until_within(EDIT_WAIT, &format!("message {} edited", m.ts), |f| {
                f.message(&self.channel, &m.ts)
                    .filter(|now| !now.edits.is_empty())
            })
            .await
    }

    /// Waits for the bot's reply in the thread of `to`, and returns its text.
    async fn reply_to(&self, to: &str) -> String {
        self.fake
            .wait_until(&format!("a reply in the thread of {to}"), |f| {
                f.replies_to(&self.channel, to)
                    .into_iter()
                    .next()
                    .map(|m| m.plain)
            })
            .await
    }

    fn replies_to(&self, to: &str) -> Vec<String> {
        self.fake
            .replies_to(&self.channel, to)
            .into_iter()
            .map(|m| m.plain)
            .collect()
    }

    /// The owner says `text` at the top of the channel; returns the message's ts.
    fn owner_says(&self, text: &str) -> String {
        self.fake.says(&owner(), &self.channel, text)
    }

    /// The last ephemeral message `user` was shown, once there are `n`.
    async fn ephemeral(&self, user: &User, n: usize) -> String {
        self.fake
            .wait_until(&format!("{n} ephemeral message(s) for {}", user.id), |f| {
                let shown = f.ephemerals_for(user);
                (shown.len() >= n).then(|| shown[n - 1].plain.clone())
            })
            .await
    }

    /// Lets the daemon acknowledge every envelope queued so far, then a little more: the
    /// way to show that something did *not* happen.
    async fn settle(&self) {
        self.fake.all_acked().await;
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

fn labels(m: &SentMessage) -> Vec<String> {
    m.buttons().into_iter().map(|(t, _)| t).collect()
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
        "Command:\nmake deploy\n".into(),
        "Risk: needs-review".into(),
        format!(
            "Reply: /approve {0} · /approve {0} always · /deny {0}",
            r.short_id
        ),
        "Or react: :+1: once | :white_check_mark: :ok_hand: always | :x: :-1: deny".into(),
        "In Slack, type the commands without the slash, in this message's thread".into(),
    ] {
        assert!(m.plain.contains(&line), "{line:?} not in\n{}", m.plain);
    }
    assert_eq!(labels(&m), ["👍 Allow once", "✅ Always", "❌ Deny"]);
    assert_eq!(m.text, "🔒 Exec approval required", "the notification");
    assert_eq!(m.thread_ts, None);

    // Without the slash, at the top of the channel; the id in any case.
    let said = c.owner_says(&format!("approve {}", r.short_id.to_uppercase()));
    let done = waiting.await.unwrap();
    assert_eq!(
        (done.status, done.decision, done.via),
        (
            Status::Approved,
            Some(Decision::AllowOnce),
            Some(Via::SlackCommand)
        )
    );
    assert_eq!(done.decided_by.as_deref(), Some("slack:U0OWNER01"));
    assert_eq!(
        c.reply_to(&said).await,
        format!("{} approved (allow-once)", r.short_id)
    );
    let closed = c.closed(&m).await;
    assert!(
        closed
            .plain
            .starts_with("✅ Approved once\nby slack:U0OWNER01 via slack-command at "),
        "{}",
        closed.plain
    );
    assert!(closed.plain.contains("Command:\nmake deploy"));
    assert!(closed.buttons().is_empty(), "the buttons are gone");
    // The reply shows in the channel a moment before its call is answered.
    c.fake
        .wait_until("every call answered", |f| {
            f.calls().iter().all(|call| call.finished).then_some(())
        })
        .await;
    assert!(
        c.fake.calls().iter().all(|call| call.authorized && call.ok),
        "{}",
        c.fake.dump_calls(20)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_forms_once_always_deny_and_thread_replies() {
    let c = Chat::start(&[]).await;
    let (a, ma) = c.ask("make a").await;
    let (b, mb) = c.ask("make b").await;
    let (e, me) = c.ask("make e").await;
    let (f, mf) = c.ask("make f").await;
    let (g, mg) = c.ask("make g").await;
    let (h, mh) = c.ask("make h").await;

    c.owner_says(&format!("approve {} always", a.short_id));
    c.owner_says(&format!("deny {}", b.short_id));
    // The slash form, as a client that sends it as text does.
    c.owner_says(&format!("/approve {} deny", e.short_id));
    c.fake
        .replies(&owner(), &c.channel, &mf.ts, "approve always");
    c.fake.replies(&owner(), &c.channel, &mg.ts, "deny");
    // A thread reply also sent to the channel, with its slash.
    c.fake
        .push_event(json!({"type": "message", "subtype": "thread_broadcast",
        "channel": c.channel, "user": owner().id, "text": "/approve once",
        "ts": "1760000900.000001", "thread_ts": mh.ts, "parent_user_id": BOT_USER}));

    let want = [
        (&a, &ma, Status::Approved, Decision::AllowAlways),
        (&b, &mb, Status::Denied, Decision::Deny),
        (&e, &me, Status::Denied, Decision::Deny),
        (&f, &mf, Status::Approved, Decision::AllowAlways),
        (&g, &mg, Status::Denied, Decision::Deny),
        (&h, &mh, Status::Approved, Decision::AllowOnce),
    ];
    for (r, m, status, decision) in want {
        let done = c.d.terminal(&r.id).await;
        assert_eq!(
            (done.status, done.decision, done.via),
            (status, Some(decision), Some(Via::SlackCommand)),
            "{}",
            r.command.display()
        );
        c.closed(m).await;
    }
    // A thread reply is answered in that thread.
    assert_eq!(
        c.reply_to(&mf.ts).await,
        format!("{} approved (allow-always)", f.short_id)
    );
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
    assert_eq!(c.d.ask("claude", "make a").await.via, Some(Via::Allowlist));

    // Help, with Slack's reaction names; a reply in a thread that is not a request's;
    // a bare command.
    let help = c.owner_says("help");
    let help_reply = c.reply_to(&help).await;
    assert!(help_reply.contains("/approve ID always"), "{help_reply}");
    assert!(
        help_reply.contains(":ok_hand: allow-always"),
        "{help_reply}"
    );
    let in_help_thread = c.fake.replies(&owner(), &c.channel, &help, "approve");
    let answers = c
        .fake
        .wait_until("the answer in the help thread", |f| {
            let replies = f.replies_to(&c.channel, &help);
            (replies.len() >= 2).then(|| replies[1].plain.clone())
        })
        .await;
    assert!(answers.contains("not an approval request"), "{answers}");
    let _ = in_help_thread;
    let bare = c.owner_says("approve");
    assert!(c.reply_to(&bare).await.contains("Which request?"));
    // Talk in the channel that only begins like a command is not answered.
    let talk = c.owner_says("approve of the plan, all of you");
    c.settle().await;
    assert!(c.replies_to(&talk).is_empty(), "{:?}", c.replies_to(&talk));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_approves_by_each_reaction() {
    let c = Chat::start(&[]).await;
    let mut asked = Vec::new();
    let names = [
        "+1",
        "ok_hand",
        "-1",
        "white_check_mark",
        "x",
        "+1::skin-tone-4",
        "thumbsdown",
    ];
    for name in names {
        asked.push(c.ask(&format!("make {}", name.replace(':', "-"))).await);
    }
    let want = [
        (Status::Approved, Decision::AllowOnce),
        (Status::Approved, Decision::AllowAlways),
        (Status::Denied, Decision::Deny),
        (Status::Approved, Decision::AllowAlways),
        (Status::Denied, Decision::Deny),
        (Status::Approved, Decision::AllowOnce),
        (Status::Denied, Decision::Deny),
    ];
    for ((r, m), name) in asked.iter().zip(names) {
        c.fake.reacts(&owner(), &c.channel, &m.ts, name);
        c.d.terminal(&r.id).await;
    }
    for ((r, m), (status, decision)) in asked.iter().zip(want) {
        let done = c.d.record(&r.id).await;
        assert_eq!(
            (done.status, done.decision, done.via),
            (status, Some(decision), Some(Via::SlackReaction)),
            "{}",
            r.command.display()
        );
        let closed = c.closed(m).await;
        assert!(
            closed.plain.contains("via slack-reaction"),
            "{}",
            closed.plain
        );
        assert!(c.replies_to(&m.ts).is_empty(), "success needs no reply");
    }
    assert_eq!(c.rules().await.len(), 2);

    // Reacting again on a request that is over is told so.
    let (r, m) = &asked[0];
    c.fake.reacts(&owner(), &c.channel, &m.ts, "x");
    assert_eq!(
        c.reply_to(&m.ts).await,
        format!("approval {} not found or already resolved", r.short_id)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reactions_that_mean_nothing_change_nothing() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make test").await;
    // An unmapped emoji; a 👍 taken back; a reaction on a message that is not a request.
    c.fake.reacts(&owner(), &c.channel, &m.ts, "fire");
    c.fake.unreacts(&owner(), &c.channel, &m.ts, "+1");
    let other = c.owner_says("hello");
    c.fake.reacts(&owner(), &c.channel, &other, "+1");
    c.still_pending(&r).await;
    assert!(c.replies_to(&other).iter().all(|t| !t.contains("approv")));
    assert!(c.replies_to(&m.ts).is_empty());

    c.fake.reacts(&owner(), &c.channel, &m.ts, "-1");
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_answers_by_each_button_and_every_press_is_answered() {
    let c = Chat::start(&[]).await;
    let mut asked = Vec::new();
    for name in ["once", "always", "deny"] {
        asked.push(c.ask(&format!("make {name}")).await);
    }
    let presses = [
        ("👍 Allow once", Decision::AllowOnce),
        ("✅ Always", Decision::AllowAlways),
        ("❌ Deny", Decision::Deny),
    ];
    for (n, ((r, m), (label, decision))) in asked.iter().zip(presses).enumerate() {
        c.fake.presses(&owner(), &c.channel, &m.ts, label);
        let done = c.d.terminal(&r.id).await;
        assert_eq!(
            (done.decision, done.via, done.decided_by.as_deref()),
            (
                Some(decision),
                Some(Via::SlackButton),
                Some("slack:U0OWNER01")
            )
        );
        let answer = c.ephemeral(&owner(), n + 1).await;
        assert!(answer.contains(&r.short_id), "{answer}");
        assert!(c.closed(m).await.buttons().is_empty());
    }
    // A second press on a closed request is answered too, and changes nothing.
    let (r, m) = &asked[0];
    c.fake
        .presses_value(&owner(), &c.channel, &m.ts, &format!("deny:{}", r.id));
    assert_eq!(
        c.ephemeral(&owner(), 4).await,
        format!("approval {} not found or already resolved", r.short_id)
    );
    assert_eq!(c.d.record(&r.id).await.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_owners_in_the_configured_channel_resolve_anything() {
    let owners = format!("{},{}", owner().id, User::co_owner().id);
    let c = Chat::start(&[("EXECGATE_SLACK__OWNER_IDS", &owners)]).await;
    let (r, m) = c.ask("make deploy").await;

    // A stranger's command, thread reply, reaction and button.
    c.fake
        .says(&stranger(), &c.channel, &format!("approve {}", r.short_id));
    c.fake
        .replies(&stranger(), &c.channel, &m.ts, "approve always");
    c.fake.reacts(&stranger(), &c.channel, &m.ts, "+1");
    c.fake
        .presses(&stranger(), &c.channel, &m.ts, "👍 Allow once");
    // Another bot's message (bot_id), and the bot's own reaction.
    c.fake.push_event(json!({"type": "message", "channel": c.channel, "user": "U0OTHERBT",
        "bot_id": "B0OTHERBT", "text": format!("approve {}", r.short_id), "ts": "1760000999.000001"}));
    c.fake
        .reacts(&User::new(BOT_USER, "execgate"), &c.channel, &m.ts, "+1");
    // The owner in another channel: a DM, and a channel the bot is in but not configured.
    let dm = c.fake.im_of(&owner());
    c.fake
        .says(&owner(), &dm, &format!("approve {}", r.short_id));
    c.fake
        .add_channel("C0OTHER01", "channel", &[BOT_USER, "U0OWNER01"]);
    c.fake
        .says(&owner(), "C0OTHER01", &format!("approve {}", r.short_id));
    c.fake.reacts(&owner(), "C0OTHER01", &m.ts, "+1");
    // The owner editing a message into a command.
    let said = c.owner_says("hello");
    c.fake.edits(
        &owner(),
        &c.channel,
        &said,
        &format!("approve {}", r.short_id),
    );

    c.still_pending(&r).await;
    let answer = c.ephemeral(&stranger(), 1).await;
    assert!(answer.starts_with("Only the owners"), "{answer}");
    assert!(
        c.fake.messages(&dm).is_empty(),
        "nothing is said in a channel not configured"
    );
    assert!(c.fake.messages("C0OTHER01").is_empty());
    let replies: Vec<SentMessage> = c
        .fake
        .messages(&c.channel)
        .into_iter()
        .filter(|m| m.thread_ts.is_some())
        .collect();
    assert!(replies.is_empty(), "strangers get no replies: {replies:?}");

    // The second owner, in the request's thread: that one counts.
    c.fake
        .replies(&User::co_owner(), &c.channel, &m.ts, "approve");
    let done = c.d.terminal(&r.id).await;
    assert_eq!(done.status, Status::Approved);
    assert_eq!(done.decided_by.as_deref(), Some("slack:U0OWNER02"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_button_naming_another_request_changes_nothing() {
    let c = Chat::start(&[]).await;
    let (a, ma) = c.ask("make a").await;
    let (b, _) = c.ask("make b").await;
    // Clients choose the value they send: the value names b, the message is a's.
    c.fake.presses_value(
        &owner(),
        &c.channel,
        &ma.ts,
        &format!("allow-once:{}", b.id),
    );
    assert!(c.ephemeral(&owner(), 1).await.contains("does not belong"));
    c.fake
        .presses_value(&owner(), &c.channel, &ma.ts, "sudo:rm -rf /");
    assert!(
        c.ephemeral(&owner(), 2)
            .await
            .contains("not one of execgate's")
    );
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
    assert_eq!(
        labels(&m),
        ["👍 Allow once", "🕘 This session", "✅ Always", "❌ Deny"]
    );
    c.fake
        .presses(&owner(), &c.channel, &m.ts, "🕘 This session");
    let done = c.d.terminal(&r.id).await;
    assert_eq!(
        (done.decision, done.via),
        (Some(Decision::AllowSession), Some(Via::SlackButton))
    );
    let closed = c.closed(&m).await;
    assert!(
        closed
            .plain
            .starts_with("✅ Approved for this session (rule saved for it)"),
        "{}",
        closed.plain
    );
    assert_eq!(ask("sess-7").await.via, Some(Via::Allowlist));
    let other = ask("sess-8").await;
    assert_eq!(other.status, Status::Pending);
    let mo = c.message_for(&other).await;
    c.fake
        .replies(&owner(), &c.channel, &mo.ts, "approve session 2h");
    let reply = c.reply_to(&mo.ts).await;
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
    assert_eq!(labels(&m), ["👍 Allow once", "❌ Deny"]);
    assert!(
        m.plain
            .contains("\"Always\" and \"This session\" are not offered: the command is dangerous"),
        "{}",
        m.plain
    );
    let said = c.owner_says(&format!("approve {} always", r.short_id));
    let reply = c.reply_to(&said).await;
    assert!(reply.contains("\"always\" refused"), "{reply}");
    assert!(reply.contains("still pending"), "{reply}");
    // A hand-made Always button and an always-meaning reaction fare no better.
    c.fake.presses_value(
        &owner(),
        &c.channel,
        &m.ts,
        &format!("allow-always:{}", r.id),
    );
    assert!(c.ephemeral(&owner(), 1).await.contains("refused"));
    c.fake.reacts(&owner(), &c.channel, &m.ts, "ok_hand");
    assert!(c.reply_to(&m.ts).await.contains("refused"));
    c.still_pending(&r).await;
    assert!(c.rules().await.is_empty());

    c.owner_says(&format!("deny {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_resolved_ids_get_the_short_reply() {
    let c = Chat::start(&[]).await;
    let (r, _) = c.ask("make test").await;
    let unknown = if r.short_id == "ffff" { "fffe" } else { "ffff" };
    let said = c.owner_says(&format!("approve {unknown}"));
    assert_eq!(
        c.reply_to(&said).await,
        format!("approval {unknown} not found or already resolved")
    );
    let said = c.owner_says("/approve zz");
    assert!(c.reply_to(&said).await.contains("is not a request id"));

    let said = c.owner_says(&format!("deny {}", r.short_id));
    c.reply_to(&said).await;
    let said = c.owner_says(&format!("approve {}", r.short_id));
    assert_eq!(
        c.reply_to(&said).await,
        format!("approval {} not found or already resolved", r.short_id)
    );
    assert_eq!(c.d.record(&r.id).await.status, Status::Denied);
}

/// Slack sends an event again, in a new envelope with the same event id, when it thinks
/// the first acknowledgement late: it is handled once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_event_twice_resolves_once() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make test").await;
    let said = c.owner_says(&format!("approve {} always", r.short_id));
    c.d.terminal(&r.id).await;
    c.fake.all_acked().await;
    let first = c
        .fake
        .envelopes()
        .into_iter()
        .find(|e| e.payload["event"]["ts"] == json!(said))
        .unwrap();
    let again = c.fake.push_envelope("events_api", first.payload.clone());
    assert_ne!(again, first.envelope_id);
    c.settle().await;
    assert_eq!(
        c.replies_to(&said),
        [format!("{} approved (allow-always)", r.short_id)]
    );
    assert_eq!(c.rules().await.len(), 1);
    c.closed(&m).await;

    // The same command sent again is a new event: it finds the request resolved.
    let said = c.owner_says(&format!("approve {}", r.short_id));
    assert!(c.reply_to(&said).await.contains("already resolved"));
    assert_eq!(
        c.d.record(&r.id).await.decision,
        Some(Decision::AllowAlways)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_and_allowlist_answer_in_chat() {
    let c = Chat::start(&[]).await;
    let (r, _) = c.ask("make check").await;
    let said = c.owner_says("pending");
    let listed = c.reply_to(&said).await;
    assert!(
        listed.contains(&r.short_id) && listed.contains("make check"),
        "{listed}"
    );
    let said = c.owner_says("allowlist");
    assert_eq!(c.reply_to(&said).await, "The allowlist is empty.");
    c.owner_says(&format!("approve {} always", r.short_id));
    c.d.terminal(&r.id).await;
    let said = c.owner_says("/allowlist");
    assert!(c.reply_to(&said).await.contains("make check"));
    let said = c.owner_says("pending");
    assert_eq!(c.reply_to(&said).await, "No requests are pending.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_outcome_is_shown_whoever_ends_the_request() {
    let mut c = Chat::start(&[]).await;
    let (r, m) = c.ask("make by-cli").await;
    let (status, _) = c.d.decide(&r.id, "deny").await;
    assert_eq!(status, StatusCode::OK);
    let closed = c.closed(&m).await;
    assert!(closed.plain.starts_with("❌ Denied\n"), "{}", closed.plain);
    assert!(closed.plain.contains("via cli"), "{}", closed.plain);
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
    let (_, m) = c.ask("make at-shutdown").await;
    c.d.stop().await;
    let closed = c.fake.message(&c.channel, &m.ts).unwrap();
    assert!(
        closed.plain.starts_with("🚫 Cancelled: execgate shut down"),
        "the edit lands before shutdown returns: {}",
        closed.plain
    );
    assert!(closed.buttons().is_empty());
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

/// Slack's markup in a command (a mention, a broadcast, a link, formatting, a code
/// fence) is shown as typed and means nothing; a huge command is cut and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_and_a_huge_command_render_safely() {
    let c = Chat::start(&[]).await;
    let tricky =
        "echo '<@U0OWNER01> <!channel> <http://e.vil|click> *bold* _it_ ```x``` &amp;' > /tmp/<y>";
    let (_, m) = c.ask(tricky).await;
    assert!(m.plain.contains(tricky), "{}", m.plain);
    assert!(
        !m.text.contains('<'),
        "the notification is escaped: {}",
        m.text
    );
    let runs: Vec<&Value> = m
        .blocks
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "rich_text")
        .flat_map(|b| b["elements"].as_array().unwrap())
        .flat_map(|e| e["elements"].as_array().unwrap())
        .collect();
    assert!(
        runs.iter().all(|r| r["type"] == "text"),
        "no link, user or broadcast elements"
    );
    assert!(
        runs.iter()
            .any(|r| r["text"].as_str().unwrap().contains(tricky))
    );

    let huge = format!("echo {}", "<&>é𝕏".repeat(2000));
    let (r, m) = c.ask(&huge).await;
    assert!(m.plain.encode_utf16().count() <= 4096 + 200);
    use sha2::Digest;
    let hex: String = sha2::Sha256::digest(huge.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(m.plain.contains(&hex), "{}", m.plain);
    assert!(
        m.plain.contains("Reply: /approve"),
        "the answer lines survive the cut"
    );
    c.owner_says(&format!("deny {}", r.short_id));
    c.closed(&m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_api_is_retried_and_answers_still_arrive() {
    let c = Chat::start(&[]).await;
    c.fake
        .fail_next("chat.postMessage", 2, Fault::RateLimited { retry_after: 1 });
    c.fake.fail_next("chat.postMessage", 1, Fault::ServerError);
    c.fake
        .fail_next("chat.postMessage", 1, Fault::Error("internal_error".into()));
    let (r, m) = c.ask("make flaky").await;
    let posts = c.fake.calls_to("chat.postMessage");
    assert_eq!(
        posts.iter().map(|p| p.ok).collect::<Vec<_>>(),
        [false, false, false, false, true]
    );
    // Retry-After is honoured: the second attempt came at least a second after the first.
    assert!(posts[1].at - posts[0].at >= Duration::from_millis(950));
    c.fake
        .fail_next("chat.update", 1, Fault::RateLimited { retry_after: 1 });
    c.owner_says(&format!("approve {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
    assert!(c.closed(&m).await.plain.starts_with("✅ Approved once"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_slows_nothing_allowlisted_and_the_listener_comes_back() {
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
    // Posting and Socket Mode resume on their own.
    let (r, m) = c.ask("make after").await;
    c.owner_says(&format!("approve {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
    c.closed(&m).await;
    assert!(
        c.fake
            .messages(&c.channel)
            .iter()
            .all(|m| !m.plain.contains("make unseen")),
        "a request that ended unseen is not posted late"
    );
    assert!(c.fake.connections() >= 2, "the socket was opened again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_down_at_start_is_waited_for() {
    let fake = FakeSlack::start().await;
    fake.go_down();
    let c = Chat::start_with(fake, &[]).await;
    let r = c.d.ask_no_wait("claude", "make early").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.fake.come_back();
    let m = c.message_for(&r).await;
    c.fake.presses(&owner(), &c.channel, &m.ts, "👍 Allow once");
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
    c.fake
        .wait_until("every call answered", |f| {
            f.calls().iter().all(|call| call.finished).then_some(())
        })
        .await;
    let posts = c.fake.calls_to("chat.postMessage");
    // A burst of a few alone; those the pacing would hold wait in a digest, not a queue.
    assert!(posts.len() < 8, "{}", c.fake.dump_calls(10));
    assert!(
        posts.iter().all(|p| p.ok),
        "none refused: {}",
        c.fake.dump_calls(10)
    );
    for w in posts.windows(6) {
        assert!(
            w[5].at - w[0].at >= Duration::from_millis(900),
            "six posts within {:?}",
            w[5].at - w[0].at
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_beyond_the_pacing_is_posted_as_digests_each_answered_alone() {
    let c = Chat::start(&[]).await;
    let mut asked = Vec::new();
    for i in 0..14 {
        asked.push(c.d.ask_no_wait("claude", &format!("make job{i}")).await);
    }
    for r in &asked {
        c.shown(r).await;
    }
    let digest = c
        .fake
        .messages(&c.channel)
        .into_iter()
        .find(|m| m.plain.contains(" requests need a decision"))
        .expect("a digest");
    // Its rows: the first button of each names its request.
    let rows: Vec<(String, String)> = digest
        .buttons()
        .into_iter()
        .filter(|(label, _)| label.starts_with("👍 "))
        .collect();
    assert!(rows.len() >= 2, "{}", digest.plain);
    let of = |value: &str| {
        let id = value.split_once(':').unwrap().1;
        asked.iter().find(|r| r.id == id).unwrap().clone()
    };
    let (first, second) = (of(&rows[0].1), of(&rows[1].1));
    assert_eq!(rows[0].0, format!("👍 {}", first.short_id));
    assert!(
        digest.plain.contains("without the slash"),
        "{}",
        digest.plain
    );

    // A reaction cannot say which request it means; a stranger's press changes nothing.
    c.fake.reacts(&owner(), &c.channel, &digest.ts, "+1");
    assert!(c.reply_to(&digest.ts).await.contains("several requests"));
    c.fake
        .presses_value(&stranger(), &c.channel, &digest.ts, &rows[0].1);
    c.still_pending(&first).await;

    // The owner's button answers its own request only; the digest is redrawn.
    c.fake
        .presses_value(&owner(), &c.channel, &digest.ts, &rows[0].1);
    let done = c.d.terminal(&first.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Approved, Some(Via::SlackButton))
    );
    assert_eq!(c.d.record(&second.id).await.status, Status::Pending);
    let redrawn = c.closed(&digest).await;
    assert!(
        redrawn
            .plain
            .contains(&format!("✅ {} Approved once by slack:", first.short_id)),
        "{}",
        redrawn.plain
    );
    assert!(
        !redrawn
            .buttons()
            .iter()
            .any(|(_, v)| v.ends_with(&first.id))
    );
    assert!(
        redrawn
            .buttons()
            .iter()
            .any(|(_, v)| v.ends_with(&second.id))
    );
    // In its thread, without the slash, by id.
    c.fake.replies(
        &owner(),
        &c.channel,
        &digest.ts,
        &format!("deny {}", second.short_id),
    );
    let done = c.d.terminal(&second.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Denied, Some(Via::SlackCommand))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_slack_rejects_stops_startup_and_bad_config_is_named() {
    let fake = FakeSlack::start().await;
    let dir = tempfile::tempdir().unwrap();
    const WRONG: &str = "xoxb-1000000001-2000000000002-SomeoneElsesTokenEntirely";
    let wrong_bot = slack_env(&fake, &[("EXECGATE_SLACK__BOT_TOKEN", WRONG)]);
    let wrong_bot: Vec<(&str, &str)> = wrong_bot
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let out = run_cli(&env_for(dir.path(), &wrong_bot), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("rejected slack.bot_token (invalid_auth)"),
        "{err}"
    );
    assert!(
        !err.contains("SomeoneElses"),
        "the token never reaches the logs: {err}"
    );
    assert!(!dir.path().join("run/agent.sock").exists());

    fake.revoke(APP_TOKEN);
    let revoked = slack_env(&fake, &[]);
    let revoked: Vec<(&str, &str)> = revoked
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let out = run_cli(&env_for(dir.path(), &revoked), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("rejected slack.app_token (token_revoked)"),
        "{err}"
    );
    assert!(!err.contains("fakeapptoken"), "{err}");

    let half = [("EXECGATE_SLACK__BOT_TOKEN", BOT_TOKEN)];
    let out = run_cli(&env_for(dir.path(), &half), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("set slack.app_token, slack.channel, slack.owner_ids too"),
        "{err}"
    );
    let not_ids = [
        ("EXECGATE_SLACK__APP_TOKEN", APP_TOKEN),
        ("EXECGATE_SLACK__BOT_TOKEN", BOT_TOKEN),
        ("EXECGATE_SLACK__CHANNEL", "#ops"),
        ("EXECGATE_SLACK__OWNER_IDS", "U0OWNER01"),
    ];
    let out = run_cli(&env_for(dir.path(), &not_ids), &["serve"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("`slack.channel` \"#ops\""),
        "{}",
        stderr(&out)
    );
}

/// What only the owner can fix, found while running (a token revoked, a scope missing,
/// a channel the bot is not in), is said naming the setting; nothing is approved by it,
/// and the CLI goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_while_running_are_named_and_approve_nothing() {
    let fake = FakeSlack::start().await;
    let dir = tempfile::tempdir().unwrap();
    let env = slack_env(&fake, &[("EXECGATE_APPROVAL__TIMEOUT_SECS", "30")]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let daemon = Process::start(dir.path(), &env).await;
    fake.wait_until("the socket", |f| (f.connections() == 1).then_some(()))
        .await;

    fake.remove_scope("chat:write");
    let first = daemon.ask_no_wait("make one").await;
    fake.wait_until("a refused post", |f| {
        f.calls_to("chat.postMessage")
            .iter()
            .any(|c| c.error.as_deref() == Some("missing_scope"))
            .then_some(())
    })
    .await;
    fake.add_scope("chat:write");
    fake.remove_bot_from(CHANNEL);
    fake.wait_until("a post refused for the channel", |f| {
        f.calls_to("chat.postMessage")
            .iter()
            .any(|c| c.error.as_deref() == Some("not_in_channel"))
            .then_some(())
    })
    .await;
    fake.revoke(APP_TOKEN);
    fake.drop_sockets();
    fake.wait_until("the socket refused again", |f| {
        f.calls_to("apps.connections.open")
            .iter()
            .any(|c| c.error.as_deref() == Some("token_revoked"))
            .then_some(())
    })
    .await;
    // The CLI decides meanwhile; nothing was approved by a failure.
    let id = first["id"].as_str().unwrap();
    let out = run_cli(&daemon.env, &["deny", id]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
    assert!(log.contains("lacks the chat:write scope"), "{log}");
    assert!(log.contains("cannot post in slack.channel"), "{log}");
    assert!(
        log.contains("Slack rejected slack.app_token (token_revoked)"),
        "{log}"
    );
    assert!(
        !log.contains("fakeapptoken") && !log.contains("FakeBotToken"),
        "{log}"
    );
    let db = db::open(&db_path(dir.path()));
    let status: String = db
        .query_row("SELECT status FROM exec_approval WHERE id = ?", [id], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(status, "denied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_edits_pending_messages() {
    let fake = FakeSlack::start().await;
    let dir = tempfile::tempdir().unwrap();
    let env = slack_env(&fake, &[]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let daemon = Process::start(dir.path(), &env).await;
    let first = daemon.ask_no_wait("make one").await;
    let second = daemon.ask_no_wait("make two").await;
    let short = |r: &Value| r["short_id"].as_str().unwrap().to_string();
    let message = |r: &Value| {
        let needle = format!("ID: {}\n", short(r));
        let fake = &fake;
        async move {
            fake.wait_until("an approval message", |f| {
                f.messages(CHANNEL)
                    .into_iter()
                    .find(|m| m.plain.contains(&needle))
            })
            .await
        }
    };
    message(&first).await;
    let pending = message(&second).await;
    let said = fake.says(&owner(), CHANNEL, &format!("approve {}", short(&first)));
    fake.wait_until("the reply", |f| {
        f.replies_to(CHANNEL, &said).into_iter().next()
    })
    .await;

    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
    let closed = fake.message(CHANNEL, &pending.ts).unwrap();
    assert!(
        closed.plain.starts_with("🚫 Cancelled: execgate shut down"),
        "{}",
        closed.plain
    );
    for secret in [
        "FakeBotTokenForExecgate",
        "fakeapptokenforexecgate",
        "ticket-",
    ] {
        assert!(!log.contains(secret), "{secret} reached the logs");
    }
    assert!(log.contains("connected to the Slack Web API"), "{log}");
}

/// The owner's reaction can reach the daemon before it has stored which message carries
/// the request (here another connection holds SQLite's write lock). It still counts, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_outruns_the_stored_message_id_still_counts() {
    let c = Chat::start(&[]).await;
    c.fake
        .fail_next("chat.postMessage", 1, Fault::RateLimited { retry_after: 2 });
    let r = c.d.ask_no_wait("claude", "make racing").await;
    c.fake
        .wait_until("the first post refused", |f| {
            f.calls_to("chat.postMessage")
                .into_iter()
                .find(|c| c.finished)
        })
        .await;
    let lock = c.d.hold_write_lock().await;
    c.fake.answer_on_post(
        &c.channel,
        "make racing",
        OnPost::React {
            user: owner(),
            reaction: "+1".into(),
        },
    );
    let answered = c
        .fake
        .wait_until("the owner's reaction", |f| {
            f.answered_posts().into_iter().next()
        })
        .await;
    c.fake
        .wait_until("the reaction acknowledged", |f| {
            f.acks().contains(&answered.envelope_id).then_some(())
        })
        .await;
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
            Some(Via::SlackReaction)
        )
    );
    let m = c.message_of(&r).await;
    let closed = c.closed(&m).await;
    c.settle().await;
    assert_eq!(c.fake.message(&c.channel, &m.ts).unwrap().edits.len(), 1);
    assert!(
        closed.plain.starts_with("✅ Approved once"),
        "{}",
        closed.plain
    );
    assert!(c.replies_to(&m.ts).is_empty(), "{:?}", c.replies_to(&m.ts));
}

/// Answers given the instant the approval message exists, before chat.postMessage has
/// returned: a reaction, a thread reply and a button each resolve their request once; a
/// stranger's answer held the same way changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_given_before_post_message_returns_are_held_not_lost() {
    let c = Chat::start(&[]).await;
    c.fake
        .answer_late("chat.postMessage", 4, Duration::from_millis(700));
    let on_post =
        |command: &str, answer: OnPost| c.fake.answer_on_post(&c.channel, command, answer);
    on_post(
        "make by-reaction",
        OnPost::React {
            user: owner(),
            reaction: "-1".into(),
        },
    );
    on_post(
        "make by-reply",
        OnPost::Reply {
            user: owner(),
            text: "approve always".into(),
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
            user: stranger(),
            reaction: "+1".into(),
        },
    );
    let by_reaction = c.d.ask_no_wait("claude", "make by-reaction").await;
    let by_reply = c.d.ask_no_wait("claude", "make by-reply").await;
    let by_button = c.d.ask_no_wait("claude", "make by-button").await;
    let by_stranger = c.d.ask_no_wait("claude", "make by-stranger").await;

    let want = [
        (
            &by_reaction,
            Status::Denied,
            Decision::Deny,
            Via::SlackReaction,
        ),
        (
            &by_reply,
            Status::Approved,
            Decision::AllowAlways,
            Via::SlackCommand,
        ),
        (
            &by_button,
            Status::Approved,
            Decision::AllowOnce,
            Via::SlackButton,
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
    for r in [&by_reaction, &by_reply, &by_button] {
        let m = c.message_of(r).await;
        assert_eq!(
            c.fake.message(&c.channel, &m.ts).unwrap().edits.len(),
            1,
            "{}",
            r.command.display()
        );
    }
    let m = c.message_of(&by_reply).await;
    assert_eq!(
        c.reply_to(&m.ts).await,
        format!("{} approved (allow-always)", by_reply.short_id)
    );
    assert_eq!(
        c.ephemeral(&owner(), 1).await,
        format!("{} approved (allow-once)", by_button.short_id)
    );
    assert!(
        c.fake
            .messages(&c.channel)
            .iter()
            .all(|m| !m.plain.contains("already resolved") && !m.plain.contains("not an approval")),
        "no answer was turned away"
    );
    assert_eq!(c.rules().await.len(), 1);
}

/// Frames and envelopes that cannot be read are skipped (acknowledged, so Slack does
/// not send them forever), and the listener goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_envelope_is_skipped_and_the_listener_goes_on() {
    let c = Chat::start(&[]).await;
    let (r, m) = c.ask("make after-junk").await;
    c.fake.send_raw("this is not JSON {");
    c.fake.send_raw(r#"{"type": "something_new"}"#);
    let bad = c
        .fake
        .push_event(json!({"type": "message", "channel": 5, "ts": []}));
    let odd = c.fake.push_envelope("events_api", json!("not an object"));
    let unknown = c.fake.push_envelope("brand_new_kind", json!({"x": 1}));
    let no_actions = c
        .fake
        .push_envelope("interactive", json!({"type": "block_actions"}));
    c.fake.reacts(&owner(), &c.channel, &m.ts, "-1");
    let done = c.d.terminal(&r.id).await;
    assert_eq!(
        (done.status, done.via),
        (Status::Denied, Some(Via::SlackReaction))
    );
    c.settle().await;
    let acks = c.fake.acks();
    for id in [&bad, &odd, &unknown, &no_actions] {
        assert!(acks.contains(id), "{id} acknowledged");
    }
    assert_eq!(c.fake.connections(), 1, "the connection was kept");

    let (r, _) = c.ask("make later").await;
    c.owner_says(&format!("approve {}", r.short_id));
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
}

/// Socket Mode as Slack runs it: every envelope acknowledged by its id; `disconnect`
/// (a refresh) and a dropped socket are followed by a new connection, and answers given
/// meanwhile arrive once it is open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn envelopes_are_acknowledged_and_connections_come_back() {
    let c = Chat::start(&[]).await;
    let (a, ma) = c.ask("make a").await;
    c.fake.all_acked().await;
    c.fake.disconnect("refresh_requested");
    c.fake
        .wait_until("a second connection", |f| {
            (f.connections() == 2).then_some(())
        })
        .await;
    c.fake.reacts(&owner(), &c.channel, &ma.ts, "+1");
    assert_eq!(c.d.terminal(&a.id).await.status, Status::Approved);

    let (b, mb) = c.ask("make b").await;
    c.fake.all_acked().await;
    assert!(
        c.fake.envelopes().iter().all(|e| e.sent == 1),
        "acknowledged in time, nothing sent twice"
    );
    // The reaction may go out on the socket being dropped: then it is sent again, with
    // its attempt counted, on the next one.
    c.fake.drop_sockets();
    c.fake.reacts(&owner(), &c.channel, &mb.ts, "x");
    assert_eq!(c.d.terminal(&b.id).await.status, Status::Denied);
    assert!(c.fake.connections() >= 3);
    c.settle().await;
    for e in c.fake.envelopes() {
        assert!(e.acked, "{} ({}) acknowledged", e.envelope_id, e.kind);
    }
    assert_eq!(c.d.record(&b.id).await.via, Some(Via::SlackReaction));
}

/// `slack.channel` a user id: the direct messages with that user, opened at connect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_id_means_the_direct_messages() {
    let c = Chat::start(&[("EXECGATE_SLACK__CHANNEL", "U0OWNER01")]).await;
    assert!(c.channel.starts_with('D'), "{}", c.channel);
    let (r, m) = c.ask("make dm").await;
    assert_eq!(
        message_external_id(&c.d, &r.id).await,
        Some(format!("slack:U0OWNER01:{}", m.ts))
    );
    let talk = c.owner_says("hi there");
    assert_eq!(c.reply_to(&talk).await, "Not a command. Send help.");
    c.fake.replies(&owner(), &c.channel, &m.ts, "approve");
    assert_eq!(c.d.terminal(&r.id).await.status, Status::Approved);
    c.closed(&m).await;
    assert_eq!(c.fake.calls_to("conversations.open").len(), 1);
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
    c.owner_says(&format!("deny {}", r.short_id));
    let (status, v) = waiting.await.unwrap();
    assert_eq!(
        (status, &v["status"]),
        (StatusCode::OK, &json!("denied")),
        "{v}"
    );
}

/// A request left pending by a crash is cancelled at the next start, and its Slack
/// message says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_left_message_is_edited_at_the_next_start() {
    let fake = FakeSlack::start().await;
    let env = slack_env(&fake, &[]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let dir = tempfile::tempdir().unwrap();
    let first = Process::start(dir.path(), &env).await;
    let r = first.ask_no_wait("make crash").await;
    let id = r["id"].as_str().unwrap().to_string();
    let needle = format!("ID: {}\n", r["short_id"].as_str().unwrap());
    let m = fake
        .wait_until("the approval message", |f| {
            f.messages(CHANNEL)
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
            f.message(CHANNEL, &m.ts).filter(|m| !m.edits.is_empty())
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

/// Slack and Telegram on one daemon: the first answer wins, and both messages are
/// edited with the outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_and_telegram_answer_the_same_request() {
    use common::fake_telegram::{FakeTelegram, User as TelegramUser};
    const TG_TOKEN: &str = "7000000001:AAtest-token-for-the-fake-bot-api";
    let telegram = FakeTelegram::start(TG_TOKEN).await;
    let tg_owner = TelegramUser::owner().id.to_string();
    let tg_url = telegram.url();
    let c = Chat::start(&[
        ("EXECGATE_TELEGRAM__BOT_TOKEN", TG_TOKEN),
        ("EXECGATE_TELEGRAM__OWNER_IDS", &tg_owner),
        ("EXECGATE_TELEGRAM__API_URL", &tg_url),
    ])
    .await;
    let chat = TelegramUser::owner().id;
    for (answer_in_slack, command) in [(true, "make first"), (false, "make second")] {
        let r = c.d.ask_no_wait("claude", command).await;
        let m = c.message_of(&r).await;
        let needle = format!("ID: {}\n", r.short_id);
        let tm = telegram
            .wait_until("the Telegram message", |f| {
                f.messages(chat)
                    .into_iter()
                    .find(|m| m.plain.contains(&needle))
            })
            .await;
        if answer_in_slack {
            c.fake.presses(&owner(), &c.channel, &m.ts, "❌ Deny");
        } else {
            telegram.send_text(
                chat,
                &TelegramUser::owner(),
                &format!("/approve {}", r.short_id),
            );
        }
        let done = c.d.terminal(&r.id).await;
        let via = if answer_in_slack {
            Via::SlackButton
        } else {
            Via::TelegramCommand
        };
        assert_eq!(done.via, Some(via));
        let closed = c.closed(&m).await;
        let tclosed = telegram
            .wait_until("the Telegram edit", |f| {
                f.message(chat, tm.message_id)
                    .filter(|m| !m.edits.is_empty())
            })
            .await;
        let word = format!("via {via}");
        assert!(closed.plain.contains(&word), "{}", closed.plain);
        assert!(tclosed.plain.contains(&word), "{}", tclosed.plain);
        // The other chat's late answer finds it over.
        if answer_in_slack {
            let said = telegram
                .send_text(
                    chat,
                    &TelegramUser::owner(),
                    &format!("/approve {}", r.short_id),
                )
                .1;
            telegram
                .wait_until("the late answer's reply", |f| {
                    f.messages(chat)
                        .into_iter()
                        .find(|m| m.reply_to == Some(said) && m.plain.contains("already resolved"))
                })
                .await;
        } else {
            c.fake.reacts(&owner(), &c.channel, &m.ts, "x");
            assert!(c.reply_to(&m.ts).await.contains("already resolved"));
        }
        assert_eq!(c.d.record(&r.id).await.via, Some(via));
    }
}
