#![no_main]
//! A MIF v2 document as input, read as `memport convert` reads it: planned by content
//! (`formats::plan_memory_format`: detection, `vendor_extensions` and the knowledge graph noted),
//! the `memories` array framed and grouped by conversation (`RecordLayout::MifMemories`), each
//! group decoded by `MifDecoder` under both branch policies, then extraction, secret masking, the
//! stages and the counts (`memport_fuzz::Conversion`). When the input is not planned as MIF, the
//! same records are read anyway. The grouped record array memport builds must always frame.

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use memport::sources::formats::mif::MifDecoder;
use memport::sources::formats::RecordLayout;
use memport::sources::Decoder;
use memport_fuzz::{input_file, memory_format_input};

fuzz_target!(|data: &[u8]| {
    let path = input_file("memories.mif.json", data);
    memory_format_input(&path, "mif", &[(RecordLayout::MifMemories, Arc::new(MifDecoder) as Arc<dyn Decoder>)]);
});
