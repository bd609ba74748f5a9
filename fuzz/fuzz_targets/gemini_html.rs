#![no_main]
//! Gemini Apps activity in a Takeout `MyActivity.html` (localized): the `outer-cell` records
//! framed from the page, their localized date lines parsed, regrouped into conversations
//! (`gemini::html::regroup`), and each conversation decoded by `GeminiDecoder` under both branch
//! policies, then extraction, secret masking, the stages and the counts
//! (`memport_fuzz::Conversion`).
//!
//! The page is regrouped twice, read whole and in uneven pieces (a record marker cut by a read):
//! the elements must be the same.

use libfuzzer_sys::fuzz_target;
use memport::model::Origin;
use memport::sources::gemini::html::regroup;
use memport::sources::gemini::{GeminiDecoder, TakeoutFiles};
use memport::sources::SourceOptions;
use memport_fuzz::{assert_same_elements, check_run_error, collect_grouped, display, reader, Conversion, Trickle};

fuzz_target!(|data: &[u8]| {
    let options = SourceOptions::default();
    let file = display("MyActivity.html");
    let whole = regroup(reader(data), &file, &options);
    let in_pieces = regroup(Box::new(Trickle::new(data.to_vec())), &file, &options);
    let (whole, in_pieces) = match (whole, in_pieces) {
        (Ok(whole), Ok(in_pieces)) => (whole, in_pieces),
        (whole, in_pieces) => {
            for error in [whole.err(), in_pieces.err()].into_iter().flatten() {
                check_run_error(&error, "regrouping a Gemini activity page");
            }
            return;
        }
    };
    let (Ok(whole), Ok(in_pieces)) = (collect_grouped(whole), collect_grouped(in_pieces)) else { return };
    assert_same_elements("gemini HTML regrouping, the page read whole against read in pieces", &whole, &in_pieces);

    let decoder = GeminiDecoder { files: TakeoutFiles::default() };
    let mut conversion = Conversion::new();
    for (offset, index, bytes) in &whole {
        conversion.element(&decoder, bytes, Origin { file: file.clone(), offset: *offset, index: *index });
    }
    conversion.finish();
});
