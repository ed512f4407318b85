#!/usr/bin/env python3
"""The table of bench/cold_bench.sh's runs: for each key distribution and
operation, every run's lookups/s, latency per call and reads per lookup,
and its ratio to the better RocksDB run (by lookups/s) of the same
distribution and operation; then a line each for roost's best cuckoo and
block runs against it (lookups/s, and p99 per call). Exits 1 when a run
answered wrong.

Usage: bench/cold_bench_report.py RESULTS.jsonl [--limit-mib M] [--table-mib T]
"""

import argparse
import json
import sys


def fus(v):
    return f"{v:.1f}" if v < 10 else f"{v:,.0f}"


def fratio(a, b):
    return f"{a / b:.2f}×" if b else "—"


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def label(r):
    if r["system"] == "rocksdb":
        return f"RocksDB block-based, block cache {r['block_cache'] / 2**20:g} MiB"
    name = {"roost-cuckoo": "roost cuckoo", "roost-block": "roost block"}[r["system"]]
    advice = {"random": "MADV_RANDOM", "requests": "MADV_RANDOM, page requests",
              "normal": "read-around"}[r["advice"]]
    index = ", index and filter mapped" if r.get("mapped_index") else ""
    return f"{name}, {advice}{index}"


def best(rows, system):
    mine = [r for r in rows if r["system"] == system]
    return max(mine, key=lambda r: r["ops_per_s"], default=None)


def report(rows, limit_mib=None, table_mib=None):
    out = []
    if limit_mib and table_mib:
        out.append(f"Tables of {rows[0]['keys']:,} pairs, roost's cuckoo table "
                   f"{table_mib} MiB, the memory limit {limit_mib} MiB "
                   f"({table_mib / limit_mib:.1f}×); {rows[0]['threads']} threads.")
        out.append("")
    out.append("| keys | op | system | lookups/s | p50 µs | p99 µs | major faults/lookup "
               "| KiB read/lookup | lookups/s ratio to RocksDB |")
    out.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    summary = []
    groups = {}
    for r in rows:
        groups.setdefault((r["dist"], r["op"], r["batch"]), []).append(r)
    for (dist, op, batch), g in groups.items():
        ref = best(g, "rocksdb")
        what = "get" if op == "get" else f"multiget×{batch}"
        for r in g:
            n = max(r["lookups"], 1)
            ratio = fratio(r["ops_per_s"], ref["ops_per_s"]) if ref else "—"
            out.append(f"| {dist} | {what} | {label(r)} | {r['ops_per_s']:,.0f} | "
                       f"{fus(r['p50_us'])} | {fus(r['p99_us'])} | "
                       f"{r['major_faults'] / n:.3f} | {r['read_bytes'] / n / 1024:.2f} | "
                       f"{ratio} |")
        for system in ("roost-cuckoo", "roost-block"):
            mine = best(g, system)
            if mine and ref:
                summary.append(
                    f"{dist} {what}: {label(mine)} {fratio(mine['ops_per_s'], ref['ops_per_s'])} "
                    f"the lookups/s of {label(ref)}, p99 {fus(mine['p99_us'])} vs "
                    f"{fus(ref['p99_us'])} µs ({fratio(mine['p99_us'], ref['p99_us'])}).")
    return out + [""] + summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results")
    p.add_argument("--limit-mib", type=float)
    p.add_argument("--table-mib", type=float)
    a = p.parse_args(argv)
    rows = load(a.results)
    print("\n".join(report(rows, a.limit_mib, a.table_mib)))
    wrong = [r for r in rows if r["errors"]]
    for r in wrong:
        print(f"cold_bench_report: {label(r)} {r['dist']} {r['op']}: "
              f"{r['errors']} wrong answers", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
