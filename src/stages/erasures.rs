//! Erasures honoured in every output: a record erased for good from the run's memory store
//! (`memport forget --hard`, UMP `forget` with `hard: true`) is written by no sink of a later
//! run that reads the same export again, whatever the format.
//!
//! The store remembers each erasure by UMP record id, and a message's or memory's record id
//! is a function of its provider ids ([`message_record_id`], [`record_id`]), so the step
//! needs no other state. It runs on the worker pool once its batch is decoded, before extraction
//! reads the conversation: an erased message is `Skip(Erased)` (counted under the `erased`
//! policy), so nothing is extracted from it either, and a provider memory is marked erased.
//! Extracted memories are made only at the end of the run: the stage hands the ids to
//! extraction on the [`EndBoard`], which leaves an erased memory out and counts its
//! candidates; what other stages emit at the end (a sync's earlier memories written again) is
//! marked on its way to the sinks. A withdrawal of an erased memory (a sync retracting what an
//! earlier run wrote, a delta read back) is written, emptied of what the memory said, so
//! whoever holds the memory learns it is gone. The stage is in a run only when its store holds
//! erasures.

use std::collections::HashSet;
use std::sync::Arc;

use crate::error::RunError;
use crate::model::{Conversation, Disposition, ErasedMessage, SkipReason};
use crate::sources::DecodeOptions;
use crate::spec::ump::{message_record_id, record_id};
use crate::stages::{EndBoard, Found, Stage, WorkerStep};

/// The UMP record ids a memory store erased, and the erased messages among them by the ids
/// they were written under (for a sync to withdraw them from what earlier runs wrote).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ErasedIds(HashSet<String>, Vec<ErasedMessage>);

impl ErasedIds {
    /// The erased record ids.
    pub fn new(ids: HashSet<String>) -> Self {
        ErasedIds(ids, Vec::new())
    }

    /// The erased record ids, with the messages among them (sorted, each once).
    pub fn with_messages(ids: HashSet<String>, mut messages: Vec<ErasedMessage>) -> Self {
        messages.sort();
        messages.dedup();
        ErasedIds(ids, messages)
    }

    /// Whether no record was erased.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many records were erased.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The erased messages whose ids the stores kept, sorted.
    pub fn messages(&self) -> &[ErasedMessage] {
        &self.1
    }

    /// Whether the message `message_id` of `conversation_id` from `provider` was erased.
    pub fn has_message(&self, provider: &str, conversation_id: &str, message_id: &str) -> bool {
        !self.is_empty() && self.0.contains(&message_record_id(provider, conversation_id, message_id))
    }

    /// Whether the memory of memport id `memory_id` (a provider's or an extracted one) was
    /// erased.
    pub fn has_memory(&self, memory_id: &str) -> bool {
        !self.is_empty() && self.0.contains(&record_id(memory_id))
    }
}

/// The erasure stage of a run whose memory store erased records.
pub struct Erasures {
    erased: Arc<ErasedIds>,
}

impl Erasures {
    /// The stage for the ids `erased`.
    pub fn new(erased: ErasedIds) -> Self {
        Erasures { erased: Arc::new(erased) }
    }
}

/// [`Erasures`]' work on the worker pool.
struct MarkErased {
    erased: Arc<ErasedIds>,
}

impl WorkerStep for MarkErased {
    fn after_decode(&self, conversation: &mut Conversation, _options: &DecodeOptions, before: Option<Found>) -> Option<Found> {
        mark_erased(conversation, &self.erased);
        before
    }
}

/// Marks the messages and provider memories of `conversation` that `erased` holds.
pub fn mark_erased(conversation: &mut Conversation, erased: &ErasedIds) {
    let provider = conversation.provider.as_str();
    for message in &mut conversation.messages {
        if erased.has_message(provider, &conversation.id, &message.id) {
            message.disposition = Disposition::Skip(SkipReason::Erased);
        }
    }
    for memory in &mut conversation.memories {
        if erased.has_memory(&memory.id) {
            // A withdrawal (a sync retracting what an earlier run wrote, a delta read back)
            // still goes out, so whoever holds the memory learns it is gone, but with nothing
            // of what it said.
            if memory.is_withdrawn() {
                memory.empty_of_what_it_said();
            } else {
                memory.erased = true;
            }
        }
    }
}

impl Stage for Erasures {
    fn name(&self) -> &'static str {
        "erasures"
    }

    fn worker(&self) -> Option<Arc<dyn WorkerStep>> {
        Some(Arc::new(MarkErased { erased: self.erased.clone() }))
    }

    fn process(&mut self, _conversation: &mut Conversation, _found: Option<Found>) -> Result<(), RunError> {
        Ok(())
    }

    fn prepare_end(&mut self, board: &mut EndBoard) -> Result<(), RunError> {
        board.erased = Some(self.erased.clone());
        Ok(())
    }

    /// What other stages emit at the end (a sync writing an earlier memory again, marked
    /// retracted, from its state) is marked too: an erased memory is written by no sink, but
    /// as a withdrawal emptied of what it said.
    fn pass_emitted(&mut self, records: &mut [Conversation]) -> Result<(), RunError> {
        for record in records {
            mark_erased(record, &self.erased);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MemoryKind, MemoryRecord, Message, Origin, Provider};

    #[test]
    fn an_erased_memory_that_is_withdrawn_goes_out_withdrawn_with_nothing_it_said() {
        let origin = Origin { file: "delta.ump.json".into(), offset: 0, index: 0 };
        let mut conversation = Conversation::empty(Provider::ChatGpt, "c1".into(), origin);
        let labels = vec!["project:garden".to_owned(), "ump-kind:semantic".to_owned()];
        let mut withdrawn = MemoryRecord::new(Provider::ChatGpt, MemoryKind::Fact, "Lives in Leeds".into(), 1, labels);
        withdrawn.retracted_in_input = true;
        let id = withdrawn.id.clone();
        conversation.memories = vec![withdrawn];
        mark_erased(&mut conversation, &ErasedIds::new([record_id(&id)].into_iter().collect()));
        let memory = &conversation.memories[0];
        assert!(memory.is_written() && memory.is_withdrawn(), "still written, as a withdrawal");
        assert_eq!((memory.id.as_str(), memory.text.as_str()), (id.as_str(), crate::model::ERASED_MEMORY_TEXT));
        assert_eq!(memory.labels, ["ump-kind:semantic"], "only the label naming its type stays");
    }

    #[test]
    fn an_erased_message_is_skipped_and_an_erased_memory_marked_and_nothing_else() {
        let origin = Origin { file: "test.json".into(), offset: 0, index: 0 };
        let mut conversation = Conversation::empty(Provider::ChatGpt, "c1".into(), origin);
        conversation.messages.push(Message::user_for_tests("m1", None, "I live in Leeds", 1));
        conversation.messages.push(Message::user_for_tests("m2", Some("m1"), "I have a cat", 2));
        let kept = MemoryRecord::new(Provider::ChatGpt, MemoryKind::Fact, "Likes tea".into(), 1, Vec::new());
        let gone = MemoryRecord::new(Provider::ChatGpt, MemoryKind::Fact, "Lives in Leeds".into(), 1, Vec::new());
        let erased = ErasedIds::new([message_record_id("chatgpt", "c1", "m1"), record_id(&gone.id)].into_iter().collect());
        conversation.memories = vec![kept, gone];
        mark_erased(&mut conversation, &erased);
        let dispositions: Vec<Disposition> = conversation.messages.iter().map(|message| message.disposition).collect();
        assert_eq!(dispositions, [Disposition::Skip(SkipReason::Erased), Disposition::Keep]);
        let erased_memories: Vec<bool> = conversation.memories.iter().map(|memory| memory.erased).collect();
        assert_eq!(erased_memories, [false, true]);
        assert!(!conversation.memories[1].is_written());
    }

    #[test]
    fn the_same_ids_of_another_provider_or_conversation_are_not_erased() {
        let erased = ErasedIds::new([message_record_id("chatgpt", "c1", "m1")].into_iter().collect());
        assert!(erased.has_message("chatgpt", "c1", "m1"));
        assert!(!erased.has_message("claude", "c1", "m1"));
        assert!(!erased.has_message("chatgpt", "c2", "m1"));
        assert!(!ErasedIds::default().has_memory("chatgpt.mem.00"));
    }
}
