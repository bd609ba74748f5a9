//! Reads an object by ranges, as a `Read + Seek` file: a zip's central directory is read from
//! the object's end without fetching the rest, and an entry or a whole file is streamed in
//! ranges that grow while reading stays sequential, with the next range already on its way.
//!
//! Memory is bounded by two ranges (the one being read and the one fetched ahead), at most
//! [`MAX_RANGE`] each, whatever the object's size.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path as KeyPath;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::remote::client::{spawn, store_for, wait};
use crate::remote::error::RemoteError;
use crate::remote::url::ObjectUrl;

/// The first range fetched after a seek: enough for a zip's end records and most central
/// directories, without paying for a large range when only a few bytes are wanted.
const FIRST_RANGE: u64 = 256 << 10;
/// The largest range: sequential reads double their range up to this.
const MAX_RANGE: u64 = 8 << 20;

/// A range being fetched ahead.
struct Ahead {
    start: u64,
    task: tokio::task::JoinHandle<Result<Bytes, RemoteError>>,
}

/// An object read as a file.
pub struct RangedReader {
    store: Arc<dyn ObjectStore>,
    url: ObjectUrl,
    key: KeyPath,
    size: u64,
    position: u64,
    /// The range held, starting at `held_start`.
    held: Bytes,
    held_start: u64,
    /// The size of the next range fetched while reading stays sequential.
    next_range: u64,
    ahead: Option<Ahead>,
    /// Bytes received so far (ranges read ahead and not used included).
    fetched: u64,
}

impl RangedReader {
    /// Opens the object at `url`, learning its size.
    ///
    /// # Errors
    /// [`RemoteError`] when it does not exist or cannot be reached.
    pub fn open(url: &ObjectUrl) -> Result<RangedReader, RemoteError> {
        let store = store_for(url)?;
        let key = KeyPath::from(url.key.as_str());
        let meta = wait(store.head(&key)).map_err(|error| RemoteError::from_store(url, &error))?;
        Ok(RangedReader::with_size(store, url.clone(), meta.size))
    }

    /// A reader of an object whose size a listing already gave.
    pub fn with_size(store: Arc<dyn ObjectStore>, url: ObjectUrl, size: u64) -> RangedReader {
        let key = KeyPath::from(url.key.as_str());
        RangedReader {
            store,
            url,
            key,
            size,
            position: 0,
            held: Bytes::new(),
            held_start: 0,
            next_range: FIRST_RANGE,
            ahead: None,
            fetched: 0,
        }
    }

    /// The object's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes received from the store so far.
    pub fn fetched(&self) -> u64 {
        self.fetched
    }

    fn fetch(&self, start: u64, length: u64) -> tokio::task::JoinHandle<Result<Bytes, RemoteError>> {
        let (store, key, url) = (Arc::clone(&self.store), self.key.clone(), self.url.clone());
        let end = (start + length).min(self.size);
        spawn(async move { store.get_range(&key, start..end).await.map_err(|error| RemoteError::from_store(&url, &error)) })
    }

    /// Makes the held range cover `position` (which is before the object's end).
    fn load(&mut self) -> io::Result<()> {
        let held_end = self.held_start + self.held.len() as u64;
        let sequential = !self.held.is_empty() && self.position == held_end;
        let task = match self.ahead.take() {
            Some(ahead) if ahead.start == self.position => ahead.task,
            other => {
                if let Some(stale) = other {
                    stale.task.abort();
                }
                if !sequential {
                    self.next_range = FIRST_RANGE;
                }
                self.fetch(self.position, self.next_range)
            }
        };
        let bytes = wait(task).map_err(|error| io::Error::other(format!("{}: the range request stopped: {error}", self.url)))??;
        if bytes.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{}: the object ended early (was it replaced mid-read?)", self.url),
            ));
        }
        self.fetched += bytes.len() as u64;
        self.held_start = self.position;
        self.held = bytes;
        self.next_range = (self.next_range * 2).min(MAX_RANGE);
        let next_start = self.held_start + self.held.len() as u64;
        if next_start < self.size {
            self.ahead = Some(Ahead { start: next_start, task: self.fetch(next_start, self.next_range) });
        }
        Ok(())
    }
}

impl Read for RangedReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if buffer.is_empty() || self.position >= self.size {
            return Ok(0);
        }
        let held_end = self.held_start + self.held.len() as u64;
        if self.position < self.held_start || self.position >= held_end {
            self.load()?;
        }
        // Both are within the held range, which is at most MAX_RANGE long.
        let offset = (self.position - self.held_start) as usize;
        let count = buffer.len().min(self.held.len() - offset);
        buffer[..count].copy_from_slice(&self.held[offset..offset + count]);
        self.position += count as u64;
        Ok(count)
    }
}

impl Seek for RangedReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(offset) => Some(offset),
            SeekFrom::End(delta) => self.size.checked_add_signed(delta),
            SeekFrom::Current(delta) => self.position.checked_add_signed(delta),
        };
        let target = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the object"))?;
        self.position = target;
        Ok(target)
    }
}

impl Drop for RangedReader {
    fn drop(&mut self) {
        if let Some(ahead) = self.ahead.take() {
            ahead.task.abort();
        }
    }
}
