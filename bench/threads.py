"""Client CPU per request of headroom variants (thread counts, builds) and latte, alternated
against one node, in one run (docs/PERFORMANCE.md, "One runtime per thread").

    python3 bench/threads.py --host 127.0.0.31 --rate 40000 --seconds 20 --repeats 3 \\
        --variant '1 thread=--threads 1' --variant '2 threads=--threads 2' --variant 'default='

Each variant is NAME=FLAGS (FLAGS added to `headroom run keyvalue`), or NAME=BINARY|FLAGS to
run another build. A variant whose flags serve `--metrics-listen ADDR` or `--live ADDR` is
watched while it runs, as Prometheus and a browser would: /metrics and /live/body are fetched
once a second each (the endpoint's and the page's cost fall in the run's CPU):

    python3 bench/threads.py --variant 'off=' \
        --variant 'watched=--metrics-listen 127.0.0.1:19464 --live 127.0.0.1:19465 --linger 0s'

`--workload WORDS` runs another workload than keyvalue, e.g. the two senders
on YCSB's workload A or a cassandra-stress profile:

    python3 bench/threads.py --rate 10000 --workload 'ycsb --workload a -p recordcount=100000' \
        --variant 'native=--sender native' --variant 'driver=--sender driver'
 `--latte` adds latte 0.29 (`-t 1`, bench/latte-keyvalue.rn). The variants
run in turn, A B C A B C ..., so that the machine's and the node's drift falls on all alike.
CPU is the process's user and system time (os.wait4), divided by the requests the tool
reports; the table shows each variant's median. With the stand-in node
(examples/stand_in_node.rs) as --host, the server costs nothing per write and the client's
own limits show.
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
import urllib.request
from pathlib import Path

from benchlib import HEADROOM, LATTE_WORKLOAD, HostSteal, build_headroom, find_latte


def watch(urls, stop):
    """Fetches each URL once a second until stop is set, as a scraper and an open page do;
    returns how many fetches answered."""
    answered = 0
    while not stop.is_set():
        for url in urls:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    response.read()
                    answered += 1
            except OSError:
                pass
        stop.wait(1.0)
    return answered


def watched_urls(flags):
    """The URLs a variant's flags serve: /metrics of --metrics-listen, /live/body of --live."""
    urls = []
    for flag, path in (("--metrics-listen", "/metrics"), ("--live", "/live/body")):
        if flag in flags:
            urls.append(f"http://{flags[flags.index(flag) + 1]}{path}")
    return urls


def timed(cmd, cwd=None, urls=()):
    """Runs cmd, fetching urls once a second meanwhile; returns (output, user s, system s,
    host steal share)."""
    steal = HostSteal()
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=cwd)
    stop = threading.Event()
    fetches = []
    watcher = threading.Thread(target=lambda: fetches.append(watch(urls, stop)), daemon=True)
    if urls:
        watcher.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    stop.set()
    if urls:
        watcher.join()
        out += f"\n(watched: {fetches[0]} fetches answered)\n"
    code = os.waitstatus_to_exitcode(status)
    # 4: headroom judged the run client-bound; its figures are kept and marked.
    if code not in (0, 1, 4):
        sys.exit(f"{cmd[0]} failed ({code}):\n{out[-3000:]}")
    return out, usage.ru_utime, usage.ru_stime, steal.share()


def run_headroom(binary, flags, args, out):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [binary, "run"] + args.workload.split() + ["--hosts", args.host, "--rate", args.rate,
           "--duration", f"{args.seconds}s", "--warmup", "2s", "--out", out] + flags
    text, user, system, steal = timed(cmd, urls=watched_urls(flags))
    if "--metrics-listen" in flags or "--live" in flags:
        print("  " + text.strip().splitlines()[-1], flush=True)
    summary = json.loads((Path(out) / "summary.json").read_text())
    requests = sum(op["requests"] for op in summary["ops"])
    # The warmup's requests cost CPU too.
    requests_all = requests + int(float(args.rate) * 2)
    validity = summary.get("validity") or {}
    threads = validity.get("figures", {}).get("threads")
    return {"requests": requests_all, "user": user, "sys": system, "steal": steal,
            "achieved": summary["achieved_rate_per_s"], "threads": threads,
            "valid": validity.get("verdict", "valid") == "valid"}


def run_latte(latte, args):
    report = Path(tempfile.mkdtemp()) / "latte.json"
    host = args.host.split(":")[0]
    text, user, system, steal = timed(
        [latte, "run", LATTE_WORKLOAD, host, "-r", args.rate, "-d", f"{args.seconds}s", "-t", "1",
         "--drop-sampling-log", "-o", report], cwd=report.parent)
    requests = int(re.search(r"Requests\s+\[req\]\s+(\d+)", text).group(1))
    throughput = float(re.search(r"Throughput\s+\[op/s\]\s+([\d.]+)", text).group(1))
    return {"requests": requests, "user": user, "sys": system, "steal": steal,
            "achieved": throughput, "threads": 1, "valid": None}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--rate", default="10000")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--latte", action="store_true")
    parser.add_argument("--workload", default="keyvalue --keyspace bench_threads",
                        help="what follows `headroom run` (default: keyvalue --keyspace bench_threads)")
    args = parser.parse_args()
    variants = []
    for spec in args.variant or ["default="]:
        name, _, rest = spec.partition("=")
        binary, flags = (rest.split("|", 1) if "|" in rest else (str(HEADROOM), rest))
        variants.append((name, binary, flags.split()))
    if any(binary == str(HEADROOM) for _, binary, _ in variants):
        build_headroom()
    latte = find_latte() if args.latte else None
    if latte:
        subprocess.run([str(latte), "schema", str(LATTE_WORKLOAD), args.host.split(":")[0]],
                       check=True, stdout=subprocess.DEVNULL, cwd=tempfile.mkdtemp())
    results = {name: [] for name, _, _ in variants}
    if latte:
        results["latte 0.29"] = []
    out_root = Path(tempfile.mkdtemp(prefix="headroom-threads-"))
    for repeat in range(args.repeats):
        for name, binary, flags in variants:
            r = run_headroom(binary, flags, args, out_root / f"{repeat}")
            results[name].append(r)
            print(f"{name}: {r['threads']} thread(s), {(r['user'] + r['sys']) * 1e6 / r['requests']:.2f} µs/request "
                  f"(user {r['user'] * 1e6 / r['requests']:.2f}, sys {r['sys'] * 1e6 / r['requests']:.2f}), "
                  f"achieved {r['achieved']:.0f}/s, steal {r['steal'] * 100:.0f}%", flush=True)
        if latte:
            r = run_latte(latte, args)
            results["latte 0.29"].append(r)
            print(f"latte 0.29: {(r['user'] + r['sys']) * 1e6 / r['requests']:.2f} µs/request "
                  f"(user {r['user'] * 1e6 / r['requests']:.2f}, sys {r['sys'] * 1e6 / r['requests']:.2f}), "
                  f"achieved {r['achieved']:.0f}/s, steal {r['steal'] * 100:.0f}%", flush=True)
        time.sleep(1)
    print(f"\n{args.rate}/s for {args.seconds} s against {args.host}, median of {args.repeats}\n")
    print("| client | threads | µs CPU per request | user | system | achieved/s | valid runs |")
    print("|---|---|---|---|---|---|---|")
    for name, runs in results.items():
        med = lambda key: statistics.median(r[key] * 1e6 / r["requests"] for r in runs)
        total = statistics.median((r["user"] + r["sys"]) * 1e6 / r["requests"] for r in runs)
        judged = [r["valid"] for r in runs if r["valid"] is not None]
        valid = f"{sum(judged)} of {len(judged)}" if judged else "not judged"
        print(f"| {name} | {runs[0]['threads']} | {total:.2f} | {med('user'):.2f} | {med('sys'):.2f} | "
              f"{statistics.median(r['achieved'] for r in runs):.0f} | {valid} |")


if __name__ == "__main__":
    main()
