//! I (bursts). A burst of requests that need a human, all at once, to one chat paced
//! like Telegram (a short burst, then about a message a second): the time from the first
//! submission until the owner can see every one of them, with digests (the default) and
//! with `approval.digests = false` (each waits for a message of its own), one daemon
//! each, against the test suite's fake Bot API in this process.

use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use execgate_testkit::fake_telegram::{FakeTelegram, User};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use crate::lab::Lab;
use crate::stats::{ms, show};
use crate::{Plan, REQUESTS};

const TOKEN: &str = "7000000002:AAbench-token-for-the-burst-bot";
/// Long enough for a burst of fifty at a message a second.
const LIMIT: Duration = Duration::from_secs(120);

pub struct Burst {
    pub requests: usize,
    pub with_digests: Shown,
    pub without: Shown,
}

/// One run: how long until everything was visible, and in how many messages.
pub struct Shown {
    pub all_seen: Duration,
    pub messages: usize,
}

impl Burst {
    pub fn print(&self) {
        println!(
            "\nI. A burst of {} requests to one Telegram-paced chat: first submission to all visible",
            self.requests
        );
        for (name, s) in [
            ("with digests", &self.with_digests),
            ("each alone (approval.digests = false)", &self.without),
        ] {
            println!(
                "   {name:<40}{:>12}  in {} messages",
                show(s.all_seen),
                s.messages
            );
        }
    }

    pub fn json(&self) -> Value {
        let one = |s: &Shown| json!({"all_seen_ms": ms(s.all_seen), "messages": s.messages});
        json!({
            "requests": self.requests,
            "with_digests": one(&self.with_digests),
            "without": one(&self.without),
        })
    }
}

pub async fn burst(lab: &mut Lab, plan: &Plan) -> Result<Burst> {
    Ok(Burst {
        requests: plan.burst_requests,
        with_digests: once(lab, plan, "digests", true).await?,
        without: once(lab, plan, "alone", false).await?,
    })
}

async fn once(lab: &mut Lab, plan: &Plan, name: &str, digests: bool) -> Result<Shown> {
    let fake = FakeTelegram::start(TOKEN).await;
    let owner = User::owner();
    let chat = owner.id;
    let (owner_id, url) = (owner.id.to_string(), fake.url());
    let env = [
        ("EXECGATE_TELEGRAM__BOT_TOKEN", TOKEN),
        ("EXECGATE_TELEGRAM__OWNER_IDS", owner_id.as_str()),
        ("EXECGATE_TELEGRAM__API_URL", url.as_str()),
        (
            "EXECGATE_APPROVAL__DIGESTS",
            if digests { "true" } else { "false" },
        ),
    ];
    let db = lab.path().join(format!("state/burst-{name}.db"));
    let mut daemon = lab.start_with(&db, &env).await?;
    let commands: Vec<String> = (0..plan.burst_requests)
        .map(|i| format!("make burst-{name}-{i}"))
        .collect();
    let client = execgate::client::Client::new(lab.agent_socket());
    let start = Instant::now();
    let asked = commands.iter().map(|command| {
        let body = json!({"agent": "bench", "command": command, "wait": false});
        let client = client.clone();
        async move { client.call(Method::POST, REQUESTS, Some(&body)).await }
    });
    for answer in futures_util::future::join_all(asked).await {
        let (status, record) = answer?;
        ensure!(status == StatusCode::ACCEPTED, "{status} {record}");
    }
    let deadline = start + LIMIT;
    let all_seen = loop {
        let shown = fake.messages(chat);
        let unseen = commands
            .iter()
            .filter(|c| !shown.iter().any(|m| shows(&m.plain, c)))
            .count();
        if unseen == 0 {
            break start.elapsed();
        }
        ensure!(
            Instant::now() < deadline,
            "{unseen} requests never shown ({name})"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    let messages = fake.calls_to("sendMessage").len();
    daemon.stop().await?;
    Ok(Shown { all_seen, messages })
}

/// Whether a message's text shows `command` whole: on a line of its own (a request's
/// card), or followed by where it runs or a line's end (a digest's block).
fn shows(text: &str, command: &str) -> bool {
    text.match_indices(command).any(|(at, _)| {
        matches!(
            text[at + command.len()..].chars().next(),
            None | Some('\n' | ' ')
        )
    })
}
