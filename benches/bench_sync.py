#!/usr/bin/env python3
"""Benchmark of ``memport sync`` against a full ``memport convert`` (a benchmark, not a test).

For one size it generates (once; cached under ``--work``, keyed by size, ``--changed`` and
seed) two consecutive monthly ChatGPT exports with ``benches/gen_months.py`` (month-2 is
month-1 thirty days later with about ``--changed`` of the conversations changed, deleted or
new), warms the page cache, and then runs ``--runs`` rounds of, in this order:

* ``cat month-2/conversations.json``                 (I/O floor)
* ``sha256sum month-2/conversations.json``           (single-core hashing floor)
* ``memport convert month-2 --to FORMATS -o OUT``    (full conversion)
* ``memport sync month-1 --state S`` on a new state  (first sync: writes everything)
* ``memport sync month-1`` on a copy of that state   (unchanged re-sync, a later --exported-at)
* ``memport sync month-2`` on another copy           (re-sync with --changed of it changed)

Wall time and peak RSS are measured as in ``benches/bench.py`` (whose helpers this script
imports: fork/exec launcher, ``os.wait4`` ``ru_maxrss``, launcher RSS floor).  MB/s is the
bytes of the run's own input ``conversations.json`` (month-1 for the first and unchanged
syncs, month-2 otherwise) / wall s, MB = 10^6 bytes.  Each row shows the run with the median
wall time of its rounds; ratios are taken between those medians (per-round ratios in
brackets).  Outputs and state copies are deleted after every run.  Also reported: the state
file's size after the first sync per conversation (counted from that run's ``sync.json``),
the sync reports' conversation counts beside the generator's ``changes.json``, and the
issue's targets (unchanged re-sync >= 3x convert's MB/s; peak RSS within 256 MiB).
Results go to ``WORK/results-sync-<size>.json`` as well.

Usage:
    python3 benches/bench_sync.py [--size 1G] [--changed 0.05] [--formats aimem-ndjson]
                                  [--runs 3] [--work /tmp/memport-bench-sync]
                                  [--binary target/release/memport] [--threads N]
                                  [--seed 1] [--regen] [-- EXTRA MEMPORT ARGS...]

Arguments after ``--`` are appended to every memport command (convert and sync).
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (same directory: size parsing, launcher, RSS floor, machine info)

GEN_MONTHS = os.path.join(bench.HERE, "gen_months.py")
FIRST_EXPORTED_AT = "2026-10-01T00:00:00Z"
LATER_EXPORTED_AT = "2026-11-01T00:00:00Z"
RSS_BUDGET_MIB = 256
SPEEDUP_TARGET = 3.0
ROWS = ("cat", "sha256sum", "convert", "first sync", "unchanged re-sync", "changed re-sync")


def ensure_months(work: str, label: str, size: int, changed: float, seed: int, regen: bool) -> str:
    """Generate (or reuse) WORK/chatgpt-<label>-changed<changed>-seed<seed>/{month-1,month-2,changes.json}.

    gen_months.py writes changes.json last (atomically), so its presence marks a complete set.
    """
    folder = os.path.join(work, f"chatgpt-{label}-changed{changed:g}-seed{seed}")
    done = os.path.join(folder, "changes.json")
    if not regen and os.path.isfile(done) and all(
            os.path.isfile(os.path.join(folder, f"month-{m}", "conversations.json")) for m in (1, 2)):
        print(f"[bench-sync] reusing cached months {folder}", file=sys.stderr)
        return folder
    free = shutil.disk_usage(work).free
    if free < 5 * size:
        print(f"[bench-sync] warning: only {free / 2**30:.1f} GiB free in {work}; size {label} needs roughly "
              f"{5 * size / 2**30:.1f} GiB (two months, convert and sync outputs)", file=sys.stderr)
    print(f"[bench-sync] generating two {label} months (changed {changed:g}, seed {seed}) into {folder} ...",
          file=sys.stderr, flush=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, GEN_MONTHS, "chatgpt", "--out", folder, "--size", str(size),
                    "--changed", repr(changed), "--seed", str(seed)], check=True)
    print(f"[bench-sync] generated in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return folder


def state_files(state: str) -> list[str]:
    """The SQLite state file and any sidecars (-wal, -shm, -journal) next to it."""
    return [state] + [p for p in (state + s for s in ("-wal", "-shm", "-journal")) if os.path.exists(p)]


def copy_state(src: str, dst: str) -> None:
    for path in state_files(dst):
        bench.remove(path)
    for path in state_files(src):
        shutil.copyfile(path, dst + path[len(src):])


def remove_state(state: str) -> None:
    for path in state_files(state):
        bench.remove(path)


def sync_report(out: str) -> dict | None:
    """OUT/runs/<run-id>/sync.json of the (only) run written to the fresh folder OUT."""
    found = sorted(glob.glob(os.path.join(glob.escape(out), "runs", "*", "sync.json")))
    if len(found) != 1:
        return None
    try:
        with open(found[0]) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def median_sample(samples: list[dict]) -> dict:
    ordered = sorted(samples, key=lambda s: s["wall_s"])
    return ordered[(len(ordered) - 1) // 2]


def median(values: list[float]) -> float:
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def main() -> int:
    argv = sys.argv[1:]
    extra: list[str] = []
    if "--" in argv:  # everything after "--" goes to memport verbatim
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Arguments after `--` are passed to every memport command.")
    ap.add_argument("--size", default="1G", help="size of month 1's conversations.json, e.g. 20M, 1G (default 1G)")
    ap.add_argument("--changed", type=float, default=0.05,
                    help="share of conversations changed in month 2 (gen_months.py --changed; default 0.05)")
    ap.add_argument("--formats", default="aimem-ndjson",
                    help="comma-separated output formats of convert and sync (default aimem-ndjson)")
    ap.add_argument("--runs", type=int, default=3, help="rounds; medians reported (default 3)")
    ap.add_argument("--work", default="/tmp/memport-bench-sync",
                    help="cache + scratch dir (default /tmp/memport-bench-sync)")
    ap.add_argument("--binary", default="target/release/memport",
                    help="memport binary (default target/release/memport, relative to cwd or repo root)")
    ap.add_argument("--threads", type=int, help="pass --threads N to memport")
    ap.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    ap.add_argument("--regen", action="store_true", help="regenerate the months even if cached")
    args = ap.parse_args(argv)

    try:
        size = bench.parse_size(args.size)
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    label = args.size.strip().upper()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if not 0 <= args.changed <= 1:
        ap.error("--changed must be between 0 and 1")
    formats = [f.strip().lower() for f in args.formats.split(",") if f.strip()]
    if not formats:
        ap.error("--formats is empty")
    binary = bench.resolve_binary(args.binary)
    if binary is None:
        print(f"error: memport binary not found: {args.binary!r} (looked relative to {os.getcwd()} and "
              f"{bench.REPO}). Build it first with `cargo build --release`, or pass --binary PATH.", file=sys.stderr)
        return 2
    for tool in ("cat", "sha256sum"):
        if shutil.which(tool) is None:
            print(f"error: required tool {tool!r} not found on PATH", file=sys.stderr)
            return 2

    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    try:
        months = ensure_months(work, label, size, args.changed, args.seed, args.regen)
    except subprocess.CalledProcessError as e:
        print(f"error: generating the months failed ({e})", file=sys.stderr)
        return 1
    month1, month2 = os.path.join(months, "month-1"), os.path.join(months, "month-2")
    raw1, raw2 = os.path.join(month1, "conversations.json"), os.path.join(month2, "conversations.json")
    bytes1, bytes2 = os.path.getsize(raw1), os.path.getsize(raw2)
    with open(os.path.join(months, "changes.json")) as f:
        changes = json.load(f)["months"][0]

    memport_opts = ["-q"] + (["--threads", str(args.threads)] if args.threads else []) + extra
    to = ",".join(formats)
    scratch = os.path.join(work, "scratch")
    os.makedirs(scratch, exist_ok=True)
    convert_out = os.path.join(scratch, "convert-out")  # a file for one format, a folder for several
    state0 = os.path.join(scratch, "state-first.db")
    state_u, state_c = os.path.join(scratch, "state-unchanged.db"), os.path.join(scratch, "state-changed.db")
    out_first, out_u, out_c = (os.path.join(scratch, n) for n in ("sync-first", "sync-unchanged", "sync-changed"))

    def sync_cmd(month: str, state: str, out: str, at: str) -> list[str]:
        return [binary, "sync", month, "--state", state, "--to", to, "-o", out, "--exported-at", at] + memport_opts

    # name -> (argv, input bytes, output path, is memport, state used)
    commands = {
        "cat": (["cat", raw2], bytes2, None, False),
        "sha256sum": (["sha256sum", raw2], bytes2, None, False),
        "convert": ([binary, "convert", month2, "--to", to, "-o", convert_out, "--exported-at", LATER_EXPORTED_AT]
                    + memport_opts, bytes2, convert_out, True),
        "first sync": (sync_cmd(month1, state0, out_first, FIRST_EXPORTED_AT), bytes1, out_first, True),
        "unchanged re-sync": (sync_cmd(month1, state_u, out_u, LATER_EXPORTED_AT), bytes1, out_u, True),
        "changed re-sync": (sync_cmd(month2, state_c, out_c, LATER_EXPORTED_AT), bytes2, out_c, True),
    }

    meta = bench.machine_info(binary)
    meta.update({
        "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
        "size": label, "changed": args.changed, "seed": args.seed, "formats": formats, "runs": args.runs,
        "months": months, "month1_bytes": bytes1, "month2_bytes": bytes2,
    })
    floor = bench.run_measured(["true"], os.devnull, os.devnull, scratch)["max_rss_mib"]
    meta["rss_floor_mib"] = floor
    log_out, log_err = os.path.join(scratch, "cmd.stdout"), os.path.join(scratch, "cmd.stderr")

    # Warm the page cache: every measured command reads warm files.
    for path in (raw1, raw2):
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)

    def measure(name: str) -> dict:
        cmd, nbytes, out, is_memport = commands[name]
        if out:
            bench.remove(out)
        print(f"[bench-sync] {label}: {name} ...", file=sys.stderr, flush=True)
        sample = bench.run_measured(cmd, log_out if is_memport else os.devnull, log_err, scratch)
        sample["mb_per_s"] = nbytes / max(sample["wall_s"], 1e-9) / 1e6
        if is_memport:
            sample["output_bytes"] = bench.path_bytes(out)
            if name != "convert":
                rep = sync_report(out)
                if rep is not None:
                    sample["conversations"] = rep.get("conversations")
                    sample["full"] = rep.get("full")
        if sample["exit_code"] != 0:
            sample["stderr_tail"] = bench.tail(log_err)
            print(f"[bench-sync] {name} exited with {sample['exit_code']}:\n{sample['stderr_tail']}", file=sys.stderr)
        print(f"[bench-sync]   {sample['wall_s']:.2f} s, {sample['mb_per_s']:.1f} MB/s, "
              f"peak RSS {sample['max_rss_mib']:.1f} MiB", file=sys.stderr)
        for path in (out, log_out, log_err):
            if path:
                bench.remove(path)
        os.sync()  # write back what the run left dirty, so the next command does not pay for it
        return sample

    samples: dict[str, list[dict]] = {name: [] for name in ROWS}
    state_sizes: list[int] = []
    state_after_changed: list[int] = []
    first_counts: list[dict] = []
    failed = False
    for rnd in range(args.runs):
        for name in ("cat", "sha256sum", "convert"):
            samples[name].append(measure(name))
        remove_state(state0)
        first = measure("first sync")
        samples["first sync"].append(first)
        if first["exit_code"] != 0:
            failed = True
            print(f"[bench-sync] round {rnd + 1}: the first sync failed; skipping its re-syncs", file=sys.stderr)
            continue
        state_sizes.append(sum(os.path.getsize(p) for p in state_files(state0)))
        if first.get("conversations"):
            first_counts.append(first["conversations"])
        for name, state in (("unchanged re-sync", state_u), ("changed re-sync", state_c)):
            copy_state(state0, state)
            samples[name].append(measure(name))
            if name == "changed re-sync":
                state_after_changed.append(sum(os.path.getsize(p) for p in state_files(state)))
            remove_state(state)
        remove_state(state0)
    failed = failed or any(s["exit_code"] != 0 for name in ROWS for s in samples[name])

    rows: dict[str, dict] = {}
    for name in ROWS:
        if samples[name]:
            row = dict(median_sample(samples[name]))
            row["mb_per_s_all"] = [round(s["mb_per_s"], 1) for s in samples[name]]
            row["runs"] = len(samples[name])
            row["argv"] = commands[name][0]
            row["input_bytes"] = commands[name][1]
            rows[name] = row

    # Ratios between medians, and per round (rounds that have both runs).
    def ratio(a: str, b: str, key: str) -> tuple[float | None, list[float]]:
        if a not in rows or b not in rows:
            return None, []
        per = [x[key] / y[key] for x, y in zip(samples[a], samples[b])
               if x["exit_code"] == 0 and y["exit_code"] == 0 and y[key] > 0]
        return (rows[a][key] / rows[b][key] if rows[b][key] > 0 else None), per

    speedup, speedup_rounds = ratio("unchanged re-sync", "convert", "mb_per_s")
    cost, cost_rounds = ratio("changed re-sync", "unchanged re-sync", "wall_s")
    conversations = round(median([c.get("new", 0) for c in first_counts])) if first_counts else None
    state_bytes = median(state_sizes) if state_sizes else None
    memport_peak = max((s["max_rss_mib"] for n in ROWS[2:] for s in samples[n] if s["exit_code"] == 0), default=None)

    # --- report -------------------------------------------------------------------------
    runs_text = "each command once" if args.runs == 1 else f"{args.runs} rounds, the run with the median wall time shown"
    print(f"Command: `{meta['command']}`")
    print(f"Machine: {meta.get('cpus')} CPUs, {meta.get('cpu_model', '?')}"
          + (f", {meta['mem_total_kib'] / 2**20:.1f} GiB RAM" if "mem_total_kib" in meta else "")
          + f"; {meta.get('memport_version', binary)}" + (f" (git {meta['git_commit']})" if "git_commit" in meta else ""))
    print(f"Input: ChatGPT, gen_months.py --size {label} --changed {args.changed:g} --seed {args.seed}: "
          f"month-1 conversations.json {bytes1:,} B, month-2 {bytes2:,} B; formats {to}"
          + (f"; memport args: {' '.join(memport_opts)}" if memport_opts else ""))
    print(f"Page cache warm; {runs_text}. MB/s = the run's input conversations.json bytes / wall s (MB = 10^6 B; "
          f"month-1 for first and unchanged sync, month-2 otherwise); peak RSS = wait4 ru_maxrss "
          f"(launcher floor {floor:.1f} MiB).\n")
    print("| command | wall s | MB/s | peak RSS MiB |")
    print("|---|---:|---:|---:|")
    labels = {
        "cat": "`cat` month-2",
        "sha256sum": "`sha256sum` month-2",
        "convert": f"memport convert month-2 → {to}",
        "first sync": "memport sync month-1 (first sync, empty state)",
        "unchanged re-sync": "memport sync month-1 again (unchanged re-sync)",
        "changed re-sync": f"memport sync month-2 ({args.changed * 100:g}%-changed re-sync)",
    }
    for name in ROWS:
        if name not in rows:
            print(f"| {labels[name]} | – | – | – |")
            continue
        r = rows[name]
        speed = f"{r['mb_per_s']:.1f}"
        if r["runs"] > 1:
            speed += f" ({min(r['mb_per_s_all']):.0f}–{max(r['mb_per_s_all']):.0f})"
        rss = f"≤ {floor:.1f}" if r["max_rss_mib"] <= floor + 0.25 else f"{r['max_rss_mib']:.1f}"
        bad = "" if r["exit_code"] == 0 else f" (exit {r['exit_code']})"
        print(f"| {labels[name]}{bad} | {r['wall_s']:.2f} | {speed} | {rss} |")
    print()

    def rounds(values: list[float]) -> str:
        return f" (per round: {', '.join(f'{v:.2f}' for v in values)})" if len(values) > 1 else ""

    if speedup is not None:
        verdict = "meets" if speedup >= SPEEDUP_TARGET else "MISSES"
        print(f"- Unchanged re-sync vs full convert: {speedup:.2f}× the MB/s{rounds(speedup_rounds)}; "
              f"target ≥ {SPEEDUP_TARGET:g}×: {verdict}")
    if cost is not None:
        print(f"- {args.changed * 100:g}%-changed re-sync vs unchanged re-sync: {cost:.2f}× the wall time"
              f"{rounds(cost_rounds)} ({rows['changed re-sync']['mb_per_s'] / rows['unchanged re-sync']['mb_per_s']:.2f}× "
              f"the MB/s)")
    if memport_peak is not None:
        verdict = "within" if memport_peak <= RSS_BUDGET_MIB else "OVER"
        print(f"- Highest peak RSS of any successful memport run: {memport_peak:.1f} MiB; budget {RSS_BUDGET_MIB} MiB: {verdict}")
    if state_bytes is not None:
        per = f", {state_bytes / conversations:,.0f} B per conversation" if conversations else ""
        print(f"- State after the first sync: {state_bytes:,.0f} B for {conversations if conversations is not None else '?'} conversations{per}"
              + (f"; after the changed re-sync {median(state_after_changed):,.0f} B" if state_after_changed else ""))
    gen_counts = {"unchanged": len(changes["unchanged"]),
                  "changed": len(changes["appended"]) + len(changes["edited"]) + len(changes["regenerated"])
                  + len(changes["renamed"]),
                  "new": len(changes["new"]), "deleted": len(changes["deleted"])}
    for name in ("unchanged re-sync", "changed re-sync"):
        c = rows.get(name, {}).get("conversations")
        if c:
            print(f"- {name} counted: " + ", ".join(f"{v} {k}" for k, v in c.items()))
    print("- generator (changes.json) for month 2: " + ", ".join(f"{v} {k}" for k, v in gen_counts.items())
          + f"; {changes['messages_added']} messages added")

    results_path = os.path.join(work, f"results-sync-{label}.json")
    with open(results_path + ".tmp", "w") as f:
        json.dump({"meta": meta, "rows": rows, "samples": samples,
                   "ratios": {"unchanged_vs_convert_mb_per_s": speedup, "per_round": speedup_rounds,
                              "changed_vs_unchanged_wall": cost, "changed_per_round": cost_rounds},
                   "state_bytes_first_sync": state_sizes, "state_bytes_after_changed": state_after_changed,
                   "conversations": conversations, "generator_counts": gen_counts}, f, indent=2)
    os.replace(results_path + ".tmp", results_path)
    print(f"\nResults JSON: {results_path}")
    if failed:
        print("error: at least one memport run failed (see above)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
