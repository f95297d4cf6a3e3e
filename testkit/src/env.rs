//! Where a test daemon keeps its files: every path of its configuration inside one
//! directory, given to it (and to the CLI) as environment variables.

use std::path::{Path, PathBuf};

use execgate::config::{Config, Overrides};

/// The environment that puts every path of a daemon inside `dir`.
pub fn env_for(dir: &Path, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = vec![
        ("HOME".to_string(), dir.display().to_string()),
        (
            "EXECGATE_SOCKET".to_string(),
            dir.join("run/agent.sock").display().to_string(),
        ),
        (
            "EXECGATE_DATABASE".to_string(),
            dir.join("state/execgate.db").display().to_string(),
        ),
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
