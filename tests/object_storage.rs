//! Inputs and outputs on object storage, against a real S3-compatible server on loopback
//! (`scripts/test` starts s3s-fs with `scripts/s3-test-server` and sets `AWS_ENDPOINT_URL` and
//! the credentials): a conversion from and to `s3://` writes what a local one writes, a zip is
//! read by range, memport refuses objects it did not write, errors say what to do, and a sync
//! to `s3://` publishes its runs and clears what a stopped one left.

use std::path::Path;
use std::process::{Command, Output};

use memport::remote::ObjectUrl;
use memport::remote::objects;
use memport::remote::ranged_reader::RangedReader;
use memport::remote::upload::{StagedUpload, put_small};
use memport::sync::{RUNS_FOLDER, SYNC_REPORT};

use crate::sync::{Months, memport_sync_to, succeed};

const EXPORTED_AT: &str = "2026-01-01T00:00:00Z";
/// The formats compared byte for byte (Parquet rows name their input's path, so its files
/// differ between an `s3://` input and a local one; its tables are compared by name).
const FILE_FORMATS: &str = "aimem,aimem-ndjson,pam,ump,mif,aime";

/// The test server's endpoint; the tests fail saying how to get one when it is not set.
fn endpoint() -> String {
    std::env::var("AWS_ENDPOINT_URL").unwrap_or_else(|_| {
        panic!(
            "AWS_ENDPOINT_URL is not set: run the tests with scripts/test, which starts an S3-compatible server (scripts/s3-test-server)"
        )
    })
}

/// A prefix in `bucket` no other test (or earlier run against the same server) uses.
pub(crate) fn unique(bucket: &str, name: &str) -> ObjectUrl {
    endpoint();
    ObjectUrl { bucket: bucket.into(), key: format!("{name}-{}", std::process::id()) }
}

/// Zips the folder `export` and uploads it to `url`.
pub(crate) fn upload_zip_of(export: &Path, url: &ObjectUrl) {
    let folder = tempfile::tempdir().unwrap();
    let zip_path = folder.path().join("export.zip");
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    for (name, bytes) in local_files(export) {
        writer.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        std::io::Write::write_all(&mut writer, &bytes).unwrap();
    }
    writer.finish().unwrap();
    upload(&zip_path, url);
}

fn upload(local: &Path, url: &ObjectUrl) {
    StagedUpload::stage(vec![(local.to_owned(), url.clone())], &indicatif::ProgressBar::hidden()).unwrap().publish().unwrap();
}

fn memport(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memport")).args(args).output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every object under `prefix`, as (relative key, bytes).
pub(crate) fn downloaded(prefix: &ObjectUrl) -> Vec<(String, Vec<u8>)> {
    objects::list(prefix)
        .unwrap()
        .into_iter()
        .map(|listed| {
            let relative = listed.url.key[prefix.key.len()..].trim_start_matches('/').to_owned();
            (relative, objects::read_small(&listed.url, 1 << 30).unwrap().unwrap())
        })
        .collect()
}

/// Every file under `folder`, as (relative path, bytes).
fn local_files(folder: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![folder.to_owned()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path
                    .strip_prefix(folder)
                    .unwrap()
                    .components()
                    .map(|part| part.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                found.push((relative, std::fs::read(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

/// memport's own files: upload records, and output manifests (they name local paths).
fn is_bookkeeping(name: &str) -> bool {
    name.rsplit('/').next().is_some_and(|base| base.starts_with('.'))
}

/// Guards the object-storage round trip: an export read from `s3://` and written to `s3://`
/// gives, object for object, the files a local conversion of the same zip writes; the report
/// names the objects; every output's upload record is complete; a second run replaces the
/// outputs and leaves no stale object.
#[test]
fn a_conversion_from_and_to_object_storage_writes_what_a_local_one_writes() {
    let months = Months::generate("chatgpt", 60);
    let input = unique("exports", "roundtrip").join("chatgpt.zip");
    upload_zip_of(&months.export(1), &input);
    let out = unique("memory", "roundtrip");
    let work = tempfile::tempdir().unwrap();
    let report_path = work.path().join("run.json");
    let formats = format!("{FILE_FORMATS},parquet");
    for _ in 0..2 {
        let remote = memport(&[
            "convert",
            &input.to_string(),
            "--to",
            &formats,
            "-o",
            &format!("{out}/"),
            "--exported-at",
            EXPORTED_AT,
            "--report",
            &report_path.display().to_string(),
        ]);
        assert!(remote.status.success(), "{}", stderr(&remote));
    }
    // The same zip, local.
    let local_zip = work.path().join("chatgpt.zip");
    std::fs::write(&local_zip, objects::read_small(&input, 1 << 30).unwrap().unwrap()).unwrap();
    let local_out = work.path().join("local");
    let local = memport(&[
        "convert",
        &local_zip.display().to_string(),
        "--to",
        &formats,
        "-o",
        &format!("{}/", local_out.display()),
        "--exported-at",
        EXPORTED_AT,
    ]);
    assert!(local.status.success(), "{}", stderr(&local));
    let remote_files: Vec<_> = downloaded(&out).into_iter().filter(|(name, _)| !is_bookkeeping(name)).collect();
    let local_files: Vec<_> = local_files(&local_out).into_iter().filter(|(name, _)| !is_bookkeeping(name)).collect();
    let names = |files: &[(String, Vec<u8>)]| files.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&remote_files), names(&local_files), "the same objects as files");
    for ((name, remote), (_, local)) in remote_files.iter().zip(&local_files) {
        if !name.starts_with("parquet/") {
            assert!(remote == local, "{name} differs between the s3:// run and the local one");
        }
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
    let paths: Vec<&str> = report["outputs"].as_array().unwrap().iter().map(|output| output["path"].as_str().unwrap()).collect();
    assert!(paths.iter().all(|path| path.starts_with(&format!("{out}/"))), "the report names the objects: {paths:?}");
    for record in
        [out.join("pam/.memport-upload.json"), out.join("parquet/.memport-upload.json"), out.join(".memory.aimem.json.memport-upload.json")]
    {
        let bytes = objects::read_small(&record, 1 << 20).unwrap().unwrap_or_else(|| panic!("{record} is there"));
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["complete"], true, "{record}");
    }
}

/// Guards the range reads: listing a zip on object storage fetches its central directory from
/// the end, not the object.
#[test]
fn a_zip_on_object_storage_is_listed_by_range_without_fetching_it_whole() {
    let work = tempfile::tempdir().unwrap();
    let zip_path = work.path().join("big.zip");
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    // 24 MB of entries the listing must not read, in entries a reader would open one by one.
    let filler: Vec<u8> = (0..(1u32 << 20)).map(|index| (index.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    for index in 0..24 {
        writer.start_file(format!("files/asset-{index:02}.bin"), stored).unwrap();
        std::io::Write::write_all(&mut writer, &filler).unwrap();
    }
    writer.start_file("conversations.json", stored).unwrap();
    std::io::Write::write_all(&mut writer, b"[]").unwrap();
    writer.finish().unwrap();
    let url = unique("exports", "ranged").join("big.zip");
    upload(&zip_path, &url);
    let reader = RangedReader::open(&url).unwrap();
    let size = reader.size();
    let archive = zip::ZipArchive::new(reader).unwrap();
    assert_eq!(archive.len(), 25);
    let fetched = archive.into_inner().fetched();
    assert!(fetched < 1 << 20, "listing fetched {fetched} bytes of a {size}-byte zip");
    // And an entry at the end reads whole.
    let reader = RangedReader::open(&url).unwrap();
    let mut archive = zip::ZipArchive::new(reader).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut archive.by_name("conversations.json").unwrap(), &mut text).unwrap();
    assert_eq!(text, "[]");
}

/// Guards "never overwrite what memport did not write" on object storage, and that a failed
/// run leaves the previous output as it was.
#[test]
fn objects_memport_did_not_write_are_never_replaced() {
    let months = Months::generate("claude", 20);
    let input = unique("exports", "foreign").join("claude.zip");
    upload_zip_of(&months.export(1), &input);
    let out = unique("memory", "foreign");
    let work = tempfile::tempdir().unwrap();
    let foreign = work.path().join("notes.txt");
    std::fs::write(&foreign, b"someone else's").unwrap();
    upload(&foreign, &out.join("pam/notes.txt"));
    let refused =
        memport(&["convert", &input.to_string(), "--to", "pam", "-o", &out.join("pam").to_string(), "--exported-at", EXPORTED_AT]);
    assert_eq!(refused.status.code(), Some(2));
    let message = stderr(&refused);
    assert!(message.contains(&format!("{}: memport did not write this object", out.join("pam/notes.txt"))), "{message}");
    assert_eq!(downloaded(&out.join("pam")).len(), 1, "nothing was written beside it");
    // A one-file output at a key someone else wrote.
    upload(&foreign, &out.join("brain.aimem.json"));
    let refused = memport(&["convert", &input.to_string(), "--to", "aimem", "-o", &out.join("brain.aimem.json").to_string()]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_eq!(objects::read_small(&out.join("brain.aimem.json"), 1 << 20).unwrap().unwrap(), b"someone else's");
    // memport's own output is replaced; a failed run leaves it.
    let target = out.join("mine.aimem.json").to_string();
    let first = memport(&["convert", &input.to_string(), "--to", "aimem", "-o", &target, "--exported-at", EXPORTED_AT]);
    assert!(first.status.success(), "{}", stderr(&first));
    let before = downloaded(&out);
    let missing = unique("exports", "foreign").join("absent.zip").to_string();
    let failed = memport(&["convert", &missing, "--to", "aimem", "-o", &target]);
    assert_eq!(failed.status.code(), Some(2));
    assert!(stderr(&failed).contains("no object and no objects under this prefix; check the URL"), "{}", stderr(&failed));
    assert_eq!(downloaded(&out), before, "the failed run changed nothing");
    let again = memport(&["convert", &input.to_string(), "--to", "aimem", "-o", &target, "--exported-at", "2026-02-01T00:00:00Z"]);
    assert!(again.status.success(), "{}", stderr(&again));
}

/// Guards the errors people meet: a missing bucket, for input and output, a prefix named for a
/// one-object output, and refused credentials, each saying what to do.
#[test]
fn object_storage_errors_say_what_to_do() {
    let months = Months::generate("grok", 5);
    let input = unique("exports", "errors").join("grok.zip");
    upload_zip_of(&months.export(1), &input);
    let missing_bucket = memport(&["convert", "s3://no-such-bucket/export.zip", "--to", "aimem", "-o", "/nonexistent/never.json"]);
    assert_eq!(missing_bucket.status.code(), Some(2));
    assert!(stderr(&missing_bucket).contains("the bucket no-such-bucket does not exist"), "{}", stderr(&missing_bucket));
    let missing_out = memport(&["convert", &input.to_string(), "--to", "aimem", "-o", "s3://no-such-bucket/brain.json"]);
    assert_eq!(missing_out.status.code(), Some(2));
    assert!(stderr(&missing_out).contains("the bucket no-such-bucket does not exist"), "{}", stderr(&missing_out));
    let prefix_for_a_file = memport(&["convert", &input.to_string(), "--to", "aimem", "-o", &format!("{}/", unique("memory", "errors"))]);
    assert_eq!(prefix_for_a_file.status.code(), Some(2));
    assert!(stderr(&prefix_for_a_file).contains("is a prefix, and this output is one object"), "{}", stderr(&prefix_for_a_file));
    let denied = Command::new(env!("CARGO_BIN_EXE_memport"))
        .args(["convert", &input.to_string(), "--to", "aimem", "-o", "/nonexistent/never.json"])
        .env("AWS_SECRET_ACCESS_KEY", "not-the-secret")
        .output()
        .unwrap();
    assert_eq!(denied.status.code(), Some(2));
    assert!(stderr(&denied).contains("access denied by"), "{}", stderr(&denied));
    assert!(stderr(&denied).contains("check the credentials"), "{}", stderr(&denied));
}

/// Guards sync on object storage: two months read from `s3://` and synced to `s3://` publish
/// the run folders a local sync writes, byte for byte (but the reports, which name paths), and
/// the objects of a run the state never committed are deleted by the next sync.
#[test]
fn a_sync_to_object_storage_publishes_what_a_local_sync_writes_and_clears_uncommitted_runs() {
    let months = Months::generate("chatgpt", 80);
    let exports = unique("exports", "sync");
    let out = unique("memory", "sync");
    let work = tempfile::tempdir().unwrap();
    let (remote_state, local_state, local_out) = (work.path().join("remote.db"), work.path().join("local.db"), work.path().join("out"));
    // What a sync stopped after uploading, before committing, leaves.
    put_small(&out.join("runs/20251201T000000Z-000000000000/sync.json"), b"{}".to_vec()).unwrap();
    put_small(&out.join("parquet/messages/run=20251201T000000Z-000000000000/part-00000.parquet"), b"x".to_vec()).unwrap();
    for month in [1, 2] {
        let zip = exports.join(&format!("month-{month}.zip"));
        upload_zip_of(&months.export(month), &zip);
        let local_zip = work.path().join(format!("month-{month}.zip"));
        std::fs::write(&local_zip, objects::read_small(&zip, 1 << 30).unwrap().unwrap()).unwrap();
        let time = months.exported_at_text(month).to_owned();
        succeed(&mut memport_sync_to(FILE_FORMATS, &zip.to_path(), &remote_state, &out.to_path(), &time));
        succeed(&mut memport_sync_to(FILE_FORMATS, &local_zip, &local_state, &local_out, &time));
    }
    let runs = objects::child_prefixes(&out.join(RUNS_FOLDER)).unwrap();
    let local_runs: Vec<String> = {
        let mut names: Vec<String> = std::fs::read_dir(local_out.join(RUNS_FOLDER))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(runs, local_runs, "the same runs, and the uncommitted one is gone");
    assert!(objects::list(&out.join("parquet/messages/run=20251201T000000Z-000000000000")).unwrap().is_empty());
    for run in &runs {
        let remote: Vec<_> = downloaded(&out.join(RUNS_FOLDER).join(run)).into_iter().filter(|(name, _)| name != SYNC_REPORT).collect();
        let local: Vec<_> =
            local_files(&local_out.join(RUNS_FOLDER).join(run)).into_iter().filter(|(name, _)| name != SYNC_REPORT).collect();
        assert_eq!(remote.len(), local.len(), "run {run}: as many objects as files");
        for ((remote_name, remote_bytes), (local_name, local_bytes)) in remote.iter().zip(&local) {
            assert_eq!(remote_name, local_name);
            // The rejects file names the input's path; every other file is the same.
            if !remote_name.starts_with("rejects") {
                assert!(remote_bytes == local_bytes, "run {run}: {remote_name} differs");
            }
        }
        let report: serde_json::Value =
            serde_json::from_slice(&objects::read_small(&out.join(RUNS_FOLDER).join(run).join(SYNC_REPORT), 1 << 24).unwrap().unwrap())
                .unwrap();
        assert_eq!(report["run_folder"], out.join(RUNS_FOLDER).join(run).to_string(), "sync.json names the run's objects");
    }
}

/// Guards memport's own formats on object storage: files written to `s3://` validate there and
/// read back as inputs exactly as their local copies do.
#[test]
fn memory_format_files_on_object_storage_validate_and_read_back_like_local_ones() {
    let out = unique("memory", "formats");
    let example = crate::util::root().join("examples").join("chatgpt-small");
    let written = memport(&[
        "convert",
        &example.display().to_string(),
        "--to",
        "aimem,mif,ump,aime",
        "-o",
        &format!("{out}/"),
        "--exported-at",
        EXPORTED_AT,
    ]);
    assert!(written.status.success(), "{}", stderr(&written));
    let work = tempfile::tempdir().unwrap();
    for name in ["memory.aimem.json", "memory.mif.json", "memory.ump.json", "memory.aime.json"] {
        let url = out.join(name).to_string();
        let validated = memport(&["validate", &url]);
        assert!(validated.status.success(), "{url} validates: {}{}", String::from_utf8_lossy(&validated.stdout), stderr(&validated));
        let local_copy = work.path().join(name);
        std::fs::write(&local_copy, objects::read_small(&out.join(name), 1 << 30).unwrap().unwrap()).unwrap();
        let (from_remote, from_local) =
            (work.path().join(format!("{name}.remote.ndjson")), work.path().join(format!("{name}.local.ndjson")));
        for (input, output) in [(url.clone(), &from_remote), (local_copy.display().to_string(), &from_local)] {
            let read =
                memport(&["convert", &input, "--to", "aimem-ndjson", "-o", &output.display().to_string(), "--exported-at", EXPORTED_AT]);
            assert!(read.status.success(), "{input} reads back: {}", stderr(&read));
        }
        assert!(std::fs::read(&from_remote).unwrap() == std::fs::read(&from_local).unwrap(), "{name} reads from s3:// as from a file");
    }
}

/// Guards the `file://` spelling: it names the local path, for inputs and outputs alike.
#[test]
fn a_file_url_names_the_local_path() {
    let work = tempfile::tempdir().unwrap();
    let example = crate::util::root().join("examples").join("chatgpt-small");
    let target = work.path().join("brain.aimem.json");
    let written = memport(&[
        "convert",
        &format!("file://{}", example.display()),
        "--to",
        "aimem",
        "-o",
        &format!("file://{}", target.display()),
        "--exported-at",
        EXPORTED_AT,
    ]);
    assert!(written.status.success(), "{}", stderr(&written));
    assert!(target.is_file(), "the output is the local file the URL names");
}
