//! Keeps what extracted memories read back from a memory format link to inside the output:
//! their evidence names messages, and a newer memory the one it supersedes, which a memory
//! extracted in the run always finds written (it was extracted from them), but a memory read
//! back may not: a store's `DNA_ONLY` or `SINCE` export holds no messages or only later ones,
//! and a message may be a duplicate or skipped here. An AIMEM bundle with an edge to a chunk it
//! does not hold is invalid, and so is a PAM reference to a missing memory. So, in input order,
//! a read-back memory keeps the evidence of messages already written in this run and the
//! supersession of a memory already written; and each entity it names is marked as first
//! mentioned on the first written memory naming it, so formats with an entity table write it
//! once. The run's own extraction marks its memories' entities itself.
//!
//! On only when an input is UMP or PAM (the memory formats that carry extracted memories whole):
//! it keys every written message, which other runs need not pay for.

use crate::key_set::KeySet;
use crate::model::{Conversation, Disposition, Warnings};
use crate::stages::Stage;

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

/// The stage.
#[derive(Default)]
pub struct ReadBackLinks {
    written: KeySet,
    warnings: Warnings,
    /// Where keys are joined ([`key`]).
    buffer: Vec<u8>,
}

impl ReadBackLinks {
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
}

impl Stage for ReadBackLinks {
    fn name(&self) -> &'static str {
        "read_back_links"
    }

    fn process(&mut self, conversation: &mut Conversation, _found: Option<crate::stages::Found>) -> Result<(), crate::error::RunError> {
        let provider = conversation.provider.as_str();
        for message in &conversation.messages {
            if message.disposition == Disposition::Keep {
                let key = key(&mut self.buffer, &["message", provider, &conversation.id, &message.id]);
                self.add(key);
            }
        }
        for memory in &mut conversation.memories {
            if !memory.is_written() {
                continue;
            }
            // Only memories read from the input are here: extraction's come at the run's end.
            if let Some(extracted) = memory.extracted.as_deref_mut() {
                let mut evidence = std::mem::take(&mut extracted.evidence);
                evidence.retain(|piece| {
                    let key = key(&mut self.buffer, &["message", piece.provider.as_str(), &piece.conversation_id, &piece.message_id]);
                    self.holds(key)
                });
                extracted.evidence = evidence;
                if let Some(older) = extracted.supersedes.take()
                    && let key = key(&mut self.buffer, &["memory", &older])
                    && self.holds(key)
                {
                    extracted.supersedes = Some(older);
                }
                for entity in &mut extracted.entities {
                    let key = key(&mut self.buffer, &["entity", &entity.id]);
                    entity.first_mention = self.add(key);
                }
            }
            let key = key(&mut self.buffer, &["memory", &memory.id]);
            self.add(key);
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
    use crate::model::extracted::{EntityKind, EntityRef, Evidence, Extracted, MemoryType};
    use crate::model::{MemoryKind, MemoryRecord, Message, Origin, Provider};

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
    fn a_read_back_memory_keeps_only_links_to_what_is_written_before_it() {
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
        let extracted: Vec<&Extracted> = conversation.memories.iter().map(|memory| memory.extracted.as_deref().unwrap()).collect();
        let messages = |at: usize| extracted[at].evidence.iter().map(|piece| piece.message_id.as_str()).collect::<Vec<_>>();
        assert_eq!(messages(0), ["m1"], "a duplicate and an absent message are not evidence here");
        assert_eq!(extracted[1].supersedes.as_deref(), Some("mem-a"));
        assert_eq!(extracted[3].supersedes, None, "a memory not written is not superseded here");
        let firsts: Vec<bool> = extracted.iter().map(|extracted| extracted.entities[0].first_mention).collect();
        assert_eq!(firsts, [true, false, false, false], "the entity is first named on the first written memory");
    }
}
