#!/usr/bin/env python3
"""The report bench/load_bench.sh prints: roost-load's builds as a table
(wall seconds, keys/s, CPU, peak RSS, output size, check), the notes, the
cross-checks of tables that must be identical, and the issue's targets.

Usage: bench/load_bench_report.py DIR --keys N --load-at-start "L1 L5 L15"

DIR is load_bench.sh's directory, where each run left:
  runs         one line per run: NAME START END OUTPUT_BYTES CHECK...
               (START and END: $EPOCHREALTIME around it; CHECK: "ok" or
               what failed)
  NAME.time    /usr/bin/time -v's report of the run
  NAME.sst     its table (the cross-checks compare them)
  sst-writer.out  sst_writer_bench's line (key=value ...): its own timing
               of the writer alone, which replaces the wall time
Exits 1, after the report, when a table failed its checks or two tables
that must be identical are not.
"""

import argparse
import filecmp
import re
import sys
from pathlib import Path

import machine
from report_values import div as _div
from report_values import first_float as _first_float
from report_values import read_text as _read

# Each run's description, in the table.
RUNS = {
    "cuckoo-bin": "cuckoo, binary input",
    "cuckoo-tsv": "cuckoo, hex TSV input",
    "block-bin": "block, binary input",
    "block-tsv": "block, hex TSV input",
    "block-bin-256M": "block, binary, --memory-limit 256M",
    "sst-writer": "RocksDB SstFileWriter, pre-sorted *",
}
SST_WRITER = "sst-writer"
# The same pairs give the same table whatever the input form (or the
# sort's memory): a cross-check of the TSV parser and of the external sort.
SAME = [("cuckoo-tsv", "cuckoo-bin"), ("block-tsv", "block-bin"),
        ("block-bin-256M", "block-bin")]
MIB = 1048576
TARGET_KEYS = 10000000


def time_v(text):
    """User and system seconds and peak RSS (KiB) of a `time -v` report."""
    def field(name):
        m = re.search(rf"^\s*{re.escape(name)}: (.*)$", text, re.M)
        return float(m.group(1)) if m else 0.0
    return (field("User time (seconds)"), field("System time (seconds)"),
            field("Maximum resident set size (kbytes)"))


def key_value(line, name):
    """NAME's number in sst_writer_bench's `a=1 b=2` line, or None."""
    m = re.search(rf".*\b{name}=([0-9.]*)", line)
    return float(m.group(1)) if m and m.group(1) else None


def read_runs(d):
    """The runs, in order: dicts of name, wall, user, sys, rss_kib, size,
    check."""
    runs = []
    sst_line = _read(d / f"{SST_WRITER}.out").strip()
    for line in (d / "runs").read_text().splitlines():
        name, start, end, size, check = line.split(" ", 4)
        user, sys_s, rss = time_v(_read(d / f"{name}.time"))
        wall = float(end) - float(start)
        if name == SST_WRITER:
            # The program checked its own file; its timing covers only the
            # writer.
            wall = key_value(sst_line, "seconds") or 0.0
        runs.append({"name": name, "wall": wall, "user": user, "sys": sys_s,
                     "rss_kib": rss, "size": int(size), "check": check})
    return runs, sst_line


def table(runs, keys):
    out = ["| %-36s | %8s | %10s | %8s | %5s | %9s | %9s | %8s | %s |" % (
               "run", "wall s", "keys/s", "CPU s", "CPU%", "peak RSS", "output",
               "RSS/out", "check"),
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in runs:
        cpu, rss, wall = r["user"] + r["sys"], r["rss_kib"] * 1024, r["wall"]
        writer = r["name"] == SST_WRITER
        out.append("| %-36s | %8.2f | %9.2fM | %8s | %5s | %5.0f MiB | %5.0f MiB | %8.2f | %s |" % (
            RUNS.get(r["name"], r["name"]), wall, _div(keys, wall) / 1e6,
            "" if writer else "%.2f" % cpu,
            "" if writer else "%.0f%%" % (100 * _div(cpu, wall)),
            rss / MIB, r["size"] / MIB, _div(rss, r["size"]), r["check"]))
    return out


def cross_checks(d):
    """"a vs b: identical" (or DIFFERENT) for each pair of SAME."""
    def same(a, b):
        try:
            return filecmp.cmp(d / f"{a}.sst", d / f"{b}.sst", shallow=False)
        except OSError:
            return False
    return [f"{a} vs {b}: {'identical' if same(a, b) else 'DIFFERENT'}"
            for a, b in SAME]


def notes(keys, sst_line, cross, load_at_start):
    before = key_value(sst_line, "rss_before_open_kib")
    out = ["* SstFileWriter: wall s is the writer alone (Open, Put x N, Finish), the",
           "  pairs read and sorted beforehand; its peak RSS is the whole process's,",
           "  including the %.0f MiB of pairs it holds (RSS before Open:" % (keys * 16 / MIB),
           "  %s MiB). Output: %s" % ("" if before is None else "%.0f" % (before / 1024),
                                      sst_line),
           "cross-checks: " + "; ".join(cross)]
    if keys != TARGET_KEYS:
        out.append("(the targets below are set for 10,000,000 keys; at other sizes "
                   "fixed costs shift them)")
    if _first_float(load_at_start) >= 1.5:
        out.append(f"(load average {load_at_start} at the start: another job may have "
                   f"competed for the cores)")
    return out


def targets(runs, keys):
    """The issue's targets, each met or not."""
    by = {r["name"]: r for r in runs}
    wall = lambda n: by[n]["wall"] if n in by else 0.0
    rss = lambda n: by[n]["rss_kib"] * 1024 if n in by else 0.0
    size = lambda n: by[n]["size"] if n in by else 0
    verdict = lambda ok: "met" if ok else "NOT met"
    out = []
    r = _div(keys, wall("cuckoo-bin"))
    out.append("target: cuckoo from binary input >= 2M keys/s end to end: "
               "%.2fM keys/s, %s" % (r / 1e6, verdict(r >= 2e6)))
    r = _div(keys, wall("block-bin"))
    out.append("target: block from unsorted binary input >= 1M keys/s incl. the "
               "sort: %.2fM keys/s, %s" % (r / 1e6, verdict(r >= 1e6)))
    for name, limit in (("block-bin", 1024), ("block-tsv", 1024), ("block-bin-256M", 256)):
        out.append("target: %s peak RSS <= --memory-limit %d MiB + 64 MiB: %.0f MiB, %s" % (
            name, limit, rss(name) / MIB, verdict(rss(name) <= (limit + 64) * MIB)))
    for name in ("cuckoo-bin", "cuckoo-tsv"):
        out.append("target: %s peak RSS <= 1.5x table size (%.0f MiB): %.0f MiB = %.2fx, %s" % (
            name, 1.5 * size(name) / MIB, rss(name) / MIB, _div(rss(name), size(name)),
            verdict(rss(name) <= 1.5 * size(name))))
    out.append("reference: SstFileWriter (pre-sorted, writer only) %.2f s; roost-load "
               "block from unsorted binary %.2f s (%.2fx), cuckoo from binary %.2f s "
               "(%.2fx)" % (wall(SST_WRITER), wall("block-bin"),
                            _div(wall("block-bin"), wall(SST_WRITER)),
                            wall("cuckoo-bin"), _div(wall("cuckoo-bin"), wall(SST_WRITER))))
    return out


def report(d, keys, load_at_start):
    """The report's lines, and whether every check passed."""
    runs, sst_line = read_runs(d)
    cross = cross_checks(d)
    lines = ["",
             f"roost-load build, {keys} keys (8-byte keys, 8-byte values, unsorted "
             f"input), {machine.utc_now()}",
             f"machine: {machine.summary()}; load average at start: {load_at_start}, "
             f"at end: {machine.load_average()}",
             ""]
    lines += table(runs, keys) + [""]
    lines += notes(keys, sst_line, cross, load_at_start) + [""]
    lines += targets(runs, keys)
    ok = all(r["check"] == "ok" for r in runs) and not any("DIFFERENT" in c for c in cross)
    return lines, ok


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Print bench/load_bench.sh's report from its directory.")
    ap.add_argument("dir", type=Path, metavar="DIR")
    ap.add_argument("--keys", type=int, required=True, help="keys built")
    ap.add_argument("--load-at-start", default="?",
                    help="the load averages when the runs began")
    a = ap.parse_args(argv)
    lines, ok = report(a.dir, a.keys, a.load_at_start)
    print("\n".join(lines))
    if not ok:
        print("load_bench: some output failed its checks (see above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
