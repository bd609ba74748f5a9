//! Evidence quotes in the outputs (PAM `derived_from[].quote`, Parquet `memory_evidence.quote`):
//! a fact said in the same sentence as an e-mail address, a phone number or a secret is a memory
//! whose quote masks them, with or without `--redact secrets`; the quotes of a contact-detail
//! memory kept on request keep it; and `--redact secrets` leaves numbers in JSON alone.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::Array;
use arrow_array::cast::AsArray;
use memport::pipeline::extraction::ExtractionSettings;
use memport::pipeline::report::RunReport;
use memport::sinks::OutputFormat;
use memport::stages::extract::consolidate::ConsolidateOptions;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::util::{conversation, options, text_node, write_export};

/// An export whose user says each of `texts`, one message each, with an assistant turn between.
fn export(folder: &Path, texts: &[&str]) -> PathBuf {
    let mut nodes = Vec::new();
    let mut parent = "root".to_owned();
    for (index, text) in texts.iter().enumerate() {
        let (user, assistant) = (format!("u{index}"), format!("a{index}"));
        let time = 1_700_000_000.0 + index as f64 * 10.0;
        nodes.push(text_node(&user, Some(&parent), "user", text, time));
        nodes.push(text_node(&assistant, Some(&user), "assistant", "Noted.", time + 1.0));
        parent = assistant;
    }
    write_export(folder, &[conversation("c1", nodes, Some(&parent))])
}

/// Converts `texts` to PAM and Parquet with `extraction`.
fn convert(texts: &[&str], extraction: ExtractionSettings) -> (tempfile::TempDir, RunReport) {
    let folder = tempfile::tempdir().unwrap();
    let input = export(folder.path(), texts);
    let out = tempfile::tempdir().unwrap();
    let mut options = options(&[input], out.path(), &[OutputFormat::Pam, OutputFormat::Parquet]);
    crate::util::set_extraction(&mut options, extraction);
    let report = memport::run(&options).unwrap();
    assert!(report.counts.balances(), "{:?}", report.counts);
    (out, report)
}

fn extracting(keep_personal: bool, redact_secrets: bool) -> ExtractionSettings {
    ExtractionSettings { extract: Some(ConsolidateOptions { keep_personal, ..ConsolidateOptions::default() }), redact_secrets }
}

/// `(statement, quote)` of every piece of evidence in the PAM store, and every Parquet quote.
fn quotes(out: &Path) -> (Vec<(String, String)>, Vec<String>) {
    let store: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("pam/memory-store.json")).unwrap()).unwrap();
    let mut pam = Vec::new();
    for memory in store["memories"].as_array().unwrap() {
        for evidence in memory["metadata"]["derived_from"].as_array().into_iter().flatten() {
            pam.push((memory["content"].as_str().unwrap().to_owned(), evidence["quote"].as_str().unwrap().to_owned()));
        }
    }
    let mut parquet = Vec::new();
    let mut parts = vec![out.join("parquet/memory_evidence")];
    while let Some(path) = parts.pop() {
        if path.is_dir() {
            parts.extend(std::fs::read_dir(&path).unwrap().map(|entry| entry.unwrap().path()));
        } else if path.extension().is_some_and(|extension| extension == "parquet") {
            for batch in ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap().build().unwrap() {
                let batch = batch.unwrap();
                let column = batch.column_by_name("quote").unwrap().as_string::<i32>().clone();
                parquet.extend((0..column.len()).map(|row| column.value(row).to_owned()));
            }
        }
    }
    assert_eq!(pam.len(), parquet.len(), "both formats carry every piece of evidence");
    (pam, parquet)
}

/// Every byte under `folder`.
fn every_file(folder: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut paths = vec![folder.to_owned()];
    while let Some(path) = paths.pop() {
        if path.is_dir() {
            paths.extend(std::fs::read_dir(&path).unwrap().map(|entry| entry.unwrap().path()));
        } else {
            files.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    files
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle.as_bytes())
}

#[test]
fn evidence_quotes_mask_an_email_said_with_a_fact() {
    for redact_secrets in [false, true] {
        let (out, _) = convert(&["I work as a nurse, mail me at jo.smith@example.org."], extracting(false, redact_secrets));
        let (pam, parquet) = quotes(out.path());
        assert!(!pam.is_empty(), "the fact is a memory");
        for (statement, quote) in &pam {
            assert!(!quote.contains("jo.smith@example.org"), "{statement}: {quote}");
            assert!(quote.contains("[REDACTED:email]"), "{statement}: {quote}");
        }
        assert!(parquet.iter().all(|quote| !quote.contains("jo.smith@example.org") && quote.contains("[REDACTED:email]")), "{parquet:?}");
    }
}

#[test]
fn evidence_quotes_mask_a_phone_number_said_with_a_fact() {
    let (out, _) = convert(&["I work as a teacher, call me on +44 7700 900123 after five."], extracting(false, false));
    let (pam, parquet) = quotes(out.path());
    assert!(!pam.is_empty(), "the fact is a memory");
    for quote in pam.iter().map(|(_, quote)| quote).chain(&parquet) {
        assert!(!quote.contains("7700 900123") && quote.contains("[REDACTED:phone]"), "{quote}");
    }
}

#[test]
fn evidence_quotes_never_carry_a_secret_said_with_a_fact() {
    let secrets = ["Tr0ub4dor&3", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "sk_live_51H8abcDEFghiJKLmnoPQR", "Sup3rSecret", "hunter22x"];
    let texts = [
        "I work as a nurse and the wifi password at the office is Tr0ub4dor&3.",
        "I live in Leeds, aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "I run a bakery and our stripe key is sk_live_51H8abcDEFghiJKLmnoPQR.",
        "I prefer short answers, my db is postgres://jo:Sup3rSecret@db.example.com/app.",
        "I use Linux and I run backup.sh --password hunter22x every night.",
        "I live in Leeds.",
    ];
    let (out, _) = convert(&texts, extracting(false, false));
    let (pam, parquet) = quotes(out.path());
    assert!(!pam.is_empty(), "the plain fact is a memory");
    for quote in pam.iter().map(|(_, quote)| quote).chain(&parquet) {
        for secret in secrets {
            assert!(!quote.contains(secret), "{quote}");
        }
    }
    // Under --redact secrets, no file holds any of them, transcripts included.
    let (out, report) = convert(&texts, extracting(false, true));
    for (path, bytes) in every_file(out.path()) {
        for secret in secrets {
            assert!(!contains(&bytes, secret), "{} holds {secret}", path.display());
        }
    }
    assert_eq!(report.secrets_redacted.values().sum::<u64>(), 5, "{:?}", report.secrets_redacted);
}

#[test]
fn contact_detail_memories_kept_on_request_keep_their_quotes() {
    let (out, _) = convert(&["My email is jo@example.org and I work as a nurse."], extracting(true, false));
    let (pam, _) = quotes(out.path());
    let email: Vec<&String> = pam.iter().filter(|(statement, _)| statement.contains("jo@example.org")).map(|(_, quote)| quote).collect();
    assert!(!email.is_empty() && email.iter().all(|quote| quote.contains("jo@example.org")), "{pam:?}");
    let others: Vec<&String> = pam.iter().filter(|(statement, _)| !statement.contains("jo@example.org")).map(|(_, quote)| quote).collect();
    assert!(others.iter().all(|quote| !quote.contains("jo@example.org")), "{pam:?}");
}

#[test]
fn redact_secrets_leaves_numbers_in_json_decimals_versions_and_hashes() {
    let text = r#"I live in Leeds. Here is my config: {"ratio": 0.4111111111111111, "id": 4111111111111111, "version": "4.1.1.1111111111111111", "sha": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}"#;
    let (out, report) = convert(&[text], extracting(false, true));
    assert!(report.secrets_redacted.is_empty(), "{:?}", report.secrets_redacted);
    let transcripts = every_file(out.path());
    assert!(transcripts.iter().any(|(_, bytes)| contains(bytes, "0.4111111111111111") && contains(bytes, ": 4111111111111111")));
    assert!(!transcripts.iter().any(|(_, bytes)| contains(bytes, "[REDACTED:")));
}
