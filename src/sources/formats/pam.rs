//! PAM v1.0 stores as input (a store folder, or its `memory-store.json` beside `conversations/`).
//!
//! The conversation files are read in the order of `conversations_index`, each as one element;
//! the memories are read when the input is planned (a store's memories are few next to its
//! messages) so that each memory with a `conversation_ref` travels with its conversation, which
//! keeps `conversation_ref` ⇄ `derived_memories` on the way out. Memories without one follow
//! the conversations. What memport wrote into `raw_metadata` (provider fields, reasoning
//! blocks, unknown content, status, flags) is read back, so a store memport wrote converts to
//! the same records again. Platforms memport has no source for keep their name
//! ([`Provider::named`]); memory types memport has no kind for keep their type as a
//! `pam-type:<type>` label, which a PAM output writes again, and their tags as labels. A memory
//! with `access.exportable: false` is counted and not written.

use std::collections::HashSet;
use std::path::{Component, Path};
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::error::RunError;
use crate::hash::ContentKey;
use crate::model::{
    Asset, AssetKind, Conversation, Disposition, Embedding, MemoryKind, MemoryRecord, Message, Micros, Origin, Part, Provider, Role,
    SkipReason, Warnings,
};
use crate::sources::container::Container;
use crate::sources::formats::grouped::{RecordSource, SourceProblem, string_at};
use crate::sources::formats::{RecordLayout, file_head};
use crate::sources::json_array::ArrayFramer;
use crate::sources::{BranchPolicy, DecodeOptions, Decoded, Decoder, Framing, InputPlan, RecordReject, Stream};
use crate::timefmt::parse_rfc3339;

/// Whether the file at `path` starts like a PAM memory store (not a conversation file).
fn is_store_file(path: &Path) -> bool {
    let head = file_head(path);
    crate::validate::pam::looks_like_pam(&head) && crate::validate::rules::has_member(&head, "memories", b"")
        || crate::validate::rules::has_member(&head, "conversations_index", b"")
}

/// Plans a PAM store folder (or its `memory-store.json`), or `None` when `path` is not one.
///
/// # Errors
/// I/O errors reading the store file.
pub fn plan_store(path: &Path) -> Result<Option<InputPlan>, RunError> {
    let store_path = if path.is_dir() { path.join(crate::sinks::pam::STORE_FILE) } else { path.to_owned() };
    let is_named_store = store_path.file_name().is_some_and(|name| name == crate::sinks::pam::STORE_FILE);
    if !is_named_store || !store_path.is_file() || !crate::validate::pam::looks_like_pam(&file_head(&store_path)) {
        return Ok(None);
    }
    plan_store_file(&store_path)
}

/// Plans a PAM memory-store file under any name: its memories, and the conversation files its
/// index points to in the folder beside it. `None` when it is a PAM file but not a store (a
/// lone conversation or embeddings file).
///
/// Nothing per conversation is kept: the conversation files are read by walking the index as
/// the run goes ([`IndexedConversations`]). What is kept are the memories that travel with a
/// conversation (raw JSON, keyed by its id), so memory grows with the number of such memories
/// only.
///
/// # Errors
/// I/O errors reading the store file.
pub fn plan_store_file(store_path: &Path) -> Result<Option<InputPlan>, RunError> {
    if !is_store_file(store_path) {
        return plan_conversation_file(store_path);
    }
    let folder = store_path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let path = if store_path.file_name().is_some_and(|name| name == crate::sinks::pam::STORE_FILE) { folder } else { store_path };
    let display = store_path.display().to_string();
    let open = || std::fs::File::open(store_path).map(std::io::BufReader::new).map_err(|error| RunError::read(&display, error));
    let frame_error = |error: crate::sources::json_array::FrameError| RunError::read(&display, std::io::Error::other(error.to_string()));
    let mut warnings = Warnings::default();
    let mut notes = Vec::new();

    // The conversations memories name, then those of them whose file is in the store: a memory
    // travels with its conversation only when that conversation is read.
    let mut named = HashSet::new();
    let mut framer = ArrayFramer::member_array(open()?, "memories");
    while let Some(element) = framer.next_element().map_err(frame_error)? {
        if let Some(conversation) = string_at(&element.bytes, &["provenance", "conversation_ref"]) {
            named.insert(conversation);
        }
    }
    // The first index entry of each such conversation whose file is in the store owns its
    // memories: an id listed twice does not carry them twice.
    let mut travelling: FxHashMap<String, u64> = FxHashMap::default();
    let mut conversations = 0u64;
    let mut elsewhere = 0u64;
    let mut framer = ArrayFramer::member_array(open()?, "conversations_index");
    while let Some(element) = framer.next_element().map_err(frame_error)? {
        match index_entry(&element.bytes) {
            IndexEntry::File { id, reference } => {
                conversations += 1;
                if named.contains(&id) && !travelling.contains_key(&id) && resolve(folder, &reference).is_some_and(|file| file.is_file()) {
                    travelling.insert(id, element.offset);
                }
            }
            IndexEntry::Elsewhere => elsewhere += 1,
            // Rejected, with its place, when the index is walked.
            IndexEntry::Unreadable => {}
        }
    }
    if elsewhere > 0 {
        // Stored in a database or behind a URI: nothing here to read.
        for _ in 0..elsewhere {
            warnings.add("pam_conversation_not_in_a_file");
        }
        notes.push(format!("{display}: {elsewhere} conversations are not stored in files of the store, so they are not read"));
    }
    // The travelling memories wait in a temporary file, each conversation keeping where its
    // own are: memory grows by a few bytes per memory, not by its text.
    let spool_error = |error: std::io::Error| RunError::write("temporary file", error);
    let mut spool = std::io::BufWriter::new(tempfile::tempfile().map_err(spool_error)?);
    let mut spooled = 0u64;
    let mut attached: FxHashMap<String, Vec<Place>> = FxHashMap::default();
    let mut framer = ArrayFramer::member_array(open()?, "memories");
    while let Some(element) = framer.next_element().map_err(frame_error)? {
        if let Some(conversation) = string_at(&element.bytes, &["provenance", "conversation_ref"]).filter(|id| travelling.contains_key(id))
        {
            std::io::Write::write_all(&mut spool, &element.bytes).map_err(spool_error)?;
            attached.entry(conversation).or_default().push((spooled, element.bytes.len()));
            spooled += element.bytes.len() as u64;
        }
    }
    let spool = spool.into_inner().map_err(|error| spool_error(error.into_error()))?;
    let embeddings = EmbeddingIndex::beside(folder, &mut warnings, &mut notes)?;
    let decoder: Arc<dyn Decoder> = Arc::new(PamDecoder { attached, owners: travelling, spool: Some(spool), embeddings, lone_file: false });
    let Some(store_entry) = Container::File(store_path.to_owned()).entries()?.into_iter().next() else { return Ok(None) };
    let streams = vec![
        Stream::new(store_entry.clone(), Framing::MemoryFormat(RecordLayout::PamConversations(Arc::from(folder))), decoder.clone()),
        Stream::new(store_entry, Framing::Member("memories"), decoder),
    ];
    Ok(Some(InputPlan {
        path: path.display().to_string(),
        provider: Provider::Other("memory-format"),
        format: Some("pam"),
        carried: crate::sources::Carried::default(),
        layout: format!("PAM v1.0 store, {conversations} conversation files"),
        bytes_on_disk: folder_size(folder),
        streams,
        warnings,
        notes,
        asset_count: 0,
    }))
}

/// What an index entry says about where its conversation is.
enum IndexEntry {
    /// In a file of the store.
    File { id: String, reference: String },
    /// In a database or behind a URI.
    Elsewhere,
    /// Not an index entry memport can read.
    Unreadable,
}

fn index_entry(bytes: &[u8]) -> IndexEntry {
    let Ok(entry) = serde_json::from_slice::<Value>(bytes) else { return IndexEntry::Unreadable };
    let storage = &entry["storage"];
    match (entry["id"].as_str(), storage["type"].as_str(), storage["ref"].as_str()) {
        (Some(id), Some("file"), Some(reference)) => IndexEntry::File { id: id.to_owned(), reference: reference.to_owned() },
        (Some(_), _, _) => IndexEntry::Elsewhere,
        _ => IndexEntry::Unreadable,
    }
}

/// The file a storage reference names inside the store folder, or `None` when it leads out.
fn resolve(folder: &Path, reference: &str) -> Option<std::path::PathBuf> {
    let inside = Path::new(reference).components().all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
    inside.then(|| folder.join(reference))
}

/// The bytes of every file below `folder` (for the report and the progress bar), walked
/// without keeping the list.
fn folder_size(folder: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(folder) else { return 0 };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => folder_size(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |metadata| metadata.len()),
            _ => 0,
        })
        .sum()
}

/// The conversation files of a store, read by walking its `conversations_index` in order. Each
/// becomes one record: `{"index_id": …, "file": …, "derived_memories": […], "conversation": {…}}`,
/// or with `"_file_error"` instead of `"conversation"` when the file is missing, unreadable or
/// not JSON (the decoder rejects it and keeps the memories that travel with it).
pub struct IndexedConversations {
    index: ArrayFramer<std::io::BufReader<std::fs::File>>,
    folder: Arc<Path>,
    display: String,
}

impl IndexedConversations {
    /// Walks the index of the store file `entry` in `folder`.
    ///
    /// # Errors
    /// I/O errors opening the store file.
    pub fn open(entry: &crate::sources::container::Entry, folder: Arc<Path>) -> Result<IndexedConversations, RunError> {
        let file = std::fs::File::open(folder.join(&entry.name)).map_err(|error| RunError::read(entry.display.to_string(), error))?;
        let index = ArrayFramer::member_array(std::io::BufReader::with_capacity(1 << 16, file), "conversations_index");
        Ok(IndexedConversations { index, folder, display: entry.display.to_string() })
    }
}

impl RecordSource for IndexedConversations {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        loop {
            let element = match self.index.next_element() {
                Ok(Some(element)) => element,
                Ok(None) => return Ok(None),
                Err(error) => return Err(SourceProblem { offset: error.offset(), message: format!("{}: {error}", self.display) }),
            };
            let (id, reference) = match index_entry(&element.bytes) {
                IndexEntry::File { id, reference } => (id, reference),
                // Counted when the store was planned.
                IndexEntry::Elsewhere => continue,
                IndexEntry::Unreadable => {
                    let reason = format!(
                        "{}: byte {}: an index entry without an id, or not JSON: its conversation is not read",
                        self.display, element.offset
                    );
                    super::grouped::record_error(out, &reason);
                    return Ok(Some(element.offset));
                }
            };
            let entry: Value = serde_json::from_slice(&element.bytes).unwrap_or_default();
            let derived = entry["derived_memories"].as_array().into_iter().flatten().filter_map(Value::as_str);
            out.extend_from_slice(b"{\"index_id\":");
            crate::jcs::write_string(out, &id);
            out.extend_from_slice(b",\"derived_memories\":");
            crate::jcs::write_string_array(out, derived);
            let file = resolve(&self.folder, &reference);
            out.extend_from_slice(b",\"file\":");
            crate::jcs::write_string(out, &file.as_ref().map_or_else(|| reference.clone(), |file| file.display().to_string()));
            match file.map(|file| read_conversation_file(&file)) {
                Some(Ok(bytes)) => {
                    out.extend_from_slice(b",\"conversation\":");
                    out.extend_from_slice(&bytes);
                }
                Some(Err(reason)) => {
                    out.extend_from_slice(b",\"_file_error\":");
                    crate::jcs::write_string(out, &reason);
                }
                None => {
                    out.extend_from_slice(b",\"_file_error\":");
                    crate::jcs::write_string(out, &format!("the index puts conversation {id} at `{reference}`, outside the store folder"));
                }
            }
            out.push(b'}');
            return Ok(Some(element.offset));
        }
    }
}

/// A conversation file's bytes when they are one JSON value, else why not.
fn read_conversation_file(path: &Path) -> Result<Vec<u8>, String> {
    let too_large = |size: u64| size > crate::sources::json_array::MAX_ELEMENT_BYTES as u64;
    match std::fs::metadata(path) {
        Err(error) => return Err(format!("{}: {error}", path.display())),
        Ok(metadata) if too_large(metadata.len()) => return Err(format!("{}: larger than one conversation may be", path.display())),
        Ok(_) => {}
    }
    let bytes = std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").map(<[u8]>::to_vec).unwrap_or(bytes);
    serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).map_err(|error| format!("{}: not JSON: {error}", path.display()))?;
    Ok(bytes.trim_ascii().to_vec())
}

/// Plans a lone PAM conversation file (one conversation, no memories), or `None` when the file
/// is another PAM file (embeddings).
fn plan_conversation_file(path: &Path) -> Result<Option<InputPlan>, RunError> {
    let head = file_head(path);
    if !crate::validate::rules::has_member(&head, "messages", b"") {
        return Ok(None);
    }
    let Some(entry) = Container::File(path.to_owned()).entries()?.into_iter().next() else { return Ok(None) };
    let decoder: Arc<dyn Decoder> = Arc::new(PamDecoder {
        attached: FxHashMap::default(),
        owners: FxHashMap::default(),
        spool: None,
        embeddings: None,
        lone_file: true,
    });
    Ok(Some(InputPlan {
        path: path.display().to_string(),
        provider: Provider::Other("memory-format"),
        format: Some("pam"),
        carried: crate::sources::Carried::default(),
        layout: "PAM v1.0 conversation file".into(),
        bytes_on_disk: entry.size,
        streams: vec![Stream::new(entry, Framing::MemoryFormat(RecordLayout::WholeFile), decoder)],
        warnings: Warnings::default(),
        notes: Vec::new(),
        asset_count: 0,
    }))
}

/// Where a spooled memory is: byte offset and length.
type Place = (u64, usize);

struct PamDecoder {
    /// Where the memories that travel with a conversation (one whose file is in the store)
    /// wait in `spool`, by the conversation's id.
    attached: FxHashMap<String, Vec<Place>>,
    /// The byte offset of the index entry that owns each conversation's travelling memories.
    owners: FxHashMap<String, u64>,
    /// The travelling memories' raw JSON.
    spool: Option<std::fs::File>,
    /// The store's `embeddings.json`, when it has one.
    embeddings: Option<EmbeddingIndex>,
    /// The input is one conversation file, not a store.
    lone_file: bool,
}

/// Where each memory's entry sits in `embeddings.json`: entries are read when their memory is,
/// so the vectors are never all in memory.
struct EmbeddingIndex {
    file: std::fs::File,
    /// Byte offset and length of the entry, by memory id.
    entries: FxHashMap<String, (u64, usize)>,
}

impl EmbeddingIndex {
    /// Indexes the `embeddings.json` beside a store, when there is one.
    fn beside(folder: &Path, warnings: &mut Warnings, notes: &mut Vec<String>) -> Result<Option<EmbeddingIndex>, RunError> {
        let path = folder.join(crate::sinks::pam::EMBEDDINGS_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        let display = path.display().to_string();
        let open = || std::fs::File::open(&path).map_err(|error| RunError::read(&display, error));
        let mut framer = ArrayFramer::member_array(std::io::BufReader::new(open()?), "embeddings");
        let mut entries = FxHashMap::default();
        loop {
            match framer.next_element() {
                Ok(Some(element)) => match string_at(&element.bytes, &["memory_id"]) {
                    Some(memory) => {
                        entries.insert(memory, (element.offset, element.bytes.len()));
                    }
                    None => warnings.add("pam_embedding_without_memory_id"),
                },
                Ok(None) => break,
                Err(error) => {
                    warnings.add("pam_embeddings_unreadable");
                    notes.push(format!("{display}: {error}; the embeddings after it are not read"));
                    break;
                }
            }
        }
        Ok(Some(EmbeddingIndex { file: open()?, entries }))
    }

    /// The embedding of memory `id`, when the file has a readable one.
    fn of(&self, id: &str) -> Option<Box<Embedding>> {
        use std::os::unix::fs::FileExt;
        let &(offset, length) = self.entries.get(id)?;
        let mut bytes = vec![0; length];
        self.file.read_exact_at(&mut bytes, offset).ok()?;
        let entry: Value = serde_json::from_slice(&bytes).ok()?;
        let vector = entry["vector"].as_array().and_then(|numbers| numbers.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>());
        let dimensions = entry["dimensions"].as_u64().filter(|dimensions| *dimensions >= 1)?;
        // A vector that is not as long as it says, or an entry without its model, is not
        // carried (the validator says why).
        if vector.as_ref().is_none_or(|vector| vector.len() as u64 != dimensions) {
            return None;
        }
        Some(Box::new(Embedding {
            id: entry["id"].as_str().filter(|id| !id.is_empty()).map(str::to_owned),
            model: entry["model"].as_str().filter(|model| !model.is_empty())?.to_owned(),
            dimensions,
            vector,
            created_at: entry["created_at"].as_str().and_then(parse_rfc3339),
        }))
    }
}

impl Decoder for PamDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        // An element of the memory list is an object; a conversation comes as a group of one:
        // an index walk's record, or a lone conversation file.
        if bytes.first() != Some(&b'[') {
            let memory: Value =
                serde_json::from_slice(bytes).map_err(|error| RecordReject::new(&origin, None, format!("not JSON: {error}")))?;
            return self.memory(&memory, origin, options);
        }
        let group: (u64, Box<serde_json::value::RawValue>) = serde_json::from_slice(bytes).map_err(|_| {
            super::parse_group(bytes, &origin).err().unwrap_or_else(|| RecordReject::new(&origin, None, "not a conversation".into()))
        })?;
        let record = group.1.get().as_bytes();
        if self.lone_file {
            // A lone conversation file: the record is the conversation.
            let (_, mut records) = super::parse_group(bytes, &origin)?;
            let file = records.pop().unwrap_or(Value::Null);
            if !file["messages"].is_array() {
                return Err(RecordReject::new(&origin, None, "not a PAM conversation: it has no `messages` array".into()));
            }
            return self.conversation(&file, record, &[], None, origin, options);
        }
        // A framing problem of the index, or an unreadable entry, comes as a group of its own.
        if record.starts_with(b"{\"_frame_error\"") || record.starts_with(b"{\"_record_error\"") {
            super::parse_group(bytes, &origin)?;
        }
        let walked = serde_json::from_slice::<WalkedConversation<'_>>(record).map_err(|error| {
            RecordReject::new(&origin, None, format!("internal: an index walk record memport cannot read back: {error}"))
        })?;
        // Rejects of the conversation name its file; a file that could not be read is named in
        // the reason, at the place of its index entry in the store.
        let origin = match walked.conversation {
            Some(_) => Origin { file: Arc::from(walked.file.as_str()), offset: 0, index: origin.index },
            None => Origin { offset: group.0, ..origin },
        };
        let derived: Vec<&str> = walked.derived_memories.iter().map(String::as_str).collect();
        let owns = self.owners.get(walked.index_id.as_str()) == Some(&group.0);
        let travelling = self.attached.get(walked.index_id.as_str()).filter(|_| owns);
        match (walked.conversation, walked.file_error) {
            (Some(conversation), _) => {
                let file: Value = serde_json::from_str(conversation.get())
                    .map_err(|error| RecordReject::new(&origin, None, format!("not JSON: {error}")))?;
                if !file["messages"].is_array() {
                    return Err(RecordReject::new(
                        &origin,
                        Some(&walked.index_id),
                        "not a PAM conversation: it has no `messages` array".into(),
                    ));
                }
                self.conversation(&file, conversation.get().as_bytes(), &derived, travelling, origin, options)
            }
            (None, reason) => {
                let reject = RecordReject::new(&origin, Some(&walked.index_id), reason.unwrap_or_else(|| "no conversation".into()));
                // The memories that travel with an unreadable conversation file are still read:
                // the file's reject is listed with them.
                let Some(memories) = travelling.filter(|memories| !memories.is_empty()) else { return Err(reject) };
                let memories = self.memories_of(memories, &derived, options.exported_at);
                let provider =
                    memories.first().map_or(Provider::Other("pam"), |memory| Provider::named(memory.id.split('.').next().unwrap_or("pam")));
                let holder = Conversation::memories_only(provider, String::new(), origin, memories);
                Ok(Decoded { conversation: holder, rejected_messages: vec![reject], warnings: Warnings::default() })
            }
        }
    }
}

/// A record of [`IndexedConversations`].
#[derive(serde::Deserialize)]
struct WalkedConversation<'a> {
    index_id: String,
    file: String,
    #[serde(default)]
    derived_memories: Vec<String>,
    #[serde(borrow, default)]
    conversation: Option<&'a serde_json::value::RawValue>,
    #[serde(rename = "_file_error", default)]
    file_error: Option<String>,
}

impl PamDecoder {
    /// A memory object as a memory record, with its embedding when the store has one.
    fn memory_record(&self, memory: &Value, fallback_time: Micros) -> MemoryRecord {
        let mut record = memory_record(memory, fallback_time);
        record.embedding = self.embeddings.as_ref().and_then(|embeddings| embeddings.of(&record.id));
        record
    }

    /// Whether the store has an embeddings entry for memory `id` that could not be carried.
    fn embedding_dropped(&self, record: &MemoryRecord) -> bool {
        record.embedding.is_none() && self.embeddings.as_ref().is_some_and(|embeddings| embeddings.entries.contains_key(&record.id))
    }

    /// The memories (raw JSON) that travel with a conversation file, in the order of its
    /// `derived_memories` (the store lists memories by id). One that is not JSON is left out
    /// here: the memory list's own pass rejects it, with its place.
    fn memories_of(&self, places: &[Place], derived: &[&str], fallback_time: Micros) -> Vec<MemoryRecord> {
        use std::os::unix::fs::FileExt;
        let read = |&(offset, length): &Place| -> Option<Value> {
            let mut bytes = vec![0; length];
            self.spool.as_ref()?.read_exact_at(&mut bytes, offset).ok()?;
            serde_json::from_slice(&bytes).ok()
        };
        // One without text is rejected by the memory list's own pass.
        let mut records: Vec<MemoryRecord> =
            places.iter().filter_map(read).filter(has_content).map(|memory| self.memory_record(&memory, fallback_time)).collect();
        let rank: FxHashMap<&str, usize> = derived.iter().enumerate().map(|(rank, id)| (*id, rank)).collect();
        records.sort_by_key(|memory| rank.get(memory.id.as_str()).copied().unwrap_or(usize::MAX));
        records
    }

    /// A memory of `memory-store.json`: its own record, unless it travels with its conversation.
    fn memory(&self, memory: &Value, origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        if !has_content(memory) {
            return Err(RecordReject::new(&origin, memory["id"].as_str(), "a memory without `content` text".into()));
        }
        let provider = Provider::named(memory["provenance"]["platform"].as_str().unwrap_or("pam"));
        let travels =
            memory["provenance"]["conversation_ref"].as_str().is_some_and(|conversation| self.attached.contains_key(conversation));
        let memories = if travels { Vec::new() } else { vec![self.memory_record(memory, options.exported_at)] };
        let conversation = Conversation::memories_only(provider, memory["id"].as_str().unwrap_or_default().to_owned(), origin, memories);
        let mut warnings = Warnings::default();
        for _ in conversation.memories.iter().filter(|memory| self.embedding_dropped(memory)) {
            warnings.add("pam_embedding_not_carried");
        }
        Ok(Decoded { conversation, rejected_messages: Vec::new(), warnings })
    }

    fn conversation(
        &self,
        file: &Value,
        bytes: &[u8],
        derived: &[&str],
        travelling: Option<&Vec<Place>>,
        origin: Origin,
        options: &DecodeOptions,
    ) -> Result<Decoded, RecordReject> {
        // The provider fields and unknown parts as they are written, not re-serialized (which
        // would reorder their members): a store converts to the same store.
        let raw_file: RawFile<'_> = serde_json::from_slice(bytes).unwrap_or_default();
        let pam_id = file["id"].as_str().unwrap_or_default();
        let provider = Provider::named(file["provider"]["name"].as_str().unwrap_or("pam"));
        let id = file["provider"]["conversation_id"].as_str().unwrap_or(pam_id).to_owned();
        let text = |value: &Value| value.as_str().map(str::to_owned);
        let created_at = file["temporal"]["created_at"].as_str().and_then(parse_rfc3339);
        let mut decoded = Decoded {
            conversation: Conversation {
                provider,
                id,
                title: text(&file["title"]),
                created_at,
                updated_at: file["temporal"]["updated_at"].as_str().and_then(parse_rfc3339),
                model: text(&file["model"]),
                system_instruction: text(&file["system_instruction"]),
                is_archived: file["is_archived"].as_bool().unwrap_or(false),
                messages: Vec::new(),
                memories: travelling.map(|memories| self.memories_of(memories, derived, options.exported_at)).unwrap_or_default(),
                assumed_time_zone: text(&file["raw_metadata"]["assumed_time_zone"]),
                is_repeat: false,
                memories_only: false,
                origin,
            },
            rejected_messages: Vec::new(),
            warnings: Warnings::default(),
        };
        for _ in decoded.conversation.memories.iter().filter(|memory| self.embedding_dropped(memory)) {
            decoded.warnings.add("pam_embedding_not_carried");
        }
        let fallback_time = created_at.unwrap_or(options.exported_at);
        for (position, message) in file["messages"].as_array().into_iter().flatten().enumerate() {
            let raw = raw_file.messages.get(position).and_then(|message| message.raw_metadata.as_ref());
            match read_message(message, raw, fallback_time, options) {
                Ok(message) => decoded.conversation.messages.push(message),
                Err(reason) => decoded.rejected_messages.push(
                    RecordReject::new(&decoded.conversation.origin, Some(&decoded.conversation.id), reason)
                        .with_message(message["id"].as_str().unwrap_or_default()),
                ),
            }
        }
        Ok(decoded)
    }
}

fn memory_record(memory: &Value, fallback_time: Micros) -> MemoryRecord {
    let tags: Vec<&str> = memory["tags"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let pam_type = memory["type"].as_str().unwrap_or("custom");
    let mut labels: Vec<String> =
        memory["metadata"]["labels"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
    let is_own = memory["provenance"]["extractor"].as_str().is_some_and(|extractor| extractor.starts_with("memport/"));
    // memport's own stores name the kind in a tag (and keep another store's type in a label);
    // other stores are mapped by PAM type, which a label keeps, and their tags become labels.
    let own_kind = if is_own { tags.iter().find_map(|tag| MemoryKind::named(tag)) } else { None };
    let kind = match own_kind {
        Some(kind) => kind,
        None => {
            let (kind, type_labels) = MemoryKind::from_foreign_type(pam_type, "pam-type");
            if !matches!(pam_type, "identity" | "instruction" | "context" | "project") {
                labels.extend(type_labels);
            }
            labels.extend(tags.iter().map(|tag| format!("tag:{tag}")));
            kind
        }
    };
    let text = memory["content"].as_str().unwrap_or_default().to_owned();
    let created_at = memory["temporal"]["created_at"].as_str().and_then(parse_rfc3339).unwrap_or(fallback_time);
    let id = memory["id"].as_str().filter(|id| !id.is_empty()).map(str::to_owned);
    let exportable = memory["access"]["exportable"].as_bool().unwrap_or(true);
    let provider = Provider::named(memory["provenance"]["platform"].as_str().unwrap_or("pam"));
    let mut record = MemoryRecord::new(provider, kind, text, created_at, labels);
    if let Some(id) = id {
        record.id = id;
    }
    record.exportable = exportable;
    record
}

/// Whether a memory object has text (PAM requires some; every format writes it).
fn has_content(memory: &Value) -> bool {
    memory["content"].as_str().is_some_and(|content| !content.trim().is_empty())
}

/// The parts of a conversation file kept as raw JSON text.
#[derive(serde::Deserialize, Default)]
struct RawFile<'a> {
    #[serde(borrow, default)]
    messages: Vec<RawMessage<'a>>,
}

#[derive(serde::Deserialize)]
struct RawMessage<'a> {
    #[serde(borrow, default)]
    raw_metadata: Option<RawMetadata<'a>>,
}

#[derive(serde::Deserialize)]
struct RawMetadata<'a> {
    #[serde(borrow, default)]
    provider: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    unmapped_parts: Vec<RawUnmapped<'a>>,
}

#[derive(serde::Deserialize)]
struct RawUnmapped<'a> {
    #[serde(borrow, default)]
    content: Option<&'a serde_json::value::RawValue>,
}

/// A raw JSON fragment as memport embedded it: a JSON string stands for text that was not
/// JSON (or not embeddable), anything else for itself.
fn embedded_text(raw: &serde_json::value::RawValue) -> String {
    let text = raw.get();
    if text.starts_with('"') { serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_owned()) } else { text.to_owned() }
}

fn read_message(
    message: &Value,
    raw_view: Option<&RawMetadata<'_>>,
    fallback_time: Micros,
    options: &DecodeOptions,
) -> Result<Message, String> {
    let id = message["id"].as_str().filter(|id| !id.is_empty()).ok_or("a message without an id")?.to_owned();
    let role = match message["role"].as_str() {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("system") => Role::System,
        Some("tool") => Role::Tool,
        other => return Err(format!("role {other:?} is not user, assistant, system or tool")),
    };
    let raw = &message["raw_metadata"];
    let parsed_time = message["created_at"].as_str().and_then(parse_rfc3339);
    let content = &message["content"];
    let mut parts = Vec::new();
    if content["type"] == "multipart" {
        let attachments: Vec<&Value> = message["attachments"].as_array().into_iter().flatten().collect();
        for part in content["parts"].as_array().into_iter().flatten() {
            let part_text = part["text"].as_str().unwrap_or_default().to_owned();
            let kind = match part["type"].as_str() {
                Some("text") => {
                    parts.push(Part::Text(part_text));
                    continue;
                }
                Some("code") => {
                    parts.push(Part::Code { language: part["language"].as_str().unwrap_or("unknown").to_owned(), text: part_text });
                    continue;
                }
                Some("image") => AssetKind::Image,
                Some("audio") => AssetKind::Audio,
                Some("video") => AssetKind::Video,
                _ => AssetKind::File,
            };
            let reference = part["ref"].as_str().unwrap_or_default();
            let attachment = attachments
                .iter()
                .find(|attachment| attachment["ref"].as_str() == Some(reference) || attachment["provider_id"].as_str() == Some(reference));
            parts.push(Part::Asset(Asset {
                kind,
                pointer: attachment.and_then(|attachment| attachment["provider_id"].as_str()).unwrap_or(reference).to_owned(),
                resolved: attachment.and_then(|attachment| attachment["ref"].as_str()).map(str::to_owned),
                name: attachment.and_then(|attachment| attachment["name"].as_str()).map(str::to_owned),
            }));
        }
    }
    for thinking in raw["thinking"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        parts.push(Part::Thinking(thinking.to_owned()));
    }
    for (position, unmapped) in raw["unmapped_parts"].as_array().into_iter().flatten().enumerate() {
        let as_written = raw_view.and_then(|view| view.unmapped_parts.get(position)).and_then(|part| part.content);
        let json = match (as_written, &unmapped["content"]) {
            (Some(written), _) => embedded_text(written),
            (None, Value::String(text)) => text.clone(),
            (None, other) => other.to_string(),
        };
        parts.push(Part::Raw { content_type: unmapped["content_type"].as_str().unwrap_or_default().to_owned(), json });
    }
    let text = content["text"].as_str().unwrap_or_default().to_owned();
    let on_active_branch = raw["on_active_branch"].as_bool().unwrap_or(true);
    let disposition = if text.is_empty() {
        Disposition::Skip(SkipReason::Empty)
    } else if options.branches == BranchPolicy::Active && !on_active_branch {
        Disposition::Skip(SkipReason::OffBranch)
    } else {
        Disposition::Keep
    };
    let content_key = if disposition == Disposition::Keep { options.content_key(&text) } else { ContentKey::default() };
    let as_written = raw_view.and_then(|view| view.provider).filter(|fields| fields.get() != "null");
    let provider_fields = match (&raw["provider"], as_written) {
        (_, _) if !options.keep_provider_fields => None,
        (Value::Null, _) => None,
        (_, Some(written)) => Some(embedded_text(written).into_boxed_str()),
        (Value::String(fields), None) => Some(fields.clone().into_boxed_str()),
        (fields, None) => Some(fields.to_string().into_boxed_str()),
    };
    Ok(Message {
        id,
        parent_id: message["parent_id"].as_str().map(str::to_owned),
        role,
        author_name: raw["author_name"].as_str().map(str::to_owned),
        created_at: parsed_time.unwrap_or(fallback_time),
        time_known: parsed_time.is_some() && raw["created_at_estimated"] != true,
        parts,
        text,
        is_thought: message["is_thought"].as_bool().unwrap_or(false),
        provider_fields,
        model: message["model"].as_str().map(str::to_owned),
        status: raw["status"].as_str().map(str::to_owned),
        on_active_branch,
        content_key,
        disposition,
    })
}
