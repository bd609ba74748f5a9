#!/usr/bin/env python3
"""Where a conversion's CPU time goes, by step (a profile, not a test).

Runs ``perf record`` (call graphs through DWARF) on one ``memport convert`` and attributes
each sample to the innermost step its stack is in: hashing (SHA-256; BLAKE3 and xxh3 of the
keys), inflate, extraction, framing, writing, encoding, decoding, the collector's stages and
the engine. Allocation and copies count for the step that asked for them, the kernel's part
for the step that made the system call. Prints each step's share of the samples and, given
the run's CPU seconds per GB (``--cpu-per-gb``, user + sys from ``bench.py --paths``), its
seconds per GB.

Build with line tables so the stacks have names:
    CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release --target-dir /tmp/prof
    python3 benches/profile_steps.py --binary /tmp/prof/release/memport --cpu-per-gb 8.30 \\
        /tmp/memport-bench/chatgpt-256M-seed1/conversations.json -- --to aimem-ndjson

Arguments after ``--`` go to ``memport convert`` (the output goes to a temporary folder).
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile

# (step, names that mark it), tried from the leaf of each stack towards its root.
STEPS = [
    ("hashing (SHA-256)", ["sha2::", "sha256", "Sha256"]),
    ("hashing (BLAKE3, xxh3 keys)", ["blake3", "xxh3", "twox", "XxHash"]),
    ("inflate", ["zlib_rs", "inflate", "flate2"]),
    ("extraction", ["stages::extract", "pipeline::extraction"]),
    ("framing", ["json_array", "ArrayFramer", "read_ahead"]),
    ("writing", ["DirectWriter", "write_block", "write_all_at", "for_each_block"]),
    ("encoding", ["sinks::"]),
    ("decoding (parse, normalize)", ["sources::", "simd_json", "sonic_rs", "serde_json", "normalize::"]),
    ("collector stages (dedup, ids)", ["stages::", "key_set"]),
    ("engine (queues, ordering)", ["pipeline::engine", "crossbeam", "tokio"]),
]


def stacks(script_text: str):
    """(thread, frames leaf first) of each sample in `perf script -F comm,ip,sym` output."""
    current = None
    for line in script_text.splitlines():
        if not line.strip():
            if current:
                yield current
            current = None
        elif not line.startswith((" ", "\t")):
            current = (line.split()[0], [])
        elif current is not None:
            parts = line.strip().split(" ", 1)
            current[1].append(parts[1] if len(parts) > 1 else parts[0])
    if current:
        yield current


def step_of(frames: list[str]) -> str:
    for frame in frames:
        for step, names in STEPS:
            if any(name in frame for name in names):
                return step
    return "kernel, other"


def main() -> int:
    argv = sys.argv[1:]
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", help="the export to convert")
    ap.add_argument("--binary", default="target/release/memport")
    ap.add_argument("--cpu-per-gb", type=float, help="the run's user + sys seconds per GB, to turn shares into seconds")
    ap.add_argument("--frequency", type=int, default=1999)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memport-profile-") as folder:
        data = os.path.join(folder, "perf.data")
        out = os.path.join(folder, "out")
        command = [args.binary, "convert", args.input, "-o", out, "-q"] + (extra or ["--to", "aimem-ndjson"])
        subprocess.run(["perf", "record", "-o", data, "-F", str(args.frequency), "-g", "--call-graph", "dwarf,32768", "--"]
                       + command, check=True, stdout=subprocess.DEVNULL)
        script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym"], check=True, capture_output=True,
                                text=True).stdout
    counts = collections.Counter(step_of(frames) for _, frames in stacks(script))
    total = sum(counts.values())
    print(f"{total} samples of `{' '.join(command[1:])}`")
    print("| step | share of CPU |" + (" CPU s per GB |" if args.cpu_per_gb else ""))
    print("|---|---:|" + ("---:|" if args.cpu_per_gb else ""))
    for step, count in counts.most_common():
        seconds = f" {args.cpu_per_gb * count / total:.2f} |" if args.cpu_per_gb else ""
        print(f"| {step} | {100 * count / total:.1f}% |{seconds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
