//! Opens what the user named: a zip archive, an unzipped folder or a single file, lists its
//! entries and opens each entry as a byte stream.
//!
//! Zip entries are inflated on a thread of their own, so decompression overlaps with framing.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread;

use crate::error::{ConfigError, RunError};

/// Bytes handed from the inflating thread to the framer at a time.
const INFLATE_CHUNK: usize = 1 << 20;
/// Chunks in flight between the inflating thread and the framer.
const INFLATE_QUEUE: usize = 8;
/// How deep folders are searched for export files.
const MAX_FOLDER_DEPTH: usize = 10;

/// What an input path is.
#[derive(Debug, Clone)]
pub enum Container {
    /// A zip archive (detected by its `PK` magic, whatever its name).
    Zip(PathBuf),
    /// An unzipped export folder.
    Folder(PathBuf),
    /// One file.
    File(PathBuf),
}

/// One file inside a container.
#[derive(Debug, Clone)]
pub struct Entry {
    /// How reports and rejects name it: the path, or `archive.zip!inner/path`.
    pub display: Arc<str>,
    /// Path inside the container (`/`-separated), or the file name for a single file.
    pub name: String,
    /// Uncompressed size in bytes.
    pub size: u64,
    location: Location,
}

#[derive(Debug, Clone)]
enum Location {
    Disk(PathBuf),
    Zip { archive: PathBuf, name: String },
}

impl Container {
    /// Works out what `path` is.
    ///
    /// # Errors
    /// [`ConfigError::Input`] when it does not exist or cannot be read.
    pub fn open(path: &Path) -> Result<Container, ConfigError> {
        let metadata = std::fs::metadata(path)
            .map_err(|error| ConfigError::Input { path: path.to_owned(), reason: format!("{error}; check the path") })?;
        if metadata.is_dir() {
            return Ok(Container::Folder(path.to_owned()));
        }
        let mut magic = [0u8; 4];
        let read = File::open(path)
            .and_then(|mut file| read_up_to(&mut file, &mut magic))
            .map_err(|error| ConfigError::Input { path: path.to_owned(), reason: error.to_string() })?;
        if read == 4 && &magic == b"PK\x03\x04" { Ok(Container::Zip(path.to_owned())) } else { Ok(Container::File(path.to_owned())) }
    }

    /// The path the user gave.
    pub fn path(&self) -> &Path {
        match self {
            Container::Zip(path) | Container::Folder(path) | Container::File(path) => path,
        }
    }

    /// Every file in the container, sorted by name so runs are deterministic.
    ///
    /// # Errors
    /// I/O or zip errors reading the folder or the archive's directory.
    pub fn entries(&self) -> Result<Vec<Entry>, RunError> {
        let mut entries = match self {
            Container::File(path) => {
                let size = std::fs::metadata(path).map_err(|error| RunError::read(path.display().to_string(), error))?.len();
                let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
                vec![Entry { display: path.display().to_string().into(), name, size, location: Location::Disk(path.clone()) }]
            }
            Container::Folder(root) => {
                let mut found = Vec::new();
                walk_folder(root, root, 0, &mut found)?;
                // Exports delivered as several zips (Claude's 2026 manifest, a multi-part
                // Takeout) are read from a folder holding them: their entries join the folder's.
                let mut expanded = Vec::with_capacity(found.len());
                for entry in found {
                    match &entry.location {
                        Location::Disk(path) if is_zip_file(path) => {
                            expanded.extend(zip_entries(path, Some(&entry.name))?);
                        }
                        _ => expanded.push(entry),
                    }
                }
                expanded
            }
            Container::Zip(archive_path) => zip_entries(archive_path, None)?,
        };
        entries.sort_by(|left, right| left.name.cmp(&right.name));
        Ok(entries)
    }
}

/// Whether `path` starts with the zip magic.
fn is_zip_file(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path).and_then(|mut file| read_up_to(&mut file, &mut magic)).is_ok_and(|read| read == 4 && &magic == b"PK\x03\x04")
}

/// Lists the files in the zip at `archive_path`; names are prefixed with `prefix/` when the
/// zip sits inside a folder input.
fn zip_entries(archive_path: &Path, prefix: Option<&str>) -> Result<Vec<Entry>, RunError> {
    let mut archive = open_archive(archive_path)?;
    let mut found = Vec::with_capacity(archive.len());
    for index in 0..archive.len() {
        let file = archive
            .by_index_raw(index)
            .map_err(|error| RunError::Zip { path: archive_path.display().to_string(), reason: error.to_string() })?;
        if file.is_dir() {
            continue;
        }
        let name = file
            .name()
            .map_err(|error| RunError::Zip { path: archive_path.display().to_string(), reason: error.to_string() })?
            .into_owned();
        found.push(Entry {
            display: format!("{}!{}", archive_path.display(), name).into(),
            name: prefix.map_or_else(|| name.clone(), |prefix| format!("{prefix}/{name}")),
            size: file.size(),
            location: Location::Zip { archive: archive_path.to_owned(), name },
        });
    }
    Ok(found)
}

impl Entry {
    /// The entry's file name without folders.
    pub fn base_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }

    /// Opens the entry for reading from its start.
    ///
    /// # Errors
    /// I/O or zip errors.
    pub fn open(&self) -> Result<Box<dyn Read + Send>, RunError> {
        match &self.location {
            Location::Disk(path) => {
                let file = File::open(path).map_err(|error| RunError::read(self.display.to_string(), error))?;
                Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
            }
            Location::Zip { archive, name } => Ok(Box::new(InflatingReader::spawn(archive.clone(), name.clone(), self.display.clone())?)),
        }
    }

    /// The entry's file opened again, to read records back by offset, when it is a file on
    /// disk (a zip entry is not); `None` otherwise or when it cannot be opened.
    pub fn reopen_on_disk(&self) -> Option<File> {
        match &self.location {
            Location::Disk(path) => File::open(path).ok(),
            Location::Zip { .. } => None,
        }
    }

    /// Reads the whole entry; only for small side files (manifests, name maps).
    ///
    /// # Errors
    /// I/O or zip errors, or an entry over `limit` bytes.
    pub fn read_small(&self, limit: u64) -> Result<Vec<u8>, RunError> {
        if self.size > limit {
            return Err(RunError::read(
                self.display.to_string(),
                io::Error::other(format!("side file is {} bytes, over the {limit}-byte limit", self.size)),
            ));
        }
        let mut bytes = Vec::with_capacity(self.size as usize);
        self.open()?.take(limit + 1).read_to_end(&mut bytes).map_err(|error| RunError::read(self.display.to_string(), error))?;
        Ok(bytes)
    }
}

fn read_up_to(reader: &mut impl Read, buffer: &mut [u8]) -> io::Result<usize> {
    let mut total = 0;
    while total < buffer.len() {
        match reader.read(&mut buffer[total..])? {
            0 => break,
            count => total += count,
        }
    }
    Ok(total)
}

fn open_archive(path: &Path) -> Result<zip::ZipArchive<BufReader<File>>, RunError> {
    let file = File::open(path).map_err(|error| RunError::read(path.display().to_string(), error))?;
    zip::ZipArchive::new(BufReader::new(file))
        .map_err(|error| RunError::Zip { path: path.display().to_string(), reason: error.to_string() })
}

fn walk_folder(root: &Path, folder: &Path, depth: usize, found: &mut Vec<Entry>) -> Result<(), RunError> {
    if depth > MAX_FOLDER_DEPTH {
        return Ok(());
    }
    let listing = std::fs::read_dir(folder).map_err(|error| RunError::read(folder.display().to_string(), error))?;
    for item in listing {
        let item = item.map_err(|error| RunError::read(folder.display().to_string(), error))?;
        let path = item.path();
        let file_type = item.file_type().map_err(|error| RunError::read(path.display().to_string(), error))?;
        if file_type.is_dir() {
            walk_folder(root, &path, depth + 1, found)?;
        } else if file_type.is_file() {
            let size = item.metadata().map(|metadata| metadata.len()).unwrap_or(0);
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let name = relative.components().map(|part| part.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
            found.push(Entry { display: path.display().to_string().into(), name, size, location: Location::Disk(path) });
        }
    }
    Ok(())
}

/// What the inflating thread sends: bytes, then `None` once the entry ended cleanly.
type InflatedChunk = io::Result<Option<Vec<u8>>>;

/// Reads a zip entry that another thread inflates, so decompression and framing overlap.
struct InflatingReader {
    chunks: Receiver<InflatedChunk>,
    finished: bool,
    current: Vec<u8>,
    position: usize,
}

impl InflatingReader {
    fn spawn(archive_path: PathBuf, name: String, display: Arc<str>) -> Result<InflatingReader, RunError> {
        // Open once here so a bad archive fails before the thread starts.
        let mut archive = open_archive(&archive_path)?;
        archive.by_name(&name).map_err(|error| RunError::Zip { path: display.to_string(), reason: error.to_string() })?;
        let (sender, receiver) = sync_channel(INFLATE_QUEUE);
        thread::Builder::new()
            .name("memport-inflate".into())
            .spawn(move || inflate_into(archive, &name, &sender))
            .map_err(|error| RunError::Internal(format!("cannot start the zip thread: {error}")))?;
        Ok(InflatingReader { chunks: receiver, finished: false, current: Vec::new(), position: 0 })
    }
}

fn inflate_into(mut archive: zip::ZipArchive<BufReader<File>>, name: &str, sender: &SyncSender<InflatedChunk>) {
    let mut entry = match archive.by_name(name) {
        Ok(entry) => entry,
        Err(error) => {
            let _ = sender.send(Err(io::Error::other(error.to_string())));
            return;
        }
    };
    loop {
        let mut chunk = vec![0u8; INFLATE_CHUNK];
        match read_up_to(&mut entry, &mut chunk) {
            Ok(0) => {
                // Reading to the end checked the CRC; tell the reader the entry is complete.
                let _ = sender.send(Ok(None));
                return;
            }
            Ok(count) => {
                chunk.truncate(count);
                // The reader hung up (run stopped early): nothing left to do.
                if sender.send(Ok(Some(chunk))).is_err() {
                    return;
                }
            }
            Err(error) => {
                let _ = sender.send(Err(error));
                return;
            }
        }
    }
}

impl Read for InflatingReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        while self.position >= self.current.len() {
            if self.finished {
                return Ok(0);
            }
            match self.chunks.recv() {
                Ok(Ok(Some(chunk))) => {
                    self.current = chunk;
                    self.position = 0;
                }
                Ok(Ok(None)) => self.finished = true,
                Ok(Err(error)) => return Err(error),
                Err(_) => return Err(io::Error::other("the zip inflating thread stopped before the end of the entry")),
            }
        }
        let count = buffer.len().min(self.current.len() - self.position);
        buffer[..count].copy_from_slice(&self.current[self.position..self.position + count]);
        self.position += count;
        Ok(count)
    }
}
