//! SQLite rows into records: which columns a request and a rule are read from, and the
//! timestamps as SQLite stores them (fixed-width text); what the other values mean is
//! the same on both backends (`store::decode`).

use chrono::{DateTime, Utc};
use rusqlite::Row;

use super::StoreError;
use crate::model::{Record, Rule, RuleEvent};
use crate::store::decode::{self, RunColumns, corrupt, word};

/// Every column a request is read from, in the order [`request`] reads them.
pub(super) const REQUEST_COLUMNS: &str = "id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, \
     risk_reasons, status, decision, via, decided_by, error, created_at, expires_at, resolved_at, run, peer_uid, peer_pid, \
     exit_code, signal, timed_out, duration_ms, stdout_bytes, stderr_bytes, input_bytes, input_sha256, input_head, \
     tool_name, tool_input, front, rule_expires_at, node, grant_pattern, grant_kind, grant_refused, \
     confinement, kernel_refused";

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
    let confinement: Option<String> = row.get(38)?;
    let kernel_refused: Option<String> = row.get(39)?;
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
        let command = decode::command(&id, command, argv, tool_name, tool_input)?;
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
            risk_reasons: decode::reasons(&id, &risk_reasons)?,
            created_at: time(&id, &created_at)?,
            expires_at: expires_at.map(|t| time(&id, &t)).transpose()?,
            resolved_at: resolved_at.map(|t| time(&id, &t)).transpose()?,
            run,
            result: decode::run_result(RunColumns {
                duration_ms,
                exit_code,
                signal,
                timed_out,
                stdout_bytes,
                stderr_bytes,
                kernel_refused,
            }),
            confinement: confinement.map(|c| word(&id, &c)).transpose()?,
            error,
            peer_uid: peer_uid.and_then(|u| u32::try_from(u).ok()),
            peer_pid: peer_pid.and_then(|p| i32::try_from(p).ok()),
            input: decode::input(input_bytes, input_sha256, input_head),
            front,
            node,
            grant: decode::grant(&id, grant_pattern, grant_kind, grant_refused)?,
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

fn time(id: &str, s: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| corrupt(id, format!("timestamp {s:?}: {e}")))
}

/// Reads a rule event (`exec_rule_event`'s columns in table order).
pub(super) fn rule_event(row: &Row<'_>) -> Result<RuleEvent, StoreError> {
    let id: i64 = row.get(0)?;
    let event: String = row.get(2)?;
    let at: String = row.get(3)?;
    let kind: String = row.get(10)?;
    let expires_at: Option<String> = row.get(11)?;
    let name = format!("rule event {id}");
    Ok(RuleEvent {
        id,
        rule_id: row.get(1)?,
        event: word(&name, &event)?,
        at: time(&name, &at)?,
        actor: row.get(4)?,
        via: row.get(5)?,
        request: row.get(6)?,
        agent: row.get(7)?,
        session: row.get(8)?,
        pattern: row.get(9)?,
        kind: word(&name, &kind)?,
        expires_at: expires_at.map(|t| time(&name, &t)).transpose()?,
        memory: row.get(12)?,
        node: row.get(13)?,
    })
}
