#!/usr/bin/env python3
"""Load on `memport serve --listen` (a benchmark, not a test), on loopback only.

Builds a store from the generated ChatGPT export of ``--size`` (cached under ``--workdir``, as
``benches/bench.py`` makes it), issues a read token, starts the server on a free loopback port,
then runs ``benches/recall_load.rs`` (``cargo bench --bench recall_load``): ``--clients`` clients
sending recall requests (queries of one to three words drawn from a fixed list, seeded) for
``--seconds``, back to back, or at ``--rate`` requests a second in all. Prints the store's size
and build time, how long the server took to open its port (it builds recall's search index
first), then throughput and p50/p99 latency of the requests, and the server's peak RSS. Stops
the server at the end.

With ``--export`` it instead fetches the whole store once as AIMEM's NDJSON stream
(``GET /v1/brain/export/stream?scope=FULL``) and prints the bytes, the time to the first byte,
the time in all, the rate, and the server's peak RSS.

    python3 benches/serve_load.py --size 256M --clients 200 --seconds 20
    python3 benches/serve_load.py --size 256M --clients 200 --seconds 20 --rate 1000
    python3 benches/serve_load.py --size 1G --export
    python3 benches/serve_load.py --size 256M --clients 1 --store 'postgres://me@host/db?options=-csearch_path%3Dbench'

``--store`` loads and serves a store in PostgreSQL instead of a file (its URL naming an empty
schema).
"""

import argparse
import http.client
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_rss_kib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


def export_once(port, token, store, built, size, pid):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    began = time.monotonic()
    connection.request("GET", "/v1/brain/export/stream?scope=FULL", headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    first_byte = time.monotonic() - began
    received = 0
    while True:
        block = response.read(1 << 20)
        if not block:
            break
        received += len(block)
    wall = time.monotonic() - began
    streaming = wall - first_byte
    where = "in PostgreSQL" if isinstance(store, str) else f"{store.stat().st_size / 1e6:.0f} MB"
    print(f"store: {where} from a {size} export in {built:.1f} s")
    print(f"export stream: status {response.status}, {received / 1e6:.0f} MB, first byte after {first_byte:.1f} s, "
          f"{wall:.1f} s in all = {received / 1e6 / wall:.0f} MB/s (streaming itself {received / 1e6 / max(streaming, 1e-9):.0f} MB/s), "
          f"server peak RSS {peak_rss_kib(pid) / 1024:.0f} MiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="256M")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rate", type=float, default=0, help="requests a second from all clients together (0: back to back)")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "memport-bench"))
    parser.add_argument("--memport", default=str(ROOT / "target/release/memport"))
    parser.add_argument("--export", action="store_true", help="time one FULL export stream instead of recalls")
    parser.add_argument("--store", help="a store in PostgreSQL to load and serve (its URL, naming an empty schema) instead of a file")
    args = parser.parse_args()

    export = Path(args.workdir) / f"chatgpt-{args.size}-seed1" / "conversations.json"
    if not export.is_file():
        subprocess.run([sys.executable, str(ROOT / "benches/gen_chatgpt.py"), "--size", args.size, "--out", str(export.parent)], check=True)
    scratch = Path(tempfile.mkdtemp(prefix="memport-serve-load-"))
    store = args.store or scratch / "memory.db"
    started = time.monotonic()
    subprocess.run([args.memport, "convert", str(export), "--to", "store", "-o", str(store), "--exported-at", "2026-01-01T00:00:00Z"],
                   check=True, stderr=subprocess.DEVNULL)
    built = time.monotonic() - started
    # The store's gigabytes are still being written back to disk: let that end first, so the
    # export is not timed against it.
    os.sync()
    key = scratch / "owner.key"
    key.write_text("07" * 32)
    token = subprocess.run([args.memport, "token", "issue", str(store), "--key", str(key), "--verbs", "read,export", "--ttl", "1h"],
                           check=True, capture_output=True, text=True).stdout.strip()
    port = free_port()
    starting = time.monotonic()
    server = subprocess.Popen([args.memport, "serve", str(store), "--listen", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
    try:
        deadline = starting + 600
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start")
                time.sleep(0.05)
        started = time.monotonic() - starting
        if args.export:
            export_once(port, token, store, built, args.size, server.pid)
            return
        token_file = scratch / "token"
        token_file.write_text(token)
        load = ["cargo", "bench", "--locked", "--quiet", "--bench", "recall_load", "--", "--url", f"http://127.0.0.1:{port}",
                "--token-file", str(token_file), "--clients", str(args.clients), "--seconds", str(args.seconds)]
        if args.rate:
            load += ["--rate", str(args.rate)]
        result = subprocess.run(load, cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
        if args.store:
            print(f"store: in PostgreSQL, from a {args.size} export in {built:.1f} s")
        else:
            print(f"store: {store.stat().st_size / 1e6:.0f} MB from a {args.size} export in {built:.1f} s")
        print(f"server started in {started:.1f} s (a store file: recall's search index built first)")
        offered = f"at {args.rate:g}/s offered" if args.rate else "back to back"
        print(f"clients {args.clients}, {offered}: {result}, server peak RSS {peak_rss_kib(server.pid) / 1024:.0f} MiB")
    finally:
        server.terminate()
        server.wait()
        for path in scratch.iterdir():
            path.unlink()
        scratch.rmdir()


if __name__ == "__main__":
    main()
