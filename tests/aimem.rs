//! AIMEM: the conformance corpus is classified as the reference consumer would, the published
//! hash vectors are reproduced, and our own outputs pass the same checks.

use std::path::Path;

use memport::validate::validate_path;

use crate::util::shared;

const CORPUS: &str = "formats/aimem/conformance-corpus";

/// Expected first problem per invalid case (memory-formats.md §2.10).
const INVALID: &[(&str, u16, &str)] = &[
    ("missing_format", 422, "bad_format"),
    ("wrong_format", 422, "bad_format"),
    ("wrong_version", 422, "unsupported_version"),
    ("bad_scope", 422, "invalid_scope"),
    ("since_missing", 422, "since_missing"),
    ("bad_producer_uppercase", 422, "invalid_producer"),
    ("checksum_mismatch", 409, "checksum_mismatch"),
    ("bad_chunk_urn", 422, "invalid_urn"),
    ("bad_content_hash", 422, "hash_mismatch"),
    ("bad_memory_type", 422, "invalid_memory_type"),
    ("edge_weight_too_high", 422, "edge_weight_out_of_range"),
    ("edge_target_unknown", 422, "edge_target_unknown"),
    ("duplicate_chunk_id", 422, "duplicate_chunk_id"),
    ("embedding_without_envelope", 422, "embedding_envelope_missing"),
];

fn corpus_files(kind: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(shared(&format!("{CORPUS}/{kind}"))).unwrap().map(|entry| entry.unwrap().path()).collect();
    files.sort();
    files
}

#[test]
fn every_valid_and_edge_corpus_file_is_accepted() {
    let files: Vec<_> = corpus_files("valid").into_iter().chain(corpus_files("edge")).collect();
    assert_eq!(files.len(), 14);
    for file in files {
        let validation = validate_path(&file).unwrap();
        assert!(validation.is_valid(), "{}: {:?}", file.display(), validation.problems);
    }
}

#[test]
fn every_invalid_corpus_file_is_rejected_with_the_reference_class() {
    let files = corpus_files("invalid");
    assert_eq!(files.len(), INVALID.len());
    for file in files {
        let name = file.file_stem().unwrap().to_str().unwrap();
        let &(_, status, code) =
            INVALID.iter().find(|(case, _, _)| *case == name).unwrap_or_else(|| panic!("unexpected corpus file {name}"));
        let validation = validate_path(&file).unwrap();
        assert_eq!(validation.status(), status, "{name}: {:?}", validation.problems);
        assert_eq!(validation.problems[0].code, code, "{name}");
    }
}

#[test]
fn legacy_format_value_is_accepted_with_a_notice() {
    let validation = validate_path(&shared(&format!("{CORPUS}/edge/legacy_format_value.json"))).unwrap();
    assert!(validation.is_valid());
    assert_eq!(validation.notices.len(), 1);
}

#[test]
fn ndjson_form_of_graph_complete_verifies_with_the_bundle_checksum() {
    let validation = validate_path(&shared("formats/aimem/graph_complete.aimem.ndjson")).unwrap();
    assert!(validation.is_valid(), "{:?}", validation.problems);
    assert_eq!(validation.format, "aimem-ndjson");
    assert_eq!(validation.records, 5);
}

#[test]
fn published_content_hash_vectors_reproduce() {
    let vectors: serde_json::Value =
        serde_json::from_slice(&std::fs::read(shared("pam/fixtures/derived/content-hash-vectors.json")).unwrap()).unwrap();
    let vectors = vectors["vectors"].as_array().unwrap();
    assert!(vectors.len() >= 10);
    for vector in vectors {
        let content = vector["content"].as_str().unwrap();
        let digest = memport::hash::pam_content_digest(content);
        assert_eq!(memport::hash::sha256_label(&digest), vector["content_hash"].as_str().unwrap(), "{}", vector["description"]);
        if let Some(normalized) = vector["normalized"].as_str() {
            assert_eq!(memport::hash::pam_normalize(content), normalized, "{}", vector["description"]);
        }
    }
}

#[test]
fn aimem_chunk_hash_worked_example() {
    let digest = memport::hash::sha256(b"Hello world.");
    assert_eq!(memport::hash::sha256_label(&digest), "sha256:aa3ec16e6acc809d8b2818662276256abfd2f1b441cb51574933f3d4bd115d11");
}

#[test]
fn tampering_with_our_output_is_caught() {
    let (out, _report) = crate::util::convert_checked(
        &shared("provider-samples/chatgpt/2025-06_single-conversation"),
        memport::sources::BranchPolicy::Active,
        memport::pipeline::DedupPolicy::Content,
    );
    let bundle = out.path().join("memory.aimem.json");
    let mut value: serde_json::Value = serde_json::from_slice(&std::fs::read(&bundle).unwrap()).unwrap();
    value["chunks"][0]["tags"] = serde_json::json!(["edited"]);
    let tampered = out.path().join("tampered.aimem.json");
    std::fs::write(&tampered, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    let validation = validate_path(Path::new(&tampered)).unwrap();
    assert_eq!(validation.status(), 409);
    // The same bundle re-serialized pretty (key order and whitespace changed) still verifies:
    // the checksum is over the canonical form, not the bytes.
    let original: serde_json::Value = serde_json::from_slice(&std::fs::read(&bundle).unwrap()).unwrap();
    std::fs::write(&tampered, serde_json::to_vec_pretty(&original).unwrap()).unwrap();
    assert!(validate_path(Path::new(&tampered)).unwrap().is_valid());
}

/// A bundle's records in another order, the way a server that stores them exports them
/// (chunks by time across conversations, edges reversed), with its checksum made again.
fn reordered(bundle: &serde_json::Value) -> serde_json::Value {
    let mut bundle = bundle.clone();
    let object = bundle.as_object_mut().unwrap();
    object.remove("checksum");
    let chunks = object.get_mut("chunks").unwrap().as_array_mut().unwrap();
    chunks.sort_by(|a, b| a["created_at"].as_str().cmp(&b["created_at"].as_str()).then(a["id"].as_str().cmp(&b["id"].as_str())));
    object.get_mut("edges").unwrap().as_array_mut().unwrap().reverse();
    let digest = memport::hash::sha256(&memport::jcs::to_canonical_vec(&bundle));
    bundle["checksum"] = serde_json::Value::from(memport::hash::sha256_label(&digest));
    bundle
}

/// The chunk and edge lines of an AIMEM NDJSON file, as a set.
fn record_lines(path: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_to_string(path).unwrap().lines().skip(1).map(str::to_owned).collect()
}

/// Guards the reader against records out of memport's order: a server's export of memport's
/// bundle (chunks by time, edges in its database's order) lost almost every temporal edge.
#[test]
fn a_bundle_in_another_order_reads_back_to_the_same_records_with_every_edge() {
    use memport::sinks::OutputFormat;
    let out = tempfile::tempdir().unwrap();
    let direct = out.path().join("direct");
    let examples = crate::util::examples();
    crate::util::convert_all_branches_without_extraction(&examples, &direct, &[OutputFormat::Aimem, OutputFormat::AimemNdjson], 2);
    let bundle: serde_json::Value = serde_json::from_slice(&std::fs::read(direct.join("memory.aimem.json")).unwrap()).unwrap();
    let shuffled = reordered(&bundle);
    assert_ne!(shuffled["chunks"], bundle["chunks"], "the test reorders the chunks");
    let shuffled_path = out.path().join("shuffled.aimem.json");
    std::fs::write(&shuffled_path, serde_json::to_vec(&shuffled).unwrap()).unwrap();
    assert!(validate_path(&shuffled_path).unwrap().is_valid(), "the reordered bundle is a valid bundle");
    // The same records as an NDJSON stream, in that order too.
    let ndjson_path = out.path().join("shuffled.aimem.ndjson");
    let mut lines = Vec::new();
    let mut envelope = shuffled.clone();
    let envelope_object = envelope.as_object_mut().unwrap();
    let (chunks, edges) = (envelope_object.remove("chunks").unwrap(), envelope_object.remove("edges").unwrap());
    envelope_object.remove("entities");
    envelope_object.remove("chunk_entities");
    lines.push(envelope.to_string());
    for (kind, records) in [("chunk", chunks), ("edge", edges)] {
        for mut record in records.as_array().unwrap().clone() {
            record.as_object_mut().unwrap().insert("_kind".into(), kind.into());
            lines.push(record.to_string());
        }
    }
    std::fs::write(&ndjson_path, lines.join("\n") + "\n").unwrap();

    let expected = record_lines(&direct.join("memory.aimem.ndjson"));
    for (label, input) in [("bundle", &shuffled_path), ("NDJSON stream", &ndjson_path)] {
        let again = out.path().join(format!("again-{label}"));
        crate::util::convert_all_branches_without_extraction(std::slice::from_ref(input), &again, &[OutputFormat::AimemNdjson], 2);
        let got = record_lines(&again.join("memory.aimem.ndjson"));
        let temporal = |lines: &std::collections::BTreeSet<String>| lines.iter().filter(|line| line.contains("\"temporal\"")).count();
        assert_eq!(temporal(&got), temporal(&expected), "{label}: every temporal edge is read");
        assert_eq!(got, expected, "{label}: the same chunks and edges as the bundle in memport's order");
    }
}

/// Guards validation's bounded memory: a stream with a problem in every one of thousands of
/// chunks is checked with the first problems listed and the rest counted, and says so.
#[test]
fn a_stream_with_a_problem_in_every_chunk_lists_the_first_and_counts_them_all() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("broken.aimem.ndjson");
    let mut text = String::from(
        r#"{"format":"aimem-bundle","version":"1","producer":"memport","tenant_id":"11111111-1111-1111-1111-111111111111","exported_at":"2026-01-01T00:00:00Z","scope":"FULL","checksum":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}"#,
    );
    text.push('\n');
    let chunks = 3000;
    for index in 0..chunks {
        text.push_str(&format!(
            r#"{{"_kind":"chunk","id":"urn:aimem:memport:c{index}","content":"chunk {index}","content_hash":"sha256:{}","memory_type":"fact","created_at":"2026-01-01T00:00:00Z"}}"#,
            "0".repeat(64)
        ));
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    let validation = validate_path(&path).unwrap();
    assert!(!validation.is_valid());
    assert_eq!(validation.problems.len(), memport::validate::KEPT_PROBLEMS);
    assert!(validation.problem_count() > chunks, "every bad hash and the checksum counted: {}", validation.problem_count());
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_memport")).arg("validate").arg(&path).output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains(&format!("{} problems", validation.problem_count())), "{said}");
    assert!(said.contains("more, counted but not listed"), "{said}");
    let json = std::process::Command::new(env!("CARGO_BIN_EXE_memport")).args(["validate", "--json"]).arg(&path).output().unwrap();
    let results: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(results[0]["problem_count"], validation.problem_count(), "--json says the count too");
}

/// The extracted memories of a PAM store, told apart from what AIMEM has no place for (a
/// memory's value, its evidence's quotes and spans, evidence said twice in one message, and its
/// confidence past the hundredth):
/// per memory id, everything else memport reads back.
fn extracted_in_pam(store: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    let store: serde_json::Value = serde_json::from_slice(&std::fs::read(store).unwrap()).unwrap();
    let mut found = std::collections::BTreeMap::new();
    for memory in store["memories"].as_array().unwrap() {
        let id = memory["id"].as_str().unwrap();
        if !id.starts_with("mem-") {
            continue;
        }
        let metadata = &memory["metadata"];
        let said: std::collections::BTreeSet<String> = metadata["derived_from"]
            .as_array()
            .unwrap()
            .iter()
            .map(|piece| format!("{} {} {}", piece["platform"], piece["conversation_ref"], piece["message_ref"]))
            .collect();
        found.insert(
            id.to_owned(),
            serde_json::json!([
                memory["content"],
                memory["type"],
                memory["status"],
                // AIMEM carries it as a tag to the hundredth, as every format but PAM writes it.
                (memory["confidence"]["current"].as_f64().unwrap() * 100.0).round(),
                memory["temporal"]["created_at"],
                memory["temporal"]["superseded_by"],
                metadata["memory_type"],
                metadata["slot"],
                metadata["language"],
                metadata["supersedes"],
                metadata["entities"],
                said,
            ]),
        );
    }
    found
}

/// Guards the AIMEM reader against losing what it carries of an extracted memory: read back, a
/// memory kept only its text and type, and its evidence edges, supersession, entities, slot
/// and confidence were lost (a bundle pushed to a server and pulled back lost them).
#[test]
fn extracted_memories_read_back_whole_with_their_evidence_supersession_and_entities() {
    use memport::sinks::OutputFormat;
    let out = tempfile::tempdir().unwrap();
    let direct = out.path().join("direct");
    let report = crate::util::convert_all_branches(&crate::util::examples(), &direct, &[OutputFormat::Aimem, OutputFormat::AimemNdjson], 2);
    assert!(crate::util::memories_in_output(&report) > 0);
    let pam_direct = out.path().join("pam-direct");
    crate::util::convert_all_branches(&crate::util::examples(), &pam_direct, &[OutputFormat::Pam], 2);
    let expected = extracted_in_pam(&pam_direct.join(OutputFormat::Pam.default_file_name()).join("memory-store.json"));
    assert!(expected.values().any(|memory| !memory[10].is_null()), "some memory names an entity");
    assert!(expected.values().any(|memory| !memory[9].is_null()), "some memory supersedes another");
    let bundle = std::fs::read(direct.join("memory.aimem.json")).unwrap();
    for input in ["memory.aimem.json", "memory.aimem.ndjson"] {
        let again = out.path().join(format!("again-{input}"));
        crate::util::convert_all_branches_without_extraction(&[direct.join(input)], &again, &[OutputFormat::Aimem, OutputFormat::Pam], 2);
        assert!(std::fs::read(again.join("memory.aimem.json")).unwrap() == bundle, "{input}: AIMEM written again is the same bundle");
        let got = extracted_in_pam(&again.join(OutputFormat::Pam.default_file_name()).join("memory-store.json"));
        assert_eq!(got, expected, "{input}: PAM from AIMEM holds the extracted memories of PAM written directly");
    }
}
