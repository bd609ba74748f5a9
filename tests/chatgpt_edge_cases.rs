//! Synthetic ChatGPT exports, one per edge case of provider-formats.md §1.10, built in the test.

use memport::pipeline::DedupPolicy;
use memport::sinks::OutputFormat;
use memport::sources::BranchPolicy;
use serde_json::json;

use crate::util::{conversation, convert_checked, ndjson, options, skips, text_node, write_export};

fn chunks_of(out: &std::path::Path) -> Vec<serde_json::Value> {
    ndjson(&out.join("memory.aimem.ndjson")).into_iter().filter(|line| line["_kind"] == "chunk").collect()
}

#[test]
fn thread_thousands_of_levels_deep_needs_no_recursion() {
    let depth = 5000;
    let mut nodes = Vec::with_capacity(depth);
    let mut parent = "root".to_owned();
    for level in 0..depth {
        let id = format!("n{level}");
        let role = if level % 2 == 0 { "user" } else { "assistant" };
        nodes.push(text_node(&id, Some(&parent), role, &format!("turn {level}"), 1_700_000_000.0 + level as f64));
        parent = id;
    }
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conversation("deep", nodes, Some(&parent))]);
    let (out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.counts.messages_written, depth as u64);
    let edges = ndjson(&out.path().join("memory.aimem.ndjson")).iter().filter(|line| line["_kind"] == "edge").count();
    assert_eq!(edges, depth - 1);
}

#[test]
fn active_branch_follows_current_node_and_all_keeps_regenerations() {
    let nodes = vec![
        text_node("q", Some("root"), "user", "question", 1.0e9),
        text_node("a1", Some("q"), "assistant", "first answer", 1.0e9 + 1.0),
        text_node("a2", Some("q"), "assistant", "regenerated answer", 1.0e9 + 2.0),
    ];
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conversation("c", nodes, Some("a1"))]);
    let (out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!((report.counts.messages_written, skips(&report).1), (2, 1));
    let contents: Vec<_> = chunks_of(out.path()).iter().map(|chunk| chunk["content"].as_str().unwrap().to_owned()).collect();
    assert_eq!(contents, ["question", "first answer"]);

    let (out, report) = convert_checked(&input, BranchPolicy::All, DedupPolicy::Content);
    assert_eq!(report.counts.messages_written, 3);
    let lines = ndjson(&out.path().join("memory.aimem.ndjson"));
    let edges: Vec<_> = lines.iter().filter(|line| line["_kind"] == "edge").collect();
    // Both answers hang off the question: the fork is kept.
    assert_eq!(edges.len(), 2);
    assert!(edges.iter().all(|edge| edge["source_id"].as_str().unwrap().ends_with(".c.q")));
    let off_branch =
        chunks_of(out.path()).into_iter().filter(|chunk| chunk["tags"].as_array().unwrap().contains(&json!("off-branch"))).count();
    assert_eq!(off_branch, 1);
}

#[test]
fn missing_current_node_falls_back_to_newest_leaf() {
    let nodes = vec![
        text_node("q", Some("root"), "user", "question", 1.0e9),
        text_node("old", Some("q"), "assistant", "older", 1.0e9 + 1.0),
        text_node("new", Some("q"), "assistant", "newer", 1.0e9 + 5.0),
    ];
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conversation("c", nodes, Some("not-in-mapping"))]);
    let (out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.warnings.get("current_node_missing"), Some(&1));
    let contents: Vec<_> = chunks_of(out.path()).iter().map(|chunk| chunk["content"].as_str().unwrap().to_owned()).collect();
    assert_eq!(contents, ["question", "newer"]);
}

#[test]
fn children_rebuilt_from_parent_links_when_absent_and_cycles_do_not_hang() {
    // 2026 shards have no `children`; a broken export may have a parent cycle.
    let mut conv = conversation(
        "c",
        vec![
            text_node("a", Some("root"), "user", "hello", 1.0e9),
            text_node("b", Some("a"), "assistant", "hi", 1.0e9 + 1.0),
            text_node("x", Some("y"), "user", "cycle one", 1.0e9 + 2.0),
            text_node("y", Some("x"), "assistant", "cycle two", 1.0e9 + 3.0),
        ],
        Some("b"),
    );
    conv["mapping"]["root"].as_object_mut().unwrap().remove("children");
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conv]);
    let (_out, report) = convert_checked(&input, BranchPolicy::All, DedupPolicy::Content);
    assert_eq!(report.counts.messages_read, 4);
    assert_eq!(report.counts.messages_written, 4);
}

#[test]
fn a_mapping_whose_every_node_is_in_a_parent_cycle_keeps_the_newest_thread_on_the_active_branch() {
    // No root and no leaf, and no `current_node`: the newest node's thread is the active one,
    // where before every message was skipped as off its branch.
    let mut conv = conversation(
        "c",
        vec![
            text_node("x", Some("z"), "user", "cycle one", 1.0e9),
            text_node("y", Some("x"), "assistant", "cycle two", 1.0e9 + 1.0),
            text_node("z", Some("y"), "user", "cycle three", 1.0e9 + 2.0),
        ],
        None,
    );
    conv["mapping"].as_object_mut().unwrap().remove("root");
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conv]);
    let (_out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.warnings.get("current_node_missing"), Some(&1));
    assert_eq!((report.counts.messages_read, report.counts.messages_written, skips(&report).1), (3, 3, 0));
}

#[test]
fn hidden_plumbing_null_times_and_in_progress() {
    let mut hidden = text_node("sys", Some("root"), "system", "", 0.0);
    hidden.1["message"]["weight"] = json!(0.0);
    hidden.1["message"]["create_time"] = json!(null);
    let mut context = text_node("ctx", Some("sys"), "user", "", 1.0e9);
    context.1["message"]["content"] =
        json!({"content_type": "user_editable_context", "user_profile": "I like Rust", "user_instructions": "Be brief"});
    context.1["message"]["metadata"] = json!({"is_visually_hidden_from_conversation": true});
    let mut untimed = text_node("q", Some("ctx"), "user", "question without a time", 0.0);
    untimed.1["message"]["create_time"] = json!(null);
    let mut interrupted = text_node("a", Some("q"), "assistant", "", 1.0e9 + 9.0);
    interrupted.1["message"]["status"] = json!("in_progress");
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conversation("c", vec![hidden, context, untimed, interrupted], Some("a"))]);
    let (out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(skips(&report), (2, 0, 1));
    assert_eq!(report.counts.messages_written, 1);
    // "About you" and "how to respond" are two memories of different kinds.
    assert_eq!(report.counts.memories_read, 2);
    let chunks: Vec<_> = chunks_of(out.path()).into_iter().filter(|chunk| chunk["memory_type"] == "episodic").collect();
    // No own time: the nearest ancestor's time (the context message) is used.
    assert_eq!(chunks[0]["created_at"], "2001-09-09T01:46:40Z");
}

#[test]
fn every_known_content_type_renders_and_unknown_ones_are_kept_raw() {
    let typed = |id: &str, parent: &str, role: &str, content: serde_json::Value| {
        let mut node = text_node(id, Some(parent), role, "", 1.0e9);
        node.1["message"]["content"] = content;
        node
    };
    let nodes = vec![
        typed(
            "m1",
            "root",
            "user",
            json!({"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Abc123"}, "what is this?"]}),
        ),
        typed("m2", "m1", "assistant", json!({"content_type": "code", "language": "python", "text": "print(1)"})),
        typed("m3", "m2", "tool", json!({"content_type": "execution_output", "text": "1"})),
        typed("m4", "m3", "tool", json!({"content_type": "system_error", "name": "tool_error", "text": "boom"})),
        typed("m5", "m4", "assistant", json!({"content_type": "thoughts", "thoughts": [{"summary": "Plan", "content": "think"}]})),
        typed("m6", "m5", "assistant", json!({"content_type": "reasoning_recap", "content": "Thought for 2s"})),
        typed("m7", "m6", "tool", json!({"content_type": "tether_quote", "title": "T", "url": "https://example.org", "text": "quoted"})),
        typed("m8", "m7", "assistant", json!({"content_type": "brand_new_type", "payload": {"x": 1}})),
    ];
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conversation("c", nodes, Some("m8"))]);
    let (out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.counts.messages_written, 8);
    assert_eq!(report.warnings.get("unknown_content_type:brand_new_type"), Some(&1));
    assert_eq!(report.warnings.get("asset_missing"), Some(&1));
    let contents: Vec<String> = chunks_of(out.path()).iter().map(|chunk| chunk["content"].as_str().unwrap().to_owned()).collect();
    assert_eq!(contents[0], "[image: file-service://file-Abc123 (missing from export)]\nwhat is this?");
    assert_eq!(contents[1], "```python\nprint(1)\n```");
    assert_eq!(contents[3], "tool_error: boom");
    assert_eq!(contents[4], "Plan\nthink");
    assert_eq!(contents[6], "T\nhttps://example.org\nquoted");
    // The unknown type is kept whole as raw JSON.
    let raw: serde_json::Value = serde_json::from_str(&contents[7]).unwrap();
    assert_eq!(raw["payload"]["x"], 1);
}

#[test]
fn citation_markers_resolve_to_their_alt_text() {
    let mut node = text_node("a", Some("root"), "assistant", "Rust is fast\u{e200}cite\u{e202}turn0search1\u{e201}.", 1.0e9);
    node.1["message"]["metadata"] =
        json!({"content_references": [{"matched_text": "\u{e200}cite\u{e202}turn0search1\u{e201}", "alt": " [rust-lang.org]"}]});
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conversation("c", vec![node], Some("a"))]);
    let (out, _report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(chunks_of(out.path())[0]["content"], "Rust is fast [rust-lang.org].");
}

#[test]
fn surrogate_pairs_combine_and_lone_surrogates_are_replaced() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(folder.path()).unwrap();
    let input = folder.path().join("conversations.json");
    let element = r#"{"id":"c","mapping":{"r":{"id":"r","message":null,"parent":null},"a":{"id":"a","parent":"r","message":{"id":"a","author":{"role":"user"},"create_time":1000000000.0,"content":{"content_type":"text","parts":["fire \ud83d\udd25 and lone \ud800 end"]}}}},"current_node":"a"}"#;
    std::fs::write(&input, format!("[{element}]")).unwrap();
    let (out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.warnings.get("lone_surrogate_replaced"), Some(&1));
    assert_eq!(chunks_of(out.path())[0]["content"], "fire \u{1f525} and lone \u{fffd} end");
}

#[test]
fn content_over_the_chunk_limit_is_split_into_linked_chunks() {
    let long = "word ".repeat(30_000); // 150,000 code points
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conversation("c", vec![text_node("a", Some("root"), "user", &long, 1.0e9)], Some("a"))]);
    let (out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.counts.messages_written, 1);
    let lines = ndjson(&out.path().join("memory.aimem.ndjson"));
    let chunks: Vec<_> = lines.iter().filter(|line| line["_kind"] == "chunk").collect();
    assert_eq!(chunks.len(), 3);
    let joined: String = chunks.iter().map(|chunk| chunk["content"].as_str().unwrap()).collect();
    assert_eq!(joined, long);
    assert!(chunks[1]["id"].as_str().unwrap().ends_with(".p2"));
    assert_eq!(lines.iter().filter(|line| line["_kind"] == "edge").count(), 2);
}

#[test]
fn duplicates_keep_the_first_and_chains_skip_them() {
    let first = conversation("c1", vec![text_node("a", Some("root"), "user", "Thanks!", 1.0e9)], Some("a"));
    let second = conversation(
        "c2",
        vec![
            text_node("x", Some("root"), "user", "hello", 1.0e9),
            // The same text by the same role (an assistant saying it would be another message).
            text_node("y", Some("x"), "user", "  THANKS!  ", 1.0e9 + 1.0),
            text_node("z", Some("y"), "user", "bye", 1.0e9 + 2.0),
        ],
        Some("z"),
    );
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[first, second]);
    let (out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!((report.counts.messages_written, report.counts.messages_duplicate), (3, 1));
    let lines = ndjson(&out.path().join("memory.aimem.ndjson"));
    let edges: Vec<_> = lines.iter().filter(|line| line["_kind"] == "edge").collect();
    assert_eq!(edges.len(), 1);
    assert!(edges[0]["source_id"].as_str().unwrap().ends_with(".c2.x"));
    assert!(edges[0]["target_id"].as_str().unwrap().ends_with(".c2.z"));
}

#[test]
fn assets_resolve_inside_a_zip_and_zip_output_equals_folder_output() {
    let folder = tempfile::tempdir().unwrap();
    let mut node = text_node("m", Some("root"), "user", "", 1.0e9);
    node.1["message"]["content"] = json!({"content_type": "multimodal_text", "parts": [
        {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Present1"},
        {"content_type": "image_asset_pointer", "asset_pointer": "sediment://file_00000000aa"},
        "two pictures"]});
    let export = folder.path().join("export");
    write_export(&export, &[conversation("c", vec![node], Some("m"))]);
    std::fs::write(export.join("file-Present1-photo.png"), b"png").unwrap();
    std::fs::write(export.join("user.json"), b"{ not even json").unwrap();
    let zip_path = folder.path().join("export.zip");
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    for name in ["conversations.json", "file-Present1-photo.png", "user.json"] {
        writer.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        std::io::Write::write_all(&mut writer, &std::fs::read(export.join(name)).unwrap()).unwrap();
    }
    writer.finish().unwrap();

    let (from_folder, report) = convert_checked(&export, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.warnings.get("asset_missing"), Some(&1));
    let (from_zip, report) = convert_checked(&zip_path, BranchPolicy::Active, DedupPolicy::Content);
    assert!(report.inputs[0].layout.starts_with("zip"));
    let chunk = &chunks_of(from_zip.path())[0];
    assert_eq!(
        chunk["content"],
        "[image: file-Present1-photo.png]\n[image: sediment://file_00000000aa (missing from export)]\ntwo pictures"
    );
    for name in ["memory.aimem.json", "memory.aimem.ndjson"] {
        assert_eq!(std::fs::read(from_folder.path().join(name)).unwrap(), std::fs::read(from_zip.path().join(name)).unwrap(), "{name}");
    }
}

#[test]
fn shards_are_found_by_pattern_and_read_in_order() {
    let folder = tempfile::tempdir().unwrap();
    let shard = |index: usize, id: &str| {
        let body =
            serde_json::to_vec_pretty(&[conversation(id, vec![text_node("m", Some("root"), "user", id, 1.0e9)], Some("m"))]).unwrap();
        std::fs::write(folder.path().join(format!("conversations-{index:03}.json")), body).unwrap();
    };
    shard(10, "third");
    shard(2, "second");
    shard(0, "first");
    std::fs::write(folder.path().join("export_manifest.json"), r#"{"export_files":[{"path":"conversations-000.json","size_bytes":1},{"path":"conversations-002.json","size_bytes":1},{"path":"conversations-003.json","size_bytes":1}]}"#).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut options = options(&[folder.path().to_owned()], out.path(), &[OutputFormat::AimemNdjson]);
    options.rejects = None;
    let report = memport::run(&options).unwrap();
    assert_eq!(report.inputs[0].files, ["conversations-000.json", "conversations-002.json", "conversations-010.json"]);
    assert_eq!(report.warnings.get("manifest_shard_missing"), Some(&1));
    assert_eq!(report.warnings.get("shard_not_in_manifest"), Some(&1));
    let contents: Vec<String> = chunks_of(out.path()).iter().map(|chunk| chunk["content"].as_str().unwrap().to_owned()).collect();
    assert_eq!(contents, ["first", "second", "third"]);
}

/// A conversations file given alone finds its assets under its folder by name, and the other
/// files there (a broken zip, someone else's export zip) are neither opened nor read.
#[test]
fn a_conversations_file_given_alone_reads_no_zip_beside_it() {
    let folder = tempfile::tempdir().unwrap();
    let mut node = text_node("m", Some("root"), "user", "", 1.0e9);
    node.1["message"]["content"] = json!({"content_type": "multimodal_text", "parts": [
        {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Present1"}, "a picture"]});
    let input = write_export(folder.path(), &[conversation("c", vec![node], Some("m"))]);
    std::fs::create_dir(folder.path().join("dalle-generations")).unwrap();
    std::fs::write(folder.path().join("dalle-generations/file-Present1-photo.webp"), b"webp").unwrap();
    std::fs::write(folder.path().join("broken.zip"), b"PK\x03\x04 not a zip at all").unwrap();
    let mut writer = zip::ZipWriter::new(std::fs::File::create(folder.path().join("other.zip")).unwrap());
    writer.start_file("file-Present1-other.png", zip::write::SimpleFileOptions::default()).unwrap();
    std::io::Write::write_all(&mut writer, b"png").unwrap();
    writer.finish().unwrap();

    let (out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.warnings.get("asset_missing"), None);
    assert_eq!(chunks_of(out.path())[0]["content"], "[image: dalle-generations/file-Present1-photo.webp]\na picture");
}
