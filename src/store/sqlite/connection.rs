//! How every connection to the database is opened: the writer's and the readers' alike.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::StoreError;

/// How many distinct statements stay prepared per connection (there are about twenty).
const STATEMENT_CACHE: usize = 64;

/// Where and how connections are (re)opened.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub path: PathBuf,
    pub busy_timeout: Duration,
}

impl Target {
    pub fn new(path: &Path, busy_timeout: Duration) -> Target {
        Target {
            path: path.to_path_buf(),
            busy_timeout,
        }
    }

    /// A read-write connection, creating the file if missing: WAL, `synchronous=FULL`
    /// (every commit is a flush), foreign keys, the busy timeout.
    pub fn open_for_writing(&self) -> Result<Connection, StoreError> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        self.configure(conn)
    }

    /// A read-only connection: a write through it fails loudly instead of racing the
    /// writer. WAL lets it read beside a write.
    pub fn open_for_reading(&self) -> Result<Connection, StoreError> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        self.configure(conn)
    }

    fn configure(&self, conn: Connection) -> Result<Connection, StoreError> {
        conn.busy_timeout(self.busy_timeout)?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(conn)
    }
}
