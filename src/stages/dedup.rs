//! Dedup by PAM `content_hash`: the first message with a given hash, in input order, is kept;
//! later ones become [`Disposition::Duplicate`].
//!
//! The index keeps 16 bytes per distinct message (the first half of the SHA-256), so it grows
//! with the number of distinct messages — about 25 MB per million — and is the only state of a
//! run that does. A 128-bit prefix makes an accidental collision practically impossible.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use crate::model::{Conversation, Disposition};
use crate::stages::Stage;

/// Hashes a key that is already a uniformly distributed hash by taking its low 64 bits.
#[derive(Default)]
pub struct PrehashedKey(u64);

impl Hasher for PrehashedKey {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes.iter().take(8) {
            self.0 = (self.0 << 8) | u64::from(byte);
        }
    }
    fn write_u128(&mut self, value: u128) {
        self.0 = value as u64;
    }
}

/// The dedup stage.
#[derive(Default)]
pub struct Dedup {
    seen: HashSet<u128, BuildHasherDefault<PrehashedKey>>,
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
            let mut prefix = [0u8; 16];
            prefix.copy_from_slice(&message.content_hash[..16]);
            if !self.seen.insert(u128::from_be_bytes(prefix)) {
                message.disposition = Disposition::Duplicate;
            }
        }
    }
}
