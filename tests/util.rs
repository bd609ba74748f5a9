//! Shared helpers: where the shared reference files are, running conversions, reading outputs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use memport::pipeline::extraction::ExtractionSettings;
use memport::pipeline::report::RunReport;
use memport::pipeline::settings::{Extractor, PiiPolicy, Redaction};
use memport::pipeline::{DedupPolicy, Options, Settings};
use memport::sinks::OutputFormat;
use memport::sources::BranchPolicy;

/// A fixed export time so outputs are comparable.
pub const EXPORTED_AT: i64 = 1_767_225_600_000_000; // 2026-01-01T00:00:00Z

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` beside the project (read in place, never copied). Panics with what to do when
/// it is missing, rather than letting a test fail on a file it cannot find.
pub fn shared(relative: &str) -> PathBuf {
    let shared = root().join("..").join("shared");
    assert!(
        shared.is_dir(),
        "this test reads the reference schemas, conformance corpora and real samples in the `shared` folder, \
         which must sit beside the repository (expected at {}); check it out there and run the tests again",
        shared.display()
    );
    shared.join(relative)
}

/// The JSON Schema (Draft 2020-12, formats asserted) at `relative` under `../shared`.
pub fn schema(relative: &str) -> jsonschema::Validator {
    let schema: serde_json::Value = serde_json::from_slice(&std::fs::read(shared(relative)).expect("schema file")).expect("schema JSON");
    jsonschema::draft202012::options().should_validate_formats(true).build(&schema).expect("a valid schema")
}

/// Options for converting `inputs` into each of `formats` inside `out_dir`.
pub fn options(inputs: &[PathBuf], out_dir: &Path, formats: &[OutputFormat]) -> Options {
    Options {
        inputs: inputs.to_vec(),
        outputs: formats.iter().map(|format| (*format, out_dir.join(format.default_file_name()))).collect(),
        report: Some(out_dir.join("report.json")),
        rejects: Some(out_dir.join("rejects.ndjson")),
        exported_at: EXPORTED_AT,
        // Extraction on, as by default: every test of every format carries extracted memories.
        settings: Settings { threads: Some(2), quiet: true, ..Settings::default() },
        ..Options::default()
    }
}

/// Sets the settings that give `extraction` (`--extract`, `--min-confidence`, `--extract-pii`,
/// `--redact`).
pub fn set_extraction(options: &mut Options, extraction: ExtractionSettings) {
    let settings = &mut options.settings;
    settings.extract = if extraction.extract.is_some() { Extractor::Rules } else { Extractor::Off };
    if let Some(extract) = extraction.extract {
        settings.min_confidence = extract.min_confidence;
        settings.extract_pii = if extract.keep_personal { PiiPolicy::Keep } else { PiiPolicy::Drop };
    }
    settings.redact = if extraction.redact_secrets { Redaction::Secrets } else { Redaction::None };
    assert_eq!(settings.extraction(), extraction, "the settings give the extraction asked for");
}

/// As [`convert_all_branches`], with extraction off: what a round trip through memport's own
/// formats carries exactly (transcripts and the provider's memories).
pub fn convert_all_branches_without_extraction(inputs: &[PathBuf], out: &Path, formats: &[OutputFormat], threads: usize) -> RunReport {
    let mut options = options(inputs, out, formats);
    options.settings.branches = BranchPolicy::All;
    options.settings.threads = Some(threads);
    options.settings.extract = memport::pipeline::settings::Extractor::Off;
    let report = memport::run(&options).unwrap_or_else(|error| panic!("{inputs:?} converts: {error}"));
    assert!(report.counts.balances(), "{inputs:?}: counts balance: {:?}", report.counts);
    report
}

/// Memories a memory format holds after a run: the provider's (and an input's) memories
/// written, and the extracted ones, current or superseded.
pub fn memories_in_output(report: &RunReport) -> u64 {
    let extracted = report.memories_extracted.as_ref().map_or(0, |counts| counts.written + counts.superseded_kept);
    report.counts.memories_written + extracted
}

/// Converts `inputs` into each of `formats` in `out` with every branch and `threads` workers,
/// checking the counts balance.
pub fn convert_all_branches(inputs: &[PathBuf], out: &Path, formats: &[OutputFormat], threads: usize) -> RunReport {
    let mut options = options(inputs, out, formats);
    options.settings.branches = BranchPolicy::All;
    options.settings.threads = Some(threads);
    let report = memport::run(&options).unwrap_or_else(|error| panic!("{inputs:?} converts: {error}"));
    assert!(report.counts.balances(), "{inputs:?}: counts balance: {:?}", report.counts);
    if let Some(memories) = &report.memories_extracted {
        assert!(memories.balances(), "{inputs:?}: memory counts balance: {memories:?}");
    }
    report
}

/// Converts `input` to both AIMEM forms in a fresh temp folder and checks the report balances
/// and both outputs validate.
pub fn convert_checked(input: &Path, branches: BranchPolicy, dedup: DedupPolicy) -> (tempfile::TempDir, RunReport) {
    let out = tempfile::tempdir().expect("temp dir");
    let mut options = options(&[input.to_owned()], out.path(), &[OutputFormat::Aimem, OutputFormat::AimemNdjson]);
    options.settings.branches = branches;
    options.settings.dedup = dedup;
    let report = memport::run(&options).expect("conversion runs");
    assert!(report.counts.balances(), "counts balance: {:?}", report.counts);
    for output in &report.outputs {
        let validation = memport::validate::validate_path(Path::new(&output.path)).expect("readable output");
        assert!(validation.is_valid(), "{} is valid: {:?}", output.path, validation.problems);
    }
    (out, report)
}

/// Skip counts as (hidden, off_branch, empty).
pub fn skips(report: &RunReport) -> (u64, u64, u64) {
    let skipped = &report.counts.messages_skipped;
    (skipped["hidden"], skipped["off_branch"], skipped["empty"])
}

/// Reads NDJSON lines as JSON values.
pub fn ndjson(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("readable")
        .lines()
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect()
}

/// Writes `conversations` as a `conversations.json` array in `folder`.
pub fn write_export(folder: &Path, conversations: &[serde_json::Value]) -> PathBuf {
    std::fs::create_dir_all(folder).expect("folder");
    let path = folder.join("conversations.json");
    std::fs::write(&path, serde_json::to_vec(conversations).expect("serializable")).expect("written");
    path
}

/// A ChatGPT node with a text message.
pub fn text_node(id: &str, parent: Option<&str>, role: &str, text: &str, time: f64) -> (String, serde_json::Value) {
    (
        id.to_owned(),
        serde_json::json!({
            "id": id,
            "parent": parent,
            "message": {
                "id": id,
                "author": {"role": role, "name": null, "metadata": {}},
                "create_time": time,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "weight": 1.0,
                "metadata": {},
                "recipient": "all"
            }
        }),
    )
}

/// A ChatGPT conversation from nodes (a null root `root` is added).
pub fn conversation(id: &str, nodes: Vec<(String, serde_json::Value)>, current_node: Option<&str>) -> serde_json::Value {
    let mut mapping = serde_json::Map::new();
    mapping.insert("root".into(), serde_json::json!({"id": "root", "message": null, "parent": null}));
    for (key, node) in nodes {
        mapping.insert(key, node);
    }
    serde_json::json!({
        "id": id,
        "title": "t",
        "create_time": 1_700_000_000.5,
        "update_time": 1_700_000_100.0,
        "mapping": mapping,
        "current_node": current_node,
    })
}

/// Every real sample of every provider, as the other tests read them.
pub const REAL_SAMPLES: &[&str] = &[
    "provider-samples/chatgpt/2023-05_earliest-export",
    "provider-samples/chatgpt/2023-09_single-file-export",
    "provider-samples/chatgpt/2025-06_single-conversation",
    "provider-samples/chatgpt/2026-09_sharded-export",
    "provider-samples/claude/2024-03_to_2025-06_export/conversations.json",
    "provider-samples/claude/2024-03_to_2025-06_export/claude_thinking_example.json",
    "provider-samples/claude/2025-07_small-export",
    "provider-samples/grok/2025-06_export",
    "provider-samples/copilot/2025-06_activity-history",
    "provider-samples/copilot/2026-07_activity-history",
    "provider-samples/gemini/synthetic_html-structure",
    "pam/fixtures/python-sdk-test-samples/chatgpt-conversations.sample.json",
    "pam/fixtures/python-sdk-test-samples/claude-conversations.sample.json",
    "pam/fixtures/python-sdk-test-samples/claude-memories.sample.json",
    "pam/fixtures/python-sdk-test-samples/copilot-activity-history.sample.csv",
    "pam/fixtures/python-sdk-test-samples/copilot-chat-activity.sample.csv",
    "pam/fixtures/python-sdk-test-samples/gemini-MyActivity.sample.json",
    "pam/fixtures/python-sdk-test-samples/grok-prod-grok-backend.sample.json",
    "pam/fixtures/python-sdk-test-samples/windows-apps-copilot-activity-history.sample.csv",
];

/// The generated examples committed in the repo, one per provider, in the order the docs'
/// `examples/*-small` expands to (the order decides which copy of a duplicate is written).
pub fn examples() -> Vec<PathBuf> {
    ["chatgpt-small", "claude-small", "copilot-small", "gemini-json-small", "grok-small"]
        .iter()
        .map(|name| root().join("examples").join(name))
        .collect()
}

/// Converts `unpacked` (a file or folder) and a zip holding `file` (a path relative to
/// `unpacked`'s folder, or `unpacked` itself when it is a file) at the same name, and asserts
/// that both runs count and write the same: records of an unpacked file are read back from it,
/// a zip entry's are copied to a spill first.
pub fn assert_zip_converts_like_unpacked(unpacked: &Path, file: &str) {
    let source = if unpacked.is_file() { unpacked.to_owned() } else { unpacked.join(file) };
    let folder = tempfile::tempdir().unwrap();
    let zip_path = folder.path().join("export.zip");
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    writer.start_file(file, zip::write::SimpleFileOptions::default()).unwrap();
    std::io::Write::write_all(&mut writer, &std::fs::read(source).unwrap()).unwrap();
    writer.finish().unwrap();
    let (from_unpacked, report) = convert_checked(unpacked, BranchPolicy::Active, DedupPolicy::Content);
    let (from_zip, zip_report) = convert_checked(&zip_path, BranchPolicy::Active, DedupPolicy::Content);
    assert!(zip_report.inputs[0].layout.starts_with("zip"), "{}", zip_report.inputs[0].layout);
    assert_eq!(report.counts, zip_report.counts);
    for output in ["memory.aimem.json", "memory.aimem.ndjson"] {
        let (unpacked, zipped) =
            (std::fs::read(from_unpacked.path().join(output)).unwrap(), std::fs::read(from_zip.path().join(output)).unwrap());
        assert!(unpacked == zipped, "{output} differs between the unpacked input and the zip");
    }
}

/// Every file under `folder`, recursively.
pub fn files_under(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Whether `bytes` hold `text` anywhere.
pub fn holds(bytes: &[u8], text: &str) -> bool {
    bytes.windows(text.len()).any(|window| window == text.as_bytes())
}

/// `memport forget STORE IDS… --hard`.
pub fn forget_hard(store: &Path, ids: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_memport")).arg("forget").arg(store).args(ids).arg("--hard").output().unwrap()
}
