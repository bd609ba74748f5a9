//! The conversations of a merge: `conversations_index` upserted by id, and the conversation
//! files merged (a conversation in both), copied from the delta (a new one) or copied from the
//! base (one the delta does not touch), one file at a time.
//!
//! A conversation in both stores gets the base's messages in the base's order, a delta message
//! in the place of the base message with its id, and the delta's other messages after them in
//! the delta's order; its other members come from the delta's file. A delta entry tagged
//! `retracted` with no file (the user deleted the conversation) marks the base's entry: its
//! title, tags and `temporal.updated_at` come from the delta, its file stays.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::RunError;
use crate::spec::pam::CONVERSATIONS_FOLDER;

use super::raw_object::{Member, RawObject, raw_of};
use super::{ConversationCounts, internal, malformed};

/// The tag of a delta's index entry for a conversation the user deleted.
pub(super) const RETRACTED_TAG: &str = "retracted";

/// The members an index entry's `tags` follows when it is added: the schema's order.
const TAGS_AFTER: [&str; 5] = ["temporal", "message_count", "title", "platform", "id"];
/// The members `message_count` follows when it is added.
const COUNT_AFTER: [&str; 3] = ["title", "platform", "id"];
/// The members `title` follows when it is added.
const TITLE_AFTER: [&str; 2] = ["platform", "id"];

/// The store folders a merge reads and the one it builds.
pub(super) struct Folders<'a> {
    /// BASE.
    pub(super) base: &'a Path,
    /// DELTA.
    pub(super) delta: &'a Path,
    /// The store being built.
    pub(super) built: &'a Path,
}

/// The `id` of an index entry or a message, and nothing else of it.
#[derive(Deserialize)]
struct IdOnly {
    #[serde(default)]
    id: Option<String>,
}

/// The string `id` of the object `raw`, if it has one.
fn id_of(raw: &RawValue) -> Option<String> {
    serde_json::from_str::<IdOnly>(raw.get()).ok().and_then(|only| only.id)
}

/// One entry of the delta's index.
struct DeltaEntry {
    id: String,
    entry: RawObject,
    /// Its file's name in DELTA/conversations/, when the delta has the file.
    file: Option<String>,
    /// Tagged `retracted`, with no file.
    retracted: bool,
}

/// Which conversation files the built store has so far.
#[derive(Default)]
struct Files {
    /// Names in BASE/conversations/ that are not copied: the merged store has a new file for
    /// them.
    replaced: HashSet<String>,
    /// Names written into the built store's conversations/.
    written: HashSet<String>,
}

impl Files {
    /// Records that the file `name` is written for conversation `id`, which must be the only
    /// one with that file.
    fn claim(&mut self, name: &str, delta: &Path, id: &str) -> Result<(), RunError> {
        if self.written.insert(name.to_owned()) {
            return Ok(());
        }
        Err(malformed(delta, format!("two conversations, {id} and another, have the file conversations/{name}")))
    }
}

/// `conversations/` of a store folder.
fn conversations(store: &Path) -> PathBuf {
    store.join(CONVERSATIONS_FOLDER)
}

/// The `storage.ref` of an index entry whose conversation is a file.
fn file_ref(entry: &RawObject) -> Option<String> {
    let storage = entry.value("storage")?;
    if storage.get("type").and_then(serde_json::Value::as_str) != Some("file") {
        return None;
    }
    storage.get("ref").and_then(serde_json::Value::as_str).map(str::to_owned)
}

/// The name in `conversations/` of the file `reference` names.
fn file_name(reference: &str, store: &Path, id: &str) -> Result<String, RunError> {
    match reference.strip_prefix("conversations/") {
        Some(name) if !name.is_empty() && !name.contains('/') && name != "." && name != ".." => Ok(name.to_owned()),
        _ => Err(malformed(
            store,
            format!("conversation {id}'s file is `{reference}`; memport merges stores whose conversation files are in conversations/"),
        )),
    }
}

/// Reads a conversation file of `store`, its messages item by item.
fn read_conversation(path: &Path, store: &Path) -> Result<RawObject, RunError> {
    let bytes = std::fs::read(path).map_err(|error| RunError::read(path.display().to_string(), error))?;
    RawObject::parse(&bytes, &["messages"])
        .map_err(|error| malformed(store, format!("{} is not a PAM conversation file memport can read: {error}", path.display())))
}

/// Writes a conversation file as the PAM sink does: compact, one message a line.
fn write_conversation(file: &RawObject, target: &Path) -> Result<(), RunError> {
    let mut out = Vec::new();
    file.write(&mut out);
    out.push(b'\n');
    std::fs::write(target, out).map_err(|error| RunError::write(target.display().to_string(), error))
}

/// Copies a conversation file as it is.
fn copy(source: &Path, target: &Path) -> Result<(), RunError> {
    std::fs::copy(source, target).map(|_| ()).map_err(|error| RunError::write(target.display().to_string(), error))
}

/// Merges `conversations_index` and writes every conversation file of the merged store into
/// `folders.built`'s conversations/ (which exists). Returns the merged index entries, in order:
/// the base's, then the delta's new ones.
pub(super) fn merge(
    folders: &Folders<'_>,
    base_index: Vec<Box<RawValue>>,
    delta_index: Vec<Box<RawValue>>,
    counts: &mut ConversationCounts,
    warnings: &mut Vec<String>,
) -> Result<Vec<Box<RawValue>>, RunError> {
    let DeltaIndex { entries: mut delta_entries, positions } = read_delta_entries(folders.delta, delta_index)?;
    let mut files = Files::default();
    let mut merged = Vec::with_capacity(base_index.len() + delta_entries.len());
    for (position, raw) in base_index.into_iter().enumerate() {
        let Some(id) = id_of(&raw) else {
            return Err(malformed(folders.base, format!("conversations_index/{position} has no string id")));
        };
        let Some(delta) = positions.get(&id).and_then(|&at| delta_entries[at].take()) else {
            merged.push(raw);
            continue;
        };
        let base_entry =
            RawObject::parse_raw(&raw).map_err(|error| malformed(folders.base, format!("conversations_index/{position}: {error}")))?;
        let entry = if delta.file.is_some() {
            update_with_file(folders, base_entry, delta, &mut files, counts)?
        } else {
            update_index_only(folders, base_entry, delta, &mut files, counts)?
        };
        merged.push(entry.to_raw().map_err(internal)?);
    }
    for delta in delta_entries.into_iter().flatten() {
        let entry = insert(folders, delta, &mut files, counts, warnings)?;
        merged.push(entry.to_raw().map_err(internal)?);
    }
    copy_base_files(folders, &files, counts, warnings)?;
    counts.total = merged.len() as u64;
    Ok(merged)
}

/// The delta's index entries, each taken when the base's entry of its id is met.
struct DeltaIndex {
    entries: Vec<Option<DeltaEntry>>,
    /// Where each id's entry is in `entries`.
    positions: HashMap<String, usize>,
}

/// Reads the delta's index entries, with where each one is by id.
fn read_delta_entries(delta: &Path, index: Vec<Box<RawValue>>) -> Result<DeltaIndex, RunError> {
    let mut entries = Vec::with_capacity(index.len());
    let mut positions = HashMap::with_capacity(index.len());
    for (position, raw) in index.into_iter().enumerate() {
        let entry = RawObject::parse_raw(&raw).map_err(|error| malformed(delta, format!("conversations_index/{position}: {error}")))?;
        let Some(id) = entry.string("id") else {
            return Err(malformed(delta, format!("conversations_index/{position} has no string id")));
        };
        let tagged = entry.strings("tags").iter().any(|tag| tag == RETRACTED_TAG);
        let file = match file_ref(&entry) {
            None => None,
            Some(reference) => {
                let name = file_name(&reference, delta, &id)?;
                if conversations(delta).join(&name).is_file() {
                    Some(name)
                } else if tagged {
                    None
                } else {
                    return Err(malformed(
                        delta,
                        format!("its index lists conversation {id} in {reference}, which is missing: the delta is incomplete"),
                    ));
                }
            }
        };
        if positions.insert(id.clone(), entries.len()).is_some() {
            return Err(malformed(delta, format!("its index lists conversation {id} twice")));
        }
        entries.push(Some(DeltaEntry { id, entry, retracted: tagged && file.is_none(), file }));
    }
    Ok(DeltaIndex { entries, positions })
}

/// A conversation in both stores that the delta has a file for: the files merged (or the
/// delta's copied, when the base has none), the delta's entry with the merged message count,
/// the union of both entries' `derived_memories` and no `retracted` tag.
fn update_with_file(
    folders: &Folders<'_>,
    base_entry: RawObject,
    delta: DeltaEntry,
    files: &mut Files,
    counts: &mut ConversationCounts,
) -> Result<RawObject, RunError> {
    let DeltaEntry { id, entry: mut merged, file, .. } = delta;
    let Some(delta_file) = file else { return Ok(merged) };
    let base_file = file_ref(&base_entry).map(|reference| file_name(&reference, folders.base, &id)).transpose()?;
    files.claim(&delta_file, folders.delta, &id)?;
    let target = conversations(folders.built).join(&delta_file);
    let delta_path = conversations(folders.delta).join(&delta_file);
    match &base_file {
        Some(name) => {
            let base_path = conversations(folders.base).join(name);
            if !base_path.is_file() {
                return Err(malformed(
                    folders.base,
                    format!("its index lists conversation {id} in conversations/{name}, which is missing"),
                ));
            }
            let messages = merge_files(&base_path, folders.base, &delta_path, folders.delta, &target, counts)?;
            merged.set("message_count", Member::Raw(raw_of(&messages).map_err(internal)?), &COUNT_AFTER);
        }
        None => copy(&delta_path, &target)?,
    }
    if let Some(name) = base_file {
        files.replaced.insert(name);
    }
    let derived: BTreeSet<String> = base_entry.strings("derived_memories").into_iter().chain(merged.strings("derived_memories")).collect();
    if derived.is_empty() {
        merged.remove("derived_memories");
    } else {
        merged.set("derived_memories", Member::Raw(raw_of(&derived).map_err(internal)?), &[]);
    }
    drop_retracted_tag(&mut merged)?;
    counts.updated += 1;
    Ok(merged)
}

/// A conversation in both stores that the delta has no file for (a retraction): the base's
/// entry and file, with the delta's title, tags and `temporal.updated_at`. A new title is
/// written into the base's file too, which must say what its index entry says.
fn update_index_only(
    folders: &Folders<'_>,
    base_entry: RawObject,
    delta: DeltaEntry,
    files: &mut Files,
    counts: &mut ConversationCounts,
) -> Result<RawObject, RunError> {
    let mut merged = base_entry;
    let delta_entry = &delta.entry;
    if let Some(title) = delta_entry.raw("title") {
        let renamed = merged.value("title") != delta_entry.value("title");
        merged.set("title", Member::Raw(title.to_owned()), &TITLE_AFTER);
        let base_file = file_ref(&merged).map(|reference| file_name(&reference, folders.base, &delta.id)).transpose()?;
        if let Some(name) = base_file.filter(|name| renamed && conversations(folders.base).join(name).is_file()) {
            let mut file = read_conversation(&conversations(folders.base).join(&name), folders.base)?;
            file.set("title", Member::Raw(title.to_owned()), &["provider", "id"]);
            files.claim(&name, folders.delta, &delta.id)?;
            write_conversation(&file, &conversations(folders.built).join(&name))?;
            files.replaced.insert(name);
        }
    }
    if let Some(tags) = delta_entry.raw("tags") {
        merged.set("tags", Member::Raw(tags.to_owned()), &TAGS_AFTER);
    }
    let base_temporal =
        merged.raw("temporal").map(RawObject::parse_raw).transpose().map_err(|error| malformed(folders.base, error.to_string()))?;
    let delta_temporal =
        delta_entry.raw("temporal").map(RawObject::parse_raw).transpose().map_err(|error| malformed(folders.delta, error.to_string()))?;
    if let (Some(mut temporal), Some(delta_temporal)) = (base_temporal, delta_temporal)
        && let Some(updated_at) = delta_temporal.raw("updated_at")
    {
        temporal.set("updated_at", Member::Raw(updated_at.to_owned()), &["created_at"]);
        merged.set("temporal", Member::Raw(temporal.to_raw().map_err(internal)?), &[]);
    }
    if delta.retracted {
        counts.retracted += 1;
    } else {
        counts.updated += 1;
    }
    Ok(merged)
}

/// A conversation only the delta has: its entry and file as they are (a retracted one without
/// a file keeps its entry, without the storage reference to a file neither store has).
fn insert(
    folders: &Folders<'_>,
    delta: DeltaEntry,
    files: &mut Files,
    counts: &mut ConversationCounts,
    warnings: &mut Vec<String>,
) -> Result<RawObject, RunError> {
    let DeltaEntry { id, mut entry, file, retracted } = delta;
    match file {
        Some(name) => {
            files.claim(&name, folders.delta, &id)?;
            copy(&conversations(folders.delta).join(&name), &conversations(folders.built).join(&name))?;
            drop_retracted_tag(&mut entry)?;
            counts.inserted += 1;
        }
        None => {
            if retracted {
                warnings
                    .push(format!("DELTA retracts conversation {id}, which BASE does not hold; its index entry is kept, without a file"));
                counts.retracted += 1;
            } else {
                counts.inserted += 1;
            }
            if file_ref(&entry).is_some() {
                entry.remove("storage");
            }
        }
    }
    Ok(entry)
}

/// Takes `retracted` out of an entry's tags (and the tags out, when it was the only one).
fn drop_retracted_tag(entry: &mut RawObject) -> Result<(), RunError> {
    let tags = entry.strings("tags");
    if !tags.iter().any(|tag| tag == RETRACTED_TAG) {
        return Ok(());
    }
    let kept: Vec<&String> = tags.iter().filter(|tag| *tag != RETRACTED_TAG).collect();
    if kept.is_empty() {
        entry.remove("tags");
    } else {
        entry.set("tags", Member::Raw(raw_of(&kept).map_err(internal)?), &TAGS_AFTER);
    }
    Ok(())
}

/// Merges a conversation's base and delta files into `target`; returns its message count.
fn merge_files(
    base_path: &Path,
    base: &Path,
    delta_path: &Path,
    delta: &Path,
    target: &Path,
    counts: &mut ConversationCounts,
) -> Result<u64, RunError> {
    let mut merged = read_conversation(base_path, base)?.take_items("messages");
    let mut file = read_conversation(delta_path, delta)?;
    let delta_messages = file.take_items("messages");
    let mut positions: HashMap<String, usize> = HashMap::with_capacity(merged.len() + delta_messages.len());
    for (position, message) in merged.iter().enumerate() {
        if let Some(id) = id_of(message) {
            positions.entry(id).or_insert(position);
        }
    }
    for message in delta_messages {
        let id = id_of(&message);
        let existing = id.as_ref().and_then(|id| positions.get(id).copied());
        match existing {
            Some(position) => {
                merged[position] = message;
                counts.messages_replaced += 1;
            }
            None => {
                if let Some(id) = id {
                    positions.insert(id, merged.len());
                }
                merged.push(message);
                counts.messages_appended += 1;
            }
        }
    }
    let total = merged.len() as u64;
    file.set("messages", Member::Items(merged), &[]);
    write_conversation(&file, target)?;
    Ok(total)
}

/// Copies every file of BASE/conversations/ that the merged store has no new file for.
fn copy_base_files(
    folders: &Folders<'_>,
    files: &Files,
    counts: &mut ConversationCounts,
    warnings: &mut Vec<String>,
) -> Result<(), RunError> {
    let source = conversations(folders.base);
    let read_error = |error: std::io::Error| RunError::read(source.display().to_string(), error);
    let listing = match std::fs::read_dir(&source) {
        Ok(listing) => listing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(read_error(error)),
    };
    let target = conversations(folders.built);
    for entry in listing {
        let entry = entry.map_err(read_error)?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if files.replaced.contains(&*text) {
            continue;
        }
        if files.written.contains(&*text) {
            return Err(malformed(
                folders.delta,
                format!("its conversations/{text} would take the place of BASE's file of that name, which belongs to another conversation"),
            ));
        }
        if !entry.file_type().map_err(read_error)?.is_file() {
            warnings.push(format!("BASE's conversations/{text} is not a regular file; it is not copied"));
            continue;
        }
        copy(&entry.path(), &target.join(&name))?;
        counts.copied += 1;
    }
    Ok(())
}
