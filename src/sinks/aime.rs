//! AIME v1.0 writer (`--to aime`, memory-formats.md §5): one JSON document in the spec's shape,
//! with a `messages` entry per written message.
//!
//! Messages are written as batches arrive; `metadata` (message count, date range) is known only
//! at the end, so it follows `messages` in the document (JSON members have no order). Provider
//! memories have no AIME type; they go to `extensions.memport.memories`, spooled to a temporary
//! file until the messages are done. Memories memport extracted go there too, with what
//! extraction knows in AIME's camelCase: type, slot, value, language, confidence, evidence (the
//! ids of the messages it was said in, with the spans), when first and last said, supersession,
//! entities and whether it is a contact detail kept on request. No `graph` is written, not even
//! for the entities (MemoryForge's importer throws on a spec-shaped one), and no `checksum` (the
//! spec defines no input for it).
//!
//! A sync's retractions ([`Sink::retract`]) go beside the memories, in
//! `extensions.memport.retractedConversations`: the spec puts a system's own data under
//! `extensions.<system>`, while `metadata` has fixed members that describe the document. One
//! object per conversation: `platform` and `session` as its messages' `metadata` name them,
//! `conversationTitle` and `created` when known, `retractedBy` and `retractedAt`. A memory
//! whose conversations were all retracted has `"retracted": true`. Messages a sync withdraws
//! (erased from its memory store since an earlier run wrote them) are listed the same way in
//! `withdrawnMessages`, each with its `messageIds`.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::RunError;
use crate::jcs::{write_string, write_string_array};
use crate::model::extracted::confidence_decimal;
use crate::model::extracted::{EXTRACTOR, Extracted};
use crate::model::{Conversation, Micros, RetractedConversation, Role};
use crate::sinks::direct_writer::DirectWriter;
use crate::sinks::entity_refs::write_entities_member;
use crate::sinks::written_tree::{is_written, nearest_written_ancestors};
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary, output_file};
use crate::timefmt::format_rfc3339;

const BUFFER: usize = 1 << 20;

/// Messages and memories of one batch, serialized on a worker thread.
#[derive(Debug, Default)]
pub struct EncodedBatch {
    /// `,\n`-prefixed message objects, back to back.
    messages: Vec<u8>,
    message_count: u64,
    /// Earliest and latest message time of the batch.
    time_range: Option<(Micros, Micros)>,
    /// `,\n`-prefixed memory objects for `extensions.memport.memories`.
    memories: Vec<u8>,
    memory_count: u64,
    /// Providers of the batch's conversations (for `metadata.tags`).
    providers: BTreeSet<&'static str>,
}

struct AimeEncoder;

impl Encoder for AimeEncoder {
    fn encode(&self, batch: &[Conversation]) -> Encoded {
        let mut encoded = EncodedBatch::default();
        for conversation in batch {
            encode_conversation(conversation, &mut encoded);
        }
        Encoded::Aime(encoded)
    }
}

/// The AIME message id: `<provider>:<conversation id>:<message id>`, stable across runs.
pub fn message_id(conversation: &Conversation, message_id: &str) -> String {
    message_id_of(conversation.provider.as_str(), &conversation.id, message_id)
}

/// [`message_id`] from the three ids, as an extracted memory's evidence names its message.
fn message_id_of(provider: &str, conversation_id: &str, message_id: &str) -> String {
    format!("{provider}:{conversation_id}:{message_id}")
}

/// Appends the members an extracted memory has beyond a provider memory's (after `content`).
/// Each piece of evidence names its message by the AIME id of the message's entry in
/// `messages` and its session; the sentence itself stays in that message.
fn write_extracted(out: &mut Vec<u8>, extracted: &Extracted) {
    out.extend_from_slice(b",\"type\":");
    write_string(out, extracted.memory_type.as_str());
    out.extend_from_slice(b",\"slot\":");
    write_string(out, extracted.slot);
    out.extend_from_slice(b",\"value\":");
    write_string(out, &extracted.value);
    out.extend_from_slice(b",\"language\":");
    write_string(out, extracted.language);
    out.extend_from_slice(b",\"confidence\":");
    out.extend_from_slice(confidence_decimal(extracted.confidence).as_bytes());
    out.extend_from_slice(b",\"evidence\":[");
    for (index, evidence) in extracted.evidence.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"messageId\":");
        write_string(out, &message_id_of(evidence.provider.as_str(), &evidence.conversation_id, &evidence.message_id));
        out.extend_from_slice(b",\"session\":");
        write_string(out, &evidence.conversation_id);
        out.extend_from_slice(format!(",\"span\":[{},{}],\"timestamp\":", evidence.span.0, evidence.span.1).as_bytes());
        write_string(out, &format_rfc3339(evidence.time));
        out.push(b'}');
    }
    out.extend_from_slice(format!("],\"evidenceCount\":{},\"firstSeen\":", extracted.evidence_count).as_bytes());
    write_string(out, &format_rfc3339(extracted.first_seen));
    out.extend_from_slice(b",\"lastSeen\":");
    write_string(out, &format_rfc3339(extracted.last_seen));
    if let Some(supersedes) = &extracted.supersedes {
        out.extend_from_slice(b",\"supersedes\":");
        write_string(out, supersedes);
    }
    if let Some(superseded_by) = &extracted.superseded_by {
        out.extend_from_slice(b",\"supersededBy\":");
        write_string(out, superseded_by);
    }
    write_entities_member(out, &extracted.entities);
    let personal = if extracted.personal { "true" } else { "false" };
    out.extend_from_slice(format!(",\"personal\":{personal}").as_bytes());
    out.extend_from_slice(b",\"extractor\":");
    write_string(out, EXTRACTOR);
    if extracted.retracted {
        out.extend_from_slice(b",\"retracted\":true");
    }
}

/// The `,"retractedConversations":[…]` member of `extensions.memport` (whole conversations)
/// and its `,"withdrawnMessages":[…]` (messages of one), each only when it has entries.
fn retracted_member(retracted: &[RetractedConversation]) -> Vec<u8> {
    let mut member = Vec::new();
    let (whole, of_messages) = RetractedConversation::whole_and_of_messages(retracted);
    for (name, listed) in [("retractedConversations", whole), ("withdrawnMessages", of_messages)] {
        if listed.is_empty() {
            continue;
        }
        member.extend_from_slice(format!(",\n\"{name}\":[").as_bytes());
        for (index, conversation) in listed.into_iter().enumerate() {
            member.extend_from_slice(if index == 0 { b"\n" } else { b",\n" });
            crate::sinks::retraction_json::write_object(&mut member, conversation, &crate::model::RetractionMemberNames::AIME);
        }
        member.extend_from_slice(b"\n]");
    }
    member
}

fn encode_conversation(conversation: &Conversation, out: &mut EncodedBatch) {
    let provider = conversation.provider.as_str();
    for memory in conversation.memories.iter().filter(|memory| memory.is_written() && !memory.text.trim().is_empty()) {
        out.memories.extend_from_slice(b",\n{\"id\":");
        write_string(&mut out.memories, &memory.id);
        out.memories.extend_from_slice(b",\"kind\":");
        write_string(&mut out.memories, memory.kind.as_str());
        out.memories.extend_from_slice(b",\"platform\":");
        write_string(&mut out.memories, provider);
        out.memories.extend_from_slice(b",\"created\":");
        write_string(&mut out.memories, &format_rfc3339(memory.created_at));
        out.memories.extend_from_slice(b",\"content\":");
        write_string(&mut out.memories, &memory.text);
        if !memory.labels.is_empty() {
            out.memories.extend_from_slice(b",\"labels\":");
            write_string_array(&mut out.memories, memory.labels.iter().map(String::as_str));
        } else if memory.extracted.as_deref().is_some_and(|extracted| extracted.personal) {
            // A contact detail kept on request: AIME has no export flag, so a label says it.
            out.memories.extend_from_slice(b",\"labels\":[\"personal\"]");
        }
        if let Some(extracted) = memory.extracted.as_deref() {
            write_extracted(&mut out.memories, extracted);
        } else if memory.retracted_in_input {
            // One its input withdrew stays withdrawn, as a retracted extracted memory is marked.
            out.memories.extend_from_slice(b",\"retracted\":true");
        }
        out.memories.push(b'}');
        out.memory_count += 1;
    }
    if conversation.memories_only {
        return;
    }
    out.providers.insert(provider);
    // For each written message (by position): the AIME id of the nearest written user message
    // on its path from the root, itself included, which an answer below it responds to.
    let ancestors = nearest_written_ancestors(conversation);
    let mut last_user: Vec<Option<String>> = vec![None; conversation.messages.len()];
    for (position, message) in conversation.messages.iter().enumerate() {
        if !is_written(message) {
            continue;
        }
        let inherited = ancestors[position].and_then(|ancestor| last_user[ancestor].clone());
        let id = message_id(conversation, &message.id);
        out.messages.extend_from_slice(b",\n{\"id\":");
        write_string(&mut out.messages, &id);
        out.messages.extend_from_slice(b",\"timestamp\":");
        write_string(&mut out.messages, &format_rfc3339(message.created_at));
        // AIME knows user, assistant and system; tool traffic is the assistant's side of the
        // conversation, with the original role kept in metadata.
        let role = match message.role {
            Role::Tool => "assistant",
            other => other.as_str(),
        };
        out.messages.extend_from_slice(b",\"role\":\"");
        out.messages.extend_from_slice(role.as_bytes());
        out.messages.extend_from_slice(b"\",\"content\":");
        write_string(&mut out.messages, &message.text);
        out.messages.extend_from_slice(b",\"metadata\":{\"session\":");
        write_string(&mut out.messages, &conversation.id);
        out.messages.extend_from_slice(b",\"platform\":");
        write_string(&mut out.messages, provider);
        if let Some(model) = &message.model {
            out.messages.extend_from_slice(b",\"model\":");
            write_string(&mut out.messages, model);
        }
        if let Some(title) = &conversation.title {
            out.messages.extend_from_slice(b",\"conversationTitle\":");
            write_string(&mut out.messages, title);
        }
        if message.role == Role::Tool {
            out.messages.extend_from_slice(b",\"originalRole\":\"tool\"");
        }
        // Zoneless provider times (Copilot) say which zone they were read in.
        if let Some(zone) = &conversation.assumed_time_zone {
            out.messages.extend_from_slice(b",\"assumedTimeZone\":");
            write_string(&mut out.messages, zone);
        }
        let mut tags = Vec::new();
        if message.is_thought {
            tags.push("thought");
        }
        if !message.on_active_branch {
            tags.push("off-branch");
        }
        if !tags.is_empty() {
            out.messages.extend_from_slice(b",\"tags\":");
            write_string_array(&mut out.messages, tags.iter().copied());
        }
        out.messages.push(b'}');
        if matches!(message.role, Role::Assistant | Role::Tool)
            && let Some(target) = &inherited
        {
            out.messages.extend_from_slice(b",\"relationships\":[{\"type\":\"RESPONDS_TO\",\"target\":");
            write_string(&mut out.messages, target);
            out.messages.extend_from_slice(b",\"strength\":1}]");
        }
        out.messages.push(b'}');
        out.message_count += 1;
        out.time_range = Some(match out.time_range {
            Some((start, end)) => (start.min(message.created_at), end.max(message.created_at)),
            None => (message.created_at, message.created_at),
        });
        last_user[position] = if message.role == Role::User { Some(id) } else { inherited };
    }
}

/// Writes one AIME document.
pub struct AimeSink {
    target: PathBuf,
    exported_at: Micros,
    output: DirectWriter,
    memory_spool: BufWriter<File>,
    messages: u64,
    memories: u64,
    time_range: Option<(Micros, Micros)>,
    providers: BTreeSet<&'static str>,
    /// A sync's retractions as the `retractedConversations` member, or nothing.
    retracted_member: Vec<u8>,
}

impl AimeSink {
    /// Creates the sink writing the file `target`, which must not exist (a run gives it a path
    /// in a staging folder); its spool is an unnamed temporary file beside it.
    ///
    /// # Errors
    /// I/O errors creating either.
    pub fn create(target: &Path, exported_at: Micros) -> Result<AimeSink, RunError> {
        let display = target.display().to_string();
        let folder = output_file::folder_of(target);
        let mut output = output_file::create_output(target).map_err(|error| RunError::write(&display, error))?;
        let memory_spool =
            BufWriter::with_capacity(BUFFER, tempfile::tempfile_in(folder).map_err(|error| RunError::write(&display, error))?);
        output.write_all(b"{\"format\":\"aime\",\"version\":\"1.0\",\"messages\":[").map_err(|error| RunError::write(&display, error))?;
        Ok(AimeSink {
            target: target.to_owned(),
            exported_at,
            output,
            memory_spool,
            messages: 0,
            memories: 0,
            time_range: None,
            providers: BTreeSet::new(),
            retracted_member: Vec::new(),
        })
    }

    fn write_encoded(&mut self, batch: EncodedBatch) -> io::Result<()> {
        if !batch.messages.is_empty() {
            // Every message starts with `,\n`; the array's first one drops the comma.
            let bytes = if self.messages == 0 { &batch.messages[1..] } else { &batch.messages[..] };
            self.output.write_all(bytes)?;
        }
        self.messages += batch.message_count;
        self.memory_spool.write_all(&batch.memories)?;
        self.memories += batch.memory_count;
        if let Some((start, end)) = batch.time_range {
            self.time_range = Some(self.time_range.map_or((start, end), |(first, last)| (first.min(start), last.max(end))));
        }
        self.providers.extend(batch.providers);
        Ok(())
    }

    fn complete(mut self) -> io::Result<SinkSummary> {
        let mut tail = Vec::with_capacity(1024);
        tail.extend_from_slice(b"\n],\n\"metadata\":{\"created\":");
        write_string(&mut tail, &format_rfc3339(self.exported_at));
        tail.extend_from_slice(concat!(",\"source\":\"memport ", env!("CARGO_PKG_VERSION"), "\"").as_bytes());
        let providers: Vec<&str> = self.providers.iter().copied().collect();
        let description = if providers.is_empty() {
            "AI assistant history converted by memport".to_owned()
        } else {
            format!("AI assistant history from {} exports, converted by memport", providers.join(", "))
        };
        tail.extend_from_slice(b",\"description\":");
        write_string(&mut tail, &description);
        tail.extend_from_slice(format!(",\"messageCount\":{}", self.messages).as_bytes());
        if let Some((start, end)) = self.time_range {
            tail.extend_from_slice(b",\"dateRange\":{\"start\":");
            write_string(&mut tail, &format_rfc3339(start));
            tail.extend_from_slice(b",\"end\":");
            write_string(&mut tail, &format_rfc3339(end));
            tail.push(b'}');
        }
        tail.extend_from_slice(b",\"tags\":");
        write_string_array(&mut tail, providers.iter().copied());
        tail.extend_from_slice(b",\"compressed\":false,\"encrypted\":false},\n\"extensions\":{\"memport\":{\"memories\":[");
        self.output.write_all(&tail)?;
        let mut spool = self.memory_spool.into_inner().map_err(io::IntoInnerError::into_error)?;
        spool.seek(SeekFrom::Start(0))?;
        let mut first_two = [0u8; 2];
        if self.memories > 0 {
            // Drop the first memory's leading `,` and keep its newline.
            io::Read::read_exact(&mut spool, &mut first_two)?;
            self.output.write_all(b"\n")?;
        }
        io::copy(&mut spool, &mut self.output)?;
        self.output.write_all(b"\n]")?;
        self.output.write_all(&self.retracted_member)?;
        self.output.write_all(b"}}}\n")?;
        let bytes = self.output.finish()?.metadata()?.len();
        Ok(SinkSummary { format: "aime", path: self.target.display().to_string(), records: self.messages + self.memories, bytes })
    }
}

impl Sink for AimeSink {
    fn encoder(&self) -> Arc<dyn Encoder> {
        Arc::new(AimeEncoder)
    }

    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError> {
        let Encoded::Aime(batch) = batch else {
            return Err(RunError::write(
                self.target.display().to_string(),
                io::Error::other("internal: the AIME sink got another sink's batch"),
            ));
        };
        self.write_encoded(batch).map_err(|error| RunError::write(self.target.display().to_string(), error))
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
    fn extracted_memories_carry_their_evidence_and_supersession() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("out.aime");
        let mut sink = AimeSink::create(&target, FIRST).unwrap();
        let encoded = sink.encoder().encode(&conversations());
        sink.write_batch(encoded).unwrap();
        Box::new(sink).finish().unwrap();
        let validation = crate::validate::aime::validate_file(&target).unwrap();
        assert!(validation.is_valid(), "{:?}", validation.problems);

        let document: Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
        let memories = document["extensions"]["memport"]["memories"].as_array().unwrap();
        assert_eq!(memories.len(), 4);
        let memory = |id: &str| memories.iter().find(|memory| memory["id"] == id).cloned().unwrap();
        let message = message_id_of("chatgpt", "c1", "m2");
        assert!(document["messages"].as_array().unwrap().iter().any(|entry| entry["id"] == message.as_str()));
        // A provider memory is written as before.
        assert!(memories.iter().any(|memory| memory["content"] == "Likes tea" && memory.get("type").is_none()));

        let new_home = memory(NEW_HOME);
        assert_eq!(new_home["kind"], "identity");
        assert_eq!(new_home["content"], "Lives in York");
        assert_eq!(new_home["type"], "identity");
        assert_eq!(new_home["slot"], "home");
        assert_eq!(new_home["value"], "York");
        assert_eq!(new_home["language"], "en");
        assert_eq!(new_home["confidence"], 0.95);
        let second = format_rfc3339(SECOND);
        assert_eq!(
            new_home["evidence"],
            json!([
                {"messageId": message.as_str(), "session": "c1", "span": [0, 16], "timestamp": second.as_str()},
                {"messageId": message.as_str(), "session": "c1", "span": [33, 52], "timestamp": second.as_str()}
            ])
        );
        assert_eq!(new_home["evidenceCount"], 2);
        assert_eq!(new_home["firstSeen"], second.as_str());
        assert_eq!(new_home["lastSeen"], second.as_str());
        assert_eq!(new_home["supersedes"], OLD_HOME);
        assert_eq!(new_home["entities"], json!([{"id": "ent-york", "name": "York", "kind": "place"}]));
        assert_eq!(new_home["personal"], false);
        assert_eq!(new_home["extractor"], crate::model::extracted::EXTRACTOR);
        assert!(new_home.get("labels").is_none());
        assert_eq!(memory(OLD_HOME)["supersededBy"], NEW_HOME);

        let email = memory(EMAIL);
        assert_eq!(email["personal"], true);
        assert_eq!(email["labels"], json!(["personal"]));
        assert!(email.get("retracted").is_none());
    }

    /// The fixture (its old home marked retracted when `old_home_retracted`), then `retracted`
    /// when given, written to `out.aime` in `folder`; its bytes.
    fn written(folder: &Path, retracted: Option<&[RetractedConversation]>, old_home_retracted: bool) -> Vec<u8> {
        let target = folder.join("out.aime");
        let mut sink = AimeSink::create(&target, FIRST).unwrap();
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
        let validation = crate::validate::aime::validate_file(&target).unwrap();
        assert!(validation.is_valid(), "{:?}", validation.problems);
        std::fs::read(&target).unwrap()
    }

    #[test]
    fn retractions_sit_beside_the_memories_in_the_memport_extension() {
        let folder = tempfile::tempdir().unwrap();
        let run = "20231116T000000Z-000000000002";
        let retraction = |provider: Provider, id: &str, title: Option<&str>, created_at: Option<Micros>| RetractedConversation {
            provider,
            conversation_id: id.to_owned(),
            title: title.map(str::to_owned),
            created_at,
            retracted_by: run.to_owned(),
            retracted_at: SECOND + 1_000_000,
            messages: Vec::new(),
        };
        // Given out of order: written by provider, then id.
        let retracted = [retraction(Provider::Grok, "x1", None, None), retraction(Provider::ChatGpt, "c0", Some("Old plans"), Some(FIRST))];
        let document: Value = serde_json::from_slice(&written(folder.path(), Some(&retracted), true)).unwrap();
        let memport = &document["extensions"]["memport"];
        assert_eq!(memport["memories"].as_array().unwrap().len(), 4);
        let retracted_at = format_rfc3339(SECOND + 1_000_000);
        assert_eq!(
            memport["retractedConversations"],
            json!([
                {
                    "platform": "chatgpt",
                    "session": "c0",
                    "conversationTitle": "Old plans",
                    "created": format_rfc3339(FIRST),
                    "retractedBy": run,
                    "retractedAt": retracted_at,
                },
                {"platform": "grok", "session": "x1", "retractedBy": run, "retractedAt": retracted_at},
            ])
        );
        let old_home = memport["memories"].as_array().unwrap().iter().find(|memory| memory["id"] == OLD_HOME).cloned().unwrap();
        assert_eq!(old_home["retracted"], true);
    }

    #[test]
    fn an_empty_retraction_list_changes_nothing() {
        let (told, untold) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        assert_eq!(written(told.path(), Some(&[]), false), written(untold.path(), None, false));
    }
}
