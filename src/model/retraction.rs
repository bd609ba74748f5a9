//! What a sync retracts: a conversation an earlier run wrote that a complete export no longer
//! holds (the user deleted it). The sync finds them; each sink writes them in its format's own
//! terms (see `crate::sinks::Sink::retract`).

use super::{Micros, Provider};

/// A conversation a sync retracts: written by an earlier run, absent from this complete export.
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
    };
}

impl RetractedConversation {
    /// `retracted` in the order sinks write retractions: by provider, then conversation id.
    pub fn sorted(retracted: &[RetractedConversation]) -> Vec<RetractedConversation> {
        let mut sorted = retracted.to_vec();
        sorted.sort_by(|left, right| left.provider.cmp(&right.provider).then_with(|| left.conversation_id.cmp(&right.conversation_id)));
        sorted
    }

    /// Adds each of `more` to `into` unless `into` already retracts its conversation (provider
    /// and id): the first retraction of a conversation is kept, in the order they came.
    pub fn merge(into: &mut Vec<RetractedConversation>, more: impl IntoIterator<Item = RetractedConversation>) {
        let mut more = more.into_iter().peekable();
        if more.peek().is_none() {
            return;
        }
        let mut known: std::collections::HashSet<(Provider, String)> =
            into.iter().map(|kept| (kept.provider, kept.conversation_id.clone())).collect();
        for retraction in more {
            if known.insert((retraction.provider, retraction.conversation_id.clone())) {
                into.push(retraction);
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
        };
        let mut kept = vec![retraction("a", "sync")];
        RetractedConversation::merge(&mut kept, [retraction("a", "input"), retraction("b", "input")]);
        assert_eq!(kept, [retraction("a", "sync"), retraction("b", "input")]);
    }
}
