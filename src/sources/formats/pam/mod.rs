//! PAM v1.0 stores as input (a store folder, or its `memory-store.json` beside `conversations/`).
//!
//! The conversation files are read in the order of `conversations_index`, each as one element;
//! the memories are read when the input is planned (a store's memories are few next to its
//! messages) so that each memory with a `conversation_ref` travels with its conversation, which
//! keeps `conversation_ref` ⇄ `derived_memories` on the way out. Memories without one follow
//! the conversations. What memport wrote into `raw_metadata` (provider fields, reasoning
//! blocks, unknown content, status, flags) is read back, so a store memport wrote converts to
//! the same records again. Platforms memport has no source for keep their name
//! ([`Provider::named`]); memory types memport has no kind for keep their type as a
//! `pam-type:<type>` label, which a PAM output writes again, and their tags as labels. A memory
//! with `access.exportable: false` is counted and not written; one with `status: retracted` is
//! counted and written again marked so. The index entries tagged `retracted` (a sync's delta,
//! or a store `memport merge` made, whose file is kept but not read) go to every output as
//! retractions.

//!
//! The parts: this module plans a store (or a lone conversation file); [`index`] walks
//! `conversations_index` and reads each conversation file; [`embeddings`] indexes
//! `embeddings.json`; [`decode`] turns conversation files and memories into canonical records.

mod decode;
mod embeddings;
mod index;

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::error::RunError;
use crate::model::{Provider, Warnings};
use crate::sources::container::Container;
use crate::sources::contract::{Decoder, Framing, InputPlan, Stream};
use crate::sources::formats::grouped::string_at;
use crate::sources::formats::{RecordLayout, retractions};
use crate::sources::json_array::ArrayFramer;
use crate::spec::detect::file_head;
use crate::validate::input_file::{EMPTY_FILE_CODE, unreadable_text};
use decode::{PamDecoder, Place};
use embeddings::EmbeddingIndex;
pub use index::IndexedConversations;
use index::{IndexEntry, index_entry, read_conversation_file, resolve};

/// Whether the file at `path` starts like a PAM memory store (not a conversation file).
fn is_store_file(path: &Path) -> bool {
    crate::spec::pam::looks_like_store(&file_head(path))
}

/// Plans a PAM store folder (or its `memory-store.json`), or `None` when `path` is not one.
///
/// # Errors
/// I/O errors reading the store file.
pub fn plan_store(path: &Path) -> Result<Option<InputPlan>, RunError> {
    let store_path = if path.is_dir() { path.join(crate::spec::pam::STORE_FILE) } else { path.to_owned() };
    let is_named_store = store_path.file_name().is_some_and(|name| name == crate::spec::pam::STORE_FILE);
    if !is_named_store || !store_path.is_file() {
        return Ok(None);
    }
    // An empty or UTF-16 store file names no format, and the input was refused as one "with no
    // records memport can read", which says nothing of why.
    let display = store_path.display().to_string();
    match unreadable_text(&store_path).map_err(|error| RunError::read(&display, error))? {
        Some((EMPTY_FILE_CODE, _)) => {
            let reason = "is empty: a PAM store keeps its memories and its conversation index here, so nothing in it can be read";
            return Err(crate::sources::formats::refuse(&store_path, reason.to_owned()));
        }
        Some((_, advice)) => return Err(crate::sources::formats::refuse(&store_path, advice.to_owned())),
        None => {}
    }
    if !crate::spec::pam::looks_like_pam(&file_head(&store_path)) {
        return Ok(None);
    }
    plan_store_file(&store_path)
}

/// Plans a PAM memory-store file under any name: its memories, and the conversation files its
/// index points to in the folder beside it. `None` when it is a PAM file but not a store (a
/// lone conversation or embeddings file).
///
/// Nothing per conversation is kept: the conversation files are read by walking the index as
/// the run goes ([`IndexedConversations`]). What is kept are the memories that travel with a
/// conversation (raw JSON, keyed by its id), so memory grows with the number of such memories
/// only.
///
/// # Errors
/// I/O errors reading the store file.
pub fn plan_store_file(store_path: &Path) -> Result<Option<InputPlan>, RunError> {
    if !is_store_file(store_path) {
        return plan_conversation_file(store_path);
    }
    let folder = store_path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let path = if store_path.file_name().is_some_and(|name| name == crate::spec::pam::STORE_FILE) { folder } else { store_path };
    let display = store_path.display().to_string();
    let open = || crate::remote::open_path(store_path).map(std::io::BufReader::new).map_err(|error| RunError::read(&display, error));
    let frame_error = |error: crate::sources::json_array::FrameError| RunError::read(&display, std::io::Error::other(error.to_string()));
    let mut warnings = Warnings::default();
    let mut notes = Vec::new();

    // The conversations memories name, then those of them whose file is in the store: a memory
    // travels with its conversation only when that conversation is read.
    let mut named = HashSet::new();
    let mut framer = ArrayFramer::member_array(open()?, "memories");
    while let Some(element) = framer.next_element().map_err(frame_error)? {
        if let Some(conversation) = string_at(&element.bytes, &["provenance", "conversation_ref"]) {
            named.insert(conversation);
        }
    }
    // The first index entry of each such conversation whose file is in the store owns its
    // memories: an id listed twice does not carry them twice.
    let mut travelling: FxHashMap<String, u64> = FxHashMap::default();
    let mut conversations = 0u64;
    let mut elsewhere = 0u64;
    let mut retracted = Vec::new();
    let mut retractions_unreadable = 0u64;
    // PAM names no retracting run: the delta's own export id stands for it (`unknown` for a
    // store written without one, by a plain conversion).
    let export_id = {
        let mut framer = ArrayFramer::member_value(open()?, "export_id");
        let id = framer.next_element().ok().flatten().and_then(|element| serde_json::from_slice::<String>(&element.bytes).ok());
        id.filter(|id| !id.is_empty()).unwrap_or_else(|| "unknown".to_owned())
    };
    let mut framer = ArrayFramer::member_array(open()?, "conversations_index");
    while let Some(element) = framer.next_element().map_err(frame_error)? {
        match index_entry(&element.bytes) {
            IndexEntry::File { id, reference } => {
                conversations += 1;
                if named.contains(&id) && !travelling.contains_key(&id) && resolve(folder, &reference).is_some_and(|file| file.is_file()) {
                    travelling.insert(id, element.offset);
                }
            }
            IndexEntry::Elsewhere => elsewhere += 1,
            IndexEntry::Retracted => {
                let entry = serde_json::from_slice(&element.bytes).unwrap_or_default();
                match retractions::from_pam_index_entry(&entry, &export_id) {
                    Some(retraction) => retracted.push(retraction),
                    None => retractions_unreadable += 1,
                }
            }
            IndexEntry::Withdrawn { reference } => {
                // Read as a conversation file is: no special file opened, no file past the size.
                let file = resolve(folder, &reference).and_then(|file| read_conversation_file(&file).ok());
                match file
                    .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
                    .and_then(|file| retractions::from_pam_withdrawal_file(&file))
                {
                    Some(withdrawal) => retracted.push(withdrawal),
                    None => retractions_unreadable += 1,
                }
            }
            // Rejected, with its place, when the index is walked.
            IndexEntry::Unreadable => {}
        }
    }
    if elsewhere > 0 {
        // Stored in a database or behind a URI: nothing here to read.
        for _ in 0..elsewhere {
            warnings.add("pam_conversation_not_in_a_file");
        }
        notes.push(format!("{display}: {elsewhere} conversations are not stored in files of the store, so they are not read"));
    }

    // The travelling memories wait in a temporary file, each conversation keeping where its
    // own are: memory grows by a few bytes per memory, not by its text.
    let spool_error = |error: std::io::Error| RunError::temporary("the store's memories", error);
    let mut spool = std::io::BufWriter::new(tempfile::tempfile().map_err(spool_error)?);
    let mut spooled = 0u64;
    let mut attached: FxHashMap<String, Vec<Place>> = FxHashMap::default();
    let mut framer = ArrayFramer::member_array(open()?, "memories");
    while let Some(element) = framer.next_element().map_err(frame_error)? {
        if let Some(conversation) = string_at(&element.bytes, &["provenance", "conversation_ref"]).filter(|id| travelling.contains_key(id))
        {
            std::io::Write::write_all(&mut spool, &element.bytes).map_err(spool_error)?;
            attached.entry(conversation).or_default().push((spooled, element.bytes.len()));
            spooled += element.bytes.len() as u64;
        }
    }
    let spool = spool.into_inner().map_err(|error| spool_error(error.into_error()))?;
    let embeddings = EmbeddingIndex::beside(folder, &mut warnings, &mut notes)?;
    let decoder: Arc<dyn Decoder> = Arc::new(PamDecoder { attached, owners: travelling, spool: Some(spool), embeddings, lone_file: false });
    let Some(store_entry) = Container::File(store_path.to_owned()).entries()?.into_iter().next() else { return Ok(None) };
    let streams = vec![
        Stream::new(store_entry.clone(), RecordLayout::PamConversations(Arc::from(folder)).framing(), decoder.clone()),
        Stream::new(store_entry, Framing::Member("memories"), decoder),
    ];
    let mut plan = InputPlan {
        path: path.display().to_string(),
        provider: Provider::Other("memory-format"),
        format: Some("pam"),
        carried: crate::sources::contract::Carried::default(),
        layout: format!("PAM v1.0 store, {conversations} conversation files"),
        bytes_on_disk: folder_size(folder),
        streams,
        warnings,
        notes,
        asset_count: 0,
    };
    // A sync's delta lists the conversations it retracts (no file to read): they go to every
    // output as retractions.
    crate::sources::formats::note_retractions(&mut plan, &display, retracted, retractions_unreadable);
    Ok(Some(plan))
}

/// Plans a lone PAM conversation file (one conversation, no memories), or `None` when the file
/// is another PAM file (embeddings).
fn plan_conversation_file(path: &Path) -> Result<Option<InputPlan>, RunError> {
    let head = file_head(path);
    if !crate::spec::pam::has_messages(&head) {
        return Ok(None);
    }
    let Some(entry) = Container::File(path.to_owned()).entries()?.into_iter().next() else { return Ok(None) };
    let decoder: Arc<dyn Decoder> = Arc::new(PamDecoder {
        attached: FxHashMap::default(),
        owners: FxHashMap::default(),
        spool: None,
        embeddings: None,
        lone_file: true,
    });
    Ok(Some(InputPlan {
        path: path.display().to_string(),
        provider: Provider::Other("memory-format"),
        format: Some("pam"),
        carried: crate::sources::contract::Carried::default(),
        layout: "PAM v1.0 conversation file".into(),
        bytes_on_disk: entry.size,
        streams: vec![Stream::new(entry, RecordLayout::WholeFile.framing(), decoder)],
        warnings: Warnings::default(),
        notes: Vec::new(),
        asset_count: 0,
    }))
}

/// The bytes of every file below `folder` (for the report and the progress bar), walked
/// without keeping the list.
fn folder_size(folder: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(folder) else { return 0 };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => folder_size(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |metadata| metadata.len()),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards the store file: an empty or UTF-16 `memory-store.json` names no format, and the
    /// store was refused as one "with no records memport can read", which did not say why.
    #[test]
    fn an_empty_or_utf16_store_file_is_refused_saying_so() {
        let store = tempfile::tempdir().unwrap();
        let store_file = store.path().join(crate::spec::pam::STORE_FILE);
        std::fs::write(&store_file, b"").unwrap();
        let error = plan_store(store.path()).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("memory-store.json: is empty: a PAM store keeps its memories"), "{error}");
        let utf16: Vec<u8> = "\u{feff}{\"schema\":\"portable-ai-memory\"}".encode_utf16().flat_map(u16::to_le_bytes).collect();
        std::fs::write(&store_file, utf16).unwrap();
        let error = plan_store(&store_file).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("memory-store.json: this file is UTF-16"), "{error}");
        // A folder without a store file is not a store, and says nothing.
        std::fs::remove_file(&store_file).unwrap();
        assert!(plan_store(store.path()).is_ok_and(|plan| plan.is_none()));
    }
}
