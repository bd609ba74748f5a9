//! Resolves ChatGPT asset pointers (`file-service://file-…`, `sediment://file_…`) to the files the
//! export actually contains (provider-formats.md §1.9).

use std::collections::HashMap;

use crate::sources::container::Entry;

/// Side file (2026 exports) mapping `<asset>.dat` to the original file name.
pub const ASSET_NAMES_FILE: &str = "conversation_asset_file_names.json";
/// Largest name map read into memory.
const ASSET_NAMES_LIMIT: u64 = 64 << 20;

/// Where an asset pointer leads.
#[derive(Debug, Clone)]
pub struct ResolvedAsset {
    /// The entry inside the export.
    pub entry: String,
    /// The original file name, from the name map when the entry is a bare `.dat`.
    pub original_name: Option<String>,
}

/// Asset id (`file-<base62>` or `file_<hex>`) → the export entry holding it.
#[derive(Debug, Default)]
pub struct AssetIndex {
    by_id: HashMap<String, ResolvedAsset>,
}

impl AssetIndex {
    /// Indexes every `file-…`/`file_…` entry of an export, with original names where the 2026
    /// name map gives them. Entries are visited in sorted order, so the first match is stable.
    pub fn build(entries: &[Entry], names: &HashMap<String, String>) -> AssetIndex {
        let mut by_id = HashMap::new();
        for entry in entries {
            let base = entry.base_name();
            let Some(id) = asset_id(base) else { continue };
            let original_name = names.get(base).cloned();
            by_id.entry(id.to_owned()).or_insert(ResolvedAsset { entry: entry.name.clone(), original_name });
        }
        AssetIndex { by_id }
    }

    /// Reads the 2026 name map from `entries` if it is there. A broken map is a warning, not
    /// an error: assets then resolve without their original names.
    pub fn read_name_map(entries: &[Entry]) -> (HashMap<String, String>, Option<String>) {
        let Some(entry) = entries.iter().find(|entry| entry.base_name() == ASSET_NAMES_FILE) else {
            return (HashMap::new(), None);
        };
        let bytes = match entry.read_small(ASSET_NAMES_LIMIT) {
            Ok(bytes) => bytes,
            Err(error) => return (HashMap::new(), Some(error.to_string())),
        };
        match serde_json::from_slice::<HashMap<String, String>>(&bytes) {
            Ok(map) => (map, None),
            Err(error) => (HashMap::new(), Some(format!("{}: {error}", entry.display))),
        }
    }

    /// Number of assets the export holds.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether the export holds no assets.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Finds the entry for `pointer`, or `None` when the export does not include it.
    pub fn resolve(&self, pointer: &str) -> Option<&ResolvedAsset> {
        let after_scheme = pointer.split_once("://").map_or(pointer, |(_, rest)| rest);
        let id = asset_id(after_scheme)?;
        self.by_id.get(id)
    }
}

/// The asset id at the start of a file name or pointer: `file-` or `file_` and the
/// alphanumeric run after it (`file-AbC123-photo.png` → `file-AbC123`).
fn asset_id(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("file-").or_else(|| name.strip_prefix("file_"))?;
    let length = rest.bytes().take_while(u8::is_ascii_alphanumeric).count();
    (length > 0).then(|| &name[..5 + length])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_names_and_pointers() {
        assert_eq!(asset_id("file-2FpNxGeVpeaqw7vxrHAuoM-image.png"), Some("file-2FpNxGeVpeaqw7vxrHAuoM"));
        assert_eq!(asset_id("file_00000000254c8211bf177fce3a5f3535.dat"), Some("file_00000000254c8211bf177fce3a5f3535"));
        assert_eq!(asset_id("file-"), None);
        assert_eq!(asset_id("chat.html"), None);
    }
}
