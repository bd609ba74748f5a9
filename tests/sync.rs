//! `memport sync`: each month's export becomes exactly its changes against the earlier runs,
//! the same run byte for byte however it is made, and a refused, stopped or killed sync leaves
//! the state as it was.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use memport::sinks::OutputFormat;
use memport::sources::BranchPolicy;
use memport::sync::delta::DeltaCounts;
use memport::sync::sqlite::{SCHEMA_VERSION, SqliteState};
use memport::sync::state::StateStore;
use memport::sync::{RETRACTIONS_FILE, RUNS_FOLDER, SYNC_REPORT, SyncOptions, SyncReport};
use memport::timefmt::{format_rfc3339, parse_rfc3339};
use serde_json::Value;

use crate::util::{EXPORTED_AT, files_under, forget_hard, holds, ndjson, root};

/// A day in memport's microseconds: the time between two syncs of one month's export.
const DAY: i64 = 86_400_000_000;

/// Two monthly exports of one synthetic account, written by `benches/gen_months.py` into a
/// temp folder, with its `changes.json`: what changed from the first month to the second.
pub(crate) struct Months {
    /// The generator's provider name (`gemini-json`, not memport's `gemini`).
    provider: &'static str,
    folder: tempfile::TempDir,
    changes: Value,
}

impl Months {
    /// Generates `conversations` conversations of `provider` in month 1, and month 2.
    pub(crate) fn generate(provider: &'static str, conversations: usize) -> Months {
        let folder = tempfile::tempdir().expect("temp dir");
        let output = Command::new("python3")
            .arg(root().join("benches").join("gen_months.py"))
            .arg(provider)
            .arg("--out")
            .arg(folder.path())
            .args(["--conversations", &conversations.to_string(), "--quiet"])
            .output()
            .expect("python3 runs (the sync tests generate their exports with benches/gen_months.py)");
        assert!(
            output.status.success(),
            "gen_months.py {provider} writes two months of exports: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let changes = json(&folder.path().join("changes.json"));
        Months { provider, folder, changes }
    }

    /// The export folder of month `month` (1 or 2).
    pub(crate) fn export(&self, month: usize) -> PathBuf {
        self.folder.path().join(format!("month-{month}"))
    }

    /// The export time the generator gives month `month`, as written in changes.json.
    pub(crate) fn exported_at_text(&self, month: usize) -> &str {
        self.changes["exports"][month - 1]["exported_at"].as_str().expect("changes.json gives each month's exported_at")
    }

    /// The export time of month `month` in memport's microseconds.
    fn exported_at(&self, month: usize) -> i64 {
        let text = self.exported_at_text(month);
        parse_rfc3339(text).unwrap_or_else(|| panic!("changes.json's exported_at {text} is RFC 3339"))
    }

    /// What changed in month 2.
    fn change(&self) -> &Value {
        &self.changes["months"][0]
    }

    /// The generator's ids of one kind of change in month 2 (a list, or an object's keys).
    fn ids(&self, kind: &str) -> Vec<String> {
        match &self.change()[kind] {
            Value::Array(ids) => ids.iter().map(|id| id.as_str().expect("ids are strings").to_owned()).collect(),
            Value::Object(ids) => ids.keys().cloned().collect(),
            other => panic!("changes.json's month 2 has `{kind}` as a list or an object, not {other}"),
        }
    }

    /// The conversations changed so that a reader of the delta sees something new: appended
    /// to, edited, regenerated or renamed.
    fn changed(&self) -> BTreeSet<String> {
        ["appended", "edited", "regenerated", "renamed"].iter().flat_map(|kind| self.ids(kind)).collect()
    }

    /// The ids of the messages month 2 added to changed conversations (`details[*].new_message_ids`).
    fn new_message_ids(&self) -> BTreeSet<String> {
        let details = self.change()["details"].as_object().expect("changes.json's month 2 has details");
        details
            .values()
            .filter_map(|detail| detail["new_message_ids"].as_array())
            .flatten()
            .map(|id| id.as_str().expect("message ids are strings").to_owned())
            .collect()
    }

    /// memport's name of the provider.
    pub(crate) fn memport_provider(&self) -> &'static str {
        if self.provider.starts_with("gemini") { "gemini" } else { self.provider }
    }

    /// The id memport gives the conversation the generator calls `id`, where it can be told
    /// from it: ChatGPT, Claude and Grok keep the export's id, Gemini JSON makes `gm-<id>` of a
    /// conversation URL. Copilot ids and Gemini `time:` ids are memport's own grouping.
    fn conversation_id(&self, id: &str) -> Option<String> {
        match self.provider {
            "chatgpt" | "claude" | "grok" => Some(id.to_owned()),
            "gemini-json" => id.strip_prefix("https://gemini.google.com/app/").map(|rest| format!("gm-{rest}")),
            _ => None,
        }
    }
}

/// A sync state and its output folder, as one user's monthly job keeps them, with the options
/// every sync of it runs with.
struct Account {
    folder: tempfile::TempDir,
    formats: Vec<OutputFormat>,
    threads: usize,
    branches: BranchPolicy,
}

impl Account {
    /// A fresh state writing `formats`, two threads, the active branch.
    fn new(formats: &[OutputFormat]) -> Account {
        Account { folder: tempfile::tempdir().expect("temp dir"), formats: formats.to_vec(), threads: 2, branches: BranchPolicy::Active }
    }

    /// The state file.
    fn state(&self) -> PathBuf {
        self.folder.path().join("state.db")
    }

    /// The folder that gets `runs/`.
    fn out(&self) -> PathBuf {
        self.folder.path().join("out")
    }

    /// The options of a sync of `export` exported at `exported_at`.
    fn options(&self, export: &Path, exported_at: i64) -> SyncOptions {
        let mut convert = crate::util::options(&[export.to_owned()], &self.out(), &[]);
        convert.exported_at = exported_at;
        convert.settings.threads = Some(self.threads);
        convert.settings.branches = self.branches;
        SyncOptions { convert, formats: self.formats.clone(), state: self.state(), output_root: self.out(), store: None }
    }

    /// Syncs `export`, which must succeed.
    fn sync(&self, export: &Path, exported_at: i64) -> SyncReport {
        memport::sync::sync(&self.options(export, exported_at))
            .unwrap_or_else(|error| panic!("syncing {} succeeds: {error}", export.display()))
    }
}

/// A JSON file.
pub(crate) fn json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|error| panic!("{} is readable: {error}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|error| panic!("{} is JSON: {error}", path.display()))
}

/// The run folder of a sync.
fn run_folder(report: &SyncReport) -> PathBuf {
    PathBuf::from(&report.run_folder)
}

/// The transcript messages in a run's AIMEM NDJSON output, as (conversation id, message id):
/// chunk ids are `urn:aimem:memport:<provider>.<conversation>.<message>`. Provider memories
/// (`<provider>.mem.<hash>`) and extracted memories (`mem-<hash>`) are left out.
fn written_messages(run: &Path, provider: &str) -> Vec<(String, String)> {
    let prefix = format!("urn:aimem:memport:{provider}.");
    ndjson(&run.join(OutputFormat::AimemNdjson.default_file_name()))
        .iter()
        .filter(|record| record["_kind"] == "chunk")
        .filter_map(|record| {
            let rest = record["id"].as_str()?.strip_prefix(prefix.as_str())?;
            let (conversation, message) = rest.split_once('.')?;
            (conversation != "mem").then(|| (conversation.to_owned(), message.to_owned()))
        })
        .collect()
}

/// The retractions a run wrote.
fn retractions(run: &Path) -> Vec<Value> {
    ndjson(&run.join(RETRACTIONS_FILE))
}

/// The ids of the conversations a run retracted.
fn retracted_ids(run: &Path) -> BTreeSet<String> {
    retractions(run).iter().map(|retraction| retraction["conversation_id"].as_str().expect("a conversation id").to_owned()).collect()
}

/// The names of the conversation files in a run's PAM store.
fn pam_conversations(run: &Path) -> BTreeSet<String> {
    let folder = run.join(OutputFormat::Pam.default_file_name()).join("conversations");
    match std::fs::read_dir(&folder) {
        Ok(entries) => entries.map(|entry| entry.expect("readable entry").file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => BTreeSet::new(),
    }
}

/// The PAM `memory-store.json` of a run.
fn pam_store(run: &Path) -> Value {
    json(&run.join(OutputFormat::Pam.default_file_name()).join("memory-store.json"))
}

/// The envelope (first line) of a run's AIMEM NDJSON output.
fn aimem_envelope(run: &Path) -> Value {
    ndjson(&run.join(OutputFormat::AimemNdjson.default_file_name()))
        .into_iter()
        .next()
        .expect("an AIMEM NDJSON output starts with its envelope")
}

/// The names in `folder`, sorted (none when it does not exist).
pub(crate) fn names(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(folder) {
        Ok(entries) => entries.map(|entry| entry.expect("readable entry").file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// The run ids of a state's run log, oldest first.
fn logged_runs(state: &Path) -> Vec<String> {
    let status = memport::sync::status::read(state, "").unwrap_or_else(|error| panic!("the state's status reads: {error}"));
    status.runs.into_iter().map(|run| run.run_id).collect()
}

/// Asserts every format output of a sync validates (Parquet has no validator).
fn assert_outputs_validate(report: &SyncReport) {
    assert!(!report.run.outputs.is_empty(), "run {} lists its outputs", report.run_id);
    for output in report.run.outputs.iter().filter(|output| output.format != "parquet") {
        let validation = memport::validate::validate_path(Path::new(&output.path))
            .unwrap_or_else(|error| panic!("{} ({}) can be validated: {error}", output.path, output.format));
        assert!(validation.is_valid(), "{} ({}) is valid: {:?}", output.path, output.format, validation.problems);
    }
}

/// Every file under `folder`, by path relative to it, with its bytes.
pub(crate) fn files(folder: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, folder: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(folder).unwrap_or_else(|error| panic!("{} is readable: {error}", folder.display())) {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                walk(root, &path, files);
            } else {
                let relative = path.strip_prefix(root).expect("under the root").to_string_lossy().into_owned();
                files.insert(relative, std::fs::read(&path).expect("readable file"));
            }
        }
    }
    let mut found = BTreeMap::new();
    walk(folder, folder, &mut found);
    found
}

/// A run's `sync.json` without what may differ between two syncs that wrote the same run:
/// where the output folder is (`root`, replaced by `OUT`), how long the run took, its thread
/// count, and the leftovers of stopped syncs it removed first.
fn comparable_sync_report(path: &Path, root: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("readable sync.json").replace(&root.display().to_string(), "OUT");
    let mut report: Value = serde_json::from_str(&text).expect("sync.json is JSON");
    report.as_object_mut().expect("sync.json is an object").remove("removed_leftovers");
    report["run"].as_object_mut().expect("sync.json has the run's report").remove("elapsed_seconds");
    report["run"]["options"].as_object_mut().expect("the run's report has its options").remove("threads");
    report
}

/// Asserts two run folders hold the same files, byte for byte; `sync.json` is compared as
/// [`comparable_sync_report`] (`left_root` and `right_root` are their output folders).
pub(crate) fn assert_same_run(left: &Path, left_root: &Path, right: &Path, right_root: &Path) {
    let (left_files, right_files) = (files(left), files(right));
    assert_eq!(
        left_files.keys().collect::<Vec<_>>(),
        right_files.keys().collect::<Vec<_>>(),
        "{} and {} hold the same files",
        left.display(),
        right.display()
    );
    for (name, bytes) in &left_files {
        if name == SYNC_REPORT {
            assert_eq!(
                comparable_sync_report(&left.join(name), left_root),
                comparable_sync_report(&right.join(name), right_root),
                "{name} says the same in {} and {} (but for paths, time taken, threads and leftovers removed)",
                left.display(),
                right.display()
            );
        } else {
            assert!(bytes == &right_files[name], "{name} is byte for byte the same in {} and {}", left.display(), right.display());
        }
    }
}

/// The records memport keeps in the state after month 1 that are not conversations the
/// generator lists: Claude's projects and memories (`project-<uuid>`, `memories`), which it
/// reads as records of their own and the generator writes unchanged every month. Empty for
/// providers whose conversation ids cannot be told from the generator's.
fn account_records(months: &Months, state: &Path) -> Vec<String> {
    let month_one: Option<BTreeSet<String>> = ["unchanged", "appended", "edited", "regenerated", "renamed", "deleted"]
        .iter()
        .flat_map(|kind| months.ids(kind))
        .map(|id| months.conversation_id(&id))
        .collect();
    let Some(month_one) = month_one else {
        return Vec::new();
    };
    let mut store = SqliteState::open(state, false).unwrap_or_else(|error| panic!("the state opens: {error}"));
    let live = store.live_conversations(months.memport_provider()).unwrap_or_else(|error| panic!("the state reads: {error}"));
    live.into_iter().filter(|id| !month_one.contains(id)).collect()
}

/// The memory store beside runs/ after two syncs: every record of the first run is in it, and
/// every record of a conversation the user deleted (`deleted`) is tombstoned.
fn assert_store_holds_both_months(provider: &str, first: &SyncReport, second: &SyncReport, deleted: &BTreeSet<String>) {
    let path_of = |report: &SyncReport, format: &str| {
        PathBuf::from(
            &report
                .run
                .outputs
                .iter()
                .find(|output| output.format == format)
                .unwrap_or_else(|| panic!("{provider}: a {format} output"))
                .path,
        )
    };
    let store_path = path_of(second, "store");
    assert_eq!(store_path, path_of(first, "store"), "{provider}: one store for every run");
    assert!(store_path.parent().unwrap().join(RUNS_FOLDER).is_dir(), "{provider}: the store is beside runs/: {}", store_path.display());
    let store = memport::store::Store::open(&store_path, false).unwrap();
    for record in ndjson(&path_of(first, "ump-ndjson")) {
        let id = record["id"].as_str().unwrap();
        assert!(store.get(id).unwrap().is_some(), "{provider}: the first run's record {id} is still in the store");
    }
    let mut tombstoned = 0;
    store
        .for_each_record(|json| {
            let record: Value = serde_json::from_str(json).unwrap();
            let session = record["scope"]["session"].as_str().unwrap_or_default();
            if deleted.contains(session) && record["body"]["structured"]["message_id"].is_string() {
                assert_eq!(
                    record["lifecycle"]["status"], "tombstoned",
                    "{provider}: a deleted conversation's message is tombstoned: {record}"
                );
                tombstoned += 1;
            }
            Ok(())
        })
        .unwrap();
    assert!(deleted.is_empty() || tombstoned > 0, "{provider}: the deleted conversations' messages are in the store, tombstoned");
}

/// Syncs month 1 then month 2 of `provider` and checks the second run against changes.json:
/// its counts, its retractions, for the providers with message ids the messages it wrote, and
/// that syncing month 2 again finds nothing new.
fn assert_months_sync_to_their_changes(provider: &'static str) {
    let months = Months::generate(provider, 20);
    let memport_provider = months.memport_provider();
    // Every format, so each provider's delta is written and validated in each of them.
    let every: Vec<OutputFormat> = OutputFormat::ALL.iter().map(|(_, format)| *format).collect();
    let account = Account::new(&every);
    let first = account.sync(&months.export(1), months.exported_at(1));
    assert!(first.full, "{provider}: the first sync on a state is full");
    assert_eq!(first.conversations.unchanged, 0, "{provider}: the first sync finds nothing unchanged: {:?}", first.conversations);
    let extra = account_records(&months, &account.state());
    assert!(
        extra.iter().all(|id| id == "memories" || id.starts_with("project-")),
        "{provider}: the only records memport keeps besides the generated conversations are Claude's memories and projects: {extra:?}"
    );

    let second = account.sync(&months.export(2), months.exported_at(2));
    assert_outputs_validate(&second);
    let counts = second.conversations;
    let (new, changed, deleted, unchanged) = (months.ids("new"), months.changed(), months.ids("deleted"), months.ids("unchanged"));
    assert!(!second.full, "{provider}: the second sync is a delta, not a full run ({:?})", second.full_because);
    assert_eq!(counts.new, new.len() as u64, "{provider}: month 2's new conversations {new:?} count as new: {counts:?}");
    assert_eq!(
        counts.changed,
        changed.len() as u64,
        "{provider}: the conversations appended to, edited, regenerated or renamed {changed:?} count as changed: {counts:?}"
    );
    assert_eq!(counts.changed_nothing_new, 0, "{provider}: every changed conversation has something new: {counts:?}");
    assert_eq!(counts.retracted, deleted.len() as u64, "{provider}: the deleted conversations {deleted:?} are retracted: {counts:?}");
    assert_eq!(
        counts.unchanged + counts.changed + counts.changed_nothing_new + counts.retracted,
        first.conversations.new,
        "{provider}: each of the {} conversations the first sync emitted is exactly one of unchanged, changed or retracted a month later: {counts:?}",
        first.conversations.new
    );
    if provider.starts_with("gemini") {
        // memport groups Gemini records without a conversation URL by time, and joins
        // generated episodes less than the gap apart: several unchanged ids of changes.json can
        // be one memport conversation.
        assert!(
            counts.unchanged <= unchanged.len() as u64,
            "{provider}: at most the {} unchanged groups of changes.json are unchanged conversations: {counts:?}",
            unchanged.len()
        );
    } else {
        // Claude's projects and memories are records of their own, written unchanged every
        // month, which changes.json does not list.
        assert_eq!(
            counts.unchanged,
            (unchanged.len() + extra.len()) as u64,
            "{provider}: the {} unchanged conversations of changes.json (and the account records {extra:?}) count as unchanged: {counts:?}",
            unchanged.len()
        );
    }

    let run = run_folder(&second);
    let written = retractions(&run);
    assert_eq!(
        written.len(),
        deleted.len(),
        "{provider}: retractions.ndjson lists the {} deleted conversations: {written:?}",
        deleted.len()
    );
    for retraction in &written {
        assert_eq!(retraction["provider"], memport_provider, "{provider}: a retraction names memport's provider: {retraction}");
        assert_eq!(retraction["retracted_by"], second.run_id.as_str(), "{provider}: a retraction names the run that made it: {retraction}");
    }
    let expected: BTreeSet<String> = deleted.iter().filter_map(|id| months.conversation_id(id)).collect();
    let retracted = retracted_ids(&run);
    assert!(
        expected.is_subset(&retracted),
        "{provider}: retractions.ndjson names the deleted conversations {expected:?}, not only {retracted:?}"
    );

    assert_store_holds_both_months(provider, &first, &second, &expected);

    let tree_provider = matches!(provider, "chatgpt" | "claude" | "grok");
    if tree_provider {
        assert_delta_holds_the_changes(&months, &run);
    }

    let again = account.sync(&months.export(2), months.exported_at(2) + DAY);
    let live = counts.unchanged + counts.changed + counts.changed_nothing_new + counts.new;
    assert!(!again.full, "{provider}: syncing month 2 again is a delta");
    assert_eq!(
        again.conversations,
        DeltaCounts { unchanged: live, ..DeltaCounts::default() },
        "{provider}: syncing month 2 again finds all {live} conversations unchanged, and nothing to retract"
    );
    assert_eq!(again.run.counts.messages_written, 0, "{provider}: syncing month 2 again writes no message: {:?}", again.run.counts);
    let again_run = run_folder(&again);
    let rewritten = written_messages(&again_run, memport_provider);
    assert!(rewritten.is_empty(), "{provider}: syncing month 2 again writes no message to AIMEM: {rewritten:?}");
    let rewritten = pam_conversations(&again_run);
    assert!(rewritten.is_empty(), "{provider}: syncing month 2 again writes no PAM conversation: {rewritten:?}");
    assert!(retractions(&again_run).is_empty(), "{provider}: syncing month 2 again retracts nothing");

    if tree_provider {
        assert_changed_conversations_write_only_their_new_messages(&months, &run);
    }
}

/// Asserts a month-2 delta holds the changes and nothing unchanged: every message month 2
/// added, every new conversation, the new title of a renamed one, and no message or PAM file
/// of an unchanged conversation.
fn assert_delta_holds_the_changes(months: &Months, run: &Path) {
    let provider = months.memport_provider();
    let written = written_messages(run, provider);
    let written_ids: BTreeSet<&str> = written.iter().map(|(_, message)| message.as_str()).collect();
    let added = months.new_message_ids();
    assert!(!added.is_empty(), "{provider}: changes.json lists the messages month 2 added");
    let missing: Vec<&String> = added.iter().filter(|id| !written_ids.contains(id.as_str())).collect();
    assert!(missing.is_empty(), "{provider}: the delta's AIMEM output holds every message month 2 added; missing {missing:?}");
    let unchanged: BTreeSet<String> = months.ids("unchanged").into_iter().collect();
    let leaked: Vec<&(String, String)> = written.iter().filter(|(conversation, _)| unchanged.contains(conversation)).collect();
    assert!(leaked.is_empty(), "{provider}: no message of an unchanged conversation is written again: {leaked:?}");
    let conversations: BTreeSet<&str> = written.iter().map(|(conversation, _)| conversation.as_str()).collect();
    for id in months.ids("new") {
        assert!(conversations.contains(id.as_str()), "{provider}: the new conversation {id} is written");
    }
    let pam = pam_conversations(run);
    for id in &unchanged {
        assert!(
            !pam.contains(&format!("{provider}-{id}.json")),
            "{provider}: the PAM store holds no file for the unchanged conversation {id}"
        );
    }
    let renamed = months.change()["renamed"].as_object().expect("changes.json lists renamed conversations");
    for (id, title) in renamed {
        let conversation = json(&run.join("pam").join("conversations").join(format!("{provider}-{id}.json")));
        assert_eq!(conversation["title"], *title, "{provider}: the renamed conversation {id} is written with its new title");
    }
}

/// Asserts a changed conversation writes only the messages month 2 added (some of them, as
/// hidden ones are not written): none that was written before, nor one left out before as a
/// duplicate of an earlier message (the delta would hold a message no full conversion writes).
fn assert_changed_conversations_write_only_their_new_messages(months: &Months, run: &Path) {
    let provider = months.memport_provider();
    let (changed, added) = (months.changed(), months.new_message_ids());
    let written = written_messages(run, provider);
    let again: Vec<&(String, String)> =
        written.iter().filter(|(conversation, message)| changed.contains(conversation) && !added.contains(message)).collect();
    assert!(again.is_empty(), "{provider}: a changed conversation writes only the messages month 2 added; also written: {again:?}");
}

#[test]
fn chatgpt_months_sync_to_exactly_their_changes() {
    assert_months_sync_to_their_changes("chatgpt");
}

#[test]
fn claude_months_sync_to_exactly_their_changes() {
    assert_months_sync_to_their_changes("claude");
}

#[test]
fn grok_months_sync_to_exactly_their_changes() {
    assert_months_sync_to_their_changes("grok");
}

#[test]
fn copilot_months_sync_to_exactly_their_changes() {
    assert_months_sync_to_their_changes("copilot");
}

#[test]
fn gemini_json_months_sync_to_exactly_their_changes() {
    assert_months_sync_to_their_changes("gemini-json");
}

#[test]
fn gemini_html_months_sync_to_exactly_their_changes() {
    assert_months_sync_to_their_changes("gemini-html");
}

/// Guards what each run says it is: the first sync on a state is whole, the next names the
/// run and the time it follows (sync.json, AIMEM scope and since, PAM export ids), and every
/// output of both validates.
#[test]
fn the_first_sync_is_full_and_the_next_a_valid_delta_since_it() {
    let months = Months::generate("chatgpt", 20);
    let account = Account::new(&[OutputFormat::AimemNdjson, OutputFormat::Aimem, OutputFormat::Pam, OutputFormat::Mif, OutputFormat::Ump]);
    let (first_time, second_time) = (months.exported_at(1), months.exported_at(2));

    let first = account.sync(&months.export(1), first_time);
    assert!(first.full, "the first sync on a state is full");
    assert!(
        first.full_because.as_deref().is_some_and(|why| why.contains("first sync")),
        "the first sync says it is full because it is the first: {:?}",
        first.full_because
    );
    assert_eq!((first.base_run_id.as_deref(), first.since.as_deref()), (None, None), "the first sync follows no run");
    let run = run_folder(&first);
    assert_eq!(run, account.out().join(RUNS_FOLDER).join(&first.run_id), "the run folder is runs/<run-id>");
    let envelope = aimem_envelope(&run);
    assert_eq!(envelope["scope"], "FULL", "the first AIMEM NDJSON output is FULL: {envelope}");
    assert!(envelope.get("since").is_none(), "a FULL AIMEM output has no since: {envelope}");
    assert_eq!(json(&run.join(OutputFormat::Aimem.default_file_name()))["scope"], "FULL", "the first AIMEM bundle is FULL");
    let store = pam_store(&run);
    assert_eq!(store["export_type"], "full", "the first PAM store is a full export");
    assert!(store.get("base_export_id").is_none(), "a full PAM export has no base_export_id: {}", store["base_export_id"]);
    let first_export_id = store["export_id"].as_str().expect("the PAM store has an export_id").to_owned();
    assert_eq!(first_export_id, memport::sync::export_id(&first.run_id), "the PAM export_id is derived from the run id");
    assert_outputs_validate(&first);

    let second = account.sync(&months.export(2), second_time);
    let since = format_rfc3339(first_time);
    assert!(!second.full && second.full_because.is_none(), "the second sync is a delta: {:?}", second.full_because);
    assert_eq!(second.base_run_id.as_deref(), Some(first.run_id.as_str()), "the delta follows the first run");
    assert_eq!(second.since.as_deref(), Some(since.as_str()), "the delta holds what changed since the first run's export time");
    let run = run_folder(&second);
    let envelope = aimem_envelope(&run);
    assert_eq!(envelope["scope"], "SINCE", "the delta's AIMEM NDJSON output is SINCE: {envelope}");
    assert_eq!(envelope["since"], since.as_str(), "the delta's AIMEM since is the first run's export time: {envelope}");
    assert_eq!(envelope["exported_at"], format_rfc3339(second_time).as_str(), "the delta's AIMEM exported_at is its own: {envelope}");
    let bundle = json(&run.join(OutputFormat::Aimem.default_file_name()));
    assert_eq!(
        (&bundle["scope"], &bundle["since"]),
        (&Value::from("SINCE"), &Value::from(since.as_str())),
        "the delta's AIMEM bundle is SINCE the first run"
    );
    let store = pam_store(&run);
    assert_eq!(store["export_type"], "incremental", "the delta's PAM store is an incremental export");
    assert_eq!(store["base_export_id"], first_export_id.as_str(), "the delta's PAM base_export_id is the first run's export_id");
    assert_eq!(store["since"], since.as_str(), "the delta's PAM since is the first run's export time");
    assert_eq!(store["export_id"], memport::sync::export_id(&second.run_id).as_str(), "the delta has an export_id of its own");
    assert_outputs_validate(&second);

    let status = memport::sync::status::read(&account.state(), "").expect("the state's status reads");
    let kinds: Vec<(&str, &str, Option<&str>)> =
        status.runs.iter().map(|run| (run.run_id.as_str(), run.kind, run.base_run_id.as_deref())).collect();
    assert_eq!(
        kinds,
        [(first.run_id.as_str(), "full", None), (second.run_id.as_str(), "delta", Some(first.run_id.as_str()))],
        "the run log holds the full run, then the delta that follows it"
    );
}

/// Guards determinism: two fresh states syncing the same months with the same export times
/// write the same run folders, byte for byte, with 1 thread and with 4, in every format.
#[test]
fn two_states_syncing_the_same_months_write_identical_runs_at_any_thread_count() {
    let months = Months::generate("chatgpt", 20);
    let formats = OutputFormat::ALL.map(|(_, format)| format);
    let mut one = Account::new(&formats);
    one.threads = 1;
    let mut four = Account::new(&formats);
    four.threads = 4;
    for month in [1, 2] {
        let (left, right) =
            (one.sync(&months.export(month), months.exported_at(month)), four.sync(&months.export(month), months.exported_at(month)));
        assert_eq!(left.run_id, right.run_id, "month {month}: the same inputs, history, options and time give the same run id");
        assert_eq!(left.conversations, right.conversations, "month {month}: both runs count the same");
        assert_same_run(&run_folder(&left), &one.out(), &run_folder(&right), &four.out());
    }
}

/// Guards retractions against partial inputs: a lone conversations file may be one part of an
/// export, so what it lacks is not retracted (and the run says why); the next whole export
/// retracts it.
#[test]
fn a_lone_conversations_file_never_retracts_and_says_why() {
    let months = Months::generate("chatgpt", 20);
    let account = Account::new(&[OutputFormat::AimemNdjson]);
    account.sync(&months.export(1), months.exported_at(1));
    let lone = months.export(2).join("conversations.json");
    let second = account.sync(&lone, months.exported_at(2));
    let (new, changed, deleted) = (months.ids("new"), months.changed(), months.ids("deleted"));
    assert!(!deleted.is_empty(), "month 2 deletes a conversation");
    assert_eq!(second.conversations.retracted, 0, "a lone file retracts nothing: {:?}", second.conversations);
    assert!(retractions(&run_folder(&second)).is_empty(), "a lone file's run writes no retraction");
    assert_eq!(
        (second.conversations.new, second.conversations.changed),
        (new.len() as u64, changed.len() as u64),
        "a lone file's new and changed conversations are written as from the folder"
    );
    let why = &second.no_retractions_because;
    assert!(
        why.len() == 1 && why[0].contains(&lone.display().to_string()) && why[0].contains("lone file"),
        "the run says the lone file {} is why nothing was retracted: {why:?}",
        lone.display()
    );
    let status = memport::sync::status::read(&account.state(), "").expect("the state's status reads");
    let totals = &status.providers[0];
    assert_eq!(
        (totals.live_conversations, totals.retracted_conversations),
        (20 + new.len() as u64, 0),
        "the conversations the lone file lacks are still live"
    );

    let third = account.sync(&months.export(2), months.exported_at(2) + DAY);
    assert!(third.no_retractions_because.is_empty(), "a whole export needs no excuse: {:?}", third.no_retractions_because);
    let expected: BTreeSet<String> = deleted.into_iter().collect();
    assert_eq!(retracted_ids(&run_folder(&third)), expected, "the next whole export retracts what the lone file could not");
}

/// Guards the option check: a sync with options that change what is written (here every
/// branch instead of the active one) writes everything again, says why, and is no delta.
#[test]
fn changed_options_make_a_full_run_that_says_why() {
    let months = Months::generate("chatgpt", 20);
    let mut account = Account::new(&[OutputFormat::AimemNdjson, OutputFormat::Pam]);
    let first = account.sync(&months.export(1), months.exported_at(1));
    account.branches = BranchPolicy::All;
    let second = account.sync(&months.export(2), months.exported_at(2));
    assert!(second.full, "a sync with other options is full");
    assert!(
        second.full_because.as_deref().is_some_and(|why| why.contains("options")),
        "the full run says the options changed: {:?}",
        second.full_because
    );
    assert_eq!((second.base_run_id.as_deref(), second.since.as_deref()), (None, None), "a full run follows no run");
    let counts = second.conversations;
    let in_export = (months.ids("unchanged").len() + months.changed().len() + months.ids("new").len()) as u64;
    assert_eq!(counts.unchanged, 0, "a full run skips nothing: {counts:?}");
    assert_eq!(
        counts.new + counts.changed + counts.changed_nothing_new,
        in_export,
        "a full run writes all {in_export} conversations: {counts:?}"
    );
    assert!(
        second.run.counts.messages_written > first.run.counts.messages_written,
        "every branch of every conversation is written again: {} messages, against {} of the active branches a month before",
        second.run.counts.messages_written,
        first.run.counts.messages_written
    );
    let run = run_folder(&second);
    assert_eq!(aimem_envelope(&run)["scope"], "FULL", "the full run's AIMEM output is FULL");
    let store = pam_store(&run);
    assert_eq!(store["export_type"], "full", "the full run's PAM store is a full export");
    assert!(store.get("base_export_id").is_none(), "a full PAM export has no base: {}", store["base_export_id"]);

    let third = account.sync(&months.export(2), months.exported_at(2) + DAY);
    assert!(!third.full, "the same options again make a delta: {:?}", third.full_because);
    assert_eq!(third.base_run_id.as_deref(), Some(second.run_id.as_str()), "the delta follows the full run");
    assert_eq!(
        (third.conversations.new, third.conversations.changed),
        (0, 0),
        "nothing changed since the full run: {:?}",
        third.conversations
    );
}

/// Guards the lock: a sync started while another holds the state is refused at once with a
/// message that says so, writes nothing, and the state works again once the other is done.
#[test]
fn a_sync_is_refused_while_another_holds_the_state() {
    let export = root().join("examples").join("chatgpt-small");
    let account = Account::new(&[OutputFormat::AimemNdjson]);
    let first = account.sync(&export, EXPORTED_AT);
    let mut holder = SqliteState::open(&account.state(), false).expect("the state opens");
    holder.begin().expect("the holder starts its changes");
    let error = memport::sync::sync(&account.options(&export, EXPORTED_AT + DAY)).expect_err("a second sync is refused").to_string();
    assert!(error.contains("another memport sync"), "the refusal says another sync holds the state: {error}");
    assert_eq!(names(&account.out().join(RUNS_FOLDER)), [first.run_id.as_str()], "the refused sync writes no run folder");
    holder.rollback();
    drop(holder);
    assert_eq!(logged_runs(&account.state()), [first.run_id.as_str()], "the run log holds the first run only");
    let second = account.sync(&export, EXPORTED_AT + DAY);
    assert_eq!(second.base_run_id.as_deref(), Some(first.run_id.as_str()), "once the holder is done, the next sync runs");
}

/// Asserts a sync with `account`'s state refuses it with a message holding `needle`, leaves it
/// byte for byte as it was with nothing beside it, and writes no run.
fn assert_state_refused_untouched(account: &Account, needle: &str) {
    let state = account.state();
    let before = std::fs::read(&state).expect("the state file exists");
    let export = root().join("examples").join("chatgpt-small");
    let error = memport::sync::sync(&account.options(&export, EXPORTED_AT)).expect_err("the state is refused").to_string();
    assert!(error.contains(needle), "the refusal of {} says `{needle}`: {error}", state.display());
    assert!(std::fs::read(&state).expect("the state file is still there") == before, "{} is left byte for byte as it was", state.display());
    assert_eq!(names(account.folder.path()), ["state.db"], "nothing is written beside the state, and no output");
}

/// Guards against `--state` naming the wrong file: a text file or another program's SQLite
/// database is refused, and left as it was.
#[test]
fn a_file_that_is_not_a_memport_state_is_refused_and_left_as_it_was() {
    let text = Account::new(&[OutputFormat::AimemNdjson]);
    std::fs::write(text.state(), "my notes, not a database\n".repeat(300)).unwrap();
    assert_state_refused_untouched(&text, "not a memport state");

    let other = Account::new(&[OutputFormat::AimemNdjson]);
    let connection = rusqlite::Connection::open(other.state()).unwrap();
    connection.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');").unwrap();
    drop(connection);
    assert_state_refused_untouched(&other, "not a memport state");
}

/// As [`a_file_that_is_not_a_memport_state_is_refused_and_left_as_it_was`], for a database in
/// WAL mode: refusing it must not switch its journal mode (a write to the user's file).
#[test]
fn another_programs_wal_database_is_refused_without_being_converted() {
    let other = Account::new(&[OutputFormat::AimemNdjson]);
    let connection = rusqlite::Connection::open(other.state()).unwrap();
    connection.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');").unwrap();
    drop(connection);
    assert_state_refused_untouched(&other, "not a memport state");
}

/// Guards the schema version: a state a newer memport wrote is refused, by sync and by
/// `--status`, and left as it was.
#[test]
fn a_state_written_by_a_newer_memport_is_refused_and_left_as_it_was() {
    let export = root().join("examples").join("chatgpt-small");
    let account = Account::new(&[OutputFormat::AimemNdjson]);
    let first = account.sync(&export, EXPORTED_AT);
    rusqlite::Connection::open(account.state()).unwrap().execute_batch(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 1)).unwrap();
    let before = std::fs::read(account.state()).unwrap();
    let error = memport::sync::sync(&account.options(&export, EXPORTED_AT + DAY)).expect_err("a newer state is refused").to_string();
    assert!(error.contains("newer memport"), "the refusal says a newer memport wrote the state: {error}");
    assert!(std::fs::read(account.state()).unwrap() == before, "the newer state is left byte for byte as it was");
    assert_eq!(names(&account.out().join(RUNS_FOLDER)), [first.run_id.as_str()], "the refused sync writes no run folder");
    let error = memport::sync::status::read(&account.state(), "").expect_err("--status refuses it too").to_string();
    assert!(error.contains("newer memport"), "--status says a newer memport wrote the state: {error}");
}

/// `memport sync EXPORT --state STATE -o OUT` writing AIMEM NDJSON and PAM with 2 threads at
/// `exported_at`, as a monthly job runs it.
fn memport_sync(export: &Path, state: &Path, out: &Path, exported_at: &str) -> Command {
    memport_sync_to("aimem-ndjson,pam", export, state, out, exported_at)
}

/// Every format memport writes, for `--to`.
pub(crate) const EVERY_FORMAT: &str = "aimem,aimem-ndjson,parquet,pam,aime,mif,ump,ump-ndjson,ump-md";

/// `memport sync` of `export` into `formats`.
pub(crate) fn memport_sync_to(formats: &str, export: &Path, state: &Path, out: &Path, exported_at: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memport"));
    command
        .arg("sync")
        .arg(export)
        .arg("--state")
        .arg(state)
        .args(["--to", formats, "--threads", "2", "-q", "--exported-at", exported_at])
        .arg("-o")
        .arg(out);
    command
}

/// The `run=` partitions of a sync's Parquet dataset, as `table/run=<id>`.
fn parquet_partitions(out: &Path) -> BTreeSet<String> {
    let dataset = out.join("parquet");
    let mut partitions = BTreeSet::new();
    for table in names(&dataset).into_iter().filter(|name| dataset.join(name).is_dir()) {
        for partition in names(&dataset.join(&table)) {
            partitions.insert(format!("{table}/{partition}"));
        }
    }
    partitions
}

/// Runs `command` to its end, which must be a success.
pub(crate) fn succeed(command: &mut Command) -> Output {
    let output = command.output().expect("memport runs");
    assert!(output.status.success(), "memport succeeds: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Guards crash safety: a sync killed at any point leaves the state's run log as it was and no
/// run folder but its own leftovers (a staging folder, or a folder it renamed and never
/// committed), and the rerun removes them and writes the run an uninterrupted sync writes.
#[test]
fn a_killed_sync_leaves_the_state_as_it_was_and_its_rerun_writes_the_same_run() {
    let months = Months::generate("chatgpt", 300);
    let work = tempfile::tempdir().unwrap();
    let (reference, killed) = (work.path().join("reference"), work.path().join("killed"));
    for folder in [&reference, &killed] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let (state, out) = (|folder: &Path| folder.join("state.db"), |folder: &Path| folder.join("out"));
    let (first_time, second_time) = (months.exported_at_text(1).to_owned(), months.exported_at_text(2).to_owned());
    succeed(&mut memport_sync_to(EVERY_FORMAT, &months.export(1), &state(&reference), &out(&reference), &first_time));
    let after_month_one = std::fs::read(state(&reference)).unwrap();
    let month_one = logged_runs(&state(&reference));
    succeed(&mut memport_sync_to(EVERY_FORMAT, &months.export(2), &state(&reference), &out(&reference), &second_time));
    let run_id = logged_runs(&state(&reference)).pop().expect("the reference run is logged");
    let partitions_after_month_one: BTreeSet<String> = parquet_partitions(&out(&reference))
        .into_iter()
        .filter(|partition| month_one.iter().any(|run| partition.ends_with(&format!("run={run}"))))
        .collect();

    // The killed syncs start from the same history: a copy of the state after month 1.
    std::fs::write(state(&killed), &after_month_one).unwrap();
    let leftovers = [run_id.clone(), format!(".{run_id}.partial")];
    for delay in [0, 10, 25, 50, 80, 120, 170, 230, 300, 400, 550, 800] {
        let mut child = memport_sync_to(EVERY_FORMAT, &months.export(2), &state(&killed), &out(&killed), &second_time)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("memport starts");
        std::thread::sleep(Duration::from_millis(delay));
        // SIGKILL; it fails only when the child has ended already, which is fine too.
        let _ = child.kill();
        let finished = child.wait().expect("the child ends").success();
        let left = names(&out(&killed).join(RUNS_FOLDER));
        assert!(
            left.iter().all(|name| leftovers.contains(name)),
            "killed after {delay} ms: runs/ holds nothing but this run's staging or uncommitted folder: {left:?}"
        );
        let partitions = parquet_partitions(&out(&killed));
        assert!(
            partitions.iter().all(|partition| partitions_after_month_one.contains(partition)
                    || partition.ends_with(&format!("run={run_id}"))
                    // Killed while the `runs` row was being written: its hidden staging folder,
                    // which dataset readers pass over and the next sync removes.
                    || partition.ends_with(&format!(".run={run_id}.partial"))),
            "killed after {delay} ms: the Parquet dataset holds month 1's partitions and at most this run's: {partitions:?}"
        );
        let logged = logged_runs(&state(&killed));
        if finished || logged.last() == Some(&run_id) {
            // The sync committed before the kill (and may have ended): put the state back as
            // after month 1, which makes its run folder one the state never committed, as when
            // a sync is killed between renaming its folder and committing. Later delays would
            // finish too.
            assert_eq!(logged[..logged.len() - 1], month_one[..], "a finished sync is logged after month 1");
            let _ = std::fs::remove_file(killed.join("state.db-journal"));
            std::fs::write(state(&killed), &after_month_one).unwrap();
            break;
        }
        assert_eq!(logged, month_one, "killed after {delay} ms: the state's run log is as it was");
    }

    let output = succeed(&mut memport_sync_to(EVERY_FORMAT, &months.export(2), &state(&killed), &out(&killed), &second_time));
    let mut expected = month_one.clone();
    expected.push(run_id.clone());
    assert_eq!(logged_runs(&state(&killed)), expected, "the rerun is logged after month 1");
    assert_eq!(
        names(&out(&killed).join(RUNS_FOLDER)),
        [run_id.as_str()],
        "the rerun removed what the killed syncs left: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The killed syncs' output folder starts empty (only the state is copied): compare this
    // run's partitions.
    let dataset = |folder: &Path| -> BTreeMap<String, Vec<u8>> {
        files(&out(folder).join("parquet")).into_iter().filter(|(name, _)| name.contains(&format!("run={run_id}"))).collect()
    };
    assert!(!dataset(&reference).is_empty(), "the reference sync added a partition to the Parquet dataset");
    assert_eq!(
        dataset(&killed).keys().collect::<Vec<_>>(),
        dataset(&reference).keys().collect::<Vec<_>>(),
        "the rerun's Parquet dataset has the partitions of an uninterrupted sync"
    );
    assert!(dataset(&killed) == dataset(&reference), "the rerun's Parquet parts are byte-identical to an uninterrupted sync's");
    assert_same_run(
        &out(&reference).join(RUNS_FOLDER).join(&run_id),
        &out(&reference),
        &out(&killed).join(RUNS_FOLDER).join(&run_id),
        &out(&killed),
    );
    let totals = |folder: &Path| {
        let status = memport::sync::status::read(&state(folder), "").expect("the state's status reads");
        status
            .providers
            .iter()
            .map(|provider| (provider.live_conversations, provider.retracted_conversations, provider.messages))
            .collect::<Vec<_>>()
    };
    assert_eq!(totals(&killed), totals(&reference), "both states hold the same conversations and messages");
}

/// Guards the command line: each sync says whether it is full or a delta and what became of
/// the conversations, and `--status` (text and `--json`) lists the runs and provider totals.
#[test]
fn the_cli_reports_each_sync_and_status_lists_runs_and_provider_totals() {
    let months = Months::generate("chatgpt", 20);
    let work = tempfile::tempdir().unwrap();
    let (state, out) = (work.path().join("state.db"), work.path().join("out"));
    let first = succeed(&mut memport_sync(&months.export(1), &state, &out, months.exported_at_text(1)));
    let text = String::from_utf8_lossy(&first.stderr);
    assert!(text.contains("full run (the first sync"), "the first sync says it is full and why: {text}");
    let second = succeed(&mut memport_sync(&months.export(2), &state, &out, months.exported_at_text(2)));
    let text = String::from_utf8_lossy(&second.stderr);
    let since = format_rfc3339(months.exported_at(1));
    assert!(text.contains(&format!("delta since {since}")), "the second sync says it is a delta since {since}: {text}");
    let (new, changed, unchanged, deleted) =
        (months.ids("new").len(), months.changed().len(), months.ids("unchanged").len(), months.ids("deleted").len());
    let counts = format!("{new} new, {changed} changed, 0 changed with nothing new, {unchanged} unchanged, {deleted} retracted");
    assert!(text.contains(&counts), "the second sync says `{counts}`: {text}");
    assert!(text.contains("run folder"), "the sync names its run folder: {text}");

    let memport = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_memport"));
        command.args(["sync", "--status", "--state"]).arg(&state);
        command
    };
    let output = succeed(&mut memport());
    let status = String::from_utf8_lossy(&output.stdout);
    let live = unchanged + changed + new;
    for needle in [
        "2 runs".to_owned(),
        format!("new {new}, changed {changed}, unchanged {unchanged}, retracted {deleted}"),
        format!("{live} conversations ({deleted} retracted)"),
        "chatgpt".to_owned(),
    ] {
        assert!(status.contains(&needle), "--status shows `{needle}`: {status}");
    }
    assert!(status.contains(" full ") && status.contains(" delta "), "--status names each run's kind: {status}");

    let output = succeed(memport().arg("--json"));
    let status: Value = serde_json::from_slice(&output.stdout).expect("--status --json prints JSON");
    let runs = status["runs"].as_array().expect("the runs");
    assert_eq!(runs.len(), 2, "--json lists both runs: {status}");
    assert_eq!((&runs[0]["kind"], &runs[1]["kind"]), (&Value::from("full"), &Value::from("delta")), "--json gives each run's kind");
    assert_eq!(runs[1]["base_run_id"], runs[0]["run_id"], "--json gives the run a delta follows");
    assert_eq!(runs[1]["exported_at"], format_rfc3339(months.exported_at(2)).as_str(), "--json gives each run's export time");
    assert_eq!(runs[1]["conversations"]["new"], new, "--json gives each run's counts: {}", runs[1]);
    assert_eq!(runs[1]["conversations"]["retracted"], deleted, "--json gives each run's counts: {}", runs[1]);
    assert!(
        runs[1]["inputs"][0]["checksum"].as_str().is_some_and(|checksum| checksum.starts_with("blake3:")),
        "--json gives each input's checksum: {}",
        runs[1]
    );
    let provider = &status["providers"][0];
    assert_eq!(provider["provider"], "chatgpt", "--json gives per-provider totals: {status}");
    assert_eq!(provider["live_conversations"], live, "--json counts the live conversations: {provider}");
    assert_eq!(provider["retracted_conversations"], deleted, "--json counts the retracted conversations: {provider}");
    assert!(provider["messages"].as_u64().is_some_and(|messages| messages > 0), "--json counts the messages emitted: {provider}");
    assert_eq!(provider["last_run"], runs[1]["run_id"], "--json names the provider's last run: {provider}");

    let missing = Command::new(env!("CARGO_BIN_EXE_memport"))
        .args(["sync", "--status", "--state"])
        .arg(work.path().join("none.db"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2), "--status on a missing state fails");
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no such file"), "--status says the state does not exist");
    assert!(!work.path().join("none.db").exists(), "--status makes no state");
}

/// A ChatGPT export folder for one month: each conversation is `(id, [user sentences])`, every
/// sentence a user message followed by a short answer.
fn month_export(folder: &Path, conversations: &[(&str, &[&str])]) -> PathBuf {
    let mut written = Vec::new();
    for (number, (id, sentences)) in conversations.iter().enumerate() {
        let mut nodes = Vec::new();
        let mut parent = "root".to_owned();
        for (index, sentence) in sentences.iter().enumerate() {
            let time = 1_700_000_000.0 + (number * 1000 + index * 10) as f64;
            let (user, answer) = (format!("{id}-u{index}"), format!("{id}-a{index}"));
            nodes.push(crate::util::text_node(&user, Some(&parent), "user", sentence, time));
            nodes.push(crate::util::text_node(&answer, Some(&user), "assistant", "Noted.", time + 1.0));
            parent = answer;
        }
        written.push(crate::util::conversation(id, nodes, Some(&parent)));
    }
    crate::util::write_export(folder, &written);
    folder.to_owned()
}

/// The memories of a PAM store by statement: (id, status, superseded_by).
fn pam_memories(store: &Path) -> BTreeMap<String, (String, String, Option<String>)> {
    let store = json(&store.join("memory-store.json"));
    store["memories"]
        .as_array()
        .expect("memories")
        .iter()
        .map(|memory| {
            (
                memory["content"].as_str().unwrap_or_default().to_owned(),
                (
                    memory["id"].as_str().unwrap_or_default().to_owned(),
                    memory["status"].as_str().unwrap_or("active").to_owned(),
                    memory["temporal"]["superseded_by"].as_str().map(str::to_owned),
                ),
            )
        })
        .collect()
}

/// Guards memories across syncs: a memory said again carries every run's evidence count, a new
/// value of a single-valued slot supersedes the earlier run's value (which is written again,
/// marked, never dropped silently), and a memory said only in a deleted conversation is written
/// again as retracted.
#[test]
fn memories_across_syncs_are_reinforced_superseded_and_retracted() {
    let work = tempfile::tempdir().unwrap();
    let (state, out) = (work.path().join("state.db"), work.path().join("out"));
    let first = month_export(
        &work.path().join("m1"),
        &[("home", &["I live in Lyon."]), ("job", &["I work as a nurse."]), ("colour", &["My favourite colour is green."])],
    );
    let second = month_export(
        &work.path().join("m2"),
        &[
            ("home", &["I live in Lyon."]),
            ("colour", &["My favourite colour is green.", "Hello again. My favourite colour is green."]),
            // A move said as a move: a home said once without saying it changed supersedes nothing.
            ("moved", &["I moved to Berlin."]),
        ],
    );
    let sync = |export: &Path, time: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_memport"));
        command
            .arg("sync")
            .arg(export)
            .arg("--state")
            .arg(&state)
            .args(["--to", "pam,aimem,parquet", "-q", "--exported-at", time, "-o"])
            .arg(&out);
        succeed(&mut command);
        let run = logged_runs(&state).pop().expect("a run is logged");
        out.join(RUNS_FOLDER).join(run)
    };
    let run_one = sync(&first, "2026-10-01T00:00:00Z");
    let before = pam_memories(&run_one.join("pam"));
    let lyon = before.iter().find(|(statement, _)| statement.contains("Lyon")).map(|(_, memory)| memory.0.clone());
    let lyon = lyon.unwrap_or_else(|| panic!("month 1 has a home memory: {before:?}"));
    assert!(before.keys().any(|statement| statement.contains("nurse")), "month 1 has an occupation memory: {before:?}");

    let run_two = sync(&second, "2026-11-01T00:00:00Z");
    let report = json(&run_two.join(SYNC_REPORT));
    let counts = &report["memories"];
    assert_eq!(counts["superseded_earlier"], 1, "Lyon is superseded by Berlin across runs: {counts}");
    assert_eq!(counts["retracted"], 1, "the nurse memory goes with its deleted conversation: {counts}");
    assert!(counts["reinforced"].as_u64().unwrap_or(0) >= 1, "the colour said again is reinforced: {counts}");
    let after = pam_memories(&run_two.join("pam"));
    let berlin = after.iter().find(|(statement, _)| statement.contains("Berlin")).map(|(_, memory)| memory.0.clone());
    let berlin = berlin.unwrap_or_else(|| panic!("month 2 has the new home: {after:?}"));
    let (_, lyon_now) = after.iter().find(|(_, memory)| memory.0 == lyon).unwrap_or_else(|| panic!("Lyon is written again: {after:?}"));
    assert_eq!((lyon_now.1.as_str(), lyon_now.2.as_deref()), ("superseded", Some(berlin.as_str())), "Lyon is marked superseded by Berlin");
    let (_, nurse) = after.iter().find(|(statement, _)| statement.contains("nurse")).expect("the nurse memory is written again");
    assert_eq!(nurse.1, "retracted", "a memory said only in a deleted conversation is retracted, not dropped");
    let store = json(&run_two.join("pam").join("memory-store.json"));
    let relations = store["relations"].as_array().cloned().unwrap_or_default();
    assert!(
        relations
            .iter()
            .any(|relation| relation["type"] == "supersedes" && relation["from"] == berlin.as_str() && relation["to"] == lyon.as_str()),
        "the delta relates Berlin to the Lyon it supersedes: {relations:?}"
    );
    assert_outputs_validate_in(&run_two);
    // The Parquet rows of both runs are in one dataset, a partition per run.
    let dataset = out.join("parquet");
    for run in [&run_one, &run_two] {
        let name = run.file_name().unwrap().to_string_lossy().into_owned();
        assert!(dataset.join("memories").join(format!("run={name}")).is_dir(), "the memories table has a partition for {name}");
        assert!(dataset.join("runs").join(format!("run={name}")).is_dir(), "the runs table has a row for {name}");
    }
    assert!(!run_two.join("parquet").exists(), "the run folder holds no second copy of the Parquet rows");
}

/// Every output in a run folder validates as its format.
fn assert_outputs_validate_in(run: &Path) {
    for entry in std::fs::read_dir(run).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // Besides the reports, a folder output's manifest (`.memport-….output.json`).
        if name == SYNC_REPORT || name == RETRACTIONS_FILE || name == "rejects.ndjson" || name.starts_with('.') {
            continue;
        }
        let output = Command::new(env!("CARGO_BIN_EXE_memport")).arg("validate").arg(&path).output().unwrap();
        assert!(
            output.status.success(),
            "{name} validates: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The run folders under `out`'s `runs/`.
pub(crate) fn run_folders(out: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(out.join(RUNS_FOLDER))
        .map_or_else(|_| BTreeSet::new(), |entries| entries.flatten().map(|entry| entry.path()).collect())
}

/// Guards erasure in a sync: a message erased in the sync's store (and the memories quoting it)
/// stays out of a later full run, which writes everything else again, in every format.
#[test]
fn a_full_sync_after_an_erasure_writes_everything_but_what_was_erased() {
    let folder = tempfile::tempdir().unwrap();
    let (state, out) = (folder.path().join("state.db"), folder.path().join("out"));
    let export = root().join("examples/chatgpt-small");
    let first = memport_sync_to("store,ump-ndjson", &export, &state, &out, "2026-01-01T00:00:00Z").output().unwrap();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let first_runs = run_folders(&out);
    let records = ndjson(&first_runs.iter().next().unwrap().join("memory.ump.ndjson"));
    let message = records.iter().find(|record| record["body"]["text"].as_str().unwrap().starts_with("I don't eat meat")).unwrap();
    let store = out.join(OutputFormat::Store.default_file_name());
    let forget = forget_hard(&store, &[message["id"].as_str().unwrap()]);
    assert!(forget.status.success(), "{}", String::from_utf8_lossy(&forget.stderr));

    // Every branch this time: other options, so a full run that writes every message again.
    let second = memport_sync_to(EVERY_FORMAT, &export, &state, &out, "2026-02-01T00:00:00Z").args(["--branches", "all"]).output().unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{said}");
    assert!(said.contains("erased 1"), "the summary counts the erased message: {said}");
    let new_run = run_folders(&out).difference(&first_runs).next().cloned().unwrap();
    let report: Value = serde_json::from_slice(&std::fs::read(new_run.join(SYNC_REPORT)).unwrap()).unwrap();
    assert_eq!(report["full"], true, "{report}");
    assert_eq!(report["run"]["counts"]["messages_skipped"]["erased"], 1, "{report}");
    for file in files_under(&new_run).into_iter().chain([store]) {
        let bytes = std::fs::read(&file).unwrap();
        for text in ["keep the recipes vegetarian", "Does not eat meat", "Always use metric units"] {
            assert!(!holds(&bytes, text), "{} holds {text:?}", file.display());
        }
    }
}

/// Guards erasure against a sync's retractions: a memory erased in the store, whose
/// conversation is deleted later, is withdrawn without its words, not written again retracted
/// with them (the sync's state knew the memory; the erasure stage empties what the sync emits).
#[test]
fn an_erased_memory_is_withdrawn_without_its_words_when_its_conversation_is_retracted() {
    let folder = tempfile::tempdir().unwrap();
    let (state, out, export) = (folder.path().join("state.db"), folder.path().join("out"), folder.path().join("export"));
    std::fs::create_dir(&export).unwrap();
    let conversations = root().join("examples/chatgpt-small/conversations.json");
    std::fs::copy(&conversations, export.join("conversations.json")).unwrap();
    let first = memport_sync_to("store,ump-ndjson", &export, &state, &out, "2026-01-01T00:00:00Z").output().unwrap();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let first_runs = run_folders(&out);
    let records = ndjson(&first_runs.iter().next().unwrap().join("memory.ump.ndjson"));
    let memory = records.iter().find(|record| record["body"]["text"] == "Decided to go with Postgres").unwrap();
    let store = out.join(OutputFormat::Store.default_file_name());
    let forget = forget_hard(&store, &[memory["id"].as_str().unwrap()]);
    assert!(forget.status.success(), "{}", String::from_utf8_lossy(&forget.stderr));

    // The next export no longer holds the conversation the memory was said in.
    let all: Vec<Value> = serde_json::from_slice(&std::fs::read(&conversations).unwrap()).unwrap();
    let kept: Vec<&Value> =
        all.iter().filter(|conversation| !conversation.to_string().contains("we decided to go with Postgres")).collect();
    assert_eq!(kept.len(), all.len() - 1);
    std::fs::write(export.join("conversations.json"), serde_json::to_vec(&kept).unwrap()).unwrap();
    let second = memport_sync_to("ump-ndjson,aimem,pam", &export, &state, &out, "2026-02-01T00:00:00Z").output().unwrap();
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let new_run = run_folders(&out).difference(&first_runs).next().cloned().unwrap();
    assert_eq!(retractions(&new_run).len(), 1, "the conversation is retracted");
    let written = ndjson(&new_run.join("memory.ump.ndjson"));
    assert!(
        written.iter().any(|record| record["body"]["text"] == "Uses pnpm"),
        "the other memories of that conversation are written again, retracted: {written:?}"
    );
    for file in files_under(&new_run) {
        assert!(!holds(&std::fs::read(&file).unwrap(), "Decided to go with Postgres"), "{} holds it", file.display());
    }
}

/// Guards erasure reaching those who hold an earlier delta: a memory an earlier sync wrote and
/// the store erased since is written again in the next delta, withdrawn in every format, with
/// nothing of what it said; the sync's state forgets its words too, and later runs do not
/// withdraw it again.
#[test]
fn an_erased_memory_is_withdrawn_without_its_words_in_the_next_delta() {
    const STATEMENT: &str = "Decided to go with Postgres";
    let folder = tempfile::tempdir().unwrap();
    let (state, out) = (folder.path().join("state.db"), folder.path().join("out"));
    let export = root().join("examples/chatgpt-small");
    let formats = format!("store,{EVERY_FORMAT}");
    let first = memport_sync_to(&formats, &export, &state, &out, "2026-01-01T00:00:00Z").output().unwrap();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let first_runs = run_folders(&out);
    let records = ndjson(&first_runs.iter().next().unwrap().join("memory.ump.ndjson"));
    let memory = records.iter().find(|record| record["body"]["text"] == STATEMENT).expect("the first run writes the memory");
    let id = memory["id"].as_str().unwrap().to_owned();
    assert!(holds(&std::fs::read(&state).unwrap(), STATEMENT), "the state holds the statement before the erasure");
    let store = out.join(OutputFormat::Store.default_file_name());
    let forget = forget_hard(&store, &[&id]);
    assert!(forget.status.success(), "{}", String::from_utf8_lossy(&forget.stderr));

    let second = memport_sync_to(&formats, &export, &state, &out, "2026-02-01T00:00:00Z").output().unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{said}");
    let runs = run_folders(&out);
    let new_run = runs.difference(&first_runs).next().cloned().unwrap();
    let report = json(&new_run.join(SYNC_REPORT));
    assert_eq!(report["full"], false, "the same export again is a delta: {report}");
    assert_eq!(report["memories"]["erased"], 1, "{report}");
    let written = ndjson(&new_run.join("memory.ump.ndjson"));
    let withdrawn =
        written.iter().find(|record| record["id"] == id.as_str()).unwrap_or_else(|| panic!("the delta withdraws {id}: {written:?}"));
    assert_eq!(withdrawn["lifecycle"]["status"], "tombstoned", "{withdrawn}");
    assert_eq!(withdrawn["body"]["text"], memport::model::ERASED_MEMORY_TEXT, "{withdrawn}");
    let pam = json(&new_run.join("pam").join("memory-store.json"));
    let statuses: Vec<&Value> = pam["memories"].as_array().unwrap().iter().map(|memory| &memory["status"]).collect();
    assert!(statuses.iter().any(|status| *status == "retracted"), "PAM marks it retracted: {statuses:?}");
    for file in files_under(&new_run).into_iter().chain([state.clone()]) {
        assert!(!holds(&std::fs::read(&file).unwrap(), STATEMENT), "{} holds the erased statement", file.display());
    }
    assert_outputs_validate_in(&new_run);

    let third = memport_sync_to(&formats, &export, &state, &out, "2026-03-01T00:00:00Z").output().unwrap();
    assert!(third.status.success(), "{}", String::from_utf8_lossy(&third.stderr));
    let last_run = run_folders(&out).difference(&runs).next().cloned().unwrap();
    assert_eq!(json(&last_run.join(SYNC_REPORT))["memories"]["erased"], 0, "withdrawn once");
    assert!(!ndjson(&last_run.join("memory.ump.ndjson")).iter().any(|record| record["id"] == id.as_str()), "and not written again");
}

/// Guards erasure reaching those who hold an earlier delta: a message an earlier sync wrote and
/// the store erased since is withdrawn in the next delta, in every format's terms, once; the
/// delta read back carries the withdrawal on, and a store loaded from it erases the message.
#[test]
fn an_erased_message_is_withdrawn_in_the_next_delta_and_carried_by_a_delta_read_back() {
    let folder = tempfile::tempdir().unwrap();
    let (state, out) = (folder.path().join("state.db"), folder.path().join("out"));
    let export = root().join("examples/chatgpt-small");
    let formats = format!("store,{EVERY_FORMAT}");
    let first = memport_sync_to(&formats, &export, &state, &out, "2026-01-01T00:00:00Z").output().unwrap();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let first_runs = run_folders(&out);
    let first_run = first_runs.iter().next().unwrap().clone();
    let records = ndjson(&first_run.join("memory.ump.ndjson"));
    let message = records.iter().find(|record| record["body"]["text"].as_str().unwrap().starts_with("I don't eat meat")).unwrap();
    let (id, message_id) =
        (message["id"].as_str().unwrap().to_owned(), message["body"]["structured"]["message_id"].as_str().unwrap().to_owned());
    let conversation_id = message["body"]["structured"]["conversation_id"].as_str().unwrap().to_owned();
    let store = out.join(OutputFormat::Store.default_file_name());
    let forget = forget_hard(&store, &[&id]);
    assert!(forget.status.success(), "{}", String::from_utf8_lossy(&forget.stderr));

    let second = memport_sync_to(&formats, &export, &state, &out, "2026-02-01T00:00:00Z").output().unwrap();
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let runs = run_folders(&out);
    let delta = runs.difference(&first_runs).next().cloned().unwrap();
    let report = json(&delta.join(SYNC_REPORT));
    assert_eq!((report["full"].as_bool(), report["conversations"]["messages_withdrawn"].as_u64()), (Some(false), Some(1)), "{report}");
    let listed = retractions(&delta);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        (&listed[0]["conversation_id"], &listed[0]["message_ids"]),
        (&Value::from(conversation_id.as_str()), &serde_json::json!([message_id]))
    );

    // UMP: a tombstone under the message's own record id.
    let written = ndjson(&delta.join("memory.ump.ndjson"));
    let tombstone =
        written.iter().find(|record| record["id"] == id.as_str()).unwrap_or_else(|| panic!("the delta withdraws {id}: {written:?}"));
    assert_eq!(tombstone["lifecycle"]["status"], "tombstoned", "{tombstone}");
    assert_eq!(tombstone["body"]["structured"]["retracted_message"]["message_id"], message_id.as_str(), "{tombstone}");
    // AIMEM, MIF, AIME: their lists of withdrawn messages, beside no retraction of the conversation.
    let aimem = json(&delta.join("memory.aimem.json"));
    assert_eq!(aimem["x-memport-withdrawn-messages"][0]["message_ids"], serde_json::json!([message_id]), "{aimem}");
    assert!(aimem.get("x-memport-retracted").is_none(), "the conversation itself is not retracted");
    let aimem_stream = std::fs::read_to_string(delta.join("memory.aimem.ndjson")).unwrap();
    let envelope: Value = serde_json::from_str(aimem_stream.lines().next().unwrap()).unwrap();
    assert_eq!(envelope["x-memport-withdrawn-messages"], aimem["x-memport-withdrawn-messages"]);
    let mif = json(&delta.join("memory.mif.json"));
    assert_eq!(mif["vendor_extensions"]["memport"]["withdrawn_messages"][0]["message_ids"], serde_json::json!([message_id]));
    let aime = json(&delta.join("memory.aime.json"));
    assert_eq!(aime["extensions"]["memport"]["withdrawnMessages"][0]["messageIds"], serde_json::json!([message_id]));
    // PAM: an index entry tagged `messages-withdrawn` with a file that names the messages,
    // which `memport merge` takes out of the base's conversation.
    let pam_index = json(&delta.join("pam").join("memory-store.json"))["conversations_index"].clone();
    let withdrawal = pam_index.as_array().unwrap().iter().find(|entry| entry["tags"] == serde_json::json!(["messages-withdrawn"]));
    let withdrawal = withdrawal.unwrap_or_else(|| panic!("the PAM delta lists the withdrawal: {pam_index}"));
    let file = json(&delta.join("pam").join(withdrawal["storage"]["ref"].as_str().unwrap()));
    assert_eq!(file["raw_metadata"]["memport_withdrawn_messages"]["message_ids"], serde_json::json!([message_id]), "{file}");
    assert!(!pam_index.as_array().unwrap().iter().any(|entry| entry["tags"] == serde_json::json!(["retracted"])), "{pam_index}");
    assert_outputs_validate_in(&delta);
    let merged = folder.path().join("merged");
    let merge = succeed(
        Command::new(env!("CARGO_BIN_EXE_memport"))
            .arg("merge")
            .arg(first_run.join("pam"))
            .arg(delta.join("pam"))
            .arg("-o")
            .arg(&merged)
            .arg("--json"),
    );
    let merge_report: Value = serde_json::from_slice(&merge.stdout).unwrap();
    assert_eq!(merge_report["conversations"]["messages_withdrawn"], 1, "{merge_report}");
    assert!(holds(
        &std::fs::read(first_run.join("pam").join("conversations").join(format!("chatgpt-{conversation_id}.json"))).unwrap(),
        "I don't eat meat"
    ));
    for file in files_under(&merged) {
        assert!(!holds(&std::fs::read(&file).unwrap(), "I don't eat meat"), "{} holds the withdrawn message", file.display());
    }
    let merged_index = json(&merged.join("memory-store.json"))["conversations_index"].clone();
    assert!(
        merged_index.as_array().unwrap().iter().all(|entry| entry["tags"] != serde_json::json!(["messages-withdrawn"])),
        "{merged_index}"
    );
    let validated = Command::new(env!("CARGO_BIN_EXE_memport")).arg("validate").arg(&merged).output().unwrap();
    assert!(validated.status.success(), "{}", String::from_utf8_lossy(&validated.stdout));

    let third = memport_sync_to(&formats, &export, &state, &out, "2026-03-01T00:00:00Z").output().unwrap();
    assert!(third.status.success(), "{}", String::from_utf8_lossy(&third.stderr));
    let last = run_folders(&out).difference(&runs).next().cloned().unwrap();
    assert_eq!(json(&last.join(SYNC_REPORT))["conversations"]["messages_withdrawn"], 0, "withdrawn once");
    assert!(retractions(&last).is_empty());
    let status = succeed(Command::new(env!("CARGO_BIN_EXE_memport")).args(["sync", "--status", "--state"]).arg(&state));
    let status = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.matches("withdrawn (erased in the store): 1 messages, 2 memories").count(), 1, "{status}");

    // Read back: each delta carries the withdrawal to another format, and a store that holds
    // the first run's records erases the message when the delta is loaded into it.
    for input in ["memory.ump.ndjson", "memory.aimem.json", "memory.aimem.ndjson", "memory.mif.json", "memory.aime.json", "pam"] {
        let converted = folder.path().join(format!("{input}.carried.ump.ndjson"));
        succeed(
            Command::new(env!("CARGO_BIN_EXE_memport"))
                .arg("convert")
                .arg(delta.join(input))
                .args(["--to", "ump-ndjson", "-q", "--exported-at", "2026-04-01T00:00:00Z", "-o"])
                .arg(&converted),
        );
        let carried = ndjson(&converted);
        assert!(
            carried.iter().any(|record| record["id"] == id.as_str() && record["lifecycle"]["status"] == "tombstoned"),
            "{input} read back withdraws the message: {carried:?}"
        );
    }
    let other_store = folder.path().join("other.db");
    for input in [first_run.join("memory.ump.ndjson"), delta.join("memory.ump.ndjson")] {
        succeed(
            Command::new(env!("CARGO_BIN_EXE_memport"))
                .arg("convert")
                .arg(&input)
                .args(["--to", "store", "-q", "--exported-at", "2026-04-01T00:00:00Z", "-o"])
                .arg(&other_store),
        );
    }
    let loaded = memport::store::Store::open(&other_store, false).unwrap();
    assert!(loaded.get(&id).unwrap().is_none() && loaded.is_erased(&id).unwrap(), "the store loaded with the delta erases the message");
    assert!(!holds(&std::fs::read(&other_store).unwrap(), "I don't eat meat"));
}

/// Converts `input` with memport's defaults (extraction on) to UMP NDJSON in `folder` and
/// returns the report's counts and the records written.
fn convert_to_ump_ndjson(input: &Path, folder: &Path) -> (Value, Vec<Value>) {
    let out = folder.join("memory.ump.ndjson");
    let report = folder.join("report.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_memport"));
    command.arg("convert").arg(input).args(["--to", "ump-ndjson", "-q", "--exported-at", "2026-12-01T00:00:00Z", "-o"]).arg(&out);
    command.arg("--report").arg(&report);
    succeed(&mut command);
    (json(&report)["counts"].clone(), ndjson(&out))
}

/// Guards reading a sync's delta as input: a memory the delta retracted (in every format's own
/// terms) is counted as retracted, never written as a current memory; the conversations the
/// delta retracted are carried to the output as retractions (not read as memories); and a
/// memory forgotten in a UMP file is not extracted again from the message that is still there.
#[test]
fn a_delta_read_as_input_never_brings_back_what_it_retracted() {
    let work = tempfile::tempdir().unwrap();
    let (state, out) = (work.path().join("state.db"), work.path().join("out"));
    let first = month_export(&work.path().join("m1"), &[("home", &["I live in Lyon."]), ("job", &["I work as a nurse."])]);
    let second = month_export(&work.path().join("m2"), &[("home", &["I live in Lyon."])]);
    let sync = |export: &Path, time: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_memport"));
        command.arg("sync").arg(export).arg("--state").arg(&state);
        command.args(["--to", "pam,aimem,ump,mif,aime", "-q", "--exported-at", time, "-o"]).arg(&out);
        succeed(&mut command);
        out.join(RUNS_FOLDER).join(logged_runs(&state).pop().expect("a run is logged"))
    };
    let run_one = sync(&first, "2026-10-01T00:00:00Z");
    let run_two = sync(&second, "2026-11-01T00:00:00Z");
    for output in ["memory.ump.json", "memory.aimem.json", "memory.mif.json", "memory.aime.json", "pam"] {
        let folder = work.path().join(format!("read-{output}"));
        std::fs::create_dir(&folder).unwrap();
        let (counts, written) = convert_to_ump_ndjson(&run_two.join(output), &folder);
        assert_eq!(counts["memories_retracted"], 1, "{output}: the retracted nurse memory is counted: {counts}");
        let current = |record: &&Value| record["lifecycle"]["status"] != "tombstoned";
        assert!(
            !written.iter().filter(current).any(|record| record["body"]["text"].as_str().is_some_and(|text| text.contains("nurse"))),
            "{output}: nothing retracted is written as current: {written:?}"
        );
        // Written again marked, and the deleted conversation's retraction carried (UMP: a tombstone).
        let nurse = written.iter().find(|record| record["body"]["text"].as_str().is_some_and(|text| text.contains("nurse")));
        assert_eq!(nurse.map(|record| &record["lifecycle"]["status"]), Some(&Value::from("tombstoned")), "{output}: {written:?}");
        assert_eq!(counts["retractions_carried"], 1, "{output}: {counts}");
        let carried: Vec<&Value> =
            written.iter().filter(|record| record["body"]["structured"]["retracted_conversation"].is_object()).collect();
        assert_eq!(carried.len(), 1, "{output}: one tombstone of a conversation: {written:?}");
        assert_eq!(carried[0]["body"]["structured"]["retracted_conversation"]["conversation_id"], "job", "{output}: {carried:?}");
        assert_eq!(written.len(), 2, "{output}: {written:?}");
    }

    // Applied to a store: month 1 loaded, then the delta: the deleted conversation and its memory are tombstoned.
    let store = work.path().join("memory.db");
    for run in [&run_one, &run_two] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_memport"));
        command.arg("convert").arg(run.join("memory.ump.json"));
        command.args(["--to", "store", "-q", "--exported-at", "2026-12-01T00:00:00Z", "-o"]).arg(&store);
        succeed(&mut command);
    }
    let opened = memport::store::Store::open(&store, false).unwrap();
    let mut statuses = BTreeMap::new();
    opened
        .for_each_record(|record| {
            let record: Value = serde_json::from_str(record).unwrap();
            statuses.insert(record["body"]["text"].as_str().unwrap_or_default().to_owned(), record["lifecycle"]["status"].clone());
            Ok(())
        })
        .unwrap();
    for (text, status) in &statuses {
        let gone = text.contains("nurse") || text.contains("deleted");
        assert_eq!(status == "tombstoned", gone, "{text}: {status} in {statuses:?}");
    }

    // Carried into every format: the delta read as UMP and written as each, its retraction in each one's own terms.
    let every = work.path().join("every");
    let mut command = Command::new(env!("CARGO_BIN_EXE_memport"));
    command.arg("convert").arg(run_two.join("memory.ump.json"));
    command.args(["--to", "pam,aimem,mif,aime", "-q", "--exported-at", "2026-12-01T00:00:00Z", "-o"]).arg(&every);
    succeed(&mut command);
    let listed = [
        json(&every.join("memory.aimem.json"))["x-memport-retracted"][0]["conversation_id"].clone(),
        json(&every.join("memory.mif.json"))["vendor_extensions"]["memport"]["retracted_conversations"][0]["conversation_id"].clone(),
        json(&every.join("memory.aime.json"))["extensions"]["memport"]["retractedConversations"][0]["session"].clone(),
        json(&every.join("pam").join("memory-store.json"))["conversations_index"][0]["id"].clone(),
    ];
    assert_eq!(listed, ["job", "job", "job", "chatgpt-job"], "each format lists the retraction");
    let mif = json(&every.join("memory.mif.json"))["vendor_extensions"]["memport"]["retracted_conversations"][0].clone();
    let month_one: Vec<Value> = json(&run_one.join("memory.ump.json")).as_array().cloned().unwrap();
    let title = month_one.iter().find(|record| record["body"]["structured"]["conversation_id"] == "job").unwrap()["body"]["structured"]
        ["conversation_title"]
        .clone();
    assert_eq!((&mif["title"], &mif["retracted_by"]), (&title, &Value::from(run_two.file_name().unwrap().to_str().unwrap())));
    assert!(mif["created_at"].is_string(), "the UMP tombstone keeps the conversation's start: {mif}");
    assert_outputs_validate_in(&every);

    // Both months in one run: a conversation an input holds is written, not also retracted
    // (a PAM store listing it twice would not validate), and the run says why.
    let both = work.path().join("both");
    let report_file = work.path().join("both.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_memport"));
    command.arg("convert").arg(run_one.join("memory.ump.json")).arg(run_two.join("memory.ump.json"));
    command.args(["--to", "pam,aimem", "-q", "--exported-at", "2026-12-01T00:00:00Z", "--report"]).arg(&report_file).arg("-o").arg(&both);
    succeed(&mut command);
    let report = json(&report_file);
    assert_eq!(report["warnings"]["retraction_of_a_conversation_read"], 1, "{report}");
    assert!(report["counts"].get("retractions_carried").is_none(), "{report}");
    assert_outputs_validate_in(&both);

    // A memory forgotten in UMP (tombstoned, as `ump.forget` leaves it) whose message is still there.
    let mut records: Vec<Value> = json(&run_one.join("memory.ump.json")).as_array().cloned().unwrap();
    let lyon = records
        .iter_mut()
        .find(|record| {
            record["body"]["structured"]["message_id"].is_null()
                && record["body"]["text"].as_str().is_some_and(|text| text.contains("Lyon"))
        })
        .expect("month 1 has a home memory");
    lyon["lifecycle"]["status"] = "tombstoned".into();
    let forgotten = work.path().join("forgotten.ump.json");
    std::fs::write(&forgotten, serde_json::to_vec(&records).unwrap()).unwrap();
    let folder = work.path().join("read-forgotten");
    std::fs::create_dir(&folder).unwrap();
    let (counts, written) = convert_to_ump_ndjson(&forgotten, &folder);
    assert_eq!(counts["memories_retracted"], 1, "{counts}");
    let memories: Vec<&str> = written
        .iter()
        .filter(|record| record["body"]["structured"]["message_id"].is_null() && record["lifecycle"]["status"] != "tombstoned")
        .filter_map(|record| record["body"]["text"].as_str())
        .collect();
    assert!(!memories.iter().any(|text| text.contains("Lyon")), "the forgotten memory is not extracted again: {memories:?}");
    assert!(memories.iter().any(|text| text.contains("nurse")), "the other memory is written: {memories:?}");
    assert!(
        written.iter().any(|record| record["body"]["text"] == "I live in Lyon."),
        "the message itself is not forgotten, and is written: {written:?}"
    );
}
