//! Sync's Parquet output as one growing dataset, `OUT/parquet/`: each run adds its rows as a
//! `run=<run-id>` partition under every table folder, and one row to the `runs` table.
//!
//! ```text
//! OUT/parquet/<table>/run=<run-id>/part-NNNNN.parquet
//! OUT/parquet/<table>/run=<run-id>/provider=<name>/part-NNNNN.parquet   (--partition-by provider)
//! OUT/parquet/runs/run=<run-id>/part-00000.parquet                      (one row per run)
//! ```
//!
//! The run's dataset is first written as an ordinary one by the Parquet sink, into the run's
//! staging folder. [`publish_run`] then moves each of its table folders into the growing
//! dataset with one rename, and publishes the `runs` row last, also with one rename: a reader
//! that keeps only the rows whose `run` is in `runs` sees a run whole or not at all. This module
//! knows nothing of the state: the sync calls [`publish_run`] before it commits, and the next
//! sync calls [`remove_uncommitted`] to take away what a sync stopped between the two left.
//! Writing the tables is the sink's job ([`crate::sinks::parquet`]); only the `runs` table is
//! written here.

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::error::RunError;
use crate::sinks::output_file::write_atomically;
use crate::sinks::parquet::ROW_GROUP_BYTES;
use crate::sinks::parquet::schema::{ROW_GROUP_ROWS, SCHEMA_VERSION, Table, timestamp_type};

/// The table with one row per run, published after the run's other tables.
pub const RUNS_TABLE: &str = "runs";

/// The one part of a run's `runs` partition.
const RUNS_PART: &str = "part-00000.parquet";

/// Each run's folder under a table is `run=<run-id>` (Hive style: readers add a `run` column).
const PARTITION_PREFIX: &str = "run=";

/// A folder being written is `.run=<run-id>.partial`: hidden, so dataset readers pass over it.
const PARTIAL_SUFFIX: &str = ".partial";

/// The dataset's README, written by memport.
const README_FILE: &str = "README.md";

/// The first line of memport's README: a README that starts with it is memport's to rewrite;
/// any other is the user's, and left alone.
const README_MARKER: &str = "<!-- written by memport sync, which rewrites this file; remove this line to keep your edits -->\n";

/// What the README says after its marker.
const README_TEXT: &str = "# memport sync dataset

Written by `memport sync`. Every sync adds its rows as one partition per table, and one row to
the `runs` table:

```text
<table>/run=<run-id>/part-NNNNN.parquet
<table>/run=<run-id>/provider=<name>/part-NNNNN.parquet    (--partition-by provider)
runs/run=<run-id>/part-00000.parquet                       (one row per run)
```

A run's tables appear one at a time, and its `runs` row last: a consistent reader keeps only
the rows whose `run` is in `runs`. With DuckDB:

```sql
select *
from read_parquet('messages/run=*/**/*.parquet', hive_partitioning = true)
where run in (select run_id from read_parquet('runs/run=*/*.parquet'))
```

The `run=*` in the globs passes over hidden `.run=<run-id>.partial` folders, which are
unfinished. The next sync removes them, and the partitions of any run its state did not
commit. The columns are described in memport's `docs/formats/parquet.md`.
";

/// One row of the `runs` table: a sync run, as its state records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    /// The run's id, also its partitions' `run=` value.
    pub run_id: String,
    /// The run's place in the state's sequence of runs, from 1.
    pub sequence: u64,
    /// The export time, in microseconds since the epoch (UTC).
    pub exported_at: i64,
    /// The run this delta applies to; none for a full run.
    pub base_run_id: Option<String>,
    /// Whether the run wrote everything (the first run, or changed options).
    pub full: bool,
    /// The inputs (path and checksum of each), as JSON.
    pub inputs_json: String,
    /// The conversation counts of the run, as JSON.
    pub counts_json: String,
    /// The options that shaped the run, as JSON.
    pub options_json: String,
}

/// Moves the run's dataset, written by the Parquet sink into `staged`, into the growing dataset
/// at `dataset`: each table folder of `staged` (a folder holding `.parquet` files, directly or
/// in `provider=` folders) becomes `dataset/<table>/run=<run_id>` with one rename, in a fixed
/// order, and then the `runs` row is written into a hidden `.run=<run_id>.partial` folder of
/// `dataset/runs/` and renamed to `run=<run_id>`. The folders the renames change are synced,
/// so the run is on disk before the state commits. A partition of the same run id already in
/// `dataset` (left by a sync stopped before it committed, which had the same inputs and
/// options) is replaced; its `runs` row is removed first, so no reader takes the run for
/// complete while its tables are replaced. Also writes `dataset/README.md` when there is none
/// or memport wrote it. Everything else in `staged` (the sink's manifest, other files) stays.
///
/// Returns the published partitions, relative to `dataset` (`messages/run=<run_id>`, …,
/// `runs/run=<run_id>`), sorted.
///
/// Stopped halfway, or failing, it leaves partitions that no `runs` row names; the next sync's
/// [`remove_uncommitted`] removes them.
///
/// # Errors
/// [`RunError::Read`] listing `staged`, [`RunError::Write`] naming the path a move or write
/// failed on, and [`RunError::Internal`] for a run id that cannot name a folder, a `run_row`
/// of another run, or a staged table named `runs`.
pub fn publish_run(staged: &Path, dataset: &Path, run_id: &str, run_row: &RunRow) -> Result<Vec<String>, RunError> {
    check_run_id(run_id)?;
    if run_row.run_id != run_id {
        return Err(RunError::Internal(format!("publishing run {run_id} with the runs row of run {}", run_row.run_id)));
    }
    let tables = staged_tables(staged).map_err(|error| RunError::read(staged.display().to_string(), error))?;
    if tables.iter().any(|table| table == RUNS_TABLE) {
        return Err(RunError::Internal(format!(
            "the staged dataset {} has a table named `{RUNS_TABLE}`, which sync keeps for its runs",
            staged.display()
        )));
    }
    // Encoded before anything moves: an encoding error leaves both folders as they were.
    let runs_part = runs_part_bytes(run_row)?;
    create_folder(dataset)?;
    write_readme(dataset)?;
    let partition = format!("{PARTITION_PREFIX}{run_id}");
    let runs_folder = dataset.join(RUNS_TABLE);
    if remove_entry(&runs_folder.join(&partition))? {
        sync_folder(&runs_folder);
    }
    let mut published = Vec::with_capacity(tables.len() + 1);
    for table in &tables {
        let table_folder = dataset.join(table);
        create_folder(&table_folder)?;
        let target = table_folder.join(&partition);
        // The same run id means the same inputs and options: this is the same run, stopped
        // before it committed.
        remove_entry(&target)?;
        std::fs::rename(staged.join(table), &target).map_err(|error| RunError::write(target.display().to_string(), error))?;
        sync_folder(&table_folder);
        published.push(format!("{table}/{partition}"));
    }
    sync_folder(staged);
    publish_runs_row(&runs_folder, &partition, &runs_part)?;
    published.push(format!("{RUNS_TABLE}/{partition}"));
    published.sort();
    Ok(published)
}

/// Removes, from every table folder of `dataset` (`runs/` included), each `run=<id>` folder
/// whose id is not in `committed`, and each hidden `.run=<id>.partial` folder: what a sync
/// stopped between [`publish_run`] and its state's commit left. The `runs` partitions go
/// first, so no reader takes a run for complete while its tables are removed. Nothing else is
/// touched: not other files or folders, nor hidden folders of `dataset` such as memport's
/// own. A missing `dataset` has nothing to remove.
///
/// Returns what it removed, relative to `dataset` (`messages/run=<id>`, `runs/.run=<id>.partial`),
/// sorted.
///
/// # Errors
/// [`RunError::Read`] listing a folder, [`RunError::Write`] removing one.
pub fn remove_uncommitted(dataset: &Path, committed: &[&str]) -> Result<Vec<String>, RunError> {
    let read_error = |path: &Path, error: io::Error| RunError::read(path.display().to_string(), error);
    let entries = match std::fs::read_dir(dataset) {
        Ok(entries) => entries,
        Err(error) if matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => return Ok(Vec::new()),
        Err(error) => return Err(read_error(dataset, error)),
    };
    let mut table_names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|error| read_error(dataset, error))?;
        let file_type = entry.file_type().map_err(|error| read_error(&entry.path(), error))?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        if file_type.is_dir() && !name.starts_with('.') {
            table_names.push(name);
        }
    }
    table_names.sort();
    // `runs` first: see above.
    table_names.sort_by_key(|name| name != RUNS_TABLE);
    let mut removed = Vec::new();
    for table in &table_names {
        let table_folder = dataset.join(table);
        let mut leftovers = Vec::new();
        let entries = std::fs::read_dir(&table_folder).map_err(|error| read_error(&table_folder, error))?;
        for entry in entries {
            let entry = entry.map_err(|error| read_error(&table_folder, error))?;
            let file_type = entry.file_type().map_err(|error| read_error(&entry.path(), error))?;
            let Ok(name) = entry.file_name().into_string() else { continue };
            if file_type.is_dir() && is_leftover(&name, committed) {
                leftovers.push(name);
            }
        }
        leftovers.sort();
        for name in &leftovers {
            let path = table_folder.join(name);
            std::fs::remove_dir_all(&path).map_err(|error| RunError::write(path.display().to_string(), error))?;
            removed.push(format!("{table}/{name}"));
        }
        if !leftovers.is_empty() {
            sync_folder(&table_folder);
        }
    }
    removed.sort();
    Ok(removed)
}

/// Whether the folder `name` in a table folder is an unfinished partition, or one of a run
/// not in `committed`.
fn is_leftover(name: &str, committed: &[&str]) -> bool {
    if let Some(run_id) = name.strip_prefix(PARTITION_PREFIX) {
        return !committed.contains(&run_id);
    }
    name.strip_prefix('.').is_some_and(|rest| rest.starts_with(PARTITION_PREFIX) && rest.ends_with(PARTIAL_SUFFIX))
}

/// Refuses a run id that cannot be a partition folder's value as it is: one with a path
/// separator, a dot (`..`), or a character Hive-style readers would escape.
fn check_run_id(run_id: &str) -> Result<(), RunError> {
    let usable = !run_id.is_empty() && run_id.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
    if usable { Ok(()) } else { Err(RunError::Internal(format!("run id `{run_id}` cannot name a partition folder"))) }
}

/// The table folders of the staged dataset: every folder (not hidden) that holds `.parquet`
/// files, directly or in `provider=` folders. In [`Table::ALL`]'s order, then others by name.
fn staged_tables(staged: &Path) -> io::Result<Vec<String>> {
    let mut tables = Vec::new();
    for entry in std::fs::read_dir(staged)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        if name.starts_with('.') || !entry.file_type()?.is_dir() {
            continue;
        }
        if holds_parquet(&entry.path())? {
            tables.push(name);
        }
    }
    tables.sort();
    tables.sort_by_key(|name| table_rank(name.as_str()));
    Ok(tables)
}

/// A table's place in [`Table::ALL`]; tables memport does not know come after.
fn table_rank(name: &str) -> usize {
    Table::ALL.iter().position(|table| table.name() == name).unwrap_or(Table::ALL.len())
}

/// Whether `folder` holds a `.parquet` file (not hidden), directly or in a `provider=` folder.
fn holds_parquet(folder: &Path) -> io::Result<bool> {
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let file_type = entry.file_type()?;
        if file_type.is_file() && name.ends_with(".parquet") {
            return Ok(true);
        }
        if file_type.is_dir() && name.starts_with("provider=") && holds_parquet(&entry.path())? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Writes the `runs` row into `runs_folder/.<partition>.partial/` and renames that folder to
/// `runs_folder/<partition>`: the run's last step in the dataset.
///
/// The part is written under a hidden name and given its own just before the folder's rename:
/// DuckDB's and Polars' globs (`runs/*/*.parquet`) do not skip hidden folders, and would
/// otherwise find a `.parquet` file there while it is being written.
fn publish_runs_row(runs_folder: &Path, partition: &str, part_bytes: &[u8]) -> Result<(), RunError> {
    create_folder(runs_folder)?;
    let partial = runs_folder.join(format!(".{partition}{PARTIAL_SUFFIX}"));
    // Left by a sync stopped while it wrote this row.
    remove_entry(&partial)?;
    std::fs::create_dir(&partial).map_err(|error| RunError::write(partial.display().to_string(), error))?;
    let hidden_part = partial.join(format!(".{RUNS_PART}{PARTIAL_SUFFIX}"));
    write_synced(&hidden_part, part_bytes).map_err(|error| RunError::write(hidden_part.display().to_string(), error))?;
    let part = partial.join(RUNS_PART);
    std::fs::rename(&hidden_part, &part).map_err(|error| RunError::write(part.display().to_string(), error))?;
    sync_folder(&partial);
    let target = runs_folder.join(partition);
    remove_entry(&target)?;
    std::fs::rename(&partial, &target).map_err(|error| RunError::write(target.display().to_string(), error))?;
    sync_folder(runs_folder);
    Ok(())
}

/// The `runs` table's schema; its `run` column comes from the folder name, as for the others.
fn runs_schema() -> SchemaRef {
    let fields = vec![
        Field::new("run_id", DataType::Utf8, false),
        Field::new("sequence", DataType::Int64, false),
        Field::new("exported_at", timestamp_type(), false),
        Field::new("base_run_id", DataType::Utf8, true),
        Field::new("full", DataType::Boolean, false),
        Field::new("inputs_json", DataType::Utf8, false),
        Field::new("counts_json", DataType::Utf8, false),
        Field::new("options_json", DataType::Utf8, false),
    ];
    Arc::new(Schema::new_with_metadata(fields, [("memport.schema_version", SCHEMA_VERSION), ("memport.table", RUNS_TABLE)]))
}

/// The sink's writer settings ([`Table::writer_properties`]) for the `runs` table: zstd, the
/// same row group limits and key-value metadata. No column needs dictionaries or statistics
/// turned off: the table has a row per run.
fn runs_writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_key_value_metadata(Some(vec![
            KeyValue::new("memport.schema_version".to_owned(), SCHEMA_VERSION.to_owned()),
            KeyValue::new("memport.table".to_owned(), RUNS_TABLE.to_owned()),
        ]))
        .build()
}

/// The bytes of the `runs` part holding `row`: the same row gives the same bytes.
fn runs_part_bytes(row: &RunRow) -> Result<Vec<u8>, RunError> {
    let sequence = i64::try_from(row.sequence)
        .map_err(|_| RunError::Internal(format!("run sequence {} does not fit the runs table's int64", row.sequence)))?;
    let schema = runs_schema();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![row.run_id.as_str()])),
        Arc::new(Int64Array::from(vec![sequence])),
        Arc::new(TimestampMicrosecondArray::from(vec![row.exported_at]).with_timezone("UTC")),
        Arc::new(StringArray::from(vec![row.base_run_id.as_deref()])),
        Arc::new(BooleanArray::from(vec![row.full])),
        Arc::new(StringArray::from(vec![row.inputs_json.as_str()])),
        Arc::new(StringArray::from(vec![row.counts_json.as_str()])),
        Arc::new(StringArray::from(vec![row.options_json.as_str()])),
    ];
    let encode = || -> Result<Vec<u8>, ParquetError> {
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
        let mut writer = ArrowWriter::try_new(Vec::new(), schema, Some(runs_writer_properties()))?;
        writer.write(&batch)?;
        writer.into_inner()
    };
    encode().map_err(|error| RunError::Internal(format!("encoding the runs row of {}: {error}", row.run_id)))
}

/// Writes `dataset/README.md` when there is none, or when memport wrote the one there (it starts
/// with [`README_MARKER`]); a README of the user's is left alone.
fn write_readme(dataset: &Path) -> Result<(), RunError> {
    let path = dataset.join(README_FILE);
    let wanted = [README_MARKER.as_bytes(), README_TEXT.as_bytes()].concat();
    match std::fs::read(&path) {
        Ok(found) if found == wanted || !found.starts_with(README_MARKER.as_bytes()) => return Ok(()),
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        // Something memport cannot read (a folder of that name, no permission): not memport's.
        Err(_) => return Ok(()),
    }
    write_atomically(&path, &wanted).map_err(|error| RunError::write(path.display().to_string(), error))
}

/// Creates `folder` (and missing parents) when it does not exist, and syncs its parent so the
/// new folder is on disk.
fn create_folder(folder: &Path) -> Result<(), RunError> {
    if folder.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(folder).map_err(|error| RunError::write(folder.display().to_string(), error))?;
    let parent = folder.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    sync_folder(parent);
    Ok(())
}

/// Removes the folder (with its content) or file at `path`; returns whether there was one.
/// A symbolic link is removed, not followed.
fn remove_entry(path: &Path) -> Result<bool, RunError> {
    let removed = match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(error) => Err(error),
    };
    removed.map_err(|error| RunError::write(path.display().to_string(), error))?;
    Ok(true)
}

/// Writes `bytes` to a new file at `path` and syncs it: the `runs` row must be on disk before
/// the state says the run happened. It is a few kilobytes; the tables' parts are left to the
/// sink, which does not sync them.
fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = std::fs::File::create_new(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes renames and new entries in `folder` durable before the state commits. Best effort, as
/// the sync's own: a file system that cannot sync a folder does not stop the run.
fn sync_folder(folder: &Path) {
    if let Ok(handle) = std::fs::File::open(folder) {
        let _ = handle.sync_all();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int64Type, TimestampMicrosecondType};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    use crate::sinks::Sink;
    use crate::sinks::output_file::MANIFEST_FILE;
    use crate::sinks::output_file::tests::names_in;
    use crate::sinks::parquet::{ParquetLayout, ParquetSink};

    const RUN: &str = "20261101T000000Z-cfb0a7ce9537";

    fn run_row(run_id: &str, sequence: u64) -> RunRow {
        RunRow {
            run_id: run_id.to_owned(),
            sequence,
            exported_at: 1_793_491_200_000_000,
            base_run_id: Some("20261001T000000Z-0123456789ab".to_owned()),
            full: false,
            inputs_json: r#"[{"path":"chatgpt.zip","checksum":"blake3:00"}]"#.to_owned(),
            counts_json: r#"{"conversations_new":3}"#.to_owned(),
            options_json: r#"{"formats":["parquet"]}"#.to_owned(),
        }
    }

    /// A staged dataset as the sink writes it: every table, each one empty part, and the
    /// manifest.
    fn staged_by_the_sink(folder: &Path) {
        let sink = Box::new(ParquetSink::create(folder, ParquetLayout::default()).unwrap());
        sink.finish().unwrap();
    }

    /// A staged dataset partitioned by provider, with `parts` as the content of each part.
    fn staged_by_provider(folder: &Path, providers: &[&str], parts: &[u8]) {
        for provider in providers {
            let partition = folder.join("messages").join(format!("provider={provider}"));
            std::fs::create_dir_all(&partition).unwrap();
            std::fs::write(partition.join("part-00000.parquet"), parts).unwrap();
        }
        // A table without rows has no provider folder, so no file: nothing to publish.
        std::fs::create_dir_all(folder.join("assets")).unwrap();
        std::fs::write(folder.join(MANIFEST_FILE), b"{}").unwrap();
    }

    /// The one row of a `runs` part, and the part's key-value metadata.
    fn read_runs_part(path: &Path) -> (RecordBatch, Vec<KeyValue>) {
        let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap()).unwrap();
        let metadata = builder.metadata().file_metadata().key_value_metadata().cloned().unwrap_or_default();
        let batches: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
        assert_eq!(batches.len(), 1);
        (batches[0].clone(), metadata)
    }

    fn string_value(batch: &RecordBatch, column: &str) -> Option<String> {
        let array = batch.column_by_name(column).unwrap().as_string::<i32>();
        (!array.is_null(0)).then(|| array.value(0).to_owned())
    }

    #[test]
    fn publishing_moves_each_table_into_its_run_partition_and_writes_the_runs_row_last() {
        let folder = tempfile::tempdir().unwrap();
        let staged = folder.path().join("staged");
        staged_by_the_sink(&staged);
        // Not tables: a folder without Parquet files, and files.
        std::fs::create_dir_all(staged.join("notes")).unwrap();
        std::fs::write(staged.join("notes").join("todo.txt"), b"the user's").unwrap();
        std::fs::write(staged.join("README.md"), b"not a table").unwrap();
        let dataset = folder.path().join("out").join("parquet");

        let published = publish_run(&staged, &dataset, RUN, &run_row(RUN, 2)).unwrap();

        let mut expected: Vec<String> = Table::ALL.iter().map(|table| format!("{}/run={RUN}", table.name())).collect();
        expected.push(format!("runs/run={RUN}"));
        expected.sort();
        assert_eq!(published, expected);
        for table in Table::ALL {
            assert_eq!(names_in(&dataset.join(table.name()).join(format!("run={RUN}"))), ["part-00000.parquet"], "{}", table.name());
            assert!(!staged.join(table.name()).exists(), "{} was moved, not copied", table.name());
        }
        assert_eq!(names_in(&staged), [MANIFEST_FILE, "README.md", "notes"]);
        assert_eq!(names_in(&dataset.join("runs")), [format!("run={RUN}")]);
        assert_eq!(names_in(&dataset.join("runs").join(format!("run={RUN}"))), [RUNS_PART]);

        let (batch, metadata) = read_runs_part(&dataset.join("runs").join(format!("run={RUN}")).join(RUNS_PART));
        assert_eq!(batch.num_rows(), 1);
        assert_eq!(string_value(&batch, "run_id").as_deref(), Some(RUN));
        assert_eq!(batch.column_by_name("sequence").unwrap().as_primitive::<Int64Type>().value(0), 2);
        let exported_at = batch.column_by_name("exported_at").unwrap();
        assert_eq!(exported_at.data_type(), &timestamp_type());
        assert_eq!(exported_at.as_primitive::<TimestampMicrosecondType>().value(0), 1_793_491_200_000_000);
        assert_eq!(string_value(&batch, "base_run_id").as_deref(), Some("20261001T000000Z-0123456789ab"));
        assert!(!batch.column_by_name("full").unwrap().as_boolean().value(0));
        assert_eq!(string_value(&batch, "inputs_json").as_deref(), Some(r#"[{"path":"chatgpt.zip","checksum":"blake3:00"}]"#));
        assert_eq!(string_value(&batch, "counts_json").as_deref(), Some(r#"{"conversations_new":3}"#));
        assert_eq!(string_value(&batch, "options_json").as_deref(), Some(r#"{"formats":["parquet"]}"#));
        let table = metadata.iter().find(|entry| entry.key == "memport.table").and_then(|entry| entry.value.clone());
        assert_eq!(table.as_deref(), Some(RUNS_TABLE));
        let version = metadata.iter().find(|entry| entry.key == "memport.schema_version").and_then(|entry| entry.value.clone());
        assert_eq!(version.as_deref(), Some(SCHEMA_VERSION));

        let readme = std::fs::read_to_string(dataset.join(README_FILE)).unwrap();
        assert!(readme.starts_with(README_MARKER), "{readme}");
    }

    #[test]
    fn a_full_run_without_a_base_has_a_null_base_run_id() {
        let folder = tempfile::tempdir().unwrap();
        let staged = folder.path().join("staged");
        staged_by_the_sink(&staged);
        let dataset = folder.path().join("parquet");
        let row = RunRow { base_run_id: None, full: true, sequence: 1, ..run_row(RUN, 1) };
        publish_run(&staged, &dataset, RUN, &row).unwrap();
        let (batch, _) = read_runs_part(&dataset.join("runs").join(format!("run={RUN}")).join(RUNS_PART));
        assert_eq!(string_value(&batch, "base_run_id"), None);
        assert!(batch.column_by_name("full").unwrap().as_boolean().value(0));
    }

    #[test]
    fn provider_partitions_move_with_their_table_and_a_table_without_files_is_not_published() {
        let folder = tempfile::tempdir().unwrap();
        let staged = folder.path().join("staged");
        staged_by_provider(&staged, &["chatgpt", "claude"], b"parts");
        let dataset = folder.path().join("parquet");
        let published = publish_run(&staged, &dataset, RUN, &run_row(RUN, 1)).unwrap();
        assert_eq!(published, [format!("messages/run={RUN}"), format!("runs/run={RUN}")]);
        let partition = dataset.join("messages").join(format!("run={RUN}"));
        assert_eq!(names_in(&partition), ["provider=chatgpt", "provider=claude"]);
        assert_eq!(std::fs::read(partition.join("provider=claude").join("part-00000.parquet")).unwrap(), b"parts");
        assert!(!dataset.join("assets").exists());
        assert!(staged.join("assets").is_dir(), "a folder that is not a table stays");
    }

    #[test]
    fn publishing_the_same_run_again_replaces_its_partitions() {
        let folder = tempfile::tempdir().unwrap();
        let dataset = folder.path().join("parquet");
        let first = folder.path().join("first");
        staged_by_provider(&first, &["chatgpt", "claude"], b"first");
        publish_run(&first, &dataset, RUN, &run_row(RUN, 1)).unwrap();
        // A sync stopped while it wrote the runs row leaves its hidden folder.
        std::fs::create_dir_all(dataset.join("runs").join(format!(".run={RUN}.partial"))).unwrap();

        let second = folder.path().join("second");
        staged_by_provider(&second, &["chatgpt"], b"second");
        let published = publish_run(&second, &dataset, RUN, &run_row(RUN, 7)).unwrap();

        assert_eq!(published, [format!("messages/run={RUN}"), format!("runs/run={RUN}")]);
        let partition = dataset.join("messages").join(format!("run={RUN}"));
        assert_eq!(names_in(&partition), ["provider=chatgpt"], "nothing of the first publication is left");
        assert_eq!(std::fs::read(partition.join("provider=chatgpt").join("part-00000.parquet")).unwrap(), b"second");
        assert_eq!(names_in(&dataset.join("messages")), [format!("run={RUN}")]);
        assert_eq!(names_in(&dataset.join("runs")), [format!("run={RUN}")]);
        let (batch, _) = read_runs_part(&dataset.join("runs").join(format!("run={RUN}")).join(RUNS_PART));
        assert_eq!(batch.column_by_name("sequence").unwrap().as_primitive::<Int64Type>().value(0), 7);
    }

    #[test]
    fn runs_are_added_beside_earlier_ones() {
        let folder = tempfile::tempdir().unwrap();
        let dataset = folder.path().join("parquet");
        let later = "20261201T000000Z-ba9876543210";
        for (run_id, sequence) in [(RUN, 1), (later, 2)] {
            let staged = folder.path().join(run_id);
            staged_by_the_sink(&staged);
            publish_run(&staged, &dataset, run_id, &run_row(run_id, sequence)).unwrap();
        }
        assert_eq!(names_in(&dataset.join("messages")), [format!("run={RUN}"), format!("run={later}")]);
        assert_eq!(names_in(&dataset.join("runs")), [format!("run={RUN}"), format!("run={later}")]);
        let mut expected: Vec<&str> = Table::ALL.iter().map(|table| table.name()).collect();
        expected.extend([README_FILE, RUNS_TABLE]);
        expected.sort_unstable();
        assert_eq!(names_in(&dataset), expected);
    }

    #[test]
    fn a_run_id_that_cannot_name_a_folder_or_a_row_of_another_run_moves_nothing() {
        let folder = tempfile::tempdir().unwrap();
        let staged = folder.path().join("staged");
        staged_by_the_sink(&staged);
        let dataset = folder.path().join("parquet");
        for run_id in ["", "../escape", "a/b", ".hidden", "run id"] {
            assert!(matches!(publish_run(&staged, &dataset, run_id, &run_row(run_id, 1)), Err(RunError::Internal(_))), "{run_id:?}");
        }
        assert!(matches!(publish_run(&staged, &dataset, RUN, &run_row("20261101T000000Z-000000000000", 1)), Err(RunError::Internal(_))));
        assert!(!dataset.exists());
        assert!(staged.join("messages").join("part-00000.parquet").is_file());
    }

    #[test]
    fn the_users_readme_is_left_alone_and_memports_is_rewritten() {
        let folder = tempfile::tempdir().unwrap();
        let dataset = folder.path().join("parquet");
        std::fs::create_dir_all(&dataset).unwrap();
        std::fs::write(dataset.join(README_FILE), b"# my notes\n").unwrap();
        let staged = folder.path().join("staged");
        staged_by_the_sink(&staged);
        publish_run(&staged, &dataset, RUN, &run_row(RUN, 1)).unwrap();
        assert_eq!(std::fs::read(dataset.join(README_FILE)).unwrap(), b"# my notes\n");

        let older = format!("{README_MARKER}# an older text\n");
        std::fs::write(dataset.join(README_FILE), older).unwrap();
        let again = folder.path().join("again");
        staged_by_the_sink(&again);
        publish_run(&again, &dataset, RUN, &run_row(RUN, 1)).unwrap();
        assert_eq!(std::fs::read_to_string(dataset.join(README_FILE)).unwrap(), format!("{README_MARKER}{README_TEXT}"));
        assert!(!names_in(&dataset).iter().any(|name| name.ends_with(".partial")), "{:?}", names_in(&dataset));
    }

    #[test]
    fn remove_uncommitted_removes_only_uncommitted_partitions_and_partials() {
        let folder = tempfile::tempdir().unwrap();
        let dataset = folder.path();
        let folders = [
            "messages/run=A",
            "messages/run=B",
            "messages/.run=D.partial",
            "messages/provider=chatgpt",
            "messages/notes",
            "runs/run=A",
            "runs/run=B",
            "runs/.run=C.partial",
            "other/run=B",
            ".memport-staging/run=B",
            "memories/.run=E.partial.keep",
            "memories/run=",
        ];
        for relative in folders {
            std::fs::create_dir_all(dataset.join(relative)).unwrap();
            std::fs::write(dataset.join(relative).join("part-00000.parquet"), b"x").unwrap();
        }
        // Files with partition names are not partitions memport wrote.
        std::fs::create_dir_all(dataset.join("conversations")).unwrap();
        std::fs::write(dataset.join("conversations").join("run=B"), b"a file").unwrap();
        std::fs::write(dataset.join("messages").join(".run=F.partial"), b"a file").unwrap();
        std::fs::write(dataset.join("run=B"), b"at the top").unwrap();
        std::fs::write(dataset.join(README_FILE), b"readme").unwrap();

        let removed = remove_uncommitted(dataset, &["A"]).unwrap();

        assert_eq!(
            removed,
            ["memories/run=", "messages/.run=D.partial", "messages/run=B", "other/run=B", "runs/.run=C.partial", "runs/run=B"]
        );
        assert_eq!(names_in(&dataset.join("messages")), [".run=F.partial", "notes", "provider=chatgpt", "run=A"]);
        assert_eq!(names_in(&dataset.join("runs")), ["run=A"]);
        assert_eq!(names_in(&dataset.join("memories")), [".run=E.partial.keep"]);
        assert_eq!(names_in(&dataset.join("conversations")), ["run=B"]);
        assert_eq!(names_in(&dataset.join(".memport-staging")), ["run=B"]);
        assert!(dataset.join("run=B").is_file() && dataset.join(README_FILE).is_file());
        assert!(dataset.join("messages").join("run=A").join("part-00000.parquet").is_file());

        assert!(remove_uncommitted(dataset, &["A"]).unwrap().is_empty(), "nothing left to remove");
        assert!(remove_uncommitted(&dataset.join("missing"), &[]).unwrap().is_empty());
    }

    #[test]
    fn a_published_run_that_was_never_committed_is_removed_whole() {
        let folder = tempfile::tempdir().unwrap();
        let dataset = folder.path().join("parquet");
        let staged = folder.path().join("staged");
        staged_by_the_sink(&staged);
        publish_run(&staged, &dataset, RUN, &run_row(RUN, 1)).unwrap();
        let removed = remove_uncommitted(&dataset, &[]).unwrap();
        assert_eq!(removed.len(), Table::ALL.len() + 1, "{removed:?}");
        for table in Table::ALL {
            assert!(names_in(&dataset.join(table.name())).is_empty(), "{}", table.name());
        }
        assert!(names_in(&dataset.join("runs")).is_empty());
        assert!(dataset.join(README_FILE).is_file());
    }

    #[test]
    fn the_runs_part_is_the_same_bytes_every_time() {
        let row = run_row(RUN, 3);
        let bytes = runs_part_bytes(&row).unwrap();
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
        assert_eq!(runs_part_bytes(&row).unwrap(), bytes);
        let folder = tempfile::tempdir().unwrap();
        let mut published = Vec::new();
        for name in ["one", "two"] {
            let staged = folder.path().join(name).join("staged");
            staged_by_the_sink(&staged);
            let dataset = folder.path().join(name).join("parquet");
            publish_run(&staged, &dataset, RUN, &row).unwrap();
            published.push(std::fs::read(dataset.join("runs").join(format!("run={RUN}")).join(RUNS_PART)).unwrap());
        }
        assert_eq!(published[0], bytes);
        assert_eq!(published[1], bytes);
        assert_ne!(runs_part_bytes(&run_row(RUN, 4)).unwrap(), bytes, "another row, other bytes");
    }
}
