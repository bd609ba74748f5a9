//! The run report: what was read, what became of every record, what was written.
//!
//! Counts always balance: `messages_read = messages_written + messages_duplicate +
//! Σ messages_skipped + messages_rejected`.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::Serialize;
use tempfile::TempPath;

use crate::error::RunError;
use crate::model::{Conversation, Disposition, SkipReason, Warnings};
use crate::sinks::output_file;

/// One input as the report lists it.
#[derive(Debug, Clone, Serialize)]
pub struct InputSummary {
    /// The path given.
    pub path: String,
    /// Detected provider.
    pub provider: &'static str,
    /// Detected layout or era.
    pub layout: String,
    /// Size on disk.
    pub bytes: u64,
    /// Conversation files read from it, in order.
    pub files: Vec<String>,
}

/// What became of every record read.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Counts {
    /// Elements of the conversation arrays (including rejected ones).
    pub conversations_read: u64,
    /// Elements that could not be decoded at all.
    pub conversations_rejected: u64,
    /// Elements a sync skipped unread: an earlier run read them byte for byte alike (only in
    /// a sync's report).
    #[serde(skip_serializing_if = "is_zero")]
    pub conversations_unchanged: u64,
    /// Messages the provider stored (nodes with a message).
    pub messages_read: u64,
    /// Messages written by the sinks.
    pub messages_written: u64,
    /// Messages left out because an earlier message had the same content hash.
    pub messages_duplicate: u64,
    /// Messages left out by a named policy.
    pub messages_skipped: BTreeMap<&'static str, u64>,
    /// Messages that could not be read.
    pub messages_rejected: u64,
    /// Provider-native memories found (custom instructions, saved memories, Claude memories and
    /// projects).
    pub memories_read: u64,
    /// Provider memories written by the sinks.
    pub memories_written: u64,
    /// Provider memories left out because the same memory (kind and text) came earlier; custom
    /// instructions repeat in every ChatGPT conversation.
    pub memories_duplicate: u64,
    /// Memories their owner marked as not for export (PAM `access.exportable: false`, UMP
    /// `consent.exportable: false`): left out.
    pub memories_not_exportable: u64,
    /// Provider memories erased for good from the run's memory store: left out of every output.
    #[serde(skip_serializing_if = "is_zero")]
    pub memories_erased: u64,
    /// Memories withdrawn in the memory-format input they were read from (UMP
    /// `lifecycle.status: tombstoned`, PAM `status: retracted`, …): written again, marked as
    /// withdrawn.
    #[serde(skip_serializing_if = "is_zero")]
    pub memories_retracted: u64,
    /// Conversations the inputs list as retracted by a sync (a delta read as input), handed
    /// to every output as retractions of its own.
    #[serde(skip_serializing_if = "is_zero")]
    pub retractions_carried: u64,
}

/// For serde: counts that only some runs have are left out of the others' reports.
fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Counts {
    /// Starts with every skip reason at zero, so the report always lists them.
    pub fn new() -> Self {
        Counts { messages_skipped: SkipReason::ALL.iter().map(|reason| (reason.as_str(), 0)).collect(), ..Counts::default() }
    }

    /// Counts one decoded conversation after the stages ran.
    pub fn add_conversation(&mut self, conversation: &Conversation) {
        if !conversation.memories_only {
            self.conversations_read += 1;
        }
        for memory in &conversation.memories {
            self.memories_read += 1;
            if !memory.exportable {
                self.memories_not_exportable += 1;
            } else if memory.erased {
                self.memories_erased += 1;
            } else if memory.is_duplicate {
                self.memories_duplicate += 1;
            } else if memory.retracted_in_input {
                self.memories_retracted += 1;
            } else {
                self.memories_written += 1;
            }
        }
        for message in &conversation.messages {
            self.messages_read += 1;
            match message.disposition {
                Disposition::Keep => self.messages_written += 1,
                Disposition::Duplicate => self.messages_duplicate += 1,
                Disposition::Skip(reason) => *self.messages_skipped.entry(reason.as_str()).or_insert(0) += 1,
            }
        }
    }

    /// Whether every message read is accounted for.
    pub fn balances(&self) -> bool {
        let skipped: u64 = self.messages_skipped.values().sum();
        self.messages_read == self.messages_written + self.messages_duplicate + skipped + self.messages_rejected
            && self.memories_read
                == self.memories_written
                    + self.memories_duplicate
                    + self.memories_not_exportable
                    + self.memories_erased
                    + self.memories_retracted
    }
}

/// One output as the report lists it.
#[derive(Debug, Clone, Serialize)]
pub struct OutputSummary {
    /// Format name.
    pub format: &'static str,
    /// Where it was written.
    pub path: String,
    /// Records written.
    pub records: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// The settings a run used, so a report says how it was made: every [`Settings`] value by the
/// name the command line and pipeline files give it, with what the run worked out for those
/// left open (threads, export time, tenant).
///
/// [`Settings`]: crate::pipeline::Settings
#[derive(Debug, Clone, Serialize)]
pub struct ReportedOptions {
    /// Worker threads used.
    pub threads: usize,
    /// Export time written to outputs.
    pub exported_at: String,
    /// AIMEM tenant id used.
    pub tenant: String,
    /// The settings as given, defaults filled in.
    #[serde(flatten)]
    pub settings: crate::pipeline::Settings,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// Version of memport that wrote it.
    pub memport_version: &'static str,
    /// Inputs in the order read.
    pub inputs: Vec<InputSummary>,
    /// Record counts.
    pub counts: Counts,
    /// Outputs written.
    pub outputs: Vec<OutputSummary>,
    /// Warning counts by kind.
    pub warnings: BTreeMap<String, u64>,
    /// Explanations of input-level warnings and errors, for people.
    pub notes: Vec<String>,
    /// Settings in force.
    pub options: ReportedOptions,
    /// Number of reject records (conversations, messages and input problems).
    pub rejects: u64,
    /// How every extracted memory candidate ended (null under `--extract off`). Balances:
    /// `candidates = written + superseded_kept + merged + dropped_*`.
    pub memories_extracted: Option<crate::stages::extract::consolidate::MemoryCounts>,
    /// Secrets masked in the transcripts written, by kind (`--redact secrets`).
    pub secrets_redacted: BTreeMap<&'static str, u64>,
    /// Wall time of the run.
    pub elapsed_seconds: f64,
}

impl RunReport {
    /// Warnings as collected during the run.
    pub fn set_warnings(&mut self, warnings: &Warnings) {
        self.warnings = warnings.0.clone();
    }

    /// Writes the report (pretty JSON) to a temporary file beside `path` and returns it, for the
    /// caller to rename onto `path` ([`TempPath::persist`]) once the outputs are in place;
    /// dropped instead, the file is removed. Writing first and renaming last keeps a report
    /// that cannot be written from leaving new outputs in place, and a failed run from
    /// leaving a half-written report.
    ///
    /// # Errors
    /// I/O errors writing the temporary file.
    pub fn write_staged(&self, path: &Path) -> Result<TempPath, RunError> {
        let write_error = |error: std::io::Error| RunError::write(path.display().to_string(), error);
        let mut text = serde_json::to_vec_pretty(self).map_err(|error| write_error(error.into()))?;
        text.push(b'\n');
        let mut temporary = output_file::create_partial(path).map_err(write_error)?;
        temporary.write_all(&text).map_err(write_error)?;
        // Temporary files are private (0600); the report is an ordinary file.
        temporary.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(write_error)?;
        Ok(temporary.into_temp_path())
    }
}
