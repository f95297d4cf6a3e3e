//! Copilot CLI: `preToolUse` in a file of execgate's own (`~/.copilot/hooks/
//! execgate.json`), with no matcher: every tool, its freeform ones included.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{
    Agent, Answer, Ask, J, Reply, Settings, Shell, Type, description, json_kind, optional,
    read_call, required, text,
};
use crate::cli::hook::own_mcp::{self, Mcp};
use crate::model::shell_join;

pub static AGENT: Agent = Agent {
    default_event: "preToolUse",
    default_timeout: 30,
    read,
    answer,
    settings: Settings {
        name: "Copilot CLI",
        user_home: (Some("COPILOT_HOME"), ".copilot"),
        user_file: "hooks/execgate.json",
        project_file: ".github/hooks/execgate.json",
        event: "preToolUse",
        matcher: None,
        command_field: "bash",
        versioned: true,
        comments: false,
        own_file: true,
        note: None,
    },
    handler,
    terms: |timeout| format!("timeoutSec {timeout}"),
    mcp: Some(Mcp {
        prefix: "",
        separator: "-",
        own_servers,
    }),
};

/// `toolName` and `toolArgs`: an object, or a JSON string of one, for a function tool;
/// for a freeform tool (its `apply_patch` with GPT-5 models) the raw text the model
/// wrote, which becomes the tool's input as it is, so that the owner sees it and the
/// path policy reads the files a patch in it touches.
fn read(obj: &Map<String, Value>) -> Result<Ask, String> {
    let name = required(obj, "toolName")?;
    let args = match obj.get("toolArgs") {
        Some(Value::String(s)) => match serde_json::from_str(s) {
            Ok(object @ Value::Object(_)) => object,
            _ => Value::String(s.clone()),
        },
        Some(object @ Value::Object(_)) => object.clone(),
        None | Some(Value::Null) => json!({}),
        Some(other) => {
            return Err(format!(
                "Copilot's `toolArgs` is {}, not an object nor a tool's text",
                json_kind(other)
            ));
        }
    };
    let what = read_call(&name, &args, &[BASH, SHELL])?;
    Ok(Ask {
        event: text(obj, "hook_event_name")
            .or_else(|| text(obj, "hookEventName"))
            .unwrap_or_else(|| "preToolUse".into()),
        session: optional(obj, "sessionId")?.or(optional(obj, "session_id")?),
        cwd: optional(obj, "cwd")?,
        reason: description(&args),
        what,
    })
}

/// Copilot CLI 1.0.102's `bash` (the parameters it offers the model). `shellId` names a
/// shell session of its own, which keeps its directory between calls.
const BASH: Shell = Shell {
    tool: "bash",
    fields: COPILOT_SHELL_FIELDS,
};

/// The same tool where Copilot calls it `shell`.
const SHELL: Shell = Shell {
    tool: "shell",
    fields: COPILOT_SHELL_FIELDS,
};

const COPILOT_SHELL_FIELDS: &[(&str, Type)] = &[
    ("command", Type::Any),
    ("description", Type::Str),
    ("mode", Type::Str),
    ("initial_wait", Type::Num),
    ("detach", Type::Bool),
    ("shellId", Type::Str),
];

fn answer(reply: &Reply<'_>) -> Answer {
    if reply.failed {
        return reply.blocked(Some(
            json!({"permissionDecision": "deny", "permissionDecisionReason": reply.message}),
        ));
    }
    reply.said(
        json!({"permissionDecision": reply.decision(), "permissionDecisionReason": reply.message}),
    )
}

fn handler(words: &[String], timeout: u64) -> J {
    J::Object(vec![
        ("type", J::Str("command".into())),
        ("bash", J::Str(shell_join(words))),
        ("timeoutSec", J::Num(timeout)),
    ])
}

/// `copilot mcp add` keeps servers under `mcpServers` in `$COPILOT_HOME/mcp-config.json`
/// (else `~/.copilot`).
fn own_servers(home: &Path, _cwd: Option<&Path>) -> Vec<String> {
    let dir = std::env::var_os("COPILOT_HOME")
        .filter(|d| !d.is_empty())
        .map_or_else(|| home.join(".copilot"), PathBuf::from);
    own_mcp::json(&dir.join("mcp-config.json"))
        .map(|v| own_mcp::json_servers(&v["mcpServers"]))
        .unwrap_or_default()
}
