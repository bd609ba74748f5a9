//! `memport merge BASE DELTA -o OUT`: applies a PAM incremental export (the `pam/` store of a
//! delta sync run) to the store it was made against, and writes the merged full store (PAM §16).
//!
//! - Memories are upserted by id and never deleted: a delta memory replaces the base's of its
//!   id (a `retracted` one too), others are added, the base's others stay; each `supersedes`
//!   relation of the delta marks the memory it names superseded (`memories.rs`).
//! - Relations are unioned by id, the delta's winning; `conversations_index` is upserted by id,
//!   and the files of conversations in both are merged message by message; a conversation the
//!   delta retracts keeps its file and is tagged `retracted` (`conversations.rs`).
//! - The merged store is a full export named by the delta's `export_id`, so the next delta (whose
//!   `base_export_id` is that id) applies to it; `total_memories` and the checksum are computed
//!   as the PAM sink computes them, and it is unsigned (`store.rs`).
//!
//! The stores' `memory-store.json` files are read whole (memories and the index, small next to
//! the conversations); conversation files are read, merged or copied one at a time. The merged
//! store is built in a staging folder inside OUT and put in place as `convert` puts a PAM store
//! (`crate::sinks::pam::publish`, with the `.memport-output.json` manifest), so a failure leaves
//! OUT as it was, and a later merge or convert may replace OUT.

mod conversations;
mod embeddings;
mod memories;
mod raw_object;
mod store;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{ConfigError, RunError};
use crate::outputs::guard::{Layout, OutputGuard, Placement};
use crate::sinks::OutputFormat;
use crate::sinks::output_file::Manifest;
use crate::spec::pam::{CONVERSATIONS_FOLDER, STORE_FILE};

use self::store::Store;

/// What a merge needs.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// The store the delta applies to: the first sync's full store (`OUT/runs/<run-id>/pam/`),
    /// or the folder an earlier merge wrote.
    pub base: PathBuf,
    /// The delta: the `pam/` folder of a delta sync run (its run folder is taken too).
    pub delta: PathBuf,
    /// The folder the merged store is written to: new, empty, or a store memport wrote.
    pub output: PathBuf,
}

/// What became of the memories.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryCounts {
    /// Memories in the merged store.
    pub total: u64,
    /// Delta memories with an id the base does not hold (retracted ones counted as retracted).
    pub inserted: u64,
    /// Delta memories that replaced the base's memory of their id (retracted ones counted as
    /// retracted).
    pub updated: u64,
    /// Delta memories with `status: retracted`: they replace the base's, never delete it.
    pub retracted: u64,
    /// Memories a delta `supersedes` relation marked superseded (not counted when the delta
    /// carried them marked already).
    pub superseded: u64,
}

/// What became of the conversations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ConversationCounts {
    /// Conversations in the merged store's index.
    pub total: u64,
    /// Conversations only the delta has.
    pub inserted: u64,
    /// Conversations in both whose delta entry brought a file (merged) or updated the entry.
    pub updated: u64,
    /// Conversations the delta retracts: kept, tagged `retracted`.
    pub retracted: u64,
    /// Conversation files copied from the base unchanged.
    pub copied: u64,
    /// Messages of the delta that replaced a base message of the same id.
    pub messages_replaced: u64,
    /// Messages of the delta added after a conversation's base messages.
    pub messages_appended: u64,
    /// Messages of the base the delta withdraws (erased from the memory store it was synced
    /// from): taken out of their conversation's file.
    pub messages_withdrawn: u64,
}

/// What a merge did.
#[derive(Debug, Clone, Serialize)]
pub struct MergeReport {
    /// The base store folder.
    pub base: String,
    /// The delta store folder.
    pub delta: String,
    /// The merged store folder.
    pub output: String,
    /// The base's `export_id`, which the delta's `base_export_id` names.
    pub base_export_id: String,
    /// The delta's `export_id`.
    pub delta_export_id: String,
    /// The merged store's `export_id`: the delta's, which the next delta names as its base.
    pub merged_export_id: String,
    /// Memories.
    pub memories: MemoryCounts,
    /// Relations in the merged store.
    pub relations: u64,
    /// Conversations and their messages.
    pub conversations: ConversationCounts,
    /// What the merge noticed and went on with (a signature dropped, a dangling relation).
    pub warnings: Vec<String>,
}

/// Merges `options.delta` into `options.base` and writes the merged store to
/// `options.output`; see the module docs.
///
/// # Errors
/// [`ConfigError::Input`] when an input is not a PAM store, the delta is not incremental, or is
/// not made against the base (a delta applied out of order), or their owners differ;
/// [`ConfigError::Option`] when the output is an input or a folder memport did not write;
/// I/O errors. Nothing is written then.
pub fn merge(options: &MergeOptions) -> Result<MergeReport, RunError> {
    let base_folder = store_folder(&options.base)?;
    let delta_folder = store_folder(&options.delta)?;
    let mut base = Store::read(&base_folder)?;
    let mut delta = Store::read(&delta_folder)?;
    let mut warnings = Vec::new();
    let (base_export_id, delta_export_id) = check_pair(&base, &delta, &mut warnings)?;
    check_output(&options.output, &base_folder, &delta_folder)?;

    // Declared before the staging folder, so it drops last: the half-built store is gone by
    // the time it lets go of the lock and removes the folders this merge created.
    let mut guard = OutputGuard::default();
    let layout = Layout::of(&options.output, Placement::Inside)?;
    guard.hold(&layout)?;
    let staging = Staging(layout.staging.clone());
    let built = layout.built();
    std::fs::create_dir_all(built.join(CONVERSATIONS_FOLDER)).map_err(|error| RunError::write(built.display().to_string(), error))?;

    let mut report = MergeReport {
        base: base_folder.display().to_string(),
        delta: delta_folder.display().to_string(),
        output: options.output.display().to_string(),
        merged_export_id: delta_export_id.clone(),
        base_export_id,
        delta_export_id,
        memories: MemoryCounts::default(),
        relations: 0,
        conversations: ConversationCounts::default(),
        warnings,
    };
    let (base_memories, base_relations) = (base.take("memories"), base.take("relations"));
    let (delta_memories, delta_relations) = (delta.take("memories"), delta.take("relations"));
    let base_side = memories::Side { folder: &base.folder, memories: base_memories, relations: base_relations };
    let delta_side = memories::Side { folder: &delta.folder, memories: delta_memories, relations: delta_relations };
    let merged_memories = memories::merge(base_side, delta_side, &mut report.memories, &mut report.warnings)?;
    report.memories.total = merged_memories.memories.len() as u64;
    report.relations = merged_memories.relations.len() as u64;

    let (base_index, delta_index) = (base.take("conversations_index"), delta.take("conversations_index"));
    let folders = conversations::Folders { base: &base.folder, delta: &delta.folder, built: &built };
    let index = conversations::merge(&folders, base_index, delta_index, &mut report.conversations, &mut report.warnings)?;
    embeddings::merge(&base.folder, &delta.folder, &built)?;

    let store_path = built.join(STORE_FILE);
    let parts = store::Parts { index: &index, memories: &merged_memories };
    store::write_store(&store_path, &delta.root, &parts).map_err(|error| RunError::write(store_path.display().to_string(), error))?;
    crate::sinks::pam::publish(&built, &options.output)?;
    drop(staging);
    // Published: the folders the merge created hold the store now.
    guard.keep_folders();
    Ok(report)
}

/// The staging folder, removed when the merge ends: after a failure with the half-built store
/// in it, after success empty (or with the old conversations the publish moved aside).
struct Staging(PathBuf);

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A [`ConfigError::Input`] about the store at `store`.
pub(super) fn malformed(store: &Path, reason: String) -> RunError {
    ConfigError::Input { path: store.to_owned(), reason }.into()
}

/// An error serializing a value the merge built (a bug, never bad input).
pub(super) fn internal(error: serde_json::Error) -> RunError {
    RunError::Internal(format!("writing merged JSON: {error}"))
}

/// The store folder `path` names: a folder holding `memory-store.json`, that file itself, or a
/// sync run folder (its `pam/`).
fn store_folder(path: &Path) -> Result<PathBuf, RunError> {
    if path.is_file() && path.file_name().is_some_and(|name| name == STORE_FILE) {
        return Ok(path.parent().filter(|parent| !parent.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_owned));
    }
    if path.join(STORE_FILE).is_file() {
        return Ok(path.to_owned());
    }
    let run_store = path.join(OutputFormat::Pam.default_file_name());
    if run_store.join(STORE_FILE).is_file() {
        return Ok(run_store);
    }
    if !path.exists() {
        return Err(malformed(path, "no such file or folder".to_owned()));
    }
    Err(malformed(
        path,
        "no memory-store.json here, so it is not a PAM store; name the folder that holds memory-store.json and conversations/ (a sync's delta is OUT/runs/<run-id>/pam/)".to_owned(),
    ))
}

/// Checks that `delta` is a delta made against `base`; returns their export ids. Notes a
/// signature the merged store cannot keep.
fn check_pair(base: &Store, delta: &Store, warnings: &mut Vec<String>) -> Result<(String, String), RunError> {
    let delta_type = delta.export_type();
    if delta_type != "incremental" {
        return Err(malformed(
            &delta.folder,
            format!(
                "DELTA is not an incremental export (its export_type is `{delta_type}`); name the pam/ folder of a sync run that wrote a delta (OUT/runs/<run-id>/pam/ whose sync.json says \"full\": false)"
            ),
        ));
    }
    if base.export_type() == "incremental" {
        return Err(malformed(
            &base.folder,
            "BASE is an incremental export, and a delta applies to a full store: the first sync's OUT/runs/<run-id>/pam/, or the folder an earlier merge wrote".to_owned(),
        ));
    }
    let Some(delta_export_id) = delta.export_id() else {
        return Err(malformed(&delta.folder, "DELTA has no export_id, so the next delta could not name the merged store".to_owned()));
    };
    let Some(wanted) = delta.base_export_id() else {
        return Err(malformed(&delta.folder, "DELTA names no base_export_id, so the store it applies to is unknown".to_owned()));
    };
    let Some(base_export_id) = base.export_id() else {
        return Err(malformed(
            &base.folder,
            "BASE has no export_id, so no delta can name it as its base (a store from memport convert has none); start from the first sync's full store, OUT/runs/<run-id>/pam/".to_owned(),
        ));
    };
    if wanted != base_export_id {
        return Err(malformed(
            &delta.folder,
            format!(
                "this delta applies to the store with export_id {wanted}, and BASE ({}) has export_id {base_export_id}: deltas must be applied in order, each to the result of merging the one before it (the first to the first sync's full store); each run's sync.json names the run it follows (base_run_id)",
                base.folder.display()
            ),
        ));
    }
    let (Some(base_owner), Some(delta_owner)) = (base.owner_id(), delta.owner_id()) else {
        let folder = if base.owner_id().is_none() { &base.folder } else { &delta.folder };
        return Err(malformed(folder, "memory-store.json has no owner.id, so it is not a PAM store".to_owned()));
    };
    if base_owner != delta_owner {
        return Err(malformed(
            &delta.folder,
            format!("DELTA's owner is `{delta_owner}` and BASE's is `{base_owner}`: a delta applies only to a store of the same owner"),
        ));
    }
    for (name, input) in [("BASE", base), ("DELTA", delta)] {
        if input.is_signed() {
            warnings.push(format!(
                "{name} is signed (PAM §18); the merged store is not, since a signature over {name}'s checksum does not cover the merged memories: sign it again if you need one"
            ));
        }
    }
    Ok((base_export_id, delta_export_id))
}

/// Refuses an output that is BASE or DELTA, a folder memport may not put a store in, or a
/// non-empty folder memport did not write.
fn check_output(output: &Path, base: &Path, delta: &Path) -> Result<(), RunError> {
    let refuse = |reason: String| RunError::from(ConfigError::Option { option: "-o".to_owned(), reason });
    if let Ok(resolved) = std::fs::canonicalize(output) {
        for (name, input) in [("BASE", base), ("DELTA", delta)] {
            if std::fs::canonicalize(input).is_ok_and(|canonical| canonical == resolved) {
                return Err(refuse(format!(
                    "{} is {name} itself; the merged store goes to another folder (a new one, or one an earlier merge wrote), never over an input",
                    output.display()
                )));
            }
        }
    }
    crate::sinks::pam::check_replaceable(output)?;
    if !output.is_dir() {
        return Ok(());
    }
    let manifest = Manifest::read(output).map_err(|error| RunError::write(output.display().to_string(), error))?;
    if manifest.is_some() {
        return Ok(());
    }
    let read_error = |error: std::io::Error| RunError::read(output.display().to_string(), error);
    for entry in std::fs::read_dir(output).map_err(read_error)? {
        let name = entry.map_err(read_error)?.file_name();
        if !name.to_string_lossy().starts_with(".memport") {
            return Err(refuse(format!(
                "{} holds files memport did not write ({} among them); name a new or empty folder, or one an earlier merge wrote",
                output.display(),
                name.to_string_lossy()
            )));
        }
    }
    Ok(())
}
