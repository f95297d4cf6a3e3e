//! What execgate knows about each coding agent's hook, one file per agent: its events,
//! how its JSON on stdin is read into an [`Ask`], how it wants allow and deny said back,
//! where its settings file is and what execgate's entry there looks like
//! (`claude_code`, `codex`, `gemini`, `cursor`, `copilot`). This file holds what they
//! share: the types, the readers two agents use alike, and the dispatch from
//! [`HookAgent`]. New fields around the tool call are read past, as every agent adds
//! them over time; a shell tool's input is read whole ([`Shell`]): a field there that
//! execgate does not know might change what the command does, and is a deny that names
//! it. So is a known field of another type, and any other shape execgate does not
//! recognise.

mod claude_code;
pub mod codex;
mod copilot;
mod cursor;
mod gemini;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use super::HookAgent;
use super::own_mcp;
use crate::cli::tool_call;
use crate::model::Command;

/// The status line the agents that show one show while the hook waits.
const WAITING: &str = "execgate: waiting for approval";

/// One agent's hook, as a table row: the generic hook and installer read it.
pub struct Agent {
    /// The event assumed when the input does not say (or cannot be read).
    pub default_event: &'static str,
    /// The agent's own timeout for a hook entry that does not set one, in seconds.
    pub default_timeout: u64,
    /// Reads the agent's hook JSON (an object).
    pub read: fn(&Map<String, Value>) -> Result<Ask, String>,
    /// Says a verdict back in the agent's format ([`answer`]).
    pub answer: fn(&Reply<'_>) -> Answer,
    /// Where the agent's hook settings are and how execgate's entry sits in them.
    pub settings: Settings,
    /// The handler execgate's entry runs: `words` is the hook's command line (the
    /// binary, `hook AGENT`, the global flags), `timeout` the hook's timeout in seconds.
    pub handler: fn(words: &[String], timeout: u64) -> J,
    /// The timeout and fail-closed switch as the installer's messages state them.
    pub terms: fn(timeout: u64) -> String,
    /// How its hook names an MCP server's tools, and where it keeps its servers: what
    /// tells a call to execgate's own MCP server (`own_mcp`). None: its hook sees none.
    pub mcp: Option<own_mcp::Mcp>,
}

/// Where an agent keeps its hook settings, and how its entries are laid out there.
pub struct Settings {
    /// What the agent is called in messages.
    pub name: &'static str,
    /// The user's file: under `$VAR` when the agent reads one and it is set, else under
    /// this directory of `$HOME`.
    pub user_home: (Option<&'static str>, &'static str),
    /// The file's path under that home.
    pub user_file: &'static str,
    /// The file's path under a project's directory.
    pub project_file: &'static str,
    /// The event execgate's entry goes under, in the `hooks` object.
    pub event: &'static str,
    /// The agents that group handlers under a matcher (`{matcher, hooks: [handler]}`),
    /// and the matcher execgate's group has: every tool.
    pub matcher: Option<&'static str>,
    /// The handler's field holding the command line.
    pub command_field: &'static str,
    /// The file must say `"version": 1`.
    pub versioned: bool,
    /// Whether the agent reads the file with comments allowed.
    pub comments: bool,
    /// The file is execgate's alone (Copilot reads every `*.json` of its hooks
    /// directories), so uninstall deletes it once nothing else is left in it.
    pub own_file: bool,
    /// What to tell the user once the entry is written, if anything.
    pub note: Option<&'static str>,
}

impl HookAgent {
    /// Everything execgate knows about this agent's hook.
    pub fn knowledge(self) -> &'static Agent {
        match self {
            HookAgent::ClaudeCode => &claude_code::AGENT,
            HookAgent::Codex => &codex::AGENT,
            HookAgent::Gemini => &gemini::AGENT,
            HookAgent::Cursor => &cursor::AGENT,
            HookAgent::Copilot => &copilot::AGENT,
        }
    }
}

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

/// What is said back: the event asked about, the verdict and the message. `failed` is a
/// deny that execgate could not decide (daemon down, bad input): it also exits with the
/// blocking code, so the agent blocks even where it would not read the JSON.
pub struct Reply<'a> {
    pub event: &'a str,
    pub verdict: Verdict,
    pub message: &'a str,
    pub failed: bool,
}

impl Reply<'_> {
    fn allow(&self) -> bool {
        self.verdict == Verdict::Allow
    }

    fn decision(&self) -> &'static str {
        if self.allow() { "allow" } else { "deny" }
    }

    /// An answer read from stdout, exit 0.
    fn said(&self, body: Value) -> Answer {
        Answer {
            stdout: Some(body.to_string()),
            stderr: None,
            code: 0,
        }
    }

    /// A deny execgate could not decide: the blocking exit code and the reason on
    /// stderr, which is where every agent reads it from on that code.
    fn blocked(&self, stdout: Option<Value>) -> Answer {
        Answer {
            stdout: stdout.map(|v| v.to_string()),
            stderr: Some(self.message.to_string()),
            code: BLOCK,
        }
    }
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
    (agent.knowledge().read)(obj)
}

/// The answer for a verdict, in the agent's format ([`Reply`]).
pub fn answer(
    agent: HookAgent,
    event: &str,
    verdict: Verdict,
    message: &str,
    failed: bool,
) -> Answer {
    (agent.knowledge().answer)(&Reply {
        event,
        verdict,
        message,
        failed,
    })
}

fn text(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// `key`'s string, None when it is absent, null or empty; another type is an error.
fn optional(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone()).filter(|s| !s.is_empty())),
        Some(other) => Err(format!(
            "the hook input's `{key}` is {}, not a string",
            json_kind(other)
        )),
    }
}

fn required(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    text(obj, key).ok_or_else(|| format!("the hook input has no `{key}` string"))
}

/// A shell tool, and every field of its input execgate knows, with its JSON type, as the
/// agent's own schema has it. A field not listed might change what the command does
/// (where it runs, what it opens), so a call with one is refused, naming it, until
/// execgate knows it.
pub struct Shell {
    pub tool: &'static str,
    pub fields: &'static [(&'static str, Type)],
}

/// A JSON type a known field must have (`Any`: checked where it is read).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Any,
    Str,
    Bool,
    Num,
    Obj,
}

impl Type {
    fn holds(self, value: &Value) -> bool {
        match self {
            Type::Any => true,
            Type::Str => value.is_string(),
            Type::Bool => value.is_boolean(),
            Type::Num => value.is_number(),
            Type::Obj => value.is_object(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Type::Any => "anything",
            Type::Str => "a string",
            Type::Bool => "a boolean",
            Type::Num => "a number",
            Type::Obj => "an object",
        }
    }
}

/// Reads the call of tool `name` with `input`: a command when `name` is one of `shells`
/// and its input holds only fields execgate knows, of their types; else a tool request.
fn read_call(name: &str, input: &Value, shells: &[Shell]) -> Result<Command, String> {
    let Some(shell) = shells.iter().find(|s| s.tool == name) else {
        return tool_call::read(name, input, &[]);
    };
    let Some(fields) = input.as_object() else {
        return Err(format!(
            "the `{name}` tool's input is {}, not an object",
            json_kind(input)
        ));
    };
    for (key, value) in fields {
        match shell.fields.iter().find(|(known, _)| known == key) {
            None => {
                let known: Vec<&str> = shell.fields.iter().map(|(k, _)| *k).collect();
                return Err(format!(
                    "the `{name}` tool's input has `{key}`, which execgate does not know (it knows {}): it might change what the command does",
                    known.join(", ")
                ));
            }
            Some((_, kind)) if !value.is_null() && !kind.holds(value) => {
                return Err(format!(
                    "the `{name}` tool's `{key}` is {}, not {}",
                    json_kind(value),
                    kind.name()
                ));
            }
            Some(_) => {}
        }
    }
    tool_call::read(name, input, &[name])
}

/// The shape Claude Code set and Codex and Gemini CLI follow: `hook_event_name`,
/// `tool_name`, `tool_input`, `session_id`, `cwd`; a tool named in `shells` is a
/// command.
fn claude_like(obj: &Map<String, Value>, shells: &[Shell]) -> Result<Ask, String> {
    let event = required(obj, "hook_event_name")?;
    let name = required(obj, "tool_name")?;
    let input = match obj.get("tool_input") {
        None | Some(Value::Null) => json!({}),
        Some(input @ Value::Object(_)) => input.clone(),
        Some(other) => {
            return Err(format!(
                "the hook input's `tool_input` is {}, not an object",
                json_kind(other)
            ));
        }
    };
    let what = read_call(&name, &input, shells)?;
    Ok(Ask {
        event,
        session: optional(obj, "session_id")?,
        cwd: optional(obj, "cwd")?,
        reason: description(&input),
        what,
    })
}

/// The tool's own description of the call (`description` in its input), shown to the
/// owner as the request's reason.
fn description(input: &Value) -> Option<String> {
    input
        .get("description")
        .and_then(Value::as_str)
        .map(String::from)
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

/// A JSON value to write into a settings file, its members in the order given: the
/// order a reader of the file sees (serde_json's own map may sort them).
#[derive(Clone, Debug)]
pub enum J {
    Object(Vec<(&'static str, J)>),
    Array(Vec<J>),
    Str(String),
    Num(u64),
    Bool(bool),
}

impl J {
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("J serialises")
    }
}

impl Serialize for J {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            J::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            J::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            J::Str(v) => s.serialize_str(v),
            J::Num(v) => s.serialize_u64(*v),
            J::Bool(v) => s.serialize_bool(*v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

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

    /// A payload of a shape execgate does not know is a deny naming what was unexpected
    /// (issue 31, bad input): a known field of another type, or a field of a shell
    /// tool's input execgate does not know, which might change what the command does
    /// (as Gemini's `dir_path` changes where it runs, or Claude's `Monitor` `ws` opens a
    /// socket). The envelope's new fields are read past.
    #[test]
    fn an_unknown_shape_is_a_deny_naming_what_was_unexpected() {
        let claude = |input: Value, extra: Value| {
            let mut p = json!({"session_id": "s", "cwd": "/r", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": input});
            for (k, v) in extra.as_object().unwrap() {
                p[k] = v.clone();
            }
            read(HookAgent::ClaudeCode, &p)
        };
        let refused = |got: Result<Ask, String>, needle: &str| {
            let why = got.expect_err(needle);
            assert!(why.contains(needle), "{why}");
        };
        // Known, and of their types: read.
        claude(
            json!({"command": "ls", "description": "d", "timeout": 5, "run_in_background": false,
                "dangerouslyDisableSandbox": false}),
            json!({"prompt_id": "p", "brand_new": {"x": 1}}),
        )
        .unwrap();
        refused(
            claude(json!({"command": "ls", "workdir": "/etc"}), json!({})),
            "`workdir`, which execgate does not know",
        );
        refused(
            claude(
                json!({"command": "ls", "run_in_background": "yes"}),
                json!({}),
            ),
            "`run_in_background` is a string, not a boolean",
        );
        refused(
            claude(json!({"command": "ls"}), json!({"cwd": 7})),
            "`cwd` is a number, not a string",
        );
        refused(
            claude(json!({"command": "ls"}), json!({"session_id": ["s"]})),
            "`session_id` is an array, not a string",
        );
        refused(
            claude(json!("ls"), json!({})),
            "`tool_input` is a string, not an object",
        );
        let monitor = json!({"session_id": "s", "cwd": "/r", "hook_event_name": "PreToolUse",
            "tool_name": "Monitor", "tool_input": {"command": "tail -f log", "description": "d",
            "timeout_ms": 1000, "ws": {"url": "wss://x"}}});
        refused(read(HookAgent::ClaudeCode, &monitor), "`ws`");
        let gemini = json!({"session_id": "g", "cwd": "/r", "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command", "tool_input": {"command": "ls", "dir_path": 3}});
        refused(
            read(HookAgent::Gemini, &gemini),
            "`dir_path` is a number, not a string",
        );
        let gemini = json!({"session_id": "g", "cwd": "/r", "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command", "tool_input": {"command": "ls", "is_background": true,
            "delay_ms": 10, "additional_permissions": {"network": true}, "description": "d"}});
        read(HookAgent::Gemini, &gemini).unwrap();
        let copilot = |args: Value| {
            read(
                HookAgent::Copilot,
                &json!({"sessionId": "s", "cwd": "/r", "toolName": "bash", "toolArgs": args}),
            )
        };
        copilot(
            json!({"command": "ls", "description": "d", "mode": "sync", "initial_wait": 30,
            "detach": false, "shellId": "main"}),
        )
        .unwrap();
        refused(
            copilot(json!({"command": "ls", "cwd": "/etc"})),
            "`cwd`, which execgate does not know",
        );
        // Another tool's input is the owner's to read, whatever it holds.
        let write = json!({"session_id": "s", "cwd": "/r", "hook_event_name": "PreToolUse",
            "tool_name": "Write", "tool_input": {"file_path": "/r/a", "content": "x", "new": 1}});
        read(HookAgent::ClaudeCode, &write).unwrap();
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

    #[test]
    fn each_agents_settings_and_names_are_read() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        // execgate's server is this very binary (here, the test's).
        let me = std::env::current_exe().unwrap().canonicalize().unwrap();
        let me = me.to_str().unwrap();
        let server = serde_json::json!({"mcpServers": {
            "gate_1": {"command": me, "args": ["mcp"]},
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
            format!("[mcp_servers.gate_1]\ncommand = {me:?}\nargs = [\"mcp\"]\n[mcp_servers.other]\ncommand = \"/usr/bin/node\"\n"),
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
            let naming = agent.knowledge().mcp.as_ref().unwrap();
            assert!(
                own_mcp::is_own_tool(naming, own, h, None),
                "{agent:?} {own}"
            );
            for tool in not_own {
                assert!(
                    !own_mcp::is_own_tool(naming, tool, h, None),
                    "{agent:?} {tool}"
                );
            }
        }
        assert!(HookAgent::Cursor.knowledge().mcp.is_none());
    }
}
