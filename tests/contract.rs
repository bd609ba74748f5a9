//! The contract every source and every output format keeps, checked over all of them: every
//! source (each provider's generated example and real samples, and each of memport's own
//! formats as input) converts to every output format with balanced counts, byte-identical output
//! at one and at four threads, and output that `validate` accepts; every memory format read
//! back gives the records it was made from; and a run that fails leaves nothing behind, for
//! every format.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use memport::sinks::OutputFormat;

use crate::util::{REAL_SAMPLES, convert_all_branches as convert, examples, options, shared};

/// Every output format, in the order `--to` lists them.
fn every_format() -> Vec<OutputFormat> {
    OutputFormat::ALL.iter().map(|(_, format)| *format).collect()
}

/// The formats memport also reads, written from the examples in `folder`: (label, path).
fn memory_format_inputs(folder: &Path) -> Vec<(String, PathBuf)> {
    let report = convert(&examples(), folder, &every_format(), 2);
    report
        .outputs
        .iter()
        .filter(|output| output.format != "parquet" && output.format != "store")
        .map(|output| (format!("memport's {} output", output.format), PathBuf::from(&output.path)))
        .collect()
}

/// Every provider source: the generated examples in the repo and every real sample in
/// `../shared` (Gemini's HTML page among them).
fn provider_inputs() -> Vec<(String, PathBuf)> {
    let mut inputs: Vec<(String, PathBuf)> = examples().into_iter().map(|path| (path.display().to_string(), path)).collect();
    inputs.extend(REAL_SAMPLES.iter().map(|sample| (sample.to_string(), shared(sample))));
    inputs
}

/// Every file below `folder` (but the run report, which holds the run's duration), by path
/// relative to it.
fn files_below(folder: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![folder.to_owned()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.file_name().is_some_and(|name| name != "report.json") {
                let relative = path.strip_prefix(folder).unwrap().display().to_string();
                files.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// Converts one source to every format at one and at four threads and checks the shared
/// promises: the counts balance and agree, the outputs are the same byte for byte, and
/// `validate` accepts every one of them.
fn assert_source_keeps_the_contract(label: &str, input: &Path) {
    let (one, four) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let report = convert(&[input.to_owned()], one.path(), &every_format(), 1);
    let report_at_four = convert(&[input.to_owned()], four.path(), &every_format(), 4);
    assert_eq!(report.counts, report_at_four.counts, "{label}: the same counts at 1 and 4 threads");
    assert!(report.counts.messages_read + report.counts.memories_read > 0, "{label}: the source yields records");
    let (files, files_at_four) = (files_below(one.path()), files_below(four.path()));
    assert_eq!(files.keys().collect::<Vec<_>>(), files_at_four.keys().collect::<Vec<_>>(), "{label}: the same files at 1 and 4 threads");
    for (name, bytes) in &files {
        assert!(bytes == &files_at_four[name], "{label}: {name} differs between 1 and 4 threads");
    }
    assert_eq!(report.outputs.len(), every_format().len(), "{label}: one output per format");
    for output in &report.outputs {
        if output.format == "parquet" {
            // `validate` checks memory formats; the dataset is checked against the report.
            let (messages, memories) =
                (parquet_rows(&Path::new(&output.path).join("messages")), parquet_rows(&Path::new(&output.path).join("memories")));
            assert_eq!(messages, report.counts.messages_read - report.counts.messages_rejected, "{label}: a messages row per message read");
            assert_eq!(memories, crate::util::memories_in_output(&report), "{label}: a memories row per memory written");
            continue;
        }
        let validation = memport::validate::validate_path(Path::new(&output.path)).expect("readable output");
        assert!(validation.is_valid(), "{label}: {} output is valid: {:?}", output.format, validation.problems);
    }
}

/// Rows of every Parquet part below `table_folder`, as their footers count them.
fn parquet_rows(table_folder: &Path) -> u64 {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    files_below(table_folder)
        .into_keys()
        .filter(|name| name.ends_with(".parquet"))
        .map(|name| {
            let reader = SerializedFileReader::new(std::fs::File::open(table_folder.join(&name)).unwrap()).unwrap();
            u64::try_from(reader.metadata().file_metadata().num_rows()).unwrap()
        })
        .sum()
}

#[test]
fn every_provider_source_balances_is_deterministic_and_writes_valid_output_in_every_format() {
    for (label, input) in provider_inputs() {
        assert_source_keeps_the_contract(&label, &input);
    }
}

#[test]
fn every_memory_format_as_a_source_balances_is_deterministic_and_writes_valid_output_in_every_format() {
    let made = tempfile::tempdir().unwrap();
    let inputs = memory_format_inputs(made.path());
    assert_eq!(inputs.len(), every_format().len() - 2, "every format but Parquet and the store is also an input");
    for (label, input) in inputs {
        assert_source_keeps_the_contract(&label, &input);
    }
}

#[test]
fn every_memory_format_read_back_gives_the_records_it_was_made_from() {
    let made = tempfile::tempdir().unwrap();
    let direct = convert(&examples(), &made.path().join("direct"), &[OutputFormat::AimemNdjson], 2);
    for (label, input) in memory_format_inputs(made.path()) {
        let again = tempfile::tempdir().unwrap();
        let read_back = convert(std::slice::from_ref(&input), again.path(), &[OutputFormat::AimemNdjson], 2);
        let counts = &read_back.counts;
        assert_eq!(counts.messages_read, direct.counts.messages_written, "{label}: every message written is read back");
        assert_eq!(counts.messages_written, direct.counts.messages_written, "{label}: and written again");
        // Extracted memories come back as the input's memories; they are not extracted again.
        assert_eq!(
            crate::util::memories_in_output(&read_back),
            crate::util::memories_in_output(&direct),
            "{label}: every memory comes back"
        );
        assert_eq!(counts.messages_rejected + counts.conversations_rejected, 0, "{label}: nothing is rejected");
    }
}

#[test]
fn a_run_whose_outputs_cannot_all_be_created_leaves_nothing_behind_in_any_format() {
    for format in every_format() {
        let out = tempfile::tempdir().unwrap();
        // A file where the second output's folder should be: that output cannot be created.
        std::fs::write(out.path().join("blocked"), b"").unwrap();
        let mut options = options(&[examples()[0].clone()], out.path(), &[format]);
        options.report = None;
        options.rejects = None;
        options.outputs.push((OutputFormat::AimemNdjson, out.path().join("blocked").join("memory.aimem.ndjson")));
        assert!(memport::run(&options).is_err(), "{format:?}: the run fails");
        let left: Vec<String> = files_below(out.path()).into_keys().collect();
        assert_eq!(left, ["blocked"], "{format:?}: nothing but the blocking file is left");
        let folders = std::fs::read_dir(out.path()).unwrap().filter(|entry| entry.as_ref().unwrap().path().is_dir()).count();
        assert_eq!(folders, 0, "{format:?}: no folder is left");
    }
}

#[test]
fn a_run_that_fails_while_reading_leaves_nothing_behind_in_any_format() {
    // A stored zip whose entry fails its CRC check: the failure comes after every record was
    // read and handed to the sinks.
    let folder = tempfile::tempdir().unwrap();
    let conversations = std::fs::read(examples()[0].join("conversations.json")).unwrap();
    let zip_path = folder.path().join("damaged.zip");
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    writer.start_file("conversations.json", stored).unwrap();
    std::io::Write::write_all(&mut writer, &conversations).unwrap();
    writer.finish().unwrap();
    let mut bytes = std::fs::read(&zip_path).unwrap();
    let inside = memchr::memmem::find(&bytes, b"\"mapping\"").unwrap() + 200;
    bytes[inside] = if bytes[inside] == b'x' { b'y' } else { b'x' };
    std::fs::write(&zip_path, bytes).unwrap();
    for formats in every_format().chunks(1).map(<[OutputFormat]>::to_vec).chain([every_format()]) {
        let out = tempfile::tempdir().unwrap();
        let mut options = options(std::slice::from_ref(&zip_path), out.path(), &formats);
        options.report = None;
        options.rejects = None;
        let error = memport::run(&options).expect_err("a damaged zip entry stops the run");
        assert!(error.to_string().contains("checksum"), "{formats:?}: {error}");
        assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0, "{formats:?}: nothing is left in the output folder");
    }
}
