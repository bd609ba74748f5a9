//! Grok: the real samples and the generated example convert with counts checked by an
//! independent script; both clock formats, dangling parents, missing leaves, sender variants and
//! the real model name on synthetic backends.

use memport::pipeline::DedupPolicy;
use memport::sources::BranchPolicy;
use serde_json::json;

use crate::util::{convert_checked, ndjson, root, shared, skips};

#[test]
fn real_grok_samples_match_hand_counts() {
    // (sample, conversations, read, written): straight threads, no duplicates.
    let expected = [
        ("provider-samples/grok/2025-06_export", 1, 10, 10),
        ("pam/fixtures/python-sdk-test-samples/grok-prod-grok-backend.sample.json", 1, 2, 2),
    ];
    for (sample, conversations, read, written) in expected {
        for branches in [BranchPolicy::Active, BranchPolicy::All] {
            let (_out, report) = convert_checked(&shared(sample), branches, DedupPolicy::Content);
            let counts = &report.counts;
            assert_eq!(report.inputs[0].provider, "grok", "{sample}");
            assert_eq!(
                (counts.conversations_read, counts.messages_read, counts.messages_written),
                (conversations, read, written),
                "{sample}"
            );
            assert_eq!(counts.messages_rejected, 0, "{sample}");
        }
    }
}

#[test]
fn generated_grok_example_matches_independent_counts() {
    // Counted by a separate script over the same file: 8 conversations, 25 responses, 5 off
    // the active path (regenerations, a leaf the export lacks), 1 empty answer.
    let (_out, report) = convert_checked(&root().join("examples/grok-small"), BranchPolicy::Active, DedupPolicy::Content);
    let counts = &report.counts;
    assert_eq!((counts.conversations_read, counts.messages_read, counts.messages_written), (8, 25, 19));
    assert_eq!(skips(&report), (0, 5, 1));
    assert_eq!(report.warnings.get("grok_leaf_not_exported"), Some(&1));
    // The identity and billing files sit beside the backend and are never read.
    assert_eq!(report.inputs[0].files.len(), 1);
    assert!(report.inputs[0].files[0].ends_with("prod-grok-backend.json"));
    let (_out, report) = convert_checked(&root().join("examples/grok-small"), BranchPolicy::All, DedupPolicy::Content);
    assert_eq!((report.counts.messages_written, skips(&report)), (24, (0, 0, 1)));
}

fn response(id: &str, parent: Option<&str>, sender: &str, message: &str, time: serde_json::Value) -> serde_json::Value {
    json!({"response": {"_id": id, "parent_response_id": parent, "sender": sender, "message": message, "create_time": time,
                        "metadata": {"request_metadata": {"model": "build", "resolved_model": "grok-4-real"}}},
           "share_link": null})
}

#[test]
fn mongo_and_iso_times_dangling_roots_and_the_newest_leaf_when_the_named_leaf_is_missing() {
    let mongo = |millis: i64| json!({"$date": {"$numberLong": millis.to_string()}});
    let backend = json!({
        "projects": [{"name": "skipped"}],
        "conversations": [{
            "conversation": {"id": "c1", "title": "Ports", "create_time": "2026-08-01T10:00:00.000000Z", "leaf_response_id": "not-exported"},
            "responses": [
                // The answer is stamped before its question: order comes from the tree.
                response("a1", Some("q1"), "ASSISTANT", "Port 80.", mongo(1_785_578_400_000)),
                response("q1", Some("root-not-in-export"), "human", "Which port is HTTP?", json!("2026-08-01T10:00:05.000Z")),
                response("a2", Some("q1"), "grok-3", "It is port 80.", mongo(1_785_578_460_000)),
            ]
        }],
        "media_posts": []
    });
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("prod-grok-backend.json");
    std::fs::write(&path, serde_json::to_vec(&backend).unwrap()).unwrap();
    let (out, report) = convert_checked(&path, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!((report.counts.messages_read, report.counts.messages_written), (3, 2));
    assert_eq!(skips(&report), (0, 1, 0));
    assert_eq!(report.warnings.get("grok_dangling_parent"), Some(&1));
    let chunks: Vec<_> = ndjson(&out.path().join("memory.aimem.ndjson")).into_iter().filter(|line| line["_kind"] == "chunk").collect();
    // Question first, then the newest answer (a2, the regeneration); a1 is off the branch.
    assert_eq!(chunks[0]["content"], "Which port is HTTP?");
    assert_eq!(chunks[1]["content"], "It is port 80.");
    assert!(chunks[1]["tags"].as_array().unwrap().contains(&json!("role-assistant")));
}
