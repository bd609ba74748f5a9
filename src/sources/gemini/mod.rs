//! Gemini Apps activity from Google Takeout (provider-formats.md §3): `MyActivity.json`, found by
//! content inside a multi-product Takeout under any (localized) folder name. Records are listed
//! newest first with no conversation ids, so they are spilled and regrouped: by the conversation
//! URL in `details`/`titleUrl` where present, else by a time gap (`--gap-minutes`); a record
//! without a URL right after a conversation's record (feedback on that answer) joins it.

pub mod dates;
pub mod html;
pub mod keys;
pub mod normalize;
pub mod raw;
pub mod verbs;

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, mpsc};

use crate::error::RunError;
use crate::model::{Micros, Origin};
use crate::sources::container::Entry;
use crate::sources::contract::{
    DecodeOptions, Decoded, Decoder, ElementReader, Elements, Framing, InputPlan, RecordReject, SourceOptions, Stream,
};
use crate::sources::json_array::{ArrayFramer, FrameError};
use crate::sources::regroup::{GroupKey, GroupedElements, Regrouper, push_binary_row, push_problem_row};
use keys::{keys_of_members, read_keys};

/// The conversation id in a Gemini or Bard conversation URL
/// (`https://gemini.google.com/app/<id>`, `…/app/c/<id>`, `https://bard.google.com/chat/<id>`).
pub fn conversation_id_from_url(url: &str) -> Option<String> {
    let rest = url.split_once("gemini.google.com/").or_else(|| url.split_once("bard.google.com/"))?.1;
    let path = rest.split(['?', '#']).next().unwrap_or(rest);
    let id = path.trim_end_matches('/').rsplit('/').next()?;
    let is_conversation = path.starts_with("app/") || path.starts_with("chat/") || path.starts_with("gem/");
    (is_conversation && !id.is_empty() && id != "app" && id != "chat").then(|| id.to_owned())
}

/// Bytes of records (or of their key members) framed before their keys are read on the worker
/// pool.
const KEY_BATCH_BYTES: usize = 4 << 20;
/// Records framed before their keys are read, when only their key members are kept.
const KEY_BATCH_RECORDS: usize = 2048;
/// Batches whose keys are being read at once.
const KEY_BATCHES_IN_FLIGHT: usize = 4;

/// One record framed on the reader thread.
struct FramedRecord {
    /// Where the record starts in the input, and its position in the array.
    offset: u64,
    index: u64,
    /// The record's length in the input.
    length: usize,
    /// Where its bytes (or key members) are in the batch.
    start: usize,
    end: usize,
}

/// Records framed on the reader thread, waiting for their keys.
struct FramedRecords {
    /// The records' bytes, or only their key members when records are read back from the
    /// input ([`FramedRecords::members_only`]).
    bytes: Vec<u8>,
    records: Vec<FramedRecord>,
    members_only: bool,
}

impl FramedRecords {
    fn new(members_only: bool) -> Self {
        // A batch ends just past KEY_BATCH_BYTES: reserving once saves growing it by copies.
        let capacity = if members_only { KEY_BATCH_RECORDS * 256 } else { KEY_BATCH_BYTES + KEY_BATCH_BYTES / 4 };
        FramedRecords { bytes: Vec::with_capacity(capacity), records: Vec::new(), members_only }
    }

    fn is_full(&self) -> bool {
        self.bytes.len() >= KEY_BATCH_BYTES || (self.members_only && self.records.len() >= KEY_BATCH_RECORDS)
    }
}

/// What regrouping needs of one record: its group and time.
type RecordKeys = (GroupKey, Option<Micros>);

/// Frames the records of a `MyActivity.json` and regroups them into conversations. The
/// reader thread only frames; each record's keys (time, conversation URL) are read in batches
/// on `pool`, and the batches are indexed in file order.
///
/// When the input is an unpacked file (`input_file`), records are read back from it by offset
/// later, so framing keeps only their key members (`time`, `titleUrl`, `details`): nothing else
/// is copied, and no second walk over each record is needed to find them.
///
/// # Errors
/// I/O errors reading the file or writing the spill files. A truncated or broken file keeps the
/// records before the break and reports it as a record the decoder rejects.
pub fn regroup(
    reader: Box<dyn Read + Send>,
    display: &str,
    options: &SourceOptions,
    input_file: Option<File>,
    pool: &rayon::ThreadPool,
) -> Result<GroupedElements, RunError> {
    // The pass is what the decoding waits for: reading the input beside it shortens it.
    let mut framer = ArrayFramer::reading_ahead(reader).map_err(|error| RunError::read(display, error))?;
    let mut regrouper = Regrouper::new(display, options.gap)?.attach_untitled();
    // An unpacked file is read back by offset, so its records are never copied to the spill.
    let members_only = input_file.is_some();
    if let Some(file) = input_file {
        regrouper = regrouper.read_back_from(file);
        framer = framer.keeping_members(&keys::KEY_MEMBERS);
    }
    let mut in_flight: VecDeque<mpsc::Receiver<(FramedRecords, Vec<RecordKeys>)>> = VecDeque::new();
    let mut spare: Vec<FramedRecords> = Vec::new();
    let mut batch = FramedRecords::new(members_only);
    let mut row = Vec::new();
    let mut broken = None;
    // Records too large or too deep to read, skipped by the framer: rejected at the end.
    let mut skipped = Vec::new();
    loop {
        let start = batch.bytes.len();
        match framer.next_element_into(&mut batch.bytes) {
            Ok(Some((offset, index))) => {
                // Records are far below 2^64 bytes; the regrouper refuses those over 4 GiB.
                let length = usize::try_from(framer.bytes_consumed() - offset).unwrap_or(usize::MAX);
                batch.records.push(FramedRecord { offset, index, length, start, end: batch.bytes.len() });
            }
            Ok(None) => break,
            Err(FrameError::Io(error)) => return Err(RunError::read(display, error)),
            Err(error) if error.is_element_only() => {
                batch.bytes.truncate(start);
                skipped.push(error);
            }
            Err(error) => {
                batch.bytes.truncate(start);
                broken = Some(error);
                break;
            }
        }
        if batch.is_full() {
            let full = std::mem::replace(&mut batch, spare.pop().unwrap_or_else(|| FramedRecords::new(members_only)));
            in_flight.push_back(read_keys_on(pool, full));
            if in_flight.len() >= KEY_BATCHES_IN_FLIGHT
                && let Some(oldest) = in_flight.pop_front()
            {
                index_batch(&mut regrouper, oldest, &mut row, &mut spare)?;
            }
        }
    }
    in_flight.push_back(read_keys_on(pool, batch));
    while let Some(receiver) = in_flight.pop_front() {
        index_batch(&mut regrouper, receiver, &mut row, &mut spare)?;
    }
    for error in skipped {
        // Carried to the decoder as a row it rejects on its own, like a broken file's end.
        row.clear();
        push_problem_row(&mut row, error.offset(), error.element_index().unwrap_or_default(), &error.to_string());
        regrouper.push(&GroupKey::Title(String::new()), None, &row)?;
    }
    if let Some(error) = broken {
        // Carried to the decoder as a row it rejects, with where the file broke.
        row.clear();
        push_problem_row(&mut row, error.offset(), 0, &format!("{error}; the records before it were kept"));
        regrouper.push(&GroupKey::Title(String::new()), None, &row)?;
    }
    regrouper.finish()
}

/// Reads the keys of `batch`'s records on `pool`.
fn read_keys_on(pool: &rayon::ThreadPool, batch: FramedRecords) -> mpsc::Receiver<(FramedRecords, Vec<RecordKeys>)> {
    let (sender, receiver) = mpsc::sync_channel(1);
    pool.spawn(move || {
        let read = if batch.members_only { keys_of_members } else { read_keys };
        let keys = batch.records.iter().map(|record| read(&batch.bytes[record.start..record.end])).collect();
        // The reader hung up only when the run is stopping.
        let _ = sender.send((batch, keys));
    });
    receiver
}

/// Indexes one batch of records, in file order, once its keys are read.
fn index_batch(
    regrouper: &mut Regrouper,
    receiver: mpsc::Receiver<(FramedRecords, Vec<RecordKeys>)>,
    row: &mut Vec<u8>,
    spare: &mut Vec<FramedRecords>,
) -> Result<(), RunError> {
    let (mut batch, keys) = receiver.recv().map_err(|_| RunError::Internal("a worker stopped while reading activity keys".into()))?;
    for (record, (key, time)) in batch.records.iter().zip(&keys) {
        // A batch of key members only is one whose records are read back from the input.
        if batch.members_only {
            regrouper.push_input_record(key, *time, (record.offset, record.index), record.length)?;
            continue;
        }
        row.clear();
        push_binary_row(row, record.offset, record.index, &batch.bytes[record.start..record.end]);
        regrouper.push(key, *time, row)?;
    }
    batch.bytes.clear();
    batch.records.clear();
    spare.push(batch);
    Ok(())
}

/// Files a Takeout carries beside the activity (attachments), by base name.
#[derive(Debug, Default)]
pub struct TakeoutFiles {
    by_name: BTreeMap<String, String>,
}

impl TakeoutFiles {
    /// Indexes the entries in the same folder as `activity` (where Takeout puts attachments).
    pub fn beside(activity: &Entry, entries: &[Entry]) -> Self {
        let folder = activity.name.rsplit_once('/').map_or("", |(folder, _)| folder);
        let by_name = entries
            .iter()
            .filter(|entry| entry.name.rsplit_once('/').map_or("", |(parent, _)| parent) == folder && entry.name != activity.name)
            .map(|entry| (entry.base_name().to_owned(), entry.name.clone()))
            .collect();
        TakeoutFiles { by_name }
    }

    /// The export path of file `name`, when the Takeout has it.
    pub fn resolve(&self, name: &str) -> Option<String> {
        self.by_name.get(name).cloned()
    }
}

/// Plans Gemini Apps activity of a Takeout: `MyActivity.json` files, or the `MyActivity.html`
/// pages when there is no JSON (the user picks one format in Takeout; if both are there, JSON,
/// with UTC times to the millisecond, is read and the HTML copy is not).
pub fn plan(
    plan: &mut InputPlan,
    path: &Path,
    container_kind: &str,
    entries: &[Entry],
    json_files: Vec<Entry>,
    html_files: Vec<Entry>,
    options: &SourceOptions,
) {
    let html = json_files.is_empty();
    if !html && !html_files.is_empty() {
        plan.warnings.add("gemini_html_ignored");
        plan.notes.push(format!("{}: Gemini activity is read from the JSON file; the HTML copy is not read", path.display()));
    }
    plan.layout = format!("{container_kind}, Google Takeout My Activity (Gemini Apps, {})", if html { "HTML" } else { "JSON" });
    for entry in if html { html_files } else { json_files } {
        let decoder = Arc::new(GeminiDecoder { files: TakeoutFiles::beside(&entry, entries) });
        let framing = Framing::Own(Arc::new(ActivityRegrouping { html, options: options.clone() }));
        plan.streams.push(Stream::new(entry, framing, decoder));
    }
}

/// The records of a `MyActivity.json` or `MyActivity.html`, regrouped into conversations.
#[derive(Debug)]
struct ActivityRegrouping {
    html: bool,
    options: SourceOptions,
}

impl ElementReader for ActivityRegrouping {
    fn open(&self, entry: &Entry, reader: Box<dyn Read + Send>, pool: &rayon::ThreadPool) -> Result<Elements, RunError> {
        Ok(Elements::Grouped(if self.html {
            html::regroup(reader, &entry.display, &self.options)?
        } else {
            regroup(reader, &entry.display, &self.options, entry.reopen_on_disk(), pool)?
        }))
    }
}

/// Decodes regrouped Gemini conversations.
pub struct GeminiDecoder {
    /// Attachments present in the Takeout.
    pub files: TakeoutFiles,
}

impl Decoder for GeminiDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        normalize::decode_conversation(bytes, origin, &self.files, options)
    }

    fn fingerprint(&self, bytes: &[u8]) -> crate::hash::Fingerprint {
        crate::sources::regroup::rows_fingerprint(bytes, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversation_ids_from_urls() {
        assert_eq!(conversation_id_from_url("https://gemini.google.com/app/4f2a9c1b"), Some("4f2a9c1b".into()));
        assert_eq!(conversation_id_from_url("https://gemini.google.com/app/c/conv-001"), Some("conv-001".into()));
        assert_eq!(conversation_id_from_url("https://bard.google.com/chat/abc?hl=de"), Some("abc".into()));
        assert_eq!(conversation_id_from_url("https://gemini.google.com/app"), None);
        assert_eq!(conversation_id_from_url("https://myactivity.google.com/product/gemini"), None);
    }
}
