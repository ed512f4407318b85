"""bench/report.py --check: whether a results directory is complete (every
required system, batch and file) and free of lookup and RPC errors."""

from report_common import (ALLOWED_SKIPS, CEILING, REQUIRED_BUILD_SYSTEMS,
                           REQUIRED_CEILING_CONFIGS, REQUIRED_LOOKUP_SYSTEMS,
                           REQUIRED_MEMORY_SYSTEMS, REQUIRED_NETWORK_BATCHES,
                           REQUIRED_NETWORK_SYSTEMS, REQUIRED_OPENLOOP_LEVELS,
                           REQUIRED_OPENLOOP_SYSTEMS, label)
from report_lookup import main_keys

def check(res):
    problems = []
    who = lambda r: label(r) if "config" in r else r["system"]
    if res["machine"] is None:
        problems.append("machine.json: missing")
    for name in ("lookup", "network", "openloop", "memory", "build"):
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
    if res["openloop"] is not None:
        ran = {(r["system"], r["load_pct"]) for r in res["openloop"] if "skipped" not in r}
        problems += [f"openloop.jsonl: no {s} row at {p}% of its maximum"
                     for s in REQUIRED_OPENLOOP_SYSTEMS for p in REQUIRED_OPENLOOP_LEVELS
                     if (s, p) not in ran]
    for name, req in (("memory", REQUIRED_MEMORY_SYSTEMS), ("build", REQUIRED_BUILD_SYSTEMS)):
        if res[name] is not None:
            got = {r["system"] for r in res[name] if "skipped" not in r}
            problems += [f"{name}.jsonl: no {s} row" for s in req if s not in got]
    return problems
