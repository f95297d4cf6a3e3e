//! The one writer: every change to the database goes through this thread, which commits
//! the writes that arrive together in one transaction (group commit).
//!
//! SQLite admits one writer at a time, and with `synchronous=FULL` a commit costs a
//! flush to disk. Writers that each take the write lock queue behind each other's flush;
//! one thread that drains its queue into a single `BEGIN IMMEDIATE … COMMIT` pays one
//! flush for all of them. Nobody is answered before the commit that holds their write: a
//! caller that hears Ok knows its row is on disk.
//!
//! The writer is an OS thread with its own connection, not an async task: the flush
//! blocks, so it must stay off the runtime's workers, and a write costs one hand-over
//! each way. Statements are prepared once and cached.
//!
//! Each write is a typed [`Write`] whose caller waits for its own `Output`; the queue
//! holds them as [`Job`]s, which keep their output until the commit that holds it is
//! done.
//!
//! A write that fails must not take its neighbours down with it, so a failed group is
//! rolled back and its writes are committed again one by one: each caller gets its own
//! outcome, exactly as if it had been alone. After any failure the connection is asked
//! whether it is still inside a transaction (a failed COMMIT on a full disk may leave it
//! either way), rolled back if so, and replaced if even that fails, so one bad moment
//! cannot wedge every later write.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

use super::StoreError;
use super::connection::Target;
use super::writes::Write;
use crate::metrics::Metrics;

/// The most writes committed together. Bounds how long the first caller of a group waits
/// for the others' statements (a few microseconds each) before its flush.
const MAX_GROUP: usize = 256;

/// How many writes may queue before callers wait to hand theirs over.
const QUEUE: usize = 4096;

/// A write in the queue, type erased: it runs its statements, keeps its output, and
/// answers its caller once its fate is known.
trait Job: Send {
    fn is_one_statement(&self) -> bool;
    /// Runs the write (again, after a failed group), keeping its output.
    fn apply(&mut self, conn: &Connection) -> Result<(), StoreError>;
    /// Tells the caller: the output kept, once committed, or why it failed.
    fn answer(self: Box<Self>, outcome: Result<(), StoreError>);
}

struct Queued<W: Write> {
    write: W,
    output: Option<W::Output>,
    reply: oneshot::Sender<Result<W::Output, StoreError>>,
}

impl<W: Write> Job for Queued<W> {
    fn is_one_statement(&self) -> bool {
        self.write.is_one_statement()
    }

    fn apply(&mut self, conn: &Connection) -> Result<(), StoreError> {
        self.output = Some(self.write.apply(conn)?);
        Ok(())
    }

    fn answer(self: Box<Self>, outcome: Result<(), StoreError>) {
        let Queued { output, reply, .. } = *self;
        let answer = outcome.and_then(|()| output.ok_or(StoreError::WriterStopped));
        let _ = reply.send(answer);
    }
}

enum Message {
    Write(Box<dyn Job>),
    /// Answered once every write queued before it is committed: the writer is alive.
    Ping(oneshot::Sender<()>),
    /// Commit what is queued, close the connection, stop.
    Close(oneshot::Sender<()>),
}

/// A handle to the writer thread; clones share it.
#[derive(Clone, Debug)]
pub struct Writer {
    queue: mpsc::Sender<Message>,
    stats: Arc<Counters>,
}

/// How the writer has grouped writes so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Writes committed (or failed) since start.
    pub writes: u64,
    /// Groups handed to the database: `writes / groups` is the mean group size.
    pub groups: u64,
    /// Groups that failed and were committed again one write at a time.
    pub retried_groups: u64,
}

#[derive(Debug, Default)]
struct Counters {
    writes: AtomicU64,
    groups: AtomicU64,
    retried_groups: AtomicU64,
    /// Where each commit's time goes, once the daemon says (`Writer::count_into`).
    metrics: OnceLock<Arc<Metrics>>,
}

impl Writer {
    /// Opens the writer's connection to the (already migrated) database and starts its
    /// thread.
    pub fn start(target: Target) -> Result<Writer, StoreError> {
        let conn = target.open_for_writing()?;
        let (queue, inbox) = mpsc::channel(QUEUE);
        let stats = Arc::new(Counters::default());
        let counters = Arc::clone(&stats);
        std::thread::Builder::new()
            .name("execgate-writer".into())
            .spawn(move || run(inbox, Some(conn), &target, &counters))
            .map_err(StoreError::Thread)?;
        Ok(Writer { queue, stats })
    }

    /// Times every commit from now on into `metrics` (the first call counts).
    pub fn count_into(&self, metrics: Arc<Metrics>) {
        let _ = self.stats.metrics.set(metrics);
    }

    pub fn stats(&self) -> WriteStats {
        WriteStats {
            writes: self.stats.writes.load(Ordering::Relaxed),
            groups: self.stats.groups.load(Ordering::Relaxed),
            retried_groups: self.stats.retried_groups.load(Ordering::Relaxed),
        }
    }

    /// Hands `write` to the writer and waits until it is committed (or has failed).
    pub async fn write<W: Write>(&self, write: W) -> Result<W::Output, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = Queued {
            write,
            output: None,
            reply,
        };
        self.queue
            .send(Message::Write(Box::new(job)))
            .await
            .map_err(|_| StoreError::WriterStopped)?;
        answer.await.map_err(|_| StoreError::WriterStopped)?
    }

    /// Waits until every write queued so far is done: Err when the writer has stopped.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let (ack, done) = oneshot::channel();
        self.queue
            .send(Message::Ping(ack))
            .await
            .map_err(|_| StoreError::WriterStopped)?;
        done.await.map_err(|_| StoreError::WriterStopped)
    }

    /// Commits what is queued and closes the connection. Later writes fail.
    pub async fn close(&self) {
        let (ack, done) = oneshot::channel();
        if self.queue.send(Message::Close(ack)).await.is_ok() {
            let _ = done.await;
        }
    }
}

fn run(
    mut inbox: mpsc::Receiver<Message>,
    mut conn: Option<Connection>,
    target: &Target,
    stats: &Counters,
) {
    let mut group: Vec<Box<dyn Job>> = Vec::with_capacity(MAX_GROUP);
    let mut acks: Vec<oneshot::Sender<()>> = Vec::new();
    let mut closing = None;
    while let Some(first) = inbox.blocking_recv() {
        // Take what is already queued, no more: nobody waits for a group to fill.
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Write(job) => group.push(job),
                Message::Ping(ack) => acks.push(ack),
                Message::Close(ack) => {
                    closing = Some(ack);
                    break;
                }
            }
            if group.len() < MAX_GROUP {
                next = inbox.try_recv().ok();
            }
        }
        if !group.is_empty() {
            stats.groups.fetch_add(1, Ordering::Relaxed);
            stats
                .writes
                .fetch_add(group.len() as u64, Ordering::Relaxed);
            let started = Instant::now();
            if !commit(&mut conn, target, &mut group) {
                stats.retried_groups.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(metrics) = stats.metrics.get() {
                metrics.committed(started.elapsed());
            }
        }
        for ack in acks.drain(..) {
            let _ = ack.send(());
        }
        if let Some(ack) = closing.take() {
            if let Some(c) = conn.take()
                && let Err((_, e)) = c.close()
            {
                tracing::warn!(error = %e, "closing the database writer's connection");
            }
            let _ = ack.send(());
            return;
        }
    }
}

/// Commits `group` and answers every caller in it. False when a group of several had to
/// be committed again one write at a time.
fn commit(conn: &mut Option<Connection>, target: &Target, group: &mut Vec<Box<dyn Job>>) -> bool {
    let several = group.len() > 1;
    if several {
        match connection(conn, target) {
            Ok(c) => match together(c, group) {
                Ok(()) => {
                    for job in group.drain(..) {
                        job.answer(Ok(()));
                    }
                    return true;
                }
                Err(e) => {
                    tracing::warn!(error = %e, writes = group.len(), "a group commit failed; committing its writes one by one");
                    recover(conn);
                }
            },
            Err(e) => tracing::error!(error = %e, "cannot open the database for writing"),
        }
    }
    for mut job in group.drain(..) {
        let result = connection(conn, target).and_then(|c| alone(c, job.as_mut()));
        if result.is_err() {
            recover(conn);
        }
        job.answer(result);
    }
    !several
}

/// Every write of `group` in one transaction; the first error aborts them all.
fn together(conn: &Connection, group: &mut [Box<dyn Job>]) -> Result<(), StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    for job in group.iter_mut() {
        job.apply(conn)?;
    }
    conn.execute_batch("COMMIT")?;
    Ok(())
}

/// One write in its own transaction, or as the single statement it is (SQLite makes
/// every statement atomic, and commits it durably, by itself).
fn alone(conn: &Connection, job: &mut dyn Job) -> Result<(), StoreError> {
    if job.is_one_statement() {
        return job.apply(conn);
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    job.apply(conn)?;
    conn.execute_batch("COMMIT").map_err(StoreError::from)
}

/// The open connection, reopening it if an earlier failure discarded it.
fn connection<'c>(
    conn: &'c mut Option<Connection>,
    target: &Target,
) -> Result<&'c Connection, StoreError> {
    if conn.is_none() {
        *conn = Some(target.open_for_writing()?);
        tracing::info!("the database writer reopened its connection");
    }
    Ok(conn.as_ref().expect("just opened"))
}

/// After a failed write: rolls back what SQLite still holds open, and discards the
/// connection if even that fails.
fn recover(conn: &mut Option<Connection>) {
    let Some(c) = conn.as_ref() else { return };
    if c.is_autocommit() || c.execute_batch("ROLLBACK").is_ok() {
        return;
    }
    tracing::warn!("discarding the database writer's connection after a failed rollback");
    *conn = None;
}
