#![no_main]
//! A PAM v1.0 store as input: `memory-store.json` and its conversation files (and an
//! `embeddings.json`), read as `memport convert` reads a store folder and as `memport validate`
//! checks it; and the first conversation file read on its own, as a lone PAM file.
//!
//! One fuzz input holds several files, split at `memport_fuzz::FILE_SEPARATOR`: the store first,
//! then conversation files. The i-th conversation file is written where the store's i-th
//! `conversations_index` entry points (`storage.ref`, when it stays inside the store folder),
//! else as an unlisted `conversations/extra-<i>.json`; a file that names the embeddings schema is
//! written as `embeddings.json` instead. So a seed made of a real store and its files, in index
//! order, reads back as that store.
//!
//! The store is planned (`formats::pam::plan_store`: memories travelling with their
//! conversations through a spill file, embeddings indexed), its index walked and each conversation
//! file and memory decoded under both branch policies, then extraction, secret masking, the stages
//! and the counts (`memport_fuzz::Conversion`); the grouped record array of the index walk must
//! always frame. `validate::pam` must report problems, never fail on the store's own files.

use std::fs;
use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use memport::sources::formats::pam::{plan_store, plan_store_file};
use memport::sources::json_array::ArrayFramer;
use memport::spec::pam::{EMBEDDINGS_FILE, STORE_FILE};
use memport::validate::pam::{validate_file, validate_folder};
use memport_fuzz::{check_run_error, check_validation, drain_plan, find, fresh_dir, inside, split_files};
use serde_json::Value;

/// Most files one input is split into.
const MOST_FILES: usize = 9;

/// The `storage.ref` of each of the first entries of the store's `conversations_index`, framed
/// as memport frames them (an entry that is not JSON has none).
fn index_references(store: &[u8]) -> Vec<Option<String>> {
    let mut framer = ArrayFramer::member_array(store, "conversations_index");
    let mut references = Vec::new();
    while references.len() < MOST_FILES {
        match framer.next_element() {
            Ok(Some(element)) => references.push(
                serde_json::from_slice::<Value>(&element.bytes).ok().and_then(|entry| entry["storage"]["ref"].as_str().map(str::to_owned)),
            ),
            Ok(None) => break,
            Err(error) if error.is_element_only() => references.push(None),
            Err(_) => break,
        }
    }
    references
}

/// Writes `bytes` to `path`, making its folders; a path the fuzzer made impossible (a file where
/// a folder should be) is skipped.
fn write(path: &Path, bytes: &[u8]) -> bool {
    path.parent().is_some_and(|parent| fs::create_dir_all(parent).is_ok()) && fs::write(path, bytes).is_ok()
}

fuzz_target!(|data: &[u8]| {
    let files = split_files(data, MOST_FILES);
    let folder = fresh_dir("pam-store");
    let store = files[0];
    let references = index_references(store);
    let mut conversation_files: Vec<PathBuf> = Vec::new();
    let mut position = 0;
    for file in &files[1..] {
        if find(file, b"portable-ai-memory-embeddings").is_some() {
            write(&folder.join(EMBEDDINGS_FILE), file);
            continue;
        }
        let listed = references
            .get(position)
            .and_then(|reference| reference.as_deref())
            .filter(|reference| *reference != STORE_FILE && *reference != EMBEDDINGS_FILE)
            .and_then(|reference| inside(&folder, reference));
        let path = listed.unwrap_or_else(|| folder.join("conversations").join(format!("extra-{position}.json")));
        position += 1;
        if write(&path, file) {
            conversation_files.push(path);
        }
    }
    // Last, so a conversation file the index put at the store's own name cannot replace it.
    if !write(&folder.join(STORE_FILE), store) {
        return;
    }

    match plan_store(&folder) {
        Ok(Some(plan)) => drain_plan(&plan, u64::MAX),
        Ok(None) => {}
        Err(error) => check_run_error(&error, "planning a PAM store"),
    }
    check_validation(validate_folder(&folder), &folder);

    if let Some(lone) = conversation_files.first() {
        match plan_store_file(lone) {
            Ok(Some(plan)) => drain_plan(&plan, u64::MAX),
            Ok(None) => {}
            Err(error) => check_run_error(&error, "planning a lone PAM file"),
        }
        check_validation(validate_file(lone), lone);
    }
});
