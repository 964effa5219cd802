#!/usr/bin/env python3
"""The capacity search's methods on a simulated cluster: how often the stated bounds hold the
true capacity, how narrow they are, and how much load they cost (docs/capacity.md keeps the
table).

    python3 bench/search-method.py [--searches 1000] [--exceed-ratio 0.1] [--confidence 0.9]
        [--width 0.1] [--json]

Per scenario (a sharp knee, a gradual one, 5 % of windows failing at every rate, a capacity
drifting by 10 % over a search, a client that cannot keep rates 5 % above the capacity) it
runs the interval search and today's bisection with 1 and 3 repeats (at a resolution equal
to the width), each against the same simulated clusters (seeds 1 to N). The simulator and
the methods are headroom's own code (src/capacity/sim/stochastic.rs,
src/capacity/interval.rs, src/capacity/search.rs), run by examples/search_method.rs.

The true capacity is the highest rate at which at most the exceed ratio of windows fail in
the long run (at the search's end, where it drifts). Coverage: the share of searches whose
bounds held it (a missing bound counts as 0 or infinity). Width: the median (U - L) / U.
Load-time: the median seconds of load, probe and warmups included. With --json: a list of
objects with scenario, method (interval, ladder-1, ladder-3), confidence (null for the
ladders, which state none), coverage, width, load_time_s, trials and searches.
"""

import argparse
import json
import subprocess
import sys

from benchlib import ROOT


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--searches", type=int, default=1000, help="searches per scenario and method")
    parser.add_argument("--exceed-ratio", type=float, default=0.1)
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--width", type=float, default=0.1)
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    args = parser.parse_args()
    if args.searches < 1:
        sys.exit("--searches must be at least 1")
    for name, value in (("--exceed-ratio", args.exceed_ratio), ("--confidence", args.confidence),
                        ("--width", args.width)):
        if not 0 < value < 1:
            sys.exit(f"{name} must lie between 0 and 1, not {value}")

    print("Building examples/search_method.rs (release)...", file=sys.stderr, flush=True)
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--no-default-features",
                    "--example", "search_method"], cwd=ROOT, check=True)
    binary = ROOT / "target" / "release" / "examples" / "search_method"
    out = subprocess.run([str(binary), str(args.searches), str(args.exceed_ratio), str(args.confidence),
                          str(args.width)], check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"\n{args.searches} searches per scenario and method; exceed ratio {args.exceed_ratio:g}, "
          f"confidence {args.confidence:g}, width {args.width:g}\n")
    print("| scenario | method | coverage | median width | median load-time | median trials |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        width = row["width"]
        width_text = "none (no upper bound)" if width is None else f"{width:.1%}"
        print(f"| {row['scenario']} | {row['method']} | {row['coverage']:.1%} | {width_text} | "
              f"{row['load_time_s'] / 60:.1f} min | {row['trials']:.0f} |")


if __name__ == "__main__":
    main()
