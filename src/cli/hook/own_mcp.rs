//! execgate's own MCP server, seen from a hook. An agent whose hook sees its MCP tool
//! calls (Codex and Copilot CLI always, and every agent whose entry matches every tool)
//! would have the owner asked twice for one call to `execgate mcp`: once as the hook's
//! tool request, once as the request the server itself makes. The server asks for every
//! call it runs, so the hook lets the calls to execgate's own servers through unasked.
//!
//! A server is execgate's by what it runs — an execgate binary whose verb is `mcp` — as
//! the agent's own MCP settings say, never by its name, which is the user's choice. The
//! settings are the agent's guard files: an agent cannot point a server elsewhere without
//! a write the owner is asked about. How each agent names MCP tools and where it keeps
//! its servers is in its own file (`agents::*`, its [`Mcp`]); what they share is here.

use std::path::Path;

use serde_json::Value;

use crate::cli::mcp;

/// An agent's MCP tools, as its hook sees them.
pub struct Mcp {
    /// A tool's name is `prefix`, the server's name, `separator`, the tool's own name.
    pub prefix: &'static str,
    pub separator: &'static str,
    /// The servers in its settings that run `execgate mcp`, for an agent whose home is
    /// `home` working in `cwd`.
    pub own_servers: fn(home: &Path, cwd: Option<&Path>) -> Vec<String>,
}

/// Larger than this, a file is not MCP settings, and is not read.
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Whether `tool`, as an agent whose MCP tools are named as `naming` says names it to
/// its hook, is a tool of an execgate MCP server in its settings (`home` is the agent's
/// home, `cwd` where it works).
pub fn is_own_tool(naming: &Mcp, tool: &str, home: &Path, cwd: Option<&Path>) -> bool {
    (naming.own_servers)(home, cwd).iter().any(|server| {
        tool.strip_prefix(naming.prefix)
            .and_then(|t| t.strip_prefix(server.as_str()))
            .and_then(|t| t.strip_prefix(naming.separator))
            .is_some_and(|t| mcp::TOOLS.contains(&t))
    })
}

/// The servers of an `mcpServers` object that run `execgate mcp`.
pub fn json_servers(servers: &Value) -> Vec<String> {
    let Some(servers) = servers.as_object() else {
        return Vec::new();
    };
    servers
        .iter()
        .filter(|(_, s)| {
            let args: Vec<&str> = s["args"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            s["command"]
                .as_str()
                .is_some_and(|c| runs_execgate_mcp(c, &args))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Whether `command args…` is execgate's MCP server: an execgate binary (by file name,
/// or this very binary) whose first word past the global flags is `mcp`.
pub fn runs_execgate_mcp(command: &str, args: &[&str]) -> bool {
    let path = Path::new(command);
    let ours = path.file_name().is_some_and(|n| n == "execgate")
        || std::env::current_exe()
            .ok()
            .zip(path.canonicalize().ok())
            .is_some_and(|(me, it)| me == it);
    if !ours {
        return false;
    }
    // The global flags that take a value (`execgate --help`).
    const VALUED: [&str; 4] = ["--config", "--env-file", "--socket", "--admin-socket"];
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if VALUED.contains(word) {
            words.next();
        } else if word.starts_with("--") && word.contains('=') {
            continue;
        } else {
            return *word == "mcp";
        }
    }
    false
}

/// `file` as JSON, if it is a regular file of settings' size that parses.
pub fn json(file: &Path) -> Option<Value> {
    read(file).and_then(|text| serde_json::from_str(&text).ok())
}

/// `file`'s text, if it is a regular file no larger than settings are (a FIFO or a
/// device is not opened: the hook must not hang).
pub fn read(file: &Path) -> Option<String> {
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    std::fs::read_to_string(file).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_execgates_mcp_verb_is_its_server() {
        for (command, args, ours) in [
            ("/usr/bin/execgate", vec!["mcp"], true),
            ("/opt/x/execgate", vec!["--socket", "/s", "mcp"], true),
            ("execgate", vec!["--config=/c", "mcp", "--agent", "a"], true),
            ("/usr/bin/execgate", vec!["serve"], false),
            ("/usr/bin/execgate", vec!["--socket", "mcp"], false),
            ("/usr/bin/execgate", vec![], false),
            ("/usr/bin/npx", vec!["execgate", "mcp"], false),
            ("/usr/bin/execgate-shim", vec!["mcp"], false),
        ] {
            assert_eq!(
                runs_execgate_mcp(command, &args),
                ours,
                "{command} {args:?}"
            );
        }
    }
}
