"""What `--validate` costs (docs/PERFORMANCE.md, "Validation"): the same keyvalue (or
timeseries, `--workload`) run with and without it, alternated against one node, then the
final check of a million keys.

    python3 bench/validate.py --host 127.0.0.1 --rate 10000 --seconds 20 --repeats 3 \\
        --final-keys 1000000
    python3 bench/validate.py --workload timeseries --partitions 10000 --final-keys 0

Each repeat runs `headroom run WORKLOAD` at --rate for --seconds (half reads, half writes over
--partitions keys, one client thread) without `--validate`, then with it. The CPU per
request is summary.json's (`client.cpu_us_per_request`: the measured part's process CPU,
the record's thread included, the final check not), and the latencies its p50 and p99 of
reads and writes; the table shows each variant's median. Then one run populates
--final-keys keys with `--validate` and measures for 10 s: its summary gives the final
check's time and the write record's size for that many keys and writes.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import build_headroom


def run(binary, args, out, extra):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(binary), "run", args.workload, "--hosts", args.host, "--keyspace", "bench_validate",
           "--threads", "1", "--out", str(out)] + extra
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # 4: judged client-bound; its figures are kept and marked.
    if done.returncode not in (0, 4):
        sys.exit(f"headroom failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return json.loads((out / "summary.json").read_text())


def percentile(summary, op, p):
    for o in summary["ops"]:
        if o["op"] == op:
            return o["response_time"][f"{p}_ms"]
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--workload", default="keyvalue", choices=["keyvalue", "timeseries"])
    parser.add_argument("--rate", default="10000")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions", default="100000")
    parser.add_argument("--final-keys", type=int, default=1_000_000)
    parser.add_argument("--binary", help="a built headroom (default: build the release binary)")
    args = parser.parse_args()
    binary = Path(args.binary) if args.binary else build_headroom()
    root = Path(tempfile.mkdtemp(prefix="headroom-validate-"))
    load = ["--rate", args.rate, "--duration", f"{args.seconds}s", "--warmup", "2s",
            "-r", "0.5", "--partitions", args.partitions, "--populate", args.partitions]
    results = {"without": [], "--validate": []}
    for repeat in range(args.repeats):
        for name, extra in (("without", []), ("--validate", ["--validate"])):
            s = run(binary, args, root / f"{repeat}-{name.strip('-')}", load + ["--drop"] + extra)
            row = {
                "cpu": s["client"]["cpu_us_per_request"],
                "read50": percentile(s, "read", "p50"),
                "read99": percentile(s, "read", "p99"),
                "write50": percentile(s, "write", "p50"),
                "write99": percentile(s, "write", "p99"),
                "valid": (s.get("validity") or {}).get("verdict", "valid") == "valid",
            }
            v = s.get("validation")
            if v:
                row["record"] = v["record_bytes"]
                row["writes"] = v["writes_acknowledged"]
                row["keys"] = v["final_check"]["keys"]
                row["final_s"] = v["final_check"]["seconds"]
            results[name].append(row)
            print(f"{name}: {row['cpu']:.2f} µs/request, read p50 {row['read50']:.3f} ms "
                  f"p99 {row['read99']:.3f} ms, write p50 {row['write50']:.3f} ms "
                  f"p99 {row['write99']:.3f} ms" + (f", record {row['record'] / 1e6:.1f} MB "
                  f"for {row['keys']} keys and {row['writes']} writes, final check "
                  f"{row['final_s']:.1f} s" if v else ""), flush=True)
    print(f"\n{args.workload}, {args.rate}/s for {args.seconds} s against {args.host}, one client thread, "
          f"median of {args.repeats}\n")
    print("| run | µs CPU per request | read p50 ms | read p99 ms | write p50 ms | write p99 ms "
          "| valid runs |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in results.items():
        med = lambda k: statistics.median(r[k] for r in rows)
        print(f"| {name} | {med('cpu'):.2f} | {med('read50'):.3f} | {med('read99'):.3f} | "
              f"{med('write50'):.3f} | {med('write99'):.3f} | "
              f"{sum(r['valid'] for r in rows)} of {len(rows)} |")
    if args.final_keys:
        keys = str(args.final_keys)
        s = run(binary, args, root / "final", [
            "--rate", "1000", "--duration", "10s", "-r", "0.5", "--partitions", keys,
            "--partition-generator", "sequence", "--populate", keys, "--drop", "--validate"])
        v = s["validation"]
        f = v["final_check"]
        print(f"\nfinal check of {f['keys']} keys ({v['writes_acknowledged']} writes "
              f"acknowledged): {f['seconds']:.1f} s, {f['found']} found, {f['lost']} lost; "
              f"record {v['record_bytes'] / 1e6:.1f} MB; populate "
              f"{s['populate']['seconds']:.1f} s")


if __name__ == "__main__":
    main()
