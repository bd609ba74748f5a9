//! The Parquet dataset: read back with the parquet crate and checked against the run report,
//! the AIMEM output of the same read and the input; determinism; partitioning; and the
//! documented schema and example queries (docs/formats/parquet.md) run through real readers (DuckDB and pyarrow).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch};
use memport::pipeline::report::RunReport;
use memport::pipeline::settings::Partitioning;
use memport::sinks::OutputFormat;
use memport::sinks::parquet::schema::{SCHEMA_VERSION, Table};
use memport::sources::BranchPolicy;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::util::{REAL_SAMPLES, examples, ndjson, options, root, shared};

/// All rows of one table of a dataset (every part, every partition), in file-name order.
pub(crate) fn read_table(dataset: &Path, table: Table) -> Vec<RecordBatch> {
    let mut files = Vec::new();
    collect_parts(&dataset.join(table.name()), &mut files);
    files.sort();
    let mut batches = Vec::new();
    for file in files {
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&file).unwrap()).unwrap();
        let metadata = builder.metadata().file_metadata().key_value_metadata().cloned().unwrap_or_default();
        let version = metadata.iter().find(|entry| entry.key == "memport.schema_version").and_then(|entry| entry.value.clone());
        assert_eq!(version.as_deref(), Some(SCHEMA_VERSION), "{} carries the schema version", file.display());
        for batch in builder.build().unwrap() {
            batches.push(batch.unwrap());
        }
    }
    batches
}

fn collect_parts(folder: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_parts(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "parquet") {
            files.push(path);
        }
    }
}

fn row_count(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// A string column (plain or dictionary-encoded) of every batch, nulls as `None`.
pub(crate) fn strings(batches: &[RecordBatch], name: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for batch in batches {
        let column = batch.column_by_name(name).unwrap_or_else(|| panic!("column {name}"));
        if let Some(dictionary) = column.as_dictionary_opt::<Int32Type>() {
            let values = dictionary.values().as_string::<i32>();
            for index in 0..dictionary.len() {
                out.push(dictionary.is_valid(index).then(|| values.value(dictionary.keys().value(index) as usize).to_owned()));
            }
        } else {
            let column = column.as_string::<i32>();
            for index in 0..column.len() {
                out.push(column.is_valid(index).then(|| column.value(index).to_owned()));
            }
        }
    }
    out
}

/// A boolean column of every batch, nulls as `None`.
pub(crate) fn bools(batches: &[RecordBatch], name: &str) -> Vec<Option<bool>> {
    batches.iter().flat_map(|batch| batch.column_by_name(name).unwrap_or_else(|| panic!("column {name}")).as_boolean().iter()).collect()
}

fn times(batches: &[RecordBatch], name: &str) -> Vec<Option<i64>> {
    let mut out = Vec::new();
    for batch in batches {
        let column = batch.column_by_name(name).unwrap().as_primitive::<TimestampMicrosecondType>();
        for index in 0..column.len() {
            out.push(column.is_valid(index).then(|| column.value(index)));
        }
    }
    out
}

fn convert_to_dataset(inputs: &[PathBuf], branches: BranchPolicy, partition: bool, threads: usize) -> (tempfile::TempDir, RunReport) {
    let out = tempfile::tempdir().unwrap();
    let mut options = options(inputs, out.path(), &[OutputFormat::Parquet, OutputFormat::AimemNdjson]);
    options.settings.branches = branches;
    options.settings.partition_by = if partition { Partitioning::Provider } else { Partitioning::None };
    options.settings.threads = Some(threads);
    let report = memport::run(&options).unwrap();
    assert!(report.counts.balances(), "counts balance: {:?}", report.counts);
    (out, report)
}

/// Checks a dataset against the report and the AIMEM stream written from the same read.
fn check_dataset_against_report(out: &Path, report: &RunReport, label: &str) {
    let dataset = out.join("parquet");
    let counts = &report.counts;
    let messages = read_table(&dataset, Table::Messages);
    let dispositions = strings(&messages, "disposition");
    let count_of = |name: &str| dispositions.iter().filter(|value| value.as_deref() == Some(name)).count() as u64;
    assert_eq!(dispositions.len() as u64, counts.messages_read - counts.messages_rejected, "{label}: one row per message read");
    assert_eq!(count_of("written"), counts.messages_written, "{label}: written");
    assert_eq!(count_of("duplicate"), counts.messages_duplicate, "{label}: duplicate");
    for (reason, count) in &counts.messages_skipped {
        assert_eq!(count_of(reason), *count, "{label}: skipped {reason}");
    }
    let hidden: Vec<bool> =
        messages.iter().flat_map(|batch| batch.column_by_name("is_hidden").unwrap().as_boolean().iter().map(Option::unwrap)).collect();
    assert_eq!(hidden.iter().filter(|hidden| **hidden).count() as u64, counts.messages_skipped.get("hidden").copied().unwrap_or(0));

    let conversations = read_table(&dataset, Table::Conversations);
    let memories = read_table(&dataset, Table::Memories);
    assert_eq!(row_count(&memories) as u64, crate::util::memories_in_output(report), "{label}: memories");
    let memory_ids = strings(&memories, "memory_id");
    assert_eq!(memory_ids.iter().collect::<std::collections::BTreeSet<_>>().len(), memory_ids.len(), "{label}: memory ids unique");
    assert!(row_count(&conversations) as u64 <= counts.conversations_read - counts.conversations_rejected, "{label}: conversations");
    let written_per_conversation: u64 = conversations
        .iter()
        .flat_map(|batch| batch.column_by_name("written_count").unwrap().as_primitive::<Int32Type>().values().to_vec())
        .map(|count| count as u64)
        .sum();
    assert_eq!(written_per_conversation, counts.messages_written, "{label}: written_count sums to the report");

    // Every written message is the AIMEM stream's episodic chunk: same text, same time.
    let texts = strings(&messages, "text");
    let created = times(&messages, "created_at");
    let mut from_parquet: Vec<(String, i64)> = (0..texts.len())
        .filter(|index| dispositions[*index].as_deref() == Some("written"))
        .map(|index| (texts[index].clone().unwrap(), created[index].unwrap()))
        .collect();
    let mut from_aimem: Vec<(String, i64)> = ndjson(&out.join("memory.aimem.ndjson"))
        .into_iter()
        .filter(|record| record["_kind"] == "chunk" && record["memory_type"] == "episodic")
        .map(|record| {
            let time = memport::timefmt::parse_rfc3339(record["created_at"].as_str().unwrap()).unwrap();
            (record["content"].as_str().unwrap().to_owned(), time)
        })
        .collect();
    from_parquet.sort();
    from_aimem.sort();
    assert_eq!(from_parquet.len(), from_aimem.len(), "{label}: one chunk per written message (no sample is long enough to split)");
    assert!(from_parquet == from_aimem, "{label}: written messages carry the chunks' text and time");

    // JSON providers keep each message's own record in `metadata.provider`.
    let providers = strings(&messages, "provider");
    for (index, metadata) in strings(&messages, "metadata").into_iter().enumerate() {
        if matches!(providers[index].as_deref(), Some("chatgpt" | "claude" | "grok")) {
            let metadata: serde_json::Value = serde_json::from_str(metadata.as_deref().unwrap_or("null")).unwrap();
            assert!(metadata["provider"].is_object(), "{label}: provider fields of row {index}");
        }
    }

    // Keys join: every message row points at a conversation row of its provider and id.
    let conversation_keys: std::collections::BTreeSet<String> = strings(&conversations, "conversation_id").into_iter().flatten().collect();
    for id in strings(&messages, "conversation_id").into_iter().flatten() {
        assert!(conversation_keys.contains(&id), "{label}: message of unknown conversation {id}");
    }
}

#[test]
fn every_real_sample_reads_back_with_the_reports_counts_and_the_aimem_text() {
    for sample in REAL_SAMPLES {
        for branches in [BranchPolicy::Active, BranchPolicy::All] {
            let (out, report) = convert_to_dataset(&[shared(sample)], branches, false, 2);
            check_dataset_against_report(out.path(), &report, &format!("{sample} ({branches:?})"));
        }
    }
}

#[test]
fn every_generated_example_reads_back_with_the_reports_counts() {
    let (out, report) = convert_to_dataset(&examples(), BranchPolicy::All, false, 2);
    check_dataset_against_report(out.path(), &report, "examples");
    let providers: std::collections::BTreeSet<String> =
        strings(&read_table(&out.path().join("parquet"), Table::Messages), "provider").into_iter().flatten().collect();
    assert_eq!(providers.into_iter().collect::<Vec<_>>(), ["chatgpt", "claude", "copilot", "gemini", "grok"]);
}

#[test]
fn chatgpt_titles_and_times_are_the_inputs() {
    let sample = shared("provider-samples/chatgpt/2023-09_single-file-export/conversations.subset.json");
    let raw: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(&sample).unwrap()).unwrap();
    let (out, _report) = convert_to_dataset(std::slice::from_ref(&sample), BranchPolicy::All, false, 2);
    let conversations = read_table(&out.path().join("parquet"), Table::Conversations);
    let ids = strings(&conversations, "conversation_id");
    let titles = strings(&conversations, "title");
    let created = times(&conversations, "created_at");
    assert_eq!(ids.len(), raw.len());
    for (index, conversation) in raw.iter().enumerate() {
        let id = conversation["conversation_id"].as_str().or(conversation["id"].as_str()).unwrap();
        assert_eq!(ids[index].as_deref(), Some(id));
        assert_eq!(titles[index].as_deref(), conversation["title"].as_str());
        let seconds = conversation["create_time"].as_f64().unwrap();
        assert_eq!(created[index], Some((seconds * 1e6).round() as i64), "created_at of {id}");
    }
    // Under --branches all every node with a message is a row; its text is the input's parts.
    let messages = read_table(&out.path().join("parquet"), Table::Messages);
    let message_ids = strings(&messages, "message_id");
    let nodes: usize = raw
        .iter()
        .map(|conversation| conversation["mapping"].as_object().unwrap().values().filter(|node| !node["message"].is_null()).count())
        .sum();
    assert_eq!(message_ids.len(), nodes);
    // `metadata.provider` is the input's message object as written, minus the rendered content.
    let conversation_ids = strings(&messages, "conversation_id");
    let metadata = strings(&messages, "metadata");
    let by_id: BTreeMap<&str, &serde_json::Value> = raw
        .iter()
        .map(|conversation| (conversation["conversation_id"].as_str().or(conversation["id"].as_str()).unwrap(), conversation))
        .collect();
    for index in 0..message_ids.len() {
        let conversation = by_id[conversation_ids[index].as_deref().unwrap()];
        let mut expected = conversation["mapping"][message_ids[index].as_deref().unwrap()]["message"].clone();
        expected.as_object_mut().unwrap().remove("content");
        let kept: serde_json::Value =
            serde_json::from_str(metadata[index].as_deref().expect("every ChatGPT message has provider fields")).unwrap();
        assert_eq!(kept["provider"], expected, "provider fields of {:?}", message_ids[index]);
    }
}

#[test]
fn the_dataset_is_byte_identical_at_any_thread_count() {
    let digest = |threads: usize, partition: bool| {
        let (out, _) = convert_to_dataset(&examples(), BranchPolicy::All, partition, threads);
        let mut files = Vec::new();
        collect_parts(&out.path().join("parquet"), &mut files);
        files.sort();
        files
            .iter()
            .map(|file| (file.strip_prefix(out.path()).unwrap().to_owned(), memport::hash::sha256(&std::fs::read(file).unwrap())))
            .collect::<Vec<_>>()
    };
    for partition in [false, true] {
        let one = digest(1, partition);
        assert!(!one.is_empty());
        assert_eq!(one, digest(2, partition));
        assert_eq!(one, digest(5, partition));
    }
}

#[test]
fn partitioning_by_provider_writes_hive_folders_without_the_column() {
    let (out, report) = convert_to_dataset(&examples(), BranchPolicy::Active, true, 2);
    let dataset = out.path().join("parquet");
    let mut folders: Vec<String> = std::fs::read_dir(dataset.join("messages"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert_eq!(folders, ["provider=chatgpt", "provider=claude", "provider=copilot", "provider=gemini", "provider=grok"]);
    let messages = read_table(&dataset, Table::Messages);
    assert!(messages[0].column_by_name("provider").is_none(), "the folder carries the provider");
    assert_eq!(row_count(&messages) as u64, report.counts.messages_read - report.counts.messages_rejected);
}

#[test]
fn a_rerun_replaces_the_dataset_and_leaves_no_stale_parts() {
    let out = tempfile::tempdir().unwrap();
    let dataset = out.path().join("corpus");
    let run = |partition: bool| {
        let mut options = options(&examples(), out.path(), &[OutputFormat::Parquet]);
        options.outputs = vec![(OutputFormat::Parquet, dataset.clone())];
        options.settings.partition_by = if partition { Partitioning::Provider } else { Partitioning::None };
        memport::run(&options)
    };
    run(true).unwrap();
    std::fs::write(dataset.join("notes.txt"), b"the user's own file").unwrap();
    let report = run(false).unwrap();
    let mut files = Vec::new();
    collect_parts(&dataset, &mut files);
    let mut names: Vec<String> = files.iter().map(|file| file.strip_prefix(&dataset).unwrap().display().to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "assets/part-00000.parquet",
            "conversations/part-00000.parquet",
            "entities/part-00000.parquet",
            "memories/part-00000.parquet",
            "memory_entities/part-00000.parquet",
            "memory_evidence/part-00000.parquet",
            "messages/part-00000.parquet"
        ]
    );
    assert!(dataset.join("notes.txt").exists(), "files memport did not write are left alone");
    assert_eq!(row_count(&read_table(&dataset, Table::Messages)) as u64, report.counts.messages_read - report.counts.messages_rejected);
    // A part memport did not write is the user's: the run stops and leaves it, never deletes it.
    std::fs::write(dataset.join("messages").join("part-00007.parquet"), b"the user's").unwrap();
    let error = run(false).unwrap_err().to_string();
    assert!(error.contains("messages/part-00007.parquet is not a part memport wrote here"), "{error}");
    assert_eq!(std::fs::read(dataset.join("messages").join("part-00007.parquet")).unwrap(), b"the user's");
}

/// The Python interpreter with DuckDB and pyarrow: `MEMPORT_TEST_PYTHON` (set by
/// `scripts/test`), else `python3`.
fn python() -> String {
    let python = std::env::var("MEMPORT_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python).args(["-c", "import duckdb, pyarrow"]).output();
    assert!(
        probe.as_ref().is_ok_and(|output| output.status.success()),
        "{python} cannot import duckdb and pyarrow; run the tests with scripts/test, which installs them (tests/requirements.txt) into .venv"
    );
    python
}

/// The documented example queries and the output it shows for them, in order.
fn readme_queries() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(root().join("docs/formats/parquet.md")).unwrap();
    let section = readme.split("<!-- parquet-queries:begin -->").nth(1).unwrap().split("<!-- parquet-queries:end -->").next().unwrap();
    let mut queries = Vec::new();
    let mut rest = section;
    while let Some(start) = rest.find("```sql\n") {
        let after = &rest[start + 7..];
        let end = after.find("```").unwrap();
        let query = after[..end].trim().to_owned();
        let output_start = after[end + 3..].find("```text\n").unwrap() + end + 3 + 8;
        let output_end = after[output_start..].find("```").unwrap() + output_start;
        queries.push((query, after[output_start..output_end].trim_end().to_owned()));
        rest = &after[output_end + 3..];
    }
    queries
}

/// Runs the documented example queries with DuckDB on the dataset of the bundled examples, from
/// the folder holding `corpus/`, and checks they print what the docs show.
#[test]
fn the_readme_queries_run_in_duckdb_and_print_what_the_readme_shows() {
    let python = python();
    let out = tempfile::tempdir().unwrap();
    let mut options = options(&examples(), out.path(), &[OutputFormat::Parquet]);
    options.outputs = vec![(OutputFormat::Parquet, out.path().join("corpus"))];
    options.settings.branches = BranchPolicy::All;
    memport::run(&options).unwrap();
    let queries = readme_queries();
    assert!(queries.len() >= 4, "docs/formats/parquet.md shows the example queries");
    let script = r#"
import sys, duckdb
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
result = con.execute(sys.stdin.read())
names = [column[0] for column in result.description]
print("| " + " | ".join(names) + " |")
print("|" + "---|" * len(names))
for row in result.fetchall():
    print("| " + " | ".join("" if value is None else str(value) for value in row) + " |")
"#;
    for (query, shown) in queries {
        let mut child = Command::new(&python)
            .args(["-c", script])
            .current_dir(out.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), query.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "DuckDB ran `{query}`: {}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim_end(), shown, "output of `{query}`");
    }
}

/// pyarrow reads every table as a Hive dataset with the documented columns and the report's counts.
#[test]
fn pyarrow_reads_the_partitioned_dataset_with_the_documented_schema() {
    let python = python();
    let (out, report) = convert_to_dataset(&examples(), BranchPolicy::Active, true, 2);
    let script = r#"
import json, os, sys, pyarrow.dataset as ds
root = sys.argv[1]
tables = {}
for name in sys.argv[2:]:
    # A partitioned table has folders only for the providers it has rows for.
    if not os.path.isdir(f"{root}/{name}"):
        continue
    table = ds.dataset(f"{root}/{name}", format="parquet", partitioning="hive").to_table()
    tables[name] = {"rows": table.num_rows, "columns": table.schema.names,
                    "types": {field.name: str(field.type) for field in table.schema}}
print(json.dumps(tables))
"#;
    let output =
        Command::new(&python).args(["-c", script]).arg(out.path().join("parquet")).args(Table::every().map(Table::name)).output().unwrap();
    assert!(output.status.success(), "pyarrow: {}", String::from_utf8_lossy(&output.stderr));
    let tables: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(tables["messages"]["rows"], report.counts.messages_read - report.counts.messages_rejected);
    assert_eq!(tables["memories"]["rows"], crate::util::memories_in_output(&report));
    assert_eq!(tables["messages"]["types"]["created_at"], "timestamp[us, tz=UTC]");
    assert_eq!(tables["messages"]["types"]["role"], "dictionary<values=string, indices=int32, ordered=0>");
    let documented = documented_columns();
    for table in Table::every().filter(|table| tables.get(table.name()).is_some()) {
        let mut columns: Vec<String> =
            tables[table.name()]["columns"].as_array().unwrap().iter().map(|name| name.as_str().unwrap().to_owned()).collect();
        // pyarrow appends the Hive partition column; the docs list it first.
        columns.retain(|name| name != "provider");
        columns.insert(0, "provider".into());
        assert_eq!(columns, documented[table.name()], "{} columns as docs/formats/parquet.md documents them", table.name());
    }
}

/// The documented schema tables (docs/formats/parquet.md): table name → column names in order.
fn documented_columns() -> BTreeMap<String, Vec<String>> {
    let readme = std::fs::read_to_string(root().join("docs/formats/parquet.md")).unwrap();
    let section = readme.split("<!-- parquet-schema:begin -->").nth(1).unwrap().split("<!-- parquet-schema:end -->").next().unwrap();
    let mut tables = BTreeMap::new();
    let mut current = None;
    for line in section.lines() {
        if let Some(name) = line.strip_prefix("#### `").and_then(|rest| rest.strip_suffix('`')) {
            current = Some(name.to_owned());
            tables.insert(name.to_owned(), Vec::new());
        } else if let (Some(table), Some(cell)) = (&current, line.strip_prefix("| `")) {
            let column = cell.split('`').next().unwrap().to_owned();
            tables.get_mut(table).unwrap().push(column);
        }
    }
    tables
}

#[test]
fn the_readme_documents_every_column_of_every_table() {
    let documented = documented_columns();
    for table in Table::every() {
        let actual: Vec<String> = table.schema(true).fields().iter().map(|field| field.name().clone()).collect();
        assert_eq!(documented.get(table.name()), Some(&actual), "documented schema of {}", table.name());
    }
}

/// The metadata column embeds the provider's fields as written, except when they hold an
/// unpaired surrogate escape, which strict JSON readers refuse: then they are a JSON string.
#[test]
fn a_lone_surrogate_in_provider_fields_keeps_the_metadata_column_valid_json() {
    let folder = tempfile::tempdir().unwrap();
    let element = r#"[{"id":"c1","title":"t","create_time":1000000000.0,"mapping":{"r":{"id":"r","message":null,"parent":null,"children":["a"]},"a":{"id":"a","parent":"r","children":[],"message":{"id":"a","author":{"role":"user"},"create_time":1000000000.0,"content":{"content_type":"text","parts":["lone \ud800 end"]},"metadata":{"note":"lone \udc00 here"}}}},"current_node":"a"}]"#;
    let input = folder.path().join("conversations.json");
    std::fs::write(&input, element).unwrap();
    let (out, _) = convert_to_dataset(&[input], BranchPolicy::All, false, 1);
    let messages = read_table(&out.path().join("parquet"), Table::Messages);
    let metadata = strings(&messages, "metadata");
    assert_eq!(metadata.len(), 1);
    let parsed: serde_json::Value = serde_json::from_str(metadata[0].as_deref().unwrap()).expect("strict JSON");
    assert!(parsed["provider"].as_str().is_some_and(|text| text.contains(r"\udc00")), "{parsed}");
}
