//! Run mode's bookkeeping: at most `exec.max_concurrent` approved commands run at once,
//! and at most `exec.max_concurrent_per_uid` of one uid's, so that one agent running
//! `sleep 300` many times cannot hold every slot; the rest wait their turn in order; what
//! is queued and running can be listed; and each result is recorded on the request's row.
//!
//! The command that runs is the one that was approved: the request's own `command` (as
//! `/bin/sh -c`) or `argv`, never a rebuilt string; a run whose spec names another
//! command than its record does not start.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio::sync::Semaphore;

use crate::config::Config;
use crate::exec::{self, RunSpec};
use crate::metrics::Metrics;
use crate::model::{AskFallback, Confine, ConfineDefault, ExecResult, Record, Security, Via};
use crate::policy::confinement::Place;
use crate::policy::{Policy, Subject, gitrepo, progconfig};
use crate::store::Store;

/// How a command that was started ended, as `execgate_runs_total` labels it.
fn outcome(result: &ExecResult) -> &'static str {
    match result {
        r if r.timed_out => "timed_out",
        r if r.exit_code.is_some() => "exited",
        r if r.signal.is_some() => "signalled",
        // Spawning it failed: no exit, no signal.
        _ => "not_started",
    }
}

/// One entry of the run queue, as `GET /v1/runs` and `execgate pending` show it.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct RunEntry {
    pub id: String,
    pub short_id: String,
    pub agent: String,
    pub command: String,
    /// When it joined the queue, and when it started (None while queued).
    pub queued_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
}

pub struct Runs {
    policy: Arc<Policy>,
    store: Store,
    permits: Semaphore,
    /// Each uid's share of the slots, while it has runs queued or running.
    shares: Mutex<HashMap<Option<u32>, Arc<Semaphore>>>,
    per_uid: usize,
    /// Queued and running entries, in arrival order (keyed by a sequence number).
    entries: Mutex<BTreeMap<u64, RunEntry>>,
    next: Mutex<u64>,
    /// Each run's end is counted here (`execgate_runs_total`).
    metrics: Arc<Metrics>,
}

impl Runs {
    /// `max_concurrent` and `per_uid` are fixed for the daemon's life; the rest of
    /// `exec.*` is read from the configuration each request was judged by.
    pub fn new(
        policy: Arc<Policy>,
        store: Store,
        max_concurrent: usize,
        per_uid: usize,
        metrics: Arc<Metrics>,
    ) -> Arc<Runs> {
        Arc::new(Runs {
            permits: Semaphore::new(max_concurrent),
            shares: Mutex::new(HashMap::new()),
            per_uid,
            policy,
            store,
            entries: Mutex::new(BTreeMap::new()),
            next: Mutex::new(0),
            metrics,
        })
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, RunEntry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs an approved request when its turn comes, records the result on its row, and
    /// returns it. The caller has checked that `record` is approved; `spec` is what the
    /// request asked to run and `config` the configuration it was judged by.
    pub async fn run(&self, record: &Record, mut spec: RunSpec, config: &Config) -> ExecResult {
        if spec.command != record.command {
            // Cannot happen: both come from one request. Were it to, run nothing.
            return self
                .not_run(record, "the command to run is not the one approved".into())
                .await;
        }
        let key = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            *next += 1;
            *next
        };
        self.entries().insert(
            key,
            RunEntry {
                id: record.id.clone(),
                short_id: record.short_id.clone(),
                agent: record.agent.clone(),
                command: record.command.display().into_owned(),
                queued_at: Utc::now(),
                started_at: None,
            },
        );
        // Removes the entry however this future ends (finished, or dropped).
        struct Leave<'a>(&'a Runs, u64);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                self.0.entries().remove(&self.1);
            }
        }
        let _leave = Leave(self, key);

        // Both semaphores are fair: requests start in the order they were queued. The
        // uid's share comes first, so a uid over its share waits without holding one of
        // everyone's slots.
        let share = Share::of(self, record.peer_uid);
        let _mine = share.semaphore().acquire().await;
        let _permit = self.permits.acquire().await;
        if let Some(e) = self.entries().get_mut(&key) {
            e.started_at = Some(Utc::now());
        }
        // What reads the directory's surroundings by path (the repository git will find)
        // reads them where the command will run: where the directory is now.
        let here = match spec.cwd.now_at() {
            Ok(here) => here,
            Err(e) => {
                return self
                    .not_run(
                        record,
                        format!(
                            "the working directory {} cannot be found: {e}",
                            spec.cwd.path().display()
                        ),
                    )
                    .await;
            }
        };
        if here != spec.cwd.path() {
            tracing::warn!(short_id = %record.short_id, checked = %spec.cwd.path().display(), now = %here.display(), "the working directory was moved since it was checked; the command runs in it where it is now");
        }
        // The repository is read once, here and now, for both: whether policy's approval
        // still holds (the git gate, the path policy and the other programs'
        // configuration gates again), and what every git the command runs gets
        // neutralised. Off the async workers, and not waited on past its time: a file
        // system that does not answer holds a blocking thread, not the daemon.
        let mut env = exec::minimal_env(&config.exec.env_passthrough);
        let judge = rests_on_policy(record, config);
        let confine = confinement_of(record, config);
        // A confined verdict runs confined or not at all.
        if confine != Confine::None
            && let None = crate::confine::abi()
        {
            return self
                .not_run(
                    record,
                    format!(
                        "this kernel has no Landlock, and the command was approved to run confined ({confine}); set exec.confine = \"none\" to run approved commands unconfined"
                    ),
                )
                .await;
        }
        // Its own temporary directory, the one place beside the project a writing
        // confinement may write; removed with everything in it when the run ends.
        let tmp = match confine {
            Confine::Workspace | Confine::WorkspaceNetwork | Confine::ProjectWork => {
                match tempfile::Builder::new().prefix("execgate-run-").tempdir() {
                    Ok(dir) => Some(dir),
                    Err(e) => {
                        return self
                            .not_run(
                                record,
                                format!("cannot make the run's temporary directory: {e}"),
                            )
                            .await;
                    }
                }
            }
            _ => None,
        };
        if let Some(tmp) = &tmp {
            env.push(("TMPDIR".into(), tmp.path().to_string_lossy().into_owned()));
        }
        let (policy, record_now, here_now, env_now) = (
            Arc::clone(&self.policy),
            record.clone(),
            here.clone(),
            env.clone(),
        );
        let tmp_path = tmp.as_ref().map(|t| t.path().to_path_buf());
        let read = off_the_workers(move || {
            let repo = gitrepo::inspect(&here_now, Some(crate::sys::effective_uid()));
            let subject = Subject {
                agent: &record_now.agent,
                session: record_now.session.as_deref(),
                command: record_now.command.as_ref(),
                cwd: Some(&here_now),
                run: true,
                shell: None,
                uid: record_now.peer_uid,
            };
            // The other programs' configuration files too: they may have changed since.
            let refusal = judge
                .then(|| {
                    policy
                        .run_refusal(subject, &repo)
                        .or_else(|| progconfig::refusal(subject))
                })
                .flatten();
            let path = env_now
                .iter()
                .rev()
                .find(|(k, _)| k == "PATH")
                .map_or(exec::DEFAULT_PATH, |(_, v)| v.as_str());
            let home = env_now
                .iter()
                .rev()
                .find(|(k, _)| k == "HOME")
                .map(|(_, v)| PathBuf::from(v));
            let place = Place {
                path,
                tmp: tmp_path.as_deref(),
                home: home.as_deref(),
            };
            // A plan with the run's own temporary directory (workspace, project work)
            // is built for the run; any other is taken from those built before while
            // what it was built from stands (`Plan::prepare_cached`).
            let cacheable = place.tmp.is_none();
            let prepared = policy
                .confinement_plan(&policy.settings(), subject, confine, &place)
                .and_then(|plan| {
                    plan.map(|p| {
                        if cacheable {
                            p.prepare_cached()
                        } else {
                            p.prepare()
                        }
                    })
                    .transpose()
                });
            (refusal, git_neutralised(repo, &env_now), Some(prepared))
        })
        .await;
        let (refusal, neutralised, prepared) = read.unwrap_or_else(|| {
            tracing::warn!("the repository could not be read in time before a run; neutralising the keys every run gets");
            let why = format!(
                "git: the repository could not be read within {} s",
                REPOSITORY_READ.as_secs()
            );
            (judge.then_some(why), gitrepo::neutralising_env(None, &env).0, None)
        });
        if let Some(why) = refusal {
            tracing::warn!(short_id = %record.short_id, %why, "not running: the repository, the command's paths or a configuration file changed since policy approved the command");
            return self
                .not_run(
                    record,
                    format!("{why} (read just before the run; approved by policy before that)"),
                )
                .await;
        }
        env.extend(neutralised);
        // And what other programs read from execgate's home (npm's user configuration,
        // pip's files), for every run, whatever approved it.
        env.extend(progconfig::neutralising_env_for(&env));
        // Moved while it was being read: what was read is not what git would find.
        if !spec.cwd.is_at(&here).unwrap_or(false) {
            return self
                .not_run(
                    record,
                    format!(
                        "the working directory {} moved while its repository was being read",
                        here.display()
                    ),
                )
                .await;
        }
        spec.env = env;
        spec.confine = match prepared {
            Some(Ok(Some(ruleset))) => Some((confine, ruleset)),
            Some(Ok(None)) => None,
            Some(Err(why)) => {
                tracing::warn!(short_id = %record.short_id, %why, "not running: the confinement cannot be built");
                return self
                    .not_run(
                        record,
                        format!("its confinement ({confine}) cannot be built: {why}"),
                    )
                    .await;
            }
            None => {
                return self
                    .not_run(
                        record,
                        format!(
                            "its confinement ({confine}) could not be planned within {} s",
                            REPOSITORY_READ.as_secs()
                        ),
                    )
                    .await;
            }
        };
        tracing::info!(short_id = %record.short_id, %confine, "running an approved command");
        let result = exec::run(spec).await;
        drop(tmp);
        tracing::info!(
            short_id = %record.short_id,
            exit_code = ?result.exit_code,
            signal = ?result.signal,
            timed_out = result.timed_out,
            duration_ms = result.duration_ms,
            "approved command finished"
        );
        self.metrics
            .ran(outcome(&result), !result.kernel_refused.is_empty());
        self.record(record, &result).await;
        result
    }

    /// Records and returns the result of a run that did not start, saying why.
    async fn not_run(&self, record: &Record, why: String) -> ExecResult {
        let result = ExecResult {
            error: Some(format!("not run: {why}")),
            ..ExecResult::default()
        };
        self.metrics.ran("not_run", false);
        self.record(record, &result).await;
        result
    }

    async fn record(&self, record: &Record, result: &ExecResult) {
        if let Err(e) = self.store.record_result(&record.id, result).await {
            // The agent still gets its result; the row only lacks the numbers.
            tracing::error!(short_id = %record.short_id, error = %e, "cannot record a run's result");
        }
    }

    /// What waits to run and what runs now, in arrival order.
    pub fn snapshot(&self) -> Vec<RunEntry> {
        self.entries().values().cloned().collect()
    }
}

/// A handle on one uid's share of the slots; the last one dropped forgets the share.
struct Share<'a> {
    runs: &'a Runs,
    uid: Option<u32>,
    semaphore: Option<Arc<Semaphore>>,
}

impl<'a> Share<'a> {
    fn of(runs: &'a Runs, uid: Option<u32>) -> Share<'a> {
        let mut shares = runs.shares.lock().unwrap_or_else(|e| e.into_inner());
        let semaphore = shares
            .entry(uid)
            .or_insert_with(|| Arc::new(Semaphore::new(runs.per_uid)));
        Share {
            runs,
            uid,
            semaphore: Some(Arc::clone(semaphore)),
        }
    }

    fn semaphore(&self) -> &Semaphore {
        self.semaphore.as_ref().expect("held until dropped")
    }
}

impl Drop for Share<'_> {
    fn drop(&mut self) {
        // Clones are made and dropped only under the lock, so the count is exact here.
        let mut shares = self.runs.shares.lock().unwrap_or_else(|e| e.into_inner());
        drop(self.semaphore.take());
        if shares
            .get(&self.uid)
            .is_some_and(|s| Arc::strong_count(s) == 1)
        {
            shares.remove(&self.uid);
        }
    }
}

/// Whether the approval rested on policy's reading of the command and its repository
/// (steps 7 and 8, or a fallback that approves only what the allowlist would) rather
/// than on a human, or on an owner's blanket `full` (security, or the fallback).
fn rests_on_policy(record: &Record, config: &Config) -> bool {
    match record.via {
        Some(Via::Policy | Via::Allowlist) => config.security_for(&record.agent) != Security::Full,
        Some(Via::Timeout) => config.approval.ask_fallback == AskFallback::Allowlist,
        _ => false,
    }
}

/// How the kernel holds the run: as recorded with the verdict, or, for a request
/// recorded before confinements were (none said), `exec.confine` with the network.
fn confinement_of(record: &Record, config: &Config) -> Confine {
    record.confinement.unwrap_or(match config.exec.confine {
        ConfineDefault::None => Confine::None,
        ConfineDefault::ReadOnly => Confine::ReadOnlyNetwork,
        ConfineDefault::Workspace => Confine::WorkspaceNetwork,
    })
}

/// How long a run waits for its repository to be read.
const REPOSITORY_READ: std::time::Duration = std::time::Duration::from_secs(2);

/// `f` on a blocking thread, waited on at most [`REPOSITORY_READ`]: `None` past it (the
/// thread is left to finish, or not, on its own).
async fn off_the_workers<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    match tokio::time::timeout(REPOSITORY_READ, tokio::task::spawn_blocking(f)).await {
        Ok(Ok(value)) => Some(value),
        _ => None,
    }
}

/// The `GIT_CONFIG_*` variables every run gets: git, run anywhere in the command, runs no
/// program its repository's configuration or hooks name (an agent may have written them
/// since anyone looked), whatever approved the command. The approved argv is unchanged.
/// `repo` is the repository as read at run time, not trusted from the decision.
fn git_neutralised(
    repo: Result<Option<gitrepo::Repo>, String>,
    env: &[(String, String)],
) -> Vec<(String, String)> {
    let repo = match repo {
        Ok(repo) => repo,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the repository before a run; neutralising the keys every run gets");
            None
        }
    };
    let (vars, cannot) = gitrepo::neutralising_env(repo.as_ref(), env);
    for why in cannot {
        tracing::warn!(%why, "running a command a human approved in a repository with a setting execgate cannot neutralise");
    }
    vars
}
