//! The columns of extracted memories: the `memories` columns only they fill (null for the
//! provider's memories), and the rows of the `memory_evidence`, `entities` and `memory_entities`
//! tables. Rows are appended in the order the memories arrive, each memory's evidence and
//! entities in their own order, so the dataset stays the same at any thread count; which
//! partition a row goes to is [`super::columns`]' choice.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{
    BooleanBuilder, Float32Builder, Int32Builder, StringBuilder, StringDictionaryBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::types::Int32Type;

use crate::model::extracted::{EXTRACTOR, EntityRef, Evidence, Extracted};

/// A count or byte offset as the dataset's 32-bit integers; none comes near the limit, and a
/// saturated value is still a row rather than a failed run.
fn int32<T: TryInto<i32>>(value: T) -> i32 {
    value.try_into().unwrap_or(i32::MAX)
}

/// The `memories` columns after the provider memory's own (schema order).
#[derive(Default)]
pub(super) struct MemoryExtractionColumns {
    memory_type: StringDictionaryBuilder<Int32Type>,
    slot: StringDictionaryBuilder<Int32Type>,
    value: StringBuilder,
    language: StringDictionaryBuilder<Int32Type>,
    confidence: Float32Builder,
    evidence_count: Int32Builder,
    first_seen: TimestampMicrosecondBuilder,
    last_seen: TimestampMicrosecondBuilder,
    supersedes: StringBuilder,
    superseded_by: StringBuilder,
    personal: BooleanBuilder,
    extractor: StringDictionaryBuilder<Int32Type>,
    retracted: BooleanBuilder,
}

impl MemoryExtractionColumns {
    /// One row: what extraction knows about the memory, or nulls for a provider memory (but
    /// `retracted`, true for a memory `retracted_in_input`).
    pub(super) fn add(&mut self, extracted: Option<&Extracted>, retracted_in_input: bool) {
        let Some(extracted) = extracted else {
            self.memory_type.append_null();
            self.slot.append_null();
            self.value.append_null();
            self.language.append_null();
            self.confidence.append_null();
            self.evidence_count.append_null();
            self.first_seen.append_null();
            self.last_seen.append_null();
            self.supersedes.append_null();
            self.superseded_by.append_null();
            self.personal.append_null();
            self.extractor.append_null();
            self.retracted.append_option(retracted_in_input.then_some(true));
            return;
        };
        self.memory_type.append_value(extracted.memory_type.as_str());
        self.slot.append_value(extracted.slot);
        self.value.append_value(&extracted.value);
        self.language.append_value(extracted.language);
        self.confidence.append_value(extracted.confidence);
        self.evidence_count.append_value(int32(extracted.evidence_count));
        self.first_seen.append_value(extracted.first_seen);
        self.last_seen.append_value(extracted.last_seen);
        self.supersedes.append_option(extracted.supersedes.as_deref());
        self.superseded_by.append_option(extracted.superseded_by.as_deref());
        self.personal.append_value(extracted.personal);
        self.extractor.append_value(EXTRACTOR);
        self.retracted.append_value(extracted.retracted);
    }

    pub(super) fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.memory_type.finish()),
            Arc::new(self.slot.finish()),
            Arc::new(self.value.finish()),
            Arc::new(self.language.finish()),
            Arc::new(self.confidence.finish()),
            Arc::new(self.evidence_count.finish()),
            Arc::new(self.first_seen.finish().with_timezone("UTC")),
            Arc::new(self.last_seen.finish().with_timezone("UTC")),
            Arc::new(self.supersedes.finish()),
            Arc::new(self.superseded_by.finish()),
            Arc::new(self.personal.finish()),
            Arc::new(self.extractor.finish()),
            Arc::new(self.retracted.finish()),
        ]
    }
}

/// `memory_evidence`: where each memory was said.
#[derive(Default)]
pub(super) struct EvidenceColumns {
    /// The provider of the evidence's conversation (not the memory's: a memory said to two
    /// providers has evidence in both).
    pub(super) provider: StringDictionaryBuilder<Int32Type>,
    memory_id: StringBuilder,
    conversation_id: StringBuilder,
    message_id: StringBuilder,
    span_start: Int32Builder,
    span_end: Int32Builder,
    quote: StringBuilder,
    time: TimestampMicrosecondBuilder,
}

impl EvidenceColumns {
    pub(super) fn add(&mut self, memory_id: &str, evidence: &Evidence) {
        self.provider.append_value(evidence.provider.as_str());
        self.memory_id.append_value(memory_id);
        // The ids are the `Conversation::id` and `Message::id` the `messages` rows carry, and
        // this sink never splits a message, so they point at exactly one row there.
        self.conversation_id.append_value(&evidence.conversation_id);
        self.message_id.append_value(&evidence.message_id);
        self.span_start.append_value(int32(evidence.span.0));
        self.span_end.append_value(int32(evidence.span.1));
        self.quote.append_value(&evidence.text);
        self.time.append_value(evidence.time);
    }

    pub(super) fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.memory_id.finish()),
            Arc::new(self.conversation_id.finish()),
            Arc::new(self.message_id.finish()),
            Arc::new(self.span_start.finish()),
            Arc::new(self.span_end.finish()),
            Arc::new(self.quote.finish()),
            Arc::new(self.time.finish().with_timezone("UTC")),
        ]
    }
}

/// `entities`: each entity once, from the memory that first names it.
#[derive(Default)]
pub(super) struct EntityColumns {
    /// The provider of the memory that first names it.
    pub(super) provider: StringDictionaryBuilder<Int32Type>,
    entity_id: StringBuilder,
    name: StringBuilder,
    kind: StringDictionaryBuilder<Int32Type>,
    first_seen: TimestampMicrosecondBuilder,
}

impl EntityColumns {
    pub(super) fn add(&mut self, provider: &str, entity: &EntityRef) {
        self.provider.append_value(provider);
        self.entity_id.append_value(&entity.id);
        self.name.append_value(&entity.name);
        self.kind.append_value(entity.kind.as_str());
        self.first_seen.append_value(entity.first_seen);
    }

    pub(super) fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.entity_id.finish()),
            Arc::new(self.name.finish()),
            Arc::new(self.kind.finish()),
            Arc::new(self.first_seen.finish().with_timezone("UTC")),
        ]
    }
}

/// `memory_entities`: which memory names which entity.
#[derive(Default)]
pub(super) struct MemoryEntityColumns {
    /// The memory's provider.
    pub(super) provider: StringDictionaryBuilder<Int32Type>,
    memory_id: StringBuilder,
    entity_id: StringBuilder,
}

impl MemoryEntityColumns {
    pub(super) fn add(&mut self, provider: &str, memory_id: &str, entity: &EntityRef) {
        self.provider.append_value(provider);
        self.memory_id.append_value(memory_id);
        self.entity_id.append_value(&entity.id);
    }

    pub(super) fn finish(&mut self) -> Vec<ArrayRef> {
        vec![Arc::new(self.memory_id.finish()), Arc::new(self.entity_id.finish())]
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Int32Type, TimestampMicrosecondType};
    use arrow_array::{Array, RecordBatch};

    use crate::model::extracted::{EXTRACTOR, EntityKind, EntityRef, Evidence, Extracted, MemoryType};
    use crate::model::{Conversation, MemoryKind, MemoryRecord, Micros, Origin, Provider};
    use crate::sinks::parquet::columns::{TableBatches, encode};
    use crate::sinks::parquet::schema::Table;

    fn origin() -> Origin {
        Origin { file: "extraction".into(), offset: 0, index: 0 }
    }

    fn evidence(provider: Provider, conversation: &str, message: &str, time: Micros) -> Evidence {
        Evidence {
            provider,
            conversation_id: conversation.into(),
            message_id: message.into(),
            span: (4, 20),
            text: "I live in Leeds.".into(),
            time,
        }
    }

    fn entity(id: &str, name: &str, first_mention: bool) -> EntityRef {
        EntityRef { id: id.into(), name: name.into(), kind: EntityKind::Place, first_seen: 10, first_mention }
    }

    fn extracted_memory(id: &str, evidence: Vec<Evidence>, entities: Vec<EntityRef>, superseded_by: Option<&str>) -> MemoryRecord {
        let mut memory = MemoryRecord::new(Provider::ChatGpt, MemoryKind::Identity, format!("Memory {id}"), 10, Vec::new());
        memory.id = id.into();
        let evidence_count = u64::try_from(evidence.len()).unwrap();
        memory.extracted = Some(Box::new(Extracted {
            memory_type: MemoryType::Identity,
            slot: "home",
            value: "Leeds".into(),
            language: "en",
            confidence: 0.75,
            evidence,
            evidence_count,
            first_seen: 10,
            last_seen: 30,
            supersedes: None,
            superseded_by: superseded_by.map(str::to_owned),
            personal: false,
            entities,
            retracted: false,
        }));
        memory
    }

    /// Two extracted memories: the first said to ChatGPT and Claude, naming Leeds first; the
    /// second naming Leeds again and York first.
    fn extracted_batch() -> Vec<Conversation> {
        let first = extracted_memory(
            "mem-a",
            vec![evidence(Provider::ChatGpt, "c1", "m1", 10), evidence(Provider::Claude, "c2", "m2", 20)],
            vec![entity("ent-leeds", "Leeds", true)],
            Some("mem-b"),
        );
        let second = extracted_memory(
            "mem-b",
            vec![evidence(Provider::ChatGpt, "c3", "m3", 30)],
            vec![entity("ent-york", "York", true), entity("ent-leeds", "Leeds", false)],
            None,
        );
        vec![Conversation::memories_only(Provider::ChatGpt, "extracted-memories".into(), origin(), vec![first, second])]
    }

    fn table(tables: &TableBatches, partition: Option<Provider>, table: Table) -> Option<RecordBatch> {
        tables.partitions.get(&partition)?.iter().find(|(name, _)| *name == table).map(|(_, batch)| batch.clone())
    }

    /// A string column, plain or dictionary-encoded, nulls as `None`.
    fn strings(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
        let column = batch.column_by_name(name).unwrap();
        if let Some(dictionary) = column.as_dictionary_opt::<Int32Type>() {
            let values = dictionary.values().as_string::<i32>();
            dictionary.keys().iter().map(|key| key.map(|key| values.value(usize::try_from(key).unwrap()).to_owned())).collect()
        } else {
            column.as_string::<i32>().iter().map(|value| value.map(str::to_owned)).collect()
        }
    }

    fn some(values: &[&str]) -> Vec<Option<String>> {
        values.iter().map(|value| Some((*value).to_owned())).collect()
    }

    #[test]
    fn provider_memories_leave_the_extraction_columns_null_and_add_no_table() {
        let memory = MemoryRecord::new(Provider::Claude, MemoryKind::Fact, "Likes tea".into(), 10, Vec::new());
        let batch = vec![Conversation::memories_only(Provider::Claude, "memories".into(), origin(), vec![memory])];
        let tables = encode(&batch, false).unwrap();
        let names: Vec<Table> = tables.partitions[&None::<Provider>].iter().map(|(name, _)| *name).collect();
        assert_eq!(names, [Table::Memories]);
        let memories = table(&tables, None, Table::Memories).unwrap();
        let schema = Table::Memories.schema(true);
        let first_added = schema.index_of("memory_type").unwrap();
        for index in first_added..schema.fields().len() {
            assert_eq!(memories.column(index).null_count(), 1, "{} is null", schema.field(index).name());
        }
    }

    #[test]
    fn extracted_memories_fill_their_columns_and_tables_in_arrival_order() {
        let tables = encode(&extracted_batch(), false).unwrap();
        let memories = table(&tables, None, Table::Memories).unwrap();
        assert_eq!(strings(&memories, "memory_id"), some(&["mem-a", "mem-b"]));
        assert_eq!(strings(&memories, "memory_type"), some(&["identity", "identity"]));
        assert_eq!(strings(&memories, "slot"), some(&["home", "home"]));
        assert_eq!(strings(&memories, "extractor"), some(&[EXTRACTOR, EXTRACTOR]));
        assert_eq!(strings(&memories, "superseded_by"), vec![Some("mem-b".to_owned()), None]);
        assert_eq!(strings(&memories, "conversation_id"), vec![None::<String>, None], "no conversation of their own");
        let confidence = memories.column_by_name("confidence").unwrap().as_primitive::<Float32Type>().value(0);
        assert!((confidence - 0.75).abs() < f32::EPSILON);
        let counts = memories.column_by_name("evidence_count").unwrap().as_primitive::<Int32Type>();
        assert_eq!(counts.values().to_vec(), [2, 1]);
        let last_seen = memories.column_by_name("last_seen").unwrap().as_primitive::<TimestampMicrosecondType>();
        assert_eq!(last_seen.value(0), 30);
        assert!(!memories.column_by_name("personal").unwrap().as_boolean().value(0));
        assert!(!memories.column_by_name("retracted").unwrap().as_boolean().value(0));

        let evidence = table(&tables, None, Table::MemoryEvidence).unwrap();
        assert_eq!(strings(&evidence, "memory_id"), some(&["mem-a", "mem-a", "mem-b"]));
        assert_eq!(strings(&evidence, "provider"), some(&["chatgpt", "claude", "chatgpt"]), "each evidence's own provider");
        assert_eq!(strings(&evidence, "message_id"), some(&["m1", "m2", "m3"]));
        assert_eq!(strings(&evidence, "quote"), some(&["I live in Leeds."; 3]));
        let spans = evidence.column_by_name("span_end").unwrap().as_primitive::<Int32Type>();
        assert_eq!(spans.values().to_vec(), [20, 20, 20]);

        let entities = table(&tables, None, Table::Entities).unwrap();
        assert_eq!(strings(&entities, "entity_id"), some(&["ent-leeds", "ent-york"]), "once each, where first named");
        assert_eq!(strings(&entities, "kind"), some(&["place", "place"]));
        let links = table(&tables, None, Table::MemoryEntities).unwrap();
        assert_eq!(strings(&links, "memory_id"), some(&["mem-a", "mem-b", "mem-b"]));
        assert_eq!(strings(&links, "entity_id"), some(&["ent-leeds", "ent-york", "ent-leeds"]));
    }

    #[test]
    fn a_retracted_memory_says_so() {
        let mut batch = extracted_batch();
        if let Some(extracted) = batch[0].memories[1].extracted.as_deref_mut() {
            extracted.retracted = true;
        }
        let memories = table(&encode(&batch, false).unwrap(), None, Table::Memories).unwrap();
        let retracted = memories.column_by_name("retracted").unwrap().as_boolean();
        assert_eq!((retracted.value(0), retracted.value(1)), (false, true));
    }

    #[test]
    fn partitioned_evidence_goes_to_the_folder_of_its_message() {
        let tables = encode(&extracted_batch(), true).unwrap();
        let chatgpt = table(&tables, Some(Provider::ChatGpt), Table::MemoryEvidence).unwrap();
        assert_eq!(strings(&chatgpt, "message_id"), some(&["m1", "m3"]));
        assert!(chatgpt.column_by_name("provider").is_none(), "the folder carries it");
        let claude = table(&tables, Some(Provider::Claude), Table::MemoryEvidence).unwrap();
        assert_eq!(strings(&claude, "message_id"), some(&["m2"]));
        assert!(table(&tables, Some(Provider::Claude), Table::Memories).is_none(), "the memory stays with its own provider");
        assert_eq!(table(&tables, Some(Provider::ChatGpt), Table::Memories).unwrap().num_rows(), 2);
    }
}
