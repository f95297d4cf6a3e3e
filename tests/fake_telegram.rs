//! Tests of the fake Telegram server itself, driven by the real teloxide client: whatever the
//! fake answers, teloxide must read it the way it reads Telegram's answers.
use execgate_testkit as common;

use std::time::{Duration, Instant};

use common::fake_telegram::*;
use serde_json::{Value, json};
use teloxide::prelude::*;
use teloxide::types::{
    AllowedUpdate, BotCommand, CallbackQueryId, CustomEmojiId, InlineKeyboardButton,
    InlineKeyboardMarkup, MessageEntityKind, MessageId, ParseMode, ReactionType, ReplyParameters,
    Seconds, UpdateKind,
};
use teloxide::{ApiError, RequestError};

const GROUP: i64 = -1_001_234_567_890;

fn keyboard(buttons: &[(&str, &str)]) -> InlineKeyboardMarkup {
    InlineKeyboardMarkup::new([buttons
        .iter()
        .map(|(text, data)| InlineKeyboardButton::callback(*text, *data))
        .collect::<Vec<_>>()])
}

fn owner_chat() -> ChatId {
    ChatId(User::owner().id)
}

fn ids(updates: &[Update]) -> Vec<i64> {
    updates.iter().map(|u| i64::from(u.id.0)).collect()
}

fn offset_after(update_id: i64) -> i32 {
    i32::try_from(update_id + 1).expect("update ids fit in i32")
}

/// The description of an API error teloxide does not have a variant for.
fn unknown_api_error<T: std::fmt::Debug>(result: Result<T, RequestError>) -> String {
    match result {
        Err(RequestError::Api(ApiError::Unknown(description))) => description,
        other => panic!("expected an unrecognised API error, got {other:?}"),
    }
}

/// A raw call, for what teloxide cannot send (unknown methods, malformed bodies).
async fn post(url: &str, body: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("the fake answers");
    let status = response.status().as_u16();
    let text = response.text().await.expect("a body");
    (
        status,
        serde_json::from_str(&text).expect("the fake always answers JSON"),
    )
}

#[tokio::test]
async fn get_me_and_webhook_calls_deserialize() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();

    let me = bot.get_me().await.expect("getMe");
    assert_eq!(me.id, UserId(BOT_ID as u64));
    assert!(me.is_bot);
    assert_eq!(me.username(), BOT_USERNAME);

    let info = bot.get_webhook_info().await.expect("getWebhookInfo");
    assert!(info.url.is_none());
    assert_eq!(info.pending_update_count, 0);
    bot.delete_webhook().await.expect("deleteWebhook");

    let methods: Vec<String> = fake.calls().into_iter().map(|c| c.method).collect();
    assert_eq!(methods, ["getme", "getwebhookinfo", "deletewebhook"]);
    assert!(fake.calls().iter().all(|c| c.ok && c.finished));
}

#[tokio::test]
async fn wrong_token_and_unknown_method_are_refused_and_recorded() {
    let fake = FakeTelegram::start(TOKEN).await;
    let intruder = teloxide::Bot::new("7000000001:not-the-token")
        .set_api_url(reqwest::Url::parse(&fake.url()).unwrap());
    assert!(matches!(
        intruder.get_me().await,
        Err(RequestError::Api(ApiError::InvalidToken))
    ));

    // The bot's id is the number the token starts with.
    let other = FakeTelegram::start("4242:another-token").await;
    assert_eq!(other.bot().get_me().await.unwrap().id, UserId(4242));
    assert_eq!(other.bot_id(), 4242);

    let (status, body) = post(&format!("{}bot{TOKEN}/frobnicate", fake.url()), "{}").await;
    assert_eq!(status, 404);
    assert_eq!(
        body,
        json!({"ok": false, "error_code": 404, "description": "Not Found: method not found"})
    );

    let (status, body) = post(&format!("{}bot{TOKEN}/sendMessage", fake.url()), "not json").await;
    assert_eq!(status, 400);
    assert_eq!(body["ok"], json!(false));

    let calls = fake.calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        (calls[0].method.as_str(), calls[0].error_code),
        ("getme", Some(401))
    );
    assert_eq!(
        (calls[1].method.as_str(), calls[1].error_code),
        ("frobnicate", Some(404))
    );
    assert_eq!(calls[2].error_code, Some(400));
}

#[tokio::test]
async fn send_message_with_html_and_keyboard() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();

    let html = "<b>Run</b> <code>ls -la &amp;&amp; rm x</code> &lt;here&gt;?";
    let message = bot
        .send_message(owner_chat(), html)
        .parse_mode(ParseMode::Html)
        .reply_markup(keyboard(&[("Approve", "approve:1"), ("Deny", "deny:1")]))
        .await
        .expect("sendMessage");

    assert_eq!(message.id, MessageId(1));
    assert_eq!(message.chat.id, owner_chat());
    assert!(message.chat.is_private());
    assert_eq!(
        message.from.as_ref().map(|u| u.id),
        Some(UserId(BOT_ID as u64))
    );
    assert_eq!(message.text(), Some("Run ls -la && rm x <here>?"));
    assert!(message.date.timestamp() > 0);
    let entities = message.entities().expect("entities");
    assert_eq!(
        entities
            .iter()
            .map(|e| (e.kind.clone(), e.offset, e.length))
            .collect::<Vec<_>>(),
        [
            (MessageEntityKind::Bold, 0, 3),
            (MessageEntityKind::Code, 4, 14)
        ]
    );
    let markup = message.reply_markup().expect("the keyboard comes back");
    assert_eq!(markup.inline_keyboard[0][1].text, "Deny");

    let sent = fake.messages(owner_chat().0);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].html, html);
    assert_eq!(sent[0].plain, "Run ls -la && rm x <here>?");
    assert_eq!(sent[0].parse_mode.as_deref(), Some("HTML"));
    assert_eq!(
        sent[0].buttons(),
        [
            ("Approve".to_string(), "approve:1".to_string()),
            ("Deny".to_string(), "deny:1".to_string())
        ]
    );

    // A reply: the next id in the chat, and the full replied-to message comes back.
    let reply = bot
        .send_message(owner_chat(), "Done.")
        .reply_parameters(ReplyParameters::new(message.id))
        .await
        .expect("sendMessage with reply_parameters");
    assert_eq!(reply.id, MessageId(2));
    let replied = reply.reply_to_message().expect("reply_to_message");
    assert_eq!(replied.id, message.id);
    assert_eq!(replied.text(), message.text());
    assert_eq!(fake.message(owner_chat().0, 2).unwrap().reply_to, Some(1));

    // Groups are known once added; other chats are not.
    assert!(matches!(
        bot.send_message(ChatId(GROUP), "hello").await,
        Err(RequestError::Api(ApiError::ChatNotFound))
    ));
    fake.add_group(GROUP, "Ops");
    let in_group = bot
        .send_message(ChatId(GROUP), "hello")
        .await
        .expect("group message");
    assert!(in_group.chat.is_supergroup());
    assert_eq!(in_group.chat.title(), Some("Ops"));
    assert_eq!(in_group.id, MessageId(1), "message ids count per chat");
}

#[tokio::test]
async fn edit_message_text_replaces_text_and_keyboard() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let original = bot
        .send_message(owner_chat(), "Run <code>ls</code>?")
        .parse_mode(ParseMode::Html)
        .reply_markup(keyboard(&[("Approve", "approve:1")]))
        .await
        .unwrap();

    // No reply_markup in the edit: the keyboard goes, as in Telegram.
    let edited = bot
        .edit_message_text(
            owner_chat(),
            original.id,
            "Run <code>ls</code>: <i>approved</i>",
        )
        .parse_mode(ParseMode::Html)
        .await
        .expect("editMessageText");
    assert_eq!(edited.id, original.id);
    assert_eq!(edited.text(), Some("Run ls: approved"));
    assert!(edited.edit_date().is_some());
    assert!(edited.reply_markup().is_none());

    let stored = fake.message(owner_chat().0, original.id.0 as i64).unwrap();
    assert_eq!(stored.plain, "Run ls: approved");
    assert_eq!(stored.edits, ["Run <code>ls</code>?"]);
    assert!(stored.buttons().is_empty());

    // The same content again is refused, even written differently (<em> is <i>).
    let same = bot
        .edit_message_text(
            owner_chat(),
            original.id,
            "Run <code>ls</code>: <em>approved</em>",
        )
        .parse_mode(ParseMode::Html)
        .await;
    assert!(matches!(
        same,
        Err(RequestError::Api(ApiError::MessageNotModified))
    ));

    // Same text with a keyboard is a change.
    bot.edit_message_text(
        owner_chat(),
        original.id,
        "Run <code>ls</code>: <i>approved</i>",
    )
    .parse_mode(ParseMode::Html)
    .reply_markup(keyboard(&[("Undo", "undo:1")]))
    .await
    .expect("a keyboard is a modification");

    assert!(matches!(
        bot.edit_message_text(owner_chat(), MessageId(99), "x")
            .await,
        Err(RequestError::Api(ApiError::MessageToEditNotFound))
    ));
    // Edits word the length limit differently from sends.
    assert!(matches!(
        bot.edit_message_text(owner_chat(), original.id, "a".repeat(4097))
            .await,
        Err(RequestError::Api(ApiError::EditedMessageIsTooLong))
    ));
    // Users' messages cannot be edited by the bot.
    let (_, user_message) = fake.send_text(owner_chat().0, &User::owner(), "hi");
    assert!(matches!(
        bot.edit_message_text(owner_chat(), MessageId(user_message as i32), "x")
            .await,
        Err(RequestError::Api(ApiError::MessageCantBeEdited))
    ));
}

#[tokio::test]
async fn faults_map_to_teloxide_errors_and_are_used_in_order() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    fake.fail_next("sendMessage", 1, Fault::TooManyRequests { retry_after: 7 });
    fake.fail_next(
        "SENDMESSAGE",
        1,
        Fault::Error {
            code: 403,
            description: "Forbidden: bot was blocked by the user".to_string(),
        },
    );

    let first = bot.send_message(owner_chat(), "1").await;
    assert!(
        matches!(first, Err(RequestError::RetryAfter(s)) if s == Seconds::from_seconds(7)),
        "{first:?}"
    );
    let second = bot.send_message(owner_chat(), "2").await;
    assert!(
        matches!(second, Err(RequestError::Api(ApiError::BotBlocked))),
        "{second:?}"
    );
    bot.send_message(owner_chat(), "3")
        .await
        .expect("faults are used up");

    let codes: Vec<_> = fake
        .calls_to("sendMessage")
        .iter()
        .map(|c| c.error_code)
        .collect();
    assert_eq!(codes, [Some(429), Some(403), None]);
    let sent: Vec<_> = fake
        .messages(owner_chat().0)
        .into_iter()
        .map(|m| m.plain)
        .collect();
    assert_eq!(sent, ["3"], "failed calls store nothing");
}

#[tokio::test]
async fn bad_text_is_rejected_like_telegram_does() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let html = |text: String| {
        bot.send_message(owner_chat(), text)
            .parse_mode(ParseMode::Html)
    };

    match html("run <ls -la> now".into()).await {
        Err(RequestError::Api(ApiError::CantParseEntities(description))) => assert_eq!(
            description,
            "Bad Request: can't parse entities: Unsupported start tag \"ls\" at byte offset 4"
        ),
        other => panic!("{other:?}"),
    }
    match html("<b>unclosed".into()).await {
        Err(RequestError::Api(ApiError::CantParseEntities(description))) => assert_eq!(
            description,
            "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\""
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        html("a".repeat(4097)).await,
        Err(RequestError::Api(ApiError::MessageIsTooLong))
    ));
    // The limit counts UTF-16 code units of the parsed text.
    assert!(matches!(
        html("😀".repeat(2049)).await,
        Err(RequestError::Api(ApiError::MessageIsTooLong))
    ));
    html(format!("<b>{}</b>", "a".repeat(4096)))
        .await
        .expect("tags do not count");
    assert!(matches!(
        html("<b> </b>\n".into()).await,
        Err(RequestError::Api(ApiError::MessageTextIsEmpty))
    ));
    let long_data = "x".repeat(65);
    assert!(matches!(
        bot.send_message(owner_chat(), "pick")
            .reply_markup(keyboard(&[("x", long_data.as_str())]))
            .await,
        Err(RequestError::Api(ApiError::ButtonDataInvalid))
    ));
    // Without parse_mode, markup characters are just text.
    let plain = bot.send_message(owner_chat(), "<ls> &foo;").await.unwrap();
    assert_eq!(plain.text(), Some("<ls> &foo;"));

    assert_eq!(
        fake.messages(owner_chat().0).len(),
        2,
        "only the accepted messages are stored"
    );
}

#[test]
fn html_parser_follows_telegram() {
    let ok = |html: &str| plain_text(html).unwrap_or_else(|e| panic!("{html:?}: {e}"));
    let err = |html: &str| plain_text(html).expect_err(html);

    assert_eq!(
        ok("a &lt;b&gt; &amp; &quot;c&quot; &#65;&#x42;"),
        "a <b> & \"c\" AB"
    );
    assert_eq!(ok("AT&T, a & b, &&, &lt"), "AT&T, a & b, &&, <");
    assert_eq!(
        ok("<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><ins>n</ins>"),
        "bsieun"
    );
    assert_eq!(
        ok("<s>s</s><strike>t</strike><del>d</del><tg-spoiler>x</tg-spoiler>"),
        "stdx"
    );
    assert_eq!(ok("<span class=\"tg-spoiler\">hidden</span>"), "hidden");
    assert_eq!(
        ok("<pre><code class=\"language-sh\">ls &gt; out</code></pre>"),
        "ls > out"
    );
    assert_eq!(
        ok("<a href=\"https://example.com/?a=1&amp;b=2\">link</a>"),
        "link"
    );
    assert_eq!(ok("<blockquote expandable>quote</blockquote>"), "quote");
    assert_eq!(ok("<B>upper</b>"), "upper");

    assert_eq!(
        err("x < y"),
        "Bad Request: can't parse entities: Unsupported start tag \"\" at byte offset 2"
    );
    assert_eq!(
        err("if a<b"),
        "Bad Request: can't parse entities: Unclosed start tag at byte offset 4"
    );
    assert_eq!(
        err("<script>x</script>"),
        "Bad Request: can't parse entities: Unsupported start tag \"script\" at byte offset 0"
    );
    assert_eq!(
        err("<b>x</i>"),
        "Bad Request: can't parse entities: Unmatched end tag at byte offset 4, expected \"</b>\", found \"</i>\""
    );
    assert_eq!(
        err("x</b>"),
        "Bad Request: can't parse entities: Unexpected end tag at byte offset 1"
    );
    assert!(err("<span>x</span>").contains("must have class \"tg-spoiler\""));
    assert!(err("echo &nbsp;").contains("can't parse entities"));
}

#[tokio::test]
async fn get_updates_confirms_offsets_and_long_polls() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let owner = User::owner();
    let (first, _) = fake.send_text(owner.id, &owner, "one");
    let (second, _) = fake.send_text(owner.id, &owner, "two");

    assert_eq!(ids(&bot.get_updates().await.unwrap()), [first, second]);
    assert_eq!(ids(&bot.get_updates().limit(1).await.unwrap()), [first]);

    // Confirming `first` forgets it for good: an older offset does not bring it back.
    let after_first = bot.get_updates().offset(offset_after(first)).await.unwrap();
    assert_eq!(ids(&after_first), [second]);
    assert_eq!(fake.acked_offset(), first + 1);
    assert_eq!(ids(&bot.get_updates().offset(1).await.unwrap()), [second]);

    // A held poll returns as soon as an update arrives.
    let poller = bot.clone();
    let poll = tokio::spawn(async move {
        let started = Instant::now();
        let updates = poller
            .get_updates()
            .offset(offset_after(second))
            .timeout(5)
            .await;
        (updates, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (third, _) = fake.send_text(owner.id, &owner, "three");
    let (updates, waited) = poll.await.unwrap();
    assert_eq!(ids(&updates.unwrap()), [third]);
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(2),
        "{waited:?}"
    );

    // With nothing to deliver, the poll ends empty after `timeout`.
    let started = Instant::now();
    let empty = bot
        .get_updates()
        .offset(offset_after(third))
        .timeout(1)
        .await
        .unwrap();
    let waited = started.elapsed();
    assert!(empty.is_empty());
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert!(fake.pending_updates().is_empty());
}

#[tokio::test]
async fn raw_updates_are_delivered_as_given() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let update = fake.make_text_update(User::owner().id, &User::owner(), "/approve abc");
    assert!(fake.pending_updates().is_empty(), "made, not queued");
    fake.push_raw(update.clone());
    fake.push_raw(update.clone());
    let id = update["update_id"].as_i64().unwrap();
    assert_eq!(fake.last_update_id(), id);

    let delivered = bot.get_updates().await.unwrap();
    assert_eq!(
        ids(&delivered),
        [id, id],
        "Telegram may deliver an update twice"
    );
    assert!(
        matches!(&delivered[1].kind, UpdateKind::Message(m) if m.text() == Some("/approve abc"))
    );
    // A later helper continues after the raw ids.
    let (next, _) = fake.send_text(User::owner().id, &User::owner(), "next");
    assert_eq!(next, id + 1);
}

#[tokio::test]
async fn a_post_can_be_answered_before_send_message_returns() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let owner = User::owner();
    let thumb = Reaction::Emoji("👍".into());
    fake.answer_on_post(
        owner.id,
        "react",
        OnPost::React {
            actor: Actor::User(owner.clone()),
            reactions: vec![thumb.clone()],
        },
    );
    fake.answer_on_post(
        owner.id,
        "reply",
        OnPost::Reply {
            user: owner.clone(),
            text: "/deny".into(),
        },
    );
    fake.answer_on_post(
        owner.id,
        "press",
        OnPost::Press {
            user: owner.clone(),
            button: "Yes".into(),
        },
    );
    // The first send is answered late: by the time the bot hears back, the reaction to it
    // is already waiting in getUpdates.
    fake.answer_late("sendMessage", 1, Duration::from_millis(400));
    let started = Instant::now();
    let unrelated = bot.send_message(owner_chat(), "nothing").await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(350));
    assert!(
        fake.answered_posts().is_empty(),
        "only matching messages are answered"
    );
    let started = Instant::now();
    let reacted = bot
        .send_message(owner_chat(), "please react")
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(350),
        "late once only"
    );
    let replied = bot
        .send_message(owner_chat(), "please reply")
        .await
        .unwrap();
    let pressed = bot
        .send_message(owner_chat(), "please press")
        .reply_markup(keyboard(&[("Yes", "yes:1")]))
        .await
        .unwrap();
    bot.send_message(owner_chat(), "react again").await.unwrap();

    let answered = fake.answered_posts();
    assert_eq!(answered.len(), 3, "each answer is used once: {answered:?}");
    let message_ids: Vec<i64> = answered.iter().map(|a| a.message_id).collect();
    assert_eq!(
        message_ids,
        [reacted.id.0, replied.id.0, pressed.id.0].map(i64::from)
    );
    assert_ne!(unrelated.id, reacted.id);
    let updates = bot
        .get_updates()
        .allowed_updates([
            AllowedUpdate::Message,
            AllowedUpdate::CallbackQuery,
            AllowedUpdate::MessageReaction,
        ])
        .await
        .unwrap();
    assert_eq!(
        ids(&updates),
        answered.iter().map(|a| a.update_id).collect::<Vec<_>>()
    );
    match &updates[0].kind {
        UpdateKind::MessageReaction(r) => {
            assert_eq!(r.message_id, reacted.id);
            assert_eq!(r.user().map(|u| u.id.0), Some(owner.id as u64));
            assert!(r.old_reaction.is_empty());
            assert_eq!(
                r.new_reaction,
                [ReactionType::Emoji {
                    emoji: "👍".into()
                }]
            );
        }
        other => panic!("expected a reaction, got {other:?}"),
    }
    match &updates[1].kind {
        UpdateKind::Message(m) => {
            assert_eq!(m.text(), Some("/deny"));
            assert_eq!(m.reply_to_message().map(|r| r.id), Some(replied.id));
            assert_eq!(answered[1].reply_id, Some(i64::from(m.id.0)));
        }
        other => panic!("expected a reply, got {other:?}"),
    }
    match &updates[2].kind {
        UpdateKind::CallbackQuery(q) => {
            assert_eq!(q.data.as_deref(), Some("yes:1"));
            assert_eq!(q.message.as_ref().map(|m| m.id()), Some(pressed.id));
            assert_eq!(answered[2].query_id.as_deref(), Some(q.id.0.as_str()));
        }
        other => panic!("expected a button press, got {other:?}"),
    }
    assert!(fake.delivered(answered[0].update_id));
    assert!(!fake.delivered(answered[0].update_id + 100));
}

#[tokio::test]
async fn a_second_poller_terminates_the_first() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let first = tokio::spawn({
        let bot = bot.clone();
        async move { bot.get_updates().timeout(5).await }
    });
    fake.wait_for_call("getUpdates", 1).await;
    bot.get_updates().await.expect("the newer poll is served");
    assert!(matches!(
        first.await.unwrap(),
        Err(RequestError::Api(ApiError::TerminatedByOtherGetUpdates))
    ));
}

#[tokio::test]
async fn injected_updates_deserialize_into_the_right_kinds() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let owner = User::owner();
    fake.add_group(GROUP, "Ops");
    let prompt = bot
        .send_message(owner_chat(), "Approve?")
        .reply_markup(keyboard(&[("Yes", "yes:1")]))
        .await
        .unwrap();
    let prompt_id = i64::from(prompt.id.0);

    fake.send_text(owner.id, &owner, "/pending now");
    let (_, reply_id) = fake.reply_to(owner.id, &owner, prompt_id, "why?");
    fake.edit_text(owner.id, &owner, reply_id, "why though?");
    let (_, query_id) = fake.press_button(owner.id, &owner, prompt_id, "yes:1");
    fake.react(
        owner.id,
        Actor::User(owner.clone()),
        prompt_id,
        vec![Reaction::Emoji("👎".to_string())],
        vec![
            Reaction::Emoji("👍".to_string()),
            Reaction::Custom("5368324170671202286".to_string()),
        ],
    );
    let (_, group_message) = fake.send_text(GROUP, &User::stranger(), "hello all");
    fake.react(
        GROUP,
        Actor::Anonymous {
            chat_id: GROUP,
            title: "Ops".to_string(),
        },
        group_message,
        vec![],
        vec![Reaction::Emoji("🔥".to_string())],
    );

    let updates = bot
        .get_updates()
        .allowed_updates([
            AllowedUpdate::Message,
            AllowedUpdate::EditedMessage,
            AllowedUpdate::CallbackQuery,
            AllowedUpdate::MessageReaction,
        ])
        .await
        .unwrap();
    let kinds: Vec<&UpdateKind> = updates.iter().map(|u| &u.kind).collect();
    let [
        UpdateKind::Message(command),
        UpdateKind::Message(reply),
        UpdateKind::EditedMessage(edited),
        UpdateKind::CallbackQuery(query),
        UpdateKind::MessageReaction(reaction),
        UpdateKind::Message(in_group),
        UpdateKind::MessageReaction(anonymous),
    ] = kinds.as_slice()
    else {
        panic!("unexpected updates: {updates:#?}");
    };

    assert_eq!(command.text(), Some("/pending now"));
    assert_eq!(command.from.as_ref().unwrap().id, UserId(owner.id as u64));
    assert!(command.chat.is_private());
    let entity = &command.entities().unwrap()[0];
    assert_eq!(
        (&entity.kind, entity.offset, entity.length),
        (&MessageEntityKind::BotCommand, 0, 8)
    );

    let replied = reply.reply_to_message().expect("reply_to_message");
    assert_eq!(replied.id, prompt.id);
    assert_eq!(replied.from.as_ref().unwrap().id, UserId(BOT_ID as u64));
    assert_eq!(replied.text(), Some("Approve?"));

    assert_eq!(edited.id, MessageId(reply_id as i32));
    assert_eq!(edited.text(), Some("why though?"));
    assert!(edited.edit_date().is_some());

    assert_eq!(query.id.0, query_id);
    assert_eq!(query.data.as_deref(), Some("yes:1"));
    assert_eq!(query.from.id, UserId(owner.id as u64));
    let pressed = query.regular_message().expect("an accessible message");
    assert_eq!(pressed.id, prompt.id);
    assert_eq!(
        pressed.reply_markup().unwrap().inline_keyboard[0][0].text,
        "Yes"
    );

    assert_eq!(reaction.message_id, prompt.id);
    assert_eq!(reaction.user().unwrap().id, UserId(owner.id as u64));
    assert_eq!(
        reaction.old_reaction,
        [ReactionType::Emoji {
            emoji: "👎".to_string()
        }]
    );
    assert_eq!(
        reaction.new_reaction,
        [
            ReactionType::Emoji {
                emoji: "👍".to_string()
            },
            ReactionType::CustomEmoji {
                custom_emoji_id: CustomEmojiId("5368324170671202286".to_string())
            },
        ]
    );

    assert!(in_group.chat.is_supergroup());
    assert_eq!(anonymous.chat.id, ChatId(GROUP));
    assert!(anonymous.user().is_none());
    assert_eq!(anonymous.actor.chat().map(|c| c.id), Some(ChatId(GROUP)));

    // The query can be answered once, with at most 200 characters.
    let query_id = CallbackQueryId(query_id);
    assert!(matches!(
        bot.answer_callback_query(query_id.clone())
            .text("x".repeat(201))
            .await,
        Err(RequestError::Api(ApiError::EditedMessageIsTooLong))
    ));
    assert_eq!(fake.callback_answer(&query_id.0), None);
    bot.answer_callback_query(query_id.clone())
        .text("Approved")
        .await
        .unwrap();
    assert_eq!(
        fake.callback_answer(&query_id.0),
        Some(Some("Approved".to_string()))
    );
    // Telegram says "query ID", teloxide expects "query id": this arrives as Unknown.
    assert_eq!(
        unknown_api_error(bot.answer_callback_query(query_id).await),
        "Bad Request: query is too old and response timeout expired or query ID is invalid"
    );
}

#[tokio::test]
async fn allowed_updates_filters_reactions_and_sticks() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let owner = User::owner();
    let thumbs_up = || vec![Reaction::Emoji("👍".to_string())];
    let (message, message_id) = fake.send_text(owner.id, &owner, "hi");
    let reaction = fake.react(
        owner.id,
        Actor::User(owner.clone()),
        message_id,
        vec![],
        thumbs_up(),
    );

    // Telegram's default leaves reactions out.
    assert_eq!(ids(&bot.get_updates().await.unwrap()), [message]);
    assert!(
        bot.get_updates()
            .offset(offset_after(message))
            .await
            .unwrap()
            .is_empty()
    );

    let with_reactions = bot
        .get_updates()
        .offset(offset_after(message))
        .allowed_updates([AllowedUpdate::Message, AllowedUpdate::MessageReaction])
        .await
        .unwrap();
    assert_eq!(ids(&with_reactions), [reaction]);
    assert_eq!(
        fake.allowed_updates(),
        Some(vec!["message".to_string(), "message_reaction".to_string()])
    );

    // The setting sticks for calls that do not repeat it...
    let again = fake.react(
        owner.id,
        Actor::User(owner.clone()),
        message_id,
        thumbs_up(),
        vec![],
    );
    assert_eq!(
        ids(&bot
            .get_updates()
            .offset(offset_after(reaction))
            .await
            .unwrap()),
        [again]
    );

    // ...and an empty list restores the default.
    let withheld = fake.react(
        owner.id,
        Actor::User(owner.clone()),
        message_id,
        vec![],
        thumbs_up(),
    );
    let updates = bot
        .get_updates()
        .offset(offset_after(again))
        .allowed_updates(Vec::<AllowedUpdate>::new())
        .await
        .unwrap();
    assert!(updates.is_empty());
    assert_eq!(fake.allowed_updates(), None);
    assert_eq!(
        fake.pending_updates().len(),
        1,
        "update {withheld} stays queued, undelivered"
    );
}

#[tokio::test]
async fn custom_emoji_stickers_resolve_registered_ids() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    fake.register_custom_emoji("5368324170671202286", "✅");

    let stickers = bot
        .get_custom_emoji_stickers([
            CustomEmojiId("5368324170671202286".to_string()),
            CustomEmojiId("1".to_string()),
        ])
        .await
        .expect("getCustomEmojiStickers");
    assert_eq!(stickers.len(), 1, "unknown ids are left out");
    assert_eq!(stickers[0].emoji.as_deref(), Some("✅"));
    assert!(stickers[0].is_custom_emoji());
    assert_eq!(
        stickers[0].custom_emoji_id(),
        Some(&CustomEmojiId("5368324170671202286".to_string()))
    );
    assert_eq!(fake.custom_emoji_lookups(), 1);
}

#[tokio::test]
async fn bot_commands_are_validated_and_stored() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    bot.set_my_commands([
        BotCommand::new("pending", "List pending requests"),
        BotCommand::new("help", "How to use this bot"),
    ])
    .await
    .expect("setMyCommands");
    assert_eq!(
        fake.commands(),
        [
            ("pending".to_string(), "List pending requests".to_string()),
            ("help".to_string(), "How to use this bot".to_string())
        ]
    );
    let listed = bot.get_my_commands().await.expect("getMyCommands");
    assert_eq!(listed[0].command, "pending");

    assert_eq!(
        unknown_api_error(bot.set_my_commands([BotCommand::new("Pending", "x")]).await),
        "Bad Request: BOT_COMMAND_INVALID"
    );
    assert_eq!(
        unknown_api_error(bot.set_my_commands([BotCommand::new("pending", "")]).await),
        "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID"
    );
    assert_eq!(fake.commands().len(), 2, "refused lists change nothing");
}

#[tokio::test]
async fn an_outage_cuts_connections_and_ends_on_the_same_url() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let url = fake.url();
    bot.send_message(owner_chat(), "before").await.unwrap();

    let poll = tokio::spawn({
        let bot = bot.clone();
        async move { bot.get_updates().timeout(5).await }
    });
    fake.wait_for_call("getUpdates", 1).await;
    fake.go_down();
    assert!(!fake.is_up());
    // Refused at once, not when the runtime gets around to it.
    assert!(std::net::TcpStream::connect(fake.addr()).is_err());

    let cut = poll.await.unwrap();
    assert!(matches!(cut, Err(RequestError::Network(_))), "{cut:?}");
    let refused = bot.get_me().await;
    assert!(
        matches!(refused, Err(RequestError::Network(_))),
        "{refused:?}"
    );
    assert_eq!(fake.calls_to("getMe").len(), 0, "nothing gets through");

    fake.come_back();
    assert_eq!(fake.url(), url);
    bot.get_me().await.expect("back on the same URL");
    // Down and up with no pause: a connection kept alive across the outage may fail one
    // request (as with a real server restart); the next one gets through.
    fake.go_down();
    fake.come_back();
    if let Err(e) = bot.get_me().await {
        assert!(matches!(e, RequestError::Network(_)), "{e:?}");
    }
    bot.get_me().await.expect("back again");
    assert_eq!(
        fake.messages(owner_chat().0)[0].plain,
        "before",
        "state survives"
    );
    let polls = fake.calls_to("getUpdates");
    assert!(!polls[0].finished, "the cut poll was never answered");
}

#[tokio::test]
async fn reply_markup_edits_and_deletions() {
    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let message = bot
        .send_message(owner_chat(), "Approve?")
        .reply_markup(keyboard(&[("Yes", "yes:1")]))
        .await
        .unwrap();

    let cleared = bot
        .edit_message_reply_markup(owner_chat(), message.id)
        .await
        .expect("editMessageReplyMarkup");
    assert!(cleared.reply_markup().is_none());
    assert_eq!(cleared.text(), Some("Approve?"));
    assert!(matches!(
        bot.edit_message_reply_markup(owner_chat(), message.id)
            .await,
        Err(RequestError::Api(ApiError::MessageNotModified))
    ));

    bot.delete_message(owner_chat(), message.id)
        .await
        .expect("deleteMessage");
    assert!(
        fake.message(owner_chat().0, i64::from(message.id.0))
            .is_none()
    );
    assert!(matches!(
        bot.delete_message(owner_chat(), message.id).await,
        Err(RequestError::Api(ApiError::MessageToDeleteNotFound))
    ));
}

/// The real update loop, as the daemon runs it: the Dispatcher sends `allowed_updates`
/// (from its handler tree) on its first poll only, confirms offsets, and on shutdown makes
/// one last `timeout: 0, limit: 1` poll to confirm what it handled.
#[tokio::test]
async fn teloxide_dispatcher_runs_against_the_fake() {
    use teloxide::types::MessageReactionUpdated;
    use teloxide::update_listeners::Polling;

    let fake = FakeTelegram::start(TOKEN).await;
    let bot = fake.bot();
    let owner = User::owner();
    let handler = dptree::entry()
        .branch(
            Update::filter_message().endpoint(|bot: Bot, message: Message| async move {
                let text = format!("echo {}", message.text().unwrap_or_default());
                bot.send_message(message.chat.id, text).await?;
                Ok::<(), RequestError>(())
            }),
        )
        .branch(Update::filter_message_reaction_updated().endpoint(
            |bot: Bot, reaction: MessageReactionUpdated| async move {
                bot.send_message(reaction.chat.id, "reaction seen").await?;
                Ok::<(), RequestError>(())
            },
        ));
    let listener = Polling::builder(bot.clone())
        .timeout(Duration::from_secs(1))
        .build();
    let mut dispatcher = Dispatcher::builder(bot, handler).build();
    let shutdown = dispatcher.shutdown_token();
    let running = tokio::spawn(async move {
        dispatcher
            .dispatch_with_listener(listener, LoggingErrorHandler::new())
            .await;
    });

    fake.wait_for_call("getUpdates", 1).await;
    let (_, message_id) = fake.send_text(owner.id, &owner, "hi");
    fake.wait_for_message(owner.id, |text| text == "echo hi")
        .await;
    let reaction = fake.react(
        owner.id,
        Actor::User(owner.clone()),
        message_id,
        vec![],
        vec![Reaction::Emoji("👍".to_string())],
    );
    fake.wait_for_message(owner.id, |text| text == "reaction seen")
        .await;

    shutdown
        .shutdown()
        .expect("the dispatcher is running")
        .await;
    running.await.unwrap();

    let polls = fake.calls_to("getUpdates");
    let mut allowed: Vec<&str> = polls[0].body["allowed_updates"]
        .as_array()
        .expect("the first poll names its update types")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    allowed.sort_unstable();
    assert_eq!(allowed, ["message", "message_reaction"]);
    assert!(
        polls[1..]
            .iter()
            .all(|c| c.body.get("allowed_updates").is_none())
    );
    assert_eq!(fake.acked_offset(), reaction + 1);
    assert!(fake.pending_updates().is_empty());
}
