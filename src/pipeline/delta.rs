//! The hook through which a sync makes a run write only what changed since the previous one:
//! elements whose raw bytes an earlier run already read are skipped before they are decoded,
//! and the messages of a changed conversation that were emitted before are marked so no sink
//! writes them again. Extracted memories carry what earlier runs knew of them (evidence counts,
//! the slot's current value), and once everything is read the sync says what it retracts.
//! `crate::sync` implements it over its state store.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::RunError;
use crate::model::{Conversation, MemoryRecord, Origin, Provider, RetractedConversation};
use crate::pipeline::extraction::memories_only_records;
use crate::sources::{Decoder, InputPlan};
use crate::stages::erasures::ErasedIds;
use crate::stages::extract::consolidate::{EarlierCurrent, EarlierLink};
use crate::stages::{BeforeDecode, Emit, EndBoard, Found, Stage, WorkerStep};

pub use crate::hash::Fingerprint;

/// The elements earlier runs read, by provider and fingerprint, with the id of the
/// conversation each became. Read-only while the run goes; shared by the decode workers.
#[derive(Debug, Default)]
pub struct UnchangedIndex {
    by_provider: HashMap<Provider, HashMap<Fingerprint, String>>,
}

impl UnchangedIndex {
    /// Records that an element of `provider` with `fingerprint` became conversation `id`.
    pub fn insert(&mut self, provider: Provider, fingerprint: Fingerprint, id: String) {
        self.by_provider.entry(provider).or_default().insert(fingerprint, id);
    }

    /// The conversation an element of `provider` with `fingerprint` became, when an earlier
    /// run read it.
    pub fn lookup(&self, provider: Provider, fingerprint: &Fingerprint) -> Option<&str> {
        self.by_provider.get(&provider)?.get(fingerprint).map(String::as_str)
    }

    /// Whether no element is known (a first sync, or a full one): fingerprints are then not
    /// worth computing before decoding.
    pub fn is_empty(&self) -> bool {
        self.by_provider.values().all(HashMap::is_empty)
    }
}

/// What a sync adds to a run once everything is read.
#[derive(Debug, Default)]
pub struct Conclusion {
    /// Memories earlier runs wrote, written again marked: superseded by a value this run
    /// found, or retracted with every conversation they were said in.
    pub memories: Vec<(Provider, MemoryRecord)>,
    /// Conversations earlier runs wrote that this complete export no longer holds, sorted by
    /// provider and id.
    pub retracted: Vec<RetractedConversation>,
}

/// What a sync tells a run (see the module comment).
pub trait DeltaFilter: Send {
    /// Called once the inputs are planned, before anything is read: the elements that can be
    /// skipped unread.
    ///
    /// # Errors
    /// When the sync's state cannot be read.
    fn prepare(&mut self, plans: &[InputPlan]) -> Result<UnchangedIndex, RunError>;

    /// An element skipped because an earlier run read it byte for byte alike: conversation
    /// `conversation_id` of `provider` is still in the export.
    ///
    /// # Errors
    /// When the sync's state cannot be written.
    fn unchanged(&mut self, provider: Provider, conversation_id: &str, fingerprint: Fingerprint) -> Result<(), RunError>;

    /// A decoded conversation (after the other stages), new or changed: marks the messages an
    /// earlier run emitted as skipped ([`crate::model::SkipReason::EmittedBefore`]) and
    /// records what is emitted now.
    ///
    /// # Errors
    /// When the sync's state cannot be read or written.
    fn trim(&mut self, conversation: &mut Conversation, fingerprint: Fingerprint) -> Result<(), RunError>;

    /// The current values of single-valued slots that earlier runs wrote, for consolidation
    /// to order this run's values after (or before) them.
    ///
    /// # Errors
    /// When the sync's state cannot be read.
    fn earlier_currents(&mut self) -> Result<Vec<EarlierCurrent>, RunError>;

    /// Extracted memories on their way to the sinks (memories-only records): each carries what
    /// earlier runs counted of it too (evidence count, confidence, first and last said), and
    /// is recorded.
    ///
    /// # Errors
    /// When the sync's state cannot be read or written.
    fn trim_memories(&mut self, records: &mut [Conversation]) -> Result<(), RunError>;

    /// Called once after everything was read and every extracted memory passed
    /// [`DeltaFilter::trim_memories`]: what the run writes besides (see [`Conclusion`]).
    /// `links` are the earlier current values this run's memories now stand beside; `erased`
    /// the records the run's memory store erased (empty when it erased none).
    ///
    /// # Errors
    /// When the sync's state cannot be read or written.
    fn conclude(&mut self, links: &[EarlierLink], erased: &ErasedIds) -> Result<Conclusion, RunError>;
}

/// A sync's delta as a stage of the run: on the worker pool, every element is fingerprinted
/// and those an earlier run read are skipped unread; in input order, a conversation's messages
/// emitted before are marked; at the end, extracted memories carry what earlier runs knew, and
/// the sync's conclusion (memories written again, retractions) goes to every sink.
pub struct DeltaStage<'filter> {
    filter: &'filter mut dyn DeltaFilter,
    index: Arc<UnchangedIndex>,
}

impl<'filter> DeltaStage<'filter> {
    /// The stage for `filter`, with the elements earlier runs read (`index`, from
    /// [`DeltaFilter::prepare`]).
    pub fn new(filter: &'filter mut dyn DeltaFilter, index: UnchangedIndex) -> Self {
        DeltaStage { filter, index: Arc::new(index) }
    }
}

/// [`DeltaStage`]'s work on the worker pool.
struct DeltaWorker {
    index: Arc<UnchangedIndex>,
}

/// What the worker step found: the element's fingerprint, and the conversation it became in
/// an earlier run when it is skipped.
struct Fingerprinted {
    fingerprint: Fingerprint,
    unchanged: Option<String>,
}

impl WorkerStep for DeltaWorker {
    fn before_decode(&self, provider: Provider, bytes: &[u8], decoder: &dyn Decoder) -> BeforeDecode {
        let fingerprint = decoder.fingerprint(bytes);
        match self.index.lookup(provider, &fingerprint) {
            Some(conversation_id) => {
                BeforeDecode::Skip(Box::new(Fingerprinted { fingerprint, unchanged: Some(conversation_id.to_owned()) }))
            }
            None => BeforeDecode::Decode(Some(Box::new(Fingerprinted { fingerprint, unchanged: None }))),
        }
    }
}

impl Stage for DeltaStage<'_> {
    fn name(&self) -> &'static str {
        "sync delta"
    }

    fn worker(&self) -> Option<Arc<dyn WorkerStep>> {
        Some(Arc::new(DeltaWorker { index: self.index.clone() }))
    }

    fn process(&mut self, conversation: &mut Conversation, found: Option<Found>) -> Result<(), RunError> {
        match found.and_then(|found| found.downcast::<Fingerprinted>().ok()) {
            Some(found) => self.filter.trim(conversation, found.fingerprint),
            None => Ok(()),
        }
    }

    fn skipped(&mut self, provider: Provider, found: Found) -> Result<(), RunError> {
        match found.downcast::<Fingerprinted>() {
            Ok(found) => match &found.unchanged {
                Some(conversation_id) => self.filter.unchanged(provider, conversation_id, found.fingerprint),
                None => Ok(()),
            },
            Err(_) => Ok(()),
        }
    }

    fn prepare_end(&mut self, board: &mut EndBoard) -> Result<(), RunError> {
        if board.wants_earlier_currents {
            board.earlier_currents = self.filter.earlier_currents()?;
        }
        Ok(())
    }

    fn end(&mut self, board: &mut EndBoard, emit: &mut dyn Emit) -> Result<(), RunError> {
        let none = ErasedIds::default();
        let conclusion = self.filter.conclude(&board.earlier_links, board.erased.as_deref().unwrap_or(&none))?;
        let origin = Origin { file: "sync".into(), offset: 0, index: 0 };
        let batch = memories_only_records(conclusion.memories, &origin);
        if !batch.is_empty() && !emit.records(batch)? {
            return Ok(());
        }
        if !conclusion.retracted.is_empty() {
            emit.retractions(conclusion.retracted)?;
        }
        Ok(())
    }

    fn pass_emitted(&mut self, records: &mut [Conversation]) -> Result<(), RunError> {
        self.filter.trim_memories(records)
    }
}
