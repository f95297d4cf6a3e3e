//! Outside programs the tests drive, installed on first use by `.ci/peers` (pinned, from
//! the package registries) into `peers/` beside the build (`target/peers`), so that a
//! plain `cargo test` on a fresh machine with the registries in reach installs them
//! itself. A peer that cannot be installed fails the test that needs it, saying why:
//! such a test never passes without its peer. PostgreSQL's server is a peer too, found
//! where the system keeps it before anything is installed.

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

/// Claude Code's launcher (`claude` with its pinned Node.js first in PATH).
pub fn claude_code() -> &'static Path {
    static AGENT: OnceLock<PathBuf> = OnceLock::new();
    AGENT.get_or_init(|| install("claude-code"))
}

/// OpenAI Codex CLI's launcher (`codex`, with its pinned Node.js).
pub fn codex() -> &'static Path {
    static AGENT: OnceLock<PathBuf> = OnceLock::new();
    AGENT.get_or_init(|| install("codex"))
}

/// Gemini CLI's launcher (`gemini`, with its pinned Node.js).
pub fn gemini() -> &'static Path {
    static AGENT: OnceLock<PathBuf> = OnceLock::new();
    AGENT.get_or_init(|| install("gemini"))
}

/// GitHub Copilot CLI's launcher (`copilot`, with its pinned Node.js).
pub fn copilot() -> &'static Path {
    static AGENT: OnceLock<PathBuf> = OnceLock::new();
    AGENT.get_or_init(|| install("copilot"))
}

/// Debian's Prometheus server (`/usr/bin/prometheus`).
pub fn prometheus() -> &'static Path {
    static SERVER: OnceLock<PathBuf> = OnceLock::new();
    SERVER.get_or_init(|| install("prometheus"))
}

/// The directory of PostgreSQL's server programs (`initdb`, `postgres`, `pg_ctl`, `psql`):
/// the newest major version under `/usr/lib/postgresql/` (Debian's layout), else the
/// first `PATH` entry that has them all. Looked for here first so that a test does not
/// wait on `.ci/peers`' lock while another process installs a peer; when there is none,
/// `.ci/peers postgresql` installs Debian's (apt, as root) or says why it cannot, and the
/// test fails: a test that needs the server never passes without one.
pub fn postgresql_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = find_postgresql_bin() {
            return bin;
        }
        match run_script("postgresql") {
            Ok(bin) if has_postgresql(&bin) => bin,
            Ok(bin) => panic!(
                "PostgreSQL server binaries not found (`.ci/peers postgresql` printed {}, which lacks them)",
                bin.display()
            ),
            Err(why) => panic!(
                "PostgreSQL server binaries not found (apt-get install postgresql, or run .ci/peers postgresql): {why}"
            ),
        }
    })
}

const POSTGRESQL_PROGRAMS: [&str; 4] = ["initdb", "postgres", "pg_ctl", "psql"];

fn has_postgresql(dir: &Path) -> bool {
    POSTGRESQL_PROGRAMS.iter().all(|p| dir.join(p).is_file())
}

fn find_postgresql_bin() -> Option<PathBuf> {
    // Major versions are `15`, `16`, … (`9.6` before 10): compared as numbers.
    let version = |dir: &Path| -> Vec<u32> {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        name.split('.').map(|n| n.parse().unwrap_or(0)).collect()
    };
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    versions.sort_by_key(|dir| std::cmp::Reverse(version(dir)));
    let path = std::env::var_os("PATH").unwrap_or_default();
    versions
        .into_iter()
        .map(|dir| dir.join("bin"))
        .chain(std::env::split_paths(&path))
        .find(|dir| has_postgresql(dir))
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

/// Installs `peer` (or finds it installed) and returns the program path the script prints.
fn install(peer: &str) -> PathBuf {
    let path = run_script(peer).unwrap_or_else(|why| {
        panic!(
            "the test needs {peer}, which could not be installed ({why}; `.ci/peers {peer}` installs it from the package registries)"
        )
    });
    assert!(
        path.is_file(),
        "`.ci/peers {peer}` printed no program path: {}",
        path.display()
    );
    path
}

/// Runs `.ci/peers peer` and returns the last line it prints, or why it failed.
fn run_script(peer: &str) -> Result<PathBuf, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/peers");
    let out = Command::new(&script)
        .arg(peer)
        .env("EXECGATE_PEERS", dir())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{}:\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(PathBuf::from(
        stdout.lines().last().unwrap_or_default().trim(),
    ))
}
