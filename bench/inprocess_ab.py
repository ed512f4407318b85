#!/usr/bin/env python3
"""roost's in-process lookups in two builds, side by side.

Runs cuckoo_bench and block_bench of BEFORE and AFTER (two build
directories, e.g. one made from another revision in a git worktree) in
turns, round after round, the first to run alternating, each pinned to one
core, and prints a Markdown table of each benchmark's median CPU time per
call and the ratio after/before (below 1: faster). The tables each binary
builds go into a scratch directory.

Usage: bench/inprocess_ab.py BEFORE_BUILD AFTER_BUILD [--rounds R] [--core C]
Example:
  git worktree add /tmp/before REV && (cd /tmp/before && scripts/build.sh \\
      cuckoo_bench block_bench)
  scripts/build.sh cuckoo_bench block_bench
  bench/inprocess_ab.py /tmp/before/build/release build/release
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile

# Each binary, and the benchmarks run (those that build the table first).
RUNS = [
    ("cuckoo_bench",
     "BM_RoostBuild|BM_RoostGetHit$|BM_RoostGetMiss$|"
     "BM_RoostMultiGetHit/1000$|BM_RoostMultiGetMiss/1000$"),
    ("block_bench",
     "BM_RoostTable/uniform/(plain|snappy)|"
     "BM_RoostGet/uniform/auto/hash/(hit|miss)$|"
     "BM_RoostSnappyGet/uniform/auto/hash/(hit|miss)$"),
]


def run(build, binary, pattern, core, scratch):
    out = subprocess.run(
        ["taskset", "-c", str(core),
         os.path.join(os.path.abspath(build), "bench", binary),
         f"--benchmark_filter={pattern}", "--benchmark_min_time=0.5",
         "--benchmark_format=json"],
        capture_output=True, text=True, check=True, cwd=scratch).stdout
    return [(b["name"], b["cpu_time"]) for b in json.loads(out)["benchmarks"]
            if "iterations:1" not in b["name"]]  # the table builds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--core", type=int, default=1)
    args = parser.parse_args()
    times = {}  # (binary, name) -> {"before": [...], "after": [...]}
    with tempfile.TemporaryDirectory() as scratch:
        for r in range(args.rounds):
            order = [("before", args.before), ("after", args.after)]
            if r % 2:
                order.reverse()
            for binary, pattern in RUNS:
                for who, build in order:
                    for name, cpu in run(build, binary, pattern, args.core,
                                         scratch):
                        times.setdefault((binary, name), {}).setdefault(
                            who, []).append(cpu)
    print("| bench | benchmark | before (ns) | after (ns) | after/before |")
    print("| --- | --- | ---: | ---: | ---: |")
    for (binary, name), t in times.items():
        before, after = statistics.median(t["before"]), statistics.median(
            t["after"])
        print(f"| {binary} | {name} | {before:.1f} | {after:.1f} | "
              f"{after / before:.2f} |")


if __name__ == "__main__":
    main()
