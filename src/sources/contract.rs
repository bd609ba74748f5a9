//! The source contract: what every provider's reader hands the engine and what the engine
//! asks of it. A provider plans an input into [`Stream`]s (a file, how to frame it, who decodes
//! it); the engine frames each stream on one thread and calls [`Decoder::decode`] for each
//! element on the worker pool, in any order. Nothing here knows any provider.

use std::io::Read;
use std::sync::Arc;

use crate::error::RunError;
use crate::hash::{ContentKey, content_key};
use crate::model::{Conversation, Micros, Origin, Provider, Warnings};
use crate::sources::container::Entry;
use crate::sources::json_array::{ArrayFramer, FrameError};
use crate::sources::regroup;

/// Which messages of a branched conversation flow on (`--branches`; a setting of the run like
/// those of [`crate::pipeline::settings`], defined here where the sources use it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BranchPolicy {
    /// Only the thread the user last saw (`current_node` up to the root).
    #[default]
    Active,
    /// Every branch: regenerations and edited prompts too.
    All,
}

/// Options that change how elements decode.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// Which branches flow on.
    pub branches: BranchPolicy,
    /// The export time; the last fallback for records without any time.
    pub exported_at: Micros,
    /// Also keep each message's unmodeled provider fields ([`provider_fields`]), for outputs
    /// that carry them.
    pub keep_provider_fields: bool,
    /// Messages get a dedup key (the dedup stage runs).
    pub dedup_keys: bool,
    /// Messages also get their PAM `content_hash` digest, for outputs that write it (Parquet).
    pub pam_digests: bool,
}

impl DecodeOptions {
    /// What a kept message's `text` is known by, as far as this run needs it.
    pub fn content_key(&self, text: &str) -> ContentKey {
        if !self.dedup_keys && !self.pam_digests {
            return ContentKey::default();
        }
        content_key(text, self.pam_digests)
    }
}

/// A record that could not be used, with where it was and why.
#[derive(Debug, Clone)]
pub struct RecordReject {
    /// File or `archive.zip!entry`.
    pub file: Arc<str>,
    /// Byte offset of the record (the conversation element) in that file.
    pub offset: u64,
    /// Index of the element in the file's array.
    pub index: u64,
    /// Conversation id when it could be read.
    pub conversation_id: Option<String>,
    /// Message id for a message-level reject.
    pub message_id: Option<String>,
    /// What is wrong, for people.
    pub reason: String,
}

impl RecordReject {
    /// A reject of the record at `origin`, in conversation `conversation_id` when known.
    pub fn new(origin: &Origin, conversation_id: Option<&str>, reason: String) -> Self {
        RecordReject {
            file: origin.file.clone(),
            offset: origin.offset,
            index: origin.index,
            conversation_id: conversation_id.map(str::to_owned),
            message_id: None,
            reason,
        }
    }

    /// Marks this reject as concerning one message.
    pub fn with_message(mut self, message_id: &str) -> Self {
        self.message_id = Some(message_id.to_owned());
        self
    }
}

/// One decoded element.
#[derive(Debug)]
pub struct Decoded {
    /// The conversation, with every message classified.
    pub conversation: Conversation,
    /// Messages that could not be read (the rest of the conversation goes on).
    pub rejected_messages: Vec<RecordReject>,
    /// Things worth reporting.
    pub warnings: Warnings,
    /// Conversations the element says a sync retracted (a UMP tombstone of memport's): every
    /// output writes them as retractions of its own.
    pub retractions: Vec<crate::model::RetractedConversation>,
}

/// Turns framed elements of one input into conversations. Shared by all workers.
pub trait Decoder: Send + Sync {
    /// Decodes one element. `Err` rejects the whole element.
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject>;

    /// What a sync knows the element by: the same in two exports that hold the same record.
    /// By default all its bytes; regrouped elements leave out where each record was in the
    /// file, which moves when a later export adds records before it.
    fn fingerprint(&self, bytes: &[u8]) -> crate::hash::Fingerprint {
        crate::hash::fingerprint(bytes)
    }
}

/// A stream whose elements are not plain JSON array elements: the source finds (and, for
/// activity records, regroups) them itself. Implemented by the providers that need it (Copilot
/// CSV rows, Gemini activity records) and by memport's own formats.
pub trait ElementReader: Send + Sync + std::fmt::Debug {
    /// Returns the elements of `entry`, whose bytes `reader` yields. Regrouping readers index
    /// the whole file first (on the calling thread, with CPU work in batches on `pool`).
    ///
    /// # Errors
    /// I/O errors reading the file or writing spill files.
    fn open(&self, entry: &Entry, reader: Box<dyn Read + Send>, pool: &rayon::ThreadPool) -> Result<Elements, RunError>;
}

/// How a stream's bytes become framed elements.
#[derive(Debug, Clone)]
pub enum Framing {
    /// Elements of a top-level JSON array.
    Array,
    /// Elements of the array under one member of a top-level object (Grok).
    Member(&'static str),
    /// The whole document as one element (small side files).
    Whole,
    /// Elements the source finds itself: regrouped activity records, memory-format records.
    Own(Arc<dyn ElementReader>),
}

/// Document-level data of a memory-format input that an output of the same format carries on.
#[derive(Debug, Clone, Default)]
pub struct Carried {
    /// Other systems' `vendor_extensions` of a MIF input, by system name (MIF: "MUST be
    /// preserved on round-trip").
    pub mif_vendor_extensions: Vec<(String, serde_json::Value)>,
    /// The conversations a sync's delta retracted, as the input lists them (AIMEM
    /// `x-memport-retracted`, MIF and AIME extensions, PAM index entries tagged `retracted`):
    /// every output writes them as retractions of its own.
    pub retracted: Vec<crate::model::RetractedConversation>,
}

/// One file of an input, with how to frame it and who decodes its elements.
#[derive(Clone)]
pub struct Stream {
    /// The file.
    pub entry: Entry,
    /// How its bytes become elements.
    pub framing: Framing,
    /// Decoder for its elements.
    pub decoder: Arc<dyn Decoder>,
}

impl Stream {
    /// A stream of `entry`'s elements, framed by `framing` and decoded by `decoder`.
    pub fn new(entry: Entry, framing: Framing, decoder: Arc<dyn Decoder>) -> Self {
        Stream { entry, framing, decoder }
    }

    /// Opens the file and returns its elements.
    ///
    /// # Errors
    /// I/O errors opening (or, for [`Framing::Own`], indexing) the file.
    pub fn elements(&self, pool: &rayon::ThreadPool) -> Result<Elements, RunError> {
        let reader = self.entry.open()?;
        Ok(match &self.framing {
            Framing::Array => Elements::Framed(ArrayFramer::new(reader)),
            Framing::Member(name) => Elements::Framed(ArrayFramer::member_array(reader, name)),
            Framing::Whole => Elements::Framed(ArrayFramer::whole_document(reader)),
            Framing::Own(element_reader) => element_reader.open(&self.entry, reader, pool)?,
        })
    }
}

/// Where a stream's elements come from.
pub enum Elements {
    /// Framed from the JSON text of the file (or of a reader over it).
    Framed(ArrayFramer<Box<dyn Read + Send>>),
    /// Regrouped conversations, assembled one element at a time (no framing needed).
    Grouped(regroup::GroupedElements),
    /// Records of a memory format grouped by conversation, handed out group by group (no
    /// framing needed).
    Records(crate::sources::formats::grouped::GroupingReader),
}

impl Elements {
    /// Appends the next element to `out` and returns its offset and index; `None` at the end.
    ///
    /// # Errors
    /// Framing errors (where the text broke) and I/O errors.
    pub fn next_element_into(&mut self, out: &mut Vec<u8>) -> Result<Option<(u64, u64)>, FrameError> {
        match self {
            Elements::Framed(framer) => framer.next_element_into(out),
            Elements::Grouped(grouped) => grouped.next_element_into(out).map_err(FrameError::Io),
            Elements::Records(records) => records.next_element_into(out),
        }
    }

    /// Skips framed elements, and grouped records, longer than `limit` bytes
    /// ([`ArrayFramer::with_element_limit`]).
    /// Regrouped elements are already cut far smaller than any limit.
    #[must_use]
    pub fn with_element_limit(self, limit: u64) -> Self {
        match self {
            Elements::Framed(framer) => Elements::Framed(framer.with_element_limit(limit)),
            Elements::Records(records) => Elements::Records(records.with_element_limit(limit)),
            grouped @ Elements::Grouped(_) => grouped,
        }
    }

    /// Bytes read (framed) or assembled (grouped) so far, for progress.
    pub fn bytes_consumed(&self) -> u64 {
        match self {
            Elements::Framed(framer) => framer.bytes_consumed(),
            Elements::Grouped(grouped) => grouped.bytes_assembled(),
            Elements::Records(records) => records.bytes_consumed(),
        }
    }
}

/// The zone zoneless times are read in (Copilot CSVs); written and read as its label.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TimeZone {
    /// Seconds east of UTC.
    pub offset_seconds: i64,
    /// How outputs name it (`UTC`, `+02:00`).
    pub label: String,
}

impl TimeZone {
    /// Parses `UTC`, `Z`, `+02:00`, `-0530`, `UTC+1`.
    ///
    /// # Errors
    /// A message for people when the text is not a fixed offset.
    pub fn parse(text: &str) -> Result<TimeZone, String> {
        match crate::timefmt::parse_offset(text) {
            Some(0) => Ok(TimeZone::utc()),
            Some(offset_seconds) => {
                let sign = if offset_seconds < 0 { '-' } else { '+' };
                let magnitude = offset_seconds.abs();
                Ok(TimeZone { offset_seconds, label: format!("{sign}{:02}:{:02}", magnitude / 3600, magnitude % 3600 / 60) })
            }
            None => Err(format!(
                "`{text}` is not a fixed UTC offset; give one like `UTC`, `+02:00` or `-05:00` (zone names such as Europe/Berlin are not supported)"
            )),
        }
    }

    /// UTC.
    pub fn utc() -> TimeZone {
        TimeZone { offset_seconds: 0, label: "UTC".into() }
    }
}

impl std::str::FromStr for TimeZone {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        TimeZone::parse(text)
    }
}

impl TryFrom<String> for TimeZone {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        TimeZone::parse(&text)
    }
}

impl From<TimeZone> for String {
    fn from(zone: TimeZone) -> String {
        zone.label
    }
}

impl std::fmt::Display for TimeZone {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.label)
    }
}

/// Options that shape how sources are read before decoding.
#[derive(Debug, Clone)]
pub struct SourceOptions {
    /// Records without a conversation id further apart than this start a new conversation.
    pub gap: Micros,
    /// The zone of zoneless times.
    pub time_zone: TimeZone,
    /// Largest conversation (or memory-format record) read, in bytes; a larger one is skipped
    /// and rejected (`--max-record-size`). It bounds the memory one record can take.
    pub max_record_bytes: u64,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            gap: 60 * 60 * 1_000_000,
            time_zone: TimeZone::utc(),
            max_record_bytes: crate::sources::json_array::DEFAULT_ELEMENT_LIMIT,
        }
    }
}

/// One input, looked at and ready to read.
pub struct InputPlan {
    /// The path the user gave.
    pub path: String,
    /// Which provider made it.
    pub provider: Provider,
    /// For an input in one of memport's own formats (a PAM store, a MIF document, …), that
    /// format: it names the input in reports instead of `provider`, and its records carry
    /// their own providers.
    pub format: Option<&'static str>,
    /// What the input carries for the outputs beyond its records.
    pub carried: Carried,
    /// Era or layout, for `inspect` and the report (`2023-2025 single file`, `2026 shards`).
    pub layout: String,
    /// Size of the input on disk.
    pub bytes_on_disk: u64,
    /// The files to frame, in order.
    pub streams: Vec<Stream>,
    /// Warnings found while looking (manifest differences).
    pub warnings: Warnings,
    /// Explanations for those warnings, for people.
    pub notes: Vec<String>,
    /// Assets the export contains.
    pub asset_count: usize,
}
