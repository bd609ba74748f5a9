//! Consolidates the candidates of a history into memories: the same thing said fifty times is
//! one memory with fifty pieces of evidence (its confidence grows with them), and a new value of
//! a single-valued slot (a new home, a new employer) is a newer memory that names the one it
//! supersedes; nothing is silently dropped. Ids come from the content, so a re-run (or next
//! month's export) gives the same ids.
//!
//! Memory stays bounded: a memory in memory is its summary (type, slot, statement, times,
//! confidence, count); the evidence goes to an [`EvidenceSpool`] on disk and is read back, one
//! batch of memories at a time, when the memories are written.
//!
//! Every evidence quote any format writes enters here, and is cleaned before it is spooled
//! ([`quote_of`]): the secrets and contact details said in the same sentence as the fact are
//! masked ([`secrets::clean_quote`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;

use super::Candidate;
use super::entities::{EntityIndex, entity_of};
use super::evidence_spool::{EvidenceSpool, NO_PIECE};
use super::secrets;
use crate::hash::sha256;
use crate::model::extracted::{Evidence, Extracted, MemoryType};
use crate::model::{MemoryRecord, Micros, Provider};
use crate::stages::erasures::ErasedIds;

/// What happens to memories below the confidence floor and to contact details.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConsolidateOptions {
    /// Memories whose consolidated confidence is below this are dropped and counted.
    pub min_confidence: f32,
    /// Whether contact details (e-mail, phone, street address) are written (marked not
    /// exportable where the format can say so) or dropped and counted.
    pub keep_personal: bool,
}

impl Default for ConsolidateOptions {
    fn default() -> Self {
        ConsolidateOptions { min_confidence: DEFAULT_MIN_CONFIDENCE, keep_personal: false }
    }
}

/// The default confidence floor: a single hedged statement ("I think I might move to Berlin")
/// stays out unless it is said again.
pub const DEFAULT_MIN_CONFIDENCE: f32 = 0.5;

/// How every candidate of a run ended: the counts balance,
/// `candidates = written + superseded_kept + merged + dropped_*`.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MemoryCounts {
    /// Candidates found in the user's sentences (those dropped for secrets included).
    pub candidates: u64,
    /// Memories written that are current.
    pub written: u64,
    /// Memories written that a newer value of the same slot superseded (kept, marked).
    pub superseded_kept: u64,
    /// Candidates that became evidence of a memory written already.
    pub merged: u64,
    /// Candidates whose sentence held a secret.
    pub dropped_secret: u64,
    /// Candidates of memories below `--min-confidence`.
    pub dropped_low_confidence: u64,
    /// Candidates of contact details under `--extract-pii drop`.
    pub dropped_personal: u64,
    /// Candidates from messages that are not written (duplicates of earlier messages).
    pub dropped_unwritten_message: u64,
    /// Candidates of memories erased for good from the run's memory store.
    pub dropped_erased: u64,
    /// Candidates of memories the input already held (memport's own output read again): the
    /// memory is written once, as read.
    pub already_in_input: u64,
    /// Memories written, by type name.
    pub by_type: BTreeMap<&'static str, u64>,
}

impl MemoryCounts {
    /// Whether every candidate is accounted for.
    pub fn balances(&self) -> bool {
        self.candidates
            == self.written
                + self.superseded_kept
                + self.merged
                + self.dropped_secret
                + self.dropped_low_confidence
                + self.dropped_personal
                + self.dropped_unwritten_message
                + self.dropped_erased
                + self.already_in_input
    }
}

/// A memory while its history is read: everything but its evidence, which is on disk.
#[derive(Debug)]
struct Summary {
    id: String,
    memory_type: MemoryType,
    slot: &'static str,
    single_valued: bool,
    personal: bool,
    value: String,
    statement: String,
    language: &'static str,
    provider: Provider,
    confidence: f32,
    first_seen: Micros,
    last_seen: Micros,
    evidence_count: u64,
    last_piece: u64,
    /// Whether a candidate said the value changed ("I moved to", "I now work at").
    changed: bool,
}

/// A memory an earlier sync wrote as the current value of a single-valued slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierCurrent {
    /// Its id.
    pub id: String,
    /// Its type.
    pub memory_type: MemoryType,
    /// Its slot.
    pub slot: String,
    /// When it was last said.
    pub last_seen: Micros,
}

/// An earlier sync's current value and how this run's memories of its slot relate to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierLink {
    /// The earlier memory.
    pub id: String,
    /// The memory of this run said before it (this run brought an older statement).
    pub supersedes: Option<String>,
    /// The memory of this run that replaces it.
    pub superseded_by: Option<String>,
}

impl EarlierLink {
    fn of(current: &EarlierCurrent) -> EarlierLink {
        EarlierLink { id: current.id.clone(), supersedes: None, superseded_by: None }
    }
}

/// A member of a slot's order: a memory of this run, or an earlier sync's current value.
#[derive(Debug, Clone, Copy)]
enum Member {
    Run(usize),
    Earlier(usize),
}

/// What the input already holds of what extraction writes: memport's own output read again.
#[derive(Debug, Default)]
pub struct InInput {
    /// The ids of the extracted memories it holds.
    pub memories: HashSet<String>,
    /// The entities its memories wrote.
    pub entities: EntityIndex,
}

/// Gathers candidates, in input order, into memories.
pub struct Consolidator {
    memories: Vec<Summary>,
    by_key: HashMap<String, usize>,
    spool: EvidenceSpool,
    counts: MemoryCounts,
}

impl Consolidator {
    /// An empty consolidator.
    ///
    /// # Errors
    /// When the evidence spool cannot be made (no temporary file).
    pub fn new() -> io::Result<Self> {
        Ok(Consolidator { memories: Vec::new(), by_key: HashMap::new(), spool: EvidenceSpool::new()?, counts: MemoryCounts::default() })
    }

    /// Counts candidates dropped before consolidation: their sentence held a secret.
    pub fn count_secret(&mut self, dropped: u64) {
        self.counts.candidates += dropped;
        self.counts.dropped_secret += dropped;
    }

    /// Counts candidates dropped because their message is not written.
    pub fn count_unwritten(&mut self, dropped: u64) {
        self.counts.candidates += dropped;
        self.counts.dropped_unwritten_message += dropped;
    }

    /// Adds the candidates of one conversation.
    ///
    /// # Errors
    /// When the evidence spool cannot be written.
    pub fn add(&mut self, provider: Provider, conversation_id: &str, candidates: Vec<Candidate>) -> io::Result<()> {
        for candidate in candidates {
            self.counts.candidates += 1;
            let key = memory_key(candidate.memory_type, candidate.slot, &candidate.value, candidate.negated);
            let personal = super::slots::is_personal_slot(candidate.slot);
            let evidence = Evidence {
                provider,
                conversation_id: conversation_id.to_owned(),
                message_id: candidate.message_id,
                span: candidate.span,
                text: quote_of(candidate.evidence, personal, candidate.evidence_clean),
                time: candidate.time,
            };
            let index = match self.by_key.get(&key) {
                Some(&index) => {
                    let memory = &mut self.memories[index];
                    memory.first_seen = memory.first_seen.min(candidate.time);
                    memory.last_seen = memory.last_seen.max(candidate.time);
                    memory.confidence = 1.0 - (1.0 - memory.confidence) * (1.0 - candidate.confidence);
                    memory.changed |= candidate.change;
                    index
                }
                None => {
                    let index = self.memories.len();
                    self.memories.push(Summary {
                        id: memory_id(&key),
                        memory_type: candidate.memory_type,
                        slot: candidate.slot,
                        single_valued: candidate.single_valued,
                        personal: super::slots::is_personal_slot(candidate.slot),
                        value: candidate.value,
                        statement: candidate.statement,
                        language: candidate.language.tag(),
                        provider,
                        confidence: candidate.confidence,
                        first_seen: candidate.time,
                        last_seen: candidate.time,
                        evidence_count: 0,
                        last_piece: NO_PIECE,
                        changed: candidate.change,
                    });
                    self.by_key.insert(key, index);
                    index
                }
            };
            let memory = &mut self.memories[index];
            memory.last_piece = self.spool.append(memory.last_piece, &evidence)?;
            memory.evidence_count += 1;
        }
        Ok(())
    }

    /// Decides which memories are written and links supersession; the memories are then read
    /// in batches from the result. `in_input` holds what the input already carried (an
    /// extracted memory read back from memport's output keeps its id, and its entities theirs):
    /// none of it is written twice.
    ///
    /// Within a single-valued slot, the value said last is current: the slot's memories in the
    /// order of when they were last said (ties by id, so input order does not matter) each
    /// supersede the one before. A value said again after another is current again. `earlier`
    /// holds the current values an earlier sync wrote (none outside a sync): one that this run
    /// did not say again takes its place in its slot's order, so a new value supersedes it
    /// across runs ([`Consolidated::earlier_links`]).
    ///
    /// # Errors
    /// When the evidence spool cannot be flushed.
    pub fn finish(
        mut self,
        options: ConsolidateOptions,
        in_input: InInput,
        earlier: &[EarlierCurrent],
        erased: &ErasedIds,
    ) -> io::Result<Consolidated> {
        self.spool.flush()?;
        let mut written = vec![true; self.memories.len()];
        for (index, memory) in self.memories.iter().enumerate() {
            if in_input.memories.contains(&memory.id) {
                written[index] = false;
                self.counts.already_in_input += memory.evidence_count;
            } else if erased.has_memory(&memory.id) {
                // Erased in the store: written nowhere, and it supersedes nothing.
                written[index] = false;
                self.counts.dropped_erased += memory.evidence_count;
            } else if memory.personal && !options.keep_personal {
                written[index] = false;
                self.counts.dropped_personal += memory.evidence_count;
            } else if memory.confidence < options.min_confidence {
                written[index] = false;
                self.counts.dropped_low_confidence += memory.evidence_count;
            }
        }
        let mut slots: BTreeMap<(MemoryType, &str), Vec<Member>> = BTreeMap::new();
        for (index, memory) in self.memories.iter().enumerate() {
            if memory.single_valued && written[index] {
                slots.entry((memory.memory_type, memory.slot)).or_default().push(Member::Run(index));
            }
        }
        let said_now: HashSet<&str> = self.memories.iter().map(|memory| memory.id.as_str()).collect();
        for (index, current) in earlier.iter().enumerate() {
            // Only slots this run says something in change; a value said again is in the run.
            if !said_now.contains(current.id.as_str())
                && !erased.has_memory(&current.id)
                && let Some(members) = slots.get_mut(&(current.memory_type, current.slot.as_str()))
            {
                members.push(Member::Earlier(index));
            }
        }
        let mut supersedes: Vec<Option<String>> = vec![None; self.memories.len()];
        let mut superseded_by: Vec<Option<String>> = vec![None; self.memories.len()];
        let mut earlier_links: BTreeMap<usize, EarlierLink> = BTreeMap::new();
        let order = |member: &Member| match *member {
            Member::Run(index) => (self.memories[index].last_seen, self.memories[index].id.as_str()),
            Member::Earlier(index) => (earlier[index].last_seen, earlier[index].id.as_str()),
        };
        // A value replaces the current one only on clear evidence: the user said it changed,
        // or said it more than once. A one-off mention (a pasted letter that slipped through,
        // a joke) stays a memory of its own but never makes the established value "no longer
        // current".
        let establishes = |member: &Member| match *member {
            Member::Run(index) => self.memories[index].changed || self.memories[index].evidence_count >= 2,
            Member::Earlier(_) => true,
        };
        for members in slots.values_mut() {
            members.sort_by(|a, b| order(a).cmp(&order(b)));
            let mut chain: Vec<Member> = Vec::with_capacity(members.len());
            for member in members.iter() {
                if chain.is_empty() || establishes(member) {
                    chain.push(*member);
                }
            }
            for pair in chain.windows(2) {
                let (older, newer) = (order(&pair[0]).1.to_owned(), order(&pair[1]).1.to_owned());
                match pair[1] {
                    Member::Run(index) => supersedes[index] = Some(older.clone()),
                    Member::Earlier(index) => {
                        earlier_links.entry(index).or_insert_with(|| EarlierLink::of(&earlier[index])).supersedes = Some(older.clone())
                    }
                }
                match pair[0] {
                    Member::Run(index) => superseded_by[index] = Some(newer),
                    Member::Earlier(index) => {
                        earlier_links.entry(index).or_insert_with(|| EarlierLink::of(&earlier[index])).superseded_by = Some(newer)
                    }
                }
            }
        }
        for (index, memory) in self.memories.iter().enumerate() {
            if !written[index] {
                continue;
            }
            if superseded_by[index].is_some() {
                self.counts.superseded_kept += 1;
            } else {
                self.counts.written += 1;
            }
            self.counts.merged += memory.evidence_count - 1;
            *self.counts.by_type.entry(memory.memory_type.as_str()).or_insert(0) += 1;
        }
        Ok(Consolidated {
            memories: self.memories,
            written,
            supersedes,
            superseded_by,
            earlier_links: earlier_links.into_values().collect(),
            spool: self.spool,
            entities: in_input.entities,
            next: 0,
            counts: self.counts,
        })
    }
}

/// Consolidated memories, read out in batches with their evidence.
pub struct Consolidated {
    memories: Vec<Summary>,
    written: Vec<bool>,
    supersedes: Vec<Option<String>>,
    superseded_by: Vec<Option<String>>,
    earlier_links: Vec<EarlierLink>,
    spool: EvidenceSpool,
    entities: EntityIndex,
    next: usize,
    counts: MemoryCounts,
}

impl Consolidated {
    /// How every candidate ended.
    pub fn counts(&self) -> &MemoryCounts {
        &self.counts
    }

    /// The current values of earlier syncs that this run's memories now stand beside in their
    /// slot, with their new links (sorted by id): they are written again, marked.
    pub fn earlier_links(&self) -> &[EarlierLink] {
        &self.earlier_links
    }

    /// The next (up to) `most` memories to write, in the order they were first said, with the
    /// provider of their first evidence; fewer when their evidence is plentiful; empty when all
    /// were read.
    ///
    /// # Errors
    /// When the evidence spool cannot be read.
    pub fn next_batch(&mut self, most: usize) -> io::Result<Vec<(Provider, MemoryRecord)>> {
        let mut batch = Vec::new();
        // Evidence is read back into memory with its memory: a batch stops once it holds this
        // many pieces, so memories said thousands of times go out a few at a time.
        let mut pieces = 0;
        while batch.len() < most && pieces < EVIDENCE_PER_BATCH && self.next < self.memories.len() {
            let index = self.next;
            self.next += 1;
            if !self.written[index] {
                continue;
            }
            let memory = &self.memories[index];
            pieces += memory.evidence_count;
            let evidence = self.spool.chain(memory.last_piece)?;
            let entities = entity_of(memory.memory_type, memory.slot, &memory.value, &memory.statement)
                .map(|(kind, name)| self.entities.mention(kind, name, memory.first_seen))
                .into_iter()
                .collect();
            let extracted = Extracted {
                memory_type: memory.memory_type,
                slot: memory.slot,
                value: memory.value.clone(),
                language: memory.language,
                confidence: memory.confidence,
                evidence_count: memory.evidence_count,
                evidence,
                first_seen: memory.first_seen,
                last_seen: memory.last_seen,
                supersedes: self.supersedes[index].clone(),
                superseded_by: self.superseded_by[index].clone(),
                personal: memory.personal,
                entities,
                retracted: false,
            };
            let record = MemoryRecord {
                id: memory.id.clone(),
                kind: memory.memory_type.memory_kind(),
                text: memory.statement.clone(),
                created_at: memory.first_seen,
                labels: Vec::new(),
                is_duplicate: false,
                exportable: true,
                erased: false,
                retracted_in_input: false,
                written_at_end: false,
                embedding: None,
                extracted: Some(Box::new(extracted)),
            };
            batch.push((memory.provider, record));
        }
        Ok(batch)
    }
}

/// A candidate's sentence as its memory's evidence quote: secrets masked always (with or
/// without `--redact secrets`: a secret is never part of a memory), and contact details masked
/// unless the memory is itself one. Such a memory is written only under `--extract-pii keep`,
/// marked not for export, so a contact detail reaches a quote only where the user asked for
/// contact details and the record says it is personal. A sentence extraction found `clean` (no
/// secret, no contact detail) is not looked through again.
fn quote_of(sentence: String, personal: bool, clean: bool) -> String {
    if clean {
        return sentence;
    }
    let cleaned = if personal { secrets::mask_secrets(&sentence) } else { secrets::clean_quote(&sentence) };
    match cleaned {
        Cow::Owned(cleaned) => cleaned,
        Cow::Borrowed(_) => sentence,
    }
}

/// Most pieces of evidence a batch of memories read back holds (more only when one memory
/// alone has more).
const EVIDENCE_PER_BATCH: u64 = 4096;

/// How every extracted memory's id starts.
pub const EXTRACTED_ID_PREFIX: &str = "mem-";

/// `mem-` and the first 10 bytes of the key's SHA-256 in hex.
fn memory_id(key: &str) -> String {
    let mut id = String::from(EXTRACTED_ID_PREFIX);
    crate::hash::push_hex(&mut id, &sha256(key.as_bytes())[..10]);
    id
}

/// What makes two candidates the same memory: type, slot and the value's content words, each
/// cut to a short stem and put in order, so the same thing said in other words of the same
/// root or order ("making videos for social media", "make social media videos") is one memory;
/// and whether it is negated, so "is not a vegetarian" is never "is a vegetarian" said again
/// (a positive statement's key has no mark, so its id is as it was).
fn memory_key(memory_type: MemoryType, slot: &str, value: &str, negated: bool) -> String {
    let lower = value.to_lowercase();
    let mut stems: Vec<String> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '+' && c != '#')
        .filter(|word| !word.is_empty() && !KEY_STOP_WORDS.contains(word))
        .map(|word| word.chars().take(5).collect())
        .collect();
    if stems.is_empty() {
        stems = lower.split_whitespace().map(str::to_owned).collect();
    }
    stems.sort_unstable();
    stems.dedup();
    let polarity = if negated { "\u{1f}not" } else { "" };
    format!("{}\u{1f}{slot}\u{1f}{}{polarity}", memory_type.as_str(), stems.join(" "))
}

/// Words that do not tell two values apart.
const KEY_STOP_WORDS: &[&str] = &[
    "a", "an", "the", "to", "of", "for", "on", "in", "at", "with", "and", "or", "my", "their", "some", "more", "really", "very", "der",
    "die", "das", "ein", "eine", "le", "la", "les", "un", "une", "el", "los", "las", "una", "de", "à", "en", "y", "et", "und", "a", "v",
    "na",
];

#[cfg(test)]
mod quote_tests {
    use super::quote_of;

    #[test]
    fn quotes_mask_secrets_and_contact_details_unless_the_memory_is_the_contact_detail() {
        let sentence = "I'm a nurse, mail jo@example.org, wifi password at work is Tr0ub4dor&3".to_owned();
        assert_eq!(
            quote_of(sentence.clone(), false, false),
            "I'm a nurse, mail [REDACTED:email], wifi password at work is [REDACTED:password]"
        );
        assert_eq!(quote_of(sentence, true, false), "I'm a nurse, mail jo@example.org, wifi password at work is [REDACTED:password]");
        assert_eq!(quote_of("I live in Leeds.".to_owned(), false, false), "I live in Leeds.");
    }
}
