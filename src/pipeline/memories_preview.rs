//! `memport inspect --memories`: what extraction finds in inputs, written nowhere. The inputs
//! are read exactly as a conversion reads them (worker pool, dedup unless turned off, active
//! branch), with no sink: the consolidated memories come back instead of being written.

use std::path::PathBuf;

use indicatif::ProgressBar;

use crate::error::RunError;
use crate::model::MemoryRecord;
use crate::pipeline::DedupPolicy;
use crate::pipeline::engine;
use crate::pipeline::extraction::{ExtractionSettings, ExtractionStage};
use crate::pipeline::rejects::RejectsWriter;
use crate::sources::{self, BranchPolicy, DecodeOptions, SourceOptions};
use crate::stages::extract::consolidate::{ConsolidateOptions, MemoryCounts};
use crate::stages::{Stage, dedup::Dedup, unique_ids::UniqueIds};

/// What a preview found.
#[derive(Debug, Default)]
pub struct MemoriesPreview {
    /// The consolidated memories, in the order they were first said.
    pub memories: Vec<MemoryRecord>,
    /// How every candidate ended.
    pub counts: MemoryCounts,
    /// Conversations read.
    pub conversations: u64,
    /// Conversations that could not be read (the conversion would reject them).
    pub unreadable: u64,
}

/// Reads `inputs` and returns the memories extraction finds in them.
///
/// # Errors
/// What planning and reading an input can fail with (not an export, I/O); a conversation that
/// cannot be decoded is counted, not an error.
pub fn preview_memories(
    inputs: &[PathBuf],
    source: &SourceOptions,
    options: ConsolidateOptions,
    dedup: DedupPolicy,
    threads: usize,
) -> Result<MemoriesPreview, RunError> {
    let mut plans = Vec::with_capacity(inputs.len());
    for input in inputs {
        plans.push(sources::plan_input(input, source)?);
    }
    let dedup_keys = dedup == DedupPolicy::Content;
    // Nothing is written, so no export time is.
    let decode_options =
        DecodeOptions { branches: BranchPolicy::Active, exported_at: 0, keep_provider_fields: false, dedup_keys, pam_digests: false };
    let mut stages: Vec<Box<dyn Stage>> = vec![Box::new(UniqueIds::default())];
    if dedup_keys {
        stages.push(Box::new(Dedup::default()));
    }
    stages.push(Box::new(ExtractionStage::new(ExtractionSettings { extract: Some(options), redact_secrets: false })?));
    let result = engine::execute(
        engine::Reading { plans, decode: decode_options, element_limit: source.max_record_bytes },
        threads,
        stages,
        Vec::new(),
        RejectsWriter::create(None)?,
        ProgressBar::hidden(),
    )?;
    Ok(MemoriesPreview {
        memories: result.previewed,
        counts: result.memories.unwrap_or_default(),
        conversations: result.counts.conversations_read,
        unreadable: result.counts.conversations_rejected,
    })
}
