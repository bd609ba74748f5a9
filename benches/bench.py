#!/usr/bin/env python3
"""Benchmark driver for memport (a benchmark, not a test).

For each requested size and provider (``--providers``, default ``chatgpt``) it:

1. generates a synthetic export, cached under ``--workdir`` and reused on
   later runs (``--regen`` forces regeneration): ChatGPT with
   ``benches/gen_chatgpt.py`` (single layout + zipped variant), the others
   (``claude``, ``grok``, ``copilot``, ``gemini-json``, ``gemini-html``) with
   ``benches/gen_providers.py`` (unzipped export folder; ``--size`` is the size
   of its main file);
2. warms the page cache with one ``cat`` of every input file, so every
   measured command reads from a warm cache;
3. runs each of these once (``--runs N``: N times, in rounds, reporting the run
   with the median wall time), measuring wall time and peak RSS:

   * ``cat MAIN > /dev/null``                         (I/O floor)
   * ``sha256sum MAIN``                               (single-core hashing floor)
   * ChatGPT only: ``unzip -p export.zip conversations.json`` (inflate floor)
   * ``memport convert INPUT --to aimem-ndjson -o OUT --report R.json``
   * ChatGPT only: ``memport convert export.zip --to aimem-ndjson -o OUT``

MAIN is the provider's main file (``conversations.json``,
``prod-grok-backend.json``, ``copilot-activity-history.csv``,
``MyActivity.json``/``.html`` of Gemini Apps); INPUT is that file for ChatGPT
and Copilot and the export folder for Claude, Grok and Gemini (the folder
holds the side files and, for Gemini, the decoy YouTube/Chrome activity).

Peak RSS comes from ``os.wait4`` rusage (``ru_maxrss``, KiB on Linux) of each
child, so ``/usr/bin/time`` is not needed.  Each command is forked from a tiny
launcher process rather than from this script, because Linux carries the RSS of
the pre-exec memory image into the child's ru_maxrss; the launcher's own ~6 MiB
is then the floor (measured each run and shown as "≤ floor").  Throughput is always
*raw main-file bytes / wall seconds* (MB = 10^6 bytes), also for the ChatGPT
zip rows, so rows are directly comparable.  Outputs are deleted after each
measurement.  Results are printed as a Markdown table and written to
``WORKDIR/results.json`` (rewritten after every export, so partial runs keep
what was measured).

``--paths`` measures instead every ChatGPT path against its reference in one run (see
``paths.py``): the table of ``docs/performance.md``.

Usage:
    python3 benches/bench.py --paths --sizes 256M,1G --runs 3
    python3 benches/bench.py [--sizes 256M,1G,4G] [--workdir /tmp/memport-bench]
                             [--providers chatgpt,claude,grok,copilot,gemini-json]
                             [--formats aimem-ndjson,pam] [--outdir DIR] [--runs N]
                             [--binary target/release/memport] [--threads N]
                             [--seed 1] [--regen] [-- EXTRA MEMPORT ARGS...]

``--threads N`` is passed to memport as ``--threads N``; arguments after
``--`` are appended verbatim to every memport command.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GENERATOR = os.path.join(HERE, "gen_chatgpt.py")
PROVIDER_GENERATOR = os.path.join(HERE, "gen_providers.py")
MIB = 1024 * 1024

# provider -> (main file relative to the export folder (glob), convert the folder (True) or the main file)
PROVIDERS = {
    "chatgpt": ("conversations.json", False),
    "claude": ("conversations.json", True),
    "grok": ("ttl/30d/export_data/*/prod-grok-backend.json", True),
    "copilot": ("copilot-activity-history.csv", False),
    "gemini-json": ("Takeout/My Activity/Gemini Apps/MyActivity.json", True),
    "gemini-html": ("Takeout/My Activity/Gemini Apps/MyActivity.html", True),
}


def parse_size(text: str) -> int:
    """'256M' / '1G' / '500K' / '4096' -> bytes (binary units, as gen_chatgpt.py)."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = 1
    if t and t[-1] in "KMGT":
        mult = 1024 ** ("KMGT".index(t[-1]) + 1)
        t = t[:-1]
    try:
        value = float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (use e.g. 256M, 1G)")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return int(value * mult)


def resolve_binary(path: str) -> str | None:
    """Find the memport binary: as given, relative to the repo root, or on PATH."""
    candidates = [path]
    if not os.path.isabs(path):
        candidates.append(os.path.join(REPO, path))
    for cand in candidates:
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return os.path.abspath(cand)
    if os.sep not in path:
        return shutil.which(path)
    return None


def path_bytes(path: str) -> int | None:
    """Size of a file, or total size of a directory tree; None if absent."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    if os.path.isdir(path):
        total = 0
        for root, _dirs, files in os.walk(path):
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        return total
    return None


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def tail(path: str, lines: int = 15) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - 8192))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# Tiny launcher that forks + execs the measured command and reports its wait4
# rusage.  Why not Popen + wait4 here directly: on Linux, ru_maxrss of an
# exec'd child starts at the RSS of the memory image it replaced, so a child
# spawned straight from this (bigger, growing) process reports at least our own
# RSS.  A freshly started `python3 -S -I` launcher is ~6 MiB, which becomes the
# floor instead; run_measured(["true"]) measures that floor, and smaller values
# are shown as "<= floor" in the table.
LAUNCHER = r"""
import os, sys, time
result_path, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        os.write(2, ("bench launcher: cannot execute %r: %s\n" % (argv[0], e)).encode())
    os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(result_path, "w") as f:
    f.write(repr((wall, ru.ru_maxrss, ru.ru_utime, ru.ru_stime, os.waitstatus_to_exitcode(status))))
"""


def run_measured(argv: list[str], stdout_path: str, stderr_path: str, scratch: str) -> dict:
    """Run argv once via the launcher; wall time, peak RSS and CPU times from wait4."""
    result_path = os.path.join(scratch, "launcher-result.txt")
    remove(result_path)
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        subprocess.run([sys.executable, "-S", "-I", "-c", LAUNCHER, result_path] + argv,
                       stdin=subprocess.DEVNULL, stdout=out, stderr=err, check=False)
    try:
        with open(result_path) as f:
            wall, maxrss_kib, user, sys_, code = ast.literal_eval(f.read())
    except (OSError, ValueError, SyntaxError):
        raise RuntimeError(f"launcher failed for {argv!r}: {tail(stderr_path)}")
    remove(result_path)
    return {
        "wall_s": wall,
        "max_rss_mib": maxrss_kib / 1024.0,  # ru_maxrss is KiB on Linux
        "user_s": user,
        "sys_s": sys_,
        "exit_code": code,
    }


def ensure_export(label: str, size: int, seed: int, workdir: str, regen: bool) -> tuple[str, str]:
    """Generate (or reuse) WORKDIR/chatgpt-<label>-seed<seed>/ and its .zip."""
    out_dir = os.path.join(workdir, f"chatgpt-{label}-seed{seed}")
    raw, zip_path = os.path.join(out_dir, "conversations.json"), out_dir + ".zip"
    if not regen and os.path.isfile(raw) and os.path.isfile(zip_path):
        print(f"[bench] reusing cached export {out_dir}", file=sys.stderr)
        return raw, zip_path
    free = shutil.disk_usage(workdir).free
    if free < 3 * size:
        print(f"[bench] warning: only {free / 2**30:.1f} GiB free in {workdir}; "
              f"size {label} needs roughly {3 * size / 2**30:.1f} GiB (input, zip, output)", file=sys.stderr)
    print(f"[bench] generating {label} export (seed {seed}) into {out_dir} ...", file=sys.stderr)
    start = time.perf_counter()
    cmd = [sys.executable, GENERATOR, "--size", str(size), "--seed", str(seed), "--out", out_dir, "--zip"]
    subprocess.run(cmd, check=True)
    print(f"[bench] generated in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return raw, zip_path


def find_main(out_dir: str, provider: str) -> str | None:
    """The provider's main file inside out_dir, or None if absent (an unfinished export has none)."""
    matches = sorted(glob.glob(os.path.join(glob.escape(out_dir), PROVIDERS[provider][0])))
    return matches[0] if len(matches) == 1 else None


def ensure_provider_export(provider: str, label: str, size: int, seed: int, workdir: str,
                           regen: bool) -> tuple[str, str]:
    """Generate (or reuse) WORKDIR/<provider>-<label>-seed<seed>/ with gen_providers.py.

    Returns (main file, memport input). gen_providers.py renames the main file into place
    last, so its presence means the export is complete.
    """
    out_dir = os.path.join(workdir, f"{provider}-{label}-seed{seed}")
    main = None if regen else find_main(out_dir, provider)
    if main is None:
        free = shutil.disk_usage(workdir).free
        if free < 2 * size:
            print(f"[bench] warning: only {free / 2**30:.1f} GiB free in {workdir}; {provider} {label} needs "
                  f"roughly {2 * size / 2**30:.1f} GiB (input, output)", file=sys.stderr)
        print(f"[bench] generating {provider} {label} export (seed {seed}) into {out_dir} ...", file=sys.stderr)
        start = time.perf_counter()
        cmd = [sys.executable, PROVIDER_GENERATOR, provider, "--size", str(size), "--seed", str(seed),
               "--out", out_dir]
        subprocess.run(cmd, check=True)
        print(f"[bench] generated in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        main = find_main(out_dir, provider)
        if main is None:
            raise RuntimeError(f"{provider} export in {out_dir} has no main file {PROVIDERS[provider][0]!r}")
    else:
        print(f"[bench] reusing cached export {out_dir}", file=sys.stderr)
    return main, (out_dir if PROVIDERS[provider][1] else main)


def input_files(path: str) -> list[str]:
    """path itself, or every file under it (sorted), for the page-cache warm-up."""
    if os.path.isdir(path):
        return sorted(os.path.join(root, f) for root, _dirs, files in os.walk(path) for f in files)
    return [path]


def machine_info(binary: str) -> dict:
    info = {
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "binary": binary,
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            info["mem_total_kib"] = int(f.readline().split()[1])
    except OSError:
        pass
    for key, cmd in (("memport_version", [binary, "--version"]),
                     ("git_commit", ["git", "-C", REPO, "rev-parse", "--short", "HEAD"])):
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            if res.returncode == 0:
                info[key] = res.stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    return info


def markdown_table(rows: list[dict], floor_mib: float) -> str:
    head = "| provider | size | command | wall s | MB/s | peak RSS MiB | user s | sys s | exit |"
    lines = [head, "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.get("skipped"):
            lines.append(f"| {r['provider']} | {r['size']} | {r['name']} | – | – | – | – | – | "
                         f"skipped: {r['skipped']} |")
            continue
        rss = r["max_rss_mib"]
        rss_text = f"≤ {floor_mib:.1f}" if rss <= floor_mib + 0.25 else f"{rss:.1f}"  # at the launcher floor
        speed = f"{r['mb_per_s']:.1f}"
        if r.get("runs", 1) > 1:  # the median run, and the slowest and fastest of all
            speed += f" ({min(r['mb_per_s_all']):.0f}–{max(r['mb_per_s_all']):.0f})"
        lines.append(f"| {r['provider']} | {r['size']} | {r['name']} | {r['wall_s']:.2f} | {speed} | "
                     f"{rss_text} | {r['user_s']:.2f} | {r['sys_s']:.2f} | {r['exit_code']} |")
    return "\n".join(lines)


def main() -> int:
    argv = sys.argv[1:]
    extra: list[str] = []
    if "--" in argv:  # everything after "--" goes to memport verbatim
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Arguments after `--` are passed to every memport command.")
    ap.add_argument("--sizes", default="256M,1G,4G", help="comma-separated export sizes (default 256M,1G,4G)")
    ap.add_argument("--workdir", default="/tmp/memport-bench", help="cache + scratch dir (default /tmp/memport-bench)")
    ap.add_argument("--providers", default="chatgpt",
                    help=f"comma-separated providers to benchmark: {','.join(PROVIDERS)} (default chatgpt)")
    ap.add_argument("--binary", default="target/release/memport",
                    help="memport binary (default target/release/memport, relative to cwd or repo root)")
    ap.add_argument("--threads", type=int, help="pass --threads N to memport")
    ap.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    ap.add_argument("--regen", action="store_true", help="regenerate exports even if cached")
    ap.add_argument("--outdir", help="where memport writes its outputs (default: the workdir); e.g. a tmpfs "
                    "such as /dev/shm/memport-out to leave the file system's own costs out")
    ap.add_argument("--runs", type=int, default=1,
                    help="run every command this many times, in rounds, and report the run with the median "
                         "wall time (default 1); every run's MB/s goes to results.json")
    ap.add_argument("--extract", default="",
                    help="comma-separated --extract modes, one raw-input row per format and mode, in the same run "
                         "(e.g. off,rules to measure what extraction costs; default: memport's default only)")
    ap.add_argument("--paths", action="store_true",
                    help="measure every ChatGPT path (raw and zip to AIMEM and UMP NDJSON, extraction on and off; "
                         "Parquet; PAM) against its reference (sha256sum, unzip -p, DuckDB's lean query, the PAM "
                         "reference converter) in the same rounds: the table of docs/performance.md (see paths.py)")
    ap.add_argument("--pam-reference-max", default="256M",
                    help="with --paths: largest size the PAM reference converter runs on (default 256M)")
    ap.add_argument("--formats", default="aimem-ndjson",
                    help="comma-separated output formats, one memport row each (default aimem-ndjson; e.g. aimem-ndjson,pam); the ChatGPT zip row uses the first")
    args = ap.parse_args(argv)

    try:
        sizes = [(s.strip().upper(), parse_size(s)) for s in args.sizes.split(",") if s.strip()]
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    if not sizes:
        ap.error("--sizes is empty")
    providers = [p.strip().lower() for p in args.providers.split(",") if p.strip()]
    unknown = [p for p in providers if p not in PROVIDERS]
    if unknown:
        ap.error(f"unknown provider(s) {', '.join(unknown)}; choose from {', '.join(PROVIDERS)}")
    if not providers:
        ap.error("--providers is empty")
    providers = list(dict.fromkeys(providers))  # drop repeats, keep order
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    formats = [f.strip().lower() for f in args.formats.split(",") if f.strip()]
    if not formats:
        ap.error("--formats is empty")

    binary = resolve_binary(args.binary)
    if binary is None:
        print(f"error: memport binary not found: {args.binary!r} (looked relative to {os.getcwd()} and {REPO}).\n"
              f"Build it first with `cargo build --release`, or pass --binary PATH.", file=sys.stderr)
        return 2
    for tool in ("cat", "sha256sum"):
        if shutil.which(tool) is None:
            print(f"error: required tool {tool!r} not found on PATH", file=sys.stderr)
            return 2
    have_unzip = shutil.which("unzip") is not None

    workdir = os.path.abspath(args.workdir)
    os.makedirs(workdir, exist_ok=True)
    outdir = os.path.abspath(args.outdir) if args.outdir else workdir
    os.makedirs(outdir, exist_ok=True)
    memport_opts = (["--threads", str(args.threads)] if args.threads else []) + extra
    if args.paths:
        if providers != ["chatgpt"]:
            ap.error("--paths measures ChatGPT exports only")
        import paths  # same directory
        return paths.run(sizes, args, binary, workdir, outdir, memport_opts)
    results_path = os.path.join(workdir, "results.json")
    meta = machine_info(binary)
    meta.update({
        "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seed": args.seed,
        "providers": providers,
        "threads": args.threads,
        "extra_args": extra,
        "outdir": outdir,
        "method": f"each command run {args.runs} time(s) in rounds after one warm-up `cat` of each input (page "
                  "cache warm), the run with the median wall time reported; "
                  "MB/s = raw main-file bytes (conversations.json for ChatGPT) / wall s, MB = 10^6 bytes; "
                  "peak RSS = ru_maxrss from os.wait4 in a small fork/exec launcher, MiB "
                  "(values at the launcher floor, rss_floor_mib, mean 'at most that')",
    })
    rows: list[dict] = []
    # RSS floor of the launcher (see LAUNCHER): what a trivial command reports.
    floor = run_measured(["true"], os.devnull, os.devnull, workdir)["max_rss_mib"]
    meta["rss_floor_mib"] = floor

    def save() -> None:
        with open(results_path + ".tmp", "w") as f:
            json.dump({"meta": meta, "results": rows}, f, indent=2)
        os.replace(results_path + ".tmp", results_path)

    log_out, log_err = os.path.join(workdir, "cmd.stdout"), os.path.join(workdir, "cmd.stderr")
    exports: list[tuple[str, str, str]] = []  # (provider, size label, summary line)
    for label, size in sizes:
        for provider in providers:
            zip_path = None
            try:
                if provider == "chatgpt":
                    raw, zip_path = ensure_export(label, size, args.seed, workdir, args.regen)
                    convert_input = raw
                else:
                    raw, convert_input = ensure_provider_export(provider, label, size, args.seed, workdir,
                                                                args.regen)
            except (subprocess.CalledProcessError, RuntimeError) as e:
                print(f"error: generating the {provider} {label} export failed ({e})", file=sys.stderr)
                return 1
            raw_bytes = os.path.getsize(raw)
            zip_bytes = os.path.getsize(zip_path) if zip_path else None
            if provider == "chatgpt":
                out = os.path.join(outdir, f"out-{label}.ndjson")
                report = os.path.join(workdir, f"report-{label}.json")
                exports.append((provider, label, f"conversations.json {raw_bytes:,} bytes, zip {zip_bytes:,} bytes"))
            else:
                out = os.path.join(outdir, f"out-{provider}-{label}.ndjson")
                report = os.path.join(workdir, f"report-{provider}-{label}.json")
                total = path_bytes(convert_input)
                exports.append((provider, label, f"{os.path.basename(raw)} {raw_bytes:,} bytes"
                                + (f", export folder {total:,} bytes" if convert_input != raw else "")))

            # Warm-up: read every input once so every measured command sees a warm page cache.
            for path in input_files(convert_input) + ([zip_path] if zip_path else []):
                subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)

            commands = [
                ("cat", ["cat", raw], False),
                ("sha256sum", ["sha256sum", raw], False),
            ]
            # Each format writes to its own path (folders for pam and parquet); `out` is set per row.
            def out_for(fmt: str) -> str:
                return out if fmt == "aimem-ndjson" else f"{out}.{fmt}"

            def suffix(fmt: str) -> str:
                return "" if formats == ["aimem-ndjson"] else f" → {fmt}"

            extract_modes = [mode.strip() for mode in args.extract.split(",") if mode.strip()] or [None]
            if provider == "chatgpt":
                commands.append(("unzip -p (zip)", ["unzip", "-p", zip_path, "conversations.json"], False))
                for fmt in formats:
                    for mode in extract_modes:
                        extract = [] if mode is None else ["--extract", mode]
                        commands.append((f"memport convert (raw){suffix(fmt)}" + ("" if mode is None else f", --extract {mode}"),
                                         [binary, "convert", raw, "--to", fmt, "-o", out_for(fmt),
                                          "--report", report] + extract + memport_opts, True))
                commands.append((f"memport convert (zip){suffix(formats[0])}",
                                 [binary, "convert", zip_path, "--to", formats[0], "-o", out_for(formats[0])]
                                 + memport_opts, True))
            else:
                kind = "folder" if convert_input != raw else "file"
                for fmt in formats:
                    commands.append((f"memport convert ({kind}){suffix(fmt)}",
                                     [binary, "convert", convert_input, "--to", fmt, "-o", out_for(fmt),
                                      "--report", report] + memport_opts, True))
            def measure_once(name: str, cmd: list[str], is_memport: bool) -> dict:
                """One run of `cmd`: wall, RSS and CPU, and for memport its output size and report."""
                out = cmd[cmd.index("-o") + 1] if is_memport else None
                for path in (out, report):
                    if path:
                        remove(path)
                # memport's stdout goes to a log; the baselines' stdout is the data stream -> /dev/null.
                stdout_path = log_out if is_memport else os.devnull
                print(f"[bench] {provider} {label}: {name} ...", file=sys.stderr, flush=True)
                sample = run_measured(cmd, stdout_path, log_err, workdir)
                sample["mb_per_s"] = raw_bytes / max(sample["wall_s"], 1e-9) / 1e6
                if is_memport:
                    sample["output_bytes"] = path_bytes(out)
                    if os.path.isfile(report):
                        try:
                            with open(report) as f:
                                sample["report"] = json.load(f)
                        except (OSError, ValueError) as e:
                            sample["report_error"] = str(e)
                if sample["exit_code"] != 0:
                    msg = tail(log_err)
                    sample["stderr_tail"] = msg
                    print(f"[bench] {name} exited with {sample['exit_code']}:\n{msg}", file=sys.stderr)
                print(f"[bench]   {sample['wall_s']:.2f} s, {sample['mb_per_s']:.1f} MB/s, "
                      f"peak RSS {sample['max_rss_mib']:.1f} MiB", file=sys.stderr)
                for path in (out, report, log_out, log_err):  # free disk before the next run
                    if path:
                        remove(path)
                # Write back what the run left dirty, so the next command does not pay for it.
                os.sync()
                return sample

            # Rounds: every command once per round, so that each round's commands see the same
            # machine (on a VM whose speed drifts between minutes, runs one after the other of
            # the same command would not be comparable with the baselines').
            samples: dict[str, list[dict]] = {name: [] for name, _, _ in commands}
            runnable = [(name, cmd, is_memport) for name, cmd, is_memport in commands
                        if not (cmd[0] == "unzip" and not have_unzip)]
            for _ in range(args.runs):
                for name, cmd, is_memport in runnable:
                    samples[name].append(measure_once(name, cmd, is_memport))
            for name, cmd, is_memport in commands:
                row = {"provider": provider, "size": label, "name": name, "argv": cmd, "input_bytes": raw_bytes}
                if zip_bytes is not None:
                    row["zip_bytes"] = zip_bytes
                if not samples[name]:
                    row["skipped"] = "unzip not installed"
                    rows.append(row)
                    continue
                # The run with the median wall time stands for the command; all runs' speeds are kept.
                ordered = sorted(samples[name], key=lambda sample: sample["wall_s"])
                row.update(ordered[(len(ordered) - 1) // 2])
                row["runs"] = len(ordered)
                row["mb_per_s_all"] = [round(sample["mb_per_s"], 1) for sample in samples[name]]
                rows.append(row)
            save()

    runs_text = "each command run once" if args.runs == 1 else \
        f"each command run {args.runs} times in rounds, the median run shown"
    print(f"Page cache warm (one `cat` of each input before measuring); {runs_text}. "
          f"MB/s = raw main-file bytes / wall s (MB = 10^6 B; main file = conversations.json for ChatGPT); "
          f"peak RSS = wait4 ru_maxrss (launcher floor {floor:.1f} MiB: '≤' values are at most that).\n"
          f"Machine: {meta.get('cpus')} CPUs, {meta.get('cpu_model', '?')}; binary {binary}"
          + (f"; memport args: {' '.join(memport_opts)}" if memport_opts else "") + "\n")
    for provider, label, summary in exports:
        print(f"- {provider} {label}: {summary}")
    print()
    print(markdown_table(rows, floor))
    print(f"\nResults JSON: {results_path}")
    return 1 if any(r.get("exit_code") not in (0, None) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
