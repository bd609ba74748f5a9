#!/usr/bin/env python3
"""memport over a fleet of exports on Apache Spark.

Each export is one Spark task that runs the memport binary on it (convert, or with --state a
sync of the tenant's exports in manifest order, one task per tenant); every run report is
gathered into one table, and each export's Parquet rows are added to one corpus dataset
partitioned by tenant, provider and export, which Spark SQL, DuckDB and Polars read as it is.

    spark-submit pipelines/spark/memport_spark.py --exports manifest.csv --out OUT --corpus CORPUS
    spark-submit pipelines/spark/memport_spark.py --exports manifest.csv --state postgres://… --out OUT --corpus CORPUS

The manifest is a CSV file with a header and the columns `tenant` and `export` (a path every
executor can read), and optionally `exported_at` (RFC 3339; the export time written to its
outputs). Paths are local or shared-filesystem paths.

What each export leaves (OUT and CORPUS must be on a filesystem every executor writes to):

    OUT/tenant=<tenant>/<export-key>/          convert: the outputs, run report and rejects
    OUT/tenant=<tenant>/                       sync: memport's runs/ and parquet/ for the tenant
    OUT/tenant=<tenant>/_done/<export-key>.json  the export's report row, written last: done
    OUT/_reports/                              every export's row of the last job (Parquet)
    CORPUS/<table>/tenant=<t>/provider=<p>/export=<export-key>/part-NNNNN.parquet

Re-running the job skips the exports whose `_done` file exists, so after a failure only the
exports that did not finish run again; an export's corpus folder is replaced whole, so a
re-run adds no duplicate rows. An export memport refuses (exit 2: unreadable, not an export)
becomes a `failed` row with memport's message; a memport killed by a signal, or missing, fails
the task, which Spark's task retry runs again.
"""

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

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


def tenant_folder(out: str, tenant: str) -> str:
    return os.path.join(out, f"tenant={tenant}")


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


def add_to_corpus(tables_root: str, corpus: str, tenant: str, key: str, run_partition: str = "") -> int:
    """Copies each table's parts of one export into the corpus, one folder per table and
    provider, each replaced whole. Returns the parts copied."""
    copied = 0
    if not os.path.isdir(tables_root):
        return 0
    for table in sorted(os.listdir(tables_root)):
        table_dir = os.path.join(tables_root, table)
        if table.startswith(".") or not os.path.isdir(table_dir):
            continue
        source = os.path.join(table_dir, run_partition) if run_partition else table_dir
        if not os.path.isdir(source):
            continue
        for provider_dir in sorted(os.listdir(source)):
            if not provider_dir.startswith("provider="):
                continue
            parts = sorted(name for name in os.listdir(os.path.join(source, provider_dir)) if name.endswith(".parquet") and not name.startswith("."))
            target = os.path.join(corpus, table, f"tenant={tenant}", provider_dir, f"export={key}")
            built = os.path.join(os.path.dirname(target), f".export={key}.{os.getpid()}.partial")
            shutil.rmtree(built, ignore_errors=True)
            os.makedirs(built)
            for part in parts:
                shutil.copyfile(os.path.join(source, provider_dir, part), os.path.join(built, part))
                copied += 1
            replace_folder(built, target)
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
    done_file = os.path.join(tenant_folder(options["out"], tenant), "_done", f"{key}.json")
    if os.path.exists(done_file):
        with open(done_file, encoding="utf-8") as handle:
            return {**json.load(handle), "status": "skipped_done"}
    started = time.monotonic()
    target = os.path.join(tenant_folder(options["out"], tenant), key)
    staging = f"{target}.{os.getpid()}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    report_path = os.path.join(staging, "report.json")
    command = [options["memport"], "convert", export, "--to", options["formats"], "-o", os.path.join(staging, "out"),
               "--report", report_path, "--rejects", os.path.join(staging, "rejects.ndjson"),
               "--partition-by", "provider", "--tenant", tenant, "-q"]
    if exported_at:
        command += ["--exported-at", exported_at]
    done = run_memport(command)
    if done.returncode not in (0, 1):
        shutil.rmtree(staging, ignore_errors=True)
        return report_row(tenant, export, key, "convert", "failed", seconds=time.monotonic() - started,
                          error=(done.stderr.strip() or f"memport exited {done.returncode}")[-2000:])
    with open(report_path, encoding="utf-8") as handle:
        report = json.load(handle)
    parts = add_to_corpus(os.path.join(staging, "out", "parquet"), options["corpus"], tenant, key)
    replace_folder(staging, target)
    row = report_row(tenant, export, key, "convert", "done", report, corpus_parts=parts, seconds=time.monotonic() - started)
    write_json_atomically(done_file, row)
    return row


def sync_tenant(tenant: str, exports: list, options: dict) -> list:
    """A tenant's exports synced in manifest order into the shared state (see the module comment)."""
    rows = []
    out = tenant_folder(options["out"], tenant)
    for export, exported_at in exports:
        key = export_key(export)
        done_file = os.path.join(out, "_done", f"{key}.json")
        if os.path.exists(done_file):
            with open(done_file, encoding="utf-8") as handle:
                rows.append({**json.load(handle), "status": "skipped_done"})
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
        runs = sorted(name for name in os.listdir(os.path.join(out, "runs")) if not name.startswith("."))
        with open(os.path.join(out, "runs", runs[-1], "sync.json"), encoding="utf-8") as handle:
            sync_report = json.load(handle)
        run_id = sync_report["run_id"]
        parts = add_to_corpus(os.path.join(out, "parquet"), options["corpus"], tenant, key, f"run={run_id}")
        row = report_row(tenant, export, key, "sync", "done", sync_report["run"], run_id=run_id, corpus_parts=parts,
                         seconds=time.monotonic() - started)
        write_json_atomically(done_file, row)
        rows.append(row)
    return rows


def read_manifest(path: str) -> list:
    with open(path, newline="", encoding="utf-8") as handle:
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exports", required=True, help="the manifest CSV (tenant, export[, exported_at])")
    parser.add_argument("--out", required=True, help="the output folder (shared by every executor)")
    parser.add_argument("--corpus", required=True, help="the corpus dataset folder (shared by every executor)")
    parser.add_argument("--state", help="a sync state (postgres://… shared by the executors): sync each tenant's exports in order")
    parser.add_argument("--to", default="parquet,pam", help="memport formats (parquet is always added, for the corpus)")
    parser.add_argument("--memport", default=shutil.which("memport") or "memport", help="the memport binary on the executors")
    args = parser.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    formats = [name.strip() for name in args.to.split(",") if name.strip()]
    if "parquet" not in formats:
        formats.append("parquet")
    options = {
        "out": os.path.abspath(args.out),
        "corpus": os.path.abspath(args.corpus),
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

    kinds = {"string": StringType(), "long": LongType(), "double": DoubleType()}
    schema = StructType([StructField(name, kinds[kind], True) for name, kind in REPORT_FIELDS])
    ordered = sorted(rows, key=lambda row: (row["tenant"], row["export"]))
    table = spark.createDataFrame([tuple(row.get(name) for name, _ in REPORT_FIELDS) for row in ordered], schema)
    table.coalesce(1).write.mode("overwrite").option("compression", "zstd").parquet(os.path.join(options["out"], "_reports"))
    failed = [row for row in ordered if row["status"] == "failed"]
    done = sum(row["status"] == "done" for row in ordered)
    skipped = sum(row["status"] == "skipped_done" for row in ordered)
    written = sum(row["messages_written"] for row in ordered if row["status"] != "failed")
    print(f"memport_spark: {len(ordered)} exports: {done} done, {skipped} done before, {len(failed)} failed; "
          f"{written} messages written; report table {os.path.join(options['out'], '_reports')}")
    for row in failed:
        print(f"memport_spark: failed: tenant {row['tenant']} {row['export']}: {row['error']}", file=sys.stderr)
    spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
