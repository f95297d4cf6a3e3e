//! `[slack]`: the Slack transport's tokens, channel and owners (docs/slack.md).

use serde::Deserialize;

use super::{ConfigError, ReactionMap, Secret, string_list};

/// Slack's Web API, unless `slack.api_url` says otherwise.
pub const SLACK_API_URL: &str = "https://slack.com/api";

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SlackConfig {
    /// The app-level token (`xapp-…`, scope `connections:write`) that opens Socket Mode.
    /// Unset (with every other key): no Slack transport.
    pub app_token: Option<Secret>,
    /// The bot token (`xoxb-…`) every Web API call is made with.
    pub bot_token: Option<Secret>,
    /// Where requests go and answers come from: a channel id (`C…`, `G…`), or a user id
    /// (`U…`, `W…`) for the direct messages with that user.
    pub channel: Option<String>,
    /// The Slack user ids who may answer.
    #[serde(deserialize_with = "string_list")]
    pub owner_ids: Vec<String>,
    /// Reactions and what they mean, as `NAME=DECISION` items with Slack's emoji names
    /// (`+1=allow-once`, `:rocket:=allow-always`). Default: `+1` allow-once,
    /// `white_check_mark` and `ok_hand` allow-always, `x` and `-1` deny.
    #[serde(deserialize_with = "string_list")]
    pub reactions: Vec<String>,
    /// The Web API's base URL. Default: [`SLACK_API_URL`].
    pub api_url: Option<String>,
}

/// Where the requests go, as `slack.channel` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlackPlace {
    /// A channel (public or private) or a direct message, by its id.
    Channel(String),
    /// The direct messages with this user, opened at connect.
    User(String),
}

impl SlackConfig {
    /// True when any key is set: then every required one must be.
    pub fn is_configured(&self) -> bool {
        self.app_token.is_some()
            || self.bot_token.is_some()
            || self.channel.is_some()
            || !self.owner_ids.is_empty()
    }

    /// The reaction map in force: the configured one, else Slack's default.
    pub fn reaction_map(&self) -> Result<ReactionMap, ConfigError> {
        if self.reactions.is_empty() {
            return Ok(ReactionMap::slack_default());
        }
        ReactionMap::slack_from_items("slack.reactions", &self.reactions)
            .map_err(|e| ConfigError::Invalid(e.0))
    }

    /// `slack.channel`, read; None when unset or not an id.
    pub fn place(&self) -> Option<SlackPlace> {
        let id = self.channel.as_deref()?;
        match id.as_bytes().first()? {
            _ if !is_id(id) => None,
            b'C' | b'G' | b'D' => Some(SlackPlace::Channel(id.to_owned())),
            b'U' | b'W' => Some(SlackPlace::User(id.to_owned())),
            _ => None,
        }
    }

    /// The Web API's base URL, without a trailing slash.
    pub fn api(&self) -> &str {
        self.api_url
            .as_deref()
            .unwrap_or(SLACK_API_URL)
            .trim_end_matches('/')
    }

    /// Checks what can be checked without talking to Slack. Tokens are checked for
    /// their shape and never echoed.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |msg: String| Err(ConfigError::Invalid(msg));
        self.reaction_map()?;
        if !self.is_configured() {
            return Ok(());
        }
        super::whole_section(
            "Slack",
            "slack",
            &[
                ("slack.app_token", self.app_token.is_none()),
                ("slack.bot_token", self.bot_token.is_none()),
                ("slack.channel", self.channel.is_none()),
                ("slack.owner_ids", self.owner_ids.is_empty()),
            ],
        )?;
        let app = self.app_token.as_ref().map(Secret::expose).unwrap_or("");
        let bot = self.bot_token.as_ref().map(Secret::expose).unwrap_or("");
        if let Some(why) = token_problem(app, "xapp-", bot) {
            return bad(format!(
                "`slack.app_token` {why}: it is the app-level token (xapp-…) from the app's Basic Information page, with the connections:write scope"
            ));
        }
        if let Some(why) = token_problem(bot, "xoxb-", app) {
            return bad(format!(
                "`slack.bot_token` {why}: it is the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page"
            ));
        }
        let channel = self.channel.as_deref().unwrap_or_default();
        if self.place().is_none() {
            return bad(format!(
                "`slack.channel` {channel:?} is not a Slack id: give a channel id (C…, from the channel's details; not its #name) or your user id (U…) for direct messages"
            ));
        }
        for owner in &self.owner_ids {
            if !(is_id(owner) && matches!(owner.as_bytes()[0], b'U' | b'W')) {
                return bad(format!(
                    "`slack.owner_ids` holds {owner:?}, which is not a Slack user id like U012AB3CD (your profile, ⋮, Copy member ID)"
                ));
            }
        }
        if let Some(url) = &self.api_url {
            match reqwest::Url::parse(url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
                Ok(_) => {
                    return bad(format!(
                        "`slack.api_url` {url:?} must be an http:// or https:// URL"
                    ));
                }
                Err(e) => return bad(format!("`slack.api_url` {url:?}: {e}")),
            }
        }
        Ok(())
    }
}

/// A Slack id: a capital letter, then capitals and digits.
fn is_id(s: &str) -> bool {
    s.len() >= 3
        && s.len() <= 32
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && s.as_bytes()[0].is_ascii_uppercase()
}

/// What is wrong with a token that should start with `prefix`, without saying the token;
/// `other` is the other token, so that the two swapped are named as such.
fn token_problem(token: &str, prefix: &str, other: &str) -> Option<&'static str> {
    if !token.is_empty() && token == other {
        return Some("is the same as the other Slack token");
    }
    if token.starts_with(if prefix == "xapp-" { "xoxb-" } else { "xapp-" }) {
        return Some("holds the other kind of Slack token (the two are swapped)");
    }
    if token.starts_with("xoxp-") {
        return Some("holds a user token (xoxp-…), which acts as you rather than the app");
    }
    let Some(body) = token.strip_prefix(prefix) else {
        return Some("does not begin the way this kind of Slack token does");
    };
    let well_formed =
        body.len() >= 16 && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    (!well_formed).then_some("is cut short or holds characters a Slack token never has")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Decision;

    const APP: &str = "xapp-1-A0123456789-1234567890123-abcdef0123456789";
    const BOT: &str = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";

    fn full() -> SlackConfig {
        SlackConfig {
            app_token: Some(Secret(APP.into())),
            bot_token: Some(Secret(BOT.into())),
            channel: Some("C0123456789".into()),
            owner_ids: vec!["U0OWNER01".into()],
            reactions: vec![],
            api_url: None,
        }
    }

    fn error(c: &SlackConfig) -> String {
        c.validate().unwrap_err().to_string()
    }

    #[test]
    fn unset_is_off_and_full_is_on() {
        let off = SlackConfig::default();
        assert!(!off.is_configured());
        off.validate().unwrap();
        full().validate().unwrap();
        assert_eq!(
            full().place(),
            Some(SlackPlace::Channel("C0123456789".into()))
        );
        let mut dm = full();
        dm.channel = Some("U0OWNER01".into());
        dm.validate().unwrap();
        assert_eq!(dm.place(), Some(SlackPlace::User("U0OWNER01".into())));
        assert_eq!(full().api(), "https://slack.com/api");
    }

    #[test]
    fn half_a_configuration_names_what_is_missing() {
        let c = SlackConfig {
            bot_token: Some(Secret(BOT.into())),
            ..SlackConfig::default()
        };
        let e = error(&c);
        assert!(e.contains("slack.app_token"), "{e}");
        assert!(e.contains("slack.channel"), "{e}");
        assert!(e.contains("slack.owner_ids"), "{e}");
        assert!(!e.contains("slack.bot_token"), "{e}");
    }

    #[test]
    fn tokens_are_checked_for_their_shape_and_never_echoed() {
        let mut c = full();
        c.app_token = Some(Secret(BOT.into()));
        c.bot_token = Some(Secret(APP.into()));
        let e = error(&c);
        assert!(
            e.contains("`slack.app_token`") && e.contains("swapped"),
            "{e}"
        );
        assert!(!e.contains("AbCdEf") && !e.contains("abcdef0123"), "{e}");
        let mut c = full();
        c.bot_token = Some(Secret("xoxp-123-secretsecretsecret".into()));
        let e = error(&c);
        assert!(
            e.contains("`slack.bot_token`") && e.contains("user token"),
            "{e}"
        );
        assert!(!e.contains("secretsecret"), "{e}");
        let mut c = full();
        c.bot_token = Some(Secret("xoxb-12 34".into()));
        assert!(error(&c).contains("`slack.bot_token` is cut short"));
        let mut c = full();
        c.app_token = Some(Secret("my-app-token-that-is-long".into()));
        let e = error(&c);
        assert!(e.contains("`slack.app_token`"), "{e}");
        assert!(!e.contains("my-app-token"), "{e}");
    }

    #[test]
    fn ids_urls_and_reactions_are_checked() {
        let mut c = full();
        c.channel = Some("#ops".into());
        assert!(error(&c).contains("not its #name"));
        let mut c = full();
        c.owner_ids = vec!["@olivia".into()];
        assert!(error(&c).contains("`slack.owner_ids` holds \"@olivia\""));
        let mut c = full();
        c.owner_ids = vec!["C0123456789".into()];
        assert!(error(&c).contains("not a Slack user id"));
        let mut c = full();
        c.api_url = Some("ftp://x".into());
        assert!(error(&c).contains("http:// or https://"));
        let mut c = full();
        c.reactions = vec!["rocket".into()];
        assert!(error(&c).contains("NAME=DECISION"));
        let mut c = full();
        c.reactions = vec![":rocket:=allow-always".into(), "fire=deny".into()];
        let map = c.reaction_map().unwrap();
        assert_eq!(map.decision(":rocket:"), Some(Decision::AllowAlways));
        assert_eq!(map.decision(":fire:"), Some(Decision::Deny));
        assert_eq!(
            map.decision(":+1:"),
            None,
            "a configured map replaces the default"
        );
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        let shown = format!("{:?}", full());
        assert!(
            !shown.contains("xapp-") && !shown.contains("xoxb-"),
            "{shown}"
        );
    }
}
