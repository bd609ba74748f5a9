//! Maps the memories memport extracted to AIMEM records: one chunk per memory, typed by
//! extraction (DNA-class types in the `important` zone, others `standard`); an `x-derived-from`
//! edge to the message chunk of each message the user said it in; an `x-supersedes` edge to the
//! memory it replaced; and an entity record (from the memory that first names the entity) plus
//! a chunk-entity link for each entity it names. A memory whose conversations a sync retracted
//! is tagged `retracted` and has no edges to messages or memories: those are not in the
//! output. Provider memories and messages are mapped in [`records`](super::records).

use std::collections::BTreeSet;

use crate::jcs::write_string;
use crate::model::MemoryRecord;
use crate::model::extracted::{EntityRef, Extracted, confidence_decimal};
use crate::sinks::aimem::Framing;
use crate::sinks::aimem::records::{
    EdgeKind, NDJSON_CHUNK_PREFIX, RecordBuffers, TEMPORAL, chunk_urn, memory_urn, piece_id, push_edge, split_content, tag_for,
    write_chunk_head, write_chunk_tail,
};
use crate::timefmt::push_rfc3339_bytes;

/// From a memory to a message it was said in (an extension type: the draft has no provenance
/// edge).
const DERIVED_FROM: EdgeKind = EdgeKind { edge_type: "x-derived-from", weight: 1.0 };
/// From a memory to the one it replaced.
const SUPERSEDES: EdgeKind = EdgeKind { edge_type: "x-supersedes", weight: 1.0 };
/// Longest entity id kept as it is in an entity URN (the URN's local part is at most 256).
const MAX_PLAIN_ENTITY_ID: usize = 240;

/// Appends the chunk of an extracted memory (split like a long message if it must be), its
/// edges, and its entity records and links to `out`. `provider` is the provider of the
/// conversation that carries it.
pub(super) fn map_extracted(
    memory: &MemoryRecord,
    extracted: &Extracted,
    provider: &str,
    producer: &str,
    framing: Framing,
    out: &mut RecordBuffers,
) {
    // The first piece has the memory's URN: edges and links start there.
    let memory_chunk = memory_urn(producer, provider, &memory.id);
    let memory_type = extracted.memory_type;
    // DNA-class memories must never decay silently; the zone says they matter more than turns.
    let zone = if memory_type.is_dna_class() { "important" } else { "standard" };
    let tags = tags_of(extracted, provider);
    let mut base_id = memory_chunk.clone();
    let pieces = split_content(&memory.text);
    let piece_count = pieces.len();
    let mut previous: Option<String> = None;
    for (piece_index, piece) in pieces.into_iter().enumerate() {
        let chunk_id = piece_id(&mut base_id, piece_index, piece_count);
        let open: &[u8] = match framing {
            Framing::Bundle => {
                out.chunks.push(b',');
                b"{"
            }
            Framing::Ndjson => NDJSON_CHUNK_PREFIX,
        };
        write_chunk_head(&mut out.chunks, open, piece, &chunk_id, extracted.first_seen, memory_type.aimem_type());
        for (index, tag) in tags.iter().enumerate() {
            if index > 0 {
                out.chunks.push(b',');
            }
            write_string(&mut out.chunks, tag);
        }
        write_chunk_tail(&mut out.chunks, piece_index, piece_count, zone);
        if framing == Framing::Ndjson {
            out.chunks.push(b'\n');
        }
        out.chunk_ends.push(out.chunks.len());
        if let Some(source) = &previous {
            push_edge(out, framing, TEMPORAL, source, &chunk_id, extracted.first_seen);
        }
        previous = Some(chunk_id);
    }
    // A retracted memory's messages were in conversations a sync retracted, so their chunks
    // are not in this output (nor is the memory it replaced, written by an earlier run): no
    // edge could find its target.
    if extracted.retracted {
        map_entities(&memory_chunk, &extracted.entities, producer, out);
        return;
    }
    // One edge per message, however often the user said it there: the first time counts.
    let mut linked_messages = BTreeSet::new();
    for evidence in &extracted.evidence {
        let message_chunk = chunk_urn(producer, evidence.provider.as_str(), &evidence.conversation_id, &evidence.message_id);
        if !linked_messages.contains(&message_chunk) {
            push_edge(out, framing, DERIVED_FROM, &memory_chunk, &message_chunk, evidence.time);
            linked_messages.insert(message_chunk);
        }
    }
    // The memory it replaced is written in the same run, so its chunk is in the output.
    if let Some(superseded) = &extracted.supersedes {
        let superseded_chunk = memory_urn(producer, provider, superseded);
        push_edge(out, framing, SUPERSEDES, &memory_chunk, &superseded_chunk, extracted.first_seen);
    }
    map_entities(&memory_chunk, &extracted.entities, producer, out);
}

/// The memory's tags: `extracted`, its memport type, slot, confidence, language and source, and
/// `personal`, `superseded` and `retracted` where they apply. AIMEM has no place for slot or
/// confidence: as tags they come back when memport reads the bundle.
fn tags_of(extracted: &Extracted, provider: &str) -> Vec<String> {
    let mut tags = vec![
        "extracted".to_owned(),
        tag_for("type-", extracted.memory_type.as_str()),
        tag_for("slot-", extracted.slot),
        format!("confidence-{}", confidence_decimal(extracted.confidence)),
        tag_for("lang-", extracted.language),
        // As on the message chunks, so a reader finds the provider the same way.
        format!("src-{provider}"),
    ];
    // A contact detail the user asked to keep: AIMEM has no export flag, so a tag says it.
    if extracted.personal {
        tags.push("personal".to_owned());
    }
    if extracted.superseded_by.is_some() {
        tags.push("superseded".to_owned());
    }
    // Every conversation it was said in was retracted by a sync: AIMEM has no deletion, so a
    // tag says it.
    if extracted.retracted {
        tags.push("retracted".to_owned());
    }
    tags
}

/// Appends the entity records this memory is the first to name and one link from its chunk to
/// each entity it names.
fn map_entities(memory_chunk: &str, entities: &[EntityRef], producer: &str, out: &mut RecordBuffers) {
    let mut linked: Vec<&str> = Vec::with_capacity(entities.len());
    for entity in entities {
        // An entity without a name could not be written, so nothing may link to it.
        if entity.name.is_empty() || linked.contains(&entity.id.as_str()) {
            continue;
        }
        linked.push(&entity.id);
        let entity_id = entity_urn(producer, &entity.id);
        if entities.iter().any(|named| named.id == entity.id && named.first_mention) {
            out.entities.push(entity_record(&entity_id, entity));
        }
        out.chunk_entities.push(chunk_entity_record(memory_chunk, &entity_id));
    }
}

/// `urn:aimem:<producer>:entity.<id>`, or with a hash of the id when it holds characters a
/// URN's local part must not, or is too long.
pub(super) fn entity_urn(producer: &str, entity_id: &str) -> String {
    let is_safe = !entity_id.is_empty()
        && entity_id.len() <= MAX_PLAIN_ENTITY_ID
        && entity_id.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'~' | b'-'));
    if is_safe {
        return format!("urn:aimem:{producer}:entity.{entity_id}");
    }
    let mut urn = format!("urn:aimem:{producer}:entity.h");
    crate::hash::push_hex(&mut urn, &crate::hash::sha256(entity_id.as_bytes())[..16]);
    urn
}

/// `{"created_at":…,"id":…,"kind":…,"name":…}`, members in canonical order.
fn entity_record(entity_id: &str, entity: &EntityRef) -> Vec<u8> {
    let mut record = Vec::with_capacity(96 + entity_id.len() + entity.name.len());
    record.extend_from_slice(b"{\"created_at\":\"");
    push_rfc3339_bytes(&mut record, entity.first_seen);
    record.extend_from_slice(b"\",\"id\":");
    write_string(&mut record, entity_id);
    record.extend_from_slice(b",\"kind\":");
    write_string(&mut record, entity.kind.as_str());
    record.extend_from_slice(b",\"name\":");
    write_string(&mut record, &entity.name);
    record.push(b'}');
    record
}

/// `{"chunk_id":…,"entity_id":…}`, members in canonical order.
fn chunk_entity_record(chunk_id: &str, entity_id: &str) -> Vec<u8> {
    let mut record = Vec::with_capacity(32 + chunk_id.len() + entity_id.len());
    record.extend_from_slice(b"{\"chunk_id\":");
    write_string(&mut record, chunk_id);
    record.extend_from_slice(b",\"entity_id\":");
    write_string(&mut record, entity_id);
    record.push(b'}');
    record
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::*;
    use crate::model::extracted::{EntityKind, Evidence, MemoryType};
    use crate::model::{MemoryKind, Origin, Provider};

    /// 2024-01-01T00:00:00Z.
    pub const FIRST_SEEN: i64 = 1_704_067_200_000_000;

    pub fn origin() -> Origin {
        Origin { file: Arc::from("test"), offset: 0, index: 0 }
    }

    pub fn entity(id: &str, name: &str, kind: EntityKind, first_mention: bool) -> EntityRef {
        EntityRef { id: id.into(), name: name.into(), kind, first_seen: FIRST_SEEN, first_mention }
    }

    /// An extracted memory said in `messages` (conversation `c1` of ChatGPT, each said at
    /// `FIRST_SEEN` plus its position in seconds).
    pub fn extracted_memory(id: &str, text: &str, memory_type: MemoryType, messages: &[&str], entities: Vec<EntityRef>) -> MemoryRecord {
        let evidence: Vec<Evidence> = messages
            .iter()
            .enumerate()
            .map(|(position, message)| Evidence {
                provider: Provider::ChatGpt,
                conversation_id: "c1".into(),
                message_id: (*message).into(),
                span: (0, text.len()),
                text: text.into(),
                time: FIRST_SEEN + position as i64 * 1_000_000,
            })
            .collect();
        let mut memory = MemoryRecord::new(Provider::ChatGpt, MemoryKind::Fact, text.into(), FIRST_SEEN, Vec::new());
        memory.id = id.into();
        memory.extracted = Some(Box::new(Extracted {
            memory_type,
            slot: "home",
            value: text.into(),
            language: "en",
            confidence: 0.9,
            evidence_count: evidence.len() as u64,
            evidence,
            first_seen: FIRST_SEEN,
            last_seen: FIRST_SEEN,
            supersedes: None,
            superseded_by: None,
            personal: false,
            entities,
            retracted: false,
        }));
        memory
    }

    fn records(memories: Vec<MemoryRecord>, framing: Framing) -> RecordBuffers {
        let mut out = RecordBuffers::default();
        for memory in &memories {
            map_extracted(memory, memory.extracted.as_ref().unwrap(), "chatgpt", "memport", framing, &mut out);
        }
        out
    }

    fn parsed(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn an_extracted_memory_is_a_typed_chunk_with_edges_to_its_messages() {
        let mut home =
            extracted_memory("mem-00000000000000000001", "Lives in Leeds", MemoryType::Identity, &["m1", "m2", "m1"], Vec::new());
        let mut old = extracted_memory("mem-00000000000000000002", "Lives in York", MemoryType::Fact, &["m0"], Vec::new());
        let details = home.extracted.as_mut().unwrap();
        details.supersedes = Some(old.id.clone());
        details.personal = true;
        old.extracted.as_mut().unwrap().superseded_by = Some(home.id.clone());
        let out = records(vec![home, old], Framing::Bundle);
        assert_eq!(out.chunk_ends.len(), 2);
        let chunk = parsed(&out.chunks[1..out.chunk_ends[0]]);
        assert_eq!(
            chunk,
            json!({
                "content": "Lives in Leeds",
                "content_hash": crate::hash::sha256_label(&crate::hash::sha256(b"Lives in Leeds")),
                "created_at": "2024-01-01T00:00:00Z",
                "id": "urn:aimem:memport:mem-00000000000000000001",
                "is_pinned": false,
                "memory_type": "identity",
                "tags": ["extracted", "type-identity", "slot-home", "confidence-0.9", "lang-en", "src-chatgpt", "personal"],
                "zone": "important",
            })
        );
        // Canonical bytes: re-serializing the parsed record gives the same bytes.
        assert_eq!(crate::jcs::to_canonical_vec(&chunk), &out.chunks[1..out.chunk_ends[0]]);
        let old_chunk = parsed(&out.chunks[out.chunk_ends[0] + 1..out.chunk_ends[1]]);
        assert_eq!(old_chunk["memory_type"], "fact");
        assert_eq!(old_chunk["zone"], "standard");
        assert_eq!(
            old_chunk["tags"],
            json!(["extracted", "type-fact", "slot-home", "confidence-0.9", "lang-en", "src-chatgpt", "superseded"])
        );
        // Two messages (m1 twice gives one edge, at its first time), the superseded memory, then
        // the old memory's message.
        let edges: Vec<Value> = serde_json::from_slice(&[b"[".as_slice(), &out.edge_lines[1..], b"]".as_slice()].concat()).unwrap();
        assert_eq!(out.edge_count, 4);
        assert_eq!(
            edges[0],
            json!({
                "created_at": "2024-01-01T00:00:00Z",
                "edge_type": "x-derived-from",
                "source_id": "urn:aimem:memport:mem-00000000000000000001",
                "target_id": "urn:aimem:memport:chatgpt.c1.m1",
                "weight": 1,
            })
        );
        assert_eq!(edges[1]["target_id"], "urn:aimem:memport:chatgpt.c1.m2");
        assert_eq!(edges[1]["created_at"], "2024-01-01T00:00:01Z");
        assert_eq!(edges[2]["edge_type"], "x-supersedes");
        assert_eq!(edges[2]["target_id"], "urn:aimem:memport:mem-00000000000000000002");
        assert_eq!(edges[3]["target_id"], "urn:aimem:memport:chatgpt.c1.m0");
    }

    #[test]
    fn ndjson_chunks_and_edges_carry_their_kind() {
        let memory = extracted_memory("mem-00000000000000000003", "Likes tea", MemoryType::Preference, &["m1"], Vec::new());
        let out = records(vec![memory], Framing::Ndjson);
        assert!(out.chunks.starts_with(NDJSON_CHUNK_PREFIX));
        assert!(out.chunks.ends_with(b"\"zone\":\"important\"}\n"));
        assert!(out.edge_lines.starts_with(crate::sinks::aimem::records::NDJSON_EDGE_PREFIX));
        assert_eq!(parsed(&out.edge_lines)["edge_type"], "x-derived-from");
    }

    #[test]
    fn entities_are_written_once_and_linked_from_every_memory_naming_them() {
        let leeds = entity("ent-0001", "Leeds", EntityKind::Place, true);
        let rex = entity("ent-0002", "Rex", EntityKind::Animal, true);
        let first = extracted_memory("mem-00000000000000000004", "Lives in Leeds", MemoryType::Identity, &["m1"], vec![leeds.clone()]);
        let later = extracted_memory(
            "mem-00000000000000000005",
            "Walks Rex in Leeds",
            MemoryType::Fact,
            &["m2"],
            vec![EntityRef { first_mention: false, ..leeds.clone() }, rex, EntityRef { first_mention: false, ..leeds }],
        );
        let out = records(vec![first, later], Framing::Bundle);
        let entities: Vec<Value> = out.entities.iter().map(|record| parsed(record.as_slice())).collect();
        assert_eq!(
            entities,
            vec![
                json!({"created_at": "2024-01-01T00:00:00Z", "id": "urn:aimem:memport:entity.ent-0001", "kind": "place", "name": "Leeds"}),
                json!({"created_at": "2024-01-01T00:00:00Z", "id": "urn:aimem:memport:entity.ent-0002", "kind": "x-animal", "name": "Rex"}),
            ]
        );
        for (record, value) in out.entities.iter().zip(&entities) {
            assert_eq!(&crate::jcs::to_canonical_vec(value), record);
        }
        let links: Vec<Value> = out.chunk_entities.iter().map(|record| parsed(record.as_slice())).collect();
        assert_eq!(
            links,
            vec![
                json!({"chunk_id": "urn:aimem:memport:mem-00000000000000000004", "entity_id": "urn:aimem:memport:entity.ent-0001"}),
                json!({"chunk_id": "urn:aimem:memport:mem-00000000000000000005", "entity_id": "urn:aimem:memport:entity.ent-0001"}),
                json!({"chunk_id": "urn:aimem:memport:mem-00000000000000000005", "entity_id": "urn:aimem:memport:entity.ent-0002"}),
            ]
        );
    }

    #[test]
    fn entity_urns_are_plain_when_safe_and_hashed_otherwise() {
        assert_eq!(entity_urn("memport", "ent-ab12"), "urn:aimem:memport:entity.ent-ab12");
        let hashed = entity_urn("memport", "a b:c");
        assert!(hashed.starts_with("urn:aimem:memport:entity.h"));
        assert_eq!(hashed.len(), "urn:aimem:memport:entity.h".len() + 32);
    }
}
