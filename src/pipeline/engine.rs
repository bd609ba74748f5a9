//! The stage graph: one reader thread frames inputs in order; rayon workers decode batches in
//! parallel; one ordered collector runs the stages and counts; each sink writes on its own
//! thread. tokio drives the graph and its bounded channels; CPU work never runs on its workers.
//!
//! ```text
//! reader (blocking) ──batch──▶ rayon pool ──oneshot──┐
//!        └──────── ordered queue of pending results ─┴─▶ collector ──Arc batch──▶ sink threads
//! ```
//!
//! The reader enqueues each batch's result slot before the batch is decoded, so the collector
//! receives results in input order whatever order the workers finish in. Every queue is bounded:
//! a slow sink stalls the collector, which stalls the reader, and memory stays flat.

use std::sync::Arc;

use indicatif::ProgressBar;
use tokio::sync::{mpsc, oneshot};

use crate::buffers::BufferPool;
use crate::error::RunError;
use crate::model::{Origin, Provider, RetractedConversation, Warnings};
use crate::pipeline::delta::{DeltaFilter, Fingerprint, UnchangedIndex};
use crate::pipeline::extraction::{self, ExtractionSettings, WorkerFindings};
use crate::pipeline::rejects::{RejectLevel, RejectsWriter};
use crate::pipeline::report::Counts;
use crate::sinks::{Encoded, Sink, SinkSummary};
use crate::sources::{DecodeOptions, Decoded, Decoder, InputPlan, RecordReject};
use crate::stages::Stage;
use crate::stages::extract::consolidate::MemoryCounts;
use std::collections::BTreeMap;

/// A batch is cut when its elements reach this many bytes...
const BATCH_BYTES: usize = 1 << 20;
/// ...or this many elements.
const BATCH_ELEMENTS: usize = 512;
/// Decoded batches a sink may have queued.
const SINK_QUEUE: usize = 6;

/// Framed elements packed into one buffer.
struct RawBatch {
    buffer: Vec<u8>,
    /// (offset in the input, index in the array, start, end in `buffer`).
    elements: Vec<(u64, u64, usize, usize)>,
}

impl RawBatch {
    fn new(mut buffer: Vec<u8>) -> Self {
        // Most batches end just past BATCH_BYTES: reserve once instead of doubling up to it.
        buffer.reserve(BATCH_BYTES + BATCH_BYTES / 4);
        RawBatch { buffer, elements: Vec::with_capacity(64) }
    }
}

/// What the collector tells a sink thread.
enum ToSink {
    /// Write this batch once its encoding is done.
    Batch(oneshot::Receiver<Encoded>),
    /// A sync's retractions, after the last batch.
    Retract(Arc<Vec<RetractedConversation>>),
    /// The run succeeded: complete the output and rename it into place.
    Finish,
}

/// What one framed element became.
enum Outcome {
    /// Decoded, with the fingerprint of its bytes when a sync asked for them.
    Decoded(Box<Decoded>, WorkerFindings, Option<Fingerprint>),
    /// Skipped before decoding: an earlier sync read the same bytes, which became this
    /// conversation.
    Unchanged(Provider, String, Fingerprint),
    Rejected(RecordReject),
    /// The input stopped early (truncated, not an array): what came before was kept.
    InputProblem(RecordReject),
}

/// Totals of a finished run.
pub struct EngineResult {
    /// Record counts.
    pub counts: Counts,
    /// Warning counts.
    pub warnings: Warnings,
    /// What each sink wrote.
    pub outputs: Vec<SinkSummary>,
    /// Reject lines written.
    pub rejects: u64,
    /// Explanations of input problems.
    pub notes: Vec<String>,
    /// How every extracted candidate ended, when extraction was on.
    pub memories: Option<MemoryCounts>,
    /// Secrets masked in transcripts, by kind (`--redact secrets`).
    pub redacted: BTreeMap<&'static str, u64>,
    /// The extracted memories themselves, kept only for a run without sinks (a preview).
    pub previewed: Vec<crate::model::MemoryRecord>,
}

/// Runs the graph over `plans` into `sinks` (with none, the extracted memories come back in
/// the result: a preview).
///
/// # Errors
/// I/O errors reading inputs or writing outputs; nothing else stops a run.
#[expect(
    clippy::too_many_arguments,
    reason = "each argument is a separate part of the run the caller assembles; a struct would only rename them"
)]
pub fn execute(
    plans: Vec<InputPlan>,
    decode_options: DecodeOptions,
    threads: usize,
    element_limit: u64,
    extraction_settings: ExtractionSettings,
    mut stages: Vec<Box<dyn Stage>>,
    sinks: Vec<Box<dyn Sink>>,
    mut rejects: RejectsWriter,
    progress: ProgressBar,
    delta: Option<(&mut dyn DeltaFilter, UnchangedIndex)>,
) -> Result<EngineResult, RunError> {
    // The workers fingerprint every element when a sync runs: to skip the ones it knows, and
    // so it can know the others next time.
    let (mut delta, unchanged) = match delta {
        Some((filter, index)) => (Some(filter), Some(Arc::new(index))),
        None => (None, None),
    };
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|index| format!("memport-decode-{index}"))
            .build()
            .map_err(|error| RunError::Internal(format!("cannot start worker threads: {error}")))?,
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("memport-graph")
        .build()
        .map_err(|error| RunError::Internal(format!("cannot start the runtime: {error}")))?;

    runtime.block_on(async move {
        let (pending_sender, mut pending_receiver) = mpsc::channel::<oneshot::Receiver<Vec<Outcome>>>(threads * 3 + 2);
        let reader = tokio::task::spawn_blocking({
            let pool = pool.clone();
            let progress = progress.clone();
            move || read_inputs(plans, decode_options, element_limit, unchanged, extraction_settings, &pool, &pending_sender, &progress)
        });

        let mut sink_senders = Vec::with_capacity(sinks.len());
        let mut sink_tasks = Vec::with_capacity(sinks.len());
        for mut sink in sinks {
            let (sender, mut receiver) = mpsc::channel::<ToSink>(SINK_QUEUE);
            sink_senders.push((sink.encoder(), sender));
            sink_tasks.push(tokio::task::spawn_blocking(move || -> Result<Option<SinkSummary>, RunError> {
                loop {
                    match receiver.blocking_recv() {
                        Some(ToSink::Batch(slot)) => {
                            let encoded =
                                slot.blocking_recv().map_err(|_| RunError::Internal("an encode worker ended without a result".into()))?;
                            sink.write_batch(encoded)?;
                        }
                        Some(ToSink::Retract(retracted)) => sink.retract(&retracted)?,
                        Some(ToSink::Finish) => return sink.finish().map(Some),
                        // The run failed elsewhere: dropping the sink removes its temporary files,
                        // so no partial output is left looking complete.
                        None => return Ok(None),
                    }
                }
            }));
        }

        let mut counts = Counts::new();
        let mut memory_collector = match extraction_settings.extract {
            Some(options) => Some(extraction::Collector::new(options).map_err(|error| RunError::temporary("extraction evidence", error))?),
            None => None,
        };
        let mut redacted: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut warnings = Warnings::default();
        let mut notes = Vec::new();
        let mut sink_closed = false;
        let mut collector_error: Option<RunError> = None;
        while let Some(slot) = pending_receiver.recv().await {
            let Ok(outcomes) = slot.await else {
                collector_error = Some(RunError::Internal("a decode worker ended without a result".into()));
                break;
            };
            // Stages and reject writes may touch files (a spilled dedup run, the rejects file):
            // tell tokio this worker blocks for the length of one batch.
            let batch = tokio::task::block_in_place(|| {
                let mut batch = Vec::with_capacity(outcomes.len());
                for outcome in outcomes {
                    collect_outcome(
                        outcome,
                        &mut stages,
                        delta.as_deref_mut(),
                        memory_collector.as_mut(),
                        &mut redacted,
                        &mut counts,
                        &mut warnings,
                        &mut notes,
                        &mut rejects,
                        &mut collector_error,
                        &mut batch,
                    );
                }
                batch
            });
            if batch.is_empty() {
                continue;
            }
            sink_closed |= send_to_sinks(batch, &sink_senders, &pool).await;
            if sink_closed || collector_error.is_some() {
                break;
            }
        }
        drop(pending_receiver);
        let reader_result = match reader.await {
            Ok(result) => result,
            Err(join_error) => Err(RunError::Internal(format!("the reader thread failed: {join_error}"))),
        };
        // The extracted memories follow the last conversation, in batches like any other.
        let mut memories = None;
        let mut earlier_links = Vec::new();
        let mut previewed = Vec::new();
        if let Some(collector) = memory_collector.take()
            && reader_result.is_ok()
            && collector_error.is_none()
            && !sink_closed
        {
            let spool_error = |error: std::io::Error| RunError::Internal(format!("reading back extraction evidence: {error}"));
            let earlier = match delta.as_deref_mut().map(|delta| tokio::task::block_in_place(|| delta.earlier_currents())) {
                Some(Err(error)) => {
                    collector_error = Some(error);
                    Vec::new()
                }
                Some(Ok(earlier)) => earlier,
                None => Vec::new(),
            };
            match tokio::task::block_in_place(|| collector.finish(&earlier)) {
                Err(error) => collector_error = Some(spool_error(error)),
                Ok(mut consolidated) => {
                    let mut batch_index = 0;
                    loop {
                        if collector_error.is_some() {
                            break;
                        }
                        let mut batch = match tokio::task::block_in_place(|| extraction::next_records(&mut consolidated, batch_index)) {
                            Ok(batch) if batch.is_empty() => break,
                            Ok(batch) => batch,
                            Err(error) => {
                                collector_error = Some(spool_error(error));
                                break;
                            }
                        };
                        if let Some(delta) = delta.as_deref_mut()
                            && let Err(error) = tokio::task::block_in_place(|| delta.trim_memories(&mut batch))
                        {
                            collector_error = Some(error);
                            break;
                        }
                        batch_index += 1;
                        if sink_senders.is_empty() {
                            previewed.extend(batch.into_iter().flat_map(|record| record.memories));
                            continue;
                        }
                        sink_closed |= send_to_sinks(batch, &sink_senders, &pool).await;
                        if sink_closed {
                            break;
                        }
                    }
                    memories = Some(extraction::counts_of(&consolidated));
                    earlier_links = consolidated.earlier_links().to_vec();
                }
            }
        }
        // A sync's conclusion: memories of earlier runs written again, marked, then the
        // retractions, before the outputs are completed.
        if let Some(delta) = delta.as_deref_mut()
            && reader_result.is_ok()
            && collector_error.is_none()
            && !sink_closed
        {
            match tokio::task::block_in_place(|| delta.conclude(&earlier_links)) {
                Err(error) => collector_error = Some(error),
                Ok(conclusion) => {
                    let origin = Origin { file: "sync".into(), offset: 0, index: 0 };
                    let batch = extraction::memories_only_records(conclusion.memories, &origin);
                    if !batch.is_empty() {
                        sink_closed |= send_to_sinks(batch, &sink_senders, &pool).await;
                    }
                    if !conclusion.retracted.is_empty() {
                        let retracted = Arc::new(conclusion.retracted);
                        for (_, sender) in &sink_senders {
                            sink_closed |= sender.send(ToSink::Retract(retracted.clone())).await.is_err();
                        }
                    }
                }
            }
        }
        // Outputs are completed only when everything before them succeeded.
        let succeeded = reader_result.is_ok() && collector_error.is_none() && !sink_closed;
        for (_, sender) in &sink_senders {
            if succeeded {
                let _ = sender.send(ToSink::Finish).await;
            }
        }
        drop(sink_senders);
        let mut outputs = Vec::with_capacity(sink_tasks.len());
        let mut first_error = None;
        for task in sink_tasks {
            match task.await {
                Ok(Ok(Some(summary))) => outputs.push(summary),
                Ok(Ok(None)) => {}
                Ok(Err(error)) => {
                    first_error.get_or_insert(error);
                }
                Err(join_error) => {
                    first_error.get_or_insert(RunError::Internal(format!("a sink thread failed: {join_error}")));
                }
            }
        }
        // A sink's own error explains a closed channel better than anything else.
        if let Some(error) = first_error {
            return Err(error);
        }
        reader_result?;
        if let Some(error) = collector_error {
            return Err(error);
        }
        for stage in &mut stages {
            warnings.merge(&stage.take_warnings());
        }
        progress.finish_and_clear();
        let rejects_written = rejects.count;
        rejects.finish()?;
        Ok(EngineResult { counts, warnings, outputs, rejects: rejects_written, notes, memories, redacted, previewed })
    })
}

/// Hands `batch` to every sink: encoded on the pool, each sink's slot keeps its input order.
/// Returns whether a sink has stopped taking batches.
async fn send_to_sinks(
    batch: Vec<crate::model::Conversation>,
    sink_senders: &[(Arc<dyn crate::sinks::Encoder>, mpsc::Sender<ToSink>)],
    pool: &Arc<rayon::ThreadPool>,
) -> bool {
    let batch = Arc::new(batch);
    let mut closed = false;
    for (encoder, sender) in sink_senders {
        let (slot_sender, slot) = oneshot::channel();
        let encoder = encoder.clone();
        let batch = batch.clone();
        pool.spawn(move || {
            let _ = slot_sender.send(encoder.encode(&batch));
        });
        if sender.send(ToSink::Batch(slot)).await.is_err() {
            closed = true;
        }
    }
    closed
}

/// Runs the stages on one decoded element (or records its reject) and counts it.
#[allow(clippy::too_many_arguments)]
fn collect_outcome<'filter>(
    outcome: Outcome,
    stages: &mut [Box<dyn Stage>],
    delta: Option<&mut (dyn DeltaFilter + 'filter)>,
    memory_collector: Option<&mut extraction::Collector>,
    redacted: &mut BTreeMap<&'static str, u64>,
    counts: &mut Counts,
    warnings: &mut Warnings,
    notes: &mut Vec<String>,
    rejects: &mut RejectsWriter,
    collector_error: &mut Option<RunError>,
    batch: &mut Vec<crate::model::Conversation>,
) {
    let mut record = |level: RejectLevel, reject: &RecordReject| {
        if let Err(error) = rejects.write(level, reject) {
            collector_error.get_or_insert(error);
        }
    };
    match outcome {
        Outcome::Decoded(decoded, findings, fingerprint) => {
            let Decoded { mut conversation, rejected_messages, warnings: element_warnings } = *decoded;
            for stage in stages.iter_mut() {
                stage.process(&mut conversation);
            }
            let trimmed = match (delta, fingerprint) {
                (Some(delta), Some(fingerprint)) => delta.trim(&mut conversation, fingerprint),
                _ => Ok(()),
            };
            for (kind, count) in findings.redacted {
                *redacted.entry(kind).or_insert(0) += count;
            }
            let extraction_result = match (memory_collector, findings.extraction) {
                (Some(collector), Some(found)) => collector.add(&conversation, found),
                _ => Ok(()),
            };
            counts.add_conversation(&conversation);
            counts.messages_read += rejected_messages.len() as u64;
            counts.messages_rejected += rejected_messages.len() as u64;
            for reject in &rejected_messages {
                record(RejectLevel::Message, reject);
            }
            warnings.merge(&element_warnings);
            batch.push(conversation);
            if let Err(error) = trimmed {
                collector_error.get_or_insert(error);
            }
            if let Err(error) = extraction_result {
                collector_error.get_or_insert(RunError::temporary("extraction evidence", error));
            }
        }
        Outcome::Unchanged(provider, conversation_id, fingerprint) => {
            counts.conversations_read += 1;
            counts.conversations_unchanged += 1;
            if let Some(delta) = delta
                && let Err(error) = delta.unchanged(provider, &conversation_id, fingerprint)
            {
                collector_error.get_or_insert(error);
            }
        }
        Outcome::Rejected(reject) => {
            counts.conversations_read += 1;
            counts.conversations_rejected += 1;
            record(RejectLevel::Conversation, &reject);
        }
        Outcome::InputProblem(reject) => {
            warnings.add("input_ended_early");
            notes.push(format!("{}: {}", reject.file, reject.reason));
            record(RejectLevel::Input, &reject);
        }
    }
}

/// Frames every stream of every input in order, cuts batches and hands them to the pool.
#[allow(clippy::too_many_arguments)]
fn read_inputs(
    plans: Vec<InputPlan>,
    options: DecodeOptions,
    element_limit: u64,
    unchanged: Option<Arc<UnchangedIndex>>,
    extraction_settings: ExtractionSettings,
    pool: &rayon::ThreadPool,
    pending: &mpsc::Sender<oneshot::Receiver<Vec<Outcome>>>,
    progress: &ProgressBar,
) -> Result<(), RunError> {
    let buffers = BufferPool::default();
    let dispatcher = Dispatcher { options: Arc::new(options), extraction_settings, pool, pending, buffers: buffers.clone() };
    for plan in plans {
        let skip = unchanged.as_ref().map(|index| Skip { provider: plan.provider, index: index.clone() });
        for stream in &plan.streams {
            let mut framer = stream.elements(pool)?.with_element_limit(element_limit);
            let display = &stream.entry.display;
            let mut batch = RawBatch::new(buffers.take());
            let mut reported = 0u64;
            loop {
                let element_start = batch.buffer.len();
                match framer.next_element_into(&mut batch.buffer) {
                    Ok(Some((offset, index))) => {
                        batch.elements.push((offset, index, element_start, batch.buffer.len()));
                        if batch.buffer.len() >= BATCH_BYTES || batch.elements.len() >= BATCH_ELEMENTS {
                            let full = std::mem::replace(&mut batch, RawBatch::new(buffers.take()));
                            dispatcher.send(full, display, &stream.decoder, skip.as_ref())?;
                            let consumed = framer.bytes_consumed();
                            progress.inc(consumed - reported);
                            reported = consumed;
                        }
                    }
                    Ok(None) => break,
                    Err(crate::sources::json_array::FrameError::Io(error)) => {
                        return Err(RunError::read(display.to_string(), error));
                    }
                    Err(error) if error.is_element_only() => {
                        // One element too large or too deep to decode: rejected on its own, after
                        // the elements before it (input order), and framing goes on.
                        batch.buffer.truncate(element_start);
                        let complete = std::mem::replace(&mut batch, RawBatch::new(buffers.take()));
                        dispatcher.send(complete, display, &stream.decoder, skip.as_ref())?;
                        let reject = RecordReject {
                            file: display.clone(),
                            offset: error.offset(),
                            index: error.element_index().unwrap_or_default(),
                            conversation_id: None,
                            message_id: None,
                            reason: error.to_string(),
                        };
                        let (sender, receiver) = oneshot::channel();
                        let _ = sender.send(vec![Outcome::Rejected(reject)]);
                        if pending.blocking_send(receiver).is_err() {
                            return Ok(());
                        }
                    }
                    Err(error) => {
                        // Drop the partial element; the complete ones before it are decoded.
                        batch.buffer.truncate(element_start);
                        let complete = std::mem::replace(&mut batch, RawBatch::new(Vec::new()));
                        dispatcher.send(complete, display, &stream.decoder, skip.as_ref())?;
                        let problem = RecordReject {
                            file: display.clone(),
                            offset: error.offset(),
                            index: 0,
                            conversation_id: None,
                            message_id: None,
                            reason: format!("{error}; the records before it were kept"),
                        };
                        let (sender, receiver) = oneshot::channel();
                        let _ = sender.send(vec![Outcome::InputProblem(problem)]);
                        if pending.blocking_send(receiver).is_err() {
                            return Ok(());
                        }
                        break;
                    }
                }
            }
            dispatcher.send(batch, display, &stream.decoder, skip.as_ref())?;
            progress.inc(framer.bytes_consumed().saturating_sub(reported));
        }
    }
    Ok(())
}

/// What a sync's run needs at the workers: the provider of the input being read and the
/// elements earlier runs read.
#[derive(Clone)]
struct Skip {
    provider: Provider,
    index: Arc<UnchangedIndex>,
}

/// Hands framed batches to the decode workers, each with its result slot queued for the
/// collector in input order; what does not change from batch to batch.
struct Dispatcher<'a> {
    options: Arc<DecodeOptions>,
    extraction_settings: ExtractionSettings,
    pool: &'a rayon::ThreadPool,
    pending: &'a mpsc::Sender<oneshot::Receiver<Vec<Outcome>>>,
    buffers: BufferPool,
}

impl Dispatcher<'_> {
    /// Decodes `batch` of `file` with `decoder` on the pool (fingerprinting and skipping the
    /// elements `skip` knows, when a sync runs).
    ///
    /// # Errors
    /// When the collector stopped before the reader.
    fn send(&self, batch: RawBatch, file: &Arc<str>, decoder: &Arc<dyn Decoder>, skip: Option<&Skip>) -> Result<(), RunError> {
        let Dispatcher { options, extraction_settings, pool, pending, buffers } = self;
        let extraction_settings = *extraction_settings;
        if batch.elements.is_empty() {
            buffers.give(batch.buffer);
            return Ok(());
        }
        let (sender, receiver) = oneshot::channel();
        let decoder = decoder.clone();
        let options = options.clone();
        let file = file.clone();
        let buffers = buffers.clone();
        let skip = skip.cloned();
        pool.spawn(move || {
            let outcomes = batch
                .elements
                .iter()
                .map(|&(offset, index, start, end)| {
                    let bytes = &batch.buffer[start..end];
                    let fingerprint = skip.as_ref().map(|_| decoder.fingerprint(bytes));
                    if let (Some(skip), Some(fingerprint)) = (&skip, &fingerprint)
                        && let Some(conversation_id) = skip.index.lookup(skip.provider, fingerprint)
                    {
                        return Outcome::Unchanged(skip.provider, conversation_id.to_owned(), *fingerprint);
                    }
                    let origin = Origin { file: file.clone(), offset, index };
                    match decoder.decode(bytes, origin, &options) {
                        Ok(mut decoded) => {
                            if decoded.conversation.raise_update_time() {
                                decoded.warnings.add("update_time_before_create_time");
                            }
                            let findings = extraction::on_worker(&mut decoded.conversation, &extraction_settings, &options);
                            Outcome::Decoded(Box::new(decoded), findings, fingerprint)
                        }
                        Err(reject) => Outcome::Rejected(reject),
                    }
                })
                .collect();
            buffers.give(batch.buffer);
            // The collector hung up only when the run is stopping after an output error.
            let _ = sender.send(outcomes);
        });
        // Blocks when the pipeline is full: that is the backpressure.
        if pending.blocking_send(receiver).is_err() {
            return Err(RunError::Internal("the collector stopped before the reader".into()));
        }
        Ok(())
    }
}
