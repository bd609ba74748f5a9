//! The `memport` binary: help, exit codes, inspect and validate as a person uses them.

use std::process::Command;

use crate::util::{root, shared};

fn memport() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memport"));
    command.current_dir(root()).env("SOURCE_DATE_EPOCH", "1767225600");
    command
}

#[test]
fn help_teaches_the_commands_and_exit_codes() {
    let output = memport().arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for needle in ["convert", "run", "inspect", "validate", "Exit codes"] {
        assert!(help.contains(needle), "help mentions {needle}");
    }
}

#[test]
fn convert_then_validate_the_quick_start_example() {
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("brain.aimem.ndjson");
    let status = memport()
        .args(["convert", "examples/chatgpt-small", "--to", "aimem-ndjson", "-o"])
        .arg(&target)
        .arg("--report")
        .arg(out.path().join("run.json"))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(report["options"]["exported_at"], "2026-01-01T00:00:00Z");
    let first_line = std::fs::read_to_string(&target).unwrap().lines().next().unwrap().to_owned();
    assert!(first_line.contains("\"exported_at\":\"2026-01-01T00:00:00Z\""));
    let validate = memport().arg("validate").arg(&target).output().unwrap();
    assert_eq!(validate.status.code(), Some(0));
}

#[test]
fn validate_exits_one_on_an_invalid_file_and_names_the_problem() {
    let output = memport().arg("validate").arg(shared("formats/aimem/conformance-corpus/invalid/checksum_mismatch.json")).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("409 checksum_mismatch at /checksum"), "{text}");
}

#[test]
fn bad_arguments_exit_two_with_a_helpful_message() {
    let output = memport().args(["convert", "examples/chatgpt-small", "--to", "docx", "-o", "/tmp/x"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8(output.stderr).unwrap();
    assert!(text.contains("unknown format `docx`") && text.contains("aimem-ndjson"), "{text}");
    let output = memport().args(["convert", "does/not/exist.zip", "--to", "aimem", "-o", "/tmp/x"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8(output.stderr).unwrap().contains("does/not/exist.zip"));
}

#[test]
fn inspect_names_provider_layout_and_counts() {
    let output = memport().args(["inspect", "--json"]).arg(shared("provider-samples/chatgpt/2023-09_single-file-export")).output().unwrap();
    assert!(output.status.success());
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value[0]["inputs"][0]["provider"], "chatgpt");
    assert_eq!(value[0]["counts"]["conversations_read"], 9);
    assert_eq!(value[0]["counts"]["messages_read"], 136);
}

/// `inspect` counts with the engine alone: it writes no scratch copy of the export, so a
/// large export never fills the temporary folder.
#[test]
fn inspect_writes_nothing_even_to_the_temporary_folder() {
    // A temporary folder that does not exist: any file made there would fail the run.
    let temporary = tempfile::tempdir().unwrap().path().join("gone");
    let output = memport().env("TMPDIR", &temporary).args(["inspect", "examples/chatgpt-small"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("15 conversations"));
}

#[test]
fn rejected_records_make_the_exit_code_one() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("conversations.json"), br#"[{"id":"x","mapping":{}}, {"mapping": 5}]"#).unwrap();
    let out = tempfile::tempdir().unwrap();
    let status =
        memport().arg("convert").arg(folder.path()).args(["--to", "aimem", "-o"]).arg(out.path().join("b.aimem.json")).status().unwrap();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn a_write_error_says_its_cause_once() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("corpus");
    std::fs::write(&file, b"not a folder").unwrap();
    let output = memport().args(["convert", "examples/grok-small", "--to", "parquet", "-q", "-o"]).arg(&file).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8(output.stderr).unwrap();
    assert_eq!(text.matches("name a folder with -o").count(), 1, "{text}");
    assert!(text.contains(&file.display().to_string()), "{text}");
}

/// memport's own formats are inputs: a MIF document it wrote converts to a PAM store, and
/// `inspect` names the format; a lone PAM conversation file is read as one conversation.
#[test]
fn a_memory_format_given_as_input_converts_and_inspect_names_it() {
    let folder = tempfile::tempdir().unwrap();
    let mif = folder.path().join("memories.mif.json");
    let output = memport()
        .args(["convert", "examples/claude-small", "--to", "mif", "-o"])
        .arg(&mif)
        .args(["-q", "--exported-at", "2026-01-01T00:00:00Z"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let output =
        memport().arg("convert").arg(&mif).args(["--to", "pam", "-o"]).arg(folder.path().join("store")).args(["-q"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let output = memport().args(["validate"]).arg(folder.path().join("store")).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
    let output = memport().arg("inspect").arg(&mif).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("provider: mif") && text.contains("MIF v2 document"), "{text}");

    let lone = shared("pam/examples/example-conversation.json");
    let output = memport()
        .arg("convert")
        .arg(&lone)
        .args(["--to", "aimem", "-o"])
        .arg(folder.path().join("x.json"))
        .args(["--report"])
        .arg(folder.path().join("r.json"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(folder.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(report["counts"]["conversations_read"], 1);
    assert!(report["counts"]["messages_written"].as_u64().unwrap() > 0, "{report}");
}

/// `inspect --memories` lists what the user said about themselves, with its evidence, takes
/// nothing from the assistant, and writes nothing.
#[test]
fn inspect_memories_previews_the_users_own_statements_and_writes_nothing() {
    use crate::util::{conversation, text_node, write_export};
    let folder = tempfile::tempdir().unwrap();
    let nodes = vec![
        text_node("u1", Some("root"), "user", "Hi! I live in Leeds and I work as a nurse.", 1_700_000_000.0),
        text_node("a1", Some("u1"), "assistant", "Nice. I live in Oslo.", 1_700_000_001.0),
        text_node("u2", Some("a1"), "user", "Can you tell me where I live? I don't eat meat.", 1_700_000_002.0),
    ];
    let export = write_export(folder.path(), &[conversation("c1", nodes, Some("u2"))]);
    let before: Vec<_> = std::fs::read_dir(folder.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    let output = memport().args(["inspect", "--memories", "--json"]).arg(&export).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let preview: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let statements: Vec<&str> =
        preview["memories"].as_array().unwrap().iter().map(|memory| memory["statement"].as_str().unwrap()).collect();
    assert_eq!(statements, ["Lives in Leeds", "Works as a nurse", "Does not eat meat"]);
    let evidence = &preview["memories"][0]["evidence"][0];
    assert_eq!((evidence["conversation_id"].as_str(), evidence["message_id"].as_str()), (Some("c1"), Some("u1")));
    let after: Vec<_> = std::fs::read_dir(folder.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert_eq!(before, after, "nothing is written");
    let text = memport().args(["inspect", "--memories"]).arg(&export).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("3 memories (0 no longer current) from 1 conversations"));
}
