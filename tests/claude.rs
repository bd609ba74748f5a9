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

#[test]
fn projects_and_memories_become_provider_memories() {
    // The real small export: its only project is the starter project (skipped by its flag);
    // memories.json holds one conversation memory.
    let (out, report) =
        convert_checked(&shared("provider-samples/claude/2025-07_small-export"), BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!((report.counts.memories_read, report.counts.memories_written), (1, 1));
    assert_eq!(report.warnings.get("claude_starter_project_skipped"), Some(&1));
    let memories: Vec<_> = ndjson(&out.path().join("memory.aimem.ndjson"))
        .into_iter()
        .filter(|line| line["tags"].as_array().is_some_and(|tags| tags.contains(&json!("provider-memory"))))
        .collect();
    assert_eq!(memories.len(), 1);
    assert_eq!(memories[0]["memory_type"], "fact");
    // The SDK sample: a conversation memory and one project memory.
    let (_out, report) = convert_checked(
        &shared("pam/fixtures/python-sdk-test-samples/claude-memories.sample.json"),
        BranchPolicy::Active,
        DedupPolicy::Content,
    );
    assert_eq!((report.counts.conversations_read, report.counts.memories_written), (0, 2));
}

#[test]
fn generated_export_with_projects_and_memories_matches_independent_counts() {
    // 8 conversations with edit/retry branches; 3 projects beside the starter one (their
    // descriptions, prompts and documents) and memories.json: 15 memories, counted by a script.
    let (out, report) = convert_checked(&crate::util::root().join("examples/claude-small"), BranchPolicy::Active, DedupPolicy::Content);
    let counts = &report.counts;
    assert_eq!((counts.conversations_read, counts.messages_read, counts.messages_written, counts.messages_duplicate), (8, 23, 17, 1));
    assert_eq!(skips(&report), (0, 3, 2));
    assert_eq!((counts.memories_read, counts.memories_written), (15, 15));
    let types: std::collections::BTreeSet<String> = ndjson(&out.path().join("memory.aimem.ndjson"))
        .into_iter()
        .filter(|line| line["tags"].as_array().is_some_and(|tags| tags.contains(&json!("provider-memory"))))
        .map(|line| line["memory_type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(types.into_iter().collect::<Vec<_>>(), ["fact", "procedure"]);
    // users.json (PII) is never read.
    assert!(report.inputs[0].files.iter().all(|file| !file.contains("users.json")));
}

#[test]
fn memories_as_a_bare_object_and_projects_as_a_folder() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(
        folder.path().join("memories.json"),
        br#"{"conversations_memory": "Works in Rust.", "project_memories": {"p1": "Uses tokio."}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(folder.path().join("projects")).unwrap();
    let project = json!({"uuid": "p1", "name": "Engine", "is_starter_project": false, "prompt_template": "Answer briefly.",
                         "created_at": "2026-05-01T10:00:00+00:00", "docs": [{"uuid": "d1", "filename": "notes.md", "content": "Bounded queues."}]});
    std::fs::write(folder.path().join("projects/p1.json"), serde_json::to_vec(&project).unwrap()).unwrap();
    let (_out, report) = convert_checked(folder.path(), BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.inputs[0].provider, "claude");
    assert_eq!((report.counts.memories_read, report.counts.memories_written), (4, 4));
}

#[test]
fn a_2026_manifest_reads_the_zips_beside_it() {
    let folder = tempfile::tempdir().unwrap();
    let conversations = json!([{"uuid": "c1", "name": "", "created_at": "2026-09-01T10:00:00Z",
        "chat_messages": [message("m1", None, "human", "2026-09-01T10:00:00Z", json!([{"type": "text", "text": "Hello"}]))]}]);
    let zip_path = folder.path().join("conversations-000.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    zip.start_file("conversations-000.json", zip::write::SimpleFileOptions::default()).unwrap();
    std::io::Write::write_all(&mut zip, &serde_json::to_vec(&conversations).unwrap()).unwrap();
    zip.finish().unwrap();
    std::fs::write(folder.path().join("memories.json"), br#"[{"conversations_memory": "Likes tea."}]"#).unwrap();
    let manifest = folder.path().join("manifest-0000-2026-09-01.json");
    let listing = json!({"files": [{"url": "https://example.invalid/conversations-000.zip?sig=1"}, {"url": "https://example.invalid/conversations-001.zip"},
                                   {"url": "https://example.invalid/memories.json"}]});
    std::fs::write(&manifest, serde_json::to_vec(&listing).unwrap()).unwrap();
    let (_out, report) = convert_checked(&manifest, BranchPolicy::Active, DedupPolicy::Content);
    assert!(report.inputs[0].layout.contains("manifest"), "{}", report.inputs[0].layout);
    assert_eq!((report.counts.messages_written, report.counts.memories_written), (1, 1));
    // The second shard is listed but not downloaded: said, not fatal.
    assert_eq!(report.warnings.get("manifest_file_missing"), Some(&1));
}
