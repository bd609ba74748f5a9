//! UMP 0.1 writers (memory-formats.md §4): `--to ump` (a JSON array of records), `ump-ndjson`
//! (one record per line) and `ump-md` (a folder with one `<id>.ump.md` file per record: the
//! record without `body.text` as JSON front matter, then the text).
//!
//! Each written message becomes an `episodic` record (§4.9) and each provider memory a record of
//! the kind its memory kind maps to. Ids bridge the provider ids the way the Recall adapter
//! does, `urn:ump:` + base32 of `<provider>:<conversation id>:<message id>`, so reruns give the
//! same ids; ids too long for a file name are hashed instead. With `--sign-key` every record
//! gets an `integrity` block (BLAKE3 content hash, Ed25519 signature, `did:key` signer);
//! without one there is none, because a hash alone fails the schema.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::RunError;
use crate::jcs::{write_string, write_string_array};
use crate::model::{Conversation, MemoryKind, MemoryRecord};
use crate::signing::SignKey;
use crate::sinks::direct_writer::DirectWriter;
use crate::sinks::written_tree::{is_written, nearest_written_ancestors};
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary, output_file};
use crate::spec::ump::record_id;
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

impl Encoder for UmpEncoder {
    fn encode(&self, batch: &[Conversation]) -> Encoded {
        let mut encoded = EncodedBatch::default();
        let mut emit = |id: String, record: Vec<u8>| {
            let record = match &self.sign_key {
                Some(key) => signed(record, key),
                None => record,
            };
            match self.binding {
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
        };
        for conversation in batch {
            map_conversation(conversation, &self.owner, &mut emit);
        }
        Encoded::Ump(encoded)
    }
}

/// UMP kind of a provider memory.
fn memory_kind(kind: MemoryKind) -> &'static str {
    match kind {
        MemoryKind::Identity | MemoryKind::Preference => "identity",
        MemoryKind::Fact | MemoryKind::ProjectKnowledge => "semantic",
        MemoryKind::ProjectInstruction => "procedural",
    }
}

fn map_conversation(conversation: &Conversation, owner: &str, emit: &mut impl FnMut(String, Vec<u8>)) {
    let provider = conversation.provider.as_str();
    for memory in conversation.memories.iter().filter(|memory| memory.is_written()) {
        let id = record_id(&memory.id);
        emit(id.clone(), memory_record(memory, &id, provider, owner));
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
        let id = record_id(&format!("{provider}:{}:{}", conversation.id, message.id));
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
    out.extend_from_slice(b"}},\"scope\":{\"owner\":");
    write_string(&mut out, owner);
    out.extend_from_slice(b",\"agent\":");
    write_string(&mut out, provider);
    out.extend_from_slice(b",\"visibility\":\"private\"},\"time\":{\"created\":");
    write_string(&mut out, &time);
    out.extend_from_slice(b",\"observed\":");
    write_string(&mut out, &time);
    // What the provider kept as memory is likelier to hold than a single turn (the reference
    // importer gives curated CLAUDE.md/AGENTS.md sections 0.75).
    out.extend_from_slice(b"},\"lifecycle\":{\"status\":\"candidate\",\"confidence\":0.75}");
    write_provenance(&mut out, owner, provider, &memory.id);
    out.extend_from_slice(b",\"consent\":{\"exportable\":true}}");
    out
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
    /// JSON and NDJSON: one file under a temporary name.
    File(DirectWriter),
    /// Markdown: a staging folder beside the target.
    Folder(StagingFolder),
}

/// A folder built beside the target and renamed onto it on success; removed when dropped, so
/// after an error nothing is left (after success it has been renamed away).
struct StagingFolder(PathBuf);

impl Drop for StagingFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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
    /// Creates the sink; nothing appears at `target` until [`Sink::finish`].
    ///
    /// # Errors
    /// I/O errors, and for `ump-md` a target folder holding files other than `*.ump.md` (memport
    /// replaces only a folder of records).
    pub fn create(target: &Path, binding: Binding, owner: &str, sign_key: Option<SignKey>) -> Result<UmpSink, RunError> {
        let display = target.display().to_string();
        let io_error = |error: io::Error| RunError::write(&display, error);
        let parent = output_file::folder_of(target);
        std::fs::create_dir_all(parent).map_err(io_error)?;
        let output = match binding {
            Binding::Json | Binding::Ndjson => {
                let file = output_file::create_partial(target).map_err(io_error)?;
                let mut file = DirectWriter::new(file);
                if binding == Binding::Json {
                    file.write_all(b"[").map_err(io_error)?;
                }
                Output::File(file)
            }
            Binding::Markdown => {
                if target.is_file() {
                    return Err(io_error(io::Error::other(
                        "ump-md writes a folder of .ump.md files, and this is a file; name a folder with -o",
                    )));
                }
                if let Ok(entries) = std::fs::read_dir(target)
                    && let Some(foreign) = entries.flatten().find(|entry| !entry.file_name().to_string_lossy().ends_with(".ump.md"))
                {
                    return Err(io_error(io::Error::other(format!(
                        "this folder holds {}, which is not a .ump.md record, so memport will not replace it; name a new or empty folder with -o",
                        foreign.file_name().to_string_lossy()
                    ))));
                }
                let staging = tempfile::Builder::new().prefix(".memport-ump-").suffix(".partial").tempdir_in(parent).map_err(io_error)?;
                Output::Folder(StagingFolder(staging.keep()))
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
            Output::Folder(staging) => {
                for (id, record) in &batch.records {
                    let name = format!("{}.ump.md", id.trim_start_matches("urn:ump:"));
                    let content = markdown_file(record)?;
                    File::create_new(staging.0.join(name))?.write_all(&content)?;
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
                let temporary = file.into_temporary()?;
                bytes = output_file::persist(temporary, &target)?;
            }
            Output::Folder(staging) => {
                std::fs::set_permissions(&staging.0, std::fs::Permissions::from_mode(0o755))?;
                if target.exists() {
                    // Checked at the start to hold only records: the old folder goes as a whole.
                    std::fs::remove_dir_all(&target)?;
                }
                std::fs::rename(&staging.0, &target)?;
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

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let target = self.target.display().to_string();
        self.complete().map_err(|error| RunError::write(target, error))
    }
}
