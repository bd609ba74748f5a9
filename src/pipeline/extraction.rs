//! Extraction in a conversion: what runs on the worker pool (finding candidates in the user's
//! sentences, masking secrets in transcripts) and what runs in the collector, in input order
//! (keeping the candidates of written messages and consolidating them). The consolidated
//! memories are written after the last conversation, in batches, as memories-only records.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;

use std::sync::Arc;

use crate::error::RunError;
use crate::model::{Conversation, MemoryRecord, Origin, Part, Provider};
use crate::sinks::written_tree::is_written;
use crate::sources::DecodeOptions;
use crate::stages::erasures::ErasedIds;
use crate::stages::extract::consolidate::{
    ConsolidateOptions, Consolidated, Consolidator, EXTRACTED_ID_PREFIX, EarlierCurrent, InInput, MemoryCounts,
};
use crate::stages::extract::secrets::{SecretKind, clean_quote, mask_secrets, redact_counting};
use crate::stages::extract::{Extraction, extract_conversation};
use crate::stages::{Emit, EndBoard, Found, Stage, StageReport, WorkerStep};

/// Memories per memories-only record sent to the sinks.
pub const MEMORIES_PER_RECORD: usize = 512;
/// The id of the memories-only records that carry extracted memories.
pub const EXTRACTED_RECORD_ID: &str = "extracted-memories";

/// What a run extracts and masks. The default is the command line's: `--extract rules` with
/// the default consolidation options, `--redact none`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExtractionSettings {
    /// Extract memories (`--extract rules`), with these consolidation options; `None` for
    /// `--extract off`.
    pub extract: Option<ConsolidateOptions>,
    /// Mask secrets in the transcripts written (`--redact secrets`).
    pub redact_secrets: bool,
}

impl ExtractionSettings {
    /// `--extract off --redact none`: transcripts and provider memories only.
    pub const OFF: ExtractionSettings = ExtractionSettings { extract: None, redact_secrets: false };
}

impl Default for ExtractionSettings {
    fn default() -> Self {
        ExtractionSettings { extract: Some(ConsolidateOptions::default()), redact_secrets: false }
    }
}

/// What the worker found in one conversation.
#[derive(Debug, Default)]
pub struct WorkerFindings {
    /// The candidates, when extraction is on.
    pub extraction: Option<Extraction>,
    /// Secrets masked, by kind.
    pub redacted: BTreeMap<&'static str, u64>,
}

/// Runs on the worker pool after decoding: extracts candidates from the user's sentences as
/// written, then masks secrets in every message and provider memory. A message whose text
/// changes gets its content key again, so dedup and content hashes are over the redacted text.
pub fn on_worker(conversation: &mut Conversation, settings: &ExtractionSettings, decode: &DecodeOptions) -> WorkerFindings {
    let mut findings = WorkerFindings::default();
    // An extracted memory read back from a memory format: its quotes pass the filters the
    // run's own quotes pass (secrets masked, and contact details unless it is one).
    for memory in &mut conversation.memories {
        let Some(extracted) = memory.extracted.as_deref_mut() else { continue };
        let personal = extracted.personal;
        for piece in &mut extracted.evidence {
            let cleaned = if personal { mask_secrets(&piece.text) } else { clean_quote(&piece.text) };
            if let Cow::Owned(cleaned) = cleaned {
                // The span still starts where the sentence does, and now covers what is kept.
                piece.span = (piece.span.0, piece.span.0.saturating_add(cleaned.len()));
                piece.text = cleaned;
            }
        }
    }
    if settings.extract.is_some() {
        let extraction = extract_conversation(conversation);
        for candidate in &extraction.candidates {
            if let Some(message) = conversation.messages.get_mut(candidate.message_index) {
                message.discloses = true;
            }
        }
        findings.extraction = Some(extraction);
    }
    if settings.redact_secrets {
        let mut count = |kind: SecretKind| *findings.redacted.entry(kind.as_str()).or_insert(0) += 1;
        for message in &mut conversation.messages {
            let mut changed = false;
            if let Some(redacted) = redact_counting(&message.text, &mut count) {
                message.text = redacted;
                changed = true;
            }
            for part in &mut message.parts {
                // Text and code parts hold the words of the text, counted above; thinking is
                // not in the text, and counted here.
                let (text, counted) = match part {
                    Part::Text(text) | Part::Code { text, .. } => (text, false),
                    Part::Thinking(text) => (text, true),
                    Part::Asset(_) | Part::Raw { .. } => continue,
                };
                let redacted = if counted { redact_counting(text, &mut count) } else { redact_counting(text, |_| {}) };
                if let Some(redacted) = redacted {
                    *text = redacted;
                    changed = true;
                }
            }
            if changed {
                message.content_key = decode.content_key(&message.text);
            }
        }
        for memory in &mut conversation.memories {
            if let Some(redacted) = redact_counting(&memory.text, &mut count) {
                memory.text = redacted;
            }
            if let Some(extracted) = memory.extracted.as_deref_mut()
                && let Some(redacted) = redact_counting(&extracted.value, &mut count)
            {
                extracted.value = redacted;
            }
        }
        if let Some(extraction) = &mut findings.extraction {
            // Evidence spans point into the text as written out: find each sentence again in
            // the redacted message, as written or, when it held a secret (a clause cut from a
            // sentence that holds one elsewhere), with its secrets masked as the message's are.
            for candidate in &mut extraction.candidates {
                let Some(message) = conversation.messages.get(candidate.message_index) else { continue };
                let found = match message.text.find(&candidate.evidence) {
                    Some(start) => Some((start, candidate.evidence.len())),
                    None => {
                        let masked = mask_secrets(&candidate.evidence);
                        message.text.find(masked.as_ref()).map(|start| (start, masked.len()))
                    }
                };
                if let Some((start, length)) = found {
                    candidate.span = (start, start + length);
                }
            }
        }
    }
    findings
}

/// The collector's side: consolidation in input order.
pub struct Collector {
    consolidator: Consolidator,
    options: ConsolidateOptions,
    /// Ids of input memories that look like extracted ones (`mem-…`), written or retracted in
    /// the input: memport's own output read again, whose statements are not extracted a second
    /// time (a memory forgotten there stays forgotten), and the entities their read-back
    /// memories write. Few: only such inputs have any.
    in_input: InInput,
}

impl Collector {
    /// A collector that consolidates with `options`.
    ///
    /// # Errors
    /// When the evidence spool cannot be made.
    pub fn new(options: ConsolidateOptions) -> io::Result<Self> {
        Ok(Collector { consolidator: Consolidator::new()?, options, in_input: InInput::default() })
    }

    /// Takes the candidates of one conversation after the stages ran: those of messages that
    /// are written become evidence under the message's final id; the others are counted.
    ///
    /// # Errors
    /// When the evidence spool cannot be written.
    pub fn add(&mut self, conversation: &Conversation, extraction: Extraction) -> io::Result<()> {
        // One its owner marked not for export is not extracted again either (it would come back
        // as a new memory of the same id).
        // Kept includes one the read-back stage writes at the end of the run.
        let held = |memory: &&MemoryRecord| (memory.is_kept() || !memory.exportable) && memory.id.starts_with(EXTRACTED_ID_PREFIX);
        for memory in conversation.memories.iter().filter(held) {
            self.in_input.memories.insert(memory.id.clone());
        }
        // An entity a read-back memory writes (the first written memory naming it: see
        // `stages::read_back`) is not written again with a memory this run extracts.
        let read_back = conversation.memories.iter().filter(|memory| memory.is_kept()).filter_map(|memory| memory.extracted.as_deref());
        for entity in read_back.flat_map(|extracted| &extracted.entities).filter(|entity| entity.first_mention) {
            self.in_input.entities.note_written(entity);
        }
        self.consolidator.count_secret(extraction.dropped_secret);
        let mut kept = Vec::with_capacity(extraction.candidates.len());
        let mut unwritten = 0;
        for mut candidate in extraction.candidates {
            match conversation.messages.get(candidate.message_index) {
                Some(message) if is_written(message) => {
                    // The stages may have renamed the message (unique ids).
                    if candidate.message_id != message.id {
                        candidate.message_id.clone_from(&message.id);
                    }
                    kept.push(candidate);
                }
                _ => unwritten += 1,
            }
        }
        self.consolidator.count_unwritten(unwritten);
        self.consolidator.add(conversation.provider, &conversation.id, kept)
    }

    /// Consolidates what was added; `earlier` holds the current values of earlier syncs
    /// ([`crate::stages::extract::consolidate::Consolidator::finish`]).
    ///
    /// # Errors
    /// When the evidence spool cannot be read.
    pub fn finish(self, earlier: &[EarlierCurrent], erased: &ErasedIds) -> io::Result<Consolidated> {
        self.consolidator.finish(self.options, self.in_input, earlier, erased)
    }
}

/// The next memories-only records of `consolidated` (one per provider, in the order of each
/// provider's first memory), or an empty list when all were sent.
///
/// # Errors
/// When the evidence spool cannot be read.
pub fn next_records(consolidated: &mut Consolidated, batch_index: u64) -> io::Result<Vec<Conversation>> {
    let memories = consolidated.next_batch(MEMORIES_PER_RECORD)?;
    Ok(memories_only_records(memories, &Origin { file: "extraction".into(), offset: 0, index: batch_index }))
}

/// Memories grouped into memories-only records, one per provider in the order of each
/// provider's first memory, at most [`MEMORIES_PER_RECORD`] each.
pub fn memories_only_records(memories: Vec<(Provider, MemoryRecord)>, origin: &Origin) -> Vec<Conversation> {
    let mut records: Vec<(Provider, Vec<MemoryRecord>)> = Vec::new();
    for (provider, memory) in memories {
        match records.iter_mut().rev().find(|(known, list)| *known == provider && list.len() < MEMORIES_PER_RECORD) {
            Some((_, list)) => list.push(memory),
            None => records.push((provider, vec![memory])),
        }
    }
    records
        .into_iter()
        .map(|(provider, memories)| Conversation::memories_only(provider, EXTRACTED_RECORD_ID.to_owned(), origin.clone(), memories))
        .collect()
}

/// The report's memory counts of a run that extracted.
pub fn counts_of(consolidated: &Consolidated) -> MemoryCounts {
    consolidated.counts().clone()
}

/// Extraction and secret masking as a stage of the run: candidates found and secrets masked on
/// the worker pool ([`on_worker`]), consolidated in input order ([`Collector`]), and the
/// memories emitted at the end, in batches, after the last conversation.
pub struct ExtractionStage {
    settings: ExtractionSettings,
    /// The consolidation, when extracting.
    collector: Option<Collector>,
    redacted: BTreeMap<&'static str, u64>,
    memories: Option<MemoryCounts>,
}

impl ExtractionStage {
    /// The stage for `settings`.
    ///
    /// # Errors
    /// When the evidence spool cannot be made.
    pub fn new(settings: ExtractionSettings) -> Result<Self, RunError> {
        if settings.extract.is_some() || settings.redact_secrets {
            // The patterns took the first worker to need them ~60 ms of CPU to compile; started
            // now, that runs while the reader opens the input and fills the first batches. A
            // thread that cannot start leaves them to the workers, as before.
            let _ = std::thread::Builder::new().name("memport-prepare".into()).spawn(crate::stages::extract::prepare);
        }
        let collector = match settings.extract {
            Some(options) => Some(Collector::new(options).map_err(|error| RunError::temporary("extraction evidence", error))?),
            None => None,
        };
        Ok(ExtractionStage { settings, collector, redacted: BTreeMap::new(), memories: None })
    }
}

/// [`ExtractionStage`]'s work on the worker pool.
struct ExtractionWorker {
    settings: ExtractionSettings,
}

impl WorkerStep for ExtractionWorker {
    fn after_decode(&self, conversation: &mut Conversation, options: &DecodeOptions, _before: Option<Found>) -> Option<Found> {
        Some(Box::new(on_worker(conversation, &self.settings, options)))
    }
}

impl Stage for ExtractionStage {
    fn name(&self) -> &'static str {
        "extraction"
    }

    fn worker(&self) -> Option<Arc<dyn WorkerStep>> {
        Some(Arc::new(ExtractionWorker { settings: self.settings }))
    }

    fn process(&mut self, conversation: &mut Conversation, found: Option<Found>) -> Result<(), RunError> {
        let Some(findings) = found.and_then(|found| found.downcast::<WorkerFindings>().ok()) else { return Ok(()) };
        let WorkerFindings { extraction, redacted } = *findings;
        for (kind, count) in redacted {
            *self.redacted.entry(kind).or_insert(0) += count;
        }
        match (&mut self.collector, extraction) {
            (Some(collector), Some(found)) => {
                collector.add(conversation, found).map_err(|error| RunError::temporary("extraction evidence", error))
            }
            _ => Ok(()),
        }
    }

    fn prepare_end(&mut self, board: &mut EndBoard) -> Result<(), RunError> {
        board.wants_earlier_currents |= self.collector.is_some();
        Ok(())
    }

    fn end(&mut self, board: &mut EndBoard, emit: &mut dyn Emit) -> Result<(), RunError> {
        let Some(collector) = self.collector.take() else { return Ok(()) };
        let spool_error = |error: io::Error| RunError::Internal(format!("reading back extraction evidence: {error}"));
        let erased = board.erased.clone().unwrap_or_default();
        let mut consolidated = collector.finish(&board.earlier_currents, &erased).map_err(spool_error)?;
        let mut batch_index = 0;
        let emitted = loop {
            let batch = match next_records(&mut consolidated, batch_index) {
                Ok(batch) if batch.is_empty() => break Ok(()),
                Ok(batch) => batch,
                Err(error) => break Err(spool_error(error)),
            };
            batch_index += 1;
            match emit.records(batch) {
                Ok(true) => {}
                Ok(false) => break Ok(()),
                Err(error) => break Err(error),
            }
        };
        self.memories = Some(counts_of(&consolidated));
        board.earlier_links = consolidated.earlier_links().to_vec();
        emitted
    }

    fn report(&mut self, report: &mut StageReport) {
        report.memories = self.memories.take().or(report.memories.take());
        for (kind, count) in std::mem::take(&mut self.redacted) {
            *report.redacted.entry(kind).or_insert(0) += count;
        }
    }
}
