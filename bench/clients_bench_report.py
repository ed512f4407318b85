#!/usr/bin/env python3
"""The table bench/clients_bench.sh prints: one row per client and load
from its JSON lines (clients.jsonl), and each roost client's keys/s as a
ratio to the C++ roost client's on the same load and to its own language's
Redis client's (C++: hiredis, Python: redis-py, Go: go-redis, Java: Jedis).
"server µs/key" is the servers' CPU per key answered (server_cores over
keys/s): what a key cost the servers, whoever else had the cores.

  clients_bench_report.py clients.jsonl

Exit status 1 when a line is not a JSON object with the fields the table
needs, or a run had errors (the table is still printed).
"""

import json
import sys

FIELDS = ("language", "client", "system", "workload", "concurrency", "batch",
          "keys_per_s", "qps", "p50_us", "p99_us")
LANGUAGES = ("C++", "Python", "Go", "Java")
WORKLOADS = ("get", "multiget")


class ReportError(Exception):
    pass


def errors(row):
    return sum(int(row.get(k, 0) or 0) for k in ("rpc_errors", "misses", "bad_values"))


def load(lines):
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ReportError(f"line {n}: not JSON ({e.msg})")
        if not isinstance(row, dict):
            raise ReportError(f"line {n}: not a JSON object")
        missing = [f for f in FIELDS if f not in row]
        if missing:
            raise ReportError(f"line {n}: no {', '.join(missing)}")
        rows.append(row)
    return rows


def ratio(value, base):
    return f"{value / base:.2f}" if base else "—"


def in_flight(row):
    if row["workload"] == "get":
        return f"{row['concurrency']} Gets"
    return f"{row['concurrency']} × {row['batch']} keys"


def table(rows):
    """The Markdown table: roost's clients and the Redis ones, by load, then
    language."""
    def find(system, workload, language):
        for r in rows:
            if (r["system"], r["workload"], r["language"]) == (system, workload, language):
                return r
        return None

    order = {lang: i for i, lang in enumerate(LANGUAGES)}
    ordered = sorted(rows, key=lambda r: (
        WORKLOADS.index(r["workload"]) if r["workload"] in WORKLOADS else len(WORKLOADS),
        order.get(r["language"], len(order)), r["system"] != "roost", r["client"]))
    out = ["| load | in flight | client | against | keys/s | calls/s | p50 µs | p99 µs "
           "| errors | server cores | server µs/key | keys/s ÷ roost C++ | keys/s ÷ its Redis client |",
           "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in ordered:
        versus_cpp = versus_redis = ""
        if r["system"] == "roost":
            cpp = find("roost", r["workload"], "C++")
            redis = find("redis", r["workload"], r["language"])
            versus_cpp = ratio(r["keys_per_s"], cpp["keys_per_s"] if cpp else 0)
            versus_redis = ratio(r["keys_per_s"], redis["keys_per_s"] if redis else 0)
        cores = r.get("server_cores")
        per_key = (f"{cores / r['keys_per_s'] * 1e6:.2f}"
                   if cores is not None and r["keys_per_s"] else "")
        out.append(
            f"| {r['workload']} | {in_flight(r)} | {r['client']} | "
            f"{'roost' if r['system'] == 'roost' else 'Redis'} | "
            f"{r['keys_per_s']:,.0f} | {r['qps']:,.0f} | {r['p50_us']:,.0f} | "
            f"{r['p99_us']:,.0f} | {errors(r)} | "
            f"{'' if cores is None else f'{cores:.2f}'} | {per_key} | {versus_cpp} | "
            f"{versus_redis} |")
    return "\n".join(out)


def main(argv):
    if len(argv) != 2:
        print("usage: clients_bench_report.py clients.jsonl", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            rows = load(f)
    except (OSError, ReportError) as e:
        print(f"clients_bench_report: {argv[1]}: {e}", file=sys.stderr)
        return 1
    if not rows:
        print(f"clients_bench_report: {argv[1]}: no runs", file=sys.stderr)
        return 1
    print(table(rows))
    failed = [f"{r['client']} {r['workload']}" for r in rows if errors(r)]
    if failed:
        print(f"clients_bench_report: runs with errors: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
