//! The links of memport's extracted memories in an AIMEM input: each memory's `x-derived-from`
//! edges (the messages it was said in, with when), its `x-supersedes` edge (and, turned round,
//! the memory that replaced it), and the entities its chunk links to. AIMEM keeps these apart
//! from the chunk, in its edge, link and entity records; [`super::aimem`] joins them back so
//! an extracted memory is read whole (as PAM and UMP inputs read theirs) instead of as a plain
//! memory that loses them.
//!
//! Only records that can belong to one of memport's memories are kept: edges of those two
//! types and links from a chunk whose local id is a memport memory id (`mem-…`), and the
//! entities those links name. They are few beside the messages, and held in memory up to
//! [`MOST_LINK_BYTES`]; past that none are used (every memory is read as a plain one) and the
//! run says so, so memory stays bounded whatever the input.

use std::collections::HashMap;

use serde::Deserialize;

use super::grouped::RecordSource;
use crate::model::extracted::{EntityKind, EntityRef, Evidence, Extracted, MemoryType, language_named};
use crate::model::slots::slot_named;
use crate::model::{MemoryRecord, Micros, Provider};
use crate::timefmt::parse_rfc3339;

/// The most bytes the kept links may hold (ids and names, and a little for each record).
pub const MOST_LINK_BYTES: usize = 64 << 20;
/// The id prefix of memport's extracted memories (their chunk's local id).
const MEMORY_PREFIX: &str = "mem-";
/// What a kept record costs beside its strings: map entries, vector slack and the
/// allocator's rounding.
const RECORD_OVERHEAD: usize = 160;

/// An edge from an extracted memory to a message it was said in.
pub const DERIVED_FROM: &str = "x-derived-from";
/// An edge from an extracted memory to the one it replaced.
pub const SUPERSEDES: &str = "x-supersedes";

/// What one extracted memory's chunk links to, each as the input names it (chunk and entity
/// URNs), in file order.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct MemoryLinks {
    /// The message chunks it was said in, with the time of each edge.
    pub derived_from: Vec<(String, Micros)>,
    /// The memory chunk it replaced.
    pub supersedes: Option<String>,
    /// The memory chunk that replaced it.
    pub superseded_by: Option<String>,
    /// The entities it names.
    pub entities: Vec<String>,
}

/// An entity record: its name, kind and time.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityRecord {
    /// `name`.
    pub name: String,
    /// `kind` (`place`, `x-animal`, …).
    pub kind: String,
    /// `created_at`.
    pub created_at: Micros,
}

/// The links of every extracted memory of one input.
#[derive(Debug, Default)]
pub struct ExtractedLinks {
    memories: HashMap<String, MemoryLinks>,
    entities: HashMap<String, EntityRecord>,
    bytes: usize,
}

impl ExtractedLinks {
    /// The links of the memory chunk `chunk_id` (none when it has none).
    pub fn of(&self, chunk_id: &str) -> Option<&MemoryLinks> {
        self.memories.get(chunk_id)
    }

    /// The entity record `entity_id`.
    pub fn entity(&self, entity_id: &str) -> Option<&EntityRecord> {
        self.entities.get(entity_id)
    }

    /// Adds `bytes` to the count; `false` once past [`MOST_LINK_BYTES`].
    fn hold(&mut self, bytes: usize) -> bool {
        self.bytes += bytes + RECORD_OVERHEAD;
        self.bytes <= MOST_LINK_BYTES
    }

    fn memory(&mut self, chunk_id: &str) -> &mut MemoryLinks {
        self.memories.entry(chunk_id.to_owned()).or_default()
    }
}

/// Why no links are used.
#[derive(Debug, PartialEq, Eq)]
pub enum NotCollected {
    /// They would hold more than [`MOST_LINK_BYTES`].
    TooMany,
}

/// Whether `id` (a chunk URN) names one of memport's extracted memories: its local part is
/// `mem-` and letters and digits (not a piece split from one, `mem-….p2`).
pub fn is_memory_chunk(id: &str) -> bool {
    local_part(id)
        .and_then(|local| local.strip_prefix(MEMORY_PREFIX))
        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit()))
}

/// The extracted memory a chunk of memport's is (its id, content, time, tags and provider),
/// with its links from `links`; `None` for any other chunk, and for one whose tags do not say
/// a type, slot and language this build knows (an older memport's, or a newer one's).
pub fn extracted_memory(
    id: &str,
    text: &str,
    created_at: Micros,
    tags: &[&str],
    provider: Provider,
    links: &ExtractedLinks,
) -> Option<MemoryRecord> {
    if !tags.contains(&"extracted") || !is_memory_chunk(id) {
        return None;
    }
    // Tags are lowercase with `-` for `_` (`slot-does-not-eat`).
    let tagged = |prefix: &str| tags.iter().find_map(|tag| tag.strip_prefix(prefix)).map(|name| name.replace('-', "_"));
    let memory_type = MemoryType::named(&tagged("type-")?)?;
    let (slot, _) = slot_named(&tagged("slot-")?)?;
    let language = language_named(&tagged("lang-")?)?;
    let confidence = tags.iter().find_map(|tag| tag.strip_prefix("confidence-")?.parse::<f32>().ok()).filter(|value| value.is_finite());
    let memory_id = local_part(id)?.to_owned();
    let own = links.of(id).cloned().unwrap_or_default();
    let evidence: Vec<Evidence> = own.derived_from.iter().filter_map(|(target, time)| evidence_of(target, *time, provider)).collect();
    let last_seen = evidence.iter().map(|piece| piece.time).fold(created_at, Micros::max);
    let entities = own
        .entities
        .iter()
        .filter_map(|entity_id| {
            let record = links.entity(entity_id)?;
            Some(EntityRef {
                id: local_part(entity_id)?.strip_prefix("entity.")?.to_owned(),
                name: record.name.clone(),
                kind: EntityKind::named(&record.kind)?,
                first_seen: record.created_at,
                // Set in input order, where the entity is first named ([`crate::stages::read_back`]).
                first_mention: false,
            })
        })
        .collect();
    let memory_of = |chunk: &Option<String>| chunk.as_deref().and_then(local_part).map(str::to_owned);
    let retracted = tags.contains(&"retracted");
    let extracted = Extracted {
        memory_type,
        slot,
        // AIMEM has no place for the value.
        value: String::new(),
        language,
        confidence: confidence.unwrap_or(0.5).clamp(0.0, 1.0),
        evidence_count: evidence.len() as u64,
        evidence,
        first_seen: created_at,
        last_seen,
        supersedes: memory_of(&own.supersedes),
        superseded_by: memory_of(&own.superseded_by),
        personal: tags.contains(&"personal"),
        entities,
        retracted,
    };
    let mut memory = MemoryRecord::new(provider, memory_type.memory_kind(), text.to_owned(), created_at, Vec::new());
    memory.id = memory_id;
    memory.retracted_in_input = retracted;
    memory.extracted = Some(Box::new(extracted));
    Some(memory)
}

/// The local part of a URN (`mem-…`, `entity.…`).
fn local_part(urn: &str) -> Option<&str> {
    urn.strip_prefix("urn:aimem:")?.split_once(':').map(|(_, local)| local)
}

/// A message chunk's id as evidence said at `time`; `None` for a hashed id (`h.<32 hex>`: it
/// keeps neither the conversation's id nor the message's) and for a provider other than
/// memport's own or the memory's (names are interned for good).
fn evidence_of(target: &str, time: Micros, own: Provider) -> Option<Evidence> {
    let local = super::aimem::local_of(target)?;
    let is_hash = local.last.len() == 32 && local.last.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
    if local.middle == "h" && is_hash {
        return None;
    }
    let provider = if local.provider == own.as_str() { own } else { Provider::own_named(local.provider)? };
    Some(Evidence {
        provider,
        conversation_id: local.middle.to_owned(),
        message_id: local.last.to_owned(),
        // AIMEM has no place for the quote.
        span: (0, 0),
        text: String::new(),
        time,
    })
}

#[derive(Deserialize)]
struct Edge {
    edge_type: String,
    source_id: String,
    target_id: String,
    created_at: Option<String>,
}

#[derive(Deserialize)]
struct Link {
    chunk_id: String,
    entity_id: String,
}

#[derive(Deserialize)]
struct Entity {
    id: String,
    name: String,
    kind: String,
    created_at: Option<String>,
}

/// Whether a record may be one of the edges kept: cheaper than parsing every temporal edge.
pub fn may_be_memory_edge(record: &[u8]) -> bool {
    memchr::memmem::find(record, b"\"x-").is_some()
}

/// Gathers the links from edge, chunk-entity link and entity records, in any order.
#[derive(Default)]
pub struct Collector {
    collected: ExtractedLinks,
    /// The entities the memories name, once every link was read (a bundle's links come
    /// first): then no other entity is held.
    named: Option<std::collections::HashSet<String>>,
}

impl Collector {
    /// Takes an edge record; `false` once past [`MOST_LINK_BYTES`]. A record that does not
    /// read is passed over: the input was checked as a consumer checks it, so such a record
    /// only loses a link.
    pub fn edge(&mut self, record: &[u8]) -> bool {
        if !may_be_memory_edge(record) {
            return true;
        }
        let Ok(edge) = sonic_rs::from_slice::<Edge>(record) else { return true };
        if !is_memory_chunk(&edge.source_id) {
            return true;
        }
        let collected = &mut self.collected;
        let time = edge.created_at.as_deref().and_then(parse_rfc3339);
        match edge.edge_type.as_str() {
            DERIVED_FROM => {
                let Some(time) = time else { return true };
                if !collected.hold(edge.source_id.len() + edge.target_id.len()) {
                    return false;
                }
                collected.memory(&edge.source_id).derived_from.push((edge.target_id, time));
            }
            SUPERSEDES if is_memory_chunk(&edge.target_id) => {
                if !collected.hold(2 * (edge.source_id.len() + edge.target_id.len())) {
                    return false;
                }
                collected.memory(&edge.target_id).superseded_by.get_or_insert_with(|| edge.source_id.clone());
                collected.memory(&edge.source_id).supersedes.get_or_insert(edge.target_id);
            }
            _ => {}
        }
        true
    }

    /// Takes a chunk-entity link record; `false` once past [`MOST_LINK_BYTES`].
    pub fn link(&mut self, record: &[u8]) -> bool {
        let Ok(link) = sonic_rs::from_slice::<Link>(record) else { return true };
        if !is_memory_chunk(&link.chunk_id) {
            return true;
        }
        if !self.collected.hold(link.chunk_id.len() + link.entity_id.len()) {
            return false;
        }
        let memory = self.collected.memory(&link.chunk_id);
        if !memory.entities.contains(&link.entity_id) {
            memory.entities.push(link.entity_id);
        }
        true
    }

    /// Takes an entity record; `false` once past [`MOST_LINK_BYTES`]. Every entity is held
    /// until the end (a link may come after it); [`Collector::finish`] keeps those a memory
    /// names.
    pub fn entity(&mut self, record: &[u8]) -> bool {
        let Ok(entity) = sonic_rs::from_slice::<Entity>(record) else { return true };
        let Some(created_at) = entity.created_at.as_deref().and_then(parse_rfc3339) else { return true };
        let unnamed = self.named.as_ref().is_some_and(|named| !named.contains(&entity.id));
        if unnamed || self.collected.entities.contains_key(&entity.id) {
            return true;
        }
        if !self.collected.hold(entity.id.len() + entity.name.len() + entity.kind.len()) {
            return false;
        }
        self.collected.entities.insert(entity.id, EntityRecord { name: entity.name, kind: entity.kind, created_at });
        true
    }

    /// Whether some memory links to an entity (else entity records need not be read).
    pub fn names_entities(&self) -> bool {
        self.collected.memories.values().any(|memory| !memory.entities.is_empty())
    }

    /// The links gathered, with the entities some memory names.
    pub fn finish(mut self) -> ExtractedLinks {
        let named: std::collections::HashSet<&String> = self.collected.memories.values().flat_map(|memory| &memory.entities).collect();
        let entities = std::mem::take(&mut self.collected.entities);
        let kept = entities.into_iter().filter(|(id, _)| named.contains(id)).collect();
        self.collected.entities = kept;
        self.collected
    }
}

/// Collects the links from the edge, chunk-entity link and entity records of one input, each
/// read apart (a bundle's arrays); the entity records are read only when some memory links to
/// an entity.
///
/// # Errors
/// [`NotCollected::TooMany`] past [`MOST_LINK_BYTES`].
pub fn collect(
    mut edges: Box<dyn RecordSource>,
    mut links: Box<dyn RecordSource>,
    entities: impl FnOnce() -> Option<Box<dyn RecordSource>>,
) -> Result<ExtractedLinks, NotCollected> {
    let mut collector = Collector::default();
    let mut record = Vec::new();
    for_each(&mut *links, &mut record, |record| collector.link(record))?;
    for_each(&mut *edges, &mut record, |record| collector.edge(record))?;
    if collector.names_entities()
        && let Some(mut entities) = entities()
    {
        collector.named = Some(collector.collected.memories.values().flat_map(|memory| memory.entities.iter().cloned()).collect());
        for_each(&mut *entities, &mut record, |record| collector.entity(record))?;
    }
    Ok(collector.finish())
}

/// Collects the links from one source of mixed records (an NDJSON stream's), each handed to
/// `take` with the collector.
///
/// # Errors
/// [`NotCollected::TooMany`] past [`MOST_LINK_BYTES`].
pub fn collect_mixed(
    mut records: Box<dyn RecordSource>,
    mut take: impl FnMut(&mut Collector, &[u8]) -> bool,
) -> Result<ExtractedLinks, NotCollected> {
    let mut collector = Collector::default();
    let mut record = Vec::new();
    for_each(&mut *records, &mut record, |record| take(&mut collector, record))?;
    Ok(collector.finish())
}

/// Calls `keep_going` with each record of `source` until it returns `false` (then
/// [`NotCollected::TooMany`]) or the records end (a source that cannot be read on ends there).
fn for_each(source: &mut dyn RecordSource, record: &mut Vec<u8>, mut keep_going: impl FnMut(&[u8]) -> bool) -> Result<(), NotCollected> {
    loop {
        record.clear();
        match source.next_record(record) {
            Ok(Some(_)) => {
                if !keep_going(record) {
                    return Err(NotCollected::TooMany);
                }
            }
            Ok(None) | Err(_) => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::formats::grouped::SourceProblem;

    /// Records from memory, and how many were handed out.
    struct Records(Vec<&'static str>, usize);

    impl RecordSource for Records {
        fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
            let Some(record) = self.0.get(self.1) else { return Ok(None) };
            self.1 += 1;
            out.extend_from_slice(record.as_bytes());
            Ok(Some(0))
        }
    }

    fn source(records: &[&'static str]) -> Box<dyn RecordSource> {
        Box::new(Records(records.to_owned(), 0))
    }

    const NEW: &str = "urn:aimem:memport:mem-00000000000000000002";
    const OLD: &str = "urn:aimem:memport:mem-00000000000000000001";

    #[test]
    fn a_memory_gets_its_messages_supersession_and_entities_and_nothing_else_is_kept() {
        let edges = source(&[
            r#"{"created_at":"2024-01-01T00:00:00Z","edge_type":"temporal","source_id":"urn:aimem:memport:chatgpt.c1.m1","target_id":"urn:aimem:memport:chatgpt.c1.m2","weight":1}"#,
            r#"{"created_at":"2024-01-01T00:00:01Z","edge_type":"x-derived-from","source_id":"urn:aimem:memport:mem-00000000000000000002","target_id":"urn:aimem:memport:chatgpt.c1.m2","weight":1}"#,
            r#"{"created_at":"2024-01-01T00:00:01Z","edge_type":"x-supersedes","source_id":"urn:aimem:memport:mem-00000000000000000002","target_id":"urn:aimem:memport:mem-00000000000000000001","weight":1}"#,
            r#"{"created_at":"2024-01-01T00:00:01Z","edge_type":"x-derived-from","source_id":"urn:aimem:other:fact-1","target_id":"urn:aimem:other:x","weight":1}"#,
        ]);
        let links = source(&[
            r#"{"chunk_id":"urn:aimem:memport:mem-00000000000000000002","entity_id":"urn:aimem:memport:entity.ent-1"}"#,
            r#"{"chunk_id":"urn:aimem:memport:chatgpt.c1.m2","entity_id":"urn:aimem:memport:entity.ent-2"}"#,
        ]);
        let entities = || {
            Some(source(&[
                r#"{"created_at":"2024-01-01T00:00:00Z","id":"urn:aimem:memport:entity.ent-1","kind":"place","name":"Leeds"}"#,
                r#"{"created_at":"2024-01-01T00:00:00Z","id":"urn:aimem:memport:entity.ent-2","kind":"place","name":"York"}"#,
            ]))
        };
        let collected = collect(edges, links, entities).unwrap();
        let new = collected.of(NEW).unwrap();
        assert_eq!(new.derived_from, vec![("urn:aimem:memport:chatgpt.c1.m2".to_owned(), 1_704_067_201_000_000)]);
        assert_eq!(new.supersedes.as_deref(), Some(OLD));
        assert_eq!(new.entities, vec!["urn:aimem:memport:entity.ent-1".to_owned()]);
        assert_eq!(collected.of(OLD).unwrap().superseded_by.as_deref(), Some(NEW));
        assert!(collected.of("urn:aimem:other:fact-1").is_none());
        assert_eq!(collected.entity("urn:aimem:memport:entity.ent-1").unwrap().name, "Leeds");
        assert!(collected.entity("urn:aimem:memport:entity.ent-2").is_none(), "named by a message chunk only");
    }

    #[test]
    fn a_chunk_tagged_by_memport_is_read_as_the_memory_it_was_extracted_as() {
        let edges = source(&[
            r#"{"created_at":"2024-01-01T00:00:05Z","edge_type":"x-derived-from","source_id":"urn:aimem:memport:mem-00000000000000000002","target_id":"urn:aimem:memport:chatgpt.c1.m2","weight":1}"#,
            r#"{"created_at":"2024-01-01T00:00:09Z","edge_type":"x-derived-from","source_id":"urn:aimem:memport:mem-00000000000000000002","target_id":"urn:aimem:memport:chatgpt.h.00112233445566778899aabbccddeeff","weight":1}"#,
            r#"{"created_at":"2024-01-01T00:00:07Z","edge_type":"x-derived-from","source_id":"urn:aimem:memport:mem-00000000000000000002","target_id":"urn:aimem:memport:claude.c9.m1","weight":1}"#,
            r#"{"created_at":"2024-01-01T00:00:06Z","edge_type":"x-derived-from","source_id":"urn:aimem:memport:mem-00000000000000000002","target_id":"urn:aimem:memport:chatgpt.h.m5","weight":1}"#,
            r#"{"created_at":"2024-01-01T00:00:05Z","edge_type":"x-supersedes","source_id":"urn:aimem:memport:mem-00000000000000000002","target_id":"urn:aimem:memport:mem-00000000000000000001","weight":1}"#,
        ]);
        let links = source(&[r#"{"chunk_id":"urn:aimem:memport:mem-00000000000000000002","entity_id":"urn:aimem:memport:entity.ent-1"}"#]);
        let entities = || {
            Some(source(&[r#"{"created_at":"2024-01-01T00:00:03Z","id":"urn:aimem:memport:entity.ent-1","kind":"x-animal","name":"Rex"}"#]))
        };
        let links = collect(edges, links, entities).unwrap();
        let tags = ["extracted", "type-preference", "slot-does-not-eat", "confidence-0.95", "lang-de", "src-chatgpt", "personal"];
        let memory = extracted_memory(NEW, "Does not eat meat", 1_704_067_204_000_000, &tags, Provider::ChatGpt, &links).unwrap();
        assert_eq!((memory.id.as_str(), memory.text.as_str()), ("mem-00000000000000000002", "Does not eat meat"));
        let extracted = memory.extracted.unwrap();
        assert_eq!((extracted.memory_type, extracted.slot, extracted.language), (MemoryType::Preference, "does_not_eat", "de"));
        assert!((extracted.confidence - 0.95).abs() < 1e-6 && extracted.personal && !extracted.retracted);
        // The hashed message names no message (a conversation called `h` is not hashed);
        // claude's is another of memport's providers.
        let said: Vec<_> =
            extracted.evidence.iter().map(|piece| (piece.provider, piece.conversation_id.as_str(), piece.message_id.as_str())).collect();
        assert_eq!(said, [(Provider::ChatGpt, "c1", "m2"), (Provider::Claude, "c9", "m1"), (Provider::ChatGpt, "h", "m5")]);
        assert_eq!(
            (extracted.evidence_count, extracted.first_seen, extracted.last_seen),
            (3, 1_704_067_204_000_000, 1_704_067_207_000_000)
        );
        assert_eq!(extracted.supersedes.as_deref(), Some("mem-00000000000000000001"));
        assert_eq!(extracted.entities.len(), 1);
        assert_eq!(
            (extracted.entities[0].id.as_str(), extracted.entities[0].name.as_str(), extracted.entities[0].kind),
            ("ent-1", "Rex", EntityKind::Animal)
        );
        let old =
            extracted_memory(OLD, "Eats meat", 0, &["extracted", "type-preference", "slot-eats", "lang-en"], Provider::ChatGpt, &links)
                .unwrap();
        let old = old.extracted.unwrap();
        assert_eq!((old.superseded_by.as_deref(), old.confidence), (Some(NEW.rsplit(':').next().unwrap()), 0.5));
    }

    #[test]
    fn other_chunks_and_tags_this_build_does_not_know_are_not_read_as_extracted() {
        let links = ExtractedLinks::default();
        let read = |id: &str, tags: &[&str]| extracted_memory(id, "Lives in Leeds", 0, tags, Provider::ChatGpt, &links).is_some();
        let tags = ["extracted", "type-identity", "slot-home", "lang-en"];
        assert!(read(NEW, &tags));
        assert!(!read("urn:aimem:other:fact-1", &tags), "not a memport memory id");
        assert!(!read("urn:aimem:memport:mem-00000000000000000002.p2", &tags), "a piece split from a memory");
        for missing in 0..tags.len() {
            let fewer: Vec<&str> = tags.iter().enumerate().filter(|(at, _)| *at != missing).map(|(_, tag)| *tag).collect();
            assert!(!read(NEW, &fewer), "without {}", tags[missing]);
        }
        assert!(!read(NEW, &["extracted", "type-identity", "slot-hometown", "lang-en"]), "a slot a newer memport fills");
        assert!(!read(NEW, &["extracted", "type-identity", "slot-home", "lang-it"]));
    }

    #[test]
    fn mixed_records_in_any_order_give_the_same_links() {
        let entity =
            r#"{"_kind":"entity","created_at":"2024-01-01T00:00:00Z","id":"urn:aimem:memport:entity.ent-1","kind":"place","name":"Leeds"}"#;
        let link = r#"{"_kind":"chunk_entity","chunk_id":"urn:aimem:memport:mem-00000000000000000002","entity_id":"urn:aimem:memport:entity.ent-1"}"#;
        let edge = r#"{"_kind":"edge","created_at":"2024-01-01T00:00:01Z","edge_type":"x-derived-from","source_id":"urn:aimem:memport:mem-00000000000000000002","target_id":"urn:aimem:memport:chatgpt.c1.m2","weight":1}"#;
        let take = |collector: &mut Collector, record: &[u8]| {
            if record.starts_with(br#"{"_kind":"edge""#) {
                collector.edge(record)
            } else if record.starts_with(br#"{"_kind":"chunk_entity""#) {
                collector.link(record)
            } else {
                collector.entity(record)
            }
        };
        let read = |records: &[&'static str]| {
            let links = collect_mixed(source(records), take).unwrap();
            (links.of(NEW).cloned(), links.entity("urn:aimem:memport:entity.ent-1").cloned())
        };
        let first = read(&[edge, link, entity]);
        assert_eq!(first.0.as_ref().unwrap().derived_from.len(), 1);
        assert_eq!(first.1.as_ref().unwrap().name, "Leeds");
        assert_eq!(read(&[entity, link, edge]), first);
        assert_eq!(read(&[entity, edge]).1, None, "an entity no memory names is not kept");
    }

    #[test]
    fn entity_records_are_not_read_when_no_memory_links_to_one() {
        let collected = collect(source(&[]), source(&[]), || panic!("not read")).unwrap();
        assert!(collected.of(NEW).is_none());
    }

    #[test]
    fn past_the_bound_no_links_are_used() {
        let edge: &'static str = Box::leak(
            format!(
                r#"{{"created_at":"2024-01-01T00:00:01Z","edge_type":"x-derived-from","source_id":"{NEW}","target_id":"urn:aimem:memport:chatgpt.c1.{}","weight":1}}"#,
                "m".repeat(200)
            )
            .into_boxed_str(),
        );
        let edges = source(&vec![edge; MOST_LINK_BYTES / 200]);
        assert_eq!(collect(edges, source(&[]), || None).unwrap_err(), NotCollected::TooMany);
    }
}
