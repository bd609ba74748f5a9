//! The embedded state store: one SQLite file (the library is compiled in, so nothing needs to
//! be installed), a versioned schema migrated forward on open, and one write transaction per
//! run that is committed only when the run's outputs are in place.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};

use super::state::{ConversationEntry, Fingerprint, MemoryEntry, ProviderTotals, RunEntry, StateError, StateStore, conversation_key};
use super::stored::{count, decode_keys, encode_keys, fingerprint_of, signed};

/// The schema this build writes. Each step in [`MIGRATIONS`] brings a file one version up.
pub const SCHEMA_VERSION: u32 = 3;

/// Written into the SQLite header (`PRAGMA application_id`), so a file is known as memport's
/// before any table is read: "MPST".
const APPLICATION_ID: i32 = 0x4D50_5354;

/// The statements that bring a state from version `index` to `index + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 → 1: the run log and what was emitted of each conversation.
    "CREATE TABLE runs (
        sequence INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        exported_at TEXT NOT NULL,
        base_run_id TEXT,
        full INTEGER NOT NULL,
        options_digest TEXT NOT NULL,
        options_json TEXT NOT NULL,
        inputs_json TEXT NOT NULL,
        counts_json TEXT NOT NULL,
        outputs_json TEXT NOT NULL
    );
    CREATE TABLE conversations (
        provider TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        title TEXT,
        message_keys BLOB NOT NULL,
        message_count INTEGER NOT NULL,
        first_run TEXT NOT NULL,
        last_run TEXT NOT NULL,
        retracted_run TEXT,
        PRIMARY KEY (provider, conversation_id)
    ) WITHOUT ROWID;
    CREATE TABLE fingerprints (
        provider TEXT NOT NULL,
        fingerprint BLOB NOT NULL,
        conversation_id TEXT NOT NULL,
        last_run TEXT NOT NULL,
        PRIMARY KEY (provider, fingerprint)
    ) WITHOUT ROWID;",
    // 1 → 2: conversations' creation times (for retractions) and the extracted memories.
    "ALTER TABLE conversations ADD COLUMN created_at INTEGER;
    CREATE TABLE memories (
        memory_id TEXT PRIMARY KEY,
        provider TEXT NOT NULL,
        memory_type TEXT NOT NULL,
        slot TEXT NOT NULL,
        single_valued INTEGER NOT NULL,
        value TEXT NOT NULL,
        statement TEXT NOT NULL,
        language TEXT NOT NULL,
        confidence REAL NOT NULL,
        evidence_count INTEGER NOT NULL,
        first_seen INTEGER NOT NULL,
        last_seen INTEGER NOT NULL,
        personal INTEGER NOT NULL,
        conversations BLOB NOT NULL,
        supersedes TEXT,
        superseded_by TEXT,
        first_run TEXT NOT NULL,
        last_run TEXT NOT NULL,
        retracted_run TEXT
    ) WITHOUT ROWID;",
    // 2 → 3: the erased messages withdrawn from earlier runs' outputs.
    "CREATE TABLE withdrawn_messages (record_id TEXT PRIMARY KEY, run_id TEXT NOT NULL) WITHOUT ROWID;",
];

/// The columns of `memories`, in the order [`memory_of_row`] reads them.
const MEMORY_COLUMNS: &str = "memory_id, provider, memory_type, slot, single_valued, value, statement, language, confidence, \
    evidence_count, first_seen, last_seen, personal, conversations, supersedes, superseded_by, first_run, last_run, \
    retracted_run IS NOT NULL";

fn memory_of_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<MemoryEntry> {
    Ok(MemoryEntry {
        memory_id: row.get(0)?,
        provider: row.get(1)?,
        memory_type: row.get(2)?,
        slot: row.get(3)?,
        single_valued: row.get(4)?,
        value: row.get(5)?,
        statement: row.get(6)?,
        language: row.get(7)?,
        confidence: row.get(8)?,
        evidence_count: u64::try_from(row.get::<_, i64>(9)?).unwrap_or_default(),
        first_seen: row.get(10)?,
        last_seen: row.get(11)?,
        personal: row.get(12)?,
        conversations: decode_keys(&row.get::<_, Vec<u8>>(13)?),
        supersedes: row.get(14)?,
        superseded_by: row.get(15)?,
        first_run: row.get(16)?,
        last_run: row.get(17)?,
        retracted: row.get(18)?,
    })
}

/// A state file opened for one sync (or one `--status`).
pub struct SqliteState {
    connection: Connection,
    path: PathBuf,
    in_run: bool,
}

impl std::fmt::Debug for SqliteState {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("SqliteState").field("path", &self.path).field("in_run", &self.in_run).finish()
    }
}

impl SqliteState {
    /// Opens the state at `path`, creating it when `create` and it does not exist, and
    /// migrates it to [`SCHEMA_VERSION`].
    ///
    /// # Errors
    /// [`StateError::Corrupt`] for a file that is not a memport state, [`StateError::Newer`]
    /// for one a newer memport wrote, [`StateError::Busy`] when a sync is migrating it.
    pub fn open(path: &Path, create: bool) -> Result<Self, StateError> {
        let exists = path.exists();
        if !exists && !create {
            return Err(StateError::Io { path: path.to_owned(), reason: "no such file; run `memport sync` to make one".into() });
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let connection = Connection::open_with_flags(path, flags).map_err(|error| io(path, &error))?;
        let mut state = SqliteState { connection, path: path.to_owned(), in_run: false };
        // Whose file it is is checked before anything is set: switching a database to
        // write-ahead logging (or out of it) rewrites its header.
        let version = state.check_owner(exists)?;
        state.configure()?;
        state.migrate(version)?;
        Ok(state)
    }

    /// The state file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn configure(&mut self) -> Result<(), StateError> {
        // Write-ahead logging: `--status` reads the last committed state while a sync writes
        // (a rollback journal would lock readers out once a large run spills its changes), and
        // the log is folded back into the one file when the last connection closes. FULL sync
        // makes a commit durable before the run says it is done. Overwritten content is
        // zeroed (`secure_delete`): an erased memory's words, emptied from its row, are left
        // in no free page of the file.
        self.connection
            .execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON;")
            .map_err(|error| self.classify(&error))?;
        self.connection.busy_timeout(Duration::from_secs(5)).map_err(|error| self.classify(&error))?;
        Ok(())
    }

    /// The schema version of a memport state (0 for a new file); refuses files that are not
    /// memport's, and states a newer memport wrote, reading only.
    fn check_owner(&self, existed: bool) -> Result<u32, StateError> {
        let application_id: i32 =
            self.connection.query_row("PRAGMA application_id", [], |row| row.get(0)).map_err(|error| self.classify(&error))?;
        let version: u32 = self.connection.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(|error| self.classify(&error))?;
        let tables: u32 = self
            .connection
            .query_row("SELECT count(*) FROM sqlite_schema WHERE type = 'table'", [], |row| row.get(0))
            .map_err(|error| self.classify(&error))?;
        if application_id != APPLICATION_ID && (tables > 0 || version > 0 || (existed && application_id != 0)) {
            return Err(StateError::Corrupt { path: self.path.clone(), reason: "a SQLite database of another program".into() });
        }
        if version > SCHEMA_VERSION {
            return Err(StateError::Newer { path: self.path.clone(), found: version, known: SCHEMA_VERSION });
        }
        Ok(version)
    }

    /// Brings the schema from `version` up to [`SCHEMA_VERSION`].
    fn migrate(&mut self, version: u32) -> Result<(), StateError> {
        if version == SCHEMA_VERSION {
            return Ok(());
        }
        // Each step and its version bump commit together: a migration stopped half way leaves
        // the previous version whole.
        self.connection.execute_batch("BEGIN IMMEDIATE").map_err(|error| self.classify(&error))?;
        let result = (|| -> rusqlite::Result<()> {
            // Another sync may have migrated the file while this one waited for the lock.
            let version: u32 = self.connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
            for (from, statements) in MIGRATIONS.iter().enumerate().skip(version as usize) {
                self.connection.execute_batch(statements)?;
                self.connection.execute_batch(&format!("PRAGMA user_version = {}", from + 1))?;
            }
            self.connection.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"))?;
            self.connection.execute_batch("COMMIT")
        })();
        if let Err(error) = result {
            let _ = self.connection.execute_batch("ROLLBACK");
            return Err(self.classify(&error));
        }
        Ok(())
    }

    /// The memories matching `condition` (an SQL expression over `memories`), by id.
    fn memories_where(&self, condition: &str) -> Result<Vec<MemoryEntry>, StateError> {
        let mut statement = self
            .connection
            .prepare(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE {condition} ORDER BY memory_id"))
            .map_err(|error| self.classify(&error))?;
        let rows = statement.query_map([], memory_of_row).map_err(|error| self.classify(&error))?;
        rows.collect::<Result<_, _>>().map_err(|error| self.classify(&error))
    }

    /// Turns a SQLite error into what it means for the user.
    fn classify(&self, error: &rusqlite::Error) -> StateError {
        match error.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                StateError::Corrupt { path: self.path.clone(), reason: error.to_string() }
            }
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StateError::Busy { path: self.path.clone() },
            _ => io(&self.path, error),
        }
    }
}

fn io(path: &Path, error: &rusqlite::Error) -> StateError {
    StateError::Io { path: path.to_owned(), reason: error.to_string() }
}

impl StateStore for SqliteState {
    fn runs(&mut self) -> Result<Vec<RunEntry>, StateError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT run_id, sequence, exported_at, base_run_id, full, options_digest, options_json, inputs_json, counts_json, outputs_json
                 FROM runs ORDER BY sequence",
            )
            .map_err(|error| self.classify(&error))?;
        let rows = statement
            .query_map([], |row| {
                Ok(RunEntry {
                    run_id: row.get(0)?,
                    sequence: u64::try_from(row.get::<_, i64>(1)?).unwrap_or_default(),
                    exported_at: row.get(2)?,
                    base_run_id: row.get(3)?,
                    full: row.get(4)?,
                    options_digest: row.get(5)?,
                    options_json: row.get(6)?,
                    inputs_json: row.get(7)?,
                    counts_json: row.get(8)?,
                    outputs_json: row.get(9)?,
                })
            })
            .map_err(|error| self.classify(&error))?;
        rows.collect::<Result<_, _>>().map_err(|error| self.classify(&error))
    }

    fn provider_totals(&mut self) -> Result<Vec<ProviderTotals>, StateError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT provider,
                        sum(retracted_run IS NULL),
                        sum(retracted_run IS NOT NULL),
                        sum(message_count),
                        (SELECT r.run_id FROM runs r WHERE r.run_id IN (SELECT c2.last_run FROM conversations c2 WHERE c2.provider = c.provider)
                         ORDER BY r.sequence DESC LIMIT 1)
                 FROM conversations c GROUP BY provider ORDER BY provider",
            )
            .map_err(|error| self.classify(&error))?;
        let rows = statement
            .query_map([], |row| {
                Ok(ProviderTotals {
                    provider: row.get(0)?,
                    live: count(row.get(1)?),
                    retracted: count(row.get(2)?),
                    messages: count(row.get(3)?),
                    last_run: row.get(4)?,
                })
            })
            .map_err(|error| self.classify(&error))?;
        rows.collect::<Result<_, _>>().map_err(|error| self.classify(&error))
    }

    fn fingerprints(&mut self, provider: &str) -> Result<Vec<(Fingerprint, String)>, StateError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT f.fingerprint, f.conversation_id FROM fingerprints f JOIN conversations c
                   ON c.provider = f.provider AND c.conversation_id = f.conversation_id
                 WHERE f.provider = ?1 AND c.retracted_run IS NULL",
            )
            .map_err(|error| self.classify(&error))?;
        let rows = statement
            .query_map([provider], |row| Ok((fingerprint_of(&row.get::<_, Vec<u8>>(0)?), row.get(1)?)))
            .map_err(|error| self.classify(&error))?;
        rows.collect::<Result<_, _>>().map_err(|error| self.classify(&error))
    }

    fn live_conversations(&mut self, provider: &str) -> Result<Vec<String>, StateError> {
        let mut statement = self
            .connection
            .prepare("SELECT conversation_id FROM conversations WHERE provider = ?1 AND retracted_run IS NULL ORDER BY conversation_id")
            .map_err(|error| self.classify(&error))?;
        let rows = statement.query_map([provider], |row| row.get(0)).map_err(|error| self.classify(&error))?;
        rows.collect::<Result<_, _>>().map_err(|error| self.classify(&error))
    }

    fn conversation(&mut self, provider: &str, conversation_id: &str) -> Result<Option<ConversationEntry>, StateError> {
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT title, message_keys, first_run, last_run, retracted_run IS NOT NULL, created_at FROM conversations
                 WHERE provider = ?1 AND conversation_id = ?2",
            )
            .map_err(|error| self.classify(&error))?;
        statement
            .query_row([provider, conversation_id], |row| {
                Ok(ConversationEntry {
                    provider: provider.to_owned(),
                    conversation_id: conversation_id.to_owned(),
                    title: row.get(0)?,
                    message_keys: decode_keys(&row.get::<_, Vec<u8>>(1)?),
                    first_run: row.get(2)?,
                    last_run: row.get(3)?,
                    retracted: row.get(4)?,
                    created_at: row.get(5)?,
                })
            })
            .optional()
            .map_err(|error| self.classify(&error))
    }

    fn memory(&mut self, memory_id: &str) -> Result<Option<MemoryEntry>, StateError> {
        self.connection
            .prepare_cached(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE memory_id = ?1"))
            .and_then(|mut statement| statement.query_row([memory_id], memory_of_row).optional())
            .map_err(|error| self.classify(&error))
    }

    fn current_memories(&mut self) -> Result<Vec<MemoryEntry>, StateError> {
        self.memories_where("single_valued AND superseded_by IS NULL AND retracted_run IS NULL")
    }

    fn live_memories(&mut self) -> Result<Vec<MemoryEntry>, StateError> {
        self.memories_where("retracted_run IS NULL")
    }

    fn every_memory(&mut self) -> Result<Vec<MemoryEntry>, StateError> {
        self.memories_where("TRUE")
    }

    fn retracted_conversation_keys(&mut self) -> Result<std::collections::HashSet<u64>, StateError> {
        let mut statement = self
            .connection
            .prepare("SELECT provider, conversation_id FROM conversations WHERE retracted_run IS NOT NULL")
            .map_err(|error| self.classify(&error))?;
        let rows = statement
            .query_map([], |row| Ok(conversation_key(&row.get::<_, String>(0)?, &row.get::<_, String>(1)?)))
            .map_err(|error| self.classify(&error))?;
        rows.collect::<Result<_, _>>().map_err(|error| self.classify(&error))
    }

    fn withdrawn_messages(&mut self) -> Result<std::collections::HashSet<String>, StateError> {
        let mut statement = self.connection.prepare("SELECT record_id FROM withdrawn_messages").map_err(|error| self.classify(&error))?;
        let rows = statement.query_map([], |row| row.get::<_, String>(0)).map_err(|error| self.classify(&error))?;
        rows.collect::<Result<_, _>>().map_err(|error| self.classify(&error))
    }

    fn put_withdrawn_message(&mut self, record_id: &str, run_id: &str) -> Result<(), StateError> {
        self.connection
            .prepare_cached("INSERT OR REPLACE INTO withdrawn_messages (record_id, run_id) VALUES (?1, ?2)")
            .and_then(|mut statement| statement.execute([record_id, run_id]))
            .map_err(|error| self.classify(&error))?;
        Ok(())
    }

    fn put_memory(&mut self, entry: &MemoryEntry) -> Result<(), StateError> {
        self.connection
            .prepare_cached(
                "INSERT OR REPLACE INTO memories (memory_id, provider, memory_type, slot, single_valued, value, statement, language,
                    confidence, evidence_count, first_seen, last_seen, personal, conversations, supersedes, superseded_by,
                    first_run, last_run, retracted_run)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                    CASE WHEN ?19 THEN ?18 ELSE NULL END)",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    entry.memory_id,
                    entry.provider,
                    entry.memory_type,
                    entry.slot,
                    entry.single_valued,
                    entry.value,
                    entry.statement,
                    entry.language,
                    entry.confidence,
                    signed(entry.evidence_count),
                    entry.first_seen,
                    entry.last_seen,
                    entry.personal,
                    encode_keys(&entry.conversations),
                    entry.supersedes,
                    entry.superseded_by,
                    entry.first_run,
                    entry.last_run,
                    entry.retracted,
                ])
            })
            .map_err(|error| self.classify(&error))?;
        Ok(())
    }

    fn begin(&mut self) -> Result<(), StateError> {
        // IMMEDIATE takes the write lock now: a second sync is refused at its start, not after
        // it has done all its work.
        self.connection.busy_timeout(Duration::ZERO).map_err(|error| self.classify(&error))?;
        let begun = self.connection.execute_batch("BEGIN IMMEDIATE").map_err(|error| self.classify(&error));
        self.connection.busy_timeout(Duration::from_secs(5)).map_err(|error| self.classify(&error))?;
        begun?;
        self.in_run = true;
        Ok(())
    }

    fn put_conversation(&mut self, entry: &ConversationEntry) -> Result<(), StateError> {
        let mut statement = self
            .connection
            .prepare_cached(
                "INSERT INTO conversations (provider, conversation_id, title, message_keys, message_count, first_run, last_run, retracted_run, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, ?8)
                 ON CONFLICT (provider, conversation_id) DO UPDATE SET
                    title = excluded.title, message_keys = excluded.message_keys,
                    message_count = excluded.message_count, last_run = excluded.last_run, retracted_run = NULL,
                    created_at = excluded.created_at",
            )
            .map_err(|error| self.classify(&error))?;
        statement
            .execute(params![
                entry.provider,
                entry.conversation_id,
                entry.title,
                encode_keys(&entry.message_keys),
                entry.message_keys.len() as i64,
                entry.first_run,
                entry.last_run,
                entry.created_at,
            ])
            .map_err(|error| self.classify(&error))?;
        Ok(())
    }

    fn put_fingerprint(
        &mut self,
        provider: &str,
        fingerprint: &Fingerprint,
        conversation_id: &str,
        run_id: &str,
    ) -> Result<(), StateError> {
        self.connection
            .prepare_cached(
                "INSERT INTO fingerprints (provider, fingerprint, conversation_id, last_run) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (provider, fingerprint) DO UPDATE SET conversation_id = excluded.conversation_id, last_run = excluded.last_run",
            )
            .and_then(|mut statement| statement.execute(params![provider, fingerprint.as_slice(), conversation_id, run_id]))
            .map_err(|error| self.classify(&error))?;
        Ok(())
    }

    fn forget_unread_fingerprints(&mut self, provider: &str, run_id: &str) -> Result<(), StateError> {
        self.connection
            .execute("DELETE FROM fingerprints WHERE provider = ?1 AND last_run != ?2", [provider, run_id])
            .map_err(|error| self.classify(&error))?;
        Ok(())
    }

    fn retract(&mut self, provider: &str, conversation_id: &str, run_id: &str) -> Result<(), StateError> {
        self.connection
            .prepare_cached("UPDATE conversations SET retracted_run = ?3 WHERE provider = ?1 AND conversation_id = ?2")
            .and_then(|mut statement| statement.execute([provider, conversation_id, run_id]))
            .map_err(|error| self.classify(&error))?;
        Ok(())
    }

    fn commit(&mut self, run: &RunEntry) -> Result<(), StateError> {
        let result = self
            .connection
            .execute(
                "INSERT INTO runs (sequence, run_id, exported_at, base_run_id, full, options_digest, options_json, inputs_json, counts_json, outputs_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    signed(run.sequence),
                    run.run_id,
                    run.exported_at,
                    run.base_run_id,
                    run.full,
                    run.options_digest,
                    run.options_json,
                    run.inputs_json,
                    run.counts_json,
                    run.outputs_json,
                ],
            )
            .and_then(|_| self.connection.execute_batch("COMMIT"));
        match result {
            Ok(()) => {
                self.in_run = false;
                Ok(())
            }
            Err(error) => {
                let problem = self.classify(&error);
                self.rollback();
                Err(problem)
            }
        }
    }

    fn rollback(&mut self) {
        if self.in_run {
            let _ = self.connection.execute_batch("ROLLBACK");
            self.in_run = false;
        }
    }
}

impl Drop for SqliteState {
    fn drop(&mut self) {
        self.rollback();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, keys: &[u64]) -> ConversationEntry {
        ConversationEntry {
            provider: "chatgpt".into(),
            conversation_id: id.into(),
            title: Some(format!("title {id}")),
            message_keys: keys.to_vec(),
            first_run: "r1".into(),
            last_run: "r1".into(),
            created_at: Some(1_700_000_000_000_000),
            retracted: false,
        }
    }

    fn run(id: &str, sequence: u64) -> RunEntry {
        RunEntry {
            run_id: id.into(),
            sequence,
            exported_at: "2026-11-01T00:00:00Z".into(),
            base_run_id: None,
            full: true,
            options_digest: "d".into(),
            options_json: "{}".into(),
            inputs_json: "[]".into(),
            counts_json: "{}".into(),
            outputs_json: "[]".into(),
        }
    }

    #[test]
    fn a_committed_run_is_read_back_and_a_rolled_back_one_leaves_nothing() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("state.db");
        let mut state = SqliteState::open(&path, true).unwrap();
        state.begin().unwrap();
        state.put_conversation(&entry("a", &[3, 1])).unwrap();
        state.put_fingerprint("chatgpt", &[7; 16], "a", "r1").unwrap();
        state.commit(&run("r1", 1)).unwrap();
        state.begin().unwrap();
        state.put_conversation(&entry("b", &[2])).unwrap();
        state.retract("chatgpt", "a", "r2").unwrap();
        state.rollback();
        drop(state);
        let mut state = SqliteState::open(&path, false).unwrap();
        assert_eq!(state.runs().unwrap(), vec![run("r1", 1)]);
        assert_eq!(state.live_conversations("chatgpt").unwrap(), vec!["a".to_owned()]);
        assert_eq!(state.conversation("chatgpt", "a").unwrap().unwrap().message_keys, vec![3, 1]);
        assert_eq!(state.fingerprints("chatgpt").unwrap(), vec![([7; 16], "a".to_owned())]);
        assert!(state.conversation("chatgpt", "b").unwrap().is_none());
    }

    #[test]
    fn a_retracted_conversation_is_not_live_until_it_comes_back() {
        let folder = tempfile::tempdir().unwrap();
        let mut state = SqliteState::open(&folder.path().join("state.db"), true).unwrap();
        state.begin().unwrap();
        state.put_conversation(&entry("a", &[1])).unwrap();
        state.put_fingerprint("chatgpt", &[7; 16], "a", "r1").unwrap();
        state.retract("chatgpt", "a", "r1").unwrap();
        assert!(state.live_conversations("chatgpt").unwrap().is_empty());
        assert!(state.fingerprints("chatgpt").unwrap().is_empty());
        state.put_conversation(&entry("a", &[1, 2])).unwrap();
        state.commit(&run("r1", 1)).unwrap();
        assert_eq!(state.live_conversations("chatgpt").unwrap(), vec!["a".to_owned()]);
        let totals = state.provider_totals().unwrap();
        assert_eq!((totals[0].live, totals[0].retracted, totals[0].messages), (1, 0, 2));
    }

    #[test]
    fn fingerprints_a_run_did_not_read_are_forgotten_and_pieces_keep_theirs() {
        let folder = tempfile::tempdir().unwrap();
        let mut state = SqliteState::open(&folder.path().join("state.db"), true).unwrap();
        state.begin().unwrap();
        state.put_conversation(&entry("a", &[1, 2])).unwrap();
        state.put_fingerprint("chatgpt", &[1; 16], "a", "r1").unwrap();
        state.put_fingerprint("chatgpt", &[2; 16], "a", "r1").unwrap();
        state.commit(&run("r1", 1)).unwrap();
        state.begin().unwrap();
        state.put_fingerprint("chatgpt", &[2; 16], "a", "r2").unwrap();
        state.put_fingerprint("chatgpt", &[3; 16], "a", "r2").unwrap();
        state.forget_unread_fingerprints("chatgpt", "r2").unwrap();
        state.commit(&run("r2", 2)).unwrap();
        let mut fingerprints = state.fingerprints("chatgpt").unwrap();
        fingerprints.sort();
        assert_eq!(fingerprints, vec![([2; 16], "a".to_owned()), ([3; 16], "a".to_owned())]);
    }

    #[test]
    fn a_second_writer_is_refused_while_the_first_runs() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("state.db");
        let mut first = SqliteState::open(&path, true).unwrap();
        first.begin().unwrap();
        let mut second = SqliteState::open(&path, false).unwrap();
        assert!(matches!(second.begin(), Err(StateError::Busy { .. })));
        first.rollback();
        second.begin().unwrap();
    }

    #[test]
    fn files_that_are_not_a_memport_state_are_refused_untouched() {
        let folder = tempfile::tempdir().unwrap();
        let text = folder.path().join("notes.txt");
        std::fs::write(&text, "these are my notes, not a database\n".repeat(200)).unwrap();
        let before = std::fs::read(&text).unwrap();
        assert!(matches!(SqliteState::open(&text, true), Err(StateError::Corrupt { .. })));
        assert_eq!(std::fs::read(&text).unwrap(), before);

        let other = folder.path().join("other.db");
        Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x); PRAGMA user_version = 3;").unwrap();
        assert!(matches!(SqliteState::open(&other, true), Err(StateError::Corrupt { .. })));
    }

    #[test]
    fn a_state_from_a_newer_memport_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("state.db");
        drop(SqliteState::open(&path, true).unwrap());
        Connection::open(&path).unwrap().execute_batch(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 1)).unwrap();
        let error = SqliteState::open(&path, false).unwrap_err();
        assert!(
            matches!(error, StateError::Newer { found, known, .. } if found == SCHEMA_VERSION + 1 && known == SCHEMA_VERSION),
            "{error}"
        );
        assert!(error.to_string().contains("newer memport"), "{error}");
    }

    #[test]
    fn a_version_one_state_migrates_forward_keeping_its_conversations() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("state.db");
        {
            let connection = Connection::open(&path).unwrap();
            connection.execute_batch(MIGRATIONS[0]).unwrap();
            connection
                .execute_batch(&format!(
                    "PRAGMA user_version = 1; PRAGMA application_id = {APPLICATION_ID};
                     INSERT INTO conversations VALUES ('chatgpt', 'c1', 'kept', x'0100000000000000', 1, 'r1', 'r1', NULL);"
                ))
                .unwrap();
        }
        let mut state = SqliteState::open(&path, false).unwrap();
        let version: u32 = state.connection.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let entry = state.conversation("chatgpt", "c1").unwrap().expect("the conversation is kept");
        assert_eq!((entry.title.as_deref(), entry.message_keys.as_slice(), entry.created_at), (Some("kept"), &[1u64][..], None));
        state.begin().unwrap();
        let memory = MemoryEntry {
            memory_id: "mem-1".into(),
            provider: "chatgpt".into(),
            memory_type: "identity".into(),
            slot: "home".into(),
            single_valued: true,
            value: "Lyon".into(),
            statement: "Lives in Lyon.".into(),
            language: "en".into(),
            confidence: 0.8,
            evidence_count: 2,
            first_seen: 1,
            last_seen: 2,
            personal: false,
            conversations: vec![conversation_key("chatgpt", "c1")],
            supersedes: None,
            superseded_by: None,
            first_run: "r2".into(),
            last_run: "r2".into(),
            retracted: false,
        };
        state.put_memory(&memory).unwrap();
        assert_eq!(state.memory("mem-1").unwrap(), Some(memory.clone()));
        assert_eq!(state.current_memories().unwrap(), [memory]);
        state.rollback();
    }
}
