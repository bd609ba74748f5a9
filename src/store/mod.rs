//! The memory store: one SQLite file of UMP 0.1 records that `--to store` fills and
//! `memport serve` reads and writes.
//!
//! Every record a run writes in UMP (each message, each provider memory, each memory memport
//! extracted with its evidence and entities as relations, supersession as record ids) is kept
//! whole as JSON, beside the columns that recall filters and ranks on and a full-text index of
//! its text ([`schema`]). Loading is an upsert by record id, so loading the same export twice
//! changes nothing; a record erased for good is remembered by id and never loaded again.
//! The operations of UMP §3 live in [`edit`] (remember, revise, forget) and [`recall`].

pub mod edit;
pub mod file;
mod postgres;
pub mod recall;
pub mod schema;
pub mod search;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde_json::Value;

pub use crate::model::ErasedMessage;
use crate::timefmt::parse_rfc3339;
use file::FileId;
pub use file::WriteHold;
pub use postgres::{is_postgres_url, without_password};

/// What can go wrong opening or using a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite failed.
    #[error("the store's database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed.
    #[error("the store's database: {0}")]
    Postgres(String),
    /// The PostgreSQL server could not be reached or refused the login.
    #[error("cannot connect to {location} ({reason}); is the server running, and are the URL, user and password right?")]
    Unreachable {
        /// The URL, without its password.
        location: String,
        /// What the client said.
        reason: String,
    },
    /// The location cannot hold a store as it is.
    #[error("{0}")]
    InvalidLocation(String),
    /// The connection to the PostgreSQL server was lost.
    #[error("the connection to the store's database was lost; try again")]
    Gone,
    /// An operation of a store file asked of a store in a database.
    #[error("a store in PostgreSQL has no file to {0}")]
    NotAFile(&'static str),
    /// The file is an SQLite database but not a memport store.
    #[error("this is not a memport store (make one with `memport convert EXPORT --to store -o FILE`)")]
    NotAStore,
    /// The store was written by a later memport.
    #[error("the store has schema version {found}; this memport reads up to {supported}: use a newer memport")]
    NewerSchema {
        /// The store's version.
        found: i64,
        /// The newest this build reads.
        supported: i64,
    },
    /// A record cannot be stored as it is.
    #[error("invalid record: {0}")]
    InvalidRecord(String),
    /// No record has the id.
    #[error("no record has the id `{0}`")]
    NotFound(String),
    /// The search index failed.
    #[error("the search index: {0}")]
    Search(#[from] tantivy::TantivyError),
    /// Recall was asked for inside a write transaction of the same connection, whose changes
    /// may still be rolled back.
    #[error("recall cannot run inside a write transaction of the same connection")]
    InTransaction,
    /// Another writer kept the store past the busy timeout: a run of memport loading into it
    /// (a sync, or `convert --to store`), or another connection's long import. Nothing was
    /// written.
    #[error(
        "the store is held by another writer (a run of memport loading into it, or a long import); nothing was written: try again when it ends"
    )]
    Busy,
}

/// What loading one record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    /// A new record.
    Created,
    /// A record of that id was there, different: it is replaced.
    Replaced,
    /// The same record was there already.
    Unchanged,
    /// The id was erased for good earlier; the record is not stored again.
    Erased,
}

/// Makes every deletion through `connection` final: SQLite overwrites deleted content
/// (`secure_delete`, a setting of the connection) and the full-text index drops a deleted row's
/// words at once instead of marking them deleted until a merge (FTS5 `secure-delete`, kept in
/// the store; set once). So an erased record leaves no copy of its words in the file, and
/// neither do the older versions of a record that was replaced or revised.
fn erase_for_good(connection: &Connection) -> Result<(), StoreError> {
    connection.execute_batch("PRAGMA secure_delete = ON")?;
    let set: Option<i64> =
        connection.query_row("SELECT v FROM record_text_config WHERE k = 'secure-delete'", [], |row| row.get(0)).optional()?;
    if set != Some(1) {
        connection.execute("INSERT INTO record_text (record_text, rank) VALUES ('secure-delete', 1)", [])?;
    }
    Ok(())
}

/// A search index and the file it was built from.
type IndexOfFile = (Option<FileId>, Arc<search::SearchIndex>);

/// Recall's search index as the connections of one server share it.
#[derive(Default)]
struct SharedIndex {
    /// The index and the file it was built from.
    built: Option<IndexOfFile>,
    /// The file a run moved into place whose index a thread is building meanwhile.
    building: Option<FileId>,
}

/// The search index a recall uses.
pub struct IndexInUse {
    /// The index.
    pub index: Arc<search::SearchIndex>,
    /// It was built from a file a run has since replaced (the new file's index is being
    /// built): its hits are read from the new file by `seq` only where the id matches
    /// ([`search::Hit::id_hash`]), and what the run added is not found yet.
    pub of_replaced_file: bool,
}

/// Where an open store's records are.
enum Db {
    /// A SQLite file.
    Sqlite(Connection),
    /// A PostgreSQL database ([`postgres`]).
    Postgres(postgres::Database),
}

/// An open store.
pub struct Store {
    db: Db,
    owner: String,
    /// Recall's search index of the file it was built from, built when first needed and
    /// shared with the other connections a server opens ([`Store::share_search_index`]).
    search: Arc<Mutex<SharedIndex>>,
    /// The path the store was opened at, whether for writing, and the file it named then:
    /// the connection follows the path to a new file a run moves there ([`file`]).
    path: PathBuf,
    writable: bool,
    file: Option<FileId>,
    /// How long a write waits for another writer ([`Store::set_busy_timeout`]).
    busy_timeout: std::time::Duration,
    /// The schema version of the file (older than [`schema::SCHEMA_VERSION`] only when opened
    /// for reading).
    schema_version: i64,
}

impl Store {
    /// Creates a store in the new file `path`, its records owned by `owner`.
    ///
    /// # Errors
    /// SQLite errors (the file exists, the folder is not writable).
    pub fn create(path: &Path, owner: &str) -> Result<Store, StoreError> {
        if let Some(url) = postgres::url_of(path) {
            return Store::on_postgres(path, url, Some(owner), true);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(path, flags)?;
        schema::create(&connection, owner)?;
        erase_for_good(&connection)?;
        let file = FileId::of(path);
        Ok(Store {
            db: Db::Sqlite(connection),
            owner: owner.to_owned(),
            search: Arc::default(),
            path: path.to_owned(),
            writable: true,
            file,
            busy_timeout: file::BUSY_TIMEOUT,
            schema_version: schema::SCHEMA_VERSION,
        })
    }

    /// Opens the store `path` for reading, or for reading and writing.
    ///
    /// # Errors
    /// SQLite errors, [`StoreError::NotAStore`], [`StoreError::NewerSchema`].
    pub fn open(path: &Path, writable: bool) -> Result<Store, StoreError> {
        if let Some(url) = postgres::url_of(path) {
            return Store::on_postgres(path, url, None, writable);
        }
        let access = if writable { OpenFlags::SQLITE_OPEN_READ_WRITE } else { OpenFlags::SQLITE_OPEN_READ_ONLY };
        // Which file the path names is read before the file is opened: if a run moves a new
        // one there in between, the connection is on the newer file and follows nothing.
        let file = FileId::of(path);
        let connection = Connection::open_with_flags(path, access | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        // Another process (a sync) may be writing: wait for it rather than fail.
        connection.busy_timeout(file::BUSY_TIMEOUT)?;
        let (owner, mut schema_version) = schema::check(&connection).map_err(|error| match error {
            // Not a database at all, or not ours: the same answer for the user.
            StoreError::Sqlite(_) => StoreError::NotAStore,
            other => other,
        })?;
        if writable {
            erase_for_good(&connection)?;
            schema::ensure_change_log(&connection)?;
            schema::ensure_memory_index(&connection)?;
            schema::migrate(&connection, schema_version)?;
            schema_version = schema::SCHEMA_VERSION;
        }
        Ok(Store {
            db: Db::Sqlite(connection),
            owner,
            search: Arc::default(),
            path: path.to_owned(),
            writable,
            file,
            busy_timeout: file::BUSY_TIMEOUT,
            schema_version,
        })
    }

    /// Opens the store in the PostgreSQL database `url` (the location `path`), making its
    /// tables when `owner` is given and there are none yet.
    fn on_postgres(path: &Path, url: &str, owner: Option<&str>, writable: bool) -> Result<Store, StoreError> {
        let (database, owner, schema_version) = postgres::Database::connect(url, owner, writable, file::BUSY_TIMEOUT)?;
        Ok(Store {
            db: Db::Postgres(database),
            owner,
            search: Arc::default(),
            path: path.to_owned(),
            writable,
            file: None,
            busy_timeout: file::BUSY_TIMEOUT,
            schema_version,
        })
    }

    /// Where the store is, as messages show it: the file, or the database's URL without its
    /// password.
    pub fn location(&self) -> String {
        shown_location(&self.path)
    }

    /// The SQLite connection of a store file; the PostgreSQL database of one in a database.
    fn sqlite(&self) -> Result<&Connection, &postgres::Database> {
        match &self.db {
            Db::Sqlite(connection) => Ok(connection),
            Db::Postgres(database) => Err(database),
        }
    }

    /// Uses the search index of `other` (another connection to the same store file), so it is
    /// built once and kept once in memory.
    pub fn share_search_index(&mut self, other: &Store) {
        self.search = Arc::clone(&other.search);
    }

    /// Recall's search index, up to date with the store: built on first use, then brought up
    /// to date with the change log. When a run has moved a new store file into place, the
    /// index of the file it replaced is used while a thread builds the new file's (about 1 s
    /// per 100,000 records), so no recall waits for the build.
    ///
    /// # Errors
    /// The database's and the search index's errors; [`StoreError::InTransaction`] inside a
    /// transaction; [`StoreError::NotAFile`] for a store in PostgreSQL without a change log
    /// (one of schema version 1 opened only for reading), which searches its own `tsvector`.
    pub fn search_index(&self) -> Result<IndexInUse, StoreError> {
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => return self.search_index_of(database, true),
        };
        // The index may only hold committed records: a rolled-back change would stay in it, and
        // the change ids it used would be used again and skipped.
        if !connection.is_autocommit() {
            return Err(StoreError::InTransaction);
        }
        let index = {
            let mut slot = self.search.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match (&slot.built, self.file) {
                (Some((file, index)), _) if *file == self.file => Arc::clone(index),
                (Some((_, index)), Some(file)) if self.is_on_current_file() => {
                    let index = Arc::clone(index);
                    if slot.building != Some(file) && self.build_in_background(file).is_ok() {
                        slot.building = Some(file);
                    }
                    // Not brought up to date: its change log is the replaced file's.
                    return Ok(IndexInUse { index, of_replaced_file: true });
                }
                _ => {
                    let index = Arc::new(search::SearchIndex::build(connection)?);
                    // Shared only when built from the file in place: a connection still on a
                    // file a run replaced (it follows on its next use) builds one for itself.
                    if self.is_on_current_file() {
                        slot.built = Some((self.file, Arc::clone(&index)));
                    }
                    index
                }
            }
        };
        index.refresh(connection)?;
        Ok(IndexInUse { index, of_replaced_file: false })
    }

    /// Whether recall searches an in-memory index ([`Store::search_index`]) rather than the
    /// database's own (a store in PostgreSQL of version 1 opened only for reading).
    pub fn searches_in_memory(&self) -> bool {
        self.sqlite().is_ok() || self.schema_version >= postgres::CHANGE_LOG_VERSION
    }

    /// [`Store::search_index`] of a store in PostgreSQL: no file is ever replaced under it (a
    /// run loads it in place, and its change log then sends the index back to the records).
    /// Unless `refresh`, the index is handed out as it stands (a recall that checks the log's end
    /// itself, [`Store::recall`]).
    pub(crate) fn search_index_of(&self, database: &postgres::Database, refresh: bool) -> Result<IndexInUse, StoreError> {
        if !self.searches_in_memory() {
            return Err(StoreError::NotAFile("index in memory"));
        }
        let index = {
            let mut slot = self.search.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match &slot.built {
                Some((_, index)) => Arc::clone(index),
                None => {
                    let index = Arc::new(search::SearchIndex::build(database)?);
                    slot.built = Some((None, Arc::clone(&index)));
                    index
                }
            }
        };
        if refresh {
            index.refresh(database)?;
        }
        Ok(IndexInUse { index, of_replaced_file: false })
    }

    /// Starts a thread that builds the index of `file`, the store now at this store's path,
    /// on a connection of its own, and shares it once built. The caller records the build.
    fn build_in_background(&self, file: FileId) -> std::io::Result<()> {
        let (path, shared) = (self.path.clone(), Arc::clone(&self.search));
        let build = move || {
            let built = Store::open(&path, false).and_then(|store| {
                // Yet another store was moved there since: the next recall builds its index.
                if store.file != Some(file) {
                    return Ok(None);
                }
                match store.sqlite() {
                    Ok(connection) => search::SearchIndex::build(connection).map(Some),
                    Err(_) => Ok(None),
                }
            });
            let mut slot = shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if slot.building != Some(file) {
                return;
            }
            slot.building = None;
            match built {
                Ok(Some(index)) => slot.built = Some((Some(file), Arc::new(index))),
                Ok(None) => {}
                Err(error) => eprintln!(
                    "memport: building recall's index of {}: {error} (recall uses the previous index and will try again)",
                    path.display()
                ),
            }
        };
        std::thread::Builder::new().name("memport-index".into()).spawn(build).map(drop)
    }

    /// Writes a consistent, compacted copy of the store to the new file `path`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn copy_to(&self, path: &Path) -> Result<(), StoreError> {
        let Ok(connection) = self.sqlite() else { return Err(StoreError::NotAFile("copy")) };
        connection.execute("VACUUM INTO ?1", [path.to_string_lossy()])?;
        Ok(())
    }

    /// The `did:key` whose key signs the store's capability tokens, once one was issued.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn owner_key(&self) -> Result<Option<String>, StoreError> {
        match self.sqlite() {
            Ok(connection) => {
                Ok(connection.query_row("SELECT value FROM store_meta WHERE key = 'owner_key'", [], |row| row.get(0)).optional()?)
            }
            Err(database) => database.meta("owner_key"),
        }
    }

    /// Records the `did:key` whose key signs the store's capability tokens.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn set_owner_key(&self, did: &str) -> Result<(), StoreError> {
        match self.sqlite() {
            Ok(connection) => {
                connection.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES ('owner_key', ?1)", [did])?;
                Ok(())
            }
            Err(database) => database.set_meta("owner_key", did),
        }
    }

    /// The owner every record of the store belongs to unless it names another.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The connection of a store file, for tests that write what another tool might.
    #[cfg(test)]
    fn connection(&self) -> &Connection {
        match &self.db {
            Db::Sqlite(connection) => connection,
            Db::Postgres(_) => panic!("the tests of store files open files"),
        }
    }

    /// Runs `work` in one transaction: all of it is stored, or (on an error) none.
    ///
    /// # Errors
    /// What `work` fails with, and SQLite errors beginning or committing.
    pub fn in_transaction<T, E: From<StoreError>>(&mut self, work: impl FnOnce(&Store) -> Result<T, E>) -> Result<T, E> {
        if let Db::Postgres(database) = &self.db {
            database.begin_writing()?;
            let mut open = PostgresTransaction { database, committed: false };
            let value = work(self)?;
            open.database.commit()?;
            open.committed = true;
            return Ok(value);
        }
        // Once it holds the write lock, the connection writes into the file in place: a run
        // that held the lock may have moved a new store there meanwhile ([`file`]).
        let mut attempts = 0;
        loop {
            let Db::Sqlite(connection) = &self.db else { unreachable!("a store in PostgreSQL returned above") };
            connection.execute_batch("BEGIN IMMEDIATE").map_err(file::busy_as_held)?;
            if self.is_on_current_file() {
                break;
            }
            connection.execute_batch("ROLLBACK").map_err(StoreError::from)?;
            attempts += 1;
            if attempts == file::ATTEMPTS {
                return Err(StoreError::Busy.into());
            }
            self.follow_file()?;
        }
        let store: &Store = self;
        let Db::Sqlite(connection) = &store.db else { unreachable!("a store in PostgreSQL returned above") };
        // Rolled back unless committed: when `work` fails or panics, and when COMMIT itself
        // fails (a reader holding the file past the busy timeout), which would otherwise leave
        // the transaction open and every later write refused.
        let mut open = OpenTransaction { connection, committed: false };
        let value = work(store)?;
        open.connection.execute_batch("COMMIT").map_err(StoreError::from)?;
        open.committed = true;
        Ok(value)
    }

    /// Starts loading a new store in one transaction without a rollback journal: for a file
    /// that is not in place until [`Store::end_bulk_load`] returns (a run's staged output). A
    /// store in PostgreSQL is loaded in one transaction holding its write lock.
    ///
    /// # Errors
    /// SQLite errors; for PostgreSQL [`StoreError::Busy`] when another writer holds it past
    /// the busy timeout.
    pub fn begin_bulk_load(&self) -> Result<(), StoreError> {
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => return database.begin_bulk_load(),
        };
        // Nothing indexes a file not yet in place, and whoever indexes it later reads every
        // record: the change log is not written during the load (it would double its time).
        connection.execute_batch(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;
             DROP TRIGGER IF EXISTS record_inserted; DROP TRIGGER IF EXISTS record_deleted; DROP TRIGGER IF EXISTS record_updated;",
        )?;
        Ok(())
    }

    /// Commits a bulk load and leaves the file with an ordinary rollback journal.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn end_bulk_load(&self) -> Result<(), StoreError> {
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => return database.end_bulk_load(),
        };
        // The log goes on after a gap: an index of the store from before the load finds that
        // its next change is not in the log, and is built again from the records.
        connection.execute_batch(
            "DELETE FROM record_changes;
             INSERT INTO record_changes (change, seq)
                 VALUES (coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'record_changes'), 0) + 2, 0);",
        )?;
        schema::ensure_change_log(connection)?;
        connection.execute_batch("COMMIT; PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL")?;
        Ok(())
    }

    /// Stores `record` (a UMP record), replacing the record of the same id.
    ///
    /// # Errors
    /// [`StoreError::InvalidRecord`] for a record without an id, kind or text; SQLite errors.
    pub fn put(&self, record: &Value) -> Result<Put, StoreError> {
        let row = Row::of(record)?;
        let json = record.to_string();
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => {
                let put = database.put_many(vec![(json, record.clone())])?.pop();
                return put.ok_or_else(|| StoreError::InvalidRecord(format!("`{}` was not stored", row.id)));
            }
        };
        let erased: Option<i64> =
            connection.prepare_cached("SELECT 1 FROM erasures WHERE id = ?1")?.query_row([row.id], |r| r.get(0)).optional()?;
        if erased.is_some() {
            return Ok(Put::Erased);
        }
        let existing: Option<(i64, String, String)> = connection
            .prepare_cached("SELECT seq, record, text FROM records WHERE id = ?1")?
            .query_row([row.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        match existing {
            Some((_, stored, _)) if stored == json => Ok(Put::Unchanged),
            Some((seq, _, old_text)) => {
                // The row is written again under its own seq, so it keeps its place.
                unindex(connection, seq, &old_text)?;
                connection.prepare_cached("DELETE FROM records WHERE seq = ?1")?.execute([seq])?;
                write_row(connection, Some(seq), &row, &json, record)?;
                Ok(Put::Replaced)
            }
            None => {
                write_row(connection, None, &row, &json, record)?;
                Ok(Put::Created)
            }
        }
    }

    /// Stores `records` in order, as [`Store::put`] stores each: in a store in PostgreSQL with
    /// a few round trips for all of them (what a run loads, a batch at a time).
    ///
    /// # Errors
    /// As [`Store::put`]; the records before the one that fails may be stored (a run loads in
    /// one transaction, which its failure rolls back).
    pub fn put_many(&self, records: Vec<Value>) -> Result<Vec<Put>, StoreError> {
        match self.sqlite() {
            Ok(_) => records.iter().map(|record| self.put(record)).collect(),
            Err(database) => database.put_many(records.into_iter().map(|record| (record.to_string(), record)).collect()),
        }
    }

    /// The record `id`, tombstoned or not.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn get(&self, id: &str) -> Result<Option<Value>, StoreError> {
        let json: Option<String> = match self.sqlite() {
            Ok(connection) => {
                connection.prepare_cached("SELECT record FROM records WHERE id = ?1")?.query_row([id], |row| row.get(0)).optional()?
            }
            Err(database) => database.record(id)?,
        };
        Ok(json.and_then(|text| serde_json::from_str(&text).ok()))
    }

    /// The ids of every record erased for good, which later runs leave out of every output.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn erased_ids(&self) -> Result<std::collections::HashSet<String>, StoreError> {
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => return Ok(database.erasures()?.into_iter().map(|(id, ..)| id).collect()),
        };
        let mut statement = connection.prepare("SELECT id FROM erasures")?;
        let ids = statement.query_map([], |row| row.get::<_, String>(0))?.collect::<Result<_, _>>()?;
        Ok(ids)
    }

    /// The messages erased for good, each as the provider, conversation and message ids it was
    /// written under, sorted: what a later sync withdraws from the outputs of earlier runs. (A
    /// store of schema version 1 did not keep them: none there.)
    ///
    /// # Errors
    /// SQLite errors.
    pub fn erased_messages(&self) -> Result<Vec<ErasedMessage>, StoreError> {
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => {
                let erasures = database.erasures()?.into_iter();
                return Ok(erasures
                    .filter_map(|(_, provider, conversation, message)| {
                        Some(ErasedMessage { provider: provider?, conversation_id: conversation?, message_id: message? })
                    })
                    .collect());
            }
        };
        if self.schema_version < 2 {
            return Ok(Vec::new());
        }
        let mut statement = connection.prepare(
            "SELECT provider, conversation, message FROM erasures WHERE message IS NOT NULL ORDER BY provider, conversation, message",
        )?;
        let erased = statement
            .query_map([], |row| Ok(ErasedMessage { provider: row.get(0)?, conversation_id: row.get(1)?, message_id: row.get(2)? }))?
            .collect::<Result<_, _>>()?;
        Ok(erased)
    }

    /// Whether the record `id` was erased for good.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn is_erased(&self, id: &str) -> Result<bool, StoreError> {
        match self.sqlite() {
            Ok(connection) => {
                Ok(connection.prepare_cached("SELECT 1 FROM erasures WHERE id = ?1")?.query_row([id], |_| Ok(())).optional()?.is_some())
            }
            Err(database) => database.is_erased(id),
        }
    }

    /// How many records the store holds, and how many of them are tombstoned.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn counts(&self) -> Result<(u64, u64), StoreError> {
        let (all, tombstoned): (i64, i64) = match self.sqlite() {
            Ok(connection) => connection.query_row("SELECT count(*), coalesce(sum(status = 'tombstoned'), 0) FROM records", [], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?,
            Err(database) => database.counts()?,
        };
        Ok((all.unsigned_abs(), tombstoned.unsigned_abs()))
    }

    /// Tombstones every record of the conversation `session` of `agent` (a provider): the user
    /// deleted it, and a sync says so. Returns how many records changed.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn tombstone_session(&self, agent: &str, session: &str) -> Result<u64, StoreError> {
        let rows: Vec<String> = match self.sqlite() {
            Ok(connection) => connection
                .prepare_cached("SELECT record FROM records WHERE agent = ?1 AND session = ?2 AND status != 'tombstoned'")?
                .query_map([agent, session], |row| row.get(0))?
                .collect::<Result<_, _>>()?,
            Err(database) => database.session_records(agent, session)?,
        };
        let mut changed = 0;
        for json in rows {
            let Ok(mut record) = serde_json::from_str::<Value>(&json) else { continue };
            set_status(&mut record, "tombstoned");
            self.put(&record)?;
            changed += 1;
        }
        Ok(changed)
    }

    /// Checks the database file page by page and the full-text index against the records
    /// (SQLite's integrity check runs FTS5's own); in PostgreSQL, which keeps its own pages
    /// and index, that each record is JSON of its row's id.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn check_integrity(&self) -> Result<Vec<String>, StoreError> {
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => return database.integrity_problems(),
        };
        let problems: Vec<String> = connection
            .prepare("PRAGMA integrity_check")?
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|line| line != "ok")
            .collect();
        Ok(problems)
    }

    /// Every stored record, in the order they were first stored.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn for_each_record(&self, mut visit: impl FnMut(&str) -> Result<(), StoreError>) -> Result<u64, StoreError> {
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => {
                let mut count = 0;
                let every = postgres::RecordFilter { since: None, agent: None, live_only: false, no_messages: false };
                database.each_record(every, |_, _, record| {
                    count += 1;
                    visit(record)
                })?;
                return Ok(count);
            }
        };
        let mut statement = connection.prepare("SELECT record FROM records ORDER BY seq")?;
        let mut rows = statement.query([])?;
        let mut count = 0;
        while let Some(row) = rows.next()? {
            visit(row.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?)?;
            count += 1;
        }
        Ok(count)
    }
}

/// Inserts a record's row (under `seq`, or a new one) into a store file and indexes it.
fn write_row(connection: &Connection, seq: Option<i64>, row: &Row, json: &str, record: &Value) -> Result<(), StoreError> {
    connection
        .prepare_cached(
            "INSERT INTO records (seq, id, kind, status, owner, agent, session, text, created_us, valid_from_us, valid_to_us,
             salience, superseded, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?
        .execute(params![
            seq,
            row.id,
            row.kind,
            row.status,
            row.owner,
            row.agent,
            row.session,
            row.text,
            row.created_us,
            row.valid_from_us,
            row.valid_to_us,
            row.salience,
            row.superseded,
            json
        ])?;
    index(connection, connection.last_insert_rowid(), row.text, record)
}

/// Adds a record's text to the full-text index and its relations to `relations`.
fn index(connection: &Connection, seq: i64, text: &str, record: &Value) -> Result<(), StoreError> {
    connection.prepare_cached("INSERT INTO record_text (rowid, text) VALUES (?1, ?2)")?.execute(params![seq, text])?;
    let mut insert = connection.prepare_cached("INSERT INTO relations (seq, type, target) VALUES (?1, ?2, ?3)")?;
    for relation in record["relations"].as_array().into_iter().flatten() {
        if let (Some(kind), Some(target)) = (relation["type"].as_str(), relation["target"].as_str()) {
            insert.execute(params![seq, kind, target])?;
        }
    }
    Ok(())
}

/// Takes a record out of the full-text index and `relations` (before it changes or goes).
fn unindex(connection: &Connection, seq: i64, text: &str) -> Result<(), StoreError> {
    connection
        .prepare_cached("INSERT INTO record_text (record_text, rowid, text) VALUES ('delete', ?1, ?2)")?
        .execute(params![seq, text])?;
    connection.prepare_cached("DELETE FROM relations WHERE seq = ?1")?.execute([seq])?;
    Ok(())
}

/// A transaction [`Store::in_transaction`] began in PostgreSQL: rolled back when dropped
/// uncommitted.
struct PostgresTransaction<'a> {
    database: &'a postgres::Database,
    committed: bool,
}

impl Drop for PostgresTransaction<'_> {
    fn drop(&mut self) {
        if !self.committed {
            self.database.rollback();
        }
    }
}

/// A transaction [`Store::in_transaction`] began: rolled back when dropped uncommitted.
struct OpenTransaction<'a> {
    connection: &'a Connection,
    committed: bool,
}

impl Drop for OpenTransaction<'_> {
    fn drop(&mut self) {
        if !self.committed {
            let _ = self.connection.execute_batch("ROLLBACK");
        }
    }
}

/// Which records an export of the store holds (AIMEM's export scopes): tombstoned records
/// never, and of the rest those created at or after `since`, only memories of a DNA class
/// (`dna_only`), only `agent`'s.
#[derive(Debug, Clone, Default)]
pub struct ExportFilter {
    /// Records created at or after this time (microseconds), for `SINCE`.
    pub since: Option<i64>,
    /// Only memories AIMEM counts as DNA (identity, preferences, decisions, pitfalls,
    /// procedures), for `DNA_ONLY`.
    pub dna_only: bool,
    /// Only this agent's records (a token scoped to one agent).
    pub agent: Option<String>,
    /// Only memories (no message, no `episodic` record): read through their own index
    /// ([`Store::lists_memories_apart`]).
    pub memories_only: bool,
}

/// The memory types AIMEM's `DNA_ONLY` scope holds, by the name memport's UMP records carry
/// in `body.structured.memport_type` (`MemoryType::is_dna_class`).
const DNA_TYPES: [&str; 6] = ["identity", "relationship", "preference", "decision", "pitfall", "procedure"];

/// Whether a stored memory is of a DNA class: by memport's type when it has one, else by UMP
/// kind (a memory remembered over UMP: `identity` and `procedural` are).
fn is_dna_memory(kind: &str, record: &str) -> bool {
    let memport_type = serde_json::from_str::<Value>(record)
        .ok()
        .and_then(|value| value["body"]["structured"]["memport_type"].as_str().map(str::to_owned));
    match memport_type {
        Some(name) => DNA_TYPES.contains(&name.as_str()),
        None => matches!(kind, "identity" | "procedural"),
    }
}

impl Store {
    /// Whether the store's memories can be read without reading its messages: they have their
    /// own index, which a store file gets when it is opened for writing, and a store in
    /// PostgreSQL when the role owning its tables opens it for writing (as it was when this
    /// connection opened it). Without it, reading the memories alone would scan every record.
    pub fn lists_memories_apart(&self) -> bool {
        match self.sqlite() {
            Ok(connection) => schema::has_memory_index(connection),
            Err(database) => database.lists_memories_apart(),
        }
    }

    /// The records an export holds ([`ExportFilter`]), in the order they were first stored,
    /// with the columns kept beside them that an export reads. Returns how many were visited.
    ///
    /// # Errors
    /// SQLite errors, and `visit`'s.
    pub fn for_each_exported<E: From<StoreError>>(
        &self,
        filter: &ExportFilter,
        mut visit: impl FnMut(ExportedRecord<'_>) -> Result<(), E>,
    ) -> Result<u64, E> {
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => {
                let mut count = 0;
                let exported = postgres::RecordFilter {
                    since: filter.since,
                    agent: filter.agent.clone(),
                    live_only: true,
                    no_messages: filter.dna_only || filter.memories_only,
                };
                database.each_record(exported, |kind, agent, record| {
                    if filter.dna_only && !is_dna_memory(kind, record) {
                        return Ok(());
                    }
                    count += 1;
                    visit(ExportedRecord { kind, agent, record })
                })?;
                return Ok(count);
            }
        };
        let sql = if filter.memories_only {
            // The memories' own index: a scan of every record would read the whole table.
            "SELECT kind, record, agent FROM records INDEXED BY records_memories WHERE kind != 'episodic' AND status != 'tombstoned' \
             AND (?1 IS NULL OR created_us >= ?1) AND (?2 IS NULL OR agent = ?2) AND (?3 = 0 OR kind != 'episodic') ORDER BY seq"
        } else {
            "SELECT kind, record, agent FROM records WHERE status != 'tombstoned' AND (?1 IS NULL OR created_us >= ?1) \
             AND (?2 IS NULL OR agent = ?2) AND (?3 = 0 OR kind != 'episodic') ORDER BY seq"
        };
        let mut statement = connection.prepare(sql).map_err(StoreError::from)?;
        let mut rows = statement.query(params![filter.since, filter.agent, filter.dna_only]).map_err(StoreError::from)?;
        let mut count = 0;
        while let Some(row) = rows.next().map_err(StoreError::from)? {
            let kind = row.get_ref(0).and_then(|value| Ok(value.as_str()?)).map_err(StoreError::from)?;
            let record = row.get_ref(1).and_then(record_text).map_err(StoreError::from)?;
            let agent = row.get_ref(2).and_then(|value| Ok(value.as_str_or_null()?)).map_err(StoreError::from)?;
            if filter.dna_only && !is_dna_memory(kind, record) {
                continue;
            }
            visit(ExportedRecord { kind, agent, record })?;
            count += 1;
        }
        Ok(count)
    }

    /// Visits the records of the episodic kind without a session (`scope.session`): the
    /// memories of that kind (events, situations), which the memories' own index leaves out,
    /// as every message has a session (its conversation). Any status, time and agent: what
    /// an export's filter leaves out is visited too. Returns whether the store could find
    /// them through an index; a store in PostgreSQL visits nothing and says it could not.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn for_each_sessionless_episodic(&self, mut visit: impl FnMut(&str)) -> Result<bool, StoreError> {
        let Ok(connection) = self.sqlite() else { return Ok(false) };
        // Agent by agent, as the index by agent and session finds them: the next agent is one
        // step of the index, where a query on the session alone would read all of it.
        let mut agent: Option<String> = None;
        loop {
            let mut records = connection.prepare_cached(
                "SELECT record FROM records INDEXED BY records_by_session WHERE agent IS ?1 AND session IS NULL AND kind = 'episodic'",
            )?;
            let mut rows = records.query([&agent])?;
            while let Some(row) = rows.next()? {
                visit(row.get_ref(0).and_then(|value| Ok(value.as_str()?))?);
            }
            let next = match &agent {
                None => connection.query_row("SELECT MIN(agent) FROM records", [], |row| row.get(0))?,
                Some(agent) => connection.query_row("SELECT MIN(agent) FROM records WHERE agent > ?1", [agent], |row| row.get(0))?,
            };
            match next {
                Some(next) => agent = Some(next),
                None => return Ok(true),
            }
        }
    }
}

/// A record column's text, its UTF-8 checked with SIMD: an export checks every record, a
/// kilobyte or more each, and the standard check was a thirtieth of its work. Text that is not
/// UTF-8 fails as the standard check fails it.
fn record_text(value: rusqlite::types::ValueRef<'_>) -> rusqlite::Result<&str> {
    if let rusqlite::types::ValueRef::Text(bytes) = value
        && let Ok(text) = simdutf8::basic::from_utf8(bytes)
    {
        return Ok(text);
    }
    Ok(value.as_str()?)
}

/// A record an export reads, with the columns kept beside it.
#[derive(Debug, Clone, Copy)]
pub struct ExportedRecord<'a> {
    /// `kind`.
    pub kind: &'a str,
    /// `scope.agent`, where it is a string.
    pub agent: Option<&'a str>,
    /// The record's JSON, as the store wrote it (`serde_json`'s, members in sorted order).
    pub record: &'a str,
}

/// A store location as messages show it: a file's path, or a database's URL without its
/// password.
pub fn shown_location(path: &Path) -> String {
    match postgres::url_of(path) {
        Some(url) => postgres::without_password(url),
        None => path.display().to_string(),
    }
}

/// Sets `lifecycle.status`, making `lifecycle` when the record has none.
pub fn set_status(record: &mut Value, status: &str) {
    if let Some(object) = record.as_object_mut() {
        let lifecycle = object.entry("lifecycle").or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(lifecycle) = lifecycle.as_object_mut() {
            lifecycle.insert("status".into(), Value::from(status));
        }
    }
}

/// Salience of a record that states none: a memory (a statement about the person) matters
/// more than one message of a conversation, which is its evidence.
pub const MEMORY_SALIENCE: f64 = 0.7;
/// See [`MEMORY_SALIENCE`].
pub const MESSAGE_SALIENCE: f64 = 0.4;

fn default_salience(record: &Value) -> f64 {
    if record["body"]["structured"]["message_id"].is_string() { MESSAGE_SALIENCE } else { MEMORY_SALIENCE }
}

/// The columns of one record.
struct Row<'a> {
    id: &'a str,
    kind: &'a str,
    status: &'a str,
    owner: &'a str,
    agent: Option<&'a str>,
    session: Option<&'a str>,
    text: &'a str,
    created_us: i64,
    valid_from_us: Option<i64>,
    valid_to_us: Option<i64>,
    salience: Option<f64>,
    /// A later record supersedes it (`superseded_by` names one).
    superseded: bool,
}

impl<'a> Row<'a> {
    fn of(record: &'a Value) -> Result<Row<'a>, StoreError> {
        let missing = |what: &str| StoreError::InvalidRecord(format!("a record needs {what}"));
        let id = record["id"].as_str().filter(|id| !id.is_empty()).ok_or_else(|| missing("an `id`"))?;
        let kind = record["kind"].as_str().ok_or_else(|| missing("a `kind`"))?;
        let text = record["body"]["text"].as_str().ok_or_else(|| missing("`body.text`"))?;
        let time = |name: &str| record["time"][name].as_str().and_then(parse_rfc3339);
        let created_us = time("created").ok_or_else(|| missing("a `time.created` in RFC 3339"))?;
        Ok(Row {
            id,
            kind,
            status: record["lifecycle"]["status"].as_str().unwrap_or("active"),
            owner: record["scope"]["owner"].as_str().unwrap_or_default(),
            agent: record["scope"]["agent"].as_str(),
            session: record["scope"]["session"].as_str(),
            text,
            created_us,
            valid_from_us: time("valid_from"),
            valid_to_us: time("valid_to"),
            superseded: record["superseded_by"].as_array().is_some_and(|ids| !ids.is_empty()),
            salience: Some(record["lifecycle"]["salience"].as_f64().unwrap_or_else(|| default_salience(record))),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A semantic record of `text`, created at `created` (RFC 3339), as tests here and elsewhere
    /// store it.
    pub(crate) fn record(id: &str, text: &str, created: &str) -> Value {
        serde_json::json!({
            "ump": "0.1",
            "id": id,
            "kind": "semantic",
            "body": {"text": text},
            "scope": {"owner": "owner", "agent": "chatgpt", "session": "c1", "visibility": "private"},
            "time": {"created": created, "valid_from": created, "valid_to": null},
            "lifecycle": {"status": "active", "confidence": 0.7},
        })
    }

    #[test]
    fn loading_a_record_twice_changes_nothing_and_a_changed_record_replaces_the_old() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::create(&folder.path().join("m.db"), "owner").unwrap();
        let first = record("urn:ump:aa", "Works as a carpenter", "2026-01-02T03:04:05Z");
        assert_eq!(store.put(&first).unwrap(), Put::Created);
        assert_eq!(store.put(&first).unwrap(), Put::Unchanged);
        let changed = record("urn:ump:aa", "Works as a joiner", "2026-01-02T03:04:05Z");
        assert_eq!(store.put(&changed).unwrap(), Put::Replaced);
        assert_eq!(store.counts().unwrap(), (1, 0));
        assert_eq!(store.get("urn:ump:aa").unwrap().unwrap()["body"]["text"], "Works as a joiner");
        assert!(store.check_integrity().unwrap().is_empty());
    }

    /// Guards `in_transaction` when COMMIT fails (a reader holding the file past the busy
    /// timeout): the transaction used to stay open, and every later write was refused.
    #[test]
    fn a_failed_commit_is_rolled_back_and_the_next_write_goes_through() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        drop(Store::create(&path, "owner").unwrap());
        let mut writer = Store::open(&path, true).unwrap();
        writer.set_busy_timeout(std::time::Duration::from_millis(50));
        let reader = Connection::open(&path).unwrap();
        reader.execute_batch("BEGIN; SELECT count(*) FROM records;").unwrap();
        let blocked = writer.in_transaction(|store| store.put(&record("urn:ump:aa", "Keeps bees", "2026-01-02T03:04:05Z")));
        assert!(blocked.is_err(), "the commit waits for the reader, then fails");
        reader.execute_batch("COMMIT").unwrap();
        assert!(writer.sqlite().is_ok_and(Connection::is_autocommit), "the failed transaction is closed");
        let next = writer.in_transaction(|store| store.put(&record("urn:ump:bb", "Keeps goats", "2026-01-02T03:04:05Z")));
        assert_eq!(next.unwrap(), Put::Created);
        assert_eq!(writer.counts().unwrap(), (1, 0), "only the second write is there");
    }

    #[test]
    fn another_sqlite_file_is_not_taken_for_a_store() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("other.db");
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
        assert!(matches!(Store::open(&path, false), Err(StoreError::NotAStore)));
        std::fs::write(folder.path().join("text.db"), "not a database").unwrap();
        assert!(matches!(Store::open(&folder.path().join("text.db"), false), Err(StoreError::NotAStore)));
    }

    #[test]
    fn a_record_without_text_or_time_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::create(&folder.path().join("m.db"), "owner").unwrap();
        let mut bad = record("urn:ump:bb", "x", "2026-01-02T03:04:05Z");
        bad["time"]["created"] = Value::from("yesterday");
        assert!(matches!(store.put(&bad), Err(StoreError::InvalidRecord(_))));
    }
}
