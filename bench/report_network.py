"""The report's "Over the network (loopback)" section (network.jsonl):
roost-server and Redis by batch size, throughput, latency and server CPU,
as a table and two plots."""

from report_common import NET_REF, fint, fmops, fratio, fsig, fus, order, table, versus
from report_plot import style


def section(rep):
    rep.add("## Over the network (loopback)", "")
    rep.notes("network")
    rows = rep.res["network"]
    if rows is None:
        return rep.missing("network", "network.jsonl")
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
    rep.add(table(["system", "method", "batch", "in flight on connections",
                    "requests/s", "M keys/s", "ratio to roost", "p50 µs", "p99 µs",
                    "server CPU µs/key"], out, right=range(2, 10)), "")
    rep.caption()
    batches = sorted({r["batch"] for r in rows})
    pts = lambda s, f: [(r["batch"], r[f]) for r in rows
                        if r["system"] == s and "skipped" not in r]
    tics = [(b, str(b)) for b in batches]
    flight = "/".join(sorted({str(r.get("concurrency", "?")) for r in rows}))
    rep.figure("network-latency.png",
                f"Latency over loopback, {flight} requests in flight", "keys per request",
                "latency, µs", [(f"{s} {p}", pts(s, f"{p}_us"), style(i, s, p == "p99"))
                                for i, s in enumerate(systems) for p in ("p50", "p99")],
                tics, key="top left")
    rep.figure("network-throughput.png",
                f"Throughput over loopback, {flight} requests in flight",
                "keys per request", "M keys/s",
                [(s, [(x, y / 1e6) for x, y in pts(s, "keys_per_s")], style(i, s))
                 for i, s in enumerate(systems)], tics, key="top left")
    rep.summary["network"] = [x for x in sent if x]
