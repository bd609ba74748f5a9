#![no_main]
//! Export detection: what a file's first bytes say it holds, as the registry asks before planning
//! each candidate file (`sources::sniff`: by structure, framing the first array element), on the
//! whole input and on a prefix cut anywhere (the registry sniffs the first 256 KiB of a file, so
//! the prefix may end inside an element, a string or a UTF-8 sequence); the Copilot header check;
//! and the byte-level sniffers that tell memport's own formats apart (`spec::…::looks_like_*`,
//! `spec::detect::names_a_memory_format`, `spec::json_member::has_member`). None may panic.

use libfuzzer_sys::fuzz_target;
use memport::sources::copilot::CsvLayout;
use memport::sources::sniff;
use memport::spec::{aime, aimem, detect, json_member, mif, pam, ump};

fuzz_target!(|data: &[u8]| {
    let _ = sniff(data);
    // A cut at a place that depends on the input, so every position gets tried over a run.
    let cut = data.first().map_or(0, |first| usize::from(*first) * data.len() / 256);
    let _ = sniff(&data[..cut]);

    let line_end = data.iter().position(|byte| *byte == b'\n').unwrap_or(data.len());
    let _ = CsvLayout::from_header(String::from_utf8_lossy(&data[..line_end]).trim_end_matches('\r'));

    let _ = detect::names_a_memory_format(data);
    let _ = aimem::looks_like_aimem(data);
    let _ = aime::looks_like_aime(data);
    let _ = mif::looks_like_mif(data);
    let _ = ump::looks_like_ump(data);
    let _ = pam::looks_like_pam(data);
    let _ = pam::looks_like_store(data);
    let _ = pam::has_messages(data);
    let _ = json_member::has_member(data, "schema", b"\"portable-ai-memory");
});
