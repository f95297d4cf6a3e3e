//! What users do, dispatched on the gateway as Discord would: a message (a reply names
//! the message it answers), a reaction, a button press (an interaction with a token the
//! bot has three seconds to call back on).

use serde_json::{Value, json};

use super::state::{APPLICATION_ID, FakeState, GUILD_ID, Pending};
use super::types::User;

/// `user` says `text` in `channel` (replying to `reply_to`); returns the message id.
pub fn say(
    state: &mut FakeState,
    channel: u64,
    user: &User,
    text: &str,
    reply_to: Option<u64>,
) -> u64 {
    let mut m = state.message_json(channel, user, text, reply_to);
    if reply_to.is_some() && m["referenced_message"].is_null() {
        // A reply to a message Discord does not know: only the reference is sent.
        m.as_object_mut().map(|o| o.remove("referenced_message"));
    }
    let id = state.store(m.clone(), false);
    if m.get("guild_id").is_some() {
        m["member"] = FakeState::member_json(user, false);
    }
    state.dispatch("MESSAGE_CREATE", m);
    id
}

/// `user` adds the reaction `emoji` (or a custom emoji `custom = (name, id)`) to
/// `message`.
pub fn react(
    state: &mut FakeState,
    channel: u64,
    user: &User,
    message: u64,
    emoji: &str,
    custom: Option<u64>,
) {
    let emoji = match custom {
        Some(id) => json!({"id": id.to_string(), "name": emoji, "animated": false}),
        None => json!({"id": null, "name": emoji}),
    };
    let author = state
        .messages
        .get(&message)
        .map(|m| m.json["author"]["id"].clone())
        .unwrap_or(Value::Null);
    let mut r = json!({
        "user_id": user.id.to_string(),
        "channel_id": channel.to_string(),
        "message_id": message.to_string(),
        "emoji": emoji,
        "burst": false,
        "type": 0,
        "message_author_id": author,
    });
    if !state.is_dm(channel) {
        r["guild_id"] = json!(GUILD_ID.to_string());
        r["member"] = FakeState::member_json(user, true);
    }
    state.dispatch("MESSAGE_REACTION_ADD", r);
}

/// `user` presses the button `custom_id` under `message`; returns the interaction id.
pub fn press(
    state: &mut FakeState,
    channel: u64,
    user: &User,
    message: u64,
    custom_id: &str,
) -> u64 {
    let id = state.id();
    let token = format!("aW50ZXJhY3Rpb246{id}:fake-interaction-token");
    let message_json = state
        .messages
        .get(&message)
        .map(|m| {
            let mut j = m.json.clone();
            j.as_object_mut().map(|o| o.remove("allowed_mentions"));
            j
        })
        .unwrap_or_else(|| json!({"id": message.to_string()}));
    let dm = state.is_dm(channel);
    let mut channel_json = state
        .channels
        .get(&channel)
        .cloned()
        .unwrap_or_else(|| json!({"id": channel.to_string(), "type": 0}));
    channel_json.as_object_mut().map(|o| o.remove("recipients"));
    let mut i = json!({
        "id": id.to_string(),
        "application_id": APPLICATION_ID.to_string(),
        "type": 3,
        "data": {"custom_id": custom_id, "component_type": 2},
        "channel": channel_json,
        "channel_id": channel.to_string(),
        "token": token,
        "version": 1,
        "message": message_json,
        "app_permissions": "2248473465835073",
        "locale": "en-US",
        "entitlements": [],
        "authorizing_integration_owners": {"0": if dm { Value::Null } else { json!(GUILD_ID.to_string()) }},
        "context": if dm { 1 } else { 0 },
        "attachment_size_limit": 10_485_760,
    });
    if dm {
        i["user"] = user.json();
        i["authorizing_integration_owners"] = json!({"1": user.id.to_string()});
    } else {
        i["guild_id"] = json!(GUILD_ID.to_string());
        i["guild_locale"] = json!("en-US");
        let mut member = FakeState::member_json(user, true);
        member["permissions"] = json!("2248473465835073");
        i["member"] = member;
    }
    state.interactions.insert(
        id,
        Pending {
            token,
            at: std::time::Instant::now(),
            acked: None,
            original: None,
        },
    );
    state.dispatch("INTERACTION_CREATE", i);
    id
}
