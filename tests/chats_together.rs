//! Telegram, Slack and Discord on one daemon, each against its fake: every request is
//! posted to all three, the first answer wins wherever it is given, every message is
//! edited with that outcome, and an answer given later in another chat changes nothing
//! and says so. (Matrix beside Telegram is in `tests/matrix.rs`, on a real Synapse.)

use execgate_testkit as common;

use common::fake_discord::{self, FakeDiscord};
use common::fake_slack::{self, FakeSlack};
use common::fake_telegram::{self, FakeTelegram};
use common::*;
use execgate::model::{Record, Status, Via};

const TG_TOKEN: &str = "7000000001:AAtest-token-for-the-fake-bot-api";

struct Chats {
    telegram: FakeTelegram,
    slack: FakeSlack,
    discord: FakeDiscord,
    d: TestDaemon,
}

/// The three messages of one request, once each chat shows it.
struct Shown {
    telegram: i64,
    slack: String,
    discord: u64,
}

impl Chats {
    async fn start() -> Chats {
        let telegram = FakeTelegram::start(TG_TOKEN).await;
        let slack = FakeSlack::start().await;
        let discord = FakeDiscord::start(fake_discord::TOKEN).await;
        let tg_owner = fake_telegram::User::owner().id.to_string();
        let dc_owner = fake_discord::User::owner().id.to_string();
        let dc_channel = fake_discord::CHANNEL_ID.to_string();
        let (tg_url, sl_url) = (telegram.url(), slack.url());
        let (dc_api, dc_gateway) = (discord.api_url(), discord.gateway_url());
        let env = [
            ("EXECGATE_TELEGRAM__BOT_TOKEN", TG_TOKEN),
            ("EXECGATE_TELEGRAM__OWNER_IDS", tg_owner.as_str()),
            ("EXECGATE_TELEGRAM__API_URL", tg_url.as_str()),
            ("EXECGATE_SLACK__APP_TOKEN", fake_slack::APP_TOKEN),
            ("EXECGATE_SLACK__BOT_TOKEN", fake_slack::BOT_TOKEN),
            ("EXECGATE_SLACK__CHANNEL", fake_slack::CHANNEL),
            ("EXECGATE_SLACK__OWNER_IDS", "U0OWNER01"),
            ("EXECGATE_SLACK__API_URL", sl_url.as_str()),
            ("EXECGATE_DISCORD__BOT_TOKEN", fake_discord::TOKEN),
            ("EXECGATE_DISCORD__OWNER_IDS", dc_owner.as_str()),
            ("EXECGATE_DISCORD__CHANNEL_ID", dc_channel.as_str()),
            ("EXECGATE_DISCORD__API_URL", dc_api.as_str()),
            ("EXECGATE_DISCORD__GATEWAY_URL", dc_gateway.as_str()),
        ];
        let d = TestDaemon::start(&env).await;
        Chats {
            telegram,
            slack,
            discord,
            d,
        }
    }

    async fn shown(&self, r: &Record) -> Shown {
        let needle = format!("ID: {}\n", r.short_id);
        let chat = fake_telegram::User::owner().id;
        let telegram = self
            .telegram
            .wait_until("the Telegram message", |f| {
                f.messages(chat)
                    .into_iter()
                    .find(|m| m.plain.contains(&needle))
            })
            .await
            .message_id;
        let slack = self
            .slack
            .wait_until("the Slack message", |f| {
                f.messages(fake_slack::CHANNEL)
                    .into_iter()
                    .find(|m| m.thread_ts.is_none() && m.plain.contains(&needle))
            })
            .await
            .ts;
        let discord = self
            .discord
            .wait_until("the Discord message", |f| {
                f.messages(fake_discord::CHANNEL_ID)
                    .into_iter()
                    .find(|m| m.reply_to.is_none() && m.plain.contains(&needle))
            })
            .await
            .id;
        Shown {
            telegram,
            slack,
            discord,
        }
    }

    /// Waits until every message of `shown` is edited, and returns their texts then.
    async fn closed(&self, shown: &Shown) -> [String; 3] {
        let chat = fake_telegram::User::owner().id;
        let telegram = self
            .telegram
            .wait_until("the Telegram edit", |f| {
                f.message(chat, shown.telegram)
                    .filter(|m| !m.edits.is_empty())
            })
            .await
            .plain;
        let slack = self
            .slack
            .wait_until("the Slack edit", |f| {
                f.message(fake_slack::CHANNEL, &shown.slack)
                    .filter(|m| !m.edits.is_empty())
            })
            .await
            .plain;
        let discord = self
            .discord
            .wait_until("the Discord edit", |f| {
                f.message(shown.discord).filter(|m| !m.edits.is_empty())
            })
            .await
            .plain;
        [telegram, slack, discord]
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_chats_answer_the_same_requests_and_the_first_answer_wins() {
    let c = Chats::start().await;
    let tg_owner = fake_telegram::User::owner();
    let sl_owner = fake_slack::User::owner();
    let dc_owner = fake_discord::User::owner();
    for (i, via) in [
        Via::TelegramCommand,
        Via::SlackCommand,
        Via::DiscordReaction,
    ]
    .into_iter()
    .enumerate()
    {
        let r =
            c.d.ask_no_wait("claude", &format!("make together{i}"))
                .await;
        let shown = c.shown(&r).await;
        let approve = format!("/approve {}", r.short_id);
        match via {
            Via::TelegramCommand => {
                c.telegram.send_text(tg_owner.id, &tg_owner, &approve);
            }
            Via::SlackCommand => {
                c.slack.replies(
                    &sl_owner,
                    fake_slack::CHANNEL,
                    &shown.slack,
                    &format!("approve {}", r.short_id),
                );
            }
            _ => c
                .discord
                .react(fake_discord::CHANNEL_ID, &dc_owner, shown.discord, "👍"),
        }
        let done = c.d.terminal(&r.id).await;
        assert_eq!((done.status, done.via), (Status::Approved, Some(via)));
        for text in c.closed(&shown).await {
            assert!(text.contains(&format!("via {via}")), "{text}");
        }
        // A later answer in another chat finds it over, and says so there.
        match via {
            Via::TelegramCommand => {
                c.discord.say(
                    fake_discord::CHANNEL_ID,
                    &dc_owner,
                    &format!("/deny {}", r.short_id),
                );
                c.discord
                    .wait_until("the late answer's reply", |f| {
                        f.messages(fake_discord::CHANNEL_ID)
                            .into_iter()
                            .find(|m| m.plain.contains("already resolved"))
                    })
                    .await;
            }
            _ => {
                let said = c
                    .telegram
                    .send_text(tg_owner.id, &tg_owner, &format!("/deny {}", r.short_id))
                    .1;
                c.telegram
                    .wait_until("the late answer's reply", |f| {
                        f.messages(tg_owner.id).into_iter().find(|m| {
                            m.reply_to == Some(said) && m.plain.contains("already resolved")
                        })
                    })
                    .await;
            }
        }
        assert_eq!(c.d.record(&r.id).await.via, Some(via));
    }
}
