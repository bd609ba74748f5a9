//! AIME v1.0 documents as input (memory-formats.md §5): `messages` become messages, grouped by
//! `metadata.session` (messages without one form one conversation per run of them); memport's
//! `extensions.memport.memories` become memory records, and the conversations its
//! `retractedConversations` lists (a sync delta's) go to every output as retractions.
//!
//! memport's ids are `<platform>:<session>:<message id>`, so its documents give back the
//! provider's message ids. AIME has no parent links: an answer's `RESPONDS_TO` target is its
//! parent, and any other message follows the message before it. The spec's `graph`,
//! `compression` and `nlp` blocks, and other systems' extensions, have no place in the
//! canonical model and are not read.

use std::path::Path;

use serde_json::Value;

use crate::error::RunError;
use crate::model::{Conversation, MemoryKind, MemoryRecord, Origin, Provider, Role, Warnings};
use crate::sources::container::Entry;
use crate::sources::contract::{DecodeOptions, Decoded, Decoder, InputPlan, RecordReject};
use crate::sources::formats::grouped::{ArrayRecords, GroupingReader, string_at};
use crate::sources::formats::retractions;
use crate::sources::formats::{MessageFields, ParentLinks, decoded, memory_element, parse_group, push_turn, role_named, text_of};
use crate::sources::json_array::ArrayFramer;
use crate::timefmt::parse_rfc3339;

/// The grouped `messages` of an AIME document.
///
/// # Errors
/// I/O errors opening it.
pub fn message_records(entry: &Entry) -> Result<GroupingReader, RunError> {
    let framer = ArrayFramer::member_array(entry.open()?, "messages");
    Ok(GroupingReader::new(Box::new(ArrayRecords::new(framer, &entry.display)), session_key))
}

/// memport's provider memories of an AIME document (`extensions.memport.memories`), one by one.
///
/// # Errors
/// I/O errors opening it.
pub fn memory_records(entry: &Entry) -> Result<GroupingReader, RunError> {
    let framer = ArrayFramer::member_path(entry.open()?, &["extensions", "memport", "memories"]);
    Ok(GroupingReader::new(Box::new(ArrayRecords::new(framer, &entry.display)), |_| None))
}

/// Adds the retractions memport's extension lists (`extensions.memport.retractedConversations`,
/// a sync delta's, and its withdrawals of messages, `withdrawnMessages`) to `plan`, for every
/// output.
///
/// # Errors
/// I/O errors reading the file.
pub fn note_retractions(path: &Path, plan: &mut InputPlan) -> Result<(), RunError> {
    let display = path.display().to_string();
    type Read = fn(&Value, &crate::model::RetractionMemberNames) -> Option<crate::model::RetractedConversation>;
    let lists: [(&str, Read); 2] =
        [("retractedConversations", retractions::from_object), ("withdrawnMessages", retractions::withdrawal_from_object)];
    for (member, read) in lists {
        let file = crate::remote::open_path(path).map(std::io::BufReader::new).map_err(|error| RunError::read(&display, error))?;
        let mut framer = ArrayFramer::member_path(file, &["extensions", "memport", member]);
        let mut retracted = Vec::new();
        let mut unreadable = 0;
        // A list that breaks off is read up to the break: the records' own reading reports the file.
        while let Ok(Some(element)) = framer.next_element() {
            match serde_json::from_slice::<Value>(&element.bytes)
                .ok()
                .and_then(|entry| read(&entry, &crate::model::RetractionMemberNames::AIME))
            {
                Some(retraction) => retracted.push(retraction),
                None => unreadable += 1,
            }
        }
        crate::sources::formats::note_retractions(plan, &display, retracted, unreadable);
    }
    Ok(())
}

fn session_key(record: &[u8]) -> Option<String> {
    // Messages without a session belong together too (the spec's minimal export).
    Some(string_at(record, &["metadata", "session"]).unwrap_or_else(|| "\0".to_owned()))
}

/// Decodes groups of AIME messages, or memport's memories.
pub struct AimeDecoder {
    /// The stream is `extensions.memport.memories` rather than `messages`.
    pub memories: bool,
}

impl Decoder for AimeDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let (origin, records) = parse_group(bytes, &origin)?;
        let Some(first) = records.first() else { return Err(RecordReject::new(&origin, None, "an empty group".into())) };
        if self.memories {
            let memory = memory_of(first).map_err(|reason| RecordReject::new(&origin, first["id"].as_str(), reason))?;
            let provider = Provider::named(first["platform"].as_str().unwrap_or("aime"));
            return Ok(memory_element(provider, memory, origin));
        }
        Ok(conversation_of(&records, origin, options))
    }
}

fn memory_of(memory: &Value) -> Result<MemoryRecord, String> {
    let text = memory["content"].as_str().filter(|text| !text.trim().is_empty()).ok_or("a memory without `content` text")?.to_owned();
    let kind = memory["kind"].as_str().and_then(MemoryKind::named).ok_or("a memory whose `kind` memport does not know")?;
    let created_at = memory["created"].as_str().and_then(parse_rfc3339).ok_or("a memory without a readable `created` time")?;
    let labels = memory["labels"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
    let provider = Provider::named(memory["platform"].as_str().unwrap_or("aime"));
    let mut record = MemoryRecord::new(provider, kind, text, created_at, labels);
    if let Some(id) = memory["id"].as_str().filter(|id| !id.is_empty()) {
        record.id = id.to_owned();
    }
    // Withdrawn (a memory whose conversations a sync retracted): never current again.
    record.retracted_in_input = memory["retracted"].as_bool() == Some(true);
    Ok(record)
}

fn conversation_of(records: &[Value], origin: Origin, options: &DecodeOptions) -> Decoded {
    let first = &records[0];
    let platform = records.iter().find_map(|record| record["metadata"]["platform"].as_str()).unwrap_or("aime");
    let provider = Provider::named(platform);
    let session = first["metadata"]["session"].as_str().map(str::to_owned);
    // Messages without a session: one conversation named after its first message.
    let id = session.clone().unwrap_or_else(|| format!("aime-{}", first["id"].as_str().unwrap_or_default()));
    let mut holder = Conversation::empty(provider, id, origin);
    holder.title = records.iter().find_map(|record| text_of(&record["metadata"], "conversationTitle"));
    holder.assumed_time_zone = records.iter().find_map(|record| text_of(&record["metadata"], "assumedTimeZone"));
    let own_prefix = session.as_ref().map(|session| format!("{platform}:{session}:"));
    let mut links = ParentLinks::new();
    let mut warnings = Warnings::default();
    let mut rejected = Vec::new();
    let mut previous: Option<String> = None;
    for record in records {
        let Some(format_id) = record["id"].as_str().filter(|id| !id.is_empty()) else {
            rejected.push(RecordReject::new(&holder.origin, Some(&holder.id), "a message without an id".into()));
            continue;
        };
        let message_id = own_prefix.as_deref().and_then(|prefix| format_id.strip_prefix(prefix)).unwrap_or(format_id).to_owned();
        let Some(text) = record["content"].as_str() else {
            rejected.push(
                RecordReject::new(&holder.origin, Some(&holder.id), "a message without `content` text".into()).with_message(&message_id),
            );
            continue;
        };
        let metadata = &record["metadata"];
        let Some(mut role) = record["role"].as_str().and_then(role_named) else {
            let reason = format!("role {} is not user, assistant or system", record["role"]);
            rejected.push(RecordReject::new(&holder.origin, Some(&holder.id), reason).with_message(&message_id));
            continue;
        };
        if metadata["originalRole"] == "tool" {
            role = Role::Tool;
        }
        let tags: Vec<&str> = metadata["tags"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let mut fields = MessageFields::new(message_id.clone(), role, text.to_owned());
        fields.created_at = record["timestamp"].as_str().and_then(parse_rfc3339);
        fields.model = text_of(metadata, "model");
        fields.is_thought = tags.contains(&"thought");
        fields.on_active_branch = !tags.contains(&"off-branch");
        let responds_to = record["relationships"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|relation| relation["type"] == "RESPONDS_TO")
            .and_then(|relation| relation["target"].as_str());
        // An answer hangs under what it responds to; an answer that responds to nothing stays a
        // root (so a rewrite gives it no RESPONDS_TO either); other messages follow the one
        // before.
        fields.parent_id = match (responds_to, role) {
            (Some(target), _) => links.parent_of(Some(target), &mut warnings),
            (None, Role::Assistant | Role::Tool) => None,
            (None, _) => previous.clone(),
        };
        links.add(format_id, &message_id);
        previous = Some(message_id);
        push_turn(&mut holder, fields, options);
    }
    decoded(holder, rejected, warnings)
}
