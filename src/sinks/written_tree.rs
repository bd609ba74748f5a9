//! Where each message hangs once only the written messages are kept: its nearest written
//! ancestor. Every memory format links a written message to that ancestor (AIMEM edges, PAM
//! parents, MIF parents, UMP relations, AIME answers), so a skipped or duplicate message in
//! between never breaks a thread.

use rustc_hash::FxHashMap;

use crate::model::{Conversation, Disposition, Message};

/// Whether a message is written by the memory formats: it flows on and has text (sources never
/// keep an empty message; the check keeps every format valid regardless).
pub fn is_written(message: &Message) -> bool {
    message.disposition == Disposition::Keep && !message.text.is_empty()
}

/// For each message (by position), the position of its nearest written ancestor, not itself.
/// Parents precede children in tree order, so one pass fills it; a parent id that names no
/// earlier message (or the message itself) counts as none.
pub fn nearest_written_ancestors(conversation: &Conversation) -> Vec<Option<usize>> {
    let messages = &conversation.messages;
    let mut nearest_written_self_or_ancestor: Vec<Option<usize>> = Vec::with_capacity(messages.len());
    let mut ancestors = Vec::with_capacity(messages.len());
    let mut position_of = FxHashMap::with_capacity_and_hasher(messages.len(), Default::default());
    for (position, message) in messages.iter().enumerate() {
        // Look the parent up before registering this message, so a self-parent finds nothing.
        let ancestor = message
            .parent_id
            .as_deref()
            .and_then(|parent| position_of.get(parent))
            .and_then(|&parent: &usize| nearest_written_self_or_ancestor[parent]);
        position_of.insert(message.id.as_str(), position);
        ancestors.push(ancestor);
        nearest_written_self_or_ancestor.push(if is_written(message) { Some(position) } else { ancestor });
    }
    ancestors
}
