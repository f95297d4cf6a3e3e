//! Formatted text as the user sees it, and Telegram's HTML parse mode: the parser (after
//! tdlib's `parse_html`), its entities and its error messages.

use serde_json::{Value, json};

/// Text as the user sees it, with its formatting entities (offsets in UTF-16 code units).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(super) struct Formatted {
    pub(super) plain: String,
    pub(super) entities: Vec<Entity>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Entity {
    kind: EntityKind,
    offset: usize,
    length: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum EntityKind {
    Bold,
    Italic,
    Underline,
    Strikethrough,
    Spoiler,
    /// `language` only matters while parsing (`<pre><code class="language-x">`).
    Code {
        language: Option<String>,
    },
    Pre {
        language: Option<String>,
    },
    TextLink {
        url: String,
    },
    CustomEmoji {
        id: String,
    },
    Blockquote {
        expandable: bool,
    },
    BotCommand,
}

impl Formatted {
    pub(super) fn plain(text: &str) -> Formatted {
        Formatted {
            plain: text.to_string(),
            entities: Vec::new(),
        }
    }

    /// What a user's client sends: plain text, with a `bot_command` entity when it starts
    /// with a command.
    pub(super) fn user_text(text: &str) -> Formatted {
        let mut formatted = Formatted::plain(text);
        if text.starts_with('/') {
            let word = text.split(char::is_whitespace).next().unwrap_or_default();
            formatted.entities.push(Entity {
                kind: EntityKind::BotCommand,
                offset: 0,
                length: word.encode_utf16().count(),
            });
        }
        formatted
    }

    /// Telegram strips leading and trailing whitespace from message text.
    pub(super) fn trimmed(self) -> Formatted {
        let cut_front = utf16_len(&self.plain[..self.plain.len() - self.plain.trim_start().len()]);
        let plain = self.plain.trim().to_string();
        let len = utf16_len(&plain);
        let entities = self
            .entities
            .into_iter()
            .filter_map(|e| {
                let start = e.offset.saturating_sub(cut_front);
                let end = (e.offset + e.length).saturating_sub(cut_front).min(len);
                (end > start).then_some(Entity {
                    offset: start,
                    length: end - start,
                    ..e
                })
            })
            .collect();
        Formatted { plain, entities }
    }

    pub(super) fn entities_json(&self) -> Value {
        self.entities
            .iter()
            .map(|e| {
                let mut json = match &e.kind {
                    EntityKind::Bold => json!({"type": "bold"}),
                    EntityKind::Italic => json!({"type": "italic"}),
                    EntityKind::Underline => json!({"type": "underline"}),
                    EntityKind::Strikethrough => json!({"type": "strikethrough"}),
                    EntityKind::Spoiler => json!({"type": "spoiler"}),
                    EntityKind::Code { .. } => json!({"type": "code"}),
                    EntityKind::Pre { language: None } => json!({"type": "pre"}),
                    EntityKind::Pre {
                        language: Some(language),
                    } => {
                        json!({"type": "pre", "language": language})
                    }
                    EntityKind::TextLink { url } => json!({"type": "text_link", "url": url}),
                    EntityKind::CustomEmoji { id } => {
                        json!({"type": "custom_emoji", "custom_emoji_id": id})
                    }
                    EntityKind::Blockquote { expandable: false } => json!({"type": "blockquote"}),
                    EntityKind::Blockquote { expandable: true } => {
                        json!({"type": "expandable_blockquote"})
                    }
                    EntityKind::BotCommand => json!({"type": "bot_command"}),
                };
                json["offset"] = json!(e.offset);
                json["length"] = json!(e.length);
                json
            })
            .collect()
    }
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Parses Telegram-flavoured HTML the way Telegram does and returns the plain text the user
/// would see, or Telegram's full error description ("Bad Request: can't parse entities: ...").
/// It does not apply the emptiness and length checks of sendMessage.
pub fn plain_text(html: &str) -> Result<String, String> {
    parse_html(html)
        .map(|formatted| formatted.plain)
        .map_err(|e| format!("Bad Request: can't parse entities: {e}"))
}

const SUPPORTED_TAGS: [&str; 16] = [
    "a",
    "b",
    "strong",
    "i",
    "em",
    "s",
    "strike",
    "del",
    "u",
    "ins",
    "tg-spoiler",
    "tg-emoji",
    "span",
    "pre",
    "code",
    "blockquote",
];

struct OpenTag {
    name: String,
    url: Option<String>,
    language: Option<String>,
    emoji_id: Option<String>,
    expandable: bool,
    /// Where the tag's content starts in the plain text: UTF-16 offset and byte offset.
    utf16_start: usize,
    byte_start: usize,
}

/// Telegram's (tdlib's `parse_html`) algorithm and error messages, byte offsets included.
/// One deliberate difference: Telegram shows an unknown `&name;` literally, the fake rejects
/// it, because in a bot's HTML it almost always means text that was not escaped.
pub(super) fn parse_html(text: &str) -> Result<Formatted, String> {
    let bytes = text.as_bytes();
    // tdlib reads a NUL-terminated string: past the end reads as 0.
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let is_space = |c: u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0 | 0x0b);
    let slice = |from: usize, to: usize| text.get(from..to).unwrap_or_default();

    let mut plain = String::with_capacity(text.len());
    let mut utf16 = 0usize;
    let mut open: Vec<OpenTag> = Vec::new();
    let mut entities: Vec<Entity> = Vec::new();
    let mut i = 0;

    while i < bytes.len() {
        let c = bytes[i];
        if c == b'&'
            && let Some((ch, next)) = decode_html_entity(bytes, i)?
        {
            plain.push(ch);
            utf16 += ch.len_utf16();
            i = next;
            continue;
        }
        if c != b'<' {
            // Tags and entities start with ASCII bytes, so `i` is always on a char boundary.
            let ch = text
                .get(i..)
                .and_then(|rest| rest.chars().next())
                .unwrap_or('\u{fffd}');
            plain.push(ch);
            utf16 += ch.len_utf16();
            i += ch.len_utf8().max(1);
            continue;
        }

        let begin = i;
        i += 1;
        if at(i) != b'/' {
            // A start tag.
            while !is_space(at(i)) && at(i) != b'>' {
                i += 1;
            }
            if at(i) == 0 {
                return Err(format!("Unclosed start tag at byte offset {begin}"));
            }
            let name = slice(begin + 1, i).to_ascii_lowercase();
            if !SUPPORTED_TAGS.contains(&name.as_str()) {
                return Err(format!(
                    "Unsupported start tag \"{name}\" at byte offset {begin}"
                ));
            }

            let mut tag = OpenTag {
                name,
                url: None,
                language: None,
                emoji_id: None,
                expandable: false,
                utf16_start: utf16,
                byte_start: plain.len(),
            };
            let mut span_class = None;
            while at(i) != b'>' {
                while at(i) != 0 && is_space(at(i)) {
                    i += 1;
                }
                if at(i) == b'>' {
                    break;
                }
                let attribute_begin = i;
                while !is_space(at(i)) && at(i) != b'=' && at(i) != b'>' {
                    i += 1;
                }
                let attribute = slice(attribute_begin, i).to_string();
                if attribute.is_empty() {
                    return Err(format!(
                        "Empty attribute name in the tag \"{}\" at byte offset {begin}",
                        tag.name
                    ));
                }
                while at(i) != 0 && is_space(at(i)) {
                    i += 1;
                }
                if at(i) != b'=' {
                    if tag.name == "blockquote" && attribute == "expandable" {
                        tag.expandable = true;
                        continue;
                    }
                    return Err(format!(
                        "Expected equal sign in declaration of an attribute of the tag \"{}\" at byte offset {begin}",
                        tag.name
                    ));
                }
                i += 1;
                while at(i) != 0 && is_space(at(i)) {
                    i += 1;
                }
                if at(i) == 0 {
                    return Err(format!(
                        "Unclosed start tag \"{}\" at byte offset {begin}",
                        tag.name
                    ));
                }
                let value = if at(i) != b'\'' && at(i) != b'"' {
                    // An unquoted name token: letters, digits, '.', '-'; case-insensitive.
                    let token_begin = i;
                    while at(i).is_ascii_alphanumeric() || at(i) == b'.' || at(i) == b'-' {
                        i += 1;
                    }
                    if !is_space(at(i)) && at(i) != b'>' {
                        return Err(format!(
                            "Unexpected end of name token at byte offset {token_begin}"
                        ));
                    }
                    slice(token_begin, i).to_ascii_lowercase()
                } else {
                    let quote = at(i);
                    i += 1;
                    let mut value = String::new();
                    while at(i) != quote && at(i) != 0 {
                        if at(i) == b'&'
                            && let Some((ch, next)) = decode_html_entity(bytes, i)?
                        {
                            value.push(ch);
                            i = next;
                            continue;
                        }
                        let ch = text
                            .get(i..)
                            .and_then(|rest| rest.chars().next())
                            .unwrap_or('\u{fffd}');
                        value.push(ch);
                        i += ch.len_utf8().max(1);
                    }
                    if at(i) == quote {
                        i += 1;
                    }
                    value
                };
                if at(i) == 0 {
                    return Err(format!("Unclosed start tag at byte offset {begin}"));
                }
                match (tag.name.as_str(), attribute.as_str()) {
                    ("a", "href") => tag.url = Some(value),
                    ("code", "class") => {
                        tag.language = value.strip_prefix("language-").map(str::to_string)
                    }
                    ("span", "class") => span_class = Some(value),
                    ("tg-emoji", "emoji-id") => tag.emoji_id = Some(value),
                    _ => {}
                }
            }
            if tag.name == "span" && span_class.as_deref() != Some("tg-spoiler") {
                return Err(format!(
                    "Tag \"span\" must have class \"tg-spoiler\" at byte offset {begin}"
                ));
            }
            i += 1; // '>'
            open.push(tag);
        } else {
            // An end tag.
            if open.is_empty() {
                return Err(format!("Unexpected end tag at byte offset {begin}"));
            }
            while !is_space(at(i)) && at(i) != b'>' {
                i += 1;
            }
            let end_name = slice(begin + 2, i).to_string();
            while at(i) != 0 && is_space(at(i)) {
                i += 1;
            }
            if at(i) != b'>' {
                return Err(format!("Unclosed end tag at byte offset {begin}"));
            }
            i += 1;
            let Some(tag) = open.pop() else {
                return Err(format!("Unexpected end tag at byte offset {begin}"));
            };
            if !end_name.is_empty() && end_name != tag.name {
                return Err(format!(
                    "Unmatched end tag at byte offset {begin}, expected \"</{}>\", found \"</{end_name}>\"",
                    tag.name
                ));
            }
            if utf16 > tag.utf16_start {
                let inner = plain.get(tag.byte_start..).unwrap_or_default().to_string();
                close_entity(&mut entities, tag, utf16, &inner);
            }
        }
    }
    if let Some(tag) = open.last() {
        return Err(format!(
            "Can't find end tag corresponding to start tag \"{}\"",
            tag.name
        ));
    }

    for entity in &mut entities {
        if let EntityKind::Code { language } = &mut entity.kind {
            *language = None;
        }
    }
    entities.sort_by_key(|e| (e.offset, std::cmp::Reverse(e.length)));
    Ok(Formatted { plain, entities })
}

/// Adds the entity for a closed tag that covered [tag.utf16_start, end).
fn close_entity(entities: &mut Vec<Entity>, tag: OpenTag, end: usize, inner_text: &str) {
    let offset = tag.utf16_start;
    let length = end - offset;
    let kind = match tag.name.as_str() {
        "b" | "strong" => EntityKind::Bold,
        "i" | "em" => EntityKind::Italic,
        "u" | "ins" => EntityKind::Underline,
        "s" | "strike" | "del" => EntityKind::Strikethrough,
        "tg-spoiler" | "span" => EntityKind::Spoiler,
        "blockquote" => EntityKind::Blockquote {
            expandable: tag.expandable,
        },
        "code" => EntityKind::Code {
            language: tag.language,
        },
        "pre" => {
            // <pre><code class="language-x">…</code></pre> is one pre block in language x.
            if let Some(last) = entities.last_mut()
                && let EntityKind::Code {
                    language: Some(language),
                } = &last.kind
                && last.offset == offset
                && last.length == length
            {
                last.kind = EntityKind::Pre {
                    language: Some(language.clone()),
                };
                return;
            }
            EntityKind::Pre { language: None }
        }
        "a" => {
            // An empty or missing href links the text itself; a URL Telegram cannot parse
            // silently leaves the text unlinked.
            let url = tag
                .url
                .filter(|u| !u.is_empty())
                .unwrap_or_else(|| inner_text.to_string());
            let parsed = reqwest::Url::parse(&url)
                .or_else(|_| reqwest::Url::parse(&format!("http://{url}")));
            match parsed {
                Ok(url) => EntityKind::TextLink {
                    url: url.to_string(),
                },
                Err(_) => return,
            }
        }
        "tg-emoji" => match tag.emoji_id {
            Some(id) if !id.is_empty() => EntityKind::CustomEmoji { id },
            _ => return,
        },
        _ => return,
    };
    entities.push(Entity {
        kind,
        offset,
        length,
    });
}

/// Decodes the character reference at `pos` (which holds '&'): Ok(None) when Telegram
/// would show the '&' literally. The ';' is optional, as in Telegram.
fn decode_html_entity(bytes: &[u8], pos: usize) -> Result<Option<(char, usize)>, String> {
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let mut end = pos + 1;
    let ch = if at(pos + 1) == b'#' {
        end += 1;
        let mut code: u32 = 0;
        if at(pos + 2) == b'x' {
            end += 1;
            while let Some(digit) = (at(end) as char).to_digit(16) {
                code = code.saturating_mul(16).saturating_add(digit);
                end += 1;
            }
        } else {
            while let Some(digit) = (at(end) as char).to_digit(10) {
                code = code.saturating_mul(10).saturating_add(digit);
                end += 1;
            }
        }
        if code == 0 || code >= 0x10ffff || end - pos >= 10 {
            return Ok(None);
        }
        char::from_u32(code).ok_or_else(|| {
            "Text contains invalid Unicode characters after decoding HTML entities, check for \
             unmatched surrogate code units"
                .to_string()
        })?
    } else {
        while at(end).is_ascii_alphabetic() {
            end += 1;
        }
        match &bytes[pos + 1..end] {
            b"lt" => '<',
            b"gt" => '>',
            b"amp" => '&',
            b"quot" => '"',
            name if !name.is_empty() && at(end) == b';' => {
                // The fake's one strictness beyond Telegram (see `parse_html`).
                return Err(format!(
                    "Unsupported HTML entity \"&{};\" at byte offset {pos}",
                    String::from_utf8_lossy(name)
                ));
            }
            _ => return Ok(None),
        }
    };
    if at(end) == b';' {
        end += 1;
    }
    Ok(Some((ch, end)))
}
