#!/usr/bin/env python3
"""The report bench/server_bench.sh prints, and what it reads of ghz.

Usage:
  bench/server_bench_report.py report DIR --keys N --channels C
      --concurrency K --warmup S --duration S --load-at-start "L1 L5 L15"
      [--ghz-version TEXT]
  bench/server_bench_report.py ghz-row NAME FILE --exit-status RC
      --concurrency K

`report` prints the runs as a table (QPS, keys/s, latencies, server CPU
per key, client CPU, keys/s against the no-op server's at the same method
and batch), its notes, the targets, and ghz's rows. DIR is server_bench.sh's
directory:
  results      one line per run that succeeded: LABEL then server_load's
               JSON line (LABEL: noop, roost or roost+metrics)
  metrics.txt  a scrape of roost+metrics' /metrics after its runs (its
               roost_ samples are counted; missing: 0)
  ghz.jsonl    the rows `ghz-row` printed (absent: ghz did not run)
Without --ghz-version, ghz was not found and is said to be skipped.

`ghz-row` reads one ghz run's summary (ghz's default output) and prints
its row as a JSON line (name, qps, p50, p99, ok, cut); or exits 1 when the
run failed: a non-zero exit status, no rate or no OK count, an error other
than the connection closing under the RPCs cut off at the end of -z, or
more of those cut off than were in flight.
"""

import argparse
import json
import sys
from pathlib import Path

import machine
from report_values import div as _div
from report_values import first_float as _first_float
from report_values import read_text as _read

TARGET_KEYS = 10000000
NOOP = "noop"
# Errors of the RPCs ghz cuts off at the end of -z (Canceled or
# Unavailable, "the client connection is closing"): no errors of the
# server's.
GHZ_CLOSING = ("client connection is closing", "use of closed network connection")


def read_results(path):
    """The runs: dicts of label, method, batch and server_load's fields."""
    rows = []
    for line in _read(path).splitlines():
        if not line.strip():
            continue
        label, _, text = line.partition(" ")
        row = json.loads(text)
        row["label"] = label
        rows.append(row)
    return rows


def table(rows):
    ceiling = {(r["method"], r["batch"]): _num(r.get("keys_per_s"))
               for r in rows if r["label"] == NOOP}
    # Padded by bytes, as the awk this replaced did it (mawk): a "µ" column
    # is one character narrower on screen, and the report stays the same.
    heads = ("server", "method", "batch", "QPS", "keys/s", "p50 µs", "p99 µs",
             "server µs/key", "client CPU s", "keys/s / no-op")
    out = [(b"| %-13s | %-8s | %5s | %10s | %12s | %9s | %9s | %14s | %12s | %14s |" %
            tuple(h.encode() for h in heads)).decode(),
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        c = ceiling.get((r["method"], r["batch"]), 0)
        kps = _num(r.get("keys_per_s"))
        ratio = "1" if r["label"] == NOOP else "%.3f" % (kps / c) if c > 0 else "?"
        out.append("| %-13s | %-8s | %5d | %10.0f | %11.3fM | %9.1f | %9.1f | %14.3f | %12.2f | %14s |" % (
            r["label"], r["method"], r["batch"], _num(r.get("qps")), kps / 1e6,
            _num(r.get("p50_us")), _num(r.get("p99_us")),
            _num(r.get("server_cpu_us_per_key")), _num(r.get("client_cpu_s")), ratio))
    return out


def notes(keys, metric_samples, load_at_start):
    out = ["server µs/key: server CPU seconds (user + system, all threads) per million keys",
           "answered in the window; client CPU s: server_load's own CPU over the window.",
           "roost+metrics: --metrics-listen on, /metrics scraped every second during its runs;",
           "both roost rows count every lookup (bench/metrics_bench.cc measures that counting)",
           f"({metric_samples} roost_ samples in a scrape afterwards)."]
    if keys != TARGET_KEYS:
        out.append("(the targets below are set for 10,000,000 keys; a smaller table "
                   "fits in cache)")
    if _first_float(load_at_start) >= 1:
        out.append(f"(load average {load_at_start} at the start: other work may have "
                   f"competed for the cores)")
    return out


def targets(rows):
    """roost's targets against the no-op server, each met or not, and what
    the metrics endpoint costs."""
    by = {(r["label"], r["method"], r["batch"]): r for r in rows}
    qps = lambda *k: _num(by[k].get("qps"))
    kps = lambda *k: _num(by[k].get("keys_per_s"))
    verdict = lambda ok: "met" if ok else "NOT met"
    out = []
    get, noop_get = ("roost", "get", 1), (NOOP, "get", 1)
    if get in by and noop_get in by:
        r = _div(qps(*get), qps(*noop_get))
        out.append("target: unary Get >= 90%% of the no-op ceiling: %.0f against %.0f "
                   "QPS = %.1f%%, %s" % (qps(*get), qps(*noop_get), 100 * r,
                                         verdict(r >= 0.9)))
    big = ("roost", "multiget", 1000)
    if big in by:
        out.append("target: MultiGet of 1000 >= 3M keys/s: %.2fM keys/s, %s" % (
            kps(*big) / 1e6, verdict(kps(*big) >= 3e6)))
        cpu = by[big].get("server_cpu_us_per_key")
        out.append("target: server CPU <= 0.3 µs per key at batch 1000: %.3f µs, %s" % (
            _num(cpu), verdict(cpu is not None and cpu <= 0.3)))
    scraped = ("roost+metrics", "get", 1)
    if scraped in by and get in by:
        line = "metrics endpoint scraped / off, Get QPS: %.3f" % _div(qps(*scraped),
                                                                      qps(*get))
        scraped_big = ("roost+metrics", "multiget", 1000)
        if scraped_big in by and big in by:
            line += "; MultiGet 1000 keys/s: %.3f" % _div(kps(*scraped_big), kps(*big))
        out.append(line)
    return out


def ghz_lines(ghz_version, rows, concurrency, channels, duration):
    if not ghz_version:
        return ["ghz: skipped (not on PATH nor in ~/go/bin)"]
    out = [f"ghz {ghz_version}, Get of one fixed key, -c {concurrency} "
           f"--connections {channels} -z {duration}s:"]
    out += [f"  {r['name']}: {r['qps']} QPS, p50 {r['p50']}, p99 {r['p99']} "
            f"({r['ok']} OK, {r['cut']} cut off at the end)" for r in rows]
    if len(rows) == 2:
        out.append("  roost / no-op: %.3f" % _div(float(rows[1]["qps"]),
                                                 float(rows[0]["qps"])))
    return out


def ghz_row(name, text, exit_status, concurrency):
    """ghz's summary as a row, or None when the run failed."""
    lines = text.splitlines()
    qps = next((l.split("\t")[1].replace(" ", "") for l in lines
                if "Requests/sec:" in l and "\t" in l), "")
    latency = lambda pct: next((" ".join(l.split()[3:5]) for l in lines
                                if f" {pct} % in " in l), "")
    statuses, errors = _section(lines, "Status code distribution:"), \
        _section(lines, "Error distribution:")
    ok = next((l.split()[1] for l in statuses if l.split()[0] == "[OK]"), "")
    cut = sum(_int(l.split()[1]) for l in statuses if l.split()[0] != "[OK]")
    unexpected = [e for e in errors if not any(c in e for c in GHZ_CLOSING)]
    if exit_status != 0 or not qps or not ok or unexpected or cut > concurrency:
        return None
    return {"name": name, "qps": qps, "p50": latency(50), "p99": latency(99),
            "ok": ok, "cut": cut}


def report(d, a):
    rows = read_results(d / "results")
    samples = sum(1 for l in _read(d / "metrics.txt").splitlines()
                  if l.startswith("roost_"))
    ghz = [json.loads(l) for l in _read(d / "ghz.jsonl").splitlines() if l.strip()]
    return (["",
             f"roost-server under load: {a.keys} keys (cuckoo, 8-byte keys, 8-byte "
             f"values), server_load with {a.channels} channels, {a.concurrency} RPCs in "
             f"flight, {a.warmup} s warm-up + {a.duration} s per run, {machine.utc_now()}",
             f"machine: {machine.summary()}; client and servers share them; load "
             f"average at start: {a.load_at_start}, at end: {machine.load_average()}",
             ""] + table(rows) + [""] + notes(a.keys, samples, a.load_at_start) + [""] +
            targets(rows) + [""] +
            ghz_lines(a.ghz_version, ghz, a.concurrency, a.channels, a.duration))


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="bench/server_bench.sh's report, and its reading of ghz's output.")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("report", help="print the report from server_bench.sh's DIR")
    r.add_argument("dir", type=Path, metavar="DIR")
    r.add_argument("--keys", type=int, required=True)
    r.add_argument("--channels", required=True)
    r.add_argument("--concurrency", required=True)
    r.add_argument("--warmup", required=True, help="seconds, as given")
    r.add_argument("--duration", required=True, help="seconds, as given")
    r.add_argument("--load-at-start", default="?")
    r.add_argument("--ghz-version", default="", help="ghz's --version; empty: no ghz")
    g = sub.add_parser("ghz-row", help="one ghz run's row, or exit 1 if it failed")
    g.add_argument("name")
    g.add_argument("file", type=Path)
    g.add_argument("--exit-status", type=int, required=True)
    g.add_argument("--concurrency", type=int, required=True)
    a = ap.parse_args(argv)
    if a.command == "report":
        print("\n".join(report(a.dir, a)))
        return 0
    row = ghz_row(a.name, _read(a.file), a.exit_status, a.concurrency)
    if row is None:
        return 1
    print(json.dumps(row, ensure_ascii=False))
    return 0


def _section(lines, heading):
    """The lines after `heading` up to the next blank line."""
    try:
        start = next(i for i, l in enumerate(lines) if heading in l) + 1
    except StopIteration:
        return []
    out = []
    for l in lines[start:]:
        if not l.strip():
            break
        out.append(l.strip())
    return out


def _num(v):
    """A number of server_load's line; null counts as 0, as awk read it."""
    return 0.0 if v is None else v


def _int(text):
    try:
        return int(text)
    except ValueError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
