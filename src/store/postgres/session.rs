//! The connection to a store in PostgreSQL, on the thread that owns it: the tables, the write
//! lock, and each query of the store in SQL.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc;

use postgres::error::SqlState;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::{Client, NoTls, Statement};

use super::super::schema::STORE_FORMAT;
use super::super::{Put, Row, StoreError};
use super::{Candidate, Candidates, Erasure, RecordFilter, without_password};

/// The schema version of the tables this build writes and reads (the PostgreSQL store's own:
/// its tables began with what the SQLite file's version 2 holds).
pub const SCHEMA_VERSION: i64 = 2;
/// The version that added the change log recall's in-memory index follows.
pub const CHANGE_LOG_VERSION: i64 = 2;

/// The advisory-lock class of the store's write locks (1297109845 in the change log's trigger).
const LOCK_CLASS: i32 = 0x4D50_5355;
/// The store's write lock: the class (its own, apart from the sync state's tenant locks) and,
/// in SQL, the second key, the store's schema, so stores in other schemas are not held.
const WRITE_LOCK: &str = "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))";

/// Version 1: the tables of a store. A record's `tsvector` is made of its text's first 250,000
/// characters: PostgreSQL refuses one over 1 MB, which a pasted log or blob of a few MB
/// reaches. `superseded_by` repeats the record's ids of that name for recall's validity rule.
const CREATE_V1: &str = "
CREATE TABLE memport_store_records (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    owner TEXT NOT NULL,
    agent TEXT,
    session TEXT,
    text TEXT NOT NULL,
    created_us BIGINT NOT NULL,
    valid_from_us BIGINT,
    valid_to_us BIGINT,
    salience DOUBLE PRECISION,
    superseded BOOLEAN NOT NULL,
    record TEXT NOT NULL,
    superseded_by TEXT[] NOT NULL,
    words tsvector GENERATED ALWAYS AS (to_tsvector('english', left(text, 250000))) STORED
);
CREATE INDEX memport_store_records_words ON memport_store_records USING GIN (words);
CREATE INDEX memport_store_records_by_session ON memport_store_records (agent, session);
CREATE INDEX memport_store_records_by_created ON memport_store_records (created_us);
CREATE TABLE memport_store_relations (
    seq BIGINT NOT NULL REFERENCES memport_store_records (seq) ON DELETE CASCADE,
    type TEXT NOT NULL,
    target TEXT NOT NULL
);
CREATE INDEX memport_store_relations_by_seq ON memport_store_relations (seq);
CREATE INDEX memport_store_relations_by_target ON memport_store_relations (target);
CREATE TABLE memport_store_erasures (
    id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    erased_at TEXT NOT NULL,
    provider TEXT,
    conversation TEXT,
    message TEXT
);
";

/// Version 2: the change log recall's in-memory index catches up from ([`super::super::search`]):
/// the `seq` of every record inserted, updated or deleted, written by statement triggers
/// (whoever writes logs). Changes are numbered on from the log's last, not by a sequence: a
/// rolled-back write would leave a gap in a sequence, and a gap tells the index that part of
/// the log is gone. Writers hold the store's write lock, so the numbers follow commit order.
/// A bulk load logs nothing (`memport.bulk_load`): it clears the log and leaves a gap after
/// it, so an index of the store from before the load is built again from the records.
const TO_V2: &str = "
CREATE TABLE memport_store_changes (change BIGINT PRIMARY KEY, seq BIGINT NOT NULL);
CREATE FUNCTION memport_store_log_changes() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF coalesce(current_setting('memport.bulk_load', true), '') = 'on' THEN
        RETURN NULL;
    END IF;
    -- The store's write lock (memport's writers hold it already), so that a write by another
    -- tool numbers its changes after the last one committed.
    PERFORM pg_advisory_xact_lock(1297109845, hashtext(current_schema()));
    INSERT INTO memport_store_changes (change, seq)
        SELECT (SELECT coalesce(max(change), 0) FROM memport_store_changes) + row_number() OVER (ORDER BY seq), seq FROM changed_rows;
    RETURN NULL;
END
$$;
CREATE TRIGGER memport_store_inserted AFTER INSERT ON memport_store_records REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memport_store_log_changes();
CREATE TRIGGER memport_store_updated AFTER UPDATE ON memport_store_records REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memport_store_log_changes();
CREATE TRIGGER memport_store_deleted AFTER DELETE ON memport_store_records REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memport_store_log_changes();
DO $$ BEGIN
    -- The store's own schema, not the search path of whoever writes: `\"$user\"` names another.
    EXECUTE format('ALTER FUNCTION memport_store_log_changes() SET search_path = %I', current_schema());
END $$;
UPDATE memport_store_meta SET value = '2' WHERE key = 'schema_version';
";

/// The memories' own index: an export reads the memories alone first, for the entity links
/// its AIMEM bundle's checksum covers before anything else (`crate::serve::brain::export`),
/// and without it that read would scan every message. Added when a store is opened for
/// writing, as in a store file (`records_memories`).
const MEMORIES_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS memport_store_records_memories ON memport_store_records (seq) WHERE kind <> 'episodic'";

/// The connection to a store in PostgreSQL, on the thread that owns it ([`Database`]).
pub(super) struct Session {
    client: Client,
    /// Prepared statements by their text: one round trip a call instead of two.
    statements: HashMap<&'static str, Statement>,
    /// A transaction is open ([`Session::begin_writing`]): what it wrote is not committed.
    in_transaction: bool,
}

/// A PostgreSQL error as the store's, naming what to do where it can.
fn failed(error: postgres::Error) -> StoreError {
    match error.code() {
        // The write lock or a row lock was not had within `lock_timeout`.
        Some(code) if *code == SqlState::LOCK_NOT_AVAILABLE => StoreError::Busy,
        _ => StoreError::Postgres(described(&error)),
    }
}

/// What the server said (its message, detail and hint), or the client's error.
fn described(error: &postgres::Error) -> String {
    let Some(said) = error.as_db_error() else { return error.to_string() };
    let mut text = said.message().to_owned();
    for more in [said.detail(), said.hint()].into_iter().flatten() {
        text.push_str("; ");
        text.push_str(more);
    }
    text
}

/// Refuses a NUL character in a column PostgreSQL keeps as text (it cannot store one); the
/// record's JSON holds any as an escape.
fn without_nul<'a>(name: &str, value: &'a str) -> Result<&'a str, StoreError> {
    if value.contains('\0') {
        return Err(StoreError::InvalidRecord(format!("its {name} holds a NUL character, which a PostgreSQL store cannot keep")));
    }
    Ok(value)
}

/// The ids a record names in `superseded_by`.
fn successors_of(record: &serde_json::Value) -> Result<Vec<String>, StoreError> {
    let mut ids = Vec::new();
    for id in record["superseded_by"].as_array().into_iter().flatten().filter_map(serde_json::Value::as_str) {
        if id.contains('\n') {
            return Err(StoreError::InvalidRecord("a `superseded_by` id holds a line break".into()));
        }
        ids.push(without_nul("superseded_by", id)?.to_owned());
    }
    Ok(ids)
}

/// Refuses a record with a NUL character in a column PostgreSQL keeps as text.
fn check_columns(row: &Row) -> Result<(), StoreError> {
    for (name, value) in [("id", Some(row.id)), ("kind", Some(row.kind)), ("status", Some(row.status)), ("owner", Some(row.owner))]
        .into_iter()
        .chain([("agent", row.agent), ("session", row.session)])
    {
        if let Some(value) = value {
            without_nul(name, value)?;
        }
    }
    Ok(())
}

impl Session {
    /// Connects to the store at `url`; `create` makes the store's tables when the schema has
    /// none (and brings older ones up to date), else only a store already there is opened.
    /// Returns the connection, the store's owner (`owner` for a store made now), version and
    /// whether the memories have their own index.
    ///
    /// # Errors
    /// [`StoreError::Unreachable`] when the server cannot be reached, [`StoreError::NotAStore`]
    /// without the tables (opening), [`StoreError::NewerSchema`], PostgreSQL errors.
    pub(super) fn connect(
        url: &str,
        owner: Option<&str>,
        writable: bool,
        lock_timeout: std::time::Duration,
    ) -> Result<(Session, String, i64, bool), StoreError> {
        let client = Client::connect(url, NoTls)
            .map_err(|error| StoreError::Unreachable { location: without_password(url), reason: described(&error) })?;
        let mut session = Session { client, statements: HashMap::new(), in_transaction: false };
        session.set_lock_timeout(lock_timeout);
        let (owner, version, memories_apart) = session.prepare_schema(owner, writable)?;
        if !writable {
            session.client.batch_execute("SET default_transaction_read_only = on").map_err(failed)?;
        }
        Ok((session, owner, version, memories_apart))
    }

    /// Reads the store's metadata, making or migrating the tables (and adding the memories'
    /// index) first when allowed to. Returns the owner, the schema version and whether the
    /// memories have their own index ([`MEMORIES_INDEX`]).
    pub(super) fn prepare_schema(&mut self, owner: Option<&str>, writable: bool) -> Result<(String, i64, bool), StoreError> {
        let mut transaction = self.client.transaction().map_err(failed)?;
        let schema: Option<String> = transaction.query_one("SELECT current_schema()::text", &[]).map_err(failed)?.get(0);
        let Some(schema) = schema else {
            return Err(StoreError::InvalidLocation(
                "the connection's search_path names no schema that exists: create it first (CREATE SCHEMA name)".into(),
            ));
        };
        let tables_there = |transaction: &mut postgres::Transaction<'_>| -> Result<bool, StoreError> {
            let sql = "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'memport_store_meta')";
            Ok(transaction.query_one(sql, &[&schema]).map_err(failed)?.get(0))
        };
        let mut has_meta = tables_there(&mut transaction)?;
        if !has_meta && writable {
            // Two runs making the same store at once make it once: the second finds it made.
            transaction.execute(WRITE_LOCK, &[&LOCK_CLASS]).map_err(failed)?;
            has_meta = tables_there(&mut transaction)?;
        }
        if !has_meta {
            let Some(owner) = owner.filter(|_| writable) else { return Err(StoreError::NotAStore) };
            transaction
                .batch_execute("CREATE TABLE memport_store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);")
                .and_then(|()| transaction.batch_execute(CREATE_V1))
                .map_err(failed)?;
            for (key, value) in [("format", STORE_FORMAT), ("schema_version", "1"), ("owner", owner)] {
                transaction.execute("INSERT INTO memport_store_meta (key, value) VALUES ($1, $2)", &[&key, &value]).map_err(failed)?;
            }
        }
        let mut meta = HashMap::new();
        for row in transaction.query("SELECT key, value FROM memport_store_meta", &[]).map_err(failed)? {
            meta.insert(row.get::<_, String>(0), row.get::<_, String>(1));
        }
        if meta.get("format").map(String::as_str) != Some(STORE_FORMAT) {
            return Err(StoreError::NotAStore);
        }
        let mut version = meta.get("schema_version").and_then(|value| value.parse::<i64>().ok()).unwrap_or(0);
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema { found: version, supported: SCHEMA_VERSION });
        }
        if version < SCHEMA_VERSION && writable {
            // Under the write lock, and read again: another connection may have just done it.
            transaction.execute(WRITE_LOCK, &[&LOCK_CLASS]).map_err(failed)?;
            let sql = "SELECT value FROM memport_store_meta WHERE key = 'schema_version'";
            version = transaction.query_one(sql, &[]).map_err(failed)?.get::<_, String>(0).parse().unwrap_or(0);
            if version < CHANGE_LOG_VERSION {
                transaction.batch_execute(TO_V2).map_err(failed)?;
                version = CHANGE_LOG_VERSION;
            }
        }
        // A valid index: one a failed build left behind is not used by the planner either.
        let index_there =
            "SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                           WHERE n.nspname = $1 AND c.relname = 'memport_store_records_memories' AND i.indisvalid)";
        let mut memories_apart: bool = transaction.query_one(index_there, &[&schema]).map_err(failed)?.get(0);
        // Only the role that owns the tables (or a member of it) may make an index.
        let owns_tables = "SELECT pg_has_role((SELECT relowner FROM pg_class WHERE oid = 'memport_store_records'::regclass), 'USAGE')";
        if !memories_apart && writable && transaction.query_one(owns_tables, &[]).map_err(failed)?.get::<_, bool>(0) {
            // An index, not a schema change: older builds read the store as before. Made under
            // the write lock (two connections making it at once would collide), and only when
            // the lock is free at once: another writer's load is not waited for, and a later
            // open makes it. Only an optimisation, so tried apart (a savepoint): whatever goes
            // wrong leaves the store without it, and opened.
            let mut attempt = transaction.savepoint("memories_index").map_err(failed)?;
            let locked = attempt
                .query_one("SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema()))", &[&LOCK_CLASS])
                .map(|row| row.get::<_, bool>(0));
            if matches!(locked, Ok(true)) && attempt.batch_execute(MEMORIES_INDEX).is_ok() {
                attempt.commit().map_err(failed)?;
                memories_apart = true;
            }
        }
        transaction.commit().map_err(failed)?;
        Ok((meta.remove("owner").unwrap_or_default(), version, memories_apart))
    }

    /// The prepared statement of `sql`.
    pub(super) fn statement(&mut self, sql: &'static str) -> Result<Statement, StoreError> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).map_err(failed)?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }

    /// Runs `sql` and returns its rows.
    pub(super) fn rows(&mut self, sql: &'static str, parameters: &[&(dyn ToSql + Sync)]) -> Result<Vec<postgres::Row>, StoreError> {
        let statement = self.statement(sql)?;
        self.client.query(&statement, parameters).map_err(failed)
    }

    /// Runs `sql` and returns its first row, if any.
    pub(super) fn first_row(&mut self, sql: &'static str, parameters: &[&(dyn ToSql + Sync)]) -> Result<Option<postgres::Row>, StoreError> {
        let statement = self.statement(sql)?;
        self.client.query_opt(&statement, parameters).map_err(failed)
    }

    /// Runs `sql`, returning how many rows it changed.
    pub(super) fn run(&mut self, sql: &'static str, parameters: &[&(dyn ToSql + Sync)]) -> Result<u64, StoreError> {
        let statement = self.statement(sql)?;
        self.client.execute(&statement, parameters).map_err(failed)
    }

    /// Begins a transaction holding the store's write lock (waiting for another writer up to
    /// `lock_timeout`).
    ///
    /// # Errors
    /// [`StoreError::Busy`] when another writer keeps the lock longer; PostgreSQL errors.
    pub(super) fn begin_writing(&mut self) -> Result<(), StoreError> {
        self.client.batch_execute("BEGIN").map_err(failed)?;
        self.in_transaction = true;
        if let Err(error) = self.run(WRITE_LOCK, &[&LOCK_CLASS]) {
            self.rollback();
            return Err(error);
        }
        Ok(())
    }

    /// Commits the open transaction.
    ///
    /// # Errors
    /// PostgreSQL errors (the transaction is then rolled back).
    pub(super) fn commit(&mut self) -> Result<(), StoreError> {
        let committed = self.client.batch_execute("COMMIT").map_err(failed);
        if committed.is_err() {
            self.rollback();
        }
        self.in_transaction = false;
        committed
    }

    /// Rolls the open transaction back (a connection that lost its server has none left).
    pub(super) fn rollback(&mut self) {
        let _ = self.client.batch_execute("ROLLBACK");
        self.in_transaction = false;
    }

    /// Begins a bulk load: a transaction holding the write lock in which the change log is not
    /// written (whoever indexes the store after it reads every record).
    pub(super) fn begin_bulk_load(&mut self) -> Result<(), StoreError> {
        self.begin_writing()?;
        if let Err(error) = self.client.batch_execute("SET LOCAL memport.bulk_load = 'on'").map_err(failed) {
            self.rollback();
            return Err(error);
        }
        Ok(())
    }

    /// Commits a bulk load, leaving a gap in the change log after it: an index of the store
    /// from before the load finds its next change missing and is built again.
    pub(super) fn end_bulk_load(&mut self) -> Result<(), StoreError> {
        if self.has_change_log()? {
            let cleared = self.client.batch_execute(
                "INSERT INTO memport_store_changes (change, seq) SELECT coalesce(max(change), 0) + 2, 0 FROM memport_store_changes;
                 DELETE FROM memport_store_changes WHERE change < (SELECT max(change) FROM memport_store_changes);",
            );
            if let Err(error) = cleared {
                self.rollback();
                return Err(failed(error));
            }
        }
        self.commit()?;
        // The planner's statistics for what the load wrote: without them (until autovacuum
        // comes by, a minute or more later) it takes the memories for most of the table, and
        // the first export reads them by scanning every message instead of through their
        // index. Only an optimisation: a role that may write the store but not analyze it is
        // warned (or refused) here, and the load stands.
        let _ = self.client.batch_execute("ANALYZE memport_store_records");
        Ok(())
    }

    /// Whether the store has the change log (a store of version 1 opened only for reading has not).
    fn has_change_log(&mut self) -> Result<bool, StoreError> {
        let sql = "SELECT to_regclass('memport_store_changes') IS NOT NULL";
        Ok(self.first_row(sql, &[])?.is_some_and(|row| row.get(0)))
    }

    /// The last change of the log (0 when it is empty) of a store of [`CHANGE_LOG_VERSION`].
    pub(super) fn latest_change(&mut self) -> Result<Option<i64>, StoreError> {
        if self.in_transaction {
            return Err(StoreError::InTransaction);
        }
        let row = self.first_row("SELECT coalesce(max(change), 0) FROM memport_store_changes", &[])?;
        Ok(row.map(|row| row.get(0)))
    }

    /// The first change after `applied`.
    pub(super) fn first_change_after(&mut self, applied: i64) -> Result<Option<i64>, StoreError> {
        let row = self.first_row("SELECT min(change) FROM memport_store_changes WHERE change > $1", &[&applied])?;
        Ok(row.and_then(|row| row.get(0)))
    }

    /// The records changed after `applied` up to `latest`, each once.
    pub(super) fn changed_seqs(&mut self, applied: i64, latest: i64) -> Result<Vec<i64>, StoreError> {
        let rows = self
            .rows("SELECT DISTINCT seq FROM memport_store_changes WHERE change > $1 AND change <= $2 AND seq > 0", &[&applied, &latest])?;
        Ok(rows.into_iter().map(|row| row.get(0)).collect())
    }

    /// The live records after `seq` `after` as the search index reads them, at most `limit`.
    pub(super) fn index_rows(&mut self, after: i64, limit: i64) -> Result<Vec<postgres::Row>, StoreError> {
        self.rows(
            "SELECT seq, text, kind, owner, agent, session, created_us, valid_from_us, valid_to_us, salience, superseded, id
             FROM memport_store_records WHERE seq > $1 AND status != 'tombstoned' ORDER BY seq LIMIT $2",
            &[&after, &limit],
        )
    }

    /// The record at `seq` as the search index reads it, when it is there and live.
    pub(super) fn index_row_at(&mut self, seq: i64) -> Result<Option<postgres::Row>, StoreError> {
        self.first_row(
            "SELECT seq, text, kind, owner, agent, session, created_us, valid_from_us, valid_to_us, salience, superseded, id
             FROM memport_store_records WHERE seq = $1 AND status != 'tombstoned'",
            &[&seq],
        )
    }

    /// Until when the superseded record at `seq` counts as valid: its first successor's
    /// creation, or its own when no successor is stored (recall's rule).
    pub(super) fn superseded_until(&mut self, seq: i64) -> Result<Option<i64>, StoreError> {
        let row = self.first_row(
            "SELECT coalesce((SELECT min(s.created_us) FROM unnest(r.superseded_by) j (v) JOIN memport_store_records s ON s.id = j.v),
                 r.created_us) FROM memport_store_records r WHERE r.seq = $1",
            &[&seq],
        )?;
        Ok(row.map(|row| row.get(0)))
    }

    /// How long a write waits for another writer's lock before it is refused.
    pub(super) fn set_lock_timeout(&mut self, timeout: std::time::Duration) {
        let milliseconds = timeout.as_millis().clamp(1, i32::MAX as u128);
        // Refused only by a server that is gone, which the next statement reports.
        let _ = self.client.batch_execute(&format!("SET lock_timeout = {milliseconds}"));
    }

    /// A value of the store's metadata.
    pub(super) fn meta(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self.first_row("SELECT value FROM memport_store_meta WHERE key = $1", &[&key])?.map(|row| row.get(0)))
    }

    /// Sets a value of the store's metadata.
    pub(super) fn set_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.run(
            "INSERT INTO memport_store_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[&key, &value],
        )?;
        Ok(())
    }

    /// Whether the record `id` was erased for good.
    pub(super) fn is_erased(&mut self, id: &str) -> Result<bool, StoreError> {
        Ok(self.first_row("SELECT 1 FROM memport_store_erasures WHERE id = $1", &[&id])?.is_some())
    }

    /// Writes a record again as the row at `seq` (so it keeps its place), with its relations.
    /// New records go in together ([`Session::put_many`]).
    fn rewrite(&mut self, seq: i64, json: &str, record: &serde_json::Value) -> Result<(), StoreError> {
        let row = Row::of(record)?;
        check_columns(&row)?;
        let successors = successors_of(record)?;
        // The text column is the search's copy; the record keeps the text as it is.
        let text = row.text.replace('\0', "");
        self.run(
            "UPDATE memport_store_records SET kind = $2, status = $3, owner = $4, agent = $5, session = $6, text = $7,
             created_us = $8, valid_from_us = $9, valid_to_us = $10, salience = $11, superseded = $12, record = $13,
             superseded_by = $14 WHERE seq = $1",
            &[
                &seq,
                &row.kind,
                &row.status,
                &row.owner,
                &row.agent,
                &row.session,
                &text,
                &row.created_us,
                &row.valid_from_us,
                &row.valid_to_us,
                &row.salience,
                &row.superseded,
                &json,
                &successors,
            ],
        )?;
        self.run("DELETE FROM memport_store_relations WHERE seq = $1", &[&seq])?;
        let (mut kinds, mut targets) = (Vec::new(), Vec::new());
        for relation in record["relations"].as_array().into_iter().flatten() {
            if let (Some(kind), Some(target)) = (relation["type"].as_str(), relation["target"].as_str()) {
                kinds.push(without_nul("relation", kind)?);
                targets.push(without_nul("relation", target)?);
            }
        }
        if !kinds.is_empty() {
            self.run(
                "INSERT INTO memport_store_relations (seq, type, target) SELECT $1, kind, target FROM unnest($2::text[], $3::text[]) AS r (kind, target)",
                &[&seq, &kinds, &targets],
            )?;
        }
        Ok(())
    }

    /// Stores `records` (each with its JSON) as [`super::super::Store::put`] stores each, in
    /// order, with a few round trips for all: the ids looked up at once, new records inserted
    /// together (a record whose id comes again in `records` after them first sends those).
    pub(super) fn put_many(&mut self, records: &[(String, serde_json::Value)]) -> Result<Vec<Put>, StoreError> {
        let rows = records.iter().map(|(_, record)| Row::of(record)).collect::<Result<Vec<_>, _>>()?;
        let ids: Vec<&str> = rows.iter().map(|row| row.id).collect();
        for row in &rows {
            check_columns(row)?;
        }
        let erased: HashSet<String> =
            self.rows("SELECT id FROM memport_store_erasures WHERE id = ANY($1)", &[&ids])?.into_iter().map(|row| row.get(0)).collect();
        let mut stored: HashMap<String, (i64, String)> = self
            .rows("SELECT id, seq, record FROM memport_store_records WHERE id = ANY($1)", &[&ids])?
            .into_iter()
            .map(|row| (row.get(0), (row.get(1), row.get(2))))
            .collect();
        let mut puts = Vec::with_capacity(records.len());
        let mut new: Vec<usize> = Vec::new();
        let mut new_ids: HashSet<&str> = HashSet::new();
        for (index, ((json, record), row)) in records.iter().zip(&rows).enumerate() {
            if erased.contains(row.id) {
                puts.push(Put::Erased);
                continue;
            }
            if new_ids.contains(row.id) {
                self.insert_new(
                    &new.iter().map(|&at| (&rows[at], records[at].0.as_str(), &records[at].1)).collect::<Vec<_>>(),
                    &mut stored,
                )?;
                new.clear();
                new_ids.clear();
            }
            match stored.get(row.id) {
                Some((_, earlier)) if earlier == json => puts.push(Put::Unchanged),
                Some(&(seq, _)) => {
                    self.rewrite(seq, json, record)?;
                    stored.insert(row.id.to_owned(), (seq, json.clone()));
                    puts.push(Put::Replaced);
                }
                None => {
                    new.push(index);
                    new_ids.insert(row.id);
                    puts.push(Put::Created);
                }
            }
        }
        self.insert_new(&new.iter().map(|&at| (&rows[at], records[at].0.as_str(), &records[at].1)).collect::<Vec<_>>(), &mut stored)?;
        Ok(puts)
    }

    /// Inserts new records in their order (their `seq`s follow it) with their relations, in
    /// two statements, and adds them to `stored`.
    fn insert_new(
        &mut self,
        new: &[(&Row, &str, &serde_json::Value)],
        stored: &mut HashMap<String, (i64, String)>,
    ) -> Result<(), StoreError> {
        if new.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = new.iter().map(|(row, ..)| row.id).collect();
        let kinds: Vec<&str> = new.iter().map(|(row, ..)| row.kind).collect();
        let statuses: Vec<&str> = new.iter().map(|(row, ..)| row.status).collect();
        let owners: Vec<&str> = new.iter().map(|(row, ..)| row.owner).collect();
        let agents: Vec<Option<&str>> = new.iter().map(|(row, ..)| row.agent).collect();
        let sessions: Vec<Option<&str>> = new.iter().map(|(row, ..)| row.session).collect();
        // The text column is the search's copy; the record keeps the text as it is.
        let texts: Vec<String> = new.iter().map(|(row, ..)| row.text.replace('\0', "")).collect();
        let created: Vec<i64> = new.iter().map(|(row, ..)| row.created_us).collect();
        let valid_from: Vec<Option<i64>> = new.iter().map(|(row, ..)| row.valid_from_us).collect();
        let valid_to: Vec<Option<i64>> = new.iter().map(|(row, ..)| row.valid_to_us).collect();
        let salience: Vec<Option<f64>> = new.iter().map(|(row, ..)| row.salience).collect();
        let superseded: Vec<bool> = new.iter().map(|(row, ..)| row.superseded).collect();
        let jsons: Vec<&str> = new.iter().map(|(_, json, _)| *json).collect();
        // Arrays of arrays must be rectangular: each record's successors go as one text, split
        // again in SQL (ids hold no newline: `check_columns` and `successors_of` refuse NULs,
        // and a newline is refused here).
        let successors: Vec<String> =
            new.iter().map(|(_, _, record)| successors_of(record).map(|ids| ids.join("\n"))).collect::<Result<_, _>>()?;
        let inserted = self.rows(
            "INSERT INTO memport_store_records (id, kind, status, owner, agent, session, text, created_us, valid_from_us, valid_to_us,
             salience, superseded, record, superseded_by)
             SELECT id, kind, status, owner, agent, session, text, created_us, valid_from_us, valid_to_us, salience, superseded, record,
                 CASE WHEN successors = '' THEN ARRAY[]::text[] ELSE string_to_array(successors, E'\\n') END
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[],
                 $10::bigint[], $11::float8[], $12::bool[], $13::text[], $14::text[])
                 WITH ORDINALITY AS n (id, kind, status, owner, agent, session, text, created_us, valid_from_us, valid_to_us, salience,
                 superseded, record, successors, place)
             ORDER BY place
             RETURNING id, seq",
            &[
                &ids,
                &kinds,
                &statuses,
                &owners,
                &agents,
                &sessions,
                &texts,
                &created,
                &valid_from,
                &valid_to,
                &salience,
                &superseded,
                &jsons,
                &successors,
            ],
        )?;
        let seqs: HashMap<String, i64> = inserted.into_iter().map(|row| (row.get(0), row.get(1))).collect();
        let (mut relation_seqs, mut relation_kinds, mut relation_targets) = (Vec::new(), Vec::new(), Vec::new());
        for (row, json, record) in new {
            let seq = seqs.get(row.id).copied().ok_or_else(|| StoreError::InvalidRecord(format!("`{}` was not inserted", row.id)))?;
            for relation in record["relations"].as_array().into_iter().flatten() {
                if let (Some(kind), Some(target)) = (relation["type"].as_str(), relation["target"].as_str()) {
                    relation_seqs.push(seq);
                    relation_kinds.push(without_nul("relation", kind)?);
                    relation_targets.push(without_nul("relation", target)?);
                }
            }
            stored.insert(row.id.to_owned(), (seq, (*json).to_owned()));
        }
        if !relation_seqs.is_empty() {
            self.run(
                "INSERT INTO memport_store_relations (seq, type, target) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])",
                &[&relation_seqs, &relation_kinds, &relation_targets],
            )?;
        }
        Ok(())
    }

    /// The JSON of the record `id`.
    pub(super) fn record(&mut self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self.first_row("SELECT record FROM memport_store_records WHERE id = $1", &[&id])?.map(|row| row.get(0)))
    }

    /// The id and JSON of each record at one of `seqs` unless it is tombstoned, by `seq`.
    pub(super) fn live_records_at(&mut self, seqs: &[i64]) -> Result<HashMap<i64, (String, String)>, StoreError> {
        let rows =
            self.rows("SELECT seq, id, record FROM memport_store_records WHERE seq = ANY($1) AND status != 'tombstoned'", &[&seqs])?;
        Ok(rows.into_iter().map(|row| (row.get(0), (row.get(1), row.get(2)))).collect())
    }

    /// [`Session::live_records_at`] and [`Session::latest_change`] in one statement: a recall
    /// reads the records it returns and learns whether the index it searched was current in one
    /// round trip.
    pub(super) fn live_records_and_latest_change(&mut self, seqs: &[i64]) -> Result<(super::LiveRecords, i64), StoreError> {
        if self.in_transaction {
            return Err(StoreError::InTransaction);
        }
        // The log's end is one row, joined to every record found (and alone when none is).
        let rows = self.rows(
            "SELECT changes.latest, records.seq, records.id, records.record
             FROM (SELECT coalesce(max(change), 0) AS latest FROM memport_store_changes) changes
             LEFT JOIN memport_store_records records ON records.seq = ANY($1) AND records.status != 'tombstoned'",
            &[&seqs],
        )?;
        let latest = rows.first().map_or(0, |row| row.get(0));
        let mut records = HashMap::with_capacity(rows.len());
        for row in &rows {
            if let (Some(seq), Some(id), Some(record)) = (row.get::<_, Option<i64>>(1), row.get(2), row.get(3)) {
                records.insert(seq, (id, record));
            }
        }
        Ok((records, latest))
    }

    /// Every erasure: ids, and for messages the ids they were written under.
    pub(super) fn erasures(&mut self) -> Result<Vec<Erasure>, StoreError> {
        let rows = self.rows(
            "SELECT id, provider, conversation, message FROM memport_store_erasures ORDER BY provider, conversation, message, id",
            &[],
        )?;
        Ok(rows.into_iter().map(|row| (row.get(0), row.get(1), row.get(2), row.get(3))).collect())
    }

    /// Records an erasure (replacing an earlier one of the id when `replace`).
    pub(super) fn add_erasure(
        &mut self,
        id: &str,
        reason: &str,
        erased_at: &str,
        message: Option<(&str, &str, &str)>,
        replace: bool,
    ) -> Result<(), StoreError> {
        let (provider, conversation, message_id) = message.map_or((None, None, None), |(p, c, m)| (Some(p), Some(c), Some(m)));
        let parameters: [&(dyn ToSql + Sync); 6] = [&id, &reason, &erased_at, &provider, &conversation, &message_id];
        if replace {
            self.run(
                "INSERT INTO memport_store_erasures (id, reason, erased_at, provider, conversation, message) VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, erased_at = excluded.erased_at, provider = excluded.provider,
                 conversation = excluded.conversation, message = excluded.message",
                &parameters,
            )?;
        } else {
            self.run(
                "INSERT INTO memport_store_erasures (id, reason, erased_at, provider, conversation, message) VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (id) DO NOTHING",
                &parameters,
            )?;
        }
        Ok(())
    }

    /// How many records there are, and how many are tombstoned.
    pub(super) fn counts(&mut self) -> Result<(i64, i64), StoreError> {
        let row = self
            .first_row("SELECT count(*), count(*) FILTER (WHERE status = 'tombstoned') FROM memport_store_records", &[])?
            .map_or((0, 0), |row| (row.get(0), row.get(1)));
        Ok(row)
    }

    /// The JSON of every live record of `agent`'s conversation `session`.
    pub(super) fn session_records(&mut self, agent: &str, session: &str) -> Result<Vec<String>, StoreError> {
        let rows = self.rows(
            "SELECT record FROM memport_store_records WHERE agent = $1 AND session = $2 AND status != 'tombstoned' ORDER BY seq",
            &[&agent, &session],
        )?;
        Ok(rows.into_iter().map(|row| row.get(0)).collect())
    }

    /// Records whose JSON names another id than their row: what a store edited by hand may hold.
    pub(super) fn integrity_problems(&mut self) -> Result<Vec<String>, StoreError> {
        let mut problems = Vec::new();
        let statement = self.statement("SELECT id, record FROM memport_store_records ORDER BY seq")?;
        // Streamed: a large store is read a row at a time, not held whole.
        let mut rows = self.client.query_raw(&statement, std::iter::empty::<&(dyn ToSql + Sync)>()).map_err(failed)?;
        while let Some(row) = rows.next().map_err(failed)? {
            let (id, json): (&str, &str) = (row.get(0), row.get(1));
            match serde_json::from_str::<serde_json::Value>(json) {
                Ok(record) if record["id"].as_str() == Some(id) => {}
                Ok(_) => problems.push(format!("the record of row `{id}` has another id")),
                Err(error) => problems.push(format!("the record `{id}` is not JSON: {error}")),
            }
        }
        Ok(problems)
    }

    /// Sends the records that pass `filter` with their kind to `rows`, in the order they were
    /// first stored; stops when the receiver is gone.
    pub(super) fn each_record(
        &mut self,
        filter: &RecordFilter,
        rows: &mpsc::SyncSender<Result<ExportedRow, StoreError>>,
    ) -> Result<(), StoreError> {
        let RecordFilter { since, agent, live_only, no_messages } = filter;
        let parameters: [&(dyn ToSql + Sync); 3] = [live_only, since, agent];
        let statement = if *no_messages {
            // The kind written out, so the planner can read the memories' own index.
            self.statement(
                "SELECT kind, agent, record FROM memport_store_records WHERE kind <> 'episodic' AND (NOT $1 OR status != 'tombstoned')
                 AND ($2::bigint IS NULL OR created_us >= $2) AND ($3::text IS NULL OR agent = $3) ORDER BY seq",
            )?
        } else {
            self.statement(
                "SELECT kind, agent, record FROM memport_store_records WHERE (NOT $1 OR status != 'tombstoned') AND ($2::bigint IS NULL OR created_us >= $2)
                 AND ($3::text IS NULL OR agent = $3) ORDER BY seq",
            )?
        };
        let mut found = self.client.query_raw(&statement, parameters).map_err(failed)?;
        while let Some(row) = found.next().map_err(failed)? {
            if rows.send(Ok((row.get(0), row.get(1), row.get(2)))).is_err() {
                break;
            }
        }
        Ok(())
    }

    /// The id of a current record (active, not superseded) of this text, kind and owner.
    pub(super) fn current_record_saying(&mut self, text: &str, kind: &str, owner: &str) -> Result<Option<String>, StoreError> {
        let text = text.replace('\0', "");
        let row = self.first_row(
            "SELECT id FROM memport_store_records WHERE text = $1 AND kind = $2 AND owner = $3 AND status = 'active' AND NOT superseded ORDER BY seq LIMIT 1",
            &[&text, &kind, &owner],
        )?;
        Ok(row.map(|row| row.get(0)))
    }

    /// The `seq` of the record `id`.
    pub(super) fn seq_of(&mut self, id: &str) -> Result<Option<i64>, StoreError> {
        Ok(self.first_row("SELECT seq FROM memport_store_records WHERE id = $1", &[&id])?.map(|row| row.get(0)))
    }

    /// The `seq` and id of the records derived from the record `id` (its evidence).
    pub(super) fn derived_from(&mut self, id: &str) -> Result<Vec<(i64, String)>, StoreError> {
        let rows = self.rows(
            "SELECT DISTINCT r.seq, r.id FROM memport_store_relations l JOIN memport_store_records r ON r.seq = l.seq
             WHERE l.type = 'derived_from' AND l.target = $1 ORDER BY r.seq",
            &[&id],
        )?;
        Ok(rows.into_iter().map(|row| (row.get(0), row.get(1))).collect())
    }

    /// The JSON of the record at `seq`.
    pub(super) fn record_at(&mut self, seq: i64) -> Result<Option<String>, StoreError> {
        Ok(self.first_row("SELECT record FROM memport_store_records WHERE seq = $1", &[&seq])?.map(|row| row.get(0)))
    }

    /// Deletes the record at `seq` with its relations.
    pub(super) fn delete(&mut self, seq: i64) -> Result<(), StoreError> {
        self.run("DELETE FROM memport_store_records WHERE seq = $1", &[&seq])?;
        Ok(())
    }

    /// Recall's candidates (see [`super::recall`]): the records valid at `valid_at` among the
    /// filters, with `seq`, creation, salience, agent, session and the text's rank for
    /// `words` (any of them; the most recent first and rank 0 without words), at most `limit`.
    pub(super) fn candidates(&mut self, filter: &Candidates) -> Result<Vec<Candidate>, StoreError> {
        let kinds: Vec<&str> = filter.kinds.iter().map(String::as_str).collect();
        let limit = filter.limit;
        let rows = if filter.words.is_empty() {
            let parameters: [&(dyn ToSql + Sync); 6] =
                [&kinds.is_empty(), &kinds, &filter.owner, &filter.valid_at, &limit, &filter.only_agent];
            self.rows(
                "SELECT r.seq, r.created_us, r.salience, r.agent, r.session, 0::float8 FROM memport_store_records r
                 WHERE r.status != 'tombstoned' AND ($1 OR r.kind = ANY($2)) AND ($3::text IS NULL OR r.owner = $3)
                 AND ($6::text IS NULL OR r.agent = $6)
                 AND (r.valid_from_us IS NULL OR r.valid_from_us <= $4) AND (r.valid_to_us IS NULL OR r.valid_to_us > $4)
                 AND NOT (r.superseded AND r.valid_to_us IS NULL AND coalesce((SELECT min(s.created_us)
                     FROM unnest(r.superseded_by) j (v) JOIN memport_store_records s ON s.id = j.v),
                     r.created_us) <= $4)
                 ORDER BY r.created_us DESC, r.seq LIMIT $5",
                &parameters,
            )?
        } else {
            // The words are letters and digits only, so joined by `|` they are a query of any.
            let query = filter.words.iter().map(|word| word.to_lowercase()).collect::<Vec<_>>().join(" | ");
            let parameters: [&(dyn ToSql + Sync); 7] =
                [&kinds.is_empty(), &kinds, &filter.owner, &filter.valid_at, &limit, &filter.only_agent, &query];
            self.rows(
                "SELECT r.seq, r.created_us, r.salience, r.agent, r.session, ts_rank(r.words, q)::float8 AS rank
                 FROM memport_store_records r, to_tsquery('english', $7) q
                 WHERE r.words @@ q AND r.status != 'tombstoned' AND ($1 OR r.kind = ANY($2)) AND ($3::text IS NULL OR r.owner = $3)
                 AND ($6::text IS NULL OR r.agent = $6)
                 AND (r.valid_from_us IS NULL OR r.valid_from_us <= $4) AND (r.valid_to_us IS NULL OR r.valid_to_us > $4)
                 AND NOT (r.superseded AND r.valid_to_us IS NULL AND coalesce((SELECT min(s.created_us)
                     FROM unnest(r.superseded_by) j (v) JOIN memport_store_records s ON s.id = j.v),
                     r.created_us) <= $4)
                 ORDER BY rank DESC, r.seq LIMIT $5",
                &parameters,
            )?
        };
        Ok(rows.into_iter().map(|row| (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4), row.get(5))).collect())
    }
}

/// A record an export reads, with the columns kept beside it: `kind`, `agent` and its JSON.
pub(super) type ExportedRow = (String, Option<String>, String);
