//! Extraction in a conversion: the options (`--extract`, `--extract-pii`, `--redact`, and their
//! pipeline keys) and what each format carries, on small synthetic exports.

use std::path::{Path, PathBuf};

use memport::pipeline::extraction::ExtractionSettings;
use memport::sinks::OutputFormat;
use memport::stages::extract::consolidate::ConsolidateOptions;

use crate::util::{conversation, memories_in_output, options, text_node, write_export};

/// A secret that must never reach an output when `--redact secrets` is in force.
const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

fn every_format() -> Vec<OutputFormat> {
    OutputFormat::ALL.iter().map(|(_, format)| *format).collect()
}

/// One conversation: a home said twice, a new home, an e-mail address, and a pasted token.
fn export(folder: &Path) -> PathBuf {
    let nodes = vec![
        text_node("u1", Some("root"), "user", "I live in Lyon. Can you suggest a bakery?", 1_700_000_000.0),
        text_node("a1", Some("u1"), "assistant", "Sure. I live in the cloud, but here are three.", 1_700_000_001.0),
        text_node("u2", Some("a1"), "user", &format!("My email is jo@example.org. Why does this fail: token {TOKEN}"), 1_700_000_002.0),
        text_node("a2", Some("u2"), "assistant", "The token looks revoked.", 1_700_000_003.0),
        text_node("u3", Some("a2"), "user", "I moved to Berlin last year. I prefer short answers.", 1_700_000_004.0),
    ];
    write_export(folder, &[conversation("c1", nodes, Some("u3"))])
}

fn run(input: &Path, out: &Path, extraction: ExtractionSettings) -> memport::pipeline::report::RunReport {
    let mut options = options(&[input.to_owned()], out, &every_format());
    crate::util::set_extraction(&mut options, extraction);
    let report = memport::run(&options).unwrap();
    assert!(report.counts.balances(), "{:?}", report.counts);
    for output in report.outputs.iter().filter(|output| output.format != "parquet") {
        let validation = memport::validate::validate_path(Path::new(&output.path)).unwrap();
        assert!(validation.is_valid(), "{}: {:?}", output.path, validation.problems);
    }
    report
}

/// Every byte memport wrote under `folder`, file by file.
fn every_file(folder: &Path, files: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            every_file(&path, files);
        } else {
            files.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle.as_bytes())
}

#[test]
fn extracted_memories_reach_every_format_with_supersession_and_balanced_counts() {
    let folder = tempfile::tempdir().unwrap();
    let input = export(folder.path());
    let out = tempfile::tempdir().unwrap();
    let report = run(&input, out.path(), ExtractionSettings { extract: Some(ConsolidateOptions::default()), redact_secrets: false });
    let counts = report.memories_extracted.clone().unwrap();
    assert!(counts.balances(), "{counts:?}");
    // Lyon, then Berlin (superseding it), and a preference; the e-mail is dropped by default.
    assert_eq!((counts.written, counts.superseded_kept, counts.dropped_personal), (2, 1, 1), "{counts:?}");
    let pam: serde_json::Value = serde_json::from_slice(&std::fs::read(out.path().join("pam/memory-store.json")).unwrap()).unwrap();
    let memories = pam["memories"].as_array().unwrap();
    let lyon = memories.iter().find(|memory| memory["content"] == "Lives in Lyon").unwrap();
    let berlin = memories.iter().find(|memory| memory["content"] == "Lives in Berlin").unwrap();
    assert_eq!(lyon["status"], "superseded");
    assert_eq!(lyon["temporal"]["superseded_by"], berlin["id"]);
    assert_eq!(berlin["provenance"]["message_ref"], "u3");
    let relations = pam["relations"].as_array().unwrap();
    assert!(
        relations
            .iter()
            .any(|relation| relation["type"] == "supersedes" && relation["from"] == berlin["id"] && relation["to"] == lyon["id"])
    );
    let bundle: serde_json::Value = serde_json::from_slice(&std::fs::read(out.path().join("memory.aimem.json")).unwrap()).unwrap();
    let entity_names: Vec<&str> = bundle["entities"].as_array().unwrap().iter().map(|entity| entity["name"].as_str().unwrap()).collect();
    assert_eq!(entity_names, ["Lyon", "Berlin"]);
    assert_eq!(bundle["chunk_entities"].as_array().unwrap().len(), 2);
    let derived = bundle["edges"].as_array().unwrap().iter().filter(|edge| edge["edge_type"] == "x-derived-from").count();
    assert_eq!(derived, 3, "one evidence edge per memory and message");
    assert_eq!(memories_in_output(&report), 3);
    let mut files = Vec::new();
    every_file(out.path(), &mut files);
    assert!(
        !files.iter().any(|(_, bytes)| contains(bytes, "jo@example.org") && !contains(bytes, "My email is")),
        "the e-mail is no memory"
    );
}

#[test]
fn redact_secrets_masks_them_in_every_format_and_counts_them() {
    let folder = tempfile::tempdir().unwrap();
    let input = export(folder.path());
    let plain = tempfile::tempdir().unwrap();
    run(&input, plain.path(), ExtractionSettings { extract: Some(ConsolidateOptions::default()), redact_secrets: false });
    let mut files = Vec::new();
    every_file(plain.path(), &mut files);
    assert!(files.iter().any(|(_, bytes)| contains(bytes, TOKEN)), "without --redact the transcript keeps what the user wrote");

    let masked = tempfile::tempdir().unwrap();
    let report = run(&input, masked.path(), ExtractionSettings { extract: Some(ConsolidateOptions::default()), redact_secrets: true });
    assert_eq!(report.secrets_redacted.get("api_key"), Some(&1), "{:?}", report.secrets_redacted);
    let mut files = Vec::new();
    every_file(masked.path(), &mut files);
    for (path, bytes) in &files {
        assert!(!contains(bytes, TOKEN), "{} holds the token", path.display());
    }
    assert!(files.iter().any(|(_, bytes)| contains(bytes, "[REDACTED:api_key]")));
}

#[test]
fn contact_details_are_written_only_when_asked_and_marked_not_exportable() {
    let folder = tempfile::tempdir().unwrap();
    let input = export(folder.path());
    let out = tempfile::tempdir().unwrap();
    let keep = ConsolidateOptions { keep_personal: true, ..ConsolidateOptions::default() };
    let report = run(&input, out.path(), ExtractionSettings { extract: Some(keep), redact_secrets: false });
    assert_eq!(report.memories_extracted.unwrap().dropped_personal, 0);
    let pam: serde_json::Value = serde_json::from_slice(&std::fs::read(out.path().join("pam/memory-store.json")).unwrap()).unwrap();
    let email = pam["memories"].as_array().unwrap().iter().find(|memory| memory["content"] == "E-mail is jo@example.org").unwrap();
    assert_eq!(email["access"]["exportable"], false);
    let records: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(out.path().join("memory.ump.json")).unwrap()).unwrap();
    let email = records.iter().find(|record| record["body"]["text"] == "E-mail is jo@example.org").unwrap();
    assert_eq!(email["consent"]["exportable"], false);
}

#[test]
fn extract_off_writes_transcripts_and_provider_memories_only() {
    let folder = tempfile::tempdir().unwrap();
    let input = export(folder.path());
    let out = tempfile::tempdir().unwrap();
    let report = run(&input, out.path(), ExtractionSettings::OFF);
    assert!(report.memories_extracted.is_none());
    assert_eq!(memories_in_output(&report), report.counts.memories_written);
    let bundle: serde_json::Value = serde_json::from_slice(&std::fs::read(out.path().join("memory.aimem.json")).unwrap()).unwrap();
    assert!(bundle["entities"].as_array().unwrap().is_empty());
    assert!(bundle["chunks"].as_array().unwrap().iter().all(|chunk| chunk["memory_type"] == "episodic"));
}

#[test]
fn pipeline_files_set_extraction_and_name_a_bad_value_by_its_key() {
    let folder = tempfile::tempdir().unwrap();
    let input = export(folder.path());
    let write = |body: &str| {
        let path = folder.path().join("pipeline.toml");
        let text = format!(
            "version = 1\ninputs = [{:?}]\n{body}\n[[outputs]]\nformat = \"aimem\"\npath = \"out.aimem.json\"\n",
            input.display().to_string()
        );
        std::fs::write(&path, text).unwrap();
        path
    };
    let options = memport::pipeline::config::load(
        &write("extract = \"rules\"\nmin_confidence = 0.7\nextract_pii = \"keep\"\nredact = \"secrets\""),
        0,
    )
    .unwrap();
    assert_eq!(
        options.settings.extraction(),
        ExtractionSettings { extract: Some(ConsolidateOptions { min_confidence: 0.7, keep_personal: true }), redact_secrets: true }
    );
    let off = memport::pipeline::config::load(&write("extract = \"off\""), 0).unwrap();
    assert_eq!(off.settings.extraction().extract, None);
    let error = memport::pipeline::config::load(&write("extract_pii = \"sometimes\""), 0).unwrap_err().to_string();
    assert!(error.contains("extract_pii: unknown variant `sometimes`, expected `drop` or `keep`"), "{error}");
    let error = memport::pipeline::config::load(&write("min_confidence = 1.5"), 0).unwrap_err().to_string();
    assert!(error.contains("min-confidence"), "{error}");
}

#[test]
fn a_self_statement_repeated_in_another_conversation_is_written_there_and_is_evidence_of_both() {
    let folder = tempfile::tempdir().unwrap();
    let said_in = |id: &str, start: f64| {
        let nodes = vec![
            text_node(&format!("{id}-u1"), Some("root"), "user", "I work as a nurse in Leeds.", start),
            text_node(&format!("{id}-a1"), Some(&format!("{id}-u1")), "assistant", "Noted.", start + 1.0),
            text_node(&format!("{id}-u2"), Some(&format!("{id}-a1")), "user", "Thanks!", start + 2.0),
        ];
        conversation(id, nodes, Some(&format!("{id}-u2")))
    };
    let input = write_export(folder.path(), &[said_in("c1", 1_700_000_000.0), said_in("c2", 1_700_100_000.0)]);
    let out = tempfile::tempdir().unwrap();
    let report = run(&input, out.path(), ExtractionSettings { extract: Some(ConsolidateOptions::default()), redact_secrets: false });
    // The second "Noted." and "Thanks!" are copies; the second self-statement is not.
    assert_eq!((report.counts.messages_written, report.counts.messages_duplicate), (4, 2), "{:?}", report.counts);
    let pam: serde_json::Value = serde_json::from_slice(&std::fs::read(out.path().join("pam/memory-store.json")).unwrap()).unwrap();
    let nurse = pam["memories"].as_array().unwrap().iter().find(|memory| memory["content"].as_str().unwrap().contains("nurse")).unwrap();
    let sources = nurse.to_string();
    assert!(sources.contains("c1-u1") && sources.contains("c2-u1"), "evidence of both conversations: {sources}");
}
