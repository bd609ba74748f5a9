//! `memport inspect`: what an input holds and how memport reads it, counted by the
//! conversion's engine with no output (every branch, no dedup, no extraction): nothing is
//! written anywhere, however large the input.

use std::path::Path;

use crate::error::RunError;
use crate::model::Warnings;
use crate::pipeline::engine;
use crate::pipeline::rejects::RejectsWriter;
use crate::pipeline::report::{Counts, InputSummary};
use crate::sources::{self, BranchPolicy, DecodeOptions, SourceOptions};
use crate::stages::{Stage, unique_ids::UniqueIds};

/// What an inspection found in one input.
#[derive(Debug)]
pub struct Inspection {
    /// The input as planned: provider, layout, size and the files read.
    pub input: InputSummary,
    /// Its records, as a conversion with every branch and no dedup counts them.
    pub counts: Counts,
    /// Warnings of planning and reading.
    pub warnings: Warnings,
    /// Explanations of input problems.
    pub notes: Vec<String>,
}

/// Reads `input` as a conversion with every branch and no dedup would, and counts it.
///
/// # Errors
/// What planning and reading the input can fail with (not an export, I/O); a record that
/// cannot be decoded is counted, not an error.
pub fn inspect_input(input: &Path, source: &SourceOptions, threads: usize, progress: bool) -> Result<Inspection, RunError> {
    let plan = sources::plan_input(input, source)?;
    let summary = super::input_summary(&plan);
    let mut warnings = plan.warnings.clone();
    let mut notes = plan.notes.clone();
    let total_bytes: u64 = plan.streams.iter().map(|stream| stream.entry.size).sum();
    // Nothing is written, so no export time is.
    let decode_options =
        DecodeOptions { branches: BranchPolicy::All, exported_at: 0, keep_provider_fields: false, dedup_keys: false, pam_digests: false };
    let stages: Vec<Box<dyn Stage>> = vec![Box::new(UniqueIds::default())];
    let result = engine::execute(
        engine::Reading { plans: vec![plan], decode: decode_options, element_limit: source.max_record_bytes },
        threads,
        stages,
        Vec::new(),
        RejectsWriter::create(None)?,
        super::make_progress(progress, total_bytes),
    )?;
    warnings.merge(&result.warnings);
    notes.extend(result.notes);
    Ok(Inspection { input: summary, counts: result.counts, warnings, notes })
}
