#!/usr/bin/env python3
"""Turn a results directory of bench/run.sh into docs/benchmarks.md and plots.

Usage:
  bench/report.py RESULTS_DIR --out docs/benchmarks.md [--img-dir docs/img]
  bench/report.py RESULTS_DIR --check

The first form writes the Markdown report and its PNG plots (drawn by gnuplot,
`pngcairo`); gnuplot's data files and scripts go to a temporary directory.
The second checks RESULTS_DIR for completeness (every required system, batch
and file present, no lookup or RPC errors) and exits 1 listing every problem,
or prints a one-line summary and exits 0.

Input, all written by bench/run.sh (*.jsonl: one JSON object per line):
  machine.json   date_utc, command, mode, nproc, mem_total_gib, cpu_model,
                 kernel, git_rev, versions{}, thp, lookup_keys, elapsed_s
  lookup.jsonl   in-process lookups: dataset, keys, system, config, op, batch,
                 probe, lookups, ops_per_s, ns_per_lookup, table_bytes,
                 bytes_per_key, build_s, checked, errors, and round (1, 2,
                 ...) when run in rounds: such rows are collapsed to their
                 medians (report_common.collapse_rounds)
                 (or dataset, keys, system, config, skipped: reason)
  network.jsonl  loopback load: system, table_keys, method, batch, qps,
                 keys_per_s, p50_us .. max_us, errors, rpc_errors, bad_values,
                 server_cpu_us_per_key
  openloop.jsonl open-loop load (--rate) at a share of each system's maximum:
                 system, table_keys, load_pct, max_qps, rate, offered_qps,
                 qps (achieved), p50_us .. max_us, dropped, sustained, and
                 the fields of network.jsonl
  memory.jsonl   system, keys, bytes, bytes_per_key, what
  build.jsonl    system, keys, seconds, keys_per_s, peak_rss_bytes,
                 output_bytes, note
  cluster.jsonl  bench/cluster_bench.sh: section (routing, shards, python,
                 publish), system, shards and its load line's fields
  cluster.json   optional: the command, date and revision of a
                 cluster_bench.sh run made apart from run.sh
Every number in the report comes from these files; a missing file becomes
"not measured in this run". A malformed line is an error naming file and line.
Optional text under each section heading: bench/report_notes/<section>.md.

The work is split by section: report_lookup.py, report_scaling.py,
report_network.py (and report_openloop.py, its open-loop part),
report_memory.py, report_build.py and report_cluster.py each add one
section to the document of report_doc.py; report_check.py is --check;
report_common.py and report_plot.py are what they share.
"""

import argparse, sys, tempfile
from pathlib import Path

import report_build, report_cluster, report_lookup, report_memory, report_network
import report_openloop, report_scaling
from report_check import check
from report_common import ReportError, fkeys, load_results
from report_doc import Report

# The sections, in the order the report has them.
SECTIONS = [report_lookup.section, report_scaling.section, report_network.section,
            report_openloop.section, report_memory.section, report_build.section,
            report_cluster.section]


def main():
    ap = argparse.ArgumentParser(
        description="Write docs/benchmarks.md and its plots from a bench/run.sh "
                    "results directory, or check that directory.",
        epilog="Input files: machine.json, lookup.jsonl, network.jsonl, openloop.jsonl, "
               "memory.jsonl, build.jsonl, cluster.jsonl (see the docstring at the top "
               "of this script).")
    ap.add_argument("results_dir", metavar="RESULTS_DIR")
    ap.add_argument("--out", type=Path, help="the Markdown file to write")
    ap.add_argument("--img-dir", type=Path,
                    help="where the PNGs go (default: img/ beside --out)")
    ap.add_argument("--check", action="store_true",
                    help="check RESULTS_DIR for completeness and errors; exit 1 if not")
    a = ap.parse_args()
    if not a.check and not a.out:
        ap.error("give --out FILE or --check")
    try:
        res = load_results(a.results_dir)
        if a.check:
            problems = check(res)
            for p in problems:
                print(f"report.py --check: {p}", file=sys.stderr)
            if problems:
                print(f"report.py --check: {a.results_dir}: {len(problems)} problem(s)",
                      file=sys.stderr)
                return 1
            lk = res["lookup"]
            print(f"OK: {a.results_dir}: {len(lk)} lookup rows "
                  f"({len({r['dataset'] for r in lk})} datasets, sizes "
                  f"{'/'.join(fkeys(n) for n in sorted({r['keys'] for r in lk}))}), "
                  f"{len(res['network'])} network, {len(res['openloop'] or [])} open-loop, "
                  f"{len(res['memory'])} memory, "
                  f"{len(res['build'])} build rows; no errors")
            return 0
        img = a.img_dir or a.out.parent / "img"
        img.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="roost-report-") as tmp:
            Report(res, a.out, img, Path(tmp), SECTIONS).write()
        print(f"wrote {a.out} and plots in {img}")
        return 0
    except ReportError as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
