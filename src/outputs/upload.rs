//! A conversion whose outputs, report or rejects file are on object storage: the run writes
//! them, as it always does, into a local temporary folder (in `TMPDIR`), and they are
//! uploaded and published when the run has succeeded.
//!
//! **Nothing overwritten that memport did not write.** Beside each target memport keeps an
//! upload record (`<prefix>/.memport-upload.json` in a folder output, `.<name>.memport-upload.json`
//! beside a one-file output) listing the objects it wrote. A target where an object lies that
//! no record lists is refused before the run reads anything.
//!
//! **What a reader sees.** While the run goes on and while it uploads: the previous output,
//! untouched (the new objects are incomplete multipart uploads, see [`crate::remote::upload`]).
//! Then the record is rewritten to list old and new objects, every upload is completed (each
//! object replaced at once), the old objects the new output no longer has are deleted, and the
//! record is rewritten to list only the new ones, with `complete: true`. A reader that needs a
//! whole output reads the record first and waits for `complete`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::RunError;
use crate::remote::objects;
use crate::remote::upload::{StagedUpload, put_small, tree_files, upload_progress};
use crate::remote::{ObjectUrl, RemoteError};

/// The upload record's name in a folder output; beside a one-file output it follows `.<name>`.
pub const RECORD_NAME: &str = ".memport-upload.json";
/// The largest upload record memport reads back (a PAM folder of a million files lists ~60 MB).
const RECORD_LIMIT: u64 = 256 << 20;

/// What memport wrote at one target.
#[derive(Debug, Serialize, Deserialize, Default, PartialEq, Eq)]
pub struct UploadRecord {
    /// `memport <version>`.
    pub written_by: String,
    /// Whether the output listed is whole; false while it is being published.
    pub complete: bool,
    /// The objects, as keys relative to the target (`""` for a one-file output).
    pub objects: Vec<String>,
}

/// One target on object storage and where the run writes it locally.
struct Mapped {
    url: ObjectUrl,
    local: PathBuf,
    folder: bool,
    previous: Vec<String>,
}

impl Mapped {
    fn record_url(&self) -> ObjectUrl {
        record_url(&self.url, self.folder)
    }
}

/// Where the upload record of the target at `url` is.
pub fn record_url(url: &ObjectUrl, folder: bool) -> ObjectUrl {
    if folder {
        url.join(RECORD_NAME)
    } else {
        let parent = ObjectUrl { bucket: url.bucket.clone(), key: url.key.rsplit_once('/').map_or("", |(parent, _)| parent).to_owned() };
        parent.join(&format!(".{}{RECORD_NAME}", url.name()))
    }
}

/// The targets of a run that are on object storage, each pointed at a local temporary folder.
pub struct RemoteOutputs {
    /// Holds the local copies until they are uploaded; removed when dropped.
    _folder: tempfile::TempDir,
    mapped: Vec<Mapped>,
    /// Whether to show the upload's progress (as the run's).
    progress: bool,
}

/// One path a run writes: an output (a folder or one file), its report or its rejects file.
pub struct Target<'a> {
    /// The path as given; [`RemoteOutputs::prepare`] points it at a local file when it is on
    /// object storage.
    pub path: &'a mut PathBuf,
    /// Whether the output is a folder of objects.
    pub folder: bool,
}

impl RemoteOutputs {
    /// Checks every target on object storage among `targets` and points each at a local
    /// temporary folder, where the run writes it; `None` when no target is on object storage.
    ///
    /// # Errors
    /// [`RunError::ObjectStorage`] when a target holds objects memport did not write, or the
    /// bucket cannot be reached; [`RunError::Temporary`] when the local folder cannot be made.
    pub fn prepare(targets: Vec<Target<'_>>, progress: bool) -> Result<Option<RemoteOutputs>, RunError> {
        if !targets.iter().any(|target| ObjectUrl::of(target.path).is_some()) {
            return Ok(None);
        }
        let folder = tempfile::Builder::new().prefix("memport-upload-").tempdir().map_err(|error| RunError::Temporary {
            purpose: "the outputs to upload".into(),
            folder: std::env::temp_dir().display().to_string(),
            source: error,
        })?;
        let mut mapped = Vec::new();
        let map = |path: &mut PathBuf, folder_output: bool, mapped: &mut Vec<Mapped>| -> Result<(), RunError> {
            let Some(url) = ObjectUrl::of(path) else { return Ok(()) };
            if !folder_output && (url.key.is_empty() || path.to_string_lossy().ends_with('/')) {
                return Err(RemoteError::refused(
                    &url,
                    "is a prefix, and this output is one object: name its key (s3://bucket/prefix/brain.aimem.json); with several formats, -o names their prefix",
                )
                .into());
            }
            let name = if url.name().is_empty() { "output" } else { url.name() };
            let local_path = folder.path().join(mapped.len().to_string()).join(name);
            std::fs::create_dir_all(local_path.parent().unwrap_or(folder.path()))
                .map_err(|error| RunError::write(local_path.display().to_string(), error))?;
            let previous = check_target(&url, folder_output)?;
            *path = local_path.clone();
            mapped.push(Mapped { url, local: local_path, folder: folder_output, previous });
            Ok(())
        };
        for target in targets {
            map(target.path, target.folder, &mut mapped)?;
        }
        Ok(Some(RemoteOutputs { _folder: folder, mapped, progress }))
    }

    /// The object storage URL of the target the run writes at the local path `local`.
    pub fn url_of(&self, local: &Path) -> Option<String> {
        self.mapped.iter().find(|mapped| mapped.local == local).map(|mapped| mapped.url.to_string())
    }

    /// Uploads and publishes what the run wrote.
    ///
    /// # Errors
    /// [`RunError`] when an upload or a record fails; nothing new is visible when the uploads
    /// fail, and when the publication fails part-way the record still lists every object.
    pub fn publish(self) -> Result<(), RunError> {
        let mut files = Vec::new();
        let mut written: Vec<Vec<String>> = Vec::with_capacity(self.mapped.len());
        for mapped in &self.mapped {
            let mut keys = Vec::new();
            if mapped.folder {
                let tree =
                    tree_files(&mapped.local, &mapped.url).map_err(|error| RunError::read(mapped.local.display().to_string(), error))?;
                for (local, url) in tree {
                    keys.push(url.key[mapped.url.key.len()..].trim_start_matches('/').to_owned());
                    files.push((local, url));
                }
            } else if mapped.local.is_file() {
                keys.push(String::new());
                files.push((mapped.local.clone(), mapped.url.clone()));
            }
            written.push(keys);
        }
        let bar = upload_progress(self.progress, &files);
        let staged = StagedUpload::stage(files, &bar)?;
        bar.finish_and_clear();
        for (mapped, keys) in self.mapped.iter().zip(&written) {
            let mut union: Vec<String> = mapped.previous.iter().chain(keys).cloned().collect();
            union.sort();
            union.dedup();
            write_record(&mapped.record_url(), false, union)?;
        }
        staged.publish()?;
        for (mapped, keys) in self.mapped.iter().zip(written) {
            let stale: Vec<ObjectUrl> =
                mapped.previous.iter().filter(|key| !keys.contains(key)).map(|key| object_of(&mapped.url, key)).collect();
            objects::delete(&stale)?;
            write_record(&mapped.record_url(), true, keys)?;
        }
        Ok(())
    }
}

/// The object `key` (relative) of the target at `url`.
fn object_of(url: &ObjectUrl, key: &str) -> ObjectUrl {
    if key.is_empty() { url.clone() } else { url.join(key) }
}

fn write_record(url: &ObjectUrl, complete: bool, objects: Vec<String>) -> Result<(), RemoteError> {
    let record = UploadRecord { written_by: format!("memport {}", env!("CARGO_PKG_VERSION")), complete, objects };
    // Serializing a struct of strings cannot fail.
    let mut bytes = serde_json::to_vec_pretty(&record).unwrap_or_default();
    bytes.push(b'\n');
    put_small(url, bytes)
}

/// Refuses a target holding objects memport did not write; returns the objects it did.
///
/// # Errors
/// [`RemoteError`] naming the first object no record lists, or the failed request.
pub fn check_target(url: &ObjectUrl, folder: bool) -> Result<Vec<String>, RemoteError> {
    let record_url = record_url(url, folder);
    let record: Option<UploadRecord> = match objects::read_small(&record_url, RECORD_LIMIT)? {
        Some(bytes) => Some(serde_json::from_slice(&bytes).map_err(|error| {
            RemoteError::refused(
                &record_url,
                format!("is not a memport upload record ({error}); memport will not replace what it did not write"),
            )
        })?),
        None => None,
    };
    let listed = record.map(|record| record.objects).unwrap_or_default();
    let foreign = |what: &ObjectUrl| {
        RemoteError::refused(
            what,
            "memport did not write this object, and replaces only what it wrote; name an empty prefix with -o, or remove it".to_owned(),
        )
    };
    if folder {
        let found = objects::list(url)?;
        // Asked only of an empty prefix: a server may fail a HEAD of a key that is also a prefix.
        if found.is_empty() && !url.key.is_empty() && objects::size_of(url)?.is_some() {
            return Err(RemoteError::refused(
                url,
                "is an object, and this output is a folder of objects; name a prefix that holds no object of its own",
            ));
        }
        for object in found {
            let relative = object.url.key[url.key.len()..].trim_start_matches('/');
            if object.url != record_url && !listed.iter().any(|key| key == relative) {
                return Err(foreign(&object.url));
            }
        }
    } else if objects::size_of(url)?.is_some() && !listed.iter().any(String::is_empty) {
        return Err(foreign(url));
    }
    Ok(listed)
}
