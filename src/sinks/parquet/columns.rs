//! Turns a batch of conversations into Arrow record batches, one per table (and per provider
//! when the dataset is partitioned). Runs on the worker pool; the sink only writes. The
//! columns only extracted memories fill are built in `extracted_columns.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int32Builder, Int64Builder, ListBuilder, StringBuilder, StringDictionaryBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::ArrowError;

use crate::hash::{pam_content_digest, push_hex};
use crate::jcs::write_string;
use crate::model::{Asset, Conversation, Disposition, MemoryRecord, Message, Part, Provider, SkipReason};
use crate::sinks::parquet::extracted_columns::{EntityColumns, EvidenceColumns, MemoryEntityColumns, MemoryExtractionColumns};
use crate::sinks::parquet::schema::Table;

/// The record batches of one batch of conversations: per partition (a provider, or `None` when
/// the dataset is not partitioned), one batch per table that has rows.
#[derive(Debug, Default)]
pub struct TableBatches {
    /// Partition → table → rows.
    pub partitions: BTreeMap<Option<Provider>, Vec<(Table, RecordBatch)>>,
}

/// What a message's `disposition` column says.
pub fn disposition_name(disposition: Disposition) -> &'static str {
    match disposition {
        Disposition::Keep => "written",
        Disposition::Duplicate => "duplicate",
        Disposition::Skip(reason) => reason.as_str(),
    }
}

/// Builds the tables of `batch`.
///
/// # Errors
/// [`ArrowError`] only if a built column does not match its schema, which the tests rule out.
pub fn encode(batch: &[Conversation], partition_by_provider: bool) -> Result<TableBatches, ArrowError> {
    let size = BatchSize::of(batch);
    let mut partitions: BTreeMap<Option<Provider>, Columns> = BTreeMap::new();
    for conversation in batch {
        partition(&mut partitions, conversation.provider, partition_by_provider, &size).add(conversation);
        // Evidence goes to the partition of the conversation it was said in, not the memory's:
        // a memory said to two providers has evidence in both, and under `--partition-by
        // provider` the folder's provider is what joins an evidence row to its message.
        for memory in conversation.memories.iter().filter(|memory| memory.is_written()) {
            for evidence in memory.extracted.iter().flat_map(|extracted| &extracted.evidence) {
                partition(&mut partitions, evidence.provider, partition_by_provider, &size).evidence.add(&memory.id, evidence);
            }
        }
    }
    let mut out = TableBatches::default();
    for (key, columns) in partitions {
        out.partitions.insert(key, columns.finish()?);
    }
    Ok(out)
}

/// The column builders of `provider`'s partition (the only one when the dataset is not
/// partitioned).
fn partition<'a>(
    partitions: &'a mut BTreeMap<Option<Provider>, Columns>,
    provider: Provider,
    partition_by_provider: bool,
    size: &BatchSize,
) -> &'a mut Columns {
    partitions.entry(partition_by_provider.then_some(provider)).or_insert_with(|| Columns::new(!partition_by_provider, size))
}

/// How much a batch holds, to size the large builders once: growing them by doubling touches
/// (and the allocator zeroes) about twice the memory, which cost more than building the rows.
struct BatchSize {
    messages: usize,
    text_bytes: usize,
    id_bytes: usize,
    metadata_bytes: usize,
}

impl BatchSize {
    fn of(batch: &[Conversation]) -> Self {
        let mut size = BatchSize { messages: 0, text_bytes: 0, id_bytes: 0, metadata_bytes: 0 };
        for conversation in batch {
            size.messages += conversation.messages.len();
            for message in &conversation.messages {
                size.text_bytes += message.text.len();
                size.id_bytes += conversation.id.len() + message.id.len();
                size.metadata_bytes += message.provider_fields.as_deref().map_or(0, str::len);
                if !message.parts.is_empty() {
                    size.metadata_bytes += message.text.len() + 64 * message.parts.len();
                }
            }
        }
        size
    }
}

/// Column builders of every table for one partition.
struct Columns {
    with_provider: bool,
    conversations: ConversationColumns,
    messages: MessageColumns,
    memories: MemoryColumns,
    assets: AssetColumns,
    evidence: EvidenceColumns,
    entities: EntityColumns,
    memory_entities: MemoryEntityColumns,
}

impl Columns {
    fn new(with_provider: bool, size: &BatchSize) -> Self {
        let mut messages = MessageColumns::default();
        let rows = size.messages;
        messages.conversation_id = StringBuilder::with_capacity(rows, size.id_bytes / 2 + rows);
        messages.message_id = StringBuilder::with_capacity(rows, size.id_bytes / 2 + rows);
        messages.parent_id = StringBuilder::with_capacity(rows, size.id_bytes / 2 + rows);
        messages.text = StringBuilder::with_capacity(rows, size.text_bytes);
        messages.content_hash = StringBuilder::with_capacity(rows, rows * 71);
        messages.metadata = StringBuilder::with_capacity(rows, size.metadata_bytes + rows * 16);
        Columns {
            with_provider,
            conversations: ConversationColumns::default(),
            messages,
            memories: MemoryColumns::default(),
            assets: AssetColumns::default(),
            evidence: EvidenceColumns::default(),
            entities: EntityColumns::default(),
            memory_entities: MemoryEntityColumns::default(),
        }
    }

    fn add(&mut self, conversation: &Conversation) {
        let provider = conversation.provider.as_str();
        if !conversation.memories_only {
            self.conversations.add(provider, conversation);
        }
        // Every message read has a row, but what may go nowhere: a message erased in the memory
        // store, one its owner marked as not for export, or one its input withdrew.
        let rows = conversation.messages.iter().enumerate().filter(|(_, message)| {
            !matches!(message.disposition, Disposition::Skip(SkipReason::Erased | SkipReason::NotExportable | SkipReason::Retracted))
        });
        for (position, message) in rows {
            self.messages.add(provider, conversation, position, message);
            for asset in message_assets(message) {
                self.assets.add(provider, conversation, message, asset);
            }
        }
        for memory in conversation.memories.iter().filter(|memory| memory.is_written()) {
            self.memories.add(provider, conversation, memory);
            for entity in memory.extracted.iter().flat_map(|extracted| &extracted.entities) {
                // Each entity is first named by exactly one memory of the run: written there, once.
                if entity.first_mention {
                    self.entities.add(provider, entity);
                }
                self.memory_entities.add(provider, &memory.id, entity);
            }
        }
    }

    fn finish(mut self) -> Result<Vec<(Table, RecordBatch)>, ArrowError> {
        let with_provider = self.with_provider;
        let mut tables = Vec::with_capacity(Table::ALL.len());
        let mut push = |table: Table, provider: &mut StringDictionaryBuilder<Int32Type>, mut columns: Vec<ArrayRef>| {
            if columns.first().is_none_or(|column| column.is_empty()) {
                return Ok::<(), ArrowError>(());
            }
            if with_provider {
                columns.insert(0, Arc::new(provider.finish()));
            }
            tables.push((table, RecordBatch::try_new(table.schema(with_provider), columns)?));
            Ok(())
        };
        let columns = self.conversations.finish();
        push(Table::Conversations, &mut self.conversations.provider, columns)?;
        let columns = self.messages.finish();
        push(Table::Messages, &mut self.messages.provider, columns)?;
        let columns = self.memories.finish();
        push(Table::Memories, &mut self.memories.provider, columns)?;
        let columns = self.assets.finish();
        push(Table::Assets, &mut self.assets.provider, columns)?;
        let columns = self.evidence.finish();
        push(Table::MemoryEvidence, &mut self.evidence.provider, columns)?;
        let columns = self.entities.finish();
        push(Table::Entities, &mut self.entities.provider, columns)?;
        let columns = self.memory_entities.finish();
        push(Table::MemoryEntities, &mut self.memory_entities.provider, columns)?;
        Ok(tables)
    }
}

fn message_assets(message: &Message) -> impl Iterator<Item = &Asset> {
    message.parts.iter().filter_map(|part| match part {
        Part::Asset(asset) => Some(asset),
        _ => None,
    })
}

fn count_i32(count: usize) -> i32 {
    i32::try_from(count).unwrap_or(i32::MAX)
}

#[derive(Default)]
struct ConversationColumns {
    provider: StringDictionaryBuilder<Int32Type>,
    conversation_id: StringBuilder,
    title: StringBuilder,
    created_at: TimestampMicrosecondBuilder,
    updated_at: TimestampMicrosecondBuilder,
    model: StringDictionaryBuilder<Int32Type>,
    is_archived: BooleanBuilder,
    message_count: Int32Builder,
    written_count: Int32Builder,
    first_message_at: TimestampMicrosecondBuilder,
    last_message_at: TimestampMicrosecondBuilder,
    system_instruction: StringBuilder,
    assumed_time_zone: StringDictionaryBuilder<Int32Type>,
    is_repeat: BooleanBuilder,
    source_file: StringDictionaryBuilder<Int32Type>,
    source_offset: Int64Builder,
}

impl ConversationColumns {
    fn add(&mut self, provider: &str, conversation: &Conversation) {
        self.provider.append_value(provider);
        self.conversation_id.append_value(&conversation.id);
        self.title.append_option(conversation.title.as_deref());
        self.created_at.append_option(conversation.created_at);
        self.updated_at.append_option(conversation.updated_at);
        self.model.append_option(conversation.model.as_deref());
        self.is_archived.append_value(conversation.is_archived);
        self.message_count.append_value(count_i32(conversation.messages.len()));
        let written = conversation.messages.iter().filter(|message| message.disposition == Disposition::Keep);
        let (mut count, mut first, mut last) = (0, None::<i64>, None::<i64>);
        for message in written {
            count += 1;
            first = Some(first.map_or(message.created_at, |time| time.min(message.created_at)));
            last = Some(last.map_or(message.created_at, |time| time.max(message.created_at)));
        }
        self.written_count.append_value(count_i32(count));
        self.first_message_at.append_option(first);
        self.last_message_at.append_option(last);
        self.system_instruction.append_option(conversation.system_instruction.as_deref());
        self.assumed_time_zone.append_option(conversation.assumed_time_zone.as_deref());
        self.is_repeat.append_value(conversation.is_repeat);
        self.source_file.append_value(&*conversation.origin.file);
        self.source_offset.append_value(i64::try_from(conversation.origin.offset).unwrap_or(i64::MAX));
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.conversation_id.finish()),
            Arc::new(self.title.finish()),
            Arc::new(self.created_at.finish().with_timezone("UTC")),
            Arc::new(self.updated_at.finish().with_timezone("UTC")),
            Arc::new(self.model.finish()),
            Arc::new(self.is_archived.finish()),
            Arc::new(self.message_count.finish()),
            Arc::new(self.written_count.finish()),
            Arc::new(self.first_message_at.finish().with_timezone("UTC")),
            Arc::new(self.last_message_at.finish().with_timezone("UTC")),
            Arc::new(self.system_instruction.finish()),
            Arc::new(self.assumed_time_zone.finish()),
            Arc::new(self.is_repeat.finish()),
            Arc::new(self.source_file.finish()),
            Arc::new(self.source_offset.finish()),
        ]
    }
}

#[derive(Default)]
struct MessageColumns {
    provider: StringDictionaryBuilder<Int32Type>,
    conversation_id: StringBuilder,
    message_id: StringBuilder,
    parent_id: StringBuilder,
    position: Int32Builder,
    role: StringDictionaryBuilder<Int32Type>,
    author_name: StringDictionaryBuilder<Int32Type>,
    model: StringDictionaryBuilder<Int32Type>,
    created_at: TimestampMicrosecondBuilder,
    time_known: BooleanBuilder,
    text: StringBuilder,
    text_chars: Int32Builder,
    content_hash: StringBuilder,
    disposition: StringDictionaryBuilder<Int32Type>,
    on_active_branch: BooleanBuilder,
    is_hidden: BooleanBuilder,
    is_thought: BooleanBuilder,
    status: StringDictionaryBuilder<Int32Type>,
    asset_count: Int32Builder,
    metadata: StringBuilder,
    /// Scratch space for hex digests and metadata JSON.
    scratch: String,
    json: Vec<u8>,
}

impl MessageColumns {
    fn add(&mut self, provider: &str, conversation: &Conversation, position: usize, message: &Message) {
        self.provider.append_value(provider);
        self.conversation_id.append_value(&conversation.id);
        self.message_id.append_value(&message.id);
        self.parent_id.append_option(message.parent_id.as_deref());
        self.position.append_value(count_i32(position));
        self.role.append_value(message.role.as_str());
        self.author_name.append_option(message.author_name.as_deref());
        self.model.append_option(message.model.as_deref());
        self.created_at.append_value(message.created_at);
        self.time_known.append_value(message.time_known);
        self.text.append_value(&message.text);
        self.text_chars.append_value(count_i32(message.text.chars().count()));
        self.scratch.clear();
        self.scratch.push_str("sha256:");
        // Sources hash only the messages that flow on; the dataset has every message.
        match message.content_key.pam_digest {
            Some(digest) => push_hex(&mut self.scratch, &digest),
            None => push_hex(&mut self.scratch, &pam_content_digest(&message.text)),
        }
        self.content_hash.append_value(&self.scratch);
        self.disposition.append_value(disposition_name(message.disposition));
        self.on_active_branch.append_value(message.on_active_branch);
        self.is_hidden.append_value(message.disposition == Disposition::Skip(SkipReason::Hidden));
        self.is_thought.append_value(message.is_thought);
        self.status.append_option(message.status.as_deref());
        self.asset_count.append_value(count_i32(message_assets(message).count()));
        if message.parts.is_empty() && message.provider_fields.is_none() {
            self.metadata.append_null();
        } else {
            self.json.clear();
            write_metadata_json(&mut self.json, &message.parts, message.provider_fields.as_deref());
            // Valid UTF-8 by construction: strings go through `write_string`, raw fields are
            // slices of the UTF-8 input.
            match std::str::from_utf8(&self.json) {
                Ok(json) => self.metadata.append_value(json),
                Err(_) => self.metadata.append_value(String::from_utf8_lossy(&self.json)),
            }
        }
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.conversation_id.finish()),
            Arc::new(self.message_id.finish()),
            Arc::new(self.parent_id.finish()),
            Arc::new(self.position.finish()),
            Arc::new(self.role.finish()),
            Arc::new(self.author_name.finish()),
            Arc::new(self.model.finish()),
            Arc::new(self.created_at.finish().with_timezone("UTC")),
            Arc::new(self.time_known.finish()),
            Arc::new(self.text.finish()),
            Arc::new(self.text_chars.finish()),
            Arc::new(self.content_hash.finish()),
            Arc::new(self.disposition.finish()),
            Arc::new(self.on_active_branch.finish()),
            Arc::new(self.is_hidden.finish()),
            Arc::new(self.is_thought.finish()),
            Arc::new(self.status.finish()),
            Arc::new(self.asset_count.finish()),
            Arc::new(self.metadata.finish()),
        ]
    }
}

/// A message's `metadata` JSON: `{"parts":[…],"provider":{…}}`, each member only when there
/// is something to say. `parts` are the typed parts of a multi-part message (unknown content
/// embedded as the provider wrote it); `provider` the provider's own fields memport does not
/// model, as written.
pub fn write_metadata_json(out: &mut Vec<u8>, parts: &[Part], provider_fields: Option<&str>) {
    out.push(b'{');
    if !parts.is_empty() {
        out.extend_from_slice(b"\"parts\":");
        write_parts_json(out, parts);
    }
    if let Some(fields) = provider_fields {
        if !parts.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(b"\"provider\":");
        // As written, unless an unpaired surrogate escape would make strict readers refuse it.
        if crate::json_embed::has_unpaired_surrogate_escape(fields.as_bytes()) {
            write_string(out, fields);
        } else {
            out.extend_from_slice(fields.as_bytes());
        }
    }
    out.push(b'}');
}

/// The typed parts as a JSON array: `[{"type":…},…]`.
pub fn write_parts_json(out: &mut Vec<u8>, parts: &[Part]) {
    out.push(b'[');
    for (index, part) in parts.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        match part {
            Part::Text(text) => {
                out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                write_string(out, text);
            }
            Part::Thinking(text) => {
                out.extend_from_slice(b"{\"type\":\"thinking\",\"text\":");
                write_string(out, text);
            }
            Part::Code { language, text } => {
                out.extend_from_slice(b"{\"type\":\"code\",\"language\":");
                write_string(out, language);
                out.extend_from_slice(b",\"text\":");
                write_string(out, text);
            }
            Part::Asset(asset) => {
                out.extend_from_slice(b"{\"type\":\"asset\",\"kind\":\"");
                out.extend_from_slice(asset.kind.as_str().as_bytes());
                out.extend_from_slice(b"\",\"pointer\":");
                write_string(out, &asset.pointer);
                if let Some(resolved) = &asset.resolved {
                    out.extend_from_slice(b",\"resolved\":");
                    write_string(out, resolved);
                }
                if let Some(name) = &asset.name {
                    out.extend_from_slice(b",\"name\":");
                    write_string(out, name);
                }
            }
            Part::Raw { content_type, json } => {
                out.extend_from_slice(b"{\"type\":\"raw\",\"content_type\":");
                write_string(out, content_type);
                out.extend_from_slice(b",\"content\":");
                // Raw parts hold compact JSON that a decoder produced; a string keeps anything
                // else valid.
                crate::json_embed::write_json_or_string(out, json);
            }
        }
        out.push(b'}');
    }
    out.push(b']');
}

#[derive(Default)]
struct MemoryColumns {
    provider: StringDictionaryBuilder<Int32Type>,
    memory_id: StringBuilder,
    kind: StringDictionaryBuilder<Int32Type>,
    text: StringBuilder,
    text_chars: Int32Builder,
    created_at: TimestampMicrosecondBuilder,
    labels: ListBuilder<StringBuilder>,
    conversation_id: StringBuilder,
    source_file: StringDictionaryBuilder<Int32Type>,
    /// Null for the provider's memories.
    extracted: MemoryExtractionColumns,
}

impl MemoryColumns {
    fn add(&mut self, provider: &str, conversation: &Conversation, memory: &MemoryRecord) {
        self.provider.append_value(provider);
        self.memory_id.append_value(&memory.id);
        self.kind.append_value(memory.kind.as_str());
        self.text.append_value(&memory.text);
        self.text_chars.append_value(count_i32(memory.text.chars().count()));
        self.created_at.append_value(memory.created_at);
        for label in &memory.labels {
            self.labels.values().append_value(label);
        }
        self.labels.append(true);
        // An extracted memory's conversations are its evidence's (read back, the record that
        // carried it is no more its conversation than the one a direct run writes it in).
        let carried_by = !conversation.memories_only && memory.extracted.is_none();
        self.conversation_id.append_option(carried_by.then_some(conversation.id.as_str()));
        self.source_file.append_value(&*conversation.origin.file);
        self.extracted.add(memory.extracted.as_deref(), memory.retracted_in_input);
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.memory_id.finish()),
            Arc::new(self.kind.finish()),
            Arc::new(self.text.finish()),
            Arc::new(self.text_chars.finish()),
            Arc::new(self.created_at.finish().with_timezone("UTC")),
            Arc::new(self.labels.finish()),
            Arc::new(self.conversation_id.finish()),
            Arc::new(self.source_file.finish()),
        ];
        columns.extend(self.extracted.finish());
        columns
    }
}

#[derive(Default)]
struct AssetColumns {
    provider: StringDictionaryBuilder<Int32Type>,
    conversation_id: StringBuilder,
    message_id: StringBuilder,
    kind: StringDictionaryBuilder<Int32Type>,
    pointer: StringBuilder,
    resolved: StringBuilder,
    name: StringBuilder,
    is_missing: BooleanBuilder,
}

impl AssetColumns {
    fn add(&mut self, provider: &str, conversation: &Conversation, message: &Message, asset: &Asset) {
        self.provider.append_value(provider);
        self.conversation_id.append_value(&conversation.id);
        self.message_id.append_value(&message.id);
        self.kind.append_value(asset.kind.as_str());
        self.pointer.append_value(&asset.pointer);
        self.resolved.append_option(asset.resolved.as_deref());
        self.name.append_option(asset.name.as_deref());
        self.is_missing.append_value(asset.resolved.is_none());
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.conversation_id.finish()),
            Arc::new(self.message_id.finish()),
            Arc::new(self.kind.finish()),
            Arc::new(self.pointer.finish()),
            Arc::new(self.resolved.finish()),
            Arc::new(self.name.finish()),
            Arc::new(self.is_missing.finish()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AssetKind;

    #[test]
    fn parts_json_is_valid_and_keeps_raw_content() {
        let parts = vec![
            Part::Text("héllo \"x\"".into()),
            Part::Code { language: "rust".into(), text: "fn main() {}\n".into() },
            Part::Asset(Asset { kind: AssetKind::Image, pointer: "file-service://a".into(), resolved: None, name: Some("a.png".into()) }),
            Part::Raw { content_type: "future_thing".into(), json: "{\"k\":[1,2]}".into() },
            Part::Raw { content_type: "broken".into(), json: "{not json".into() },
        ];
        let mut out = Vec::new();
        write_metadata_json(&mut out, &parts, Some(r#"{"metadata":{"x":1}}"#));
        let value: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
        assert_eq!(value["provider"]["metadata"]["x"], 1);
        assert_eq!(value["parts"][3]["content"]["k"][1], 2);
        assert_eq!(value["parts"][4]["content"], "{not json");
        assert_eq!(value["parts"][2]["name"], "a.png");
        assert!(value["parts"][2].get("resolved").is_none());
    }
}
