//! `execgate hook`: the coding agents' pre-tool hooks.
//!
//! `execgate hook AGENT` is run by the agent once per tool call: it reads the agent's
//! JSON on stdin, asks the daemon over the agent socket, waits for the terminal record
//! and answers allow or deny in that agent's own format. It never answers "ask", and
//! every failure is a deny with the agent's blocking exit code. `execgate hook
//! install|uninstall AGENT` adds or removes execgate's one entry in the agent's settings
//! (for Codex, with Codex's trust of it); `execgate hook status` says whether each
//! agent runs it. What differs per agent is in `agents`, one file each; this file and
//! `install` are the machinery they share.

pub mod install;
mod json_edit;
pub(crate) mod own_mcp;

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

/// How long the hook waits for the owner: until a little before the agent's timeout
/// (`timeout` seconds from the hook's start), which the agent may meet with running the
/// tool. What is left covers the answer's way back and a slow machine.
pub fn patience(timeout: u64) -> Duration {
    let margin = (timeout / 10).clamp(1, 5);
    Duration::from_secs(timeout.saturating_sub(margin))
}

mod agents;

use std::io::Read;
use std::time::{Duration, Instant};

use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use crate::client::{Client, fit};
use crate::config::Config;
use crate::model::{Record, Status};
use crate::render;
pub use agents::Answer;
use agents::Verdict;

/// The most stdin a hook reads. More is refused, not cut: a deny.
pub const MAX_INPUT: usize = 4 << 20;

/// Runs the hook: stdin → a request → the agent's answer on stdout/stderr. Returns the
/// exit code. Nothing here can end in "allow" but an approved record. `timeout` is the
/// agent's timeout for the hook, as installed.
pub async fn run(
    config: &Config,
    which: HookAgent,
    agent_name: Option<String>,
    timeout: Option<u64>,
) -> i32 {
    let deadline = Instant::now() + patience(timeout.unwrap_or(which.knowledge().default_timeout));
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
        Ok(ask) if is_own_mcp_call(which, &ask) => agents::answer(
            which,
            &ask.event,
            Verdict::Allow,
            "execgate: a call to execgate's own MCP server, which asks for it itself",
            false,
        ),
        Ok(ask) => decide(config, which, agent_name, ask, deadline).await,
    };
    emit(&answer);
    answer.code
}

/// Whether `ask` calls a tool of execgate's own MCP server (see `own_mcp`): asked for
/// by the server, it is not asked for twice.
fn is_own_mcp_call(which: HookAgent, ask: &agents::Ask) -> bool {
    let crate::model::Command::Tool(tool) = &ask.what else {
        return false;
    };
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
        return false;
    };
    let Some(naming) = &which.knowledge().mcp else {
        return false;
    };
    let cwd = ask.cwd.as_deref().map(std::path::Path::new);
    own_mcp::is_own_tool(naming, &tool.name, std::path::Path::new(&home), cwd)
}

/// The event assumed when the input does not name one.
pub fn default_event(which: HookAgent) -> &'static str {
    which.knowledge().default_event
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
    // `why` may quote what the agent sent (the daemon's refusal does): shown as every
    // front shows text.
    let message = format!(
        "execgate: blocked, because execgate could not ask for approval: {}. No request was made and nothing was approved (execgate fails closed).",
        crate::text::visible(why)
    );
    agents::answer(which, event, Verdict::Deny, &message, true)
}

/// Asks without waiting, then waits for the terminal record until `deadline`. There,
/// the request is left pending for the owner and the answer is a deny naming it: the
/// same call made again gets the owner's answer (the daemon keeps it for that).
async fn decide(
    config: &Config,
    which: HookAgent,
    agent_name: Option<String>,
    ask: agents::Ask,
    deadline: Instant,
) -> Answer {
    let agent = agent_name.unwrap_or_else(|| which.word().to_string());
    let mut body = json!({
        "agent": agent,
        "session": ask.session,
        "cwd": ask.cwd,
        "reason": ask.reason,
        "front": format!("hook:{}", which.word()),
        "wait": false,
    });
    super::tool_call::set_command(&mut body, &ask.what);
    if let Err(why) = fit(&mut body) {
        return failed(which, &ask.event, &why);
    }
    let client = Client::new(&config.socket);
    let mut record = match call(&client, Method::POST, "/v1/requests", Some(&body), deadline).await
    {
        Ok(r) => r,
        Err(why) => return failed(which, &ask.event, &why),
    };
    while !record.status.is_terminal() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_secs(1) {
            return still_waiting(which, &ask.event, &record);
        }
        let path = format!(
            "/v1/requests/{}?wait_secs={}",
            record.id,
            left.as_secs().min(60)
        );
        record = match call(&client, Method::GET, &path, None, deadline).await {
            Ok(r) => r,
            Err(why) => return failed(which, &ask.event, &why),
        };
    }
    let verdict = if record.status == Status::Approved {
        Verdict::Allow
    } else {
        Verdict::Deny
    };
    agents::answer(
        which,
        &ask.event,
        verdict,
        &render::for_agent(&record),
        false,
    )
}

/// One call to the daemon, answered with a record before `deadline` (and a second
/// more, for a long poll's own end), or the reason it was not.
async fn call(
    client: &Client,
    method: Method,
    path: &str,
    body: Option<&Value>,
    deadline: Instant,
) -> Result<Record, String> {
    let left = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
    let (status, value) = match tokio::time::timeout(left, client.call(method, path, body)).await {
        Err(_) => {
            return Err(format!(
                "no answer from execgate within {} s",
                left.as_secs()
            ));
        }
        Ok(Err(e)) => return Err(e.to_string()),
        Ok(Ok(answer)) => answer,
    };
    if !matches!(status, StatusCode::OK | StatusCode::ACCEPTED) {
        return Err(value["error"]["message"].as_str().map_or_else(
            || format!("execgate answered {status}"),
            |m| format!("{m} ({})", status.as_u16()),
        ));
    }
    serde_json::from_value(value).map_err(|e| format!("unexpected answer from execgate: {e}"))
}

/// The deny given just before the agent's own timeout: nothing ran, and the request
/// still waits for the owner, whose answer the same call made again will get.
fn still_waiting(which: HookAgent, event: &str, record: &Record) -> Answer {
    let message = format!(
        "execgate: request {} is still waiting for the owner's answer, and this hook must answer before the agent's own timeout. Nothing was approved and nothing ran. Once the owner has answered, make exactly the same call again (same command, same directory): it gets that answer.",
        record.short_id
    );
    agents::answer(which, event, Verdict::Deny, &message, false)
}
