//! execgate's own MCP server, seen from a hook. An agent whose hook sees its MCP tool
//! calls (Codex and Copilot CLI always, and every agent whose entry matches every tool)
//! would have the owner asked twice for one call to `execgate mcp`: once as the hook's
//! tool request, once as the request the server itself makes. The server asks for every
//! call it runs, so the hook lets the calls to execgate's own servers through unasked.
//!
//! A server is execgate's by what it runs — an execgate binary whose verb is `mcp` — as
//! the agent's own MCP settings say, never by its name, which is the user's choice. The
//! settings are the agent's guard files: an agent cannot point a server elsewhere without
//! a write the owner is asked about.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::HookAgent;
use crate::cli::mcp;

/// Larger than this, a file is not MCP settings, and is not read.
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Whether `tool`, as `agent` names it to its hook, is a tool of an execgate MCP server
/// in the agent's settings (`home` is the agent's home, `cwd` where it works).
pub fn is_own_tool(agent: HookAgent, tool: &str, home: &Path, cwd: Option<&Path>) -> bool {
    let servers = servers(agent, home, cwd);
    servers.iter().any(|server| {
        let rest = match agent {
            HookAgent::ClaudeCode | HookAgent::Codex => tool
                .strip_prefix("mcp__")
                .and_then(|t| t.strip_prefix(server.as_str()))
                .and_then(|t| t.strip_prefix("__")),
            HookAgent::Gemini => tool
                .strip_prefix("mcp_")
                .and_then(|t| t.strip_prefix(server.as_str()))
                .and_then(|t| t.strip_prefix('_')),
            HookAgent::Copilot => tool
                .strip_prefix(server.as_str())
                .and_then(|t| t.strip_prefix('-')),
            HookAgent::Cursor => None,
        };
        rest.is_some_and(|t| mcp::TOOLS.contains(&t))
    })
}

/// The names of the MCP servers in `agent`'s settings that run `execgate mcp`.
fn servers(agent: HookAgent, home: &Path, cwd: Option<&Path>) -> Vec<String> {
    let env_dir = |var: &str, default: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map_or_else(|| home.join(default), PathBuf::from)
    };
    let mut found = Vec::new();
    match agent {
        HookAgent::ClaudeCode => {
            for file in [
                env_dir("CLAUDE_CONFIG_DIR", "").join(".claude.json"),
                home.join(".claude.json"),
            ] {
                let Some(v) = json(&file) else { continue };
                found.extend(json_servers(&v["mcpServers"]));
                // Local scope: the servers `claude mcp add` keeps for one project.
                if let Some(cwd) = cwd.and_then(Path::to_str) {
                    found.extend(json_servers(&v["projects"][cwd]["mcpServers"]));
                }
            }
            if let Some(v) = cwd.and_then(|c| json(&c.join(".mcp.json"))) {
                found.extend(json_servers(&v["mcpServers"]));
            }
        }
        HookAgent::Gemini => {
            let user = json(&home.join(".gemini/settings.json"));
            let project = cwd.and_then(|c| json(&c.join(".gemini/settings.json")));
            for v in user.iter().chain(project.iter()) {
                found.extend(json_servers(&v["mcpServers"]));
            }
        }
        HookAgent::Copilot => {
            if let Some(v) = json(&env_dir("COPILOT_HOME", ".copilot").join("mcp-config.json")) {
                found.extend(json_servers(&v["mcpServers"]));
            }
        }
        HookAgent::Codex => {
            let file = env_dir("CODEX_HOME", ".codex").join("config.toml");
            if let Some(table) = read(&file)
                .and_then(|t| t.parse::<toml::Table>().ok())
                .and_then(|t| t.get("mcp_servers").and_then(|s| s.as_table()).cloned())
            {
                for (name, server) in table {
                    let command = server.get("command").and_then(|c| c.as_str());
                    let args: Vec<&str> = server
                        .get("args")
                        .and_then(|a| a.as_array())
                        .map(|a| a.iter().filter_map(|w| w.as_str()).collect())
                        .unwrap_or_default();
                    if command.is_some_and(|c| runs_execgate_mcp(c, &args)) {
                        found.push(name);
                    }
                }
            }
        }
        HookAgent::Cursor => {}
    }
    found
}

/// The servers of an `mcpServers` object that run `execgate mcp`.
fn json_servers(servers: &Value) -> Vec<String> {
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
fn runs_execgate_mcp(command: &str, args: &[&str]) -> bool {
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
fn json(file: &Path) -> Option<Value> {
    read(file).and_then(|text| serde_json::from_str(&text).ok())
}

/// `file`'s text, if it is a regular file no larger than settings are (a FIFO or a
/// device is not opened: the hook must not hang).
fn read(file: &Path) -> Option<String> {
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

    #[test]
    fn each_agents_settings_and_names_are_read() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let server = serde_json::json!({"mcpServers": {
            "gate_1": {"command": "/usr/bin/execgate", "args": ["--socket", "/s", "mcp"]},
            "other": {"command": "/usr/bin/node", "args": ["server.js", "mcp"]},
        }});
        std::fs::write(h.join(".claude.json"), server.to_string()).unwrap();
        std::fs::create_dir_all(h.join(".gemini")).unwrap();
        std::fs::write(h.join(".gemini/settings.json"), server.to_string()).unwrap();
        std::fs::create_dir_all(h.join(".copilot")).unwrap();
        std::fs::write(h.join(".copilot/mcp-config.json"), server.to_string()).unwrap();
        std::fs::create_dir_all(h.join(".codex")).unwrap();
        std::fs::write(
            h.join(".codex/config.toml"),
            "[mcp_servers.gate_1]\ncommand = \"/usr/bin/execgate\"\nargs = [\"mcp\"]\n[mcp_servers.other]\ncommand = \"/usr/bin/node\"\n",
        )
        .unwrap();
        // The variables that move the agents' homes would take the reads elsewhere.
        if ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"]
            .iter()
            .any(|v| std::env::var_os(v).is_some())
        {
            return;
        }
        for (agent, own, not_own) in [
            (
                HookAgent::ClaudeCode,
                "mcp__gate_1__execute_command",
                [
                    "mcp__other__execute_command",
                    "mcp__gate_1__delete_everything",
                ],
            ),
            (
                HookAgent::Codex,
                "mcp__gate_1__request_approval",
                ["mcp__other__request_approval", "gate_1-execute_command"],
            ),
            (
                HookAgent::Gemini,
                "mcp_gate_1_execute_process",
                ["mcp_other_execute_process", "mcp__gate_1__execute_process"],
            ),
            (
                HookAgent::Copilot,
                "gate_1-get_request",
                ["other-get_request", "gate_1-bash"],
            ),
        ] {
            assert!(is_own_tool(agent, own, h, None), "{agent:?} {own}");
            for tool in not_own {
                assert!(!is_own_tool(agent, tool, h, None), "{agent:?} {tool}");
            }
        }
        assert!(!is_own_tool(
            HookAgent::Cursor,
            "gate_1-execute_command",
            h,
            None
        ));
    }
}
