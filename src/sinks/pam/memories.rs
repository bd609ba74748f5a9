//! PAM memory objects (pam.md §3.1) and their order by id, which the integrity checksum needs
//! (§5): memories are kept in canonical form and sorted by a spill-to-disk merge sort, so the
//! store's memories can outgrow memory. Extracted memories also carry their evidence and, when
//! they replaced another, a `supersedes` relation.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::hash::{pam_content_digest, sha256_label};
use crate::jcs::to_canonical_vec;
use crate::model::extracted::{EXTRACTION_METHOD, EXTRACTOR, Evidence, Extracted};
use crate::model::{MemoryRecord, Micros, Provider};
use crate::sinks::pam::conversation::{IMPORTER, first_reading_pam_id};
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
    /// The `supersedes` relation from it to the memory it replaced, when it is an extracted
    /// memory that replaced one.
    pub relation: Option<CanonicalRelation>,
    /// For an extracted memory, the PAM id of the conversation its `provenance` names: that
    /// conversation's index entry lists it in `derived_memories`.
    pub derived_from: Option<String>,
}

/// A relation object (pam.md §3.1 `RelationObject`) in RFC 8785 form, keyed by its id.
#[derive(Debug)]
pub struct CanonicalRelation {
    /// The relation's `id`.
    pub id: String,
    /// Its canonical bytes.
    pub bytes: Vec<u8>,
}

/// The PAM memory object of a memory, or `None` when it has no content (PAM requires some).
/// `conversation_ref` is the PAM id of the conversation a provider memory came with, if any;
/// `extracted_at` is the run's export time, the `provenance.extracted_at` of an extracted
/// memory.
pub fn encode_memory(
    memory: &MemoryRecord,
    provider: Provider,
    conversation_ref: Option<&str>,
    extracted_at: Micros,
) -> Option<CanonicalMemory> {
    if memory.text.trim().is_empty() {
        return None;
    }
    if let Some(extracted) = &memory.extracted {
        return Some(encode_extracted(memory, extracted, provider, extracted_at));
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
        // One its input withdrew stays withdrawn.
        "status": if memory.retracted_in_input { "retracted" } else { "active" },
        // The tag pattern is `^[a-z0-9][a-z0-9_-]*$`; labels such as `project:<id>` go to metadata.
        "tags": [memory.kind.as_str()],
        "temporal": {"created_at": format_rfc3339(memory.created_at)},
        "provenance": provenance,
    });
    if !memory.labels.is_empty() {
        object["metadata"] = json!({"labels": memory.labels});
    }
    let embedding = embedding_entry(memory, &mut object);
    Some(CanonicalMemory { id: memory.id.clone(), bytes: to_canonical_vec(&object), embedding, relation: None, derived_from: None })
}

/// The `provenance.conversation_ref` of a memory object.
fn provenance_conversation(object: &Value) -> Option<String> {
    object["provenance"]["conversation_ref"].as_str().map(str::to_owned)
}

/// The memory object of a memory memport extracted from what the user said.
///
/// The first evidence is the provenance; every evidence, the first included, is listed in
/// `metadata.derived_from` with its conversation and message refs: PAM relations link memories
/// to memories only (`from`/`to` are memory ids, checked as such), so a message cannot be a
/// relation's target. Supersession is the schema's own: `status: superseded` with
/// `temporal.superseded_by` on the old memory, and a `supersedes` relation from the new one.
/// A memory whose conversations a sync retracted has `status: retracted` (before superseded),
/// with its supersession in `metadata` only.
fn encode_extracted(memory: &MemoryRecord, extracted: &Extracted, provider: Provider, extracted_at: Micros) -> CanonicalMemory {
    let first = extracted.evidence.first();
    let mut provenance = json!({
        "platform": first.map_or(provider, |evidence| evidence.provider).as_str(),
        // The schema's enum has no rules-based method. The memory restates what the user said
        // of themselves, so their explicit input is the closest; `metadata.extraction_method`
        // says `rules`.
        "extraction_method": "explicit_user_input",
        "extracted_at": format_rfc3339(extracted_at),
        "extractor": EXTRACTOR,
    });
    if let Some(evidence) = first {
        provenance["conversation_ref"] = Value::from(first_reading_pam_id(evidence.provider, &evidence.conversation_id));
        provenance["message_ref"] = Value::from(evidence.message_id.as_str());
    }
    let mut temporal = json!({
        "created_at": format_rfc3339(extracted.first_seen),
        "updated_at": format_rfc3339(extracted.last_seen),
    });
    // A retracted memory's status is `retracted`, and the schema ties `temporal.superseded_by`
    // to `superseded`: its successor, if any, goes to metadata instead.
    if let Some(newer) = extracted.superseded_by.as_ref().filter(|_| !extracted.retracted) {
        temporal["superseded_by"] = Value::from(newer.as_str());
    }
    // Tags are unique: some slots share their type's name (`goal`, `project`).
    let type_name = extracted.memory_type.as_str();
    let mut tags = vec![type_name];
    if extracted.slot != type_name && crate::validate::rules::is_tag(extracted.slot) {
        tags.push(extracted.slot);
    }
    let derived_from: Vec<Value> = extracted.evidence.iter().map(evidence_ref).collect();
    let mut metadata = json!({
        "memory_type": type_name,
        "slot": extracted.slot,
        "value": extracted.value,
        "extraction_method": EXTRACTION_METHOD,
        "evidence_count": extracted.evidence_count,
        "derived_from": derived_from,
    });
    if !extracted.language.is_empty() {
        metadata["language"] = Value::from(extracted.language);
    }
    if let Some(older) = &extracted.supersedes {
        metadata["supersedes"] = Value::from(older.as_str());
    }
    if extracted.retracted
        && let Some(newer) = &extracted.superseded_by
    {
        metadata["superseded_by"] = Value::from(newer.as_str());
    }
    if !extracted.entities.is_empty() {
        let entities: Vec<Value> =
            extracted.entities.iter().map(|entity| json!({"id": entity.id, "name": entity.name, "kind": entity.kind.as_str()})).collect();
        metadata["entities"] = Value::from(entities);
    }
    if !memory.labels.is_empty() {
        metadata["labels"] = json!(memory.labels);
    }
    // Retracted before superseded: every conversation it was said in is gone.
    let status = if extracted.retracted {
        "retracted"
    } else if extracted.superseded_by.is_some() {
        "superseded"
    } else {
        "active"
    };
    let mut object = json!({
        "id": memory.id,
        "type": extracted.memory_type.pam_type(),
        "content": memory.text,
        "content_hash": sha256_label(&pam_content_digest(&memory.text)),
        "status": status,
        "tags": tags,
        "temporal": temporal,
        "provenance": provenance,
        "metadata": metadata,
    });
    if let Some(confidence) = written_confidence(extracted.confidence) {
        object["confidence"] = json!({
            "initial": confidence,
            "current": confidence,
            "last_reinforced": format_rfc3339(extracted.last_seen),
        });
    }
    if extracted.personal {
        // Every member, defaults included: the SDK hashes the block with its defaults filled
        // in, so writing them keeps its checksum and ours the same.
        object["access"] = json!({"visibility": "private", "exportable": false, "shared_with": []});
    }
    let embedding = embedding_entry(memory, &mut object);
    // A retracted memory comes back in a later run than the one it replaced, which need not be
    // in this store: a relation to it could dangle, so `metadata.supersedes` alone says it.
    let relation = extracted.supersedes.as_deref().filter(|_| !extracted.retracted).map(|older| {
        let id = format!("rel-{}-supersedes-{older}", memory.id);
        let bytes = to_canonical_vec(&json!({
            "id": id,
            "from": memory.id,
            "to": older,
            "type": "supersedes",
            "created_at": format_rfc3339(extracted.first_seen),
        }));
        CanonicalRelation { id, bytes }
    });
    let derived_from = provenance_conversation(&object);
    CanonicalMemory { id: memory.id.clone(), bytes: to_canonical_vec(&object), embedding, relation, derived_from }
}

/// One entry of `metadata.derived_from`: where the user said it. `byte_span` is the sentence's
/// byte range in the message's `content.text` (PAM messages are never split).
fn evidence_ref(evidence: &Evidence) -> Value {
    json!({
        "platform": evidence.provider.as_str(),
        "conversation_ref": first_reading_pam_id(evidence.provider, &evidence.conversation_id),
        "message_ref": evidence.message_id,
        "byte_span": [evidence.span.0, evidence.span.1],
        "quote": evidence.text,
        "said_at": format_rfc3339(evidence.time),
    })
}

/// The confidence as the shortest decimal that reads back as the same `f32` (`0.85`, not
/// `0.8500000238418579` as it widens), so a store read back gives every format the figure a
/// direct run writes; `None` when it is not a number.
fn written_confidence(confidence: f32) -> Option<f64> {
    if !confidence.is_finite() {
        return None;
    }
    confidence.clamp(0.0, 1.0).to_string().parse().ok()
}

/// Sets `embedding_ref` on `object` and returns the `embeddings.json` entry, canonical, when
/// the memory has an embedding.
fn embedding_entry(memory: &MemoryRecord, object: &mut Value) -> Option<Vec<u8>> {
    memory.embedding.as_deref().map(|embedding| {
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
    })
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
    Ok(Some(CanonicalMemory { id, bytes, embedding: None, relation: None, derived_from: None }))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::extracted::{EntityKind, EntityRef, MemoryType};
    use crate::model::{Conversation, MemoryKind, Origin};
    use crate::sinks::pam::conversation::conversation_pam_id;
    use crate::validate::rules::Findings;

    /// 2023-11-14T22:13:20Z and an hour and a day later.
    pub(crate) const SAID_FIRST: Micros = 1_700_000_000_000_000;
    pub(crate) const SAID_AGAIN: Micros = SAID_FIRST + 3_600_000_000;
    pub(crate) const SAID_LATER: Micros = SAID_FIRST + 86_400_000_000;

    pub(crate) fn evidence(conversation: &str, message: &str, text: &str, time: Micros) -> Evidence {
        Evidence {
            provider: Provider::ChatGpt,
            conversation_id: conversation.to_owned(),
            message_id: message.to_owned(),
            span: (0, text.len()),
            text: text.to_owned(),
            time,
        }
    }

    /// An extracted home as the pipeline hands it to sinks: `Lives in <place>`.
    pub(crate) fn extracted_home(id: &str, place: &str, evidence: Vec<Evidence>) -> MemoryRecord {
        let first_seen = evidence.iter().map(|piece| piece.time).min().unwrap_or(SAID_FIRST);
        let last_seen = evidence.iter().map(|piece| piece.time).max().unwrap_or(SAID_FIRST);
        let mut record = MemoryRecord::new(Provider::ChatGpt, MemoryKind::Identity, format!("Lives in {place}"), first_seen, Vec::new());
        record.id = id.to_owned();
        record.extracted = Some(Box::new(Extracted {
            memory_type: MemoryType::Identity,
            slot: "home",
            value: place.to_owned(),
            language: "en",
            confidence: 0.85,
            evidence_count: evidence.len() as u64,
            evidence,
            first_seen,
            last_seen,
            supersedes: None,
            superseded_by: None,
            personal: false,
            entities: vec![EntityRef {
                id: "ent-0a1b2c".into(),
                name: place.to_owned(),
                kind: EntityKind::Place,
                first_seen,
                first_mention: true,
            }],
            retracted: false,
        }));
        record
    }

    /// Paris, said first, superseded by Leeds.
    pub(crate) fn superseding_pair() -> (MemoryRecord, MemoryRecord) {
        let mut older = extracted_home("mem-00000000000000000001", "Paris", vec![evidence("c1", "m1", "I live in Paris.", SAID_FIRST)]);
        let mut newer = extracted_home("mem-00000000000000000002", "Leeds", vec![evidence("c1", "m2", "I moved to Leeds.", SAID_LATER)]);
        if let (Some(old), Some(new)) = (older.extracted.as_deref_mut(), newer.extracted.as_deref_mut()) {
            old.superseded_by = Some(newer.id.clone());
            new.supersedes = Some(older.id.clone());
        }
        (older, newer)
    }

    fn encoded(memory: &MemoryRecord) -> CanonicalMemory {
        encode_memory(memory, Provider::Claude, None, SAID_LATER + 1).unwrap()
    }

    fn parsed(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn an_extracted_memory_has_its_type_provenance_evidence_and_confidence() {
        let memory = extracted_home(
            "mem-0123456789abcdef0123",
            "Leeds",
            vec![evidence("c1", "m1", "I live in Leeds.", SAID_FIRST), evidence("c 2", "m7", "I'm based in Leeds.", SAID_AGAIN)],
        );
        let canonical = encoded(&memory);
        let object = parsed(&canonical.bytes);
        assert_eq!(canonical.id, "mem-0123456789abcdef0123");
        assert_eq!(object["type"], "identity");
        assert_eq!(object["content"], "Lives in Leeds");
        assert_eq!(object["status"], "active");
        assert_eq!(object["tags"], json!(["identity", "home"]));
        // The first evidence, named as the conversation's own file and index entry are.
        let conversation = Conversation::empty(Provider::ChatGpt, "c1".into(), Origin { file: Arc::from("x.json"), offset: 0, index: 0 });
        let provenance = &object["provenance"];
        assert_eq!(provenance["platform"], "chatgpt");
        assert_eq!(provenance["conversation_ref"], conversation_pam_id(&conversation).as_str());
        assert_eq!(provenance["message_ref"], "m1");
        assert_eq!(provenance["extraction_method"], "explicit_user_input");
        assert_eq!(provenance["extractor"], EXTRACTOR);
        assert_eq!(provenance["extracted_at"], format_rfc3339(SAID_LATER + 1).as_str());
        assert_eq!(object["temporal"], json!({"created_at": format_rfc3339(SAID_FIRST), "updated_at": format_rfc3339(SAID_AGAIN)}));
        assert_eq!(object["confidence"], json!({"initial": 0.85, "current": 0.85, "last_reinforced": format_rfc3339(SAID_AGAIN)}));
        assert!(String::from_utf8_lossy(&canonical.bytes).contains("\"initial\":0.85,"));
        let metadata = &object["metadata"];
        assert_eq!(metadata["extraction_method"], EXTRACTION_METHOD);
        assert_eq!(metadata["language"], "en");
        assert_eq!(metadata["slot"], "home");
        assert_eq!(metadata["value"], "Leeds");
        assert_eq!(metadata["evidence_count"], 2);
        assert_eq!(metadata["entities"], json!([{"id": "ent-0a1b2c", "name": "Leeds", "kind": "place"}]));
        let derived = metadata["derived_from"].as_array().unwrap();
        assert_eq!(derived.len(), 2);
        assert_eq!(derived[0]["conversation_ref"], "chatgpt-c1");
        assert_eq!(derived[1]["conversation_ref"], first_reading_pam_id(Provider::ChatGpt, "c 2").as_str());
        assert!(derived[1]["conversation_ref"].as_str().unwrap().starts_with("chatgpt-h"));
        assert_eq!(derived[1]["message_ref"], "m7");
        assert_eq!(derived[1]["byte_span"], json!([0, 19]));
        assert_eq!(derived[1]["quote"], "I'm based in Leeds.");
        assert_eq!(derived[1]["said_at"], format_rfc3339(SAID_AGAIN).as_str());
        assert!(object.get("access").is_none());
        assert!(canonical.relation.is_none());
    }

    #[test]
    fn supersession_marks_the_old_memory_and_relates_the_new_one() {
        let (older, newer) = superseding_pair();
        let old = parsed(&encoded(&older).bytes);
        assert_eq!(old["status"], "superseded");
        assert_eq!(old["temporal"]["superseded_by"], newer.id.as_str());
        assert!(encoded(&older).relation.is_none());
        let new = encoded(&newer);
        let object = parsed(&new.bytes);
        assert_eq!(object["status"], "active");
        assert_eq!(object["metadata"]["supersedes"], older.id.as_str());
        let relation = new.relation.unwrap();
        assert_eq!(
            parsed(&relation.bytes),
            json!({
                "id": relation.id,
                "from": newer.id,
                "to": older.id,
                "type": "supersedes",
                "created_at": format_rfc3339(SAID_LATER),
            })
        );
    }

    #[test]
    fn a_personal_memory_is_not_exportable() {
        let mut memory = extracted_home("mem-00000000000000000003", "Leeds", vec![evidence("c1", "m1", "I live in Leeds.", SAID_FIRST)]);
        if let Some(extracted) = memory.extracted.as_deref_mut() {
            extracted.personal = true;
        }
        let object = parsed(&encoded(&memory).bytes);
        assert_eq!(object["access"], json!({"visibility": "private", "exportable": false, "shared_with": []}));
    }

    #[test]
    fn extracted_memories_and_their_relation_pass_the_store_checks() {
        let (older, newer) = superseding_pair();
        let (older, newer) = (encoded(&older), encoded(&newer));
        let store = json!({
            "schema": "portable-ai-memory",
            "schema_version": "1.0",
            "owner": {"id": "owner"},
            "memories": [parsed(&older.bytes), parsed(&newer.bytes)],
            "relations": [parsed(&newer.relation.as_ref().unwrap().bytes)],
        });
        let (mut problems, mut notices) = (crate::validate::Problems::new(), Vec::new());
        let mut findings = Findings { file: "memory-store.json".into(), problems: &mut problems, notices: &mut notices };
        crate::validate::pam::store::check_store(&store, &mut findings);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(notices.is_empty(), "{notices:?}");
    }

    #[test]
    fn confidence_is_written_as_the_shortest_decimal_of_its_f32() {
        assert_eq!(written_confidence(0.85), Some(0.85));
        assert_eq!(written_confidence(0.674_96), Some(0.674_96), "read back, it rounds to 0.67 as the direct run's does");
        assert_eq!(written_confidence(1.5), Some(1.0));
        assert_eq!(written_confidence(f32::NAN), None);
    }

    fn memory(id: &str, body: &str) -> CanonicalMemory {
        CanonicalMemory { id: id.to_owned(), bytes: body.as_bytes().to_vec(), embedding: None, relation: None, derived_from: None }
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
