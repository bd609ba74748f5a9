//! Decodes PAM records back into canonical conversations and memories: conversation files (with
//! the memories that travel with them), lone memories, and what memport wrote into
//! `raw_metadata`.

use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::embeddings::EmbeddingIndex;
use crate::hash::ContentKey;
use crate::model::extracted::{EntityKind, EntityRef, Evidence, Extracted, MemoryType, language_named};
use crate::model::slots::{is_personal_slot, slot_named};
use crate::model::{
    Asset, AssetKind, Conversation, Disposition, MemoryKind, MemoryRecord, Message, Micros, Origin, Part, Provider, Role, SkipReason,
    Warnings,
};
use crate::sources::contract::{BranchPolicy, DecodeOptions, Decoded, Decoder, RecordReject};
use crate::timefmt::parse_rfc3339;

/// Where a spooled memory is: byte offset and length.
pub(super) type Place = (u64, usize);

pub(super) struct PamDecoder {
    /// Where the memories that travel with a conversation (one whose file is in the store)
    /// wait in `spool`, by the conversation's id.
    pub(super) attached: FxHashMap<String, Vec<Place>>,
    /// The byte offset of the index entry that owns each conversation's travelling memories.
    pub(super) owners: FxHashMap<String, u64>,
    /// The travelling memories' raw JSON.
    pub(super) spool: Option<std::fs::File>,
    /// The store's `embeddings.json`, when it has one.
    pub(super) embeddings: Option<EmbeddingIndex>,
    /// The input is one conversation file, not a store.
    pub(super) lone_file: bool,
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
            crate::sources::formats::parse_group(bytes, &origin)
                .err()
                .unwrap_or_else(|| RecordReject::new(&origin, None, "not a conversation".into()))
        })?;
        let record = group.1.get().as_bytes();
        if self.lone_file {
            // A lone conversation file: the record is the conversation.
            let (_, mut records) = crate::sources::formats::parse_group(bytes, &origin)?;
            let file = records.pop().unwrap_or(Value::Null);
            if !file["messages"].is_array() {
                return Err(RecordReject::new(&origin, None, "not a PAM conversation: it has no `messages` array".into()));
            }
            return self.conversation(&file, record, &[], None, origin, options);
        }
        // A framing problem of the index, or an unreadable entry, comes as a group of its own.
        if record.starts_with(b"{\"_frame_error\"") || record.starts_with(b"{\"_record_error\"") {
            crate::sources::formats::parse_group(bytes, &origin)?;
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
                let memories = self.memories_of(memories, &derived, None, options.exported_at);
                let provider =
                    memories.first().map_or(Provider::Other("pam"), |memory| Provider::named(memory.id.split('.').next().unwrap_or("pam")));
                let holder = Conversation::memories_only(provider, String::new(), origin, memories);
                Ok(Decoded {
                    conversation: holder,
                    rejected_messages: vec![reject],
                    warnings: Warnings::default(),
                    retractions: Vec::new(),
                })
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
    /// `conversation` is the PAM id and provider id of the conversation it travels with.
    fn memory_record(&self, memory: &Value, conversation: Option<(&str, &str)>, fallback_time: Micros) -> MemoryRecord {
        let mut record = memory_record(memory, conversation, fallback_time);
        record.embedding = self.embeddings.as_ref().and_then(|embeddings| embeddings.of(&record.id));
        record
    }

    /// Whether the store has an embeddings entry for memory `id` that could not be carried.
    fn embedding_dropped(&self, record: &MemoryRecord) -> bool {
        record.embedding.is_none() && self.embeddings.as_ref().is_some_and(|embeddings| embeddings.has(&record.id))
    }

    /// The memories (raw JSON) that travel with a conversation file, in the order of its
    /// `derived_memories` (the store lists memories by id). One that is not JSON is left out
    /// here: the memory list's own pass rejects it, with its place.
    fn memories_of(
        &self,
        places: &[Place],
        derived: &[&str],
        conversation: Option<(&str, &str)>,
        fallback_time: Micros,
    ) -> Vec<MemoryRecord> {
        use std::os::unix::fs::FileExt;
        let read = |&(offset, length): &Place| -> Option<Value> {
            let mut bytes = vec![0; length];
            self.spool.as_ref()?.read_exact_at(&mut bytes, offset).ok()?;
            serde_json::from_slice(&bytes).ok()
        };
        // One without text is rejected by the memory list's own pass.
        let mut records: Vec<MemoryRecord> = places
            .iter()
            .filter_map(read)
            .filter(has_content)
            .map(|memory| self.memory_record(&memory, conversation, fallback_time))
            .collect();
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
        let memories = if travels { Vec::new() } else { vec![self.memory_record(memory, None, options.exported_at)] };
        let conversation = Conversation::memories_only(provider, memory["id"].as_str().unwrap_or_default().to_owned(), origin, memories);
        let mut warnings = Warnings::default();
        for _ in conversation.memories.iter().filter(|memory| self.embedding_dropped(memory)) {
            warnings.add("pam_embedding_not_carried");
        }
        Ok(Decoded { conversation, rejected_messages: Vec::new(), warnings, retractions: Vec::new() })
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
        let memories = travelling
            .map(|memories| self.memories_of(memories, derived, Some((pam_id, id.as_str())), options.exported_at))
            .unwrap_or_default();
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
                memories,
                assumed_time_zone: text(&file["raw_metadata"]["assumed_time_zone"]),
                is_repeat: false,
                memories_only: false,
                origin,
            },
            rejected_messages: Vec::new(),
            warnings: Warnings::default(),
            retractions: Vec::new(),
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

fn memory_record(memory: &Value, conversation: Option<(&str, &str)>, fallback_time: Micros) -> MemoryRecord {
    if let Some(record) = extracted_record(memory, conversation) {
        return record;
    }
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
    // Withdrawn by its store (a sync's retraction, or the owner's): never current again.
    record.retracted_in_input = memory["status"].as_str() == Some("retracted");
    record
}

/// A memory memport extracted (`provenance.extractor` is memport's rules, and `metadata` names a
/// type, slot and language this build knows), read back whole as the run that extracted it
/// made it: its evidence from `metadata.derived_from` (each conversation by its id again), its
/// entities, confidence, times and supersession, so every output writes it as it writes a
/// memory extracted in the same run. `None` for any other memory.
fn extracted_record(memory: &Value, conversation: Option<(&str, &str)>) -> Option<MemoryRecord> {
    let extractor = memory["provenance"]["extractor"].as_str()?;
    if !extractor.starts_with(EXTRACTOR_NAME) {
        return None;
    }
    let metadata = &memory["metadata"];
    let memory_type = MemoryType::named(metadata["memory_type"].as_str()?)?;
    let (slot, _) = slot_named(metadata["slot"].as_str()?)?;
    let language = match metadata["language"].as_str() {
        Some(language) => language_named(language)?,
        None => "",
    };
    let first_seen = memory["temporal"]["created_at"].as_str().and_then(parse_rfc3339)?;
    let last_seen = memory["temporal"]["updated_at"].as_str().and_then(parse_rfc3339).unwrap_or(first_seen);
    let own = Provider::named(memory["provenance"]["platform"].as_str().unwrap_or("pam"));
    let evidence: Vec<Evidence> =
        metadata["derived_from"].as_array().into_iter().flatten().filter_map(|piece| evidence_of(piece, own, conversation)).collect();
    let entities = metadata["entities"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entity| {
            Some(EntityRef {
                id: entity["id"].as_str()?.to_owned(),
                name: entity["name"].as_str()?.to_owned(),
                kind: EntityKind::named(entity["kind"].as_str()?)?,
                first_seen,
                // Set in input order, where the entity is first named ([`crate::stages::read_back`]).
                first_mention: false,
            })
        })
        .collect();
    let retracted = memory["status"].as_str() == Some("retracted");
    let memory_id = |value: &Value| value.as_str().filter(|id| !id.is_empty()).map(str::to_owned);
    let extracted = Extracted {
        memory_type,
        slot,
        value: metadata["value"].as_str().unwrap_or_default().to_owned(),
        language,
        confidence: memory["confidence"]["current"].as_f64().filter(|confidence| confidence.is_finite()).unwrap_or(0.5).clamp(0.0, 1.0)
            as f32,
        evidence_count: metadata["evidence_count"].as_u64().unwrap_or(evidence.len() as u64),
        evidence,
        first_seen,
        last_seen,
        supersedes: memory_id(&metadata["supersedes"]),
        superseded_by: memory_id(&memory["temporal"]["superseded_by"]).or_else(|| memory_id(&metadata["superseded_by"])),
        personal: is_personal_slot(slot),
        entities,
        retracted,
    };
    let labels = metadata["labels"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
    let text = memory["content"].as_str().unwrap_or_default().to_owned();
    let mut record = MemoryRecord::new(own, memory_type.memory_kind(), text, first_seen, labels);
    record.id = memory["id"].as_str().filter(|id| !id.is_empty())?.to_owned();
    record.retracted_in_input = retracted;
    // A kept contact detail is marked not for export, as the owner may mark any memory:
    // counted and not written, as for every memory of the store.
    record.exportable = memory["access"]["exportable"].as_bool().unwrap_or(true);
    record.extracted = Some(Box::new(extracted));
    Some(record)
}

/// The extractor name memport's extracted memories carry (`memport-rules/<version>`), without
/// the version: a store written by another version reads the same.
const EXTRACTOR_NAME: &str = "memport-rules/";

/// One entry of `metadata.derived_from` as evidence. Its `conversation_ref` is the PAM id of
/// the conversation (`<platform>-<id>`, the id as written when it is plain, else hashed): the
/// conversation `conversation` (PAM id, id) the memory travels with gives its id back
/// whatever its form, another's plain id is read from the reference. A hashed one that is not
/// the memory's own conversation names no message this run writes, and is dropped by the
/// read-back stage. Evidence of a provider other than memport's own or the memory's is left
/// out (names are interned for good).
fn evidence_of(piece: &Value, own: Provider, conversation: Option<(&str, &str)>) -> Option<Evidence> {
    let platform = piece["platform"].as_str()?;
    let provider = if platform == own.as_str() { own } else { Provider::own_named(platform)? };
    let reference = piece["conversation_ref"].as_str()?;
    let conversation_id = match conversation {
        Some((pam_id, id)) if pam_id == reference => id,
        _ => reference.strip_prefix(platform)?.strip_prefix('-')?,
    };
    let span = match piece["byte_span"].as_array().map(Vec::as_slice) {
        Some([start, end]) => (usize::try_from(start.as_u64()?).ok()?, usize::try_from(end.as_u64()?).ok()?),
        _ => return None,
    };
    (span.0 <= span.1).then_some(())?;
    Some(Evidence {
        provider,
        conversation_id: conversation_id.to_owned(),
        message_id: piece["message_ref"].as_str()?.to_owned(),
        span,
        text: piece["quote"].as_str()?.to_owned(),
        time: piece["said_at"].as_str().and_then(parse_rfc3339)?,
    })
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
        discloses: false,
    })
}
