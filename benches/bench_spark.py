#!/usr/bin/env python3
"""memport over a fleet of exports: Spark (local-cluster, 2 executors) against a shell loop.

    python3 benches/bench_spark.py [--exports 16] [--conversations 300] [--spark-submit .venv/bin/spark-submit]

Generates N ChatGPT exports (benches/gen_months.py, one month each, seeds 1..N), then converts
them to parquet + aimem-ndjson three ways, in the same run:

* a shell loop of `memport convert`, one export after the other (memport uses both cores);
* `pipelines/spark/memport_spark.py` on `local-cluster[2,1,1024]` (two executor JVMs of one
  core each), which also copies each export's Parquet rows into the corpus;
* the same Spark job on an empty manifest: the engine's fixed cost (JVM and Python start-up,
  the report table), whatever the fleet's size.

Reports the wall times, and the engine's cost per export: (Spark − empty job) × 2 executors / N
− the loop's time per export. Needs a release build (cargo build --release), PySpark and a JRE
(scripts/test installs both into .venv).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXPORTED_AT = "2026-11-01T00:00:00Z"


def timed(command, env=None):
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"bench_spark: {' '.join(command[:3])} … failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return elapsed, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exports", type=int, default=16)
    parser.add_argument("--conversations", type=int, default=300)
    parser.add_argument("--spark-submit", default=os.path.join(ROOT, ".venv", "bin", "spark-submit"))
    parser.add_argument("--memport", default=os.path.join(ROOT, "target", "release", "memport"))
    parser.add_argument("--work", help="keep the exports and outputs here (default: a temporary folder)")
    args = parser.parse_args()
    for needed in (args.spark_submit, args.memport):
        if not os.path.exists(needed):
            sys.exit(f"bench_spark: {needed} is missing (cargo build --release; scripts/test installs PySpark into .venv)")
    work = args.work or tempfile.mkdtemp(prefix="memport-bench-spark-")
    os.makedirs(work, exist_ok=True)
    exports = []
    total_bytes = 0
    for index in range(1, args.exports + 1):
        folder = os.path.join(work, f"gen-{index}")
        if not os.path.isdir(os.path.join(folder, "month-1")):
            subprocess.run([sys.executable, os.path.join(HERE, "gen_months.py"), "chatgpt", "--out", folder, "--months", "1",
                            "--conversations", str(args.conversations), "--seed", str(index), "--quiet"], check=True)
        export = os.path.join(folder, "month-1")
        exports.append(export)
        total_bytes += sum(os.path.getsize(os.path.join(export, name)) for name in os.listdir(export))

    loop_out = os.path.join(work, "loop")
    shutil.rmtree(loop_out, ignore_errors=True)
    started = time.monotonic()
    for index, export in enumerate(exports):
        timed([args.memport, "convert", export, "--to", "parquet,aimem-ndjson", "-o", os.path.join(loop_out, str(index)),
               "--partition-by", "provider", "-q", "--exported-at", EXPORTED_AT])
    loop = time.monotonic() - started

    env = dict(os.environ)
    env["PATH"] = os.path.dirname(os.path.abspath(args.spark_submit)) + os.pathsep + env.get("PATH", "")

    def spark(rows, name):
        manifest = os.path.join(work, f"{name}.csv")
        with open(manifest, "w", encoding="utf-8") as handle:
            handle.write("tenant,export,exported_at\n")
            for index, export in enumerate(rows):
                handle.write(f"t{index},{export},{EXPORTED_AT}\n")
        out, corpus = os.path.join(work, f"{name}-out"), os.path.join(work, f"{name}-corpus")
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(corpus, ignore_errors=True)
        elapsed, _ = timed([args.spark_submit, "--master", "local-cluster[2,1,1024]", "--conf", "spark.ui.enabled=false",
                            os.path.join(ROOT, "pipelines", "spark", "memport_spark.py"), "--exports", manifest, "--out", out,
                            "--corpus", corpus, "--memport", args.memport, "--to", "parquet,aimem-ndjson"], env=env)
        return elapsed

    empty = spark([], "empty")
    fleet = spark(exports, "fleet")
    per_export_loop = loop / len(exports)
    overhead = (fleet - empty) * 2 / len(exports) - per_export_loop
    cpus = os.cpu_count()
    print(f"Command: `python3 benches/bench_spark.py --exports {args.exports} --conversations {args.conversations}`")
    print(f"Machine: {cpus} CPUs; {len(exports)} ChatGPT exports, {total_bytes:,} B in all ({total_bytes / len(exports) / 1e6:.1f} MB each)")
    print()
    print("| run | wall s | per export s |")
    print("|---|---:|---:|")
    print(f"| shell loop of `memport convert` | {loop:.2f} | {per_export_loop:.3f} |")
    print(f"| Spark, empty manifest (fixed cost) | {empty:.2f} | |")
    print(f"| Spark, {len(exports)} exports on 2 executors | {fleet:.2f} | {(fleet - empty) / len(exports):.3f} |")
    print()
    print(f"- Engine cost per export (one executor's time beyond the loop's): {overhead:.3f} s")
    print(f"- Outputs in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
