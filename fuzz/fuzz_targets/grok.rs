#![no_main]
//! Grok `prod-grok-backend.json`: the `conversations` member's array framed as the planner frames
//! it (`Framing::Member("conversations")`), each `{conversation, responses}` element decoded by
//! `GrokDecoder` under both branch policies, then extraction, secret masking, the stages and the
//! counts (`memport_fuzz::Conversion`).

use libfuzzer_sys::fuzz_target;
use memport::sources::grok::{GrokAssets, GrokDecoder};
use memport_fuzz::{display, drain, framed_member, Conversion};

fuzz_target!(|data: &[u8]| {
    let decoder = GrokDecoder { assets: GrokAssets::default() };
    let mut conversion = Conversion::new();
    drain(&mut conversion, framed_member(data, "conversations"), &decoder, &display("prod-grok-backend.json"), false, u64::MAX);
    conversion.finish();
});
