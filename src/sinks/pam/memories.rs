//! PAM memory objects (pam.md §3.1) and their order by id, which the integrity checksum needs
//! (§5): memories are kept in canonical form and sorted by a spill-to-disk merge sort, so the
//! store's memories can outgrow memory.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::hash::{pam_content_digest, sha256_label};
use crate::jcs::to_canonical_vec;
use crate::model::{MemoryRecord, Provider};
use crate::sinks::pam::conversation::IMPORTER;
use crate::timefmt::format_rfc3339;

/// The memory types of the PAM schema.
const PAM_TYPES: [&str; 11] =
    ["fact", "preference", "skill", "context", "relationship", "goal", "instruction", "identity", "environment", "project", "custom"];

/// A memory object in RFC 8785 form, keyed by its id.
#[derive(Debug)]
pub struct CanonicalMemory {
    /// The memory's `id`.
    pub id: String,
    /// Its canonical bytes: what is written and hashed.
    pub bytes: Vec<u8>,
    /// Its `embeddings.json` entry, canonical, when it has an embedding.
    pub embedding: Option<Vec<u8>>,
}

/// The PAM memory object of a provider memory, or `None` when it has no content (PAM requires
/// some). `conversation_ref` is the PAM id of the conversation it came with, if any.
pub fn encode_memory(memory: &MemoryRecord, provider: Provider, conversation_ref: Option<&str>) -> Option<CanonicalMemory> {
    if memory.text.trim().is_empty() {
        return None;
    }
    let mut provenance = json!({
        "platform": provider.as_str(),
        "extraction_method": "api_export",
        "extractor": IMPORTER,
    });
    if let Some(conversation) = conversation_ref {
        provenance["conversation_ref"] = Value::from(conversation);
    }
    let mut object = json!({
        "id": memory.id,
        // A type read from another PAM store is written as it was.
        "type": memory.format_type("pam-type").filter(|kind| PAM_TYPES.contains(kind)).unwrap_or(memory.kind.pam_type()),
        "content": memory.text,
        "content_hash": sha256_label(&pam_content_digest(&memory.text)),
        "status": "active",
        // The tag pattern is `^[a-z0-9][a-z0-9_-]*$`; labels such as `project:<id>` go to metadata.
        "tags": [memory.kind.as_str()],
        "temporal": {"created_at": format_rfc3339(memory.created_at)},
        "provenance": provenance,
    });
    if !memory.labels.is_empty() {
        object["metadata"] = json!({"labels": memory.labels});
    }
    let embedding = memory.embedding.as_deref().map(|embedding| {
        let id = embedding_id(memory, embedding);
        object["embedding_ref"] = Value::from(id.as_str());
        let mut entry = json!({
            "id": id,
            "memory_id": memory.id,
            "model": embedding.model,
            "dimensions": embedding.dimensions,
            "created_at": format_rfc3339(embedding.created_at.unwrap_or(memory.created_at)),
        });
        if let Some(vector) = &embedding.vector {
            entry["vector"] = Value::from(vector.clone());
        }
        to_canonical_vec(&entry)
    });
    Some(CanonicalMemory { id: memory.id.clone(), bytes: to_canonical_vec(&object), embedding })
}

/// The embedding's id: the one it came with, else one derived from the memory's.
fn embedding_id(memory: &MemoryRecord, embedding: &crate::model::Embedding) -> String {
    embedding.id.clone().unwrap_or_else(|| format!("emb-{}", memory.id))
}

/// Memories held in memory before a sorted run is spilled.
const RUN_BYTES: usize = 32 << 20;

/// Sorts canonical memories by id (code point order, which is UTF-8 byte order), spilling
/// sorted runs to temporary files beyond [`RUN_BYTES`]. The first memory of an id in input
/// order wins; later ones with the same id are dropped (the unique-id stage already marks them).
pub struct MemorySorter {
    folder: PathBuf,
    buffered: Vec<CanonicalMemory>,
    buffered_bytes: usize,
    runs: Vec<File>,
}

impl MemorySorter {
    /// A sorter whose runs go to `folder`.
    pub fn new(folder: &Path) -> MemorySorter {
        MemorySorter { folder: folder.to_owned(), buffered: Vec::new(), buffered_bytes: 0, runs: Vec::new() }
    }

    /// Adds one memory.
    ///
    /// # Errors
    /// I/O errors spilling a run.
    pub fn push(&mut self, memory: CanonicalMemory) -> io::Result<()> {
        self.buffered_bytes += memory.bytes.len() + memory.id.len();
        self.buffered.push(memory);
        if self.buffered_bytes >= RUN_BYTES {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        // Stable: equal ids keep input order, so the first one wins in the merge.
        self.buffered.sort_by(|left, right| left.id.cmp(&right.id));
        let mut run = BufWriter::new(tempfile::tempfile_in(&self.folder)?);
        for memory in self.buffered.drain(..) {
            write_record(&mut run, &memory)?;
        }
        let mut file = run.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.seek(SeekFrom::Start(0))?;
        self.runs.push(file);
        self.buffered_bytes = 0;
        Ok(())
    }

    /// Hands every memory to `visit` in id order and returns how many there were.
    ///
    /// # Errors
    /// I/O errors reading the runs, or what `visit` returns.
    pub fn finish(mut self, mut visit: impl FnMut(&CanonicalMemory) -> io::Result<()>) -> io::Result<u64> {
        let mut written = 0;
        let mut last_id: Option<String> = None;
        if self.runs.is_empty() {
            self.buffered.sort_by(|left, right| left.id.cmp(&right.id));
            for memory in &self.buffered {
                if last_id.as_deref() != Some(memory.id.as_str()) {
                    visit(memory)?;
                    written += 1;
                    last_id = Some(memory.id.clone());
                }
            }
            return Ok(written);
        }
        if !self.buffered.is_empty() {
            self.spill()?;
        }
        let mut readers: Vec<BufReader<File>> = self.runs.into_iter().map(BufReader::new).collect();
        // (id, run) ordering: equal ids come out in run order, which is input order.
        let mut heads: Vec<Option<CanonicalMemory>> = Vec::with_capacity(readers.len());
        let mut heap = BinaryHeap::new();
        for (run, reader) in readers.iter_mut().enumerate() {
            let head = read_record(reader)?;
            if let Some(memory) = &head {
                heap.push(Reverse((memory.id.clone(), run)));
            }
            heads.push(head);
        }
        while let Some(Reverse((_, run))) = heap.pop() {
            let Some(memory) = heads[run].take() else { continue };
            if last_id.as_deref() != Some(memory.id.as_str()) {
                visit(&memory)?;
                written += 1;
            }
            last_id = Some(memory.id);
            heads[run] = read_record(&mut readers[run])?;
            if let Some(next) = &heads[run] {
                heap.push(Reverse((next.id.clone(), run)));
            }
        }
        Ok(written)
    }
}

fn write_record(out: &mut impl Write, memory: &CanonicalMemory) -> io::Result<()> {
    out.write_all(&(memory.id.len() as u64).to_le_bytes())?;
    out.write_all(memory.id.as_bytes())?;
    out.write_all(&(memory.bytes.len() as u64).to_le_bytes())?;
    out.write_all(&memory.bytes)
}

fn read_record(input: &mut impl Read) -> io::Result<Option<CanonicalMemory>> {
    let mut length = [0u8; 8];
    match input.read_exact(&mut length) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    }
    let mut id = vec![0u8; usize::try_from(u64::from_le_bytes(length)).map_err(io::Error::other)?];
    input.read_exact(&mut id)?;
    input.read_exact(&mut length)?;
    let mut bytes = vec![0u8; usize::try_from(u64::from_le_bytes(length)).map_err(io::Error::other)?];
    input.read_exact(&mut bytes)?;
    let id = String::from_utf8(id).map_err(io::Error::other)?;
    Ok(Some(CanonicalMemory { id, bytes, embedding: None }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(id: &str, body: &str) -> CanonicalMemory {
        CanonicalMemory { id: id.to_owned(), bytes: body.as_bytes().to_vec(), embedding: None }
    }

    fn sorted(sorter: MemorySorter) -> Vec<String> {
        let mut seen = Vec::new();
        sorter
            .finish(|memory| {
                seen.push(format!("{}={}", memory.id, String::from_utf8_lossy(&memory.bytes)));
                Ok(())
            })
            .unwrap();
        seen
    }

    #[test]
    fn sorts_by_code_point_and_keeps_the_first_of_an_id() {
        let folder = tempfile::tempdir().unwrap();
        let mut sorter = MemorySorter::new(folder.path());
        for (id, body) in [("b", "1"), ("B", "2"), ("a", "3"), ("b", "4"), ("é", "5")] {
            sorter.push(memory(id, body)).unwrap();
        }
        assert_eq!(sorted(sorter), ["B=2", "a=3", "b=1", "é=5"]);
    }

    #[test]
    fn spilled_runs_merge_into_the_same_order() {
        let folder = tempfile::tempdir().unwrap();
        let mut in_memory = MemorySorter::new(folder.path());
        let mut spilled = MemorySorter::new(folder.path());
        for number in 0..500u32 {
            let id = format!("m{:03}", (number * 7919) % 500);
            in_memory.push(memory(&id, &number.to_string())).unwrap();
            spilled.push(memory(&id, &number.to_string())).unwrap();
            if number % 64 == 63 {
                spilled.spill().unwrap();
            }
        }
        // A repeated id across runs: the earlier run's copy wins.
        spilled.push(memory("m000", "late")).unwrap();
        assert!(spilled.runs.len() > 3);
        assert_eq!(sorted(spilled), sorted(in_memory));
    }
}
