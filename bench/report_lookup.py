"""The report's "In-process lookups" section (lookup.jsonl at the main table
size): a table per dataset with ratios to roost's cuckoo table, and the
summary sentences on where roost leads or trails its peers. Its summary
helpers serve the scaling section too."""

from report_common import (BLOCK_PEERS, BLOCK_REFS, CEILING, REF_CONFIG, REF_SYSTEM,
                           fkeys, fmops, fns, fratio_rows, fsig, is_peer, label,
                           op_label, order, plural, table, versus)

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
                       fratio_rows(r, ref)]
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
        out += [versus(label(p), "roost", what, p["ops_per_s"], b, mops, leads=False,
                       rows=(p, ref))
                for p in peers if p["ops_per_s"] > b]
        best = max(peers, key=lambda p: p["ops_per_s"], default=None)
        if best and best["ops_per_s"] <= b:
            out.append(versus(f"the fastest peer, {label(best)},", "roost", what,
                              best["ops_per_s"], b, mops, rows=(best, ref)))
        if ref["probe"] == "hit" and not get_only:
            out += [f"roost's {op_label(ref)} hits ({where}) run at {fratio_rows(ref, c)} "
                    f"the ceiling of {c['config']} ({mops(c['ops_per_s'])})."
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
    """Sentences on roost's block table (as roost-load builds it, with a
    filter, and without one) beside RocksDB's block-based tables, its own
    kind (with and without their filter), and every other peer that is
    faster than it."""
    out, mops = [], lambda v: f"{fmops(v)} M lookups/s"
    for ref_key in BLOCK_REFS:
        name = "roost's block table" + (
            f" ({ref_key[1]})" if ref_key != BLOCK_REFS[0] else "")
        refs = [r for r in sel if (r["system"], r["config"]) == ref_key]
        for ref in refs:
            what = f"{op_label(ref)} {plural(ref['probe'])} ({where})"
            same = lambda p: (p["op"], p["batch"], p["probe"]) == \
                (ref["op"], ref["batch"], ref["probe"])
            for peer in BLOCK_PEERS:
                kin = [p for p in sel if p["system"] == peer and same(p)]
                best = max(kin, key=lambda p: p["ops_per_s"], default=None)
                if best:
                    out.append(versus(label(best), name, what, best["ops_per_s"],
                                      ref["ops_per_s"], mops, rows=(best, ref)))
            if ref_key != BLOCK_REFS[0]:
                continue
            if (ref["op"], ref["probe"]) == ("get", "hit") and \
                    ref.get("bytes_per_key") is not None:
                for peer in BLOCK_PEERS:
                    kin = [p for p in sel if p["system"] == peer
                           and p.get("bytes_per_key") is not None]
                    small = min(kin, key=lambda p: p["bytes_per_key"], default=None)
                    if small:
                        out.append(versus(label(small), name, f"size ({where})",
                                          small["bytes_per_key"], ref["bytes_per_key"],
                                          lambda v: f"{fsig(v)} bytes/key", False))
            faster = [p for p in sel if is_peer(p["system"])
                      and p["system"] not in BLOCK_PEERS
                      and same(p) and p["ops_per_s"] > ref["ops_per_s"]]
            if faster:
                names = ", ".join(f"{label(p)} {mops(p['ops_per_s'])}" for p in faster)
                out.append(f"**Faster than {name} on {what}** "
                           f"({mops(ref['ops_per_s'])}), though unsorted: {names}.")
    return out


def section(rep):
    rep.add("## In-process lookups (single thread)", "")
    rep.notes("lookup")
    rows = rep.res["lookup"]
    if rows is None:
        return rep.missing("lookup", "lookup.jsonl")
    keys, sent = main_keys(rep.res), []
    rounds = max((len(r.get("by_round", ())) for r in rows if r["keys"] == keys),
                 default=0)
    if rounds > 1:
        rep.add(f"At {keys:,} keys every system ran in each of {rounds} rounds, the "
                "order reversed every other round. Each figure is the median of "
                "the rounds; each ratio is the median of the rounds' ratios, its "
                "range in parentheses.", "")
    datasets = list(dict.fromkeys(r["dataset"] for r in rows if r["keys"] == keys))
    for ds in datasets:
        rep.add(f"### Dataset: {ds}, {keys:,} keys", "", lookup_table(rows, ds, keys), "")
        rep.caption()
        sent += lookup_summary(rows, ds, keys)
    if not datasets:
        rep.add(f"No rows with {keys:,} keys (machine.json lookup_keys).", "")
    rep.summary["lookup"] = sent
