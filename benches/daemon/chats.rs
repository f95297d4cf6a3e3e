//! I. The chats: how long a request takes to reach the owner, and an answer to reach the
//! agent, through Matrix (a real Synapse, an encrypted room, the owner on the same SDK
//! in this process) and through Telegram, Slack and Discord (the test suite's fakes, in
//! this process), one daemon with all four configured, in the same run.
//!
//! For each request: submission (`wait: true`, so the agent waits) to the approval
//! message visible in each chat, all watched at once; then the owner's answer, in each
//! chat in turn (a reaction; a button in Discord), to the agent's answer. Beside them,
//! each service's own round trip: for Matrix, the owner's message to the owner's own
//! `/sync` seeing it, which any Matrix client pays; for each fake, one call of its API
//! from this process. Each chat is judged by what it adds to its own round trip.
//! Requests are over five seconds apart, past every chat's pacing (Discord's is five
//! messages in any five seconds).

use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use execgate_testkit::fake_discord::{self, FakeDiscord};
use execgate_testkit::fake_slack::{self, FakeSlack};
use execgate_testkit::fake_telegram::{Actor, FakeTelegram, Reaction, User};
use execgate_testkit::matrix_owner::Owner;
use execgate_testkit::synapse::{Synapse, register};
use hyper::{Method, StatusCode};
use matrix_sdk::ruma::UserId;
use serde_json::{Value, json};
use teloxide::requests::Requester;

use crate::lab::Lab;
use crate::stats::{Stats, show};
use crate::{Plan, REQUESTS};

const TOKEN: &str = "7000000001:AAbench-token-for-the-fake-bot-api";
/// The most a message or an answer may take before the bench calls it lost.
const LIMIT: Duration = Duration::from_secs(30);
/// The pause before each request: each costs a post and an edit in every chat, and
/// Discord lets five messages through in any five seconds.
const SPACING: Duration = Duration::from_millis(2600);
/// What each chat may add to its own service's round trip.
pub const TARGET_ABOVE: Duration = Duration::from_millis(50);

pub struct Chats {
    /// The owner's message to the owner's own sync: the homeserver's round trip.
    pub sync: Stats,
    pub matrix_post: Stats,
    pub matrix_answer: Stats,
    pub telegram_post: Stats,
    pub telegram_answer: Stats,
    /// One Bot API call to the fake (`getMe`) from this process: the fake's own round
    /// trip, which every post and answer pays at least.
    pub telegram_rtt: Stats,
    pub slack_post: Stats,
    pub slack_answer: Stats,
    /// One Web API call to the fake Slack (`auth.test`).
    pub slack_rtt: Stats,
    pub discord_post: Stats,
    pub discord_answer: Stats,
    /// One REST call to the fake Discord (`GET /users/@me`).
    pub discord_rtt: Stats,
}

/// A chat's figures judged against its own service's round trip.
struct Judged<'a> {
    name: &'static str,
    /// The service's own round trip, as named in the verdict.
    against: &'static str,
    rtt: &'a Stats,
    post: &'a Stats,
    answer: &'a Stats,
}

impl Chats {
    fn judged(&self) -> [Judged<'_>; 4] {
        [
            Judged {
                name: "Matrix",
                against: "the homeserver's round trip",
                rtt: &self.sync,
                post: &self.matrix_post,
                answer: &self.matrix_answer,
            },
            Judged {
                name: "Telegram",
                against: "the fake Bot API's round trip",
                rtt: &self.telegram_rtt,
                post: &self.telegram_post,
                answer: &self.telegram_answer,
            },
            Judged {
                name: "Slack",
                against: "the fake Web API's round trip",
                rtt: &self.slack_rtt,
                post: &self.slack_post,
                answer: &self.slack_answer,
            },
            Judged {
                name: "Discord",
                against: "the fake REST API's round trip",
                rtt: &self.discord_rtt,
                post: &self.discord_post,
                answer: &self.discord_answer,
            },
        ]
    }

    pub fn print(&self, judged: bool) {
        println!("\nI. The chats: submission to the message seen, reaction to the agent's answer");
        println!("   {:<38}{}", "", Stats::HEADER);
        for j in self.judged() {
            for (what, s) in [
                ("service round trip", j.rtt),
                ("submitted to seen", j.post),
                ("reaction to answer", j.answer),
            ] {
                println!("   {:<38}{}", format!("{}: {what}", j.name), s.row());
            }
        }
        for j in self.judged() {
            for (what, s) in [("post", j.post), ("answer", j.answer)] {
                let (p50, p99) = above(s, j.rtt);
                let verdict = match (judged, p50 <= TARGET_ABOVE) {
                    (false, _) => "not judged (smoke counts)",
                    (true, true) => "met",
                    (true, false) => "MISSED",
                };
                println!(
                    "   {} {what}: {} above {} at p50, {} at p99 (target ≤ {}): {verdict}",
                    j.name,
                    show(p50),
                    j.against,
                    show(p99),
                    show(TARGET_ABOVE)
                );
            }
        }
    }

    pub fn json(&self) -> Value {
        let mut out = serde_json::Map::new();
        for j in self.judged() {
            let key = j.name.to_lowercase();
            let (post50, post99) = above(j.post, j.rtt);
            let (answer50, answer99) = above(j.answer, j.rtt);
            out.insert(
                key,
                json!({
                    "round_trip": j.rtt.json(),
                    "post": j.post.json(),
                    "answer": j.answer.json(),
                    "post_above_p50_us": crate::stats::us(post50),
                    "post_above_p99_us": crate::stats::us(post99),
                    "answer_above_p50_us": crate::stats::us(answer50),
                    "answer_above_p99_us": crate::stats::us(answer99),
                }),
            );
        }
        Value::Object(out)
    }
}

/// What `s` adds to the service's own round trip `rtt`, at p50 and at p99.
fn above(s: &Stats, rtt: &Stats) -> (Duration, Duration) {
    (s.p50.saturating_sub(rtt.p50), s.p99.saturating_sub(rtt.p99))
}

pub async fn chats(lab: &mut Lab, plan: &Plan) -> Result<Chats> {
    let synapse = Synapse::start().await;
    let bot = register(&synapse.url, "bench-bot").await;
    let owner_account = register(&synapse.url, "bench-owner").await;
    let owner = Owner::login(
        &synapse.url,
        &owner_account,
        &lab.path().join("owner-store"),
    )
    .await;
    let bot_id = UserId::parse(&bot.user_id)?;
    let room = owner.create_room(true, &[&bot_id]).await;
    let fake = FakeTelegram::start(TOKEN).await;
    let slack = FakeSlack::start().await;
    let discord = FakeDiscord::start(fake_discord::TOKEN).await;
    let person = User::owner();
    let chat = person.id;
    let telegram_owner = person.id.to_string();
    let slack_owner = fake_slack::User::owner();
    let discord_owner = fake_discord::User::owner();
    let discord_owner_id = discord_owner.id.to_string();
    let discord_channel = fake_discord::CHANNEL_ID.to_string();
    let (fake_url, slack_url) = (fake.url(), slack.url());
    let (discord_api, discord_gateway) = (discord.api_url(), discord.gateway_url());
    let room_id = room.to_string();
    let env = [
        ("EXECGATE_TELEGRAM__BOT_TOKEN", TOKEN),
        ("EXECGATE_TELEGRAM__OWNER_IDS", telegram_owner.as_str()),
        ("EXECGATE_TELEGRAM__API_URL", fake_url.as_str()),
        ("EXECGATE_MATRIX__HOMESERVER_URL", synapse.url.as_str()),
        ("EXECGATE_MATRIX__USER_ID", bot.user_id.as_str()),
        ("EXECGATE_MATRIX__ACCESS_TOKEN", bot.access_token.as_str()),
        ("EXECGATE_MATRIX__ROOM_ID", room_id.as_str()),
        ("EXECGATE_MATRIX__OWNER_IDS", owner_account.user_id.as_str()),
        ("EXECGATE_SLACK__APP_TOKEN", fake_slack::APP_TOKEN),
        ("EXECGATE_SLACK__BOT_TOKEN", fake_slack::BOT_TOKEN),
        ("EXECGATE_SLACK__CHANNEL", fake_slack::CHANNEL),
        ("EXECGATE_SLACK__OWNER_IDS", slack_owner.id.as_str()),
        ("EXECGATE_SLACK__API_URL", slack_url.as_str()),
        ("EXECGATE_DISCORD__BOT_TOKEN", fake_discord::TOKEN),
        ("EXECGATE_DISCORD__OWNER_IDS", discord_owner_id.as_str()),
        ("EXECGATE_DISCORD__CHANNEL_ID", discord_channel.as_str()),
        ("EXECGATE_DISCORD__API_URL", discord_api.as_str()),
        ("EXECGATE_DISCORD__GATEWAY_URL", discord_gateway.as_str()),
    ];
    let mut daemon = lab
        .start_with(&lab.path().join("state/chats.db"), &env)
        .await?;
    let socket = lab.agent_socket();

    // The homeserver's own round trip, and a first message that waits for the bot to
    // have joined (its first approval message is posted once it has).
    let mut sync = Vec::new();
    for i in 0..plan.chat_requests {
        let text = format!("ping {i}");
        let start = Instant::now();
        owner.say(&room, &text).await;
        owner
            .wait_for("the owner's own message", LIMIT, |s| s.body == text)
            .await;
        sync.push(start.elapsed());
    }
    warm_up(&socket, &owner, &bot.user_id).await?;
    let rtt = FakeRoundTrips::of(&fake, &slack, &discord, plan.chat_requests).await?;

    let mut seen: [Vec<Duration>; 4] = Default::default();
    let mut answered: [Vec<Duration>; 4] = Default::default();
    for i in 0..plan.chat_requests {
        // Each request costs a post and an edit in every chat: spaced out, the figures
        // are the chats', not their pacing's.
        tokio::time::sleep(SPACING).await;
        // Fixed width: no command is the beginning of another.
        let command = format!("make chat-{i:04}");
        let needle = format!("{command}\n");
        let body = json!({"agent": "bench", "command": command, "wait": true});
        let client = execgate::client::Client::new(socket.clone());
        let start = Instant::now();
        let asking =
            tokio::spawn(async move { client.call(Method::POST, REQUESTS, Some(&body)).await });
        let bot_id = bot.user_id.clone();
        let in_matrix = async {
            let m = owner
                .wait_for("the approval message", LIMIT, |s| {
                    s.sender == bot_id && s.replaces.is_none() && s.body.contains(&needle)
                })
                .await;
            anyhow::Ok((m, start.elapsed()))
        };
        let in_telegram = shown(start, "Telegram", || {
            fake.messages(chat)
                .into_iter()
                .find(|m| m.plain.contains(&needle))
        });
        let in_slack = shown(start, "Slack", || {
            slack
                .messages(fake_slack::CHANNEL)
                .into_iter()
                .find(|m| m.thread_ts.is_none() && m.plain.contains(&needle))
        });
        let in_discord = shown(start, "Discord", || {
            discord
                .messages(fake_discord::CHANNEL_ID)
                .into_iter()
                .find(|m| m.reply_to.is_none() && m.plain.contains(&command))
        });
        let (matrix, telegram, slack_seen, discord_seen) =
            tokio::join!(in_matrix, in_telegram, in_slack, in_discord);
        let (m, t, sl, di) = (matrix?, telegram?, slack_seen?, discord_seen?);
        for (k, took) in [m.1, t.1, sl.1, di.1].into_iter().enumerate() {
            seen[k].push(took);
        }

        let which = i % 4;
        let start = Instant::now();
        match which {
            0 => {
                owner.react(&room, &m.0.event_id, "👍").await;
            }
            1 => {
                fake.react(
                    chat,
                    Actor::User(person.clone()),
                    t.0.message_id,
                    vec![],
                    vec![Reaction::Emoji("👍".into())],
                );
            }
            2 => slack.reacts(&slack_owner, fake_slack::CHANNEL, &sl.0.ts, "+1"),
            _ => discord.react(fake_discord::CHANNEL_ID, &discord_owner, di.0.id, "👍"),
        }
        let (status, record) = tokio::time::timeout(LIMIT, asking)
            .await
            .context("the agent's answer")???;
        answered[which].push(start.elapsed());
        ensure!(
            status == StatusCode::OK && record["status"] == "approved",
            "{command}: {status} {record}"
        );
    }
    daemon.stop().await?;
    let [matrix_post, telegram_post, slack_post, discord_post] = seen;
    let [matrix_answer, telegram_answer, slack_answer, discord_answer] = answered;
    Ok(Chats {
        sync: Stats::of(sync)?,
        matrix_post: Stats::of(matrix_post)?,
        matrix_answer: Stats::of(matrix_answer)?,
        telegram_post: Stats::of(telegram_post)?,
        telegram_answer: Stats::of(telegram_answer)?,
        telegram_rtt: rtt.telegram,
        slack_post: Stats::of(slack_post)?,
        slack_answer: Stats::of(slack_answer)?,
        slack_rtt: rtt.slack,
        discord_post: Stats::of(discord_post)?,
        discord_answer: Stats::of(discord_answer)?,
        discord_rtt: rtt.discord,
    })
}

/// Waits until `find` sees the message in a fake chat; the time since `start`.
async fn shown<T>(
    start: Instant,
    chat: &str,
    find: impl Fn() -> Option<T>,
) -> Result<(T, Duration)> {
    let deadline = Instant::now() + LIMIT;
    loop {
        if let Some(found) = find() {
            return Ok((found, start.elapsed()));
        }
        ensure!(Instant::now() < deadline, "no {chat} message");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Each fake's own round trip: one call of its API from this process, as the daemon
/// makes them (HTTP/1.1 to a local port).
struct FakeRoundTrips {
    telegram: Stats,
    slack: Stats,
    discord: Stats,
}

impl FakeRoundTrips {
    async fn of(
        telegram: &FakeTelegram,
        slack: &FakeSlack,
        discord: &FakeDiscord,
        n: usize,
    ) -> Result<FakeRoundTrips> {
        let bot_api = telegram.bot();
        let http = reqwest::Client::new();
        let (mut t, mut s, mut d) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..n {
            let start = Instant::now();
            bot_api.get_me().await.context("getMe from the fake")?;
            t.push(start.elapsed());

            let start = Instant::now();
            let answer = http
                .post(format!("{}/auth.test", slack.url()))
                .bearer_auth(fake_slack::BOT_TOKEN)
                .send()
                .await?
                .error_for_status()?;
            answer.bytes().await?;
            s.push(start.elapsed());

            let start = Instant::now();
            let answer = http
                .get(format!("{}/api/v10/users/@me", discord.api_url()))
                .header("Authorization", format!("Bot {}", fake_discord::TOKEN))
                .send()
                .await?
                .error_for_status()?;
            answer.bytes().await?;
            d.push(start.elapsed());
        }
        Ok(FakeRoundTrips {
            telegram: Stats::of(t)?,
            slack: Stats::of(s)?,
            discord: Stats::of(d)?,
        })
    }
}

/// One request answered through Matrix before anything is measured: the bot has joined,
/// shared its room key with the owner's device, and both sides have synced.
async fn warm_up(socket: &std::path::Path, owner: &Owner, bot: &str) -> Result<()> {
    let body = json!({"agent": "bench", "command": "make warm-up", "wait": true});
    let client = execgate::client::Client::new(socket.to_path_buf());
    let asking =
        tokio::spawn(async move { client.call(Method::POST, REQUESTS, Some(&body)).await });
    let m = owner
        .wait_for("the warm-up message", Duration::from_secs(60), |s| {
            s.sender == bot && s.body.contains("make warm-up")
        })
        .await;
    owner.react(&m.room, &m.event_id, "👍").await;
    let (status, _) = tokio::time::timeout(LIMIT, asking).await???;
    ensure!(status == StatusCode::OK, "warm-up: {status}");
    Ok(())
}
