"""The report's "Scaling with table size" section (lookup.jsonl, uniform
keys, every size): get rates by size, hits and misses, as tables and plots."""

from report_common import CEILING, fkeys, fmops, fns, order, plural, table
from report_lookup import lookup_summary, main_keys
from report_plot import style

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



def section(rep):
    rep.add("## Scaling with table size", "")
    rep.notes("scaling")
    rows = rep.res["lookup"]
    if rows is None:
        return rep.missing("scaling", "lookup.jsonl")
    sent, main = [], main_keys(rep.res)
    for n in sorted({r["keys"] for r in rows if r["dataset"] == "uniform"} - {main}):
        sent += lookup_summary(rows, "uniform", n, get_only=True)
    for probe in ("hit", "miss"):
        md, lines = scaling_table(rows, probe)
        rep.add(f"### Get, {plural(probe)} (uniform keys)", "", md, "")
        rep.caption()
        sizes = sorted({n for by in lines.values() for n in by})
        series = [(f"{s}: {c}", [(n, r.get("ops_per_s", 0) / 1e6) for n, r in by.items()],
                   style(i, s)) for i, ((s, c), by) in enumerate(lines.items())]
        rep.figure(f"scaling-get-{probe}.png",
                    f"Single-thread get, {plural(probe)}, uniform keys", "keys in the table",
                    "M lookups/s", series, [(n, fkeys(n)) for n in sizes],
                    key="below")
    rep.summary["scaling"] = sent
