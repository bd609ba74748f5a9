//! ChatGPT data exports (provider-formats.md §1): the zip, the unzipped folder, a bare
//! `conversations.json`, or the 2026 `conversations-NNN.json` shards.
//!
//! This module finds the conversation files of an export and checks them against
//! `export_manifest.json`; [`normalize`] decodes each conversation. PII-only side files
//! (`user.json`, `ads.json`, `model_comparisons.json`) are never opened.

pub mod assets;
pub mod normalize;
pub mod raw;
pub mod render;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::Deserialize;

use crate::model::{Origin, Warnings};
use crate::sources::container::{Container, Entry};
use crate::sources::contract::{DecodeOptions, Decoded, Decoder, Framing, InputPlan, RecordReject, Stream};

/// Inventory file of 2026 exports (`export_manifest.json`).
pub const MANIFEST_STEM: &str = "export_manifest";
/// Largest manifest read into memory.
const MANIFEST_LIMIT: u64 = 64 << 20;

/// Whether a file name looks like a conversation file (`conversations.json`, a shard
/// `conversations-000.json`, or a renamed copy such as `conversations.subset.json`).
/// Content decides in the end; the name only picks candidates inside a folder or zip.
pub fn is_conversation_file_name(base_name: &str) -> bool {
    base_name.starts_with("conversations") && base_name.ends_with(".json")
}

/// Orders conversation files: a plain `conversations.json` first, then shards by number.
pub fn sort_conversation_entries(entries: &mut [Entry]) {
    entries.sort_by(|left, right| shard_key(left.base_name()).cmp(&shard_key(right.base_name())).then_with(|| left.name.cmp(&right.name)));
}

fn shard_key(base_name: &str) -> (u64, String) {
    let digits: String = base_name
        .trim_start_matches("conversations")
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    (digits.parse().map(|number: u64| number + 1).unwrap_or(0), base_name.to_owned())
}

#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    export_files: Vec<ManifestFile>,
}

#[derive(Deserialize)]
struct ManifestFile {
    path: String,
}

/// Cross-checks the shards found against `export_manifest.json` when the export has one.
/// Differences are warnings: the files present are read either way.
pub fn check_manifest(all_entries: &[Entry], conversation_entries: &[Entry], warnings: &mut Warnings, notes: &mut Vec<String>) {
    // `export_manifest.json`, or a renamed copy such as `export_manifest.excerpt.json`.
    let is_manifest = |entry: &&Entry| entry.base_name().starts_with(MANIFEST_STEM) && entry.base_name().ends_with(".json");
    let Some(manifest_entry) = all_entries.iter().find(is_manifest) else {
        return;
    };
    let manifest: Manifest = match manifest_entry
        .read_small(MANIFEST_LIMIT)
        .map_err(|error| error.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|error| error.to_string()))
    {
        Ok(manifest) => manifest,
        Err(error) => {
            warnings.add("manifest_unreadable");
            notes.push(format!("{}: cannot read the manifest ({error}); shards were found by name only", manifest_entry.display));
            return;
        }
    };
    let listed: BTreeSet<&str> = manifest
        .export_files
        .iter()
        .map(|file| file.path.rsplit('/').next().unwrap_or(&file.path))
        .filter(|name| is_conversation_file_name(name))
        .collect();
    let present: BTreeSet<&str> = conversation_entries.iter().map(Entry::base_name).collect();
    for missing in listed.difference(&present) {
        warnings.add("manifest_shard_missing");
        notes.push(format!("{}: lists {missing}, which is not in the export; conversations in it cannot be read", manifest_entry.display));
    }
    for extra in present.difference(&listed) {
        warnings.add("shard_not_in_manifest");
        notes.push(format!("{}: does not list {extra}; it is read anyway", manifest_entry.display));
    }
}

/// Plans a ChatGPT export: its conversation files in order (one array, or the 2026 shards), the
/// asset index of the files beside them, and the manifest check of a sharded export.
pub fn plan(plan: &mut InputPlan, container: &Container, entries: &[Entry], mut conversation_files: Vec<Entry>) {
    sort_conversation_entries(&mut conversation_files);
    let sibling_entries = match container {
        Container::File(file) => match file.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            Some(parent) => Container::Folder(parent.to_owned()).entries().unwrap_or_default(),
            None => Container::Folder(".".into()).entries().unwrap_or_default(),
        },
        _ => entries.to_vec(),
    };
    if !matches!(container, Container::File(_)) {
        check_manifest(entries, &conversation_files, &mut plan.warnings, &mut plan.notes);
    }
    let (names, name_map_problem) = assets::AssetIndex::read_name_map(&sibling_entries);
    if let Some(problem) = name_map_problem {
        plan.warnings.add("asset_name_map_unreadable");
        plan.notes.push(problem);
    }
    let assets = assets::AssetIndex::build(&sibling_entries, &names);
    let sharded = conversation_files.iter().any(|entry| entry.base_name().starts_with("conversations-"));
    let layout = match (container, sharded) {
        (Container::Zip(_), true) => "zip, 2026 sharded conversations-NNN.json",
        (Container::Zip(_), false) => "zip, single conversations.json (2023-2025)",
        (Container::Folder(_), true) => "folder, 2026 sharded conversations-NNN.json",
        (Container::Folder(_), false) => "folder, single conversations.json (2023-2025)",
        (Container::File(_), true) => "file, one 2026 shard",
        (Container::File(_), false) => "file, conversations array",
    };
    plan.layout = layout.to_owned();
    plan.asset_count = assets.len();
    let decoder = Arc::new(ChatGptDecoder { assets }) as Arc<dyn Decoder>;
    plan.streams.extend(conversation_files.into_iter().map(|entry| Stream::new(entry, Framing::Array, decoder.clone())));
}

/// Decodes ChatGPT conversation elements, resolving their asset pointers.
struct ChatGptDecoder {
    assets: assets::AssetIndex,
}

impl Decoder for ChatGptDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let mut decoded = normalize::decode_conversation(bytes, origin, &self.assets, options)?;
        if options.keep_provider_fields {
            crate::sources::provider_fields::attach(&mut decoded.conversation, crate::sources::provider_fields::chatgpt(bytes));
        }
        Ok(decoded)
    }
}
