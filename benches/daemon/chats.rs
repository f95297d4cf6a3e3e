//! I. The chats: how long a request takes to reach the owner, and an answer to reach the
//! agent, through Matrix (a real Synapse, an encrypted room, the owner on the same SDK
//! in this process) and through Telegram (the test suite's fake Bot API, in this
//! process), one daemon with both configured, in the same run.
//!
//! For each request: submission (`wait: true`, so the agent waits) to the approval
//! message visible in each chat, both watched at once; then the owner's reaction, in
//! Matrix for even requests and in Telegram for odd ones, to the agent's answer. Beside
//! them, the homeserver's own round trip: the owner's message to the owner's own
//! `/sync` seeing it, which any Matrix client pays; Matrix is judged by what it adds to
//! that. Requests are two seconds apart, past Telegram's pacing.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
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
/// The pause before each request.
const SPACING: Duration = Duration::from_millis(2100);
/// What each chat may add to the homeserver's own round trip.
pub const TARGET_ABOVE_SYNC: Duration = Duration::from_millis(50);

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
}

impl Chats {
    fn above(&self, s: &Stats) -> Duration {
        s.p50.saturating_sub(self.sync.p50)
    }

    pub fn print(&self, judged: bool) {
        println!("\nI. The chats: submission to the message seen, reaction to the agent's answer");
        println!("   {:<34}{}", "", Stats::HEADER);
        for (name, s) in [
            ("Synapse: message to own /sync", &self.sync),
            ("Matrix: submitted to seen", &self.matrix_post),
            ("Matrix: reaction to answer", &self.matrix_answer),
            ("Telegram fake: getMe round trip", &self.telegram_rtt),
            ("Telegram fake: submitted to seen", &self.telegram_post),
            ("Telegram fake: reaction to answer", &self.telegram_answer),
        ] {
            println!("   {name:<34}{}", s.row());
        }
        for (what, s) in [("post", &self.matrix_post), ("answer", &self.matrix_answer)] {
            let above = self.above(s);
            let verdict = match (judged, above <= TARGET_ABOVE_SYNC) {
                (false, _) => "not judged (smoke counts)",
                (true, true) => "met",
                (true, false) => "MISSED",
            };
            println!(
                "   Matrix {what}: {} above the homeserver's round trip at p50 (target ≤ {}): {verdict}",
                show(above),
                show(TARGET_ABOVE_SYNC)
            );
        }
        for (what, s) in [
            ("post", &self.telegram_post),
            ("answer", &self.telegram_answer),
        ] {
            let (p50, p99) = self.above_fake(s);
            let verdict = match (judged, p50 <= TARGET_ABOVE_SYNC) {
                (false, _) => "not judged (smoke counts)",
                (true, true) => "met",
                (true, false) => "MISSED",
            };
            println!(
                "   Telegram {what}: {} above the fake's round trip at p50, {} at p99 (target ≤ {}): {verdict}",
                show(p50),
                show(p99),
                show(TARGET_ABOVE_SYNC)
            );
        }
    }

    /// What `s` adds to the fake Bot API's own round trip, at p50 and p99.
    fn above_fake(&self, s: &Stats) -> (Duration, Duration) {
        (
            s.p50.saturating_sub(self.telegram_rtt.p50),
            s.p99.saturating_sub(self.telegram_rtt.p99),
        )
    }

    pub fn json(&self) -> Value {
        json!({
            "telegram_rtt": self.telegram_rtt.json(),
            "sync": self.sync.json(),
            "matrix_post": self.matrix_post.json(),
            "matrix_answer": self.matrix_answer.json(),
            "telegram_post": self.telegram_post.json(),
            "telegram_answer": self.telegram_answer.json(),
            "matrix_post_above_sync_p50_us": crate::stats::us(self.above(&self.matrix_post)),
            "matrix_answer_above_sync_p50_us": crate::stats::us(self.above(&self.matrix_answer)),
        })
    }
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
    let person = User::owner();
    let chat = person.id;
    let telegram_owner = person.id.to_string();
    let fake_url = fake.url();
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
    let bot_api = fake.bot();
    let mut telegram_rtt = Vec::new();
    for _ in 0..plan.chat_requests {
        let start = Instant::now();
        bot_api.get_me().await.context("getMe from the fake")?;
        telegram_rtt.push(start.elapsed());
    }

    let (mut matrix_post, mut telegram_post) = (Vec::new(), Vec::new());
    let (mut matrix_answer, mut telegram_answer) = (Vec::new(), Vec::new());
    for i in 0..plan.chat_requests {
        // execgate paces Telegram to about a message a second per chat, and each request
        // costs a post and an edit: spaced out, the figures are the chats', not the pacing's.
        tokio::time::sleep(SPACING).await;
        let command = format!("make chat-{i}");
        let needle = format!("Command:\n{command}\n");
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
            (m, start.elapsed())
        };
        let in_telegram = async {
            let deadline = Instant::now() + LIMIT;
            loop {
                let found = fake
                    .messages(chat)
                    .into_iter()
                    .find(|m| m.plain.contains(&needle));
                if let Some(m) = found {
                    return Ok((m, start.elapsed()));
                }
                ensure!(
                    Instant::now() < deadline,
                    "no Telegram message for {command}"
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        };
        let ((m, seen_matrix), telegram) = tokio::join!(in_matrix, in_telegram);
        let (t, seen_telegram) = telegram?;
        matrix_post.push(seen_matrix);
        telegram_post.push(seen_telegram);

        let answered = Instant::now();
        if i % 2 == 0 {
            owner.react(&room, &m.event_id, "👍").await;
        } else {
            fake.react(
                chat,
                Actor::User(person.clone()),
                t.message_id,
                vec![],
                vec![Reaction::Emoji("👍".into())],
            );
        }
        let (status, record) = tokio::time::timeout(LIMIT, asking)
            .await
            .context("the agent's answer")???;
        let took = answered.elapsed();
        ensure!(
            status == StatusCode::OK && record["status"] == "approved",
            "{command}: {status} {record}"
        );
        if i % 2 == 0 {
            matrix_answer.push(took);
        } else {
            telegram_answer.push(took);
        }
    }
    daemon.stop().await?;
    Ok(Chats {
        sync: Stats::of(sync)?,
        matrix_post: Stats::of(matrix_post)?,
        matrix_answer: Stats::of(matrix_answer)?,
        telegram_post: Stats::of(telegram_post)?,
        telegram_answer: Stats::of(telegram_answer)?,
        telegram_rtt: Stats::of(telegram_rtt)?,
    })
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
