//! The owner's allowlist rules: checked, stored, and put in force together, so that no
//! front reaches past `Approvals` to the store and forgets the last step.

use chrono::{DateTime, Utc};

use super::Approvals;
use crate::model::{AgentName, Rule, RuleEvent, RuleKind, Via};
use crate::policy::suggest::Suggestion;
use crate::policy::{rules, shell};
use crate::store::{Actor, NewRule, RequestFilter, StoreError};

/// How many of the newest requests suggestions are made from.
pub const SUGGEST_FROM: u32 = 5_000;

/// A rule as the owner asked for it, before it is checked.
#[derive(Clone, Debug)]
pub struct RuleRequest {
    /// `None`: every agent.
    pub agent: Option<String>,
    pub pattern: String,
    pub kind: RuleKind,
    pub expires_at: Option<DateTime<Utc>>,
    /// Accept a glob that would approve nearly everything.
    pub force: bool,
    /// Who added it, as recorded.
    pub created_by: String,
    /// The front it came by (`cli`, `web`).
    pub via: Via,
}

/// A rule as stored, with what its owner should know about it.
#[derive(Clone, Debug)]
pub struct AddedRule {
    pub rule: Rule,
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// The request is malformed: the message names the field.
    #[error("{0}")]
    Invalid(String),
    /// A glob that would approve nearly everything, without `force`.
    #[error("{0}; refusing without force")]
    TooBroad(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Approvals {
    /// Every rule, oldest first.
    pub async fn rules(&self) -> Result<Vec<Rule>, StoreError> {
        self.store.list_rules().await
    }

    /// Checks, stores and puts in force a rule (an identical rule is returned instead of
    /// duplicated). Patterns are normalised as commands are, so a rule means what it
    /// says however it was spaced.
    pub async fn add_rule(
        &self,
        request: RuleRequest,
        now: DateTime<Utc>,
    ) -> Result<AddedRule, RuleError> {
        let invalid = |m: &str| Err(RuleError::Invalid(m.to_string()));
        if request
            .agent
            .as_deref()
            .is_some_and(|a| !AgentName::is_valid(a))
        {
            return Err(RuleError::Invalid(format!(
                "`agent` must match {}",
                AgentName::PATTERN
            )));
        }
        if request.pattern.contains(['\0', '\n', '\r']) {
            return invalid("`pattern` contains a NUL byte or a newline");
        }
        let pattern = shell::normalize(&request.pattern);
        if pattern.is_empty() {
            return invalid("`pattern` is empty");
        }
        if request.kind == RuleKind::Tool {
            if !pattern
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._:-*?[]{},!".contains(&b))
                || pattern.len() > crate::model::ToolCall::MAX_NAME
            {
                return invalid(
                    "`pattern` of a tool rule is a glob over tool names: [A-Za-z0-9._:-] and the wildcards * ? [ ] { }",
                );
            }
            rules::compile_tool_glob(&pattern)
                .map_err(|e| RuleError::Invalid(format!("`pattern` is not a valid glob: {e}")))?;
            if let Some(why) = rules::tool_rule_too_broad(&pattern).filter(|_| !request.force) {
                return Err(RuleError::TooBroad(why));
            }
        }
        if request.kind == RuleKind::Glob {
            rules::compile_allow_glob(&pattern)
                .map_err(|e| RuleError::Invalid(format!("`pattern` is not a valid glob: {e}")))?;
            if let Some(why) = rules::too_broad(&pattern).filter(|_| !request.force) {
                return Err(RuleError::TooBroad(why));
            }
        }
        if request.expires_at.is_some_and(|t| t <= now) {
            return invalid("`expires_at` is in the past");
        }
        let warnings: Vec<String> = match request.kind {
            RuleKind::Glob => rules::runs_anything(&pattern)
                .into_iter()
                .chain(rules::wildcard_is_yours(&pattern))
                .collect(),
            RuleKind::Exact | RuleKind::Tool => Vec::new(),
        };
        let rule = NewRule {
            agent: request.agent,
            session: None,
            pattern,
            kind: request.kind,
            created_by: request.created_by,
            via: Some(request.via),
            expires_at: request.expires_at,
            source_request: None,
            memory: false,
        };
        let rule = self.store.add_rule(rule, now).await?;
        self.reload_rules().await?;
        self.tell_rules().await;
        tracing::info!(rule = rule.id, pattern = %rule.pattern, kind = %rule.kind, "allowlist rule added");
        for w in &warnings {
            tracing::warn!(rule = rule.id, warning = %w, "allowlist rule added with a warning");
        }
        Ok(AddedRule { rule, warnings })
    }

    /// The glob rules worth suggesting to the owner (`policy::suggest`), from the newest
    /// [`SUGGEST_FROM`] requests of the last `days` days: each that would have approved
    /// at least `min` of those a human approved, and none a human denied. The work runs
    /// on a blocking thread: each candidate judges the history again.
    pub async fn suggestions(
        &self,
        days: u32,
        min: usize,
    ) -> Result<Vec<Suggestion>, super::ApprovalError> {
        let now = Utc::now();
        let since = now - chrono::Duration::days(i64::from(days));
        let mut history = self
            .store
            .list(&RequestFilter {
                status: None,
                agent: None,
                limit: SUGGEST_FROM,
                before: None,
            })
            .await?;
        history.retain(|r| r.created_at >= since);
        let policy = std::sync::Arc::clone(&self.policy);
        tokio::task::spawn_blocking(move || policy.suggest(&history, min, now))
            .await
            .map_err(|_| super::ApprovalError::Analysis)
    }

    /// Removes a rule, recording who did, and puts the allowlist without it in force.
    /// False when no rule had that id.
    pub async fn remove_rule(&self, id: i64, by: Actor) -> Result<bool, StoreError> {
        if !self.store.remove_rule(id, by).await? {
            return Ok(false);
        }
        self.reload_rules().await?;
        self.tell_rules().await;
        tracing::info!(rule = id, "allowlist rule removed");
        Ok(true)
    }

    /// Records the expiry of every rule whose time has come (an expired rule approves
    /// nothing already; this keeps the moment in its history) and tells the event
    /// stream when there were any. Returns how many.
    pub async fn expire_rules(&self) -> Result<usize, StoreError> {
        let expired = self.store.expire_rules(Utc::now()).await?;
        if expired > 0 {
            tracing::info!(rules = expired, "allowlist rules expired");
            self.tell_rules().await;
        }
        Ok(expired)
    }

    /// The allowlist's history: rule events, newest first, older than `before` when
    /// given.
    pub async fn rule_events(
        &self,
        limit: u32,
        before: Option<i64>,
    ) -> Result<Vec<RuleEvent>, StoreError> {
        self.store.rule_events(limit, before).await
    }
}
