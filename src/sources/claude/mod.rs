//! Claude exports (provider-formats.md §2): `conversations.json` as a bare array, in a zip, a
//! folder or on its own, detected by content (`chat_messages`), since ChatGPT uses the same name.
//!
//! Read: conversations and their messages (content blocks, attachments' extracted text, file
//! names); projects (`projects.json` or `projects/<uuid>.json`) and `memories.json` as provider
//! memories ([`side_files`]). `users.json` is PII and never opened.

pub mod normalize;
pub mod raw;
pub mod side_files;

use crate::model::Origin;
use crate::sources::{DecodeOptions, Decoded, Decoder, RecordReject};

/// Decodes Claude conversation elements.
pub struct ClaudeDecoder;

impl Decoder for ClaudeDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let mut decoded = normalize::decode_conversation(bytes, origin, options)?;
        if options.keep_provider_fields {
            crate::sources::provider_fields::attach(&mut decoded.conversation, crate::sources::provider_fields::claude(bytes));
        }
        Ok(decoded)
    }
}
