//! The conversations of a merge: `conversations_index` upserted by id, and the conversation
//! files merged (a conversation in both), copied from the delta (a new one) or copied from the
//! base (one the delta does not touch), one file at a time.
//!
//! A conversation in both stores gets the base's messages in the base's order, a delta message
//! in the place of the base message with its id, and the delta's other messages after them in
//! the delta's order; its other members come from the delta's file. A delta entry tagged
//! `retracted` with no file (the user deleted the conversation) marks the base's entry: its
//! title, tags and `temporal.updated_at` come from the delta, its file stays. A delta entry
//! tagged `messages-withdrawn` names messages of a base conversation that were erased from
//! the memory store the delta was synced from: they are taken out of the conversation's file
//! (each one's children hang from its parent instead), and the entry is not kept.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::RunError;
use crate::spec::pam::{CONVERSATIONS_FOLDER, WITHDRAWN_MEMBER, WITHDRAWN_TAG};

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
    let DeltaIndex { entries: mut delta_entries, positions, mut withdrawn } = read_delta_entries(folders.delta, delta_index)?;
    let mut files = Files::default();
    let mut merged = Vec::with_capacity(base_index.len() + delta_entries.len());
    for (position, raw) in base_index.into_iter().enumerate() {
        let Some(id) = id_of(&raw) else {
            return Err(malformed(folders.base, format!("conversations_index/{position} has no string id")));
        };
        let gone = withdrawn.remove(&id).unwrap_or_default();
        let Some(delta) = positions.get(&id).and_then(|&at| delta_entries[at].take()) else {
            if gone.is_empty() {
                merged.push(raw);
            } else {
                let base_entry = RawObject::parse_raw(&raw)
                    .map_err(|error| malformed(folders.base, format!("conversations_index/{position}: {error}")))?;
                merged.push(withdraw_from_base(folders, base_entry, &id, &gone, &mut files, counts)?.to_raw().map_err(internal)?);
            }
            continue;
        };
        let base_entry =
            RawObject::parse_raw(&raw).map_err(|error| malformed(folders.base, format!("conversations_index/{position}: {error}")))?;
        let entry = if delta.file.is_some() {
            update_with_file(folders, base_entry, delta, &gone, &mut files, counts)?
        } else {
            // Retracted whole: its file stays as it is, and is not read again.
            update_index_only(folders, base_entry, delta, &mut files, counts)?
        };
        merged.push(entry.to_raw().map_err(internal)?);
    }
    let mut unheld: Vec<&String> = withdrawn.keys().collect();
    unheld.sort();
    for id in unheld {
        warnings.push(format!("DELTA withdraws messages of conversation {id}, which BASE does not hold; nothing to take out"));
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
    /// The message ids each conversation (by id) has withdrawn, from the entries tagged
    /// `messages-withdrawn`.
    withdrawn: HashMap<String, BTreeSet<String>>,
}

/// Reads the delta's index entries, with where each one is by id.
fn read_delta_entries(delta: &Path, index: Vec<Box<RawValue>>) -> Result<DeltaIndex, RunError> {
    let mut entries = Vec::with_capacity(index.len());
    let mut positions = HashMap::with_capacity(index.len());
    let mut withdrawn: HashMap<String, BTreeSet<String>> = HashMap::new();
    for (position, raw) in index.into_iter().enumerate() {
        let entry = RawObject::parse_raw(&raw).map_err(|error| malformed(delta, format!("conversations_index/{position}: {error}")))?;
        let Some(id) = entry.string("id") else {
            return Err(malformed(delta, format!("conversations_index/{position} has no string id")));
        };
        if entry.strings("tags").iter().any(|tag| tag == WITHDRAWN_TAG) {
            let (conversation, messages) = read_withdrawal(delta, &entry, &id)?;
            withdrawn.entry(conversation).or_default().extend(messages);
            continue;
        }
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
    Ok(DeltaIndex { entries, positions, withdrawn })
}

/// The conversation and message ids a withdrawal's file names (`raw_metadata.memport_withdrawn_messages`).
fn read_withdrawal(delta: &Path, entry: &RawObject, id: &str) -> Result<(String, Vec<String>), RunError> {
    let unreadable = |why: &str| malformed(delta, format!("its index entry {id} withdraws messages, but {why}"));
    let reference = file_ref(entry).ok_or_else(|| unreadable("names no file"))?;
    let path = conversations(delta).join(file_name(&reference, delta, id)?);
    let file = read_conversation(&path, delta)?;
    let listed = file.value("raw_metadata").map(|metadata| metadata[WITHDRAWN_MEMBER].clone()).unwrap_or_default();
    let conversation =
        listed["conversation"].as_str().filter(|text| !text.is_empty()).ok_or_else(|| unreadable("its file names no conversation"))?;
    let messages: Vec<String> =
        listed["message_ids"].as_array().into_iter().flatten().filter_map(serde_json::Value::as_str).map(str::to_owned).collect();
    if messages.is_empty() {
        return Err(unreadable("its file names no message"));
    }
    Ok((conversation.to_owned(), messages))
}

/// `messages` without those whose id is in `withdrawn`; a message whose parent goes hangs from
/// the nearest ancestor that stays, and a parent's `children_ids` name the children of a child
/// that goes in its place. Returns the messages kept and how many went.
fn without_withdrawn(messages: Vec<Box<RawValue>>, withdrawn: &BTreeSet<String>) -> Result<(Vec<Box<RawValue>>, u64), RunError> {
    let parsed: Vec<serde_json::Value> =
        messages.iter().map(|message| serde_json::from_str(message.get())).collect::<Result<_, _>>().map_err(internal)?;
    let id = |message: &serde_json::Value| message["id"].as_str().map(str::to_owned);
    let going: HashMap<String, &serde_json::Value> =
        parsed.iter().filter_map(|message| id(message).filter(|id| withdrawn.contains(id)).map(|id| (id, message))).collect();
    if going.is_empty() {
        return Ok((messages, 0));
    }
    // The nearest ancestor that stays (bounded: a cycle of withdrawn parents ends at none).
    let staying_parent = |mut parent: Option<String>| {
        for _ in 0..=going.len() {
            match parent.as_ref().and_then(|id| going.get(id)) {
                Some(gone) => parent = gone["parent_id"].as_str().map(str::to_owned),
                None => return parent,
            }
        }
        None
    };
    // A child that goes is replaced by its own children, in order.
    fn staying_children(children: &[serde_json::Value], going: &HashMap<String, &serde_json::Value>, depth: usize, out: &mut Vec<String>) {
        for child in children.iter().filter_map(serde_json::Value::as_str) {
            match going.get(child) {
                Some(gone) if depth < going.len() => {
                    staying_children(gone["children_ids"].as_array().map(Vec::as_slice).unwrap_or_default(), going, depth + 1, out);
                }
                Some(_) => {}
                None => out.push(child.to_owned()),
            }
        }
    }
    let mut kept = Vec::with_capacity(messages.len() - going.len());
    for (raw, mut message) in messages.into_iter().zip(parsed.iter().cloned()) {
        if id(&message).is_some_and(|id| going.contains_key(&id)) {
            continue;
        }
        let parent = message["parent_id"].as_str().map(str::to_owned);
        let children = message["children_ids"].as_array().cloned().unwrap_or_default();
        let touches = parent.as_ref().is_some_and(|parent| going.contains_key(parent))
            || children.iter().filter_map(serde_json::Value::as_str).any(|child| going.contains_key(child));
        if !touches {
            kept.push(raw);
            continue;
        }
        if parent.is_some() {
            message["parent_id"] = staying_parent(parent).map_or(serde_json::Value::Null, serde_json::Value::from);
        }
        let mut staying = Vec::new();
        staying_children(&children, &going, 0, &mut staying);
        message["children_ids"] = serde_json::Value::from(staying);
        kept.push(raw_of(&message).map_err(internal)?);
    }
    Ok((kept, going.len() as u64))
}

/// A conversation in both stores that the delta has a file for: the files merged (or the
/// delta's copied, when the base has none), the delta's entry with the merged message count,
/// the union of both entries' `derived_memories` and no `retracted` tag.
fn update_with_file(
    folders: &Folders<'_>,
    base_entry: RawObject,
    delta: DeltaEntry,
    withdrawn: &BTreeSet<String>,
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
            let messages = merge_files(&base_path, folders.base, &delta_path, folders.delta, withdrawn, &target, counts)?;
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

/// A conversation of the base the delta withdraws messages of and has no other entry for: the
/// base's entry and file without those messages.
fn withdraw_from_base(
    folders: &Folders<'_>,
    mut entry: RawObject,
    id: &str,
    withdrawn: &BTreeSet<String>,
    files: &mut Files,
    counts: &mut ConversationCounts,
) -> Result<RawObject, RunError> {
    let Some(name) = file_ref(&entry).map(|reference| file_name(&reference, folders.base, id)).transpose()? else { return Ok(entry) };
    let path = conversations(folders.base).join(&name);
    if !path.is_file() {
        return Ok(entry);
    }
    let mut file = read_conversation(&path, folders.base)?;
    let (messages, gone) = without_withdrawn(file.take_items("messages"), withdrawn)?;
    let total = messages.len() as u64;
    file.set("messages", Member::Items(messages), &[]);
    files.claim(&name, folders.delta, id)?;
    write_conversation(&file, &conversations(folders.built).join(&name))?;
    files.replaced.insert(name);
    if entry.raw("message_count").is_some() {
        entry.set("message_count", Member::Raw(raw_of(&total).map_err(internal)?), &COUNT_AFTER);
    }
    counts.messages_withdrawn += gone;
    counts.updated += 1;
    Ok(entry)
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
    withdrawn: &BTreeSet<String>,
    target: &Path,
    counts: &mut ConversationCounts,
) -> Result<u64, RunError> {
    let (mut merged, gone) = without_withdrawn(read_conversation(base_path, base)?.take_items("messages"), withdrawn)?;
    counts.messages_withdrawn += gone;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str, parent: Option<&str>, children: &[&str]) -> Box<RawValue> {
        raw_of(&serde_json::json!({"id": id, "role": "user", "parent_id": parent, "children_ids": children})).unwrap()
    }

    #[test]
    fn withdrawn_messages_go_and_their_children_hang_from_the_nearest_parent_that_stays() {
        // a → b → c → d, and a → e; b and c go.
        let messages = vec![
            message("a", None, &["b", "e"]),
            message("b", Some("a"), &["c"]),
            message("c", Some("b"), &["d"]),
            message("d", Some("c"), &[]),
            message("e", Some("a"), &[]),
        ];
        let withdrawn: BTreeSet<String> = ["b".to_owned(), "c".to_owned()].into();
        let (kept, gone) = without_withdrawn(messages, &withdrawn).unwrap();
        assert_eq!(gone, 2);
        let kept: Vec<serde_json::Value> = kept.iter().map(|raw| serde_json::from_str(raw.get()).unwrap()).collect();
        let shape: Vec<(String, serde_json::Value, serde_json::Value)> = kept
            .iter()
            .map(|message| (message["id"].as_str().unwrap().to_owned(), message["parent_id"].clone(), message["children_ids"].clone()))
            .collect();
        assert_eq!(
            shape,
            [
                ("a".to_owned(), serde_json::Value::Null, serde_json::json!(["d", "e"])),
                ("d".to_owned(), serde_json::json!("a"), serde_json::json!([])),
                ("e".to_owned(), serde_json::json!("a"), serde_json::json!([])),
            ]
        );
        let untouched = vec![message("x", None, &[])];
        let (kept, gone) = without_withdrawn(untouched, &withdrawn).unwrap();
        assert_eq!((kept[0].get(), gone), (message("x", None, &[]).get(), 0), "a file without them is left as it is");
    }
}
