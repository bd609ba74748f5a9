//! MIF v2 documents as input (memory-formats.md §3): `conversation` memories become messages,
//! grouped by session; every other memory becomes a memory record.
//!
//! memport's own documents name the provider, conversation, message, role and parent of each
//! turn (tags, `metadata`, `source`, `parent_id`), so they convert back to the same records.
//! Other producers' memories keep their type as a `mif-type:<type>` label (unless it names one
//! of memport's memory kinds) and their tags as labels. The document's `vendor_extensions` of
//! other systems are carried to a MIF output (the spec's MUST on round trips); a
//! `knowledge_graph` is not carried and is counted as a warning.

use std::path::Path;

use serde_json::Value;

use crate::error::RunError;
use crate::model::{Conversation, Embedding, MemoryKind, MemoryRecord, Origin, Provider, Role, Warnings};
use crate::sources::container::Entry;
use crate::sources::contract::{DecodeOptions, Decoded, Decoder, InputPlan, RecordReject};
use crate::sources::formats::grouped::{ArrayRecords, GroupingReader, string_at};
use crate::sources::formats::note_retractions;
use crate::sources::formats::retractions;
use crate::sources::formats::{MessageFields, ParentLinks, decoded, parse_group, push_turn, role_named, text_of};
use crate::sources::json_array::ArrayFramer;
use crate::timefmt::parse_rfc3339;

/// The grouped `memories` of a MIF document.
///
/// # Errors
/// I/O errors opening it.
pub fn records(entry: &Entry) -> Result<GroupingReader, RunError> {
    let framer = ArrayFramer::member_array(entry.open()?, "memories");
    Ok(GroupingReader::new(Box::new(ArrayRecords::new(framer, &entry.display)), group_key))
}

/// Turns of one conversation share a key; other memories stand alone.
fn group_key(record: &[u8]) -> Option<String> {
    if string_at(record, &["memory_type"]).as_deref() != Some("conversation") {
        return None;
    }
    let session = string_at(record, &["metadata", "conversation_id"]).or_else(|| string_at(record, &["source", "session_id"]))?;
    let agent = string_at(record, &["source", "agent"]).or_else(|| string_at(record, &["source", "agent_name"])).unwrap_or_default();
    Some(format!("{agent}\0{session}"))
}

/// Reads the document's members other than `memories` that an output carries on: other
/// systems' `vendor_extensions` (for a MIF output) and whether there is a knowledge graph.
///
/// # Errors
/// I/O errors reading the file.
pub fn note_document_members(path: &Path, plan: &mut InputPlan) -> Result<(), RunError> {
    let display = path.display().to_string();
    let open = || crate::remote::open_path(path).map(std::io::BufReader::new).map_err(|error| RunError::read(&display, error));
    let mut framer = ArrayFramer::member_value(open()?, "vendor_extensions");
    if let Ok(Some(element)) = framer.next_element()
        && let Ok(Value::Object(extensions)) = serde_json::from_slice::<Value>(&element.bytes)
    {
        for (system, value) in extensions {
            // memport's own extension describes the document it is in, and is written anew;
            // the retractions it lists go to every output.
            if system == "memport" {
                let names = crate::model::RetractionMemberNames::SNAKE_CASE;
                let (retracted, unreadable) = retractions::from_list(&value["retracted_conversations"], &names);
                note_retractions(plan, &display, retracted, unreadable);
                let (withdrawn, unreadable) = retractions::withdrawals_from_list(&value["withdrawn_messages"], &names);
                note_retractions(plan, &display, withdrawn, unreadable);
            } else {
                plan.carried.mif_vendor_extensions.push((system, value));
            }
        }
    }
    let mut graph = ArrayFramer::member_value(open()?, "knowledge_graph");
    if let Ok(Some(element)) = graph.next_element()
        && !matches!(serde_json::from_slice::<Value>(&element.bytes), Ok(Value::Null))
    {
        plan.warnings.add("mif_knowledge_graph_not_carried");
        plan.notes.push(format!("{display}: the knowledge graph is not read (memport carries memories and conversations only)"));
    }
    Ok(())
}

/// Decodes groups of MIF memories.
pub struct MifDecoder;

impl Decoder for MifDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let (origin, records) = parse_group(bytes, &origin)?;
        let Some(first) = records.first() else { return Err(RecordReject::new(&origin, None, "an empty group".into())) };
        let is_turn = first["memory_type"] == "conversation"
            && (first["metadata"]["conversation_id"].is_string() || first["source"]["session_id"].is_string());
        if !is_turn {
            let memory = memory_of(first).map_err(|reason| RecordReject::new(&origin, text_of(first, "id").as_deref(), reason))?;
            let provider = provider_of(first);
            let dropped_embedding = first["embeddings"].is_object() && memory.embedding.is_none();
            let mut element = crate::sources::formats::memory_element(provider, memory, origin);
            if dropped_embedding {
                // Incomplete, or its vector is not as long as it says: not carried.
                element.warnings.add("mif_embedding_not_carried");
            }
            return Ok(element);
        }
        Ok(conversation_of(&records, origin, options))
    }
}

/// The provider a memory names: memport's first tag, else `source.agent`.
fn provider_of(memory: &Value) -> Provider {
    let tag = memory["tags"][0].as_str().map(Provider::named).filter(|provider| !matches!(provider, Provider::Other(_)));
    let agent = memory["source"]["agent"].as_str().or_else(|| memory["source"]["agent_name"].as_str());
    tag.or_else(|| agent.map(Provider::named)).unwrap_or(Provider::Other("mif"))
}

fn tags(memory: &Value) -> Vec<&str> {
    memory["tags"].as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

fn memory_of(memory: &Value) -> Result<MemoryRecord, String> {
    let text = memory["content"].as_str().filter(|text| !text.trim().is_empty()).ok_or("a memory without `content` text")?.to_owned();
    let created_at = memory["created_at"].as_str().and_then(parse_rfc3339).ok_or("a memory without a readable `created_at`")?;
    let metadata = &memory["metadata"];
    let own_kind = metadata["memory_kind"].as_str().and_then(MemoryKind::named);
    let provider = provider_of(memory);
    if let (Some(kind), Some(id)) = (own_kind, metadata["provider_memory_id"].as_str()) {
        // memport's own: the kind, id and labels it wrote.
        let labels =
            // A JSON array in a string (older memport documents joined the labels with commas).
            metadata["labels"].as_str().filter(|labels| !labels.is_empty()).map(|labels| {
                serde_json::from_str::<Vec<String>>(labels).unwrap_or_else(|_| labels.split(',').map(str::to_owned).collect())
            });
        let mut record = MemoryRecord::new(provider, kind, text, created_at, labels.unwrap_or_default());
        record.id = id.to_owned();
        record.embedding = embedding_of(memory);
        record.retracted_in_input = is_retracted(memory);
        return Ok(record);
    }
    let memory_type = memory["memory_type"].as_str().unwrap_or("observation");
    let (kind, mut labels) = MemoryKind::from_foreign_type(memory_type, "mif-type");
    labels.extend(tags(memory).into_iter().filter(|tag| *tag != provider.as_str()).map(str::to_owned));
    let mut record = MemoryRecord::new(provider, kind, text, created_at, labels);
    record.embedding = embedding_of(memory);
    record.retracted_in_input = is_retracted(memory);
    Ok(record)
}

/// Whether the document withdrew the memory (`metadata.status: retracted`, as memport writes a
/// memory whose conversations a sync retracted).
fn is_retracted(memory: &Value) -> bool {
    memory["metadata"]["status"].as_str() == Some("retracted")
}

/// A memory's `embeddings` block (model, dimensions, vector), when it is complete.
fn embedding_of(memory: &Value) -> Option<Box<Embedding>> {
    let block = &memory["embeddings"];
    let vector: Vec<f64> = block["vector"].as_array()?.iter().map(Value::as_f64).collect::<Option<_>>()?;
    let dimensions = block["dimensions"].as_u64().filter(|dimensions| *dimensions >= 1 && *dimensions == vector.len() as u64)?;
    Some(Box::new(Embedding {
        // memport keeps a PAM embedding's id and time beside the MIF fields (MIF allows more
        // members), so PAM → MIF → PAM gives the same entry.
        id: block["id"].as_str().filter(|id| !id.is_empty()).map(str::to_owned),
        model: block["model"].as_str().filter(|model| !model.is_empty())?.to_owned(),
        dimensions,
        vector: Some(vector),
        created_at: block["created_at"].as_str().and_then(parse_rfc3339),
    }))
}

fn conversation_of(records: &[Value], origin: Origin, options: &DecodeOptions) -> Decoded {
    let first = &records[0];
    let provider = provider_of(first);
    let metadata = &first["metadata"];
    let id = metadata["conversation_id"].as_str().or_else(|| first["source"]["session_id"].as_str()).unwrap_or_default().to_owned();
    let mut holder = Conversation::empty(provider, id, origin);
    holder.title = text_of(metadata, "conversation_title");
    holder.assumed_time_zone = text_of(metadata, "assumed_time_zone");
    let mut links = ParentLinks::new();
    let mut warnings = Warnings::default();
    let mut rejected = Vec::new();
    for record in records {
        let metadata = &record["metadata"];
        let message_id = metadata["message_id"].as_str().or_else(|| record["external_id"].as_str()).or_else(|| record["id"].as_str());
        let Some(message_id) = message_id.filter(|id| !id.is_empty()) else {
            rejected.push(RecordReject::new(&holder.origin, Some(&holder.id), "a conversation memory without an id".into()));
            continue;
        };
        let Some(text) = record["content"].as_str() else {
            rejected.push(
                RecordReject::new(&holder.origin, Some(&holder.id), "a conversation memory without `content` text".into())
                    .with_message(message_id),
            );
            continue;
        };
        let tags = tags(record);
        let role = metadata["role"]
            .as_str()
            .and_then(role_named)
            .or_else(|| tags.iter().find_map(|tag| tag.strip_prefix("role:")).and_then(role_named))
            .unwrap_or(match record["source"]["source_type"].as_str() {
                Some("ai_generated") => Role::Assistant,
                Some("system") => Role::System,
                Some("api") => Role::Tool,
                _ => Role::User,
            });
        let mut fields = MessageFields::new(message_id.to_owned(), role, text.to_owned());
        fields.created_at = record["created_at"].as_str().and_then(parse_rfc3339);
        fields.model = text_of(metadata, "model");
        fields.is_thought = tags.contains(&"thought");
        if record["embeddings"].is_object() {
            // Turns carry no vectors in the canonical model.
            warnings.add("mif_embedding_not_carried");
        }
        fields.on_active_branch = !tags.contains(&"off-branch");
        fields.parent_id = links.parent_of(record["parent_id"].as_str(), &mut warnings);
        if let Some(format_id) = record["id"].as_str() {
            links.add(format_id, message_id);
        }
        push_turn(&mut holder, fields, options);
    }
    decoded(holder, rejected, warnings)
}
