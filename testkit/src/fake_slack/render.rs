//! Block Kit as the fake checks and shows it: which blocks Slack accepts (the ones the
//! daemon may send; anything else is `invalid_blocks`, as Slack answers), their text as a
//! reader sees it, and the buttons of an `actions` block.

use serde_json::Value;

/// Why Slack would refuse these blocks, if it would.
pub fn invalid(blocks: &Value) -> Option<String> {
    let Some(blocks) = blocks.as_array() else {
        return Some("blocks must be an array".into());
    };
    if blocks.len() > 50 {
        return Some("no more than 50 blocks".into());
    }
    for block in blocks {
        match block["type"].as_str() {
            Some("rich_text") => {
                let Some(elements) = block["elements"].as_array() else {
                    return Some("a rich_text block needs elements".into());
                };
                for element in elements {
                    let kind = element["type"].as_str().unwrap_or("");
                    if !matches!(
                        kind,
                        "rich_text_section" | "rich_text_preformatted" | "rich_text_quote"
                    ) {
                        return Some(format!("unknown rich text element {kind:?}"));
                    }
                    let Some(runs) = element["elements"].as_array() else {
                        return Some("a rich text element needs elements".into());
                    };
                    for run in runs {
                        if run["type"] != "text" || !run["text"].is_string() {
                            return Some("a rich text run must be {type: text, text}".into());
                        }
                        if let Some(style) = run.get("style")
                            && style.as_object().is_none_or(|s| {
                                s.keys().any(|k| {
                                    !matches!(k.as_str(), "bold" | "italic" | "strike" | "code")
                                })
                            })
                        {
                            return Some(format!("unknown text style {style}"));
                        }
                    }
                }
            }
            Some("section") => {
                let text = block["text"]["text"].as_str().unwrap_or("");
                if text.is_empty() || text.chars().count() > 3000 {
                    return Some("a section's text must be 1 to 3000 characters".into());
                }
            }
            Some("actions") => {
                let Some(buttons) = block["elements"].as_array() else {
                    return Some("an actions block needs elements".into());
                };
                if buttons.is_empty() || buttons.len() > 25 {
                    return Some("an actions block holds 1 to 25 elements".into());
                }
                let mut ids = Vec::new();
                for b in buttons {
                    if b["type"] != "button" || b["text"]["type"] != "plain_text" {
                        return Some("buttons need plain_text labels".into());
                    }
                    if b["value"].as_str().is_some_and(|v| v.len() > 2000)
                        || b["text"]["text"]
                            .as_str()
                            .is_none_or(|t| t.chars().count() > 75)
                    {
                        return Some("a button's label or value is too long".into());
                    }
                    let id = b["action_id"].as_str().unwrap_or("");
                    if ids.contains(&id) {
                        return Some("action_ids must be unique in a message".into());
                    }
                    ids.push(id);
                }
            }
            other => return Some(format!("unsupported block type {other:?}")),
        }
    }
    None
}

/// The text a reader sees: rich text runs as they are, sections' mrkdwn unescaped, a
/// blank line between blocks; the buttons left out.
pub fn plain(blocks: &Value, text: &str) -> String {
    let Some(blocks) = blocks.as_array().filter(|b| !b.is_empty()) else {
        return unescape(text);
    };
    let mut out = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("rich_text") => {
                let mut shown = String::new();
                for element in block["elements"].as_array().into_iter().flatten() {
                    let pre = element["type"] == "rich_text_preformatted";
                    if pre && !shown.is_empty() && !shown.ends_with('\n') {
                        shown.push('\n');
                    }
                    for run in element["elements"].as_array().into_iter().flatten() {
                        shown.push_str(run["text"].as_str().unwrap_or(""));
                    }
                    if pre {
                        shown.push('\n');
                    }
                }
                out.push(shown);
            }
            Some("section") => out.push(unescape(block["text"]["text"].as_str().unwrap_or(""))),
            _ => {}
        }
    }
    out.join("\n")
}

/// (label, value) of every button.
pub fn buttons(blocks: &Value) -> Vec<(String, String)> {
    blocks
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["type"] == "button")
        .map(|e| {
            (
                e["text"]["text"].as_str().unwrap_or("").to_string(),
                e["value"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// mrkdwn's three escapes undone.
pub fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A user's text as Slack sends it in events: `&`, `<`, `>` escaped.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
