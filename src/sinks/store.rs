//! `--to store`: the run's UMP records loaded into a memory store ([`crate::store`]), the
//! SQLite file `memport serve` answers from.
//!
//! The records are the ones `--to ump-ndjson` writes (signed with `--sign-key` the same way),
//! encoded on the worker pool; this sink parses each back and upserts it, all in one
//! transaction, into the store at the staged path the run gives it: a copy of the store
//! already at the target (so what `memport serve` remembered, revised or forgot there stays,
//! and a record erased there is not loaded again), or a new one. The run then moves it into
//! place like any file output, holding the store's other writers off from the copy until then
//! ([`crate::store::file`]). A sync's retracted conversations tombstone their
//! records and add UMP's tombstone record for each; a message it withdraws (erased from the
//! memory store it was synced from) is erased here too. Building the store without a rollback
//! journal is safe: the file is not in place until it is complete.
//!
//! A store in PostgreSQL (`-o postgres://…`) is loaded in place instead, in one transaction
//! that holds the store's write lock and that the run commits when it publishes its outputs:
//! a failed or killed run leaves the store as it was, and a server's writes wait for the run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::RunError;
use crate::model::{ErasedMessage, RetractedConversation};
use crate::signing::SignKey;
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary, ump};
use crate::store::{Put, Store, StoreError, WriteHold, is_postgres_url};

/// Builds a store file.
pub struct StoreSink {
    store: Store,
    target: PathBuf,
    owner: String,
    sign_key: Option<SignKey>,
    /// Records created or replaced.
    stored: u64,
    /// Bytes of the records created or replaced (the size of a store in a database).
    stored_bytes: u64,
    /// Where a store in a database is handed, its transaction open, when the sink finishes:
    /// the run commits it once the run has succeeded ([`commit_handed`]).
    hand_to: Option<HandedStore>,
}

/// A store in a database whose load a sink finished, its transaction still open.
pub type HandedStore = Arc<std::sync::Mutex<Option<Store>>>;

/// Commits the load a sink handed over in `handed` (nothing when none was handed).
///
/// # Errors
/// [`RunError::Write`] when the commit fails (the load is then rolled back).
pub fn commit_handed(handed: &HandedStore, target: &Path) -> Result<(), RunError> {
    let store = handed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
    match store {
        Some(store) => store.end_bulk_load().map_err(|error| write_error(target, error)),
        None => Ok(()),
    }
}

impl StoreSink {
    /// Creates the store at `target`, or loads into the store there (the copy
    /// [`seed_from_target`] made at a run's staged path).
    ///
    /// # Errors
    /// [`RunError::Write`] when the file cannot be made.
    pub fn create(target: &Path, owner: &str, sign_key: Option<SignKey>) -> Result<StoreSink, RunError> {
        let store = if target.exists() { Store::open(target, true) } else { Store::create(target, owner) };
        let store = store.map_err(|error| write_error(target, error))?;
        store.begin_bulk_load().map_err(|error| write_error(target, error))?;
        Ok(StoreSink { store, target: target.to_owned(), owner: owner.to_owned(), sign_key, stored: 0, stored_bytes: 0, hand_to: None })
    }

    /// Leaves the transaction of a store in a database open when the sink finishes, handing
    /// the store to `handed` for the run to commit ([`commit_handed`]).
    #[must_use]
    pub fn handing_to(mut self, handed: HandedStore) -> StoreSink {
        self.hand_to = Some(handed);
        self
    }

    fn load(&mut self, record: &[u8]) -> Result<(), RunError> {
        let value: serde_json::Value =
            serde_json::from_slice(record).map_err(|error| write_error(&self.target, StoreError::InvalidRecord(error.to_string())))?;
        match self.store.put(&value).map_err(|error| write_error(&self.target, error))? {
            Put::Created | Put::Replaced => {
                self.stored += 1;
                self.stored_bytes += record.len() as u64;
            }
            Put::Unchanged | Put::Erased => {}
        }
        Ok(())
    }
}

/// Copies the store at `target` (a consistent copy, even while `memport serve` writes to it)
/// to `built`, where the run loads its records into it; nothing when there is no store yet.
/// Returns the hold on the store's writers the run keeps until its copy replaces the store
/// ([`WriteHold`]): what a server is told to write meanwhile waits, then goes into the new
/// store, or is refused, rather than go into the file replaced.
///
/// # Errors
/// [`RunError::Write`] when `target` is not a memport store, another run holds it, or the
/// copy fails.
pub fn seed_from_target(target: &Path, built: &Path) -> Result<Option<WriteHold>, RunError> {
    // A store in a database is loaded in place, in one transaction.
    if !target.exists() || is_postgres_url(&target.to_string_lossy()) {
        return Ok(None);
    }
    // A file that is not a memport store is refused before anything else is done to it.
    drop(Store::open(target, false).map_err(|error| write_error(target, error))?);
    let hold = WriteHold::take(target).map_err(|error| write_error(target, error))?;
    // Opened once held, so the file copied is the one held (not one another run replaced).
    let store = Store::open(target, false).map_err(|error| write_error(target, error))?;
    store.copy_to(built).map_err(|error| write_error(target, error))?;
    Ok(hold)
}

fn write_error(target: &Path, error: StoreError) -> RunError {
    RunError::write(crate::store::shown_location(target), std::io::Error::other(error.to_string()))
}

impl Sink for StoreSink {
    fn encoder(&self) -> Arc<dyn Encoder> {
        ump::ndjson_encoder(&self.owner, self.sign_key.clone())
    }

    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError> {
        let Encoded::Ump(batch) = batch else {
            return Err(RunError::write(
                crate::store::shown_location(&self.target),
                std::io::Error::other("internal: the store sink got another sink's batch"),
            ));
        };
        let mut values = Vec::new();
        let mut sizes = Vec::new();
        for record in batch.ndjson_records() {
            values.push(
                serde_json::from_slice(record).map_err(|error| write_error(&self.target, StoreError::InvalidRecord(error.to_string())))?,
            );
            sizes.push(record.len() as u64);
        }
        let puts = self.store.put_many(values).map_err(|error| write_error(&self.target, error))?;
        for (put, size) in puts.into_iter().zip(sizes) {
            if matches!(put, Put::Created | Put::Replaced) {
                self.stored += 1;
                self.stored_bytes += size;
            }
        }
        Ok(())
    }

    fn retract(&mut self, retracted: &[RetractedConversation]) -> Result<(), RunError> {
        let (whole, of_messages) = RetractedConversation::whole_and_of_messages(retracted);
        let whole: Vec<RetractedConversation> = whole.into_iter().cloned().collect();
        for conversation in &whole {
            self.store
                .tombstone_session(conversation.provider.as_str(), &conversation.conversation_id)
                .map_err(|error| write_error(&self.target, error))?;
        }
        for record in ump::tombstone_records(&whole, &self.owner, self.sign_key.as_ref()) {
            self.load(&record)?;
        }
        // A withdrawn message was erased where it was withdrawn: erased here too, with what was
        // derived from it, and never loaded again.
        for withdrawal in of_messages {
            for message_id in &withdrawal.messages {
                let message = ErasedMessage {
                    provider: withdrawal.provider.as_str().to_owned(),
                    conversation_id: withdrawal.conversation_id.clone(),
                    message_id: message_id.clone(),
                };
                let reason = format!("withdrawn by run {}", withdrawal.retracted_by);
                self.store.erase_message(&message, &reason, withdrawal.retracted_at).map_err(|error| write_error(&self.target, error))?;
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let StoreSink { store, target, stored, stored_bytes, hand_to, .. } = *self;
        let path = crate::store::shown_location(&target);
        if let Some(handed) = hand_to {
            *handed.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(store);
            return Ok(SinkSummary { format: "store", path, records: stored, bytes: stored_bytes });
        }
        store.end_bulk_load().map_err(|error| write_error(&target, error))?;
        drop(store);
        let bytes = std::fs::metadata(&target).map_err(|error| RunError::write(path.clone(), error))?.len();
        Ok(SinkSummary { format: "store", path, records: stored, bytes })
    }
}
