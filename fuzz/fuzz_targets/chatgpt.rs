#![no_main]
//! ChatGPT `conversations.json` (or one 2026 shard): the top-level array framed as a run frames
//! it, each element decoded by the ChatGPT decoder (`chatgpt::normalize::decode_conversation`,
//! with the provider fields attached as the planner's decoder does) under both branch policies,
//! then extraction, secret masking, the ordered stages and the counts (`memport_fuzz::Conversion`).

use libfuzzer_sys::fuzz_target;
use memport::model::Origin;
use memport::sources::chatgpt::assets::AssetIndex;
use memport::sources::chatgpt::normalize::decode_conversation;
use memport::sources::provider_fields;
use memport::sources::{DecodeOptions, Decoded, Decoder, RecordReject};
use memport_fuzz::{display, drain, framed, Conversion};

/// The decoder `chatgpt::plan` hands out (private there): the conversation decoded against the
/// export's asset index (none here), then its provider fields attached when an output keeps them.
struct ChatGpt {
    assets: AssetIndex,
}

impl Decoder for ChatGpt {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let mut decoded = decode_conversation(bytes, origin, &self.assets, options)?;
        if options.keep_provider_fields {
            provider_fields::attach(&mut decoded.conversation, provider_fields::chatgpt(bytes));
        }
        Ok(decoded)
    }
}

fuzz_target!(|data: &[u8]| {
    let decoder = ChatGpt { assets: AssetIndex::default() };
    let mut conversion = Conversion::new();
    drain(&mut conversion, framed(data), &decoder, &display("conversations.json"), false, u64::MAX);
    conversion.finish();
});
