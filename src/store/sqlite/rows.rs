//! Rows into records: the one place that knows which columns a request and a rule are
//! read from, and what each stored text means. A row that does not decode is reported
//! as corrupt, naming it, rather than read as something it is not.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use rusqlite::Row;

use super::StoreError;
use crate::model::{Command, ExecResult, GrantDraft, InputSummary, Record, Rule, ToolCall};

/// Every column a request is read from, in the order [`request`] reads them.
pub(super) const REQUEST_COLUMNS: &str = "id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, \
     risk_reasons, status, decision, via, decided_by, error, created_at, expires_at, resolved_at, run, peer_uid, peer_pid, \
     exit_code, signal, timed_out, duration_ms, stdout_bytes, stderr_bytes, input_bytes, input_sha256, input_head, \
     tool_name, tool_input, front, rule_expires_at, node, grant_pattern, grant_kind, grant_refused";

/// Every column a rule is read from, in the order [`rule`] reads them.
pub(super) const RULE_COLUMNS: &str = "id, agent_id, pattern, kind, created_at, created_by, expires_at, last_used_at, \
     last_command, use_count, session_id, source_request_id, memory";

/// Reads a row selected with [`REQUEST_COLUMNS`].
pub(super) fn request(row: &Row<'_>) -> Result<Record, StoreError> {
    let id: String = row.get(0)?;
    let command: Option<String> = row.get(4)?;
    let argv: Option<String> = row.get(5)?;
    let risk: String = row.get(8)?;
    let risk_reasons: String = row.get(9)?;
    let status: String = row.get(10)?;
    let decision: Option<String> = row.get(11)?;
    let via: Option<String> = row.get(12)?;
    let created_at: String = row.get(15)?;
    let expires_at: Option<String> = row.get(16)?;
    let resolved_at: Option<String> = row.get(17)?;
    let duration_ms: Option<i64> = row.get(24)?;
    let exit_code: Option<i64> = row.get(21)?;
    let signal: Option<i64> = row.get(22)?;
    let timed_out: Option<bool> = row.get(23)?;
    let stdout_bytes: Option<i64> = row.get(25)?;
    let stderr_bytes: Option<i64> = row.get(26)?;
    let input_bytes: Option<i64> = row.get(27)?;
    let input_sha256: Option<String> = row.get(28)?;
    let input_head: Option<String> = row.get(29)?;
    let tool_name: Option<String> = row.get(30)?;
    let tool_input: Option<String> = row.get(31)?;
    let front: Option<String> = row.get(32)?;
    let rule_expires_at: Option<String> = row.get(33)?;
    let node: String = row.get(34)?;
    let grant_pattern: Option<String> = row.get(35)?;
    let grant_kind: Option<String> = row.get(36)?;
    let grant_refused: Option<String> = row.get(37)?;
    let peer_uid: Option<i64> = row.get(19)?;
    let peer_pid: Option<i64> = row.get(20)?;
    let (short_id, agent, session, cwd, reason, decided_by, error, run) = (
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(6)?,
        row.get(7)?,
        row.get(13)?,
        row.get(14)?,
        row.get(18)?,
    );
    let decode = || -> Result<Record, StoreError> {
        let corrupt = |what: String| corrupt(&id, what);
        let command = match (command, argv, tool_name, tool_input) {
            (Some(line), None, None, None) => Command::Line(line),
            (None, Some(argv), None, None) => Command::Argv(
                serde_json::from_str(&argv).map_err(|e| corrupt(format!("argv: {e}")))?,
            ),
            (None, None, Some(name), Some(input)) => Command::Tool(ToolCall {
                name,
                input: serde_json::from_str(&input)
                    .map_err(|e| corrupt(format!("tool_input: {e}")))?,
            }),
            // The schema's CHECKs keep exactly one; a row without is not a request.
            _ => return Err(corrupt("not exactly one of command, argv and tool".into())),
        };
        Ok(Record {
            short_id,
            agent,
            session,
            command,
            cwd,
            reason,
            status: word(&id, &status)?,
            decision: decision.map(|d| word(&id, &d)).transpose()?,
            rule_expires_at: rule_expires_at.map(|t| time(&id, &t)).transpose()?,
            via: via.map(|v| word(&id, &v)).transpose()?,
            decided_by,
            risk: word(&id, &risk)?,
            risk_reasons: serde_json::from_str(&risk_reasons)
                .map_err(|e| corrupt(format!("risk_reasons: {e}")))?,
            created_at: time(&id, &created_at)?,
            expires_at: expires_at.map(|t| time(&id, &t)).transpose()?,
            resolved_at: resolved_at.map(|t| time(&id, &t)).transpose()?,
            run,
            // A run's numbers, without its output (which is never stored).
            result: duration_ms.map(|ms| ExecResult {
                exit_code: exit_code.and_then(|c| i32::try_from(c).ok()),
                signal: signal.and_then(|s| i32::try_from(s).ok()),
                timed_out: timed_out.unwrap_or(false),
                duration_ms: u64::try_from(ms).unwrap_or(0),
                stdout_bytes: stdout_bytes
                    .and_then(|b| u64::try_from(b).ok())
                    .unwrap_or(0),
                stderr_bytes: stderr_bytes
                    .and_then(|b| u64::try_from(b).ok())
                    .unwrap_or(0),
                ..ExecResult::default()
            }),
            error,
            peer_uid: peer_uid.and_then(|u| u32::try_from(u).ok()),
            peer_pid: peer_pid.and_then(|p| i32::try_from(p).ok()),
            input: match (input_bytes, input_sha256, input_head) {
                (Some(bytes), Some(sha256), Some(head)) => Some(InputSummary {
                    bytes: u64::try_from(bytes).unwrap_or(0),
                    sha256,
                    head,
                }),
                _ => None,
            },
            front,
            node,
            grant: match (grant_pattern, grant_kind) {
                (Some(pattern), Some(kind)) => Some(GrantDraft {
                    pattern,
                    kind: word(&id, &kind)?,
                    refused: grant_refused,
                }),
                _ => None,
            },
            id: id.clone(),
        })
    };
    decode()
}

/// Reads a row selected with [`RULE_COLUMNS`].
pub(super) fn rule(row: &Row<'_>) -> Result<Rule, StoreError> {
    let id: i64 = row.get(0)?;
    let kind: String = row.get(3)?;
    let created_at: String = row.get(4)?;
    let expires_at: Option<String> = row.get(6)?;
    let last_used_at: Option<String> = row.get(7)?;
    let (agent, pattern, created_by, last_command, use_count) = (
        row.get(1)?,
        row.get(2)?,
        row.get(5)?,
        row.get(8)?,
        row.get(9)?,
    );
    let (session, source_request, memory) = (row.get(10)?, row.get(11)?, row.get(12)?);
    let name = format!("rule {id}");
    let decode = || -> Result<Rule, StoreError> {
        Ok(Rule {
            id,
            agent,
            pattern,
            kind: word(&name, &kind)?,
            created_at: time(&name, &created_at)?,
            created_by,
            expires_at: expires_at.map(|t| time(&name, &t)).transpose()?,
            last_used_at: last_used_at.map(|t| time(&name, &t)).transpose()?,
            last_command,
            use_count,
            session,
            source_request,
            memory,
        })
    };
    decode()
}

fn corrupt(id: &str, what: String) -> StoreError {
    StoreError::Corrupt {
        id: id.into(),
        what,
    }
}

fn time(id: &str, s: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| corrupt(id, format!("timestamp {s:?}: {e}")))
}

fn word<T: FromStr<Err = String>>(id: &str, s: &str) -> Result<T, StoreError> {
    s.parse().map_err(|what| corrupt(id, what))
}
