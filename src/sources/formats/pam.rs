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
use crate::hash::pam_content_digest;
use crate::model::{
    Asset, AssetKind, Conversation, Disposition, Embedding, MemoryKind, MemoryRecord, Message, Micros, Origin, Part, Provider, Role,
    SkipReason, Warnings,
};
use crate::sources::container::Container;
use crate::sources::formats::RecordLayout;
use crate::sources::formats::grouped::string_at;
use crate::sources::json_array::ArrayFramer;
use crate::sources::{BranchPolicy, DecodeOptions, Decoded, Decoder, Framing, InputPlan, RecordReject, Stream};
use crate::timefmt::parse_rfc3339;

/// Whether the file at `path` starts like a PAM memory store (not a conversation file).
fn is_store_file(path: &Path) -> bool {
    let mut head = Vec::new();
    let Ok(file) = std::fs::File::open(path) else { return false };
    if std::io::Read::read_to_end(&mut std::io::Read::take(file, 1 << 20), &mut head).is_err() {
        return false;
    }
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
    if !is_named_store || !store_path.is_file() || !crate::validate::pam::looks_like_pam(&head_of(&store_path)) {
        return Ok(None);
    }
    plan_store_file(&store_path)
}

fn head_of(path: &Path) -> Vec<u8> {
    let mut head = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = std::io::Read::read_to_end(&mut std::io::Read::take(file, 1 << 20), &mut head);
    }
    head
}

/// Plans a PAM memory-store file under any name: its memories, and the conversation files its
/// index points to in the folder beside it. `None` when it is a PAM file but not a store (a
/// lone conversation or embeddings file).
///
/// # Errors
/// I/O errors reading the store file.
pub fn plan_store_file(store_path: &Path) -> Result<Option<InputPlan>, RunError> {
    if !is_store_file(store_path) {
        return plan_conversation_file(store_path);
    }
    let folder = store_path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let path = if store_path.file_name().is_some_and(|name| name == crate::sinks::pam::STORE_FILE) { folder } else { store_path };
    let store_path = store_path.to_owned();
    let display = store_path.display().to_string();
    let open = || std::fs::File::open(&store_path).map_err(|error| RunError::read(&display, error));
    let mut warnings = Warnings::default();
    let mut notes = Vec::new();

    let mut refs: Vec<(String, String)> = Vec::new();
    // Each conversation's derived memories in the index's order, which the memories (sorted by
    // id in the store) are put back in.
    let mut derived_order: FxHashMap<String, Vec<String>> = FxHashMap::default();
    let mut framer = ArrayFramer::member_array(open()?, "conversations_index");
    while let Some(element) = framer.next_element().map_err(|error| RunError::read(&display, std::io::Error::other(error.to_string())))? {
        let Ok(entry) = serde_json::from_slice::<Value>(&element.bytes) else {
            warnings.add("pam_index_entry_unreadable");
            continue;
        };
        let storage = &entry["storage"];
        if let (Some(id), Some("file"), Some(reference)) = (entry["id"].as_str(), storage["type"].as_str(), storage["ref"].as_str()) {
            refs.push((id.to_owned(), reference.to_owned()));
            let derived = entry["derived_memories"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
            derived_order.insert(id.to_owned(), derived);
        } else if let Some(id) = entry["id"].as_str() {
            // Stored in a database or behind a URI: nothing here to read.
            warnings.add("pam_conversation_not_in_a_file");
            notes.push(format!("{display}: conversation {id} is not stored in a file of the store, so it is not read"));
        }
    }

    let entries = Container::Folder(folder.to_owned()).entries()?;
    let by_name: FxHashMap<&str, &crate::sources::container::Entry> = entries.iter().map(|entry| (entry.name.as_str(), entry)).collect();
    let mut streams = Vec::new();
    let mut listed = HashSet::new();
    // The file each listed conversation is read from: memories travel with the file, so they
    // are found again even when the file's own `id` disagrees with the index.
    let mut file_of: FxHashMap<&str, Arc<str>> = FxHashMap::default();
    for (id, reference) in &refs {
        let inside = Path::new(reference).components().all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
        match by_name.get(reference.trim_start_matches("./")).filter(|_| inside) {
            Some(entry) => {
                listed.insert(id.clone());
                file_of.insert(id.as_str(), entry.display.clone());
                streams.push((*entry).clone());
            }
            None => {
                warnings.add("pam_conversation_file_missing");
                notes.push(format!("{display}: the index lists conversation {id} in {reference}, which is not in the store"));
            }
        }
    }

    // Each conversation's memories as raw JSON (a third of a parsed value's size), in the
    // order of its `derived_memories`.
    let mut attached: FxHashMap<Arc<str>, Vec<RankedMemory>> = FxHashMap::default();
    let ranks: FxHashMap<&str, FxHashMap<&str, usize>> = derived_order
        .iter()
        .map(|(conversation, derived)| (conversation.as_str(), derived.iter().enumerate().map(|(rank, id)| (id.as_str(), rank)).collect()))
        .collect();
    let mut framer = ArrayFramer::member_array(open()?, "memories");
    while let Some(element) = framer.next_element().map_err(|error| RunError::read(&display, std::io::Error::other(error.to_string())))? {
        let conversation = string_at(&element.bytes, &["provenance", "conversation_ref"]);
        if let Some(file) = conversation.as_deref().and_then(|conversation| file_of.get(conversation)) {
            let id = string_at(&element.bytes, &["id"]).unwrap_or_default();
            let rank = conversation.as_deref().and_then(|conversation| ranks.get(conversation)?.get(id.as_str()).copied());
            attached.entry(file.clone()).or_default().push((rank.unwrap_or(usize::MAX), element.bytes.into_boxed_slice()));
        }
    }
    let attached: FxHashMap<Arc<str>, Vec<Box<[u8]>>> = attached
        .into_iter()
        .map(|(file, mut memories)| {
            memories.sort_by_key(|(rank, _)| *rank);
            (file, memories.into_iter().map(|(_, bytes)| bytes).collect())
        })
        .collect();
    let embeddings = EmbeddingIndex::beside(folder, &mut warnings, &mut notes)?;
    let decoder: Arc<dyn Decoder> = Arc::new(PamDecoder { attached, listed, embeddings });
    let store_name = store_path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let store_entry = by_name.get(store_name.as_str()).map(|entry| (*entry).clone());
    let whole_file = || Framing::MemoryFormat(RecordLayout::WholeFile);
    let mut plan_streams: Vec<Stream> = streams.into_iter().map(|entry| Stream::new(entry, whole_file(), decoder.clone())).collect();
    if let Some(entry) = store_entry {
        plan_streams.push(Stream::new(entry, Framing::Member("memories"), decoder));
    }
    let bytes_on_disk = entries.iter().map(|entry| entry.size).sum();
    Ok(Some(InputPlan {
        path: path.display().to_string(),
        provider: Provider::Other("memory-format"),
        format: Some("pam"),
        carried: crate::sources::Carried::default(),
        layout: format!("PAM v1.0 store, {} conversation files", refs.len()),
        bytes_on_disk,
        streams: plan_streams,
        warnings,
        notes,
        asset_count: 0,
    }))
}

/// Plans a lone PAM conversation file (one conversation, no memories), or `None` when the file
/// is another PAM file (embeddings).
fn plan_conversation_file(path: &Path) -> Result<Option<InputPlan>, RunError> {
    let head = head_of(path);
    if !crate::validate::rules::has_member(&head, "messages", b"") {
        return Ok(None);
    }
    let Some(entry) = Container::File(path.to_owned()).entries()?.into_iter().next() else { return Ok(None) };
    let decoder: Arc<dyn Decoder> = Arc::new(PamDecoder { attached: FxHashMap::default(), listed: HashSet::new(), embeddings: None });
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

/// A memory's place in its conversation's `derived_memories`, and its raw JSON.
type RankedMemory = (usize, Box<[u8]>);

struct PamDecoder {
    /// Memories (raw JSON) by the conversation file they travel with.
    attached: FxHashMap<Arc<str>, Vec<Box<[u8]>>>,
    /// Conversations whose files are read (their memories travel with them).
    listed: HashSet<String>,
    /// The store's `embeddings.json`, when it has one.
    embeddings: Option<EmbeddingIndex>,
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
        let dimensions = entry["dimensions"].as_u64()?;
        // A vector that is not as long as it says is not carried (the validator says why).
        if vector.as_ref().is_some_and(|vector| vector.len() as u64 != dimensions) {
            return None;
        }
        Some(Box::new(Embedding {
            id: entry["id"].as_str().map(str::to_owned),
            model: entry["model"].as_str()?.to_owned(),
            dimensions,
            vector,
            created_at: entry["created_at"].as_str().and_then(parse_rfc3339),
        }))
    }
}

impl Decoder for PamDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        // A conversation file comes whole, as a group of one (an element of the memory list is
        // an object).
        let parsed = if bytes.first() == Some(&b'[') {
            super::parse_group(bytes, &origin).map(|(_, mut records)| records.pop().unwrap_or(Value::Null)).map_err(|reject| reject.reason)
        } else {
            serde_json::from_slice(bytes).map_err(|error| format!("not JSON: {error}"))
        };
        let value: Value = match parsed {
            Ok(value) => value,
            Err(reason) => {
                let reject = RecordReject::new(&origin, None, reason);
                // The memories that travel with an unreadable conversation file are still read:
                // the file's reject is listed with them.
                if let Some(memories) = self.attached.get(&origin.file).filter(|memories| !memories.is_empty()) {
                    let memories = self.memories_of(memories, options.exported_at);
                    let provider = memories
                        .first()
                        .map_or(Provider::Other("pam"), |memory| Provider::named(memory.id.split('.').next().unwrap_or("pam")));
                    let mut holder = super::memories_only(provider, String::new(), origin);
                    holder.memories = memories;
                    return Ok(Decoded { conversation: holder, rejected_messages: vec![reject], warnings: Warnings::default() });
                }
                return Err(reject);
            }
        };
        if value.get("messages").is_some() {
            self.conversation(&value, bytes, origin, options)
        } else {
            self.memory(&value, origin, options)
        }
    }
}

impl PamDecoder {
    /// A memory object as a memory record, with its embedding when the store has one.
    fn memory_record(&self, memory: &Value, fallback_time: Micros) -> MemoryRecord {
        let mut record = memory_record(memory, fallback_time);
        record.embedding = self.embeddings.as_ref().and_then(|embeddings| embeddings.of(&record.id));
        record
    }

    /// The memories (raw JSON) that travel with a conversation file. One that is not JSON is
    /// left out here: the memory list's own pass rejects it, with its place.
    fn memories_of(&self, memories: &[Box<[u8]>], fallback_time: Micros) -> Vec<MemoryRecord> {
        memories
            .iter()
            .filter_map(|bytes| serde_json::from_slice::<Value>(bytes).ok())
            .map(|memory| self.memory_record(&memory, fallback_time))
            .collect()
    }

    /// A memory of `memory-store.json`: its own record, unless it travels with its conversation.
    fn memory(&self, memory: &Value, origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        if memory["content"].as_str().is_none() {
            return Err(RecordReject::new(&origin, memory["id"].as_str(), "a memory without `content` text".into()));
        }
        let provider = Provider::named(memory["provenance"]["platform"].as_str().unwrap_or("pam"));
        let travels = memory["provenance"]["conversation_ref"].as_str().is_some_and(|conversation| self.listed.contains(conversation));
        let memories = if travels { Vec::new() } else { vec![self.memory_record(memory, options.exported_at)] };
        let conversation = Conversation {
            provider,
            id: memory["id"].as_str().unwrap_or_default().to_owned(),
            title: None,
            created_at: None,
            updated_at: None,
            model: None,
            system_instruction: None,
            is_archived: false,
            messages: Vec::new(),
            memories,
            assumed_time_zone: None,
            is_repeat: false,
            memories_only: true,
            origin,
        };
        Ok(Decoded { conversation, rejected_messages: Vec::new(), warnings: Warnings::default() })
    }

    fn conversation(&self, file: &Value, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
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
                memories: self
                    .attached
                    .get(&origin.file)
                    .map(|memories| self.memories_of(memories, options.exported_at))
                    .unwrap_or_default(),
                assumed_time_zone: text(&file["raw_metadata"]["assumed_time_zone"]),
                is_repeat: false,
                memories_only: false,
                origin,
            },
            rejected_messages: Vec::new(),
            warnings: Warnings::default(),
        };
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
    let content_hash = if disposition == Disposition::Keep { pam_content_digest(&text) } else { [0; 32] };
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
        content_hash,
        disposition,
    })
}
