//! PostgreSQL rows into records and rules: the same columns as on SQLite, read in
//! PostgreSQL's types. A row that does not decode is reported as corrupt, naming it.

use sqlx_core::row::Row as _;
use sqlx_postgres::PgRow;

use crate::model::{Record, Rule, RuleEvent};
use crate::store::StoreError;
use crate::store::decode::{self, RunColumns, word};

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
pub(super) fn request(row: &PgRow) -> Result<Record, StoreError> {
    let id: String = row.try_get(0)?;
    let command = decode::command(
        &id,
        row.try_get(4)?,
        row.try_get(5)?,
        row.try_get(30)?,
        row.try_get(31)?,
    )?;
    let risk_reasons: String = row.try_get(9)?;
    let decision: Option<String> = row.try_get(11)?;
    let via: Option<String> = row.try_get(12)?;
    let peer_uid: Option<i64> = row.try_get(19)?;
    let peer_pid: Option<i64> = row.try_get(20)?;
    Ok(Record {
        short_id: row.try_get(1)?,
        agent: row.try_get(2)?,
        session: row.try_get(3)?,
        command,
        cwd: row.try_get(6)?,
        reason: row.try_get(7)?,
        risk: word(&id, &row.try_get::<String, _>(8)?)?,
        risk_reasons: decode::reasons(&id, &risk_reasons)?,
        status: word(&id, &row.try_get::<String, _>(10)?)?,
        decision: decision.map(|d| word(&id, &d)).transpose()?,
        via: via.map(|v| word(&id, &v)).transpose()?,
        decided_by: row.try_get(13)?,
        error: row.try_get(14)?,
        created_at: row.try_get(15)?,
        expires_at: row.try_get(16)?,
        resolved_at: row.try_get(17)?,
        run: row.try_get(18)?,
        result: decode::run_result(RunColumns {
            duration_ms: row.try_get(24)?,
            exit_code: row.try_get(21)?,
            signal: row.try_get(22)?,
            timed_out: row.try_get(23)?,
            stdout_bytes: row.try_get(25)?,
            stderr_bytes: row.try_get(26)?,
            kernel_refused: row.try_get(39)?,
        }),
        confinement: row
            .try_get::<Option<String>, _>(38)?
            .map(|c| word(&id, &c))
            .transpose()?,
        peer_uid: peer_uid.and_then(|u| u32::try_from(u).ok()),
        peer_pid: peer_pid.and_then(|p| i32::try_from(p).ok()),
        input: decode::input(row.try_get(27)?, row.try_get(28)?, row.try_get(29)?),
        front: row.try_get(32)?,
        rule_expires_at: row.try_get(33)?,
        node: row.try_get(34)?,
        grant: decode::grant(&id, row.try_get(35)?, row.try_get(36)?, row.try_get(37)?)?,
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

/// Reads a rule event (`exec_rule_event`'s columns in table order).
pub(super) fn rule_event(row: &PgRow) -> Result<RuleEvent, StoreError> {
    let id: i64 = row.try_get(0)?;
    let name = format!("rule event {id}");
    Ok(RuleEvent {
        id,
        rule_id: row.try_get(1)?,
        event: word(&name, &row.try_get::<String, _>(2)?)?,
        at: row.try_get(3)?,
        actor: row.try_get(4)?,
        via: row.try_get(5)?,
        request: row.try_get(6)?,
        agent: row.try_get(7)?,
        session: row.try_get(8)?,
        pattern: row.try_get(9)?,
        kind: word(&name, &row.try_get::<String, _>(10)?)?,
        expires_at: row.try_get(11)?,
        memory: row.try_get(12)?,
        node: row.try_get(13)?,
    })
}
