//! Keeps what extracted memories read back from a memory format link to inside the output:
//! their evidence names messages, a newer memory the one it supersedes (and the older one the
//! memory that superseded it), which a memory
//! extracted in the run always finds written (it was extracted from them), but a memory read
//! back may not: a store's `DNA_ONLY` or `SINCE` export holds no messages or only later ones,
//! and a message may be a duplicate or skipped here. An AIMEM bundle with an edge to a chunk it
//! does not hold is invalid, and so is a PAM reference to a missing memory. So a read-back
//! memory keeps the evidence of messages the run writes and the supersession of a memory it
//! writes; and each entity it names is marked as first mentioned on the first written memory
//! naming it, in input order, so formats with an entity table write it once. The run's own
//! extraction marks its memories' entities itself.
//!
//! What a memory links to may come later in the input: a PAM store's memories travel with the
//! conversation of their first evidence, the rest of it is in other conversations, and an
//! export lists its newest conversations first, so the memory a newer one supersedes may come
//! after it (and an older memory comes before the one that superseded it). Such a memory, and
//! every read-back extracted memory after it (so they keep their
//! order), waits until the end of the run ([`MemoryRecord::written_at_end`]), when the whole
//! input says what is written: it keeps the links to that. Waiting memories are counted, and
//! seen by extraction, with their records. A message read and not written (a duplicate,
//! skipped) is not waited for. At most [`MOST_WAITING_BYTES`] wait; past that a memory is
//! written with its record, keeping only links to what is written so far, and the run reports
//! it once (`read_back_wait_bound_reached`). An older memory whose newer one the run does not
//! write loses its `superseded_by`, and so is written as current: a reference to a memory the
//! output does not hold is invalid in every format that checks one. A withdrawn memory keeps
//! its supersession, both ways, as it is: it was retracted in a later run than the memories it
//! is linked to, which need not be in the input (each format writes such links so).
//!
//! On only when an input is UMP, PAM or AIMEM (the memory formats memport reads extracted memories
//! whole from):
//! it keys every message read, which other runs need not pay for. A run told beforehand which
//! messages its memories name ([`NamedEvidence`]: a store's export reads its memories first)
//! keys only those.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use crate::key_set::{KeySet, PrehashedKey};
use crate::model::extracted::{Evidence, Extracted};
use crate::model::{Conversation, Disposition, MemoryRecord, Origin, Provider, Warnings};
use crate::stages::{Emit, EndBoard, Stage};

/// The most bytes that memories waiting for the end may hold ([`held_bytes`]): a bound on the
/// memory the waiting takes.
pub const MOST_WAITING_BYTES: usize = 64 << 20;
/// The warning of a run whose memories named evidence its [`NamedEvidence`] did not hold
/// ([`ReadBackLinks::knowing`]).
pub const UNFORESEEN_EVIDENCE: &str = "read_back_evidence_unforeseen";
/// The key kinds of a message read and written, and of one read and not written.
const WRITTEN: &str = "message";
const UNWRITTEN: &str = "unwritten message";
/// Memories per record when the waiting ones are written.
const MEMORIES_PER_RECORD: usize = 512;

/// The set key of `parts` joined by NUL bytes (xxHash3-128, as [`super::unique_ids`] keys ids),
/// joined in `buffer`: every written message of the run is keyed, and a buffer reused spares an
/// allocation each.
fn key(buffer: &mut Vec<u8>, parts: &[&str]) -> u128 {
    buffer.clear();
    for part in parts {
        buffer.extend_from_slice(part.as_bytes());
        buffer.push(0);
    }
    twox_hash::XxHash3_128::oneshot(buffer)
}

/// The messages a run's read-back memories name as evidence, known before the run (a store's
/// export reads its memories first): the stage then keys only these messages instead of every
/// one, a random insert into a table of every message read (5% of a store export's CPU).
/// Keyed by conversation and message id alone, whatever the provider: a message of another
/// provider with the same ids is keyed too, which costs a key and changes nothing.
#[derive(Debug, Default)]
pub struct NamedEvidence {
    conversations: HashSet<u128, BuildHasherDefault<PrehashedKey>>,
    messages: HashSet<u128, BuildHasherDefault<PrehashedKey>>,
    buffer: Vec<u8>,
    /// Whether more than [`NamedEvidence::MOST_MESSAGES`] were named (the set is not
    /// complete).
    full: bool,
}

impl NamedEvidence {
    /// The most messages a set holds (16 bytes each, and as many for their conversations):
    /// past that it is full, and a run keys every message as it would without one.
    pub const MOST_MESSAGES: usize = 1 << 20;

    /// Adds the message `message` of the conversation `conversation`.
    pub fn add(&mut self, conversation: &str, message: &str) {
        let key = key(&mut self.buffer, &[conversation, message]);
        if self.messages.len() == NamedEvidence::MOST_MESSAGES && !self.messages.contains(&key) {
            self.full = true;
            return;
        }
        self.messages.insert(key);
        self.conversations.insert(twox_hash::XxHash3_128::oneshot(conversation.as_bytes()));
    }

    /// Whether more messages were named than the set holds: it cannot tell which to key.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Whether a message of the conversation `conversation` is named.
    fn names_conversation(&self, conversation: &str) -> bool {
        self.conversations.contains(&twox_hash::XxHash3_128::oneshot(conversation.as_bytes()))
    }

    /// Whether the message `message` of `conversation` is named; `buffer` joins the key.
    fn names(&self, buffer: &mut Vec<u8>, conversation: &str, message: &str) -> bool {
        self.messages.contains(&key(buffer, &[conversation, message]))
    }
}

/// About how many bytes a memory holds (see [`MOST_WAITING_BYTES`]): its text, value, evidence,
/// entities, labels and vector, and a little for each of their own.
fn held_bytes(memory: &MemoryRecord) -> usize {
    let extracted = memory.extracted.as_deref();
    let evidence = extracted.map_or(0, |extracted| {
        extracted.evidence.iter().map(|piece| piece.text.len() + piece.conversation_id.len() + piece.message_id.len() + 64).sum()
    });
    let entities = extracted.map_or(0, |extracted| extracted.entities.iter().map(|entity| entity.id.len() + entity.name.len() + 64).sum());
    let labels: usize = memory.labels.iter().map(|label| label.len() + 24).sum();
    let vector = memory.embedding.as_deref().map_or(0, |embedding| {
        embedding.model.len() + embedding.vector.as_ref().map_or(0, |vector| vector.len() * std::mem::size_of::<f64>())
    });
    let value = extracted.map_or(0, |extracted| extracted.value.len());
    memory.text.len() + memory.id.len() + value + evidence + entities + labels + vector + 256
}

/// A memory waiting for the end, with the provider and origin of the record it came in.
struct Waiting {
    provider: Provider,
    origin: Origin,
    memory: MemoryRecord,
}

/// The stage.
#[derive(Default)]
pub struct ReadBackLinks {
    written: KeySet,
    warnings: Warnings,
    /// Where keys are joined ([`key`]).
    buffer: Vec<u8>,
    /// The memories written at the end, in input order.
    waiting: Vec<Waiting>,
    /// What they hold ([`held_bytes`]).
    waiting_bytes: usize,
    /// Whether a memory did not wait because [`MOST_WAITING_BYTES`] were held (reported once).
    bound_reached: bool,
    /// The only messages keyed, when known beforehand.
    named: Option<Arc<NamedEvidence>>,
}

impl ReadBackLinks {
    /// A stage whose memories never wait, for a run over memories read apart from everything
    /// they link to (a store's export reads its memories first, for their entity links alone):
    /// nothing they wait for would come, so each is written with its record, in input order,
    /// and nothing is reported.
    pub fn never_waiting() -> ReadBackLinks {
        ReadBackLinks { waiting_bytes: MOST_WAITING_BYTES, bound_reached: true, ..ReadBackLinks::default() }
    }

    /// A stage that keys only the messages `named` names; a memory naming another one is
    /// reported (`read_back_evidence_unforeseen`): its evidence may have been left out, and
    /// the run must be made again without `named`.
    pub fn knowing(named: Arc<NamedEvidence>) -> ReadBackLinks {
        ReadBackLinks { named: Some(named), ..ReadBackLinks::default() }
    }

    /// Whether `key` is among the written; an unavailable index counts as not (a link left out
    /// rather than one that may dangle) and is reported.
    fn holds(&mut self, key: u128) -> bool {
        self.written.contains(key).unwrap_or_else(|_| {
            self.warnings.add("id_index_unavailable");
            false
        })
    }

    /// Adds `key`; whether it is new.
    fn add(&mut self, key: u128) -> bool {
        self.written.insert(key).unwrap_or_else(|_| {
            self.warnings.add("id_index_unavailable");
            false
        })
    }

    /// Whether the memory `older` is written so far.
    fn memory_written(&mut self, older: &str) -> bool {
        let key = key(&mut self.buffer, &["memory", older]);
        self.holds(key)
    }

    /// Whether the message a piece of evidence names was read so far as `kind` (`message`:
    /// written; `unwritten message`: read and not written).
    fn message_seen(&mut self, kind: &str, piece: &Evidence) -> bool {
        let key = key(&mut self.buffer, &[kind, piece.provider.as_str(), &piece.conversation_id, &piece.message_id]);
        self.holds(key)
    }

    /// Leaves out the evidence of messages and the supersession (either way) of memories not
    /// written so far (a withdrawn memory keeps its links: see the module comment).
    fn keep_links_to_written(&mut self, extracted: &mut Extracted) {
        extracted.evidence.retain(|piece| self.message_seen(WRITTEN, piece));
        if extracted.retracted {
            return;
        }
        for link in [&mut extracted.supersedes, &mut extracted.superseded_by] {
            if let Some(other) = link.take()
                && self.memory_written(&other)
            {
                *link = Some(other);
            }
        }
    }
}

impl Stage for ReadBackLinks {
    fn name(&self) -> &'static str {
        "read_back_links"
    }

    fn process(&mut self, conversation: &mut Conversation, _found: Option<crate::stages::Found>) -> Result<(), crate::error::RunError> {
        let provider = conversation.provider.as_str();
        let named_conversation = self.named.as_ref().is_none_or(|named| named.names_conversation(&conversation.id));
        for message in conversation.messages.iter().filter(|_| named_conversation) {
            if let Some(named) = &self.named
                && !named.names(&mut self.buffer, &conversation.id, &message.id)
            {
                continue;
            }
            // A message read and not written (a duplicate, skipped) is not waited for.
            let kind = if message.disposition == Disposition::Keep { WRITTEN } else { UNWRITTEN };
            let key = key(&mut self.buffer, &[kind, provider, &conversation.id, &message.id]);
            self.add(key);
        }
        for memory in &mut conversation.memories {
            if !memory.is_written() {
                continue;
            }
            // Only memories read from the input are here: extraction's come at the run's end.
            if let Some(extracted) = memory.extracted.as_deref_mut() {
                if let Some(named) = &self.named
                    && extracted.evidence.iter().any(|piece| !named.names(&mut self.buffer, &piece.conversation_id, &piece.message_id))
                {
                    self.warnings.add(UNFORESEEN_EVIDENCE);
                }
                let evidence_ahead =
                    extracted.evidence.iter().any(|piece| !self.message_seen(WRITTEN, piece) && !self.message_seen(UNWRITTEN, piece));
                let mut supersession_ahead = false;
                if !extracted.retracted {
                    for other in [&extracted.supersedes, &extracted.superseded_by].into_iter().flatten() {
                        supersession_ahead |= !self.memory_written(other);
                    }
                }
                for entity in &mut extracted.entities {
                    let key = key(&mut self.buffer, &["entity", &entity.id]);
                    entity.first_mention = self.add(key);
                }
                let ahead = evidence_ahead || supersession_ahead;
                if (ahead || !self.waiting.is_empty()) && self.waiting_bytes < MOST_WAITING_BYTES {
                    memory.written_at_end = true;
                    self.waiting_bytes += held_bytes(memory);
                    let mut waiting = memory.clone();
                    waiting.written_at_end = false;
                    self.waiting.push(Waiting { provider: conversation.provider, origin: conversation.origin.clone(), memory: waiting });
                } else {
                    self.keep_links_to_written(extracted);
                    if ahead && !self.bound_reached {
                        self.bound_reached = true;
                        self.warnings.add("read_back_wait_bound_reached");
                    }
                }
            }
            let key = key(&mut self.buffer, &["memory", &memory.id]);
            self.add(key);
        }
        Ok(())
    }

    fn end(&mut self, _board: &mut EndBoard, emit: &mut dyn Emit) -> Result<(), crate::error::RunError> {
        let mut record: Option<Conversation> = None;
        for Waiting { provider, origin, mut memory } in std::mem::take(&mut self.waiting) {
            // Written anywhere in the input, before this memory or after it.
            if let Some(extracted) = memory.extracted.as_deref_mut() {
                self.keep_links_to_written(extracted);
            }
            match record.as_mut() {
                Some(open) if open.provider == provider && open.origin.file == origin.file && open.memories.len() < MEMORIES_PER_RECORD => {
                    open.memories.push(memory);
                }
                _ => {
                    let next = Conversation::memories_only(provider, memory.id.clone(), origin, vec![memory]);
                    if let Some(full) = record.replace(next)
                        && !emit.records_as_read(vec![full])?
                    {
                        return Ok(());
                    }
                }
            }
        }
        if let Some(last) = record {
            emit.records_as_read(vec![last])?;
        }
        Ok(())
    }

    fn take_warnings(&mut self) -> Warnings {
        std::mem::take(&mut self.warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RunError;
    use crate::model::extracted::{EntityKind, EntityRef, Evidence, Extracted, MemoryType};
    use crate::model::{MemoryKind, Message, RetractedConversation};

    /// What the stage writes at the end.
    #[derive(Default)]
    struct Written(Vec<Conversation>);

    impl Emit for Written {
        fn records(&mut self, _records: Vec<Conversation>) -> Result<bool, RunError> {
            panic!("the read-back stage's records went through every stage when read");
        }

        fn records_as_read(&mut self, records: Vec<Conversation>) -> Result<bool, RunError> {
            self.0.extend(records);
            Ok(true)
        }

        fn retractions(&mut self, _retracted: Vec<RetractedConversation>) -> Result<bool, RunError> {
            Ok(true)
        }
    }

    fn record(memories: Vec<MemoryRecord>) -> Conversation {
        let origin = Origin { file: "store.ump.ndjson".into(), offset: 0, index: 0 };
        Conversation::memories_only(Provider::ChatGpt, memories[0].id.clone(), origin, memories)
    }

    fn supersedes(memory: &MemoryRecord) -> Option<&str> {
        memory.extracted.as_deref().and_then(|extracted| extracted.supersedes.as_deref())
    }

    fn evidence(message: &str) -> Evidence {
        Evidence {
            provider: Provider::ChatGpt,
            conversation_id: "c1".into(),
            message_id: message.into(),
            span: (0, 5),
            text: "I am.".into(),
            time: 0,
        }
    }

    fn read_back(id: &str, messages: &[&str], supersedes: Option<&str>) -> MemoryRecord {
        let mut memory = MemoryRecord::new(Provider::ChatGpt, MemoryKind::Identity, format!("Memory {id}"), 0, Vec::new());
        memory.id = id.into();
        memory.extracted = Some(Box::new(Extracted {
            memory_type: MemoryType::Identity,
            slot: "home",
            value: "Leeds".into(),
            language: "en",
            confidence: 0.8,
            evidence: messages.iter().map(|message| evidence(message)).collect(),
            evidence_count: messages.len() as u64,
            first_seen: 0,
            last_seen: 0,
            supersedes: supersedes.map(str::to_owned),
            superseded_by: None,
            personal: false,
            entities: vec![EntityRef {
                id: "ent-1".into(),
                name: "Leeds".into(),
                kind: EntityKind::Place,
                first_seen: 0,
                first_mention: false,
            }],
            retracted: false,
        }));
        memory
    }

    #[test]
    fn a_read_back_memory_keeps_evidence_of_written_messages_and_links_only_to_written_memories() {
        let mut stage = ReadBackLinks::default();
        let origin = Origin { file: "test.ump.ndjson".into(), offset: 0, index: 0 };
        let mut conversation = Conversation::empty(Provider::ChatGpt, "c1".into(), origin);
        conversation.messages = vec![Message::user_for_tests("m1", None, "I live in Leeds.", 0)];
        let mut skipped = Message::user_for_tests("m2", None, "I live in Leeds.", 0);
        skipped.disposition = Disposition::Duplicate;
        conversation.messages.push(skipped);
        conversation.memories = vec![read_back("mem-a", &["m1", "m2", "m3"], None), read_back("mem-b", &["m1"], Some("mem-a"))];
        let mut unwritten = read_back("mem-c", &["m1"], Some("mem-gone"));
        unwritten.exportable = false;
        conversation.memories.push(unwritten);
        conversation.memories.push(read_back("mem-d", &[], Some("mem-c")));
        stage.process(&mut conversation, None).unwrap();
        let waits: Vec<bool> = conversation.memories.iter().map(|memory| memory.written_at_end).collect();
        assert_eq!(waits, [true, true, false, true], "from the first with a link to what may come later, in order");
        let firsts: Vec<bool> =
            conversation.memories.iter().map(|memory| memory.extracted.as_deref().unwrap().entities[0].first_mention).collect();
        assert_eq!(firsts, [true, false, false, false], "the entity is first named on the first written memory");
        let mut written = Written::default();
        stage.end(&mut EndBoard::default(), &mut written).unwrap();
        let at_end: Vec<&MemoryRecord> = written.0.iter().flat_map(|record| &record.memories).collect();
        let ids: Vec<&str> = at_end.iter().map(|memory| memory.id.as_str()).collect();
        assert_eq!(ids, ["mem-a", "mem-b", "mem-d"]);
        let messages: Vec<&str> = at_end[0].extracted.as_deref().unwrap().evidence.iter().map(|piece| piece.message_id.as_str()).collect();
        assert_eq!(messages, ["m1"], "a duplicate and an absent message are not evidence here");
        assert_eq!(supersedes(at_end[1]), Some("mem-a"));
        assert_eq!(supersedes(at_end[2]), None, "a memory not written is not superseded here");
        assert!(at_end.iter().all(|memory| memory.is_written()));
    }

    #[test]
    fn a_memory_read_before_the_one_it_supersedes_is_written_after_it_with_the_link_and_those_after_it_keep_their_order() {
        let mut stage = ReadBackLinks::default();
        let mut newer = record(vec![read_back("mem-new", &[], Some("mem-old"))]);
        let mut between = record(vec![read_back("mem-between", &[], None)]);
        let mut older = record(vec![read_back("mem-old", &[], None)]);
        let mut withdrawn = read_back("mem-withdrawn", &[], Some("mem-of-an-earlier-run"));
        withdrawn.extracted.as_deref_mut().unwrap().retracted = true;
        let mut last = record(vec![withdrawn]);
        for conversation in [&mut newer, &mut between, &mut older, &mut last] {
            stage.process(conversation, None).unwrap();
        }
        for conversation in [&newer, &between, &older, &last] {
            let memory = &conversation.memories[0];
            assert!(memory.written_at_end && memory.is_kept() && !memory.is_written(), "{} waits, counted with its record", memory.id);
        }
        let mut written = Written::default();
        stage.end(&mut EndBoard::default(), &mut written).unwrap();
        let at_end: Vec<&MemoryRecord> = written.0.iter().flat_map(|record| &record.memories).collect();
        let ids: Vec<&str> = at_end.iter().map(|memory| memory.id.as_str()).collect();
        assert_eq!(ids, ["mem-new", "mem-between", "mem-old", "mem-withdrawn"], "in input order, in one record");
        assert_eq!(written.0.len(), 1);
        assert_eq!(supersedes(at_end[0]), Some("mem-old"), "the older memory came later, and was written");
        assert_eq!(supersedes(at_end[3]), Some("mem-of-an-earlier-run"), "a withdrawn memory keeps its link as it is");
        assert!(at_end.iter().all(|memory| memory.is_written()));
        let firsts: Vec<bool> = at_end.iter().map(|memory| memory.extracted.as_deref().unwrap().entities[0].first_mention).collect();
        assert_eq!(firsts, [true, false, false, false], "entities are first named in input order");
    }

    #[test]
    fn a_stage_told_the_named_messages_keeps_the_same_evidence_and_reports_a_memory_naming_another() {
        let conversation_of = |messages: &[&str], memories: Vec<MemoryRecord>| {
            let origin = Origin { file: "store.ump.ndjson".into(), offset: 0, index: 0 };
            let mut conversation = Conversation::empty(Provider::ChatGpt, "c1".into(), origin);
            conversation.messages = messages.iter().map(|id| Message::user_for_tests(id, None, "I live in Leeds.", 0)).collect();
            conversation.memories = memories;
            conversation
        };
        let mut named = NamedEvidence::default();
        named.add("c1", "m1");
        named.add("c1", "m3");
        let mut stage = ReadBackLinks::knowing(Arc::new(named));
        let mut messages = conversation_of(&["m1", "m2"], Vec::new());
        let mut memories = conversation_of(&[], vec![read_back("mem-a", &["m1", "m3"], None)]);
        stage.process(&mut messages, None).unwrap();
        stage.process(&mut memories, None).unwrap();
        assert!(stage.take_warnings().0.is_empty(), "every piece was named");
        let mut written = Written::default();
        stage.end(&mut EndBoard::default(), &mut written).unwrap();
        let at_end: Vec<&MemoryRecord> = written.0.iter().flat_map(|record| &record.memories).collect();
        let kept: Vec<&str> = at_end[0].extracted.as_deref().unwrap().evidence.iter().map(|piece| piece.message_id.as_str()).collect();
        assert_eq!(kept, ["m1"], "the message never read is left out, as without the names");
        let mut unforeseen = conversation_of(&[], vec![read_back("mem-b", &["m2"], None)]);
        stage.process(&mut unforeseen, None).unwrap();
        assert!(stage.take_warnings().0.contains_key("read_back_evidence_unforeseen"), "m2 was read and not keyed");
    }

    #[test]
    fn named_evidence_is_full_past_its_bound_and_takes_a_message_again() {
        let mut named = NamedEvidence::default();
        for message in 0..NamedEvidence::MOST_MESSAGES {
            named.add("c1", &message.to_string());
        }
        named.add("c1", "0");
        assert!(!named.is_full(), "a message named again takes no room");
        named.add("c2", "0");
        assert!(named.is_full());
    }

    #[test]
    fn a_memory_whose_evidence_names_a_message_read_and_not_written_does_not_wait() {
        let mut stage = ReadBackLinks::default();
        let origin = Origin { file: "store.ump.ndjson".into(), offset: 0, index: 0 };
        let mut conversation = Conversation::empty(Provider::ChatGpt, "c1".into(), origin);
        let mut duplicate = Message::user_for_tests("m2", None, "I live in Leeds.", 0);
        duplicate.disposition = Disposition::Duplicate;
        conversation.messages = vec![Message::user_for_tests("m1", None, "I live in Leeds.", 0), duplicate];
        conversation.memories = vec![read_back("mem-a", &["m1", "m2"], None)];
        stage.process(&mut conversation, None).unwrap();
        let memory = &conversation.memories[0];
        assert!(memory.is_written(), "written with its record");
        let messages: Vec<&str> = memory.extracted.as_deref().unwrap().evidence.iter().map(|piece| piece.message_id.as_str()).collect();
        assert_eq!(messages, ["m1"], "the duplicate is not evidence here");
    }

    #[test]
    fn an_older_memory_keeps_the_newer_one_read_after_it_and_drops_one_never_written() {
        let mut stage = ReadBackLinks::default();
        let superseded_by = |id: &str, newer: &str| {
            let mut memory = read_back(id, &[], None);
            memory.extracted.as_deref_mut().unwrap().superseded_by = Some(newer.to_owned());
            memory
        };
        let mut older = record(vec![superseded_by("mem-old", "mem-new"), superseded_by("mem-orphan", "mem-never")]);
        let mut newer = record(vec![read_back("mem-new", &[], Some("mem-old"))]);
        stage.process(&mut older, None).unwrap();
        stage.process(&mut newer, None).unwrap();
        let mut written = Written::default();
        stage.end(&mut EndBoard::default(), &mut written).unwrap();
        let at_end: Vec<&MemoryRecord> = written.0.iter().flat_map(|record| &record.memories).collect();
        let newer_of = |at: usize| at_end[at].extracted.as_deref().unwrap().superseded_by.as_deref();
        assert_eq!((at_end[0].id.as_str(), newer_of(0)), ("mem-old", Some("mem-new")));
        assert_eq!((at_end[1].id.as_str(), newer_of(1)), ("mem-orphan", None), "a newer memory not written is not named");
        assert_eq!(supersedes(at_end[2]), Some("mem-old"));
    }

    #[test]
    fn evidence_in_a_conversation_read_later_is_kept() {
        let mut stage = ReadBackLinks::default();
        let mut memory = record(vec![read_back("mem-a", &["m1", "m9"], None)]);
        let origin = Origin { file: "store.ump.ndjson".into(), offset: 0, index: 1 };
        let mut later = Conversation::empty(Provider::ChatGpt, "c1".into(), origin);
        later.messages = vec![Message::user_for_tests("m9", None, "I live in Leeds.", 0)];
        stage.process(&mut memory, None).unwrap();
        stage.process(&mut later, None).unwrap();
        let mut written = Written::default();
        stage.end(&mut EndBoard::default(), &mut written).unwrap();
        let evidence = &written.0[0].memories[0].extracted.as_deref().unwrap().evidence;
        let messages: Vec<&str> = evidence.iter().map(|piece| piece.message_id.as_str()).collect();
        assert_eq!(messages, ["m9"], "m1 is written nowhere; m9 after the memory");
    }

    #[test]
    fn past_the_bound_a_memory_is_written_with_its_record_and_links_ahead_are_dropped_and_reported() {
        let mut stage = ReadBackLinks { waiting_bytes: MOST_WAITING_BYTES, ..ReadBackLinks::default() };
        let mut newer = record(vec![read_back("mem-new", &[], Some("mem-old"))]);
        stage.process(&mut newer, None).unwrap();
        assert!(newer.memories[0].is_written());
        assert_eq!(supersedes(&newer.memories[0]), None);
        let mut later = record(vec![read_back("mem-later", &[], Some("mem-old"))]);
        stage.process(&mut later, None).unwrap();
        assert_eq!(stage.take_warnings().0.get("read_back_wait_bound_reached"), Some(&1), "reported once");
    }

    #[test]
    fn memories_read_apart_never_wait_and_nothing_is_reported() {
        let mut stage = ReadBackLinks::never_waiting();
        let mut first = record(vec![read_back("mem-a", &["m1"], None), read_back("mem-b", &[], Some("mem-c"))]);
        stage.process(&mut first, None).unwrap();
        assert!(first.memories.iter().all(MemoryRecord::is_written), "written with their record, in order");
        let mut written = Written::default();
        stage.end(&mut EndBoard::default(), &mut written).unwrap();
        assert!(written.0.is_empty(), "nothing waited");
        assert!(stage.take_warnings().0.is_empty());
    }
}
