//! Delivery manifests: since September 2026 Claude's export email links a JSON manifest that
//! lists several downloads (`conversations-000.zip`, `projects-000.zip`, `users.json`,
//! `memories.json`). Given the manifest as input, memport reads the listed files that sit
//! beside it. The manifest's exact shape is not published, so any string that ends in a file
//! name of the export (a URL or a bare name) counts as listed.

use serde_json::Value;

use crate::sources::container::Entry;

/// Largest manifest read.
const MANIFEST_LIMIT: u64 = 4 << 20;

/// The file names a manifest lists, or `None` when `entry` is not a manifest: a JSON object
/// naming at least one `conversations-NNN.zip` or `conversations.json`.
pub fn listed_files(entry: &Entry) -> Option<Vec<String>> {
    if !entry.base_name().to_ascii_lowercase().ends_with(".json") || entry.size > MANIFEST_LIMIT {
        return None;
    }
    let bytes = entry.read_small(MANIFEST_LIMIT).ok()?;
    let value: Value = serde_json::from_slice(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes)).ok()?;
    if !value.is_object() {
        return None;
    }
    let mut names = Vec::new();
    collect_names(&value, &mut names);
    names.sort();
    names.dedup();
    names.iter().any(|name| name.starts_with("conversations")).then_some(names)
}

fn collect_names(value: &Value, names: &mut Vec<String>) {
    match value {
        Value::String(text) => {
            // A URL's last path segment, without its query.
            let path = text.split(['?', '#']).next().unwrap_or(text);
            let name = path.rsplit('/').next().unwrap_or(path);
            let lower = name.to_ascii_lowercase();
            if (lower.ends_with(".zip") || lower.ends_with(".json")) && !name.contains(char::is_whitespace) {
                names.push(name.to_owned());
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_names(item, names)),
        Value::Object(members) => members.values().for_each(|member| collect_names(member, names)),
        _ => {}
    }
}

/// The entries of the manifest's folder that belong to a listed file (the file itself, or an
/// entry of a listed zip), and the listed names that are not there.
pub fn select(beside: &[Entry], listed: &[String]) -> (Vec<Entry>, Vec<String>) {
    let top_name = |entry: &Entry| entry.name.split('/').next().unwrap_or(&entry.name).to_owned();
    let present: Vec<Entry> = beside.iter().filter(|entry| listed.contains(&top_name(entry))).cloned().collect();
    let missing = listed.iter().filter(|name| !present.iter().any(|entry| top_name(entry) == **name)).cloned().collect();
    (present, missing)
}
