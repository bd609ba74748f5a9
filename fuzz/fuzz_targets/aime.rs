#![no_main]
//! An AIME v1.0 document as input, read as `memport convert` reads it: planned by content
//! (`formats::plan_memory_format`), the `messages` array grouped by session
//! (`RecordLayout::AimeMessages`) and memport's memories under `extensions.memport.memories`
//! (`RecordLayout::AimeMemories`), decoded by `AimeDecoder` under both branch policies, then
//! extraction, secret masking, the stages and the counts (`memport_fuzz::Conversion`). When the
//! input is not planned as AIME, the same records are read anyway. The grouped record array
//! memport builds must always frame.

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use memport::sources::formats::aime::AimeDecoder;
use memport::sources::formats::RecordLayout;
use memport::sources::Decoder;
use memport_fuzz::{input_file, memory_format_input};

fuzz_target!(|data: &[u8]| {
    let path = input_file("memories.aime.json", data);
    memory_format_input(
        &path,
        "aime",
        &[
            (RecordLayout::AimeMessages, Arc::new(AimeDecoder { memories: false }) as Arc<dyn Decoder>),
            (RecordLayout::AimeMemories, Arc::new(AimeDecoder { memories: true }) as Arc<dyn Decoder>),
        ],
    );
});
