//! Dedup by content, as PAM's `content_hash` defines it (the normalized text), per author role:
//! the first message with a given text from a given role, in input order, is kept; later ones
//! become [`Disposition::Duplicate`]. The role is part of the key because a user who says what an
//! assistant once said (or pastes it back) said it themselves: dropping it would lose the user's
//! own words, and what extraction learns from them. For the same reason a user message that says
//! something about the user ([`Message::discloses`](crate::model::Message::discloses)) stays in each conversation that says it: the
//! person said it again on another occasion, and the memory's evidence names every one (a repeat
//! within one conversation is still a copy).
//!
//! The index keys on each message's 128-bit dedup key (XXH3 of the normalized text, see
//! [`crate::hash::content_key`]: an accidental collision is practically impossible) and lives
//! in a [`KeySet`], which spills to disk so memory stays bounded.

use crate::key_set::KeySet;
use crate::model::{Conversation, Disposition, Role, SkipReason, Warnings};
use crate::stages::Stage;

/// The dedup stage.
#[derive(Default)]
pub struct Dedup {
    seen: KeySet,
    warnings: Warnings,
}

impl Stage for Dedup {
    fn name(&self) -> &'static str {
        "dedup"
    }

    fn process(&mut self, conversation: &mut Conversation, _found: Option<crate::stages::Found>) -> Result<(), crate::error::RunError> {
        // The disclosing messages this conversation keeps: few, so a list.
        let mut disclosed_here: Vec<u128> = Vec::new();
        for message in &mut conversation.messages {
            if message.disposition == Disposition::Skip(SkipReason::Erased) {
                // Its later copies stay duplicates, as before it was erased: erasing a message
                // must not bring out a copy that was never written (nor erasable).
                if self.seen.insert(role_key(message.role, message.content_key.dedup)).is_err() {
                    self.warnings.add("dedup_index_unavailable");
                }
                continue;
            }
            if message.disposition != Disposition::Keep {
                continue;
            }
            let key = role_key(message.role, message.content_key.dedup);
            let first_here = message.discloses && !disclosed_here.contains(&key);
            if first_here {
                disclosed_here.push(key);
            }
            match self.seen.insert(key) {
                Ok(true) => {}
                Ok(false) if first_here => {}
                Ok(false) => message.disposition = Disposition::Duplicate,
                Err(_) => {
                    // The spill file failed: keep the message (never lose one) and say so.
                    self.warnings.add("dedup_index_unavailable");
                }
            }
        }
        Ok(())
    }

    fn take_warnings(&mut self) -> Warnings {
        std::mem::take(&mut self.warnings)
    }
}

/// The dedup key of `text_key` said by `role`: the text key with a constant of each role mixed
/// in, so equal texts of two roles never share a key (a 128-bit collision aside, as likely as one
/// between two texts).
fn role_key(role: Role, text_key: u128) -> u128 {
    let salt: u128 = match role {
        Role::User => 0,
        Role::Assistant => 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834,
        Role::System => 0x6a09_e667_f3bc_c908_b2fb_1366_ea95_7d3e,
        Role::Tool => 0x3c6e_f372_fe94_f82b_a54f_f53a_5f1d_36f1,
    };
    text_key ^ salt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::content_key;
    use crate::model::{Message, Origin, Provider};

    fn said(role: Role, id: &str, text: &str) -> Message {
        let mut message = Message::user_for_tests(id, None, text, 0);
        message.role = role;
        message.content_key = content_key(text, false);
        message
    }

    fn dispositions(messages: Vec<Message>) -> Vec<Disposition> {
        dispositions_in(&mut Dedup::default(), messages)
    }

    fn dispositions_in(dedup: &mut Dedup, messages: Vec<Message>) -> Vec<Disposition> {
        let origin = Origin { file: "test.json".into(), offset: 0, index: 0 };
        let mut conversation = Conversation::empty(Provider::ChatGpt, "c".into(), origin);
        conversation.messages = messages;
        dedup.process(&mut conversation, None).unwrap();
        conversation.messages.iter().map(|message| message.disposition).collect()
    }

    fn disclosing(id: &str, text: &str) -> Message {
        let mut message = said(Role::User, id, text);
        message.discloses = true;
        message
    }

    /// Guards erasure against dedup: a copy of an erased message stays a duplicate, as it was
    /// before the erasure, instead of being written in its place.
    #[test]
    fn a_copy_of_an_erased_message_stays_a_duplicate() {
        let mut erased = said(Role::User, "m1", "My card PIN is 4321");
        erased.disposition = Disposition::Skip(SkipReason::Erased);
        let copy = said(Role::User, "m2", "My card PIN is 4321");
        assert_eq!(dispositions(vec![erased, copy]), [Disposition::Skip(SkipReason::Erased), Disposition::Duplicate]);
    }

    #[test]
    fn a_repeated_text_of_one_role_is_a_duplicate() {
        let found = dispositions(vec![said(Role::User, "a", "I live in Oslo."), said(Role::User, "b", "i live in  oslo.")]);
        assert_eq!(found, [Disposition::Keep, Disposition::Duplicate]);
    }

    #[test]
    fn a_user_saying_what_the_assistant_said_is_kept() {
        let found = dispositions(vec![
            said(Role::Assistant, "a", "I live in Oslo."),
            said(Role::User, "b", "I live in Oslo."),
            said(Role::User, "c", "I live in Oslo."),
        ]);
        assert_eq!(found, [Disposition::Keep, Disposition::Keep, Disposition::Duplicate]);
    }

    #[test]
    fn a_self_statement_said_again_in_another_conversation_is_kept() {
        let mut dedup = Dedup::default();
        let first = dispositions_in(&mut dedup, vec![disclosing("a", "I'm a nurse in Leeds."), said(Role::User, "b", "Thanks!")]);
        assert_eq!(first, [Disposition::Keep, Disposition::Keep]);
        let second = dispositions_in(&mut dedup, vec![disclosing("c", "I'm a nurse in Leeds."), said(Role::User, "d", "Thanks!")]);
        assert_eq!(second, [Disposition::Keep, Disposition::Duplicate]);
    }

    #[test]
    fn a_self_statement_repeated_within_one_conversation_is_a_duplicate() {
        let found = dispositions(vec![disclosing("a", "I'm a nurse in Leeds."), disclosing("b", "I'm a nurse in Leeds.")]);
        assert_eq!(found, [Disposition::Keep, Disposition::Duplicate]);
    }
}
