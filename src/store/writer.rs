//! The one writer: every change to the database goes through this task, which commits
//! the writes that arrive together in one transaction (group commit).
//!
//! SQLite admits one writer at a time, and with `synchronous=FULL` a commit costs a
//! flush to disk. Writers that each take the write lock queue behind each other's flush;
//! one task that drains its queue into a single `BEGIN IMMEDIATE … COMMIT` pays one flush
//! for all of them. Nobody is answered before the commit that holds their write: a caller
//! that hears Ok knows its row is on disk.
//!
//! A write that fails must not take its neighbours down with it, so a failed group is
//! rolled back and its writes are committed again one by one: each caller gets its own
//! outcome, exactly as if it had been alone. After any failure the connection is checked,
//! and replaced when SQLite left it inside a transaction (a failed COMMIT on a full disk
//! does that), so one bad moment cannot wedge every later write.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Connection};
use tokio::sync::{mpsc, oneshot};

use super::{StoreError, Write, Written};

/// The most writes committed together. Bounds how long the first caller of a group waits
/// for the others' statements (each a few microseconds) before its flush.
const MAX_GROUP: usize = 256;

/// How many writes may queue before callers wait to hand theirs over.
const QUEUE: usize = 4096;

type Reply = oneshot::Sender<Result<Written, StoreError>>;

enum Message {
    Write(Box<Write>, Reply),
    /// Answered once every write queued before it is committed: the writer is alive.
    Ping(oneshot::Sender<()>),
    /// Commit what is queued, close the connection, stop.
    Close(oneshot::Sender<()>),
}

/// A handle to the writer task; clones share it.
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
}

impl Writer {
    /// Starts the writer on `conn` (migrated already); it reconnects with `options`
    /// after a failure leaves the connection unusable.
    pub fn spawn(conn: SqliteConnection, options: SqliteConnectOptions) -> Writer {
        let (queue, inbox) = mpsc::channel(QUEUE);
        let stats = Arc::new(Counters::default());
        tokio::spawn(run(inbox, Some(conn), options, Arc::clone(&stats)));
        Writer { queue, stats }
    }

    pub fn stats(&self) -> WriteStats {
        WriteStats {
            writes: self.stats.writes.load(Ordering::Relaxed),
            groups: self.stats.groups.load(Ordering::Relaxed),
            retried_groups: self.stats.retried_groups.load(Ordering::Relaxed),
        }
    }

    /// Hands `write` to the writer and waits until it is committed (or has failed).
    pub async fn write(&self, write: Write) -> Result<Written, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Message::Write(Box::new(write), reply))
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

async fn run(
    mut inbox: mpsc::Receiver<Message>,
    mut conn: Option<SqliteConnection>,
    options: SqliteConnectOptions,
    stats: Arc<Counters>,
) {
    let mut group: Vec<(Box<Write>, Reply)> = Vec::with_capacity(MAX_GROUP);
    let mut acks: Vec<oneshot::Sender<()>> = Vec::new();
    let mut closing = None;
    while let Some(first) = inbox.recv().await {
        // Take what is already queued, no more: nobody waits for a group to fill.
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Write(write, reply) => group.push((write, reply)),
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
            if !commit(&mut conn, &options, &mut group).await {
                stats.retried_groups.fetch_add(1, Ordering::Relaxed);
            }
        }
        for ack in acks.drain(..) {
            let _ = ack.send(());
        }
        if let Some(ack) = closing.take() {
            if let Some(c) = conn.take()
                && let Err(e) = c.close().await
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
async fn commit(
    conn: &mut Option<SqliteConnection>,
    options: &SqliteConnectOptions,
    group: &mut Vec<(Box<Write>, Reply)>,
) -> bool {
    let several = group.len() > 1;
    if several {
        match connection(conn, options).await {
            Ok(c) => match together(c, group).await {
                Ok(results) => {
                    for ((_, reply), result) in group.drain(..).zip(results) {
                        let _ = reply.send(Ok(result));
                    }
                    return true;
                }
                Err(e) => {
                    tracing::warn!(error = %e, writes = group.len(), "a group commit failed; committing its writes one by one");
                    recover(conn).await;
                }
            },
            Err(e) => tracing::error!(error = %e, "cannot open the database for writing"),
        }
    }
    for (write, reply) in group.drain(..) {
        let result = match connection(conn, options).await {
            Ok(c) => alone(c, &write).await,
            Err(e) => Err(e),
        };
        if result.is_err() {
            recover(conn).await;
        }
        let _ = reply.send(result);
    }
    !several
}

/// Every write of `group` in one transaction; the first error aborts them all.
async fn together(
    conn: &mut SqliteConnection,
    group: &[(Box<Write>, Reply)],
) -> Result<Vec<Written>, StoreError> {
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let mut results = Vec::with_capacity(group.len());
    for (write, _) in group {
        results.push(write.apply(&mut tx).await?);
    }
    tx.commit().await?;
    Ok(results)
}

/// One write in its own transaction, or as the single statement it is (SQLite makes
/// every statement atomic, and commits it durably, by itself).
async fn alone(conn: &mut SqliteConnection, write: &Write) -> Result<Written, StoreError> {
    if write.is_one_statement() {
        return write.apply(conn).await;
    }
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let result = write.apply(&mut tx).await?;
    tx.commit().await?;
    Ok(result)
}

/// The open connection, reconnecting if an earlier failure discarded it.
async fn connection<'c>(
    conn: &'c mut Option<SqliteConnection>,
    options: &SqliteConnectOptions,
) -> Result<&'c mut SqliteConnection, StoreError> {
    if conn.is_none() {
        *conn = Some(options.connect().await?);
        tracing::info!("the database writer reconnected");
    }
    Ok(conn.as_mut().expect("just connected"))
}

/// After a failed write: lets the rollback that dropping its transaction queued run, and
/// discards the connection if it is still inside a transaction. sqlx counts a transaction
/// whose COMMIT failed as still open, even when SQLite has already rolled it back (a
/// full disk does that), and refuses every later BEGIN on that connection.
async fn recover(conn: &mut Option<SqliteConnection>) {
    let Some(c) = conn.as_mut() else { return };
    if c.ping().await.is_ok() && !c.is_in_transaction() {
        return;
    }
    tracing::warn!("discarding the database writer's connection after a failed transaction");
    if let Some(c) = conn.take() {
        let _ = c.close_hard().await;
    }
}
