//! Keeps message ids unique in the output: the same conversation read twice (overlapping
//! monthly exports) can carry a message whose text changed between exports, which content dedup
//! keeps, but two chunks with one id make a whole AIMEM bundle invalid. The first copy in input
//! order wins; later ones count as duplicates with an `id_conflict` warning. Always on.
//!
//! Provider memories get the same treatment: their ids derive from kind and text, so custom
//! instructions repeated in every conversation are written once.

use crate::hash::sha256;
use crate::model::{Conversation, Disposition, Warnings};
use crate::stages::Stage;
use crate::stages::key_set::{KeySet, key_of};

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

    fn process(&mut self, conversation: &mut Conversation) {
        let mut key_bytes = Vec::with_capacity(128);
        if !conversation.memories_only {
            key_bytes.extend_from_slice(b"conversation\0");
            key_bytes.extend_from_slice(conversation.provider.as_str().as_bytes());
            key_bytes.push(0);
            key_bytes.extend_from_slice(conversation.id.as_bytes());
            // An unavailable index only loses the flag, which is informational.
            conversation.is_repeat = matches!(self.seen.insert(key_of(&sha256(&key_bytes))), Ok(false));
        }
        for memory in &mut conversation.memories {
            key_bytes.clear();
            key_bytes.extend_from_slice(b"memory\0");
            key_bytes.extend_from_slice(memory.id.as_bytes());
            match self.seen.insert(key_of(&sha256(&key_bytes))) {
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
            match self.seen.insert(key_of(&sha256(&key_bytes))) {
                Ok(true) => {}
                Ok(false) => {
                    message.disposition = Disposition::Duplicate;
                    self.warnings.add("id_conflict");
                }
                // Without the index a conflict cannot be ruled out; keep the message and say so.
                Err(_) => self.warnings.add("id_index_unavailable"),
            }
        }
    }

    fn take_warnings(&mut self) -> Warnings {
        std::mem::take(&mut self.warnings)
    }
}
