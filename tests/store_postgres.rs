//! A memory store in a real PostgreSQL server (`scripts/test` starts one on loopback and names
//! it in `MEMPORT_TEST_POSTGRES_URL`), each test's in a schema of its own: a run loads what it
//! loads into a store file, a rerun changes nothing, `memport serve` answers UMP's binding and
//! AIMEM's profile from it, a monthly sync keeps it (`--store`) as it keeps `memory.db`, a
//! write that fails or waits too long leaves it as it was, a store's write lock holds no
//! other store, and its export reads the memories first through their own index, giving the
//! bundle a store file gives.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use memport::serve::token::Verb;
use memport::store::recall::RecallQuery;
use memport::store::{Store, StoreError};
use memport::timefmt::parse_rfc3339;
use serde_json::{Value, json};

use crate::brain_http::{chatgpt_bundle, exchange};
use crate::http_binding::{Server, memport, record_count, request, start_at, token};
use crate::sync::{Months, memport_sync_to, succeed};
use crate::util::examples;

/// The test server's URL. Without it the tests cannot run: they fail saying how to get one.
fn server() -> String {
    std::env::var("MEMPORT_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!("MEMPORT_TEST_POSTGRES_URL is not set: run the tests with scripts/test, which starts a PostgreSQL server (scripts/postgres-test-server)")
    })
}

/// The location of a store in a new, empty schema `name` (made again when an earlier run left
/// it), as a user names one: the server's URL with the schema as the connection's search path.
fn store_in_new_schema(name: &str) -> PathBuf {
    let schema = format!("{name}_{}", std::process::id());
    let mut client = postgres::Client::connect(&server(), postgres::NoTls).unwrap();
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")).unwrap();
    PathBuf::from(format!("{}?options=-csearch_path%3D{schema}", server()))
}

/// `memport convert` of `inputs` into the store at `store`; its stderr.
fn convert_into(inputs: &[PathBuf], store: &Path) -> String {
    let output = memport()
        .arg("convert")
        .args(inputs)
        .args(["--to", "store", "--branches", "all", "--threads", "2", "--exported-at", "2026-01-01T00:00:00Z", "-o"])
        .arg(store)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{said}");
    said
}

/// Every record of a store, in the order they were first stored.
fn records(store: &Path) -> Vec<String> {
    let mut all = Vec::new();
    Store::open(store, false)
        .unwrap()
        .for_each_record(|json| {
            all.push(json.to_owned());
            Ok(())
        })
        .unwrap();
    all
}

#[test]
fn a_store_in_postgres_holds_what_a_store_file_holds_and_a_rerun_changes_nothing() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("memory.db");
    convert_into(&examples(), &file);
    let database = store_in_new_schema("same_records");
    convert_into(&examples(), &database);
    let (in_file, in_database) = (records(&file), records(&database));
    assert!(in_file.len() > 500, "{}", in_file.len());
    assert_eq!(in_database, in_file, "the same records, byte for byte, in the same order");
    assert_eq!(record_count(&database), record_count(&file));
    assert!(Store::open(&database, false).unwrap().check_integrity().unwrap().is_empty());
    let validated = memport().arg("validate").arg(&database).output().unwrap();
    assert!(validated.status.success(), "{}", String::from_utf8_lossy(&validated.stdout));

    let again = convert_into(&examples(), &database);
    assert!(again.contains("(store, 0 records"), "a rerun loads nothing new: {again}");
    assert_eq!(records(&database), in_file);

    // What was erased there stays out of the next run, as in a store file.
    let erased = serde_json::from_str::<Value>(&in_file[0]).unwrap()["id"].as_str().unwrap().to_owned();
    let forgot = crate::util::forget_hard(&database, &[&erased]);
    assert!(forgot.status.success(), "{}", String::from_utf8_lossy(&forgot.stderr));
    convert_into(&examples(), &database);
    let store = Store::open(&database, false).unwrap();
    assert!(store.get(&erased).unwrap().is_none() && store.is_erased(&erased).unwrap());
}

#[test]
fn memport_serve_answers_umps_binding_and_aimems_profile_from_a_store_in_postgres() {
    let database = store_in_new_schema("served");
    let claude: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("claude-small")).collect();
    convert_into(&claude, &database);
    let server: Server = start_at(database.clone(), tempfile::tempdir().unwrap(), &["--request-timeout", "5"]);
    let (reader, writer) = (token(&[Verb::Read], None, 3600), token(&[Verb::Read, Verb::Write, Verb::Export], None, 3600));

    let (status, remembered) = request(
        &server,
        "POST",
        "/ump/remember",
        Some(&writer),
        json!({"record": {"kind": "semantic", "body": {"text": "Keeps three beehives on the roof"}}}).to_string().as_bytes(),
    );
    assert_eq!((status, remembered["result"].as_str()), (200, Some("created")), "{remembered}");
    let id = remembered["id"].as_str().unwrap().to_owned();
    let (status, recalled) =
        request(&server, "POST", "/ump/recall", Some(&reader), json!({"query": "how many beehives", "limit": 3}).to_string().as_bytes());
    assert_eq!(status, 200, "{recalled}");
    assert_eq!(recalled["results"][0]["record"]["id"], json!(id), "{recalled}");
    assert!(recalled["results"][0]["signals"]["similarity"].as_f64().is_some_and(|similarity| similarity > 0.99));

    let patch = json!({"id": id, "patch": {"body": {"text": "Keeps four beehives on the roof"}}});
    let (status, revised) = request(&server, "POST", "/ump/revise", Some(&writer), patch.to_string().as_bytes());
    assert_eq!((status, &revised["supersedes"]), (200, &json!([id])), "{revised}");
    let successor = revised["id"].as_str().unwrap().to_owned();
    let (_, recalled) = request(&server, "POST", "/ump/recall", Some(&reader), json!({"query": "beehives"}).to_string().as_bytes());
    let found: Vec<&str> = recalled["results"].as_array().unwrap().iter().filter_map(|hit| hit["record"]["id"].as_str()).collect();
    assert_eq!(found, [successor.as_str()], "only the current record is valid now: {recalled}");

    let (status, forgotten) = request(
        &server,
        "POST",
        "/ump/forget",
        Some(&writer),
        json!({"id": successor, "hard": true, "reason": "test"}).to_string().as_bytes(),
    );
    assert_eq!((status, forgotten), (200, json!({"result": "erased"})));
    let (status, _) = request(&server, "GET", &format!("/ump/memory/{successor}"), Some(&reader), b"");
    assert_eq!(status, 404);

    // AIMEM's profile: a bundle in, idempotent, and the whole brain out as a bundle memport accepts.
    let folder = tempfile::tempdir().unwrap();
    let bundle = chatgpt_bundle(folder.path());
    let before = record_count(&database);
    let (status, _, body) = exchange(&server, "POST", "/v1/brain/import", Some(&writer), &bundle);
    let summary: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status, 200, "{summary}");
    let inserted = summary["inserted"].as_u64().unwrap();
    assert!(inserted > 300, "{summary}");
    assert_eq!(record_count(&database).0, before.0 + inserted);
    let (_, _, body) = exchange(&server, "POST", "/v1/brain/import", Some(&writer), &bundle);
    let again: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(again["inserted"].as_u64(), Some(0), "{again}");
    let (status, _, export) = exchange(&server, "GET", "/v1/brain/export?scope=FULL", Some(&writer), b"");
    assert_eq!(status, 200);
    let exported = folder.path().join("export.aimem.json");
    std::fs::write(&exported, &export).unwrap();
    let validated = Command::new(env!("CARGO_BIN_EXE_memport")).arg("validate").arg(&exported).output().unwrap();
    assert!(validated.status.success(), "{}", String::from_utf8_lossy(&validated.stdout));
}

#[test]
fn a_write_that_fails_or_waits_too_long_leaves_a_store_in_postgres_as_it_was() {
    let database = store_in_new_schema("all_or_nothing");
    let claude: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("claude-small")).collect();
    convert_into(&claude, &database);
    let before = records(&database);
    let now = parse_rfc3339("2026-06-01T00:00:00Z").unwrap();

    let mut store = Store::open(&database, true).unwrap();
    let first = serde_json::from_str::<Value>(&before[0]).unwrap()["id"].as_str().unwrap().to_owned();
    let failed: Result<(), StoreError> = store.in_transaction(|store| {
        store.forget(&first, "test", false, now)?;
        store.forget("urn:ump:not-there", "test", false, now).map(drop)
    });
    assert!(matches!(failed, Err(StoreError::NotFound(_))), "{failed:?}");
    assert_eq!(records(&database), before, "the first forget was rolled back with the second");

    // A second writer waits for the first, and is refused once its busy timeout has passed.
    let mut second = Store::open(&database, true).unwrap();
    second.set_busy_timeout(Duration::from_millis(300));
    let refused = store.in_transaction(|_| second.in_transaction(|store| store.forget(&first, "test", false, now)));
    assert!(matches!(refused, Err(StoreError::Busy)), "{refused:?}");
    assert_eq!(records(&database), before);

    // The lock is the store's: while it is held, the store opens at once for another writer
    // (which would wait only to write), and a store in another schema takes writes.
    let other = store_in_new_schema("other_store");
    let beside = store.in_transaction(|_| {
        let opening = std::time::Instant::now();
        drop(Store::open(&database, true)?);
        assert!(opening.elapsed() < Duration::from_secs(2), "opened in {:?}", opening.elapsed());
        let mut apart = Store::create(&other, "owner")?;
        apart.set_busy_timeout(Duration::from_millis(300));
        let record = json!({"ump": "0.1", "id": "urn:ump:apart", "kind": "semantic", "body": {"text": "Keeps bees"},
            "time": {"created": "2026-01-02T03:04:05Z"}});
        apart.in_transaction(|apart| apart.put(&record))
    });
    assert!(beside.is_ok(), "{beside:?}");
    assert_eq!(record_count(&other).0, 1);

    // Recall answers with the records that say the words.
    let answered = store.recall(&RecallQuery { query: "backoff".into(), valid_at: now, limit: 5, ..RecallQuery::default() }).unwrap();
    assert!(!answered.is_empty());
    assert!(answered.iter().all(|hit| hit.record["body"]["text"].as_str().is_some_and(|text| text.to_lowercase().contains("backoff"))));
}

#[test]
fn a_monthly_sync_keeps_its_store_in_postgres_as_it_keeps_memory_db() {
    let months = Months::generate("chatgpt", 40);
    let work = tempfile::tempdir().unwrap();
    let database = store_in_new_schema("synced");
    for month in [1, 2] {
        let (export, at) = (months.export(month), months.exported_at_text(month));
        succeed(&mut memport_sync_to("store", &export, &work.path().join("file.db"), &work.path().join("file"), at));
        succeed(memport_sync_to("store", &export, &work.path().join("db.db"), &work.path().join("db"), at).arg("--store").arg(&database));
        assert!(!work.path().join("db").join("memory.db").exists(), "month {month}: no store file beside runs/");
        let in_file = records(&work.path().join("file").join("memory.db"));
        assert_eq!(records(&database), in_file, "month {month}: the same records as memory.db, in the same order");
    }
    let (all, tombstoned) = record_count(&database);
    assert!(all > 100 && tombstoned > 0, "month 2 deleted conversations, tombstoned in the store: {all} {tombstoned}");

    // A sync job as a pipeline file, its [sync] table naming the store.
    let piped = store_in_new_schema("piped");
    let job = work.path().join("sync.toml");
    let toml = format!(
        "version = 1\ninputs = [{:?}]\n[sync]\nstate = \"job.db\"\noutput = \"job\"\nformats = [\"store\"]\nstore = {:?}\n",
        months.export(1).display().to_string(),
        piped.display().to_string()
    );
    std::fs::write(&job, toml).unwrap();
    let ran = memport().arg("run").arg(&job).args(["--exported-at", months.exported_at_text(1)]).output().unwrap();
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    assert!(!work.path().join("job").join("memory.db").exists(), "the pipeline's store is the database's");
    assert!(record_count(&piped).0 > 100, "month 1 is in the pipeline's store");

    let refused = memport_sync_to("aimem", &months.export(2), &work.path().join("db.db"), &work.path().join("db"), "2026-03-01T00:00:00Z")
        .arg("--store")
        .arg(&database)
        .output()
        .unwrap();
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("--store"), "--store without store in --to");
}

/// The ids `store` recalls for `words` at mid-2026.
fn recalled_ids(store: &Store, words: &str) -> Vec<String> {
    let query =
        RecallQuery { query: words.into(), valid_at: parse_rfc3339("2026-06-01T00:00:00Z").unwrap(), limit: 10, ..RecallQuery::default() };
    store.recall(&query).unwrap().into_iter().map(|hit| hit.record["id"].as_str().unwrap().to_owned()).collect()
}

/// A UMP record of `text` under `id`.
fn semantic(id: &str, text: &str) -> Value {
    json!({"ump": "0.1", "id": id, "kind": "semantic", "body": {"text": text}, "time": {"created": "2026-01-02T03:04:05Z"}})
}

#[test]
fn recall_on_a_store_in_postgres_follows_other_connections_writes_and_bulk_loads() {
    let database = store_in_new_schema("indexed");
    let mut writer = Store::create(&database, "owner").unwrap();
    writer.in_transaction(|store| store.put(&semantic("urn:ump:aa", "Works as a carpenter"))).unwrap();
    let reader = Store::open(&database, false).unwrap();
    assert!(reader.searches_in_memory());
    assert_eq!(recalled_ids(&reader, "carpenter"), ["urn:ump:aa"], "the index is built on first use");

    // Another connection adds, replaces and erases; a write rolled back leaves nothing behind.
    writer.in_transaction(|store| store.put(&semantic("urn:ump:bb", "Bought a carpenter's plane"))).unwrap();
    writer.in_transaction(|store| store.put(&semantic("urn:ump:aa", "Works as a nurse"))).unwrap();
    let rolled_back: Result<(), StoreError> = writer.in_transaction(|store| {
        store.put(&semantic("urn:ump:cc", "Carpenter of the year"))?;
        Err(StoreError::Busy)
    });
    assert!(rolled_back.is_err());
    assert_eq!(recalled_ids(&reader, "carpenter"), ["urn:ump:bb"], "the replaced text no longer matches");
    assert_eq!(recalled_ids(&reader, "nurse"), ["urn:ump:aa"]);
    writer.in_transaction(|store| store.forget("urn:ump:bb", "test", true, 0).map(drop)).unwrap();
    assert!(recalled_ids(&reader, "carpenter").is_empty(), "an erased record is gone from the index");
    writer.in_transaction(|store| store.put(&semantic("urn:ump:dd", "Carves spoons like a carpenter"))).unwrap();
    assert_eq!(recalled_ids(&reader, "carpenter"), ["urn:ump:dd"], "a write after a rolled-back one is seen");

    // A run loads in bulk, logging nothing: the index is built again from the records.
    drop(writer);
    let claude: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("claude-small")).collect();
    convert_into(&claude, &database);
    let backoff = recalled_ids(&reader, "backoff");
    assert!(!backoff.is_empty(), "what the run loaded is found");
    assert_eq!(recalled_ids(&reader, "nurse"), ["urn:ump:aa"], "and what was there before");
}

#[test]
fn a_store_in_postgres_of_version_1_is_searched_in_the_database_until_it_is_opened_for_writing() {
    let database = store_in_new_schema("version_1");
    let writer = Store::create(&database, "owner").unwrap();
    writer.put(&semantic("urn:ump:aa", "Keeps bees on the roof")).unwrap();
    drop(writer);
    // What a store made by a build before the change log holds.
    let mut client = postgres::Client::connect(&format!("{}", database.display()), postgres::NoTls).unwrap();
    client
        .batch_execute(
            "DROP TABLE memport_store_changes; DROP FUNCTION memport_store_log_changes() CASCADE;
             UPDATE memport_store_meta SET value = '1' WHERE key = 'schema_version';",
        )
        .unwrap();
    let reader = Store::open(&database, false).unwrap();
    assert!(!reader.searches_in_memory());
    assert_eq!(recalled_ids(&reader, "bees"), ["urn:ump:aa"], "ts_rank over the tsvector answers");
    let mut writer = Store::open(&database, true).unwrap();
    assert!(writer.searches_in_memory(), "opened for writing, the store gained its change log");
    let version: String = client.query_one("SELECT value FROM memport_store_meta WHERE key = 'schema_version'", &[]).unwrap().get(0);
    assert_eq!(version, "2");
    assert_eq!(recalled_ids(&writer, "bees"), ["urn:ump:aa"]);
    writer.in_transaction(|store| store.put(&semantic("urn:ump:bb", "Sells honey from the bees"))).unwrap();
    assert_eq!(recalled_ids(&writer, "honey"), ["urn:ump:bb"]);
}

/// The records of an AIMEM NDJSON bundle, without its envelope line (which names the store's
/// owner as tenant, and so its checksum).
fn bundle_records(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().skip(1).map(str::to_owned).collect()
}

#[test]
fn a_store_in_postgres_exports_its_memories_first_through_their_own_index_and_gives_a_store_files_bundle() {
    use memport::serve::brain::{Scope, export};
    let database = store_in_new_schema("memories_index");
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("memory.db");
    let chatgpt = [examples()[0].clone()];
    convert_into(&chatgpt, &database);
    convert_into(&chatgpt, &file);
    let (in_database, in_file) = (Store::open(&database, false).unwrap(), Store::open(&file, false).unwrap());
    // Written by a run, the store got the memories' index: the export reads them alone first.
    assert!(in_database.lists_memories_apart());
    assert!(in_file.lists_memories_apart());
    // The memories read alone are the store file's.
    let memories_of = |store: &Store| {
        let mut read = Vec::new();
        let memories_only = memport::store::ExportFilter { memories_only: true, ..Default::default() };
        store
            .for_each_exported(&memories_only, |exported| {
                read.push((exported.kind.to_owned(), exported.agent.map(str::to_owned), exported.record.to_owned()));
                Ok::<(), StoreError>(())
            })
            .unwrap();
        read
    };
    // With the columns an export reads beside each record: its kind and agent, as it says them.
    let memories = memories_of(&in_file);
    assert!(!memories.is_empty());
    for (kind, agent, record) in &memories {
        let record: serde_json::Value = serde_json::from_str(record).unwrap();
        assert!(kind != "episodic" && record["kind"] == kind.as_str());
        assert_eq!(record["scope"]["agent"].as_str(), agent.as_deref());
    }
    assert_eq!(memories_of(&in_database), memories);
    // And the planner can read them through the index (whatever it picks for a table this small).
    let mut client = postgres::Client::connect(&format!("{}", database.display()), postgres::NoTls).unwrap();
    client.batch_execute("SET enable_seqscan = off").unwrap();
    let explained = "EXPLAIN SELECT kind, record FROM memport_store_records WHERE kind <> 'episodic' ORDER BY seq";
    let plan: Vec<String> = client.query(explained, &[]).unwrap().iter().map(|row| row.get(0)).collect();
    assert!(plan.iter().any(|line| line.contains("memport_store_records_memories")), "{plan:?}");
    client.batch_execute("RESET enable_seqscan").unwrap();
    let from_file = export(&in_file, Scope::Full, None, true, 0, 2).unwrap();
    let expected = bundle_records(&from_file.path);
    assert!(expected.iter().any(|line| line.starts_with(r#"{"_kind":"chunk_entity""#)), "the example's memories name entities");
    let from_database = export(&in_database, Scope::Full, None, true, 0, 2).unwrap();
    assert!(bundle_records(&from_database.path) == expected, "the same records as the store file's bundle");
    let validated = memport().arg("validate").arg(&from_database.path).output().unwrap();
    assert!(validated.status.success(), "{}", String::from_utf8_lossy(&validated.stdout));
    drop(in_database);
    // A store from before the index, served read-only, exports the same bundle the longer way.
    client.batch_execute("DROP INDEX memport_store_records_memories").unwrap();
    let older = Store::open(&database, false).unwrap();
    assert!(!older.lists_memories_apart(), "opened only for reading, the store is left as it is");
    let the_longer_way = export(&older, Scope::Full, None, true, 0, 2).unwrap();
    assert!(bundle_records(&the_longer_way.path) == expected);
    drop(older);
    // A role that may write the store but does not own its tables cannot make the index: the
    // store opens for writing all the same, without it.
    let writer_role = format!("memport_writer_{}", std::process::id());
    let schema = database.to_string_lossy().rsplit("%3D").next().unwrap().to_owned();
    let as_writer = {
        let url = database.to_string_lossy().into_owned();
        let (scheme, rest) = url.split_once("://").unwrap();
        let host_and_rest = rest.split_once('@').map_or(rest, |(_, after)| after);
        PathBuf::from(format!("{scheme}://{writer_role}@{host_and_rest}"))
    };
    client
        .batch_execute(&format!(
            "DROP ROLE IF EXISTS {writer_role}; CREATE ROLE {writer_role} LOGIN;
             GRANT USAGE ON SCHEMA {schema} TO {writer_role};
             GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {writer_role};"
        ))
        .unwrap();
    let not_owner = Store::open(&as_writer, true);
    client.batch_execute(&format!("DROP OWNED BY {writer_role}; DROP ROLE {writer_role}")).unwrap();
    assert!(!not_owner.unwrap().lists_memories_apart(), "opened for writing without the index");
    assert!(Store::open(&database, true).unwrap().lists_memories_apart(), "opened for writing by its owner, it gets the index");
}
