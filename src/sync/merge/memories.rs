//! Memories and relations of a merge (PAM §16): memories upserted by id and never deleted,
//! relations unioned by id, a delta's `supersedes` relations marking what they supersede; then
//! written and hashed exactly as the PAM sink writes and hashes them (canonical JSON sorted by
//! id, SHA-256 over `[m1,m2,…]`).

use std::collections::{BTreeMap, HashSet};
use std::io::{self, Write};
use std::path::Path;

use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::error::RunError;
use crate::jcs::to_canonical_vec;

use super::{MemoryCounts, malformed};

/// The merged memories and relations, each by id (code point order, as the sink sorts them).
#[derive(Debug, Default)]
pub(super) struct MergedMemories {
    /// Memory objects by `id`.
    pub(super) memories: BTreeMap<String, Value>,
    /// Relation objects by `id`.
    pub(super) relations: BTreeMap<String, Value>,
}

/// One store's memories and relations, as read.
pub(super) struct Side<'a> {
    /// The store folder, for messages.
    pub(super) folder: &'a Path,
    /// Its `memories` items.
    pub(super) memories: Vec<Box<RawValue>>,
    /// Its `relations` items.
    pub(super) relations: Vec<Box<RawValue>>,
}

/// Parses the objects of one array member, each with its `id`; a problem names the member and
/// the position.
fn objects(items: Vec<Box<RawValue>>, member: &str) -> Result<Vec<(String, Value)>, String> {
    let mut objects = Vec::with_capacity(items.len());
    for (position, item) in items.into_iter().enumerate() {
        let value: Value = serde_json::from_str(item.get()).map_err(|error| format!("{member}/{position}: {error}"))?;
        let Some(id) = value.get("id").and_then(Value::as_str).map(str::to_owned) else {
            return Err(format!("{member}/{position} is not an object with a string id"));
        };
        objects.push((id, value));
    }
    Ok(objects)
}

/// The error of a malformed member of `folder`'s store.
fn malformed_member(folder: &Path, problem: &str) -> RunError {
    malformed(folder, format!("memory-store.json: {problem}"))
}

/// Merges `base` and `delta`: see the module docs.
///
/// # Errors
/// [`crate::error::ConfigError::Input`] naming the store with a memory or relation that is not
/// an object with a string id.
pub(super) fn merge(
    base: Side<'_>,
    delta: Side<'_>,
    counts: &mut MemoryCounts,
    warnings: &mut Vec<String>,
) -> Result<MergedMemories, RunError> {
    let mut merged = MergedMemories::default();
    for (id, memory) in objects(base.memories, "memories").map_err(|problem| malformed_member(base.folder, &problem))? {
        if merged.memories.contains_key(&id) {
            // The sink keeps the first of an id too.
            warnings.push(format!("BASE holds memory {id} twice; the first is kept"));
            continue;
        }
        merged.memories.insert(id, memory);
    }
    for (id, relation) in objects(base.relations, "relations").map_err(|problem| malformed_member(base.folder, &problem))? {
        merged.relations.entry(id).or_insert(relation);
    }

    let mut seen = HashSet::new();
    for (id, memory) in objects(delta.memories, "memories").map_err(|problem| malformed_member(delta.folder, &problem))? {
        if !seen.insert(id.clone()) {
            warnings.push(format!("DELTA holds memory {id} twice; the first is applied"));
            continue;
        }
        let retracted = memory.get("status").and_then(Value::as_str) == Some("retracted");
        let replaced = merged.memories.insert(id, memory).is_some();
        match (retracted, replaced) {
            (true, _) => counts.retracted += 1,
            (false, true) => counts.updated += 1,
            (false, false) => counts.inserted += 1,
        }
    }
    let mut supersessions = Vec::new();
    for (id, relation) in objects(delta.relations, "relations").map_err(|problem| malformed_member(delta.folder, &problem))? {
        if relation.get("type").and_then(Value::as_str) == Some("supersedes")
            && let (Some(from), Some(to)) = (relation.get("from").and_then(Value::as_str), relation.get("to").and_then(Value::as_str))
        {
            supersessions.push((id.clone(), from.to_owned(), to.to_owned()));
        }
        merged.relations.insert(id, relation);
    }
    for (relation, newer, older) in supersessions {
        supersede(&mut merged.memories, &relation, &newer, &older, counts, warnings);
    }
    Ok(merged)
}

/// Marks memory `older` superseded by `newer` (relation `relation` says so), unless it is
/// retracted or marked so already.
fn supersede(
    memories: &mut BTreeMap<String, Value>,
    relation: &str,
    newer: &str,
    older: &str,
    counts: &mut MemoryCounts,
    warnings: &mut Vec<String>,
) {
    let Some(Value::Object(memory)) = memories.get_mut(older) else {
        warnings.push(format!("relation {relation}: {newer} supersedes {older}, which neither store holds"));
        return;
    };
    let status = memory.get("status").and_then(Value::as_str);
    if status == Some("retracted") {
        return;
    }
    let marked = memory.get("temporal").and_then(|temporal| temporal.get("superseded_by")).and_then(Value::as_str) == Some(newer);
    if status == Some("superseded") && marked {
        return;
    }
    memory.insert("status".to_owned(), Value::from("superseded"));
    match memory.get_mut("temporal") {
        Some(Value::Object(temporal)) => {
            temporal.insert("superseded_by".to_owned(), Value::from(newer));
        }
        _ => warnings.push(format!("memory {older} has no temporal block, so its superseded_by ({newer}) could not be set")),
    }
    counts.superseded += 1;
}

/// `integrity.checksum`'s digest and `total_memories` of `memories`, as the PAM sink computes
/// them: SHA-256 over `[`, the canonical memories sorted by id joined by `,`, `]`.
pub(super) fn integrity(memories: &BTreeMap<String, Value>) -> ([u8; 32], u64) {
    let mut checksum = Sha256::new();
    checksum.update(b"[");
    for (position, memory) in memories.values().enumerate() {
        if position > 0 {
            checksum.update(b",");
        }
        checksum.update(to_canonical_vec(memory));
    }
    checksum.update(b"]");
    let digest: [u8; 32] = checksum.finalize().into();
    (digest, memories.len() as u64)
}

/// Writes `values` (in their map's order) as the sink writes memories and relations: `[`, each
/// canonical object on a line of its own, `]`.
pub(super) fn write_canonical_lines(out: &mut impl Write, values: &BTreeMap<String, Value>) -> io::Result<()> {
    out.write_all(b"[")?;
    for (position, value) in values.values().enumerate() {
        out.write_all(if position == 0 { b"\n" } else { b",\n" })?;
        out.write_all(&to_canonical_vec(value))?;
    }
    out.write_all(b"]")
}

/// The `integrity` member's value, as the sink writes it.
pub(super) fn integrity_block(digest: &[u8; 32], total: u64) -> Vec<u8> {
    let mut block = Vec::with_capacity(128);
    block.extend_from_slice(b"{\"canonicalization\":\"RFC8785\",\"checksum\":");
    crate::jcs::write_string(&mut block, &crate::hash::sha256_label(digest));
    block.extend_from_slice(format!(",\"total_memories\":{total}}}").as_bytes());
    block
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn items(values: &[Value]) -> Vec<Box<RawValue>> {
        values.iter().map(|value| serde_json::value::to_raw_value(value).unwrap()).collect()
    }

    fn memory(id: &str, content: &str, status: &str) -> Value {
        json!({"id": id, "type": "fact", "content": content, "status": status, "temporal": {"created_at": "2026-01-01T00:00:00Z"}})
    }

    fn supersedes(from: &str, to: &str) -> Value {
        json!({"id": format!("rel-{from}-supersedes-{to}"), "from": from, "to": to, "type": "supersedes", "created_at": "2026-02-01T00:00:00Z"})
    }

    #[test]
    fn memories_are_upserted_by_id_never_deleted_and_superseded_by_the_deltas_relations() {
        let base = Side {
            folder: Path::new("base"),
            memories: items(&[
                memory("a", "lives in Paris", "active"),
                memory("b", "likes tea", "active"),
                memory("c", "has a cat", "active"),
            ]),
            relations: items(&[json!({"id": "r0", "from": "b", "to": "c", "type": "related_to", "created_at": "2026-01-01T00:00:00Z"})]),
        };
        let delta = Side {
            folder: Path::new("delta"),
            memories: items(&[
                memory("b", "likes green tea", "active"),
                memory("c", "has a cat", "retracted"),
                memory("d", "lives in Leeds", "active"),
            ]),
            relations: items(&[supersedes("d", "a"), supersedes("d", "c"), supersedes("d", "gone")]),
        };
        let (mut counts, mut warnings) = (MemoryCounts::default(), Vec::new());
        let merged = merge(base, delta, &mut counts, &mut warnings).unwrap();
        assert_eq!(merged.memories.keys().map(String::as_str).collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        assert_eq!(merged.memories["b"]["content"], "likes green tea");
        assert_eq!(merged.memories["a"]["status"], "superseded");
        assert_eq!(merged.memories["a"]["temporal"]["superseded_by"], "d");
        assert_eq!(merged.memories["c"]["status"], "retracted", "a retracted memory stays retracted, and stays");
        assert_eq!(merged.relations.len(), 4);
        assert_eq!(counts, MemoryCounts { inserted: 1, updated: 1, retracted: 1, superseded: 1, ..MemoryCounts::default() });
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("gone"), "{warnings:?}");
    }

    #[test]
    fn a_supersession_the_delta_already_carries_is_not_counted_again() {
        let mut older = memory("a", "lives in Paris", "superseded");
        older["temporal"]["superseded_by"] = json!("d");
        let base = Side { folder: Path::new("base"), memories: items(&[memory("a", "lives in Paris", "active")]), relations: Vec::new() };
        let delta = Side {
            folder: Path::new("delta"),
            memories: items(&[older, memory("d", "lives in Leeds", "active")]),
            relations: items(&[supersedes("d", "a")]),
        };
        let (mut counts, mut warnings) = (MemoryCounts::default(), Vec::new());
        let merged = merge(base, delta, &mut counts, &mut warnings).unwrap();
        assert_eq!(merged.memories["a"]["status"], "superseded");
        assert_eq!(counts, MemoryCounts { inserted: 1, updated: 1, ..MemoryCounts::default() });
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn the_checksum_is_the_sinks_over_the_canonical_memories_sorted_by_id() {
        let mut memories = BTreeMap::new();
        memories.insert("b".to_owned(), json!({"id": "b", "v": 1.0}));
        memories.insert("a".to_owned(), json!({"v": 0.5, "id": "a"}));
        let (digest, total) = integrity(&memories);
        assert_eq!(total, 2);
        assert_eq!(digest, crate::hash::sha256(br#"[{"id":"a","v":0.5},{"id":"b","v":1}]"#));
        let mut out = Vec::new();
        write_canonical_lines(&mut out, &memories).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "[\n{\"id\":\"a\",\"v\":0.5},\n{\"id\":\"b\",\"v\":1}]");
    }

    #[test]
    fn a_memory_without_an_id_is_refused_with_where_it_is() {
        let base = Side { folder: Path::new("base"), memories: items(&[json!({"content": "x"})]), relations: Vec::new() };
        let delta = Side { folder: Path::new("delta"), memories: Vec::new(), relations: Vec::new() };
        let error = merge(base, delta, &mut MemoryCounts::default(), &mut Vec::new()).unwrap_err().to_string();
        assert_eq!(error, "input base: memory-store.json: memories/0 is not an object with a string id");
    }
}
