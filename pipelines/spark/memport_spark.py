#!/usr/bin/env python3
"""memport over a fleet of exports on Apache Spark.

Each export is one Spark task that runs the memport binary on it (convert, or with --state a
sync of the tenant's exports in manifest order, one task per tenant); every run report is
gathered into one table, and each export's Parquet rows are added to one corpus dataset
partitioned by tenant, provider and export, which Spark SQL, DuckDB and Polars read as it is.

    spark-submit pipelines/spark/memport_spark.py --exports manifest.csv --out OUT --corpus CORPUS
    spark-submit pipelines/spark/memport_spark.py --exports manifest.csv --state postgres://… --out OUT --corpus CORPUS
    spark-submit pipelines/spark/memport_spark.py --exports s3://bucket/manifest.csv --out s3://bucket/out --corpus s3://bucket/corpus

The manifest is a CSV file with a header and the columns `tenant` and `export` (a path every
executor can read), and optionally `exported_at` (RFC 3339; the export time written to its
outputs). The manifest, OUT, CORPUS and each export may be a local or shared-filesystem path
or an `s3://bucket/prefix` URI (`s3a://` too), in any mix: memport reads an export on S3 by
range, and the driver reads and writes S3 through pyarrow, which the driver and every executor
need (PySpark's SQL extra brings it). Both find the S3 service the way the AWS tools do:
`AWS_ENDPOINT_URL` (a compatible server), `AWS_REGION` or `AWS_DEFAULT_REGION` (us-east-1 when
neither is set), `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, else the
default chain (profile, instance role). Executors need that environment too: in local and
local-cluster mode they inherit the driver's; on a real cluster pass it with
`--conf spark.executorEnv.AWS_REGION=…` (and so on for each variable) or give the executor
machines an instance role.

What each export leaves (OUT and CORPUS must be where every executor writes):

    OUT/tenant=<tenant>/<export-key>/          convert: the outputs, run report and rejects
    OUT/tenant=<tenant>/                       sync: memport's runs/ and parquet/ for the tenant
    OUT/tenant=<tenant>/_done/<export-key>.json  the export's report row, written last: done
    OUT/_reports/part-00000.parquet            every export's row of the last job
    CORPUS/<table>/tenant=<t>/provider=<p>/export=<export-key>/part-NNNNN.parquet

Re-running the job skips the exports whose `_done` file exists, so after a failure only the
exports that did not finish run again; an export's corpus folder is replaced whole, so a
re-run adds no duplicate rows. An export memport refuses (exit 2: unreadable, not an export)
becomes a `failed` row with memport's message; a memport killed by a signal, or missing, fails
the task, which Spark's task retry runs again.

On S3, which has no rename, a folder cannot be replaced at once: memport converts into a
staging folder on the executor's local disk, then each file is uploaded (each object appears
whole, old or new) and the objects the upload did not write are deleted. So while an export
is being written a reader of its corpus folder or output folder may see old and new files
side by side, or a part of them; the `_done` file, written after all of them, is the export's
commit marker: read an export's files only once its `_done` file exists. In sync mode memport
itself writes the tenant's runs/ and parquet/ on S3, each run's objects before its state
commits. The report table is one object, put whole.
"""

import argparse
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs

REPORT_FIELDS = [
    ("tenant", "string"),
    ("export", "string"),
    ("export_key", "string"),
    ("mode", "string"),
    ("status", "string"),
    ("providers", "string"),
    ("run_id", "string"),
    ("conversations_read", "long"),
    ("messages_read", "long"),
    ("messages_written", "long"),
    ("messages_duplicate", "long"),
    ("messages_skipped", "long"),
    ("messages_rejected", "long"),
    ("memories_written", "long"),
    ("rejects", "long"),
    ("corpus_parts", "long"),
    ("seconds", "double"),
    ("error", "string"),
    ("attempt_host", "string"),
]


def export_key(path: str) -> str:
    """A folder name for an export: its file name, made safe, and a digest of its path."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(os.path.normpath(path)))[:60] or "export"
    return f"{base}-{hashlib.sha256(path.encode()).hexdigest()[:10]}"


def write_json_atomically(path: str, value: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = f"{path}.{os.getpid()}.partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=1, sort_keys=True)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)


def replace_folder(built: str, target: str) -> None:
    """Puts `built` at `target`, replacing what was there: a reader sees the old folder or the
    new one whole (between the two renames, briefly none)."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if os.path.exists(target):
        old = f"{target}.{os.getpid()}.old"
        os.rename(target, old)
        os.rename(built, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(built, target)


def run_memport(command: list) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except FileNotFoundError as error:
        # No binary on this executor: a task retry may land on one that has it.
        raise RuntimeError(f"memport binary not found: {command[0]} ({error})") from error
    if done.returncode < 0:
        raise RuntimeError(f"memport was killed by signal {-done.returncode} on {command[2:3]}; Spark retries the task")
    return done


# Where the driver reads and writes: a location is an `s3://bucket/key` URI (without a trailing
# '/') or an absolute local path. The functions below take locations and do the same thing on
# either, through pyarrow's filesystems; local paths keep the renames that make a replacement
# atomic, which S3 has not.

S3_SCHEMES = ("s3://", "s3a://")


def is_s3(location: str) -> bool:
    return location.startswith(S3_SCHEMES)


def as_location(text: str) -> str:
    """A path or URI as given on the command line, as the driver keeps it."""
    if is_s3(text):
        # s3a:// is Hadoop's spelling of the same thing; memport reads both.
        return "s3://" + text.split("://", 1)[1].strip("/")
    return os.path.abspath(text)


def join(base: str, *names: str) -> str:
    if is_s3(base):
        return "/".join([base.rstrip("/"), *names])
    return os.path.join(base, *names)


class LocalCache(dict):
    """A cache that stays where it was filled: pickled into a Spark task (cloudpickle ships the
    globals a function uses, the driver's S3 client among them) it arrives empty, so each task
    makes its S3 client from its executor's environment, and no credentials travel with it."""

    def __reduce__(self):
        return (LocalCache, ())


S3_CLIENT = LocalCache()


def s3_filesystem() -> pafs.S3FileSystem:
    """The S3 filesystem configured from the AWS_* environment, as memport configures its own."""
    if "client" in S3_CLIENT:
        return S3_CLIENT["client"]
    environment = {name: os.environ.get(name) or None for name in (
        "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT", "AWS_REGION", "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")}
    settings = {"region": environment["AWS_REGION"] or environment["AWS_DEFAULT_REGION"] or "us-east-1"}
    # The same order of endpoint variables as memport's, so that the binary and the driver talk
    # to the same server.
    endpoint = environment["AWS_ENDPOINT_URL"] or environment["AWS_ENDPOINT_URL_S3"] or environment["AWS_ENDPOINT"]
    if endpoint:
        parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        settings.update(endpoint_override=parts.netloc, scheme=parts.scheme or "https")
    if environment["AWS_ACCESS_KEY_ID"] and environment["AWS_SECRET_ACCESS_KEY"]:
        settings.update(access_key=environment["AWS_ACCESS_KEY_ID"], secret_key=environment["AWS_SECRET_ACCESS_KEY"],
                        session_token=environment["AWS_SESSION_TOKEN"])
    # Without keys, pyarrow's default chain finds them (a profile, an instance role).
    client = S3_CLIENT["client"] = pafs.S3FileSystem(**settings)
    return client


def filesystem(location: str) -> tuple:
    """The pyarrow filesystem holding `location`, and the path to give it."""
    if is_s3(location):
        return s3_filesystem(), location.split("://", 1)[1]
    return pafs.LocalFileSystem(), location


def exists(location: str) -> bool:
    """Whether there is a file at `location`. Only asked of files: some S3-compatible servers
    fail a HEAD of a key that is also a prefix of others."""
    if not is_s3(location):
        return os.path.exists(location)
    store, path = filesystem(location)
    return store.get_file_info(path).type == pafs.FileType.File


def read_bytes(location: str) -> bytes:
    store, path = filesystem(location)
    with store.open_input_stream(path) as stream:
        return stream.read()


def read_json(location: str) -> dict:
    return json.loads(read_bytes(location).decode("utf-8"))


def write_json(location: str, value: dict) -> None:
    """Writes `value` so that a reader sees the file whole or not at all: locally by a rename,
    on S3 as one object (a PUT, or a multipart upload, only appears when complete)."""
    if not is_s3(location):
        write_json_atomically(location, value)
        return
    store, path = filesystem(location)
    with store.open_output_stream(path) as stream:
        stream.write((json.dumps(value, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def listing(folder: str, recursive: bool = False) -> list:
    """What is under `folder` (nothing when it does not exist), by listing: never a HEAD of the
    folder itself (see exists)."""
    store, path = filesystem(folder)
    return store.get_file_info(pafs.FileSelector(path, allow_not_found=True, recursive=recursive))


def child_folders(folder: str) -> list:
    """The names of the folders in `folder`, sorted; names starting with '.' are a writer's
    unfinished work, left out."""
    return sorted(info.base_name for info in listing(folder)
                  if info.type == pafs.FileType.Directory and not info.base_name.startswith("."))


def file_names(folder: str) -> list:
    return sorted(info.base_name for info in listing(folder) if info.type == pafs.FileType.File)


def copy_file(source: str, target: str) -> None:
    if not is_s3(source) and not is_s3(target):
        shutil.copyfile(source, target)
    elif is_s3(source) and is_s3(target):
        # A copy inside the object store: the bytes do not pass through the executor.
        store, source_path = filesystem(source)
        store.copy_file(source_path, filesystem(target)[1])
    else:
        if not is_s3(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
        (source_store, source_path), (target_store, target_path) = filesystem(source), filesystem(target)
        pafs.copy_files(source_path, target_path, source_filesystem=source_store, destination_filesystem=target_store)


def delete_stale(folder: str, kept: set) -> None:
    """Deletes every file under the S3 `folder` whose path relative to it is not in `kept`: what
    an earlier attempt wrote and this one did not."""
    store, path = filesystem(folder)
    for info in listing(folder, recursive=True):
        if info.type == pafs.FileType.File and info.path[len(path) + 1:] not in kept:
            store.delete_file(info.path)


def staging_folder(target: str) -> str:
    """A new local folder to build what goes to `target`: beside it when it is local (so that
    replace_folder renames it into place), else in the executor's temporary folder."""
    if is_s3(target):
        return tempfile.mkdtemp(prefix="memport-spark-")
    staging = f"{target}.{os.getpid()}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    return staging


def publish_folder(built: str, target: str) -> None:
    """Puts the local folder `built` at `target`, replacing what was there: locally by renames
    (replace_folder); on S3 every file is uploaded, then the objects under `target` that the
    upload did not write are deleted, so a reader may see old and new files together meanwhile
    (the `_done` file, written after, tells when it is over)."""
    if not is_s3(target):
        replace_folder(built, target)
        return
    written = set()
    for folder, _, names in os.walk(built):
        for name in sorted(names):
            relative = os.path.relpath(os.path.join(folder, name), built).replace(os.sep, "/")
            copy_file(os.path.join(folder, name), join(target, relative))
            written.add(relative)
    delete_stale(target, written)
    shutil.rmtree(built, ignore_errors=True)


def tenant_folder(out: str, tenant: str) -> str:
    return join(out, f"tenant={tenant}")


def add_to_corpus(tables_root: str, corpus: str, tenant: str, key: str, run_partition: str = "") -> int:
    """Copies each table's parts of one export (from a local folder, or from S3 where memport's
    sync wrote them) into the corpus, one folder per table and provider, each replaced whole
    (on S3: the parts written, then the ones this export no longer has deleted). Returns the
    parts copied."""
    copied = 0
    for table in child_folders(tables_root):
        source = join(tables_root, table, run_partition) if run_partition else join(tables_root, table)
        for provider_dir in child_folders(source):
            if not provider_dir.startswith("provider="):
                continue
            parts = [name for name in file_names(join(source, provider_dir)) if name.endswith(".parquet") and not name.startswith(".")]
            target = join(corpus, table, f"tenant={tenant}", provider_dir, f"export={key}")
            if is_s3(corpus):
                for part in parts:
                    copy_file(join(source, provider_dir, part), join(target, part))
                delete_stale(target, set(parts))
            else:
                built = os.path.join(os.path.dirname(target), f".export={key}.{os.getpid()}.partial")
                shutil.rmtree(built, ignore_errors=True)
                os.makedirs(built)
                for part in parts:
                    copy_file(join(source, provider_dir, part), os.path.join(built, part))
                replace_folder(built, target)
            copied += len(parts)
    return copied


def report_row(tenant, export, key, mode, status, report=None, run_id=None, corpus_parts=0, seconds=0.0, error=None) -> dict:
    counts = (report or {}).get("counts", {})
    providers = sorted({entry.get("provider", "") for entry in (report or {}).get("inputs", [])} - {""})
    return {
        "tenant": tenant,
        "export": export,
        "export_key": key,
        "mode": mode,
        "status": status,
        "providers": ",".join(providers),
        "run_id": run_id,
        "conversations_read": int(counts.get("conversations_read", 0)),
        "messages_read": int(counts.get("messages_read", 0)),
        "messages_written": int(counts.get("messages_written", 0)),
        "messages_duplicate": int(counts.get("messages_duplicate", 0)),
        "messages_skipped": int(sum(counts.get("messages_skipped", {}).values())),
        "messages_rejected": int(counts.get("messages_rejected", 0)),
        "memories_written": int(counts.get("memories_written", 0)),
        "rejects": int((report or {}).get("rejects", 0)),
        "corpus_parts": int(corpus_parts),
        "seconds": float(seconds),
        "error": error,
        "attempt_host": os.uname().nodename,
    }


def convert_export(tenant: str, export: str, exported_at: str, options: dict) -> dict:
    """One export converted on this executor (see the module comment)."""
    key = export_key(export)
    done_file = join(tenant_folder(options["out"], tenant), "_done", f"{key}.json")
    if exists(done_file):
        return {**read_json(done_file), "status": "skipped_done"}
    started = time.monotonic()
    target = join(tenant_folder(options["out"], tenant), key)
    # memport writes on this executor's disk even when OUT is on S3: the report and the Parquet
    # parts are read here, then everything is published at once.
    staging = staging_folder(target)
    try:
        report_path = os.path.join(staging, "report.json")
        command = [options["memport"], "convert", export, "--to", options["formats"], "-o", os.path.join(staging, "out"),
                   "--report", report_path, "--rejects", os.path.join(staging, "rejects.ndjson"),
                   "--partition-by", "provider", "--tenant", tenant, "-q"]
        if exported_at:
            command += ["--exported-at", exported_at]
        done = run_memport(command)
        if done.returncode not in (0, 1):
            return report_row(tenant, export, key, "convert", "failed", seconds=time.monotonic() - started,
                              error=(done.stderr.strip() or f"memport exited {done.returncode}")[-2000:])
        with open(report_path, encoding="utf-8") as handle:
            report = json.load(handle)
        parts = add_to_corpus(os.path.join(staging, "out", "parquet"), options["corpus"], tenant, key)
        publish_folder(staging, target)
    finally:
        # Gone already once published; what a failure left (a temporary folder for S3) goes too.
        shutil.rmtree(staging, ignore_errors=True)
    row = report_row(tenant, export, key, "convert", "done", report, corpus_parts=parts, seconds=time.monotonic() - started)
    write_json(done_file, row)
    return row


def sync_tenant(tenant: str, exports: list, options: dict) -> list:
    """A tenant's exports synced in manifest order into the shared state (see the module comment)."""
    rows = []
    out = tenant_folder(options["out"], tenant)
    for export, exported_at in exports:
        key = export_key(export)
        done_file = join(out, "_done", f"{key}.json")
        if exists(done_file):
            rows.append({**read_json(done_file), "status": "skipped_done"})
            continue
        started = time.monotonic()
        command = [options["memport"], "sync", export, "--state", options["state"], "--tenant", tenant,
                   "--to", options["formats"], "-o", out, "--partition-by", "provider", "-q"]
        if exported_at:
            command += ["--exported-at", exported_at]
        done = run_memport(command)
        if done.returncode not in (0, 1):
            rows.append(report_row(tenant, export, key, "sync", "failed", seconds=time.monotonic() - started,
                                   error=(done.stderr.strip() or f"memport exited {done.returncode}")[-2000:]))
            # Later exports of the tenant would be deltas against a run that is missing.
            break
        # The run this sync just committed is the newest; on S3 memport wrote it there itself.
        runs = child_folders(join(out, "runs"))
        sync_report = read_json(join(out, "runs", runs[-1], "sync.json"))
        run_id = sync_report["run_id"]
        parts = add_to_corpus(join(out, "parquet"), options["corpus"], tenant, key, f"run={run_id}")
        row = report_row(tenant, export, key, "sync", "done", sync_report["run"], run_id=run_id, corpus_parts=parts,
                         seconds=time.monotonic() - started)
        write_json(done_file, row)
        rows.append(row)
    return rows


def read_manifest(path: str) -> list:
    with io.StringIO(read_bytes(as_location(path)).decode("utf-8"), newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"tenant", "export"} - set(reader.fieldnames or [])
        if missing:
            sys.exit(f"memport_spark: {path}: the manifest needs the columns tenant and export (missing: {', '.join(sorted(missing))})")
        rows = []
        for line, record in enumerate(reader, start=2):
            tenant, export = (record.get("tenant") or "").strip(), (record.get("export") or "").strip()
            if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", tenant) or not export:
                sys.exit(f"memport_spark: {path}:{line}: a tenant ([A-Za-z0-9._-], 1 to 64 characters) and an export path are required")
            rows.append((tenant, export, (record.get("exported_at") or "").strip()))
    return rows


def write_report_table(rows: list, out: str) -> str:
    """Writes the report table as one Parquet file from the driver, with pyarrow: Spark's own
    writer would need Hadoop's S3 connector for an s3:// OUT. Returns its folder."""
    kinds = {"string": pa.string(), "long": pa.int64(), "double": pa.float64()}
    schema = pa.schema([pa.field(name, kinds[kind]) for name, kind in REPORT_FIELDS])
    table = pa.Table.from_pylist([{name: row.get(name) for name, _ in REPORT_FIELDS} for row in rows], schema=schema)
    target = join(out, "_reports")
    built = staging_folder(target)
    pq.write_table(table, os.path.join(built, "part-00000.parquet"), compression="zstd")
    # Replaces the last job's table whole, with the part files an older Spark-written one had.
    publish_folder(built, target)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exports", required=True, help="the manifest CSV (tenant, export[, exported_at]): a path or s3:// URI")
    parser.add_argument("--out", required=True, help="the output folder (shared by every executor): a path or s3://bucket/prefix")
    parser.add_argument("--corpus", required=True, help="the corpus dataset folder (shared by every executor): a path or s3://bucket/prefix")
    parser.add_argument("--state", help="a sync state (postgres://… shared by the executors): sync each tenant's exports in order")
    parser.add_argument("--to", default="parquet,pam", help="memport formats (parquet is always added, for the corpus)")
    parser.add_argument("--memport", default=shutil.which("memport") or "memport", help="the memport binary on the executors")
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    formats = [name.strip() for name in args.to.split(",") if name.strip()]
    if "parquet" not in formats:
        formats.append("parquet")
    options = {
        "out": as_location(args.out),
        "corpus": as_location(args.corpus),
        "state": args.state,
        "formats": ",".join(formats),
        "memport": os.path.abspath(args.memport) if os.path.exists(args.memport) else args.memport,
    }
    manifest = read_manifest(args.exports)
    spark = SparkSession.builder.appName("memport").getOrCreate()
    context = spark.sparkContext
    if args.state:
        by_tenant = {}
        for tenant, export, exported_at in manifest:
            by_tenant.setdefault(tenant, []).append((export, exported_at))
        items = sorted(by_tenant.items())
        rows = context.parallelize(items, max(1, len(items))).flatMap(lambda item: sync_tenant(item[0], item[1], options)).collect()
    else:
        rows = context.parallelize(manifest, max(1, len(manifest))).map(lambda row: convert_export(row[0], row[1], row[2], options)).collect()

    ordered = sorted(rows, key=lambda row: (row["tenant"], row["export"]))
    reports = write_report_table(ordered, options["out"])
    failed = [row for row in ordered if row["status"] == "failed"]
    done = sum(row["status"] == "done" for row in ordered)
    skipped = sum(row["status"] == "skipped_done" for row in ordered)
    written = sum(row["messages_written"] for row in ordered if row["status"] != "failed")
    print(f"memport_spark: {len(ordered)} exports: {done} done, {skipped} done before, {len(failed)} failed; "
          f"{written} messages written; report table {reports}")
    for row in failed:
        print(f"memport_spark: failed: tenant {row['tenant']} {row['export']}: {row['error']}", file=sys.stderr)
    spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
