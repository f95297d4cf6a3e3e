//! The fake Discord checked against Discord's documented wire format, with a plain HTTP
//! client and a plain WebSocket client (not the transport's): REST routes, bodies, error
//! codes and rate-limit headers; interaction callbacks and their three seconds; the
//! gateway's opcodes, sessions, resumes and close codes.

use execgate_testkit as common;

use std::time::Duration;

use common::fake_discord::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_websockets::{ClientBuilder, MaybeTlsStream, Message, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

async fn rest(
    fake: &FakeDiscord,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
    token: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut request = client.request(method, format!("{}/api/v10{path}", fake.api_url()));
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bot {token}"));
    }
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.unwrap();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, headers, json)
}

fn post(content: &str) -> Value {
    json!({"content": content, "allowed_mentions": {"parse": []}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_routes_answer_as_discord_documents() {
    let fake = FakeDiscord::start(TOKEN).await;
    let path = format!("/channels/{CHANNEL_ID}/messages");
    // Every bot route wants `Authorization: Bot TOKEN`.
    let (status, _, body) = rest(&fake, reqwest::Method::GET, "/users/@me", None, None).await;
    assert_eq!(
        (status, body),
        (401, json!({"message": "401: Unauthorized", "code": 0}))
    );
    let (status, _, me) = rest(&fake, reqwest::Method::GET, "/users/@me", None, Some(TOKEN)).await;
    assert_eq!(status, 200);
    assert_eq!(
        me["id"],
        json!(BOT_ID.to_string()),
        "snowflakes are strings"
    );
    assert_eq!(me["bot"], json!(true));

    let buttons = json!([{"type": 1, "components": [
        {"type": 2, "style": 1, "label": "Allow", "custom_id": "execgate:allow-once:x"}]}]);
    let mut body = post("hello **there**");
    body["components"] = buttons.clone();
    let (status, _, m) = rest(&fake, reqwest::Method::POST, &path, Some(body), Some(TOKEN)).await;
    assert_eq!(status, 200, "{m}");
    for key in [
        "id",
        "channel_id",
        "author",
        "content",
        "timestamp",
        "tts",
        "mention_everyone",
        "mentions",
        "mention_roles",
        "attachments",
        "embeds",
        "pinned",
        "type",
        "flags",
    ] {
        assert!(m.get(key).is_some(), "a message object has {key}: {m}");
    }
    assert_eq!(
        (m["author"]["bot"].clone(), m["guild_id"].clone()),
        (json!(true), json!(GUILD_ID.to_string()))
    );
    assert_eq!(m["components"], buttons);
    let id: u64 = m["id"].as_str().unwrap().parse().unwrap();
    let sent = fake.message(id).unwrap();
    assert_eq!(sent.plain, "hello there");
    assert_eq!(
        sent.buttons,
        [("Allow".to_string(), "execgate:allow-once:x".to_string())]
    );

    // A reply carries message_reference; an edit removes the buttons.
    let mut reply = post("a reply");
    reply["message_reference"] = json!({"message_id": id.to_string()});
    let (status, _, r) = rest(
        &fake,
        reqwest::Method::POST,
        &path,
        Some(reply),
        Some(TOKEN),
    )
    .await;
    assert_eq!((status, r["type"].clone()), (200, json!(19)));
    assert_eq!(r["message_reference"]["message_id"], json!(id.to_string()));
    let edit = json!({"content": "closed", "components": []});
    let (status, _, e) = rest(
        &fake,
        reqwest::Method::PATCH,
        &format!("{path}/{id}"),
        Some(edit),
        Some(TOKEN),
    )
    .await;
    assert_eq!((status, e["components"].clone()), (200, json!([])));
    assert_eq!(fake.message(id).unwrap().edits, ["hello **there**"]);

    // Errors, with Discord's codes.
    let too_long = post(&"x".repeat(2001));
    let (status, _, e) = rest(
        &fake,
        reqwest::Method::POST,
        &path,
        Some(too_long),
        Some(TOKEN),
    )
    .await;
    assert_eq!((status, e["code"].clone()), (400, json!(50035)));
    let (status, _, e) = rest(
        &fake,
        reqwest::Method::PATCH,
        &format!("{path}/1"),
        Some(json!({"content": "x"})),
        Some(TOKEN),
    )
    .await;
    assert_eq!(
        (status, e),
        (404, json!({"message": "Unknown Message", "code": 10008}))
    );
    let owners = fake.say(CHANNEL_ID, &User::owner(), "mine");
    let (status, _, e) = rest(
        &fake,
        reqwest::Method::PATCH,
        &format!("{path}/{owners}"),
        Some(json!({"content": "x"})),
        Some(TOKEN),
    )
    .await;
    assert_eq!((status, e["code"].clone()), (403, json!(50005)));
    let (status, _, e) = rest(
        &fake,
        reqwest::Method::POST,
        "/channels/42/messages",
        Some(post("x")),
        Some(TOKEN),
    )
    .await;
    assert_eq!((status, e["code"].clone()), (404, json!(10003)));
    fake.fail_next(POST_MESSAGE, Fault::missing_permissions());
    let (status, _, e) = rest(
        &fake,
        reqwest::Method::POST,
        &path,
        Some(post("x")),
        Some(TOKEN),
    )
    .await;
    assert_eq!(
        (status, e),
        (
            403,
            json!({"message": "Missing Permissions", "code": 50013})
        )
    );

    // A DM is opened with the recipient's id.
    let (status, _, dm) = rest(
        &fake,
        reqwest::Method::POST,
        "/users/@me/channels",
        Some(json!({"recipient_id": User::owner().id.to_string()})),
        Some(TOKEN),
    )
    .await;
    assert_eq!((status, dm["type"].clone()), (200, json!(1)));
    assert_eq!(
        dm["recipients"][0]["id"],
        json!(User::owner().id.to_string())
    );
    assert_eq!(
        fake.dm_channel(&User::owner()),
        dm["id"].as_str().unwrap().parse().ok()
    );
}

/// Five posts per five seconds in a channel; the sixth is a 429 with `retry_after` (float
/// seconds), `global`, and the headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posting_too_fast_is_a_429_as_discord_writes_it() {
    let fake = FakeDiscord::start(TOKEN).await;
    let path = format!("/channels/{CHANNEL_ID}/messages");
    for i in 0..5 {
        let (status, _, _) = rest(
            &fake,
            reqwest::Method::POST,
            &path,
            Some(post(&format!("m{i}"))),
            Some(TOKEN),
        )
        .await;
        assert_eq!(status, 200);
    }
    let (status, headers, body) = rest(
        &fake,
        reqwest::Method::POST,
        &path,
        Some(post("m5")),
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, 429);
    let after = body["retry_after"].as_f64().unwrap();
    assert!(after > 4.0 && after <= 5.0, "{body}");
    assert_eq!(
        (body["global"].clone(), body["message"].clone()),
        (json!(false), json!("You are being rate limited."))
    );
    assert_eq!(headers["retry-after"], "5");
    assert_eq!(headers["x-ratelimit-remaining"], "0");
    assert_eq!(headers["x-ratelimit-scope"], "user");
    assert!(
        headers.contains_key("x-ratelimit-reset-after")
            && headers.contains_key("x-ratelimit-bucket")
    );
    assert_eq!(fake.rate_limited(), 1);
    let mut global = Fault::rate_limited(0.25);
    global.global = true;
    fake.fail_next(GET_ME, global);
    let (status, headers, body) =
        rest(&fake, reqwest::Method::GET, "/users/@me", None, Some(TOKEN)).await;
    assert_eq!((status, body["global"].clone()), (429, json!(true)));
    assert_eq!(headers["x-ratelimit-global"], "true");
}

async fn connect(url: &str) -> Ws {
    let uri = format!("{url}/?v=10&encoding=json");
    ClientBuilder::new()
        .uri(&uri)
        .unwrap()
        .connect()
        .await
        .unwrap()
        .0
}

async fn next(ws: &mut Ws) -> Value {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("a frame within 5 s")
            .expect("the connection is open")
            .unwrap();
        if let Some(text) = frame.as_text() {
            return serde_json::from_str(text).unwrap();
        }
        if let Some((code, reason)) = frame.as_close() {
            return json!({"close": u16::from(code), "reason": reason});
        }
    }
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.unwrap();
}

fn identify(token: &str, intents: u64) -> Value {
    json!({"op": 2, "d": {"token": token, "intents": intents,
        "properties": {"os": "linux", "browser": "test", "device": "test"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_speaks_discords_opcodes() {
    let fake = FakeDiscord::start(TOKEN).await;
    fake.set_heartbeat_interval(1000);
    let wanted =
        intents::GUILD_MESSAGES | intents::GUILD_MESSAGE_REACTIONS | intents::MESSAGE_CONTENT;

    // A wrong token: 4004.
    let mut ws = connect(&fake.gateway_url()).await;
    let hello = next(&mut ws).await;
    assert_eq!(
        (
            hello["op"].clone(),
            hello["d"]["heartbeat_interval"].clone()
        ),
        (json!(10), json!(1000))
    );
    send(&mut ws, identify("nope", wanted)).await;
    assert_eq!(next(&mut ws).await["close"], json!(4004));

    // Identify: READY is dispatch 1, with a session and where to resume.
    let mut ws = connect(&fake.gateway_url()).await;
    next(&mut ws).await;
    send(&mut ws, identify(&format!("Bot {TOKEN}"), wanted)).await;
    let ready = next(&mut ws).await;
    assert_eq!(
        (ready["op"].clone(), ready["t"].clone(), ready["s"].clone()),
        (json!(0), json!("READY"), json!(1))
    );
    assert_eq!(ready["d"]["user"]["id"], json!(BOT_ID.to_string()));
    let session = ready["d"]["session_id"].as_str().unwrap().to_string();
    let resume_url = ready["d"]["resume_gateway_url"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(resume_url, fake.gateway_url());
    assert_eq!(fake.identifies().last().unwrap().intents, wanted);
    send(&mut ws, json!({"op": 1, "d": 1})).await;
    assert_eq!(
        next(&mut ws).await["op"],
        json!(11),
        "a heartbeat is acknowledged"
    );

    // Users act: dispatches in sequence.
    let said = fake.say(CHANNEL_ID, &User::owner(), "/pending");
    let m = next(&mut ws).await;
    assert_eq!(
        (m["t"].clone(), m["s"].clone()),
        (json!("MESSAGE_CREATE"), json!(2))
    );
    assert_eq!(m["d"]["id"], json!(said.to_string()));
    assert_eq!(m["d"]["author"]["id"], json!(User::owner().id.to_string()));
    assert!(m["d"]["member"].is_object() && m["d"]["guild_id"].is_string());
    fake.react(CHANNEL_ID, &User::owner(), said, "👍");
    let r = next(&mut ws).await;
    assert_eq!(
        (r["t"].clone(), r["d"]["emoji"].clone()),
        (
            json!("MESSAGE_REACTION_ADD"),
            json!({"id": null, "name": "👍"})
        )
    );
    let pressed = fake.press(CHANNEL_ID, &User::owner(), said, "execgate:deny:x");
    let i = next(&mut ws).await;
    assert_eq!(
        (i["t"].clone(), i["d"]["type"].clone()),
        (json!("INTERACTION_CREATE"), json!(3))
    );
    assert_eq!(
        i["d"]["data"],
        json!({"custom_id": "execgate:deny:x", "component_type": 2})
    );
    assert_eq!(
        i["d"]["member"]["user"]["id"],
        json!(User::owner().id.to_string())
    );

    // An interaction's first callback, within three seconds, once.
    let token = i["d"]["token"].as_str().unwrap().to_string();
    let callback = format!("/interactions/{pressed}/{token}/callback");
    let deferred = json!({"type": 5, "data": {"flags": 64}});
    let (status, _, _) = rest(
        &fake,
        reqwest::Method::POST,
        &callback,
        Some(deferred.clone()),
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _, e) = rest(
        &fake,
        reqwest::Method::POST,
        &callback,
        Some(deferred),
        None,
    )
    .await;
    assert_eq!((status, e["code"].clone()), (400, json!(40060)));
    let original = format!("/webhooks/{APPLICATION_ID}/{token}/messages/@original");
    let (status, _, _) = rest(
        &fake,
        reqwest::Method::PATCH,
        &original,
        Some(json!({"content": "done"})),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(fake.seen_by_presser(pressed).as_deref(), Some("done"));

    // The connection drops; what happened meanwhile is replayed on a resume at the
    // resume URL, then RESUMED.
    drop(ws);
    fake.wait_until("the connection gone", |f| (!f.connected()).then_some(()))
        .await;
    let missed = fake.say(CHANNEL_ID, &User::owner(), "while away");
    let mut ws = connect(&resume_url).await;
    next(&mut ws).await;
    send(
        &mut ws,
        json!({"op": 6, "d": {"token": TOKEN, "session_id": session, "seq": 4}}),
    )
    .await;
    let replayed = next(&mut ws).await;
    assert_eq!(
        (replayed["s"].clone(), replayed["d"]["id"].clone()),
        (json!(5), json!(missed.to_string()))
    );
    assert_eq!(next(&mut ws).await["t"], json!("RESUMED"));
    assert_eq!(fake.connections().1, 1);

    // op 7 and op 9 go out on demand; a session that cannot be resumed is refused.
    assert!(fake.reconnect());
    assert_eq!(next(&mut ws).await["op"], json!(7));
    assert!(fake.invalidate_session(false));
    assert_eq!(
        next(&mut ws).await,
        json!({"op": 9, "d": false, "s": null, "t": null})
    );
    drop(ws);
    let mut ws = connect(&resume_url).await;
    next(&mut ws).await;
    send(
        &mut ws,
        json!({"op": 6, "d": {"token": TOKEN, "session_id": session, "seq": 6}}),
    )
    .await;
    assert_eq!(next(&mut ws).await["op"], json!(9));

    // A connection that stops heartbeating is closed.
    let mut ws = connect(&fake.gateway_url()).await;
    next(&mut ws).await;
    send(&mut ws, identify(TOKEN, wanted)).await;
    next(&mut ws).await;
    let closed = next(&mut ws).await;
    assert_eq!(closed["close"], json!(4009), "{closed}");

    // Privileged intents the portal has off: 4014.
    fake.refuse_privileged_intents();
    let mut ws = connect(&fake.gateway_url()).await;
    next(&mut ws).await;
    send(&mut ws, identify(TOKEN, wanted)).await;
    assert_eq!(next(&mut ws).await["close"], json!(4014));
    let mut ws = connect(&fake.gateway_url()).await;
    next(&mut ws).await;
    send(&mut ws, identify(TOKEN, intents::DIRECT_MESSAGES)).await;
    assert_eq!(
        next(&mut ws).await["t"],
        json!("READY"),
        "unprivileged ones still work"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_interaction_callback_is_unknown() {
    let fake = FakeDiscord::start(TOKEN).await;
    let mut ws = connect(&fake.gateway_url()).await;
    next(&mut ws).await;
    send(&mut ws, identify(TOKEN, intents::GUILD_MESSAGES)).await;
    next(&mut ws).await;
    let said = fake.say(CHANNEL_ID, &User::owner(), "x");
    next(&mut ws).await;
    let pressed = fake.press(CHANNEL_ID, &User::stranger(), said, "execgate:deny:x");
    let i = next(&mut ws).await;
    let token = i["d"]["token"].as_str().unwrap();
    tokio::time::sleep(INTERACTION_ACK + Duration::from_millis(100)).await;
    let callback = format!("/interactions/{pressed}/{token}/callback");
    let body = json!({"type": 4, "data": {"content": "late", "flags": 64}});
    let (status, _, e) = rest(&fake, reqwest::Method::POST, &callback, Some(body), None).await;
    assert_eq!(
        (status, e),
        (
            404,
            json!({"message": "Unknown interaction", "code": 10062})
        )
    );
    let recorded = fake.callbacks(pressed);
    assert_eq!(recorded.len(), 1);
    assert!(!recorded[0].accepted && recorded[0].after > INTERACTION_ACK);
}
