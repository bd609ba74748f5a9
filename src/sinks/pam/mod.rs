//! PAM v1.0 store writer (`--to pam`): a folder with `memory-store.json` and one file per
//! conversation under `conversations/` (pam.md §3, §8).
//!
//! Conversations stream to their files as batches arrive; their index entries are spooled to a
//! temporary file and memories go through a spill-to-disk sort, because `memory-store.json`
//! lists memories by id with a checksum over them (§5) and can only be written at the end. The
//! sink writes the store plainly into the folder it is given (a run gives it a staging folder,
//! and [`publish`] moves the finished store into place, so a killed run leaves the previous
//! store as it was). The checksum covers exactly the canonical bytes written, with no
//! null members (the SDK's form, which the spec repo's validator computes the same way).
//! Relations (one per extracted memory that superseded another) are few and kept in memory.
//!
//! A sync's retractions ([`Sink::retract`]) are index entries after the written conversations':
//! the id and platform the conversation's own entry had, tagged `retracted`, with
//! `message_count: null` and no `storage` (its file is gone); a memory whose conversations
//! were all retracted has `status: retracted`.
//!
//! The store folder's manifest ([`Manifest`], `.memport-output.json`) records what memport
//! wrote: `memory-store.json`, `embeddings.json`, and the listing of `conversations/` (a count
//! and an order-free digest of the names, so a million conversation files cost no memory). A
//! rerun replaces exactly that and leaves every other file alone; a store memport did not
//! write, or a `conversations/` folder with files added, removed or renamed since, is refused
//! before the run starts, because replacing it would delete files memport did not write.

pub mod conversation;
pub mod memories;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::error::RunError;
use crate::jcs::write_string;
use crate::model::{Conversation, Micros, RetractedConversation};
use crate::sinks::output_file::{FolderListing, MANIFEST_FILE, Manifest};
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary};
use crate::spec::pam::{CONVERSATIONS_FOLDER, EMBEDDINGS_FILE, STORE_FILE};
use crate::timefmt::format_rfc3339;

use conversation::{EncodedConversation, FileContext};
use memories::{CanonicalMemory, CanonicalRelation, MemorySorter};

/// Where an earlier memport built a store inside its target; a killed run of it may have left
/// one, which [`publish`] removes.
const LEGACY_STAGING_FOLDER: &str = ".memport-pam.partial";

/// The format name the store's manifest carries.
const FORMAT: &str = "pam";

/// Where the old `conversations/` folder waits, inside the folder the new store was built in,
/// between the moment the new one takes its name and its removal.
const REPLACED_CONVERSATIONS: &str = ".memport-replaced-conversations";

/// Settings of the PAM sink.
#[derive(Debug, Clone)]
pub struct PamSettings {
    /// `owner.id` of the store.
    pub owner_id: String,
    /// `export_date`, and `imported_at` of every conversation.
    pub exported_at: Micros,
    /// Signs the store (PAM §18) when given.
    pub sign_key: Option<crate::signing::SignKey>,
    /// A sync's run: `export_id` always, and for a delta `export_type: "incremental"` with
    /// `base_export_id` and `since` (PAM §16).
    pub incremental: Option<super::Incremental>,
}

/// Conversation files and memories of one batch, made on a worker thread.
#[derive(Debug, Default)]
pub struct EncodedBatch {
    conversations: Vec<EncodedConversation>,
    memories: Vec<CanonicalMemory>,
}

/// Whether `conversation` gets a file: real conversations, except a repeat from an overlapping
/// export that brings no new message.
pub fn has_file(conversation: &Conversation) -> bool {
    let brings_messages = conversation.messages.iter().any(crate::sinks::written_tree::is_written);
    !conversation.memories_only && (brings_messages || !conversation.is_repeat)
}

struct PamEncoder {
    exported_at: Micros,
}

impl Encoder for PamEncoder {
    fn encode(&self, batch: &[Conversation]) -> Encoded {
        let mut encoded = EncodedBatch::default();
        for conversation in batch {
            let written = has_file(conversation);
            let pam_id = written.then(|| conversation::conversation_pam_id(conversation));
            // Extracted memories arrive in memories-only records after every conversation, so
            // no index entry lists them in `derived_memories`; their `conversation_ref` names
            // the conversation of their first evidence.
            let mut derived = Vec::new();
            for memory in conversation.memories.iter().filter(|memory| memory.is_written()) {
                if let Some(canonical) = memories::encode_memory(memory, conversation.provider, pam_id.as_deref(), self.exported_at) {
                    // An extracted memory (read back with it) is listed by the conversation
                    // its `conversation_ref` names, once, as a direct run's is: not by the
                    // record that carried it.
                    if memory.extracted.is_none() {
                        derived.push(canonical.id.clone());
                    }
                    encoded.memories.push(canonical);
                }
            }
            if written {
                let context = FileContext { imported_at: self.exported_at, derived_memories: &derived };
                encoded.conversations.extend(conversation::encode(conversation, &context));
            }
        }
        Encoded::Pam(encoded)
    }
}

/// Writes one PAM store.
pub struct PamSink {
    settings: PamSettings,
    target: PathBuf,
    index_spool: BufWriter<File>,
    memories: MemorySorter,
    /// `relations`: one per extracted memory that superseded another, so few; sorted by id at
    /// the end.
    relations: Vec<CanonicalRelation>,
    /// Extracted memories by the PAM id of the conversation their provenance names, for that
    /// conversation's `derived_memories` (one entry per extracted memory, so bounded by them).
    derived: BTreeMap<String, Vec<String>>,
    /// `embeddings.json` entries, `,\n`-separated, in the order memories are written.
    embeddings_spool: BufWriter<File>,
    embeddings: u64,
    conversations: u64,
    bytes: u64,
    /// A sync's retractions: index entries without a file, after the written conversations'.
    retracted: Vec<RetractedConversation>,
    /// The messages a sync withdraws.
    withdrawn: Vec<RetractedConversation>,
}

/// The extracted memories an index entry's conversation is the provenance of, if any.
fn derived_ids<'a>(entry: &[u8], derived: &'a BTreeMap<String, Vec<String>>) -> Option<&'a [String]> {
    if derived.is_empty() {
        return None;
    }
    let id: serde_json::Value = serde_json::from_slice(entry).ok()?;
    derived.get(id["id"].as_str()?).map(Vec::as_slice)
}

/// `entry` (an index entry, whose last member is `derived_memories` when it has one) with
/// `ids` added to its `derived_memories`.
fn with_derived_memories(entry: &[u8], ids: &[String]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entry.len() + ids.len() * 32 + 24);
    let mut added = Vec::new();
    for id in ids {
        added.push(b',');
        write_string(&mut added, id);
    }
    if let Some(open) = entry.strip_suffix(b"]}").filter(|_| entry.windows(21).any(|window| window == b",\"derived_memories\":[")) {
        out.extend_from_slice(open);
        out.extend_from_slice(&added);
        out.extend_from_slice(b"]}");
    } else {
        out.extend_from_slice(entry.strip_suffix(b"}").unwrap_or(entry));
        out.extend_from_slice(b",\"derived_memories\":[");
        out.extend_from_slice(&added[1..]);
        out.extend_from_slice(b"]}");
    }
    out
}

impl PamSink {
    /// Creates the sink writing a store into the folder `target`, new or empty (a run gives it
    /// a staging folder): conversation files as they come, `memory-store.json` and
    /// `embeddings.json` in [`Sink::finish`]. Its spools are unnamed temporary files there.
    ///
    /// # Errors
    /// I/O errors creating the folder or the spools.
    pub fn create(target: &Path, settings: PamSettings) -> Result<PamSink, RunError> {
        let display = target.display().to_string();
        let io_error = |error: io::Error| RunError::write(&display, error);
        std::fs::create_dir_all(target.join(CONVERSATIONS_FOLDER)).map_err(io_error)?;
        let index_spool = BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(target).map_err(io_error)?);
        let memories = MemorySorter::new(target);
        let embeddings_spool = BufWriter::with_capacity(1 << 16, tempfile::tempfile_in(target).map_err(io_error)?);
        Ok(PamSink {
            settings,
            target: target.to_owned(),
            index_spool,
            memories,
            relations: Vec::new(),
            derived: BTreeMap::new(),
            embeddings_spool,
            embeddings: 0,
            conversations: 0,
            bytes: 0,
            retracted: Vec::new(),
            withdrawn: Vec::new(),
        })
    }

    fn write_encoded(&mut self, batch: EncodedBatch) -> io::Result<()> {
        let folder = self.target.join(CONVERSATIONS_FOLDER);
        for conversation in batch.conversations {
            let path = folder.join(format!("{}.json", conversation.pam_id));
            let mut file = File::create_new(&path).map_err(|error| {
                if error.kind() == io::ErrorKind::AlreadyExists {
                    io::Error::other(format!("two conversations map to the file {}: please report this with the input", path.display()))
                } else {
                    error
                }
            })?;
            file.write_all(&conversation.file)?;
            self.bytes += conversation.file.len() as u64;
            self.index_spool.write_all(&conversation.index_entry)?;
            self.index_spool.write_all(b"\n")?;
            self.conversations += 1;
        }
        for mut memory in batch.memories {
            // Embeddings go to embeddings.json in the order memories are written; the memory
            // list itself is sorted by id.
            if let Some(entry) = memory.embedding.take() {
                self.embeddings_spool.write_all(if self.embeddings == 0 { b"\n" } else { b",\n" })?;
                self.embeddings_spool.write_all(&entry)?;
                self.embeddings += 1;
            }
            if let Some(conversation) = memory.derived_from.take() {
                self.derived.entry(conversation).or_default().push(memory.id.clone());
            }
            if let Some(relation) = memory.relation.take() {
                self.relations.push(relation);
            }
            self.memories.push(memory)?;
        }
        Ok(())
    }

    /// Writes `embeddings.json` into the store folder from the spooled entries, when there
    /// are any. Returns its size.
    fn write_embeddings(folder: &Path, spool: BufWriter<File>, count: u64) -> io::Result<Option<u64>> {
        if count == 0 {
            return Ok(None);
        }
        let mut spool = spool.into_inner().map_err(io::IntoInnerError::into_error)?;
        spool.seek(SeekFrom::Start(0))?;
        let mut file = BufWriter::with_capacity(1 << 20, File::create(folder.join(EMBEDDINGS_FILE))?);
        file.write_all(b"{\"schema\":\"portable-ai-memory-embeddings\",\"schema_version\":\"1.0\",\"embeddings\":[")?;
        io::copy(&mut spool, &mut file)?;
        file.write_all(b"\n]}\n")?;
        let file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
        Ok(Some(file.metadata()?.len()))
    }

    fn complete(self) -> io::Result<SinkSummary> {
        let PamSink {
            settings,
            target,
            index_spool,
            memories,
            mut relations,
            derived,
            embeddings_spool,
            embeddings,
            conversations,
            bytes,
            retracted,
            withdrawn,
        } = self;
        let store_path = target.join(STORE_FILE);
        let mut store = BufWriter::with_capacity(1 << 20, File::create(&store_path)?);
        let mut head = Vec::with_capacity(512);
        head.extend_from_slice(b"{\"schema\":\"portable-ai-memory\",\"schema_version\":\"1.0\",\"exported_by\":");
        write_string(&mut head, conversation::IMPORTER);
        head.extend_from_slice(b",\"export_date\":");
        write_string(&mut head, &format_rfc3339(settings.exported_at));
        match settings.incremental.as_ref() {
            Some(super::Incremental { export_id, base_export_id: Some(base), since }) => {
                head.extend_from_slice(b",\"export_id\":");
                write_string(&mut head, export_id);
                head.extend_from_slice(b",\"export_type\":\"incremental\",\"base_export_id\":");
                write_string(&mut head, base);
                head.extend_from_slice(b",\"since\":");
                match since {
                    Some(since) => write_string(&mut head, &format_rfc3339(*since)),
                    None => head.extend_from_slice(b"null"),
                }
            }
            Some(super::Incremental { export_id, base_export_id: None, .. }) => {
                head.extend_from_slice(b",\"export_id\":");
                write_string(&mut head, export_id);
                head.extend_from_slice(b",\"export_type\":\"full\"");
            }
            None => head.extend_from_slice(b",\"export_type\":\"full\""),
        }
        head.extend_from_slice(b",\"owner\":{\"id\":");
        write_string(&mut head, &settings.owner_id);
        head.extend_from_slice(b"},\n\"conversations_index\":[");
        store.write_all(&head)?;

        let mut index_file = index_spool.into_inner().map_err(io::IntoInnerError::into_error)?;
        index_file.seek(SeekFrom::Start(0))?;
        let mut index_lines = BufReader::with_capacity(1 << 20, index_file);
        let mut line = Vec::with_capacity(1024);
        let mut first = true;
        loop {
            line.clear();
            if index_lines.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            store.write_all(if first { b"\n" } else { b",\n" })?;
            let entry = line.strip_suffix(b"\n").unwrap_or(&line);
            match derived_ids(entry, &derived) {
                Some(ids) => store.write_all(&with_derived_memories(entry, ids))?,
                None => store.write_all(entry)?,
            }
            first = false;
        }
        // Retracted conversations after the written ones, in the order the sync gave them.
        for retraction in &retracted {
            store.write_all(if first { b"\n" } else { b",\n" })?;
            let id = conversation::first_reading_pam_id(retraction.provider, &retraction.conversation_id);
            let derived_memories = derived.get(&id).map(Vec::as_slice).unwrap_or_default();
            store.write_all(&conversation::retraction_index_entry(retraction, derived_memories))?;
            first = false;
        }
        // Then withdrawn messages: a file and an entry per conversation.
        for withdrawal in &withdrawn {
            let (id, file, entry) = conversation::withdrawal_files(withdrawal, settings.exported_at);
            let path = target.join(CONVERSATIONS_FOLDER).join(format!("{id}.json"));
            File::create_new(&path)?.write_all(&file)?;
            store.write_all(if first { b"\n" } else { b",\n" })?;
            store.write_all(&entry)?;
            first = false;
        }
        store.write_all(b"],\n\"relations\":[")?;
        // Stable: a repeated id keeps its first relation, as the memories keep their first.
        relations.sort_by(|left, right| left.id.cmp(&right.id));
        relations.dedup_by(|later, earlier| later.id == earlier.id);
        for (position, relation) in relations.iter().enumerate() {
            store.write_all(if position == 0 { b"\n" } else { b",\n" })?;
            store.write_all(&relation.bytes)?;
        }
        store.write_all(b"],\n\"memories\":[")?;

        // The checksum is SHA-256 over the canonical array of memories sorted by id.
        let mut checksum = Sha256::new();
        checksum.update(b"[");
        let mut first = true;
        let total = memories.finish(|memory| {
            store.write_all(if first { b"\n" } else { b",\n" })?;
            store.write_all(&memory.bytes)?;
            if !first {
                checksum.update(b",");
            }
            checksum.update(&memory.bytes);
            first = false;
            Ok(())
        })?;
        checksum.update(b"]");
        let digest: [u8; 32] = checksum.finalize().into();
        let mut tail = Vec::with_capacity(160);
        tail.extend_from_slice(b"],\n\"integrity\":{\"canonicalization\":\"RFC8785\",\"checksum\":");
        write_string(&mut tail, &crate::hash::sha256_label(&digest));
        tail.extend_from_slice(format!(",\"total_memories\":{total}}}").as_bytes());
        if let Some(key) = &settings.sign_key {
            write_signature(&mut tail, key, &crate::hash::sha256_label(&digest), &settings);
        }
        tail.extend_from_slice(b"}\n");
        store.write_all(&tail)?;
        let store_file = store.into_inner().map_err(io::IntoInnerError::into_error)?;
        let store_bytes = store_file.metadata()?.len();
        drop(store_file);
        let embeddings_bytes = Self::write_embeddings(&target, embeddings_spool, embeddings)?;
        Ok(SinkSummary {
            format: "pam",
            path: target.display().to_string(),
            records: conversations + retracted.len() as u64 + withdrawn.len() as u64 + total,
            bytes: bytes + store_bytes + embeddings_bytes.unwrap_or(0),
        })
    }
}

impl Sink for PamSink {
    fn encoder(&self) -> Arc<dyn Encoder> {
        Arc::new(PamEncoder { exported_at: self.settings.exported_at })
    }

    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError> {
        let Encoded::Pam(batch) = batch else {
            return Err(RunError::write(
                self.target.display().to_string(),
                io::Error::other("internal: the PAM sink got another sink's batch"),
            ));
        };
        self.write_encoded(batch).map_err(|error| RunError::write(self.target.display().to_string(), error))
    }

    fn retract(&mut self, retracted: &[RetractedConversation]) -> Result<(), RunError> {
        let (of_messages, whole): (Vec<RetractedConversation>, Vec<RetractedConversation>) =
            RetractedConversation::sorted(retracted).into_iter().partition(RetractedConversation::is_of_messages);
        self.retracted = whole;
        self.withdrawn = of_messages;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let target = self.target.display().to_string();
        self.complete().map_err(|error| RunError::write(target, error))
    }
}

/// Refuses a folder memport may not put a store in: a file, a folder whose manifest is another
/// format's, or one holding a store (or a `conversations/` folder, or an `embeddings.json`)
/// that memport did not write there, as its manifest tells. Files memport never writes do not
/// matter: they are left alone.
///
/// # Errors
/// [`RunError::Write`] naming `target` and saying what to do.
pub fn check_replaceable(target: &Path) -> Result<(), RunError> {
    check_store_folder(target).map(|_| ()).map_err(|error| RunError::write(target.display().to_string(), error))
}

/// [`check_replaceable`], returning the folder's manifest when it has one.
fn check_store_folder(target: &Path) -> io::Result<Option<Manifest>> {
    if target.is_file() {
        return Err(io::Error::other(
            "a PAM store is a folder (memory-store.json + conversations/), and this is a file; name a folder with -o",
        ));
    }
    let conversations = target.join(CONVERSATIONS_FOLDER);
    let has_store = target.join(STORE_FILE).exists();
    let has_conversations = conversations.exists();
    let has_embeddings = target.join(EMBEDDINGS_FILE).exists();
    let Some(manifest) = Manifest::read(target)? else {
        if has_conversations && !has_store {
            return Err(io::Error::other(
                "this folder has a conversations/ folder but no memory-store.json, so it is not a PAM store memport may replace; name a new or empty folder with -o",
            ));
        }
        if has_store || has_conversations || has_embeddings {
            return Err(io::Error::other(format!(
                "this folder holds a store memport did not write (no {MANIFEST_FILE} lists its files), so it is not a PAM store memport may replace; move the store away, or name a new or empty folder with -o"
            )));
        }
        return Ok(None);
    };
    if manifest.format != FORMAT {
        return Err(io::Error::other(format!(
            "this folder holds memport's {} output, not a PAM store; name another folder with -o",
            manifest.format
        )));
    }
    for (file, present) in [(STORE_FILE, has_store), (EMBEDDINGS_FILE, has_embeddings)] {
        if present && !manifest.files.contains(file) {
            return Err(io::Error::other(format!(
                "{file} here was not written by memport (the folder's {MANIFEST_FILE} does not list it), so memport will not replace it; move it away, or name a new or empty folder with -o"
            )));
        }
    }
    if has_conversations {
        let listing = FolderListing::of(&conversations, |_| false)?;
        if !manifest.lists_folder(CONVERSATIONS_FOLDER, &listing) {
            return Err(io::Error::other(format!(
                "conversations/ holds files memport did not write there ({} entries, not the ones memport left), so memport will not replace it; move the files you added away, or name a new or empty folder with -o",
                listing.entries
            )));
        }
    }
    Ok(Some(manifest))
}

/// Removes `path` if it is there.
fn remove_if_present(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// Moves the store built in `built` (`memory-store.json`, `conversations/`, maybe
/// `embeddings.json`; a folder inside `target`, so every move is a rename on one file system)
/// into `target`, replacing what memport wrote there before and nothing else, and writes the
/// manifest. The manifest lists the old and the new store together until the swap is done, so
/// a run killed in the middle leaves nothing memport wrote unlisted.
fn replace_store(built: &Path, target: &Path) -> io::Result<()> {
    let old = check_store_folder(target)?;
    let new = manifest_of(built)?;
    let has_embeddings = built.join(EMBEDDINGS_FILE).is_file();
    let built_conversations = built.join(CONVERSATIONS_FOLDER);
    match &old {
        Some(previous) => previous.merged_with(&new).write(target)?,
        None => new.write(target)?,
    }
    // The index first, so no moment shows an index whose conversation files are missing.
    remove_if_present(&target.join(STORE_FILE))?;
    remove_if_present(&target.join(EMBEDDINGS_FILE))?;
    let final_conversations = target.join(CONVERSATIONS_FOLDER);
    let replaced = built.join(REPLACED_CONVERSATIONS);
    let had_conversations = final_conversations.exists();
    if had_conversations {
        // Moved aside whole and removed at the end: one rename instead of a file-by-file
        // removal before the new folder can take the name.
        std::fs::rename(&final_conversations, &replaced)?;
    }
    std::fs::rename(&built_conversations, &final_conversations)?;
    if has_embeddings {
        std::fs::rename(built.join(EMBEDDINGS_FILE), target.join(EMBEDDINGS_FILE))?;
    }
    std::fs::rename(built.join(STORE_FILE), target.join(STORE_FILE))?;
    new.write(target)?;
    if had_conversations {
        // Inside the folder the store was built in, which goes next; a failure here leaves it
        // to that removal (or to the next run's removal of a killed run's staging folder).
        let _ = std::fs::remove_dir_all(&replaced);
    }
    Ok(())
}

/// Moves a store built (and finished) in the folder `built`, inside `target`, into `target`:
/// the run's publish step, after its report is written. Replaces what memport wrote in
/// `target` before and nothing else.
///
/// # Errors
/// [`RunError::Write`] naming `target`: I/O errors, or a `target` memport may not replace.
pub fn publish(built: &Path, target: &Path) -> Result<(), RunError> {
    let write_error = |error: io::Error| RunError::write(target.display().to_string(), error);
    // A killed run of a memport that built its store here directly; the run holds the
    // store's lock, so no live run is building in it.
    let legacy_staging = target.join(LEGACY_STAGING_FOLDER);
    if legacy_staging.exists() {
        std::fs::remove_dir_all(&legacy_staging).map_err(write_error)?;
    }
    // Nothing but memport's files in the store folder: the new store, with its manifest, takes
    // its place in one step, so no moment (and no kill) shows half of each.
    check_store_folder(target).map_err(write_error)?;
    let store_files = |path: &str| path == STORE_FILE || path == EMBEDDINGS_FILE || path.starts_with("conversations/");
    if crate::sinks::folder_swap::holds_only(target, &store_files).map_err(write_error)? {
        manifest_of(built).and_then(|manifest| manifest.write(built)).map_err(write_error)?;
        if crate::sinks::folder_swap::swap_in(built, target).map_err(write_error)? {
            return Ok(());
        }
    }
    replace_store(built, target).map_err(write_error)
}

/// The manifest of the store built in `built`: its index, embeddings and conversation files.
fn manifest_of(built: &Path) -> io::Result<Manifest> {
    let mut manifest = Manifest::new(FORMAT);
    manifest.files.insert(STORE_FILE.to_owned());
    if built.join(EMBEDDINGS_FILE).is_file() {
        manifest.files.insert(EMBEDDINGS_FILE.to_owned());
    }
    manifest.folders.insert(CONVERSATIONS_FOLDER.to_owned(), vec![FolderListing::of(&built.join(CONVERSATIONS_FOLDER), |_| false)?]);
    Ok(manifest)
}

/// PAM §18: `export_id` (required on a signed store; a UUID derived from the checksum, so a
/// rerun repeats it) and the `signature` block over checksum, export id, export date and owner.
/// `signed_at` is the export time, which §18 requires it not to precede.
fn write_signature(out: &mut Vec<u8>, key: &crate::signing::SignKey, checksum: &str, settings: &PamSettings) {
    // A sync's run names its export id in the head (its delta's base refers to it).
    let export_id = match &settings.incremental {
        Some(incremental) => incremental.export_id.clone(),
        None => crate::spec::ids::uuid_v4_shaped(&format!("pam-export:{checksum}")),
    };
    let export_date = format_rfc3339(settings.exported_at);
    let payload = crate::signing::pam_signature_payload(checksum, &export_id, &export_date, &settings.owner_id);
    if settings.incremental.is_none() {
        out.extend_from_slice(b",\n\"export_id\":");
        write_string(out, &export_id);
    }
    out.extend_from_slice(b",\n\"signature\":{\"algorithm\":\"Ed25519\",\"public_key\":");
    write_string(out, &key.multibase_public_key());
    out.extend_from_slice(b",\"key_id\":");
    write_string(out, &format!("{}#{}", key.did_key(), key.multibase_public_key()));
    out.extend_from_slice(b",\"value\":");
    write_string(out, &crate::signing::pam_signature_value(key, &payload));
    out.extend_from_slice(b",\"signed_at\":");
    write_string(out, &export_date);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, Origin, Provider};
    use crate::sinks::pam::memories::tests::{SAID_FIRST, SAID_LATER, superseding_pair};

    /// Builds a store of one conversation (`c<id>`) in the folder `built`.
    fn build_store(built: &Path, id: &str) -> SinkSummary {
        let settings = PamSettings { owner_id: "owner".into(), exported_at: SAID_LATER + 1, sign_key: None, incremental: None };
        let mut sink = PamSink::create(built, settings).unwrap();
        let origin = Origin { file: Arc::from("conversations.json"), offset: 0, index: 0 };
        let mut conversation = Conversation::empty(Provider::ChatGpt, format!("c{id}"), origin);
        conversation.messages = vec![Message::user_for_tests("m1", None, "I live in Paris.", SAID_FIRST)];
        let encoder = sink.encoder();
        sink.write_batch(encoder.encode(&[conversation])).unwrap();
        Box::new(sink).finish().unwrap()
    }

    /// Puts a store of `c<id>` at `store` as a run does: checked, built in a staging folder
    /// inside it, published.
    fn write_store(store: &Path, id: &str) -> Result<(), RunError> {
        check_replaceable(store)?;
        let built = store.join(".memport-staging").join("store");
        build_store(&built, id);
        let published = publish(&built, store);
        let _ = std::fs::remove_dir_all(store.join(".memport-staging"));
        published
    }

    fn conversation_files(store: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(store.join(CONVERSATIONS_FOLDER))
            .unwrap()
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_rerun_replaces_what_memport_wrote_and_leaves_other_files_alone() {
        let folder = tempfile::tempdir().unwrap();
        let store = folder.path().join("store");
        write_store(&store, "1").unwrap();
        assert_eq!(conversation_files(&store), ["chatgpt-c1.json"]);
        std::fs::write(store.join("notes.txt"), b"the user's").unwrap();
        write_store(&store, "2").unwrap();
        assert_eq!(conversation_files(&store), ["chatgpt-c2.json"]);
        assert!(store.join("notes.txt").exists());
        let manifest = Manifest::read(&store).unwrap().unwrap();
        assert_eq!(manifest.files.iter().map(String::as_str).collect::<Vec<_>>(), [STORE_FILE]);
        assert_eq!(manifest.folders[CONVERSATIONS_FOLDER].len(), 1, "only the new listing once the swap is done");
        let validation = crate::validate::pam::validate_folder(&store).unwrap();
        assert!(validation.problems.is_empty(), "{:?}", validation.problems);
    }

    #[test]
    fn a_conversation_file_memport_did_not_write_stops_the_rerun_and_stays() {
        let folder = tempfile::tempdir().unwrap();
        let store = folder.path().join("store");
        write_store(&store, "1").unwrap();
        std::fs::write(store.join(CONVERSATIONS_FOLDER).join("mine.json"), b"{}").unwrap();
        let error = write_store(&store, "2").err().unwrap().to_string();
        assert!(error.contains("conversations/ holds files memport did not write"), "{error}");
        assert_eq!(conversation_files(&store), ["chatgpt-c1.json", "mine.json"]);
    }

    #[test]
    fn a_store_memport_did_not_write_is_not_replaced() {
        let folder = tempfile::tempdir().unwrap();
        let store = folder.path().join("theirs");
        std::fs::create_dir_all(store.join(CONVERSATIONS_FOLDER)).unwrap();
        std::fs::write(store.join(STORE_FILE), b"{}").unwrap();
        std::fs::write(store.join(CONVERSATIONS_FOLDER).join("keep.json"), b"{}").unwrap();
        let error = write_store(&store, "1").err().unwrap().to_string();
        assert!(error.contains("not a PAM store memport may replace"), "{error}");
        assert_eq!(std::fs::read(store.join(STORE_FILE)).unwrap(), b"{}");
        assert_eq!(conversation_files(&store), ["keep.json"]);
        assert!(!store.join(".memport-staging").exists() && !store.join(MANIFEST_FILE).exists(), "nothing of memport's is left");
    }

    #[test]
    fn a_store_built_inside_the_target_is_published_over_the_old_one() {
        let folder = tempfile::tempdir().unwrap();
        let store = folder.path().join("store");
        write_store(&store, "1").unwrap();
        let built = store.join(".memport-staging").join("store");
        build_store(&built, "2");
        publish(&built, &store).unwrap();
        assert_eq!(conversation_files(&store), ["chatgpt-c2.json"]);
        assert!(!built.join(CONVERSATIONS_FOLDER).exists(), "moved, not copied");
        let validation = crate::validate::pam::validate_folder(&store).unwrap();
        assert!(validation.problems.is_empty(), "{:?}", validation.problems);
    }

    #[test]
    fn a_store_with_extracted_memories_validates_and_relates_them() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("store");
        let settings = PamSettings { owner_id: "owner".into(), exported_at: SAID_LATER + 1, sign_key: None, incremental: None };
        let mut sink = PamSink::create(&target, settings).unwrap();
        let origin = Origin { file: Arc::from("conversations.json"), offset: 0, index: 0 };
        let mut conversation = Conversation::empty(Provider::ChatGpt, "c1".into(), origin.clone());
        let mut reply = Message::user_for_tests("m2", None, "I moved to Leeds.", SAID_LATER);
        reply.parent_id = Some("m1".into());
        conversation.messages = vec![Message::user_for_tests("m1", None, "I live in Paris.", SAID_FIRST), reply];
        let (older, newer) = superseding_pair();
        let extracted = Conversation::memories_only(Provider::ChatGpt, "extracted-memories".into(), origin, vec![older, newer]);
        let encoder = sink.encoder();
        sink.write_batch(encoder.encode(&[conversation])).unwrap();
        sink.write_batch(encoder.encode(&[extracted])).unwrap();
        Box::new(sink).finish().unwrap();

        let validation = crate::validate::pam::validate_folder(&target).unwrap();
        assert!(validation.problems.is_empty(), "{:?}", validation.problems);
        let store: serde_json::Value = serde_json::from_slice(&std::fs::read(target.join(STORE_FILE)).unwrap()).unwrap();
        let conversation_id = &store["conversations_index"][0]["id"];
        let memories = store["memories"].as_array().unwrap();
        assert_eq!(memories.len(), 2);
        for (memory, message) in memories.iter().zip(["m1", "m2"]) {
            assert_eq!(&memory["provenance"]["conversation_ref"], conversation_id);
            assert_eq!(memory["provenance"]["message_ref"], message);
        }
        let relations = store["relations"].as_array().unwrap();
        assert_eq!(relations.len(), 1);
        assert_eq!(relations[0]["type"], "supersedes");
        assert_eq!(relations[0]["from"], memories[1]["id"]);
        assert_eq!(relations[0]["to"], memories[0]["id"]);
    }

    fn retracted(provider: Provider, id: &str, title: Option<&str>, created_at: Option<Micros>) -> RetractedConversation {
        RetractedConversation {
            provider,
            conversation_id: id.to_owned(),
            title: title.map(str::to_owned),
            created_at,
            retracted_by: "20240101T000000Z-000000000002".to_owned(),
            retracted_at: SAID_LATER + 1,
            messages: Vec::new(),
        }
    }

    /// A store with a live conversation `c2` and the memory said in `c1` (marked retracted when
    /// `memory_retracted`), given `retractions` before it finishes; its `memory-store.json`.
    fn store_with_retractions(target: &Path, retractions: Option<&[RetractedConversation]>, memory_retracted: bool) -> serde_json::Value {
        let settings = PamSettings { owner_id: "owner".into(), exported_at: SAID_LATER + 1, sign_key: None, incremental: None };
        let mut sink = PamSink::create(target, settings).unwrap();
        let origin = Origin { file: Arc::from("conversations.json"), offset: 0, index: 0 };
        let mut live = Conversation::empty(Provider::ChatGpt, "c2".into(), origin.clone());
        live.messages = vec![Message::user_for_tests("m9", None, "Hello again.", SAID_LATER)];
        let (mut older, _) = superseding_pair();
        if let Some(extracted) = older.extracted.as_deref_mut() {
            extracted.retracted = memory_retracted;
        }
        let memories = Conversation::memories_only(Provider::ChatGpt, "extracted-memories".into(), origin, vec![older]);
        let encoder = sink.encoder();
        sink.write_batch(encoder.encode(&[live])).unwrap();
        sink.write_batch(encoder.encode(&[memories])).unwrap();
        if let Some(list) = retractions {
            sink.retract(list).unwrap();
        }
        let summary = Box::new(sink).finish().unwrap();
        assert_eq!(summary.records, 2 + retractions.map_or(0, <[RetractedConversation]>::len) as u64);
        serde_json::from_slice(&std::fs::read(target.join(STORE_FILE)).unwrap()).unwrap()
    }

    #[test]
    fn retracted_conversations_are_index_entries_without_a_file_and_their_memories_are_retracted() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("store");
        // Given out of order: the sink writes them by provider, then id.
        let retractions =
            [retracted(Provider::Claude, "a b", None, None), retracted(Provider::ChatGpt, "c1", Some("Moving"), Some(SAID_FIRST))];
        let store = store_with_retractions(&target, Some(&retractions), true);
        let validation = crate::validate::pam::validate_folder(&target).unwrap();
        assert!(validation.problems.is_empty(), "{:?}", validation.problems);
        assert_eq!(conversation_files(&target), ["chatgpt-c2.json"], "no file for a retracted conversation");

        let index = store["conversations_index"].as_array().unwrap();
        assert_eq!(index.len(), 3);
        assert_eq!(index[0]["id"], "chatgpt-c2");
        let memory_id = store["memories"][0]["id"].clone();
        assert_eq!(
            index[1],
            serde_json::json!({
                "id": "chatgpt-c1",
                "platform": "chatgpt",
                "title": "Moving",
                "message_count": null,
                "temporal": {"created_at": format_rfc3339(SAID_FIRST), "updated_at": format_rfc3339(SAID_LATER + 1)},
                "tags": ["retracted"],
                "derived_memories": [memory_id],
            })
        );
        // The id and platform a live entry of the conversation has; the start unknown, so the
        // retraction time.
        assert_eq!(index[2]["id"], conversation::first_reading_pam_id(Provider::Claude, "a b").as_str());
        assert_eq!(index[2]["platform"], "claude");
        assert_eq!(index[2]["title"], serde_json::Value::Null);
        assert_eq!(index[2]["temporal"]["created_at"], format_rfc3339(SAID_LATER + 1).as_str());
        assert!(index[2].get("storage").is_none() && index[2].get("derived_memories").is_none());

        let memory = &store["memories"][0];
        assert_eq!(memory["status"], "retracted", "retracted before superseded");
        assert!(memory["temporal"].get("superseded_by").is_none());
        assert_eq!(memory["metadata"]["superseded_by"], "mem-00000000000000000002");
        assert_eq!(memory["provenance"]["conversation_ref"], "chatgpt-c1");
    }

    #[test]
    fn an_empty_retraction_list_leaves_the_store_as_it_was() {
        let folder = tempfile::tempdir().unwrap();
        let (plain, empty) = (folder.path().join("plain"), folder.path().join("empty"));
        store_with_retractions(&plain, None, false);
        store_with_retractions(&empty, Some(&[]), false);
        assert_eq!(std::fs::read(plain.join(STORE_FILE)).unwrap(), std::fs::read(empty.join(STORE_FILE)).unwrap());
    }
}
