//! The store's file when a run replaces it: connections that follow the path to the new file,
//! and a hold that keeps every other writer waiting while a run copies and replaces it.
//!
//! A run that loads into a store (`--to store`, a sync that keeps one) loads into a copy and
//! moves the copy into place, so a failed run leaves the store as it was. Without more, a
//! running `memport serve` kept its connections on the replaced file: it never saw what the
//! run loaded, and what it was told to remember, revise or forget after the copy was taken
//! went into a file no longer in place, and was lost. So:
//!
//! - the run takes the store's write lock ([`WriteHold`]) before it copies the file and keeps
//!   it until its copy has replaced the file: a write meanwhile waits (up to the busy timeout)
//!   and is then refused ([`StoreError::Busy`]), never made where the copy will not have it;
//! - a connection checks whether its path now names another file before each use and again
//!   once it holds the write lock, and then opens the new file ([`Store::follow_file`]).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::{Store, StoreError};

/// How long a write waits for another writer (a run loading into the store) before it is
/// refused.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Which file a path named: device and inode, so a file moved over the path is told from the
/// one a connection opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    device: u64,
    inode: u64,
}

impl FileId {
    /// The file `path` names now; `None` when there is none (or it cannot be read).
    pub fn of(path: &Path) -> Option<FileId> {
        std::fs::metadata(path).ok().map(|metadata| FileId { device: metadata.dev(), inode: metadata.ino() })
    }
}

/// [`StoreError::Busy`] for SQLite's "database is locked" once the busy timeout has passed.
/// (`DatabaseLocked` is a conflict within one connection's own statements, not a writer.)
pub(super) fn busy_as_held(error: rusqlite::Error) -> StoreError {
    match error.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy) => StoreError::Busy,
        _ => StoreError::Sqlite(error),
    }
}

/// The write lock of a store file, held by a run from before it copies the store until its
/// copy is in place (or the run fails): released when dropped. Readers go on meanwhile.
pub struct WriteHold {
    /// A write transaction that writes nothing: closing the connection ends it.
    _connection: Connection,
}

/// How many times a hold, or a write, is taken again when the path named another file once it
/// was taken (another run moved its store there meanwhile) before it gives up as busy.
pub(super) const ATTEMPTS: usize = 8;

impl WriteHold {
    /// Takes the write lock of the store `path`, waiting up to [`BUSY_TIMEOUT`] for a write
    /// under way, on the file the path names once it is held (a run that held it before may
    /// have moved another file there); `None` for a file no one may write (no write
    /// permission at all), which has no writers to hold.
    ///
    /// # Errors
    /// [`StoreError::Busy`] when another writer (another run) keeps it longer; SQLite errors,
    /// such as a file the run may not write though others may.
    pub fn take(path: &Path) -> Result<Option<WriteHold>, StoreError> {
        let nobody_writes = || std::fs::metadata(path).is_ok_and(|metadata| metadata.mode() & 0o222 == 0);
        let refused = |error: &rusqlite::Error| matches!(error.sqlite_error_code(), Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen));
        for _ in 0..ATTEMPTS {
            let file = FileId::of(path);
            let connection = match Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX) {
                Err(error) if refused(&error) && nobody_writes() => return Ok(None),
                opened => opened?,
            };
            connection.busy_timeout(BUSY_TIMEOUT)?;
            match connection.execute_batch("BEGIN IMMEDIATE") {
                Err(error) if refused(&error) && nobody_writes() => return Ok(None),
                Err(error) => return Err(busy_as_held(error)),
                Ok(()) if file.is_some() && FileId::of(path) == file => return Ok(Some(WriteHold { _connection: connection })),
                Ok(()) => {}
            }
        }
        Err(StoreError::Busy)
    }
}

impl Store {
    /// Opens the file the store's path names now when it is another than this connection's (a
    /// run moved a new store into place); returns whether it did. A connection on a file that
    /// is gone, with nothing in its place, stays as it is.
    ///
    /// # Errors
    /// What opening the new file fails with.
    pub fn follow_file(&mut self) -> Result<bool, StoreError> {
        match FileId::of(&self.path) {
            Some(now) if Some(now) != self.file => {
                let reopened = Store::open(&self.path, self.writable)?;
                self.db = reopened.db;
                self.owner = reopened.owner;
                self.file = reopened.file;
                self.set_busy_timeout(self.busy_timeout);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// How long this connection's writes wait for another writer before they are refused
    /// ([`StoreError::Busy`]); [`BUSY_TIMEOUT`] unless set. A server sets it below its request
    /// timeout, so a client is told its write was not made rather than that it took too long.
    pub fn set_busy_timeout(&mut self, timeout: Duration) {
        // SQLite counts it in milliseconds in a 32-bit integer.
        let timeout = timeout.min(Duration::from_secs(24 * 60 * 60));
        self.busy_timeout = timeout;
        match self.sqlite() {
            // `sqlite3_busy_timeout` has no failure: it only installs the handler.
            Ok(connection) => drop(connection.busy_timeout(timeout)),
            Err(database) => database.set_lock_timeout(timeout),
        }
    }

    /// Whether the store's path still names the file this connection has open (or nothing).
    pub(super) fn is_on_current_file(&self) -> bool {
        FileId::of(&self.path).is_none_or(|now| Some(now) == self.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Put;
    use crate::store::tests::record;

    /// An empty store in a temporary folder (kept while the folder is).
    fn new_store() -> (tempfile::TempDir, std::path::PathBuf) {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        drop(Store::create(&path, "owner").unwrap());
        (folder, path)
    }

    fn replaced_by_a_loaded_copy(path: &Path, with: &str) {
        let copy = path.with_extension("copy");
        Store::open(path, false).unwrap().copy_to(&copy).unwrap();
        Store::open(&copy, true).unwrap().put(&record(with, "Loaded by a run", "2026-02-01T00:00:00Z")).unwrap();
        std::fs::rename(&copy, path).unwrap();
    }

    #[test]
    fn a_connection_follows_a_store_moved_over_its_path_and_reads_what_was_loaded() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        Store::create(&path, "owner").unwrap().put(&record("urn:ump:aa", "Keeps bees", "2026-01-02T03:04:05Z")).unwrap();
        let mut reader = Store::open(&path, false).unwrap();
        assert!(!reader.follow_file().unwrap(), "nothing moved yet");
        replaced_by_a_loaded_copy(&path, "urn:ump:bb");
        assert!(reader.get("urn:ump:bb").unwrap().is_none(), "still on the replaced file");
        assert!(reader.follow_file().unwrap());
        assert!(reader.get("urn:ump:bb").unwrap().is_some());
        assert!(!reader.follow_file().unwrap());
    }

    /// Guards against a write lost to a run that loads into a copy of the store: the write
    /// waits for the run's hold, and then goes into the file the run moved into place.
    #[test]
    fn a_write_waiting_for_a_runs_hold_lands_in_the_store_the_run_moved_into_place() {
        let (_folder, path) = new_store();
        let mut writer = Store::open(&path, true).unwrap();
        let hold = WriteHold::take(&path).unwrap().unwrap();
        let waiting = std::thread::spawn(move || {
            writer.in_transaction(|store| store.put(&record("urn:ump:cc", "Remembered meanwhile", "2026-01-03T00:00:00Z"))).unwrap();
            writer
        });
        std::thread::sleep(Duration::from_millis(300));
        replaced_by_a_loaded_copy(&path, "urn:ump:bb");
        drop(hold);
        let writer = waiting.join().unwrap();
        let now = Store::open(&path, false).unwrap();
        assert!(now.get("urn:ump:cc").unwrap().is_some(), "the write is in the store in place");
        assert!(now.get("urn:ump:bb").unwrap().is_some(), "beside what the run loaded");
        assert!(writer.is_on_current_file());
    }

    /// Guards against a second run that waited for the first one's hold and then held (and
    /// copied) the file the first one replaced, losing what the first one loaded.
    #[test]
    fn a_hold_waiting_for_another_is_taken_on_the_store_that_one_moved_into_place() {
        let (_folder, path) = new_store();
        let first = WriteHold::take(&path).unwrap().unwrap();
        let waiting_path = path.clone();
        let second = std::thread::spawn(move || WriteHold::take(&waiting_path).unwrap().unwrap());
        std::thread::sleep(Duration::from_millis(300));
        replaced_by_a_loaded_copy(&path, "urn:ump:bb");
        drop(first);
        let second = second.join().unwrap();
        let mut writer = Store::open(&path, true).unwrap();
        writer.set_busy_timeout(Duration::from_millis(50));
        let refused = writer.in_transaction(|store| store.put(&record("urn:ump:ee", "Held", "2026-01-03T00:00:00Z")));
        assert!(matches!(refused, Err(StoreError::Busy)), "the store in place is the one held: {refused:?}");
        drop(second);
    }

    #[test]
    fn a_write_is_refused_while_a_run_holds_the_store_past_the_busy_timeout() {
        let (_folder, path) = new_store();
        let mut writer = Store::open(&path, true).unwrap();
        writer.set_busy_timeout(Duration::from_millis(50));
        let hold = WriteHold::take(&path).unwrap().unwrap();
        let refused = writer.in_transaction(|store| store.put(&record("urn:ump:dd", "Too early", "2026-01-03T00:00:00Z")));
        assert!(matches!(refused, Err(StoreError::Busy)), "{refused:?}");
        drop(hold);
        assert_eq!(writer.in_transaction(|store| store.put(&record("urn:ump:dd", "Now", "2026-01-03T00:00:00Z"))).unwrap(), Put::Created);
    }
}
