//! PostgreSQL rows into records and rules: the same columns as on SQLite, read in
//! PostgreSQL's types. A row that does not decode is reported as corrupt, naming it.

use std::str::FromStr;

use sqlx_core::row::Row as _;
use sqlx_postgres::PgRow;

use crate::model::{Command, ExecResult, GrantDraft, InputSummary, Record, Rule, ToolCall};
use crate::store::StoreError;

/// Every column a request is read from, in the order [`request`] reads them.
pub(super) const REQUEST_COLUMNS: &str = "id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, \
     risk_reasons, status, decision, via, decided_by, error, created_at, expires_at, resolved_at, run, peer_uid, peer_pid, \
     exit_code, signal, timed_out, duration_ms, stdout_bytes, stderr_bytes, input_bytes, input_sha256, input_head, \
     tool_name, tool_input, front, rule_expires_at, node, grant_pattern, grant_kind, grant_refused";

/// Every column a rule is read from, in the order [`rule`] reads them.
pub(super) const RULE_COLUMNS: &str = "id, agent_id, pattern, kind, created_at, created_by, expires_at, last_used_at, \
     last_command, use_count, session_id, source_request_id, memory";

/// Reads a row selected with [`REQUEST_COLUMNS`].
pub(super) fn request(row: &PgRow) -> Result<Record, StoreError> {
    let id: String = row.try_get(0)?;
    let corrupt = |what: String| StoreError::Corrupt {
        id: id.clone(),
        what,
    };
    let command: Option<String> = row.try_get(4)?;
    let argv: Option<String> = row.try_get(5)?;
    let tool_name: Option<String> = row.try_get(30)?;
    let tool_input: Option<String> = row.try_get(31)?;
    let command = match (command, argv, tool_name, tool_input) {
        (Some(line), None, None, None) => Command::Line(line),
        (None, Some(argv), None, None) => {
            Command::Argv(serde_json::from_str(&argv).map_err(|e| corrupt(format!("argv: {e}")))?)
        }
        (None, None, Some(name), Some(input)) => Command::Tool(ToolCall {
            name,
            input: serde_json::from_str(&input).map_err(|e| corrupt(format!("tool_input: {e}")))?,
        }),
        // The schema's CHECKs keep exactly one; a row without is not a request.
        _ => return Err(corrupt("not exactly one of command, argv and tool".into())),
    };
    let risk_reasons: String = row.try_get(9)?;
    let decision: Option<String> = row.try_get(11)?;
    let via: Option<String> = row.try_get(12)?;
    let duration_ms: Option<i64> = row.try_get(24)?;
    let exit_code: Option<i64> = row.try_get(21)?;
    let signal: Option<i64> = row.try_get(22)?;
    let timed_out: Option<bool> = row.try_get(23)?;
    let stdout_bytes: Option<i64> = row.try_get(25)?;
    let stderr_bytes: Option<i64> = row.try_get(26)?;
    let input_bytes: Option<i64> = row.try_get(27)?;
    let input_sha256: Option<String> = row.try_get(28)?;
    let input_head: Option<String> = row.try_get(29)?;
    let peer_uid: Option<i64> = row.try_get(19)?;
    let peer_pid: Option<i64> = row.try_get(20)?;
    let grant_pattern: Option<String> = row.try_get(35)?;
    let grant_kind: Option<String> = row.try_get(36)?;
    Ok(Record {
        short_id: row.try_get(1)?,
        agent: row.try_get(2)?,
        session: row.try_get(3)?,
        command,
        cwd: row.try_get(6)?,
        reason: row.try_get(7)?,
        risk: word(&id, &row.try_get::<String, _>(8)?)?,
        risk_reasons: serde_json::from_str(&risk_reasons)
            .map_err(|e| corrupt(format!("risk_reasons: {e}")))?,
        status: word(&id, &row.try_get::<String, _>(10)?)?,
        decision: decision.map(|d| word(&id, &d)).transpose()?,
        via: via.map(|v| word(&id, &v)).transpose()?,
        decided_by: row.try_get(13)?,
        error: row.try_get(14)?,
        created_at: row.try_get(15)?,
        expires_at: row.try_get(16)?,
        resolved_at: row.try_get(17)?,
        run: row.try_get(18)?,
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
        front: row.try_get(32)?,
        rule_expires_at: row.try_get(33)?,
        node: row.try_get(34)?,
        grant: match (grant_pattern, grant_kind) {
            (Some(pattern), Some(kind)) => Some(GrantDraft {
                pattern,
                kind: word(&id, &kind)?,
                refused: row.try_get(37)?,
            }),
            _ => None,
        },
        id: id.clone(),
    })
}

/// Reads a row selected with [`RULE_COLUMNS`].
pub(super) fn rule(row: &PgRow) -> Result<Rule, StoreError> {
    let id: i64 = row.try_get(0)?;
    let name = format!("rule {id}");
    Ok(Rule {
        id,
        agent: row.try_get(1)?,
        pattern: row.try_get(2)?,
        kind: word(&name, &row.try_get::<String, _>(3)?)?,
        created_at: row.try_get(4)?,
        created_by: row.try_get(5)?,
        expires_at: row.try_get(6)?,
        last_used_at: row.try_get(7)?,
        last_command: row.try_get(8)?,
        use_count: row.try_get(9)?,
        session: row.try_get(10)?,
        source_request: row.try_get(11)?,
        memory: row.try_get(12)?,
    })
}

fn word<T: FromStr<Err = String>>(id: &str, s: &str) -> Result<T, StoreError> {
    s.parse().map_err(|what| StoreError::Corrupt {
        id: id.into(),
        what,
    })
}
