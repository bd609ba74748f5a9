"""Every ChatGPT path of memport against its reference, in one run (``bench.py --paths``).

For each size, on the generated ChatGPT export (raw ``conversations.json`` and its zip), in
interleaved rounds (every command once per round, ``--runs`` rounds):

* references: ``cat`` (I/O), ``sha256sum`` (one core hashing), ``unzip -p`` (inflate),
  DuckDB's lean query to Parquet (``bench_parquet.DUCKDB_SCRIPT``, every core) and, up to
  ``--pam-reference-max`` (default 256M), the PAM reference converter ``pam convert``;
* memport, with its defaults (extraction on) unless the row says ``--extract off``:
  raw → aimem-ndjson (on, off), raw → ump-ndjson, zip → aimem-ndjson (on, off),
  raw → parquet, raw → pam, and raw → mif, ump, aime.

Each memport row is set against its reference in the same rounds: ratio = the reference's
median wall time / memport's (above 1: memport is faster). MB/s is always the raw
``conversations.json`` size over wall time; peak RSS is ``ru_maxrss`` (see bench.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import bench
import bench_parquet

# (row name, reference row name or None, how to build the command)
MEMPORT_ROWS = [
    ("memport raw → aimem-ndjson", "sha256sum", "raw", "aimem-ndjson", []),
    ("memport raw → aimem-ndjson, --extract off", "sha256sum", "raw", "aimem-ndjson", ["--extract", "off"]),
    ("memport raw → ump-ndjson", "sha256sum", "raw", "ump-ndjson", []),
    ("memport zip → aimem-ndjson", "unzip -p", "zip", "aimem-ndjson", []),
    ("memport zip → aimem-ndjson, --extract off", "unzip -p", "zip", "aimem-ndjson", ["--extract", "off"]),
    ("memport raw → parquet", "DuckDB lean query → Parquet", "raw", "parquet", []),
    ("memport raw → pam", "pam convert (reference)", "raw", "pam", []),
    ("memport raw → mif", "sha256sum", "raw", "mif", []),
    ("memport raw → ump", "sha256sum", "raw", "ump", []),
    ("memport raw → aime", "sha256sum", "raw", "aime", []),
]


def run(sizes, args, binary: str, workdir: str, outdir: str, memport_opts: list[str]) -> int:
    python = bench_parquet.default_python()
    duckdb = subprocess.run([python, "-c", "import duckdb; print(duckdb.__version__)"], capture_output=True, text=True)
    duckdb_version = duckdb.stdout.strip() if duckdb.returncode == 0 else None
    pam = os.path.join(os.path.dirname(python), "pam")
    pam = pam if os.access(pam, os.X_OK) else shutil.which("pam")
    pam_max = bench.parse_size(args.pam_reference_max)
    if duckdb_version is None or pam is None:
        print("[bench] note: DuckDB or `pam` is missing (run scripts/test once: it makes .venv); "
              "their rows are skipped", file=sys.stderr)
    floor = bench.run_measured(["true"], os.devnull, os.devnull, workdir)["max_rss_mib"]
    meta = bench.machine_info(binary)
    meta.update({"runs": args.runs, "rss_floor_mib": floor, "duckdb": duckdb_version, "pam": pam})
    log_out, log_err = os.path.join(workdir, "cmd.stdout"), os.path.join(workdir, "cmd.stderr")
    rows: list[dict] = []
    for label, size in sizes:
        raw, zip_path = bench.ensure_export(label, size, args.seed, workdir, args.regen)
        raw_bytes = os.path.getsize(raw)
        for path in (raw, zip_path):
            subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
        out = lambda name: os.path.join(outdir, f"paths-{label}-{name}")  # noqa: E731
        commands: list[tuple[str, list[str], str | None]] = [
            ("cat", ["cat", raw], None),
            ("sha256sum", ["sha256sum", raw], None),
            ("unzip -p", ["unzip", "-p", zip_path, "conversations.json"], None),
        ]
        if duckdb_version:
            commands.append(("DuckDB lean query → Parquet",
                             [python, "-c", bench_parquet.DUCKDB_SCRIPT, raw, out("duckdb.parquet"),
                              json.dumps(bench_parquet.DUCKDB_COLUMNS)], out("duckdb.parquet")))
        if pam and size <= pam_max:
            commands.append(("pam convert (reference)", [pam, "convert", raw, "-o", out("pam-reference")],
                             out("pam-reference")))
        for name, _, source, fmt, extra in MEMPORT_ROWS:
            target = out(fmt.replace("-", "."))
            commands.append((name, [binary, "convert", raw if source == "raw" else zip_path, "--to", fmt, "-o", target,
                                    "-q"] + extra + memport_opts, target))
        samples: dict[str, list[dict]] = {name: [] for name, _, _ in commands}
        for round_number in range(args.runs):
            for name, cmd, target in commands:
                if target:
                    bench.remove(target)
                print(f"[bench] {label} round {round_number + 1}: {name} ...", file=sys.stderr, flush=True)
                stdout = log_out if target else os.devnull
                sample = bench.run_measured(cmd, stdout, log_err, workdir)
                sample["mb_per_s"] = raw_bytes / max(sample["wall_s"], 1e-9) / 1e6
                if sample["exit_code"] != 0:
                    print(f"[bench] {name} exited with {sample['exit_code']}:\n{bench.tail(log_err)}", file=sys.stderr)
                print(f"[bench]   {sample['wall_s']:.2f} s, {sample['mb_per_s']:.1f} MB/s, "
                      f"peak RSS {sample['max_rss_mib']:.1f} MiB", file=sys.stderr)
                if target:
                    bench.remove(target)
                os.sync()
                samples[name].append(sample)
        medians = {}
        for name, cmd, _ in commands:
            ordered = sorted(samples[name], key=lambda sample: sample["wall_s"])
            row = dict(ordered[(len(ordered) - 1) // 2])
            row.update({"size": label, "name": name, "argv": cmd, "input_bytes": raw_bytes,
                        "mb_per_s_all": [round(sample["mb_per_s"], 1) for sample in samples[name]],
                        "max_rss_mib_all": [round(sample["max_rss_mib"], 1) for sample in samples[name]]})
            medians[name] = row
        for name, reference, *_ in MEMPORT_ROWS:
            if reference in medians:
                medians[name]["reference"] = reference
                medians[name]["ratio"] = medians[reference]["wall_s"] / max(medians[name]["wall_s"], 1e-9)
        rows.extend(medians[name] for name, _, _ in commands)
        with open(os.path.join(workdir, "paths-results.json"), "w") as f:
            json.dump({"meta": meta, "results": rows}, f, indent=2)
    print(table(rows, floor, args.runs))
    print(f"\nMachine: {meta.get('cpus')} CPUs, {meta.get('cpu_model', '?')}, "
          f"{meta.get('mem_total_kib', 0) / 2**20:.0f} GiB; DuckDB {duckdb_version}; results in "
          f"{os.path.join(workdir, 'paths-results.json')}")
    return 1 if any(row["exit_code"] != 0 for row in rows) else 0


def table(rows: list[dict], floor: float, runs: int) -> str:
    lines = [f"| input | command | wall s | MB/s (range of {runs}) | peak RSS MiB | user s | sys s | vs reference |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for row in rows:
        rss = max(row["max_rss_mib_all"])
        rss_text = f"≤ {floor:.0f}" if rss <= floor + 0.25 else f"{rss:.0f}"
        speeds = row["mb_per_s_all"]
        ratio = f"**{row['ratio']:.2f}×** {row['reference']}" if "ratio" in row else ""
        lines.append(f"| {row['size']} | {row['name']} | {row['wall_s']:.2f} | {row['mb_per_s']:.0f} "
                     f"({min(speeds):.0f}–{max(speeds):.0f}) | {rss_text} | {row['user_s']:.2f} | "
                     f"{row['sys_s']:.2f} | {ratio} |")
    return "\n".join(lines)
