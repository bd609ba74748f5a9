//! Stages that work for any source. They run on one thread, in input order, after decoding.
//!
//! Contract: [`Stage::process`] sees every decoded conversation exactly once, in input order,
//! and may only change message dispositions (it never drops or reorders conversations), so the
//! run report can account for every message.

pub mod dedup;

use crate::model::Conversation;

/// One step applied to each decoded conversation, in input order.
pub trait Stage: Send {
    /// Short name for reports.
    fn name(&self) -> &'static str;
    /// Looks at one conversation and updates its messages' dispositions.
    fn process(&mut self, conversation: &mut Conversation);
}
