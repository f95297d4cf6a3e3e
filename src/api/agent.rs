//! The agent API (docs/api.md#agent-api): submit a request, read your own requests, health. It
//! has no route that resolves a request or touches the allowlist.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Path as UrlPath, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use tokio::sync::{oneshot, watch};

use super::error::ApiError;
use super::{AppState, Peer, parse_query, query_number, read_json};
use crate::approvals::{Registered, Submitted};
use crate::config::Config;
use crate::exec::RunSpec;
use crate::model::{
    AgentName, Command, InputSummary, Record, RequestSpec, Shell, Status, ToolCall,
};
use crate::workdir::WorkDir;

/// The longest a `GET …?wait_secs=N` holds the connection.
const MAX_WAIT_SECS: u64 = 300;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/health", get(super::health))
        .route("/v1/requests", post(create))
        .route("/v1/requests/withdraw", post(withdraw))
        .route("/v1/requests/{id}", get(show))
        .fallback(super::not_found)
        .method_not_allowed_fallback(super::method_not_allowed)
        .with_state(state)
}

/// ExecRequest as it arrives. Unknown fields are refused: a misspelt `comand` must not
/// turn into "no command".
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecRequest {
    pub agent: String,
    pub session: Option<String>,
    pub command: Option<String>,
    pub argv: Option<Vec<String>>,
    pub input: Option<String>,
    pub cwd: Option<String>,
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub run: bool,
    pub reason: Option<String>,
    #[serde(default = "yes")]
    pub wait: bool,
    /// Decide-only: the shell the agent will run `command` with (`sh`, `bash`, `zsh`);
    /// unset means execgate judges the command as plain only if it is plain under all
    /// three. Read as text so a wrong value gets a message that names the field.
    pub shell: Option<String>,
    /// A non-shell tool call, instead of `command` or `argv`.
    pub tool: Option<ToolRequest>,
    /// The door the request came through, as execgate's own clients say (`cli`,
    /// `hook:claude-code`, …). Recorded only: it decides nothing.
    pub front: Option<String>,
    /// The asker's own name for this call, by which it may withdraw the request while
    /// it waits (`POST /v1/requests/withdraw`). Decides nothing; not stored.
    pub call_id: Option<String>,
}

/// `POST /v1/requests/withdraw`: the asker takes back a call it named.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Withdrawal {
    call_id: String,
}

/// The longest `call_id`.
const MAX_CALL_ID: usize = 128;

/// A `call_id` is 1 to 128 of ASCII letters, digits and `-_.:`: something to match, not to
/// show anyone.
fn check_call_id(call_id: &str) -> Result<(), ApiError> {
    let fits = (1..=MAX_CALL_ID).contains(&call_id.len())
        && call_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b));
    if fits {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "`call_id` must be 1 to {MAX_CALL_ID} ASCII letters, digits, `-`, `_`, `.` or `:`, got {:?}",
            truncate(call_id)
        )))
    }
}

/// A request's `tool`: `{"name": "Write", "input": {…}}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolRequest {
    pub name: String,
    #[serde(default = "empty_object")]
    pub input: serde_json::Value,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(Default::default())
}

fn yes() -> bool {
    true
}

impl ExecRequest {
    /// The `shell` field, checked.
    fn shell(&self) -> Option<Result<Shell, ApiError>> {
        let name = self.shell.as_deref()?;
        Some(
            Shell::ALL
                .into_iter()
                .find(|s| s.as_str() == name)
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "`shell` must be one of \"sh\", \"bash\", \"zsh\", got {:?}",
                        truncate(name)
                    ))
                }),
        )
    }

    /// docs/decisions.md step 1, plus docs/lifecycle.md#the-working-directory: every problem named by its field,
    /// judged by `config` (the request's, taken once). Builds the request as execgate
    /// will judge, record and (in run mode) run it.
    fn check(self, config: &Config, peer: Peer) -> Result<Checked, ApiError> {
        let bad = |m: String| Err(ApiError::bad_request(m));
        let Some(agent) = AgentName::new(self.agent.clone()) else {
            return bad(format!(
                "`agent` must match {}, got {:?}",
                AgentName::PATTERN,
                truncate(&self.agent)
            ));
        };
        let strings = [
            ("session", self.session.as_deref()),
            ("command", self.command.as_deref()),
            ("input", self.input.as_deref()),
            ("cwd", self.cwd.as_deref()),
            ("reason", self.reason.as_deref()),
        ];
        for (field, value) in strings {
            if value.is_some_and(|v| v.contains('\0')) {
                return bad(format!("`{field}` contains a NUL byte"));
            }
        }
        if let Some(argv) = &self.argv
            && let Some(i) = argv.iter().position(|a| a.contains('\0'))
        {
            return bad(format!("`argv[{i}]` contains a NUL byte"));
        }
        let shell = self.shell().transpose()?;
        if let Some(front) = self.front.as_deref()
            && !crate::model::FRONTS.contains(&front)
        {
            return bad(format!(
                "`front` must be one of {}, got {:?}",
                crate::model::FRONTS.join(", "),
                truncate(front)
            ));
        }
        let command = match (self.command, self.argv, self.tool) {
            (Some(_), Some(_), None) => {
                return bad("give exactly one of `command` and `argv`, not both".into());
            }
            (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => {
                return bad(
                    "give exactly one of `command`, `argv` and `tool`, not more than one".into(),
                );
            }
            (Some(line), None, None) if line.trim().is_empty() => {
                return bad("`command` is empty".into());
            }
            (Some(line), None, None) => Command::Line(line),
            (None, Some(argv), None) if argv.first().is_none_or(|p| p.is_empty()) => {
                return bad("`argv` must start with a non-empty program name".into());
            }
            (None, Some(argv), None) => Command::Argv(argv),
            (None, None, Some(tool)) => {
                if !ToolCall::valid_name(&tool.name) {
                    return bad(format!(
                        "`tool.name` must match [A-Za-z0-9._:-]{{1,{}}}, got {:?}",
                        ToolCall::MAX_NAME,
                        truncate(&tool.name)
                    ));
                }
                if self.run {
                    return bad(
                        "`run` does not apply to `tool`: the agent makes the tool call itself once approved"
                            .into(),
                    );
                }
                if self.input.is_some() {
                    return bad(
                        "`input` (stdin) does not apply to `tool`: the tool's own input goes in `tool.input`"
                            .into(),
                    );
                }
                Command::Tool(ToolCall {
                    name: tool.name,
                    input: tool.input,
                })
            }
            (None, None, None) => {
                return bad(
                    "one of `command` (a shell line), `argv` (a program and arguments) or `tool` (a tool call) is required"
                        .into(),
                );
            }
        };
        if let Some(shell) = shell {
            match command {
                Command::Line(_) => {}
                Command::Argv(_) => {
                    return bad("`shell` applies to `command` only: `argv` runs no shell".into());
                }
                Command::Tool(_) => {
                    return bad("`shell` applies to `command` only: a `tool` runs no shell".into());
                }
            }
            if self.run && shell != Shell::Sh {
                return bad(format!(
                    "`shell` is {:?}, but in run mode execgate runs `command` with /bin/sh: give \"sh\" or leave `shell` out",
                    shell.as_str()
                ));
            }
        }
        if self.session.as_ref().is_some_and(|s| s.len() > 256) {
            return bad("`session` is longer than 256 bytes".into());
        }
        if let Some(call_id) = &self.call_id {
            check_call_id(call_id)?;
        }
        if self.run && !config.exec.enabled {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "RUN_DISABLED",
                "run mode is turned off here (exec.enabled = false): ask without `run` and run the command yourself once approved",
            ));
        }
        if self.run && !self.wait {
            return bad(
                "`run: true` needs `wait: true`: the output is returned to the waiting agent and never stored"
                    .into(),
            );
        }
        if let Some(ms) = self.timeout_ms {
            let max = config.exec.max_timeout_ms;
            if ms == 0 || ms > max {
                return bad(format!(
                    "`timeout_ms` must be between 1 and {max} (exec.max_timeout_ms), got {ms}"
                ));
            }
        }
        let cwd = match self.cwd.as_deref() {
            Some(cwd) => Some(resolve_cwd(cwd, &config.exec.allowed_cwd_roots)?),
            // Run mode without a cwd runs where the daemon runs, the approver sees it,
            // and it is held to `exec.allowed_cwd_roots` like any other.
            None if self.run => {
                let here = std::env::current_dir().map_err(|e| {
                    ApiError::unavailable(&format!(
                        "cannot find the daemon's working directory: {e}"
                    ))
                })?;
                Some(resolve_cwd(
                    &here.to_string_lossy(),
                    &config.exec.allowed_cwd_roots,
                )?)
            }
            None => None,
        };
        let spec = RequestSpec {
            agent,
            // An empty session names none: a "this session" rule for "" would share the
            // agent-wide rule's key (the store keys rules by session, NULL as "").
            session: self.session.filter(|s| !s.is_empty()),
            cwd: cwd
                .as_ref()
                .map(|c| c.path().to_string_lossy().into_owned()),
            reason: self.reason,
            front: self.front,
            run: self.run,
            shell,
            input: self.input.as_deref().map(InputSummary::of),
            peer_uid: peer.uid,
            peer_pid: peer.pid,
            command,
        };
        // What runs, if this is run mode and it is approved: exactly what policy judged.
        let run = match cwd {
            Some(cwd) if self.run => Some(RunSpec {
                command: spec.command.clone(),
                cwd,
                input: self.input,
                timeout: Duration::from_millis(
                    self.timeout_ms.unwrap_or(config.exec.default_timeout_ms),
                ),
                max_output_bytes: config.exec.max_output_bytes as usize,
                env: Vec::new(),
                confine: None,
            }),
            _ => None,
        };
        Ok(Checked {
            spec,
            run,
            wait: self.wait,
            call_id: self.call_id,
        })
    }
}

/// A request as checked: what policy judges, and what runs if it is approved.
struct Checked {
    spec: RequestSpec,
    run: Option<RunSpec>,
    wait: bool,
    call_id: Option<String>,
}

/// A request's working directory, checked before anyone is asked: resolved against the
/// daemon's working directory when relative, existing, a directory, opened (the command
/// will run in this open directory, docs/lifecycle.md#the-working-directory), its canonical path (`..` and symlinks
/// resolved) inside a canonical `exec.allowed_cwd_roots` entry when any are set. A root
/// that cannot be resolved is a configuration error: every request that gives a cwd is
/// refused until it is fixed.
fn resolve_cwd(cwd: &str, roots: &[PathBuf]) -> Result<WorkDir, ApiError> {
    let path = Path::new(cwd);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| ApiError::bad_request(format!("cannot resolve relative `cwd`: {e}")))?
            .join(path)
    };
    let dir = WorkDir::open(&absolute).map_err(|e| {
        ApiError::bad_request(match e.kind() {
            std::io::ErrorKind::NotFound => format!("`cwd` {:?} does not exist", truncate(cwd)),
            std::io::ErrorKind::NotADirectory => {
                format!("`cwd` {:?} is not a directory", truncate(cwd))
            }
            _ => format!("`cwd` {:?} cannot be opened: {e}", truncate(cwd)),
        })
    })?;
    let canonical = dir.path();
    if roots.is_empty() {
        return Ok(dir);
    }
    let mut inside = false;
    for root in roots {
        match root.canonicalize() {
            Ok(r) => inside |= canonical.starts_with(&r),
            Err(e) => {
                tracing::error!(root = %root.display(), error = %e, "exec.allowed_cwd_roots has a root that cannot be resolved");
                return Err(ApiError::config(format!(
                    "configuration error: exec.allowed_cwd_roots entry {} cannot be resolved ({e}); requests that give a `cwd` are refused until it is fixed",
                    root.display()
                )));
            }
        }
    }
    if inside {
        Ok(dir)
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "CWD_NOT_ALLOWED",
            format!(
                "`cwd` {} is not inside exec.allowed_cwd_roots",
                canonical.display()
            ),
        ))
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(80).collect()
}

async fn create(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let req: ExecRequest = read_json(&headers, body, state.read_timeout()).await?;
    // The configuration in force now judges this request from here to its end: a reload
    // meanwhile applies to the next one.
    let settings = state.approvals.policy().settings();
    let config = Arc::clone(settings.config());
    let Checked {
        spec,
        run,
        wait,
        call_id,
    } = req.check(&config, peer)?;

    // Step 2: identity. A bound agent name is usable only from its uids.
    if let Some(uids) = config
        .agents
        .get(spec.agent.as_str())
        .and_then(|a| a.uids.as_ref())
        && !peer.uid.is_some_and(|u| uids.contains(&u))
    {
        tracing::warn!(agent = %spec.agent, uid = ?peer.uid, "agent identity does not match the peer's uid");
        return Err(ApiError::forbidden(format!(
            "agent {:?} is bound to other uids; this connection's uid is {}",
            spec.agent.as_str(),
            peer.uid.map_or("unknown".to_string(), |u| u.to_string())
        )));
    }

    // Most requests end here: policy decides, and the decision is stored.
    let submitted = match state.approvals.submit(spec, settings).await? {
        Submitted::Done(record) if run.is_none() || record.status != Status::Approved => {
            state.approvals.delivered(&record);
            return Ok((StatusCode::OK, Json(record)).into_response());
        }
        Submitted::Waiting(record) if !wait => {
            return Ok((StatusCode::ACCEPTED, Json(record)).into_response());
        }
        other => other,
    };
    // Registering, waiting and running go on in their own task, so an agent that hangs
    // up cannot cut them in half. `gone` is dropped with this handler when hyper sees the
    // connection close: that is how the task learns the waiter went away.
    let (gone, agent_left) = oneshot::channel::<()>();
    let approvals = Arc::clone(&state.approvals);
    let runs = Arc::clone(&state.runs);
    let task = tokio::spawn(async move {
        let decided = match submitted {
            Submitted::Done(record) => Ok((StatusCode::OK, record)),
            // The same call asked before, still pending: waited on like a new one, but
            // not cancelled if this waiter leaves (it is not this connection's alone).
            Submitted::Waiting(record) => match approvals.watch(&record.id) {
                Some(mut done) => tokio::select! {
                    finished = terminal(&mut done) => Ok((StatusCode::OK, match finished {
                        Some(r) => r,
                        None => approvals.record(&record.id).await?.unwrap_or(record),
                    })),
                    _ = agent_left => Err(ApiError::bad_request("the agent closed its connection")),
                },
                None => Ok((
                    StatusCode::OK,
                    approvals.record(&record.id).await?.unwrap_or(record),
                )),
            },
            // An asker that does not wait may ask the same call again for the answer.
            Submitted::Ask(ask) if !wait => {
                let ask = ask.answered_late().withdrawable_as(call_id);
                let Registered { record, .. } = approvals.register(ask).await?;
                Ok((StatusCode::ACCEPTED, record))
            }
            Submitted::Ask(ask) => {
                let ask = ask.withdrawable_as(call_id);
                let Registered { record, mut done } = approvals.register(ask).await?;
                tokio::select! {
                    finished = terminal(&mut done) => match finished {
                        Some(r) => Ok((StatusCode::OK, r)),
                        // The sender went away without a final record: ask the store.
                        None => Ok((StatusCode::OK, approvals.record(&record.id).await?.unwrap_or(record))),
                    },
                    _ = agent_left => {
                        approvals.cancel_abandoned(&record.id).await;
                        Err(ApiError::bad_request("the agent closed its connection; request cancelled"))
                    }
                }
            }
        };
        // Run mode: only an approved request runs, and only the command it was approved for.
        match (decided, run) {
            (Ok((status, mut record)), Some(run)) if record.status == Status::Approved => {
                record.result = Some(runs.run(&record, run, &config).await);
                Ok((status, record))
            }
            (decided, _) => decided,
        }
    });
    let outcome: Result<(StatusCode, Record), ApiError> = match task.await {
        Ok(result) => result,
        Err(e) => Err(ApiError::unavailable(&e)),
    };
    drop(gone);
    let (status, record) = outcome?;
    state.approvals.delivered(&record);
    Ok((status, Json(record)).into_response())
}

/// The asker withdraws a call it named and still waits on: 200 with the record, now
/// `cancelled` `via: withdrawn`; 404 when no request of this uid pending here has that
/// `call_id`.
async fn withdraw(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Record>, ApiError> {
    let Withdrawal { call_id } = read_json(&headers, body, state.read_timeout()).await?;
    check_call_id(&call_id)?;
    match state.approvals.withdraw(peer.uid, &call_id).await? {
        Some(record) => Ok(Json(record)),
        None => Err(ApiError::not_found(format!(
            "no request of yours waits here under call_id {call_id:?}"
        ))),
    }
}

async fn show(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    UrlPath(id): UrlPath<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Record>, ApiError> {
    let mut wait = 0;
    for (k, v) in parse_query(query.as_deref(), &["wait_secs"])? {
        if k == "wait_secs" {
            wait = query_number(&v, "wait_secs")?.min(MAX_WAIT_SECS);
        }
    }
    let record = state.approvals.find(&id).await?;
    // An agent sees only requests sent from its own uid; others look like unknown ids.
    let record = match record {
        Some(r) if peer.uid.is_some() && r.peer_uid == peer.uid => r,
        _ => return Err(ApiError::not_found(format!("request {id} not found"))),
    };
    if record.status.is_terminal() || wait == 0 {
        state.approvals.delivered(&record);
        return Ok(Json(record));
    }
    let waited = match state.approvals.watch(&record.id) {
        Some(mut done) => tokio::time::timeout(Duration::from_secs(wait), terminal(&mut done))
            .await
            .ok()
            .flatten(),
        None => None,
    };
    match waited {
        Some(r) => {
            state.approvals.delivered(&r);
            Ok(Json(r))
        }
        // Still pending after the wait (or not live here): the store's current view.
        None => {
            let now = state.approvals.record(&record.id).await?.unwrap_or(record);
            state.approvals.delivered(&now);
            Ok(Json(now))
        }
    }
}

/// The terminal record once a pending request ends; None if its sender went away first.
async fn terminal(done: &mut watch::Receiver<Option<Record>>) -> Option<Record> {
    loop {
        if let Some(r) = done.borrow_and_update().clone() {
            return Some(r);
        }
        done.changed().await.ok()?;
    }
}
