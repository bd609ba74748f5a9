//! The memory store in a PostgreSQL database, for a store several machines or people share:
//! the records, relations and erasures of the SQLite file ([`super::schema`]) in tables of the
//! connection's schema, with a `tsvector` column and its GIN index for recall's text search.
//!
//! A database holds one store per schema: the first schema of the connection's `search_path`
//! (`public` by default; `?options=-csearch_path%3Dalice` in the URL names another), so a
//! team gives each person a schema, and PostgreSQL's own grants keep them apart. The tables
//! are prefixed `memport_store_`, beside a sync's state (`memport_*`) in the same database.
//!
//! Writes take a transaction-level advisory lock on the store, as SQLite's `BEGIN IMMEDIATE`
//! takes the file's: a run loading an export and a server's writes wait for each other (up to
//! the busy timeout, as `lock_timeout`) instead of interleaving, and a writer that dies leaves
//! nothing half-written: the server rolls its transaction back.

use std::path::Path;
use std::sync::mpsc;

use super::StoreError;
use super::search::{IndexedRow, Source, Visit};
pub use session::CHANGE_LOG_VERSION;
use session::Session;

mod session;

/// Live records by `seq`: each one's id and JSON.
pub type LiveRecords = std::collections::HashMap<i64, (String, String)>;

/// Whether a store location is a PostgreSQL database rather than a file.
pub fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// `url` with its password replaced and its query left out (which may hold one), for
/// messages and reports.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let rest = rest.split_once('?').map_or(rest, |(before, _)| before);
    // The client takes the user and password up to the first `@`, slashes and all.
    let (credentials, place) = rest.split_once('@').map_or((None, rest), |(credentials, place)| (Some(credentials), place));
    let (host, path) = place.split_once('/').unwrap_or((place, ""));
    let shown_credentials = match credentials {
        Some(credentials) => match credentials.split_once(':') {
            Some((user, _)) => format!("{user}:***@"),
            None => format!("{credentials}@"),
        },
        None => String::new(),
    };
    format!("{scheme}://{shown_credentials}{host}/{path}")
}

/// A candidate of a recall: `seq`, creation, salience, agent, session and the text's rank.
pub type Candidate = (i64, i64, Option<f64>, Option<String>, Option<String>, f64);

/// What recall asks [`Database::candidates`] for.
pub struct Candidates {
    /// The query's words (letters and digits only).
    pub words: Vec<String>,
    /// Only these kinds, when any.
    pub kinds: Vec<String>,
    /// Only this owner's.
    pub owner: Option<String>,
    /// Only this agent's.
    pub only_agent: Option<String>,
    /// Valid at this time (microseconds).
    pub valid_at: i64,
    /// At most this many.
    pub limit: i64,
}

/// Which records [`Database::each_record`] streams.
pub struct RecordFilter {
    /// Created at or after this time (microseconds).
    pub since: Option<i64>,
    /// Only this agent's.
    pub agent: Option<String>,
    /// Not tombstoned.
    pub live_only: bool,
    /// No messages (`episodic`).
    pub no_messages: bool,
}

/// Work for the thread that owns a store's connection.
type Job = Box<dyn FnOnce(&mut Session) + Send>;

/// A connection to a store in PostgreSQL. The client is a blocking one, and blocking on it from
/// a thread of an async runtime (the server's) is refused: it lives on a thread of its own,
/// and each call hands it the work and waits for the answer, as a call into SQLite waits.
pub struct Database {
    jobs: mpsc::Sender<Job>,
    /// The memories have their own index ([`Database::lists_memories_apart`]).
    memories_apart: bool,
}

/// How many streamed records wait for their reader at most.
const STREAMED_AHEAD: usize = 256;

impl Database {
    /// Connects to the store at `url`; with `owner`, makes the store's tables when the schema
    /// has none. Returns the connection, the store's owner and its schema version.
    ///
    /// # Errors
    /// [`StoreError::Unreachable`] when the server cannot be reached, [`StoreError::NotAStore`]
    /// without the tables (opening), [`StoreError::NewerSchema`], PostgreSQL errors.
    pub fn connect(
        url: &str,
        owner: Option<&str>,
        writable: bool,
        lock_timeout: std::time::Duration,
    ) -> Result<(Database, String, i64), StoreError> {
        let (address, owner) = (url.to_owned(), owner.map(str::to_owned));
        let (opened, answer) = mpsc::sync_channel(1);
        let (jobs, queue) = mpsc::channel::<Job>();
        let work = move || {
            let mut session = match Session::connect(&address, owner.as_deref(), writable, lock_timeout) {
                Ok((session, owner, version, memories_apart)) => {
                    let _ = opened.send(Ok((owner, version, memories_apart)));
                    session
                }
                Err(error) => {
                    let _ = opened.send(Err(error));
                    return;
                }
            };
            for job in queue {
                job(&mut session);
            }
        };
        std::thread::Builder::new()
            .name("memport-postgres".into())
            .spawn(work)
            .map_err(|error| StoreError::Unreachable { location: without_password(url), reason: error.to_string() })?;
        let (owner, version, memories_apart) = answer.recv().map_err(|_| StoreError::Gone)??;
        Ok((Database { jobs, memories_apart }, owner, version))
    }

    /// Whether the store's memories are read without its messages: they had their own, valid
    /// index when this connection opened the store (the role owning its tables adds it when it
    /// opens the store for writing). Without it, the memories alone are a scan of every record.
    pub fn lists_memories_apart(&self) -> bool {
        self.memories_apart
    }

    /// Runs `job` on the connection's thread and returns its answer.
    fn call<T: Send + 'static>(&self, job: impl FnOnce(&mut Session) -> Result<T, StoreError> + Send + 'static) -> Result<T, StoreError> {
        let (done, answer) = mpsc::sync_channel(1);
        self.jobs
            .send(Box::new(move |session| {
                let _ = done.send(job(session));
            }))
            .map_err(|_| StoreError::Gone)?;
        answer.recv().map_err(|_| StoreError::Gone)?
    }

    /// Begins a transaction holding the store's write lock (waiting for another writer up to
    /// the lock timeout).
    ///
    /// # Errors
    /// [`StoreError::Busy`] when another writer keeps the lock longer; PostgreSQL errors.
    pub fn begin_writing(&self) -> Result<(), StoreError> {
        self.call(Session::begin_writing)
    }

    /// Begins loading in one transaction holding the write lock, writing no change log.
    ///
    /// # Errors
    /// [`StoreError::Busy`] when another writer keeps the lock longer; PostgreSQL errors.
    pub fn begin_bulk_load(&self) -> Result<(), StoreError> {
        self.call(Session::begin_bulk_load)
    }

    /// Commits a bulk load (rolled back when that fails); an index from before it is built again.
    ///
    /// # Errors
    /// PostgreSQL errors.
    pub fn end_bulk_load(&self) -> Result<(), StoreError> {
        self.call(Session::end_bulk_load)
    }

    /// Until when the superseded record at `seq` counts as valid (recall's rule).
    pub fn superseded_until(&self, seq: i64) -> Result<Option<i64>, StoreError> {
        self.call(move |session| session.superseded_until(seq))
    }

    /// Commits the open transaction (rolled back when that fails).
    ///
    /// # Errors
    /// PostgreSQL errors.
    pub fn commit(&self) -> Result<(), StoreError> {
        self.call(Session::commit)
    }

    /// Rolls the open transaction back.
    pub fn rollback(&self) {
        let _ = self.call(|session| {
            session.rollback();
            Ok(())
        });
    }

    /// How long a write waits for another writer's lock before it is refused.
    pub fn set_lock_timeout(&self, timeout: std::time::Duration) {
        let _ = self.call(move |session| {
            session.set_lock_timeout(timeout);
            Ok(())
        });
    }

    /// A value of the store's metadata.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        let key = key.to_owned();
        self.call(move |session| session.meta(&key))
    }

    /// Sets a value of the store's metadata.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        let (key, value) = (key.to_owned(), value.to_owned());
        self.call(move |session| session.set_meta(&key, &value))
    }

    /// Whether the record `id` was erased for good.
    pub fn is_erased(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.call(move |session| session.is_erased(&id))
    }

    /// Stores `records` (each with its JSON) in order, as many puts would, in a few round trips.
    pub fn put_many(&self, records: Vec<(String, serde_json::Value)>) -> Result<Vec<super::Put>, StoreError> {
        self.call(move |session| session.put_many(&records))
    }

    /// The JSON of the record `id`.
    pub fn record(&self, id: &str) -> Result<Option<String>, StoreError> {
        let id = id.to_owned();
        self.call(move |session| session.record(&id))
    }

    /// The id and JSON of each record at one of `seqs` unless it is tombstoned, by `seq`.
    pub fn live_records_at(&self, seqs: Vec<i64>) -> Result<LiveRecords, StoreError> {
        self.call(move |session| session.live_records_at(&seqs))
    }

    /// The live records at `seqs` by `seq` (id and record), and the change log's end, read in
    /// one round trip.
    pub fn live_records_and_latest_change(&self, seqs: Vec<i64>) -> Result<(LiveRecords, i64), StoreError> {
        self.call(move |session| session.live_records_and_latest_change(&seqs))
    }

    /// Every erasure: the id, and for a message the ids it was written under.
    pub fn erasures(&self) -> Result<Vec<Erasure>, StoreError> {
        self.call(Session::erasures)
    }

    /// Records an erasure of `id`, replacing an earlier one of it when `replace`.
    pub fn add_erasure(
        &self,
        id: &str,
        reason: &str,
        erased_at: &str,
        message: Option<(&str, &str, &str)>,
        replace: bool,
    ) -> Result<(), StoreError> {
        let (id, reason, erased_at) = (id.to_owned(), reason.to_owned(), erased_at.to_owned());
        let message = message.map(|(provider, conversation, message)| (provider.to_owned(), conversation.to_owned(), message.to_owned()));
        self.call(move |session| {
            let named =
                message.as_ref().map(|(provider, conversation, message)| (provider.as_str(), conversation.as_str(), message.as_str()));
            session.add_erasure(&id, &reason, &erased_at, named, replace)
        })
    }

    /// How many records there are, and how many are tombstoned.
    pub fn counts(&self) -> Result<(i64, i64), StoreError> {
        self.call(Session::counts)
    }

    /// The JSON of every live record of `agent`'s conversation `session`.
    pub fn session_records(&self, agent: &str, session: &str) -> Result<Vec<String>, StoreError> {
        let (agent, conversation) = (agent.to_owned(), session.to_owned());
        self.call(move |session| session.session_records(&agent, &conversation))
    }

    /// Records whose JSON is not JSON of their row's id.
    pub fn integrity_problems(&self) -> Result<Vec<String>, StoreError> {
        self.call(Session::integrity_problems)
    }

    /// Visits each record that passes `filter` (its kind and JSON), in the order they were
    /// first stored, streamed: at most [`STREAMED_AHEAD`] wait in memory.
    ///
    /// # Errors
    /// PostgreSQL errors, and `visit`'s.
    pub fn each_record<E: From<StoreError>>(
        &self,
        filter: RecordFilter,
        mut visit: impl FnMut(&str, Option<&str>, &str) -> Result<(), E>,
    ) -> Result<(), E> {
        let (rows, arriving) = mpsc::sync_channel(STREAMED_AHEAD);
        let (done, answer) = mpsc::sync_channel(1);
        self.jobs
            .send(Box::new(move |session| {
                let ended = session.each_record(&filter, &rows);
                drop(rows);
                let _ = done.send(ended);
            }))
            .map_err(|_| StoreError::Gone)?;
        for row in arriving {
            let (kind, agent, record) = row?;
            visit(&kind, agent.as_deref(), &record)?;
        }
        Ok(answer.recv().map_err(|_| StoreError::Gone)??)
    }

    /// The id of a current record (active, not superseded) of this text, kind and owner.
    pub fn current_record_saying(&self, text: &str, kind: &str, owner: &str) -> Result<Option<String>, StoreError> {
        let (text, kind, owner) = (text.to_owned(), kind.to_owned(), owner.to_owned());
        self.call(move |session| session.current_record_saying(&text, &kind, &owner))
    }

    /// The `seq` of the record `id`.
    pub fn seq_of(&self, id: &str) -> Result<Option<i64>, StoreError> {
        let id = id.to_owned();
        self.call(move |session| session.seq_of(&id))
    }

    /// The `seq` and id of the records derived from the record `id`.
    pub fn derived_from(&self, id: &str) -> Result<Vec<(i64, String)>, StoreError> {
        let id = id.to_owned();
        self.call(move |session| session.derived_from(&id))
    }

    /// The JSON of the record at `seq`.
    pub fn record_at(&self, seq: i64) -> Result<Option<String>, StoreError> {
        self.call(move |session| session.record_at(seq))
    }

    /// Deletes the record at `seq` with its relations.
    pub fn delete(&self, seq: i64) -> Result<(), StoreError> {
        self.call(move |session| session.delete(seq))
    }

    /// Recall's candidates: see [`Candidates`].
    pub fn candidates(&self, filter: Candidates) -> Result<Vec<Candidate>, StoreError> {
        self.call(move |session| session.candidates(&filter))
    }
}

impl Source for Database {
    fn latest_change(&self) -> Result<Option<i64>, StoreError> {
        self.call(Session::latest_change)
    }

    fn first_change_after(&self, applied: i64) -> Result<Option<i64>, StoreError> {
        self.call(move |session| session.first_change_after(applied))
    }

    fn changed_seqs(&self, applied: i64, latest: i64) -> Result<Vec<i64>, StoreError> {
        self.call(move |session| session.changed_seqs(applied, latest))
    }

    fn live_rows_after(&self, after: i64, limit: i64, visit: &mut Visit<'_>) -> Result<i64, StoreError> {
        let rows = self.call(move |session| session.index_rows(after, limit))?;
        let read = rows.len() as i64;
        for row in &rows {
            visit(row.get(0), indexed_row(row))?;
        }
        Ok(read)
    }

    fn live_row_at(&self, seq: i64, visit: &mut Visit<'_>) -> Result<(), StoreError> {
        if let Some(row) = self.call(move |session| session.index_row_at(seq))? {
            visit(seq, indexed_row(&row))?;
        }
        Ok(())
    }
}

/// A row of [`Session::index_rows`] as the search index reads it (the columns' types are the
/// tables', so every row reads).
fn indexed_row(row: &postgres::Row) -> Option<IndexedRow<'_>> {
    Some(IndexedRow {
        seq: row.try_get(0).ok()?,
        text: row.try_get(1).ok()?,
        kind: row.try_get(2).ok()?,
        owner: row.try_get(3).ok()?,
        agent: row.try_get(4).ok()?,
        session: row.try_get(5).ok()?,
        created_us: row.try_get(6).ok()?,
        valid_from_us: row.try_get(7).ok()?,
        valid_to_us: row.try_get(8).ok()?,
        salience: row.try_get(9).ok()?,
        superseded: row.try_get(10).ok()?,
        id: row.try_get(11).ok()?,
    })
}

/// An erasure: the id, and for a message the provider, conversation and message ids.
pub type Erasure = (String, Option<String>, Option<String>, Option<String>);

/// The store location `path` as PostgreSQL's URL, when it is one.
pub fn url_of(path: &Path) -> Option<&str> {
    path.to_str().filter(|text| is_postgres_url(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_password() {
        assert_eq!(without_password("postgres://memport:secret@db:5432/memport?sslmode=disable"), "postgres://memport:***@db:5432/memport");
        assert_eq!(without_password("postgresql://memport@db/memport"), "postgresql://memport@db/memport");
        assert_eq!(without_password("postgres://localhost"), "postgres://localhost/");
        assert_eq!(without_password("postgres://u:ab/cd@db/memport"), "postgres://u:***@db/memport");
        assert_eq!(without_password("postgres://db?user=u&password=x"), "postgres://db/");
    }

    #[test]
    fn only_postgres_urls_name_a_database() {
        assert!(is_postgres_url("postgres://db/memport") && is_postgres_url("postgresql://db/memport"));
        assert!(!is_postgres_url("/home/me/.memport/state.db") && !is_postgres_url("state.db"));
    }
}
