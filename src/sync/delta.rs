//! The sync's [`DeltaFilter`]: what the state says earlier runs emitted decides what this run
//! writes, and what this run emits goes into the state (inside the run's transaction).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::error::RunError;
use crate::model::extracted::{Extracted, MemoryType};
use crate::model::{Conversation, Disposition, ERASED_MEMORY_TEXT, MemoryRecord, Micros, Provider, RetractedConversation, SkipReason};
use crate::pipeline::delta::{Conclusion, DeltaFilter, Fingerprint, UnchangedIndex};
use crate::sources::InputPlan;
use crate::spec::ump::message_record_id;
use crate::stages::erasures::ErasedIds;
use crate::stages::extract::consolidate::{EarlierCurrent, EarlierLink};
use crate::stages::extract::language::Language;

use super::state::{ConversationEntry, MemoryEntry, MessageKey, StateError, StateStore, conversation_key};

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
    /// Messages an earlier run wrote that the memory store erased since: withdrawn.
    pub messages_withdrawn: u64,
}

/// What became of the extracted memories of one sync run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryDeltaCounts {
    /// Never written before (or retracted and said again): written.
    pub new: u64,
    /// Written before and said again: written with every run's evidence count and this run's
    /// evidence.
    pub reinforced: u64,
    /// Earlier runs' current values that a value found now supersedes (or that supersede one
    /// found now, said earlier): written again with the link.
    pub superseded_earlier: u64,
    /// Written before and said only in conversations now retracted: written again, retracted.
    pub retracted: u64,
    /// Written before and erased in the memory store since: written again, retracted, with
    /// nothing of what they said (which the state forgets too).
    pub erased: u64,
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
    /// The run's export time (retractions carry it).
    exported_at: Micros,
    memory_counts: MemoryDeltaCounts,
    /// What [`DeltaFilter::conclude`] retracted.
    retracted_conversations: Vec<RetractedConversation>,
}

impl<'a> StateDelta<'a> {
    /// A filter for run `run_id` (exported at `exported_at`) over `store`, whose changes have
    /// begun.
    pub fn new(store: &'a mut dyn StateStore, run_id: String, exported_at: Micros, full: bool) -> Self {
        StateDelta {
            store,
            run_id,
            full,
            seen: HashMap::new(),
            counts: DeltaCounts::default(),
            complete: Vec::new(),
            partial: Vec::new(),
            exported_at,
            memory_counts: MemoryDeltaCounts::default(),
            retracted_conversations: Vec::new(),
        }
    }

    /// What became of the extracted memories.
    pub fn memory_counts(&self) -> MemoryDeltaCounts {
        self.memory_counts
    }

    /// The conversations the run retracted, once [`DeltaFilter::conclude`] ran.
    pub fn retracted(&self) -> &[RetractedConversation] {
        &self.retracted_conversations
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
    fn retract_unseen(&mut self, provider: Provider) -> Result<Vec<String>, StateError> {
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
    RunError::State(error.to_string())
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
            created_at: conversation.created_at,
            retracted: false,
        };
        self.store.put_conversation(&entry).map_err(state_error)
    }

    fn earlier_currents(&mut self) -> Result<Vec<EarlierCurrent>, RunError> {
        // A full run writes every memory again as this run finds it.
        if self.full {
            return Ok(Vec::new());
        }
        let currents = self.store.current_memories().map_err(state_error)?;
        Ok(currents
            .into_iter()
            .filter_map(|entry| {
                Some(EarlierCurrent {
                    memory_type: MemoryType::named(&entry.memory_type)?,
                    id: entry.memory_id,
                    slot: entry.slot,
                    last_seen: entry.last_seen,
                })
            })
            .collect())
    }

    fn trim_memories(&mut self, records: &mut [Conversation]) -> Result<(), RunError> {
        for memory in records.iter_mut().flat_map(|record| record.memories.iter_mut()) {
            let Some(extracted) = memory.extracted.as_deref_mut() else { continue };
            let before = self.store.memory(&memory.id).map_err(state_error)?.filter(|entry| !entry.retracted);
            let mut conversations: Vec<u64> =
                extracted.evidence.iter().map(|evidence| conversation_key(evidence.provider.as_str(), &evidence.conversation_id)).collect();
            match before.as_ref().filter(|_| !self.full) {
                // Said again: the memory carries every run's evidence count and confidence; its
                // evidence list holds what this run found.
                Some(entry) => {
                    extracted.evidence_count += entry.evidence_count;
                    let confidence = 1.0 - (1.0 - entry.confidence) * (1.0 - f64::from(extracted.confidence));
                    extracted.confidence = confidence as f32;
                    extracted.first_seen = extracted.first_seen.min(entry.first_seen);
                    extracted.last_seen = extracted.last_seen.max(entry.last_seen);
                    memory.created_at = extracted.first_seen;
                    conversations.extend_from_slice(&entry.conversations);
                    self.memory_counts.reinforced += 1;
                }
                None => self.memory_counts.new += 1,
            }
            conversations.sort_unstable();
            conversations.dedup();
            let single_valued = crate::stages::extract::slots::slot_named(extracted.slot).is_some_and(|(_, single)| single);
            let entry = MemoryEntry {
                memory_id: memory.id.clone(),
                provider: record_provider(extracted),
                memory_type: extracted.memory_type.as_str().to_owned(),
                slot: extracted.slot.to_owned(),
                single_valued,
                value: extracted.value.clone(),
                statement: memory.text.clone(),
                language: extracted.language.to_owned(),
                confidence: f64::from(extracted.confidence),
                evidence_count: extracted.evidence_count,
                first_seen: extracted.first_seen,
                last_seen: extracted.last_seen,
                personal: extracted.personal,
                conversations,
                supersedes: extracted.supersedes.clone(),
                superseded_by: extracted.superseded_by.clone(),
                first_run: before.map_or_else(|| self.run_id.clone(), |entry| entry.first_run),
                last_run: self.run_id.clone(),
                retracted: false,
            };
            self.store.put_memory(&entry).map_err(state_error)?;
        }
        Ok(())
    }

    fn conclude(&mut self, links: &[EarlierLink], erased: &ErasedIds) -> Result<Conclusion, RunError> {
        let mut retracted = Vec::new();
        for provider in self.complete.clone() {
            for conversation_id in self.retract_unseen(provider).map_err(state_error)? {
                let entry = self.store.conversation(provider.as_str(), &conversation_id).map_err(state_error)?;
                retracted.push(RetractedConversation {
                    provider,
                    title: entry.as_ref().and_then(|entry| entry.title.clone()),
                    created_at: entry.and_then(|entry| entry.created_at),
                    conversation_id,
                    retracted_by: self.run_id.clone(),
                    retracted_at: self.exported_at,
                    messages: Vec::new(),
                });
            }
        }
        retracted.sort_by(|a, b| (a.provider.as_str(), &a.conversation_id).cmp(&(b.provider.as_str(), &b.conversation_id)));
        // Each memory written again, with the links it is written with: only those made in
        // this run, whose other end this run writes too (an AIMEM edge must not leave its bundle).
        let mut again: BTreeMap<String, (MemoryEntry, EarlierLink)> = BTreeMap::new();
        // Earlier current values this run's memories now stand beside: written again with
        // their new links, so no value is superseded silently.
        for link in links {
            let Some(mut entry) = self.store.memory(&link.id).map_err(state_error)? else { continue };
            if link.superseded_by.is_some() {
                entry.superseded_by.clone_from(&link.superseded_by);
            }
            if link.supersedes.is_some() {
                entry.supersedes.clone_from(&link.supersedes);
            }
            entry.last_run.clone_from(&self.run_id);
            self.memory_counts.superseded_earlier += 1;
            again.insert(entry.memory_id.clone(), (entry, link.clone()));
        }
        // Memories said only in conversations that are now all retracted, one of them by this
        // run: written again, retracted.
        if !retracted.is_empty() {
            let now: HashSet<u64> = retracted
                .iter()
                .map(|conversation| conversation_key(conversation.provider.as_str(), &conversation.conversation_id))
                .collect();
            let all = self.store.retracted_conversation_keys().map_err(state_error)?;
            for mut entry in self.store.live_memories().map_err(state_error)? {
                let said_only_in_retracted = !entry.conversations.is_empty() && entry.conversations.iter().all(|key| all.contains(key));
                // An erased one is withdrawn below, emptied.
                if said_only_in_retracted && !erased.has_memory(&entry.memory_id) && entry.conversations.iter().any(|key| now.contains(key))
                {
                    let mut link = EarlierLink { id: entry.memory_id.clone(), supersedes: None, superseded_by: None };
                    if let Some((linked, its_link)) = again.remove(&entry.memory_id) {
                        (entry, link) = (linked, its_link);
                    }
                    entry.retracted = true;
                    entry.last_run.clone_from(&self.run_id);
                    self.memory_counts.retracted += 1;
                    again.insert(entry.memory_id.clone(), (entry, link));
                }
            }
        }
        if !erased.is_empty() {
            self.withdraw_erased(erased, &mut again)?;
        }
        let mut memories = Vec::with_capacity(again.len());
        for (entry, link) in again.into_values() {
            self.store.put_memory(&entry).map_err(state_error)?;
            if let Some(record) = memory_record_of(&entry, &link) {
                memories.push((Provider::named(&entry.provider), record));
            }
        }
        // Withdrawals of erased messages go after the retractions the memories were weighed
        // against: a conversation keeps its memories when only some of its messages go.
        let withdrawals = self.withdraw_erased_messages(erased, &retracted)?;
        retracted.extend(withdrawals);
        self.retracted_conversations.clone_from(&retracted);
        Ok(Conclusion { memories, retracted })
    }
}

impl StateDelta<'_> {
    /// The messages the store erased since an earlier run wrote them, as one withdrawal per
    /// conversation, each message once in the state's life: a later run does not withdraw it
    /// again. An erased message of a conversation no earlier run wrote (this run wrote it
    /// without the message), or that is retracted whole, is only recorded as dealt with.
    ///
    /// # Errors
    /// When the state cannot be read or written.
    fn withdraw_erased_messages(
        &mut self,
        erased: &ErasedIds,
        retracted: &[RetractedConversation],
    ) -> Result<Vec<RetractedConversation>, RunError> {
        if erased.messages().is_empty() {
            return Ok(Vec::new());
        }
        let done = self.store.withdrawn_messages().map_err(state_error)?;
        let mut withdrawals: Vec<RetractedConversation> = Vec::new();
        for message in erased.messages() {
            let record_id = message_record_id(&message.provider, &message.conversation_id, &message.message_id);
            if done.contains(&record_id) {
                continue;
            }
            let provider = Provider::named(&message.provider);
            let entry = self.store.conversation(&message.provider, &message.conversation_id).map_err(state_error)?;
            let retracted_whole = retracted
                .iter()
                .any(|conversation| conversation.provider == provider && conversation.conversation_id == message.conversation_id);
            if let Some(entry) = entry.filter(|entry| entry.first_run != self.run_id && !entry.retracted && !retracted_whole) {
                match withdrawals.last_mut().filter(|last| last.provider == provider && last.conversation_id == message.conversation_id) {
                    Some(withdrawal) => withdrawal.messages.push(message.message_id.clone()),
                    None => withdrawals.push(RetractedConversation {
                        provider,
                        conversation_id: message.conversation_id.clone(),
                        title: entry.title,
                        created_at: entry.created_at,
                        retracted_by: self.run_id.clone(),
                        retracted_at: self.exported_at,
                        messages: vec![message.message_id.clone()],
                    }),
                }
                self.counts.messages_withdrawn += 1;
            }
            self.store.put_withdrawn_message(&record_id, &self.run_id).map_err(state_error)?;
        }
        Ok(withdrawals)
    }

    /// The memories the store erased since earlier runs wrote them: each live one is written
    /// again, retracted, so whoever holds an earlier delta learns it is gone; the state keeps
    /// its id, type, slot and times to know it by, but not what it said (nor does the record
    /// written, see [`crate::stages::erasures`]). A memory retracted before it was erased is
    /// only emptied in the state.
    ///
    /// # Errors
    /// When the state cannot be read or written.
    fn withdraw_erased(&mut self, erased: &ErasedIds, again: &mut BTreeMap<String, (MemoryEntry, EarlierLink)>) -> Result<(), RunError> {
        for mut entry in self.store.every_memory().map_err(state_error)? {
            if !erased.has_memory(&entry.memory_id) || entry.statement == ERASED_MEMORY_TEXT {
                continue;
            }
            ERASED_MEMORY_TEXT.clone_into(&mut entry.statement);
            entry.value.clear();
            if entry.retracted {
                self.store.put_memory(&entry).map_err(state_error)?;
                continue;
            }
            let link = match again.remove(&entry.memory_id) {
                Some((_, link)) => link,
                None => EarlierLink { id: entry.memory_id.clone(), supersedes: None, superseded_by: None },
            };
            entry.retracted = true;
            entry.last_run.clone_from(&self.run_id);
            self.memory_counts.erased += 1;
            again.insert(entry.memory_id.clone(), (entry, link));
        }
        Ok(())
    }
}

/// The provider a memory is filed under: its first evidence's.
fn record_provider(extracted: &Extracted) -> String {
    extracted.evidence.first().map_or("other", |evidence| evidence.provider.as_str()).to_owned()
}

/// An earlier run's memory as a record to write again (with no evidence of this run), linked
/// as `link` says. `None` for a memory whose type or slot this build does not know (a newer
/// memport's state).
fn memory_record_of(entry: &MemoryEntry, link: &EarlierLink) -> Option<MemoryRecord> {
    let memory_type = MemoryType::named(&entry.memory_type)?;
    let (slot, _) = crate::stages::extract::slots::slot_named(&entry.slot)?;
    let language = Language::ALL.into_iter().map(Language::tag).find(|tag| *tag == entry.language).unwrap_or("en");
    let extracted = Extracted {
        memory_type,
        slot,
        value: entry.value.clone(),
        language,
        confidence: entry.confidence as f32,
        evidence: Vec::new(),
        evidence_count: entry.evidence_count,
        first_seen: entry.first_seen,
        last_seen: entry.last_seen,
        supersedes: link.supersedes.clone(),
        superseded_by: link.superseded_by.clone(),
        personal: entry.personal,
        entities: Vec::new(),
        retracted: entry.retracted,
    };
    Some(MemoryRecord {
        id: entry.memory_id.clone(),
        kind: memory_type.memory_kind(),
        text: entry.statement.clone(),
        created_at: entry.first_seen,
        labels: Vec::new(),
        is_duplicate: false,
        exportable: true,
        erased: false,
        retracted_in_input: false,
        written_at_end: false,
        embedding: None,
        extracted: Some(Box::new(extracted)),
    })
}
