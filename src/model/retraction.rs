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

impl RetractedConversation {
    /// `retracted` in the order sinks write retractions: by provider, then conversation id.
    pub fn sorted(retracted: &[RetractedConversation]) -> Vec<RetractedConversation> {
        let mut sorted = retracted.to_vec();
        sorted.sort_by(|left, right| left.provider.cmp(&right.provider).then_with(|| left.conversation_id.cmp(&right.conversation_id)));
        sorted
    }
}
