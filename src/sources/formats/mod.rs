//! The memory formats memport writes, read back as inputs: PAM stores, MIF documents, UMP
//! records (JSON, NDJSON, a folder of `.ump.md` files), AIME documents and AIMEM bundles and
//! streams. Detected by content, like the provider exports.
//!
//! Each reader turns records back into canonical conversations and memories. Records memport
//! wrote carry what it needs to rebuild them exactly (provider, conversation and message ids,
//! roles, parent links), so converting one of its outputs again gives the same records; records
//! of other producers map by the format's own fields, and what the canonical model has no place
//! for is named in the format mapping (docs/formats/overview.md). Files whose records are flat lists (MIF, UMP,
//! AIME, AIMEM) are read through [`grouped::GroupingReader`]: consecutive records of one
//! conversation decode together.

pub mod aime;
pub mod aimem;
pub mod aimem_links;
pub mod aimem_order;
pub mod grouped;
pub mod mif;
pub mod pam;
pub mod retractions;
pub mod ump;
pub mod ump_record;

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::error::{ConfigError, RunError};
use crate::hash::ContentKey;
use crate::model::{Conversation, Disposition, Message, Micros, Origin, Provider, Role, SkipReason, Warnings};
use crate::sources::container::{Container, Entry};
use crate::sources::contract::{BranchPolicy, DecodeOptions, Decoded, Decoder, Elements, Framing, InputPlan, RecordReject, Stream};
use crate::spec::detect::{MemoryFormat, file_head, memory_format_kind};
use grouped::GroupingReader;

/// How a memory-format file's records are found (the stream's [`Framing::Own`]).
#[derive(Debug, Clone)]
pub enum RecordLayout {
    /// MIF `memories`, grouped by conversation.
    MifMemories,
    /// A UMP JSON array (or one record), grouped by conversation.
    UmpJson,
    /// UMP NDJSON, grouped by conversation.
    UmpNdjson,
    /// A folder of `.ump.md` files (these entries, sorted by name), grouped by conversation.
    UmpMarkdown(Arc<Vec<Entry>>),
    /// AIME `messages`, grouped by session.
    AimeMessages,
    /// AIME `extensions.memport.memories`, one by one.
    AimeMemories,
    /// AIMEM bundle chunks, joined with their edges, grouped by conversation; `in_order` when
    /// the records are in the order memport writes (one pass joins them).
    AimemBundle {
        /// See above.
        in_order: bool,
    },
    /// AIMEM NDJSON chunk lines, joined with the edge lines, grouped by conversation.
    AimemNdjson {
        /// As for the bundle.
        in_order: bool,
    },
    /// The whole file as one record (a lone PAM conversation file), or a record error saying
    /// why it is not JSON.
    WholeFile,
    /// The conversation files of a PAM store (this folder), by walking its index.
    PamConversations(Arc<Path>),
}

impl crate::sources::contract::ElementReader for RecordLayout {
    fn open(&self, entry: &Entry, reader: Box<dyn Read + Send>, _pool: &rayon::ThreadPool) -> Result<Elements, RunError> {
        let records = match self {
            // A store's records, with their keys; or read once, from the reader given.
            RecordLayout::UmpNdjson => match entry.supplied_records() {
                Some(records) => GroupingReader::new(Box::new(records?), ump::group_key),
                None => ump::ndjson_records(entry, reader),
            },
            // The other grouped readers open the file themselves (AIMEM reads it twice: chunks
            // and edges).
            _ => {
                drop(reader);
                open_records(self, entry)?
            }
        };
        Ok(Elements::Records(records))
    }
}

impl RecordLayout {
    /// The framing of a stream of these records.
    pub fn framing(self) -> Framing {
        Framing::Own(Arc::new(self))
    }
}

/// Opens the grouped record stream of `entry`.
///
/// # Errors
/// I/O errors opening the file.
pub fn open_records(layout: &RecordLayout, entry: &Entry) -> Result<GroupingReader, RunError> {
    Ok(match layout {
        RecordLayout::MifMemories => mif::records(entry)?,
        RecordLayout::UmpJson => ump::json_records(entry)?,
        RecordLayout::UmpNdjson => match entry.supplied_records() {
            Some(records) => GroupingReader::new(Box::new(records?), ump::group_key),
            None => ump::ndjson_records(entry, entry.open()?),
        },
        RecordLayout::UmpMarkdown(files) => ump::markdown_records(files.clone()),
        RecordLayout::AimeMessages => aime::message_records(entry)?,
        RecordLayout::AimeMemories => aime::memory_records(entry)?,
        RecordLayout::AimemBundle { in_order } => aimem::grouped_chunks(entry, false, *in_order)?,
        RecordLayout::AimemNdjson { in_order } => aimem::grouped_chunks(entry, true, *in_order)?,
        RecordLayout::WholeFile => GroupingReader::new(Box::new(grouped::WholeFile::new(entry.clone())), |_| None),
        RecordLayout::PamConversations(folder) => {
            GroupingReader::new(Box::new(pam::IndexedConversations::open(entry, folder.clone())?), |_| None)
        }
    })
}

/// Plans UMP NDJSON records a caller supplies through memory (a store's export), read as a
/// UMP NDJSON file is.
pub fn plan_supplied_ump(input: &crate::sources::supplied::SuppliedInput) -> InputPlan {
    InputPlan {
        path: input.name.clone(),
        provider: Provider::Other("memory-format"),
        format: Some("ump"),
        carried: crate::sources::contract::Carried::default(),
        layout: "UMP 0.1 records, one per line".into(),
        bytes_on_disk: 0,
        streams: vec![Stream::new(Entry::supplied(input), RecordLayout::UmpNdjson.framing(), Arc::new(ump::UmpDecoder))],
        warnings: Warnings::default(),
        notes: Vec::new(),
        asset_count: 0,
    }
}

/// Plans `path` when it holds one of the memory formats, or returns `None`.
///
/// # Errors
/// I/O errors; [`ConfigError::NotAnExport`] for an AIMEM bundle that fails the consumer checks
/// (a consumer must refuse it whole).
pub fn plan_memory_format(path: &Path) -> Result<Option<InputPlan>, RunError> {
    if let Some(plan) = pam::plan_store(path)? {
        return Ok(Some(plan));
    }
    if path.is_dir() {
        return if crate::spec::ump::is_record_folder(path) { ump::plan_markdown_folder(path).map(Some) } else { Ok(None) };
    }
    let Ok(Container::File(_)) = Container::open(path) else { return Ok(None) };
    let Some(format) = memory_format_kind(path) else { return Ok(None) };
    let entries = Container::File(path.to_owned()).entries()?;
    let Some(entry) = entries.into_iter().next() else { return Ok(None) };
    let plan = |format_name: &'static str, layout: String, streams: Vec<(Framing, Arc<dyn Decoder>)>| InputPlan {
        path: path.display().to_string(),
        provider: Provider::Other("memory-format"),
        format: Some(format_name),
        carried: crate::sources::contract::Carried::default(),
        layout,
        bytes_on_disk: entry.size,
        streams: streams.into_iter().map(|(framing, decoder)| Stream::new(entry.clone(), framing, decoder)).collect(),
        warnings: Warnings::default(),
        notes: Vec::new(),
        asset_count: 0,
    };
    Ok(Some(match format {
        // A lone memory-store file without its folder layout: its memories (and any
        // conversation files its index points to beside it) are read as a store.
        MemoryFormat::Pam => match pam::plan_store_file(path)? {
            Some(plan) => plan,
            None => return Ok(None),
        },
        MemoryFormat::Mif => {
            let mut planned = plan(
                "mif",
                "MIF v2 document".into(),
                vec![(RecordLayout::MifMemories.framing(), Arc::new(mif::MifDecoder) as Arc<dyn Decoder>)],
            );
            mif::note_document_members(path, &mut planned)?;
            planned
        }
        MemoryFormat::Ump => {
            let ndjson = ump::is_ndjson(path)?;
            let layout = if ndjson { RecordLayout::UmpNdjson } else { RecordLayout::UmpJson };
            let name = if ndjson { "UMP 0.1 records, one per line" } else { "UMP 0.1 records, JSON" };
            plan("ump", name.into(), vec![(layout.framing(), Arc::new(ump::UmpDecoder) as Arc<dyn Decoder>)])
        }
        MemoryFormat::Aime => {
            let mut planned = plan(
                "aime",
                "AIME v1.0 document".into(),
                vec![
                    (RecordLayout::AimeMessages.framing(), Arc::new(aime::AimeDecoder { memories: false }) as Arc<dyn Decoder>),
                    (RecordLayout::AimeMemories.framing(), Arc::new(aime::AimeDecoder { memories: true }) as Arc<dyn Decoder>),
                ],
            );
            aime::note_retractions(path, &mut planned)?;
            planned
        }
        MemoryFormat::Aimem => {
            let envelope = aimem::check_input(path)?;
            let ndjson = envelope.ndjson;
            let in_order = envelope.in_reader_order;
            let layout = if ndjson { RecordLayout::AimemNdjson { in_order } } else { RecordLayout::AimemBundle { in_order } };
            let name = if ndjson { "AIMEM NDJSON stream" } else { "AIMEM bundle" };
            let decoder =
                Arc::new(aimem::AimemDecoder { producer: envelope.producer.clone(), links: envelope.links.clone() }) as Arc<dyn Decoder>;
            let mut planned = plan("aimem", format!("{name} (producer {})", envelope.producer), vec![(layout.framing(), decoder)]);
            planned.warnings.merge(&envelope.warnings);
            planned.notes.extend(envelope.notes);
            note_retractions(&mut planned, &path.display().to_string(), envelope.retracted, envelope.retractions_unreadable);
            planned
        }
    }))
}

/// Adds the retractions an input lists to its plan, for every output; entries that are not
/// readable retractions are counted (`retraction_unreadable`) and explained.
pub fn note_retractions(plan: &mut InputPlan, display: &str, retracted: Vec<crate::model::RetractedConversation>, unreadable: u64) {
    crate::model::RetractedConversation::merge(&mut plan.carried.retracted, retracted);
    if unreadable > 0 {
        for _ in 0..unreadable {
            plan.warnings.add("retraction_unreadable");
        }
        plan.notes.push(format!(
            "{display}: {unreadable} listed retractions lack a provider, conversation id, retracting run or readable time, so they are not carried"
        ));
    }
}

/// Whether the first MiB of the file at `path` names PAM, AIME, MIF or UMP by their own members.
pub fn names_a_memory_format(path: &Path) -> bool {
    !path.is_dir() && crate::spec::detect::names_a_memory_format(&file_head(path))
}

/// Refuses an input with a reason and what to do.
pub fn refuse(path: &Path, reason: String) -> RunError {
    ConfigError::NotAnExport { path: path.to_owned(), reason }.into()
}

/// The records of one grouped element, parsed, with the origin of its first record.
///
/// # Errors
/// A reject when the element is not a group of JSON records, or stands for a framing problem.
pub fn parse_group(bytes: &[u8], origin: &Origin) -> Result<(Origin, Vec<Value>), RecordReject> {
    let value: Value = serde_json::from_slice(bytes).map_err(|error| RecordReject::new(origin, None, format!("not JSON: {error}")))?;
    let Value::Array(mut items) = value else {
        return Err(RecordReject::new(origin, None, "internal: a grouped element is not an array".into()));
    };
    let offset = items.first().and_then(Value::as_u64).unwrap_or(origin.offset);
    let origin = Origin { file: origin.file.clone(), offset, index: origin.index };
    if !items.is_empty() {
        items.remove(0);
    }
    if let Some(problem) = items.iter().find_map(|item| item["_frame_error"].as_str()) {
        return Err(RecordReject::new(&origin, None, format!("{problem}; the records before it were kept")));
    }
    if let Some(problem) = items.iter().find_map(|item| item["_record_error"].as_str()) {
        return Err(RecordReject::new(&origin, None, problem.to_owned()));
    }
    Ok((origin, items))
}

/// Wraps a conversation as a decoded element.
pub fn decoded(conversation: Conversation, rejected_messages: Vec<RecordReject>, warnings: Warnings) -> Decoded {
    Decoded { conversation, rejected_messages, warnings, retractions: Vec::new() }
}

/// What a reader knows of one message; [`MessageFields::into_message`] applies the policies.
pub struct MessageFields {
    /// Message id.
    pub id: String,
    /// Parent message id.
    pub parent_id: Option<String>,
    /// Role.
    pub role: Role,
    /// Text.
    pub text: String,
    /// Time, when the record has one.
    pub created_at: Option<Micros>,
    /// Model.
    pub model: Option<String>,
    /// Reasoning rather than an answer.
    pub is_thought: bool,
    /// On the active thread.
    pub on_active_branch: bool,
    /// False when the owner marked it as not for export.
    pub exportable: bool,
    /// True when the input withdrew it (UMP `lifecycle.status: tombstoned`).
    pub retracted: bool,
}

impl MessageFields {
    /// A user message with `text` and nothing else known yet.
    pub fn new(id: String, role: Role, text: String) -> Self {
        MessageFields {
            id,
            parent_id: None,
            role,
            text,
            created_at: None,
            model: None,
            is_thought: false,
            on_active_branch: true,
            exportable: true,
            retracted: false,
        }
    }

    /// The canonical message, with its disposition under the run's policies (in the same order
    /// as the provider sources: not exportable, then empty, then off the active branch; a
    /// retracted message before all of them).
    pub fn into_message(self, fallback_time: Micros, options: &DecodeOptions) -> Message {
        let disposition = if self.retracted {
            Disposition::Skip(SkipReason::Retracted)
        } else if !self.exportable {
            Disposition::Skip(SkipReason::NotExportable)
        } else if self.text.is_empty() {
            Disposition::Skip(SkipReason::Empty)
        } else if options.branches == BranchPolicy::Active && !self.on_active_branch {
            Disposition::Skip(SkipReason::OffBranch)
        } else {
            Disposition::Keep
        };
        let content_key = if disposition == Disposition::Keep { options.content_key(&self.text) } else { ContentKey::default() };
        Message {
            id: self.id,
            parent_id: self.parent_id,
            role: self.role,
            author_name: None,
            created_at: self.created_at.unwrap_or(fallback_time),
            time_known: self.created_at.is_some(),
            parts: Vec::new(),
            text: self.text,
            is_thought: self.is_thought,
            provider_fields: None,
            model: self.model,
            status: None,
            on_active_branch: self.on_active_branch,
            content_key,
            disposition,
            discloses: false,
        }
    }
}

/// The role named `name` (`user`, `assistant`, `system`, `tool`; `human`, `ai`, `model` too).
pub fn role_named(name: &str) -> Option<Role> {
    match name.to_ascii_lowercase().as_str() {
        "user" | "human" => Some(Role::User),
        "assistant" | "ai" | "model" | "bot" => Some(Role::Assistant),
        "system" => Some(Role::System),
        "tool" | "function" => Some(Role::Tool),
        _ => None,
    }
}

/// The string member `name` of `value`, owned.
pub fn text_of(value: &Value, name: &str) -> Option<String> {
    value.get(name).and_then(Value::as_str).map(str::to_owned)
}

/// Deletes each dot path of `paths` from `record` (UMP `consent.redact`: no array indices).
pub fn redact(record: &mut Value, paths: &[String]) {
    for path in paths {
        let names: Vec<&str> = path.split('.').collect();
        let Some((last, parents)) = names.split_last() else { continue };
        let parent = parents.iter().try_fold(&mut *record, |at, name| at.get_mut(*name));
        if let Some(object) = parent.and_then(Value::as_object_mut) {
            object.remove(*last);
        }
    }
}

/// A conversation's record ids in its format (MIF UUIDs, UMP URNs, AIME ids, AIMEM URNs) and
/// the message ids they stand for, so parent references resolve to messages: shared by the flat
/// formats.
pub struct ParentLinks {
    ids: rustc_hash::FxHashMap<String, String>,
}

impl ParentLinks {
    /// No links yet.
    pub fn new() -> Self {
        ParentLinks { ids: rustc_hash::FxHashMap::default() }
    }

    /// Records that the record `format_id` is message `message_id`.
    pub fn add(&mut self, format_id: &str, message_id: &str) {
        self.ids.insert(format_id.to_owned(), message_id.to_owned());
    }

    /// The message id of the record `format_id`, when it is in this conversation.
    pub fn message_of(&self, format_id: &str) -> Option<String> {
        self.ids.get(format_id).cloned()
    }
}

impl ParentLinks {
    /// The message a turn's parent reference names, counting a reference that is not an
    /// earlier turn of the conversation (the turn then becomes a root).
    pub fn parent_of(&self, reference: Option<&str>, warnings: &mut Warnings) -> Option<String> {
        let parent = self.message_of(reference?);
        if parent.is_none() {
            warnings.add("parent_not_in_conversation");
        }
        parent
    }
}

/// Adds a decoded turn to its conversation: the conversation starts with its first timed turn,
/// and a turn without a time takes the conversation's (else the export time).
pub fn push_turn(holder: &mut Conversation, fields: MessageFields, options: &DecodeOptions) {
    if holder.created_at.is_none() {
        holder.created_at = fields.created_at;
    }
    let fallback = holder.created_at.unwrap_or(options.exported_at);
    holder.messages.push(fields.into_message(fallback, options));
}

impl Default for ParentLinks {
    fn default() -> Self {
        ParentLinks::new()
    }
}

/// The decoded holder of one standalone memory record (or a reject).
pub fn memory_element(provider: Provider, memory: crate::model::MemoryRecord, origin: Origin) -> Decoded {
    decoded(Conversation::memories_only(provider, memory.id.clone(), origin, vec![memory]), Vec::new(), Warnings::default())
}
