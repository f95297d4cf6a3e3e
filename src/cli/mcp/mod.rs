//! `execgate mcp`: a Model Context Protocol server over stdio (docs/mcp.md).
//!
//! It is a client of the agent socket and nothing more: every tool call becomes one
//! request (`front: "mcp"`) that the daemon judges with its whole pipeline, and the
//! daemon runs what it approved. The server never decides and never runs anything
//! itself; what it adds is the MCP side: tools and their schemas ([`tools`]), the
//! environment's narrowing of what it asks for ([`narrow`]), progress notifications
//! while a human decides, and cancellation: a call the client cancels, or a client that
//! goes away, drops the call's connection to the daemon, which cancels the request.

mod narrow;
mod tools;

pub use tools::ALL as TOOLS;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::{Method, StatusCode};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use super::tool_call;
use crate::client::{Client, fit};
use crate::config::Config;
use crate::model::{Command, Record, Status};
use crate::render;
use crate::yaml;
use narrow::Narrowing;

/// The longest JSON-RPC line read from the client. Larger lines are dropped by the SDK
/// (and their request never answered) rather than buffered without bound. A tool call's
/// input bigger than the daemon takes is summed up before it is sent (see [`fit`]).
const MAX_LINE: usize = 8 << 20;

/// The first progress notification of a waiting call, then one every [`PROGRESS_EVERY`].
const PROGRESS_FIRST: Duration = Duration::from_secs(1);
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// How much longer than the approval timeout a call waits for the daemon: it answers by
/// then, and this bounds a daemon that does not.
const DECIDE_SLACK: Duration = Duration::from_secs(30);

/// In run mode, beyond the approval timeout and the command's own timeout: the time an
/// approved command may wait for a free run slot (`exec.max_concurrent`).
const RUN_SLACK: Duration = Duration::from_secs(300);

/// How long a withdrawal may take before the server lets the connection's close say it
/// instead (recorded then as `disconnect`).
const WITHDRAW_PATIENCE: Duration = Duration::from_secs(2);

/// Runs the server on stdin/stdout until the client closes stdin. `config` is the
/// configuration, or why it did not load: the server still starts, and every call says
/// why it cannot ask.
pub async fn serve(config: Result<Config, String>, agent: Option<String>) -> i32 {
    let gone = CancellationToken::new();
    let watching = gone.clone();
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let transport = AsyncRwTransport::new_server(
        EofWatch {
            inner: stdin,
            gone: watching,
        },
        stdout,
    )
    .with_max_line_length(MAX_LINE);
    let server = Server(Arc::new(Shared {
        config,
        agent: agent.unwrap_or_else(|| "mcp".into()),
        session: format!("mcp-{}", uuid::Uuid::now_v7()),
        narrowing: Narrowing::from_env(),
        here: std::env::current_dir().map_err(|e| e.to_string()),
        gone: gone.clone(),
    }));
    if let Err(e) = &server.0.config {
        tracing::error!(error = %e, "the configuration does not load: every tool call will fail");
    }
    match server.serve(transport).await {
        Ok(running) => match running.waiting().await {
            Ok(reason) => {
                tracing::debug!(?reason, "MCP client gone: stopping");
                0
            }
            Err(e) => {
                tracing::error!(error = %e, "the MCP session ended with an error");
                1
            }
        },
        // A client that leaves before any session began (a 2026-07-28 client that only
        // discovered, an empty stdin) has simply gone.
        Err(e) if gone.is_cancelled() => {
            tracing::debug!(error = %e, "MCP client gone before a session began");
            0
        }
        Err(e) => {
            tracing::error!(error = %e, "no MCP session: the client did not open one");
            1
        }
    }
}

/// Standard input, watched for its end: the client has gone, and every call still
/// waiting on the daemon is dropped at once (the SDK itself would wait for them).
struct EofWatch<R> {
    inner: R,
    gone: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofWatch<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let wanted = buf.remaining() > 0;
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if wanted && buf.filled().len() == before => self.gone.cancel(),
            Poll::Ready(Err(_)) => self.gone.cancel(),
            _ => {}
        }
        polled
    }
}

#[derive(Clone)]
struct Server(Arc<Shared>);

struct Shared {
    config: Result<Config, String>,
    agent: String,
    /// One client's connection is one session: what "This session" grants are bound
    /// to, so they end with this server process.
    session: String,
    narrowing: Narrowing,
    /// The server's working directory when it started: where a call without `cwd` runs.
    here: Result<PathBuf, String>,
    /// Cancelled when the client closes stdin.
    gone: CancellationToken,
}

/// How a call to the daemon ended.
enum Answer {
    /// A record: terminal (200), or pending (202, `wait: false`).
    Record(Box<Record>),
    /// No record: why, for the model to read. Nothing was approved.
    Failed(String),
    /// The client cancelled the call or went away: the connection was dropped.
    Abandoned,
}

/// A command to ask for, with what only run mode takes.
struct Ask {
    command: Command,
    cwd: Option<String>,
    reason: Option<String>,
    run: Option<Run>,
    wait: bool,
}

struct Run {
    timeout_ms: Option<u64>,
    input: Option<String>,
}

impl Ask {
    /// A run-mode ask (`execute_command`, `execute_process`): it always waits.
    fn run(
        command: Command,
        cwd: Option<String>,
        timeout_ms: Option<u64>,
        input: Option<String>,
    ) -> Ask {
        Ask {
            command,
            cwd,
            reason: None,
            run: Some(Run { timeout_ms, input }),
            wait: true,
        }
    }
}

fn text_result(text: impl Into<String>, record: Option<&Record>, is_error: bool) -> CallToolResult {
    let mut result = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text.into())])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text.into())])
    };
    result.structured_content = record.map(outcome);
    result
}

/// The structured content of a call that has a record: what the model acts on, by the
/// record's own field names (docs/api.md): which request (`id` for get_request,
/// `short_id` for the owner), how it ended (`status`, `via`, `error`) and a run's
/// `result` with the YAML's keys. Not the whole record: Claude Code and Codex hand the
/// model this instead of the text, and the model has no use for who asked (this
/// server's uid and pid), how the owner was shown it or when.
fn outcome(record: &Record) -> Value {
    let mut out = json!({
        "id": record.id,
        "short_id": record.short_id,
        "status": record.status,
    });
    if let Some(via) = record.via {
        out["via"] = json!(via);
    }
    if let Some(error) = &record.error {
        out["error"] = json!(error);
    }
    if let Some(r) = &record.result {
        let mut result = json!({"exit_code": r.exit_code, "stdout": r.stdout, "stderr": r.stderr});
        // As in the YAML: the rest only when set.
        if let Some(signal) = r.signal {
            result["signal"] = json!(signal);
        }
        for (key, set) in [
            ("timed_out", r.timed_out),
            ("stdout_truncated", r.stdout_truncated),
            ("stderr_truncated", r.stderr_truncated),
        ] {
            if set {
                result[key] = json!(true);
            }
        }
        if let Some(error) = &r.error {
            result["error"] = json!(error);
        }
        out["result"] = result;
    }
    out
}

/// Whether the client is Claude Code, by the name it gives in `initialize` or, from
/// protocol 2026-07-28 on, in each request's `_meta` (Claude Code 2.1.332 says
/// `claude-code` in both). Only Claude Code has a permission prompt tool to offer.
fn is_claude_code(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_info()
        .is_some_and(|client| client.name == CLAUDE_CODE)
}

/// The name Claude Code introduces itself by.
const CLAUDE_CODE: &str = "claude-code";

fn failed(message: impl Into<String>) -> CallToolResult {
    text_result(message, None, true)
}

impl Server {
    fn config(&self) -> Result<&Config, String> {
        self.0.config.as_ref().map_err(|e| {
            format!(
                "execgate's configuration does not load, so this server cannot ask: {e}; nothing was asked and nothing ran"
            )
        })
    }

    /// The directory a call runs in, checked against the narrowing: its own `cwd`, or
    /// the server's working directory.
    fn workdir(&self, cwd: Option<&str>) -> Result<PathBuf, String> {
        match (cwd, &self.0.here) {
            (None, Ok(here)) => Ok(here.clone()),
            // An absolute cwd does not need the server's own directory.
            (Some(cwd), _) if std::path::Path::new(cwd).is_absolute() => {
                self.0.narrowing.cwd(cwd, std::path::Path::new("/"))
            }
            (Some(cwd), Ok(here)) => self.0.narrowing.cwd(cwd, here),
            (_, Err(e)) => Err(format!(
                "this server's working directory cannot be read ({e}); nothing was asked and nothing ran"
            )),
        }
    }

    /// The request body for `ask`, named `call_id`, checked against the narrowing,
    /// shrunk to fit.
    fn body(&self, ask: &Ask, call_id: &str) -> Result<Value, String> {
        self.0.narrowing.command(&ask.command)?;
        let cwd = self.workdir(ask.cwd.as_deref())?;
        let mut body = json!({
            "agent": self.0.agent,
            "session": self.0.session,
            "front": "mcp",
            "cwd": cwd,
            "wait": ask.wait,
            "call_id": call_id,
        });
        if let Some(reason) = &ask.reason {
            body["reason"] = json!(reason);
        }
        tool_call::set_command(&mut body, &ask.command);
        if let Some(run) = &ask.run {
            body["run"] = json!(true);
            if let Some(ms) = run.timeout_ms {
                body["timeout_ms"] = json!(ms);
            }
            if let Some(input) = &run.input {
                body["input"] = json!(input);
            }
        }
        fit(&mut body)
            .map(|()| body)
            .map_err(|e| format!("{e}; nothing was asked and nothing ran"))
    }

    /// Asks the daemon and waits for its answer, with progress notifications, until the
    /// call is cancelled or the client goes away.
    async fn ask(&self, ask: Ask, context: &RequestContext<RoleServer>) -> Answer {
        let config = match self.config() {
            Ok(c) => c,
            Err(e) => return Answer::Failed(e),
        };
        // The name this call is asked under: a client's cancel withdraws it by that.
        let call_id = uuid::Uuid::now_v7().to_string();
        let body = match self.body(&ask, &call_id) {
            Ok(b) => b,
            Err(e) => return Answer::Failed(e),
        };
        let mut patience = Duration::from_secs(config.approval.timeout_secs) + DECIDE_SLACK;
        if let Some(run) = &ask.run {
            let ms = run.timeout_ms.unwrap_or(config.exec.default_timeout_ms);
            patience += Duration::from_millis(ms) + RUN_SLACK;
        }
        let client = Client::new(&config.socket);
        let call = tokio::time::timeout(
            patience,
            client.call(Method::POST, "/v1/requests", Some(&body)),
        );
        tokio::pin!(call);
        match self.waiting(context, call.as_mut()).await {
            // The client cancelled this call (`notifications/cancelled`) and is still
            // here: the request is withdrawn while its connection is still open, so it
            // is recorded as what happened, not as a connection lost.
            None if !self.0.gone.is_cancelled() => {
                let withdrawal = json!({ "call_id": call_id });
                let said = tokio::time::timeout(
                    WITHDRAW_PATIENCE,
                    client.call(Method::POST, "/v1/requests/withdraw", Some(&withdrawal)),
                )
                .await;
                tracing::debug!(?said, "the client cancelled a call: withdrawn");
                Answer::Abandoned
            }
            None => Answer::Abandoned,
            Some(Err(_)) => Answer::Failed(format!(
                "no answer from execgate within {} s, so this server stopped waiting: a request still waiting for the owner is cancelled; a command already running goes on, and its result is lost",
                patience.as_secs()
            )),
            Some(Ok(answer)) => read_answer(answer, "nothing was asked and nothing ran"),
        }
    }

    /// Awaits `work`, sending progress notifications meanwhile when the client asked
    /// for them (a progress token); None when the call is cancelled or the client goes.
    /// Notifications are sent from inside the call, so the SDK ties them to it.
    async fn waiting<F: Future>(
        &self,
        context: &RequestContext<RoleServer>,
        work: F,
    ) -> Option<F::Output> {
        let token = context.meta.get_progress_token();
        let started = Instant::now();
        let mut beat =
            tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_FIRST, PROGRESS_EVERY);
        let mut last = 0.0;
        tokio::pin!(work);
        loop {
            tokio::select! {
                out = &mut work => return Some(out),
                _ = context.ct.cancelled() => return None,
                _ = self.0.gone.cancelled() => return None,
                _ = beat.tick() => {
                    let Some(token) = &token else { continue };
                    let secs = started.elapsed().as_secs();
                    // Progress must grow with every notification.
                    last = f64::max(secs as f64, last + 1.0);
                    let note = ProgressNotificationParam::new(token.clone(), last).with_message(
                        format!("waiting for execgate: the owner decides, or the approved command runs ({secs} s so far)"),
                    );
                    let _ = context.peer.notify_progress(note).await;
                }
            }
        }
    }

    /// `execute_command` and `execute_process`: asks in run mode, returns the result as
    /// YAML (docs/mcp.md#results).
    async fn execute(&self, ask: Ask, context: &RequestContext<RoleServer>) -> CallToolResult {
        match self.ask(ask, context).await {
            Answer::Failed(e) => failed(e),
            Answer::Abandoned => failed("cancelled by the client"),
            Answer::Record(record) => match (&record.status, &record.result) {
                (Status::Approved, Some(result)) => {
                    // A non-zero exit is a result; a command that timed out or could
                    // not start is an error.
                    let error = result.timed_out || result.error.is_some();
                    text_result(yaml::result(result), Some(&record), error)
                }
                (Status::Approved, None) => failed(format!(
                    "execgate {}: approved, but execgate returned no result; it may not have run",
                    record.short_id
                )),
                _ => text_result(render::for_agent(&record), Some(&record), true),
            },
        }
    }

    /// `request_approval`: decide only.
    async fn request_approval(
        &self,
        ask: Ask,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        match self.ask(ask, context).await {
            Answer::Failed(e) => failed(e),
            Answer::Abandoned => failed("cancelled by the client"),
            Answer::Record(record) => decided(&record),
        }
    }

    /// `get_request`: the record, long-polled.
    async fn get_request(
        &self,
        args: tools::GetRequest,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let config = match self.config() {
            Ok(c) => c,
            Err(e) => return failed(e),
        };
        let client = Client::new(&config.socket);
        let path = format!("/v1/requests/{}?wait_secs={}", args.id, args.wait_secs);
        let call = tokio::time::timeout(
            Duration::from_secs(args.wait_secs) + DECIDE_SLACK,
            client.call(Method::GET, &path, None),
        );
        match self.waiting(context, call).await {
            None => failed("cancelled by the client"),
            Some(Err(_)) => failed("no answer from execgate in time"),
            Some(Ok(answer)) => match read_answer(answer, "nothing was changed") {
                Answer::Record(record) if record.status == Status::Pending => {
                    text_result(pending_text(&record), Some(&record), false)
                }
                Answer::Record(record) => {
                    text_result(render::for_agent(&record), Some(&record), false)
                }
                Answer::Failed(e) => failed(e),
                Answer::Abandoned => failed("cancelled by the client"),
            },
        }
    }

    /// `approval_prompt`: Claude Code's permission prompt. Always one text block of
    /// JSON, allow or deny; anything that goes wrong is a deny that says why.
    async fn approval_prompt(
        &self,
        args: tools::ApprovalPrompt,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let deny = |message: String| {
            CallToolResult::success(vec![ContentBlock::text(
                json!({"behavior": "deny", "message": message}).to_string(),
            )])
        };
        let input = Value::Object(args.input.clone());
        let reason = input["description"].as_str().map(String::from);
        if !crate::model::ToolCall::valid_name(&args.tool_name) {
            return deny(format!(
                "execgate: {:?} is not a tool name execgate can ask about; nothing was asked",
                crate::text::clip_chars(&args.tool_name, 80)
            ));
        }
        // Claude Code's shell tool is `Bash`; its call is a command, any other a tool.
        let command = match tool_call::read(&args.tool_name, &input, &["Bash"]) {
            Ok(command) => command,
            Err(why) => return deny(format!("execgate: {why}; nothing was asked")),
        };
        let ask = Ask {
            command,
            cwd: None,
            reason,
            run: None,
            wait: true,
        };
        match self.ask(ask, context).await {
            Answer::Record(record) if record.status == Status::Approved => {
                // The input exactly as asked: what the owner approved is what runs.
                CallToolResult::success(vec![ContentBlock::text(
                    json!({"behavior": "allow", "updatedInput": input}).to_string(),
                )])
            }
            Answer::Record(record) => deny(render::for_agent(&record)),
            Answer::Failed(e) => deny(format!("execgate: {e}")),
            Answer::Abandoned => deny("execgate: cancelled by the client".into()),
        }
    }
}

/// Reads what the daemon answered into a record, or into a message that says what
/// went wrong and, in `after`, what that means for the call ("nothing ran").
fn read_answer(
    answer: Result<(StatusCode, Value), crate::client::ClientError>,
    after: &str,
) -> Answer {
    let (status, value) = match answer {
        Ok(a) => a,
        Err(e) => return Answer::Failed(format!("{e}; {after}")),
    };
    if status != StatusCode::OK && status != StatusCode::ACCEPTED {
        let message = value["error"]["message"].as_str().unwrap_or("no message");
        let code = value["error"]["code"].as_str().unwrap_or("ERROR");
        return Answer::Failed(format!(
            "execgate refused the request ({code}, HTTP {}): {message}; {after}",
            status.as_u16()
        ));
    }
    match serde_json::from_value::<Record>(value) {
        Ok(record) => Answer::Record(Box::new(record)),
        Err(e) => Answer::Failed(format!(
            "unexpected answer from execgate ({e}); nothing was approved"
        )),
    }
}

/// A decide-only record as the model reads it: approved is success; pending says how to
/// poll; anything else is an error naming the short id and how to get it approved.
fn decided(record: &Record) -> CallToolResult {
    match record.status {
        Status::Approved => text_result(
            format!(
                "{}. Run it now exactly as asked (the same command, in the same directory).",
                render::for_agent(record)
            ),
            Some(record),
            false,
        ),
        Status::Pending => text_result(pending_text(record), Some(record), false),
        _ => text_result(render::for_agent(record), Some(record), true),
    }
}

fn pending_text(record: &Record) -> String {
    format!(
        "execgate {short}: pending: the owner has been asked (they approve with `/approve {short}` in chat or `execgate approve {short}` on the host). Call get_request with id \"{id}\" and wait_secs (up to {max}) to learn the decision.",
        short = record.short_id,
        id = record.id,
        max = tools::MAX_WAIT_SECS,
    )
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("execgate", env!("CARGO_PKG_VERSION"))
                    .with_title("execgate: a human approves what agents run"),
            )
            .with_instructions(
                "Commands run through execgate only once approved: by the owner's allowlist at once, or by the owner in chat, which can take a while. Use execute_command (a shell line) or execute_process (a program and its arguments) to run something and get its exit code and output; request_approval to ask before running something yourself. A denied command never runs; do not retry it unchanged, ask the user instead.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::offered(
            is_claude_code(&context),
        )))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::all().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let bad = |m: String| ErrorData::invalid_params(m, None);
        let name = request.name.to_string();
        let args: Option<JsonObject> = request.arguments;
        let result = match name.as_str() {
            tools::EXECUTE_COMMAND => {
                let a: tools::ExecuteCommand = tools::arguments(&name, args).map_err(bad)?;
                if a.command.trim().is_empty() {
                    return Err(bad(format!("{name}: `command` is empty")));
                }
                tools::check_timeout(&name, a.timeout_ms).map_err(bad)?;
                let ask = Ask::run(Command::Line(a.command), a.cwd, a.timeout_ms, a.input);
                self.execute(ask, &context).await
            }
            tools::EXECUTE_PROCESS => {
                let a: tools::ExecuteProcess = tools::arguments(&name, args).map_err(bad)?;
                if a.file.is_empty() {
                    return Err(bad(format!("{name}: `file` is empty")));
                }
                tools::check_timeout(&name, a.timeout_ms).map_err(bad)?;
                let mut argv = vec![a.file];
                argv.extend(a.args);
                let ask = Ask::run(Command::Argv(argv), a.cwd, a.timeout_ms, a.input);
                self.execute(ask, &context).await
            }
            tools::REQUEST_APPROVAL => {
                let a: tools::RequestApproval = tools::arguments(&name, args).map_err(bad)?;
                let command = match (a.command, a.argv) {
                    (Some(line), None) if !line.trim().is_empty() => Command::Line(line),
                    (Some(_), None) => return Err(bad(format!("{name}: `command` is empty"))),
                    (None, Some(argv)) if argv.first().is_some_and(|p| !p.is_empty()) => {
                        Command::Argv(argv)
                    }
                    (None, Some(_)) => {
                        return Err(bad(format!(
                            "{name}: `argv` must start with a non-empty program name"
                        )));
                    }
                    _ => {
                        return Err(bad(format!(
                            "{name}: give exactly one of `command` and `argv`"
                        )));
                    }
                };
                let ask = Ask {
                    command,
                    cwd: a.cwd,
                    reason: a.reason,
                    run: None,
                    wait: a.wait,
                };
                self.request_approval(ask, &context).await
            }
            tools::GET_REQUEST => {
                let a: tools::GetRequest = tools::arguments(&name, args).map_err(bad)?;
                let id_ok = !a.id.is_empty()
                    && a.id.len() <= 64
                    && a.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
                if !id_ok {
                    return Err(bad(format!(
                        "{name}: `id` must be a request id or short id ([A-Za-z0-9-]{{1,64}})"
                    )));
                }
                if a.wait_secs > tools::MAX_WAIT_SECS {
                    return Err(bad(format!(
                        "{name}: `wait_secs` must be at most {}",
                        tools::MAX_WAIT_SECS
                    )));
                }
                self.get_request(a, &context).await
            }
            // Offered to Claude Code only; to any other client it is no tool of this
            // server's.
            tools::APPROVAL_PROMPT if is_claude_code(&context) => {
                let a: tools::ApprovalPrompt = tools::arguments(&name, args).map_err(bad)?;
                self.approval_prompt(a, &context).await
            }
            other => {
                return Err(bad(format!(
                    "unknown tool {:?}; this server's tools are {}",
                    crate::text::clip_chars(other, 80),
                    tools::offered(is_claude_code(&context))
                        .iter()
                        .map(|t| t.name.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        };
        Ok(result.into())
    }
}
