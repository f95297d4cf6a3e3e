//! The bot's session: its device is kept across restarts, so that the keys of an
//! encrypted room stay valid and the owner's devices keep trusting the same one.
//!
//! The store directory (mode 0700) holds the SDK's SQLite state and crypto store (`sdk/`)
//! and `session.json` (mode 0600): which account and device that store belongs to, and,
//! when the bot logs in with `matrix.password`, the access token of that device. With
//! `matrix.access_token`, the homeserver says which device the token is (`whoami`). A
//! store that belongs to another device than the session in use is set aside, never
//! mixed with it: the SDK would refuse it, and keys must not cross devices.

use std::path::{Path, PathBuf};
use std::time::Duration;

use matrix_sdk::authentication::matrix::MatrixSession;
use matrix_sdk::config::RequestConfig;
use matrix_sdk::ruma::api::error::ErrorKind;
use matrix_sdk::ruma::{OwnedDeviceId, OwnedUserId};
use matrix_sdk::store::RoomLoadSettings;
use matrix_sdk::{Client, SessionMeta, SessionTokens};

use super::Context;
use crate::config::Secret;
use crate::store::create_private_dir;

/// Every call to the homeserver: its own timeout (a long-poll adds its wait to it), and a
/// few quick retries by the SDK, which honour `retry_after` on rate limits.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const SDK_RETRIES: usize = 3;
/// The device's name, as the owner's client lists it.
const DEVICE_NAME: &str = "execgate";

/// Why a session ended, or could not begin.
#[derive(Debug)]
pub enum Ended {
    Shutdown,
    /// The homeserver could not be reached or failed: try again with backoff.
    Unreachable(String),
    /// The homeserver refused the account, or the store cannot be used: the owner must
    /// act; tried again only after a long wait.
    Refused(String),
    /// The session was replaced (a new login): open it again at once.
    Reopen,
}

/// Opens the session: the saved device when it is still the account's, else a new login
/// (with a password) or the token's device (with a token).
pub async fn open(ctx: &Context) -> Result<Client, Ended> {
    let account = &ctx.account;
    let store = &account.store;
    create_private_dir(store).map_err(|e| {
        Ended::Refused(format!(
            "cannot create matrix.store_path {}: {e}",
            store.display()
        ))
    })?;
    let saved = read_saved(store);
    let session = match (&account.access_token, &account.password) {
        (Some(token), _) => {
            let (user, device) = whoami(&account.homeserver, token).await?;
            if user != account.user {
                return Err(Ended::Refused(format!(
                    "matrix.access_token belongs to {user}, not to matrix.user_id {}",
                    account.user
                )));
            }
            Some(MatrixSession {
                meta: SessionMeta {
                    user_id: user,
                    device_id: device,
                },
                tokens: SessionTokens {
                    access_token: token.expose().to_string(),
                    refresh_token: None,
                },
            })
        }
        _ => saved
            .clone()
            .filter(|s| s.meta.user_id == account.user && !s.tokens.access_token.is_empty()),
    };
    // The SDK's store belongs to one device: keep it only for that device.
    let keep = match (&saved, &session) {
        (Some(saved), Some(session)) => saved.meta == session.meta,
        // A new login with the password makes a new device.
        _ => false,
    };
    if !keep {
        set_aside(store)?;
    }
    let client = Client::builder()
        .homeserver_url(&account.homeserver)
        .sqlite_store(store.join("sdk"), None)
        .request_config(
            RequestConfig::new()
                .timeout(REQUEST_TIMEOUT)
                .retry_limit(SDK_RETRIES),
        )
        .build()
        .await
        .map_err(|e| {
            Ended::Refused(format!(
                "cannot open the Matrix store in {}: {e}",
                store.display()
            ))
        })?;
    let session = match session {
        Some(session) => {
            if let Err(e) = client
                .matrix_auth()
                .restore_session(session.clone(), RoomLoadSettings::default())
                .await
            {
                // A store the SDK will not take (another device's, or damaged) is set
                // aside; the next attempt starts clean.
                tracing::warn!(error = %e, "the Matrix store does not fit the session; setting it aside");
                drop(client);
                std::fs::remove_file(store.join(SESSION_FILE)).ok();
                set_aside(store)?;
                return Err(Ended::Reopen);
            }
            session
        }
        None => login(ctx, &client).await?,
    };
    // A configured token stays in the configuration only: the file keeps the device.
    let mut kept = session.clone();
    if account.access_token.is_some() {
        kept.tokens.access_token.clear();
    }
    write_saved(store, &kept)?;
    tracing::info!(user = %session.meta.user_id, device = %session.meta.device_id, "Matrix session open");
    Ok(client)
}

/// Logs in with the password, as a new device.
async fn login(ctx: &Context, client: &Client) -> Result<MatrixSession, Ended> {
    let account = &ctx.account;
    let Some(password) = &account.password else {
        return Err(Ended::Refused(
            "neither matrix.access_token nor matrix.password is set".into(),
        ));
    };
    client
        .matrix_auth()
        .login_username(&account.user, password.expose())
        .initial_device_display_name(DEVICE_NAME)
        .send()
        .await
        .map_err(|e| match e.client_api_error_kind() {
            Some(ErrorKind::Forbidden | ErrorKind::UserDeactivated) => Ended::Refused(format!(
                "matrix.password was rejected for {} ({e})",
                account.user
            )),
            _ => Ended::Unreachable(format!("logging in: {e}")),
        })?;
    client
        .matrix_auth()
        .session()
        .ok_or_else(|| Ended::Unreachable("logged in, but the SDK kept no session".into()))
}

/// What a failed call means for the session.
pub fn ended(ctx: &Context, e: &matrix_sdk::Error) -> Ended {
    match e.client_api_error_kind() {
        // With a configured token, the token is what a new session would use again.
        Some(ErrorKind::UnknownToken(_))
            if ctx.account.password.is_some() && ctx.account.access_token.is_none() =>
        {
            tracing::warn!(
                "the homeserver no longer accepts the bot's access token (M_UNKNOWN_TOKEN); logging in again with matrix.password"
            );
            std::fs::remove_file(ctx.account.store.join(SESSION_FILE)).ok();
            Ended::Reopen
        }
        Some(ErrorKind::UnknownToken(_)) => Ended::Refused(
            "matrix.access_token was rejected (M_UNKNOWN_TOKEN): it was revoked or its device logged out. Put a new token in matrix.access_token and restart execgate"
                .into(),
        ),
        Some(ErrorKind::UserDeactivated) => {
            Ended::Refused("the bot's account was deactivated (M_USER_DEACTIVATED)".into())
        }
        _ => Ended::Unreachable(e.to_string()),
    }
}

/// Which account and device `token` is, asked of the homeserver.
async fn whoami(homeserver: &str, token: &Secret) -> Result<(OwnedUserId, OwnedDeviceId), Ended> {
    #[derive(serde::Deserialize)]
    struct WhoAmI {
        user_id: OwnedUserId,
        device_id: Option<OwnedDeviceId>,
    }
    let url = format!(
        "{}/_matrix/client/v3/account/whoami",
        homeserver.trim_end_matches('/')
    );
    let answer = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| Ended::Unreachable(format!("cannot build an HTTP client: {e}")))?
        .get(&url)
        .bearer_auth(token.expose())
        .send()
        .await
        .map_err(|e| Ended::Unreachable(format!("cannot reach {url}: {e}")))?;
    let status = answer.status();
    let body = answer.text().await.unwrap_or_default();
    if status == reqwest::StatusCode::UNAUTHORIZED || body.contains("M_UNKNOWN_TOKEN") {
        return Err(Ended::Refused(
            "matrix.access_token was rejected (M_UNKNOWN_TOKEN): check the token, or log the bot in again and put the new one in matrix.access_token".into(),
        ));
    }
    if !status.is_success() {
        return Err(Ended::Unreachable(format!(
            "{url} answered {status}: {}",
            crate::text::clip_chars(&body, 200)
        )));
    }
    let who: WhoAmI = serde_json::from_str(&body)
        .map_err(|e| Ended::Unreachable(format!("{url} answered something unreadable: {e}")))?;
    let device = who.device_id.ok_or_else(|| {
        Ended::Refused(
            "matrix.access_token has no device (an appservice token?): use a token from a login, or matrix.password".into(),
        )
    })?;
    Ok((who.user_id, device))
}

const SESSION_FILE: &str = "session.json";

/// The session saved by the last run, if it can be read.
fn read_saved(store: &Path) -> Option<MatrixSession> {
    let path = store.join(SESSION_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read the saved Matrix session; starting a new one");
            return None;
        }
    };
    match serde_json::from_str(&text) {
        Ok(session) => Some(session),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "the saved Matrix session is unreadable; starting a new one");
            None
        }
    }
}

/// Saves the session (mode 0600, written aside and renamed into place).
fn write_saved(store: &Path, session: &MatrixSession) -> Result<(), Ended> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = store.join(SESSION_FILE);
    let partial = store.join(".session.json.partial");
    let text = serde_json::to_vec(session).map_err(|e| Ended::Refused(e.to_string()))?;
    let written = (|| {
        let _ = std::fs::remove_file(&partial);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&partial)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&partial, &path)
    })();
    written.map_err(|e| {
        Ended::Refused(format!(
            "cannot save the Matrix session in {}: {e}",
            path.display()
        ))
    })
}

/// Moves the SDK's store out of the way (kept, not deleted: it holds keys an owner may
/// still want), so the next client starts a clean one.
fn set_aside(store: &Path) -> Result<(), Ended> {
    let sdk = store.join("sdk");
    if !sdk.exists() {
        return Ok(());
    }
    let aside: PathBuf = store.join(format!(
        "sdk.set-aside-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%S%.3f")
    ));
    tracing::warn!(
        from = %sdk.display(),
        to = %aside.display(),
        "the Matrix store belongs to another device than the session in use; setting it aside"
    );
    std::fs::rename(&sdk, &aside).map_err(|e| {
        Ended::Refused(format!(
            "cannot set aside the Matrix store {}: {e}",
            sdk.display()
        ))
    })
}
