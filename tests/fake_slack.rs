//! Tests of the fake Slack itself, against Slack's documented wire format: raw HTTP for
//! the Web API, a websocket client for Socket Mode, and slack-morphism's models (written
//! from Slack's documentation, independently of the fake) reading the payloads it sends.

use execgate_testkit as common;

use std::time::{Duration, Instant};

use common::fake_slack::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use slack_morphism::prelude::*;
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A Web API call with a JSON body: (HTTP status, Retry-After, answer).
async fn call(
    fake: &FakeSlack,
    method: &str,
    token: Option<&str>,
    args: Value,
) -> (u16, Option<String>, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/{method}", fake.url()))
        .header("content-type", "application/json; charset=utf-8")
        .body(args.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    read(request.send().await.unwrap()).await
}

/// A Web API call with a form body, the token in it, as Slack also accepts.
async fn form(
    fake: &FakeSlack,
    method: &str,
    fields: &[(&str, &str)],
) -> (u16, Option<String>, Value) {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect();
    let response = reqwest::Client::new()
        .post(format!("{}/{method}", fake.url()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.join("&"))
        .send()
        .await
        .unwrap();
    read(response).await
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b' ' => "+".into(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

async fn read(response: reqwest::Response) -> (u16, Option<String>, Value) {
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, retry, value)
}

async fn post(fake: &FakeSlack, args: Value) -> Value {
    call(fake, "chat.postMessage", Some(BOT_TOKEN), args)
        .await
        .2
}

/// Opens Socket Mode as a client does, and reads its `hello`.
async fn socket(fake: &FakeSlack) -> (Socket, Value) {
    let (_, _, opened) = call(fake, "apps.connections.open", Some(APP_TOKEN), json!({})).await;
    assert_eq!(opened["ok"], true, "{opened}");
    let url = opened["url"].as_str().unwrap().to_string();
    assert!(
        url.starts_with("ws://127.0.0.1:") && url.contains("/link/?ticket="),
        "{url}"
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let hello = next(&mut ws).await;
    (ws, hello)
}

/// The next text frame, as JSON.
async fn next(ws: &mut Socket) -> Value {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a frame within 10 s")
            .expect("the socket open")
            .unwrap();
        if let Message::Text(text) = frame {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

async fn ack(ws: &mut Socket, envelope: &Value) {
    let ack = json!({"envelope_id": envelope["envelope_id"]}).to_string();
    ws.send(Message::Text(ack.into())).await.unwrap();
}

#[tokio::test]
async fn tokens_are_checked_as_slack_checks_them() {
    let fake = FakeSlack::start().await;
    let (status, _, me) = call(&fake, "auth.test", Some(BOT_TOKEN), json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(
        (me["ok"].clone(), me["user_id"].clone()),
        (json!(true), json!(BOT_USER))
    );
    assert_eq!(me["bot_id"], BOT_ID);
    for (token, error) in [
        (None, "not_authed"),
        (Some("xoxb-1-2-wrong"), "invalid_auth"),
        (Some(APP_TOKEN), "not_allowed_token_type"),
    ] {
        let (status, _, answer) = call(&fake, "auth.test", token, json!({})).await;
        assert_eq!(
            (status, answer),
            (200, json!({"ok": false, "error": error}))
        );
    }
    let (_, _, answer) = call(&fake, "apps.connections.open", Some(BOT_TOKEN), json!({})).await;
    assert_eq!(answer["error"], "not_allowed_token_type");
    // A JSON body's token field is not a token: only the header is.
    let (_, _, answer) = call(&fake, "auth.test", None, json!({"token": BOT_TOKEN})).await;
    assert_eq!(answer["error"], "not_authed");
    // A form's is.
    let (_, _, answer) = form(&fake, "auth.test", &[("token", BOT_TOKEN)]).await;
    assert_eq!(answer["ok"], true);
    fake.revoke(BOT_TOKEN);
    let (_, _, answer) = call(&fake, "auth.test", Some(BOT_TOKEN), json!({})).await;
    assert_eq!(answer["error"], "token_revoked");
    // The form's token is read, not recorded with the arguments.
    let form_call = fake
        .calls_to("auth.test")
        .into_iter()
        .find(|c| !c.authorized)
        .unwrap();
    assert!(
        !form_call.args.to_string().contains("xoxb-"),
        "{:?}",
        form_call.args
    );
}

#[tokio::test]
async fn posts_and_updates_answer_as_slack_does() {
    let fake = FakeSlack::start().await;
    let blocks = json!([{"type": "rich_text", "elements": [{"type": "rich_text_section",
        "elements": [{"type": "text", "text": "<b> & co", "style": {"bold": true}}]}]},
        {"type": "actions", "elements": [{"type": "button", "action_id": "deny",
        "text": {"type": "plain_text", "text": "❌ Deny"}, "value": "deny:x"}]}]);
    let answer = post(
        &fake,
        json!({"channel": CHANNEL, "text": "note", "blocks": blocks}),
    )
    .await;
    // slack-morphism reads the answer as Slack's.
    let read: SlackApiChatPostMessageResponse = serde_json::from_value(answer.clone()).unwrap();
    assert_eq!(read.channel.0, CHANNEL);
    let ts = read.ts.0.clone();
    let shown = fake.message(CHANNEL, &ts).unwrap();
    assert_eq!(shown.plain, "<b> & co");
    assert_eq!(
        shown.buttons(),
        [("❌ Deny".to_string(), "deny:x".to_string())]
    );

    // A form-encoded post, blocks as a JSON string.
    let (_, _, answer) = form(
        &fake,
        "chat.postMessage",
        &[
            ("token", BOT_TOKEN),
            ("channel", CHANNEL),
            ("thread_ts", &ts),
            ("text", "a &amp; b"),
            ("blocks", &json!([]).to_string()),
        ],
    )
    .await;
    assert_eq!(answer["ok"], true, "{answer}");
    let reply = fake.replies_to(CHANNEL, &ts);
    assert_eq!((reply.len(), reply[0].plain.as_str()), (1, "a & b"));

    let (_, _, updated) = call(
        &fake,
        "chat.update",
        Some(BOT_TOKEN),
        json!({"channel": CHANNEL, "ts": ts, "text": "done", "blocks": []}),
    )
    .await;
    let _: SlackApiChatUpdateResponse = serde_json::from_value(updated).unwrap();
    let now = fake.message(CHANNEL, &ts).unwrap();
    assert_eq!((now.plain.as_str(), now.edits.len()), ("done", 1));
    assert!(now.buttons().is_empty());

    // Slack's refusals, by name.
    let owners = fake.says(&User::owner(), CHANNEL, "mine");
    let refusals = [
        (
            json!({"channel": "C0NOWHERE", "text": "x"}),
            "chat.postMessage",
            "channel_not_found",
        ),
        (json!({"channel": CHANNEL}), "chat.postMessage", "no_text"),
        (
            json!({"channel": CHANNEL, "text": "x", "thread_ts": "1.000001"}),
            "chat.postMessage",
            "thread_not_found",
        ),
        (
            json!({"channel": CHANNEL, "blocks": [{"type": "image"}]}),
            "chat.postMessage",
            "invalid_blocks",
        ),
        (
            json!({"channel": CHANNEL, "blocks": [{"type": "rich_text", "elements": [{"type": "rich_text_section",
            "elements": [{"type": "text", "text": "x", "style": {"unlink": true}}]}]}]}),
            "chat.postMessage",
            "invalid_blocks",
        ),
        (
            json!({"channel": CHANNEL, "ts": "1.000001", "text": "x"}),
            "chat.update",
            "message_not_found",
        ),
        (
            json!({"channel": CHANNEL, "ts": owners, "text": "x"}),
            "chat.update",
            "cant_update_message",
        ),
    ];
    for (args, method, error) in refusals {
        let (status, _, answer) = call(&fake, method, Some(BOT_TOKEN), args.clone()).await;
        assert_eq!(
            (status, answer["ok"].clone(), answer["error"].clone()),
            (200, json!(false), json!(error)),
            "{args}"
        );
    }
    fake.add_channel("C0SECRET1", "group", &["U0OWNER01"]);
    assert_eq!(
        post(&fake, json!({"channel": "C0SECRET1", "text": "x"})).await["error"],
        "not_in_channel"
    );
    fake.archive(CHANNEL);
    assert_eq!(
        post(&fake, json!({"channel": CHANNEL, "text": "x"})).await["error"],
        "is_archived"
    );
    fake.remove_scope("chat:write");
    let answer = post(&fake, json!({"channel": "C0SECRET1", "text": "x"})).await;
    assert_eq!(
        (answer["error"].clone(), answer["needed"].clone()),
        (json!("missing_scope"), json!("chat:write"))
    );
    assert!(answer["provided"].is_string());
}

#[tokio::test]
async fn a_channel_past_its_rate_gets_429_with_retry_after() {
    let fake = FakeSlack::start().await;
    for _ in 0..POSTS_PER_SECOND {
        assert_eq!(
            post(&fake, json!({"channel": CHANNEL, "text": "x"})).await["ok"],
            true
        );
    }
    let (status, retry, answer) = call(
        &fake,
        "chat.postMessage",
        Some(BOT_TOKEN),
        json!({"channel": CHANNEL, "text": "x"}),
    )
    .await;
    assert_eq!(
        (status, retry.as_deref(), answer),
        (429, Some("1"), json!({"ok": false, "error": "ratelimited"}))
    );
    // Another channel has its own rate.
    let dm = fake.im_of(&User::owner());
    assert_eq!(
        post(&fake, json!({"channel": dm, "text": "x"})).await["ok"],
        true
    );
    // On demand, any method, with the wait asked for; and a proxy's 500.
    fake.fail_next("auth.test", 1, Fault::RateLimited { retry_after: 7 });
    fake.fail_next("auth.test", 1, Fault::ServerError);
    fake.fail_next("auth.test", 1, Fault::Error("fatal_error".into()));
    let (status, retry, _) = call(&fake, "auth.test", Some(BOT_TOKEN), json!({})).await;
    assert_eq!((status, retry.as_deref()), (429, Some("7")));
    let (status, _, page) = call(&fake, "auth.test", Some(BOT_TOKEN), json!({})).await;
    assert_eq!(status, 500);
    assert!(page.is_string(), "not JSON");
    let (_, _, answer) = call(&fake, "auth.test", Some(BOT_TOKEN), json!({})).await;
    assert_eq!(answer, json!({"ok": false, "error": "fatal_error"}));
    let (_, _, answer) = call(&fake, "auth.test", Some(BOT_TOKEN), json!({})).await;
    assert_eq!(answer["ok"], true);
}

#[tokio::test]
async fn conversations_open_gives_the_direct_messages() {
    let fake = FakeSlack::start().await;
    let (_, _, answer) = call(
        &fake,
        "conversations.open",
        Some(BOT_TOKEN),
        json!({"users": "U0OWNER01"}),
    )
    .await;
    let id = answer["channel"]["id"].as_str().unwrap();
    assert!(id.starts_with('D'), "{answer}");
    assert_eq!(
        post(&fake, json!({"channel": id, "text": "hi"})).await["ok"],
        true
    );
    let (_, _, answer) = call(
        &fake,
        "conversations.open",
        Some(BOT_TOKEN),
        json!({"users": "U0NOBODY1"}),
    )
    .await;
    assert_eq!(answer["error"], "user_not_found");
    fake.remove_scope("im:write");
    let (_, _, answer) = call(
        &fake,
        "conversations.open",
        Some(BOT_TOKEN),
        json!({"users": "U0OWNER01"}),
    )
    .await;
    assert_eq!(
        (answer["error"].clone(), answer["needed"].clone()),
        (json!("missing_scope"), json!("im:write"))
    );
}

#[tokio::test]
async fn socket_mode_says_hello_and_takes_each_ticket_once() {
    let fake = FakeSlack::start().await;
    let (_, _, opened) = call(&fake, "apps.connections.open", Some(APP_TOKEN), json!({})).await;
    let url = opened["url"].as_str().unwrap();
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let hello = next(&mut ws).await;
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["connection_info"]["app_id"], APP_ID);
    assert!(hello["num_connections"].is_u64() && hello["debug_info"]["host"].is_string());
    assert!(
        tokio_tungstenite::connect_async(url).await.is_err(),
        "a ticket is good once"
    );
    assert_eq!(fake.connections(), 1);
}

#[tokio::test]
async fn envelopes_come_again_until_acknowledged() {
    let fake = FakeSlack::start().await;
    let (mut ws, _) = socket(&fake).await;
    let said = fake.says(&User::owner(), CHANNEL, "approve a1b2 <now> & then");
    let first = next(&mut ws).await;
    assert_eq!(first["retry_attempt"], 0);
    assert_eq!(first["retry_reason"], "");
    assert_eq!(first["accepts_response_payload"], false);
    assert_eq!(first["type"], "events_api");
    assert!(first["envelope_id"].is_string());
    let event: SlackPushEventCallback = serde_json::from_value(first["payload"].clone()).unwrap();
    match event.event {
        SlackEventCallbackBody::Message(m) => {
            assert_eq!(m.origin.ts.0, said);
            assert_eq!(m.sender.user.unwrap().0, "U0OWNER01");
            assert_eq!(
                m.content.unwrap().text.unwrap(),
                "approve a1b2 &lt;now&gt; &amp; then",
                "text comes escaped"
            );
        }
        other => panic!("{other:?}"),
    }
    // Not acknowledged: sent again, in the same envelope, the attempt counted.
    let started = Instant::now();
    let again = next(&mut ws).await;
    assert!(started.elapsed() >= ACK_WAIT - Duration::from_millis(100));
    assert_eq!(again["envelope_id"], first["envelope_id"]);
    assert_eq!(
        (
            again["retry_attempt"].clone(),
            again["retry_reason"].clone()
        ),
        (json!(1), json!("timeout"))
    );
    assert_eq!(again["payload"]["event_id"], first["payload"]["event_id"]);
    ack(&mut ws, &again).await;
    fake.all_acked().await;
    assert!(
        tokio::time::timeout(ACK_WAIT + Duration::from_millis(500), next(&mut ws))
            .await
            .is_err(),
        "acknowledged: not sent again"
    );
    assert_eq!(fake.envelopes()[0].sent, 2);
}

#[tokio::test]
async fn threads_reactions_presses_and_edits_carry_what_slack_sends() {
    let fake = FakeSlack::start().await;
    let (mut ws, _) = socket(&fake).await;
    let blocks = json!([{"type": "actions", "elements": [{"type": "button", "action_id": "allow-once",
        "text": {"type": "plain_text", "text": "👍 Allow once"}, "value": "allow-once:ID"}]}]);
    let ts = post(
        &fake,
        json!({"channel": CHANNEL, "text": "card", "blocks": blocks}),
    )
    .await["ts"]
        .as_str()
        .unwrap()
        .to_string();
    // The bot's own post comes back as a message event with its bot_id.
    let own = next(&mut ws).await;
    ack(&mut ws, &own).await;
    assert_eq!(own["payload"]["event"]["bot_id"], BOT_ID);
    assert_eq!(own["payload"]["event"]["user"], BOT_USER);

    let reply = fake.replies(&User::owner(), CHANNEL, &ts, "deny");
    let e = next(&mut ws).await;
    ack(&mut ws, &e).await;
    let event = &e["payload"]["event"];
    assert_eq!(
        (event["ts"].as_str(), event["thread_ts"].as_str()),
        (Some(reply.as_str()), Some(ts.as_str()))
    );
    assert_eq!(event["parent_user_id"], BOT_USER);

    fake.reacts(&User::owner(), CHANNEL, &ts, "+1::skin-tone-2");
    let e = next(&mut ws).await;
    ack(&mut ws, &e).await;
    let payload: SlackPushEventCallback = serde_json::from_value(e["payload"].clone()).unwrap();
    match payload.event {
        SlackEventCallbackBody::ReactionAdded(r) => {
            assert_eq!(
                (r.user.0.as_str(), r.reaction.0.as_str()),
                ("U0OWNER01", "+1::skin-tone-2")
            );
            assert_eq!(r.item_user.unwrap().0, BOT_USER);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        e["payload"]["event"]["item"],
        json!({"type": "message", "channel": CHANNEL, "ts": ts})
    );

    fake.presses(&User::stranger(), CHANNEL, &ts, "👍 Allow once");
    let e = next(&mut ws).await;
    ack(&mut ws, &e).await;
    assert_eq!(e["type"], "interactive");
    match serde_json::from_value::<SlackInteractionEvent>(e["payload"].clone()).unwrap() {
        SlackInteractionEvent::BlockActions(p) => {
            assert_eq!(p.user.unwrap().id.0, "U0STRANGR");
            let action = &p.actions.unwrap()[0];
            assert_eq!(
                (action.action_id.0.as_str(), action.value.as_deref()),
                ("allow-once", Some("allow-once:ID"))
            );
            assert_eq!(
                p.container,
                SlackInteractionActionContainer::Message(SlackInteractionActionMessageContainer {
                    message_ts: ts.clone().into(),
                    channel_id: Some(CHANNEL.into()),
                    is_ephemeral: Some(false),
                    is_app_unfurl: None,
                })
            );
            assert!(p.response_url.is_some() && !p.trigger_id.0.is_empty());
        }
        other => panic!("{other:?}"),
    }

    let mine = fake.says(&User::owner(), CHANNEL, "hello");
    let e = next(&mut ws).await;
    ack(&mut ws, &e).await;
    fake.edits(&User::owner(), CHANNEL, &mine, "approve a1b2");
    let e = next(&mut ws).await;
    ack(&mut ws, &e).await;
    assert_eq!(e["payload"]["event"]["subtype"], "message_changed");
    assert_eq!(e["payload"]["event"]["message"]["ts"], mine);

    // chat.postEphemeral: only the user sees it.
    let (_, _, answer) = call(
        &fake,
        "chat.postEphemeral",
        Some(BOT_TOKEN),
        json!({"channel": CHANNEL, "user": "U0STRANGR", "text": "only you"}),
    )
    .await;
    assert_eq!(answer["ok"], true);
    assert_eq!(fake.ephemerals_for(&User::stranger())[0].plain, "only you");
    let (_, _, answer) = call(
        &fake,
        "chat.postEphemeral",
        Some(BOT_TOKEN),
        json!({"channel": CHANNEL, "user": "U0NOBODY1", "text": "x"}),
    )
    .await;
    assert_eq!(answer["error"], "user_not_in_channel");
}

#[tokio::test]
async fn disconnects_and_dropped_sockets() {
    let fake = FakeSlack::start().await;
    let (mut ws, _) = socket(&fake).await;
    fake.disconnect("refresh_requested");
    let frame = next(&mut ws).await;
    assert_eq!(
        (frame["type"].as_str(), frame["reason"].as_str()),
        (Some("disconnect"), Some("refresh_requested"))
    );
    assert!(frame["debug_info"]["host"].is_string());
    fake.drop_sockets();
    let end = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match ws.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert!(end.is_ok(), "the socket is closed");
    // Envelopes wait for the next connection.
    fake.says(&User::owner(), CHANNEL, "later");
    let (mut ws, _) = socket(&fake).await;
    let e = next(&mut ws).await;
    assert_eq!(e["payload"]["event"]["text"], "later");
}

#[tokio::test]
async fn an_answer_on_post_comes_before_the_post_returns() {
    let fake = FakeSlack::start().await;
    let (mut ws, _) = socket(&fake).await;
    fake.answer_on_post(
        CHANNEL,
        "card",
        OnPost::React {
            user: User::owner(),
            reaction: "x".into(),
        },
    );
    fake.answer_late("chat.postMessage", 1, Duration::from_millis(500));
    let url = format!("{}/chat.postMessage", fake.url());
    let posting = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .bearer_auth(BOT_TOKEN)
            .header("content-type", "application/json")
            .body(json!({"channel": CHANNEL, "text": "card"}).to_string())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    let own = next(&mut ws).await;
    ack(&mut ws, &own).await;
    let reaction = next(&mut ws).await;
    assert_eq!(reaction["payload"]["event"]["type"], "reaction_added");
    assert!(
        !posting.is_finished(),
        "the answer came before the post returned"
    );
    let answered: Value = serde_json::from_str(&posting.await.unwrap()).unwrap();
    assert_eq!(reaction["payload"]["event"]["item"]["ts"], answered["ts"]);
    assert_eq!(fake.answered_posts().len(), 1);
}

#[tokio::test]
async fn an_outage_refuses_connections_and_ends() {
    let fake = FakeSlack::start().await;
    fake.go_down();
    let refused = reqwest::Client::new()
        .post(format!("{}/auth.test", fake.url()))
        .bearer_auth(BOT_TOKEN)
        .send()
        .await;
    assert!(refused.is_err());
    fake.come_back();
    let (_, _, answer) = call(&fake, "auth.test", Some(BOT_TOKEN), json!({})).await;
    assert_eq!(answer["ok"], true);
}
