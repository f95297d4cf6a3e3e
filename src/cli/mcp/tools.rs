//! The MCP server's tools as a model reads them (names, descriptions, JSON schemas),
//! and their arguments as the server reads them back.
//!
//! The schema is what the model learns the tool from, so every field says what it does
//! and what happens around it (who approves, what comes back). Arguments are read
//! strictly: a wrong type, a missing field or an unknown one is a JSON-RPC
//! `invalid params` error that names the field, and nothing is asked.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub const EXECUTE_COMMAND: &str = "execute_command";
pub const EXECUTE_PROCESS: &str = "execute_process";
pub const REQUEST_APPROVAL: &str = "request_approval";
pub const GET_REQUEST: &str = "get_request";
pub const APPROVAL_PROMPT: &str = "approval_prompt";

/// Every tool the server may offer, each of which asks the daemon itself (or only reads
/// a record): what a hook that sees the call need not ask about again.
pub const ALL: [&str; 5] = [
    EXECUTE_COMMAND,
    EXECUTE_PROCESS,
    REQUEST_APPROVAL,
    GET_REQUEST,
    APPROVAL_PROMPT,
];

/// The longest a `get_request` call holds (the daemon's own cap).
pub const MAX_WAIT_SECS: u64 = 300;

const APPROVAL: &str = "Every call goes to execgate, which approves it at once when the owner's policy and allowlist allow it, and otherwise asks the owner (in chat or on the host) and waits for the answer; while it waits, progress notifications are sent.";

/// `execute_command`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecuteCommand {
    pub command: String,
    pub cwd: Option<String>,
    pub timeout_ms: Option<u64>,
    pub input: Option<String>,
}

/// `execute_process`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecuteProcess {
    pub file: String,
    #[serde(default)]
    pub args: Vec<String>,
    pub input: Option<String>,
    pub cwd: Option<String>,
    pub timeout_ms: Option<u64>,
}

/// `request_approval`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestApproval {
    pub command: Option<String>,
    pub argv: Option<Vec<String>>,
    pub cwd: Option<String>,
    pub reason: Option<String>,
    #[serde(default = "yes")]
    pub wait: bool,
}

/// `get_request`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetRequest {
    pub id: String,
    #[serde(default)]
    pub wait_secs: u64,
}

/// `approval_prompt`'s arguments, as Claude Code sends them. Unknown fields are ignored
/// here (only here): Claude Code, not the model, fills them, and a field it adds in a
/// later release must not turn every permission prompt into an error.
#[derive(Debug, Deserialize)]
pub struct ApprovalPrompt {
    pub tool_name: String,
    pub input: serde_json::Map<String, Value>,
    #[allow(dead_code)]
    pub tool_use_id: Option<String>,
}

fn yes() -> bool {
    true
}

/// `timeout_ms` as the schema says: at least 1 (the daemon says how much at most).
pub fn check_timeout(tool: &str, timeout_ms: Option<u64>) -> Result<(), String> {
    match timeout_ms {
        Some(0) => Err(format!("{tool}: `timeout_ms` must be at least 1")),
        _ => Ok(()),
    }
}

/// Reads a tool's arguments into `T`; the error names the field (`args[2]: invalid
/// type: integer `3`, expected a string`).
pub fn arguments<T: DeserializeOwned>(tool: &str, args: Option<JsonObject>) -> Result<T, String> {
    let value = Value::Object(args.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            format!("{tool}: {inner}")
        } else {
            format!("{tool}: `{path}`: {inner}")
        }
    })
}

/// The tools offered to a client, in the order `tools/list` gives them: every tool to
/// Claude Code; to any other client all but `approval_prompt`, which only Claude Code's
/// `--permission-prompt-tool` calls (another client's model would take it for one more
/// way to ask).
pub fn offered(claude_code: bool) -> Vec<Tool> {
    all()
        .into_iter()
        .filter(|t| claude_code || t.name != APPROVAL_PROMPT)
        .collect()
}

/// Every tool, in the order `tools/list` gives them to Claude Code.
pub fn all() -> Vec<Tool> {
    vec![
        tool(
            EXECUTE_COMMAND,
            "Run a shell command",
            &format!(
                "Run a shell command line (with /bin/sh -c) once execgate approves it, and return its exit code, stdout and stderr as YAML. {APPROVAL} A command that is not approved never runs and the result is an error naming the request's short id. A command that runs past its timeout is killed with its whole process group; the result is an error holding the output captured until then. A non-zero exit code is a normal result, not an error."
            ),
            json!({
                "command": {"type": "string", "minLength": 1, "description": "The shell command line, exactly as it should run. What the owner approves is this exact text."},
                "cwd": {"type": "string", "description": "Working directory. A relative path is taken from this server's working directory; omitted, the command runs in this server's working directory. It must exist."},
                "timeout_ms": {"type": "integer", "minimum": 1, "description": "Kill the command after this many milliseconds of running (time spent waiting for approval does not count). Omitted, execgate's default applies (exec.default_timeout_ms, 30000 unless configured); at most exec.max_timeout_ms."},
                "input": {"type": "string", "description": "Text written to the command's standard input; the owner sees it too. Omitted, stdin is empty."}
            }),
            &["command"],
            ToolAnnotations::with_title("Run a shell command (owner approves)")
                .read_only(false)
                .destructive(true)
                .open_world(true),
        ),
        tool(
            EXECUTE_PROCESS,
            "Run a program with arguments",
            &format!(
                "Run a program with an argument list, without any shell (no quoting, globbing or expansion), once execgate approves it, and return its exit code, stdout and stderr as YAML. {APPROVAL} Not approved, it never runs and the result is an error naming the short id; past its timeout its process group is killed and the result is an error with the output captured so far."
            ),
            json!({
                "file": {"type": "string", "minLength": 1, "description": "The program: a name looked up in PATH, or a path."},
                "args": {"type": "array", "items": {"type": "string"}, "description": "The arguments, each passed exactly as given. Omitted: none."},
                "input": {"type": "string", "description": "Text written to the program's standard input; the owner sees it too."},
                "cwd": {"type": "string", "description": "Working directory; relative to this server's working directory; omitted, the server's. It must exist."},
                "timeout_ms": {"type": "integer", "minimum": 1, "description": "Kill the program after this many milliseconds of running. Omitted, execgate's default applies."}
            }),
            &["file"],
            ToolAnnotations::with_title("Run a program (owner approves)")
                .read_only(false)
                .destructive(true)
                .open_world(true),
        ),
        tool(
            REQUEST_APPROVAL,
            "Ask whether a command may run",
            &format!(
                "Ask execgate to approve a command without running it: for a command you will run yourself. Give exactly one of `command` and `argv`. {APPROVAL} Returns the request's `id`, `short_id` and `status`: `approved`, `denied`, `expired` or `cancelled`, or `pending` when `wait` is false (then poll with get_request). Not approved is an error result naming the short id."
            ),
            json!({
                "command": {"type": "string", "minLength": 1, "description": "A shell command line, as you will run it."},
                "argv": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Instead of `command`: a program and its arguments, run without a shell."},
                "cwd": {"type": "string", "description": "The directory it will run in; relative to this server's working directory; omitted, the server's."},
                "reason": {"type": "string", "description": "Why you want to run it, in a sentence: the owner reads it when deciding."},
                "wait": {"type": "boolean", "default": true, "description": "true (default): wait for the decision. false: return at once with the pending request's id, to poll with get_request."}
            }),
            &[],
            ToolAnnotations::with_title("Ask for approval")
                .read_only(true)
                .open_world(true),
        ),
        tool(
            GET_REQUEST,
            "Read a request's status",
            "Read one of this server's requests by its id or short id, as returned by request_approval, optionally waiting for a decision. Returns its `status`: `pending`, `approved`, `denied`, `expired` or `cancelled`.",
            json!({
                "id": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9-]+$", "description": "The request's id, or its 4-hex short id while it is pending."},
                "wait_secs": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_SECS, "default": 0, "description": "Wait up to this many seconds for a pending request to be decided (progress notifications are sent meanwhile). 0: answer at once."}
            }),
            &["id"],
            ToolAnnotations::with_title("Read a request")
                .read_only(true)
                .idempotent(true)
                .open_world(false),
        ),
        tool(
            APPROVAL_PROMPT,
            "Permission prompt for Claude Code",
            "For Claude Code's --permission-prompt-tool (claude -p --permission-prompt-tool mcp__execgate__approval_prompt): Claude Code calls it before a tool call its own rules do not allow, and execgate asks the owner. Returns one text block holding JSON: {\"behavior\":\"allow\",\"updatedInput\":…} with the input unchanged, or {\"behavior\":\"deny\",\"message\":…}. Not meant to be called by the model.",
            json!({
                "tool_name": {"type": "string", "minLength": 1, "description": "The tool Claude Code wants to call (Bash, Write, mcp__server__tool, …)."},
                "input": {"type": "object", "description": "That tool's input, as the model gave it."},
                "tool_use_id": {"type": "string", "description": "Claude Code's id for the tool call."}
            }),
            &["tool_name", "input"],
            ToolAnnotations::with_title("Permission prompt (Claude Code)")
                .read_only(true)
                .open_world(true),
        ),
    ]
}

fn tool(
    name: &'static str,
    title: &str,
    description: &str,
    properties: Value,
    required: &[&str],
    annotations: ToolAnnotations,
) -> Tool {
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": name == APPROVAL_PROMPT,
    });
    let Value::Object(schema) = schema else {
        unreachable!("a JSON object literal")
    };
    Tool::new(name, description.to_string(), Arc::new(schema))
        .with_title(title)
        .with_annotations(annotations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_property_is_described_and_every_tool_has_its_reader() {
        for t in all() {
            let props = t.input_schema["properties"].as_object().unwrap();
            for (name, p) in props {
                let d = p["description"].as_str().unwrap_or_default();
                assert!(d.len() > 10, "{}.{name} has no description", t.name);
            }
            assert!(t.description.as_deref().unwrap_or_default().len() > 40);
        }
    }

    #[test]
    fn argument_errors_name_the_field() {
        let obj = |v: Value| v.as_object().cloned();
        let e = arguments::<ExecuteProcess>(
            EXECUTE_PROCESS,
            obj(json!({"file": "ls", "args": ["-l", 3]})),
        )
        .unwrap_err();
        assert!(
            e.contains("`args[1]`") && e.contains("expected a string"),
            "{e}"
        );
        let e =
            arguments::<ExecuteCommand>(EXECUTE_COMMAND, obj(json!({"comand": "ls"}))).unwrap_err();
        assert!(e.contains("unknown field `comand`"), "{e}");
        let e = arguments::<ExecuteCommand>(EXECUTE_COMMAND, None).unwrap_err();
        assert!(e.contains("missing field `command`"), "{e}");
        let e = arguments::<ExecuteCommand>(
            EXECUTE_COMMAND,
            obj(json!({"command": "ls", "timeout_ms": -1})),
        )
        .unwrap_err();
        assert!(e.contains("`timeout_ms`"), "{e}");
        // Claude Code's own fields it may add later are ignored.
        let p: ApprovalPrompt = arguments(
            APPROVAL_PROMPT,
            obj(json!({"tool_name": "Bash", "input": {"command": "ls"}, "new_field": 1})),
        )
        .unwrap();
        assert_eq!(p.tool_name, "Bash");
    }
}
