//! The admin API (docs/api.md#admin-api), on its own 0600 socket and only for `admin_uids`:
//! list and resolve requests, manage the allowlist, read its history and the audit chain.

use axum::body::Body;
use axum::extract::{ConnectInfo, Path as UrlPath, RawQuery, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Extension, Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::{AppState, Peer, parse_query, query_number, read_json};
use crate::approvals::{AddedRule, RuleRequest};
use crate::model::{Answer, Decision, Record, Rule, RuleEvent, RuleKind, Status, Via};
use crate::render::{Shown, ShownRule, WithShown};
use crate::store::audit::{Exported, Report};
use crate::store::{Actor, RequestFilter};

/// The admin socket's router: [`routes`] and `/metrics` behind the peer-uid check.
pub fn router(state: AppState) -> Router {
    let metrics = std::sync::Arc::clone(state.approvals.metrics());
    routes()
        .route("/metrics", get(super::metrics::scrape).with_state(metrics))
        .layer(middleware::from_fn_with_state(state.clone(), only_admins))
        .with_state(state)
}

/// The admin API's routes, for a front that has already let its caller in and said who
/// it is: every handler reads the [`Decider`] the front's own check put on the request.
/// The admin socket checks the peer's uid; the approvals page checks its token.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/health", get(super::health))
        .route("/v1/requests", get(list))
        .route("/v1/requests/{id}", get(show))
        .route("/v1/requests/{id}/decision", post(decide))
        .route("/v1/events", get(super::events::stream))
        .route("/v1/runs", get(list_runs))
        .route("/v1/allowlist", get(list_rules).post(add_rule))
        .route("/v1/allowlist/suggestions", get(suggest_rules))
        .route("/v1/allowlist/events", get(rule_events))
        .route("/v1/audit/verify", get(audit_verify))
        .route("/v1/audit/entries", get(audit_entries))
        .route("/v1/allowlist/{id}", delete(remove_rule))
        .fallback(super::not_found)
        .method_not_allowed_fallback(super::method_not_allowed)
}

/// Who is deciding through the admin API, as its decisions and rules record it: the
/// path (`via`) and the person (`decided_by`, a rule's `created_by`).
#[derive(Clone, Debug)]
pub struct Decider {
    pub via: Via,
    pub by: String,
}

/// Every admin route checks the peer's uid first; the socket's mode is the first wall,
/// this is the second. The third: no command execgate runs may use it, though it runs
/// as the daemon's user, an admin (the kernel does not hold a pathname socket before
/// Landlock ABI 9): a peer with `no_new_privs`, as every such command and all it starts
/// has, is refused, and so is one that cannot be looked at. A process that took a
/// refused peer's pid would have to be started by someone else: everything a confined
/// command starts has `no_new_privs` too.
async fn only_admins(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    mut request: Request,
    next: Next,
) -> Response {
    let confined = match peer.pid {
        Some(pid) => crate::sys::no_new_privs(pid).unwrap_or(true),
        None => true,
    };
    if confined {
        tracing::warn!(pid = ?peer.pid, "refused an admin peer with no_new_privs (or that cannot be looked at)");
        return ApiError::forbidden(
            "a process with no_new_privs (as every command execgate runs) may not use the admin socket",
        )
        .into_response();
    }
    match peer.uid {
        Some(uid) if state.config().admin_uids.contains(&uid) => {
            request.extensions_mut().insert(Decider {
                via: Via::Cli,
                by: format!("cli:{uid}"),
            });
            next.run(request).await
        }
        uid => {
            tracing::warn!(?uid, "refused a peer that is not in admin_uids");
            ApiError::forbidden("this uid may not use the admin socket").into_response()
        }
    }
}

async fn list(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<Vec<WithShown<Record, Shown>>>, ApiError> {
    let mut filter = RequestFilter {
        status: None,
        agent: None,
        limit: 50,
        before: None,
    };
    for (k, v) in parse_query(query.as_deref(), &["status", "agent", "limit", "before"])? {
        match k.as_str() {
            "status" => filter.status = Some(v.parse::<Status>().map_err(ApiError::bad_request)?),
            "agent" => filter.agent = Some(v),
            "before" => filter.before = Some(v),
            _ => filter.limit = query_number(&v, "limit")?.clamp(1, 10_000) as u32,
        }
    }
    // A page that starts after a request nobody has would silently be empty.
    if let Some(before) = &filter.before
        && state.approvals.record(before).await?.is_none()
    {
        return Err(ApiError::bad_request(format!(
            "query parameter `before`: no request has the id {before:?} (give a full id from the previous page)"
        )));
    }
    let list = state.approvals.list(&filter).await?;
    // The owner sees these ids now: pending ones stay out of circulation for a day.
    state.approvals.shown(&list);
    Ok(Json(list.into_iter().map(WithShown::record).collect()))
}

async fn show(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<WithShown<Record, Shown>>, ApiError> {
    match state.approvals.find(&id).await? {
        Some(r) => {
            state.approvals.shown(std::slice::from_ref(&r));
            Ok(Json(WithShown::record(r)))
        }
        None => Err(ApiError::not_found(format!("request {id} not found"))),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    decision: Decision,
    /// For `allow-always` and `allow-session`: the rule expires this many seconds after
    /// the decision. Null: it lasts until removed.
    #[serde(default)]
    for_secs: Option<u64>,
}

async fn decide(
    State(state): State<AppState>,
    Extension(decider): Extension<Decider>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<WithShown<Record, Shown>>, ApiError> {
    let body: DecisionBody = read_json(&headers, body, state.read_timeout()).await?;
    let answer = Answer::new(body.decision, body.for_secs)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let record = state
        .approvals
        .resolve(&id, answer, decider.via, &decider.by)
        .await?;
    Ok(Json(WithShown::record(record)))
}

async fn list_rules(
    State(state): State<AppState>,
) -> Result<Json<Vec<WithShown<Rule, ShownRule>>>, ApiError> {
    let rules = state.approvals.rules().await?;
    Ok(Json(rules.into_iter().map(WithShown::rule).collect()))
}

/// `GET /v1/allowlist/suggestions?days=30&min=3`: the glob rules that would have saved
/// the owner the most prompts (docs/api.md).
async fn suggest_rules(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<Vec<crate::policy::suggest::Suggestion>>, ApiError> {
    let (mut days, mut min) = (30u32, 3usize);
    for (k, v) in parse_query(query.as_deref(), &["days", "min"])? {
        let n = query_number(&v, &k)?;
        match k.as_str() {
            "days" => days = n.clamp(1, 365) as u32,
            _ => min = n.clamp(1, 1_000) as usize,
        }
    }
    Ok(Json(state.approvals.suggestions(days, min).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewRuleBody {
    #[serde(default)]
    agent: Option<String>,
    pattern: String,
    #[serde(default = "exact")]
    kind: RuleKind,
    #[serde(default)]
    expires_at: Option<DateTime<Utc>>,
    /// Accept a glob that would approve nearly everything.
    #[serde(default)]
    force: bool,
}

fn exact() -> RuleKind {
    RuleKind::Exact
}

async fn add_rule(
    State(state): State<AppState>,
    Extension(decider): Extension<Decider>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<Added>), ApiError> {
    let body: NewRuleBody = read_json(&headers, body, state.read_timeout()).await?;
    let request = RuleRequest {
        agent: body.agent,
        pattern: body.pattern,
        kind: body.kind,
        expires_at: body.expires_at,
        force: body.force,
        created_by: decider.by,
        via: decider.via,
    };
    let AddedRule { rule, warnings } = state.approvals.add_rule(request, Utc::now()).await?;
    let rule = WithShown::rule(rule);
    // Messages for a person, quoting the pattern: shown as every front shows text.
    let warnings = warnings.iter().map(|w| crate::text::visible(w)).collect();
    Ok((StatusCode::CREATED, Json(Added { rule, warnings })))
}

/// A rule as added, with what its owner should know about it (`allow add` prints these).
#[derive(Serialize)]
struct Added {
    #[serde(flatten)]
    rule: WithShown<Rule, ShownRule>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

async fn remove_rule(
    State(state): State<AppState>,
    Extension(decider): Extension<Decider>,
    UrlPath(id): UrlPath<String>,
) -> Result<StatusCode, ApiError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::bad_request(format!("rule id {id:?} is not a number")))?;
    let by = Actor::person(decider.by, decider.via);
    if !state.approvals.remove_rule(id, by).await? {
        return Err(ApiError::not_found(format!(
            "allowlist rule {id} not found"
        )));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/allowlist/events?limit=50&before=ID`: the allowlist's history, newest first.
async fn rule_events(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<Vec<RuleEvent>>, ApiError> {
    let (mut limit, mut before) = (50u32, None);
    for (k, v) in parse_query(query.as_deref(), &["limit", "before"])? {
        let n = query_number(&v, &k)?;
        match k.as_str() {
            "limit" => limit = n.clamp(1, 10_000) as u32,
            _ => before = Some(i64::try_from(n).unwrap_or(i64::MAX)),
        }
    }
    Ok(Json(state.approvals.rule_events(limit, before).await?))
}

/// `GET /v1/audit/verify?head=NODE:SEQ:HASH`: the chain walked whole (docs/audit.md).
async fn audit_verify(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<Report>, ApiError> {
    let mut head = None;
    for (_, v) in parse_query(query.as_deref(), &["head"])? {
        if crate::store::audit::parse_anchor(&v).is_none() {
            return Err(ApiError::bad_request(format!(
                "query parameter `head`: {v:?} is not NODE:SEQ:HASH, as the daemon logs it"
            )));
        }
        head = Some(v);
    }
    Ok(Json(state.approvals.audit_verify(head).await?))
}

/// `GET /v1/audit/entries?after=NODE:SEQ&limit=N`: a page of the chain, each entry with
/// the row it vouches for (`audit export`).
async fn audit_entries(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<Vec<Exported>>, ApiError> {
    let (mut after, mut limit) = (None, crate::approvals::EXPORT_PAGE);
    for (k, v) in parse_query(query.as_deref(), &["after", "limit"])? {
        match k.as_str() {
            "after" => {
                let parsed = v
                    .rsplit_once(':')
                    .and_then(|(node, seq)| Some((node.to_string(), seq.parse::<i64>().ok()?)));
                after = Some(parsed.ok_or_else(|| {
                    ApiError::bad_request(format!("query parameter `after`: {v:?} is not NODE:SEQ"))
                })?);
            }
            _ => limit = query_number(&v, "limit")?.clamp(1, u64::from(limit)) as u32,
        }
    }
    Ok(Json(state.approvals.audit_entries(after, limit).await?))
}

/// Approved commands waiting for a run slot (`started_at` null) and running, oldest first.
async fn list_runs(State(state): State<AppState>) -> Json<Vec<crate::runs::RunEntry>> {
    Json(state.runs.snapshot())
}
