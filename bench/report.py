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
                 bytes_per_key, build_s, checked, errors
                 (or dataset, keys, system, config, skipped: reason)
  network.jsonl  loopback load: system, table_keys, method, batch, qps,
                 keys_per_s, p50_us .. max_us, errors, rpc_errors, bad_values,
                 server_cpu_us_per_key
  memory.jsonl   system, keys, bytes, bytes_per_key, what
  build.jsonl    system, keys, seconds, keys_per_s, peak_rss_bytes,
                 output_bytes, note
Every number in the report comes from these files; a missing file becomes
"not measured in this run". A malformed line is an error naming file and line.
Optional text under each section heading: bench/report_notes/<section>.md.
"""

import argparse, json, os, subprocess, sys, tempfile
from pathlib import Path

# What --check requires.
REQUIRED_LOOKUP_SYSTEMS = ["roost cuckoo", "roost block", "RocksDB CuckooTable",
                           "RocksDB PlainTable", "RocksDB block-based", "tinycdb"]
CEILING = "ceiling"
REQUIRED_CEILING_CONFIGS = ["independent 64-byte reads", "dependent 64-byte reads"]
# (dataset, system) pairs that may be skipped instead: RocksDB's CuckooTable
# takes only fixed-size keys and values.
ALLOWED_SKIPS = {("variable", "RocksDB CuckooTable")}
REQUIRED_NETWORK_SYSTEMS = ["roost", "Redis"]
REQUIRED_NETWORK_BATCHES = [1, 10, 100, 1000]
REQUIRED_MEMORY_SYSTEMS = ["roost", "Redis"]
REQUIRED_BUILD_SYSTEMS = ["roost-load cuckoo", "roost-load block",
                          "RocksDB SstFileWriter", "Redis (MSET, pipelined)"]
# The rows every ratio is taken against.
REF_SYSTEM, REF_CONFIG = "roost cuckoo", "mmap"
NET_REF, MEM_REF, BUILD_REF = "roost", "roost", "roost-load cuckoo"
# roost's block table is also set beside its own kind.
BLOCK_REF, BLOCK_PEER = ("roost block", "auto, hash index"), "RocksDB block-based"
NOTES_DIR = Path(__file__).resolve().parent / "report_notes"

N, S = "num", "str"          # field types; a trailing "?" allows null
FIELDS = {
    "lookup.jsonl": {"dataset": S, "keys": N, "system": S, "config": S, "op": S,
                     "batch": N, "probe": S, "ops_per_s": N, "ns_per_lookup": N},
    "lookup.jsonl skipped": {"dataset": S, "keys": N, "system": S, "config": S,
                             "skipped": S},
    "network.jsonl": {"system": S, "method": S, "batch": N, "qps": N,
                      "keys_per_s": N, "p50_us": N, "p99_us": N,
                      "server_cpu_us_per_key": N + "?"},
    "network.jsonl skipped": {"system": S, "batch": N, "skipped": S},
    "memory.jsonl": {"system": S, "keys": N, "bytes": N, "bytes_per_key": N},
    "build.jsonl": {"system": S, "keys": N, "seconds": N, "keys_per_s": N,
                    "peak_rss_bytes": N, "output_bytes": N + "?"},
}


class ReportError(Exception):
    pass


# ---------------------------------------------------------------- input

def check_fields(obj, spec, where):
    for name, kind in spec.items():
        if name not in obj:
            raise ReportError(f"{where}: missing field {name!r}")
        v = obj[name]
        if v is None and kind.endswith("?"):
            continue
        ok = (isinstance(v, str) if kind.startswith(S) else
              isinstance(v, (int, float)) and not isinstance(v, bool))
        if not ok:
            raise ReportError(f"{where}: field {name!r} should be a "
                              f"{'string' if kind.startswith(S) else 'number'}, "
                              f"not {v!r}")


def load_jsonl(path):
    rows = []
    if not path.exists():
        return None
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ReportError(f"{where}: not JSON ({e.msg})")
        if not isinstance(obj, dict):
            raise ReportError(f"{where}: not a JSON object")
        spec = (FIELDS.get(f"{path.name} skipped", {"system": S, "skipped": S})
                if "skipped" in obj else FIELDS[path.name])
        check_fields(obj, spec, where)
        obj["_where"] = where
        rows.append(obj)
    return rows


def load_results(d):
    d = Path(d)
    if not d.is_dir():
        raise ReportError(f"{d}: not a directory")
    r = {"dir": d, "machine": None}
    m = d / "machine.json"
    if m.exists():
        try:
            r["machine"] = json.loads(m.read_text())
        except json.JSONDecodeError as e:
            raise ReportError(f"{m}:{e.lineno}: not JSON ({e.msg})")
        if not isinstance(r["machine"], dict):
            raise ReportError(f"{m}:1: not a JSON object")
    for name in ("lookup", "network", "memory", "build"):
        r[name] = load_jsonl(d / f"{name}.jsonl")
    # A skipped row without a config belongs to the system's one config, if
    # it has one, so that it fills that row's cell.
    configs = {}
    for x in r["lookup"] or []:
        if "skipped" not in x:
            configs.setdefault(x["system"], set()).add(x["config"])
    for x in r["lookup"] or []:
        if "skipped" in x and not x["config"] and len(configs.get(x["system"], ())) == 1:
            x["config"] = next(iter(configs[x["system"]]))
    return r


# ---------------------------------------------------------------- formatting

def fsig(v):
    """About three significant digits: 112, 11.4, 2.03, 0.512."""
    if v is None:
        return "—"
    a = abs(v)
    return (f"{v:,.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else
            f"{v:.2f}" if a >= 1 else f"{v:.3f}")


def fmops(v): return "—" if v is None else fsig(v / 1e6)
def fns(v): return "—" if v is None else f"{v:,.1f}"
def fratio(a, b): return "—" if a is None or not b else f"{a / b:.2f}×"
def fint(v): return "—" if v is None else f"{v:,.0f}"
def fmib(v): return "—" if v is None else f"{v / 2**20:,.1f}"
def fus(v): return "—" if v is None else f"{v:,.1f}" if v < 100 else f"{v:,.0f}"


def fkeys(n):
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:g}{unit}"
    return str(n)


def table(headers, rows, right=()):
    """A Markdown table; columns whose index is in `right` align right."""
    out = ["| " + " | ".join(headers) + " |",
           "| " + " | ".join("---:" if i in right else "---"
                             for i in range(len(headers))) + " |"]
    for row in rows:
        cells = [str(c).replace("|", "\\|") for c in row]
        out.append("| " + " | ".join(cells + [""] * (len(headers) - len(cells))) + " |")
    return "\n".join(out)


def versus(peer, ref, what, a, b, fmt, higher_better=True, leads=True):
    """A summary sentence: the peer's value a against roost's b, or None."""
    if (a > b if higher_better else a < b):
        return f"**{peer} beats {ref} on {what}**: {fmt(a)} vs {fmt(b)} ({fratio(a, b)})."
    if leads:
        return f"{ref} leads {peer} on {what}: {fmt(b)} vs {fmt(a)} ({fratio(b, a)} the peer's)."


def is_roost(system): return system.lower().startswith("roost")
def is_peer(system): return not is_roost(system) and system != CEILING
def label(row): return f"{row['system']} ({row['config']})"


def plural(probe): return {"hit": "hits", "miss": "misses"}.get(probe, probe)


def op_label(row):
    return row["op"] if row.get("batch", 1) == 1 else f"{row['op']}×{row['batch']}"


def order(rows, key):
    """Stable order: roost systems first, the ceiling last, else file order."""
    first = {}
    for i, r in enumerate(rows):
        first.setdefault(r["system"], i)
        first.setdefault(key(r), i)
    rank = lambda s: 0 if is_roost(s) else 2 if s == CEILING else 1
    return sorted(rows, key=lambda r: (rank(r["system"]), first[r["system"]],
                                       first[key(r)]))


# ---------------------------------------------------------------- lookups

def ref_row(rows, r):
    """The roost cuckoo mmap row a lookup row is compared with."""
    op, batch, probe = ((r["op"], r["batch"], r["probe"])
                        if r["system"] != CEILING else ("get", 1, "hit"))
    for x in rows:
        if (x["system"], x["config"]) == (REF_SYSTEM, REF_CONFIG) and \
                "skipped" not in x and (x["dataset"], x["keys"], x["op"],
                x["batch"], x["probe"]) == (r["dataset"], r["keys"], op, batch, probe):
            return x
    return None


def main_keys(res):
    """machine.json's lookup_keys, else the table size with the most rows."""
    m, rows = res["machine"] or {}, res["lookup"] or []
    if "lookup_keys" in m:
        return m["lookup_keys"]
    sizes = [r["keys"] for r in rows]
    return max(sizes, key=lambda n: (sizes.count(n), n), default=0)


def lookup_table(rows, dataset, keys):
    sel = [r for r in rows if r["dataset"] == dataset and r["keys"] == keys]
    groups = {}
    for r in order(sel, lambda r: (r["system"], r["config"])):
        k = (r["system"], r["config"]) + \
            ((None,) if "skipped" in r else (r["op"], r["batch"]))
        groups.setdefault(k, {})["skip" if "skipped" in r else
                                 "miss" if r["probe"] == "miss" else "hit"] = r
    out = []
    for (system, config, *_), g in groups.items():
        if "skip" in g:
            out.append([system, config, "", f"not run: {g['skip']['skipped']}"])
            continue
        any_row = g.get("hit") or g.get("miss")
        cells = [system, config, op_label(any_row)]
        for probe in ("hit", "miss"):
            r = g.get(probe)
            ref = r and ref_row(rows, r)
            cells += ([fmops(r["ops_per_s"]), fns(r["ns_per_lookup"]),
                       fratio(r["ops_per_s"], ref and ref["ops_per_s"])]
                      if r else ["—"] * 3)
        # The ceiling's array is no table: nothing is built.
        build_s = None if system == CEILING else any_row.get("build_s")
        cells += [fsig(any_row.get("bytes_per_key")), fsig(build_s)]
        out.append(cells)
    return table(["system", "config", "op", "hits: M lookups/s", "hits: ns/lookup",
                  "hits: ratio to roost", "misses: M lookups/s", "misses: ns/lookup",
                  "misses: ratio to roost", "bytes/key", "build s"],
                 out, right=range(3, 11))


def lookup_summary(rows, dataset, keys, get_only=False):
    """Sentences: where roost leads its best peer, and every peer row that wins.
    get_only (for the scaling sizes): only get, no ceiling or size sentences."""
    out, where = [], f"{dataset}, {fkeys(keys)} keys"
    sel = [r for r in rows if r["dataset"] == dataset and r["keys"] == keys
           and "skipped" not in r]
    refs = [r for r in sel if (r["system"], r["config"]) == (REF_SYSTEM, REF_CONFIG)
            and (r["op"] == "get" or not get_only)]
    mops = lambda v: f"{fmops(v)} M lookups/s"
    for ref in refs:
        what, b = f"{op_label(ref)} {plural(ref['probe'])} ({where})", ref["ops_per_s"]
        peers = [r for r in sel if is_peer(r["system"]) and ref_row(rows, r) is ref]
        out += [versus(label(p), "roost", what, p["ops_per_s"], b, mops, leads=False)
                for p in peers if p["ops_per_s"] > b]
        best = max(peers, key=lambda p: p["ops_per_s"], default=None)
        if best and best["ops_per_s"] <= b:
            out.append(versus(f"the fastest peer, {label(best)},", "roost", what,
                              best["ops_per_s"], b, mops))
        if (ref["op"], ref["probe"]) == ("get", "hit") and not get_only:
            out += [f"roost's get hits ({where}) run at {fratio(b, c['ops_per_s'])} the "
                    f"ceiling of {c['config']} ({mops(c['ops_per_s'])})."
                    for c in sel if c["system"] == CEILING and "huge" not in c["config"]]
    if not get_only:
        out += block_summary(sel, where)
    sizes = {label(p): p["bytes_per_key"] for p in sel
             if is_peer(p["system"]) and p.get("bytes_per_key") is not None}
    refs = [r for r in refs if r.get("bytes_per_key") is not None]
    if refs and not get_only:
        out += [versus(p, "roost", f"size ({where})", a, refs[0]["bytes_per_key"],
                       lambda v: f"{fsig(v)} bytes/key", False, False)
                for p, a in sizes.items() if a < refs[0]["bytes_per_key"]]
    return out


def block_summary(sel, where):
    """Sentences on roost's block table (its default configuration) beside
    RocksDB's block-based table, its own kind, and every peer that is faster
    than it."""
    out, mops = [], lambda v: f"{fmops(v)} M lookups/s"
    refs = [r for r in sel if (r["system"], r["config"]) == BLOCK_REF]
    for ref in refs:
        what = f"{op_label(ref)} {plural(ref['probe'])} ({where})"
        same = lambda p: (p["op"], p["batch"], p["probe"]) == \
            (ref["op"], ref["batch"], ref["probe"])
        kin = [p for p in sel if p["system"] == BLOCK_PEER and same(p)]
        best = max(kin, key=lambda p: p["ops_per_s"], default=None)
        if best:
            out.append(versus(label(best), "roost's block table", what,
                              best["ops_per_s"], ref["ops_per_s"], mops))
        faster = [p for p in sel if is_peer(p["system"]) and p["system"] != BLOCK_PEER
                  and same(p) and p["ops_per_s"] > ref["ops_per_s"]]
        if faster:
            names = ", ".join(f"{label(p)} {mops(p['ops_per_s'])}" for p in faster)
            out.append(f"**Faster than roost's block table on {what}** "
                       f"({mops(ref['ops_per_s'])}), though unsorted: {names}.")
    return out


def scaling_table(rows, probe):
    sel = [r for r in rows if r["dataset"] == "uniform" and
           (r.get("op") == "get" or r["system"] == CEILING or "skipped" in r)]
    sizes = sorted({r["keys"] for r in sel})
    lines = {}
    for r in order(sel, lambda r: (r["system"], r["config"])):
        if "skipped" in r or r["probe"] in (probe, "-"):
            lines.setdefault((r["system"], r["config"]), {})[r["keys"]] = r
    out = []
    for (system, config), by in lines.items():
        cells = [system, config]
        for n in sizes:
            r = by.get(n)
            cells.append("—" if r is None else f"not run: {r['skipped']}"
                         if "skipped" in r else
                         f"{fmops(r['ops_per_s'])} ({fns(r['ns_per_lookup'])} ns)")
        out.append(cells)
    heads = [f"{fkeys(n)} keys: M lookups/s (ns/lookup)" for n in sizes]
    return table(["system", "config"] + heads, out, right=range(2, 2 + len(sizes))), lines


# ---------------------------------------------------------------- plots

POINTS = [7, 5, 9, 11, 13, 6, 4, 8, 10, 12, 14, 1, 2, 3]
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
          "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939",
          "#000000", "#e6ab02", "#a6761d", "#66a61e"]


def gq(s): return "'" + str(s).replace("'", "''") + "'"


def plot(tmp, png, title, xlabel, ylabel, series, xtics, key="below", source=""):
    """series: [(title, [(x, y)...], style)] drawn as lines with points;
    source (command, machine, date) is printed under the title."""
    series = [(t, [p for p in pts if p[1] and p[1] > 0], st) for t, pts, st in series]
    series = [s for s in series if s[1]]
    if not series:
        return False
    stem = tmp / png.stem
    with open(f"{stem}.dat", "w") as f:
        for t, pts, _ in series:
            f.write(f"# {t}\n" + "".join(f"{x} {y}\n" for x, y in sorted(pts)) + "\n\n")
    tics = ", ".join(f"{gq(lbl)} {x}" for x, lbl in xtics)
    xs = [x for _, pts, _ in series for x, _ in pts]
    plots = ", ".join(f"{gq(str(stem) + '.dat')} index {i} using 1:2 with linespoints "
                      f"{st} title {gq(t)}" for i, (t, _, st) in enumerate(series))
    script = f"""set terminal pngcairo size 900,560 font ',10'
set output {gq(png)}
set tmargin 4
set label 1 {gq(title)} at screen 0.5, 0.965 center font ',11'
set label 2 {gq(source)} at screen 0.5, 0.925 center font ',8'
set xlabel {gq(xlabel)}
set ylabel {gq(ylabel)}
set logscale xy
set xrange [{min(xs) / 1.6}:{max(xs) * 1.6}]
set xtics ({tics})
set grid xtics ytics mytics
set key {key} font ',9'
plot {plots}
"""
    Path(f"{stem}.gp").write_text(script)
    try:
        subprocess.run(["gnuplot", f"{stem}.gp"], check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise ReportError("gnuplot not found (Debian: apt-get install gnuplot-nox)")
    except subprocess.CalledProcessError as e:
        raise ReportError(f"gnuplot failed on {stem}.gp:\n{e.stderr}")
    return True


def style(i, system, dashed=False):
    lw = 2.5 if is_roost(system) else 1.5
    dt = 2 if dashed or system == CEILING else 1
    return f"lc rgb {gq(COLORS[i % len(COLORS)])} pt {POINTS[i % len(POINTS)]} lw {lw} dt {dt}"


# ---------------------------------------------------------------- report

class Report:
    def __init__(self, res, out, img_dir, tmp):
        self.res, self.out, self.img_dir, self.tmp = res, out, img_dir, tmp
        m = res["machine"] or {}
        self.cmd = m.get("command", "bench/run.sh (machine.json missing)")
        self.date = m.get("date_utc", "an unknown date")
        self.machine = (f"{m.get('nproc', '?')} cores, {m.get('mem_total_gib', '?')} GiB, "
                        f"{m.get('cpu_model', '?')}")
        self.md, self.summary = [], {}

    def add(self, *parts): self.md.extend(parts)
    def caption(self):
        self.add(f"_Produced by `{self.cmd}` on {self.machine}, {self.date}._", "")

    def notes(self, section):
        f = NOTES_DIR / f"{section}.md"
        if f.exists():
            self.add(f.read_text().rstrip("\n"), "")

    def figure(self, name, *args, **kw):
        png = self.img_dir / name
        kw["source"] = f"{self.cmd} | {self.machine} | {self.date}"
        if plot(self.tmp, png, *args, **kw):
            rel = os.path.relpath(png, self.out.parent).replace(os.sep, "/")
            self.add(f"![{args[0]}]({rel})", "")
            self.caption()

    def missing(self, section, name):
        self.add(f"Not measured in this run (no `{name}`).", "")
        self.summary[section] = [f"not measured in this run (no `{name}`)."]

    def header(self):
        m = self.res["machine"] or {}
        v = ", ".join(f"{k} {x}" for k, x in (m.get("versions") or {}).items())
        self.add("# Benchmarks: roost beside its peers", "",
                 f"Generated by `{self.cmd}` on {self.date}.", "")
        if not m:
            self.add("(machine.json is missing: machine details unknown.)", "")
        else:
            self.add(f"Machine: {m.get('nproc', '?')} cores, "
                     f"{m.get('mem_total_gib', '?')} GiB, {m.get('cpu_model', '?')}, "
                     f"kernel {m.get('kernel', '?')}, transparent huge pages "
                     f"`{m.get('thp', '?')}`.  ",
                     f"Versions: {v or 'unknown'}.  ",
                     f"Mode: {m.get('mode', '?')}; elapsed {fsig(m.get('elapsed_s'))} s; "
                     f"git revision `{m.get('git_rev', '?')}`.", "")
        raw = Path(os.path.relpath(self.res["dir"], self.out.parent)).as_posix()
        self.add("Every number below comes from that run. This file is written "
                 f"by `bench/report.py` from the run's raw results (`{raw}`, JSON "
                 "lines): do not edit it by hand. Component benchmarks, one part "
                 "at a time: [benchmarks-components.md](benchmarks-components.md).", "")

    def lookup(self):
        self.add("## In-process lookups (single thread)", "")
        self.notes("lookup")
        rows = self.res["lookup"]
        if rows is None:
            return self.missing("lookup", "lookup.jsonl")
        keys, sent = main_keys(self.res), []
        datasets = list(dict.fromkeys(r["dataset"] for r in rows if r["keys"] == keys))
        for ds in datasets:
            self.add(f"### Dataset: {ds}, {keys:,} keys", "", lookup_table(rows, ds, keys), "")
            self.caption()
            sent += lookup_summary(rows, ds, keys)
        if not datasets:
            self.add(f"No rows with {keys:,} keys (machine.json lookup_keys).", "")
        self.summary["lookup"] = sent

    def scaling(self):
        self.add("## Scaling with table size", "")
        self.notes("scaling")
        rows = self.res["lookup"]
        if rows is None:
            return self.missing("scaling", "lookup.jsonl")
        sent, main = [], main_keys(self.res)
        for n in sorted({r["keys"] for r in rows if r["dataset"] == "uniform"} - {main}):
            sent += lookup_summary(rows, "uniform", n, get_only=True)
        for probe in ("hit", "miss"):
            md, lines = scaling_table(rows, probe)
            self.add(f"### Get, {plural(probe)} (uniform keys)", "", md, "")
            self.caption()
            sizes = sorted({n for by in lines.values() for n in by})
            series = [(f"{s}: {c}", [(n, r.get("ops_per_s", 0) / 1e6) for n, r in by.items()],
                       style(i, s)) for i, ((s, c), by) in enumerate(lines.items())]
            self.figure(f"scaling-get-{probe}.png",
                        f"Single-thread get, {plural(probe)}, uniform keys", "keys in the table",
                        "M lookups/s", series, [(n, fkeys(n)) for n in sizes],
                        key="below")
        self.summary["scaling"] = sent

    def network(self):
        self.add("## Over the network (loopback)", "")
        self.notes("network")
        rows = self.res["network"]
        if rows is None:
            return self.missing("network", "network.jsonl")
        systems = list(dict.fromkeys(r["system"] for r in order(rows, lambda r: r["system"])))
        rows = sorted(rows, key=lambda r: (systems.index(r["system"]), r["batch"]))
        ref = {r["batch"]: r for r in reversed(rows)
               if r["system"] == NET_REF and "skipped" not in r}
        out, sent = [], []
        for r in rows:
            if "skipped" in r:
                out.append([r["system"], r.get("method", ""), r["batch"],
                            f"not run: {r['skipped']}"])
                continue
            b = ref.get(r["batch"])
            out.append([r["system"], r["method"], r["batch"],
                        f"{r.get('concurrency', '?')} on {r.get('channels', '?')}",
                        fint(r["qps"]),
                        fmops(r["keys_per_s"]), fratio(r["keys_per_s"], b and b["keys_per_s"]),
                        fus(r["p50_us"]), fus(r["p99_us"]),
                        fsig(r.get("server_cpu_us_per_key"))])
            if r["system"] == NET_REF or not b:
                continue
            what = f"batch {r['batch']} ({r['system']} {r['method']}, roost {b['method']})"
            sent += [versus(r["system"], "roost", f"keys/s at {what}", r["keys_per_s"],
                            b["keys_per_s"], lambda v: f"{fmops(v)} M keys/s"),
                     versus(r["system"], "roost", f"p99 latency at {what}", r["p99_us"],
                            b["p99_us"], lambda v: f"{fus(v)} µs", False, False)]
        self.add(table(["system", "method", "batch", "in flight on connections",
                        "requests/s", "M keys/s", "ratio to roost", "p50 µs", "p99 µs",
                        "server CPU µs/key"], out, right=range(2, 10)), "")
        self.caption()
        batches = sorted({r["batch"] for r in rows})
        pts = lambda s, f: [(r["batch"], r[f]) for r in rows
                            if r["system"] == s and "skipped" not in r]
        tics = [(b, str(b)) for b in batches]
        flight = "/".join(sorted({str(r.get("concurrency", "?")) for r in rows}))
        self.figure("network-latency.png",
                    f"Latency over loopback, {flight} requests in flight", "keys per request",
                    "latency, µs", [(f"{s} {p}", pts(s, f"{p}_us"), style(i, s, p == "p99"))
                                    for i, s in enumerate(systems) for p in ("p50", "p99")],
                    tics, key="top left")
        self.figure("network-throughput.png",
                    f"Throughput over loopback, {flight} requests in flight",
                    "keys per request", "M keys/s",
                    [(s, [(x, y / 1e6) for x, y in pts(s, "keys_per_s")], style(i, s))
                     for i, s in enumerate(systems)], tics, key="top left")
        self.summary["network"] = [x for x in sent if x]

    def per_system(self, section, name, ref_name, heads, cells, compare):
        """Memory and build: a table with a ratio column, and summary sentences."""
        rows = self.res[section]
        if rows is None:
            return self.missing(section, name)
        ref = next((r for r in rows if r["system"] == ref_name), None)
        ref = ref if ref and "skipped" not in ref else None
        self.add(table(heads, [[r["system"], f"not run: {r['skipped']}"] if "skipped" in r
                               else cells(r, ref) for r in rows],
                       right=range(1, len(heads) - 1)), "")
        self.caption()
        sent = []
        for field, unit, fmt, higher_better in compare:
            for r in rows:
                if ref is None or is_roost(r["system"]) or "skipped" in r or r.get(field) is None \
                        or ref.get(field) is None:
                    continue
                sent.append(versus(r["system"], ref_name, unit, r[field], ref[field],
                                   fmt, higher_better))
        self.summary[section] = sent

    def memory(self):
        self.add("## Memory per key", "")
        self.notes("memory")
        self.per_system(
            "memory", "memory.jsonl", MEM_REF,
            ["system", "keys", "bytes", "bytes/key", "ratio to roost", "what"],
            lambda r, ref: [r["system"], fint(r["keys"]), fint(r["bytes"]),
                            fsig(r["bytes_per_key"]),
                            fratio(r["bytes_per_key"], ref and ref["bytes_per_key"]),
                            r.get("what", "")],
            [("bytes_per_key", "bytes/key", fsig, False)])

    def build(self):
        self.add("## Build", "")
        self.notes("build")
        opb = lambda r: r["output_bytes"] / r["keys"] if r.get("output_bytes") else None
        for r in self.res["build"] or []:
            r["output_bytes_per_key"] = None if "skipped" in r else opb(r)
        self.per_system(
            "build", "build.jsonl", BUILD_REF,
            ["system", "keys", "seconds", "M keys/s", "ratio to roost-load cuckoo",
             "peak RSS MiB", "output bytes/key", "note"],
            lambda r, ref: [r["system"], fint(r["keys"]), fsig(r["seconds"]),
                            fmops(r["keys_per_s"]),
                            fratio(r["keys_per_s"], ref and ref["keys_per_s"]),
                            fmib(r["peak_rss_bytes"]), fsig(r["output_bytes_per_key"]),
                            r.get("note", "")],
            [("keys_per_s", "build speed (keys/s)", lambda v: f"{fmops(v)} M", True),
             ("peak_rss_bytes", "peak RSS", lambda v: f"{fmib(v)} MiB", False),
             ("output_bytes_per_key", "output bytes/key", fsig, False)])

    def write(self):
        self.header()
        body_start = len(self.md)
        for section in (self.lookup, self.scaling, self.network, self.memory, self.build):
            section()
        titles = {"lookup": "In-process lookups", "scaling": "Scaling",
                  "network": "Over the network", "memory": "Memory", "build": "Build"}
        summ = ["## Summary", ""]
        for k, t in titles.items():
            sents = self.summary.get(k) or ["no comparison with a peer in this run."]
            summ += [f"- **{t}**:"] + [f"  - {s}" for s in sents]
        self.md[body_start:body_start] = summ + [""]
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.out.write_text("\n".join(self.md).rstrip("\n") + "\n")


# ---------------------------------------------------------------- --check

def check(res):
    problems = []
    who = lambda r: label(r) if "config" in r else r["system"]
    if res["machine"] is None:
        problems.append("machine.json: missing")
    for name in ("lookup", "network", "memory", "build"):
        if res[name] is None:
            problems.append(f"{name}.jsonl: missing")
        for r in res[name] or []:
            for f in ("errors", "rpc_errors", "bad_values"):
                if (r.get(f) or 0) > 0:
                    problems.append(f"{r['_where']}: {who(r)}: {f} = {r[f]}")
            if "checked" in r and r["checked"] != r.get("lookups"):
                problems.append(f"{r['_where']}: {who(r)}: "
                                f"checked {r['checked']} of {r.get('lookups')} lookups")
    lk = res["lookup"] or []
    keys = main_keys(res)
    ran = {(r["dataset"], r["system"], r.get("config"), r["probe"])
           for r in lk if "skipped" not in r and r["keys"] == keys}
    has = lambda ds, s, p, c=None: any(x[0] == ds and x[1] == s and x[3] == p and
                                       c in (None, x[2]) for x in ran)
    skipped = {(r["dataset"], r["system"]) for r in lk
               if "skipped" in r and r["keys"] == keys}
    for ds in dict.fromkeys(r["dataset"] for r in lk):
        for s in REQUIRED_LOOKUP_SYSTEMS:
            if (ds, s) in ALLOWED_SKIPS and (ds, s) in skipped:
                continue
            for p in ("hit", "miss"):
                if not has(ds, s, p):
                    problems.append(f"lookup.jsonl: no {p} row for {s}, dataset {ds}, "
                                    f"{keys:,} keys")
        for c in REQUIRED_CEILING_CONFIGS:
            if not has(ds, CEILING, "-", c):
                problems.append(f"lookup.jsonl: no ceiling row {c!r}, dataset {ds}, "
                                f"{keys:,} keys")
    if res["network"] is not None:
        ran = {(r["system"], r["batch"]) for r in res["network"] if "skipped" not in r}
        problems += [f"network.jsonl: no {s} row at batch {b}"
                     for s in REQUIRED_NETWORK_SYSTEMS for b in REQUIRED_NETWORK_BATCHES
                     if (s, b) not in ran]
    for name, req in (("memory", REQUIRED_MEMORY_SYSTEMS), ("build", REQUIRED_BUILD_SYSTEMS)):
        if res[name] is not None:
            got = {r["system"] for r in res[name] if "skipped" not in r}
            problems += [f"{name}.jsonl: no {s} row" for s in req if s not in got]
    return problems


def main():
    ap = argparse.ArgumentParser(
        description="Write docs/benchmarks.md and its plots from a bench/run.sh "
                    "results directory, or check that directory.",
        epilog="Input files: machine.json, lookup.jsonl, network.jsonl, memory.jsonl, "
               "build.jsonl (see the docstring at the top of this script).")
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
                  f"{len(res['network'])} network, {len(res['memory'])} memory, "
                  f"{len(res['build'])} build rows; no errors")
            return 0
        img = a.img_dir or a.out.parent / "img"
        img.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="roost-report-") as tmp:
            Report(res, a.out, img, Path(tmp)).write()
        print(f"wrote {a.out} and plots in {img}")
        return 0
    except ReportError as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
