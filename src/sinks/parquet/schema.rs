//! The Parquet dataset's tables: their Arrow schemas and the writer settings of each column.
//!
//! The schema is the contract analysts query against (docs/formats/parquet.md). Change a
//! column and you change [`SCHEMA_VERSION`].

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

/// Version of the dataset layout, in every file's key-value metadata as `memport.schema_version`.
pub const SCHEMA_VERSION: &str = "4";

/// Most rows in one row group (DuckDB's own default). Row groups close at this many rows or
/// at the layout's encoded size, whichever comes first: a table of small rows (conversations,
/// memories, assets) otherwise grew its open row group with the input, and peak memory with it.
pub const ROW_GROUP_ROWS: usize = 122_880;

/// The tables of the dataset, each a folder of part files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// One row per conversation read.
    Conversations,
    /// One row per message read, written or not (`disposition` says which).
    Messages,
    /// One row per memory written: the provider's, and those memport extracted.
    Memories,
    /// One row per asset pointer of a message.
    Assets,
    /// One row per piece of evidence of an extracted memory: the message it was said in.
    MemoryEvidence,
    /// One row per entity the extracted memories name, written where it is first named.
    Entities,
    /// One row per entity an extracted memory names.
    MemoryEntities,
    /// One row per conversation a sync retracts; written only when there is one.
    Retractions,
}

impl Table {
    /// Every table an unpartitioned dataset always has (with an empty part when it has no
    /// rows, so its glob always matches), in the order their folders are written.
    pub const ALL: [Table; 7] = [
        Table::Conversations,
        Table::Messages,
        Table::Memories,
        Table::Assets,
        Table::MemoryEvidence,
        Table::Entities,
        Table::MemoryEntities,
    ];

    /// The tables only some runs write: `retractions`, which only a sync that retracts
    /// something writes (its absence says nothing was retracted).
    pub const OCCASIONAL: [Table; 1] = [Table::Retractions];

    /// Every table a dataset can have: [`Table::ALL`], then [`Table::OCCASIONAL`].
    pub fn every() -> impl Iterator<Item = Table> {
        Table::ALL.into_iter().chain(Table::OCCASIONAL)
    }

    /// Folder name, also the `memport.table` metadata value.
    pub fn name(self) -> &'static str {
        match self {
            Table::Conversations => "conversations",
            Table::Messages => "messages",
            Table::Memories => "memories",
            Table::Assets => "assets",
            Table::MemoryEvidence => "memory_evidence",
            Table::Entities => "entities",
            Table::MemoryEntities => "memory_entities",
            Table::Retractions => "retractions",
        }
    }

    /// The table's Arrow schema; without the `provider` column when the dataset is partitioned
    /// by provider (the folder name carries it, Hive style).
    pub fn schema(self, with_provider: bool) -> SchemaRef {
        let mut fields = Vec::with_capacity(24);
        if with_provider {
            fields.push(dictionary("provider", false));
        }
        fields.extend(match self {
            Table::Conversations => conversation_fields(),
            Table::Messages => message_fields(),
            Table::Memories => memory_fields(),
            Table::Assets => asset_fields(),
            Table::MemoryEvidence => evidence_fields(),
            Table::Entities => entity_fields(),
            Table::MemoryEntities => memory_entity_fields(),
            Table::Retractions => retraction_fields(),
        });
        let metadata = HashMap::from([
            ("memport.schema_version".to_owned(), SCHEMA_VERSION.to_owned()),
            ("memport.table".to_owned(), self.name().to_owned()),
        ]);
        Arc::new(Schema::new_with_metadata(fields, metadata))
    }

    /// Writer settings: zstd, row groups closed by size, and no dictionary or statistics on
    /// long unique strings, where they cost time and help no query.
    pub fn writer_properties(self, max_row_group_bytes: usize) -> WriterProperties {
        let mut builder = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_bytes(Some(max_row_group_bytes.max(1)))
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_key_value_metadata(Some(vec![
                KeyValue::new("memport.schema_version".to_owned(), SCHEMA_VERSION.to_owned()),
                KeyValue::new("memport.table".to_owned(), self.name().to_owned()),
            ]));
        for column in self.unique_text_columns() {
            builder = builder
                .set_column_dictionary_enabled(ColumnPath::from(*column), false)
                .set_column_statistics_enabled(ColumnPath::from(*column), EnabledStatistics::None);
        }
        builder.build()
    }

    fn unique_text_columns(self) -> &'static [&'static str] {
        match self {
            Table::Conversations => &["conversation_id", "title", "system_instruction"],
            Table::Messages => &["message_id", "parent_id", "text", "content_hash", "metadata"],
            Table::Memories => &["memory_id", "text", "supersedes", "superseded_by"],
            Table::Assets => &["message_id", "pointer", "resolved", "name"],
            Table::MemoryEvidence => &["memory_id", "message_id", "quote"],
            Table::Entities => &["entity_id"],
            // Both ids repeat: a memory names several entities, an entity is named by many.
            Table::MemoryEntities => &[],
            Table::Retractions => &["conversation_id", "title", "message_id"],
        }
    }
}

/// A UTC timestamp with microsecond precision.
pub fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

fn dictionary(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)), nullable)
}

fn text(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

fn time(name: &str, nullable: bool) -> Field {
    Field::new(name, timestamp_type(), nullable)
}

fn conversation_fields() -> Vec<Field> {
    vec![
        text("conversation_id", false),
        text("title", true),
        time("created_at", true),
        time("updated_at", true),
        dictionary("model", true),
        Field::new("is_archived", DataType::Boolean, false),
        Field::new("message_count", DataType::Int32, false),
        Field::new("written_count", DataType::Int32, false),
        time("first_message_at", true),
        time("last_message_at", true),
        text("system_instruction", true),
        dictionary("assumed_time_zone", true),
        Field::new("is_repeat", DataType::Boolean, false),
        dictionary("source_file", false),
        Field::new("source_offset", DataType::Int64, false),
    ]
}

fn message_fields() -> Vec<Field> {
    vec![
        text("conversation_id", false),
        text("message_id", false),
        text("parent_id", true),
        Field::new("position", DataType::Int32, false),
        dictionary("role", false),
        dictionary("author_name", true),
        dictionary("model", true),
        time("created_at", false),
        Field::new("time_known", DataType::Boolean, false),
        text("text", false),
        Field::new("text_chars", DataType::Int32, false),
        text("content_hash", false),
        dictionary("disposition", false),
        Field::new("on_active_branch", DataType::Boolean, false),
        Field::new("is_hidden", DataType::Boolean, false),
        Field::new("is_thought", DataType::Boolean, false),
        dictionary("status", true),
        Field::new("asset_count", DataType::Int32, false),
        text("metadata", true),
    ]
}

fn memory_fields() -> Vec<Field> {
    vec![
        text("memory_id", false),
        dictionary("kind", false),
        text("text", false),
        Field::new("text_chars", DataType::Int32, false),
        time("created_at", false),
        Field::new("labels", DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true))), false),
        text("conversation_id", true),
        dictionary("source_file", false),
        // Extracted memories only (null for the provider's): after the columns above, so
        // queries and readers written for those keep working.
        dictionary("memory_type", true),
        dictionary("slot", true),
        text("value", true),
        dictionary("language", true),
        Field::new("confidence", DataType::Float32, true),
        Field::new("evidence_count", DataType::Int32, true),
        time("first_seen", true),
        time("last_seen", true),
        text("supersedes", true),
        text("superseded_by", true),
        Field::new("personal", DataType::Boolean, true),
        dictionary("extractor", true),
        // Since schema version 3.
        Field::new("retracted", DataType::Boolean, true),
    ]
}

fn asset_fields() -> Vec<Field> {
    vec![
        text("conversation_id", false),
        text("message_id", false),
        dictionary("kind", false),
        text("pointer", false),
        text("resolved", true),
        text("name", true),
        Field::new("is_missing", DataType::Boolean, false),
    ]
}

/// Named like the `messages` columns they join to: `(provider, conversation_id, message_id)`.
fn evidence_fields() -> Vec<Field> {
    vec![
        text("memory_id", false),
        text("conversation_id", false),
        text("message_id", false),
        Field::new("span_start", DataType::Int32, false),
        Field::new("span_end", DataType::Int32, false),
        text("quote", false),
        time("time", false),
    ]
}

fn entity_fields() -> Vec<Field> {
    vec![text("entity_id", false), text("name", false), dictionary("kind", false), time("first_seen", false)]
}

fn memory_entity_fields() -> Vec<Field> {
    vec![text("memory_id", false), text("entity_id", false)]
}

/// Named like the `conversations` columns they join to: `(provider, conversation_id)`.
fn retraction_fields() -> Vec<Field> {
    vec![
        text("conversation_id", false),
        text("title", true),
        time("created_at", true),
        dictionary("retracted_by", false),
        time("retracted_at", false),
        text("message_id", true),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitioned_schemas_leave_the_provider_to_the_folder() {
        for table in Table::every() {
            assert_eq!(table.schema(true).field(0).name(), "provider");
            assert!(table.schema(false).field_with_name("provider").is_err());
            assert_eq!(table.schema(true).fields().len(), table.schema(false).fields().len() + 1);
        }
    }

    #[test]
    fn undictionaried_columns_exist() {
        for table in Table::every() {
            let schema = table.schema(false);
            for column in table.unique_text_columns() {
                assert!(schema.field_with_name(column).is_ok(), "{} has no column {column}", table.name());
            }
        }
    }

    fn columns(table: Table) -> Vec<(String, DataType, bool)> {
        table.schema(true).fields().iter().map(|field| (field.name().clone(), field.data_type().clone(), field.is_nullable())).collect()
    }

    fn names(table: Table) -> Vec<String> {
        columns(table).into_iter().map(|(name, _, _)| name).collect()
    }

    #[test]
    fn memories_keep_their_first_columns_and_add_nullable_extraction_columns() {
        let memory_columns = names(Table::Memories);
        let before = ["provider", "memory_id", "kind", "text", "text_chars", "created_at", "labels", "conversation_id", "source_file"];
        assert_eq!(memory_columns[..before.len()], before);
        let added = [
            "memory_type",
            "slot",
            "value",
            "language",
            "confidence",
            "evidence_count",
            "first_seen",
            "last_seen",
            "supersedes",
            "superseded_by",
            "personal",
            "extractor",
            "retracted",
        ];
        assert_eq!(memory_columns[before.len()..], added);
        // Provider memories leave them all null.
        assert!(columns(Table::Memories)[before.len()..].iter().all(|(_, _, nullable)| *nullable));
        let schema = Table::Memories.schema(true);
        assert_eq!(schema.field_with_name("confidence").unwrap().data_type(), &DataType::Float32);
        assert_eq!(schema.field_with_name("first_seen").unwrap().data_type(), &timestamp_type());
    }

    #[test]
    fn the_extraction_tables_have_the_documented_columns() {
        assert_eq!(
            names(Table::MemoryEvidence),
            ["provider", "memory_id", "conversation_id", "message_id", "span_start", "span_end", "quote", "time"]
        );
        assert_eq!(names(Table::Entities), ["provider", "entity_id", "name", "kind", "first_seen"]);
        assert_eq!(names(Table::MemoryEntities), ["provider", "memory_id", "entity_id"]);
        for table in [Table::MemoryEvidence, Table::Entities, Table::MemoryEntities] {
            assert!(columns(table).iter().all(|(_, _, nullable)| !nullable), "{} has no nullable column", table.name());
        }
        // The evidence keys are the `messages` keys, with the same types.
        let messages = Table::Messages.schema(true);
        let evidence = Table::MemoryEvidence.schema(true);
        for key in ["provider", "conversation_id", "message_id"] {
            assert_eq!(evidence.field_with_name(key).unwrap().data_type(), messages.field_with_name(key).unwrap().data_type(), "{key}");
        }
        assert_eq!(evidence.field_with_name("time").unwrap().data_type(), &timestamp_type());
    }

    #[test]
    fn the_retractions_table_has_the_documented_columns_and_is_occasional() {
        assert_eq!(
            names(Table::Retractions),
            ["provider", "conversation_id", "title", "created_at", "retracted_by", "retracted_at", "message_id"]
        );
        let retractions = Table::Retractions.schema(true);
        let conversations = Table::Conversations.schema(true);
        for key in ["provider", "conversation_id", "title", "created_at"] {
            assert_eq!(
                retractions.field_with_name(key).unwrap().data_type(),
                conversations.field_with_name(key).unwrap().data_type(),
                "{key}"
            );
        }
        assert_eq!(retractions.field_with_name("retracted_at").unwrap().data_type(), &timestamp_type());
        assert!(!Table::ALL.contains(&Table::Retractions));
        assert_eq!(Table::every().last(), Some(Table::Retractions));
    }

    #[test]
    fn table_names_are_distinct_folder_names() {
        let folders: std::collections::BTreeSet<&str> = Table::every().map(Table::name).collect();
        assert_eq!(folders.len(), Table::every().count());
    }
}
