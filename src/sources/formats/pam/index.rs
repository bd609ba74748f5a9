//! Walks a PAM store's `conversations_index` in order and reads each conversation file it
//! names (inside the store folder only) as one record for the decoder.

use std::path::{Component, Path};
use std::sync::Arc;

use serde_json::Value;

use crate::error::RunError;
use crate::sources::formats::grouped::{RecordSource, SourceProblem};
use crate::sources::json_array::ArrayFramer;

/// What an index entry says about where its conversation is.
pub(super) enum IndexEntry {
    /// In a file of the store.
    File { id: String, reference: String },
    /// In a database or behind a URI.
    Elsewhere,
    /// Not an index entry memport can read.
    Unreadable,
}

pub(super) fn index_entry(bytes: &[u8]) -> IndexEntry {
    let Ok(entry) = serde_json::from_slice::<Value>(bytes) else { return IndexEntry::Unreadable };
    let storage = &entry["storage"];
    match (entry["id"].as_str(), storage["type"].as_str(), storage["ref"].as_str()) {
        (Some(id), Some("file"), Some(reference)) => IndexEntry::File { id: id.to_owned(), reference: reference.to_owned() },
        (Some(_), _, _) => IndexEntry::Elsewhere,
        _ => IndexEntry::Unreadable,
    }
}

/// The file a storage reference names inside the store folder, or `None` when it leads out.
pub(super) fn resolve(folder: &Path, reference: &str) -> Option<std::path::PathBuf> {
    let inside = Path::new(reference).components().all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
    inside.then(|| folder.join(reference))
}

/// The conversation files of a store, read by walking its `conversations_index` in order. Each
/// becomes one record: `{"index_id": …, "file": …, "derived_memories": […], "conversation": {…}}`,
/// or with `"_file_error"` instead of `"conversation"` when the file is missing, unreadable or
/// not JSON (the decoder rejects it and keeps the memories that travel with it).
pub struct IndexedConversations {
    index: ArrayFramer<std::io::BufReader<std::fs::File>>,
    folder: Arc<Path>,
    display: String,
}

impl IndexedConversations {
    /// Walks the index of the store file `entry` in `folder`.
    ///
    /// # Errors
    /// I/O errors opening the store file.
    pub fn open(entry: &crate::sources::container::Entry, folder: Arc<Path>) -> Result<IndexedConversations, RunError> {
        let file = std::fs::File::open(folder.join(&entry.name)).map_err(|error| RunError::read(entry.display.to_string(), error))?;
        let index = ArrayFramer::member_array(std::io::BufReader::with_capacity(1 << 16, file), "conversations_index");
        Ok(IndexedConversations { index, folder, display: entry.display.to_string() })
    }
}

impl RecordSource for IndexedConversations {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        loop {
            let element = match self.index.next_element() {
                Ok(Some(element)) => element,
                Ok(None) => return Ok(None),
                Err(error) => return Err(SourceProblem { offset: error.offset(), message: format!("{}: {error}", self.display) }),
            };
            let (id, reference) = match index_entry(&element.bytes) {
                IndexEntry::File { id, reference } => (id, reference),
                // Counted when the store was planned.
                IndexEntry::Elsewhere => continue,
                IndexEntry::Unreadable => {
                    let reason = format!(
                        "{}: byte {}: an index entry without an id, or not JSON: its conversation is not read",
                        self.display, element.offset
                    );
                    crate::sources::formats::grouped::record_error(out, &reason);
                    return Ok(Some(element.offset));
                }
            };
            let entry: Value = serde_json::from_slice(&element.bytes).unwrap_or_default();
            let derived = entry["derived_memories"].as_array().into_iter().flatten().filter_map(Value::as_str);
            out.extend_from_slice(b"{\"index_id\":");
            crate::jcs::write_string(out, &id);
            out.extend_from_slice(b",\"derived_memories\":");
            crate::jcs::write_string_array(out, derived);
            let file = resolve(&self.folder, &reference);
            out.extend_from_slice(b",\"file\":");
            crate::jcs::write_string(out, &file.as_ref().map_or_else(|| reference.clone(), |file| file.display().to_string()));
            match file.map(|file| read_conversation_file(&file)) {
                Some(Ok(bytes)) => {
                    out.extend_from_slice(b",\"conversation\":");
                    out.extend_from_slice(&bytes);
                }
                Some(Err(reason)) => {
                    out.extend_from_slice(b",\"_file_error\":");
                    crate::jcs::write_string(out, &reason);
                }
                None => {
                    out.extend_from_slice(b",\"_file_error\":");
                    crate::jcs::write_string(out, &format!("the index puts conversation {id} at `{reference}`, outside the store folder"));
                }
            }
            out.push(b'}');
            return Ok(Some(element.offset));
        }
    }
}

/// A conversation file's bytes when they are one JSON value, else why not.
fn read_conversation_file(path: &Path) -> Result<Vec<u8>, String> {
    let too_large = |size: u64| size > crate::sources::json_array::MAX_ELEMENT_BYTES as u64;
    match std::fs::metadata(path) {
        Err(error) => return Err(format!("{}: {error}", path.display())),
        Ok(metadata) if too_large(metadata.len()) => return Err(format!("{}: larger than one conversation may be", path.display())),
        Ok(_) => {}
    }
    let bytes = std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").map(<[u8]>::to_vec).unwrap_or(bytes);
    serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).map_err(|error| format!("{}: not JSON: {error}", path.display()))?;
    Ok(bytes.trim_ascii().to_vec())
}
