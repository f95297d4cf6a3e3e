//! `execgate hook`: the coding agents' pre-tool hooks.
//!
//! `execgate hook AGENT` is run by the agent once per tool call: it reads the agent's
//! JSON on stdin, asks the daemon over the agent socket, waits for the terminal record
//! and answers allow or deny in that agent's own format. It never answers "ask", and
//! every failure is a deny with the agent's blocking exit code. `execgate hook
//! install|uninstall AGENT` adds or removes execgate's one entry in the agent's settings.

pub mod install;
mod json_edit;

/// The coding agents execgate has a hook for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HookAgent {
    /// Claude Code (PreToolUse).
    ClaudeCode,
    /// OpenAI Codex CLI (PreToolUse and PermissionRequest).
    Codex,
    /// Gemini CLI (BeforeTool).
    Gemini,
    /// Cursor (beforeShellExecution).
    Cursor,
    /// GitHub Copilot CLI (preToolUse).
    Copilot,
}

impl HookAgent {
    /// The word on the command line, and the default agent name.
    pub fn word(self) -> &'static str {
        match self {
            HookAgent::ClaudeCode => "claude-code",
            HookAgent::Codex => "codex",
            HookAgent::Gemini => "gemini",
            HookAgent::Cursor => "cursor",
            HookAgent::Copilot => "copilot",
        }
    }
}

mod agents;

use std::io::Read;
use std::time::Duration;

use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use crate::client::Client;
use crate::config::Config;
use crate::model::{Record, Risk, Status, sha256_hex, shell_join};
use crate::policy::tools::{MAX_PATH_LEN, lexically_normal};
pub use agents::Answer;
use agents::{Verdict, What};

/// The most stdin a hook reads. More is refused, not cut: a deny.
pub const MAX_INPUT: usize = 4 << 20;

/// The agent socket takes bodies up to 64 KiB; a tool call's input larger than this
/// (a `Write` of a big file) has its long strings summed up to fit.
const MAX_BODY: usize = 60 << 10;

/// A string of a tool's input longer than this is summed up when the input must shrink.
const LONG_STRING: usize = 1024;

/// Runs the hook: stdin → a request → the agent's answer on stdout/stderr. Returns the
/// exit code. Nothing here can end in "allow" but an approved record.
pub async fn run(config: &Config, which: HookAgent, agent_name: Option<String>) -> i32 {
    let mut stdin = Vec::new();
    let read = std::io::stdin()
        .take(MAX_INPUT as u64 + 1)
        .read_to_end(&mut stdin);
    let payload: Result<Value, String> = match read {
        Err(e) => Err(format!("cannot read the hook input on stdin: {e}")),
        Ok(_) if stdin.len() > MAX_INPUT => Err(format!(
            "the hook input is larger than {} MiB; execgate does not judge what it cannot read whole",
            MAX_INPUT >> 20
        )),
        Ok(0) => Err("the hook input on stdin is empty".into()),
        Ok(_) => {
            serde_json::from_slice(&stdin).map_err(|e| format!("the hook input is not JSON: {e}"))
        }
    };
    let event = payload
        .as_ref()
        .ok()
        .and_then(|p| p.get("hook_event_name").and_then(Value::as_str))
        .unwrap_or(default_event(which))
        .to_string();
    let answer = match payload.and_then(|p| agents::read(which, &p)) {
        Err(why) => failed(which, &event, &why),
        Ok(ask) => decide(config, which, agent_name, ask).await,
    };
    emit(&answer);
    answer.code
}

pub fn default_event(which: HookAgent) -> &'static str {
    match which {
        HookAgent::ClaudeCode | HookAgent::Codex => "PreToolUse",
        HookAgent::Gemini => "BeforeTool",
        HookAgent::Cursor => "beforeShellExecution",
        HookAgent::Copilot => "preToolUse",
    }
}

pub fn emit(answer: &Answer) {
    use std::io::Write;
    if let Some(out) = &answer.stdout {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{out}");
        let _ = stdout.flush();
    }
    if let Some(err) = &answer.stderr {
        eprintln!("{err}");
    }
}

/// A deny execgate could not decide: it names the cause, and blocks.
pub fn failed(which: HookAgent, event: &str, why: &str) -> Answer {
    let message = format!(
        "execgate: blocked, because execgate could not ask for approval: {why}. No request was made and nothing was approved (execgate fails closed)."
    );
    agents::answer(which, event, Verdict::Deny, &message, true)
}

async fn decide(
    config: &Config,
    which: HookAgent,
    agent_name: Option<String>,
    ask: agents::Ask,
) -> Answer {
    let agent = agent_name.unwrap_or_else(|| which.word().to_string());
    let mut body = json!({
        "agent": agent,
        "session": ask.session,
        "cwd": ask.cwd,
        "reason": ask.reason,
        "front": format!("hook:{}", which.word()),
        "wait": true,
    });
    match ask.what {
        What::Command(line) => body["command"] = json!(line),
        What::Argv(argv) => body["argv"] = json!(argv),
        What::Tool { name, input } => body["tool"] = json!({"name": name, "input": input}),
    }
    if let Err(why) = fit(&mut body) {
        return failed(which, &ask.event, &why);
    }
    // The daemon answers by the approval timeout; this bounds a daemon that does not.
    let patience = Duration::from_secs(config.approval.timeout_secs + 30);
    let client = Client::new(&config.socket);
    let call = client.call(Method::POST, "/v1/requests", Some(&body));
    let (status, value) = match tokio::time::timeout(patience, call).await {
        Err(_) => {
            return failed(
                which,
                &ask.event,
                &format!("no answer from execgate within {} s", patience.as_secs()),
            );
        }
        Ok(Err(e)) => return failed(which, &ask.event, &e.to_string()),
        Ok(Ok(answer)) => answer,
    };
    if status != StatusCode::OK {
        let message = value["error"]["message"].as_str().map_or_else(
            || format!("execgate answered {status}"),
            |m| format!("{m} ({})", status.as_u16()),
        );
        return failed(which, &ask.event, &message);
    }
    let record: Record = match serde_json::from_value(value) {
        Ok(r) => r,
        Err(e) => {
            return failed(
                which,
                &ask.event,
                &format!("unexpected answer from execgate: {e}"),
            );
        }
    };
    let (verdict, message) = said(&record);
    agents::answer(which, &ask.event, verdict, &message, false)
}

/// The verdict and the message the agent (and through it the model and the user) reads:
/// the short id, what happened, and how to get it approved.
fn said(r: &Record) -> (Verdict, String) {
    let how = match (r.via, &r.decided_by) {
        (Some(via), Some(by)) => format!("{via}, by {by}"),
        (Some(via), None) => via.to_string(),
        (None, _) => String::new(),
    };
    if r.status == Status::Approved {
        return (
            Verdict::Allow,
            format!("execgate {}: approved ({how})", r.short_id),
        );
    }
    let why = r
        .error
        .clone()
        .unwrap_or_else(|| format!("not approved ({})", r.status));
    let rule = match r.command.tool() {
        // No rule approves a dangerous request: the owner decides it each time.
        _ if r.risk == Risk::Dangerous => String::new(),
        Some(t) => format!("execgate allow add --tool {}", t.name),
        None => {
            let command = r.command.display();
            if command.chars().count() <= 200 && !command.contains(['\n', '\r']) {
                format!(
                    "execgate allow add -- {}",
                    shell_join(&[command.into_owned()])
                )
            } else {
                "execgate allow add -- COMMAND".into()
            }
        }
    };
    (
        Verdict::Deny,
        format!(
            "execgate {id}: {why} (via {how}). Nothing ran. While a request waits, the owner approves it with `/approve {id}` in chat or `execgate approve {id}` on the host; asking again makes a new request with a new ID. {after}",
            id = r.short_id,
            after = if rule.is_empty() {
                "It is dangerous, so no rule can approve it: the owner must approve it each time."
                    .to_string()
            } else {
                format!("To allow it without asking, the owner adds a rule: `{rule}`.")
            },
        ),
    )
}

/// Makes the request fit the agent socket's body limit: a tool call's long strings (a
/// file's new content) are summed up (length, sha256, head) as the owner would see them
/// cut anyway. A string that could still name a file is never summed up: the daemon
/// must see every path to judge it. A command is never changed: one too long is refused.
fn fit(body: &mut Value) -> Result<(), String> {
    let size = |b: &Value| b.to_string().len();
    if size(body) <= MAX_BODY {
        return Ok(());
    }
    let cwd = body["cwd"].as_str().map(std::path::PathBuf::from);
    if let Some(input) = body.get_mut("tool").and_then(|t| t.get_mut("input")) {
        sum_up_long_strings(input, cwd.as_deref());
    }
    if size(body) <= MAX_BODY {
        return Ok(());
    }
    Err(format!(
        "the request is larger than execgate accepts ({} KiB); execgate does not judge what it cannot see whole",
        MAX_BODY >> 10
    ))
}

fn sum_up_long_strings(value: &mut Value, cwd: Option<&std::path::Path>) {
    match value {
        Value::String(s) if s.len() > LONG_STRING && !could_name_a_file(s, cwd) => {
            let head: String = s.chars().take(200).collect();
            *s = format!(
                "[execgate: {} bytes, sha256 {}; begins: {head}]",
                s.len(),
                sha256_hex(s.as_bytes())
            );
        }
        Value::Array(items) => items.iter_mut().for_each(|v| sum_up_long_strings(v, cwd)),
        Value::Object(map) => map.values_mut().for_each(|v| sum_up_long_strings(v, cwd)),
        _ => {}
    }
}

/// Whether `s`, read as a path from `cwd` as a tool's path handling reads it, is short
/// enough to open (`./././.claude/settings.json` is, however long as written).
fn could_name_a_file(s: &str, cwd: Option<&std::path::Path>) -> bool {
    let path = std::path::Path::new(s);
    let whole = match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    lexically_normal(&whole).as_os_str().len() <= MAX_PATH_LEN
}
