"""The report's "A sharded cluster (loopback)" section (cluster.jsonl, from
bench/cluster_bench.sh): the routing client against a direct stub, throughput
over 1-3 shards, the Python client, and publish-to-serving time."""

from statistics import median

from report_common import fmops, fratio, fsig, fus, table

# Issue 14's targets.
ROUTER_TARGET = 0.90      # router keys/s over direct keys/s
PYTHON_TARGET = 1e6       # keys/s, one process
PUBLISH_TARGET = 0.80     # download rate of publish-to-serving over plain


def _caption(rep, rows):
    """The cluster runs' own command when cluster_bench.sh ran apart."""
    meta = rep.res.get("cluster_meta") or {}
    if meta.get("command"):
        rep.add(f"_Produced by `{meta['command']}` on {rep.machine}, "
                f"{meta.get('date_utc', 'an unknown date')}, git revision "
                f"`{meta.get('git_rev', '?')}`; load average at start "
                f"{meta.get('load_average', '?')}._", "")
    else:
        rep.caption()


def _routing(rep, rows, sent):
    rs = [r for r in rows if r["section"] == "routing"]
    if not rs:
        return
    direct = [r["keys_per_s"] for r in rs if r["system"] == "direct"]
    router = [r["keys_per_s"] for r in rs if r["system"] == "router"]
    out = [[r["system"], r["batch"], r["concurrency"], fmops(r["keys_per_s"]),
            fus(r["p50_us"]), fus(r["p99_us"]), fsig(r.get("client_cpu_s"))]
           for r in rs]
    rep.add("### Routing overhead", "",
            "MultiGet through the C++ routing client (a one-shard layout) "
            "against a plain blocking stub to the same unsharded server, same "
            "keys and callers, in interleaved rounds.", "",
            table(["client", "batch", "callers", "M keys/s", "p50 µs", "p99 µs",
                   "client CPU s"], out, right=range(1, 7)), "")
    if direct and router:
        ratio = median(router) / median(direct)
        verdict = "meets" if ratio >= ROUTER_TARGET else "misses"
        line = (f"Router / direct, medians of {len(router)} and {len(direct)} runs: "
                f"**{ratio:.2f}×** ({verdict} the {ROUTER_TARGET:.0%} target).")
        rep.add(line, "")
        sent.append(line)


def _shards(rep, rows, sent):
    rs = sorted((r for r in rows if r["section"] == "shards"), key=lambda r: r["shards"])
    if not rs:
        return
    one = next((r for r in rs if r["shards"] == 1), None)
    out = [[r["shards"], r["batch"], r["concurrency"], fmops(r["keys_per_s"]),
            fratio(r["keys_per_s"], one and one["keys_per_s"]), fus(r["p50_us"]),
            fus(r["p99_us"])] for r in rs]
    rep.add("### Throughput against the shard count", "",
            "The router's MultiGet over the same table built with `--shards` "
            "1, 2 and 3, one roost-server per shard. Client and servers share "
            "the machine's cores, so more shards add processes, not cores: "
            "this shows the cost of splitting a batch, not the gain of more "
            "machines.", "",
            table(["shards", "batch", "callers", "M keys/s", "ratio to 1 shard",
                   "p50 µs", "p99 µs"], out, right=range(0, 7)), "")
    sent += [f"{r['shards']} shards: {fmops(r['keys_per_s'])} M keys/s "
             f"({fratio(r['keys_per_s'], one and one['keys_per_s'])} of one shard)."
             for r in rs if r is not one]


def _python(rep, rows, sent):
    rs = [r for r in rows if r["section"] == "python"]
    if not rs:
        return
    for r in rs:  # python_client_bench.py's name for it
        r.setdefault("keys_per_s", r.get("keys_per_second"))
    api = {"python-sync": "sync (threads)", "python-aio": "asyncio",
           "python": "sync (threads)"}
    out = [[api.get(r["system"], r["system"]), r["shards"], r.get("batch", "?"),
            r.get("concurrency", "?"), fmops(r["keys_per_s"]), fsig(r.get("p50_ms")),
            fsig(r.get("p99_ms"))]
           for r in rs]
    rep.add("### The Python client", "",
            "`get_many` of the Python package (bench/python_client_bench.py), "
            "one process: roost.Client with caller threads, and roost.AsyncClient "
            "with tasks, over one shard and over three (three calls per batch "
            "and the split by shard).", "",
            table(["API", "shards", "batch", "in flight", "M keys/s", "p50 ms",
                   "p99 ms"], out, right=range(1, 7)), "")
    for shards in sorted({r["shards"] for r in rs}):
        best = max((r for r in rs if r["shards"] == shards), key=lambda r: r["keys_per_s"])
        verdict = "meets" if best["keys_per_s"] >= PYTHON_TARGET else "misses"
        sent.append(f"Python get_many over {shards} shard{'s' if shards > 1 else ''}: "
                    f"{fmops(best['keys_per_s'])} M keys/s, "
                    f"{api.get(best['system'], best['system'])} ({verdict} the "
                    f"{fmops(PYTHON_TARGET)} M target).")


def _publish(rep, rows, sent):
    rs = [r for r in rows if r["section"] == "publish"]
    if not rs:
        return
    out = [[fsig(r["bytes"] / 2**20), fsig(r["download_s"]), fsig(r["serving_s"]),
            fratio(r["download_s"], r["serving_s"])] for r in rs]
    rep.add("### Publish to serving", "",
            "From the pointer's move to the server serving the new version "
            "(its roost_repository_pointer_to_serving_seconds), against a "
            "plain download of the same object from the same repository: the "
            "medians of the versions published (runs in the JSON lines).", "",
            table(["MiB", "plain download s", "pointer to serving s",
                   "rate / plain rate"], out, right=range(0, 4)), "")
    for r in rs:
        ratio = r["download_s"] / r["serving_s"] if r["serving_s"] else 0
        verdict = "meets" if ratio >= PUBLISH_TARGET else "misses"
        sent.append(f"publish to serving at {ratio:.2f}× the plain download rate "
                    f"({verdict} the {PUBLISH_TARGET:.0%} target).")


def section(rep):
    rep.add("## A sharded cluster (loopback)", "")
    rep.notes("cluster")
    rows = rep.res.get("cluster")
    if rows is None:
        return rep.missing("cluster", "cluster.jsonl")
    sent = []
    for part in (_routing, _shards, _python, _publish):
        part(rep, rows, sent)
    _caption(rep, rows)
    rep.summary["cluster"] = sent
