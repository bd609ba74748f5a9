//! The shared state store: a PostgreSQL database that many workers sync into at once, one
//! tenant each. The same tables as the SQLite store ([`super::sqlite`]), each with a `tenant`
//! column, the same schema versions and migrations, and one transaction per run. While a run's
//! transaction is open it holds a transaction-level advisory lock on its tenant: a second sync
//! of the same tenant is refused at once, and the lock goes with the transaction when the
//! worker commits, rolls back or dies (the server ends its session and rolls it back), so a
//! killed worker leaves no half-committed state and no stale lock.

use std::collections::HashSet;
use std::path::PathBuf;

use postgres::{Client, NoTls, Row};

use super::state::{ConversationEntry, Fingerprint, MemoryEntry, ProviderTotals, RunEntry, StateError, StateStore, conversation_key};
use super::stored::{count, decode_keys, encode_keys, fingerprint_of, signed};
use crate::store::without_password;

/// The schema this build writes: the same versions as the SQLite store's.
pub const SCHEMA_VERSION: u32 = 3;

/// The advisory-lock class memport's locks are taken in (first key of the two-key form).
const LOCK_CLASS: i32 = 0x4D50_5354;
/// The second key of the lock migrations take (tenants' locks hash their name instead).
const MIGRATION_LOCK: i32 = 0;

/// The statements that bring a database from version `index` to `index + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 → 1: the run log, what was emitted of each conversation, the fingerprints.
    "CREATE TABLE memport_runs (
        tenant TEXT NOT NULL,
        sequence BIGINT NOT NULL,
        run_id TEXT NOT NULL,
        exported_at TEXT NOT NULL,
        base_run_id TEXT,
        full_run BOOLEAN NOT NULL,
        options_digest TEXT NOT NULL,
        options_json TEXT NOT NULL,
        inputs_json TEXT NOT NULL,
        counts_json TEXT NOT NULL,
        outputs_json TEXT NOT NULL,
        PRIMARY KEY (tenant, sequence),
        UNIQUE (tenant, run_id)
    );
    CREATE TABLE memport_conversations (
        tenant TEXT NOT NULL,
        provider TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        title TEXT,
        message_keys BYTEA NOT NULL,
        message_count BIGINT NOT NULL,
        first_run TEXT NOT NULL,
        last_run TEXT NOT NULL,
        retracted_run TEXT,
        PRIMARY KEY (tenant, provider, conversation_id)
    );
    CREATE TABLE memport_fingerprints (
        tenant TEXT NOT NULL,
        provider TEXT NOT NULL,
        fingerprint BYTEA NOT NULL,
        conversation_id TEXT NOT NULL,
        last_run TEXT NOT NULL,
        PRIMARY KEY (tenant, provider, fingerprint)
    );",
    // 1 → 2: conversations' creation times (for retractions) and the extracted memories.
    "ALTER TABLE memport_conversations ADD COLUMN created_at BIGINT;
    CREATE TABLE memport_memories (
        tenant TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        memory_type TEXT NOT NULL,
        slot TEXT NOT NULL,
        single_valued BOOLEAN NOT NULL,
        value TEXT NOT NULL,
        statement TEXT NOT NULL,
        language TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        evidence_count BIGINT NOT NULL,
        first_seen BIGINT NOT NULL,
        last_seen BIGINT NOT NULL,
        personal BOOLEAN NOT NULL,
        conversations BYTEA NOT NULL,
        supersedes TEXT,
        superseded_by TEXT,
        first_run TEXT NOT NULL,
        last_run TEXT NOT NULL,
        retracted_run TEXT,
        PRIMARY KEY (tenant, memory_id)
    );",
    // 2 → 3: the erased messages withdrawn from earlier runs' outputs.
    "CREATE TABLE memport_withdrawn_messages (
        tenant TEXT NOT NULL,
        record_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        PRIMARY KEY (tenant, record_id)
    );",
];

/// The columns of `memport_memories`, in the order [`memory_of_row`] reads them.
const MEMORY_COLUMNS: &str = "memory_id, provider, memory_type, slot, single_valued, value, statement, language, confidence, \
    evidence_count, first_seen, last_seen, personal, conversations, supersedes, superseded_by, first_run, last_run, \
    retracted_run IS NOT NULL";

/// One tenant's state in a PostgreSQL database, opened for one sync (or one `--status`).
pub struct PostgresState {
    client: Client,
    tenant: String,
    /// The URL without its password, for messages.
    shown: PathBuf,
    in_run: bool,
    /// Fingerprints recorded and not yet written, by provider and fingerprint (the last
    /// record of each wins): one is recorded per record read, so they go to the server in
    /// batches of [`FINGERPRINTS_PER_STATEMENT`] rather than a round trip each.
    pending_fingerprints: std::collections::BTreeMap<(String, Fingerprint), (String, String)>,
}

/// Fingerprints written per statement (5 parameters each, well under PostgreSQL's 65,535).
const FINGERPRINTS_PER_STATEMENT: usize = 1000;

impl std::fmt::Debug for PostgresState {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("PostgresState").field("database", &self.shown).field("tenant", &self.tenant).finish_non_exhaustive()
    }
}

impl PostgresState {
    /// Connects to the database at `url` and migrates its memport tables to
    /// [`SCHEMA_VERSION`] (making them on first use); the state read and written is
    /// `tenant`'s.
    ///
    /// # Errors
    /// [`StateError::Io`] when the server cannot be reached or refuses the login,
    /// [`StateError::Newer`] for tables a newer memport made.
    pub fn open(url: &str, tenant: &str) -> Result<Self, StateError> {
        let shown = PathBuf::from(format!("{} (tenant {tenant})", without_password(url)));
        if tenant.is_empty() {
            return Err(StateError::Io { path: shown, reason: "the tenant is empty; give --tenant".into() });
        }
        let client = Client::connect(url, NoTls).map_err(|error| StateError::Io {
            path: shown.clone(),
            reason: format!("cannot connect ({error}); is the server running, and are the URL, user and password right?"),
        })?;
        let mut state = PostgresState {
            client,
            tenant: tenant.to_owned(),
            shown,
            in_run: false,
            pending_fingerprints: std::collections::BTreeMap::new(),
        };
        state.migrate()?;
        Ok(state)
    }

    /// Brings the tables to [`SCHEMA_VERSION`], under a lock, so workers starting together
    /// migrate once.
    fn migrate(&mut self) -> Result<(), StateError> {
        let result = (|| -> Result<Result<(), StateError>, postgres::Error> {
            let mut transaction = self.client.transaction()?;
            transaction.execute("SELECT pg_advisory_xact_lock($1, $2)", &[&LOCK_CLASS, &MIGRATION_LOCK])?;
            transaction.batch_execute("CREATE TABLE IF NOT EXISTS memport_schema (version INTEGER NOT NULL)")?;
            let version: i32 = match transaction.query_opt("SELECT version FROM memport_schema", &[])? {
                Some(row) => row.get(0),
                None => {
                    transaction.execute("INSERT INTO memport_schema (version) VALUES (0)", &[])?;
                    0
                }
            };
            let version = u32::try_from(version).unwrap_or(0);
            if version > SCHEMA_VERSION {
                return Ok(Err(StateError::Newer { path: self.shown.clone(), found: version, known: SCHEMA_VERSION }));
            }
            for (from, statements) in MIGRATIONS.iter().enumerate().skip(version as usize) {
                transaction.batch_execute(statements)?;
                let to = i32::try_from(from + 1).unwrap_or(i32::MAX);
                transaction.execute("UPDATE memport_schema SET version = $1", &[&to])?;
            }
            transaction.commit()?;
            Ok(Ok(()))
        })();
        result.map_err(|error| self.io(&error))?
    }

    fn io(&self, error: &postgres::Error) -> StateError {
        StateError::Io { path: self.shown.clone(), reason: error.to_string() }
    }

    /// Writes the fingerprints recorded since the last flush, up to
    /// [`FINGERPRINTS_PER_STATEMENT`] a statement.
    fn flush_fingerprints(&mut self) -> Result<(), StateError> {
        let pending = std::mem::take(&mut self.pending_fingerprints);
        let rows: Vec<_> = pending.iter().collect();
        for chunk in rows.chunks(FINGERPRINTS_PER_STATEMENT) {
            let mut sql =
                String::from("INSERT INTO memport_fingerprints (tenant, provider, fingerprint, conversation_id, last_run) VALUES ");
            let mut parameters: Vec<&(dyn postgres::types::ToSql + Sync)> = Vec::with_capacity(chunk.len() * 5);
            let slices: Vec<&[u8]> = chunk.iter().map(|((_, fingerprint), _)| fingerprint.as_slice()).collect();
            for (index, ((provider, _), (conversation_id, run_id))) in chunk.iter().enumerate() {
                let base = index * 5;
                if index > 0 {
                    sql.push(',');
                }
                sql.push_str(&format!("(${}, ${}, ${}, ${}, ${})", base + 1, base + 2, base + 3, base + 4, base + 5));
                parameters.push(&self.tenant);
                parameters.push(provider);
                parameters.push(&slices[index]);
                parameters.push(conversation_id);
                parameters.push(run_id);
            }
            sql.push_str(
                " ON CONFLICT (tenant, provider, fingerprint) DO UPDATE SET conversation_id = excluded.conversation_id, last_run = excluded.last_run",
            );
            self.client
                .execute(&sql, &parameters)
                .map_err(|error| StateError::Io { path: self.shown.clone(), reason: error.to_string() })?;
        }
        Ok(())
    }

    /// The memories of this tenant matching `condition` (an SQL expression), by id.
    fn memories_where(&mut self, condition: &str) -> Result<Vec<MemoryEntry>, StateError> {
        let sql =
            format!("SELECT {MEMORY_COLUMNS} FROM memport_memories WHERE tenant = $1 AND {condition} ORDER BY memory_id COLLATE \"C\"");
        let rows = self.client.query(&sql, &[&self.tenant]).map_err(|error| self.io(&error))?;
        Ok(rows.iter().map(memory_of_row).collect())
    }
}

fn memory_of_row(row: &Row) -> MemoryEntry {
    MemoryEntry {
        memory_id: row.get(0),
        provider: row.get(1),
        memory_type: row.get(2),
        slot: row.get(3),
        single_valued: row.get(4),
        value: row.get(5),
        statement: row.get(6),
        language: row.get(7),
        confidence: row.get(8),
        evidence_count: count(Some(row.get(9))),
        first_seen: row.get(10),
        last_seen: row.get(11),
        personal: row.get(12),
        conversations: decode_keys(row.get(13)),
        supersedes: row.get(14),
        superseded_by: row.get(15),
        first_run: row.get(16),
        last_run: row.get(17),
        retracted: row.get(18),
    }
}

/// The second key of a tenant's advisory lock.
fn tenant_lock(tenant: &str) -> i32 {
    let digest = blake3::hash(tenant.as_bytes());
    let mut key = [0u8; 4];
    key.copy_from_slice(&digest.as_bytes()[..4]);
    i32::from_le_bytes(key)
}

impl StateStore for PostgresState {
    fn runs(&mut self) -> Result<Vec<RunEntry>, StateError> {
        let rows = self
            .client
            .query(
                "SELECT run_id, sequence, exported_at, base_run_id, full_run, options_digest, options_json, inputs_json, counts_json, outputs_json
                 FROM memport_runs WHERE tenant = $1 ORDER BY sequence",
                &[&self.tenant],
            )
            .map_err(|error| self.io(&error))?;
        Ok(rows
            .iter()
            .map(|row| RunEntry {
                run_id: row.get(0),
                sequence: count(Some(row.get(1))),
                exported_at: row.get(2),
                base_run_id: row.get(3),
                full: row.get(4),
                options_digest: row.get(5),
                options_json: row.get(6),
                inputs_json: row.get(7),
                counts_json: row.get(8),
                outputs_json: row.get(9),
            })
            .collect())
    }

    fn provider_totals(&mut self) -> Result<Vec<ProviderTotals>, StateError> {
        let rows = self
            .client
            .query(
                "SELECT provider,
                        count(*) FILTER (WHERE retracted_run IS NULL),
                        count(*) FILTER (WHERE retracted_run IS NOT NULL),
                        sum(message_count)::BIGINT,
                        (SELECT r.run_id FROM memport_runs r
                          WHERE r.tenant = c.tenant
                            AND r.run_id IN (SELECT c2.last_run FROM memport_conversations c2 WHERE c2.tenant = c.tenant AND c2.provider = c.provider)
                          ORDER BY r.sequence DESC LIMIT 1)
                 FROM memport_conversations c WHERE tenant = $1 GROUP BY tenant, provider ORDER BY provider",
                &[&self.tenant],
            )
            .map_err(|error| self.io(&error))?;
        Ok(rows
            .iter()
            .map(|row| ProviderTotals {
                provider: row.get(0),
                live: count(row.get(1)),
                retracted: count(row.get(2)),
                messages: count(row.get(3)),
                last_run: row.get(4),
            })
            .collect())
    }

    fn fingerprints(&mut self, provider: &str) -> Result<Vec<(Fingerprint, String)>, StateError> {
        self.flush_fingerprints()?;
        let rows = self
            .client
            .query(
                "SELECT f.fingerprint, f.conversation_id FROM memport_fingerprints f JOIN memport_conversations c
                   ON c.tenant = f.tenant AND c.provider = f.provider AND c.conversation_id = f.conversation_id
                 WHERE f.tenant = $1 AND f.provider = $2 AND c.retracted_run IS NULL",
                &[&self.tenant, &provider],
            )
            .map_err(|error| self.io(&error))?;
        Ok(rows.iter().map(|row| (fingerprint_of(row.get(0)), row.get(1))).collect())
    }

    fn live_conversations(&mut self, provider: &str) -> Result<Vec<String>, StateError> {
        let rows = self
            .client
            .query(
                "SELECT conversation_id FROM memport_conversations
                 WHERE tenant = $1 AND provider = $2 AND retracted_run IS NULL ORDER BY conversation_id COLLATE \"C\"",
                &[&self.tenant, &provider],
            )
            .map_err(|error| self.io(&error))?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    fn conversation(&mut self, provider: &str, conversation_id: &str) -> Result<Option<ConversationEntry>, StateError> {
        let row = self
            .client
            .query_opt(
                "SELECT title, message_keys, first_run, last_run, retracted_run IS NOT NULL, created_at FROM memport_conversations
                 WHERE tenant = $1 AND provider = $2 AND conversation_id = $3",
                &[&self.tenant, &provider, &conversation_id],
            )
            .map_err(|error| self.io(&error))?;
        Ok(row.map(|row| ConversationEntry {
            provider: provider.to_owned(),
            conversation_id: conversation_id.to_owned(),
            title: row.get(0),
            message_keys: decode_keys(row.get(1)),
            first_run: row.get(2),
            last_run: row.get(3),
            retracted: row.get(4),
            created_at: row.get(5),
        }))
    }

    fn memory(&mut self, memory_id: &str) -> Result<Option<MemoryEntry>, StateError> {
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM memport_memories WHERE tenant = $1 AND memory_id = $2");
        let row = self.client.query_opt(&sql, &[&self.tenant, &memory_id]).map_err(|error| self.io(&error))?;
        Ok(row.as_ref().map(memory_of_row))
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

    fn retracted_conversation_keys(&mut self) -> Result<HashSet<u64>, StateError> {
        let rows = self
            .client
            .query(
                "SELECT provider, conversation_id FROM memport_conversations WHERE tenant = $1 AND retracted_run IS NOT NULL",
                &[&self.tenant],
            )
            .map_err(|error| self.io(&error))?;
        Ok(rows.iter().map(|row| conversation_key(row.get(0), row.get(1))).collect())
    }

    fn withdrawn_messages(&mut self) -> Result<HashSet<String>, StateError> {
        let rows = self
            .client
            .query("SELECT record_id FROM memport_withdrawn_messages WHERE tenant = $1", &[&self.tenant])
            .map_err(|error| self.io(&error))?;
        Ok(rows.iter().map(|row| row.get::<_, String>(0)).collect())
    }

    fn put_withdrawn_message(&mut self, record_id: &str, run_id: &str) -> Result<(), StateError> {
        self.client
            .execute(
                "INSERT INTO memport_withdrawn_messages (tenant, record_id, run_id) VALUES ($1, $2, $3)
                 ON CONFLICT (tenant, record_id) DO UPDATE SET run_id = EXCLUDED.run_id",
                &[&self.tenant, &record_id, &run_id],
            )
            .map_err(|error| self.io(&error))?;
        Ok(())
    }

    fn begin(&mut self) -> Result<(), StateError> {
        self.client.batch_execute("BEGIN").map_err(|error| self.io(&error))?;
        // The tenant's lock lives as long as this transaction: released at commit or
        // rollback, and by the server when the worker's connection ends.
        let lock = tenant_lock(&self.tenant);
        let taken = self.client.query_one("SELECT pg_try_advisory_xact_lock($1, $2)", &[&LOCK_CLASS, &lock]);
        match taken {
            Ok(row) if row.get::<_, bool>(0) => {
                self.in_run = true;
                Ok(())
            }
            Ok(_) => {
                let _ = self.client.batch_execute("ROLLBACK");
                Err(StateError::Busy { path: self.shown.clone() })
            }
            Err(error) => {
                let _ = self.client.batch_execute("ROLLBACK");
                Err(self.io(&error))
            }
        }
    }

    fn put_conversation(&mut self, entry: &ConversationEntry) -> Result<(), StateError> {
        self.client
            .execute(
                "INSERT INTO memport_conversations
                    (tenant, provider, conversation_id, title, message_keys, message_count, first_run, last_run, retracted_run, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9)
                 ON CONFLICT (tenant, provider, conversation_id) DO UPDATE SET
                    title = excluded.title, message_keys = excluded.message_keys, message_count = excluded.message_count,
                    last_run = excluded.last_run, retracted_run = NULL, created_at = excluded.created_at",
                &[
                    &self.tenant,
                    &entry.provider,
                    &entry.conversation_id,
                    &entry.title,
                    &encode_keys(&entry.message_keys),
                    &signed(entry.message_keys.len() as u64),
                    &entry.first_run,
                    &entry.last_run,
                    &entry.created_at,
                ],
            )
            .map_err(|error| self.io(&error))?;
        Ok(())
    }

    fn put_memory(&mut self, entry: &MemoryEntry) -> Result<(), StateError> {
        let retracted_run = entry.retracted.then_some(entry.last_run.as_str());
        self.client
            .execute(
                "INSERT INTO memport_memories (tenant, memory_id, provider, memory_type, slot, single_valued, value, statement, language,
                    confidence, evidence_count, first_seen, last_seen, personal, conversations, supersedes, superseded_by,
                    first_run, last_run, retracted_run)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
                 ON CONFLICT (tenant, memory_id) DO UPDATE SET
                    provider = excluded.provider, memory_type = excluded.memory_type, slot = excluded.slot,
                    single_valued = excluded.single_valued, value = excluded.value, statement = excluded.statement,
                    language = excluded.language, confidence = excluded.confidence, evidence_count = excluded.evidence_count,
                    first_seen = excluded.first_seen, last_seen = excluded.last_seen, personal = excluded.personal,
                    conversations = excluded.conversations, supersedes = excluded.supersedes,
                    superseded_by = excluded.superseded_by, first_run = excluded.first_run, last_run = excluded.last_run,
                    retracted_run = excluded.retracted_run",
                &[
                    &self.tenant,
                    &entry.memory_id,
                    &entry.provider,
                    &entry.memory_type,
                    &entry.slot,
                    &entry.single_valued,
                    &entry.value,
                    &entry.statement,
                    &entry.language,
                    &entry.confidence,
                    &signed(entry.evidence_count),
                    &entry.first_seen,
                    &entry.last_seen,
                    &entry.personal,
                    &encode_keys(&entry.conversations),
                    &entry.supersedes,
                    &entry.superseded_by,
                    &entry.first_run,
                    &entry.last_run,
                    &retracted_run,
                ],
            )
            .map_err(|error| self.io(&error))?;
        Ok(())
    }

    fn put_fingerprint(
        &mut self,
        provider: &str,
        fingerprint: &Fingerprint,
        conversation_id: &str,
        run_id: &str,
    ) -> Result<(), StateError> {
        self.pending_fingerprints.insert((provider.to_owned(), *fingerprint), (conversation_id.to_owned(), run_id.to_owned()));
        if self.pending_fingerprints.len() >= FINGERPRINTS_PER_STATEMENT {
            self.flush_fingerprints()?;
        }
        Ok(())
    }

    fn forget_unread_fingerprints(&mut self, provider: &str, run_id: &str) -> Result<(), StateError> {
        self.flush_fingerprints()?;
        self.client
            .execute(
                "DELETE FROM memport_fingerprints WHERE tenant = $1 AND provider = $2 AND last_run <> $3",
                &[&self.tenant, &provider, &run_id],
            )
            .map_err(|error| self.io(&error))?;
        Ok(())
    }

    fn retract(&mut self, provider: &str, conversation_id: &str, run_id: &str) -> Result<(), StateError> {
        self.client
            .execute(
                "UPDATE memport_conversations SET retracted_run = $4 WHERE tenant = $1 AND provider = $2 AND conversation_id = $3",
                &[&self.tenant, &provider, &conversation_id, &run_id],
            )
            .map_err(|error| self.io(&error))?;
        Ok(())
    }

    fn commit(&mut self, run: &RunEntry) -> Result<(), StateError> {
        // Fresh statistics with the run's rows: without them the planner takes the tables for
        // the empty ones it first saw, and joins fingerprints to conversations row by row
        // (minutes for 30,000 conversations where a hash join takes milliseconds).
        let flushed = self.flush_fingerprints().and_then(|()| {
            self.client
                .batch_execute("ANALYZE memport_conversations, memport_fingerprints, memport_memories")
                .map_err(|error| self.io(&error))
        });
        if let Err(problem) = flushed {
            self.rollback();
            return Err(problem);
        }
        let inserted = self.client.execute(
            "INSERT INTO memport_runs (tenant, sequence, run_id, exported_at, base_run_id, full_run, options_digest, options_json,
                inputs_json, counts_json, outputs_json)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            &[
                &self.tenant,
                &signed(run.sequence),
                &run.run_id,
                &run.exported_at,
                &run.base_run_id,
                &run.full,
                &run.options_digest,
                &run.options_json,
                &run.inputs_json,
                &run.counts_json,
                &run.outputs_json,
            ],
        );
        let result = inserted.and_then(|_| self.client.batch_execute("COMMIT"));
        match result {
            Ok(()) => {
                self.in_run = false;
                Ok(())
            }
            Err(error) => {
                let problem = self.io(&error);
                self.rollback();
                Err(problem)
            }
        }
    }

    fn rollback(&mut self) {
        self.pending_fingerprints.clear();
        if self.in_run {
            let _ = self.client.batch_execute("ROLLBACK");
            self.in_run = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenants_lock_apart() {
        assert_ne!(tenant_lock("u123"), tenant_lock("u124"));
        assert_eq!(tenant_lock("u123"), tenant_lock("u123"));
    }
}
