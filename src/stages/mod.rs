//! Stages: what a run does to records between decoding and the sinks. A stage may work in
//! three places (after Vector's split between function and task transforms):
//!
//! - **on the worker pool**, per element, in any order ([`WorkerStep`]): before decoding (a
//!   sync skips an element it read before) and after (extraction reads the user's messages);
//!   what it finds travels with the conversation;
//! - **in input order**, on the collector ([`Stage::process`]), with what its worker step found:
//!   it may only change message dispositions (it never drops or reorders conversations), so
//!   the run report can account for every message;
//! - **at the end of the run** ([`Stage::end`]): records and retractions it emits, which pass
//!   through the other stages ([`Stage::pass_emitted`]) to every sink (or, records that went
//!   through them when read, straight to the sinks: [`Emit::records_as_read`]).
//!
//! The end goes from the last stage to the first, in two rounds: [`Stage::prepare_end`] (a
//! stage that needs something of an earlier one asks on the [`EndBoard`], and the earlier one
//! answers in its own round, which comes after), then [`Stage::end`].
//!
//! [`dedup`], [`unique_ids`] and [`read_back`] work in input order only; [`erasures`] marks what the run's
//! memory store erased, on the worker pool; [`extract`] is the extraction of
//! typed memories from what users say about themselves (its stage is
//! `pipeline::extraction::ExtractionStage`, and a sync's delta is `pipeline::delta::DeltaStage`).

pub mod dedup;
pub mod erasures;
pub mod extract;
pub mod read_back;
pub mod unique_ids;

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::RunError;
use crate::model::{Conversation, MemoryRecord, Provider, RetractedConversation, Warnings};
use crate::sources::{DecodeOptions, Decoder};
use extract::consolidate::{EarlierCurrent, EarlierLink, MemoryCounts};

/// What a stage's worker step found in one element, handed to the same stage in input order.
pub type Found = Box<dyn Any + Send>;

/// What a worker step says before an element is decoded.
pub enum BeforeDecode {
    /// Decode it; what was found so far goes to [`WorkerStep::after_decode`].
    Decode(Option<Found>),
    /// Do not decode it: the stage takes it as it is ([`Stage::skipped`]).
    Skip(Found),
}

/// A stage's work on the worker pool, one element at a time, in any order.
pub trait WorkerStep: Send + Sync {
    /// Looks at an element of `provider` before it is decoded.
    fn before_decode(&self, _provider: Provider, _bytes: &[u8], _decoder: &dyn Decoder) -> BeforeDecode {
        BeforeDecode::Decode(None)
    }

    /// Works on a decoded conversation; `before` is what [`WorkerStep::before_decode`] found.
    /// Returns what [`Stage::process`] gets.
    fn after_decode(&self, _conversation: &mut Conversation, _options: &DecodeOptions, before: Option<Found>) -> Option<Found> {
        before
    }
}

/// What stages tell each other at the end of the run (see the module comment for the order).
#[derive(Debug, Default)]
pub struct EndBoard {
    /// Set by extraction: it wants the current values earlier runs wrote.
    pub wants_earlier_currents: bool,
    /// The current values of single-valued slots that earlier runs wrote (a sync's answer).
    pub earlier_currents: Vec<EarlierCurrent>,
    /// The earlier current values this run's memories now stand beside (extraction's, for the
    /// sync).
    pub earlier_links: Vec<EarlierLink>,
    /// The records the run's memory store erased (the erasure stage's, when it has any).
    pub erased: Option<Arc<erasures::ErasedIds>>,
}

/// Where a stage's records go at the end of the run: through the other stages, to every sink.
pub trait Emit {
    /// Hands on `records`; false when the sinks stopped taking them (the run is failing).
    ///
    /// # Errors
    /// What another stage's [`Stage::pass_emitted`] fails with.
    fn records(&mut self, records: Vec<Conversation>) -> Result<bool, RunError>;

    /// Hands on `records` that went through every stage when they were read (memories the
    /// read-back stage kept for the end): straight to the sinks, not through the other stages
    /// again. False when the sinks stopped taking them.
    ///
    /// # Errors
    /// Kept for emitters that can fail; a sink's own error ends the run where it is written.
    fn records_as_read(&mut self, records: Vec<Conversation>) -> Result<bool, RunError>;

    /// Hands every sink the conversations a sync retracts; false when the sinks stopped taking
    /// them.
    ///
    /// # Errors
    /// Kept for emitters that can fail; a sink's own error ends the run where it is written.
    fn retractions(&mut self, retracted: Vec<RetractedConversation>) -> Result<bool, RunError>;
}

/// What stages add to the run's result.
#[derive(Debug, Default)]
pub struct StageReport {
    /// How every extracted candidate ended, when extraction was on.
    pub memories: Option<MemoryCounts>,
    /// Secrets masked in transcripts, by kind.
    pub redacted: BTreeMap<&'static str, u64>,
    /// Memories emitted at the end of a run without sinks (a preview).
    pub previewed: Vec<MemoryRecord>,
}

/// One stage of a run (see the module comment).
pub trait Stage: Send {
    /// Short name for reports.
    fn name(&self) -> &'static str;

    /// Its work on the worker pool, if any.
    fn worker(&self) -> Option<Arc<dyn WorkerStep>> {
        None
    }

    /// Looks at one decoded conversation, in input order, with what its worker step found, and
    /// updates its messages' dispositions.
    ///
    /// # Errors
    /// When the stage cannot go on (its state or a temporary file failed); the run stops after
    /// this batch.
    fn process(&mut self, conversation: &mut Conversation, found: Option<Found>) -> Result<(), RunError>;

    /// An element of `provider` that its worker step skipped before decoding, with what the
    /// step found (for a sync: the conversation an earlier run read it as).
    ///
    /// # Errors
    /// As [`Stage::process`].
    fn skipped(&mut self, _provider: Provider, _found: Found) -> Result<(), RunError> {
        Ok(())
    }

    /// The first round at the end of the run: ask or answer on the board.
    ///
    /// # Errors
    /// When what it answers with cannot be read.
    fn prepare_end(&mut self, _board: &mut EndBoard) -> Result<(), RunError> {
        Ok(())
    }

    /// The second round: emit records and retractions.
    ///
    /// # Errors
    /// When what it emits cannot be made.
    fn end(&mut self, _board: &mut EndBoard, _emit: &mut dyn Emit) -> Result<(), RunError> {
        Ok(())
    }

    /// Records another stage emits at the end, on their way to the sinks.
    ///
    /// # Errors
    /// As [`Stage::process`].
    fn pass_emitted(&mut self, _records: &mut [Conversation]) -> Result<(), RunError> {
        Ok(())
    }

    /// Warnings gathered so far (taken once, at the end of the run).
    fn take_warnings(&mut self) -> Warnings {
        Warnings::default()
    }

    /// Adds what it counted to the run's result (once, at the end of the run).
    fn report(&mut self, _report: &mut StageReport) {}
}
