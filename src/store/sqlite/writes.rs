//! Every change to the database, one type per kind of write, each with the statements it
//! runs and the result its caller gets. The writer (`writer.rs`) runs them, several to a
//! transaction; each owns its data, since it crosses to the writer's thread and is
//! applied a second time, alone, if the group it was committed with fails.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};

use super::chain;
use super::rows::{self, RULE_COLUMNS};
use super::{
    Actor, NewRequest, NewRule, Resolution, SHORT_ID_QUARANTINE, StoreError, random_short_id, ts,
};
use crate::model::{Confine, Decision, ExecResult, Record, Rule, RuleChange, Status};
use crate::store::audit::EntryKind;
use crate::store::audit::Scope;

/// A change to the database and what it answers once committed.
pub(super) trait Write: Send + 'static {
    type Output: Send + 'static;

    /// True when the write is a single statement, which SQLite commits atomically on its
    /// own: alone, it needs no BEGIN and COMMIT around it.
    fn is_one_statement(&self) -> bool;

    /// Runs the write's statements on `conn`, inside whatever transaction the writer
    /// opened. Statements are prepared once per connection and cached.
    fn apply(&self, conn: &Connection) -> Result<Self::Output, StoreError>;
}

/// A request that policy decided without a human; with the rules that approved it, whose
/// use is recorded in the same transaction.
#[derive(Debug)]
pub(super) struct InsertDecided {
    pub scope: Scope,
    pub new: NewRequest,
    pub resolution: Resolution,
    pub error: Option<String>,
    pub rules_used: Vec<i64>,
}

impl Write for InsertDecided {
    type Output = Record;

    fn is_one_statement(&self) -> bool {
        self.rules_used.is_empty() && !self.scope.chain
    }

    fn apply(&self, conn: &Connection) -> Result<Record, StoreError> {
        let (new, resolution) = (&self.new, &self.resolution);
        // No human sees this id, so it need not be unique; lookups prefer pending rows.
        let short_id = random_short_id();
        let error = self.error.as_deref();
        let row = Row {
            short_id: &short_id,
            status: resolution.status,
            resolution: Some(resolution),
            error,
            expires_at: None,
            asked: false,
        };
        insert_request(conn, new, &row, &self.scope.node)?;
        chain::append(
            conn,
            &self.scope,
            EntryKind::Decided,
            &new.id,
            resolution.resolved_at,
        )?;
        if !self.rules_used.is_empty() {
            let mut used = conn.prepare_cached(
                "UPDATE exec_allowlist SET last_used_at = ?1, last_command = ?2, use_count = use_count + 1 WHERE id = ?3",
            )?;
            let command = new.spec.command.display();
            for rule in &self.rules_used {
                used.execute(params![ts(resolution.resolved_at), &*command, rule])?;
            }
        }
        Ok(new.record(&short_id, Some(resolution), error, None, &self.scope.node))
    }
}

/// A request that waits for a human, with a short id no pending request holds and no
/// request shown to a human used in the last day.
#[derive(Debug)]
pub(super) struct InsertPending {
    pub scope: Scope,
    pub new: NewRequest,
    pub expires_at: DateTime<Utc>,
}

impl Write for InsertPending {
    type Output = Record;

    fn is_one_statement(&self) -> bool {
        false
    }

    fn apply(&self, conn: &Connection) -> Result<Record, StoreError> {
        let new = &self.new;
        let cutoff = ts(new.created_at - SHORT_ID_QUARANTINE);
        // Taken: held by a pending request, or shown to a human in the last day.
        let mut taken = conn.prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM exec_approval WHERE asked = 1 AND short_id = ?1 \
             AND (status = 'pending' OR (shown = 1 AND created_at > ?2)))",
        )?;
        let mut chosen = None;
        for _ in 0..64 {
            let candidate = random_short_id();
            if !taken.query_row(params![candidate, cutoff], |row| row.get::<_, bool>(0))? {
                chosen = Some(candidate);
                break;
            }
        }
        let short_id = chosen.ok_or(StoreError::ShortIdsExhausted)?;
        let row = Row {
            short_id: &short_id,
            status: Status::Pending,
            resolution: None,
            error: None,
            expires_at: Some(self.expires_at),
            asked: true,
        };
        insert_request(conn, new, &row, &self.scope.node)?;
        chain::append(
            conn,
            &self.scope,
            EntryKind::Request,
            &new.id,
            new.created_at,
        )?;
        Ok(new.record(
            &short_id,
            None,
            None,
            Some(self.expires_at),
            &self.scope.node,
        ))
    }
}

/// The one transition out of `pending`; answers whether this write made it. With
/// `always_rule`, the winner stores the rule in the same transaction.
#[derive(Debug)]
pub(super) struct Resolve {
    pub scope: Scope,
    pub id: String,
    pub resolution: Resolution,
    pub error: Option<String>,
    pub always_rule: Option<NewRule>,
}

impl Write for Resolve {
    type Output = bool;

    fn is_one_statement(&self) -> bool {
        self.always_rule.is_none() && !self.scope.chain
    }

    fn apply(&self, conn: &Connection) -> Result<bool, StoreError> {
        let r = &self.resolution;
        let done = conn
            .prepare_cached(
                "UPDATE exec_approval SET status = ?1, decision = ?2, via = ?3, decided_by = ?4, resolved_at = ?5, \
                 error = ?6, shown = max(shown, ?8), rule_expires_at = ?9 WHERE id = ?7 AND status = 'pending'",
            )?
            .execute(params![
                r.status.as_str(),
                r.decision.map(Decision::as_str),
                r.via.as_str(),
                r.decided_by,
                ts(r.resolved_at),
                self.error,
                self.id,
                r.shown,
                self.always_rule.as_ref().and_then(|rule| rule.expires_at).map(ts),
            ])?
            == 1;
        if done {
            chain::append(
                conn,
                &self.scope,
                EntryKind::Resolution,
                &self.id,
                r.resolved_at,
            )?;
        }
        // Only the winner of the transition stores the rule.
        if done && let Some(rule) = &self.always_rule {
            insert_rule(conn, rule, r.resolved_at, &self.scope)?;
        }
        Ok(done)
    }
}

/// Every pending request resolved at once (crash recovery at startup); answers which.
#[derive(Debug)]
pub(super) struct SweepPending {
    pub scope: Scope,
    pub resolution: Resolution,
    pub error: String,
}

impl Write for SweepPending {
    type Output = Vec<String>;

    fn is_one_statement(&self) -> bool {
        !self.scope.chain
    }

    fn apply(&self, conn: &Connection) -> Result<Vec<String>, StoreError> {
        let r = &self.resolution;
        let mut statement = conn.prepare_cached(
            "UPDATE exec_approval SET status = ?1, decision = NULL, via = ?2, decided_by = NULL, \
             resolved_at = ?3, error = ?4, shown = max(shown, ?5) WHERE status = 'pending' \
             RETURNING id",
        )?;
        let ids = statement
            .query_map(
                params![
                    r.status.as_str(),
                    r.via.as_str(),
                    ts(r.resolved_at),
                    self.error,
                    r.shown,
                ],
                |row| row.get(0),
            )?
            .collect::<Result<Vec<String>, _>>()?;
        for id in &ids {
            chain::append(conn, &self.scope, EntryKind::Resolution, id, r.resolved_at)?;
        }
        Ok(ids)
    }
}

/// How a run ended: its numbers (the output itself is never stored).
#[derive(Debug)]
pub(super) struct RecordResult {
    pub id: String,
    exit_code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    duration_ms: i64,
    stdout_bytes: i64,
    stderr_bytes: i64,
    confinement: Option<&'static str>,
    kernel_refused: Option<String>,
}

impl RecordResult {
    pub fn of(id: &str, r: &ExecResult) -> RecordResult {
        RecordResult {
            id: id.to_string(),
            exit_code: r.exit_code,
            signal: r.signal,
            timed_out: r.timed_out,
            duration_ms: i64::try_from(r.duration_ms).unwrap_or(i64::MAX),
            stdout_bytes: i64::try_from(r.stdout_bytes).unwrap_or(i64::MAX),
            stderr_bytes: i64::try_from(r.stderr_bytes).unwrap_or(i64::MAX),
            confinement: r.confinement.map(Confine::as_str),
            kernel_refused: super::super::decode::kernel_refused(r),
        }
    }
}

impl Write for RecordResult {
    type Output = ();

    fn is_one_statement(&self) -> bool {
        true
    }

    fn apply(&self, conn: &Connection) -> Result<(), StoreError> {
        conn.prepare_cached(
            "UPDATE exec_approval SET exit_code = ?1, signal = ?2, timed_out = ?3, duration_ms = ?4, \
             stdout_bytes = ?5, stderr_bytes = ?6, kernel_refused = ?7, \
             confinement = coalesce(?8, confinement) WHERE id = ?9",
        )?
        .execute(params![
            self.exit_code,
            self.signal,
            self.timed_out,
            self.duration_ms,
            self.stdout_bytes,
            self.stderr_bytes,
            self.kernel_refused,
            self.confinement,
            self.id,
        ])?;
        Ok(())
    }
}

/// Which chat message shows a request.
#[derive(Debug)]
pub(super) struct SetMessageExternalId {
    pub id: String,
    pub external: String,
}

impl Write for SetMessageExternalId {
    type Output = ();

    fn is_one_statement(&self) -> bool {
        false
    }

    fn apply(&self, conn: &Connection) -> Result<(), StoreError> {
        conn.prepare_cached(
            "INSERT OR REPLACE INTO exec_approval_message (external_id, request_id) VALUES (?1, ?2)",
        )?
        .execute(params![self.external, self.id])?;
        // The request's own column keeps the first message, as listings show it.
        conn.prepare_cached(
            "UPDATE exec_approval SET message_external_id = ?1 \
             WHERE id = ?2 AND message_external_id IS NULL",
        )?
        .execute(params![self.external, self.id])?;
        Ok(())
    }
}

/// Short ids a human may have seen after their request's transition was written.
#[derive(Debug)]
pub(super) struct MarkShown {
    pub ids: Vec<String>,
}

impl Write for MarkShown {
    type Output = ();

    fn is_one_statement(&self) -> bool {
        self.ids.len() <= 1
    }

    fn apply(&self, conn: &Connection) -> Result<(), StoreError> {
        let mut mark = conn.prepare_cached(
            "UPDATE exec_approval SET shown = 1 WHERE id = ?1 AND asked = 1 AND shown = 0",
        )?;
        for id in &self.ids {
            mark.execute(params![id])?;
        }
        Ok(())
    }
}

/// A rule, unless an identical one exists; answers the rule as stored either way.
#[derive(Debug)]
pub(super) struct AddRule {
    pub scope: Scope,
    pub rule: NewRule,
    pub now: DateTime<Utc>,
}

impl Write for AddRule {
    type Output = Rule;

    fn is_one_statement(&self) -> bool {
        false
    }

    fn apply(&self, conn: &Connection) -> Result<Rule, StoreError> {
        let id = insert_rule(conn, &self.rule, self.now, &self.scope)?;
        let sql = format!("SELECT {RULE_COLUMNS} FROM exec_allowlist WHERE id = ?1");
        let mut statement = conn.prepare_cached(&sql)?;
        let mut found = statement.query(params![id])?;
        match found.next()? {
            Some(row) => rows::rule(row),
            None => Err(StoreError::Corrupt {
                id: format!("rule {id}"),
                what: "not found right after it was written".into(),
            }),
        }
    }
}

/// Deletes a rule, its removal recorded first; answers whether one had that id.
#[derive(Debug)]
pub(super) struct RemoveRule {
    pub scope: Scope,
    pub id: i64,
    pub actor: Actor,
    pub now: DateTime<Utc>,
}

impl Write for RemoveRule {
    type Output = bool;

    fn is_one_statement(&self) -> bool {
        false
    }

    fn apply(&self, conn: &Connection) -> Result<bool, StoreError> {
        remove_rules(conn, &self.scope, &[self.id], &self.actor, self.now).map(|n| n == 1)
    }
}

/// Deletes the rules meant to last only until the daemon stopped, each removal recorded;
/// answers how many.
#[derive(Debug)]
pub(super) struct ForgetMemoryRules {
    pub scope: Scope,
    pub now: DateTime<Utc>,
}

impl Write for ForgetMemoryRules {
    type Output = usize;

    fn is_one_statement(&self) -> bool {
        false
    }

    fn apply(&self, conn: &Connection) -> Result<usize, StoreError> {
        let ids = conn
            .prepare_cached("SELECT id FROM exec_allowlist WHERE memory = 1 ORDER BY id")?
            .query_map([], |row| row.get(0))?
            .collect::<Result<Vec<i64>, _>>()?;
        remove_rules(conn, &self.scope, &ids, &Actor::restart(), self.now)
    }
}

/// Records the expiry of every rule whose time has come since it was last added or
/// renewed, at the moment it expired; answers how many. The rows stay (an expired rule
/// approves nothing, and may be granted again).
#[derive(Debug)]
pub(super) struct ExpireRules {
    pub scope: Scope,
    pub now: DateTime<Utc>,
}

impl Write for ExpireRules {
    type Output = usize;

    fn is_one_statement(&self) -> bool {
        false
    }

    fn apply(&self, conn: &Connection) -> Result<usize, StoreError> {
        let due = conn
            .prepare_cached(
                "SELECT r.id, r.expires_at FROM exec_allowlist r WHERE r.expires_at <= ?1 \
                 AND coalesce((SELECT e.event FROM exec_rule_event e WHERE e.rule_id = r.id \
                               ORDER BY e.id DESC LIMIT 1), '') <> 'expired' ORDER BY r.expires_at, r.id",
            )?
            .query_map(params![ts(self.now)], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        for (id, at) in &due {
            let at = DateTime::parse_from_rfc3339(at)
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or(self.now);
            chain::rule_event(
                conn,
                &self.scope,
                *id,
                RuleChange::Expired,
                at,
                &Actor::execgate(),
            )?;
        }
        Ok(due.len())
    }
}

/// At start: rows written before the chain existed, vouched for as found (see
/// `chain::adopt`); answers how many entries that took.
#[derive(Debug)]
pub(super) struct Adopt {
    pub scope: Scope,
    pub now: DateTime<Utc>,
}

impl Write for Adopt {
    type Output = u64;

    fn is_one_statement(&self) -> bool {
        false
    }

    fn apply(&self, conn: &Connection) -> Result<u64, StoreError> {
        chain::adopt(conn, &self.scope, self.now)
    }
}

/// A new segment of this node's chain, after a break.
#[derive(Debug)]
pub(super) struct Segment {
    pub scope: Scope,
    pub why: String,
    pub now: DateTime<Utc>,
}

impl Write for Segment {
    type Output = ();

    fn is_one_statement(&self) -> bool {
        false
    }

    fn apply(&self, conn: &Connection) -> Result<(), StoreError> {
        chain::append(conn, &self.scope, EntryKind::Segment, &self.why, self.now)
    }
}

/// A value kept across restarts (`exec_state`), replaced whole.
#[derive(Debug)]
pub(super) struct SetState {
    pub key: String,
    pub value: String,
}

impl Write for SetState {
    type Output = ();

    fn is_one_statement(&self) -> bool {
        true
    }

    fn apply(&self, conn: &Connection) -> Result<(), StoreError> {
        conn.prepare_cached(
            "INSERT INTO exec_state (key, value) VALUES (?1, ?2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )?
        .execute(params![self.key, self.value])?;
        Ok(())
    }
}

/// What a request's row holds beyond the request itself.
struct Row<'a> {
    short_id: &'a str,
    status: Status,
    resolution: Option<&'a Resolution>,
    error: Option<&'a str>,
    expires_at: Option<DateTime<Utc>>,
    /// Put to a human: only those ids are kept from reuse.
    asked: bool,
}

fn insert_request(
    conn: &Connection,
    new: &NewRequest,
    row: &Row<'_>,
    node: &str,
) -> Result<(), StoreError> {
    let spec = &new.spec;
    let argv = spec
        .command
        .argv()
        .map(|a| serde_json::to_string(a).expect("strings serialise"));
    let tool = spec.command.tool();
    let tool_input = tool.map(|t| t.input.to_string());
    let reasons = serde_json::to_string(&new.risk_reasons).expect("strings serialise");
    let resolution = row.resolution;
    conn.prepare_cached(
        "INSERT INTO exec_approval (id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, \
         risk_reasons, status, decision, via, decided_by, error, created_at, expires_at, resolved_at, asked, \
         peer_uid, peer_pid, run, input_bytes, input_sha256, input_head, tool_name, tool_input, front, node, \
         grant_pattern, grant_kind, grant_refused, confinement) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, \
         ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33)",
    )?
    .execute(params![
        new.id,
        row.short_id,
        spec.agent.as_str(),
        spec.session,
        spec.command.line(),
        argv,
        spec.cwd,
        spec.reason,
        new.risk.as_str(),
        reasons,
        row.status.as_str(),
        resolution.and_then(|r| r.decision).map(Decision::as_str),
        resolution.map(|r| r.via.as_str()),
        resolution.and_then(|r| r.decided_by.as_deref()),
        row.error,
        ts(new.created_at),
        row.expires_at.map(ts),
        resolution.map(|r| ts(r.resolved_at)),
        row.asked,
        spec.peer_uid,
        spec.peer_pid,
        spec.run,
        spec.input.as_ref().map(|i| i64::try_from(i.bytes).unwrap_or(i64::MAX)),
        spec.input.as_ref().map(|i| i.sha256.as_str()),
        spec.input.as_ref().map(|i| i.head.as_str()),
        tool.map(|t| t.name.as_str()),
        tool_input,
        spec.front,
        node,
        new.grant.as_ref().map(|g| g.pattern.as_str()),
        new.grant.as_ref().map(|g| g.kind.as_str()),
        new.grant.as_ref().and_then(|g| g.refused.as_deref()),
        new.confinement.map(Confine::as_str),
    ])?;
    Ok(())
}

/// Inserts a rule, or lengthens the identical one (same agent, session, kind and
/// pattern) to live as long as the longer of the two: no expiry beats any, a later
/// expiry beats an earlier, and a rule kept across restarts stays kept. Either is
/// recorded as a rule event (added, renewed). Returns the rule's id.
fn insert_rule(
    conn: &Connection,
    rule: &NewRule,
    now: DateTime<Utc>,
    scope: &Scope,
) -> Result<i64, StoreError> {
    let existing: Option<i64> = conn
        .prepare_cached(
            "SELECT id FROM exec_allowlist \
             WHERE ifnull(agent_id, '') = ifnull(?1, '') AND ifnull(session_id, '') = ifnull(?2, '') \
               AND kind = ?3 AND pattern = ?4",
        )?
        .query_row(
            params![rule.agent, rule.session, rule.kind.as_str(), rule.pattern],
            |row| row.get(0),
        )
        .optional()?;
    let (id, change) = match existing {
        Some(id) => {
            conn.prepare_cached(
                "UPDATE exec_allowlist SET \
                     expires_at = CASE WHEN expires_at IS NULL OR ?2 IS NULL THEN NULL \
                                       ELSE max(expires_at, ?2) END, \
                     memory = min(memory, ?3) \
                 WHERE id = ?1",
            )?
            .execute(params![id, rule.expires_at.map(ts), rule.memory])?;
            (id, RuleChange::Renewed)
        }
        None => {
            conn.prepare_cached(
                "INSERT INTO exec_allowlist \
                 (agent_id, session_id, pattern, kind, created_at, created_by, expires_at, source_request_id, memory, node) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                rule.agent,
                rule.session,
                rule.pattern,
                rule.kind.as_str(),
                ts(now),
                rule.created_by,
                rule.expires_at.map(ts),
                rule.source_request,
                rule.memory,
                &*scope.node,
            ])?;
            (conn.last_insert_rowid(), RuleChange::Added)
        }
    };
    chain::rule_event(conn, scope, id, change, now, &rule.actor())?;
    Ok(id)
}

/// Deletes rules, recording each removal (as the rule was) first; answers how many
/// existed.
fn remove_rules(
    conn: &Connection,
    scope: &Scope,
    ids: &[i64],
    actor: &Actor,
    now: DateTime<Utc>,
) -> Result<usize, StoreError> {
    let mut removed = 0;
    for id in ids {
        let exists = conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM exec_allowlist WHERE id = ?1)")?
            .query_row(params![id], |row| row.get::<_, bool>(0))?;
        if !exists {
            continue;
        }
        chain::rule_event(conn, scope, *id, RuleChange::Removed, now, actor)?;
        conn.prepare_cached("DELETE FROM exec_allowlist WHERE id = ?1")?
            .execute(params![id])?;
        removed += 1;
    }
    Ok(removed)
}
