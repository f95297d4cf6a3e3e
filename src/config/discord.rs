//! `[discord]`: the Discord transport's bot, channel and owners (docs/discord.md).

use serde::{Deserialize, Deserializer};

use super::{ConfigError, ReactionMap, Scalar, Secret, numbers, string_list};

/// Discord's own addresses, used unless `api_url` / `gateway_url` say otherwise.
pub const DISCORD_API_URL: &str = "https://discord.com";
pub const DISCORD_GATEWAY_URL: &str = "wss://gateway.discord.gg";

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiscordConfig {
    /// The bot's token (developer portal, Bot page). Unset (with every other key): no
    /// Discord transport.
    pub bot_token: Option<Secret>,
    /// The channel requests go to and answers come from. Unset: a direct message to the
    /// first owner.
    #[serde(deserialize_with = "opt_snowflake")]
    pub channel_id: Option<u64>,
    /// The Discord users who may answer, by user id.
    #[serde(deserialize_with = "snowflakes")]
    pub owner_ids: Vec<u64>,
    /// Reactions and what they mean, as `EMOJI=DECISION` items. Default: 👍 allow-once,
    /// ✅ and 👌 allow-always, ❌ and 👎 deny.
    #[serde(deserialize_with = "string_list")]
    pub reactions: Vec<String>,
    /// Where the REST API is (`/api/v10` is added). Default: Discord's.
    pub api_url: Option<String>,
    /// Where the gateway is first reached (resumes go where Discord says). Default:
    /// Discord's.
    pub gateway_url: Option<String>,
}

impl DiscordConfig {
    /// True when any key that turns the transport on is set: then every required one
    /// must be.
    pub fn is_configured(&self) -> bool {
        self.bot_token.is_some() || self.channel_id.is_some() || !self.owner_ids.is_empty()
    }

    /// The reaction map in force: the configured one, else the default.
    pub fn reaction_map(&self) -> Result<ReactionMap, ConfigError> {
        if self.reactions.is_empty() {
            return Ok(ReactionMap::default());
        }
        ReactionMap::from_items("discord.reactions", &self.reactions)
            .map_err(|e| ConfigError::Invalid(e.0))
    }

    /// The REST API's base URL in force.
    pub fn api(&self) -> &str {
        self.api_url.as_deref().unwrap_or(DISCORD_API_URL)
    }

    /// The gateway's URL in force.
    pub fn gateway(&self) -> &str {
        self.gateway_url.as_deref().unwrap_or(DISCORD_GATEWAY_URL)
    }

    /// Checks what can be checked without talking to Discord. The token is never echoed.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |msg: String| Err(ConfigError::Invalid(msg));
        self.reaction_map()?;
        if !self.is_configured() {
            return Ok(());
        }
        super::whole_section(
            "Discord",
            "discord",
            &[
                ("discord.bot_token", self.bot_token.is_none()),
                ("discord.owner_ids", self.owner_ids.is_empty()),
            ],
        )?;
        let token = self.bot_token.as_ref().map(Secret::expose).unwrap_or("");
        // A bot token is three dot-separated base64url parts; catching a pasted client
        // secret, application id or "Bot …" header here beats an authentication failure
        // at every start.
        let parts: Vec<&str> = token.split('.').collect();
        let well_formed = parts.len() == 3
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            })
            && token.len() >= 50;
        if !well_formed {
            return bad(
                "`discord.bot_token` does not look like a bot token (three dot-separated parts, from the Bot page of the application in Discord's developer portal; not the client secret, and without a \"Bot \" prefix)".into(),
            );
        }
        if self.owner_ids.contains(&0) || self.channel_id == Some(0) {
            return bad("`discord.owner_ids` and `discord.channel_id` must not hold 0".into());
        }
        // The bot's user id is the token's first part, base64 of its decimal digits.
        if let Some(bot) = bot_id(token)
            && self.owner_ids.contains(&bot)
        {
            return bad(format!(
                "`discord.owner_ids` holds the bot's own id {bot}: the bot cannot answer its own requests"
            ));
        }
        for (key, url, schemes) in [
            ("discord.api_url", &self.api_url, ["http", "https"]),
            ("discord.gateway_url", &self.gateway_url, ["ws", "wss"]),
        ] {
            let Some(url) = url else { continue };
            match reqwest::Url::parse(url) {
                Ok(u)
                    if schemes.contains(&u.scheme())
                        && u.host().is_some()
                        && matches!(u.path(), "" | "/")
                        && u.query().is_none() => {}
                Ok(_) => {
                    return bad(format!(
                        "`{key}` {url:?} must be a {}:// or {}:// URL with no path",
                        schemes[0], schemes[1]
                    ));
                }
                Err(e) => return bad(format!("`{key}` {url:?}: {e}")),
            }
        }
        Ok(())
    }
}

/// The bot's user id, read from the first part of its token (base64 of the id's digits).
pub fn bot_id(token: &str) -> Option<u64> {
    let first = token.split('.').next()?;
    let digits = base64url(first)?;
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// Base64 (standard or URL alphabet, padding optional) decoded; None if it is not.
fn base64url(s: &str) -> Option<Vec<u8>> {
    let mut bits: u32 = 0;
    let mut n = 0;
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for c in s.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    Some(out)
}

/// Discord ids (snowflakes), as a TOML list, numbers or strings, or one comma-separated
/// string (the environment's form).
fn snowflakes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    numbers(d, "Discord id (a snowflake, digits only)")
}

/// One Discord id, as a number or a string of digits.
fn opt_snowflake<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let s = Scalar::deserialize(d)?.into_string();
    s.trim().parse().map(Some).map_err(|_| {
        serde::de::Error::custom(format!(
            "{s:?} is not a Discord id (a snowflake, digits only)"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of a real token, for a bot whose id is 1234567890123456789.
    pub const TOKEN: &str =
        "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhXyZa.abcdefghijklmnopqrstuvwxyz0123456789ABCD";

    fn full() -> DiscordConfig {
        DiscordConfig {
            bot_token: Some(Secret(TOKEN.into())),
            channel_id: Some(222),
            owner_ids: vec![111],
            ..DiscordConfig::default()
        }
    }

    fn error(c: &DiscordConfig) -> String {
        c.validate().unwrap_err().to_string()
    }

    #[test]
    fn unset_is_off_and_full_is_on() {
        let off = DiscordConfig::default();
        assert!(!off.is_configured());
        off.validate().unwrap();
        full().validate().unwrap();
        assert_eq!(full().api(), DISCORD_API_URL);
        let map = full().reaction_map().unwrap();
        assert!(map.decision("👌").is_some() && map.decision("❌").is_some());
        assert_eq!(bot_id(TOKEN), Some(1234567890123456789));
    }

    #[test]
    fn half_a_configuration_names_what_is_missing() {
        let c = DiscordConfig {
            channel_id: Some(222),
            ..DiscordConfig::default()
        };
        let e = error(&c);
        assert!(
            e.contains("discord.bot_token") && e.contains("discord.owner_ids"),
            "{e}"
        );
        let c = DiscordConfig {
            bot_token: Some(Secret(TOKEN.into())),
            ..DiscordConfig::default()
        };
        let e = error(&c);
        assert!(
            e.contains("discord.owner_ids") && !e.contains("bot_token"),
            "{e}"
        );
    }

    #[test]
    fn tokens_ids_and_urls_are_checked_and_the_token_never_echoed() {
        for token in ["Bot x.y.z", "a-client-secret-of-32-characters", "a.b.c"] {
            let mut c = full();
            c.bot_token = Some(Secret(token.into()));
            let e = error(&c);
            assert!(e.contains("`discord.bot_token`"), "{e}");
            assert!(!e.contains(token), "the token is echoed: {e}");
        }
        let mut c = full();
        c.owner_ids = vec![1234567890123456789];
        assert!(error(&c).contains("own id"));
        let mut c = full();
        c.api_url = Some("ftp://x".into());
        assert!(error(&c).contains("`discord.api_url`"));
        let mut c = full();
        c.api_url = Some("https://discord.com/api/v10".into());
        assert!(error(&c).contains("no path"));
        let mut c = full();
        c.gateway_url = Some("https://gateway.discord.gg".into());
        assert!(error(&c).contains("ws://"));
        c.gateway_url = Some("ws://127.0.0.1:9".into());
        c.validate().unwrap();
        let mut c = full();
        c.reactions = vec!["🔥".into()];
        assert!(error(&c).contains("discord.reactions"));
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        assert!(!format!("{:?}", full()).contains(TOKEN));
    }
}
