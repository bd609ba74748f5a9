//! memport on Apache Spark (`pipelines/spark/memport_spark.py`) in local-cluster mode, with two
//! executor processes: a fleet of generated exports of every provider converted into one corpus
//! and a run-report table, with balanced counts, a refused export reported with memport's
//! reason, and a re-run that redoes nothing and adds no duplicate; then the same fleet's
//! months synced per tenant into the shared PostgreSQL state. `scripts/test` installs PySpark
//! (into `.venv`) and a JRE, and names `spark-submit` in `MEMPORT_TEST_SPARK_SUBMIT`.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arrow_array::{Array, Int64Array, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::{FileReader, SerializedFileReader};
use serde_json::Value;

use crate::object_storage::{downloaded, unique, upload_zip_of};
use crate::sync::{Months, files, json};
use crate::util::root;

/// The generator's names of every provider memport reads.
const PROVIDERS: [&str; 5] = ["chatgpt", "claude", "grok", "copilot", "gemini-json"];

fn spark_submit() -> PathBuf {
    std::env::var_os("MEMPORT_TEST_SPARK_SUBMIT").map(PathBuf::from).unwrap_or_else(|| {
        panic!(
            "MEMPORT_TEST_SPARK_SUBMIT is not set: run the tests with scripts/test, which installs PySpark and a JRE and names spark-submit"
        )
    })
}

/// Runs the driver on `manifest` in local-cluster mode (two executors of one core each).
fn run_fleet(manifest: &Path, out: &Path, corpus: &Path, state: Option<&str>) -> Output {
    let submit = spark_submit();
    // spark-submit finds Spark beside the Python it runs with: the virtual environment's.
    let venv_bin = submit.parent().expect("spark-submit is in a folder").to_owned();
    let path = std::env::join_paths(std::iter::once(venv_bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())))
        .expect("a PATH");
    let mut command = Command::new(&submit);
    command
        .env("PATH", path)
        .args(["--master", "local-cluster[2,1,1024]", "--conf", "spark.task.maxFailures=2", "--conf", "spark.ui.enabled=false"])
        .arg(root().join("pipelines/spark/memport_spark.py"))
        .arg("--exports")
        .arg(manifest)
        .arg("--out")
        .arg(out)
        .arg("--corpus")
        .arg(corpus)
        .arg("--memport")
        .arg(env!("CARGO_BIN_EXE_memport"))
        .args(["--to", "parquet,aimem-ndjson"]);
    if let Some(state) = state {
        command.args(["--state", state]);
    }
    command.output().expect("spark-submit runs")
}

fn write_manifest(path: &Path, rows: &[(String, PathBuf, String)]) {
    let mut text = String::from("tenant,export,exported_at\n");
    for (tenant, export, exported_at) in rows {
        text.push_str(&format!("{tenant},{},{exported_at}\n", export.display()));
    }
    std::fs::write(path, text).unwrap();
}

/// Every row of the report table, by tenant and export: the columns as strings.
fn report_rows(out: &Path) -> Vec<BTreeMap<String, String>> {
    let mut rows = Vec::new();
    let folder = out.join("_reports");
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|error| panic!("the report table {} exists: {error}", folder.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "parquet"))
        .collect();
    parts.sort();
    for part in parts {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&part).unwrap()).unwrap().build().unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            for row in 0..batch.num_rows() {
                let mut values = BTreeMap::new();
                for (index, field) in batch.schema().fields().iter().enumerate() {
                    let column = batch.column(index);
                    let value = if column.is_null(row) {
                        String::new()
                    } else if let Some(strings) = column.as_any().downcast_ref::<StringArray>() {
                        strings.value(row).to_owned()
                    } else if let Some(numbers) = column.as_any().downcast_ref::<Int64Array>() {
                        numbers.value(row).to_string()
                    } else {
                        continue;
                    };
                    values.insert(field.name().clone(), value);
                }
                rows.push(values);
            }
        }
    }
    rows
}

fn number(row: &BTreeMap<String, String>, column: &str) -> u64 {
    row.get(column).and_then(|value| value.parse().ok()).unwrap_or_else(|| panic!("the report row has {column}: {row:?}"))
}

/// Rows of `table` in the corpus, by tenant (from the Hive folders).
fn corpus_rows(corpus: &Path, table: &str) -> BTreeMap<String, u64> {
    let mut rows = BTreeMap::new();
    for (name, _) in files(&corpus.join(table)) {
        if !name.ends_with(".parquet") {
            continue;
        }
        let tenant = name.split('/').find_map(|part| part.strip_prefix("tenant=")).expect("a tenant= folder").to_owned();
        let reader = SerializedFileReader::new(File::open(corpus.join(table).join(&name)).unwrap()).unwrap();
        *rows.entry(tenant).or_insert(0) += u64::try_from(reader.metadata().file_metadata().num_rows()).unwrap();
    }
    rows
}

fn assert_balanced(row: &BTreeMap<String, String>) {
    let read = number(row, "messages_read");
    let accounted = number(row, "messages_written")
        + number(row, "messages_duplicate")
        + number(row, "messages_skipped")
        + number(row, "messages_rejected");
    assert_eq!(read, accounted, "every message read is written, a duplicate, skipped or rejected: {row:?}");
}

/// Guards the fleet job: every provider's export converted on two executors into one corpus
/// whose rows are the reports' written counts, a refused export reported with its reason, and a
/// re-run that skips what finished and leaves the corpus byte for byte as it was; then months
/// synced per tenant into the shared PostgreSQL state, each a partition of the corpus.
#[test]
fn a_fleet_converts_and_syncs_into_one_corpus_with_balanced_counts_and_no_duplicates_after_a_rerun() {
    let work = tempfile::tempdir().unwrap();
    let months: Vec<Months> = PROVIDERS.iter().map(|provider| Months::generate(provider, 30)).collect();
    let broken = work.path().join("not-an-export.json");
    std::fs::write(&broken, b"this is not an export").unwrap();
    let mut rows: Vec<(String, PathBuf, String)> = months
        .iter()
        .map(|month| (format!("t-{}", month.memport_provider()), month.export(1), month.exported_at_text(1).to_owned()))
        .collect();
    rows.push(("t-broken".to_owned(), broken, String::new()));
    let manifest = work.path().join("fleet.csv");
    write_manifest(&manifest, &rows);
    let (out, corpus) = (work.path().join("out"), work.path().join("corpus"));

    let first = run_fleet(&manifest, &out, &corpus, None);
    let stdout = String::from_utf8_lossy(&first.stdout);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(1), "one export fails, so the job says so: {stdout}{stderr}");
    assert!(stdout.contains("6 exports: 5 done, 0 done before, 1 failed"), "the driver sums up the fleet: {stdout}");
    let reports = report_rows(&out);
    assert_eq!(reports.len(), 6, "the report table has a row per export: {reports:?}");
    let failed: Vec<_> = reports.iter().filter(|row| row["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "the broken export is the one failure: {reports:?}");
    assert_eq!(failed[0]["tenant"], "t-broken");
    assert!(!failed[0]["error"].is_empty(), "a failure carries memport's reason: {:?}", failed[0]);
    let by_tenant = corpus_rows(&corpus, "messages");
    for row in reports.iter().filter(|row| row["status"] == "done") {
        assert_balanced(row);
        let provider = row["tenant"].trim_start_matches("t-");
        assert_eq!(row["providers"], provider, "memport told the provider from the content: {row:?}");
        assert!(number(row, "messages_written") > 0, "the export wrote messages: {row:?}");
        // The Parquet `messages` table has a row for every message read, with what became of it.
        assert_eq!(
            by_tenant.get(&row["tenant"]).copied().unwrap_or(0),
            number(row, "messages_read"),
            "the corpus holds exactly the messages {} read",
            row["tenant"]
        );
        assert!(
            corpus.join("messages").join(format!("tenant={}", row["tenant"])).join(format!("provider={provider}")).is_dir(),
            "the corpus is partitioned by tenant and provider"
        );
    }

    let corpus_before = files(&corpus);
    let again = run_fleet(&manifest, &out, &corpus, None);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(
        stdout.contains("6 exports: 0 done, 5 done before, 1 failed"),
        "the re-run redoes only the export that did not finish: {stdout}"
    );
    assert!(files(&corpus) == corpus_before, "the re-run leaves the corpus byte for byte as it was: no duplicates");

    // The same providers' two months, synced per tenant into the shared state.
    let state = std::env::var("MEMPORT_TEST_POSTGRES_URL").expect("MEMPORT_TEST_POSTGRES_URL: run the tests with scripts/test");
    let tenant = |month: &Months| format!("s-{}-{}", month.memport_provider(), std::process::id());
    let rows: Vec<(String, PathBuf, String)> = months
        .iter()
        .flat_map(|month| (1..=2).map(move |index| (tenant(month), month.export(index), month.exported_at_text(index).to_owned())))
        .collect();
    let manifest = work.path().join("months.csv");
    write_manifest(&manifest, &rows);
    let (out, corpus) = (work.path().join("sync-out"), work.path().join("sync-corpus"));
    let synced = run_fleet(&manifest, &out, &corpus, Some(&state));
    let stdout = String::from_utf8_lossy(&synced.stdout);
    assert!(synced.status.success(), "every month syncs: {stdout}{}", String::from_utf8_lossy(&synced.stderr));
    assert!(stdout.contains("10 exports: 10 done"), "{stdout}");
    let reports = report_rows(&out);
    let by_tenant = corpus_rows(&corpus, "messages");
    for month in &months {
        let tenant = tenant(month);
        let mine: Vec<_> = reports.iter().filter(|row| row["tenant"] == tenant).collect();
        assert_eq!(mine.len(), 2, "{tenant} synced both months: {mine:?}");
        for row in &mine {
            assert_balanced(row);
        }
        let read: u64 = mine.iter().map(|row| number(row, "messages_read")).sum();
        assert_eq!(by_tenant.get(&tenant).copied().unwrap_or(0), read, "the corpus holds the messages each of {tenant}'s syncs read, once");
        let status = memport::sync::status::read(Path::new(&state), &tenant).expect("the shared state reads");
        assert_eq!(status.runs.len(), 2, "the shared state logged {tenant}'s two runs");
        assert_eq!(status.runs[1].kind, "delta", "the second month is a delta");
        let run = out.join(format!("tenant={tenant}")).join("runs").join(&status.runs[1].run_id).join("sync.json");
        let report: Value = json(&run);
        assert_eq!(report["base_run_id"], status.runs[0].run_id.as_str(), "the delta follows the first month");
    }
}

/// Rows of each table part downloaded from object storage, by tenant (from the Hive folders).
fn remote_corpus_rows(corpus: &memport::remote::ObjectUrl, table: &str) -> BTreeMap<String, u64> {
    let mut rows = BTreeMap::new();
    for (name, bytes) in downloaded(&corpus.join(table)) {
        if !name.ends_with(".parquet") {
            continue;
        }
        let tenant = name.split('/').find_map(|part| part.strip_prefix("tenant=")).expect("a tenant= folder").to_owned();
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        *rows.entry(tenant).or_insert(0) += u64::try_from(reader.metadata().file_metadata().num_rows()).unwrap();
    }
    rows
}

/// Guards the fleet on object storage (the command): a manifest, exports, outputs and
/// corpus all on `s3://`, each tenant's months synced into the shared PostgreSQL state; the
/// corpus holds every message read once, and a re-run redoes nothing and changes no object.
#[test]
fn a_fleet_on_object_storage_syncs_into_one_corpus_and_a_rerun_changes_nothing() {
    let work = tempfile::tempdir().unwrap();
    // Short names: the test server keeps each object's metadata in a file named after its whole
    // key (in base64), so keys over about 130 bytes fail there (S3 takes 1,024).
    let exports = unique("exports", "fe");
    let (out, corpus) = (unique("memory", "fo"), unique("memory", "fc"));
    let state = std::env::var("MEMPORT_TEST_POSTGRES_URL").expect("MEMPORT_TEST_POSTGRES_URL: run the tests with scripts/test");
    let mut rows = Vec::new();
    let mut tenants = Vec::new();
    for provider in ["chatgpt", "claude"] {
        let months = Months::generate(provider, 20);
        let tenant = format!("{}{}", &provider[..2], std::process::id());
        for month in 1..=2 {
            let zip = exports.join(&format!("{provider}-{month}.zip"));
            upload_zip_of(&months.export(month), &zip);
            rows.push((tenant.clone(), zip.to_path(), months.exported_at_text(month).to_owned()));
        }
        tenants.push(tenant);
    }
    let local_manifest = work.path().join("manifest.csv");
    write_manifest(&local_manifest, &rows);
    let manifest = exports.join("manifest.csv");
    memport::remote::upload::put_small(&manifest, std::fs::read(&local_manifest).unwrap()).unwrap();

    let first = run_fleet(&manifest.to_path(), &out.to_path(), &corpus.to_path(), Some(&state));
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(first.status.success(), "every month syncs: {stdout}{}", String::from_utf8_lossy(&first.stderr));
    assert!(stdout.contains("4 exports: 4 done"), "{stdout}");
    let (_, report_bytes) =
        downloaded(&out.join("_reports")).into_iter().find(|(name, _)| name.ends_with(".parquet")).expect("a report table");
    let report_file = work.path().join("reports.parquet");
    std::fs::write(&report_file, report_bytes).unwrap();
    let report_folder = work.path().join("reports");
    std::fs::create_dir_all(report_folder.join("_reports")).unwrap();
    std::fs::rename(&report_file, report_folder.join("_reports").join("part-00000.parquet")).unwrap();
    let reports = report_rows(&report_folder);
    assert_eq!(reports.len(), 4, "{reports:?}");
    let by_tenant = remote_corpus_rows(&corpus, "messages");
    for tenant in &tenants {
        let mine: Vec<_> = reports.iter().filter(|row| &row["tenant"] == tenant).collect();
        mine.iter().for_each(|row| assert_balanced(row));
        let read: u64 = mine.iter().map(|row| number(row, "messages_read")).sum();
        assert_eq!(by_tenant.get(tenant).copied().unwrap_or(0), read, "the corpus holds the messages each of {tenant}'s syncs read, once");
        let status = memport::sync::status::read(Path::new(&state), tenant).expect("the shared state reads");
        assert_eq!(status.runs.len(), 2, "the shared state logged {tenant}'s two runs");
    }

    let corpus_before = downloaded(&corpus);
    let again = run_fleet(&manifest.to_path(), &out.to_path(), &corpus.to_path(), Some(&state));
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(stdout.contains("4 exports: 0 done, 4 done before"), "the re-run redoes nothing: {stdout}");
    assert!(downloaded(&corpus) == corpus_before, "the re-run leaves every corpus object as it was: no duplicates");
}
