//! What a sync remembers between runs, behind a small trait: the embedded SQLite store
//! ([`super::sqlite::SqliteState`]) today, a shared server for many workers later.

use std::path::PathBuf;

pub use crate::pipeline::delta::Fingerprint;

/// A message as emitted: a 64-bit hash of its id and its text, so an edit that keeps the id is
/// emitted again.
pub type MessageKey = u64;

/// Why the state cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The file is not a memport state (another database, or damaged).
    #[error(
        "state {path}: not a memport state file, or damaged ({reason}); nothing was changed. Point --state at another file, or restore this one from a backup"
    )]
    Corrupt {
        /// The state file.
        path: PathBuf,
        /// What SQLite or the schema check said.
        reason: String,
    },
    /// A newer memport wrote it.
    #[error(
        "state {path}: schema version {found} was written by a newer memport (this one knows up to {known}); nothing was changed. Use that memport, or another --state file"
    )]
    Newer {
        /// The state file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The newest version this build reads.
        known: u32,
    },
    /// Another sync holds the state.
    #[error("state {path}: another memport sync is using it; wait for it to finish")]
    Busy {
        /// The state file.
        path: PathBuf,
    },
    /// Reading or writing the state failed.
    #[error("state {path}: {reason}")]
    Io {
        /// The state file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
}

/// One finished run, as the run log keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEntry {
    /// The run's id, also its folder's name under `runs/`.
    pub run_id: String,
    /// Position in the log, from 1.
    pub sequence: u64,
    /// The export time written to its outputs (RFC 3339).
    pub exported_at: String,
    /// The run before it, whose outputs this one's delta applies to; none for the first.
    pub base_run_id: Option<String>,
    /// Whether it wrote everything (the first run, or options changed) instead of a delta.
    pub full: bool,
    /// Digest of the options that shape outputs: a run with other options is a full run.
    pub options_digest: String,
    /// Those options, as JSON, for people.
    pub options_json: String,
    /// Each input: path, provider, size and BLAKE3 checksum (JSON array).
    pub inputs_json: String,
    /// Counts (JSON object: unchanged, changed, new, retracted, messages written, …).
    pub counts_json: String,
    /// Outputs written: format and path (JSON array).
    pub outputs_json: String,
}

/// What earlier runs emitted of one conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationEntry {
    /// The provider's name (`chatgpt`, `claude`, …).
    pub provider: String,
    /// The conversation's id as memport writes it.
    pub conversation_id: String,
    /// Its title as last emitted.
    pub title: Option<String>,
    /// Keys of every message emitted, sorted.
    pub message_keys: Vec<MessageKey>,
    /// The run that first emitted it.
    pub first_run: String,
    /// The run that last emitted or saw it changed.
    pub last_run: String,
    /// When the conversation was created, as last emitted (micros, UTC).
    pub created_at: Option<i64>,
    /// Whether a run retracted it (the user deleted it); it is new again if it comes back.
    pub retracted: bool,
}

/// What earlier runs wrote of one extracted memory: enough to carry its evidence count and
/// confidence forward, to order a new value of its slot after it, and to write it again
/// marked (superseded, or retracted with the conversations it was said in).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEntry {
    /// Its id (`mem-…`, from its content).
    pub memory_id: String,
    /// The provider of its first evidence.
    pub provider: String,
    /// Its type's name (`identity`, …).
    pub memory_type: String,
    /// Its slot (`home`, …).
    pub slot: String,
    /// Whether the slot holds one current value.
    pub single_valued: bool,
    /// The value as first said.
    pub value: String,
    /// The statement written.
    pub statement: String,
    /// The statement's language tag.
    pub language: String,
    /// Confidence over every run's evidence.
    pub confidence: f64,
    /// Pieces of evidence over every run.
    pub evidence_count: u64,
    /// When it was first said (micros, UTC).
    pub first_seen: i64,
    /// When it was last said.
    pub last_seen: i64,
    /// A contact detail.
    pub personal: bool,
    /// Keys of the conversations it was said in ([`conversation_key`]), sorted.
    pub conversations: Vec<u64>,
    /// The memory it replaced in its slot.
    pub supersedes: Option<String>,
    /// The memory that replaced it in its slot.
    pub superseded_by: Option<String>,
    /// The run that first wrote it.
    pub first_run: String,
    /// The run that last wrote it.
    pub last_run: String,
    /// Whether a run retracted it (every conversation it was said in was retracted).
    pub retracted: bool,
}

/// The 8-byte key of a conversation in a memory's list: its provider and id.
pub fn conversation_key(provider: &str, conversation_id: &str) -> u64 {
    let mut hasher = blake3::Hasher::new();
    hasher.update(provider.as_bytes());
    hasher.update(&[0]);
    hasher.update(conversation_id.as_bytes());
    let mut key = [0u8; 8];
    key.copy_from_slice(&hasher.finalize().as_bytes()[..8]);
    u64::from_le_bytes(key)
}

/// Per-provider totals, for `sync --status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderTotals {
    /// The provider's name.
    pub provider: String,
    /// Conversations present in the last complete export.
    pub live: u64,
    /// Conversations retracted (deleted by the user since they were emitted).
    pub retracted: u64,
    /// Messages emitted in all.
    pub messages: u64,
    /// The last run that read an export of this provider.
    pub last_run: Option<String>,
}

/// The state a sync reads before its run and changes during it. Every method takes the store
/// mutably: a store is one connection, used by one caller at a time. Changes made after
/// [`StateStore::begin`] become visible to other processes only at [`StateStore::commit`]; a
/// run that stops before it (an error, a kill) leaves the state as it was.
pub trait StateStore: Send {
    /// The finished runs, oldest first.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn runs(&mut self) -> Result<Vec<RunEntry>, StateError>;

    /// Totals per provider.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn provider_totals(&mut self) -> Result<Vec<ProviderTotals>, StateError>;

    /// Every fingerprint of `provider` recorded for a live (not retracted) conversation, with
    /// the conversation's id. A conversation regrouped into several pieces has one per piece.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn fingerprints(&mut self, provider: &str) -> Result<Vec<(Fingerprint, String)>, StateError>;

    /// Ids of every live conversation of `provider`, sorted.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn live_conversations(&mut self, provider: &str) -> Result<Vec<String>, StateError>;

    /// What was emitted of one conversation, if anything (retracted ones included: a
    /// conversation that comes back is new again).
    ///
    /// # Errors
    /// When the state cannot be read.
    fn conversation(&mut self, provider: &str, conversation_id: &str) -> Result<Option<ConversationEntry>, StateError>;

    /// What earlier runs wrote of one extracted memory, if anything.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn memory(&mut self, memory_id: &str) -> Result<Option<MemoryEntry>, StateError>;

    /// The live (not retracted) memories of single-valued slots that nothing superseded: each
    /// slot's current value.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn current_memories(&mut self) -> Result<Vec<MemoryEntry>, StateError>;

    /// Every live memory, by id.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn live_memories(&mut self) -> Result<Vec<MemoryEntry>, StateError>;

    /// Every memory, live or retracted, by id.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn every_memory(&mut self) -> Result<Vec<MemoryEntry>, StateError>;

    /// The keys ([`conversation_key`]) of every retracted conversation.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn retracted_conversation_keys(&mut self) -> Result<std::collections::HashSet<u64>, StateError>;

    /// The record ids ([`crate::spec::ump::message_record_id`]) of the messages erased from the
    /// memory store that a run has withdrawn from what earlier runs wrote.
    ///
    /// # Errors
    /// When the state cannot be read.
    fn withdrawn_messages(&mut self) -> Result<std::collections::HashSet<String>, StateError>;

    /// Records that run `run_id` withdrew the erased message of record id `record_id`.
    ///
    /// # Errors
    /// When the state cannot be written.
    fn put_withdrawn_message(&mut self, record_id: &str, run_id: &str) -> Result<(), StateError>;

    /// Starts the run's changes; only one process may have them started at a time.
    ///
    /// # Errors
    /// [`StateError::Busy`] when another sync has started its changes.
    fn begin(&mut self) -> Result<(), StateError>;

    /// Records what a conversation is now (inserted or replaced); clears a retraction.
    ///
    /// # Errors
    /// When the state cannot be written.
    fn put_conversation(&mut self, entry: &ConversationEntry) -> Result<(), StateError>;

    /// Records what an extracted memory is now (inserted or replaced).
    ///
    /// # Errors
    /// When the state cannot be written.
    fn put_memory(&mut self, entry: &MemoryEntry) -> Result<(), StateError>;

    /// Records that an element of `provider` with `fingerprint` was read by run `run_id` and is
    /// (part of) conversation `conversation_id`.
    ///
    /// # Errors
    /// When the state cannot be written.
    fn put_fingerprint(&mut self, provider: &str, fingerprint: &Fingerprint, conversation_id: &str, run_id: &str)
    -> Result<(), StateError>;

    /// Forgets the fingerprints of `provider` that run `run_id` did not read: after a complete
    /// export, they are of records that changed or went away.
    ///
    /// # Errors
    /// When the state cannot be written.
    fn forget_unread_fingerprints(&mut self, provider: &str, run_id: &str) -> Result<(), StateError>;

    /// Marks a conversation retracted by run `run_id`.
    ///
    /// # Errors
    /// When the state cannot be written.
    fn retract(&mut self, provider: &str, conversation_id: &str, run_id: &str) -> Result<(), StateError>;

    /// Adds the run to the log and makes every change since [`StateStore::begin`] durable, in
    /// one step.
    ///
    /// # Errors
    /// When the state cannot be written; nothing of the run is kept then.
    fn commit(&mut self, run: &RunEntry) -> Result<(), StateError>;

    /// Drops every change since [`StateStore::begin`].
    fn rollback(&mut self);
}
