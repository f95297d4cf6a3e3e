//! What the stored texts and numbers of a request's row mean, the same on either
//! backend: each backend's `rows` reads its columns in its own types, then builds the
//! record's parts here. A value that does not decode is reported as corrupt, naming its
//! row, rather than read as something it is not.

use std::str::FromStr;

use super::StoreError;
use crate::model::{Command, ExecResult, GrantDraft, InputSummary, ToolCall};

pub(super) fn corrupt(id: &str, what: String) -> StoreError {
    StoreError::Corrupt {
        id: id.into(),
        what,
    }
}

/// A word of the contract (a status, a risk, a kind) as stored.
pub(super) fn word<T: FromStr<Err = String>>(id: &str, s: &str) -> Result<T, StoreError> {
    s.parse().map_err(|what| corrupt(id, what))
}

/// The reasons for a request's risk, a JSON array of strings.
pub(super) fn reasons(id: &str, json: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(json).map_err(|e| corrupt(id, format!("risk_reasons: {e}")))
}

/// The request's command: exactly one of a shell line, an argv (JSON) and a tool call.
pub(super) fn command(
    id: &str,
    line: Option<String>,
    argv: Option<String>,
    tool_name: Option<String>,
    tool_input: Option<String>,
) -> Result<Command, StoreError> {
    Ok(match (line, argv, tool_name, tool_input) {
        (Some(line), None, None, None) => Command::Line(line),
        (None, Some(argv), None, None) => Command::Argv(
            serde_json::from_str(&argv).map_err(|e| corrupt(id, format!("argv: {e}")))?,
        ),
        (None, None, Some(name), Some(input)) => Command::Tool(ToolCall {
            name,
            input: serde_json::from_str(&input)
                .map_err(|e| corrupt(id, format!("tool_input: {e}")))?,
        }),
        // The schema's CHECKs keep exactly one; a row without is not a request.
        _ => {
            return Err(corrupt(
                id,
                "not exactly one of command, argv and tool".into(),
            ));
        }
    })
}

/// The columns of a run's end, as stored.
pub(super) struct RunColumns {
    pub duration_ms: Option<i64>,
    pub exit_code: Option<i64>,
    pub signal: Option<i64>,
    pub timed_out: Option<bool>,
    pub stdout_bytes: Option<i64>,
    pub stderr_bytes: Option<i64>,
    /// JSON array of the lines the confined command said the kernel refused.
    pub kernel_refused: Option<String>,
}

/// A run's numbers, without its output (which is never stored); None before it ended.
pub(super) fn run_result(c: RunColumns) -> Option<ExecResult> {
    let bytes = |b: Option<i64>| b.and_then(|b| u64::try_from(b).ok()).unwrap_or(0);
    c.duration_ms.map(|ms| ExecResult {
        exit_code: c.exit_code.and_then(|v| i32::try_from(v).ok()),
        signal: c.signal.and_then(|v| i32::try_from(v).ok()),
        timed_out: c.timed_out.unwrap_or(false),
        duration_ms: u64::try_from(ms).unwrap_or(0),
        stdout_bytes: bytes(c.stdout_bytes),
        stderr_bytes: bytes(c.stderr_bytes),
        // Written by execgate as a JSON array; anything else is shown as one line.
        kernel_refused: c
            .kernel_refused
            .map(|k| serde_json::from_str(&k).unwrap_or_else(|_| vec![k]))
            .unwrap_or_default(),
        ..ExecResult::default()
    })
}

/// The refusals of a run as stored: a JSON array, NULL when there were none.
pub(super) fn kernel_refused(r: &ExecResult) -> Option<String> {
    (!r.kernel_refused.is_empty())
        .then(|| serde_json::to_string(&r.kernel_refused).expect("strings serialise"))
}

/// What the request's stdin was; None without one.
pub(super) fn input(
    bytes: Option<i64>,
    sha256: Option<String>,
    head: Option<String>,
) -> Option<InputSummary> {
    match (bytes, sha256, head) {
        (Some(bytes), Some(sha256), Some(head)) => Some(InputSummary {
            bytes: u64::try_from(bytes).unwrap_or(0),
            sha256,
            head,
        }),
        _ => None,
    }
}

/// What a grant answering the request would save, for a request put to a human.
pub(super) fn grant(
    id: &str,
    pattern: Option<String>,
    kind: Option<String>,
    refused: Option<String>,
) -> Result<Option<GrantDraft>, StoreError> {
    match (pattern, kind) {
        (Some(pattern), Some(kind)) => Ok(Some(GrantDraft {
            pattern,
            kind: word(id, &kind)?,
            refused,
        })),
        _ => Ok(None),
    }
}
