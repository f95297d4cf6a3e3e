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
    // Every tool call reaches the hook (reads included): the settings files, which can
    // be large, are read only for a name that could be one of the server's tools.
    let could_be = tool.starts_with(naming.prefix)
        && mcp::TOOLS
            .iter()
            .any(|t| tool.ends_with(&format!("{}{t}", naming.separator)));
    if !could_be {
        return false;
    }
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
            let env: Vec<&str> = s["env"]
                .as_object()
                .map(|e| e.keys().map(String::as_str).collect())
                .unwrap_or_default();
            s["command"]
                .as_str()
                .is_some_and(|c| runs_execgate_mcp(c, &args, &env))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// The global flags that take a value (`execgate --help`): they say which daemon.
const VALUED: [&str; 4] = ["--config", "--env-file", "--socket", "--admin-socket"];

/// Whether `command args…`, with the variables `env` names set, is execgate's MCP server
/// asking the daemon this hook asks:
/// - the command is this very binary (by path, or found on `PATH`), not a look-alike of
///   that name that a project or a download put somewhere;
/// - its first word past the global flags is `mcp`;
/// - its global flags, before the verb or after it, are among this hook's own, and the
///   server sets no `EXECGATE_*` variable: pointed at another socket or configuration,
///   it could ask a daemon of the agent's own making, which approves everything.
pub fn runs_execgate_mcp(command: &str, args: &[&str], env: &[&str]) -> bool {
    if env.iter().any(|k| k.starts_with("EXECGATE_")) || !is_this_binary(command) {
        return false;
    }
    let own: Vec<String> = std::env::args().collect();
    let own_flag = |flag: &str, value: &str| {
        own.windows(2).any(|w| w[0] == flag && w[1] == value)
            || own.iter().any(|w| *w == format!("{flag}={value}"))
    };
    // Global flags may come after the verb too (`mcp --socket S`): every one is checked.
    let mut verb = None;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if VALUED.contains(word) {
            match words.next() {
                Some(value) if own_flag(word, value) => {}
                _ => return false,
            }
        } else if let Some((flag, value)) = word.split_once('=')
            && VALUED.contains(&flag)
        {
            if !own_flag(flag, value) {
                return false;
            }
        } else if verb.is_none() {
            verb = Some(*word);
        }
    }
    verb == Some("mcp")
}

/// Whether `command`, as an agent would start it, is the binary running now.
fn is_this_binary(command: &str) -> bool {
    let Ok(me) = std::env::current_exe().and_then(|p| p.canonicalize()) else {
        return false;
    };
    let found = if command.contains('/') {
        // A relative path depends on where the agent starts it: not judged.
        Path::new(command)
            .is_absolute()
            .then(|| Path::new(command).to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join(command))
                .find(|p| p.is_file())
        })
    };
    found
        .and_then(|p| p.canonicalize().ok())
        .is_some_and(|p| p == me)
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
    fn only_this_binarys_mcp_verb_asking_this_daemon_is_its_server() {
        let me = std::env::current_exe().unwrap().canonicalize().unwrap();
        let me = me.to_str().unwrap();
        for (command, args, env, ours) in [
            (me, vec!["mcp"], vec![], true),
            (me, vec!["mcp", "--agent", "a"], vec!["PATH"], true),
            (me, vec!["serve"], vec![], false),
            (me, vec![], vec![], false),
            // Pointed at another daemon than this hook's (the test runs with no flags).
            (me, vec!["--socket", "/tmp/fake.sock", "mcp"], vec![], false),
            (me, vec!["--config=/tmp/c.toml", "mcp"], vec![], false),
            (me, vec!["--socket", "mcp"], vec![], false),
            (me, vec!["mcp"], vec!["EXECGATE_SOCKET"], false),
            (me, vec!["mcp", "--socket", "/tmp/fake.sock"], vec![], false),
            (me, vec!["mcp", "--env-file=/tmp/e"], vec![], false),
            // A look-alike by name, or something else that starts execgate.
            ("/usr/bin/execgate", vec!["mcp"], vec![], false),
            ("/usr/bin/npx", vec!["execgate", "mcp"], vec![], false),
            ("./execgate", vec!["mcp"], vec![], false),
        ] {
            assert_eq!(
                runs_execgate_mcp(command, &args, &env),
                ours,
                "{command} {args:?} {env:?}"
            );
        }
    }
}
