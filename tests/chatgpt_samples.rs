//! Every real ChatGPT sample in ../shared converts, validates, and gives the counts counted by
//! hand (with an independent script over the raw JSON, by the policy in docs/providers/chatgpt.md).

use memport::pipeline::DedupPolicy;
use memport::sources::BranchPolicy;

use crate::util::{convert_checked, shared, skips};

/// (sample, branches, dedup, conversations, messages read, written, duplicate, (hidden, off_branch, empty)).
type Expected = (&'static str, BranchPolicy, DedupPolicy, u64, u64, u64, u64, (u64, u64, u64));

const ACTIVE: BranchPolicy = BranchPolicy::Active;
const ALL: BranchPolicy = BranchPolicy::All;
const CONTENT: DedupPolicy = DedupPolicy::Content;
const OFF: DedupPolicy = DedupPolicy::Off;

const EXPECTED: &[Expected] = &[
    ("provider-samples/chatgpt/2023-05_earliest-export", ACTIVE, CONTENT, 5, 24, 16, 0, (0, 3, 5)),
    ("provider-samples/chatgpt/2023-05_earliest-export", ACTIVE, OFF, 5, 24, 16, 0, (0, 3, 5)),
    ("provider-samples/chatgpt/2023-05_earliest-export", ALL, CONTENT, 5, 24, 19, 0, (0, 0, 5)),
    ("provider-samples/chatgpt/2023-05_earliest-export", ALL, OFF, 5, 24, 19, 0, (0, 0, 5)),
    ("provider-samples/chatgpt/2023-09_single-file-export", ACTIVE, CONTENT, 9, 136, 120, 1, (6, 3, 6)),
    ("provider-samples/chatgpt/2023-09_single-file-export", ACTIVE, OFF, 9, 136, 121, 0, (6, 3, 6)),
    ("provider-samples/chatgpt/2023-09_single-file-export", ALL, CONTENT, 9, 136, 123, 1, (6, 0, 6)),
    ("provider-samples/chatgpt/2023-09_single-file-export", ALL, OFF, 9, 136, 124, 0, (6, 0, 6)),
    ("provider-samples/chatgpt/2025-06_single-conversation", ACTIVE, CONTENT, 1, 12, 10, 0, (2, 0, 0)),
    ("provider-samples/chatgpt/2025-06_single-conversation", ALL, OFF, 1, 12, 10, 0, (2, 0, 0)),
    ("provider-samples/chatgpt/2026-09_sharded-export", ACTIVE, CONTENT, 1, 2, 2, 0, (0, 0, 0)),
    ("provider-samples/chatgpt/2026-09_sharded-export", ALL, OFF, 1, 2, 2, 0, (0, 0, 0)),
    ("pam/fixtures/python-sdk-test-samples/chatgpt-conversations.sample.json", ACTIVE, CONTENT, 1, 2, 2, 0, (0, 0, 0)),
];

#[test]
fn every_real_chatgpt_sample_matches_hand_counts() {
    for &(sample, branches, dedup, conversations, read, written, duplicate, skipped) in EXPECTED {
        let (_out, report) = convert_checked(&shared(sample), branches, dedup);
        let counts = &report.counts;
        let case = format!("{sample} {branches:?} {dedup:?}");
        assert_eq!(counts.conversations_read, conversations, "{case}");
        assert_eq!(counts.conversations_rejected, 0, "{case}");
        assert_eq!(counts.messages_read, read, "{case}");
        assert_eq!(counts.messages_written, written, "{case}");
        assert_eq!(counts.messages_duplicate, duplicate, "{case}");
        assert_eq!(skips(&report), skipped, "{case}");
        assert_eq!(counts.messages_rejected, 0, "{case}");
        assert_eq!(report.rejects, 0, "{case}");
    }
}

#[test]
fn custom_instructions_become_context_not_turns() {
    // 2023: hidden system messages with user_context_message_data; 2025: user_editable_context.
    // Three conversations repeat the same "about you" and "how to respond" texts: six memories
    // read, two written (hand count).
    let (out, report) = convert_checked(&shared("provider-samples/chatgpt/2023-09_single-file-export"), ACTIVE, CONTENT);
    assert_eq!((report.counts.memories_read, report.counts.memories_written, report.counts.memories_duplicate), (6, 2, 4));
    let memory_types: Vec<String> = crate::util::ndjson(&out.path().join("memory.aimem.ndjson"))
        .iter()
        .filter(|line| line["tags"].as_array().is_some_and(|tags| tags.iter().any(|tag| tag == "provider-memory")))
        .map(|line| line["memory_type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(memory_types, ["preference", "identity"]);
    // 2025: the instructions sit in the content and again in the metadata; read once.
    let (_out, report) = convert_checked(&shared("provider-samples/chatgpt/2025-06_single-conversation"), ACTIVE, CONTENT);
    assert_eq!((report.counts.memories_read, report.counts.memories_written), (1, 1));
}

#[test]
fn sharded_sample_is_detected_and_pii_side_files_are_not_read() {
    let (_out, report) = convert_checked(&shared("provider-samples/chatgpt/2026-09_sharded-export"), ACTIVE, CONTENT);
    let input = &report.inputs[0];
    assert_eq!(input.provider, "chatgpt");
    assert!(input.layout.contains("2026 sharded"), "{}", input.layout);
    // Only the conversation shard is framed: ads.json, user_settings.json etc. are never opened.
    assert_eq!(input.files, ["conversations-000.excerpt.json"]);
    // The excerpt manifest lists shards that are not in the sample folder.
    assert!(report.warnings.get("manifest_shard_missing").is_some_and(|count| *count >= 1), "{:?}", report.warnings);
}

#[test]
fn output_chunk_and_edge_counts_follow_written_messages() {
    let (out, report) = convert_checked(&shared("provider-samples/chatgpt/2023-09_single-file-export"), ACTIVE, CONTENT);
    let lines = crate::util::ndjson(&out.path().join("memory.aimem.ndjson"));
    let chunks = lines.iter().filter(|line| line["_kind"] == "chunk").count() as u64;
    let temporal = lines.iter().filter(|line| line["_kind"] == "edge" && line["edge_type"] == "temporal").count() as u64;
    let memories = crate::util::memories_in_output(&report);
    // No message here exceeds the chunk limit, so one chunk per written message and memory.
    assert_eq!(chunks, report.counts.messages_written + memories);
    // A chain per conversation: one temporal edge fewer than chunks, per conversation with
    // chunks; the duplicate leaves its conversation's chain (its neighbours are linked
    // directly). (Each memory is a chain of one, so it adds no temporal edge.)
    assert_eq!(temporal, chunks - 9 - memories);
    // Each extracted memory links to the messages it came from.
    let derived = lines.iter().filter(|line| line["_kind"] == "edge" && line["edge_type"] == "x-derived-from").count() as u64;
    assert!(derived >= memories - report.counts.memories_written, "an evidence edge per extracted memory at least");
    let is_memory = |line: &&serde_json::Value| {
        line["tags"].as_array().is_some_and(|tags| tags.iter().any(|tag| tag == "provider-memory" || tag == "extracted"))
    };
    assert!(lines[1..].iter().filter(|line| !is_memory(line)).all(|line| line["memory_type"] == "episodic" || line["_kind"] == "edge"));
}
