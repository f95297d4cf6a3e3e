//! The REST API, `/api/v10/…`: the routes the bot uses, with Discord's checks
//! (`Authorization: Bot TOKEN`, content and component limits, who may edit what, the
//! per-channel posting limit), its error bodies (`{"message", "code"}`; a 429's
//! `retry_after` and `global` with `Retry-After` and `X-RateLimit-*` headers), and the
//! three-second life of an interaction token's first callback.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::{Value, json};

use super::server::Shared;
use super::state::{APPLICATION_ID, FakeState, INTERACTION_ACK, MAX_CONTENT, Out, snowflake};
use super::types::{Call, Callback, Fault, OnPost};

/// Route names, as faults and `calls_to` name them.
pub const GET_ME: &str = "GET /users/@me";
pub const OPEN_DM: &str = "POST /users/@me/channels";
pub const POST_MESSAGE: &str = "POST /channels/{id}/messages";
pub const EDIT_MESSAGE: &str = "PATCH /channels/{id}/messages/{id}";
pub const CALLBACK: &str = "POST /interactions/{id}/{token}/callback";
pub const EDIT_ORIGINAL: &str = "PATCH /webhooks/{id}/{token}/messages/@original";

/// An answer: a status and its JSON (None: 204 No Content).
type Answer = (u16, Option<Value>);

fn error(status: u16, code: u64, message: &str) -> Answer {
    (status, Some(json!({"message": message, "code": code})))
}

/// Every request lands here.
pub(super) async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (route, args) = route(&method, &segments);
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body).unwrap_or(Value::String("<not JSON>".into()))
    };
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let index = {
        let mut state = shared.lock();
        state.calls.push(Call {
            route: format!("{method} {}", path.trim_start_matches("/api/v10")),
            authorization: authorization.clone(),
            body: body.clone(),
            at: Instant::now(),
            status: 0,
            answer: Value::Null,
        });
        state.calls.len() - 1
    };
    let needs_token = !matches!(route, Some(CALLBACK | EDIT_ORIGINAL));
    let (answer, slow) = {
        let mut state = shared.lock();
        let answer = match route {
            None => error(404, 0, "404: Not Found"),
            Some(_)
                if needs_token
                    && authorization.as_deref() != Some(&format!("Bot {}", shared.token)) =>
            {
                error(401, 0, "401: Unauthorized")
            }
            Some(route) => match state.take_fault(route) {
                Some(fault) => fault_answer(&fault),
                None => answer(&mut state, route, &args, &body),
            },
        };
        let slow = route.and_then(|r| state.slow.get(r).copied());
        (answer, slow)
    };
    if let Some(delay) = slow {
        tokio::time::sleep(delay).await;
    }
    {
        let mut state = shared.lock();
        if let Some(call) = state.calls.get_mut(index) {
            call.status = answer.0;
            call.answer = answer.1.clone().unwrap_or(Value::Null);
        }
    }
    respond(answer)
}

/// The route a request takes, and its ids.
fn route<'a>(method: &Method, segments: &[&'a str]) -> (Option<&'static str>, Vec<&'a str>) {
    let rest = match segments {
        ["api", "v10", rest @ ..] => rest,
        _ => return (None, vec![]),
    };
    match (method.as_str(), rest) {
        ("GET", ["users", "@me"]) => (Some(GET_ME), vec![]),
        ("POST", ["users", "@me", "channels"]) => (Some(OPEN_DM), vec![]),
        ("POST", ["channels", c, "messages"]) => (Some(POST_MESSAGE), vec![c]),
        ("PATCH", ["channels", c, "messages", m]) => (Some(EDIT_MESSAGE), vec![c, m]),
        ("POST", ["interactions", i, t, "callback"]) => (Some(CALLBACK), vec![i, t]),
        ("PATCH", ["webhooks", a, t, "messages", "@original"]) => (Some(EDIT_ORIGINAL), vec![a, t]),
        _ => (None, vec![]),
    }
}

fn fault_answer(fault: &Fault) -> Answer {
    (fault.status, Some(fault.body()))
}

fn respond((status, body): Answer) -> Response {
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
    if status == 429 {
        let after = body
            .as_ref()
            .and_then(|b| b["retry_after"].as_f64())
            .unwrap_or(1.0);
        let global = body.as_ref().is_some_and(|b| b["global"] == json!(true));
        builder = builder
            .header("Retry-After", (after.ceil() as u64).to_string())
            .header("X-RateLimit-Scope", if global { "global" } else { "user" });
        if global {
            builder = builder.header("X-RateLimit-Global", "true");
        } else {
            builder = builder
                .header("X-RateLimit-Limit", "5")
                .header("X-RateLimit-Remaining", "0")
                .header("X-RateLimit-Reset-After", format!("{after:.3}"))
                .header("X-RateLimit-Bucket", "fake-channel-messages");
        }
    }
    match body {
        Some(body) => builder
            .header("Content-Type", "application/json")
            .body(Body::from(body.to_string())),
        None => builder.body(Body::empty()),
    }
    .unwrap_or_default()
}

fn answer(state: &mut FakeState, route: &str, args: &[&str], body: &Value) -> Answer {
    match route {
        GET_ME => {
            let mut me = state.bot.json();
            me["bot"] = json!(true);
            me["mfa_enabled"] = json!(false);
            me["verified"] = json!(true);
            me["flags"] = json!(0);
            (200, Some(me))
        }
        OPEN_DM => {
            let recipient = snowflake(&body["recipient_id"]);
            match state.users.get(&recipient).cloned() {
                Some(user) if !user.bot => {
                    let id = state.dm_with(&user);
                    (200, state.channels.get(&id).cloned())
                }
                Some(_) => error(400, 50007, "Cannot send messages to this user"),
                None => error(400, 50035, "Invalid Form Body"),
            }
        }
        POST_MESSAGE => post_message(state, snowflake(&json!(args[0])), body),
        EDIT_MESSAGE => edit_message(
            state,
            snowflake(&json!(args[0])),
            snowflake(&json!(args[1])),
            body,
        ),
        CALLBACK => callback(state, snowflake(&json!(args[0])), args[1], body),
        EDIT_ORIGINAL => edit_original(state, args[1], body),
        _ => error(404, 0, "404: Not Found"),
    }
}

/// Checks a message body as Discord does for the fields the bot sends.
fn invalid_body(body: &Value) -> Option<String> {
    if !body.is_object() {
        return Some("the body is not a JSON object".into());
    }
    if let Some(content) = body.get("content").and_then(Value::as_str)
        && content.chars().count() > MAX_CONTENT
    {
        return Some(format!(
            "content: Must be {MAX_CONTENT} or fewer in length."
        ));
    }
    for row in body["components"].as_array().into_iter().flatten() {
        if row["type"] != json!(1) {
            return Some("components: a top-level component must be an action row".into());
        }
        let buttons = row["components"].as_array().cloned().unwrap_or_default();
        if buttons.is_empty() || buttons.len() > 5 {
            return Some("components: an action row holds 1 to 5 buttons".into());
        }
        for b in buttons {
            let id = b["custom_id"].as_str().unwrap_or_default();
            let label = b["label"].as_str().unwrap_or_default();
            if b["type"] != json!(2)
                || id.is_empty()
                || id.len() > 100
                || label.chars().count() > 80
            {
                return Some("components: a button needs a custom_id of 1-100 characters and a label of at most 80".into());
            }
        }
    }
    None
}

fn post_message(state: &mut FakeState, channel: u64, body: &Value) -> Answer {
    if !state.channels.contains_key(&channel) {
        return error(404, 10003, "Unknown Channel");
    }
    if let Some(why) = invalid_body(body) {
        return (
            400,
            Some(json!({"message": "Invalid Form Body", "code": 50035, "errors": why})),
        );
    }
    let content = body["content"].as_str().unwrap_or_default();
    if content.is_empty() && body["components"].as_array().is_none_or(Vec::is_empty) {
        return error(400, 50006, "Cannot send an empty message");
    }
    let reply_to = body["message_reference"]["message_id"]
        .as_str()
        .and_then(|s| s.parse::<u64>().ok());
    if let Some(to) = reply_to
        && !state.messages.contains_key(&to)
        && body["message_reference"]["fail_if_not_exists"] != json!(false)
    {
        return (
            400,
            Some(
                json!({"message": "Invalid Form Body", "code": 50035, "errors": "message_reference: Unknown message"}),
            ),
        );
    }
    if let Err(wait) = state.may_post(channel) {
        state.rate_limited += 1;
        return fault_answer(&Fault::rate_limited((wait * 1000.0).ceil() / 1000.0));
    }
    let bot = state.bot.clone();
    let mut m = state.message_json(
        channel,
        &bot,
        content,
        reply_to.filter(|to| state.messages.contains_key(to)),
    );
    m["components"] = body.get("components").cloned().unwrap_or(json!([]));
    m["flags"] = json!(body["flags"].as_u64().unwrap_or(0) & (1 << 2));
    if let Some(mentions) = body.get("allowed_mentions") {
        m["allowed_mentions"] = mentions.clone();
    }
    let id = state.store(m.clone(), true);
    let mut event = m.clone();
    event.as_object_mut().map(|o| o.remove("allowed_mentions"));
    if event.get("guild_id").is_some() {
        event["member"] = FakeState::member_json(&bot, false);
    }
    // Discord tells the bot of its own messages too.
    state.dispatch("MESSAGE_CREATE", event);
    on_post(state, channel, id);
    let mut answer = m;
    answer.as_object_mut().map(|o| o.remove("allowed_mentions"));
    (200, Some(answer))
}

/// The owner's answers registered for a post like this one, given in the same instant.
fn on_post(state: &mut FakeState, channel: u64, id: u64) {
    let Some(sent) = state.sent(id) else { return };
    let Some(i) = state
        .on_post
        .iter()
        .position(|(needle, _, _)| sent.plain.contains(needle.as_str()))
    else {
        return;
    };
    let (_, action, user) = state.on_post.remove(i);
    match action {
        OnPost::Command(text) => {
            super::users::say(state, channel, &user, &text, None);
        }
        OnPost::Reply(text) => {
            super::users::say(state, channel, &user, &text, Some(id));
        }
        OnPost::React(emoji) => super::users::react(state, channel, &user, id, &emoji, None),
        OnPost::Press(prefix) => {
            if let Some((_, custom_id)) = sent.buttons.iter().find(|(_, c)| c.starts_with(&prefix))
            {
                super::users::press(state, channel, &user, id, custom_id);
            }
        }
    }
}

fn edit_message(state: &mut FakeState, channel: u64, id: u64, body: &Value) -> Answer {
    if !state.channels.contains_key(&channel) {
        return error(404, 10003, "Unknown Channel");
    }
    if let Some(why) = invalid_body(body) {
        return (
            400,
            Some(json!({"message": "Invalid Form Body", "code": 50035, "errors": why})),
        );
    }
    let Some(m) = state
        .messages
        .get_mut(&id)
        .filter(|m| snowflake(&m.json["channel_id"]) == channel)
    else {
        return error(404, 10008, "Unknown Message");
    };
    if !m.by_bot {
        return error(403, 50005, "Cannot edit a message authored by another user");
    }
    let before = m.json["content"].as_str().unwrap_or_default().to_string();
    if let Some(content) = body.get("content").and_then(Value::as_str) {
        m.json["content"] = json!(content);
    }
    if let Some(components) = body.get("components") {
        m.json["components"] = components.clone();
    }
    if let Some(mentions) = body.get("allowed_mentions") {
        m.json["allowed_mentions"] = mentions.clone();
    }
    m.json["edited_timestamp"] = json!(super::state::now_iso());
    m.edits.push(before);
    let mut answer = m.json.clone();
    answer.as_object_mut().map(|o| o.remove("allowed_mentions"));
    (200, Some(answer))
}

fn callback(state: &mut FakeState, interaction: u64, token: &str, body: &Value) -> Answer {
    let kind = body["type"].as_u64().unwrap_or(0);
    let Some(pending) = state
        .interactions
        .get_mut(&interaction)
        .filter(|p| p.token == token)
    else {
        return error(404, 10062, "Unknown interaction");
    };
    let after = pending.at.elapsed();
    let late = after > INTERACTION_ACK;
    let again = pending.acked.is_some();
    let accepted = !late && !again && matches!(kind, 4..=7);
    if accepted {
        pending.acked = Some(kind);
    }
    state.callbacks.push(Callback {
        interaction_id: interaction,
        kind,
        data: body["data"].clone(),
        after,
        accepted,
    });
    if late {
        return error(404, 10062, "Unknown interaction");
    }
    if again {
        return error(400, 40060, "Interaction has already been acknowledged.");
    }
    if !matches!(kind, 4..=7) {
        return (
            400,
            Some(json!({"message": "Invalid Form Body", "code": 50035, "errors": "type"})),
        );
    }
    if kind == 4 && body["data"]["content"].as_str().is_none_or(str::is_empty) {
        return error(400, 50006, "Cannot send an empty message");
    }
    if kind == 4 {
        let text = body["data"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if let Some(p) = state.interactions.get_mut(&interaction) {
            p.original = Some(text);
        }
    }
    (204, None)
}

fn edit_original(state: &mut FakeState, token: &str, body: &Value) -> Answer {
    let Some((_, pending)) = state
        .interactions
        .iter_mut()
        .find(|(_, p)| p.token == token)
    else {
        return error(404, 10015, "Unknown Webhook");
    };
    if !matches!(pending.acked, Some(4 | 5)) {
        return error(404, 10008, "Unknown Message");
    }
    if pending.at.elapsed() > Duration::from_secs(15 * 60) {
        return error(401, 50027, "Invalid Webhook Token");
    }
    let content = body["content"].as_str().unwrap_or_default().to_string();
    pending.original = Some(content.clone());
    let bot = state.bot.clone();
    let mut m = state.message_json(0, &bot, &content, None);
    m["flags"] = json!(64);
    m["webhook_id"] = json!(APPLICATION_ID.to_string());
    (200, Some(m))
}

/// A test's `go_down` also ends the gateway connection.
pub(super) fn cut_gateway(state: &mut FakeState) {
    state.send_raw(Out::Drop);
    state.live = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_read_with_their_ids() {
        let seg = |p: &'static str| p.split('/').filter(|s| !s.is_empty()).collect::<Vec<_>>();
        assert_eq!(
            route(&Method::POST, &seg("/api/v10/channels/5/messages")),
            (Some(POST_MESSAGE), vec!["5"])
        );
        assert_eq!(
            route(
                &Method::PATCH,
                &seg("/api/v10/webhooks/1/tok/messages/@original")
            )
            .0,
            Some(EDIT_ORIGINAL)
        );
        assert_eq!(route(&Method::GET, &seg("/api/v9/users/@me")).0, None);
    }
}
