//! Parquet dataset writer (`--to parquet`): a folder with one subfolder per table
//! (`conversations`, `messages`, `memories`, `assets`, and for extracted memories
//! `memory_evidence`, `entities`, `memory_entities`), each holding `part-NNNNN.parquet` files,
//! or `provider=<name>/part-NNNNN.parquet` with `--partition-by provider`.
//!
//! Record batches are built on the worker pool ([`columns`]); the sink writes them in input
//! order with the parquet crate's `ArrowWriter` (zstd), which closes a row group when its
//! encoded size passes [`ROW_GROUP_BYTES`] or it holds [`schema::ROW_GROUP_ROWS`] rows, so
//! memory stays bounded. A part is closed and the next one started past [`PART_BYTES`]. Every
//! part is written under a hidden `.partial` name and renamed only when the whole run
//! succeeded; parts of an earlier run that this one did not write again are then removed, so
//! the folder always holds exactly one run's dataset.

pub mod columns;
mod extracted_columns;
pub mod schema;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;

use crate::error::RunError;
use crate::model::{Conversation, Provider};
use crate::sinks::created_folders::CreatedFolders;
use crate::sinks::direct_writer::DirectWriter;
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary};
use schema::Table;

/// A row group is closed when its encoded size passes this.
pub const ROW_GROUP_BYTES: usize = 32 << 20;
/// A part file is closed, and the next one started, when it passes this. The writer keeps every
/// page's index entry and every row group's metadata until its part closes, so the part size
/// bounds that memory too.
pub const PART_BYTES: u64 = 256 << 20;

/// How the dataset is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParquetLayout {
    /// Hive-style `provider=<name>` folders under each table.
    pub partition_by_provider: bool,
    /// Row group size limit (encoded bytes).
    pub row_group_bytes: usize,
    /// Part file size limit (bytes).
    pub part_bytes: u64,
}

impl Default for ParquetLayout {
    fn default() -> Self {
        ParquetLayout { partition_by_provider: false, row_group_bytes: ROW_GROUP_BYTES, part_bytes: PART_BYTES }
    }
}

/// Record batches of one input batch, built on a worker thread.
pub type EncodedBatch = Result<columns::TableBatches, arrow_schema::ArrowError>;

/// Builds the record batches; shared by the worker threads.
pub struct ParquetEncoder {
    partition_by_provider: bool,
}

impl Encoder for ParquetEncoder {
    fn encode(&self, batch: &[Conversation]) -> Encoded {
        Encoded::Parquet(columns::encode(batch, self.partition_by_provider))
    }
}

/// The part being written for one table in one partition.
struct PartWriter {
    folder: PathBuf,
    table: Table,
    with_provider: bool,
    next_part: u32,
    open: Option<(ArrowWriter<DirectWriter>, PathBuf, PathBuf)>,
}

impl PartWriter {
    fn write(
        &mut self,
        batch: &RecordBatch,
        layout: &ParquetLayout,
        written: &mut Vec<(PathBuf, PathBuf)>,
        rows: &mut u64,
        created: &mut CreatedFolders,
    ) -> Result<(), RunError> {
        if self.open.is_none() {
            self.start_part(layout, created)?;
        }
        let Some((writer, partial, _)) = self.open.as_mut() else { return Ok(()) };
        writer.write(batch).map_err(|error| parquet_error(partial, error))?;
        *rows += batch.num_rows() as u64;
        if writer.bytes_written() as u64 + writer.in_progress_size() as u64 >= layout.part_bytes {
            self.close_part(written)?;
        }
        Ok(())
    }

    /// Opens the next part, creating the table's folder (noted in `created`) when needed.
    fn start_part(&mut self, layout: &ParquetLayout, created: &mut CreatedFolders) -> Result<(), RunError> {
        created.create(&self.folder)?;
        let name = format!("part-{:05}.parquet", self.next_part);
        self.next_part += 1;
        let file_name = format!(".{name}.partial");
        let partial = self.folder.join(&file_name);
        // A killed run may have left this name behind; it is ours to replace.
        let _ = std::fs::remove_file(&partial);
        let file = tempfile::Builder::new()
            .permissions(std::fs::Permissions::from_mode(0o644))
            .prefix(&file_name)
            .rand_bytes(0)
            .tempfile_in(&self.folder)
            .map_err(|error| RunError::write(partial.display().to_string(), error))?;
        let writer = ArrowWriter::try_new(
            DirectWriter::new(file),
            self.table.schema(self.with_provider),
            Some(self.table.writer_properties(layout.row_group_bytes)),
        )
        .map_err(|error| parquet_error(&partial, error))?;
        self.open = Some((writer, partial, self.folder.join(name)));
        Ok(())
    }

    fn close_part(&mut self, written: &mut Vec<(PathBuf, PathBuf)>) -> Result<(), RunError> {
        if let Some((writer, partial, target)) = self.open.take() {
            let inner = writer.into_inner().map_err(|error| parquet_error(&partial, error))?;
            let temporary = inner.into_temporary().map_err(|error| RunError::write(partial.display().to_string(), error))?;
            // Renamed, or removed after an error, with the other parts (see `Drop`).
            temporary.keep().map_err(|error| RunError::write(partial.display().to_string(), error.error))?;
            written.push((partial, target));
        }
        Ok(())
    }
}

/// Writes the dataset folder.
pub struct ParquetSink {
    root: PathBuf,
    layout: ParquetLayout,
    writers: BTreeMap<(Table, Option<Provider>), PartWriter>,
    /// Closed parts: (temporary name, final name).
    written: Vec<(PathBuf, PathBuf)>,
    rows: u64,
    /// Folders this run created: an unfinished run removes them again (when empty).
    created: CreatedFolders,
}

impl ParquetSink {
    /// Creates the sink for the dataset folder `root`; no part appears there until
    /// [`Sink::finish`].
    ///
    /// # Errors
    /// I/O errors creating the folder.
    pub fn create(root: &Path, layout: ParquetLayout) -> Result<ParquetSink, RunError> {
        if root.is_file() {
            return Err(RunError::write(
                root.display().to_string(),
                std::io::Error::other("parquet output is a folder of tables, and this is a file; name a folder with -o"),
            ));
        }
        let mut created = CreatedFolders::default();
        created.create(root)?;
        Ok(ParquetSink { root: root.to_owned(), layout, writers: BTreeMap::new(), written: Vec::new(), rows: 0, created })
    }

    fn table_folder(&self, table: Table, provider: Option<Provider>) -> PathBuf {
        let folder = self.root.join(table.name());
        match provider {
            Some(provider) => folder.join(format!("provider={}", provider.as_str())),
            None => folder,
        }
    }

    /// Removes part files of an earlier run that this run did not write, and leftovers of
    /// killed runs, in this dataset's table folders only.
    fn remove_stale_parts(&self, keep: &BTreeSet<PathBuf>) -> Result<(), RunError> {
        for table in Table::ALL {
            let folder = self.root.join(table.name());
            let mut folders = vec![folder.clone()];
            if let Ok(entries) = std::fs::read_dir(&folder) {
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name.starts_with("provider=") && entry.path().is_dir() {
                        folders.push(entry.path());
                    }
                }
            }
            for folder in folders {
                let Ok(entries) = std::fs::read_dir(&folder) else { continue };
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let ours = (name.starts_with("part-") && name.ends_with(".parquet"))
                        || (name.starts_with(".part-") && name.ends_with(".parquet.partial"));
                    if ours && !keep.contains(&entry.path()) {
                        std::fs::remove_file(entry.path()).map_err(|error| RunError::write(entry.path().display().to_string(), error))?;
                    }
                }
                if folder != self.root.join(table.name()) {
                    // Only succeeds when empty: a partition no longer in the data.
                    let _ = std::fs::remove_dir(&folder);
                }
            }
        }
        Ok(())
    }
}

impl Sink for ParquetSink {
    fn encoder(&self) -> Arc<dyn Encoder> {
        Arc::new(ParquetEncoder { partition_by_provider: self.layout.partition_by_provider })
    }

    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError> {
        let Encoded::Parquet(tables) = batch else {
            return Err(RunError::write(
                self.root.display().to_string(),
                std::io::Error::other("internal: the parquet sink got another sink's batch"),
            ));
        };
        let tables = tables.map_err(|error| parquet_error(&self.root, error.into()))?;
        for (provider, batches) in tables.partitions {
            for (table, batch) in batches {
                let folder = self.table_folder(table, provider);
                let with_provider = !self.layout.partition_by_provider;
                let writer = self.writers.entry((table, provider)).or_insert_with(|| PartWriter {
                    folder,
                    table,
                    with_provider,
                    next_part: 0,
                    open: None,
                });
                writer.write(&batch, &self.layout, &mut self.written, &mut self.rows, &mut self.created)?;
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<SinkSummary, RunError> {
        // Every table gets at least one (possibly empty) part when not partitioned, so
        // `messages/*.parquet` globs always match something.
        if !self.layout.partition_by_provider {
            for table in Table::ALL {
                if !self.writers.contains_key(&(table, None)) {
                    let folder = self.table_folder(table, None);
                    let mut writer = PartWriter { folder, table, with_provider: true, next_part: 0, open: None };
                    writer.start_part(&self.layout, &mut self.created)?;
                    self.writers.insert((table, None), writer);
                }
            }
        }
        let mut written = std::mem::take(&mut self.written);
        for writer in self.writers.values_mut() {
            writer.close_part(&mut written)?;
        }
        self.written = written;
        let mut bytes = 0;
        let mut finals = BTreeSet::new();
        for (partial, target) in &self.written {
            bytes += std::fs::metadata(partial).map(|meta| meta.len()).unwrap_or(0);
            std::fs::rename(partial, target).map_err(|error| RunError::write(target.display().to_string(), error))?;
            finals.insert(target.clone());
        }
        self.written.clear();
        // Published: the folders are the dataset's now.
        self.created.keep();
        self.remove_stale_parts(&finals)?;
        Ok(SinkSummary { format: "parquet", path: self.root.display().to_string(), records: self.rows, bytes })
    }
}

impl Drop for ParquetSink {
    fn drop(&mut self) {
        // After an error: leave no temporary parts behind.
        for (partial, _) in &self.written {
            let _ = std::fs::remove_file(partial);
        }
        for writer in self.writers.values() {
            if let Some((_, partial, _)) = &writer.open {
                let _ = std::fs::remove_file(partial);
            }
        }
        // The created folders go when `created` drops, after the parts above.
    }
}

fn parquet_error(path: &Path, error: parquet::errors::ParquetError) -> RunError {
    RunError::write(path.display().to_string(), std::io::Error::other(error.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use arrow_array::builder::{BooleanBuilder, StringBuilder, StringDictionaryBuilder};
    use arrow_array::types::Int32Type;

    fn asset_rows(count: usize) -> RecordBatch {
        let mut provider = StringDictionaryBuilder::<Int32Type>::new();
        let (mut conversation, mut message, mut pointer) = (StringBuilder::new(), StringBuilder::new(), StringBuilder::new());
        let mut kind = StringDictionaryBuilder::<Int32Type>::new();
        let (mut resolved, mut name, mut missing) = (StringBuilder::new(), StringBuilder::new(), BooleanBuilder::new());
        for row in 0..count {
            provider.append_value("chatgpt");
            conversation.append_value(format!("c{row}"));
            message.append_value(format!("m{row}"));
            kind.append_value("image");
            // Distinct, incompressible-ish values so the part grows.
            pointer.append_value(crate::hash::sha256_label(&crate::hash::sha256(&row.to_le_bytes())));
            resolved.append_null();
            name.append_null();
            missing.append_value(true);
        }
        let columns: Vec<arrow_array::ArrayRef> = vec![
            Arc::new(provider.finish()),
            Arc::new(conversation.finish()),
            Arc::new(message.finish()),
            Arc::new(kind.finish()),
            Arc::new(pointer.finish()),
            Arc::new(resolved.finish()),
            Arc::new(name.finish()),
            Arc::new(missing.finish()),
        ];
        RecordBatch::try_new(Table::Assets.schema(true), columns).unwrap()
    }

    fn file_names(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(folder).unwrap().flatten().map(|entry| entry.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn parts_roll_over_past_the_size_limit() {
        let folder = tempfile::tempdir().unwrap();
        let layout = ParquetLayout { partition_by_provider: false, row_group_bytes: 4096, part_bytes: 16 * 1024 };
        let mut sink = Box::new(ParquetSink::create(folder.path(), layout).unwrap());
        for _ in 0..4 {
            let batch = asset_rows(2000);
            let mut writer = sink.writers.remove(&(Table::Assets, None)).unwrap_or(PartWriter {
                folder: sink.table_folder(Table::Assets, None),
                table: Table::Assets,
                with_provider: true,
                next_part: 0,
                open: None,
            });
            writer.write(&batch, &layout, &mut sink.written, &mut sink.rows, &mut sink.created).unwrap();
            sink.writers.insert((Table::Assets, None), writer);
        }
        let summary = sink.finish().unwrap();
        assert_eq!(summary.records, 8000);
        let parts = file_names(&folder.path().join("assets"));
        assert!(parts.len() >= 2, "several parts: {parts:?}");
        assert!(parts.iter().all(|name| name.starts_with("part-") && name.ends_with(".parquet")), "{parts:?}");
    }

    #[test]
    fn a_partial_part_left_by_a_killed_run_is_replaced_and_parts_are_world_readable() {
        let folder = tempfile::tempdir().unwrap();
        let assets = folder.path().join("assets");
        std::fs::create_dir_all(&assets).unwrap();
        std::fs::write(assets.join(".part-00000.parquet.partial"), b"left by a killed run").unwrap();
        let layout = ParquetLayout::default();
        let mut sink = Box::new(ParquetSink::create(folder.path(), layout).unwrap());
        let mut writer = PartWriter { folder: assets.clone(), table: Table::Assets, with_provider: true, next_part: 0, open: None };
        writer.write(&asset_rows(10), &layout, &mut sink.written, &mut sink.rows, &mut sink.created).unwrap();
        sink.writers.insert((Table::Assets, None), writer);
        sink.finish().unwrap();
        assert_eq!(file_names(&assets), ["part-00000.parquet"]);
        let mode = std::fs::metadata(assets.join("part-00000.parquet")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
    }

    #[test]
    fn an_unpartitioned_dataset_has_every_table_even_an_empty_one() {
        // Runs without extraction still get the extraction tables, empty: one contract for
        // every dataset, and globs that always match.
        let folder = tempfile::tempdir().unwrap();
        let sink = Box::new(ParquetSink::create(folder.path(), ParquetLayout::default()).unwrap());
        let summary = sink.finish().unwrap();
        assert_eq!(summary.records, 0);
        for table in Table::ALL {
            assert_eq!(file_names(&folder.path().join(table.name())), ["part-00000.parquet"], "{}", table.name());
        }
    }

    #[test]
    fn a_run_that_never_finishes_leaves_no_parquet_file() {
        let folder = tempfile::tempdir().unwrap();
        let layout = ParquetLayout::default();
        let mut sink = ParquetSink::create(folder.path(), layout).unwrap();
        let mut writer = PartWriter {
            folder: sink.table_folder(Table::Assets, None),
            table: Table::Assets,
            with_provider: true,
            next_part: 0,
            open: None,
        };
        writer.write(&asset_rows(10), &layout, &mut sink.written, &mut sink.rows, &mut sink.created).unwrap();
        // While the run is going, only a hidden partial file exists.
        assert_eq!(file_names(&folder.path().join("assets")), [".part-00000.parquet.partial"]);
        sink.writers.insert((Table::Assets, None), writer);
        drop(sink);
        // The table folder this run created goes too; the dataset folder, which was there, stays.
        assert!(!folder.path().join("assets").exists());
        assert!(folder.path().is_dir());
    }
}
