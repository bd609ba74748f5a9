//! `memport merge`: a sync's PAM deltas applied in order to its first full store give the store
//! a full conversion of the latest month gives, but for what a store never loses (retracted
//! conversations, and messages no longer on the active branch); a delta out of order is refused
//! with nothing written; the merged store validates and is the same bytes every time.
//!
//! Every sync and conversion here runs with `--extract off --dedup off`: extraction across runs
//! is not merged (docs/sync.md, "Not yet"), and a delta's dedup sees only the conversations that
//! changed, so either would make a full conversion differ from the merge for reasons that are
//! not the merge's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use memport::timefmt::{format_rfc3339, parse_rfc3339};
use serde_json::Value;

use crate::sync::files;
use crate::util::root;

/// A day in memport's microseconds.
const DAY: i64 = 86_400_000_000;

/// Monthly exports of one synthetic account, written by `benches/gen_months.py` (as the sync
/// tests call it) into a temp folder, with its `changes.json`.
struct Months {
    /// The generator's provider name, also memport's for the providers used here.
    provider: &'static str,
    folder: tempfile::TempDir,
    changes: Value,
}

impl Months {
    /// Generates `months` months of `conversations` conversations of `provider`.
    fn generate(provider: &'static str, conversations: usize, months: usize) -> Months {
        let folder = tempfile::tempdir().expect("temp dir");
        let output = Command::new("python3")
            .arg(root().join("benches").join("gen_months.py"))
            .arg(provider)
            .arg("--out")
            .arg(folder.path())
            .args(["--conversations", &conversations.to_string(), "--months", &months.to_string(), "--quiet"])
            .output()
            .expect("python3 runs (the merge tests generate their exports with benches/gen_months.py)");
        assert!(output.status.success(), "gen_months.py {provider} writes {months} months: {}", String::from_utf8_lossy(&output.stderr));
        let changes = json(&folder.path().join("changes.json"));
        Months { provider, folder, changes }
    }

    /// The export folder of month `month`.
    fn export(&self, month: usize) -> PathBuf {
        self.folder.path().join(format!("month-{month}"))
    }

    /// The export time of month `month`, as changes.json writes it (for `--exported-at`).
    fn exported_at(&self, month: usize) -> String {
        self.changes["exports"][month - 1]["exported_at"].as_str().expect("changes.json gives each month's exported_at").to_owned()
    }

    /// The export time of month `month` as memport writes it in its outputs.
    fn exported_at_written(&self, month: usize) -> String {
        format_rfc3339(parse_rfc3339(&self.exported_at(month)).expect("exported_at is RFC 3339"))
    }

    /// What changed in month `month` (2 or later).
    fn change(&self, month: usize) -> &Value {
        &self.changes["months"][month - 2]
    }

    /// The PAM ids of the conversations of one kind of change in month `month`: chatgpt and
    /// claude ids are plain, so the PAM id is `<provider>-<id>`.
    fn pam_ids(&self, month: usize, kind: &str) -> BTreeSet<String> {
        let ids: Vec<String> = match &self.change(month)[kind] {
            Value::Array(ids) => ids.iter().map(|id| id.as_str().expect("ids are strings").to_owned()).collect(),
            Value::Object(ids) => ids.keys().cloned().collect(),
            other => panic!("changes.json's month {month} has `{kind}` as a list or an object, not {other}"),
        };
        ids.iter().map(|id| format!("{}-{id}", self.provider)).collect()
    }

    /// For each conversation edited or regenerated in month `month`, by PAM id, the message
    /// changes.json says was edited or replaced.
    fn replaced_messages(&self, month: usize) -> BTreeMap<String, String> {
        let details = self.change(month)["details"].as_object().expect("changes.json has details");
        let mut replaced = BTreeMap::new();
        for kind in ["edited", "regenerated"] {
            for id in self.change(month)[kind].as_array().expect("a list of ids") {
                let id = id.as_str().expect("ids are strings");
                let message = details[id]["replaces"].as_str().expect("an edit or regeneration names what it replaces");
                replaced.insert(format!("{}-{id}", self.provider), message.to_owned());
            }
        }
        replaced
    }
}

/// `memport` (the binary under test).
fn memport() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memport"))
}

/// Runs `command`, which must succeed.
fn succeed(command: &mut Command) -> Output {
    let output = command.output().expect("memport runs");
    assert!(output.status.success(), "memport succeeds: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Runs `command`, which must fail with exit code 2; returns its stderr.
fn refused(command: &mut Command) -> String {
    let output = command.output().expect("memport runs");
    assert_eq!(output.status.code(), Some(2), "memport refuses: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A JSON file.
fn json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|error| panic!("{} is readable: {error}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|error| panic!("{} is JSON: {error}", path.display()))
}

/// The names in `folder`, sorted (none when it does not exist).
fn names(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(folder) {
        Ok(entries) => entries.map(|entry| entry.expect("readable entry").file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// One user's sync state and output folder; every sync writes PAM only.
struct Account {
    folder: tempfile::TempDir,
}

impl Account {
    fn new() -> Account {
        Account { folder: tempfile::tempdir().expect("temp dir") }
    }

    /// Syncs `export` exported at `exported_at`; returns the run's PAM store folder.
    fn sync(&self, export: &Path, exported_at: &str) -> PathBuf {
        let (state, out) = (self.folder.path().join("state.db"), self.folder.path().join("out"));
        let runs = out.join("runs");
        let before = names(&runs);
        succeed(
            memport()
                .arg("sync")
                .arg(export)
                .arg("--state")
                .arg(state)
                .args(["--to", "pam", "--threads", "2", "-q", "--extract", "off", "--dedup", "off", "--exported-at", exported_at])
                .arg("-o")
                .arg(&out),
        );
        let added: Vec<String> = names(&runs).into_iter().filter(|name| !name.starts_with('.') && !before.contains(name)).collect();
        assert_eq!(added.len(), 1, "the sync of {} adds one run folder: {added:?}", export.display());
        runs.join(&added[0]).join("pam")
    }
}

/// `memport convert EXPORT --to pam -o OUT`, exported at `exported_at`, as the syncs run.
fn convert(export: &Path, exported_at: &str, out: &Path) {
    succeed(
        memport()
            .arg("convert")
            .arg(export)
            .args(["--to", "pam", "--threads", "2", "-q", "--extract", "off", "--dedup", "off", "--exported-at", exported_at])
            .arg("-o")
            .arg(out),
    );
}

/// `memport merge BASE DELTA -o OUT --json`, which must succeed; its report.
fn merge(base: &Path, delta: &Path, out: &Path) -> Value {
    let output = succeed(memport().arg("merge").arg(base).arg(delta).arg("-o").arg(out).arg("--json"));
    serde_json::from_slice(&output.stdout).expect("merge --json prints its report")
}

/// `memport merge BASE DELTA -o OUT`, which must be refused; its stderr.
fn refused_merge(base: &Path, delta: &Path, out: &Path) -> String {
    refused(memport().arg("merge").arg(base).arg(delta).arg("-o").arg(out))
}

/// Asserts `memport validate STORE` finds the store valid.
fn assert_validates(store: &Path) {
    let output = memport().arg("validate").arg(store).output().expect("memport runs");
    assert!(output.status.success(), "{} validates: {}", store.display(), String::from_utf8_lossy(&output.stdout));
}

/// A store's `memory-store.json`.
fn store(folder: &Path) -> Value {
    json(&folder.join("memory-store.json"))
}

/// The objects of one array of a store, by id, in order.
fn by_id(items: &Value) -> Vec<(String, Value)> {
    items.as_array().expect("an array").iter().map(|item| (item["id"].as_str().expect("a string id").to_owned(), item.clone())).collect()
}

/// The messages of the conversation file an index entry names.
fn messages(folder: &Path, entry: &Value) -> Vec<Value> {
    let reference = entry["storage"]["ref"].as_str().unwrap_or_else(|| panic!("{entry} names its file"));
    json(&folder.join(reference))["messages"].as_array().expect("a conversation file has messages").clone()
}

/// The ids of messages.
fn message_ids(messages: &[Value]) -> Vec<String> {
    messages.iter().map(|message| message["id"].as_str().expect("a message id").to_owned()).collect()
}

/// A message without its links: a delta names only the parents it holds, so a message whose
/// parent an earlier run wrote has `parent_id: null` in it, and the earlier message does not list
/// it among its `children_ids`.
fn without_links(message: &Value) -> Value {
    let mut message = message.clone();
    if let Some(members) = message.as_object_mut() {
        members.remove("parent_id");
        members.remove("children_ids");
    }
    message
}

/// `value` without the member `key`.
fn without(value: &Value, key: &str) -> Value {
    let mut value = value.clone();
    if let Some(members) = value.as_object_mut() {
        members.remove(key);
    }
    value
}

/// An index entry with its `derived_memories` sorted: a merge writes the union of both stores'
/// lists sorted, a conversion in the order it wrote the memories.
fn sorted_derived(entry: &Value) -> Value {
    let mut entry = entry.clone();
    if let Some(Value::Array(ids)) = entry.get_mut("derived_memories") {
        ids.sort_by(|left, right| left.as_str().cmp(&right.as_str()));
    }
    entry
}

/// The `conversations_index` lines of a `memory-store.json` as written, by conversation id.
fn index_lines(folder: &Path) -> BTreeMap<String, Vec<u8>> {
    let bytes = std::fs::read(folder.join("memory-store.json")).expect("readable store");
    let mut lines = BTreeMap::new();
    for line in bytes.split(|&byte| byte == b'\n').filter(|line| line.starts_with(b"{\"id\":")) {
        // The last entry ends the array: `}],`.
        let line = line.strip_suffix(b"],").or_else(|| line.strip_suffix(b",")).unwrap_or(line);
        if let Ok(entry) = serde_json::from_slice::<Value>(line) {
            lines.insert(entry["id"].as_str().expect("an index entry has an id").to_owned(), line.to_vec());
        }
    }
    lines
}

/// The bytes of a `memory-store.json` from its relations on: relations, memories, integrity.
fn relations_to_end(folder: &Path) -> Vec<u8> {
    let bytes = std::fs::read(folder.join("memory-store.json")).expect("readable store");
    let start = bytes.windows(13).position(|window| window == b"\n\"relations\":").expect("a relations member on a line of its own");
    bytes[start..].to_vec()
}

/// Syncs two months of `provider`, merges the second month's delta into the first month's full
/// store, and compares the result with a full conversion of month 2. They hold the same
/// memories, index entries and messages, except exactly:
///
/// - the conversations deleted in month 2 stay, tagged `retracted`, with month 1's entry
///   (storage, message count, title) but the retraction time as `updated_at`, and month 1's file
///   byte for byte (and the memories said in them, if any, stay);
/// - the messages of the conversations edited or regenerated in month 2 that month 2's active
///   branch no longer holds stay, as month 1 wrote them: the merged file's messages are the
///   full conversion's plus exactly month 1's messages the full conversion does not hold (the
///   edited or replaced message among them), and its `message_count` counts them;
/// - a message added to a conversation month 1 had (appended, edited, regenerated) carries the
///   delta's links (see [`without_links`]); every other message is the full conversion's, links
///   and all;
/// - a memory without a time of its own (Claude's account and project memories) has the export
///   time as `created_at`: month 1's in the merged store, month 2's in the full conversion;
/// - an entry the delta updated lists its `derived_memories` sorted, a conversion in the order
///   it wrote the memories (see [`sorted_derived`]).
///
/// Where the contents match, the bytes do: each index line, and from the relations on.
fn assert_merged_delta_equals_a_full_conversion(provider: &'static str) {
    let months = Months::generate(provider, 20, 2);
    let account = Account::new();
    let base = account.sync(&months.export(1), &months.exported_at(1));
    let delta = account.sync(&months.export(2), &months.exported_at(2));
    let work = tempfile::tempdir().expect("temp dir");
    let (merged, full) = (work.path().join("merged"), work.path().join("full"));
    let report = merge(&base, &delta, &merged);
    convert(&months.export(2), &months.exported_at(2), &full);
    assert_validates(&merged);

    let (base_store, delta_store, merged_store, full_store) = (store(&base), store(&delta), store(&merged), store(&full));
    assert_eq!(delta_store["export_type"], "incremental", "{provider}: the second sync writes a delta");
    assert_eq!(merged_store["export_type"], "full", "{provider}: a merged store is a full export");
    assert_eq!(merged_store["export_id"], delta_store["export_id"], "{provider}: the merged store is named by the delta's export id");
    assert_eq!(report["merged_export_id"], delta_store["export_id"], "{provider}: the report names the merged export");
    assert_eq!(report["base_export_id"], base_store["export_id"], "{provider}: the report names the base export");
    assert_eq!(merged_store["export_date"], delta_store["export_date"], "{provider}: the merged store has the delta's export date");
    assert!(
        merged_store.get("base_export_id").is_none() && merged_store.get("since").is_none(),
        "{provider}: a merged store names no base and no since"
    );
    let base_head = String::from_utf8_lossy(&std::fs::read(base.join("memory-store.json")).expect("readable"))
        .lines()
        .next()
        .expect("a first line")
        .replace(base_store["export_id"].as_str().expect("an export id"), delta_store["export_id"].as_str().expect("an export id"))
        .replace(base_store["export_date"].as_str().expect("a date"), delta_store["export_date"].as_str().expect("a date"));
    let merged_text = String::from_utf8_lossy(&std::fs::read(merged.join("memory-store.json")).expect("readable")).into_owned();
    assert_eq!(
        merged_text.lines().next(),
        Some(base_head.as_str()),
        "{provider}: the merged head is a full sync's, with the delta's id and date"
    );

    let deleted = months.pam_ids(2, "deleted");
    let new = months.pam_ids(2, "new");
    let appended = months.pam_ids(2, "appended");
    let replaced = months.replaced_messages(2);
    assert!(!deleted.is_empty() && !new.is_empty() && !replaced.is_empty(), "{provider}: month 2 deletes, adds, edits and regenerates");

    // Memories.
    let merged_memories: BTreeMap<String, Value> = by_id(&merged_store["memories"]).into_iter().collect();
    let full_memories: BTreeMap<String, Value> = by_id(&full_store["memories"]).into_iter().collect();
    for id in full_memories.keys() {
        assert!(merged_memories.contains_key(id), "{provider}: the merged store holds the full conversion's memory {id}");
    }
    for (id, memory) in &merged_memories {
        let Some(expected) = full_memories.get(id) else {
            let conversation = memory["provenance"]["conversation_ref"].as_str().unwrap_or_default();
            assert!(deleted.contains(conversation), "{provider}: memory {id} is in the full conversion, or said in a deleted conversation");
            continue;
        };
        if memory != expected {
            assert_eq!(without(memory, "temporal"), without(expected, "temporal"), "{provider}: memory {id} is the full conversion's");
            assert_eq!(
                (&memory["temporal"]["created_at"], &expected["temporal"]["created_at"]),
                (&Value::from(months.exported_at_written(1)), &Value::from(months.exported_at_written(2))),
                "{provider}: memory {id} differs only by the export time standing in for its own"
            );
        }
    }
    assert_eq!(merged_store["integrity"]["total_memories"], merged_memories.len(), "{provider}: total_memories counts the merged memories");
    assert_eq!(report["memories"]["total"], merged_memories.len(), "{provider}: the report counts the merged memories");
    if merged_memories == full_memories {
        assert!(
            relations_to_end(&merged) == relations_to_end(&full),
            "{provider}: the same memories are the same bytes, integrity included"
        );
    }

    // The index, in order.
    let base_index: BTreeMap<String, Value> = by_id(&base_store["conversations_index"]).into_iter().collect();
    let merged_index = by_id(&merged_store["conversations_index"]);
    let full_index = by_id(&full_store["conversations_index"]);
    let live: Vec<&String> = merged_index.iter().map(|(id, _)| id).filter(|id| !deleted.contains(*id)).collect();
    let expected: Vec<&String> = full_index.iter().map(|(id, _)| id).collect();
    assert_eq!(
        live, expected,
        "{provider}: but for the deleted conversations, the index lists the full conversion's conversations in its order"
    );
    assert_eq!(report["conversations"]["retracted"], deleted.len(), "{provider}: the report counts the retractions");
    assert_eq!(report["conversations"]["inserted"], new.len(), "{provider}: the report counts the new conversations");
    let (merged_lines, full_lines) = (index_lines(&merged), index_lines(&full));
    let full_by_id: BTreeMap<&String, &Value> = full_index.iter().map(|pair| (&pair.0, &pair.1)).collect();
    for (id, entry) in &merged_index {
        if deleted.contains(id) {
            let before = &base_index[id];
            assert!(
                entry["tags"].as_array().is_some_and(|tags| tags.contains(&Value::from("retracted"))),
                "{provider}: {id} is tagged retracted"
            );
            for member in ["storage", "message_count", "title", "platform"] {
                assert_eq!(entry[member], before[member], "{provider}: the retracted {id} keeps its {member}");
            }
            assert_eq!(entry["temporal"]["created_at"], before["temporal"]["created_at"], "{provider}: the retracted {id} keeps its start");
            assert_eq!(
                entry["temporal"]["updated_at"],
                months.exported_at_written(2).as_str(),
                "{provider}: the retracted {id} was updated when it was retracted"
            );
            let reference = before["storage"]["ref"].as_str().expect("a file");
            assert!(
                std::fs::read(merged.join(reference)).expect("the file stays") == std::fs::read(base.join(reference)).expect("readable"),
                "{provider}: the retracted {id} keeps its file byte for byte"
            );
            continue;
        }
        let expected = full_by_id[id];
        if replaced.contains_key(id) {
            assert_eq!(
                without(&sorted_derived(entry), "message_count"),
                without(&sorted_derived(expected), "message_count"),
                "{provider}: {id}'s entry is the full conversion's"
            );
            assert_eq!(
                entry["message_count"],
                messages(&merged, entry).len(),
                "{provider}: {id}'s message_count counts its merged messages"
            );
        } else {
            assert_eq!(sorted_derived(entry), sorted_derived(expected), "{provider}: {id}'s entry is the full conversion's");
            if entry == expected {
                assert!(merged_lines[id] == full_lines[id], "{provider}: {id}'s index line is the full conversion's, byte for byte");
            }
        }
    }

    // The conversation files.
    for (id, entry) in &full_index {
        let (merged_entry, full_messages) =
            (&merged_index.iter().find(|(merged_id, _)| merged_id == id).expect("listed").1, messages(&full, entry));
        let merged_messages = messages(&merged, merged_entry);
        let full_ids: BTreeSet<String> = message_ids(&full_messages).into_iter().collect();
        let kept: Vec<Value> = merged_messages
            .iter()
            .filter(|message| full_ids.contains(message["id"].as_str().unwrap_or_default()))
            .map(without_links)
            .collect();
        let expected: Vec<Value> = full_messages.iter().map(without_links).collect();
        assert_eq!(kept, expected, "{provider}: {id} holds the full conversion's messages, in its order");
        let stale: Vec<&Value> =
            merged_messages.iter().filter(|message| !full_ids.contains(message["id"].as_str().unwrap_or_default())).collect();
        match replaced.get(id) {
            Some(replaced_message) => {
                let base_messages = messages(&base, &base_index[id]);
                let gone: Vec<&Value> =
                    base_messages.iter().filter(|message| !full_ids.contains(message["id"].as_str().unwrap_or_default())).collect();
                assert_eq!(stale, gone, "{provider}: {id} keeps exactly month 1's messages month 2's active branch no longer holds");
                assert!(
                    stale.iter().any(|message| message["id"] == replaced_message.as_str()),
                    "{provider}: {id} keeps the message month 2 edited or replaced, {replaced_message}"
                );
            }
            None => {
                assert!(stale.is_empty(), "{provider}: {id} holds no message the full conversion does not: {stale:?}");
                if !appended.contains(id) {
                    assert_eq!(merged_messages, full_messages, "{provider}: {id}'s messages are the full conversion's, links and all");
                }
            }
        }
        if new.contains(id) {
            let reference = entry["storage"]["ref"].as_str().expect("a file");
            assert!(
                std::fs::read(merged.join(reference)).expect("readable") == std::fs::read(full.join(reference)).expect("readable"),
                "{provider}: the new conversation {id} is the full conversion's file, byte for byte"
            );
        }
    }

    // Read as input, the merged store's deleted conversations are retractions, not live ones,
    // though their files are kept.
    let records = work.path().join("merged.ump.ndjson");
    let report_file = work.path().join("merged-report.json");
    succeed(
        memport()
            .arg("convert")
            .arg(&merged)
            .args(["--to", "ump-ndjson", "-q", "--extract", "off", "--exported-at", &months.exported_at(2), "--report"])
            .arg(&report_file)
            .arg("-o")
            .arg(&records),
    );
    assert_eq!(json(&report_file)["counts"]["retractions_carried"], deleted.len(), "{provider}: every deleted conversation is carried");
    let pam_id = |conversation: &Value| {
        format!(
            "{}-{}",
            conversation["provider"].as_str().unwrap_or_default(),
            conversation["conversation_id"].as_str().unwrap_or_default()
        )
    };
    let lines: Vec<Value> = std::fs::read_to_string(&records)
        .expect("readable")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a record a line"))
        .collect();
    let tombstoned: BTreeSet<String> = lines
        .iter()
        .map(|line| &line["body"]["structured"]["retracted_conversation"])
        .filter(|listed| listed.is_object())
        .map(pam_id)
        .collect();
    assert_eq!(tombstoned, deleted.iter().cloned().collect::<BTreeSet<String>>(), "{provider}: a tombstone for each deleted conversation");
    for line in lines.iter().filter(|line| line["body"]["structured"]["message_id"].is_string()) {
        let structured = &line["body"]["structured"];
        let conversation = serde_json::json!({"provider": structured["source_kind"], "conversation_id": structured["conversation_id"]});
        assert!(!deleted.contains(&pam_id(&conversation)), "{provider}: no turn of a deleted conversation is written: {line}");
    }
}

#[test]
fn a_chatgpt_delta_merged_into_the_first_store_equals_a_full_conversion_but_for_what_a_store_keeps() {
    assert_merged_delta_equals_a_full_conversion("chatgpt");
}

#[test]
fn a_claude_delta_merged_into_the_first_store_equals_a_full_conversion_but_for_what_a_store_keeps() {
    assert_merged_delta_equals_a_full_conversion("claude");
}

/// Guards the order of deltas: each applies to the result of merging the one before, a delta
/// applied to another store is refused naming both export ids with nothing written (and an
/// earlier merge's output left as it was), a full store is not a delta, and OUT is never BASE.
#[test]
fn deltas_apply_in_order_and_a_delta_out_of_order_is_refused_with_nothing_written() {
    let months = Months::generate("chatgpt", 20, 3);
    let account = Account::new();
    let first = account.sync(&months.export(1), &months.exported_at(1));
    let second = account.sync(&months.export(2), &months.exported_at(2));
    let third = account.sync(&months.export(3), &months.exported_at(3));
    let export_id = |folder: &Path| store(folder)["export_id"].as_str().expect("an export id").to_owned();
    let work = tempfile::tempdir().expect("temp dir");

    let skipping = work.path().join("skipping");
    let error = refused_merge(&first, &third, &skipping);
    assert!(error.contains(&export_id(&second)), "the refusal names the export the delta applies to: {error}");
    assert!(error.contains(&export_id(&first)), "the refusal names BASE's export: {error}");
    assert!(error.contains("in order"), "the refusal says deltas go in order: {error}");
    assert!(!skipping.exists(), "a refused merge writes nothing");

    let (after_second, after_third) = (work.path().join("after-2"), work.path().join("after-3"));
    merge(&first, &second, &after_second);
    let report = merge(&after_second, &third, &after_third);
    assert_validates(&after_second);
    assert_validates(&after_third);
    assert_eq!(export_id(&after_third), export_id(&third), "the merged store is named by the last delta");
    assert_eq!(report["base_export_id"], export_id(&second), "the third delta applies to the store the second merge wrote");

    // Two deltas merged in order hold what a full conversion of month 3 holds, and every
    // conversation deleted on the way, tagged.
    let full = work.path().join("full-3");
    convert(&months.export(3), &months.exported_at(3), &full);
    let deleted: BTreeSet<String> = months.pam_ids(2, "deleted").into_iter().chain(months.pam_ids(3, "deleted")).collect();
    let merged_index = by_id(&store(&after_third)["conversations_index"]);
    let full_index = by_id(&store(&full)["conversations_index"]);
    let live: Vec<&String> = merged_index.iter().map(|(id, _)| id).filter(|id| !deleted.contains(*id)).collect();
    assert_eq!(live, full_index.iter().map(|(id, _)| id).collect::<Vec<_>>(), "the live conversations are month 3's, in its order");
    for id in &deleted {
        let (_, entry) = merged_index.iter().find(|(merged_id, _)| merged_id == id).unwrap_or_else(|| panic!("the deleted {id} stays"));
        assert!(entry["tags"].as_array().is_some_and(|tags| tags.contains(&Value::from("retracted"))), "{id} is tagged retracted: {entry}");
    }
    for (id, entry) in &full_index {
        let (_, merged_entry) = merged_index.iter().find(|(merged_id, _)| merged_id == id).expect("listed");
        let merged_ids: BTreeSet<String> = message_ids(&messages(&after_third, merged_entry)).into_iter().collect();
        for message in message_ids(&messages(&full, entry)) {
            assert!(merged_ids.contains(&message), "{id} holds month 3's message {message}");
        }
    }

    // An earlier merge's output given as OUT is left as it was when the merge is refused.
    let before = files(&after_second);
    let error = refused_merge(&after_third, &second, &after_second);
    assert!(error.contains("in order"), "the second delta again is out of order: {error}");
    assert!(files(&after_second) == before, "a refused merge leaves its OUT byte for byte as it was");

    let error = refused_merge(&first, &first, &work.path().join("full-as-delta"));
    assert!(error.contains("not an incremental export"), "a full store is no delta: {error}");
    assert!(!work.path().join("full-as-delta").exists(), "a refused merge writes nothing");
    let error = refused_merge(&after_second, &third, &after_second);
    assert!(error.contains("BASE itself"), "OUT may not be BASE: {error}");
    assert!(files(&after_second) == before, "nor is BASE touched");
}

/// Guards determinism: the merged store validates, and merging the same stores again (into a
/// new folder, or over the first merge's output) writes the same bytes, manifest included.
#[test]
fn a_merged_store_validates_and_merging_again_writes_the_same_bytes() {
    let months = Months::generate("claude", 20, 2);
    let account = Account::new();
    let base = account.sync(&months.export(1), &months.exported_at(1));
    let delta = account.sync(&months.export(2), &months.exported_at(2));
    let work = tempfile::tempdir().expect("temp dir");
    let (one, two) = (work.path().join("one"), work.path().join("two"));
    merge(&base, &delta, &one);
    assert_validates(&one);
    merge(&base, &delta, &two);
    let written = files(&one);
    assert!(written.contains_key("memory-store.json") && written.contains_key(".memport-output.json"), "{:?}", written.keys());
    assert_eq!(written.keys().collect::<Vec<_>>(), files(&two).keys().collect::<Vec<_>>(), "two merges write the same files");
    assert!(written == files(&two), "two merges write the same bytes");
    merge(&base, &delta, &one);
    assert!(files(&one) == written, "merging again over the first merge's output writes the same bytes");
}

/// Guards retractions across merges: a conversation a delta retracts keeps its file and is
/// tagged; when a later export has it again (the user restored it: here, month 1's export synced
/// again after month 2's) the next delta writes it whole, and the merge drops the tag and holds
/// its messages as month 1 wrote them, while month 2's new conversations, now gone, are
/// retracted in turn and keep their files.
#[test]
fn a_retracted_conversation_keeps_its_file_and_loses_the_tag_when_it_comes_back() {
    let months = Months::generate("chatgpt", 20, 2);
    let account = Account::new();
    let first = account.sync(&months.export(1), &months.exported_at(1));
    let second = account.sync(&months.export(2), &months.exported_at(2));
    let later = format_rfc3339(parse_rfc3339(&months.exported_at(2)).expect("RFC 3339") + 30 * DAY);
    let restored = account.sync(&months.export(1), &later);
    let work = tempfile::tempdir().expect("temp dir");
    let (after_second, after_restore) = (work.path().join("after-2"), work.path().join("after-restore"));
    merge(&first, &second, &after_second);
    let report = merge(&after_second, &restored, &after_restore);
    assert_validates(&after_restore);
    let tagged = |entry: &Value| entry["tags"].as_array().is_some_and(|tags| tags.contains(&Value::from("retracted")));

    let first_index: BTreeMap<String, Value> = by_id(&store(&first)["conversations_index"]).into_iter().collect();
    let second_index: BTreeMap<String, Value> = by_id(&store(&after_second)["conversations_index"]).into_iter().collect();
    let restored_index: BTreeMap<String, Value> = by_id(&store(&after_restore)["conversations_index"]).into_iter().collect();
    for id in months.pam_ids(2, "deleted") {
        assert!(tagged(&second_index[&id]), "{id}, deleted in month 2, is tagged retracted after the second merge");
        let entry = &restored_index[&id];
        assert!(!tagged(entry), "{id}, back in the restored export, is no longer tagged: {entry}");
        assert_eq!(
            messages(&after_restore, entry),
            messages(&first, &first_index[&id]),
            "{id}, written whole again, holds month 1's messages"
        );
    }
    let new = months.pam_ids(2, "new");
    for id in &new {
        let entry = &restored_index[id];
        assert!(tagged(entry), "{id}, new in month 2 and not in the restored export, is tagged retracted: {entry}");
        let reference = entry["storage"]["ref"].as_str().expect("it keeps its file");
        assert!(
            std::fs::read(after_restore.join(reference)).expect("readable")
                == std::fs::read(after_second.join(reference)).expect("readable"),
            "{id} keeps its file byte for byte"
        );
    }
    assert_eq!(report["conversations"]["retracted"], new.len(), "the report counts month 2's new conversations as retracted");
}

/// Guards the help: `memport merge --help` says what a merge does and that deltas go in order
/// (by `base_export_id`), and shows examples.
#[test]
fn merge_help_teaches_the_order_of_deltas_and_shows_examples() {
    let output = succeed(memport().args(["merge", "--help"]));
    let help = String::from_utf8_lossy(&output.stdout);
    for needle in ["incremental", "base_export_id", "retracted", "unsigned", "Examples:", "--json"] {
        assert!(help.contains(needle), "merge --help mentions {needle}: {help}");
    }
}
