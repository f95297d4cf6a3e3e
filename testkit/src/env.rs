//! Where a test daemon keeps its files: every path of its configuration inside one
//! directory, given to it (and to the CLI) as environment variables.

use std::path::{Path, PathBuf};

use execgate::config::{Config, Overrides};

/// The environment that puts every path of a daemon inside `dir`; on PostgreSQL (see
/// [`on_postgres`]), its database is a fresh one on the test process's server.
pub fn env_for(dir: &Path, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let database = match on_postgres() {
        true => postgres_database(dir),
        false => dir.join("state/execgate.db").display().to_string(),
    };
    let mut env = vec![
        ("HOME".to_string(), dir.display().to_string()),
        (
            "EXECGATE_SOCKET".to_string(),
            dir.join("run/agent.sock").display().to_string(),
        ),
        ("EXECGATE_DATABASE".to_string(), database),
    ];
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    env
}

/// The daemon configuration `env` describes (as [`env_for`] makes it).
pub fn config_for(env: &[(String, String)]) -> Config {
    Config::load_from(&Overrides::default(), env).expect("test configuration is valid")
}

/// The uid the tests run as, which owns the daemons they start.
pub fn uid() -> u32 {
    execgate::sys::current_uid()
}

/// The database of the daemon whose paths are in `dir` (see [`env_for`]).
pub fn db_path(dir: &Path) -> PathBuf {
    dir.join("state/execgate.db")
}

/// The PostgreSQL database of the daemon whose paths are in `dir`: made on first use and
/// named in a file there, so that a daemon restarted in `dir` finds its rows again.
fn postgres_database(dir: &Path) -> String {
    let named = dir.join("postgres-url");
    if let Ok(url) = std::fs::read_to_string(&named) {
        return url;
    }
    let url = crate::postgres::shared().create_database();
    std::fs::write(&named, &url).expect("the test directory is writable");
    url
}

/// Whether this test process runs its daemons on PostgreSQL: a test binary whose name
/// begins with `on_postgres` (`tests/on_postgres.rs` runs the shared suites again that
/// way), or `EXECGATE_TEST_BACKEND=postgres`.
pub fn on_postgres() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        let named = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()))
            .is_some_and(|name| name.starts_with("on_postgres"));
        named || std::env::var("EXECGATE_TEST_BACKEND").is_ok_and(|b| b == "postgres")
    })
}

/// For a test of the SQLite file itself (its mode, its write lock): false, with a note,
/// when the daemons run on PostgreSQL, where the same check means nothing.
pub fn on_sqlite_file(test: &str) -> bool {
    if on_postgres() {
        eprintln!("{test}: checks the SQLite file itself; not run with the daemons on PostgreSQL");
        return false;
    }
    true
}
