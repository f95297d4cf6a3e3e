//! What users do, injected as the updates Telegram would send: messages, replies, edits,
//! reactions and button presses, and the answers given the instant a bot message exists
//! (`FakeTelegram::answer_on_post`).

use serde_json::{Value, json};

use super::FakeTelegram;
use super::html::Formatted;
use super::state::{FakeState, StoredMessage, now};
use super::types::{Actor, OnPost, PostAnswered, Reaction, User};

/// Callback query ids are opaque numeric strings in Telegram.
const FIRST_QUERY_ID: u64 = 4_382_000_000_000_000_000;

impl FakeTelegram {
    /// `user` sends `text` to `chat_id` (their own id for a private chat, or a known group).
    /// Returns (update_id, message_id).
    pub fn send_text(&self, chat_id: i64, user: &User, text: &str) -> (i64, i64) {
        self.mutate(|state| {
            let message_id = state.store_user_message(chat_id, user, text, None);
            let message = state.message_json(chat_id, message_id);
            (state.enqueue("message", message), message_id)
        })
    }

    /// `user` replies to `reply_to_message_id` (the bot's message or anyone's) with `text`.
    /// Returns (update_id, message_id).
    pub fn reply_to(
        &self,
        chat_id: i64,
        user: &User,
        reply_to_message_id: i64,
        text: &str,
    ) -> (i64, i64) {
        self.mutate(|state| {
            assert!(
                state.messages.contains_key(&(chat_id, reply_to_message_id)),
                "reply_to: no message {reply_to_message_id} in chat {chat_id}"
            );
            state.reply_update(chat_id, user, reply_to_message_id, text)
        })
    }

    /// `user` edits their message `message_id` to `new_text`: an `edited_message` update.
    pub fn edit_text(&self, chat_id: i64, user: &User, message_id: i64, new_text: &str) -> i64 {
        self.mutate(|state| {
            let message = state
                .messages
                .get_mut(&(chat_id, message_id))
                .unwrap_or_else(|| panic!("edit_text: no message {message_id} in chat {chat_id}"));
            assert!(
                !message.by_bot && message.from["id"] == json!(user.id),
                "edit_text: message {message_id} in chat {chat_id} was not sent by user {}",
                user.id
            );
            let old = std::mem::replace(&mut message.raw, new_text.to_string());
            message.edits.push(old);
            message.text = Formatted::user_text(new_text);
            message.edit_date = Some(now());
            let message = state.message_json(chat_id, message_id);
            state.enqueue("edited_message", message)
        })
    }

    /// A reaction change on `message_id`: `new` is the actor's whole current set of
    /// reactions, `old` the previous one (as Telegram sends them).
    pub fn react(
        &self,
        chat_id: i64,
        actor: Actor,
        message_id: i64,
        old: Vec<Reaction>,
        new: Vec<Reaction>,
    ) -> i64 {
        self.mutate(|state| state.reaction_update(chat_id, actor, message_id, &old, &new))
    }

    /// `user` presses an inline button carrying `data` under `message_id`.
    /// Returns (update_id, callback_query_id). The fake does not check that the message
    /// has such a button, so tests can forge stale or bogus presses.
    pub fn press_button(
        &self,
        chat_id: i64,
        user: &User,
        message_id: i64,
        data: &str,
    ) -> (i64, String) {
        self.mutate(|state| {
            assert!(
                state.messages.contains_key(&(chat_id, message_id)),
                "press_button: no message {message_id} in chat {chat_id}"
            );
            state.press_update(chat_id, user, message_id, data)
        })
    }

    /// What `send_text` would queue, returned instead: the update (with a fresh update_id;
    /// the message is stored) to hand to `push_raw`, e.g. twice to simulate a redelivery.
    pub fn make_text_update(&self, chat_id: i64, user: &User, text: &str) -> Value {
        let mut state = self.state();
        let message_id = state.store_user_message(chat_id, user, text, None);
        let message = state.message_json(chat_id, message_id);
        let update_id = state.next_update_id;
        state.next_update_id += 1;
        json!({"update_id": update_id, "message": message})
    }

    /// Queues `update` exactly as given (it must carry its own `update_id`): for duplicates,
    /// out-of-order ids and shapes the helpers do not produce.
    pub fn push_raw(&self, update: Value) {
        self.mutate(|state| {
            if let Some(id) = update.get("update_id").and_then(Value::as_i64) {
                state.next_update_id = state.next_update_id.max(id + 1);
            }
            state.queue.push_back(update);
        });
    }
}

impl FakeState {
    fn store_user_message(
        &mut self,
        chat_id: i64,
        user: &User,
        text: &str,
        reply_to: Option<i64>,
    ) -> i64 {
        if chat_id > 0 {
            assert_eq!(chat_id, user.id, "a private chat's id is the user's id");
            self.chats
                .entry(chat_id)
                .or_insert_with(|| user.private_chat_json());
        } else {
            assert!(
                self.chats.contains_key(&chat_id),
                "unknown group {chat_id}: add_group first"
            );
        }
        let message_id = self.take_message_id(chat_id);
        self.messages.insert(
            (chat_id, message_id),
            StoredMessage {
                chat_id,
                message_id,
                by_bot: false,
                from: user.to_json(),
                date: now(),
                edit_date: None,
                raw: text.to_string(),
                parse_mode: None,
                text: Formatted::user_text(text),
                reply_markup: None,
                reply_to,
                edits: Vec::new(),
            },
        );
        message_id
    }

    /// Queues `user`'s reply to `reply_to` in `chat_id`: (update_id, message_id).
    fn reply_update(&mut self, chat_id: i64, user: &User, reply_to: i64, text: &str) -> (i64, i64) {
        let message_id = self.store_user_message(chat_id, user, text, Some(reply_to));
        let message = self.message_json(chat_id, message_id);
        (self.enqueue("message", message), message_id)
    }

    /// Queues a reaction change on `message_id`; returns the update_id.
    fn reaction_update(
        &mut self,
        chat_id: i64,
        actor: Actor,
        message_id: i64,
        old: &[Reaction],
        new: &[Reaction],
    ) -> i64 {
        let mut update = json!({
            "chat": self.chat_json(chat_id),
            "message_id": message_id,
            "date": now(),
            "old_reaction": old.iter().map(Reaction::to_json).collect::<Vec<_>>(),
            "new_reaction": new.iter().map(Reaction::to_json).collect::<Vec<_>>(),
        });
        match actor {
            Actor::User(user) => update["user"] = user.to_json(),
            Actor::Anonymous {
                chat_id: actor_id,
                title,
            } => {
                update["actor_chat"] = match self.chats.get(&actor_id) {
                    Some(chat) => chat.clone(),
                    None => json!({"id": actor_id, "type": "channel", "title": title}),
                };
            }
        }
        self.enqueue("message_reaction", update)
    }

    /// Queues `user`'s press of a button carrying `data`: (update_id, callback_query_id).
    fn press_update(
        &mut self,
        chat_id: i64,
        user: &User,
        message_id: i64,
        data: &str,
    ) -> (i64, String) {
        let query_id = (FIRST_QUERY_ID + self.queries.len() as u64).to_string();
        self.queries.insert(query_id.clone(), None);
        let query = json!({
            "id": query_id,
            "from": user.to_json(),
            "message": self.message_json(chat_id, message_id),
            // Telegram's chat_instance is an opaque per-chat number.
            "chat_instance": chat_id.wrapping_mul(2_654_435_761).to_string(),
            "data": data,
        });
        (self.enqueue("callback_query", query), query_id)
    }

    /// Carries out the first `answer_on_post` that the bot's new message matches.
    pub(super) fn answer_post(&mut self, chat_id: i64, message_id: i64) {
        let Some(message) = self.messages.get(&(chat_id, message_id)) else {
            return;
        };
        let plain = message.text.plain.clone();
        let Some(at) = self
            .on_post
            .iter()
            .position(|(chat, needle, _)| *chat == chat_id && plain.contains(needle.as_str()))
        else {
            return;
        };
        let (_, _, answer) = self.on_post.remove(at);
        let mut answered = PostAnswered {
            message_id,
            update_id: 0,
            reply_id: None,
            query_id: None,
        };
        match answer {
            OnPost::React { actor, reactions } => {
                answered.update_id =
                    self.reaction_update(chat_id, actor, message_id, &[], &reactions);
            }
            OnPost::Reply { user, text } => {
                let (update_id, reply_id) = self.reply_update(chat_id, &user, message_id, &text);
                answered.update_id = update_id;
                answered.reply_id = Some(reply_id);
            }
            OnPost::Press { user, button } => {
                let sent = self
                    .messages
                    .get(&(chat_id, message_id))
                    .map(|m| m.to_sent());
                let Some(data) = sent.and_then(|m| {
                    m.buttons()
                        .into_iter()
                        .find(|(text, _)| *text == button)
                        .map(|(_, data)| data)
                }) else {
                    return;
                };
                let (update_id, query_id) = self.press_update(chat_id, &user, message_id, &data);
                answered.update_id = update_id;
                answered.query_id = Some(query_id);
            }
        }
        self.answered_posts.push(answered);
    }
}
