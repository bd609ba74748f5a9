//! Indexes a PAM store's `embeddings.json` by memory id, so each vector is read only when its
//! memory is decoded.

use std::path::Path;

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::error::RunError;
use crate::model::{Embedding, Warnings};
use crate::sources::formats::grouped::string_at;
use crate::sources::json_array::ArrayFramer;
use crate::timefmt::parse_rfc3339;

/// Where each memory's entry sits in `embeddings.json`: entries are read when their memory is,
/// so the vectors are never all in memory.
pub(super) struct EmbeddingIndex {
    file: std::fs::File,
    /// Byte offset and length of the entry, by memory id.
    entries: FxHashMap<String, (u64, usize)>,
}

impl EmbeddingIndex {
    /// Indexes the `embeddings.json` beside a store, when there is one.
    pub(super) fn beside(folder: &Path, warnings: &mut Warnings, notes: &mut Vec<String>) -> Result<Option<EmbeddingIndex>, RunError> {
        let path = folder.join(crate::spec::pam::EMBEDDINGS_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        let display = path.display().to_string();
        let open = || std::fs::File::open(&path).map_err(|error| RunError::read(&display, error));
        let mut framer = ArrayFramer::member_array(std::io::BufReader::new(open()?), "embeddings");
        let mut entries = FxHashMap::default();
        loop {
            match framer.next_element() {
                Ok(Some(element)) => match string_at(&element.bytes, &["memory_id"]) {
                    Some(memory) => {
                        entries.insert(memory, (element.offset, element.bytes.len()));
                    }
                    None => warnings.add("pam_embedding_without_memory_id"),
                },
                Ok(None) => break,
                Err(error) => {
                    warnings.add("pam_embeddings_unreadable");
                    notes.push(format!("{display}: {error}; the embeddings after it are not read"));
                    break;
                }
            }
        }
        Ok(Some(EmbeddingIndex { file: open()?, entries }))
    }

    /// Whether the file has an entry for memory `id`.
    pub(super) fn has(&self, id: &str) -> bool {
        self.entries.contains_key(id)
    }

    /// The embedding of memory `id`, when the file has a readable one.
    pub(super) fn of(&self, id: &str) -> Option<Box<Embedding>> {
        use std::os::unix::fs::FileExt;
        let &(offset, length) = self.entries.get(id)?;
        let mut bytes = vec![0; length];
        self.file.read_exact_at(&mut bytes, offset).ok()?;
        let entry: Value = serde_json::from_slice(&bytes).ok()?;
        let vector = entry["vector"].as_array().and_then(|numbers| numbers.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>());
        let dimensions = entry["dimensions"].as_u64().filter(|dimensions| *dimensions >= 1)?;
        // A vector that is not as long as it says, or an entry without its model, is not
        // carried (the validator says why).
        if vector.as_ref().is_none_or(|vector| vector.len() as u64 != dimensions) {
            return None;
        }
        Some(Box::new(Embedding {
            id: entry["id"].as_str().filter(|id| !id.is_empty()).map(str::to_owned),
            model: entry["model"].as_str().filter(|model| !model.is_empty())?.to_owned(),
            dimensions,
            vector,
            created_at: entry["created_at"].as_str().and_then(parse_rfc3339),
        }))
    }
}
