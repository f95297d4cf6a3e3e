//! What only Telegram shows: the buttons under an approval message, and the data they
//! carry back. The message itself is the shared card (`transport::card`).

use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup};

use crate::approvals::Offer;
use crate::model::Decision;
use crate::transport::card::Line;

/// The buttons under a pending request: Allow once · This session · Always · Deny,
/// without the grants that would be refused.
pub fn keyboard(id: &str, grants: &Offer) -> InlineKeyboardMarkup {
    InlineKeyboardMarkup::new([row(
        id,
        grants,
        ["👍 Allow once", "🕘 This session", "✅ Always", "❌ Deny"],
    )])
}

/// The buttons under a digest: a row for each request still pending, its short id on
/// the first button, each button naming its request in full.
pub fn digest_keyboard(lines: &[Line]) -> InlineKeyboardMarkup {
    let rows = lines.iter().filter_map(|line| {
        let first = format!("👍 {}", line.record.short_id);
        let labels = [first.as_str(), "🕘 session", "✅ always", "❌ deny"];
        Some(row(&line.record.id, line.grants.as_ref()?, labels))
    });
    InlineKeyboardMarkup::new(rows.collect::<Vec<_>>())
}

/// One request's buttons, labelled Allow once, This session, Always, Deny in that
/// order, without the grants that would be refused.
fn row(id: &str, grants: &Offer, labels: [&str; 4]) -> Vec<InlineKeyboardButton> {
    let [once, session, always, deny] = labels;
    let mut row = vec![InlineKeyboardButton::callback(
        once,
        callback_data(Decision::AllowOnce, id),
    )];
    if grants.session_refused.is_none() {
        row.push(InlineKeyboardButton::callback(
            session,
            callback_data(Decision::AllowSession, id),
        ));
    }
    if grants.always_refused.is_none() {
        row.push(InlineKeyboardButton::callback(
            always,
            callback_data(Decision::AllowAlways, id),
        ));
    }
    row.push(InlineKeyboardButton::callback(
        deny,
        callback_data(Decision::Deny, id),
    ));
    row
}

/// A button's payload: the decision and the full request id (at most 49 bytes of
/// Telegram's 64). The full id, not the short one, so a button can never land on a later
/// request that reused a short id.
pub fn callback_data(decision: Decision, id: &str) -> String {
    format!("{decision}:{id}")
}

/// The decision and request id a button carries; None for anything we did not make.
pub fn parse_callback(data: &str) -> Option<(Decision, &str)> {
    let (decision, id) = data.split_once(':')?;
    let decision = decision.parse().ok()?;
    (!id.is_empty() && id.len() <= 36).then_some((decision, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_is_withheld_where_it_would_be_refused() {
        let id = "0192f0c4-5d2e-7aa1-9b11-4c3d2e1f0a9b";
        let buttons = |kb: InlineKeyboardMarkup| -> Vec<String> {
            kb.inline_keyboard[0]
                .iter()
                .map(|b| b.text.clone())
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
            buttons(keyboard(id, &offer(true, true))),
            ["👍 Allow once", "🕘 This session", "✅ Always", "❌ Deny"]
        );
        assert_eq!(
            buttons(keyboard(id, &offer(true, false))),
            ["👍 Allow once", "✅ Always", "❌ Deny"]
        );
        assert_eq!(
            buttons(keyboard(id, &offer(false, false))),
            ["👍 Allow once", "❌ Deny"]
        );
    }

    #[test]
    fn callback_data_round_trips_and_fits() {
        let id = "0192f0c4-5d2e-7aa1-9b11-4c3d2e1f0a9b";
        for d in Decision::ALL.iter().copied() {
            let data = callback_data(d, id);
            assert!(data.len() <= 64);
            assert_eq!(parse_callback(&data), Some((d, id)));
        }
        assert_eq!(parse_callback("allow-once"), None);
        assert_eq!(parse_callback("sudo:x"), None);
        assert_eq!(parse_callback("deny:"), None);
    }
}
