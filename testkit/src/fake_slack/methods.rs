//! The Web API methods the daemon calls, with Slack's checks and error names: the token
//! and its kind, the scopes, the channel (exists, the bot is in it, not archived), the
//! blocks, the message to update (exists, is the bot's), and the rate of posts.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::state::{FakeState, Msg};
use super::types::{Ephemeral, PostAnswered};
use super::{BOT_ID, BOT_USER, TEAM, render};

/// Posts one channel takes in any second before `chat.postMessage` answers 429: Slack
/// allows about one a second, and short bursts.
pub const POSTS_PER_SECOND: usize = 5;

/// Why a call failed, as Slack says it.
#[derive(Debug)]
pub enum Failure {
    /// `{"ok": false, "error": …}`; `needed` for `missing_scope`.
    Slack {
        error: String,
        needed: Option<String>,
    },
    /// HTTP 429 with this `Retry-After`.
    RateLimited(u64),
    /// HTTP 500 with a page that is not JSON.
    ServerError,
}

fn error(name: &str) -> Failure {
    Failure::Slack {
        error: name.into(),
        needed: None,
    }
}

/// Which of the fake's tokens a call came with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    Bot,
    App,
}

impl FakeState {
    /// Which token `token` is, or Slack's refusal of it.
    pub fn authenticate(&self, token: Option<&str>) -> Result<Caller, Failure> {
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return Err(error("not_authed"));
        };
        if self.revoked.contains(token) {
            return Err(error("token_revoked"));
        }
        if token == self.bot_token {
            Ok(Caller::Bot)
        } else if token == self.app_token {
            Ok(Caller::App)
        } else {
            Err(error("invalid_auth"))
        }
    }

    /// Handles one call; `Ok` is the whole answer, `"ok": true` included.
    pub fn handle(&mut self, method: &str, caller: Caller, args: &Value) -> Result<Value, Failure> {
        // The app-level token opens connections and nothing else, and only it does.
        match (method, caller) {
            ("apps.connections.open", Caller::App) => return self.connections_open(),
            ("apps.connections.open", Caller::Bot) | (_, Caller::App) => {
                return Err(error("not_allowed_token_type"));
            }
            _ => {}
        }
        match method {
            "auth.test" => Ok(json!({
                "ok": true,
                "url": "https://fake-workspace.slack.com/",
                "team": "Fake Workspace",
                "user": "execgate",
                "team_id": TEAM,
                "user_id": BOT_USER,
                "bot_id": BOT_ID,
                "is_enterprise_install": false,
            })),
            "conversations.open" => self.conversations_open(args),
            "chat.postMessage" => self.post_message(args),
            "chat.update" => self.update(args),
            "chat.postEphemeral" => self.post_ephemeral(args),
            _ => Err(error("unknown_method")),
        }
    }

    fn scope(&self, scope: &str) -> Result<(), Failure> {
        if self.scopes.contains(scope) {
            return Ok(());
        }
        Err(Failure::Slack {
            error: "missing_scope".into(),
            needed: Some(scope.into()),
        })
    }

    fn connections_open(&mut self) -> Result<Value, Failure> {
        let ticket = self.id("ticket-");
        self.tickets.insert(ticket.clone());
        // The URL is filled in by the server, which knows its socket's port.
        Ok(json!({"ok": true, "url": format!("/link/?ticket={ticket}&app_id=A0FAKE")}))
    }

    fn conversations_open(&mut self, args: &Value) -> Result<Value, Failure> {
        self.scope("im:write")?;
        let users = args["users"]
            .as_str()
            .ok_or_else(|| error("invalid_arguments"))?;
        if users.contains(',') {
            return Err(error("not_enough_users"));
        }
        if !self.users.contains_key(users) {
            return Err(error("user_not_found"));
        }
        let id = self.im_of(users);
        Ok(json!({"ok": true, "channel": {"id": id}}))
    }

    /// The channel a write goes to, if the bot may write there.
    fn writable(&self, args: &Value) -> Result<String, Failure> {
        self.scope("chat:write")?;
        let id = args["channel"]
            .as_str()
            .ok_or_else(|| error("channel_not_found"))?;
        let channel = self
            .channels
            .get(id)
            .ok_or_else(|| error("channel_not_found"))?;
        if channel.archived {
            return Err(error("is_archived"));
        }
        if !channel.members.contains(BOT_USER) {
            return Err(error("not_in_channel"));
        }
        Ok(id.to_string())
    }

    /// The text and blocks of a message, as Slack checks them.
    fn content(args: &Value) -> Result<(String, Value), Failure> {
        let text = args["text"].as_str().unwrap_or("").to_string();
        let blocks = match &args["blocks"] {
            Value::Null => json!([]),
            // Form-encoded calls carry the blocks as a JSON string.
            Value::String(s) => {
                serde_json::from_str(s).map_err(|_| error("invalid_blocks_format"))?
            }
            other => other.clone(),
        };
        if let Some(why) = render::invalid(&blocks) {
            return Err(Failure::Slack {
                error: "invalid_blocks".into(),
                needed: Some(why),
            });
        }
        if text.is_empty() && blocks.as_array().is_none_or(Vec::is_empty) {
            return Err(error("no_text"));
        }
        if text.chars().count() > 40_000 {
            return Err(error("msg_too_long"));
        }
        Ok((text, blocks))
    }

    fn post_message(&mut self, args: &Value) -> Result<Value, Failure> {
        let channel = self.writable(args)?;
        let (text, blocks) = Self::content(args)?;
        let thread_ts = args["thread_ts"].as_str().map(str::to_string);
        if let Some(parent) = &thread_ts
            && self.message(&channel, parent).is_none()
        {
            return Err(error("thread_not_found"));
        }
        let now = Instant::now();
        let recent = self.posts_at.entry(channel.clone()).or_default();
        while recent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(1))
        {
            recent.pop_front();
        }
        if recent.len() >= POSTS_PER_SECOND {
            return Err(Failure::RateLimited(1));
        }
        recent.push_back(now);
        let ts = self.next_ts();
        let msg = Msg {
            channel: channel.clone(),
            ts: ts.clone(),
            thread_ts,
            user: BOT_USER.into(),
            text,
            blocks,
            edits: Vec::new(),
        };
        let answer = json!({
            "ok": true,
            "channel": channel,
            "ts": ts,
            "message": {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "text": msg.text, "ts": ts},
        });
        let shown = msg.to_sent().plain;
        self.add_message(msg);
        self.answer_on_post(&channel, &ts, &shown);
        Ok(answer)
    }

    /// Carries out the first `answer_on_post` this new message matches.
    fn answer_on_post(&mut self, channel: &str, ts: &str, shown: &str) {
        let Some(at) = self
            .on_post
            .iter()
            .position(|(c, needle, _)| c == channel && shown.contains(needle.as_str()))
        else {
            return;
        };
        let (_, _, answer) = self.on_post.remove(at);
        let envelope_id = match answer {
            super::types::OnPost::React { user, reaction } => {
                self.reaction(&user, channel, ts, &reaction)
            }
            super::types::OnPost::Reply { user, text } => {
                self.user_message(&user, channel, &text, Some(ts)).1
            }
            super::types::OnPost::Press { user, button } => self
                .press(&user, channel, ts, &button)
                .expect("answer_on_post: the new message has that button"),
        };
        self.answered_posts.push(PostAnswered {
            channel: channel.into(),
            ts: ts.into(),
            envelope_id,
        });
    }

    fn update(&mut self, args: &Value) -> Result<Value, Failure> {
        let channel = self.writable(args)?;
        let ts = args["ts"]
            .as_str()
            .ok_or_else(|| error("message_not_found"))?;
        let (text, blocks) = Self::content(args)?;
        let Some(msg) = self.messages.get_mut(&(channel.clone(), ts.to_string())) else {
            return Err(error("message_not_found"));
        };
        if msg.user != BOT_USER {
            return Err(error("cant_update_message"));
        }
        let before = msg.to_sent().plain;
        msg.edits.push(before);
        msg.text = text;
        msg.blocks = blocks;
        let after = msg.clone();
        let event = json!({
            "type": "message",
            "subtype": "message_changed",
            "hidden": true,
            "channel": channel,
            "ts": self.next_ts(),
            "message": {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "text": after.text, "ts": ts, "edited": {"user": BOT_USER, "ts": ts}},
        });
        self.event(event);
        Ok(json!({
            "ok": true,
            "channel": channel,
            "ts": ts,
            "text": after.text,
            "message": {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "text": after.text, "ts": ts},
        }))
    }

    fn post_ephemeral(&mut self, args: &Value) -> Result<Value, Failure> {
        let channel = self.writable(args)?;
        let (text, blocks) = Self::content(args)?;
        let user = args["user"]
            .as_str()
            .ok_or_else(|| error("user_not_found"))?;
        if !self.channels[&channel].members.contains(user) {
            return Err(error("user_not_in_channel"));
        }
        self.ephemerals.push(Ephemeral {
            channel,
            user: user.into(),
            plain: render::plain(&blocks, &text),
        });
        Ok(json!({"ok": true, "message_ts": self.next_ts()}))
    }
}
