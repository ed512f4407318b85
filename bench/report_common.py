"""What every part of bench/report.py shares: what --check requires and
which rows the ratios are taken against, the loading and validation of a
results directory, and the formatting of numbers, tables and summary
sentences."""

import json
import statistics
from pathlib import Path

# What --check requires.
REQUIRED_LOOKUP_SYSTEMS = ["roost cuckoo", "roost block", "RocksDB CuckooTable",
                           "RocksDB PlainTable", "RocksDB block-based",
                           "RocksDB block-based, bloom", "tinycdb"]
CEILING = "ceiling"
REQUIRED_CEILING_CONFIGS = ["independent 64-byte reads", "dependent 64-byte reads"]
# (dataset, system) pairs that may be skipped instead: RocksDB's CuckooTable
# takes only fixed-size keys and values.
ALLOWED_SKIPS = {("variable", "RocksDB CuckooTable")}
REQUIRED_NETWORK_SYSTEMS = ["roost", "Redis"]
REQUIRED_NETWORK_BATCHES = [1, 10, 100, 1000]
REQUIRED_OPENLOOP_SYSTEMS = ["roost", "Redis"]
REQUIRED_OPENLOOP_LEVELS = [25, 50, 75]
REQUIRED_MEMORY_SYSTEMS = ["roost", "Redis"]
REQUIRED_BUILD_SYSTEMS = ["roost-load cuckoo", "roost-load block",
                          "RocksDB SstFileWriter", "Redis (MSET, pipelined)"]
# The rows every ratio is taken against.
REF_SYSTEM, REF_CONFIG = "roost cuckoo", "mmap"
NET_REF, MEM_REF, BUILD_REF = "roost", "roost", "roost-load cuckoo"
# roost's block table is also set beside its own kind: as roost-load builds
# it (a filter of 10 bits a key, format 2.0), and without the filter (1.0),
# each beside the best configuration of each RocksDB block-based system.
BLOCK_REFS = [("roost block", "auto, hash index, filter"),
              ("roost block", "auto, hash index")]
BLOCK_PEERS = ["RocksDB block-based, bloom", "RocksDB block-based"]
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
    "openloop.jsonl": {"system": S, "load_pct": N, "max_qps": N, "rate": N,
                       "offered_qps": N, "qps": N, "p50_us": N, "p99_us": N,
                       "p999_us": N, "max_us": N, "dropped": N},
    "memory.jsonl": {"system": S, "keys": N, "bytes": N, "bytes_per_key": N},
    "build.jsonl": {"system": S, "keys": N, "seconds": N, "keys_per_s": N,
                    "peak_rss_bytes": N, "output_bytes": N + "?"},
    # Each section's own fields are read by report_cluster.py.
    "cluster.jsonl": {"section": S, "system": S, "shards": N},
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
    for name in ("lookup", "network", "openloop", "memory", "build", "cluster"):
        r[name] = load_jsonl(d / f"{name}.jsonl")
    if r["lookup"] is not None:
        r["lookup"] = collapse_rounds(r["lookup"])
    c = d / "cluster.json"
    r["cluster_meta"] = json.loads(c.read_text()) if c.exists() else None
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


def collapse_rounds(rows):
    """Lookup rows measured in several rounds ("round": N), one row each:
    the median of ops_per_s, ns_per_lookup and build_s, every round's
    ops_per_s kept in "by_round" (for ratios taken round by round), the
    errors added up and the smallest "checked" (so that a fault in any
    round still shows). Rows without "round" pass as they are."""
    out, merged = [], {}
    for x in rows:
        if "round" not in x:
            out.append(x)
            continue
        key = (x["dataset"], x["keys"], x["system"], x["config"]) + (
            ("skipped",) if "skipped" in x else (x["op"], x["batch"], x["probe"]))
        if key not in merged:
            merged[key] = []
            out.append(key)
        merged[key].append(x)
    return [x if not isinstance(x, tuple) else merge_rounds(merged[x]) for x in out]


def merge_rounds(runs):
    row = dict(runs[0])
    del row["round"]
    if "skipped" in row:
        return row
    row["by_round"] = {x["round"]: x["ops_per_s"] for x in runs}
    for name in ("ops_per_s", "ns_per_lookup", "build_s"):
        values = [x[name] for x in runs if x.get(name) is not None]
        if values:
            row[name] = statistics.median(values)
    if any("errors" in x for x in runs):
        row["errors"] = sum(x.get("errors", 0) for x in runs)
    if any("checked" in x for x in runs):
        row["checked"] = min(x.get("checked", 0) for x in runs)
    return row


def round_ratios(a, b):
    """Row a's ops_per_s over row b's, round by round, for the rounds both
    were measured in; [] when either row has no rounds."""
    ra, rb = a.get("by_round", {}), b.get("by_round", {})
    return [ra[k] / rb[k] for k in sorted(ra) if rb.get(k)]


def fratio_rows(a, b):
    """Row a's ops_per_s over row b's: the median of the rounds' ratios and
    their range ("0.62× (0.58–0.66)") when both were measured in rounds,
    else the ratio of the two figures."""
    if b is None:
        return "—"
    if a is b:
        return "1.00×"
    ratios = round_ratios(a, b)
    if len(ratios) < 2:
        return fratio(a["ops_per_s"], b["ops_per_s"])
    return (f"{statistics.median(ratios):.2f}× "
            f"({min(ratios):.2f}–{max(ratios):.2f})")


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


def versus(peer, ref, what, a, b, fmt, higher_better=True, leads=True, rows=None):
    """A summary sentence: the peer's value a against roost's b, or None.
    rows: the peer's and roost's lookup rows, when a and b are their
    ops_per_s, so that the ratio is taken round by round (fratio_rows)."""
    ab, ba = ((fratio_rows(*rows), fratio_rows(*reversed(rows))) if rows
              else (fratio(a, b), fratio(b, a)))
    if (a > b if higher_better else a < b):
        return f"**{peer} beats {ref} on {what}**: {fmt(a)} vs {fmt(b)} ({ab})."
    if leads:
        return f"{ref} leads {peer} on {what}: {fmt(b)} vs {fmt(a)} ({ba} the peer's)."


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
