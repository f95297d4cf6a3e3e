//! The real `execgate` binary, run as a user runs the CLI.

use std::process::Output;
use std::time::Duration;

use crate::binary::execgate_binary;

/// Runs `execgate ARGS` with only `PATH` and `env` in its environment, in the directory
/// `HOME` names there (`/` without one), for at most 30 s.
pub async fn run_cli(env: &[(String, String)], args: &[&str]) -> Output {
    let mut cmd = tokio::process::Command::new(execgate_binary());
    // Run where HOME points (a temp dir), as a user runs the CLI in a directory of theirs.
    let home = env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/".into());
    cmd.current_dir(home)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    tokio::time::timeout(Duration::from_secs(30), cmd.output())
        .await
        .expect("cli finishes")
        .unwrap()
}

/// A finished command's standard output, as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A finished command's standard error, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
