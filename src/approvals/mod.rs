//! Requests from submission to their one terminal state: policy's verdict, the pending
//! set (waiters and timers), exactly-once resolution, timeouts, cancellation, shutdown.
//!
//! The database decides who wins a resolution (`Store::resolve` returns true once); this
//! module makes sure that whoever waits hears about it, that a timer ends every pending
//! request, and that transports get an event for every change.
//!
//! Beside it: `analysts`, the threads policy's analysis runs on (off the async workers,
//! uids in turn), `rate`, how often one uid may put a request to a human, and `late`,
//! the answers kept for a call asked again after its waiter gave up.

mod allowlist;
mod analysts;
mod audit;
mod late;
mod rate;

pub use allowlist::{AddedRule, RuleError, RuleRequest};
pub use audit::EXPORT_PAGE;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, SubsecRound, TimeDelta, Utc};
use tokio::sync::{broadcast, watch};
use tokio::task::AbortHandle;

use crate::metrics::{Metrics, RequestSpan};
use crate::model::{
    Answer, CommandRef, Decision, GrantDraft, Record, Remember, RequestSpec, RuleEvent, RuleKind,
    Status, Via, not_approved_error,
};
use crate::policy::suggest::{self, Suggestion};
use crate::policy::{Outcome, Policy, Settings, Subject};
use crate::store::{NewRequest, NewRule, RequestFilter, Resolution, Store, StoreError};

/// What submitting produced.
pub enum Submitted {
    /// Policy decided at once, and the decision is stored.
    Done(Record),
    /// A human must decide: hand it to [`Approvals::register`].
    Ask(ForHuman),
    /// The same call was asked before, its waiter gave up, and the owner has not answered
    /// yet: this is that request, still pending (see `late`).
    Waiting(Record),
}

/// How many approvals by a human of commands alike, in a day, make the approval message
/// offer the glob rule that would have approved them.
pub const SUGGEST_AFTER: usize = 3;

/// A request policy put to a human, not yet registered or stored.
pub struct ForHuman {
    new: NewRequest,
    /// Kept for the same call asked again (see `late`): its asker does not wait.
    late: bool,
    /// What identifies the call for that, when it can be answered late.
    late_key: Option<late::Key>,
    /// The settings it was judged by: its timeout and caps come from them too.
    settings: Arc<Settings>,
    verdict: crate::policy::Verdict,
    /// Why "always" must be refused, judged now, while the request's words are at hand.
    always_refusal: Option<String>,
    /// The asker's own name for the call (`call_id`), for withdrawing it.
    call_id: Option<String>,
    /// The glob rule the owner's recent approvals of commands like this one suggest.
    suggested: Option<Suggestion>,
}

impl ForHuman {
    /// Its asker named the call `call_id` and may withdraw it while it waits
    /// ([`Approvals::withdraw`]).
    pub fn withdrawable_as(mut self, call_id: Option<String>) -> ForHuman {
        self.call_id = call_id;
        self
    }

    /// Its asker will not wait for the answer (`"wait": false`): the answer is kept for
    /// the same call asked again, once, until as long again after the request's
    /// timeout.
    pub fn answered_late(mut self) -> ForHuman {
        self.late = true;
        self
    }
}

/// A request registered for a human.
pub struct Registered {
    pub record: Record,
    /// Yields the terminal record.
    pub done: watch::Receiver<Option<Record>>,
}

/// The grants an answer to a pending request may make: None where offered, else why
/// not.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Offer {
    /// "Always" and every time-boxed grant.
    pub always_refused: Option<String>,
    /// "This session".
    pub session_refused: Option<String>,
    /// The pattern of the rule a grant would save (an exact command, or a tool's name),
    /// and its kind; None where no grant is offered.
    pub rule: Option<String>,
    pub rule_kind: Option<RuleKind>,
    /// A glob rule that would have approved this request and the ones like it a human
    /// approved today (`policy::suggest`), offered beside the grants.
    pub suggested: Option<Suggestion>,
}

/// What transports hear about.
#[derive(Clone, Debug)]
pub enum Event {
    /// A request now waits for a human: post it.
    Pending(Record),
    /// A request that was pending reached its terminal state: update its message.
    Resolved(Record),
    /// The allowlist changed (a rule added, renewed, expired or removed, here or on
    /// another node): the rule events recorded since the last told, oldest first (none
    /// when they could not be read).
    Rules(Vec<RuleEvent>),
}

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the daemon is shutting down")]
    ShuttingDown,
    #[error("the command could not be analysed")]
    Analysis,
    #[error(
        "too many requests from this uid are already waiting for a human (limit {0}); wait for answers before asking more"
    )]
    TooManyPending(usize),
    #[error(
        "this uid has put {0} requests to a human in the last minute (limits.asks_per_minute_per_uid); wait before asking more"
    )]
    TooManyAsks(usize),
}

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("approval {0} not found")]
    NotFound(String),
    #[error("approval {} is already resolved ({})", .0.short_id, .0.status)]
    AlreadyResolved(Box<Record>),
    /// A grant that saves a rule (`always`, `session`, time-boxed) asked where it is
    /// refused; the request stays pending.
    #[error("\"{grant}\" refused: {why}")]
    GrantRefused { grant: &'static str, why: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One request waiting for a human.
struct Pending {
    done: watch::Sender<Option<Record>>,
    timer: Option<AbortHandle>,
    /// The peer uid that asked: pending requests are capped per uid.
    uid: Option<u32>,
    /// The normalized command (or tool name) an "always" rule would store, and the
    /// rule's kind (`exact`, or `tool`).
    normalized: String,
    always_kind: RuleKind,
    /// Why "always" must be refused, computed once at submission.
    always_refusal: Option<String>,
    /// Whether a timeout approves (`approval.ask_fallback`) rather than expires it.
    fallback_approves: bool,
    /// Whether its short id is recorded as shown to a human (see [`Approvals::shown`]).
    shown: bool,
    /// The asker's own name for the call, by which it may withdraw it
    /// ([`Approvals::withdraw`]).
    call_id: Option<String>,
    /// The glob rule the owner's recent approvals suggest, offered with the request.
    suggested: Option<Suggestion>,
}

/// The pending requests, with a count per uid kept beside them so that the cap is checked
/// in constant time however many wait.
#[derive(Default)]
struct PendingSet {
    by_id: HashMap<String, Pending>,
    per_uid: HashMap<Option<u32>, usize>,
}

impl PendingSet {
    fn count_for(&self, uid: Option<u32>) -> usize {
        self.per_uid.get(&uid).copied().unwrap_or(0)
    }

    fn insert(&mut self, id: String, entry: Pending) {
        *self.per_uid.entry(entry.uid).or_default() += 1;
        if let Some(old) = self.by_id.insert(id, entry) {
            self.forget(old.uid);
        }
    }

    fn remove(&mut self, id: &str) -> Option<Pending> {
        let entry = self.by_id.remove(id)?;
        self.forget(entry.uid);
        Some(entry)
    }

    fn forget(&mut self, uid: Option<u32>) {
        if let Some(n) = self.per_uid.get_mut(&uid) {
            *n -= 1;
            if *n == 0 {
                self.per_uid.remove(&uid);
            }
        }
    }

    fn get(&self, id: &str) -> Option<&Pending> {
        self.by_id.get(id)
    }

    fn get_mut(&mut self, id: &str) -> Option<&mut Pending> {
        self.by_id.get_mut(id)
    }

    fn len(&self) -> usize {
        self.by_id.len()
    }

    fn ids(&self) -> Vec<String> {
        self.by_id.keys().cloned().collect()
    }
}

pub struct Approvals {
    store: Store,
    policy: Arc<Policy>,
    /// Pending requests by id. An entry exists before its row is inserted and is
    /// removed only by whoever wins the row's resolution, so a resolver that sees a
    /// pending row always finds its waiters here.
    pending: Mutex<PendingSet>,
    /// Where policy's analysis runs.
    analysts: analysts::Analysts,
    /// Requests pending on other nodes sharing the database, as this node has heard of
    /// them (see [`Approvals::heard_pending`]): the chats post them and streams show them
    /// from here, and a delivery waits on the watch for their end.
    remote: Mutex<HashMap<String, watch::Sender<Option<Record>>>>,
    /// What the rules in force say (not how often they were used), as last read: a
    /// resync compares, and puts a list in force only when it differs.
    rules_read: Mutex<Vec<RuleShape>>,
    /// The last rule event told with [`Event::Rules`] (None until the rules are first
    /// read); held while telling, so that no event is told twice.
    rules_told: tokio::sync::Mutex<Option<i64>>,
    /// Asks per uid in the last minute; taken only under `pending`'s lock.
    asks: Mutex<rate::AskRate>,
    events: broadcast::Sender<Event>,
    /// Set once shutdown begins: no new request is accepted after it.
    closing: AtomicBool,
    /// True once shutdown has cancelled every pending request: event streams end then.
    stopped: watch::Sender<bool>,
    /// Requests submitted since start, for the daemon's status line.
    served: AtomicU64,
    /// Requests whose asker did not wait, by the call that made them.
    late: Mutex<late::Late>,
    /// What is counted for `/metrics`: each request's end, the pending count, analysis.
    metrics: Arc<Metrics>,
}

impl Approvals {
    /// Approvals that count nothing (tests, tools).
    pub fn new(store: Store, policy: Arc<Policy>) -> Arc<Approvals> {
        Approvals::counted(store, policy, Metrics::off())
    }

    /// Approvals that record into `metrics`.
    pub fn counted(store: Store, policy: Arc<Policy>, metrics: Arc<Metrics>) -> Arc<Approvals> {
        let (events, _) = broadcast::channel(1024);
        Arc::new(Approvals {
            store,
            policy,
            pending: Mutex::new(PendingSet::default()),
            remote: Mutex::new(HashMap::new()),
            rules_read: Mutex::new(Vec::new()),
            rules_told: tokio::sync::Mutex::new(None),
            analysts: analysts::Analysts::start(),
            asks: Mutex::new(rate::AskRate::default()),
            events,
            closing: AtomicBool::new(false),
            stopped: watch::Sender::new(false),
            served: AtomicU64::new(0),
            late: Mutex::new(late::Late::default()),
            metrics,
        })
    }

    /// Where this daemon's counts go: the chats and the run queue record there too.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Takes `id` out of the pending set, keeping the pending gauge true.
    fn unpend(&self, id: &str) -> Option<Pending> {
        let mut pending = self.lock();
        let entry = pending.remove(id);
        self.metrics.pending(pending.len());
        entry
    }

    /// Counts a request that reached its final status, and sends its span.
    fn count_end(&self, record: &Record) {
        let Some(via) = record.via else { return };
        let front = crate::model::front_label(record.front.as_deref());
        self.metrics.request(
            record.status.as_str(),
            via.as_str(),
            record.risk.as_str(),
            front,
        );
        self.metrics.span(|| RequestSpan {
            agent: &record.agent,
            verdict: record.status.as_str(),
            via: via.as_str(),
            risk: record.risk.as_str(),
            front,
            created: record.created_at.into(),
            ended: record.resolved_at.unwrap_or(record.created_at).into(),
        });
    }

    /// The policy requests are judged by (its settings change on reload).
    pub fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PendingSet> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn remote(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<Option<Record>>>> {
        self.remote.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reloads the compiled allowlist from the database.
    pub async fn reload_rules(&self) -> Result<(), StoreError> {
        let rules = self.store.list_rules().await?;
        self.policy.set_rules(&rules);
        *self.rules_read.lock().unwrap_or_else(|e| e.into_inner()) =
            rules.iter().map(RuleShape::of).collect();
        let mut told = self.rules_told.lock().await;
        if told.is_none() {
            // What happened before this start is history, not news.
            *told = Some(
                self.store
                    .rule_events(1, None)
                    .await?
                    .first()
                    .map_or(0, |e| e.id),
            );
        }
        Ok(())
    }

    /// Tells the event stream's readers that the allowlist changed, with the rule events
    /// recorded since the last told.
    async fn tell_rules(&self) {
        let mut told = self.rules_told.lock().await;
        let events = match *told {
            Some(after) => match self.store.rule_events_after(after).await {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the rule events to tell");
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        if let Some(last) = events.last() {
            *told = Some(last.id);
        }
        let _ = self.events.send(Event::Rules(events));
    }

    /// Decides a request, or says that a human must. Any store error means the request
    /// is not approved; the caller reports it as unavailable.
    ///
    /// Safe to abandon half way: a decision's write, once handed to the writer, commits
    /// whether or not anyone still waits for it. Registering is not (it takes the waiter,
    /// the row and the timer in turn), so that is a separate call, for a task of its own.
    pub async fn submit(
        self: &Arc<Self>,
        spec: RequestSpec,
        settings: Arc<Settings>,
    ) -> Result<Submitted, ApprovalError> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(ApprovalError::ShuttingDown);
        }
        self.served.fetch_add(1, Ordering::Relaxed);
        // Millisecond precision, as stored: the record returned is the row as read later.
        let now = Utc::now().trunc_subsecs(3);
        // Off the async workers, each uid in turn: see `analysts`.
        let policy = Arc::clone(&self.policy);
        let judged_by = Arc::clone(&settings);
        let (spec, verdict, always_refusal, analysed) = self
            .analysts
            .run(spec.peer_uid, move || {
                let started = std::time::Instant::now();
                let subject = Subject::of(&spec);
                let verdict = policy.evaluate_by(&judged_by, subject, now);
                // Judged now, while the request's words are at hand, for asks only.
                let always_refusal = match verdict.outcome {
                    Outcome::Ask => policy.always_refusal(&verdict, subject),
                    _ => None,
                };
                (spec, verdict, always_refusal, started.elapsed())
            })
            .await
            .ok_or(ApprovalError::Analysis)?;
        self.metrics.analysed(analysed);
        // Where policy would put the call to a human, the same call asked before and left
        // by its asker is the answer; where policy decides by itself, its decision is.
        // The key hashes the whole call: made only where it can be used.
        let ask = matches!(verdict.outcome, Outcome::Ask);
        let late_key = (ask || !self.late().is_empty())
            .then(|| late::Key::of(&spec))
            .flatten();
        if let Some(key) = late_key {
            if ask {
                if let Some(earlier) = self.late_answer(&key).await? {
                    return Ok(earlier);
                }
            } else {
                self.late().forget_key(&key);
            }
        }
        let agent = spec.agent.clone();
        // Kept with the request, so that a node other than this one can answer it.
        let grant = matches!(verdict.outcome, Outcome::Ask).then(|| GrantDraft {
            pattern: verdict.normalized.clone(),
            kind: verdict.always_kind,
            refused: always_refusal.clone(),
        });
        // What is shown to whoever decides, and what holds the run.
        let confinement = spec.run.then_some(verdict.confine);
        let new = NewRequest {
            id: uuid::Uuid::now_v7().to_string(),
            spec,
            risk: verdict.risk,
            risk_reasons: verdict.risk_reasons.clone(),
            created_at: now,
            grant,
            confinement,
        };

        let decided = |status, via| Resolution {
            status,
            decision: None,
            via,
            decided_by: None,
            resolved_at: now,
            shown: false,
        };
        match &verdict.outcome {
            Outcome::Approve { by_allowlist } => {
                let via = if *by_allowlist {
                    Via::Allowlist
                } else {
                    Via::Policy
                };
                let rules = if *by_allowlist {
                    verdict.rules_matched.clone()
                } else {
                    Vec::new()
                };
                let record = self
                    .store
                    .insert_decided(new, decided(Status::Approved, via), None, rules)
                    .await?;
                self.count_end(&record);
                tracing::info!(%agent, %via, "request approved by policy");
                Ok(Submitted::Done(record))
            }
            Outcome::Deny { reason } => {
                let error = format!(
                    "{} was not approved (denied): {reason}",
                    crate::model::what_is_asked(&new.spec.command)
                );
                let record = self
                    .store
                    .insert_decided(
                        new,
                        decided(Status::Denied, Via::Policy),
                        Some(error),
                        Vec::new(),
                    )
                    .await?;
                self.count_end(&record);
                tracing::info!(%agent, %reason, "request denied by policy");
                Ok(Submitted::Done(record))
            }
            Outcome::Ask => Ok(Submitted::Ask(ForHuman {
                late: false,
                late_key,
                always_refusal,
                suggested: self.suggested_rule(&new.spec, now).await,
                new,
                settings,
                verdict,
                call_id: None,
            })),
        }
    }

    /// Registers a request for a human: the waiter, the row, the timer, the transports'
    /// event. Must not be abandoned half way: run it in a task of its own.
    pub async fn register(self: &Arc<Self>, ask: ForHuman) -> Result<Registered, ApprovalError> {
        let ForHuman {
            new,
            late,
            late_key,
            settings,
            verdict,
            always_refusal,
            call_id,
            suggested,
        } = ask;
        let config = settings.config();
        let expires_at = new.created_at + TimeDelta::seconds(config.approval.timeout_secs as i64);
        let (done, rx) = watch::channel(None);
        {
            // Count and insert under one lock: a flood from one uid cannot slip past the cap.
            let mut pending = self.lock();
            let limits = &config.limits;
            let cap = limits.max_pending_per_uid;
            let uid = new.spec.peer_uid;
            let mine = pending.count_for(uid);
            if mine >= cap {
                tracing::warn!(?uid, cap, "too many pending requests from one uid");
                return Err(ApprovalError::TooManyPending(cap));
            }
            // Counted here, once the request will reach a human: an ask whose agent hangs
            // up at once still used an id and a line of the owner's chat.
            let per_minute = limits.asks_per_minute_per_uid;
            let mut asks = self.asks.lock().unwrap_or_else(|e| e.into_inner());
            if !asks.try_ask(uid, per_minute, std::time::Instant::now()) {
                tracing::warn!(?uid, per_minute, "too many asks from one uid");
                return Err(ApprovalError::TooManyAsks(per_minute));
            }
            pending.insert(
                new.id.clone(),
                Pending {
                    done,
                    timer: None,
                    uid,
                    normalized: verdict.normalized,
                    always_kind: verdict.always_kind,
                    always_refusal,
                    fallback_approves: verdict.fallback_approves,
                    // On a shared database another node's chat may show it at any time:
                    // its id is kept out of circulation for a day, as if shown.
                    shown: self.store.shared().is_some(),
                    call_id,
                    suggested,
                },
            );
            self.metrics.pending(pending.len());
        }
        let id = new.id.clone();
        let late_key = late_key.filter(|_| late);
        let record = match self.store.insert_pending(new, expires_at).await {
            Ok(r) => r,
            Err(e) => {
                self.unpend(&id);
                return Err(e.into());
            }
        };
        if let Some(key) = late_key {
            let kept =
                std::time::Duration::from_secs(config.approval.timeout_secs.saturating_mul(2));
            self.late()
                .remember(key, &id, std::time::Instant::now() + kept);
        }
        let timer = self.spawn_timer(id.clone(), expires_at);
        match self.lock().get_mut(&id) {
            Some(p) => p.timer = Some(timer),
            // Already resolved between the insert and now (the timer is then moot).
            None => timer.abort(),
        }
        // Shutdown may have swept the pending set while the row was being written.
        if self.closing.load(Ordering::SeqCst) {
            let _ = self
                .finish(&id, Status::Cancelled, None, Via::Shutdown, None)
                .await;
        }
        tracing::info!(agent = %record.agent, short_id = %record.short_id, "request waits for a human");
        let _ = self.events.send(Event::Pending(record.clone()));
        Ok(Registered { record, done: rx })
    }

    fn late(&self) -> std::sync::MutexGuard<'_, late::Late> {
        self.late.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The request made earlier for the same call, if its answer is still to be given
    /// to it: pending, to wait on again; approved or denied, given now, once.
    async fn late_answer(&self, key: &late::Key) -> Result<Option<Submitted>, StoreError> {
        let Some(id) = self.late().find(key, std::time::Instant::now()) else {
            return Ok(None);
        };
        let record = self.store.get(&id).await?;
        Ok(match record {
            Some(r) if r.status == Status::Pending => Some(Submitted::Waiting(r)),
            Some(r) if matches!(r.status, Status::Approved | Status::Denied) => {
                self.late().forget(&id);
                tracing::info!(short_id = %r.short_id, status = %r.status, "an answer given late, to the same call asked again");
                Some(Submitted::Done(r))
            }
            // Expired, cancelled or gone: the call is asked anew.
            _ => {
                self.late().forget(&id);
                None
            }
        })
    }

    /// `record`'s answer has reached its agent: the same call asked again is a new
    /// request.
    pub fn delivered(&self, record: &Record) {
        if record.status.is_terminal() {
            self.late().forget(&record.id);
        }
    }

    fn spawn_timer(self: &Arc<Self>, id: String, at: DateTime<Utc>) -> AbortHandle {
        let this = Arc::clone(self);
        let wait = (at - Utc::now()).to_std().unwrap_or_default();
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            // Boxed: a task is allocated at the size of its largest state, and every
            // pending request holds a timer; expiring (a read, a write, the record) is
            // allocated only when the time comes.
            Box::pin(this.expire(&id)).await;
        })
        .abort_handle()
    }

    /// Applies `approval.ask_fallback` to a request nobody answered in time. If the store
    /// cannot record it, try again each second: the waiter must hear an answer, and
    /// meanwhile the request stays pending, which approves nothing.
    async fn expire(&self, id: &str) {
        loop {
            let approves = match self.lock().get(id) {
                Some(p) => p.fallback_approves,
                None => return,
            };
            let status = if approves {
                Status::Approved
            } else {
                Status::Expired
            };
            match self.finish(id, status, None, Via::Timeout, None).await {
                Ok(_) => return,
                Err(e) => tracing::error!(%id, error = %e, "could not record a timeout; retrying"),
            }
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
    }

    /// Resolves `target` (full id or short id) with a human's answer. Exactly one call
    /// per request ever succeeds; the rest get `AlreadyResolved` or `NotFound`. An
    /// answer that saves a rule is refused, and changes nothing, where "always" is
    /// (`GrantRefused`); "this session" also where the request named no session.
    pub async fn resolve(
        &self,
        target: &str,
        answer: Answer,
        via: Via,
        by: &str,
    ) -> Result<Record, ResolveError> {
        let record = self
            .store
            .find(target)
            .await?
            .ok_or_else(|| ResolveError::NotFound(target.to_string()))?;
        if record.status.is_terminal() {
            return Err(ResolveError::AlreadyResolved(Box::new(record)));
        }
        if answer.decision.saves_rule() {
            let offer = self.offer(&record);
            let (grant, refusal) = match answer.decision {
                Decision::AllowSession => ("session", offer.session_refused),
                _ => ("always", offer.always_refused),
            };
            if let Some(why) = refusal {
                tracing::info!(short_id = %record.short_id, grant, %why, "grant refused");
                return Err(ResolveError::GrantRefused { grant, why });
            }
        }
        let status = if answer.decision == Decision::Deny {
            Status::Denied
        } else {
            Status::Approved
        };
        let id = record.id.clone();
        // The record was just read and is pending: no second read before the transition.
        match self
            .finish_from(record, status, Some(answer), via, Some(by.to_string()))
            .await?
        {
            Some(r) => Ok(r),
            None => {
                let now = self
                    .store
                    .get(&id)
                    .await?
                    .ok_or_else(|| ResolveError::NotFound(target.into()))?;
                Err(ResolveError::AlreadyResolved(Box::new(now)))
            }
        }
    }

    /// Cancels a request whose waiting agent went away, if it is still pending.
    pub async fn cancel_abandoned(&self, id: &str) {
        match self
            .finish(id, Status::Cancelled, None, Via::Disconnect, None)
            .await
        {
            Ok(Some(_)) => tracing::info!(%id, "waiting agent went away: request cancelled"),
            Ok(None) => {}
            Err(e) => tracing::error!(%id, error = %e, "could not cancel an abandoned request"),
        }
    }

    /// Withdraws the pending requests uid `uid` asked for under `call_id` (one, unless
    /// the asker named two calls alike): each ends `cancelled` `via: withdrawn`, and its
    /// waiter is told. Only requests pending on this node, where their asker waits, can
    /// be withdrawn. Ok(None) when none is: unknown, another uid's, or already ended.
    pub async fn withdraw(
        &self,
        uid: Option<u32>,
        call_id: &str,
    ) -> Result<Option<Record>, StoreError> {
        let ids: Vec<String> = {
            let pending = self.lock();
            pending
                .by_id
                .iter()
                .filter(|(_, p)| uid.is_some() && p.uid == uid)
                .filter(|(_, p)| p.call_id.as_deref() == Some(call_id))
                .map(|(id, _)| id.clone())
                .collect()
        };
        let mut last = None;
        for id in ids {
            if let Some(r) = self
                .finish(&id, Status::Cancelled, None, Via::Withdrawn, None)
                .await?
            {
                tracing::info!(%id, "the asker withdrew its request");
                last = Some(r);
            }
        }
        Ok(last)
    }

    /// The one transition out of `pending`. Ok(None): someone else got there first.
    async fn finish(
        &self,
        id: &str,
        status: Status,
        answer: Option<Answer>,
        via: Via,
        decided_by: Option<String>,
    ) -> Result<Option<Record>, StoreError> {
        // Read first, so nothing fallible is left once the transition commits: an error
        // returned from here always means "nothing changed".
        match self.store.get(id).await? {
            Some(before) if !before.status.is_terminal() => {
                self.finish_from(before, status, answer, via, decided_by)
                    .await
            }
            _ => Ok(None),
        }
    }

    /// `finish` for a caller that has just read the request (`before`) as pending.
    async fn finish_from(
        &self,
        before: Record,
        status: Status,
        answer: Option<Answer>,
        via: Via,
        decided_by: Option<String>,
    ) -> Result<Option<Record>, StoreError> {
        let id = before.id.as_str();
        let now = Utc::now().trunc_subsecs(3);
        let decision = answer.map(|a| a.decision);
        let memory = self.policy.config().approval.remember == Remember::Memory;
        // What a grant saves: from the live entry, else (a request pending on another
        // node) as stored with the request when it was asked.
        let (draft, shown) = match self.lock().get(id) {
            Some(p) => (
                Some((
                    p.normalized.clone(),
                    p.always_kind,
                    p.always_refusal.is_none(),
                )),
                p.shown,
            ),
            None => (
                before
                    .grant
                    .as_ref()
                    .map(|g| (g.pattern.clone(), g.kind, g.refused.is_none())),
                // Whether anyone saw it is not known here: assume so.
                true,
            ),
        };
        let always_rule = answer
            .filter(|a| a.decision.saves_rule())
            // Never a rule where a grant is refused (`resolve` refuses it before this).
            .zip(draft.filter(|(_, _, offered)| *offered))
            // A session grant without a session saves nothing rather than a rule for
            // every session (`resolve` refuses it before this too).
            .filter(|(a, _)| a.decision != Decision::AllowSession || before.session.is_some())
            .map(|(a, (pattern, kind, _))| NewRule {
                agent: Some(before.agent.clone()),
                session: (a.decision == Decision::AllowSession)
                    .then(|| before.session.clone())
                    .flatten(),
                pattern,
                kind,
                created_by: decided_by.clone().unwrap_or_else(|| via.to_string()),
                via: Some(via),
                expires_at: a.for_secs.map(|secs| now + TimeDelta::seconds(secs as i64)),
                source_request: Some(id.to_string()),
                memory,
            });
        let resolution = Resolution {
            status,
            decision,
            via,
            decided_by: decided_by.clone(),
            resolved_at: now,
            shown,
        };
        let error = not_approved_error(&before.command, status);
        let saves_rule = always_rule.is_some();
        let rule_expires_at = always_rule.as_ref().and_then(|r| r.expires_at);
        if !self
            .store
            .resolve(id, resolution, error.clone(), always_rule)
            .await?
        {
            return Ok(None);
        }
        let entry = self.unpend(id);
        let elsewhere = self.remote().remove(id);
        // Shown while the transition was being written: keep the id out of circulation
        // too. Best effort; should it fail, only this id could come back early.
        if !shown
            && entry.as_ref().is_some_and(|p| p.shown)
            && let Err(e) = self.store.mark_shown(vec![id.to_string()]).await
        {
            tracing::warn!(%id, error = %e, "cannot record a request's short id as shown");
        }
        if saves_rule {
            if let Err(e) = self.reload_rules().await {
                // The rule is stored; until a reload succeeds it simply is not used.
                tracing::error!(error = %e, "could not reload the allowlist after saving a rule");
            }
            self.tell_rules().await;
        }
        let record = Record {
            status,
            decision,
            rule_expires_at,
            via: Some(via),
            decided_by: decided_by.clone(),
            resolved_at: Some(now),
            error,
            ..before
        };
        tell_waiters(entry, elsewhere, &record);
        self.count_end(&record);
        if answer.is_some() {
            let waited = (now - record.created_at).to_std().unwrap_or_default();
            self.metrics.answered(via.as_str(), waited);
        }
        tracing::info!(short_id = %record.short_id, %status, %via, by = ?decided_by, "request resolved");
        let _ = self.events.send(Event::Resolved(record.clone()));
        Ok(Some(record))
    }

    /// Notes that a human may now see request `id`'s short id (a transport is about to
    /// post it): the id then stays out of circulation for a day once the request ends.
    /// False when the request is no longer pending here: do not show it then, since an
    /// id shown after its request ended would not be kept.
    pub fn show(&self, id: &str) -> bool {
        match self.lock().get_mut(id) {
            Some(p) => {
                p.shown = true;
                true
            }
            // Pending on another node: its id is already kept as shown (see `register`).
            None => self.remote().contains_key(id),
        }
    }

    /// [`Approvals::show`] for a list the owner is given (pending requests, history).
    pub fn shown(&self, records: &[Record]) {
        for r in records.iter().filter(|r| r.status == Status::Pending) {
            self.show(&r.id);
        }
    }

    /// A request by its full id.
    pub async fn record(&self, id: &str) -> Result<Option<Record>, StoreError> {
        self.store.get(id).await
    }

    /// A request by full id or short id (see `Store::find`).
    pub async fn find(&self, id_or_short: &str) -> Result<Option<Record>, StoreError> {
        self.store.find(id_or_short).await
    }

    /// Requests, newest first. Listing does not mark ids shown: a front that shows the
    /// list to a human calls [`Approvals::shown`].
    pub async fn list(&self, filter: &RequestFilter) -> Result<Vec<Record>, StoreError> {
        self.store.list(filter).await
    }

    /// Remembers which chat message shows request `id`, so that answers to that message
    /// find it after a restart.
    pub async fn note_message(&self, id: &str, external: &str) -> Result<(), StoreError> {
        self.store.set_message_external_id(id, external).await
    }

    /// Every chat message that shows request `id`, by the ids `note_message` stored.
    pub async fn messages(&self, id: &str) -> Result<Vec<String>, StoreError> {
        self.store.message_external_ids(id).await
    }

    /// A small value kept in the database across restarts and nodes (a transport's
    /// place in its stream of updates).
    pub async fn kept(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.store.state(key).await
    }

    pub async fn keep(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.store.set_state(key, value).await
    }

    /// The request a chat message shows, by the id `note_message` stored.
    pub async fn find_by_message(&self, external: &str) -> Result<Option<Record>, StoreError> {
        self.store.find_by_message_external_id(external).await
    }

    /// The requests shown by the messages whose ids begin with `prefix`: the members of
    /// a digest message (see `transport::chat`).
    pub async fn find_by_message_prefix(&self, prefix: &str) -> Result<Vec<Record>, StoreError> {
        self.store.find_by_message_prefix(prefix).await
    }

    /// A receiver for the terminal record of a request pending in this daemon, or on
    /// another node that this one has heard of.
    pub fn watch(&self, id: &str) -> Option<watch::Receiver<Option<Record>>> {
        match self.lock().get(id) {
            Some(p) => Some(p.done.subscribe()),
            None => self.remote().get(id).map(watch::Sender::subscribe),
        }
    }

    /// Why an "always" answer to request `id` would be refused, or None when it would be
    /// accepted. A request not pending here is refused, like in `resolve`.
    pub fn always_refusal(&self, id: &str) -> Option<String> {
        match self.lock().get(id) {
            Some(p) => p.always_refusal.clone(),
            None => Some("the request is not pending".into()),
        }
    }

    /// How many requests wait for a human right now.
    pub fn pending_count(&self) -> usize {
        self.lock().len()
    }

    /// Requests submitted since the daemon started.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }

    /// Requests waiting for a human, oldest first, for a human (or a transport) to see:
    /// their ids are recorded as shown.
    pub async fn pending(&self) -> Result<Vec<Record>, StoreError> {
        let mut list = self.store.list(&RequestFilter::all_pending()).await?;
        list.reverse();
        self.shown(&list);
        Ok(list)
    }

    /// Stops accepting requests and cancels every pending one (via `shutdown`).
    pub async fn shutdown(self: &Arc<Self>) {
        self.closing.store(true, Ordering::SeqCst);
        // All at once: the writer commits the cancellations together, not one flush each.
        let mut cancels = tokio::task::JoinSet::new();
        for id in self.lock().ids() {
            let this = Arc::clone(self);
            cancels.spawn(async move {
                if let Err(e) = this
                    .finish(&id, Status::Cancelled, None, Via::Shutdown, None)
                    .await
                {
                    tracing::error!(%id, error = %e, "could not cancel a pending request at shutdown");
                }
            });
        }
        while cancels.join_next().await.is_some() {}
        self.stopped.send_replace(true);
    }

    /// Becomes true once shutdown has cancelled every pending request (and sent their
    /// events): a long-lived reader of [`Approvals::subscribe`] stops then.
    pub fn stopped(&self) -> watch::Receiver<bool> {
        self.stopped.subscribe()
    }

    /// Another node put request `id` to a human: it is shown and posted from here too
    /// (by this node's chats when it leads them, by its event streams always).
    pub async fn heard_pending(&self, id: &str) -> Result<(), StoreError> {
        if self.lock().get(id).is_some() || self.remote().contains_key(id) {
            return Ok(());
        }
        let Some(record) = self.store.get(id).await? else {
            return Ok(());
        };
        if record.status != Status::Pending || record.node == self.store.node() {
            return Ok(());
        }
        // Checked again: a resolution heard meanwhile must not be followed by this.
        if self
            .remote()
            .insert(id.to_string(), watch::Sender::new(None))
            .is_none()
        {
            let _ = self.events.send(Event::Pending(record));
        }
        Ok(())
    }

    /// Request `id` may have left `pending` through another node (or behind this one's
    /// back while it could not listen): if so, whoever waits here hears its end.
    pub async fn heard_resolved(&self, id: &str) -> Result<(), StoreError> {
        if self.lock().get(id).is_none() && !self.remote().contains_key(id) {
            return Ok(());
        }
        let Some(record) = self.store.get(id).await? else {
            return Ok(());
        };
        if !record.status.is_terminal() {
            return Ok(());
        }
        let entry = self.unpend(id);
        let elsewhere = self.remote().remove(id);
        if entry.is_none() && elsewhere.is_none() {
            // Resolved here meanwhile: that resolution told everyone.
            return Ok(());
        }
        tell_waiters(entry, elsewhere, &record);
        tracing::info!(short_id = %record.short_id, status = %record.status, via = ?record.via, node = %record.node, "request resolved elsewhere");
        let _ = self.events.send(Event::Resolved(record));
        Ok(())
    }

    /// Another node changed the allowlist: this node's compiled rules follow.
    pub async fn heard_rules(&self) -> Result<(), StoreError> {
        self.reload_rules().await?;
        self.tell_rules().await;
        Ok(())
    }

    /// Reads afresh what notices may have been missed: every request this node holds as
    /// pending is checked, and every request pending elsewhere is heard of.
    pub async fn resync(&self) -> Result<(), StoreError> {
        // One read of what is pending; a row read alone only for a request held here as
        // pending that no longer is (a read per held request, every few seconds, would
        // grow with the queue).
        let pending = self.store.list(&RequestFilter::all_pending()).await?;
        let still: std::collections::HashSet<&str> =
            pending.iter().map(|r| r.id.as_str()).collect();
        let mut known = self.lock().ids();
        known.extend(self.remote().keys().cloned());
        for id in known.iter().filter(|id| !still.contains(id.as_str())) {
            self.heard_resolved(id).await?;
        }
        for record in pending.iter().rev() {
            self.heard_pending(&record.id).await?;
        }
        // Put in force, and told, only when a rule changed: a missed `rules` notice, not
        // a use counted meanwhile.
        let rules = self.store.list_rules().await?;
        let in_force: Vec<_> = rules.iter().map(RuleShape::of).collect();
        let changed = {
            let mut last = self.rules_read.lock().unwrap_or_else(|e| e.into_inner());
            let changed = *last != in_force;
            *last = in_force;
            changed
        };
        if changed {
            self.policy.set_rules(&rules);
            self.tell_rules().await;
        }
        Ok(())
    }

    /// Which grants an answer to the pending request `record` may make, and why the
    /// others would be refused (the page hides a button it would refuse, with the reason).
    pub fn offer(&self, record: &Record) -> Offer {
        // One look at the live entry: its refusal and the rule a grant would save.
        let (live, suggested) = {
            let pending = self.lock();
            let p = pending.get(&record.id);
            (
                p.map(|p| {
                    (
                        p.always_refusal.clone(),
                        p.normalized.clone(),
                        p.always_kind,
                    )
                }),
                p.and_then(|p| p.suggested.clone()),
            )
        };
        // Not live here: pending on another node, whose verdict was stored with it.
        let stored = || {
            record
                .grant
                .as_ref()
                .filter(|_| record.status == Status::Pending)
                .map(|g| (g.refused.clone(), g.pattern.clone(), g.kind))
        };
        let (always_refused, rule) = match live.or_else(stored) {
            Some((None, pattern, kind)) => (None, Some((pattern, kind))),
            Some((Some(why), _, _)) => (Some(why), None),
            // Without the verdict, nothing that saves a rule is offered.
            None => (Some("the request is not pending".to_string()), None),
        };
        let session_refused = match (&always_refused, &record.session) {
            (Some(why), _) => Some(why.clone()),
            (None, None) => Some("the request names no session".into()),
            (None, Some(_)) => None,
        };
        let (rule, rule_kind) = rule.map_or((None, None), |(p, k)| (Some(p), Some(k)));
        Offer {
            always_refused,
            session_refused,
            rule,
            rule_kind,
            suggested,
        }
    }

    /// The glob rule to offer with a request for a human, if the owner approved commands
    /// like it (the same [`suggest::candidate`]) at least [`SUGGEST_AFTER`] times in the
    /// last day, it would have approved each, and none the owner denied. Asked of this
    /// agent's newest requests only: a bound on the work per ask.
    async fn suggested_rule(&self, spec: &RequestSpec, now: DateTime<Utc>) -> Option<Suggestion> {
        let CommandRef::Line(line) = spec.command.as_ref() else {
            return None;
        };
        if spec.run {
            return None;
        }
        let pattern = suggest::candidate(line)?;
        let history = self
            .store
            .list(&RequestFilter {
                status: None,
                agent: Some(spec.agent.as_str().to_string()),
                limit: 200,
                before: None,
            })
            .await
            .ok()?;
        let since = now - TimeDelta::days(1);
        let alike: Vec<Record> = history
            .into_iter()
            .filter(|r| r.created_at >= since)
            .filter(|r| match r.command.as_ref() {
                CommandRef::Line(l) => suggest::candidate(l).as_deref() == Some(pattern.as_str()),
                _ => false,
            })
            .collect();
        if alike.len() < SUGGEST_AFTER {
            return None;
        }
        let policy = Arc::clone(&self.policy);
        tokio::task::spawn_blocking(move || {
            policy
                .suggest(&alike, SUGGEST_AFTER, now)
                .into_iter()
                .find(|s| s.pattern == pattern)
        })
        .await
        .ok()
        .flatten()
    }
}

/// Hands a request's terminal record to whoever waits for it here: its own entry (whose
/// timer stops), or the watch of a request pending on another node.
fn tell_waiters(
    entry: Option<Pending>,
    elsewhere: Option<watch::Sender<Option<Record>>>,
    record: &Record,
) {
    if let Some(p) = entry {
        if let Some(t) = p.timer {
            t.abort();
        }
        p.done.send_replace(Some(record.clone()));
    }
    if let Some(done) = elsewhere {
        done.send_replace(Some(record.clone()));
    }
}

/// A rule as it decides: what a change to the allowlist changes.
#[derive(Debug, PartialEq, Eq)]
struct RuleShape {
    id: i64,
    agent: Option<String>,
    session: Option<String>,
    pattern: String,
    kind: RuleKind,
    expires_at: Option<DateTime<Utc>>,
}

impl RuleShape {
    fn of(rule: &crate::model::Rule) -> RuleShape {
        RuleShape {
            id: rule.id,
            agent: rule.agent.clone(),
            session: rule.session.clone(),
            pattern: rule.pattern.clone(),
            kind: rule.kind,
            expires_at: rule.expires_at,
        }
    }
}
