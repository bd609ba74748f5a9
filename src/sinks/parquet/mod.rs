//! Parquet dataset writer (`--to parquet`): a folder with one subfolder per table
//! (`conversations`, `messages`, `memories`, `assets`, and for extracted memories
//! `memory_evidence`, `entities`, `memory_entities`), each holding `part-NNNNN.parquet` files,
//! or `provider=<name>/part-NNNNN.parquet` with `--partition-by provider`. A sync's
//! retractions ([`Sink::retract`]) are the `retractions` table, written only when there are
//! some: the one table an unpartitioned dataset does not always have.
//!
//! Record batches are built on the worker pool ([`columns`]); the sink writes them in input
//! order with the parquet crate's `ArrowWriter` (zstd), which closes a row group when its
//! encoded size passes [`ROW_GROUP_BYTES`] or it holds [`schema::ROW_GROUP_ROWS`] rows, so
//! memory stays bounded. A part is closed and the next one started past [`PART_BYTES`]. The
//! sink writes plainly into the folder it is given, parts and manifest; a run gives it a
//! staging folder and [`publish`] moves the finished dataset into place.
//!
//! The dataset folder's manifest ([`output_file::Manifest`], `.memport-output.json`) lists the
//! parts memport wrote there. A rerun removes the parts of the earlier run it did not write
//! again, and only those: memport never deletes a file it did not write. A Parquet file in a
//! table folder that the manifest does not list (the user's own, or one written by a memport
//! without manifests) makes the run stop before it starts, because every reader that globs
//! `messages/*.parquet` would read it as part of the dataset, and a part this run writes could
//! have its name. Why a manifest rather than a marker in each part's footer: the manifest says
//! which files this dataset's run wrote, not just that memport wrote a file like it (a part
//! copied in from another dataset carries the same footer), it is read without parsing files
//! memport did not write, and listing old and new parts together while they are swapped keeps
//! a run killed halfway from leaving parts that the next run would take for the user's.

pub mod columns;
mod extracted_columns;
mod retraction_columns;
pub mod schema;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;

use crate::error::RunError;
use crate::model::{Conversation, Provider, RetractedConversation};
use crate::sinks::direct_writer::DirectWriter;
use crate::sinks::output_file::{MANIFEST_FILE, Manifest};
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary};
use schema::Table;

/// The format name the dataset's manifest carries.
const FORMAT: &str = "parquet";

/// A row group is closed when its encoded size passes this. The open row groups of the tables
/// are most of the writer's memory: the 1 GB export peaked at 262 MiB with 32 MiB, 233–242
/// MiB with 16 MiB (docs/design-decisions.md#memory).
pub const ROW_GROUP_BYTES: usize = 16 << 20;
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
    open: Option<(ArrowWriter<DirectWriter>, PathBuf)>,
}

impl PartWriter {
    fn write(&mut self, batch: &RecordBatch, layout: &ParquetLayout, written: &mut Vec<PathBuf>, rows: &mut u64) -> Result<(), RunError> {
        if self.open.is_none() {
            self.start_part(layout)?;
        }
        let Some((writer, path)) = self.open.as_mut() else { return Ok(()) };
        writer.write(batch).map_err(|error| parquet_error(path, error))?;
        *rows += batch.num_rows() as u64;
        if writer.bytes_written() as u64 + writer.in_progress_size() as u64 >= layout.part_bytes {
            self.close_part(written)?;
        }
        Ok(())
    }

    /// Opens the next part, creating the table's folder when needed.
    fn start_part(&mut self, layout: &ParquetLayout) -> Result<(), RunError> {
        let path = self.folder.join(format!("part-{:05}.parquet", self.next_part));
        self.next_part += 1;
        let write_error = |error: io::Error| RunError::write(path.display().to_string(), error);
        std::fs::create_dir_all(&self.folder).map_err(write_error)?;
        let file = DirectWriter::create(&path).map_err(write_error)?;
        let writer =
            ArrowWriter::try_new(file, self.table.schema(self.with_provider), Some(self.table.writer_properties(layout.row_group_bytes)))
                .map_err(|error| parquet_error(&path, error))?;
        self.open = Some((writer, path));
        Ok(())
    }

    fn close_part(&mut self, written: &mut Vec<PathBuf>) -> Result<(), RunError> {
        if let Some((writer, path)) = self.open.take() {
            let inner = writer.into_inner().map_err(|error| parquet_error(&path, error))?;
            inner.finish().map_err(|error| RunError::write(path.display().to_string(), error))?;
            written.push(path);
        }
        Ok(())
    }
}

/// Writes the dataset folder.
pub struct ParquetSink {
    root: PathBuf,
    layout: ParquetLayout,
    writers: BTreeMap<(Table, Option<Provider>), PartWriter>,
    /// Closed parts.
    written: Vec<PathBuf>,
    rows: u64,
}

impl ParquetSink {
    /// Creates the sink writing a dataset into the folder `root`, new or empty (a run gives it
    /// a staging folder): parts as they fill, the manifest in [`Sink::finish`].
    ///
    /// # Errors
    /// I/O errors creating the folder.
    pub fn create(root: &Path, layout: ParquetLayout) -> Result<ParquetSink, RunError> {
        std::fs::create_dir_all(root).map_err(|error| RunError::write(root.display().to_string(), error))?;
        Ok(ParquetSink { root: root.to_owned(), layout, writers: BTreeMap::new(), written: Vec::new(), rows: 0 })
    }

    fn table_folder(&self, table: Table, provider: Option<Provider>) -> PathBuf {
        let folder = self.root.join(table.name());
        match provider {
            Some(provider) => folder.join(format!("provider={}", provider.as_str())),
            None => folder,
        }
    }

    /// Writes `batch` to `table`'s part in `provider`'s partition, starting it when needed.
    fn write_table(&mut self, table: Table, provider: Option<Provider>, batch: &RecordBatch) -> Result<(), RunError> {
        let folder = self.table_folder(table, provider);
        let with_provider = !self.layout.partition_by_provider;
        let writer =
            self.writers.entry((table, provider)).or_insert_with(|| PartWriter { folder, table, with_provider, next_part: 0, open: None });
        writer.write(batch, &self.layout, &mut self.written, &mut self.rows)
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
                self.write_table(table, provider, &batch)?;
            }
        }
        Ok(())
    }

    fn retract(&mut self, retracted: &[RetractedConversation]) -> Result<(), RunError> {
        let sorted = RetractedConversation::sorted(retracted);
        let batches = retraction_columns::encode(&sorted, self.layout.partition_by_provider)
            .map_err(|error| parquet_error(&self.root, error.into()))?;
        for (provider, batch) in batches {
            self.write_table(Table::Retractions, provider, &batch)?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<SinkSummary, RunError> {
        // Every table but the occasional ones gets at least one (possibly empty) part when not
        // partitioned, so `messages/*.parquet` globs always match something.
        if !self.layout.partition_by_provider {
            for table in Table::ALL {
                if !self.writers.contains_key(&(table, None)) {
                    let folder = self.table_folder(table, None);
                    let mut writer = PartWriter { folder, table, with_provider: true, next_part: 0, open: None };
                    writer.start_part(&self.layout)?;
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
        let mut manifest = Manifest::new(FORMAT);
        for part in &self.written {
            bytes += std::fs::metadata(part).map(|meta| meta.len()).unwrap_or(0);
            manifest.files.insert(relative_name(&self.root, part));
        }
        manifest.write(&self.root).map_err(|error| RunError::write(self.root.display().to_string(), error))?;
        Ok(SinkSummary { format: "parquet", path: self.root.display().to_string(), records: self.rows, bytes })
    }
}

/// Refuses a folder memport may not write a dataset into: a file, a folder whose manifest
/// is another format's, or one whose table folders hold a Parquet file memport did not write
/// there (see the module docs). Other files in the folder do not matter: they are left alone.
///
/// # Errors
/// [`RunError::Write`] naming `root` and saying what to do.
pub fn check_replaceable(root: &Path) -> Result<(), RunError> {
    check_dataset_folder(root).map(|_| ()).map_err(|error| RunError::write(root.display().to_string(), error))
}

/// [`check_replaceable`], returning the folder's manifest when it has one.
fn check_dataset_folder(root: &Path) -> io::Result<Option<Manifest>> {
    if root.is_file() {
        return Err(io::Error::other("parquet output is a folder of tables, and this is a file; name a folder with -o"));
    }
    let manifest = Manifest::read(root)?;
    if let Some(other) = manifest.as_ref().filter(|found| found.format != FORMAT) {
        return Err(io::Error::other(format!(
            "this folder holds memport's {} output, not a Parquet dataset; name another folder with -o",
            other.format
        )));
    }
    for relative in parquet_files(root)? {
        if !manifest.as_ref().is_some_and(|found| found.files.contains(&relative)) {
            return Err(io::Error::other(format!(
                "{relative} is not a part memport wrote here (the folder's {MANIFEST_FILE} does not list it), so memport will neither replace it nor add parts beside it; move it out of the folder, or name another folder with -o"
            )));
        }
    }
    Ok(manifest)
}

/// Each table folder of the dataset at `root` and its `provider=` folders, that exist.
fn table_folders(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut folders = Vec::new();
    for table in Table::every() {
        let folder = root.join(table.name());
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(error) if matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => continue,
            Err(error) => return Err(error),
        };
        for entry in entries {
            let entry = entry?;
            if entry.file_name().to_string_lossy().starts_with("provider=") && entry.file_type()?.is_dir() {
                folders.push(entry.path());
            }
        }
        folders.push(folder);
    }
    Ok(folders)
}

/// The Parquet files in the table folders of `root` (what a reader of the dataset reads), by
/// relative path.
fn parquet_files(root: &Path) -> io::Result<Vec<String>> {
    let mut found = Vec::new();
    for folder in table_folders(root)? {
        for entry in std::fs::read_dir(&folder)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            // Folders too: Spark writes a dataset as a folder named `*.parquet`.
            if name.ends_with(".parquet") && !name.starts_with('.') {
                found.push(relative_name(root, &entry.path()));
            }
        }
    }
    Ok(found)
}

/// `path` relative to `root`, `/`-separated, as manifests name files.
fn relative_name(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative.components().map(|part| part.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Moves the finished `parts` (each a file and its path relative to `root`) into the dataset at
/// `root`, removes the parts memport wrote there before that are not among them, and writes
/// the manifest. The manifest lists old and new parts together until the swap is done, so a
/// run killed in the middle leaves every part memport wrote listed.
fn publish_parts(root: &Path, parts: &[(PathBuf, String)]) -> io::Result<()> {
    let old = check_dataset_folder(root)?.unwrap_or_else(|| Manifest::new(FORMAT));
    let mut new = Manifest::new(FORMAT);
    new.files = parts.iter().map(|(_, relative)| relative.clone()).collect();
    old.merged_with(&new).write(root)?;
    for (part, relative) in parts {
        let target = root.join(relative);
        if let Some(folder) = target.parent() {
            std::fs::create_dir_all(folder)?;
        }
        std::fs::rename(part, &target)?;
    }
    for relative in old.files.difference(&new.files) {
        let stale = root.join(relative);
        match std::fs::remove_file(&stale) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        if let Some(folder) = stale.parent()
            && folder.file_name().is_some_and(|name| name.to_string_lossy().starts_with("provider="))
        {
            // Only succeeds when empty: a partition no longer in the data.
            let _ = std::fs::remove_dir(folder);
        }
    }
    // Hidden `.part-NNNNN.parquet.partial` files are where an earlier memport wrote its parts
    // inside the dataset; any left are a killed run's (the run holds the dataset's lock).
    for folder in table_folders(root)? {
        for entry in std::fs::read_dir(&folder)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".part-") && name.ends_with(".parquet.partial") && entry.file_type()?.is_file() {
                std::fs::remove_file(entry.path())?;
            }
        }
    }
    // A table only some runs write (`retractions`) whose parts all went leaves no empty
    // folder that would say it is there (only succeeds when empty).
    for table in Table::OCCASIONAL {
        let _ = std::fs::remove_dir(root.join(table.name()));
    }
    new.write(root)
}

/// Moves a dataset built (and finished) in the folder `built` into `root`: the run's publish
/// step, after its report is written. Replaces what memport wrote in `root` before and nothing
/// else.
///
/// # Errors
/// [`RunError::Write`] naming `root`: I/O errors, or a `root` memport may not write into.
pub fn publish(built: &Path, root: &Path) -> Result<(), RunError> {
    let write_error = |error: io::Error| RunError::write(root.display().to_string(), error);
    let Some(manifest) = Manifest::read(built).map_err(write_error)? else {
        return Err(RunError::Internal(format!("the dataset built in {} has no manifest", built.display())));
    };
    let parts: Vec<(PathBuf, String)> = manifest.files.iter().map(|relative| (built.join(relative), relative.clone())).collect();
    std::fs::create_dir_all(root).map_err(write_error)?;
    // Nothing but memport's parts in the dataset folder: the new dataset takes its place in
    // one step, with its manifest.
    let old = check_dataset_folder(root).map_err(write_error)?;
    let listed = |path: &str| old.as_ref().is_some_and(|found| found.files.contains(path));
    if crate::sinks::folder_swap::holds_only(root, &listed).map_err(write_error)?
        && crate::sinks::folder_swap::swap_in(built, root).map_err(write_error)?
    {
        return Ok(());
    }
    publish_parts(root, &parts).map_err(write_error)
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
    use std::os::unix::fs::PermissionsExt;

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
            writer.write(&batch, &layout, &mut sink.written, &mut sink.rows).unwrap();
            sink.writers.insert((Table::Assets, None), writer);
        }
        let summary = sink.finish().unwrap();
        assert_eq!(summary.records, 8000);
        let parts = file_names(&folder.path().join("assets"));
        assert!(parts.len() >= 2, "several parts: {parts:?}");
        assert!(parts.iter().all(|name| name.starts_with("part-") && name.ends_with(".parquet")), "{parts:?}");
    }

    #[test]
    fn parts_are_written_under_their_own_names_and_are_world_readable() {
        let folder = tempfile::tempdir().unwrap();
        let assets = folder.path().join("assets");
        let layout = ParquetLayout::default();
        let mut sink = Box::new(ParquetSink::create(folder.path(), layout).unwrap());
        let mut writer = PartWriter { folder: assets.clone(), table: Table::Assets, with_provider: true, next_part: 0, open: None };
        writer.write(&asset_rows(10), &layout, &mut sink.written, &mut sink.rows).unwrap();
        assert_eq!(file_names(&assets), ["part-00000.parquet"], "plainly, in the folder given");
        sink.writers.insert((Table::Assets, None), writer);
        sink.finish().unwrap();
        assert_eq!(file_names(&assets), ["part-00000.parquet"]);
        let mode = std::fs::metadata(assets.join("part-00000.parquet")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        let manifest = Manifest::read(folder.path()).unwrap().unwrap();
        assert!(manifest.files.contains("assets/part-00000.parquet"), "{:?}", manifest.files);
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
        // Only a sync that retracts something writes the retractions table.
        assert!(!folder.path().join(Table::Retractions.name()).exists());
    }

    /// Puts a dataset at `root` as a run does: checked, built by [`dataset_with_assets`] in a
    /// staging folder inside it, published.
    fn published_with_assets(root: &Path, batches: usize) -> Result<(), RunError> {
        check_replaceable(root)?;
        let staging = root.join(".memport-staging");
        dataset_with_assets(&staging.join("dataset"), batches);
        let published = publish(&staging.join("dataset"), root);
        let _ = std::fs::remove_dir_all(&staging);
        published
    }

    /// A finished dataset built in `root` whose assets table has `batches` batches of 2000
    /// rows, in parts of 16 KiB (so several parts).
    fn dataset_with_assets(root: &Path, batches: usize) {
        let layout = ParquetLayout { partition_by_provider: false, row_group_bytes: 4096, part_bytes: 16 * 1024 };
        let mut sink = Box::new(ParquetSink::create(root, layout).unwrap());
        let mut writer = PartWriter {
            folder: sink.table_folder(Table::Assets, None),
            table: Table::Assets,
            with_provider: true,
            next_part: 0,
            open: None,
        };
        for _ in 0..batches {
            writer.write(&asset_rows(2000), &layout, &mut sink.written, &mut sink.rows).unwrap();
        }
        sink.writers.insert((Table::Assets, None), writer);
        sink.finish().unwrap();
    }

    #[test]
    fn a_rerun_removes_only_the_parts_memport_wrote_and_leaves_other_files_alone() {
        let folder = tempfile::tempdir().unwrap();
        published_with_assets(folder.path(), 4).unwrap();
        let first = file_names(&folder.path().join("assets"));
        assert!(first.len() >= 2, "{first:?}");
        std::fs::write(folder.path().join("notes.txt"), b"the user's").unwrap();
        std::fs::write(folder.path().join("assets").join("README.md"), b"the user's too").unwrap();
        published_with_assets(folder.path(), 1).unwrap();
        assert_eq!(file_names(&folder.path().join("assets")), ["README.md", "part-00000.parquet"]);
        assert!(folder.path().join("notes.txt").exists());
        let manifest = Manifest::read(folder.path()).unwrap().unwrap();
        assert_eq!(manifest.files.len(), Table::ALL.len(), "one part per table: {:?}", manifest.files);
        assert!(manifest.files.contains("assets/part-00000.parquet"));
    }

    #[test]
    fn a_parquet_file_memport_did_not_write_stops_the_run_and_is_left_alone() {
        let folder = tempfile::tempdir().unwrap();
        let messages = folder.path().join("messages");
        std::fs::create_dir_all(&messages).unwrap();
        std::fs::write(messages.join("part-00001.parquet"), b"the user's own part").unwrap();
        let error = published_with_assets(folder.path(), 1).err().unwrap().to_string();
        assert!(error.contains("messages/part-00001.parquet is not a part memport wrote here"), "{error}");
        assert_eq!(std::fs::read(messages.join("part-00001.parquet")).unwrap(), b"the user's own part");
        // Also after a dataset of memport's is there: a part added to it is not memport's.
        let dataset = tempfile::tempdir().unwrap();
        published_with_assets(dataset.path(), 1).unwrap();
        std::fs::write(dataset.path().join("assets").join("part-00009.parquet"), b"added").unwrap();
        let error = published_with_assets(dataset.path(), 1).err().unwrap().to_string();
        assert!(error.contains("assets/part-00009.parquet"), "{error}");
        assert!(dataset.path().join("assets").join("part-00009.parquet").exists());
    }

    #[test]
    fn a_dataset_built_elsewhere_is_published_over_the_old_one() {
        let (built, target) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        dataset_with_assets(target.path(), 4);
        dataset_with_assets(built.path(), 1);
        let built_manifest = Manifest::read(built.path()).unwrap();
        publish(built.path(), target.path()).unwrap();
        assert_eq!(file_names(&target.path().join("assets")), ["part-00000.parquet"]);
        assert_eq!(Manifest::read(target.path()).unwrap(), built_manifest);
        // The dataset folder held only memport's parts: the built one took its place whole.
        assert!(!built.path().exists() || file_names(&built.path().join("assets")).is_empty(), "the parts were moved, not copied");
    }

    #[test]
    fn retractions_are_a_table_of_their_own_written_only_when_there_are_some() {
        use arrow_array::cast::AsArray;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

        let folder = tempfile::tempdir().unwrap();
        let mut sink = Box::new(ParquetSink::create(folder.path(), ParquetLayout::default()).unwrap());
        let origin = crate::model::Origin { file: "conversations.json".into(), offset: 0, index: 0 };
        let mut conversation = Conversation::empty(Provider::ChatGpt, "c2".into(), origin);
        conversation.messages = vec![crate::model::Message::user_for_tests("m1", None, "Hello.", 10)];
        let encoded = sink.encoder().encode(&[conversation]);
        sink.write_batch(encoded).unwrap();
        let retracted = |provider: Provider, id: &str| RetractedConversation {
            provider,
            conversation_id: id.to_owned(),
            title: None,
            created_at: Some(5),
            retracted_by: "run-2".to_owned(),
            retracted_at: 20,
            messages: Vec::new(),
        };
        // Given out of order: written by provider, then id.
        sink.retract(&[retracted(Provider::Claude, "k1"), retracted(Provider::ChatGpt, "c1")]).unwrap();
        let summary = sink.finish().unwrap();
        assert_eq!(summary.records, 1 + 1 + 2, "a conversation, its message and two retractions");
        let retractions = folder.path().join(Table::Retractions.name());
        assert_eq!(file_names(&retractions), ["part-00000.parquet"]);
        let file = std::fs::File::open(retractions.join("part-00000.parquet")).unwrap();
        let batches: Vec<RecordBatch> =
            ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 2);
        let ids = batches[0].column_by_name("conversation_id").unwrap().as_string::<i32>();
        assert_eq!((ids.value(0), ids.value(1)), ("c1", "k1"));
        let manifest = Manifest::read(folder.path()).unwrap().unwrap();
        assert!(manifest.files.contains("retractions/part-00000.parquet"), "{:?}", manifest.files);

        // A rerun without retractions, published over it, takes the table away, folder and all.
        let built = folder.path().join(".memport-staging").join("dataset");
        let sink = Box::new(ParquetSink::create(&built, ParquetLayout::default()).unwrap());
        sink.finish().unwrap();
        publish(&built, folder.path()).unwrap();
        let _ = std::fs::remove_dir_all(folder.path().join(".memport-staging"));
        assert!(!retractions.exists());
        let manifest = Manifest::read(folder.path()).unwrap().unwrap();
        assert!(manifest.files.iter().all(|file| !file.starts_with("retractions/")), "{:?}", manifest.files);
    }
}
