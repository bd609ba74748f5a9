#![no_main]
//! UMP 0.1 records in NDJSON (one record per line) as input, read as `memport convert` reads
//! them: planned by content (`formats::plan_memory_format`, which also tells NDJSON from JSON),
//! the lines grouped by conversation (`RecordLayout::UmpNdjson`; a line that is not JSON becomes
//! a record error of its own), each group decoded by `UmpDecoder` (consent, redaction paths,
//! integrity signatures) under both branch policies, then extraction, secret masking, the stages
//! and the counts (`memport_fuzz::Conversion`). When the input is not planned as UMP, the same
//! records are read anyway. The grouped record array memport builds must always frame.

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use memport::sources::formats::ump::UmpDecoder;
use memport::sources::formats::RecordLayout;
use memport::sources::Decoder;
use memport_fuzz::{input_file, memory_format_input};

fuzz_target!(|data: &[u8]| {
    let path = input_file("memories.ump.ndjson", data);
    memory_format_input(&path, "ump", &[(RecordLayout::UmpNdjson, Arc::new(UmpDecoder) as Arc<dyn Decoder>)]);
});
