//! The sync's [`DeltaFilter`]: what the state says earlier runs emitted decides what this run
//! writes, and what this run emits goes into the state (inside the run's transaction).

use std::collections::{HashMap, HashSet};

use crate::error::RunError;
use crate::model::{Conversation, Disposition, Provider, SkipReason};
use crate::pipeline::delta::{DeltaFilter, Fingerprint, UnchangedIndex};
use crate::sources::InputPlan;

use super::state::{ConversationEntry, MessageKey, StateError, StateStore};

/// What became of the conversations of one sync run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeltaCounts {
    /// Skipped unread: byte for byte as an earlier run read them.
    pub unchanged: u64,
    /// Read before, changed since: only what is new in them is written.
    pub changed: u64,
    /// Changed bytes but nothing new to write (a new `update_time`, say): not written.
    pub changed_nothing_new: u64,
    /// Never emitted before (or retracted and back): written whole.
    pub new: u64,
    /// Emitted before and absent from this complete export: retracted.
    pub retracted: u64,
}

/// The filter of one run.
pub struct StateDelta<'a> {
    store: &'a mut dyn StateStore,
    run_id: String,
    /// A full run writes everything (the first one, or options changed); it still records.
    full: bool,
    /// Every conversation this run's inputs hold, by provider and id, with how it was counted
    /// (for retractions, and for a conversation regrouped into several pieces).
    seen: HashMap<(Provider, String), Counted>,
    counts: DeltaCounts,
    /// Providers of the inputs read whole (sorted, once each): only they retract.
    complete: Vec<Provider>,
    /// Why each other input may not retract anything.
    partial: Vec<String>,
}

impl<'a> StateDelta<'a> {
    /// A filter for run `run_id` over `store`, whose changes have begun.
    pub fn new(store: &'a mut dyn StateStore, run_id: String, full: bool) -> Self {
        StateDelta { store, run_id, full, seen: HashMap::new(), counts: DeltaCounts::default(), complete: Vec::new(), partial: Vec::new() }
    }

    /// The providers whose inputs were whole exports, as [`DeltaFilter::prepare`] saw them.
    pub fn complete_providers(&self) -> Vec<Provider> {
        self.complete.clone()
    }

    /// Why the other inputs may not retract anything ([`super::inputs::why_partial`]).
    pub fn partial_inputs(&self) -> &[String] {
        &self.partial
    }

    /// Counts so far.
    pub fn counts(&self) -> DeltaCounts {
        self.counts
    }

    /// Retracts every live conversation of `provider` this run did not see, and forgets the
    /// fingerprints it did not read; returns the retracted ids, sorted. Called only for
    /// providers whose export was read whole.
    ///
    /// # Errors
    /// When the state cannot be read or written.
    pub fn retract_unseen(&mut self, provider: Provider) -> Result<Vec<String>, StateError> {
        self.store.forget_unread_fingerprints(provider.as_str(), &self.run_id)?;
        let mut retracted = Vec::new();
        for conversation_id in self.store.live_conversations(provider.as_str())? {
            if !self.seen.contains_key(&(provider, conversation_id.clone())) {
                self.store.retract(provider.as_str(), &conversation_id, &self.run_id)?;
                retracted.push(conversation_id);
            }
        }
        self.counts.retracted += retracted.len() as u64;
        Ok(retracted)
    }
}

/// Which count a conversation went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counted {
    Unchanged,
    Changed,
    NothingNew,
    New,
}

impl DeltaCounts {
    fn count(&mut self, counted: Counted, change: i64) {
        let slot = match counted {
            Counted::Unchanged => &mut self.unchanged,
            Counted::Changed => &mut self.changed,
            Counted::NothingNew => &mut self.changed_nothing_new,
            Counted::New => &mut self.new,
        };
        *slot = slot.saturating_add_signed(change);
    }
}

/// The key a message is known by across runs: its id and its text, so an edit that keeps the
/// id is written again.
pub fn message_key(id: &str, text: &str) -> MessageKey {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&(id.len() as u64).to_le_bytes());
    hasher.update(id.as_bytes());
    hasher.update(text.as_bytes());
    let mut key = [0u8; 8];
    key.copy_from_slice(&hasher.finalize().as_bytes()[..8]);
    u64::from_le_bytes(key)
}

fn state_error(error: StateError) -> RunError {
    RunError::Internal(error.to_string())
}

impl DeltaFilter for StateDelta<'_> {
    fn prepare(&mut self, plans: &[InputPlan]) -> Result<UnchangedIndex, RunError> {
        for plan in plans {
            match super::inputs::why_partial(plan) {
                None => self.complete.push(plan.provider),
                Some(why) => self.partial.push(why),
            }
        }
        self.complete.sort_by_key(|provider| provider.as_str());
        self.complete.dedup();
        let mut index = UnchangedIndex::default();
        if self.full {
            return Ok(index);
        }
        let mut providers: Vec<Provider> = plans.iter().map(|plan| plan.provider).collect();
        providers.sort_by_key(|provider| provider.as_str());
        providers.dedup();
        for provider in providers {
            for (fingerprint, conversation_id) in self.store.fingerprints(provider.as_str()).map_err(state_error)? {
                index.insert(provider, fingerprint, conversation_id);
            }
        }
        Ok(index)
    }

    fn unchanged(&mut self, provider: Provider, conversation_id: &str, fingerprint: Fingerprint) -> Result<(), RunError> {
        self.store.put_fingerprint(provider.as_str(), &fingerprint, conversation_id, &self.run_id).map_err(state_error)?;
        // A conversation regrouped into several pieces counts once, as its first piece did.
        if let std::collections::hash_map::Entry::Vacant(slot) = self.seen.entry((provider, conversation_id.to_owned())) {
            slot.insert(Counted::Unchanged);
            self.counts.count(Counted::Unchanged, 1);
        }
        Ok(())
    }

    fn trim(&mut self, conversation: &mut Conversation, fingerprint: Fingerprint) -> Result<(), RunError> {
        let provider = conversation.provider;
        // Read in this run already: an earlier piece of a conversation regrouped into several
        // (a Gemini chat resumed after a long pause), or the same record in overlapping
        // exports. The state then holds what the earlier piece wrote.
        let earlier = self.seen.get(&(provider, conversation.id.clone())).copied();
        let before = self.store.conversation(provider.as_str(), &conversation.id).map_err(state_error)?.filter(|entry| !entry.retracted);
        let mut keys: Vec<MessageKey> = before.as_ref().map(|entry| entry.message_keys.clone()).unwrap_or_default();
        let writes_everything = self.full && earlier.is_none();
        let known: HashSet<MessageKey> = if writes_everything { HashSet::new() } else { keys.iter().copied().collect() };
        let mut written = 0usize;
        for message in &mut conversation.messages {
            match message.disposition {
                Disposition::Keep => {
                    let key = message_key(&message.id, &message.text);
                    if known.contains(&key) {
                        message.disposition = Disposition::Skip(SkipReason::EmittedBefore);
                    } else {
                        written += 1;
                        keys.push(key);
                    }
                }
                // Left out as a copy of a message written earlier: a later export that no
                // longer reads that earlier copy (its conversation is unchanged) must not
                // write this one.
                Disposition::Duplicate => keys.push(message_key(&message.id, &message.text)),
                Disposition::Skip(_) => {}
            }
        }
        keys.sort_unstable();
        keys.dedup();
        let counted = match &before {
            _ if self.full => Counted::New,
            None => Counted::New,
            Some(entry) if written == 0 && entry.title == conversation.title => {
                // Nothing a reader of the delta would see: the writers leave it out.
                conversation.is_repeat = true;
                Counted::NothingNew
            }
            Some(_) => Counted::Changed,
        };
        match earlier {
            None => {
                self.seen.insert((provider, conversation.id.clone()), counted);
                self.counts.count(counted, 1);
            }
            // A later piece that brings something new makes the conversation changed.
            Some(was @ (Counted::Unchanged | Counted::NothingNew)) if written > 0 => {
                self.counts.count(was, -1);
                self.counts.count(Counted::Changed, 1);
                self.seen.insert((provider, conversation.id.clone()), Counted::Changed);
            }
            Some(_) => {}
        }
        // Filed under the conversation's provider: for a provider's export, the input's, which
        // the index is looked up by (records of a memory-format input are never skipped).
        self.store.put_fingerprint(provider.as_str(), &fingerprint, &conversation.id, &self.run_id).map_err(state_error)?;
        let entry = ConversationEntry {
            provider: provider.as_str().to_owned(),
            conversation_id: conversation.id.clone(),
            title: conversation.title.clone(),
            message_keys: keys,
            first_run: before.map_or_else(|| self.run_id.clone(), |entry| entry.first_run),
            last_run: self.run_id.clone(),
            retracted: false,
        };
        self.store.put_conversation(&entry).map_err(state_error)
    }
}
