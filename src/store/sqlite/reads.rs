//! The readers: a few read-only connections, each query run on tokio's blocking threads
//! so that a slow disk never stalls the async workers. WAL lets them read beside the
//! writer's transaction, seeing the last commit.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::Connection;
use tokio::sync::Semaphore;

use super::StoreError;
use super::connection::Target;

/// How many reads run at once: listing and lookups are short, and a few suffice beside
/// one writer on a small machine.
const READERS: usize = 4;

#[derive(Debug)]
pub(super) struct Readers {
    target: Target,
    /// Open connections not in use; at most [`READERS`].
    idle: Mutex<Vec<Connection>>,
    permits: Semaphore,
    closed: AtomicBool,
}

impl Readers {
    /// Opens the first connection now, so that a database that cannot be read stops the
    /// start rather than the first request.
    pub fn open(target: Target) -> Result<Readers, StoreError> {
        let first = target.open_for_reading()?;
        Ok(Readers {
            target,
            idle: Mutex::new(vec![first]),
            permits: Semaphore::new(READERS),
            closed: AtomicBool::new(false),
        })
    }

    /// Runs `query` on a reader connection, off the async workers.
    pub async fn read<T, F>(&self, query: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        if self.closed.load(Ordering::SeqCst) {
            return Err(StoreError::Closed);
        }
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| StoreError::Closed)?;
        let conn = match self.lock().pop() {
            Some(conn) => conn,
            None => self.target.open_for_reading()?,
        };
        let (conn, result) = tokio::task::spawn_blocking(move || {
            let result = query(&conn);
            (conn, result)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?;
        // A connection that failed is dropped: the next read opens a fresh one.
        if result.is_ok() && !self.closed.load(Ordering::SeqCst) {
            self.lock().push(conn);
        }
        result
    }

    /// Closes every idle connection; later reads fail.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.permits.close();
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }
}
