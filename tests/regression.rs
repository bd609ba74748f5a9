//! Regression tests, named after what they guard.

use memport::pipeline::DedupPolicy;
use memport::sources::BranchPolicy;

use crate::util::{conversation, convert_checked, text_node, write_export};

/// Node keys that are not safe URN characters must still give valid, distinct chunk ids.
#[test]
fn unsafe_node_ids_still_give_valid_distinct_chunk_urns() {
    let nodes =
        vec![text_node("a b:c", Some("root"), "user", "one", 1.0e9), text_node("a.b", Some("a b:c"), "assistant", "two", 1.0e9 + 1.0)];
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conversation("conv/with:odd id", nodes, Some("a.b"))]);
    let (_out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.counts.messages_written, 2);
}

/// A message whose `message` is a string, not an object, rejects only that message.
#[test]
fn non_object_message_rejects_only_that_message() {
    let mut nodes = vec![text_node("a", Some("root"), "user", "kept", 1.0e9)];
    nodes.push(("b".into(), serde_json::json!({"id": "b", "parent": "a", "message": "oops"})));
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conversation("c", nodes, Some("a"))]);
    let (_out, report) = convert_checked(&input, BranchPolicy::All, DedupPolicy::Content);
    assert_eq!((report.counts.messages_written, report.counts.messages_rejected), (1, 1));
}

/// Fields of the wrong type (a string weight, a numeric title) do not reject a conversation.
#[test]
fn wrongly_typed_fields_are_read_as_absent() {
    let mut conv = conversation("c", vec![text_node("a", Some("root"), "user", "kept", 1.0e9)], Some("a"));
    conv["title"] = serde_json::json!(12);
    conv["create_time"] = serde_json::json!("yesterday");
    conv["mapping"]["a"]["message"]["weight"] = serde_json::json!("heavy");
    conv["mapping"]["a"]["message"]["metadata"] = serde_json::json!([1, 2]);
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conv]);
    let (_out, report) = convert_checked(&input, BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.counts.messages_written, 1);
}

/// The same conversation in two inputs with changed text (overlapping monthly exports) must not
/// produce two chunks with one id, even with dedup off.
#[test]
fn overlapping_exports_never_repeat_a_chunk_id() {
    let january = tempfile::tempdir().unwrap();
    let february = tempfile::tempdir().unwrap();
    write_export(january.path(), &[conversation("c", vec![text_node("m", Some("root"), "user", "draft", 1.0e9)], Some("m"))]);
    write_export(february.path(), &[conversation("c", vec![text_node("m", Some("root"), "user", "edited", 1.0e9)], Some("m"))]);
    let out = tempfile::tempdir().unwrap();
    let mut options =
        crate::util::options(&[january.path().to_owned(), february.path().to_owned()], out.path(), &[memport::sinks::OutputFormat::Aimem]);
    options.settings.dedup = DedupPolicy::Off;
    let report = memport::run(&options).unwrap();
    assert_eq!((report.counts.messages_written, report.counts.messages_duplicate), (1, 1));
    assert_eq!(report.warnings.get("id_conflict"), Some(&1));
    assert!(memport::validate::validate_path(&out.path().join("memory.aimem.json")).unwrap().is_valid());
}

/// An unknown content type in a conversation that also needed surrogate repair keeps its raw JSON.
#[test]
fn unknown_type_after_surrogate_repair_keeps_raw_json() {
    let folder = tempfile::tempdir().unwrap();
    let element = r#"{"id":"c","mapping":{"r":{"id":"r","message":null,"parent":null},"a":{"id":"a","parent":"r","message":{"id":"a","author":{"role":"user"},"create_time":1000000000.0,"content":{"content_type":"text","parts":["cut \udc00 emoji"]}}},"b":{"id":"b","parent":"a","message":{"id":"b","author":{"role":"assistant"},"create_time":1000000001.0,"content":{"content_type":"new_type","value":7}}}},"current_node":"b"}"#;
    std::fs::write(folder.path().join("conversations.json"), format!("[{element},]")).unwrap();
    let (out, report) = convert_checked(folder.path(), BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.counts.messages_written, 2);
    let lines = crate::util::ndjson(&out.path().join("memory.aimem.ndjson"));
    let raw: serde_json::Value = serde_json::from_str(lines[2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(raw["value"], 7);
}

/// A run that fails part-way (a corrupt zip entry) leaves no output that looks complete.
#[test]
fn failed_run_leaves_no_complete_looking_output() {
    let folder = tempfile::tempdir().unwrap();
    let conversations: Vec<_> = (0..400)
        .map(|index| {
            conversation(
                &format!("c{index}"),
                vec![text_node("m", Some("root"), "user", &format!("message number {index} {}", "x".repeat(index * 7 % 300)), 1.0e9)],
                Some("m"),
            )
        })
        .collect();
    let zip_path = folder.path().join("export.zip");
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    writer.start_file("conversations.json", zip::write::SimpleFileOptions::default()).unwrap();
    std::io::Write::write_all(&mut writer, &serde_json::to_vec(&conversations).unwrap()).unwrap();
    writer.finish().unwrap();
    let mut bytes = std::fs::read(&zip_path).unwrap();
    let middle = bytes.len() / 2;
    for byte in &mut bytes[middle..middle + 64] {
        *byte ^= 0x5a;
    }
    std::fs::write(&zip_path, bytes).unwrap();
    let out = tempfile::tempdir().unwrap();
    let options =
        crate::util::options(&[zip_path], out.path(), &[memport::sinks::OutputFormat::Aimem, memport::sinks::OutputFormat::AimemNdjson]);
    assert!(memport::run(&options).is_err());
    let leftovers: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("aimem"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// No input makes memport panic: real samples with deterministic random damage (flipped bytes,
/// stray brackets and quotes, cuts) still convert, with counts that balance and outputs that
/// validate.
#[test]
fn damaged_exports_never_panic_and_counts_balance() {
    let samples = [
        std::fs::read(crate::util::shared("provider-samples/chatgpt/2023-09_single-file-export/conversations.subset.json")).unwrap(),
        std::fs::read(crate::util::shared("provider-samples/chatgpt/2026-09_sharded-export/conversations-000.excerpt.json")).unwrap(),
        std::fs::read(crate::util::root().join("examples/chatgpt-small/conversations.json")).unwrap(),
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        // xorshift64*: deterministic, no dependency.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let folder = tempfile::tempdir().unwrap();
    let input = folder.path().join("conversations.json");
    for round in 0..240 {
        let mut damaged = samples[round % samples.len()].clone();
        let edits = 1 + next() % 8;
        for _ in 0..edits {
            let position = (next() % damaged.len() as u64) as usize;
            match next() % 5 {
                0 => damaged[position] ^= 1 << (next() % 8),
                1 => damaged[position] = b"{}[]\",:\\"[(next() % 8) as usize],
                2 => damaged.insert(position, b"\"[{"[(next() % 3) as usize]),
                3 => damaged.truncate(position.max(1)),
                _ => {
                    damaged.remove(position.min(damaged.len() - 1));
                }
            }
            if damaged.is_empty() {
                damaged.push(b'[');
            }
        }
        std::fs::write(&input, &damaged).unwrap();
        let out = tempfile::tempdir().unwrap();
        let options = crate::util::options(std::slice::from_ref(&input), out.path(), &[memport::sinks::OutputFormat::Aimem]);
        match memport::run(&options) {
            Ok(report) => {
                assert!(report.counts.balances(), "round {round}: {:?}", report.counts);
                let validation = memport::validate::validate_path(&out.path().join("memory.aimem.json")).unwrap();
                assert!(validation.is_valid(), "round {round}: {:?}", validation.problems);
            }
            // Damage at the very start can make it not an export at all: a clean config error.
            Err(error) => assert!(error.to_string().contains("export found"), "round {round}: {error}"),
        }
    }
}

/// A value nested 100,000 levels deep in a conversation (in a message's metadata, in its parts,
/// or as a whole element) used to overflow a decode thread's stack and abort the run. Now that
/// conversation alone is rejected, with the depth, and the others are written.
#[test]
fn a_conversation_nested_too_deep_is_rejected_alone_and_the_run_goes_on() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let kept = conversation("kept", vec![text_node("a", Some("root"), "user", "kept", 1.0e9)], Some("a"));
    let in_metadata = conversation("meta", vec![text_node("b", Some("root"), "user", "lost", 1.0e9)], Some("b"));
    let mut in_parts = conversation("parts", vec![text_node("c", Some("root"), "user", "lost", 1.0e9)], Some("c"));
    in_parts["mapping"]["c"]["message"]["content"]["parts"] = serde_json::json!(["@PARTS@"]);
    let mut in_metadata = in_metadata;
    in_metadata["mapping"]["b"]["message"]["metadata"]["x"] = serde_json::json!("@META@");
    let text = serde_json::to_string(&vec![in_metadata, kept.clone(), in_parts]).unwrap();
    let text = text.replace("\"@META@\"", &deep).replace("\"@PARTS@\"", &deep);
    let text = format!("[{deep},{}", &text[1..]);
    let folder = tempfile::tempdir().unwrap();
    let input = folder.path().join("conversations.json");
    std::fs::write(&input, text).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut options = crate::util::options(std::slice::from_ref(&input), out.path(), &[memport::sinks::OutputFormat::Aimem]);
    options.rejects = Some(out.path().join("rejects.ndjson"));
    let report = memport::run(&options).unwrap();
    assert!(report.counts.balances(), "{:?}", report.counts);
    assert_eq!((report.counts.conversations_rejected, report.counts.messages_written), (3, 1));
    let rejects = crate::util::ndjson(&out.path().join("rejects.ndjson"));
    let reasons: Vec<&str> = rejects.iter().map(|reject| reject["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons.len(), 3);
    assert!(reasons.iter().all(|reason| reason.contains("more than 512 levels deep")), "{reasons:?}");
}

/// `cat a.json b.json` makes one file holding two arrays; the second used to be dropped
/// without a word. Now it is reported as an input problem with where it starts.
#[test]
fn a_second_array_appended_to_an_export_is_reported_not_dropped() {
    let folder = tempfile::tempdir().unwrap();
    let one = serde_json::to_string(&[conversation("c1", vec![text_node("a", Some("root"), "user", "one", 1.0e9)], Some("a"))]).unwrap();
    let two = serde_json::to_string(&[conversation("c2", vec![text_node("b", Some("root"), "user", "two", 1.0e9)], Some("b"))]).unwrap();
    let input = folder.path().join("conversations.json");
    std::fs::write(&input, format!("{one}\n{two}")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = crate::util::options(std::slice::from_ref(&input), out.path(), &[memport::sinks::OutputFormat::Aimem]);
    let report = memport::run(&options).unwrap();
    assert_eq!(report.counts.messages_written, 1);
    assert_eq!(report.warnings.get("input_ended_early"), Some(&1));
    assert!(
        report.notes.iter().any(|note| note.contains(&format!("byte {}: more data follows the array", one.len() + 1))),
        "{:?}",
        report.notes
    );
}

/// An update time before the creation time (kept to the second beside a creation time kept to
/// the microsecond) is raised to the creation time, as PAM requires, and the report counts it.
#[test]
fn an_update_time_before_the_creation_time_is_raised_and_reported() {
    let mut conv = conversation("c", vec![text_node("a", Some("root"), "user", "kept", 1.0e9)], Some("a"));
    conv["create_time"] = serde_json::json!(1_700_000_000.5);
    conv["update_time"] = serde_json::json!(1_700_000_000.0);
    let folder = tempfile::tempdir().unwrap();
    let input = write_export(folder.path(), &[conv]);
    let out = tempfile::tempdir().unwrap();
    let report = crate::util::convert_all_branches(&[input], out.path(), &[memport::sinks::OutputFormat::Pam], 1);
    assert_eq!(report.warnings.get("update_time_before_create_time"), Some(&1));
    let store: serde_json::Value = serde_json::from_slice(&std::fs::read(out.path().join("pam/memory-store.json")).unwrap()).unwrap();
    let temporal = &store["conversations_index"][0]["temporal"];
    assert_eq!(temporal["updated_at"], temporal["created_at"], "{temporal}");
}

/// An AIMEM bundle whose record holds a string that is not UTF-8 (found by the `validate` fuzz
/// target, `fuzz/artifacts/validate/crash-5f497ced…`): the bundle is read twice, and the first
/// read must refuse what a parsed value refuses, so it is a `malformed_json` problem of the
/// input, never an error about reading the file. So is a record the second read refuses.
#[test]
fn an_aimem_bundle_with_a_string_that_is_not_utf8_is_a_problem_not_a_read_error() {
    let folder = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("record.json", &b"{\"chunks\":[\"\x9c\"]}"[..]),
        ("key.json", &b"{\"chunks\":[{\"\x9c\":1}]}"[..]),
        ("number.json", &b"{\"edges\":[1e400]}"[..]),
        // serde_json's raw-value token as the first key of a record: the first read takes it
        // as any key, the second (as a parsed value) refuses it.
        ("raw_value.json", &b"{\"chunks\":[{\"$serde_json::private::RawValue\":1}]}"[..]),
    ] {
        let path = folder.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let validation = memport::validate::aimem::validate_file(&path).unwrap_or_else(|error| panic!("{name}: {error}"));
        let first = validation.problems.iter().next().expect("a problem");
        assert_eq!((first.code, first.location.as_str()), ("malformed_json", "/"), "{name}");
        assert_eq!(validation.records, 0, "{name}");
    }
}
