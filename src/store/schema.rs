//! The store's tables and how an older store file is brought up to the current schema.
//!
//! Records are UMP 0.1 records (the JSON kept whole in `records.record`) with the members a
//! query filters or ranks on copied into columns: kind, status, owner, agent, session, text,
//! the three times as microseconds, salience. `record_text` is the FTS5 index of their text
//! (external content: the text lives once, in `records`). `relations` lists each record's
//! typed links (`derived_from` a message, `about` an entity), so evidence and entities are
//! found without parsing every record. `erasures` remembers records erased for good, so a later
//! load of the same export does not bring them back, and for an erased message also the
//! provider, conversation and message ids it was written under (which its record id, a hash of
//! them, does not give back), so a later sync can withdraw it from what earlier runs wrote
//! (version 2; [`migrate`] adds them to a store of version 1). `record_changes` logs the `seq`
//! of every record inserted or deleted (by triggers, so whoever writes logs), which is how recall's
//! in-memory search index ([`super::search`]) catches up with writes of other connections and
//! processes; it is added to a store of version 1 that lacks it when the store is opened for
//! writing, and a bulk load, after which any index is built again, clears it.

use rusqlite::Connection;

use super::StoreError;

/// The schema this build writes and reads. A store of a later version is refused.
pub const SCHEMA_VERSION: i64 = 2;

/// The value of `store_meta.format`: what tells a memport store from any other SQLite file.
pub const STORE_FORMAT: &str = "memport-store";

const CREATE_V1: &str = "
CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE records (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    owner TEXT NOT NULL,
    agent TEXT,
    session TEXT,
    text TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    valid_from_us INTEGER,
    valid_to_us INTEGER,
    salience REAL,
    superseded INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX records_by_session ON records (agent, session);
CREATE INDEX records_by_created ON records (created_us);
CREATE VIRTUAL TABLE record_text USING fts5 (text, content = 'records', content_rowid = 'seq', tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE relations (seq INTEGER NOT NULL, type TEXT NOT NULL, target TEXT NOT NULL);
CREATE INDEX relations_by_seq ON relations (seq);
CREATE INDEX relations_by_target ON relations (target);
CREATE TABLE erasures (id TEXT PRIMARY KEY, reason TEXT NOT NULL, erased_at TEXT NOT NULL) WITHOUT ROWID;
";

/// Version 2: the provider, conversation and message ids of an erased message.
const TO_V2: &str = "
ALTER TABLE erasures ADD COLUMN provider TEXT;
ALTER TABLE erasures ADD COLUMN conversation TEXT;
ALTER TABLE erasures ADD COLUMN message TEXT;
UPDATE store_meta SET value = '2' WHERE key = 'schema_version';
";

const CHANGE_LOG: &str = "
CREATE TABLE IF NOT EXISTS record_changes (change INTEGER PRIMARY KEY AUTOINCREMENT, seq INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS record_inserted AFTER INSERT ON records BEGIN INSERT INTO record_changes (seq) VALUES (new.seq); END;
CREATE TRIGGER IF NOT EXISTS record_deleted AFTER DELETE ON records BEGIN INSERT INTO record_changes (seq) VALUES (old.seq); END;
CREATE TRIGGER IF NOT EXISTS record_updated AFTER UPDATE ON records BEGIN INSERT INTO record_changes (seq) VALUES (new.seq); END;
";

/// Adds the change log and its triggers where they are missing (a store opened for writing).
///
/// # Errors
/// SQLite errors.
pub fn ensure_change_log(connection: &Connection) -> Result<(), StoreError> {
    connection.execute_batch(CHANGE_LOG)?;
    Ok(())
}

/// The index of the records that are not messages, in store order: a store's export reads its
/// memories before the rest ([`super::Store::lists_memories_apart`]). An index, not a schema
/// change: a build without it reads the store the same.
const MEMORY_INDEX: &str = "CREATE INDEX IF NOT EXISTS records_memories ON records (seq) WHERE kind != 'episodic';";

/// Adds the memories' index where it is missing (a store opened for writing; for a large
/// store, one read of its records the first time).
///
/// # Errors
/// SQLite errors.
pub fn ensure_memory_index(connection: &Connection) -> Result<(), StoreError> {
    connection.execute_batch(MEMORY_INDEX)?;
    Ok(())
}

/// Whether the store has the memories' index.
pub fn has_memory_index(connection: &Connection) -> bool {
    connection.query_row("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'records_memories'", [], |_| Ok(())).is_ok()
}

/// The page size of a new store file. A record (its JSON and its text) is about 1.8 KB, and a
/// 4 KB page holds two with much of a page left over or spills a longer one to overflow pages:
/// at 16 KB the 1 GB export's store is 13% smaller and a full export, which reads every record
/// in order, takes a tenth less time (its first byte 14% sooner). A store made with another
/// page size is read as it is.
pub const PAGE_SIZE: u32 = 16 << 10;

/// Creates the tables of the current schema in an empty database.
///
/// # Errors
/// SQLite errors.
pub fn create(connection: &Connection, owner: &str) -> Result<(), StoreError> {
    // Set before the first table: the page size of a database is fixed once it has content.
    connection.execute_batch(&format!("PRAGMA page_size = {PAGE_SIZE}"))?;
    connection.execute_batch(CREATE_V1)?;
    ensure_change_log(connection)?;
    ensure_memory_index(connection)?;
    let mut insert = connection.prepare("INSERT INTO store_meta (key, value) VALUES (?1, ?2)")?;
    insert.execute(["format", STORE_FORMAT])?;
    insert.execute(["schema_version", "1"])?;
    insert.execute(["owner", owner])?;
    migrate(connection, 1)
}

/// Brings a store of `version` up to [`SCHEMA_VERSION`], each step in one transaction (a store
/// opened for writing; one opened only for reading is read as it is).
///
/// # Errors
/// SQLite errors.
pub fn migrate(connection: &Connection, version: i64) -> Result<(), StoreError> {
    if version < 2 {
        connection.execute_batch(&format!("SAVEPOINT to_v2; {TO_V2} RELEASE to_v2;"))?;
    }
    Ok(())
}

/// Checks that `connection` holds a memport store this build can read, and returns its owner
/// and schema version.
///
/// # Errors
/// [`StoreError::NotAStore`] for any other database, [`StoreError::NewerSchema`] for a store
/// written by a later memport.
pub fn check(connection: &Connection) -> Result<(String, i64), StoreError> {
    let meta = |key: &str| -> Option<String> {
        connection.query_row("SELECT value FROM store_meta WHERE key = ?1", [key], |row| row.get::<_, String>(0)).ok()
    };
    if meta("format").as_deref() != Some(STORE_FORMAT) {
        return Err(StoreError::NotAStore);
    }
    let version = meta("schema_version").and_then(|value| value.parse::<i64>().ok()).unwrap_or(0);
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema { found: version, supported: SCHEMA_VERSION });
    }
    Ok((meta("owner").unwrap_or_default(), version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_store_has_the_large_page_size_and_a_store_of_small_pages_is_read_and_written_as_it_is() {
        let folder = tempfile::tempdir().unwrap();
        let page_size = |path: &std::path::Path| -> u32 {
            Connection::open(path).unwrap().query_row("PRAGMA page_size", [], |row| row.get(0)).unwrap()
        };
        let new = folder.path().join("new.db");
        drop(crate::store::Store::create(&new, "me").unwrap());
        assert_eq!(page_size(&new), PAGE_SIZE);
        let small = folder.path().join("small.db");
        {
            let connection = Connection::open(&small).unwrap();
            connection.execute_batch("PRAGMA page_size = 4096").unwrap();
            connection.execute_batch(CREATE_V1).unwrap();
            connection
                .execute_batch(&format!(
                    "INSERT INTO store_meta VALUES ('format', '{STORE_FORMAT}'), ('schema_version', '2'), ('owner', 'me');"
                ))
                .unwrap();
        }
        let writer = crate::store::Store::open(&small, true).unwrap();
        assert!(writer.lists_memories_apart());
        drop(writer);
        assert_eq!(page_size(&small), 4096, "an existing store keeps its pages");
    }

    #[test]
    fn a_version_one_store_opened_for_writing_is_brought_to_version_two_and_read_as_it_is_otherwise() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("v1.db");
        {
            let connection = Connection::open(&path).unwrap();
            connection.execute_batch(CREATE_V1).unwrap();
            connection
                .execute_batch(&format!(
                    "INSERT INTO store_meta VALUES ('format', '{STORE_FORMAT}'), ('schema_version', '1'), ('owner', 'me');
                     INSERT INTO erasures VALUES ('urn:ump:old', 'asked', '2026-01-01T00:00:00Z');"
                ))
                .unwrap();
        }
        let reader = crate::store::Store::open(&path, false).unwrap();
        assert!(reader.erased_messages().unwrap().is_empty(), "version 1 kept no message ids");
        assert!(reader.is_erased("urn:ump:old").unwrap());
        assert!(!reader.lists_memories_apart(), "read as it is: no index added");
        drop(reader);
        let writer = crate::store::Store::open(&path, true).unwrap();
        assert!(writer.lists_memories_apart(), "the memories' index is added");
        drop(writer);
        let connection = Connection::open(&path).unwrap();
        assert_eq!(check(&connection).unwrap(), ("me".to_owned(), SCHEMA_VERSION));
        let kept: (String, Option<String>) =
            connection.query_row("SELECT id, message FROM erasures", [], |row| Ok((row.get(0)?, row.get(1)?))).unwrap();
        assert_eq!(kept, ("urn:ump:old".to_owned(), None));
    }
}
