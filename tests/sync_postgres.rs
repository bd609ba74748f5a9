//! The shared sync state in a real PostgreSQL server (`scripts/test` starts one on loopback and
//! names it in `MEMPORT_TEST_POSTGRES_URL`): a sync into it writes what a sync into a SQLite
//! file writes, tenants sync at once while a tenant's second sync is refused, and a worker
//! killed mid-run leaves the tenant's state as it was, with its lock gone.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use memport::sync::postgres_state::PostgresState;
use memport::sync::state::{StateError, StateStore};
use memport::sync::{RUNS_FOLDER, SYNC_REPORT};

use crate::sync::{EVERY_FORMAT, Months, assert_same_run, json, memport_sync_to, names, succeed};
use crate::util::{forget_hard, ndjson};

/// The test server's URL. Without it the tests cannot run: they fail saying how to get one.
fn server() -> String {
    std::env::var("MEMPORT_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!("MEMPORT_TEST_POSTGRES_URL is not set: run the tests with scripts/test, which starts a PostgreSQL server (scripts/postgres-test-server)")
    })
}

/// A tenant name no other test (or earlier run against the same server) uses.
fn unique_tenant(name: &str) -> String {
    format!("{name}-{}", std::process::id())
}

/// `memport sync` into `formats` with the shared state, as tenant `tenant`.
fn shared_sync(export: &Path, tenant: &str, out: &Path, exported_at: &str) -> std::process::Command {
    let mut command = memport_sync_to(EVERY_FORMAT, export, Path::new(&server()), out, exported_at);
    command.args(["--tenant", tenant]);
    command
}

/// The run ids the shared state logged for `tenant`.
fn logged(tenant: &str) -> Vec<String> {
    let status = memport::sync::status::read(&PathBuf::from(server()), tenant).unwrap_or_else(|error| panic!("the status reads: {error}"));
    status.runs.into_iter().map(|run| run.run_id).collect()
}

/// Guards the shared state's equivalence: two months synced into PostgreSQL write, byte for
/// byte, the run folders the same months write with a SQLite state, in every format.
#[test]
fn a_postgres_state_writes_what_a_sqlite_state_writes() {
    let months = Months::generate("chatgpt", 120);
    let work = tempfile::tempdir().unwrap();
    let (shared_out, file_out, file_state) = (work.path().join("shared"), work.path().join("file"), work.path().join("state.db"));
    let tenant = unique_tenant("equivalence");
    for month in [1, 2] {
        let time = months.exported_at_text(month).to_owned();
        succeed(&mut shared_sync(&months.export(month), &tenant, &shared_out, &time));
        let mut file = memport_sync_to(EVERY_FORMAT, &months.export(month), &file_state, &file_out, &time);
        file.args(["--tenant", &tenant]);
        succeed(&mut file);
    }
    let runs = logged(&tenant);
    assert_eq!(runs.len(), 2, "the shared state logged both runs: {runs:?}");
    assert_eq!(names(&shared_out.join(RUNS_FOLDER)), names(&file_out.join(RUNS_FOLDER)), "both states name the runs alike");
    for run in &runs {
        assert_same_run(&shared_out.join(RUNS_FOLDER).join(run), &shared_out, &file_out.join(RUNS_FOLDER).join(run), &file_out);
    }
    let report = json(&shared_out.join(RUNS_FOLDER).join(&runs[1]).join(SYNC_REPORT));
    assert!(report["conversations"]["unchanged"].as_u64().unwrap_or(0) > 0, "the second month is a delta: {}", report["conversations"]);

    let output = std::process::Command::new(env!("CARGO_BIN_EXE_memport"))
        .args(["sync", "--status", "--state", &server(), "--tenant", &tenant])
        .output()
        .unwrap();
    assert!(output.status.success(), "--status reads the shared state: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("2 runs") && text.contains(&runs[1]), "--status lists the tenant's runs: {text}");
    let other = memport::sync::status::read(&PathBuf::from(server()), &unique_tenant("nobody")).expect("another tenant's status reads");
    assert!(other.runs.is_empty(), "another tenant sees none of these runs");
}

/// Guards erasure with the shared state: a memory and a message an earlier sync wrote and the
/// store erased since are withdrawn in the next delta as with a SQLite state (the run folders
/// are alike byte for byte), the memory emptied, and the shared state keeps none of its words
/// and remembers the message as withdrawn.
#[test]
fn an_erased_memory_is_withdrawn_alike_with_a_postgres_state() {
    let months = Months::generate("chatgpt", 120);
    let work = tempfile::tempdir().unwrap();
    let (shared_out, file_out, file_state) = (work.path().join("shared"), work.path().join("file"), work.path().join("state.db"));
    let tenant = unique_tenant("erasure");
    let formats = "store,ump-ndjson,pam,aimem";
    let sync_month = |month: usize| {
        let time = months.exported_at_text(month).to_owned();
        let mut shared = memport_sync_to(formats, &months.export(month), Path::new(&server()), &shared_out, &time);
        succeed(shared.args(["--tenant", &tenant]));
        let mut file = memport_sync_to(formats, &months.export(month), &file_state, &file_out, &time);
        succeed(file.args(["--tenant", &tenant]));
    };
    sync_month(1);
    let first = logged(&tenant);
    let records = ndjson(&shared_out.join(RUNS_FOLDER).join(&first[0]).join("memory.ump.ndjson"));
    let memory = records
        .iter()
        .find(|record| record["body"]["structured"]["memport_type"].is_string() && record["lifecycle"]["status"] == "active")
        .expect("month 1 has an extracted memory");
    let (record_id, memory_id) = (memory["id"].as_str().unwrap(), memory["body"]["structured"]["provider_memory_id"].as_str().unwrap());
    let message = records
        .iter()
        .find(|record| record["body"]["structured"]["role"] == "user" && record["body"]["structured"]["message_id"].is_string())
        .expect("month 1 has a user message");
    let message_record_id = message["id"].as_str().unwrap();
    for out in [&shared_out, &file_out] {
        let forget = forget_hard(&out.join("memory.db"), &[record_id, message_record_id]);
        assert!(forget.status.success(), "{}", String::from_utf8_lossy(&forget.stderr));
    }
    sync_month(2);
    let runs = logged(&tenant);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_same_run(&shared_out.join(RUNS_FOLDER).join(&runs[1]), &shared_out, &file_out.join(RUNS_FOLDER).join(&runs[1]), &file_out);
    let report = json(&shared_out.join(RUNS_FOLDER).join(&runs[1]).join(SYNC_REPORT));
    assert_eq!(report["memories"]["erased"], 1, "{}", report["memories"]);
    assert_eq!(report["conversations"]["messages_withdrawn"], 1, "{}", report["conversations"]);
    let mut state = PostgresState::open(&server(), &tenant).expect("the state opens");
    assert!(state.withdrawn_messages().expect("the state reads").contains(message_record_id), "the state remembers the withdrawal");
    let entry = state.memory(memory_id).expect("the state reads").expect("the state still knows the memory by id");
    assert!(entry.retracted, "it is retracted in the state");
    assert_eq!((entry.statement.as_str(), entry.value.as_str()), (memport::model::ERASED_MEMORY_TEXT, ""), "its words are gone");
}

/// Guards the one-sync-per-tenant lock: while a tenant's run is open, a second sync of the same
/// tenant is refused at once, another tenant syncs, and the lock goes with the run.
#[test]
fn tenants_sync_at_once_and_a_tenants_second_sync_is_refused() {
    let url = server();
    let (busy, free) = (unique_tenant("busy"), unique_tenant("free"));
    let mut first = PostgresState::open(&url, &busy).expect("the state opens");
    first.begin().expect("the first sync of a tenant begins");
    let mut second = PostgresState::open(&url, &busy).expect("a second connection opens");
    match second.begin() {
        Err(error @ StateError::Busy { .. }) => {
            assert!(error.to_string().contains("another memport sync is using it"), "{error}");
            assert!(!error.to_string().contains("password"), "{error}");
        }
        other => panic!("a second sync of the same tenant is refused: {other:?}"),
    }
    let mut other = PostgresState::open(&url, &free).expect("the state opens");
    other.begin().expect("another tenant syncs at the same time");
    other.rollback();
    first.rollback();
    second.begin().expect("once the first run ends, the tenant syncs again");
    second.rollback();
}

/// Guards crash safety on the shared state: a worker killed at any point of a run leaves the
/// tenant's run log as it was, its lock is gone with its connection, and the next sync
/// commits the run.
#[test]
fn a_killed_worker_leaves_the_shared_state_as_it_was_and_releases_its_tenant() {
    let months = Months::generate("claude", 800);
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let tenant = unique_tenant("killed");
    let (first, second) = (months.exported_at_text(1).to_owned(), months.exported_at_text(2).to_owned());
    succeed(&mut shared_sync(&months.export(1), &tenant, &out, &first));
    let month_one = logged(&tenant);
    let mut committed_before_the_kill = false;
    for delay in [5, 20, 60, 150, 400] {
        let mut child = shared_sync(&months.export(2), &tenant, &out, &second).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let finished = child.wait().unwrap().success();
        let runs = logged(&tenant);
        if finished || runs.len() > month_one.len() {
            // The worker committed before the kill: the later sync is one more (empty) delta.
            committed_before_the_kill = true;
            assert_eq!(runs[..month_one.len()], month_one[..], "a committed run is logged after month 1");
            break;
        }
        assert_eq!(runs, month_one, "killed after {delay} ms: the tenant's run log is as it was");
    }
    // The server ends a killed worker's session, and with it the transaction and its lock.
    succeed(&mut shared_sync(&months.export(2), &tenant, &out, &second));
    let runs = logged(&tenant);
    assert_eq!(runs.len(), 2 + usize::from(committed_before_the_kill), "the rerun is logged after month 1: {runs:?}");
    assert_eq!(runs[..month_one.len()], month_one[..], "month 1's run stays first");
    let mut sorted = runs.clone();
    sorted.sort();
    assert_eq!(names(&out.join(RUNS_FOLDER)), sorted, "the run folders are the committed runs, nothing left by the killed workers");
}
