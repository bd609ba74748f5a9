//! Claude: real samples convert with counts checked independently; branches, thinking blocks,
//! attachments and detection by content on synthetic exports.

use memport::pipeline::DedupPolicy;
use memport::sources::BranchPolicy;
use serde_json::json;

use crate::util::{convert_checked, ndjson, shared, skips};

#[test]
fn real_claude_samples_match_hand_counts() {
    // (sample, conversations, messages read, written, empty): every branch policy and dedup
    // setting gives the same counts here (no sample branches or repeats a message).
    let expected = [
        ("provider-samples/claude/2025-07_small-export", 1, 2, 2, 0),
        ("provider-samples/claude/2024-03_to_2025-06_export/conversations.json", 85, 557, 10, 547),
        // Flat `text` is empty here; the text blocks carry the messages.
        ("provider-samples/claude/2024-03_to_2025-06_export/claude_thinking_example.json", 1, 2, 2, 0),
        ("pam/fixtures/python-sdk-test-samples/claude-conversations.sample.json", 1, 2, 2, 0),
    ];
    for (sample, conversations, read, written, empty) in expected {
        for branches in [BranchPolicy::Active, BranchPolicy::All] {
            for dedup in [DedupPolicy::Content, DedupPolicy::Off] {
                let (_out, report) = convert_checked(&shared(sample), branches, dedup);
                let counts = &report.counts;
                assert_eq!(report.inputs[0].provider, "claude", "{sample}");
                assert_eq!((counts.conversations_read, counts.messages_read), (conversations, read), "{sample}");
                assert_eq!((counts.messages_written, counts.messages_duplicate), (written, 0), "{sample}");
                assert_eq!(skips(&report), (0, 0, empty), "{sample}");
                assert_eq!(counts.messages_rejected, 0, "{sample}");
            }
        }
    }
}

fn message(uuid: &str, parent: Option<&str>, sender: &str, time: &str, content: serde_json::Value) -> serde_json::Value {
    json!({"uuid": uuid, "sender": sender, "text": "", "content": content, "created_at": time,
           "parent_message_uuid": parent.unwrap_or("00000000-0000-4000-8000-000000000000"),
           "attachments": [], "files": []})
}

#[test]
fn retries_branch_and_the_newest_leaf_is_active_thinking_is_kept_apart() {
    let text = |text: &str| json!([{"type": "text", "text": text}]);
    let conversation = json!({
        "uuid": "conv-1", "name": "", "created_at": "2025-01-01T10:00:00.000000Z", "updated_at": "2025-01-01T10:05:00Z",
        "chat_messages": [
            message("q", None, "human", "2025-01-01T10:00:00Z", text("Which crate parses TOML?")),
            message("a1", Some("q"), "assistant", "2025-01-01T10:00:05Z", text("toml")),
            message("a2", Some("q"), "assistant", "2025-01-01T10:01:00Z",
                    json!([{"type": "thinking", "thinking": "The user wants a crate."}, {"type": "text", "text": "The toml crate."}])),
            {"uuid": "x", "text": "no sender"},
        ]
    });
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("conversations.json"), serde_json::to_vec(&[conversation]).unwrap()).unwrap();
    let (out, report) = convert_checked(folder.path(), BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.inputs[0].provider, "claude");
    assert_eq!((report.counts.messages_read, report.counts.messages_written, report.counts.messages_rejected), (4, 2, 1));
    assert_eq!(skips(&report).1, 1);
    let chunks: Vec<String> = ndjson(&out.path().join("memory.aimem.ndjson"))
        .iter()
        .filter(|line| line["_kind"] == "chunk")
        .map(|chunk| chunk["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(chunks, ["Which crate parses TOML?", "The toml crate."]);
}

#[test]
fn flat_text_attachments_and_files_render() {
    let conversation = json!({
        "uuid": "conv-2", "chat_messages": [
            {"uuid": "m1", "sender": "human", "text": "See attached", "created_at": "2024-03-01T09:00:00Z",
             "attachments": [{"file_name": "notes.txt", "extracted_content": "line one"}], "files": [{"file_name": "photo.png"}]},
            {"uuid": "m2", "sender": "assistant", "text": "", "created_at": "2024-03-01T09:00:01Z", "content": []},
        ]
    });
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("conversations.json"), serde_json::to_vec(&[conversation]).unwrap()).unwrap();
    let (out, report) = convert_checked(folder.path(), BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!((report.counts.messages_written, skips(&report).2), (1, 1));
    let lines = ndjson(&out.path().join("memory.aimem.ndjson"));
    assert_eq!(lines[1]["content"], "See attached\n[attachment: notes.txt]\nline one\n[file: photo.png (missing from export)]");
    assert!(lines[1]["tags"].as_array().unwrap().contains(&json!("src-claude")));
}
