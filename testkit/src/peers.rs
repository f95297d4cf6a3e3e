//! Outside programs the tests drive, installed on first use by `.ci/peers` (pinned, from
//! the package registries) into `peers/` beside the build (`target/peers`), so that a
//! plain `cargo test` on a fresh machine with the registries in reach installs them
//! itself. A peer that cannot be installed fails the test that needs it, saying why:
//! such a test never passes without its peer.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The official Python MCP SDK's interpreter: a venv's `python` with `mcp` importable.
pub fn mcp_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| install("mcp-python"))
}

/// The MCP Inspector's launcher (`mcp-inspector --cli …`), with its pinned Node.js.
pub fn mcp_inspector() -> &'static Path {
    static INSPECTOR: OnceLock<PathBuf> = OnceLock::new();
    INSPECTOR.get_or_init(|| install("mcp-inspector"))
}

/// Synapse's venv `python` (`python -m synapse.app.homeserver`).
pub fn synapse_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| install("synapse"))
}

/// Debian's `chromedriver` (Chromium itself is `/usr/bin/chromium`, beside it).
pub fn chromedriver() -> &'static Path {
    static DRIVER: OnceLock<PathBuf> = OnceLock::new();
    DRIVER.get_or_init(|| install("chromium"))
}

/// `target/peers`: beside the profile directories of the build the tests run from. Found
/// from the running test or bench executable (`target/<profile>/deps/…`), not from the
/// `execgate` binary: cargo builds that only for the execgate package's own tests, and
/// this crate's tests need peers too.
fn dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the running test knows its own path");
    let mut dir = exe.parent().expect("the executable is in a directory");
    if dir.file_name().is_some_and(|d| d == "deps") {
        dir = dir.parent().expect("deps/ is in a profile directory");
    }
    dir.parent()
        .map_or_else(|| dir.join("peers"), |target| target.join("peers"))
}

/// Installs `peer` (or finds it installed) and returns the path the script prints.
fn install(peer: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/peers");
    let out = Command::new(&script)
        .arg(peer)
        .env("EXECGATE_PEERS", dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "the test needs {peer}, which could not be installed ({}; `.ci/peers {peer}` installs it from the package registries):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let path = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
    assert!(
        path.is_file(),
        "`.ci/peers {peer}` printed no program path: {stdout:?}"
    );
    path
}
