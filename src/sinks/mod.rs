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
//! count while the work scales with cores. A sink writes plainly to the path it is given: a run
//! (`crate::outputs::publish`) gives it one in a staging folder and moves the finished output
//! into place itself, after the run report is written (a file by a rename, a folder by its
//! format's publish: [`pam::publish`], [`parquet::publish`]), so a killed run never leaves a file
//! that looks complete; folder outputs keep a manifest of what memport wrote in them
//! ([`output_file::Manifest`]), so a rerun replaces only that.

pub mod aime;
pub mod aimem;
pub mod direct_reader;
pub mod direct_writer;
pub mod entity_refs;
pub mod folder_swap;
pub mod formats;
pub mod mif;
pub mod output_file;
pub mod pam;
pub mod parquet;
pub mod retraction_json;
pub mod store;
pub mod ump;
pub mod written_tree;

use crate::error::RunError;
use crate::model::{Conversation, RetractedConversation};

pub use formats::{FormatDescriptor, OutputFormat, Shape, SinkNeeds, build, output_paths};

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

#[cfg(test)]
impl SinkSettings {
    /// The settings of a run with the command line's defaults, exported at 1970-01-01.
    pub(crate) fn for_tests() -> SinkSettings {
        SinkSettings {
            aimem: aimem::AimemSettings {
                producer: "memport".into(),
                tenant_id: crate::spec::ids::uuid_v5_shaped("memport-tenant:memport"),
                exported_at: 0,
                links_expected: false,
                since: None,
                dna_only: false,
                predicted_links: None,
            },
            partition_by_provider: false,
            owner_id: "local-user".into(),
            sign_key: None,
            mif_vendor_extensions: Vec::new(),
            incremental: None,
        }
    }
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
