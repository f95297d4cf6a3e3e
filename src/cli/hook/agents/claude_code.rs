//! Claude Code: `PreToolUse` (and `PermissionRequest`, which its `-p` mode fires) in
//! `~/.claude/settings.json`, its handler in the exec form with `onFailure: "block"`.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{Agent, Answer, Ask, J, Reply, Settings, Shell, Type, claude_like};
use crate::cli::hook::own_mcp::{self, Mcp};

pub static AGENT: Agent = Agent {
    default_event: "PreToolUse",
    default_timeout: 600,
    read,
    answer,
    settings: Settings {
        name: "Claude Code",
        user_home: (Some("CLAUDE_CONFIG_DIR"), ".claude"),
        user_file: "settings.json",
        project_file: ".claude/settings.json",
        event: "PreToolUse",
        // Every tool, read-only ones included (policy judges those by their paths):
        // `*` is Claude Code's match-all.
        matcher: Some("*"),
        command_field: "command",
        versioned: false,
        comments: false,
        own_file: false,
        note: None,
    },
    handler,
    terms: |timeout| format!("timeout {timeout} s, onFailure block"),
    mcp: Some(Mcp {
        prefix: "mcp__",
        separator: "__",
        own_servers,
    }),
};

/// `Monitor` runs a shell command too (in the background): it is judged as one, so an
/// approval is of that command, and a rule for it is a command rule, not one for every
/// Monitor call. One watching a WebSocket (`ws`, no `command`) stays a tool call.
fn read(obj: &Map<String, Value>) -> Result<Ask, String> {
    let monitors_a_command = obj.get("tool_name").and_then(Value::as_str) == Some("Monitor")
        && obj
            .get("tool_input")
            .is_some_and(|i| i.get("command").is_some());
    if monitors_a_command {
        claude_like(obj, &[BASH, MONITOR])
    } else {
        claude_like(obj, &[BASH])
    }
}

/// Claude Code 2.1.332's `Bash` input (`sdk-tools.d.ts` `BashInput`). Its own sandbox
/// switch changes nothing execgate judges: execgate judges the command either way.
pub(super) const BASH: Shell = Shell {
    tool: "Bash",
    fields: &[
        ("command", Type::Any),
        ("description", Type::Str),
        ("timeout", Type::Num),
        ("run_in_background", Type::Bool),
        ("dangerouslyDisableSandbox", Type::Bool),
    ],
};

/// Its `Monitor` with a command (`MonitorInput`); `ws` (a WebSocket to open instead)
/// is not a command, and with a command is refused.
const MONITOR: Shell = Shell {
    tool: "Monitor",
    fields: &[
        ("command", Type::Any),
        ("description", Type::Str),
        ("timeout_ms", Type::Num),
    ],
};

fn answer(reply: &Reply<'_>) -> Answer {
    if reply.event == "PermissionRequest" {
        return permission_request(reply);
    }
    let body = pre_tool_use(reply);
    if reply.failed {
        // Claude reads stderr on exit 2; the JSON says the same to builds that read both.
        return reply.blocked(Some(body));
    }
    reply.said(body)
}

/// The `PreToolUse` answer, which Codex reads too.
pub(super) fn pre_tool_use(reply: &Reply<'_>) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": reply.decision(),
        "permissionDecisionReason": reply.message,
    }})
}

/// The `PermissionRequest` answer, the same for Codex.
pub(super) fn permission_request(reply: &Reply<'_>) -> Answer {
    let deny = json!({"behavior": "deny", "message": reply.message});
    let said = |behavior: Value| json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": behavior}});
    if reply.failed {
        return reply.blocked(Some(said(deny)));
    }
    reply.said(said(if reply.allow() {
        json!({"behavior": "allow"})
    } else {
        deny
    }))
}

/// The exec form: no shell between Claude Code and the binary.
fn handler(words: &[String], timeout: u64) -> J {
    use J::{Num, Str};
    J::Object(vec![
        ("type", Str("command".into())),
        ("command", Str(words[0].clone())),
        (
            "args",
            J::Array(words[1..].iter().cloned().map(Str).collect()),
        ),
        ("timeout", Num(timeout)),
        ("onFailure", Str("block".into())),
        ("statusMessage", Str(super::WAITING.into())),
    ])
}

/// `claude mcp add` keeps servers in `.claude.json` (under `$CLAUDE_CONFIG_DIR` when set,
/// else the home): the user's under `mcpServers`, one project's under
/// `projects.DIR.mcpServers`.
fn own_servers(home: &Path, cwd: Option<&Path>) -> Vec<String> {
    let mut files = vec![home.join(".claude.json")];
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        files.push(Path::new(&dir).join(".claude.json"));
    }
    let mut found = Vec::new();
    for v in files.iter().filter_map(|f| own_mcp::json(f)) {
        found.extend(own_mcp::json_servers(&v["mcpServers"]));
        if let Some(cwd) = cwd.and_then(Path::to_str) {
            found.extend(own_mcp::json_servers(&v["projects"][cwd]["mcpServers"]));
        }
    }
    // A project's own `.mcp.json` is not read: it comes with whatever was cloned.
    found
}
