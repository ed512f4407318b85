#!/usr/bin/env python3
"""The rows bench/run.sh and bench/cluster_bench.sh add to a results
directory (bench/report.py reads them), each printed as one JSON line on
stdout for the script to append where it goes.

Usage (every number as the scripts measured it; files as they left them):
  result_rows.py labelled [--str NAME=TEXT]... [--num NAME=NUMBER]... < LINE
      a load generator's JSON line (server_load, redis_load, cluster_load,
      python_client_bench.py) with the fields given put first, in order
  result_rows.py build-row --system NAME --keys N --start T0 --end T1
      --max-rss-file FILE --output FILE --note TEXT
      a timed build: T0 and T1 are $EPOCHREALTIME around it, FILE the
      KiB `/usr/bin/time -f %M` wrote (its last line), --output the table
  result_rows.py sst-writer-row FILE
      RocksDB's SstFileWriter row from sst_writer_bench's line (key=value)
  result_rows.py redis-fill-row --keys N --fill LINE --pid PID
      --info-before FILE --info-after FILE
      loading Redis: redis_load fill's JSON line, the server's peak RSS
      (/proc/PID/status), and the memory it grew by (`INFO memory` before
      and after, used_memory)
  result_rows.py memory-rows --keys N --table FILE --info-before FILE
      --info-after FILE
      bytes per key: roost's mapped table file, then Redis's used_memory
  result_rows.py open-loop-rate NETWORK_JSONL SYSTEM PERCENT
      "MAX RATE": SYSTEM's Get throughput at batch 1 (the last such row)
      and PERCENT of it, the open loop's rate; exits 1 when there is none
  result_rows.py machine --command TEXT --mode MODE --git-rev REV
      --baseline-rev REV --lookup-keys N --network-keys N --started T0
      run.sh's machine.json (one line): this machine, the packages' versions
      (dpkg-query) and the run
  result_rows.py cluster-meta --command TEXT --git-rev REV
      cluster_bench.sh's cluster.json
  result_rows.py layout PORT...
      a cluster layout (client/README.md) of one loopback replica per shard
  result_rows.py publish-row --keys N FILE
      the publish section's row from cluster_bench.sh's observations, one
      a line: "download T0 T1 BYTES" (a plain download of the version's
      file) or "serving SUM0 SUM1" (roost_repository_pointer_to_serving_
      seconds_sum before and after a pointer's move); medians of each

A malformed input is an error naming it, exit 2.
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import machine

# The Debian packages whose versions machine.json gives.
PACKAGES = {"rocksdb": "librocksdb-dev", "redis": "redis-server",
            "tinycdb": "libcdb-dev", "gnuplot": "gnuplot-nox"}
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


class RowError(Exception):
    pass


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def labelled(line, fields):
    """`line` (a JSON object) with `fields` (name, value) put first."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise RowError(f"not a JSON line ({e.msg}): {line.strip()[:200]!r}")
    if not isinstance(obj, dict):
        raise RowError(f"not a JSON object: {line.strip()[:200]!r}")
    out = dict(fields)
    out.update((k, v) for k, v in obj.items() if k not in out)
    return out


def build_row(system, keys, start, end, max_rss_kib, output_bytes, note):
    seconds = end - start
    return {"system": system, "keys": keys, "seconds": round(seconds, 3),
            "keys_per_s": round(keys / seconds, 1) if seconds > 0 else 0,
            "peak_rss_bytes": int(max_rss_kib) * 1024, "output_bytes": output_bytes,
            "note": note}


def key_values(line):
    """sst_writer_bench's `keys=1 seconds=0.5 ...` as numbers."""
    return {k: float(v) if "." in v else int(v)
            for k, v in re.findall(r"\b(\w+)=([0-9.]+)", line)}


def sst_writer_row(line):
    kv = key_values(line)
    missing = [k for k in ("keys", "seconds", "keys_per_second", "vm_hwm_kib",
                           "file_size") if k not in kv]
    if missing:
        raise RowError(f"sst_writer_bench's line lacks {', '.join(missing)}: "
                       f"{line.strip()!r}")
    return {"system": "RocksDB SstFileWriter", "keys": kv["keys"],
            "seconds": kv["seconds"], "keys_per_s": kv["keys_per_second"],
            "peak_rss_bytes": kv["vm_hwm_kib"] * 1024, "output_bytes": kv["file_size"],
            "note": "writer alone: pairs read and sorted in memory before the clock; "
                    "RSS includes them"}


def used_memory(info):
    """used_memory of a Redis `INFO memory` reply."""
    m = re.search(r"^used_memory:(\d+)\r?$", info, re.M)
    if not m:
        raise RowError("no used_memory in Redis's INFO memory")
    return int(m.group(1))


def vm_hwm(status):
    """The peak resident set of a /proc/PID/status, in bytes."""
    m = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.M)
    if not m:
        raise RowError("no VmHWM in the process's status")
    return int(m.group(1)) * 1024


def redis_fill_row(keys, fill, status, before, after):
    obj = labelled(fill, [])
    return {"system": "Redis (MSET, pipelined)", "keys": keys,
            "seconds": obj.get("seconds"), "keys_per_s": obj.get("keys_per_s"),
            "peak_rss_bytes": vm_hwm(status),
            "output_bytes": used_memory(after) - used_memory(before),
            "note": "redis-server peak RSS; MSET of 1000 pairs, 8 in flight, "
                    "one connection"}


def memory_rows(keys, table_bytes, before, after):
    grown = used_memory(after) - used_memory(before)
    return [{"system": "roost", "keys": keys, "bytes": table_bytes,
             "bytes_per_key": round(table_bytes / keys, 2), "what": "mapped table file"},
            {"system": "Redis", "keys": keys, "bytes": grown,
             "bytes_per_key": round(grown / keys, 2),
             "what": "used_memory after load, minus before"}]


def open_loop_rate(network_lines, system, percent):
    """(max, rate) for SYSTEM at PERCENT of its batch-1 maximum, or None."""
    top = None
    for line in network_lines:
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("system") == system and row.get("batch") == 1 and "qps" in row:
            top = row["qps"]
    if top is None:
        return None
    return top, "%.1f" % (top * percent / 100)


def package_version(name):
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name],
                           capture_output=True, text=True)
    except OSError:
        return "unknown"
    return r.stdout if r.returncode == 0 and r.stdout else "unknown"


def machine_row(a, now=None):
    mem = machine.mem_total_gib()
    try:
        thp = THP.read_text().strip()
    except OSError:
        thp = "unknown"
    return {"date_utc": machine.utc_now(), "command": a.command, "mode": a.mode,
            "nproc": machine.nproc(), "mem_total_gib": None if mem is None else round(mem, 1),
            "cpu_model": machine.cpu_model(), "kernel": _uname_r(),
            "git_rev": a.git_rev, "baseline_rev": a.baseline_rev,
            "versions": {k: package_version(p) for k, p in PACKAGES.items()},
            "thp": thp, "lookup_keys": a.lookup_keys, "network_keys": a.network_keys,
            "build_keys": a.network_keys, "load_average": machine.load_average(),
            "placement": a.placement,
            "elapsed_s": round((now or time.time()) - a.started, 1)}


def layout(ports):
    return {"shards": [[f"127.0.0.1:{p}"] for p in ports]}


def publish_row(keys, lines):
    downloads, servings, size = [], [], None
    for n, line in enumerate(lines, 1):
        f = line.split()
        if not f:
            continue
        try:
            if f[0] == "download" and len(f) == 4:
                downloads.append(float(f[2]) - float(f[1]))
                size = int(f[3])
                continue
            if f[0] == "serving" and len(f) == 3:
                servings.append(float(f[2]) - float(f[1]))
                continue
        except ValueError:
            pass
        raise RowError(f"line {n}: not \"download T0 T1 BYTES\" nor "
                       f"\"serving SUM0 SUM1\": {line.strip()!r}")
    if not downloads or not servings:
        raise RowError("no download or no serving observed")
    return {"section": "publish", "system": "roost-server --repository", "shards": 1,
            "table_keys": keys, "bytes": size,
            "download_s": statistics.median(downloads),
            "serving_s": statistics.median(servings),
            "download_runs": downloads, "serving_runs": servings}


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="The JSON rows bench/run.sh and bench/cluster_bench.sh append "
                    "to a results directory (see the docstring).")
    sub = ap.add_subparsers(dest="command_name", required=True)
    p = sub.add_parser("labelled")
    p.add_argument("--str", action="append", default=[], metavar="NAME=TEXT")
    p.add_argument("--num", action="append", default=[], metavar="NAME=NUMBER")
    p = sub.add_parser("build-row")
    p.add_argument("--system", required=True)
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("--start", type=float, required=True)
    p.add_argument("--end", type=float, required=True)
    p.add_argument("--max-rss-file", type=Path, required=True)
    p.add_argument("--output", type=Path, required=True)
    p.add_argument("--note", default="")
    p = sub.add_parser("sst-writer-row")
    p.add_argument("file", type=Path)
    p = sub.add_parser("redis-fill-row")
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("--fill", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--info-before", type=Path, required=True)
    p.add_argument("--info-after", type=Path, required=True)
    p = sub.add_parser("memory-rows")
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("--table", type=Path, required=True)
    p.add_argument("--info-before", type=Path, required=True)
    p.add_argument("--info-after", type=Path, required=True)
    p = sub.add_parser("open-loop-rate")
    p.add_argument("network", type=Path)
    p.add_argument("system")
    p.add_argument("percent", type=float)
    p = sub.add_parser("machine")
    p.add_argument("--command", required=True)
    p.add_argument("--mode", required=True)
    p.add_argument("--git-rev", required=True)
    p.add_argument("--baseline-rev", default="")
    p.add_argument("--lookup-keys", type=int, required=True)
    p.add_argument("--network-keys", type=int, required=True)
    p.add_argument("--started", type=float, required=True)
    p.add_argument("--placement", default="not recorded",
                   help="where the network rows' servers and load generators ran")
    p = sub.add_parser("cluster-meta")
    p.add_argument("--command", required=True)
    p.add_argument("--git-rev", required=True)
    p = sub.add_parser("layout")
    p.add_argument("ports", nargs="+", type=int)
    p = sub.add_parser("publish-row")
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("file", type=Path)
    a = ap.parse_args(argv)
    try:
        rows = rows_of(a)
    except (RowError, OSError, ValueError) as e:
        print(f"result_rows.py {a.command_name}: {e}", file=sys.stderr)
        return 2
    if rows is None:
        return 1
    for row in rows:
        print(row if isinstance(row, str) else dumps(row))
    return 0


def rows_of(a):
    """The lines `a` asks for (dicts, or text); None: nothing to print."""
    c = a.command_name
    if c == "labelled":
        fields = [_field(f, str) for f in a.str] + [_field(f, _number) for f in a.num]
        return [labelled(sys.stdin.read(), fields)]
    if c == "build-row":
        rss = a.max_rss_file.read_text().strip().splitlines()[-1]
        return [build_row(a.system, a.keys, a.start, a.end, int(rss),
                          a.output.stat().st_size, a.note)]
    if c == "sst-writer-row":
        return [sst_writer_row(a.file.read_text())]
    if c == "redis-fill-row":
        return [redis_fill_row(a.keys, a.fill, Path(f"/proc/{a.pid}/status").read_text(),
                               a.info_before.read_text(), a.info_after.read_text())]
    if c == "memory-rows":
        return memory_rows(a.keys, a.table.stat().st_size, a.info_before.read_text(),
                           a.info_after.read_text())
    if c == "open-loop-rate":
        lines = a.network.read_text().splitlines() if a.network.exists() else []
        found = open_loop_rate(lines, a.system, a.percent)
        return None if found is None else [f"{found[0]} {found[1]}"]
    if c == "machine":
        return [machine_row(a)]
    if c == "cluster-meta":
        return [{"command": a.command, "date_utc": machine.utc_now(),
                 "git_rev": a.git_rev, "load_average": machine.load_average()}]
    if c == "layout":
        return [json.dumps(layout(a.ports))]
    if c == "publish-row":
        return [publish_row(a.keys, a.file.read_text().splitlines())]
    raise RowError(f"unknown command {c}")


def _field(text, kind):
    name, eq, value = text.partition("=")
    if not eq or not name:
        raise RowError(f"{text!r} is not NAME=VALUE")
    return name, kind(value)


def _number(text):
    try:
        v = json.loads(text)
    except json.JSONDecodeError:
        v = None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise RowError(f"{text!r} is not a number")
    return v


def _uname_r():
    return os.uname().release


if __name__ == "__main__":
    sys.exit(main())
