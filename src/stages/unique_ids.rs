//! Keeps message ids unique in the output: the same conversation read twice (overlapping
//! monthly exports) can carry a message whose text changed between exports, which content dedup
//! keeps, but two chunks with one id make a whole AIMEM bundle invalid. The first copy in input
//! order wins; later ones count as duplicates with an `id_conflict` warning. Always on.
//!
//! Provider memories get the same treatment: their ids derive from kind and text, so custom
//! instructions repeated in every conversation are written once.

use crate::key_set::KeySet;
use crate::model::{Conversation, Disposition, Warnings};
use crate::stages::Stage;

/// The set key of an id. xxHash3-128 rather than SHA-256: these keys never leave the process and
/// only need to be unique among one run's ids (a collision among 2^32 ids has a chance near
/// 2^-64), and hashing every message id with SHA-256 took 3% of a conversion's CPU, on the one
/// thread that runs the stages in order.
fn id_key(bytes: &[u8]) -> u128 {
    twox_hash::XxHash3_128::oneshot(bytes)
}

/// The unique-id stage.
#[derive(Default)]
pub struct UniqueIds {
    seen: KeySet,
    /// Conflicts found, reported as warnings.
    pub warnings: Warnings,
}

impl Stage for UniqueIds {
    fn name(&self) -> &'static str {
        "unique_ids"
    }

    fn process(&mut self, conversation: &mut Conversation, _found: Option<crate::stages::Found>) -> Result<(), crate::error::RunError> {
        let mut key_bytes = Vec::with_capacity(128);
        if !conversation.memories_only {
            key_bytes.extend_from_slice(b"conversation\0");
            key_bytes.extend_from_slice(conversation.provider.as_str().as_bytes());
            key_bytes.push(0);
            key_bytes.extend_from_slice(conversation.id.as_bytes());
            // An unavailable index only loses the flag, which is informational.
            conversation.is_repeat = matches!(self.seen.insert(id_key(&key_bytes)), Ok(false));
        }
        for memory in &mut conversation.memories {
            key_bytes.clear();
            key_bytes.extend_from_slice(b"memory\0");
            key_bytes.extend_from_slice(memory.id.as_bytes());
            match self.seen.insert(id_key(&key_bytes)) {
                Ok(true) => {}
                Ok(false) => memory.is_duplicate = true,
                Err(_) => self.warnings.add("id_index_unavailable"),
            }
        }
        for message in &mut conversation.messages {
            if message.disposition != Disposition::Keep {
                continue;
            }
            key_bytes.clear();
            key_bytes.extend_from_slice(conversation.provider.as_str().as_bytes());
            key_bytes.push(0);
            key_bytes.extend_from_slice(conversation.id.as_bytes());
            key_bytes.push(0);
            key_bytes.extend_from_slice(message.id.as_bytes());
            match self.seen.insert(id_key(&key_bytes)) {
                Ok(true) => {}
                Ok(false) => {
                    message.disposition = Disposition::Duplicate;
                    self.warnings.add("id_conflict");
                }
                // Without the index a conflict cannot be ruled out; keep the message and say so.
                Err(_) => self.warnings.add("id_index_unavailable"),
            }
        }
        Ok(())
    }

    fn take_warnings(&mut self) -> Warnings {
        std::mem::take(&mut self.warnings)
    }
}
