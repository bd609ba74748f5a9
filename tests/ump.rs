//! UMP 0.1 records in all three bindings: every real sample and the generated examples, each
//! record accepted by the published 0.1 schema (Draft 2020-12, formats asserted, closed objects)
//! and by `memport validate`, with counts and relations recomputed here; the Markdown binding
//! read back as the reference reader does; determinism; and `memport validate` on the upstream
//! records and on broken ones.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use memport::pipeline::report::RunReport;
use memport::sinks::OutputFormat;
use memport::sources::BranchPolicy;
use serde_json::Value;

use crate::util::{REAL_SAMPLES, examples, options, shared};

fn record_schema() -> jsonschema::Validator {
    crate::util::schema("formats/ump/ump-record-0.1.schema.json")
}

fn convert(inputs: &[PathBuf], format: OutputFormat, branches: BranchPolicy, threads: usize) -> (tempfile::TempDir, RunReport, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let mut options = options(inputs, out.path(), &[format]);
    let path = out.path().join(format.default_file_name());
    options.outputs = vec![(format, path.clone())];
    options.settings.branches = branches;
    options.settings.threads = Some(threads);
    let report = memport::run(&options).unwrap();
    assert!(report.counts.balances(), "{:?}", report.counts);
    (out, report, path)
}

/// The records of any binding, as the reference reader sees them.
fn read_records(path: &Path, format: OutputFormat) -> Vec<Value> {
    match format {
        OutputFormat::Ump => serde_json::from_slice::<Vec<Value>>(&std::fs::read(path).unwrap()).unwrap(),
        OutputFormat::UmpNdjson => crate::util::ndjson(path),
        _ => {
            let mut names: Vec<PathBuf> = std::fs::read_dir(path).unwrap().map(|entry| entry.unwrap().path()).collect();
            names.sort();
            names
                .iter()
                .map(|file| {
                    let text = std::fs::read_to_string(file).unwrap();
                    let (front, body) = text.strip_prefix("---\n").unwrap().split_once("\n---\n").unwrap();
                    let mut record: Value = serde_json::from_str(front).unwrap();
                    let name = file.file_name().unwrap().to_string_lossy().into_owned();
                    assert_eq!(name, format!("{}.ump.md", record["id"].as_str().unwrap().trim_start_matches("urn:ump:")));
                    record["body"]["text"] = body.trim_start_matches('\n').trim_end().into();
                    record
                })
                .collect()
        }
    }
}

fn check_records(path: &Path, format: OutputFormat, report: &RunReport, label: &str) -> Vec<Value> {
    let schema = record_schema();
    let records = read_records(path, format);
    assert_eq!(
        records.len() as u64,
        report.counts.messages_written + crate::util::memories_in_output(report),
        "{label}: one record per message and memory"
    );
    let ids: HashSet<&str> = records.iter().map(|record| record["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), records.len(), "{label}: unique ids");
    for record in &records {
        let errors: Vec<String> = schema.iter_errors(record).map(|error| format!("{error} at {}", error.instance_path())).collect();
        assert!(errors.is_empty(), "{label}: {errors:#?}");
        assert_eq!(record.get("integrity").is_some(), label.contains("signed"), "{label}: integrity only when signed");
        // Extracted memories were found by memport in the user's words; the rest was imported.
        let extracted = record["provenance"]["method"].as_str().is_some_and(|method| method.starts_with("memport-rules/"));
        assert_eq!(record["provenance"]["actor_kind"], if extracted { "scan" } else { "import" }, "{label}");
        for relation in record["relations"].as_array().into_iter().flatten() {
            // A relation names a record of the file or, for what a memory is about, an entity.
            let target = relation["target"].as_str().unwrap();
            assert!(ids.contains(target) || target.starts_with("entity:"), "{label}: relation targets are records of the file or entities");
        }
    }
    let validation = memport::validate::validate_path(path).unwrap();
    assert_eq!(validation.format, "ump", "{label}");
    assert!(validation.is_valid(), "{label}: {:?}", validation.problems);
    records
}

#[test]
fn every_real_sample_writes_records_the_published_schema_accepts_in_every_binding() {
    for sample in REAL_SAMPLES {
        for format in [OutputFormat::Ump, OutputFormat::UmpNdjson, OutputFormat::UmpMd] {
            let (_out, report, path) = convert(&[shared(sample)], format, BranchPolicy::All, 2);
            check_records(&path, format, &report, &format!("{sample} ({})", format.name()));
        }
    }
}

#[test]
fn the_three_bindings_hold_the_same_records() {
    let (_a, report, json) = convert(&examples(), OutputFormat::Ump, BranchPolicy::Active, 2);
    let (_b, _, ndjson) = convert(&examples(), OutputFormat::UmpNdjson, BranchPolicy::Active, 2);
    let (_c, _, markdown) = convert(&examples(), OutputFormat::UmpMd, BranchPolicy::Active, 2);
    let from_json = check_records(&json, OutputFormat::Ump, &report, "json");
    assert_eq!(from_json, read_records(&ndjson, OutputFormat::UmpNdjson));
    let mut sorted_json = from_json.clone();
    sorted_json.sort_by(|left, right| left["id"].as_str().cmp(&right["id"].as_str()));
    let mut from_markdown = read_records(&markdown, OutputFormat::UmpMd);
    from_markdown.sort_by(|left, right| left["id"].as_str().cmp(&right["id"].as_str()));
    // The Markdown reader trims the text, as the reference does.
    for record in &mut sorted_json {
        let trimmed = record["body"]["text"].as_str().unwrap().trim_start_matches('\n').trim_end().to_owned();
        record["body"]["text"] = trimmed.into();
    }
    assert_eq!(sorted_json, from_markdown);
    let kinds: HashSet<&str> = from_json.iter().map(|record| record["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains("episodic") && kinds.len() > 1, "{kinds:?}");
}

#[test]
fn records_are_byte_identical_at_any_thread_count_and_the_folder_is_replaced() {
    let (_a, _, one) = convert(&examples(), OutputFormat::UmpNdjson, BranchPolicy::All, 1);
    let (_b, _, four) = convert(&examples(), OutputFormat::UmpNdjson, BranchPolicy::All, 4);
    assert_eq!(std::fs::read(one).unwrap(), std::fs::read(four).unwrap());

    let out = tempfile::tempdir().unwrap();
    let folder = out.path().join("records");
    let mut options = options(&examples(), out.path(), &[OutputFormat::UmpMd]);
    options.outputs = vec![(OutputFormat::UmpMd, folder.clone())];
    memport::run(&options).unwrap();
    let before = std::fs::read_dir(&folder).unwrap().count();
    options.inputs = vec![examples()[0].clone()];
    memport::run(&options).unwrap();
    let after = std::fs::read_dir(&folder).unwrap().count();
    assert!(after < before, "a rerun replaces the records: {after} < {before}");
    std::fs::write(folder.join("notes.txt"), "mine").unwrap();
    let error = memport::run(&options).unwrap_err().to_string();
    assert!(error.contains("notes.txt") && error.contains("not a .ump.md record"), "{error}");
}

#[test]
fn the_upstream_records_validate() {
    for file in ["formats/ump/minimal-0.1.ump.json", "formats/ump/responsibility-confirmed.ump.json"] {
        let validation = memport::validate::validate_path(&shared(file)).unwrap();
        assert_eq!(validation.format, "ump", "{file}");
        assert!(validation.is_valid(), "{file}: {:?}", validation.problems);
    }
}

#[test]
fn validate_lists_what_the_schema_refuses() {
    let (out, _, path) = convert(&examples(), OutputFormat::Ump, BranchPolicy::Active, 2);
    let mut records: Vec<Value> = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    records[0]["id"] = "urn:ump:ABC".into();
    records[1]["kind"] = "conversation".into();
    records[2]["body"]["html"] = "<p>".into();
    records[3]["integrity"] = serde_json::json!({"content_hash": "blake3:abc"});
    records[4]["lifecycle"]["confidence"] = 1.5.into();
    records[5]["time"]["created"] = "soon".into();
    let broken = out.path().join("broken.ump.json");
    std::fs::write(&broken, serde_json::to_vec(&records).unwrap()).unwrap();
    let validation = memport::validate::validate_path(&broken).unwrap();
    let found: Vec<(&str, &str)> = validation.problems.iter().map(|problem| (problem.code, problem.location.as_str())).collect();
    for expected in [
        ("bad_pattern", "broken.ump.json#/0/id"),
        ("not_in_enum", "broken.ump.json#/1/kind"),
        ("unknown_member", "broken.ump.json#/2/body/html"),
        ("missing_member", "broken.ump.json#/3/integrity"),
        ("out_of_range", "broken.ump.json#/4/lifecycle/confidence"),
        ("bad_date_time", "broken.ump.json#/5/time/created"),
    ] {
        assert!(found.contains(&expected), "{expected:?} in {found:?}");
    }
    // The published schema agrees on every one of them.
    let schema = record_schema();
    assert!(records.iter().take(6).all(|record| !schema.is_valid(record)));
}

#[test]
fn signed_records_verify_in_every_binding_and_a_changed_text_breaks_the_hash() {
    let keys = tempfile::tempdir().unwrap();
    let key = memport::signing::SignKey::load(&crate::pam::test_key_file(keys.path())).unwrap();
    for format in [OutputFormat::Ump, OutputFormat::UmpNdjson, OutputFormat::UmpMd] {
        let out = tempfile::tempdir().unwrap();
        let mut options = options(&examples(), out.path(), &[format]);
        let path = out.path().join(format.default_file_name());
        options.outputs = vec![(format, path.clone())];
        options.sign_key = Some(key.clone());
        let report = memport::run(&options).unwrap();
        let records = check_records(&path, format, &report, &format!("signed {}", format.name()));
        assert!(records.iter().all(|record| record["integrity"]["signer"] == key.did_key().as_str()));
        let validation = memport::validate::validate_path(&path).unwrap();
        assert!(
            validation.notices.iter().any(|notice| notice == &format!("{} signed records: hash and signature verified", records.len())),
            "{:?}",
            validation.notices
        );
    }
    let out = tempfile::tempdir().unwrap();
    let mut options = options(&examples(), out.path(), &[OutputFormat::Ump]);
    options.sign_key = Some(key);
    memport::run(&options).unwrap();
    let path = out.path().join("memory.ump.json");
    let mut records: Vec<Value> = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    records[0]["body"]["text"] = "changed".into();
    std::fs::write(&path, serde_json::to_vec(&records).unwrap()).unwrap();
    let validation = memport::validate::validate_path(&path).unwrap();
    let codes: Vec<(u16, &str, &str)> =
        validation.problems.iter().map(|problem| (problem.status, problem.code, problem.location.as_str())).collect();
    assert_eq!(codes, [(409, "content_hash_mismatch", "memory.ump.json#/0/integrity/content_hash")]);
}

#[test]
fn the_upstream_signed_record_verifies() {
    // UMP 1.0's example, signed upstream: an independent vector for hash and signature.
    let record: Value = serde_json::from_slice(&std::fs::read(shared("formats/ump/responsibility-confirmed.ump.json")).unwrap()).unwrap();
    assert_eq!(memport::signing::ump_content_hash(&record), "blake3:jy4qfsgftbzitvwv3k7zcj5guxhyarti57cwp3rc7jqmqt2uo2aa");
    assert_eq!(memport::signing::verify_ump_integrity(&record), memport::signing::UmpIntegrity::Verified);
}

#[test]
fn extracted_memories_read_back_from_ump_are_written_again_whole_in_every_format() {
    let chatgpt: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("chatgpt-small")).collect();
    let formats = [OutputFormat::UmpNdjson, OutputFormat::Aimem, OutputFormat::Mif, OutputFormat::Aime];
    let direct = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&chatgpt, direct.path(), &formats, 2);
    let written = direct.path().join(OutputFormat::UmpNdjson.default_file_name());
    let extracted = std::fs::read_to_string(&written).unwrap().lines().filter(|line| line.contains("\"actor_kind\":\"scan\"")).count();
    assert!(extracted >= 5, "the example yields extracted memories: {extracted}");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.contains("\"superseded_by\":[") && text.contains("\"quote\":"), "supersession and evidence quotes are written");

    // Read back, with their evidence, entities and supersession: every output is the same file.
    let back = tempfile::tempdir().unwrap();
    let report = crate::util::convert_all_branches(&[written], back.path(), &formats, 2);
    assert!(report.memories_extracted.is_none_or(|memories| memories.written == 0), "nothing is extracted again");
    for format in formats {
        let name = format.default_file_name();
        assert!(std::fs::read(direct.path().join(name)).unwrap() == std::fs::read(back.path().join(name)).unwrap(), "{name} differs");
    }
}

/// A run reading memport's UMP back beside a new export: an entity a read-back memory names
/// (Leeds, the old home) and a memory the run extracts names too (the new export's origin) is
/// written once, so the AIMEM bundle holds no two entities with one id and validates.
#[test]
fn an_entity_named_by_a_read_back_memory_and_a_new_one_is_written_once() {
    let chatgpt: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("chatgpt-small")).collect();
    let direct = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&chatgpt, direct.path(), &[OutputFormat::UmpNdjson], 2);
    let nodes = vec![crate::util::text_node("n1", Some("root"), "user", "I'm originally from Leeds.", 1_700_000_001.0)];
    let fresh = crate::util::write_export(&direct.path().join("fresh"), &[crate::util::conversation("fresh-1", nodes, Some("n1"))]);
    let inputs = [direct.path().join(OutputFormat::UmpNdjson.default_file_name()), fresh];
    let mixed = tempfile::tempdir().unwrap();
    let report = crate::util::convert_all_branches(&inputs, mixed.path(), &[OutputFormat::AimemNdjson], 2);
    assert!(report.memories_extracted.as_ref().is_some_and(|memories| memories.written == 1), "the origin is extracted");
    let bundle = mixed.path().join(OutputFormat::AimemNdjson.default_file_name());
    let records = crate::util::ndjson(&bundle);
    let leeds: Vec<&Value> = records.iter().filter(|record| record["_kind"] == "entity" && record["name"] == "Leeds").collect();
    assert_eq!(leeds.len(), 1, "{leeds:?}");
    let links = records.iter().filter(|record| record["_kind"] == "chunk_entity" && record["entity_id"] == leeds[0]["id"]).count();
    assert_eq!(links, 2, "the old home and the origin both link to it");
    let validation = memport::validate::validate_path(&bundle).unwrap();
    assert!(validation.is_valid(), "{:?}", validation.problems);
}

#[test]
fn a_read_back_quote_passes_the_filters_extractions_own_quotes_pass() {
    let chatgpt: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("chatgpt-small")).collect();
    let direct = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&chatgpt, direct.path(), &[OutputFormat::UmpNdjson], 2);
    let written = direct.path().join(OutputFormat::UmpNdjson.default_file_name());
    // A quote edited by hand (or by another tool) to hold a contact detail and a secret.
    let leaky = "I live in Leeds, mail ada@example.org, key sk_live_4eC39HqLyjWDarjtT1zdp7dc";
    let edited: Vec<String> = std::fs::read_to_string(&written)
        .unwrap()
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            if let Some(evidence) = record["body"]["structured"]["evidence"].as_array_mut() {
                evidence[0]["quote"] = Value::from(leaky);
            }
            record.to_string()
        })
        .collect();
    let input = direct.path().join("edited.ump.ndjson");
    std::fs::write(&input, edited.join("\n") + "\n").unwrap();
    let back = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&[input], back.path(), &[OutputFormat::UmpNdjson], 2);
    let text = std::fs::read_to_string(back.path().join(OutputFormat::UmpNdjson.default_file_name())).unwrap();
    assert!(text.contains("I live in Leeds"), "the quote is kept");
    assert!(!text.contains("ada@example.org") && !text.contains("sk_live_4eC39"), "its contact detail and secret are masked");
}
