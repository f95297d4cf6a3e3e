//! What only Discord shows: the shared card (`transport::card`) as Discord markdown within
//! Discord's 2000 characters, the buttons under a pending request, and the `custom_id`
//! they carry back.
//!
//! The card comes as HTML with a handful of tags and every agent-supplied character
//! escaped, so it is read back here tag by tag: bold, italics, code and code blocks
//! become their markdown, and text outside code has every markdown character
//! backslash-escaped (Discord hides the backslash), `@` and `<` included, so a command
//! can neither format the message nor read as a mention. Inside code nothing can be
//! escaped, so no two backticks are left side by side (a zero-width space goes between
//! them): code can never close its span or block early. Mentions are also refused by
//! `allowed_mentions` on every message (`transport::discord::deliver`).

use twilight_model::channel::message::Component;
use twilight_model::channel::message::component::{ActionRow, Button, ButtonStyle};

use crate::approvals::Offer;
use crate::model::Decision;
use crate::transport::card::Line;

/// Discord's limit on a message's content, in characters.
pub const MAX_CONTENT: usize = 2000;
/// Discord's limit on a component's `custom_id`.
const CUSTOM_ID_MAX: usize = 100;

/// One stretch of the card: its text (unescaped) and how it is shown.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    Bold,
    Italic,
    Code,
    Block,
}

/// The card's HTML as Discord markdown, at most [`MAX_CONTENT`] characters: when it is
/// longer, the code block (the command) is cut, and says so.
pub fn markdown(html: &str) -> String {
    let mut parts = read_html(html);
    let whole = render(&parts);
    let over = whole.chars().count().saturating_sub(MAX_CONTENT);
    if over == 0 {
        return whole;
    }
    // The command is the one long part; the rest is bounded by the card.
    let Some(block) = parts
        .iter()
        .enumerate()
        .filter(|(_, (style, _))| *style == Style::Block)
        .max_by_key(|(_, (_, text))| text.len())
        .map(|(i, _)| i)
    else {
        return clip(&whole, MAX_CONTENT);
    };
    const NOTE: &str = "\n… cut here to fit Discord; `execgate show ID` prints it whole";
    let text = &parts[block].1;
    // Each character kept may take two once code is made safe: keep few enough.
    let keep = text
        .chars()
        .count()
        .saturating_sub(over + NOTE.len())
        .saturating_sub(text.matches('`').count());
    let mut cut: String = text.chars().take(keep).collect();
    cut.push_str(NOTE);
    parts[block].1 = cut;
    clip(&render(&parts), MAX_CONTENT)
}

/// `s` cut to `max` characters.
fn clip(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// The card's HTML as styled stretches of plain text.
fn read_html(html: &str) -> Vec<(Style, String)> {
    let mut parts: Vec<(Style, String)> = Vec::new();
    let mut style = Style::Plain;
    let mut rest = html;
    let mut text = String::new();
    while let Some(c) = rest.chars().next() {
        match c {
            '<' => {
                let end = rest.find('>').map_or(rest.len(), |i| i + 1);
                let next = match &rest[..end] {
                    "<b>" => Style::Bold,
                    "<i>" => Style::Italic,
                    "<code>" => Style::Code,
                    "<pre>" => Style::Block,
                    _ => Style::Plain,
                };
                if !text.is_empty() {
                    parts.push((style, std::mem::take(&mut text)));
                }
                style = next;
                rest = &rest[end..];
            }
            '&' => {
                let end = rest.find(';').map_or(rest.len(), |i| i + 1);
                text.push_str(match &rest[..end] {
                    "&amp;" => "&",
                    "&lt;" => "<",
                    "&gt;" => ">",
                    "&quot;" => "\"",
                    other => other,
                });
                rest = &rest[end..];
            }
            c => {
                text.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    if !text.is_empty() {
        parts.push((style, text));
    }
    parts
}

fn render(parts: &[(Style, String)]) -> String {
    let mut out = String::new();
    for (style, text) in parts {
        match style {
            Style::Plain => out.push_str(&escape(text)),
            Style::Bold => {
                out.push_str("**");
                out.push_str(&escape(text));
                out.push_str("**");
            }
            Style::Italic => {
                out.push('_');
                out.push_str(&escape(text));
                out.push('_');
            }
            // Double backticks with spaces inside: a code span that may hold one.
            Style::Code => {
                out.push_str("`` ");
                out.push_str(&in_code(text));
                out.push_str(" ``");
            }
            Style::Block => {
                out.push_str("```\n");
                out.push_str(&in_code(text));
                if !text.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("```");
            }
        }
    }
    out
}

/// Text outside code with every character markdown (or a mention) could use escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '*'
                | '_'
                | '~'
                | '`'
                | '|'
                | '>'
                | '<'
                | '#'
                | '-'
                | '['
                | ']'
                | '('
                | ')'
                | '@'
                | ':'
                | '.'
                | '+'
                | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text inside code: never two backticks side by side, so never the end of the code.
fn in_code(text: &str) -> String {
    text.replace('`', "`\u{200B}")
}

/// The buttons under a pending request: Allow once · This session · Always · Deny,
/// without the grants that would be refused.
pub fn buttons(id: &str, grants: &Offer) -> Vec<Component> {
    vec![row(id, grants, "👍 Allow once")]
}

/// The buttons under a digest: a row for each request still pending, its short id on
/// the first button.
pub fn digest_buttons(lines: &[Line]) -> Vec<Component> {
    lines
        .iter()
        .filter_map(|line| {
            let first = format!("👍 {}", line.record.short_id);
            Some(row(&line.record.id, line.grants.as_ref()?, &first))
        })
        .collect()
}

/// One request's row: Allow once (labelled `first`) · This session · Always · Deny.
fn row(id: &str, grants: &Offer, first: &str) -> Component {
    let button = |label: &str, style, decision| {
        Component::Button(Button {
            custom_id: Some(custom_id(decision, id)),
            disabled: false,
            emoji: None,
            id: None,
            label: Some(label.to_owned()),
            sku_id: None,
            style,
            url: None,
        })
    };
    let mut row = vec![button(first, ButtonStyle::Primary, Decision::AllowOnce)];
    if grants.session_refused.is_none() {
        row.push(button(
            "🕘 This session",
            ButtonStyle::Secondary,
            Decision::AllowSession,
        ));
    }
    if grants.always_refused.is_none() {
        row.push(button(
            "✅ Always",
            ButtonStyle::Success,
            Decision::AllowAlways,
        ));
    }
    row.push(button("❌ Deny", ButtonStyle::Danger, Decision::Deny));
    Component::ActionRow(ActionRow {
        components: row,
        id: None,
    })
}

/// A button's `custom_id`: the decision and the full request id (well within Discord's
/// 100 characters). The full id, so a button can never land on a later request that
/// reused a short id.
pub fn custom_id(decision: Decision, id: &str) -> String {
    format!("execgate:{decision}:{id}")
}

/// The decision and request id a `custom_id` carries; None for anything we did not make.
pub fn parse_custom_id(data: &str) -> Option<(Decision, &str)> {
    if data.len() > CUSTOM_ID_MAX {
        return None;
    }
    let (decision, id) = data.strip_prefix("execgate:")?.split_once(':')?;
    let decision = decision.parse().ok()?;
    (!id.is_empty() && id.len() <= 36).then_some((decision, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0192f0c4-5d2e-7aa1-9b11-4c3d2e1f0a9b";

    #[test]
    fn markdown_escapes_what_could_format_or_mention() {
        let md = markdown(
            "<b>🔒 Exec approval required</b>\nID: <code>a1b2</code>\nReason: @everyone &lt;@123&gt; **x** _y_\n",
        );
        assert!(md.starts_with("**🔒 Exec approval required**\n"), "{md}");
        assert!(md.contains("ID\\: `` a1b2 ``"), "{md}");
        assert!(
            md.contains("\\@everyone \\<\\@123\\> \\*\\*x\\*\\* \\_y\\_"),
            "{md}"
        );
        assert!(!md.contains(" @"), "{md}");
    }

    #[test]
    fn code_cannot_end_early_and_a_huge_command_is_cut_with_a_note() {
        let md = markdown("Command:\n<pre>echo ```\n@everyone `x`</pre>\nRisk: high\n");
        assert_eq!(
            md.matches("```").count(),
            2,
            "only the block's own fences: {md}"
        );
        assert!(md.contains("@everyone"), "code is shown as it is: {md}");
        let huge = format!("<b>t</b>\n<pre>{}</pre>\nRisk: high\n", "`a".repeat(5000));
        let md = markdown(&huge);
        assert!(md.chars().count() <= MAX_CONTENT, "{}", md.chars().count());
        assert!(md.contains("cut here to fit Discord"));
        assert!(md.ends_with("Risk\\: high\n"), "the tail survives: {md}");
        assert_eq!(md.matches("```").count(), 2);
    }

    #[test]
    fn always_is_withheld_where_it_would_be_refused() {
        let labels = |c: Vec<Component>| -> Vec<String> {
            let Component::ActionRow(row) = &c[0] else {
                panic!()
            };
            row.components
                .iter()
                .map(|b| match b {
                    Component::Button(b) => b.label.clone().unwrap(),
                    _ => panic!(),
                })
                .collect()
        };
        let offer = |always: bool, session: bool| Offer {
            always_refused: (!always).then(|| "no".into()),
            session_refused: (!session).then(|| "no".into()),
            rule: None,
            rule_kind: None,
            suggested: None,
        };
        assert_eq!(
            labels(buttons(ID, &offer(true, true))),
            ["👍 Allow once", "🕘 This session", "✅ Always", "❌ Deny"]
        );
        assert_eq!(
            labels(buttons(ID, &offer(false, false))),
            ["👍 Allow once", "❌ Deny"]
        );
    }

    #[test]
    fn custom_ids_round_trip_and_fit() {
        for d in Decision::ALL.iter().copied() {
            let data = custom_id(d, ID);
            assert!(data.len() <= CUSTOM_ID_MAX);
            assert_eq!(parse_custom_id(&data), Some((d, ID)));
        }
        assert_eq!(parse_custom_id("allow-once:x"), None);
        assert_eq!(parse_custom_id("execgate:sudo:x"), None);
        assert_eq!(parse_custom_id("execgate:deny:"), None);
    }
}
