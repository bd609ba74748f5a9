//! What a sync retracts: a conversation an earlier run wrote that a complete export no longer
//! holds (the user deleted it), or messages of one that the memory store erased since an
//! earlier run wrote them. The sync finds them; each sink writes them in its format's own
//! terms (see `crate::sinks::Sink::retract`).

use super::{Micros, Provider};

/// A conversation a sync retracts: written by an earlier run, absent from this complete export;
/// or, when [`RetractedConversation::messages`] names some, only those messages of it (erased
/// from the memory store since an earlier run wrote them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetractedConversation {
    /// The provider of the conversation.
    pub provider: Provider,
    /// The conversation's id as the outputs name it (the same id the sinks write for it).
    pub conversation_id: String,
    /// Its title when it was last written, if any.
    pub title: Option<String>,
    /// When the conversation was created, as it was last written (micros since the epoch, UTC); None when unknown.
    pub created_at: Option<Micros>,
    /// The run id of the sync that retracts it.
    pub retracted_by: String,
    /// That run's export time (micros).
    pub retracted_at: Micros,
    /// The ids of the messages withdrawn, sorted, each once; empty when the whole conversation
    /// is retracted.
    pub messages: Vec<String>,
}

/// A message erased for good from a memory store, by the ids it was written under.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ErasedMessage {
    /// The provider's name (`chatgpt`, …).
    pub provider: String,
    /// The conversation's id.
    pub conversation_id: String,
    /// The message's id.
    pub message_id: String,
}

/// The member names of a retracted conversation written as a JSON object of its own, in one
/// format's style: the writers of the formats that list a sync's retractions in an extension
/// member and the readers of those lists share them, so what one writes the other reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetractionMemberNames {
    /// The provider.
    pub provider: &'static str,
    /// The conversation's id.
    pub conversation_id: &'static str,
    /// Its title, when known.
    pub title: &'static str,
    /// When it was created, when known.
    pub created_at: &'static str,
    /// The run that retracted it.
    pub retracted_by: &'static str,
    /// That run's export time.
    pub retracted_at: &'static str,
    /// The ids of the messages withdrawn (in the lists of withdrawn messages only).
    pub message_ids: &'static str,
}

impl RetractionMemberNames {
    /// AIMEM's `x-memport-retracted` and MIF's `vendor_extensions.memport.retracted_conversations`.
    pub const SNAKE_CASE: RetractionMemberNames = RetractionMemberNames {
        provider: "provider",
        conversation_id: "conversation_id",
        title: "title",
        created_at: "created_at",
        retracted_by: "retracted_by",
        retracted_at: "retracted_at",
        message_ids: "message_ids",
    };

    /// AIME's `extensions.memport.retractedConversations`, named like its messages' metadata
    /// (the platform and session).
    pub const AIME: RetractionMemberNames = RetractionMemberNames {
        provider: "platform",
        conversation_id: "session",
        title: "conversationTitle",
        created_at: "created",
        retracted_by: "retractedBy",
        retracted_at: "retractedAt",
        message_ids: "messageIds",
    };
}

impl RetractedConversation {
    /// Whether only some messages of the conversation are withdrawn.
    pub fn is_of_messages(&self) -> bool {
        !self.messages.is_empty()
    }

    /// `retracted` split into the retractions of whole conversations and the withdrawals of
    /// messages, each in its order: the formats that list them apart.
    pub fn whole_and_of_messages(retracted: &[RetractedConversation]) -> (Vec<&RetractedConversation>, Vec<&RetractedConversation>) {
        retracted.iter().partition(|conversation| !conversation.is_of_messages())
    }

    /// `retracted` in the order sinks write retractions: by provider, then conversation id, a
    /// conversation's retraction before a withdrawal of some of its messages.
    pub fn sorted(retracted: &[RetractedConversation]) -> Vec<RetractedConversation> {
        let mut sorted = retracted.to_vec();
        sorted.sort_by(|left, right| {
            left.provider
                .cmp(&right.provider)
                .then_with(|| left.conversation_id.cmp(&right.conversation_id))
                .then_with(|| left.is_of_messages().cmp(&right.is_of_messages()))
        });
        sorted
    }

    /// Adds each of `more` to `into`. The first retraction of a whole conversation (provider
    /// and id) is kept, in the order they came; withdrawals of messages of one conversation are
    /// one entry, the first's, naming every message any of them names.
    pub fn merge(into: &mut Vec<RetractedConversation>, more: impl IntoIterator<Item = RetractedConversation>) {
        let mut more = more.into_iter().peekable();
        if more.peek().is_none() {
            return;
        }
        let mut known: std::collections::HashMap<(Provider, String, bool), usize> =
            into.iter().enumerate().map(|(at, kept)| ((kept.provider, kept.conversation_id.clone(), kept.is_of_messages()), at)).collect();
        for retraction in more {
            let key = (retraction.provider, retraction.conversation_id.clone(), retraction.is_of_messages());
            match known.get(&key) {
                Some(&at) if retraction.is_of_messages() => {
                    let messages = &mut into[at].messages;
                    messages.extend(retraction.messages);
                    messages.sort();
                    messages.dedup();
                }
                Some(_) => {}
                None => {
                    known.insert(key, into.len());
                    into.push(retraction);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_the_first_retraction_of_a_conversation() {
        let retraction = |id: &str, by: &str| RetractedConversation {
            provider: Provider::ChatGpt,
            conversation_id: id.to_owned(),
            title: None,
            created_at: None,
            retracted_by: by.to_owned(),
            retracted_at: 0,
            messages: Vec::new(),
        };
        let mut kept = vec![retraction("a", "sync")];
        RetractedConversation::merge(&mut kept, [retraction("a", "input"), retraction("b", "input")]);
        assert_eq!(kept, [retraction("a", "sync"), retraction("b", "input")]);
    }

    #[test]
    fn withdrawals_of_messages_of_one_conversation_are_one_and_stand_beside_its_retraction() {
        let withdrawal = |id: &str, messages: &[&str]| RetractedConversation {
            provider: Provider::ChatGpt,
            conversation_id: id.to_owned(),
            title: None,
            created_at: None,
            retracted_by: "sync".to_owned(),
            retracted_at: 0,
            messages: messages.iter().map(|message| (*message).to_owned()).collect(),
        };
        let mut kept = vec![withdrawal("a", &["m2"])];
        RetractedConversation::merge(&mut kept, [withdrawal("a", &["m1", "m2"]), withdrawal("a", &[]), withdrawal("b", &["m9"])]);
        assert_eq!(kept, [withdrawal("a", &["m1", "m2"]), withdrawal("a", &[]), withdrawal("b", &["m9"])]);
        let sorted = RetractedConversation::sorted(&kept);
        assert_eq!(sorted, [withdrawal("a", &[]), withdrawal("a", &["m1", "m2"]), withdrawal("b", &["m9"])], "the retraction first");
    }
}
