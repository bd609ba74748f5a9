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
pub const SCHEMA_VERSION: &str = "1";

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
    /// One row per provider memory written.
    Memories,
    /// One row per asset pointer of a message.
    Assets,
}

impl Table {
    /// Every table, in the order their folders are written.
    pub const ALL: [Table; 4] = [Table::Conversations, Table::Messages, Table::Memories, Table::Assets];

    /// Folder name, also the `memport.table` metadata value.
    pub fn name(self) -> &'static str {
        match self {
            Table::Conversations => "conversations",
            Table::Messages => "messages",
            Table::Memories => "memories",
            Table::Assets => "assets",
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
            Table::Memories => &["memory_id", "text"],
            Table::Assets => &["message_id", "pointer", "resolved", "name"],
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitioned_schemas_leave_the_provider_to_the_folder() {
        for table in Table::ALL {
            assert_eq!(table.schema(true).field(0).name(), "provider");
            assert!(table.schema(false).field_with_name("provider").is_err());
            assert_eq!(table.schema(true).fields().len(), table.schema(false).fields().len() + 1);
        }
    }

    #[test]
    fn undictionaried_columns_exist() {
        for table in Table::ALL {
            let schema = table.schema(false);
            for column in table.unique_text_columns() {
                assert!(schema.field_with_name(column).is_ok(), "{} has no column {column}", table.name());
            }
        }
    }
}
