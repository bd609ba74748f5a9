#![no_main]
//! Copilot activity CSVs: the row scanner, the regrouping and the decoder.
//!
//! - The row scanner (`copilot::csv_rows::RowScanner`), fed in uneven pieces, reads the cells the
//!   `csv` crate reads (as its unit tests check on generated text); each row is the input's
//!   bytes at its offset, starts after only line ends since the previous row, and carries the
//!   line of the file it starts on.
//! - The rows regrouped into conversations (`copilot::regroup`) as from a zip entry (rows copied
//!   to a spill file) and as from an unpacked file (rows read back from the input by offset, the
//!   input fed in uneven pieces) give the same elements.
//! - Each conversation is decoded by `CopilotDecoder` under both branch policies, then
//!   extraction, secret masking, the stages and the counts (`memport_fuzz::Conversion`).
//!
//! The layout is the one the header names, else one picked by the input's length, so rows are
//! also decoded against a header that lacks their columns.

use std::fs::File;
use std::ops::Range;

use libfuzzer_sys::fuzz_target;
use memport::model::Origin;
use memport::sources::copilot::csv_rows::{cell, RowScanner};
use memport::sources::copilot::{regroup, CopilotDecoder, CsvLayout};
use memport::sources::SourceOptions;
use memport_fuzz::{assert_same_elements, check_run_error, collect_grouped, display, input_file, reader, Conversion, Trickle};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A row as the scanner found it: offset, line, cells.
type RowCells = (u64, u64, Vec<Vec<u8>>);

fn scanned_rows(text: &[u8]) -> Option<Vec<RowCells>> {
    let mut scanner = RowScanner::new(Trickle::new(text.to_vec()));
    let mut fields: Vec<Range<usize>> = Vec::new();
    let mut rows = Vec::new();
    loop {
        // Only a row longer than 64 MiB is an error, and the input is far shorter.
        let row = scanner.next_row(&mut fields).ok()?;
        let Some(row) = row else { return Some(rows) };
        let start = usize::try_from(row.offset).ok()?;
        assert!(
            text.get(start..start + row.bytes.len()) == Some(row.bytes),
            "row scanner: the row on line {} is not the input's bytes at byte {start}",
            row.line
        );
        for range in &fields {
            assert!(
                range.start <= range.end && range.end <= row.bytes.len(),
                "row scanner: a field {range:?} outside its row on line {}",
                row.line
            );
        }
        let cells = fields.iter().map(|range| cell(&row.bytes[range.clone()]).into_owned()).collect();
        rows.push((row.offset, row.line, cells));
    }
}

/// Checks the row scanner against the `csv` crate (default reader, no headers, flexible).
fn check_rows_against_csv(data: &[u8]) {
    // The csv crate skips a leading byte-order mark and the scanner keeps it (the header's first
    // name is trimmed of it later): compare without it.
    let text = data.strip_prefix(BOM).unwrap_or(data);
    if text.starts_with(BOM) {
        return;
    }
    let Some(scanned) = scanned_rows(text) else { return };
    let mut csv_reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text);
    let mut record = csv::ByteRecord::new();
    let mut expected = Vec::new();
    loop {
        let previous_end = csv_reader.position().byte();
        match csv_reader.read_byte_record(&mut record) {
            Ok(true) => expected.push((previous_end, record.iter().map(<[u8]>::to_vec).collect::<Vec<_>>())),
            Ok(false) => break,
            Err(_) => return,
        }
    }
    for (position, ((offset, line, cells), (previous_end, expected_cells))) in scanned.iter().zip(&expected).enumerate() {
        assert!(cells == expected_cells, "row scanner: row {position} (line {line}) has other cells than the csv crate reads");
        let between = usize::try_from(*previous_end).ok().zip(usize::try_from(*offset).ok()).and_then(|(from, to)| text.get(from..to));
        assert!(
            between.is_some_and(|bytes| bytes.iter().all(|byte| matches!(byte, b'\n' | b'\r'))),
            "row scanner: row {position} starts at byte {offset}, not after the line ends that follow the previous row (byte {previous_end})"
        );
        let newlines = text[..*offset as usize].iter().filter(|byte| **byte == b'\n').count() as u64;
        assert_eq!(*line, 1 + newlines, "row scanner: row {position} at byte {offset} carries line {line}");
    }
    assert_eq!(scanned.len(), expected.len(), "row scanner: a different number of rows from the csv crate");
}

/// The layout the first line names, else one of the three by the input's length.
fn layout_of(data: &[u8]) -> CsvLayout {
    let line_end = data.iter().position(|byte| *byte == b'\n').unwrap_or(data.len());
    let header = String::from_utf8_lossy(&data[..line_end]);
    CsvLayout::from_header(header.trim_end_matches('\r')).unwrap_or(match data.len() % 3 {
        0 => CsvLayout::ActivityHistory,
        1 => CsvLayout::ChatActivity,
        _ => CsvLayout::WindowsApps,
    })
}

fuzz_target!(|data: &[u8]| {
    check_rows_against_csv(data);

    let layout = layout_of(data);
    let options = SourceOptions::default();
    let name = "copilot-activity-history.csv";
    let file = display(name);
    let spilled = regroup(reader(data), &file, layout, &options, None);
    let path = input_file(name, data);
    let read_back = regroup(Box::new(Trickle::new(data.to_vec())), &file, layout, &options, File::open(&path).ok());
    let (spilled, read_back) = match (spilled, read_back) {
        (Ok(spilled), Ok(read_back)) => (spilled, read_back),
        (spilled, read_back) => {
            for error in [spilled.err(), read_back.err()].into_iter().flatten() {
                check_run_error(&error, "regrouping a Copilot CSV");
            }
            return;
        }
    };
    let (Ok(spilled), Ok(read_back)) = (collect_grouped(spilled), collect_grouped(read_back)) else { return };
    assert_same_elements("copilot regrouping, spilled against read back from the file", &spilled, &read_back);

    let decoder = CopilotDecoder { layout, options };
    let mut conversion = Conversion::new();
    for (offset, index, bytes) in &spilled {
        conversion.element(&decoder, bytes, Origin { file: file.clone(), offset: *offset, index: *index });
    }
    conversion.finish();
});
