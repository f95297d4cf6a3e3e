//! What users do, queued as the envelopes Slack would send on Socket Mode: messages and
//! thread replies (`message` events, text escaped as Slack escapes it), edits
//! (`message_changed`), reactions (`reaction_added`) and button presses (`block_actions`
//! interactions).

use serde_json::{Value, json};

use super::state::{FakeState, Msg};
use super::types::User;
use super::{APP_ID, TEAM, render};

impl FakeState {
    /// `user` says `text` in `channel` (in the thread of `thread`, if given). Returns the
    /// message's ts and its envelope id.
    pub fn user_message(
        &mut self,
        user: &User,
        channel: &str,
        text: &str,
        thread: Option<&str>,
    ) -> (String, String) {
        let ts = self.next_ts();
        self.add_message(Msg {
            channel: channel.into(),
            ts: ts.clone(),
            thread_ts: thread.map(str::to_string),
            user: user.id.clone(),
            text: render::escape(text),
            blocks: json!([]),
            edits: Vec::new(),
        });
        let envelope = self.outbox.last().map(|e| e.envelope_id.clone());
        (ts, envelope.unwrap_or_default())
    }

    /// `user` edits their message `ts` to say `text`.
    pub fn user_edit(&mut self, user: &User, channel: &str, ts: &str, text: &str) -> String {
        let event = json!({
            "type": "message",
            "subtype": "message_changed",
            "hidden": true,
            "channel": channel,
            "ts": self.next_ts(),
            "message": {"type": "message", "user": user.id, "text": render::escape(text), "ts": ts,
                        "edited": {"user": user.id, "ts": self.next_ts()}},
            "previous_message": {"type": "message", "user": user.id, "ts": ts},
        });
        self.event(event)
    }

    /// `user` adds reaction `name` (`+1`, `white_check_mark::skin-tone-3`) to `ts`.
    pub fn reaction(&mut self, user: &User, channel: &str, ts: &str, name: &str) -> String {
        let item_user = self
            .message(channel, ts)
            .map(|m| m.user.clone())
            .unwrap_or_default();
        let event = json!({
            "type": "reaction_added",
            "user": user.id,
            "reaction": name,
            "item_user": item_user,
            "item": {"type": "message", "channel": channel, "ts": ts},
            "event_ts": self.next_ts(),
        });
        self.event(event)
    }

    /// `user` removes reaction `name` from `ts`.
    pub fn reaction_removed(&mut self, user: &User, channel: &str, ts: &str, name: &str) -> String {
        let event = json!({
            "type": "reaction_removed",
            "user": user.id,
            "reaction": name,
            "item": {"type": "message", "channel": channel, "ts": ts},
            "event_ts": self.next_ts(),
        });
        self.event(event)
    }

    /// `user` presses the button labelled `label` under message `ts`. None: no such
    /// button.
    pub fn press(&mut self, user: &User, channel: &str, ts: &str, label: &str) -> Option<String> {
        let msg = self.message(channel, ts)?.to_sent();
        let (_, value) = msg.buttons().into_iter().find(|(l, _)| l == label)?;
        Some(self.press_value(user, channel, ts, label, &value))
    }

    /// A `block_actions` interaction on message `ts` whose action carries `value`, as a
    /// client may send whatever it likes.
    pub fn press_value(
        &mut self,
        user: &User,
        channel: &str,
        ts: &str,
        label: &str,
        value: &str,
    ) -> String {
        let message = self
            .message(channel, ts)
            .map(|m| json!({"type": "message", "user": m.user, "ts": m.ts, "text": m.text, "blocks": m.blocks}))
            .unwrap_or(Value::Null);
        let action_id = value.split(':').next().unwrap_or("").to_string();
        let trigger = self.id("trigger.");
        let payload = json!({
            "type": "block_actions",
            "user": {"id": user.id, "username": user.name, "name": user.name, "team_id": TEAM},
            "api_app_id": APP_ID,
            "token": "fake-verification-token",
            "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
            "trigger_id": trigger,
            "team": {"id": TEAM, "domain": "fake-workspace"},
            "is_enterprise_install": false,
            "channel": {"id": channel, "name": channel.to_lowercase()},
            "message": message,
            "state": {"values": {}},
            "response_url": format!("https://hooks.slack.invalid/actions/{trigger}"),
            "actions": [{
                "action_id": action_id,
                "block_id": "buttons",
                "text": {"type": "plain_text", "text": label, "emoji": true},
                "value": value,
                "type": "button",
                "action_ts": self.next_ts(),
            }],
        });
        self.envelope("interactive", payload)
    }
}
