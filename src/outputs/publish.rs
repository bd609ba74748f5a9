//! Each output of a run is built in a staging folder ([`Layout::staging`]) and moved into place
//! only after the run report is written, so a run that fails at any point before (the report
//! included) leaves no new output in place. Each sink writes plainly to the staged path it is
//! given; `StagedSink` only renames that path back to the target in what it reports. Publishing is one rename for a file, and for a folder output the format's own
//! replacement, which touches only what memport wrote there ([`crate::sinks::output_file::Manifest`]).
//!
//! `ump-md` folders are replaced here, not in `crate::sinks::ump`, which writes a fresh folder of
//! records and cannot tell an earlier run's records from anyone else's. Their manifest sits beside the
//! folder ([`Layout::manifest_beside`]), not in it: every reader of the binding takes each file
//! in the folder for a record.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::RunError;
use crate::outputs::guard::{Layout, Placement};
use crate::sinks::output_file::{FolderListing, Manifest};
use crate::sinks::{self, Encoded, Encoder, OutputFormat, Shape, Sink, SinkSettings, SinkSummary};

/// The format name an `ump-md` folder's manifest carries.
const RECORDS_FORMAT: &str = "ump-md";

/// Where memport's own files for an output of `format` go: inside the folder for the formats
/// that replace only their own files in it, beside the target for the others.
pub fn placement(format: OutputFormat) -> Placement {
    match format.descriptor().shape {
        Shape::OwnFolder { .. } => Placement::Inside,
        Shape::File | Shape::UpdatedFile { .. } | Shape::RecordsFolder => Placement::Beside,
    }
}

/// Refuses an output memport may not write or replace, before the run does any work (and
/// again when it is published, as the replacement starts).
///
/// # Errors
/// [`RunError::Write`] naming the target and saying what to do.
pub fn check_target(format: OutputFormat, target: &Path) -> Result<(), RunError> {
    let refuse = |error: io::Error| RunError::write(target.display().to_string(), error);
    match format.descriptor().shape {
        Shape::OwnFolder { check_replaceable, .. } => check_replaceable(target),
        Shape::RecordsFolder => check_records_folder(target, &Layout::of(target, Placement::Beside)?.manifest_beside).map_err(refuse),
        Shape::File | Shape::UpdatedFile { .. } => {
            if target.is_dir() {
                return Err(refuse(io::Error::other(format!(
                    "the {} output is one file, and this is a folder; name a file with -o (with several formats, -o names their folder)",
                    format.name()
                ))));
            }
            Ok(())
        }
    }
}

/// One output built in its staging folder, waiting to be published. Dropped unpublished (the
/// run failed), it removes the staging folder and everything built in it.
pub struct StagedOutput {
    format: OutputFormat,
    target: PathBuf,
    staging: PathBuf,
    built: PathBuf,
    /// Where an `ump-md` folder's manifest goes.
    manifest_beside: PathBuf,
    published: bool,
    /// For a file the run updates (the store), its other writers held off until it is replaced.
    hold: Option<crate::store::WriteHold>,
    /// A store in a database, which its sink loads in place in one transaction and hands here
    /// open, to be committed when the output is published: nothing staged.
    in_database: Option<crate::sinks::store::HandedStore>,
}

impl StagedOutput {
    /// Makes the staging folder of `layout` and the sink for `format` that builds the output
    /// in it.
    ///
    /// # Errors
    /// I/O errors making the folder, and whatever building the sink fails with.
    pub fn build(format: OutputFormat, layout: &Layout, settings: &SinkSettings) -> Result<(StagedOutput, Box<dyn Sink>), RunError> {
        std::fs::create_dir_all(&layout.staging).map_err(|error| RunError::write(layout.staging.display().to_string(), error))?;
        let mut staged = StagedOutput {
            format,
            target: layout.target.clone(),
            staging: layout.staging.clone(),
            built: layout.built(),
            manifest_beside: layout.manifest_beside.clone(),
            published: false,
            hold: None,
            in_database: None,
        };
        if let Shape::UpdatedFile { seed } = format.descriptor().shape {
            staged.hold = seed(&staged.target, &staged.built)?;
        }
        let (built, target) = (staged.built.display().to_string(), staged.target.display().to_string());
        let inner = sinks::build(format, &staged.built, settings).map_err(|error| naming_target(error, &built, &target))?;
        let sink: Box<dyn Sink> = Box::new(StagedSink { inner, built, target });
        Ok((staged, sink))
    }

    /// The output of a memory store in a PostgreSQL database (`target` is its URL): its sink
    /// loads the run's records in place, in one transaction that publishing commits (a run that
    /// fails before rolls it back), so there is nothing to stage.
    ///
    /// # Errors
    /// [`RunError::Config`] for any other format; what building the sink fails with.
    pub fn in_database(format: OutputFormat, target: &Path, settings: &SinkSettings) -> Result<(StagedOutput, Box<dyn Sink>), RunError> {
        if format != OutputFormat::Store {
            return Err(crate::error::ConfigError::Option {
                option: "-o".into(),
                reason: format!(
                    "a PostgreSQL database holds a memory store only (--to store), not {}; write {} to a file or folder",
                    format.name(),
                    format.name()
                ),
            }
            .into());
        }
        let handed = crate::sinks::store::HandedStore::default();
        let sink =
            crate::sinks::store::StoreSink::create(target, &settings.owner_id, settings.sign_key.clone())?.handing_to(handed.clone());
        let sink: Box<dyn Sink> = Box::new(sink);
        let shown = crate::store::shown_location(target);
        let output = StagedOutput {
            format,
            target: target.to_owned(),
            staging: PathBuf::new(),
            built: target.to_owned(),
            manifest_beside: PathBuf::new(),
            published: false,
            hold: None,
            in_database: Some(handed),
        };
        Ok((output, Box::new(StagedSink { inner: sink, built: shown.clone(), target: shown })))
    }

    /// Moves the finished output into place, replacing what an earlier run of memport wrote
    /// there, and removes the staging folder.
    ///
    /// # Errors
    /// I/O errors, or a target that changed since the run started into one memport may not
    /// replace.
    pub fn publish(mut self) -> Result<(), RunError> {
        if let Some(handed) = &self.in_database {
            crate::sinks::store::commit_handed(handed, &self.target)?;
            self.published = true;
            return Ok(());
        }
        let write_error = |error: io::Error| RunError::write(self.target.display().to_string(), error);
        match self.format.descriptor().shape {
            Shape::OwnFolder { publish, .. } => publish(&self.built, &self.target)?,
            Shape::RecordsFolder => {
                publish_records_folder(&self.built, &self.target, &self.staging, &self.manifest_beside).map_err(write_error)?;
            }
            Shape::File | Shape::UpdatedFile { .. } => std::fs::rename(&self.built, &self.target).map_err(write_error)?,
        }
        self.published = true;
        // Writers waiting on the replaced file go on in the new one.
        drop(self.hold.take());
        // What is left is empty or an old folder moved aside; a failure to remove it leaves it
        // to the next run on this target, which removes a killed run's staging folder.
        let _ = std::fs::remove_dir_all(&self.staging);
        Ok(())
    }
}

impl Drop for StagedOutput {
    fn drop(&mut self) {
        if !self.published && self.in_database.is_none() {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

/// A sink writing at a staged path, reporting (and failing) under its target's name.
struct StagedSink {
    inner: Box<dyn Sink>,
    /// The staged path, as errors show it.
    built: String,
    /// The target, as the user gave it.
    target: String,
}

impl Sink for StagedSink {
    fn encoder(&self) -> Arc<dyn Encoder> {
        self.inner.encoder()
    }

    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError> {
        self.inner.write_batch(batch).map_err(|error| naming_target(error, &self.built, &self.target))
    }

    fn retract(&mut self, retracted: &[crate::model::RetractedConversation]) -> Result<(), RunError> {
        self.inner.retract(retracted).map_err(|error| naming_target(error, &self.built, &self.target))
    }

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let StagedSink { inner, built, target } = *self;
        match inner.finish() {
            Ok(summary) => Ok(SinkSummary { path: target, ..summary }),
            Err(error) => Err(naming_target(error, &built, &target)),
        }
    }
}

/// `error` with a path under the staged output `built` named under `target` instead: the
/// staging folder is memport's business, the user asked for the target.
fn naming_target(error: RunError, built: &str, target: &str) -> RunError {
    match error {
        RunError::Write { path, source } => {
            let renamed =
                path.strip_prefix(built).filter(|rest| rest.is_empty() || rest.starts_with('/')).map(|rest| format!("{target}{rest}"));
            RunError::Write { path: renamed.unwrap_or(path), source }
        }
        other => other,
    }
}

/// Refuses an `ump-md` target memport may not replace: a file, a folder holding anything but
/// `.ump.md` records, or records memport did not write there (the listing in its manifest, at
/// `manifest_path`, differs).
fn check_records_folder(target: &Path, manifest_path: &Path) -> io::Result<()> {
    if target.is_file() {
        return Err(io::Error::other("ump-md writes a folder of .ump.md files, and this is a file; name a folder with -o"));
    }
    let entries = match std::fs::read_dir(target) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    let mut holds_records = false;
    for entry in entries {
        let name = entry?.file_name();
        if !name.to_string_lossy().ends_with(".ump.md") {
            return Err(io::Error::other(format!(
                "this folder holds {}, which is not a .ump.md record, so memport will not replace it; name a new or empty folder with -o",
                name.to_string_lossy()
            )));
        }
        holds_records = true;
    }
    if !holds_records {
        return Ok(());
    }
    let manifest = match Manifest::read_file(manifest_path)? {
        Some(manifest) if manifest.format == RECORDS_FORMAT => manifest,
        _ => {
            return Err(io::Error::other(format!(
                "this folder holds .ump.md records that memport did not write (no {} beside it lists them), so memport will not replace them; move them away, or name a new or empty folder with -o",
                manifest_path.display()
            )));
        }
    };
    let listing = FolderListing::of(target, |_| false)?;
    if !manifest.lists_folder(".", &listing) {
        return Err(io::Error::other(format!(
            "its .ump.md records are not the ones memport wrote there ({} files now; some were added, removed or renamed since), so memport will not replace them; move the files you added away, or name a new or empty folder with -o",
            listing.entries
        )));
    }
    Ok(())
}

/// Replaces the `ump-md` folder `target` with the one built at `built`: the old folder is moved
/// aside into `staging` whole and the new one takes its name, so no reader sees old and new
/// records mixed, and a failed swap puts the old one back. The manifest at `manifest_path`
/// lists both folders until the swap is done, so a run killed in between leaves the folder in
/// place recognised as memport's.
fn publish_records_folder(built: &Path, target: &Path, staging: &Path, manifest_path: &Path) -> io::Result<()> {
    check_records_folder(target, manifest_path)?;
    let mut manifest = Manifest::new(RECORDS_FORMAT);
    manifest.folders.insert(".".to_owned(), vec![FolderListing::of(built, |_| false)?]);
    match Manifest::read_file(manifest_path)? {
        Some(old) if old.format == RECORDS_FORMAT => old.merged_with(&manifest).write_file(manifest_path)?,
        _ => manifest.write_file(manifest_path)?,
    }
    // One step where the file system can: the folders are exchanged, and the old one goes.
    if target.is_dir() && crate::sinks::folder_swap::swap_in(built, target)? {
        return manifest.write_file(manifest_path);
    }
    let replaced = staging.join(".memport-replaced");
    let had_target = std::fs::symlink_metadata(target).is_ok();
    if had_target {
        std::fs::rename(target, &replaced)?;
    }
    if let Err(error) = std::fs::rename(built, target) {
        if had_target {
            let _ = std::fs::rename(&replaced, target);
        }
        return Err(error);
    }
    manifest.write_file(manifest_path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::output_file::tests::names_in;

    #[test]
    fn a_file_output_appears_only_when_published_and_reports_its_target() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("memory.mif.json");
        std::fs::write(&target, b"the previous run's").unwrap();
        let layout = Layout::of(&target, placement(OutputFormat::Mif)).unwrap();
        let (staged, sink) = StagedOutput::build(OutputFormat::Mif, &layout, &SinkSettings::for_tests()).unwrap();
        let summary = sink.finish().unwrap();
        assert_eq!(summary.path, target.display().to_string());
        assert_eq!(std::fs::read(&target).unwrap(), b"the previous run's", "finished is not published");
        staged.publish().unwrap();
        assert!(std::fs::read_to_string(&target).unwrap().starts_with("{\"mif_version\":\"2.0\""));
        assert_eq!(names_in(folder.path()), ["memory.mif.json"], "no staging folder is left");
    }

    #[test]
    fn an_unpublished_output_leaves_nothing_and_the_old_one_stays() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("memory.ump.ndjson");
        std::fs::write(&target, b"old").unwrap();
        let layout = Layout::of(&target, placement(OutputFormat::UmpNdjson)).unwrap();
        let (staged, sink) = StagedOutput::build(OutputFormat::UmpNdjson, &layout, &SinkSettings::for_tests()).unwrap();
        sink.finish().unwrap();
        drop(staged);
        assert_eq!(names_in(folder.path()), ["memory.ump.ndjson"]);
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
    }

    #[test]
    fn errors_name_the_target_instead_of_the_staged_path() {
        let error = RunError::write("out/.memport-a.json.staging/a.json", io::Error::other("disk full"));
        let renamed = naming_target(error, "out/.memport-a.json.staging/a.json", "out/a.json");
        assert_eq!(renamed.to_string(), "writing out/a.json: disk full");
        let inside = naming_target(
            RunError::write("store/.memport-staging/store/conversations/x.json", io::Error::other("full")),
            "store/.memport-staging/store",
            "store",
        );
        assert_eq!(inside.to_string(), "writing store/conversations/x.json: full");
        let other = naming_target(
            RunError::write("store/.memport-staging/store2", io::Error::other("full")),
            "store/.memport-staging/store",
            "store",
        );
        assert_eq!(other.to_string(), "writing store/.memport-staging/store2: full", "only paths under the staged output");
    }

    #[test]
    fn a_records_folder_is_replaced_only_when_memport_wrote_what_is_in_it() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("records");
        let layout = Layout::of(&target, placement(OutputFormat::UmpMd)).unwrap();
        assert_eq!(layout.manifest_beside, folder.path().join(".memport-records.output.json"));
        let build = |names: &[&str]| {
            std::fs::create_dir_all(layout.built()).unwrap();
            for name in names {
                std::fs::write(layout.built().join(name), b"---\n{}\n---\n").unwrap();
            }
        };
        build(&["a.ump.md", "b.ump.md"]);
        publish_records_folder(&layout.built(), &target, &layout.staging, &layout.manifest_beside).unwrap();
        assert_eq!(names_in(&target), ["a.ump.md", "b.ump.md"], "the folder holds records only");
        std::fs::remove_dir_all(&layout.staging).unwrap();
        build(&["c.ump.md"]);
        publish_records_folder(&layout.built(), &target, &layout.staging, &layout.manifest_beside).unwrap();
        assert_eq!(names_in(&target), ["c.ump.md"]);
        let manifest = Manifest::read_file(&layout.manifest_beside).unwrap().unwrap();
        assert_eq!(manifest.folders["."].len(), 1, "only the new listing once the swap is done");

        std::fs::write(target.join("notes.txt"), b"mine").unwrap();
        let error = check_target(OutputFormat::UmpMd, &target).unwrap_err().to_string();
        assert!(error.contains("notes.txt") && error.contains("not a .ump.md record"), "{error}");
        std::fs::remove_file(target.join("notes.txt")).unwrap();
        std::fs::write(target.join("d.ump.md"), b"mine").unwrap();
        let error = check_target(OutputFormat::UmpMd, &target).unwrap_err().to_string();
        assert!(error.contains("not the ones memport wrote"), "{error}");
        std::fs::remove_file(&layout.manifest_beside).unwrap();
        let error = check_target(OutputFormat::UmpMd, &target).unwrap_err().to_string();
        assert!(error.contains("memport did not write"), "{error}");
        assert_eq!(names_in(&target), ["c.ump.md", "d.ump.md"], "a refusal touches nothing");
    }

    #[test]
    fn a_single_file_format_refuses_a_folder_target() {
        let folder = tempfile::tempdir().unwrap();
        let error = check_target(OutputFormat::Aimem, folder.path()).unwrap_err().to_string();
        assert!(error.contains("the aimem output is one file, and this is a folder"), "{error}");
        assert!(check_target(OutputFormat::Aimem, &folder.path().join("new.json")).is_ok());
    }
}
