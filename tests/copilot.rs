//! Copilot CSVs: the real excerpts and the SDK samples of all three layouts convert with
//! counts checked by an independent script; BOM, CRLF with multi-line cells, newest-first order
//! with ties, grouping by title and time, truncated answers and `--timezone` on synthetic files.

use memport::pipeline::DedupPolicy;
use memport::sinks::OutputFormat;
use memport::sources::{BranchPolicy, TimeZone};

use crate::util::{assert_zip_converts_like_unpacked, convert_checked, ndjson, options, root, shared, skips};

#[test]
fn real_copilot_samples_match_hand_counts() {
    // (sample, layout word, conversations, read, written, empty, truncated answers)
    let expected = [
        ("provider-samples/copilot/2025-06_activity-history", "activity history", 1, 12, 12, 0, 5),
        ("provider-samples/copilot/2026-07_activity-history", "activity history", 2, 5, 4, 1, 0),
        ("pam/fixtures/python-sdk-test-samples/copilot-activity-history.sample.csv", "activity history", 1, 2, 2, 0, 0),
        ("pam/fixtures/python-sdk-test-samples/copilot-chat-activity.sample.csv", "chat activity", 1, 2, 2, 0, 0),
        ("pam/fixtures/python-sdk-test-samples/windows-apps-copilot-activity-history.sample.csv", "Windows apps", 1, 1, 1, 0, 0),
    ];
    for (sample, layout, conversations, read, written, empty, truncated) in expected {
        let (_out, report) = convert_checked(&shared(sample), BranchPolicy::Active, DedupPolicy::Content);
        let counts = &report.counts;
        assert_eq!(report.inputs[0].provider, "copilot", "{sample}");
        assert!(report.inputs[0].layout.contains(layout), "{sample}: {}", report.inputs[0].layout);
        assert_eq!((counts.conversations_read, counts.messages_read, counts.messages_written), (conversations, read, written), "{sample}");
        assert_eq!(skips(&report).2, empty, "{sample}");
        assert_eq!(report.warnings.get("copilot_truncated_answer").copied().unwrap_or(0), truncated, "{sample}");
    }
}

#[test]
fn generated_copilot_example_matches_independent_counts() {
    // The generated file has a BOM, CRLF rows, multi-line cells, newest-first rows with every
    // answer tied to its question, and titles reused days later: 34 conversations of 86 rows.
    let (out, report) = convert_checked(&root().join("examples/copilot-small"), BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!((report.counts.conversations_read, report.counts.messages_read, report.counts.messages_written), (34, 86, 85));
    assert_eq!(skips(&report).2, 1);
    // Reversal keeps each question before the answer that shares its timestamp.
    let chunks: Vec<_> = ndjson(&out.path().join("memory.aimem.ndjson")).into_iter().filter(|line| line["_kind"] == "chunk").collect();
    let first_roles: Vec<bool> =
        chunks.iter().take(2).map(|chunk| chunk["tags"].as_array().unwrap().contains(&serde_json::json!("role-user"))).collect();
    assert_eq!(first_roles, [true, false]);
    assert!(chunks.iter().all(|chunk| chunk["tags"].as_array().unwrap().contains(&serde_json::json!("tz-assumed-utc"))));
}

#[test]
fn newest_first_rows_are_reversed_grouped_by_title_and_gap_and_read_in_the_given_zone() {
    let csv = "\u{feff}Conversation,Time,Author,Message\r\n\
               Rust,2026-07-09T10:00:00,AI,\"Use \"\"cargo new\"\".\nThen build.\"\r\n\
               Rust,2026-07-09T10:00:00,Human,How do I start?\r\n\
               Rust,2026-07-01T09:00:01,AI,Hello again\r\n\
               Rust,2026-07-01T09:00:01,Human,\r\n\
               Rust,2026-07-01T09:00:00,Human,Hi\r\n";
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("history.csv");
    std::fs::write(&path, csv).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut options = options(std::slice::from_ref(&path), out.path(), &[OutputFormat::AimemNdjson]);
    options.settings.timezone = TimeZone::parse("+02:00").unwrap();
    let report = memport::run(&options).unwrap();
    // Eight days apart: the same title is two conversations. The empty image-only prompt is
    // skipped by the `empty` policy.
    assert_eq!((report.counts.conversations_read, report.counts.messages_read, report.counts.messages_written), (2, 5, 4));
    let chunks: Vec<_> = ndjson(&out.path().join("memory.aimem.ndjson")).into_iter().filter(|line| line["_kind"] == "chunk").collect();
    let contents: Vec<&str> = chunks.iter().map(|chunk| chunk["content"].as_str().unwrap()).collect();
    assert_eq!(contents, ["Hi", "Hello again", "How do I start?", "Use \"cargo new\".\nThen build."]);
    // 10:00 at +02:00 is 08:00 UTC, and the outputs say which zone was assumed.
    assert_eq!(chunks[2]["created_at"], "2026-07-09T08:00:00Z");
    assert!(chunks[2]["tags"].as_array().unwrap().contains(&serde_json::json!("tz-assumed-p02-00")));
}

#[test]
fn a_zone_name_is_a_clear_option_error() {
    let error = TimeZone::parse("Europe/Berlin").unwrap_err();
    assert!(error.contains("fixed UTC offset"), "{error}");
}

#[test]
fn a_zipped_csv_gives_the_same_output_as_the_unpacked_one() {
    // Rows of an unpacked CSV are read back from the file itself; a zip entry's are copied to
    // a spill first. Both paths must write the same bytes.
    let name = "copilot-activity-history.csv";
    assert_zip_converts_like_unpacked(&root().join("examples/copilot-small").join(name), name);
}
