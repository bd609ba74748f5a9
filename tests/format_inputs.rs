//! memport's own formats as inputs: every real sample and generated example converted to each
//! format, read back, and written to every format again. Whatever the intermediate format
//! carries comes out the same as from the export itself (byte for byte, or as the same set of
//! records where a format does not keep the order); AIMEM read back and written again is a
//! no-op (the draft's Level 3). The upstream examples of every format convert to output that
//! validates; consent, integrity, vendor extensions and broken inputs are handled as documented.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use memport::pipeline::report::RunReport;
use memport::sinks::OutputFormat;
use memport::sources::BranchPolicy;
use serde_json::{Value, json};

use crate::util::{REAL_SAMPLES, convert_all_branches, convert_all_branches_without_extraction as convert, examples, options, shared};

/// Every format memport writes that it also reads.
const MEMORY_FORMATS: [OutputFormat; 8] = [
    OutputFormat::Pam,
    OutputFormat::Mif,
    OutputFormat::Ump,
    OutputFormat::UmpNdjson,
    OutputFormat::UmpMd,
    OutputFormat::Aime,
    OutputFormat::Aimem,
    OutputFormat::AimemNdjson,
];

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn json_of(path: &Path) -> Value {
    serde_json::from_slice(&read(path)).unwrap()
}

fn sorted(mut records: Vec<String>) -> Vec<String> {
    records.sort();
    records
}

/// Each output's records as a sorted list (for comparisons where the order may differ), with
/// the members that hash the order (checksums) left out.
fn record_sets(out: &Path) -> BTreeMap<&'static str, Vec<String>> {
    let lines = |name: &str, skip: usize| -> Vec<String> {
        String::from_utf8(read(&out.join(name))).unwrap().lines().skip(skip).filter(|line| !line.is_empty()).map(str::to_owned).collect()
    };
    let array = |value: &Value| -> Vec<String> { value.as_array().into_iter().flatten().map(Value::to_string).collect() };
    let mif = json_of(&out.join("memory.mif.json"));
    let aime = json_of(&out.join("memory.aime.json"));
    BTreeMap::from([
        ("aimem-ndjson", sorted(lines("memory.aimem.ndjson", 1))),
        ("ump-ndjson", sorted(lines("memory.ump.ndjson", 0))),
        ("mif", sorted(array(&mif["memories"]))),
        ("aime messages", sorted(array(&aime["messages"]))),
        ("aime memories", sorted(array(&aime["extensions"]["memport"]["memories"]))),
    ])
}

/// Every file of a PAM store as JSON, without each conversation's `import_metadata` (its
/// `source_file` names the file the run read, which is the store itself on a second run).
fn store_values(store: &Path) -> BTreeMap<String, Value> {
    let mut values = BTreeMap::from([("memory-store.json".to_owned(), json_of(&store.join("memory-store.json")))]);
    for entry in std::fs::read_dir(store.join("conversations")).unwrap() {
        let path = entry.unwrap().path();
        let mut conversation = json_of(&path);
        conversation.as_object_mut().unwrap().remove("import_metadata");
        values.insert(path.file_name().unwrap().to_string_lossy().into_owned(), conversation);
    }
    values
}

/// Asserts two maps are equal, naming the first entry that differs (outputs are too large to
/// print whole).
fn assert_same<V: PartialEq + std::fmt::Debug>(
    left: &BTreeMap<impl Ord + std::fmt::Debug, V>,
    right: &BTreeMap<impl Ord + std::fmt::Debug, V>,
    label: &str,
) {
    assert_eq!(left.len(), right.len(), "{label}: entries");
    for ((key, left), (_, right)) in left.iter().zip(right) {
        if left != right {
            let shown: String = format!("{left:?}\n  vs\n{right:?}").chars().take(1500).collect();
            panic!("{label}: {key:?} differs:\n{shown}");
        }
    }
}

fn ump_md_files(folder: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), read(&path)))
        .collect()
}

fn inputs_of_every_provider() -> Vec<PathBuf> {
    let mut inputs: Vec<PathBuf> = REAL_SAMPLES.iter().map(|sample| shared(sample)).collect();
    inputs.extend(examples());
    inputs
}

/// memport's output read again with extraction on: the extracted memories it holds come back
/// once (as read), and extracting from its transcripts again adds no second copy.
#[test]
fn extracted_memories_read_back_are_not_extracted_twice() {
    for input in inputs_of_every_provider() {
        let direct = tempfile::tempdir().unwrap();
        let formats = [OutputFormat::Pam, OutputFormat::AimemNdjson, OutputFormat::Mif, OutputFormat::Ump, OutputFormat::Aime];
        let report = convert_all_branches(std::slice::from_ref(&input), direct.path(), &formats, 2);
        let extracted = report.memories_extracted.as_ref().unwrap();
        for source in formats.map(|format| format.default_file_name()) {
            let via = tempfile::tempdir().unwrap();
            let again = convert_all_branches(&[direct.path().join(source)], via.path(), &[OutputFormat::Pam, OutputFormat::UmpMd], 2);
            let label = format!("{} via {source}", input.display());
            assert_eq!(crate::util::memories_in_output(&again), crate::util::memories_in_output(&report), "{label}");
            let again_extracted = again.memories_extracted.as_ref().unwrap();
            assert_eq!(again_extracted.written + again_extracted.superseded_kept, 0, "{label}: {again_extracted:?}");
            if extracted.written > 0 {
                assert!(again_extracted.already_in_input > 0, "{label}: {again_extracted:?}");
            }
        }
    }
}

/// With extraction off (a round trip carries transcripts and the provider's memories).
#[test]
fn every_format_read_back_gives_what_it_carries_of_the_export() {
    for input in inputs_of_every_provider() {
        let label = input.display().to_string();
        let direct = tempfile::tempdir().unwrap();
        let report = convert(std::slice::from_ref(&input), direct.path(), &MEMORY_FORMATS, 2);
        let direct_sets = record_sets(direct.path());
        for intermediate in MEMORY_FORMATS {
            let via = tempfile::tempdir().unwrap();
            let source = direct.path().join(intermediate.default_file_name());
            let again = convert(&[source], via.path(), &MEMORY_FORMATS, 2);
            let label = format!("{label} via {}", intermediate.default_file_name());
            assert_eq!(again.counts.messages_rejected + again.counts.conversations_rejected, 0, "{label}");
            assert_eq!(again.counts.messages_written, report.counts.messages_written, "{label}: messages");
            let same_bytes = |name: &str| {
                assert!(read(&direct.path().join(name)) == read(&via.path().join(name)), "{label}: {name} differs");
            };
            match intermediate {
                // PAM carries everything; its memories without a conversation come back in id
                // order, so the single-file outputs hold the same records, maybe reordered.
                OutputFormat::Pam => {
                    assert_same(&record_sets(via.path()), &direct_sets, &label);
                    assert_same(
                        &store_values(&via.path().join("pam")),
                        &store_values(&direct.path().join("pam")),
                        &format!("{label}: the store"),
                    );
                    assert_eq!(again.counts.memories_written, report.counts.memories_written, "{label}: memories");
                }
                // A folder of .ump.md files has no order but its names: the same records come
                // back, conversations in another order.
                OutputFormat::UmpMd => {
                    assert_same(&record_sets(via.path()), &direct_sets, &label);
                    assert!(
                        ump_md_files(&via.path().join("ump-md")) == ump_md_files(&direct.path().join("ump-md")),
                        "{label}: ump-md differs"
                    );
                }
                // MIF and UMP carry every field of each other, AIME and AIMEM, in order.
                OutputFormat::Mif | OutputFormat::Ump | OutputFormat::UmpNdjson => {
                    for name in [
                        "memory.mif.json",
                        "memory.ump.json",
                        "memory.ump.ndjson",
                        "memory.aime.json",
                        "memory.aimem.json",
                        "memory.aimem.ndjson",
                    ] {
                        same_bytes(name);
                    }
                    assert_eq!(ump_md_files(&via.path().join("ump-md")), ump_md_files(&direct.path().join("ump-md")), "{label}: ump-md");
                }
                OutputFormat::Aime => same_bytes("memory.aime.json"),
                // Level 3: an export read back and written again is a no-op.
                OutputFormat::Aimem | OutputFormat::AimemNdjson => {
                    same_bytes("memory.aimem.json");
                    same_bytes("memory.aimem.ndjson");
                }
                OutputFormat::Parquet | OutputFormat::Store => unreachable!("not a memory format memport reads"),
            }
        }
    }
}

#[test]
fn format_inputs_give_the_same_output_at_any_thread_count() {
    let direct = tempfile::tempdir().unwrap();
    convert(&examples(), direct.path(), &MEMORY_FORMATS, 2);
    for intermediate in [OutputFormat::Pam, OutputFormat::Mif, OutputFormat::UmpMd, OutputFormat::AimemNdjson] {
        let outputs: Vec<Vec<u8>> = [1, 3]
            .into_iter()
            .map(|threads| {
                let via = tempfile::tempdir().unwrap();
                convert(
                    &[direct.path().join(intermediate.default_file_name())],
                    via.path(),
                    &[OutputFormat::AimemNdjson, OutputFormat::Mif],
                    threads,
                );
                [read(&via.path().join("memory.aimem.ndjson")), read(&via.path().join("memory.mif.json"))].concat()
            })
            .collect();
        assert!(outputs[0] == outputs[1], "{intermediate:?}: 1 and 3 threads differ");
    }
}

/// Converts one upstream file to every format and checks that each output validates.
fn converts_to_valid_output(input: &Path) -> RunReport {
    let out = tempfile::tempdir().unwrap();
    let mut formats = MEMORY_FORMATS.to_vec();
    formats.push(OutputFormat::Parquet);
    let report = convert(&[input.to_owned()], out.path(), &formats, 2);
    for format in MEMORY_FORMATS {
        let path = out.path().join(format.default_file_name());
        if format == OutputFormat::UmpMd && report.counts.messages_written + report.counts.memories_written == 0 {
            continue; // an empty folder is no record set to check
        }
        let validation = memport::validate::validate_path(&path).unwrap();
        assert!(validation.is_valid(), "{} → {format:?}: {:?}", input.display(), validation.problems);
    }
    // And each format's own JSON Schema.
    let label = input.display().to_string();
    let check = |schema: &jsonschema::Validator, document: &Value, what: &str| {
        let errors: Vec<String> = schema.iter_errors(document).map(|error| format!("{error} at {}", error.instance_path())).collect();
        assert!(errors.is_empty(), "{label} → {what}: {errors:?}");
    };
    check(&crate::util::schema("formats/mif/mif-v2.schema.json"), &json_of(&out.path().join("memory.mif.json")), "MIF");
    check(&crate::util::schema("formats/aime/aime-v1.0.derived.schema.json"), &json_of(&out.path().join("memory.aime.json")), "AIME");
    let ump = crate::util::schema("formats/ump/ump-record-0.1.schema.json");
    for record in json_of(&out.path().join("memory.ump.json")).as_array().unwrap() {
        check(&ump, record, "UMP");
    }
    let store = out.path().join("pam");
    check(&crate::util::schema("pam/schemas/portable-ai-memory.schema.json"), &json_of(&store.join("memory-store.json")), "PAM store");
    let conversation_schema = crate::util::schema("pam/schemas/portable-ai-memory-conversation.schema.json");
    for entry in std::fs::read_dir(store.join("conversations")).unwrap() {
        check(&conversation_schema, &json_of(&entry.unwrap().path()), "PAM conversation");
    }
    report
}

#[test]
fn the_upstream_examples_of_every_format_convert_to_valid_output_of_every_format() {
    let mut inputs = vec![
        shared("pam/examples/example-memory-store.json"),
        shared("pam/fixtures/website/minimal-memory-store.json"),
        shared("pam/fixtures/website/with-relations-memory-store.json"),
        shared("formats/mif/minimal.mif.json"),
        shared("formats/mif/full.mif.json"),
        shared("formats/ump/minimal-0.1.ump.json"),
        shared("formats/ump/responsibility-confirmed.ump.json"),
        shared("formats/aime/minimal-export.aime.json"),
        shared("formats/aime/spec-assembled-full.aime.json"),
        shared("formats/aimem/graph_complete.aimem.json"),
        shared("formats/aimem/graph_complete.aimem.ndjson"),
    ];
    for folder in ["valid", "edge"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(shared("formats/aimem/conformance-corpus").join(folder))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        inputs.extend(files);
    }
    let mut memories = BTreeMap::new();
    for input in &inputs {
        let report = converts_to_valid_output(input);
        memories.insert(
            input.file_name().unwrap().to_string_lossy().into_owned(),
            (report.counts.messages_written, report.counts.memories_written),
        );
    }
    // Counted by hand from the files.
    assert_eq!(memories["example-memory-store.json"], (0, 5));
    assert_eq!(memories["minimal.mif.json"], (0, 3));
    assert_eq!(memories["full.mif.json"], (0, 3));
    assert_eq!(memories["minimal-0.1.ump.json"], (0, 1));
    assert_eq!(memories["minimal-export.aime.json"], (2, 0));
    assert_eq!(memories["spec-assembled-full.aime.json"], (2, 0));
    assert_eq!(memories["all_memory_types.json"], (0, 8));
    assert_eq!(memories["large_chunk_count.json"], (0, 200));
}

#[test]
fn another_systems_memory_types_survive_a_round_trip_through_their_own_format() {
    let out = tempfile::tempdir().unwrap();
    let store = shared("pam/examples/example-memory-store.json");
    convert(std::slice::from_ref(&store), out.path(), &[OutputFormat::Pam], 2);
    let types = |path: &Path| -> Vec<(String, String)> {
        let mut types: Vec<(String, String)> = json_of(path)["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|memory| (memory["id"].to_string(), memory["type"].to_string()))
            .collect();
        types.sort();
        types
    };
    assert_eq!(types(&out.path().join("pam/memory-store.json")), types(&store));

    let corpus = shared("formats/aimem/conformance-corpus/valid/all_memory_types.json");
    convert(std::slice::from_ref(&corpus), out.path(), &[OutputFormat::Aimem], 2);
    let memory_types = |path: &Path| -> Vec<String> {
        sorted(json_of(path)["chunks"].as_array().unwrap().iter().map(|chunk| chunk["memory_type"].as_str().unwrap().to_owned()).collect())
    };
    assert_eq!(memory_types(&out.path().join("memory.aimem.json")), memory_types(&corpus));
}

#[test]
fn mif_vendor_extensions_of_other_systems_are_kept_on_a_round_trip() {
    let folder = tempfile::tempdir().unwrap();
    let input = folder.path().join("shodh.mif.json");
    let document = json!({
        "mif_version": "2.0",
        "memories": [{"id": "3f1c2e4a-8b7d-4c2e-9f1a-2b3c4d5e6f70", "content": "Prefers Rust", "memory_type": "learning", "created_at": "2026-01-02T03:04:05Z", "tags": ["lang"]}],
        "knowledge_graph": {"entities": [], "relationships": []},
        "vendor_extensions": {"shodh-memory": {"tier": "hot", "importance": 0.9}}
    });
    std::fs::write(&input, serde_json::to_vec(&document).unwrap()).unwrap();
    let out = folder.path().join("out");
    let report = convert(&[input], &out, &[OutputFormat::Mif], 2);
    assert_eq!(report.warnings.get("mif_knowledge_graph_not_carried"), Some(&1));
    let written = json_of(&out.join("memory.mif.json"));
    assert_eq!(written["vendor_extensions"]["shodh-memory"], document["vendor_extensions"]["shodh-memory"]);
    assert_eq!(written["memories"][0]["memory_type"], "learning");
    assert_eq!(written["memories"][0]["content"], "Prefers Rust");
}

/// A UMP NDJSON file of memport's records for the generated Claude example.
fn ump_lines(sign: bool) -> (tempfile::TempDir, Vec<Value>) {
    let out = tempfile::tempdir().unwrap();
    let mut options = options(&[examples()[1].clone()], out.path(), &[OutputFormat::UmpNdjson]);
    if sign {
        let mut seed = [0u8; 32];
        seed.iter_mut().enumerate().for_each(|(index, byte)| *byte = index as u8);
        options.sign_key = Some(memport::signing::SignKey::from_seed(&seed));
    }
    memport::run(&options).unwrap();
    let lines = crate::util::ndjson(&out.path().join("memory.ump.ndjson"));
    (out, lines)
}

fn write_lines(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn ump_consent_is_honoured_records_not_for_export_are_counted_and_redacted_paths_are_gone() {
    let (folder, mut lines) = ump_lines(false);
    let turn = lines.iter().position(|line| line["kind"] == "episodic").unwrap();
    let memory = lines.iter().position(|line| line["kind"] != "episodic").unwrap();
    lines[turn]["consent"]["exportable"] = false.into();
    lines[memory]["consent"]["exportable"] = false.into();
    let redacted =
        lines.iter().rposition(|line| line["kind"] == "episodic" && line["body"]["structured"]["conversation_title"].is_string()).unwrap();
    lines[redacted]["consent"]["redact"] = json!(["body.structured.conversation_title"]);
    let input = folder.path().join("consent.ump.ndjson");
    write_lines(&input, &lines);
    let out = folder.path().join("out");
    let report = convert(&[input], &out, &[OutputFormat::UmpNdjson, OutputFormat::Parquet], 2);
    assert_eq!(report.counts.messages_skipped["not_exportable"], 1);
    assert_eq!(report.counts.memories_not_exportable, 1);
    assert_eq!(report.warnings.get("ump_fields_redacted"), Some(&1));
    let written = crate::util::ndjson(&out.join("memory.ump.ndjson"));
    assert_eq!(written.len(), lines.len() - 2);
    assert!(!written.iter().any(|line| line["id"] == lines[turn]["id"] || line["id"] == lines[memory]["id"]));
    // Nor in the dataset, which has a row for every other message read.
    let dataset = out.join(OutputFormat::Parquet.default_file_name());
    let texts = crate::parquet_dataset::strings(
        &crate::parquet_dataset::read_table(&dataset, memport::sinks::parquet::schema::Table::Messages),
        "text",
    );
    let hidden = lines[turn]["body"]["text"].as_str().unwrap();
    assert!(!texts.iter().flatten().any(|text| text == hidden), "the turn not for export has no row");
    assert_eq!(texts.len() as u64, report.counts.messages_read - report.counts.messages_rejected - 1);
}

#[test]
fn ump_records_forgotten_stay_forgotten_a_turn_left_out_a_memory_written_tombstoned() {
    let (folder, mut lines) = ump_lines(false);
    let turn = lines.iter().position(|line| line["kind"] == "episodic").unwrap();
    let memory = lines.iter().position(|line| line["kind"] != "episodic").unwrap();
    for index in [turn, memory] {
        lines[index]["lifecycle"] = json!({"status": "tombstoned"});
    }
    let input = folder.path().join("forgotten.ump.ndjson");
    write_lines(&input, &lines);
    let out = folder.path().join("out");
    let report = convert(&[input], &out, &[OutputFormat::UmpNdjson, OutputFormat::Parquet], 2);
    assert_eq!(report.counts.messages_skipped["retracted"], 1);
    assert_eq!(report.counts.memories_retracted, 1);
    assert!(report.counts.balances(), "{:?}", report.counts);
    let written = crate::util::ndjson(&out.join("memory.ump.ndjson"));
    assert_eq!(written.len(), lines.len() - 1);
    assert!(!written.iter().any(|line| line["id"] == lines[turn]["id"]), "the forgotten turn is left out");
    let forgotten: Vec<&Value> = written.iter().filter(|line| line["lifecycle"]["status"] == "tombstoned").collect();
    assert_eq!(forgotten.len(), 1, "only the forgotten memory is tombstoned: {forgotten:?}");
    assert_eq!(forgotten[0]["body"]["text"], lines[memory]["body"]["text"]);
    // The dataset marks it, and has no row for the turn.
    let dataset = out.join(OutputFormat::Parquet.default_file_name());
    let memories = crate::parquet_dataset::read_table(&dataset, memport::sinks::parquet::schema::Table::Memories);
    let retracted = crate::parquet_dataset::bools(&memories, "retracted");
    assert_eq!(retracted.iter().filter(|flag| **flag == Some(true)).count(), 1, "{retracted:?}");
}

#[test]
fn a_signed_ump_record_that_was_changed_is_rejected_and_the_rest_is_read() {
    let (folder, mut lines) = ump_lines(true);
    let input = folder.path().join("signed.ump.ndjson");
    write_lines(&input, &lines);
    let out = folder.path().join("clean");
    let clean = convert(std::slice::from_ref(&input), &out, &[OutputFormat::UmpNdjson], 2);
    assert_eq!(clean.counts.messages_rejected, 0, "every signature verifies");

    let turn = lines.iter().position(|line| line["kind"] == "episodic").unwrap();
    lines[turn]["body"]["text"] = "changed after signing".into();
    write_lines(&input, &lines);
    let out = folder.path().join("tampered");
    let report = convert(&[input], &out, &[OutputFormat::UmpNdjson], 2);
    assert_eq!(report.counts.messages_rejected, 1);
    assert_eq!(report.counts.messages_written, clean.counts.messages_written - 1);
    let rejects = crate::util::ndjson(&out.join("rejects.ndjson"));
    assert!(
        rejects.iter().any(|reject| reject["reason"].as_str().is_some_and(|reason| reason.contains("changed after signing"))),
        "{rejects:?}"
    );
}

#[test]
fn a_pam_memory_not_for_export_is_counted_and_not_written() {
    let folder = tempfile::tempdir().unwrap();
    let mut store = json_of(&shared("pam/examples/example-memory-store.json"));
    store["memories"][0]["access"] = json!({"visibility": "private", "exportable": false});
    let input = folder.path().join("store.json");
    std::fs::write(&input, serde_json::to_vec(&store).unwrap()).unwrap();
    let out = folder.path().join("out");
    let report = convert(&[input], &out, &[OutputFormat::AimemNdjson], 2);
    assert_eq!((report.counts.memories_read, report.counts.memories_written, report.counts.memories_not_exportable), (5, 4, 1));
}

#[test]
fn an_aimem_bundle_that_fails_its_checksum_is_refused_whole() {
    let out = tempfile::tempdir().unwrap();
    let mut options =
        options(&[shared("formats/aimem/conformance-corpus/invalid/checksum_mismatch.json")], out.path(), &[OutputFormat::Aimem]);
    options.settings.branches = BranchPolicy::All;
    let error = memport::run(&options).unwrap_err().to_string();
    assert!(error.contains("409 checksum_mismatch") && error.contains("memport validate"), "{error}");
    assert!(!out.path().join("memory.aimem.json").exists());
}

#[test]
fn dropped_aimem_embeddings_are_reported_with_their_model() {
    let out = tempfile::tempdir().unwrap();
    let report = convert(&[shared("formats/aimem/conformance-corpus/valid/with_embedding.json")], out.path(), &[OutputFormat::Aimem], 2);
    assert!(report.warnings.keys().any(|warning| warning == "aimem_embeddings_dropped:conformance-fake-v1"), "{:?}", report.warnings);
}

#[test]
fn a_truncated_mif_document_keeps_the_memories_before_the_cut_and_reports_where() {
    let direct = tempfile::tempdir().unwrap();
    convert(&[examples()[0].clone()], direct.path(), &[OutputFormat::Mif], 2);
    let bytes = read(&direct.path().join("memory.mif.json"));
    let cut = folder_with(&bytes[..bytes.len() * 2 / 3], "cut.mif.json");
    let out = cut.0.path().join("out");
    let report = convert(&[cut.1], &out, &[OutputFormat::AimemNdjson], 2);
    assert!(report.counts.messages_written > 10, "{:?}", report.counts);
    assert_eq!(report.counts.conversations_rejected, 1);
    let rejects = crate::util::ndjson(&out.join("rejects.ndjson"));
    assert!(rejects[0]["reason"].as_str().unwrap().contains("truncated"), "{rejects:?}");
}

fn folder_with(bytes: &[u8], name: &str) -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (folder, path)
}

#[test]
fn damaged_format_inputs_never_panic_and_counts_balance() {
    let direct = tempfile::tempdir().unwrap();
    convert(&[examples()[1].clone()], direct.path(), &MEMORY_FORMATS, 2);
    for format in [OutputFormat::Mif, OutputFormat::Ump, OutputFormat::UmpNdjson, OutputFormat::Aime, OutputFormat::AimemNdjson] {
        let bytes = read(&direct.path().join(format.default_file_name()));
        let (mut read_through, mut refused) = (0, 0);
        for step in 1..12 {
            let mut damaged = bytes.clone();
            let at = damaged.len() * step / 12;
            damaged[at] = [b'"', b'}', b'{', b'\n', b'x', b']'][step % 6];
            let (folder, input) = folder_with(&damaged, format.default_file_name());
            let mut options = options(&[input], &folder.path().join("out"), &[OutputFormat::AimemNdjson]);
            options.settings.branches = BranchPolicy::All;
            // Either a clean refusal of the whole input (an AIMEM stream that fails its checks,
            // or a file no longer recognizable) or a run whose counts balance.
            match memport::run(&options) {
                Ok(report) => {
                    assert!(report.counts.balances(), "{format:?} damaged at {at}: {:?}", report.counts);
                    read_through += 1;
                }
                Err(error) => {
                    assert!(
                        matches!(error, memport::RunError::Config(memport::ConfigError::NotAnExport { .. })),
                        "{format:?} damaged at {at}: only a clean refusal of the input may stop the run, got: {error}"
                    );
                    refused += 1;
                }
            }
        }
        // AIMEM consumers must refuse a stream that fails its checks; the other readers read on.
        if format == OutputFormat::AimemNdjson {
            assert_eq!(read_through + refused, 11, "{format:?}");
        } else {
            assert!(read_through >= 9, "{format:?}: damaged copies are read with rejects, not refused ({refused} refused)");
        }
    }
}

#[test]
fn a_bad_ndjson_line_is_rejected_with_its_offset_and_the_lines_after_it_are_read() {
    let (folder, lines) = ump_lines(false);
    let mut text: Vec<String> = lines.iter().map(Value::to_string).collect();
    let bad = text.len() / 2;
    let half = text[bad].len() / 2;
    text[bad].truncate(half);
    let offset: usize = text[..bad].iter().map(|line| line.len() + 1).sum();
    let input = folder.path().join("cut-line.ump.ndjson");
    std::fs::write(&input, text.join("\n") + "\n").unwrap();
    let out = folder.path().join("out");
    let report = convert(&[input], &out, &[OutputFormat::UmpNdjson], 2);
    let written = crate::util::ndjson(&out.join("memory.ump.ndjson")).len();
    assert_eq!(written, lines.len() - 1, "every other line is read");
    let rejects = crate::util::ndjson(&out.join("rejects.ndjson"));
    assert_eq!(rejects.len(), 1, "{rejects:?}");
    assert_eq!(rejects[0]["offset"], offset, "{rejects:?}");
    assert!(rejects[0]["reason"].as_str().unwrap().contains("not JSON"));
    assert!(report.counts.balances());
}

#[test]
fn an_unreadable_ump_markdown_file_is_rejected_by_name_and_the_folder_is_read() {
    let direct = tempfile::tempdir().unwrap();
    let report = convert(&[examples()[0].clone()], direct.path(), &[OutputFormat::UmpMd], 2);
    let folder = direct.path().join("ump-md");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&folder).unwrap().map(|entry| entry.unwrap().path()).collect();
    names.sort();
    std::fs::write(&names[0], "no front matter here").unwrap();
    let out = direct.path().join("out");
    let again = convert(&[folder], &out, &[OutputFormat::UmpNdjson], 2);
    let written = crate::util::ndjson(&out.join("memory.ump.ndjson")).len() as u64;
    assert_eq!(written, report.counts.messages_written + report.counts.memories_written - 1);
    let rejects = crate::util::ndjson(&out.join("rejects.ndjson"));
    let name = names[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(rejects.iter().any(|reject| reject["reason"].as_str().unwrap().contains(&name)), "{rejects:?}");
    assert!(again.counts.balances());
}

#[test]
fn every_record_of_a_group_is_read_whatever_its_kind() {
    let (folder, mut lines) = ump_lines(false);
    // A semantic record that names a conversation and a message sits among the turns.
    let turn = lines.iter().position(|line| line["kind"] == "episodic").unwrap();
    let mut extra = lines[turn].clone();
    extra["kind"] = "semantic".into();
    extra["id"] = "urn:ump:abc".into();
    lines.insert(turn + 1, extra);
    let input = folder.path().join("mixed.ump.ndjson");
    write_lines(&input, &lines);
    let out = folder.path().join("out");
    convert(&[input], &out, &[OutputFormat::UmpNdjson], 2);
    assert_eq!(crate::util::ndjson(&out.join("memory.ump.ndjson")).len(), lines.len());

    // Another producer's chunks whose ids look like memport's conversation URNs stay apart.
    let chunks: Vec<Value> = ["a1", "a2", "a3"]
        .iter()
        .map(|local| {
            let content = format!("note {local}");
            let hash = memport::hash::sha256_label(&memport::hash::sha256(content.as_bytes()));
            json!({"id": format!("urn:aimem:acme:notes.2024.{local}"), "content": content, "content_hash": hash, "memory_type": "fact", "created_at": "2026-01-01T00:00:00Z"})
        })
        .collect();
    let bundle = json!({
        "format": "aimem-bundle", "version": "1", "producer": "acme", "tenant_id": "t", "exported_at": "2026-01-01T00:00:00Z", "scope": "FULL",
        "chunks": chunks, "edges": [], "entities": [], "chunk_entities": []
    });
    let mut bundle = bundle;
    let checksum = memport::hash::sha256_label(&memport::hash::sha256(&memport::jcs::to_canonical_vec(&bundle)));
    bundle["checksum"] = checksum.into();
    let input = folder.path().join("acme.aimem.json");
    std::fs::write(&input, bundle.to_string()).unwrap();
    let report = convert(&[input], &folder.path().join("acme"), &[OutputFormat::Aimem], 2);
    assert_eq!(report.counts.memories_written, 3);
}

#[test]
fn memories_travelling_with_an_unreadable_conversation_file_are_still_written() {
    let direct = tempfile::tempdir().unwrap();
    let report = convert(&[examples()[0].clone()], direct.path(), &[OutputFormat::Pam], 2);
    let store = direct.path().join("pam");
    let index = json_of(&store.join("memory-store.json"));
    let with_memories = index["conversations_index"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["derived_memories"].as_array().is_some_and(|derived| !derived.is_empty()))
        .unwrap();
    std::fs::write(store.join(with_memories["storage"]["ref"].as_str().unwrap()), "{ broken").unwrap();
    let again = convert(&[store], &direct.path().join("out"), &[OutputFormat::AimemNdjson], 2);
    assert_eq!(again.counts.memories_written, report.counts.memories_written, "{:?}", again.counts);
    assert!(again.counts.messages_rejected >= 1);
}

#[test]
fn labels_with_commas_and_ids_unfit_for_a_urn_survive_other_formats() {
    let folder = tempfile::tempdir().unwrap();
    let mut store = json_of(&shared("pam/examples/example-memory-store.json"));
    store["memories"][0]["id"] = "mem:1".into();
    store["memories"][0]["tags"] = json!(["new-york, ny"]);
    let input = folder.path().join("store.json");
    std::fs::write(&input, serde_json::to_vec(&store).unwrap()).unwrap();
    let out = folder.path().join("out");
    convert(&[input], &out, &[OutputFormat::Mif, OutputFormat::Aimem], 2);
    let validation = memport::validate::validate_path(&out.join("memory.aimem.json")).unwrap();
    assert!(validation.is_valid(), "{:?}", validation.problems);
    let back = folder.path().join("back");
    convert(&[out.join("memory.mif.json")], &back, &[OutputFormat::Pam], 2);
    let memories = json_of(&back.join("pam/memory-store.json"))["memories"].clone();
    let labels: Vec<Value> = memories
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|memory| memory["metadata"]["labels"].as_array().cloned().unwrap_or_default())
        .collect();
    assert!(labels.contains(&Value::from("tag:new-york, ny")), "{labels:?}");
}

#[test]
fn the_zone_copilot_times_were_read_in_survives_aime() {
    let direct = tempfile::tempdir().unwrap();
    let mut options = options(&[examples()[2].clone()], direct.path(), &[OutputFormat::Aime, OutputFormat::AimemNdjson]);
    options.settings.timezone = memport::sources::TimeZone::parse("+02:00").unwrap();
    memport::run(&options).unwrap();
    let via = tempfile::tempdir().unwrap();
    convert(&[direct.path().join("memory.aime.json")], via.path(), &[OutputFormat::AimemNdjson], 2);
    let zone_tags = |path: &Path| {
        crate::util::ndjson(path)
            .iter()
            .filter(|line| line["tags"].as_array().is_some_and(|tags| tags.contains(&Value::from("tz-assumed-p02-00"))))
            .count()
    };
    let direct_tags = zone_tags(&direct.path().join("memory.aimem.ndjson"));
    assert!(direct_tags > 0);
    assert_eq!(zone_tags(&via.path().join("memory.aimem.ndjson")), direct_tags);
}

/// A store folder made of the spec's example store and its embeddings file.
fn example_store_with_embeddings(folder: &Path) -> PathBuf {
    let store = folder.join("spec-store");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::copy(shared("pam/examples/example-memory-store.json"), store.join("memory-store.json")).unwrap();
    std::fs::copy(shared("pam/examples/example-embeddings.json"), store.join("embeddings.json")).unwrap();
    store
}

#[test]
fn embeddings_travel_through_pam_and_mif_and_come_back_the_same() {
    let folder = tempfile::tempdir().unwrap();
    let store = example_store_with_embeddings(folder.path());
    let vectors = |embeddings: &Value| -> BTreeMap<String, Value> {
        embeddings["embeddings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| (entry["memory_id"].as_str().unwrap().to_owned(), entry["vector"].clone()))
            .collect()
    };
    let original = vectors(&json_of(&store.join("embeddings.json")));
    assert_eq!(original.len(), 5);

    let first = folder.path().join("first");
    convert(&[store], &first, &[OutputFormat::Pam, OutputFormat::Mif], 2);
    let written = json_of(&first.join("pam/embeddings.json"));
    assert_eq!(vectors(&written), original);
    let schema: Value = serde_json::from_slice(&read(&shared("pam/schemas/portable-ai-memory-embeddings.schema.json"))).unwrap();
    let validator = jsonschema::draft202012::options().should_validate_formats(true).build(&schema).unwrap();
    assert!(validator.is_valid(&written), "{:?}", validator.iter_errors(&written).map(|error| error.to_string()).collect::<Vec<_>>());
    let memories = json_of(&first.join("pam/memory-store.json"))["memories"].clone();
    assert!(memories.as_array().unwrap().iter().all(|memory| memory["embedding_ref"].is_string()), "{memories}");
    let validation = memport::validate::validate_path(&first.join("pam")).unwrap();
    assert!(validation.is_valid(), "{:?}", validation.problems);

    // MIF carries each vector in the memory; reading it back gives the same vectors.
    let mif = json_of(&first.join("memory.mif.json"));
    assert!(mif["memories"].as_array().unwrap().iter().all(|memory| memory["embeddings"]["dimensions"] == 8));
    let second = folder.path().join("second");
    convert(&[first.join("memory.mif.json")], &second, &[OutputFormat::Pam], 2);
    assert_eq!(vectors(&json_of(&second.join("pam/embeddings.json"))), original);
    assert_eq!(json_of(&second.join("pam/embeddings.json")), written, "ids and times too");

    // A store memport wrote converts to the same embeddings file.
    let third = folder.path().join("third");
    convert(&[first.join("pam")], &third, &[OutputFormat::Pam], 2);
    assert!(read(&third.join("pam/embeddings.json")) == read(&first.join("pam/embeddings.json")));
}

#[test]
fn a_store_index_listing_a_conversation_twice_or_badly_loses_and_doubles_nothing() {
    let direct = tempfile::tempdir().unwrap();
    let report = convert(&[examples()[0].clone()], direct.path(), &[OutputFormat::Pam], 2);
    let store = direct.path().join("pam");
    let mut index = json_of(&store.join("memory-store.json"));
    let entries = index["conversations_index"].as_array_mut().unwrap();
    let owner = entries.iter().position(|entry| entry["derived_memories"].as_array().is_some_and(|derived| !derived.is_empty())).unwrap();
    let twice = entries[owner].clone();
    entries[owner]["derived_memories"] = "not a list".into();
    entries.push(twice);
    entries.push(json!({"platform": "chatgpt", "storage": {"type": "file", "ref": "conversations/none.json"}}));
    std::fs::write(store.join("memory-store.json"), serde_json::to_vec(&index).unwrap()).unwrap();
    let out = direct.path().join("out");
    let again = convert(&[store], &out, &[OutputFormat::AimemNdjson], 2);
    assert_eq!(again.counts.memories_read, report.counts.memories_written, "{:?}", again.counts);
    assert_eq!(again.counts.memories_duplicate, 0);
    assert_eq!(again.counts.conversations_rejected, 1, "the entry without an id");
    let rejects = crate::util::ndjson(&out.join("rejects.ndjson"));
    assert!(rejects.iter().any(|reject| reject["reason"].as_str().unwrap().contains("without an id")), "{rejects:?}");
}
