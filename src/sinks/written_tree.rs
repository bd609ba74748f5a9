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

/// How many messages before a message its parent is looked for among, before the id index is
/// built: a parent is nearly always one of the last few (the message before it, or the question
/// an alternative answer shares), and most conversations never need the index.
const NEAR_PARENTS: usize = 4;

/// For each message (by position), the position of its nearest written ancestor, not itself.
/// Parents precede children in tree order, so one pass fills it; a parent id that names no
/// earlier message (or the message itself) counts as none. Of several earlier messages with the
/// parent's id, the last one is the parent.
pub fn nearest_written_ancestors(conversation: &Conversation) -> Vec<Option<usize>> {
    ancestors_in(&conversation.messages, |message| &message.id, |message| message.parent_id.as_deref(), is_written)
}

/// [`nearest_written_ancestors`] over any list of messages, given how to read each one's id,
/// parent id and whether it is written.
fn ancestors_in<'a, M>(
    messages: &'a [M],
    id: impl Fn(&'a M) -> &'a str,
    parent_id: impl Fn(&'a M) -> Option<&'a str>,
    written: impl Fn(&'a M) -> bool,
) -> Vec<Option<usize>> {
    let mut nearest_written_self_or_ancestor: Vec<Option<usize>> = Vec::with_capacity(messages.len());
    let mut ancestors = Vec::with_capacity(messages.len());
    // Built from every earlier message the first time a parent is not among the near ones.
    let mut position_of: Option<FxHashMap<&str, usize>> = None;
    for (position, message) in messages.iter().enumerate() {
        // Looked up among earlier messages only, so a self-parent finds nothing.
        let parent_position = parent_id(message).and_then(|parent| {
            let near = (position.saturating_sub(NEAR_PARENTS)..position).rev().find(|&earlier| id(&messages[earlier]) == parent);
            near.or_else(|| {
                let index = position_of.get_or_insert_with(|| {
                    let mut index = FxHashMap::with_capacity_and_hasher(messages.len(), Default::default());
                    index.extend(messages[..position].iter().enumerate().map(|(earlier, message)| (id(message), earlier)));
                    index
                });
                index.get(parent).copied()
            })
        });
        if let Some(index) = &mut position_of {
            index.insert(id(message), position);
        }
        let ancestor = parent_position.and_then(|parent| nearest_written_self_or_ancestor[parent]);
        ancestors.push(ancestor);
        nearest_written_self_or_ancestor.push(if written(message) { Some(position) } else { ancestor });
    }
    ancestors
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    /// The index-only way: every earlier id in a map, the later of two equal ids winning.
    fn reference(messages: &[(String, Option<String>, bool)]) -> Vec<Option<usize>> {
        let mut nearest: Vec<Option<usize>> = Vec::new();
        let mut ancestors = Vec::new();
        let mut position_of = HashMap::new();
        for (position, (id, parent, written)) in messages.iter().enumerate() {
            let ancestor = parent.as_deref().and_then(|parent| position_of.get(parent)).and_then(|&parent: &usize| nearest[parent]);
            position_of.insert(id.as_str(), position);
            ancestors.push(ancestor);
            nearest.push(if *written { Some(position) } else { ancestor });
        }
        ancestors
    }

    /// One of few distinct ids, so repeats, self-parents, missing parents and far parents all
    /// occur.
    fn message_id() -> impl Strategy<Value = String> {
        (0..12u32).prop_map(|n| format!("m{n}"))
    }

    /// A message as (id, parent id, written): four in five have a parent, two in three are
    /// written.
    fn message() -> impl Strategy<Value = (String, Option<String>, bool)> {
        (message_id(), prop::option::weighted(0.8, message_id()), prop::bool::weighted(2.0 / 3.0))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn near_parents_and_the_index_find_the_same_ancestors(messages in prop::collection::vec(message(), 0..30)) {
            let found = ancestors_in(&messages, |message| &message.0, |message| message.1.as_deref(), |message| message.2);
            prop_assert_eq!(found, reference(&messages), "{:?}", messages);
        }
    }
}
