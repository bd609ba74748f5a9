//! Uploads a finished local output to object storage so that nothing of it is visible until it
//! is published: every file goes up as a multipart upload whose parts are sent now and which
//! is completed only at [`StagedUpload::publish`]. Until then the parts sit in the bucket under
//! the upload's id (S3's own temporary key) where no reader can see them; completing makes
//! each object appear whole, at once. Dropped unpublished, the uploads are aborted. This is
//! the scheme of Hadoop's S3A "magic" committer.
//!
//! Memory is bounded: [`FILES_IN_FLIGHT`] files at a time, one [`PART_BYTES`] part each.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::stream::{self, StreamExt, TryStreamExt};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use object_store::path::Path as KeyPath;
use object_store::{MultipartUpload, ObjectStore, ObjectStoreExt, PutPayload};

use crate::remote::client::{store_for, wait};
use crate::remote::error::RemoteError;
use crate::remote::url::ObjectUrl;

/// One part of a multipart upload (S3 takes 5 MiB to 5 GiB, the last part smaller).
pub const PART_BYTES: usize = 8 << 20;
/// Files uploaded at once.
const FILES_IN_FLIGHT: usize = 8;
/// Uploads completed or aborted at once when publishing.
const COMPLETIONS_IN_FLIGHT: usize = 16;

/// A file uploaded but not yet visible.
struct Pending {
    url: ObjectUrl,
    upload: Box<dyn MultipartUpload>,
    bytes: u64,
}

/// Files uploaded and waiting to be published.
pub struct StagedUpload {
    pending: Vec<Pending>,
}

/// What a published file became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// Where it is.
    pub url: ObjectUrl,
    /// Its size.
    pub bytes: u64,
}

impl StagedUpload {
    /// Uploads each `(local file, object)` pair, none of them visible yet.
    ///
    /// # Errors
    /// [`RemoteError`] when a file cannot be read or a request fails after its retries; what
    /// was uploaded so far is aborted.
    pub fn stage(files: Vec<(PathBuf, ObjectUrl)>, progress: &ProgressBar) -> Result<StagedUpload, RemoteError> {
        let mut staged = StagedUpload { pending: Vec::with_capacity(files.len()) };
        let uploads = wait(async {
            stream::iter(files.into_iter().map(|(local, url)| {
                let progress = progress.clone();
                async move { upload_parts(&local, url, &progress).await }
            }))
            .buffered(FILES_IN_FLIGHT)
            .try_collect::<Vec<_>>()
            .await
        });
        match uploads {
            Ok(pending) => {
                staged.pending = pending;
                Ok(staged)
            }
            // The uploads that had started are dropped unfinished; S3 drops their parts when
            // the bucket's lifecycle rule for incomplete uploads runs (see docs/scale-out.md).
            Err(error) => Err(error),
        }
    }

    /// How many files are waiting.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Makes every file visible, each at once; returns them in the order staged.
    ///
    /// # Errors
    /// [`RemoteError`] when a completion fails after its retries: the ones completed before
    /// stay, the others are aborted.
    pub fn publish(mut self) -> Result<Vec<Published>, RemoteError> {
        let pending = std::mem::take(&mut self.pending);
        wait(async {
            stream::iter(pending.into_iter().map(|mut file| async move {
                file.upload.complete().await.map_err(|error| RemoteError::from_store(&file.url, &error))?;
                Ok::<_, RemoteError>(Published { url: file.url, bytes: file.bytes })
            }))
            .buffered(COMPLETIONS_IN_FLIGHT)
            .try_collect::<Vec<_>>()
            .await
        })
    }
}

impl Drop for StagedUpload {
    fn drop(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            return;
        }
        // Best effort: an abort that fails leaves parts for the lifecycle rule, never an object.
        wait(async {
            stream::iter(pending.into_iter().map(|mut file| async move { file.upload.abort().await }))
                .buffer_unordered(COMPLETIONS_IN_FLIGHT)
                .for_each(|_| async {})
                .await;
        });
    }
}

/// Sends `local`'s bytes as the parts of a multipart upload to `url`, leaving it uncompleted.
async fn upload_parts(local: &Path, url: ObjectUrl, progress: &ProgressBar) -> Result<Pending, RemoteError> {
    let store = store_for(&url)?;
    let key = KeyPath::from(url.key.as_str());
    let read_error = |error: std::io::Error| RemoteError::refused(&url, format!("reading {} to upload it: {error}", local.display()));
    let mut file = File::open(local).map_err(read_error)?;
    let mut upload = store.put_multipart(&key).await.map_err(|error| RemoteError::from_store(&url, &error))?;
    let mut bytes = 0u64;
    let mut first = true;
    loop {
        let mut part = vec![0u8; PART_BYTES];
        let filled = fill(&mut file, &mut part).map_err(read_error)?;
        // An empty file is one empty part: S3 allows the last part any size, and an upload
        // needs one part to complete.
        if filled == 0 && !first {
            break;
        }
        part.truncate(filled);
        bytes += filled as u64;
        if let Err(error) = upload.put_part(PutPayload::from(part)).await {
            let _ = upload.abort().await;
            return Err(RemoteError::from_store(&url, &error));
        }
        progress.inc(filled as u64);
        first = false;
        if filled < PART_BYTES {
            break;
        }
    }
    Ok(Pending { url, upload, bytes })
}

/// A bar of the bytes uploaded, on stderr when it is a terminal and `wanted`; hidden otherwise.
pub fn upload_progress(wanted: bool, files: &[(PathBuf, ObjectUrl)]) -> ProgressBar {
    if !wanted || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return ProgressBar::hidden();
    }
    let total = files.iter().filter_map(|(local, _)| std::fs::metadata(local).ok()).map(|metadata| metadata.len()).sum();
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("uploading {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// Reads into `buffer` until it is full or the file ends.
fn fill(file: &mut File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut total = 0;
    while total < buffer.len() {
        match file.read(&mut buffer[total..])? {
            0 => break,
            count => total += count,
        }
    }
    Ok(total)
}

/// Every file under `root` with the object it goes to under `prefix`, in path order.
///
/// # Errors
/// I/O errors listing `root`.
pub fn tree_files(root: &Path, prefix: &ObjectUrl) -> std::io::Result<Vec<(PathBuf, ObjectUrl)>> {
    let mut found = Vec::new();
    collect(root, root, &mut found)?;
    found.sort();
    Ok(found.into_iter().map(|(relative, path)| (path, prefix.join(&relative))).collect())
}

fn collect(root: &Path, folder: &Path, found: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect(root, &path, found)?;
        } else {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let relative = relative.components().map(|part| part.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
            found.push((relative, path));
        }
    }
    Ok(())
}

/// Puts `bytes` at `url` in one request (small records memport writes itself).
///
/// # Errors
/// [`RemoteError`] when the request fails after its retries.
pub fn put_small(url: &ObjectUrl, bytes: Vec<u8>) -> Result<(), RemoteError> {
    let store: Arc<dyn ObjectStore> = store_for(url)?;
    let key = KeyPath::from(url.key.as_str());
    wait(store.put(&key, PutPayload::from(bytes))).map(|_| ()).map_err(|error| RemoteError::from_store(url, &error))
}
