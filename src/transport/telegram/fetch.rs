//! `getUpdates`, with each update read on its own.
//!
//! teloxide reads a whole batch as one `Vec<Update>`. An update it cannot read fails the
//! batch, or panics the reader (a reaction with neither `user` nor `actor_chat`); either
//! way nobody learns its update_id, so the next call asks from the same offset and gets
//! the same batch, forever, and every answer behind it is lost. Here the batch arrives as
//! JSON, each update is read alone, and one that cannot be read is skipped by its id.

use std::panic::catch_unwind;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use teloxide::RequestError;
use teloxide::payloads::GetUpdates;
use teloxide::prelude::*;
use teloxide::requests::{HasPayload, JsonRequest, Payload};
use teloxide::types::{UpdateId, UpdateKind};

/// teloxide's `GetUpdates`, answered with the updates left as JSON.
#[derive(Serialize)]
#[serde(transparent)]
struct Unread(GetUpdates);

impl Payload for Unread {
    type Output = Vec<Value>;
    const NAME: &'static str = GetUpdates::NAME;

    fn timeout_hint(&self) -> Option<Duration> {
        self.0.timeout_hint()
    }
}

/// Sends `request` (built with teloxide's setters) and returns its updates unread.
pub async fn get_updates(
    bot: &Bot,
    request: JsonRequest<GetUpdates>,
) -> Result<Vec<Value>, RequestError> {
    let payload = Unread(request.payload_ref().clone());
    JsonRequest::new(bot.clone(), payload).send().await
}

/// One update of a batch, read.
#[derive(Debug)]
pub enum Read {
    Update(Box<Update>),
    /// It cannot be read. `id`, when it has a usable one, is what to skip past.
    Unreadable {
        id: Option<UpdateId>,
        /// The update's type, its one key besides `update_id`.
        kind: String,
        why: String,
    },
}

/// Reads one update. Never panics on what Telegram sends.
pub fn read(value: Value) -> Read {
    // Ids must make a valid offset: teloxide's `as_offset` asserts they fit an i32.
    let id = value
        .get("update_id")
        .and_then(Value::as_u64)
        .and_then(|id| u32::try_from(id).ok())
        .filter(|&id| id < i32::MAX as u32)
        .map(UpdateId);
    let kind = value
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "update_id"))
        .cloned()
        .unwrap_or_default();
    let unreadable = |why: String| Read::Unreadable {
        id,
        kind: kind.clone(),
        why,
    };
    if id.is_none() {
        return unreadable("it has no usable update_id".into());
    }
    if let Some(why) = panics_teloxide(&value) {
        return unreadable(why.into());
    }
    // From text, as teloxide reads it: its `UpdateKind` reads only borrowed keys, so from a
    // `Value` every update would come out as `Error`.
    let text = value.to_string();
    // A guard for panics not yet known; those above are caught before they happen, which
    // also works where panics abort.
    match catch_unwind(|| serde_json::from_str::<Update>(&text)) {
        // teloxide reads a kind it does not know, or whose content it cannot read, as an
        // empty `Error`.
        Ok(Ok(update)) if matches!(update.kind, UpdateKind::Error(_)) => {
            unreadable("teloxide cannot read its content or does not know its kind".into())
        }
        Ok(Ok(update)) => Read::Update(Box::new(update)),
        Ok(Err(e)) => unreadable(e.to_string()),
        Err(_) => unreadable("teloxide panicked reading it".into()),
    }
}

/// Shapes that make teloxide 0.17 panic instead of failing.
fn panics_teloxide(value: &Value) -> Option<&'static str> {
    let reaction = value.get("message_reaction")?;
    let has = |key: &str| reaction.get(key).is_some_and(|v| !v.is_null());
    (!has("user") && !has("actor_chat")).then_some("a reaction with neither user nor actor_chat")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reaction(actor: Option<(&str, Value)>) -> Value {
        let mut r = json!({
            "chat": {"id": 5, "type": "private", "first_name": "O"},
            "message_id": 7,
            "date": 1_700_000_000,
            "old_reaction": [],
            "new_reaction": [{"type": "emoji", "emoji": "👍"}],
        });
        if let Some((key, value)) = actor {
            r[key] = value;
        }
        json!({"update_id": 42, "message_reaction": r})
    }

    fn unreadable(read: Read) -> (Option<u32>, String) {
        match read {
            Read::Unreadable { id, kind, .. } => (id.map(|i| i.0), kind),
            Read::Update(u) => panic!("read as {u:?}"),
        }
    }

    #[test]
    fn a_reaction_without_an_actor_is_skipped_by_its_id() {
        assert_eq!(
            unreadable(read(reaction(None))),
            (Some(42), "message_reaction".into())
        );
        assert_eq!(
            unreadable(read(reaction(Some(("user", Value::Null))))),
            (Some(42), "message_reaction".into())
        );
        let user = json!({"id": 9, "is_bot": false, "first_name": "O"});
        match read(reaction(Some(("user", user)))) {
            Read::Update(u) => assert!(matches!(u.kind, UpdateKind::MessageReaction(_))),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn content_or_ids_that_cannot_be_read_are_unreadable() {
        let bad_message = json!({"update_id": 43, "message": {"message_id": "x"}});
        assert_eq!(unreadable(read(bad_message)), (Some(43), "message".into()));
        let unknown = json!({"update_id": 44, "something_new": {}});
        assert_eq!(
            unreadable(read(unknown)),
            (Some(44), "something_new".into())
        );
        for id in [json!("45"), json!(-1), json!(i32::MAX), Value::Null] {
            let (got, _) = unreadable(read(json!({"update_id": id, "message": {}})));
            assert_eq!(got, None, "{id}");
        }
    }
}
