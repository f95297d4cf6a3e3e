//! Policy's analysis, off the async workers.
//!
//! Analysing a command is CPU work: parsing it for three shells, reading its program
//! profiles, looking into the scripts inside it. Done on the async workers, a flood of
//! heavy commands from one agent holds them, and nothing else is served meanwhile: not
//! the admin socket, not the chat transports, not another uid's request. So analysis runs
//! on threads of its own, at a lower scheduling priority than the async workers, and
//! takes uids in turn: each uid's requests wait in a queue of their own, the threads serve
//! the queues round-robin, and one uid's requests occupy at most half the threads at once.
//! So however deep one uid's flood, another uid's request starts on a free thread as soon
//! as it arrives.

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
    /// Jobs running now, per uid (uids with none are absent).
    running: HashMap<Option<u32>, usize>,
    /// The most jobs one uid may have running at once.
    per_uid: usize,
    closed: bool,
}

impl Queue {
    /// The next job of the first uid in turn that is under its share, if any.
    fn next(&mut self) -> Option<(Option<u32>, Job)> {
        let at = self
            .turns
            .iter()
            .position(|uid| self.running.get(uid).copied().unwrap_or(0) < self.per_uid)?;
        let uid = self.turns.remove(at).expect("found in turns");
        let jobs = self.by_uid.get_mut(&uid).expect("a uid in turn has jobs");
        let job = jobs.pop_front().expect("a uid in turn has jobs");
        if jobs.is_empty() {
            self.by_uid.remove(&uid);
        } else {
            self.turns.push_back(uid);
        }
        *self.running.entry(uid).or_default() += 1;
        Some((uid, job))
    }

    fn done(&mut self, uid: Option<u32>) {
        if let Some(n) = self.running.get_mut(&uid) {
            *n -= 1;
            if *n == 0 {
                self.running.remove(&uid);
            }
        }
    }
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
    /// As many threads as the machine has cores, at least two, so that one uid's half
    /// leaves a thread for the others; their lower priority keeps the async workers
    /// first on every core.
    pub fn start() -> Analysts {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Analysts::with_threads(cores.max(2))
    }

    /// `n` threads; one uid may occupy half of them (at least one).
    pub fn with_threads(n: usize) -> Analysts {
        let shared = Arc::new(Shared::default());
        shared.lock().per_uid = (n / 2).max(1);
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
        let (uid, job) = {
            let mut queue = shared.lock();
            loop {
                if queue.closed {
                    return;
                }
                if let Some(next) = queue.next() {
                    break next;
                }
                queue = shared.ready.wait(queue).unwrap_or_else(|e| e.into_inner());
            }
        };
        // A panic ends the job (its caller hears None), not the thread.
        if std::panic::catch_unwind(AssertUnwindSafe(job)).is_err() {
            tracing::error!("policy analysis panicked; the request is not approved");
        }
        shared.lock().done(uid);
        // A uid that was at its share may have work another thread can now take.
        shared.ready.notify_all();
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

    /// With two threads, one uid's jobs take one of them: another uid's job runs at
    /// once, while the first uid's next job waits.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_uid_takes_half_the_threads() {
        let analysts = Arc::new(Analysts::with_threads(2));
        let (open, gate) = std::sync::mpsc::channel::<()>();
        let gate = Arc::new(Mutex::new(gate));
        let held = {
            let (analysts, gate) = (Arc::clone(&analysts), Arc::clone(&gate));
            tokio::spawn(async move {
                analysts
                    .run(Some(1), move || gate.lock().unwrap().recv().ok())
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let queued = {
            let analysts = Arc::clone(&analysts);
            tokio::spawn(async move { analysts.run(Some(1), || "uid 1, second").await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let other =
            tokio::time::timeout(Duration::from_secs(5), analysts.run(Some(2), || "uid 2")).await;
        assert_eq!(
            other.ok().flatten(),
            Some("uid 2"),
            "uid 2 ran beside uid 1"
        );
        assert!(
            !queued.is_finished(),
            "uid 1's second job waits for its share"
        );
        open.send(()).unwrap();
        held.await.unwrap();
        assert_eq!(queued.await.unwrap(), Some("uid 1, second"));
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
