//! AIME documents: every real sample and the generated examples written in the spec's shape,
//! accepted by the derived JSON Schema (Draft 2020-12, formats asserted) and by
//! `memport validate`, with counts, date range and `RESPONDS_TO` links recomputed here;
//! determinism; and `memport validate` on the upstream examples and on broken documents.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memport::pipeline::report::RunReport;
use memport::sinks::OutputFormat;
use memport::sources::BranchPolicy;
use serde_json::Value;

use crate::util::{REAL_SAMPLES, examples, options, shared};

fn derived_schema() -> jsonschema::Validator {
    crate::util::schema("formats/aime/aime-v1.0.derived.schema.json")
}

fn convert_to_aime(inputs: &[PathBuf], branches: BranchPolicy, threads: usize) -> (tempfile::TempDir, RunReport, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let mut options = options(inputs, out.path(), &[OutputFormat::Aime]);
    options.settings.branches = branches;
    options.settings.threads = Some(threads);
    let report = memport::run(&options).unwrap();
    assert!(report.counts.balances(), "{:?}", report.counts);
    let path = out.path().join("memory.aime.json");
    (out, report, path)
}

fn check_document(path: &Path, report: &RunReport, label: &str) -> Value {
    let document: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let errors: Vec<String> =
        derived_schema().iter_errors(&document).map(|error| format!("{error} at {}", error.instance_path())).collect();
    assert!(errors.is_empty(), "{label}: {errors:#?}");
    let messages = document["messages"].as_array().unwrap();
    assert_eq!(messages.len() as u64, report.counts.messages_written, "{label}: one entry per written message");
    assert_eq!(document["metadata"]["messageCount"], messages.len(), "{label}");
    let memories = document["extensions"]["memport"]["memories"].as_array().unwrap();
    assert_eq!(memories.len() as u64, crate::util::memories_in_output(report), "{label}: memories");
    let times: Vec<&str> = messages.iter().map(|message| message["timestamp"].as_str().unwrap()).collect();
    if let (Some(first), Some(last)) = (times.iter().min(), times.iter().max()) {
        assert_eq!(document["metadata"]["dateRange"]["start"], *first, "{label}");
        assert_eq!(document["metadata"]["dateRange"]["end"], *last, "{label}");
    }
    let by_id: HashMap<&str, &Value> = messages.iter().map(|message| (message["id"].as_str().unwrap(), message)).collect();
    assert_eq!(by_id.len(), messages.len(), "{label}: unique ids");
    for message in messages {
        for relationship in message["relationships"].as_array().into_iter().flatten() {
            assert_eq!(message["role"], "assistant", "{label}: only answers respond");
            let target = by_id[relationship["target"].as_str().unwrap()];
            assert_eq!(target["role"], "user", "{label}: an answer responds to a user turn");
            assert_eq!(target["metadata"]["session"], message["metadata"]["session"], "{label}: in its own conversation");
        }
    }
    let validation = memport::validate::validate_path(path).unwrap();
    assert_eq!(validation.format, "aime");
    assert!(validation.is_valid(), "{label}: {:?}", validation.problems);
    document
}

#[test]
fn every_real_sample_writes_a_document_the_derived_schema_accepts() {
    for sample in REAL_SAMPLES {
        for branches in [BranchPolicy::Active, BranchPolicy::All] {
            let (_out, report, path) = convert_to_aime(&[shared(sample)], branches, 2);
            check_document(&path, &report, &format!("{sample} ({branches:?})"));
        }
    }
}

#[test]
fn the_generated_examples_make_one_document_with_answers_linked_to_prompts() {
    let (_out, report, path) = convert_to_aime(&examples(), BranchPolicy::Active, 2);
    let document = check_document(&path, &report, "examples");
    let messages = document["messages"].as_array().unwrap();
    let answers = messages.iter().filter(|message| message["role"] == "assistant").count();
    let linked = messages.iter().filter(|message| message["relationships"].is_array()).count();
    assert!(linked * 10 >= answers * 9, "most answers follow a prompt: {linked} of {answers}");
    assert_eq!(document["metadata"]["tags"], serde_json::json!(["chatgpt", "claude", "copilot", "gemini", "grok"]));
}

#[test]
fn the_document_is_byte_identical_at_any_thread_count() {
    let (_a, _, one) = convert_to_aime(&examples(), BranchPolicy::All, 1);
    let (_b, _, four) = convert_to_aime(&examples(), BranchPolicy::All, 4);
    assert_eq!(std::fs::read(one).unwrap(), std::fs::read(four).unwrap());
}

#[test]
fn the_spec_examples_validate() {
    for file in ["formats/aime/minimal-export.aime.json", "formats/aime/spec-assembled-full.aime.json"] {
        let validation = memport::validate::validate_path(&shared(file)).unwrap();
        assert_eq!(validation.format, "aime", "{file}");
        assert!(validation.is_valid(), "{file}: {:?}", validation.problems);
    }
}

#[test]
fn validate_lists_what_the_spec_validator_and_the_field_tables_reject() {
    let (out, _, path) = convert_to_aime(&examples(), BranchPolicy::Active, 2);
    let mut document: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let messages = document["messages"].as_array_mut().unwrap();
    messages[0]["content"] = "".into();
    messages[1]["role"] = "tool".into();
    messages[2]["timestamp"] = "yesterday".into();
    let linked = messages.iter().position(|message| message["relationships"].is_array()).unwrap();
    messages[linked]["relationships"][0]["target"] = "nowhere".into();
    document["metadata"]["messageCount"] = 3.into();
    let broken = out.path().join("broken.aime.json");
    std::fs::write(&broken, serde_json::to_vec(&document).unwrap()).unwrap();
    let validation = memport::validate::validate_path(&broken).unwrap();
    let found: Vec<(&str, &str)> = validation.problems.iter().map(|problem| (problem.code, problem.location.as_str())).collect();
    for expected in [
        ("missing_member", "/messages/0/content"),
        ("not_in_enum", "/messages/1/role"),
        ("bad_date_time", "/messages/2/timestamp"),
        ("count_mismatch", "/metadata/messageCount"),
    ] {
        assert!(found.contains(&expected), "{expected:?} in {found:?}");
    }
    assert!(
        found.iter().any(|(code, location)| *code == "dangling_reference" && location.ends_with("/relationships/0/target")),
        "{found:?}"
    );
    assert!(validation.problems.iter().all(|problem| problem.status == 422));
}
