//! Cursor: `beforeShellExecution` in `~/.cursor/hooks.json` (`"version": 1`), flat
//! snake_case answers, `failClosed: true`.

use serde_json::{Map, Value, json};

use super::{Agent, Answer, Ask, J, Reply, Settings, optional, required};
use crate::cli::tool_call;
use crate::model::{Command, ToolCall, shell_join};

pub static AGENT: Agent = Agent {
    default_event: "beforeShellExecution",
    // Not documented: the shortest of the others'.
    default_timeout: 30,
    read,
    answer,
    settings: Settings {
        name: "Cursor",
        user_home: (None, ".cursor"),
        user_file: "hooks.json",
        project_file: ".cursor/hooks.json",
        event: "beforeShellExecution",
        matcher: None,
        command_field: "command",
        versioned: true,
        comments: false,
        own_file: false,
        note: None,
    },
    handler,
    terms: |timeout| format!("timeout {timeout} s, failClosed true"),
    mcp: None,
};

/// `beforeShellExecution` carries `command` and `cwd` at the top level (cwd may be
/// empty: the first workspace root then); `beforeMCPExecution` a tool.
fn read(obj: &Map<String, Value>) -> Result<Ask, String> {
    let event = required(obj, "hook_event_name")?;
    let cwd = optional(obj, "cwd")?.or_else(|| {
        obj.get("workspace_roots")
            .and_then(Value::as_array)
            .and_then(|r| r.first())
            .and_then(Value::as_str)
            .map(String::from)
    });
    let what = match event.as_str() {
        "beforeShellExecution" => tool_call::shell_command(&Value::Object(obj.clone()), "command")?,
        "beforeMCPExecution" => Command::Tool(ToolCall {
            name: required(obj, "tool_name")?,
            input: match obj.get("tool_input") {
                // Cursor sends the MCP arguments as a JSON string.
                Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(json!(s)),
                Some(v) => v.clone(),
                None => json!({}),
            },
        }),
        other => {
            return Err(format!(
                "Cursor's `{other}` event is not one execgate answers (install it for beforeShellExecution)"
            ));
        }
    };
    Ok(Ask {
        event,
        session: optional(obj, "conversation_id")?,
        cwd,
        reason: None,
        what,
    })
}

fn answer(reply: &Reply<'_>) -> Answer {
    if reply.failed {
        // Exit 2 with a JSON body would show the raw JSON: bare exit 2.
        return reply.blocked(None);
    }
    reply.said(if reply.allow() {
        json!({"permission": "allow"})
    } else {
        json!({"permission": "deny", "user_message": reply.message, "agent_message": reply.message})
    })
}

fn handler(words: &[String], timeout: u64) -> J {
    J::Object(vec![
        ("command", J::Str(shell_join(words))),
        ("timeout", J::Num(timeout)),
        ("failClosed", J::Bool(true)),
    ])
}
