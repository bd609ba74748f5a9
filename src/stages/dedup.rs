//! Dedup by content, as PAM's `content_hash` defines it (the normalized text): the first message
//! with a given text, in input order, is kept; later ones become [`Disposition::Duplicate`].
//!
//! The index keys on each message's 128-bit dedup key (XXH3 of the normalized text, see
//! [`crate::hash::content_key`]: an accidental collision is practically impossible) and lives
//! in a [`KeySet`], which spills to disk so memory stays bounded.

use crate::key_set::KeySet;
use crate::model::{Conversation, Disposition, Warnings};
use crate::stages::Stage;

/// The dedup stage.
#[derive(Default)]
pub struct Dedup {
    seen: KeySet,
    warnings: Warnings,
}

impl Stage for Dedup {
    fn name(&self) -> &'static str {
        "dedup"
    }

    fn process(&mut self, conversation: &mut Conversation) {
        for message in &mut conversation.messages {
            if message.disposition != Disposition::Keep {
                continue;
            }
            match self.seen.insert(message.content_key.dedup) {
                Ok(true) => {}
                Ok(false) => message.disposition = Disposition::Duplicate,
                Err(_) => {
                    // The spill file failed: keep the message (never lose one) and say so.
                    self.warnings.add("dedup_index_unavailable");
                }
            }
        }
    }

    fn take_warnings(&mut self) -> Warnings {
        std::mem::take(&mut self.warnings)
    }
}
