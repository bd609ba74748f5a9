//! `embeddings.json` of a merge, when either store has one: entries upserted by id (the base's
//! in their order, the delta's new ones after them), written as the PAM sink writes the file.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::error::RunError;
use crate::jcs::to_canonical_vec;
use crate::spec::pam::EMBEDDINGS_FILE;

use super::malformed;

/// The entries of `store`'s `embeddings.json`, or `None` when it has none.
fn read(store: &Path) -> Result<Option<Vec<Value>>, RunError> {
    let path = store.join(EMBEDDINGS_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(RunError::read(path.display().to_string(), error)),
    };
    let root: Value = serde_json::from_slice(&bytes).map_err(|error| malformed(store, format!("embeddings.json is not JSON: {error}")))?;
    match root {
        Value::Object(mut members) => match members.remove("embeddings") {
            Some(Value::Array(entries)) => Ok(Some(entries)),
            _ => Err(malformed(store, "embeddings.json has no embeddings array".to_owned())),
        },
        _ => Err(malformed(store, "embeddings.json is not a JSON object".to_owned())),
    }
}

/// Writes the merged `embeddings.json` into `built` when BASE or DELTA has one with entries;
/// returns whether it did.
///
/// # Errors
/// Malformed files, and I/O errors.
pub(super) fn merge(base: &Path, delta: &Path, built: &Path) -> Result<bool, RunError> {
    let (base_entries, delta_entries) = (read(base)?, read(delta)?);
    if base_entries.is_none() && delta_entries.is_none() {
        return Ok(false);
    }
    let mut entries = base_entries.unwrap_or_default();
    let mut positions: HashMap<String, usize> = HashMap::with_capacity(entries.len());
    for (position, entry) in entries.iter().enumerate() {
        if let Some(id) = entry.get("id").and_then(Value::as_str) {
            positions.entry(id.to_owned()).or_insert(position);
        }
    }
    for entry in delta_entries.unwrap_or_default() {
        let id = entry.get("id").and_then(Value::as_str).map(str::to_owned);
        let existing = id.as_ref().and_then(|id| positions.get(id).copied());
        match existing {
            Some(position) => entries[position] = entry,
            None => {
                if let Some(id) = id {
                    positions.insert(id, entries.len());
                }
                entries.push(entry);
            }
        }
    }
    if entries.is_empty() {
        return Ok(false);
    }
    let mut out = b"{\"schema\":\"portable-ai-memory-embeddings\",\"schema_version\":\"1.0\",\"embeddings\":[".to_vec();
    for (position, entry) in entries.iter().enumerate() {
        out.extend_from_slice(if position == 0 { b"\n" } else { b",\n" });
        out.extend_from_slice(&to_canonical_vec(entry));
    }
    out.extend_from_slice(b"\n]}\n");
    let path = built.join(EMBEDDINGS_FILE);
    std::fs::write(&path, out).map_err(|error| RunError::write(path.display().to_string(), error))?;
    Ok(true)
}
