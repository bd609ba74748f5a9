//! Sinks write the output formats. One read feeds every sink of a run.
//!
//! Contract: a sink hands out a stateless [`Encoder`] that the engine runs on the worker pool
//! for each batch of conversations (each message carries its final
//! [`crate::model::Disposition`]; memory formats encode only `Keep` messages, the Parquet
//! dataset records every message with its disposition). [`Sink::write_batch`]
//! then receives the encoded batches in input order, [`Sink::retract`] at most once after the
//! last batch (a sync's retractions: conversations an earlier run wrote that a complete export
//! no longer holds, sorted by provider and conversation id), and [`Sink::finish`] is called
//! exactly once. Each format writes retractions in its own terms: a PAM index entry tagged
//! `retracted` without a file, the AIMEM envelope extension `x-memport-retracted`, a UMP
//! `tombstoned` record, MIF `vendor_extensions.memport.retracted_conversations`, AIME
//! `extensions.memport.retractedConversations`, and a Parquet `retractions` table. Given none
//! (or an empty list), a sink writes what it wrote before outputs carried retractions (the
//! Parquet `memories` table has its `retracted` column either way).
//! Serializing in parallel and writing in order is what keeps output identical at any thread
//! count while the work scales with cores. Output goes to a temporary name beside the target and is
//! renamed on success, so a killed run never leaves a file that looks complete. After an error
//! the sink is dropped and its temporary files are removed. A run (`crate::pipeline`) points each
//! sink at a staging folder and moves the finished output into place itself, after the run
//! report is written ([`pam::publish`], [`parquet::publish`]); folder outputs keep a manifest of
//! what memport wrote in them ([`output_file::Manifest`]), so a rerun replaces only that.

pub mod aime;
pub mod aimem;
pub mod created_folders;
pub mod direct_reader;
pub mod direct_writer;
pub mod entity_refs;
pub mod folder_swap;
pub mod mif;
pub mod output_file;
pub mod pam;
pub mod parquet;
pub mod retraction_json;
pub mod ump;
pub mod written_tree;

use std::path::{Path, PathBuf};

use crate::error::{ConfigError, RunError};
use crate::model::{Conversation, RetractedConversation};

/// Formats memport writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// AIMEM bundle: one JSON object (`.aimem.json`).
    Aimem,
    /// AIMEM NDJSON stream: envelope line, then `_kind`-tagged records (`.aimem.ndjson`).
    AimemNdjson,
    /// Parquet dataset: a folder of tables for analysis.
    Parquet,
    /// PAM v1.0 store: a folder with `memory-store.json` and `conversations/`.
    Pam,
    /// AIME v1.0 document (`.aime.json`): messages with session metadata.
    Aime,
    /// MIF v2 document (`.mif.json`): messages and provider memories as memories.
    Mif,
    /// UMP 0.1 records as a JSON array (`.ump.json`).
    Ump,
    /// UMP 0.1 records, one per line.
    UmpNdjson,
    /// UMP 0.1 records, one `.ump.md` file each, in a folder.
    UmpMd,
}

impl OutputFormat {
    /// Every format, with its name on the command line.
    pub const ALL: [(&'static str, OutputFormat); 9] = [
        ("aimem", OutputFormat::Aimem),
        ("aimem-ndjson", OutputFormat::AimemNdjson),
        ("parquet", OutputFormat::Parquet),
        ("pam", OutputFormat::Pam),
        ("aime", OutputFormat::Aime),
        ("mif", OutputFormat::Mif),
        ("ump", OutputFormat::Ump),
        ("ump-ndjson", OutputFormat::UmpNdjson),
        ("ump-md", OutputFormat::UmpMd),
    ];

    /// Parses a format name as given to `--to`.
    ///
    /// # Errors
    /// [`ConfigError::Option`] listing the formats that exist.
    pub fn parse(name: &str) -> Result<OutputFormat, ConfigError> {
        let wanted = name.trim().to_ascii_lowercase();
        OutputFormat::ALL.iter().find(|(known, _)| *known == wanted).map(|(_, format)| *format).ok_or_else(|| ConfigError::Option {
            option: "--to".into(),
            reason: format!(
                "unknown format `{name}` (available: {})",
                OutputFormat::ALL.iter().map(|(known, _)| *known).collect::<Vec<_>>().join(", ")
            ),
        })
    }

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Aimem => "aimem",
            OutputFormat::AimemNdjson => "aimem-ndjson",
            OutputFormat::Parquet => "parquet",
            OutputFormat::Pam => "pam",
            OutputFormat::Aime => "aime",
            OutputFormat::Mif => "mif",
            OutputFormat::Ump => "ump",
            OutputFormat::UmpNdjson => "ump-ndjson",
            OutputFormat::UmpMd => "ump-md",
        }
    }

    /// File name used when `-o` names a folder.
    pub fn default_file_name(self) -> &'static str {
        match self {
            OutputFormat::Aimem => "memory.aimem.json",
            OutputFormat::AimemNdjson => "memory.aimem.ndjson",
            OutputFormat::Parquet => "parquet",
            OutputFormat::Pam => "pam",
            OutputFormat::Aime => "memory.aime.json",
            OutputFormat::Mif => "memory.mif.json",
            OutputFormat::Ump => "memory.ump.json",
            OutputFormat::UmpNdjson => "memory.ump.ndjson",
            OutputFormat::UmpMd => "ump-md",
        }
    }

    /// True for formats written as a folder (then `-o` names that folder even for one format).
    pub fn is_folder(self) -> bool {
        matches!(self, OutputFormat::Parquet | OutputFormat::Pam | OutputFormat::UmpMd)
    }

    /// What this format's sink needs from the run beyond the canonical conversations.
    pub fn needs(self) -> SinkNeeds {
        match self {
            // PAM keeps the provider's fields (`raw_metadata`) and is signed with `--sign-key`.
            OutputFormat::Pam => SinkNeeds { signs: true, provider_fields: true, pam_digests: false },
            // The metadata column keeps the provider's fields; the `content_hash` column holds
            // PAM digests the sink does not compute itself.
            OutputFormat::Parquet => SinkNeeds { signs: false, provider_fields: true, pam_digests: true },
            OutputFormat::Ump | OutputFormat::UmpNdjson | OutputFormat::UmpMd => {
                SinkNeeds { signs: true, provider_fields: false, pam_digests: false }
            }
            OutputFormat::Aimem | OutputFormat::AimemNdjson | OutputFormat::Aime | OutputFormat::Mif => SinkNeeds::default(),
        }
    }
}

/// What a sink needs from the run, declared by each format so the pipeline never names formats:
/// decoding pays only for what some output of the run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SinkNeeds {
    /// The sink signs its output when `--sign-key` is given.
    pub signs: bool,
    /// The sink writes each message's unmodeled provider fields.
    pub provider_fields: bool,
    /// The sink writes each message's PAM `content_hash` digest, computed while decoding.
    pub pam_digests: bool,
}

/// Settings shared by the sinks.
#[derive(Debug, Clone)]
pub struct SinkSettings {
    /// Producer, tenant and export time of the AIMEM sinks.
    pub aimem: aimem::AimemSettings,
    /// Parquet: Hive-style `provider=<name>` folders.
    pub partition_by_provider: bool,
    /// PAM: `owner.id` of the store.
    pub owner_id: String,
    /// Signs PAM stores and UMP records when given.
    pub sign_key: Option<crate::signing::SignKey>,
    /// Other systems' `vendor_extensions` read from MIF inputs, which a MIF output keeps.
    pub mif_vendor_extensions: Vec<(String, serde_json::Value)>,
    /// A sync's run: PAM writes its export ids, and a delta says what it applies to.
    pub incremental: Option<Incremental>,
}

/// What the outputs of a sync's run say about being part of a series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incremental {
    /// This run's export id (PAM `export_id`), derived from the run id.
    pub export_id: String,
    /// The export of the run this delta applies to (PAM `base_export_id`); none for a sync's
    /// first run, which is a full export.
    pub base_export_id: Option<String>,
    /// The base run's export time: AIMEM `scope: "SINCE"` with `since`, PAM `since`.
    pub since: Option<crate::model::Micros>,
}

/// What a finished sink wrote.
#[derive(Debug, Clone)]
pub struct SinkSummary {
    /// Format name.
    pub format: &'static str,
    /// Where.
    pub path: String,
    /// Records written (AIMEM: chunks and edges).
    pub records: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// A batch serialized by an [`Encoder`], one variant per sink family.
#[derive(Debug)]
#[non_exhaustive]
pub enum Encoded {
    /// AIMEM chunk and edge records in canonical form.
    Aimem(aimem::EncodedBatch),
    /// Parquet record batches per table.
    Parquet(parquet::EncodedBatch),
    /// PAM conversation files and memory objects.
    Pam(pam::EncodedBatch),
    /// AIME messages and memories.
    Aime(aime::EncodedBatch),
    /// MIF memory objects.
    Mif(mif::EncodedBatch),
    /// UMP records.
    Ump(ump::EncodedBatch),
}

/// Serializes batches for one sink; pure CPU, called from any worker thread.
pub trait Encoder: Send + Sync {
    /// Encodes the `Keep` messages of `batch`.
    fn encode(&self, batch: &[Conversation]) -> Encoded;
}

/// Writes records to one output. See the module docs for the contract.
pub trait Sink: Send {
    /// The encoder the engine runs on the worker pool for this sink.
    fn encoder(&self) -> std::sync::Arc<dyn Encoder>;

    /// Writes one encoded batch; batches arrive in input order.
    ///
    /// # Errors
    /// I/O errors writing the output or its spill files.
    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError>;

    /// Writes a sync's retractions in the format's own terms (see the module docs). Called at
    /// most once, after the last batch and before [`Sink::finish`], with `retracted` sorted by
    /// (provider, conversation id). An empty list changes nothing in the output. The default
    /// writes nothing.
    ///
    /// # Errors
    /// I/O errors writing the output.
    fn retract(&mut self, retracted: &[RetractedConversation]) -> Result<(), RunError> {
        let _ = retracted;
        Ok(())
    }

    /// Completes the output (checksums, closing brackets), renames it into place (the path the
    /// sink was created with, which a run makes a staging path) and reports.
    ///
    /// # Errors
    /// I/O errors.
    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError>;
}

/// Works out each format's output path: `-o` is the file for one format and a folder for several.
///
/// # Errors
/// [`ConfigError::Option`] when no format is given.
pub fn output_paths(formats: &[OutputFormat], output: &Path) -> Result<Vec<(OutputFormat, PathBuf)>, ConfigError> {
    match formats {
        [] => Err(ConfigError::Option { option: "--to".into(), reason: "name at least one format".into() }),
        [single] if single.is_folder() || !output.is_dir() => Ok(vec![(*single, output.to_owned())]),
        several => Ok(several.iter().map(|format| (*format, output.join(format.default_file_name()))).collect()),
    }
}

/// Builds the sink for `format` writing to `path`.
///
/// # Errors
/// I/O errors creating the output's temporary file.
pub fn build(format: OutputFormat, path: &Path, settings: &SinkSettings) -> Result<Box<dyn Sink>, RunError> {
    match format {
        OutputFormat::Aimem => Ok(Box::new(aimem::AimemSink::create(path, aimem::Framing::Bundle, settings.aimem.clone())?)),
        OutputFormat::AimemNdjson => Ok(Box::new(aimem::AimemSink::create(path, aimem::Framing::Ndjson, settings.aimem.clone())?)),
        OutputFormat::Parquet => {
            let layout = parquet::ParquetLayout { partition_by_provider: settings.partition_by_provider, ..Default::default() };
            Ok(Box::new(parquet::ParquetSink::create(path, layout)?))
        }
        OutputFormat::Aime => Ok(Box::new(aime::AimeSink::create(path, settings.aimem.exported_at)?)),
        OutputFormat::Mif => {
            Ok(Box::new(mif::MifSink::create(path, settings.aimem.exported_at, &settings.owner_id, &settings.mif_vendor_extensions)?))
        }
        OutputFormat::Ump => Ok(Box::new(ump::UmpSink::create(path, ump::Binding::Json, &settings.owner_id, settings.sign_key.clone())?)),
        OutputFormat::UmpNdjson => {
            Ok(Box::new(ump::UmpSink::create(path, ump::Binding::Ndjson, &settings.owner_id, settings.sign_key.clone())?))
        }
        OutputFormat::UmpMd => {
            Ok(Box::new(ump::UmpSink::create(path, ump::Binding::Markdown, &settings.owner_id, settings.sign_key.clone())?))
        }
        OutputFormat::Pam => Ok(Box::new(pam::PamSink::create(
            path,
            pam::PamSettings {
                incremental: settings.incremental.clone(),
                owner_id: settings.owner_id.clone(),
                exported_at: settings.aimem.exported_at,
                sign_key: settings.sign_key.clone(),
            },
        )?)),
    }
}
