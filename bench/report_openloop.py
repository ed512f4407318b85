"""The report's "Latency at fixed rates (open loop)" subsection of the
network section (openloop.jsonl): single-key lookups sent at 25%, 50% and
75% of each system's own maximum, p50, p99 and p99.9 from each request's
due time, as a table, a plot and a sentence a level comparing roost's p99
with Redis's."""

from report_common import fint, fratio, fus, is_roost, order, table
from report_plot import style


def _sentence(pct, rows):
    """roost's p99 against each Redis's at one load level, or None."""
    roosts = [r for r in rows if is_roost(r["system"])]
    peers = [r for r in rows if not is_roost(r["system"])]
    if not roosts or not peers:
        return None
    at = lambda r: f"{fus(r['p99_us'])} µs ({fint(r['qps'])} requests/s)"
    main, others = peers[0], peers[1:]
    line = (f"At {pct}% of each system's maximum, p99 against {main['system']}'s "
            f"{at(main)}: " + "; ".join(
                f"{a['system']} {at(a)}, **{fratio(a['p99_us'], main['p99_us'])}**"
                for a in roosts) + ".")
    for b in others:
        line += (f" Against {b['system']}'s {at(b)}: " + "; ".join(
            f"{a['system']} {fratio(a['p99_us'], b['p99_us'])}" for a in roosts) + ".")
    return line


def section(rep):
    rep.add("### Latency at fixed rates (open loop)", "")
    rep.notes("openloop")
    rows = rep.res["openloop"]
    if rows is None:
        return rep.missing("openloop", "openloop.jsonl")
    rows = order(rows, lambda r: r["system"])
    systems = list(dict.fromkeys(r["system"] for r in rows))
    ran = sorted((r for r in rows if "skipped" not in r),
                 key=lambda r: (r["load_pct"], systems.index(r["system"])))
    redis = {r["load_pct"]: r for r in ran if r["system"] == "Redis"}
    out = [[f"{r.get('load_pct', '?')}%", r["system"], f"not run: {r['skipped']}"]
           for r in rows if "skipped" in r]
    for r in ran:
        b = redis.get(r["load_pct"])
        dropped = fint(r["dropped"]) + (" (not sustained)" if r["dropped"] else "")
        out.append([f"{r['load_pct']}%", r["system"], fint(r["max_qps"]),
                    fint(r["offered_qps"]), fint(r["qps"]), fus(r["p50_us"]),
                    fus(r["p99_us"]), fus(r["p999_us"]), fus(r["max_us"]), dropped,
                    fratio(r["p99_us"], b and b["p99_us"])])
    rep.add(table(["load", "system", "its maximum, requests/s", "offered requests/s",
                   "achieved requests/s", "p50 µs", "p99 µs", "p99.9 µs", "max µs",
                   "dropped", "p99 ratio to Redis"], out, right=range(2, 11)), "")
    rep.caption()
    sent = []
    for pct in sorted({r["load_pct"] for r in ran}):
        line = _sentence(pct, [r for r in ran if r["load_pct"] == pct])
        if line:
            rep.add(line, "")
            sent.append(line)
    pcts = sorted({r["load_pct"] for r in ran})
    pts = lambda s, f: [(r["load_pct"], r[f]) for r in ran if r["system"] == s]
    rep.figure("openloop-latency.png",
               "Open-loop latency at fixed rates, from each request's due time",
               "load, % of the system's own maximum", "latency, µs",
               [(f"{s} {p}", pts(s, f"{p}_us"), style(i, s, p == "p99"))
                for i, s in enumerate(systems) for p in ("p50", "p99")],
               [(p, str(p)) for p in pcts], key="top left")
    rep.summary["openloop"] = sent
