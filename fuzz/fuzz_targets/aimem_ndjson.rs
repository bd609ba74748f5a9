#![no_main]
//! An AIMEM NDJSON stream as input (envelope line, then one chunk, edge, entity or link per
//! line). First the consumer checks a reader must run before importing it
//! (`formats::aimem::check_input`, which runs `memport validate`'s AIMEM checks line by line). A
//! stream that fails them is refused whole, but a checksum is no barrier to a hostile file, so the
//! records are read either way: the chunk lines, joined with the temporal edge lines from a
//! second pass, grouped by conversation (`RecordLayout::AimemNdjson`; a line that is not JSON
//! becomes a record error of its own) and decoded by `AimemDecoder` under both branch policies,
//! then extraction, secret masking, the stages and the counts (`memport_fuzz::Conversion`). The
//! grouped record array memport builds must always frame.

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use memport::sources::formats::aimem::{check_input, AimemDecoder};
use memport::sources::formats::RecordLayout;
use memport::sources::{Decoder, Stream};
use memport_fuzz::{check_run_error, drain_stream, file_entry, input_file, Conversion};

fuzz_target!(|data: &[u8]| {
    let path = input_file("memory.aimem.ndjson", data);
    // A run joins chunks and edges in one pass only when the check found the records in the
    // order memport writes them; a refused file is read the general way.
    // The extracted memories' links the check gathered are read with them, as a run reads them.
    let (producer, in_order, links) = match check_input(&path) {
        Ok(envelope) => (envelope.producer, envelope.in_reader_order, envelope.links),
        Err(error) => {
            check_run_error(&error, "checking an AIMEM stream");
            ("fuzz".to_owned(), false, None)
        }
    };
    let Some(entry) = file_entry(&path) else { return };
    let decoder = Arc::new(AimemDecoder { producer, links }) as Arc<dyn Decoder>;
    let stream = Stream::new(entry, RecordLayout::AimemNdjson { in_order }.framing(), decoder);
    let mut conversion = Conversion::new();
    drain_stream(&mut conversion, &stream, u64::MAX);
    conversion.finish();
});
