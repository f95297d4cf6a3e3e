//! What only Slack shows: the card as Block Kit, the buttons under it and the data they
//! carry back, and the names Slack gives reactions.
//!
//! Every text the bot writes goes out as a `rich_text` block, whose text runs Slack shows
//! exactly as given: nothing in them is mrkdwn, a link or a mention, so an agent's command
//! can neither format itself into something else nor ping anyone. The message's `text`,
//! which Slack shows only in notifications and reads as mrkdwn, is a short summary with
//! `&`, `<` and `>` escaped, so it cannot make a link or a mention either.

use slack_morphism::prelude::*;

use crate::approvals::Offer;
use crate::model::Decision;
use crate::text::clip_chars;
use crate::transport::card::{Card, Line};

/// The most of a text the notification summary shows.
const SUMMARY_MAX: usize = 300;
/// Said under every approval card: Slack takes a message that starts with `/` for one of
/// its slash commands, so the owner types the commands without it.
const NO_SLASH: &str =
    "In Slack, type the commands without the slash, in this message's thread: approve ID always";

/// The blocks of an approval card: its text, then the buttons on offer.
pub fn approval(card: &Card, id: &str, grants: &Offer) -> Vec<SlackBlock> {
    let mut text = rich_text(&card.html);
    text.push(SlackRichTextSection::new(vec![italic(&format!("\n{NO_SLASH}"))]).into());
    vec![
        SlackRichTextBlock::new(text).into(),
        SlackActionsBlock::new(buttons(id, grants, "👍 Allow once")).into(),
    ]
}

/// The blocks of a digest: its text, then a row of buttons for each request still
/// pending, its short id on the first.
pub fn digest(card: &Card, lines: &[Line]) -> Vec<SlackBlock> {
    let mut text = rich_text(&card.html);
    let pending: Vec<(&Line, &Offer)> = lines
        .iter()
        .filter_map(|line| Some((line, line.grants.as_ref()?)))
        .collect();
    if !pending.is_empty() {
        text.push(SlackRichTextSection::new(vec![italic(&format!("\n{NO_SLASH}"))]).into());
    }
    let mut blocks = vec![SlackRichTextBlock::new(text).into()];
    for (line, grants) in pending {
        let first = format!("👍 {}", line.record.short_id);
        blocks.push(SlackActionsBlock::new(buttons(&line.record.id, grants, &first)).into());
    }
    blocks
}

/// The blocks of a closed card: its text only, the buttons gone.
pub fn closed(card: &Card) -> Vec<SlackBlock> {
    vec![SlackRichTextBlock::new(rich_text(&card.html)).into()]
}

/// The blocks of a plain text (a reply): one run, shown as it is.
pub fn literal(text: &str) -> Vec<SlackBlock> {
    let run = SlackRichTextText::new(text.to_owned());
    vec![SlackRichTextBlock::new(vec![SlackRichTextSection::new(vec![run.into()]).into()]).into()]
}

/// The notification text of a message: its first line, escaped for mrkdwn.
pub fn summary(text: &str) -> String {
    escape(&clip_chars(text.lines().next().unwrap_or(""), SUMMARY_MAX))
}

/// `s` with the three characters Slack's mrkdwn gives a meaning escaped, as Slack asks.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A message's text as Slack sends it (`&`, `<`, `>` escaped), as typed.
pub fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The buttons under a pending request: Allow once (labelled `first`) · This session ·
/// Always · Deny, without the grants that would be refused.
fn buttons(id: &str, grants: &Offer, first: &str) -> Vec<SlackActionBlockElement> {
    let mut row = vec![(Decision::AllowOnce, first, None)];
    if grants.session_refused.is_none() {
        row.push((Decision::AllowSession, "🕘 This session", None));
    }
    if grants.always_refused.is_none() {
        row.push((
            Decision::AllowAlways,
            "✅ Always",
            Some(SlackBlockButtonStyle::Primary),
        ));
    }
    row.push((
        Decision::Deny,
        "❌ Deny",
        Some(SlackBlockButtonStyle::Danger),
    ));
    row.into_iter()
        .map(|(decision, label, style)| {
            let button = SlackBlockButtonElement::new(label.into())
                .with_action_id(SlackActionId(decision.to_string()))
                .with_value(button_value(decision, id));
            match style {
                Some(style) => button.with_style(style),
                None => button,
            }
            .into()
        })
        .collect()
}

/// A button's value: the decision and the full request id. The full id, not the short
/// one, so a button can never land on a later request that reused a short id.
pub fn button_value(decision: Decision, id: &str) -> String {
    format!("{decision}:{id}")
}

/// The decision and request id a button carries; None for anything we did not make.
pub fn parse_button(value: &str) -> Option<(Decision, &str)> {
    let (decision, id) = value.split_once(':')?;
    let decision = decision.parse().ok()?;
    (!id.is_empty() && id.len() <= 36).then_some((decision, id))
}

/// A reaction as the reaction map names it: `:name:`, without a skin tone
/// (`+1::skin-tone-2` is 👍 all the same), and by Slack's own name for 👍 and 👎 when it
/// comes by an alias.
pub fn reaction_key(name: &str) -> String {
    let name = name.split("::").next().unwrap_or(name);
    let name = match name {
        "thumbsup" => "+1",
        "thumbsdown" => "-1",
        other => other,
    };
    format!(":{name}:")
}

/// The card's HTML (tags `b`, `i`, `code`, `pre`; entities `&amp;` `&lt;` `&gt;`
/// `&quot;`) as rich text elements: the same words, the same emphasis, each text run
/// literal.
fn rich_text(html: &str) -> Vec<SlackRichTextElement> {
    let mut out: Vec<SlackRichTextElement> = Vec::new();
    let mut section: Vec<SlackRichTextInlineElement> = Vec::new();
    let (mut bold, mut italic, mut code) = (false, false, false);
    let mut rest = html;
    while !rest.is_empty() {
        let (text, tag) = match rest.find('<') {
            Some(0) => {
                let end = rest.find('>').map_or(rest.len(), |e| e + 1);
                let tag = &rest[..end];
                rest = &rest[end..];
                ("", Some(tag))
            }
            Some(at) => {
                let text = &rest[..at];
                rest = &rest[at..];
                (text, None)
            }
            None => {
                let text = rest;
                rest = "";
                (text, None)
            }
        };
        if !text.is_empty() {
            let mut run = SlackRichTextText::new(decode(text));
            if bold {
                run = run.bold();
            }
            if italic {
                run = run.italic();
            }
            if code {
                run = run.code();
            }
            section.push(run.into());
        }
        match tag {
            Some("<b>") => bold = true,
            Some("</b>") => bold = false,
            Some("<i>") => italic = true,
            Some("</i>") => italic = false,
            Some("<code>") => code = true,
            Some("</code>") => code = false,
            Some("<pre>") if !section.is_empty() => {
                out.push(SlackRichTextSection::new(std::mem::take(&mut section)).into());
            }
            Some("</pre>") => {
                out.push(SlackRichTextPreformatted::new(std::mem::take(&mut section)).into());
            }
            _ => {}
        }
    }
    if !section.is_empty() {
        out.push(SlackRichTextSection::new(section).into());
    }
    out
}

fn italic(text: &str) -> SlackRichTextInlineElement {
    SlackRichTextText::new(text.to_owned()).italic().into()
}

/// Text of the card's HTML, its entities decoded.
fn decode(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const ID: &str = "0192f0c4-5d2e-7aa1-9b11-4c3d2e1f0a9b";

    fn offer(always: bool, session: bool) -> Offer {
        Offer {
            always_refused: (!always).then(|| "no".into()),
            session_refused: (!session).then(|| "no".into()),
            rule: None,
            rule_kind: None,
            suggested: None,
        }
    }

    fn labels(blocks: &[SlackBlock]) -> Vec<String> {
        let v = serde_json::to_value(blocks).unwrap();
        v[1]["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["text"]["text"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn buttons_are_withheld_where_they_would_be_refused() {
        let card = Card {
            html: "x".into(),
            plain: "x".into(),
        };
        assert_eq!(
            labels(&approval(&card, ID, &offer(true, true))),
            ["👍 Allow once", "🕘 This session", "✅ Always", "❌ Deny"]
        );
        assert_eq!(
            labels(&approval(&card, ID, &offer(true, false))),
            ["👍 Allow once", "✅ Always", "❌ Deny"]
        );
        assert_eq!(
            labels(&approval(&card, ID, &offer(false, false))),
            ["👍 Allow once", "❌ Deny"]
        );
        let v = serde_json::to_value(approval(&card, ID, &offer(true, true))).unwrap();
        let once = &v[1]["elements"][0];
        assert_eq!(once["type"], "button");
        assert_eq!(once["value"], format!("allow-once:{ID}"));
    }

    #[test]
    fn button_values_round_trip() {
        for d in Decision::ALL.iter().copied() {
            assert_eq!(parse_button(&button_value(d, ID)), Some((d, ID)));
        }
        assert_eq!(parse_button("allow-once"), None);
        assert_eq!(parse_button("sudo:x"), None);
        assert_eq!(parse_button("deny:"), None);
    }

    #[test]
    fn the_card_is_literal_rich_text() {
        let html = "<b>🔒 Title</b>\nCommand:\n<pre>echo &lt;@U1&gt; &amp;&amp; *x*</pre>\nReply: <code>/approve a1b2</code>";
        let blocks = closed(&Card {
            html: html.into(),
            plain: String::new(),
        });
        let v = serde_json::to_value(&blocks).unwrap();
        assert_eq!(v[0]["type"], "rich_text");
        let elements = v[0]["elements"].as_array().unwrap();
        let kinds: Vec<&str> = elements
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "rich_text_section",
                "rich_text_preformatted",
                "rich_text_section"
            ]
        );
        assert_eq!(elements[0]["elements"][0]["text"], "🔒 Title");
        assert_eq!(elements[0]["elements"][0]["style"], json!({"bold": true}));
        assert_eq!(elements[1]["elements"][0]["text"], "echo <@U1> && *x*");
        assert_eq!(elements[2]["elements"][1]["style"], json!({"code": true}));
        let runs: Vec<&Value> = elements
            .iter()
            .flat_map(|e| e["elements"].as_array().unwrap())
            .collect();
        assert!(
            runs.iter().all(|r| r["type"] == "text"),
            "no links, no mentions"
        );
    }

    #[test]
    fn summaries_are_escaped_and_reactions_keyed() {
        assert_eq!(
            summary("a <@U1> & <http://x|y>\nrest"),
            "a &lt;@U1&gt; &amp; &lt;http://x|y&gt;"
        );
        assert_eq!(unescape("&lt;b&gt; &amp;lt;"), "<b> &lt;");
        assert_eq!(reaction_key("+1::skin-tone-2"), ":+1:");
        assert_eq!(reaction_key("thumbsdown"), ":-1:");
        assert_eq!(reaction_key("white_check_mark"), ":white_check_mark:");
    }
}
