//! Policy's analysis, off the async workers.
//!
//! Analysing a command is CPU work: parsing it for three shells, reading its program
//! profiles, looking into the scripts inside it. Done on the async workers, a flood of
//! heavy commands from one agent holds them, and nothing else is served meanwhile: not
//! the admin socket, not the chat transports, not another uid's request. So analysis runs
//! on a few threads of its own, at a lower scheduling priority than the async workers,
//! and takes uids in turn: each uid's requests wait in a queue of their own, and the
//! threads serve the queues round-robin, so one uid's flood delays another uid's request
//! by at most one analysis per thread, however deep the flood.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

/// How much lower than the daemon's own the analysts' scheduling priority is (`nice`).
const NICER_BY: libc::c_int = 10;

type Job = Box<dyn FnOnce() + Send>;

/// Jobs by uid, and the order in which uids take turns.
#[derive(Default)]
struct Queue {
    by_uid: HashMap<Option<u32>, VecDeque<Job>>,
    /// Each uid with jobs waiting, once, in the order its turn comes.
    turns: VecDeque<Option<u32>>,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The analysis threads. Dropping this lets them finish the job in hand and stop.
pub struct Analysts {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Analysts {
    /// As many threads as the machine has cores but one (at least one): the async
    /// workers keep a core's worth of time, and lower priority keeps them first on it.
    pub fn start() -> Analysts {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Analysts::with_threads(cores.saturating_sub(1).max(1))
    }

    pub fn with_threads(n: usize) -> Analysts {
        let shared = Arc::new(Shared::default());
        let threads = (0..n)
            .map(|i| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("execgate-analysis-{i}"))
                    .spawn(move || work(&shared))
                    .expect("the system can start a thread at startup")
            })
            .collect();
        Analysts { shared, threads }
    }

    /// Runs `f` on an analysis thread when `uid`'s turn comes, and returns what it
    /// returned. None: `f` panicked, or the analysts are stopping. If the returned future
    /// is dropped first (the agent hung up), `f` is skipped when its turn comes.
    pub async fn run<T, F>(&self, uid: Option<u32>, f: F) -> Option<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            if !tx.is_closed() {
                let _ = tx.send(f());
            }
        });
        {
            let mut queue = self.shared.lock();
            if queue.closed {
                return None;
            }
            let jobs = queue.by_uid.entry(uid).or_default();
            jobs.push_back(job);
            if jobs.len() == 1 {
                queue.turns.push_back(uid);
            }
        }
        self.shared.ready.notify_one();
        rx.await.ok()
    }
}

impl Drop for Analysts {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// One analysis thread: the next uid's next job, until closed.
fn work(shared: &Shared) {
    lower_priority();
    loop {
        let job = {
            let mut queue = shared.lock();
            loop {
                if queue.closed {
                    return;
                }
                if let Some(uid) = queue.turns.pop_front() {
                    let jobs = queue.by_uid.get_mut(&uid).expect("a uid in turn has jobs");
                    let job = jobs.pop_front().expect("a uid in turn has jobs");
                    if jobs.is_empty() {
                        queue.by_uid.remove(&uid);
                    } else {
                        queue.turns.push_back(uid);
                    }
                    break job;
                }
                queue = shared.ready.wait(queue).unwrap_or_else(|e| e.into_inner());
            }
        };
        // A panic ends the job (its caller hears None), not the thread.
        if std::panic::catch_unwind(AssertUnwindSafe(job)).is_err() {
            tracing::error!("policy analysis panicked; the request is not approved");
        }
    }
}

/// Makes this thread yield to the daemon's others (Linux sets `nice` per thread).
fn lower_priority() {
    // SAFETY: gettid and setpriority on this thread's own id have no preconditions.
    let rc = unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, NICER_BY)
    };
    if rc != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "cannot lower the analysis threads' priority");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn runs_jobs_and_survives_a_panic() {
        let analysts = Analysts::with_threads(1);
        assert_eq!(analysts.run(None, || 2 + 2).await, Some(4));
        assert_eq!(analysts.run(None, || -> u8 { panic!("boom") }).await, None);
        assert_eq!(
            analysts.run(Some(1), || "still here").await,
            Some("still here")
        );
    }

    /// One uid's deep queue does not stand in front of another uid's job.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn uids_take_turns() {
        let analysts = Arc::new(Analysts::with_threads(1));
        let order = Arc::new(Mutex::new(Vec::new()));
        // Hold the thread until every job is queued.
        let (open, gate) = std::sync::mpsc::channel::<()>();
        let held = {
            let analysts = Arc::clone(&analysts);
            tokio::spawn(async move { analysts.run(Some(9), move || gate.recv().ok()).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut jobs = Vec::new();
        for (uid, n) in [(Some(1), 0), (Some(1), 1), (Some(1), 2), (Some(2), 0)] {
            let (analysts, order) = (Arc::clone(&analysts), Arc::clone(&order));
            jobs.push(tokio::spawn(async move {
                analysts
                    .run(uid, move || order.lock().unwrap().push((uid, n)))
                    .await
            }));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        open.send(()).unwrap();
        held.await.unwrap();
        for job in jobs {
            job.await.unwrap();
        }
        let order = order.lock().unwrap().clone();
        assert_eq!(
            order,
            [(Some(1), 0), (Some(2), 0), (Some(1), 1), (Some(1), 2)],
            "uid 2 went second, not last"
        );
    }

    #[tokio::test]
    async fn a_job_whose_caller_left_is_skipped() {
        let analysts = Analysts::with_threads(1);
        let ran = Arc::new(AtomicBool::new(false));
        let (open, gate) = std::sync::mpsc::channel::<()>();
        let held = analysts.run(None, move || gate.recv().ok());
        let ran2 = Arc::clone(&ran);
        let left = analysts.run(None, move || ran2.store(true, Ordering::SeqCst));
        // Both queued (the first holds the thread), then the second's caller leaves.
        let mut held = Box::pin(held);
        let mut left = Box::pin(left);
        assert!(futures_poll_once(&mut held).await.is_none());
        assert!(futures_poll_once(&mut left).await.is_none());
        drop(left);
        open.send(()).unwrap();
        assert!(held.await.is_some());
        assert_eq!(analysts.run(None, || 1).await, Some(1));
        assert!(!ran.load(Ordering::SeqCst));
    }

    /// Polls a future once; Some(output) if it was ready.
    async fn futures_poll_once<F: std::future::Future + Unpin>(f: &mut F) -> Option<F::Output> {
        tokio::select! {
            biased;
            out = f => Some(out),
            () = std::future::ready(()) => None,
        }
    }
}
