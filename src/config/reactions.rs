//! `telegram.reactions`, `matrix.reactions`, `slack.reactions` and `discord.reactions`:
//! which emoji answers what. Configuration data, checked when the configuration is
//! loaded; the chat grammar and the transports read it.

use crate::model::Decision;

/// Why a reaction map was refused; the message names the emoji or the word.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReactionMapError(pub String);

/// The reaction map: which emoji means which decision. Default:
/// 👍 allow-once, ✅ allow-always, 👌 allow-always, ❌ deny, 👎 deny.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReactionMap {
    /// In configured order, so help lists reactions the way the owner wrote them.
    entries: Vec<(String, Decision)>,
}

impl Default for ReactionMap {
    fn default() -> Self {
        let entries = [
            ("👍", Decision::AllowOnce),
            ("✅", Decision::AllowAlways),
            ("👌", Decision::AllowAlways),
            ("❌", Decision::Deny),
            ("👎", Decision::Deny),
        ];
        ReactionMap {
            entries: entries.iter().map(|&(e, d)| (e.to_owned(), d)).collect(),
        }
    }
}

impl ReactionMap {
    /// Matrix's default: reactions there are free text, so ✅ and ❌ need no stand-ins.
    pub fn matrix_default() -> Self {
        let entries = [
            ("👍", Decision::AllowOnce),
            ("✅", Decision::AllowAlways),
            ("❌", Decision::Deny),
        ];
        ReactionMap {
            entries: entries.iter().map(|&(e, d)| (e.to_owned(), d)).collect(),
        }
    }

    /// Slack's default, which means what Telegram's does. Slack names a reaction rather
    /// than sending the emoji, and its messages show a name between colons as the emoji,
    /// so the map holds `:name:`.
    pub fn slack_default() -> Self {
        let entries = [
            (":+1:", Decision::AllowOnce),
            (":white_check_mark:", Decision::AllowAlways),
            (":ok_hand:", Decision::AllowAlways),
            (":x:", Decision::Deny),
            (":-1:", Decision::Deny),
        ];
        ReactionMap {
            entries: entries.iter().map(|&(e, d)| (e.to_owned(), d)).collect(),
        }
    }

    /// A Slack map from configuration items `NAME=DECISION` (`+1=allow-once` or
    /// `:+1:=allow-once`); `key` names them in errors.
    pub fn slack_from_items(key: &str, items: &[String]) -> Result<Self, ReactionMapError> {
        let mut pairs = Vec::with_capacity(items.len());
        for item in items {
            let Some((name, decision)) = item.split_once('=') else {
                return Err(ReactionMapError(format!(
                    "`{key}` item {item:?} must look like NAME=DECISION, e.g. +1=allow-once"
                )));
            };
            let bare = name.trim().trim_matches(':');
            let valid = !bare.is_empty()
                && bare
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_+-'".contains(&b));
            if !valid {
                return Err(ReactionMapError(format!(
                    "`{key}` item {item:?}: {name:?} is not a Slack emoji name; Slack sends names like +1 (👍), white_check_mark (✅) or x (❌)"
                )));
            }
            pairs.push((format!(":{bare}:"), decision));
        }
        ReactionMap::from_pairs(pairs.iter().map(|(n, d)| (n.as_str(), *d)))
            .map_err(|e| ReactionMapError(format!("`{key}`: {e}")))
    }

    /// A map from configuration items `EMOJI=DECISION`; `key` names them in errors.
    pub fn from_items(key: &str, items: &[String]) -> Result<Self, ReactionMapError> {
        let mut pairs = Vec::with_capacity(items.len());
        for item in items {
            let Some((emoji, decision)) = item.split_once('=') else {
                return Err(ReactionMapError(format!(
                    "`{key}` item {item:?} must look like EMOJI=DECISION, e.g. 👍=allow-once"
                )));
            };
            pairs.push((emoji, decision));
        }
        ReactionMap::from_pairs(pairs).map_err(|e| ReactionMapError(format!("`{key}`: {e}")))
    }
}

/// Clients disagree on whether to send the emoji-presentation selector, so it must not
/// decide whether a reaction counts.
fn bare(emoji: &str) -> &str {
    emoji.trim_end_matches('\u{FE0F}')
}

impl ReactionMap {
    /// Builds a map from (emoji, decision-word) pairs as they come from config, e.g. ("🔥","allow-once"). Errors on an unknown decision word or empty emoji, with a clear message.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, ReactionMapError> {
        let mut entries: Vec<(String, Decision)> = Vec::new();
        for (emoji, word) in pairs {
            let emoji = emoji.trim();
            if bare(emoji).is_empty() {
                return Err(ReactionMapError(format!(
                    "reaction for {word:?} has an empty emoji"
                )));
            }
            let decision: Decision = word
                .trim()
                .parse()
                .map_err(|e| ReactionMapError(format!("reaction {emoji:?}: {e}")))?;
            // One emoji meaning two things would make the outcome depend on map order.
            match entries.iter().find(|(e, _)| bare(e) == bare(emoji)) {
                Some((_, d)) if *d != decision => {
                    return Err(ReactionMapError(format!(
                        "reaction {emoji:?} is mapped to both {d} and {decision}"
                    )));
                }
                Some(_) => {}
                None => entries.push((emoji.to_owned(), decision)),
            }
        }
        Ok(ReactionMap { entries })
    }

    /// Every (emoji, decision) pair, in configured order.
    pub fn entries(&self) -> &[(String, Decision)] {
        &self.entries
    }

    /// The decision for one emoji, or None. Compare ignoring a trailing variation selector U+FE0F on either side (so "👍️" equals "👍", "✔️" vs "✔").
    pub fn decision(&self, emoji: &str) -> Option<Decision> {
        let emoji = bare(emoji.trim());
        self.entries
            .iter()
            .find(|(e, _)| bare(e) == emoji)
            .map(|&(_, d)| d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Decision::*;

    #[test]
    fn default_reactions() {
        let map = ReactionMap::default();
        assert_eq!(map.decision("👍"), Some(AllowOnce));
        assert_eq!(map.decision("✅"), Some(AllowAlways));
        assert_eq!(map.decision("👌"), Some(AllowAlways));
        assert_eq!(map.decision("❌"), Some(Deny));
        assert_eq!(map.decision("👎"), Some(Deny));
        assert_eq!(map.decision("🔥"), None);
        assert_eq!(map.decision(""), None);
    }

    #[test]
    fn slack_maps_hold_names_between_colons() {
        let map = ReactionMap::slack_default();
        assert_eq!(map.decision(":+1:"), Some(AllowOnce));
        assert_eq!(map.decision(":ok_hand:"), Some(AllowAlways));
        assert_eq!(map.decision(":-1:"), Some(Deny));
        let items = |v: &[&str]| {
            ReactionMap::slack_from_items(
                "slack.reactions",
                &v.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        };
        let map = items(&["rocket=allow-once", ":skull:=deny"]).unwrap();
        assert_eq!(map.decision(":rocket:"), Some(AllowOnce));
        assert_eq!(map.decision(":skull:"), Some(Deny));
        let e = items(&["👍=allow-once"]).unwrap_err().0;
        assert!(e.contains("not a Slack emoji name"), "{e}");
        let e = items(&["rocket=maybe"]).unwrap_err().0;
        assert!(e.contains("slack.reactions") && e.contains("maybe"), "{e}");
    }

    #[test]
    fn variation_selector_ignored_both_sides() {
        assert_eq!(
            ReactionMap::default().decision("👍\u{FE0F}"),
            Some(AllowOnce)
        );
        let map = ReactionMap::from_pairs([("✔\u{FE0F}", "allow-always"), ("🔥", "deny")]).unwrap();
        assert_eq!(map.decision("✔"), Some(AllowAlways));
        assert_eq!(map.decision("✔\u{FE0F}"), Some(AllowAlways));
        assert_eq!(map.decision("🔥\u{FE0F}"), Some(Deny));
        assert_eq!(map.decision("👍"), None);
    }

    #[test]
    fn from_pairs_errors() {
        let msg = |pairs: &[(&str, &str)]| {
            ReactionMap::from_pairs(pairs.iter().copied())
                .unwrap_err()
                .0
        };
        let e = msg(&[("🔥", "maybe")]);
        assert!(
            e.contains("🔥") && e.contains("\"maybe\"") && e.contains("allow-once"),
            "{e}"
        );
        let e = msg(&[("", "deny")]);
        assert!(e.contains("empty emoji") && e.contains("deny"), "{e}");
        assert!(msg(&[(" \u{FE0F}", "deny")]).contains("empty emoji"));
        let e = msg(&[("🔥", "deny"), ("🔥\u{FE0F}", "allow-once")]);
        assert!(e.contains("both deny and allow-once"), "{e}");
        assert!(ReactionMap::from_pairs([("🔥", "deny"), ("🔥", "deny")]).is_ok());
        assert_eq!(ReactionMap::from_pairs([]).unwrap().decision("👍"), None);
    }
}
