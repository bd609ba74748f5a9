#!/usr/bin/env python3
"""Benchmark of memport reading its own formats (a benchmark, not a test).

For each size it takes the generated ChatGPT export of ``benches/bench.py`` (made
on first use, cached under ``--workdir``), writes it once in every memory format
(not measured), then measures, one run each after a warm-up ``cat``:

* ``sha256sum FILE`` of the format's file (single-core hashing floor),
* ``memport convert FILE --to aimem-ndjson -o OUT`` (read the format back).

MB/s is the size of the format's input (the file, or the whole PAM store
folder) divided by wall time; the original ``conversations.json`` MB/s is shown
beside it. Peak RSS is the child's ``ru_maxrss`` from the same launcher as
``bench.py``. Outputs go to ``--outdir`` (a tmpfs by default), because a PAM
store is one file per conversation and this machine's ext4 pays more for
creating files than memport does for converting them (docs/performance.md).

Usage:
    python3 benches/bench_read_formats.py [--sizes 256M,1G] [--formats pam,mif,ump-ndjson,aime,aimem-ndjson]
                                          [--workdir /tmp/memport-bench] [--outdir /dev/shm/memport-read]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the shared launcher, generator cache and helpers)

FILE_NAMES = {
    "pam": "pam",
    "mif": "memory.mif.json",
    "ump": "memory.ump.json",
    "ump-ndjson": "memory.ump.ndjson",
    "aime": "memory.aime.json",
    "aimem": "memory.aimem.json",
    "aimem-ndjson": "memory.aimem.ndjson",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="256M,1G")
    ap.add_argument("--formats", default="pam,mif,ump-ndjson,aime,aimem-ndjson")
    ap.add_argument("--workdir", default="/tmp/memport-bench")
    ap.add_argument("--outdir", default="/dev/shm/memport-read")
    ap.add_argument("--binary", default="target/release/memport")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    binary = bench.resolve_binary(args.binary)
    if binary is None:
        print("error: build memport first with `cargo build --release`", file=sys.stderr)
        return 2
    formats = [name.strip() for name in args.formats.split(",") if name.strip()]
    unknown = [name for name in formats if name not in FILE_NAMES]
    if unknown:
        ap.error(f"unknown format(s) {', '.join(unknown)}; choose from {', '.join(FILE_NAMES)}")
    workdir = os.path.abspath(args.workdir)
    os.makedirs(workdir, exist_ok=True)
    floor = bench.run_measured(["true"], os.devnull, os.devnull, workdir)["max_rss_mib"]
    rows = []
    for size_text in args.sizes.split(","):
        label, size = size_text.strip().upper(), bench.parse_size(size_text.strip())
        raw, _ = bench.ensure_export(label, size, args.seed, workdir, False)
        raw_bytes = os.path.getsize(raw)
        written = os.path.join(args.outdir, f"formats-{label}")
        shutil.rmtree(written, ignore_errors=True)
        os.makedirs(written, exist_ok=True)
        print(f"[read-bench] {label}: writing {','.join(formats)} (not measured) ...", file=sys.stderr, flush=True)
        # With one format, -o names that format's file or folder itself.
        target = written if len(formats) > 1 else os.path.join(written, FILE_NAMES[formats[0]])
        subprocess.run([binary, "convert", raw, "--to", ",".join(formats), "-o", target, "-q",
                        "--exported-at", "2026-01-01T00:00:00Z"], check=True, stdout=subprocess.DEVNULL)
        for fmt in formats:
            source = os.path.join(written, FILE_NAMES[fmt])
            source_bytes = bench.path_bytes(source)
            for path in bench.input_files(source):
                subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
            out = os.path.join(args.outdir, f"read-{label}.aimem.ndjson")
            commands = [(f"memport {fmt} → aimem-ndjson", [binary, "convert", source, "--to", "aimem-ndjson", "-o", out, "-q"])]
            if os.path.isfile(source):
                commands.insert(0, (f"sha256sum ({fmt} file)", ["sha256sum", source]))
            for name, argv in commands:
                print(f"[read-bench] {label}: {name} ...", file=sys.stderr, flush=True)
                stdout = os.path.join(workdir, "cmd.stdout")
                row = bench.run_measured(argv, stdout if argv[0] == binary else os.devnull,
                                         os.path.join(workdir, "cmd.stderr"), workdir)
                row.update({"size": label, "name": name, "input_bytes": source_bytes, "export_bytes": raw_bytes})
                row["mb_per_s"] = source_bytes / max(row["wall_s"], 1e-9) / 1e6
                row["export_mb_per_s"] = raw_bytes / max(row["wall_s"], 1e-9) / 1e6
                if row["exit_code"] != 0:
                    print(bench.tail(os.path.join(workdir, "cmd.stderr")), file=sys.stderr)
                rows.append(row)
                bench.remove(out)
        shutil.rmtree(written, ignore_errors=True)
    print(f"Launcher RSS floor {floor:.1f} MiB. MB/s = the format input's bytes / wall s; "
          f"export MB/s = the original conversations.json's bytes / wall s.\n")
    print("| export | command | input MB | wall s | MB/s | export MB/s | peak RSS MiB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for row in rows:
        rss = row["max_rss_mib"]
        shown = f"≤ {floor:.0f}" if rss <= floor + 0.5 else f"{rss:.0f}"
        print(f"| {row['size']} | {row['name']} | {row['input_bytes'] / 1e6:,.0f} | {row['wall_s']:.2f} | "
              f"{row['mb_per_s']:.0f} | {row['export_mb_per_s']:.0f} | {shown} |")
    with open(os.path.join(workdir, "read-results.json"), "w") as f:
        json.dump(rows, f, indent=2)
    return 1 if any(row["exit_code"] != 0 for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
