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
use crate::model::{Conversation, Origin, Provider, RetractedConversation, Warnings};
use crate::pipeline::rejects::{RejectLevel, RejectsWriter};
use crate::pipeline::report::Counts;
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary};
use crate::sources::{DecodeOptions, Decoded, Decoder, InputPlan, RecordReject};
use crate::stages::extract::consolidate::MemoryCounts;
use crate::stages::{BeforeDecode, Emit, EndBoard, Found, Stage, StageReport, WorkerStep};
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
    /// Decoded, with what each stage's worker step found (by stage index, in stage order).
    Decoded(Box<Decoded>, Vec<(usize, Option<Found>)>),
    /// Skipped before decoding by the worker step of stage `.0` (a sync: an earlier run read
    /// the same bytes).
    Skipped(usize, Provider, Found),
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

/// The stages' worker steps, by stage index.
type WorkerSteps = Arc<Vec<(usize, Arc<dyn WorkerStep>)>>;
/// Where the sinks take their batches: each one's encoder and queue.
type SinkSenders = Vec<(Arc<dyn Encoder>, mpsc::Sender<ToSink>)>;
/// A sink's thread: what it wrote, or nothing when the run failed.
type SinkTask = tokio::task::JoinHandle<Result<Option<SinkSummary>, RunError>>;

/// What a run reads, and how.
pub struct Reading {
    /// The inputs, in order.
    pub plans: Vec<InputPlan>,
    /// How elements decode.
    pub decode: DecodeOptions,
    /// The largest element read (`--max-record-size`).
    pub element_limit: u64,
}

/// Runs the graph over `plans` through `stages` into `sinks` (with none, the memories the
/// stages emit at the end come back in the result: a preview).
///
/// # Errors
/// I/O errors reading inputs or writing outputs, and a stage's own failure; nothing else stops
/// a run.
pub fn execute(
    reading: Reading,
    threads: usize,
    mut stages: Vec<Box<dyn Stage + '_>>,
    sinks: Vec<Box<dyn Sink>>,
    mut rejects: RejectsWriter,
    progress: ProgressBar,
) -> Result<EngineResult, RunError> {
    let mut carried_retractions = Vec::new();
    for plan in &reading.plans {
        RetractedConversation::merge(&mut carried_retractions, plan.carried.retracted.iter().cloned());
    }
    let steps: WorkerSteps = Arc::new(stages.iter().enumerate().filter_map(|(index, stage)| Some((index, stage.worker()?))).collect());
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
            move || read_inputs(reading, steps, &pool, &pending_sender, &progress)
        });
        let (sink_senders, sink_tasks) = start_sinks(sinks);
        let mut collected = Collected { carried_retractions, ..Collected::default() };
        while let Some(slot) = pending_receiver.recv().await {
            let Ok(outcomes) = slot.await else {
                collected.error = Some(RunError::Internal("a decode worker ended without a result".into()));
                break;
            };
            // Stages and reject writes may touch files (a spilled dedup run, the rejects file):
            // tell tokio this worker blocks for the length of one batch.
            let batch = tokio::task::block_in_place(|| collected.take(outcomes, &mut stages, &mut rejects));
            if !batch.is_empty() {
                collected.sink_closed |= send_to_sinks(batch, &sink_senders, &pool).await;
            }
            if collected.sink_closed || collected.error.is_some() {
                break;
            }
        }
        drop(pending_receiver);
        let reader_result = match reader.await {
            Ok(result) => result,
            Err(join_error) => Err(RunError::Internal(format!("the reader thread failed: {join_error}"))),
        };
        let mut report = StageReport::default();
        if reader_result.is_ok() && collected.error.is_none() && !collected.sink_closed {
            let carried = collected.retractions_to_carry();
            collected.counts.retractions_carried = carried.len() as u64;
            match tokio::task::block_in_place(|| end_of_run(&mut stages, &sink_senders, &pool, &mut report.previewed, carried)) {
                Ok(closed) => collected.sink_closed |= closed,
                Err(error) => collected.error = Some(error),
            }
        }
        // Outputs are completed only when everything before them succeeded.
        let succeeded = reader_result.is_ok() && collected.error.is_none() && !collected.sink_closed;
        let outputs = finish_sinks(sink_senders, sink_tasks, succeeded).await?;
        reader_result?;
        let Collected { counts, mut warnings, notes, error, .. } = collected;
        if let Some(error) = error {
            return Err(error);
        }
        for stage in &mut stages {
            warnings.merge(&stage.take_warnings());
            stage.report(&mut report);
        }
        progress.finish_and_clear();
        let rejects_written = rejects.count;
        rejects.finish()?;
        let StageReport { memories, redacted, previewed } = report;
        Ok(EngineResult { counts, warnings, outputs, rejects: rejects_written, notes, memories, redacted, previewed })
    })
}

/// One thread per sink, writing the batches it is sent in order; each sink's encoder and queue.
fn start_sinks(sinks: Vec<Box<dyn Sink>>) -> (SinkSenders, Vec<SinkTask>) {
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
    (sink_senders, sink_tasks)
}

/// Tells every sink to complete its output when the run `succeeded` (otherwise to drop it),
/// and gathers what each wrote.
///
/// # Errors
/// A sink's own error: it explains a closed channel better than anything else.
async fn finish_sinks(sink_senders: SinkSenders, sink_tasks: Vec<SinkTask>, succeeded: bool) -> Result<Vec<SinkSummary>, RunError> {
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
    match first_error {
        Some(error) => Err(error),
        None => Ok(outputs),
    }
}

/// The end of the run (see [`crate::stages`]): the stages from the last to the first prepare,
/// then each emits its records and retractions through the others to every sink; last, the
/// stages' retractions and those the inputs `carried` (a stage's first where both name a
/// conversation) go to every sink at once. Returns whether a sink stopped taking batches.
fn end_of_run(
    stages: &mut [Box<dyn Stage + '_>],
    sink_senders: &SinkSenders,
    pool: &Arc<rayon::ThreadPool>,
    previewed: &mut Vec<crate::model::MemoryRecord>,
    carried: Vec<RetractedConversation>,
) -> Result<bool, RunError> {
    let mut board = EndBoard::default();
    for stage in stages.iter_mut().rev() {
        stage.prepare_end(&mut board)?;
    }
    let runtime = tokio::runtime::Handle::current();
    let mut retracted = Vec::new();
    for index in (0..stages.len()).rev() {
        let (before, rest) = stages.split_at_mut(index);
        let Some((stage, after)) = rest.split_first_mut() else { continue };
        let mut emit =
            ToEverySink { before, after, sink_senders, pool, runtime: &runtime, previewed, retracted: &mut retracted, closed: false };
        stage.end(&mut board, &mut emit)?;
        if emit.closed {
            return Ok(true);
        }
    }
    RetractedConversation::merge(&mut retracted, carried);
    if retracted.is_empty() {
        return Ok(false);
    }
    // A sink takes its retractions once, sorted.
    let retracted = Arc::new(RetractedConversation::sorted(&retracted));
    let mut closed = false;
    for (_, sender) in sink_senders {
        closed |= runtime.block_on(sender.send(ToSink::Retract(retracted.clone()))).is_err();
    }
    Ok(closed)
}

/// What a stage emits at the end goes through the other stages, then to every sink (or, in a
/// run without sinks, its memories into the preview).
struct ToEverySink<'run, 'stage> {
    before: &'run mut [Box<dyn Stage + 'stage>],
    after: &'run mut [Box<dyn Stage + 'stage>],
    sink_senders: &'run SinkSenders,
    pool: &'run Arc<rayon::ThreadPool>,
    runtime: &'run tokio::runtime::Handle,
    previewed: &'run mut Vec<crate::model::MemoryRecord>,
    /// The stages' retractions, sent with the inputs' after the last stage ends.
    retracted: &'run mut Vec<RetractedConversation>,
    closed: bool,
}

impl Emit for ToEverySink<'_, '_> {
    fn records(&mut self, mut records: Vec<Conversation>) -> Result<bool, RunError> {
        for stage in self.before.iter_mut().chain(self.after.iter_mut()) {
            stage.pass_emitted(&mut records)?;
        }
        if self.sink_senders.is_empty() {
            self.previewed.extend(records.into_iter().flat_map(|record| record.memories));
            return Ok(true);
        }
        self.closed |= self.runtime.block_on(send_to_sinks(records, self.sink_senders, self.pool));
        Ok(!self.closed)
    }

    fn records_as_read(&mut self, records: Vec<Conversation>) -> Result<bool, RunError> {
        // A preview shows what the run extracts; these were read, like the memories written
        // with their records, which it does not show either.
        if !self.sink_senders.is_empty() {
            self.closed |= self.runtime.block_on(send_to_sinks(records, self.sink_senders, self.pool));
        }
        Ok(!self.closed)
    }

    fn retractions(&mut self, retracted: Vec<RetractedConversation>) -> Result<bool, RunError> {
        RetractedConversation::merge(self.retracted, retracted);
        Ok(!self.closed)
    }
}

/// Hands `batch` to every sink: encoded on the pool, each sink's slot keeps its input order.
/// Returns whether a sink has stopped taking batches.
async fn send_to_sinks(
    batch: Vec<Conversation>,
    sink_senders: &[(Arc<dyn Encoder>, mpsc::Sender<ToSink>)],
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

/// What the collector has gathered so far.
struct Collected {
    counts: Counts,
    warnings: Warnings,
    /// Explanations of input problems.
    notes: Vec<String>,
    /// The first error of a stage or of the rejects file: the run stops after this batch.
    error: Option<RunError>,
    /// Whether a sink stopped taking batches.
    sink_closed: bool,
    /// Retractions the inputs carry: their plans' lists, then those of decoded elements, in
    /// input order.
    carried_retractions: Vec<RetractedConversation>,
    /// The conversations read (a hash of provider and id each: 8 bytes a conversation), so an
    /// input's retraction of one that this run writes is not carried.
    read_conversations: std::collections::HashSet<u64>,
}

impl Default for Collected {
    fn default() -> Self {
        // Every skip reason is counted, as zero when nothing was skipped for it.
        Collected {
            counts: Counts::new(),
            warnings: Warnings::default(),
            notes: Vec::new(),
            error: None,
            sink_closed: false,
            carried_retractions: Vec::new(),
            read_conversations: std::collections::HashSet::new(),
        }
    }
}

/// What [`Collected::read_conversations`] keeps of a conversation.
fn conversation_key(provider: Provider, id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    (provider.as_str(), id).hash(&mut hasher);
    hasher.finish()
}

impl Collected {
    /// The inputs' retractions to hand to the sinks: each conversation's first, and none of a
    /// conversation this run read (an input holds it, so the outputs do: a retraction beside it
    /// would contradict them), which is counted and explained.
    fn retractions_to_carry(&mut self) -> Vec<RetractedConversation> {
        let mut carried = Vec::new();
        RetractedConversation::merge(&mut carried, std::mem::take(&mut self.carried_retractions));
        let before = carried.len();
        carried.retain(|retraction| !self.read_conversations.contains(&conversation_key(retraction.provider, &retraction.conversation_id)));
        let contradicted = before - carried.len();
        if contradicted > 0 {
            for _ in 0..contradicted {
                self.warnings.add("retraction_of_a_conversation_read");
            }
            self.notes.push(format!(
                "{contradicted} conversations an input lists as retracted are held by an input of the same run, so they are written and not retracted; convert a sync's delta on its own, or apply PAM deltas with `memport merge`"
            ));
        }
        carried
    }

    /// Runs the stages on one batch's decoded elements in order (or records their rejects),
    /// counts them, and returns the conversations for the sinks.
    fn take(&mut self, outcomes: Vec<Outcome>, stages: &mut [Box<dyn Stage + '_>], rejects: &mut RejectsWriter) -> Vec<Conversation> {
        let mut batch = Vec::with_capacity(outcomes.len());
        for outcome in outcomes {
            if let Some(conversation) = self.take_one(outcome, stages, rejects) {
                batch.push(conversation);
            }
        }
        batch
    }

    fn take_one(&mut self, outcome: Outcome, stages: &mut [Box<dyn Stage + '_>], rejects: &mut RejectsWriter) -> Option<Conversation> {
        match outcome {
            Outcome::Decoded(decoded, found) => {
                let Decoded { mut conversation, rejected_messages, warnings: element_warnings, retractions } = *decoded;
                // Each conversation's first retraction is kept at the end of the run.
                self.carried_retractions.extend(retractions);
                let mut found = found.into_iter().peekable();
                for (index, stage) in stages.iter_mut().enumerate() {
                    let its_own = found.next_if(|(stage_index, _)| *stage_index == index).and_then(|(_, found)| found);
                    keep_first_error(&mut self.error, stage.process(&mut conversation, its_own));
                }
                self.counts.add_conversation(&conversation);
                if !conversation.memories_only {
                    self.read_conversations.insert(conversation_key(conversation.provider, &conversation.id));
                }
                self.counts.messages_read += rejected_messages.len() as u64;
                self.counts.messages_rejected += rejected_messages.len() as u64;
                for reject in &rejected_messages {
                    keep_first_error(&mut self.error, rejects.write(RejectLevel::Message, reject));
                }
                self.warnings.merge(&element_warnings);
                Some(conversation)
            }
            Outcome::Skipped(stage, provider, found) => {
                self.counts.conversations_read += 1;
                self.counts.conversations_unchanged += 1;
                if let Some(stage) = stages.get_mut(stage) {
                    keep_first_error(&mut self.error, stage.skipped(provider, found));
                }
                None
            }
            Outcome::Rejected(reject) => {
                self.counts.conversations_read += 1;
                self.counts.conversations_rejected += 1;
                keep_first_error(&mut self.error, rejects.write(RejectLevel::Conversation, &reject));
                None
            }
            Outcome::InputProblem(reject) => {
                self.warnings.add("input_ended_early");
                self.notes.push(format!("{}: {}", reject.file, reject.reason));
                keep_first_error(&mut self.error, rejects.write(RejectLevel::Input, &reject));
                None
            }
        }
    }
}

/// Keeps the first error of the run in `slot`: the collector goes on to the end, so that
/// every record is counted, and the run then fails with the first thing that went wrong.
fn keep_first_error(slot: &mut Option<RunError>, result: Result<(), RunError>) {
    if let Err(error) = result {
        slot.get_or_insert(error);
    }
}

/// Frames every stream of every input in order, cuts batches and hands them to the pool.
#[allow(clippy::too_many_arguments)]
fn read_inputs(
    reading: Reading,
    steps: WorkerSteps,
    pool: &rayon::ThreadPool,
    pending: &mpsc::Sender<oneshot::Receiver<Vec<Outcome>>>,
    progress: &ProgressBar,
) -> Result<(), RunError> {
    let buffers = BufferPool::default();
    let Reading { plans, decode, element_limit } = reading;
    let dispatcher = Dispatcher { options: Arc::new(decode), steps, pool, pending, buffers: buffers.clone() };
    for plan in plans {
        let provider = plan.provider;
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
                            dispatcher.send(full, display, &stream.decoder, provider)?;
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
                        dispatcher.send(complete, display, &stream.decoder, provider)?;
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
                        dispatcher.send(complete, display, &stream.decoder, provider)?;
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
            dispatcher.send(batch, display, &stream.decoder, provider)?;
            progress.inc(framer.bytes_consumed().saturating_sub(reported));
        }
    }
    Ok(())
}

/// Hands framed batches to the decode workers, each with its result slot queued for the
/// collector in input order; what does not change from batch to batch.
struct Dispatcher<'a> {
    options: Arc<DecodeOptions>,
    steps: WorkerSteps,
    pool: &'a rayon::ThreadPool,
    pending: &'a mpsc::Sender<oneshot::Receiver<Vec<Outcome>>>,
    buffers: BufferPool,
}

impl Dispatcher<'_> {
    /// Decodes `batch` of `file` (an input of `provider`) with `decoder` on the pool, each
    /// element through the stages' worker steps.
    ///
    /// # Errors
    /// When the collector stopped before the reader.
    fn send(&self, batch: RawBatch, file: &Arc<str>, decoder: &Arc<dyn Decoder>, provider: Provider) -> Result<(), RunError> {
        let Dispatcher { options, steps, pool, pending, buffers } = self;
        if batch.elements.is_empty() {
            buffers.give(batch.buffer);
            return Ok(());
        }
        let (sender, receiver) = oneshot::channel();
        let decoder = decoder.clone();
        let options = options.clone();
        let file = file.clone();
        let buffers = buffers.clone();
        let steps = steps.clone();
        pool.spawn(move || {
            let mut outcomes: Vec<Outcome> = batch
                .elements
                .iter()
                .map(|&(offset, index, start, end)| {
                    let origin = Origin { file: file.clone(), offset, index };
                    decode_element(&batch.buffer[start..end], origin, provider, &*decoder, &options, &steps)
                })
                .collect();
            buffers.give(batch.buffer);
            // The steps after decoding run over the whole batch in turn rather than between
            // one element's decoding and the next: each keeps its own tables in the core's
            // caches for the batch.
            after_decode(&mut outcomes, &options, &steps);
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

/// One element on a worker: the stages' steps before decoding (any may skip it), then
/// decoding. The steps after decoding run later over the batch ([`after_decode`]).
fn decode_element(
    bytes: &[u8],
    origin: Origin,
    provider: Provider,
    decoder: &dyn Decoder,
    options: &DecodeOptions,
    steps: &WorkerSteps,
) -> Outcome {
    let mut found: Vec<(usize, Option<Found>)> = Vec::with_capacity(steps.len());
    for (stage, step) in steps.iter() {
        match step.before_decode(provider, bytes, decoder) {
            BeforeDecode::Decode(before) => found.push((*stage, before)),
            BeforeDecode::Skip(skipped) => return Outcome::Skipped(*stage, provider, skipped),
        }
    }
    match decoder.decode(bytes, origin, options) {
        Ok(mut decoded) => {
            if decoded.conversation.raise_update_time() {
                decoded.warnings.add("update_time_before_create_time");
            }
            Outcome::Decoded(Box::new(decoded), found)
        }
        Err(reject) => Outcome::Rejected(reject),
    }
}

/// Each stage's step after decoding, over every conversation of a decoded batch, one stage
/// after the other.
fn after_decode(outcomes: &mut [Outcome], options: &DecodeOptions, steps: &WorkerSteps) {
    for (position, (_, step)) in steps.iter().enumerate() {
        for outcome in outcomes.iter_mut() {
            if let Outcome::Decoded(decoded, found) = outcome
                && let Some((_, slot)) = found.get_mut(position)
            {
                *slot = step.after_decode(&mut decoded.conversation, options, slot.take());
            }
        }
    }
}
