#!/usr/bin/env python3
"""Compares memport builds on one input by running them alternately.

On a VM whose speed drifts by 10-25% between minutes, two builds timed one after the other
say little; run in turns, each round sees the same machine. Each build converts INPUT to
AIMEM NDJSON (into a temporary file), RUNS times in turns, and the median and fastest wall
time and median CPU time (user + system, of the child) are printed per build.

    python3 benches/ab.py --input /tmp/memport-bench/gemini-json-256M-seed1 \\
        --runs 9 /tmp/memport-before target/release/memport

After the times, the first binary's speed against each other one's is printed as the median
of the rounds' ratios (the other's wall time over the first's): with extraction on first and a
wrapper adding `--extract off` second, that is what extraction costs.

Output is not compared here: check it with `SOURCE_DATE_EPOCH=0 memport convert ...` and `cmp`.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", required=True, help="export to convert (file or folder)")
    parser.add_argument("--runs", type=int, default=7, help="runs per build (default 7)")
    parser.add_argument("--to", default="aimem-ndjson", help="output format (default aimem-ndjson)")
    parser.add_argument("binaries", nargs="+", help="memport binaries to compare")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    for binary in args.binaries:
        if not os.access(binary, os.X_OK):
            parser.error(f"{binary} is not an executable file")
    walls = {binary: [] for binary in args.binaries}
    cpus = {binary: [] for binary in args.binaries}
    with tempfile.TemporaryDirectory() as workdir:
        output = os.path.join(workdir, "out")
        for _ in range(args.runs):
            for binary in args.binaries:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                completed = subprocess.run(
                    [binary, "convert", args.input, "--to", args.to, "-o", output],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                wall = time.perf_counter() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if completed.returncode != 0:
                    print(f"{binary} failed ({completed.returncode}):\n{completed.stderr}", file=sys.stderr)
                    return 1
                walls[binary].append(wall)
                cpus[binary].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    for binary in args.binaries:
        print(
            f"{binary}: wall median {statistics.median(walls[binary]):.3f} s, fastest {min(walls[binary]):.3f} s; "
            f"CPU median {statistics.median(cpus[binary]):.3f} s ({args.runs} runs)"
        )
    # Each round's runs saw the same minute of the VM: the ratio within a round drifts less than
    # either binary's times do.
    first = args.binaries[0]
    for binary in args.binaries[1:]:
        ratios = sorted(other / mine for mine, other in zip(walls[first], walls[binary]))
        print(
            f"{first}'s speed against {binary}'s, round by round: median {statistics.median(ratios):.3f}x "
            f"({ratios[0]:.3f}-{ratios[-1]:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
