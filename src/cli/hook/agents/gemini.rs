//! Gemini CLI: `BeforeTool` in `~/.gemini/settings.json` (JSON with comments), a flat
//! `{decision, reason}` answer, timeouts in milliseconds, and no fail-closed switch.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{Agent, Answer, Ask, J, Reply, Settings, Shell, Type, claude_like};
use crate::cli::hook::own_mcp::{self, Mcp};
use crate::model::Command;
use crate::model::shell_join;

pub static AGENT: Agent = Agent {
    default_event: "BeforeTool",
    default_timeout: 60,
    read,
    answer,
    settings: Settings {
        name: "Gemini CLI",
        user_home: (None, ".gemini"),
        user_file: "settings.json",
        project_file: ".gemini/settings.json",
        event: "BeforeTool",
        // Every tool: the matcher is a regular expression (Gemini CLI 0.61 also takes
        // `*`, which an older build would compare as a name).
        matcher: Some(".*"),
        command_field: "command",
        versioned: false,
        comments: true,
        own_file: false,
        note: Some(
            "Gemini CLI has no fail-closed switch: a hook that crashes or times out lets the tool run",
        ),
    },
    handler,
    // Gemini CLI counts its hook timeouts in milliseconds.
    terms: |timeout| format!("timeout {} ms", timeout.saturating_mul(1000)),
    mcp: Some(Mcp {
        prefix: "mcp_",
        separator: "_",
        own_servers,
    }),
};

/// Like Claude's, with `run_shell_command` and its `dir_path` (relative to the project)
/// for where the command runs.
fn read(obj: &Map<String, Value>) -> Result<Ask, String> {
    let mut ask = claude_like(obj, &[SHELL])?;
    if matches!(ask.what, Command::Line(_) | Command::Argv(_))
        && let Some(dir) = obj
            .get("tool_input")
            .and_then(|i| i.get("dir_path"))
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty() && *d != ".")
    {
        ask.cwd = Some(match &ask.cwd {
            Some(cwd) if !dir.starts_with('/') => format!("{}/{dir}", cwd.trim_end_matches('/')),
            _ => dir.to_string(),
        });
    }
    Ok(ask)
}

/// Gemini CLI 0.61.0's `run_shell_command` (its parameters' JSON schema).
/// `additional_permissions` widens Gemini's own sandbox, which execgate's judgement of
/// the command does not rely on.
const SHELL: Shell = Shell {
    tool: "run_shell_command",
    fields: &[
        ("command", Type::Any),
        ("description", Type::Str),
        ("dir_path", Type::Str),
        ("is_background", Type::Bool),
        ("delay_ms", Type::Num),
        ("additional_permissions", Type::Obj),
    ],
};

fn answer(reply: &Reply<'_>) -> Answer {
    if reply.failed {
        return reply.blocked(None);
    }
    reply.said(if reply.allow() {
        json!({"decision": "allow"})
    } else {
        json!({"decision": "deny", "reason": reply.message})
    })
}

fn handler(words: &[String], timeout: u64) -> J {
    J::Object(vec![
        ("type", J::Str("command".into())),
        ("command", J::Str(shell_join(words))),
        ("timeout", J::Num(timeout.saturating_mul(1000))),
    ])
}

/// `gemini mcp add -s user` keeps servers under `mcpServers` in
/// `~/.gemini/settings.json`. A project's `.gemini/settings.json` is not read: it comes
/// with whatever was cloned.
fn own_servers(home: &Path, _cwd: Option<&Path>) -> Vec<String> {
    own_mcp::json(&home.join(".gemini/settings.json"))
        .map(|v| own_mcp::json_servers(&v["mcpServers"]))
        .unwrap_or_default()
}
