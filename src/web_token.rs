//! The approvals page's token: 256 random bits, made on the page's first start and kept
//! in `web.token` (mode 0600) beside the database, so that the page's URL survives
//! restarts. Whoever holds it decides requests, so the daemon uses the file only when
//! nobody but the daemon's own user could have read or written it; `execgate web url`
//! reads it to print the URL.
//!
//! Every check is made on the opened file (`fstat` on its descriptor; a symlink is not
//! followed), so swapping the path after the check changes nothing.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Random bytes in a token: 256 bits.
const BYTES: usize = 32;

/// A token, as 64 lowercase hex digits. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// The token itself, for the URL that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `presented` is this token, in time that does not depend on where the
    /// two first differ (the length of every token is the same, and public).
    pub fn matches(&self, presented: &[u8]) -> bool {
        let ours = self.0.as_bytes();
        if ours.len() != presented.len() {
            return false;
        }
        let diff = ours
            .iter()
            .zip(presented)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b));
        std::hint::black_box(diff) == 0
    }

    fn parse(text: &str) -> Option<Token> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let hex = text.len() == 2 * BYTES
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        hex.then(|| Token(text.to_string()))
    }

    fn random() -> Result<Token, rand::rand_core::OsError> {
        use rand::TryRngCore;
        let mut bytes = [0u8; BYTES];
        rand::rngs::OsRng.try_fill_bytes(&mut bytes)?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// The page's address with the token in its fragment: a browser never sends a fragment
/// to the server, nor in a `Referer`, and the page moves it out of the address bar.
pub fn url(addr: SocketAddr, token: &Token) -> String {
    format!("http://{addr}/#token={}", token.expose())
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "there is no approvals page token at {}: start `execgate serve --web` (or set web.listen) first",
        .0.display()
    )]
    Missing(PathBuf),
    /// Someone else could have read or chosen it, or it is not a token.
    #[error("the approvals page token {}: {why}", path.display())]
    Unusable { path: PathBuf, why: String },
    #[error("the approvals page token {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The token in `path`, made there first when there is none (the daemon's web front).
/// The file must be a regular file owned by this process's effective uid, with no
/// permission for its group or others.
pub fn load_or_create(path: &Path) -> Result<Token, TokenError> {
    let euid = crate::sys::effective_uid();
    match read_checked(path, |owner| owner == euid) {
        Err(TokenError::Missing(_)) => {}
        found => return found,
    }
    create(path)?;
    read_checked(path, |owner| owner == euid)
}

/// The token in `path`, for `execgate web url`: as [`load_or_create`] checks it, except
/// that root may read the token of a daemon that runs as another user.
pub fn read(path: &Path) -> Result<Token, TokenError> {
    let euid = crate::sys::effective_uid();
    read_checked(path, |owner| owner == euid || euid == 0)
}

fn read_checked(path: &Path, owner_ok: impl Fn(u32) -> bool) -> Result<Token, TokenError> {
    let io = |source: std::io::Error| TokenError::Io {
        path: path.into(),
        source,
    };
    let unusable = |why: String| TokenError::Unusable {
        path: path.into(),
        why,
    };
    // O_NOFOLLOW: a symlink put in its place does not lead the daemon to a file someone
    // else chose. O_NONBLOCK: a FIFO does not hang the start (refused below).
    let mut file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(TokenError::Missing(path.into()));
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(unusable(
                "is a symbolic link; remove it (a new token is made at the next start)".into(),
            ));
        }
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(unusable("is not a regular file".into()));
    }
    if !owner_ok(meta.uid()) {
        return Err(unusable(format!(
            "is owned by uid {}, not by execgate's user (uid {}): its owner may know it. Remove it (a new token is made at the next start)",
            meta.uid(),
            crate::sys::effective_uid()
        )));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(unusable(format!(
            "has mode {mode:04o}: its group or others may read it. Fix: chmod 600 {} (and remove it if someone may have read it: a new token is made at the next start)",
            path.display()
        )));
    }
    let mut text = String::new();
    (&mut file)
        .take(4 * BYTES as u64)
        .read_to_string(&mut text)
        .map_err(io)?;
    Token::parse(&text).ok_or_else(|| {
        unusable(
            "does not hold a token (64 hex digits); remove it (a new token is made at the next start)"
                .into(),
        )
    })
}

/// Writes a new token to `path`, whole or not at all: it is written to a private
/// temporary file first, then linked into place, which fails rather than replace a
/// file that appeared meanwhile.
fn create(path: &Path) -> Result<(), TokenError> {
    let io = |source: std::io::Error| TokenError::Io {
        path: path.into(),
        source,
    };
    let token = Token::random().map_err(|e| TokenError::Unusable {
        path: path.into(),
        why: format!("cannot make one: the system's random source failed ({e})"),
    })?;
    let tmp = path.with_extension(format!("token.{}.tmp", std::process::id()));
    // A temporary file left by a crash of this pid's predecessor is ours to replace.
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut file: File = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        file.write_all(format!("{}\n", token.expose()).as_bytes())?;
        file.sync_all()?;
        match std::fs::hard_link(&tmp, path) {
            // Made meanwhile: the file in place is the one used (and checked).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            other => other,
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    written.map_err(io)?;
    tracing::info!(path = %path.display(), "made a new approvals page token");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn made_once_private_then_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.token");
        assert!(matches!(read(&path), Err(TokenError::Missing(_))));
        let first = load_or_create(&path).unwrap();
        assert_eq!(first.expose().len(), 64);
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(load_or_create(&path).unwrap(), first, "reused, not remade");
        assert_eq!(read(&path).unwrap(), first);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
        let other = load_or_create(&tempfile::tempdir().unwrap().path().join("web.token")).unwrap();
        assert_ne!(other, first);
        assert!(!format!("{first:?}").contains(first.expose()));
        assert_eq!(
            url("127.0.0.1:8787".parse().unwrap(), &first),
            format!("http://127.0.0.1:8787/#token={}", first.expose())
        );
    }

    #[test]
    fn a_file_others_may_read_or_that_holds_no_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.token");
        let token = load_or_create(&path).unwrap();
        for mode in [0o640, 0o604, 0o620, 0o660] {
            chmod(&path, mode);
            let e = load_or_create(&path).unwrap_err().to_string();
            assert!(e.contains(&format!("mode {mode:04o}")), "{e}");
            assert!(e.contains("chmod 600"), "{e}");
            assert!(read(&path).is_err());
        }
        chmod(&path, 0o600);
        assert_eq!(load_or_create(&path).unwrap(), token);

        for text in ["", "abc\n", &"G".repeat(64), &"a".repeat(65)] {
            std::fs::write(&path, text).unwrap();
            let e = load_or_create(&path).unwrap_err().to_string();
            assert!(e.contains("does not hold a token"), "{text:?}: {e}");
        }

        std::fs::remove_file(&path).unwrap();
        let elsewhere = dir.path().join("chosen");
        std::fs::write(&elsewhere, format!("{}\n", "a".repeat(64))).unwrap();
        chmod(&elsewhere, 0o600);
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        let e = load_or_create(&path).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
    }

    #[test]
    fn a_file_another_user_owns_is_refused() {
        if crate::sys::effective_uid() != 0 {
            eprintln!("skipped: needs root to give the file to another user");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.token");
        load_or_create(&path).unwrap();
        std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
        let e = load_or_create(&path).unwrap_err().to_string();
        assert!(e.contains("owned by uid 65534"), "{e}");
        // Root's `web url` may read another user's daemon's token.
        assert!(read(&path).is_ok());
    }

    #[test]
    fn only_the_token_itself_matches() {
        let token = Token::parse(&"ab".repeat(32)).unwrap();
        assert!(token.matches("ab".repeat(32).as_bytes()));
        assert!(!token.matches("ab".repeat(31).as_bytes()));
        assert!(!token.matches(format!("{}ac", "ab".repeat(31)).as_bytes()));
        assert!(!token.matches(format!("{}x", "ab".repeat(32)).as_bytes()));
        assert!(!token.matches(b""));
    }
}
