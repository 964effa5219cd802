#!/usr/bin/env python3
"""Instructions per request of headroom (and latte 0.29) in user space, counted by valgrind's
callgrind: a figure that does not move with the machine's load, for changes too small for
the CPU-time benchmark's ±10% (docs/PERFORMANCE.md explains both).

    python3 bench/instructions.py [--rate 1000] [--seconds 10] [--latte] [--top 25] [--binary PATH]

Starts its own Cassandra node with headroom (target/bench-cluster, as compare-latte.py does)
and removes it at the end. Each client runs twice under callgrind, for --seconds and for
twice as long; the difference of the two counts divided by the difference of the requests is
the cost of one more request, with start-up, connecting and the end of the run taken out.
What still scales with the run's length but not with its requests (the work done once per
1 s interval) falls on the requests of that second: compare figures at the same rate only.
Needs valgrind (`apt-get install valgrind`). Under callgrind a client runs some 50 times
slower: headroom keeps 1000/s, latte does not (it is reported with the rate it reached).
"""

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import CLUSTER, HEADROOM, LATTE_WORKLOAD, ROOT, build_headroom, find_latte, sh


def callgrind(cmd, out_file, cwd=None):
    """Runs cmd under callgrind; returns its standard output."""
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"] + [str(c) for c in cmd],
        capture_output=True, text=True, cwd=cwd,
    )
    if proc.returncode != 0:
        sys.exit(f"{cmd[0]} failed under callgrind:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return proc.stdout


def functions(out_file):
    """Instructions per function (exclusive) from a callgrind output file."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", str(out_file)],
                          capture_output=True, text=True, check=True).stdout
    counts = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S.*?)(?: \[.*\])?$", line)
        if m and "PROGRAM TOTALS" not in line:
            counts[m.group(2)] += int(m.group(1).replace(",", ""))
    return counts


def headroom_run(binary, rate, seconds, work):
    out = work / f"headroom-{seconds}"
    text = callgrind([binary, "run", "keyvalue", "--rate", rate, "--duration", f"{seconds}s",
                      "--threads", "1", "--keyspace", "bench_headroom", "--out", out],
                     work / f"headroom-{seconds}.callgrind")
    requests = int(re.search(r"^\s+write\s+(\d+)", text, re.M).group(1))
    achieved = float(re.search(r"achieved ([\d.]+)/s", text).group(1))
    return requests, achieved


def latte_run(latte, rate, seconds, work):
    text = callgrind([latte, "run", LATTE_WORKLOAD, "127.0.0.1", "-r", rate, "-d", f"{seconds}s",
                      "-t", "1", "--drop-sampling-log", "-o", work / f"latte-{seconds}.json"],
                     work / f"latte-{seconds}.callgrind", cwd=work)
    requests = int(re.search(r"Requests\s+\[req\]\s+(\d+)", text).group(1))
    achieved = float(re.search(r"Throughput\s+\[op/s\]\s+([\d.]+)", text).group(1))
    return requests, achieved


def measure(name, run, rate, seconds, work, top):
    (short_n, short_rate), (long_n, long_rate) = (run(rate, seconds, work), run(rate, 2 * seconds, work))
    short, long = (functions(work / f"{name}-{s}.callgrind") for s in (seconds, 2 * seconds))
    extra = long_n - short_n
    per_request = {f: (long[f] - short[f]) / extra for f in set(short) | set(long)}
    total = sum(per_request.values())
    print(f"\n## {name}: {total:,.0f} instructions per request "
          f"({short_n} and {long_n} requests, {short_rate:.0f}/s and {long_rate:.0f}/s of {rate}/s)\n")
    for f, n in sorted(per_request.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{n:9,.0f}  {f[:150]}")
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--latte", action="store_true", help="count latte 0.29 too")
    parser.add_argument("--top", type=int, default=25, help="functions to list per client")
    parser.add_argument("--binary", type=Path, default=HEADROOM, help="headroom binary to count (default: build and take target/release)")
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("needs valgrind: apt-get install valgrind")

    if args.binary == HEADROOM:
        build_headroom()
    latte = find_latte() if args.latte else None
    sh(HEADROOM, "cluster", "start", "--dir", CLUSTER, "--heap", "4G", stdout=subprocess.DEVNULL)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            # The first connection to a new node creates the keyspace; warm the node as well.
            sh(args.binary, "run", "keyvalue", "--rate", args.rate, "--duration", "10s",
               "--keyspace", "bench_headroom", "--out", work / "warmup", stdout=subprocess.DEVNULL)
            ours = measure("headroom", lambda r, s, w: headroom_run(args.binary, r, s, w),
                           args.rate, args.seconds, work, args.top)
            if latte:
                sh(latte, "schema", LATTE_WORKLOAD, "127.0.0.1", stdout=subprocess.DEVNULL)
                theirs = measure("latte", lambda r, s, w: latte_run(latte, r, s, w),
                                 args.rate, args.seconds, work, args.top)
                print(f"\nheadroom / latte: {ours / theirs:.2f}× the instructions per request")
    finally:
        sh(HEADROOM, "cluster", "destroy", "--dir", CLUSTER, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
