#!/usr/bin/env python3
"""Parquet benchmark for memport (a benchmark, not a test).

For each size (default 1G) it generates (or reuses) the synthetic ChatGPT export of
``benches/bench.py`` (same generator, same cache under ``--workdir``), warms the page
cache, and runs once each, measuring wall time and peak RSS the same way as bench.py:

* ``cat conversations.json``                          (I/O floor)
* ``sha256sum conversations.json``                    (single-core hashing floor)
* ``memport convert conversations.json --to parquet`` (the dataset: conversations, messages,
  memories, assets; zstd)
* ``memport convert ... --to parquet,aimem-ndjson``   (both from one read)
* DuckDB (Python package, every core): ``read_json`` of the same file with a hand-written
  schema (no type sniffing), the mapping unnested to one row per message node, written
  with ``COPY ... (FORMAT parquet, COMPRESSION zstd)``: the conversion a user would write
  by hand.

DuckDB comes from the Python interpreter given by ``--python`` (default: the repo's
``.venv/bin/python``, made by ``scripts/test``, else ``python3``).

Usage:
    python3 benches/bench_parquet.py [--sizes 1G] [--workdir /tmp/memport-bench]
                                     [--binary target/release/memport] [--python PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (same directory: generator cache, launcher, RSS floor)

# The hand-written schema: the fields of a ChatGPT conversation a Parquet table of messages
# needs; `parts` and `metadata` stay JSON because their shape varies by content type.
DUCKDB_COLUMNS = {
    "conversation_id": "VARCHAR",
    "title": "VARCHAR",
    "create_time": "DOUBLE",
    "update_time": "DOUBLE",
    "current_node": "VARCHAR",
    "default_model_slug": "VARCHAR",
    "mapping": "MAP(VARCHAR, STRUCT(id VARCHAR, parent VARCHAR, children VARCHAR[], "
               "message STRUCT(id VARCHAR, author STRUCT(role VARCHAR, name VARCHAR), create_time DOUBLE, "
               "content STRUCT(content_type VARCHAR, parts JSON[], text VARCHAR, language VARCHAR), "
               "status VARCHAR, weight DOUBLE, metadata JSON)))",
}

DUCKDB_SCRIPT = r"""
import json, sys, duckdb
source, target, columns = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
con = duckdb.connect()
con.execute("SET memory_limit='8GB'")
spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"
con.execute(f'''
COPY (
  SELECT conversation_id, title, to_timestamp(create_time) AS conversation_created_at,
         node.key AS message_id, node.value.parent AS parent_id,
         node.value.message.author.role AS role, node.value.message.author.name AS author_name,
         to_timestamp(node.value.message.create_time) AS created_at,
         node.value.message.content.content_type AS content_type,
         to_json(node.value.message.content.parts) AS parts,
         node.value.message.status AS status, node.value.message.weight AS weight,
         node.value.message.metadata AS metadata
  FROM (SELECT conversation_id, title, create_time, unnest(map_entries(mapping)) AS node
        FROM read_json('{source}', format = 'array', columns = {spec},
                       maximum_object_size = 1073741824))
  WHERE node.value.message IS NOT NULL
) TO '{target}' (FORMAT parquet, COMPRESSION zstd)
''')
print(con.execute(f"SELECT count(*) FROM '{target}'").fetchone()[0])
"""


def default_python() -> str:
    venv = os.path.join(bench.REPO, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else "python3"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1G", help="comma-separated export sizes (default 1G)")
    ap.add_argument("--workdir", default="/tmp/memport-bench", help="cache + scratch dir (default /tmp/memport-bench)")
    ap.add_argument("--binary", default="target/release/memport", help="memport binary")
    ap.add_argument("--python", default=default_python(), help="Python with the duckdb package")
    ap.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    args = ap.parse_args()

    binary = bench.resolve_binary(args.binary)
    if binary is None:
        print(f"error: memport binary not found: {args.binary!r}; run `cargo build --release`", file=sys.stderr)
        return 2
    check = subprocess.run([args.python, "-c", "import duckdb; print(duckdb.__version__)"], capture_output=True, text=True)
    if check.returncode != 0:
        print(f"error: {args.python} has no duckdb package; run scripts/test once (it makes .venv) "
              f"or pass --python", file=sys.stderr)
        return 2
    duckdb_version = check.stdout.strip()
    workdir = os.path.abspath(args.workdir)
    os.makedirs(workdir, exist_ok=True)
    floor = bench.run_measured(["true"], os.devnull, os.devnull, workdir)["max_rss_mib"]
    rows = []
    for label, size in [(s.strip().upper(), bench.parse_size(s)) for s in args.sizes.split(",") if s.strip()]:
        raw, _zip = bench.ensure_export(label, size, args.seed, workdir, False)
        raw_bytes = os.path.getsize(raw)
        subprocess.run(["cat", raw], stdout=subprocess.DEVNULL, check=True)
        dataset = os.path.join(workdir, f"parquet-{label}")
        both = os.path.join(workdir, f"parquet-both-{label}")
        duck_out = os.path.join(workdir, f"duckdb-{label}.parquet")
        commands = [
            ("cat", ["cat", raw], os.devnull),
            ("sha256sum", ["sha256sum", raw], os.devnull),
            ("memport → parquet", [binary, "convert", raw, "--to", "parquet", "-o", dataset, "--quiet"], dataset),
            ("memport → parquet + aimem-ndjson", [binary, "convert", raw, "--to", "parquet,aimem-ndjson", "-o", both,
                                                  "--quiet"], both),
            (f"DuckDB {duckdb_version} read_json → parquet", [args.python, "-c", DUCKDB_SCRIPT, raw, duck_out,
                                                               json.dumps(DUCKDB_COLUMNS)], duck_out),
        ]
        for name, argv, output in commands:
            for path in (dataset, both, duck_out):
                shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else bench.remove(path)
            print(f"[bench] {label}: {name} ...", file=sys.stderr, flush=True)
            log = os.path.join(workdir, "cmd.stdout")
            row = {"size": label, "name": name, "input_bytes": raw_bytes}
            row.update(bench.run_measured(argv, log, os.path.join(workdir, "cmd.stderr"), workdir))
            row["mb_per_s"] = raw_bytes / max(row["wall_s"], 1e-9) / 1e6
            row["output_bytes"] = bench.path_bytes(output) if output != os.devnull else None
            if row["exit_code"] != 0:
                print(bench.tail(os.path.join(workdir, "cmd.stderr")), file=sys.stderr)
            print(f"[bench]   {row['wall_s']:.2f} s, {row['mb_per_s']:.1f} MB/s, peak RSS {row['max_rss_mib']:.1f} MiB"
                  + (f", output {row['output_bytes'] / 1e6:.0f} MB" if row["output_bytes"] else ""), file=sys.stderr)
            rows.append(row)
        for path in (dataset, both, duck_out):
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else bench.remove(path)
    print("| size | command | wall s | MB/s | peak RSS MiB | output MB |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        rss = f"≤ {floor:.1f}" if r["max_rss_mib"] <= floor + 0.25 else f"{r['max_rss_mib']:.0f}"
        out = f"{r['output_bytes'] / 1e6:.0f}" if r.get("output_bytes") else ""
        print(f"| {r['size']} | {r['name']} | {r['wall_s']:.2f} | {r['mb_per_s']:.0f} | {rss} | {out} |")
    with open(os.path.join(workdir, "parquet-results.json"), "w") as f:
        json.dump(rows, f, indent=2)
    return 1 if any(r["exit_code"] != 0 for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
