//! `database`: a SQLite file, or a `postgres://` URL naming a PostgreSQL database shared
//! by the daemons of many hosts (docs/cluster.md).

use std::str::FromStr;

use sqlx_postgres::PgConnectOptions;

/// A `postgres://` URL. It may hold a password, so it is never logged or shown whole:
/// `Debug` and [`PostgresUrl::redacted`] leave the password out.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(String);

impl PostgresUrl {
    /// A `postgres://` or `postgresql://` URL that sqlx can connect with.
    pub fn parse(text: &str) -> Result<PostgresUrl, String> {
        if !PostgresUrl::looks_like(text) {
            return Err("a PostgreSQL database is named by a postgres:// URL".into());
        }
        // sqlx's own message may quote the URL, password and all: not repeated.
        PgConnectOptions::from_str(text).map_err(|_| {
            "not a PostgreSQL URL sqlx can use (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?host=/socket/dir])".to_string()
        })?;
        Ok(PostgresUrl(text.to_string()))
    }

    /// Whether `text` names a PostgreSQL database rather than a SQLite file.
    pub fn looks_like(text: &str) -> bool {
        text.starts_with("postgres://") || text.starts_with("postgresql://")
    }

    /// The URL with any password replaced by `***`: in its user part, and in a
    /// `password=` parameter.
    pub fn redacted(&self) -> String {
        let Some((scheme, rest)) = self.0.split_once("://") else {
            return "postgres://***".into();
        };
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let authority = match authority.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{user}:***@{host}"),
                None => authority.to_string(),
            },
            None => authority.to_string(),
        };
        let tail = match tail.split_once('?') {
            Some((path, query)) => {
                let params: Vec<String> = query
                    .split('&')
                    .map(|p| match p.split_once('=') {
                        Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                        _ => p.to_string(),
                    })
                    .collect();
                format!("{path}?{}", params.join("&"))
            }
            None => tail.to_string(),
        };
        format!("{scheme}://{authority}{tail}")
    }

    /// The URL whole, password and all: for connecting, never for a log.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl std::fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_shown() {
        let url =
            PostgresUrl::parse("postgres://execgate:s3cret@db.internal:5433/execgate").unwrap();
        for shown in [url.redacted(), format!("{url:?}"), url.to_string()] {
            assert!(!shown.contains("s3cret"), "{shown}");
            assert_eq!(shown, "postgres://execgate:***@db.internal:5433/execgate");
        }
        let socket =
            PostgresUrl::parse("postgresql://execgate@localhost/execgate?host=/run/postgresql")
                .unwrap();
        assert_eq!(
            socket.redacted(),
            "postgresql://execgate@localhost/execgate?host=/run/postgresql"
        );
        let query =
            PostgresUrl::parse("postgres://execgate@db/execgate?password=s3cret&port=5").unwrap();
        assert_eq!(
            query.redacted(),
            "postgres://execgate@db/execgate?password=***&port=5"
        );
        assert!(PostgresUrl::parse("mysql://x").is_err());
        assert!(!PostgresUrl::looks_like("/var/lib/execgate/execgate.db"));
    }
}
