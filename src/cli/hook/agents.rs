//! Each coding agent's hook format: what its JSON on stdin says (read into an [`Ask`]),
//! and how it wants allow and deny said back ([`answer`]). Unknown fields are ignored,
//! as every agent adds fields over time; a shape execgate does not recognise is a deny.

use serde_json::{Map, Value, json};

use super::HookAgent;
use crate::cli::tool_call;
use crate::model::{Command, ToolCall};

/// What the hook asks execgate for, read from the agent's JSON.
#[derive(Debug, PartialEq)]
pub struct Ask {
    /// The agent's event (`PreToolUse`, `PermissionRequest`, `BeforeTool`, …): how the
    /// answer is shaped.
    pub event: String,
    pub session: Option<String>,
    pub cwd: Option<String>,
    /// The tool's own description of the call, shown to the approver.
    pub reason: Option<String>,
    pub what: Command,
}

/// The verdict to say back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Deny,
}

/// What the hook prints and exits with.
#[derive(Debug, PartialEq)]
pub struct Answer {
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub code: i32,
}

/// The blocking exit code: every agent here blocks the tool on 2.
pub const BLOCK: i32 = 2;

/// Reads the agent's hook JSON.
pub fn read(agent: HookAgent, payload: &Value) -> Result<Ask, String> {
    let Some(obj) = payload.as_object() else {
        return Err("the hook input is not a JSON object".into());
    };
    match agent {
        HookAgent::ClaudeCode => claude_like(obj, &["Bash"]),
        HookAgent::Codex => codex(obj),
        HookAgent::Gemini => gemini(obj),
        HookAgent::Cursor => cursor(obj),
        HookAgent::Copilot => copilot(obj),
    }
}

fn text(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

fn required(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    text(obj, key).ok_or_else(|| format!("the hook input has no `{key}` string"))
}

/// Claude Code and Codex: `tool_name`, `tool_input`, `session_id`, `cwd`.
fn claude_like(obj: &Map<String, Value>, shells: &[&str]) -> Result<Ask, String> {
    let event = required(obj, "hook_event_name")?;
    let name = required(obj, "tool_name")?;
    let input = obj.get("tool_input").cloned().unwrap_or(json!({}));
    let what = tool_call::read(&name, &input, shells)?;
    Ok(Ask {
        event,
        session: text(obj, "session_id"),
        cwd: text(obj, "cwd"),
        reason: input
            .get("description")
            .and_then(Value::as_str)
            .map(String::from),
        what,
    })
}

/// Codex: like Claude's, its shell tool reported as `Bash`; its file edits come as
/// `apply_patch` with the patch text in `tool_input.command`, read into a tool request
/// whose input is `{"patch": TEXT}`, the shape every agent's patch tool is given, so
/// that the tool judgement reads the files it touches.
fn codex(obj: &Map<String, Value>) -> Result<Ask, String> {
    let mut ask = claude_like(obj, &["Bash"])?;
    if let Command::Tool(tool) = &mut ask.what
        && tool.name == "apply_patch"
    {
        let patch = tool
            .input
            .get("command")
            .and_then(Value::as_str)
            .filter(|p| !p.trim().is_empty())
            .ok_or(
                "Codex's `apply_patch` input has no `command` (the patch, a non-empty string)",
            )?;
        tool.input = json!({ "patch": patch });
    }
    Ok(ask)
}

/// Gemini CLI: like Claude's, with `run_shell_command` and its `dir_path` (relative to
/// the project) for where the command runs.
fn gemini(obj: &Map<String, Value>) -> Result<Ask, String> {
    let mut ask = claude_like(obj, &["run_shell_command"])?;
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

/// Cursor: `beforeShellExecution` carries `command` and `cwd` at the top level (cwd may
/// be empty: the first workspace root then); `beforeMCPExecution` a tool.
fn cursor(obj: &Map<String, Value>) -> Result<Ask, String> {
    let event = required(obj, "hook_event_name")?;
    let cwd = text(obj, "cwd").or_else(|| {
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
        session: text(obj, "conversation_id"),
        cwd,
        reason: None,
        what,
    })
}

/// Copilot CLI: `toolName` and `toolArgs`: an object, or a JSON string of one, for a
/// function tool; for a freeform tool (its `apply_patch` with GPT-5 models) the raw text
/// the model wrote, which becomes the tool's input as it is, so that the owner sees it
/// and the path policy reads the files a patch in it touches.
fn copilot(obj: &Map<String, Value>) -> Result<Ask, String> {
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
    let what = tool_call::read(&name, &args, &["bash", "shell"])?;
    Ok(Ask {
        event: text(obj, "hook_event_name")
            .or_else(|| text(obj, "hookEventName"))
            .unwrap_or_else(|| "preToolUse".into()),
        session: text(obj, "sessionId").or_else(|| text(obj, "session_id")),
        cwd: text(obj, "cwd"),
        reason: args
            .get("description")
            .and_then(Value::as_str)
            .map(String::from),
        what,
    })
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The answer for a verdict, in the agent's format. `failed` is a deny that execgate
/// could not decide (daemon down, bad input): it also exits with the blocking code, so
/// the agent blocks even where it would not read the JSON.
pub fn answer(
    agent: HookAgent,
    event: &str,
    verdict: Verdict,
    message: &str,
    failed: bool,
) -> Answer {
    let allow = verdict == Verdict::Allow;
    let decision = if allow { "allow" } else { "deny" };
    let json_out = |v: Value| Some(v.to_string());
    // A deny execgate could not decide: the blocking exit code and the reason on
    // stderr, which is where every agent reads it from on that code.
    let blocked = |stdout: Option<String>| Answer {
        stdout,
        stderr: Some(message.to_string()),
        code: BLOCK,
    };
    let permission_request = |behavior: Value| {
        json_out(
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": behavior}}),
        )
    };
    let deny_behavior = json!({"behavior": "deny", "message": message});
    match agent {
        HookAgent::ClaudeCode | HookAgent::Codex if event == "PermissionRequest" => {
            let behavior = if allow {
                json!({"behavior": "allow"})
            } else {
                deny_behavior.clone()
            };
            if failed {
                return blocked(permission_request(deny_behavior));
            }
            Answer {
                stdout: permission_request(behavior),
                stderr: None,
                code: 0,
            }
        }
        HookAgent::ClaudeCode | HookAgent::Codex => {
            let body = json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": message,
            }});
            if failed {
                // Claude reads stderr on exit 2; the JSON says the same to builds that
                // read both.
                return blocked((agent == HookAgent::ClaudeCode).then(|| body.to_string()));
            }
            if allow && agent == HookAgent::Codex {
                // Codex's PreToolUse cannot allow (only with a rewrite): silence lets
                // the call go on to Codex's own approval policy.
                return Answer {
                    stdout: None,
                    stderr: None,
                    code: 0,
                };
            }
            Answer {
                stdout: json_out(body),
                stderr: None,
                code: 0,
            }
        }
        HookAgent::Gemini => {
            if failed {
                return blocked(None);
            }
            let body = if allow {
                json!({"decision": "allow"})
            } else {
                json!({"decision": "deny", "reason": message})
            };
            Answer {
                stdout: json_out(body),
                stderr: None,
                code: 0,
            }
        }
        HookAgent::Cursor => {
            if failed {
                // Exit 2 with a JSON body would show the raw JSON: bare exit 2.
                return blocked(None);
            }
            let body = if allow {
                json!({"permission": "allow"})
            } else {
                json!({"permission": "deny", "user_message": message, "agent_message": message})
            };
            Answer {
                stdout: json_out(body),
                stderr: None,
                code: 0,
            }
        }
        HookAgent::Copilot => {
            let body = json!({"permissionDecision": decision, "permissionDecisionReason": message});
            if failed {
                return blocked(json_out(
                    json!({"permissionDecision": "deny", "permissionDecisionReason": message}),
                ));
            }
            Answer {
                stdout: json_out(body),
                stderr: None,
                code: 0,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agents_documented_input_is_read() {
        let claude = json!({"session_id": "9f1c", "transcript_path": "/t.jsonl", "cwd": "/srv/repo",
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "git push origin main", "description": "Push branch", "timeout": 120000},
            "tool_use_id": "toolu_01", "effort": {"level": "high"}, "future_field": [1]});
        let ask = read(HookAgent::ClaudeCode, &claude).unwrap();
        assert_eq!(ask.what, Command::Line("git push origin main".into()));
        assert_eq!(
            (ask.session.as_deref(), ask.cwd.as_deref()),
            (Some("9f1c"), Some("/srv/repo"))
        );
        assert_eq!(ask.reason.as_deref(), Some("Push branch"));

        let write = json!({"session_id": "s", "cwd": "/r", "hook_event_name": "PreToolUse",
            "tool_name": "Write", "tool_input": {"file_path": "/r/a", "content": "x"}});
        let ask = read(HookAgent::ClaudeCode, &write).unwrap();
        assert_eq!(
            ask.what,
            Command::Tool(ToolCall {
                name: "Write".into(),
                input: json!({"file_path": "/r/a", "content": "x"})
            })
        );

        let gemini = json!({"session_id": "g", "cwd": "/srv/repo", "hook_event_name": "BeforeTool",
            "timestamp": "2026-11-22T14:00:00Z", "tool_name": "run_shell_command",
            "tool_input": {"command": "rm -rf build", "description": "clean", "dir_path": "sub"}, "mcp_context": null});
        let ask = read(HookAgent::Gemini, &gemini).unwrap();
        assert_eq!(ask.what, Command::Line("rm -rf build".into()));
        assert_eq!(ask.cwd.as_deref(), Some("/srv/repo/sub"));

        let cursor = json!({"conversation_id": "c", "generation_id": "g", "model": "m",
            "hook_event_name": "beforeShellExecution", "cursor_version": "3.9", "workspace_roots": ["/w"],
            "user_email": "u@x", "command": "ls", "cwd": "", "sandbox": false});
        let ask = read(HookAgent::Cursor, &cursor).unwrap();
        assert_eq!(
            (ask.what, ask.cwd.as_deref(), ask.session.as_deref()),
            (Command::Line("ls".into()), Some("/w"), Some("c"))
        );

        let copilot = json!({"timestamp": 1, "cwd": "/r", "toolName": "bash", "toolArgs": "{\"command\":\"npm test\"}"});
        assert_eq!(
            read(HookAgent::Copilot, &copilot).unwrap().what,
            Command::Line("npm test".into())
        );
    }

    #[test]
    fn codex_file_edits_are_a_patch_tool_request() {
        // As Codex 0.171.0 sends its `apply_patch` tool to PreToolUse hooks.
        let patch = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n";
        let codex = json!({"session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": "/w",
            "hook_event_name": "PreToolUse", "model": "gpt-5.5", "permission_mode": "bypassPermissions",
            "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "call_1"});
        let ask = read(HookAgent::Codex, &codex).unwrap();
        assert_eq!(
            ask.what,
            Command::Tool(ToolCall {
                name: "apply_patch".into(),
                input: json!({ "patch": patch })
            })
        );
        assert_eq!(ask.cwd.as_deref(), Some("/w"));
        // Copilot's freeform `apply_patch`: the raw patch is the tool's input.
        let copilot = json!({"cwd": "/w", "toolName": "apply_patch", "toolArgs": patch});
        assert_eq!(
            read(HookAgent::Copilot, &copilot).unwrap().what,
            Command::Tool(ToolCall {
                name: "apply_patch".into(),
                input: json!(patch)
            })
        );
        // A patch tool without its patch is not a shape execgate knows.
        for input in [json!({}), json!({"command": 5}), json!({"command": ""})] {
            let bad = json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": input});
            assert!(read(HookAgent::Codex, &bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shapes_execgate_does_not_know_are_errors() {
        for (agent, bad) in [
            (HookAgent::ClaudeCode, json!([])),
            (HookAgent::ClaudeCode, json!({"tool_name": "Bash"})),
            (
                HookAgent::ClaudeCode,
                json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}),
            ),
            (
                HookAgent::ClaudeCode,
                json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": 5}}),
            ),
            (
                HookAgent::Cursor,
                json!({"hook_event_name": "afterFileEdit"}),
            ),
            (
                HookAgent::Copilot,
                json!({"toolName": "bash", "toolArgs": "{not json"}),
            ),
            (
                HookAgent::Copilot,
                json!({"toolName": "view", "toolArgs": 5}),
            ),
        ] {
            assert!(read(agent, &bad).is_err(), "{agent:?} {bad}");
        }
    }

    #[test]
    fn answers_never_ask_and_failures_block() {
        for agent in [
            HookAgent::ClaudeCode,
            HookAgent::Codex,
            HookAgent::Gemini,
            HookAgent::Cursor,
            HookAgent::Copilot,
        ] {
            for event in [
                "PreToolUse",
                "PermissionRequest",
                "BeforeTool",
                "beforeShellExecution",
                "preToolUse",
            ] {
                for verdict in [Verdict::Allow, Verdict::Deny] {
                    let a = answer(agent, event, verdict, "why", false);
                    assert_eq!(a.code, 0);
                    assert!(!a.stdout.clone().unwrap_or_default().contains("\"ask\""));
                }
                let failed = answer(agent, event, Verdict::Deny, "daemon down", true);
                assert_eq!(failed.code, BLOCK, "{agent:?}");
                assert_eq!(failed.stderr.as_deref(), Some("daemon down"));
                assert!(!failed.stdout.unwrap_or_default().contains("allow"));
            }
        }
        let claude = answer(
            HookAgent::ClaudeCode,
            "PreToolUse",
            Verdict::Deny,
            "no",
            false,
        );
        let v: Value = serde_json::from_str(&claude.stdout.unwrap()).unwrap();
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(v["hookSpecificOutput"]["permissionDecisionReason"], "no");
        let codex = answer(HookAgent::Codex, "PreToolUse", Verdict::Allow, "ok", false);
        assert_eq!(codex.stdout, None);
    }
}
