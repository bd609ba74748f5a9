#![no_main]
//! Gemini Apps activity in a Takeout `MyActivity.json`: the records framed (the input read ahead
//! on a thread of its own), their keys read on the worker pool, regrouped into conversations by
//! conversation URL and time (`gemini::regroup`), and each conversation decoded by
//! `GeminiDecoder` under both branch policies, then extraction, secret masking, the stages and
//! the counts (`memport_fuzz::Conversion`).
//!
//! The input is regrouped twice: as from a zip entry (whole records framed and copied to a spill
//! file) and as from an unpacked file (only the key members kept while framing, records read back
//! from the input by offset; the input fed in uneven pieces). For an input that is valid JSON
//! the two must give the same elements: the kept members are the members the full walk reads.
//! (An invalid record may differ by design: keeping members does not validate the record.)

use std::fs::File;

use libfuzzer_sys::fuzz_target;
use memport::model::Origin;
use memport::sources::gemini::{regroup, GeminiDecoder, TakeoutFiles};
use memport::sources::SourceOptions;
use memport_fuzz::{assert_same_elements, check_run_error, collect_grouped, display, input_file, pool, reader, Conversion, Trickle};

fuzz_target!(|data: &[u8]| {
    let options = SourceOptions::default();
    let name = "MyActivity.json";
    let file = display(name);
    let spilled = regroup(reader(data), &file, &options, None, pool());
    let path = input_file(name, data);
    let read_back = regroup(Box::new(Trickle::new(data.to_vec())), &file, &options, File::open(&path).ok(), pool());
    let (spilled, read_back) = match (spilled, read_back) {
        (Ok(spilled), Ok(read_back)) => (spilled, read_back),
        (spilled, read_back) => {
            for error in [spilled.err(), read_back.err()].into_iter().flatten() {
                check_run_error(&error, "regrouping Gemini activity");
            }
            return;
        }
    };
    let (Ok(spilled), Ok(read_back)) = (collect_grouped(spilled), collect_grouped(read_back)) else { return };
    if serde_json::from_slice::<serde_json::Value>(data).is_ok() {
        assert_same_elements("gemini regrouping, whole records spilled against key members kept and read back", &spilled, &read_back);
    }

    let decoder = GeminiDecoder { files: TakeoutFiles::default() };
    let mut conversion = Conversion::new();
    // The read-back elements are decoded too where they differ (records that are not JSON).
    let mut readings = vec![&spilled];
    if read_back != spilled {
        readings.push(&read_back);
    }
    for elements in readings {
        for (offset, index, bytes) in elements {
            conversion.element(&decoder, bytes, Origin { file: file.clone(), offset: *offset, index: *index });
        }
    }
    conversion.finish();
});
