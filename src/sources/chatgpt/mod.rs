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
use std::io::Read;
use std::path::Path;
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
/// Differences are warnings: the files present are read either way. A listed shard that is in
/// the export but did not look like conversations (empty, UTF-16, cut before its first
/// conversation) joins `conversation_entries`, with a note saying what is wrong with it: read,
/// it is reported as the input problem it is, where leaving it out made the run end well and
/// say only that the manifest lists a file "not in the export".
pub fn check_manifest(all_entries: &[Entry], conversation_entries: &mut Vec<Entry>, warnings: &mut Warnings, notes: &mut Vec<String>) {
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
    let mut unrecognized = Vec::new();
    for missing in listed.difference(&present) {
        let in_export: Vec<&Entry> = all_entries.iter().filter(|entry| entry.base_name() == *missing).collect();
        if in_export.is_empty() {
            warnings.add("manifest_shard_missing");
            notes.push(format!(
                "{}: lists {missing}, which is not in the export; conversations in it cannot be read",
                manifest_entry.display
            ));
        }
        for entry in in_export {
            let (warning, problem) = shard_problem(entry);
            warnings.add(warning);
            notes.push(format!("{}: {problem} (listed in {})", entry.display, manifest_entry.display));
            unrecognized.push(entry.clone());
        }
    }
    for extra in present.difference(&listed) {
        warnings.add("shard_not_in_manifest");
        notes.push(format!("{}: does not list {extra}; it is read anyway", manifest_entry.display));
    }
    conversation_entries.extend(unrecognized);
}

/// Bytes of a listed shard looked at to say why it did not look like conversations.
const SHARD_HEAD: u64 = 64 << 10;

/// Why a shard the manifest lists did not look like conversations: a warning kind and a
/// sentence for people.
fn shard_problem(entry: &Entry) -> (&'static str, String) {
    let mut head = Vec::new();
    let read = entry.open().is_ok_and(|reader| reader.take(SHARD_HEAD).read_to_end(&mut head).is_ok());
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    if read && entry.size <= SHARD_HEAD && text.iter().all(u8::is_ascii_whitespace) {
        let size = if entry.size == 0 { "0 bytes" } else { "white space only" };
        return (
            "manifest_shard_empty",
            format!("is empty ({size}); the conversations it should hold are not in the export — download it again"),
        );
    }
    if let Some(advice) = crate::validate::input_file::utf16_problem(&head) {
        return ("manifest_shard_utf16", format!("{advice}; the conversations in it cannot be read until then"));
    }
    (
        "manifest_shard_unrecognized",
        "does not start like an array of ChatGPT conversations; it is read as one, and what cannot be read is reported".to_owned(),
    )
}

/// Plans a ChatGPT export: its conversation files in order (one array, or the 2026 shards), the
/// asset index of the files beside them, and the manifest check of a sharded export.
pub fn plan(plan: &mut InputPlan, container: &Container, entries: &[Entry], mut conversation_files: Vec<Entry>) {
    if !matches!(container, Container::File(_)) {
        // Before sorting: a listed shard it adds is read in its place.
        check_manifest(entries, &mut conversation_files, &mut plan.warnings, &mut plan.notes);
    }
    sort_conversation_entries(&mut conversation_files);
    // A conversations file given alone may sit in any folder (Downloads, a home folder): its
    // assets are looked for among the files under that folder by name only, without opening
    // any of them or the zips among them, which are no part of the export.
    let sibling_entries = match container {
        Container::File(file) => {
            let parent = file.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Container::files_under(parent)
        }
        _ => entries.to_vec(),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the manifest check on a folder holding `conversations-000.json` (sniffed as
    /// conversations), `conversations-001.json` with `second` unless it is `None`, and a
    /// manifest listing both; returns the shards to read, the warnings and the notes.
    fn check(second: Option<&[u8]>) -> (Vec<String>, Warnings, Vec<String>) {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("conversations-000.json"), b"[{\"mapping\":{}}]").unwrap();
        if let Some(second) = second {
            std::fs::write(folder.path().join("conversations-001.json"), second).unwrap();
        }
        let manifest = br#"{"export_files":[{"path":"conversations-000.json"},{"path":"conversations-001.json"}]}"#;
        std::fs::write(folder.path().join("export_manifest.json"), manifest).unwrap();
        let entries = Container::Folder(folder.path().to_owned()).entries().unwrap();
        let mut shards: Vec<Entry> = entries.iter().filter(|entry| entry.base_name() == "conversations-000.json").cloned().collect();
        let (mut warnings, mut notes) = (Warnings::default(), Vec::new());
        check_manifest(&entries, &mut shards, &mut warnings, &mut notes);
        (shards.iter().map(|entry| entry.base_name().to_owned()).collect(), warnings, notes)
    }

    /// Guards the shards of a 2026 export: one that is empty or UTF-16 sniffs as nothing, and
    /// the run ended well saying only that the manifest lists a file "not in the export". It is
    /// read (and reported as the input problem it is), with a note that says what is wrong.
    #[test]
    fn a_listed_shard_that_is_empty_or_utf16_is_read_and_named_for_what_it_is() {
        let (shards, warnings, notes) = check(Some(&b""[..]));
        assert_eq!(shards, ["conversations-000.json", "conversations-001.json"]);
        assert_eq!(warnings.0.keys().collect::<Vec<_>>(), ["manifest_shard_empty"]);
        assert!(notes.len() == 1 && notes[0].contains("conversations-001.json: is empty (0 bytes)"), "{notes:?}");

        let utf16: Vec<u8> = "\u{feff}[{\"mapping\":{}}]".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let (shards, warnings, notes) = check(Some(&utf16[..]));
        assert_eq!(shards, ["conversations-000.json", "conversations-001.json"]);
        assert_eq!(warnings.0.keys().collect::<Vec<_>>(), ["manifest_shard_utf16"]);
        assert!(notes.len() == 1 && notes[0].contains("conversations-001.json: this file is UTF-16"), "{notes:?}");

        // A shard that is really not there is still said to be missing.
        let (shards, warnings, notes) = check(None);
        assert_eq!(shards, ["conversations-000.json"]);
        assert_eq!(warnings.0.keys().collect::<Vec<_>>(), ["manifest_shard_missing"]);
        assert!(notes[0].contains("lists conversations-001.json, which is not in the export"), "{notes:?}");
    }
}
