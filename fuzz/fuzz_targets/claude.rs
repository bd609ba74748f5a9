#![no_main]
//! Claude: the input read as each file of a Claude export is read. As `conversations.json` (array
//! elements, `ClaudeDecoder`), as `projects.json` (array elements, `ClaudeProjectDecoder`), as a
//! `projects/<uuid>.json` file (the whole document, `ClaudeProjectDecoder`) and as
//! `memories.json` (the whole document, `ClaudeMemoriesDecoder`), all in one run, each element
//! under both branch policies, then extraction, secret masking, the stages and the counts
//! (`memport_fuzz::Conversion`).

use libfuzzer_sys::fuzz_target;
use memport::sources::claude::side_files::{ClaudeMemoriesDecoder, ClaudeProjectDecoder};
use memport::sources::claude::ClaudeDecoder;
use memport_fuzz::{display, drain, framed, framed_whole, Conversion};

fuzz_target!(|data: &[u8]| {
    let mut conversion = Conversion::new();
    drain(&mut conversion, framed(data), &ClaudeDecoder, &display("conversations.json"), false, u64::MAX);
    drain(&mut conversion, framed(data), &ClaudeProjectDecoder, &display("projects.json"), false, u64::MAX);
    drain(&mut conversion, framed_whole(data), &ClaudeProjectDecoder, &display("projects/project.json"), false, u64::MAX);
    drain(&mut conversion, framed_whole(data), &ClaudeMemoriesDecoder, &display("memories.json"), false, u64::MAX);
    conversion.finish();
});
