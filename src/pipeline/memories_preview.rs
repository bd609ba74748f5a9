//! `memport inspect --memories`: what extraction finds in inputs, written nowhere. Each input is
//! planned and decoded on the calling thread (a preview reads as the conversion would, without
//! the worker pool), the user's messages are extracted, and the candidates are consolidated
//! into memories.

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::RunError;
use crate::model::{Micros, Origin};
use crate::sources::{self, BranchPolicy, DecodeOptions, SourceOptions};
use crate::stages::extract::consolidate::{Consolidator, Memory};
use crate::stages::extract::extract_conversation;

/// What a preview found.
#[derive(Debug, Default)]
pub struct MemoriesPreview {
    /// The consolidated memories, in the order they were first said.
    pub memories: Vec<Memory>,
    /// Conversations read.
    pub conversations: u64,
    /// Conversations that could not be read (the conversion would reject them).
    pub unreadable: u64,
    /// Candidates dropped because their sentence held a secret.
    pub dropped_secret: u64,
}

/// Reads `inputs` and returns the memories extraction finds in them.
///
/// # Errors
/// What planning and reading an input can fail with (not an export, I/O); a conversation that
/// cannot be decoded is counted, not an error.
pub fn preview_memories(inputs: &[PathBuf], source: &SourceOptions, exported_at: Micros) -> Result<MemoriesPreview, RunError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|error| RunError::Internal(format!("starting a thread for the preview: {error}")))?;
    let decode_options =
        DecodeOptions { branches: BranchPolicy::Active, exported_at, keep_provider_fields: false, dedup_keys: false, pam_digests: false };
    let mut preview = MemoriesPreview::default();
    let mut consolidator = Consolidator::default();
    let mut element = Vec::new();
    for input in inputs {
        let plan = sources::plan_input(input, source)?;
        for stream in &plan.streams {
            let mut elements = stream.elements(&pool)?;
            let file: Arc<str> = stream.entry.display.clone();
            loop {
                element.clear();
                // A file that breaks is read up to the break, as the conversion reads it; the
                // break counts as an unreadable record, as the conversion rejects it.
                let (offset, index) = match elements.next_element_into(&mut element) {
                    Ok(Some(place)) => place,
                    Ok(None) => break,
                    Err(_) => {
                        preview.unreadable += 1;
                        break;
                    }
                };
                let origin = Origin { file: file.clone(), offset, index };
                match stream.decoder.decode(&element, origin, &decode_options) {
                    Ok(decoded) => {
                        preview.conversations += 1;
                        let extraction = extract_conversation(&decoded.conversation);
                        preview.dropped_secret += extraction.dropped_secret;
                        consolidator.add(&decoded.conversation.id, extraction.candidates);
                    }
                    Err(_) => preview.unreadable += 1,
                }
            }
        }
    }
    preview.memories = consolidator.finish();
    Ok(preview)
}
