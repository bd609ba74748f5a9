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
    /// Retracted by a sync (tagged `retracted`): a delta's entry has no file; a store `memport
    /// merge` made keeps the file, which is not read (its conversation was deleted).
    Retracted,
    /// Messages a sync withdrew (tagged `messages-withdrawn`): its file names them, and holds no
    /// conversation to read.
    Withdrawn { reference: String },
    /// Not an index entry memport can read.
    Unreadable,
}

pub(super) fn index_entry(bytes: &[u8]) -> IndexEntry {
    let Ok(entry) = serde_json::from_slice::<Value>(bytes) else { return IndexEntry::Unreadable };
    let storage = &entry["storage"];
    let tagged = |name: &str| entry["tags"].as_array().is_some_and(|tags| tags.iter().any(|tag| tag.as_str() == Some(name)));
    match (entry["id"].as_str(), storage["type"].as_str(), storage["ref"].as_str()) {
        (Some(_), _, _) if tagged("retracted") => IndexEntry::Retracted,
        (Some(_), Some("file"), Some(reference)) if tagged(crate::spec::pam::WITHDRAWN_TAG) => {
            IndexEntry::Withdrawn { reference: reference.to_owned() }
        }
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
                IndexEntry::Elsewhere | IndexEntry::Retracted | IndexEntry::Withdrawn { .. } => continue,
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

/// A conversation file's bytes when they are one JSON value, else why not, in words that say
/// what happened to the file (cut short, UTF-16, empty) rather than only where a parser stopped.
pub(super) fn read_conversation_file(path: &Path) -> Result<Vec<u8>, String> {
    let too_large = |size: u64| size > crate::sources::json_array::MAX_ELEMENT_BYTES as u64;
    match std::fs::metadata(path) {
        Err(error) => return Err(format!("{}: {error}", path.display())),
        // A named pipe would block the run and a device never end: neither is opened.
        Ok(metadata) if !metadata.is_file() => {
            let kind = crate::validate::input_file::special_file_kind(path).unwrap_or("a folder");
            return Err(format!("{}: is {kind}, not a regular file; it was not opened", path.display()));
        }
        Ok(metadata) if too_large(metadata.len()) => return Err(format!("{}: larger than one conversation may be", path.display())),
        Ok(_) => {}
    }
    let bytes = std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))?;
    if let Some(advice) = crate::validate::input_file::utf16_problem(&bytes) {
        return Err(format!("{}: {advice}", path.display()));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").map(<[u8]>::to_vec).unwrap_or(bytes);
    if bytes.trim_ascii().is_empty() {
        return Err(format!("{}: the file is empty", path.display()));
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(&bytes)
        .map_err(|error| format!("{}: {}", path.display(), json_problem(&error, &bytes)))?;
    Ok(bytes.trim_ascii().to_vec())
}

/// What a JSON parser's error says about a file: one that ends inside its JSON, or whose error
/// is at its very last byte (a number cut short reads as an invalid number), was cut short.
fn json_problem(error: &serde_json::Error, bytes: &[u8]) -> String {
    let text = bytes.trim_ascii_end();
    let lines = text.iter().filter(|&&byte| byte == b'\n').count() + 1;
    let last_line = text.len() - text.iter().rposition(|&byte| byte == b'\n').map_or(0, |newline| newline + 1);
    let at_the_end = error.line() == lines && error.column() >= last_line;
    if error.is_eof() || at_the_end {
        format!("the file ends inside its JSON (line {}, column {}): it looks truncated", error.line(), error.column())
    } else {
        format!("not JSON: {error}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards the reasons a store's conversation file is rejected with: a cut file, a UTF-16
    /// file and an empty one were all "not JSON" with a parser position, which says nothing
    /// of what happened to them; a named pipe would block the run.
    #[test]
    fn a_conversation_file_cut_short_utf16_or_empty_is_named_for_what_it_is() {
        let folder = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let path = folder.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let whole = br#"{"schema":"portable-ai-memory-conversation","messages":[{"id":"m1"}]}"#;
        assert_eq!(read_conversation_file(&write("whole.json", whole)).unwrap(), whole);
        let cut = read_conversation_file(&write("cut.json", &whole[..40])).unwrap_err();
        assert!(cut.contains("cut.json: the file ends inside its JSON (line 1, column ") && cut.ends_with("it looks truncated"), "{cut}");
        let utf16: Vec<u8> = "\u{feff}{\"messages\":[]}".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let utf16 = read_conversation_file(&write("utf16.json", &utf16)).unwrap_err();
        assert!(utf16.contains("utf16.json: this file is UTF-16"), "{utf16}");
        let empty = read_conversation_file(&write("empty.json", b" \n")).unwrap_err();
        assert!(empty.ends_with("empty.json: the file is empty"), "{empty}");
        let garbage = read_conversation_file(&write("garbage.json", b"{\"a\" 1}")).unwrap_err();
        assert!(garbage.contains("garbage.json: not JSON: expected `:`"), "{garbage}");
        let pipe = folder.path().join("pipe.json");
        if std::process::Command::new("mkfifo").arg(&pipe).status().is_ok_and(|status| status.success()) {
            let refused = read_conversation_file(&pipe).unwrap_err();
            assert!(refused.ends_with("pipe.json: is a named pipe (FIFO), not a regular file; it was not opened"), "{refused}");
        }
    }
}
