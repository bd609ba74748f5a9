//! `--to store`: the memory store holds exactly the records the UMP output has, validates,
//! answers recall with the person's current facts, and a rerun loads into the store in place,
//! keeping what was remembered and erased there.

use std::collections::BTreeSet;
use std::path::Path;

use memport::sinks::OutputFormat;
use memport::store::Store;
use memport::store::recall::RecallQuery;
use memport::timefmt::parse_rfc3339;

use crate::util::{convert_all_branches as convert, examples, files_under, forget_hard, holds, ndjson};

fn ids_in_store(path: &Path) -> BTreeSet<String> {
    let store = Store::open(path, false).unwrap();
    let mut ids = BTreeSet::new();
    store
        .for_each_record(|json| {
            let record: serde_json::Value = serde_json::from_str(json).unwrap();
            ids.insert(record["id"].as_str().unwrap().to_owned());
            Ok(())
        })
        .unwrap();
    ids
}

#[test]
fn the_store_holds_every_ump_record_and_validates() {
    let out = tempfile::tempdir().unwrap();
    convert(&examples(), out.path(), &[OutputFormat::Store, OutputFormat::UmpNdjson], 2);
    let store_path = out.path().join("memory.db");
    let expected: BTreeSet<String> =
        ndjson(&out.path().join("memory.ump.ndjson")).iter().map(|record| record["id"].as_str().unwrap().to_owned()).collect();
    assert!(!expected.is_empty());
    assert_eq!(ids_in_store(&store_path), expected, "the store holds the records --to ump-ndjson writes, no more, no fewer");
    let validation = memport::validate::validate_path(&store_path).unwrap();
    assert!(validation.is_valid(), "{:?}", validation.problems);
    assert_eq!((validation.format, validation.records), ("store", expected.len() as u64));
}

#[test]
fn recall_finds_the_current_home_not_the_one_the_user_moved_from() {
    let out = tempfile::tempdir().unwrap();
    let chatgpt = examples().into_iter().find(|path| path.ends_with("chatgpt-small")).unwrap();
    convert(&[chatgpt], out.path(), &[OutputFormat::Store], 2);
    let store = Store::open(&out.path().join("memory.db"), false).unwrap();
    let query = |at: &str| RecallQuery {
        query: "where does the user live".into(),
        valid_at: parse_rfc3339(at).unwrap(),
        limit: 5,
        ..RecallQuery::default()
    };
    let texts = |at: &str| -> Vec<String> {
        store.recall(&query(at)).unwrap().iter().map(|recalled| recalled.record["body"]["text"].as_str().unwrap().to_owned()).collect()
    };
    let now = texts("2026-11-01T00:00:00Z");
    assert_eq!(now.first().map(String::as_str), Some("Lives in York"), "{now:?}");
    assert!(!now.iter().any(|text| text == "Lives in Leeds"), "superseded: {now:?}");
    let before_the_move = texts("2025-06-01T00:00:00Z");
    assert!(before_the_move.iter().any(|text| text == "Lives in Leeds"), "valid before the move: {before_the_move:?}");
}

#[test]
fn a_rerun_loads_into_the_store_keeping_what_was_remembered_there_and_what_memport_forget_erased_away() {
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("memory.db");
    let convert_into = |path: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_memport"))
            .args(["convert", "--to", "store", "-o"])
            .arg(path)
            .arg(crate::util::root().join("examples/chatgpt-small"))
            .env("SOURCE_DATE_EPOCH", "1767225600")
            .output()
            .unwrap()
    };
    assert!(convert_into(&target).status.success());
    let first = ids_in_store(&target);
    let (remembered, erased) = {
        let mut store = Store::open(&target, true).unwrap();
        let remembered = store
            .in_transaction(|store| {
                let partial = serde_json::json!({"kind": "semantic", "body": {"text": "Prefers green tea"}});
                let record = store.complete(&partial, 1_780_000_000_000_000, "agent", "test")?;
                Ok::<_, memport::store::StoreError>(store.remember(record)?.0)
            })
            .unwrap();
        (remembered, first.iter().next().unwrap().clone())
    };
    let forget = |ids: &[&str]| forget_hard(&target, ids);
    let refused = forget(&[erased.as_str(), "urn:ump:nosuchrecord"]);
    assert!(!refused.status.success(), "an unknown id fails the command");
    assert_eq!(ids_in_store(&target).len(), first.len() + 1, "and nothing was erased");
    assert!(forget(&[erased.as_str()]).status.success());
    let again = convert_into(&target);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let second = ids_in_store(&target);
    assert!(second.contains(&remembered), "what was remembered in the store stays");
    assert!(!second.contains(&erased), "what was erased in the store is not loaded again");
    assert_eq!(second.len(), first.len(), "the same export adds nothing new");
    assert!(memport::validate::validate_path(&target).unwrap().is_valid());

    let foreign = out.path().join("other.db");
    std::fs::write(&foreign, b"somebody's file").unwrap();
    let refused = convert_into(&foreign);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("is not an output memport wrote"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert_eq!(std::fs::read(&foreign).unwrap(), b"somebody's file");
}

/// Guards erasure across runs: what `memport forget --hard` erased in the store (a message, the
/// memories quoting it, and one memory on its own) is in no output of a later run over the same
/// export, in any format, and nothing is extracted from the erased message again.
#[test]
fn what_the_store_erased_stays_out_of_every_output_of_a_later_run() {
    let out = tempfile::tempdir().unwrap();
    let chatgpt = examples().into_iter().find(|path| path.ends_with("chatgpt-small")).unwrap();
    let first = convert(std::slice::from_ref(&chatgpt), out.path(), &[OutputFormat::Store, OutputFormat::UmpNdjson], 2);
    let records = ndjson(&out.path().join("memory.ump.ndjson"));
    let with_text = |start: &str| records.iter().find(|record| record["body"]["text"].as_str().unwrap().starts_with(start)).unwrap();
    let message = with_text("I don't eat meat, so keep the recipes vegetarian");
    let memory = with_text("Decided to go with Postgres");
    let (message_id, memory_id) = (message["id"].as_str().unwrap(), memory["id"].as_str().unwrap());
    let store = out.path().join("memory.db");
    let forget = forget_hard(&store, &[message_id, memory_id]);
    let said = String::from_utf8_lossy(&forget.stderr);
    assert!(forget.status.success(), "{said}");
    assert!(said.contains("erased, with 2 memories derived from it"), "the diet and the units memories quote the message: {said}");
    let gone = ["keep the recipes vegetarian", "Does not eat meat", "Always use metric units", "Decided to go with Postgres"];
    let stored = std::fs::read(&store).unwrap();
    for text in gone {
        assert!(!holds(&stored, text), "the store file keeps no copy of {text:?}");
    }

    let formats = [
        OutputFormat::Store,
        OutputFormat::UmpNdjson,
        OutputFormat::Ump,
        OutputFormat::AimemNdjson,
        OutputFormat::Aimem,
        OutputFormat::Pam,
        OutputFormat::Mif,
        OutputFormat::Aime,
        OutputFormat::Parquet,
    ];
    let second = convert(&[chatgpt], out.path(), &formats, 2);
    assert_eq!(second.counts.messages_skipped["erased"], 1, "{:?}", second.counts);
    assert_eq!(second.counts.messages_written, first.counts.messages_written - 1);
    let (before, after) = (first.memories_extracted.unwrap(), second.memories_extracted.unwrap());
    assert_eq!(after.candidates, before.candidates - 2, "nothing is extracted from the erased message");
    assert_eq!(after.dropped_erased, 1, "the erased memory's one candidate: {after:?}");
    assert_eq!(after.written + after.superseded_kept, before.written + before.superseded_kept - 3);
    for file in files_under(out.path()).iter().filter(|file| file.extension().is_none_or(|extension| extension != "parquet")) {
        let bytes = std::fs::read(file).unwrap();
        for text in gone {
            assert!(!holds(&bytes, text), "{} holds {text:?}", file.display());
        }
    }
    let dataset = out.path().join(OutputFormat::Parquet.default_file_name());
    let messages = crate::parquet_dataset::read_table(&dataset, memport::sinks::parquet::schema::Table::Messages);
    let erased_message = message["body"]["structured"]["message_id"].as_str().unwrap();
    assert!(!crate::parquet_dataset::strings(&messages, "message_id").iter().any(|id| id.as_deref() == Some(erased_message)));
    let memories = crate::parquet_dataset::read_table(&dataset, memport::sinks::parquet::schema::Table::Memories);
    let texts = crate::parquet_dataset::strings(&memories, "text");
    assert!(texts.iter().flatten().all(|text| !gone.iter().any(|gone| text.contains(gone))), "{texts:?}");
    assert!(memport::validate::validate_path(&store).unwrap().is_valid());
}

/// Guards `--erasures-from`: a conversion that writes no store leaves out what a store erased,
/// says so, and refuses a file that is not a store.
#[test]
fn erasures_from_a_store_apply_to_a_conversion_that_writes_none() {
    let out = tempfile::tempdir().unwrap();
    let chatgpt = examples().into_iter().find(|path| path.ends_with("chatgpt-small")).unwrap();
    convert(std::slice::from_ref(&chatgpt), out.path(), &[OutputFormat::Store, OutputFormat::UmpNdjson], 2);
    let records = ndjson(&out.path().join("memory.ump.ndjson"));
    let message = records.iter().find(|record| record["body"]["text"].as_str().unwrap().starts_with("I moved to York")).unwrap();
    let store = out.path().join("memory.db");
    let memport = || std::process::Command::new(env!("CARGO_BIN_EXE_memport"));
    let forget = forget_hard(&store, &[message["id"].as_str().unwrap()]);
    assert!(forget.status.success(), "{}", String::from_utf8_lossy(&forget.stderr));
    let pam = out.path().join("pam");
    let converted =
        memport().arg("convert").arg(&chatgpt).args(["--to", "pam", "--erasures-from"]).arg(&store).arg("-o").arg(&pam).output().unwrap();
    let said = String::from_utf8_lossy(&converted.stderr);
    assert!(converted.status.success(), "{said}");
    assert!(said.contains("erased in the memory store are left out of every output"), "{said}");
    for file in files_under(&pam) {
        let bytes = std::fs::read(&file).unwrap();
        for text in ["I moved to York", "Lives in York"] {
            assert!(!holds(&bytes, text), "{} holds {text:?}", file.display());
        }
    }
    let refused = memport()
        .arg("convert")
        .arg(&chatgpt)
        .args(["--to", "pam", "--erasures-from"])
        .arg(out.path().join("memory.ump.ndjson"))
        .arg("-o")
        .arg(out.path().join("pam2"))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("whose erasures this run honours, but cannot be read"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!out.path().join("pam2").exists(), "nothing written");
}
