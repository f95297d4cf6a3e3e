//! `[matrix]`: the Matrix transport's account, room and owners (docs/matrix.md).

use std::path::{Path, PathBuf};

use matrix_sdk::ruma::{RoomId, UserId};
use serde::Deserialize;

use super::{ConfigError, ReactionMap, Secret, string_list};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatrixConfig {
    /// The homeserver's client API, e.g. `https://matrix.example.org`. Unset (with every
    /// other key): no Matrix transport.
    pub homeserver_url: Option<String>,
    /// The bot's account, `@execgate:example.org`.
    pub user_id: Option<String>,
    /// The bot's access token; or `password`, to log in once and keep the device.
    pub access_token: Option<Secret>,
    pub password: Option<Secret>,
    /// The one room requests go to and answers come from, `!opaque:example.org`.
    pub room_id: Option<String>,
    /// The Matrix users who may answer.
    #[serde(deserialize_with = "string_list")]
    pub owner_ids: Vec<String>,
    /// The client's state and end-to-end encryption keys. Default: `matrix/` beside the
    /// database.
    pub store_path: Option<PathBuf>,
    /// Reactions and what they mean, as `EMOJI=DECISION` items. Default: 👍 allow-once,
    /// ✅ allow-always, ❌ deny.
    #[serde(deserialize_with = "string_list")]
    pub reactions: Vec<String>,
}

impl MatrixConfig {
    /// True when any key is set: then every required one must be.
    pub fn is_configured(&self) -> bool {
        self.homeserver_url.is_some()
            || self.user_id.is_some()
            || self.access_token.is_some()
            || self.password.is_some()
            || self.room_id.is_some()
            || !self.owner_ids.is_empty()
    }

    /// The reaction map in force: the configured one, else Matrix's default.
    pub fn reaction_map(&self) -> Result<ReactionMap, ConfigError> {
        if self.reactions.is_empty() {
            return Ok(ReactionMap::matrix_default());
        }
        ReactionMap::from_items("matrix.reactions", &self.reactions)
            .map_err(|e| ConfigError::Invalid(e.0))
    }

    /// Where the client keeps its state: `store_path`, else `matrix/` beside `database`.
    pub fn store_dir(&self, database: &Path) -> PathBuf {
        match &self.store_path {
            Some(p) => p.clone(),
            None => database.parent().unwrap_or(Path::new(".")).join("matrix"),
        }
    }

    /// Checks what can be checked without talking to the homeserver.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |msg: String| Err(ConfigError::Invalid(msg));
        self.reaction_map()?;
        if !self.is_configured() {
            return Ok(());
        }
        super::whole_section(
            "Matrix",
            "matrix",
            &[
                ("matrix.homeserver_url", self.homeserver_url.is_none()),
                ("matrix.user_id", self.user_id.is_none()),
                (
                    "matrix.access_token (or matrix.password)",
                    self.access_token.is_none() && self.password.is_none(),
                ),
                ("matrix.room_id", self.room_id.is_none()),
                ("matrix.owner_ids", self.owner_ids.is_empty()),
            ],
        )?;
        let url = self.homeserver_url.as_deref().unwrap_or_default();
        match reqwest::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
            Ok(_) => {
                return bad(format!(
                    "`matrix.homeserver_url` {url:?} must be an http:// or https:// URL"
                ));
            }
            Err(e) => return bad(format!("`matrix.homeserver_url` {url:?}: {e}")),
        }
        let user = self.user_id.as_deref().unwrap_or_default();
        if let Err(e) = UserId::parse(user) {
            return bad(format!(
                "`matrix.user_id` {user:?} is not a Matrix user id like @execgate:example.org ({e})"
            ));
        }
        let room = self.room_id.as_deref().unwrap_or_default();
        if let Err(e) = RoomId::parse(room) {
            return bad(format!(
                "`matrix.room_id` {room:?} is not a room id like !abc:example.org ({e}); a room's id is in its settings (Advanced), not its #alias"
            ));
        }
        for owner in &self.owner_ids {
            if let Err(e) = UserId::parse(owner.as_str()) {
                return bad(format!(
                    "`matrix.owner_ids` holds {owner:?}, which is not a Matrix user id like @me:example.org ({e})"
                ));
            }
            if owner == user {
                return bad(format!(
                    "`matrix.owner_ids` holds the bot's own account {owner}: the bot cannot answer its own requests"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> MatrixConfig {
        MatrixConfig {
            homeserver_url: Some("http://127.0.0.1:8008".into()),
            user_id: Some("@bot:localhost".into()),
            access_token: Some(Secret("syt_secret".into())),
            password: None,
            room_id: Some("!abc:localhost".into()),
            owner_ids: vec!["@me:localhost".into()],
            store_path: None,
            reactions: vec![],
        }
    }

    fn error(c: &MatrixConfig) -> String {
        c.validate().unwrap_err().to_string()
    }

    #[test]
    fn unset_is_off_and_full_is_on() {
        let off = MatrixConfig::default();
        assert!(!off.is_configured());
        off.validate().unwrap();
        full().validate().unwrap();
        assert_eq!(
            full().store_dir(Path::new("/state/execgate/execgate.db")),
            PathBuf::from("/state/execgate/matrix")
        );
        let map = full().reaction_map().unwrap();
        assert!(map.decision("👌").is_none(), "not a Matrix default");
        assert!(map.decision("✅").is_some());
    }

    #[test]
    fn half_a_configuration_names_what_is_missing() {
        let c = MatrixConfig {
            room_id: Some("!abc:localhost".into()),
            ..MatrixConfig::default()
        };
        let e = error(&c);
        assert!(e.contains("matrix.homeserver_url"), "{e}");
        assert!(e.contains("matrix.owner_ids"), "{e}");
        assert!(!e.contains("matrix.room_id"), "{e}");
    }

    #[test]
    fn ids_and_urls_are_checked() {
        let mut c = full();
        c.user_id = Some("execgate".into());
        assert!(error(&c).contains("`matrix.user_id`"));
        let mut c = full();
        c.room_id = Some("#ops:localhost".into());
        assert!(error(&c).contains("#alias"));
        let mut c = full();
        c.owner_ids = vec!["me".into()];
        assert!(error(&c).contains("`matrix.owner_ids` holds \"me\""));
        let mut c = full();
        c.owner_ids = vec!["@bot:localhost".into()];
        assert!(error(&c).contains("own account"));
        let mut c = full();
        c.homeserver_url = Some("ftp://x".into());
        assert!(error(&c).contains("http:// or https://"));
        let mut c = full();
        c.reactions = vec!["🔥".into()];
        assert!(error(&c).contains("EMOJI=DECISION"));
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        let mut c = full();
        c.password = Some(Secret("hunter2".into()));
        let shown = format!("{c:?}");
        assert!(!shown.contains("syt_secret") && !shown.contains("hunter2"));
    }
}
