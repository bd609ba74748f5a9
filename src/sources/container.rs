//! Opens what the user named: a zip archive, an unzipped folder or a single file, lists its
//! entries and opens each entry as a byte stream.
//!
//! Zip entries are inflated on a thread of their own, so decompression overlaps with framing,
//! and streamed in bounded chunks: no entry is read into memory whole, whatever size it
//! declares or inflates to (side files read whole go through [`Entry::read_small`]'s limit). A
//! zip is refused when it lists more than [`MAX_ZIP_ENTRIES`] entries, or two files of one name
//! (the zip reader keeps only the last, so the other would go unread, silently). Inputs that
//! are not regular files or folders, and UTF-16 files, are refused before they are read.
//!
//! An input on object storage (`s3://bucket/key`) is one object (a zip or a file) or a prefix
//! of objects (a folder): a zip's central directory and entries are read by range
//! ([`RangedReader`]), never downloaded whole.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread;

use crate::error::{ConfigError, RunError};
use crate::remote::objects;
use crate::remote::ranged_reader::RangedReader;
use crate::remote::{ObjectUrl, ReadSeek};
use crate::validate::input_file::UTF16_SAMPLE;
use crate::validate::input_file::{check_regular_input, utf16_problem};

/// Bytes handed from the inflating thread to the framer at a time.
const INFLATE_CHUNK: usize = 1 << 20;
/// Chunks in flight between the inflating thread and the framer.
const INFLATE_QUEUE: usize = 8;
/// How deep folders are searched for export files.
const MAX_FOLDER_DEPTH: usize = 10;
/// Most entries read from one zip. A zip's whole listing is held while its input is planned
/// (the zip reader's index and an [`Entry`] per file, a few hundred bytes each), so a zip of
/// millions of tiny entries would take gigabytes before a byte of it is read. The largest
/// exports (ChatGPT's, with every image) hold tens of thousands of files.
pub const MAX_ZIP_ENTRIES: usize = 1_000_000;
/// How a zip starts.
const ZIP_MAGIC: &[u8; 4] = b"PK\x03\x04";
/// How a zip's central directory header starts, and its fixed part's length (APPNOTE 4.3.12).
const CENTRAL_HEADER_MAGIC: &[u8; 4] = b"PK\x01\x02";
const CENTRAL_HEADER_BYTES: usize = 46;

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
    Zip {
        archive: PathBuf,
        name: String,
    },
    /// Bytes a caller hands over through memory, read once.
    Supplied(crate::sources::supplied::SuppliedInput),
}

impl Container {
    /// Works out what `path` is.
    ///
    /// # Errors
    /// [`ConfigError::Input`] when it does not exist, cannot be read, or is neither a regular
    /// file nor a folder (a device, a named pipe); [`ConfigError::NotAnExport`] for a UTF-16
    /// file.
    pub fn open(path: &Path) -> Result<Container, ConfigError> {
        let input_error = |reason: String| ConfigError::Input { path: path.to_owned(), reason };
        let mut head = [0u8; UTF16_SAMPLE];
        let read = if let Some(url) = ObjectUrl::of(path) {
            if remote_is_folder(path, &url)? {
                return Ok(Container::Folder(path.to_owned()));
            }
            RangedReader::open(&url)
                .map_err(|error| error.reason)
                .and_then(|mut reader| read_up_to(&mut reader, &mut head).map_err(|error| error.to_string()))
                .map_err(input_error)?
        } else {
            let metadata = std::fs::metadata(path).map_err(|error| input_error(format!("{error}; check the path")))?;
            if metadata.is_dir() {
                return Ok(Container::Folder(path.to_owned()));
            }
            // Before it is opened: opening a named pipe blocks, and a device is never read to its end.
            check_regular_input(path)?;
            File::open(path).and_then(|mut file| read_up_to(&mut file, &mut head)).map_err(|error| input_error(error.to_string()))?
        };
        let head = &head[..read];
        if head.starts_with(ZIP_MAGIC) {
            return Ok(Container::Zip(path.to_owned()));
        }
        if let Some(problem) = utf16_problem(head) {
            return Err(ConfigError::NotAnExport { path: path.to_owned(), reason: problem.to_owned() });
        }
        Ok(Container::File(path.to_owned()))
    }

    /// The path the user gave.
    pub fn path(&self) -> &Path {
        match self {
            Container::Zip(path) | Container::Folder(path) | Container::File(path) => path,
        }
    }

    /// The files under `folder` (as deep as a folder input is searched), by name and size
    /// only: no local file is opened, and local zips are not listed. What cannot be listed is
    /// left out.
    pub fn files_under(folder: &Path) -> Vec<Entry> {
        if let Some(url) = ObjectUrl::of(folder) {
            return remote_folder_entries(&url).unwrap_or_default();
        }
        let mut found = Vec::new();
        let _ = walk_folder(folder, folder, 0, &mut found);
        found.sort_by(|left, right| left.name.cmp(&right.name));
        found
    }

    /// Every file in the container, sorted by name so runs are deterministic.
    ///
    /// # Errors
    /// I/O or zip errors reading the folder or the archive's directory.
    pub fn entries(&self) -> Result<Vec<Entry>, RunError> {
        let remote = ObjectUrl::of(self.path());
        let mut entries = match (self, remote) {
            (Container::File(path), Some(url)) => {
                let size = objects::size_of(&url)?.unwrap_or(0);
                vec![Entry {
                    display: path.display().to_string().into(),
                    name: url.name().to_owned(),
                    size,
                    location: Location::Disk(path.clone()),
                }]
            }
            (Container::Folder(_), Some(url)) => remote_folder_entries(&url)?,
            (Container::File(path), None) => {
                let size = std::fs::metadata(path).map_err(|error| RunError::read(path.display().to_string(), error))?.len();
                let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
                vec![Entry { display: path.display().to_string().into(), name, size, location: Location::Disk(path.clone()) }]
            }
            (Container::Folder(root), None) => {
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
            (Container::Zip(archive_path), _) => zip_entries(archive_path, None)?,
        };
        entries.sort_by(|left, right| left.name.cmp(&right.name));
        Ok(entries)
    }
}

/// Whether `path` starts with the zip magic.
fn is_zip_file(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path).and_then(|mut file| read_up_to(&mut file, &mut magic)).is_ok_and(|read| read == 4 && &magic == ZIP_MAGIC)
}

/// Lists the files in the zip at `archive_path`; names are prefixed with `prefix/` when the
/// zip sits inside a folder input.
fn zip_entries(archive_path: &Path, prefix: Option<&str>) -> Result<Vec<Entry>, RunError> {
    list_zip(archive_path, prefix, MAX_ZIP_ENTRIES)
}

/// [`zip_entries`] with the entry limit as a parameter.
fn list_zip(archive_path: &Path, prefix: Option<&str>, max_entries: usize) -> Result<Vec<Entry>, RunError> {
    let mut archive = open_archive(archive_path)?;
    let refuse = |reason: String| RunError::from(ConfigError::NotAnExport { path: archive_path.to_owned(), reason });
    if archive.len() > max_entries {
        return Err(refuse(format!(
            "the zip holds {} entries, more than the {max_entries} memport reads from one zip; an export holds far fewer \
             (if this one does, unzip it and give the folder)",
            archive.len()
        )));
    }
    if archive.has_duplicate_names() {
        let repeated = repeated_name(archive_path, archive.central_directory_start(), max_entries)
            .map_err(|error| RunError::read(archive_path.display().to_string(), error))?;
        match repeated {
            Repeated::File(name) => {
                return Err(refuse(format!("the zip holds two entries named {name}; memport cannot tell which is the export")));
            }
            // Folder entries hold nothing to read.
            Repeated::FoldersOnly => {}
            Repeated::NotFound => {
                return Err(refuse("the zip holds two entries of the same name; memport cannot tell which is the export".to_owned()));
            }
        }
    }
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

/// What a zip's central directory lists twice (the zip reader keeps one entry per name and
/// says only that some name came twice).
#[derive(Debug, PartialEq, Eq)]
enum Repeated {
    /// A file name, the first one listed twice.
    File(String),
    /// Only folder names (`name/`), which hold nothing.
    FoldersOnly,
    /// No name read here repeats: the reader compared names after applying a Unicode path
    /// field, which this walk does not read.
    NotFound,
}

/// Walks the central directory of the zip at `path` from `directory_start` (where the zip
/// reader found it) for a name listed twice. Bounded like the listing: at most twice
/// `max_entries` headers, and the names of the files seen so far.
///
/// # Errors
/// I/O errors reading the archive.
fn repeated_name(path: &Path, directory_start: u64, max_entries: usize) -> io::Result<Repeated> {
    let mut reader = BufReader::new(open_seekable(path)?);
    reader.seek(SeekFrom::Start(directory_start))?;
    let mut files = HashSet::new();
    let mut folders = HashSet::new();
    let mut folder_repeated = false;
    let mut header = [0u8; CENTRAL_HEADER_BYTES];
    for _ in 0..max_entries.saturating_mul(2) {
        if read_up_to(&mut reader, &mut header)? < CENTRAL_HEADER_BYTES || !header.starts_with(CENTRAL_HEADER_MAGIC) {
            break;
        }
        let field = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
        let (name_length, extra_length, comment_length) = (field(28), field(30), field(32));
        let mut name = vec![0u8; usize::from(name_length)];
        reader.read_exact(&mut name)?;
        reader.seek_relative(i64::from(extra_length) + i64::from(comment_length))?;
        if matches!(name.last(), Some(b'/' | b'\\')) {
            folder_repeated |= !folders.insert(name);
        } else if files.contains(&name) {
            return Ok(Repeated::File(String::from_utf8_lossy(&name).into_owned()));
        } else {
            files.insert(name);
        }
    }
    Ok(if folder_repeated { Repeated::FoldersOnly } else { Repeated::NotFound })
}

impl Entry {
    /// The input a caller supplies through memory, as an entry of unknown size.
    pub fn supplied(input: &crate::sources::supplied::SuppliedInput) -> Entry {
        Entry { display: input.name.as_str().into(), name: input.name.clone(), size: 0, location: Location::Supplied(input.clone()) }
    }

    /// The entry's file name without folders.
    pub fn base_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }

    /// Opens the entry for reading from its start (a supplied input has no bytes to read: its
    /// records come through [`Entry::supplied_records`]).
    ///
    /// # Errors
    /// I/O or zip errors.
    pub fn open(&self) -> Result<Box<dyn Read + Send>, RunError> {
        match &self.location {
            Location::Disk(path) => {
                let file = open_seekable(path).map_err(|error| RunError::read(self.display.to_string(), error))?;
                Ok(Box::new(file))
            }
            Location::Zip { archive, name } => Ok(Box::new(InflatingReader::spawn(archive.clone(), name.clone(), self.display.clone())?)),
            // Its records come with their keys, not as bytes ([`Entry::supplied_records`]).
            Location::Supplied(_) => Ok(Box::new(std::io::empty())),
        }
    }

    /// The records of an entry a caller supplies through memory ([`Entry::supplied`]); `None`
    /// for any other entry.
    ///
    /// # Errors
    /// When they were taken already.
    pub fn supplied_records(&self) -> Option<Result<crate::sources::supplied::SuppliedRecords, RunError>> {
        match &self.location {
            Location::Supplied(input) => Some(input.take_records().map_err(|error| RunError::read(self.display.to_string(), error))),
            _ => None,
        }
    }

    /// The entry's file opened again, to read records back by offset, when it is a file on
    /// disk (a zip entry is not); `None` otherwise or when it cannot be opened.
    pub fn reopen_on_disk(&self) -> Option<File> {
        match &self.location {
            Location::Disk(path) if ObjectUrl::of(path).is_none() => File::open(path).ok(),
            Location::Disk(_) => None,
            Location::Zip { .. } | Location::Supplied(_) => None,
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

/// The file at `path` buffered, or the object it names read by range.
///
/// # Errors
/// I/O errors opening it (an object-storage error says which URL and what to do).
fn open_seekable(path: &Path) -> io::Result<Box<dyn ReadSeek>> {
    crate::remote::open_seekable_path(path)
}

fn open_archive(path: &Path) -> Result<zip::ZipArchive<Box<dyn ReadSeek>>, RunError> {
    let file = open_seekable(path).map_err(|error| RunError::read(path.display().to_string(), error))?;
    zip::ZipArchive::new(file).map_err(|error| RunError::Zip { path: path.display().to_string(), reason: error.to_string() })
}

/// Whether the input `url` is a prefix of objects (a folder) rather than one object: it is
/// written with a trailing `/`, or no object has its key and objects lie under it.
fn remote_is_folder(path: &Path, url: &ObjectUrl) -> Result<bool, ConfigError> {
    let input_error = |reason: String| ConfigError::Input { path: path.to_owned(), reason };
    // `s3://bucket/folder/` names a prefix outright; otherwise an object is looked for first
    // (a server may fail a HEAD of a key that is also a prefix).
    let named_prefix = url.key.is_empty() || path.to_string_lossy().ends_with('/');
    if !named_prefix && objects::size_of(url).map_err(|error| input_error(error.reason))?.is_some() {
        return Ok(false);
    }
    if objects::list(url).map_err(|error| input_error(error.reason))?.is_empty() {
        return Err(input_error("no object and no objects under this prefix; check the URL".to_owned()));
    }
    Ok(true)
}

/// The objects under the prefix `root`, as a folder's files; zips among them (by name) join
/// with their entries, as zips in a local folder do.
fn remote_folder_entries(root: &ObjectUrl) -> Result<Vec<Entry>, RunError> {
    let mut entries = Vec::new();
    for listed in objects::list(root)? {
        let name = listed.url.key[root.key.len()..].trim_start_matches('/').to_owned();
        if name.split('/').count() > MAX_FOLDER_DEPTH + 1 {
            continue;
        }
        let path = listed.url.to_path();
        if name.to_ascii_lowercase().ends_with(".zip") {
            entries.extend(zip_entries(&path, Some(&name))?);
        } else {
            entries.push(Entry { display: listed.url.to_string().into(), name, size: listed.size, location: Location::Disk(path) });
        }
    }
    Ok(entries)
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

fn inflate_into(mut archive: zip::ZipArchive<Box<dyn ReadSeek>>, name: &str, sender: &SyncSender<InflatedChunk>) {
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

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A stored zip of `folders` and `files` (name, content), with each `(from, to)` of
    /// `renames` then applied to its bytes: the zip writer refuses two entries of one name, so
    /// a repeated name is made by renaming the second of two names of the same length.
    fn zip_with(folder: &Path, folders: &[&str], files: &[(&str, &str)], renames: &[(&str, &str)]) -> PathBuf {
        let mut writer = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        for name in folders {
            writer.add_directory(*name, stored).unwrap();
        }
        for (name, content) in files {
            writer.start_file(*name, stored).unwrap();
            writer.write_all(content.as_bytes()).unwrap();
        }
        let mut bytes = writer.finish().unwrap().into_inner();
        for (from, to) in renames {
            assert_eq!(from.len(), to.len());
            let mut at = 0;
            while let Some(found) = memchr::memmem::find(&bytes[at..], from.as_bytes()) {
                let start = at + found;
                bytes[start..start + from.len()].copy_from_slice(to.as_bytes());
                at = start + from.len();
            }
        }
        let path = folder.join("export.zip");
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn entries_error(path: &Path) -> String {
        Container::open(path).unwrap().entries().err().map(|error| error.to_string()).unwrap_or_default()
    }

    /// Guards repeated names: the zip reader keeps only the last of two entries of one name, so
    /// the first was never read and nothing said so.
    #[test]
    fn two_entries_of_one_name_refuse_the_zip_naming_the_entry() {
        let folder = tempfile::tempdir().unwrap();
        let files = [("conversations.json", "[]"), ("conversationX.json", "[1]")];
        let path = zip_with(folder.path(), &[], &files, &[("conversationX.json", "conversations.json")]);
        let error = entries_error(&path);
        assert!(error.ends_with("the zip holds two entries named conversations.json; memport cannot tell which is the export"), "{error}");
    }

    /// Guards the other side of it: a folder listed twice holds nothing to lose.
    #[test]
    fn a_folder_listed_twice_is_no_problem() {
        let folder = tempfile::tempdir().unwrap();
        let path = zip_with(folder.path(), &["dir_one/", "dir_two/"], &[("conversations.json", "[]")], &[("dir_two/", "dir_one/")]);
        let entries = Container::open(&path).unwrap().entries().unwrap();
        assert_eq!(entries.iter().map(|entry| entry.name.as_str()).collect::<Vec<_>>(), ["conversations.json"]);
    }

    /// Guards the entry limit.
    #[test]
    fn a_zip_of_more_entries_than_the_limit_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let path = zip_with(folder.path(), &[], &[("a.json", "[]"), ("b.json", "[]"), ("c.json", "[]")], &[]);
        let error = list_zip(&path, None, 2).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("the zip holds 3 entries, more than the 2 memport reads from one zip"), "{error}");
        assert_eq!(list_zip(&path, None, 3).map(|entries| entries.len()).ok(), Some(3));
    }

    /// Guards what is refused before it is read: a UTF-16 file (with what to do about it) and
    /// a device, which would be read forever.
    #[test]
    fn utf16_files_and_devices_are_refused_when_opened() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("copilot-activity-history.csv");
        let utf16: Vec<u8> = "\u{feff}Conversation,Time,Author,Message\r\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
        std::fs::write(&path, utf16).unwrap();
        match Container::open(&path) {
            Err(ConfigError::NotAnExport { reason, .. }) => assert_eq!(reason, crate::validate::input_file::UTF16_ADVICE),
            other => panic!("{other:?}"),
        }
        match Container::open(Path::new("/dev/zero")) {
            Err(ConfigError::Input { reason, .. }) => assert!(reason.contains("a character device"), "{reason}"),
            other => panic!("{other:?}"),
        }
        std::fs::write(&path, b"Conversation,Time,Author,Message\r\n").unwrap();
        assert!(matches!(Container::open(&path), Ok(Container::File(_))));
    }
}
