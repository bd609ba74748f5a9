//! Consolidates the candidates of a history into memories: the same thing said fifty times is
//! one memory with fifty pieces of evidence (its confidence grows with them), and a new value of
//! a single-valued slot (a new home, a new employer) is a newer memory that names the one it
//! supersedes; nothing is silently dropped. Ids come from the content, so a re-run gives the
//! same ids.

use std::collections::BTreeMap;

use super::{Candidate, MemoryType};
use crate::hash::sha256;
use crate::model::Micros;

/// One piece of evidence: where the user said it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The conversation.
    pub conversation_id: String,
    /// The message.
    pub message_id: String,
    /// The sentence's byte span in the message text.
    pub span: (usize, usize),
    /// The sentence, verbatim.
    pub text: String,
}

/// A consolidated memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// Deterministic id from type, slot and value (`mem-…`).
    pub id: String,
    /// What kind of memory it is.
    pub memory_type: MemoryType,
    /// The slot it fills.
    pub slot: &'static str,
    /// The statement about the user, as first said.
    pub statement: String,
    /// Every place the user said it, in input order.
    pub evidence: Vec<Evidence>,
    /// When it was first said.
    pub first_seen: Micros,
    /// When it was last said.
    pub last_seen: Micros,
    /// How sure: grows with each independent piece of evidence.
    pub confidence: f32,
    /// The memory of the same slot this one replaced (a new home supersedes the old one).
    pub supersedes: Option<String>,
}

/// Gathers candidates, in input order, into memories.
#[derive(Debug, Default)]
pub struct Consolidator {
    memories: Vec<Memory>,
    by_key: BTreeMap<String, usize>,
    /// The current memory of each single-valued slot, by (type, slot).
    current: BTreeMap<(MemoryType, &'static str), usize>,
}

impl Consolidator {
    /// Adds the candidates of one conversation.
    pub fn add(&mut self, conversation_id: &str, candidates: Vec<Candidate>) {
        for candidate in candidates {
            let key = memory_key(candidate.memory_type, candidate.slot, &candidate.value);
            let evidence = Evidence {
                conversation_id: conversation_id.to_owned(),
                message_id: candidate.message_id.clone(),
                span: candidate.span,
                text: candidate.evidence.clone(),
            };
            if let Some(&index) = self.by_key.get(&key) {
                let memory = &mut self.memories[index];
                memory.first_seen = memory.first_seen.min(candidate.time);
                memory.last_seen = memory.last_seen.max(candidate.time);
                memory.confidence = 1.0 - (1.0 - memory.confidence) * (1.0 - candidate.confidence);
                memory.evidence.push(evidence);
                if candidate.single_valued {
                    self.make_current(candidate.memory_type, candidate.slot, index);
                }
                continue;
            }
            let index = self.memories.len();
            self.memories.push(Memory {
                id: memory_id(&key),
                memory_type: candidate.memory_type,
                slot: candidate.slot,
                statement: candidate.statement,
                evidence: vec![evidence],
                first_seen: candidate.time,
                last_seen: candidate.time,
                confidence: candidate.confidence,
                supersedes: None,
            });
            self.by_key.insert(key, index);
            if candidate.single_valued {
                self.make_current(candidate.memory_type, candidate.slot, index);
            }
        }
    }

    /// Makes memory `index` the current value of its slot; the one it replaces is named in its
    /// `supersedes` (and stays among the memories).
    fn make_current(&mut self, memory_type: MemoryType, slot: &'static str, index: usize) {
        // Only a value first said later supersedes: a value said again after another keeps its
        // place (no memory supersedes one that supersedes it).
        if let Some(previous) = self.current.insert((memory_type, slot), index)
            && previous < index
            && self.memories[index].supersedes.is_none()
        {
            self.memories[index].supersedes = Some(self.memories[previous].id.clone());
        }
    }

    /// The memories, in the order they were first said.
    pub fn finish(self) -> Vec<Memory> {
        self.memories
    }
}

/// `mem-` and the first 10 bytes of the key's SHA-256 in hex.
fn memory_id(key: &str) -> String {
    let mut id = String::from("mem-");
    crate::hash::push_hex(&mut id, &sha256(key.as_bytes())[..10]);
    id
}

/// What makes two candidates the same memory: type, slot and the value in lowercase with its
/// spaces collapsed.
fn memory_key(memory_type: MemoryType, slot: &str, value: &str) -> String {
    let value: Vec<String> = value.split_whitespace().map(str::to_lowercase).collect();
    format!("{}\u{1f}{slot}\u{1f}{}", memory_type.as_str(), value.join(" "))
}
