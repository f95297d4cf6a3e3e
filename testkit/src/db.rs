//! The daemon's database opened behind its back, as another process would: to look at
//! rows, to change them, or to take SQLite's write lock away from the daemon.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// How long a statement waits for a lock another connection holds before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A read-write connection to the existing database at `path` (it is never created):
/// waits up to [`BUSY_TIMEOUT`] on a lock, foreign keys on.
pub fn open(path: &Path) -> Connection {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_PRIVATE_CACHE,
    )
    .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    conn.busy_timeout(BUSY_TIMEOUT).unwrap();
    conn.pragma_update(None, "foreign_keys", "ON").unwrap();
    conn
}

/// Another connection takes SQLite's write lock (`BEGIN EXCLUSIVE`) on the database at
/// `path` and keeps it until `ROLLBACK` is run on it, or it is dropped: every write of
/// the daemon's waits, then fails. Taking the lock may wait (up to [`BUSY_TIMEOUT`]) for
/// the daemon's writer, so it is done on a blocking thread.
pub async fn hold_write_lock(path: &Path) -> Connection {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let conn = open(&path);
        conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
        conn
    })
    .await
    .unwrap()
}
