//! The engine: determinism at any thread count, bad records rejected with where and why,
//! truncated inputs keeping what came before, several sinks from one read.

use memport::pipeline::DedupPolicy;
use memport::sinks::OutputFormat;
use memport::sources::BranchPolicy;

use crate::util::{conversation, ndjson, options, root, text_node, write_export};

#[test]
fn output_is_byte_identical_at_any_thread_count() {
    for example in ["chatgpt-small", "claude-small", "grok-small", "copilot-small", "gemini-json-small"] {
        assert_deterministic(&root().join("examples").join(example));
    }
    // Several inputs of different providers go into one output, in the order given.
    let out = tempfile::tempdir().unwrap();
    let inputs = [root().join("examples/grok-small"), root().join("examples/copilot-small")];
    let report = memport::run(&options(&inputs, out.path(), &[OutputFormat::AimemNdjson])).unwrap();
    let providers: Vec<&str> = report.inputs.iter().map(|input| input.provider).collect();
    assert_eq!(providers, ["grok", "copilot"]);
    let sources: Vec<String> = ndjson(&out.path().join("memory.aimem.ndjson"))
        .iter()
        .filter(|line| line["_kind"] == "chunk")
        .map(|chunk| chunk["tags"][1].as_str().unwrap().to_owned())
        .collect();
    let switch = sources.iter().position(|tag| tag == "src-copilot").unwrap();
    assert!(sources[..switch].iter().all(|tag| tag == "src-grok") && sources[switch..].iter().all(|tag| tag == "src-copilot"));
}

fn assert_deterministic(input: &std::path::Path) {
    let mut outputs = Vec::new();
    for threads in [1, 2, 3, 8] {
        let out = tempfile::tempdir().unwrap();
        let mut options = options(&[input.to_owned()], out.path(), &[OutputFormat::Aimem, OutputFormat::AimemNdjson]);
        options.settings.threads = Some(threads);
        options.settings.branches = BranchPolicy::All;
        memport::run(&options).unwrap();
        let bundle = std::fs::read(out.path().join("memory.aimem.json")).unwrap();
        let stream = std::fs::read(out.path().join("memory.aimem.ndjson")).unwrap();
        outputs.push((bundle, stream));
    }
    assert!(outputs.windows(2).all(|pair| pair[0] == pair[1]), "{}", input.display());
}

#[test]
fn bad_conversations_are_rejected_with_location_and_the_run_goes_on() {
    let folder = tempfile::tempdir().unwrap();
    let good = serde_json::to_string(&conversation("good", vec![text_node("m", Some("root"), "user", "fine", 1.0e9)], Some("m"))).unwrap();
    let mut no_role = conversation(
        "no-role",
        vec![text_node("m", Some("root"), "user", "ok", 1.0e9), text_node("n", Some("m"), "assistant", "also ok", 1.0e9 + 1.0)],
        Some("n"),
    );
    no_role["mapping"]["m"]["message"]["author"] = serde_json::json!({});
    let no_role = serde_json::to_string(&no_role).unwrap();
    let broken = r#"{"id": "broken", "mapping": {"a": tru}}"#;
    let text = format!("[{good}, 42, {broken},\n{{\"title\": \"no id\", \"mapping\": {{}}}}, {no_role}]");
    let broken_offset = text.find(broken).unwrap() as u64;
    std::fs::write(folder.path().join("conversations.json"), &text).unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = options(&[folder.path().join("conversations.json")], out.path(), &[OutputFormat::AimemNdjson]);
    let report = memport::run(&options).unwrap();
    let counts = &report.counts;
    assert_eq!((counts.conversations_read, counts.conversations_rejected), (5, 3));
    assert_eq!((counts.messages_read, counts.messages_written, counts.messages_rejected), (3, 2, 1));
    assert!(counts.balances());
    let rejects = ndjson(&out.path().join("rejects.ndjson"));
    assert_eq!(rejects.len(), 4);
    let broken_line = rejects.iter().find(|line| line["offset"] == broken_offset).expect("broken element located by byte offset");
    assert_eq!(broken_line["level"], "conversation");
    assert_eq!(broken_line["index"], 2);
    assert!(broken_line["reason"].as_str().unwrap().starts_with("invalid JSON"));
    let message_line = rejects.iter().find(|line| line["level"] == "message").unwrap();
    assert_eq!(message_line["conversation_id"], "no-role");
    assert_eq!(message_line["message_id"], "m");
    assert!(message_line["reason"].as_str().unwrap().contains("author.role"));
    assert!(memport::validate::validate_path(&out.path().join("memory.aimem.ndjson")).unwrap().is_valid());
}

#[test]
fn truncated_file_reports_where_it_ends_and_keeps_what_came_before() {
    let folder = tempfile::tempdir().unwrap();
    let conversations: Vec<_> = (0..3)
        .map(|index| {
            conversation(&format!("c{index}"), vec![text_node("m", Some("root"), "user", &format!("message {index}"), 1.0e9)], Some("m"))
        })
        .collect();
    let full = serde_json::to_string(&conversations).unwrap();
    let cut = full.len() - 40;
    std::fs::write(folder.path().join("conversations.json"), &full[..cut]).unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = options(&[folder.path().join("conversations.json")], out.path(), &[OutputFormat::Aimem]);
    let report = memport::run(&options).unwrap();
    assert_eq!(report.counts.conversations_read, 2);
    assert_eq!(report.counts.messages_written, 2);
    assert_eq!(report.warnings.get("input_ended_early"), Some(&1));
    let rejects = ndjson(&out.path().join("rejects.ndjson"));
    assert_eq!(rejects.len(), 1);
    assert_eq!(rejects[0]["level"], "input");
    assert!(rejects[0]["reason"].as_str().unwrap().contains("truncated"));
    assert!(memport::validate::validate_path(&out.path().join("memory.aimem.json")).unwrap().is_valid());
}

#[test]
fn several_inputs_go_into_one_output_in_order_and_dedup_spans_them() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    write_export(first.path(), &[conversation("a", vec![text_node("m", Some("root"), "user", "same words", 1.0e9)], Some("m"))]);
    write_export(second.path(), &[conversation("b", vec![text_node("m", Some("root"), "user", "Same  words", 1.0e9)], Some("m"))]);
    let out = tempfile::tempdir().unwrap();
    let mut options = options(&[first.path().to_owned(), second.path().to_owned()], out.path(), &[OutputFormat::AimemNdjson]);
    let report = memport::run(&options).unwrap();
    assert_eq!((report.counts.messages_written, report.counts.messages_duplicate), (1, 1));
    assert_eq!(report.inputs.len(), 2);
    options.settings.dedup = DedupPolicy::Off;
    let report = memport::run(&options).unwrap();
    assert_eq!(report.counts.messages_written, 2);
}

#[test]
fn an_input_that_is_not_an_export_is_a_clear_config_error() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("notes.json"), b"{\"hello\": 1}").unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = options(&[folder.path().join("notes.json")], out.path(), &[OutputFormat::Aimem]);
    let error = memport::run(&options).unwrap_err().to_string();
    assert!(error.contains("no ChatGPT, Claude, Grok, Copilot or Gemini export found"), "{error}");
    // Nothing that looks complete is left behind.
    assert!(!out.path().join("memory.aimem.json").exists());
}

#[test]
fn empty_export_gives_a_valid_empty_bundle() {
    let folder = tempfile::tempdir().unwrap();
    write_export(folder.path(), &[]);
    let out = tempfile::tempdir().unwrap();
    let options = options(&[folder.path().to_owned()], out.path(), &[OutputFormat::Aimem, OutputFormat::AimemNdjson]);
    let report = memport::run(&options).unwrap();
    assert_eq!(report.counts.conversations_read, 0);
    for output in &report.outputs {
        assert!(memport::validate::validate_path(std::path::Path::new(&output.path)).unwrap().is_valid());
    }
}
