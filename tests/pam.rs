//! PAM stores: every real sample and generated example written as a store that the published
//! JSON Schemas (Draft 2020-12, formats asserted) accept, with the integrity checksum, content
//! hashes, index and conversation trees recomputed here; determinism; replacing a store; and
//! `memport validate` on the upstream examples and on broken stores.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use memport::hash::{pam_content_digest, sha256, sha256_label};
use memport::jcs::to_canonical_vec;
use memport::pipeline::report::RunReport;
use memport::sinks::OutputFormat;
use memport::sources::BranchPolicy;
use serde_json::Value;

use crate::util::{REAL_SAMPLES, examples, options, shared};

fn schema_validator(file: &str) -> jsonschema::Validator {
    crate::util::schema(&format!("pam/schemas/{file}"))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap_or_else(|error| panic!("{} is JSON: {error}", path.display()))
}

fn convert_to_store(inputs: &[PathBuf], branches: BranchPolicy, threads: usize) -> (tempfile::TempDir, RunReport) {
    let out = tempfile::tempdir().unwrap();
    let mut options = options(inputs, out.path(), &[OutputFormat::Pam]);
    options.outputs = vec![(OutputFormat::Pam, out.path().join("store"))];
    options.settings.branches = branches;
    options.settings.threads = Some(threads);
    let report = memport::run(&options).unwrap();
    assert!(report.counts.balances(), "{:?}", report.counts);
    (out, report)
}

/// Checks one store against the schemas and recomputes what the writer computed.
fn check_store(store: &Path, report: &RunReport, branches: BranchPolicy, label: &str) {
    let store_schema = schema_validator("portable-ai-memory.schema.json");
    let conversation_schema = schema_validator("portable-ai-memory-conversation.schema.json");
    let index = read_json(&store.join("memory-store.json"));
    let errors: Vec<String> = store_schema.iter_errors(&index).map(|error| format!("{} at {}", error, error.instance_path())).collect();
    assert!(errors.is_empty(), "{label}: memory-store.json fails the schema: {errors:#?}");

    // Integrity: SHA-256 over the canonical memories sorted by id.
    let mut memories = index["memories"].as_array().unwrap().clone();
    memories.sort_by(|left, right| left["id"].as_str().cmp(&right["id"].as_str()));
    let checksum = sha256_label(&sha256(&to_canonical_vec(&Value::Array(memories.clone()))));
    assert_eq!(index["integrity"]["checksum"], checksum.as_str(), "{label}: checksum");
    assert_eq!(index["integrity"]["total_memories"], memories.len(), "{label}: total");
    assert_eq!(memories.len() as u64, crate::util::memories_in_output(report), "{label}: memories written");
    for memory in &memories {
        let content = memory["content"].as_str().unwrap();
        assert_eq!(memory["content_hash"], sha256_label(&pam_content_digest(content)).as_str(), "{label}: content hash");
    }

    // Index ⇄ files ⇄ memories.
    let memory_refs: BTreeMap<&str, Option<&str>> =
        memories.iter().map(|memory| (memory["id"].as_str().unwrap(), memory["provenance"]["conversation_ref"].as_str())).collect();
    let entries = index["conversations_index"].as_array().unwrap();
    let files: BTreeSet<String> = std::fs::read_dir(store.join("conversations"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), entries.len(), "{label}: one file per index entry");
    let mut messages_in_files = 0u64;
    let mut ids = BTreeSet::new();
    for entry in entries {
        let id = entry["id"].as_str().unwrap();
        assert!(ids.insert(id.to_owned()), "{label}: duplicate conversation id {id}");
        let file = store.join(entry["storage"]["ref"].as_str().unwrap());
        let conversation = read_json(&file);
        let errors: Vec<String> =
            conversation_schema.iter_errors(&conversation).map(|error| format!("{} at {}", error, error.instance_path())).collect();
        assert!(errors.is_empty(), "{label}: {} fails the schema: {errors:#?}", file.display());
        assert_eq!(conversation["id"], entry["id"], "{label}");
        assert_eq!(conversation["title"], entry["title"], "{label}");
        assert_eq!(conversation["provider"]["name"], entry["platform"], "{label}");
        let messages = conversation["messages"].as_array().unwrap();
        assert_eq!(entry["message_count"], messages.len(), "{label}: message_count of {id}");
        messages_in_files += messages.len() as u64;
        check_tree(messages, branches, &format!("{label}: {id}"));
        for derived in entry["derived_memories"].as_array().into_iter().flatten() {
            assert_eq!(memory_refs.get(derived.as_str().unwrap()), Some(&Some(id)), "{label}: derived memory points back");
        }
    }
    for (memory, conversation) in &memory_refs {
        if let Some(conversation) = conversation {
            let entry = entries
                .iter()
                .find(|entry| entry["id"] == *conversation)
                .unwrap_or_else(|| panic!("{label}: {memory} refers to a listed conversation"));
            assert!(
                entry["derived_memories"].as_array().unwrap().iter().any(|derived| derived == memory),
                "{label}: {memory} listed as derived"
            );
        }
    }
    assert_eq!(messages_in_files, report.counts.messages_written, "{label}: every written message is in a conversation file");
}

/// Parents exist and list their children; under `active` the messages form chains.
fn check_tree(messages: &[Value], branches: BranchPolicy, label: &str) {
    let by_id: HashMap<&str, &Value> = messages.iter().map(|message| (message["id"].as_str().unwrap(), message)).collect();
    assert_eq!(by_id.len(), messages.len(), "{label}: unique message ids");
    for message in messages {
        let id = message["id"].as_str().unwrap();
        if let Some(parent) = message["parent_id"].as_str() {
            let parent = by_id.get(parent).unwrap_or_else(|| panic!("{label}: parent of {id} is in the file"));
            assert!(parent["children_ids"].as_array().unwrap().iter().any(|child| child == id), "{label}: parent lists {id}");
        }
        let children = message["children_ids"].as_array().unwrap();
        for child in children {
            assert_eq!(by_id[child.as_str().unwrap()]["parent_id"], id, "{label}: child points back");
        }
        if branches == BranchPolicy::Active {
            assert!(children.len() <= 1, "{label}: the active thread is a chain");
        }
    }
}

#[test]
fn every_real_sample_writes_a_store_the_published_schemas_accept() {
    for sample in REAL_SAMPLES {
        for branches in [BranchPolicy::Active, BranchPolicy::All] {
            let (out, report) = convert_to_store(&[shared(sample)], branches, 2);
            let store = out.path().join("store");
            check_store(&store, &report, branches, &format!("{sample} ({branches:?})"));
            let validation = memport::validate::validate_path(&store).unwrap();
            assert!(validation.is_valid(), "{sample}: memport validate accepts the store: {:?}", validation.problems);
            assert_eq!(validation.format, "pam");
        }
    }
}

#[test]
fn the_generated_examples_of_every_provider_make_one_store() {
    let (out, report) = convert_to_store(&examples(), BranchPolicy::All, 2);
    let store = out.path().join("store");
    check_store(&store, &report, BranchPolicy::All, "examples");
    let index = read_json(&store.join("memory-store.json"));
    let platforms: BTreeSet<&str> =
        index["conversations_index"].as_array().unwrap().iter().map(|entry| entry["platform"].as_str().unwrap()).collect();
    assert_eq!(platforms, BTreeSet::from(["chatgpt", "claude", "copilot", "gemini", "grok"]));
    assert!(report.counts.memories_written > 0, "the examples carry provider memories");
}

fn store_files(store: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    files.insert("memory-store.json".to_owned(), std::fs::read(store.join("memory-store.json")).unwrap());
    for entry in std::fs::read_dir(store.join("conversations")).unwrap() {
        let entry = entry.unwrap();
        files.insert(entry.file_name().to_string_lossy().into_owned(), std::fs::read(entry.path()).unwrap());
    }
    files
}

#[test]
fn the_store_is_byte_identical_at_any_thread_count() {
    let (one, _) = convert_to_store(&examples(), BranchPolicy::All, 1);
    let (two, _) = convert_to_store(&examples(), BranchPolicy::All, 2);
    let (four, _) = convert_to_store(&examples(), BranchPolicy::All, 4);
    let reference = store_files(&one.path().join("store"));
    assert!(reference.len() > 10);
    assert_eq!(store_files(&two.path().join("store")), reference);
    assert_eq!(store_files(&four.path().join("store")), reference);
}

#[test]
fn a_rerun_replaces_the_store_and_leaves_nothing_of_the_old_one() {
    let out = tempfile::tempdir().unwrap();
    let store = out.path().join("store");
    let mut first = options(&examples(), out.path(), &[OutputFormat::Pam]);
    first.outputs = vec![(OutputFormat::Pam, store.clone())];
    memport::run(&first).unwrap();
    let before = store_files(&store);
    let mut second = first.clone();
    second.inputs = vec![examples()[1].clone()];
    let report = memport::run(&second).unwrap();
    let after = store_files(&store);
    assert!(after.len() < before.len(), "conversations of the first run are gone");
    assert!(after.keys().filter(|name| name.ends_with(".json") && *name != "memory-store.json").all(|name| name.starts_with("claude-")));
    assert!(!store.join(".memport-pam.partial").exists(), "no staging folder is left");
    check_store(&store, &report, BranchPolicy::Active, "rerun");
}

#[test]
fn a_folder_with_conversations_but_no_store_is_not_replaced() {
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("mine");
    std::fs::create_dir_all(target.join("conversations")).unwrap();
    std::fs::write(target.join("conversations").join("keep.json"), "{}").unwrap();
    let mut options = options(&examples(), out.path(), &[OutputFormat::Pam]);
    options.outputs = vec![(OutputFormat::Pam, target.clone())];
    let error = memport::run(&options).unwrap_err().to_string();
    assert!(error.contains("not a PAM store"), "{error}");
    assert!(target.join("conversations").join("keep.json").exists());
}

#[test]
fn one_read_writes_pam_beside_aimem_and_parquet() {
    let out = tempfile::tempdir().unwrap();
    let formats = [OutputFormat::Pam, OutputFormat::AimemNdjson, OutputFormat::Parquet];
    let report = memport::run(&options(&examples(), out.path(), &formats)).unwrap();
    assert_eq!(report.outputs.iter().map(|output| output.format).collect::<Vec<_>>(), ["pam", "aimem-ndjson", "parquet"]);
    check_store(&out.path().join("pam"), &report, BranchPolicy::Active, "multi-sink");
}

#[test]
fn the_upstream_examples_and_fixtures_validate_as_the_published_schemas_say() {
    let store_schema = schema_validator("portable-ai-memory.schema.json");
    for file in [
        "pam/examples/example-memory-store.json",
        "pam/fixtures/python-sdk/example-memory-store.json",
        "pam/fixtures/website/minimal-memory-store.json",
        "pam/fixtures/website/with-relations-memory-store.json",
        "pam/examples/example-conversation.json",
        "pam/examples/example-embeddings.json",
    ] {
        let path = shared(file);
        let validation = memport::validate::validate_path(&path).unwrap();
        assert_eq!(validation.format, "pam", "{file}");
        if file.ends_with("example-memory-store.json") {
            // Both copies carry the spec's placeholder signature (`…_EXAMPLE_SIGNATURE_…`):
            // everything else holds, and the signature is refused as it must be.
            let codes: Vec<&str> = validation.problems.iter().map(|problem| problem.code).collect();
            assert_eq!(codes, ["signature_invalid"], "{file}");
        } else {
            assert!(validation.is_valid(), "{file}: {:?}", validation.problems);
        }
        if file.ends_with("memory-store.json") {
            assert!(store_schema.is_valid(&read_json(&path)), "{file}: the oracle agrees");
        }
    }
}

/// A key file holding the RFC 8032 test seed 00 01 … 1f as hex.
pub fn test_key_file(folder: &Path) -> PathBuf {
    let path = folder.join("test-key.hex");
    std::fs::write(&path, (0u8..32).map(|byte| format!("{byte:02x}")).collect::<String>()).unwrap();
    path
}

#[test]
fn a_signed_store_verifies_and_a_changed_owner_breaks_the_signature() {
    let out = tempfile::tempdir().unwrap();
    let store = out.path().join("store");
    let mut options = options(&examples(), out.path(), &[OutputFormat::Pam]);
    options.outputs = vec![(OutputFormat::Pam, store.clone())];
    options.sign_key = Some(memport::signing::SignKey::load(&test_key_file(out.path())).unwrap());
    let report = memport::run(&options).unwrap();
    check_store(&store, &report, BranchPolicy::Active, "signed");
    let index = read_json(&store.join("memory-store.json"));
    assert_eq!(index["signature"]["algorithm"], "Ed25519");
    assert!(index["export_id"].is_string() && index["signature"]["public_key"].as_str().unwrap().starts_with("z6Mk"));
    let validation = memport::validate::validate_path(&store).unwrap();
    assert!(validation.is_valid(), "{:?}", validation.problems);
    assert!(validation.notices.iter().all(|notice| !notice.contains("signature")), "{:?}", validation.notices);

    edit_json(&store.join("memory-store.json"), |index| index["owner"]["id"] = "someone-else".into());
    let validation = memport::validate::validate_path(&store).unwrap();
    let codes: Vec<(u16, &str)> = validation.problems.iter().map(|problem| (problem.status, problem.code)).collect();
    assert_eq!(codes, [(409, "signature_invalid")]);
}

#[test]
fn a_sign_key_without_a_signed_format_is_refused() {
    let out = tempfile::tempdir().unwrap();
    let mut options = options(&examples(), out.path(), &[OutputFormat::AimemNdjson]);
    options.sign_key = Some(memport::signing::SignKey::load(&test_key_file(out.path())).unwrap());
    let error = memport::run(&options).unwrap_err().to_string();
    assert!(error.contains("--sign-key signs PAM stores and UMP records"), "{error}");
    std::fs::write(out.path().join("bad.key"), "hello").unwrap();
    let error = memport::signing::SignKey::load(&out.path().join("bad.key")).unwrap_err().to_string();
    assert!(error.contains("not an Ed25519 private key") && error.contains("PKCS#8"), "{error}");
}

#[test]
fn the_integrity_checksum_vectors_are_reproduced() {
    let vectors = read_json(&shared("pam/fixtures/derived/integrity-checksum-vectors.json"));
    for vector in vectors["vectors"].as_array().unwrap() {
        let mut memories = vector["memories"].as_array().unwrap().clone();
        memories.sort_by(|left, right| left["id"].as_str().cmp(&right["id"].as_str()));
        let canonical = to_canonical_vec(&Value::Array(memories));
        assert_eq!(std::str::from_utf8(&canonical).unwrap(), vector["canonical_sorted_jcs"], "{}", vector["description"]);
        assert_eq!(sha256_label(&sha256(&canonical)), vector["checksum"], "{}", vector["description"]);
    }
}

/// Converts the examples to a store, lets `break_it` damage it, and returns the problem codes
/// `memport validate` reports with their status.
fn problems_after(break_it: impl FnOnce(&Path)) -> Vec<(u16, String, String)> {
    let (out, _) = convert_to_store(&examples(), BranchPolicy::All, 2);
    let store = out.path().join("store");
    break_it(&store);
    let validation = memport::validate::validate_path(&store).unwrap();
    validation.problems.iter().map(|problem| (problem.status, problem.code.to_owned(), problem.location.clone())).collect()
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value = read_json(path);
    edit(&mut value);
    std::fs::write(path, serde_json::to_vec(&value).unwrap()).unwrap();
}

fn first_conversation_file(store: &Path) -> PathBuf {
    let index = read_json(&store.join("memory-store.json"));
    store.join(index["conversations_index"][0]["storage"]["ref"].as_str().unwrap())
}

#[test]
fn validate_finds_a_changed_memory_by_its_hash_and_the_checksum() {
    let problems =
        problems_after(|store| edit_json(&store.join("memory-store.json"), |index| index["memories"][0]["content"] = "changed".into()));
    let codes: Vec<(u16, &str)> = problems.iter().map(|(status, code, _)| (*status, code.as_str())).collect();
    assert_eq!(codes, [(409, "content_hash_mismatch"), (409, "checksum_mismatch")], "{problems:?}");
    assert_eq!(problems[0].2, "memory-store.json#/memories/0/content_hash");
}

#[test]
fn validate_finds_broken_links_between_the_index_and_the_files() {
    let problems = problems_after(|store| std::fs::remove_file(first_conversation_file(store)).unwrap());
    assert!(
        matches!(problems.as_slice(), [(422, code, location)] if code == "missing_file" && location.ends_with("/conversations_index/0/storage/ref")),
        "{problems:?}"
    );

    let problems = problems_after(|store| {
        edit_json(&store.join("memory-store.json"), |index| index["conversations_index"][0]["message_count"] = 999.into())
    });
    assert!(problems.iter().any(|(status, code, _)| *status == 422 && code == "index_mismatch"), "{problems:?}");

    let problems = problems_after(|store| {
        edit_json(&store.join("memory-store.json"), |index| {
            let memory = index["memories"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|memory| memory["provenance"]["conversation_ref"].is_string())
                .unwrap();
            memory["provenance"]["conversation_ref"] = "nowhere".into();
        })
    });
    assert!(problems.iter().any(|(_, code, _)| code == "dangling_reference"), "{problems:?}");
}

#[test]
fn validate_finds_schema_breaks_in_a_conversation_file() {
    let problems = problems_after(|store| {
        edit_json(&first_conversation_file(store), |conversation| {
            let messages = conversation["messages"].as_array_mut().unwrap();
            messages[0]["role"] = "narrator".into();
            messages[0]["mood"] = "cheerful".into();
            let last = messages.len() - 1;
            messages[last]["parent_id"] = "missing-parent".into();
        })
    });
    let codes: BTreeSet<&str> = problems.iter().map(|(_, code, _)| code.as_str()).collect();
    assert_eq!(codes, BTreeSet::from(["not_in_enum", "unknown_member", "dangling_reference"]), "{problems:?}");
    assert!(problems.iter().all(|(status, location, _)| *status == 422 && !location.is_empty()));
    assert!(problems.iter().any(|(_, _, location)| location.contains(".json#/messages/0/role")), "{problems:?}");
}

#[test]
fn validate_exits_one_for_a_broken_store_and_zero_for_a_good_one() {
    let (out, _) = convert_to_store(&examples(), BranchPolicy::Active, 2);
    let store = out.path().join("store");
    let binary = env!("CARGO_BIN_EXE_memport");
    let good = std::process::Command::new(binary).arg("validate").arg(&store).output().unwrap();
    assert_eq!(good.status.code(), Some(0), "{}", String::from_utf8_lossy(&good.stdout));
    assert!(String::from_utf8_lossy(&good.stdout).contains("valid pam"));
    edit_json(&store.join("memory-store.json"), |index| index["integrity"]["total_memories"] = 12345.into());
    let bad = std::process::Command::new(binary).arg("validate").arg(store.join("memory-store.json")).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("409 total_mismatch at memory-store.json#/integrity/total_memories"));
}

/// Provider fields are copied into `raw_metadata` as they are, except when they hold an
/// unpaired surrogate escape, which strict JSON readers refuse: then they are kept as a string.
#[test]
fn a_lone_surrogate_in_provider_fields_keeps_the_conversation_file_valid_json() {
    let folder = tempfile::tempdir().unwrap();
    let element = r#"[{"id":"c1","title":"t","create_time":1000000000.0,"mapping":{"r":{"id":"r","message":null,"parent":null,"children":["a"]},"a":{"id":"a","parent":"r","children":[],"message":{"id":"a","author":{"role":"user"},"create_time":1000000000.0,"content":{"content_type":"text","parts":["pair \ud83d\udd25 and lone \ud800 end"]},"metadata":{"note":"lone \udc00 here","pair":"\ud83d\ude00"}}}},"current_node":"a"}]"#;
    std::fs::write(folder.path().join("conversations.json"), element).unwrap();
    let (out, report) = convert_to_store(&[folder.path().join("conversations.json")], BranchPolicy::Active, 1);
    assert_eq!(report.counts.messages_written, 1);
    let store = out.path().join("store");
    let conversation = read_json(&store.join("conversations").join("chatgpt-c1.json"));
    let provider = &conversation["messages"][0]["raw_metadata"]["provider"];
    assert!(provider.as_str().is_some_and(|text| text.contains(r"lone \udc00 here")), "{provider}");
    check_store(&store, &report, BranchPolicy::Active, "lone surrogate");
}

#[test]
fn a_conversation_of_a_platform_memport_has_no_source_for_keeps_its_platform() {
    let (out, _) = convert_to_store(&[examples()[1].clone()], BranchPolicy::All, 2);
    let store = out.path().join("store");
    let file = first_conversation_file(&store);
    edit_json(&file, |conversation| conversation["provider"]["name"] = "perplexity".into());
    let (again, report) = convert_to_store(&[store], BranchPolicy::All, 2);
    assert_eq!(report.counts.conversations_rejected, 0);
    let platforms: Vec<Value> = read_json(&again.path().join("store/memory-store.json"))["conversations_index"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["platform"].clone())
        .collect();
    assert!(platforms.contains(&Value::from("perplexity")), "{platforms:?}");
    check_store(&again.path().join("store"), &report, BranchPolicy::All, "perplexity");
}

/// The extracted memories a file holds, as a set of their records' JSON: UMP records of
/// extraction's, AIMEM chunks tagged `extracted` with their edges and the entity records and
/// links, PAM memories of memport's extractor.
fn extracted_records(path: &Path, format: OutputFormat) -> BTreeSet<String> {
    let lines = || crate::util::ndjson(path).into_iter();
    match format {
        OutputFormat::UmpNdjson => {
            lines().filter(|record| record["provenance"]["actor_kind"] == "scan").map(|record| record.to_string()).collect()
        }
        OutputFormat::AimemNdjson => {
            let extracted: BTreeSet<String> = lines()
                .filter(|record| {
                    record["_kind"] == "chunk" && record["tags"].as_array().is_some_and(|tags| tags.contains(&"extracted".into()))
                })
                .map(|record| record["id"].as_str().unwrap_or_default().to_owned())
                .collect();
            lines()
                .filter(|record| match record["_kind"].as_str() {
                    Some("chunk") => extracted.contains(record["id"].as_str().unwrap_or_default()),
                    Some("edge") => extracted.contains(record["source_id"].as_str().unwrap_or_default()),
                    Some("entity" | "chunk_entity") => true,
                    _ => false,
                })
                .map(|record| record.to_string())
                .collect()
        }
        _ => read_json(&path.join("memory-store.json"))["memories"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|memory| memory["provenance"]["extractor"].as_str().is_some_and(|extractor| extractor.starts_with("memport-rules/")))
            .map(Value::to_string)
            .collect(),
    }
}

#[test]
fn extracted_memories_read_back_from_pam_are_written_again_whole_in_every_format() {
    let chatgpt: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("chatgpt-small")).collect();
    let formats = [OutputFormat::Pam, OutputFormat::UmpNdjson, OutputFormat::AimemNdjson];
    let direct = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&chatgpt, direct.path(), &formats, 2);
    let store = direct.path().join(OutputFormat::Pam.default_file_name());
    let extracted = extracted_records(&store, OutputFormat::Pam);
    assert!(extracted.len() >= 5, "the example yields extracted memories: {}", extracted.len());
    assert!(extracted.iter().any(|memory| memory.contains("\"superseded_by\"")), "one is superseded");

    // Read back with their evidence, entities and supersession: each output holds the same.
    let back = tempfile::tempdir().unwrap();
    let report = crate::util::convert_all_branches(&[store], back.path(), &formats, 2);
    assert!(report.memories_extracted.is_none_or(|memories| memories.written == 0), "nothing is extracted again");
    for format in formats {
        let name = format.default_file_name();
        let (before, after) = (extracted_records(&direct.path().join(name), format), extracted_records(&back.path().join(name), format));
        assert!(!before.is_empty() && before == after, "{name}: {:?}", before.symmetric_difference(&after).collect::<Vec<_>>());
    }
}

/// The bundled ChatGPT example with its conversations listed newest first, as ChatGPT lists
/// them: a memory that supersedes another is written (in UMP) and travels (in PAM) before the
/// one it supersedes. Read back from either, every output is the direct run's, byte for byte,
/// supersession and all evidence included.
#[test]
fn memories_read_back_before_what_they_link_to_are_written_again_as_the_direct_run_writes_them() {
    let export = tempfile::tempdir().unwrap();
    let mut conversations = read_json(&examples()[0].join("conversations.json"));
    let list = conversations.as_array_mut().unwrap();
    list.sort_by(|a, b| b["create_time"].as_f64().partial_cmp(&a["create_time"].as_f64()).unwrap());
    std::fs::write(export.path().join("conversations.json"), serde_json::to_vec(&conversations).unwrap()).unwrap();
    let formats = [OutputFormat::Pam, OutputFormat::UmpNdjson, OutputFormat::AimemNdjson];
    let direct = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&[export.path().join("conversations.json")], direct.path(), &formats, 2);
    let ump = direct.path().join(OutputFormat::UmpNdjson.default_file_name());
    let records = crate::util::ndjson(&ump);
    let position = |id: &Value| records.iter().position(|record| &record["id"] == id);
    let ahead = records.iter().enumerate().filter(|(at, record)| {
        record["supersedes"].as_array().is_some_and(|older| older.iter().any(|older| position(older).is_some_and(|other| other > *at)))
    });
    assert!(ahead.count() > 0, "the test needs a memory written before the one it supersedes");
    for input in [direct.path().join(OutputFormat::Pam.default_file_name()), ump] {
        let back = tempfile::tempdir().unwrap();
        let formats = [OutputFormat::UmpNdjson, OutputFormat::AimemNdjson];
        let report = crate::util::convert_all_branches(std::slice::from_ref(&input), back.path(), &formats, 2);
        assert!(report.memories_extracted.is_none_or(|memories| memories.written == 0), "nothing is extracted again");
        for format in formats {
            let name = format.default_file_name();
            let (before, after) = (std::fs::read(direct.path().join(name)).unwrap(), std::fs::read(back.path().join(name)).unwrap());
            assert!(before == after, "{name} read back from {}: not the direct run's", input.display());
        }
    }
}

/// The bundled ChatGPT example as a PAM store (in the returned folder) whose `memory-store.json`
/// is edited by hand: `edit` changes it, and its checksum, which the edit breaks, is taken out.
fn edited_example_store(edit: impl FnOnce(&mut Value)) -> (tempfile::TempDir, PathBuf) {
    let chatgpt: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("chatgpt-small")).collect();
    let direct = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&chatgpt, direct.path(), &[OutputFormat::Pam], 2);
    let store = direct.path().join(OutputFormat::Pam.default_file_name());
    edit_json(&store.join("memory-store.json"), |index| {
        edit(index);
        index.as_object_mut().unwrap().remove("integrity");
    });
    (direct, store)
}

/// A store of memories only (its conversation files gone): the read-back memories keep no
/// evidence of messages the output does not hold, and each output still validates.
#[test]
fn extracted_memories_read_back_from_a_store_without_its_conversations_link_to_nothing_missing() {
    let (_direct, store) = edited_example_store(|store| store["conversations_index"] = Value::Array(Vec::new()));
    std::fs::remove_dir_all(store.join("conversations")).unwrap();
    let back = tempfile::tempdir().unwrap();
    let formats = [OutputFormat::Pam, OutputFormat::AimemNdjson];
    crate::util::convert_all_branches(&[store], back.path(), &formats, 2);
    for format in formats {
        let path = back.path().join(format.default_file_name());
        let validation = memport::validate::validate_path(&path).unwrap();
        assert!(validation.is_valid(), "{}: {:?}", path.display(), validation.problems);
    }
    let bundle = crate::util::ndjson(&back.path().join(OutputFormat::AimemNdjson.default_file_name()));
    assert!(bundle.iter().any(|record| record["_kind"] == "chunk" && record["content"] == "Lives in Leeds"), "the memories are read");
    assert!(!bundle.iter().any(|record| record["edge_type"] == "x-derived-from"), "no evidence of a message not written");
}

/// A store edited by hand (or by another tool): a piece of evidence with a span past any
/// message and a secret in its quote, another of an unknown provider. The run goes on, the
/// secret is masked and the unknown provider's piece left out.
#[test]
fn a_read_back_memory_with_a_hostile_span_and_a_secret_in_its_quote_converts() {
    let (_direct, store) = edited_example_store(|store| {
        let memories = store["memories"].as_array_mut().unwrap();
        let extracted = memories.iter_mut().find(|memory| memory["content"] == "Lives in Leeds").unwrap();
        let pieces = extracted["metadata"]["derived_from"].as_array_mut().unwrap();
        pieces[0]["byte_span"] = serde_json::json!([u64::MAX, u64::MAX]);
        pieces[0]["quote"] = Value::from("I live in Leeds, key sk_live_4eC39HqLyjWDarjtT1zdp7dc");
        let mut stranger = pieces[0].clone();
        stranger["platform"] = Value::from("somewhere-else");
        pieces.push(stranger);
    });
    let back = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&[store], back.path(), &[OutputFormat::UmpNdjson], 2);
    let text = std::fs::read_to_string(back.path().join(OutputFormat::UmpNdjson.default_file_name())).unwrap();
    assert!(text.contains("I live in Leeds") && !text.contains("sk_live_4eC39"), "the quote is kept, its secret masked");
    assert!(!text.contains("somewhere-else"), "evidence of an unknown provider is left out");
}

/// A read-back extracted memory marked not for export (a contact detail kept on request, or
/// the owner's choice) is counted and not written, as every memory of the store is.
#[test]
fn a_read_back_extracted_memory_not_for_export_is_not_written() {
    let (_direct, store) = edited_example_store(|store| {
        let memories = store["memories"].as_array_mut().unwrap();
        let nurse = memories.iter_mut().find(|memory| memory["content"] == "Is a nurse").unwrap();
        nurse["access"] = serde_json::json!({"visibility": "private", "exportable": false, "shared_with": []});
    });
    let back = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&[store], back.path(), &[OutputFormat::UmpNdjson, OutputFormat::Pam], 2);
    let text = std::fs::read_to_string(back.path().join(OutputFormat::UmpNdjson.default_file_name())).unwrap();
    assert!(text.contains("Lives in York") && !text.contains("Is a nurse"), "only the memory not for export is left out");
    let index = read_json(&back.path().join(OutputFormat::Pam.default_file_name()).join("memory-store.json"));
    for entry in index["conversations_index"].as_array().unwrap() {
        let derived: Vec<&Value> = entry["derived_memories"].as_array().map(|ids| ids.iter().collect()).unwrap_or_default();
        let unique: BTreeSet<String> = derived.iter().map(|id| id.to_string()).collect();
        assert_eq!(derived.len(), unique.len(), "each memory is listed once: {derived:?}");
    }
}
