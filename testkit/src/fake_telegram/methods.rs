//! The Bot API methods the daemon uses, checked and answered as Telegram does; unknown
//! methods are "Not Found".

use serde_json::{Value, json};

use super::html::{Formatted, parse_html};
use super::reply::{ApiFailure, Reply, bad};
use super::state::{FakeState, StoredMessage, now};
use super::types::bot_user_json;

/// Telegram's limit on message text, in UTF-16 code units after entity parsing.
const MAX_TEXT_UTF16: usize = 4096;

const NOT_MODIFIED: &str = "message is not modified: specified new message content and reply \
                            markup are exactly the same as a current content and reply markup of the message";
const QUERY_INVALID: &str = "query is too old and response timeout expired or query ID is invalid";

impl FakeState {
    pub(super) fn handle(&mut self, method: &str, body: &Value) -> Reply {
        match method {
            "getme" => Ok(get_me(self.bot_id)),
            "sendmessage" => self.send_message(body),
            "editmessagetext" => self.edit_message_text(body),
            "editmessagereplymarkup" => self.edit_message_reply_markup(body),
            "deletemessage" => self.delete_message(body),
            "answercallbackquery" => self.answer_callback_query(body),
            "setmycommands" => self.set_my_commands(body),
            "getmycommands" => Ok(self.get_my_commands(body)),
            "deletemycommands" => {
                self.commands.remove(&commands_key(body));
                Ok(json!(true))
            }
            "getcustomemojistickers" => self.get_custom_emoji_stickers(body),
            "deletewebhook" => {
                if body.get("drop_pending_updates") == Some(&json!(true)) {
                    self.queue.clear();
                }
                Ok(json!(true))
            }
            "getwebhookinfo" => Ok(json!({
                "url": "",
                "has_custom_certificate": false,
                "pending_update_count": self.queue.len(),
            })),
            _ => Err(ApiFailure {
                code: 404,
                description: "Not Found: method not found".to_string(),
                retry_after: None,
            }),
        }
    }

    /// `chat_id` of a known chat.
    fn target_chat(&self, body: &Value) -> Result<i64, ApiFailure> {
        let chat_id = match body.get("chat_id") {
            None | Some(Value::Null) => return Err(bad("chat_id is empty")),
            Some(Value::Number(n)) => n.as_i64(),
            // "@channelusername" or a number in a string.
            Some(Value::String(s)) => s.trim().parse().ok(),
            Some(_) => None,
        };
        chat_id
            .filter(|id| self.chats.contains_key(id))
            .ok_or_else(|| bad("chat not found"))
    }

    fn send_message(&mut self, body: &Value) -> Reply {
        let chat_id = self.target_chat(body)?;
        let (raw, parse_mode, text) = message_text(body, false)?;
        let reply_markup = inline_keyboard(body.get("reply_markup"))?;

        let reply_parameters = body.get("reply_parameters");
        let reply_to = match reply_parameters {
            Some(p) if p.is_object() => int_field(p, "message_id")?,
            // The pre-7.0 parameter, still accepted by Telegram.
            _ => int_field(body, "reply_to_message_id")?,
        };
        let reply_to = match reply_to {
            Some(id) if self.messages.contains_key(&(chat_id, id)) => Some(id),
            Some(_) => {
                let lenient = reply_parameters
                    .and_then(|p| p.get("allow_sending_without_reply"))
                    .or_else(|| body.get("allow_sending_without_reply"))
                    == Some(&json!(true));
                if !lenient {
                    return Err(bad("message to be replied not found"));
                }
                None
            }
            None => None,
        };

        let message_id = self.take_message_id(chat_id);
        self.messages.insert(
            (chat_id, message_id),
            StoredMessage {
                chat_id,
                message_id,
                by_bot: true,
                from: bot_user_json(self.bot_id),
                date: now(),
                edit_date: None,
                raw,
                parse_mode,
                text,
                reply_markup,
                reply_to,
                edits: Vec::new(),
            },
        );
        self.answer_post(chat_id, message_id);
        Ok(self.message_json(chat_id, message_id))
    }

    /// The bot's own message `message_id` in `chat_id`, for editing.
    fn editable(&mut self, body: &Value) -> Result<(i64, i64, &mut StoredMessage), ApiFailure> {
        if body.get("inline_message_id").is_some() {
            // Inline-mode messages are not modelled.
            return Err(bad("MESSAGE_ID_INVALID"));
        }
        let chat_id = self.target_chat(body)?;
        let message_id = int_field(body, "message_id")?
            .ok_or_else(|| bad("message identifier is not specified"))?;
        let message = self
            .messages
            .get_mut(&(chat_id, message_id))
            .ok_or_else(|| bad("message to edit not found"))?;
        if !message.by_bot {
            return Err(bad("message can't be edited"));
        }
        Ok((chat_id, message_id, message))
    }

    fn edit_message_text(&mut self, body: &Value) -> Reply {
        let (raw, parse_mode, text) = message_text(body, true)?;
        // Telegram removes the keyboard when an edit does not repeat it.
        let reply_markup = inline_keyboard(body.get("reply_markup"))?;
        let (chat_id, message_id, message) = self.editable(body)?;
        // Telegram compares what the user would see (text and entities), not the HTML source.
        if message.text == text && message.reply_markup == reply_markup {
            return Err(bad(NOT_MODIFIED));
        }
        let old = std::mem::replace(&mut message.raw, raw);
        message.edits.push(old);
        message.text = text;
        message.parse_mode = parse_mode;
        message.reply_markup = reply_markup;
        message.edit_date = Some(now());
        Ok(self.message_json(chat_id, message_id))
    }

    fn edit_message_reply_markup(&mut self, body: &Value) -> Reply {
        let reply_markup = inline_keyboard(body.get("reply_markup"))?;
        let (chat_id, message_id, message) = self.editable(body)?;
        if message.reply_markup == reply_markup {
            return Err(bad(NOT_MODIFIED));
        }
        message.reply_markup = reply_markup;
        message.edit_date = Some(now());
        Ok(self.message_json(chat_id, message_id))
    }

    fn delete_message(&mut self, body: &Value) -> Reply {
        let chat_id = self.target_chat(body)?;
        let message_id = int_field(body, "message_id")?
            .ok_or_else(|| bad("message identifier is not specified"))?;
        self.messages
            .remove(&(chat_id, message_id))
            .map(|_| json!(true))
            .ok_or_else(|| bad("message to delete not found"))
    }

    fn answer_callback_query(&mut self, body: &Value) -> Reply {
        let id = match body.get("callback_query_id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(bad(QUERY_INVALID)),
        };
        let text = str_field(body, "text");
        if text.is_some_and(|t| t.chars().count() > 200) {
            return Err(bad("MESSAGE_TOO_LONG"));
        }
        match self.queries.get_mut(&id) {
            Some(answer @ None) => {
                *answer = Some(text.map(str::to_string));
                Ok(json!(true))
            }
            // Unknown, or answered already: Telegram accepts one answer per query.
            _ => Err(bad(QUERY_INVALID)),
        }
    }

    fn set_my_commands(&mut self, body: &Value) -> Reply {
        let Some(list) = body.get("commands").and_then(Value::as_array) else {
            return Err(bad("parameter \"commands\" is required"));
        };
        if list.len() > 100 {
            return Err(bad("BOT_COMMANDS_TOO_MUCH"));
        }
        let mut commands = Vec::new();
        for entry in list {
            let command = str_field(entry, "command").unwrap_or_default();
            let description = str_field(entry, "description").unwrap_or_default();
            let valid_command = (1..=32).contains(&command.len())
                && command
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !valid_command {
                return Err(bad("BOT_COMMAND_INVALID"));
            }
            if !(1..=256).contains(&description.chars().count()) {
                return Err(bad("BOT_COMMAND_DESCRIPTION_INVALID"));
            }
            commands.push((command.to_string(), description.to_string()));
        }
        self.commands.insert(commands_key(body), commands.clone());
        self.last_commands = commands;
        Ok(json!(true))
    }

    fn get_my_commands(&self, body: &Value) -> Value {
        let commands = self
            .commands
            .get(&commands_key(body))
            .cloned()
            .unwrap_or_default();
        commands
            .into_iter()
            .map(|(command, description)| json!({"command": command, "description": description}))
            .collect()
    }

    fn get_custom_emoji_stickers(&mut self, body: &Value) -> Reply {
        let Some(ids) = body.get("custom_emoji_ids").and_then(Value::as_array) else {
            return Err(bad("parameter \"custom_emoji_ids\" is required"));
        };
        if ids.len() > 200 {
            return Err(bad("too many custom emoji identifiers specified"));
        }
        self.custom_emoji_lookups += 1;
        // Unknown ids are left out of the answer, as Telegram does.
        let stickers = ids
            .iter()
            .filter_map(|id| match id {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .filter_map(|id| {
                let emoji = self.custom_emoji.get(&id)?;
                Some(json!({
                    "file_id": format!("CAACAgIAAxUAAWf{id}"),
                    "file_unique_id": format!("AgAD{id}"),
                    "file_size": 2048,
                    "type": "custom_emoji",
                    "width": 100,
                    "height": 100,
                    "is_animated": false,
                    "is_video": false,
                    "emoji": emoji,
                    "set_name": "ExecgateTestEmoji",
                    "custom_emoji_id": id,
                    "needs_repainting": false,
                }))
            })
            .collect();
        Ok(Value::Array(stickers))
    }
}

fn get_me(bot_id: i64) -> Value {
    let mut me = bot_user_json(bot_id);
    // teloxide's `Me` fails to deserialize without these.
    me["can_join_groups"] = json!(true);
    me["can_read_all_group_messages"] = json!(false);
    me["supports_inline_queries"] = json!(false);
    me["can_connect_to_business"] = json!(false);
    me["has_main_web_app"] = json!(false);
    me
}

fn commands_key(body: &Value) -> String {
    let scope = match body.get("scope") {
        None | Some(Value::Null) => json!({"type": "default"}),
        Some(scope) => scope.clone(),
    };
    format!(
        "{scope}|{}",
        str_field(body, "language_code").unwrap_or_default()
    )
}

/// The `text` and `parse_mode` of sendMessage/editMessageText, checked like Telegram does.
fn message_text(
    body: &Value,
    editing: bool,
) -> Result<(String, Option<String>, Formatted), ApiFailure> {
    let raw = str_field(body, "text").unwrap_or_default().to_string();
    let parse_mode = str_field(body, "parse_mode")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let formatted = match parse_mode
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None => Formatted::plain(&raw),
        Some("html") => parse_html(&raw).map_err(|e| bad(format!("can't parse entities: {e}")))?,
        // Markdown is not modelled: the text is taken as is (the daemon uses HTML).
        Some("markdown" | "markdownv2") => Formatted::plain(&raw),
        Some(_) => return Err(bad("unsupported parse_mode")),
    };
    let formatted = formatted.trimmed();
    if formatted.plain.is_empty() {
        return Err(bad("message text is empty"));
    }
    if formatted.plain.encode_utf16().count() > MAX_TEXT_UTF16 {
        // Telegram words the same limit differently for edits.
        return Err(bad(if editing {
            "MESSAGE_TOO_LONG"
        } else {
            "message is too long"
        }));
    }
    Ok((raw, parse_mode, formatted))
}

/// Checks `reply_markup` and returns the inline keyboard to keep on the message (other kinds
/// of markup are accepted but never part of a message, and an empty keyboard is no keyboard).
fn inline_keyboard(markup: Option<&Value>) -> Result<Option<Value>, ApiFailure> {
    let markup = match markup {
        None | Some(Value::Null) => return Ok(None),
        // Telegram also takes the markup JSON-encoded in a string.
        Some(Value::String(s)) => serde_json::from_str(s)
            .map_err(|_| bad("can't parse reply keyboard markup JSON object"))?,
        Some(markup) => markup.clone(),
    };
    if !markup.is_object() {
        return Err(bad("can't parse reply keyboard markup JSON object"));
    }
    let Some(rows) = markup.get("inline_keyboard") else {
        return Ok(None);
    };
    let not_array = || {
        bad(
            "can't parse inline keyboard button: field \"inline_keyboard\" of the \
             InlineKeyboardMarkup should be an Array of Arrays",
        )
    };
    let rows = rows.as_array().ok_or_else(not_array)?;
    let mut any = false;
    for row in rows {
        for button in row.as_array().ok_or_else(not_array)? {
            any = true;
            if str_field(button, "text").is_none() {
                return Err(bad(
                    "can't parse inline keyboard button: Field \"text\" must be of type String",
                ));
            }
            if let Some(data) = button.get("callback_data") {
                let len = data.as_str().map_or(0, str::len);
                if !(1..=64).contains(&len) {
                    return Err(bad("BUTTON_DATA_INVALID"));
                }
            } else if let Some(url) = button.get("url") {
                if url
                    .as_str()
                    .and_then(|u| reqwest::Url::parse(u).ok())
                    .is_none()
                {
                    return Err(bad("BUTTON_URL_INVALID"));
                }
            } else if button.as_object().is_none_or(|b| b.len() < 2) {
                return Err(bad(
                    "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard",
                ));
            }
        }
    }
    Ok(any.then_some(markup))
}

/// An integer parameter; Telegram also accepts numbers written as strings.
pub(super) fn int_field(body: &Value, key: &str) -> Result<Option<i64>, ApiFailure> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| bad(format!("field \"{key}\" must be of type Integer"))),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| bad(format!("field \"{key}\" must be of type Integer"))),
        Some(_) => Err(bad(format!("field \"{key}\" must be of type Integer"))),
    }
}

pub(super) fn str_field<'a>(body: &'a Value, key: &str) -> Option<&'a str> {
    body.get(key).and_then(Value::as_str)
}
