#!/usr/bin/env python3
"""Client cost and precision of headroom against latte 0.29, on the same local node, at the
same fixed rate, in one run (docs/PERFORMANCE.md explains the method and keeps the figures).

    python3 bench/compare-latte.py [--rate 10000] [--seconds 30] [--repeats 3] [--rss-minutes 10] \
        [--profiles release,release-lto]

Starts its own Cassandra node with headroom (target/bench-cluster) and stops it at the end.
Needs latte 0.29: `latte` on PATH, $LATTE, or it is installed into target/bench-tools.
CPU is the process's user + system time from /usr/bin/time-like accounting (os.wait4),
divided by the requests each tool reports; the runs alternate so that drift in the node's
state falls on both tools alike; the table shows the median of the repeats.

headroom is measured as users build it (`cargo build --release --bin headroom`, alone: the
floors are built after it and apart). `--profiles` adds a row per other Cargo profile of
headroom at the default send resolution (release-lto: fat LTO, one codegen unit), so what a
build choice costs per request is measured in the same run. A run headroom judges
client-bound (exit 4) is kept, and the table says how many of a row's runs were valid.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchlib import CLUSTER, HEADROOM, LATTE_WORKLOAD, ROOT, HostSteal, build_headroom, find_latte, sh


def timed(cmd, rss_samples=None, cwd=None, accept=(0,)):
    """Runs cmd; returns (stdout, cpu seconds, peak RSS bytes, host steal share). With
    rss_samples, appends (seconds since start, RSS bytes) every 10 s. An exit code outside
    `accept` ends the benchmark."""
    start = time.monotonic()
    steal = HostSteal()
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd)
    out = []
    reader = threading.Thread(target=lambda: out.extend(proc.stdout), daemon=True)
    reader.start()
    while True:
        # wait4 (not poll) reaps the child, so that its resource usage can be read.
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG if rss_samples is not None else 0)
        if pid != 0:
            break
        time.sleep(10)
        try:
            text = Path(f"/proc/{proc.pid}/status").read_text()
            rss = int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) * 1024
            rss_samples.append((time.monotonic() - start, rss))
        except (OSError, AttributeError):
            pass
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    text = "".join(out)
    if proc.returncode not in accept:
        sys.exit(f"{cmd[0]} failed ({proc.returncode}):\n{text[-3000:]}")
    return text, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, steal.share()


def run_headroom(rate, seconds, resolution, out_dir, rss_samples=None, sender="native",
                 binary=HEADROOM, name=None):
    out = Path(out_dir)
    shutil.rmtree(out, ignore_errors=True)
    # Exit 4: the run was judged client-bound (on a busy machine); its figures are kept and
    # marked, not thrown away with the rest of the benchmark.
    text, cpu, peak, steal = timed(
        [binary, "run", "keyvalue", "--rate", rate, "--duration", f"{seconds}s", "--threads", "1",
         "--send-resolution", resolution, "--sender", sender, "--keyspace", "bench_headroom", "--out", out],
        rss_samples,
        accept=(0, 4),
    )
    summary = json.loads((out / "summary.json").read_text())
    op = summary["ops"][0]
    validity = summary.get("validity")
    return {
        "tool": name or f"headroom ({sender}, send resolution {resolution})",
        "valid": validity is None or validity["verdict"] == "valid",
        "requests": op["requests"],
        "cpu_s": cpu,
        "peak_rss": peak,
        "steal": steal,
        "achieved": summary["achieved_rate_per_s"],
        "wait": op["wait_time"],
        "p99_ms": op["response_time"]["p99_ms"],
    }


def run_floor(example, rate, seconds):
    """One of the floors (examples/driver_floor.rs, examples/protocol_floor.rs): the same
    writes with nothing recorded, through the driver or as raw protocol frames."""
    text, cpu, peak, steal = timed([ROOT / "target" / "release" / "examples" / example, rate, seconds])
    answered = int(re.search(r"answered (\d+)", text).group(1))
    return {
        "tool": f"floor: {example.replace('_floor', '')} alone, nothing recorded",
        "valid": None,
        "requests": answered,
        "cpu_s": cpu,
        "peak_rss": peak,
        "steal": steal,
        "achieved": answered / seconds,
        "wait": None,
        "p99_ms": float("nan"),
    }


def run_latte(latte, rate, seconds, rss_samples=None):
    report = Path(tempfile.mkdtemp()) / "latte.json"
    text, cpu, peak, steal = timed(
        [latte, "run", LATTE_WORKLOAD, "127.0.0.1", "-r", rate, "-d", f"{seconds}s", "-t", "1",
         "--drop-sampling-log", "-o", report],
        rss_samples,
        # latte leaves a log file in its working directory.
        cwd=report.parent,
    )
    requests = int(re.search(r"Requests\s+\[req\]\s+(\d+)", text).group(1))
    throughput = float(re.search(r"Throughput\s+\[op/s\]\s+([\d.]+)", text).group(1))
    p99 = re.search(r"^\s+99\s+([\d.]+)", text, re.M)
    return {
        "tool": "latte 0.29",
        "valid": None,
        "requests": requests,
        "cpu_s": cpu,
        "peak_rss": peak,
        "steal": steal,
        "achieved": throughput,
        "wait": None,
        "p99_ms": float(p99.group(1)) if p99 else float("nan"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=10000)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rss-minutes", type=float, default=10)
    parser.add_argument("--profiles", default="release",
                        help="Cargo profiles of headroom to measure, comma-separated (release first)")
    args = parser.parse_args()

    profiles = [p.strip() for p in args.profiles.split(",") if p.strip() and p.strip() != "release"]
    build_headroom()
    others = {profile: build_headroom(profile) for profile in profiles}
    # The floors after headroom and apart: built with the examples, the library would carry
    # the dev-dependencies' features.
    sh("cargo", "build", "--release", "--locked", "--quiet", "--example", "driver_floor",
       "--example", "protocol_floor", cwd=ROOT)
    latte = find_latte()
    sh(HEADROOM, "cluster", "start", "--dir", CLUSTER, "--heap", "4G", stdout=subprocess.DEVNULL)
    try:
        sh(latte, "schema", LATTE_WORKLOAD, "127.0.0.1", stdout=subprocess.DEVNULL)
        print(f"Warming the node: 20 s at {args.rate}/s...", flush=True)
        run_headroom(args.rate, 20, "0s", ROOT / "target" / "bench-runs" / "warmup")
        rows = {}
        for repeat in range(args.repeats):
            clients = ["0s", "500us", "1ms", *others, "driver", "driver_floor", "protocol_floor", "latte"]
            for client in clients:
                if client in others:
                    result = run_headroom(args.rate, args.seconds, "1ms", ROOT / "target" / "bench-runs" / client,
                                          binary=others[client],
                                          name=f"headroom (native, send resolution 1ms), profile {client}")
                elif client == "latte":
                    result = run_latte(latte, args.rate, args.seconds)
                elif client.endswith("_floor"):
                    result = run_floor(client, args.rate, args.seconds)
                elif client == "driver":
                    result = run_headroom(args.rate, args.seconds, "1ms", ROOT / "target" / "bench-runs" / "driver",
                                          sender="driver")
                else:
                    result = run_headroom(args.rate, args.seconds, client, ROOT / "target" / "bench-runs" / client)
                rows.setdefault(result["tool"], []).append(result)
                us = result["cpu_s"] / result["requests"] * 1e6
                bound = " (client-bound)" if result["valid"] is False else ""
                print(f"  run {repeat + 1}: {result['tool']:<46} {result['requests']:>9} requests, {us:6.2f} µs CPU each, host steal {result['steal']:.0%}{bound}", flush=True)

        if args.repeats > 0:
            latte_cpu = statistics.median(r["cpu_s"] / r["requests"] for r in rows["latte 0.29"])
            print(f"\n## Same node, {args.rate}/s for {args.seconds} s, one client thread each, median of {args.repeats}\n")
            print("| client | CPU-s per 100k requests | vs latte | achieved / attempted | wait before send p50 / p99 / p99.9 / max (ms) | p99 (ms) | valid runs |")
            print("|---|---|---|---|---|---|---|")
            for tool, results in rows.items():
                cpu = statistics.median(r["cpu_s"] / r["requests"] for r in results)
                achieved = statistics.median(r["achieved"] for r in results)
                wait = results[len(results) // 2]["wait"]
                wait_text = (
                    f"{wait['p50_ms']:.3f} / {wait['p99_ms']:.3f} / {wait['p999_ms']:.3f} / {wait['max_ms']:.3f}"
                    if wait else "not reported"
                )
                p99 = statistics.median(r["p99_ms"] for r in results)
                judged = [r["valid"] for r in results if r["valid"] is not None]
                valid = f"{sum(judged)} of {len(judged)}" if judged else "not judged"
                print(f"| {tool} | {cpu * 1e5:.2f} | {cpu / latte_cpu:.2f}× | {achieved:.0f} / {args.rate} | {wait_text} | {p99:.2f} | {valid} |")
            steals = [r["steal"] for results in rows.values() for r in results]
            print(f"\nThe host took {statistics.median(steals):.0%} of the CPU in the median run, {max(steals):.0%} at most"
                  " (steal; with much of it, the figures above are suspect).")

        if args.rss_minutes > 0:
            seconds = int(args.rss_minutes * 60)
            print(f"\n## Resident memory over a {args.rss_minutes:g}-minute run at {args.rate}/s\n")
            print("| client | RSS after 1 min | RSS at half time | RSS at the end | peak |")
            print("|---|---|---|---|---|")
            for kind in ("headroom", "latte"):
                samples = []
                if kind == "headroom":
                    result = run_headroom(args.rate, seconds, "1ms", ROOT / "target" / "bench-runs" / "rss", samples)
                else:
                    result = run_latte(latte, args.rate, seconds, samples)
                def at(t):
                    return min(samples, key=lambda s: abs(s[0] - t))[1] / 2**20 if samples else float("nan")
                print(f"| {result['tool']} | {at(60):.1f} MiB | {at(seconds / 2):.1f} MiB | {at(seconds):.1f} MiB | {result['peak_rss'] / 2**20:.1f} MiB |")
    finally:
        sh(HEADROOM, "cluster", "destroy", "--dir", CLUSTER, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
