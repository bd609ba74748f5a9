//! UMP 0.1 writers (memory-formats.md §4): `--to ump` (a JSON array of records), `ump-ndjson`
//! (one record per line) and `ump-md` (a folder with one `<id>.ump.md` file per record: the
//! record without `body.text` as JSON front matter, then the text).
//!
//! Each written message becomes an `episodic` record (§4.9) and each provider memory a record of
//! the kind its memory kind maps to. A memory memport extracted is an `active` record of its
//! type's kind, linked `derived_from` the message records it was said in (also its
//! `provenance.evidence`) and `about` the entities it names, with its supersession as record ids;
//! `body.structured` holds what extraction knows (type, slot, value, language, confidence, when
//! first and last said, each piece of evidence with its message's ids, span and quote, the
//! entities), so memport reads the memory back whole.
//! Ids bridge the provider ids the way the Recall adapter does, `urn:ump:` + base32 of
//! `<provider>:<conversation id>:<message id>` (and of the memory id for memories), so reruns
//! give the same ids; ids too long for a file name are hashed instead. With `--sign-key` every
//! record gets an `integrity` block (BLAKE3 content hash, Ed25519 signature, `did:key` signer)
//! over all its members; without one there is none, because a hash alone fails the schema.
//!
//! A sync's retractions ([`Sink::retract`]) are one `tombstoned` episodic record per retracted
//! conversation, after every other record: its id bridges `<provider>:<conversation id>:retracted`,
//! its text says which conversation was deleted, `scope.session` is the conversation id (as on
//! its messages' records), `time.created` the retraction time, and
//! `body.structured.retracted_conversation` names the provider, conversation (with its title
//! and start when known) and retracting run; signed like the others. A memory whose conversations were all retracted is
//! `tombstoned` too. A message a sync withdraws (erased from its memory store since an earlier
//! run wrote it) is a `tombstoned` record under the message's own record id, naming it in
//! `body.structured.retracted_message` (the same members, with `message_id`).

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::RunError;
use crate::jcs::{write_string, write_string_array};
use crate::model::extracted::{EXTRACTOR, Evidence, Extracted, confidence_decimal};
use crate::model::{Conversation, MemoryKind, MemoryRecord, RetractedConversation};
use crate::signing::SignKey;
use crate::sinks::direct_writer::DirectWriter;
use crate::sinks::entity_refs::write_entities_member;
use crate::sinks::written_tree::{is_written, nearest_written_ancestors};
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary, output_file};
use crate::spec::ump::{message_record_id, record_id};
use crate::timefmt::format_rfc3339;

/// The record kinds of UMP 0.1.
const KINDS: [&str; 5] = ["semantic", "episodic", "procedural", "working", "identity"];

/// How the records are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// `*.ump.json`: one JSON array.
    Json,
    /// One record per line.
    Ndjson,
    /// A folder of `*.ump.md` files, one per record.
    Markdown,
}

/// Records of one batch: framed for JSON/NDJSON (`,\n`-prefixed or one per line), or as
/// `(id, compact record)` pairs for the Markdown binding.
#[derive(Debug, Default)]
pub struct EncodedBatch {
    framed: Vec<u8>,
    records: Vec<(String, Vec<u8>)>,
    count: u64,
}

struct UmpEncoder {
    binding: Binding,
    owner: String,
    sign_key: Option<SignKey>,
}

/// `record` with its `integrity` block appended (the record is ours, so it parses).
fn signed(record: Vec<u8>, key: &SignKey) -> Vec<u8> {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&record) else { return record };
    let integrity = crate::signing::ump_integrity(key, &value);
    let mut out = record;
    out.pop();
    out.extend_from_slice(b",\"integrity\":");
    out.extend_from_slice(integrity.to_string().as_bytes());
    out.push(b'}');
    out
}

/// Adds `record` to `encoded`, signed with `sign_key` when there is one, framed for `binding`.
fn push_record(encoded: &mut EncodedBatch, binding: Binding, sign_key: Option<&SignKey>, id: String, record: Vec<u8>) {
    let record = match sign_key {
        Some(key) => signed(record, key),
        None => record,
    };
    match binding {
        Binding::Json => {
            encoded.framed.extend_from_slice(b",\n");
            encoded.framed.extend_from_slice(&record);
        }
        Binding::Ndjson => {
            encoded.framed.extend_from_slice(&record);
            encoded.framed.push(b'\n');
        }
        Binding::Markdown => encoded.records.push((id, record)),
    }
    encoded.count += 1;
}

impl Encoder for UmpEncoder {
    fn encode(&self, batch: &[Conversation]) -> Encoded {
        let mut encoded = EncodedBatch::default();
        let mut emit = |id: String, record: Vec<u8>| push_record(&mut encoded, self.binding, self.sign_key.as_ref(), id, record);
        for conversation in batch {
            map_conversation(conversation, &self.owner, &mut emit);
        }
        Encoded::Ump(encoded)
    }
}

/// The encoder of the NDJSON binding (one record per line), for sinks that read the records
/// back one by one (the store).
pub fn ndjson_encoder(owner: &str, sign_key: Option<SignKey>) -> Arc<dyn Encoder> {
    Arc::new(UmpEncoder { binding: Binding::Ndjson, owner: owner.to_owned(), sign_key })
}

impl EncodedBatch {
    /// The records of a batch the NDJSON encoder made, one compact JSON record each.
    pub fn ndjson_records(&self) -> impl Iterator<Item = &[u8]> {
        self.framed.split(|byte| *byte == b'\n').filter(|line| !line.is_empty())
    }
}

/// The tombstone records of a sync's retracted conversations, in the order every binding
/// writes them (see the module docs).
pub fn tombstone_records(retracted: &[RetractedConversation], owner: &str, sign_key: Option<&SignKey>) -> Vec<Vec<u8>> {
    let mut batch = EncodedBatch::default();
    for conversation in RetractedConversation::sorted(retracted) {
        for (id, record) in tombstones_of(&conversation, owner) {
            push_record(&mut batch, Binding::Ndjson, sign_key, id, record);
        }
    }
    batch.ndjson_records().map(<[u8]>::to_vec).collect()
}

/// UMP kind of a provider memory.
fn memory_kind(kind: MemoryKind) -> &'static str {
    match kind {
        MemoryKind::Identity | MemoryKind::Preference => "identity",
        MemoryKind::Fact | MemoryKind::ProjectKnowledge => "semantic",
        MemoryKind::ProjectInstruction => "procedural",
    }
}

/// Closes a memory record's body and writes its `scope` (private to `owner`, agent
/// `provider`) and the opening of its `time` (`created`, `observed`).
fn write_memory_scope_and_time(out: &mut Vec<u8>, owner: &str, provider: &str, created: &str, observed: &str) {
    out.extend_from_slice(b"}},\"scope\":{\"owner\":");
    write_string(out, owner);
    out.extend_from_slice(b",\"agent\":");
    write_string(out, provider);
    out.extend_from_slice(b",\"visibility\":\"private\"},\"time\":{\"created\":");
    write_string(out, created);
    out.extend_from_slice(b",\"observed\":");
    write_string(out, observed);
}

fn map_conversation(conversation: &Conversation, owner: &str, emit: &mut impl FnMut(String, Vec<u8>)) {
    let provider = conversation.provider.as_str();
    for memory in conversation.memories.iter().filter(|memory| memory.is_written()) {
        let id = record_id(&memory.id);
        let record = match memory.extracted.as_deref() {
            Some(extracted) => extracted_record(memory, extracted, &id, provider, owner),
            None => memory_record(memory, &id, provider, owner),
        };
        emit(id.clone(), record);
    }
    if conversation.memories_only {
        return;
    }
    // The record id of each written message (by position), for its descendants' relation.
    let ancestors = nearest_written_ancestors(conversation);
    let mut ids: Vec<Option<String>> = vec![None; conversation.messages.len()];
    let mut turn_index = 0u64;
    for (position, message) in conversation.messages.iter().enumerate() {
        if !is_written(message) {
            continue;
        }
        let parent = ancestors[position].and_then(|ancestor| ids[ancestor].clone());
        let id = message_record_id(provider, &conversation.id, &message.id);
        let time = format_rfc3339(message.created_at);
        let mut out = Vec::with_capacity(message.text.len() + 900);
        out.extend_from_slice(b"{\"ump\":\"0.1\",\"id\":");
        write_string(&mut out, &id);
        out.extend_from_slice(b",\"kind\":\"episodic\",\"body\":{\"text\":");
        write_string(&mut out, &message.text);
        out.extend_from_slice(b",\"structured\":{\"source_kind\":");
        write_string(&mut out, provider);
        out.extend_from_slice(b",\"conversation_id\":");
        write_string(&mut out, &conversation.id);
        if let Some(title) = &conversation.title {
            out.extend_from_slice(b",\"conversation_title\":");
            write_string(&mut out, title);
        }
        out.extend_from_slice(b",\"message_id\":");
        write_string(&mut out, &message.id);
        out.extend_from_slice(b",\"role\":\"");
        out.extend_from_slice(message.role.as_str().as_bytes());
        out.extend_from_slice(format!("\",\"turn_index\":{turn_index}").as_bytes());
        if let Some(model) = &message.model {
            out.extend_from_slice(b",\"model\":");
            write_string(&mut out, model);
        }
        if message.is_thought {
            out.extend_from_slice(b",\"is_thought\":true");
        }
        if !message.on_active_branch {
            out.extend_from_slice(b",\"on_active_branch\":false");
        }
        if let Some(zone) = &conversation.assumed_time_zone {
            out.extend_from_slice(b",\"assumed_time_zone\":");
            write_string(&mut out, zone);
        }
        out.extend_from_slice(b"}},\"scope\":{\"owner\":");
        write_string(&mut out, owner);
        out.extend_from_slice(b",\"agent\":");
        write_string(&mut out, provider);
        out.extend_from_slice(b",\"session\":");
        write_string(&mut out, &conversation.id);
        out.extend_from_slice(b",\"visibility\":\"private\"},\"time\":{\"created\":");
        write_string(&mut out, &time);
        out.extend_from_slice(b",\"observed\":");
        write_string(&mut out, &time);
        out.extend_from_slice(b",\"valid_from\":");
        write_string(&mut out, &time);
        // An imported turn is a candidate, as the reference importer marks what it reads.
        out.extend_from_slice(b",\"valid_to\":null},\"lifecycle\":{\"status\":\"candidate\",\"confidence\":0.55}");
        if let Some(parent) = &parent {
            out.extend_from_slice(b",\"relations\":[{\"type\":\"depends_on\",\"target\":");
            write_string(&mut out, parent);
            out.extend_from_slice(b"}]");
        }
        write_provenance(&mut out, owner, provider, &format!("{}#{}", conversation.id, message.id));
        out.extend_from_slice(b",\"consent\":{\"exportable\":true}}");
        emit(id.clone(), out);
        turn_index += 1;
        ids[position] = Some(id);
    }
}

fn memory_record(memory: &MemoryRecord, id: &str, provider: &str, owner: &str) -> Vec<u8> {
    let time = format_rfc3339(memory.created_at);
    let mut out = Vec::with_capacity(memory.text.len() + 600);
    out.extend_from_slice(b"{\"ump\":\"0.1\",\"id\":");
    write_string(&mut out, id);
    out.extend_from_slice(b",\"kind\":\"");
    // A kind read from another UMP producer is written as it was.
    let kind = memory.format_type("ump-kind").filter(|kind| KINDS.contains(kind)).unwrap_or(memory_kind(memory.kind));
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"body\":{\"text\":");
    write_string(&mut out, &memory.text);
    out.extend_from_slice(b",\"structured\":{\"source_kind\":");
    write_string(&mut out, provider);
    out.extend_from_slice(b",\"memory_kind\":");
    write_string(&mut out, memory.kind.as_str());
    out.extend_from_slice(b",\"provider_memory_id\":");
    write_string(&mut out, &memory.id);
    if !memory.labels.is_empty() {
        out.extend_from_slice(b",\"labels\":");
        write_string_array(&mut out, memory.labels.iter().map(String::as_str));
    }
    write_memory_scope_and_time(&mut out, owner, provider, &time, &time);
    // What the provider kept as memory is likelier to hold than a single turn (the reference
    // importer gives curated CLAUDE.md/AGENTS.md sections 0.75). One its input withdrew stays
    // forgotten.
    let status: &[u8] = if memory.retracted_in_input { b"tombstoned" } else { b"candidate" };
    out.extend_from_slice(b"},\"lifecycle\":{\"status\":\"");
    out.extend_from_slice(status);
    out.extend_from_slice(b"\",\"confidence\":0.75}");
    write_provenance(&mut out, owner, provider, &memory.id);
    out.extend_from_slice(b",\"consent\":{\"exportable\":true}}");
    out
}

/// The record of a memory memport extracted. `body.structured` keeps the members a provider
/// memory's record has (so memport reads it back with its id) and adds what extraction knows;
/// the messages it was said in are `derived_from` relations and `provenance.evidence`, one per
/// message however often it was said there. A contact detail kept on request is not exportable.
fn extracted_record(memory: &MemoryRecord, extracted: &Extracted, id: &str, provider: &str, owner: &str) -> Vec<u8> {
    let first_seen = format_rfc3339(extracted.first_seen);
    let last_seen = format_rfc3339(extracted.last_seen);
    let confidence = confidence_decimal(extracted.confidence);
    let evidence = evidence_record_ids(extracted);
    let mut out = Vec::with_capacity(memory.text.len() + 1_000 + evidence.len() * 160);
    out.extend_from_slice(b"{\"ump\":\"0.1\",\"id\":");
    write_string(&mut out, id);
    out.extend_from_slice(b",\"kind\":\"");
    out.extend_from_slice(extracted.memory_type.ump_kind().as_bytes());
    out.extend_from_slice(b"\",\"body\":{\"text\":");
    write_string(&mut out, &memory.text);
    out.extend_from_slice(b",\"structured\":{\"source_kind\":");
    write_string(&mut out, provider);
    out.extend_from_slice(b",\"memory_kind\":");
    write_string(&mut out, memory.kind.as_str());
    out.extend_from_slice(b",\"provider_memory_id\":");
    write_string(&mut out, &memory.id);
    out.extend_from_slice(b",\"memport_type\":");
    write_string(&mut out, extracted.memory_type.as_str());
    out.extend_from_slice(b",\"slot\":");
    write_string(&mut out, extracted.slot);
    out.extend_from_slice(b",\"value\":");
    write_string(&mut out, &extracted.value);
    out.extend_from_slice(b",\"language\":");
    write_string(&mut out, extracted.language);
    out.extend_from_slice(format!(",\"confidence\":{confidence},\"evidence_count\":{}", extracted.evidence_count).as_bytes());
    out.extend_from_slice(b",\"first_seen\":");
    write_string(&mut out, &first_seen);
    out.extend_from_slice(b",\"last_seen\":");
    write_string(&mut out, &last_seen);
    write_evidence_member(&mut out, &extracted.evidence);
    if extracted.personal {
        out.extend_from_slice(b",\"personal\":true");
    }
    write_entities_member(&mut out, &extracted.entities);
    write_memory_scope_and_time(&mut out, owner, provider, &first_seen, &last_seen);
    // Extracted from the user's own words and consolidated: held, unlike an imported turn;
    // forgotten once every conversation it was said in was retracted.
    let status = if extracted.retracted { "tombstoned" } else { "active" };
    out.extend_from_slice(format!("}},\"lifecycle\":{{\"status\":\"{status}\",\"confidence\":").as_bytes());
    out.extend_from_slice(confidence.as_bytes());
    out.push(b'}');
    for (name, other) in [("supersedes", &extracted.supersedes), ("superseded_by", &extracted.superseded_by)] {
        let Some(other) = other else { continue };
        out.extend_from_slice(format!(",\"{name}\":[").as_bytes());
        write_string(&mut out, &record_id(other));
        out.push(b']');
    }
    let mut relations = evidence.iter().map(|target| ("derived_from", target.clone())).collect::<Vec<_>>();
    relations.extend(extracted.entities.iter().map(|entity| ("about", format!("entity:{}", entity.name))));
    if !relations.is_empty() {
        out.extend_from_slice(b",\"relations\":[");
        for (index, (relation, target)) in relations.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            out.extend_from_slice(format!("{{\"type\":\"{relation}\",\"target\":").as_bytes());
            write_string(&mut out, target);
            out.push(b'}');
        }
        out.push(b']');
    }
    // Found by memport's rules in what the user wrote: a scan, not an import of stored memory.
    out.extend_from_slice(b",\"provenance\":{\"actor\":\"memport\",\"actor_kind\":\"scan\",\"method\":");
    write_string(&mut out, EXTRACTOR);
    out.extend_from_slice(b",\"source\":{\"provider\":");
    write_string(&mut out, provider);
    out.extend_from_slice(b"},\"evidence\":[");
    for (index, target) in evidence.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"ref\":");
        write_string(&mut out, target);
        out.push(b'}');
    }
    let exportable = if extracted.personal { "false" } else { "true" };
    out.extend_from_slice(format!("]}},\"consent\":{{\"exportable\":{exportable}}}}}").as_bytes());
    out
}

/// Appends `,"evidence":[…]`: each place the memory was said, with the three ids of its message,
/// the sentence's byte span and quote, and when it was said, so a reader gets back what the
/// relations name only by record id (and a hashed id not at all); nothing when there is none.
fn write_evidence_member(out: &mut Vec<u8>, evidence: &[Evidence]) {
    if evidence.is_empty() {
        return;
    }
    out.extend_from_slice(b",\"evidence\":[");
    for (index, piece) in evidence.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"provider\":");
        write_string(out, piece.provider.as_str());
        out.extend_from_slice(b",\"conversation_id\":");
        write_string(out, &piece.conversation_id);
        out.extend_from_slice(b",\"message_id\":");
        write_string(out, &piece.message_id);
        out.extend_from_slice(format!(",\"span\":[{},{}],\"quote\":", piece.span.0, piece.span.1).as_bytes());
        write_string(out, &piece.text);
        out.extend_from_slice(b",\"said_at\":");
        write_string(out, &format_rfc3339(piece.time));
        out.push(b'}');
    }
    out.push(b']');
}

/// The `tombstoned` records of a retraction, with their ids: the conversation's, or one for
/// each message withdrawn.
fn tombstones_of(retracted: &RetractedConversation, owner: &str) -> Vec<(String, Vec<u8>)> {
    if retracted.is_of_messages() {
        retracted.messages.iter().map(|message| tombstone_record(retracted, Some(message), owner)).collect()
    } else {
        vec![tombstone_record(retracted, None, owner)]
    }
}

/// The `tombstoned` record of a conversation a sync retracted, and its id, which bridges
/// `<provider>:<conversation id>:retracted` as message ids are bridged, so a rerun repeats it;
/// or, for `message` (a message erased from the memory store since an earlier run wrote it),
/// a record under the message's own record id, so a consumer that holds the message by its id
/// drops it.
fn tombstone_record(retracted: &RetractedConversation, message: Option<&str>, owner: &str) -> (String, Vec<u8>) {
    let provider = retracted.provider.as_str();
    let conversation_id = &retracted.conversation_id;
    let id = match message {
        Some(message) => message_record_id(provider, conversation_id, message),
        None => record_id(&format!("{provider}:{conversation_id}:retracted")),
    };
    let time = format_rfc3339(retracted.retracted_at);
    let text = match (message, &retracted.title) {
        (Some(_), Some(title)) => format!("A message of conversation \"{title}\" was erased from the memory store."),
        (Some(_), None) => format!("A message of conversation {conversation_id} was erased from the memory store."),
        (None, Some(title)) => format!("Conversation \"{title}\" was deleted from the {provider} export."),
        (None, None) => format!("Conversation {conversation_id} was deleted from the {provider} export."),
    };
    let mut out = Vec::with_capacity(text.len() + 2 * conversation_id.len() + 700);
    out.extend_from_slice(b"{\"ump\":\"0.1\",\"id\":");
    write_string(&mut out, &id);
    out.extend_from_slice(b",\"kind\":\"episodic\",\"body\":{\"text\":");
    write_string(&mut out, &text);
    out.extend_from_slice(if message.is_some() {
        b",\"structured\":{\"retracted_message\":{\"provider\":"
    } else {
        b",\"structured\":{\"retracted_conversation\":{\"provider\":"
    });
    write_string(&mut out, provider);
    out.extend_from_slice(b",\"conversation_id\":");
    write_string(&mut out, conversation_id);
    if let Some(message) = message {
        out.extend_from_slice(b",\"message_id\":");
        write_string(&mut out, message);
    }
    // What another format's retraction names too, so a delta read back loses none of it.
    if let Some(title) = &retracted.title {
        out.extend_from_slice(b",\"title\":");
        write_string(&mut out, title);
    }
    if let Some(created_at) = retracted.created_at {
        out.extend_from_slice(b",\"created_at\":");
        write_string(&mut out, &format_rfc3339(created_at));
    }
    out.extend_from_slice(b",\"retracted_by\":");
    write_string(&mut out, &retracted.retracted_by);
    out.extend_from_slice(b"}}},\"scope\":{\"owner\":");
    write_string(&mut out, owner);
    out.extend_from_slice(b",\"agent\":");
    write_string(&mut out, provider);
    out.extend_from_slice(b",\"session\":");
    write_string(&mut out, conversation_id);
    out.extend_from_slice(b",\"visibility\":\"private\"},\"time\":{\"created\":");
    write_string(&mut out, &time);
    out.extend_from_slice(b",\"observed\":");
    write_string(&mut out, &time);
    out.extend_from_slice(b"},\"lifecycle\":{\"status\":\"tombstoned\"}");
    let source_ref = match message {
        Some(message) => format!("{conversation_id}#{message}"),
        None => conversation_id.clone(),
    };
    write_provenance(&mut out, owner, provider, &source_ref);
    out.extend_from_slice(b",\"consent\":{\"exportable\":true}}");
    (id, out)
}

/// The record ids of the messages an extracted memory was said in, each once, in the order
/// first said.
fn evidence_record_ids(extracted: &Extracted) -> Vec<String> {
    let mut seen = HashSet::new();
    extracted
        .evidence
        .iter()
        .filter(|evidence| seen.insert((evidence.provider, evidence.conversation_id.as_str(), evidence.message_id.as_str())))
        .map(|evidence| message_record_id(evidence.provider.as_str(), &evidence.conversation_id, &evidence.message_id))
        .collect()
}

fn write_provenance(out: &mut Vec<u8>, owner: &str, provider: &str, source_ref: &str) {
    out.extend_from_slice(b",\"provenance\":{\"actor\":");
    write_string(out, owner);
    out.extend_from_slice(b",\"actor_kind\":\"import\",\"method\":");
    write_string(out, &format!("import:{provider}-export"));
    out.extend_from_slice(b",\"source\":{\"ref\":");
    write_string(out, source_ref);
    out.extend_from_slice(b",\"provider\":");
    write_string(out, provider);
    out.extend_from_slice(b"}}");
}

/// The `.ump.md` form of a compact record: front matter (the record without `body.text`, as
/// indented JSON), then the text.
///
/// # Errors
/// Only if `record` is not JSON, which the encoder rules out.
pub fn markdown_file(record: &[u8]) -> io::Result<Vec<u8>> {
    let mut value: serde_json::Value = serde_json::from_slice(record).map_err(io::Error::other)?;
    let text = value.get_mut("body").and_then(|body| body.as_object_mut()).and_then(|body| body.remove("text"));
    let text = text.as_ref().and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
    let mut out = b"---\n".to_vec();
    serde_json::to_writer_pretty(&mut out, &value).map_err(io::Error::other)?;
    out.extend_from_slice(b"\n---\n\n");
    out.extend_from_slice(text.as_bytes());
    out.push(b'\n');
    Ok(out)
}

enum Output {
    /// JSON and NDJSON: one file.
    File(DirectWriter),
    /// Markdown: a folder of records, at the sink's target.
    Folder,
}

/// Writes UMP records in one binding.
pub struct UmpSink {
    binding: Binding,
    owner: String,
    sign_key: Option<SignKey>,
    target: PathBuf,
    output: Output,
    records: u64,
    bytes: u64,
}

impl UmpSink {
    /// Creates the sink writing `target` plainly: a file, or for `ump-md` a folder of records,
    /// neither there yet (a run gives it a path in a staging folder).
    ///
    /// # Errors
    /// I/O errors, and something already at `target`.
    pub fn create(target: &Path, binding: Binding, owner: &str, sign_key: Option<SignKey>) -> Result<UmpSink, RunError> {
        let display = target.display().to_string();
        let io_error = |error: io::Error| RunError::write(&display, error);
        let parent = output_file::folder_of(target);
        std::fs::create_dir_all(parent).map_err(io_error)?;
        let output = match binding {
            Binding::Json | Binding::Ndjson => {
                let mut file = output_file::create_output(target).map_err(io_error)?;
                if binding == Binding::Json {
                    file.write_all(b"[").map_err(io_error)?;
                }
                Output::File(file)
            }
            Binding::Markdown => {
                std::fs::create_dir(target).map_err(io_error)?;
                Output::Folder
            }
        };
        Ok(UmpSink { binding, owner: owner.to_owned(), sign_key, target: target.to_owned(), output, records: 0, bytes: 0 })
    }

    fn write_encoded(&mut self, batch: EncodedBatch) -> io::Result<()> {
        match &mut self.output {
            Output::File(file) => {
                let bytes = if self.binding == Binding::Json && self.records == 0 && !batch.framed.is_empty() {
                    &batch.framed[1..]
                } else {
                    &batch.framed[..]
                };
                file.write_all(bytes)?;
            }
            Output::Folder => {
                for (id, record) in &batch.records {
                    let name = format!("{}.ump.md", id.trim_start_matches("urn:ump:"));
                    let content = markdown_file(record)?;
                    File::create_new(self.target.join(name))?.write_all(&content)?;
                    self.bytes += content.len() as u64;
                }
            }
        }
        self.records += batch.count;
        Ok(())
    }

    fn complete(self) -> io::Result<SinkSummary> {
        let UmpSink { binding, target, output, records, mut bytes, .. } = self;
        match output {
            Output::File(mut file) => {
                if binding == Binding::Json {
                    file.write_all(b"\n]\n")?;
                }
                bytes = file.finish()?.metadata()?.len();
            }
            Output::Folder => {
                // Whatever the umask says: an output folder is readable by all.
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))?;
            }
        }
        let format = match binding {
            Binding::Json => "ump",
            Binding::Ndjson => "ump-ndjson",
            Binding::Markdown => "ump-md",
        };
        Ok(SinkSummary { format, path: target.display().to_string(), records, bytes })
    }
}

impl Sink for UmpSink {
    fn encoder(&self) -> Arc<dyn Encoder> {
        Arc::new(UmpEncoder { binding: self.binding, owner: self.owner.clone(), sign_key: self.sign_key.clone() })
    }

    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError> {
        let display = self.target.display().to_string();
        let Encoded::Ump(batch) = batch else {
            return Err(RunError::write(display, io::Error::other("internal: the UMP sink got another sink's batch")));
        };
        self.write_encoded(batch).map_err(|error| RunError::write(display, error))
    }

    fn retract(&mut self, retracted: &[RetractedConversation]) -> Result<(), RunError> {
        let mut batch = EncodedBatch::default();
        for conversation in RetractedConversation::sorted(retracted) {
            for (id, record) in tombstones_of(&conversation, &self.owner) {
                push_record(&mut batch, self.binding, self.sign_key.as_ref(), id, record);
            }
        }
        let display = self.target.display().to_string();
        self.write_encoded(batch).map_err(|error| RunError::write(display, error))
    }

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let target = self.target.display().to_string();
        self.complete().map_err(|error| RunError::write(target, error))
    }
}

/// A run's extracted memories for the memory sinks' tests (UMP, MIF, AIME): one conversation of
/// two user messages, then the memories said in it, as the pipeline sends them: a home said
/// once and superseded by another said twice in one message, and an e-mail address kept on
/// request.
#[cfg(test)]
pub(crate) mod extracted_fixture {
    use crate::model::extracted::{EntityKind, EntityRef, Evidence, Extracted, MemoryType};
    use crate::model::{Conversation, MemoryKind, MemoryRecord, Message, Micros, Origin, Provider};

    /// When the first message was written.
    pub const FIRST: Micros = 1_700_000_000_000_000;
    /// When the second one was, a day later.
    pub const SECOND: Micros = FIRST + 86_400_000_000;
    /// The home that was superseded.
    pub const OLD_HOME: &str = "mem-0000000000000000000a";
    /// The home that superseded it.
    pub const NEW_HOME: &str = "mem-0000000000000000000b";
    /// The contact detail kept on request.
    pub const EMAIL: &str = "mem-0000000000000000000c";

    fn origin() -> Origin {
        Origin { file: "fixture.json".into(), offset: 0, index: 0 }
    }

    fn evidence(message_id: &str, span: (usize, usize), text: &str, time: Micros) -> Evidence {
        Evidence {
            provider: Provider::ChatGpt,
            conversation_id: "c1".to_owned(),
            message_id: message_id.to_owned(),
            span,
            text: text.to_owned(),
            time,
        }
    }

    fn place(name: &str, first_seen: Micros) -> EntityRef {
        EntityRef {
            id: format!("ent-{}", name.to_lowercase()),
            name: name.to_owned(),
            kind: EntityKind::Place,
            first_seen,
            first_mention: true,
        }
    }

    fn memory(id: &str, text: &str, extracted: Extracted) -> MemoryRecord {
        MemoryRecord {
            id: id.to_owned(),
            kind: MemoryKind::Identity,
            text: text.to_owned(),
            created_at: extracted.first_seen,
            labels: Vec::new(),
            is_duplicate: false,
            exportable: true,
            erased: false,
            retracted_in_input: false,
            written_at_end: false,
            embedding: None,
            extracted: Some(Box::new(extracted)),
        }
    }

    fn home(value: &str, confidence: f32, evidence: Vec<Evidence>, seen: Micros) -> Extracted {
        Extracted {
            memory_type: MemoryType::Identity,
            slot: "home",
            value: value.to_owned(),
            language: "en",
            confidence,
            evidence_count: evidence.len() as u64,
            evidence,
            first_seen: seen,
            last_seen: seen,
            supersedes: None,
            superseded_by: None,
            personal: false,
            entities: vec![place(value, seen)],
            retracted: false,
        }
    }

    /// The conversation (with a provider memory, written as before), then the memories.
    pub fn conversations() -> Vec<Conversation> {
        let mut conversation = Conversation::empty(Provider::ChatGpt, "c1".to_owned(), origin());
        conversation.title = Some("Moving".to_owned());
        conversation.messages = vec![
            Message::user_for_tests("m1", None, "I live in Leeds. My email is ada@example.org.", FIRST),
            Message::user_for_tests("m2", Some("m1"), "I moved to York. York is lovely, I live in York now.", SECOND),
        ];
        conversation.memories = vec![MemoryRecord::new(Provider::ChatGpt, MemoryKind::Fact, "Likes tea".to_owned(), FIRST, Vec::new())];
        let mut old_home = home("Leeds", 0.8, vec![evidence("m1", (0, 16), "I live in Leeds.", FIRST)], FIRST);
        old_home.superseded_by = Some(NEW_HOME.to_owned());
        let mut new_home = home(
            "York",
            0.95,
            vec![evidence("m2", (0, 16), "I moved to York.", SECOND), evidence("m2", (33, 52), "I live in York now.", SECOND)],
            SECOND,
        );
        new_home.supersedes = Some(OLD_HOME.to_owned());
        let mut email = home("ada@example.org", 0.9, vec![evidence("m1", (17, 45), "My email is ada@example.org.", FIRST)], FIRST);
        email.slot = "email";
        email.personal = true;
        email.entities.clear();
        let memories = vec![
            memory(OLD_HOME, "Lives in Leeds", old_home),
            memory(NEW_HOME, "Lives in York", new_home),
            memory(EMAIL, "E-mail address is ada@example.org", email),
        ];
        vec![conversation, Conversation::memories_only(Provider::ChatGpt, "extracted-memories".to_owned(), origin(), memories)]
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::extracted_fixture::{EMAIL, NEW_HOME, OLD_HOME, SECOND, conversations};
    use super::*;
    use crate::model::Provider;

    /// The fixture written in `binding`; the folder holds the output until dropped.
    fn written(binding: Binding, sign_key: Option<SignKey>) -> (tempfile::TempDir, PathBuf) {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("out.ump.json");
        let mut sink = UmpSink::create(&target, binding, "did:example:owner", sign_key).unwrap();
        let encoded = sink.encoder().encode(&conversations());
        sink.write_batch(encoded).unwrap();
        Box::new(sink).finish().unwrap();
        (folder, target)
    }

    #[test]
    fn confidence_is_a_short_decimal() {
        for (confidence, expected) in [
            (0.95, "0.95"),
            (0.5, "0.5"),
            (0.07, "0.07"),
            (0.904, "0.9"),
            (0.999, "1"),
            (1.0, "1"),
            (0.0, "0"),
            (1.5, "1"),
            (f32::NAN, "0"),
        ] {
            assert_eq!(confidence_decimal(confidence), expected, "{confidence}");
        }
    }

    #[test]
    fn extracted_memories_are_valid_records_linked_to_their_messages() {
        let (_folder, target) = written(Binding::Json, None);
        let validation = crate::validate::ump::validate_file(&target).unwrap();
        assert!(validation.is_valid(), "{:?}", validation.problems);
        let records: Vec<Value> = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
        let record = |id: &str| records.iter().find(|record| record["id"] == record_id(id)).cloned().unwrap();
        let message = message_record_id("chatgpt", "c1", "m2");
        assert!(records.iter().any(|record| record["id"] == message.as_str() && record["kind"] == "episodic"));

        let new_home = record(NEW_HOME);
        assert_eq!(new_home["kind"], "identity");
        assert_eq!(new_home["body"]["text"], "Lives in York");
        let structured = &new_home["body"]["structured"];
        assert_eq!(structured["memport_type"], "identity");
        assert_eq!(structured["slot"], "home");
        assert_eq!(structured["value"], "York");
        assert_eq!(structured["language"], "en");
        assert_eq!(structured["confidence"], 0.95);
        assert_eq!(structured["evidence_count"], 2);
        assert_eq!(structured["provider_memory_id"], NEW_HOME);
        assert_eq!(structured["entities"], json!([{"id": "ent-york", "name": "York", "kind": "place"}]));
        assert_eq!(new_home["time"], json!({"created": format_rfc3339(SECOND), "observed": format_rfc3339(SECOND)}));
        assert_eq!(new_home["lifecycle"], json!({"status": "active", "confidence": 0.95}));
        assert_eq!(new_home["supersedes"], json!([record_id(OLD_HOME)]));
        // Said twice in one message: one relation and one piece of evidence for it.
        assert_eq!(
            new_home["relations"],
            json!([{"type": "derived_from", "target": message.as_str()}, {"type": "about", "target": "entity:York"}])
        );
        assert_eq!(new_home["provenance"]["actor_kind"], "scan");
        assert_eq!(new_home["provenance"]["method"], crate::model::extracted::EXTRACTOR);
        assert_eq!(new_home["provenance"]["evidence"], json!([{"ref": message.as_str()}]));
        assert_eq!(new_home["consent"], json!({"exportable": true}));

        assert_eq!(record(OLD_HOME)["superseded_by"], json!([record_id(NEW_HOME)]));
        let email = record(EMAIL);
        assert_eq!(email["consent"], json!({"exportable": false}));
        assert_eq!(email["body"]["structured"]["personal"], true);
        assert_eq!(email["relations"], json!([{"type": "derived_from", "target": message_record_id("chatgpt", "c1", "m1")}]));
    }

    #[test]
    fn signed_extracted_memories_verify() {
        let (_folder, target) = written(Binding::Ndjson, Some(SignKey::from_seed(&[7; 32])));
        let validation = crate::validate::ump::validate_file(&target).unwrap();
        assert!(validation.is_valid(), "{:?}", validation.problems);
        assert!(validation.notices.iter().any(|notice| notice.starts_with("6 signed records")), "{:?}", validation.notices);
    }

    /// The run that retracts.
    const RUN: &str = "20231116T000000Z-000000000002";

    fn retraction(provider: Provider, conversation_id: &str, title: Option<&str>) -> RetractedConversation {
        RetractedConversation {
            provider,
            conversation_id: conversation_id.to_owned(),
            title: title.map(str::to_owned),
            created_at: None,
            retracted_by: RUN.to_owned(),
            retracted_at: SECOND + 1_000_000,
            messages: Vec::new(),
        }
    }

    /// The fixture with its old home marked retracted, then `retracted`, written in `binding`;
    /// the folder holds the output until dropped.
    fn written_retracting(
        binding: Binding,
        sign_key: Option<SignKey>,
        retracted: &[RetractedConversation],
    ) -> (tempfile::TempDir, PathBuf) {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join(if binding == Binding::Markdown { "records" } else { "out.ump.json" });
        let mut sink = UmpSink::create(&target, binding, "did:example:owner", sign_key).unwrap();
        let mut batch = conversations();
        for memory in &mut batch[1].memories {
            if memory.id == OLD_HOME
                && let Some(extracted) = memory.extracted.as_deref_mut()
            {
                extracted.retracted = true;
            }
        }
        let encoded = sink.encoder().encode(&batch);
        sink.write_batch(encoded).unwrap();
        sink.retract(retracted).unwrap();
        let summary = Box::new(sink).finish().unwrap();
        assert_eq!(summary.records, 6 + retracted.len() as u64);
        (folder, target)
    }

    #[test]
    fn retracted_conversations_are_tombstones_in_every_binding() {
        // Given out of order: written by provider, then id.
        let retracted = [retraction(Provider::Gemini, "g1", None), retraction(Provider::ChatGpt, "c0", Some("Old plans"))];
        for binding in [Binding::Json, Binding::Ndjson, Binding::Markdown] {
            let (_folder, target) = written_retracting(binding, None, &retracted);
            let validation = match binding {
                Binding::Markdown => crate::validate::ump::validate_folder(&target),
                Binding::Json | Binding::Ndjson => crate::validate::ump::validate_file(&target),
            }
            .unwrap();
            assert!(validation.is_valid(), "{binding:?}: {:?}", validation.problems);
            assert_eq!(validation.records, 8, "{binding:?}");
        }

        let (_folder, target) = written_retracting(Binding::Json, None, &retracted);
        let records: Vec<Value> = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
        assert_eq!(records.len(), 8);
        let tombstone = &records[6];
        assert_eq!(tombstone["id"], record_id("chatgpt:c0:retracted").as_str());
        assert_eq!(tombstone["kind"], "episodic");
        assert_eq!(tombstone["body"]["text"], "Conversation \"Old plans\" was deleted from the chatgpt export.");
        assert_eq!(
            tombstone["body"]["structured"],
            json!({"retracted_conversation": {"provider": "chatgpt", "conversation_id": "c0", "title": "Old plans", "retracted_by": RUN}})
        );
        assert_eq!(tombstone["scope"]["session"], "c0");
        assert_eq!(tombstone["time"]["created"], format_rfc3339(SECOND + 1_000_000).as_str());
        assert_eq!(tombstone["lifecycle"], json!({"status": "tombstoned"}));
        assert_eq!(tombstone["provenance"]["source"], json!({"ref": "c0", "provider": "chatgpt"}));
        assert_eq!(records[7]["id"], record_id("gemini:g1:retracted").as_str());
        assert_eq!(records[7]["body"]["text"], "Conversation g1 was deleted from the gemini export.");
        // A message record names its conversation as its session the same way.
        assert!(records.iter().any(|record| record["scope"]["session"] == "c1" && record["kind"] == "episodic"));
        let old_home = records.iter().find(|record| record["id"] == record_id(OLD_HOME).as_str()).unwrap();
        assert_eq!(old_home["lifecycle"]["status"], "tombstoned");
    }

    #[test]
    fn signed_tombstones_verify() {
        let key = SignKey::from_seed(&[7; 32]);
        let (_folder, target) = written_retracting(Binding::Ndjson, Some(key), &[retraction(Provider::ChatGpt, "c0", None)]);
        let validation = crate::validate::ump::validate_file(&target).unwrap();
        assert!(validation.is_valid(), "{:?}", validation.problems);
        assert!(validation.notices.iter().any(|notice| notice.starts_with("7 signed records")), "{:?}", validation.notices);
    }
}
