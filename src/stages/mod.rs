//! Stages that work for any source. They run on one thread, in input order, after decoding.
//! [`extract`] is the extraction of typed memories from what users say about themselves.
//!
//! Contract: [`Stage::process`] sees every decoded conversation exactly once, in input order,
//! and may only change message dispositions (it never drops or reorders conversations), so the
//! run report can account for every message.

pub mod dedup;
pub mod extract;
pub mod unique_ids;

use crate::model::{Conversation, Warnings};

/// One step applied to each decoded conversation, in input order.
pub trait Stage: Send {
    /// Short name for reports.
    fn name(&self) -> &'static str;
    /// Looks at one conversation and updates its messages' dispositions.
    fn process(&mut self, conversation: &mut Conversation);
    /// Warnings gathered so far (taken once, at the end of the run).
    fn take_warnings(&mut self) -> Warnings {
        Warnings::default()
    }
}
