#!/usr/bin/env python3
"""memport reading and writing object storage (`s3://`) against the same run on local files.

    .venv/bin/python benches/bench_object_storage.py --export /tmp/memport-bench/chatgpt-1G-seed1.zip [--to parquet,aimem-ndjson]

Needs an S3-compatible endpoint in the usual variables (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY; `scripts/s3-test-server start` runs one on loopback), a bucket `exports`
and a bucket `memory` there, a release build, and pyarrow (in .venv, installed by scripts/test)
to upload the export. In one run, it measures:

* `cat` and `sha256sum` of the local export (what reading the file alone costs);
* `memport convert EXPORT --to … -o local/` (local in, local out);
* `memport convert s3://exports/… --to … -o local/` (ranged reads in);
* `memport convert s3://exports/… --to … -o s3://memory/…/` (ranged reads in, multipart uploads
  out, published at the end);

and reports wall seconds, MB/s of the export and peak RSS (`os.wait4`'s ru_maxrss of each command).
With the test server both sides share this machine's disk and cores, so the S3 row is the
client's cost plus the server's, not a network's.
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


def run(label, command, size):
    """Runs `command`, returning (label, seconds, MB/s, peak RSS MiB) of it alone: the peak is
    `os.wait4`'s ru_maxrss of that child (KiB on Linux)."""
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.monotonic() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"bench_object_storage: {label} failed ({code}): {stderr[-3000:].decode(errors='replace')}")
    return label, elapsed, size / elapsed / 1e6, usage.ru_maxrss / 1024


def upload(local, bucket, key):
    from pyarrow import fs

    endpoint = os.environ["AWS_ENDPOINT_URL"]
    scheme, _, host = endpoint.partition("://")
    s3 = fs.S3FileSystem(endpoint_override=host, scheme=scheme, region=os.environ.get("AWS_REGION", "us-east-1"))
    fs.copy_files(local, f"{bucket}/{key}", source_filesystem=fs.LocalFileSystem(), destination_filesystem=s3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", required=True, help="a provider export (zip) to read")
    parser.add_argument("--to", default="parquet,aimem-ndjson")
    parser.add_argument("--memport", default=os.path.join(ROOT, "target", "release", "memport"))
    if sys.argv[1:2] == ["--upload-only"]:
        upload(sys.argv[2], "exports", sys.argv[3])
        return 0
    args = parser.parse_args()
    if "AWS_ENDPOINT_URL" not in os.environ:
        sys.exit("bench_object_storage: set AWS_ENDPOINT_URL and the credentials (scripts/s3-test-server start runs a server)")
    size = os.path.getsize(args.export)
    key = f"bench-{os.getpid()}/{os.path.basename(args.export)}"
    # In a child, so this process stays small: a command's ru_maxrss starts from the image it
    # was forked from, which pyarrow would make 130 MiB.
    subprocess.run([sys.executable, __file__, "--upload-only", args.export, key], check=True)
    work = tempfile.mkdtemp(prefix="memport-bench-s3-")
    try:
        rows = [
            run("cat", ["cat", args.export], size),
            run("sha256sum", ["sha256sum", args.export], size),
            run("memport local → local", [args.memport, "convert", args.export, "--to", args.to, "-o", os.path.join(work, "out") + "/",
                                          "--exported-at", EXPORTED_AT, "-q"], size),
            run("memport s3:// → local", [args.memport, "convert", f"s3://exports/{key}", "--to", args.to,
                                          "-o", os.path.join(work, "from-s3") + "/", "--exported-at", EXPORTED_AT, "-q"], size),
            run("memport s3:// → s3://", [args.memport, "convert", f"s3://exports/{key}", "--to", args.to,
                                          "-o", f"s3://memory/bench-{os.getpid()}/", "--exported-at", EXPORTED_AT, "-q"], size),
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"export {args.export}: {size / 1e6:.0f} MB; formats {args.to}")
    print("| command | wall s | MB/s | peak RSS MiB |")
    print("|---|---:|---:|---:|")
    for label, seconds, rate, rss in rows:
        print(f"| {label} | {seconds:.2f} | {rate:.0f} | {rss:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
